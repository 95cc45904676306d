/* SPDX-License-Identifier: MIT */
/* The systemd backend: a user unit in $XDG_CONFIG_HOME/systemd/user,
 * managed with `systemctl --user`.
 *
 * systemd has no bootout race: stop and restart wait for their job. Its
 * traps are others: the manager keeps the definition it loaded, so after
 * the file changes a restart without daemon-reload runs the old one; and
 * a user manager stops at the user's last logout unless lingering is on.
 * So every change is file, daemon-reload, enable, restart, and Register
 * warns when lingering is off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "services_int.h"

typedef struct sd_op {
    const services_ctx *c;
    char unit[SERVICES_LABEL_MAX + 16];
    char env_rt[PATH_MAX + 32];
} sd_op;

/* What `systemctl --user show` says of the unit. */
typedef struct sd_show {
    char active[32];     /* ActiveState: active, failed, inactive, ... */
    char file_state[32]; /* UnitFileState: enabled, disabled, "" */
    bool need_reload;    /* NeedDaemonReload */
    int pid;             /* MainPID */
    int code;            /* ExecMainCode: 1 exited, 2 killed, 3 dumped */
    int status;          /* ExecMainStatus */
} sd_show;

/* The advice is for a call's tkd, which needs a manager for its
 * lifetime; tkd install and uninstall (no call) give their own, for the
 * command that was run (install.c). */
static int no_manager(const sd_op *op, const char *why, services_error *e)
{
    const services *r = op->c->r;
    if (op->c->call == NULL)
        return services__fail(e, RPC_FAILED_PRECONDITION, "NO_USER_MANAGER",
                              "systemctl --user cannot reach the user "
                              "manager of %s (%.512s)",
                              r->user, why);
    return services__fail(
        e, RPC_FAILED_PRECONDITION, "NO_USER_MANAGER",
        "systemctl --user cannot reach the user manager of %s "
        "(%.512s). Log in to start it, or run `loginctl "
        "enable-linger %s` (it then runs without a login) and "
        "start tkd with XDG_RUNTIME_DIR=/run/user/%u",
        r->user, why, r->user, (unsigned)r->uid);
}

static int sd_begin(sd_op *op, const services_ctx *c, const char *label,
                    services_error *e)
{
    memset(op, 0, sizeof *op);
    op->c = c;
    const services *r = c->r;
    if (r->systemctl[0] == '\0')
        return services__fail(e, RPC_FAILED_PRECONDITION, "TOOL_NOT_FOUND",
                              "systemctl is not on tkd's PATH: the systemd "
                              "backend needs systemd");
    struct stat st;
    if (r->runtime_dir[0] == '\0')
        return no_manager(op, "XDG_RUNTIME_DIR is not set", e);
    if (stat(r->runtime_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return no_manager(op, "XDG_RUNTIME_DIR is not a directory", e);
    snprintf(op->unit, sizeof op->unit, "%s.service", label);
    snprintf(op->env_rt, sizeof op->env_rt, "XDG_RUNTIME_DIR=%s",
             r->runtime_dir);
    return 0;
}

static int systemctl(services_out *o, const sd_op *op, const char *const *args,
                     services_error *e)
{
    const char *argv[16] = { "systemctl", "--user" };
    size_t n = 2;
    for (; *args != NULL && n + 1 < sizeof argv / sizeof *argv; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    const char *env[] = { op->env_rt, NULL };
    return services__run(o, op->c, op->c->r->systemctl, argv, env, e);
}

/* systemctl could not reach the user manager's bus. systemd up to 253
 * says "Failed to connect to bus: <why>"; from 254 on (bus_log_connect_full)
 * "Failed to connect to user scope bus via local transport: <why>". */
static bool sd_no_bus(const char *said)
{
    return strstr(said, "Failed to connect to bus") != NULL ||
           strstr(said, "Failed to connect to user scope bus") != NULL;
}

/* Runs `systemctl --user VERB [UNIT]`; a non-zero exit is an error. */
static int sd_do(const sd_op *op, const char *verb, bool with_unit,
                 services_error *e)
{
    const char *args[] = { verb, with_unit ? op->unit : NULL, NULL };
    services_out o;
    if (systemctl(&o, op, args, e) != 0)
        return -1;
    int rv = 0;
    const char *said = services__out_text(&o);
    if (o.exit != 0 && sd_no_bus(said))
        rv = no_manager(op, said, e);
    else if (o.exit != 0)
        rv = services__fail(e, RPC_FAILED_PRECONDITION, "SYSTEMCTL_FAILED",
                            "systemctl --user %s%s%s failed (exit %d): %.1024s",
                            verb, with_unit ? " " : "",
                            with_unit ? op->unit : "", o.exit, said);
    if (rv != 0)
        services__keep_output(e, &o);
    services__out_fini(&o);
    return rv;
}

static void parse_show(const char *text, sd_show *sh)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        char *v = strchr(line, '=');
        if (v != NULL) {
            *v++ = '\0';
            if (strcmp(line, "ActiveState") == 0)
                snprintf(sh->active, sizeof sh->active, "%s", v);
            else if (strcmp(line, "UnitFileState") == 0)
                snprintf(sh->file_state, sizeof sh->file_state, "%s", v);
            else if (strcmp(line, "NeedDaemonReload") == 0)
                sh->need_reload = strcmp(v, "yes") == 0;
            else if (strcmp(line, "MainPID") == 0)
                sh->pid = services__atoi(v, 0);
            else if (strcmp(line, "ExecMainCode") == 0)
                sh->code = services__atoi(v, 0);
            else if (strcmp(line, "ExecMainStatus") == 0)
                sh->status = services__atoi(v, 0);
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
}

static int sd_read_show(const sd_op *op, sd_show *sh, services_error *e)
{
    memset(sh, 0, sizeof *sh);
    const char *args[] = { "show", op->unit,
                           "--property=ActiveState,"
                           "UnitFileState,NeedDaemonReload,MainPID,"
                           "ExecMainCode,ExecMainStatus",
                           NULL };
    services_out o;
    if (systemctl(&o, op, args, e) != 0)
        return -1;
    int rv = 0;
    if (o.exit != 0) {
        const char *said = services__out_text(&o);
        rv =
            sd_no_bus(said)
                ? no_manager(op, said, e)
                : services__fail(e, RPC_FAILED_PRECONDITION, "SYSTEMCTL_FAILED",
                                 "systemctl --user show %s failed (exit %d): "
                                 "%.1024s",
                                 op->unit, o.exit, said);
        services__keep_output(e, &o);
    } else if (o.out != NULL) {
        parse_show(o.out, sh);
    }
    services__out_fini(&o);
    return rv;
}

static bool sd_enabled(const sd_show *sh)
{
    return strcmp(sh->file_state, "enabled") == 0;
}

/* The unit as written is what systemd runs: enabled, no daemon-reload
 * pending, not failed. */
static bool sd_in_effect(const sd_show *sh)
{
    return sd_enabled(sh) && !sh->need_reload &&
           strcmp(sh->active, "failed") != 0;
}

/* Lingering: loginctl's answer, else the marker file logind keeps. */
static void sd_linger_warning(const sd_op *op, services_result *res)
{
    const services *r = op->c->r;
    int known = 0; /* 1 on, -1 off */
    if (r->loginctl[0] != '\0') {
        char uid[32];
        snprintf(uid, sizeof uid, "%u", (unsigned)r->uid);
        const char *argv[] = { "loginctl", "show-user", uid,
                               "--property=Linger", NULL };
        const char *env[] = { op->env_rt, NULL };
        services_out o;
        services_error ignored;
        if (services__run(&o, op->c, r->loginctl, argv, env, &ignored) == 0 &&
            o.exit == 0 && o.out != NULL)
            known = strstr(o.out, "Linger=yes") != NULL  ? 1
                    : strstr(o.out, "Linger=no") != NULL ? -1
                                                         : 0;
        services__out_fini(&o);
    }
    if (known == 0) {
        char marker[PATH_MAX + sizeof r->user];
        struct stat st;
        snprintf(marker, sizeof marker, "%s/%s", r->linger_dir, r->user);
        known = stat(marker, &st) == 0 ? 1 : -1;
    }
    if (known < 0)
        services__warn(res,
                       "lingering is off for %s: the unit stops when the last "
                       "session of %s ends and starts at the next login; "
                       "`loginctl enable-linger %s` keeps it running",
                       r->user, r->user, r->user);
}

static int sd_apply(const services_ctx *c, const services_spec *s,
                    const char *path, const tkc_buf *def, services_result *res,
                    services_error *e)
{
    sd_op op;
    sd_show sh;
    if (sd_begin(&op, c, s->label, e) != 0 || sd_read_show(&op, &sh, e) != 0)
        return -1;
    tkc_buf old = { 0 };
    int rd = services__file_read(&old, path);
    bool same = rd == 0 && services__buf_equal(&old, def);
    tkc_buf_fini(&old);
    bool in_effect = sd_in_effect(&sh);
    if (same && in_effect) {
        res->action = SERVICES_UNCHANGED;
        sd_linger_warning(&op, res);
        return 0;
    }
    res->action = rd == 0 ? SERVICES_UPDATED : SERVICES_INSTALLED;
    services_staged st;
    if (services__file_stage(&st, path, def, e) != 0 ||
        services__file_commit(&st, e) != 0)
        return -1;
    /* daemon-reload, on purpose: it is what makes restart run the new
     * file. enable reloads too (systemctl(1), unless --no-reload), but as a
     * side effect of enabling, which Register does not lean on. */
    if (sd_do(&op, "daemon-reload", false, e) != 0 ||
        sd_do(&op, "enable", true, e) != 0 ||
        sd_do(&op, "restart", true, e) != 0)
        return -1;
    res->attempts = 1;
    sd_linger_warning(&op, res);
    return 0;
}

static int sd_unregister(const services_ctx *c, const char *label,
                         const char *path, bool *removed, bool *unloaded,
                         services_error *e)
{
    sd_op op;
    sd_show sh;
    if (sd_begin(&op, c, label, e) != 0 || sd_read_show(&op, &sh, e) != 0)
        return -1;
    bool active = strcmp(sh.active, "active") == 0 ||
                  strcmp(sh.active, "activating") == 0 ||
                  strcmp(sh.active, "reloading") == 0;
    if (active && sd_do(&op, "stop", true, e) != 0)
        return -1;
    if (sd_enabled(&sh) && sd_do(&op, "disable", true, e) != 0)
        return -1;
    *unloaded = active || sd_enabled(&sh);
    if (services__file_remove(path, removed, e) != 0)
        return -1;
    return *removed ? sd_do(&op, "daemon-reload", false, e) : 0;
}

static int sd_status(const services_ctx *c, const char *label,
                     services_status *st, services_loaded *ld,
                     services_error *e)
{
    sd_op op;
    sd_show sh;
    if (sd_begin(&op, c, label, e) != 0 || sd_read_show(&op, &sh, e) != 0)
        return -1;
    st->loaded = ld->loaded = sd_enabled(&sh);
    st->pid = sh.pid;
    if (sh.code == 1) {
        st->exited = true;
        st->exit_code = sh.status;
    } else if (sh.code == 2 || sh.code == 3) {
        st->exited = true;
        st->exit_signal = sh.status;
    }
    ld->file_fresh = !sh.need_reload;
    ld->in_effect = sd_in_effect(&sh);
    return 0;
}

static void sd_cmd(tkc_buf *out, const char *verb, const char *unit)
{
    const char *argv[] = { "systemctl", "--user", verb, unit, NULL };
    services__buf_shline(out, argv);
}

static void sd_script(tkc_buf *out, const services *r, const char *label,
                      const char *path, const tkc_buf *def)
{
    char unit[SERVICES_LABEL_MAX + 16];
    snprintf(unit, sizeof unit, "%s.service", label);
    services__buf_printf(out,
                         "# First `systemctl --user show %s` reads the "
                         "unit's state.\n",
                         unit);
    if (def == NULL) {
        services__buf_puts(out, "# When it is active:\n");
        sd_cmd(out, "stop", unit);
        services__buf_puts(out, "# When it is enabled:\n");
        sd_cmd(out, "disable", unit);
        services__buf_puts(out, "rm -f ");
        services__buf_shword(out, path);
        services__buf_puts(out, "\n# When there was a file:\n");
        sd_cmd(out, "daemon-reload", NULL);
        return;
    }
    services__buf_puts(out, "# Unless the file below is installed and in "
                            "effect (enabled, no reload\n# pending, not "
                            "failed):\n");
    services__script_file(out, r->units_dir, path, def);
    sd_cmd(out, "daemon-reload", NULL);
    sd_cmd(out, "enable", unit);
    sd_cmd(out, "restart", unit);
    services__buf_printf(out,
                         "# Then `loginctl show-user %u --property=Linger`: "
                         "a warning when lingering\n# is off.\n",
                         (unsigned)r->uid);
}

static const char *sd_dir(const services *r)
{
    return r->units_dir;
}

const services_backend_ops services__systemd_ops = {
    .kind = SERVICES_SYSTEMD,
    .name = "systemd",
    .suffix = ".service",
    .render = services__render_unit,
    .dir = sd_dir,
    .apply = sd_apply,
    .unregister = sd_unregister,
    .status = sd_status,
    .script = sd_script,
};
