/* SPDX-License-Identifier: MIT */
/* Linux only: eventfd(2); on macOS a pipe or a kqueue EVFILT_USER. For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/eventfd.h> is not on macOS: eventfd(2); on macOS a pipe or a kqueue EVFILT_USER"
