/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

pid_t bench_spawn(const char *const argv[], const char *cwd, int in_fd,
                  int out_fd, char *const envp[])
{
    return bench_spawn_err(argv, cwd, in_fd, out_fd, -1, envp);
}

pid_t bench_spawn_err(const char *const argv[], const char *cwd, int in_fd,
                      int out_fd, int err_fd, char *const envp[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (cwd != NULL)
        posix_spawn_file_actions_addchdir_np(&fa, cwd);
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    if (err_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rv = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
                         envp != NULL ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rv != 0) {
        errno = rv;
        return -1;
    }
    return pid;
}

int bench_run_drain(const char *const argv[], const char *cwd,
                    char *const envp[], unsigned long long *bytes)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = bench_spawn(argv, cwd, -1, p[1], envp);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    static _Thread_local char buf[64 * 1024];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0)
        if (bytes != NULL)
            *bytes += (unsigned long long)n;
    close(p[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

tk_client *bench_start_tkd(const char *const argv[], const char *url,
                           pid_t *pid)
{
    *pid = bench_spawn(argv, NULL, -1, -1, NULL);
    if (*pid < 0) {
        fprintf(stderr, "bench: cannot start %s\n", argv[0]);
        _exit(1);
    }
    /* A benchmark, unlike a test, may poll for readiness: tkd runs at
     * --log-level warn here, so it prints no "listening" line to wait on. */
    for (int i = 0; i < 1000; i++) {
        tk_client *c = NULL;
        if (tk_client_open(&c, url, NULL, 0) == TK_OK)
            return c;
        struct timespec ms = { 0, 10000000 };
        nanosleep(&ms, NULL);
    }
    fprintf(stderr, "bench: tkd did not come up at %s\n", url);
    kill(*pid, SIGKILL);
    _exit(1);
}

bool bench_int_arg(const char *prog, const char *flag, const char *s, long min,
                   long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        fprintf(stderr,
                "%s: %s wants a whole number from %ld to %ld, not \"%s\"\n",
                prog, flag, min, max, s);
        return false;
    }
    *out = (int)v;
    return true;
}
