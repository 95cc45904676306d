/* SPDX-License-Identifier: MIT */
/* Wiping a secret so that the compiler keeps the stores. */
#include <string.h>

#include "port_config.h"

#include "common.h"

void tkc_wipe(void *p, size_t len)
{
#if TK_HAVE_EXPLICIT_BZERO
    explicit_bzero(p, len);
#elif TK_HAVE_MEMSET_S
    memset_s(p, len, 0, len);
#else
    /* A call through a volatile pointer cannot be proven dead. */
    static void *(*const volatile set)(void *, int, size_t) = memset;
    set(p, 0, len);
#endif
}
