/* SPDX-License-Identifier: MIT */
/* What the tools' parsers share, beneath them: keeping a match within the
 * limit and the byte budget, locating the query within a line the tool
 * reported (grep and git grep give no offsets of their own), and the
 * buffers and base64 they are made with. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

char search__fold_ascii(char c)
{
    if (c >= 'A' && c <= 'Z')
        return (char)(c | 0x20);
    return c;
}

/* ---- spans -------------------------------------------------------------- */

int search__span_push(search_parser *p, uint32_t start, uint32_t end)
{
    search_span *spans =
        tkc_grow(p->spans, &p->spans_cap, p->n_spans + 1, sizeof *spans, 16);
    if (spans == NULL)
        return -ENOMEM;
    p->spans = spans;
    p->spans[p->n_spans++] = (search_span){ start, end };
    return 0;
}

/* The first occurrence of q in hay[at, len), or NULL. memmem is given
 * windows that start small and double while nothing is found, so each call
 * costs about the distance to the next hit: glibc's memmem is linear in
 * what it is given, but the sanitizers' interceptor checks the whole range
 * it is given, and a line of half a million hits was quadratic under them
 * (minutes for one 1 MiB line under ThreadSanitizer). */
static const char *find_next(const char *hay, size_t len, size_t at,
                             const char *q, size_t qlen)
{
    size_t win = qlen < 64 ? 256 : 4 * qlen;
    while (at + qlen <= len) {
        size_t n = len - at < win ? len - at : win;
        const char *hit = memmem(hay + at, n, q, qlen);
        if (hit != NULL || n == len - at)
            return hit;
        at += n - (qlen - 1); /* n >= 4 * qlen: always forward */
        if (win < SIZE_MAX / 2)
            win *= 2;
    }
    return NULL;
}

/* Every occurrence of the query in text, left to right, not overlapping:
 * where the tool found its match. (Under ignore_case the line is folded
 * as the query was: ASCII, as grep and git grep fold in the C locale.) */
static int locate(search_parser *p, const char *text, size_t len)
{
    const char *hay = text;
    if (p->ignore_case) {
        if (tkc_buf_reserve(&p->fold, len) != 0)
            return -ENOMEM;
        for (size_t i = 0; i < len; i++)
            p->fold.data[i] = search__fold_ascii(text[i]);
        hay = p->fold.data;
    }
    size_t at = 0;
    while (at + p->qlen <= len) {
        const char *hit = find_next(hay, len, at, p->query, p->qlen);
        if (hit == NULL)
            break;
        size_t start = (size_t)(hit - hay);
        if (search__span_push(p, (uint32_t)start,
                              (uint32_t)(start + p->qlen)) != 0)
            return -ENOMEM;
        at = start + p->qlen;
    }
    return 0;
}

/* The tool's spans that lie within the kept text. */
static void clip_spans(search_parser *p, size_t keep)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n_spans; i++)
        if (p->spans[i].start <= p->spans[i].end && p->spans[i].end <= keep)
            p->spans[k++] = p->spans[i];
    p->n_spans = k;
}

/* ---- keeping a match ---------------------------------------------------- */

/* One block: the spans, the path (unless the last match's, in the same
 * file, is shared), the text; carved from the parser's chunks (chunks.c),
 * all freed together. */
static int store(search_parser *p, const search_found *f, size_t keep,
                 bool new_file)
{
    size_t span_bytes = p->n_spans * sizeof(search_span);
    size_t path_bytes = new_file ? f->path_len : 0;
    search_match *matches =
        tkc_grow(p->matches, &p->cap, p->n + 1, sizeof *matches, 16);
    if (matches == NULL)
        return -ENOMEM;
    p->matches = matches;
    char *block =
        search__store_alloc(&p->store, span_bytes + path_bytes + keep + 1);
    if (block == NULL)
        return -ENOMEM;
    search_span *spans = (search_span *)(void *)block;
    if (span_bytes > 0)
        memcpy(spans, p->spans, span_bytes);
    const char *path = p->n > 0 ? p->matches[p->n - 1].path : NULL;
    if (new_file) {
        memcpy(block + span_bytes, f->path, f->path_len);
        path = block + span_bytes;
    }
    char *text = block + span_bytes + path_bytes;
    if (keep > 0)
        memcpy(text, f->text, keep);
    text[keep] = '\0';
    uint32_t column = f->column;
    if (column == 0 && p->n_spans > 0)
        column = p->spans[0].start + 1;
    /* An occurrence beyond the text kept has no column (search.proto):
     * git grep's --column and rg's submatches know it, grep does not, and
     * the answer is one whichever tool ran. */
    if (column > keep)
        column = 0;
    p->matches[p->n++] = (search_match){
        .path = path,
        .path_len = f->path_len,
        .line = f->line,
        .column = column,
        .text = text,
        .text_len = keep,
        .truncated = f->cut || f->text_len > p->lim.line_max,
        .spans = spans,
        .n_spans = p->n_spans,
    };
    return 0;
}

static bool same_file_as_last(const search_parser *p, const search_found *f)
{
    if (p->n == 0)
        return false;
    const search_match *m = &p->matches[p->n - 1];
    return m->path_len == f->path_len &&
           memcmp(m->path, f->path, f->path_len) == 0;
}

bool search__add(search_parser *p, const search_found *found)
{
    search_found local = *found;
    const search_found *f = &local;
    if (local.path_len > 2 && local.path[0] == '.' && local.path[1] == '/') {
        local.path += 2; /* rg and grep name what they found under "." */
        local.path_len -= 2;
    }
    if (p->n >= p->lim.max_matches) {
        p->partial = true;
        return false;
    }
    size_t keep = f->text_len < p->lim.line_max ? f->text_len : p->lim.line_max;
    if (f->has_spans)
        clip_spans(p, keep);
    else if (locate(p, f->text, keep) != 0)
        p->n_spans = 0; /* out of memory: the match without offsets */
    size_t cost = f->path_len + keep + p->n_spans * sizeof(search_span);
    if (p->n > 0 && p->bytes + cost > p->lim.max_bytes) {
        p->partial = true;
        return false;
    }
    bool new_file = !same_file_as_last(p, f);
    bool cut = f->cut || f->text_len > p->lim.line_max;
    if (store(p, f, keep, new_file) != 0) {
        p->stats.skipped_records++;
    } else {
        p->bytes += cost;
        p->stats.files_with_matches += new_file ? 1 : 0;
        p->stats.truncated_lines += cut ? 1 : 0;
    }
    p->n_spans = 0;
    return true;
}

/* ---- base64 ------------------------------------------------------------- */

int search__base64_decode(tkc_buf *out, const char *in, size_t len)
{
    out->len = 0;
    if (len % 4 != 0 || tkc_buf_reserve(out, len / 4 * 3 + 1) != 0)
        return -EINVAL;
    size_t n = tkc_base64_decode((uint8_t *)out->data, in, len, 0);
    if (n == SIZE_MAX)
        return -EINVAL;
    out->len = n;
    return 0;
}
