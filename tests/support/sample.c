/* SPDX-License-Identifier: MIT */
/* Messages with every field set, by reflection (see sample.h). */
#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

#define MEM(msg, off) ((void *)((char *)(msg) + (off)))

static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    default:
        return 4;
    }
}

static ProtobufCMessage *new_sample(const ProtobufCMessageDescriptor *desc,
                                    int depth, unsigned variant, int k);

static void *dup_bytes(const void *p, size_t n)
{
    void *c = malloc(n);
    if ((c) == NULL)
        abort();
    memcpy(c, p, n);
    return c;
}

/* Sample k (0 or 1) of a field's type: never the default, 64-bit values
 * beyond 2^53 and at the limits, bytes that are not UTF-8, strings that
 * need escapes, an enum number the enum does not name. */
// NOLINTNEXTLINE(readability-function-cognitive-complexity): one case per ProtobufCType, each a pair of samples: a table reads best as one switch
static void sample_value(const ProtobufCFieldDescriptor *f, int k, void *dst,
                         int depth, unsigned variant)
{
    static const uint8_t bin0[] = { 0xff, 0x00, 0xfe, 'a', 0x80 };
    const ProtobufCEnumDescriptor *ed;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
        *(int32_t *)dst = k ? INT32_MIN : -123456;
        break;
    case PROTOBUF_C_TYPE_SINT32:
        *(int32_t *)dst = k ? INT32_MAX : -1;
        break;
    case PROTOBUF_C_TYPE_SFIXED32:
        *(int32_t *)dst = k ? INT32_MIN : 77;
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        *(uint32_t *)dst = k ? 42u : UINT32_MAX;
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        *(int64_t *)dst = k ? INT64_MIN : (INT64_C(1) << 53) + 1;
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        *(uint64_t *)dst = k ? (UINT64_C(1) << 53) + 1 : UINT64_MAX;
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        *(float *)dst = k ? -FLT_MAX : 0.1f;
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        *(double *)dst = k ? 5e-324 : 0.1;
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)dst = k ? 0 : 1;
        break;
    case PROTOBUF_C_TYPE_ENUM:
        ed = f->descriptor;
        *(int *)dst = k ? 99 : ed->values[ed->n_values - 1].value;
        break;
    case PROTOBUF_C_TYPE_STRING:
        *(char **)dst = strdup(k ? "\xe6\x97\xa5\xe6\x9c\xac \xe2\x80\xa8"
                                 : "h\xc3\xa9llo \"w\" \\ / \n\t\x01 "
                                   "\xe2\x9c\x93");
        if ((*(char **)dst) == NULL)
            abort();
        break;
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = dst;
        bd->len = k ? 1 : sizeof bin0;
        bd->data = dup_bytes(k ? (const uint8_t *)"\0" : bin0, bd->len);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        if (depth >= TS_SAMPLE_DEPTH) { /* present but empty */
            const ProtobufCMessageDescriptor *md = f->descriptor;
            ProtobufCMessage *e = malloc(md->sizeof_message);
            if ((e) == NULL)
                abort();
            protobuf_c_message_init(md, e);
            *(ProtobufCMessage **)dst = e;
        } else {
            *(ProtobufCMessage **)dst =
                new_sample(f->descriptor, depth + 1, variant, k);
        }
        break;
    }
}

/* Oneof members share their case's offset; variant picks one of them. */
static bool oneof_chosen(const ProtobufCMessageDescriptor *desc,
                         const ProtobufCFieldDescriptor *f, unsigned variant)
{
    unsigned idx = 0, count = 0;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *g = &desc->fields[i];
        if (!(g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
            g->quantifier_offset != f->quantifier_offset)
            continue;
        if (g == f)
            idx = count;
        count++;
    }
    return idx == variant % count;
}

static void fill_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                       int depth, unsigned variant, int k)
{
    void *mem = MEM(m, f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t es = elem_size(f->type);
        char *arr = calloc(2, es);
        if ((arr) == NULL)
            abort();
        *(void **)mem = arr;
        *(size_t *)MEM(m, f->quantifier_offset) = 2;
        for (int i = 0; i < 2; i++)
            sample_value(f, i, arr + (size_t)i * es, depth, variant);
        return;
    }
    sample_value(f, k, mem, depth, variant);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *(uint32_t *)MEM(m, f->quantifier_offset) = f->id;
    else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
             f->type != PROTOBUF_C_TYPE_STRING &&
             f->type != PROTOBUF_C_TYPE_MESSAGE)
        *(protobuf_c_boolean *)MEM(m, f->quantifier_offset) = 1;
}

/* Every field set (one member per oneof), allocated as unpack would, so
 * protobuf_c_message_free_unpacked frees it. Message fields below
 * TS_SAMPLE_DEPTH are empty messages: present, but not filled. */
static ProtobufCMessage *new_sample(const ProtobufCMessageDescriptor *desc,
                                    int depth, unsigned variant, int k)
{
    ProtobufCMessage *m = malloc(desc->sizeof_message);
    if ((m) == NULL)
        abort();
    protobuf_c_message_init(desc, m);
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            !oneof_chosen(desc, f, variant))
            continue;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth >= TS_SAMPLE_DEPTH &&
            f->label == PROTOBUF_C_LABEL_REPEATED)
            continue;
        fill_field(m, f, depth, variant, k);
    }
    return m;
}

ProtobufCMessage *ts_sample(const ProtobufCMessageDescriptor *desc,
                            unsigned variant)
{
    return new_sample(desc, 0, variant, 0);
}

ts_packed ts_pack(const ProtobufCMessage *m)
{
    ts_packed p;
    p.len = protobuf_c_message_get_packed_size(m);
    p.data = malloc(p.len > 0 ? p.len : 1);
    if (p.data == NULL || protobuf_c_message_pack(m, p.data) != p.len)
        abort();
    return p;
}
