/* SPDX-License-Identifier: MIT */
/* roots: a path is judged by where it resolves, not by how it is spelled. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "roots/roots.h"
#include "support.h"

typedef struct tree {
    char base[256];  /* <tmp>/ */
    char root[300];  /* <tmp>/root: the only --root */
    char other[300]; /* <tmp>/rootother: shares the root's prefix */
} tree;

static void make_tree(tree *t)
{
    char p[400];
    assert_int_equal(ts_mkdtemp(t->base, sizeof t->base, "roots"), 0);
    snprintf(t->root, sizeof t->root, "%s/root", t->base);
    snprintf(t->other, sizeof t->other, "%s/rootother", t->base);
    assert_int_equal(mkdir(t->root, 0755), 0);
    assert_int_equal(mkdir(t->other, 0755), 0);
    snprintf(p, sizeof p, "%s/repo", t->root);
    assert_int_equal(mkdir(p, 0755), 0);
    /* a symlink inside pointing inside, and one pointing out */
    snprintf(p, sizeof p, "%s/in", t->root);
    assert_int_equal(symlink("repo", p), 0);
    snprintf(p, sizeof p, "%s/out", t->root);
    assert_int_equal(symlink(t->other, p), 0);
}

/* Resolves a followed by suffix. */
static int resolve(const roots *r, const char *a, const char *suffix, char *out)
{
    char path[600];
    snprintf(path, sizeof path, "%s%s", a, suffix);
    char err[512];
    return roots_resolve(r, path, out, PATH_MAX, err, sizeof err);
}

static void test_resolve(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    const char *dirs[] = { t.root };
    roots *r;
    char err[256];
    assert_int_equal(roots_new(&r, dirs, 1, err, sizeof err), 0);
    char out[PATH_MAX], want[PATH_MAX];
    snprintf(want, sizeof want, "%s/repo", roots_get(r, 0));

    assert_int_equal(resolve(r, t.root, "/repo", out), 0);
    assert_string_equal(out, want);
    assert_int_equal(resolve(r, t.root, "", out), 0); /* the root itself */
    assert_int_equal(resolve(r, t.root, "/in", out), 0);
    assert_string_equal(out, want); /* a symlink that stays inside */
    assert_int_equal(resolve(r, t.root, "/repo/../repo", out), 0);

    assert_int_equal(resolve(r, t.root, "/out", out), -EACCES);
    assert_int_equal(resolve(r, t.root, "/repo/../../rootother", out), -EACCES);
    assert_int_equal(resolve(r, t.other, "", out), -EACCES); /* prefix */
    assert_int_equal(resolve(r, t.root, "/nope", out), -ENOENT);
    assert_int_equal(resolve(r, t.root, "/repo/nope/deeper", out), -ENOENT);
    /* Missing, but outside: through a symlink out, or beside the root. */
    assert_int_equal(resolve(r, t.root, "/out/nope", out), -EACCES);
    assert_int_equal(resolve(r, t.other, "/nope/deeper", out), -EACCES);
    assert_int_equal(resolve(r, "/nonexistent/tk", "", out), -EACCES);
    assert_int_equal(resolve(r, "/proc/self/exe", "/x", out), -EACCES);
    assert_int_equal(resolve(r, "relative/path", "", out), -EINVAL);
    assert_int_equal(resolve(r, "", "", out), -EINVAL);
    roots_free(r);
    ts_rmtree(t.base);
}

static void test_messages(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    const char *dirs[] = { t.root };
    roots *r;
    char err[512], out[PATH_MAX], path[400];
    assert_int_equal(roots_new(&r, dirs, 1, err, sizeof err), 0);
    /* Outside, one answer: the path as given, not where it resolves (the
     * symlink's target, /proc/self/exe's program) nor whether it exists. */
    static const char *const probes[] = { "/out", "/out/nope", "/../etc",
                                          "/../nonexistent" };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        char want[512];
        snprintf(path, sizeof path, "%s%s", t.root, probes[i]);
        snprintf(want, sizeof want, "%s is not inside tkd's --root directories",
                 path);
        assert_int_equal(
            roots_resolve(r, path, out, sizeof out, err, sizeof err), -EACCES);
        assert_string_equal(err, want);
    }
    assert_int_equal(
        roots_resolve(r, "/proc/self/exe", out, sizeof out, err, sizeof err),
        -EACCES);
    assert_string_equal(
        err, "/proc/self/exe is not inside tkd's --root directories");
    /* Inside, a missing path is told as one. */
    snprintf(path, sizeof path, "%s/repo/nope", t.root);
    assert_int_equal(roots_resolve(r, path, out, sizeof out, err, sizeof err),
                     -ENOENT);
    assert_non_null(strstr(err, "No such file"));
    roots_free(r);

    assert_int_equal(roots_new(&r, NULL, 0, err, sizeof err), 0);
    assert_int_equal(roots_resolve(r, t.root, out, sizeof out, err, sizeof err),
                     -EACCES);
    assert_non_null(strstr(err, "--root DIR"));
    roots_free(r);

    const char *bad[] = { "/nonexistent/tk/root" };
    assert_int_equal(roots_new(&r, bad, 1, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/tk/root"));
    ts_rmtree(t.base);
}

/* Nested roots: the root of a path is the longest that holds it. */
static void test_root_of(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    char repo[400];
    snprintf(repo, sizeof repo, "%s/repo", t.root);
    const char *dirs[] = { t.base, repo, t.root };
    roots *r;
    char err[256], out[PATH_MAX], want[PATH_MAX];
    assert_int_equal(roots_new(&r, dirs, 3, err, sizeof err), 0);
    assert_int_equal(resolve(r, t.root, "/repo", out), 0);
    assert_string_equal(roots_root_of(r, out), roots_get(r, 1));
    assert_int_equal(resolve(r, t.root, "", out), 0);
    assert_string_equal(roots_root_of(r, out), roots_get(r, 2));
    assert_int_equal(resolve(r, t.other, "", out), 0);
    assert_string_equal(roots_root_of(r, out), roots_get(r, 0));
    snprintf(want, sizeof want, "%s", "/nowhere");
    assert_null(roots_root_of(r, want));
    roots_free(r);
    ts_rmtree(t.base);
}

static void test_slash_root_holds_all(void **state)
{
    (void)state;
    const char *dirs[] = { "/" };
    roots *r;
    char out[PATH_MAX], err[256];
    assert_int_equal(roots_new(&r, dirs, 1, err, sizeof err), 0);
    assert_int_equal(roots_resolve(r, "/tmp", out, sizeof out, err, sizeof err),
                     0);
    roots_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_root_of),
        cmocka_unit_test(test_slash_root_holds_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
