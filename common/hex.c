/* SPDX-License-Identifier: MIT */
/* Hex digits: a JSON \uXXXX escape's four (the JSON codec, search's
 * reader of rg --json). */
#include "common.h"

bool tkc_hex4(const char *s, size_t n, uint32_t *out)
{
    if (n < 4)
        return false;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        char c = s[k];
        int h = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (h < 0)
            return false;
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return true;
}
