/* SPDX-License-Identifier: MIT */
/*
 * Receiving: a frame, from its slot's aio (an NNG thread) or from
 * rpc__test_serve_frame, through the envelope, the peer's check, the
 * method, the deadline and the registry, to a call that runs (inline),
 * waits in the queue, or is answered at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>

#include "rpc_int.h"

int rpc__method_cmp(const void *a, const void *b)
{
    const rpc_registered *x = a, *y = b;
    return strcmp(x->method->name, y->method->name);
}

static const rpc_registered *find_method(const rpc_server *srv,
                                         const char *name)
{
    rpc_method key_method = { .name = name };
    rpc_registered key = { .method = &key_method };
    return bsearch(&key, srv->methods, srv->n_methods, sizeof key,
                   rpc__method_cmp);
}

static void set_deadlines(rpc_call *call)
{
    const rpc_method *m = call->reg->method;
    uint32_t t = call->request->timeout_ms;
    if (t == 0)
        t = m->default_timeout_ms;
    if (t > m->ceiling_ms)
        t = m->ceiling_ms;
    call->caller_deadline = call->t_recv + rpc__ms_to_ns(t);
    atomic_store(&call->deadline, call->caller_deadline);
}

/* Registers the call; false when it is a duplicate to be dropped. */
static bool register_call(rpc_slot *s, bool *dup_done)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    bool ok = true;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *live;
    rpc_where where = call->id != 0
                          ? rpc__locate(srv, call->peer.conn, call->id, &live)
                          : WHERE_NONE;
    if (where == WHERE_LIVE || where == WHERE_SENDING) {
        /* A REQ socket that did not disable resend sent it again: the
         * original is still running and will answer (REQ matches the
         * reply by its own request id, which a resend keeps). An answer
         * to the copy now could reach the client first. */
        ok = false;
    } else if (where == WHERE_DONE) {
        /* The same, arriving after the original answered: its reply went
         * first on this connection, so REQ discards this one's. */
        *dup_done = true;
    } else {
        if (call->id != 0)
            rpc__register_slot(s);
        else
            s->phase = PHASE_QUEUED;
        if (call->id != 0 &&
            rpc__take_tombstone(srv, call->peer.conn, call->id))
            rpc_call__cancel(call, RPC_CAUSE_CALLER);
    }
    pthread_mutex_unlock(&srv->reg_mu);
    return ok;
}

static bool enqueue(rpc_server *srv, rpc_slot *s)
{
    pthread_mutex_lock(&srv->pool_mu);
    bool ok = srv->q_len < srv->q_cap && !srv->pool_stop;
    if (ok) {
        srv->queue[(srv->q_head + srv->q_len) % srv->q_cap] = s;
        srv->q_len++;
        pthread_cond_signal(&srv->pool_cv);
        /* Workers start as calls need them, up to --workers: an idle
         * tkd keeps one ("Start-up and idle"). */
        if (rpc__add_worker(srv) != 0) {
            const obs_field f[] = { OBS_INT("workers", srv->n_threads) };
            obs_log_fields(OBS_LOG_WARN, f, 1,
                           "cannot start a worker thread (%zu running): the "
                           "call waits for one of them",
                           srv->n_threads);
        }
        /* Only a new earliest deadline needs the reaper before it wakes
         * on its own: waking it for every call is a third thread to
         * schedule per call. And a call cancelled before it got here (a
         * Cancel that overtook it, taken from a tombstone; or one whose
         * rpc__wake_reaper ran before it was in the queue): else it waits
         * behind busy workers until its deadline. */
        if (s->call.caller_deadline < srv->reaper_until ||
            atomic_load(&s->call.cause) != RPC_CAUSE_NONE)
            pthread_cond_signal(&srv->reaper_cv);
    }
    pthread_mutex_unlock(&srv->pool_mu);
    return ok;
}

static void unregister(rpc_slot *s)
{
    pthread_mutex_lock(&s->srv->reg_mu);
    rpc__unregister_slot(s);
    pthread_mutex_unlock(&s->srv->reg_mu);
}

/* Decodes the envelope of a frame and checks its strings; false when the
 * frame has been answered (it is no call). */
static bool decode_envelope(rpc_slot *s, const uint8_t *frame, size_t len)
{
    rpc_call *call = &s->call;
    call->request = tk__v1__request__unpack(NULL, len, frame);
    if (call->request == NULL) {
        rpc__answer(s, RPC_INVALID_ARGUMENT, "BAD_FRAME", RPC_CAUSE_NONE, 0,
                    "the frame (%zu bytes) is not a tk.v1.Request", len);
        return false;
    }
    call->id = call->request->call_id;
    rpc_bad_string why = RPC_STRING_OK;
    const char *bad =
        rpc__bad_string(&tk__v1__request__descriptor, frame, len, true, &why);
    if (bad != NULL) {
        /* "tk.v1.Control/Ping\0x" would run Ping. */
        rpc__fail_bad_string(call, "tk.v1.Request", bad, why);
        rpc__finish(s, NULL);
        return false;
    }
    return true;
}

/* A decoded request, from its peer's check to a call that runs (inline),
 * waits in the queue, or is answered at once. */
static void dispatch(rpc_slot *s)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    if (call->peer.uid >= 0 && call->peer.uid != srv->allowed_uid) {
        rpc__answer(s, RPC_PERMISSION_DENIED, "PEER_UID", RPC_CAUSE_NONE, 0,
                    "uid %lld may not call this tkd (it serves uid %lld)",
                    (long long)call->peer.uid, (long long)srv->allowed_uid);
        return;
    }
    if (atomic_load(&srv->stopping)) {
        rpc__answer(s, RPC_UNAVAILABLE, "SHUTTING_DOWN", RPC_CAUSE_SHUTDOWN,
                    1000, "tkd is shutting down");
        return;
    }
    call->reg = find_method(srv, call->request->method);
    if (call->reg == NULL) {
        rpc__answer(s, RPC_UNIMPLEMENTED, "UNKNOWN_METHOD", RPC_CAUSE_NONE, 0,
                    "unknown method \"%.*s\" (tk.v1.Control/ListMethods lists "
                    "them)",
                    tkc_utf8_prefix(call->request->method, 200),
                    call->request->method);
        return;
    }
    const rpc_method *m = call->reg->method;
    if (call->peer.read_only &&
        (m->kind == RPC_WRITE || (m->flags & RPC_METHOD_WRITES))) {
        rpc__answer(
            s, RPC_PERMISSION_DENIED, "READ_ONLY_LISTENER", RPC_CAUSE_NONE, 0,
            "%s writes, and the listener this call came on serves reads "
            "only; call it on one that serves every method",
            m->name);
        return;
    }
    set_deadlines(call);
    bool dup_done = false;
    if (!register_call(s, &dup_done)) {
        obs_field f[] = { OBS_INT("call_id", call->id),
                          OBS_INT("conn", call->peer.conn) };
        obs_log_fields(OBS_LOG_WARN, f, 2,
                       "dropped a resent copy of call %llu on connection %u",
                       (unsigned long long)call->id, (unsigned)call->peer.conn);
        pthread_mutex_lock(&srv->reg_mu);
        rpc_call__reset(call);
        rpc__arm_recv(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    if (dup_done) {
        rpc__answer(
            s, RPC_ALREADY_EXISTS, "DUPLICATE_CALL_ID", RPC_CAUSE_NONE, 0,
            "call %llu was already answered on this connection; it does "
            "not run twice",
            (unsigned long long)call->id);
        return;
    }
    /* A detached slot has no worker to wait for: its call runs here. */
    if ((call->reg->method->flags & RPC_METHOD_INLINE) || s->detached) {
        rpc__run_call(s);
        return;
    }
    if (!enqueue(srv, s)) {
        unregister(s);
        atomic_fetch_add_explicit(&srv->queue_full, 1, memory_order_relaxed);
        rpc__answer(s, RPC_RESOURCE_EXHAUSTED, "QUEUE_FULL", RPC_CAUSE_NONE,
                    rpc__retry_after(srv),
                    "all %u workers are busy and %u calls wait",
                    srv->cfg.workers, srv->cfg.queue_depth);
    }
}

static void on_request(rpc_slot *s, nng_msg *msg)
{
    s->call.t_recv = rpc_now_ns();
    atomic_fetch_add_explicit(&s->srv->bytes_in, nng_msg_len(msg),
                              memory_order_relaxed);
    rpc__peer_of(s->srv, nng_msg_get_pipe(msg), &s->call.peer);
    bool decoded = decode_envelope(s, nng_msg_body(msg), nng_msg_len(msg));
    nng_msg_free(msg);
    if (decoded)
        dispatch(s);
}

/* The receive path of a frame on a slot of its own, without NNG: a slot
 * is made for the call (its cancel signal, its memory) and freed after. */
int rpc__test_serve_frame(rpc_server *srv, const rpc_peer *peer,
                          const void *frame, size_t len, uint8_t **reply,
                          size_t *reply_len)
{
    *reply = NULL;
    *reply_len = 0;
    pthread_mutex_lock(&srv->life_mu);
    bool started = srv->started;
    pthread_mutex_unlock(&srv->life_mu);
    if (started)
        return -EBUSY;
    rpc_slot *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    s->srv = srv;
    s->detached = true;
    s->call.slot = s;
    int erv = port_event_open(&s->call.cancel);
    if (erv != 0) {
        free(s);
        return erv;
    }
    atomic_init(&s->call.cause, RPC_CAUSE_NONE);
    atomic_init(&s->call.deadline, INT64_MAX);
    s->call.t_recv = rpc_now_ns();
    s->call.peer = *peer;
    atomic_fetch_add_explicit(&srv->bytes_in, len, memory_order_relaxed);
    if (decode_envelope(s, frame, len))
        dispatch(s);
    int rv = 0;
    if (s->reply != NULL) {
        size_t n = nng_msg_len(s->reply);
        *reply = malloc(n > 0 ? n : 1);
        if (*reply != NULL) {
            memcpy(*reply, nng_msg_body(s->reply), n);
            *reply_len = n;
        } else {
            rv = -ENOMEM;
        }
        nng_msg_free(s->reply);
    }
    rpc_call__reset(&s->call);
    port_event_close(&s->call.cancel);
    rpc_arena__free(&s->call.arena);
    free(s);
    return rv;
}

void rpc__slot_cb(void *arg)
{
    rpc_slot *s = arg;
    rpc_server *srv = s->srv;
    int rv = nng_aio_result(s->aio);
    if (!atomic_exchange(&s->receiving, false)) {
        /* A send completed (or failed: the peer went away). */
        if (rv != 0)
            nng_msg_free(nng_aio_get_msg(s->aio));
        pthread_mutex_lock(&srv->reg_mu);
        s->sending = (rpc_callref){ 0 };
        rpc__slot_idle(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
        return; /* the socket closes */
    if (rv != 0) {
        pthread_mutex_lock(&srv->reg_mu);
        if (!atomic_load(&srv->stopping))
            rpc__arm_recv(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    on_request(s, nng_aio_get_msg(s->aio));
}
