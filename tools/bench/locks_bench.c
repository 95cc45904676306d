/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/locks: the lock convoy that FOR UPDATE makes on a hot order,
 * and what tkd costs per call.
 *
 *   bench-locks --dsn DSN [--seconds S] [--rounds R] [--adders N]
 *               [--rate R] [--transitioners M] [--hold-ms H] [--calls K]
 *
 * Contention: one hot order; N clients call AddItem on it, each at a
 * steady rate (a saturated CPU would queue every call alike and hide what
 * the lock does), while M clients run CloseOrder/ReopenOrder on it back to
 * back, all through tk.v1.Orders (libtkclient → rpc → orders → PostgreSQL).
 * A transition holds its row lock for --hold-ms at least (a sleep in the
 * audit trigger, standing for the work a real transition does in its
 * transaction); child-insert latency counts the AddItem calls that
 * inserted (those refused with ORDER_CLOSED take no lock). Rounds alternate
 * the service's lock, FOR NO KEY UPDATE and FOR UPDATE (switched with
 * orders__test_set_row_lock: the server runs in this process for that
 * reason), so both see the same machine drift. Per round: AddItem p50/p99
 * and calls/s, inserts/s, transitions/s, and the transitions counted
 * twice: an audit trigger (created by this benchmark in the database it is
 * given) records every status UPDATE, so a transition lost (a client told
 * CLOSED that the database never saw) or doubled (closed → closed: two
 * transitions read the same status) shows as a mismatch. The median round
 * of each mode is reported.
 *
 * Overhead: one client, no contention; AddItem and a Close+Reopen pair
 * through tkd against the same statements sent by libpq directly
 * (PQexecParams, blocking), alternating, median of rounds.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <tk/client.h>

#include "bench.h"
#include "measure.h"
#include "control/control.h"
#include "obs/obs.h"
#include "orders/orders.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/orders.tk.h"

/* Prints why and ends the benchmark, from any thread: the workers die too
 * (no server, out of memory). So _exit, not exit: exit would run the
 * atexit handlers and tear stdio down under threads still running. */
__attribute__((noreturn)) static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench-locks: %s%s\n", what, detail);
    (void)fflush(stdout); /* the rounds printed so far; dying either way */
    _exit(1);
}

/* ---- latencies ------------------------------------------------------------
 */

typedef struct lat {
    long long *v;
    size_t n, cap;
} lat;

static void lat_add(lat *l, long long ns)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (l->v == NULL)
            die("", "out of memory");
    }
    l->v[l->n++] = ns;
}

static double pct_us(lat *l, double p)
{
    if (l->n == 0)
        return 0;
    qsort(l->v, l->n, sizeof *l->v, bench_cmp_ll);
    size_t i = (size_t)(p * (double)(l->n - 1));
    return (double)l->v[i] / 1000.0;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the server in this process ------------------------------------------
 */

typedef struct bench {
    const char *dsn;
    char url[300];
    char dir[256];
    orders *orders;
    rpc_server *srv;
    int64_t order;
} bench;

static void server_start(bench *b, unsigned callers)
{
    snprintf(b->dir, sizeof b->dir, "/tmp/tk-bench-locks-XXXXXX");
    if (mkdtemp(b->dir) == NULL) {
        char ebuf[128];
        die("mkdtemp: ", strerror_r(errno, ebuf, sizeof ebuf));
    }
    snprintf(b->url, sizeof b->url, "ipc://%s/s.sock", b->dir);
    char err[256] = "";
    orders_config lc = { .dsn = b->dsn, .pool_size = callers + 2 };
    if (orders_new(&b->orders, &lc, err, sizeof err) != 0)
        die("", err);
    rpc_config cfg;
    rpc_config_init(&cfg);
    const char *listen = b->url;
    cfg.listen = &listen;
    cfg.n_listen = 1;
    cfg.workers = callers + 2;
    cfg.version = "bench";
    if (rpc_server_new(&b->srv, &cfg, err, sizeof err) != 0 ||
        control_register(b->srv, err, sizeof err) != 0 ||
        orders_register(b->orders, b->srv, err, sizeof err) != 0 ||
        rpc_server_start(b->srv, err, sizeof err) != 0)
        die("", err);
    orders_start(b->orders);
}

static void server_stop(bench *b)
{
    rpc_server_free(b->srv);
    orders_free(b->orders);
    char sock[320];
    snprintf(sock, sizeof sock, "%s/s.sock", b->dir);
    unlink(sock);
    rmdir(b->dir);
}

static tk_client *client(const bench *b)
{
    tk_client *c;
    char err[256];
    if (tk_client_open(&c, b->url, err, sizeof err) != TK_OK)
        die("", err);
    return c;
}

/* ---- the database side ---------------------------------------------------
 */

static PGconn *pg_connect(const char *dsn)
{
    PGconn *c = PQconnectdb(dsn);
    if (PQstatus(c) != CONNECTION_OK)
        die("", PQerrorMessage(c));
    return c;
}

static void pg_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        die("", PQresultErrorMessage(r));
    PQclear(r);
}

static long long pg_int(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        die("", PQresultErrorMessage(r));
    long long v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* Every status UPDATE of orders, as (old, new): the ground truth. With
 * hold_ms, the trigger also sleeps that long: the work a real transition
 * does inside its transaction (audit rows, stock, a notification) while it
 * holds the order's row lock. The same in both lock modes. */
static void install_audit(PGconn *c, double hold_ms)
{
    char sql[512];
    pg_ok(c, "SET client_min_messages = warning");
    pg_ok(c, "CREATE TABLE IF NOT EXISTS bench_transitions ("
             "  old_status text, new_status text)");
    snprintf(sql, sizeof sql,
             "CREATE OR REPLACE FUNCTION bench_audit() RETURNS trigger "
             "LANGUAGE plpgsql AS $$BEGIN "
             "INSERT INTO bench_transitions VALUES (OLD.status, NEW.status); "
             "PERFORM pg_sleep(%.6f); RETURN NEW; END$$",
             hold_ms / 1000.0);
    pg_ok(c, sql);
    pg_ok(c, "DROP TRIGGER IF EXISTS bench_audit ON orders");
    pg_ok(c, "CREATE TRIGGER bench_audit AFTER UPDATE ON orders "
             "FOR EACH ROW EXECUTE FUNCTION bench_audit()");
}

/* ---- calls ----------------------------------------------------------------
 */

static int add_item(tk_client *c, int64_t order)
{
    Tk__V1__AddItemRequest req = TK__V1__ADD_ITEM_REQUEST__INIT;
    Tk__V1__AddItemReply *rep = NULL;
    tk_status st;
    req.order_id = order;
    req.sku = "bench";
    tk_call_opts opts = { .timeout_ms = 30000 };
    int code = tk_orders_add_item(c, &req, &rep, &opts, &st);
    if (rep != NULL)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code;
}

/* 1: this call changed the status, 0: it was there already, -1: error. */
static int transition(tk_client *c, int64_t order, bool close)
{
    tk_status st;
    tk_call_opts opts = { .timeout_ms = 30000 };
    int rv = -1;
    if (close) {
        Tk__V1__CloseOrderRequest req = TK__V1__CLOSE_ORDER_REQUEST__INIT;
        Tk__V1__CloseOrderReply *rep = NULL;
        req.order_id = order;
        if (tk_orders_close_order(c, &req, &rep, &opts, &st) == TK_OK) {
            rv = rep->outcome == TK__V1__CLOSE_ORDER_REPLY__OUTCOME__CLOSED;
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        }
    } else {
        Tk__V1__ReopenOrderRequest req = TK__V1__REOPEN_ORDER_REQUEST__INIT;
        Tk__V1__ReopenOrderReply *rep = NULL;
        req.order_id = order;
        if (tk_orders_reopen_order(c, &req, &rep, &opts, &st) == TK_OK) {
            rv = rep->outcome == TK__V1__REOPEN_ORDER_REPLY__OUTCOME__REOPENED;
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        }
    }
    tk_status_clear(&st);
    return rv;
}

/* ---- contention rounds ---------------------------------------------------
 */

typedef struct worker {
    const bench *b;
    bool transitioner;
    long long interval_ns; /* an adder's pace: one call per interval */
    _Atomic bool *stop;
    lat adds;
    long long inserted, refused, changed, unchanged, errors, transitions;
    pthread_t thread;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    tk_client *c = client(w->b);
    bool close = true;
    long long next = bench_now_ns();
    while (!atomic_load(w->stop)) {
        if (w->transitioner) {
            int rv = transition(c, w->b->order, close);
            close = !close;
            w->transitions++;
            if (rv < 0)
                w->errors++;
            else if (rv)
                w->changed++;
            else
                w->unchanged++;
            continue;
        }
        /* Paced, not flat out: a saturated CPU queues every call alike
         * and hides what the lock does. */
        next += w->interval_ns;
        long long t0 = bench_now_ns();
        if (next > t0) {
            struct timespec ts = { (time_t)(next / 1000000000LL),
                                   (long)(next % 1000000000LL) };
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            t0 = bench_now_ns();
        }
        int code = add_item(c, w->b->order);
        long long took = bench_now_ns() - t0;
        if (code == TK_OK) {
            lat_add(&w->adds, took); /* child inserts only */
            w->inserted++;
        } else if (code == TK_CODE_FAILED_PRECONDITION)
            w->refused++; /* ORDER_CLOSED: the order was closed */
        else
            w->errors++;
    }
    tk_client_close(c);
    return NULL;
}

typedef struct round_result {
    double add_p50, add_p99, adds_s, inserts_s, transitions_s;
    long long lost, doubled, errors;
} round_result;

typedef struct load {
    int adders, transitioners;
    double rate; /* AddItem calls per second per adder */
    double seconds;
} load;

static round_result contention_round(bench *b, PGconn *pg, const load *l)
{
    int adders = l->adders, transitioners = l->transitioners;
    double seconds = l->seconds;
    pg_ok(pg, "TRUNCATE bench_transitions");
    _Atomic bool stop = false;
    int n = adders + transitioners;
    worker *ws = calloc((size_t)n, sizeof *ws);
    long long t0 = bench_now_ns();
    for (int i = 0; i < n; i++) {
        ws[i].b = b;
        ws[i].transitioner = i >= adders;
        ws[i].stop = &stop;
        ws[i].interval_ns = (long long)(1e9 / l->rate);
        pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
    }
    struct timespec d = { (time_t)seconds,
                          (long)((seconds - (double)(time_t)seconds) * 1e9) };
    nanosleep(&d, NULL);
    atomic_store(&stop, true);
    lat all = { 0 };
    long long inserted = 0, refused = 0, changed = 0, errors = 0,
              transitions = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(ws[i].thread, NULL);
        for (size_t k = 0; k < ws[i].adds.n; k++)
            lat_add(&all, ws[i].adds.v[k]);
        free(ws[i].adds.v);
        inserted += ws[i].inserted;
        refused += ws[i].refused;
        changed += ws[i].changed;
        errors += ws[i].errors;
        transitions += ws[i].transitions;
    }
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    free(ws);
    round_result r;
    r.add_p50 = pct_us(&all, 0.50);
    r.add_p99 = pct_us(&all, 0.99);
    r.adds_s = (double)(inserted + refused) / secs;
    r.inserts_s = (double)inserted / secs;
    r.transitions_s = (double)transitions / secs;
    long long audited = pg_int(pg, "SELECT count(*) FROM bench_transitions "
                                   "WHERE old_status <> new_status");
    r.doubled = pg_int(pg, "SELECT count(*) FROM bench_transitions "
                           "WHERE old_status = new_status");
    r.lost = llabs(audited - changed);
    r.errors = errors;
    free(all.v);
    return r;
}

/* ---- overhead: tkd vs the same SQL through libpq ------------------------- */

/* The statements orders/ sends for AddItem and a transition (orders.c,
 * tx.c), with the timeouts a 30 s deadline gives. */
static const char begin_sql[] =
    "BEGIN ISOLATION LEVEL READ COMMITTED; "
    "SELECT set_config('lock_timeout', '29000ms', true), "
    "set_config('statement_timeout', '29500ms', true)";
static const char add_sql[] =
    "WITH o AS (SELECT id, status FROM orders WHERE id = $1),"
    " ins AS (INSERT INTO order_items (order_id, sku)"
    "         SELECT id, $2 FROM o WHERE status = 'open'"
    "         RETURNING id)"
    " SELECT (SELECT status FROM o), (SELECT id FROM ins)";

static void direct(PGconn *c, const char *sql, int n, const char *const *p)
{
    PGresult *r = n < 0 ? PQexec(c, sql)
                        : PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        die("", PQresultErrorMessage(r));
    PQclear(r);
}

static void direct_add(PGconn *c, const char *id)
{
    const char *const p[] = { id, "bench" };
    direct(c, begin_sql, -1, NULL);
    direct(c, add_sql, 2, p);
    direct(c, "COMMIT", -1, NULL);
}

static void direct_transition(PGconn *c, const char *id, bool close)
{
    const char *const p[] = { id };
    direct(c, begin_sql, -1, NULL);
    direct(c, "SELECT status FROM orders WHERE id = $1 FOR NO KEY UPDATE", 1,
           p);
    direct(c,
           close ? "UPDATE orders SET status = 'closed', closed_at = now() "
                   "WHERE id = $1"
                 : "UPDATE orders SET status = 'open', closed_at = NULL "
                   "WHERE id = $1",
           1, p);
    direct(c, "COMMIT", -1, NULL);
}

typedef struct overhead {
    double add_tkd, add_pq, pair_tkd, pair_pq, ping; /* p50 µs */
} overhead;

static void ping(tk_client *c)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    Tk__V1__PingReply *rep = NULL;
    tk_status st;
    if (tk_control_ping(c, &req, &rep, NULL, &st) != TK_OK)
        die("", "Ping failed");
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static overhead overhead_round(bench *b, PGconn *pg, tk_client *c, int calls)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)b->order);
    lat at = { 0 }, ap = { 0 }, pt = { 0 }, pp = { 0 }, pg_ = { 0 };
    for (int i = 0; i < calls; i++) {
        long long tp = bench_now_ns();
        ping(c);
        lat_add(&pg_, bench_now_ns() - tp);
        long long t0 = bench_now_ns();
        if (add_item(c, b->order) != TK_OK)
            die("", "AddItem failed");
        long long t1 = bench_now_ns();
        direct_add(pg, id);
        long long t2 = bench_now_ns();
        if (transition(c, b->order, true) != 1 ||
            transition(c, b->order, false) != 1)
            die("", "Close/Reopen failed");
        long long t3 = bench_now_ns();
        direct_transition(pg, id, true);
        direct_transition(pg, id, false);
        long long t4 = bench_now_ns();
        lat_add(&at, t1 - t0);
        lat_add(&ap, t2 - t1);
        lat_add(&pt, t3 - t2);
        lat_add(&pp, t4 - t3);
    }
    overhead o = { pct_us(&at, 0.5), pct_us(&ap, 0.5), pct_us(&pt, 0.5),
                   pct_us(&pp, 0.5), pct_us(&pg_, 0.5) };
    free(pg_.v);
    free(at.v);
    free(ap.v);
    free(pt.v);
    free(pp.v);
    return o;
}

/* ---- main ---------------------------------------------------------------- */

static const char *mode_name[] = { "FOR NO KEY UPDATE", "FOR UPDATE" };

typedef struct bench_opts {
    const char *dsn;
    double seconds, hold_ms, rate;
    int rounds, adders, transitioners, calls;
} bench_opts;

static const char usage_text[] =
    "usage: bench-locks --dsn DSN [--seconds S] [--rounds R (>= 2)]\n"
    "                   [--adders N] [--rate R] [--transitioners M]\n"
    "                   [--hold-ms H] [--calls K (>= 5)]\n"
    "defaults: 3 s rounds, 6 rounds, 4 adders at 100 AddItem/s each,\n"
    "2 transitioners, the lock held 20 ms per transition, 2000 calls\n";

/* A number in [min, max] into *out, or a message and false. */
static bool real_arg(const char *flag, const char *s, double min, double max,
                     double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max)) {
        fprintf(stderr,
                "bench-locks: %s wants a number from %g to %g, not \"%s\"\n",
                flag, min, max, s);
        return false;
    }
    *out = v;
    return true;
}

/* Whether name arg is a known option with a valid value (a message if
 * the value is not). */
static bool take_option(bench_opts *o, const char *name, const char *arg)
{
    const long max_callers = ORDERS_MAX_POOL - 2;
    if (strcmp(name, "--dsn") == 0) {
        o->dsn = arg;
        return true;
    }
    if (strcmp(name, "--seconds") == 0)
        return real_arg(name, arg, 0.001, 86400, &o->seconds);
    if (strcmp(name, "--hold-ms") == 0)
        return real_arg(name, arg, 0, 600000, &o->hold_ms);
    if (strcmp(name, "--rate") == 0)
        return real_arg(name, arg, 0.001, 1e6, &o->rate);
    if (strcmp(name, "--rounds") == 0)
        return bench_int_arg("bench-locks", name, arg, 2, 10000, &o->rounds);
    if (strcmp(name, "--adders") == 0)
        return bench_int_arg("bench-locks", name, arg, 1, max_callers - 1,
                             &o->adders);
    if (strcmp(name, "--transitioners") == 0)
        return bench_int_arg("bench-locks", name, arg, 1, max_callers - 1,
                             &o->transitioners);
    if (strcmp(name, "--calls") == 0)
        return bench_int_arg("bench-locks", name, arg, 5, INT_MAX, &o->calls);
    fprintf(stderr, "bench-locks: unknown option %s\n", name);
    return false;
}

/* Returns 0 to run, 1 after --help, 2 after a usage message. */
static int parse_args(bench_opts *o, int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage_text, stdout);
        return 1;
    }
    bool ok = argc % 2 == 1; /* options come in pairs */
    if (!ok)
        fprintf(stderr, "bench-locks: %s wants a value\n", argv[argc - 1]);
    for (int i = 1; ok && i + 1 < argc; i += 2)
        ok = take_option(o, argv[i], argv[i + 1]);
    if (ok && o->dsn == NULL) {
        fprintf(stderr, "bench-locks: --dsn is required\n");
        ok = false;
    }
    if (ok && o->adders + o->transitioners > (int)ORDERS_MAX_POOL - 2) {
        fprintf(stderr,
                "bench-locks: --adders plus --transitioners is at most %u "
                "(a pool of %u connections)\n",
                ORDERS_MAX_POOL - 2, ORDERS_MAX_POOL);
        ok = false;
    }
    if (!ok) {
        fputs(usage_text, stderr);
        return 2;
    }
    return 0;
}

/* The contention rounds, alternating the lock, and the median round of
 * each mode. Returns lost + doubled + errors over all rounds. */
static long long run_contention(bench *b, PGconn *pg, const bench_opts *o)
{
    printf("%d adders (%.0f AddItem/s each), %d transitioners (flat out) on "
           "one order, transitions hold the lock %.1f ms, %d rounds of %.1f "
           "s, alternating\n\n",
           o->adders, o->rate, o->transitioners, o->hold_ms, o->rounds,
           o->seconds);
    load ld = { o->adders, o->transitioners, o->rate, o->seconds };
    printf("| round | lock | insert p50 µs | p99 µs | AddItem/s | "
           "inserts/s | transitions/s | lost | doubled | errors |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    int per = (o->rounds + 1) / 2;
    double *v[2][5];
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 5; k++)
            if ((v[m][k] = calloc((size_t)per, sizeof(double))) == NULL)
                die("", "out of memory");
    int got[2] = { 0, 0 };
    long long bad = 0;
    for (int r = 0; r < o->rounds; r++) {
        int m = r % 2;
        orders__test_set_row_lock(b->orders, m ? ORDERS_ROW_LOCK_UPDATE
                                               : ORDERS_ROW_LOCK_NO_KEY_UPDATE);
        round_result rr = contention_round(b, pg, &ld);
        printf("| %d | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %lld | %lld | "
               "%lld |\n",
               r + 1, mode_name[m], rr.add_p50, rr.add_p99, rr.adds_s,
               rr.inserts_s, rr.transitions_s, rr.lost, rr.doubled, rr.errors);
        if (fflush(stdout) != 0)
            die("", "cannot write the results to stdout");
        double vals[5] = { rr.add_p50, rr.add_p99, rr.adds_s, rr.inserts_s,
                           rr.transitions_s };
        for (int k = 0; k < 5; k++)
            v[m][k][got[m]] = vals[k];
        got[m]++;
        bad += rr.lost + rr.doubled + rr.errors;
    }
    double med[2][5];
    printf("\nMedian round:\n\n| lock | insert p50 µs | p99 µs | "
           "AddItem/s | inserts/s | transitions/s |\n|---|---|---|---|---|---|"
           "\n");
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < 5; k++)
            med[m][k] = median(v[m][k], got[m]);
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", mode_name[m],
               med[m][0], med[m][1], med[m][2], med[m][3], med[m][4]);
    }
    printf(
        "\nChild-insert p99 FOR UPDATE / FOR NO KEY UPDATE: %.1fx (target >= "
        "5x); p50 %.1fx; lost + doubled + errors: %lld (must be 0)\n",
        med[1][1] / med[0][1], med[1][0] / med[0][0], bad);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 5; k++)
            free(v[m][k]);
    return bad;
}

/* One client, no contention: tkd against the same SQL through libpq. */
static void run_overhead(bench *b, PGconn *pg, int calls)
{
    orders__test_set_row_lock(b->orders, ORDERS_ROW_LOCK_NO_KEY_UPDATE);
    install_audit(pg, 0); /* no extra work: the bare cost of a call */
    b->order = pg_int(pg, "INSERT INTO orders DEFAULT VALUES RETURNING id");
    tk_client *c = client(b);
    double ov[5][16];
    int orounds = 5;
    for (int r = 0; r < orounds; r++) {
        overhead o = overhead_round(b, pg, c, calls / orounds);
        ov[0][r] = o.add_tkd;
        ov[1][r] = o.add_pq;
        ov[2][r] = o.pair_tkd;
        ov[3][r] = o.pair_pq;
        ov[4][r] = o.ping;
    }
    tk_client_close(c);
    double a_t = median(ov[0], orounds), a_p = median(ov[1], orounds);
    double p_t = median(ov[2], orounds), p_q = median(ov[3], orounds);
    printf("\nOverhead, one client, no contention (p50 of %d calls, median "
           "of %d rounds):\n\n| call | through tkd µs | libpq direct µs | "
           "tkd overhead µs |\n|---|---|---|---|\n",
           calls / orounds, orounds);
    printf("| AddItem | %.0f | %.0f | %.0f |\n", a_t, a_p, a_t - a_p);
    printf("| CloseOrder + ReopenOrder | %.0f | %.0f | %.0f (%.0f per call) "
           "|\n",
           p_t, p_q, p_t - p_q, (p_t - p_q) / 2);
    printf("| Control/Ping (no database: the transport alone) | %.0f | | "
           "|\n",
           median(ov[4], orounds));
}

int main(int argc, char **argv)
{
    bench_opts o = { .seconds = 3,
                     .hold_ms = 20,
                     .rate = 100,
                     .rounds = 6,
                     .adders = 4,
                     .transitioners = 2,
                     .calls = 2000 };
    int rv = parse_args(&o, argc, argv);
    if (rv != 0)
        return rv == 1 ? 0 : rv;
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        die("", "cannot ignore SIGPIPE");
    obs_log_set_level(getenv("BENCH_LOG") ? OBS_LOG_INFO : OBS_LOG_WARN);
    bench b = { .dsn = o.dsn };
    server_start(&b, (unsigned)(o.adders + o.transitioners));
    PGconn *pg = pg_connect(b.dsn);
    install_audit(pg, o.hold_ms);
    b.order = pg_int(pg, "INSERT INTO orders DEFAULT VALUES RETURNING id");

    long long bad = run_contention(&b, pg, &o);
    run_overhead(&b, pg, o.calls);

    PQfinish(pg);
    server_stop(&b);
    return bad == 0 ? 0 : 1;
}
