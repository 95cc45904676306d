/* SPDX-License-Identifier: MIT */
/* rg --json: one JSON object per line, {"type": T, "data": {...}} with T
 * begin, match, context, end or summary. A path or a line is {"text": s}
 * when it is valid UTF-8, else {"bytes": base64}. A match is one line
 * ("lines", its terminator included) with its "line_number" and the byte
 * offsets of every occurrence ("submatches": [{"start", "end"}]). The
 * rest (begin, end, context, and the summary, whose stats count only the
 * files with matches) is not needed here and passed over.
 *
 * The JSON is read by a small reader of its own (rgjson_int.h) rather than a
 * library that builds every object of a record: json-c took 5 ms for the 188 KB
 * rg writes for 330 matches in 200 MB, 5% of rg's whole scan, on the same
 * two cores rg searches with. The reader decodes strings fully (every
 * escape, surrogate pairs to UTF-8, \u0000 to a NUL byte), takes members
 * in any order, skips what it does not need, and refuses anything that is
 * not JSON, bounded in depth. A match record in rg's own layout is read
 * by a fast path first, with the same result ("a match record in rg's own
 * layout", below). */
#include <string.h>

#include "rgjson_int.h"
#include "search_int.h"

/* ---- a match record ----------------------------------------------------- */

typedef struct rg_match {
    search_parser *p;
    tkc_buf *into; /* where the {"text"} or {"bytes"} value goes */
    bool got;
    int64_t line, start, end;
    bool got_path, got_lines;
} rg_match;

static bool data_member(void *ctx, jcur *c)
{
    rg_match *m = ctx;
    if (key_is(c, "text")) {
        m->got = str(c, m->into);
        return m->got;
    }
    if (key_is(c, "bytes")) {
        m->got =
            str(c, &m->p->raw) &&
            search__base64_decode(m->into, m->p->raw.data, m->p->raw.len) == 0;
        return m->got;
    }
    return value_skip(c);
}

/* {"text": s} or {"bytes": b64} into into. */
static bool data_value(rg_match *m, jcur *c, tkc_buf *into)
{
    m->into = into;
    m->got = false;
    return object(c, data_member, m) && m->got;
}

static bool submatch_member(void *ctx, jcur *c)
{
    rg_match *m = ctx;
    if (key_is(c, "start"))
        return integer(c, &m->start);
    if (key_is(c, "end"))
        return integer(c, &m->end);
    return value_skip(c);
}

/* A submatch's offsets into p->spans, when they are offsets (a missing
 * one is -1). false: out of memory. */
static bool span_keep(search_parser *p, int64_t start, int64_t end)
{
    return !(start >= 0 && end >= start && end <= UINT32_MAX &&
             search__span_push(p, (uint32_t)start, (uint32_t)end) != 0);
}

static bool submatch(void *ctx, jcur *c)
{
    rg_match *m = ctx;
    m->start = m->end = -1;
    return object(c, submatch_member, m) && span_keep(m->p, m->start, m->end);
}

static bool match_member(void *ctx, jcur *c)
{
    rg_match *m = ctx;
    if (key_is(c, "path")) {
        m->got_path = data_value(m, c, &m->p->path);
        return m->got_path;
    }
    if (key_is(c, "lines")) {
        m->got_lines = data_value(m, c, &m->p->text);
        return m->got_lines;
    }
    if (key_is(c, "line_number"))
        return integer(c, &m->line);
    if (key_is(c, "submatches"))
        return array(c, submatch, m);
    return value_skip(c);
}

/* A match as rg wrote it (its "lines" with the terminator), kept.
 * f->has_spans: rg's (p->spans) are all there; else they are located in
 * the text. f->cut: the text is whole, but rg's submatches may not all
 * have been read. */
static bool rg_keep(search_parser *p, search_found *f)
{
    if (f->text_len > 0 && f->text[f->text_len - 1] == '\n')
        f->text_len--;
    if (!f->has_spans) {
        p->n_spans = 0;
        return search__add(p, f);
    }
    size_t k = 0; /* rg's offsets, those within the line */
    for (size_t i = 0; i < p->n_spans; i++)
        if (p->spans[i].end <= f->text_len)
            p->spans[k++] = p->spans[i];
    p->n_spans = k;
    if (k > 0) /* rg's, even when the kept text ends before it */
        f->column = p->spans[0].start + 1;
    return search__add(p, f);
}

/* The match read into p->path, p->text and p->spans, kept (rg_keep). */
static bool rg_add(search_parser *p, const rg_match *m, bool spans, bool cut)
{
    search_found f = { .path = p->path.data,
                       .path_len = p->path.len,
                       .line = m->line > 0 ? (uint64_t)m->line : 0,
                       .text = p->text.data,
                       .text_len = p->text.len,
                       .cut = cut,
                       .has_spans = spans };
    return rg_keep(p, &f);
}

/* The data of a match record (at c) into a match. */
static bool rg_match_data(search_parser *p, jcur *c)
{
    rg_match m = { .p = p, .line = -1 };
    p->n_spans = 0;
    if (!object(c, match_member, &m) || !m.got_path || !m.got_lines) {
        p->stats.skipped_records++;
        return true;
    }
    return rg_add(p, &m, true, false);
}

/* The start of a JSON string's contents cut at end (no closing quote),
 * decoded into out up to the last whole character (an escape cut in two
 * is left out). */
static void str_prefix(const char *p, const char *end, tkc_buf *out)
{
    jcur c = { p, end, 0, NULL };
    out->len = 0;
    while (c.p < c.end) {
        const char *x = special(c.p, c.end);
        if (x > c.p && tkc_buf_append(out, c.p, (size_t)(x - c.p)) != 0)
            return;
        c.p = x;
        if (c.p == c.end || *c.p == '"')
            return;
        size_t before = out->len;
        if (!escape(&c, out)) {
            out->len = before; /* the escape was cut */
            return;
        }
    }
}

/* A match record cut inside its line: a line longer than the record (a
 * file of one line of tens of MiB). The record then resumed at the end of
 * the line's value (RG_RESUME, tools.c: proc keeps what follows), so it
 * is the record's start, up to the cut inside "lines", and its end from
 * "line_number" on. The match is the line's start (search__add keeps
 * SEARCH_LINE_MAX of it), its number, and the occurrences located in the
 * start, as for grep: what git grep and grep answer for the same line. A
 * record that did not resume is lost (skipped, the search partial). */
static const char resume[] = "\"},\"line_number\":"; /* RG_RESUME */

/* The line's number where a cut record resumed (RG_RESUME), or -1. */
static int64_t resumed_line(search_parser *p, const char *data, size_t len)
{
    const char *at = memmem(data, len, resume, sizeof resume - 1);
    int64_t line = -1;
    if (at == NULL)
        return -1;
    jcur tail = { at + sizeof resume - 1, data + len, 0, &p->key };
    /* A number that ends the record may be the start of a longer one. */
    return integer(&tail, &line) && tail.p < tail.end ? line : -1;
}

static bool rg_cut_line(search_parser *p, const char *data, size_t len)
{
    const char *at = memmem(data, len, resume, sizeof resume - 1);
    jcur c = { data, at != NULL ? at : data, 0, &p->key };
    rg_match m = { .p = p, .line = -1 };
    p->n_spans = 0;
    /* rg's order: {"type":"match","data":{"path":{..},"lines":{"text":" */
    bool ok =
        at != NULL && lit(&c, '{') && str(&c, c.key) && key_is(&c, "type") &&
        lit(&c, ':') && str(&c, &p->type) && lit(&c, ',') && str(&c, c.key) &&
        key_is(&c, "data") && lit(&c, ':') && lit(&c, '{') && str(&c, c.key) &&
        key_is(&c, "path") && lit(&c, ':') && data_value(&m, &c, &p->path) &&
        lit(&c, ',') && str(&c, c.key) && key_is(&c, "lines") && lit(&c, ':') &&
        lit(&c, '{') && str(&c, c.key);
    bool b64 = ok && key_is(&c, "bytes");
    ok = ok && (b64 || key_is(&c, "text")) && lit(&c, ':') && lit(&c, '"');
    if (ok && b64) {
        size_t whole = (size_t)(c.end - c.p) / 4 * 4;
        ok = search__base64_decode(&p->text, c.p, whole) == 0;
    } else if (ok) {
        str_prefix(c.p, c.end, &p->text);
    }
    if (ok)
        m.line = resumed_line(p, data, len);
    if (!ok || m.line <= 0) {
        p->stats.skipped_records++;
        p->lost = true;
        return true;
    }
    return rg_add(p, &m, false, true);
}

/* A match record cut at the command's record_max: a line of MiBs with
 * very many occurrences, since rg writes each one again as a submatch. rg
 * writes the path, the line and its number before the submatches, so a
 * prefix that holds those three whole is the match with only its
 * submatch list cut. The occurrences are then located in the text (as
 * for grep: the same bytes rg -F matches); under ignore_case (rg folds
 * Unicode, locate only ASCII) they are rg's that were read, if any, and
 * the match is flagged as cut. A prefix that does not reach the line's number
 * is a match lost: counted as skipped and the search partial, never silently
 * dropped. */
static bool rg_cut_match(search_parser *p, const char *data, size_t len)
{
    jcur c = { data, data + len, 0, &p->key };
    rg_match m = { .p = p, .line = -1 };
    p->n_spans = 0;
    bool ok = lit(&c, '{') && str(&c, c.key) && key_is(&c, "type") &&
              lit(&c, ':') && str(&c, &p->type) && p->type.len == 5 &&
              memcmp(p->type.data, "match", 5) == 0 && lit(&c, ',') &&
              str(&c, c.key) && key_is(&c, "data") && lit(&c, ':') &&
              lit(&c, '{');
    bool line_whole = false;
    while (ok && str(&c, c.key) && lit(&c, ':')) {
        bool is_line = key_is(&c, "line_number");
        ok = match_member(&m, &c);
        ws(&c);
        /* A number that ends the prefix may be the start of a longer one. */
        line_whole = line_whole || (ok && is_line && c.p < c.end);
        ok = ok && lit(&c, ',');
    }
    if (m.got_path && !m.got_lines)
        return rg_cut_line(p, data, len);
    if (m.got_path && !line_whole) { /* cut within "line_number" itself */
        m.line = resumed_line(p, data, len);
        line_whole = m.line > 0;
    }
    if (!m.got_path || !m.got_lines || !line_whole || m.line <= 0) {
        p->stats.skipped_records++;
        p->lost = true;
        return true;
    }
    bool rg_spans = p->ignore_case && p->n_spans > 0;
    return rg_add(p, &m, rg_spans, p->ignore_case);
}

/* ---- a match record in rg's own layout ------------------------------------
 * rg 13 writes every match record in one layout, on one line, no spaces:
 *   {"type":"match","data":{"path":{"text":P},"lines":{"text":L},
 *   "line_number":N,"absolute_offset":N,"submatches":[{"match":{"text":S},
 *   "start":N,"end":N},...]}}
 * The general reader above copies each member's name and each string
 * into a buffer and walks the record member by member through callbacks:
 * on dense hits (34,000 matches, 9 MB of JSON) some 500 MB/s, CPU taken
 * from the two cores rg searches with. This path compares the layout's
 * fixed text in place, borrows a string without escapes from the record
 * (P nearly always; L, but for its escaped terminator, too), reads
 * strings with the general reader's str_rest(), and keeps the match
 * through the same span_keep() and rg_keep(): four times as fast. It takes only
 * records in exactly that layout and, on them, gives what the general reader
 * gives; at the first other byte ({"bytes"}, another order, a space, another
 * member, null, a bad escape, ...) it gives up, and the general reader reads
 * the record from its start. tests/integration/test_search_parsers.c compares
 * the two (search__test_set_rg_fast). */

/* The fixed text s (n bytes, a literal) next, taken. Inlined so that the
 * compiler compares 8 bytes at a time with constants: memcmp was a call
 * per piece of text, a tenth of the path's time. */
__attribute__((always_inline)) static inline bool fixed(jcur *c, const char *s,
                                                        size_t n)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    const char *a = c->p;
    for (; n >= 8; n -= 8, a += 8, s += 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, s, 8);
        if (x != y)
            return false;
    }
    for (; n > 0; n--)
        if (*a++ != *s++)
            return false;
    c->p = a;
    return true;
}
#define FIXED(c, s) fixed((c), (s), sizeof(s) - 1)

/* The line ("lines"' text, its opening quote taken) into f->text, as
 * str_rest. rg escapes a line's terminator: the common line has that \n
 * as its one escape, and is borrowed without it (when the byte before it
 * is not a newline too, rg_keep would have taken only the one off). */
static bool fast_line(jcur *c, tkc_buf *scratch, search_found *f)
{
    const char *start = c->p;
    const char *x = special(start, c->end);
    if (c->end - x >= 3 && x[0] == '\\' && x[1] == 'n' && x[2] == '"' &&
        (x == start || x[-1] != '\n')) {
        c->p = x + 3;
        f->text = start;
        f->text_len = (size_t)(x - start);
        return true;
    }
    return str_rest(c, scratch, &f->text, &f->text_len);
}

/* The submatches after their "[", and the "]". */
static bool fast_submatches(search_parser *p, jcur *c)
{
    if (FIXED(c, "]"))
        return true;
    do {
        const char *text;
        size_t len;
        int64_t start, end;
        if (!FIXED(c, "{\"match\":{\"text\":\"") ||
            !str_rest(c, NULL, &text, &len) || !FIXED(c, "},\"start\":") ||
            !digits(c, &start) || !FIXED(c, ",\"end\":") || !digits(c, &end) ||
            !FIXED(c, "}") || !span_keep(p, start, end))
            return false;
    } while (FIXED(c, ","));
    return FIXED(c, "]");
}

/* A match record in rg's layout, kept (*more: search__add's answer);
 * false: not in that layout, nothing kept, for the general reader. */
static bool rg_fast_match(search_parser *p, const char *data, size_t len,
                          bool *more)
{
    jcur c = { data, data + len, 0, &p->key };
    search_found f = { .has_spans = true };
    int64_t line, offset;
    p->n_spans = 0;
    bool ok =
        FIXED(&c, "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"") &&
        str_rest(&c, &p->path, &f.path, &f.path_len) &&
        FIXED(&c, "},\"lines\":{\"text\":\"") && fast_line(&c, &p->text, &f) &&
        FIXED(&c, "},\"line_number\":") && digits(&c, &line) &&
        FIXED(&c, ",\"absolute_offset\":") && digits(&c, &offset) &&
        FIXED(&c, ",\"submatches\":[") && fast_submatches(p, &c) &&
        FIXED(&c, "}}") && c.p == c.end;
    if (!ok) {
        p->n_spans = 0;
        return false;
    }
    p->rg_fast_read++;
    f.line = line > 0 ? (uint64_t)line : 0;
    *more = rg_keep(p, &f);
    return true;
}

/* ---- a record ----------------------------------------------------------- */

typedef struct rg_record {
    search_parser *p;
    bool got_type;
    const char *data, *data_end; /* the span of the "data" value */
    /* "data" read in the one pass, the type ("match") being known before
     * it, as rg writes them: kept until the whole record proves well formed,
     * then added (read_ok: it held a path and a line). */
    bool read;
    bool read_ok;
    rg_match m;
} rg_record;

static bool is_match(const tkc_buf *type)
{
    return type->len == 5 && memcmp(type->data, "match", 5) == 0;
}

static bool record_member(void *ctx, jcur *c)
{
    rg_record *r = ctx;
    if (key_is(c, "type")) {
        r->got_type = str(c, &r->p->type);
        return r->got_type;
    }
    if (!key_is(c, "data"))
        return value_skip(c);
    ws(c);
    if (r->got_type && is_match(&r->p->type)) {
        /* Read now rather than passed over and read again. */
        r->m = (rg_match){ .p = r->p, .line = -1 };
        r->p->n_spans = 0;
        r->read = true;
        r->data = NULL;
        bool ok = object(c, match_member, &r->m);
        r->read_ok = ok && r->m.got_path && r->m.got_lines;
        return ok;
    }
    r->read = false;
    r->data = c->p; /* read once the type is known (it may come after) */
    bool ok = value_skip(c);
    r->data_end = c->p;
    return ok;
}

/* begin, end and context records, told by the start rg writes them
 * with, are passed over unread. */
static bool not_a_match(const char *data, size_t len)
{
    static const char type[] = "{\"type\":\"";
    static const char match[] = "match\"";
    size_t n = sizeof type - 1;
    return len > n + sizeof match - 1 && memcmp(data, type, n) == 0 &&
           memcmp(data + n, match, sizeof match - 1) != 0;
}

bool search__rg_record(search_parser *p, const char *data, size_t len, bool cut)
{
    if (not_a_match(data, len))
        return true;
    if (cut)
        return rg_cut_match(p, data, len);
    bool more;
    if (!p->rg_general_only && rg_fast_match(p, data, len, &more))
        return more;
    jcur c = { data, data + len, 0, &p->key };
    rg_record r = { .p = p };
    bool ok = object(&c, record_member, &r);
    ws(&c);
    if (!ok || c.p != c.end || !r.got_type || (r.data == NULL && !r.read)) {
        p->stats.skipped_records++;
        return true;
    }
    if (!is_match(&p->type))
        return true;
    if (r.read) {
        if (!r.read_ok) {
            p->stats.skipped_records++;
            return true;
        }
        return rg_add(p, &r.m, true, false);
    }
    jcur d = { r.data, r.data_end, 0, &p->key };
    return rg_match_data(p, &d);
}

void search__test_set_rg_fast(search_parser *p, bool on)
{
    p->rg_general_only = !on;
}

size_t search__test_rg_fast_read(const search_parser *p)
{
    return p->rg_fast_read;
}
