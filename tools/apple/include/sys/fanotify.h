/* SPDX-License-Identifier: MIT */
/* Linux only: fanotify(7). For tools/apple/check only. */
#error "Linux only: <sys/fanotify.h> is not on macOS: fanotify(7)"
