/* SPDX-License-Identifier: MIT */
/* The error buffer every "char *err, size_t errlen" of tk's fills. */
#include <stdarg.h>
#include <stdio.h>

#include "common.h"

void tkc_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
