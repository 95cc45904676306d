/* SPDX-License-Identifier: MIT */
/* Error texts with the POSIX strerror_r. With _GNU_SOURCE glibc declares
 * its own strerror_r (it returns the text); macOS has only the POSIX one
 * (it fills the buffer). This file is built for POSIX alone
 * (client/meson.build), so one code path serves both. tkd's twin is
 * service/port/text.c: the client shares no code with tkd. */
#include <stdio.h>
#include <string.h>

#include "client_int.h"

const char *tk__errtext(int e, char *buf, size_t len)
{
    if (len == 0)
        return "";
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
}
