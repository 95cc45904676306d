/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git with real git and real repositories (git_fx.h): every row of
 * the reasons table (service/git/errors.c), each produced by making git,
 * libgit2 or roots meet the situation, and a row that no case produces
 * fails; the config allowlist; whether a WRITE completed.
 */
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git/git.h"
#include "git_fx.h"
#include "tk/v1/git.tk.h"

/* ---- the reasons table, row by row -------------------------------------- */

typedef struct reason_case {
    const char *name;
    int code;
    const char *reason;
    void (*call)(tk_status *st); /* produces the situation and calls */
} reason_case;

static void call_rev(const char *repo, const char *rev, tk_status *st)
{
    char oid[41];
    rev_parse(repo, rev, oid, st);
}

static void call_log(const char *repo, const char *rev, tk_status *st)
{
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = (char *)repo;
    req.rev = (char *)rev;
    Tk__V1__GitLogReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_log(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_diff(const char *repo, const char *from, const char *path,
                      tk_status *st)
{
    Tk__V1__GitDiffRequest req = TK__V1__GIT_DIFF_REQUEST__INIT;
    req.repo = (char *)repo;
    req.from = (char *)from;
    ProtobufCBinaryData p = bin(path != NULL ? path : "");
    req.paths = &p;
    req.n_paths = path != NULL;
    Tk__V1__GitDiffReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_diff(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_commit(const char *repo, const char *path, tk_status *st)
{
    Tk__V1__GitCommitRequest req = TK__V1__GIT_COMMIT_REQUEST__INIT;
    req.repo = (char *)repo;
    req.message = "a message";
    ProtobufCBinaryData p = bin(path != NULL ? path : "");
    req.paths = &p;
    req.n_paths = path != NULL;
    Tk__V1__GitCommitReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_commit(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_checkout(const char *repo, const char *rev, const char *create,
                          tk_status *st)
{
    Tk__V1__GitCheckoutRequest req = TK__V1__GIT_CHECKOUT_REQUEST__INIT;
    req.repo = (char *)repo;
    req.rev = (char *)rev;
    req.create_branch = (char *)create;
    Tk__V1__GitCheckoutReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_checkout(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_worktree(const char *repo, const char *path, const char *rev,
                          tk_status *st)
{
    Tk__V1__GitWorktreeAddRequest req = TK__V1__GIT_WORKTREE_ADD_REQUEST__INIT;
    req.repo = (char *)repo;
    req.path = (char *)path;
    req.rev = (char *)rev;
    Tk__V1__GitWorktreeAddReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_worktree_add(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_worktree_remove(const char *repo, const char *path, bool force,
                                 tk_status *st)
{
    Tk__V1__GitWorktreeRemoveRequest req =
        TK__V1__GIT_WORKTREE_REMOVE_REQUEST__INIT;
    req.repo = (char *)repo;
    req.path = (char *)path;
    req.force = force;
    Tk__V1__GitWorktreeRemoveReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_worktree_remove(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_config_value(const char *repo, const char *key,
                              const char *value, tk_status *st)
{
    Tk__V1__GitConfigSetRequest req = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    req.repo = (char *)repo;
    req.key = (char *)key;
    req.value = (char *)value;
    Tk__V1__GitConfigSetReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_config_set(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_config(const char *repo, const char *key, tk_status *st)
{
    call_config_value(repo, key, "v", st);
}

/* WorktreeRemove removes a linked working tree of the repository named,
 * and nothing else: not the main one, not another repository's, not a
 * directory that is none; one with untracked files only with force. */
static void test_worktree_remove(void **state)
{
    (void)state;
    char repo[PATH_MAX], wt[PATH_MAX]; /* at() reuses its buffers */
    snprintf(repo, sizeof repo, "%s", scratch("wtrm"));
    snprintf(wt, sizeof wt, "%s", at("wtrm-wt"));
    GIT(repo, "worktree", "add", "-q", "--detach", wt, "HEAD");
    tk_status st;
    /* Its main working tree, another repository's linked one, none. */
    static const char *const refused[] = { "wtrm", "clone-detached", "plain" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        call_worktree_remove(repo, at(refused[i]), true, &st);
        if (st.code != TK_CODE_INVALID_ARGUMENT ||
            strcmp(st.reason, "NOT_A_LINKED_WORKTREE") != 0)
            fail_msg("%s: %s/%s (%s)", refused[i], tk_code_name(st.code),
                     st.reason, st.message);
        assert_true(exists(at(refused[i])));
        tk_status_clear(&st);
    }
    call_worktree_remove(repo, "", false, &st);
    assert_int_equal(st.code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "MISSING_FIELD");
    tk_status_clear(&st);

    char untracked[PATH_MAX + 16];
    snprintf(untracked, sizeof untracked, "%s/untracked", wt);
    write_file(untracked, "u\n", 0644);
    call_worktree_remove(repo, wt, false, &st);
    reap_adopted();
    assert_int_equal(st.code, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "WORKTREE_DIRTY");
    assert_true(exists(untracked));
    tk_status_clear(&st);
    call_worktree_remove(repo, wt, true, &st);
    assert_int_equal(st.code, TK_OK);
    assert_true(st.write_completed);
    tk_status_clear(&st);
    assert_false(exists(wt));
    const char *args[] = { "worktree", "list", "--porcelain", NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    assert_null(strstr(out, "wtrm-wt"));
    free(out);
}

static void r_outside_root(tk_status *st)
{
    call_rev("/", "HEAD", st);
}

static void r_symlink_escape(tk_status *st)
{
    /* A link inside the root to a repository outside it. */
    char outside[PATH_MAX];
    assert_int_equal(ts_mkdtemp(outside, sizeof outside, "outside"), 0);
    GIT(outside, "init", "-q");
    assert_int_equal(symlink(outside, at("escape")), 0);
    call_rev(at("escape"), "HEAD", st);
    ts_rmtree(outside);
}

static void r_gitdir_escape(tk_status *st)
{
    /* A .git link inside the root whose repository lies outside it. */
    char outside[PATH_MAX], link[PATH_MAX + 8];
    assert_int_equal(ts_mkdtemp(outside, sizeof outside, "outside"), 0);
    GIT(outside, "init", "-q");
    assert_int_equal(mkdir(at("gitlink"), 0755), 0);
    snprintf(link, sizeof link, "%s/.git", outside);
    assert_int_equal(symlink(link, at("gitlink/.git")), 0);
    call_rev(at("gitlink"), "HEAD", st);
    ts_rmtree(outside);
}

static void r_path_not_found(tk_status *st)
{
    call_rev(at("no-such-dir"), "HEAD", st);
}

static void r_add_missing(tk_status *st)
{
    call_commit(scratch("addmissing"), "no-such-file", st);
}

static void r_not_repo(tk_status *st)
{
    call_rev(at("plain"), "HEAD", st);
}

static void r_bare(tk_status *st)
{
    call_status(at("bare.git"), st);
}

static void r_unborn_rev(tk_status *st)
{
    call_rev(at("unborn"), "HEAD", st);
}

static void r_unborn_log(tk_status *st)
{
    call_log(at("unborn"), "", st);
}

static void r_unborn_diff(tk_status *st)
{
    call_diff(at("unborn"), "HEAD", NULL, st); /* the CLI's words */
}

static void r_bad_rev(tk_status *st)
{
    call_rev(at("main"), "no-such-branch", st);
}

static void r_bad_rev_log(tk_status *st)
{
    call_log(at("main"), "no-such-branch", st);
}

static void r_bad_rev_diff(tk_status *st)
{
    call_diff(at("main"), "-no-such-rev", NULL, st);
}

static void r_bad_rev_checkout(tk_status *st)
{
    call_checkout(at("main"), "no-such-branch", "", st);
}

static void r_ambiguous(tk_status *st)
{
    FILE *f = fopen(at("ambiguous-prefix"), "re");
    assert_non_null(f);
    char prefix[16] = "";
    assert_non_null(fgets(prefix, sizeof prefix, f));
    assert_int_equal(fclose(f), 0);
    prefix[strcspn(prefix, "\n")] = '\0';
    call_rev(at("main"), prefix, st);
}

static void r_index_locked(tk_status *st)
{
    const char *repo = scratch("locked");
    write_file(at("locked/.git/index.lock"), "", 0644);
    write_file(at("locked/new.txt"), "new\n", 0644);
    call_commit(repo, "new.txt", st);
}

static void r_nothing(tk_status *st)
{
    call_commit(scratch("nothing"), NULL, st);
}

static void r_branch_exists(tk_status *st)
{
    call_checkout(scratch("branchexists"), "", "main", st);
}

static void r_worktree_exists(tk_status *st)
{
    call_worktree(at("main"), at("main/dir"), "light", st);
}

static void r_checked_out(tk_status *st)
{
    call_worktree(at("main"), at("main-wt-of-main"), "main", st);
}

static void r_would_overwrite(tk_status *st)
{
    const char *repo = scratch("overwrite");
    write_file(at("overwrite/a b.txt"), "local change\n", 0644);
    call_checkout(repo, "light", "", st);
}

static void r_identity(tk_status *st)
{
    const char *repo = scratch("identity");
    GIT(repo, "config", "--unset", "user.name");
    GIT(repo, "config", "--unset", "user.email");
    GIT(repo, "config", "user.useConfigOnly", "true");
    write_file(at("identity/new.txt"), "new\n", 0644);
    call_commit(repo, "new.txt", st);
}

static void r_outside_repo(tk_status *st)
{
    call_diff(at("main"), "HEAD", "../clone", st);
}

static void r_bad_key(tk_status *st)
{
    call_config(scratch("badkey"), "nodot", st);
}

static void r_key_not_allowed(tk_status *st)
{
    call_config(scratch("notallowed"), "core.fsmonitor", st);
}

static void r_not_a_directory(tk_status *st)
{
    call_rev(at("main/a b.txt/below"), "HEAD", st); /* realpath: ENOTDIR */
}

static void r_relative_path(tk_status *st)
{
    call_rev("main", "HEAD", st); /* roots_resolve: EINVAL */
}

static void r_bad_branch_name(tk_status *st)
{
    call_checkout(scratch("badbranch"), "", "bad..name", st);
}

static int chown_nobody(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return lchown(path, 65534, 65534) == 0 ? 0 : -1;
}

/* A clone of main that belongs to another user (nobody). */
static const char *foreign(const char *name)
{
    const char *repo = scratch(name);
    assert_int_equal(nftw(repo, chown_nobody, 16, FTW_PHYS), 0);
    return repo;
}

/* safe.directory in the global config the server's libgit2 and git read
 * (NULL: none). main() gives the test, and so them, a HOME of its own:
 * only the cases below set it there. The system's config must set none. */
static void safe_directory(const char *value)
{
    char config[PATH_MAX + 16];
    snprintf(config, sizeof config, "%s/.gitconfig", getenv("HOME"));
    if (value != NULL)
        GIT(dir, "config", "--file", config, "--add", "safe.directory", value);
    else
        GIT(dir, "config", "--file", config, "--unset-all", "safe.directory");
}

/* Another user's repository and no safe.directory anywhere: libgit2 1.5
 * fails its ownership check with the lookup of that key (errors.c,
 * refused_owner), where 1.6.1 answers GIT_EOWNER. */
static void r_unsafe(tk_status *st)
{
    call_rev(foreign("unsafe"), "HEAD", st);
}

/* Another user's repository, and a safe.directory that names another
 * directory: libgit2's GIT_EOWNER. */
static void r_unsafe_eowner(tk_status *st)
{
    const char *repo = foreign("unsafe-eowner");
    safe_directory(at("main"));
    call_rev(repo, "HEAD", st);
    safe_directory(NULL);
}

/* Where libgit2 1.5 and git 2.39 judge apart, libgit2's judgement is the
 * one: a safe.directory with a trailing '/' names the repository for
 * libgit2, which reads the value as a directory, and not for git, which
 * compares its text. tkd opens the repository and hands git its git dir
 * (--git-dir), and git judges no ownership of a git dir it is given: the
 * Status runs. (Before tk handed git the repository, git discovered it
 * and refused it: "detected dubious ownership".) */
static void test_libgit2_judges_ownership(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("[   SKIP   ] not root: no repository of another "
                      "user\n");
        skip();
    }
    const char *repo = foreign("unsafe-git");
    char real[PATH_MAX], value[PATH_MAX + 2];
    assert_non_null(realpath(repo, real));
    snprintf(value, sizeof value, "%s/", real);
    safe_directory(value);
    tk_status st;
    call_status(repo, &st);
    safe_directory(NULL);
    if (st.code != TK_OK)
        fail_msg("%s/%s (%s)", tk_code_name(st.code), st.reason, st.message);
    tk_status_clear(&st);
}

/* A bare repository inside another's working tree (as a commit can hold
 * one): tk does not open it (git's safe.bareRepository=explicit). */
static void r_nested_bare(tk_status *st)
{
    const char *repo = scratch("nested-bare");
    char inner[PATH_MAX + 16];
    snprintf(inner, sizeof inner, "%s/vendor/evil", repo);
    GIT(repo, "init", "-q", "--bare", inner);
    call_status(inner, st);
}

/* WorktreeRemove of a linked working tree (name-wt, of a scratch
 * repository name) with an untracked file, or a locked one. */
static void remove_linked(const char *name, bool lock, tk_status *st)
{
    const char *repo = scratch(name);
    char wt[PATH_MAX + 8];
    snprintf(wt, sizeof wt, "%s-wt", repo);
    GIT(repo, "worktree", "add", "-q", "--detach", wt, "HEAD");
    if (lock) {
        GIT(repo, "worktree", "lock", wt);
    } else {
        char untracked[PATH_MAX + 24];
        snprintf(untracked, sizeof untracked, "%s/untracked", wt);
        write_file(untracked, "u\n", 0644);
    }
    call_worktree_remove(repo, wt, lock, st);
    reap_adopted();
    assert_true(exists(wt));
}

static void r_worktree_dirty(tk_status *st)
{
    remove_linked("wt-dirty", false, st);
}

static void r_worktree_locked(tk_status *st)
{
    remove_linked("wt-locked", true, st);
}

/* With the descriptors used up (the soft RLIMIT_NOFILE lowered to the
 * lowest free descriptor while the call runs, as in test_proc.c), libgit2
 * cannot open a repository no worker has open. The call travels on the
 * connection made before. */
static void r_out_of_fds(tk_status *st)
{
    const char *repo = scratch("nofds");
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int lowest = dup(STDIN_FILENO);
    assert_true(lowest >= 0);
    close(lowest);
    struct rlimit full = { .rlim_cur = (rlim_t)lowest,
                           .rlim_max = saved.rlim_max };
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &full), 0);
    call_rev(repo, "HEAD", st);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

static const reason_case reason_cases[] = {
    { "outside root", TK_CODE_PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
      r_outside_root },
    { "symlink escape", TK_CODE_PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
      r_symlink_escape },
    { ".git escape", TK_CODE_PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
      r_gitdir_escape },
    { "missing repo", TK_CODE_NOT_FOUND, "PATH_NOT_FOUND", r_path_not_found },
    { "add missing", TK_CODE_NOT_FOUND, "PATH_NOT_FOUND", r_add_missing },
    { "not a repo", TK_CODE_FAILED_PRECONDITION, "NOT_A_REPOSITORY",
      r_not_repo },
    { "bare", TK_CODE_FAILED_PRECONDITION, "BARE_REPOSITORY", r_bare },
    { "unborn rev", TK_CODE_FAILED_PRECONDITION, "UNBORN_HEAD", r_unborn_rev },
    { "unborn log", TK_CODE_FAILED_PRECONDITION, "UNBORN_HEAD", r_unborn_log },
    { "unborn diff", TK_CODE_FAILED_PRECONDITION, "UNBORN_HEAD",
      r_unborn_diff },
    { "bad rev", TK_CODE_NOT_FOUND, "BAD_REVISION", r_bad_rev },
    { "bad rev log", TK_CODE_NOT_FOUND, "BAD_REVISION", r_bad_rev_log },
    { "bad rev diff", TK_CODE_NOT_FOUND, "BAD_REVISION", r_bad_rev_diff },
    { "bad rev checkout", TK_CODE_NOT_FOUND, "BAD_REVISION",
      r_bad_rev_checkout },
    { "ambiguous", TK_CODE_INVALID_ARGUMENT, "AMBIGUOUS_REVISION",
      r_ambiguous },
    { "index locked", TK_CODE_ABORTED, "INDEX_LOCKED", r_index_locked },
    { "nothing to commit", TK_CODE_FAILED_PRECONDITION, "NOTHING_TO_COMMIT",
      r_nothing },
    { "branch exists", TK_CODE_ALREADY_EXISTS, "ALREADY_EXISTS",
      r_branch_exists },
    { "worktree exists", TK_CODE_ALREADY_EXISTS, "ALREADY_EXISTS",
      r_worktree_exists },
    { "checked out", TK_CODE_FAILED_PRECONDITION, "BRANCH_CHECKED_OUT",
      r_checked_out },
    { "worktree dirty", TK_CODE_FAILED_PRECONDITION, "WORKTREE_DIRTY",
      r_worktree_dirty },
    { "worktree locked", TK_CODE_FAILED_PRECONDITION, "WORKTREE_LOCKED",
      r_worktree_locked },
    { "would overwrite", TK_CODE_FAILED_PRECONDITION, "WOULD_OVERWRITE",
      r_would_overwrite },
    { "identity", TK_CODE_FAILED_PRECONDITION, "IDENTITY_UNKNOWN", r_identity },
    { "outside repo", TK_CODE_INVALID_ARGUMENT, "PATH_OUTSIDE_REPOSITORY",
      r_outside_repo },
    { "bad key", TK_CODE_INVALID_ARGUMENT, "BAD_CONFIG_KEY", r_bad_key },
    { "key not allowed", TK_CODE_PERMISSION_DENIED, "CONFIG_KEY_NOT_ALLOWED",
      r_key_not_allowed },
    { "not a directory", TK_CODE_INVALID_ARGUMENT, "NOT_A_DIRECTORY",
      r_not_a_directory },
    { "relative path", TK_CODE_INVALID_ARGUMENT, "BAD_PATH", r_relative_path },
    { "bad branch name", TK_CODE_INVALID_ARGUMENT, "BAD_BRANCH_NAME",
      r_bad_branch_name },
    { "unsafe", TK_CODE_PERMISSION_DENIED, "UNSAFE_REPOSITORY", r_unsafe },
    { "unsafe, GIT_EOWNER", TK_CODE_PERMISSION_DENIED, "UNSAFE_REPOSITORY",
      r_unsafe_eowner },
    { "unsafe, a bare repository in a working tree", TK_CODE_PERMISSION_DENIED,
      "UNSAFE_REPOSITORY", r_nested_bare },
    { "out of descriptors", TK_CODE_RESOURCE_EXHAUSTED, "TOO_MANY_OPEN_FILES",
      r_out_of_fds },
};
#define N_REASON_CASES (sizeof reason_cases / sizeof reason_cases[0])

/* What some cases' messages must hold, exactly once: a status says what
 * happened, and says it once. */
static const struct {
    const char *name, *says;
} reason_says[] = {
    { "bad rev", "no-such-branch" },
    { "bad rev log", "no-such-branch" },
    { "nothing to commit", "nothing to commit" },
    { "relative path", "repo: \"main\"" },
};

static size_t count_in(const char *text, const char *part)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, part)) != NULL; p++)
        n++;
    return n;
}

/* The reason is a field of its own: no message repeats it. */
static void expect_message(const reason_case *c, const char *message)
{
    if (strstr(message, c->reason) != NULL)
        fail_msg("%s: the message repeats the reason %s: %s", c->name,
                 c->reason, message);
    for (size_t i = 0; i < sizeof reason_says / sizeof reason_says[0]; i++)
        if (strcmp(reason_says[i].name, c->name) == 0 &&
            count_in(message, reason_says[i].says) != 1)
            fail_msg("%s: the message should say \"%s\" once: %s", c->name,
                     reason_says[i].says, message);
}

/* The cases that give a repository to another user: root only. */
static bool needs_root(const reason_case *c)
{
    return c->call == r_unsafe || c->call == r_unsafe_eowner;
}

/* ConfigSet writes the keys of its allowlist only (service/git/config.c),
 * matched as git matches them (section and name without case, any
 * subsection where one is allowed), and a path value only inside the
 * roots; what it refuses never reaches the repository's config. */
static void test_config_allowlist(void **state)
{
    (void)state;
    const char *repo = scratch("allowlist");
    char inside[PATH_MAX + 32], outside[PATH_MAX];
    snprintf(inside, sizeof inside, "%s/.git/tk-excludes", repo);
    assert_int_equal(ts_mkdtemp(outside, sizeof outside, "outside"), 0);
    strncat(outside, "/excludes", sizeof outside - strlen(outside) - 1);
    /* Each takes "v" (core.autocrlf took it too until 31f2572, and then
     * git could not read the config: tests/security/test_config_set.py
     * checks the values). */
    static const char *const keys_ok[] = { "USER.Email", "branch.main.merge",
                                           "branch.a.b.c.remote",
                                           "branch.main.description" };
    static const char *const keys_refused[] = {
        "core.fsmonitor",    "core.hooksPath",
        "include.path",      "includeIf.gitdir:/x.path",
        "core.worktree",     "core.sshCommand",
        "alias.st",          "filter.x.clean",
        "credential.helper", "core.pager",
        "user.name.x",       "branch.email",
        "diff.x.textconv",   "tk.example",
    };
    tk_status st;
    for (size_t i = 0; i < sizeof keys_ok / sizeof keys_ok[0]; i++) {
        call_config_value(repo, keys_ok[i], "v", &st);
        if (st.code != TK_OK)
            fail_msg("%s: %s (%s)", keys_ok[i], tk_code_name(st.code),
                     st.message);
        tk_status_clear(&st);
    }
    for (size_t i = 0; i < sizeof keys_refused / sizeof keys_refused[0]; i++) {
        call_config_value(repo, keys_refused[i], "true", &st);
        if (st.code != TK_CODE_PERMISSION_DENIED ||
            strcmp(st.reason, "CONFIG_KEY_NOT_ALLOWED") != 0)
            fail_msg("%s: %s/%s (%s)", keys_refused[i], tk_code_name(st.code),
                     st.reason, st.message);
        tk_status_clear(&st);
    }
    call_config_value(repo, "core.excludesFile", inside, &st);
    assert_int_equal(st.code, TK_OK);
    tk_status_clear(&st);
    call_config_value(repo, "core.excludesFile", outside, &st);
    assert_int_equal(st.code, TK_CODE_PERMISSION_DENIED);
    assert_string_equal(st.reason, "PATH_OUTSIDE_ROOT");
    tk_status_clear(&st);
    call_config_value(repo, "core.excludesFile", "excludes", &st);
    assert_int_equal(st.code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "BAD_PATH");
    tk_status_clear(&st);
    /* What was refused is not in the config; what was allowed is. */
    const char *args[] = { "config", "--local", "--list", NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    assert_non_null(strstr(out, "user.email=v\n"));
    assert_non_null(strstr(out, "branch.main.merge=v\n"));
    assert_null(strstr(out, "fsmonitor"));
    assert_null(strstr(out, "hookspath"));
    assert_null(strstr(out, "include"));
    assert_null(strstr(out, "worktree"));
    assert_null(strstr(out, "alias"));
    assert_null(strstr(out, outside));
    free(out);
    outside[strlen(outside) - strlen("/excludes")] = '\0';
    ts_rmtree(outside);
}

/* Every row of the table (tkgit__test_reasons) is produced by a case that
 * ran: a row added without one fails here. "missing" gets the rows no case
 * produces, "unchecked" those whose cases did not run (needs_root). */
static void rows_not_produced(const bool ran[], char *missing, char *unchecked,
                              size_t len)
{
    const char *rows[64];
    size_t n_rows = tkgit__test_reasons(rows, 64);
    assert_true(n_rows <= 64);
    missing[0] = unchecked[0] = '\0';
    for (size_t r = 0; r < n_rows; r++) {
        bool produced = false, skipped = false;
        for (size_t i = 0; i < N_REASON_CASES; i++) {
            if (strcmp(reason_cases[i].reason, rows[r]) == 0) {
                produced = produced || ran[i];
                skipped = skipped || !ran[i];
            }
        }
        char *out = produced ? NULL : skipped ? unchecked : missing;
        if (out != NULL)
            snprintf(out + strlen(out), len - strlen(out), " %s", rows[r]);
    }
}

static void test_reasons(void **state)
{
    (void)state;
    bool ran[N_REASON_CASES] = { false };
    for (size_t i = 0; i < N_REASON_CASES; i++) {
        const reason_case *c = &reason_cases[i];
        if (needs_root(c) && geteuid() != 0)
            continue;
        tk_status st;
        memset(&st, 0, sizeof st);
        c->call(&st);
        if (st.code != c->code || strcmp(st.reason, c->reason) != 0)
            fail_msg("%s: got %s/%s (%s), want %s/%s", c->name,
                     tk_code_name(st.code), st.reason, st.message,
                     tk_code_name(c->code), c->reason);
        expect_message(c, st.message);
        tk_status_clear(&st);
        ran[i] = true;
    }
    char missing[1024], unchecked[1024];
    rows_not_produced(ran, missing, unchecked, sizeof missing);
    if (missing[0] != '\0')
        fail_msg("rows of service/git/errors.c that no case of test_reasons "
                 "produces:%s",
                 missing);
    if (unchecked[0] != '\0') {
        fprintf(stderr,
                "skipped: not root, so no repository of another user:%s\n",
                unchecked);
        skip();
    }
}

/* A WRITE says write_completed only for a write that began: refused by
 * its checks it wrote nothing, and says false; once git ran, the write
 * ran to its end, whatever git answered. */
static void test_write_completed_only_when_begun(void **state)
{
    (void)state;
    static const struct {
        const char *repo, *rev;
        const char *reason;
    } refused[] = {
        { "", "main", "MISSING_FIELD" },
        { "main", "-x", "BAD_REVISION" },
        { "main", "", "BAD_ARGUMENTS" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tk_status st;
        const char *repo =
            refused[i].repo[0] != '\0' ? at(refused[i].repo) : "";
        if (strcmp(refused[i].reason, "BAD_ARGUMENTS") == 0) {
            Tk__V1__GitCommitRequest req = TK__V1__GIT_COMMIT_REQUEST__INIT;
            req.repo = (char *)repo;
            req.message = "m";
            req.all = true;
            ProtobufCBinaryData p = bin("a.txt");
            req.paths = &p;
            req.n_paths = 1;
            Tk__V1__GitCommitReply *rep = NULL;
            tk_call_opts o = { .timeout_ms = 20000 };
            assert_int_not_equal(tk_git_commit(fx.client, &req, &rep, &o, &st),
                                 TK_OK);
        } else {
            call_checkout(repo, refused[i].rev, "", &st);
        }
        assert_string_equal(st.reason, refused[i].reason);
        if (st.write_completed)
            fail_msg("%s: a refused write claims write_completed",
                     refused[i].reason);
        tk_status_clear(&st);
    }
    tk_status st;
    call_commit(scratch("nothing-began"), NULL, &st);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "NOTHING_TO_COMMIT");
    assert_true(st.write_completed); /* git commit ran to its end */
    tk_status_clear(&st);
}

int main(void)
{
    if (git_fx_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worktree_remove),
        cmocka_unit_test(test_config_allowlist),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_libgit2_judges_ownership),
        cmocka_unit_test(test_write_completed_only_when_begun),
    };
    int rv = cmocka_run_group_tests(tests, git_fx_setup, git_fx_teardown);
    git_fx_fini();
    return rv;
}
