/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "tsem.h"

static void must(int rv, const char *what)
{
    if (rv != 0) {
        char buf[128];
        fprintf(stderr, "ts_sem: %s: %s\n", what,
                tkc_strerror(rv, buf, sizeof buf));
        abort();
    }
}

void ts_sem_init(ts_sem *s, unsigned n)
{
    must(pthread_mutex_init(&s->mu, NULL), "pthread_mutex_init");
    must(tkc_cond_init(&s->cv), "tkc_cond_init");
    s->count = n;
}

void ts_sem_destroy(ts_sem *s)
{
    must(pthread_cond_destroy(&s->cv), "pthread_cond_destroy");
    must(pthread_mutex_destroy(&s->mu), "pthread_mutex_destroy");
}

void ts_sem_post(ts_sem *s)
{
    must(pthread_mutex_lock(&s->mu), "pthread_mutex_lock");
    s->count++;
    /* Signalled under the mutex: once a waiter has taken the count (it
     * needs the mutex for that) this thread touches s no more, so the
     * waiter may destroy it at once. */
    must(pthread_cond_signal(&s->cv), "pthread_cond_signal");
    must(pthread_mutex_unlock(&s->mu), "pthread_mutex_unlock");
}

void ts_sem_wait(ts_sem *s)
{
    must(pthread_mutex_lock(&s->mu), "pthread_mutex_lock");
    while (s->count == 0)
        must(pthread_cond_wait(&s->cv, &s->mu), "pthread_cond_wait");
    s->count--;
    must(pthread_mutex_unlock(&s->mu), "pthread_mutex_unlock");
}

bool ts_sem_trywait(ts_sem *s)
{
    must(pthread_mutex_lock(&s->mu), "pthread_mutex_lock");
    bool got = s->count > 0;
    if (got)
        s->count--;
    must(pthread_mutex_unlock(&s->mu), "pthread_mutex_unlock");
    return got;
}

bool ts_sem_wait_ms(ts_sem *s, int timeout_ms)
{
    int64_t until = tkc_mono_ns() + (int64_t)timeout_ms * 1000000;
    must(pthread_mutex_lock(&s->mu), "pthread_mutex_lock");
    while (s->count == 0) {
        int rv = tkc_cond_wait_until(&s->cv, &s->mu, until);
        if (rv == ETIMEDOUT)
            break;
        must(rv, "tkc_cond_wait_until");
    }
    bool got = s->count > 0;
    if (got)
        s->count--;
    must(pthread_mutex_unlock(&s->mu), "pthread_mutex_unlock");
    return got;
}
