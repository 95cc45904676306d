/* SPDX-License-Identifier: MIT */
/* Linux only: major()/minor() are in <sys/types.h> on macOS. For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/sysmacros.h> is not on macOS: major()/minor() are in <sys/types.h> on macOS"
