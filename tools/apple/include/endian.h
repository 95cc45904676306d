/* SPDX-License-Identifier: MIT */
/* Linux only: glibc's <endian.h> (htobe64, ...); macOS has <machine/endian.h>
 * and <libkern/OSByteOrder.h>. glibc's own headers include it (<sys/types.h>
 * includes <endian.h>), so no #error: clang refuses it where tk's code includes
 * it, and only there (tk-apple/not-on-macos.h). For tools/apple/check only. */
/* clang-format off */
#pragma clang include_instead(<tk-apple/not-on-macos.h>)
/* clang-format on */
#include_next <endian.h>
