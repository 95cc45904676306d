/* SPDX-License-Identifier: MIT */
/*
 * Git/Log's walk has a bound (issue 31, part 4; DESIGN.md, "Bounds"): the
 * commits one Log may visit to find its reply (shown, skipped, left out by
 * paths) and the ancestors of A it hides for "A..B", together. At
 * 31f2572 nothing bounded them but the read's 30 s: a Log whose paths
 * match nothing walked the whole history into its set of commits seen
 * (300,000 commits: 189 MB of tkd), as "A..B" did A's whole ancestry.
 *
 * The bound is two million commits; this test sets it to WALK (the seam
 * tkgit__test_set_log_walk_max) on a history of COMMITS, a server of its
 * own, and checks:
 *   - a main walk that reaches it answers the newest commits it found,
 *     partial, cause LIMIT: with paths that match nothing, none; with
 *     "A..B", the first of the whole answer, in order;
 *   - an "A..B" whose A alone has more ancestors is RESOURCE_EXHAUSTED
 *     LOG_WALK_LIMIT (no list would be right);
 *   - a walk within the bound is whole, not partial.
 * The negative control: the same calls on a server with the default bound
 * answer whole (what every server did at 31f2572), so the first two are
 * the bound's doing.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git/git.h"
#include "proc/proc.h"
#include "tk/v1/git.tk.h"
#include "tree.h"

/* A linear history of COMMITS; a walk of WALK commits at most. */
#define COMMITS 30
#define WALK 20

static char dir[PATH_MAX]; /* the root: the repository is dir/r */
static char repo[PATH_MAX + 8];

static void *git_add(ts_fx *f, void *arg)
{
    const uint32_t *walk = arg;
    tkgit *git = NULL;
    char err[512] = "";
    assert_int_equal(tkgit_new(&git, f->roots, NULL, err, sizeof err), 0);
    tkgit__test_set_log_walk_max(git, *walk);
    assert_int_equal(tkgit_register(git, f->srv, err, sizeof err), 0);
    return git;
}

static void git_free(void *git)
{
    tkgit_free(git);
}

/* A server of its own whose Logs walk at most walk commits (0: the
 * default, two million). */
static void start(ts_fx *f, uint32_t walk)
{
    const ts_fx_service git = { .add = git_add,
                                .free = git_free,
                                .arg = &walk };
    const char *rootdir = dir;
    ts_fx_start(f, &(ts_fx_opts){ .tag = "walk",
                                  .roots = &rootdir,
                                  .n_roots = 1,
                                  .services = &git,
                                  .n_services = 1 });
}

typedef struct log_result {
    tk_status st;
    Tk__V1__GitLogReply *rep; /* NULL unless OK */
} log_result;

static void call_log(ts_fx *f, const char *rev, const char *path,
                     log_result *out)
{
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = repo;
    req.rev = (char *)rev;
    ProtobufCBinaryData p = { path != NULL ? strlen(path) : 0,
                              (uint8_t *)path };
    req.paths = &p;
    req.n_paths = path != NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    out->rep = NULL;
    tk_git_log(f->client, &req, &out->rep, &o, &out->st);
}

static void log_free(log_result *r)
{
    if (r->rep != NULL)
        protobuf_c_message_free_unpacked(&r->rep->base, NULL);
    tk_status_clear(&r->st);
}

static void expect_ok(const log_result *r, size_t n, bool partial)
{
    assert_int_equal(r->st.code, TK_OK);
    assert_non_null(r->rep);
    assert_int_equal(r->rep->n_commits, n);
    assert_int_equal(r->st.partial, partial);
    assert_int_equal(r->st.cause, partial ? TK_CAUSE_LIMIT : TK_CAUSE_NONE);
}

/* A main walk that reaches the bound: what it found, partial. */
static void test_main_walk_is_cut(void **state)
{
    (void)state;
    ts_fx bounded, whole;
    start(&bounded, WALK);
    start(&whole, 0);
    log_result a, b;

    /* Paths that match nothing: every commit is walked, none shown. */
    call_log(&bounded, "", "no-such-path", &a);
    expect_ok(&a, 0, true);
    call_log(&whole, "", "no-such-path", &b);
    expect_ok(&b, 0, false);
    log_free(&a);
    log_free(&b);

    /* "HEAD~25..HEAD": 5 commits hidden, 25 to show; the walk may see 15
     * of them, the newest, as the whole answer has them. */
    call_log(&bounded, "HEAD~25..HEAD", NULL, &a);
    expect_ok(&a, WALK - 5, true);
    call_log(&whole, "HEAD~25..HEAD", NULL, &b);
    expect_ok(&b, 25, false);
    for (size_t i = 0; i < a.rep->n_commits; i++)
        assert_string_equal(a.rep->commits[i]->oid, b.rep->commits[i]->oid);
    log_free(&a);
    log_free(&b);

    /* Within the bound: whole. */
    call_log(&bounded, "HEAD~25..HEAD~15", NULL, &a);
    expect_ok(&a, 10, false);
    log_free(&a);
    ts_fx_stop(&bounded);
    ts_fx_stop(&whole);
}

/* An "A..B" whose A has more ancestors than the walk may visit. */
static void test_hidden_walk_is_refused(void **state)
{
    (void)state;
    ts_fx bounded, whole;
    start(&bounded, WALK);
    start(&whole, 0);
    log_result a, b;
    call_log(&bounded, "HEAD~3..HEAD", NULL, &a);
    assert_int_equal(a.st.code, TK_CODE_RESOURCE_EXHAUSTED);
    assert_string_equal(a.st.reason, "LOG_WALK_LIMIT");
    assert_non_null(strstr(a.st.message, "more than 20 ancestors"));
    call_log(&whole, "HEAD~3..HEAD", NULL, &b);
    expect_ok(&b, 3, false);
    log_free(&a);
    log_free(&b);
    ts_fx_stop(&bounded);
    ts_fx_stop(&whole);
}

static int setup(void **state)
{
    (void)state;
    if (ts_mkdtemp(dir, sizeof dir, "logwalk") != 0)
        return -1;
    snprintf(repo, sizeof repo, "%s/r", dir);
    tree_mkdir(dir, "r");
    const char *init[] = { "init", "-q", "-b", "main", NULL };
    tree_git(repo, init);
    for (int i = 0; i < COMMITS; i++) {
        char msg[32];
        snprintf(msg, sizeof msg, "c%d", i);
        const char *commit[] = { "commit", "-q", "--allow-empty",
                                 "-m",     msg,  NULL };
        tree_git(repo, commit);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return ts_rmtree(dir);
}

int main(void)
{
    char home[PATH_MAX];
    if (ts_mkdtemp(home, sizeof home, "walkhome") != 0)
        return 1;
    /* A HOME of its own for git here and in the server, before proc takes
     * its snapshot of the environment. */
    // NOLINTNEXTLINE(concurrency-mt-unsafe): main, before any thread starts
    if (setenv("HOME", home, 1) != 0 || setenv("LC_ALL", "C", 1) != 0)
        return 1;
    proc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_walk_is_cut),
        cmocka_unit_test(test_hidden_walk_is_refused),
    };
    int rv = cmocka_run_group_tests(tests, setup, teardown);
    ts_rmtree(home);
    return rv;
}
