/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/git: tk.v1.Git through tkd against what a daemon that shells
 * out per read does — spawn git, read its stdout, reap it — on the same
 * repository, in the same run:
 *   RevParse HEAD     vs  git rev-parse HEAD
 *   Log of 50         vs  git log -50 (the same fields, --format, -z)
 *   Status            vs  git status --porcelain=v2 -z
 * and RevParse and Log again, "cold": the repository's config file is
 * touched before every call (on both sides), so that tkd's worker finds its
 * open repository changed and opens it again, with libgit2's object cache
 * empty — what the first read after any write costs.
 *
 *   bench-git --tkd PATH --repo DIR [--calls N] [--rounds R] [--only OP]
 *
 * tkd runs as its own process with --root at the repository's parent; one
 * caller; rounds alternate tkd / spawn so drift of the machine hits both.
 * Prints p50 and mean per call and the ratio spawn/tkd (how many times
 * faster tkd is) of the medians of the rounds. Then the floors, in the
 * same run and measured the same way: a round trip to tkd that does no
 * work (tk.v1.Control/Ping, answered inline), one through the worker pool
 * that does none (a RevParse refused before it opens anything), a
 * spawn of a program that does nothing (/bin/true), and a round trip of
 * the same size between two processes through a bare AF_UNIX socketpair.
 * No tk.v1.Git method can beat the second, no spawning peer the third,
 * no transport between processes the fourth.
 * --only OP (revparse, log, status, revparse-cold, log-cold) runs one
 * method alone, flat out, for a profiler: OP's tkd side, --calls calls,
 * no table.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tk/client.h>

#include "measure.h"
#include "bench.h"
#include "proc/proc.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/git.tk.h"

static const char *repo;
static tk_client *client;
static char git[4096];

/* ---- one call of each kind ------------------------------------------------
 */

static int tkd_rev_parse(void)
{
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = (char *)repo;
    req.rev = "HEAD";
    Tk__V1__GitRevParseReply *rep;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_git_rev_parse(client, &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code;
}

static int tkd_log(void)
{
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = (char *)repo;
    req.max_count = 50;
    Tk__V1__GitLogReply *rep;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_git_log(client, &req, &rep, &o, &st);
    if (code == TK_OK) {
        if (rep->n_commits != 50)
            code = -1;
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    }
    tk_status_clear(&st);
    return code;
}

static int tkd_status(void)
{
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitStatusReply *rep;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_git_status(client, &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code;
}

/* A RevParse that names no repository: refused (INVALID_ARGUMENT) by the
 * handler before any work, after the transport and the worker pool. */
static int tkd_pool_floor(void)
{
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = "";
    req.rev = "HEAD";
    Tk__V1__GitRevParseReply *rep;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_git_rev_parse(client, &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code == TK_CODE_INVALID_ARGUMENT ? 0 : -1;
}

static int tkd_ping(void)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    Tk__V1__PingReply *rep;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 10000 };
    int code = tk_control_ping(client, &req, &rep, &o, &st);
    if (code == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return code;
}

/* Spawns argv[0], reads all of its stdout, reaps it: the peer. */
static int spawn_argv(const char *const *argv)
{
    return bench_run_drain(argv, NULL, NULL, NULL) == 0 ? 0 : -1;
}

/* Spawns git with args in the repository. */
static int spawn_git(const char *const *args)
{
    const char *argv[16] = { git, "-C", repo };
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return spawn_argv(argv);
}

/* ---- the kernel's round trip --------------------------------------------- */

/* cat, its stdin and stdout one end of a socketpair: a process that sends
 * back what it reads, for a round trip between two processes through the
 * kernel alone (no NNG, no tkd), the least any transport that crosses
 * processes costs here. */
#define ECHO_BYTES 98 /* Ping's frame */
static int echo_fd = -1;
static pid_t echo_pid = -1;

static void start_echo(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("bench-git: socketpair");
        _exit(1);
    }
    static const char *const argv[] = { "/bin/cat", NULL };
    echo_pid = bench_spawn(argv, NULL, sv[1], sv[1], NULL);
    if (echo_pid < 0) {
        perror("bench-git: /bin/cat");
        _exit(1);
    }
    close(sv[1]);
    echo_fd = sv[0];
}

static void stop_echo(void)
{
    close(echo_fd); /* cat reads EOF and exits */
    waitpid(echo_pid, NULL, 0);
}

static int unix_round_trip(void)
{
    char b[ECHO_BYTES] = { 0 };
    if (write(echo_fd, b, sizeof b) != (ssize_t)sizeof b)
        return -1;
    for (size_t got = 0; got < sizeof b;) {
        ssize_t n = read(echo_fd, b + got, sizeof b - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

static int spawn_true(void)
{
    const char *argv[] = { "/bin/true", NULL };
    return spawn_argv(argv);
}

/* Touches the repository's config file: a change tkd's cache sees. */
static void touch_config(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/.git/config", repo);
    utimensat(AT_FDCWD, path, NULL, 0);
}

static int tkd_rev_parse_cold(void)
{
    touch_config();
    return tkd_rev_parse();
}

static int tkd_log_cold(void)
{
    touch_config();
    return tkd_log();
}

static int spawn_rev_parse(void)
{
    const char *a[] = { "rev-parse", "HEAD", NULL };
    return spawn_git(a);
}

static int spawn_log(void)
{
    static const char format[] = "--format=%H%x1f%P%x1f%an%x1f%ae%x1f%ad"
                                 "%x1f%cn%x1f%ce%x1f%cd%x1f%s%x1f%b";
    const char *a[] = { "log", "-50", "-z", "--date=raw", format, NULL };
    return spawn_git(a);
}

static int spawn_rev_parse_cold(void)
{
    touch_config();
    return spawn_rev_parse();
}

static int spawn_log_cold(void)
{
    touch_config();
    return spawn_log();
}

static int spawn_status(void)
{
    const char *a[] = { "status", "--porcelain=v2", "-z", NULL };
    return spawn_git(a);
}

/* ---- measuring ------------------------------------------------------------
 */

typedef struct op {
    const char *key, *name, *peer;
    int (*tkd)(void);
    int (*spawn)(void);
    bool in_process; /* answered in tkd (libgit2), not by a spawned git */
} op;

static const op ops[] = {
    { "revparse", "RevParse HEAD", "git rev-parse HEAD", tkd_rev_parse,
      spawn_rev_parse, true },
    { "log", "Log 50", "git log -50 (same fields)", tkd_log, spawn_log, true },
    { "status", "Status", "git status --porcelain=v2 -z", tkd_status,
      spawn_status, false },
    { "revparse-cold", "RevParse HEAD, cold", "git rev-parse HEAD",
      tkd_rev_parse_cold, spawn_rev_parse_cold, true },
    { "log-cold", "Log 50, cold", "git log -50 (same fields)", tkd_log_cold,
      spawn_log_cold, true },
};

typedef struct result {
    double p50_us, mean_us;
    int errors;
} result;

static result measure(int (*fn)(void), int calls)
{
    long long *t = malloc((size_t)calls * sizeof *t);
    result r = { 0, 0, 0 };
    long long sum = 0;
    for (int i = 0; i < calls; i++) {
        long long t0 = bench_now_ns();
        r.errors += fn() != 0;
        t[i] = bench_now_ns() - t0;
        sum += t[i];
    }
    qsort(t, (size_t)calls, sizeof *t, bench_cmp_ll);
    long long mid = t[(size_t)calls / 2];
    r.p50_us = (double)mid / 1000.0;
    r.mean_us = (double)sum / calls / 1000.0;
    free(t);
    return r;
}

/* Medians over the rounds of p50 and mean, [0] tkd and [1] spawn. */
typedef struct medians {
    double p50[2], mean[2];
} medians;

static medians bench_rounds(const op *o, int calls, int rounds, int *errors)
{
    double p50[2][9], mean[2][9];
    measure(o->tkd, calls / 10 + 1); /* warm up */
    measure(o->spawn, calls / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        for (int s = 0; s < 2; s++) {
            int k = (r + s) % 2; /* 0 tkd, 1 spawn; alternate the order */
            result res = measure(k == 0 ? o->tkd : o->spawn, calls);
            p50[k][r] = res.p50_us;
            mean[k][r] = res.mean_us;
            *errors += res.errors;
        }
    }
    medians m;
    for (int k = 0; k < 2; k++) {
        m.p50[k] = bench_median(p50[k], rounds);
        m.mean[k] = bench_median(mean[k], rounds);
    }
    return m;
}

static medians bench(const op *o, int calls, int rounds, int *errors)
{
    medians m = bench_rounds(o, calls, rounds, errors);
    printf("| %s | %.1f | %.1f | %s | %.1f | %.1f | %.2f |\n", o->name,
           m.p50[0], m.mean[0], o->peer, m.p50[1], m.mean[1],
           m.p50[1] / m.p50[0]);
    return m;
}

#define N_OPS (sizeof ops / sizeof ops[0])

/* The floors, measured as the table is (rounds, the order rotating),
 * and what they allow: a method of tk.v1.Git answered by a tkd that did no
 * work at all would take the pool floor's time. */
static void run_floors(int calls, int rounds, int *errors, const medians *m)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } f[] = {
        { "tkd: Control/Ping, answered inline (the transport)", tkd_ping },
        { "tkd: RevParse refused before any work (transport + worker pool)",
          tkd_pool_floor },
        { "spawn: /bin/true (posix_spawn, read, reap)", spawn_true },
        { "kernel: AF_UNIX round trip to another process, 98 bytes (no NNG)",
          unix_round_trip },
    };
    enum { N = 4 };
    double p50[N][9], mean[N][9];
    for (int i = 0; i < N; i++)
        measure(f[i].fn, calls / 10 + 1); /* warm up */
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < N; j++) {
            int k = (r + j) % N;
            result res = measure(f[k].fn, calls);
            p50[k][r] = res.p50_us;
            mean[k][r] = res.mean_us;
            *errors += res.errors;
        }
    }
    printf("\n| floor | p50 µs | mean µs |\n|---|---|---|\n");
    double pool = 0;
    for (int i = 0; i < N; i++) {
        double p = bench_median(p50[i], rounds);
        printf("| %s | %.1f | %.1f |\n", f[i].name, p,
               bench_median(mean[i], rounds));
        if (f[i].fn == tkd_pool_floor)
            pool = p;
    }
    printf("\n| method | its spawn's p50 / the pool floor's p50: the most "
           "spawn/tkd can be here |\n|---|---|\n");
    for (size_t i = 0; i < N_OPS; i++)
        if (ops[i].in_process)
            printf("| %s | %.2f |\n", ops[i].name, m[i].p50[1] / pool);
}

static void run_table(int calls, int rounds, int *errors)
{
    printf("| method | tkd p50 µs | tkd mean µs | spawned per call | p50 µs "
           "| mean µs | spawn/tkd (p50) |\n|---|---|---|---|---|---|---|\n");
    medians m[N_OPS];
    for (size_t i = 0; i < N_OPS; i++)
        m[i] = bench(&ops[i], calls, rounds, errors);
    run_floors(calls, rounds, errors, m);
}

/* --only: one method's tkd side, flat out. */
static void run_only(const op *o, int calls, int *errors)
{
    long long t0 = bench_now_ns();
    for (int i = 0; i < calls; i++)
        *errors += o->tkd() != 0;
    double us = (double)(bench_now_ns() - t0) / 1000.0 / calls;
    printf("%s: %d calls, %.1f µs per call\n", o->name, calls, us);
}

/* ---- tkd ------------------------------------------------------------------
 */

static pid_t start_tkd(const char *tkd, const char *url, const char *root)
{
    const char *argv[] = { tkd,  "--listen",    url,    "--root",
                           root, "--log-level", "warn", NULL };
    pid_t pid;
    client = bench_start_tkd(argv, url, &pid);
    return pid;
}

typedef struct args {
    const char *tkd;
    int calls, rounds;
    const op *only;
} args;

static const op *find_op(const char *key)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(ops[i].key, key) == 0)
            return &ops[i];
    return NULL;
}

/* 0, or 2 with a message. */
static int parse_args(args *a, int argc, char **argv)
{
    *a = (args){ .calls = 1000, .rounds = 3 };
    bool bad_only = false;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--tkd") == 0 && v != NULL)
            a->tkd = v;
        else if (strcmp(argv[i], "--repo") == 0 && v != NULL)
            repo = v;
        else if (strcmp(argv[i], "--calls") == 0 && v != NULL)
            a->calls = (int)strtol(v, NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && v != NULL)
            a->rounds = (int)strtol(v, NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && v != NULL)
            bad_only = (a->only = find_op(v)) == NULL;
        else {
            fprintf(stderr,
                    "usage: bench-git --tkd PATH --repo DIR [--calls N] "
                    "[--rounds R] [--only "
                    "revparse|log|status|revparse-cold|log-cold]\n");
            return 2;
        }
    }
    if (a->tkd == NULL || repo == NULL || a->rounds < 1 || a->rounds > 9 ||
        a->calls < 10 || bad_only) {
        fprintf(stderr, "bench-git: --tkd and --repo are required; "
                        "rounds 1..9, calls >= 10, --only "
                        "revparse|log|status|revparse-cold|log-cold\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    if (parse_args(&a, argc, argv) != 0)
        return 2;
    if (proc_find_program(git, sizeof git, "git", NULL) != 0) {
        fprintf(stderr, "bench-git: no git on PATH\n");
        return 1;
    }
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigaction(SIGPIPE, &ign, NULL);
    char dir[] = "/tmp/tk-bench-XXXXXX", url[128], root[4096];
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(url, sizeof url, "ipc://%s/tkd.sock", dir);
    snprintf(root, sizeof root, "%s", repo);
    char *slash = strrchr(root, '/');
    if (slash != NULL && slash != root)
        *slash = '\0';
    start_echo();
    pid_t pid = start_tkd(a.tkd, url, root);

    int errors = 0;
    if (a.only != NULL) {
        run_only(a.only, a.calls, &errors);
    } else {
        run_table(a.calls, a.rounds, &errors);
        printf("\n%d calls per measurement, %d rounds (medians), one caller, "
               "errors: %d\n",
               a.calls, a.rounds, errors);
    }
    tk_client_close(client);
    stop_echo();
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    char sock[256];
    snprintf(sock, sizeof sock, "%s/tkd.sock", dir);
    unlink(sock);
    rmdir(dir);
    return errors == 0 ? 0 : 1;
}
