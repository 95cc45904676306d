/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/metrics: what a tight loop of scrapers costs tkd's calls.
 * One caller's Pings (libtkclient, one connection, one after another)
 * against one tkd, without scrapers ("quiet") and with S threads that
 * scrape its --metrics-listen as fast as it answers ("scraped": a
 * connection a scrape, the whole answer read, as curl in a loop would),
 * the two alternating in each round, same tkd, same run. Prints each
 * phase's Ping p50 and p99, their ratio scraped/quiet, the scrapes
 * answered a second and tkd's CPU (user + system, /proc/PID/stat) a
 * second of each phase, and what the scrapers added to it; medians of
 * the rounds.
 *
 *   bench-metrics --tkd PATH [--scrapers S] [--calls N] [--rounds R]
 *
 * tkd runs with --listen ipc://... --metrics-listen http://127.0.0.1:PORT
 * and its other options at their defaults, so that tkd of any commit
 * runs (issue 31 measured 31f2572's: it rendered every scrape). Linux
 * only (/proc).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tk/client.h>

#include "bench.h"
#include "measure.h"

#include "tk/v1/control.tk.h"

#define MAX_ROUNDS 32
#define MAX_SCRAPERS 64

typedef struct config {
    const char *tkd;
    int scrapers, calls, rounds;
} config;

/* One phase of a round, measured. */
typedef struct phase {
    double p50_us, p99_us, seconds, cpu_s, scrapes;
} phase;

static pid_t tkd_pid;
static int metrics_port;
static atomic_bool scraping;
static atomic_long scrapes, scrape_errors;

static void die(const char *what)
{
    fprintf(stderr, "bench-metrics: %s\n", what);
    if (tkd_pid > 0)
        kill(tkd_pid, SIGKILL);
    _exit(1);
}

/* tkd's CPU time so far, user + system, in seconds. */
static double tkd_cpu_s(void)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)tkd_pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        die("cannot read /proc (Linux only)");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    /* After the command's ")": state is field 3, utime 14, stime 15. */
    char *p = strrchr(buf, ')');
    unsigned long long ticks = 0;
    char *save = NULL;
    int field = 2;
    for (char *w = p != NULL ? strtok_r(p + 1, " ", &save) : NULL;
         w != NULL && ++field <= 15; w = strtok_r(NULL, " ", &save))
        if (field >= 14)
            ticks += strtoull(w, NULL, 10);
    if (field < 15)
        die("cannot parse /proc/PID/stat");
    return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* A port nobody listens on now (the kernel's choice), for tkd to take. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        die("cannot find a free port");
    close(fd);
    return ntohs(a.sin_port);
}

/* The length of the answer in buf (headers and body), once its headers
 * are in; 0 until then. A tkd may keep the connection (NNG's server did),
 * so the end is Content-Length's, not the connection's. */
static size_t answer_len(const char *buf, size_t got)
{
    const char *end = memmem(buf, got, "\r\n\r\n", 4);
    if (end == NULL)
        return 0;
    const char *cl = memmem(buf, (size_t)(end - buf), "Content-Length:", 15);
    if (cl == NULL)
        cl = memmem(buf, (size_t)(end - buf), "content-length:", 15);
    size_t body = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
    return (size_t)(end - buf) + 4 + body;
}

/* One scrape on a connection of its own: 0, or -1. */
static int scrape_once(char *buf, size_t cap)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: tkd\r\n\r\n";
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)metrics_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rv = -1;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        send(fd, req, sizeof req - 1, MSG_NOSIGNAL) ==
            (ssize_t)sizeof req - 1) {
        size_t got = 0, want = 0;
        ssize_t n;
        while (got < cap && (n = recv(fd, buf + got, cap - got, 0)) > 0) {
            got += (size_t)n;
            want = want != 0 ? want : answer_len(buf, got);
            if (want != 0 && got >= want)
                break;
        }
        rv = want != 0 && got >= want && strncmp(buf, "HTTP/1.1 200", 12) == 0
                 ? 0
                 : -1;
    }
    if (fd >= 0)
        close(fd);
    return rv;
}

static void *scraper(void *arg)
{
    (void)arg;
    size_t cap = 4 << 20;
    char *buf = malloc(cap);
    if (buf == NULL)
        die("out of memory");
    while (atomic_load(&scraping)) {
        if (scrape_once(buf, cap) == 0)
            atomic_fetch_add(&scrapes, 1);
        else
            atomic_fetch_add(&scrape_errors, 1);
    }
    free(buf);
    return NULL;
}

/* calls Pings, one after another: the phase's latencies and times. */
static phase pings(tk_client *c, int calls, long long *lat)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    tk_call_opts opts = { .timeout_ms = 10000 };
    long before = atomic_load(&scrapes);
    double cpu0 = tkd_cpu_s();
    long long t0 = bench_now_ns();
    for (int i = 0; i < calls; i++) {
        Tk__V1__PingReply *rep = NULL;
        tk_status st;
        long long s = bench_now_ns();
        if (tk_control_ping(c, &req, &rep, &opts, &st) != TK_OK)
            die("a Ping failed");
        lat[i] = bench_now_ns() - s;
        protobuf_c_message_free_unpacked(&rep->base, NULL);
        tk_status_clear(&st);
    }
    phase p;
    p.seconds = (double)(bench_now_ns() - t0) / 1e9;
    p.cpu_s = tkd_cpu_s() - cpu0;
    p.scrapes = (double)(atomic_load(&scrapes) - before);
    qsort(lat, (size_t)calls, sizeof *lat, bench_cmp_ll);
    size_t mid = (size_t)calls / 2, p99 = (size_t)calls * 99 / 100;
    p.p50_us = (double)lat[mid] / 1e3;
    p.p99_us = (double)lat[p99] / 1e3;
    return p;
}

static phase scraped(const config *cfg, tk_client *c, long long *lat)
{
    pthread_t t[MAX_SCRAPERS];
    atomic_store(&scraping, true);
    for (int i = 0; i < cfg->scrapers; i++)
        if (pthread_create(&t[i], NULL, scraper, NULL) != 0)
            die("cannot start a scraper");
    /* Every scraper at work before the Pings: a first round of them. */
    while (atomic_load(&scrapes) + atomic_load(&scrape_errors) <
           (long)cfg->scrapers)
        sched_yield();
    phase p = pings(c, cfg->calls, lat);
    atomic_store(&scraping, false);
    for (int i = 0; i < cfg->scrapers; i++)
        pthread_join(t[i], NULL);
    return p;
}

static double median_of(phase *ph, int n, size_t off)
{
    double v[MAX_ROUNDS];
    for (int r = 0; r < n; r++)
        v[r] = *(const double *)((const char *)&ph[r] + off);
    return bench_median(v, n);
}

static void report(const config *cfg, phase *quiet, phase *loud)
{
    int n = cfg->rounds;
    double ratio[MAX_ROUNDS], extra[MAX_ROUNDS];
    for (int r = 0; r < n; r++) {
        ratio[r] = loud[r].p50_us / quiet[r].p50_us;
        /* What the scraping added to tkd's CPU, a second: both phases
         * made the same Pings, whatever their pace. */
        extra[r] = (loud[r].cpu_s - quiet[r].cpu_s) / loud[r].seconds;
    }
    printf("| phase | Ping p50 µs | Ping p99 µs | scrapes/s | tkd CPU s/s |\n");
    printf("|---|---:|---:|---:|---:|\n");
    phase *ph[2] = { quiet, loud };
    const char *names[2] = { "quiet", "scraped" };
    for (int k = 0; k < 2; k++)
        printf("| %s | %.0f | %.0f | %.0f | %.2f |\n", names[k],
               median_of(ph[k], n, offsetof(phase, p50_us)),
               median_of(ph[k], n, offsetof(phase, p99_us)),
               median_of(ph[k], n, offsetof(phase, scrapes)) /
                   median_of(ph[k], n, offsetof(phase, seconds)),
               median_of(ph[k], n, offsetof(phase, cpu_s)) /
                   median_of(ph[k], n, offsetof(phase, seconds)));
    printf("\nPing p50 scraped/quiet, each round:");
    for (int r = 0; r < n; r++)
        printf(" %.2f", ratio[r]);
    printf(" (median %.2f)\n", bench_median(ratio, n));
    printf("tkd CPU the scrapers added: median %.0f ms a second\n",
           bench_median(extra, n) * 1e3);
    printf("scrapes that failed: %ld\n", atomic_load(&scrape_errors));
}

static bool parse(config *cfg, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        bool ok = true;
        if (strcmp(a, "--tkd") == 0)
            cfg->tkd = v;
        else if (strcmp(a, "--scrapers") == 0)
            ok = bench_int_arg("bench-metrics", a, v, 0, MAX_SCRAPERS,
                               &cfg->scrapers);
        else if (strcmp(a, "--calls") == 0)
            ok = bench_int_arg("bench-metrics", a, v, 1, 10000000, &cfg->calls);
        else if (strcmp(a, "--rounds") == 0)
            ok = bench_int_arg("bench-metrics", a, v, 1, MAX_ROUNDS,
                               &cfg->rounds);
        else
            ok = false;
        if (!ok)
            return false;
    }
    return cfg->tkd != NULL && argc % 2 == 1;
}

int main(int argc, char **argv)
{
    config cfg = { .scrapers = 8, .calls = 20000, .rounds = 5 };
    if (!parse(&cfg, argc, argv)) {
        fprintf(stderr, "usage: bench-metrics --tkd PATH [--scrapers S] "
                        "[--calls N] [--rounds R]\n");
        return 2;
    }
    char dir[] = "/tmp/tk-bench-metrics-XXXXXX";
    if (mkdtemp(dir) == NULL)
        die("cannot make a temporary directory");
    char url[PATH_MAX + 16], murl[64];
    snprintf(url, sizeof url, "ipc://%s/tkd.sock", dir);
    metrics_port = free_port();
    snprintf(murl, sizeof murl, "http://127.0.0.1:%d", metrics_port);
    const char *targv[] = { cfg.tkd, "--listen",    url,    "--metrics-listen",
                            murl,    "--log-level", "warn", NULL };
    tk_client *c = bench_start_tkd(targv, url, &tkd_pid);
    long long *lat = calloc((size_t)cfg.calls, sizeof *lat);
    phase quiet[MAX_ROUNDS], loud[MAX_ROUNDS];
    if (lat == NULL)
        die("out of memory");
    for (int r = 0; r < cfg.rounds; r++) {
        /* Alternating which goes first, so that drift hits both. */
        if (r % 2 == 0)
            quiet[r] = pings(c, cfg.calls, lat);
        loud[r] = scraped(&cfg, c, lat);
        if (r % 2 == 1)
            quiet[r] = pings(c, cfg.calls, lat);
    }
    printf("tkd %s, %d scrapers, %d Pings a phase, %d rounds\n\n", cfg.tkd,
           cfg.scrapers, cfg.calls, cfg.rounds);
    report(&cfg, quiet, loud);
    free(lat);
    tk_client_close(c);
    kill(tkd_pid, SIGTERM);
    waitpid(tkd_pid, NULL, 0);
    char sock[PATH_MAX + 16];
    snprintf(sock, sizeof sock, "%s/tkd.sock", dir);
    unlink(sock);
    rmdir(dir);
    return 0;
}
