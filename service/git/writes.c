/* SPDX-License-Identifier: MIT */
/* The WRITE methods: Commit, Checkout, WorktreeAdd, ConfigSet. Each runs
 * git through proc/ as a WRITE: the caller's cancel and deadline do not
 * stop it; only the method's own timeout does (then SIGTERM, SIGKILL and
 * write_completed false). The reply's ids are read back with libgit2. */
#include <stdio.h>
#include <string.h>

#include "git_int.h"

/* One git command of a write; 0 when it exited 0. */
static int run_git(const tkgit *g, rpc_call *call, const tkgit_repo *repo,
                   const char *what, const tkgit_argv *a)
{
    tkgit_run run;
    tkgit__run_init(&run, g, call, repo, what);
    proc_result r;
    int rv = tkgit__run(&r, &run, a, false);
    proc_result_fini(&r);
    return rv == 0 ? 0 : -1;
}

/* The commit id a reference (or HEAD) names now, as hex in the arena. */
static char *head_hex(rpc_call *call, git_repository *repo)
{
    git_oid id;
    char hex[GIT_OID_HEXSZ + 1] = "";
    if (git_reference_name_to_id(&id, repo, "HEAD") == 0)
        git_oid_tostr(hex, sizeof hex, &id);
    return rpc_call_strdup(call, hex);
}

static bool ident_ok(rpc_call *call, const char *name, const char *email)
{
    if ((name[0] == '\0') != (email[0] == '\0') ||
        strpbrk(name, "<>\n") != NULL || strpbrk(email, "<>\n") != NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_IDENTITY",
                      "author_name and author_email go together, without "
                      "'<', '>' or newlines");
        return false;
    }
    return true;
}

/* ---- Commit ------------------------------------------------------------- */

static int stage(const tkgit *g, rpc_call *call, const tkgit_repo *repo,
                 const Tk__V1__GitCommitRequest *in)
{
    if (in->n_paths == 0)
        return 0;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "add");
    tkgit__argv_add(&a, "-A");
    tkgit__argv_paths(&a, in->n_paths, in->paths);
    return run_git(g, call, repo, "git add", &a);
}

static void commit_argv(tkgit_argv *a, const Tk__V1__GitCommitRequest *in)
{
    tkgit__argv_add(a, "--no-edit");
    /* The message goes in whole, as the option's value. */
    size_t mlen = strlen(in->message) + 16;
    char *m = rpc_call_alloc(a->call, mlen);
    snprintf(m, mlen, "--message=%s", in->message);
    tkgit__argv_add(a, m);
    if (in->all)
        tkgit__argv_add(a, "--all");
    if (in->allow_empty)
        tkgit__argv_add(a, "--allow-empty");
    if (in->author_name[0] != '\0') {
        size_t n = strlen(in->author_name) + strlen(in->author_email) + 16;
        char *au = rpc_call_alloc(a->call, n);
        snprintf(au, n, "--author=%s <%s>", in->author_name, in->author_email);
        tkgit__argv_add(a, au);
    }
}

void tkgit__commit(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply)
{
    const Tk__V1__GitCommitRequest *in =
        (const Tk__V1__GitCommitRequest *)request;
    if (!tkgit__paths_ok(call, in->n_paths, in->paths) ||
        !tkgit__required(call, in->message, "message") ||
        !ident_ok(call, in->author_name, in->author_email))
        return;
    if (in->all && in->n_paths > 0) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_ARGUMENTS",
                      "paths and all exclude each other");
        return;
    }
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "commit");
    commit_argv(&a, in);
    if (stage(svc, call, &repo, in) == 0 &&
        run_git(svc, call, &repo, "git commit", &a) == 0)
        ((Tk__V1__GitCommitReply *)reply)->oid = head_hex(call, repo.repo);
    tkgit__close(&repo);
}

/* ---- Checkout ------------------------------------------------------------ */

void tkgit__checkout(void *svc, rpc_call *call, const ProtobufCMessage *request,
                     ProtobufCMessage *reply)
{
    const Tk__V1__GitCheckoutRequest *in =
        (const Tk__V1__GitCheckoutRequest *)request;
    if ((in->create_branch[0] == '\0' &&
         !tkgit__required(call, in->rev, "rev")) ||
        !tkgit__rev_ok(call, in->rev, "rev"))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    if (in->create_branch[0] != '\0' &&
        !tkgit__branch_ok(call, in->create_branch, "create_branch")) {
        tkgit__close(&repo);
        return;
    }
    tkgit_argv a;
    tkgit__argv_init(&a, call, "checkout");
    tkgit__argv_add(&a, "--quiet");
    if (in->create_branch[0] != '\0') {
        tkgit__argv_add(&a, "-b");
        tkgit__argv_add(&a, in->create_branch);
    }
    if (in->rev[0] != '\0')
        tkgit__argv_add(&a, in->rev);
    tkgit__argv_add(&a, "--"); /* a rev, never a path */
    if (run_git(svc, call, &repo, "git checkout", &a) == 0)
        ((Tk__V1__GitCheckoutReply *)reply)->oid = head_hex(call, repo.repo);
    tkgit__close(&repo);
}

/* ---- WorktreeAdd --------------------------------------------------------- */

static void worktree_reply(rpc_call *call, const char *path,
                           Tk__V1__GitWorktreeAddReply *out)
{
    out->path = (char *)path;
    git_repository *wt = NULL;
    if (git_repository_open(&wt, path) == 0)
        out->oid = head_hex(call, wt);
    git_repository_free(wt);
}

void tkgit__worktree_add(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    const Tk__V1__GitWorktreeAddRequest *in =
        (const Tk__V1__GitWorktreeAddRequest *)request;
    const char *path;
    if (in->detach && in->new_branch[0] != '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_ARGUMENTS",
                      "detach and new_branch exclude each other");
        return;
    }
    if (!tkgit__rev_ok(call, in->rev, "rev"))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    if ((in->new_branch[0] != '\0' &&
         !tkgit__branch_ok(call, in->new_branch, "new_branch")) ||
        tkgit__resolve_worktree_path(svc, call, in->path, &path) != 0)
        goto done;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "worktree");
    tkgit__argv_add(&a, "add");
    tkgit__argv_add(&a, "--quiet");
    if (in->new_branch[0] != '\0') {
        tkgit__argv_add(&a, "-b");
        tkgit__argv_add(&a, in->new_branch);
    }
    if (in->detach)
        tkgit__argv_add(&a, "--detach");
    /* worktree add knows no --end-of-options (git 2.39): after "--" the
     * path and the rev are positional, a leading '-' included. */
    tkgit__argv_add(&a, "--");
    tkgit__argv_add(&a, path);
    if (in->rev[0] != '\0')
        tkgit__argv_add(&a, in->rev);
    if (run_git(svc, call, &repo, "git worktree add", &a) == 0)
        worktree_reply(call, path, (Tk__V1__GitWorktreeAddReply *)reply);
done:
    tkgit__close(&repo);
}

/* ---- ConfigSet ----------------------------------------------------------- */

void tkgit__config_set(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    const Tk__V1__GitConfigSetRequest *in =
        (const Tk__V1__GitConfigSetRequest *)request;
    (void)reply;
    if (!tkgit__config_key_ok(call, in->key) ||
        !tkgit__config_allowed(svc, call, in->key, in->value))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    if (!tkgit__config_branch_ok(call, in->key)) {
        tkgit__close(&repo);
        return;
    }
    tkgit_argv a;
    tkgit__argv_init(&a, call, "config");
    tkgit__argv_add(&a, "--local"); /* never --global or --system */
    tkgit__argv_add(&a, "--");
    tkgit__argv_add(&a, in->key);
    tkgit__argv_add(&a, in->value);
    run_git(svc, call, &repo, "git config", &a);
    tkgit__close(&repo);
}
