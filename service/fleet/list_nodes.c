/* SPDX-License-Identifier: MIT */
/* tk.v1.Control/ListNodes, answered inline from the heartbeat's last
 * reading (heartbeat.c), copied under the fleet's mutex: no call waits
 * for the database. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fleet_int.h"
#include "common/common.h"
#include "tk/v1/control.pb-c.h"

/* ---- ListNodes ----------------------------------------------------------- */

/* t as 2006-01-02T15:04:05Z, or "?". */
static void utc_text(time_t t, char *out, size_t len)
{
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL ||
        strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, len, "?");
}

/* When the reading is old, or the row was taken, the answer is no table
 * rather than one nobody can vouch for. */
static void fail_stale(const fleet *f, rpc_call *call, int64_t now)
{
    bool read = f->have_reading;
    int64_t ago = (now - (read ? f->read_ns : f->start_ns)) / FLEET_MS;
    char when[32];
    utc_text(f->taken ? f->taken_wall
             : read   ? f->read_wall
                      : f->start_wall,
             when, sizeof when);
    if (f->taken)
        rpc_call_fail(call, RPC_UNAVAILABLE, "MEMBERSHIP_STALE",
                      "node %s stopped advertising at %s: its row in "
                      "tk_nodes was taken over by another process (tkd's "
                      "log says which); it serves the calls sent to it, but "
                      "vouches for no table until it restarts",
                      f->node_id, when);
    else
        rpc_call_fail(call, RPC_UNAVAILABLE, "MEMBERSHIP_STALE",
                      "node %s has not read the membership from PostgreSQL "
                      "since %s%s (%" PRId64 " ms ago; --node-ttl-ms %u)%s%s",
                      f->node_id, read ? "" : "tkd started at ", when, ago,
                      f->ttl_ms, f->error[0] != '\0' ? ": " : "", f->error);
}

/* What n takes of ListNodes' byte budget: its strings. */
static size_t node_bytes(const fleet_node *n)
{
    size_t bytes = strlen(n->node_id) + strlen(n->address) + strlen(n->version);
    for (size_t j = 0; j < n->n_roots; j++)
        bytes += strlen(n->roots[j]);
    return bytes;
}

static Tk__V1__NodeInfo *node_info(rpc_call *call, const fleet_node *n,
                                   int64_t age_ms)
{
    Tk__V1__NodeInfo *ni = rpc_call_alloc(call, sizeof *ni);
    tk__v1__node_info__init(ni);
    ni->node_id = rpc_call_strdup(call, n->node_id);
    ni->address = rpc_call_strdup(call, n->address);
    ni->version = rpc_call_strdup(call, n->version);
    ni->draining = n->draining;
    ni->heartbeat_age_ms = (uint64_t)age_ms;
    ni->roots = rpc_call_alloc(call, (n->n_roots + 1) * sizeof(char *));
    for (size_t j = 0; j < n->n_roots; j++)
        ni->roots[ni->n_roots++] = rpc_call_strdup(call, n->roots[j]);
    return ni;
}

/* Inline (rpc_nodes_fn): a copy of the reading, the ages moved on by the
 * time since it was taken; a node whose heartbeat is now older than the
 * TTL is left out. */
void fleet__list_nodes(void *arg, rpc_call *call, ProtobufCMessage *reply)
{
    fleet *f = arg;
    Tk__V1__ListNodesReply *out = (Tk__V1__ListNodesReply *)reply;
    int64_t now = tkc_mono_ns();
    pthread_mutex_lock(&f->mu);
    int64_t elapsed = (now - f->read_ns) / FLEET_MS;
    if (f->taken || !f->have_reading || elapsed > (int64_t)f->ttl_ms) {
        fail_stale(f, call, now);
        pthread_mutex_unlock(&f->mu);
        return;
    }
    out->self_id = rpc_call_strdup(call, f->node_id);
    out->ttl_ms = f->ttl_ms;
    /* The table is what the database's writers put there: the reply holds
     * at most the method's list ceiling of nodes and bytes
     * (tk/v1/control.proto), partial beyond. */
    const rpc_list *list = rpc_call_list(call);
    uint32_t most = rpc_list_items(list, 0);
    size_t n_max = f->reading.n < most ? f->reading.n : most, bytes = 0;
    out->nodes = rpc_call_alloc(call, (n_max + 1) * sizeof(Tk__V1__NodeInfo *));
    for (size_t i = 0; i < f->reading.n; i++) {
        const fleet_node *n = &f->reading.nodes[i];
        int64_t age = n->age_ms + elapsed;
        if (age > (int64_t)f->ttl_ms)
            continue;
        size_t cost = node_bytes(n);
        if (out->n_nodes == n_max ||
            (list->max_bytes != 0 && bytes + cost > list->max_bytes)) {
            rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
            break;
        }
        bytes += cost;
        out->nodes[out->n_nodes++] = node_info(call, n, age);
    }
    pthread_mutex_unlock(&f->mu);
}
