/* SPDX-License-Identifier: MIT */
/* Checks of a request's wire bytes that protobuf-c's unpacking does not
 * make. protobuf-c hands a string field to C as a NUL-terminated char *,
 * so a string holding a NUL byte (valid protobuf, and valid UTF-8) would
 * reach a handler silently cut at the NUL ("a\0b" read as "a"); and it
 * does not check that a string is UTF-8, which proto3 requires (a strict
 * decoder refuses the message). A request with a NUL in a string is
 * refused before any handler sees it; one with a string that is not UTF-8
 * where the caller asks for that check (the envelope: a method name is
 * ASCII). Payload strings are not held to it: SearchRequest.query takes a
 * query in any bytes for git grep and grep. */
#include <string.h>

#include "rpc_int.h"

#define MAX_DEPTH 32

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static bool skip(cursor *c, uint64_t n)
{
    if ((uint64_t)(c->end - c->p) < n)
        return false;
    c->p += n;
    return true;
}

typedef struct check {
    bool utf8; /* strings must be UTF-8 too */
    rpc_bad_string why;
} check;

static const ProtobufCFieldDescriptor *
bad_in_message(const ProtobufCMessageDescriptor *d, const uint8_t *data,
               size_t len, int depth, check *ck);

/* A length-delimited field: a string must be UTF-8 and hold no NUL; a
 * message is walked in turn. Anything else (bytes, packed numbers) is not
 * looked at. */
static const ProtobufCFieldDescriptor *
bad_in_field(const ProtobufCMessageDescriptor *d, uint64_t number,
             const uint8_t *data, size_t len, int depth, check *ck)
{
    const ProtobufCFieldDescriptor *f =
        number <= UINT32_MAX
            ? protobuf_c_message_descriptor_get_field(d, (unsigned)number)
            : NULL;
    if (f == NULL)
        return NULL;
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        if (memchr(data, 0, len) != NULL)
            ck->why = RPC_STRING_NUL;
        else if (ck->utf8 && !tkc_utf8_valid((const char *)data, len))
            ck->why = RPC_STRING_NOT_UTF8;
        return ck->why != RPC_STRING_OK ? f : NULL;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < MAX_DEPTH)
        return bad_in_message(f->descriptor, data, len, depth + 1, ck);
    return NULL;
}

static const ProtobufCFieldDescriptor *
bad_in_message(const ProtobufCMessageDescriptor *d, const uint8_t *data,
               size_t len, int depth, check *ck)
{
    if (len == 0)
        return NULL; /* data may be NULL (an empty payload): no data + 0 */
    cursor c = { data, data + len };
    uint64_t key, v;
    while (c.p < c.end && tkc_get_varint(&c.p, c.end, &key)) {
        bool ok = false;
        switch (key & 7) {
        case 0:
            ok = tkc_get_varint(&c.p, c.end, &v);
            break;
        case 1:
            ok = skip(&c, 8);
            break;
        case 5:
            ok = skip(&c, 4);
            break;
        case 2:
            if (tkc_get_varint(&c.p, c.end, &v) &&
                (uint64_t)(c.end - c.p) >= v) {
                const ProtobufCFieldDescriptor *f =
                    bad_in_field(d, key >> 3, c.p, (size_t)v, depth, ck);
                if (f != NULL)
                    return f;
                ok = skip(&c, v);
            }
            break;
        default: /* groups: proto2 only, and none in tk's protos */
            break;
        }
        if (!ok)
            return NULL; /* unpacking judged the framing already */
    }
    return NULL;
}

const char *rpc__bad_string(const ProtobufCMessageDescriptor *d,
                            const uint8_t *data, size_t len, bool utf8,
                            rpc_bad_string *why)
{
    check ck = { utf8, RPC_STRING_OK };
    const ProtobufCFieldDescriptor *f = bad_in_message(d, data, len, 0, &ck);
    *why = ck.why;
    return f != NULL ? f->name : NULL;
}
