/* SPDX-License-Identifier: MIT */
/* Named by the `#pragma clang include_instead` of the headers that macOS
 * lacks but glibc's own headers include (<endian.h>, <linux/...>): clang
 * then refuses them in tk's code only, with "header '<endian.h>' is an
 * implementation detail; #include '<tk-apple/not-on-macos.h>' instead",
 * which reads: not on macOS. Including this file does nothing. For
 * tools/apple/check only. */
