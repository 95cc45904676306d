/* SPDX-License-Identifier: MIT */
/* tk.v1.Control: Ping, Cancel, CallState, ListMethods, ListNodes, Stats.
 * Registered by control_register, through the same method table as every
 * other service: the one tk/v1/control.proto declares
 * (tk/v1/control.methods.h). */
#include <string.h>

#include "control.h"
#include "tk/v1/control.methods.h"

static void ping(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply)
{
    const rpc_server *srv = svc;
    const Tk__V1__PingRequest *in = (const Tk__V1__PingRequest *)request;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    (void)call;
    out->data = in->data;
    out->server_version = (char *)rpc_server_version(srv);
    out->uptime_ms = (uint64_t)rpc_server_uptime_ms(srv);
}

/* Inline: runs on the receive path, so it reaches a call even when every
 * worker is busy. Only the caller's own connection is searched. */
static void cancel(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply)
{
    const Tk__V1__CancelRequest *in = (const Tk__V1__CancelRequest *)request;
    Tk__V1__CancelReply *out = (Tk__V1__CancelReply *)reply;
    out->outcome = (Tk__V1__CancelReply__Outcome)rpc_server_cancel(
        svc, rpc_call_peer(call).conn, in->call_id);
}

/* Inline as Cancel is: a client asks it when its own deadline has passed
 * with no reply, and the answer must not wait behind busy workers. */
static void call_state(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    const Tk__V1__CallStateRequest *in =
        (const Tk__V1__CallStateRequest *)request;
    Tk__V1__CallStateReply *out = (Tk__V1__CallStateReply *)reply;
    out->state = (Tk__V1__CallStateReply__State)rpc_server_call_state(
        svc, rpc_call_peer(call).conn, in->call_id);
}

static bool in_service(const char *method, const char *service)
{
    size_t n = strlen(service);
    return n == 0 || (strncmp(method, service, n) == 0 && method[n] == '/');
}

/* A method's list bounds as ListMethods reports them; NULL for none. */
static Tk__V1__ListSpec *list_spec(rpc_call *call, const rpc_list *l)
{
    if (l->field == NULL)
        return NULL;
    Tk__V1__ListSpec *out = rpc_call_alloc(call, sizeof *out);
    tk__v1__list_spec__init(out);
    out->field = (char *)l->field;
    if (l->limit_field != NULL)
        out->limit_field = (char *)l->limit_field;
    out->default_items = l->default_items;
    out->max_items = l->max_items;
    out->max_bytes = l->max_bytes;
    return out;
}

static void list_methods(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    const Tk__V1__ListMethodsRequest *in =
        (const Tk__V1__ListMethodsRequest *)request;
    Tk__V1__ListMethodsReply *out = (Tk__V1__ListMethodsReply *)reply;
    size_t n = rpc_server_n_methods(svc);
    out->methods = rpc_call_alloc(call, n * sizeof(Tk__V1__MethodInfo *));
    for (size_t i = 0; i < n; i++) {
        const rpc_method *m = rpc_server_method(svc, i);
        if (!in_service(m->name, in->service))
            continue;
        Tk__V1__MethodInfo *mi = rpc_call_alloc(call, sizeof *mi);
        tk__v1__method_info__init(mi);
        mi->name = (char *)m->name;
        mi->request_type = (char *)m->request->name;
        mi->reply_type = (char *)m->reply->name;
        mi->kind = m->kind == RPC_WRITE ? TK__V1__METHOD_INFO__KIND__WRITE
                                        : TK__V1__METHOD_INFO__KIND__READ;
        mi->default_timeout_ms = m->default_timeout_ms;
        mi->ceiling_ms = m->ceiling_ms;
        mi->list = list_spec(call, &m->list);
        out->methods[out->n_methods++] = mi;
    }
    if (out->n_methods == 0 && in->service[0] != '\0')
        rpc_call_fail(call, RPC_NOT_FOUND, "UNKNOWN_SERVICE",
                      "no service named \"%.200s\"", in->service);
}

/* Inline: the membership answers from what it last read (rpc_nodes_fn
 * must not block); a tkd that is no member of a fleet answers with no
 * nodes, and its clients use the address they dialed. */
static void list_nodes(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    (void)request;
    rpc_server_list_nodes(svc, call, reply);
}

/* Inline, as Ping is: the metrics are wanted most when every worker is
 * busy. Reads atomics, and takes the pool's and the registry's locks
 * briefly (rpc/stats.c). */
static void stats(void *svc, rpc_call *call, const ProtobufCMessage *request,
                  ProtobufCMessage *reply)
{
    (void)request;
    rpc_server_stats(svc, call, reply);
}

/* Every Control method is inline (tk/v1/control.proto): Ping never blocks,
 * so it answers even when every worker is busy and tells "tkd is alive"
 * apart from "tkd is saturated"; Cancel and CallState must not wait
 * behind busy workers; ListMethods reads a table fixed at start;
 * ListNodes, the membership's last reading; Stats, atomics and brief
 * locks. */
static const rpc_method methods[TK_V1_CONTROL__N_METHODS] = {
    TK_V1_CONTROL__METHODS(RPC_METHOD_ROW, )
};

int control_register(rpc_server *srv, char *err, size_t errlen)
{
    return rpc_server_add_service(srv, srv, methods, TK_V1_CONTROL__N_METHODS,
                                  err, errlen);
}
