/* SPDX-License-Identifier: MIT */
/* glibc only: <pty.h> is not on macOS, which declares openpty(3) and
 * forkpty(3) in <util.h>. For tools/apple/check only. */
#error                                                                         \
    "glibc only: <pty.h> is not on macOS: openpty(3) and forkpty(3) are in <util.h> there"
