/* SPDX-License-Identifier: MIT */
/*
 * Replies: a call's outcome encoded as its tk.v1.Reply and handed to NNG,
 * and the slot made idle, receiving its next request.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <nng/nng.h>

#include "rpc_int.h"

void rpc__arm_recv(rpc_slot *s)
{
    if (s->detached)
        return; /* rpc__test_serve_frame's: no context to receive on */
    atomic_store(&s->receiving, true);
    nng_ctx_recv(s->ctx, s->aio);
}

/* The slot's call is over: idle, and receiving again unless tkd stops.
 * reg_mu held. */
void rpc__slot_idle(rpc_slot *s)
{
    rpc__unregister_slot(s);
    pthread_cond_broadcast(&s->srv->reg_cv);
    if (!atomic_load(&s->srv->stopping))
        rpc__arm_recv(s);
}

static int64_t elapsed_us(const rpc_call *call)
{
    return (rpc_now_ns() - call->t_recv) / 1000;
}

uint32_t rpc__retry_after(rpc_server *srv)
{
    /* Roughly the time for the queue ahead to drain; at least 10 ms. */
    int64_t avg = atomic_load(&srv->avg_service_us);
    int64_t ms =
        avg * (int64_t)srv->cfg.queue_depth / (int64_t)srv->cfg.workers / 1000;
    if (ms < 10)
        ms = 10;
    if (ms > 10000)
        ms = 10000;
    return (uint32_t)ms;
}

/* Reply.payload's key: field 3, length-delimited. */
#define REPLY_PAYLOAD_TAG ((uint8_t)(3 << 3 | 2))

/* Builds the Reply frame of the call's outcome; payload may be NULL. */
static nng_msg *encode_reply(rpc_call *call, const ProtobufCMessage *payload)
{
    Tk__V1__Reply rep = TK__V1__REPLY__INIT;
    Tk__V1__Status st = TK__V1__STATUS__INIT;
    Tk__V1__Cancellation cn = TK__V1__CANCELLATION__INIT;
    rep.call_id = call->id;
    rep.status = &st;
    st.code = (Tk__V1__Status__Code)call->code;
    if (call->message != NULL)
        st.message = call->message;
    if (call->reason != NULL)
        st.reason = (char *)call->reason;
    st.stderr_excerpt.data = (uint8_t *)call->stderr_data;
    st.stderr_excerpt.len = call->stderr_len;
    st.partial = call->partial;
    st.retry_after_ms = call->retry_after_ms;
    st.elapsed_us = (uint64_t)elapsed_us(call);
    if (call->tool != NULL)
        st.tool = (char *)rpc__text_escaped(call, call->tool);
    cn.cause = (Tk__V1__Cancellation__Cause)call->end_cause;
    cn.process_killed = call->process_killed;
    cn.cleanup_ms = call->cleanup_ms;
    /* Only a write that began can have completed: a WRITE refused by its
     * checks wrote nothing (an OK one did all it had to). */
    bool began = call->write_begun || call->committing ||
                 (call->reg != NULL && call->reg->method->kind == RPC_WRITE &&
                  call->code == RPC_OK);
    if (call->reg != NULL && call->ran && began)
        cn.write_completed =
            call->write_completed_set ? call->write_completed : true;
    if (cn.cause != TK__V1__CANCELLATION__CAUSE__NONE || cn.process_killed ||
        cn.write_completed || cn.cleanup_ms != 0)
        st.cancellation = &cn;
    /* The envelope without its payload, then the payload (field 3, the
     * last) written into the message after it: the bytes protobuf-c would
     * write for the whole, without packing the payload into memory of its
     * own first and copying it (a search reply can be MBs). The payload is
     * the handler's encoded prefix, if any, then the packed reply. */
    size_t plen = 0, prefix = 0;
    if (payload != NULL && call->code == RPC_OK) {
        prefix = call->reply_prefix_len;
        plen = prefix + protobuf_c_message_get_packed_size(payload);
    }
    size_t head = tk__v1__reply__get_packed_size(&rep);
    size_t size = head + (plen > 0 ? 1 + tkc_varint_len(plen) + plen : 0);
    nng_msg *msg = NULL;
    if (nng_msg_alloc(&msg, size) != 0)
        return NULL;
    uint8_t *p = nng_msg_body(msg);
    p += tk__v1__reply__pack(&rep, p);
    if (plen > 0) {
        *p++ = REPLY_PAYLOAD_TAG;
        p = tkc_put_varint(p, plen);
        if (prefix > 0)
            memcpy(p, call->reply_prefix, prefix);
        protobuf_c_message_pack(payload, p + prefix);
    }
    return msg;
}

/* Ends the call: remembers it as done, logs it and sends its reply. */
void rpc__finish(rpc_slot *s, const ProtobufCMessage *payload)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    if (call->message == NULL && call->code != RPC_OK)
        call->message = rpc_call_strdup(call, rpc_code_name(call->code));
    if (call->message != NULL)
        call->message = (char *)rpc__text_escaped(call, call->message);
    if (payload != NULL && call->code == RPC_OK)
        rpc__escape_strings(call, (ProtobufCMessage *)payload);
    nng_msg *msg = encode_reply(call, payload);
    int64_t now = rpc_now_ns();
    rpc__count_call(srv, call, now, msg != NULL ? nng_msg_len(msg) : 0);
    rpc__log_call(call, (now - call->t_recv) / 1000);
    pthread_mutex_lock(&srv->reg_mu);
    if (msg != NULL && call->id != 0 &&
        (s->phase == PHASE_QUEUED || s->phase == PHASE_RUNNING)) {
        rpc__remember_answered(srv, call->peer.conn, call->id);
        /* Answered only once the send completes (rpc__slot_cb): until then it
         * is SENDING, which rpc__locate() reports ahead of recent. */
        s->sending = (rpc_callref){ .conn = call->peer.conn, .id = call->id };
    }
    s->phase = PHASE_SENDING;
    rpc_call__reset(call);
    if (msg == NULL || s->detached) {
        /* Out of memory for the reply: the call is forgotten, and a
         * client that asks is told NOT_FOUND. Or a detached slot's reply,
         * handed back to rpc__test_serve_frame: sent at once, as far as
         * the registry can tell. */
        s->reply = msg;
        s->sending = (rpc_callref){ 0 };
        rpc__slot_idle(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    nng_aio_set_msg(s->aio, msg);
    nng_ctx_send(s->ctx, s->aio);
}

/* A status-only answer to a frame that never became a running call. */
void rpc__answer(rpc_slot *s, rpc_code code, const char *reason,
                 rpc_cause cause, uint32_t retry_ms, const char *fmt, ...)
{
    rpc_call *call = &s->call;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    call->code = code;
    call->reason = reason;
    call->message = rpc_call_strdup(call, buf);
    call->end_cause = cause;
    call->retry_after_ms = retry_ms;
    rpc__finish(s, NULL);
}

/* A string field the handler must not see: cut by a NUL, or not UTF-8. */
void rpc__fail_bad_string(rpc_call *call, const char *message,
                          const char *field, rpc_bad_string why)
{
    if (why == RPC_STRING_NUL)
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NUL_IN_STRING",
                      "%s.%s holds a NUL byte, which no string field may",
                      message, field);
    else
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "STRING_NOT_UTF8",
                      "%s.%s is not UTF-8, which every string field must be "
                      "(bytes fields take any bytes)",
                      message, field);
}
