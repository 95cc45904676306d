/* SPDX-License-Identifier: MIT */
/*
 * git — the tk.v1.Git service: reads and writes on repositories under
 * tkd's --root directories.
 *
 * Owns: the tk.v1.Git method table and handlers; repository discovery
 * (libgit2, never leaving the root the path resolved into, never taking a
 * git dir found inside another repository's tree; each worker keeps the
 * repositories it opened while they are unchanged on disk);
 * RevParse and Log in process through libgit2, checking the call's cancel
 * and deadline between steps of a walk, except the revisions libgit2
 * would resolve with a regular expression, which git rev-parse resolves
 * through tool/ (revparse.c says which); every other method as a git
 * command run through tool/ (READs follow the caller, WRITEs run to
 * completion) in the repository it opened (--git-dir, --work-tree), with
 * GIT_TERMINAL_PROMPT=0, LC_ALL=C, GIT_OPTIONAL_LOCKS=0 on reads, -c
 * core.quotepath=off and safe.bareRepository=explicit, literal pathspecs
 * and --end-of-options / -- before anything a caller wrote; what a READ's
 * git takes from the repository's own config (read_env.c); the parsers of
 * git's -z output; and the one table (errors.c) that maps git's stderr
 * and libgit2's errors to reasons and codes.
 * May call: tool/ (the only way to run git), proc/ (to find git; the
 * types of a run), roots/ (every path a caller names), rpc/ (the call
 * handle), obs/ (the log, the metrics), libgit2, libc.
 * Must never: start a process other than through tool/; accept a path that
 * roots_resolve did not (a repository's git dir, common dir and working
 * tree included); let git discover a repository of its own; let a READ
 * run a program the repository's own config names; let a caller's rev or
 * path be read as an option; take index.lock on a read; report a kill of
 * ours as git's own failure;
 * compare messages where a reason exists; expose libgit2 beyond this
 * folder (the prefix is tkgit_, as git_ is libgit2's).
 */
#ifndef TK_SERVICE_GIT_H
#define TK_SERVICE_GIT_H

#include <stddef.h>
#include <stdint.h>

#include "roots/roots.h"
#include "rpc/rpc.h"
#include "tk/v1/git.pb-c.h"

/* Each method's timeouts are what tk/v1/git.proto declares (option
 * (tk.v1.method)) unless the config says otherwise. */
typedef struct tkgit_config {
    /* READ methods: the default deadline (timeout_ms 0) and the ceiling no
     * caller's timeout passes, for all of them (a default above the
     * ceiling becomes the ceiling). 0: each method's declared one. */
    uint32_t read_timeout_ms;
    uint32_t read_ceiling_ms;
    /* WRITE methods: their own timeout, whatever the caller asked (the
     * default and the ceiling). 0: each method's declared one. */
    uint32_t write_timeout_ms;
    /* The git program; NULL: "git" found on PATH at tkgit_new. */
    const char *git;
} tkgit_config;

typedef struct tkgit tkgit;

void tkgit_config_init(tkgit_config *cfg);

/* Resolves the git program. libgit2 is initialised (once per tkgit) by
 * the first call that opens a repository, not here: an idle tkd does
 * without what it sets up (OpenSSL, libssh2). Call before threads start.
 * roots must outlive the service. Without git on PATH the service still
 * starts: the methods that run git answer FAILED_PRECONDITION
 * TOOL_NOT_FOUND (tool/). Errors: negative errno with a message in err. */
int tkgit_new(tkgit **out, const roots *rs, const tkgit_config *cfg, char *err,
              size_t errlen);
/* Adds tk.v1.Git's methods to srv (before rpc_server_start). */
int tkgit_register(tkgit *g, rpc_server *srv, char *err, size_t errlen);
/* After the server is freed. NULL is accepted. */
void tkgit_free(tkgit *g);

/* ---- for tests and fuzzing only ------------------------------------------
 * tkd never calls these: the parsers of what git prints, as the methods
 * run them, for a test or a fuzzer (tests/fuzz) to feed any bytes without
 * a repository (results are allocated through call: rpc__test_call_new),
 * and the rows of the reasons table, for tests/integration/git/. */

/* `git status --porcelain=v2 -z --branch` output into reply (Status):
 * 0, or -1 on output the method answers UNPARSEABLE_OUTPUT. */
int tkgit__test_parse_status(rpc_call *call, const char *out, size_t len,
                             Tk__V1__GitStatusReply *reply);
/* The numstat block of `git diff --numstat -z -p` into reply->files
 * (Diff): the offset where the patch starts, or -1. */
long tkgit__test_parse_numstat(rpc_call *call, const char *out, size_t len,
                               Tk__V1__GitDiffReply *reply);
/* A commit's raw message (NUL-terminated, as libgit2 gives it) into
 * out->subject and out->body, git's %s and %b (Log). */
void tkgit__test_message(rpc_call *call, const char *message,
                         Tk__V1__GitCommit *out);

/* The reasons of the one table (errors.c), a row each, in its order: the
 * number of rows, and the first max of them in out.
 * tests/integration/git/test_reasons.c produces each with real git,
 * libgit2 or roots, and fails on a row none of its cases produces. */
size_t tkgit__test_reasons(const char **out, size_t max);

/* How many times g initialised libgit2: 0 until a call opened a
 * repository, then 1, however many calls arrived together. */
unsigned tkgit__test_libgit2_inits(const tkgit *g);

/* Makes the commits one Log may walk max instead of two million (0: two
 * million again), so that a test reaches the bound with a history of a
 * few dozen commits. Before the server starts. */
void tkgit__test_set_log_walk_max(tkgit *g, uint32_t max);

#endif /* TK_SERVICE_GIT_H */
