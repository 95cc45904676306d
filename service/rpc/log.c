/* The process-wide log: one line per event on stderr. The level is published
 * atomically, so tests that start several servers never race on it.
 *
 * Lines are written by a thread of their own: rpc_log formats the line and
 * queues it under a short mutex, and never waits for stderr, because it
 * runs in NNG's callbacks (the log line of an inline method, or of a frame
 * answered before the queue), which must never block: a full stderr pipe
 * would stall them all. When the queue is full the line is dropped and
 * counted; the writer reports the count in a line of its own once it has
 * caught up. At exit the queue is flushed for a bounded time. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc_int.h"

#define LOG_LINE 1024
#define LOG_QUEUE 256u

static struct {
    pthread_mutex_t mu;
    pthread_cond_t more; /* a line was queued */
    pthread_cond_t idle; /* the queue drained and the writer is idle */
    char lines[LOG_QUEUE][LOG_LINE];
    size_t len[LOG_QUEUE];
    size_t head, count;
    bool writing;     /* the writer holds a line outside the lock */
    bool sync;        /* no writer thread: lines are written at once */
    uint64_t dropped; /* since the last report */
} q = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .more = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};
static pthread_once_t writer_once = PTHREAD_ONCE_INIT;

/* The whole buffer to stderr; gives up on an error other than EINTR. */
static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static size_t stamp(char *line, size_t size, const char *level);

static void *writer_main(void *arg)
{
    (void)arg;
    /* No signal is this thread's business (tkd takes its own by sigwait). */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    static char line[LOG_LINE];
    pthread_mutex_lock(&q.mu);
    for (;;) {
        while (q.count == 0 && q.dropped == 0) {
            pthread_cond_broadcast(&q.idle);
            pthread_cond_wait(&q.more, &q.mu);
        }
        size_t n;
        if (q.count > 0) {
            n = q.len[q.head];
            memcpy(line, q.lines[q.head], n);
            q.head = (q.head + 1) % LOG_QUEUE;
            q.count--;
        } else {
            /* Caught up after dropping: say how many went. */
            n = stamp(line, sizeof line, "warn");
            int k = snprintf(line + n, sizeof line - n,
                             "log: %llu line(s) dropped: stderr was not "
                             "keeping up\n",
                             (unsigned long long)q.dropped);
            n += k > 0 ? (size_t)k : 0;
            if (n > sizeof line - 1)
                n = sizeof line - 1;
            q.dropped = 0;
        }
        q.writing = true;
        pthread_mutex_unlock(&q.mu);
        write_all(line, n);
        pthread_mutex_lock(&q.mu);
        q.writing = false;
    }
    return NULL;
}

/* Waits, at most ms, until every queued line is written. */
static void flush_for(int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&q.mu);
    while (!q.sync && (q.count > 0 || q.writing || q.dropped > 0))
        if (pthread_cond_timedwait(&q.idle, &q.mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&q.mu);
}

static void flush_at_exit(void)
{
    flush_for(RPC_LOG_EXIT_FLUSH_MS);
}

static void start_writer(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, writer_main, NULL) != 0) {
        q.sync = true; /* pthread_once orders this before every reader */
        return;
    }
    pthread_detach(t);
    /* Should it fail, lines still queued at exit are lost; nothing else. */
    (void)atexit(flush_at_exit);
}

void rpc_log__flush(int timeout_ms)
{
    flush_for(timeout_ms);
}

/* Queues one line (with its newline); never waits for stderr. */
static void log_line(const char *line, size_t n)
{
    pthread_once(&writer_once, start_writer);
    pthread_mutex_lock(&q.mu);
    if (q.sync) {
        pthread_mutex_unlock(&q.mu);
        write_all(line, n);
        return;
    }
    if (q.count == LOG_QUEUE) {
        q.dropped++;
    } else {
        size_t i = (q.head + q.count) % LOG_QUEUE;
        memcpy(q.lines[i], line, n);
        q.len[i] = n;
        q.count++;
        pthread_cond_signal(&q.more);
    }
    pthread_mutex_unlock(&q.mu);
}

static _Atomic int log_level = RPC_LOG_INFO;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void rpc_log_set_level(rpc_log_level level)
{
    atomic_store(&log_level, (int)level);
}

int rpc_log_level_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++)
        if (strcmp(name, level_names[i]) == 0)
            return (int)i;
    return -1;
}

bool rpc_log_enabled(rpc_log_level level)
{
    return (int)level <= atomic_load(&log_level);
}

/* The line's prefix: time (UTC, ms) and level. Returns its length. */
static size_t stamp(char *line, size_t size, const char *level)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n =
        snprintf(line, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ tkd %s: ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, level);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* One line, written whole by the writer thread, so lines of concurrent
 * calls never interleave. */
__attribute__((format(printf, 2, 0))) static void
emit(rpc_log_level level, const char *fmt, va_list ap)
{
    char line[LOG_LINE];
    size_t n = stamp(line, sizeof line - 1, level_names[level]);
    int k = vsnprintf(line + n, sizeof line - 1 - n, fmt, ap);
    if (k < 0)
        return;
    n += (size_t)k < sizeof line - 1 - n ? (size_t)k : sizeof line - 2 - n;
    line[n++] = '\n';
    log_line(line, n);
}

void rpc_log(rpc_log_level level, const char *fmt, ...)
{
    if (!rpc_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, fmt, ap);
    va_end(ap);
}

void rpc_log__call(const rpc_call *call, int64_t elapsed_us)
{
    if (!rpc_log_enabled(RPC_LOG_INFO))
        return;
    rpc_log(RPC_LOG_INFO,
            "call method=%s code=%s reason=%s elapsed_us=%lld cause=%s "
            "conn=%u id=%llu",
            /* never the requested name: it is the peer's bytes */
            call->reg != NULL ? call->reg->method->name : "-",
            rpc_code_name(call->code),
            call->reason != NULL && call->reason[0] ? call->reason : "-",
            (long long)elapsed_us, rpc_cause_name(call->end_cause),
            (unsigned)call->peer.conn, (unsigned long long)call->id);
}

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *rpc_code_name(rpc_code code)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, (int)code);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *rpc_cause_name(rpc_cause cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, (int)cause);
    return v != NULL ? v->name : "NONE";
}
