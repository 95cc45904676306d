/* SPDX-License-Identifier: MIT */
/* tkcall's command line: the options (getopt_long), the address they
 * name, -o and --color, into the tkcall of tkcall_int.h.
 *
 * Owns: tkcall__parse_args, and what each option means.
 * May call: usage.c, output.c (how statuses print), libtkclient's
 * tk_default_address, libc.
 * Must never: call tkd, print but --help, --version and usage errors. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

/* A bare socket path ("/run/user/1000/tk/tkd.sock", "build/run/tkd.sock")
 * means ipc:// that path, made absolute. -1: too long. */
static int ipc_of_path(char addr[ADDR_MAX])
{
    if (strstr(addr, "://") != NULL || addr[0] == '\0')
        return 0;
    char path[ADDR_MAX], cwd[ADDR_MAX];
    int n;
    if (addr[0] == '/')
        n = snprintf(path, sizeof path, "ipc://%s", addr);
    else if (getcwd(cwd, sizeof cwd) != NULL)
        n = snprintf(path, sizeof path, "ipc://%s/%s", cwd, addr);
    else
        return 0; /* left as it is: opening it says what is wrong */
    if (n < 0 || (size_t)n >= sizeof path)
        return -1;
    memcpy(addr, path, (size_t)n + 1);
    return 0;
}

/* The schemes tkcall dials: those tkd listens on (ipc://, tls+tcp://,
 * and tcp:// for a lab, tkd --insecure-plain-tcp), with NNG's 4 and 6. */
static const char *const schemes[] = { "ipc://",      "tls+tcp://",
                                       "tls+tcp4://", "tls+tcp6://",
                                       "tcp://",      "tcp4://",
                                       "tcp6://" };

/* Every address of the list addr (from where) in a scheme tkcall dials;
 * else a usage error that names them. Returns -1 to go on, or 64. */
static int check_schemes(const char *addr, const char *where)
{
    for (const char *at = addr; at != NULL && *at != '\0';) {
        const char *comma = strchr(at, ',');
        size_t len = comma != NULL ? (size_t)(comma - at) : strlen(at);
        bool known = len == 0; /* libtkclient names an empty one */
        for (size_t i = 0; !known && i < sizeof schemes / sizeof schemes[0];
             i++)
            known = len >= strlen(schemes[i]) &&
                    strncmp(at, schemes[i], strlen(schemes[i])) == 0;
        if (!known)
            return tkcall__usage_error(
                "%s: tkcall cannot dial \"%.*s\": tkd's addresses are "
                "ipc://PATH (or a bare socket path) on this machine, "
                "tls+tcp://HOST:PORT (with --cacert, --cert and --key), "
                "and tcp://HOST:PORT for a lab (tkd --insecure-plain-tcp)",
                where, (int)len, at);
        at = comma != NULL ? comma + 1 : NULL;
    }
    return -1;
}

enum {
    OPT_CACERT = 1000,
    OPT_CERT,
    OPT_KEY,
    OPT_COLOR,
    OPT_PROTO_JSON,
    OPT_NODE,
    OPT_RETRY_READS
};

static const char *const format_names[] = {
    [TKCALL_OUT_TEXT] = "text",
    [TKCALL_OUT_LONG] = "long",
    [TKCALL_OUT_JSON] = "json",
    [TKCALL_OUT_COMPACT] = "compact",
};

static int parse_format(tkcall *t, const char *name)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcmp(name, format_names[i]) == 0) {
            t->out.format = (tkcall_format)i;
            return -1;
        }
    return tkcall__usage_error(
        "-o takes text, long, json or compact, not \"%s\"", name);
}

/* --color: auto is colour only on a terminal, and never with NO_COLOR set
 * to anything but "" (no-color.org) or TERM=dumb. */
static int parse_color(tkcall *t, const char *when)
{
    const char *no_color = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (strcmp(when, "always") == 0)
        t->out.color = true;
    else if (strcmp(when, "never") == 0)
        t->out.color = false;
    else if (strcmp(when, "auto") == 0)
        t->out.color = isatty(STDOUT_FILENO) &&
                       (no_color == NULL || no_color[0] == '\0') &&
                       (term == NULL || strcmp(term, "dumb") != 0);
    else
        return tkcall__usage_error(
            "--color takes auto, always or never, not \"%s\"", when);
    return -1;
}

/* -o, --color (resolved once all flags are read), -v and -D. Returns -1
 * to go on, or the status to exit with now. */
static int output_option(tkcall *t, int c, const char *arg, const char **color)
{
    switch (c) {
    case 'o':
        return parse_format(t, arg);
    case OPT_COLOR:
        *color = arg;
        return -1;
    case 'v':
        t->verbose = true;
        return -1;
    default: /* 'D' */
        t->out.json_flags |= TK_JSON_EMIT_DEFAULTS;
        return -1;
    }
}

/* Whether arg is an option whose value is the next word (-d JSON,
 * --addr URL). */
static bool takes_next(const char *arg, const struct option *longopts)
{
    if (arg[0] == '-' && strchr("atdo", arg[1]) != NULL && arg[1] != '\0' &&
        arg[2] == '\0')
        return true;
    if (strncmp(arg, "--", 2) != 0 || strchr(arg, '=') != NULL)
        return false;
    for (const struct option *o = longopts; o->name != NULL; o++)
        if (strcmp(arg + 2, o->name) == 0)
            return o->has_arg == required_argument;
    return false;
}

/* grpcurl's single-dash long options (-cacert, -max-time, -H): "did you
 * mean --cacert?" for those tkcall has, what to do for the others (usage.c
 * says), rather than getopt's "invalid option -- 'c'". Returns -1 to go
 * on, or 64. */
static int single_dash(int argc, char **argv, const struct option *longopts)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (takes_next(a, longopts)) {
            i++;
            continue;
        }
        if (a[0] != '-' || a[1] == '-' || a[1] == '\0')
            continue;
        size_t n = strcspn(a + 1, "=");
        for (const struct option *o = longopts; n >= 2 && o->name != NULL; o++)
            if (strlen(o->name) == n && strncmp(a + 1, o->name, n) == 0)
                return tkcall__usage_error(
                    "-%s: did you mean --%s? (tkcall's long options take "
                    "two dashes: see tkcall --help)",
                    o->name, o->name);
        int rv = tkcall__foreign_option(a);
        if (rv >= 0)
            return rv;
    }
    return -1;
}

/* Returns -1 to go on, or the status to exit with now. */
int tkcall__parse_args(tkcall *t, int argc, char **argv)
{
    t->tls = (tk_client_opts){ .tls_ca = getenv("TK_TLS_CA"),
                               .tls_cert = getenv("TK_TLS_CERT"),
                               .tls_key = getenv("TK_TLS_KEY") };
    static const struct option longopts[] = {
        { "addr", required_argument, NULL, 'a' },
        { "cacert", required_argument, NULL, OPT_CACERT },
        { "cert", required_argument, NULL, OPT_CERT },
        { "key", required_argument, NULL, OPT_KEY },
        { "timeout", required_argument, NULL, 't' },
        { "data", required_argument, NULL, 'd' },
        { "emit-defaults", no_argument, NULL, 'D' },
        { "proto-json", no_argument, NULL, OPT_PROTO_JSON },
        { "output", required_argument, NULL, 'o' },
        { "color", required_argument, NULL, OPT_COLOR },
        { "verbose", no_argument, NULL, 'v' },
        { "node", required_argument, NULL, OPT_NODE },
        { "retry-reads", no_argument, NULL, OPT_RETRY_READS },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *addr = NULL, *color = "auto";
    int c, rv;
    if ((rv = single_dash(argc, argv, longopts)) >= 0)
        return rv;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): argv is parsed in main, before any thread starts
    while ((c = getopt_long(argc, argv, "a:t:d:Do:vhV", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'a':
            addr = optarg;
            break;
        case OPT_CACERT:
            t->tls.tls_ca = optarg;
            break;
        case OPT_CERT:
            t->tls.tls_cert = optarg;
            break;
        case OPT_KEY:
            t->tls.tls_key = optarg;
            break;
        case 't':
            if (tkcall__parse_duration(&t->timeout_ms, optarg) != 0)
                return tkcall__usage_error(
                    "--timeout takes a duration such as "
                    "500ms, 30s, 1.5s, 2m, 1h or a number of "
                    "seconds, not \"%s\"",
                    optarg);
            break;
        case 'd':
            t->data = optarg;
            break;
        case 'o':
        case OPT_COLOR:
        case 'v':
        case 'D':
            if ((rv = output_option(t, c, optarg, &color)) >= 0)
                return rv;
            break;
        case OPT_PROTO_JSON:
            t->out.json_flags &= ~TK_JSON_BYTES_TEXT;
            break;
        case OPT_NODE:
            t->node = optarg;
            break;
        case OPT_RETRY_READS:
            t->retry_reads = true;
            break;
        case 'h':
            fputs(tkcall__usage_text, stdout);
            return TKCALL_EXIT_OK;
        case 'V':
            printf("tkcall %s\n", TK_VERSION);
            return TKCALL_EXIT_OK;
        default: /* getopt said what */
            return tkcall__usage_error("see tkcall --help");
        }
    }
    int n = addr != NULL
                ? snprintf(t->addr, sizeof t->addr, "%s", addr)
                : (tk_default_address(t->addr, sizeof t->addr) == 0 ? 0 : -1);
    if (n < 0 || (size_t)n >= sizeof t->addr || ipc_of_path(t->addr) != 0)
        return tkcall__usage_error("the address is too long");
    const char *tk_addr = getenv("TK_ADDR");
    if ((rv = check_schemes(t->addr, addr != NULL ? "--addr"
                                     : tk_addr != NULL && tk_addr[0] != '\0'
                                         ? "TK_ADDR"
                                         : "the default address")) >= 0)
        return rv;
    if ((rv = parse_color(t, color)) >= 0)
        return rv;
    tkcall_status_for_people(t->out.format == TKCALL_OUT_JSON ||
                             t->out.format == TKCALL_OUT_COMPACT);
    t->args = argv + optind;
    t->n_args = argc - optind;
    return -1;
}
