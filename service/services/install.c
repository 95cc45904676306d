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
    "                   [-- TKD-OPTION...]\n"
    "       tkd uninstall [--backend auto|launchd|systemd] [--label L]\n"
    "\n"
    "Registers this tkd executable as a user service (a launchd agent on\n"
    "macOS, a systemd user unit elsewhere), started at login and restarted\n"
    "when it fails, with the options after \"--\". Run it again after an\n"
    "upgrade: it changes nothing when the definition is current and\n"
    "replaces it when not. Labels: dev.tk.tkd (launchd), tkd (systemd).\n";

typedef struct cli {
    bool install;
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

static int do_install(services *r, const cli *o,
                      const services_backend_ops *ops, const char *label,
                      const char *self)
{
    long long grace = grace_of(o);
    if (grace < 0)
        return 2;
    char log[PATH_MAX] = "";
    const char *home = getenv("HOME");
    /* launchd drops a job's output unless told where; systemd journals it */
    if (ops->kind == SERVICES_LAUNCHD && home != NULL && home[0] == '/')
        snprintf(log, sizeof log, "%s/Library/Logs/tkd.log", home);
    Tk__V1__ServiceSpec msg = TK__V1__SERVICE_SPEC__INIT;
    msg.label = (char *)label;
    msg.program = (char *)self;
    msg.args = (char **)o->args;
    msg.n_args = o->n_args;
    msg.restart = TK__V1__SERVICE_SPEC__RESTART__ON_FAILURE;
    msg.stderr_path = log;
    msg.stdout_path = log;
    msg.stop_timeout_seconds = stop_timeout_s(grace);
    services_error e = { 0 };
    services_spec s;
    services_result res;
    services_ctx c = write_ctx(r);
    char path[PATH_MAX] = "";
    int rv = services__spec_from_msg(&s, &msg, &e);
    if (rv != 0 || services__op_register(&c, ops, &s, &res, &e) != 0 ||
        services__def_path(path, sizeof path, r, ops, label, &e) != 0) {
        fprintf(stderr, "tkd install: %s\n", e.message);
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

static int do_uninstall(services *r, const services_backend_ops *ops,
                        const char *label)
{
    services_error e = { 0 };
    services_ctx c = write_ctx(r);
    bool removed;
    bool unloaded;
    if (services__op_unregister(&c, ops, label, &removed, &unloaded, &e) != 0) {
        fprintf(stderr, "tkd uninstall: %s\n", e.message);
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
                       : do_uninstall(r, ops, label);
    }
    services_free(r);
    return rv;
}
