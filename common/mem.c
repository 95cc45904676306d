/* SPDX-License-Identifier: MIT */
/* Growing memory: an array that doubles, and a byte buffer. malloc'd: in
 * tkd, for what outlives a call or is too large to keep in its arena
 * (rpc_call_alloc is the call's). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void *tkc_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return arr;
    size_t ncap = *cap != 0 ? *cap : first;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return NULL;
        ncap *= 2;
    }
    if (elem != 0 && ncap > SIZE_MAX / elem)
        return NULL;
    void *bigger = realloc(arr, ncap * elem);
    if (bigger != NULL)
        *cap = ncap;
    return bigger;
}

int tkc_buf_reserve(tkc_buf *b, size_t len)
{
    if (len == SIZE_MAX)
        return -ENOMEM;
    char *data = tkc_grow(b->data, &b->cap, len + 1, 1, TKC_BUF_FIRST);
    if (data == NULL)
        return -ENOMEM;
    b->data = data;
    return 0;
}

int tkc_buf_append(tkc_buf *b, const void *data, size_t len)
{
    if (len > SIZE_MAX - 1 - b->len || tkc_buf_reserve(b, b->len + len) != 0)
        return -ENOMEM;
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

void tkc_buf_fini(tkc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
