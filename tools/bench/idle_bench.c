/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/idle: what a tkd holds when it does nothing — its resident
 * memory (all of it, anonymous, file-backed), threads and descriptors — at
 * four moments of one run:
 *   start    1 s after tkd first accepts a connection (no call made yet);
 *   pings    right after CALLS Pings, one after another, on one client;
 *   burst    right after a burst: CALLERS threads, each on a client of
 *            its own, calling Ping BURST times each, while some of them
 *            also call tk.v1.Git (RevParse, Log of 50, Status on the
 *            repository of --root), tk.v1.Search (a word, limit 100) and,
 *            with --dsn, tk.v1.Orders (CreateOrder), so that every pool
 *            and worker that starts on demand has started; the burst's
 *            clients are closed first;
 *   settled  SETTLE ms later, nothing called in between.
 * Numbers come from /proc/PID/smaps_rollup (Rss, Anonymous; file-backed is
 * the rest), /proc/PID/status (Threads) and /proc/PID/fd. Linux only.
 *
 *   bench-idle --tkd PATH --root DIR [--dsn DSN] [--calls N]
 *              [--callers C] [--burst K] [--settle-ms MS] [--rounds R]
 *
 * tkd is started as tools/run starts it (--listen ipc://..., --root DIR,
 * and the database with --dsn), at --log-level warn. DIR is a git
 * repository (tools/bench/idle makes one, a clone of this checkout). Each round
 * starts a tkd of its own; the table gives each moment's median over the
 * rounds. Output is markdown.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tk/client.h>

#include "bench.h"
#include "measure.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/git.tk.h"
#include "tk/v1/orders.tk.h"
#include "tk/v1/search.tk.h"

#define MAX_CALLERS 256
#define MAX_ROUNDS 15

enum { M_START, M_PINGS, M_BURST, M_SETTLED, N_MOMENTS };
static const char *const moment_names[N_MOMENTS] = {
    "idle after start",
    "after the Pings",
    "after the burst",
    "idle after the burst",
};

typedef struct sample {
    double rss_kib, anon_kib, file_kib, threads, fds;
} sample;

typedef struct config {
    const char *tkd, *root, *dsn;
    int calls, callers, burst, settle_ms, rounds;
} config;

static pid_t tkd_pid; /* the round's tkd, killed when the benchmark fails */

static void die(const char *what)
{
    fprintf(stderr, "bench-idle: %s\n", what);
    if (tkd_pid > 0)
        kill(tkd_pid, SIGKILL);
    _exit(1);
}

/* The value of field name ("Rss:") in a /proc file of pid, in its unit. */
static double proc_field(pid_t pid, const char *file, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        die("cannot read /proc (Linux only)");
    double v = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, name, n) == 0) {
            v = strtod(line + n, NULL);
            break;
        }
    (void)fclose(f);
    if (v < 0)
        die("a field /proc did not have");
    return v;
}

static double count_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        die("cannot list tkd's descriptors");
    double n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static sample take(pid_t pid)
{
    sample s;
    s.rss_kib = proc_field(pid, "smaps_rollup", "Rss:");
    s.anon_kib = proc_field(pid, "smaps_rollup", "Anonymous:");
    s.file_kib = s.rss_kib - s.anon_kib;
    s.threads = proc_field(pid, "status", "Threads:");
    s.fds = count_fds(pid);
    return s;
}

static void sleep_ms(int ms)
{
    struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void expect_ok(int code, tk_status *st, const char *what)
{
    if (code != TK_OK) {
        fprintf(stderr, "bench-idle: %s: code %d %s: %s\n", what, code,
                st->reason != NULL ? st->reason : "",
                st->message != NULL ? st->message : "");
        die("a call failed");
    }
    tk_status_clear(st);
}

static void ping(tk_client *c)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    Tk__V1__PingReply *rep = NULL;
    tk_status st;
    expect_ok(tk_control_ping(c, &req, &rep, NULL, &st), &st, "Ping");
    protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* One call of each service that has something to start. */
static void services(tk_client *c, const config *cfg)
{
    tk_status st;
    tk_call_opts o = { .timeout_ms = 30000 };
    Tk__V1__GitRevParseRequest rp = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    rp.repo = (char *)cfg->root;
    rp.rev = "HEAD";
    Tk__V1__GitRevParseReply *rpr = NULL;
    expect_ok(tk_git_rev_parse(c, &rp, &rpr, &o, &st), &st, "RevParse");
    protobuf_c_message_free_unpacked(&rpr->base, NULL);
    Tk__V1__GitLogRequest lg = TK__V1__GIT_LOG_REQUEST__INIT;
    lg.repo = (char *)cfg->root;
    lg.rev = "HEAD";
    lg.max_count = 50;
    Tk__V1__GitLogReply *lgr = NULL;
    expect_ok(tk_git_log(c, &lg, &lgr, &o, &st), &st, "Log");
    protobuf_c_message_free_unpacked(&lgr->base, NULL);
    Tk__V1__GitStatusRequest gs = TK__V1__GIT_STATUS_REQUEST__INIT;
    gs.repo = (char *)cfg->root;
    Tk__V1__GitStatusReply *gsr = NULL;
    expect_ok(tk_git_status(c, &gs, &gsr, &o, &st), &st, "Status");
    protobuf_c_message_free_unpacked(&gsr->base, NULL);
    Tk__V1__SearchRequest sr = TK__V1__SEARCH_REQUEST__INIT;
    sr.root = (char *)cfg->root;
    sr.query = "rpc_call";
    sr.limit = 100;
    Tk__V1__SearchReply *srr = NULL;
    expect_ok(tk_search_search(c, &sr, &srr, &o, &st), &st, "Search");
    protobuf_c_message_free_unpacked(&srr->base, NULL);
    if (cfg->dsn == NULL)
        return;
    Tk__V1__CreateOrderRequest co = TK__V1__CREATE_ORDER_REQUEST__INIT;
    Tk__V1__CreateOrderReply *cor = NULL;
    expect_ok(tk_orders_create_order(c, &co, &cor, &o, &st), &st,
              "CreateOrder");
    protobuf_c_message_free_unpacked(&cor->base, NULL);
}

typedef struct caller {
    const config *cfg;
    tk_client *client;
    int index;
    pthread_t thread;
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    const bool *go;
} caller;

static void *caller_main(void *arg)
{
    caller *c = arg;
    pthread_mutex_lock(c->mu);
    while (!*c->go)
        pthread_cond_wait(c->cv, c->mu);
    pthread_mutex_unlock(c->mu);
    for (int i = 0; i < c->cfg->burst; i++) {
        /* One caller in eight calls the services, three times over. */
        if (c->index % 8 == 0 && i % (c->cfg->burst / 3 + 1) == 0)
            services(c->client, c->cfg);
        ping(c->client);
    }
    return NULL;
}

static void burst(const config *cfg, const char *url)
{
    static caller callers[MAX_CALLERS];
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    bool go = false;
    for (int i = 0; i < cfg->callers; i++) {
        caller *c = &callers[i];
        *c =
            (caller){ .cfg = cfg, .index = i, .mu = &mu, .cv = &cv, .go = &go };
        if (tk_client_open(&c->client, url, NULL, 0) != TK_OK)
            die("cannot connect a caller");
        if (pthread_create(&c->thread, NULL, caller_main, c) != 0)
            die("cannot start a caller");
    }
    pthread_mutex_lock(&mu);
    go = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < cfg->callers; i++) {
        pthread_join(callers[i].thread, NULL);
        tk_client_close(callers[i].client);
    }
}

/* One tkd from start to stop: a sample of each moment. */
static void round_once(const config *cfg, int round, sample out[N_MOMENTS])
{
    char dir[] = "/tmp/tk-bench-idle-XXXXXX";
    if (mkdtemp(dir) == NULL)
        die("cannot make a temporary directory");
    char url[PATH_MAX + 16];
    snprintf(url, sizeof url, "ipc://%s/tkd.sock", dir);
    const char *argv[16];
    int n = 0;
    argv[n++] = cfg->tkd;
    argv[n++] = "--listen";
    argv[n++] = url;
    argv[n++] = "--root";
    argv[n++] = cfg->root;
    argv[n++] = "--log-level";
    argv[n++] = "warn";
    if (cfg->dsn != NULL) {
        argv[n++] = "--pg";
        argv[n++] = cfg->dsn;
    }
    argv[n] = NULL;
    pid_t pid;
    tk_client *c = bench_start_tkd(argv, url, &pid);
    tkd_pid = pid;
    sleep_ms(1000);
    out[M_START] = take(pid);
    for (int i = 0; i < cfg->calls; i++)
        ping(c);
    out[M_PINGS] = take(pid);
    burst(cfg, url);
    out[M_BURST] = take(pid);
    sleep_ms(cfg->settle_ms);
    out[M_SETTLED] = take(pid);
    tk_client_close(c);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    tkd_pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "bench-idle: round %d: tkd ended with status %d\n",
                round, status);
    char sock[PATH_MAX + 16];
    snprintf(sock, sizeof sock, "%s/tkd.sock", dir);
    unlink(sock);
    rmdir(dir);
}

static double median_of(sample rounds[][N_MOMENTS], int n, int m, size_t off)
{
    double v[MAX_ROUNDS];
    for (int r = 0; r < n; r++)
        v[r] = *(const double *)((const char *)&rounds[r][m] + off);
    return bench_median(v, n);
}

static bool parse(config *cfg, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            fprintf(stderr, "bench-idle: %s needs a value\n", a);
            return false;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(a, "--tkd") == 0)
            cfg->tkd = v;
        else if (strcmp(a, "--root") == 0)
            cfg->root = v;
        else if (strcmp(a, "--dsn") == 0)
            cfg->dsn = v[0] != '\0' ? v : NULL;
        else if (strcmp(a, "--calls") == 0)
            ok = bench_int_arg("bench-idle", a, v, 0, 100000000, &cfg->calls);
        else if (strcmp(a, "--callers") == 0)
            ok = bench_int_arg("bench-idle", a, v, 1, MAX_CALLERS,
                               &cfg->callers);
        else if (strcmp(a, "--burst") == 0)
            ok = bench_int_arg("bench-idle", a, v, 1, 1000000, &cfg->burst);
        else if (strcmp(a, "--settle-ms") == 0)
            ok = bench_int_arg("bench-idle", a, v, 0, 600000, &cfg->settle_ms);
        else if (strcmp(a, "--rounds") == 0)
            ok = bench_int_arg("bench-idle", a, v, 1, MAX_ROUNDS, &cfg->rounds);
        else {
            fprintf(stderr, "bench-idle: unknown option %s\n", a);
            return false;
        }
        if (!ok)
            return false;
    }
    if (cfg->tkd == NULL || cfg->root == NULL) {
        fprintf(stderr, "bench-idle: --tkd and --root are required\n");
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    config cfg = { .calls = 10000,
                   .callers = 64,
                   .burst = 100,
                   .settle_ms = 5000,
                   .rounds = 3 };
    if (!parse(&cfg, argc, argv))
        return 2;
    (void)signal(SIGPIPE, SIG_IGN);
    static sample rounds[MAX_ROUNDS][N_MOMENTS];
    for (int r = 0; r < cfg.rounds; r++)
        round_once(&cfg, r, rounds[r]);
    printf("tkd %s PostgreSQL; %d Pings, then %d callers x %d Pings with "
           "Git, Search%s calls; settled %d ms; median of %d rounds\n\n",
           cfg.dsn != NULL ? "with" : "without", cfg.calls, cfg.callers,
           cfg.burst, cfg.dsn != NULL ? " and Orders" : "", cfg.settle_ms,
           cfg.rounds);
    printf("| moment | RSS KiB | anon KiB | file KiB | threads | fds |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < N_MOMENTS; m++)
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", moment_names[m],
               median_of(rounds, cfg.rounds, m, offsetof(sample, rss_kib)),
               median_of(rounds, cfg.rounds, m, offsetof(sample, anon_kib)),
               median_of(rounds, cfg.rounds, m, offsetof(sample, file_kib)),
               median_of(rounds, cfg.rounds, m, offsetof(sample, threads)),
               median_of(rounds, cfg.rounds, m, offsetof(sample, fds)));
    return 0;
}
