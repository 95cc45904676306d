/* SPDX-License-Identifier: MIT */
/* Descriptors: close-on-exec pipes and sockets, the spawn lock, events and
 * semaphores poll(2) can wait on, and listing what a child would inherit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "port_config.h"

#if TK_HAVE_EVENTFD
#include <sys/eventfd.h>
#endif

#include "common/common.h"
#include "port.h"

static pthread_rwlock_t spawn_lock = PTHREAD_RWLOCK_INITIALIZER;

void port_spawn_lock(void)
{
    pthread_rwlock_rdlock(&spawn_lock);
}

void port_spawn_unlock(void)
{
    pthread_rwlock_unlock(&spawn_lock);
}

/* Where a descriptor cannot be made with its flags, they are added after,
 * holding the spawn lock exclusively. */
#define TK_PORT_ADD_FLAGS                                                      \
    (!TK_HAVE_PIPE2 || !TK_HAVE_SOCK_CLOEXEC || !TK_HAVE_ACCEPT4)

#if TK_PORT_ADD_FLAGS
static int add_flags(int fd, bool nonblock)
{
    int fdfl = fcntl(fd, F_GETFD);
    if (fdfl < 0 || fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) != 0)
        return -errno;
    if (!nonblock)
        return 0;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return -errno;
    return 0;
}
#endif

int port_pipe(int p[2], bool nonblock)
{
#if TK_HAVE_PIPE2
    return pipe2(p, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0)) == 0 ? 0 : -errno;
#else
    /* Exclusively: no spawn may choose its child's descriptors between the
     * pipe and its close-on-exec flags. */
    pthread_rwlock_wrlock(&spawn_lock);
    int rv = pipe(p) == 0 ? 0 : -errno;
    if (rv == 0) {
        rv = add_flags(p[0], nonblock);
        if (rv == 0)
            rv = add_flags(p[1], nonblock);
        if (rv != 0) {
            close(p[0]);
            close(p[1]);
        }
    }
    pthread_rwlock_unlock(&spawn_lock);
    return rv;
#endif
}

#if TK_PORT_ADD_FLAGS
/* fd (or -errno) with its flags added, under the spawn lock the caller
 * took exclusively; closed when they cannot be. */
static int flagged(int fd)
{
    int rv = fd < 0 ? -errno : add_flags(fd, true);
    pthread_rwlock_unlock(&spawn_lock);
    if (fd >= 0 && rv != 0)
        close(fd);
    return rv != 0 ? rv : fd;
}
#endif

int port_socket(int domain, int type, int protocol)
{
#if TK_HAVE_SOCK_CLOEXEC
    int fd = socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
    return fd >= 0 ? fd : -errno;
#else
    pthread_rwlock_wrlock(&spawn_lock);
    return flagged(socket(domain, type, protocol));
#endif
}

int port_accept(int fd)
{
#if TK_HAVE_ACCEPT4
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return c >= 0 ? c : -errno;
#else
    /* Not inherited from the listening socket where accept4 is missing
     * (macOS): O_NONBLOCK is per open file, and this is a new one. */
    pthread_rwlock_wrlock(&spawn_lock);
    return flagged(accept(fd, NULL, NULL));
#endif
}

/* The directory that lists this process's descriptors. */
static DIR *open_fd_dir(void)
{
#if TK_HAVE_PROC_SELF_FD
    DIR *d = opendir("/proc/self/fd");
    if (d != NULL)
        return d;
#endif
    return opendir("/dev/fd");
}

long port_fds_open(void)
{
    DIR *d = open_fd_dir();
    if (d == NULL)
        return -1;
    long n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int port_fds_inheritable(int (*each)(int fd, void *arg), void *arg)
{
    DIR *d = open_fd_dir();
    if (d == NULL)
        return -errno;
    int own = dirfd(d);
    int *fds = NULL;
    size_t n = 0, cap = 0;
    int rv = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end != '\0' || fd <= 2 || fd == own ||
            fd > INT32_MAX)
            continue;
        int fl = fcntl((int)fd, F_GETFD);
        if (fl < 0 || (fl & FD_CLOEXEC))
            continue;
        int *grown = tkc_grow(fds, &cap, n + 1, sizeof *fds, 16);
        if (grown == NULL) {
            rv = -ENOMEM;
            break;
        }
        fds = grown;
        fds[n++] = (int)fd;
    }
    closedir(d);
    if (rv == 0 && n > 0) {
        qsort(fds, n, sizeof *fds, cmp_int);
        for (size_t i = 0; i < n && rv == 0; i++)
            rv = each(fds[i], arg);
    }
    free(fds);
    return rv;
}

/* ---- events ----------------------------------------------------------------
 */

int port_event_open(port_event *e)
{
    *e = PORT_EVENT_NONE;
#if TK_HAVE_EVENTFD
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0)
        return -errno;
    e->fd = e->wfd = fd;
    return 0;
#else
    int p[2];
    int rv = port_pipe(p, true);
    if (rv == 0) {
        e->fd = p[0];
        e->wfd = p[1];
    }
    return rv;
#endif
}

/* Closes an eventfd (fd == wfd) or both ends of a pipe; -1 both after. */
static void close_pair(int *fd, int *wfd)
{
    if (*fd >= 0)
        close(*fd);
    if (*wfd >= 0 && *wfd != *fd)
        close(*wfd);
    *fd = *wfd = -1;
}

void port_event_close(port_event *e)
{
    close_pair(&e->fd, &e->wfd);
}

void port_event_set(const port_event *e)
{
#if TK_HAVE_EVENTFD
    uint64_t one = 1;
    ssize_t n = write(e->wfd, &one, sizeof one);
#else
    /* A full pipe (EAGAIN) is a set event all the same. */
    ssize_t n = write(e->wfd, "", 1);
#endif
    (void)n;
}

void port_event_clear(const port_event *e)
{
    /* An eventfd's read takes the whole count; a pipe is read until
     * empty. */
    char buf[64];
    while (read(e->fd, buf, sizeof buf) > 0)
        ;
}

/* ---- semaphores ---------------------------------------------------------- */

int port_sem_open(port_sem *s, unsigned n)
{
    s->fd = s->wfd = -1;
    if (n > PORT_SEM_MAX)
        return -EINVAL;
#if TK_HAVE_EVENTFD
    int fd = eventfd(n, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    s->fd = s->wfd = fd;
    return 0;
#else
    int p[2];
    int rv = port_pipe(p, true);
    if (rv != 0)
        return rv;
    s->fd = p[0];
    s->wfd = p[1];
    static const char counts[256];
    for (unsigned left = n; left > 0;) {
        size_t k = left < sizeof counts ? left : sizeof counts;
        ssize_t w = write(s->wfd, counts, k);
        if (w <= 0) {
            rv = w < 0 && errno != EAGAIN ? -errno : -ENOSPC;
            port_sem_close(s);
            return rv;
        }
        left -= (unsigned)w;
    }
    return 0;
#endif
}

void port_sem_close(port_sem *s)
{
    close_pair(&s->fd, &s->wfd);
}

bool port_sem_trytake(const port_sem *s)
{
#if TK_HAVE_EVENTFD
    uint64_t v;
    return read(s->fd, &v, sizeof v) == (ssize_t)sizeof v;
#else
    char c;
    return read(s->fd, &c, 1) == 1;
#endif
}

void port_sem_give(const port_sem *s)
{
#if TK_HAVE_EVENTFD
    uint64_t one = 1;
    while (write(s->wfd, &one, sizeof one) < 0 && errno == EINTR)
        ;
#else
    /* Never more counts than it started with, so the pipe has room. */
    while (write(s->wfd, "", 1) < 0 && errno == EINTR)
        ;
#endif
}
