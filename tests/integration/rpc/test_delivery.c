/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * delivery (a duplicate call id runs once, at most once, many threads on
 * one client).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include <tk/client.h>

#include "rpc_fx.h"
#include "spwire.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"

/* ---- tests: delivery
 * --------------------------------------------------------- */

/* The next frame on a hand-written REQ connection: the reply to request id
 * (the reply carries the id back, high bit set). */
static Tk__V1__Reply *sp_reply(int fd, uint32_t id)
{
    uint32_t got = 0;
    uint8_t *body = NULL;
    size_t len = 0;
    assert_int_equal(ts_sp_req_recv(fd, &got, &body, &len, 20000), 0);
    assert_int_equal(got, id | 0x80000000u);
    Tk__V1__Reply *rep = tk__v1__reply__unpack(NULL, len, body);
    free(body);
    assert_non_null(rep);
    assert_non_null(rep->status);
    return rep;
}

/* A client that did not disable resend: NNG's REQ writes an unanswered
 * request again, the same frame (request id and envelope) on the same
 * connection. The copies must not run the call again: those that come
 * while it runs or its reply is being sent are dropped without a reply
 * (the original answers, and REQ takes the first reply for the id), one
 * that comes after the answer is answered ALREADY_EXISTS and not run (REQ
 * discards that reply).
 *
 * The copies are written by hand (tests/support/spwire.h), not by a REQ
 * socket's resend timer: the test chooses when each goes, and waits on
 * testd's log for tkd to drop them. With a REQ socket resending every
 * 100 ms, a copy crossed the answer about one run in thirty, and its
 * reply coming in while the test closed the socket could hang nng_close
 * for good (NNG 1.5.2 leaves the pipe's receive started and never
 * finished; fixed in NNG 1.9.0 by aac4dc36). */
static void test_duplicate_call_id_runs_once(void **state)
{
    (void)state;
    ts_fx_daemon d;
    daemon_start(&d, NULL);
    int fd = ts_sp_req_open(d.url + strlen("ipc://"), 20000);
    assert_true(fd >= 0);
    const uint32_t req_id = 31000;
    const char *dropped = "dropped a resent copy of call 31 "; /* tkd's log */
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    /* 1 s: far longer than tkd takes to drop three copies, however slow
     * the build (a copy that came after it would be answered instead, and
     * the wait for the drops below would fail, not hang). */
    nng_msg *req = envelope(31, WAIT_METHOD, 1000, (ProtobufCMessage *)&ping);
    const void *frame = nng_msg_body(req);
    size_t frame_len = nng_msg_len(req);

    assert_int_equal(ts_sp_req_send(fd, req_id, frame, frame_len), 0);
    assert_true(ts_wait_output(&d.p, 1, "ENTERED Wait", 20000));
    /* Three resends while the call runs: each dropped, none answered. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(ts_sp_req_send(fd, req_id, frame, frame_len), 0);
    assert_true(ts_wait_output_n(&d.p, 2, dropped, 3, 20000));
    /* So the first frame back is the original's answer, at its deadline. */
    Tk__V1__Reply *rep = sp_reply(fd, req_id);
    assert_int_equal(rep->call_id, 31);
    assert_int_equal(rep->status->code, TK_CODE_DEADLINE_EXCEEDED);
    tk__v1__reply__free_unpacked(rep, NULL);

    /* A resend that crossed the answer: answered at once, not run. Until
     * tkd has seen the answer's send complete, a copy is dropped like the
     * others (an answer to it could overtake the original's), so the copy
     * goes once tkd says ANSWERED, asked on the same connection. */
    Tk__V1__CallStateRequest q = TK__V1__CALL_STATE_REQUEST__INIT;
    q.call_id = 31;
    for (uint32_t i = 1;; i++) {
        assert_true(i < 100000);
        nng_msg *ask = envelope(1000 + i, "tk.v1.Control/CallState", 5000,
                                (ProtobufCMessage *)&q);
        assert_int_equal(
            ts_sp_req_send(fd, req_id + i, nng_msg_body(ask), nng_msg_len(ask)),
            0);
        nng_msg_free(ask);
        rep = sp_reply(fd, req_id + i);
        assert_int_equal(rep->status->code, TK_OK);
        Tk__V1__CallStateReply *a = tk__v1__call_state_reply__unpack(
            NULL, rep->payload.len, rep->payload.data);
        bool answered = a->state == TK__V1__CALL_STATE_REPLY__STATE__ANSWERED;
        assert_true(answered ||
                    a->state == TK__V1__CALL_STATE_REPLY__STATE__RUNNING);
        tk__v1__call_state_reply__free_unpacked(a, NULL);
        tk__v1__reply__free_unpacked(rep, NULL);
        if (answered)
            break;
    }
    assert_int_equal(ts_sp_req_send(fd, req_id, frame, frame_len), 0);
    rep = sp_reply(fd, req_id);
    assert_int_equal(rep->call_id, 31);
    assert_int_equal(rep->status->code, TK_CODE_ALREADY_EXISTS);
    assert_string_equal(rep->status->reason, "DUPLICATE_CALL_ID");
    tk__v1__reply__free_unpacked(rep, NULL);
    nng_msg_free(req);
    close(fd);

    ts_signal(&d.p, SIGTERM);
    assert_int_equal(ts_finish(&d.p, 20000), 0);
    /* It ran once, and tkd answered call 31 twice (the original and the
     * late copy): the three dropped copies got nothing. */
    assert_int_equal(ts_count(d.p.out, "ENTERED Wait"), 1);
    assert_int_equal(ts_count(d.p.err, dropped), 3);
    assert_int_equal(ts_count(d.p.err, " id=31\n"), 2);
    ts_fx_daemon_stop(&d);
}

typedef struct dropper {
    nng_socket rep;
    int received;
} dropper;

/* A server that takes a request and drops the connection. */
static void *dropper_main(void *arg)
{
    dropper *d = arg;
    nng_msg *m;
    if (nng_recvmsg(d->rep, &m, 0) == 0) {
        d->received++;
        nng_pipe_close(nng_msg_get_pipe(m));
        nng_msg_free(m);
    }
    /* Would a resent copy arrive on the new connection? */
    if (nng_recvmsg(d->rep, &m, 0) == 0) {
        d->received++;
        nng_msg_free(m);
    }
    return NULL;
}

static int dropped_calls(const char *url, bool default_resend)
{
    dropper d = { 0 };
    assert_int_equal(nng_rep0_open(&d.rep), 0);
    assert_int_equal(nng_socket_set_ms(d.rep, NNG_OPT_RECVTIMEO, 1000), 0);
    assert_int_equal(nng_listen(d.rep, url, NULL, 0), 0);
    pthread_t t;
    pthread_create(&t, NULL, dropper_main, &d);
    if (default_resend) {
        /* What a plain REQ socket does: resend on the next connection. */
        nng_socket req;
        assert_int_equal(nng_req0_open(&req), 0);
        nng_socket_set_ms(req, NNG_OPT_RECONNMINT, 10);
        nng_socket_set_ms(req, NNG_OPT_RECVTIMEO, 2000);
        assert_int_equal(nng_dial(req, url, NULL, 0), 0);
        nng_msg *m = envelope(1, "tk.v1.Control/Ping", 1000, NULL);
        nng_sendmsg(req, m, 0);
        pthread_join(t, NULL);
        nng_close(req);
    } else {
        tk_client *c;
        assert_int_equal(tk_client_open(&c, url, NULL, 0), 0);
        tk_status st;
        int code = call_ping_like(c, "tk.v1.Control/Ping", NULL, 5000, NULL,
                                  &st, NULL);
        assert_int_equal(code, TK_CODE_UNAVAILABLE);
        assert_non_null(strstr(st.message, "not resent"));
        tk_status_clear(&st);
        pthread_join(t, NULL);
        tk_client_close(c);
    }
    nng_close(d.rep);
    return d.received;
}

static void test_at_most_once(void **state)
{
    (void)state;
    char dir[256], url[300];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "amo"), 0);
    snprintf(url, sizeof url, "ipc://%s/a.sock", dir);
    assert_int_equal(dropped_calls(url, false), 1);
    /* Negative control: NNG's default REQ delivers the request twice. */
    snprintf(url, sizeof url, "ipc://%s/b.sock", dir);
    assert_int_equal(dropped_calls(url, true), 2);
    ts_rmtree(dir);
}

typedef struct hammer {
    tk_client *c;
    int index;
    int failures;
    pthread_t t;
} hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    for (int i = 0; i < 100; i++) {
        char data[32];
        snprintf(data, sizeof data, "t%d-%d", h->index, i);
        tk_status st;
        Tk__V1__PingReply *rep = NULL;
        int code = call_ping_like(h->c, "tk.v1.Control/Ping", data, 10000, NULL,
                                  &st, &rep);
        if (code != TK_OK || rep->data.len != strlen(data) ||
            memcmp(rep->data.data, data, rep->data.len) != 0)
            h->failures++;
        if (rep != NULL)
            protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
        tk_status_clear(&st);
    }
    return NULL;
}

static void test_many_threads_one_client(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    hammer h[16];
    for (int i = 0; i < 16; i++) {
        h[i] = (hammer){ .c = fx.client, .index = i };
        pthread_create(&h[i].t, NULL, hammer_main, &h[i]);
    }
    int failures = 0;
    for (int i = 0; i < 16; i++) {
        pthread_join(h[i].t, NULL);
        failures += h[i].failures;
    }
    assert_int_equal(failures, 0);
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicate_call_id_runs_once),
        cmocka_unit_test(test_at_most_once),
        cmocka_unit_test(test_many_threads_one_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
