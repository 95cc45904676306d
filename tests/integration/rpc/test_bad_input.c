/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * envelope errors (frames that do not decode, strings that are not UTF-8,
 * unknown methods, undecodable payloads, oversize requests) and the
 * read-only listener; the server serves on after each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <nng/nng.h>

#include <tk/client.h>

#include "common/common.h"
#include "rpc_fx.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"
#include "tsem.h"

/* ---- tests: bad input ------------------------------------------------------
 */

static void test_bad_frame_then_serves(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    static const char junk[] = "\xff\xff\xff\xff not protobuf";
    Tk__V1__Reply *rep = raw_roundtrip(&r, raw_bytes(junk, sizeof junk));
    assert_int_equal(rep->status->code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(rep->status->reason, "BAD_FRAME");
    tk__v1__reply__free_unpacked(rep, NULL);
    /* An empty frame decodes as an empty Request: no method. */
    rep = raw_roundtrip(&r, raw_bytes("", 0));
    assert_int_equal(rep->status->code, TK_CODE_UNIMPLEMENTED);
    tk__v1__reply__free_unpacked(rep, NULL);
    /* The daemon keeps serving, on the same connection and others. */
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    rep = raw_roundtrip(
        &r, envelope(9, "tk.v1.Control/Ping", 1000, (ProtobufCMessage *)&ping));
    assert_int_equal(rep->status->code, TK_OK);
    assert_int_equal(rep->call_id, 9);
    tk__v1__reply__free_unpacked(rep, NULL);
    expect_ping_ok(fx.client);
    nng_close(r.sock);
    ts_fx_stop(&fx);
}

/* A Request frame by hand: call id 9 and the method's bytes as given
 * (protobuf-c would cut a char * at its NUL). */
static nng_msg *frame_with_method(const char *method, size_t len)
{
    uint8_t buf[1024];
    size_t n = 0;
    buf[n++] = 0x08; /* call_id = 9 */
    buf[n++] = 9;
    buf[n++] = 0x12; /* method */
    n = (size_t)(tkc_put_varint(buf + n, len) - buf);
    memcpy(buf + n, method, len);
    return raw_bytes(buf, n + len);
}

/* The method name: a NUL byte or bytes that are not UTF-8 are
 * INVALID_ARGUMENT before anything runs (with a NUL the name would be read
 * as "tk.v1.Control/Ping" and run Ping); and what tkd says back is UTF-8,
 * a long name never cut inside a character. */
static void test_strings_in_the_envelope(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    static const char nul[] = "tk.v1.Control/Ping\0x";
    Tk__V1__Reply *rep =
        raw_roundtrip(&r, frame_with_method(nul, sizeof nul - 1));
    assert_int_equal(rep->status->code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(rep->status->reason, "NUL_IN_STRING");
    assert_non_null(strstr(rep->status->message, "tk.v1.Request.method"));
    assert_int_equal(rep->payload.len, 0);
    tk__v1__reply__free_unpacked(rep, NULL);

    static const char latin1[] = "tk.v1.Control/P\xefng";
    rep = raw_roundtrip(&r, frame_with_method(latin1, sizeof latin1 - 1));
    assert_int_equal(rep->status->code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(rep->status->reason, "STRING_NOT_UTF8");
    tk__v1__reply__free_unpacked(rep, NULL);

    /* 150 two-byte characters (300 bytes): the message quotes 200 bytes at
     * most, and stops at a character's end. */
    char longname[400] = "tk.v1.Nope/";
    for (size_t i = 0, at = strlen(longname); i < 150; i++, at += 2)
        memcpy(longname + at, "\xc3\xa9", 3);
    rep = raw_roundtrip(&r, frame_with_method(longname, strlen(longname)));
    assert_int_equal(rep->status->code, TK_CODE_UNIMPLEMENTED);
    const char *msg = rep->status->message;
    assert_true(tkc_utf8_valid(msg, strlen(msg)));
    const char *q = strchr(msg, '"'), *end = q ? strchr(q + 1, '"') : NULL;
    assert_non_null(end);
    assert_true(end - q - 1 <= 200 && end - q - 1 >= 199);
    tk__v1__reply__free_unpacked(rep, NULL);

    nng_close(r.sock);
    ts_fx_stop(&fx);
}

/* A listener that serves READs only: a READ runs there; a WRITE and a
 * READ that writes (a commit point) are PERMISSION_DENIED before they run.
 * The same WRITE runs on the fixture's other listener. */
static void test_read_only_listener(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .read_only_listener = true };
    fx_start(&fx, &o);
    tk_client *ro;
    assert_int_equal(tk_client_open(&ro, fx.url_ro, NULL, 0), 0);
    tk_status st;
    assert_int_equal(
        call_ping_like(ro, WAIT_METHOD, NULL, 100, NULL, &st, NULL),
        TK_CODE_DEADLINE_EXCEEDED);
    assert_true(st.from_server);
    tk_status_clear(&st);
    sem_wait_ok(&fx.svc.entered, "the Wait to run");
    static const char *const writes[] = { WRITE_METHOD, "tk.test.Test/Commit" };
    for (size_t i = 0; i < 2; i++) {
        int code = call_ping_like(ro, writes[i], "0", 5000, NULL, &st, NULL);
        if (code != TK_CODE_PERMISSION_DENIED ||
            strcmp(st.reason, "READ_ONLY_LISTENER") != 0)
            fail_msg("%s: %s %s (%s)", writes[i], tk_code_name(code), st.reason,
                     st.message);
        assert_false(st.write_completed);
        tk_status_clear(&st);
    }
    assert_false(ts_sem_trywait(&fx.svc.entered)); /* neither ran */
    assert_int_equal(atomic_load(&fx.svc.write_runs), 0);
    assert_int_equal(
        call_ping_like(fx.client, WRITE_METHOD, "0", 5000, NULL, &st, NULL),
        TK_OK);
    tk_status_clear(&st);
    assert_int_equal(atomic_load(&fx.svc.write_runs), 1);
    tk_client_close(ro);
    ts_fx_stop(&fx);
}

static void test_unknown_method(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    tk_status st;
    int code = call_ping_like(fx.client, "tk.v1.Nope/Nothing", NULL, 1000, NULL,
                              &st, NULL);
    assert_int_equal(code, TK_CODE_UNIMPLEMENTED);
    assert_string_equal(st.reason, "UNKNOWN_METHOD");
    assert_true(st.from_server);
    assert_non_null(strstr(st.message, "tk.v1.Nope/Nothing"));
    tk_status_clear(&st);
    expect_ping_ok(fx.client);
    ts_fx_stop(&fx);
}

static void test_undecodable_payload(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = 5;
    env.method = "tk.v1.Control/Ping";
    /* field 1 claims 100 bytes of a 2-byte buffer */
    static uint8_t bad[] = { 0x0a, 0x64, 0x01, 0x02 };
    env.payload.data = bad;
    env.payload.len = sizeof bad;
    uint8_t buf[128];
    size_t n = tk__v1__request__pack(&env, buf);
    Tk__V1__Reply *rep = raw_roundtrip(&r, raw_bytes(buf, n));
    assert_int_equal(rep->status->code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(rep->status->reason, "BAD_PAYLOAD");
    assert_non_null(strstr(rep->status->message, "tk.v1.PingRequest"));
    tk__v1__reply__free_unpacked(rep, NULL);
    nng_close(r.sock);
    expect_ping_ok(fx.client);
    ts_fx_stop(&fx);
}

/* A string holding a NUL is valid protobuf, but C would read it cut at
 * the NUL: refused before the handler, naming the field. A NUL in a bytes
 * field is data and passes. */
static void test_nul_in_string_field(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    raw r;
    raw_open(&r, fx.url);
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = 6;
    env.method = "tk.v1.Control/ListMethods";
    /* ListMethodsRequest.service = "tk.v1\0Control" */
    static uint8_t cut[] = { 0x0a, 0x0d, 't', 'k', '.', 'v', '1', 0,
                             'C',  'o',  'n', 't', 'r', 'o', 'l' };
    env.payload.data = cut;
    env.payload.len = sizeof cut;
    uint8_t buf[128];
    size_t n = tk__v1__request__pack(&env, buf);
    Tk__V1__Reply *rep = raw_roundtrip(&r, raw_bytes(buf, n));
    assert_int_equal(rep->status->code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(rep->status->reason, "NUL_IN_STRING");
    assert_non_null(
        strstr(rep->status->message, "tk.v1.ListMethodsRequest.service"));
    tk__v1__reply__free_unpacked(rep, NULL);

    /* PingRequest.data (bytes) = "a\0b": echoed whole. */
    env.call_id = 7;
    env.method = "tk.v1.Control/Ping";
    static uint8_t data[] = { 0x0a, 0x03, 'a', 0, 'b' };
    env.payload.data = data;
    env.payload.len = sizeof data;
    n = tk__v1__request__pack(&env, buf);
    rep = raw_roundtrip(&r, raw_bytes(buf, n));
    assert_int_equal(rep->status->code, TK_OK);
    Tk__V1__PingReply *pr =
        tk__v1__ping_reply__unpack(NULL, rep->payload.len, rep->payload.data);
    assert_non_null(pr);
    assert_int_equal(pr->data.len, 3);
    assert_memory_equal(pr->data.data, "a\0b", 3);
    tk__v1__ping_reply__free_unpacked(pr, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
    nng_close(r.sock);
    ts_fx_stop(&fx);
}

static void test_oversize_request(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .max_request_bytes = (size_t)64 * 1024 };
    fx_start(&fx, &o);
    size_t big = (size_t)128 * 1024;
    char *data = malloc(big + 1);
    memset(data, 'x', big);
    data[big] = '\0';
    tk_status st;
    int code = call_ping_like(fx.client, "tk.v1.Control/Ping", data, 5000, NULL,
                              &st, NULL);
    /* NNG drops the connection on a frame over the limit; the client says
     * the call's fate is unknown and does not resend it. */
    assert_int_equal(code, TK_CODE_UNAVAILABLE);
    assert_false(st.from_server);
    tk_status_clear(&st);
    free(data);
    /* The daemon keeps serving: the same client (it redials) and others. */
    expect_ping_ok(fx.client);
    tk_client *other;
    assert_int_equal(tk_client_open(&other, fx.url, NULL, 0), 0);
    expect_ping_ok(other);
    tk_client_close(other);
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_frame_then_serves),
        cmocka_unit_test(test_unknown_method),
        cmocka_unit_test(test_read_only_listener),
        cmocka_unit_test(test_strings_in_the_envelope),
        cmocka_unit_test(test_undecodable_payload),
        cmocka_unit_test(test_nul_in_string_field),
        cmocka_unit_test(test_oversize_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
