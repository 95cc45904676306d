/* SPDX-License-Identifier: MIT */
/* The receive path on one thread, without NNG (rpc__test_serve_frame, the
 * seam tests/fuzz/fuzz_request drives): what a frame is answered, and the
 * inputs the fuzzer found (each test says which corpus file it is). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/control.h"
#include "obs/obs.h"
#include "rpc/rpc.h"
#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

static rpc_server *new_server(void)
{
    static const char *const listen[] = { "ipc:///nonexistent/tk-test.sock" };
    rpc_config cfg;
    rpc_config_init(&cfg);
    cfg.listen = listen;
    cfg.n_listen = 1;
    cfg.version = "test";
    rpc_server *srv = NULL;
    char err[256];
    assert_int_equal(rpc_server_new(&srv, &cfg, err, sizeof err), 0);
    assert_int_equal(control_register(srv, err, sizeof err), 0);
    return srv;
}

static int setup(void **state)
{
    obs_log_set_level(OBS_LOG_ERROR);
    *state = new_server();
    return 0;
}

static int teardown(void **state)
{
    rpc_server_free(*state);
    return 0;
}

/* The reply to frame on connection conn; never NULL. */
static Tk__V1__Reply *serve(rpc_server *srv, uint32_t conn, const void *frame,
                            size_t len)
{
    rpc_peer peer = { .conn = conn, .uid = (int64_t)geteuid(), .pid = 1 };
    uint8_t *out = NULL;
    size_t out_len = 0;
    assert_int_equal(
        rpc__test_serve_frame(srv, &peer, frame, len, &out, &out_len), 0);
    assert_non_null(out);
    Tk__V1__Reply *rep = tk__v1__reply__unpack(NULL, out_len, out);
    free(out);
    assert_non_null(rep);
    assert_non_null(rep->status);
    return rep;
}

static Tk__V1__Reply *serve_request(rpc_server *srv, uint32_t conn, uint64_t id,
                                    const char *method,
                                    const ProtobufCMessage *payload)
{
    Tk__V1__Request req = TK__V1__REQUEST__INIT;
    req.call_id = id;
    req.method = (char *)method;
    uint8_t pbuf[256];
    if (payload != NULL) {
        assert_true(protobuf_c_message_get_packed_size(payload) <= sizeof pbuf);
        req.payload.len = protobuf_c_message_pack(payload, pbuf);
        req.payload.data = pbuf;
    }
    uint8_t frame[512];
    assert_true(tk__v1__request__get_packed_size(&req) <= sizeof frame);
    size_t n = tk__v1__request__pack(&req, frame);
    return serve(srv, conn, frame, n);
}

static void assert_status(const Tk__V1__Reply *rep, int code,
                          const char *reason)
{
    assert_int_equal(rep->status->code, code);
    assert_string_equal(rep->status->reason, reason);
}

/* corpus/request/regress-empty-payload: a call whose request message has
 * no field set travels with no payload at all, and payload.c's walk of
 * the payload began with NULL + 0, undefined behaviour that clang's UBSan
 * reports (the fuzz build's; gcc's does not check it, so under gcc this
 * test shows the answer and the fuzz suite of build/fuzz the fix). */
static void test_empty_payload(void **state)
{
    static const char frame[] = "\x12\x12tk.v1.Control/Ping";
    Tk__V1__Reply *rep = serve(*state, 1, frame, sizeof frame - 1);
    assert_status(rep, TK__V1__STATUS__CODE__OK, "");
    Tk__V1__PingReply *ping =
        tk__v1__ping_reply__unpack(NULL, rep->payload.len, rep->payload.data);
    assert_non_null(ping);
    assert_string_equal(ping->server_version, "test");
    tk__v1__ping_reply__free_unpacked(ping, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
}

static void test_refused_frames(void **state)
{
    static const struct {
        const char *frame;
        size_t len;
        int code;
        const char *reason;
    } cases[] = {
#define F(s) (s), sizeof(s) - 1
        { F("\xff\xff\xff\xff"), 3, "BAD_FRAME" },
        { F("\x08\x01\x12\x14tk.v1.Control/Ping\x00x"), 3, "NUL_IN_STRING" },
        { F("\x08\x02\x12\x13tk.v1.Control/Ping\xff"), 3, "STRING_NOT_UTF8" },
        { F("\x08\x03\x12\x10tk.v1.Nope/Never"), 12, "UNKNOWN_METHOD" },
        { F("\x08\x05\x12\x12tk.v1.Control/Ping\x22\x02\x0a\x05"), 3,
          "BAD_PAYLOAD" },
        /* ListMethods { service: "a\0b" } */
        { F("\x08\x06\x12\x19tk.v1.Control/ListMethods\x22\x05\x0a\x03"
            "a\x00"
            "b"),
          3, "NUL_IN_STRING" },
#undef F
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Tk__V1__Reply *rep = serve(*state, 2, cases[i].frame, cases[i].len);
        assert_status(rep, cases[i].code, cases[i].reason);
        tk__v1__reply__free_unpacked(rep, NULL);
    }
}

/* The registry sees detached calls: an answered call id is remembered per
 * connection (a copy is refused, CallState says ANSWERED, Cancel says
 * ALREADY_DONE), and only on that connection. */
static void test_registry(void **state)
{
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    Tk__V1__Reply *rep =
        serve_request(*state, 7, 42, "tk.v1.Control/Ping", &ping.base);
    assert_status(rep, TK__V1__STATUS__CODE__OK, "");
    tk__v1__reply__free_unpacked(rep, NULL);
    rep = serve_request(*state, 7, 42, "tk.v1.Control/Ping", &ping.base);
    assert_status(rep, TK__V1__STATUS__CODE__ALREADY_EXISTS,
                  "DUPLICATE_CALL_ID");
    tk__v1__reply__free_unpacked(rep, NULL);

    Tk__V1__CallStateRequest cs = TK__V1__CALL_STATE_REQUEST__INIT;
    cs.call_id = 42;
    for (uint32_t conn = 7; conn <= 8; conn++) {
        rep = serve_request(*state, conn, 43, "tk.v1.Control/CallState",
                            &cs.base);
        assert_status(rep, TK__V1__STATUS__CODE__OK, "");
        Tk__V1__CallStateReply *st = tk__v1__call_state_reply__unpack(
            NULL, rep->payload.len, rep->payload.data);
        assert_non_null(st);
        assert_int_equal(
            st->state, conn == 7 ? TK__V1__CALL_STATE_REPLY__STATE__ANSWERED
                                 : TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND);
        tk__v1__call_state_reply__free_unpacked(st, NULL);
        tk__v1__reply__free_unpacked(rep, NULL);
    }
    Tk__V1__CancelRequest c = TK__V1__CANCEL_REQUEST__INIT;
    c.call_id = 42;
    rep = serve_request(*state, 7, 44, "tk.v1.Control/Cancel", &c.base);
    Tk__V1__CancelReply *cr =
        tk__v1__cancel_reply__unpack(NULL, rep->payload.len, rep->payload.data);
    assert_non_null(cr);
    assert_int_equal(cr->outcome, TK__V1__CANCEL_REPLY__OUTCOME__ALREADY_DONE);
    tk__v1__cancel_reply__free_unpacked(cr, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
}

/* The registry remembers the last 1024 answered calls (RPC_RECENT): a
 * resent copy of one of them is refused, one of a call answered longer ago
 * runs again. Also a check that the index of the ring lets go of what the
 * ring overwrites, and keeps the rest: a remembered call found at every
 * distance up to the ring's length, and forgotten one past it. */
static void test_registry_forgets(void **state)
{
    enum { RECENT = 1024 };
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    Tk__V1__Reply *rep =
        serve_request(*state, 9, 1000, "tk.v1.Control/Ping", &ping.base);
    assert_status(rep, TK__V1__STATUS__CODE__OK, "");
    tk__v1__reply__free_unpacked(rep, NULL);
    for (uint64_t i = 1; i < RECENT; i++) {
        /* the same id on other connections (i 1, 2) is another call */
        rep = serve_request(*state, 10 + (uint32_t)(i % 3),
                            i <= 2 ? 1000 : 1000 + i, "tk.v1.Control/Ping",
                            &ping.base);
        assert_status(rep, TK__V1__STATUS__CODE__OK, "");
        tk__v1__reply__free_unpacked(rep, NULL);
        if (i % 97 == 0 || i == RECENT - 1) {
            /* a refused copy is not answered into the ring */
            rep = serve_request(*state, 9, 1000, "tk.v1.Control/Ping",
                                &ping.base);
            assert_status(rep, TK__V1__STATUS__CODE__ALREADY_EXISTS,
                          "DUPLICATE_CALL_ID");
            tk__v1__reply__free_unpacked(rep, NULL);
        }
    }
    rep = serve_request(*state, 12, 5, "tk.v1.Control/Ping", &ping.base);
    assert_status(rep, TK__V1__STATUS__CODE__OK, "");
    tk__v1__reply__free_unpacked(rep, NULL);
    rep = serve_request(*state, 9, 1000, "tk.v1.Control/Ping", &ping.base);
    assert_status(rep, TK__V1__STATUS__CODE__OK, "");
    tk__v1__reply__free_unpacked(rep, NULL);
}

/* A started server is served by NNG alone. */
static void test_started_refused(void **state)
{
    (void)state;
    char path[] = "/tmp/tk-test-receive-XXXXXX";
    assert_non_null(mkdtemp(path));
    char url[128];
    snprintf(url, sizeof url, "ipc://%s/s.sock", path);
    const char *listen[] = { url };
    rpc_config cfg;
    rpc_config_init(&cfg);
    cfg.listen = listen;
    cfg.n_listen = 1;
    cfg.workers = 1;
    cfg.queue_depth = 1;
    rpc_server *srv = NULL;
    char err[256];
    assert_int_equal(rpc_server_new(&srv, &cfg, err, sizeof err), 0);
    assert_int_equal(control_register(srv, err, sizeof err), 0);
    assert_int_equal(rpc_server_start(srv, err, sizeof err), 0);
    rpc_peer peer = { .conn = 1, .uid = -1, .pid = -1 };
    uint8_t *out = (uint8_t *)"not set";
    size_t n = 1;
    assert_int_equal(rpc__test_serve_frame(srv, &peer, "", 0, &out, &n),
                     -EBUSY);
    assert_null(out);
    assert_int_equal(n, 0);
    rpc_server_free(srv);
    snprintf(url, sizeof url, "%s/s.sock", path);
    unlink(url);
    rmdir(path);
}

/* A call handle of no server: memory until freed, no deadline. */
static void test_detached_call(void **state)
{
    (void)state;
    rpc_call *call = rpc__test_call_new();
    assert_non_null(call);
    assert_int_equal(rpc_call_cause(call), RPC_CAUSE_NONE);
    assert_int_equal(rpc_call_kind(call), RPC_READ);
    assert_string_equal(rpc_call_method(call), "tk.test.Detached/Call");
    char *s = rpc_call_strdup(call, "kept");
    void *big = rpc_call_alloc(call, 100000);
    assert_non_null(big);
    assert_string_equal(s, "kept");
    rpc_call_fail(call, RPC_INTERNAL, "R", "%s", "never sent");
    rpc__test_call_free(call);
    rpc__test_call_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_forgets, setup, teardown),
        cmocka_unit_test(test_started_refused),
        cmocka_unit_test(test_detached_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
