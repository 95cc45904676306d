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

/* What tkd would do with tool in dir, without tkd. */
static search_parser *run(search_tool tool, const char *dir, const run_opts *ro,
                          proc_result *r)
{
    search_query q = { .text = ro->query,
                       .len = strlen(ro->query),
                       .ignore_case = ro->ignore_case,
                       .include_hidden = !ro->exclude_hidden };
    search_command cmd;
    assert_int_equal(search_command_build(&cmd, tool, &q), 0);
    char path[PATH_MAX];
    if (!tree_which(cmd.argv[0], path, sizeof path))
        fail_msg("%s is not in PATH", cmd.argv[0]);
    search_limits lim = { .max_matches = ro->limit != 0 ? ro->limit : 1000 };
    search_parser *p;
    assert_int_equal(search_parser_new(&p, tool, &q, &lim), 0);
    proc_opts o;
    proc_opts_init(&o);
    o.path = path;
    o.argv = cmd.argv;
    o.env = cmd.env;
    o.cwd = dir;
    o.on_stdout = on_record;
    o.on_stdout_arg = p;
    o.record_max = cmd.record_max;
    o.record_delim = cmd.record_delim;
    assert_int_equal(proc_run(r, &o), 0);
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
    proc_result_free(&r);
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

/* With ignore files, what README.md documents: rg honours .gitignore,
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
    Tk__V1__SearchMatch **pms = calloc(n + 1, sizeof *pms);
    Tk__V1__SearchSubmatch **subs_of = calloc(n + 1, sizeof *subs_of);
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
        cmocka_unit_test(test_malformed_records),
        cmocka_unit_test(test_rg_json_reader),
        cmocka_unit_test(test_rg_cut_records),
        cmocka_unit_test(test_rg_line_with_many_hits),
        cmocka_unit_test(test_reply_encoding),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
