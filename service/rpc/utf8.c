/* SPDX-License-Identifier: MIT */
/* UTF-8, as RFC 3629 has it: what tkd checks of the text it sends
 * (text.c) and writes into a JSON log line (log.c). */
#include <string.h>

#include "rpc_int.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0.
 * RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF. */
size_t rpc__utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

bool rpc_utf8_valid(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t n = rpc__utf8_seq_len(s + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

int rpc_utf8_prefix(const char *text, size_t max)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len = strnlen(text, max + 4), at = 0;
    while (at < len) {
        size_t n = rpc__utf8_seq_len(s + at, len - at);
        if (n == 0)
            n = 1; /* a stray byte is a character of its own here */
        if (at + n > max)
            break;
        at += n;
    }
    return (int)at;
}
