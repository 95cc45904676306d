/* SPDX-License-Identifier: MIT */
/* Linux only: inotify(7); on macOS kqueue EVFILT_VNODE or FSEvents. For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/inotify.h> is not on macOS: inotify(7); on macOS kqueue EVFILT_VNODE or FSEvents"
