/* SPDX-License-Identifier: MIT */
/* tkcall's Ctrl-C: the signal thread owns SIGINT; the first one during a
 * call fires the call's cancel handle (tk_cancel_fire) from a thread of
 * its own, a second one, or one outside a call, exits 130.
 *
 * Owns: the signal thread and the canceller (sigctl in tkcall_int.h).
 * May call: libtkclient's tk_cancel_fire, usage.c (notes), pthreads.
 * Must never: touch the client but through the cancel handle; exit while
 * the canceller still uses the handle. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

static void *canceller_main(void *arg)
{
    sigctl *s = arg;
    int outcome = TK_CANCEL_NOT_SENT;
    if (tk_cancel_fire(s->cancel, &outcome) != 0)
        tkcall__note(
            "tkcall: the cancel did not reach tkd; still waiting for the "
            "reply (Ctrl-C again to exit now)\n");
    else if (outcome == TK_CANCEL_WRITE_CONTINUES)
        tkcall__note(
            "tkcall: the call is a write that has started: it runs to "
            "completion on tkd, and tkcall waits for its reply (Ctrl-C "
            "again to exit now)\n");
    pthread_mutex_lock(&s->done_mu);
    s->canceller_done = true;
    pthread_cond_signal(&s->done_cv);
    pthread_mutex_unlock(&s->done_mu);
    return NULL;
}

static bool start_canceller(sigctl *s)
{
    pthread_attr_t attr;
    pthread_t tid;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool ok = pthread_create(&tid, &attr, canceller_main, s) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}

static void *signal_main(void *arg)
{
    sigctl *s = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    int count = 0;
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGUSR1) { /* tkcall__sig_stop's wake-up, or a stray one */
            if (atomic_load(&s->quitting))
                break;
            continue;
        }
        /* Outside a call there is nothing to cancel: stop, as a second
         * Ctrl-C does. The call itself is left to tkd (the connection
         * closes, which cancels a read there). */
        if (++count > 1 || !atomic_load(&s->in_call) || !start_canceller(s)) {
            tkcall__note("tkcall: interrupted\n");
            _exit(TKCALL_EXIT_INTERRUPTED);
        }
        s->canceller_started = true;
    }
    return NULL;
}

/* Before any thread exists (NNG starts its own when the client opens):
 * every thread inherits the mask, so SIGINT reaches only sigwait. */
void tkcall__block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int tkcall__sig_start(sigctl *s)
{
    pthread_mutex_init(&s->done_mu, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    s->canceller_done = false;
    if (tk_cancel_new(&s->cancel) != TK_OK)
        return -1;
    atomic_init(&s->in_call, false);
    atomic_init(&s->quitting, false);
    s->started = pthread_create(&s->thread, NULL, signal_main, s) == 0;
    return s->started ? 0 : -1;
}

/* After it the handle and the client are free to go. */
void tkcall__sig_stop(sigctl *s)
{
    if (s->started) {
        atomic_store(&s->quitting, true);
        pthread_kill(s->thread, SIGUSR1);
        pthread_join(s->thread, NULL);
    }
    if (s->canceller_started) {
        pthread_mutex_lock(&s->done_mu);
        while (!s->canceller_done)
            pthread_cond_wait(&s->done_cv, &s->done_mu);
        pthread_mutex_unlock(&s->done_mu);
    }
    tk_cancel_free(s->cancel);
    pthread_cond_destroy(&s->done_cv);
    pthread_mutex_destroy(&s->done_mu);
}
