/* SPDX-License-Identifier: MIT */
/* Linux only: bswap_16/32/64; use __builtin_bswap*.
 * glibc's own headers include it (<sys/types.h> includes <endian.h>), so
 * no #error: clang refuses it where tk's code includes it, and only there
 * (tk-apple/not-on-macos.h). For tools/apple/check only. */
/* clang-format off */
#pragma clang include_instead(<tk-apple/not-on-macos.h>)
/* clang-format on */
#include_next <byteswap.h>
