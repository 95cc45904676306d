/* SPDX-License-Identifier: MIT */
/* The little of protobuf's wire format that tk reads and writes by hand:
 * base-128 varints (tkd: rpc/payload.c's walk of a request, a reply's
 * prefix, search/encode.c; libtkclient: a reply's payload found in its
 * frame). Everything else is protobuf-c's. */
#include "common.h"

size_t tkc_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

uint8_t *tkc_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

bool tkc_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    const uint8_t *q = *p;
    for (unsigned shift = 0; shift < 64 && q < end; shift += 7) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            *p = q;
            return true;
        }
    }
    return false;
}
