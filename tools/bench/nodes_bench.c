/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/nodes: tk on several nodes against one PostgreSQL, in one
 * run (DESIGN.md "Scaling out"):
 *   - tk.v1.Orders/AddItem throughput with 1, 2 and 3 tkd, many callers
 *     spread over the nodes (caller c calls node c % N), each on an order
 *     of its own (no row contention: this measures the nodes, not a lock);
 *     and, as a control, one tkd whose pool is the N nodes' pools together
 *     (as many database connections at work as N nodes have), so that
 *     what more nodes change can be told from what more connections do;
 *   - tk.v1.Git/RevParse routed (a client in fleet mode, bootstrapped
 *     from node n1, routing by the repository's path to n1, the one node
 *     whose root holds it) against direct (a client dialing one tkd that
 *     is no member, on the same root: single mode, one connection).
 *
 *   bench-nodes --tkd PATH --dsn DSN --dir DIR [--nodes N] [--callers C]
 *               [--seconds S] [--rounds R] [--calls K] [--pg-pool P]
 *               [--members 0|1] [--only add|revparse] [--pg-pid PID]
 *
 * DIR (made by tools/bench/nodes) holds ca.pem, node.pem/node.key (the
 * nodes' certificate, for 127.0.0.1), client.pem/client.key, root1/repo
 * (a git repository), root2 and root3; the nodes' logs go there. Every
 * tkd listens on tls+tcp://127.0.0.1 (mutual TLS, as a fleet does); with
 * --members 1 (tools/bench/nodes passes it when tkd knows --node-id) they
 * are nodes n1..nN of one fleet, started with --node-id and --advertise.
 *
 * Rounds: each round measures 1, 2, ... N nodes (the order rotated from
 * round to round, so drift of the machine hits all), then a routed and a
 * direct RevParse series (the order alternated). The median round of each
 * is reported, and the ratios: throughput with N nodes / with 1, and
 * routed / direct p50 RevParse. Output is markdown; tools/bench/nodes-plot
 * draws the scaling curve from the "AddItem by nodes" table.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tk/client.h>

#include "bench.h"
#include "measure.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/git.tk.h"
#include "tk/v1/orders.tk.h"

#define MAX_NODES 3
#define MAX_CALLERS 96
/* Latencies a caller keeps per round; calls past it are counted only. */
#define MAX_SAMPLES 200000

/* Prints why and ends the benchmark, from any thread; the nodes it
 * started are killed (they are in its process group only if the script
 * made one, so by pid). */
static pid_t started[MAX_NODES + 1];

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt,
                                                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench-nodes: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    for (int i = 0; i <= MAX_NODES; i++)
        if (started[i] > 0)
            kill(started[i], SIGKILL);
    (void)fflush(stdout);
    _exit(1);
}

typedef struct bench_opts {
    const char *tkd, *dsn, *dir;
    int nodes, callers, rounds, calls, pg_pool, members;
    const char *only; /* "add" or "revparse": that part alone */
    long pg_pid;      /* the postmaster: its CPU time is PostgreSQL's */
    double seconds;
} bench_opts;

static bench_opts opt = { .nodes = 3,
                          .callers = 24,
                          .rounds = 5,
                          .calls = 2000,
                          .pg_pool = 8,
                          .seconds = 3 };

/* ---- the nodes ------------------------------------------------------------
 */

typedef struct node {
    char id[16];  /* n1.. ; "direct" for the tkd that is no member */
    char url[64]; /* tls+tcp://127.0.0.1:PORT */
    pid_t pid;
} node;

static node nodes[MAX_NODES];
static node direct;
static tk_client_opts tls;
static char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
static char client_cert[PATH_MAX], client_key[PATH_MAX];

/* A port nothing listens on now (bound and released: the tkd that gets
 * it binds it within milliseconds, on a machine running nothing else). */
static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        die("no free port (errno %d)", errno);
    close(s);
    return ntohs(a.sin_port);
}

/* Starts tkd as node n (its root: DIR/root<root>, a pool of pool_size);
 * its output goes to DIR/<id>.log. */
static void start_node(node *n, int slot, int root, int pool_size, bool member)
{
    if (opt.tkd == NULL)
        die("no --tkd");
    snprintf(n->url, sizeof n->url, "tls+tcp://127.0.0.1:%d", free_port());
    char rootdir[PATH_MAX], log[PATH_MAX], pool[16];
    snprintf(rootdir, sizeof rootdir, "%s/root%d", opt.dir, root);
    snprintf(log, sizeof log, "%s/%s.log", opt.dir, n->id);
    snprintf(pool, sizeof pool, "%d", pool_size);
    const char *argv[32] = { opt.tkd, "--listen",  n->url,  "--tls-cert",
                             cert,    "--tls-key", key,     "--tls-ca",
                             ca,      "--pg",      opt.dsn, "--pg-pool",
                             pool,    "--root",    rootdir, "--log-level",
                             "warn" };
    int argc = 17;
    if (member) {
        argv[argc++] = "--node-id";
        argv[argc++] = n->id;
        argv[argc++] = "--advertise";
        argv[argc++] = n->url;
    }
    argv[argc] = NULL;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        die("cannot open %s", log);
    n->pid = bench_spawn_err(argv, NULL, -1, fd, fd, NULL);
    close(fd);
    if (n->pid < 0)
        die("cannot start %s (error %d)", opt.tkd, errno);
    started[slot] = n->pid;
}

/* A client of url (mutual TLS with the client's certificate). */
static tk_client *dial(const char *url)
{
    tk_client *c = NULL;
    char err[256] = "";
    if (tk_client_open_opts(&c, url, &tls, err, sizeof err) != TK_OK)
        return NULL;
    return c;
}

/* Waits until n answers a Ping (10 s at most: a benchmark, unlike a test,
 * may poll for readiness). */
static void wait_up(const node *n)
{
    for (int i = 0; i < 1000; i++) {
        tk_client *c = dial(n->url);
        if (c != NULL) {
            Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
            Tk__V1__PingReply *rep = NULL;
            tk_status st;
            int code = tk_control_ping(c, &req, &rep, NULL, &st);
            if (code == TK_OK)
                protobuf_c_message_free_unpacked(&rep->base, NULL);
            tk_status_clear(&st);
            tk_client_close(c);
            if (code == TK_OK)
                return;
        }
        struct timespec ms = { 0, 10000000 };
        nanosleep(&ms, NULL);
    }
    die("%s did not come up at %s (its log: %s/%s.log)", n->id, n->url, opt.dir,
        n->id);
}

/* Members: waits until n1's ListNodes shows all of them (20 s at most). */
static void wait_fleet(void)
{
    tk_client *c = dial(nodes[0].url);
    if (c == NULL)
        die("cannot dial %s", nodes[0].url);
    size_t seen = 0;
    for (int i = 0; i < 2000 && seen < (size_t)opt.nodes; i++) {
        Tk__V1__ListNodesRequest req = TK__V1__LIST_NODES_REQUEST__INIT;
        Tk__V1__ListNodesReply *rep = NULL;
        tk_status st;
        if (tk_control_list_nodes(c, &req, &rep, NULL, &st) == TK_OK) {
            seen = rep->n_nodes;
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        }
        tk_status_clear(&st);
        struct timespec ms = { 0, 10000000 };
        if (seen < (size_t)opt.nodes)
            nanosleep(&ms, NULL);
    }
    tk_client_close(c);
    if (seen < (size_t)opt.nodes)
        die("ListNodes on n1 shows %zu nodes, not %d", seen, opt.nodes);
}

static void stop_node(node *n)
{
    if (n->pid <= 0)
        return;
    kill(n->pid, SIGTERM);
    int st;
    waitpid(n->pid, &st, 0);
    n->pid = 0;
}

/* ---- AddItem across nodes -------------------------------------------------
 */

typedef struct caller {
    /* One connection to each node, and [nodes] to the tkd that is no
     * member */
    tk_client *client[MAX_NODES + 1];
    int64_t order_id;
    /* this round's */
    int node;
    long long *lat_ns;
    long long n_ok, n_err;
    long long last_end_ns;
    pthread_t thread;
} caller;

static caller callers[MAX_CALLERS];
static pthread_barrier_t go;
static long long round_start_ns, round_end_ns;

static int add_item(caller *c)
{
    Tk__V1__AddItemRequest req = TK__V1__ADD_ITEM_REQUEST__INIT;
    Tk__V1__AddItemReply *rep = NULL;
    req.order_id = c->order_id;
    req.sku = "SKU-BENCH";
    tk_status st;
    /* Members: the client of node k is in fleet mode, whose Orders calls
     * go round robin over every live node; naming the node keeps caller c
     * on node c % N (the N of this round) with all nodes running. */
    bool member = opt.members && c->node < opt.nodes;
    tk_call_opts o = { .timeout_ms = 10000,
                       .node = member ? nodes[c->node].id : NULL };
    int code = tk_orders_add_item(c->client[c->node], &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code;
}

static void *caller_main(void *arg)
{
    caller *c = arg;
    pthread_barrier_wait(&go);
    long long now = bench_now_ns();
    while (now < round_end_ns) {
        long long t0 = now;
        int code = add_item(c);
        now = bench_now_ns();
        if (code != TK_OK) {
            c->n_err++;
            continue;
        }
        if (c->n_ok < MAX_SAMPLES)
            c->lat_ns[c->n_ok] = now - t0;
        c->n_ok++;
    }
    c->last_end_ns = now;
    return NULL;
}

typedef struct add_result {
    double per_s, p50_us, p99_us;
    long long errors;
    /* Shares of the machine's CPU time in the round, in %: all of it
     * busy, the tkd nodes', this process's (the callers: the client
     * side), PostgreSQL's (--pg-pid and its children), and the rest:
     * what else ran on the machine */
    double busy, tkd, client, pg, other;
} add_result;

/* CPU time so far, in clock ticks: the machine's busy and total (the
 * first line of /proc/stat), the nodes' (their /proc/PID/stat utime +
 * stime), this process's and PostgreSQL's. Linux only; zeros where
 * unreadable. */
typedef struct cpu_ticks {
    unsigned long long busy, total, tkd, self, pg;
} cpu_ticks;

/* The i-th (from 0) of the blank-separated words of s, as a number; 0
 * when there are fewer. */
static unsigned long long nth_word(const char *s, int i)
{
    for (;;) {
        while (*s == ' ')
            s++;
        if (*s == '\0' || *s == '\n')
            return 0;
        if (i-- == 0)
            return strtoull(s, NULL, 10);
        while (*s != ' ' && *s != '\0')
            s++;
    }
}

/* The CPU time of process pid (utime + stime); its parent's pid into
 * *ppid when ppid is not NULL. */
static unsigned long long proc_ticks_ppid(pid_t pid, pid_t *ppid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    /* after "pid (comm)": state is field 3, ppid 4, utime 14, stime 15 */
    const char *p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    if (ppid != NULL)
        *ppid = (pid_t)nth_word(p + 1, 1);
    return nth_word(p + 1, 11) + nth_word(p + 1, 12);
}

static unsigned long long proc_ticks(pid_t pid)
{
    return proc_ticks_ppid(pid, NULL);
}

/* The postmaster's and its children's (the backends, the background
 * processes): every process is read once. */
static unsigned long long pg_ticks(void)
{
    if (opt.pg_pid <= 0)
        return 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    unsigned long long sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        pid_t ppid = 0;
        unsigned long long t = proc_ticks_ppid((pid_t)pid, &ppid);
        if (pid == opt.pg_pid || ppid == opt.pg_pid)
            sum += t;
    }
    closedir(d);
    return sum;
}

static cpu_ticks cpu_now(void)
{
    cpu_ticks t = { 0 };
    FILE *f = fopen("/proc/stat", "re");
    char line[512];
    if (f != NULL) {
        /* "cpu user nice system idle iowait irq softirq steal ..." */
        if (fgets(line, sizeof line, f) != NULL &&
            strncmp(line, "cpu ", 4) == 0) {
            unsigned long long v[8];
            for (int i = 0; i < 8; i++)
                t.total += v[i] = nth_word(line + 4, i);
            t.busy = t.total - v[3] - v[4]; /* less idle and iowait */
        }
        (void)fclose(f);
    }
    for (int k = 0; k < opt.nodes; k++)
        t.tkd += proc_ticks(nodes[k].pid);
    t.tkd += proc_ticks(direct.pid);
    t.self = proc_ticks(getpid());
    t.pg = pg_ticks();
    return t;
}

/* A round on n_nodes nodes; 0: on the tkd that is no member alone. */
static add_result add_round(int n_nodes)
{
    for (int i = 0; i < opt.callers; i++) {
        caller *c = &callers[i];
        c->node = n_nodes > 0 ? i % n_nodes : opt.nodes;
        c->n_ok = c->n_err = 0;
    }
    if (pthread_barrier_init(&go, NULL, (unsigned)opt.callers + 1) != 0)
        die("barrier");
    for (int i = 0; i < opt.callers; i++)
        if (pthread_create(&callers[i].thread, NULL, caller_main,
                           &callers[i]) != 0)
            die("cannot start a caller");
    cpu_ticks c0 = cpu_now();
    round_start_ns = bench_now_ns();
    round_end_ns = round_start_ns + (long long)(opt.seconds * 1e9);
    pthread_barrier_wait(&go);
    long long last = round_start_ns, ok = 0, kept = 0;
    add_result r = { 0 };
    for (int i = 0; i < opt.callers; i++) {
        pthread_join(callers[i].thread, NULL);
        if (callers[i].last_end_ns > last)
            last = callers[i].last_end_ns;
        ok += callers[i].n_ok;
        r.errors += callers[i].n_err;
        kept += callers[i].n_ok < MAX_SAMPLES ? callers[i].n_ok : MAX_SAMPLES;
    }
    pthread_barrier_destroy(&go);
    cpu_ticks c1 = cpu_now();
    double total = (double)(c1.total - c0.total);
    if (total > 0) {
        r.busy = 100.0 * (double)(c1.busy - c0.busy) / total;
        r.tkd = 100.0 * (double)(c1.tkd - c0.tkd) / total;
        r.client = 100.0 * (double)(c1.self - c0.self) / total;
        r.pg = 100.0 * (double)(c1.pg - c0.pg) / total;
        r.other = r.busy - r.tkd - r.client - r.pg;
    }
    long long *all = malloc((size_t)(kept > 0 ? kept : 1) * sizeof *all);
    if (all == NULL)
        die("out of memory");
    long long k = 0;
    for (int i = 0; i < opt.callers; i++) {
        long long n =
            callers[i].n_ok < MAX_SAMPLES ? callers[i].n_ok : MAX_SAMPLES;
        memcpy(all + k, callers[i].lat_ns, (size_t)n * sizeof *all);
        k += n;
    }
    qsort(all, (size_t)kept, sizeof *all, bench_cmp_ll);
    r.per_s = (double)ok / ((double)(last - round_start_ns) / 1e9);
    if (kept > 0) {
        long long p50 = all[kept / 2], p99 = all[kept * 99 / 100];
        r.p50_us = (double)p50 / 1e3;
        r.p99_us = (double)p99 / 1e3;
    }
    free(all);
    return r;
}

static void setup_callers(void)
{
    for (int i = 0; i < opt.callers; i++) {
        caller *c = &callers[i];
        c->lat_ns = malloc(MAX_SAMPLES * sizeof *c->lat_ns);
        if (c->lat_ns == NULL)
            die("out of memory");
        for (int k = 0; k <= opt.nodes; k++) {
            const node *n = k < opt.nodes ? &nodes[k] : &direct;
            if ((c->client[k] = dial(n->url)) == NULL)
                die("cannot dial %s", n->url);
        }
        Tk__V1__CreateOrderRequest req = TK__V1__CREATE_ORDER_REQUEST__INIT;
        Tk__V1__CreateOrderReply *rep = NULL;
        tk_status st;
        tk_call_opts o = { .timeout_ms = 10000 };
        if (tk_orders_create_order(c->client[0], &req, &rep, &o, &st) != TK_OK)
            die("CreateOrder: %s %s: %s", tk_code_name(st.code), st.reason,
                st.message);
        c->order_id = rep->id;
        protobuf_c_message_free_unpacked(&rep->base, NULL);
        tk_status_clear(&st);
    }
}

/* ---- RevParse routed and direct ------------------------------------------
 */

static char repo[PATH_MAX];

/* One RevParse HEAD; the node that carried it (tk_status.node) into via,
 * when via is not NULL. */
static int rev_parse(tk_client *c, char via[16])
{
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = repo;
    req.rev = "HEAD";
    Tk__V1__GitRevParseReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_git_rev_parse(c, &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    else
        die("RevParse %s: %s %s: %s", repo, tk_code_name(code), st.reason,
            st.message);
    if (via != NULL)
        snprintf(via, 16, "%s", st.node != NULL ? st.node : "");
    tk_status_clear(&st);
    return code;
}

typedef struct rp_result {
    double p50_us, p99_us, mean_us;
} rp_result;

/* opt.calls RevParse calls one after another from one caller. */
static rp_result rp_round(tk_client *c, long long *lat)
{
    long long sum = 0;
    for (int i = 0; i < opt.calls; i++) {
        long long t0 = bench_now_ns();
        rev_parse(c, NULL);
        lat[i] = bench_now_ns() - t0;
        sum += lat[i];
    }
    qsort(lat, (size_t)opt.calls, sizeof *lat, bench_cmp_ll);
    long long p50 = lat[opt.calls / 2], p99 = lat[opt.calls * 99 / 100];
    rp_result r = { (double)p50 / 1e3, (double)p99 / 1e3,
                    (double)sum / opt.calls / 1e3 };
    return r;
}

/* ---- arguments ------------------------------------------------------------
 */

static const char usage_text[] =
    "usage: bench-nodes --tkd PATH --dsn DSN --dir DIR [--nodes N (1-3)]\n"
    "                   [--callers C] [--seconds S] [--rounds R]\n"
    "                   [--calls K] [--pg-pool P] [--members 0|1]\n"
    "                   [--only add|revparse] [--pg-pid PID]\n"
    "defaults: 3 nodes, 24 callers, 5 rounds of 3 s per node count,\n"
    "2000 RevParse per series, a pool of 8 per node, no members\n";

static bool take_option(const char *name, const char *arg)
{
    if (strcmp(name, "--tkd") == 0)
        opt.tkd = arg;
    else if (strcmp(name, "--dsn") == 0)
        opt.dsn = arg;
    else if (strcmp(name, "--dir") == 0)
        opt.dir = arg;
    else if (strcmp(name, "--nodes") == 0)
        return bench_int_arg("bench-nodes", name, arg, 1, MAX_NODES,
                             &opt.nodes);
    else if (strcmp(name, "--callers") == 0)
        return bench_int_arg("bench-nodes", name, arg, 1, MAX_CALLERS,
                             &opt.callers);
    else if (strcmp(name, "--rounds") == 0)
        return bench_int_arg("bench-nodes", name, arg, 1, 1000, &opt.rounds);
    else if (strcmp(name, "--calls") == 0)
        return bench_int_arg("bench-nodes", name, arg, 10, 10000000,
                             &opt.calls);
    else if (strcmp(name, "--pg-pool") == 0)
        return bench_int_arg("bench-nodes", name, arg, 1, 64, &opt.pg_pool);
    else if (strcmp(name, "--pg-pid") == 0) {
        int v = 0;
        if (!bench_int_arg("bench-nodes", name, arg, 1, INT_MAX, &v))
            return false;
        opt.pg_pid = v;
    } else if (strcmp(name, "--only") == 0) {
        if (strcmp(arg, "add") != 0 && strcmp(arg, "revparse") != 0) {
            fprintf(stderr, "bench-nodes: --only add or --only revparse\n");
            return false;
        }
        opt.only = arg;
    } else if (strcmp(name, "--members") == 0)
        return bench_int_arg("bench-nodes", name, arg, 0, 1, &opt.members);
    else if (strcmp(name, "--seconds") == 0) {
        char *end;
        errno = 0;
        opt.seconds = strtod(arg, &end);
        if (errno != 0 || end == arg || *end != '\0' ||
            !(opt.seconds >= 0.1 && opt.seconds <= 3600)) {
            fprintf(stderr, "bench-nodes: --seconds wants 0.1 to 3600\n");
            return false;
        }
    } else {
        fprintf(stderr, "bench-nodes: unknown option %s\n", name);
        return false;
    }
    return true;
}

/* Returns 0 to run, 1 after --help, 2 after a usage message. */
static int parse_args(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage_text, stdout);
        return 1;
    }
    bool ok = argc % 2 == 1;
    for (int i = 1; ok && i + 1 < argc; i += 2)
        ok = take_option(argv[i], argv[i + 1]);
    if (ok && (opt.tkd == NULL || opt.dsn == NULL || opt.dir == NULL)) {
        fprintf(stderr, "bench-nodes: --tkd, --dsn and --dir are required\n");
        ok = false;
    }
    if (!ok) {
        fputs(usage_text, stderr);
        return 2;
    }
    return 0;
}

/* ---- the run --------------------------------------------------------------
 */

static int cmp_add(const void *a, const void *b)
{
    double x = ((const add_result *)a)->per_s;
    double y = ((const add_result *)b)->per_s;
    return (x > y) - (x < y);
}

static int cmp_rp(const void *a, const void *b)
{
    double x = ((const rp_result *)a)->p50_us;
    double y = ((const rp_result *)b)->p50_us;
    return (x > y) - (x < y);
}

static void start_all(void)
{
    snprintf(ca, sizeof ca, "%s/ca.pem", opt.dir);
    snprintf(cert, sizeof cert, "%s/node.pem", opt.dir);
    snprintf(key, sizeof key, "%s/node.key", opt.dir);
    snprintf(client_cert, sizeof client_cert, "%s/client.pem", opt.dir);
    snprintf(client_key, sizeof client_key, "%s/client.key", opt.dir);
    snprintf(repo, sizeof repo, "%s/root1/repo", opt.dir);
    tls = (tk_client_opts){ .tls_ca = ca,
                            .tls_cert = client_cert,
                            .tls_key = client_key };
    for (int k = 0; k < opt.nodes; k++) {
        snprintf(nodes[k].id, sizeof nodes[k].id, "n%d", k + 1);
        start_node(&nodes[k], k, k + 1, opt.pg_pool, opt.members != 0);
    }
    snprintf(direct.id, sizeof direct.id, "direct");
    /* The tkd that is no member: RevParse's direct peer, and AddItem's
     * control (one tkd with the pool of all the nodes together). */
    start_node(&direct, MAX_NODES, 1, opt.nodes * opt.pg_pool, false);
    for (int k = 0; k < opt.nodes; k++)
        wait_up(&nodes[k]);
    wait_up(&direct);
    if (opt.members)
        wait_fleet();
}

/* How a measurement is named in the tables: "2" (nodes), or the
 * control's "1, pool 24" (not a number: the plot leaves it out). */
static void label(int m, char *out, size_t len)
{
    if (m < opt.nodes)
        snprintf(out, len, "%d", m + 1);
    else
        snprintf(out, len, "1, pool %d", opt.nodes * opt.pg_pool);
}

static void run_add(void)
{
    /* res[r][m]: m nodes - 1; m = opt.nodes: the control */
    add_result(*res)[MAX_NODES + 1] = calloc((size_t)opt.rounds, sizeof *res);
    if (res == NULL)
        die("out of memory");
    printf("### AddItem rounds\n\n%d callers, each on an order of its own, "
           "caller c on node c %% N; %.1f s per measurement. Control: one "
           "tkd with a pool of %d (the nodes' pools together), no member "
           "(\"1, pool %d\")\n\n",
           opt.callers, opt.seconds, opt.nodes * opt.pg_pool,
           opt.nodes * opt.pg_pool);
    /* Warm: every connection and pooled database connection used once,
     * the nodes' first calls (a second) not in any round. */
    double seconds = opt.seconds;
    opt.seconds = 1;
    (void)add_round(opt.nodes);
    (void)add_round(0);
    opt.seconds = seconds;
    printf("| round | nodes | AddItem/s | p50 µs | p99 µs | errors | CPU "
           "busy %% | tkd %% | callers %% | PostgreSQL %% | other %% |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    long long errors = 0;
    int kinds = opt.nodes + 1;
    for (int r = 0; r < opt.rounds; r++)
        for (int j = 0; j < kinds; j++) {
            int m = (r + j) % kinds; /* rotated: 1 2 3 c, 2 3 c 1, ... */
            add_result a = add_round(m < opt.nodes ? m + 1 : 0);
            res[r][m] = a;
            errors += a.errors;
            char name[32];
            label(m, name, sizeof name);
            printf("| %d | %s | %.0f | %.0f | %.0f | %lld | %.0f | %.0f | "
                   "%.0f | %.0f | %.0f |\n",
                   r + 1, name, a.per_s, a.p50_us, a.p99_us, a.errors, a.busy,
                   a.tkd, a.client, a.pg, a.other);
            (void)fflush(stdout);
        }
    printf("\n### AddItem by nodes\n\nthe median round of each\n\n");
    printf("| nodes | AddItem/s | p50 µs | p99 µs | throughput / 1 node | "
           "CPU busy %% | tkd %% | callers %% | PostgreSQL %% | other %% |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    add_result *col = calloc((size_t)opt.rounds, sizeof *col);
    if (col == NULL)
        die("out of memory");
    double one = 0;
    for (int n = 0; n < kinds; n++) {
        for (int r = 0; r < opt.rounds; r++)
            col[r] = res[r][n];
        qsort(col, (size_t)opt.rounds, sizeof *col, cmp_add);
        add_result m = col[opt.rounds / 2];
        if (n == 0)
            one = m.per_s;
        char name[32];
        label(n, name, sizeof name);
        printf("| %s | %.0f | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f | %.0f "
               "| %.0f |\n",
               name, m.per_s, m.p50_us, m.p99_us, one > 0 ? m.per_s / one : 0,
               m.busy, m.tkd, m.client, m.pg, m.other);
    }
    printf("\nerrors (calls not OK) over all rounds: %lld. CPU: shares of "
           "the whole machine's time in the round (100 = every core busy; "
           "busy = tkd + callers + PostgreSQL + other, other being whatever "
           "else ran on the machine)\n\n",
           errors);
    free(col);
    free(res);
}

static void run_rev_parse(void)
{
    tk_client *routed = dial(nodes[0].url);
    tk_client *plain = dial(direct.url);
    long long *lat = malloc((size_t)opt.calls * sizeof *lat);
    rp_result *rr = calloc((size_t)opt.rounds, sizeof *rr);
    rp_result *rd = calloc((size_t)opt.rounds, sizeof *rd);
    if (routed == NULL || plain == NULL || lat == NULL || rr == NULL ||
        rd == NULL)
        die("cannot dial the RevParse nodes, or out of memory");
    char via_routed[16] = "", via_plain[16] = "";
    for (int i = 0; i < 200; i++) { /* warm: sockets, libgit2's caches */
        rev_parse(routed, via_routed);
        rev_parse(plain, via_plain);
    }
    /* Which node each carried the calls to: the routed one n1, in fleet
     * mode; the direct one none (a client of one tkd, no fleet). */
    if (opt.members && (strcmp(via_routed, "n1") != 0 || via_plain[0] != 0))
        die("RevParse went to \"%s\" (routed) and \"%s\" (direct), not "
            "n1 and no node",
            via_routed, via_plain);
    printf("### RevParse, routed and direct\n\n%d calls one after another "
           "per series; routed: a client bootstrapped from n1 (%s), the "
           "path's owner n1; direct: a client of a tkd that is no member, "
           "on the same root\n\n",
           opt.calls,
           opt.members ? "in fleet mode; tk_status.node said n1"
                       : "no members: single mode too");
    printf("| round | client | p50 µs | p99 µs | mean µs |\n");
    printf("|---|---|---|---|---|\n");
    for (int r = 0; r < opt.rounds; r++)
        for (int j = 0; j < 2; j++) {
            bool is_routed = (r + j) % 2 == 0;
            rp_result x = rp_round(is_routed ? routed : plain, lat);
            (is_routed ? rr : rd)[r] = x;
            printf("| %d | %s | %.1f | %.1f | %.1f |\n", r + 1,
                   is_routed ? "routed" : "direct", x.p50_us, x.p99_us,
                   x.mean_us);
            (void)fflush(stdout);
        }
    qsort(rr, (size_t)opt.rounds, sizeof *rr, cmp_rp);
    qsort(rd, (size_t)opt.rounds, sizeof *rd, cmp_rp);
    rp_result a = rr[opt.rounds / 2], b = rd[opt.rounds / 2];
    printf("\n### RevParse routing overhead\n\nthe median round of each\n\n");
    printf("| client | p50 µs | p99 µs | mean µs |\n|---|---|---|---|\n");
    printf("| routed | %.1f | %.1f | %.1f |\n", a.p50_us, a.p99_us, a.mean_us);
    printf("| direct | %.1f | %.1f | %.1f |\n", b.p50_us, b.p99_us, b.mean_us);
    printf("\n| p50 routed/direct (target ≤ 1.05) | mean routed/direct |\n");
    printf("|---|---|\n| %.3f | %.3f |\n", a.p50_us / b.p50_us,
           a.mean_us / b.mean_us);
    tk_client_close(routed);
    tk_client_close(plain);
    free(lat);
    free(rr);
    free(rd);
}

int main(int argc, char **argv)
{
    int rv = parse_args(argc, argv);
    if (rv != 0)
        return rv - 1;
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 1;
    start_all();
    printf("%d tkd node%s%s and a tkd that is no member, one PostgreSQL; "
           "mutual TLS over 127.0.0.1; a pool of %d per node\n\n",
           opt.nodes, opt.nodes > 1 ? "s" : "",
           opt.members ? " (members of one fleet)" : " (no members)",
           opt.pg_pool);
    if (opt.only == NULL || strcmp(opt.only, "add") == 0) {
        setup_callers();
        run_add();
    }
    if (opt.only == NULL || strcmp(opt.only, "revparse") == 0)
        run_rev_parse();
    for (int i = 0; i < opt.callers; i++) {
        for (int k = 0; k <= opt.nodes; k++)
            tk_client_close(callers[i].client[k]);
        free(callers[i].lat_ns);
    }
    for (int k = 0; k < opt.nodes; k++)
        stop_node(&nodes[k]);
    stop_node(&direct);
    return 0;
}
