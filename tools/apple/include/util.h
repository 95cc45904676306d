/* SPDX-License-Identifier: MIT */
/* macOS's <util.h>, the part tk may use: the pseudo-terminal functions
 * (openpty(3): "int openpty(int *amaster, int *aslave, char *name, struct
 * termios *termp, struct winsize *winp); pid_t forkpty(int *amaster, char
 * *name, struct termios *termp, struct winsize *winp); int login_tty(int
 * fd);"), which glibc declares in <pty.h> and <utmp.h>. For
 * tools/apple/check only. */
#ifndef TK_APPLE_UTIL_H
#define TK_APPLE_UTIL_H

#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

int openpty(int *amaster, int *aslave, char *name, struct termios *termp,
            struct winsize *winp);
pid_t forkpty(int *amaster, char *name, struct termios *termp,
              struct winsize *winp);
int login_tty(int fd);

#endif
