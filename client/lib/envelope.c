/* SPDX-License-Identifier: MIT */
/* libtkclient's envelope: a call's request as tkd reads it
 * (tk.v1.Request), and the reply's envelope (tk.v1.Reply) read back into a
 * status and a payload.
 *
 * Owns: encoding a request; decoding a reply, its status and where its
 * payload goes (reply_sink).
 * May call: NNG's messages, protobuf-c, status.c, common/ (varints).
 * Must never: send or wait (wait.c does), print or log. */
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/rpc.pb-c.h"

nng_msg *tk__encode_request(uint64_t id, const char *method,
                            uint32_t timeout_ms, const uint8_t *payload,
                            size_t plen)
{
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = id;
    env.method = (char *)method;
    env.timeout_ms = timeout_ms;
    env.payload.data = (uint8_t *)payload;
    env.payload.len = plen;
    nng_msg *msg = NULL;
    size_t n = tk__v1__request__get_packed_size(&env);
    if (nng_msg_alloc(&msg, n) == 0)
        tk__v1__request__pack(&env, nng_msg_body(msg));
    return msg;
}

static int sink_payload(const reply_sink *sink, const ProtobufCBinaryData *in,
                        tk_status *st)
{
    if (sink->desc != NULL) {
        /* A payload that does not decode leaves nothing in the caller's
         * allocator: protobuf-c frees what it took, and a tk_arena, whose
         * free does nothing, goes back to where it stood. */
        tk_arena *arena = tk__arena_of(sink->allocator);
        tk__arena_pos pos;
        if (arena != NULL)
            tk__arena_mark(arena, &pos);
        *sink->msg = protobuf_c_message_unpack(sink->desc, sink->allocator,
                                               in->len, in->data);
        if (*sink->msg != NULL)
            return TK_OK;
        if (arena != NULL)
            tk__arena_rewind(arena, &pos);
        return tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "the reply payload does not decode as %s",
                                sink->desc->name);
    }
    *sink->raw = malloc(in->len > 0 ? in->len : 1);
    if (*sink->raw == NULL)
        return tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "out of memory");
    if (in->len > 0)
        memcpy(*sink->raw, in->data, in->len);
    *sink->raw_len = in->len;
    return TK_OK;
}

/* A varint at *at (bounded by len); advances past it. */
static bool get_varint(const uint8_t *buf, size_t len, size_t *at,
                       uint64_t *out)
{
    const uint8_t *p = buf + *at;
    if (!tkc_get_varint(&p, buf + len, out))
        return false;
    *at = (size_t)(p - buf);
    return true;
}

/* One field at *at: advances past it; sets *payload when it is
 * Reply.payload (field 3). false when it is not well formed. */
static bool skip_field(const uint8_t *buf, size_t len, size_t *at,
                       bool *is_payload, ProtobufCBinaryData *payload)
{
    uint64_t key, n;
    *is_payload = false;
    if (!get_varint(buf, len, at, &key))
        return false;
    switch (key & 7) {
    case 0:
        return get_varint(buf, len, at, &n);
    case 1:
    case 5: {
        size_t w = (key & 7) == 1 ? 8 : 4;
        if (len - *at < w)
            return false;
        *at += w;
        return true;
    }
    case 2:
        if (!get_varint(buf, len, at, &n) || n > len - *at)
            return false;
        if (key >> 3 == 3) { /* the last one counts, as for the unpacker */
            *payload = (ProtobufCBinaryData){ (size_t)n, (uint8_t *)buf + *at };
            *is_payload = true;
        }
        *at += (size_t)n;
        return true;
    default:
        return false;
    }
}

/* The frame's fields but Reply.payload, copied to out (NULL: only
 * counted) and their size in *rest_len; *payload is where the payload
 * lies. false when the frame is not well formed at this level. */
static bool scan_fields(const uint8_t *buf, size_t len, uint8_t *out,
                        size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest_len = 0;
    *payload = (ProtobufCBinaryData){ 0, NULL };
    for (size_t at = 0; at < len;) {
        size_t start = at;
        bool is_payload;
        if (!skip_field(buf, len, &at, &is_payload, payload))
            return false;
        if (!is_payload && out != NULL)
            memcpy(out + *rest_len, buf + start, at - start);
        *rest_len += is_payload ? 0 : at - start;
    }
    return true;
}

/* Reply.payload located in the frame rather than copied out of it by the
 * unpacker (a search reply is MBs): *payload points into buf, and *rest
 * (malloc'd) holds the frame's other fields, to be unpacked as the
 * envelope. false when the frame is not well formed at this level: the
 * caller then unpacks it whole, and protobuf-c judges it. */
static bool split_payload(const uint8_t *buf, size_t len, uint8_t **rest,
                          size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest = NULL;
    if (!scan_fields(buf, len, NULL, rest_len, payload))
        return false;
    *rest = malloc(*rest_len > 0 ? *rest_len : 1);
    return *rest != NULL && scan_fields(buf, len, *rest, rest_len, payload);
}

int tk__decode_reply(nng_msg *msg, uint64_t id, const reply_sink *sink,
                     tk_status *st)
{
    const uint8_t *body = nng_msg_body(msg);
    size_t len = nng_msg_len(msg);
    uint8_t *rest = NULL;
    size_t rest_len = 0;
    ProtobufCBinaryData payload;
    bool split = split_payload(body, len, &rest, &rest_len, &payload);
    Tk__V1__Reply *env = split ? tk__v1__reply__unpack(NULL, rest_len, rest)
                               : tk__v1__reply__unpack(NULL, len, body);
    free(rest);
    if (env == NULL)
        return tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "the reply (%zu bytes) is not a tk.v1.Reply",
                                nng_msg_len(msg));
    int code;
    if (env->call_id != id && env->call_id != 0) {
        code = tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "the reply is for call %llu, not %llu",
                                (unsigned long long)env->call_id,
                                (unsigned long long)id);
    } else {
        code = tk__copy_status(st, env->status);
        if (code == TK_OK)
            code = sink_payload(sink, split ? &payload : &env->payload, st);
    }
    tk__v1__reply__free_unpacked(env, NULL);
    return code;
}
