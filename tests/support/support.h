/* SPDX-License-Identifier: MIT */
/*
 * Test support: temporary directories, child processes with captured
 * output, and waiting on them by their output (never by sleeping).
 * Used by tests only; service code starts processes through service/proc/.
 */
#ifndef TK_TESTS_SUPPORT_H
#define TK_TESTS_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The environment of this process, `environ`, on every system: glibc's
 * <unistd.h> declares it (_GNU_SOURCE); no macOS header does, and
 * Apple's <crt_externs.h> gives it to code that may end up in a library
 * (environ(7)), as service/proc/env.c takes it. */
#ifdef __APPLE__
#include <crt_externs.h>
#define environ (*_NSGetEnviron())
#else
#include <unistd.h>
#endif

/* A fresh directory under $TMPDIR (or /tmp); ts_rmtree removes it. */
int ts_mkdtemp(char *out, size_t len, const char *tag);
int ts_rmtree(const char *path);
/* pipe2(fds, O_CLOEXEC) where there is one (Linux), else pipe and
 * FD_CLOEXEC on both ends; -1 and errno on failure. */
int ts_pipe_cloexec(int fds[2]);

typedef struct ts_proc {
    pid_t pid;
    int out_fd; /* read end of the child's stdout, or -1 */
    int err_fd; /* read end of the child's stderr, or -1 */
    char *out;  /* everything read so far from stdout (NUL-terminated) */
    size_t out_len;
    char *err;
    size_t err_len;
    bool reaped;
    int status; /* waitpid status once reaped */
} ts_proc;

/* Starts argv[0] (a path) with the given extra environment entries
 * ("K=V", NULL-terminated; may be NULL) on top of the current one. stdin
 * is /dev/null; stdout and stderr are captured. The child gets its own
 * process group. */
int ts_spawn(ts_proc *p, const char *const argv[], const char *const env[]);

/* As ts_spawn, with stdin read from the file at stdin_path (NULL: as
 * ts_spawn, /dev/null). For programs that read their input from stdin. */
int ts_spawn_in(ts_proc *p, const char *const argv[], const char *const env[],
                const char *stdin_path);

/* Reads the child's output until needle appears in stdout (which = 1) or
 * stderr (which = 2), or timeout_ms passes, or both streams close.
 * Returns true when found. */
bool ts_wait_output(ts_proc *p, int which, const char *needle, int timeout_ms);

/* As ts_wait_output, until needle has appeared count times in all. */
bool ts_wait_output_n(ts_proc *p, int which, const char *needle, int count,
                      int timeout_ms);

/* How many times needle occurs in hay (0 when hay is NULL). */
int ts_count(const char *hay, const char *needle);

/* Reads until both streams close, then reaps. Returns the exit status
 * (WEXITSTATUS), 128+signal when killed, or -1 on timeout (the child is
 * then killed). */
int ts_finish(ts_proc *p, int timeout_ms);

void ts_signal(ts_proc *p, int sig);
void ts_proc_free(ts_proc *p);

/* The path of a built program handed to the test by meson in an
 * environment variable (TKD, TKCALL, TESTD); aborts the test if unset. */
const char *ts_program(const char *var);

/* For a test process that is a child subreaper (PR_SET_CHILD_SUBREAPER):
 * what a killed process group leaves behind comes back to it. */

/* Waits (bounded, through pidfds) until pid has terminated and has been
 * handed to this process, then reaps it. Returns its wait status, or -1. */
int ts_reap_orphan(pid_t pid, int timeout_ms);
/* Whether any process of the group still exists. */
bool ts_group_exists(pid_t pgid);
/* Reaps every child of the group (its members must be dying); returns
 * true when then nothing of the group is left. */
bool ts_reap_group(pid_t pgid);

/* Milliseconds of CLOCK_MONOTONIC. */
long long ts_now_ms(void);

#endif
