/* rg --json: one JSON object per line, {"type": T, "data": {...}} with T
 * begin, match, context, end or summary. A path or a line is {"text": s}
 * when it is valid UTF-8, else {"bytes": base64}. A match is one line
 * ("lines", its terminator included) with its "line_number" and the byte
 * offsets of every occurrence ("submatches": [{"start", "end"}]). The
 * rest (begin, end, context, and the summary, whose stats count only the
 * files with matches) is not needed here and passed over.
 *
 * The JSON is read by a small reader of its own rather than a library
 * that builds every object of a record: json-c took 5 ms for the 188 KB
 * rg writes for 330 matches in 200 MB, 5% of rg's whole scan, on the same
 * two cores rg searches with. The reader decodes strings fully (every
 * escape, surrogate pairs to UTF-8, \u0000 to a NUL byte), takes members
 * in any order, skips what it does not need, and refuses anything that is
 * not JSON, bounded in depth. */
#include <string.h>

#include "search_int.h"

#define MAX_DEPTH 32

typedef struct jcur {
    const char *p, *end;
    int depth;
    search_buf *key; /* the member name being looked at */
} jcur;

static void ws(jcur *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool lit(jcur *c, char ch)
{
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* ---- strings ------------------------------------------------------------ */

static bool hex4(jcur *c, uint32_t *out)
{
    if (c->end - c->p < 4)
        return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char h = *c->p++;
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return true;
}

static bool put_utf8(search_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return search__buf_append(b, u, n) == 0;
}

/* \uXXXX after the backslash and the u: a pair of surrogates is one code
 * point; a lone surrogate is no character. */
static bool unicode(jcur *c, search_buf *out)
{
    uint32_t cp, lo;
    if (!hex4(c, &cp) || (cp >= 0xDC00 && cp <= 0xDFFF))
        return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u')
            return false;
        c->p += 2;
        if (!hex4(c, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return out == NULL || put_utf8(out, cp);
}

/* At a backslash. */
static bool escape(jcur *c, search_buf *out)
{
    static const char from[] = "\"\\/bfnrt";
    static const char to[] = "\"\\/\b\f\n\r\t";
    if (c->end - c->p < 2)
        return false;
    char e = c->p[1];
    c->p += 2;
    if (e == 'u')
        return unicode(c, out);
    const char *k = e != '\0' ? strchr(from, e) : NULL;
    if (k == NULL)
        return false;
    return out == NULL || search__buf_append(out, &to[k - from], 1) == 0;
}

/* A string, decoded into out (NULL: only passed over). */
static bool str(jcur *c, search_buf *out)
{
    if (!lit(c, '"'))
        return false;
    if (out != NULL)
        out->len = 0;
    while (c->p < c->end) {
        const char *q = c->p;
        while (q < c->end && *q != '"' && *q != '\\')
            q++;
        if (out != NULL && q > c->p &&
            search__buf_append(out, c->p, (size_t)(q - c->p)) != 0)
            return false;
        c->p = q;
        if (q == c->end)
            return false;
        if (*q == '"') {
            c->p++;
            return true;
        }
        if (!escape(c, out))
            return false;
    }
    return false;
}

static bool key_is(const jcur *c, const char *name)
{
    size_t n = strlen(name);
    return c->key->len == n && memcmp(c->key->data, name, n) == 0;
}

/* ---- structure ---------------------------------------------------------- */

/* Called at each member's value, with c->key its name; must consume it. */
typedef bool (*member_fn)(void *ctx, jcur *c);

static bool value_skip(jcur *c);

static bool object(jcur *c, member_fn fn, void *ctx)
{
    if (!lit(c, '{') || c->depth >= MAX_DEPTH)
        return false;
    c->depth++;
    bool ok = true;
    if (!lit(c, '}')) {
        do
            ok = str(c, c->key) && lit(c, ':') && fn(ctx, c);
        while (ok && lit(c, ','));
        ok = ok && lit(c, '}');
    }
    c->depth--;
    return ok;
}

static bool array(jcur *c, member_fn fn, void *ctx)
{
    if (!lit(c, '[') || c->depth >= MAX_DEPTH)
        return false;
    c->depth++;
    bool ok = true;
    if (!lit(c, ']')) {
        do
            ok = fn(ctx, c);
        while (ok && lit(c, ','));
        ok = ok && lit(c, ']');
    }
    c->depth--;
    return ok;
}

static bool skip_member(void *ctx, jcur *c)
{
    (void)ctx;
    return value_skip(c);
}

/* A number or true, false, null: the characters they are made of. */
static bool scalar_skip(jcur *c)
{
    const char *start = c->p;
    while (c->p < c->end &&
           (strchr("+-.eE", *c->p) != NULL || (*c->p >= '0' && *c->p <= '9') ||
            (*c->p >= 'a' && *c->p <= 'z')))
        c->p++;
    return c->p > start;
}

static bool value_skip(jcur *c)
{
    ws(c);
    if (c->p == c->end)
        return false;
    if (*c->p == '"')
        return str(c, NULL);
    if (*c->p == '{')
        return object(c, skip_member, NULL);
    if (*c->p == '[')
        return array(c, skip_member, NULL);
    return scalar_skip(c);
}

/* The digits of a whole number, at least one. */
static bool digits(jcur *c, int64_t *out)
{
    int64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*c->p++ - '0');
    }
    *out = v;
    return c->p > start;
}

/* A whole number, or null (-1). */
static bool integer(jcur *c, int64_t *out)
{
    ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        *out = -1;
        return true;
    }
    return digits(c, out);
}

/* ---- a match record ----------------------------------------------------- */

typedef struct rg_match {
    search_parser *p;
    search_buf *into; /* where the {"text"} or {"bytes"} value goes */
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
static bool data_value(rg_match *m, jcur *c, search_buf *into)
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
    if (!m.got_path || !m.got_lines || !line_whole || m.line <= 0) {
        p->stats.skipped_records++;
        p->lost = true;
        return true;
    }
    bool rg_spans = p->ignore_case && p->n_spans > 0;
    return rg_add(p, &m, rg_spans, p->ignore_case);
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

static bool is_match(const search_buf *type)
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
