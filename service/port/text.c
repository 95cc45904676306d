/* SPDX-License-Identifier: MIT */
/* Error texts with the POSIX strerror_r, the same on every system. With
 * _GNU_SOURCE, glibc declares its own strerror_r (it returns the text);
 * macOS has only the POSIX one (it fills the buffer and returns 0). This
 * file is built for POSIX alone (service/meson.build: -U_GNU_SOURCE
 * -D_POSIX_C_SOURCE), so one code path serves both. */
#include <stdio.h>
#include <string.h>

#include "port.h"

const char *port_strerror(int e, char *buf, size_t len)
{
    if (len == 0)
        return "";
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
}
