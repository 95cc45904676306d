/* SPDX-License-Identifier: MIT */
/* Inside search/: the JSON reader of rg --json records (parse_rg.c, its
 * one includer). A cursor over one record; strings decoded fully (every
 * escape, surrogate pairs to UTF-8, \u0000 to a NUL byte); objects and
 * arrays walked member by member through a callback, in any order, bounded
 * in depth; anything that is not JSON refused. Static functions in a
 * header: the fast path of parse_rg.c reads every match record through
 * them, and in parse_rg.c's own unit they cost what they did when they
 * were written there (no call across units, which the build does not
 * optimise). */
#ifndef TK_SERVICE_SEARCH_RGJSON_INT_H
#define TK_SERVICE_SEARCH_RGJSON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "search_int.h"

#define MAX_DEPTH 32

typedef struct jcur {
    const char *p, *end;
    int depth;
    tkc_buf *key; /* the member name being looked at */
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

/* Four hex digits at the cursor, and past them. */
static bool hex4(jcur *c, uint32_t *out)
{
    if (!tkc_hex4(c->p, (size_t)(c->end - c->p), out))
        return false;
    c->p += 4;
    return true;
}

static bool put_utf8(tkc_buf *b, uint32_t cp)
{
    char u[4];
    return tkc_buf_append(b, u, tkc_utf8_put(u, cp)) == 0;
}

/* \uXXXX after the backslash and the u: a pair of surrogates is one code
 * point; a lone surrogate is no character. */
static bool unicode(jcur *c, tkc_buf *out)
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
static bool escape(jcur *c, tkc_buf *out)
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
    return out == NULL || tkc_buf_append(out, &to[k - from], 1) == 0;
}

/* special() beyond its first 128 bytes. */
static const char *special_far(const char *p, const char *end)
{
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (q == NULL)
        q = end;
    const char *b = memchr(p, '\\', (size_t)(q - p));
    return b != NULL ? b : q;
}

/* The first quote or backslash in [p, end), or end. The first 128 bytes
 * 8 at a time (a byte is one of them when it xors to zero with it; the
 * lowest flagged byte is exact), inlined: most strings rg writes end
 * there, and a memchr for each is two calls a string. Beyond them,
 * memchr is faster. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "special() takes the lowest address's byte as the lowest");
__attribute__((always_inline)) static inline const char *
special(const char *p, const char *end)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    for (int i = 0; i < 16 && end - p >= 8; i++, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        uint64_t hit = (((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
        if (hit != 0)
            return p + (__builtin_ctzll(hit) >> 3);
    }
    if (end - p >= 8)
        return special_far(p, end);
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* The rest of a string, its opening quote taken, up to and past its
 * closing one. Its contents go to *s, *len: borrowed from the record when
 * it holds no escape, else decoded into scratch (NULL: only passed over,
 * its escapes checked all the same). str() is this with a copy. */
static bool str_rest(jcur *c, tkc_buf *scratch, const char **s, size_t *len)
{
    const char *start = c->p;
    const char *x = special(start, c->end);
    if (x < c->end && *x == '"') {
        c->p = x + 1;
        *s = start;
        *len = (size_t)(x - start);
        return true;
    }
    if (scratch != NULL)
        scratch->len = 0;
    for (;;) {
        if (x == c->end)
            return false;
        if (scratch != NULL && x > c->p &&
            tkc_buf_append(scratch, c->p, (size_t)(x - c->p)) != 0)
            return false;
        c->p = x;
        if (*x == '"')
            break;
        if (!escape(c, scratch))
            return false;
        x = special(c->p, c->end);
    }
    c->p++;
    *s = scratch != NULL ? scratch->data : NULL;
    *len = scratch != NULL ? scratch->len : 0;
    return true;
}

/* A string, decoded into out (NULL: only passed over). */
static bool str(jcur *c, tkc_buf *out)
{
    if (!lit(c, '"'))
        return false;
    const char *s;
    size_t len;
    if (!str_rest(c, out, &s, &len))
        return false;
    if (out != NULL && s != out->data) { /* borrowed from the record */
        out->len = 0;
        return tkc_buf_append(out, s, len) == 0;
    }
    return true;
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

#endif /* TK_SERVICE_SEARCH_RGJSON_INT_H */
