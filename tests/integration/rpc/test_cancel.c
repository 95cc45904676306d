/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * cancellation (its scope, CallState, a queued call, a running WRITE and
 * its commit point, a closed connection).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <nng/nng.h>

#include <tk/client.h>

#include "rpc_fx.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"
#include "tsem.h"

/* ---- tests: cancellation ----------------------------------------------------
 */

static void test_cancel_same_connection(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_cancel *cancel;
    tk_cancel_new(&cancel);
    async_call a;
    async_start(&a, fx.client, WAIT_METHOD, 30000, cancel, NULL);
    sem_wait_ok(&fx.svc.entered, "Wait to start");
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_CANCELLED);
    async_join(&a);
    assert_int_equal(a.st.code, TK_CODE_CANCELLED);
    assert_true(a.st.from_server);
    assert_int_equal(a.st.cause, TK_CAUSE_CALLER);
    assert_true(a.st.elapsed_us < 30000000);
    sem_wait_ok(&fx.svc.exited, "Wait to return");
    assert_int_equal(atomic_load(&fx.svc.last_cause), RPC_CAUSE_CALLER);
    async_free(&a);
    tk_cancel_free(cancel);
    ts_fx_stop(&fx);
}

static void test_cancel_before_send(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_cancel *cancel;
    tk_cancel_new(&cancel);
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_NOT_SENT);
    tk_status st;
    int code =
        call_ping_like(fx.client, WAIT_METHOD, NULL, 1000, cancel, &st, NULL);
    assert_int_equal(code, TK_CODE_CANCELLED);
    assert_false(st.from_server);
    assert_int_equal(st.cause, TK_CAUSE_CALLER);
    tk_status_clear(&st);
    tk_cancel_free(cancel);
    ts_fx_stop(&fx);
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 0);
}

static Tk__V1__CancelReply__Outcome raw_cancel(raw *r, uint64_t id)
{
    static _Atomic uint64_t next_id = 1u << 20; /* the Cancel's own id */
    Tk__V1__CancelRequest creq = TK__V1__CANCEL_REQUEST__INIT;
    creq.call_id = id;
    Tk__V1__Reply *rep = raw_roundtrip(
        r, envelope(atomic_fetch_add(&next_id, 1), "tk.v1.Control/Cancel", 1000,
                    (ProtobufCMessage *)&creq));
    assert_int_equal(rep->status->code, TK_OK);
    Tk__V1__CancelReply *cr =
        tk__v1__cancel_reply__unpack(NULL, rep->payload.len, rep->payload.data);
    Tk__V1__CancelReply__Outcome out = cr->outcome;
    tk__v1__cancel_reply__free_unpacked(cr, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
    return out;
}

static void test_cancel_scoped_to_connection(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;

    /* Another connection names the call: not found, call unaffected. */
    raw_call rc;
    raw_send(&r, &rc,
             envelope(4242, WAIT_METHOD, 400, (ProtobufCMessage *)&ping));
    sem_wait_ok(&fx.svc.entered, "Wait to start");
    Tk__V1__CancelRequest creq = TK__V1__CANCEL_REQUEST__INIT;
    creq.call_id = 4242;
    Tk__V1__CancelReply *crep = NULL;
    tk_status st;
    assert_int_equal(tk_control_cancel(fx.client, &creq, &crep, NULL, &st),
                     TK_OK);
    assert_int_equal(crep->outcome, TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)crep, NULL);
    tk_status_clear(&st);
    Tk__V1__Reply *rep = raw_reply(&rc);
    assert_int_equal(rep->status->code, TK_CODE_DEADLINE_EXCEEDED);
    tk__v1__reply__free_unpacked(rep, NULL);

    /* Negative control: the same Cancel from the call's own connection. */
    raw_send(&r, &rc,
             envelope(4243, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    sem_wait_ok(&fx.svc.entered, "Wait to start");
    assert_int_equal(raw_cancel(&r, 4243),
                     TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED);
    rep = raw_reply(&rc);
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    assert_int_equal(rep->status->cancellation->cause,
                     TK__V1__CANCELLATION__CAUSE__CALLER);
    tk__v1__reply__free_unpacked(rep, NULL);

    /* A finished call: ALREADY_DONE; an unknown id: NOT_FOUND. */
    assert_int_equal(raw_cancel(&r, 4243),
                     TK__V1__CANCEL_REPLY__OUTCOME__ALREADY_DONE);
    assert_int_equal(raw_cancel(&r, 999999),
                     TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND);
    nng_close(r.sock);
    ts_fx_stop(&fx);
}

static Tk__V1__CallStateReply__State raw_call_state(raw *r, uint64_t id)
{
    static _Atomic uint64_t next_id = 1u << 21; /* the question's own id */
    Tk__V1__CallStateRequest q = TK__V1__CALL_STATE_REQUEST__INIT;
    q.call_id = id;
    Tk__V1__Reply *rep = raw_roundtrip(
        r, envelope(atomic_fetch_add(&next_id, 1), "tk.v1.Control/CallState",
                    1000, (ProtobufCMessage *)&q));
    assert_int_equal(rep->status->code, TK_OK);
    Tk__V1__CallStateReply *a = tk__v1__call_state_reply__unpack(
        NULL, rep->payload.len, rep->payload.data);
    assert_non_null(a);
    Tk__V1__CallStateReply__State out = a->state;
    tk__v1__call_state_reply__free_unpacked(a, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
    return out;
}

/* The state of a call just sent, once tkd has registered it: the question
 * can overtake its call inside tkd (two receive contexts), and nothing but
 * asking again tells when the call is in. */
static Tk__V1__CallStateReply__State registered_state(raw *r, uint64_t id)
{
    for (int i = 0; i < 100000; i++) {
        Tk__V1__CallStateReply__State s = raw_call_state(r, id);
        if (s != TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND)
            return s;
    }
    fail_msg("call %llu never registered", (unsigned long long)id);
    return TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND;
}

/* The state of a call whose reply has come, once tkd has seen the reply's
 * send complete: until its send callback runs, tkd says RUNNING. */
static Tk__V1__CallStateReply__State settled_state(raw *r, uint64_t id)
{
    for (int i = 0; i < 100000; i++) {
        Tk__V1__CallStateReply__State s = raw_call_state(r, id);
        if (s != TK__V1__CALL_STATE_REPLY__STATE__RUNNING)
            return s;
    }
    fail_msg("call %llu still RUNNING after its reply", (unsigned long long)id);
    return TK__V1__CALL_STATE_REPLY__STATE__RUNNING;
}

/* CallState tells each phase of a call, on its own connection only, and
 * asking changes nothing (unlike a Cancel, it leaves no tombstone). */
static void test_call_state(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 1, .queue_depth = 4 };
    fx_start(&fx, &o);
    raw r, other;
    raw_open(&r, fx.url);
    raw_open(&other, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;

    raw_call running, queued;
    raw_send(&r, &running,
             envelope(601, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    sem_wait_ok(&fx.svc.entered, "Wait to start");
    assert_int_equal(raw_call_state(&r, 601),
                     TK__V1__CALL_STATE_REPLY__STATE__RUNNING);
    assert_int_equal(raw_call_state(&other, 601),
                     TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND);
    raw_send(&r, &queued,
             envelope(602, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    assert_int_equal(registered_state(&r, 602),
                     TK__V1__CALL_STATE_REPLY__STATE__QUEUED);

    assert_int_equal(raw_cancel(&r, 601),
                     TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED);
    Tk__V1__Reply *rep = raw_reply(&running);
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    tk__v1__reply__free_unpacked(rep, NULL);
    /* Its reply came, and once tkd has seen its send complete (a callback
     * of its own, which may still be queued: RUNNING until then), the
     * answer says so. */
    assert_int_equal(settled_state(&r, 601),
                     TK__V1__CALL_STATE_REPLY__STATE__ANSWERED);
    sem_wait_ok(&fx.svc.entered, "the queued Wait to start");
    assert_int_equal(raw_call_state(&r, 602),
                     TK__V1__CALL_STATE_REPLY__STATE__RUNNING);
    assert_int_equal(raw_cancel(&r, 602),
                     TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED);
    rep = raw_reply(&queued);
    tk__v1__reply__free_unpacked(rep, NULL);

    /* Asked before its call arrives, the call is not touched; a Cancel
     * in its place (the negative control) would have cancelled it. */
    assert_int_equal(raw_call_state(&r, 603),
                     TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND);
    rep = raw_roundtrip(
        &r, envelope(603, WAIT_METHOD, 300, (ProtobufCMessage *)&ping));
    assert_int_equal(rep->status->code, TK_CODE_DEADLINE_EXCEEDED);
    tk__v1__reply__free_unpacked(rep, NULL);
    assert_int_equal(raw_cancel(&r, 604),
                     TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND);
    rep = raw_roundtrip(
        &r, envelope(604, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    tk__v1__reply__free_unpacked(rep, NULL);
    assert_int_equal(raw_call_state(&r, 0),
                     TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND);
    nng_close(other.sock);
    nng_close(r.sock);
    ts_fx_stop(&fx);
}

/* The reaper sleeps until the earliest deadline in the queue, and a call
 * wakes it only when it brings an earlier one: a short call queued behind
 * a long one still expires on time. Judged by the order of events, in
 * tkd's own words: when the short call's answer comes, the long one still
 * waits in the queue. A reaper that slept until the long one's deadline
 * (30 s) would answer both then; the short one's raw_reply gives up
 * before, after 20 s. */
static void test_expired_in_queue_behind_a_later_deadline(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 1, .queue_depth = 4 };
    fx_start(&fx, &o);
    held w;
    hold_worker(&fx, &w);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    raw_call later, soon;
    raw_send(&r, &later,
             envelope(801, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    assert_int_equal(registered_state(&r, 801),
                     TK__V1__CALL_STATE_REPLY__STATE__QUEUED);
    raw_send(&r, &soon,
             envelope(802, WAIT_METHOD, 150, (ProtobufCMessage *)&ping));
    Tk__V1__Reply *rep = raw_reply(&soon);
    assert_int_equal(rep->status->code, TK_CODE_DEADLINE_EXCEEDED);
    assert_string_equal(rep->status->reason, "EXPIRED_IN_QUEUE");
    tk__v1__reply__free_unpacked(rep, NULL);
    assert_int_equal(raw_call_state(&r, 801),
                     TK__V1__CALL_STATE_REPLY__STATE__QUEUED);
    assert_int_equal(raw_cancel(&r, 801),
                     TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED);
    rep = raw_reply(&later);
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    tk__v1__reply__free_unpacked(rep, NULL);
    nng_close(r.sock);
    assert_int_equal(release_worker(&w, NULL), 0);
    ts_fx_stop(&fx);
}

static void test_cancel_queued_call_never_runs(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 1, .queue_depth = 4 };
    fx_start(&fx, &o);
    held w;
    hold_worker(&fx, &w);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    /* A READ and a WRITE wait in the queue behind the busy worker; a
     * Cancel is answered inline all the same. NOT_FOUND means the Cancel
     * overtook its call inside the server, which then cancels the call on
     * arrival: either way the call must end CANCELLED without running. */
    static const struct {
        uint64_t id;
        const char *method;
    } queued[] = { { 501, WAIT_METHOD }, { 502, WRITE_METHOD } };
    for (size_t i = 0; i < 2; i++) {
        raw_call rc;
        raw_send(&r, &rc,
                 envelope(queued[i].id, queued[i].method, 30000,
                          (ProtobufCMessage *)&ping));
        Tk__V1__CancelReply__Outcome out = raw_cancel(&r, queued[i].id);
        assert_true(out == TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED ||
                    out == TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND);
        Tk__V1__Reply *rep = raw_reply(&rc);
        assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
        assert_int_equal(rep->status->cancellation->cause,
                         TK__V1__CANCELLATION__CAUSE__CALLER);
        assert_false(rep->status->cancellation->write_completed);
        tk__v1__reply__free_unpacked(rep, NULL);
    }
    nng_close(r.sock);
    release_worker(&w, NULL);
    ts_fx_stop(&fx);
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 1);
    assert_int_equal(atomic_load(&fx.svc.write_runs), 0);
}

/* A Cancel that arrives before its call (NOT_FOUND, remembered) cancels
 * the call when it arrives, and the call is answered at once though every
 * worker is busy: not when the queue's reaper next wakes for the earliest
 * deadline (here a queued call's, 25 s, after raw_reply gives up). */
static void test_cancel_before_its_call(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .workers = 1, .queue_depth = 4 };
    fx_start(&fx, &o);
    held w;
    hold_worker(&fx, &w);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    raw_call filler; /* queued, the earliest deadline the reaper waits for */
    raw_send(&r, &filler,
             envelope(776, WAIT_METHOD, 25000, (ProtobufCMessage *)&ping));
    /* In tkd before the Cancels below: a later frame can overtake it
     * between tkd's receive contexts (the tsan --load soak saw the last
     * Cancel find no 776). */
    assert_int_equal(registered_state(&r, 776),
                     TK__V1__CALL_STATE_REPLY__STATE__QUEUED);
    assert_int_equal(raw_cancel(&r, 777),
                     TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND);
    raw_call rc;
    raw_send(&r, &rc,
             envelope(777, WAIT_METHOD, 30000, (ProtobufCMessage *)&ping));
    Tk__V1__Reply *rep = raw_reply(&rc); /* fails after 20 s, not 30 */
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    assert_int_equal(rep->status->cancellation->cause,
                     TK__V1__CANCELLATION__CAUSE__CALLER);
    tk__v1__reply__free_unpacked(rep, NULL);
    assert_int_equal(raw_cancel(&r, 776),
                     TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED);
    rep = raw_reply(&filler);
    assert_int_equal(rep->status->code, TK_CODE_CANCELLED);
    tk__v1__reply__free_unpacked(rep, NULL);
    nng_close(r.sock);
    release_worker(&w, NULL);
    ts_fx_stop(&fx);
    assert_int_equal(atomic_load(&fx.svc.wait_runs), 1);
}

static void test_cancel_running_write_continues(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    fx.svc.use_release = true;
    tk_cancel *cancel;
    tk_cancel_new(&cancel);
    async_call w;
    async_start(&w, fx.client, WRITE_METHOD, 30000, cancel, NULL);
    sem_wait_ok(&fx.svc.entered, "the write to start");
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_WRITE_CONTINUES);
    ts_sem_post(&fx.svc.release); /* the write finishes its work */
    async_join(&w);
    assert_int_equal(w.st.code, TK_OK);
    assert_true(w.st.write_completed);
    assert_int_equal(w.st.cause, TK_CAUSE_NONE);
    assert_int_equal(w.reply->data.len, 7);
    assert_memory_equal(w.reply->data.data, "written", 7);
    async_free(&w);
    tk_cancel_free(cancel);
    ts_fx_stop(&fx);
}

/* A READ with a write inside: cancellable until its commit point, then it
 * completes as a started WRITE does. */
static void test_commit_point(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_cancel *cancel;
    tk_cancel_new(&cancel);
    async_call c;
    int outcome = -1;

    /* Cancelled before the point: nothing is written. */
    async_start(&c, fx.client, "tk.test.Test/Commit", 30000, cancel, NULL);
    sem_wait_ok(&fx.svc.entered, "Commit to start");
    assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_CANCELLED);
    ts_sem_post(&fx.svc.release);
    async_join(&c);
    assert_int_equal(c.st.code, TK_CODE_CANCELLED);
    assert_int_equal(c.st.cause, TK_CAUSE_CALLER);
    assert_false(c.st.write_completed);
    async_free(&c);
    tk_cancel_free(cancel);

    /* Past the point: the Cancel says the write continues. */
    tk_cancel_new(&cancel);
    async_start(&c, fx.client, "tk.test.Test/Commit", 30000, cancel, NULL);
    sem_wait_ok(&fx.svc.entered, "Commit to start");
    ts_sem_post(&fx.svc.release);
    sem_wait_ok(&fx.svc.entered, "Commit to pass its commit point");
    assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_WRITE_CONTINUES);
    ts_sem_post(&fx.svc.release);
    async_join(&c);
    assert_int_equal(c.st.code, TK_OK);
    assert_true(c.st.write_completed);
    assert_int_equal(c.reply->data.len, 9);
    async_free(&c);
    tk_cancel_free(cancel);
    ts_fx_stop(&fx);
}

static void test_connection_close_cancels_reads(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    raw_call rc;
    raw_send(&r, &rc,
             envelope(7, WAIT_METHOD, 0, /* method default: 60 s */
                      (ProtobufCMessage *)&ping));
    sem_wait_ok(&fx.svc.entered, "Wait to start");
    nng_aio_free(rc.aio);
    nng_close(r.sock); /* the caller goes away */
    sem_wait_ok(&fx.svc.exited, "Wait to be cancelled");
    assert_int_equal(atomic_load(&fx.svc.last_cause), RPC_CAUSE_CALLER);
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_same_connection),
        cmocka_unit_test(test_cancel_before_send),
        cmocka_unit_test(test_cancel_scoped_to_connection),
        cmocka_unit_test(test_call_state),
        cmocka_unit_test(test_expired_in_queue_behind_a_later_deadline),
        cmocka_unit_test(test_cancel_queued_call_never_runs),
        cmocka_unit_test(test_cancel_before_its_call),
        cmocka_unit_test(test_cancel_running_write_continues),
        cmocka_unit_test(test_commit_point),
        cmocka_unit_test(test_connection_close_cancels_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
