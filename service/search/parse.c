/* SPDX-License-Identifier: MIT */
/* The parser object: made for one tool and query, fed record by record
 * (the tool's own parser, parse_rg.c or parse_grep.c, reads each), and
 * asked for what it kept. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

/* ---- the parser --------------------------------------------------------- */

int search_parser_new(search_parser **out, search_tool tool,
                      const search_query *q, const search_limits *lim)
{
    *out = NULL;
    if (tool < SEARCH_TOOL_RG || tool > SEARCH_TOOL_GREP || q->len == 0)
        return -EINVAL;
    search_parser *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    p->tool = tool;
    p->lim = *lim;
    if (p->lim.max_bytes == 0)
        p->lim.max_bytes = SEARCH_REPLY_BYTES;
    if (p->lim.line_max == 0)
        p->lim.line_max = SEARCH_LINE_MAX;
    p->qlen = q->len;
    p->ignore_case = q->ignore_case;
    p->query = malloc(q->len);
    if (p->query != NULL)
        memcpy(p->query, q->text, q->len);
    for (size_t i = 0; p->query != NULL && q->ignore_case && i < q->len; i++)
        p->query[i] = search__fold_ascii(p->query[i]);
    if (p->query == NULL) {
        search_parser_free(p);
        return -ENOMEM;
    }
    *out = p;
    return 0;
}

void search_parser_free(search_parser *p)
{
    if (p == NULL)
        return;
    search__store_release(&p->store);
    free(p->matches);
    free(p->query);
    free(p->spans);
    tkc_buf_fini(&p->pending);
    tkc_buf_fini(&p->fold);
    tkc_buf_fini(&p->path);
    tkc_buf_fini(&p->text);
    tkc_buf_fini(&p->key);
    tkc_buf_fini(&p->type);
    tkc_buf_fini(&p->raw);
    free(p);
}

void search__parser_use_pool(search_parser *p, search_pool *pool)
{
    p->store.pool = pool;
}

bool search_parser_record(search_parser *p, const char *data, size_t len,
                          bool cut)
{
    if (p->partial)
        return false;
    if (p->tool == SEARCH_TOOL_RG)
        return search__rg_record(p, data, len, cut);
    return search__grep_record(p, data, len, cut);
}

bool search_parser_partial(const search_parser *p)
{
    return p->partial || p->lost;
}

size_t search_parser_count(const search_parser *p)
{
    return p->n;
}

const search_match *search_parser_match(const search_parser *p, size_t i)
{
    return i < p->n ? &p->matches[i] : NULL;
}

void search_parser_stats(const search_parser *p, search_stats *out)
{
    *out = p->stats;
    out->matched_lines = (uint32_t)p->n;
}
