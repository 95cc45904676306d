/* SPDX-License-Identifier: MIT */
/* A call's outcome, once rpc__finish has it final: counted in the
 * server's metrics (by method and code, its queue wait and run time, its
 * cause, the bytes of its reply) and written as the one log line of the
 * call; and the proto's names of its code and cause, which both use. */
#include <stdatomic.h>
#include <stdio.h>

#include "rpc_int.h"

void rpc__count_call(rpc_server *srv, const rpc_call *call, int64_t now,
                     size_t reply_bytes)
{
    rpc_method_stats *ms = call->reg != NULL && call->reg->stats != NULL
                               ? call->reg->stats
                               : &srv->unmatched;
    unsigned code =
        (unsigned)call->code < RPC_N_CODES ? (unsigned)call->code : RPC_UNKNOWN;
    atomic_fetch_add_explicit(&ms->calls[code], 1, memory_order_relaxed);
    if (call->t_start != 0) {
        obs_hist_observe(&ms->queue, (call->t_start - call->t_recv) / 1000);
        if (call->ran)
            obs_hist_observe(&ms->run, (now - call->t_start) / 1000);
    }
    unsigned cause = (unsigned)call->end_cause;
    if (cause != RPC_CAUSE_NONE && cause < RPC_N_CAUSES)
        atomic_fetch_add_explicit(&srv->ended_by_cause[cause], 1,
                                  memory_order_relaxed);
    atomic_fetch_add_explicit(&srv->bytes_out, reply_bytes,
                              memory_order_relaxed);
}

/* In JSON, a call's line has its fields apart (obs.h, obs_log_format),
 * beside the message a text line would read. */
static void log_call_json(const rpc_call *call, const char *method,
                          int64_t elapsed_us, const char *msg)
{
    obs_log_line l;
    obs_log_line_begin(&l, OBS_LOG_INFO);
    obs_log_line_put(&l, "\"msg\":");
    obs_log_line_string(&l, msg);
    obs_log_line_put(&l, ",\"event\":\"call\",\"method\":");
    obs_log_line_string(&l, method);
    obs_log_line_put(
        &l,
        ",\"call_id\":%llu,\"peer\":{\"conn\":%u,\"uid\":%lld,\"pid\":%lld},"
        "\"code\":\"%s\",\"reason\":",
        (unsigned long long)call->id, (unsigned)call->peer.conn,
        (long long)call->peer.uid, (long long)call->peer.pid,
        rpc_code_name(call->code));
    obs_log_line_string(&l, call->reason != NULL ? call->reason : "");
    obs_log_line_put(&l, ",\"elapsed_us\":%lld,\"cause\":\"%s\"}",
                     (long long)elapsed_us, rpc_cause_name(call->end_cause));
    obs_log_line_end(&l);
}

void rpc__log_call(const rpc_call *call, int64_t elapsed_us)
{
    if (!obs_log_enabled(OBS_LOG_INFO))
        return;
    /* never the requested name: it is the peer's bytes */
    const char *method = call->reg != NULL ? call->reg->method->name : "-";
    const char *reason =
        call->reason != NULL && call->reason[0] ? call->reason : "-";
    char msg[512];
    snprintf(msg, sizeof msg,
             "call method=%s code=%s reason=%s elapsed_us=%lld cause=%s "
             "conn=%u id=%llu",
             method, rpc_code_name(call->code), reason, (long long)elapsed_us,
             rpc_cause_name(call->end_cause), (unsigned)call->peer.conn,
             (unsigned long long)call->id);
    if (obs_log_get_format() == OBS_LOG_JSON)
        log_call_json(call, method, elapsed_us, msg);
    else
        obs_log(OBS_LOG_INFO, "%s", msg);
}

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *rpc_code_name(rpc_code code)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, (int)code);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *rpc_cause_name(rpc_cause cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, (int)cause);
    return v != NULL ? v->name : "NONE";
}
