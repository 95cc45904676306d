/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git with real git and real repositories (git_fixture.sh builds
 * them), through an in-process server and libtkclient's typed stubs:
 *   - what each method returns, a leading '-' always being data;
 *   - every row of the reasons table (service/git/errors.c), each produced
 *     by making git, libgit2 or roots meet the situation, and a row that no
 *     case produces fails;
 *   - the lifetimes (DESIGN.md): a cancelled READ kills git's whole process
 *     tree, a READ ends at its ceiling, a cancelled WRITE completes,
 *     GIT_OPTIONAL_LOCKS=0 keeps reads off index.lock, core.quotepath=off
 *     gives paths as their bytes — each with its negative control;
 *   - libgit2 (RevParse, Log) against the git CLI on the same fixtures.
 * Hooks announce themselves through fifos and the tests watch .git with
 * inotify: nothing here waits by sleeping.
 *
 * The test process is a child subreaper, as in test_proc.c: what git's
 * hooks leave behind comes back to it, so their deaths are observed and
 * reaped here.
 *
 * Where there is no child subreaper (PR_SET_CHILD_SUBREAPER, Linux's
 * prctl), no /proc or no inotify (macOS has none of them), a test that
 * needs one says so and is skipped; the others run. Which it is is judged
 * by the facility itself (its macro, /proc/self/status), never by the
 * system's name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* inotify(7) and prctl(2) are Linux's alone, and so are their headers: no
 * check can ask whether they are there without including them. What this
 * file uses of them is then judged by their macros (IN_CREATE,
 * PR_SET_CHILD_SUBREAPER). */
#ifdef __linux__
#include <sys/inotify.h>
#include <sys/prctl.h>
#endif

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git/git.h"
#include "proc/proc.h"
#include "tk/v1/git.tk.h"
#include "tsem.h"

static char dir[PATH_MAX];     /* the fixture */
static char git_bin[PATH_MAX]; /* the git the CLI side runs */

/* Set in main, before any test: this process is a child subreaper, and
 * there is a /proc (each process's stat and fds, /proc/self/fd). */
static bool subreaper, have_proc;

/* Skips the current test, saying why, when this system lacks what it
 * needs. */
static void need(bool have, const char *what)
{
    if (!have) {
        print_message("[   SKIP   ] this system has no %s\n", what);
        skip();
    }
}

#define NEED_PROC(why) need(have_proc, "/proc (" why ")")

/* dir/rel, in one of a few rotating buffers. */
static const char *at(const char *rel)
{
    static char bufs[8][PATH_MAX + 64];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, rel);
    return b;
}

/* ---- server fixture (fixture.h): tk.v1.Git, the fixture its root ------ */

static ts_fx fx; /* the group's server: default ceilings */

typedef struct git_opts {
    uint32_t read_ceiling_ms; /* 0: the default */
    const char *git;          /* the git program to look for; NULL: "git" */
} git_opts;

static void *git_add(ts_fx *f, void *arg)
{
    const git_opts *o = arg;
    tkgit_config gc;
    tkgit_config_init(&gc);
    if (o->read_ceiling_ms != 0)
        gc.read_ceiling_ms = gc.read_timeout_ms = o->read_ceiling_ms;
    gc.git = o->git;
    char err[512] = "";
    tkgit *git = NULL;
    assert_int_equal(tkgit_new(&git, f->roots, &gc, err, sizeof err), 0);
    assert_int_equal(tkgit_register(git, f->srv, err, sizeof err), 0);
    return git;
}

static void git_free(void *git)
{
    tkgit_free(git);
}

/* A server of its own: read_ceiling_ms and workers 0 are the defaults;
 * git_name is the git program to look for (NULL: "git"). */
static void fx_start_git(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers,
                         const char *git_name)
{
    git_opts go = { .read_ceiling_ms = read_ceiling_ms, .git = git_name };
    const ts_fx_service git = { .add = git_add, .free = git_free, .arg = &go };
    const char *rootdir = dir;
    ts_fx_start(f, &(ts_fx_opts){ .tag = "gitsrv",
                                  .workers = workers,
                                  .roots = &rootdir,
                                  .n_roots = 1,
                                  .services = &git,
                                  .n_services = 1 });
}

static void fx_start(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers)
{
    fx_start_git(f, read_ceiling_ms, workers, NULL);
}

/* ---- the CLI side and the file system ------------------------------------ */

/* Runs git with args in repo; returns its stdout (malloc'd, may hold NULs)
 * and sets *status (exit code). Environment as the fixture built it. */
static char *git_cli(const char *repo, int *status, size_t *len,
                     const char *const *args)
{
    const char *argv[32] = { git_bin, "-C", repo };
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[] = { "LC_ALL=C", NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    *status = ts_finish(&p, 20000);
    char *out = malloc(p.out_len + 1);
    assert_non_null(out);
    if (p.out_len > 0)
        memcpy(out, p.out, p.out_len);
    out[p.out_len] = '\0';
    if (len != NULL)
        *len = p.out_len;
    ts_proc_free(&p);
    return out;
}

#define GIT(repo, ...)                                                         \
    do {                                                                       \
        const char *args_[] = { __VA_ARGS__, NULL };                           \
        int st_;                                                               \
        free(git_cli(repo, &st_, NULL, args_));                                \
        assert_int_equal(st_, 0);                                              \
    } while (0)

static void write_file(const char *path, const char *text, int mode)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, (mode_t)mode), 0);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* This process's children, from /proc: up to max of their pids, and each
 * one's state ('Z': a zombie); how many there are. */
static size_t children(pid_t *pids, char *states, size_t max)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "re");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        (void)fclose(f);
        buf[len] = '\0';
        char *rp = strrchr(buf, ')');
        if (rp == NULL || rp[1] != ' ' ||
            strtol(rp + 4, NULL, 10) != (long)getpid())
            continue;
        if (n < max) {
            pids[n] = (pid_t)strtol(e->d_name, NULL, 10);
            states[n] = rp[2];
        }
        n++;
    }
    closedir(d);
    return n;
}

/* Reaps the processes this subreaper adopted: git 2.39's `worktree
 * remove` of a working tree with changes dies without waiting for the
 * `git status` it ran, which then comes back to this process. What a test
 * runs through the server is over (and reaped by proc/) when its call
 * returns, so every child left is such an orphan. */
static void reap_adopted(void)
{
    if (!subreaper || !have_proc)
        return;
    pid_t pids[16];
    char states[16];
    size_t n = children(pids, states, 16);
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++)
        assert_true(ts_reap_orphan(pids[i], 5000) != -1);
}

/* A fresh clone of main under name, for tests that change a repository. */
static const char *scratch(const char *name)
{
    const char *path = at(name);
    GIT(dir, "clone", "-q", at("main"), path);
    GIT(path, "config", "user.name", "Tk Tester");
    GIT(path, "config", "user.email", "tester@example.com");
    return path;
}

/* core.fsmonitor of repo in its owner's configuration: tkd's user's global
 * config (main() gives the test a HOME of its own), scoped to repo by an
 * includeIf. A READ runs the owner's fsmonitor, never the one the
 * repository's own config names (service/git/read_env.c). */
static void owner_fsmonitor(const char *repo, const char *hook)
{
    char real[PATH_MAX], inc[PATH_MAX + 16], key[PATH_MAX + 32],
        global[PATH_MAX + 16];
    assert_non_null(realpath(repo, real));
    snprintf(inc, sizeof inc, "%s.owner", real);
    snprintf(key, sizeof key, "includeIf.gitdir:%s/.git.path", real);
    snprintf(global, sizeof global, "%s/.gitconfig", getenv("HOME"));
    GIT(dir, "config", "--file", inc, "core.fsmonitor", hook);
    GIT(dir, "config", "--file", global, key, inc);
}

/* ---- calls --------------------------------------------------------------- */

static ProtobufCBinaryData bin(const char *s)
{
    ProtobufCBinaryData b = { strlen(s), (uint8_t *)s };
    return b;
}

static bool bin_eq(ProtobufCBinaryData b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

static void expect(const tk_status *st, int code, const char *reason)
{
    if (st->code != code || strcmp(st->reason, reason) != 0)
        fail_msg("got %s/%s (%s), want %s/%s", tk_code_name(st->code),
                 st->reason, st->message, tk_code_name(code), reason);
}

static int rev_parse_on(tk_client *c, const char *repo, const char *rev,
                        char *oid, tk_status *st)
{
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = (char *)repo;
    req.rev = (char *)rev;
    Tk__V1__GitRevParseReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_rev_parse(c, &req, &rep, &o, st);
    if (code == TK_CODE_OK) {
        snprintf(oid, 41, "%s", rep->oid);
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    }
    return code;
}

static int rev_parse(const char *repo, const char *rev, char *oid,
                     tk_status *st)
{
    return rev_parse_on(fx.client, repo, rev, oid, st);
}

/* ---- what the methods return ------------------------------------------- */

/* Without git on PATH the service still starts: what runs git says so,
 * with tool/'s one answer for a missing program (FAILED_PRECONDITION
 * TOOL_NOT_FOUND, as Search and Services say it); libgit2's methods
 * still answer. */
static void test_without_git(void **state)
{
    (void)state;
    ts_fx f;
    fx_start_git(&f, 0, 0, "tk-no-such-git-program");
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)at("main");
    Tk__V1__GitStatusReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_status(f.client, &req, &rep, &o, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_non_null(strstr(st.message, "is not on tkd's PATH"));
    tk_status_clear(&st);
    Tk__V1__GitRevParseRequest rreq = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    rreq.repo = (char *)at("main");
    rreq.rev = "HEAD";
    Tk__V1__GitRevParseReply *rrep = NULL;
    assert_int_equal(tk_git_rev_parse(f.client, &rreq, &rrep, &o, &st),
                     TK_CODE_OK);
    protobuf_c_message_free_unpacked(&rrep->base, NULL);
    tk_status_clear(&st);
    ts_fx_stop(&f);
}

static int status_of_main(tk_client *c, tk_status *st)
{
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)at("main");
    Tk__V1__GitStatusReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_status(c, &req, &rep, &o, st);
    if (rep != NULL)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    return code;
}

/* The git tkd found at start, gone when a call runs it: the same answer
 * as no git at all, FAILED_PRECONDITION TOOL_NOT_FOUND (it was INTERNAL
 * GIT_NOT_STARTED), for a READ and for a WRITE, which did not complete.
 * One there but not executable: INTERNAL TOOL_NOT_STARTED. The negative
 * control: the same calls while it is there. */
static void test_git_gone_after_start(void **state)
{
    (void)state;
    char tmp[PATH_MAX], link[PATH_MAX + 16];
    assert_int_equal(ts_mkdtemp(tmp, sizeof tmp, "gitgone"), 0);
    snprintf(link, sizeof link, "%s/git", tmp);
    assert_int_equal(symlink(git_bin, link), 0);
    ts_fx f;
    fx_start_git(&f, 0, 0, link);
    tk_status st;
    assert_int_equal(status_of_main(f.client, &st), TK_CODE_OK);
    tk_status_clear(&st);

    assert_int_equal(unlink(link), 0);
    assert_int_equal(status_of_main(f.client, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_non_null(strstr(st.message, "program not found"));
    tk_status_clear(&st);
    Tk__V1__GitConfigSetRequest req = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.key = "user.name";
    req.value = "Gone";
    Tk__V1__GitConfigSetReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_config_set(f.client, &req, &rep, &o, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_false(st.write_completed);
    tk_status_clear(&st);

    int fd = open(link, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(status_of_main(f.client, &st), TK_CODE_INTERNAL);
    expect(&st, TK_CODE_INTERNAL, "TOOL_NOT_STARTED");
    tk_status_clear(&st);
    ts_fx_stop(&f);
    ts_rmtree(tmp);
}

static void test_rev_parse(void **state)
{
    (void)state;
    char oid[41];
    tk_status st;
    assert_int_equal(rev_parse(at("main"), "HEAD", oid, &st), TK_CODE_OK);
    assert_int_equal(strlen(oid), 40);
    tk_status_clear(&st);
    /* A subdirectory names its repository; "-n" is a revision. */
    assert_int_equal(rev_parse(at("main/dir"), "HEAD", oid, &st), TK_CODE_OK);
    tk_status_clear(&st);
    rev_parse(at("main"), "-n", oid, &st);
    expect(&st, TK_CODE_NOT_FOUND, "BAD_REVISION");
    tk_status_clear(&st);
}

static void test_status(void **state)
{
    (void)state;
    const char *repo = scratch("status");
    char p1[PATH_MAX + 64], p2[PATH_MAX + 64];
    snprintf(p1, sizeof p1, "%s/new \303\274.txt", repo);
    write_file(p1, "new\n", 0644);
    snprintf(p2, sizeof p2, "%s/a b.txt", repo);
    write_file(p2, "changed\n", 0644);
    GIT(repo, "mv", "dir/x", "dir/y");
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitStatusReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_status(fx.client, &req, &rep, &o, &st), TK_CODE_OK);
    assert_true(bin_eq(rep->branch->head, "main"));
    assert_true(bin_eq(rep->branch->upstream, "origin/main"));
    assert_true(rep->branch->has_ahead_behind);
    assert_int_equal(rep->branch->ahead, 0);
    assert_int_equal(strlen(rep->branch->oid), 40);
    int seen = 0;
    for (size_t i = 0; i < rep->n_entries; i++) {
        const Tk__V1__GitStatusEntry *e = rep->entries[i];
        if (bin_eq(e->path, "a b.txt")) {
            assert_int_equal(e->kind, TK__V1__GIT_STATUS_ENTRY__KIND__CHANGED);
            assert_string_equal(e->index_status, ".");
            assert_string_equal(e->worktree_status, "M");
            assert_int_equal(e->n_oids, 2);
            seen |= 1;
        } else if (bin_eq(e->path, "dir/y")) {
            assert_int_equal(e->kind, TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED);
            assert_true(bin_eq(e->orig_path, "dir/x"));
            assert_string_equal(e->score, "R100");
            seen |= 2;
        } else if (bin_eq(e->path, "new \303\274.txt")) { /* its bytes */
            assert_int_equal(e->kind,
                             TK__V1__GIT_STATUS_ENTRY__KIND__UNTRACKED);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static void test_diff(void **state)
{
    (void)state;
    Tk__V1__GitDiffRequest req = TK__V1__GIT_DIFF_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.from = "light";
    req.to = "v1";
    Tk__V1__GitDiffReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_CODE_OK);
    assert_int_equal(rep->n_files, 3); /* a b.txt, dir/x, side.txt */
    assert_true(bin_eq(rep->files[0]->path, "a b.txt"));
    assert_int_equal(rep->files[0]->added, 1);
    assert_int_equal(rep->files[0]->deleted, 0);
    assert_non_null(memmem(rep->patch.data, rep->patch.len,
                           "diff --git a/a b.txt b/a b.txt", 30));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);

    /* A binary file: counted as binary, and a path beginning with '-' is a
     * path (no such file: an empty diff, not an option error). */
    req.from = "v1";
    req.to = "HEAD";
    ProtobufCBinaryData paths[] = { bin("bin.dat"), bin("-x") };
    req.paths = paths;
    req.n_paths = 2;
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_CODE_OK);
    assert_int_equal(rep->n_files, 1);
    assert_true(rep->files[0]->binary);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static Tk__V1__GitGrepReply *grep(const char *pattern, uint32_t max,
                                  tk_status *st)
{
    Tk__V1__GitGrepRequest req = TK__V1__GIT_GREP_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.pattern = (char *)pattern;
    req.max_matches = max;
    Tk__V1__GitGrepReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_grep(fx.client, &req, &rep, &o, st), TK_CODE_OK);
    return rep;
}

static void test_grep(void **state)
{
    (void)state;
    tk_status st;
    /* A pattern beginning with '-' is the pattern; binary files skipped. */
    Tk__V1__GitGrepReply *rep = grep("-x", 0, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_true(bin_eq(rep->matches[0]->path, "n.txt"));
    assert_int_equal(rep->matches[0]->line, 1);
    assert_int_equal(rep->matches[0]->column, 8);
    assert_true(bin_eq(rep->matches[0]->text, "needle -x here"));
    assert_false(st.partial);
    assert_string_equal(st.tool, "git grep");
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* Literal: "." is a dot, not any character. No match is a success. */
    rep = grep("needle.", 0, &st);
    assert_int_equal(rep->n_matches, 0);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* The limit: partial, cause LIMIT. */
    rep = grep("e", 1, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_true(st.partial);
    assert_int_equal(st.cause, TK_CAUSE_LIMIT);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* As many matches as the limit, and no more: whole, not partial. */
    rep = grep("-x", 1, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_false(st.partial);
    assert_int_equal(st.cause, TK_CAUSE_NONE);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static void test_writes(void **state)
{
    (void)state;
    const char *repo = scratch("writes");
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/-dash.txt", repo);
    write_file(path, "dash\n", 0644);
    tk_call_opts o = { .timeout_ms = 20000 };
    tk_status st;

    Tk__V1__GitCommitRequest c = TK__V1__GIT_COMMIT_REQUEST__INIT;
    c.repo = (char *)repo;
    c.message = "-m is a message\n\nwith a body";
    ProtobufCBinaryData paths[] = { bin("-dash.txt") };
    c.paths = paths;
    c.n_paths = 1;
    c.author_name = "Other Author";
    c.author_email = "other@example.com";
    Tk__V1__GitCommitReply *cr = NULL;
    assert_int_equal(tk_git_commit(fx.client, &c, &cr, &o, &st), TK_CODE_OK);
    assert_true(st.write_completed);
    char head[41];
    tk_status st2;
    assert_int_equal(rev_parse(repo, "HEAD", head, &st2), TK_CODE_OK);
    assert_string_equal(cr->oid, head);
    protobuf_c_message_free_unpacked(&cr->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    Tk__V1__GitCheckoutRequest co = TK__V1__GIT_CHECKOUT_REQUEST__INIT;
    co.repo = (char *)repo;
    co.rev = "v1";
    co.create_branch = "from-v1";
    Tk__V1__GitCheckoutReply *cor = NULL;
    assert_int_equal(tk_git_checkout(fx.client, &co, &cor, &o, &st),
                     TK_CODE_OK);
    assert_int_equal(rev_parse(repo, "v1^{commit}", head, &st2), TK_CODE_OK);
    assert_string_equal(cor->oid, head);
    protobuf_c_message_free_unpacked(&cor->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    Tk__V1__GitWorktreeAddRequest w = TK__V1__GIT_WORKTREE_ADD_REQUEST__INIT;
    w.repo = (char *)repo;
    w.path = (char *)at("writes-wt");
    w.rev = "light";
    w.new_branch = "wt-branch";
    Tk__V1__GitWorktreeAddReply *wr = NULL;
    assert_int_equal(tk_git_worktree_add(fx.client, &w, &wr, &o, &st),
                     TK_CODE_OK);
    assert_int_equal(rev_parse(repo, "light", head, &st2), TK_CODE_OK);
    assert_string_equal(wr->oid, head);
    assert_true(exists(at("writes-wt/h\303\251llo.txt")));
    protobuf_c_message_free_unpacked(&wr->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    /* Repository-local only; a value beginning with '-' is a value. */
    Tk__V1__GitConfigSetRequest cs = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    cs.repo = (char *)repo;
    cs.key = "user.name";
    cs.value = "-z";
    Tk__V1__GitConfigSetReply *csr = NULL;
    assert_int_equal(tk_git_config_set(fx.client, &cs, &csr, &o, &st),
                     TK_CODE_OK);
    protobuf_c_message_free_unpacked(&csr->base, NULL);
    tk_status_clear(&st);
    const char *args[] = { "config", "--local", "--get", "user.name", NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    assert_string_equal(out, "-z\n");
    free(out);
    assert_false(exists(at("home/.gitconfig")));
}

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
    if (tk_git_log(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_diff(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void call_status(const char *repo, tk_status *st)
{
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitStatusReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_status(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_commit(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_checkout(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_worktree_add(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_worktree_remove(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    if (tk_git_config_set(fx.client, &req, &rep, &o, st) == TK_CODE_OK)
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
    assert_int_equal(st.code, TK_CODE_OK);
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
    if (st.code != TK_CODE_OK)
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
        if (st.code != TK_CODE_OK)
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
    assert_int_equal(st.code, TK_CODE_OK);
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
                                 TK_CODE_OK);
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

/* ---- observing processes (as in test_proc.c) ------------------------------
 */

static void reap_group(pid_t pgid)
{
    assert_true(ts_reap_group(pgid));
}

static char proc_state(pid_t pid)
{
    NEED_PROC("a process's state");
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return '\0';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    if (rp == NULL || rp[1] != ' ')
        return '\0';
    return rp[2];
}

/* Children of this process that are zombies, from /proc. */
static int count_zombies(void)
{
    NEED_PROC("to count this process's zombies");
    pid_t pids[64];
    char states[64];
    size_t n = children(pids, states, 64);
    assert_true(n <= 64);
    int zombies = 0;
    for (size_t i = 0; i < n; i++)
        zombies += states[i] == 'Z';
    return zombies;
}

/* ---- hooks and fifos ------------------------------------------------------
 */

/* "pgid grandchild", as the tree hook writes it. */
static void parse_pids(const char *line, int *pgid, int *gc)
{
    char *end;
    *pgid = (int)strtol(line, &end, 10);
    *gc = (int)strtol(end, &end, 10);
    assert_true(*pgid > 0 && *gc > 0 && *end == '\n');
}

static void make_fifo(const char *path)
{
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
}

/* Opens a fifo for reading and waits (bounded) for a line from its
 * writer: the hook's announcement. Never blocks past timeout_ms. */
static void read_fifo(const char *path, char *line, size_t len, int timeout_ms)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(fd >= 0);
    size_t got = 0;
    long long until = ts_now_ms() + timeout_ms;
    while (got == 0 || line[got - 1] != '\n') {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = (int)(until - ts_now_ms());
        if (left <= 0 || poll(&p, 1, left) != 1)
            fail_msg("no line from %s", path);
        ssize_t n = read(fd, line + got, len - 1 - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 && got == 0)
            fail_msg("%s closed without a line", path);
        if (got == len - 1)
            break;
    }
    line[got] = '\0';
    close(fd);
}

/* The fsmonitor hook of the cancel tests: a grandchild that keeps the
 * pipes it inherits (git gives the hook its own stdout; the grandchild
 * holds tkd's stderr pipe) and sleeps; then "pgid grandchild" to fifo. */
static const char *tree_hook(const char *name, const char *fifo)
{
    NEED_PROC("the hook reads /proc/$$/stat");
    char body[PATH_MAX * 2];
    snprintf(body, sizeof body,
             "#!/bin/sh\n"
             "sleep 1000 &\n"
             "read -r stat < /proc/$$/stat\n"
             "set -- $stat\n"
             "echo \"$5 $!\" > '%s'\n"
             "wait\n",
             fifo);
    const char *path = at(name);
    write_file(path, body, 0755);
    return path;
}

/* ---- calls in a thread ----------------------------------------------------
 */

typedef struct async {
    tk_client *client;
    const char *repo;
    tk_cancel *cancel;
    uint32_t timeout_ms;
    bool commit;     /* a Commit of new.txt, else a Status */
    const char *rev; /* set: a RevParse of rev (or a Log from it) */
    bool log;
    tk_status st;
    char oid[41];
    pthread_t thread;
} async;

/* The RevParse or Log of an async call. */
static void async_rev(async *a, const tk_call_opts *o)
{
    if (a->log) {
        Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
        req.repo = (char *)a->repo;
        req.rev = (char *)a->rev;
        Tk__V1__GitLogReply *rep = NULL;
        if (tk_git_log(a->client, &req, &rep, o, &a->st) == TK_CODE_OK)
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        return;
    }
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = (char *)a->repo;
    req.rev = (char *)a->rev;
    Tk__V1__GitRevParseReply *rep = NULL;
    if (tk_git_rev_parse(a->client, &req, &rep, o, &a->st) == TK_CODE_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void *async_main(void *arg)
{
    async *a = arg;
    tk_call_opts o = { .timeout_ms = a->timeout_ms, .cancel = a->cancel };
    if (a->rev != NULL) {
        async_rev(a, &o);
        return NULL;
    }
    if (a->commit) {
        Tk__V1__GitCommitRequest req = TK__V1__GIT_COMMIT_REQUEST__INIT;
        req.repo = (char *)a->repo;
        req.message = "lifetime write";
        ProtobufCBinaryData p = bin("new.txt");
        req.paths = &p;
        req.n_paths = 1;
        Tk__V1__GitCommitReply *rep = NULL;
        if (tk_git_commit(a->client, &req, &rep, &o, &a->st) == TK_CODE_OK) {
            snprintf(a->oid, sizeof a->oid, "%s", rep->oid);
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        }
        return NULL;
    }
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)a->repo;
    Tk__V1__GitStatusReply *rep = NULL;
    if (tk_git_status(a->client, &req, &rep, &o, &a->st) == TK_CODE_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    return NULL;
}

static void async_run(async *a)
{
    assert_int_equal(tk_cancel_new(&a->cancel), 0);
    assert_int_equal(pthread_create(&a->thread, NULL, async_main, a), 0);
}

static void async_start(async *a, tk_client *c, const char *repo, bool commit,
                        uint32_t timeout_ms)
{
    memset(a, 0, sizeof *a);
    a->client = c;
    a->repo = repo;
    a->commit = commit;
    a->timeout_ms = timeout_ms;
    async_run(a);
}

/* A RevParse of rev (log: a Log from it) in a thread. */
static void async_start_rev(async *a, tk_client *c, const char *repo,
                            const char *rev, bool log, uint32_t timeout_ms)
{
    memset(a, 0, sizeof *a);
    a->client = c;
    a->repo = repo;
    a->rev = rev;
    a->log = log;
    a->timeout_ms = timeout_ms;
    async_run(a);
}

static void async_finish(async *a)
{
    pthread_join(a->thread, NULL);
    tk_cancel_free(a->cancel);
}

/* ---- the lifetimes ---------------------------------------------------------
 */

static void test_read_cancel_kills_the_tree(void **state)
{
    (void)state;
    need(subreaper, "child subreaper (PR_SET_CHILD_SUBREAPER): the hook's "
                    "grandchild would not come back to this test");
    const char *repo = scratch("lt-cancel");
    const char *fifo = at("lt-cancel.fifo");
    make_fifo(fifo);
    owner_fsmonitor(repo, tree_hook("hook-tree", fifo));
    async a;
    async_start(&a, fx.client, repo, false, 60000);
    char line[64];
    read_fifo(fifo, line, sizeof line, 20000);
    int pgid = 0, gc = 0;
    parse_pids(line, &pgid, &gc);
    assert_true(ts_group_exists(pgid) && kill(gc, 0) == 0);

    int outcome = -1;
    assert_int_equal(tk_cancel_fire(a.cancel, &outcome), 0);
    async_finish(&a);
    assert_int_equal(outcome, TK_CANCEL_CANCELLED);
    /* Reported as the caller's cancellation, though git died of SIGKILL. */
    expect(&a.st, TK_CODE_CANCELLED, "");
    assert_int_equal(a.st.cause, TK_CAUSE_CALLER);
    assert_true(a.st.process_killed);
    assert_null(strstr(a.st.message, "signal"));
    /* The grandchild's pipe did not hold us: the drain ended at EOF, not
     * at its bound (the server's own measure; a wall clock around the
     * call would also count the scheduling of a loaded machine). */
    assert_true(a.st.cleanup_ms < PROC_DEFAULT_DRAIN_MS);
    tk_status_clear(&a.st);

    /* The grandchild died of the group kill; nothing of the group is left,
     * and no zombie. */
    int st = ts_reap_orphan(gc, 5000);
    assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    reap_group(pgid);
    assert_int_equal(count_zombies(), 0);
}

/* Killing git alone (as exec.CommandContext would): the hook's grandchild
 * lives on and holds the pipe, so a reader waiting for EOF would hang.
 * This is what the group kill prevents, and proves the test above can
 * fail. */
static void test_read_cancel_leader_only_negative_control(void **state)
{
    (void)state;
    NEED_PROC("the grandchild's state and fds");
    const char *repo = at("lt-cancel");
    const char *fifo = at("lt-cancel.fifo");
    const char *argv[] = {
        git_bin, "-C", repo, "status", "--porcelain=v2", NULL
    };
    ts_proc p;
    const char *env[] = { "GIT_OPTIONAL_LOCKS=0", NULL };
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    char line[64];
    read_fifo(fifo, line, sizeof line, 20000);
    int pgid = 0, gc = 0;
    parse_pids(line, &pgid, &gc);
    assert_int_equal(pgid, p.pid);
    assert_int_equal(kill(p.pid, SIGKILL), 0);
    int st = 0;
    assert_int_equal(waitpid(p.pid, &st, 0), p.pid);
    p.reaped = true;
    p.status = st;
    /* git is gone; the grandchild is alive and holds our stderr pipe.
     * Alive is any state but gone, zombie or dead: it may still be in its
     * exec of sleep ('D' while the binary is read), as it was once in CI. */
    char s = proc_state(gc);
    if (s == '\0' || s == 'Z' || s == 'X')
        fail_msg("the hook's grandchild %d is not alive (state '%c')", gc,
                 s != '\0' ? s : '-');
    struct stat ours, held;
    char fd2[64];
    snprintf(fd2, sizeof fd2, "/proc/%d/fd/2", gc);
    assert_int_equal(fstat(p.err_fd, &ours), 0);
    assert_int_equal(stat(fd2, &held), 0);
    assert_int_equal(ours.st_ino, held.st_ino);
    assert_true(ts_group_exists(pgid));
    kill(-pgid, SIGKILL);
    reap_group(pgid);
    ts_proc_free(&p);
    assert_int_equal(count_zombies(), 0);
}

/* A READ whose caller sets no deadline ends at the method's ceiling (here
 * 1 s instead of 30 s) with DEADLINE_EXCEEDED. */
static void test_read_ceiling(void **state)
{
    (void)state;
    NEED_PROC("the hook reads /proc/$$/stat");
    ts_fx f;
    fx_start(&f, 1000, 0);
    const char *repo = scratch("lt-ceiling");
    const char *pgfile = at("lt-ceiling.pgid");
    char body[PATH_MAX * 2];
    snprintf(body, sizeof body,
             "#!/bin/sh\n"
             "read -r stat < /proc/$$/stat\n"
             "set -- $stat\n"
             "echo $5 > '%s'\n"
             "exec sleep 1000\n",
             pgfile);
    write_file(at("hook-never"), body, 0755);
    owner_fsmonitor(repo, at("hook-never"));
    async a;
    async_start(&a, f.client, repo, false, 0); /* no deadline */
    async_finish(&a);
    expect(&a.st, TK_CODE_DEADLINE_EXCEEDED, "");
    assert_int_equal(a.st.cause, TK_CAUSE_DEADLINE);
    assert_true(a.st.process_killed);
    assert_true(a.st.from_server);
    tk_status_clear(&a.st);
    FILE *pf = fopen(pgfile, "re");
    assert_non_null(pf);
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, pf));
    assert_int_equal(fclose(pf), 0);
    int pgid = (int)strtol(line, NULL, 10);
    assert_true(pgid > 0);
    reap_group(pgid);
    ts_fx_stop(&f);
}

/* A revision that libgit2 would search with a regular expression (":/",
 * "^{/") is resolved by git rev-parse through proc/, so the call's
 * deadline (or cancel) ends it: here git blocks for ever opening a
 * packed-refs that is a fifo nobody writes, and the call ends at its
 * deadline with git's group killed and reaped. In process, libgit2's
 * search would block the worker in that open() with nothing to interrupt
 * it.
 *
 * The deadline must outlast the way from the call to git's spawn (a READ
 * whose deadline passed before it started is not killed, and the failure
 * says "killed 0"): a whole RevParse of such a revision, git's run
 * included, took at most 11 ms on the server in 40 loaded calls (two busy
 * loops on the 2 cores; ASan, TSan 6 ms). REGEX_DEADLINE_MS is 130 times
 * that. */
#define REGEX_DEADLINE_MS 1500

static void test_regex_rev_deadline(void **state)
{
    (void)state;
    const char *repo = scratch("lt-regex");
    char packed[PATH_MAX];
    snprintf(packed, sizeof packed, "%s/.git/packed-refs", repo);
    make_fifo(packed);
    static const struct {
        const char *rev;
        bool log;
    } calls[] = { { ":/tie one", false },
                  { "HEAD^{/second}", false },
                  { ":/tie one", true },
                  { "HEAD~3..HEAD^{/second}", true } };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        async a;
        async_start_rev(&a, fx.client, repo, calls[i].rev, calls[i].log,
                        REGEX_DEADLINE_MS);
        async_finish(&a);
        if (a.st.code != TK_CODE_DEADLINE_EXCEEDED || !a.st.process_killed)
            fail_msg("%s %s: %s/%s (%s), killed %d",
                     calls[i].log ? "Log" : "RevParse", calls[i].rev,
                     tk_code_name(a.st.code), a.st.reason, a.st.message,
                     a.st.process_killed);
        assert_int_equal(a.st.cause, TK_CAUSE_DEADLINE);
        assert_true(a.st.from_server);
        /* git died of the kill and its pipes closed: the drain ended at
         * EOF, not at its bound (tkd's own measure, as in
         * test_read_cancel_kills_the_tree). */
        assert_true(a.st.cleanup_ms < PROC_DEFAULT_DRAIN_MS);
        tk_status_clear(&a.st);
    }
    assert_int_equal(count_zombies(), 0);
    unlink(packed);
}

/* A Commit whose caller cancels while the pre-commit hook runs: the Cancel
 * answers WRITE_CONTINUES, the commit lands, no index.lock is left, and
 * the reply says write_completed. */
static void test_write_cancel_completes(void **state)
{
    (void)state;
    const char *repo = scratch("lt-write");
    const char *in = at("lt-write.in"), *out = at("lt-write.out");
    make_fifo(in);
    make_fifo(out);
    char body[PATH_MAX * 3];
    snprintf(body, sizeof body,
             "#!/bin/sh\necho entered > '%s'\nread -r go < '%s'\n", in, out);
    write_file(at("lt-write/.git/hooks/pre-commit"), body, 0755);
    write_file(at("lt-write/new.txt"), "new\n", 0644);
    char before[41];
    tk_status st;
    assert_int_equal(rev_parse(repo, "HEAD", before, &st), TK_CODE_OK);
    tk_status_clear(&st);

    async a;
    async_start(&a, fx.client, repo, true, 60000);
    char line[64];
    read_fifo(in, line, sizeof line, 20000);
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(a.cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_WRITE_CONTINUES);
    /* Only now may the hook, and the commit, finish. */
    int fd = open(out, O_WRONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "go\n", 3), 3);
    close(fd);
    async_finish(&a);
    expect(&a.st, TK_CODE_OK, "");
    assert_true(a.st.write_completed);
    tk_status_clear(&a.st);
    char after[41];
    assert_int_equal(rev_parse(repo, "HEAD", after, &st), TK_CODE_OK);
    tk_status_clear(&st);
    assert_string_equal(after, a.oid);
    assert_string_not_equal(after, before);
    assert_false(exists(at("lt-write/.git/index.lock")));
}

#ifdef IN_CREATE
/* Whether inotify reported index.lock created in .git since the last
 * call. */
static bool saw_index_lock(int ifd)
{
    bool seen = false;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(ifd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            if (e->len > 0 && strcmp(e->name, "index.lock") == 0)
                seen = true;
            p += sizeof *e + e->len;
        }
    }
    return seen;
}

/* A read never takes index.lock, even on a stat-dirty tree where git
 * status would refresh the index; plain git status does take it. */
static void test_optional_locks(void **state)
{
    (void)state;
    const char *repo = scratch("lt-locks");
    /* Same content, another mtime: stat-dirty, not racily clean. */
    struct timespec old[2] = { { 1577836800, 0 }, { 1577836800, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, at("lt-locks/a b.txt"), old, 0), 0);
    int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(ifd >= 0);
    assert_true(inotify_add_watch(ifd, at("lt-locks/.git"), IN_CREATE) >= 0);

    tk_status st;
    call_status(repo, &st);
    expect(&st, TK_CODE_OK, "");
    tk_status_clear(&st);
    assert_false(saw_index_lock(ifd));

    /* Negative control: the same tree, plain git status. */
    const char *args[] = { "status", "--porcelain=v2", NULL };
    int status;
    free(git_cli(repo, &status, NULL, args));
    assert_int_equal(status, 0);
    assert_true(saw_index_lock(ifd));
    close(ifd);
}
#else
/* Without inotify, index.lock's brief life cannot be seen without
 * sleeping and polling, which could miss it. */
static void test_optional_locks(void **state)
{
    (void)state;
    need(false, "inotify (index.lock lives too briefly to poll for)");
}
#endif

/* A non-ASCII path comes back as its bytes (git would print
 * "h\303\251llo.txt", quoted, without core.quotepath=off). */
static void test_quotepath(void **state)
{
    (void)state;
    Tk__V1__GitDiffRequest req = TK__V1__GIT_DIFF_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.from = "light~1";
    req.to = "light";
    Tk__V1__GitDiffReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_CODE_OK);
    assert_int_equal(rep->n_files, 1);
    assert_true(bin_eq(rep->files[0]->path, "h\303\251llo.txt"));
    const char want[] = "diff --git a/h\303\251llo.txt b/h\303\251llo.txt";
    assert_non_null(
        memmem(rep->patch.data, rep->patch.len, want, sizeof want - 1));
    assert_null(memmem(rep->patch.data, rep->patch.len, "\\303", 4));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);

    /* A name that is not UTF-8 at all, as its bytes too. */
    req.from = "HEAD~1";
    req.to = "HEAD";
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_CODE_OK);
    bool raw = false;
    for (size_t i = 0; i < rep->n_files; i++)
        raw |= bin_eq(rep->files[i]->path, "raw\377name.txt");
    assert_true(raw);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);

    /* Negative control: git's default quotes and escapes it. */
    const char *args[] = { "diff", "light~1", "light", NULL };
    int status;
    char *out = git_cli(at("main"), &status, NULL, args);
    assert_non_null(strstr(out, "\"a/h\\303\\251llo.txt\""));
    free(out);
}

/* ---- libgit2 against the git CLI --------------------------------------------
 */

/* The CLI's answer to a revision: its oid, or "" when git refuses it. */
static void cli_rev_parse(const char *repo, const char *rev, char *oid)
{
    const char *args[] = { "rev-parse",        "--verify", "-q",
                           "--end-of-options", rev,        NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    snprintf(oid, 41, "%s", status == 0 ? out : "");
    free(out);
}

/* The revisions libgit2 would resolve with a regular expression (":/",
 * "^{/", "@{-N}", "@{upstream}", "@{push}", a describe name) are resolved
 * by git rev-parse: they are compared here as well. */
static const struct {
    const char *repo;
    const char *revs[32];
} rev_cases[] = {
    { "main",
      { "HEAD",
        "HEAD~1",
        "HEAD~3",
        "HEAD~3^2",
        "HEAD~3^2~1",
        "HEAD^2",
        "HEAD~100",
        "v1",
        "v1^{}",
        "v1^{commit}",
        "v1^{tree}",
        "v1^{blob}",
        "light",
        "side",
        "main",
        "refs/heads/side",
        "HEAD:a b.txt",
        "HEAD:h\303\251llo.txt",
        "HEAD:dir",
        "HEAD^{tree}:dir/x",
        "HEAD:raw\377name.txt",
        ":/tie one",
        "HEAD@{0}",
        "@",
        "HEAD^0",
        "no-such",
        "-n",
        "side@{upstream}",
        "HEAD:no-such",
        "%SHORT%",
        NULL } },
    /* resolved by git */
    { "main",
      { ":/second", ":/no such text", ":/", "HEAD^{/side: a}", "HEAD^{/}",
        "HEAD^{/no such text}", "side^{/first}~1", "HEAD^{/first}:dir/x",
        "@{-1}", "@{-1}~1", "@{-9}", "nosuch@{u}", "main@{push}", "%DESCRIBE%",
        "v1-1-gffff", "no-such-gizmo", "HEAD@{1.day.ago}", NULL } },
    { "clone",
      { "HEAD", "origin/main", "origin/HEAD", "@{upstream}", "HEAD@{u}~1",
        "main@{u}", "v1", "@{push}", "main@{U}", ":/clone", NULL } },
    { "clone-detached", { "HEAD", "HEAD~1", "main", "@", "@{u}", NULL } },
    { "unborn",
      { "HEAD", "main", "@", "HEAD~1", "@{-1}", ":/x", "@{u}", NULL } },
    { "bare.git", { "HEAD", "v1^{}", "side~1", ":/side", NULL } },
};

static void test_differential_rev_parse(void **state)
{
    (void)state;
    char head[41], shortoid[8], describe[32];
    cli_rev_parse(at("main"), "HEAD", head);
    snprintf(shortoid, sizeof shortoid, "%.7s", head);
    snprintf(describe, sizeof describe, "v1-2-g%.7s", head);
    int compared = 0, found = 0;
    for (size_t i = 0; i < sizeof rev_cases / sizeof rev_cases[0]; i++) {
        const char *repo = at(rev_cases[i].repo);
        for (size_t j = 0; rev_cases[i].revs[j] != NULL; j++) {
            const char *rev = rev_cases[i].revs[j];
            if (strcmp(rev, "%SHORT%") == 0)
                rev = shortoid;
            else if (strcmp(rev, "%DESCRIBE%") == 0)
                rev = describe;
            char cli[41], lg[41] = "";
            cli_rev_parse(repo, rev, cli);
            tk_status st;
            if (rev_parse(repo, rev, lg, &st) != TK_CODE_OK) {
                if (strcmp(st.reason, "BAD_REVISION") != 0 &&
                    strcmp(st.reason, "UNBORN_HEAD") != 0)
                    fail_msg("%s %s: %s", rev_cases[i].repo, rev, st.message);
                lg[0] = '\0';
            }
            tk_status_clear(&st);
            if (strcmp(cli, lg) != 0)
                fail_msg("%s: rev-parse \"%s\": git \"%s\", libgit2 \"%s\"",
                         rev_cases[i].repo, rev, cli, lg);
            compared++;
            found += cli[0] != '\0';
        }
    }
    assert_true(compared >= 70 && found >= 40);
}

/* One commit as git log's format below prints it. */
static void render(char *buf, size_t len, const Tk__V1__GitCommit *c)
{
    size_t n = (size_t)snprintf(buf, len, "%s\x1f", c->oid);
    for (size_t i = 0; i < c->n_parents && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
                              c->parents[i]);
    const Tk__V1__GitSignature *sig[2] = { c->author, c->committer };
    for (int k = 0; k < 2 && n < len; k++) {
        int off = sig[k]->offset_minutes, a = off < 0 ? -off : off;
        n += (size_t)snprintf(
            buf + n, len - n, "\x1f%.*s\x1f%.*s\x1f%lld %c%02d%02d",
            (int)sig[k]->name.len, (const char *)sig[k]->name.data,
            (int)sig[k]->email.len, (const char *)sig[k]->email.data,
            (long long)sig[k]->time, off < 0 ? '-' : '+', a / 60, a % 60);
    }
    if (n < len)
        snprintf(buf + n, len - n, "\x1f%.*s\x1f%.*s", (int)c->subject.len,
                 (const char *)c->subject.data, (int)c->body.len,
                 (const char *)c->body.data);
}

typedef struct log_case {
    const char *repo, *rev;
    uint32_t max, skip;
    const char *paths[3];
} log_case;

static const log_case log_cases[] = {
    { "main", "", 0, 0, { NULL } },
    { "main", "HEAD~3", 0, 0, { NULL } },
    { "main", "side", 0, 0, { NULL } },
    { "main", "v1", 0, 0, { NULL } },
    { "main", "light..side", 0, 0, { NULL } },
    { "main", "side..", 0, 0, { NULL } },
    { "main", "", 3, 2, { NULL } },
    { "main", "", 0, 0, { "a b.txt", NULL } },
    { "main", "", 0, 0, { "dir", NULL } },
    { "main", "", 0, 0, { "dir/", NULL } },
    { "main", "", 0, 0, { "h\303\251llo.txt", NULL } },
    { "main", "", 0, 0, { "side.txt", NULL } },
    { "main", "", 0, 0, { "raw\377name.txt", "dir/x", NULL } },
    { "main", "side", 1, 1, { "dir/x", NULL } },
    { "main", "", 0, 0, { "no-such", NULL } },
    /* revisions resolved by git */
    { "main", ":/second", 0, 0, { NULL } },
    { "main", "HEAD^{/side: a}", 0, 0, { NULL } },
    { "main", "@{-1}", 0, 0, { NULL } },
    { "main", "HEAD^{/first}..@{-1}", 0, 0, { NULL } },
    { "main", ":/no such text", 0, 0, { NULL } },
    { "clone", "@{u}..", 0, 0, { NULL } },
    { "clone", "@{u}", 2, 1, { "a b.txt", NULL } },
    { "clone", "origin/main..HEAD", 0, 0, { NULL } },
    { "clone-detached", "", 0, 0, { NULL } },
    { "bare.git", "", 0, 0, { NULL } },
    { "unborn", "", 0, 0, { NULL } },
};

/* Fields apart by 0x1f: what render() builds from a reply. */
#define LOG_FORMAT                                                             \
    "--format=%H%x1f%P%x1f%an%x1f%ae%x1f%ad%x1f%cn%x1f%ce%x1f%cd%x1f%s%x1f%b"

/* The CLI's log as records; NULL when git refused. */
static char *cli_log(const log_case *c, size_t *len)
{
    char max[32], skip[32];
    snprintf(max, sizeof max, "--max-count=%u", c->max ? c->max : 100000u);
    snprintf(skip, sizeof skip, "--skip=%u", c->skip);
    const char *args[16] = {
        "--literal-pathspecs", "log", "-z", "--date=raw", max, skip, LOG_FORMAT,
    };
    size_t n = 7;
    if (c->rev[0] != '\0')
        args[n++] = c->rev;
    args[n++] = "--";
    for (size_t i = 0; c->paths[i] != NULL; i++)
        args[n++] = c->paths[i];
    args[n] = NULL;
    int status;
    char *out = git_cli(at(c->repo), &status, len, args);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void compare_log(const log_case *c)
{
    size_t len;
    char *cli = cli_log(c, &len);
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = (char *)at(c->repo);
    req.rev = (char *)c->rev;
    req.max_count = c->max;
    req.skip = c->skip;
    ProtobufCBinaryData paths[3];
    for (; c->paths[req.n_paths] != NULL; req.n_paths++)
        paths[req.n_paths] = bin(c->paths[req.n_paths]);
    req.paths = paths;
    Tk__V1__GitLogReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_log(fx.client, &req, &rep, &o, &st);
    if ((cli == NULL) != (code != TK_CODE_OK))
        fail_msg("%s log %s: git %s, libgit2 %s (%s)", c->repo, c->rev,
                 cli ? "answered" : "refused", tk_code_name(code), st.message);
    size_t pos = 0, i = 0;
    for (; cli != NULL && pos < len; i++) {
        const char *rec = cli + pos;
        pos += strlen(rec) + 1;
        if (i >= rep->n_commits)
            fail_msg("%s log %s: libgit2 has %zu commits, git more", c->repo,
                     c->rev, rep->n_commits);
        static char mine[65536];
        render(mine, sizeof mine, rep->commits[i]);
        if (strcmp(rec, mine) != 0)
            fail_msg("%s log %s #%zu:\n git:     %s\n libgit2: %s", c->repo,
                     c->rev, i, rec, mine);
    }
    if (code == TK_CODE_OK && i != rep->n_commits)
        fail_msg("%s log %s: git %zu commits, libgit2 %zu", c->repo, c->rev, i,
                 rep->n_commits);
    if (rep != NULL)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    free(cli);
}

static void test_differential_log(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof log_cases / sizeof log_cases[0]; i++)
        compare_log(&log_cases[i]);
}

/* ---- the repository cache (service/git/cache.c) --------------------------
 *
 * Each worker keeps the repositories it opened; these tests run a server
 * with one worker, so that every call meets the same cache. A kept handle
 * holds its pack files open between calls, which is how a test sees that
 * the handle is kept: pack fds of the repository in /proc/self/fd (the
 * server runs in this process) once the call is over.
 */

/* Open fds of this process on repo's pack files (deleted ones included). */
static int open_packs(const char *repo)
{
    NEED_PROC("this process's fds, in /proc/self/fd");
    char prefix[PATH_MAX + 32];
    int n = snprintf(prefix, sizeof prefix, "%s/.git/objects/pack/", repo);
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], target[PATH_MAX + 64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        count += strncmp(target, prefix, (size_t)n) == 0 &&
                 strstr(target, ".pack") != NULL;
    }
    closedir(d);
    return count;
}

/* A clone of main whose objects are in a pack. */
static const char *packed_clone(const char *name)
{
    const char *path = at(name);
    GIT(dir, "clone", "-q", "--no-local", at("main"), path);
    GIT(path, "config", "user.name", "Tk Tester");
    GIT(path, "config", "user.email", "tester@example.com");
    return path;
}

/* RevParse HEAD (as git says it), and v1 (an object in the clone's pack,
 * so that the call opens it), until the worker keeps repo open: a handle
 * is kept once the repository has not changed for a little while
 * (cache.c's SETTLE_NS, 20 ms). Each call is checked; HEAD in head. */
static void warm(const ts_fx *f, const char *repo, char *head)
{
    char cli[41], tag[41];
    cli_rev_parse(repo, "HEAD", cli);
    long long until = ts_now_ms() + 10000;
    do {
        tk_status st;
        assert_int_equal(rev_parse_on(f->client, repo, "HEAD", head, &st),
                         TK_CODE_OK);
        tk_status_clear(&st);
        assert_string_equal(head, cli);
        assert_int_equal(rev_parse_on(f->client, repo, "v1", tag, &st),
                         TK_CODE_OK);
        tk_status_clear(&st);
    } while (open_packs(repo) == 0 && ts_now_ms() < until);
    assert_true(open_packs(repo) > 0);
}

/* The first commit Log shows from HEAD (its oid in oid), and how many. */
static size_t log_head(const ts_fx *f, const char *repo, char *oid)
{
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitLogReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_log(f->client, &req, &rep, &o, &st), TK_CODE_OK);
    tk_status_clear(&st);
    assert_true(rep->n_commits > 0);
    snprintf(oid, 41, "%s", rep->commits[0]->oid);
    size_t n = rep->n_commits;
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    return n;
}

/* What tkd and git say of rev in repo: the same oid, or both refuse. */
static void expect_rev(const ts_fx *f, const char *repo, const char *rev)
{
    char cli[41], mine[41] = "";
    cli_rev_parse(repo, rev, cli);
    tk_status st;
    if (rev_parse_on(f->client, repo, rev, mine, &st) != TK_CODE_OK) {
        expect(&st, TK_CODE_NOT_FOUND, "BAD_REVISION");
        mine[0] = '\0';
    }
    tk_status_clear(&st);
    if (strcmp(cli, mine) != 0)
        fail_msg("%s: git \"%s\", tkd \"%s\"", rev, cli, mine);
}

/* A repository removed and created again at the same path, while a
 * handle on the old one is kept: the next read sees the new one — its
 * HEAD, its history, and not the old commits (still in the old handle's
 * pack and object cache). */
static void test_cache_replaced_repository(void **state)
{
    (void)state;
    NEED_PROC("the kept pack files, in /proc/self/fd");
    ts_fx f;
    fx_start(&f, 0, 1);
    const char *repo = packed_clone("cache-replaced");
    char old[41], head[41];
    warm(&f, repo, old);
    assert_int_equal(ts_rmtree(repo), 0);
    GIT(dir, "init", "-q", "-b", "main", repo);
    GIT(repo, "config", "user.name", "Tk Tester");
    GIT(repo, "config", "user.email", "tester@example.com");
    GIT(repo, "commit", "-q", "--allow-empty", "-m", "a new repository");
    char gone[64];
    /* git rev-parse --verify takes a full id on trust; a peel looks. */
    snprintf(gone, sizeof gone, "%s^{commit}", old);
    expect_rev(&f, repo, "HEAD");
    expect_rev(&f, repo, gone);
    expect_rev(&f, repo, "v1");
    assert_int_equal(log_head(&f, repo, head), 1);
    assert_string_not_equal(head, old);
    assert_int_equal(open_packs(repo), 0); /* the old handle is gone */
    ts_fx_stop(&f);
}

/* New packs while a handle is kept: one added beside the old (repack -d
 * of new loose objects), then all replaced by one (repack -a -d). */
static void test_cache_new_pack(void **state)
{
    (void)state;
    NEED_PROC("the kept pack files, in /proc/self/fd");
    ts_fx f;
    fx_start(&f, 0, 1);
    const char *repo = packed_clone("cache-pack");
    char old[41], head[41];
    warm(&f, repo, old);
    GIT(repo, "commit", "-q", "--allow-empty", "-m", "packed beside");
    GIT(repo, "repack", "-q", "-d");
    expect_rev(&f, repo, "HEAD");
    expect_rev(&f, repo, "HEAD~1");
    warm(&f, repo, head);
    assert_string_not_equal(head, old);
    GIT(repo, "commit", "-q", "--allow-empty", "-m", "packed alone");
    GIT(repo, "repack", "-q", "-a", "-d");
    expect_rev(&f, repo, "HEAD");
    char cli[41];
    cli_rev_parse(repo, "HEAD", cli);
    size_t n = log_head(&f, repo, head);
    assert_string_equal(head, cli);
    assert_true(n >= 3);
    /* The removed packs are no longer held open. */
    warm(&f, repo, head);
    assert_int_equal(open_packs(repo), 1);
    ts_fx_stop(&f);
}

/* Writes while a handle is kept: a Commit through tkd (git through proc/)
 * is seen by the next RevParse and Log; a branch moved by git outside tkd,
 * which changes no stamp of the cache, is read afresh by the kept handle
 * itself. */
static void test_cache_sees_writes(void **state)
{
    (void)state;
    NEED_PROC("the kept pack files, in /proc/self/fd");
    ts_fx f;
    fx_start(&f, 0, 1);
    const char *repo = packed_clone("cache-writes");
    char old[41], head[41];
    warm(&f, repo, old);
    write_file(at("cache-writes/new.txt"), "new\n", 0644);
    Tk__V1__GitCommitRequest req = TK__V1__GIT_COMMIT_REQUEST__INIT;
    req.repo = (char *)repo;
    req.message = "written through tkd";
    ProtobufCBinaryData p = bin("new.txt");
    req.paths = &p;
    req.n_paths = 1;
    Tk__V1__GitCommitReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_commit(f.client, &req, &rep, &o, &st), TK_CODE_OK);
    tk_status_clear(&st);
    char committed[41];
    snprintf(committed, sizeof committed, "%s", rep->oid);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    assert_int_equal(rev_parse_on(f.client, repo, "HEAD", head, &st),
                     TK_CODE_OK);
    tk_status_clear(&st);
    assert_string_equal(head, committed);
    log_head(&f, repo, head);
    assert_string_equal(head, committed);

    /* A branch HEAD is not on: git takes no lock in .git itself. */
    warm(&f, repo, head);
    const char *targets[] = { old, "v1^{commit}", committed };
    for (size_t i = 0; i < 3; i++) {
        GIT(repo, "update-ref", "refs/heads/moved", targets[i]);
        expect_rev(&f, repo, "moved");
    }
    assert_int_equal(rev_parse_on(f.client, repo, "moved", head, &st),
                     TK_CODE_OK);
    tk_status_clear(&st);
    assert_string_equal(head, committed);
    assert_true(open_packs(repo) > 0); /* the kept handle answered */
    ts_fx_stop(&f);
}

/* The first Git calls of a server, arriving together on as many workers:
 * each opens a repository, and libgit2 is initialised by one of them,
 * once (tkgit__libgit2; under TSan, without a race). */
#define FIRST_CALLS 8

typedef struct first_call {
    ts_sem *go;       /* the start line: every thread waits for a count */
    const char *repo; /* at() is the main thread's */
    tk_client *client;
    int code;
    char oid[41];
} first_call;

static void *first_call_main(void *arg)
{
    first_call *a = arg;
    ts_sem_wait(a->go);
    tk_status st;
    a->code = rev_parse_on(a->client, a->repo, "HEAD", a->oid, &st);
    tk_status_clear(&st);
    return NULL;
}

static void test_libgit2_initialised_once_on_first_use(void **state)
{
    (void)state;
    ts_fx own;
    fx_start(&own, 0, FIRST_CALLS);
    const tkgit *g = own.service[0];
    /* Serving, and no call has opened a repository. */
    assert_int_equal(tkgit__test_libgit2_inits(g), 0);
    ts_sem go;
    ts_sem_init(&go, 0);
    char repo[PATH_MAX + 64];
    snprintf(repo, sizeof repo, "%s", at("main"));
    first_call calls[FIRST_CALLS];
    pthread_t threads[FIRST_CALLS];
    for (size_t i = 0; i < FIRST_CALLS; i++) {
        calls[i] = (first_call){ .go = &go, .repo = repo };
        assert_int_equal(tk_client_open(&calls[i].client, own.url, NULL, 0),
                         TK_OK);
        assert_int_equal(
            pthread_create(&threads[i], NULL, first_call_main, &calls[i]), 0);
    }
    for (size_t i = 0; i < FIRST_CALLS; i++)
        ts_sem_post(&go);
    for (size_t i = 0; i < FIRST_CALLS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(calls[i].code, TK_CODE_OK);
        assert_string_equal(calls[i].oid, calls[0].oid);
        tk_client_close(calls[i].client);
    }
    ts_sem_destroy(&go);
    assert_int_equal(tkgit__test_libgit2_inits(g), 1);
    /* Later calls find it initialised. */
    char oid[41];
    tk_status st;
    assert_int_equal(rev_parse_on(own.client, at("main"), "HEAD", oid, &st),
                     TK_CODE_OK);
    tk_status_clear(&st);
    assert_int_equal(tkgit__test_libgit2_inits(g), 1);
    ts_fx_stop(&own);
}

/* A worker keeps at most 4 repositories (cache.c's SLOTS), the least
 * recently used going first, and frees them when it exits. */
static void test_cache_bounded_and_freed(void **state)
{
    (void)state;
    NEED_PROC("the kept pack files, in /proc/self/fd");
    ts_fx f;
    fx_start(&f, 0, 1);
    const char *repos[6];
    char head[41];
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "cache-lru%d", i);
        repos[i] = strdup(packed_clone(name));
        assert_non_null(repos[i]);
        warm(&f, repos[i], head);
    }
    int kept = 0;
    for (int i = 0; i < 6; i++)
        kept += open_packs(repos[i]) > 0;
    assert_int_equal(kept, 4);
    assert_int_equal(open_packs(repos[0]), 0);
    assert_int_equal(open_packs(repos[1]), 0);
    ts_fx_stop(&f); /* the worker exits */
    for (int i = 0; i < 6; i++) {
        assert_int_equal(open_packs(repos[i]), 0);
        free((void *)repos[i]);
    }
}

/* ---- main ------------------------------------------------------------------
 */

static int group_setup(void **state)
{
    (void)state;
    if (ts_mkdtemp(dir, sizeof dir, "git") != 0)
        return -1;
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/tests/integration/git_fixture.sh",
             ts_program("TK_SOURCE_ROOT"));
    const char *argv[] = { "/bin/sh", script, dir, NULL };
    ts_proc p;
    if (ts_spawn(&p, argv, NULL) != 0)
        return -1;
    int rv = ts_finish(&p, 60000);
    if (rv != 0)
        fprintf(stderr, "git_fixture.sh: %s\n", p.err);
    ts_proc_free(&p);
    if (rv != 0)
        return -1;
    fx_start(&fx, 0, 0);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    ts_fx_stop(&fx);
    return ts_rmtree(dir);
}

int main(void)
{
    /* The fixture's HOME for tkd's children and ours, before proc takes
     * its snapshot of the environment. */
    char home[PATH_MAX];
    if (ts_mkdtemp(home, sizeof home, "githome") != 0)
        return 1;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): main, before any thread starts
    if (setenv("HOME", home, 1) != 0 || setenv("LC_ALL", "C", 1) != 0)
        return 1;
    proc_init();
    if (proc_find_program(git_bin, sizeof git_bin, "git", NULL) != 0)
        return 1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct sigaction ign = { .sa_handler = SIG_IGN };
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        sigaction(SIGPIPE, &ign, NULL) != 0)
        return 1;
#ifdef PR_SET_CHILD_SUBREAPER
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 1;
    subreaper = true;
#endif
    have_proc = access("/proc/self/status", R_OK) == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rev_parse),
        cmocka_unit_test(test_without_git),
        cmocka_unit_test(test_git_gone_after_start),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_grep),
        cmocka_unit_test(test_writes),
        cmocka_unit_test(test_worktree_remove),
        cmocka_unit_test(test_config_allowlist),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_libgit2_judges_ownership),
        cmocka_unit_test(test_write_completed_only_when_begun),
        cmocka_unit_test(test_read_cancel_kills_the_tree),
        cmocka_unit_test(test_read_cancel_leader_only_negative_control),
        cmocka_unit_test(test_read_ceiling),
        cmocka_unit_test(test_regex_rev_deadline),
        cmocka_unit_test(test_write_cancel_completes),
        cmocka_unit_test(test_optional_locks),
        cmocka_unit_test(test_quotepath),
        cmocka_unit_test(test_differential_rev_parse),
        cmocka_unit_test(test_differential_log),
        cmocka_unit_test(test_cache_replaced_repository),
        cmocka_unit_test(test_cache_new_pack),
        cmocka_unit_test(test_cache_sees_writes),
        cmocka_unit_test(test_cache_bounded_and_freed),
        cmocka_unit_test(test_libgit2_initialised_once_on_first_use),
    };
    int rv = cmocka_run_group_tests(tests, group_setup, group_teardown);
    ts_rmtree(home);
    return rv;
}
