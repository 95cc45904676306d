/* SPDX-License-Identifier: MIT */
/* Error texts with the POSIX strerror_r (see client/lib/errtext.c, its
 * twin: tkcall reaches libtkclient only through client.h). */
#include <stdio.h>
#include <string.h>

#include "tkcall_int.h"

const char *tkcall_errtext(int e, char *buf, size_t len)
{
    if (len == 0)
        return "";
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
}
