/* SPDX-License-Identifier: MIT */
/* The process-wide log: one line per event on stderr, as text or as a JSON
 * object. The level and the format are published atomically, so tests
 * that start several servers never race on them.
 *
 * Lines are written by a thread of their own: obs_log formats the line and
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "obs.h"
#include "common/common.h"

#define LOG_LINE OBS_LOG_LINE
#define LOG_QUEUE 256u

static struct {
    pthread_mutex_t mu;
    pthread_cond_t more; /* a line was queued */
    pthread_cond_t idle; /* the queue drained and the writer is idle;
                          * CLOCK_MONOTONIC, made by start_writer */
    char lines[LOG_QUEUE][LOG_LINE];
    size_t len[LOG_QUEUE];
    size_t head, count;
    bool writing;     /* the writer holds a line outside the lock */
    bool sync;        /* no writer thread: lines are written at once */
    uint64_t dropped; /* since the last report */
} q = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .more = PTHREAD_COND_INITIALIZER,
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

/* The line that says how many lines were dropped; its length. */
static size_t dropped_line(char *line, size_t size, uint64_t dropped);

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
            n = dropped_line(line, sizeof line, q.dropped);
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

/* Waits, at most ms on the monotonic clock, until every queued line is
 * written. Only a queued line makes it wait, and a line is queued only
 * after start_writer made q.idle. */
static void flush_for(int ms)
{
    int64_t until = tkc_mono_ns() + (int64_t)ms * 1000000;
    pthread_mutex_lock(&q.mu);
    while (!q.sync && (q.count > 0 || q.writing || q.dropped > 0))
        if (tkc_cond_wait_until(&q.idle, &q.mu, until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&q.mu);
}

static void flush_at_exit(void)
{
    flush_for(OBS_LOG_EXIT_FLUSH_MS);
}

/* Whether stderr is the stream systemd connected to the journal: its
 * device and inode are JOURNAL_STREAM's ("DEV:INODE", systemd.exec(5)). */
static bool stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    if (js == NULL)
        return false;
    char *end;
    errno = 0;
    unsigned long long dev = strtoull(js, &end, 10);
    if (errno != 0 || end == js || *end != ':')
        return false;
    const char *at = end + 1;
    unsigned long long ino = strtoull(at, &end, 10);
    struct stat st;
    if (errno != 0 || end == at || *end != '\0' ||
        fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (unsigned long long)st.st_dev == dev &&
           (unsigned long long)st.st_ino == ino;
}

static bool to_journal; /* journal_once */
static pthread_once_t journal_once = PTHREAD_ONCE_INIT;

static void find_journal(void)
{
    to_journal = stderr_is_journal();
}

static void start_writer(void)
{
    pthread_t t;
    if (tkc_cond_init(&q.idle) != 0 ||
        pthread_create(&t, NULL, writer_main, NULL) != 0) {
        q.sync = true; /* pthread_once orders this before every reader */
        return;
    }
    pthread_detach(t);
    /* Should it fail, lines still queued at exit are lost; nothing else. */
    (void)atexit(flush_at_exit);
}

void obs_log_flush(int timeout_ms)
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

static _Atomic int log_level = OBS_LOG_INFO;
static _Atomic int log_format = OBS_LOG_TEXT;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* syslog's priorities, which journald reads from a line's "<N>" */
static const int level_priority[] = { 3, 4, 6, 7 };
static const char *const format_names[] = { "text", "json" };

void obs_log_set_format(obs_log_format format)
{
    atomic_store(&log_format, (int)format);
}

/* The index of name among n names, or -1. */
static int name_index(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return (int)i;
    return -1;
}

int obs_log_format_from_name(const char *name)
{
    return name_index(name, format_names,
                      sizeof format_names / sizeof format_names[0]);
}

void obs_log_set_level(obs_log_level level)
{
    atomic_store(&log_level, (int)level);
}

int obs_log_level_from_name(const char *name)
{
    return name_index(name, level_names,
                      sizeof level_names / sizeof level_names[0]);
}

bool obs_log_enabled(obs_log_level level)
{
    return (int)level <= atomic_load(&log_level);
}

/* Appends to a line of size bytes, at *n; what does not fit is cut (the
 * newline always has its byte: size is the line's size less one). */
__attribute__((format(printf, 4, 0))) static void
vput(char *line, size_t size, size_t *n, const char *fmt, va_list ap)
{
    if (*n >= size)
        return;
    int k = vsnprintf(line + *n, size - *n, fmt, ap);
    if (k > 0)
        *n += (size_t)k < size - *n ? (size_t)k : size - 1 - *n;
}

__attribute__((format(printf, 4, 5))) static void
put(char *line, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(line, size, n, fmt, ap);
    va_end(ap);
}

/* Appends s as a JSON string: quotes, backslashes and control characters
 * escaped; a byte that is not UTF-8 written as the four characters \xNN,
 * as tkd's replies write it (rpc/escape.c): a path a caller named need not be
 * UTF-8, and a JSON line must be. Cut at a character's end when the line
 * is full, and closed. */
static void put_json_string(char *line, size_t size, size_t *n, const char *s)
{
    put(line, size, n, "\"");
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    while (left > 0) {
        char esc[8];
        const char *piece = esc;
        size_t len = tkc_utf8_seq((const char *)p, left, NULL), plen;
        if (len > 1) {
            piece = (const char *)p;
            plen = len;
        } else if (len == 0) {
            len = 1;
            plen = (size_t)snprintf(esc, sizeof esc, "\\\\x%02X", *p);
        } else if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p;
            plen = 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            plen = (size_t)snprintf(esc, sizeof esc, "\\u%04x", *p);
        } else {
            esc[0] = (char)*p;
            plen = 1;
        }
        if (*n + plen + 2 >= size) /* room for the closing quote */
            break;
        memcpy(line + *n, piece, plen);
        *n += plen;
        p += len;
        left -= len;
    }
    put(line, size, n, "\"");
}

/* The line's beginning: the journal's priority, when stderr is its
 * stream; then in text the time (UTC, ms) and level, in JSON the object's
 * first members. Returns its length. */
static size_t stamp(char *line, size_t size, obs_log_level level)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = 0;
    pthread_once(&journal_once, find_journal);
    if (to_journal)
        put(line, size, &n, "<%d>", level_priority[level]);
    char when[64];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    if (atomic_load(&log_format) == OBS_LOG_JSON)
        put(line, size, &n, "{\"time\":\"%s\",\"level\":\"%s\",", when,
            level_names[level]);
    else
        put(line, size, &n, "%s tkd %s: ", when, level_names[level]);
    return n;
}

/* A JSON line's fields after its "msg", each "key":value. */
static void put_fields(char *line, size_t size, size_t *n,
                       const obs_field *fields, size_t nf)
{
    for (size_t i = 0; i < nf; i++) {
        /* a field whole or none: the line stays JSON when it is cut */
        if (*n + strlen(fields[i].key) + 28 >= size)
            return;
        put(line, size, n, ",\"%s\":", fields[i].key);
        if (fields[i].s != NULL)
            put_json_string(line, size, n, fields[i].s);
        else
            put(line, size, n, "%lld", fields[i].n);
    }
}

/* One line, written whole by the writer thread, so lines of concurrent
 * calls never interleave. */
__attribute__((format(printf, 4, 0))) static void
emit(obs_log_level level, const obs_field *fields, size_t nf, const char *fmt,
     va_list ap)
{
    char line[LOG_LINE];
    const size_t size = sizeof line - 1; /* the newline's byte kept */
    size_t n = stamp(line, size, level);
    if (atomic_load(&log_format) == OBS_LOG_JSON) {
        char msg[LOG_LINE];
        if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
            return;
        put(line, size, &n, "\"msg\":");
        put_json_string(line, size - 1, &n, msg); /* and the brace's */
        put_fields(line, size - 1, &n, fields, nf);
        put(line, size, &n, "}");
    } else {
        int k = vsnprintf(line + n, size - n, fmt, ap);
        if (k < 0)
            return;
        n += (size_t)k < size - n ? (size_t)k : size - 1 - n;
    }
    line[n++] = '\n';
    log_line(line, n);
}

static size_t dropped_line(char *line, size_t size, uint64_t dropped)
{
    size_t n = stamp(line, size - 1, OBS_LOG_WARN);
#define DROPPED "log: %llu line(s) dropped: stderr was not keeping up"
    if (atomic_load(&log_format) == OBS_LOG_JSON) {
        char msg[128];
        snprintf(msg, sizeof msg, DROPPED, (unsigned long long)dropped);
        put(line, size - 1, &n, "\"msg\":");
        put_json_string(line, size - 2, &n, msg);
        put(line, size - 1, &n, ",\"dropped\":%llu}",
            (unsigned long long)dropped);
    } else {
        put(line, size - 1, &n, DROPPED, (unsigned long long)dropped);
    }
    line[n++] = '\n';
    return n;
}

void obs_log(obs_log_level level, const char *fmt, ...)
{
    if (!obs_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, NULL, 0, fmt, ap);
    va_end(ap);
}

void obs_log_fields(obs_log_level level, const obs_field *fields, size_t n,
                    const char *fmt, ...)
{
    if (!obs_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, fields, n, fmt, ap);
    va_end(ap);
}

/* A line of fields of its own, as obs_log writes a message: the same
 * stamp, cut at the same size, queued the same way. */
void obs_log_line_begin(obs_log_line *l, obs_log_level level)
{
    l->len = stamp(l->text, sizeof l->text - 1, level);
}

void obs_log_line_put(obs_log_line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(l->text, sizeof l->text - 1, &l->len, fmt, ap);
    va_end(ap);
}

void obs_log_line_string(obs_log_line *l, const char *s)
{
    put_json_string(l->text, sizeof l->text - 1, &l->len, s);
}

void obs_log_line_end(obs_log_line *l)
{
    l->text[l->len++] = '\n';
    log_line(l->text, l->len);
}

obs_log_format obs_log_get_format(void)
{
    return (obs_log_format)atomic_load(&log_format);
}
