/* SPDX-License-Identifier: MIT */
/* libtkclient's wait: one call on one node, sent on a channel and waited
 * for with a bound, tkd asked about a reply late past the deadline
 * (CallState), and the node of a fleet probed while the call waits.
 *
 * Owns: tk__call_payload (a call's send, its wait, its probes and what ends
 * it), and binding a tk_cancel to the call in flight.
 * May call: node.c (channels), envelope.c, status.c, the catalog, NNG,
 * common/ (the clock).
 * Must never: choose a node (route.c, client.c do), read the fleet's
 * table, resend a call; print or log. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

/* Binds the handle to a call on node n; false (with a status) when it
 * must not be sent. */
static bool cancel_bind(tk_cancel *cancel, tk_client *client, node *n,
                        uint64_t id, tk_status *st)
{
    if (cancel == NULL)
        return true;
    pthread_mutex_lock(&cancel->mu);
    bool ok = false;
    if (cancel->state != CS_IDLE) {
        tk__local_status(st, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                         "the tk_cancel handle is in use by another call");
    } else if (cancel->fired) {
        tk__local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                         "cancelled before it was sent");
    } else {
        cancel->state = CS_SENDING;
        cancel->client = client;
        cancel->node = tk__node_ref(n);
        cancel->call_id = id;
        ok = true;
    }
    pthread_mutex_unlock(&cancel->mu);
    return ok;
}

static void cancel_set(tk_cancel *cancel, cancel_state state)
{
    if (cancel == NULL)
        return;
    node *unbound = NULL;
    pthread_mutex_lock(&cancel->mu);
    cancel->state = state;
    if (state == CS_IDLE) {
        cancel->client = NULL;
        unbound = cancel->node;
        cancel->node = NULL;
    }
    pthread_cond_broadcast(&cancel->cv);
    pthread_mutex_unlock(&cancel->mu);
    tk__node_unref(unbound);
}

/* The status of a call that got no reply: NNG's error rv on receiving. */
static int no_reply(node *n, int rv, tk_status *st, call_end *end)
{
    switch (rv) {
    case NNG_ECONNRESET:
    case NNG_ECONNSHUT:
        end->node_failed = true;
        return tk__local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "the connection to tkd at %s was lost while the call was in "
            "flight; whether it ran is unknown (it is not resent)",
            n->addr);
    case NNG_ECLOSED:
        return tk__local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                                "the client was closed during the call");
    default:
        return tk__local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                                "receiving from %s: %s", n->addr,
                                nng_strerror(rv));
    }
}

/* How long tkd gets to answer a CallState. It is answered inline, ahead of
 * busy workers, so this bounds only a tkd that has stopped answering. */
#define PROBE_TIMEOUT_MS 5000u
/* The longest pause between two inquiries about a late reply. */
#define PROBE_MAX_INTERVAL_MS 2000u
/* How many answers in a row end the wait when they are ANSWERED (the reply
 * was handed to the connection ahead of the answer, so only this client's
 * own threads can still be delivering it) or NOT_FOUND (tkd's receive
 * contexts may take a call and a later inquiry in either order, so one
 * NOT_FOUND can come before the call is registered). */
#define PROBE_SAME_ANSWERS 3

/* Where call id stands at tkd (tk.v1.CallStateReply.State), asked on the
 * same socket and so on the call's connection; -1 when tkd did not answer,
 * -2 when it does not know the method (a tkd older than CallState). */
static int ask_state(tk_client *client, node *n, uint64_t id)
{
    Tk__V1__CallStateRequest req = TK__V1__CALL_STATE_REQUEST__INIT;
    req.call_id = id;
    uint8_t buf[16];
    size_t len = tk__v1__call_state_request__pack(&req, buf);
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__call_state_reply__descriptor,
                        .msg = &rep };
    tk_call_opts opts = { .timeout_ms = PROBE_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    int code = tk__call_payload(client, n, "tk.v1.Control/CallState", buf, len,
                                &sink, &opts, &st, 0, &end);
    int state = code == TK_CODE_UNIMPLEMENTED ? -2 : -1;
    if (code == TK_OK && rep != NULL)
        state = (int)((Tk__V1__CallStateReply *)rep)->state;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    tk_status_clear(&st);
    return state;
}

/* Whether node n answers a Ping on its socket within
 * NODE_PING_TIMEOUT_MS: any reply of tkd's is an answer. */
static bool node_answers(tk_client *client, node *n)
{
    static const uint8_t empty[1];
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__ping_reply__descriptor, .msg = &rep };
    tk_call_opts opts = { .timeout_ms = NODE_PING_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    (void)tk__call_payload(client, n, "tk.v1.Control/Ping", empty, 0, &sink,
                           &opts, &st, 0, &end);
    bool answered = st.from_server;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    tk_status_clear(&st);
    return answered;
}

/* Why the client stopped waiting for a reply that did not come. */
typedef enum gave_up {
    GAVE_UP_SILENT,  /* tkd did not answer the inquiry */
    GAVE_UP_OLD,     /* tkd cannot be asked */
    GAVE_UP_UNKNOWN, /* tkd does not know the call */
    GAVE_UP_LOST,    /* tkd answered it; the reply did not come */
    GAVE_UP_LAST,    /* the client's own last bound */
    GAVE_UP_NODE,    /* the node did not answer its probe (a fleet's) */
} gave_up;

/* How long to wait for a reply, and why the wait ended without one. */
typedef struct waiting {
    uint64_t id;
    int64_t first_ns; /* the first question (or the end, without ask) */
    int64_t last_ns;  /* the client's own last bound */
    bool ask;         /* ask tkd about a late reply */
    bool probe;       /* Ping the node of a call kept waiting */
    bool write;       /* the method is a WRITE (the catalog says) */
    bool started;     /* out: tkd said the WRITE runs: it has started */
    gave_up why;      /* out: when the client stopped waiting */
} waiting;

/* What an answer to CallState (state; same: how many in a row) makes of
 * the wait: true to stop waiting, with w->why. */
static bool judge_state(waiting *w, int state, int same)
{
    switch (state) {
    case TK__V1__CALL_STATE_REPLY__STATE__RUNNING:
        /* tkd starts a WRITE only before its caller's deadline, and then
         * runs it to completion: wait for that answer. */
        w->started = w->started || w->write;
        return false;
    case TK__V1__CALL_STATE_REPLY__STATE__QUEUED:
        return false;
    case TK__V1__CALL_STATE_REPLY__STATE__ANSWERED:
        w->why = GAVE_UP_LOST;
        return same >= PROBE_SAME_ANSWERS;
    case -2:
        w->why = GAVE_UP_OLD;
        return true;
    case -1:
        w->why = GAVE_UP_SILENT;
        return true;
    default: /* NOT_FOUND, or a state this client does not know */
        w->why = GAVE_UP_UNKNOWN;
        return same >= PROBE_SAME_ANSWERS;
    }
}

/* The probe of a fleet's node, due at *next_probe: true when the node
 * answered (and the next is set), false when it did not (w->why). */
static bool probe_node(tk_client *client, node *n, waiting *w,
                       int64_t *next_probe)
{
    if (!node_answers(client, n)) {
        w->why = GAVE_UP_NODE;
        return false;
    }
    *next_probe = tkc_mono_ns() + (int64_t)TK_NODE_PROBE_MS * 1000000;
    return true;
}

/* When to ask again: after *pause (which grows to PROBE_MAX_INTERVAL_MS),
 * and not past last_ns. */
static int64_t next_question(int64_t last_ns, int64_t *pause)
{
    int64_t at = tkc_mono_ns() + *pause;
    if (*pause < (int64_t)PROBE_MAX_INTERVAL_MS * 1000000)
        *pause *= 2;
    return at < last_ns ? at : last_ns;
}

/* Waits for the reply on ch (its receive started) until first_ns. From
 * then on it asks tkd where the call stands and goes on waiting while tkd
 * says it is queued or running: tkd ends every call itself (a READ at its
 * deadline, once its processes are stopped; a WRITE at its own timeout),
 * and its structured answer tells the caller more than one the client
 * makes up. A loaded machine can delay that answer by any amount; only
 * tkd can say it is still coming. In a fleet, a call kept waiting
 * TK_NODE_PROBE_MS Pings its node, and again every TK_NODE_PROBE_MS: a
 * link that went down tells nobody. True when the receive ended; false,
 * with w->why, when the client stopped waiting (the receive still runs). */
static bool wait_reply(tk_client *client, node *n, chan *ch, waiting *w)
{
    const int64_t last_ns = w->last_ns;
    int64_t at = w->first_ns < last_ns ? w->first_ns : last_ns;
    int64_t next_probe =
        w->probe ? tkc_mono_ns() + (int64_t)TK_NODE_PROBE_MS * 1000000
                 : INT64_MAX;
    int64_t pause = (int64_t)TK_DEADLINE_GRACE_MS * 1000000;
    int same = 0, last_state = -1;
    for (;;) {
        if (tk__chan_wait_until(ch, at < next_probe ? at : next_probe))
            return true;
        if (next_probe <= at && tkc_mono_ns() >= next_probe) {
            if (!probe_node(client, n, w, &next_probe))
                return tk__chan_wait_until(ch, 0);
            continue;
        }
        if (!w->ask || at >= last_ns) {
            w->why = GAVE_UP_LAST;
            return false;
        }
        int state = ask_state(client, n, w->id);
        if (tk__chan_wait_until(ch, 0))
            return true; /* it came while we asked */
        same = state == last_state ? same + 1 : 1;
        last_state = state;
        if (judge_state(w, state, same))
            return false;
        at = next_question(last_ns, &pause);
    }
}

/* The status of a WRITE that tkd said had started, when no reply came:
 * never DEADLINE_EXCEEDED, which would say the write failed. */
static int started_status(node *n, uint64_t id, tk_status *st)
{
    return tk__local_status(
        st, TK_CODE_UNKNOWN, TK_CAUSE_NONE,
        "the write (call %llu) had started on tkd at %s, which runs it to "
        "completion whatever its caller's deadline, but its reply did not "
        "reach this client; whether it completed is unknown",
        (unsigned long long)id, n->addr);
}

static int gave_up_status(node *n, const waiting *w, tk_status *st,
                          call_end *end)
{
    static const char *const tail = " (a WRITE may still complete there)";
    const uint64_t id = w->id;
    if (w->why == GAVE_UP_NODE) {
        end->node_failed = true;
        return tk__local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "node %s at %s stopped answering (no answer to "
            "a Ping within %u ms); whether it ran is unknown",
            n->id, n->addr, NODE_PING_TIMEOUT_MS);
    }
    if (w->started)
        return started_status(n, id, st);
    switch (w->why) {
    case GAVE_UP_SILENT:
        return tk__local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and no answer "
            "within %u ms when asked where the call stands: the server did "
            "not answer%s",
            n->addr, PROBE_TIMEOUT_MS, tail);
    case GAVE_UP_OLD:
        return tk__local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace, and this tkd cannot be asked where a call stands "
            "(tk.v1.Control/CallState is unknown to it)%s",
            n->addr, TK_DEADLINE_GRACE_MS, tail);
    case GAVE_UP_UNKNOWN:
        return tk__local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and tkd has no "
            "record of call %llu on this connection%s",
            n->addr, (unsigned long long)id, tail);
    case GAVE_UP_LOST:
        return tk__local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "tkd at %s says it answered call %llu, but its reply did not "
            "arrive; whether it ran is unknown",
            n->addr, (unsigned long long)id);
    case GAVE_UP_LAST:
    default:
        return tk__local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace: the server did not answer%s",
            n->addr, TK_DEADLINE_GRACE_MS, tail);
    }
}

/* Receives the reply on ch: see wait_reply. */
static int await_reply(tk_client *client, node *n, chan *ch, waiting *w,
                       const reply_sink *sink, tk_status *st, bool *replied,
                       call_end *end)
{
    nng_aio *aio = ch->aio;
    tk__chan_arm(ch);
    nng_aio_set_timeout(aio, NNG_DURATION_INFINITE);
    nng_ctx_recv(ch->ctx, aio);
    w->why = GAVE_UP_LAST;
    bool ended = wait_reply(client, n, ch, w);
    if (!ended)
        nng_aio_cancel(aio);
    nng_aio_wait(aio);
    int rv = nng_aio_result(aio);
    *replied = rv == 0;
    if (rv == 0) { /* the reply, even one that came as we gave up */
        nng_msg *msg = nng_aio_get_msg(aio);
        int code = tk__decode_reply(msg, w->id, sink, st);
        nng_msg_free(msg);
        return code;
    }
    if (!ended && rv == NNG_ECANCELED)
        return gave_up_status(n, w, st, end);
    return no_reply(n, rv, st, end);
}

/* One call on node n, its payload already serialized; the reply goes to
 * sink. flags: CALL_ASK, CALL_PROBE. */
int tk__call_payload(tk_client *client, node *n, const char *method,
                     const uint8_t *payload, size_t plen,
                     const reply_sink *sink, const tk_call_opts *opts,
                     tk_status *status, int flags, call_end *end)
{
    static const tk_call_opts no_opts = { 0 };
    if (opts == NULL)
        opts = &no_opts;
    *end = (call_end){ 0 };
    int64_t start = tkc_mono_ns();
    /* In 64 bits, then clamped: timeout_ms may be up to UINT32_MAX, and
     * nng_duration is a signed 32-bit count whose negative values are
     * special (a sum that wrapped, or went past INT32_MAX, would give up
     * at once while the call runs on). */
    uint64_t want = opts->timeout_ms == 0
                        ? (uint64_t)TK_MAX_WAIT_MS
                        : (uint64_t)opts->timeout_ms + TK_DEADLINE_GRACE_MS;
    nng_duration wait_ms =
        want > (uint64_t)INT32_MAX ? INT32_MAX : (nng_duration)want;
    /* The first question at the deadline plus the grace. However long tkd
     * says the call still runs, the client waits TK_MAX_WAIT_MS more at
     * most (tkd ends a READ at its deadline and a WRITE at its ceiling,
     * both well inside it). A call with the method's default deadline,
     * which only tkd knows, waits TK_MAX_WAIT_MS and asks nothing. */
    waiting w = { .first_ns = start + (int64_t)wait_ms * 1000000,
                  .ask = (flags & CALL_ASK) != 0,
                  .probe = (flags & CALL_PROBE) != 0 };
    w.last_ns = opts->timeout_ms == 0
                    ? w.first_ns
                    : w.first_ns + (int64_t)TK_MAX_WAIT_MS * 1000000;
    uint64_t id = atomic_fetch_add(&client->next_id, 1);
    w.id = id;
    /* A WRITE that has started runs to completion under its own timeout
     * (its ceiling), whatever its caller's deadline: the caller's
     * deadline bounds only the wait before it starts, and the client
     * waits for a started one at least that ceiling and tkd's time to
     * stop it (TK_WRITE_STOP_MS). */
    const tk_method_desc *md = tk_catalog_find_method(method);
    w.write = md != NULL && md->kind == TK_METHOD_WRITE;
    if (w.write) {
        int64_t own =
            start + ((int64_t)md->ceiling_ms + TK_WRITE_STOP_MS) * 1000000;
        if (opts->timeout_ms == 0 && own > w.first_ns)
            w.first_ns = own;
        if (own > w.last_ns)
            w.last_ns = own;
    }
    end->unsent = true;
    if (!cancel_bind(opts->cancel, client, n, id, status))
        return status->code;

    int code;
    bool replied = false;
    chan *ch = NULL;
    nng_msg *msg =
        tk__encode_request(id, method, opts->timeout_ms, payload, plen);
    if (msg == NULL || (ch = tk__chan_get(n)) == NULL) {
        if (msg != NULL)
            nng_msg_free(msg);
        code = tk__local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "out of memory");
        goto done;
    }
    /* A send waits for a connection; bound it by the same deadline. In a
     * fleet, by TK_NODE_PROBE_MS at most: a node that has no connection
     * for that long is down, and the call (not sent) may go elsewhere. */
    nng_duration send_ms = wait_ms;
    if (client->fleet && send_ms > (nng_duration)TK_NODE_PROBE_MS)
        send_ms = (nng_duration)TK_NODE_PROBE_MS;
    nng_aio_set_msg(ch->send_aio, msg);
    nng_aio_set_timeout(ch->send_aio, send_ms);
    nng_ctx_send(ch->ctx, ch->send_aio);
    nng_aio_wait(ch->send_aio);
    if (nng_aio_result(ch->send_aio) != 0) {
        int rv = nng_aio_result(ch->send_aio);
        nng_msg_free(nng_aio_get_msg(ch->send_aio));
        end->node_failed = true;
        code = tk__local_status(status, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                                "could not send to tkd at %s: %s (the call was "
                                "not sent)",
                                n->addr, nng_strerror(rv));
        goto done;
    }
    end->unsent = false;
    cancel_set(opts->cancel, CS_SENT);
    code = await_reply(client, n, ch, &w, sink, status, &replied, end);
done:
    cancel_set(opts->cancel, CS_IDLE);
    tk__chan_put(n, ch, replied);
    return code;
}
