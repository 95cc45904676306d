/* SPDX-License-Identifier: MIT */
/* Force-included (-include) by tools/apple/check in every file it
 * compiles for macOS: this machine has glibc's headers only, so this file
 * makes them say what macOS's say, for what tk could plausibly use:
 *
 *  - glibc functions that macOS lacks are redeclared
 *    __attribute__((unavailable)): a call is an error that says why;
 *  - functions macOS declares differently (strerror_r, qsort_r,
 *    pthread_setname_np, getentropy) or not at all where glibc does
 *    (environ) are hidden from glibc's headers by a macro around their
 *    #include, then declared as Apple does;
 *  - macros macOS lacks are #undef'd, and macOS's values given to those
 *    it defines otherwise (PATH_MAX, OPEN_MAX);
 *  - __GLIBC__ is #undef'd: tk's code chooses by the port's TK_HAVE_
 *    macros or __APPLE__, never by the C library's name.
 *
 * Each is checked against Apple's headers (the macOS SDK, Libc's and
 * XNU's) or man pages; the comment names where. A function not listed
 * here that glibc has and macOS lacks passes unnoticed: add it.
 * Linux-only headers fail in tools/apple/include/ (their own comments).
 *
 * glibc's headers are all included first, each once: later includes in
 * tk's files are no-ops, so a missing #include is not caught here (the
 * Linux builds catch it). */
#ifndef TK_APPLE_PRELUDE_H
#define TK_APPLE_PRELUDE_H
/* Its own declarations (unprototyped ones among them) are not tk's code:
 * no warnings of tk's flags here. Errors at a use still show. */
#pragma clang system_header

#if !defined(__APPLE__) || !defined(__MACH__) || defined(__linux__)
#error "tools/apple/prelude.h: compile with -target <arch>-apple-macos12"
#endif

#define TK_LINUX_ONLY(why)                                                     \
    __attribute__((unavailable("Linux/glibc only, not on macOS: " why)))

/* ---- glibc's declarations that macOS's differ from, hidden ---- */
#define strerror_r tk_glibc_strerror_r                 /* GNU: returns char * */
#define qsort_r tk_glibc_qsort_r                       /* GNU argument order */
#define pthread_setname_np tk_glibc_pthread_setname_np /* takes a thread */
#define environ tk_glibc_environ       /* no header declares it */
#define getentropy tk_glibc_getentropy /* <unistd.h> in glibc */
#define basename tk_glibc_gnu_basename /* GNU <string.h> basename */
#define pthread_barrier_t tk_glibc_pthread_barrier_t
#define pthread_barrierattr_t tk_glibc_pthread_barrierattr_t
#define pthread_spinlock_t tk_glibc_pthread_spinlock_t

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#undef strerror_r
#undef qsort_r
#undef pthread_setname_np
#undef environ
#undef getentropy
#undef basename
#undef pthread_barrier_t
#undef pthread_barrierattr_t
#undef pthread_spinlock_t

/* ---- as macOS declares them ---- */
/* <string.h>, strerror_r(3): the POSIX one ("int strerror_r(int errnum,
 * char *strerrbuf, size_t buflen);"), never GNU's char *. */
int strerror_r(int errnum, char *strerrbuf, size_t buflen);
/* <stdlib.h>, qsort_r(3): BSD's order, the thunk before the comparator
 * and passed to it first. */
void qsort_r(void *base, size_t nel, size_t width, void *thunk,
             int (*compar)(void *, const void *, const void *));
/* <pthread.h>: names the calling thread only. */
int pthread_setname_np(const char *name);
/* getentropy(2) is in <sys/random.h> on macOS (tools/apple/include), not
 * in <unistd.h>; `environ` is in no header (environ(7): a program declares
 * it; a library asks _NSGetEnviron(), <crt_externs.h>). */

/* <pthread.h>, pthread_cond_timedwait_relative_np: macOS's way to wait on
 * a condition variable by a relative time (it has no
 * pthread_condattr_setclock). */
int pthread_cond_timedwait_relative_np(pthread_cond_t *cond,
                                       pthread_mutex_t *mutex,
                                       const struct timespec *reltime);

/* <sys/semaphore.h>: unnamed semaphores are declared but deprecated, and
 * fail with ENOSYS (sem_init(2) is not in macOS's man pages); only named
 * ones (sem_open) work. sem_timedwait is absent (below). */
int sem_init(sem_t *, int, unsigned int) __attribute__((deprecated(
    "declared deprecated on macOS, where unnamed semaphores fail (ENOSYS)")));
int sem_destroy(sem_t *) __attribute__((deprecated(
    "declared deprecated on macOS, where unnamed semaphores fail (ENOSYS)")));
int sem_getvalue(sem_t *__restrict, int *__restrict) __attribute__((
    deprecated("declared deprecated on macOS (unnamed semaphores fail)")));

/* <unistd.h>: __OSX_DEPRECATED(10.0, 10.12, "syscall(2) is unsupported;
 * please switch to a supported interface"). */
long syscall(long, ...)
    __attribute__((deprecated("syscall(2) is deprecated on macOS since 10.12 "
                              "and has Darwin's numbers, not Linux's")));

/* ---- glibc's that macOS lacks (not in its SDK headers) ---- */
/* <unistd.h>, <fcntl.h>, <sys/socket.h> */
int pipe2(int[2], int)
    TK_LINUX_ONLY("pipe(2), then fcntl FD_CLOEXEC and O_NONBLOCK");
int dup3(int, int, int) TK_LINUX_ONLY("dup2(2), then fcntl FD_CLOEXEC");
/* Unprototyped: glibc's takes a transparent union, no other type matches. */
int accept4() TK_LINUX_ONLY("accept(2), then fcntl");
int close_range(unsigned int, unsigned int, int)
    TK_LINUX_ONLY("glibc 2.34; on macOS POSIX_SPAWN_CLOEXEC_DEFAULT or a loop");
void closefrom(int) TK_LINUX_ONLY("glibc 2.34");
int execvpe(const char *, char *const[], char *const[]) TK_LINUX_ONLY("GNU");
int fexecve(int, char *const[], char *const[]) TK_LINUX_ONLY("not on macOS");
__pid_t gettid(void) TK_LINUX_ONLY("on macOS pthread_threadid_np");
int getresuid(__uid_t *, __uid_t *, __uid_t *) TK_LINUX_ONLY("not on macOS");
int getresgid(__gid_t *, __gid_t *, __gid_t *) TK_LINUX_ONLY("not on macOS");
int setresuid(__uid_t, __uid_t, __uid_t) TK_LINUX_ONLY("not on macOS");
int setresgid(__gid_t, __gid_t, __gid_t) TK_LINUX_ONLY("not on macOS");
int syncfs(int) TK_LINUX_ONLY("not on macOS");
int posix_fallocate(int, __off_t, __off_t)
    TK_LINUX_ONLY("on macOS fcntl F_PREALLOCATE");
int posix_fadvise(int, __off_t, __off_t, int)
    TK_LINUX_ONLY("on macOS fcntl F_RDADVISE");
__ssize_t copy_file_range(int, __off64_t *, int, __off64_t *, size_t,
                          unsigned int) TK_LINUX_ONLY("on macOS copyfile(3)");
__ssize_t splice(int, __off64_t *, int, __off64_t *, size_t, unsigned int)
    TK_LINUX_ONLY("not on macOS");
__ssize_t tee(int, int, size_t, unsigned int) TK_LINUX_ONLY("not on macOS");
__ssize_t readahead(int, __off64_t, size_t)
    TK_LINUX_ONLY("on macOS fcntl F_RDADVISE");
int ppoll(struct pollfd *, nfds_t, const struct timespec *, const __sigset_t *)
    TK_LINUX_ONLY("poll(2) or pselect(2)");
/* <string.h>, <stdlib.h> */
const char *sigabbrev_np(int)
    TK_LINUX_ONLY("glibc 2.32; no signal names on macOS but sys_signame[]");
const char *sigdescr_np(int) TK_LINUX_ONLY("glibc 2.32; on macOS strsignal(3)");
const char *strerrordesc_np(int)
    TK_LINUX_ONLY("glibc 2.32; on macOS strerror_r(3)");
const char *strerrorname_np(int) TK_LINUX_ONLY("glibc 2.32");
void explicit_bzero(void *, size_t) TK_LINUX_ONLY("on macOS memset_s(3)");
void *memrchr(const void *, int, size_t) TK_LINUX_ONLY("GNU");
void *mempcpy(void *__restrict, const void *__restrict, size_t)
    TK_LINUX_ONLY("GNU");
char *strchrnul(const char *, int) TK_LINUX_ONLY("GNU");
void *rawmemchr(const void *, int) TK_LINUX_ONLY("GNU");
int strverscmp(const char *, const char *) TK_LINUX_ONLY("GNU");
char *secure_getenv(const char *)
    TK_LINUX_ONLY("on macOS issetugid(2) and getenv");
extern char *program_invocation_name TK_LINUX_ONLY("on macOS getprogname(3)");
extern char *
    program_invocation_short_name TK_LINUX_ONLY("on macOS getprogname(3)");
/* <sys/random.h> is macOS's in tools/apple/include: getentropy only. */
__ssize_t getrandom(void *, size_t, unsigned int)
    TK_LINUX_ONLY("on macOS getentropy(2) or arc4random_buf(3)");
/* <pthread.h> */
int pthread_condattr_setclock(pthread_condattr_t *, __clockid_t)
    TK_LINUX_ONLY("on macOS pthread_cond_timedwait_relative_np");
int pthread_condattr_getclock(const pthread_condattr_t *__restrict,
                              __clockid_t *__restrict)
    TK_LINUX_ONLY("not on macOS");
int pthread_cond_clockwait(pthread_cond_t *__restrict,
                           pthread_mutex_t *__restrict, __clockid_t,
                           const struct timespec *__restrict)
    TK_LINUX_ONLY("glibc 2.30");
int pthread_mutex_timedlock(pthread_mutex_t *__restrict,
                            const struct timespec *__restrict)
    TK_LINUX_ONLY("not on macOS");
int pthread_mutex_clocklock(pthread_mutex_t *__restrict, __clockid_t,
                            const struct timespec *__restrict)
    TK_LINUX_ONLY("glibc 2.30");
int pthread_rwlock_timedrdlock(pthread_rwlock_t *__restrict,
                               const struct timespec *__restrict)
    TK_LINUX_ONLY("not on macOS");
int pthread_rwlock_timedwrlock(pthread_rwlock_t *__restrict,
                               const struct timespec *__restrict)
    TK_LINUX_ONLY("not on macOS");
int pthread_tryjoin_np(pthread_t, void **) TK_LINUX_ONLY("GNU");
int pthread_timedjoin_np(pthread_t, void **, const struct timespec *)
    TK_LINUX_ONLY("GNU");
int pthread_clockjoin_np(pthread_t, void **, __clockid_t,
                         const struct timespec *) TK_LINUX_ONLY("GNU");
int pthread_getattr_np(pthread_t, pthread_attr_t *)
    TK_LINUX_ONLY("on macOS pthread_get_stacksize_np");
int pthread_setaffinity_np(pthread_t, size_t, const cpu_set_t *)
    TK_LINUX_ONLY("no CPU affinity on macOS");
int pthread_getaffinity_np(pthread_t, size_t, cpu_set_t *)
    TK_LINUX_ONLY("no CPU affinity on macOS");
int pthread_getcpuclockid(pthread_t, __clockid_t *)
    TK_LINUX_ONLY("not on macOS");
/* POSIX barriers and spin locks are optional; macOS has neither (the
 * types are hidden above, so a use is an unknown type name). */
int pthread_barrier_init() TK_LINUX_ONLY("no pthread barriers on macOS");
int pthread_barrier_wait() TK_LINUX_ONLY("no pthread barriers on macOS");
int pthread_barrier_destroy() TK_LINUX_ONLY("no pthread barriers on macOS");
int pthread_spin_init() TK_LINUX_ONLY("no pthread spin locks on macOS");
int pthread_spin_lock() TK_LINUX_ONLY("no pthread spin locks on macOS");
int pthread_spin_unlock() TK_LINUX_ONLY("no pthread spin locks on macOS");
/* <sched.h> */
int sched_getaffinity(__pid_t, size_t, cpu_set_t *)
    TK_LINUX_ONLY("no CPU affinity on macOS");
int sched_setaffinity(__pid_t, size_t, const cpu_set_t *)
    TK_LINUX_ONLY("no CPU affinity on macOS");
int sched_getcpu(void) TK_LINUX_ONLY("not on macOS");
int unshare(int) TK_LINUX_ONLY("namespaces are Linux's");
int setns(int, int) TK_LINUX_ONLY("namespaces are Linux's");
int clone(int (*)(void *), void *, int, void *, ...)
    TK_LINUX_ONLY("clone(2) is Linux's");
/* <time.h>, <signal.h>: macOS has clock_gettime (10.12) but no POSIX
 * timers, no clock_nanosleep, no real-time signals. */
int clock_nanosleep(__clockid_t, int, const struct timespec *,
                    struct timespec *)
    TK_LINUX_ONLY("on macOS nanosleep(2) with a relative time");
int clock_getcpuclockid(__pid_t, __clockid_t *) TK_LINUX_ONLY("not on macOS");
int timer_create(__clockid_t, struct sigevent *__restrict, timer_t *__restrict)
    TK_LINUX_ONLY("no POSIX timers on macOS: kqueue EVFILT_TIMER or setitimer");
int timer_settime(timer_t, int, const struct itimerspec *__restrict,
                  struct itimerspec *__restrict)
    TK_LINUX_ONLY("no POSIX timers on macOS");
int timer_delete(timer_t) TK_LINUX_ONLY("no POSIX timers on macOS");
int sigtimedwait(const sigset_t *__restrict, siginfo_t *__restrict,
                 const struct timespec *__restrict)
    TK_LINUX_ONLY("on macOS sigwait(2) or kqueue EVFILT_SIGNAL");
int sigwaitinfo(const sigset_t *__restrict, siginfo_t *__restrict)
    TK_LINUX_ONLY("on macOS sigwait(2)");
int sigqueue(__pid_t, int, const union sigval) TK_LINUX_ONLY("not on macOS");
int sem_timedwait(sem_t *__restrict, const struct timespec *__restrict)
    TK_LINUX_ONLY("on macOS a mutex and pthread_cond_timedwait, or "
                  "dispatch_semaphore_wait");
int sem_clockwait(sem_t *__restrict, __clockid_t,
                  const struct timespec *__restrict)
    TK_LINUX_ONLY("glibc 2.30");
/* <sys/mman.h> */
void *mremap(void *, size_t, size_t, int, ...) TK_LINUX_ONLY("not on macOS");
int memfd_create(const char *, unsigned int)
    TK_LINUX_ONLY("on macOS shm_open(2)");
/* <spawn.h>: macOS has ..._addchdir_np and ..._addfchdir_np (10.15) and
 * ..._addinherit_np with POSIX_SPAWN_CLOEXEC_DEFAULT (10.7), not these. */
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int)
    TK_LINUX_ONLY("glibc 2.34; on macOS POSIX_SPAWN_CLOEXEC_DEFAULT with "
                  "posix_spawn_file_actions_addinherit_np");
int posix_spawn_file_actions_addtcsetpgrp_np(posix_spawn_file_actions_t *, int)
    TK_LINUX_ONLY("glibc 2.35");
/* eventfd, signalfd, timerfd, epoll, inotify, prctl, pidfd_*, sysinfo:
 * their headers fail (tools/apple/include/sys/). */

/* ---- macros ---- */
#undef __GLIBC__
#undef __GLIBC_MINOR__
#undef __GNU_LIBRARY__
#undef TEMP_FAILURE_RETRY

/* <fcntl.h>: macOS has O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_DSYNC,
 * F_DUPFD_CLOEXEC; not these. */
#undef O_PATH
#undef O_TMPFILE
#undef O_DIRECT
#undef O_NOATIME
#undef O_LARGEFILE
#undef F_SETPIPE_SZ
#undef F_GETPIPE_SZ
#undef F_OFD_GETLK
#undef F_OFD_SETLK
#undef F_OFD_SETLKW
#undef F_SETSIG
#undef F_GETSIG
#undef F_ADD_SEALS
#undef F_GET_SEALS
#undef F_LINUX_SPECIFIC_BASE
#undef AT_EMPTY_PATH
#undef AT_NO_AUTOMOUNT
#undef AT_RECURSIVE
/* <sys/socket.h>: no type flags on macOS (fcntl after socket(2)), no
 * MSG_NOSIGNAL (setsockopt SO_NOSIGPIPE), no SO_PEERCRED (getpeereid(3),
 * LOCAL_PEERCRED). */
#undef SOCK_CLOEXEC
#undef SOCK_NONBLOCK
#undef MSG_NOSIGNAL
#undef MSG_MORE
#undef MSG_CMSG_CLOEXEC
#undef MSG_FASTOPEN
#undef MSG_ZEROCOPY
#undef SO_PEERCRED
#undef SO_PASSCRED
#undef SCM_CREDENTIALS
/* <time.h>: macOS has CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
 * CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID (10.12). */
#undef CLOCK_BOOTTIME
#undef CLOCK_BOOTTIME_ALARM
#undef CLOCK_REALTIME_ALARM
#undef CLOCK_REALTIME_COARSE
#undef CLOCK_MONOTONIC_COARSE
#undef CLOCK_TAI
/* <sys/wait.h>: macOS has waitid with P_PID, P_PGID, WEXITED, WNOWAIT. */
#undef P_PIDFD
#undef __WALL
#undef __WCLONE
#undef __WNOTHREAD
/* <signal.h>: no real-time signals on macOS. */
#undef SIGRTMIN
#undef SIGRTMAX
#undef SIGSTKFLT
#undef SIGPWR
#undef SIGPOLL
/* glibc spells SIGIO as SIGPOLL; macOS has SIGIO and SIGEMT, SIGINFO of
 * its own (<sys/signal.h>). The numbers here are glibc's free ones, not
 * macOS's (the signals both have keep glibc's numbering): only that they
 * are distinct constants matters to a compile check. */
#undef SIGIO
#define SIGIO 29
#define SIGEMT 16
#define SIGINFO 30
/* <sys/resource.h> */
#undef RLIMIT_RTPRIO
#undef RLIMIT_RTTIME
#undef RLIMIT_NICE
#undef RLIMIT_MSGQUEUE
#undef RLIMIT_SIGPENDING
#undef RLIMIT_LOCKS
/* <sys/mman.h>: macOS has MAP_ANON and MAP_ANONYMOUS, MAP_NORESERVE. */
#undef MAP_POPULATE
#undef MAP_LOCKED
#undef MAP_HUGETLB
#undef MAP_GROWSDOWN
#undef MAP_NONBLOCK
#undef MAP_FIXED_NOREPLACE
#undef MREMAP_MAYMOVE
/* <pthread.h> */
#undef PTHREAD_MUTEX_ADAPTIVE_NP
#undef PTHREAD_MUTEX_TIMED_NP
#undef PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
#undef PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP
#undef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
/* <limits.h>: <sys/syslimits.h>'s values; macOS has no HOST_NAME_MAX
 * (<sys/param.h>'s MAXHOSTNAMELEN is 256). */
#undef PATH_MAX
#define PATH_MAX 1024
#undef OPEN_MAX
#define OPEN_MAX 10240
#undef PIPE_BUF
#define PIPE_BUF 512
#undef HOST_NAME_MAX
#undef NGROUPS_MAX
#define NGROUPS_MAX 16

#endif
