/* SPDX-License-Identifier: MIT */
/* Signal names, the monotonic clock and condition variables timed on it,
 * wiping, and what this build chose. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "port_config.h"

#include "port.h"

#if !TK_HAVE_SIGABBREV_NP
/* POSIX's signals, and those of Linux and macOS that have a name. */
static const struct {
    int sig;
    const char *name;
} signal_names[] = {
#define NAME(s)                                                                \
    {                                                                          \
        SIG##s, #s                                                             \
    }
    NAME(HUP),    NAME(INT),  NAME(QUIT),  NAME(ILL),  NAME(TRAP), NAME(ABRT),
    NAME(BUS),    NAME(FPE),  NAME(KILL),  NAME(USR1), NAME(SEGV), NAME(USR2),
    NAME(PIPE),   NAME(ALRM), NAME(TERM),  NAME(CHLD), NAME(CONT), NAME(STOP),
    NAME(TSTP),   NAME(TTIN), NAME(TTOU),  NAME(URG),  NAME(XCPU), NAME(XFSZ),
    NAME(VTALRM), NAME(PROF), NAME(WINCH), NAME(SYS),
#ifdef SIGIO
    NAME(IO),
#endif
#ifdef SIGSTKFLT
    NAME(STKFLT),
#endif
#ifdef SIGPWR
    NAME(PWR),
#endif
#ifdef SIGEMT
    NAME(EMT),
#endif
#ifdef SIGINFO
    NAME(INFO),
#endif
#undef NAME
};
#endif

const char *port_signal_name(int sig)
{
#if TK_HAVE_SIGABBREV_NP
    return sigabbrev_np(sig);
#else
    for (size_t i = 0; i < sizeof signal_names / sizeof *signal_names; i++)
        if (signal_names[i].sig == sig)
            return signal_names[i].name;
    return NULL;
#endif
}

int64_t port_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec to_timespec(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000),
                              .tv_nsec = (long)(ns % 1000000000) };
}

int port_cond_init(pthread_cond_t *cv)
{
#if TK_HAVE_CONDATTR_SETCLOCK
    pthread_condattr_t mono;
    int rv = pthread_condattr_init(&mono);
    if (rv != 0)
        return rv;
    rv = pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    if (rv == 0)
        rv = pthread_cond_init(cv, &mono);
    pthread_condattr_destroy(&mono);
    return rv;
#else
    return pthread_cond_init(cv, NULL);
#endif
}

int port_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                         int64_t until_ns)
{
#if TK_HAVE_CONDATTR_SETCLOCK
    struct timespec until = to_timespec(until_ns);
    return pthread_cond_timedwait(cv, mu, &until);
#else
    int64_t left = until_ns - port_mono_ns();
    if (left <= 0)
        return ETIMEDOUT;
#if TK_HAVE_COND_TIMEDWAIT_RELATIVE_NP
    struct timespec rel = to_timespec(left);
    int rv = pthread_cond_timedwait_relative_np(cv, mu, &rel);
#else
    /* The cond runs on the realtime clock: aim at the realtime moment that
     * is left from now, and judge the timeout by the monotonic clock, so a
     * step of the realtime clock makes at most an early or late wake-up,
     * which the caller's loop absorbs. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    struct timespec until = to_timespec(now_ns + left);
    int rv = pthread_cond_timedwait(cv, mu, &until);
#endif
    if (rv == ETIMEDOUT && port_mono_ns() < until_ns)
        return 0;
    return rv;
#endif
}

void port_wipe(void *p, size_t len)
{
#if TK_HAVE_EXPLICIT_BZERO
    explicit_bzero(p, len);
#elif TK_HAVE_MEMSET_S
    memset_s(p, len, 0, len);
#else
    /* A call through a volatile pointer cannot be proven dead. */
    static void *(*const volatile set)(void *, int, size_t) = memset;
    set(p, 0, len);
#endif
}

const char *port__test_describe(void)
{
    return TK_PORT_DESCRIPTION;
}
