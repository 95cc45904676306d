/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rpc: Control/Ping round trips through tkd against a plain NNG
 * REQ/REP echo server with the same frame size, same run, same machine.
 *
 *   bench-rpc --tkd PATH [--calls N] [--rounds R] [--size BYTES]
 *             [--callers 1,2,4,...] [--data FILE]
 *             [--grpc bench-grpc-echo [--grpc-server callback|sync]]
 *             [--ts-ping client/ts/bench/ping.mjs]
 *   bench-rpc --echo-server URL      (started by the benchmark itself)
 *
 * Both servers run as separate processes listening on ipc. The tkd side
 * uses libtkclient (envelope, protobuf, deadline, status); the echo side a
 * raw REQ context per caller thread. Rounds rotate the order of the
 * servers so that drift of the machine hits each. Prints a markdown table:
 * p50, p99 and calls/s for each number of concurrent callers (1 and 16
 * unless --callers says), and the ratios tkd/echo. --data writes the
 * median rounds as a tab-separated table too (tools/bench/rpc-plot draws
 * it).
 * With --grpc, a gRPC C++ server (tools/bench/grpc_echo.cc: unary
 * Echo(bytes), a unix socket) as the third server in the same rounds, its
 * own client program making the calls with one channel and a thread per
 * caller, messages of the tkd frame's size; and the ratios tkd/gRPC. The
 * server uses gRPC's callback API unless --grpc-server sync says its
 * synchronous one (a thread pool): the callback server was the faster of
 * the two here, 1.1-1.5x at 16 and 64 callers.
 * With --ts-ping, the TypeScript client's Ping too (node runs the script,
 * as many calls at once on its one connection as there are callers), in
 * the same rounds
 * against the same tkd, and the ratios TS/C.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>

#include <tk/client.h>

#include "measure.h"
#include "bench.h"

#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"

/* Prints why and ends the benchmark. Called from the main thread only,
 * while no measurement runs. */
__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt,
                                                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1); // NOLINT(concurrency-mt-unsafe): main thread, no worker running
}

/* ---- the echo server --------------------------------------------------------
 */

/* As many as the most callers (MAX_CALLERS), so that no caller waits for
 * a context. */
#define ECHO_CTXS 256
#define MAX_CALLERS 256

typedef struct echo_ctx {
    nng_ctx ctx;
    nng_aio *aio;
    int sending;
} echo_ctx;

static void echo_cb(void *arg)
{
    echo_ctx *e = arg;
    if (nng_aio_result(e->aio) != 0) {
        if (e->sending)
            nng_msg_free(nng_aio_get_msg(e->aio));
        if (nng_aio_result(e->aio) == NNG_ECLOSED)
            return;
        e->sending = 0;
        nng_ctx_recv(e->ctx, e->aio);
        return;
    }
    if (e->sending) {
        e->sending = 0;
        nng_ctx_recv(e->ctx, e->aio);
    } else {
        e->sending = 1; /* the request message goes back as the reply */
        nng_ctx_send(e->ctx, e->aio);
    }
}

static int echo_server(const char *url)
{
    nng_socket s;
    static echo_ctx ctxs[ECHO_CTXS];
    if (nng_rep0_open(&s) != 0 || nng_listen(s, url, NULL, 0) != 0) {
        fprintf(stderr, "echo: cannot listen on %s\n", url);
        return 1;
    }
    for (int i = 0; i < ECHO_CTXS; i++) {
        nng_ctx_open(&ctxs[i].ctx, s);
        nng_aio_alloc(&ctxs[i].aio, echo_cb, &ctxs[i]);
        nng_ctx_recv(ctxs[i].ctx, ctxs[i].aio);
    }
    printf("READY\n");
    if (fflush(stdout) != 0)
        return 1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig;
    sigwait(&set, &sig);
    return 0;
}

/* ---- load -------------------------------------------------------------------
 */

typedef struct worker {
    int use_tkd;
    const char *url;
    tk_client *client; /* shared by the tkd workers, as a user would */
    nng_socket sock;   /* shared by the echo workers */
    size_t size;
    int calls;
    long long *lat;
    int errors;
    pthread_barrier_t *start;
    pthread_t t;
} worker;

static void run_tkd(worker *w, uint8_t *data)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    req.data.data = data;
    req.data.len = w->size;
    tk_call_opts opts = { .timeout_ms = 10000 };
    for (int i = 0; i < w->calls; i++) {
        Tk__V1__PingReply *rep = NULL;
        tk_status st;
        long long t0 = bench_now_ns();
        int code = tk_control_ping(w->client, &req, &rep, &opts, &st);
        w->lat[i] = bench_now_ns() - t0;
        if (code != 0 || rep->data.len != w->size)
            w->errors++;
        if (rep != NULL)
            protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
        tk_status_clear(&st);
    }
}

/* The frame tkd receives for a Ping of this size, so both servers move the
 * same bytes. */
static size_t tkd_frame_size(size_t payload)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    uint8_t *data = calloc(1, payload + 1);
    req.data.data = data;
    req.data.len = payload;
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = 1ULL << 40;
    env.method = "tk.v1.Control/Ping";
    env.timeout_ms = 10000;
    env.payload.len = tk__v1__ping_request__get_packed_size(&req);
    size_t n = tk__v1__request__get_packed_size(&env);
    free(data);
    return n;
}

static void run_echo(worker *w, uint8_t *data)
{
    nng_ctx ctx;
    nng_aio *aio;
    nng_ctx_open(&ctx, w->sock);
    nng_aio_alloc(&aio, NULL, NULL);
    size_t frame = tkd_frame_size(w->size);
    for (int i = 0; i < w->calls; i++) {
        nng_msg *m;
        long long t0 = bench_now_ns();
        nng_msg_alloc(&m, 0);
        nng_msg_append(m, data, frame);
        nng_aio_set_msg(aio, m);
        nng_ctx_send(ctx, aio);
        nng_aio_wait(aio);
        if (nng_aio_result(aio) != 0) {
            nng_msg_free(m);
            w->errors++;
            continue;
        }
        nng_ctx_recv(ctx, aio);
        nng_aio_wait(aio);
        if (nng_aio_result(aio) == 0) {
            nng_msg *r = nng_aio_get_msg(aio);
            if (nng_msg_len(r) != frame)
                w->errors++;
            nng_msg_free(r);
        } else {
            w->errors++;
        }
        w->lat[i] = bench_now_ns() - t0;
    }
    nng_aio_free(aio);
    nng_ctx_close(ctx);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    uint8_t *data = calloc(1, w->size + 4096);
    memset(data, 'p', w->size + 4096);
    pthread_barrier_wait(w->start);
    if (w->use_tkd)
        run_tkd(w, data);
    else
        run_echo(w, data);
    free(data);
    return NULL;
}

typedef struct result {
    double p50_us, p99_us, calls_per_s;
    int errors;
} result;

static result measure(int use_tkd, const char *url, int threads, int calls,
                      size_t size)
{
    if (threads < 1 || threads > MAX_CALLERS || calls < 1)
        die("bench: %d callers of %d calls each", threads, calls);
    worker *w = calloc((size_t)threads, sizeof *w);
    if (w == NULL)
        die("bench: out of memory");
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    tk_client *client = NULL;
    nng_socket sock;
    if (use_tkd) {
        char err[256];
        if (tk_client_open(&client, url, err, sizeof err) != 0)
            die("bench: %s", err);
    } else {
        nng_req0_open(&sock);
        nng_socket_set_ms(sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
        if (nng_dial(sock, url, NULL, 0) != 0)
            die("bench: cannot dial %s", url);
    }
    for (int i = 0; i < threads; i++) {
        w[i] = (worker){ .use_tkd = use_tkd,
                         .url = url,
                         .client = client,
                         .sock = sock,
                         .size = size,
                         .calls = calls,
                         .start = &start };
        w[i].lat = calloc((size_t)calls, sizeof *w[i].lat);
        pthread_create(&w[i].t, NULL, worker_main, &w[i]);
    }
    pthread_barrier_wait(&start);
    long long t0 = bench_now_ns();
    for (int i = 0; i < threads; i++)
        pthread_join(w[i].t, NULL);
    long long wall = bench_now_ns() - t0;
    size_t total = (size_t)threads * (size_t)calls;
    long long *all = calloc(total, sizeof *all);
    result r = { 0 };
    for (int i = 0; i < threads; i++) {
        memcpy(all + (size_t)i * (size_t)calls, w[i].lat,
               (size_t)calls * sizeof *all);
        r.errors += w[i].errors;
        free(w[i].lat);
    }
    qsort(all, total, sizeof *all, bench_cmp_ll);
    size_t p50 = total / 2, p99 = total * 99 / 100;
    r.p50_us = (double)all[p50] / 1000.0;
    r.p99_us = (double)all[p99] / 1000.0;
    r.calls_per_s = (double)total / ((double)wall / 1e9);
    free(all);
    if (use_tkd)
        tk_client_close(client);
    else
        nng_close(sock);
    pthread_barrier_destroy(&start);
    free(w);
    return r;
}

/* ---- processes --------------------------------------------------------------
 */

/* The echo server: a plain REP socket, so it is polled with a dial. */
static void wait_echo(const char *url)
{
    for (int i = 0; i < 1000; i++) {
        nng_socket s;
        nng_req0_open(&s);
        int rv = nng_dial(s, url, NULL, 0);
        nng_close(s);
        if (rv == 0)
            return;
        nng_msleep(10);
    }
    die("bench: %s did not come up", url);
}

/* The median round: robust against one disturbed round. */
/* A whole number in [min, max] into *out; false when s is not one. */
/* Reads fd to the end into buf (NUL-terminated, the rest dropped). */
static void read_all(int fd, char *buf, size_t len)
{
    size_t used = 0;
    ssize_t n;
    char scratch[256];
    while ((n = read(fd, used + 1 < len ? buf + used : scratch,
                     used + 1 < len ? len - 1 - used : sizeof scratch)) > 0)
        if (used + 1 < len)
            used += (size_t)n;
    buf[used] = '\0';
}

/* The next number of text at *p as a double; false when there is none. */
static bool next_number(const char **p, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(*p, &end);
    if (errno != 0 || end == *p)
        return false;
    *out = v;
    *p = end;
    return true;
}

/* Starts argv with its stdout on a pipe: the pipe's read end, its pid in
 * *pid; -1 when it could not be started. */
static int spawn_reading(const char *const argv[], pid_t *pid)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("bench: pipe: %d", errno);
    *pid = bench_spawn(argv, NULL, -1, p[1], NULL);
    close(p[1]);
    if (*pid < 0) {
        close(p[0]);
        return -1;
    }
    return p[0];
}

/* One measurement by a client program of its own (argv), which prints
 * "p50 p99 calls/s errors". */
static result measure_program(const char *const argv[], const char *what)
{
    pid_t pid;
    int fd = spawn_reading(argv, &pid);
    if (fd < 0)
        die("bench: cannot run %s", what);
    char out[512];
    read_all(fd, out, sizeof out);
    close(fd);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("bench: %s failed", what);
    result res = { 0 };
    double errors = 0;
    const char *q = out;
    if (!next_number(&q, &res.p50_us) || !next_number(&q, &res.p99_us) ||
        !next_number(&q, &res.calls_per_s) || !next_number(&q, &errors))
        die("bench: %s printed no measurement: %s", what, out);
    res.errors = (int)errors;
    return res;
}

/* One measurement of the TypeScript client's Ping: node runs script
 * (client/ts/bench/ping.mjs): conc calls at once, calls in all. */
static result measure_ts(const char *script, const char *url, int conc,
                         int calls, size_t size)
{
    char n_calls[16], n_conc[16], n_size[24];
    snprintf(n_calls, sizeof n_calls, "%d", calls);
    snprintf(n_conc, sizeof n_conc, "%d", conc);
    snprintf(n_size, sizeof n_size, "%zu", size);
    const char *argv[] = { "/usr/bin/env", "node", script, url,
                           n_calls,        n_conc, n_size, NULL };
    return measure_program(argv, script);
}

/* One measurement of the gRPC echo: its client (bench-grpc-echo --client)
 * with threads callers of calls each, messages of the tkd frame's size. */
static result measure_grpc(const char *prog, const char *url, int threads,
                           int calls, size_t size)
{
    char n_calls[16], n_threads[16], n_size[24];
    snprintf(n_calls, sizeof n_calls, "%d", calls);
    snprintf(n_threads, sizeof n_threads, "%d", threads);
    snprintf(n_size, sizeof n_size, "%zu", tkd_frame_size(size));
    const char *argv[] = { prog,    "--client", url, n_threads,
                           n_calls, n_size,     NULL };
    return measure_program(argv, prog);
}

/* Starts the gRPC echo server (bench-grpc-echo --server) on url and
 * returns its pid once it says READY. */
static pid_t start_grpc(const char *prog, const char *url, const char *mode)
{
    const char *argv[] = { prog, "--server", url,
                           strcmp(mode, "callback") == 0 ? "--callback" : NULL,
                           NULL };
    pid_t pid;
    int fd = spawn_reading(argv, &pid);
    if (fd < 0)
        die("bench: cannot start %s", prog);
    char out[64];
    size_t used = 0;
    ssize_t n;
    while (used + 1 < sizeof out && memchr(out, '\n', used) == NULL &&
           (n = read(fd, out + used, sizeof out - 1 - used)) > 0)
        used += (size_t)n; /* its first line; it prints nothing after */
    out[used] = '\0';
    close(fd);
    if (strncmp(out, "READY", 5) != 0)
        die("bench: %s --server %s did not start", prog, url);
    return pid;
}

static bool number_arg(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The most caller counts one run measures (--callers). */
#define MAX_COUNTS 16

typedef struct bench_opts {
    const char *tkd;
    const char *ts_ping;
    const char *grpc;        /* bench-grpc-echo, or NULL: no gRPC row */
    const char *grpc_server; /* callback (default) or sync */
    const char *data;        /* the tab-separated table, or NULL */
    int calls, rounds;
    size_t size;
    int callers[MAX_COUNTS], counts;
} bench_opts;

/* A comma-separated list of caller counts (1..MAX_CALLERS) into o. */
static bool callers_arg(bench_opts *o, const char *s)
{
    o->counts = 0;
    while (o->counts < MAX_COUNTS) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno != 0 || end == s || v < 1 || v > MAX_CALLERS)
            return false;
        o->callers[o->counts++] = (int)v;
        if (*end == '\0')
            return true;
        if (*end != ',')
            return false;
        s = end + 1;
    }
    return false;
}

/* Whether argv[i], argv[i + 1] is a known option with a valid value. */
static bool take_option(bench_opts *o, const char *name, const char *arg)
{
    long v = 0;
    if (strcmp(name, "--tkd") == 0)
        o->tkd = arg;
    else if (strcmp(name, "--ts-ping") == 0)
        o->ts_ping = arg;
    else if (strcmp(name, "--grpc") == 0)
        o->grpc = arg;
    else if (strcmp(name, "--grpc-server") == 0 &&
             (strcmp(arg, "sync") == 0 || strcmp(arg, "callback") == 0))
        o->grpc_server = arg;
    else if (strcmp(name, "--data") == 0)
        o->data = arg;
    else if (strcmp(name, "--callers") == 0)
        return callers_arg(o, arg);
    else if (strcmp(name, "--calls") == 0 && number_arg(arg, 100, INT_MAX, &v))
        o->calls = (int)v;
    else if (strcmp(name, "--rounds") == 0 && number_arg(arg, 1, 9, &v))
        o->rounds = (int)v;
    else if (strcmp(name, "--size") == 0 && number_arg(arg, 0, 64L << 20, &v))
        o->size = (size_t)v;
    else
        return false;
    return true;
}

/* Returns 0, or 2 after a usage message. */
static int parse_args(bench_opts *o, int argc, char **argv)
{
    bool ok = argc % 2 == 1; /* options come in pairs */
    for (int i = 1; ok && i + 1 < argc; i += 2)
        ok = take_option(o, argv[i], argv[i + 1]);
    if (!ok || o->tkd == NULL) {
        fprintf(stderr,
                "usage: bench-rpc --tkd PATH [--calls N (>= 100)] "
                "[--rounds R (1..9)] [--size BYTES]\n"
                "                 [--callers C,C,... (1..%d, default 1,16)] "
                "[--data FILE]\n"
                "                 [--grpc BENCH-GRPC-ECHO [--grpc-server "
                "callback|sync]] [--ts-ping SCRIPT]\n",
                MAX_CALLERS);
        return 2;
    }
    return 0;
}

/* The servers (and clients) of one round, in the order of the columns;
 * the first three take turns at going first. */
enum { SRV_TKD, SRV_ECHO, SRV_GRPC, SRV_TS, SRV_N };

/* The median rounds of one caller count, per server. */
typedef struct medians {
    double p50[SRV_N], p99[SRV_N], tp[SRV_N];
} medians;

typedef struct endpoints {
    const char *tkd, *echo, *grpc;
} endpoints;

/* One measurement of server k with threads callers of per calls each. */
static result measure_server(const bench_opts *o, const endpoints *ep, int k,
                             int threads, int per)
{
    switch (k) {
    case SRV_TKD:
        return measure(1, ep->tkd, threads, per, o->size);
    case SRV_ECHO:
        return measure(0, ep->echo, threads, per, o->size);
    case SRV_GRPC:
        return measure_grpc(o->grpc, ep->grpc, threads, per, o->size);
    default:
        return measure_ts(o->ts_ping, ep->tkd, threads, per, o->size);
    }
}

static const char *const server_names[SRV_N] = { "tkd Ping", "NNG echo",
                                                 "gRPC echo",
                                                 "tkd Ping, TS client" };

/* The rounds of one caller count: tkd, the echo and gRPC, each round
 * starting with the next of them, the TS client after them; prints the
 * medians into the table and keeps them in *m. Returns the errors. */
static int measure_callers(const bench_opts *o, const endpoints *ep,
                           int threads, medians *m)
{
    int rounds = o->rounds;
    int per = o->calls / threads > 0 ? o->calls / threads : 1, errors = 0;
    int rotating = o->grpc != NULL ? 3 : 2;
    double p50[SRV_N][9], p99[SRV_N][9], tp[SRV_N][9];
    measure(1, ep->tkd, threads, per / 10 + 1, o->size); /* warm up */
    measure(0, ep->echo, threads, per / 10 + 1, o->size);
    for (int r = 0; r < rounds; r++) {
        for (int s = 0; s <= rotating; s++) {
            int k = s < rotating ? (r + s) % rotating : SRV_TS;
            if (k == SRV_TS && o->ts_ping == NULL)
                break;
            result res = measure_server(o, ep, k, threads, per);
            p50[k][r] = res.p50_us;
            p99[k][r] = res.p99_us;
            tp[k][r] = res.calls_per_s;
            errors += res.errors;
        }
    }
    for (int k = 0; k < SRV_N; k++) {
        bool ran = k < rotating || (k == SRV_TS && o->ts_ping != NULL);
        m->p50[k] = ran ? bench_median(p50[k], rounds) : NAN;
        m->p99[k] = ran ? bench_median(p99[k], rounds) : NAN;
        m->tp[k] = ran ? bench_median(tp[k], rounds) : NAN;
        if (ran)
            printf("| %d | %s | %.1f | %.1f | %.0f |\n", threads,
                   server_names[k], m->p50[k], m->p99[k], m->tp[k]);
    }
    (void)fflush(stdout);
    return errors;
}

static void print_ratios(const bench_opts *o, const medians *m)
{
    bool grpc = o->grpc != NULL;
    printf("\n| callers | p50 tkd/echo (target ≤ 1.15) | throughput "
           "tkd/echo (target ≥ 0.85) |%s\n|---|---|---|%s\n",
           grpc ? " p50 tkd/gRPC | throughput tkd/gRPC (target ≥ 1.5) |" : "",
           grpc ? "---|---|" : "");
    for (int c = 0; c < o->counts; c++) {
        const medians *x = &m[c];
        printf("| %d | %.2f | %.2f |", o->callers[c],
               x->p50[SRV_TKD] / x->p50[SRV_ECHO],
               x->tp[SRV_TKD] / x->tp[SRV_ECHO]);
        if (grpc)
            printf(" %.2f | %.2f |", x->p50[SRV_TKD] / x->p50[SRV_GRPC],
                   x->tp[SRV_TKD] / x->tp[SRV_GRPC]);
        printf("\n");
    }
    if (o->ts_ping != NULL) {
        printf("\n| callers | p50 TS client/C client | throughput TS/C |\n"
               "|---|---|---|\n");
        for (int c = 0; c < o->counts; c++)
            printf("| %d | %.2f | %.2f |\n", o->callers[c],
                   m[c].p50[SRV_TS] / m[c].p50[SRV_TKD],
                   m[c].tp[SRV_TS] / m[c].tp[SRV_TKD]);
    }
}

/* The median rounds as a tab-separated table, one line per caller count
 * and three columns (p50 µs, p99 µs, calls/s) per server, NaN for a
 * server not run; the lines starting with # are comments (gnuplot skips
 * them). tools/bench/rpc-plot reads it. */
static void write_data(const bench_opts *o, const medians *m)
{
    FILE *f = fopen(o->data, "w");
    if (f == NULL)
        die("bench: cannot write %s (errno %d)", o->data, errno);
    static const char *const cols[SRV_N] = { "tkd", "echo", "grpc", "ts" };
    fprintf(f,
            "# bench-rpc: frame %zu bytes (Ping data %zu), %d calls per "
            "measurement, median of %d rounds, gRPC server %s\n"
            "# callers",
            tkd_frame_size(o->size), o->size, o->calls, o->rounds,
            o->grpc != NULL ? o->grpc_server : "not run");
    for (int k = 0; k < SRV_N; k++)
        fprintf(f, "\t%s_p50_us\t%s_p99_us\t%s_calls_per_s", cols[k], cols[k],
                cols[k]);
    fprintf(f, "\n");
    for (int c = 0; c < o->counts; c++) {
        fprintf(f, "%d", o->callers[c]);
        for (int k = 0; k < SRV_N; k++)
            fprintf(f, "\t%.1f\t%.1f\t%.0f", m[c].p50[k], m[c].p99[k],
                    m[c].tp[k]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0)
        die("bench: cannot write %s", o->data);
}

/* Ends a server and removes its socket, DIR/NAME. */
static void stop_server(pid_t pid, const char *dir, const char *name)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    char sock[200];
    snprintf(sock, sizeof sock, "%s/%s", dir, name);
    unlink(sock);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--echo-server") == 0)
        return echo_server(argv[2]);
    bench_opts o = { .calls = 20000,
                     .rounds = 3,
                     .size = 64,
                     .grpc_server = "callback",
                     .callers = { 1, 16 },
                     .counts = 2 };
    if (parse_args(&o, argc, argv) != 0)
        return 2;
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 1;
    char dir[] = "/tmp/tk-bench-XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    char tkd_url[128], echo_url[128], grpc_url[128];
    snprintf(tkd_url, sizeof tkd_url, "ipc://%s/tkd.sock", dir);
    snprintf(echo_url, sizeof echo_url, "ipc://%s/echo.sock", dir);
    snprintf(grpc_url, sizeof grpc_url, "unix:%s/grpc.sock", dir);
    const char *tkd_argv[] = { o.tkd,         "--listen", tkd_url,
                               "--log-level", "warn",     NULL };
    const char *echo_argv[] = { "/proc/self/exe", "--echo-server", echo_url,
                                NULL };
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    echo_argv[0] = self;
    /* Its READY goes to /dev/null: it is polled with a dial. */
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_t tkd_pid, echo_pid = bench_spawn(echo_argv, NULL, -1, devnull, NULL);
    if (devnull >= 0)
        close(devnull);
    if (echo_pid < 0)
        die("bench: cannot start %s", echo_argv[0]);
    tk_client_close(bench_start_tkd(tkd_argv, tkd_url, &tkd_pid));
    wait_echo(echo_url);
    pid_t grpc_pid =
        o.grpc != NULL ? start_grpc(o.grpc, grpc_url, o.grpc_server) : 0;
    endpoints ep = { tkd_url, echo_url, grpc_url };

    printf("| callers | server | p50 µs | p99 µs | calls/s |\n");
    printf("|---|---|---|---|---|\n");
    medians m[MAX_COUNTS];
    int errors = 0;
    for (int c = 0; c < o.counts; c++)
        errors += measure_callers(&o, &ep, o.callers[c], &m[c]);
    print_ratios(&o, m);
    if (o.data != NULL)
        write_data(&o, m);
    printf("\nframe: %zu bytes (Ping data %zu), %d calls per measurement, "
           "%d rounds, gRPC server: %s, errors: %d\n",
           tkd_frame_size(o.size), o.size, o.calls, o.rounds,
           o.grpc != NULL ? o.grpc_server : "not run", errors);
    stop_server(tkd_pid, dir, "tkd.sock");
    stop_server(echo_pid, dir, "echo.sock");
    stop_server(grpc_pid, dir, "grpc.sock");
    rmdir(dir);
    return errors == 0 ? 0 : 1;
}
