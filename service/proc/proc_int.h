/* SPDX-License-Identifier: MIT */
/*
 * Internal to service/proc: what its files share. Nothing outside
 * service/proc includes this (the architecture test checks it).
 */
#ifndef TK_SERVICE_PROC_INT_H
#define TK_SERVICE_PROC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc.h"
#include "common/common.h"
#include "port/port.h"

/* ---- env.c: the environment snapshot ----------------------------------- */

/* The child's environment: the snapshot, less what opts->env overrides or
 * removes, plus opts->env's "K=V" entries. The strings are borrowed (from
 * the snapshot, which lives as long as the process, and from opts->env);
 * free the array alone. NULL when out of memory. */
char **proc__child_env(const proc_opts *opts);
/* PATH from the snapshot, or NULL. */
const char *proc__snapshot_path(void);

/* ---- sink.c: stdout sink and stderr excerpt ----------------------------- */

typedef enum proc_feed {
    PROC_FEED_OK = 0,
    PROC_FEED_STOP,     /* on_stdout returned PROC_STOP just now */
    PROC_FEED_OVERFLOW, /* stdout overflowed its cap just now */
} proc_feed;

typedef struct proc_sink {
    const proc_opts *opts;
    size_t cap;
    uint64_t total;
    bool overflow, stopped, records_cut;
    char *buf; /* captured stdout, or the record being assembled */
    size_t len, alloc;
    bool rec_cut; /* the record being assembled passed record_max */
    /* Of a cut record with record_resume: found (what follows is kept),
     * else the last bytes dropped, for a string that spans two reads. */
    bool resumed;
    char carry[PROC_RESUME_MARK_MAX];
    size_t carry_len;
} proc_sink;

typedef struct proc_excerpt {
    char *head, *tail; /* tail: a ring of tail_max bytes */
    size_t head_max, tail_max, head_len, tail_pos;
    uint64_t total;
} proc_excerpt;

void proc__sink_init(proc_sink *s, const proc_opts *opts);
proc_feed proc__sink_feed(proc_sink *s, const char *data, size_t len);
/* EOF: passes an unterminated last record. */
void proc__sink_eof(proc_sink *s);
/* Moves the captured stdout (or nothing) into r and frees the rest. */
void proc__sink_finish(proc_sink *s, proc_result *r);
void proc__sink_discard(proc_sink *s);

int proc__excerpt_init(proc_excerpt *e, const proc_opts *opts);
void proc__excerpt_feed(proc_excerpt *e, const char *data, size_t len);
void proc__excerpt_finish(proc_excerpt *e, proc_result *r);
void proc__excerpt_discard(proc_excerpt *e);

/* ---- spawn.c ------------------------------------------------------------ */

typedef struct proc_child {
    pid_t pid;
    int out_fd, err_fd; /* our read ends, non-blocking, close-on-exec */
} proc_child;

/* Starts opts->path. On failure returns -errno and sets r->spawn to the
 * part that failed. */
int proc__spawn(proc_child *c, const proc_opts *opts, proc_result *r);

/* guard.c: the guard (proc_guard_start) told of a READ's process group
 * once its leader is spawned, and when the run is done with it (before
 * the leader is reaped). No-ops without a guard. */
void proc__guard_add(pid_t pgid);
void proc__guard_remove(pid_t pgid);

/* ---- execute.c ---------------------------------------------------------- */

/* Spawns and supervises one run to its end: opts are valid and r is
 * initialised; test: proc__test_run's switches (proc.h), 0 in tkd.
 * Returns 0, or the negative errno of a failed start. */
int proc__execute(proc_result *r, const proc_opts *opts, unsigned test);

#endif /* TK_SERVICE_PROC_INT_H */
