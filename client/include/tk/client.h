/* SPDX-License-Identifier: MIT */
/*
 * libtkclient — the C client of tkd.
 *
 * Boundary: owns the client side of the wire protocol (DESIGN.md "Wire
 * protocol"): one NNG REQ socket per tkd, with one dialer and resend
 * disabled (at-most-once), the Request/Reply envelope, per-call deadlines,
 * cancellation through tk.v1.Control/Cancel on the call's own connection,
 * and in a fleet (DESIGN.md "Scaling out") the table of nodes and the
 * routing of each call to one of them.
 * May call: NNG, protobuf-c, json-c (the JSON codec, tk/json.h).
 * Must never: print or log, exit, resend a request, or expose an NNG or
 * protobuf-c internal through this header (messages are ProtobufCMessage,
 * the public protobuf-c type of generated code; a reply's allocator is
 * ProtobufCAllocator, protobuf-c's public type that unpack takes).
 *
 * Every name here is tk_ or TK_; every handle is opaque. Thread-safety: a
 * tk_client may be used by many threads at once; a tk_cancel may be fired
 * from any thread; a tk_arena serves one call at a time.
 */
#ifndef TK_CLIENT_H
#define TK_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include <tk/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What every function of libtkclient that returns an int status returns:
 *
 *   TK_OK (0)       it worked, whatever the function;
 *   TK_CODE_* > 0   a call (tk_call, tk_call_raw, the typed stubs of
 *                   tk/v1/NAME.tk.h) that did not end OK: its gRPC status
 *                   code, status->code, as tk.v1.Status.Code numbers it;
 *   TK_ERR_* < 0    any other function that failed (tk_client_open,
 *                   tk_cancel_new, tk_json_decode, ...): a local error.
 *
 * The ranges do not overlap: `rc != TK_OK` is the test of failure for
 * every function, and one switch can tell a gRPC code from a local error.
 * Why one name for 0: gRPC's C core has two spaces, each with its own
 * success (GRPC_CALL_OK of grpc_call_error for API calls, GRPC_STATUS_OK
 * of grpc_status_code for an RPC's outcome), so that a reader must know
 * which space a function returns to name its success. Here 0 has the one
 * name, and the sign says which space a failure is from. tk_code_name(0)
 * is "OK", as the proto, Python's and TypeScript's Code.OK name it. */
enum { TK_OK = 0 };

/* The canonical gRPC status codes other than OK (tk.v1.Status.Code). */
enum {
    TK_CODE_CANCELLED = 1,
    TK_CODE_UNKNOWN = 2,
    TK_CODE_INVALID_ARGUMENT = 3,
    TK_CODE_DEADLINE_EXCEEDED = 4,
    TK_CODE_NOT_FOUND = 5,
    TK_CODE_ALREADY_EXISTS = 6,
    TK_CODE_PERMISSION_DENIED = 7,
    TK_CODE_RESOURCE_EXHAUSTED = 8,
    TK_CODE_FAILED_PRECONDITION = 9,
    TK_CODE_ABORTED = 10,
    TK_CODE_OUT_OF_RANGE = 11,
    TK_CODE_UNIMPLEMENTED = 12,
    TK_CODE_INTERNAL = 13,
    TK_CODE_UNAVAILABLE = 14,
    TK_CODE_DATA_LOSS = 15,
    TK_CODE_UNAUTHENTICATED = 16,
};

/* Why a call ended early (tk.v1.Cancellation.Cause). */
enum {
    TK_CAUSE_NONE = 0,
    TK_CAUSE_CALLER = 1,
    TK_CAUSE_DEADLINE = 2,
    TK_CAUSE_SHUTDOWN = 3,
    TK_CAUSE_LIMIT = 4,
};

/* What a Cancel achieved (tk.v1.CancelReply.Outcome), plus NOT_SENT: the
 * call had not been sent yet and will not be. */
enum {
    TK_CANCEL_NOT_SENT = 0,
    TK_CANCEL_CANCELLED = 1,
    TK_CANCEL_NOT_FOUND = 2,
    TK_CANCEL_ALREADY_DONE = 3,
    TK_CANCEL_WRITE_CONTINUES = 4,
};

/* Local errors of functions that are not calls (negative returns). */
enum {
    TK_ERR_ARG = -1,     /* a NULL or malformed argument */
    TK_ERR_NOMEM = -2,   /* out of memory */
    TK_ERR_CONNECT = -3, /* could not open or dial the address */
    TK_ERR_STATE = -4,   /* the handle is in use by another call */
};

/* When no reply has come this long past the deadline, the client asks tkd
 * where the call stands (tk.v1.Control/CallState, on the same connection)
 * and goes on waiting, asking again at growing intervals, for as long as
 * tkd says the call is queued or running: tkd ends every call itself, and
 * its structured answer (DEADLINE_EXCEEDED with the cause, whether a
 * process was killed) is the one the caller gets, however late a loaded
 * machine makes it. The client reports a status of its own only when tkd
 * does not answer the question within 5 s, no longer knows the call, says
 * it answered and the reply does not follow, or after TK_MAX_WAIT_MS more. */
#define TK_DEADLINE_GRACE_MS 250u
/* A WRITE that has started runs to completion under its own timeout, its
 * ceiling, whatever its caller's deadline; tkd starts one only before that
 * deadline, and the client learns that it started when tkd says RUNNING.
 * Past the deadline, the client waits for a started WRITE's reply at
 * least its ceiling (the catalog's) and this, what tkd takes to stop a
 * write at its timeout (proc's SIGTERM grace and drain, and the reply):
 * the reply says how it ended, write_completed or not. A started WRITE is
 * never reported DEADLINE_EXCEEDED by the client: when its reply cannot
 * come (tkd stopped answering), the status is UNKNOWN, "whether it
 * completed is unknown". */
#define TK_WRITE_STOP_MS 5000u
/* How long a call with timeout_ms 0 (the method's default: the server's,
 * which the catalog knows only as declared) may wait for its reply at
 * most. */
#define TK_MAX_WAIT_MS (15u * 60u * 1000u)
/* In a fleet, a call that has waited this long with no reply Pings its
 * node on the same connection (answered inline, however busy the node),
 * and again every TK_NODE_PROBE_MS: a node that does not answer within 5 s
 * ends the call UNAVAILABLE, "node X stopped answering; whether it ran is
 * unknown" (a started WRITE too), and is skipped until the client reads
 * the table again. One tkd without a fleet is not probed. */
#define TK_NODE_PROBE_MS 5000u

/* The outcome of a call. tk_call fills it; tk_status_clear frees what it
 * holds. A status the client made itself (no reply came) has
 * from_server false and says so in its message. */
typedef struct tk_status {
    int code;      /* TK_OK or a TK_CODE_* */
    char *message; /* never NULL after a call */
    char *reason;  /* "" when none */
    uint8_t *stderr_excerpt;
    size_t stderr_len;
    bool partial;
    uint32_t retry_after_ms;
    uint64_t elapsed_us; /* server time, 0 when the client made the status */
    int cause;           /* TK_CAUSE_* */
    bool process_killed;
    bool write_completed;
    uint32_t cleanup_ms;
    bool from_server;
    /* What did the call's work as tkd names it ("git grep", "rg",
     * "libgit2"), for people; "" when none, or the client made the status
     * (tk.v1.Status.tool). */
    char *tool;
    /* The node of the fleet that carried the call (tk.v1.NodeInfo.node_id);
     * "" with one tkd, or when the call went to no node. */
    char *node;
} tk_status;

/* The version of the library the program runs with, "0.1.0"; TK_VERSION
 * (tk/version.h) is the one it was compiled against. */
const char *tk_version(void);

void tk_status_clear(tk_status *status);
/* "DEADLINE_EXCEEDED"; "CODE_<n>" for a number outside the table. */
const char *tk_code_name(int code);
/* Parses a code name; returns -1 when unknown. */
int tk_code_from_name(const char *name);
/* "CALLER", ... */
const char *tk_cause_name(int cause);
const char *tk_cancel_outcome_name(int outcome);

typedef struct tk_client tk_client;

/* The address tkd listens on by default, and tkcall dials: TK_ADDR if set,
 * else ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else ipc:///tmp/tk-<uid>/tkd.sock.
 * Returns TK_OK, or TK_ERR_ARG when buf is too small. */
int tk_default_address(char *buf, size_t len);

/* How a client dials tls+tcp:// (mutual TLS: tkd requires a client
 * certificate). Every field may be NULL. */
typedef struct tk_client_opts {
    const char *tls_ca;   /* PEM: the CA that signed tkd's certificate */
    const char *tls_cert; /* PEM: this client's certificate (chain) */
    const char *tls_key;  /* PEM: its private key */
    /* The name the certificate of the tkd at the URL must carry; NULL:
     * the URL's host. (A fleet's other nodes: their ids', see below.) */
    const char *tls_server_name;
} tk_client_opts;

/* Dials url: ipc:///path, tls+tcp://host:port (with opts' TLS files), or
 * tcp://host:port (a tkd started with --insecure-plain-tcp); or the first
 * that connects of a comma-separated list of them. opts NULL: the TLS
 * files named by TK_TLS_CA, TK_TLS_CERT and TK_TLS_KEY. Fails with
 * TK_ERR_CONNECT when nothing listens there or the TLS handshake fails,
 * TK_ERR_ARG when url is not a URL NNG knows or a TLS file cannot be
 * used; once connected, the client reconnects on its own.
 * errbuf (may be NULL) receives a message for humans.
 * Over tcp:// and tls+tcp:// it asks the tkd that connected for the
 * fleet's nodes (tk.v1.Control/ListNodes, 5 s at most). None (a tkd that
 * is no member, or an older one, or no answer): the client calls that tkd
 * alone, as over ipc://. Otherwise it keeps a socket per node, dialed on
 * first use with the same TLS files, reads the table again when it is
 * older than its TTL, and routes each call (DESIGN.md "Scaling out"). A
 * node of the table is dialed only over the transport url came in on
 * (tls+tcp:// after tls+, tcp:// after tcp://; any other is UNAVAILABLE,
 * reason NODE_REFUSED, the call not sent), and over TLS its certificate
 * must name its id, "ID.tk-node.invalid", whatever its address
 * (tls_server_name is for url alone). */
int tk_client_open_opts(tk_client **out, const char *url,
                        const tk_client_opts *opts, char *errbuf,
                        size_t errlen);
/* tk_client_open_opts with opts NULL. */
int tk_client_open(tk_client **out, const char *url, char *errbuf,
                   size_t errlen);
/* No call and no tk_cancel_fire (which calls through the client) may be in
 * flight. NULL is accepted. */
void tk_client_close(tk_client *client);

/* A cancellation handle: create one, pass it in tk_call_opts, fire it from
 * any thread. One call at a time may use a handle. */
typedef struct tk_cancel tk_cancel;

int tk_cancel_new(tk_cancel **out);
void tk_cancel_free(tk_cancel *cancel);
/* Cancels the call that uses this handle. If it has not been sent, it will
 * not be (outcome TK_CANCEL_NOT_SENT, the call returns CANCELLED). If it has,
 * this sends tk.v1.Control/Cancel on the same connection and returns the
 * server's outcome; the call itself returns the server's status (CANCELLED
 * for a READ; a WRITE runs to completion). Returns TK_OK or a negative
 * TK_ERR_*; outcome may be NULL. */
int tk_cancel_fire(tk_cancel *cancel, int *outcome);

/* The id of the call that uses this handle, once it has been sent and
 * until it returns (while it is being sent, this waits for the send to be
 * decided); 0 otherwise. For callers that name the call elsewhere
 * (a log line, or a Cancel from another connection, which tkd never
 * honours). */
uint64_t tk_cancel_call_id(tk_cancel *cancel);

typedef struct tk_call_opts {
    /* Relative deadline sent to the server; 0 = the method's default. */
    uint32_t timeout_ms;
    /* Optional; see tk_cancel_fire. */
    tk_cancel *cancel;
    /* In a fleet: the id of the node to call, whatever the routing would
     * pick (tk.v1.Services needs one where the fleet has several nodes).
     * NULL or "": routed. A node not in the table: NOT_FOUND, reason
     * UNKNOWN_NODE (with one tkd, any name but ""). */
    const char *node;
    /* In a fleet: a READ whose node could not be reached, or whose
     * connection dropped or node stopped answering (a client-made
     * UNAVAILABLE), is tried on the next node that can serve it, within
     * the one deadline: a method the catalog knows as a READ, so neither a
     * WRITE nor a method this client does not know is ever sent twice. */
    bool retry_reads;
    /* NULL: the reply is allocated with malloc, and freed with
     * protobuf_c_message_free_unpacked(reply, NULL). Else tk_call decodes
     * the reply with this allocator (a tk_arena's, or the caller's own),
     * in the calling thread, and the caller releases it through the same
     * allocator: for a tk_arena, by tk_arena_reset or tk_arena_free (never
     * protobuf_c_message_free_unpacked with NULL); for another allocator,
     * protobuf_c_message_free_unpacked(reply, allocator). Only the reply
     * goes there, on every path (one tkd, a fleet, a READ tried on another
     * node): the client's own calls on the call's behalf (ListNodes,
     * CallState, Ping, Cancel) never use it. A call that ends other than
     * OK leaves nothing there (a reply that does not decode is handed
     * back: protobuf-c frees what it took, and a tk_arena goes back to
     * where it stood). tk_call_raw does not use it. */
    ProtobufCAllocator *reply_allocator;
} tk_call_opts;

/* Calls method ("tk.v1.Control/Ping") with request and waits for the reply.
 * In a fleet the call goes to one node: tk.v1.Git and tk.v1.Search to the
 * node whose root is the longest prefix, by whole components, of the
 * request's path field ((tk.v1.path) = PATH_IN_ROOTS; none: NOT_FOUND,
 * reason NO_NODE_FOR_PATH); tk.v1.Orders and tk.v1.Control to a live node
 * that is not draining, round robin (one that fails to connect is skipped:
 * the call was not sent); tk.v1.Services to opts->node (INVALID_ARGUMENT,
 * reason NODE_REQUIRED, when the fleet has several and none is named). A
 * call that cannot go anywhere is UNAVAILABLE, reason NO_LIVE_NODE.
 * Waits for the reply:
 * past the deadline, for as long as tkd says the call still runs (see
 * TK_DEADLINE_GRACE_MS). With timeout_ms 0 it waits TK_MAX_WAIT_MS and
 * asks nothing (the deadline is the method's default, which tkd's
 * configuration may make other than the catalog's);
 * a deadline of more than INT32_MAX ms (about 24.8 days) is waited for
 * INT32_MAX ms, NNG's longest timeout. On TK_OK *reply holds
 * a message of reply_desc, freed with protobuf_c_message_free_unpacked(*reply,
 * NULL), or released through opts->reply_allocator when it is set;
 * otherwise *reply is NULL. opts may be NULL. Returns status->code. */
int tk_call(tk_client *client, const char *method,
            const ProtobufCMessage *request,
            const ProtobufCMessageDescriptor *reply_desc,
            ProtobufCMessage **reply, const tk_call_opts *opts,
            tk_status *status);

/* As tk_call, with the payloads as bytes: the request's is sent as it is
 * (even when it is no valid message of the method), and on TK_OK
 * *reply (malloc'd; free it) holds the reply's, *reply_len bytes long;
 * otherwise *reply is NULL. For gateways that pass payloads through, and for
 * tests of what a server does with bytes no encoder would make. */
int tk_call_raw(tk_client *client, const char *method, const void *payload,
                size_t len, uint8_t **reply, size_t *reply_len,
                const tk_call_opts *opts, tk_status *status);

/* An arena to decode replies into (tk_call_opts.reply_allocator): memory
 * taken in chunks and handed out by bumping a pointer, every address
 * aligned for any type (max_align_t), released all at once. For a large
 * reply this is cheaper than protobuf-c's mallocs and frees, above all
 * when one arena serves call after call: reset, it keeps its chunks, and
 * their pages stay mapped. It holds the reply and protobuf-c's scratch
 * space of the decoding (a few tens of bytes a field of each message).
 * Thread-safety: none; one call at a time may decode into an arena, and
 * nothing else may use it meanwhile (tk_arena_reset included). */
typedef struct tk_arena tk_arena;

/* size_hint: the bytes of its first chunk (0: 64 KiB); it grows as it
 * needs, and an allocation larger than 32 KiB gets a chunk of its own.
 * Returns TK_OK, TK_ERR_ARG or TK_ERR_NOMEM. */
int tk_arena_new(tk_arena **out, size_t size_hint);
/* The allocator to set as tk_call_opts.reply_allocator; its free does
 * nothing. Valid until tk_arena_free. */
ProtobufCAllocator *tk_arena_allocator(tk_arena *a);
/* Releases everything allocated from it (every reply decoded there is
 * gone) and keeps its chunks for the next. NULL is accepted. */
void tk_arena_reset(tk_arena *a);
/* Releases everything, chunks and all. NULL is accepted. */
void tk_arena_free(tk_arena *a);
/* The bytes handed out since the last reset (sizes rounded up to the
 * alignment), and the bytes of its chunks: what it holds. */
size_t tk_arena_used(const tk_arena *a);
size_t tk_arena_capacity(const tk_arena *a);

/* tk.v1.MethodInfo.Kind, same numbers. */
typedef enum tk_method_kind {
    TK_METHOD_READ = 1,  /* follows its caller: cancel and deadline end it */
    TK_METHOD_WRITE = 2, /* once started, runs to completion under its own
                            timeout (ceiling_ms) */
} tk_method_kind;

/* The catalog: every service and message of proto/, compiled in. A
 * method's kind and timeouts are what its .proto declares (option
 * (tk.v1.method)); tk.v1.Control/ListMethods says what a tkd serves with,
 * which its configuration may change. */
typedef struct tk_method_desc {
    const char *name; /* "tk.v1.Control/Ping" */
    const ProtobufCMessageDescriptor *request;
    const ProtobufCMessageDescriptor *reply;
    tk_method_kind kind;
    uint32_t default_timeout_ms; /* what a call with timeout_ms 0 gets */
    uint32_t ceiling_ms; /* READ: no call runs longer; WRITE: its own timeout */
    /* The reply's list and its ceiling (tk.v1.ListSpec, options.proto);
     * list_field NULL when the reply has none. No reply holds more than
     * max_items (a larger limit is served as max_items) nor, when it is not
     * 0, more than max_bytes of the items' paths and text: a reply cut
     * there is partial. */
    const char *list_field;  /* the reply's repeated field: "commits" */
    const char *limit_field; /* the request's limit: "max_count"; NULL: none */
    uint32_t default_items;  /* for a limit of 0 */
    uint32_t max_items;
    uint32_t max_bytes;
} tk_method_desc;

size_t tk_catalog_method_count(void);
const tk_method_desc *tk_catalog_method(size_t i);
const tk_method_desc *tk_catalog_find_method(const char *name);
size_t tk_catalog_message_count(void);
const ProtobufCMessageDescriptor *tk_catalog_message(size_t i);
/* By full name, "tk.v1.PingRequest". */
const ProtobufCMessageDescriptor *tk_catalog_find_message(const char *name);
const ProtobufCEnumDescriptor *tk_catalog_find_enum(const char *name);

/* The comment the .proto files write above (or after) a name, or NULL:
 * a service "tk.v1.Git", a method "tk.v1.Git/Status", a message, a field
 * "tk.v1.GitStatusRequest.repo", an enum or an enum value
 * "tk.v1.MethodInfo.Kind.READ". Lines are separated by '\n'. */
const char *tk_catalog_comment(const char *full_name);

/* What a string field that names a file or directory holds: its option
 * (tk.v1.path) (proto/tk/v1/options.proto), same numbers. */
typedef enum tk_path_kind {
    TK_PATH_NONE = 0,
    TK_PATH_IN_ROOTS = 1, /* absolute, inside one of tkd's --root dirs */
    TK_PATH_ABSOLUTE = 2, /* absolute, anywhere on tkd's machine */
} tk_path_kind;

/* What the .proto files say of a field that protobuf-c does not keep. */
typedef struct tk_field_note {
    const char *message; /* "tk.v1.SearchRequest" */
    const char *field;   /* its proto name, "hidden_files" */
    const char *oneof;   /* the oneof it is a member of, or NULL */
    bool map;            /* map<K, V> (to protobuf-c: repeated KEntry) */
    tk_path_kind path;
} tk_field_note;

/* NULL when the field is plain: in no oneof, no map, no path. */
const tk_field_note *tk_catalog_find_field(const char *message,
                                           const char *field);

#ifdef __cplusplus
}
#endif

#endif /* TK_CLIENT_H */
