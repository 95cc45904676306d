/* SPDX-License-Identifier: MIT */
/* Linux only: personality(2). For tools/apple/check only. */
#error "Linux only: <sys/personality.h> is not on macOS: personality(2)"
