/* SPDX-License-Identifier: MIT */
/* What meson finds on macOS 12 and later, for tools/apple/check: the
 * port_config.h that meson.build generates (service/port/), as a Mac's
 * meson would write it. The check puts this file first on the include
 * path under the name port_config.h. The names are meson.build's
 * (port_have); tools/apple/test_check.py fails when the two sets differ.
 * Each value as on macOS (Apple's headers and man pages; the comment of
 * tools/apple/prelude.h lists what macOS lacks). */
#ifndef TK_PORT_CONFIG_H
#define TK_PORT_CONFIG_H

#define TK_HAVE_PIPE2 0
#define TK_HAVE_EVENTFD 0
#define TK_HAVE_PIDFD_OPEN 0
#define TK_HAVE_SIGABBREV_NP 0
#define TK_HAVE_O_PATH 0
#define TK_HAVE_SETPIPE_SZ 0 /* F_SETPIPE_SZ is Linux's */
#define TK_HAVE_SPAWN_CLOSEFROM 0
#define TK_HAVE_SPAWN_CLOEXEC_DEFAULT 1 /* posix_spawnattr_setflags(3) */
#define TK_HAVE_CONDATTR_SETCLOCK 0
#define TK_HAVE_COND_TIMEDWAIT_RELATIVE_NP 1 /* <pthread.h> */
#define TK_HAVE_EXPLICIT_BZERO 0
#define TK_HAVE_MEMSET_S 1 /* memset_s(3), C11 Annex K */
#define TK_HAVE_PROC_SELF_FD 0
#define TK_HAVE_MALLOC_TRIM 0  /* glibc's; macOS's gives pages back itself */
#define TK_HAVE_SOCK_CLOEXEC 0 /* socket(2) takes no type flags */
#define TK_HAVE_ACCEPT4 0
#define TK_PORT_DESCRIPTION                                                    \
    "no-pipe2 no-eventfd no-pidfd_open no-sigabbrev_np no-o_path "             \
    "no-spawn_closefrom spawn_cloexec_default no-condattr_setclock "           \
    "cond_timedwait_relative_np no-explicit_bzero memset_s no-proc_self_fd "   \
    "no-malloc_trim no-sock_cloexec no-accept4"
#define TK_PORTABLE 0

#endif
