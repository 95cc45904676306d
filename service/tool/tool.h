/* SPDX-License-Identifier: MIT */
/*
 * tool — every program a call runs: the one bridge from rpc/ to proc/.
 *
 * Owns: turning a call into proc_opts (READ or WRITE by the method's kind;
 * a READ's cancel fd and deadline, a WRITE's abort fd and what is left of
 * its own timeout; the run's own bound; the call told the run's process
 * group), running it, and the one answer for every way a run can end
 * other than by the program's own exit: the call's cause first, then a
 * program that could not start, then the run's own bound and its output
 * cap (the table below). The reasons TOOL_NOT_FOUND, TOOL_NOT_STARTED,
 * TOOL_TIMEOUT and OUTPUT_TOO_LARGE are this module's.
 * May call: proc/, and rpc/ (the call handle), obs/ (the metrics), libc.
 * Must never: read an exit status or what a program printed (what they
 * mean is the module's that runs it: git's reasons table, search's exit 1
 * and 2, what launchctl and systemctl say); build an argv or an
 * environment; start a process but through proc_run; signal a process.
 *
 * The events and their one answer, judged in this order:
 *
 *   the call's cause (a READ's caller cancelled, its deadline passed, or
 *   tkd is shutting down; a WRITE's own timeout passed, or tkd stopped it
 *   past the shutdown grace), whatever the program did meanwhile — a
 *   WRITE that ended by itself excepted, which completed:
 *       rpc_call_fail_stopped: CANCELLED / DEADLINE_EXCEEDED (a WRITE:
 *       WRITE_TIMEOUT) / UNAVAILABLE SHUTTING_DOWN, with the cause
 *   the program is missing (not on tkd's PATH when it was looked up, or
 *   gone when it was started: ENOENT, ENOTDIR):
 *       FAILED_PRECONDITION TOOL_NOT_FOUND — tkd's machine lacks it; no
 *       request and no retry will do until someone installs it
 *   tkd's file descriptors are used up (EMFILE, ENFILE):
 *       RESOURCE_EXHAUSTED TOO_MANY_OPEN_FILES with retry_after_ms
 *       (rpc_call_fail_fds, as for every descriptor tkd needs)
 *   any other failure to start (not executable, the working directory
 *   unusable, no process or memory left):
 *       INTERNAL TOOL_NOT_STARTED — a fault of tkd's host the caller can
 *       neither fix nor wait out
 *   stdout over its cap (a READ; a WRITE's is discarded, never cut short):
 *       RESOURCE_EXHAUSTED OUTPUT_TOO_LARGE
 *   the run's own bound (tool_opts.timeout_ms) passed while the call
 *   still had time — a program that hangs:
 *       UNAVAILABLE TOOL_TIMEOUT with retry_after_ms
 *   on_stdout said PROC_STOP (a READ): no status; the module's success
 *       with fewer results (TOOL_END_LIMIT)
 *   the program ended by itself: no status; its exit status and output
 *       are the module's to judge (TOOL_END_EXITED)
 *
 * Every answer of a run that started says process_killed and cleanup_ms;
 * every failing answer of a WRITE says write_completed false (a WRITE
 * that ended by itself completed, whatever its status).
 */
#ifndef TK_SERVICE_TOOL_H
#define TK_SERVICE_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/proc.h"
#include "rpc/rpc.h"

#define TOOL_R_NOT_FOUND "TOOL_NOT_FOUND"
#define TOOL_R_NOT_STARTED "TOOL_NOT_STARTED"
#define TOOL_R_TIMEOUT "TOOL_TIMEOUT"
#define TOOL_R_OUTPUT_TOO_LARGE "OUTPUT_TOO_LARGE"
/* retry_after_ms of TOOL_TIMEOUT: a program that hung may not next time */
#define TOOL_TIMEOUT_RETRY_MS 1000u

/* How a run ended, as the call sees it (the table above). */
typedef enum tool_end {
    TOOL_END_EXITED = 0,  /* by itself: the status is the module's */
    TOOL_END_LIMIT,       /* on_stdout stopped it: a success */
    TOOL_END_STOPPED,     /* the call's cause ended it or kept it from
                             starting */
    TOOL_END_MISSING,     /* TOOL_NOT_FOUND */
    TOOL_END_NO_FDS,      /* TOO_MANY_OPEN_FILES */
    TOOL_END_NOT_STARTED, /* TOOL_NOT_STARTED */
    TOOL_END_OUTPUT_CAP,  /* OUTPUT_TOO_LARGE */
    TOOL_END_TIMEOUT,     /* TOOL_TIMEOUT */
} tool_end;

typedef struct tool_opts {
    /* What messages call the run: "git status", "rg", "launchctl". */
    const char *name;
    /* The module's part of the run: path (absolute, as proc_find_program
     * resolved it; NULL or "": not on tkd's PATH, TOOL_NOT_FOUND), argv,
     * env, cwd, the output caps and callbacks. kind, cancel_fd,
     * abort_fd, deadline_ns, timeout_ms and on_group are the bridge's:
     * whatever is set in them here is replaced. */
    proc_opts proc;
    /* The run's own bound, from its start; 0: none but the call's. A
     * READ's ceiling; a WRITE's, below the time left of its own timeout
     * (which bounds every run of a WRITE). */
    uint32_t timeout_ms;
    /* Only for a run with no call (tkd install): the deadline that stands
     * for the call's (CLOCK_MONOTONIC ns). Such a run is a WRITE. */
    int64_t deadline_ns;
} tool_opts;

/* proc_opts_init for proc, then name, path and argv; no own bound. */
void tool_opts_init(tool_opts *o, const char *name, const char *path,
                    const char *const *argv);

/* What was decided about a run: the answer, kept to be given now or
 * later (or, for a run whose failure the module can do without, not). */
typedef struct tool_answer {
    tool_end end;
    rpc_cause cause; /* TOOL_END_STOPPED: the call's (DEADLINE when none
                        was set and proc saw the deadline) */
    bool started;
    bool process_killed;
    uint32_t cleanup_ms;
    bool write;      /* a WRITE's: write_completed false when it fails */
    int spawn_errno; /* TOOL_END_NO_FDS: EMFILE or ENFILE */
    char message[512];
} tool_answer;

/* Runs the program for call and gives the call the answer: returns 0 when
 * it ended by itself (out holds its status and output: the module's to
 * judge), 1 when on_stdout stopped it (a success with fewer results:
 * setting partial is the module's), -1 when the call has failed (its
 * status is set). out's buffers are freed with proc_result_fini in every
 * case. */
int tool_run(proc_result *out, rpc_call *call, const tool_opts *o);

/* As tool_run, but the answer is left in *a and the call's status is not
 * touched (but for its tool, o->name, which every run names:
 * rpc_call_set_tool): for a module that gives it later (tool_give) or, for
 * a run it can do without, not at all. call may be NULL (tkd install):
 * then the run is a WRITE bound by o->deadline_ns, and nobody is told its
 * process group. Returns a->end. */
tool_end tool_try(proc_result *out, tool_answer *a, rpc_call *call,
                  const tool_opts *o);

/* Gives call the answer a (nothing for TOOL_END_EXITED; for
 * TOOL_END_LIMIT only process_killed and cleanup_ms). */
void tool_give(rpc_call *call, const tool_answer *a);

/* The status an answer gives, for who has no call to give it to: code and
 * reason (TOOL_END_STOPPED: DEADLINE_EXCEEDED, as a call whose time ran
 * out; RPC_OK and NULL for EXITED and LIMIT). */
rpc_code tool_answer_code(const tool_answer *a);
const char *tool_answer_reason(const tool_answer *a);

#endif /* TK_SERVICE_TOOL_H */
