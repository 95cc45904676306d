/* SPDX-License-Identifier: MIT */
/* The one table: what git printed, what libgit2 returned, or what
 * roots_resolve said, mapped to a reason and the canonical code that fits
 * it. Callers compare reasons; nothing else in tk looks at git's words.
 * tests/integration/git/test_reasons.c produces every row's reason
 * by meeting the situation with real git, libgit2 or roots, and fails on
 * a row none of its cases produces (tkgit__test_reasons). Three rows'
 * words of git are never met there, only their reasons: BAD_CONFIG_KEY's
 * (ConfigSet's allowlist leaves git no key it would call invalid:
 * tkgit__config_key_ok answers first, with this reason),
 * TOO_MANY_OPEN_FILES' (git out of descriptors while tkd is not cannot be
 * arranged; libgit2 out of them can, and tests/security/test_limits.py runs
 * a whole tkd out of them) and UNSAFE_REPOSITORY's (git is handed the git
 * dir tkd opened, and judges the ownership of none it is handed: libgit2's
 * check at the open is the one). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "git_int.h"

typedef struct lg_match {
    tkgit_step step; /* 0: any step */
    int error;       /* a git_error_code; 0 ends the list */
} lg_match;

#define N_PATTERNS 16

typedef struct reason_row {
    const char *reason;
    rpc_code code;
    /* Substrings of git's stderr (or stdout: git commit says "nothing to
     * commit" there), LC_ALL=C. */
    const char *patterns[N_PATTERNS];
    lg_match libgit2[3];
    int roots_errno; /* a -errno of roots_resolve, as a positive number */
} reason_row;

/* First match wins: more specific rows stand above more general ones. */
static const reason_row table[] = {
    { "PATH_OUTSIDE_ROOT",
      RPC_PERMISSION_DENIED,
      { NULL },
      { { 0, 0 } },
      EACCES },
    { "PATH_NOT_FOUND",
      RPC_NOT_FOUND,
      { "did not match any files", NULL },
      { { 0, 0 } },
      ENOENT },
    { "BAD_PATH", RPC_INVALID_ARGUMENT, { NULL }, { { 0, 0 } }, EINVAL },
    { "NOT_A_DIRECTORY",
      RPC_INVALID_ARGUMENT,
      { NULL },
      { { 0, 0 } },
      ENOTDIR },
    { "NOT_A_REPOSITORY",
      RPC_FAILED_PRECONDITION,
      { "not a git repository", NULL },
      { { TKGIT_STEP_OPEN, GIT_ENOTFOUND }, { 0, 0 } },
      0 },
    { "UNSAFE_REPOSITORY",
      RPC_PERMISSION_DENIED,
      { "detected dubious ownership", NULL },
      { { TKGIT_STEP_OPEN, GIT_EOWNER }, { 0, 0 } },
      0 },
    { "BARE_REPOSITORY",
      RPC_FAILED_PRECONDITION,
      { "must be run in a work tree", NULL },
      { { 0, GIT_EBAREREPO }, { 0, 0 } },
      0 },
    { "UNBORN_HEAD",
      RPC_FAILED_PRECONDITION,
      { "does not have any commits yet", "ambiguous argument 'HEAD'",
        "bad default revision 'HEAD'", "bad revision 'HEAD'\n", "unborn branch",
        NULL },
      { { 0, GIT_EUNBORNBRANCH }, { 0, 0 } },
      0 },
    { "INDEX_LOCKED",
      RPC_ABORTED,
      { "index.lock': File exists", NULL },
      { { 0, GIT_ELOCKED }, { 0, 0 } },
      0 },
    { "NOTHING_TO_COMMIT",
      RPC_FAILED_PRECONDITION,
      { "nothing to commit", "nothing added to commit",
        "no changes added to commit", NULL },
      { { 0, 0 } },
      0 },
    { "BRANCH_CHECKED_OUT",
      RPC_FAILED_PRECONDITION,
      { "is already checked out at", "is already used by worktree", NULL },
      { { 0, 0 } },
      0 },
    { "ALREADY_EXISTS",
      RPC_ALREADY_EXISTS,
      { "already exists", NULL },
      { { 0, GIT_EEXISTS }, { 0, 0 } },
      0 },
    { "WORKTREE_DIRTY",
      RPC_FAILED_PRECONDITION,
      { "contains modified or untracked files", NULL },
      { { 0, 0 } },
      0 },
    { "WORKTREE_LOCKED",
      RPC_FAILED_PRECONDITION,
      { "cannot remove a locked working tree", NULL },
      { { 0, 0 } },
      0 },
    { "WOULD_OVERWRITE",
      RPC_FAILED_PRECONDITION,
      { "would be overwritten by", NULL },
      { { 0, GIT_ECONFLICT }, { 0, 0 } },
      0 },
    { "IDENTITY_UNKNOWN",
      RPC_FAILED_PRECONDITION,
      { "Please tell me who you are", "empty ident name",
        "unable to auto-detect email address", NULL },
      { { 0, 0 } },
      0 },
    { "AMBIGUOUS_REVISION",
      RPC_INVALID_ARGUMENT,
      { "is ambiguous", NULL },
      { { TKGIT_STEP_REV, GIT_EAMBIGUOUS }, { 0, 0 } },
      0 },
    { "PATH_OUTSIDE_REPOSITORY",
      RPC_INVALID_ARGUMENT,
      { "is outside repository", NULL },
      { { 0, 0 } },
      0 },
    { "BAD_BRANCH_NAME",
      RPC_INVALID_ARGUMENT,
      { "is not a valid branch name", NULL },
      { { 0, 0 } },
      0 },
    { "BAD_CONFIG_KEY",
      RPC_INVALID_ARGUMENT,
      { "invalid key", "does not contain a section", "invalid section name",
        NULL },
      { { 0, 0 } },
      0 },
    { "BAD_REVISION",
      RPC_NOT_FOUND,
      { "unknown revision", "bad revision", "invalid object name",
        "not a valid object name", "Needed a single revision",
        "invalid reference",
        /* "@{upstream}", "@{push}" and "@{N}" that name nothing
         * (object-name.c) */
        "no upstream configured for branch", "does not point to a branch",
        "no such branch", "not stored as a remote-tracking branch",
        "has no remote for pushing", "has no local tracking branch",
        "push refspecs for", "push has no destination",
        "cannot resolve 'simple' push" },
      { { TKGIT_STEP_REV, GIT_ENOTFOUND },
        { TKGIT_STEP_REV, GIT_EINVALIDSPEC },
        { TKGIT_STEP_REV, GIT_EPEEL } },
      0 },
    /* Last: a name in another row's words may hold this text. Failed
     * through rpc_call_fail_fds (retry_after_ms, the log); libgit2's own
     * (an OS error, strerror at the end) is told by fds_errno_of. */
    { RPC_R_TOO_MANY_OPEN_FILES,
      RPC_RESOURCE_EXHAUSTED,
      { "Too many open files", NULL },
      { { 0, 0 } },
      0 },
};
#define N_ROWS (sizeof table / sizeof table[0])

size_t tkgit__test_reasons(const char **out, size_t max)
{
    for (size_t i = 0; i < N_ROWS && i < max; i++)
        out[i] = table[i].reason;
    return N_ROWS;
}

static const reason_row *find_row(const char *reason)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (strcmp(table[i].reason, reason) == 0)
            return &table[i];
    return NULL;
}

static bool row_matches_text(const reason_row *row, const char *text)
{
    if (text == NULL)
        return false;
    for (size_t i = 0; i < N_PATTERNS && row->patterns[i] != NULL; i++)
        if (strstr(text, row->patterns[i]) != NULL)
            return true;
    return false;
}

static const reason_row *match_text(const char *err, const char *out)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (row_matches_text(&table[i], err))
            return &table[i];
    for (size_t i = 0; i < N_ROWS; i++)
        if (row_matches_text(&table[i], out))
            return &table[i];
    return NULL;
}

static const reason_row *match_libgit2(tkgit_step step, int error)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        for (size_t j = 0; j < 3 && table[i].libgit2[j].error != 0; j++) {
            const lg_match *m = &table[i].libgit2[j];
            if (m->error == error && (m->step == 0 || m->step == step))
                return &table[i];
        }
    }
    return NULL;
}

/* The first line of git's that says what went wrong ("fatal: ...",
 * "error: ..."), else the first line, at most len - 1 bytes. */
static void headline(char *buf, size_t len, const char *text)
{
    buf[0] = '\0';
    if (text == NULL)
        return;
    const char *p = strstr(text, "fatal: ");
    if (p == NULL)
        p = strstr(text, "error: ");
    if (p == NULL)
        p = text;
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/* The line of text that holds one of row's patterns, at most len - 1
 * bytes; false when none does. git says why in that line ("nothing to
 * commit, working tree clean" after "On branch main"). */
static bool matched_line(char *buf, size_t len, const reason_row *row,
                         const char *text)
{
    if (text == NULL)
        return false;
    for (size_t i = 0; i < N_PATTERNS && row->patterns[i] != NULL; i++) {
        const char *hit = strstr(text, row->patterns[i]);
        if (hit == NULL)
            continue;
        const char *p = hit;
        while (p > text && p[-1] != '\n')
            p--;
        size_t n = strcspn(p, "\n");
        snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
        return true;
    }
    return false;
}

/* Whether the rev a caller named starts from HEAD ("HEAD", "HEAD~2",
 * "@", "@{-1}"...): on an unborn branch it names nothing yet. */
static bool names_head(const char *rev)
{
    return rev == NULL || rev[0] == '\0' || strncmp(rev, "HEAD", 4) == 0 ||
           rev[0] == '@';
}

/* On an unborn branch, a revision that starts from HEAD names nothing
 * yet: that is UNBORN_HEAD, not a bad revision. libgit2 reports it as a
 * reference not found, git as a revision it cannot resolve. */
static const reason_row *unborn_or(const reason_row *row, git_repository *repo,
                                   const char *rev)
{
    if (repo != NULL && git_repository_head_unborn(repo) == 1 &&
        names_head(rev))
        return find_row(TKGIT_R_UNBORN_HEAD);
    return row;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* EMFILE or ENFILE when libgit2 failed for want of a descriptor (an OS
 * error: its message ends in strerror's words), else 0. */
static int fds_errno_of(const git_error *e)
{
    if (e == NULL || e->klass != GIT_ERROR_OS || e->message == NULL)
        return 0;
    char ebuf[128];
    if (ends_with(e->message, tkc_strerror(ENFILE, ebuf, sizeof ebuf)))
        return ENFILE;
    if (ends_with(e->message, tkc_strerror(EMFILE, ebuf, sizeof ebuf)))
        return EMFILE;
    return 0;
}

/* What git said holds "Too many open files" (in system: ENFILE). */
static void fail_git_fds(rpc_call *call, const char *what, const char *line)
{
    char ebuf[128];
    int err = strstr(line, tkc_strerror(ENFILE, ebuf, sizeof ebuf)) != NULL
                  ? ENFILE
                  : EMFILE;
    rpc_call_fail_fds(call, err, "%s: %s", what, line);
}

/* Whether libgit2 1.5 (Debian 12's) refused a repository of another user:
 * with no safe.directory set in any config, its ownership check fails
 * with the lookup of that key, GIT_ENOTFOUND of class GIT_ERROR_CONFIG,
 * where a repository that is not there is of class GIT_ERROR_REPOSITORY.
 * libgit2 1.6.1 answers GIT_EOWNER there too (upstream commit 93c071ac4,
 * "ignore missing 'safe.directory' config during ownership checks"). */
static bool refused_owner(tkgit_step step, int error, const git_error *e)
{
    return step == TKGIT_STEP_OPEN && error == GIT_ENOTFOUND && e != NULL &&
           e->klass == GIT_ERROR_CONFIG;
}

void tkgit__fail_libgit2(rpc_call *call, git_repository *repo, tkgit_step step,
                         int error, const char *rev)
{
    const git_error *e = git_error_last();
    const char *detail = e != NULL && e->message != NULL ? e->message : "";
    int fds = fds_errno_of(e);
    if (fds != 0) {
        rpc_call_fail_fds(call, fds, "libgit2: %s", detail);
        return;
    }
    const reason_row *row = match_libgit2(step, error);
    if (refused_owner(step, error, e)) {
        row = find_row("UNSAFE_REPOSITORY");
        detail = "the repository is not owned by tkd's user, and no "
                 "safe.directory names it";
    }
    if (step == TKGIT_STEP_REV && error == GIT_ENOTFOUND)
        row = unborn_or(row, repo, rev);
    if (row == NULL) {
        rpc_call_fail(call, RPC_UNKNOWN, "LIBGIT2_ERROR", "libgit2: %s (%d)",
                      detail, error);
        return;
    }
    /* The reason is the status's own field: the message says the rest
     * once ("revspec 'nope' not found" names the revision already). */
    if (rev != NULL && strstr(detail, rev) == NULL)
        rpc_call_fail(call, row->code, row->reason, "\"%.200s\": %s", rev,
                      detail);
    else
        rpc_call_fail(call, row->code, row->reason, "%s", detail);
}

void tkgit__fail_git(rpc_call *call, const char *what, const proc_result *r,
                     git_repository *repo, const char *rev)
{
    char line[512];
    const reason_row *row = match_text(r->err, r->out);
    if (rev != NULL && row == find_row(TKGIT_R_BAD_REVISION))
        row = unborn_or(row, repo, rev);
    if (row == NULL || (!matched_line(line, sizeof line, row, r->err) &&
                        !matched_line(line, sizeof line, row, r->out)))
        headline(line, sizeof line,
                 r->err != NULL && r->err[0] != '\0' ? r->err : r->out);
    if (row == NULL) {
        char how[128];
        proc_result_describe(how, sizeof how, r);
        rpc_call_fail(call, RPC_UNKNOWN, "GIT_FAILED", "%s %s: %s", what, how,
                      line);
        return;
    }
    if (row == find_row(RPC_R_TOO_MANY_OPEN_FILES)) {
        fail_git_fds(call, what, line);
        return;
    }
    rpc_call_fail(call, row->code, row->reason, "%s: %s", what, line);
}

void tkgit__fail_path(rpc_call *call, int rv, const char *message)
{
    if (rpc_fds_exhausted(-rv)) {
        rpc_call_fail_fds(call, -rv, "%s", message);
        return;
    }
    for (size_t i = 0; i < N_ROWS; i++) {
        if (table[i].roots_errno != 0 && -table[i].roots_errno == rv) {
            rpc_call_fail(call, table[i].code, table[i].reason, "%s", message);
            return;
        }
    }
    rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH", "%s", message);
}
