/* SPDX-License-Identifier: MIT */
/*
 * A counting semaphore for tests, on every system: a mutex, a condition
 * variable on the monotonic clock (tkc_cond_init) and a count. POSIX's
 * unnamed semaphores are no use for this on macOS, where sem_init fails
 * (ENOSYS) and sem_timedwait does not exist; and a wait here is bounded
 * by a relative timeout that a step of the wall clock cannot stretch or
 * cut short, as sem_timedwait's CLOCK_REALTIME deadline could.
 *
 * ts_sem_post is for threads, not signal handlers (it takes a mutex): a
 * test that turns a signal into a post does it from a thread in sigwait
 * (testd's releaser).
 */
#ifndef TK_TESTS_TSEM_H
#define TK_TESTS_TSEM_H

#include <pthread.h>
#include <stdbool.h>

typedef struct ts_sem {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned count;
} ts_sem;

/* Starts with n counts; aborts the test program when it cannot. */
void ts_sem_init(ts_sem *s, unsigned n);
/* No thread may be waiting on it or posting it. */
void ts_sem_destroy(ts_sem *s);
/* Adds a count and wakes one waiter. */
void ts_sem_post(ts_sem *s);
/* Takes a count, waiting for one as long as it takes. */
void ts_sem_wait(ts_sem *s);
/* Takes a count if one is there: true; false at once otherwise. */
bool ts_sem_trywait(ts_sem *s);
/* Takes a count, waiting at most timeout_ms (monotonic): true, or false
 * when none came in that time. */
bool ts_sem_wait_ms(ts_sem *s, int timeout_ms);

#endif
