/* SPDX-License-Identifier: MIT */
/*
 * The registry's indexes (rpc_index): the slots by the call they hold and
 * the ring of recently answered calls, by (connection, call id), in
 * chained hash tables; and the registry's changes that keep them. reg_mu
 * held, as for the registry (registry.c finds calls in them).
 */
#include <errno.h>
#include <stdlib.h>

#include "rpc_int.h"

/* ---- the index ------------------------------------------------------------
 */

static int index_init(rpc_index *x, size_t entries)
{
    size_t buckets = 16;
    while (buckets < 2 * entries)
        buckets *= 2;
    x->mask = buckets - 1;
    x->heads = calloc(buckets, sizeof *x->heads);
    x->next = calloc(entries, sizeof *x->next);
    x->keys = calloc(entries, sizeof *x->keys);
    return x->heads && x->next && x->keys ? 0 : -ENOMEM;
}

static void index_fini(rpc_index *x)
{
    free(x->heads);
    free(x->next);
    free(x->keys);
    *x = (rpc_index){ 0 };
}

static size_t bucket_of(const rpc_index *x, uint32_t conn, uint64_t id)
{
    uint64_t h = (id ^ (uint64_t)conn << 40 ^ conn) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & x->mask;
}

/* Entry e, not in the index, goes in under (conn, id); id != 0. */
static void index_put(rpc_index *x, size_t e, uint32_t conn, uint64_t id)
{
    size_t b = bucket_of(x, conn, id);
    x->keys[e] = (rpc_callref){ .conn = conn, .id = id };
    x->next[e] = x->heads[b];
    x->heads[b] = (uint32_t)e + 1;
}

/* Entry e leaves the index, if it is in it. */
static void index_drop(rpc_index *x, size_t e)
{
    if (x->keys[e].id == 0)
        return;
    uint32_t *link = &x->heads[bucket_of(x, x->keys[e].conn, x->keys[e].id)];
    while (*link != 0 && *link != e + 1)
        link = &x->next[*link - 1];
    if (*link != 0)
        *link = x->next[e];
    x->next[e] = 0;
    x->keys[e] = (rpc_callref){ 0 };
}

/* An entry under (conn, id), or -1. */
long rpc__index_find(const rpc_index *x, uint32_t conn, uint64_t id)
{
    for (uint32_t i = x->heads[bucket_of(x, conn, id)]; i != 0;
         i = x->next[i - 1])
        if (x->keys[i - 1].id == id && x->keys[i - 1].conn == conn)
            return (long)i - 1;
    return -1;
}

/* ---- the registry ---------------------------------------------------------
 */

int rpc__registry_init(rpc_server *srv, size_t n_slots)
{
    if (index_init(&srv->live, n_slots) != 0 ||
        index_init(&srv->recent, RPC_RECENT) != 0) {
        rpc__registry_fini(srv);
        return -ENOMEM;
    }
    return 0;
}

void rpc__registry_fini(rpc_server *srv)
{
    index_fini(&srv->live);
    index_fini(&srv->recent);
}

void rpc__register_slot(rpc_slot *s)
{
    s->phase = PHASE_QUEUED;
    if (!s->detached)
        index_put(&s->srv->live, (size_t)(s - s->srv->slots), s->call.peer.conn,
                  s->call.id);
}

void rpc__unregister_slot(rpc_slot *s)
{
    s->phase = PHASE_IDLE;
    if (!s->detached)
        index_drop(&s->srv->live, (size_t)(s - s->srv->slots));
}

void rpc__remember_answered(rpc_server *srv, uint32_t conn, uint64_t id)
{
    size_t e = srv->recent_next;
    srv->recent_next = (srv->recent_next + 1) % RPC_RECENT;
    index_drop(&srv->recent, e);
    index_put(&srv->recent, e, conn, id);
}
