/* SPDX-License-Identifier: MIT */
/* Base64 (RFC 4648, section 4, and with TKC_B64_URL section 5's alphabet
 * too): the JSON codec's bytes both ways, and search's reading of rg's
 * {"bytes": ...}. */
#include "common.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tkc_base64_encode(char *out, const uint8_t *in, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[k++] = alphabet[v >> 18 & 63];
        out[k++] = alphabet[v >> 12 & 63];
        out[k++] = (char)(i + 1 < n ? alphabet[v >> 6 & 63] : '=');
        out[k++] = (char)(i + 2 < n ? alphabet[v & 63] : '=');
    }
    return k;
}

/* A character's six bits, or -1. */
static int value(char c, unsigned flags)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || (c == '-' && (flags & TKC_B64_URL)))
        return 62;
    if (c == '/' || (c == '_' && (flags & TKC_B64_URL)))
        return 63;
    return -1;
}

/* The characters of in[0..n) before its padding (at most two '='). */
static size_t unpadded(const char *in, size_t n)
{
    size_t len = n;
    while (len > 0 && in[len - 1] == '=' && n - len < 2)
        len--;
    return len;
}

size_t tkc_base64_len(const char *in, size_t n, unsigned flags)
{
    size_t len = unpadded(in, n);
    bool padded = len < n || !(flags & TKC_B64_NOPAD);
    if ((padded && n % 4 != 0) || len % 4 == 1)
        return SIZE_MAX;
    return len / 4 * 3 + (len % 4 != 0 ? len % 4 - 1 : 0);
}

size_t tkc_base64_decode(uint8_t *out, const char *in, size_t n, unsigned flags)
{
    if (tkc_base64_len(in, n, flags) == SIZE_MAX)
        return SIZE_MAX;
    size_t len = unpadded(in, n), k = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = value(in[i], flags);
        if (v < 0)
            return SIZE_MAX;
        acc = (acc << 6 | (uint32_t)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    return k;
}
