/* SPDX-License-Identifier: MIT */
/* The repository a call names: resolved inside the roots, then discovered
 * by libgit2 without leaving the root it resolved into; its git dir, common
 * dir and working tree inside the roots too, and no git dir that discovery
 * found inside another repository's tree (git's safe.bareRepository). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git_int.h"

/* The directory above root, where the search for a repository must stop
 * ("" for "/": nothing is above it). */
static void ceiling_of(char *out, size_t len, const char *root)
{
    snprintf(out, len, "%s", root);
    char *slash = strrchr(out, '/');
    if (slash == NULL || strcmp(root, "/") == 0)
        out[0] = '\0';
    else if (slash == out)
        slash[1] = '\0'; /* "/x": stop at "/" */
    else
        *slash = '\0';
}

/* A path libgit2 reports (git dir, common dir, working tree) must also lie
 * inside the roots: core.worktree, a .git file or a commondir file could
 * point anywhere, and git writes in all three (a commit: COMMIT_EDITMSG,
 * the index and logs/HEAD in the git dir). resolved gets its realpath. */
static int check_inside(const tkgit *g, rpc_call *call, const char *what,
                        const char *path, char resolved[PATH_MAX])
{
    char msg[PATH_MAX + 128], named[PATH_MAX + 160];
    int rv = roots_resolve(g->roots, path, resolved, PATH_MAX, msg, sizeof msg);
    if (rv == -EACCES || rv == -ENOENT) {
        /* Where it lies is the repository's word (a .git file, commondir,
         * core.worktree), not the caller's: not named (roots.h). */
        snprintf(named, sizeof named,
                 "repo: its %s is not inside tkd's --root directories", what);
        tkgit__fail_path(call, -EACCES, named);
        return -1;
    }
    if (rv != 0) {
        snprintf(named, sizeof named, "repo: its %s: %s", what, msg);
        tkgit__fail_path(call, rv, named);
        return -1;
    }
    return 0;
}

/* path's last component. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* Whether path is dir or lies below it (both resolved). */
static bool is_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Whether discovery from dir, not above ceiling, finds a repository: dir
 * or a directory above it is a git dir or holds a .git. */
static bool in_a_repository(const char *dir, const char *ceiling)
{
    int rv = git_repository_open_ext(NULL, dir, 0,
                                     ceiling[0] != '\0' ? ceiling : NULL);
    git_error_clear(); /* not found is the answer, not an error */
    return rv == 0;
}

/* git 2.39's safe.bareRepository=explicit refuses a git dir that
 * discovery finds as the directory itself rather than through a ".git"
 * below it, as a bare repository is found: a commit can hold such files
 * (HEAD, config, objects/, refs/), and their config names programs. tk
 * decides the repository itself and hands git its git dir (argv.c), so it
 * keeps such a git dir only where no repository holds it: a bare
 * repository at the top of a root's tree, never one inside another
 * repository's working tree or git dir. gitdir and resolved (the caller's
 * path) are realpaths inside the roots. */
static int refuse_nested_bare(const tkgit *g, rpc_call *call,
                              const char *gitdir, const char *resolved)
{
    if (strcmp(base_name(gitdir), ".git") == 0 || !is_within(resolved, gitdir))
        return 0; /* found through a .git, as a working tree's is */
    const char *root = roots_root_of(g->roots, gitdir);
    if (strcmp(gitdir, root) == 0)
        return 0; /* the root itself: nothing of the root holds it */
    char parent[PATH_MAX], ceiling[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", gitdir);
    char *slash = strrchr(parent, '/'); /* below the root: not the first */
    *slash = '\0';
    ceiling_of(ceiling, sizeof ceiling, root);
    if (!in_a_repository(parent, ceiling))
        return 0;
    rpc_call_fail(call, RPC_PERMISSION_DENIED, "UNSAFE_REPOSITORY",
                  "repo: %.200s is a git directory inside another "
                  "repository's tree (files a commit can hold), not a "
                  "repository tk opens (as git's "
                  "safe.bareRepository=explicit)",
                  gitdir);
    return -1;
}

/* path without its trailing '/', in the call's arena. */
static const char *trimmed(rpc_call *call, const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return rpc_call_strndup(call, path, n);
}

/* What git is told of out->repo (its git dir and working tree), and where
 * git commands run: the working tree, or the git dir of a bare one. */
static void describe(tkgit_repo *out, rpc_call *call)
{
    const char *workdir = git_repository_workdir(out->repo);
    out->gitdir = trimmed(call, git_repository_path(out->repo));
    out->workdir = workdir != NULL ? trimmed(call, workdir) : NULL;
    out->cwd = out->workdir != NULL ? out->workdir : out->gitdir;
}

/* The checks of a repository just opened: where its paths lie, and how it
 * was found. */
static int check_opened(const tkgit *g, rpc_call *call, git_repository *repo,
                        const char *resolved)
{
    char gitdir[PATH_MAX], other[PATH_MAX];
    const char *workdir = git_repository_workdir(repo);
    if (check_inside(g, call, "git dir", git_repository_path(repo), gitdir) !=
            0 ||
        check_inside(g, call, "common dir", git_repository_commondir(repo),
                     other) != 0 ||
        (workdir != NULL &&
         check_inside(g, call, "working tree", workdir, other) != 0))
        return -1;
    return refuse_nested_bare(g, call, gitdir, resolved);
}

static int open_in_root(tkgit_repo *out, const tkgit *g, rpc_call *call,
                        const char *resolved)
{
    char ceiling[PATH_MAX];
    /* resolved lies inside a root: roots_resolve said so. */
    ceiling_of(ceiling, sizeof ceiling, roots_root_of(g->roots, resolved));
    int rv = git_repository_open_ext(&out->repo, resolved, 0,
                                     ceiling[0] != '\0' ? ceiling : NULL);
    if (rv < 0) {
        out->repo = NULL;
        tkgit__fail_libgit2(call, NULL, TKGIT_STEP_OPEN, rv, NULL);
        return -1;
    }
    if (check_opened(g, call, out->repo, resolved) != 0)
        return -1;
    describe(out, call);
    return 0;
}

/* Opens the repository at resolved, or takes the thread's open handle for
 * it (cache.c). A handle opened here goes to the cache when resolved is
 * the top of its repository: then its common dir and working tree were
 * checked inside the roots at its open, and the cache reopens it if
 * anything at those paths changes. */
static int open_cached(tkgit_repo *out, const tkgit *g, rpc_call *call,
                       const char *resolved)
{
    out->repo = tkgit__cache_get(g, resolved);
    if (out->repo != NULL) {
        out->cached = true;
        describe(out, call);
        return 0;
    }
    int64_t opened_at = tkgit__cache_clock();
    if (open_in_root(out, g, call, resolved) != 0)
        return -1;
    if (strcmp(out->cwd, resolved) == 0)
        out->cached = tkgit__cache_put(g, resolved, out->repo, opened_at);
    return 0;
}

/* Once per process, after a first git_libgit2_init: the setting outlives
 * a git_libgit2_shutdown, and is written before any thread reads it. */
static void bound_object_cache(void)
{
    /* Workers keep repositories open (cache.c), and with them libgit2's
     * cache of parsed objects, shared by all of them: bound it below
     * libgit2's default of 256 MiB. */
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE,
                     (ssize_t)TKGIT_OBJECT_CACHE_BYTES);
}

/* Initialises libgit2 for g unless done: once, whichever calls arrive
 * together. 0, or -1 with the call failed. */
static int init_libgit2(tkgit *g, rpc_call *call)
{
    static pthread_once_t cache_bounded = PTHREAD_ONCE_INIT;
    if (atomic_load_explicit(&g->libgit2_inits, memory_order_acquire) > 0)
        return 0;
    int rv = 0;
    pthread_mutex_lock(&g->libgit2_mu);
    if (atomic_load_explicit(&g->libgit2_inits, memory_order_relaxed) == 0) {
        /* Once per service: libgit2 counts its initialisations, and
         * tkgit_free ends this one. */
        rv = git_libgit2_init();
        if (rv >= 0) {
            pthread_once(&cache_bounded, bound_object_cache);
            atomic_fetch_add_explicit(&g->libgit2_inits, 1,
                                      memory_order_release);
        }
    }
    pthread_mutex_unlock(&g->libgit2_mu);
    if (rv >= 0)
        return 0;
    /* Not tkgit__fail_libgit2: git_error_last needs what failed here. */
    rpc_call_fail(call, RPC_UNKNOWN, "LIBGIT2_ERROR",
                  "libgit2 failed to initialise (%d)", rv);
    return -1;
}

int tkgit__open(tkgit_repo *out, tkgit *g, rpc_call *call, const char *path)
{
    memset(out, 0, sizeof *out);
    if (path == NULL || path[0] == '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                      "repo is required");
        return -1;
    }
    char resolved[PATH_MAX], msg[PATH_MAX + 128], named[PATH_MAX + 140];
    int rv = roots_resolve(g->roots, path, resolved, sizeof resolved, msg,
                           sizeof msg);
    if (rv != 0) {
        snprintf(named, sizeof named, "repo: %s", msg);
        tkgit__fail_path(call, rv, named);
        return -1;
    }
    if (init_libgit2(g, call) != 0)
        return -1;
    if (open_cached(out, g, call, resolved) != 0) {
        tkgit__close(out);
        return -1;
    }
    return 0;
}

void tkgit__close(tkgit_repo *r)
{
    if (!r->cached)
        git_repository_free(r->repo); /* accepts NULL */
    r->repo = NULL;
}

/* A path that does not exist yet: its parent resolved, plus its last
 * component (a plain name). */
static int resolve_missing(const tkgit *g, rpc_call *call, const char *path,
                           const char **resolved)
{
    char parent[PATH_MAX], out[PATH_MAX], msg[PATH_MAX + 128];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    const char *name = path + (slash - parent) + 1;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH",
                      "path must end in a directory name");
        return -1;
    }
    if (slash == parent)
        slash[1] = '\0';
    else
        *slash = '\0';
    int rv = roots_resolve(g->roots, parent, out, sizeof out, msg, sizeof msg);
    if (rv != 0) {
        tkgit__fail_path(call, rv, msg);
        return -1;
    }
    size_t n = strlen(out) + strlen(name) + 2;
    char *full = rpc_call_alloc(call, n);
    snprintf(full, n, "%s/%s", strcmp(out, "/") == 0 ? "" : out, name);
    *resolved = full;
    return 0;
}

/* Whether dir is a git dir itself (a bare repository's, a linked
 * worktree's, a submodule's), by libgit2's test without a search. */
static bool is_git_dir(const char *dir)
{
    int rv = git_repository_open_ext(
        NULL, dir,
        GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT, NULL);
    git_error_clear();
    return rv == 0;
}

/* A new path (resolved, inside a root) must not lie in any repository's
 * git dir: a worktree at .git/index.lock locks the index for good, one at
 * .git/hooks/pre-commit breaks every commit. Every directory from it up to
 * its root is checked: none may be named .git or be a git dir. */
static int outside_git_dirs(const tkgit *g, rpc_call *call,
                            const char *resolved)
{
    const char *root = roots_root_of(g->roots, resolved);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", resolved);
    for (;;) {
        if (strcasecmp(base_name(dir), ".git") == 0 || is_git_dir(dir)) {
            rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH",
                          "path: %.200s lies in the git directory %.200s: a "
                          "working tree there would overwrite the "
                          "repository's own files",
                          resolved, dir);
            return -1;
        }
        char *slash = strrchr(dir, '/');
        if (strcmp(dir, root) == 0 || slash == NULL || slash == dir)
            return 0;
        *slash = '\0';
    }
}

int tkgit__resolve_new_path(const tkgit *g, rpc_call *call, const char *path,
                            const char **resolved)
{
    if (path == NULL || path[0] != '/') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH",
                      "path must be an absolute path");
        return -1;
    }
    char out[PATH_MAX], msg[PATH_MAX + 128];
    int rv = roots_resolve(g->roots, path, out, sizeof out, msg, sizeof msg);
    if (rv == -ENOENT)
        return resolve_missing(g, call, path, resolved);
    if (rv != 0) {
        tkgit__fail_path(call, rv, msg);
        return -1;
    }
    *resolved = rpc_call_strdup(call, out); /* exists: git judges it */
    return 0;
}

int tkgit__resolve_worktree_path(const tkgit *g, rpc_call *call,
                                 const char *path, const char **resolved)
{
    if (tkgit__resolve_new_path(g, call, path, resolved) != 0)
        return -1;
    return outside_git_dirs(g, call, *resolved);
}
