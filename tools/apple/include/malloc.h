/* SPDX-License-Identifier: MIT */
/* Linux only: glibc's malloc extensions (malloc_usable_size, mallinfo,
 * malloc_trim); macOS has <malloc/malloc.h>. For tools/apple/check only. */
#error                                                                         \
    "Linux only: <malloc.h> is not on macOS: glibc's malloc extensions (malloc_usable_size, mallinfo, malloc_trim); macOS has <malloc/malloc.h>"
