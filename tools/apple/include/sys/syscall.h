/* SPDX-License-Identifier: MIT */
/* macOS has a <sys/syscall.h>, with Darwin's own numbers: none of Linux's
 * (SYS_pidfd_open, SYS_gettid, SYS_close_range, ...), and syscall(2) is
 * deprecated there since 10.12. Empty here, so that a SYS_ name is
 * undeclared: tk calls no system call by number on macOS. For
 * tools/apple/check only. */
#ifndef TK_APPLE_SYS_SYSCALL_H
#define TK_APPLE_SYS_SYSCALL_H
#endif
