/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/syscall.h>
#else
#include <sys/event.h>
#endif
#include <time.h>
#include <unistd.h>

#include "support.h"

long long ts_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ts_mkdtemp(char *out, size_t len, const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    int n = snprintf(out, len, "%s/tk-%s-XXXXXX", base, tag);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return mkdtemp(out) != NULL ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int ts_rmtree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *ts_program(const char *var)
{
    const char *p = getenv(var);
    if (p == NULL || p[0] == '\0') {
        fprintf(stderr, "test: %s is not set (run the tests with meson test)\n",
                var);
        abort();
    }
    return p;
}

int ts_spawn(ts_proc *p, const char *const argv[], const char *const env[])
{
    return ts_spawn_in(p, argv, env, NULL);
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    char *nb = realloc(*buf, *len + n + 1);
    if (nb == NULL)
        abort();
    memcpy(nb + *len, data, n);
    *len += n;
    nb[*len] = '\0';
    *buf = nb;
}

/* One poll round over the open streams; false when both are closed or
 * the time is up. */
static bool pump(ts_proc *p, long long until)
{
    struct pollfd fds[2];
    int n = 0;
    if (p->out_fd >= 0)
        fds[n++] = (struct pollfd){ .fd = p->out_fd, .events = POLLIN };
    if (p->err_fd >= 0)
        fds[n++] = (struct pollfd){ .fd = p->err_fd, .events = POLLIN };
    if (n == 0)
        return false;
    long long left = until - ts_now_ms();
    if (left <= 0)
        return false;
    int r = poll(fds, (nfds_t)n, (int)left);
    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return r == 0 ? ts_now_ms() < until : false;
    for (int i = 0; i < n; i++) {
        if (fds[i].revents == 0)
            continue;
        char buf[8192];
        ssize_t got = read(fds[i].fd, buf, sizeof buf);
        bool is_out = fds[i].fd == p->out_fd;
        if (got > 0) {
            if (is_out)
                append(&p->out, &p->out_len, buf, (size_t)got);
            else
                append(&p->err, &p->err_len, buf, (size_t)got);
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            close(fds[i].fd);
            if (is_out)
                p->out_fd = -1;
            else
                p->err_fd = -1;
        }
    }
    return true;
}

int ts_count(const char *hay, const char *needle)
{
    int n = 0;
    size_t nl = strlen(needle);
    for (const char *at = hay; at != NULL && (at = strstr(at, needle)) != NULL;
         at += nl)
        n++;
    return n;
}

bool ts_wait_output_n(ts_proc *p, int which, const char *needle, int count,
                      int timeout_ms)
{
    long long until = ts_now_ms() + timeout_ms;
    for (;;) {
        if (ts_count(which == 1 ? p->out : p->err, needle) >= count)
            return true;
        if (!pump(p, until))
            return false;
    }
}

bool ts_wait_output(ts_proc *p, int which, const char *needle, int timeout_ms)
{
    return ts_wait_output_n(p, which, needle, 1, timeout_ms);
}

int ts_pipe_cloexec(int fds[2])
{
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    /* No pipe2 (macOS): a process another thread spawns between the two
     * calls inherits the pipe, and its reader sees EOF only once that
     * process has closed it too. */
    if (pipe(fds) != 0)
        return -1;
    if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        errno = e;
        return -1;
    }
    return 0;
#endif
}

#ifdef __linux__
/* Waits (until the monotonic ms `until`) for pid to terminate, through a
 * pidfd: readable once it has terminated, a zombie not yet reaped
 * included. */
static bool wait_exit(pid_t pid, long long until)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return errno == ESRCH; /* gone already: reaped by its parent */
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int n;
    do {
        long long left = until - ts_now_ms();
        n = poll(&p, 1, left > 0 ? (int)left : 0);
    } while (n < 0 && errno == EINTR);
    close(fd);
    return n == 1;
}
#else
/* The same through kqueue (macOS, the BSDs): EVFILT_PROC's NOTE_EXIT. A
 * process that has terminated already (a zombie, or reaped) cannot be
 * watched: ESRCH, which means it has. */
static bool wait_exit(pid_t pid, long long until)
{
    int kq = kqueue();
    if (kq < 0)
        return false;
    struct kevent ev;
    EV_SET(&ev, (uintptr_t)pid, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0,
           NULL);
    if (kevent(kq, &ev, 1, NULL, 0, NULL) != 0) {
        int e = errno;
        close(kq);
        return e == ESRCH;
    }
    int n;
    do {
        long long left = until - ts_now_ms();
        if (left < 0)
            left = 0;
        struct timespec ts = { (time_t)(left / 1000),
                               (long)(left % 1000) * 1000000 };
        n = kevent(kq, NULL, 0, &ev, 1, &ts);
    } while (n < 0 && errno == EINTR);
    close(kq);
    return n == 1;
}
#endif

int ts_finish(ts_proc *p, int timeout_ms)
{
    long long until = ts_now_ms() + timeout_ms;
    while (pump(p, until))
        ;
    if (!p->reaped) {
        /* Output is closed, but the child may linger (it is exiting, or
         * a process it left holds no pipe of ours): its pidfd says when
         * it has terminated. */
        bool ended = wait_exit(p->pid, until);
        if (!ended)
            kill(-p->pid, SIGKILL);
        pid_t r;
        while ((r = waitpid(p->pid, &p->status, 0)) < 0 && errno == EINTR)
            ;
        p->reaped = true;
        if (!ended || r != p->pid)
            return -1;
    }
    if (ts_now_ms() > until && (p->out_fd >= 0 || p->err_fd >= 0))
        return -1;
    if (WIFEXITED(p->status))
        return WEXITSTATUS(p->status);
    if (WIFSIGNALED(p->status))
        return 128 + WTERMSIG(p->status);
    return -1;
}

void ts_signal(ts_proc *p, int sig)
{
    if (!p->reaped)
        kill(p->pid, sig);
}

void ts_proc_free(ts_proc *p)
{
    if (!p->reaped && p->pid > 0) {
        kill(-p->pid, SIGKILL);
        waitpid(p->pid, &p->status, 0);
        p->reaped = true;
    }
    if (p->out_fd >= 0)
        close(p->out_fd);
    if (p->err_fd >= 0)
        close(p->err_fd);
    free(p->out);
    free(p->err);
    p->out = p->err = NULL;
    p->out_fd = p->err_fd = -1;
}

/* The environment of ts_spawn: env's entries over the inherited ones. The
 * strings are borrowed; free the array alone. */
static char **merged_env(const char *const env[])
{
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env] != NULL)
        n_env++;
    while (env != NULL && env[n_extra] != NULL)
        n_extra++;
    char **envp = calloc(n_env + n_extra + 1, sizeof *envp);
    if (envp == NULL)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n_extra; i++)
        envp[k++] = (char *)env[i];
    for (size_t i = 0; i < n_env; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool dup = false;
        for (size_t j = 0; j < n_extra; j++)
            if (strncmp(env[j], environ[i], nl) == 0 && env[j][nl] == '=')
                dup = true;
        if (!dup)
            envp[k++] = environ[i];
    }
    return envp;
}

int ts_spawn_in(ts_proc *p, const char *const argv[], const char *const env[],
                const char *stdin_path)
{
    memset(p, 0, sizeof *p);
    p->out_fd = p->err_fd = -1;
    int out[2] = { -1, -1 }, err[2] = { -1, -1 };
    char **envp = merged_env(env);
    if (ts_pipe_cloexec(out) != 0 || ts_pipe_cloexec(err) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (out[i] >= 0)
                close(out[i]);
            if (err[i] >= 0)
                close(err[i]);
        }
        free(envp);
        return -e;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(
        &fa, 0, stdin_path != NULL ? stdin_path : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    int rv = posix_spawn(&p->pid, argv[0], &fa, &at, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(envp);
    close(out[1]);
    close(err[1]);
    if (rv != 0) {
        close(out[0]);
        close(err[0]);
        return -rv;
    }
    p->out_fd = out[0];
    p->err_fd = err[0];
    return 0;
}

/* The parent of pid from /proc (a zombie's too), or -1 (always, where
 * there is no /proc: ts_reap_orphan serves the tests of a child
 * subreaper, which only Linux has). */
static pid_t parent_of(pid_t pid)
{
#ifndef __linux__
    (void)pid;
    return -1;
#else
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    if (rp == NULL || rp[1] != ' ' || rp[2] == '\0' || rp[3] != ' ')
        return -1;
    return (pid_t)strtol(rp + 4, NULL, 10);
#endif
}

int ts_reap_orphan(pid_t pid, int timeout_ms)
{
    long long until = ts_now_ms() + timeout_ms;
    if (!wait_exit(pid, until))
        return -1;
    /* Terminated is not yet ours: while its old parent (a process of the
     * killed group) is still exiting, pid is that parent's zombie and
     * waitpid says ECHILD. The kernel hands a dying process's children to
     * the subreaper before it signals that process's own pidfd, so wait
     * for each parent in turn to terminate, then ask again. */
    for (;;) {
        int st = 0;
        pid_t got = waitpid(pid, &st, WNOHANG);
        if (got == pid)
            return st;
        if (got != -1 || errno != ECHILD)
            return -1;
        pid_t parent = parent_of(pid);
        if (parent <= 0)
            return -1; /* reaped by someone else */
        if (parent == getpid()) {
            /* Handed over between our waitpid and the read of /proc: the
             * next waitpid sees it. */
            if (ts_now_ms() >= until)
                return -1;
            continue;
        }
        if (!wait_exit(parent, until))
            return -1;
    }
}

bool ts_group_exists(pid_t pgid)
{
    return kill(-pgid, 0) == 0 || errno != ESRCH;
}

bool ts_reap_group(pid_t pgid)
{
    while (waitpid(-pgid, NULL, 0) > 0)
        ;
    return errno == ECHILD && !ts_group_exists(pgid);
}
