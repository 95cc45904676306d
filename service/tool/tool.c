/* SPDX-License-Identifier: MIT */
/* The bridge: a call's bounds into proc_opts, the run, and the one
 * answer for how it ended (tool.h has the table). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"
#include "obs/obs.h"

void tool_opts_init(tool_opts *o, const char *name, const char *path,
                    const char *const *argv)
{
    memset(o, 0, sizeof *o);
    proc_opts_init(&o->proc);
    o->name = name;
    o->proc.path = path;
    o->proc.argv = argv;
    o->deadline_ns = INT64_MAX;
}

/* ---- the call's bounds -------------------------------------------------- */

/* proc's on_group: the call names the run's process group (at shutdown). */
static void note_group(void *call, pid_t pgid)
{
    rpc_call_set_process(call, pgid);
}

/* Milliseconds until deadline, rounded up (so that a bound of that many
 * ms from now ends at or after it, never before), at most UINT32_MAX; 0
 * when it has passed. */
static uint32_t ms_until(int64_t deadline)
{
    int64_t ns = deadline - proc_now_ns();
    if (ns <= 0)
        return 0;
    int64_t ms = ns / 1000000 + (ns % 1000000 != 0);
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

static bool is_write(const rpc_call *call)
{
    return call == NULL || rpc_call_kind(call) == RPC_WRITE;
}

static int64_t deadline_of(const rpc_call *call, const tool_opts *o)
{
    return call != NULL ? rpc_call_deadline(call) : o->deadline_ns;
}

/* A READ ends at the call's deadline (proc watches it) or its own bound;
 * a WRITE ignores its caller and ends at the earlier of what is left of
 * its own timeout and its own bound, or when tkd stops it past the
 * shutdown grace (abort_fd). */
static void opts_for(proc_opts *p, rpc_call *call, const tool_opts *o,
                     uint32_t left)
{
    *p = o->proc;
    p->cancel_fd = -1;
    p->abort_fd = -1;
    p->deadline_ns = INT64_MAX;
    p->on_group = NULL;
    p->on_group_arg = NULL;
    if (is_write(call)) {
        p->kind = PROC_WRITE;
        p->abort_fd = call != NULL ? rpc_call_cancel_fd(call) : -1;
        p->timeout_ms =
            o->timeout_ms != 0 && o->timeout_ms < left ? o->timeout_ms : left;
    } else {
        p->kind = PROC_READ;
        p->cancel_fd = rpc_call_cancel_fd(call);
        p->deadline_ns = rpc_call_deadline(call);
        p->timeout_ms = o->timeout_ms != 0 ? o->timeout_ms
                        : left != 0        ? left
                                           : 1;
    }
    if (call != NULL) {
        p->on_group = note_group;
        p->on_group_arg = call;
    }
}

/* ---- judging ------------------------------------------------------------ */

/* Why the call must stop now: the call's own cause, or for a run with no
 * call, its deadline. */
static rpc_cause cause_of(const rpc_call *call, int64_t deadline)
{
    if (call != NULL)
        return rpc_call_cause(call);
    return proc_now_ns() >= deadline ? RPC_CAUSE_DEADLINE : RPC_CAUSE_NONE;
}

static tool_end not_started(const proc_result *r)
{
    if (r->spawn == PROC_SPAWN_NOT_FOUND)
        return TOOL_END_MISSING;
    if (rpc_fds_exhausted(r->spawn_errno))
        return TOOL_END_NO_FDS;
    return TOOL_END_NOT_STARTED;
}

/* The order of tool.h's table: the call's cause first, then could not
 * start, then the run's own bounds. */
static tool_end judge(const proc_result *r, bool write, rpc_cause cause)
{
    if (r->end == PROC_END_EXITED && (write || cause == RPC_CAUSE_NONE))
        return TOOL_END_EXITED; /* a WRITE that ended by itself completed */
    if (cause != RPC_CAUSE_NONE || r->end == PROC_END_CANCELLED ||
        r->end == PROC_END_DEADLINE || r->end == PROC_END_ABORTED)
        return TOOL_END_STOPPED;
    switch (r->end) {
    case PROC_END_NOT_STARTED:
        return not_started(r);
    case PROC_END_STOPPED:
        return TOOL_END_LIMIT;
    case PROC_END_OUTPUT_CAP:
        return TOOL_END_OUTPUT_CAP;
    default: /* PROC_END_TIMEOUT: the run's own bound came first */
        return TOOL_END_TIMEOUT;
    }
}

static size_t cap_of(const proc_opts *p)
{
    if (p->stdout_cap != 0)
        return p->stdout_cap;
    return p->on_stdout == NULL ? PROC_DEFAULT_STDOUT_CAP : 0;
}

static const char *cause_text(rpc_cause cause)
{
    switch (cause) {
    case RPC_CAUSE_CALLER:
        return "cancelled by the caller";
    case RPC_CAUSE_SHUTDOWN:
        return "tkd is shutting down";
    default:
        return "the call's time is up";
    }
}

static void describe(tool_answer *a, const proc_result *r, const proc_opts *p,
                     const char *name)
{
    char how[256];
    proc_result_describe(how, sizeof how, r);
    switch (a->end) {
    case TOOL_END_MISSING:
    case TOOL_END_NO_FDS:
    case TOOL_END_NOT_STARTED:
        snprintf(a->message, sizeof a->message, "%s could not start: %s", name,
                 how);
        break;
    case TOOL_END_OUTPUT_CAP:
        snprintf(a->message, sizeof a->message,
                 "%s printed more than %zu bytes", name, cap_of(p));
        break;
    case TOOL_END_STOPPED:
        if (r->started)
            snprintf(a->message, sizeof a->message, "%s stopped: %s (%s)", name,
                     cause_text(a->cause), how);
        else
            snprintf(a->message, sizeof a->message, "%s not started: %s", name,
                     cause_text(a->cause));
        break;
    default:
        snprintf(a->message, sizeof a->message, "%s: %s", name, how);
        break;
    }
}

/* The cause proc saw, when the call had none yet (a cancel seen by proc
 * first is the caller's; an abort, shutdown's). */
static rpc_cause cause_of_end(proc_end end)
{
    if (end == PROC_END_CANCELLED)
        return RPC_CAUSE_CALLER;
    return end == PROC_END_ABORTED ? RPC_CAUSE_SHUTDOWN : RPC_CAUSE_DEADLINE;
}

static void answer_of(tool_answer *a, const proc_result *r, bool write,
                      rpc_cause cause)
{
    memset(a, 0, sizeof *a);
    a->end = judge(r, write, cause);
    if (a->end == TOOL_END_STOPPED)
        a->cause = cause != RPC_CAUSE_NONE ? cause : cause_of_end(r->end);
    a->started = r->started;
    a->process_killed = r->process_killed;
    a->cleanup_ms = r->cleanup_ms;
    a->write = write;
    a->spawn_errno = r->spawn_errno;
}

/* The metrics of a run: started, killed and why (a READ's cancel fd
 * fires for its caller and for shutdown: cause, the call's, says which),
 * its cleanup. */
static void count_run(const proc_result *r, rpc_cause cause)
{
    if (!r->started)
        return;
    obs_metric_add(OBS_M_PROCESSES_SPAWNED, 1);
    if (r->end == PROC_END_DEADLINE || r->end == PROC_END_TIMEOUT)
        obs_metric_add(OBS_M_PROCESSES_TIMED_OUT, 1);
    if (!r->process_killed)
        return;
    obs_metric why;
    switch (r->end) {
    case PROC_END_CANCELLED:
        why = cause == RPC_CAUSE_SHUTDOWN ? OBS_M_PROCESSES_KILLED_SHUTDOWN
                                          : OBS_M_PROCESSES_KILLED_CALLER;
        break;
    case PROC_END_DEADLINE:
        why = OBS_M_PROCESSES_KILLED_DEADLINE;
        break;
    case PROC_END_TIMEOUT:
        why = OBS_M_PROCESSES_KILLED_TIMEOUT;
        break;
    case PROC_END_STOPPED:
        why = OBS_M_PROCESSES_KILLED_LIMIT;
        break;
    case PROC_END_OUTPUT_CAP:
        why = OBS_M_PROCESSES_KILLED_OUTPUT_CAP;
        break;
    default: /* PROC_END_ABORTED: shutdown stopped a write */
        why = OBS_M_PROCESSES_KILLED_SHUTDOWN;
        break;
    }
    obs_metric_add(why, 1);
    obs_metric_observe(OBS_H_PROCESS_CLEANUP, (int64_t)r->cleanup_ms * 1000);
}

/* A program nobody found on tkd's PATH: never handed to proc. */
static tool_end unresolved(proc_result *out, tool_answer *a,
                           const rpc_call *call, const tool_opts *o)
{
    memset(out, 0, sizeof *out);
    out->end = PROC_END_NOT_STARTED;
    out->pid = -1;
    out->spawn = PROC_SPAWN_NOT_FOUND;
    out->spawn_errno = ENOENT;
    bool write = is_write(call);
    out->kind = write ? PROC_WRITE : PROC_READ;
    answer_of(a, out, write, cause_of(call, deadline_of(call, o)));
    if (a->end != TOOL_END_MISSING) {
        describe(a, out, &o->proc, o->name);
        return a->end;
    }
    const char *prog =
        o->proc.argv != NULL && o->proc.argv[0] != NULL ? o->proc.argv[0] : "";
    snprintf(a->message, sizeof a->message,
             "%s could not start: %s is not on tkd's PATH (install it and "
             "restart tkd)",
             o->name, prog);
    return a->end;
}

tool_end tool_try(proc_result *out, tool_answer *a, rpc_call *call,
                  const tool_opts *o)
{
    if (call != NULL)
        rpc_call_set_tool(call, o->name);
    if (o->proc.path == NULL || o->proc.path[0] == '\0')
        return unresolved(out, a, call, o);
    bool write = is_write(call);
    int64_t deadline = deadline_of(call, o);
    uint32_t left = ms_until(deadline);
    proc_opts p;
    opts_for(&p, call, o, left);
    if (write && left == 0) {
        /* Its own timeout has passed: the write must not start. */
        memset(out, 0, sizeof *out);
        out->end = PROC_END_ABORTED;
        out->pid = -1;
        out->kind = PROC_WRITE;
    } else {
        /* Every program a WRITE runs is part of its write. */
        if (write && call != NULL)
            rpc_call_write_begins(call);
        /* out says all there is (a failed start: out->started false). */
        (void)proc_run(out, &p);
        count_run(out, cause_of(call, deadline));
    }
    answer_of(a, out, write, cause_of(call, deadline));
    describe(a, out, &p, o->name);
    return a->end;
}

/* ---- answering ---------------------------------------------------------- */

rpc_code tool_answer_code(const tool_answer *a)
{
    switch (a->end) {
    case TOOL_END_STOPPED:
        return RPC_DEADLINE_EXCEEDED;
    case TOOL_END_MISSING:
        return RPC_FAILED_PRECONDITION;
    case TOOL_END_NO_FDS:
    case TOOL_END_OUTPUT_CAP:
        return RPC_RESOURCE_EXHAUSTED;
    case TOOL_END_NOT_STARTED:
        return RPC_INTERNAL;
    case TOOL_END_TIMEOUT:
        return RPC_UNAVAILABLE;
    default:
        return RPC_OK;
    }
}

const char *tool_answer_reason(const tool_answer *a)
{
    switch (a->end) {
    case TOOL_END_STOPPED:
        return a->write ? "WRITE_TIMEOUT" : NULL;
    case TOOL_END_MISSING:
        return TOOL_R_NOT_FOUND;
    case TOOL_END_NO_FDS:
        return RPC_R_TOO_MANY_OPEN_FILES;
    case TOOL_END_NOT_STARTED:
        return TOOL_R_NOT_STARTED;
    case TOOL_END_OUTPUT_CAP:
        return TOOL_R_OUTPUT_TOO_LARGE;
    case TOOL_END_TIMEOUT:
        return TOOL_R_TIMEOUT;
    default:
        return NULL;
    }
}

void tool_give(rpc_call *call, const tool_answer *a)
{
    if (a->end == TOOL_END_EXITED)
        return;
    if (a->started)
        rpc_call_set_cleanup(call, a->process_killed, a->cleanup_ms);
    if (a->end == TOOL_END_LIMIT)
        return;
    if (a->write)
        rpc_call_set_write_completed(call, false);
    switch (a->end) {
    case TOOL_END_STOPPED:
        rpc_call_fail_stopped(call);
        return;
    case TOOL_END_NO_FDS:
        rpc_call_fail_fds(call, a->spawn_errno, "%s", a->message);
        return;
    case TOOL_END_TIMEOUT:
        rpc_call_set_retry_after(call, TOOL_TIMEOUT_RETRY_MS);
        break;
    default:
        break;
    }
    rpc_call_fail(call, tool_answer_code(a), tool_answer_reason(a), "%s",
                  a->message);
}

int tool_run(proc_result *out, rpc_call *call, const tool_opts *o)
{
    tool_answer a;
    tool_end end = tool_try(out, &a, call, o);
    tool_give(call, &a);
    if (end == TOOL_END_EXITED)
        return 0;
    return end == TOOL_END_LIMIT ? 1 : -1;
}
