/* SPDX-License-Identifier: MIT */
/*
 * The call registry: where each call of each connection stands (queued,
 * running, its reply being sent, recently answered), the Cancels that came
 * before their calls (tombstones), and what Cancel, CallState, a commit
 * point and a closed connection do to a call. Guarded by reg_mu.
 *
 * Every call is looked up as it arrives (a resent copy is not run twice),
 * under reg_mu, which every call of every connection takes: the slots and
 * the recently answered calls are found by hash (index.c), not by a scan,
 * and the tombstones are not looked at while there are none.
 */
#include <string.h>

#include "rpc_int.h"

/* reg_mu held; id != 0. */
rpc_where rpc__locate(rpc_server *srv, uint32_t conn, uint64_t id,
                      rpc_slot **live)
{
    *live = NULL;
    long e = rpc__index_find(&srv->live, conn, id);
    if (e >= 0) {
        rpc_slot *s = &srv->slots[e];
        if (s->phase == PHASE_QUEUED || s->phase == PHASE_RUNNING) {
            *live = s;
            return WHERE_LIVE;
        }
        if (s->phase == PHASE_SENDING && s->sending.id == id &&
            s->sending.conn == conn)
            return WHERE_SENDING;
    }
    return rpc__index_find(&srv->recent, conn, id) >= 0 ? WHERE_DONE
                                                        : WHERE_NONE;
}

/* A running WRITE, or a call past its commit point, completes whatever its
 * caller does; everything else may still be stopped. reg_mu held. */
bool rpc__cancellable(const rpc_slot *s)
{
    return s->phase == PHASE_QUEUED ||
           (s->phase == PHASE_RUNNING &&
            s->call.reg->method->kind == RPC_READ && !s->call.committing);
}

rpc_cause rpc_call_commit_point(rpc_call *call)
{
    rpc_server *srv = call->slot->srv;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_cause cause = (rpc_cause)atomic_load(&call->cause);
    if (cause == RPC_CAUSE_NONE)
        call->committing = true;
    pthread_mutex_unlock(&srv->reg_mu);
    return cause;
}

/* A Cancel can overtake its call: NNG hands the frames of one connection to
 * different contexts, whose callbacks run on different threads. The cancel
 * is remembered for a while and applied when the call registers. */
static void add_tombstone(rpc_server *srv, uint32_t conn, uint64_t id)
{
    rpc_callref *t = &srv->tombstones[srv->tomb_next];
    srv->tomb_next = (srv->tomb_next + 1) % RPC_TOMBSTONES;
    if (t->id == 0)
        srv->n_tombs++;
    t->conn = conn;
    t->id = id;
    t->expires = rpc_now_ns() + RPC_TOMBSTONE_TTL_NS;
}

/* Expired tombstones are cleared as they are passed, so that a registry
 * with none left is not looked at again. */
bool rpc__take_tombstone(rpc_server *srv, uint32_t conn, uint64_t id)
{
    if (srv->n_tombs == 0)
        return false;
    int64_t now = rpc_now_ns();
    bool found = false;
    for (size_t i = 0; i < RPC_TOMBSTONES; i++) {
        rpc_callref *t = &srv->tombstones[i];
        if (t->id == 0)
            continue;
        bool hit = !found && t->id == id && t->conn == conn && t->expires > now;
        if (hit || t->expires <= now) {
            memset(t, 0, sizeof *t);
            srv->n_tombs--;
            found = found || hit;
        }
    }
    return found;
}

int rpc_server_cancel(rpc_server *srv, uint32_t conn, uint64_t id)
{
    Tk__V1__CancelReply__Outcome out = TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND;
    if (id == 0)
        return out;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *s;
    switch (rpc__locate(srv, conn, id, &s)) {
    case WHERE_NONE:
        add_tombstone(srv, conn, id);
        break;
    case WHERE_SENDING:
    case WHERE_DONE:
        out = TK__V1__CANCEL_REPLY__OUTCOME__ALREADY_DONE;
        break;
    case WHERE_LIVE:
        if (!rpc__cancellable(s)) {
            out = TK__V1__CANCEL_REPLY__OUTCOME__WRITE_CONTINUES;
        } else {
            /* A READ, or a WRITE still in the queue: nothing written yet. */
            rpc_call__cancel(&s->call, RPC_CAUSE_CALLER);
            out = TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED;
        }
        break;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    if (out == TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED)
        rpc__wake_reaper(srv); /* it may have been waiting in the queue */
    return out;
}

/* Unlike Cancel, leaves no tombstone: asking is not acting. */
int rpc_server_call_state(rpc_server *srv, uint32_t conn, uint64_t id)
{
    Tk__V1__CallStateReply__State out =
        TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND;
    if (id == 0)
        return out;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *s;
    switch (rpc__locate(srv, conn, id, &s)) {
    case WHERE_NONE:
        break;
    case WHERE_LIVE:
        out = s->phase == PHASE_QUEUED
                  ? TK__V1__CALL_STATE_REPLY__STATE__QUEUED
                  : TK__V1__CALL_STATE_REPLY__STATE__RUNNING;
        break;
    case WHERE_SENDING:
        out = TK__V1__CALL_STATE_REPLY__STATE__RUNNING;
        break;
    case WHERE_DONE:
        out = TK__V1__CALL_STATE_REPLY__STATE__ANSWERED;
        break;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    return out;
}

/* A closed connection's READ calls have nobody to answer to: they are
 * cancelled, and its early cancels forgotten. */
void rpc__connection_closed(rpc_server *srv, uint32_t conn)
{
    pthread_mutex_lock(&srv->reg_mu);
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        /* phase first: peer is written before the call registers */
        if (rpc__cancellable(s) && s->call.peer.conn == conn)
            rpc_call__cancel(&s->call, RPC_CAUSE_CALLER);
    }
    for (size_t i = 0; i < RPC_TOMBSTONES; i++)
        if (srv->tombstones[i].id != 0 && srv->tombstones[i].conn == conn) {
            memset(&srv->tombstones[i], 0, sizeof srv->tombstones[i]);
            srv->n_tombs--;
        }
    pthread_mutex_unlock(&srv->reg_mu);
    rpc__wake_reaper(srv);
}
