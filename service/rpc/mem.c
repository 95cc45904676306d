/* SPDX-License-Identifier: MIT */
/* Growing memory every module shares: an array that doubles, and a byte
 * buffer. malloc'd, not the call's (rpc_call_alloc): for what outlives a
 * call, or is too large to keep in its arena. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

void *rpc_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
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

int rpc_buf_reserve(rpc_buf *b, size_t len)
{
    if (len == SIZE_MAX)
        return -ENOMEM;
    char *data = rpc_grow(b->data, &b->cap, len + 1, 1, RPC_BUF_FIRST);
    if (data == NULL)
        return -ENOMEM;
    b->data = data;
    return 0;
}

int rpc_buf_append(rpc_buf *b, const void *data, size_t len)
{
    if (len > SIZE_MAX - 1 - b->len || rpc_buf_reserve(b, b->len + len) != 0)
        return -ENOMEM;
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

void rpc_buf_free(rpc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
