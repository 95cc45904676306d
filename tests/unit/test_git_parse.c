/* SPDX-License-Identifier: MIT */
/* The parsers of git's output (service/git/porcelain.c, message.c) on text
 * given here, without a repository (tkgit__test_*, the entry points of
 * tests/fuzz's git harnesses), and the inputs the fuzzing turned up (each
 * test names its corpus file). tests/integration/git/ runs them on real
 * git. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "git/git.h"
#include "rpc/rpc.h"

static int setup(void **state)
{
    *state = rpc__test_call_new();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    rpc__test_call_free(*state);
    return 0;
}

#define LIT(s) (s), sizeof(s) - 1

static void test_status(void **state)
{
    static const char out[] =
        "# branch.oid 0123456789abcdef0123456789abcdef01234567\0"
        "# branch.head main\0"
        "# branch.upstream origin/main\0"
        "# branch.ab +2 -3\0"
        "1 .M N... 100644 100644 100644 aaaa bbbb a b.txt\0"
        "2 R. N... 100644 100644 100644 aaaa aaaa R100 new\0old\0"
        "? untracked\nname\0";
    Tk__V1__GitStatusReply r = TK__V1__GIT_STATUS_REPLY__INIT;
    assert_int_equal(tkgit__test_parse_status(*state, LIT(out), &r), 0);
    assert_string_equal(r.branch->oid,
                        "0123456789abcdef0123456789abcdef01234567");
    assert_int_equal(r.branch->ahead, 2);
    assert_int_equal(r.branch->behind, 3);
    assert_true(r.branch->has_ahead_behind);
    assert_int_equal(r.n_entries, 3);
    assert_int_equal(r.entries[0]->kind,
                     TK__V1__GIT_STATUS_ENTRY__KIND__CHANGED);
    assert_string_equal(r.entries[0]->worktree_status, "M");
    assert_int_equal(r.entries[0]->path.len, 7);
    assert_memory_equal(r.entries[0]->path.data, "a b.txt", 7);
    assert_memory_equal(r.entries[1]->orig_path.data, "old", 3);
    assert_string_equal(r.entries[1]->score, "R100");
    assert_int_equal(r.entries[2]->path.len, 14);
    Tk__V1__GitStatusReply bad = TK__V1__GIT_STATUS_REPLY__INIT;
    assert_int_equal(tkgit__test_parse_status(*state, LIT("1 .M x\0"), &bad),
                     -1);
}

/* tests/fuzz/corpus/git_status/regress-ahead-behind-int-min: the counts
 * were converted to int32 and negated as they came, so "-2147483648"
 * overflowed the negation (undefined; UBSan stops here in the asan
 * build). git's counts are never negative and fit: anything else is held
 * to INT32_MAX, the sign dropped. */
static void test_ahead_behind_bounds(void **state)
{
    static const struct {
        const char *text;
        int32_t ahead, behind;
    } cases[] = {
        { "# branch.ab +1 -2147483648", 1, INT32_MAX },
        { "# branch.ab +2147483648 -0", INT32_MAX, 0 },
        { "# branch.ab +99999999999999999999 -9223372036854775808", INT32_MAX,
          INT32_MAX },
        { "# branch.ab -5 +7", 5, 7 },
        { "# branch.ab +x -y", 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Tk__V1__GitStatusReply r = TK__V1__GIT_STATUS_REPLY__INIT;
        assert_int_equal(tkgit__test_parse_status(*state, cases[i].text,
                                                  strlen(cases[i].text), &r),
                         0);
        assert_int_equal(r.branch->ahead, cases[i].ahead);
        assert_int_equal(r.branch->behind, cases[i].behind);
    }
}

static void test_numstat(void **state)
{
    static const char out[] = "1\t2\ta.txt\0"
                              "-\t-\tbin.dat\0"
                              "3\t0\t\0old name\0new name\0"
                              "\0diff --git a/a.txt b/a.txt\n";
    Tk__V1__GitDiffReply r = TK__V1__GIT_DIFF_REPLY__INIT;
    long patch = tkgit__test_parse_numstat(*state, LIT(out), &r);
    assert_true(patch > 0);
    assert_string_equal(out + patch, "diff --git a/a.txt b/a.txt\n");
    assert_int_equal(r.n_files, 3);
    assert_int_equal(r.files[0]->added, 1);
    assert_int_equal(r.files[0]->deleted, 2);
    assert_true(r.files[1]->binary);
    assert_memory_equal(r.files[2]->old_path.data, "old name", 8);
    assert_memory_equal(r.files[2]->path.data, "new name", 8);
}

static void test_message(void **state)
{
    Tk__V1__GitCommit c = TK__V1__GIT_COMMIT__INIT;
    tkgit__test_message(*state, "\n \nA subject  \nover two\n\n\nthe body\n",
                        &c);
    assert_int_equal(c.subject.len, 18);
    assert_memory_equal(c.subject.data, "A subject over two", 18);
    assert_int_equal(c.body.len, 9);
    assert_memory_equal(c.body.data, "the body\n", 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ahead_behind_bounds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_numstat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_message, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
