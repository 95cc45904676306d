/* SPDX-License-Identifier: MIT */
/*
 * Internal to service/rpc: the structures its files share. Nothing outside
 * service/rpc includes this (the architecture test checks it).
 */
#ifndef TK_SERVICE_RPC_INT_H
#define TK_SERVICE_RPC_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <nng/nng.h>

#include "rpc.h"
#include "common/common.h"
#include "obs/obs.h"
#include "port/port.h"
#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

/* A chunk of call-scoped memory (rpc_call_alloc). */
typedef struct rpc_arena_block {
    struct rpc_arena_block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} rpc_arena_block;

#define RPC_N_CODES 17 /* rpc_code: 0 (OK) to 16 (UNAUTHENTICATED) */
#define RPC_N_CAUSES 5 /* rpc_cause: 0 (NONE) to 4 (LIMIT) */

/* What a method's calls came to: by status code, and how long they
 * waited in the queue and ran. */
typedef struct rpc_method_stats {
    _Atomic uint64_t calls[RPC_N_CODES];
    obs_hist queue; /* receipt to start (or to its answer, if it never ran) */
    obs_hist run;   /* start to reply encoded: calls that ran */
} rpc_method_stats;

typedef struct rpc_registered {
    const rpc_method *method;
    void *svc;
    rpc_method_stats *stats; /* its own allocation: moves with the entry */
} rpc_registered;

/* Where a call stands; guarded by rpc_server.reg_mu. */
typedef enum rpc_phase {
    PHASE_IDLE = 0, /* the slot waits for a request (or is stopped) */
    PHASE_QUEUED,   /* decoded, registered, waiting for a worker */
    PHASE_RUNNING,  /* its handler runs */
    PHASE_SENDING,  /* the reply is handed to NNG */
} rpc_phase;

struct rpc_call {
    struct rpc_slot *slot;
    const rpc_registered *reg;
    uint64_t id;
    rpc_peer peer;
    int64_t t_recv;            /* monotonic ns */
    int64_t t_start;           /* it left the queue: started, or answered
                                  without running; 0 before */
    int64_t caller_deadline;   /* t_recv + capped timeout */
    _Atomic int64_t deadline;  /* what rpc_call_deadline reports */
    _Atomic int cause;         /* rpc_cause set by cancellation, else NONE */
    _Atomic int64_t pgid;      /* rpc_call_set_process; 0: none */
    port_event cancel;         /* one per slot, cleared per call */
    Tk__V1__Request *request;  /* the unpacked envelope */
    ProtobufCMessage *payload; /* the unpacked method request */

    /* The outcome, written only by the thread that runs the call. */
    rpc_code code;
    const char *reason;
    char *message;
    const char *tool; /* rpc_call_set_tool, in call memory */
    const void *stderr_data;
    size_t stderr_len;
    const uint8_t *reply_prefix; /* rpc_call_set_reply_prefix */
    size_t reply_prefix_len;
    bool partial, process_killed, write_completed_set, write_completed;
    bool write_begun; /* rpc_call_write_begins */
    rpc_cause end_cause;
    uint32_t cleanup_ms, retry_after_ms;
    bool ran;        /* the handler was invoked */
    bool committing; /* reg_mu: past rpc_call_commit_point */

    rpc_arena_block *arena;
};

/* A (connection, call id) pair remembered for a while. */
typedef struct rpc_callref {
    uint32_t conn;
    uint64_t id;
    int64_t expires; /* tombstones only */
} rpc_callref;

/* (connection, call id) keys over a fixed set of entries, found without a
 * scan: a chained hash table (registry.c). An entry is in it or not; the
 * same key may be in it twice (a call answered again after its first
 * answer was forgotten). */
typedef struct rpc_index {
    size_t mask;       /* buckets - 1 */
    uint32_t *heads;   /* per bucket: its first entry + 1; 0: empty */
    uint32_t *next;    /* per entry: the next in its bucket + 1; 0: last */
    rpc_callref *keys; /* per entry; id 0: not in the index */
} rpc_index;

/* One NNG REP context with its aio; at most one call at a time. */
typedef struct rpc_slot {
    struct rpc_server *srv;
    nng_ctx ctx;
    nng_aio *aio;
    rpc_phase phase; /* reg_mu */
    /* An nng_ctx_recv is outstanding (else a send, or nothing): set as
     * one is started, taken by the aio's callback, which so learns which
     * operation ended without taking reg_mu. */
    _Atomic bool receiving;
    /* reg_mu: the call whose reply this slot is handing to NNG (id 0:
     * none), until the send completes. Until then a later reply on the
     * same connection could overtake it, so the call is not yet
     * "answered" (CallState) and a resent copy of it is dropped. */
    rpc_callref sending;
    rpc_call call;
    /* A slot of rpc__test_serve_frame: no NNG context behind it. Nothing
     * re-arms a receive on it, its call runs at once (inline or not), and
     * rpc__finish hands its reply back in reply instead of sending it. */
    bool detached;
    nng_msg *reply;
} rpc_slot;

#define RPC_RECENT 1024u
#define RPC_TOMBSTONES 256u
#define RPC_TOMBSTONE_TTL_NS (10LL * 1000000000LL)

/* Listener counters of NNG (its per-listener statistics) that say a
 * connection was refused or dropped for an error; logged as they grow. */
enum {
    RPC_REFUSED_LIMIT,     /* "conn_refused": closed as it came (the
                              listener's limit; tk's NNG) */
    RPC_REFUSED_AUTH,      /* "auth": the TLS handshake failed */
    RPC_REFUSED_PROTO,     /* "proto": not NNG's SP protocol, or not REQ */
    RPC_REFUSED_OTHER,     /* "other": an error NNG names no further (a
                              peer that hung up in its handshake); with an
                              NNG without tk's 08 patch, every close too */
    RPC_REFUSED_ACCEPT,    /* "oom": the accept itself failed */
    RPC_REFUSED_HANDSHAKE, /* "timeout": the handshake did not finish
                              within cfg.handshake_timeout_ms */
    RPC_REFUSED_FRAME,     /* "msgsize": a frame over max_request_bytes
                              (tk's NNG, nng-patches/08) */
    RPC_REFUSED_KINDS,
};

/* Why the Prometheus listener closed a connection before its answer was
 * taken (tk_metrics_http_closed_total's reasons). */
typedef enum rpc_mh_closed {
    RPC_MH_LIMIT,          /* its limit of connections were open */
    RPC_MH_HEADER_TIMEOUT, /* no request headers within the timeout */
    RPC_MH_SEND_TIMEOUT,   /* its answer not taken within the timeout */
    RPC_MH_CLOSED_KINDS,
} rpc_mh_closed;

/* A listener: what it is, its limit, and what has been logged of its
 * counters. */
typedef struct rpc_listener {
    const char *url; /* as configured */
    char bound[320]; /* with the port the system chose */
    nng_listener l;
    bool started;
    bool read_only;
    bool local; /* ipc://: this machine's, with a part of its own */
    /* Connections at once, those in their handshake included (NNG counts
     * those: tk's NNG, NNG_OPT_CONN_MAX); set by rpc__share_fds. */
    unsigned limit;
    unsigned part; /* its part of the descriptors (UINT_MAX: unknown) */
    uint64_t logged[RPC_REFUSED_KINDS]; /* watch_mu */
    /* Its NNG counts a client's close apart from "other" (nng-patches/08:
     * it has "msgsize"); watch_mu. */
    bool closes_apart;
    _Atomic unsigned open; /* its connections now */
    /* Closed at ADD_PRE over the limit: only an NNG without conn-max,
     * which counts connections once their handshake is done. */
    _Atomic uint64_t refused_here;
} rpc_listener;

struct rpc_server {
    rpc_config cfg;
    char **listen_urls;
    rpc_listener *listeners; /* listen, then listen_read_only */
    size_t n_listeners;
    void *tls;     /* nng_tls_config *, for the tls+tcp:// listeners */
    char *kept[4]; /* copies of tls_cert, tls_key, tls_ca, metrics_listen */
    /* Of every listener by kind, as the watch last read NNG's counters
     * (and the listeners' refused_here). */
    _Atomic uint64_t refused[RPC_REFUSED_KINDS];
    /* The descriptors as rpc__share_fds split them: the soft limit, those
     * in use when the listeners were about to bind (-1: unknown) and
     * those kept for the calls' work; the metrics listener's part. */
    uint64_t fds_limit;
    long fds_used;
    uint64_t fds_work;
    unsigned metrics_part;
    /* The NNG tkd is linked with lacks NNG_OPT_CONN_MAX or
     * NNG_OPT_HANDSHAKE_TIMEOUT (one not built from subprojects/nng.wrap). */
    bool nng_lacks_limits;
    /* trim.c: the least the heap held free since the last trim; watch_mu. */
    int64_t heap_floor;
    /* The watch: wakes every second, logs refusals, gives back the heap a
     * burst left. */
    pthread_mutex_t watch_mu;
    pthread_cond_t watch_cv; /* CLOCK_MONOTONIC */
    bool watch_stop, watching;
    pthread_t watcher;
    int64_t allowed_uid;
    int64_t t_start;
    char version[64];
    rpc_nodes_fn nodes; /* ListNodes; NULL: no fleet */
    void *nodes_arg;
    rpc_stop_fn on_stop; /* rpc_serve_until_signal, before shutdown */
    void *on_stop_arg;

    rpc_registered *methods; /* sorted by name after start */
    size_t n_methods, cap_methods;

    nng_socket sock;
    bool sock_open;

    rpc_slot *slots;
    size_t n_slots;

    /* The registry: slot phases, recently finished calls, early cancels. */
    pthread_mutex_t reg_mu;
    pthread_cond_t reg_cv; /* a slot went idle or finished sending */
    /* The slots (entry i: slots[i]) by the call they hold, from its
     * registration until the slot is idle again: queued, running, its
     * reply being sent. A detached slot is not in it. */
    rpc_index live;
    rpc_index recent; /* RPC_RECENT answered calls, a ring */
    size_t recent_next;
    rpc_callref tombstones[RPC_TOMBSTONES];
    size_t tomb_next;
    size_t n_tombs; /* entries of tombstones in use, expired or not */

    /* The worker pool: a ring of queued slots. */
    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    rpc_slot **queue;
    size_t q_head, q_len, q_cap;
    bool pool_stop;
    /* The workers started so far, at most cfg.workers: one at start, one
     * more when the queued calls outnumber those waiting for one
     * (rpc__add_worker). A worker, once started, stays until shutdown. */
    pthread_t *threads;
    size_t n_threads;
    size_t n_waiting;         /* workers waiting for a call */
    pthread_cond_t reaper_cv; /* pool_mu: the queue changed */
    /* pool_mu: the earliest deadline the reaper waits for; INT64_MAX when
     * it waits for none, INT64_MIN when it is not waiting (it looks at
     * the queue before it waits again). */
    int64_t reaper_until;
    pthread_t reaper;
    bool reaper_running;
    _Atomic int64_t avg_service_us; /* EWMA, for retry_after_ms */

    /* Metrics of the calls (stats.c reads them). A frame answered before
     * its method was known, or naming none of this server's, counts under
     * unmatched. */
    rpc_method_stats unmatched;
    _Atomic uint64_t ended_by_cause[RPC_N_CAUSES];
    _Atomic uint64_t expired_in_queue, queue_full;
    _Atomic uint64_t bytes_in, bytes_out;
    /* The Prometheus listener, when metrics_listen is set, and what it
     * counts (metrics_http.c writes them, stats.c reads them). */
    struct rpc_mhttp *metrics_http;
    char metrics_bound[320];
    unsigned metrics_limit;   /* its connections at most */
    _Atomic unsigned mh_open; /* its connections now */
    _Atomic uint64_t mh_closed[RPC_MH_CLOSED_KINDS];
    _Atomic uint64_t mh_scrapes, mh_renders;

    /* Credentials of each connection, read once when it is added (an
     * NNG pipe option lookup takes NNG's global locks), sorted by conn. */
    pthread_mutex_t peers_mu;
    rpc_peer *peers;
    size_t n_peers, cap_peers;

    _Atomic bool stopping;
    bool started, shut_down;
    unsigned outlived;       /* life_mu: calls that outlived shutdown's grace */
    pthread_mutex_t life_mu; /* serialises start/shutdown/free */
};

/* call.c */
void rpc_call__reset(rpc_call *call);
void rpc_call__cancel(rpc_call *call, rpc_cause cause);
void rpc_arena__free(rpc_arena_block **arena);
/* Milliseconds as nanoseconds (timed waits: tkc_cond_wait_until). */
int64_t rpc__ms_to_ns(uint32_t ms);

/* server.c: the life cycle (config, new, add_service, start). Calls the
 * stop hook, if one is set. */
void rpc_server__on_stop(const rpc_server *srv);

/* receive.c: a frame, from its slot to a call. */
/* The aio callback of every slot: a request arrived, or a reply was sent. */
void rpc__slot_cb(void *arg);
/* The order of srv->methods, by name: rpc_server_add_service sorts them
 * by it, and a request's method is searched for by it. */
int rpc__method_cmp(const void *a, const void *b);

/* listen.c: the listeners and the connections' credentials. */
/* Checks the listen URLs against the transports and TLS files configured
 * (in rpc_server_new); fills srv->listeners. */
int rpc__check_listeners(rpc_server *srv, char *err, size_t errlen);
/* Binds every listener and starts the watch (rpc_server_start). */
int rpc__start_listeners(rpc_server *srv, char *err, size_t errlen);
/* Stops the watch and frees what the listeners hold (the socket is closed
 * by then, or about to be left behind). */
void rpc__stop_listeners(rpc_server *srv);
/* The transport of a listener: 0 ipc, 1 tcp, 2 tls+tcp; -1 another. */
int rpc__listener_transport(const rpc_listener *L);
/* The pipe notification (ADD_PRE, ADD_POST, REM_POST) of the socket. */
void rpc__pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg);
/* The credentials of the connection a frame came on. */
void rpc__peer_of(rpc_server *srv, nng_pipe pipe, rpc_peer *peer);

/* watch.c: the listener watch, the thread rpc__start_listeners starts: once
 * a second, the refusals NNG counts, counted and logged, and the heap
 * (trim.c); until rpc__stop_listeners sets watch_stop. */
void *rpc__watch_main(void *arg);
/* The reason a refusal of kind k (rpc_refused) is named by, in
 * tk_connections_refused_total and in the watch's log line. */
const char *rpc__refused_reason(int k);

/* trim.c: gives the heap back to the system when a burst has left it
 * holding free memory (the watch, once a second; watch_mu held), a burst
 * counted from what the heap held free when the watch started. */
void rpc__heap_start(rpc_server *srv);
void rpc__heap_look(rpc_server *srv);

/* limits.c: the descriptors split between the calls' work and the
 * listeners; each listener's limit (rpc__start_listeners, before they
 * bind). */
void rpc__share_fds(rpc_server *srv);

/* index.c: the registry's indexes; reg_mu held unless said. */
/* For n_slots slots; 0 or -ENOMEM (rpc_server_new, no lock). */
int rpc__registry_init(rpc_server *srv, size_t n_slots);
void rpc__registry_fini(rpc_server *srv);
/* The slot's call is registered: queued from now on (id not 0). */
void rpc__register_slot(rpc_slot *s);
/* The slot holds no call any more (idle); a no-op when it held none. */
void rpc__unregister_slot(rpc_slot *s);
/* The call the slot answers goes among the recently answered. */
void rpc__remember_answered(rpc_server *srv, uint32_t conn, uint64_t id);
/* An entry of x under (conn, id), or -1. */
long rpc__index_find(const rpc_index *x, uint32_t conn, uint64_t id);

/* registry.c: where each call stands; reg_mu held unless said. */
/* Where a call of a connection stands in the registry. */
typedef enum rpc_where {
    WHERE_NONE,    /* unknown: never arrived, or forgotten */
    WHERE_LIVE,    /* queued or running (*live is its slot) */
    WHERE_SENDING, /* its reply is being handed to NNG */
    WHERE_DONE,    /* its reply was handed to NNG ahead of any later one */
} rpc_where;
/* Finds call id (not 0) of connection conn. */
rpc_where rpc__locate(rpc_server *srv, uint32_t conn, uint64_t id,
                      rpc_slot **live);
/* Whether the slot's call may still be stopped: queued, or a READ running
 * short of its commit point. */
bool rpc__cancellable(const rpc_slot *s);
/* Takes the Cancel that came before its call (conn, id), if one did. */
bool rpc__take_tombstone(rpc_server *srv, uint32_t conn, uint64_t id);
/* A connection closed; its READ calls are cancelled (reg_mu not held). */
void rpc__connection_closed(rpc_server *srv, uint32_t conn);

/* payload.c: the name of a string field of the message d encoded in data
 * that holds a NUL byte (protobuf-c would cut it there) or, with utf8, is
 * not UTF-8, and which (*why); or NULL. */
typedef enum rpc_bad_string {
    RPC_STRING_OK,
    RPC_STRING_NUL,
    RPC_STRING_NOT_UTF8,
} rpc_bad_string;
const char *rpc__bad_string(const ProtobufCMessageDescriptor *d,
                            const uint8_t *data, size_t len, bool utf8,
                            rpc_bad_string *why);

/* escape.c: text as UTF-8, bad bytes escaped as \xNN (text itself when it is
 * valid, else a copy in the call's arena); and every string field of msg,
 * nested ones included, made so in place. */
const char *rpc__text_escaped(rpc_call *call, const char *text);
void rpc__escape_strings(rpc_call *call, ProtobufCMessage *msg);

/* workers.c: the worker pool and the queue's reaper. */
/* Decides whether the call may start, then runs it, or answers why it does
 * not (on a worker, the reaper, or inline). */
void rpc__run_call(rpc_slot *s);
/* The threads of a worker and of the reaper (rpc_server_start). */
void *rpc__worker_main(void *arg);
/* With pool_mu held: starts a worker when the calls queued outnumber the
 * workers waiting for one and cfg.workers allows one more. 0, or -errno
 * when it could not start (the calls wait for the workers there are). */
int rpc__add_worker(rpc_server *srv);
void *rpc__reaper_main(void *arg);
/* Wakes the reaper: a queued call may have been cancelled. */
void rpc__wake_reaper(rpc_server *srv);

/* reply.c: a call's reply handed to NNG, and its slot made idle. */
/* Receives the slot's next request. reg_mu held. */
void rpc__arm_recv(rpc_slot *s);
/* The slot's call is over: idle, and receiving again unless tkd stops.
 * reg_mu held. */
void rpc__slot_idle(rpc_slot *s);
/* Ends the call: remembers it as done, logs it and sends its reply
 * (payload: the handler's reply, or NULL). */
void rpc__finish(rpc_slot *s, const ProtobufCMessage *payload);
/* A status-only answer to a frame that never became a running call. */
void rpc__answer(rpc_slot *s, rpc_code code, const char *reason,
                 rpc_cause cause, uint32_t retry_ms, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Fails the call on a string field the handler must not see: cut by a
 * NUL, or not UTF-8. */
void rpc__fail_bad_string(rpc_call *call, const char *message,
                          const char *field, rpc_bad_string why);
/* retry_after_ms for a call the full queue refuses. */
uint32_t rpc__retry_after(rpc_server *srv);

/* stats.c: every metric, as a Stats reply in the memory of call (a call's,
 * or a scrape's: an rpc_call that holds only its arena). */
void rpc__stats_fill(rpc_server *srv, rpc_call *call, Tk__V1__StatsReply *out);
/* The same in Prometheus' text format (0.0.4), appended to out. 0 or
 * -ENOMEM. */
int rpc__stats_text(const Tk__V1__StatsReply *st, tkc_buf *out);
/* The reason tk_metrics_http_closed_total names a kind of close by
 * (rpc_mh_closed), which the metrics listener's log line names too. */
const char *rpc__mh_closed_reason(int k);

/* metrics_http.c: the Prometheus listener (cfg.metrics_listen). */
int rpc__metrics_http_start(rpc_server *srv, char *err, size_t errlen);
void rpc__metrics_http_stop(rpc_server *srv);

/* metrics_conn.c: one connection of the Prometheus listener, as HTTP/1.1
 * (its thread alone touches it). */
/* A request's line and headers: Prometheus sends about 300 bytes. */
#define RPC_MH_REQUEST_MAX 4096
/* The metrics as rendered once, shared by the answers sending them. */
typedef struct rpc_mh_body {
    unsigned refs;
    tkc_buf text;
} rpc_mh_body;
void rpc__mh_body_drop(rpc_mh_body *b);
typedef enum rpc_mh_state {
    RPC_MH_READ, /* its request line and headers, until its deadline */
    RPC_MH_WAIT, /* a scrape: for the next rendering */
    RPC_MH_SEND, /* its answer, taken until its deadline */
} rpc_mh_state;
typedef struct rpc_mh_conn {
    int fd;
    rpc_mh_state state;
    int64_t deadline; /* RPC_MH_READ, RPC_MH_SEND: the listener's */
    bool head;        /* HEAD: the answer without its body */
    char head_buf[256];
    size_t head_len;
    rpc_mh_body *body; /* NULL: the answer is head_buf alone */
    size_t sent;       /* of head_buf, then of the body */
    size_t got;
    char req[RPC_MH_REQUEST_MAX];
} rpc_mh_conn;
/* Reads what came (RPC_MH_READ); a request complete is judged against
 * path: a scrape of it goes to RPC_MH_WAIT, anything else is answered
 * (RPC_MH_SEND: 400, 404, 405, 431, 505). false: the peer closed. */
bool rpc__mh_read(rpc_mh_conn *c, const char *path);
/* c's answer (RPC_MH_SEND): status, extra header lines, and the text of
 * body (which it holds a reference of) or text. */
void rpc__mh_answer(rpc_mh_conn *c, const char *status, const char *extra,
                    rpc_mh_body *body, const char *text);
/* Sends what the socket takes; false when the answer is all sent, or the
 * peer is gone. */
bool rpc__mh_send(rpc_mh_conn *c);

/* outcome.c: a call's outcome, once final (rpc__finish). */
/* Counted: its code, cause, queue wait and run time, and the bytes of its
 * reply. */
void rpc__count_call(rpc_server *srv, const rpc_call *call, int64_t now,
                     size_t reply_bytes);
/* Its one line in the log. */
void rpc__log_call(const rpc_call *call, int64_t elapsed_us);

#endif /* TK_SERVICE_RPC_INT_H */
