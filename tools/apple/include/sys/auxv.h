/* SPDX-License-Identifier: MIT */
/* Linux only: getauxval(3). For tools/apple/check only. */
#error "Linux only: <sys/auxv.h> is not on macOS: getauxval(3)"
