/* SPDX-License-Identifier: MIT */
/* The launchd backend: a LaunchAgent in ~/Library/LaunchAgents, loaded
 * into the user's GUI domain (gui/<uid>), or into user/<uid> where there
 * is no GUI session (ssh, a build machine).
 *
 * Why the sequence is what it is:
 * `launchctl bootout` returns before launchd has torn the job down; a
 * bootstrap of the same label meanwhile fails with "Bootstrap failed: 5:
 * Input/output error", and since the bootout succeeded, KeepAlive does not
 * bring the job back. So: bootout, then observe — poll `launchctl print`
 * until the label has left the domain — and only then bootstrap, retrying
 * (a few times, with a linear backoff) only that error, which also covers
 * the gap between the label leaving print and launchd accepting it again.
 * The same error also means a plist launchd cannot use, so the retry is
 * bounded, everything else fails at once, and plutil -lint goes first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services_int.h"

#define EIO_TEXT "Input/output error"

typedef struct ld_op {
    const services_ctx *c;
    char domain[64];                      /* gui/501 */
    char target[64 + SERVICES_LABEL_MAX]; /* gui/501/dev.tk.tkd */
} ld_op;

static int launchctl(services_out *o, const ld_op *op, const char *a1,
                     const char *a2, const char *a3, services_error *e)
{
    const char *argv[] = { "launchctl", a1, a2, a3, NULL };
    return services__run(o, op->c, op->c->r->launchctl, argv, NULL, e);
}

/* The domain: gui/<uid> when launchd has one (a GUI login), else
 * user/<uid>, which exists without a login. */
static int ld_begin(ld_op *op, const services_ctx *c, const char *label,
                    services_error *e)
{
    memset(op, 0, sizeof *op);
    op->c = c;
    if (c->r->launchctl[0] == '\0')
        return services__fail(e, RPC_FAILED_PRECONDITION, "TOOL_NOT_FOUND",
                              "launchctl is not on tkd's PATH: the launchd "
                              "backend needs macOS");
    unsigned uid = (unsigned)c->r->uid;
    snprintf(op->domain, sizeof op->domain, "gui/%u", uid);
    services_out o;
    if (launchctl(&o, op, "print", op->domain, NULL, e) != 0)
        return -1;
    if (o.exit != 0)
        snprintf(op->domain, sizeof op->domain, "user/%u", uid);
    services__out_fini(&o);
    snprintf(op->target, sizeof op->target, "%s/%s", op->domain, label);
    return 0;
}

/* Whether the label is in the domain; desc (may be NULL) gets print's
 * description. */
static int ld_print(const ld_op *op, bool *loaded, services_out *desc,
                    services_error *e)
{
    services_out o;
    if (launchctl(&o, op, "print", op->target, NULL, e) != 0)
        return -1;
    *loaded = o.exit == 0;
    if (desc != NULL)
        *desc = o;
    else
        services__out_fini(&o);
    return 0;
}

static int ld_lint(const ld_op *op, const char *file, services_error *e)
{
    const services *r = op->c->r;
    if (r->plutil[0] == '\0')
        return 0; /* not on macOS; launchctl judges the file itself */
    const char *argv[] = { "plutil", "-lint", file, NULL };
    services_out o;
    if (services__run(&o, op->c, r->plutil, argv, NULL, e) != 0)
        return -1;
    int rv = 0;
    if (o.exit != 0) {
        rv = services__fail(e, RPC_FAILED_PRECONDITION, "LINT_FAILED",
                            "plutil -lint refused the rendered plist: %.1024s",
                            services__out_text(&o));
        services__keep_output(e, &o);
    }
    services__out_fini(&o);
    return rv;
}

/* bootout, then poll print every SERVICES_POLL_MS until the label is gone, for
 * at most gone_wait_ms (10 s). bootout's own status is not trusted either
 * way ("not loaded" is fine; success does not mean gone): print decides. */
static int ld_bootout_wait(const ld_op *op, services_error *e)
{
    services_out bo;
    if (launchctl(&bo, op, "bootout", op->target, NULL, e) != 0)
        return -1;
    int64_t start = proc_now_ns();
    unsigned polls = 0;
    int rv = 0;
    for (;;) {
        bool loaded;
        if (ld_print(op, &loaded, NULL, e) != 0) {
            rv = -1;
            break;
        }
        if (!loaded)
            break;
        unsigned limit_ms = op->c->r->gone_wait_ms;
        if (proc_now_ns() - start >= (int64_t)limit_ms * 1000000) {
            rv = services__fail(
                e, RPC_UNAVAILABLE, "TEARDOWN_TIMEOUT",
                "%s is still in the domain %u ms after launchctl "
                "bootout (which said: \"%.512s\")",
                op->target, limit_ms, services__out_text(&bo));
            services__keep_output(e, &bo);
            break;
        }
        /* every SERVICES_POLL_MS from the bootout, however long print took */
        int64_t next = start + (int64_t)++polls * SERVICES_POLL_MS * 1000000;
        int64_t wait_ms = (next - proc_now_ns()) / 1000000;
        if (wait_ms > 0 &&
            services__sleep_ms(op->c, (unsigned)wait_ms, e) != 0) {
            rv = -1;
            break;
        }
    }
    services__out_fini(&bo);
    return rv;
}

static int ld_enable(const ld_op *op, services_error *e)
{
    services_out o;
    if (launchctl(&o, op, "enable", op->target, NULL, e) != 0)
        return -1;
    int rv = 0;
    if (o.exit != 0) {
        rv = services__fail(e, RPC_FAILED_PRECONDITION, "LAUNCHCTL_FAILED",
                            "launchctl enable %s failed (exit %d): %.1024s",
                            op->target, o.exit, services__out_text(&o));
        services__keep_output(e, &o);
    }
    services__out_fini(&o);
    return rv;
}

/* One bootstrap attempt: 0 loaded, 1 worth another attempt (the EIO of the
 * teardown race), -1 failed for good (e filled). */
static int ld_bootstrap_once(const ld_op *op, const char *path,
                             unsigned attempt, services_error *e)
{
    services_out o;
    if (launchctl(&o, op, "bootstrap", op->domain, path, e) != 0)
        return -1;
    int rv = 0;
    if (o.exit != 0) {
        const char *said = services__out_text(&o);
        bool eio = strstr(said, EIO_TEXT) != NULL;
        if (eio && attempt < SERVICES_BOOTSTRAP_ATTEMPTS)
            rv = 1;
        else
            rv = services__fail(
                e, RPC_FAILED_PRECONDITION, "BOOTSTRAP_FAILED",
                "launchctl bootstrap %s %.512s failed (exit %d, "
                "attempt %u of at most %u%s): %.768s",
                op->domain, path, o.exit, attempt, SERVICES_BOOTSTRAP_ATTEMPTS,
                eio ? "" : "; not retried: not the teardown race", said);
        if (rv < 0)
            services__keep_output(e, &o);
    }
    services__out_fini(&o);
    return rv;
}

static int ld_bootstrap(const ld_op *op, const char *path, unsigned *attempts,
                        services_error *e)
{
    for (unsigned attempt = 1;; attempt++) {
        *attempts = attempt;
        int rv = ld_bootstrap_once(op, path, attempt, e);
        if (rv <= 0)
            return rv;
        /* linear backoff: 300, 600, 900, ... ms */
        if (services__sleep_ms(op->c, attempt * SERVICES_BACKOFF_STEP_MS, e) !=
            0)
            return -1;
    }
}

/* Stage (and lint) the file; take the old job out and wait until it is
 * gone; put the file in place; enable; bootstrap. The file replaces the old
 * one only once the old job has left, so a failure before that leaves the
 * old definition and the old job together. */
static int ld_install(const ld_op *op, const char *path, const tkc_buf *def,
                      bool loaded, services_result *res, services_error *e)
{
    services_staged st;
    if (services__file_stage(&st, path, def, e) != 0)
        return -1;
    int rv = ld_lint(op, st.tmp, e);
    if (rv == 0 && loaded)
        rv = ld_bootout_wait(op, e);
    if (rv == 0)
        rv = services__file_commit(&st, e);
    services__file_discard(&st);
    if (rv == 0)
        rv = ld_enable(op, e);
    if (rv == 0)
        rv = ld_bootstrap(op, path, &res->attempts, e);
    return rv;
}

static int ld_apply(const services_ctx *c, const services_spec *s,
                    const char *path, const tkc_buf *def, services_result *res,
                    services_error *e)
{
    ld_op op;
    if (ld_begin(&op, c, s->label, e) != 0)
        return -1;
    tkc_buf old = { 0 };
    int rd = services__file_read(&old, path);
    bool same = rd == 0 && services__buf_equal(&old, def);
    tkc_buf_fini(&old);
    bool loaded = false;
    if (ld_print(&op, &loaded, NULL, e) != 0)
        return -1;
    if (same && loaded) {
        res->action = SERVICES_UNCHANGED;
        return 0;
    }
    if (same)
        services__warn(res, "%s was installed but not loaded; loaded it", path);
    res->action = rd == 0 ? SERVICES_UPDATED : SERVICES_INSTALLED;
    return ld_install(&op, path, def, loaded, res, e);
}

static int ld_unregister(const services_ctx *c, const char *label,
                         const char *path, bool *removed, bool *unloaded,
                         services_error *e)
{
    ld_op op;
    bool loaded = false;
    if (ld_begin(&op, c, label, e) != 0 || ld_print(&op, &loaded, NULL, e) != 0)
        return -1;
    if (loaded && ld_bootout_wait(&op, e) != 0)
        return -1;
    *unloaded = loaded;
    return services__file_remove(path, removed, e);
}

/* "\tkey = value" at the top level of print's description. */
static const char *field(const char *desc, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = desc; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (p[0] == '\t' && strncmp(p + 1, key, n) == 0 &&
            strncmp(p + 1 + n, " = ", 3) == 0)
            return p + 1 + n + 3;
    }
    return NULL;
}

static void parse_print(const char *desc, services_status *st)
{
    const char *v = field(desc, "pid");
    if (v != NULL)
        st->pid = services__atoi(v, 0);
    v = field(desc, "last exit code");
    if (v != NULL && *v >= '0' && *v <= '9') {
        st->exited = true;
        st->exit_code = services__atoi(v, 0);
    }
    v = field(desc, "last terminating signal");
    if (v != NULL && (v = strstr(v, ": ")) != NULL) {
        st->exited = true;
        st->exit_signal = services__atoi(v + 2, 0);
    }
}

static int ld_status(const services_ctx *c, const char *label,
                     services_status *st, services_loaded *ld,
                     services_error *e)
{
    ld_op op;
    services_out desc;
    bool loaded = false;
    if (ld_begin(&op, c, label, e) != 0 ||
        ld_print(&op, &loaded, &desc, e) != 0)
        return -1;
    if (loaded && desc.out != NULL)
        parse_print(desc.out, st);
    services__out_fini(&desc);
    st->loaded = ld->loaded = ld->in_effect = ld->file_fresh = loaded;
    return 0;
}

static void ld_cmd(tkc_buf *out, const char *verb, const char *a1,
                   const char *a2)
{
    const char *argv[] = { "launchctl", verb, a1, a2, NULL };
    services__buf_shline(out, argv);
}

static void ld_script(tkc_buf *out, const services *r, const char *label,
                      const char *path, const tkc_buf *def)
{
    char domain[64], target[64 + SERVICES_LABEL_MAX];
    snprintf(domain, sizeof domain, "gui/%u", (unsigned)r->uid);
    snprintf(target, sizeof target, "%s/%s", domain, label);
    services__buf_printf(out,
                         "# First `launchctl print %s` picks the domain "
                         "(user/%u when it fails:\n# no GUI session), and "
                         "`launchctl print %s` says whether it is\n# "
                         "loaded.\n",
                         domain, (unsigned)r->uid, target);
    if (def != NULL) {
        services__buf_puts(out, "# Unless the file below is installed and "
                                "loaded:\n");
        services__script_file(out, r->agents_dir, path, def);
        if (r->plutil[0] != '\0') {
            const char *lint[] = { "plutil", "-lint", path, NULL };
            services__buf_shline(out, lint);
        }
    }
    services__buf_printf(out,
                         "# When it is loaded; then `launchctl print` every "
                         "%u ms until it is gone:\n",
                         SERVICES_POLL_MS);
    ld_cmd(out, "bootout", target, NULL);
    if (def == NULL) {
        services__buf_puts(out, "rm -f ");
        services__buf_shword(out, path);
        services__buf_puts(out, "\n");
        return;
    }
    ld_cmd(out, "enable", target, NULL);
    services__buf_printf(out, "# Again on \"%s\", at most %u times:\n",
                         EIO_TEXT, SERVICES_BOOTSTRAP_ATTEMPTS);
    ld_cmd(out, "bootstrap", domain, path);
}

static const char *ld_dir(const services *r)
{
    return r->agents_dir;
}

const services_backend_ops services__launchd_ops = {
    .kind = SERVICES_LAUNCHD,
    .name = "launchd",
    .suffix = ".plist",
    .render = services__render_plist,
    .dir = ld_dir,
    .apply = ld_apply,
    .unregister = ld_unregister,
    .status = ld_status,
    .script = ld_script,
};
