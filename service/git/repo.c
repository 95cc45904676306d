/* The repository a call names: resolved inside the roots, then discovered
 * by libgit2 without leaving the root it resolved into. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* A path libgit2 reports (workdir, common dir) must also lie inside the
 * roots: core.worktree or a .git file could point anywhere. */
static int check_inside(const tkgit *g, rpc_call *call, const char *path)
{
    char resolved[PATH_MAX], msg[PATH_MAX + 128];
    int rv = roots_resolve(g->roots, path, resolved, sizeof resolved, msg,
                           sizeof msg);
    if (rv != 0) {
        tkgit__fail_path(call, rv == -ENOENT ? -EACCES : rv, msg);
        return -1;
    }
    return 0;
}

/* path without its trailing '/', in the call's arena. */
static const char *trimmed(rpc_call *call, const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return rpc_call_strndup(call, path, n);
}

/* Where git commands run for out->repo: its working tree, or the git dir
 * of a bare one. */
static void describe(tkgit_repo *out, rpc_call *call)
{
    const char *workdir = git_repository_workdir(out->repo);
    out->cwd = trimmed(call, workdir != NULL ? workdir
                                             : git_repository_path(out->repo));
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
    const char *workdir = git_repository_workdir(out->repo);
    if (check_inside(g, call, git_repository_commondir(out->repo)) != 0 ||
        (workdir != NULL && check_inside(g, call, workdir) != 0))
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
