/* SPDX-License-Identifier: MIT */
/* Linux only: error(3) is glibc's. For tools/apple/check only. */
#error "Linux only: <error.h> is not on macOS: error(3) is glibc's"
