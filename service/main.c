/* SPDX-License-Identifier: MIT */
/* tkd: the tk worker daemon. Parses the command line, prepares the default
 * socket directory, registers the services and serves until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control.h"
#include "fleet/fleet.h"
#include "git/git.h"
#include "orders/orders.h"
#include "common/common.h"
#include "proc/proc.h"
#include "services/services.h"
#include "roots/roots.h"
#include "rpc/rpc.h"
#include "search/search.h"

#ifndef TK_VERSION
#define TK_VERSION "0.0.0"
#endif

#define MAX_LISTEN 16
/* The exit status when calls outlived the shutdown grace (--help). */
#define EXIT_OUTLIVED 3
#define MAX_ROOTS 64

static const char usage_text[] =
    "usage: tkd [options]\n"
    "       tkd install|uninstall ...   (tkd install --help)\n"
    "\n"
    "The tk worker daemon: serves tk.v1.* calls (protobuf over NNG REQ/REP).\n"
    "\n"
    "options:\n"
    "  --listen URL            where to listen (repeatable): ipc://PATH,\n"
    "                          or tls+tcp://HOST:PORT with the three --tls\n"
    "                          options; default ipc://$XDG_RUNTIME_DIR/tk/\n"
    "                          tkd.sock, or ipc:///tmp/tk-$UID/tkd.sock\n"
    "                          without it; TK_ADDR overrides the default\n"
    "  --listen-read-only URL  as --listen, serving READ methods only: a\n"
    "                          WRITE there is PERMISSION_DENIED before it\n"
    "                          runs (repeatable; without --listen, tkd\n"
    "                          also listens on its default socket)\n"
    "  --tls-cert FILE         tkd's certificate (PEM) for tls+tcp://\n"
    "  --tls-key FILE          its private key (PEM)\n"
    "  --tls-ca FILE           the CA (PEM) that must have signed every\n"
    "                          client's certificate: a client without one\n"
    "                          is refused in the handshake (logged)\n"
    "  --insecure-plain-tcp    allow tcp:// listeners, which authenticate\n"
    "                          no one (a lab only; warned at every start)\n"
    "  --max-connections N     connections at once on each listener, those\n"
    "                          in their handshake included; more are\n"
    "                          closed as they come (logged). Default: 128,\n"
    "                          or the listener's part of the file\n"
    "                          descriptors when that is less (below); N is\n"
    "                          taken as given, warned where it is more\n"
    "  --handshake-timeout-ms N\n"
    "                          how long a connection may take over its\n"
    "                          handshake (TLS's, then NNG's) before it is\n"
    "                          closed and counted (logged at most once a\n"
    "                          second a listener; default 5000, 1 to\n"
    "                          600000)\n"
    "  --root DIR              a directory that repository and search paths\n"
    "                          must resolve into (repeatable)\n"
    "  --workers N             threads running calls at most, started as\n"
    "                          calls need them (default 16)\n"
    "  --queue-depth N         calls waiting for a worker before callers get\n"
    "                          RESOURCE_EXHAUSTED (default 64)\n"
    "  --max-request-bytes N   largest request frame (default 1048576); a\n"
    "                          larger one closes that connection. Frames\n"
    "                          still arriving hold at most N times a\n"
    "                          listener's connections bytes\n"
    "  --shutdown-grace-ms N   how long SIGTERM waits for running writes\n"
    "                          (default 60000)\n"
    "  --search-slots N        searches running at once; more wait\n"
    "                          (default 3)\n"
    "  --log-level L           error, warn, info (default; one line per\n"
    "                          call) or debug\n"
    "  --log-format F          text (default) or json: one JSON object a\n"
    "                          line (time, level, msg; a call's line: method,\n"
    "                          call_id, peer, code, reason, elapsed_us,\n"
    "                          cause). Under systemd, each line starts with\n"
    "                          the priority journald reads (\"<6>\": info)\n"
    "  --metrics-listen URL    serve the metrics (calls by method and code,\n"
    "                          latency, queue, processes, search slots, the\n"
    "                          database pool; tk.v1.Control/Stats has the\n"
    "                          same) to Prometheus: http://HOST:PORT, at\n"
    "                          /metrics. Off by default; it answers anyone\n"
    "                          who reaches the port, so keep it on\n"
    "                          127.0.0.1 or a network only the scraper\n"
    "                          reaches (any other address is warned of at\n"
    "                          start)\n"
    "  --metrics-max-connections N\n"
    "                          connections to it at once (default 8, or its\n"
    "                          part of the descriptors if smaller: below);\n"
    "                          more are closed as they come (counted,\n"
    "                          logged)\n"
    "  --metrics-header-timeout-ms N\n"
    "                          a connection to it that has not sent its\n"
    "                          request headers within N ms, or not taken\n"
    "                          its answer within N ms more, is closed\n"
    "                          (counted, logged; default 5000)\n"
    "  --metrics-min-interval-ms N\n"
    "                          render the metrics at most once in N ms\n"
    "                          (default 1000): a scrape that comes sooner\n"
    "                          waits for the next rendering, which answers\n"
    "                          every scrape waiting\n"
    "  --pg DSN                the PostgreSQL database of tk.v1.Orders (a\n"
    "                          libpq connection string or URI); TK_PG_DSN\n"
    "                          when not given (better for a password: a\n"
    "                          command line is public). Without one, Orders\n"
    "                          calls answer UNAVAILABLE\n"
    "  --pg-pool N             database connections at most (default 8)\n"
    "  --node-id ID            make this tkd a node of a fleet, named ID (1\n"
    "                          to 64 of A-Z a-z 0-9 . _ -, unique in the\n"
    "                          fleet): it keeps a row of the table tk_nodes\n"
    "                          in the --pg database (its address, roots,\n"
    "                          version, a heartbeat), and tk.v1.Control/\n"
    "                          ListNodes answers the live rows. Needs --pg\n"
    "                          (or TK_PG_DSN) and --advertise. An id whose\n"
    "                          row another live tkd holds is refused (exit\n"
    "                          2). On SIGTERM the row says draining; it is\n"
    "                          deleted when tkd exits\n"
    "  --advertise URL         the address clients dial to reach this node:\n"
    "                          tls+tcp://HOST:PORT (tcp://HOST:PORT only\n"
    "                          with --insecure-plain-tcp); needs --node-id\n"
    "  --heartbeat-ms N        how often the row is refreshed and the table\n"
    "                          read (default 2000, 100 to 60000)\n"
    "  --node-ttl-ms N         a node whose heartbeat is older is out of the\n"
    "                          fleet; ListNodes answers UNAVAILABLE\n"
    "                          MEMBERSHIP_STALE when this tkd could not read\n"
    "                          the table for as long (default 3 heartbeats;\n"
    "                          more than one)\n"
    "  --help                  this text\n"
    "  --version               the version\n"
    "\n"
    "ipc sockets are created 0600. The default socket's directory is\n"
    "created 0700, and refused if another uid owns it or others may enter\n"
    "it; the directory of a --listen or TK_ADDR path is used as it is. A\n"
    "peer whose uid differs from tkd's gets PERMISSION_DENIED. tcp:// is\n"
    "refused (it authenticates no one): use tls+tcp:// with client\n"
    "certificates (docs/tkd.md: Calling tkd over the network).\n"
    "At start tkd raises its soft file-descriptor limit to the hard limit.\n"
    "Of the descriptors free after start-up, half are kept for the calls'\n"
    "work (git, the search tools, libgit2, PostgreSQL); the listeners share\n"
    "the rest, the ipc ones half and the network ones (and\n"
    "--metrics-listen) half, or a kind alone all, in equal parts: so a\n"
    "flood on one listener, read-only or not, leaves the others and the\n"
    "work their own. The log says the split, and each listener's limit. A\n"
    "call that finds no descriptor left ends RESOURCE_EXHAUSTED\n"
    "TOO_MANY_OPEN_FILES, with retry_after_ms. After a burst (of\n"
    "connections, handshakes, large frames) tkd gives the memory it freed\n"
    "back to the system (malloc_trim; logged).\n"
    "SIGTERM or SIGINT: stop accepting, cancel reads, let started writes\n"
    "finish (up to --shutdown-grace-ms), exit 0. Writes still running when\n"
    "the grace runs out are logged (method, call, pid) and stopped: their\n"
    "process groups get SIGTERM, then SIGKILL, and their callers\n"
    "UNAVAILABLE SHUTTING_DOWN with write_completed false; then tkd exits\n"
    "3. A second signal exits at once (status 130).\n"
    "\n"
    "exit status: 0 after a clean shutdown; 1 tkd could not start; 2 usage\n"
    "error, or a --node-id another live tkd holds;\n"
    "3 calls outlived --shutdown-grace-ms (the log names them); 130 a\n"
    "second signal.\n";

typedef struct options {
    /* Who says what is wrong: "tkd", or "tkd install" checking the options
     * a unit will start tkd with. */
    const char *who;
    bool install_check;
    const char *listen[MAX_LISTEN];
    size_t n_listen;
    const char *listen_ro[MAX_LISTEN];
    size_t n_listen_ro;
    const char *root_args[MAX_ROOTS];
    size_t n_roots;
    roots *roots;
    rpc_config rpc;
    orders_config orders;
    fleet_config fleet;
    unsigned search_slots;
    char default_addr[PATH_MAX + 8];
} options;

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
    int level = rpc_log_level_from_name(name);
    if (level < 0) {
        fprintf(stderr,
                "%s: --log-level is error, warn, info or debug, not \"%s\"\n",
                o->who, name);
        return -1;
    }
    if (!o->install_check) /* tkd install's own level stays */
        rpc_log_set_level((rpc_log_level)level);
    return 0;
}

static int set_log_format(const options *o, const char *name)
{
    int format = rpc_log_format_from_name(name);
    if (format < 0) {
        fprintf(stderr, "%s: --log-format is text or json, not \"%s\"\n",
                o->who, name);
        return -1;
    }
    if (!o->install_check) /* tkd install's own lines stay text */
        rpc_log_set_format((rpc_log_format)format);
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
        fputs(usage_text, stdout);
        return 1;
    }
    printf("tkd %s\n", TK_VERSION);
    return 1;
}

/* Returns 0 to run, 1 to exit 0 (help/version), -1 on a usage error. */
static int parse_args(options *o, int argc, char **argv)
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
static int check_fleet(options *o)
{
    char err[256];
    if (fleet_problem(o, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", o->who, err);
        return -1;
    }
    o->fleet.dsn = o->orders.dsn;
    o->fleet.roots = o->roots;
    o->fleet.version = TK_VERSION;
    return 0;
}

/* tkd install -- OPTION...: the options a unit will start tkd with,
 * checked as tkd checks them at start, so that a unit that would fail at
 * every start is not installed. Not what only the service's host can
 * tell then: the --root directories, TK_PG_DSN. 0 when they pass (or this
 * is no install), 2 with a message. */
static int check_install(int argc, char **argv)
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
    int rv = parse_args(&o, argc - k, sub);
    if (rv == 0)
        rv = check_fleet(&o);
    free(sub);
    return rv == 0 ? 0 : 2;
}

/* The default socket's directory: created 0700, and refused when someone
 * else owns it or others may enter it. */
static int prepare_socket_dir(const char *url)
{
    if (strncmp(url, "ipc://", 6) != 0)
        return 0;
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s", url + 6);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        char ebuf[128];
        fprintf(stderr, "tkd: cannot create %s: %s\n", dir,
                tkc_strerror(errno, ebuf, sizeof ebuf));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tkd: %s is not a directory\n", dir);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        fprintf(stderr,
                "tkd: %s must be a 0700 directory owned by uid %u; fix it "
                "or pass --listen\n",
                dir, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

/* --listen, or the default address (whose directory tkd prepares). */
static int set_listen(options *o)
{
    if (o->n_listen == 0) {
        if (tkc_default_address(o->default_addr, sizeof o->default_addr) != 0) {
            fprintf(stderr, "tkd: the default socket path is too long; "
                            "pass --listen\n");
            return -1;
        }
        const char *env_addr = getenv("TK_ADDR");
        bool from_env = env_addr != NULL && env_addr[0] != '\0';
        if (!from_env && prepare_socket_dir(o->default_addr) != 0)
            return -1;
        o->listen[o->n_listen++] = o->default_addr;
    }
    o->rpc.listen = o->listen;
    o->rpc.n_listen = o->n_listen;
    o->rpc.listen_read_only = o->listen_ro;
    o->rpc.n_listen_read_only = o->n_listen_ro;
    return 0;
}

/* tkd's server and its services; all NULL is none made yet. */
typedef struct tkd_daemon {
    rpc_server *srv;
    orders *ord;
    tkgit *git;
    services *reg;
    search *srch;
    fleet *fl;          /* NULL: no member of a fleet */
    bool node_id_taken; /* fleet_join refused the id */
} tkd_daemon;

/* Makes the server and each service, registers them, and starts serving:
 * 0, or non-zero with err set (what was made is in d, for daemon_free). */
static int daemon_start(tkd_daemon *d, options *o, char *err, size_t errlen)
{
    search_config scfg = { .roots = o->roots, .slots = o->search_slots };
    int rv = rpc_server_new(&d->srv, &o->rpc, err, errlen);
    if (rv == 0)
        rv = control_register(d->srv, err, errlen);
    if (rv == 0)
        rv = orders_new(&d->ord, &o->orders, err, errlen);
    if (rv == 0)
        rv = orders_register(d->ord, d->srv, err, errlen);
    if (rv == 0)
        rv = tkgit_new(&d->git, o->roots, NULL, err, errlen);
    if (rv == 0)
        rv = tkgit_register(d->git, d->srv, err, errlen);
    if (rv == 0)
        rv = services_new(&d->reg, NULL, err, errlen);
    if (rv == 0)
        rv = services_register(d->reg, d->srv, err, errlen);
    if (rv == 0)
        rv = search_new(&d->srch, &scfg, err, errlen);
    if (rv == 0)
        rv = search_register(d->srch, d->srv, err, errlen);
    /* Joined before the listeners: an id another tkd holds stops tkd
     * before it serves anything. */
    if (rv == 0 && o->fleet.node_id != NULL) {
        rv = fleet_new(&d->fl, &o->fleet, err, errlen);
        if (rv == 0)
            rv = fleet_join(d->fl, err, errlen);
        d->node_id_taken = rv == -EEXIST;
        if (rv == 0)
            fleet_register(d->fl, d->srv);
    }
    if (rv == 0)
        rv = rpc_server_start(d->srv, err, errlen);
    if (rv == 0 && d->fl != NULL)
        rv = fleet_start(d->fl, err, errlen);
    return rv;
}

static void daemon_free(tkd_daemon *d)
{
    /* The server first: no call runs in a service once it is freed. */
    rpc_server_free(d->srv);
    orders_free(d->ord);
    tkgit_free(d->git);
    services_free(d->reg);
    search_free(d->srch);
    /* After the server: no ListNodes runs; its row is deleted last. */
    fleet_free(d->fl);
}

static void log_serving(const tkd_daemon *d, const options *o)
{
    for (size_t i = 0; rpc_server_bound_url(d->srv, i) != NULL; i++)
        rpc_log(RPC_LOG_INFO,
                "tkd %s listening on %s%s (%u connections at most)", TK_VERSION,
                rpc_server_bound_url(d->srv, i),
                i >= o->n_listen ? " (reads only)" : "",
                rpc_server_listener_limit(d->srv, i));
    if (rpc_server_metrics_url(d->srv) != NULL)
        rpc_log(RPC_LOG_INFO,
                "metrics for Prometheus at %s (%u connections at most)",
                rpc_server_metrics_url(d->srv),
                rpc_server_metrics_limit(d->srv));
    for (size_t i = 0; i < roots_count(o->roots); i++)
        rpc_log(RPC_LOG_INFO, "root %s", roots_get(o->roots, i));
    rpc_fd_log_capacity(d->srv);
}

int main(int argc, char **argv)
{
    /* The environment every child starts from, before any thread exists. */
    proc_init();
    if (check_install(argc, argv) != 0)
        return 2;
    int cli = services_cli(argc, argv); /* tkd install, tkd uninstall */
    if (cli >= 0)
        return cli;
    /* Before any thread exists, so every thread inherits the mask. */
    if (rpc_block_stop_signals() != 0) {
        fprintf(stderr, "tkd: cannot block signals\n");
        return 1;
    }
    options o;
    memset(&o, 0, sizeof o);
    o.who = "tkd";
    rpc_config_init(&o.rpc);
    o.rpc.version = TK_VERSION;
    int rv = parse_args(&o, argc, argv);
    if (rv != 0)
        return rv > 0 ? 0 : 2;
    if (o.orders.dsn == NULL)
        o.orders.dsn = getenv("TK_PG_DSN");
    /* An idle tkd holds no database connection, nor libpq (pq/): the
     * first Orders call connects (DESIGN.md, "Start-up and idle"). */
    o.orders.connect_on_first_call = true;
    char err[512] = "";
    if (roots_new(&o.roots, o.root_args, o.n_roots, err, sizeof err) != 0) {
        fprintf(stderr, "tkd: %s\n", err);
        return 2;
    }
    int status = 1;
    tkd_daemon d = { 0 };
    if (check_fleet(&o) != 0) {
        status = 2;
        goto done;
    }
    if (set_listen(&o) != 0)
        goto done;
    /* Before any thread exists (it forks), and before the listeners
     * open: the guard keeps no descriptor of tkd's. */
    if ((rv = proc_guard_start()) != 0) {
        char ebuf[128];
        fprintf(stderr, "tkd: cannot start the guard of READs' processes: %s\n",
                tkc_strerror(-rv, ebuf, sizeof ebuf));
        goto done;
    }
    /* Before anything opens descriptors: every connection, tool and
     * repository takes some, and the soft limit is often far below the
     * hard one (256 or 1024). */
    rpc_fd_limit_raise();
    if (daemon_start(&d, &o, err, sizeof err) != 0) {
        fprintf(stderr, "tkd: %s\n", err);
        if (d.node_id_taken)
            status = 2;
        goto done;
    }
    log_serving(&d, &o);
    /* After the listener: says whether a database is configured; the
     * first Orders call connects to it. */
    orders_start(d.ord);
    rv = rpc_serve_until_signal(d.srv);
    status = rv == 0 ? 0 : rv > 0 ? EXIT_OUTLIVED : 1;
done:
    daemon_free(&d);
    roots_free(o.roots);
    return status;
}
