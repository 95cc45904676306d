/* SPDX-License-Identifier: MIT */
/* macOS's <sys/random.h>: getentropy(2) alone ("int getentropy(void
 * *buf, size_t buflen);", macOS 10.12; at most 256 bytes a call). Not
 * glibc's header, which adds getrandom(2) and GRND_*: macOS has neither.
 * For tools/apple/check only. */
#ifndef TK_APPLE_SYS_RANDOM_H
#define TK_APPLE_SYS_RANDOM_H

#include <stddef.h>

int getentropy(void *buffer, size_t size);

#endif
