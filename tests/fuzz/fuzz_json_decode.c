/* SPDX-License-Identifier: MIT */
/*
 * json_decode: tk_json_decode (client/json, the codec of tkcall and of
 * every JSON request) on any text, into any message type (json_types.h:
 * the input's first line names it, the rest is the JSON).
 *
 * Checked: a refusal says why (err is set); an accepted message packs and
 * unpacks as protobuf (protobuf_c_message_free_unpacked can free it, and
 * ASan sees it); its encoding, compact, pretty and with defaults, decodes
 * again; and the round trip is stable: decode(encode(m)) packs to the
 * same bytes as m, and encodes to the same text. Each input is decoded
 * twice, in both forms of bytes (the proto3 mapping's base64 and
 * TK_JSON_BYTES_TEXT's text or {"base64":...}), each checked in its own
 * form.
 */
#include <stdbool.h>
#include <string.h>

#include <tk/json.h>

#include "fuzz.h"
#include "json_types.h"

typedef struct packed {
    uint8_t *p;
    size_t n;
} packed;

static packed pack(const ProtobufCMessage *m)
{
    packed k;
    k.n = protobuf_c_message_get_packed_size(m);
    k.p = malloc(k.n > 0 ? k.n : 1);
    FUZZ_CHECK(k.p != NULL, "out of memory");
    FUZZ_CHECK(protobuf_c_message_pack(m, k.p) == k.n, "pack size differs");
    return k;
}

static ProtobufCMessage *decode_ok(const ProtobufCMessageDescriptor *d,
                                   const char *json, int flags,
                                   const char *what)
{
    ProtobufCMessage *m = NULL;
    char err[256] = "";
    int rv =
        tk_json_decode_ex(&m, d, json, strlen(json), flags, err, sizeof err);
    FUZZ_CHECK(rv == 0, "%s of a decoded %s (flags %d) does not decode: %s\n%s",
               what, d->name, flags, err, json);
    return m;
}

/* The input decoded with flags; an accepted one through the checks. */
static void decode_and_check(const ProtobufCMessageDescriptor *d,
                             const uint8_t *data, size_t size, int flags)
{
    ProtobufCMessage *m = NULL;
    char err[256] = "";
    int rv = tk_json_decode_ex(&m, d, (const char *)data, size, flags, err,
                               sizeof err);
    if (rv != 0) {
        FUZZ_CHECK(m == NULL, "a refused decode left a message");
        FUZZ_CHECK(rv == TK_ERR_ARG && err[0] != '\0',
                   "refused with %d and no reason", rv);
        return;
    }
    FUZZ_CHECK(m != NULL && m->descriptor == d, "no message of %s", d->name);
    packed a = pack(m);
    ProtobufCMessage *back = protobuf_c_message_unpack(d, NULL, a.n, a.p);
    FUZZ_CHECK(back != NULL, "a decoded %s does not unpack", d->name);
    protobuf_c_message_free_unpacked(back, NULL);

    char *json = tk_json_encode(m, flags);
    FUZZ_CHECK(json != NULL, "a decoded %s does not encode", d->name);
    ProtobufCMessage *m2 = decode_ok(d, json, flags, "the encoding");
    packed b = pack(m2);
    FUZZ_CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0,
               "%s: decode(encode(m)) packs to %zu bytes, m to %zu\n%s",
               d->name, b.n, a.n, json);
    char *json2 = tk_json_encode(m2, flags);
    FUZZ_CHECK(json2 != NULL && strcmp(json, json2) == 0,
               "%s: the encoding changed on the way round:\n%s\n%s", d->name,
               json, json2 != NULL ? json2 : "(null)");

    char *pretty = tk_json_encode(m, flags | TK_JSON_PRETTY);
    FUZZ_CHECK(pretty != NULL, "no pretty encoding");
    ProtobufCMessage *m3 = decode_ok(d, pretty, flags, "the pretty encoding");
    packed c = pack(m3);
    FUZZ_CHECK(a.n == c.n && memcmp(a.p, c.p, a.n) == 0,
               "%s: the pretty encoding reads back otherwise", d->name);
    char *all = tk_json_encode(m, flags | TK_JSON_EMIT_DEFAULTS);
    FUZZ_CHECK(all != NULL, "no encoding with defaults");
    ProtobufCMessage *m4 =
        decode_ok(d, all, flags, "the encoding with defaults");

    protobuf_c_message_free_unpacked(m4, NULL);
    free(all);
    protobuf_c_message_free_unpacked(m3, NULL);
    free(c.p);
    free(pretty);
    free(json2);
    protobuf_c_message_free_unpacked(m2, NULL);
    free(b.p);
    free(json);
    free(a.p);
    protobuf_c_message_free_unpacked(m, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ProtobufCMessageDescriptor *d = fuzz_json_type(&data, &size);
    decode_and_check(d, data, size, 0);
    decode_and_check(d, data, size, TK_JSON_BYTES_TEXT);
    return 0;
}
