/* SPDX-License-Identifier: MIT */
/* Linux only: epoll(7); on macOS kqueue(2) or poll(2). For tools/apple/check
 * only. */
#error                                                                         \
    "Linux only: <sys/epoll.h> is not on macOS: epoll(7); on macOS kqueue(2) or poll(2)"
