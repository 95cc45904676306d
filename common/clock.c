/* SPDX-License-Identifier: MIT */
/* The monotonic clock and condition variables timed on it. */
#include <errno.h>
#include <time.h>

#include "port_config.h"

#include "common.h"

int64_t tkc_mono_ns(void)
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

int tkc_cond_init(pthread_cond_t *cv)
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

int tkc_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                        int64_t until_ns)
{
#if TK_HAVE_CONDATTR_SETCLOCK
    struct timespec until = to_timespec(until_ns);
    return pthread_cond_timedwait(cv, mu, &until);
#else
    int64_t left = until_ns - tkc_mono_ns();
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
    if (rv == ETIMEDOUT && tkc_mono_ns() < until_ns)
        return 0;
    return rv;
#endif
}
