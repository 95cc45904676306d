/* SPDX-License-Identifier: MIT */
/* git through tool/: the argv every run starts with, the environment that
 * makes git non-interactive and parseable, and what git's exit status
 * means (tool/ answers every other end of a run: the call's cancel and
 * deadline first, a git that could not start, its own bounds).
 *
 * git is told the repository tk opened (repo.c) and checked:
 * --git-dir and --work-tree, so it discovers none of its own, and
 * safe.bareRepository=explicit, which the git processes it starts inherit
 * (a hook's git, a submodule's). A READ's git runs no program but git:
 * no pager, no hook, no network (so no lazy fetch of a partial clone, no
 * ssh command, no credential helper), and what the repository's own
 * config names is overridden (read_env.c). */
#include <stdio.h>
#include <string.h>

#include "git_int.h"
#include "tool/tool.h"

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

/* A READ's settings on git's command line. core.hooksPath: no read of
 * tk's runs a hook (GIT_OPTIONAL_LOCKS=0 leaves the index, so no
 * post-index-change), and none may. An empty credential.helper empties
 * the list of helpers. protocol.allow=never: a partial clone's READ
 * would fetch what it lacks, over ssh or https, from the remote the
 * repository's config names. */
static const char *const read_config[] = {
    "core.hooksPath=/dev/null",
    "credential.helper=",
    "protocol.allow=never",
    NULL,
};

/* "git", what every run gets before its subcommand, then the rest of
 * argv: in the call's arena. */
static const char *const *full_argv(const tkgit_run *run,
                                    const tkgit_argv *argv, bool write)
{
    tkgit_argv a = { .call = run->call };
    tkgit__argv_add(&a, argv->v[0]);
    tkgit__argv_add(&a, "--no-pager");
    size_t len = strlen(run->repo->gitdir) + 16;
    char *opt = rpc_call_alloc(run->call, len);
    snprintf(opt, len, "--git-dir=%s", run->repo->gitdir);
    tkgit__argv_add(&a, opt);
    if (run->repo->workdir != NULL) {
        len = strlen(run->repo->workdir) + 16;
        opt = rpc_call_alloc(run->call, len);
        snprintf(opt, len, "--work-tree=%s", run->repo->workdir);
        tkgit__argv_add(&a, opt);
    }
    tkgit__argv_add(&a, "-c");
    tkgit__argv_add(&a, "safe.bareRepository=explicit");
    for (size_t i = 0; !write && read_config[i] != NULL; i++) {
        tkgit__argv_add(&a, "-c");
        tkgit__argv_add(&a, read_config[i]);
    }
    for (size_t i = 1; i < argv->n; i++)
        tkgit__argv_add(&a, argv->v[i]);
    return a.v;
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

/* What is git's alone: its argv, environment and working directory, a
 * READ's ceiling, and what its exit status means (the reasons table).
 * How the run ends otherwise is tool/'s one answer. */
int tkgit__run(proc_result *r, const tkgit_run *run, const tkgit_argv *argv,
               bool ok_exit1)
{
    bool write = rpc_call_kind(run->call) == RPC_WRITE;
    const char *const *env =
        write ? write_env
              : tkgit__read_env(run->call, run->repo->repo, read_env);
    if (env == NULL) {
        memset(r, 0, sizeof *r); /* freed by the caller all the same */
        return -1;
    }
    tool_opts o;
    tool_opts_init(&o, run->what, run->g->git, full_argv(run, argv, write));
    o.proc.env = env;
    o.proc.cwd = run->repo->cwd;
    o.proc.on_stdout = run->on_out;
    o.proc.on_stdout_arg = run->on_out_arg;
    if (run->on_out != NULL)
        o.proc.record_max = run->record_max; /* lines: proc's default delim */
    if (!write) { /* a write's bound is its own timeout, which tool/ applies */
        o.timeout_ms = run->g->read_ceiling_ms;
        obs_metric_add(OBS_M_GIT_READS_CLI, 1);
    }
    int rv = tool_run(r, run->call, &o);
    if (r->err_len > 0)
        rpc_call_set_stderr(run->call, r->err, r->err_len);
    if (rv != 0)
        return rv < 0 ? -1 : 0; /* 1: the caller's limit was reached */
    if (r->status.kind == PROC_STATUS_EXITED && r->status.code == 0)
        return 0;
    if (ok_exit1 && r->status.kind == PROC_STATUS_EXITED && r->status.code == 1)
        return 1;
    tkgit__fail_git(run->call, run->what, r, run->repo->repo, run->rev);
    return -1;
}
