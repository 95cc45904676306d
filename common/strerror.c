/* SPDX-License-Identifier: MIT */
/* Error texts with the POSIX strerror_r, the same on every system. With
 * _GNU_SOURCE, glibc declares its own strerror_r (it returns the text);
 * macOS has only the POSIX one (it fills the buffer and returns 0). The
 * build defines _GNU_SOURCE for every file; this one asks for POSIX alone
 * before its first include, so one code path serves both. */
#undef _GNU_SOURCE
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): a feature-test macro, defined for the C library to read
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "common.h"

const char *tkc_strerror(int e, char *buf, size_t len)
{
    if (len == 0)
        return "";
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
}
