/* SPDX-License-Identifier: MIT */
/* Linux only: pidfd_open(2) and the other pidfd calls; on macOS a kqueue
 * EVFILT_PROC. For tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/pidfd.h> is not on macOS: pidfd_open(2) and the other pidfd calls; on macOS a kqueue EVFILT_PROC"
