/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git's repository cache (service/git/cache.c) and libgit2's
 * initialisation, on real repositories (git_fx.h).
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git/git.h"
#include "git_fx.h"
#include "tk/v1/git.tk.h"
#include "tsem.h"

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
                         TK_OK);
        tk_status_clear(&st);
        assert_string_equal(head, cli);
        assert_int_equal(rev_parse_on(f->client, repo, "v1", tag, &st), TK_OK);
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
    assert_int_equal(tk_git_log(f->client, &req, &rep, &o, &st), TK_OK);
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
    if (rev_parse_on(f->client, repo, rev, mine, &st) != TK_OK) {
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
    assert_int_equal(tk_git_commit(f.client, &req, &rep, &o, &st), TK_OK);
    tk_status_clear(&st);
    char committed[41];
    snprintf(committed, sizeof committed, "%s", rep->oid);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    assert_int_equal(rev_parse_on(f.client, repo, "HEAD", head, &st), TK_OK);
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
    assert_int_equal(rev_parse_on(f.client, repo, "moved", head, &st), TK_OK);
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
        assert_int_equal(calls[i].code, TK_OK);
        assert_string_equal(calls[i].oid, calls[0].oid);
        tk_client_close(calls[i].client);
    }
    ts_sem_destroy(&go);
    assert_int_equal(tkgit__test_libgit2_inits(g), 1);
    /* Later calls find it initialised. */
    char oid[41];
    tk_status st;
    assert_int_equal(rev_parse_on(own.client, at("main"), "HEAD", oid, &st),
                     TK_OK);
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

int main(void)
{
    if (git_fx_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_replaced_repository),
        cmocka_unit_test(test_cache_new_pack),
        cmocka_unit_test(test_cache_sees_writes),
        cmocka_unit_test(test_cache_bounded_and_freed),
        cmocka_unit_test(test_libgit2_initialised_once_on_first_use),
    };
    int rv = cmocka_run_group_tests(tests, git_fx_setup, git_fx_teardown);
    git_fx_fini();
    return rv;
}
