/* SPDX-License-Identifier: MIT */
/* The JSON codec's text: base64 decoding, number literals read exactly,
 * the output buffer (jbuf) with its quoting, and the C locale numbers are
 * read and written in.
 *
 * Owns: the lexical layer under both directions of the codec.
 * May call: common/ (buffers, base64, UTF-8), libc.
 * Must never: look at a descriptor or a message (json_names.c,
 * json_encode.c, json_decode.c do). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "json_int.h"

/* Standard or URL-safe base64, with or without padding. Returns 0,
 * TK_ERR_ARG when malformed, TK_ERR_NOMEM. *out is NULL for no bytes. */
int json__b64_decode(const char *s, size_t n, ProtobufCBinaryData *out)
{
    const unsigned flags = TKC_B64_URL | TKC_B64_NOPAD;
    size_t len = tkc_base64_len(s, n, flags);
    if (len == SIZE_MAX)
        return TK_ERR_ARG;
    out->data = NULL;
    out->len = 0;
    if (len == 0)
        return 0;
    uint8_t *buf = malloc(len);
    if (buf == NULL)
        return TK_ERR_NOMEM;
    if (tkc_base64_decode(buf, s, n, flags) == SIZE_MAX) {
        free(buf);
        return TK_ERR_ARG;
    }
    out->data = buf;
    out->len = len;
    return 0;
}

bool json__is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the run of digits that starts at s[i]. */
static size_t skip_digits(const char *s, size_t n, size_t i)
{
    while (i < n && json__is_digit(s[i]))
        i++;
    return i;
}

/* The length of the JSON number (RFC 8259 grammar) at the start of s, or 0. */
size_t json__number_prefix(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && json__is_digit(s[i]))
        i = skip_digits(s, n, i);
    else
        return 0;
    if (i < n && s[i] == '.') {
        if (i + 1 >= n || !json__is_digit(s[i + 1]))
            return 0;
        i = skip_digits(s, n, i + 1);
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !json__is_digit(s[i]))
            return 0;
        i = skip_digits(s, n, i);
    }
    return i;
}

/* The exponent of a number whose 'e' or 'E' is at s[i]; beyond 10^6 it only
 * decides the error. */
static long exponent_value(const char *s, size_t n, size_t i)
{
    long e = 0;
    bool eneg = s[++i] == '-';
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; i < n; i++)
        e = e < 1000000 ? e * 10 + (s[i] - '0') : e;
    return eneg ? -e : e;
}

/* The integer digits[0..nd) * 10^scale into *mag, or NUM_FRACTION /
 * NUM_RANGE. Leading zeros are already gone. */
static int digits_value(const char *digits, size_t nd, long scale,
                        uint64_t *mag)
{
    while (nd > 0 && digits[nd - 1] == '0')
        nd--, scale++;
    if (nd == 0)
        return NUM_OK;
    if (scale < 0)
        return NUM_FRACTION;
    if ((long)nd + scale > 20)
        return NUM_RANGE;
    uint64_t v = 0;
    for (size_t k = 0; k < nd + (size_t)scale; k++) {
        unsigned d = k < nd ? (unsigned)(digits[k] - '0') : 0;
        if (v > (UINT64_MAX - d) / 10)
            return NUM_RANGE;
        v = v * 10 + d;
    }
    *mag = v;
    return NUM_OK;
}

/* A JSON number that must be an exact integer ("-12", "1e3", "1.50e1"):
 * sign and magnitude, or NUM_SYNTAX / NUM_FRACTION / NUM_RANGE (beyond 64
 * bits). Exact at every size: no double on the way. */
int json__parse_integer(const char *s, size_t n, bool *neg, uint64_t *mag)
{
    *neg = false;
    *mag = 0;
    if (n == 0 || json__number_prefix(s, n) != n)
        return NUM_SYNTAX;
    size_t i = 0;
    if (s[i] == '-')
        *neg = true, i++;
    /* The digits of the mantissa (the point skipped), with their scale. */
    char digits[32];
    size_t nd = 0, skipped = 0;
    long scale = 0;
    bool frac = false;
    for (; i < n && (json__is_digit(s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.') {
            frac = true;
            continue;
        }
        if (frac)
            scale--;
        if (nd == 0 && s[i] == '0')
            continue;
        if (nd < sizeof digits)
            digits[nd++] = s[i];
        else if (s[i] != '0')
            return frac ? NUM_FRACTION : NUM_RANGE;
        else
            skipped++;
    }
    if (i < n)
        scale += exponent_value(s, n, i);
    scale += (long)skipped;
    return digits_value(digits, nd, scale, mag);
}

void json__jb_put(jbuf *b, const char *s, size_t n)
{
    if (!b->oom && tkc_buf_append(&b->buf, s, n) != 0)
        b->oom = true;
}

void json__jb_puts(jbuf *b, const char *s)
{
    json__jb_put(b, s, strlen(s));
}

void json__jb_printf(jbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        json__jb_put(b, tmp,
                     (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string. Bytes that are not UTF-8 become U+FFFD: protobuf-c does
 * not check strings on unpack, and the output must stay valid JSON. */
/* The two-character escape of c (RFC 8259), or NULL. */
static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    case '\b':
        return "\\b";
    case '\f':
        return "\\f";
    default:
        return NULL;
    }
}

void json__jb_quote(jbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    json__jb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = short_escape(c);
        if (esc != NULL) {
            json__jb_puts(b, esc);
            i++;
        } else if (c < 0x20) {
            char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            json__jb_put(b, u, sizeof u);
            i++;
        } else {
            size_t l = tkc_utf8_seq(s + i, n - i, NULL);
            json__jb_put(b, l ? s + i : "\xef\xbf\xbd", l ? l : 3);
            i += l ? l : 1;
        }
    }
    json__jb_put(b, "\"", 1);
}

void json__jb_base64(jbuf *b, const uint8_t *d, size_t n)
{
    json__jb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i += 48) { /* whole groups of three */
        char q[64];
        json__jb_put(b, q,
                     tkc_base64_encode(q, d + i, n - i < 48 ? n - i : 48));
    }
    json__jb_put(b, "\"", 1);
}

void json__c_numeric_enter(c_numeric *l)
{
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    l->old = l->c != (locale_t)0 ? uselocale(l->c) : (locale_t)0;
}

void json__c_numeric_leave(c_numeric *l)
{
    if (l->c == (locale_t)0)
        return;
    uselocale(l->old);
    freelocale(l->c);
}
