/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * the queue and the workers (a call that expires in the queue does not
 * run, workers start as calls need them, a full queue refuses), and
 * tk.v1.Control/Stats while they are saturated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <tk/client.h>

#include "rpc_fx.h"
#include "stats.h"
#include "tk/v1/control.tk.h"
#include "tsem.h"

static void test_expired_in_queue_does_not_run(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 1, .queue_depth = 4 };
    fx_start(&fx, &o);
    held w;
    hold_worker(&fx, &w);
    /* The only worker is busy: this call waits in the queue past its
     * deadline, and is answered without running. */
    tk_status st;
    int code =
        call_ping_like(fx.client, WAIT_METHOD, NULL, 150, NULL, &st, NULL);
    assert_int_equal(code, TK_CODE_DEADLINE_EXCEEDED);
    assert_true(st.from_server);
    assert_string_equal(st.reason, "EXPIRED_IN_QUEUE");
    assert_int_equal(st.cause, TK_CAUSE_DEADLINE);
    tk_status_clear(&st);
    int outcome = -1;
    assert_int_equal(release_worker(&w, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_CANCELLED);
    ts_fx_stop(&fx); /* joins the workers: nothing else can still start */
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 1);
}

/* Workers start as calls need them (one at start): four calls at once
 * run at once on --workers 4, and a fifth waits in the queue for one of
 * them, no fifth worker starting. */
static void test_workers_start_as_calls_need_them(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 4, .queue_depth = 4 };
    fx_start(&fx, &o);
    held w[4];
    for (size_t i = 0; i < 4; i++)
        hold_worker(&fx, &w[i]);
    tk_status st;
    int code =
        call_ping_like(fx.client, WAIT_METHOD, NULL, 150, NULL, &st, NULL);
    assert_int_equal(code, TK_CODE_DEADLINE_EXCEEDED);
    assert_string_equal(st.reason, "EXPIRED_IN_QUEUE");
    tk_status_clear(&st);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(release_worker(&w[i], NULL), 0);
    /* And they serve on. */
    hold_worker(&fx, &w[0]);
    assert_int_equal(release_worker(&w[0], NULL), 0);
    ts_fx_stop(&fx);
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 5);
}

/* A server of one worker and a queue of one place, full: the worker held
 * by a Wait, a Wait waiting in the queue, and a third call refused at
 * once. Which of the last two is which depends on arrival order only. */
typedef struct saturated {
    held w;
    tk_cancel *cb, *cc;
    async_call b, c;
    ts_sem done;
    async_call *full;   /* answered at once, joined */
    async_call *queued; /* waiting (30 s, far longer than the test) */
} saturated;

static void saturate(ts_fx *fx, saturated *s)
{
    ts_fx_opts o = { .workers = 1, .queue_depth = 1 };
    fx_start(fx, &o);
    hold_worker(fx, &s->w);
    tk_cancel_new(&s->cb);
    tk_cancel_new(&s->cc);
    ts_sem_init(&s->done, 0);
    async_start_done(&s->b, fx->client, WAIT_METHOD, 30000, s->cb, &s->done);
    async_start_done(&s->c, fx->client, WAIT_METHOD, 30000, s->cc, &s->done);
    sem_wait_ok(&s->done, "the call that finds the queue full");
    assert_true(atomic_load(&s->b.is_done) != atomic_load(&s->c.is_done));
    s->full = atomic_load(&s->b.is_done) ? &s->b : &s->c;
    s->queued = s->full == &s->b ? &s->c : &s->b;
    async_join(s->full);
}

/* What saturate made, once its calls have ended. */
static void saturated_free(saturated *s)
{
    async_free(&s->b);
    async_free(&s->c);
    ts_sem_destroy(&s->done);
    tk_cancel_free(s->cb);
    tk_cancel_free(s->cc);
}

static void test_queue_full(void **state)
{
    (void)state;
    ts_fx fx;
    saturated sat;
    saturate(&fx, &sat);
    async_call *full = sat.full, *queued = sat.queued;
    assert_int_equal(full->st.code, TK_CODE_RESOURCE_EXHAUSTED);
    assert_string_equal(full->st.reason, "QUEUE_FULL");
    assert_true(full->st.retry_after_ms > 0);
    assert_true(full->st.from_server);
    /* The queued one is still waiting: cancelled, it never runs. */
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(queued->cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_CANCELLED);
    async_join(queued);
    assert_int_equal(queued->st.code, TK_CODE_CANCELLED);
    assert_int_equal(queued->st.cause, TK_CAUSE_CALLER);
    assert_true(queued->st.from_server);
    release_worker(&sat.w, NULL);
    saturated_free(&sat);
    ts_fx_stop(&fx);
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 1);
}

/* ---- tests: metrics (tk.v1.Control/Stats) -------------------------------- */

/* Stats is answered while every worker is busy and the queue is full,
 * which is when an operator wants it, and it says so: the queue's depth,
 * the busy worker, the call refused QUEUE_FULL, the calls in flight. Then
 * the queued call, cancelled, is counted by its code and cause. */
static void test_stats_while_saturated(void **state)
{
    (void)state;
    ts_fx fx;
    saturated sat;
    saturate(&fx, &sat);
    assert_string_equal(sat.full->st.reason, "QUEUE_FULL");

    Tk__V1__StatsReply *r = ts_stats(fx.client);
    const char *busy[] = { "state", "busy" };
    const char *qfull[] = { "reason", "QUEUE_FULL" };
    const char *expired[] = { "reason", "EXPIRED_IN_QUEUE" };
    const char *refused[] = { "code", "RESOURCE_EXHAUSTED", "method",
                              WAIT_METHOD };
    assert_true(ts_stat(r, "tk_queue_depth", 0, NULL) == 1);
    assert_true(ts_stat(r, "tk_queue_capacity", 0, NULL) == 1);
    assert_true(ts_stat(r, "tk_workers", 1, busy) == 1);
    assert_true(ts_stat(r, "tk_queue_rejected_total", 1, qfull) == 1);
    assert_true(ts_stat(r, "tk_queue_rejected_total", 1, expired) == 0);
    assert_true(ts_stat(r, "tk_calls_total", 2, refused) == 1);
    /* The running Wait, the queued one, and this Stats call. */
    assert_true(ts_stat(r, "tk_calls_in_flight", 0, NULL) == 3);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)r, NULL);

    int outcome = -1;
    assert_int_equal(tk_cancel_fire(sat.queued->cancel, &outcome), 0);
    async_join(sat.queued);
    assert_int_equal(sat.queued->st.code, TK_CODE_CANCELLED);
    release_worker(&sat.w, NULL);

    r = ts_stats(fx.client);
    const char *cancelled[] = { "code", "CANCELLED", "method", WAIT_METHOD };
    const char *caller[] = { "cause", "CALLER" };
    const char *wait[] = { "method", WAIT_METHOD };
    assert_true(ts_stat(r, "tk_calls_total", 2, cancelled) == 2);
    assert_true(ts_stat(r, "tk_call_cancellations_total", 1, caller) == 2);
    assert_true(ts_stat(r, "tk_queue_depth", 0, NULL) == 0);
    /* Waited in the queue: both that left it; ran: only the held one. */
    assert_true(ts_stat(r, "tk_call_queue_seconds", 1, wait) == 2);
    assert_true(ts_stat(r, "tk_call_run_seconds", 1, wait) == 1);
    assert_true(ts_stat(r, "tk_received_bytes_total", 0, NULL) > 0);
    assert_true(ts_stat(r, "tk_sent_bytes_total", 0, NULL) > 0);
    const char *ipc[] = { "transport", "ipc" };
    assert_true(ts_stat(r, "tk_connections", 1, ipc) >= 1);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)r, NULL);
    saturated_free(&sat);
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expired_in_queue_does_not_run),
        cmocka_unit_test(test_stats_while_saturated),
        cmocka_unit_test(test_queue_full),
        cmocka_unit_test(test_workers_start_as_calls_need_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
