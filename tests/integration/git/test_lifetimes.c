/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git with real git and real repositories (git_fx.h): the lifetimes
 * (DESIGN.md): a cancelled READ kills git's whole process tree, a READ ends
 * at its ceiling, a cancelled WRITE completes, GIT_OPTIONAL_LOCKS=0 keeps
 * reads off index.lock, core.quotepath=off gives paths as their bytes —
 * each with its negative control. Hooks announce themselves through fifos
 * and the tests watch .git with inotify: nothing here waits by sleeping.
 * Where there is no inotify (macOS has none), a test that needs it says so
 * and is skipped.
 */
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* inotify(7) is Linux's alone, and so is its header: no check can ask
 * whether it is there without including it. What this file uses of it is
 * then judged by its macro (IN_CREATE). */
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git_fx.h"
#include "proc/proc.h"
#include "tk/v1/git.tk.h"

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
        if (tk_git_log(a->client, &req, &rep, o, &a->st) == TK_OK)
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        return;
    }
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = (char *)a->repo;
    req.rev = (char *)a->rev;
    Tk__V1__GitRevParseReply *rep = NULL;
    if (tk_git_rev_parse(a->client, &req, &rep, o, &a->st) == TK_OK)
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
        if (tk_git_commit(a->client, &req, &rep, &o, &a->st) == TK_OK) {
            snprintf(a->oid, sizeof a->oid, "%s", rep->oid);
            protobuf_c_message_free_unpacked(&rep->base, NULL);
        }
        return NULL;
    }
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)a->repo;
    Tk__V1__GitStatusReply *rep = NULL;
    if (tk_git_status(a->client, &req, &rep, &o, &a->st) == TK_OK)
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
    assert_int_equal(rev_parse(repo, "HEAD", before, &st), TK_OK);
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
    expect(&a.st, TK_OK, "");
    assert_true(a.st.write_completed);
    tk_status_clear(&a.st);
    char after[41];
    assert_int_equal(rev_parse(repo, "HEAD", after, &st), TK_OK);
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
    expect(&st, TK_OK, "");
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
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_OK);
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
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_OK);
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

int main(void)
{
    if (git_fx_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_cancel_kills_the_tree),
        cmocka_unit_test(test_read_cancel_leader_only_negative_control),
        cmocka_unit_test(test_read_ceiling),
        cmocka_unit_test(test_regex_rev_deadline),
        cmocka_unit_test(test_write_cancel_completes),
        cmocka_unit_test(test_optional_locks),
        cmocka_unit_test(test_quotepath),
    };
    int rv = cmocka_run_group_tests(tests, git_fx_setup, git_fx_teardown);
    git_fx_fini();
    return rv;
}
