/* SPDX-License-Identifier: MIT */
/* libtkclient: calls over one NNG REQ socket, at most once each.
 *
 * Owns: the tk_client (open, close) and tk_call, tk_call_raw: a call
 * routed to a node, and in a fleet tried on the next node where it may.
 * May call: table.c, route.c, wait.c, node.c, status.c, common/.
 * Must never: print or log; resend a call that may have run.
 * The files beneath it: client_int.h says which is which. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

static char *dup_or_null(const char *s, bool *failed)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *failed = true;
    return d;
}

static void client_free(tk_client *c)
{
    for (size_t i = 0; i < c->n_nodes; i++)
        tk__node_unref(c->nodes[i]);
    free(c->nodes);
    pthread_mutex_destroy(&c->mu);
    free(c->url);
    free(c->tls_ca);
    free(c->tls_cert);
    if (c->tls_key != NULL)
        tkc_wipe(c->tls_key, strlen(c->tls_key));
    free(c->tls_key);
    free(c->tls_server_name);
    free(c);
}

/* Dials url, or the first of a comma-separated list that connects: the
 * client's one node, c->nodes[0]. */
static int dial_first(tk_client *c, const char *url, char *errbuf,
                      size_t errlen)
{
    int rv = TK_ERR_ARG;
    for (const char *at = url;;) {
        const char *comma = strchr(at, ',');
        size_t len = comma != NULL ? (size_t)(comma - at) : strlen(at);
        if (len == 0) {
            tkc_set_err(errbuf, errlen, "an empty address in \"%s\"", url);
            return TK_ERR_ARG;
        }
        node *n = tk__node_new("", at, len);
        if (n == NULL)
            return TK_ERR_NOMEM;
        /* One address: NNG's own wait, as always. */
        int bound = comma != NULL || at != url ? NODE_CONNECT_MS : 0;
        rv = tk__node_connect(c, n, bound, errbuf, errlen);
        if (rv == TK_OK) {
            c->nodes[0] = n;
            c->n_nodes = 1;
            c->link = strncmp(at, "tls+", 4) == 0  ? "tls+tcp://"
                      : strncmp(at, "tcp", 3) == 0 ? "tcp://"
                                                   : NULL;
            return TK_OK;
        }
        tk__node_unref(n);
        if (rv != TK_ERR_CONNECT || comma == NULL)
            return rv;
        at = comma + 1;
    }
}

int tk_client_open_opts(tk_client **out, const char *url,
                        const tk_client_opts *opts, char *errbuf, size_t errlen)
{
    if (out == NULL || url == NULL)
        return TK_ERR_ARG;
    *out = NULL;
    tk_client_opts env = {
        .tls_ca = getenv("TK_TLS_CA"),
        .tls_cert = getenv("TK_TLS_CERT"),
        .tls_key = getenv("TK_TLS_KEY"),
    };
    const tk_client_opts *o = opts != NULL ? opts : &env;
    tk_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    bool failed = false;
    c->url = dup_or_null(url, &failed);
    c->tls_ca = dup_or_null(o->tls_ca, &failed);
    c->tls_cert = dup_or_null(o->tls_cert, &failed);
    c->tls_key = dup_or_null(o->tls_key, &failed);
    c->tls_server_name = dup_or_null(o->tls_server_name, &failed);
    c->nodes = calloc(1, sizeof(node *));
    if (failed || c->nodes == NULL) {
        client_free(c);
        return TK_ERR_NOMEM;
    }
    int rv = dial_first(c, url, errbuf, errlen);
    if (rv != TK_OK) {
        client_free(c);
        return rv;
    }
    /* Call ids need only be unique per connection; a random start keeps
     * the ids of different clients apart in tkd's log. */
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) != 0)
        seed = (uint64_t)getpid() << 32;
    atomic_init(&c->next_id, (seed >> 16) | 1);
    /* And a random start of the round robin, so that short-lived clients
     * (a tkcall a call) spread over the nodes too. */
    c->rr = (size_t)(seed >> 3);
    /* A fleet? Not over ipc://, which reaches one tkd on this machine: that
     * client works exactly as it always has. */
    Tk__V1__ListNodesReply *r = NULL;
    if (strncmp(c->nodes[0]->addr, "ipc://", 6) != 0 &&
        tk__ask_nodes(c, c->nodes[0], &r)) {
        if (tk__install_table(c, r) == TK_OK)
            c->fleet = true;
        protobuf_c_message_free_unpacked(&r->base, NULL);
    }
    *out = c;
    return TK_OK;
}

int tk_client_open(tk_client **out, const char *url, char *errbuf,
                   size_t errlen)
{
    return tk_client_open_opts(out, url, NULL, errbuf, errlen);
}

void tk_client_close(tk_client *client)
{
    if (client == NULL)
        return;
    client_free(client);
}

static void set_node(tk_status *st, const char *id)
{
    char *d = strdup(id);
    if (d != NULL) {
        free(st->node);
        st->node = d;
    }
}

/* The most nodes one call tries. */
#define MAX_TRIES 16

/* What one call of call_fleet is: its method's routing, and its one
 * deadline. */
typedef struct fleet_call {
    const char *method;
    const char *path;
    const uint8_t *payload;
    size_t plen;
    const reply_sink *sink;
    const tk_call_opts *opts;
    bool read; /* the catalog knows the method as a READ */
    bool named;
    route_kind kind;
    uint32_t budget_ms; /* the one deadline a retried READ shares */
    int64_t start;
} fleet_call;

/* One try of call fc on node n, with timeout_ms; whether it may go on to
 * the next node in *again. */
static int try_node(tk_client *c, const fleet_call *fc, node *n,
                    uint32_t timeout_ms, size_t n_tried, tk_status *status,
                    bool *again)
{
    tk_call_opts o = *fc->opts;
    o.timeout_ms = timeout_ms;
    char err[512];
    call_end end = { .unsent = true };
    int code, rv = tk__node_connect(c, n, NODE_CONNECT_MS, err, sizeof err);
    if (rv != TK_OK) {
        code =
            tk__local_status(status, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                             "could not connect to node %s: %s (the call was "
                             "not sent)",
                             n->id, err);
        if (rv == CONNECT_REFUSED)
            tk__set_reason(status, "NODE_REFUSED");
        end.node_failed = true;
    } else {
        code =
            tk__call_payload(c, n, fc->method, fc->payload, fc->plen, fc->sink,
                             &o, status, CALL_ASK | CALL_PROBE, &end);
    }
    if (end.node_failed)
        tk__mark_down(c, n);
    set_node(status, n->id);
    bool cancelled = o.cancel != NULL && code == TK_CODE_CANCELLED;
    /* Not sent: Orders and Control go to the next node, whatever the
     * method; a READ may go on where its caller allows. */
    bool unsent_any = end.unsent && fc->kind == ROUTE_ANY;
    bool read_retry =
        fc->read && fc->opts->retry_reads && fc->kind != ROUTE_NAMED;
    *again = !fc->named && end.node_failed && !cancelled &&
             n_tried < MAX_TRIES && (unsent_any || read_retry);
    return code;
}

/* The timeout of the next try: what is left of the one deadline; false
 * when nothing is. */
static bool time_left(const fleet_call *fc, size_t n_tried, uint32_t *out)
{
    *out = fc->opts->timeout_ms;
    if (n_tried == 0 || fc->budget_ms == 0)
        return true;
    int64_t spent = (tkc_mono_ns() - fc->start) / 1000000;
    if (spent >= (int64_t)fc->budget_ms)
        return false;
    *out = fc->budget_ms - (uint32_t)spent;
    return true;
}

/* A call in a fleet: routed (see route), dialed, and where the call may
 * go on elsewhere (it was not sent; or a READ whose node failed, when its
 * caller allows), to the next node within its one deadline. */
static int call_fleet(tk_client *c, fleet_call *fc, tk_status *status)
{
    const tk_method_desc *md = tk_catalog_find_method(fc->method);
    /* A method the catalog does not know may be a WRITE of a newer tkd:
     * only a known READ is ever sent a second time. */
    fc->read = md != NULL && md->kind == TK_METHOD_READ;
    fc->named = fc->opts->node != NULL && fc->opts->node[0] != '\0';
    fc->kind = tk__route_kind_of(fc->method);
    fc->budget_ms = fc->opts->timeout_ms != 0 ? fc->opts->timeout_ms
                    : md != NULL              ? md->default_timeout_ms
                                              : 0;
    fc->start = tkc_mono_ns();
    node *tried[MAX_TRIES];
    size_t n_tried = 0;
    int code = TK_CODE_INTERNAL;
    bool again = true;
    uint32_t timeout_ms;
    while (again && time_left(fc, n_tried, &timeout_ms)) {
        tk__refresh_table(c);
        tk_status rst = { 0 };
        node *n = NULL;
        pthread_mutex_lock(&c->mu);
        int i = tk__route(c->nodes, c->n_nodes, fc->method, fc->path,
                          fc->opts->node, &c->rr, tried, n_tried, &rst);
        if (i >= 0)
            n = tk__node_ref(c->nodes[i]);
        pthread_mutex_unlock(&c->mu);
        if (n == NULL && n_tried > 0) {
            /* Nowhere else to go: the last node's failure says more. */
            tk_status_clear(&rst);
            break;
        }
        if (n == NULL) {
            tk_status_clear(status);
            *status = rst;
            code = status->code;
            break;
        }
        tried[n_tried++] = n;
        code = try_node(c, fc, n, timeout_ms, n_tried, status, &again);
    }
    for (size_t i = 0; i < n_tried; i++)
        tk__node_unref(tried[i]);
    return code;
}

/* A call, routed in a fleet; on the one node otherwise. m: the request,
 * when the caller has it as a message (else it is found in the payload
 * where routing needs it). */
static int call_routed(tk_client *c, const char *method,
                       const ProtobufCMessage *m, const uint8_t *payload,
                       size_t plen, const reply_sink *sink,
                       const tk_call_opts *opts, tk_status *status)
{
    if (!c->fleet) {
        if (opts != NULL && opts->node != NULL && opts->node[0] != '\0') {
            tk__local_status(
                status, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
                "no node \"%s\": tkd at %s is no member of a fleet", opts->node,
                c->nodes[0]->addr);
            tk__set_reason(status, "UNKNOWN_NODE");
            return status->code;
        }
        call_end end;
        return tk__call_payload(c, c->nodes[0], method, payload, plen, sink,
                                opts, status, CALL_ASK, &end);
    }
    const char *path = NULL;
    ProtobufCMessage *unpacked = NULL;
    if (tk__route_kind_of(method) == ROUTE_PATH &&
        (opts == NULL || opts->node == NULL || opts->node[0] == '\0')) {
        const tk_method_desc *md = tk_catalog_find_method(method);
        if (m == NULL && md != NULL)
            m = unpacked =
                protobuf_c_message_unpack(md->request, NULL, plen, payload);
        if (m != NULL)
            path = tk__path_of(m);
    }
    static const tk_call_opts no_opts = { 0 };
    fleet_call fc = { .method = method,
                      .path = path,
                      .payload = payload,
                      .plen = plen,
                      .sink = sink,
                      .opts = opts != NULL ? opts : &no_opts };
    int code = call_fleet(c, &fc, status);
    if (unpacked != NULL)
        protobuf_c_message_free_unpacked(unpacked, NULL);
    return code;
}

int tk_call(tk_client *client, const char *method,
            const ProtobufCMessage *request,
            const ProtobufCMessageDescriptor *reply_desc,
            ProtobufCMessage **reply, const tk_call_opts *opts,
            tk_status *status)
{
    if (status == NULL)
        return TK_CODE_INVALID_ARGUMENT;
    memset(status, 0, sizeof *status);
    if (reply != NULL)
        *reply = NULL;
    if (client == NULL || method == NULL || request == NULL ||
        reply_desc == NULL || reply == NULL)
        return tk__local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                                "tk_call: client, method, request, reply_desc "
                                "and reply are required");
    size_t plen = protobuf_c_message_get_packed_size(request);
    uint8_t *payload = malloc(plen > 0 ? plen : 1);
    if (payload == NULL)
        return tk__local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "out of memory");
    protobuf_c_message_pack(request, payload);
    reply_sink sink = {
        .desc = reply_desc,
        .allocator = opts != NULL ? opts->reply_allocator : NULL,
        .msg = reply,
    };
    int code = call_routed(client, method, request, payload, plen, &sink, opts,
                           status);
    free(payload);
    return code;
}

int tk_call_raw(tk_client *client, const char *method, const void *payload,
                size_t len, uint8_t **reply, size_t *reply_len,
                const tk_call_opts *opts, tk_status *status)
{
    if (status == NULL)
        return TK_CODE_INVALID_ARGUMENT;
    memset(status, 0, sizeof *status);
    if (reply != NULL)
        *reply = NULL;
    if (reply_len != NULL)
        *reply_len = 0;
    if (client == NULL || method == NULL || (payload == NULL && len > 0) ||
        reply == NULL || reply_len == NULL)
        return tk__local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                                "tk_call_raw: client, method, payload, reply "
                                "and reply_len are required");
    reply_sink sink = { .raw = reply, .raw_len = reply_len };
    return call_routed(client, method, NULL, payload, len, &sink, opts, status);
}
