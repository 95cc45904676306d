/* SPDX-License-Identifier: MIT */
/*
 * port — what differs between the systems tkd runs on (Linux, macOS), one
 * function per difference.
 *
 * Owns: each call that only some systems have, behind a check meson makes
 * (port_config.h, TK_HAVE_*), with a fallback that keeps the guarantee the
 * callers rely on; `-Dportable=true` forces every fallback on Linux, so
 * that the whole suite runs them there too (DESIGN.md, "Platforms"):
 *  - descriptors made close-on-exec at birth (pipe2, SOCK_CLOEXEC,
 *    accept4), or, where a system cannot, made and flagged while holding
 *    the spawn lock exclusively, so that no child is spawned in between
 *    (proc/ spawns holding it shared);
 *  - an event and a semaphore that poll(2) can wait on (eventfd, or a
 *    pipe: one byte per count);
 *  - signal names (sigabbrev_np, or a table of the POSIX ones);
 *  - the descriptors open in this process (/proc/self/fd, or /dev/fd);
 *  - the heap given back to the system (malloc_trim, or nothing where the
 *    allocator gives free pages back itself, as macOS's does), and the
 *    resident memory (/proc/self/statm, or unknown).
 * The differences tkd shares with the clients (the monotonic clock and
 * timed waits, wiping, error texts) are common/'s (common/common.h). The
 * descriptors stay here: making one takes the spawn lock where a system
 * cannot flag it at birth, state that common/ may not keep, and no client
 * makes descriptors of its own (NNG makes theirs).
 * May call: libc only (and pthreads), and common/, beneath tkd and the
 * clients alike (tkc_grow).
 * Must never: know of calls, NNG, protobuf or any other module; choose a
 * path by `__GLIBC__` or `__linux__` (the C library's or the kernel's
 * name) where a TK_HAVE_ check can decide; keep state but the spawn lock.
 */
#ifndef TK_SERVICE_PORT_H
#define TK_SERVICE_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- descriptors ------------------------------------------------------- */

/* The spawn lock. A spawn holds it shared from choosing which descriptors
 * the child must not get until posix_spawn returns; making a descriptor
 * that cannot be close-on-exec at birth holds it exclusively (port_pipe).
 * Where every descriptor is close-on-exec at birth and the child's others
 * are closed by posix_spawn itself, it is never contended. */
void port_spawn_lock(void);
void port_spawn_unlock(void);

/* A pipe whose two ends are close-on-exec; with nonblock, both ends are
 * non-blocking. 0 or -errno. */
int port_pipe(int p[2], bool nonblock);

/* A socket(2), close-on-exec and non-blocking: the descriptor, or
 * -errno. */
int port_socket(int domain, int type, int protocol);

/* accept(2) on a non-blocking listening socket (port_socket's: where the
 * flags are added after, it runs under the spawn lock): the connection's
 * descriptor, close-on-exec and non-blocking, or -errno (-EAGAIN: none
 * waiting). */
int port_accept(int fd);

/* The descriptors open in this process now, or -1 when it cannot tell. */
long port_fds_open(void);

/* Calls each(fd, arg) for every descriptor above 2 that is open and not
 * close-on-exec (what a spawned child would inherit), in ascending order;
 * stops at the first non-zero return and returns it. -errno when the
 * descriptors cannot be listed. Call it holding the spawn lock. */
int port_fds_inheritable(int (*each)(int fd, void *arg), void *arg);

/* ---- events and semaphores poll(2) can wait on -------------------------- */

/* An event: fd polls readable from port_event_set until port_event_clear.
 * An eventfd (fd == wfd), or a pipe. */
typedef struct port_event {
    int fd;  /* poll this for POLLIN */
    int wfd; /* set writes here */
} port_event;

#define PORT_EVENT_NONE ((port_event){ .fd = -1, .wfd = -1 })

/* 0 or -errno; close-on-exec, non-blocking. */
int port_event_open(port_event *e);
/* Closes both ends (an event of PORT_EVENT_NONE is left alone). */
void port_event_close(port_event *e);
/* Async-signal-safe; setting a set event changes nothing. */
void port_event_set(const port_event *e);
/* Makes fd not readable again. */
void port_event_clear(const port_event *e);

/* A counting semaphore: fd polls readable while a count is free. */
typedef struct port_sem {
    int fd;
    int wfd;
} port_sem;

/* The largest count a semaphore starts with (a pipe holds one byte per
 * count, and every system's pipe holds at least this many). */
#define PORT_SEM_MAX 4096u

/* Starts with n free counts (n <= PORT_SEM_MAX). 0, -EINVAL or -errno. */
int port_sem_open(port_sem *s, unsigned n);
void port_sem_close(port_sem *s);
/* Takes a count: true; false when none is free (never blocks). */
bool port_sem_trytake(const port_sem *s);
/* Gives one back. */
void port_sem_give(const port_sem *s);

/* ---- signals ------------------------------------------------------------- */

/* A signal's name without "SIG" ("KILL"), or NULL when it has none here. */
const char *port_signal_name(int sig);

/* ---- the heap ------------------------------------------------------------ */

/* Bytes the allocator holds free, which port_heap_trim can give back; -1
 * where it cannot tell. */
int64_t port_heap_idle_bytes(void);

/* Gives the free pages of every arena of the heap back to the system
 * (malloc_trim(0): whole free pages inside the heap too, not only its
 * top). Nothing where the allocator has no such call. */
void port_heap_trim(void);

/* The process's resident memory in bytes, or -1 when it cannot tell. */
int64_t port_rss_bytes(void);

/* For tests only: which fallbacks this build uses, one word each
 * ("pipe2" or "pipe+lock", ...), for the suite to log. */
const char *port__test_describe(void);

#endif
