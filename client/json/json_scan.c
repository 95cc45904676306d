/* SPDX-License-Identifier: MIT */
/* The JSON codec's first two passes of decoding: the strict RFC 8259
 * scan of the text (which records every number's literal) and json-c's
 * tree with those literals hung on its numbers; with the errors and the
 * path (".a.b[2]") every pass reports.
 *
 * Owns: what text is JSON at all (depth, escapes, duplicate keys, number
 * syntax), and a decoding's error message.
 * May call: json-c (parsing only), json_text.c, common/ (UTF-8), libc.
 * Must never: look at a descriptor (json_decode.c maps the tree onto a
 * message). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "json_int.h"

int json__dec_fail(dec *d, const char *fmt, ...)
{
    if (d->failed || d->err == NULL || d->errlen == 0) {
        d->failed = true;
        return TK_ERR_ARG;
    }
    d->failed = true;
    int n = d->plen > 0 ? snprintf(d->err, d->errlen, "%s: ", d->path) : 0;
    if (n < 0 || (size_t)n >= d->errlen)
        return TK_ERR_ARG;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return TK_ERR_ARG;
}

int json__dec_nomem(dec *d)
{
    json__dec_fail(d, "out of memory");
    return TK_ERR_NOMEM;
}

/* User text for a message: quoted, escaped, cut at QUOTE_MAX bytes. */
const char *json__quoted(char *buf, size_t cap, const char *s, size_t n)
{
    jbuf b = { 0 };
    bool cut = n > QUOTE_MAX;
    json__jb_quote(&b, s, cut ? QUOTE_MAX : n);
    snprintf(buf, cap, "%s%s", b.buf.data != NULL ? b.buf.data : "\"\"",
             cut ? "..." : "");
    free(b.buf.data);
    return buf;
}

size_t json__path_push(dec *d, const char *fmt, ...)
{
    size_t saved = d->plen;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->plen, sizeof d->path - d->plen, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->plen += (size_t)n < sizeof d->path - d->plen
                       ? (size_t)n
                       : sizeof d->path - d->plen - 1;
    return saved;
}

/* "name" or ".name": a key as the user wrote it, control bytes shown as ?. */
size_t json__path_push_key(dec *d, const char *key, size_t n)
{
    char shown[QUOTE_MAX + 1];
    size_t k = 0;
    for (size_t i = 0; i < n && k < QUOTE_MAX; i++)
        shown[k++] = (char)((unsigned char)key[i] < 0x20 ? '?' : key[i]);
    shown[k] = '\0';
    return json__path_push(d, "%s%s", d->plen > 0 ? "." : "", shown);
}

void json__path_pop(dec *d, size_t saved)
{
    d->plen = saved;
    d->path[saved] = '\0';
}

/* ---- decoding: the strict scan ---------------------------------------------
 */

/* A key of an object being scanned, decoded when it holds escapes. */
typedef struct key_ref {
    const char *p;
    size_t len;
    char *owned;
    span raw;
} key_ref;

static int sc_value(scan *sc);

/* The next character, or NUL at the end. */
static char sc_peek(const scan *sc)
{
    if (sc->i < sc->n)
        return sc->s[sc->i];
    return '\0';
}

static int sc_fail(scan *sc, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t k = 0; k < sc->i && k < sc->n; k++) {
        if (sc->s[k] == '\n')
            line++, col = 1;
        else
            col++;
    }
    return json__dec_fail(sc->d, "invalid JSON at line %zu, column %zu: %s",
                          line, col, what);
}

static void sc_ws(scan *sc)
{
    while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
                             sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
        sc->i++;
}

/* The escape at s[i] ('\\'); a \u escape must be a whole code point (no
 * lone surrogate: json-c would turn it into U+FFFD without a word). */
static int sc_escape(scan *sc, bool *nul)
{
    const char *s = sc->s;
    size_t i = ++sc->i;
    if (i >= sc->n)
        return sc_fail(sc, "unterminated string");
    if (s[i] != 'u') {
        if (strchr("\"\\/bfnrt", s[i]) == NULL || s[i] == '\0')
            return sc_fail(sc, "invalid escape in a string");
        sc->i++;
        return 0;
    }
    uint32_t cp, lo;
    if (!tkc_hex4(s + i + 1, sc->n - i - 1, &cp))
        return sc_fail(sc, "\\u needs four hex digits");
    sc->i += 5;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return sc_fail(sc, "unpaired UTF-16 surrogate in a \\u escape");
    if (cp >= 0xd800 && cp <= 0xdbff) {
        i = sc->i;
        if (i + 1 >= sc->n || s[i] != '\\' || s[i + 1] != 'u' ||
            !tkc_hex4(s + i + 2, sc->n - i - 2, &lo) || lo < 0xdc00 ||
            lo > 0xdfff)
            return sc_fail(sc, "unpaired UTF-16 surrogate in a \\u escape");
        sc->i += 6;
    }
    if (cp == 0)
        *nul = true;
    return 0;
}

/* A string at s[i] ('"'); *out is its raw content between the quotes. */
static int sc_string(scan *sc, span *out, bool *escaped, bool *nul)
{
    size_t start = ++sc->i;
    *escaped = *nul = false;
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i];
        if (c == '"') {
            *out = (span){ start, sc->i - start };
            sc->i++;
            return 0;
        }
        if (c == '\\') {
            *escaped = true;
            if (sc_escape(sc, nul) != 0)
                return TK_ERR_ARG;
        } else if (c < 0x20) {
            return sc_fail(sc, "a control character in a string must be "
                               "escaped");
        } else {
            size_t l = tkc_utf8_seq(sc->s + sc->i, sc->n - sc->i, NULL);
            if (l == 0)
                return sc_fail(sc, "invalid UTF-8 in a string");
            sc->i += l;
        }
    }
    return sc_fail(sc, "unterminated string");
}

static int sc_number(scan *sc)
{
    size_t len = json__number_prefix(sc->s + sc->i, sc->n - sc->i);
    size_t end = sc->i + len;
    if (len == 0 || (end < sc->n && strchr(".eE0123456789", sc->s[end]) &&
                     sc->s[end] != '\0'))
        return sc_fail(sc, "invalid number (JSON has no leading zeros, "
                           "'+' signs or bare points)");
    span *nn =
        tkc_grow(sc->nums, &sc->cap_nums, sc->n_nums + 1, sizeof *nn, 16);
    if (nn == NULL)
        return json__dec_nomem(sc->d);
    sc->nums = nn;
    sc->nums[sc->n_nums++] = (span){ sc->i, len };
    sc->i = end;
    return 0;
}

static int sc_literal(scan *sc, const char *word)
{
    size_t n = strlen(word);
    if (sc->n - sc->i < n || memcmp(sc->s + sc->i, word, n) != 0)
        return sc_fail(sc, "unexpected character");
    sc->i += n;
    return 0;
}

/* The decoded text of a key holding escapes (the scan checked them). */
static char *unescape(const char *s, size_t n, size_t *out_len)
{
    char *out = malloc(n + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        char c = s[++i];
        const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
        if (c != 'u' && map != NULL) {
            *o++ = map[1];
            continue;
        }
        uint32_t cp = 0, lo = 0;
        (void)tkc_hex4(s + i + 1, n - i - 1, &cp);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            (void)tkc_hex4(s + i + 3, n - i - 3, &lo);
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i += 6;
        }
        o += tkc_utf8_put(o, cp);
    }
    *out_len = (size_t)(o - out);
    return out;
}

static int key_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* json-c would keep the last of two equal keys without a word. */
static int sc_check_dups(scan *sc, key_ref *keys, size_t n)
{
    if (n < 2)
        return 0;
    qsort(keys, n, sizeof *keys, key_cmp);
    for (size_t k = 1; k < n; k++) {
        if (key_cmp(&keys[k - 1], &keys[k]) == 0) {
            char q[QUOTE_MAX * 6 + 8];
            return json__dec_fail(
                sc->d, "duplicate key %s",
                json__quoted(q, sizeof q, keys[k].p, keys[k].len));
        }
    }
    return 0;
}

static int sc_key(scan *sc, key_ref *key)
{
    bool escaped, nul;
    if (sc->i >= sc->n)
        return sc_fail(sc, "unexpected end of input");
    if (sc->s[sc->i] != '"')
        return sc_fail(sc, sc->s[sc->i] == '\''
                               ? "keys take double quotes"
                               : "expected a double-quoted key");
    if (sc_string(sc, &key->raw, &escaped, &nul) != 0)
        return TK_ERR_ARG;
    if (nul)
        return sc_fail(sc, "a key must not contain \\u0000");
    key->p = sc->s + key->raw.off;
    key->len = key->raw.len;
    if (escaped) {
        key->owned = unescape(key->p, key->len, &key->len);
        if (key->owned == NULL)
            return json__dec_nomem(sc->d);
        key->p = key->owned;
    }
    return 0;
}

/* One member: key, ':', value. Adds the key to *keys. */
static int sc_member(scan *sc, key_ref **keys, size_t *n, size_t *cap)
{
    key_ref *nk = tkc_grow(*keys, cap, *n + 1, sizeof *nk, 8);
    if (nk == NULL)
        return json__dec_nomem(sc->d);
    *keys = nk;
    key_ref *key = &(*keys)[*n];
    *key = (key_ref){ 0 };
    sc_ws(sc);
    int rv = sc_key(sc, key);
    (*n)++;
    if (rv != 0)
        return rv;
    sc_ws(sc);
    if (sc->i >= sc->n || sc->s[sc->i] != ':')
        return sc_fail(sc, "expected ':' after a key");
    sc->i++;
    size_t saved =
        json__path_push_key(sc->d, sc->s + key->raw.off, key->raw.len);
    rv = sc_value(sc);
    json__path_pop(sc->d, saved);
    return rv;
}

static int sc_object(scan *sc)
{
    key_ref *keys = NULL;
    size_t n = 0, cap = 0;
    int rv = 0;
    sc->i++;
    sc_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == '}') {
        sc->i++;
        return 0;
    }
    for (;;) {
        rv = sc_member(sc, &keys, &n, &cap);
        if (rv != 0)
            goto done;
        sc_ws(sc);
        char c = sc_peek(sc);
        if (c != ',' && c != '}') {
            rv = sc_fail(sc, "expected ',' or '}'");
            goto done;
        }
        sc->i++;
        if (c == '}')
            break;
    }
    rv = sc_check_dups(sc, keys, n);
done:
    for (size_t k = 0; k < n; k++)
        free(keys[k].owned);
    free(keys);
    return rv;
}

static int sc_array(scan *sc)
{
    sc->i++;
    sc_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    for (size_t idx = 0;; idx++) {
        size_t saved = json__path_push(sc->d, "[%zu]", idx);
        int rv = sc_value(sc);
        json__path_pop(sc->d, saved);
        if (rv != 0)
            return rv;
        sc_ws(sc);
        char c = sc_peek(sc);
        if (c != ',' && c != ']')
            return sc_fail(sc, "expected ',' or ']'");
        sc->i++;
        if (c == ']')
            return 0;
    }
}

static int sc_value(scan *sc)
{
    sc_ws(sc);
    if (sc->i >= sc->n)
        return sc_fail(sc, "unexpected end of input");
    char c = sc->s[sc->i];
    bool escaped, nul;
    span sp;
    if (c == '{' || c == '[') {
        if (++sc->depth > MAX_DEPTH)
            return sc_fail(sc, "nested too deeply");
        int rv = c == '{' ? sc_object(sc) : sc_array(sc);
        sc->depth--;
        return rv;
    }
    if (c == '"')
        return sc_string(sc, &sp, &escaped, &nul);
    if (c == '-' || json__is_digit(c))
        return sc_number(sc);
    if (c == 't' || c == 'f' || c == 'n')
        return sc_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null");
    if (c == 'N' || c == 'I')
        return sc_fail(sc, "NaN and Infinity are strings (\"NaN\") in JSON");
    if (c == '\'')
        return sc_fail(sc, "strings take double quotes");
    return sc_fail(sc, "unexpected character");
}

/* What a JSON value that starts with c is, for a message. */
static const char *value_kind(char c)
{
    return c == '['                        ? "an array"
           : c == '"'                      ? "a string"
           : c == '-' || json__is_digit(c) ? "a number"
           : c == 't' || c == 'f'          ? "a boolean"
           : c == 'n'                      ? "null"
                                           : "this";
}

int json__sc_run(scan *sc)
{
    sc_ws(sc);
    if (sc->i >= sc->n)
        return json__dec_fail(sc->d, "empty input: expected a JSON object");
    char c = sc->s[sc->i];
    if (c != '{')
        return json__dec_fail(sc->d,
                              "the top level must be a JSON object, not %s",
                              value_kind(c));
    int rv = sc_value(sc);
    if (rv != 0)
        return rv;
    sc_ws(sc);
    if (sc->i < sc->n)
        return sc_fail(sc, "trailing data after the JSON object");
    return 0;
}

/* ---- decoding: json-c's tree ----------------------------------------------
 */

/* Hangs each number's literal (a span of the scan) on json-c's number
 * object, in document order: with duplicate keys refused, json-c's objects
 * iterate in insertion order, which is the order of the text. */
static int attach_numbers(json_object *o, scan *sc, size_t *next)
{
    switch (json_object_get_type(o)) {
    case json_type_object: {
        struct json_object_iterator it = json_object_iter_begin(o);
        struct json_object_iterator end = json_object_iter_end(o);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
            if (attach_numbers(json_object_iter_peek_value(&it), sc, next))
                return -1;
        return 0;
    }
    case json_type_array:
        for (size_t k = 0; k < json_object_array_length(o); k++)
            if (attach_numbers(json_object_array_get_idx(o, k), sc, next))
                return -1;
        return 0;
    case json_type_int:
    case json_type_double:
        if (*next >= sc->n_nums)
            return -1;
        /* NULL: keep the default serializer; the span is owned by sc. */
        json_object_set_serializer(o, NULL, &sc->nums[(*next)++], NULL);
        return 0;
    default:
        return 0;
    }
}

int json__parse_tree(dec *d, scan *sc, json_object **root)
{
    *root = NULL;
    struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH + 2);
    if (tok == NULL)
        return json__dec_nomem(d);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    *root = json_tokener_parse_ex(tok, sc->s, (int)sc->n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    int rv = 0;
    if (*root == NULL || jerr != json_tokener_success) {
        rv = json__dec_fail(d, "invalid JSON: %s",
                            json_tokener_error_desc(jerr));
    } else {
        /* The whole input: only whitespace may follow the object. */
        while (end < sc->n && strchr(" \t\r\n", sc->s[end]) != NULL &&
               sc->s[end] != '\0')
            end++;
        if (end != sc->n)
            rv = json__dec_fail(d, "trailing data after the JSON object");
    }
    size_t next = 0;
    if (rv == 0 &&
        (attach_numbers(*root, sc, &next) != 0 || next != sc->n_nums))
        rv =
            json__dec_fail(d, "internal error: json-c and the scan disagree on "
                              "the numbers of the input");
    return rv;
}
