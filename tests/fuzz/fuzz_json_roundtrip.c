/* SPDX-License-Identifier: MIT */
/*
 * json_roundtrip: any protobuf message (the input's first line names its
 * type, json_types.h; the rest is its wire bytes, as protobuf-c unpacks
 * them) through tk_json_encode and back through tk_json_decode: what
 * tkcall does with every reply it prints, and what a user who pastes that
 * output back in gets.
 *
 * Checked: every message protobuf-c accepts encodes; the encoding is JSON
 * that tk_json_decode accepts (unless the message nests deeper than the
 * decoder's bound, MAX_DEPTH in client/json/json_int.h); encode(decode(j)) is
 * j again; and when the message carries no bytes the mapping cannot keep
 * (unknown fields, strings that are not UTF-8, a repeated map key), the
 * decoded message packs to the bytes the original packs to. (Nor a NaN
 * with payload bits: JSON's "NaN" is one NaN. Nor a map entry without
 * its message value: the mapping writes {}, the same map in other bytes.)
 * All of it in both forms of bytes: the proto3 mapping (base64) and
 * TK_JSON_BYTES_TEXT (text, or {"base64":...}), which must be as lossless.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <tk/json.h>

#include "fuzz.h"
#include "json_types.h"
#include "common/common.h"

/* The decoder refuses deeper input (client/json/json_int.h, MAX_DEPTH). */
#define DECODE_DEPTH 64

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

static bool lossless(const ProtobufCMessage *m);

static bool value_lossless(const ProtobufCFieldDescriptor *f, const void *v)
{
    /* JSON's "NaN" is one NaN: the payload bits of another are lost. */
    if (f->type == PROTOBUF_C_TYPE_FLOAT)
        return !isnan(*(const float *)v);
    if (f->type == PROTOBUF_C_TYPE_DOUBLE)
        return !isnan(*(const double *)v);
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        const char *s = *(const char *const *)v;
        return s == NULL || tkc_utf8_valid(s, strlen(s));
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)v;
        return sub == NULL || lossless(sub);
    }
    return true;
}

/* Whether two map entries have the same key (the first field). */
static bool same_key(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    const ProtobufCFieldDescriptor *k = &a->descriptor->fields[0];
    const char *x = (const char *)a + k->offset;
    const char *y = (const char *)b + k->offset;
    if (k->type == PROTOBUF_C_TYPE_STRING) {
        const char *s = *(const char *const *)(const void *)x;
        const char *t = *(const char *const *)(const void *)y;
        return strcmp(s != NULL ? s : "", t != NULL ? t : "") == 0;
    }
    if (k->type == PROTOBUF_C_TYPE_BOOL)
        return !*(const protobuf_c_boolean *)(const void *)x ==
               !*(const protobuf_c_boolean *)(const void *)y;
    size_t n = k->type == PROTOBUF_C_TYPE_INT64 ||
                       k->type == PROTOBUF_C_TYPE_SINT64 ||
                       k->type == PROTOBUF_C_TYPE_SFIXED64 ||
                       k->type == PROTOBUF_C_TYPE_UINT64 ||
                       k->type == PROTOBUF_C_TYPE_FIXED64
                   ? 8
                   : 4;
    return memcmp(x, y, n) == 0;
}

static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t n = strlen(d->short_name);
    return d->n_fields == 2 && n > 5 &&
           strcmp(d->short_name + n - 5, "Entry") == 0 &&
           d->fields[0].id == 1 && d->fields[1].id == 2;
}

/* A map entry whose value, a message, was not on the wire: proto3 reads
 * it as the empty message, and JSON can only say that ({}), which then
 * goes on the wire. The same map; other bytes. */
static bool missing_message_value(const ProtobufCMessage *entry)
{
    const ProtobufCFieldDescriptor *v = &entry->descriptor->fields[1];
    return v->type == PROTOBUF_C_TYPE_MESSAGE &&
           *(const ProtobufCMessage *const *)(const void *)((const char *)
                                                                entry +
                                                            v->offset) == NULL;
}

static bool repeated_lossless(const ProtobufCFieldDescriptor *f,
                              const void *arr, size_t n)
{
    for (size_t i = 0; i < n && f->type == PROTOBUF_C_TYPE_FLOAT; i++)
        if (!value_lossless(f, (const float *)arr + i))
            return false;
    for (size_t i = 0; i < n && f->type == PROTOBUF_C_TYPE_DOUBLE; i++)
        if (!value_lossless(f, (const double *)arr + i))
            return false;
    if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
        return true;
    const void *const *items = arr;
    bool map =
        f->type == PROTOBUF_C_TYPE_MESSAGE && is_map_entry(f->descriptor);
    for (size_t i = 0; i < n; i++) {
        if (!value_lossless(f, &items[i]))
            return false;
        if (map && items[i] != NULL && missing_message_value(items[i]))
            return false;
        for (size_t j = 0; map && j < i; j++)
            if (items[i] != NULL && items[j] != NULL &&
                same_key(items[i], items[j]))
                return false;
    }
    return true;
}

/* No unknown fields, every string UTF-8, no map key twice, no NaN, no map
 * entry without its message value: JSON says all of it in the same
 * bytes. */
static bool lossless(const ProtobufCMessage *m)
{
    if (m->n_unknown_fields > 0)
        return false;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *at = (const char *)m + f->offset;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(const void *)((const char *)m +
                                              f->quantifier_offset) != f->id)
            continue; /* another member of its oneof holds the memory */
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)((const char *)m +
                                                       f->quantifier_offset);
            const void *arr = *(const void *const *)(const void *)at;
            if (arr != NULL && !repeated_lossless(f, arr, n))
                return false;
        } else if (!value_lossless(f, at)) {
            return false;
        }
    }
    return true;
}

/* m through the codec and back with flags (0 or TK_JSON_BYTES_TEXT). */
static void roundtrip(const ProtobufCMessage *m, int flags)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    char *json = tk_json_encode(m, flags);
    FUZZ_CHECK(json != NULL, "a %s does not encode", d->name);
    ProtobufCMessage *m2 = NULL;
    char err[256] = "";
    int rv =
        tk_json_decode_ex(&m2, d, json, strlen(json), flags, err, sizeof err);
    if (rv != 0) {
        FUZZ_CHECK(fuzz_json_depth(m) > DECODE_DEPTH,
                   "the encoding of a %s (flags %d) does not decode: %s\n%s",
                   d->name, flags, err, json);
        free(json);
        return;
    }
    char *json2 = tk_json_encode(m2, flags);
    FUZZ_CHECK(json2 != NULL && strcmp(json, json2) == 0,
               "%s: the encoding changed on the way round:\n%s\n%s", d->name,
               json, json2 != NULL ? json2 : "(null)");
    if (lossless(m)) {
        packed a = pack(m), b = pack(m2);
        FUZZ_CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0,
                   "%s: the round trip packs to %zu bytes, the original to "
                   "%zu\n%s",
                   d->name, b.n, a.n, json);
        free(a.p);
        free(b.p);
    }
    free(json2);
    protobuf_c_message_free_unpacked(m2, NULL);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ProtobufCMessageDescriptor *d = fuzz_json_type(&data, &size);
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, size, data);
    if (m == NULL)
        return 0;
    roundtrip(m, 0);
    roundtrip(m, TK_JSON_BYTES_TEXT);
    protobuf_c_message_free_unpacked(m, NULL);
    return 0;
}
