/* SPDX-License-Identifier: MIT */
/* The part of macOS's <mach-o/dyld.h> that tk uses, declared as Apple
 * does: dyld(3) ("_NSGetExecutablePath() copies the path of the main
 * executable into the buffer buf. The bufsize parameter should initially
 * be the size of the buffer. This function returns 0 if the path was
 * successfully copied, and *bufsize is left unchanged. It returns -1 if
 * the buffer is not large enough, and *bufsize is set to the size
 * required."). For tools/apple/check only: nothing builds with it. */
#ifndef TK_APPLE_MACH_O_DYLD_H
#define TK_APPLE_MACH_O_DYLD_H

#include <stdint.h>

extern int _NSGetExecutablePath(char *buf, uint32_t *bufsize);

#endif
