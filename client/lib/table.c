/* SPDX-License-Identifier: MIT */
/* libtkclient's table of a fleet's nodes: tk.v1.Control/ListNodes read,
 * installed (its nodes kept where the table keeps them), and read again
 * when its time to live is up or a node is marked down.
 *
 * Owns: the client's nodes[] and what the table says of each (roots,
 * draining, down), under the client's mu.
 * May call: wait.c (ListNodes is a call), node.c, status.c, common/ (the
 * clock).
 * Must never: route a call (route.c does); print or log. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/control.pb-c.h"

/* Marks n down (until a reading of the table shows a heartbeat since) and
 * the table due for reading. */
void tk__mark_down(tk_client *c, node *n)
{
    pthread_mutex_lock(&c->mu);
    n->down = true;
    n->down_ns = tkc_mono_ns();
    c->read_ns = 0;
    pthread_mutex_unlock(&c->mu);
}

/* The table tkd at n gives; false when it gives none (no fleet, an older
 * tkd, an error, no answer in 5 s). */
bool tk__ask_nodes(tk_client *c, node *n, Tk__V1__ListNodesReply **out)
{
    static const uint8_t empty[1];
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__list_nodes_reply__descriptor,
                        .msg = &rep };
    tk_call_opts opts = { .timeout_ms = NODE_PING_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    int code = tk__call_payload(c, n, "tk.v1.Control/ListNodes", empty, 0,
                                &sink, &opts, &st, 0, &end);
    tk_status_clear(&st);
    *out = (Tk__V1__ListNodesReply *)rep;
    if (code == TK_OK && *out != NULL && (*out)->n_nodes > 0)
        return true;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    *out = NULL;
    return false;
}

static char **copy_roots(const Tk__V1__NodeInfo *in)
{
    char **v = calloc(in->n_roots + 1, sizeof *v);
    for (size_t i = 0; v != NULL && i < in->n_roots; i++)
        if ((v[i] = strdup(in->roots[i])) == NULL) {
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            v = NULL;
        }
    return v;
}

/* The node of the old table that in is: one with the same id and address
 * (referenced), or the node the client opened with (id "", while
 * opening: no other thread knows it yet), which is the one that answered
 * (self_id), renamed; NULL when none. Under the client's mu. */
static node *match_node(tk_client *c, const Tk__V1__NodeInfo *in,
                        const char *self_id)
{
    for (size_t j = 0; j < c->n_nodes; j++) {
        node *old = c->nodes[j];
        if (strcmp(old->id, in->node_id) == 0 &&
            strcmp(old->addr, in->address) == 0)
            return tk__node_ref(old);
        if (old->id[0] != '\0' || strcmp(in->node_id, self_id) != 0)
            continue;
        char *id = strdup(in->node_id), *addr = strdup(in->address);
        if (id == NULL || addr == NULL) {
            free(id);
            free(addr);
            return NULL;
        }
        free(old->id);
        free(old->addr);
        old->id = id;
        old->addr = addr;
        return tk__node_ref(old);
    }
    return NULL;
}

static void free_root_list(char **roots)
{
    if (roots == NULL)
        return;
    for (char **p = roots; *p != NULL; p++)
        free(*p);
    free(roots);
}

/* Puts reply r's rows on nodes v (their roots already copied to roots)
 * and makes v the table. Under the client's mu. */
static void swap_table(tk_client *c, node **v, char ***roots,
                       const Tk__V1__ListNodesReply *r)
{
    int64_t now = tkc_mono_ns();
    for (size_t i = 0; i < r->n_nodes; i++) {
        node *x = v[i];
        const Tk__V1__NodeInfo *in = r->nodes[i];
        tk__free_roots(x);
        x->roots = roots[i];
        x->n_roots = in->n_roots;
        roots[i] = NULL;
        x->draining = in->draining;
        /* Down until its heartbeat shows it alive since. */
        if (x->down &&
            now - (int64_t)in->heartbeat_age_ms * 1000000 > x->down_ns)
            x->down = false;
    }
    c->nodes = v;
    c->n_nodes = r->n_nodes;
    c->ttl_ms = r->ttl_ms > 0 ? r->ttl_ms : 6000;
    c->read_ns = now;
}

/* The client's table, from reply r: a node of the old one with the same id
 * and address is kept (with its socket), and so is the node the client
 * opened with, which is the one that answered (r->self_id). */
int tk__install_table(tk_client *c, const Tk__V1__ListNodesReply *r)
{
    size_t n = r->n_nodes;
    node **v = calloc(n, sizeof(node *));
    char ***roots = calloc(n, sizeof(char **));
    int rv = v != NULL && roots != NULL ? TK_OK : TK_ERR_NOMEM;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; rv == TK_OK && i < n; i++) {
        const Tk__V1__NodeInfo *in = r->nodes[i];
        v[i] = match_node(c, in, r->self_id);
        if (v[i] == NULL)
            v[i] = tk__node_new(in->node_id, in->address, strlen(in->address));
        roots[i] = copy_roots(in);
        if (v[i] == NULL || roots[i] == NULL)
            rv = TK_ERR_NOMEM;
    }
    node **old = c->nodes;
    size_t n_old = c->n_nodes;
    if (rv == TK_OK) {
        swap_table(c, v, roots, r);
        v = old;
        n = n_old;
    }
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; v != NULL && i < n; i++)
        tk__node_unref(v[i]);
    for (size_t i = 0; roots != NULL && i < r->n_nodes; i++)
        free_root_list(roots[i]);
    free(v);
    free(roots);
    return rv;
}

/* Reads the table again when it is older than its TTL (or a node failed):
 * one calling thread does, the others go on with the table they have. It
 * asks the live nodes in turn; when none answers, the client keeps its
 * table and asks again after the TTL. */
void tk__refresh_table(tk_client *c)
{
    pthread_mutex_lock(&c->mu);
    int64_t now = tkc_mono_ns();
    bool due =
        c->fleet && !c->refreshing &&
        (c->read_ns == 0 || now - c->read_ns >= (int64_t)c->ttl_ms * 1000000);
    node **v = NULL;
    size_t n = 0;
    if (due && (v = calloc(c->n_nodes, sizeof(node *))) != NULL) {
        c->refreshing = true;
        /* The live nodes first; the others too, or a client whose nodes
         * were all marked down would never learn that they are back. */
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < c->n_nodes; i++) {
                node *x = c->nodes[i];
                if ((x->down || x->draining) == (pass == 1))
                    v[n++] = tk__node_ref(x);
            }
    }
    pthread_mutex_unlock(&c->mu);
    if (v == NULL)
        return;
    bool read = false;
    for (size_t i = 0; i < n; i++) {
        char err[512];
        Tk__V1__ListNodesReply *r = NULL;
        if (!read &&
            tk__node_connect(c, v[i], NODE_CONNECT_MS, err, sizeof err) ==
                TK_OK &&
            tk__ask_nodes(c, v[i], &r)) {
            read = tk__install_table(c, r) == TK_OK;
            protobuf_c_message_free_unpacked(&r->base, NULL);
        }
        tk__node_unref(v[i]);
    }
    free(v);
    pthread_mutex_lock(&c->mu);
    if (!read)
        c->read_ns = tkc_mono_ns();
    c->refreshing = false;
    pthread_mutex_unlock(&c->mu);
}
