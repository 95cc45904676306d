/* SPDX-License-Identifier: MIT */
/* tk_default_address, libtkclient's name for common/'s default address
 * (the one tkd listens on). */
#include <tk/client.h>

#include "common/common.h"

int tk_default_address(char *buf, size_t len)
{
    return tkc_default_address(buf, len) == 0 ? TK_OK : TK_ERR_ARG;
}
