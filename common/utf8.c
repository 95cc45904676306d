/* SPDX-License-Identifier: MIT */
/* UTF-8, as RFC 3629 has it: what tkd checks of the text it takes and
 * sends (rpc/), writes into a JSON log line (obs/) and a unit file
 * (services/), and what the JSON codec reads and writes. */
#include <string.h>

#include "common.h"

size_t tkc_utf8_seq(const char *text, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)text;
    unsigned char c = s[0];
    if (c < 0x80) {
        if (cp != NULL)
            *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF; /* bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0Fu;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07u;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    v = v << 6 | (s[1] & 0x3Fu);
    for (size_t i = 2; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    if (cp != NULL)
        *cp = v;
    return len;
}

bool tkc_utf8_valid(const char *text, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n = tkc_utf8_seq(text + i, len - i, NULL);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

int tkc_utf8_prefix(const char *text, size_t max)
{
    size_t len = strnlen(text, max + 4), at = 0;
    while (at < len) {
        size_t n = tkc_utf8_seq(text + at, len - at, NULL);
        if (n == 0)
            n = 1; /* a stray byte is a character of its own here */
        if (at + n > max)
            break;
        at += n;
    }
    return (int)at;
}

size_t tkc_utf8_put(char out[4], uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
