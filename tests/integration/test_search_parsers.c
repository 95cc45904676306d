/* SPDX-License-Identifier: MIT */
/* The three parsers of service/search on the output of the real tools (rg,
 * git grep, grep), run with exactly tkd's command lines (search_command_
 * build) through proc's record mode on fixture trees: paths with colons,
 * spaces, newlines and non-UTF-8 bytes, non-UTF-8 content, a line longer
 * than 64 KiB and one longer than 1 MiB, a binary file, a dotfile under
 * .github/. Parity: without ignore files the three tools give the same
 * (path, line, column, submatches) set; with ignore files, the documented
 * differences. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proc/proc.h"
#include "search/search.h"
#include "support.h"
#include "tk/v1/search.pb-c.h"
#include "tree.h"

#define LONG_LINE ((size_t)100 * 1024)  /* > 64 KiB: a pipe's worth */
#define HUGE_LINE ((size_t)1536 * 1024) /* > SEARCH_LINE_MAX */
#define BAD_NAME                                                               \
    "bad\xff"                                                                  \
    "name.txt" /* not UTF-8 */
#define NL_NAME "new\nline.txt"

static const search_tool tools[] = { SEARCH_TOOL_RG, SEARCH_TOOL_GIT_GREP,
                                     SEARCH_TOOL_GREP };

/* ---- running a tool into a parser --------------------------------------- */

static proc_verdict on_record(void *arg, const char *data, size_t len,
                              bool truncated)
{
    return search_parser_record(arg, data, len, truncated) ? PROC_CONTINUE
                                                           : PROC_STOP;
}

typedef struct run_opts {
    const char *query;
    bool ignore_case;
    bool exclude_hidden;
    uint32_t limit;
} run_opts;

/* tool run in dir with tkd's command line for q, its records to fn. */
static void run_into(search_tool tool, const char *dir, const search_query *q,
                     proc_stdout_fn fn, void *arg, proc_result *r)
{
    search_command cmd;
    assert_int_equal(search_command_build(&cmd, tool, q), 0);
    char path[PATH_MAX];
    if (!tree_which(cmd.argv[0], path, sizeof path))
        fail_msg("%s is not in PATH", cmd.argv[0]);
    proc_opts o;
    proc_opts_init(&o);
    o.path = path;
    o.argv = cmd.argv;
    o.env = cmd.env;
    o.cwd = dir;
    o.on_stdout = fn;
    o.on_stdout_arg = arg;
    o.record_max = cmd.record_max;
    o.record_delim = cmd.record_delim;
    o.record_resume = cmd.record_resume;
    assert_int_equal(proc_run(r, &o), 0);
}

/* What tkd would do with tool in dir, without tkd. */
static search_parser *run(search_tool tool, const char *dir, const run_opts *ro,
                          proc_result *r)
{
    search_query q = { .text = ro->query,
                       .len = strlen(ro->query),
                       .ignore_case = ro->ignore_case,
                       .include_hidden = !ro->exclude_hidden };
    search_limits lim = { .max_matches = ro->limit != 0 ? ro->limit : 1000 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, tool, &q, &lim), 0);
    run_into(tool, dir, &q, on_record, p, r);
    return p;
}

/* A run that ends by itself with 0 (matches) or 1 (none). */
static search_parser *run_ok(search_tool tool, const char *dir,
                             const run_opts *ro)
{
    proc_result r;
    search_parser *p = run(tool, dir, ro, &r);
    if (r.end != PROC_END_EXITED || r.status.kind != PROC_STATUS_EXITED ||
        r.status.code > 1)
        fail_msg("%s: %s, exit %d: %s", search_tool_name(tool),
                 proc_end_name(r.end), r.status.code, r.err);
    proc_result_fini(&r);
    return p;
}

static const search_match *find(const search_parser *p, const char *path,
                                size_t path_len, uint64_t line)
{
    for (size_t i = 0; i < search_parser_count(p); i++) {
        const search_match *m = search_parser_match(p, i);
        if (m->line == line && m->path_len == path_len &&
            memcmp(m->path, path, path_len) == 0)
            return m;
    }
    return NULL;
}

/* ---- the fixture tree --------------------------------------------------- */

typedef struct expect {
    const char *path;
    size_t path_len; /* 0: strlen */
    uint64_t line;
    uint32_t column;
    const char *text; /* NULL: not compared (the long lines) */
    size_t n_spans;
    bool hidden;
} expect;

static const expect expected[] = {
    { "a:b.txt", 0, 1, 3, "a needle b needle", 2, false },
    { "dir with space/f i.txt", 0, 1, 3, "x needle", 1, false },
    { NL_NAME, 0, 1, 1, "needle in a file whose name has a newline", 1, false },
    { BAD_NAME, 0, 1, 1, "needle \xff\xfe not UTF-8", 1, false },
    { "long.txt", 0, 1, LONG_LINE + 1, NULL, 1, false },
    { "long.txt", 0, 2, 1, "needle after the long line", 1, false },
    { "huge.txt", 0, 1, 1, NULL, 1, false },
    { ".github/workflows/ci.yml", 0, 1, 12, "on: push # needle", 1, true },
    { "sub/deep/x.c", 0, 1, 5, "int needle = 1;", 1, false },
    { "sub/deep/x.c", 0, 3, 1, "needle();", 1, false },
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

static void make_tree(const char *dir)
{
    tree_puts(dir, "a:b.txt", "a needle b needle\nno match here\n");
    tree_puts(dir, "dir with space/f i.txt", "x needle\n");
    tree_puts(dir, NL_NAME, "needle in a file whose name has a newline\n");
    tree_puts(dir, BAD_NAME, "needle \xff\xfe not UTF-8\n");
    static const char tail[] = "needle\nneedle after the long line\n";
    char *big = malloc(HUGE_LINE + sizeof tail);
    assert_non_null(big);
    memset(big, 'x', LONG_LINE);
    memcpy(big + LONG_LINE, tail, sizeof tail);
    tree_write(dir, "long.txt", big, LONG_LINE + sizeof tail - 1);
    /* needle, y..., needle: the second one beyond the first MiB */
    memset(big, 'y', HUGE_LINE);
    static const char word[6] = { 'n', 'e', 'e', 'd', 'l', 'e' };
    memcpy(big, word, sizeof word);
    memcpy(big + HUGE_LINE - sizeof word, word, sizeof word);
    big[HUGE_LINE] = '\n';
    tree_write(dir, "huge.txt", big, HUGE_LINE + 1);
    free(big);
    tree_write(dir, "bin.dat", "\0\0binary needle\n", 16);
    tree_puts(dir, ".github/workflows/ci.yml", "on: push # needle\n");
    tree_puts(dir, "sub/deep/x.c", "int needle = 1;\nint x;\nneedle();\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(dir, init); /* for git grep: every file untracked */
}

static int group_setup(void **state)
{
    static char dir[256];
    if (ts_mkdtemp(dir, sizeof dir, "parsers") != 0)
        return -1;
    make_tree(dir);
    *state = dir;
    return 0;
}

static int group_teardown(void **state)
{
    ts_rmtree(*state);
    return 0;
}

static size_t path_len(const expect *e)
{
    return e->path_len != 0 ? e->path_len : strlen(e->path);
}

static void check_set(search_tool tool, const search_parser *p,
                      bool with_hidden)
{
    size_t want = 0;
    for (size_t i = 0; i < N_EXPECTED; i++) {
        const expect *e = &expected[i];
        if (e->hidden && !with_hidden)
            continue;
        want++;
        const search_match *m = find(p, e->path, path_len(e), e->line);
        if (m == NULL) {
            fail_msg("%s: no match for %s:%llu", search_tool_name(tool),
                     e->path, (unsigned long long)e->line);
            continue; /* not reached: fail_msg ends the test */
        }
        if (m->column != e->column || m->n_spans != e->n_spans)
            fail_msg("%s: %s:%llu column %u (want %u), %zu spans (want %zu)",
                     search_tool_name(tool), e->path,
                     (unsigned long long)e->line, m->column, e->column,
                     m->n_spans, e->n_spans);
        if (e->text != NULL) {
            assert_int_equal(m->text_len, strlen(e->text));
            assert_memory_equal(m->text, e->text, m->text_len);
            assert_false(m->truncated);
        }
    }
    if (search_parser_count(p) != want)
        fail_msg("%s: %zu matches, want %zu", search_tool_name(tool),
                 search_parser_count(p), want);
    assert_false(search_parser_partial(p));
}

/* ---- tests -------------------------------------------------------------- */

/* Each parser on its tool's real output: every odd path and line comes
 * back byte for byte, the binary file does not, the dotfile does. */
static void test_each_parser(void **state)
{
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle" };
        search_parser *p = run_ok(tools[t], *state, &ro);
        check_set(tools[t], p, true);
        const search_match *ab = find(p, "a:b.txt", 7, 1);
        assert_int_equal(ab->spans[0].start, 2);
        assert_int_equal(ab->spans[0].end, 8);
        assert_int_equal(ab->spans[1].start, 11);
        assert_int_equal(ab->spans[1].end, 17);
        const search_match *lg = find(p, "long.txt", 8, 1);
        assert_int_equal(lg->text_len, LONG_LINE + 6);
        assert_false(lg->truncated);
        search_stats st;
        search_parser_stats(p, &st);
        assert_int_equal(st.matched_lines, N_EXPECTED);
        assert_int_equal(st.files_with_matches, N_EXPECTED - 2);
        assert_int_equal(st.truncated_lines, 1);
        assert_int_equal(st.skipped_records, 0);
        search_parser_free(p);
    }
}

/* A line longer than 1 MiB: its first MiB, flagged; the occurrence beyond
 * it is not a submatch of the kept text. */
static void test_line_over_a_mebibyte(void **state)
{
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle" };
        search_parser *p = run_ok(tools[t], *state, &ro);
        const search_match *m = find(p, "huge.txt", 8, 1);
        assert_non_null(m);
        assert_true(m->truncated);
        assert_int_equal(m->text_len, SEARCH_LINE_MAX);
        assert_memory_equal(m->text, "needleyyy", 9);
        assert_int_equal(m->n_spans, 1);
        assert_int_equal(m->column, 1);
        search_parser_free(p);
    }
}

/* Without hidden files: .github/ is gone from every tool's answer, the
 * rest is the same. */
static void test_hidden_excluded(void **state)
{
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle", .exclude_hidden = true };
        search_parser *p = run_ok(tools[t], *state, &ro);
        check_set(tools[t], p, false);
        search_parser_free(p);
    }
}

/* ASCII case folding: the same set from all three. */
static void test_ignore_case(void **state)
{
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "NeEdLe", .ignore_case = true };
        search_parser *p = run_ok(tools[t], *state, &ro);
        check_set(tools[t], p, true);
        search_parser_free(p);
        run_opts exact = { .query = "NeEdLe" };
        p = run_ok(tools[t], *state, &exact);
        assert_int_equal(search_parser_count(p), 0);
        search_parser_free(p);
    }
}

static int by_key(const void *a, const void *b)
{
    const search_match *x = *(const search_match *const *)a;
    const search_match *y = *(const search_match *const *)b;
    size_t n = x->path_len < y->path_len ? x->path_len : y->path_len;
    int c = memcmp(x->path, y->path, n);
    if (c != 0)
        return c;
    if (x->path_len != y->path_len)
        return x->path_len < y->path_len ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static void sorted(const search_parser *p, const search_match **out)
{
    for (size_t i = 0; i < search_parser_count(p); i++)
        out[i] = search_parser_match(p, i);
    qsort(out, search_parser_count(p), sizeof(const search_match *), by_key);
}

/* Parity without ignore files: one (path, line, column, submatches, text)
 * set, whichever tool ran. */
static void test_parity(void **state)
{
    run_opts ro = { .query = "needle" };
    search_parser *p[3];
    const search_match *m[3][N_EXPECTED];
    for (size_t t = 0; t < 3; t++) {
        p[t] = run_ok(tools[t], *state, &ro);
        assert_int_equal(search_parser_count(p[t]), N_EXPECTED);
        sorted(p[t], m[t]);
    }
    for (size_t i = 0; i < N_EXPECTED; i++) {
        for (size_t t = 1; t < 3; t++) {
            const search_match *a = m[0][i], *b = m[t][i];
            assert_int_equal(by_key(&a, &b), 0);
            assert_int_equal(a->column, b->column);
            assert_int_equal(a->n_spans, b->n_spans);
            assert_memory_equal(a->spans, b->spans,
                                a->n_spans * sizeof *a->spans);
            assert_int_equal(a->text_len, b->text_len);
            assert_memory_equal(a->text, b->text, a->text_len);
        }
    }
    for (size_t t = 0; t < 3; t++)
        search_parser_free(p[t]);
}

static bool has(const search_parser *p, const char *path)
{
    return find(p, path, strlen(path), 1) != NULL;
}

/* With ignore files, what docs/search.md documents: rg honours .gitignore,
 * .ignore and .rgignore; git grep --untracked honours .gitignore alone,
 * and (unlike git grep without it) skips a tracked file that .gitignore
 * names, as rg does; grep knows no ignore file and skips only .git/ and
 * node_modules/. None searches .git/. */
static void test_ignore_files(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "ignores"), 0);
    const char *init[] = { "init", "-q", NULL };
    tree_git(dir, init);
    static const char *const files[] = {
        "plain.txt",         "ignored.txt", "build/out.txt", "forced.txt",
        "node_modules/m.js", "rgonly.txt",  "rgignored.txt", ".git/needle.txt",
    };
#define N_FILES (sizeof files / sizeof files[0])
    for (size_t i = 0; i < N_FILES; i++)
        tree_puts(dir, files[i], "needle\n");
    tree_puts(dir, ".gitignore", "ignored.txt\nbuild/\nforced.txt\n");
    tree_puts(dir, ".ignore", "rgonly.txt\n");
    tree_puts(dir, ".rgignore", "rgignored.txt\n");
    const char *add[] = { "add", "-f", "forced.txt", NULL };
    tree_git(dir, add);
    /* rg, git grep, grep: which of files[] each finds */
    static const bool found[3][N_FILES] = {
        { true, false, false, false, true, false, false, false },
        { true, false, false, false, true, true, true, false },
        { true, true, true, true, false, true, true, false },
    };
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle" };
        search_parser *p = run_ok(tools[t], dir, &ro);
        size_t want = 0;
        for (size_t i = 0; i < N_FILES; i++) {
            want += found[t][i];
            if (has(p, files[i]) != found[t][i])
                fail_msg("%s %s %s", search_tool_name(tools[t]),
                         found[t][i] ? "misses" : "finds", files[i]);
        }
        assert_int_equal(search_parser_count(p), want);
        search_parser_free(p);
    }
    ts_rmtree(dir);
}

/* The limit: exactly limit matches is complete; one more is partial, and
 * the parser asks to stop at the one beyond (not kept). */
static void test_limit(void **state)
{
    (void)state;
    search_query q = { .text = "needle", .len = 6 };
    search_limits lim = { .max_matches = 2 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_GREP, &q, &lim), 0);
    static const char rec[] = "./f\0"
                              "1:needle";
    assert_true(search_parser_record(p, rec, sizeof rec - 1, false));
    assert_true(search_parser_record(p, rec, sizeof rec - 1, false));
    assert_false(search_parser_partial(p));
    assert_false(search_parser_record(p, rec, sizeof rec - 1, false));
    assert_true(search_parser_partial(p));
    assert_int_equal(search_parser_count(p), 2);
    assert_false(search_parser_record(p, rec, sizeof rec - 1, false));
    search_parser_free(p);
}

/* What no tool writes is passed over and counted, never a match; a path
 * broken by newlines is put back together. */
/* n grep records of a line of len bytes in file f<i / 50>, the query at
 * its start. */
static void feed_lines(search_parser *p, size_t n, size_t len)
{
    char *rec = malloc(len + 32);
    assert_non_null(rec);
    for (size_t i = 0; i < n; i++) {
        int h = snprintf(rec, 32, "f%zu", i / 50);
        rec[h] = '\0';
        h += 1 + snprintf(rec + h + 1, 31 - h, "%zu:", i + 1);
        memcpy(rec + h, "needle", 6);
        memset(rec + h + 6, 'x', len - 6);
        assert_true(search_parser_record(p, rec, (size_t)h + len, false));
    }
    free(rec);
}

/* The matches in a pool's chunks (as tkd keeps them): the same matches,
 * byte for byte, as in chunks of the parser's own, a long line in a chunk
 * of its own; the chunks kept for the next parser, at most 16 (4 MiB). */
static void test_chunk_pool(void **state)
{
    (void)state;
    search_query q = { .text = "needle", .len = 6 };
    search_limits lim = { .max_matches = 100000 };
    search_pool *pool = search__test_pool_new();
    assert_non_null(pool);
    for (int round = 0; round < 2; round++) {
        search_parser *a, *b;
        assert_int_equal(search_parser_new(&a, SEARCH_TOOL_GREP, &q, &lim), 0);
        assert_int_equal(search_parser_new(&b, SEARCH_TOOL_GREP, &q, &lim), 0);
        search__parser_use_pool(b, pool);
        feed_lines(a, 3000, 200); /* 3 chunks of 256 KiB */
        feed_lines(b, 3000, 200);
        feed_lines(a, 1, 100000); /* beyond a quarter of a chunk */
        feed_lines(b, 1, 100000);
        feed_lines(a, 10, 20);
        feed_lines(b, 10, 20);
        assert_int_equal(search_parser_count(b), 3011);
        size_t n = search_parser_encoded_size(a);
        assert_int_equal(search_parser_encoded_size(b), n);
        uint8_t *ea = malloc(n), *eb = malloc(n);
        assert_true(ea != NULL && eb != NULL);
        search_parser_encode(a, ea);
        search_parser_encode(b, eb);
        assert_memory_equal(ea, eb, n);
        free(ea);
        free(eb);
        const search_match *m = search_parser_match(b, 3000);
        assert_int_equal(m->text_len, 100000);
        assert_int_equal(m->line, 1); /* feed_lines counts from 1 */
        search_parser_free(a);
        search_parser_free(b);
        /* Kept: the three chunks, not the long line's own (the second
         * round took the same three back). */
        assert_int_equal(search__test_pool_kept(pool), 3);
    }
    search_parser *big;
    assert_int_equal(search_parser_new(&big, SEARCH_TOOL_GREP, &q, &lim), 0);
    search__parser_use_pool(big, pool);
    feed_lines(big, 30000, 200); /* about 6 MiB */
    assert_int_equal(search_parser_count(big), 30000);
    search_parser_free(big);
    assert_int_equal(search__test_pool_kept(pool), 16);
    search__test_pool_free(pool);
}

static void test_malformed_records(void **state)
{
    (void)state;
    search_query q = { .text = "needle", .len = 6 };
    search_limits lim = { .max_matches = 10 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_GIT_GREP, &q, &lim), 0);
    static const char no_column[] = "f\0"
                                    "1\0"
                                    "needle";
    static const char path_a[] = "a";
    static const char path_b[] = "b\0"
                                 "7\0"
                                 "3\0"
                                 "x needle";
    assert_true(
        search_parser_record(p, no_column, sizeof no_column - 1, false));
    assert_true(search_parser_record(p, path_a, 1, false));
    assert_true(search_parser_record(p, path_b, sizeof path_b - 1, false));
    assert_int_equal(search_parser_count(p), 1);
    const search_match *m = search_parser_match(p, 0);
    assert_int_equal(m->path_len, 3);
    assert_memory_equal(m->path, "a\nb", 3);
    assert_int_equal(m->line, 7);
    assert_int_equal(m->column, 3);
    search_stats st;
    search_parser_stats(p, &st);
    assert_int_equal(st.skipped_records, 1);
    search_parser_free(p);

    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_RG, &q, &lim), 0);
    static const char bad_b64[] =
        "{\"type\":\"match\",\"data\":{\"path\":{\"bytes\":\"%%%\"},\"lines\":{"
        "\"text\":\"needle\\n\"},\"line_number\":1}}";
    static const char *const bad[] = { "not json", "{\"type\":\"match\"}",
                                       bad_b64 };
    for (size_t i = 0; i < 3; i++)
        assert_true(search_parser_record(p, bad[i], strlen(bad[i]), false));
    assert_false(search_parser_partial(p)); /* no match was lost */
    static const char cut[] = "{\"type\":\"match\",\"data\":{\"pa";
    assert_true(search_parser_record(p, cut, sizeof cut - 1, true));
    assert_int_equal(search_parser_count(p), 0);
    search_parser_stats(p, &st);
    assert_int_equal(st.skipped_records, 4);
    assert_true(search_parser_partial(p)); /* a match was */
    search_parser_free(p);
}

/* An rg match record cut at record_max: the match, when the path, the
 * line and its number came whole before the cut (its occurrences located
 * in the text); lost, and the parser partial, when they did not (a number
 * that ends the prefix may be the start of a longer one). */
static void test_rg_cut_records(void **state)
{
    (void)state;
    static const char head[] =
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"./f\"},"
        "\"lines\":{\"text\":\"a needle, needle\\n\"},\"line_number\":12";
    static const char *const tails[] = {
        ",\"absolute_offset\":0,\"submatches\":[{\"match\":{\"text\":"
        "\"needle\"},\"start\":2,\"end\":8},{\"match\":{\"te",
        ",",
    };
    for (int ic = 0; ic < 2; ic++) {
        search_query q = { .text = "needle", .len = 6, .ignore_case = ic };
        search_limits lim = { .max_matches = 10 };
        search_parser *p;
        assert_int_equal(search_parser_new(&p, SEARCH_TOOL_RG, &q, &lim), 0);
        char rec[512];
        for (size_t i = 0; i < 2; i++) {
            int n = snprintf(rec, sizeof rec, "%s%s", head, tails[i]);
            assert_true(search_parser_record(p, rec, (size_t)n, true));
        }
        assert_int_equal(search_parser_count(p), 2);
        assert_false(search_parser_partial(p));
        for (size_t i = 0; i < 2; i++) {
            const search_match *m = search_parser_match(p, i);
            assert_int_equal(m->path_len, 1);
            assert_int_equal(m->line, 12);
            assert_int_equal(m->text_len, 16);
            assert_int_equal(m->column, 3);
            /* located: both; with ignore_case rg's read before the cut
             * (the first), located when there are none, and flagged */
            assert_int_equal(m->n_spans, ic && i == 0 ? 1 : 2);
            assert_int_equal(m->spans[0].start, 2);
            assert_int_equal(m->truncated, ic);
        }
        /* cut within the number, and before it */
        assert_true(search_parser_record(p, head, sizeof head - 1, true));
        assert_true(search_parser_record(p, head, 40, true));
        assert_int_equal(search_parser_count(p), 2);
        assert_true(search_parser_partial(p));
        search_stats st;
        search_parser_stats(p, &st);
        assert_int_equal(st.skipped_records, 2);
        search_parser_free(p);
    }
}

/* A line of 3 MiB with an occurrence every two bytes: rg writes a record
 * of some 87 MB for it (each occurrence again as a submatch), which is cut
 * at record_max; the match still comes back as every tool's does: its
 * first MiB, flagged, every occurrence within it; the next line too. */
static void test_rg_line_with_many_hits(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "manyhits"), 0);
    size_t len = (size_t)3 << 20;
    static const char tail[] = "\nab again\n";
    char *big = malloc(len + sizeof tail);
    assert_non_null(big);
    for (size_t i = 0; i < len; i += 2) {
        big[i] = 'a';
        big[i + 1] = 'b';
    }
    memcpy(big + len, tail, sizeof tail);
    tree_write(dir, "big.txt", big, len + sizeof tail - 1);
    free(big);
    const char *init[] = { "init", "-q", NULL };
    tree_git(dir, init);
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "ab" };
        search_parser *p = run_ok(tools[t], dir, &ro);
        assert_int_equal(search_parser_count(p), 2);
        assert_false(search_parser_partial(p));
        const search_match *m = find(p, "big.txt", 7, 1);
        assert_non_null(m);
        assert_true(m->truncated);
        assert_int_equal(m->text_len, SEARCH_LINE_MAX);
        assert_int_equal(m->column, 1);
        assert_int_equal(m->n_spans, SEARCH_LINE_MAX / 2);
        assert_int_equal(m->spans[m->n_spans - 1].end, SEARCH_LINE_MAX);
        m = find(p, "big.txt", 7, 2);
        assert_non_null(m);
        assert_int_equal(m->text_len, 8);
        search_stats st;
        search_parser_stats(p, &st);
        assert_int_equal(st.skipped_records, 0);
        assert_int_equal(st.truncated_lines, 1);
        search_parser_free(p);
    }
    ts_rmtree(dir);
}

/* A file of one line longer than rg's record (RG_RECORD_MAX, 32 MiB: here
 * 40 MiB of text, a non-ASCII byte pair and a quote among them so that
 * the JSON escapes): on 31f2572 rg's record was cut inside the line,
 * before its number, and the match was lost (0 matches, partial) where
 * git grep and grep answered one. Now every tool answers the same: the
 * line, its first MiB, flagged; the column and the occurrence where they
 * lie within that MiB, none where they lie beyond it (mid.txt), and the
 * short line after each long one. */
static void test_line_longer_than_rg_record(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "hugeline"), 0);
    size_t len = (size_t)40 << 20;
    char *big = malloc(len + 32);
    assert_non_null(big);
    /* Bytes, not strings: no NUL goes into the file. */
    static const char odd[4] = { '"', '\xc3', '\xa9', '\\' };
    static const char needle[6] = { 'n', 'e', 'e', 'd', 'l', 'e' };
    static const char after[] = "\nshort needle\n";
    memset(big, 'x', len);
    memcpy(big + 100, odd, sizeof odd);
    memcpy(big + len, after, sizeof after); /* its NUL is not written */
    static const char *const files[] = { "start.txt", "mid.txt" };
    static const size_t at[] = { 0, (size_t)20 << 20 };
    for (size_t i = 0; i < 2; i++) {
        memcpy(big + at[i], needle, sizeof needle);
        tree_write(dir, files[i], big, len + sizeof after - 1);
        memset(big + at[i], 'x', sizeof needle);
    }
    free(big);
    const char *init[] = { "init", "-q", NULL };
    tree_git(dir, init);
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle" };
        search_parser *p = run_ok(tools[t], dir, &ro);
        assert_int_equal(search_parser_count(p), 4);
        assert_false(search_parser_partial(p));
        for (size_t i = 0; i < 2; i++) {
            const search_match *m = find(p, files[i], strlen(files[i]), 1);
            assert_non_null(m);
            assert_true(m->truncated);
            assert_int_equal(m->text_len, SEARCH_LINE_MAX);
            assert_memory_equal(m->text + 100, odd, sizeof odd);
            assert_int_equal(m->column, i == 0 ? 1 : 0);
            assert_int_equal(m->n_spans, i == 0 ? 1 : 0);
            m = find(p, files[i], strlen(files[i]), 2);
            assert_non_null(m);
            assert_int_equal(m->column, 7);
        }
        search_stats st;
        search_parser_stats(p, &st);
        assert_int_equal(st.skipped_records, 0);
        assert_int_equal(st.truncated_lines, 2);
        search_parser_free(p);
    }
    ts_rmtree(dir);
}

/* rg's JSON as the reader must take it, beyond what the fixture tree
 * makes rg write: every escape, a surrogate pair, \u0000, members in
 * another order and spaced out; and what it must refuse. */
static void test_rg_json_reader(void **state)
{
    (void)state;
    search_query q = { .text = "n", .len = 1 };
    search_limits lim = { .max_matches = 10 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_RG, &q, &lim), 0);
    static const char escapes[] =
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"a\\\"b\\\\c\\/"
        "\\u00e9\\ud83d\\ude00\"},\"lines\":{\"text\":\"n\\u0000\\t\\b\\f\\r"
        "n\\n\"},\"line_number\":42,\"absolute_offset\":0,\"submatches\":[{"
        "\"match\":{\"text\":\"n\"},\"start\":0,\"end\":1},{\"match\":{"
        "\"text\":\"n\"},\"start\":6,\"end\":7}]}}";
    static const char reordered[] =
        " { \"data\" : { \"submatches\" : [ { \"end\" : 2 , \"start\" : 1 } ] ,"
        " \"lines\" : { \"bytes\" : \"/24K\" } , \"path\" : { \"bytes\" :"
        " \"Li94/w==\" } , \"line_number\" : 7 , \"extra\" : [ 1.5e3 , true ,"
        " null , { } , [ ] ] } , \"type\" : \"match\" } ";
    assert_true(search_parser_record(p, escapes, sizeof escapes - 1, false));
    assert_true(
        search_parser_record(p, reordered, sizeof reordered - 1, false));
    assert_int_equal(search_parser_count(p), 2);
    const search_match *m = search_parser_match(p, 0);
    static const char path[] = "a\"b\\c/\xc3\xa9\xf0\x9f\x98\x80";
    assert_int_equal(m->path_len, sizeof path - 1);
    assert_memory_equal(m->path, path, sizeof path - 1);
    assert_int_equal(m->text_len, 7);
    assert_memory_equal(m->text, "n\0\t\b\f\rn", 7);
    assert_int_equal(m->line, 42);
    assert_int_equal(m->n_spans, 2);
    assert_int_equal(m->spans[1].start, 6);
    m = search_parser_match(p, 1);
    assert_int_equal(m->path_len, 2); /* "./x\xff" without "./" */
    assert_memory_equal(m->path, "x\xff", 2);
    assert_int_equal(m->text_len, 2); /* "\xffn\n" less its newline */
    assert_memory_equal(m->text, "\xffn", 2);
    assert_int_equal(m->line, 7);
    assert_int_equal(m->column, 2);

    static const char *const refused[] = {
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"\\ud83d\"},"
        "\"lines\":{\"text\":\"n\"}}}",
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"\\q\"},"
        "\"lines\":{\"text\":\"n\"}}}",
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"a\"},"
        "\"lines\":{\"text\":\"n\"}}} trailing",
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"a\"}}}",
        /* nesting past the reader's bound */
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"a\"},"
        "\"lines\":{\"text\":\"n\"},\"deep\":"
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_true(
            search_parser_record(p, refused[i], strlen(refused[i]), false));
    assert_int_equal(search_parser_count(p), 2);
    search_stats st;
    search_parser_stats(p, &st);
    assert_int_equal(st.skipped_records, 5);
    search_parser_free(p);
}

/* ---- the reply's encoding ----------------------------------------------- */

/* search_parser_encode writes the bytes protobuf-c packs for the same
 * matches built as SearchMatch messages (as run.c once built them). */
static void check_encoding(const search_parser *p)
{
    size_t n = search_parser_count(p);
    Tk__V1__SearchReply rep = TK__V1__SEARCH_REPLY__INIT;
    Tk__V1__SearchMatch *ms = calloc(n + 1, sizeof *ms);
    Tk__V1__SearchMatch **pms = calloc(n + 1, sizeof(Tk__V1__SearchMatch *));
    Tk__V1__SearchSubmatch **subs_of =
        calloc(n + 1, sizeof(Tk__V1__SearchSubmatch *));
    assert_non_null(ms);
    assert_non_null(pms);
    assert_non_null(subs_of);
    for (size_t i = 0; i < n; i++) {
        const search_match *m = search_parser_match(p, i);
        tk__v1__search_match__init(&ms[i]);
        ms[i].path = (ProtobufCBinaryData){ m->path_len, (uint8_t *)m->path };
        ms[i].line = m->line;
        ms[i].column = m->column;
        ms[i].text = (ProtobufCBinaryData){ m->text_len, (uint8_t *)m->text };
        ms[i].truncated = m->truncated;
        ms[i].n_submatches = m->n_spans;
        ms[i].submatches = calloc(m->n_spans + 1, sizeof(void *));
        Tk__V1__SearchSubmatch *subs = calloc(m->n_spans + 1, sizeof *subs);
        assert_non_null(ms[i].submatches);
        assert_non_null(subs);
        subs_of[i] = subs;
        for (size_t k = 0; k < m->n_spans; k++) {
            tk__v1__search_submatch__init(&subs[k]);
            subs[k].start = m->spans[k].start;
            subs[k].end = m->spans[k].end;
            ms[i].submatches[k] = &subs[k];
        }
        pms[i] = &ms[i];
    }
    rep.matches = pms;
    rep.n_matches = n;
    size_t want = tk__v1__search_reply__get_packed_size(&rep);
    uint8_t *a = malloc(want + 1), *b = malloc(want + 1);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(tk__v1__search_reply__pack(&rep, a), want);
    assert_int_equal(search_parser_encoded_size(p), want);
    search_parser_encode(p, b);
    assert_memory_equal(a, b, want);
    for (size_t i = 0; i < n; i++) {
        free(subs_of[i]);
        free(ms[i].submatches);
    }
    free(subs_of);
    free(ms);
    free(pms);
    free(a);
    free(b);
}

/* Every parser's matches of the fixture tree (paths with colons, newlines
 * and bytes that are not UTF-8, lines over 64 KiB and over 1 MiB, cut and
 * flagged), and numbers and flags at their edges. */
static void test_reply_encoding(void **state)
{
    for (size_t t = 0; t < 3; t++) {
        run_opts ro = { .query = "needle" };
        search_parser *p = run_ok(tools[t], *state, &ro);
        assert_true(search_parser_count(p) > 0);
        check_encoding(p);
        search_parser_free(p);
    }
    search_query q = { .text = "n", .len = 1 };
    search_limits lim = { .max_matches = 100 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_GIT_GREP, &q, &lim), 0);
    static const char big[] = "a.txt\0"
                              "9223372036854775807\0"
                              "4294967295\0x";
    static const char empty[] = "b\0"
                                "1\0"
                                "1\0";
    static const char one[] = "c\0"
                              "127\0"
                              "128\0"
                              "0123456789n";
    assert_true(search_parser_record(p, big, sizeof big - 1, false));
    assert_true(search_parser_record(p, empty, sizeof empty - 1, false));
    assert_true(search_parser_record(p, one, sizeof one - 1, true));
    assert_int_equal(search_parser_count(p), 3);
    check_encoding(p);
    search_parser_free(p);
    assert_int_equal(search_parser_new(&p, SEARCH_TOOL_GREP, &q, &lim), 0);
    assert_int_equal(search_parser_encoded_size(p), 0); /* no matches */
    search_parser_free(p);
}

/* ---- rg: the fast path against the general reader ------------------------
 * parse_rg.c reads match records in rg's own layout by a fast path, and
 * anything else by its general reader. Each record below goes to two
 * parsers, one with the fast path (tkd's) and one without it
 * (search__test_set_rg_fast): what they keep, count and answer must be the
 * same, record after record. The records: rg's own output on trees with
 * odd paths and lines, and hand-made ones around every edge of the layout
 * (escapes, "bytes", members reordered or added, spaces, numbers, cuts).
 * Most of rg's, and the hand-made ones in its layout, must be read by the
 * fast path, or the comparison would prove nothing. */

typedef struct corpus {
    char **data;
    size_t *len;
    size_t n, cap;
} corpus;

static void corpus_add(corpus *c, const char *data, size_t len)
{
    if (c->n == c->cap) {
        c->cap = c->cap != 0 ? c->cap * 2 : 64;
        c->data = realloc(c->data, c->cap * sizeof *c->data);
        c->len = realloc(c->len, c->cap * sizeof *c->len);
        assert_non_null(c->data);
        assert_non_null(c->len);
    }
    c->data[c->n] = malloc(len + 1);
    assert_non_null(c->data[c->n]);
    memcpy(c->data[c->n], data, len);
    c->data[c->n][len] = '\0';
    c->len[c->n++] = len;
}

static void corpus_str(corpus *c, const char *rec)
{
    corpus_add(c, rec, strlen(rec));
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->data[i]);
    free(c->data);
    free(c->len);
}

/* A match record in rg's layout: path and line are JSON string contents
 * (escapes and all), subs the submatch objects. */
static void rg_rec(corpus *c, const char *path, const char *line,
                   const char *subs)
{
    static const char fmt[] =
        "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"%s\"},\"lines\":{"
        "\"text\":\"%s\"},\"line_number\":12,\"absolute_offset\":345,"
        "\"submatches\":[%s]}}";
    size_t n = sizeof fmt + strlen(path) + strlen(line) + strlen(subs);
    char *rec = malloc(n);
    assert_non_null(rec);
    int len = snprintf(rec, n, fmt, path, line, subs);
    assert_true(len > 0 && (size_t)len < n);
    corpus_add(c, rec, (size_t)len);
    free(rec);
}

static proc_verdict collect(void *arg, const char *data, size_t len,
                            bool truncated)
{
    if (!truncated) /* a cut record never reaches the fast path */
        corpus_add(arg, data, len);
    return PROC_CONTINUE;
}

/* rg's output on dir for query, tkd's command line, a record each. */
static void rg_output(corpus *c, const char *dir, const char *query,
                      bool ignore_case)
{
    search_query q = { .text = query,
                       .len = strlen(query),
                       .ignore_case = ignore_case,
                       .include_hidden = true };
    proc_result r;
    run_into(SEARCH_TOOL_RG, dir, &q, collect, c, &r);
    assert_int_equal(r.status.code, 0);
    proc_result_fini(&r);
}

/* A tree of what makes rg escape: quotes, backslashes, control bytes,
 * CR LF, UTF-8 beyond the BMP, no newline at the end, lines beyond
 * 64 KiB with and without escapes in them. */
static void make_escapes_tree(const char *dir)
{
    tree_puts(dir, "esc.txt",
              "needle\twith tabs \"quoted\" back\\slash /slash\n"
              "ctl \x01\x02\x1f\x7f needle \x1b[0m\n"
              "utf8 \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 needle\n"
              "crlf needle\r\n"
              "needle\n"
              "needle needle needle needle needle needle\n"
              "\xa2\xdc not UTF-8 needle\n"
              "\f\b needle \\n \\\\\" \\u0041\n"
              "no newline at the end needle");
    tree_puts(dir, "q\"uo\\te.txt", "needle\n");
    tree_puts(dir, "tab\tname \xc3\xa9.txt", "a needle\n");
    size_t n = (size_t)70 * 1024;
    char *big = malloc(n + 16);
    assert_non_null(big);
    static const char word[6] = { 'n', 'e', 'e', 'd', 'l', 'e' };
    memset(big, 'x', n);
    snprintf(big + n - 7, 8, "needle\n"); /* its NUL beyond the file */
    tree_write(dir, "plain-long.txt", big, n);
    for (size_t i = 100; i < n - 8; i += 4093)
        big[i] = i % 2 != 0 ? '\t' : '"';
    memcpy(big + 3, word, 6);
    tree_write(dir, "escaped-long.txt", big, n);
    free(big);
}

/* Hand-made records: fast[i] says whether the fast path must read it. */
typedef struct handmade {
    corpus c;
    bool fast[1024];
} handmade;

static void hm(handmade *h, bool fast, const char *rec)
{
    assert_true(h->c.n < sizeof h->fast);
    h->fast[h->c.n] = fast;
    corpus_str(&h->c, rec);
}

static void hm_rg(handmade *h, bool fast, const char *path, const char *line,
                  const char *subs)
{
    assert_true(h->c.n < sizeof h->fast);
    h->fast[h->c.n] = fast;
    rg_rec(&h->c, path, line, subs);
}

#define SUB(t, s, e)                                                           \
    "{\"match\":{\"text\":\"" t "\"},\"start\":" #s ",\"end\":" #e "}"
/* A match record in rg's layout is HEAD BODY "}}". */
#define HEAD "{\"type\":\"match\",\"data\":{"
#define PATH "\"path\":{\"text\":\"./f\"}"
#define LINES "\"lines\":{\"text\":\"a needle\\n\"}"
#define NUMS "\"line_number\":1,\"absolute_offset\":0"
#define SUBS "\"submatches\":[" SUB("needle", 2, 8) "]"
#define BODY PATH "," LINES "," NUMS "," SUBS

static void handmade_records(handmade *h)
{
    const char *s1 = SUB("needle", 2, 8);
    /* the layout, and escapes of every kind in each string */
    hm_rg(h, true, "./f", "a needle\\n", s1);
    hm_rg(h, true,
          "./a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0000\\u00e9\\u00E9"
          "\\ud83d\\ude00\\u20ac",
          "a needle \\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u00e9\\ud83d"
          "\\ude00 end\\n",
          SUB("n\\u0065edle", 2, 8) "," SUB("\\\"\\\\", 9, 11));
    hm_rg(h, true, "./f", "a needle", s1);       /* no terminator */
    hm_rg(h, true, "./f", "a needle\\r\\n", s1); /* CR LF */
    hm_rg(h, true, "./f", "a needle\\n\\n", s1); /* only one is taken off */
    hm_rg(h, true, "./f", "a needle\n\\n", s1);  /* a raw newline, then \n */
    hm_rg(h, true, "./f", "a needle\n", s1);     /* a raw newline alone */
    hm_rg(h, true, "./f", "\\n", "");            /* an empty line */
    hm_rg(h, true, "./f", "\\\\n\\n", s1);       /* a backslash, an n */
    hm_rg(h, true, "./f", "", "");               /* empty text */
    hm_rg(h, true, "", "a needle\\n", s1);       /* empty path */
    hm_rg(h, true, "./", "a needle\\n", s1);     /* path "./" */
    hm_rg(h, true, ".", "a needle\\n", s1);
    hm_rg(h, true, "./f", "raw \xa2\xdc\xff\x80 bytes needle\\n", s1);
    hm_rg(h, true, "./f", "a needle\\n", ""); /* no submatches */
    /* twice, reversed, beyond the line, beyond 32 bits, empty */
    static const char odd[] =
        SUB("needle", 2, 8) "," SUB("needle", 2, 8) "," SUB("x", 8, 2) "," SUB(
            "x", 0, 99) "," SUB("x", 0, 4294967296) "," SUB("x", 0, 0);
    hm_rg(h, true, "./f", "a needle\\n", odd);
    /* the largest number digits() takes, and one beyond it */
    static const char big[] = SUB("x", 0, 9223372036854775799) "," SUB(
        "x", 9223372036854775799, 9223372036854775799);
    hm_rg(h, true, "./f", "a needle\\n", big);
    hm_rg(h, false, "./f", "a needle\\n", SUB("x", 0, 9223372036854775800));
    hm_rg(h, true, "./f", "a needle\\n", SUB("x", 007, 0008));
    /* bad escapes: refused by both */
    static const char *const bad[] = {
        "\\q",        "\\u12",    "\\u12G4",
        "\\ud83d",    "\\ude00",  "\\ud83d\\u0041",
        "\\ud83d\\n", "\\ud83dx", "\\",
        "\\u",        "\\x41",    "\\U0041",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hm_rg(h, false, bad[i], "a needle\\n", s1);
        char line[64];
        snprintf(line, sizeof line, "a needle %s x\\n", bad[i]);
        hm_rg(h, false, "./f", line, s1);
        char sub[96];
        snprintf(sub, sizeof sub,
                 "{\"match\":{\"text\":\"%s\"},\"start\":2,\"end\":8}", bad[i]);
        hm_rg(h, false, "./f", "a needle\\n", sub);
    }
    /* "bytes", members reordered, spaces, more members, other values */
    static const char *const other[] = {
        HEAD "\"path\":{\"bytes\":\"Li9m/w==\"}," LINES "," NUMS "," SUBS "}}",
        HEAD PATH ",\"lines\":{\"bytes\":\"YSBuZWVkbGX/Cg==\"}," NUMS "," SUBS
                  "}}",
        HEAD PATH "," LINES "," NUMS ",\"submatches\":[{\"match\":{\"bytes\":"
                  "\"bmVlZGxl\"},\"start\":2,\"end\":8}]}}",
        /* another order */
        HEAD LINES "," PATH "," NUMS "," SUBS "}}",
        HEAD PATH "," LINES ",\"absolute_offset\":0,\"line_number\":3," SUBS
                  "}}",
        HEAD PATH "," LINES "," SUBS "," NUMS "}}",
        HEAD PATH "," LINES "," NUMS ",\"submatches\":[{\"start\":2,\"end\":8,"
                  "\"match\":{\"text\":\"needle\"}}]}}",
        "{\"data\":{" BODY "},\"type\":\"match\"}",
        /* spaces */
        " " HEAD BODY "}}",
        HEAD BODY "}} ",
        HEAD BODY "}}\r",
        HEAD PATH ",\t" LINES "," NUMS "," SUBS "}}",
        "{ \"type\" : \"match\" , \"data\" : { \"path\" : { \"text\" : \"./f\" "
        "} , \"lines\" : { \"text\" : \"a needle\\n\" } , \"line_number\" : 1 "
        ", \"absolute_offset\" : 0 , \"submatches\" : [ { \"match\" : { "
        "\"text\" : \"needle\" } , \"start\" : 2 , \"end\" : 8 } ] } }",
        /* more, fewer, twice */
        HEAD "\"path\":{\"text\":\"./f\",\"extra\":1}," LINES "," NUMS "," SUBS
             "}}",
        HEAD BODY ",\"extra\":[1.5e3,true,null,{},[]]}}",
        HEAD PATH "," LINES "," NUMS ",\"submatches\":[{\"match\":{\"text\":"
                  "\"needle\"},\"start\":2,\"end\":8,\"x\":0}]}}",
        HEAD BODY "},\"extra\":0}",
        HEAD PATH "," LINES "," NUMS "}}",
        HEAD PATH "," NUMS "," SUBS "}}",
        HEAD LINES "," NUMS "," SUBS "}}",
        HEAD PATH "," LINES "," BODY "}}",
        "{\"type\":\"match\",\"type\":\"match\",\"data\":{" BODY "}}",
        /* other values */
        HEAD PATH "," LINES ",\"line_number\":null,\"absolute_offset\":0," SUBS
                  "}}",
        HEAD PATH "," LINES ",\"line_number\":-1,\"absolute_offset\":0," SUBS
                  "}}",
        HEAD PATH "," LINES ",\"line_number\":1.5,\"absolute_offset\":0," SUBS
                  "}}",
        HEAD PATH "," LINES ",\"line_number\":1e3,\"absolute_offset\":0," SUBS
                  "}}",
        HEAD PATH "," LINES ",\"line_number\":9223372036854775808,"
                  "\"absolute_offset\":0," SUBS "}}",
        HEAD PATH "," LINES ",\"line_number\":1,\"absolute_offset\":null," SUBS
                  "}}",
        HEAD PATH "," LINES ",\"line_number\":1,\"absolute_offset\":true," SUBS
                  "}}",
        HEAD PATH "," LINES "," NUMS ",\"submatches\":[{\"match\":{\"text\":"
                  "\"needle\"},\"start\":null,\"end\":8}]}}",
        HEAD PATH "," LINES "," NUMS
                  ",\"submatches\":[" SUB("needle", 2, 8) ",]}}",
        HEAD PATH "," LINES "," NUMS ",\"submatches\":{}}}",
        HEAD "\"path\":\"./f\"," LINES "," NUMS "," SUBS "}}",
        "{\"type\":\"match\",\"data\":null}",
        "{\"type\":\"match\",\"data\":{}}",
        /* not a match record, or not one */
        "{\"type\":\"context\",\"data\":{" BODY "}}",
        "{\"type\":\"matches\",\"data\":{" BODY "}}",
        "{\"data\":{" BODY "}}",
        HEAD BODY "}} x",
        HEAD BODY "}}}",
        HEAD BODY "}",
        "{}",
        "",
        "]",
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        hm(h, false, other[i]);
    static const char line0[] = HEAD PATH
        "," LINES ",\"line_number\":0,\"absolute_offset\":0," SUBS "}}";
    hm(h, true, line0); /* in the layout: a line number the match lacks */
}

/* Every prefix of a record: what a cut (or a bug) leaves. */
static void prefixes(corpus *c, const char *rec)
{
    for (size_t n = 0; n < strlen(rec); n++)
        corpus_add(c, rec, n);
}

/* Strings of every length around the 8-byte words and the 128 bytes that
 * the fast path scans in place, an escape at each end, and a quote and a
 * backslash in every position of a word. */
/* n bytes of c, then tail, into buf. */
static char *filled(char *buf, size_t size, char c, size_t n, const char *tail)
{
    assert_true(n + strlen(tail) < size);
    memset(buf, c, n);
    snprintf(buf + n, size - n, "%s", tail);
    return buf;
}

static void boundary_records(handmade *h)
{
    char line[512], path[512];
    for (size_t n = 0; n < 150; n++) {
        hm_rg(h, true, "./f", filled(line, sizeof line, 'x', n, "\\n"), "");
        hm_rg(h, true, "./f", filled(line, sizeof line, 'x', n, ""), "");
        hm_rg(h, true, filled(path, sizeof path, 'p', n, "\\t"), line, "");
        if (n > 0) {
            filled(line, sizeof line, 'x', n - 1, "\\\"\\n");
            hm_rg(h, true, line, line, "");
        }
    }
    for (size_t at = 0; at < 140; at += 3) {
        filled(line, sizeof line, 'y', 140, "\\n");
        line[at] = line[at + 1] = '\\';
        hm_rg(h, true, "./f", line, "");
    }
}

typedef struct twin {
    search_parser *fast, *general;
} twin;

static void twin_new(twin *t, const search_limits *lim)
{
    search_query q = { .text = "needle", .len = 6 };
    assert_int_equal(search_parser_new(&t->fast, SEARCH_TOOL_RG, &q, lim), 0);
    assert_int_equal(search_parser_new(&t->general, SEARCH_TOOL_RG, &q, lim),
                     0);
    search__test_set_rg_fast(t->general, false);
}

static void twin_free(twin *t)
{
    search_parser_free(t->fast);
    search_parser_free(t->general);
}

static void same_match(const search_match *a, const search_match *b, size_t i)
{
    if (a->path_len != b->path_len ||
        memcmp(a->path, b->path, a->path_len) != 0 || a->line != b->line ||
        a->column != b->column || a->text_len != b->text_len ||
        memcmp(a->text, b->text, a->text_len) != 0 ||
        a->truncated != b->truncated || a->n_spans != b->n_spans ||
        memcmp(a->spans, b->spans, a->n_spans * sizeof *a->spans) != 0)
        fail_msg("match %zu: fast path %.*s:%llu:%u (%zu bytes, %zu spans), "
                 "general reader %.*s:%llu:%u (%zu bytes, %zu spans)",
                 i, (int)a->path_len, a->path, (unsigned long long)a->line,
                 a->column, a->text_len, a->n_spans, (int)b->path_len, b->path,
                 (unsigned long long)b->line, b->column, b->text_len,
                 b->n_spans);
}

/* Both parsers hold the same from match from on, and say the same of it. */
static void twin_same(const twin *t, size_t from)
{
    size_t n = search_parser_count(t->fast);
    assert_int_equal(n, search_parser_count(t->general));
    for (size_t i = from; i < n; i++)
        same_match(search_parser_match(t->fast, i),
                   search_parser_match(t->general, i), i);
    search_stats a, b;
    search_parser_stats(t->fast, &a);
    search_parser_stats(t->general, &b);
    assert_int_equal(a.matched_lines, b.matched_lines);
    assert_int_equal(a.files_with_matches, b.files_with_matches);
    assert_int_equal(a.truncated_lines, b.truncated_lines);
    assert_int_equal(a.skipped_records, b.skipped_records);
    assert_int_equal(search_parser_partial(t->fast),
                     search_parser_partial(t->general));
}

/* Feeds c to a new pair of parsers, comparing after each record; returns
 * how many records the fast path read. fast (or NULL): which of c it must
 * read (unless the parser is partial by then). */
static size_t twin_feed(const search_limits *lim, const corpus *c,
                        const bool *fast)
{
    twin t;
    twin_new(&t, lim);
    for (size_t i = 0; i < c->n; i++) {
        size_t before = search__test_rg_fast_read(t.fast);
        size_t kept = search_parser_count(t.fast);
        bool a = search_parser_record(t.fast, c->data[i], c->len[i], false);
        bool b = search_parser_record(t.general, c->data[i], c->len[i], false);
        bool took = search__test_rg_fast_read(t.fast) > before;
        if (a != b)
            fail_msg("record %zu: fast path %d, general reader %d: %.200s", i,
                     a, b, c->data[i]);
        if (fast != NULL && fast[i] != took && !search_parser_partial(t.fast))
            fail_msg("record %zu: the fast path %s it: %.200s", i,
                     took ? "read" : "did not read", c->data[i]);
        twin_same(&t, kept);
    }
    twin_same(&t, 0);
    assert_int_equal(search__test_rg_fast_read(t.general), 0);
    size_t read = search__test_rg_fast_read(t.fast);
    twin_free(&t);
    return read;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
    return len >= strlen(prefix) && memcmp(s, prefix, strlen(prefix)) == 0;
}

static void test_rg_fast_path(void **state)
{
    char dir[256];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "rgfast"), 0);
    make_escapes_tree(dir);
    corpus real = { 0 };
    rg_output(&real, *state, "needle", false); /* the fixture tree */
    rg_output(&real, *state, "NEEDLE", true);
    rg_output(&real, dir, "needle", false);
    rg_output(&real, dir, "e", false);
    ts_rmtree(dir);
    handmade h = { 0 };
    handmade_records(&h);
    boundary_records(&h);
    corpus cuts = { 0 };
    for (size_t i = 0; i < 2; i++)
        prefixes(&cuts, h.c.data[i]);

    /* rg's records, all in its layout but those with "bytes" */
    size_t n_match = 0, n_bytes = 0;
    for (size_t i = 0; i < real.n; i++) {
        bool match = starts(real.data[i], real.len[i], "{\"type\":\"match\"");
        n_match += match;
        n_bytes += match && strstr(real.data[i], "{\"bytes\":") != NULL;
    }
    assert_true(n_bytes > 0 && n_match > n_bytes + 20);

    /* tkd's limits, then limits each corpus reaches: the same matches, the
     * same partial, the same answer at the same record */
    static const search_limits lims[] = {
        { .max_matches = SEARCH_MAX_LIMIT },
        { .max_matches = 5 },
        { .max_matches = SEARCH_MAX_LIMIT, .max_bytes = 4096 },
        { .max_matches = SEARCH_MAX_LIMIT, .line_max = 7 },
    };
    for (size_t l = 0; l < sizeof lims / sizeof lims[0]; l++) {
        size_t read = twin_feed(&lims[l], &real, NULL);
        if (l == 0)
            assert_int_equal(read, n_match - n_bytes);
        twin_feed(&lims[l], &h.c, h.fast);
        assert_int_equal(twin_feed(&lims[l], &cuts, NULL), 0);
    }
    corpus_free(&real);
    corpus_free(&h.c);
    corpus_free(&cuts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_parser),
        cmocka_unit_test(test_line_over_a_mebibyte),
        cmocka_unit_test(test_hidden_excluded),
        cmocka_unit_test(test_ignore_case),
        cmocka_unit_test(test_parity),
        cmocka_unit_test(test_ignore_files),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_chunk_pool),
        cmocka_unit_test(test_malformed_records),
        cmocka_unit_test(test_rg_json_reader),
        cmocka_unit_test(test_rg_cut_records),
        cmocka_unit_test(test_rg_line_with_many_hits),
        cmocka_unit_test(test_line_longer_than_rg_record),
        cmocka_unit_test(test_reply_encoding),
        cmocka_unit_test(test_rg_fast_path),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
