/* git through proc/: the argv every run starts with, the environment that
 * makes git non-interactive and parseable, and the judgement of a run
 * (the call's cancel and deadline first, git's exit status second). */
#include <string.h>

#include "git_int.h"

void tkgit__argv_init(tkgit_argv *a, rpc_call *call, const char *subcommand)
{
    memset(a, 0, sizeof *a);
    a->call = call;
    tkgit__argv_add(a, "git");
    /* Non-ASCII paths as their bytes, not octal escapes. */
    tkgit__argv_add(a, "-c");
    tkgit__argv_add(a, "core.quotepath=off");
    tkgit__argv_add(a, subcommand);
}

void tkgit__argv_add(tkgit_argv *a, const char *arg)
{
    /* One spare slot for the terminating NULL. */
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap < 16 ? 16 : a->cap * 2;
        const char **v = rpc_call_alloc(a->call, cap * sizeof *v);
        if (a->n > 0)
            memcpy(v, a->v, a->n * sizeof *v);
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = arg;
    a->v[a->n] = NULL;
}

void tkgit__argv_paths(tkgit_argv *a, size_t n, const ProtobufCBinaryData *p)
{
    tkgit__argv_add(a, "--");
    for (size_t i = 0; i < n; i++)
        tkgit__argv_add(
            a, rpc_call_strndup(a->call, (const char *)p[i].data, p[i].len));
}

/* GIT_LITERAL_PATHSPECS: a caller's '*' or ':(glob)' is part of a name. */
static const char *const read_env[] = {
    "GIT_TERMINAL_PROMPT=0",   "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C",
    "GIT_LITERAL_PATHSPECS=1", "GIT_PAGER=cat",        NULL,
};
/* A write may take its locks; no editor may wait for a human. */
static const char *const write_env[] = {
    "GIT_TERMINAL_PROMPT=0",
    "LC_ALL=C",
    "GIT_LITERAL_PATHSPECS=1",
    "GIT_PAGER=cat",
    "GIT_EDITOR=true",
    "GIT_SEQUENCE_EDITOR=true",
    NULL,
};

/* proc's on_group: the call names git's process group at shutdown. */
static void note_group(void *call, pid_t pgid)
{
    rpc_call_set_process(call, pgid);
}

static void opts_for(proc_opts *o, const tkgit_run *run, const tkgit_argv *argv)
{
    proc_opts_init(o);
    o->path = run->g->git;
    o->argv = argv->v;
    o->cwd = run->repo->cwd;
    int64_t deadline = rpc_call_deadline(run->call);
    int64_t left_ms = (deadline - rpc_now_ns()) / 1000000;
    if (left_ms < 1)
        left_ms = 1;
    if (rpc_call_kind(run->call) == RPC_WRITE) {
        o->kind = PROC_WRITE;
        o->env = write_env;
        /* The write's own timeout: what is left of the method's. */
        o->timeout_ms = (uint32_t)left_ms;
        /* Fires only when tkd stops the write past its shutdown grace. */
        o->abort_fd = rpc_call_cancel_fd(run->call);
    } else {
        o->kind = PROC_READ;
        o->env = read_env;
        o->cancel_fd = rpc_call_cancel_fd(run->call);
        o->deadline_ns = deadline;
        o->timeout_ms = run->g->read_ceiling_ms;
    }
    o->on_stdout = run->on_out;
    o->on_stdout_arg = run->on_out_arg;
    o->on_group = note_group;
    o->on_group_arg = run->call;
    if (run->on_out != NULL)
        o->record_max = run->record_max; /* lines: proc's default delim */
}

void tkgit__run_init(tkgit_run *run, const tkgit *g, rpc_call *call,
                     const tkgit_repo *repo, const char *what)
{
    memset(run, 0, sizeof *run);
    run->g = g;
    run->call = call;
    run->repo = repo;
    run->what = what;
}

/* The run ended before git did: our kill, never git's failure. */
static int stopped(const tkgit_run *run, const proc_result *r)
{
    rpc_call_set_cleanup(run->call, r->process_killed, r->cleanup_ms);
    if (r->end == PROC_END_STOPPED) /* the caller's limit was reached */
        return 0;
    if (r->end == PROC_END_OUTPUT_CAP) {
        rpc_call_fail(run->call, RPC_RESOURCE_EXHAUSTED, TKGIT_R_PARTIAL_OUTPUT,
                      "%s printed more than %zu bytes", run->what,
                      (size_t)PROC_DEFAULT_STDOUT_CAP);
        return -1;
    }
    if (r->kind == PROC_WRITE)
        rpc_call_set_write_completed(run->call, false);
    rpc_call_fail_stopped(run->call);
    return -1;
}

int tkgit__run(proc_result *r, const tkgit_run *run, const tkgit_argv *argv,
               bool ok_exit1)
{
    if (run->g->git[0] == '\0') {
        /* tkd serves the rest (and RevParse, Log) without git on PATH. */
        memset(r, 0, sizeof *r);
        rpc_call_fail(run->call, RPC_FAILED_PRECONDITION, "GIT_NOT_FOUND",
                      "%s needs the git program, which is not on tkd's PATH "
                      "(install git and restart tkd)",
                      run->what);
        return -1;
    }
    proc_opts o;
    opts_for(&o, run, argv);
    int rv = proc_run(r, &o);
    if (rv < 0) {
        char how[256];
        proc_result_describe(how, sizeof how, r);
        if (rpc_fds_exhausted(r->spawn_errno))
            rpc_call_fail_fds(run->call, r->spawn_errno,
                              "%s could not start: %s", run->what, how);
        else
            rpc_call_fail(run->call, RPC_INTERNAL, "GIT_NOT_STARTED",
                          "%s could not start: %s", run->what, how);
        return -1;
    }
    if (r->err_len > 0)
        rpc_call_set_stderr(run->call, r->err, r->err_len);
    if (r->end != PROC_END_EXITED)
        return stopped(run, r);
    if (r->status.kind == PROC_STATUS_EXITED && r->status.code == 0)
        return 0;
    if (ok_exit1 && r->status.kind == PROC_STATUS_EXITED && r->status.code == 1)
        return 1;
    tkgit__fail_git(run->call, run->what, r, run->repo->repo, run->rev);
    return -1;
}
