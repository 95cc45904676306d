/* SPDX-License-Identifier: MIT */
/*
 * obs — observability: tkd's process-wide log and metrics.
 *
 * Owns: the log (logging.c): one line an event on stderr, as text or as a
 * JSON object, with the journal's priority when stderr is its stream,
 * queued for a writer thread of its own and flushed for a bounded time at
 * exit; its level and format. The metrics every module counts
 * (metrics.c): counters, gauges and histograms of durations, each with
 * its Prometheus name and help, and the histogram every count of a
 * duration uses (rpc/'s per method too). Process-wide: one tkd is one
 * process, and every module logs and counts, so obs/ sits beneath them
 * all. rpc/ reads the metrics, with its own, as tk.v1.Control/Stats and
 * for its Prometheus listener, and writes a call's line with
 * obs_log_line_*.
 * May call: libc only (and pthreads), and common/.
 * Must never: use another module of tkd (all of them use obs/: the
 * architecture test keeps it beneath them); make a caller wait for stderr
 * (lines are queued, and dropped and counted when the queue is full: the
 * log runs in NNG's callbacks, which must never block); take a lock to
 * count (one relaxed atomic operation an update); know a call, a server
 * or a transport.
 */
#ifndef TK_SERVICE_OBS_H
#define TK_SERVICE_OBS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the process-wide log (stderr) -------------------------------------- */

typedef enum obs_log_level {
    OBS_LOG_ERROR = 0,
    OBS_LOG_WARN = 1,
    OBS_LOG_INFO = 2,
    OBS_LOG_DEBUG = 3,
} obs_log_level;

/* Published atomically: safe while other threads log. */
void obs_log_set_level(obs_log_level level);
/* "error", "warn", "info", "debug"; returns -1 when unknown. */
int obs_log_level_from_name(const char *name);
bool obs_log_enabled(obs_log_level level);
void obs_log(obs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A value a line names, for a JSON line's member of its own: a string (s
 * not NULL) or an integer (n). key is the program's, never a peer's. */
typedef struct obs_field {
    const char *key;
    const char *s;
    long long n;
} obs_field;
#define OBS_STR(k, v) ((obs_field){ .key = (k), .s = (v) })
#define OBS_INT(k, v) ((obs_field){ .key = (k), .n = (long long)(v) })
/* obs_log, and in JSON the n fields beside "msg" (text: the message only,
 * which says the values itself). */
void obs_log_fields(obs_log_level level, const obs_field *fields, size_t n,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* How a line reads. TEXT: "TIME tkd LEVEL: message". JSON: one object a
 * line, {"time","level","msg"}, and the values the message names as
 * members of their own where the line was written with obs_log_fields; a
 * call's line has its fields apart too ({"time","level","msg","event":
 * "call","method","call_id","peer":{"conn","uid","pid"},"code","reason",
 * "elapsed_us","cause"}: rpc/ writes it with obs_log_line_*). Either way, when
 * stderr is the journal's stream (systemd: JOURNAL_STREAM names it), a line
 * starts with the syslog priority journald reads ("<6>" for info). Published
 * atomically, like the level. */
typedef enum obs_log_format {
    OBS_LOG_TEXT = 0,
    OBS_LOG_JSON = 1,
} obs_log_format;
void obs_log_set_format(obs_log_format format);
/* "text", "json"; returns -1 when unknown. */
int obs_log_format_from_name(const char *name);
/* The format lines are written in now. */
obs_log_format obs_log_get_format(void);

/* A line built piece by piece, for one with fields of its own (a call's,
 * in JSON): begun with the stamp of every line (the journal's priority,
 * the time, the level), appended to with printf's formats and as JSON
 * strings, cut where a line of obs_log would be, and queued by _end. */
#define OBS_LOG_LINE 1024
typedef struct obs_log_line {
    char text[OBS_LOG_LINE];
    size_t len;
} obs_log_line;
void obs_log_line_begin(obs_log_line *l, obs_log_level level);
void obs_log_line_put(obs_log_line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s as a JSON string: quoted, escaped, a byte that is not UTF-8 as \xNN. */
void obs_log_line_string(obs_log_line *l, const char *s);
void obs_log_line_end(obs_log_line *l);

/* Waits, at most timeout_ms, until the queued lines are written (before an
 * abort, which skips the flush at exit). */
void obs_log_flush(int timeout_ms);
/* How long the log is flushed at exit, at most (what a shutdown's bound,
 * rpc_shutdown_bound_ms, counts for it). */
#define OBS_LOG_EXIT_FLUSH_MS 2000

/* ---- metrics ------------------------------------------------------------
 * What tkd's modules count as they work, read by tk.v1.Control/Stats and
 * the Prometheus listener (rpc/, which counts the calls, the queue, the
 * connections and the bytes itself). Each update is one relaxed atomic
 * operation and takes no lock, so it costs the hot path next to nothing;
 * a reader may see one update of a call and not yet another, never a torn
 * value. */

typedef enum obs_metric {
    /* counters */
    OBS_M_PROCESSES_SPAWNED,       /* tool/: a program started */
    OBS_M_PROCESSES_KILLED_CALLER, /* its group killed: the caller cancelled */
    OBS_M_PROCESSES_KILLED_DEADLINE,   /* ... the caller's deadline passed */
    OBS_M_PROCESSES_KILLED_TIMEOUT,    /* ... its own timeout passed */
    OBS_M_PROCESSES_KILLED_LIMIT,      /* ... the caller's limit was met */
    OBS_M_PROCESSES_KILLED_OUTPUT_CAP, /* ... its output overflowed the cap */
    OBS_M_PROCESSES_KILLED_SHUTDOWN,   /* ... tkd shut down */
    OBS_M_PROCESSES_TIMED_OUT,   /* a time bound ended it: deadline, timeout */
    OBS_M_GIT_READS_LIBGIT2,     /* git/: a read done in process */
    OBS_M_GIT_READS_CLI,         /* ... by running git */
    OBS_M_PG_CONNECTIONS_BROKEN, /* orders/: a connection found broken */
    OBS_M_PG_LOCK_TIMEOUTS,      /* ... a lock not granted in lock_timeout */
    /* gauges (obs_metric_add with +1 and -1) */
    OBS_M_SEARCH_SLOTS_BUSY, /* search/: searches running */
    OBS_M_SEARCH_WAITING,    /* ... searches waiting for a slot */
    OBS_M_PG_POOL_IN_USE,    /* orders/: connections a call holds */
    OBS_M_PG_POOL_WAITING,   /* ... calls waiting for one */
    OBS_M_COUNT,
} obs_metric;

/* Adds n (a gauge: n may be negative). */
void obs_metric_add(obs_metric m, int64_t n);
/* Its value now. */
int64_t obs_metric_value(obs_metric m);

typedef enum obs_histogram {
    /* tool/: from the decision to stop a program to its group reaped and
     * its pipes drained (Cancellation.cleanup_ms), for a killed one */
    OBS_H_PROCESS_CLEANUP,
    OBS_H_COUNT,
} obs_histogram;

/* Counts one observation of us microseconds. */
void obs_metric_observe(obs_histogram h, int64_t us);
/* How many it has counted. */
uint64_t obs_metric_observations(obs_histogram h);

/* ---- what reads the metrics: rpc/'s Stats (and its own histograms) ---- */

/* Histogram buckets, by upper bound in microseconds; one more past the
 * last: +Inf. */
#define OBS_HIST_BOUNDS 19
extern const int64_t obs_hist_bounds_us[OBS_HIST_BOUNDS];

/* A histogram of durations: per bucket the observations that fell in it
 * (not cumulative: one increment an observation), and their sum. Zeroed
 * memory is an empty one. */
typedef struct obs_hist {
    _Atomic uint64_t bucket[OBS_HIST_BOUNDS + 1];
    _Atomic uint64_t sum_us;
} obs_hist;

/* Counts one observation of us microseconds (below 0: 0). */
void obs_hist_observe(obs_hist *h, int64_t us);
/* The observations it holds. */
uint64_t obs_hist_count(const obs_hist *h);

typedef enum obs_metric_type {
    OBS_METRIC_COUNTER,
    OBS_METRIC_GAUGE,
} obs_metric_type;
/* What a metric is called where it is read: its Prometheus family, its
 * help and type, and its one label (entries of one family differ by it). */
typedef struct obs_metric_def {
    const char *family; /* Prometheus name */
    const char *help;
    obs_metric_type type;
    const char *label, *value; /* its one label, or NULL */
} obs_metric_def;
extern const obs_metric_def obs_metric_defs[OBS_M_COUNT];
typedef struct obs_hist_def {
    const char *family;
    const char *help;
} obs_hist_def;
extern const obs_hist_def obs_hist_defs[OBS_H_COUNT];
const obs_hist *obs_hist_of(obs_histogram h);

#endif /* TK_SERVICE_OBS_H */
