/* SPDX-License-Identifier: MIT */
/* The envelope: every message of the catalog, filled by reflection, goes
 * into a Request and a Reply payload and comes back byte for byte; and the
 * Status of a Reply keeps every field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>

#include "sample.h"
#include "tk/v1/rpc.pb-c.h"

/* m -> Request.payload -> bytes -> Request -> payload -> message -> bytes. */
static void request_roundtrip(const ProtobufCMessage *m, const ts_packed *want)
{
    Tk__V1__Request req = TK__V1__REQUEST__INIT;
    req.call_id = UINT64_MAX;
    req.method = "tk.v1.Any/Method";
    req.timeout_ms = UINT32_MAX;
    req.payload.data = want->data;
    req.payload.len = want->len;
    ts_packed env = ts_pack(&req.base);
    Tk__V1__Request *got = tk__v1__request__unpack(NULL, env.len, env.data);
    assert_non_null(got);
    assert_int_equal(got->call_id, UINT64_MAX);
    assert_string_equal(got->method, "tk.v1.Any/Method");
    assert_int_equal(got->timeout_ms, UINT32_MAX);
    ProtobufCMessage *inner = protobuf_c_message_unpack(
        m->descriptor, NULL, got->payload.len, got->payload.data);
    assert_non_null(inner);
    ts_packed again = ts_pack(inner);
    assert_int_equal(again.len, want->len);
    assert_memory_equal(again.data, want->data, want->len);
    free(again.data);
    protobuf_c_message_free_unpacked(inner, NULL);
    tk__v1__request__free_unpacked(got, NULL);
    free(env.data);
}

static void reply_roundtrip(const ProtobufCMessage *m, const ts_packed *want)
{
    Tk__V1__Reply rep = TK__V1__REPLY__INIT;
    rep.call_id = 1;
    rep.payload.data = want->data;
    rep.payload.len = want->len;
    ts_packed env = ts_pack(&rep.base);
    Tk__V1__Reply *got = tk__v1__reply__unpack(NULL, env.len, env.data);
    assert_non_null(got);
    ProtobufCMessage *inner = protobuf_c_message_unpack(
        m->descriptor, NULL, got->payload.len, got->payload.data);
    assert_non_null(inner);
    ts_packed again = ts_pack(inner);
    assert_int_equal(again.len, want->len);
    assert_memory_equal(again.data, want->data, want->len);
    free(again.data);
    protobuf_c_message_free_unpacked(inner, NULL);
    tk__v1__reply__free_unpacked(got, NULL);
    free(env.data);
}

static void test_every_message_in_envelopes(void **state)
{
    (void)state;
    size_t n = tk_catalog_message_count();
    assert_true(n >= 11);
    for (size_t i = 0; i < n; i++) {
        const ProtobufCMessageDescriptor *d = tk_catalog_message(i);
        for (unsigned variant = 0; variant < 3; variant++) {
            ProtobufCMessage *m = ts_sample(d, variant);
            ts_packed want = ts_pack(m);
            /* every field set: never empty, unless it has no fields */
            assert_true(want.len > 0 || d->n_fields == 0);
            request_roundtrip(m, &want);
            reply_roundtrip(m, &want);
            free(want.data);
            protobuf_c_message_free_unpacked(m, NULL);
        }
    }
}

/* The Status a client decodes: every field survives the wire. */
static void test_status_fields(void **state)
{
    (void)state;
    Tk__V1__Cancellation cn = TK__V1__CANCELLATION__INIT;
    cn.cause = TK__V1__CANCELLATION__CAUSE__LIMIT;
    cn.process_killed = 1;
    cn.write_completed = 1;
    cn.cleanup_ms = 2000;
    Tk__V1__Status st = TK__V1__STATUS__INIT;
    st.code = TK__V1__STATUS__CODE__UNAUTHENTICATED;
    st.message = "m";
    st.reason = "R";
    static uint8_t err[] = { 0xff, 0, 'x' };
    st.stderr_excerpt.data = err;
    st.stderr_excerpt.len = sizeof err;
    st.partial = 1;
    st.retry_after_ms = 7;
    st.elapsed_us = UINT64_MAX;
    st.cancellation = &cn;
    Tk__V1__Reply rep = TK__V1__REPLY__INIT;
    rep.status = &st;
    ts_packed p = ts_pack(&rep.base);
    Tk__V1__Reply *got = tk__v1__reply__unpack(NULL, p.len, p.data);
    assert_non_null(got);
    assert_int_equal(got->status->code, 16);
    assert_string_equal(got->status->message, "m");
    assert_string_equal(got->status->reason, "R");
    assert_int_equal(got->status->stderr_excerpt.len, 3);
    assert_memory_equal(got->status->stderr_excerpt.data, err, 3);
    assert_true(got->status->partial);
    assert_int_equal(got->status->retry_after_ms, 7);
    assert_int_equal(got->status->elapsed_us, UINT64_MAX);
    assert_int_equal(got->status->cancellation->cause, 4);
    assert_true(got->status->cancellation->process_killed);
    assert_true(got->status->cancellation->write_completed);
    assert_int_equal(got->status->cancellation->cleanup_ms, 2000);
    tk__v1__reply__free_unpacked(got, NULL);
    free(p.data);
}

/* The client's names for codes and causes follow the proto's enums. */
static void test_names_match_proto(void **state)
{
    (void)state;
    const ProtobufCEnumDescriptor *codes =
        tk_catalog_find_enum("tk.v1.Status.Code");
    assert_non_null(codes);
    for (unsigned i = 0; i < codes->n_values; i++) {
        assert_string_equal(tk_code_name(codes->values[i].value),
                            codes->values[i].name);
        assert_int_equal(tk_code_from_name(codes->values[i].name),
                         codes->values[i].value);
    }
    const ProtobufCEnumDescriptor *causes =
        tk_catalog_find_enum("tk.v1.Cancellation.Cause");
    assert_non_null(causes);
    for (unsigned i = 0; i < causes->n_values; i++)
        assert_string_equal(tk_cause_name(causes->values[i].value),
                            causes->values[i].name);
    const ProtobufCEnumDescriptor *outcomes =
        tk_catalog_find_enum("tk.v1.CancelReply.Outcome");
    assert_non_null(outcomes);
    for (unsigned i = 1; i < outcomes->n_values; i++)
        assert_string_equal(tk_cancel_outcome_name(outcomes->values[i].value),
                            outcomes->values[i].name);
    assert_int_equal(tk_code_from_name("NOPE"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_message_in_envelopes),
        cmocka_unit_test(test_status_fields),
        cmocka_unit_test(test_names_match_proto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
