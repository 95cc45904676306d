/* SPDX-License-Identifier: MIT */
/* The guard: a READ's processes die with tkd, even when tkd is killed
 * outright (kill -9, the OOM killer), when no code of tkd's runs to kill
 * them. Measured on 31f2572: after kill -9 of tkd a read's git (and the
 * fsmonitor it had started) ran on, reparented to init, with nobody to
 * answer for them.
 *
 * PR_SET_PDEATHSIG would need code of ours between fork and exec, which
 * posix_spawn does not allow (spawn.c), reaches only the leader, not what
 * it started, and fires when the spawning thread ends rather than the
 * process. So tkd forks, at start and before any thread exists, one small
 * process that holds the other end of a socket: tkd tells it each READ's
 * process group when the leader is spawned, and that it is done with it
 * before the leader is reaped (while the group's id is still the run's:
 * proc.h). When tkd ends, however it ends, the kernel closes tkd's end,
 * the guard reads end-of-file, kills every group still told, and exits.
 *
 * What is left: a READ spawned but not yet told when tkd dies (between
 * posix_spawn's return and one send) escapes; so does one whose group the
 * guard cannot hold (more than GUARD_MAX at once, far above the worker
 * pool). WRITEs are never told: a write runs to completion (DESIGN.md,
 * "Lifetimes"), and git removes its own lock files when it ends. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proc_int.h"

/* Groups the guard holds at once: READs running together (workers and
 * search slots: tens). */
#define GUARD_MAX 4096

typedef struct guard_msg {
    int32_t op; /* 1: add, 0: remove */
    int32_t pgid;
} guard_msg;

/* tkd's end: set once before any thread exists, -1 without a guard. */
static int guard_fd = -1;
/* A send is one record; two threads' records must not interleave on the
 * stream. */
static pthread_mutex_t send_mu = PTHREAD_MUTEX_INITIALIZER;
/* The guard went away (it cannot, but for its own kill -9): stop telling. */
static atomic_bool guard_gone;

#ifdef MSG_NOSIGNAL
#define SEND_FLAGS MSG_NOSIGNAL
#else
#define SEND_FLAGS 0 /* SO_NOSIGPIPE on the socket instead */
#endif

static void kill_all(const pid_t *groups, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kill(-groups[i], SIGKILL);
}

static void apply(pid_t *groups, size_t *n, const guard_msg *m)
{
    if (m->op == 1) {
        if (*n < GUARD_MAX)
            groups[(*n)++] = m->pgid;
        return;
    }
    for (size_t i = 0; i < *n; i++) {
        if (groups[i] == m->pgid) {
            groups[i] = groups[--*n];
            return;
        }
    }
}

/* The guard's whole life: records until end-of-file, then the kill. */
static void guard_main(int fd)
{
    static pid_t groups[GUARD_MAX];
    size_t n = 0;
    guard_msg m;
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, (char *)&m + have, sizeof m - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += (size_t)got;
        if (have == sizeof m) {
            apply(groups, &n, &m);
            have = 0;
        }
    }
    kill_all(groups, n);
    _exit(0);
}

/* In the child, before anything else: nothing of tkd's but fd stays
 * open (no listener, no log, no terminal), and a signal to tkd's group
 * from a terminal does not reach it. No thread exists yet (proc.h). */
static void become_guard(int fd)
{
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int i = 0; i < (int)max; i++)
        if (i != fd)
            close(i);
    setsid();
    guard_main(fd);
}

int proc_guard_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -errno;
    /* No thread exists: nothing can spawn between socketpair and this. */
    (void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(sv[1], F_SETFD, FD_CLOEXEC);
#ifdef SO_NOSIGPIPE
    int one = 1;
    (void)setsockopt(sv[0], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return -e;
    }
    if (pid == 0)
        become_guard(sv[1]); /* never returns */
    close(sv[1]);
    guard_fd = sv[0];
    return 0;
}

static void tell(int32_t op, pid_t pgid)
{
    if (guard_fd < 0 || atomic_load(&guard_gone))
        return;
    guard_msg m = { .op = op, .pgid = (int32_t)pgid };
    pthread_mutex_lock(&send_mu);
    size_t sent = 0;
    while (sent < sizeof m) {
        ssize_t k =
            send(guard_fd, (char *)&m + sent, sizeof m - sent, SEND_FLAGS);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            atomic_store(&guard_gone, true);
            break;
        }
        sent += (size_t)k;
    }
    pthread_mutex_unlock(&send_mu);
}

void proc__guard_add(pid_t pgid)
{
    tell(1, pgid);
}

void proc__guard_remove(pid_t pgid)
{
    tell(0, pgid);
}
