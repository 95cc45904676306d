/* SPDX-License-Identifier: MIT */
/* The default address, shared by tkd and every client (its own file, so
 * that tkd links it without the rest of the client). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <tk/client.h>

int tk_default_address(char *buf, size_t len)
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
    return n < 0 || (size_t)n >= len ? TK_ERR_ARG : TK_OK;
}
