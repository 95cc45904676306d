/* SPDX-License-Identifier: MIT */
/* Linux only: signalfd(2); on macOS a kqueue EVFILT_SIGNAL or a self-pipe. For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/signalfd.h> is not on macOS: signalfd(2); on macOS a kqueue EVFILT_SIGNAL or a self-pipe"
