/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: starting tkd and waiting until it answers,
 * and running a peer tool the way a daemon that shells out would.
 *
 * The peer is spawned with a bare posix_spawn on purpose: it is the thing
 * tkd is measured against, so it must not carry service/proc's work (tkd's
 * own children go through proc/, as DESIGN.md requires). Benchmarks only;
 * tests use tests/support.
 */
#ifndef TK_BENCH_H
#define TK_BENCH_H

#include <stdbool.h>
#include <sys/types.h>

#include <tk/client.h>

/* Spawns argv[0] in cwd (NULL: ours) with stdin from in_fd (-1:
 * /dev/null), stdout on out_fd (-1: ours) and envp (NULL: ours). Returns
 * the pid, or -1 with errno set. */
pid_t bench_spawn(const char *const argv[], const char *cwd, int in_fd,
                  int out_fd, char *const envp[]);
/* bench_spawn, with stderr on err_fd too (-1: ours). */
pid_t bench_spawn_err(const char *const argv[], const char *cwd, int in_fd,
                      int out_fd, int err_fd, char *const envp[]);

/* Spawns argv, reads its stdout to the end (counting bytes if bytes is not
 * NULL) and reaps it. Returns its exit status, or -1. */
int bench_run_drain(const char *const argv[], const char *cwd,
                    char *const envp[], unsigned long long *bytes);

/* A whole number in [min, max] from option flag's value s into *out; or
 * a message naming prog and the option, and false. */
bool bench_int_arg(const char *prog, const char *flag, const char *s, long min,
                   long max, int *out);

/* Starts tkd (argv[0] is its path) and returns a client connected to url
 * once tkd answers; *pid gets tkd's pid. Exits 1 with a message when tkd
 * does not start or does not come up within 10 s. */
tk_client *bench_start_tkd(const char *const argv[], const char *url,
                           pid_t *pid);

#endif
