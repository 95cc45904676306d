/* SPDX-License-Identifier: MIT */
/* The JSON codec (client/json, tk/json.h): a generic round trip of every
 * message of the catalog and of the fixture protos (every field set by
 * reflection), then the mapping's rules one by one. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>
#include <tk/json.h>

#include "json_fixture.pb-c.h"
#include "sample.h"
#include "json_fixture2.pb-c.h"
#include "tk/v1/control.pb-c.h"
#include "tk/v1/git.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

#define MEM(msg, off) ((void *)((char *)(msg) + (off)))
#define VARIANTS 5

static const ProtobufCMessageDescriptor *const fixtures[] = {
    &tk__jsontest__scalars__descriptor, &tk__jsontest__repeats__descriptor,
    &tk__jsontest__tree__descriptor,    &tk__jsontest__choice__descriptor,
    &tk__jsontest__maps__descriptor,    &tk__jsontest__legacy__descriptor,
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

/* ---- the round trip ---------------------------------------------------- */

typedef struct packed {
    uint8_t *p;
    size_t n;
} packed;

static packed pack(const ProtobufCMessage *m)
{
    packed b;
    b.n = protobuf_c_message_get_packed_size(m);
    b.p = malloc(b.n + 1);
    assert_non_null(b.p);
    assert_int_equal(protobuf_c_message_pack(m, b.p), b.n);
    return b;
}

/* Decodes in the mode of flags (TK_JSON_BYTES_TEXT or not). */
static ProtobufCMessage *decode_ok_ex(const ProtobufCMessageDescriptor *desc,
                                      const char *json, int flags)
{
    char err[512] = "";
    ProtobufCMessage *m = NULL;
    int rv =
        tk_json_decode_ex(&m, desc, json, strlen(json), flags, err, sizeof err);
    if (rv != 0)
        fail_msg("%s: decoding %s failed (%d): %s", desc->name, json, rv, err);
    assert_non_null(m);
    return m;
}

static ProtobufCMessage *decode_ok(const ProtobufCMessageDescriptor *desc,
                                   const char *json)
{
    return decode_ok_ex(desc, json, 0);
}

/* Every field set in m appears in its JSON by its lowerCamelCase name. */
static void check_names(const ProtobufCMessage *m, const char *json)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)MEM(m, f->quantifier_offset) != f->id)
            continue;
        char name[128] = "\"";
        size_t k = 1;
        bool up = false;
        for (const char *p = f->name; *p; p++) {
            if (*p == '_') {
                up = true;
            } else {
                name[k++] = (char)(up && *p >= 'a' && *p <= 'z' ? *p - 32 : *p);
                up = false;
            }
        }
        snprintf(name + k, sizeof name - k, "\":");
        if (strstr(json, name) == NULL)
            fail_msg("%s: field %s missing from %s", desc->name, name, json);
    }
}

static void check_roundtrip(const ProtobufCMessage *m, int flags)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    packed a = pack(m);
    char *j1 = tk_json_encode(m, flags);
    assert_non_null(j1);
    ProtobufCMessage *m2 = decode_ok_ex(desc, j1, flags);
    packed b = pack(m2);
    if (a.n != b.n || memcmp(a.p, b.p, a.n) != 0)
        fail_msg("%s: packed bytes differ after the JSON round trip of %s "
                 "(%zu vs %zu bytes)",
                 desc->name, j1, a.n, b.n);
    char *j2 = tk_json_encode(m2, flags);
    assert_non_null(j2);
    assert_string_equal(j1, j2);
    /* The same message read from the wire prints the same JSON. */
    ProtobufCMessage *m3 = protobuf_c_message_unpack(desc, NULL, a.n, a.p);
    assert_non_null(m3);
    char *j3 = tk_json_encode(m3, flags);
    assert_string_equal(j1, j3);
    free(j3);
    protobuf_c_message_free_unpacked(m3, NULL);
    free(j2);
    free(b.p);
    protobuf_c_message_free_unpacked(m2, NULL);
    free(j1);
    free(a.p);
}

/* EMIT_DEFAULTS round-trips to the same bytes only without field
 * presence: a printed proto2 default reads back as set (has_ true). */
static bool is_proto3(const ProtobufCMessageDescriptor *desc, int depth)
{
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REQUIRED ||
            (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
             !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)))
            return false;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < TS_SAMPLE_DEPTH &&
            !is_proto3(f->descriptor, depth + 1))
            return false;
    }
    return true;
}

static void roundtrip_desc(const ProtobufCMessageDescriptor *desc)
{
    for (unsigned v = 0; v < VARIANTS; v++) {
        ProtobufCMessage *m = ts_sample(desc, v);
        char *json = tk_json_encode(m, 0);
        assert_non_null(json);
        check_names(m, json);
        free(json);
        /* Both forms of bytes: the samples' bytes are "\0" (text) and
         * bytes that are not UTF-8 ({"base64":...}). */
        for (int text = 0; text <= TK_JSON_BYTES_TEXT;
             text += TK_JSON_BYTES_TEXT) {
            check_roundtrip(m, text);
            check_roundtrip(m, text | TK_JSON_PRETTY);
            if (is_proto3(desc, 0))
                check_roundtrip(m,
                                text | TK_JSON_EMIT_DEFAULTS | TK_JSON_PRETTY);
        }
        protobuf_c_message_free_unpacked(m, NULL);
    }
    /* The empty message. */
    ProtobufCMessage *m = malloc(desc->sizeof_message);
    assert_non_null(m);
    protobuf_c_message_init(desc, m);
    check_roundtrip(m, 0);
    check_roundtrip(m, TK_JSON_BYTES_TEXT);
    if (is_proto3(desc, 0)) {
        check_roundtrip(m, TK_JSON_EMIT_DEFAULTS);
        check_roundtrip(m, TK_JSON_EMIT_DEFAULTS | TK_JSON_BYTES_TEXT);
    }
    protobuf_c_message_free_unpacked(m, NULL);
}

static void test_roundtrip_catalog(void **state)
{
    (void)state;
    assert_true(tk_catalog_message_count() > 0);
    for (size_t i = 0; i < tk_catalog_message_count(); i++)
        roundtrip_desc(tk_catalog_message(i));
}

static void test_roundtrip_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++)
        roundtrip_desc(fixtures[i]);
}

/* ---- the rules, one by one ----------------------------------------------- */

static void decode_err(const ProtobufCMessageDescriptor *desc, const char *json,
                       size_t len, const char *want)
{
    char err[512] = "";
    ProtobufCMessage *m = (ProtobufCMessage *)&err; /* must become NULL */
    int rv = tk_json_decode(desc, json, len, &m, err, sizeof err);
    if (rv != TK_ERR_ARG)
        fail_msg("decoding %s as %s: want TK_ERR_ARG, got %d", json, desc->name,
                 rv);
    assert_null(m);
    if (strstr(err, want) == NULL)
        fail_msg("decoding %s: error \"%s\" lacks \"%s\"", json, err, want);
}

#define ERR(desc, json, want) decode_err(desc, json, strlen(json), want)

/* As ERR, in the text mode of bytes. */
static void decode_err_text(const ProtobufCMessageDescriptor *desc,
                            const char *json, const char *want)
{
    char err[512] = "";
    ProtobufCMessage *m = (ProtobufCMessage *)&err; /* must become NULL */
    int rv = tk_json_decode_ex(&m, desc, json, strlen(json), TK_JSON_BYTES_TEXT,
                               err, sizeof err);
    if (rv != TK_ERR_ARG)
        fail_msg("decoding %s as %s in text mode: want TK_ERR_ARG, got %d",
                 json, desc->name, rv);
    assert_null(m);
    if (strstr(err, want) == NULL)
        fail_msg("decoding %s: error \"%s\" lacks \"%s\"", json, err, want);
}

static void test_exact_text(void **state)
{
    (void)state;
    Tk__V1__PingReply r = TK__V1__PING_REPLY__INIT;
    r.data.data = (uint8_t *)"hi";
    r.data.len = 2;
    r.server_version = "1.0";
    r.uptime_ms = 5;
    char *c = tk_json_encode(&r.base, 0);
    assert_string_equal(
        c, "{\"data\":\"aGk=\",\"serverVersion\":\"1.0\",\"uptimeMs\":\"5\"}");
    char *p = tk_json_encode(&r.base, TK_JSON_PRETTY);
    assert_string_equal(p, "{\n"
                           "  \"data\": \"aGk=\",\n"
                           "  \"serverVersion\": \"1.0\",\n"
                           "  \"uptimeMs\": \"5\"\n"
                           "}");
    free(c);
    free(p);

    Tk__V1__PingReply empty = TK__V1__PING_REPLY__INIT;
    c = tk_json_encode(&empty.base, 0);
    assert_string_equal(c, "{}");
    free(c);
    c = tk_json_encode(&empty.base, TK_JSON_PRETTY);
    assert_string_equal(c, "{}");
    free(c);
    c = tk_json_encode(&empty.base, TK_JSON_EMIT_DEFAULTS);
    assert_string_equal(
        c, "{\"data\":\"\",\"serverVersion\":\"\",\"uptimeMs\":\"0\"}");
    free(c);
}

/* A zero that is a value is printed: ahead/behind with hasAheadBehind, a
 * Metric's value without a histogram; not otherwise, the same message. */
static void test_zero_that_is_a_value(void **state)
{
    (void)state;
    Tk__V1__GitStatusBranch b = TK__V1__GIT_STATUS_BRANCH__INIT;
    char *c = tk_json_encode(&b.base, 0);
    assert_string_equal(c, "{}");
    free(c);
    b.has_ahead_behind = true;
    c = tk_json_encode(&b.base, 0);
    assert_string_equal(c, "{\"hasAheadBehind\":true,\"ahead\":0,"
                           "\"behind\":0}");
    free(c);
    b.ahead = 2;
    c = tk_json_encode(&b.base, 0);
    assert_string_equal(c, "{\"hasAheadBehind\":true,\"ahead\":2,"
                           "\"behind\":0}");
    free(c);

    Tk__V1__Metric m = TK__V1__METRIC__INIT;
    c = tk_json_encode(&m.base, 0);
    assert_string_equal(c, "{\"value\":0}");
    free(c);
    Tk__V1__Histogram h = TK__V1__HISTOGRAM__INIT;
    m.histogram = &h;
    c = tk_json_encode(&m.base, 0);
    assert_string_equal(c, "{\"histogram\":{}}");
    free(c);
    /* Read back: the same message. */
    ProtobufCMessage *back = NULL;
    assert_int_equal(tk_json_decode(&tk__v1__metric__descriptor,
                                    "{\"value\":0}", 11, &back, NULL, 0),
                     0);
    c = tk_json_encode(back, 0);
    assert_string_equal(c, "{\"value\":0}");
    free(c);
    protobuf_c_message_free_unpacked(back, NULL);
}

static void test_exact_nested(void **state)
{
    (void)state;
    Tk__V1__MethodInfo a = TK__V1__METHOD_INFO__INIT, b = a;
    a.name = "tk.v1.Control/Ping";
    a.kind = TK__V1__METHOD_INFO__KIND__READ;
    a.default_timeout_ms = 5000;
    b.name = "x";
    b.kind = 7; /* a number the enum does not name */
    Tk__V1__MethodInfo *list[] = { &a, &b };
    Tk__V1__ListMethodsReply r = TK__V1__LIST_METHODS_REPLY__INIT;
    r.methods = list;
    r.n_methods = 2;
    char *p = tk_json_encode(&r.base, TK_JSON_PRETTY);
    assert_string_equal(p, "{\n"
                           "  \"methods\": [\n"
                           "    {\n"
                           "      \"name\": \"tk.v1.Control/Ping\",\n"
                           "      \"kind\": \"READ\",\n"
                           "      \"defaultTimeoutMs\": 5000\n"
                           "    },\n"
                           "    {\n"
                           "      \"name\": \"x\",\n"
                           "      \"kind\": 7\n"
                           "    }\n"
                           "  ]\n"
                           "}");
    free(p);

    Tk__V1__ListMethodsReply none = TK__V1__LIST_METHODS_REPLY__INIT;
    p = tk_json_encode(&none.base, TK_JSON_PRETTY | TK_JSON_EMIT_DEFAULTS);
    assert_string_equal(p, "{\n  \"methods\": []\n}");
    free(p);
}

static void test_camel_names(void **state)
{
    (void)state;
    char name[16];
    assert_int_equal(tk_json_field_name(name, sizeof name, "retry_after_ms"),
                     12);
    assert_string_equal(name, "retryAfterMs");
    assert_int_equal(tk_json_field_name(name, 6, "stderr_excerpt"), 13);
    assert_string_equal(name, "stder"); /* cut, still terminated */
    Tk__V1__Cancellation cc = TK__V1__CANCELLATION__INIT;
    cc.cause = TK__V1__CANCELLATION__CAUSE__DEADLINE;
    cc.process_killed = 1;
    Tk__V1__Status s = TK__V1__STATUS__INIT;
    s.code = TK__V1__STATUS__CODE__DEADLINE_EXCEEDED;
    s.message = "m";
    s.stderr_excerpt.data = (uint8_t *)"e\xff";
    s.stderr_excerpt.len = 2;
    s.retry_after_ms = 10;
    s.elapsed_us = (UINT64_C(1) << 53) + 1;
    s.cancellation = &cc;
    char *c = tk_json_encode(&s.base, 0);
    assert_string_equal(c,
                        "{\"code\":\"DEADLINE_EXCEEDED\",\"message\":\"m\","
                        "\"stderrExcerpt\":\"Zf8=\",\"retryAfterMs\":10,"
                        "\"elapsedUs\":\"9007199254740993\",\"cancellation\":"
                        "{\"cause\":\"DEADLINE\",\"processKilled\":true}}");
    free(c);
}

static void test_both_names(void **state)
{
    (void)state;
    const char *forms[] = {
        "{\"stderr_excerpt\":\"Zf8=\",\"retry_after_ms\":7}",
        "{\"stderrExcerpt\":\"Zf8=\",\"retryAfterMs\":7}",
        "{\"stderrExcerpt\":\"Zf8=\",\"retry_after_ms\":7}",
    };
    for (size_t i = 0; i < 3; i++) {
        Tk__V1__Status *s =
            (Tk__V1__Status *)decode_ok(&tk__v1__status__descriptor, forms[i]);
        assert_int_equal(s->stderr_excerpt.len, 2);
        assert_memory_equal(s->stderr_excerpt.data, "e\xff", 2);
        assert_int_equal(s->retry_after_ms, 7);
        tk__v1__status__free_unpacked(s, NULL);
    }
    ERR(&tk__v1__status__descriptor,
        "{\"retry_after_ms\":7,\"retryAfterMs\":8}", "given twice");
}

static void test_unknown_field(void **state)
{
    (void)state;
    char err[256];
    ProtobufCMessage *m = NULL;
    const char *j = "{\"rpeo\":1}";
    assert_int_equal(tk_json_decode(&tk__v1__ping_request__descriptor, j,
                                    strlen(j), &m, err, sizeof err),
                     TK_ERR_ARG);
    assert_string_equal(err, "unknown field \"rpeo\" in tk.v1.PingRequest");
    ERR(&tk__v1__list_methods_reply__descriptor,
        "{\"methods\":[{},{},{\"nmae\":\"x\"}]}",
        "methods[2]: unknown field \"nmae\" in tk.v1.MethodInfo");
}

static void test_wrong_types(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *lm =
        &tk__v1__list_methods_reply__descriptor;
    ERR(lm, "{\"methods\":[{},{},{\"kind\":true}]}", "methods[2].kind: ");
    ERR(lm, "{\"methods\":{}}", "methods: expected an array, got an object");
    ERR(lm, "{\"methods\":[1]}", "methods[0]: expected an object");
    ERR(lm, "{\"methods\":[null]}", "methods[0]: null is not");
    ERR(&tk__v1__ping_request__descriptor, "{\"data\":5}",
        "data: expected base64 bytes (a string), got a number");
    ERR(&tk__v1__method_info__descriptor, "{\"name\":[]}",
        "name: expected a string, got an array");
    ERR(&tk__v1__method_info__descriptor, "{\"ceilingMs\":\"ten\"}",
        "ceilingMs: \"ten\" is not a number");
    ERR(&tk__v1__cancellation__descriptor, "{\"processKilled\":1}",
        "processKilled: expected true or false");
    ERR(&tk__v1__reply__descriptor, "{\"status\":{\"cancellation\":[]}}",
        "status.cancellation: expected an object (tk.v1.Cancellation), got "
        "an array");
}

static void test_utf8(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *st = &tk__v1__status__descriptor;
    ERR(st, "{\"message\":\"a\xff\"}",
        "message: invalid JSON at line 1, "
        "column 14: invalid UTF-8");
    ERR(st, "{\"message\":\"\xc0\xaf\"}", "invalid UTF-8");     /* overlong */
    ERR(st, "{\"message\":\"\xed\xa0\x80\"}", "invalid UTF-8"); /* surrogate */
    ERR(st, "{\"message\":\"\\ud800\"}", "unpaired UTF-16 surrogate");
    ERR(st, "{\"message\":\"\\udc00x\"}", "unpaired UTF-16 surrogate");
    ERR(st, "{\"message\":\"a\\u0000b\"}",
        "message: a string field cannot "
        "hold U+0000");
    Tk__V1__Status *s = (Tk__V1__Status *)decode_ok(
        st, "{\"message\":\"\\ud83d\\ude00 \\u00e9\\n\xe2\x9c\x93\"}");
    assert_string_equal(s->message, "\xf0\x9f\x98\x80 \xc3\xa9\n\xe2\x9c\x93");
    tk__v1__status__free_unpacked(s, NULL);

    /* Invalid UTF-8 held by a message is printed as U+FFFD. */
    Tk__V1__Status bad = TK__V1__STATUS__INIT;
    bad.message = "a\xff";
    char *c = tk_json_encode(&bad.base, 0);
    assert_string_equal(c, "{\"message\":\"a\xef\xbf\xbd\"}");
    free(c);
}

static void test_base64(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *pr = &tk__v1__ping_request__descriptor;
    const char *same[] = { "{\"data\":\"+/8=\"}", "{\"data\":\"+/8\"}",
                           "{\"data\":\"-_8=\"}", "{\"data\":\"-_8\"}" };
    for (size_t i = 0; i < 4; i++) {
        Tk__V1__PingRequest *r = (Tk__V1__PingRequest *)decode_ok(pr, same[i]);
        assert_int_equal(r->data.len, 2);
        assert_memory_equal(r->data.data, "\xfb\xff", 2);
        tk__v1__ping_request__free_unpacked(r, NULL);
    }
    Tk__V1__PingRequest *r =
        (Tk__V1__PingRequest *)decode_ok(pr, "{\"data\":\"\"}");
    assert_int_equal(r->data.len, 0);
    tk__v1__ping_request__free_unpacked(r, NULL);
    const char *bad[] = { "a", "ab=", "a===", "!!!!", "ab=c", "ab c", "abcd=" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char j[64];
        snprintf(j, sizeof j, "{\"data\":\"%s\"}", bad[i]);
        ERR(pr, j, "data: invalid base64");
    }
}

/* ---- bytes as text (TK_JSON_BYTES_TEXT) ---------------------------------- */

static char *encode_ping(const void *data, size_t len, int flags)
{
    Tk__V1__PingReply r = TK__V1__PING_REPLY__INIT;
    r.data.data = (uint8_t *)(uintptr_t)data;
    r.data.len = len;
    char *j = tk_json_encode(&r.base, flags);
    assert_non_null(j);
    return j;
}

static void test_bytes_text_encode(void **state)
{
    (void)state;
    const int t = TK_JSON_BYTES_TEXT;
    char *j = encode_ping("hi", 2, t);
    assert_string_equal(j, "{\"data\":\"hi\"}");
    free(j);
    j = encode_ping("hi", 2, 0); /* the proto3 mapping: base64 */
    assert_string_equal(j, "{\"data\":\"aGk=\"}");
    free(j);
    /* Not UTF-8: the object form, never text with U+FFFD in it. */
    j = encode_ping("gen\xff", 4, t);
    assert_string_equal(j, "{\"data\":{\"base64\":\"Z2Vu/w==\"}}");
    free(j);
    j = encode_ping("gen\xff", 4, t | TK_JSON_PRETTY);
    assert_string_equal(j, "{\n  \"data\": {\"base64\": \"Z2Vu/w==\"}\n}");
    free(j);
    /* U+0000, control characters and quotes are text, escaped by JSON. */
    j = encode_ping("a\0b\n\"\xe2\x9c\x93", 8, t);
    assert_string_equal(j, "{\"data\":\"a\\u0000b\\n\\\"\xe2\x9c\x93\"}");
    free(j);
    /* A lone surrogate encoded in UTF-8 (ED A0 80) is not UTF-8. */
    j = encode_ping("\xed\xa0\x80", 3, t);
    assert_string_equal(j, "{\"data\":{\"base64\":\"7aCA\"}}");
    free(j);
    j = encode_ping(NULL, 0, t | TK_JSON_EMIT_DEFAULTS);
    assert_string_equal(j, "{\"data\":\"\",\"serverVersion\":\"\","
                           "\"uptimeMs\":\"0\"}");
    free(j);
}

/* data of a PingRequest decoded from json in mode flags is want[0..n). */
static void expect_data(const char *json, int flags, const char *want, size_t n)
{
    Tk__V1__PingRequest *r = (Tk__V1__PingRequest *)decode_ok_ex(
        &tk__v1__ping_request__descriptor, json, flags);
    if (r->data.len != n || (n > 0 && memcmp(r->data.data, want, n) != 0))
        fail_msg("%s (flags %d): %zu bytes, want %zu", json, flags, r->data.len,
                 n);
    tk__v1__ping_request__free_unpacked(r, NULL);
}

static void test_bytes_text_decode(void **state)
{
    (void)state;
    const int t = TK_JSON_BYTES_TEXT;
    expect_data("{\"data\":\"hi\"}", t, "hi", 2);
    /* The Ping: in the proto3 mapping "hi" is base64 of one byte. */
    expect_data("{\"data\":\"hi\"}", 0, "\x86", 1);
    /* Text that looks like base64 is text. */
    expect_data("{\"data\":\"aGk=\"}", t, "aGk=", 4);
    expect_data("{\"data\":\"aGk=\"}", 0, "hi", 2);
    expect_data("{\"data\":{\"base64\":\"aGk=\"}}", t, "hi", 2);
    expect_data("{\"data\":{\"base64\":\"Z2Vu_w\"}}", t, "gen\xff", 4);
    expect_data("{\"data\":\"a\\u0000b\\u00e9\"}", t, "a\0b\xc3\xa9", 5);
    expect_data("{\"data\":\"\"}", t, "", 0);
    expect_data("{\"data\":{\"base64\":\"\"}}", t, "", 0);
    expect_data("{\"data\":null}", t, "", 0);
}

static void test_bytes_text_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *pr = &tk__v1__ping_request__descriptor;
    decode_err_text(pr, "{\"data\":{\"base64\":\"a\"}}",
                    "data.base64: invalid base64");
    decode_err_text(pr, "{\"data\":{\"base64\":\"!!!!\"}}",
                    "data.base64: invalid base64");
    decode_err_text(pr, "{\"data\":{\"base64\":7}}",
                    "data.base64: expected base64 (a string), got a number");
    decode_err_text(pr, "{\"data\":{\"base46\":\"aGk=\"}}",
                    "data: expected bytes as text (a string) or "
                    "{\"base64\":\"...\"} (bytes that are not UTF-8), got "
                    "another object");
    decode_err_text(pr, "{\"data\":{\"base64\":\"aGk=\",\"text\":\"x\"}}",
                    "data: expected bytes as text");
    decode_err_text(pr, "{\"data\":{}}", "data: expected bytes as text");
    decode_err_text(pr, "{\"data\":12}", "got a number");
    decode_err_text(pr, "{\"data\":[\"a\"]}", "got an array");
    /* The object form belongs to the text mode only. */
    ERR(pr, "{\"data\":{\"base64\":\"aGk=\"}}",
        "data: expected base64 bytes (a string), got an object");
    /* Repeated bytes and map values, with the path of the bad one. */
    const ProtobufCMessageDescriptor *rp = &tk__jsontest__repeats__descriptor;
    decode_err_text(rp, "{\"rBytes\":[\"ok\",{\"base64\":\"=\"}]}",
                    "rBytes[1].base64: invalid base64");
    const ProtobufCMessageDescriptor *mp = &tk__jsontest__maps__descriptor;
    decode_err_text(mp, "{\"uBytes\":{\"7\":{\"base64\":\"%%\"}}}",
                    "uBytes[\"7\"].base64: invalid base64");
}

static void test_bytes_text_repeated_and_maps(void **state)
{
    (void)state;
    const int t = TK_JSON_BYTES_TEXT;
    const char *rj = "{\"rBytes\":[\"gen/\",{\"base64\":\"/w==\"},\"\"]}";
    Tk__Jsontest__Repeats *r = (Tk__Jsontest__Repeats *)decode_ok_ex(
        &tk__jsontest__repeats__descriptor, rj, t);
    assert_int_equal(r->n_r_bytes, 3);
    assert_int_equal(r->r_bytes[0].len, 4);
    assert_memory_equal(r->r_bytes[0].data, "gen/", 4);
    assert_int_equal(r->r_bytes[1].len, 1);
    assert_int_equal(r->r_bytes[1].data[0], 0xff);
    assert_int_equal(r->r_bytes[2].len, 0);
    char *j = tk_json_encode(&r->base, t);
    assert_string_equal(j, rj);
    free(j);
    tk__jsontest__repeats__free_unpacked(r, NULL);

    const char *mj = "{\"uBytes\":{\"1\":\"one\",\"2\":{\"base64\":\"/v8=\"}}}";
    Tk__Jsontest__Maps *m = (Tk__Jsontest__Maps *)decode_ok_ex(
        &tk__jsontest__maps__descriptor, mj, t);
    assert_int_equal(m->n_u_bytes, 2);
    j = tk_json_encode(&m->base, t);
    assert_string_equal(j, mj);
    free(j);
    tk__jsontest__maps__free_unpacked(m, NULL);

    Tk__Jsontest__Choice *c = (Tk__Jsontest__Choice *)decode_ok_ex(
        &tk__jsontest__choice__descriptor, "{\"b\":\"x\"}", t);
    assert_int_equal(c->pick_case, TK__JSONTEST__CHOICE__PICK_B);
    assert_int_equal(c->b.len, 1);
    tk__jsontest__choice__free_unpacked(c, NULL);
}

static void test_integers(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *cr = &tk__v1__cancel_request__descriptor;
    const ProtobufCMessageDescriptor *sc = &tk__jsontest__scalars__descriptor;
    Tk__V1__CancelRequest *c = (Tk__V1__CancelRequest *)decode_ok(
        cr, "{\"callId\":18446744073709551615}");
    assert_true(c->call_id == UINT64_MAX);
    tk__v1__cancel_request__free_unpacked(c, NULL);
    c = (Tk__V1__CancelRequest *)decode_ok(cr,
                                           "{\"callId\":\"9007199254740993\"}");
    assert_true(c->call_id == (UINT64_C(1) << 53) + 1);
    tk__v1__cancel_request__free_unpacked(c, NULL);
    c = (Tk__V1__CancelRequest *)decode_ok(cr, "{\"callId\":1e3}");
    assert_true(c->call_id == 1000);
    tk__v1__cancel_request__free_unpacked(c, NULL);
    c = (Tk__V1__CancelRequest *)decode_ok(cr, "{\"callId\":\"12.50e1\"}");
    assert_true(c->call_id == 125);
    tk__v1__cancel_request__free_unpacked(c, NULL);

    ERR(cr, "{\"callId\":18446744073709551616}",
        "callId: 18446744073709551616 "
        "is out of range for uint64");
    ERR(cr, "{\"callId\":\"18446744073709551616\"}", "out of range");
    ERR(cr, "{\"callId\":-1}", "out of range for uint64");
    ERR(cr, "{\"callId\":1.5}", "callId: 1.5 is not an integer");
    ERR(cr, "{\"callId\":1e400}", "out of range");
    ERR(cr, "{\"callId\":\" 1\"}", "is not a number");
    ERR(&tk__v1__status__descriptor, "{\"retryAfterMs\":4294967296}",
        "retryAfterMs: 4294967296 is out of range for uint32");
    ERR(sc, "{\"fInt32\":2147483648}", "out of range for int32");
    ERR(sc, "{\"fInt32\":-2147483649}", "out of range for int32");
    ERR(sc, "{\"fInt64\":9223372036854775808}", "out of range for int64");
    ERR(sc, "{\"fSint64\":\"-9223372036854775809\"}", "out of range");

    Tk__Jsontest__Scalars *s = (Tk__Jsontest__Scalars *)decode_ok(
        sc, "{\"fInt32\":-2147483648,\"fInt64\":\"-9223372036854775808\","
            "\"fUint32\":\"4294967295\",\"fSfixed64\":9223372036854775807,"
            "\"fDouble\":99999999999999999999,\"fFloat\":\"-0\"}");
    assert_int_equal(s->f_int32, INT32_MIN);
    assert_true(s->f_int64 == INT64_MIN);
    assert_true(s->f_uint32 == UINT32_MAX);
    assert_true(s->f_sfixed64 == INT64_MAX);
    /* json-c alone would have clamped this to UINT64_MAX. */
    assert_true(s->f_double == 1e20);
    tk__jsontest__scalars__free_unpacked(s, NULL);
}

static void test_reals(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *sc = &tk__jsontest__scalars__descriptor;
    Tk__Jsontest__Scalars *s = (Tk__Jsontest__Scalars *)decode_ok(
        sc, "{\"fDouble\":\"NaN\",\"fFloat\":\"-Infinity\"}");
    assert_true(isnan(s->f_double));
    assert_true(isinf(s->f_float) && s->f_float < 0);
    char *c = tk_json_encode(&s->base, 0);
    assert_string_equal(c, "{\"fFloat\":\"-Infinity\",\"fDouble\":\"NaN\"}");
    free(c);
    tk__jsontest__scalars__free_unpacked(s, NULL);

    s = (Tk__Jsontest__Scalars *)decode_ok(
        sc, "{\"fDouble\":\"1.5\",\"fFloat\":3.4028235e38}");
    assert_true(s->f_double == 1.5 && s->f_float == FLT_MAX);
    c = tk_json_encode(&s->base, 0);
    assert_string_equal(c, "{\"fFloat\":3.4028235e+38,\"fDouble\":1.5}");
    free(c);
    tk__jsontest__scalars__free_unpacked(s, NULL);

    ERR(sc, "{\"fFloat\":1e39}", "fFloat: 1e39 is out of range for float");
    ERR(sc, "{\"fDouble\":1e309}", "out of range for double");
    ERR(sc, "{\"fDouble\":\"nan\"}", "is not a number");
    ERR(sc, "{\"fDouble\":true}", "fDouble: expected double");
}

static void test_enums(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *lm =
        &tk__v1__list_methods_reply__descriptor;
    ERR(lm, "{\"methods\":[{\"kind\":\"READ\"},{\"kind\":\"REED\"}]}",
        "methods[1].kind: unknown enum value \"REED\" for "
        "tk.v1.MethodInfo.Kind (one of: KIND_UNSPECIFIED, READ, WRITE)");
    ERR(lm, "{\"methods\":[{\"kind\":2147483648}]}", "out of range");
    ERR(lm, "{\"methods\":[{\"kind\":1.5}]}", "not an integer");
    Tk__V1__ListMethodsReply *r = (Tk__V1__ListMethodsReply *)decode_ok(
        lm, "{\"methods\":[{\"kind\":2},{\"kind\":\"READ\"},{\"kind\":9}]}");
    assert_int_equal(r->n_methods, 3);
    assert_int_equal(r->methods[0]->kind, TK__V1__METHOD_INFO__KIND__WRITE);
    assert_int_equal(r->methods[1]->kind, TK__V1__METHOD_INFO__KIND__READ);
    assert_int_equal(r->methods[2]->kind, 9);
    char *c = tk_json_encode(&r->base, 0);
    assert_string_equal(c, "{\"methods\":[{\"kind\":\"WRITE\"},{\"kind\":"
                           "\"READ\"},{\"kind\":9}]}");
    free(c);
    tk__v1__list_methods_reply__free_unpacked(r, NULL);
}

static void test_null_is_default(void **state)
{
    (void)state;
    Tk__V1__Status *s = (Tk__V1__Status *)decode_ok(
        &tk__v1__status__descriptor,
        "{\"code\":null,\"message\":null,\"stderrExcerpt\":null,"
        "\"cancellation\":null,\"elapsedUs\":null}");
    assert_int_equal(s->code, 0);
    assert_string_equal(s->message, "");
    assert_null(s->cancellation);
    tk__v1__status__free_unpacked(s, NULL);
    Tk__V1__ListMethodsReply *r = (Tk__V1__ListMethodsReply *)decode_ok(
        &tk__v1__list_methods_reply__descriptor, " {\"methods\" : null}\n");
    assert_int_equal(r->n_methods, 0);
    tk__v1__list_methods_reply__free_unpacked(r, NULL);
}

static void test_syntax(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *pr = &tk__v1__ping_request__descriptor;
    ERR(pr, "{} x", "trailing data after the JSON object");
    ERR(pr, "{}{}", "trailing data");
    ERR(pr, "{\"data\":\"\"} 1", "trailing data");
    ERR(pr, "[]", "the top level must be a JSON object, not an array");
    ERR(pr, "5", "not a number");
    ERR(pr, "\"x\"", "not a string");
    ERR(pr, "null", "not null");
    ERR(pr, "", "empty input");
    ERR(pr, " \n ", "empty input");
    ERR(pr, "{", "unexpected end of input");
    ERR(pr, "{\"data\":\"\"", "expected ',' or '}'");
    ERR(pr, "{\"data\":\"\",}", "expected a double-quoted key");
    ERR(pr, "{'data':''}", "keys take double quotes");
    ERR(pr, "{\"data\":'x'}", "strings take double quotes");
    ERR(pr, "{\"data\":\"a\tb\"}", "control character");
    ERR(pr, "{\"data\":\"\\x41\"}", "invalid escape");
    ERR(&tk__jsontest__scalars__descriptor, "{\"fDouble\":NaN}",
        "NaN and Infinity are strings");
    ERR(&tk__jsontest__scalars__descriptor, "{\"fDouble\":1.}",
        "invalid number");
    ERR(&tk__jsontest__scalars__descriptor, "{\"fInt32\":01}",
        "invalid number");
    ERR(&tk__jsontest__scalars__descriptor, "{\"fInt32\":+1}",
        "unexpected character");
    ERR(pr, "{\"data\":\"\",\"data\":\"aGk=\"}", "duplicate key \"data\"");
    ERR(pr, "{\"data\":\"\",\"d\\u0061ta\":\"aGk=\"}",
        "duplicate key \"data\"");
    ERR(&tk__v1__list_methods_reply__descriptor,
        "{\"methods\":[{},{\"name\":\"a\",\"name\":\"b\"}]}",
        "methods[1]: duplicate key \"name\"");
    /* The length given is the input: a NUL inside it is not an end. */
    decode_err(pr, "{}\0{", 4, "invalid JSON");
    ProtobufCMessage *m = NULL;
    assert_int_equal(tk_json_decode(pr, "{}garbage", 2, &m, NULL, 0), 0);
    protobuf_c_message_free_unpacked(m, NULL);

    char deep[600] = "";
    for (int i = 0; i < 100; i++)
        deep[i] = '[';
    char j[700];
    snprintf(j, sizeof j, "{\"data\":%s}", deep);
    ERR(pr, j, "nested too deeply");
}

static void test_oneof(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *ch = &tk__jsontest__choice__descriptor;
    ERR(ch, "{\"s\":\"x\",\"n\":\"5\"}",
        "n: only one member of a oneof may be set, and \"s\" is set already");
    Tk__Jsontest__Choice *c = (Tk__Jsontest__Choice *)decode_ok(
        ch, "{\"s\":null,\"n\":\"5\",\"afterPick\":1}");
    assert_int_equal(c->pick_case, TK__JSONTEST__CHOICE__PICK_N);
    assert_true(c->n == 5);
    tk__jsontest__choice__free_unpacked(c, NULL);
    /* A chosen member with its default value is still chosen. */
    c = (Tk__Jsontest__Choice *)decode_ok(ch, "{\"s\":\"\"}");
    assert_int_equal(c->pick_case, TK__JSONTEST__CHOICE__PICK_S);
    char *j = tk_json_encode(&c->base, 0);
    assert_string_equal(j, "{\"s\":\"\"}");
    free(j);
    tk__jsontest__choice__free_unpacked(c, NULL);
    c = (Tk__Jsontest__Choice *)decode_ok(ch, "{\"msg\":{}}");
    assert_int_equal(c->pick_case, TK__JSONTEST__CHOICE__PICK_MSG);
    j = tk_json_encode(&c->base, TK_JSON_EMIT_DEFAULTS);
    assert_non_null(strstr(j, "\"msg\":{"));
    assert_null(strstr(j, "\"s\":"));
    free(j);
    tk__jsontest__choice__free_unpacked(c, NULL);
    /* A failure after a member was set frees it. */
    ERR(ch, "{\"msg\":{\"fString\":\"x\"},\"b\":\"!\"}", "only one member");
    ERR(ch, "{\"s\":\"x\",\"afterPick\":\"y\"}", "afterPick: \"y\" is not");
}

static void test_maps(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *mp = &tk__jsontest__maps__descriptor;
    Tk__Jsontest__Maps *m = (Tk__Jsontest__Maps *)decode_ok(
        mp, "{\"ss\":{\"a\":\"b\",\"\":\"\"},\"iMsg\":{\"-5\":{}},"
            "\"u_bytes\":{\"18446744073709551615\":\"AA==\"},"
            "\"bEnum\":{\"true\":\"RED\",\"false\":7}}");
    assert_int_equal(m->n_ss, 2);
    assert_string_equal(m->ss[0]->key, "a");
    assert_string_equal(m->ss[0]->value, "b");
    assert_int_equal(m->n_i_msg, 1);
    assert_int_equal(m->i_msg[0]->key, -5);
    assert_non_null(m->i_msg[0]->value);
    assert_true(m->u_bytes[0]->key == UINT64_MAX);
    char *j = tk_json_encode(&m->base, 0);
    assert_string_equal(j,
                        "{\"ss\":{\"a\":\"b\",\"\":\"\"},\"iMsg\":{\"-5\":{}},"
                        "\"uBytes\":{\"18446744073709551615\":\"AA==\"},"
                        "\"bEnum\":{\"true\":\"RED\",\"false\":7}}");
    free(j);
    tk__jsontest__maps__free_unpacked(m, NULL);
    ERR(mp, "{\"iMsg\":{\"x\":{}}}", "iMsg[\"x\"]: \"x\" is not a number");
    ERR(mp, "{\"iMsg\":{\"1\":{},\"2\":{\"fUint32\":-1}}}",
        "iMsg[\"2\"].fUint32: -1 is out of range for uint32");
    ERR(mp, "{\"bEnum\":{\"yes\":1}}", "a bool map key is");
    ERR(mp, "{\"ss\":{\"a\":null}}", "ss[\"a\"]: null is not a map value");
    ERR(mp, "{\"ss\":[]}", "ss: expected an object (a map), got an array");
    ERR(mp, "{\"ss\":{\"a\":\"1\",\"a\":\"2\"}}", "ss: duplicate key \"a\"");
    /* tests/fuzz/corpus/json_decode/regress-int-map-key-twice: one integer
     * key written two ways made two entries of one key, and protobuf keeps
     * the last: the other value was dropped without a word. */
    ERR(mp, "{\"iMsg\":{\"-0\":{},\"0\":{}}}",
        "iMsg: duplicate key 0, written two ways");
    ERR(mp, "{\"sDouble\":{\"-1\":1,\"-1.0\":2}}",
        "sDouble: duplicate key -1, written two ways");
    ERR(mp,
        "{\"uBytes\":{\"18446744073709551615\":\"\",\"1."
        "8446744073709551615e19\":"
        "\"\"}}",
        "uBytes: duplicate key 18446744073709551615, written two ways");
}

/* tests/fuzz/corpus/json_roundtrip/regress-map-key-twice: a key may come
 * twice on the wire (protobuf keeps the last), and was printed twice, a
 * JSON object that tk_json_decode refuses. Each key once, with the last
 * value; keys compared as printed (bool 1 and 5 are both true, bytes that
 * are not UTF-8 all U+FFFD, a string key cut at its NUL). */
static void test_map_key_twice(void **state)
{
    (void)state;
    static const uint8_t wire[] = {
        0x0a, 0x06, 0x0a, 0x01, 'a',  0x12, 0x01, '1', /* ss a: 1 */
        0x0a, 0x06, 0x0a, 0x01, 'b',  0x12, 0x01, '2', /* ss b: 2 */
        0x0a, 0x06, 0x0a, 0x01, 'a',  0x12, 0x01, '3', /* ss a: 3 */
        0x0a, 0x06, 0x0a, 0x01, 0xff, 0x12, 0x01, '4', /* ss \xff: 4 */
        0x0a, 0x06, 0x0a, 0x01, 0xfe, 0x12, 0x01, '5', /* ss \xfe: 5 */
        0x0a, 0x08, 0x0a, 0x03, 'c',  0x00, 'x',  0x12, 0x01, '6', /* c\0x */
        0x0a, 0x06, 0x0a, 0x01, 'c',  0x12, 0x01, '7',             /* ss c: 7 */
        0x22, 0x04, 0x08, 0x01, 0x10, 0x01, /* bEnum true: RED */
        0x22, 0x04, 0x08, 0x05, 0x10, 0x3f, /* bEnum 5 (true): 63 */
    };
    ProtobufCMessage *m = protobuf_c_message_unpack(
        &tk__jsontest__maps__descriptor, NULL, sizeof wire, wire);
    assert_non_null(m);
    char *j = tk_json_encode(m, 0);
    assert_non_null(j);
    assert_string_equal(j, "{\"ss\":{\"b\":\"2\",\"a\":\"3\",\"\xef\xbf\xbd\":"
                           "\"5\",\"c\":\"7\"},\"bEnum\":{\"true\":63}}");
    ProtobufCMessage *back = decode_ok(&tk__jsontest__maps__descriptor, j);
    char *again = tk_json_encode(back, 0);
    assert_string_equal(again, j);
    free(again);
    protobuf_c_message_free_unpacked(back, NULL);
    free(j);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void test_proto2(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *lg = &tk__jsontest__legacy__descriptor;
    ERR(lg, "{\"name\":\"x\"}", "missing required field \"id\"");
    ERR(lg, "{\"id\":null}", "id: a required field cannot be null");
    ERR(lg, "{\"id\":1,\"next\":{}}", "next: missing required field \"id\"");
    Tk__Jsontest__Legacy *l =
        (Tk__Jsontest__Legacy *)decode_ok(lg, "{\"id\":0}");
    assert_false(l->has_big);
    assert_string_equal(l->name, "anon");
    char *j = tk_json_encode(&l->base, 0);
    assert_string_equal(j, "{\"id\":0}");
    free(j);
    j = tk_json_encode(&l->base, TK_JSON_EMIT_DEFAULTS);
    assert_string_equal(j, "{\"id\":0,\"name\":\"anon\",\"blob\":\"eHk=\","
                           "\"big\":\"7\",\"next\":null,\"nums\":[],"
                           "\"tags\":[],\"ratio\":0,\"shade\":\"DARK\","
                           "\"flag\":false}");
    free(j);
    tk__jsontest__legacy__free_unpacked(l, NULL);
    /* A present field equal to its default is printed: it has presence. */
    l = (Tk__Jsontest__Legacy *)decode_ok(
        lg, "{\"id\":1,\"big\":7,\"name\":\"anon\",\"blob\":\"\","
            "\"flag\":false}");
    assert_true(l->has_big && l->has_blob && l->has_flag);
    j = tk_json_encode(&l->base, 0);
    assert_string_equal(j, "{\"id\":1,\"name\":\"anon\",\"blob\":\"\","
                           "\"big\":\"7\",\"flag\":false}");
    free(j);
    tk__jsontest__legacy__free_unpacked(l, NULL);
}

static void test_arguments(void **state)
{
    (void)state;
    char err[128];
    ProtobufCMessage *m = NULL;
    assert_int_equal(tk_json_decode(NULL, "{}", 2, &m, err, sizeof err),
                     TK_ERR_ARG);
    assert_int_equal(tk_json_decode(&tk__v1__ping_request__descriptor, NULL, 0,
                                    &m, err, sizeof err),
                     TK_ERR_ARG);
    assert_null(tk_json_encode(NULL, 0));
    /* A short error buffer is cut, never overrun. */
    char small[8];
    assert_int_equal(tk_json_decode(&tk__v1__ping_request__descriptor,
                                    "{\"rpeo\":1}", 10, &m, small,
                                    sizeof small),
                     TK_ERR_ARG);
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void test_string_literal(void **state)
{
    (void)state;
    char *q = tk_json_string("a\"\xff\n\x01\xe2\x9c\x93", 8);
    assert_string_equal(q, "\"a\\\"\xef\xbf\xbd\\n\\u0001\xe2\x9c\x93\"");
    free(q);
    q = tk_json_string(NULL, 0);
    assert_string_equal(q, "\"\"");
    free(q);
}

/* No shared state: concurrent codecs (run under ThreadSanitizer in CI). */
static void *hammer(void *arg)
{
    const ProtobufCMessageDescriptor *desc = arg;
    for (int i = 0; i < 50; i++) {
        ProtobufCMessage *m = ts_sample(desc, (unsigned)i);
        char *j = tk_json_encode(m, TK_JSON_PRETTY);
        ProtobufCMessage *m2 = NULL;
        char err[256];
        if (j == NULL ||
            tk_json_decode(desc, j, strlen(j), &m2, err, sizeof err) != 0)
            abort();
        protobuf_c_message_free_unpacked(m2, NULL);
        protobuf_c_message_free_unpacked(m, NULL);
        free(j);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer,
                                        (void *)fixtures[i % N_FIXTURES]),
                         0);
    for (size_t i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

/* Whether a field is a map is tk's catalog's answer for the messages it
 * knows (tk_json_is_map, which tkcall describe asks too), not a guess from
 * the entry's shape: a field of such a message that is shaped like a map
 * but not declared one is a repeated message, an array. LooksLikeMap's
 * descriptors, renamed into a message of the catalog, stand for one. */
static void test_map_is_the_catalogs(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *own =
        &tk__jsontest__looks_like_map__descriptor;
    ProtobufCMessageDescriptor entry =
        tk__jsontest__looks_like_map__pairs_entry__descriptor;
    entry.name = "tk.v1.SearchRequest.PairsEntry";
    ProtobufCFieldDescriptor field = own->fields[0];
    field.descriptor = &entry;
    ProtobufCMessageDescriptor renamed = *own;
    renamed.name = "tk.v1.SearchRequest";
    renamed.fields = &field;
    assert_non_null(tk_catalog_find_message(renamed.name));
    assert_null(tk_catalog_find_field(renamed.name, "pairs"));

    Tk__Jsontest__LooksLikeMap__PairsEntry pair =
        TK__JSONTEST__LOOKS_LIKE_MAP__PAIRS_ENTRY__INIT;
    pair.key = "a";
    pair.value = "b";
    Tk__Jsontest__LooksLikeMap__PairsEntry *pairs[] = { &pair };
    Tk__Jsontest__LooksLikeMap m = TK__JSONTEST__LOOKS_LIKE_MAP__INIT;
    m.n_pairs = 1;
    m.pairs = pairs;
    /* Unknown to the catalog: protoc's shape, a map. */
    char *j = tk_json_encode(&m.base, 0);
    assert_string_equal(j, "{\"pairs\":{\"a\":\"b\"}}");
    free(j);
    /* A message of the catalog, which declares no map there: an array. */
    m.base.descriptor = &renamed;
    j = tk_json_encode(&m.base, 0);
    assert_string_equal(j, "{\"pairs\":[{\"key\":\"a\",\"value\":\"b\"}]}");
    free(j);
    assert_false(tk_json_is_map(&renamed, "pairs"));
    assert_true(tk_json_is_map(own, "pairs"));
    assert_false(tk_json_is_map(own, "nothing"));
    /* Over the whole catalog, the codec's maps are the catalog's: one
     * answer, the one tkcall describe prints (ServiceSpec.env among them). */
    size_t maps = 0;
    for (size_t i = 0; i < tk_catalog_message_count(); i++) {
        const ProtobufCMessageDescriptor *d = tk_catalog_message(i);
        for (unsigned k = 0; k < d->n_fields; k++) {
            const tk_field_note *note =
                tk_catalog_find_field(d->name, d->fields[k].name);
            bool declared = note != NULL && note->map;
            assert_int_equal(tk_json_is_map(d, d->fields[k].name), declared);
            maps += declared;
        }
    }
    assert_true(maps >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_catalog),
        cmocka_unit_test(test_roundtrip_fixtures),
        cmocka_unit_test(test_exact_text),
        cmocka_unit_test(test_exact_nested),
        cmocka_unit_test(test_camel_names),
        cmocka_unit_test(test_both_names),
        cmocka_unit_test(test_unknown_field),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_bytes_text_encode),
        cmocka_unit_test(test_bytes_text_decode),
        cmocka_unit_test(test_bytes_text_errors),
        cmocka_unit_test(test_bytes_text_repeated_and_maps),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_reals),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_null_is_default),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_oneof),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_map_key_twice),
        cmocka_unit_test(test_map_is_the_catalogs),
        cmocka_unit_test(test_proto2),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_string_literal),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_zero_that_is_a_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
