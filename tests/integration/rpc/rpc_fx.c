/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the rpc core and libtkclient together share
 * (rpc_fx.h).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include <tk/client.h>

#include "fixture.h"
#include "rpc_fx.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"
#include "tsem.h"

/* ---- fixture: an in-process server with tk.test.Test (fixture.h) ------- */

/* The server of these tests: tk.test.Test, a grace of 5 s; o (may be NULL)
 * says the rest. */
void fx_start(ts_fx *fx, const ts_fx_opts *o)
{
    ts_fx_opts opts = o != NULL ? *o : (ts_fx_opts){ 0 };
    opts.tag = "rpc";
    opts.testsvc = true;
    opts.shutdown_grace_ms = 5000;
    ts_fx_start(fx, &opts);
}

/* testd, the same server as a process (args: more of its options). */
void daemon_start(ts_fx_daemon *d, const char *const *args)
{
    ts_fx_daemon_start(d, &(ts_fx_daemon_opts){ .testd = true, .args = args });
}

/* A wait bounded, so a broken server fails the test instead of hanging. */
void sem_wait_ok(ts_sem *s, const char *what)
{
    if (!ts_sem_wait_ms(s, 20000))
        fail_msg("timed out waiting for %s", what);
}

/* ---- calls in a thread ----------------------------------------------------
 */

int call_ping_like(tk_client *c, const char *method, const char *data,
                   uint32_t timeout_ms, tk_cancel *cancel, tk_status *st,
                   Tk__V1__PingReply **reply)
{
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    req.data.data = (uint8_t *)data;
    req.data.len = data ? strlen(data) : 0;
    tk_call_opts opts = { .timeout_ms = timeout_ms, .cancel = cancel };
    ProtobufCMessage *rep = NULL;
    int code = tk_call(c, method, (const ProtobufCMessage *)&req,
                       &tk__v1__ping_reply__descriptor, &rep, &opts, st);
    if (reply != NULL)
        *reply = (Tk__V1__PingReply *)rep;
    else if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    return code;
}

static void *async_main(void *arg)
{
    async_call *a = arg;
    call_ping_like(a->client, a->method, a->data, a->timeout_ms, a->cancel,
                   &a->st, &a->reply);
    atomic_store(&a->is_done, true);
    if (a->done != NULL)
        ts_sem_post(a->done);
    return NULL;
}

void async_start(async_call *a, tk_client *c, const char *method,
                 uint32_t timeout_ms, tk_cancel *cancel, const char *data)
{
    memset(a, 0, sizeof *a);
    a->client = c;
    a->method = method;
    a->timeout_ms = timeout_ms;
    a->cancel = cancel;
    if (data != NULL)
        snprintf(a->data, sizeof a->data, "%s", data);
    assert_int_equal(pthread_create(&a->thread, NULL, async_main, a), 0);
}

/* async_start, with done posted when the call returns. */
void async_start_done(async_call *a, tk_client *c, const char *method,
                      uint32_t timeout_ms, tk_cancel *cancel, ts_sem *done)
{
    memset(a, 0, sizeof *a);
    a->client = c;
    a->method = method;
    a->timeout_ms = timeout_ms;
    a->cancel = cancel;
    a->done = done;
    assert_int_equal(pthread_create(&a->thread, NULL, async_main, a), 0);
}

void async_join(async_call *a)
{
    pthread_join(a->thread, NULL);
}

void async_free(async_call *a)
{
    if (a->reply != NULL)
        protobuf_c_message_free_unpacked((ProtobufCMessage *)a->reply, NULL);
    tk_status_clear(&a->st);
}

/* ---- raw NNG: frames no client library would send ------------------------ */

/* A REQ socket that never resends, as libtkclient's: each frame goes out
 * once. Copies of a request are written by hand (spwire.h), never by
 * REQ's resend timer. */
void raw_open(raw *r, const char *url)
{
    assert_int_equal(nng_req0_open(&r->sock), 0);
    assert_int_equal(nng_socket_set_ms(r->sock, NNG_OPT_REQ_RESENDTIME,
                                       NNG_DURATION_INFINITE),
                     0);
    assert_int_equal(nng_socket_set_ms(r->sock, NNG_OPT_RECVTIMEO, 20000), 0);
    assert_int_equal(nng_dial(r->sock, url, NULL, 0), 0);
}

nng_msg *envelope(uint64_t id, const char *method, uint32_t timeout,
                  const ProtobufCMessage *payload)
{
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = id;
    env.method = (char *)method;
    env.timeout_ms = timeout;
    uint8_t buf[4096];
    if (payload != NULL) {
        env.payload.len = protobuf_c_message_pack(payload, buf);
        env.payload.data = buf;
    }
    nng_msg *m;
    assert_int_equal(nng_msg_alloc(&m, tk__v1__request__get_packed_size(&env)),
                     0);
    tk__v1__request__pack(&env, nng_msg_body(m));
    return m;
}

void raw_send(raw *r, raw_call *rc, nng_msg *m)
{
    assert_int_equal(nng_ctx_open(&rc->ctx, r->sock), 0);
    assert_int_equal(nng_aio_alloc(&rc->aio, NULL, NULL), 0);
    nng_aio_set_timeout(rc->aio, 20000);
    nng_aio_set_msg(rc->aio, m);
    nng_ctx_send(rc->ctx, rc->aio);
    nng_aio_wait(rc->aio);
    assert_int_equal(nng_aio_result(rc->aio), 0);
    nng_ctx_recv(rc->ctx, rc->aio);
}

Tk__V1__Reply *raw_reply(raw_call *rc)
{
    nng_aio_wait(rc->aio);
    assert_int_equal(nng_aio_result(rc->aio), 0);
    nng_msg *m = nng_aio_get_msg(rc->aio);
    Tk__V1__Reply *rep =
        tk__v1__reply__unpack(NULL, nng_msg_len(m), nng_msg_body(m));
    nng_msg_free(m);
    nng_aio_free(rc->aio);
    nng_ctx_close(rc->ctx);
    assert_non_null(rep);
    assert_non_null(rep->status);
    return rep;
}

Tk__V1__Reply *raw_roundtrip(raw *r, nng_msg *m)
{
    raw_call rc;
    raw_send(r, &rc, m);
    return raw_reply(&rc);
}

nng_msg *raw_bytes(const void *data, size_t len)
{
    nng_msg *m;
    assert_int_equal(nng_msg_alloc(&m, 0), 0);
    assert_int_equal(nng_msg_append(m, data, len), 0);
    return m;
}

void expect_ping_ok(tk_client *c)
{
    tk_status st;
    Tk__V1__PingReply *rep = NULL;
    int code =
        call_ping_like(c, "tk.v1.Control/Ping", "hello", 5000, NULL, &st, &rep);
    if (code != TK_OK)
        fail_msg("ping: %s %s", tk_code_name(code), st.message);
    assert_int_equal(rep->data.len, 5);
    assert_memory_equal(rep->data.data, "hello", 5);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);
}

/* ---- the fixture's only worker, held ---------------------------------------
 */

void hold_worker(ts_fx *fx, held *h)
{
    tk_cancel_new(&h->cancel);
    async_start(&h->call, fx->client, WAIT_METHOD, 30000, h->cancel, NULL);
    sem_wait_ok(&fx->svc.entered, "the worker to be busy");
}

/* Cancels the Wait (*outcome, if not NULL: the Cancel's outcome), waits for
 * it and frees it; returns what tk_cancel_fire returned. */
int release_worker(held *h, int *outcome)
{
    int rv = tk_cancel_fire(h->cancel, outcome);
    async_join(&h->call);
    async_free(&h->call);
    tk_cancel_free(h->cancel);
    return rv;
}
