/* SPDX-License-Identifier: MIT */
/* Linux only: timerfd_create(2); on macOS a kqueue EVFILT_TIMER. For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/timerfd.h> is not on macOS: timerfd_create(2); on macOS a kqueue EVFILT_TIMER"
