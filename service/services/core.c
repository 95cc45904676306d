/* SPDX-License-Identifier: MIT */
/* The Services module and its operations, shared by the tk.v1.Services handlers
 * and by `tkd install`: render, lock the label, let the backend compare
 * and act. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "services_int.h"

static const char *env_or(const char *given, const char *var)
{
    if (given != NULL)
        return given;
    const char *v = getenv(var);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* The user's name (for loginctl's advice and the linger marker) and, into
 * pw_home, the home directory the password database gives. */
static void user_lookup(services *r, char *pw_home, size_t len)
{
    struct passwd pw;
    struct passwd *found = NULL;
    char buf[4096];
    pw_home[0] = '\0';
    if (getpwuid_r(r->uid, &pw, buf, sizeof buf, &found) == 0 &&
        found != NULL) {
        snprintf(r->user, sizeof r->user, "%s", pw.pw_name);
        snprintf(pw_home, len, "%s", pw.pw_dir ? pw.pw_dir : "");
        return;
    }
    const char *u = getenv("USER");
    if (u != NULL && u[0] != '\0')
        snprintf(r->user, sizeof r->user, "%s", u);
    else
        snprintf(r->user, sizeof r->user, "%u", (unsigned)r->uid);
}

/* Without a home directory the directories stay "" and every operation
 * that needs one fails (NO_HOME); tkd still serves everything else. */
static void set_dirs(services *r, const services_config *cfg,
                     const char *pw_home)
{
    const char *rt = env_or(cfg->runtime_dir, "XDG_RUNTIME_DIR");
    snprintf(r->runtime_dir, sizeof r->runtime_dir, "%s", rt ? rt : "");
    snprintf(r->linger_dir, sizeof r->linger_dir, "%s",
             cfg->linger_dir ? cfg->linger_dir : "/var/lib/systemd/linger");
    const char *home = env_or(cfg->home, "HOME");
    if (home == NULL)
        home = pw_home;
    if (home[0] != '/')
        return;
    const char *xdg = env_or(cfg->config_home, "XDG_CONFIG_HOME");
    char config_home[PATH_MAX];
    if (xdg != NULL && xdg[0] == '/') /* a relative one is to be ignored */
        snprintf(config_home, sizeof config_home, "%s", xdg);
    else
        snprintf(config_home, sizeof config_home, "%s/.config", home);
    int n1 = snprintf(r->agents_dir, sizeof r->agents_dir,
                      "%s/Library/LaunchAgents", home);
    int n2 = snprintf(r->units_dir, sizeof r->units_dir, "%s/systemd/user",
                      config_home);
    if (n1 < 0 || (size_t)n1 >= sizeof r->agents_dir || n2 < 0 ||
        (size_t)n2 >= sizeof r->units_dir)
        r->agents_dir[0] = r->units_dir[0] = '\0'; /* too long: none */
}

int services_new(services **out, const services_config *cfg, char *err,
                 size_t errlen)
{
    *out = NULL;
    services_config none = { 0 };
    if (cfg == NULL)
        cfg = &none;
    services *r = calloc(1, sizeof *r);
    if (r == NULL) {
        tkc_set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    r->uid = getuid();
    char pw_home[PATH_MAX];
    user_lookup(r, pw_home, sizeof pw_home);
    set_dirs(r, cfg, pw_home);
    const char *path = env_or(cfg->path, "PATH");
    path = path != NULL ? path : "/usr/bin:/bin";
    services__find_tool(r->launchctl, sizeof r->launchctl, "launchctl", path);
    services__find_tool(r->plutil, sizeof r->plutil, "plutil", path);
    services__find_tool(r->systemctl, sizeof r->systemctl, "systemctl", path);
    services__find_tool(r->loginctl, sizeof r->loginctl, "loginctl", path);
    r->gone_wait_ms =
        cfg->gone_wait_ms != 0 ? cfg->gone_wait_ms : SERVICES_GONE_WAIT_MS;
    services__locks_init(r);
    *out = r;
    return 0;
}

void services_free(services *r)
{
    if (r == NULL)
        return;
    services__locks_fini(r);
    free(r);
}

const services_backend_ops *services__backend_for(int kind, services_error *e)
{
    switch (kind) {
    case SERVICES_AUTO:
#ifdef __APPLE__
        return &services__launchd_ops;
#else
        return &services__systemd_ops;
#endif
    case SERVICES_LAUNCHD:
        return &services__launchd_ops;
    case SERVICES_SYSTEMD:
        return &services__systemd_ops;
    default:
        services__fail(e, RPC_INVALID_ARGUMENT, "BAD_BACKEND",
                       "backend: unknown value %d (AUTO, LAUNCHD or SYSTEMD)",
                       kind);
        return NULL;
    }
}

int services__def_path(char *out, size_t len, const services *r,
                       const services_backend_ops *ops, const char *label,
                       services_error *e)
{
    if (ops->dir(r)[0] == '\0')
        return services__fail(
            e, RPC_FAILED_PRECONDITION, "NO_HOME",
            "tkd has no home directory (HOME, absolute) to keep "
            "service definitions in");
    int n = snprintf(out, len, "%s/%s%s", ops->dir(r), label, ops->suffix);
    if (n < 0 || (size_t)n >= len)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
                              "the definition's path would be too long");
    return 0;
}

int services__op_register(const services_ctx *c,
                          const services_backend_ops *ops,
                          const services_spec *s, services_result *res,
                          services_error *e)
{
    memset(res, 0, sizeof *res);
    char path[PATH_MAX];
    if (services__def_path(path, sizeof path, c->r, ops, s->label, e) != 0)
        return -1;
    tkc_buf def = { 0 };
    ops->render(&def, s);
    int rv = services__label_lock(c->r, s->label, c->deadline_ns, e);
    if (rv == 0) {
        rv = ops->apply(c, s, path, &def, res, e);
        services__label_unlock(c->r, s->label);
    }
    tkc_buf_fini(&def);
    return rv;
}

int services__op_unregister(const services_ctx *c,
                            const services_backend_ops *ops, const char *label,
                            bool *removed, bool *unloaded, services_error *e)
{
    *removed = *unloaded = false;
    char path[PATH_MAX];
    if (services__def_path(path, sizeof path, c->r, ops, label, e) != 0 ||
        services__label_lock(c->r, label, c->deadline_ns, e) != 0)
        return -1;
    int rv = ops->unregister(c, label, path, removed, unloaded, e);
    services__label_unlock(c->r, label);
    return rv;
}

int services__op_status(const services_ctx *c, const services_backend_ops *ops,
                        const char *label, const services_spec *spec,
                        services_status *st, services_error *e)
{
    memset(st, 0, sizeof *st);
    char path[PATH_MAX];
    if (services__def_path(path, sizeof path, c->r, ops, label, e) != 0)
        return -1;
    services_loaded ld = { 0 };
    if (ops->status(c, label, st, &ld, e) != 0)
        return -1;
    tkc_buf cur = { 0 };
    st->installed = services__file_read(&cur, path) == 0;
    if (spec != NULL) {
        tkc_buf def = { 0 };
        ops->render(&def, spec);
        st->up_to_date =
            st->installed && services__buf_equal(&cur, &def) && ld.in_effect;
        tkc_buf_fini(&def);
    } else {
        st->up_to_date = st->installed && ld.loaded && ld.file_fresh;
    }
    tkc_buf_fini(&cur);
    return 0;
}
