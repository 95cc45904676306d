/* SPDX-License-Identifier: MIT */
/* `tkd install` and `tkd uninstall`: tkd registers itself through the same
 * code as tk.v1.Services/Register, so installing a new tkd over an old one
 * repairs the old definition (a wrong restart policy, an old path). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "services_int.h"

#define MAX_TKD_ARGS 64
/* Above tkd's shutdown bound, for a loaded machine: the bound adds up
 * tkd's own clocks, not the time it waits to be scheduled. */
#define STOP_MARGIN_S 5u
/* tkd's --shutdown-grace-ms, at most (tkd_options.c). */
#define MAX_GRACE_MS 3600000ull

static const char usage_text[] =
    "usage: tkd install [--backend auto|launchd|systemd] [--label L]\n"
    "                   [--dry-run] [-- TKD-OPTION...]\n"
    "       tkd uninstall [--backend auto|launchd|systemd] [--label L]\n"
    "                     [--dry-run]\n"
    "\n"
    "Registers this tkd executable as a user service (a launchd agent on\n"
    "macOS, a systemd user unit elsewhere), started at login and restarted\n"
    "when it fails, with the options after \"--\". Run it again after an\n"
    "upgrade: it changes nothing when the definition is current and\n"
    "replaces it when not. Labels: dev.tk.tkd (launchd), tkd (systemd).\n"
    "\n"
    "--dry-run writes nothing and runs nothing: it prints, as a shell\n"
    "script, the file it would write (with its path) and the systemctl or\n"
    "launchctl commands it would run, each step the installed state decides\n"
    "under a comment saying when.\n";

typedef struct cli {
    bool install;
    bool dry_run;
    int backend;
    const char *label;
    char *args[MAX_TKD_ARGS];
    size_t n_args;
} cli;

static int parse_backend(const char *s)
{
    if (strcmp(s, "auto") == 0)
        return SERVICES_AUTO;
    if (strcmp(s, "launchd") == 0)
        return SERVICES_LAUNCHD;
    if (strcmp(s, "systemd") == 0)
        return SERVICES_SYSTEMD;
    return -1;
}

/* 0 to go on, 1 help printed, 2 usage error. */
static int parse(cli *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0 && o->install) {
            for (i++; i < argc; i++) {
                if (o->n_args == MAX_TKD_ARGS) {
                    fprintf(stderr, "tkd install: at most %d options\n",
                            MAX_TKD_ARGS);
                    return 2;
                }
                o->args[o->n_args++] = argv[i];
            }
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = true;
        } else if (strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 1;
        } else if ((strcmp(a, "--backend") == 0 || strcmp(a, "--label") == 0) &&
                   i + 1 == argc) {
            fprintf(stderr, "tkd %s: %s needs a value (%s)\n", argv[1], a,
                    strcmp(a, "--backend") == 0 ? "auto, launchd or systemd"
                                                : "a label, e.g. dev.tk.tkd");
            return 2;
        } else if (strcmp(a, "--backend") == 0) {
            o->backend = parse_backend(argv[++i]);
            if (o->backend < 0) {
                fprintf(stderr,
                        "tkd %s: --backend is auto, launchd or "
                        "systemd, not \"%s\"\n",
                        argv[1], argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--label") == 0) {
            o->label = argv[++i];
        } else {
            fprintf(stderr, "tkd %s: unexpected \"%s\" (tkd %s --help)\n",
                    argv[1], a, argv[1]);
            return 2;
        }
    }
    return 0;
}

/* This executable's absolute path. */
static int self_path(char *out, size_t len, const char *argv0)
{
#ifdef __APPLE__
    char raw[PATH_MAX];
    uint32_t size = sizeof raw;
    if (_NSGetExecutablePath(raw, &size) == 0 && realpath(raw, out) != NULL)
        return 0;
#else
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n > 0) {
        out[n] = '\0';
        return 0;
    }
#endif
    char *real = strchr(argv0, '/') != NULL ? realpath(argv0, NULL) : NULL;
    if (real == NULL || strlen(real) >= len) {
        free(real);
        return -1;
    }
    snprintf(out, len, "%s", real);
    free(real);
    return 0;
}

/* Whether arg names tkd's --shutdown-grace-ms as its getopt_long reads
 * it: the whole name or a prefix only it has (--search-slots shares
 * "--s"), with "=VALUE" or not (*value then NULL). */
static bool grace_option(const char *arg, const char **value)
{
    static const char name[] = "--shutdown-grace-ms";
    size_t n = strcspn(arg, "=");
    if (n < 4 || n > sizeof name - 1 || strncmp(arg, name, n) != 0)
        return false;
    *value = arg[n] == '=' ? arg + n + 1 : NULL;
    return true;
}

/* The shutdown grace the options after "--" give tkd (the last one wins,
 * as in tkd), or its default; -1 with a message when tkd would refuse the
 * value. Every other option of tkd but --help and --version takes a
 * value, which is skipped: it may look like an option. */
static long long grace_of(const cli *o)
{
    long long grace = RPC_DEFAULT_SHUTDOWN_GRACE_MS;
    for (size_t i = 0; i < o->n_args; i++) {
        const char *a = o->args[i];
        const char *v = NULL;
        if (strcmp(a, "--") == 0)
            break;
        if (!grace_option(a, &v)) {
            if (strncmp(a, "--", 2) == 0 && strchr(a, '=') == NULL)
                i++;
            continue;
        }
        if (v == NULL && i + 1 < o->n_args)
            v = o->args[++i];
        char *end;
        errno = 0;
        unsigned long long ms = v != NULL ? strtoull(v, &end, 10) : 0;
        if (v == NULL || errno != 0 || end == v || *end != '\0' ||
            v[0] == '-' || ms > MAX_GRACE_MS) {
            fprintf(stderr,
                    "tkd install: --shutdown-grace-ms wants a whole number "
                    "from 0 to %llu, not \"%s\"\n",
                    MAX_GRACE_MS, v != NULL ? v : "");
            return -1;
        }
        grace = (long long)ms;
    }
    return grace;
}

/* How long the service manager waits for tkd to stop before it kills it:
 * above the longest tkd takes with that grace (rpc_shutdown_bound_ms). */
static unsigned stop_timeout_s(long long grace_ms)
{
    rpc_config cfg;
    rpc_config_init(&cfg);
    cfg.shutdown_grace_ms = (uint32_t)grace_ms;
    return (rpc_shutdown_bound_ms(&cfg) + 999u) / 1000u + STOP_MARGIN_S;
}

static services_ctx write_ctx(services *r)
{
    services_ctx c = { .r = r,
                       .deadline_ns =
                           proc_now_ns() +
                           (int64_t)SERVICES_WRITE_TIMEOUT_MS * 1000000 };
    return c;
}

static const char *const action_names[] = {
    [SERVICES_UNCHANGED] = "UNCHANGED (the definition is current and loaded)",
    [SERVICES_INSTALLED] = "INSTALLED",
    [SERVICES_UPDATED] = "UPDATED",
};

/* The script of a dry run (the backend's), under a line saying so; 1
 * with a message when stdout took less. */
static int print_script(const services *r, const services_backend_ops *ops,
                        const char *cmd, const char *label, const char *path,
                        const tkc_buf *def)
{
    tkc_buf out = { 0 };
    services__buf_printf(&out,
                         "# tkd %s --dry-run (%s): nothing was written and "
                         "nothing run.\n# tkd %s would do this:\n",
                         cmd, ops->name, cmd);
    ops->script(&out, r, label, path, def);
    bool whole =
        fwrite(out.data, 1, out.len, stdout) == out.len && fflush(stdout) == 0;
    int err = errno;
    tkc_buf_fini(&out);
    char ebuf[128];
    if (!whole)
        fprintf(stderr, "tkd %s: cannot print the dry run: %s\n", cmd,
                tkc_strerror(err, ebuf, sizeof ebuf));
    return whole ? 0 : 1;
}

/* This tkd as the unit would run it, or (dry) its tkd install --dry-run
 * with the options of this one: a line of sh. */
static void tkd_command(tkc_buf *b, const char *self, const cli *o, bool dry)
{
    services__buf_shword(b, self);
    if (dry) {
        services__buf_puts(b, " install --dry-run");
        /* only systemd has no manager to reach */
        if (o->backend != SERVICES_AUTO)
            services__buf_puts(b, " --backend systemd");
        if (o->label != NULL) {
            services__buf_puts(b, " --label ");
            services__buf_shword(b, o->label);
        }
        services__buf_puts(b, " --");
    }
    for (size_t i = 0; i < o->n_args; i++) {
        services__buf_puts(b, " ");
        services__buf_shword(b, o->args[i]);
    }
}

/* tkd install or uninstall failed for want of a systemd user manager
 * (the message says why): what to do for this command, not for a tkd
 * serving calls. */
static void no_manager_advice(const services *r, const cli *o, const char *self)
{
    if (o->install) {
        tkc_buf run = { 0 };
        tkc_buf dry = { 0 };
        tkd_command(&run, self, o, false);
        tkd_command(&dry, self, o, true);
        fprintf(stderr,
                "tkd install needs a systemd user manager, which a login of "
                "%s starts (a desktop or an ssh session): run it again "
                "there. Without a login, `loginctl enable-linger %s` starts "
                "one that stays; then run it again with "
                "XDG_RUNTIME_DIR=/run/user/%u. Or run tkd without a "
                "service manager:\n  %s\nor print the unit and the "
                "commands, to install it by hand:\n  %s\n",
                r->user, r->user, (unsigned)r->uid, (const char *)run.data,
                (const char *)dry.data);
        tkc_buf_fini(&run);
        tkc_buf_fini(&dry);
        return;
    }
    fprintf(stderr,
            "tkd uninstall needs the systemd user manager that runs the "
            "unit: run it again in a login of %s, or with "
            "XDG_RUNTIME_DIR=/run/user/%u where lingering is on. `tkd "
            "uninstall --dry-run` prints the commands to do it by hand.\n",
            r->user, (unsigned)r->uid);
}

static void report_failure(const services *r, const cli *o, const char *self,
                           const services_error *e)
{
    fprintf(stderr, "tkd %s: %s\n", o->install ? "install" : "uninstall",
            e->message);
    if (e->reason != NULL && strcmp(e->reason, "NO_USER_MANAGER") == 0)
        no_manager_advice(r, o, self);
}

/* tkd's spec: this tkd with the options after "--", restarted on failure,
 * a stop timeout above its shutdown bound and, under launchd, a log file.
 * Services/Render of the same spec gives the same definition
 * (docs/services.md). */
static int tkd_spec(services_spec *s, const cli *o,
                    const services_backend_ops *ops, const char *label,
                    const char *self, char *log, size_t loglen,
                    services_error *e)
{
    long long grace = grace_of(o);
    if (grace < 0)
        return 2;
    const char *home = getenv("HOME");
    /* launchd drops a job's output unless told where; systemd journals it */
    log[0] = '\0';
    if (ops->kind == SERVICES_LAUNCHD && home != NULL && home[0] == '/')
        snprintf(log, loglen, "%s/Library/Logs/tkd.log", home);
    Tk__V1__ServiceSpec msg = TK__V1__SERVICE_SPEC__INIT;
    msg.label = (char *)label;
    msg.program = (char *)self;
    msg.args = (char **)o->args;
    msg.n_args = o->n_args;
    msg.restart = TK__V1__SERVICE_SPEC__RESTART__ON_FAILURE;
    msg.stderr_path = log;
    msg.stdout_path = log;
    msg.stop_timeout_seconds = stop_timeout_s(grace);
    return services__spec_from_msg(s, &msg, e) != 0 ? 1 : 0;
}

static int do_install(services *r, const cli *o,
                      const services_backend_ops *ops, const char *label,
                      const char *self)
{
    char log[PATH_MAX];
    services_error e = { 0 };
    services_spec s;
    memset(&s, 0, sizeof s);
    int rv = tkd_spec(&s, o, ops, label, self, log, sizeof log, &e);
    if (rv == 2)
        return 2;
    char path[PATH_MAX];
    services_result res;
    services_ctx c = write_ctx(r);
    if (rv == 0 &&
        services__def_path(path, sizeof path, r, ops, label, &e) != 0)
        rv = 1;
    if (rv == 0 && o->dry_run) {
        tkc_buf def = { 0 };
        ops->render(&def, &s);
        rv = print_script(r, ops, "install", label, path, &def);
        tkc_buf_fini(&def);
        services__spec_fini(&s);
        return rv;
    }
    if (rv != 0 || services__op_register(&c, ops, &s, &res, &e) != 0) {
        report_failure(r, o, self, &e);
        services__spec_fini(&s);
        return 1;
    }
    printf("tkd install: %s %s: %s (%s", ops->name, label,
           action_names[res.action], path);
    if (ops->kind == SERVICES_LAUNCHD && res.attempts > 0)
        printf(", bootstrap attempts: %u", res.attempts);
    printf(")\n");
    for (size_t i = 0; i < res.n_warnings; i++)
        printf("tkd install: warning: %s\n", res.warnings[i]);
    services__spec_fini(&s);
    return 0;
}

static int do_uninstall(services *r, const cli *o,
                        const services_backend_ops *ops, const char *label)
{
    services_error e = { 0 };
    if (o->dry_run) {
        char path[PATH_MAX];
        if (services__def_path(path, sizeof path, r, ops, label, &e) != 0) {
            report_failure(r, o, "", &e);
            return 1;
        }
        return print_script(r, ops, "uninstall", label, path, NULL);
    }
    services_ctx c = write_ctx(r);
    bool removed;
    bool unloaded;
    if (services__op_unregister(&c, ops, label, &removed, &unloaded, &e) != 0) {
        report_failure(r, o, "", &e);
        return 1;
    }
    printf("tkd uninstall: %s %s: %s, %s\n", ops->name, label,
           unloaded ? "unloaded" : "was not loaded",
           removed ? "definition removed" : "no definition was installed");
    return 0;
}

int services_cli(int argc, char **argv)
{
    if (argc < 2 ||
        (strcmp(argv[1], "install") != 0 && strcmp(argv[1], "uninstall") != 0))
        return -1;
    cli o = { .install = strcmp(argv[1], "install") == 0 };
    int rv = parse(&o, argc, argv);
    if (rv != 0)
        return rv == 1 ? 0 : 2;
    services_error e = { 0 };
    const services_backend_ops *ops = services__backend_for(o.backend, &e);
    char self[PATH_MAX];
    if (o.install && self_path(self, sizeof self, argv[0]) != 0) {
        fprintf(stderr, "tkd install: cannot tell where this tkd is\n");
        return 1;
    }
    services *r = NULL;
    char err[256];
    if (services_new(&r, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "tkd %s: %s\n", argv[1], err);
        return 1;
    }
    const char *label = o.label                         ? o.label
                        : ops->kind == SERVICES_LAUNCHD ? "dev.tk.tkd"
                                                        : "tkd";
    if (services__label_check(label, &e) != 0) {
        fprintf(stderr, "tkd %s: %s\n", argv[1], e.message);
        rv = 2;
    } else {
        rv = o.install ? do_install(r, &o, ops, label, self)
                       : do_uninstall(r, &o, ops, label);
    }
    services_free(r);
    return rv;
}
