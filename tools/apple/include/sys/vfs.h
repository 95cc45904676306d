/* SPDX-License-Identifier: MIT */
/* Linux only: statfs(2) is in <sys/mount.h> on macOS. For tools/apple/check
 * only. */
#error                                                                         \
    "Linux only: <sys/vfs.h> is not on macOS: statfs(2) is in <sys/mount.h> on macOS"
