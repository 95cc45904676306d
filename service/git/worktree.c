/* SPDX-License-Identifier: MIT */
/* WorktreeRemove, a WRITE: `git worktree remove` of a linked working tree
 * of the repository the call names, and of nothing else. tk decides that
 * with libgit2 before git runs (the repository's list of linked working
 * trees, each a path in its common dir's worktrees/<name>/gitdir), so a
 * caller can remove neither the main working tree nor a directory that
 * merely holds a .git file. (WorktreeAdd is with the other writes in
 * writes.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

/* Whether wt's recorded path resolves to resolved. */
static bool is_at(git_worktree *wt, const char *resolved)
{
    char real[PATH_MAX];
    const char *path = git_worktree_path(wt);
    return path != NULL && realpath(path, real) != NULL &&
           strcmp(real, resolved) == 0;
}

/* Whether resolved is a linked working tree of repo. */
static bool linked_worktree(git_repository *repo, const char *resolved)
{
    git_strarray names = { 0 };
    bool found = false;
    if (git_worktree_list(&names, repo) != 0) {
        git_error_clear();
        return false;
    }
    for (size_t i = 0; i < names.count && !found; i++) {
        git_worktree *wt = NULL;
        if (git_worktree_lookup(&wt, repo, names.strings[i]) == 0)
            found = is_at(wt, resolved);
        git_worktree_free(wt);
    }
    git_strarray_dispose(&names);
    git_error_clear();
    return found;
}

/* The main working tree of repo's common dir: the parent of a common dir
 * named .git, or none (a bare repository's). In the call's arena. */
static const char *main_worktree(rpc_call *call, git_repository *repo)
{
    char real[PATH_MAX];
    if (realpath(git_repository_commondir(repo), real) == NULL)
        return NULL;
    char *slash = strrchr(real, '/');
    if (slash == NULL || slash == real || strcmp(slash, "/.git") != 0)
        return NULL;
    *slash = '\0';
    return rpc_call_strdup(call, real);
}

/* path: inside the roots, and a linked working tree of repo. The resolved
 * path, or NULL with the call failed. */
static const char *worktree_path(const tkgit *g, rpc_call *call,
                                 const tkgit_repo *repo, const char *path)
{
    if (path == NULL || path[0] == '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                      "path is required");
        return NULL;
    }
    char resolved[PATH_MAX], msg[PATH_MAX + 128], named[PATH_MAX + 140];
    int rv = roots_resolve(g->roots, path, resolved, sizeof resolved, msg,
                           sizeof msg);
    if (rv != 0) {
        snprintf(named, sizeof named, "path: %s", msg);
        tkgit__fail_path(call, rv, named);
        return NULL;
    }
    if (linked_worktree(repo->repo, resolved))
        return rpc_call_strdup(call, resolved);
    const char *main = main_worktree(call, repo->repo);
    if (main != NULL && strcmp(main, resolved) == 0)
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NOT_A_LINKED_WORKTREE",
                      "path: %.200s is the main working tree of repo, which "
                      "WorktreeRemove never removes",
                      resolved);
    else
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NOT_A_LINKED_WORKTREE",
                      "path: %.200s is no linked working tree of repo "
                      "(git worktree list names its worktrees)",
                      resolved);
    return NULL;
}

void tkgit__worktree_remove(void *svc, rpc_call *call,
                            const ProtobufCMessage *request,
                            ProtobufCMessage *reply)
{
    const Tk__V1__GitWorktreeRemoveRequest *in =
        (const Tk__V1__GitWorktreeRemoveRequest *)request;
    (void)reply;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    const char *path = worktree_path(svc, call, &repo, in->path);
    if (path != NULL) {
        tkgit_argv a;
        tkgit__argv_init(&a, call, "worktree");
        tkgit__argv_add(&a, "remove");
        if (in->force)
            tkgit__argv_add(&a, "--force");
        tkgit__argv_add(&a, "--");
        tkgit__argv_add(&a, path);
        tkgit_run run;
        tkgit__run_init(&run, svc, call, &repo, "git worktree remove");
        proc_result r;
        tkgit__run(&r, &run, &a, false);
        proc_result_fini(&r);
    }
    tkgit__close(&repo);
}
