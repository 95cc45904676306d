/* SPDX-License-Identifier: MIT */
/* grep --null -n and git grep -z -n --column: one line of output per
 * matching line, split here at '\n' (proc's record mode):
 *
 *   grep      PATH \0 LINE : TEXT
 *   git grep  PATH \0 LINE \0 COLUMN \0 TEXT
 *
 * Only the path is NUL-terminated with grep, and the path is the one field
 * that may hold a '\n' (text never does: it is one line). So a record
 * without a NUL is a piece of a path whose newline split it: kept, with
 * that newline, until the record that ends the path. TEXT is everything
 * after the fields, NUL bytes included. */
#include <string.h>

#include "search_int.h"

/* Longer than any path: a run of NUL-less records past it is not a path. */
#define PENDING_MAX ((size_t)64 * 1024)

/* Digits up to sep at *at; advances past sep. */
static bool number(const char *data, size_t len, size_t *at, char sep,
                   uint64_t *out)
{
    uint64_t v = 0;
    size_t i = *at;
    size_t first = i;
    while (i < len && data[i] >= '0' && data[i] <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(data[i] - '0');
        i++;
    }
    if (i == first || i >= len || data[i] != sep)
        return false;
    *at = i + 1;
    *out = v;
    return true;
}

/* The fields after the path: line (and column), then the text. */
static bool fields(const search_parser *p, const char *data, size_t len,
                   search_found *f)
{
    size_t at = 0;
    uint64_t line, column = 0;
    bool git = p->tool == SEARCH_TOOL_GIT_GREP;
    if (!number(data, len, &at, git ? '\0' : ':', &line))
        return false;
    if (git && (!number(data, len, &at, '\0', &column) || column > UINT32_MAX))
        return false;
    f->line = line;
    f->column = (uint32_t)column;
    f->text = data + at;
    f->text_len = len - at;
    return true;
}

bool search__grep_record(search_parser *p, const char *data, size_t len,
                         bool cut)
{
    const char *nul = memchr(data, '\0', len);
    if (nul == NULL) {
        bool fits = !cut && p->pending.len + len < PENDING_MAX;
        if (!fits || tkc_buf_append(&p->pending, data, len) != 0 ||
            tkc_buf_append(&p->pending, "\n", 1) != 0) {
            p->stats.skipped_records++;
            p->pending.len = 0;
        }
        return true;
    }
    size_t head = (size_t)(nul - data);
    search_found f = { .path = data, .path_len = head, .cut = cut };
    if (p->pending.len > 0) {
        if (tkc_buf_append(&p->pending, data, head) != 0) {
            p->stats.skipped_records++;
            p->pending.len = 0;
            return true;
        }
        f.path = p->pending.data;
        f.path_len = p->pending.len;
    }
    bool more = true;
    if (!fields(p, nul + 1, len - head - 1, &f))
        p->stats.skipped_records++;
    else
        more = search__add(p, &f);
    p->pending.len = 0;
    return more;
}
