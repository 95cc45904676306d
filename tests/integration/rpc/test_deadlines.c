/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * deadlines, the method ceiling, and the client's wait past the deadline
 * against a scripted tkd.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include <tk/client.h>

#include "rpc_fx.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"

/* ---- tests: deadlines
 * -------------------------------------------------------- */

static void test_deadline_expiry(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_status st;
    int code =
        call_ping_like(fx.client, WAIT_METHOD, NULL, 200, NULL, &st, NULL);
    assert_int_equal(code, TK_CODE_DEADLINE_EXCEEDED);
    assert_true(st.from_server); /* the server's own answer, not a timeout */
    assert_int_equal(st.cause, TK_CAUSE_DEADLINE);
    assert_true(st.elapsed_us >= 200000);
    sem_wait_ok(&fx.svc.exited, "Wait to return");
    assert_int_equal(atomic_load(&fx.svc.last_cause), RPC_CAUSE_DEADLINE);
    tk_status_clear(&st);
    ts_fx_stop(&fx);
}

/* The method's ceiling caps the caller's timeout: 30 s asked of a method
 * whose ceiling is 300 ms ends after about 300 ms, by the server's clock. */
static void test_deadline_capped_by_ceiling(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_status st;
    int code = call_ping_like(fx.client, "tk.test.Test/Capped", NULL, 30000,
                              NULL, &st, NULL);
    assert_int_equal(code, TK_CODE_DEADLINE_EXCEEDED);
    assert_true(st.from_server);
    assert_int_equal(st.cause, TK_CAUSE_DEADLINE);
    assert_true(st.elapsed_us >= 300000);
    if (st.elapsed_us >= 10000000)
        fail_msg("the server ran it %llu us: not capped at 300 ms",
                 (unsigned long long)st.elapsed_us);
    sem_wait_ok(&fx.svc.exited, "Capped to return");
    assert_int_equal(atomic_load(&fx.svc.last_cause), RPC_CAUSE_DEADLINE);
    tk_status_clear(&st);

    /* The timeout in force, as the handler sees it: the caller's, or the
     * method's default for 0. */
    static const struct {
        uint32_t asked;
        const char *in_force;
    } cases[] = { { 30000, "30000" }, { 0, "7000" }, { 1500, "1500" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Tk__V1__PingReply *rep = NULL;
        code = call_ping_like(fx.client, "tk.test.Test/Timeout", NULL,
                              cases[i].asked, NULL, &st, &rep);
        assert_int_equal(code, TK_OK);
        assert_int_equal(rep->data.len, strlen(cases[i].in_force));
        assert_memory_equal(rep->data.data, cases[i].in_force, rep->data.len);
        protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
        tk_status_clear(&st);
    }
    ts_fx_stop(&fx);
}

/* A handler's encoded prefix arrives as fields of the reply message, with
 * the fields it set in the message. */
static void test_reply_prefix(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_status st;
    Tk__V1__PingReply *rep = NULL;
    int code = call_ping_like(fx.client, "tk.test.Test/Prefix", NULL, 0, NULL,
                              &st, &rep);
    assert_int_equal(code, TK_OK);
    assert_string_equal(rep->server_version, "from the prefix");
    assert_int_equal(rep->data.len, 5);
    assert_memory_equal(rep->data.data, "after", 5);
    assert_int_equal(rep->uptime_ms, 7);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);
    /* A call that fails after setting a prefix sends no payload at all. */
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    req.data = (ProtobufCBinaryData){ 4, (uint8_t *)"fail" };
    Tk__V1__Reply *env = raw_roundtrip(
        &r, envelope(5, "tk.test.Test/Prefix", 5000, (ProtobufCMessage *)&req));
    assert_int_equal(env->status->code, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(env->status->reason, "ASKED_TO_FAIL");
    assert_int_equal(env->payload.len, 0);
    tk__v1__reply__free_unpacked(env, NULL);
    nng_close(r.sock);
    ts_fx_stop(&fx);
}

/* A server that answers one request with canned bytes. */
typedef struct canned {
    nng_socket rep;
    const uint8_t *bytes;
    size_t len;
} canned;

static void *canned_main(void *arg)
{
    canned *c = arg;
    nng_msg *msg;
    if (nng_recvmsg(c->rep, &msg, 0) != 0)
        return NULL;
    nng_msg_free(msg);
    (void)nng_send(c->rep, (void *)c->bytes, c->len, 0);
    return NULL;
}

/* The client finds Reply.payload in the frame without copying it out: in
 * any field order, the last of two counting, and a frame that is not a
 * Reply (a length past its end, bytes that are no protobuf) refused as
 * before, never read past. */
static void test_client_reply_frames(void **state)
{
    (void)state;
    static const uint8_t first[] = { 0x1A, 3, 0x12, 1, 'v', 0x12, 0 };
    static const uint8_t twice[] = { 0x1A, 3,    0x12, 1,    'x', 0x12,
                                     0,    0x1A, 3,    0x12, 1,   'v' };
    static const uint8_t fields[] = { 0x08, 0x00, 0x12, 0x02, 0x08, 0x00,
                                      0x25, 1,    2,    3,    4,    0x1A,
                                      3,    0x12, 1,    'v' };
    static const uint8_t failed[] = { 0x12, 2, 0x08, 5, 0x1A, 3, 0x12, 1, 'v' };
    static const uint8_t overrun[] = { 0x12, 0, 0x1A, 9, 0x12 };
    static const uint8_t garbage[] = { 0xFF, 0xFF, 0xFF };
    static const struct {
        const uint8_t *bytes;
        size_t len;
        int code;
        const char *version; /* OK: the PingReply's */
    } cases[] = {
        { first, sizeof first, TK_OK, "v" },
        { twice, sizeof twice, TK_OK, "v" },
        { fields, sizeof fields, TK_OK, "v" },
        { failed, sizeof failed, TK_CODE_NOT_FOUND, NULL },
        { overrun, sizeof overrun, TK_CODE_INTERNAL, NULL },
        { garbage, sizeof garbage, TK_CODE_INTERNAL, NULL },
    };
    char dir[256], url[300];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "canned"), 0);
    snprintf(url, sizeof url, "ipc://%s/canned.sock", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        canned cn = { .bytes = cases[i].bytes, .len = cases[i].len };
        assert_int_equal(nng_rep0_open(&cn.rep), 0);
        assert_int_equal(nng_listen(cn.rep, url, NULL, 0), 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, canned_main, &cn), 0);
        tk_client *c;
        assert_int_equal(tk_client_open(&c, url, NULL, 0), 0);
        tk_status st;
        Tk__V1__PingReply *rep = NULL;
        int code = call_ping_like(c, "tk.v1.Control/Ping", NULL, 5000, NULL,
                                  &st, &rep);
        if (code != cases[i].code)
            fail_msg("frame %zu: %s (%s), not %s", i, tk_code_name(code),
                     st.message, tk_code_name(cases[i].code));
        if (cases[i].version != NULL) {
            assert_non_null(rep);
            assert_string_equal(rep->server_version, cases[i].version);
            protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
        } else if (code == TK_CODE_INTERNAL) {
            assert_false(st.from_server);
            assert_non_null(strstr(st.message, "is not a tk.v1.Reply"));
        } else {
            assert_true(st.from_server);
        }
        tk_status_clear(&st);
        tk_client_close(c);
        pthread_join(t, NULL);
        nng_close(cn.rep);
    }
    ts_rmtree(dir);
}

static void test_client_deadline_without_reply(void **state)
{
    (void)state;
    char dir[256], url[300];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "mute"), 0);
    snprintf(url, sizeof url, "ipc://%s/mute.sock", dir);
    nng_socket rep;
    assert_int_equal(nng_rep0_open(&rep), 0);
    assert_int_equal(nng_listen(rep, url, NULL, 0), 0);
    tk_client *c;
    assert_int_equal(tk_client_open(&c, url, NULL, 0), 0);
    tk_status st;
    long long t0 = ts_now_ms();
    int code =
        call_ping_like(c, "tk.v1.Control/Ping", NULL, 100, NULL, &st, NULL);
    long long took = ts_now_ms() - t0;
    assert_int_equal(code, TK_CODE_DEADLINE_EXCEEDED);
    assert_false(st.from_server);
    assert_non_null(strstr(st.message, "did not answer"));
    /* It waited the deadline plus the grace for the server's own answer. */
    assert_true(took >= 100 + TK_DEADLINE_GRACE_MS - 5);
    tk_status_clear(&st);
    tk_client_close(c);
    nng_close(rep);
    ts_rmtree(dir);
}

/* ---- the client's wait past the deadline, against a scripted tkd ------- */

#define ASK_UNIMPLEMENTED (-2)
#define ASK_THEN_REPLY 0x100 /* answer, then send the held call's reply */

/* A fake tkd: takes one call and holds it; answers each CallState about it
 * with the next state of its script, and sends the call's reply (tkd's
 * DEADLINE_EXCEEDED) when the script says so; ignores questions past the
 * script's end. Every step is an event (a question arriving), so the
 * client's waiting is tested without a clock. */
typedef struct asker {
    nng_socket rep;
    nng_aio *aio; /* the fake's one aio; the test stops it */
    const int *script;
    size_t n;
    int asked;
    char bad[128]; /* what was wrong with a question, if anything */
} asker;

static nng_msg *fake_reply(uint64_t id, int code, const ProtobufCMessage *body)
{
    Tk__V1__Reply env = TK__V1__REPLY__INIT;
    Tk__V1__Status st = TK__V1__STATUS__INIT;
    Tk__V1__Cancellation cn = TK__V1__CANCELLATION__INIT;
    env.call_id = id;
    env.status = &st;
    st.code = (Tk__V1__Status__Code)code;
    st.message = "from the fake";
    if (code == TK_CODE_DEADLINE_EXCEEDED) {
        cn.cause = TK__V1__CANCELLATION__CAUSE__DEADLINE;
        cn.process_killed = true;
        st.cancellation = &cn;
    }
    uint8_t buf[256];
    if (body != NULL) {
        env.payload.len = protobuf_c_message_pack(body, buf);
        env.payload.data = buf;
    }
    nng_msg *m;
    assert_int_equal(nng_msg_alloc(&m, tk__v1__reply__get_packed_size(&env)),
                     0);
    tk__v1__reply__pack(&env, nng_msg_body(m));
    return m;
}

/* One message on ctx into *env (NULL when none came within 30 s). */
static Tk__V1__Request *fake_recv(nng_ctx ctx, nng_aio *aio)
{
    nng_aio_set_timeout(aio, 30000);
    nng_ctx_recv(ctx, aio);
    nng_aio_wait(aio);
    if (nng_aio_result(aio) != 0)
        return NULL;
    nng_msg *m = nng_aio_get_msg(aio);
    Tk__V1__Request *env =
        tk__v1__request__unpack(NULL, nng_msg_len(m), nng_msg_body(m));
    nng_msg_free(m);
    return env;
}

static void fake_send(nng_ctx ctx, nng_aio *aio, nng_msg *m)
{
    nng_aio_set_msg(aio, m);
    nng_ctx_send(ctx, aio);
    nng_aio_wait(aio);
    if (nng_aio_result(aio) != 0)
        nng_msg_free(m);
}

static void *asker_main(void *arg)
{
    asker *a = arg;
    nng_ctx call_ctx, q_ctx;
    nng_aio *aio = a->aio;
    nng_ctx_open(&call_ctx, a->rep);
    nng_ctx_open(&q_ctx, a->rep);
    Tk__V1__Request *call = fake_recv(call_ctx, aio);
    for (size_t i = 0; call != NULL && i < a->n; i++) {
        Tk__V1__Request *q = fake_recv(q_ctx, aio);
        if (q == NULL)
            break;
        Tk__V1__CallStateRequest *in = tk__v1__call_state_request__unpack(
            NULL, q->payload.len, q->payload.data);
        if (strcmp(q->method, "tk.v1.Control/CallState") != 0 || in == NULL ||
            in->call_id != call->call_id)
            snprintf(a->bad, sizeof a->bad, "question %zu: %s", i, q->method);
        a->asked++;
        int step = a->script[i];
        Tk__V1__CallStateReply out = TK__V1__CALL_STATE_REPLY__INIT;
        out.state = (Tk__V1__CallStateReply__State)(step & 0xff);
        fake_send(
            q_ctx, aio,
            step == ASK_UNIMPLEMENTED
                ? fake_reply(q->call_id, TK_CODE_UNIMPLEMENTED, NULL)
                : fake_reply(q->call_id, TK_OK, (ProtobufCMessage *)&out));
        if (step != ASK_UNIMPLEMENTED && (step & ASK_THEN_REPLY))
            fake_send(
                call_ctx, aio,
                fake_reply(call->call_id, TK_CODE_DEADLINE_EXCEEDED, NULL));
        if (in != NULL)
            tk__v1__call_state_request__free_unpacked(in, NULL);
        tk__v1__request__free_unpacked(q, NULL);
    }
    if (call != NULL)
        tk__v1__request__free_unpacked(call, NULL);
    nng_ctx_close(q_ctx);
    nng_ctx_close(call_ctx);
    return NULL;
}

/* Runs a 100 ms call of method against the script; returns its code,
 * status in st. */
static int method_against_script(const char *method, const int *script,
                                 size_t n, int *asked, tk_status *st)
{
    char dir[256], url[300];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "asker"), 0);
    snprintf(url, sizeof url, "ipc://%s/a.sock", dir);
    asker a = { .script = script, .n = n };
    assert_int_equal(nng_aio_alloc(&a.aio, NULL, NULL), 0);
    assert_int_equal(nng_rep0_open(&a.rep), 0);
    assert_int_equal(nng_listen(a.rep, url, NULL, 0), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, asker_main, &a), 0);
    tk_client *c;
    assert_int_equal(tk_client_open(&c, url, NULL, 0), 0);
    int code = call_ping_like(c, method, NULL, 100, NULL, st, NULL);
    tk_client_close(c);
    /* A fake still waiting for a question is ended by stopping its aio
     * (every operation on it fails from then on), not by closing the
     * socket under it: NNG 1.5.2 can then lock the socket's freed mutex
     * in an nng_ctx_send still returning ("pthread_mutex_lock: Invalid
     * argument", seen under load). The socket closes once it has ended. */
    nng_aio_stop(a.aio);
    pthread_join(t, NULL);
    nng_close(a.rep);
    nng_aio_free(a.aio);
    if (a.bad[0] != '\0')
        fail_msg("%s", a.bad);
    *asked = a.asked;
    ts_rmtree(dir);
    return code;
}

static int against_script(const int *script, size_t n, int *asked,
                          tk_status *st)
{
    return method_against_script("tk.v1.Control/Ping", script, n, asked, st);
}

/* Past its deadline the client asks tkd where the call stands, and waits
 * on while tkd says it is queued or running: tkd's own late answer is what
 * it returns, however late (a READ whose processes drain slowly on a
 * loaded machine). A client with a fixed grace would have returned a
 * DEADLINE_EXCEEDED of its own after the first 250 ms. */
static void test_client_waits_while_tkd_runs_the_call(void **state)
{
    (void)state;
    enum {
        Q = TK__V1__CALL_STATE_REPLY__STATE__QUEUED,
        R = TK__V1__CALL_STATE_REPLY__STATE__RUNNING,
        N = TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND,
    };
    static const int run_reply[] = { R, R | ASK_THEN_REPLY };
    static const int queued[] = { Q, R, R | ASK_THEN_REPLY };
    /* One NOT_FOUND can be a question that overtook its call in tkd. */
    static const int overtaken[] = { N, R | ASK_THEN_REPLY };
    static const struct {
        const int *script;
        size_t n;
    } cases[] = { { run_reply, 2 }, { queued, 3 }, { overtaken, 2 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tk_status st;
        int asked;
        int code = against_script(cases[i].script, cases[i].n, &asked, &st);
        if (code != TK_CODE_DEADLINE_EXCEEDED || !st.from_server)
            fail_msg("case %zu: %s from_server=%d (%s)", i, tk_code_name(code),
                     st.from_server, st.message);
        assert_string_equal(st.message, "from the fake");
        assert_int_equal(st.cause, TK_CAUSE_DEADLINE);
        assert_true(st.process_killed);
        assert_int_equal(asked, (int)cases[i].n);
        tk_status_clear(&st);
    }
}

/* The client stops waiting, with a status that says why, when tkd no
 * longer knows the call, says it answered and the reply does not follow,
 * or cannot be asked (a tkd older than CallState). */
static void test_client_gives_up_on_what_tkd_says(void **state)
{
    (void)state;
    enum {
        A = TK__V1__CALL_STATE_REPLY__STATE__ANSWERED,
        N = TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND,
    };
    static const int unknown[] = { N, N, N };
    static const int lost[] = { A, A, A };
    static const int old[] = { ASK_UNIMPLEMENTED };
    static const struct {
        const int *script;
        size_t n;
        int code;
        const char *says;
    } cases[] = {
        { unknown, 3, TK_CODE_DEADLINE_EXCEEDED, "has no record of call" },
        { lost, 3, TK_CODE_UNAVAILABLE, "says it answered call" },
        { old, 1, TK_CODE_DEADLINE_EXCEEDED, "cannot be asked" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tk_status st;
        int asked;
        int code = against_script(cases[i].script, cases[i].n, &asked, &st);
        if (code != cases[i].code || strstr(st.message, cases[i].says) == NULL)
            fail_msg("case %zu: %s (%s)", i, tk_code_name(code), st.message);
        assert_false(st.from_server);
        assert_int_equal(asked, (int)cases[i].n);
        tk_status_clear(&st);
    }
}

/* A WRITE that tkd said runs (it started before its caller's deadline,
 * and runs to completion) is never reported DEADLINE_EXCEEDED by the
 * client: when its reply cannot come, the status says it had started and
 * that whether it completed is unknown. The negative control: the same
 * answers about a READ end DEADLINE_EXCEEDED, and so do those about a
 * WRITE tkd never said runs. (The payload is a PingRequest; the fake
 * reads none.) */
static void test_client_started_write_is_not_deadline_exceeded(void **state)
{
    (void)state;
    enum {
        Q = TK__V1__CALL_STATE_REPLY__STATE__QUEUED,
        R = TK__V1__CALL_STATE_REPLY__STATE__RUNNING,
        N = TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND,
    };
    static const int started[] = { R, N, N, N };
    static const int queued[] = { Q, N, N, N };
    static const struct {
        const char *method;
        const int *script;
        int code;
        const char *says;
    } cases[] = {
        { "tk.v1.Git/Commit", started, TK_CODE_UNKNOWN,
          "whether it completed is unknown" },
        { "tk.v1.Git/Status", started, TK_CODE_DEADLINE_EXCEEDED,
          "has no record of call" },
        { "tk.v1.Git/Commit", queued, TK_CODE_DEADLINE_EXCEEDED,
          "has no record of call" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tk_status st;
        int asked;
        int code = method_against_script(cases[i].method, cases[i].script, 4,
                                         &asked, &st);
        if (code != cases[i].code || strstr(st.message, cases[i].says) == NULL)
            fail_msg("case %zu: %s (%s)", i, tk_code_name(code), st.message);
        assert_false(st.from_server);
        assert_false(st.write_completed);
        assert_int_equal(asked, 4);
        tk_status_clear(&st);
    }
}

/* A timeout near the top of uint32 (597 h and UINT32_MAX ms): the client
 * waits for the server; it neither gives up at once (a wait past INT32_MAX
 * ms, negative as an nng_duration; whether NNG then times out at once
 * depends on the machine's uptime) nor after the 249 ms that a wrapped
 * UINT32_MAX + grace leaves. A second call's server deadline of 400 ms
 * orders the check after that, without a sleep. */
static void test_huge_timeout_waits_for_the_server(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    const uint32_t timeouts[] = { 597u * 3600u * 1000u, UINT32_MAX };
    for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        tk_cancel *cancel;
        tk_cancel_new(&cancel);
        async_call a;
        async_start(&a, fx.client, WAIT_METHOD, timeouts[i], cancel, NULL);
        sem_wait_ok(&fx.svc.entered, "Wait to start");
        tk_status st;
        assert_int_equal(
            call_ping_like(fx.client, WAIT_METHOD, NULL, 400, NULL, &st, NULL),
            TK_CODE_DEADLINE_EXCEEDED);
        assert_true(st.from_server);
        tk_status_clear(&st);
        sem_wait_ok(&fx.svc.entered, "the 400 ms Wait to start");
        sem_wait_ok(&fx.svc.exited, "the 400 ms Wait to return");
        int outcome = -1;
        assert_int_equal(tk_cancel_fire(cancel, &outcome), 0);
        async_join(&a);
        /* Still waiting when the Cancel came: the server's answer. */
        if (a.st.code != TK_CODE_CANCELLED)
            fail_msg("timeout %u ms: %s (%s)", (unsigned)timeouts[i],
                     tk_code_name(a.st.code), a.st.message);
        assert_int_equal(outcome, TK_CANCEL_CANCELLED);
        assert_true(a.st.from_server);
        assert_int_equal(a.st.cause, TK_CAUSE_CALLER);
        sem_wait_ok(&fx.svc.exited, "Wait to return");
        async_free(&a);
        tk_cancel_free(cancel);
    }
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_expiry),
        cmocka_unit_test(test_deadline_capped_by_ceiling),
        cmocka_unit_test(test_reply_prefix),
        cmocka_unit_test(test_client_reply_frames),
        cmocka_unit_test(test_client_deadline_without_reply),
        cmocka_unit_test(test_client_waits_while_tkd_runs_the_call),
        cmocka_unit_test(test_client_gives_up_on_what_tkd_says),
        cmocka_unit_test(test_client_started_write_is_not_deadline_exceeded),
        cmocka_unit_test(test_huge_timeout_waits_for_the_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
