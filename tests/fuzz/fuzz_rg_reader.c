/* SPDX-License-Identifier: MIT */
/*
 * rg_reader: rg --json output, a record a line, into two search parsers
 * at once: tkd's, which reads match records in rg's own layout by a fast
 * path (service/search/parse_rg.c), and one held to the general JSON
 * reader alone (search__test_set_rg_fast). A differential: after every
 * record both must have answered the same, hold the same matches (path,
 * line, column, text, spans, truncation), count the same and be partial
 * alike. Under tkd's limits and under small ones that the input reaches
 * (5 matches, 4 KiB, lines of 7 bytes), where records longer than 200
 * bytes arrive cut, as proc's record mode hands them over.
 *
 * Also: the matches encode (search_parser_encode) to the size announced,
 * as a tk.v1.SearchReply that decodes with every match in it, and no
 * span lies outside its text.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "search/search.h"
#include "tk/v1/search.pb-c.h"

#define CUT_AT 200

typedef struct twin {
    search_parser *fast, *general;
} twin;

static void twin_new(twin *t, const search_query *q, const search_limits *lim)
{
    FUZZ_CHECK(search_parser_new(&t->fast, SEARCH_TOOL_RG, q, lim) == 0 &&
                   search_parser_new(&t->general, SEARCH_TOOL_RG, q, lim) == 0,
               "search_parser_new");
    search__test_set_rg_fast(t->general, false);
}

static void same_match(const search_match *a, const search_match *b, size_t i)
{
    FUZZ_CHECK(a->path_len == b->path_len &&
                   memcmp(a->path, b->path, a->path_len) == 0,
               "match %zu: the path differs", i);
    FUZZ_CHECK(a->line == b->line && a->column == b->column,
               "match %zu: line:column %llu:%u (fast path), %llu:%u "
               "(general reader)",
               i, (unsigned long long)a->line, a->column,
               (unsigned long long)b->line, b->column);
    FUZZ_CHECK(a->text_len == b->text_len &&
                   memcmp(a->text, b->text, a->text_len) == 0 &&
                   a->truncated == b->truncated,
               "match %zu: the text differs (%zu and %zu bytes)", i,
               a->text_len, b->text_len);
    FUZZ_CHECK(
        a->n_spans == b->n_spans &&
            memcmp(a->spans, b->spans, a->n_spans * sizeof *a->spans) == 0,
        "match %zu: the spans differ (%zu and %zu)", i, a->n_spans, b->n_spans);
    for (size_t k = 0; k < a->n_spans; k++)
        FUZZ_CHECK(a->spans[k].start <= a->spans[k].end &&
                       a->spans[k].end <= a->text_len,
                   "match %zu: span %zu [%u, %u) outside its %zu bytes", i, k,
                   a->spans[k].start, a->spans[k].end, a->text_len);
}

static void twin_same(const twin *t, size_t from)
{
    size_t n = search_parser_count(t->fast);
    FUZZ_CHECK(n == search_parser_count(t->general),
               "%zu matches (fast path), %zu (general reader)", n,
               search_parser_count(t->general));
    for (size_t i = from; i < n; i++)
        same_match(search_parser_match(t->fast, i),
                   search_parser_match(t->general, i), i);
    search_stats a, b;
    search_parser_stats(t->fast, &a);
    search_parser_stats(t->general, &b);
    FUZZ_CHECK(memcmp(&a, &b, sizeof a) == 0,
               "stats differ: matched %u/%u files %u/%u truncated %u/%u "
               "skipped %u/%u",
               a.matched_lines, b.matched_lines, a.files_with_matches,
               b.files_with_matches, a.truncated_lines, b.truncated_lines,
               a.skipped_records, b.skipped_records);
    FUZZ_CHECK(search_parser_partial(t->fast) ==
                   search_parser_partial(t->general),
               "partial differs");
}

static void check_encoding(const search_parser *p)
{
    size_t n = search_parser_encoded_size(p);
    uint8_t *buf = malloc(n > 0 ? n : 1);
    FUZZ_CHECK(buf != NULL, "out of memory");
    search_parser_encode(p, buf);
    Tk__V1__SearchReply *r = tk__v1__search_reply__unpack(NULL, n, buf);
    FUZZ_CHECK(r != NULL, "the encoded matches (%zu bytes) do not decode", n);
    FUZZ_CHECK(r->n_matches == search_parser_count(p),
               "%zu matches encoded as %zu", search_parser_count(p),
               r->n_matches);
    tk__v1__search_reply__free_unpacked(r, NULL);
    free(buf);
}

static void run(const uint8_t *data, size_t size, const search_query *q,
                const search_limits *lim, bool cut_long)
{
    twin t;
    twin_new(&t, q, lim);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        bool cut = cut_long && len > CUT_AT;
        size_t take = cut ? CUT_AT : len;
        size_t kept = search_parser_count(t.fast);
        bool a = search_parser_record(t.fast, p, take, cut);
        bool b = search_parser_record(t.general, p, take, cut);
        FUZZ_CHECK(a == b,
                   "the record answers %d (fast path), %d (general "
                   "reader)",
                   a, b);
        twin_same(&t, kept);
        p += len + (nl != NULL);
    }
    twin_same(&t, 0);
    FUZZ_CHECK(search__test_rg_fast_read(t.general) == 0,
               "the general reader's parser used the fast path");
    check_encoding(t.fast);
    search_parser_free(t.fast);
    search_parser_free(t.general);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const search_query q = { .text = "needle", .len = 6 };
    static const search_query qi = { .text = "NeEdLe",
                                     .len = 6,
                                     .ignore_case = true };
    static const search_limits tkd = { .max_matches = SEARCH_MAX_LIMIT };
    static const search_limits small = { .max_matches = 5,
                                         .max_bytes = 4096,
                                         .line_max = 7 };
    run(data, size, &q, &tkd, false);
    run(data, size, &qi, &small, true);
    return 0;
}
