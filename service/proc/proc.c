/* SPDX-License-Identifier: MIT */
/* proc_run's front: options, a caller that is already gone, the result and
 * its description. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_int.h"

void proc_opts_init(proc_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->kind = PROC_READ;
    opts->cancel_fd = -1;
    opts->abort_fd = -1;
    opts->deadline_ns = INT64_MAX;
    opts->cap_policy = PROC_CAP_KILL;
    opts->record_delim = '\n';
}

static bool valid_env(const char *const *env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
        if (env[i][0] == '\0' || env[i][0] == '=')
            return false;
    return true;
}

static int validate(const proc_opts *o)
{
    if (o->path == NULL || o->path[0] != '/' || o->argv == NULL ||
        o->argv[0] == NULL || !valid_env(o->env))
        return -EINVAL;
    if (o->kind != PROC_READ && o->kind != PROC_WRITE)
        return -EINVAL;
    if (o->record_max > 0 && o->on_stdout == NULL)
        return -EINVAL;
    if (o->cap_policy != PROC_CAP_KILL && o->cap_policy != PROC_CAP_DISCARD)
        return -EINVAL;
    if (o->kind == PROC_READ && o->cancel_fd >= 0 &&
        fcntl(o->cancel_fd, F_GETFD) < 0)
        return -EINVAL;
    if (o->kind == PROC_WRITE && o->abort_fd >= 0 &&
        fcntl(o->abort_fd, F_GETFD) < 0)
        return -EINVAL;
    return 0;
}

static bool readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* A READ whose caller has already cancelled or run out of time does not
 * start: the reason is the caller's, as it would be a moment later. Nor
 * does a WRITE its owner has already abandoned. */
static bool caller_gone(const proc_opts *o, proc_end *end)
{
    if (o->kind == PROC_WRITE) {
        *end = PROC_END_ABORTED;
        return readable(o->abort_fd);
    }
    if (readable(o->cancel_fd)) {
        *end = PROC_END_CANCELLED;
        return true;
    }
    if (proc_now_ns() >= o->deadline_ns) {
        *end = PROC_END_DEADLINE;
        return true;
    }
    return false;
}

static int run(proc_result *out, const proc_opts *opts, unsigned test)
{
    memset(out, 0, sizeof *out);
    out->end = PROC_END_NOT_STARTED;
    out->pid = -1;
    if (opts == NULL)
        return -EINVAL;
    out->kind = opts->kind;
    out->timeout_ms =
        opts->timeout_ms != 0 ? opts->timeout_ms : PROC_DEFAULT_TIMEOUT_MS;
    int rv = validate(opts);
    if (rv != 0)
        return rv;
    proc_end end;
    if (caller_gone(opts, &end)) {
        out->end = end;
        return 0;
    }
    return proc__execute(out, opts, test);
}

int proc_run(proc_result *out, const proc_opts *opts)
{
    return run(out, opts, 0);
}

void proc_result_fini(proc_result *r)
{
    if (r == NULL)
        return;
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
    r->out_len = r->err_len = 0;
}

const char *proc_end_name(proc_end end)
{
    static const char *const names[] = {
        [PROC_END_NOT_STARTED] = "NOT_STARTED",
        [PROC_END_EXITED] = "EXITED",
        [PROC_END_CANCELLED] = "CANCELLED",
        [PROC_END_DEADLINE] = "DEADLINE",
        [PROC_END_STOPPED] = "STOPPED",
        [PROC_END_OUTPUT_CAP] = "OUTPUT_CAP",
        [PROC_END_TIMEOUT] = "TIMEOUT",
        [PROC_END_ABORTED] = "ABORTED",
    };
    if ((unsigned)end < sizeof names / sizeof *names && names[end] != NULL)
        return names[end];
    return "UNKNOWN";
}

static int describe_not_started(char *buf, size_t len, const proc_result *r)
{
    static const char *const what[] = {
        [PROC_SPAWN_OK] = "not started",
        [PROC_SPAWN_NOT_FOUND] = "program not found",
        [PROC_SPAWN_NOT_EXECUTABLE] = "program not executable",
        [PROC_SPAWN_BAD_CWD] = "working directory not usable",
        [PROC_SPAWN_SYSTEM] = "could not start the program",
    };
    const char *w = (unsigned)r->spawn < sizeof what / sizeof *what
                        ? what[r->spawn]
                        : what[PROC_SPAWN_SYSTEM];
    char ebuf[128];
    const char *e = r->spawn_errno != 0
                        ? tkc_strerror(r->spawn_errno, ebuf, sizeof ebuf)
                        : "invalid options";
    return snprintf(buf, len, "%s (%s)", w, e);
}

static int describe_exit(char *buf, size_t len, const proc_result *r)
{
    const proc_status *s = &r->status;
    if (s->kind == PROC_STATUS_EXITED)
        return snprintf(buf, len, "exited with status %d", s->code);
    if (s->kind == PROC_STATUS_SIGNALED) {
        const char *abbrev = port_signal_name(s->signal);
        return snprintf(buf, len, "killed by signal %d (SIG%s), not by tk",
                        s->signal, abbrev != NULL ? abbrev : "?");
    }
    return snprintf(buf, len, "ended (status unknown)");
}

/* How a WRITE cut short ended: by SIGTERM, or SIGKILL after it. */
static const char *write_kill(const proc_result *r)
{
    return r->kill_signal == SIGTERM ? "ended after SIGTERM"
                                     : "SIGTERM, then SIGKILL";
}

static int describe_timeout(char *buf, size_t len, const proc_result *r)
{
    if (r->kind == PROC_WRITE)
        return snprintf(buf, len, "write timed out after %u ms (%s)",
                        r->timeout_ms, write_kill(r));
    return snprintf(buf, len,
                    "ran past its ceiling of %u ms (process group killed)",
                    r->timeout_ms);
}

int proc_result_describe(char *buf, size_t len, const proc_result *r)
{
    const char *killed =
        r->started ? "process group killed" : "before it started";
    switch (r->end) {
    case PROC_END_NOT_STARTED:
        return describe_not_started(buf, len, r);
    case PROC_END_EXITED:
        return describe_exit(buf, len, r);
    case PROC_END_CANCELLED:
        return snprintf(buf, len, "cancelled by the caller (%s)", killed);
    case PROC_END_DEADLINE:
        return snprintf(buf, len, "deadline passed (%s)", killed);
    case PROC_END_STOPPED:
        return snprintf(buf, len, "stopped by its reader (%s)", killed);
    case PROC_END_OUTPUT_CAP:
        return snprintf(buf, len, "stdout exceeded its cap (%s)", killed);
    case PROC_END_TIMEOUT:
        return describe_timeout(buf, len, r);
    case PROC_END_ABORTED:
        if (!r->started)
            return snprintf(buf, len,
                            "write abandoned by its owner before it started");
        return snprintf(buf, len, "write abandoned by its owner (%s)",
                        write_kill(r));
    }
    return snprintf(buf, len, "unknown end");
}

int proc__test_run(proc_result *out, const proc_opts *opts, unsigned test)
{
    return run(out, opts, test);
}
