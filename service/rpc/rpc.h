/* SPDX-License-Identifier: MIT */
/*
 * rpc — the transport side of tkd.
 *
 * Owns: the NNG REP socket and its listeners, the receive contexts, the
 * Request/Reply envelope, the method table (the only way from the transport
 * to a service), the call registry (deadline, cancellation and its cause,
 * per connection), the bounded worker pool, request limits, shutdown, what
 * it counts of the calls, read with every module's metrics (obs/) as
 * tk.v1.Control/Stats and by its Prometheus listener. What tk.v1.Control
 * (service/control/) answers it reads here, through the functions under
 * "what the server tells tk.v1.Control".
 * May call: NNG, protobuf-c, libc; obs/ (the log and the metrics), as
 * every module does.
 * Must never: let a service see NNG (handlers get an rpc_call and decoded
 * messages only), block in an NNG callback, run a handler whose caller's
 * deadline passed while it waited in the queue, or cancel a WRITE that has
 * started.
 */
#ifndef TK_SERVICE_RPC_H
#define TK_SERVICE_RPC_H

#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* tk.v1.Status.Code: the canonical gRPC numbers. */
typedef enum rpc_code {
    RPC_OK = 0,
    RPC_CANCELLED = 1,
    RPC_UNKNOWN = 2,
    RPC_INVALID_ARGUMENT = 3,
    RPC_DEADLINE_EXCEEDED = 4,
    RPC_NOT_FOUND = 5,
    RPC_ALREADY_EXISTS = 6,
    RPC_PERMISSION_DENIED = 7,
    RPC_RESOURCE_EXHAUSTED = 8,
    RPC_FAILED_PRECONDITION = 9,
    RPC_ABORTED = 10,
    RPC_OUT_OF_RANGE = 11,
    RPC_UNIMPLEMENTED = 12,
    RPC_INTERNAL = 13,
    RPC_UNAVAILABLE = 14,
    RPC_DATA_LOSS = 15,
    RPC_UNAUTHENTICATED = 16,
} rpc_code;

/* tk.v1.Cancellation.Cause */
typedef enum rpc_cause {
    RPC_CAUSE_NONE = 0,
    RPC_CAUSE_CALLER = 1,
    RPC_CAUSE_DEADLINE = 2,
    RPC_CAUSE_SHUTDOWN = 3,
    RPC_CAUSE_LIMIT = 4,
} rpc_cause;

/* tk.v1.MethodInfo.Kind */
typedef enum rpc_kind {
    RPC_READ = 1, /* follows its caller: cancel, deadline and shutdown end it */
    RPC_WRITE = 2, /* once started, runs to completion under its own timeout */
} rpc_kind;

/* The ceiling of a reply's list (the option's tk.v1.ListSpec, which says
 * what each field means): the handler serves it, ListMethods reports it.
 * All zero: the reply has no list that grows with what the method reads. */
typedef struct rpc_list {
    const char *field;       /* the reply's repeated field: "commits" */
    const char *limit_field; /* the request's uint32 that lowers it; NULL:
                                the caller cannot */
    uint32_t default_items;  /* for a limit of 0 (with limit_field) */
    uint32_t max_items;      /* no reply holds more */
    uint32_t max_bytes;      /* of the items' paths and text; 0: none */
} rpc_list;

/* Items a reply may hold for a caller's limit (0: the default): the limit
 * held to the ceiling, never above it. A method without a list (all zero)
 * bounds nothing here: the limit itself, or UINT32_MAX for 0. */
uint32_t rpc_list_items(const rpc_list *list, uint32_t limit);

const char *rpc_code_name(rpc_code code);

const char *rpc_cause_name(rpc_cause cause);

/* ---- the call handle: all a handler knows of its caller ---------------- */

typedef struct rpc_call rpc_call;

/* CLOCK_MONOTONIC in nanoseconds; the clock of every deadline here. */
int64_t rpc_now_ns(void);

/* The bound the handler must honour (monotonic ns). READ: receipt time +
 * the caller's timeout, capped by the method's ceiling. WRITE: start time +
 * the method's ceiling (its own timeout), whatever the caller asked. */
int64_t rpc_call_deadline(const rpc_call *call);
/* When the request arrived (monotonic ns): a READ's deadline minus this is
 * the timeout in force, the caller's capped by the method's ceiling. */
int64_t rpc_call_received(const rpc_call *call);
rpc_kind rpc_call_kind(const rpc_call *call);
/* The ceiling of the call's reply list, from its method's table (what
 * ListMethods reports): all zero for a method without one. */
const rpc_list *rpc_call_list(const rpc_call *call);
uint64_t rpc_call_id(const rpc_call *call);
const char *rpc_call_method(const rpc_call *call);

typedef struct rpc_peer {
    uint32_t conn; /* the connection (NNG pipe) id; Cancel is scoped to it */
    int64_t uid;   /* -1 when the transport cannot tell (tcp) */
    int64_t pid;
    bool read_only; /* it came on a listener that serves READs only */
} rpc_peer;
rpc_peer rpc_call_peer(const rpc_call *call);

/* Why the handler must stop now: CALLER or SHUTDOWN once cancelled (a
 * running WRITE: only SHUTDOWN, once shutdown's grace has run out),
 * DEADLINE once rpc_call_deadline has passed, NONE while it should go on.
 * Cheap; call it between steps. */
rpc_cause rpc_call_cause(const rpc_call *call);

/* A descriptor that becomes readable when the call is cancelled (not when
 * the deadline passes: poll with a timeout for that, or use rpc_call_poll).
 * A READ's: when its caller cancels or shutdown starts (proc's cancel_fd).
 * A running WRITE's: only when shutdown's grace has run out and tkd stops
 * the write rather than leave it (proc's abort_fd). Owned by the call:
 * never read, write or close it. */
int rpc_call_cancel_fd(const rpc_call *call);

/* The process group the call runs now (its leader's pid), 0 when none:
 * what shutdown names when the call outlives its grace. Service modules
 * pass on what proc's on_group tells them. */
void rpc_call_set_process(rpc_call *call, int64_t pgid);

/* poll(2) on fds plus the cancel signal, until the earlier of until_ns and
 * the call's deadline (INT64_MAX: the deadline alone). Returns the number of
 * fds entries with revents (> 0), 0 when the call must stop or until_ns
 * came (see rpc_call_cause), or -errno. EINTR is retried. */
int rpc_call_poll(const rpc_call *call, struct pollfd *fds, size_t nfds,
                  int64_t until_ns);

/* The point of no return of a call that contains a write (a READ whose
 * last step is a COMMIT): from here on it completes whatever its caller
 * does, as a started WRITE does. A Cancel answers WRITE_CONTINUES, a
 * closed connection or shutdown no longer cancel it, and its reply says
 * write_completed. Returns the cause already set when the call was
 * stopped before reaching the point (then the write must not be made:
 * roll back and rpc_call_fail_stopped), else RPC_CAUSE_NONE. The call's
 * deadline still passes; the handler bounds the last step itself. */
rpc_cause rpc_call_commit_point(rpc_call *call);

/* Memory that lives until the reply has been encoded; zeroed. Reply fields
 * (strings, repeated arrays, nested messages) are allocated here. Never
 * returns NULL (aborts on exhaustion, as the encoder could not go on). */
void *rpc_call_alloc(rpc_call *call, size_t size);
char *rpc_call_strdup(rpc_call *call, const char *s);
/* A copy of len bytes in call memory, as a bytes field ({0, NULL} when
 * len is 0). */
ProtobufCBinaryData rpc_call_bytes(rpc_call *call, const void *data,
                                   size_t len);
char *rpc_call_strndup(rpc_call *call, const char *s, size_t n);

/* ---- the outcome, set by the handler ----------------------------------- */

/* A non-OK status: code, a stable reason (UPPER_SNAKE, may be NULL) and a
 * message for humans. The reply message is then not sent. */
void rpc_call_fail(rpc_call *call, rpc_code code, const char *reason,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The status for a call that stops because of rpc_call_cause(): CANCELLED
 * (CALLER), DEADLINE_EXCEEDED (DEADLINE) or UNAVAILABLE (SHUTDOWN), with
 * the cause recorded. A WRITE stopped by shutdown also says
 * write_completed false. Returns that cause. */
rpc_cause rpc_call_fail_stopped(rpc_call *call);
/* Success with fewer results than exist: partial, and the cause (LIMIT)
 * recorded. */
void rpc_call_set_partial(rpc_call *call, rpc_cause cause);
void rpc_call_set_stderr(rpc_call *call, const void *data, size_t len);
void rpc_call_set_cleanup(rpc_call *call, bool process_killed,
                          uint32_t cleanup_ms);
/* A WRITE's handler calls this just before it changes anything, its
 * checks of the request done (tool/ calls it before each program a WRITE
 * runs). A WRITE's reply says write_completed when it is OK, or when its
 * handler returns after this point: a request refused before it says
 * false (nothing was written). */
void rpc_call_write_begins(rpc_call *call);
/* A handler whose write was cut short (its own timeout) says false here;
 * that stands whatever else the call did. */
void rpc_call_set_write_completed(rpc_call *call, bool completed);
void rpc_call_set_retry_after(rpc_call *call, uint32_t ms);
/* What does the call's work (Status.tool): the program run, "git grep",
 * or a library of tkd's, "libgit2". The last one set is the reply's. */
void rpc_call_set_tool(rpc_call *call, const char *tool);
/* Fields of the reply message already encoded (protobuf wire format), sent
 * before the fields of *reply, which then leaves them unset: for a reply
 * too large to build as messages and pack again (Search's matches are
 * encoded from the parser's storage). data must live until the reply is
 * encoded: call memory (rpc_call_alloc). Sent only with an OK status. */
void rpc_call_set_reply_prefix(rpc_call *call, const void *data, size_t len);
/* (Protobuf's varints, for such a prefix: common/common.h.) */

/* ---- file descriptors --------------------------------------------------- */

#define RPC_R_TOO_MANY_OPEN_FILES "TOO_MANY_OPEN_FILES"

/* Whether err (an errno value) says descriptors ran out: EMFILE (tkd's own
 * RLIMIT_NOFILE) or ENFILE (the system's file table). */
bool rpc_fds_exhausted(int err);
/* Ends a call that could not open a descriptor (err: EMFILE or ENFILE):
 * RESOURCE_EXHAUSTED, reason TOO_MANY_OPEN_FILES, a retry_after_ms of
 * about what the calls running now take to end and close theirs, and a
 * warning in the log — at most one line a second, which counts the calls
 * it did not log. The message (printf) says what could not be opened. */
void rpc_call_fail_fds(rpc_call *call, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Raises the soft RLIMIT_NOFILE to the hard limit (tkd, at start, before
 * the server starts); logs a warning when it cannot. Returns the soft
 * limit in force. */
uint64_t rpc_fd_limit_raise(void);

/* ---- the method table --------------------------------------------------- */

/* Fills *reply (already initialised as a message of method->reply) from
 * *request, allocating through rpc_call_alloc, or calls rpc_call_fail. svc
 * is the pointer given to rpc_server_add_service. */
typedef void (*rpc_handler)(void *svc, rpc_call *call,
                            const ProtobufCMessage *request,
                            ProtobufCMessage *reply);

enum {
    /* Runs on the receive path, before the queue, so it works when every
     * worker is busy. Only for handlers that never block (Cancel). */
    RPC_METHOD_INLINE = 1u << 0,
    /* A READ whose last step writes (it has a commit point): a listener
     * that serves READs only refuses it as it refuses a WRITE. */
    RPC_METHOD_WRITES = 1u << 1,
};

/* A tk service's table is made of the rows generated from its .proto
 * (each method's option (tk.v1.method)) into gen/tkd/tk/v1/NAME.methods.h,
 * through RPC_METHOD_ROW: the module that serves it gives the handlers,
 * not the kind, timeouts, flags or list bounds. */
typedef struct rpc_method {
    const char *name; /* "tk.v1.Git/RevParse" */
    const ProtobufCMessageDescriptor *request;
    const ProtobufCMessageDescriptor *reply;
    rpc_kind kind;
    uint32_t default_timeout_ms; /* for timeout_ms 0 */
    uint32_t ceiling_ms;         /* READ: cap on the caller's timeout;
                                    WRITE: its own timeout */
    rpc_handler handler;
    unsigned flags;
    rpc_list list;
} rpc_method;

/* One row of a generated table (gen/tkd/tk/v1/NAME.methods.h: plain data,
 * which includes nothing of tkd) as an rpc_method; the module that serves
 * NAME's services makes its table of them:
 *
 *   static const rpc_method methods[TK_V1_GIT__N_METHODS] = {
 *       TK_V1_GIT__METHODS(RPC_METHOD_ROW, tkgit__)};
 *
 * The row's kind is a tk.v1.MethodSpec.Kind, whose numbers are rpc_kind's
 * (server.c asserts it); inline and writes are 0 or 1. */
#define RPC_METHOD_ROW(name_, request_, reply_, kind_, default_ms_,            \
                       ceiling_ms_, inline_, writes_, field_, limit_field_,    \
                       default_items_, max_items_, max_bytes_, handler_)       \
    {                                                                          \
        .name = (name_), .request = (request_), .reply = (reply_),             \
        .kind = (rpc_kind)(kind_), .default_timeout_ms = (default_ms_),        \
        .ceiling_ms = (ceiling_ms_), .handler = (handler_),                    \
        .flags = ((inline_) ? (unsigned)RPC_METHOD_INLINE : 0u) |              \
                 ((writes_) ? (unsigned)RPC_METHOD_WRITES : 0u),               \
        .list = {                                                              \
            .field = (field_),                                                 \
            .limit_field = (limit_field_),                                     \
            .default_items = (default_items_),                                 \
            .max_items = (max_items_),                                         \
            .max_bytes = (max_bytes_),                                         \
        },                                                                     \
    }

/* ---- the server --------------------------------------------------------- */

typedef struct rpc_server rpc_server;

/* Who may call, by transport: ipc:// sockets are made 0600 and a peer of
 * another uid is refused each call; tls+tcp:// needs mutual TLS (a client
 * certificate signed by tls_ca, else the handshake fails and the refusal
 * is logged); tcp:// authenticates no one and is refused unless
 * allow_plain_tcp. Any other scheme is refused. */
typedef struct rpc_config {
    const char *const *listen; /* URLs serving every method */
    size_t n_listen;
    /* URLs serving READs only: a WRITE, or a READ that writes
     * (RPC_METHOD_WRITES), is PERMISSION_DENIED there before it runs. */
    const char *const *listen_read_only;
    size_t n_listen_read_only;
    const char *tls_cert; /* PEM: tkd's certificate (chain), for tls+tcp */
    const char *tls_key;  /* PEM: its private key */
    const char *tls_ca;   /* PEM: the CA(s) client certificates must chain to */
    bool allow_plain_tcp; /* tcp:// with no authentication (a lab only) */
    unsigned workers;     /* threads running handlers */
    unsigned queue_depth; /* calls waiting for a worker */
    size_t max_request_bytes; /* NNG_OPT_RECVMAXSZ of every listener */
    /* Connections at once on each listener, those still in their
     * handshake included; one more is closed as it comes (logged). 0:
     * RPC_DEFAULT_MAX_CONNECTIONS, or fewer where the listener's part of
     * the descriptors is smaller (limits.c: half of those free after
     * start-up are kept for the calls' work, the rest shared by the
     * listeners, the local ones apart from the network ones); a number
     * given is taken as it is. With max_request_bytes, the bound of the
     * memory that unfinished frames can hold: NNG allocates a frame whole
     * when its length arrives, so at most each listener's limit x
     * max_request_bytes. */
    unsigned max_connections;
    /* How long a connection may take over its handshake (TLS's, then
     * NNG's SP header) before it is closed and counted. */
    uint32_t handshake_timeout_ms;
    int64_t allowed_uid;        /* ipc peers must have this uid; -1: euid */
    uint32_t shutdown_grace_ms; /* how long shutdown waits for WRITEs */
    uint32_t shutdown_stop_ms;  /* then, how long for the WRITEs it stops */
    const char *version;        /* for Ping */
    /* http://HOST:PORT: serves the metrics in Prometheus' text format
     * at /metrics (a small HTTP/1.1 server of rpc's own, metrics_http.c);
     * NULL: no such listener. */
    const char *metrics_listen;
    /* Its connections at once; one more is closed as it comes. */
    unsigned metrics_max_connections;
    /* How long a connection has for its request's headers from its
     * accept, and then for taking the answer: closed after. */
    uint32_t metrics_header_timeout_ms;
    /* The least time between two renderings of the metrics: a scrape that
     * comes sooner waits for the next one, which answers every scrape
     * waiting (a tight scrape loop costs tkd one rendering an interval). */
    uint32_t metrics_min_interval_ms;
} rpc_config;

#define RPC_DEFAULT_WORKERS 16u
#define RPC_DEFAULT_QUEUE_DEPTH 64u
#define RPC_DEFAULT_MAX_REQUEST_BYTES ((size_t)1024 * 1024)
#define RPC_DEFAULT_MAX_CONNECTIONS 128u
/* A few round trips of a TLS 1.2 handshake on a slow link, with room to
 * spare; NNG's own is 10 s (and none at all for TLS in 1.5.2). */
#define RPC_DEFAULT_HANDSHAKE_TIMEOUT_MS 5000u
#define RPC_MAX_HANDSHAKE_TIMEOUT_MS 600000u
/* A Prometheus server scrapes over one connection at a time; 8 leave room
 * for a pair of them, a federation and a person's curl. */
#define RPC_DEFAULT_METRICS_MAX_CONNECTIONS 8u
#define RPC_MAX_METRICS_CONNECTIONS 1024u
/* A scraper sends its request at once: seconds are generous. */
#define RPC_DEFAULT_METRICS_HEADER_TIMEOUT_MS 5000u
#define RPC_MIN_METRICS_HEADER_TIMEOUT_MS 100u
#define RPC_MAX_METRICS_HEADER_TIMEOUT_MS 600000u
/* A rendering cost 1.3 ms of CPU (issue 31): 0.13 % of a core at most. */
#define RPC_DEFAULT_METRICS_MIN_INTERVAL_MS 1000u
#define RPC_MIN_METRICS_MIN_INTERVAL_MS 100u
#define RPC_MAX_METRICS_MIN_INTERVAL_MS 60000u
#define RPC_DEFAULT_SHUTDOWN_GRACE_MS 60000u
/* What a stopped WRITE takes to answer: proc's SIGTERM grace and drain
 * bound (2 s each, PROC_DEFAULT_TERM_GRACE_MS and PROC_DEFAULT_DRAIN_MS),
 * and 1 s for the handler to make its reply. */
#define RPC_DEFAULT_SHUTDOWN_STOP_MS 5000u

void rpc_config_init(rpc_config *cfg);

/* Errors: negative errno-style values, with a message in err. */
int rpc_server_new(rpc_server **out, const rpc_config *cfg, char *err,
                   size_t errlen);
/* Adds a service's methods; the table and svc must outlive the server.
 * Only before rpc_server_start. */
int rpc_server_add_service(rpc_server *srv, void *svc,
                           const rpc_method *methods, size_t n_methods,
                           char *err, size_t errlen);
/* What tk.v1.Control/ListNodes answers: fills reply (a
 * Tk__V1__ListNodesReply, initialised) through rpc_call_alloc, or calls
 * rpc_call_fail. It runs inline, on the receive path: it must not block. */
typedef void (*rpc_nodes_fn)(void *arg, rpc_call *call,
                             ProtobufCMessage *reply);
/* Who answers ListNodes: a fleet's membership (main.c wires it; rpc/
 * knows no database). Without one, the answer has no nodes: this tkd is
 * no member of a fleet. Only before rpc_server_start. */
void rpc_server_set_nodes(rpc_server *srv, rpc_nodes_fn fn, void *arg);
/* What rpc_serve_until_signal calls once the first SIGINT/SIGTERM has
 * come, before rpc_server_shutdown stops accepting (a fleet's node marks
 * itself draining). It runs on the signal's thread, with the server still
 * serving, and must return within about 2 s: shutdown waits for it (a
 * second signal still exits at once). Only before rpc_server_start. */
typedef void (*rpc_stop_fn)(void *arg);
void rpc_server_set_on_stop(rpc_server *srv, rpc_stop_fn fn, void *arg);
/* Binds the listeners and starts serving. */
int rpc_server_start(rpc_server *srv, char *err, size_t errlen);
/* The URL listener i (of listen, then listen_read_only) is bound to, with
 * the port the system chose for a tcp or tls+tcp port 0; NULL past the
 * last. Valid until rpc_server_free. */
const char *rpc_server_bound_url(const rpc_server *srv, size_t i);
/* The connections listener i takes at once (its handshakes included), or
 * 0 past the last. */
unsigned rpc_server_listener_limit(const rpc_server *srv, size_t i);
/* One info line after start: the descriptor limit, how many are in use,
 * and how many are kept for the calls' work (rpc_config.max_connections
 * says how the rest are split); a warning for each listener whose limit
 * passes its part. */
void rpc_fd_log_capacity(const rpc_server *srv);
/* The URL the Prometheus listener serves the metrics at, with the port the
 * system chose for port 0; NULL without one. Valid until rpc_server_free. */
const char *rpc_server_metrics_url(const rpc_server *srv);
/* The connections it takes at once: --metrics-max-connections, or its part
 * of the descriptors if that is smaller (limits.c); 0 without one. */
unsigned rpc_server_metrics_limit(const rpc_server *srv);
/* Stops accepting calls, cancels READ calls (cause SHUTDOWN), lets started
 * WRITE calls finish within shutdown_grace_ms, answers what waited in the
 * queue with UNAVAILABLE. Calls still running when the grace runs out are
 * logged one by one (method, call id, connection, process group); the
 * WRITEs among them are stopped (cause SHUTDOWN: their processes get
 * SIGTERM, then SIGKILL) and their replies, UNAVAILABLE SHUTTING_DOWN with
 * write_completed false, sent within shutdown_stop_ms; what is still
 * running then is logged and left to end with the process. Returns how
 * many calls outlived the grace: 0 is a clean shutdown. Idempotent (a
 * second call returns the first's count); blocks until done. */
unsigned rpc_server_shutdown(rpc_server *srv);
/* The longest from the start of a shutdown with cfg to the end of the
 * process: the grace, the stop bound, the flush of the last replies, the
 * bounded socket close, the flush of the log at exit. A service manager
 * must wait longer than this before it kills tkd (tkd install). */
uint32_t rpc_shutdown_bound_ms(const rpc_config *cfg);
/* Shuts down if needed and frees. NULL is accepted. */
void rpc_server_free(rpc_server *srv);

/* Blocks SIGINT and SIGTERM in the calling thread; call it first in main,
 * before any thread starts, so that every thread inherits the mask. */
int rpc_block_stop_signals(void);
/* Waits for SIGINT/SIGTERM, then calls the stop hook
 * (rpc_server_set_on_stop) and shuts the server down; a second signal
 * during shutdown ends the process at once with status 130. Returns 0
 * after a clean shutdown, the number of calls that outlived the grace
 * (rpc_server_shutdown) after one that was not, -errno when it could not
 * wait for a signal. */
int rpc_serve_until_signal(rpc_server *srv);

/* ---- what the server tells tk.v1.Control ----------------------------------
 * service/control/ serves tk.v1.Control with the server as its svc; these
 * are what its handlers read. All run inline (on the receive path): none
 * blocks but on brief locks. */

/* The methods served, sorted by name once the server has started: the
 * i-th of n. */
size_t rpc_server_n_methods(const rpc_server *srv);
const rpc_method *rpc_server_method(const rpc_server *srv, size_t i);
/* Since rpc_server_new, in milliseconds; the version tkd reports
 * (rpc_config.version). */
int64_t rpc_server_uptime_ms(const rpc_server *srv);
const char *rpc_server_version(const rpc_server *srv);
/* Cancels call id of connection conn (only a caller's own calls: conn is
 * its connection), or leaves a tombstone for a Cancel that came before its
 * call: a tk.v1.CancelReply.Outcome. */
int rpc_server_cancel(rpc_server *srv, uint32_t conn, uint64_t id);
/* Where call id of connection conn is, leaving nothing behind: a
 * tk.v1.CallStateReply.State. */
int rpc_server_call_state(rpc_server *srv, uint32_t conn, uint64_t id);
/* Fills a ListNodes reply (a Tk__V1__ListNodesReply): the fleet's hook
 * (rpc_server_set_nodes), or no nodes. */
void rpc_server_list_nodes(const rpc_server *srv, rpc_call *call,
                           ProtobufCMessage *reply);
/* Fills a Stats reply (a Tk__V1__StatsReply) with every metric, in the
 * call's memory. */
void rpc_server_stats(rpc_server *srv, rpc_call *call, ProtobufCMessage *reply);

/* ---- for tests and fuzzing only ------------------------------------------
 * tkd never calls these. They reach the receive path and the call handle
 * without NNG, so that a test or a fuzzer (tests/fuzz) can feed them any
 * bytes, fast and on one thread. */

/* Runs one request frame through the receive path, as if it had arrived
 * on connection peer->conn from peer: the envelope's decode and its string
 * checks, the peer's uid, the method lookup, the deadline, the call
 * registry (duplicate call ids, Cancel and CallState see it), the
 * payload's decode and its string checks, the handler, and the reply's
 * escaping and encoding. On the calling thread: a method that is not
 * inline runs here too instead of in the pool, so it must not block. The
 * server must not have been started. The Reply frame goes in *reply (free
 * it), *reply_len bytes; NULL when the frame was dropped without an
 * answer (a resent copy of a call still running). 0, -EBUSY (started),
 * -ENOMEM, or -errno of the call's cancel event. */
int rpc__test_serve_frame(rpc_server *srv, const rpc_peer *peer,
                          const void *frame, size_t len, uint8_t **reply,
                          size_t *reply_len);

/* A call handle that no server owns, for code that takes one outside a
 * call (a parser that allocates its results through the call): a READ of
 * the method "tk.test.Detached/Call", never cancelled, without deadline,
 * whose memory (rpc_call_alloc and kin) lives until rpc__test_call_free.
 * Its outcome (rpc_call_fail) is kept and never sent. Not for
 * rpc_call_commit_point. NULL when out of memory. */
rpc_call *rpc__test_call_new(void);
void rpc__test_call_free(rpc_call *call);

#endif /* TK_SERVICE_RPC_H */
