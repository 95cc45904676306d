/* SPDX-License-Identifier: MIT */
/* What the files of libtkclient share and do not export (TK__HIDDEN: not
 * in libtkclient.so's symbols, which are client.h's and json.h's).
 *
 * The files, each above those it calls (tests/arch, rule circle):
 *   client.c    tk_client_open, _close; tk_call, tk_call_raw, fleet tries
 *   table.c     the table of a fleet's nodes (ListNodes)
 *   route.c     which node of the table a method goes to
 *   cancel.c    tk_cancel (its Cancel is a call of wait.c)
 *   wait.c      one call on one node: send, wait, ask, probe
 *   envelope.c  tk.v1.Request and tk.v1.Reply
 *   node.c      a node: its socket, dial, TLS, channels
 *   status.c    tk_status and the names of codes and causes
 *   arena.c, catalog.c, default_address.c: the arena, the catalog, the
 *               default address. */
#ifndef TK_CLIENT_LIB_INT_H
#define TK_CLIENT_LIB_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include <tk/client.h>

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

#define TK__HIDDEN __attribute__((visibility("hidden")))

struct ProtobufCAllocator;
struct tk_arena;

/* arena.c: the tk_arena whose allocator this is, or NULL (another one). */
struct tk_arena *tk__arena_of(const struct ProtobufCAllocator *allocator);

/* Where an arena stands, to go back there: what a failed decoding took
 * from it is handed back (protobuf-c frees what it took, and an arena's
 * free does nothing). */
typedef struct tk__arena_pos {
    struct arena_chunk *cur;
    size_t cur_used;
    size_t used;
    uint64_t seq;
} tk__arena_pos;

void tk__arena_mark(const struct tk_arena *a, tk__arena_pos *pos);
void tk__arena_rewind(struct tk_arena *a, const tk__arena_pos *pos);

/* ---- the client, its nodes and channels -------------------------------- */

/* An NNG REQ context with its aio: one call at a time. Kept for reuse,
 * which spares an allocation and the socket lock of nng_ctx_open per call.
 * The aio's callback marks its operation done, so that the caller can wait
 * for a reply with a bound and go on waiting after it: a receive that
 * times out would abandon the request (NNG's req0 resets the context), and
 * with it a reply that is still on its way. */
typedef struct chan {
    nng_ctx ctx;
    nng_aio *aio; /* the receive's */
    /* The send's, with no callback: its end is waited for at once
     * (nng_aio_wait), and an aio without one is ended by the thread that
     * completes it, often the caller's own; one with a callback is handed
     * to NNG's task threads, two more thread switches per call. */
    nng_aio *send_aio;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    bool done;         /* mu: the operation started last has ended */
} chan;

#define CHAN_POOL_MAX 64

/* A tkd the client calls: its own REQ socket (resend disabled, one
 * dialer), its pool of channels. One in single mode (the URL opened, id
 * ""); in a fleet, one a row of the table tk.v1.Control/ListNodes gave,
 * dialed on first use. Counted: the table holds a reference, and so does
 * every call, Cancel handle and probe that uses it; the last one closes
 * its socket. */
typedef struct node {
    _Atomic int refs;
    char *id;   /* "" in single mode */
    char *addr; /* what is dialed */
    /* The client's mu: what the table says of it. */
    char **roots;
    size_t n_roots;
    bool draining;
    bool down;       /* failed to connect, or stopped answering */
    int64_t down_ns; /* when it was marked down (CLOCK_MONOTONIC) */
    /* dial_mu: the socket and its dialer. */
    pthread_mutex_t dial_mu;
    bool sock_open;
    bool dialed;
    nng_socket sock;
    nng_dialer dialer;
    _Atomic int pipes; /* connections up (pipe notifications) */
    /* The free channels: a channel is taken from a place with an atomic
     * exchange and put back into an empty one with a compare-and-swap, so
     * that the callers of one client do not queue on a lock for them. */
    _Atomic(chan *) free_chans[CHAN_POOL_MAX];
} node;

struct tk_client {
    char *url; /* as given (a comma-separated list, perhaps) */
    /* The scheme a fleet's nodes are dialed over: that of the address the
     * client came in on ("tls+tcp://" after any tls+, "tcp://" after
     * tcp://); NULL: none (node_refused). */
    const char *link;
    bool fleet;
    _Atomic uint64_t next_id;
    /* The TLS files, kept for the nodes of a fleet, dialed later. */
    char *tls_ca, *tls_cert, *tls_key, *tls_server_name;
    pthread_mutex_t mu; /* the table */
    node **nodes;
    size_t n_nodes;
    int64_t read_ns; /* when the table was read; 0: read it again now */
    uint32_t ttl_ms;
    bool refreshing; /* a thread reads the table */
    size_t rr;       /* the next node of round robin */
};

typedef enum cancel_state { CS_IDLE, CS_SENDING, CS_SENT } cancel_state;

struct tk_cancel {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool fired;
    cancel_state state;
    tk_client *client; /* of the call in flight */
    node *node;        /* its node, referenced while it is bound */
    uint64_t call_id;
};

/* How long a node of a fleet (or an address of a list) gets to connect,
 * TLS handshake included: NNG's dial has no bound of its own, and a host
 * that is down, or a tkd that is stopped, would hold the call for as long
 * as TCP tries (or for ever, its handshake unanswered). */
#define NODE_CONNECT_MS 5000

/* node_connect's answer for a node this client does not dial
 * (node_refused): the call goes nowhere, NODE_REFUSED. */
#define CONNECT_REFUSED (-64)

/* How long a node of a fleet gets to answer the Ping of TK_NODE_PROBE_MS:
 * it is answered inline, even when every worker is busy. */
#define NODE_PING_TIMEOUT_MS 5000u

/* What call_payload is to do besides the call. */
enum {
    CALL_ASK = 1,   /* ask tkd about a reply late past the deadline */
    CALL_PROBE = 2, /* Ping the node of a call kept waiting (a fleet's) */
};

/* How a call ended where the caller may go on elsewhere. */
typedef struct call_end {
    bool unsent;      /* it was not sent */
    bool node_failed; /* no reply: the node's connection failed or the node
                         stopped answering (client-made UNAVAILABLE) */
} call_end;

/* Where a reply's payload goes: decoded as a message of desc (with
 * allocator: NULL is malloc), or copied as bytes when desc is NULL. */
typedef struct reply_sink {
    const ProtobufCMessageDescriptor *desc;
    ProtobufCAllocator *allocator;
    ProtobufCMessage **msg;
    uint8_t **raw;
    size_t *raw_len;
} reply_sink;

/* How routing picks a node for a method. */
typedef enum route_kind {
    ROUTE_ANY,   /* Orders, Control: round robin */
    ROUTE_PATH,  /* Git, Search: the node whose roots hold the path */
    ROUTE_NAMED, /* Services: the node the caller names */
} route_kind;

/* ---- node.c ------------------------------------------------------------ */

TK__HIDDEN node *tk__node_new(const char *id, const char *addr,
                              size_t addr_len);
TK__HIDDEN node *tk__node_ref(node *n);
TK__HIDDEN void tk__node_unref(node *n);
TK__HIDDEN void tk__free_roots(node *n);
TK__HIDDEN int tk__node_connect(tk_client *c, node *n, int bound_ms,
                                char *errbuf, size_t errlen);
TK__HIDDEN chan *tk__chan_get(node *c);
TK__HIDDEN void tk__chan_put(node *c, chan *ch, bool reusable);
TK__HIDDEN void tk__chan_arm(chan *ch);
TK__HIDDEN bool tk__chan_wait_until(chan *ch, int64_t until_ns);

/* ---- status.c ---------------------------------------------------------- */

TK__HIDDEN int tk__local_status(tk_status *st, int code, int cause,
                                const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
TK__HIDDEN int tk__copy_status(tk_status *st, const Tk__V1__Status *in);

/* ---- envelope.c -------------------------------------------------------- */

TK__HIDDEN nng_msg *tk__encode_request(uint64_t id, const char *method,
                                       uint32_t timeout_ms,
                                       const uint8_t *payload, size_t plen);
TK__HIDDEN int tk__decode_reply(nng_msg *msg, uint64_t id,
                                const reply_sink *sink, tk_status *st);

/* ---- wait.c ------------------------------------------------------------ */

TK__HIDDEN int tk__call_payload(tk_client *client, node *n, const char *method,
                                const uint8_t *payload, size_t plen,
                                const reply_sink *sink,
                                const tk_call_opts *opts, tk_status *status,
                                int flags, call_end *end);

/* ---- route.c ----------------------------------------------------------- */

TK__HIDDEN route_kind tk__route_kind_of(const char *method);
TK__HIDDEN const char *tk__path_of(const ProtobufCMessage *m);
TK__HIDDEN void tk__set_reason(tk_status *st, const char *reason);
TK__HIDDEN int tk__route(node *const *nodes, size_t n, const char *method,
                         const char *path, const char *named, size_t *rr,
                         node *const *tried, size_t n_tried, tk_status *st);

/* ---- table.c ----------------------------------------------------------- */

TK__HIDDEN void tk__mark_down(tk_client *c, node *n);
TK__HIDDEN bool tk__ask_nodes(tk_client *c, node *n,
                              Tk__V1__ListNodesReply **out);
TK__HIDDEN int tk__install_table(tk_client *c, const Tk__V1__ListNodesReply *r);
TK__HIDDEN void tk__refresh_table(tk_client *c);

#endif
