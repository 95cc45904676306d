/* SPDX-License-Identifier: MIT */
/* glibc's <spawn.h> and what macOS's adds, as Apple declares it
 * (<spawn.h> and <sys/spawn.h>; posix_spawnattr_setflags(3),
 * posix_spawn_file_actions_addclose(3)). glibc's own extensions that macOS
 * lacks (posix_spawn_file_actions_addclosefrom_np, ..._addtcsetpgrp_np)
 * are marked unavailable by tools/apple/prelude.h. For tools/apple/check
 * only. */
#include_next <spawn.h>

#ifndef TK_APPLE_SPAWN_H
#define TK_APPLE_SPAWN_H

/* <sys/spawn.h>: Darwin's posix_spawnattr_setflags() flags. "Only the file
 * descriptors named by posix_spawn_file_actions_addinherit_np() or the
 * other file actions are inherited; every other descriptor is closed, as
 * if FD_CLOEXEC" (posix_spawnattr_setflags(3), POSIX_SPAWN_CLOEXEC_DEFAULT,
 * macOS 10.7). */
#define POSIX_SPAWN_SETEXEC 0x0040
#define POSIX_SPAWN_START_SUSPENDED 0x0080
#define POSIX_SPAWN_CLOEXEC_DEFAULT 0x4000

/* <spawn.h>, __API_AVAILABLE(macos(10.7)). */
int posix_spawn_file_actions_addinherit_np(posix_spawn_file_actions_t *, int);

/* posix_spawn_file_actions_addchdir_np and ..._addfchdir_np: macOS has
 * both (__API_AVAILABLE(macos(10.15))), with glibc's signatures; glibc
 * declares them. */

#endif
