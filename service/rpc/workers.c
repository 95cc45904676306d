/* SPDX-License-Identifier: MIT */
/*
 * Running: the worker pool, which takes calls from the queue and runs
 * them, and the reaper, which answers a queued call that can no longer
 * start without waiting for a worker.
 */
#include <time.h>

#include "rpc_int.h"

static void invoke(rpc_slot *s)
{
    rpc_call *call = &s->call;
    const rpc_method *m = call->reg->method;
    const Tk__V1__Request *req = call->request;
    ProtobufCMessage *in = protobuf_c_message_unpack(
        m->request, NULL, req->payload.len, req->payload.data);
    if (in == NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PAYLOAD",
                      "the payload (%zu bytes) does not decode as %s",
                      req->payload.len, m->request->name);
        rpc__finish(s, NULL);
        return;
    }
    rpc_bad_string why;
    const char *bad = rpc__bad_string(m->request, req->payload.data,
                                      req->payload.len, false, &why);
    if (bad != NULL) {
        protobuf_c_message_free_unpacked(in, NULL);
        rpc__fail_bad_string(call, m->request->name, bad, why);
        rpc__finish(s, NULL);
        return;
    }
    ProtobufCMessage *out = rpc_call_alloc(call, m->reply->sizeof_message);
    m->reply->message_init(out);
    /* Freed with the call: the reply may point into the request. */
    call->payload = in;
    call->ran = true;
    m->handler(call->reg->svc, call, in, out);
    rpc__finish(s, out);
}

/* Decides whether the call may start, then runs it (worker or inline). */
void rpc__run_call(rpc_slot *s)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    int64_t now = rpc_now_ns();
    call->t_start = now;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_cause cause = (rpc_cause)atomic_load(&call->cause);
    bool start = cause == RPC_CAUSE_NONE && now < call->caller_deadline &&
                 !atomic_load(&srv->stopping);
    if (start) {
        s->phase = PHASE_RUNNING;
        if (call->reg->method->kind == RPC_WRITE)
            atomic_store(&call->deadline,
                         now + rpc__ms_to_ns(call->reg->method->ceiling_ms));
    }
    pthread_mutex_unlock(&srv->reg_mu);
    if (start) {
        invoke(s);
        return;
    }
    if (cause == RPC_CAUSE_CALLER) {
        rpc__answer(s, RPC_CANCELLED, NULL, RPC_CAUSE_CALLER, 0,
                    "cancelled by the caller before it started");
    } else if (cause == RPC_CAUSE_SHUTDOWN || atomic_load(&srv->stopping)) {
        rpc__answer(s, RPC_UNAVAILABLE, "SHUTTING_DOWN", RPC_CAUSE_SHUTDOWN,
                    1000, "tkd is shutting down; the call did not start");
    } else {
        atomic_fetch_add_explicit(&srv->expired_in_queue, 1,
                                  memory_order_relaxed);
        rpc__answer(s, RPC_DEADLINE_EXCEEDED, "EXPIRED_IN_QUEUE",
                    RPC_CAUSE_DEADLINE, 0,
                    "the deadline passed after %lld ms in the queue; the call "
                    "did not start",
                    (long long)((now - call->t_recv) / 1000000));
    }
}

void *rpc__worker_main(void *arg)
{
    rpc_server *srv = arg;
    for (;;) {
        pthread_mutex_lock(&srv->pool_mu);
        srv->n_waiting++;
        while (srv->q_len == 0 && !srv->pool_stop)
            pthread_cond_wait(&srv->pool_cv, &srv->pool_mu);
        srv->n_waiting--;
        if (srv->q_len == 0) {
            pthread_mutex_unlock(&srv->pool_mu);
            return NULL;
        }
        rpc_slot *s = srv->queue[srv->q_head];
        srv->q_head = (srv->q_head + 1) % srv->q_cap;
        srv->q_len--;
        pthread_mutex_unlock(&srv->pool_mu);
        int64_t t0 = rpc_now_ns();
        rpc__run_call(s);
        int64_t us = (rpc_now_ns() - t0) / 1000;
        int64_t avg = atomic_load(&srv->avg_service_us);
        atomic_store(&srv->avg_service_us, avg + (us - avg) / 8);
    }
}

int rpc__add_worker(rpc_server *srv)
{
    if (srv->pool_stop || srv->n_threads >= srv->cfg.workers ||
        srv->q_len <= srv->n_waiting)
        return 0;
    int rv = pthread_create(&srv->threads[srv->n_threads], NULL,
                            rpc__worker_main, srv);
    if (rv != 0)
        return -rv;
    srv->n_threads++;
    return 0;
}

/* A queued call that can no longer start (its deadline passed, or it was
 * cancelled) is answered now, not when a worker frees up: the caller is
 * told DEADLINE_EXCEEDED or CANCELLED while it still listens. */
static bool dead_in_queue(const rpc_slot *s, int64_t now, int64_t *next)
{
    if (atomic_load(&s->call.cause) != RPC_CAUSE_NONE ||
        now >= s->call.caller_deadline)
        return true;
    if (s->call.caller_deadline < *next)
        *next = s->call.caller_deadline;
    return false;
}

/* Removes and returns the first dead queued slot; pool_mu held. */
static rpc_slot *take_dead(rpc_server *srv, int64_t *next)
{
    int64_t now = rpc_now_ns();
    *next = INT64_MAX;
    for (size_t i = 0; i < srv->q_len; i++) {
        rpc_slot *s = srv->queue[(srv->q_head + i) % srv->q_cap];
        if (!dead_in_queue(s, now, next))
            continue;
        for (size_t j = i; j + 1 < srv->q_len; j++)
            srv->queue[(srv->q_head + j) % srv->q_cap] =
                srv->queue[(srv->q_head + j + 1) % srv->q_cap];
        srv->q_len--;
        return s;
    }
    return NULL;
}

void *rpc__reaper_main(void *arg)
{
    rpc_server *srv = arg;
    pthread_mutex_lock(&srv->pool_mu);
    while (!srv->pool_stop) {
        int64_t next;
        rpc_slot *s = take_dead(srv, &next);
        if (s != NULL) {
            pthread_mutex_unlock(&srv->pool_mu);
            rpc__run_call(s); /* it will not start: this only answers */
            pthread_mutex_lock(&srv->pool_mu);
            continue;
        }
        srv->reaper_until = next;
        if (next == INT64_MAX) {
            pthread_cond_wait(&srv->reaper_cv, &srv->pool_mu);
        } else {
            tkc_cond_wait_until(&srv->reaper_cv, &srv->pool_mu, next + 1000000);
        }
        srv->reaper_until = INT64_MIN;
    }
    pthread_mutex_unlock(&srv->pool_mu);
    return NULL;
}

void rpc__wake_reaper(rpc_server *srv)
{
    pthread_mutex_lock(&srv->pool_mu);
    pthread_cond_signal(&srv->reaper_cv);
    pthread_mutex_unlock(&srv->pool_mu);
}
