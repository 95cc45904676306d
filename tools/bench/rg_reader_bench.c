/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rg-reader: the CPU tkd's rg --json reader spends on a saved
 * rg output, without rg, proc or the wire.
 *
 *   bench-rg-reader FILE [--rounds R] [--limit N]
 *
 * FILE is what rg wrote with tkd's command line, e.g. in a corpus of
 * tools/bench/search: rg --json --no-config --hidden --glob '!.git' -F -e
 * quokka -- . > FILE. Its records (split at '\n' once, before timing) are
 * fed one by one to a new parser, as proc's record mode passes them: with
 * the fast path for rg's layout (what tkd runs) and with the general
 * reader alone (search__test_set_rg_fast), rounds alternating. Prints the
 * best of R rounds (20 by default) of each, and of freeing the parser
 * (the matches it kept). --limit: the request's limit (SEARCH_MAX_LIMIT by
 * default).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure.h"
#include "search/search.h"

typedef struct record {
    const char *data;
    size_t len;
} record;

/* The benchmark runs on one thread: exit is safe here. */
static void fail(const char *what, const char *why)
{
    fprintf(stderr, "bench-rg-reader: %s: %s\n", what, why);
    exit(1); // NOLINT(concurrency-mt-unsafe): one thread; it ends here
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail(path, "cannot open");
    size_t cap = 0, n = 0;
    char *buf = NULL;
    do {
        cap = cap != 0 ? cap * 2 : (size_t)1 << 20;
        char *nb = realloc(buf, cap);
        if (nb == NULL)
            fail(path, "out of memory");
        buf = nb;
        n += fread(buf + n, 1, cap - n, f);
    } while (n == cap);
    bool bad = ferror(f) != 0;
    bad = fclose(f) != 0 || bad;
    if (bad)
        fail(path, "read error");
    *len = n;
    return buf;
}

/* The records of buf, split at '\n' (the delimiter not included). */
static record *split(const char *buf, size_t len, size_t *n)
{
    size_t cap = 0;
    record *r = NULL;
    *n = 0;
    for (const char *p = buf, *end = buf + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl != NULL ? nl : end;
        if (*n == cap) {
            cap = cap != 0 ? cap * 2 : 1024;
            record *nr = realloc(r, cap * sizeof *r);
            if (nr == NULL)
                fail("records", "out of memory");
            r = nr;
        }
        r[(*n)++] = (record){ p, (size_t)(stop - p) };
        p = stop + 1;
    }
    return r;
}

typedef struct best {
    long long feed, free; /* ns; -1: none yet */
} best;

static void keep_best(long long *b, long long t)
{
    if (*b < 0 || t < *b)
        *b = t;
}

/* One round: recs into a new parser, fast path on or off. */
static void round_of(const record *recs, size_t n, const search_limits *lim,
                     bool fast, best *b, search_stats *st)
{
    search_query q = { .text = "x", .len = 1 }; /* rg's parser ignores it */
    search_parser *p;
    if (search_parser_new(&p, SEARCH_TOOL_RG, &q, lim) != 0)
        fail("parser", "out of memory");
    search__test_set_rg_fast(p, fast);
    long long t0 = bench_now_ns();
    for (size_t i = 0; i < n; i++)
        if (!search_parser_record(p, recs[i].data, recs[i].len, false))
            break;
    long long t1 = bench_now_ns();
    search_parser_stats(p, st);
    search_parser_free(p);
    keep_best(&b->feed, t1 - t0);
    keep_best(&b->free, bench_now_ns() - t1);
}

static void report(const char *what, const best *b, size_t bytes, size_t n)
{
    printf("%-16s %8.2f ms %6.0f MB/s %6.0f ns/record   free %.2f ms\n", what,
           (double)b->feed / 1e6, (double)bytes / ((double)b->feed / 1e3),
           (double)b->feed / (double)n, (double)b->free / 1e6);
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: bench-rg-reader FILE [--rounds R] [--limit N]";
    const char *file = NULL;
    int rounds = 20;
    search_limits lim = { .max_matches = SEARCH_MAX_LIMIT };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            lim.max_matches = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && file == NULL)
            file = argv[i];
        else
            fail(argv[i], usage);
    }
    if (file == NULL || rounds < 1)
        fail("arguments", usage);
    size_t len, n;
    char *buf = slurp(file, &len);
    record *recs = split(buf, len, &n);
    best fast = { -1, -1 }, general = { -1, -1 };
    search_stats st, st_general;
    for (int r = 0; r < rounds; r++) {
        round_of(recs, n, &lim, true, &fast, &st);
        round_of(recs, n, &lim, false, &general, &st_general);
    }
    if (memcmp(&st, &st_general, sizeof st) != 0)
        fail(file, "the two readers disagree (test_search_parsers should)");
    printf("%s: %zu bytes, %zu records, %u matches, %u skipped; best of %d\n",
           file, len, n, st.matched_lines, st.skipped_records, rounds);
    report("fast path (tkd)", &fast, len, n);
    report("general reader", &general, len, n);
    printf("fast path: %.1fx\n", (double)general.feed / (double)fast.feed);
    free(recs);
    free(buf);
    return 0;
}
