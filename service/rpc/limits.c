/* File descriptors: the soft RLIMIT_NOFILE raised to the hard limit at
 * start and the capacity logged; a call that runs out of descriptors ends
 * RESOURCE_EXHAUSTED TOO_MANY_OPEN_FILES with a retry_after_ms, and the log
 * says so at most once a second, counting the failures it did not log (when
 * thousands of calls fail, one line each would bury the log). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "rpc_int.h"

/* A retry_after_ms for a call that ran out of descriptors: roughly what the
 * calls running now take to end and close theirs (the average service
 * time), within these bounds. */
#define FDS_RETRY_MIN_MS 100
#define FDS_RETRY_MAX_MS 10000
/* At most one warning line this often. */
#define FDS_LOG_EVERY_NS 1000000000LL

/* What a connection and a running tool hold (for the capacity line): a
 * connection its socket; a git or search tool its stdout and stderr pipes
 * and a pidfd (proc.h). */
#define FDS_PER_CONNECTION 1
#define FDS_PER_TOOL 3

static struct {
    pthread_mutex_t mu;
    int64_t last_ns; /* when the last warning was logged; 0: never */
    uint64_t unlogged;
    rlim_t raised_from; /* the soft limit before the raise; 0: not raised */
} fds = { .mu = PTHREAD_MUTEX_INITIALIZER };

bool rpc_fds_exhausted(int err)
{
    return err == EMFILE || err == ENFILE;
}

static rlim_t soft_limit(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
}

uint64_t rpc_fd_limit_raise(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur >= rl.rlim_max)
        return (uint64_t)rl.rlim_cur;
    struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
#ifdef __APPLE__
    /* macOS takes no soft limit above OPEN_MAX (setrlimit(2)). */
    if (want.rlim_cur > OPEN_MAX)
        want.rlim_cur = OPEN_MAX;
    if (rl.rlim_cur >= want.rlim_cur)
        return (uint64_t)rl.rlim_cur;
#endif
    if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
        char ebuf[128];
        rpc_log(RPC_LOG_WARN,
                "file descriptors: cannot raise the soft limit %llu to the "
                "hard limit %llu: %s",
                (unsigned long long)rl.rlim_cur,
                (unsigned long long)rl.rlim_max,
                port_strerror(errno, ebuf, sizeof ebuf));
        return (uint64_t)rl.rlim_cur;
    }
    pthread_mutex_lock(&fds.mu);
    fds.raised_from = rl.rlim_cur;
    pthread_mutex_unlock(&fds.mu);
    return (uint64_t)want.rlim_cur;
}

void rpc_fd_log_capacity(void)
{
    rlim_t limit = soft_limit();
    pthread_mutex_lock(&fds.mu);
    rlim_t from = fds.raised_from;
    pthread_mutex_unlock(&fds.mu);
    char raised[96] = "";
    if (from != 0)
        snprintf(raised, sizeof raised, " (raised from %llu to the hard limit)",
                 (unsigned long long)from);
    long used = port_fds_open();
    if (limit == RLIM_INFINITY || used < 0) {
        rpc_log(RPC_LOG_INFO, "file descriptors: limit %llu%s",
                (unsigned long long)limit, raised);
        return;
    }
    unsigned long long left =
        (unsigned long long)limit > (unsigned long long)used
            ? (unsigned long long)limit - (unsigned long long)used
            : 0;
    rpc_log(RPC_LOG_INFO,
            "file descriptors: limit %llu%s, %ld in use after start-up: room "
            "for about %llu connections (%d each) or %llu git or search "
            "tools running at once (%d each)",
            (unsigned long long)limit, raised, used, left / FDS_PER_CONNECTION,
            FDS_PER_CONNECTION, left / FDS_PER_TOOL, FDS_PER_TOOL);
}

static uint32_t fds_retry_after(const rpc_call *call)
{
    int64_t ms = FDS_RETRY_MIN_MS;
    if (call->slot != NULL)
        ms = atomic_load(&call->slot->srv->avg_service_us) / 1000;
    if (ms < FDS_RETRY_MIN_MS)
        ms = FDS_RETRY_MIN_MS;
    if (ms > FDS_RETRY_MAX_MS)
        ms = FDS_RETRY_MAX_MS;
    return (uint32_t)ms;
}

/* The warning, unless one was logged less than a second ago (then it is
 * counted, and the next line says how many went unlogged). */
static void log_exhausted(const rpc_call *call, int err, const char *what)
{
    int64_t now = rpc_now_ns();
    pthread_mutex_lock(&fds.mu);
    bool due = fds.last_ns == 0 || now - fds.last_ns >= FDS_LOG_EVERY_NS;
    uint64_t unlogged = fds.unlogged;
    if (due) {
        fds.last_ns = now;
        fds.unlogged = 0;
    } else {
        fds.unlogged++;
    }
    pthread_mutex_unlock(&fds.mu);
    if (!due)
        return;
    char more[96] = "";
    if (unlogged > 0)
        snprintf(more, sizeof more,
                 "; %llu more such call(s) since the last line",
                 (unsigned long long)unlogged);
    rpc_log(RPC_LOG_WARN,
            "out of file descriptors (%s, soft limit %llu): method=%s id=%llu "
            "conn=%u: %s%s",
            err == ENFILE ? "ENFILE: the system's table is full"
                          : "EMFILE: tkd's own limit",
            (unsigned long long)soft_limit(),
            call->reg != NULL ? call->reg->method->name : "-",
            (unsigned long long)call->id, (unsigned)call->peer.conn, what,
            more);
}

void rpc_call_fail_fds(rpc_call *call, int err, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    log_exhausted(call, err, what);
    if (err == ENFILE)
        rpc_call_fail(call, RPC_RESOURCE_EXHAUSTED, RPC_R_TOO_MANY_OPEN_FILES,
                      "%s: the system's file table is full; try again later",
                      what);
    else
        rpc_call_fail(call, RPC_RESOURCE_EXHAUSTED, RPC_R_TOO_MANY_OPEN_FILES,
                      "%s: tkd has used up its %llu file descriptors "
                      "(RLIMIT_NOFILE); try again later",
                      what, (unsigned long long)soft_limit());
    rpc_call_set_retry_after(call, fds_retry_after(call));
}
