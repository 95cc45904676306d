/* SPDX-License-Identifier: MIT */
/* tkd's command line: each option parsed and checked into the options
 * main.c starts tkd with, the fleet's options checked together, and tkd
 * install's check of the options a unit will start tkd with. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "tkd_int.h"

static int parse_uint(const options *o, const char *flag, const char *s,
                      unsigned long long min, unsigned long long max,
                      unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min ||
        v > max) {
        fprintf(stderr,
                "%s: %s wants a whole number from %llu to %llu, not \"%s\"\n",
                o->who, flag, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int add_listen(const options *o, const char **list, size_t *n,
                      const char *url)
{
    if (*n == MAX_LISTEN) {
        fprintf(stderr, "%s: at most %d addresses of each --listen kind\n",
                o->who, MAX_LISTEN);
        return -1;
    }
    list[(*n)++] = url;
    return 0;
}

static int add_root(options *o, const char *dir)
{
    if (o->n_roots == MAX_ROOTS) {
        fprintf(stderr, "%s: at most %d --root directories\n", o->who,
                MAX_ROOTS);
        return -1;
    }
    o->root_args[o->n_roots++] = dir;
    return 0;
}

static int set_log_level(const options *o, const char *name)
{
    int level = obs_log_level_from_name(name);
    if (level < 0) {
        fprintf(stderr,
                "%s: --log-level is error, warn, info or debug, not \"%s\"\n",
                o->who, name);
        return -1;
    }
    if (!o->install_check) /* tkd install's own level stays */
        obs_log_set_level((obs_log_level)level);
    return 0;
}

static int set_log_format(const options *o, const char *name)
{
    int format = obs_log_format_from_name(name);
    if (format < 0) {
        fprintf(stderr, "%s: --log-format is text or json, not \"%s\"\n",
                o->who, name);
        return -1;
    }
    if (!o->install_check) /* tkd install's own lines stay text */
        obs_log_set_format((obs_log_format)format);
    return 0;
}

enum {
    OPT_LISTEN = 1000,
    OPT_LISTEN_RO,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_CA,
    OPT_PLAIN_TCP,
    OPT_MAXCONN,
    OPT_HANDSHAKE,
    OPT_ROOT,
    OPT_WORKERS,
    OPT_QUEUE,
    OPT_MAXREQ,
    OPT_GRACE,
    OPT_SEARCH_SLOTS,
    OPT_LOGLEVEL,
    OPT_LOGFORMAT,
    OPT_METRICS,
    OPT_METRICS_MAXCONN,
    OPT_METRICS_HEADER_TIMEOUT,
    OPT_METRICS_INTERVAL,
    OPT_PG,
    OPT_PG_POOL,
    OPT_NODE_ID,
    OPT_ADVERTISE,
    OPT_HEARTBEAT,
    OPT_NODE_TTL,
    OPT_HELP,
    OPT_VERSION,
};

/* The metrics listener's bounds: 0, or -1 on a usage error. */
static int apply_metrics_option(options *o, int c, const char *arg)
{
    unsigned long long v;
    switch (c) {
    case OPT_METRICS_MAXCONN:
        if (parse_uint(o, "--metrics-max-connections", arg, 1,
                       RPC_MAX_METRICS_CONNECTIONS, &v) != 0)
            return -1;
        o->rpc.metrics_max_connections = (unsigned)v;
        return 0;
    case OPT_METRICS_HEADER_TIMEOUT:
        if (parse_uint(o, "--metrics-header-timeout-ms", arg,
                       RPC_MIN_METRICS_HEADER_TIMEOUT_MS,
                       RPC_MAX_METRICS_HEADER_TIMEOUT_MS, &v) != 0)
            return -1;
        o->rpc.metrics_header_timeout_ms = (uint32_t)v;
        return 0;
    default:
        if (parse_uint(o, "--metrics-min-interval-ms", arg,
                       RPC_MIN_METRICS_MIN_INTERVAL_MS,
                       RPC_MAX_METRICS_MIN_INTERVAL_MS, &v) != 0)
            return -1;
        o->rpc.metrics_min_interval_ms = (uint32_t)v;
        return 0;
    }
}

/* One option c with its argument arg (NULL for a flag). Returns 0 to go
 * on, 1 to exit 0 (help/version), -1 on a usage error. */
static int apply_option(options *o, int c, const char *arg)
{
    unsigned long long v;
    switch (c) {
    case OPT_LISTEN:
        return add_listen(o, o->listen, &o->n_listen, arg);
    case OPT_LISTEN_RO:
        return add_listen(o, o->listen_ro, &o->n_listen_ro, arg);
    case OPT_TLS_CERT:
        o->rpc.tls_cert = arg;
        return 0;
    case OPT_TLS_KEY:
        o->rpc.tls_key = arg;
        return 0;
    case OPT_TLS_CA:
        o->rpc.tls_ca = arg;
        return 0;
    case OPT_PLAIN_TCP:
        o->rpc.allow_plain_tcp = true;
        return 0;
    case OPT_MAXCONN:
        if (parse_uint(o, "--max-connections", arg, 1, 65536, &v) != 0)
            return -1;
        o->rpc.max_connections = (unsigned)v;
        return 0;
    case OPT_HANDSHAKE:
        if (parse_uint(o, "--handshake-timeout-ms", arg, 1,
                       RPC_MAX_HANDSHAKE_TIMEOUT_MS, &v) != 0)
            return -1;
        o->rpc.handshake_timeout_ms = (uint32_t)v;
        return 0;
    case OPT_ROOT:
        return add_root(o, arg);
    case OPT_WORKERS:
        if (parse_uint(o, "--workers", arg, 1, 1024, &v) != 0)
            return -1;
        o->rpc.workers = (unsigned)v;
        return 0;
    case OPT_QUEUE:
        if (parse_uint(o, "--queue-depth", arg, 1, 65536, &v) != 0)
            return -1;
        o->rpc.queue_depth = (unsigned)v;
        return 0;
    case OPT_MAXREQ:
        if (parse_uint(o, "--max-request-bytes", arg, 64, 1ULL << 30, &v) != 0)
            return -1;
        o->rpc.max_request_bytes = (size_t)v;
        return 0;
    case OPT_GRACE:
        if (parse_uint(o, "--shutdown-grace-ms", arg, 0, 3600000, &v) != 0)
            return -1;
        o->rpc.shutdown_grace_ms = (uint32_t)v;
        return 0;
    case OPT_LOGLEVEL:
        return set_log_level(o, arg);
    case OPT_LOGFORMAT:
        return set_log_format(o, arg);
    case OPT_METRICS:
        o->rpc.metrics_listen = arg;
        return 0;
    case OPT_METRICS_MAXCONN:
    case OPT_METRICS_HEADER_TIMEOUT:
    case OPT_METRICS_INTERVAL:
        return apply_metrics_option(o, c, arg);
    case OPT_PG:
        o->orders.dsn = arg;
        return 0;
    case OPT_PG_POOL:
        if (parse_uint(o, "--pg-pool", arg, 1, ORDERS_MAX_POOL, &v) != 0)
            return -1;
        o->orders.pool_size = (unsigned)v;
        return 0;
    case OPT_NODE_ID:
        o->fleet.node_id = arg;
        return 0;
    case OPT_ADVERTISE:
        o->fleet.address = arg;
        return 0;
    case OPT_HEARTBEAT:
        if (parse_uint(o, "--heartbeat-ms", arg, FLEET_MIN_HEARTBEAT_MS,
                       FLEET_MAX_HEARTBEAT_MS, &v) != 0)
            return -1;
        o->fleet.heartbeat_ms = (uint32_t)v;
        return 0;
    case OPT_NODE_TTL:
        if (parse_uint(o, "--node-ttl-ms", arg, FLEET_MIN_HEARTBEAT_MS + 1,
                       UINT32_MAX / 2, &v) != 0)
            return -1;
        o->fleet.ttl_ms = (uint32_t)v;
        return 0;
    case OPT_SEARCH_SLOTS:
        if (parse_uint(o, "--search-slots", arg, 1, SEARCH_MAX_SLOTS, &v) != 0)
            return -1;
        o->search_slots = (unsigned)v;
        return 0;
    case OPT_HELP:
    case OPT_VERSION:
        if (o->install_check) {
            fprintf(stderr,
                    "%s: --help and --version are no options to "
                    "start tkd with\n",
                    o->who);
            return -1;
        }
        break;
    default:
        fprintf(stderr, "tkd --help lists the options\n");
        return -1;
    }
    if (c == OPT_HELP) {
        fputs(tkd__usage_text, stdout);
        return 1;
    }
    printf("tkd %s\n", TKD_VERSION);
    return 1;
}

/* Returns 0 to run, 1 to exit 0 (help/version), -1 on a usage error. */
int tkd__parse_args(options *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "listen-read-only", required_argument, NULL, OPT_LISTEN_RO },
        { "tls-cert", required_argument, NULL, OPT_TLS_CERT },
        { "tls-key", required_argument, NULL, OPT_TLS_KEY },
        { "tls-ca", required_argument, NULL, OPT_TLS_CA },
        { "insecure-plain-tcp", no_argument, NULL, OPT_PLAIN_TCP },
        { "max-connections", required_argument, NULL, OPT_MAXCONN },
        { "handshake-timeout-ms", required_argument, NULL, OPT_HANDSHAKE },
        { "root", required_argument, NULL, OPT_ROOT },
        { "workers", required_argument, NULL, OPT_WORKERS },
        { "queue-depth", required_argument, NULL, OPT_QUEUE },
        { "max-request-bytes", required_argument, NULL, OPT_MAXREQ },
        { "shutdown-grace-ms", required_argument, NULL, OPT_GRACE },
        { "search-slots", required_argument, NULL, OPT_SEARCH_SLOTS },
        { "log-level", required_argument, NULL, OPT_LOGLEVEL },
        { "log-format", required_argument, NULL, OPT_LOGFORMAT },
        { "metrics-listen", required_argument, NULL, OPT_METRICS },
        { "metrics-max-connections", required_argument, NULL,
          OPT_METRICS_MAXCONN },
        { "metrics-header-timeout-ms", required_argument, NULL,
          OPT_METRICS_HEADER_TIMEOUT },
        { "metrics-min-interval-ms", required_argument, NULL,
          OPT_METRICS_INTERVAL },
        { "pg", required_argument, NULL, OPT_PG },
        { "pg-pool", required_argument, NULL, OPT_PG_POOL },
        { "node-id", required_argument, NULL, OPT_NODE_ID },
        { "advertise", required_argument, NULL, OPT_ADVERTISE },
        { "heartbeat-ms", required_argument, NULL, OPT_HEARTBEAT },
        { "node-ttl-ms", required_argument, NULL, OPT_NODE_TTL },
        { "help", no_argument, NULL, OPT_HELP },
        { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
    };
    int c;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): argv is parsed in main, before any thread starts
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int rv = apply_option(o, c, optarg);
        if (rv != 0)
            return rv;
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\" (tkd --help)\n", o->who,
                argv[optind]);
        return -1;
    }
    return 0;
}

/* What is wrong with the fleet's options, in err: they go together,
 * --node-id with --pg (or TK_PG_DSN) and --advertise, and none of the
 * others without --node-id. false when nothing is. */
static bool fleet_problem(const options *o, char *err, size_t len)
{
    const fleet_config *f = &o->fleet;
    uint32_t beat =
        f->heartbeat_ms != 0 ? f->heartbeat_ms : FLEET_DEFAULT_HEARTBEAT_MS;
    if (f->node_id == NULL) {
        bool tuned = f->heartbeat_ms != 0 || f->ttl_ms != 0;
        if (f->address == NULL && !tuned)
            return false;
        snprintf(err, len,
                 "%s is for a node of a fleet: pass --node-id (and --pg) too",
                 f->address != NULL ? "--advertise"
                                    : "--heartbeat-ms/--node-ttl-ms");
        return true;
    }
    if (fleet_check_node_id(f->node_id, err, len) != 0)
        return true;
    if (f->address == NULL) {
        snprintf(err, len,
                 "--node-id needs --advertise tls+tcp://HOST:PORT, the "
                 "address clients dial to reach this node");
        return true;
    }
    if (fleet_check_advertise(f->address, o->rpc.allow_plain_tcp, err, len) !=
        0)
        return true;
    /* A unit may get TK_PG_DSN from its manager's environment. */
    if (!o->install_check &&
        (o->orders.dsn == NULL || o->orders.dsn[0] == '\0')) {
        snprintf(err, len,
                 "--node-id needs --pg DSN (or TK_PG_DSN): the fleet's table "
                 "is in the database of tk.v1.Orders");
        return true;
    }
    if (f->ttl_ms != 0 && f->ttl_ms <= beat) {
        snprintf(err, len,
                 "--node-ttl-ms (%u) must exceed the heartbeat "
                 "(--heartbeat-ms %u)",
                 f->ttl_ms, beat);
        return true;
    }
    return false;
}

/* The fleet's options checked (fleet_problem) and completed. 0 or -1
 * (said on stderr). */
int tkd__check_fleet(options *o)
{
    char err[256];
    if (fleet_problem(o, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", o->who, err);
        return -1;
    }
    o->fleet.dsn = o->orders.dsn;
    o->fleet.roots = o->roots;
    o->fleet.version = TKD_VERSION;
    return 0;
}

/* tkd install -- OPTION...: the options a unit will start tkd with,
 * checked as tkd checks them at start, so that a unit that would fail at
 * every start is not installed. Not what only the service's host can
 * tell then: the --root directories, TK_PG_DSN. 0 when they pass (or this
 * is no install), 2 with a message. */
int tkd__check_install(int argc, char **argv)
{
    int k = 2;
    if (argc < 2 || strcmp(argv[1], "install") != 0)
        return 0;
    while (k < argc && strcmp(argv[k], "--") != 0)
        k++;
    if (k >= argc)
        return 0;
    char **sub = calloc((size_t)(argc - k) + 1, sizeof *sub);
    if (sub == NULL)
        return 0; /* services_cli says what it cannot do */
    sub[0] = (char *)"tkd install";
    for (int i = k + 1; i < argc; i++)
        sub[i - k] = argv[i];
    options o;
    memset(&o, 0, sizeof o);
    o.who = "tkd install";
    o.install_check = true;
    rpc_config_init(&o.rpc);
    int rv = tkd__parse_args(&o, argc - k, sub);
    if (rv == 0)
        rv = tkd__check_fleet(&o);
    free(sub);
    return rv == 0 ? 0 : 2;
}
