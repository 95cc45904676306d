/* SPDX-License-Identifier: MIT */
/*
 * Internal to service/git: what its files share. Only files of this folder
 * include it.
 */
#ifndef TK_SERVICE_GIT_INT_H
#define TK_SERVICE_GIT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <git2.h>

#include "git.h"
#include "common/common.h"
#include "obs/obs.h"
#include "proc/proc.h"
#include "roots/roots.h"
#include "rpc/rpc.h"
#include "tk/v1/git.methods.h"
#include "tk/v1/git.pb-c.h"

#define TKGIT_N_METHODS TK_V1_GIT__N_METHODS
/* libgit2's cache of parsed objects, for all open repositories. */
#define TKGIT_OBJECT_CACHE_BYTES (64u * 1024 * 1024)

struct tkgit {
    const roots *roots;
    tkgit_config cfg;
    char git[PATH_MAX];
    /* tk/v1/git.proto's table, with cfg's timeouts where it gives one. */
    rpc_method methods[TKGIT_N_METHODS];
    /* The longest ceiling of its READs: proc's own bound on a git read
     * (the call's deadline, never further away, comes first). */
    uint32_t read_ceiling_ms;
    pthread_key_t cache_key; /* each worker's open repositories (cache.c) */
    /* libgit2 is initialised by the first call that opens a repository
     * (tkgit__open), not at start: its initialisation sets up OpenSSL and
     * libssh2, about 3 MB of a tkd that no Git call has reached. */
    pthread_mutex_t libgit2_mu;
    /* git_libgit2_init calls that succeeded: 0, then 1 (raised under
     * libgit2_mu, read without it). */
    atomic_uint libgit2_inits;
    /* Commits one Log may walk; 0: LOG_WALK_MAX (log.c). Set only by
     * tkgit__test_set_log_walk_max, before the server starts. */
    uint32_t log_walk_max;
};

/* ---- repo.c: the repository a call names -------------------------------- */

typedef struct tkgit_repo {
    git_repository *repo;
    /* What git is told (--git-dir, --work-tree: it discovers nothing of
     * its own): the git dir, and the working tree (NULL: bare); no
     * trailing '/'. */
    const char *gitdir;
    const char *workdir;
    /* Where git commands run: the top of the working tree, or the git dir
     * of a bare one; no trailing '/'. */
    const char *cwd;
    /* repo belongs to the thread's cache (cache.c), not to the call. */
    bool cached;
} tkgit_repo;

/* Resolves path inside the roots and opens the repository there (the
 * search upwards stops at the root). On failure the call has its status
 * and -1 is returned. Strings live in the call's arena. */
/* Initialises libgit2 for g first, unless a call has. */
int tkgit__open(tkgit_repo *out, tkgit *g, rpc_call *call, const char *path);
void tkgit__close(tkgit_repo *r);
/* Checks that a further path a caller names (ConfigSet's) resolves
 * inside a root; its parent must exist. Fails the call and returns -1
 * otherwise. The resolved path is in the call's arena. */
int tkgit__resolve_new_path(const tkgit *g, rpc_call *call, const char *path,
                            const char **resolved);
/* The same for a new working tree (WorktreeAdd's path), which must also
 * lie outside every repository's git dir (INVALID_ARGUMENT BAD_PATH). */
int tkgit__resolve_worktree_path(const tkgit *g, rpc_call *call,
                                 const char *path, const char **resolved);

/* ---- cache.c: open repositories kept per worker thread ------------------ */

/* The thread-local key (tkgit_new) and its deletion (tkgit_free, after the
 * workers have exited and freed their caches). 0 or -1. */
int tkgit__cache_init(tkgit *g);
void tkgit__cache_fini(tkgit *g);
/* The calling thread's handle for key (a resolved path that is the top of
 * its repository) if the repository on disk is still the one it opened;
 * else NULL (a stale handle is freed). The handle stays the cache's. */
git_repository *tkgit__cache_get(const tkgit *g, const char *key);
/* Offers repo, opened for key when tkgit__cache_clock() said opened_at:
 * true when the cache took it (it frees it), false when the caller keeps
 * it (its repository changed too recently, or memory ran out). */
bool tkgit__cache_put(const tkgit *g, const char *key, git_repository *repo,
                      int64_t opened_at);
/* CLOCK_REALTIME in ns, the clock of file times. */
int64_t tkgit__cache_clock(void);

/* ---- errors.c: the one table of reasons -------------------------------- */

/* Where a libgit2 error came from: its codes mean different things. */
typedef enum tkgit_step {
    TKGIT_STEP_OPEN = 1, /* git_repository_open_ext */
    TKGIT_STEP_REV,      /* resolving a caller's revision */
    TKGIT_STEP_WALK,     /* walking history, reading objects */
    TKGIT_STEP_CONFIG,   /* reading the repository's config */
} tkgit_step;

/* A step that has already set the call's status (git run through proc/
 * failed): below every libgit2 error code. */
#define TKGIT_EREPORTED (-10000)

/* Fails the call with the reason of a libgit2 error (and git_error_last's
 * message). rev (may be NULL) is the revision being resolved. */
void tkgit__fail_libgit2(rpc_call *call, git_repository *repo, tkgit_step step,
                         int error, const char *rev);
/* Fails the call with the reason that git's stderr shows, or GIT_FAILED.
 * rev (may be NULL) is the revision git was resolving; on an unborn
 * branch of repo a bad one that starts from HEAD is UNBORN_HEAD. */
void tkgit__fail_git(rpc_call *call, const char *what, const proc_result *r,
                     git_repository *repo, const char *rev);
/* Fails the call for a path that roots_resolve refused. */
void tkgit__fail_path(rpc_call *call, int rv, const char *message);

/* Reason strings shared with the handlers (the table holds the rest). */
#define TKGIT_R_BAD_REVISION "BAD_REVISION"
#define TKGIT_R_UNBORN_HEAD "UNBORN_HEAD"
#define TKGIT_R_BAD_BRANCH_NAME "BAD_BRANCH_NAME"

/* ---- argv.c: git through tool/ ------------------------------------------ */

/* An argv under construction, in the call's arena. */
typedef struct tkgit_argv {
    const char **v;
    size_t n, cap;
    rpc_call *call;
} tkgit_argv;

/* Starts "git -c core.quotepath=off <subcommand>". */
void tkgit__argv_init(tkgit_argv *a, rpc_call *call, const char *subcommand);
void tkgit__argv_add(tkgit_argv *a, const char *arg);
/* "--" and the caller's paths (bytes; NULs refused by the caller). */
void tkgit__argv_paths(tkgit_argv *a, size_t n, const ProtobufCBinaryData *p);

typedef struct tkgit_run {
    const tkgit *g;
    rpc_call *call;
    const tkgit_repo *repo;
    const char *what;      /* for messages: "git status" */
    proc_stdout_fn on_out; /* NULL: capture stdout */
    void *on_out_arg;
    size_t record_max;
    const char *rev; /* the revision git resolves, for its errors */
} tkgit_run;

/* A run of git for call in repo; what names it in messages ("git diff"). */
void tkgit__run_init(tkgit_run *run, const tkgit *g, rpc_call *call,
                     const tkgit_repo *repo, const char *what);

/* Runs git for the call through tool/ (READ or WRITE by the method's
 * kind): tool/ answers the call's cancel and deadline first, a git that
 * could not start and its own bounds; git's exit status is judged here
 * (the reasons table). Returns 0 when git exited 0 (r holds stdout) or
 * on_out stopped it, 1 when it exited 1 and ok_exit1 is set, -1 when the
 * call has failed (its status is set). r must be freed with
 * proc_result_fini in every case. */
int tkgit__run(proc_result *r, const tkgit_run *run, const tkgit_argv *argv,
               bool ok_exit1);

/* ---- read_env.c: what a READ's git may take from the repository ---------- */

/* base (a NULL-ended environment) and the settings a READ's git gets over
 * repo's own configuration: each program it names (core.fsmonitor, a
 * filter driver's) set to what tkd's user's global or system config says,
 * or off. In the call's arena; NULL with the call failed (its config
 * includes a file on a condition libgit2 does not evaluate:
 * PERMISSION_DENIED UNSAFE_REPOSITORY). */
const char **tkgit__read_env(rpc_call *call, git_repository *repo,
                             const char *const *base);

/* ---- fields.c: a request's fields checked, a reply's arrays grown ------- */

/* Whether a caller's path list is usable (no NUL bytes, not empty); fails
 * the call with INVALID_ARGUMENT otherwise. */
bool tkgit__paths_ok(rpc_call *call, size_t n, const ProtobufCBinaryData *p);
/* A string field the method needs: not empty (protobuf-c strings hold no
 * NUL). Fails the call with INVALID_ARGUMENT MISSING_FIELD otherwise. */
bool tkgit__required(rpc_call *call, const char *s, const char *field);
/* A caller's revision (field names it in the message): none that begins
 * with '-' names anything, and none reaches git (where one could be read
 * as an option): NOT_FOUND BAD_REVISION. Empty is left to the method. */
bool tkgit__rev_ok(rpc_call *call, const char *rev, const char *field);
/* A branch the caller asks a write to make: a name by git's rules
 * (check-ref-format of refs/heads/NAME, not "-..." nor "HEAD"), else
 * INVALID_ARGUMENT BAD_BRANCH_NAME naming field. Needs libgit2
 * initialised: call after tkgit__open. */
bool tkgit__branch_ok(rpc_call *call, const char *name, const char *field);
/* Appends to a repeated field in the call's arena, doubling. */
void *tkgit__grow(rpc_call *call, void *array, size_t n, size_t *cap,
                  size_t elem);

/* ---- config.c: the keys ConfigSet may write, ConfigGet read ------------ */

/* Whether key is a config key by git's syntax (and its subsection, if
 * any, not empty). Fails the call (INVALID_ARGUMENT BAD_CONFIG_KEY, the
 * rule broken) otherwise. */
bool tkgit__config_key_ok(rpc_call *call, const char *key);
/* Whether a caller may set key (tkgit__config_key_ok's) to value: a key
 * on the allowlist, a value git will read back (a typed key's type, a
 * path inside the roots). Fails the call (PERMISSION_DENIED
 * CONFIG_KEY_NOT_ALLOWED, INVALID_ARGUMENT BAD_CONFIG_VALUE, or the path's
 * reason) otherwise. */
bool tkgit__config_allowed(const tkgit *g, rpc_call *call, const char *key,
                           const char *value);
/* Whether a caller may read key (tkgit__config_key_ok's): a key on
 * ConfigSet's allowlist. Fails the call (PERMISSION_DENIED
 * CONFIG_KEY_NOT_ALLOWED) otherwise. */
bool tkgit__config_readable(rpc_call *call, const char *key);
/* A key of a branch's section names a branch by git's rules
 * (tkgit__branch_ok: after tkgit__open). */
bool tkgit__config_branch_ok(rpc_call *call, const char *key);

/* ---- revparse.c: revisions ---------------------------------------------- */

/* Whether libgit2 would resolve rev through a regular expression (see
 * revparse.c): such a revision is resolved by git instead. */
bool tkgit__rev_needs_git(const char *rev);
/* `git rev-parse --verify --end-of-options rev` through proc/, bound to
 * the call. 0 with *out, or -1 with the call failed (BAD_REVISION,
 * UNBORN_HEAD, CANCELLED...). */
int tkgit__rev_parse_cli(git_oid *out, const tkgit *g, rpc_call *call,
                         const tkgit_repo *repo, const char *rev);

/* ---- the handlers ------------------------------------------------------ */

/* reads.c: Status, Diff, Grep; log.c: Log; revparse.c: RevParse; writes.c:
 * Commit, Checkout, WorktreeAdd, ConfigSet; worktree.c: WorktreeRemove;
 * config.c: ConfigGet. */

void tkgit__status(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply);
void tkgit__log(void *svc, rpc_call *call, const ProtobufCMessage *request,
                ProtobufCMessage *reply);
void tkgit__diff(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply);
void tkgit__rev_parse(void *svc, rpc_call *call,
                      const ProtobufCMessage *request, ProtobufCMessage *reply);
void tkgit__grep(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply);
void tkgit__commit(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply);
void tkgit__checkout(void *svc, rpc_call *call, const ProtobufCMessage *request,
                     ProtobufCMessage *reply);
void tkgit__worktree_add(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply);
void tkgit__worktree_remove(void *svc, rpc_call *call,
                            const ProtobufCMessage *request,
                            ProtobufCMessage *reply);
void tkgit__config_set(void *svc, rpc_call *call,
                       const ProtobufCMessage *request,
                       ProtobufCMessage *reply);
void tkgit__config_get(void *svc, rpc_call *call,
                       const ProtobufCMessage *request,
                       ProtobufCMessage *reply);

/* ---- porcelain.c: git's -z output -------------------------------------- */

/* Fills reply from `git status --porcelain=v2 -z --branch` output. Returns
 * 0, or -1 on output it cannot read. Allocates through call; keeps at most
 * the call's list ceiling of entries, and sets the call partial beyond. */
int tkgit__parse_status(rpc_call *call, const char *out, size_t len,
                        Tk__V1__GitStatusReply *reply);
/* The numstat block of `git diff --numstat -z -p`: fills reply->files (at
 * most the call's list ceiling of them; partial beyond) and returns the
 * offset where the patch starts, or -1. */
long tkgit__parse_numstat(rpc_call *call, const char *out, size_t len,
                          Tk__V1__GitDiffReply *reply);

/* ---- oids.c: Log's walk's set of ids and its queue by date -------------- */

/* The all-zero id marks a free slot: no object has it. */
typedef struct tkgit_oidset {
    git_oid *slots;
    size_t cap, n;
} tkgit_oidset;

/* A commit waits as its id and date (40 bytes), not as the parsed commit
 * (some 600): a wide frontier, an octopus merge's parents, costs little.
 * It is looked up again when its turn comes, from libgit2's cache. */
typedef struct tkgit_queued {
    git_oid id;
    int64_t time;
    uint64_t seq;
} tkgit_queued;

typedef struct tkgit_queue {
    tkgit_queued *items;
    size_t n, cap;
    uint64_t seq;
} tkgit_queue;

/* 1 when added, 0 when it was there, -1 out of memory. */
int tkgit__oidset_add(tkgit_oidset *s, const git_oid *id);
bool tkgit__oidset_has(const tkgit_oidset *s, const git_oid *id);
void tkgit__oidset_fini(tkgit_oidset *s);
/* Queues c by its date: 0, or -1 out of memory. */
int tkgit__queue_push(tkgit_queue *q, const git_commit *c);
/* The id of the commit whose turn it is into *out; false when none waits. */
bool tkgit__queue_pop(tkgit_queue *q, git_oid *out);
void tkgit__queue_fini(tkgit_queue *q);

/* ---- message.c: a commit's message as git's %s and %b ------------------ */

/* msg (NUL-terminated) into out->subject and out->body, allocated through
 * call. */
void tkgit__subject_body(rpc_call *call, const char *msg,
                         Tk__V1__GitCommit *out);

#endif /* TK_SERVICE_GIT_INT_H */
