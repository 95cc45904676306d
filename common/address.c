/* SPDX-License-Identifier: MIT */
/* The default address: the one tkd listens on and every client dials
 * unless told otherwise, so that both sides agree without a flag. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

int tkc_default_address(char *buf, size_t len)
{
    const char *addr = getenv("TK_ADDR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (addr != NULL && addr[0] != '\0')
        n = snprintf(buf, len, "%s", addr);
    else if (xdg != NULL && xdg[0] == '/')
        n = snprintf(buf, len, "ipc://%s/tk/tkd.sock", xdg);
    else
        n = snprintf(buf, len, "ipc:///tmp/tk-%u/tkd.sock",
                     (unsigned)geteuid());
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
