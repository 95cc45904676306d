/* SPDX-License-Identifier: MIT */
/* glibc's <string.h>, and what macOS's declares besides under
 * __STDC_WANT_LIB_EXT1__ (C11 Annex K, memset_s(3):
 * "errno_t memset_s(void *s, rsize_t smax, int c, rsize_t n);",
 * __OSX_AVAILABLE_STARTING(__MAC_10_9)). No include guard around the
 * Annex K part: a file may define __STDC_WANT_LIB_EXT1__ after the
 * prelude has already included <string.h>. For tools/apple/check only. */
#include_next <string.h>

#if defined(__STDC_WANT_LIB_EXT1__) && __STDC_WANT_LIB_EXT1__ >= 1 &&          \
    !defined(TK_APPLE_MEMSET_S)
#define TK_APPLE_MEMSET_S
#include <stddef.h>
/* <sys/_types/_errno_t.h>, <sys/_types/_rsize_t.h> */
typedef int errno_t;
typedef size_t rsize_t;
errno_t memset_s(void *s, rsize_t smax, int c, rsize_t n);
#endif
