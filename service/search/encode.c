/* SPDX-License-Identifier: MIT */
/* SearchReply.matches written in protobuf's wire format from the parser's
 * storage. Building 34 000 SearchMatch messages (each with its path and
 * text copied into call memory), then packing them with protobuf-c's
 * descriptor-driven packer, took longer than the tool's run had left
 * over; this writes the same bytes in one pass.
 *
 * proto3, as protoc-c 1.4.1 packs it: fields in number order, a field
 * equal to its default (0, false, empty) not written, a repeated message
 * field as one length-delimited record per element. */
#include <stdint.h>
#include <string.h>

#include "search_int.h"

/* Keys: field number << 3 | wire type (0 varint, 2 length-delimited). */
enum {
    REPLY_MATCHES = 1 << 3 | 2,
    MATCH_PATH = 1 << 3 | 2,
    MATCH_LINE = 2 << 3 | 0,
    MATCH_COLUMN = 3 << 3 | 0,
    MATCH_TEXT = 4 << 3 | 2,
    MATCH_SUBMATCHES = 5 << 3 | 2,
    MATCH_TRUNCATED = 6 << 3 | 0,
    SUB_START = 1 << 3 | 0,
    SUB_END = 2 << 3 | 0,
};

/* A varint field, when not 0: its size. */
static size_t varint_field_len(uint64_t v)
{
    return v != 0 ? 1 + tkc_varint_len(v) : 0;
}

static size_t bytes_field_len(size_t len)
{
    return len != 0 ? 1 + tkc_varint_len(len) + len : 0;
}

static size_t submatch_len(const search_span *s)
{
    return varint_field_len(s->start) + varint_field_len(s->end);
}

/* A SearchMatch's body (without its key and length). */
static size_t match_len(const search_match *m)
{
    size_t n = bytes_field_len(m->path_len) + varint_field_len(m->line) +
               varint_field_len(m->column) + bytes_field_len(m->text_len) +
               (m->truncated ? 2 : 0);
    for (size_t k = 0; k < m->n_spans; k++) {
        size_t s = submatch_len(&m->spans[k]);
        n += 1 + tkc_varint_len(s) + s;
    }
    return n;
}

static uint8_t *put_varint_field(uint8_t *p, uint8_t key, uint64_t v)
{
    if (v == 0)
        return p;
    *p++ = key;
    return tkc_put_varint(p, v);
}

static uint8_t *put_bytes_field(uint8_t *p, uint8_t key, const char *data,
                                size_t len)
{
    if (len == 0)
        return p;
    *p++ = key;
    p = tkc_put_varint(p, len);
    memcpy(p, data, len);
    return p + len;
}

size_t search_parser_encoded_size(const search_parser *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        size_t m = match_len(&p->matches[i]);
        n += 1 + tkc_varint_len(m) + m;
    }
    return n;
}

void search_parser_encode(const search_parser *p, uint8_t *out)
{
    for (size_t i = 0; i < p->n; i++) {
        const search_match *m = &p->matches[i];
        *out++ = REPLY_MATCHES;
        out = tkc_put_varint(out, match_len(m));
        out = put_bytes_field(out, MATCH_PATH, m->path, m->path_len);
        out = put_varint_field(out, MATCH_LINE, m->line);
        out = put_varint_field(out, MATCH_COLUMN, m->column);
        out = put_bytes_field(out, MATCH_TEXT, m->text, m->text_len);
        for (size_t k = 0; k < m->n_spans; k++) {
            *out++ = MATCH_SUBMATCHES;
            out = tkc_put_varint(out, submatch_len(&m->spans[k]));
            out = put_varint_field(out, SUB_START, m->spans[k].start);
            out = put_varint_field(out, SUB_END, m->spans[k].end);
        }
        if (m->truncated) {
            *out++ = MATCH_TRUNCATED;
            *out++ = 1;
        }
    }
}
