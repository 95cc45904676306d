/* libtkclient: calls over one NNG REQ socket, at most once each. */
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
#include <nng/supplemental/util/platform.h>

#include <tk/client.h>

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

/* An NNG REQ context with its aio: one call at a time. Kept for reuse,
 * which spares an allocation and the socket lock of nng_ctx_open per call. */
typedef struct chan {
    struct chan *next;
    nng_ctx ctx;
    nng_aio *aio;
} chan;

#define CHAN_POOL_MAX 64

struct tk_client {
    nng_socket sock;
    char *url;
    _Atomic uint64_t next_id;
    pthread_mutex_t mu; /* the free channels */
    chan *free_chans;
    size_t n_free;
};

typedef enum cancel_state { CS_IDLE, CS_SENDING, CS_SENT } cancel_state;

struct tk_cancel {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool fired;
    cancel_state state;
    tk_client *client; /* of the call in flight */
    uint64_t call_id;
};

int tk_client_open(tk_client **out, const char *url, char *errbuf,
                   size_t errlen)
{
    if (out == NULL || url == NULL)
        return TK_ERR_ARG;
    *out = NULL;
    tk_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    c->url = strdup(url);
    int rv = c->url == NULL ? NNG_ENOMEM : nng_req0_open(&c->sock);
    if (rv != 0) {
        free(c->url);
        free(c);
        return TK_ERR_NOMEM;
    }
    /* At most once: REQ would resend an unanswered request after 60 s, and
     * a duplicated WRITE is a second write. The server enforces deadlines;
     * the client never repeats itself. */
    rv = nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
                           NNG_DURATION_INFINITE);
    if (rv == 0)
        rv = nng_dial(c->sock, url, NULL, 0);
    if (rv != 0) {
        if (errbuf != NULL && errlen > 0)
            snprintf(errbuf, errlen, "cannot connect to %s: %s%s", url,
                     nng_strerror(rv),
                     rv == NNG_ECONNREFUSED || rv == NNG_ENOENT
                         ? " (is tkd running there?)"
                         : "");
        nng_close(c->sock);
        free(c->url);
        free(c);
        /* A URL NNG cannot parse is the caller's mistake, not a down tkd. */
        return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? TK_ERR_ARG
                                                         : TK_ERR_CONNECT;
    }
    /* Call ids need only be unique per connection; a random start keeps
     * the ids of different clients apart in tkd's log. */
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        seed = (uint64_t)getpid() << 32;
    atomic_init(&c->next_id, (seed >> 16) | 1);
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return TK_OK;
}

void tk_client_close(tk_client *client)
{
    if (client == NULL)
        return;
    for (chan *ch = client->free_chans; ch != NULL;) {
        chan *next = ch->next;
        nng_aio_free(ch->aio);
        nng_ctx_close(ch->ctx);
        free(ch);
        ch = next;
    }
    pthread_mutex_destroy(&client->mu);
    nng_close(client->sock);
    free(client->url);
    free(client);
}

/* ---- status ---------------------------------------------------------------
 */

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *tk_code_name(int code)
{
    static _Thread_local char other[24];
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, code);
    if (v != NULL)
        return v->name;
    snprintf(other, sizeof other, "CODE_%d", code);
    return other;
}

int tk_code_from_name(const char *name)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(
        &tk__v1__status__code__descriptor, name);
    return v != NULL ? v->value : -1;
}

const char *tk_cause_name(int cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, cause);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *tk_cancel_outcome_name(int outcome)
{
    static const char *const names[] = { "NOT_SENT", "CANCELLED", "NOT_FOUND",
                                         "ALREADY_DONE", "WRITE_CONTINUES" };
    if (outcome >= 0 && (size_t)outcome < sizeof names / sizeof names[0])
        return names[outcome];
    return "UNKNOWN";
}

void tk_status_clear(tk_status *status)
{
    if (status == NULL)
        return;
    free(status->message);
    free(status->reason);
    free(status->stderr_excerpt);
    memset(status, 0, sizeof *status);
}

/* A status the client makes itself: no reply came, or none could be read. */
static int local_status(tk_status *st, int code, int cause, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));
static int local_status(tk_status *st, int code, int cause, const char *fmt,
                        ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tk_status_clear(st);
    st->code = code;
    st->cause = cause;
    st->message = strdup(buf);
    st->reason = strdup("");
    st->from_server = false;
    return code;
}

static int copy_status(tk_status *st, const Tk__V1__Status *in)
{
    tk_status_clear(st);
    st->from_server = true;
    if (in == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply carries no status");
    st->code = (int)in->code;
    st->message = strdup(in->message);
    st->reason = strdup(in->reason);
    if (in->stderr_excerpt.len > 0) {
        st->stderr_excerpt = malloc(in->stderr_excerpt.len);
        if (st->stderr_excerpt != NULL) {
            memcpy(st->stderr_excerpt, in->stderr_excerpt.data,
                   in->stderr_excerpt.len);
            st->stderr_len = in->stderr_excerpt.len;
        }
    }
    st->partial = in->partial;
    st->retry_after_ms = in->retry_after_ms;
    st->elapsed_us = in->elapsed_us;
    if (in->cancellation != NULL) {
        st->cause = (int)in->cancellation->cause;
        st->process_killed = in->cancellation->process_killed;
        st->write_completed = in->cancellation->write_completed;
        st->cleanup_ms = in->cancellation->cleanup_ms;
    }
    if (st->message == NULL || st->reason == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    st->from_server = true;
    return st->code;
}

/* ---- cancellation handles -------------------------------------------------
 */

int tk_cancel_new(tk_cancel **out)
{
    if (out == NULL)
        return TK_ERR_ARG;
    tk_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    *out = c;
    return TK_OK;
}

void tk_cancel_free(tk_cancel *cancel)
{
    if (cancel == NULL)
        return;
    pthread_mutex_destroy(&cancel->mu);
    pthread_cond_destroy(&cancel->cv);
    free(cancel);
}

uint64_t tk_cancel_call_id(tk_cancel *cancel)
{
    if (cancel == NULL)
        return 0;
    pthread_mutex_lock(&cancel->mu);
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    uint64_t id = cancel->state == CS_SENT ? cancel->call_id : 0;
    pthread_mutex_unlock(&cancel->mu);
    return id;
}

/* How long a Cancel may take: it is inline on the server, so this is only
 * the bound for a server that stopped answering. */
#define CANCEL_TIMEOUT_MS 5000u

int tk_cancel_fire(tk_cancel *cancel, int *outcome)
{
    if (cancel == NULL)
        return TK_ERR_ARG;
    pthread_mutex_lock(&cancel->mu);
    cancel->fired = true;
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    bool sent = cancel->state == CS_SENT;
    tk_client *client = cancel->client;
    uint64_t id = cancel->call_id;
    pthread_mutex_unlock(&cancel->mu);
    if (!sent) {
        if (outcome != NULL)
            *outcome = TK_CANCEL_NOT_SENT;
        return TK_OK;
    }
    Tk__V1__CancelRequest req = TK__V1__CANCEL_REQUEST__INIT;
    req.call_id = id;
    ProtobufCMessage *rep = NULL;
    tk_status st = { 0 };
    tk_call_opts opts = { .timeout_ms = CANCEL_TIMEOUT_MS };
    int code =
        tk_call(client, "tk.v1.Control/Cancel", (const ProtobufCMessage *)&req,
                &tk__v1__cancel_reply__descriptor, &rep, &opts, &st);
    int rv = TK_OK;
    if (code == TK_CODE_OK && rep != NULL) {
        if (outcome != NULL)
            *outcome = (int)((Tk__V1__CancelReply *)rep)->outcome;
        protobuf_c_message_free_unpacked(rep, NULL);
    } else {
        rv = TK_ERR_CONNECT;
    }
    tk_status_clear(&st);
    return rv;
}

/* Binds the handle to a call; false (with a status) when it must not be
 * sent. */
static bool cancel_bind(tk_cancel *cancel, tk_client *client, uint64_t id,
                        tk_status *st)
{
    if (cancel == NULL)
        return true;
    pthread_mutex_lock(&cancel->mu);
    bool ok = false;
    if (cancel->state != CS_IDLE) {
        local_status(st, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                     "the tk_cancel handle is in use by another call");
    } else if (cancel->fired) {
        local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                     "cancelled before it was sent");
    } else {
        cancel->state = CS_SENDING;
        cancel->client = client;
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
    pthread_mutex_lock(&cancel->mu);
    cancel->state = state;
    if (state == CS_IDLE)
        cancel->client = NULL;
    pthread_cond_broadcast(&cancel->cv);
    pthread_mutex_unlock(&cancel->mu);
}

static chan *chan_get(tk_client *c)
{
    pthread_mutex_lock(&c->mu);
    chan *ch = c->free_chans;
    if (ch != NULL) {
        c->free_chans = ch->next;
        c->n_free--;
    }
    pthread_mutex_unlock(&c->mu);
    if (ch != NULL)
        return ch;
    ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return NULL;
    if (nng_ctx_open(&ch->ctx, c->sock) != 0) {
        free(ch);
        return NULL;
    }
    if (nng_aio_alloc(&ch->aio, NULL, NULL) != 0) {
        nng_ctx_close(ch->ctx);
        free(ch);
        return NULL;
    }
    return ch;
}

/* A channel whose call ended in any way but a reply is closed, not kept:
 * its context may still hold state of the abandoned request. */
static void chan_put(tk_client *c, chan *ch, bool reusable)
{
    if (ch == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    if (reusable && c->n_free < CHAN_POOL_MAX) {
        ch->next = c->free_chans;
        c->free_chans = ch;
        c->n_free++;
        ch = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (ch != NULL) {
        nng_aio_free(ch->aio);
        nng_ctx_close(ch->ctx);
        free(ch);
    }
}

/* ---- calls ------------------------------------------------------------------
 */

static nng_msg *encode_request(uint64_t id, const char *method,
                               uint32_t timeout_ms, const uint8_t *payload,
                               size_t plen)
{
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = id;
    env.method = (char *)method;
    env.timeout_ms = timeout_ms;
    env.payload.data = (uint8_t *)payload;
    env.payload.len = plen;
    nng_msg *msg = NULL;
    size_t n = tk__v1__request__get_packed_size(&env);
    if (nng_msg_alloc(&msg, n) == 0)
        tk__v1__request__pack(&env, nng_msg_body(msg));
    return msg;
}

/* Where a reply's payload goes: decoded as a message of desc, or copied as
 * bytes when desc is NULL. */
typedef struct reply_sink {
    const ProtobufCMessageDescriptor *desc;
    ProtobufCMessage **msg;
    uint8_t **raw;
    size_t *raw_len;
} reply_sink;

static int sink_payload(const reply_sink *sink, const ProtobufCBinaryData *in,
                        tk_status *st)
{
    if (sink->desc != NULL) {
        *sink->msg =
            protobuf_c_message_unpack(sink->desc, NULL, in->len, in->data);
        if (*sink->msg == NULL)
            return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "the reply payload does not decode as %s",
                                sink->desc->name);
        return TK_CODE_OK;
    }
    *sink->raw = malloc(in->len > 0 ? in->len : 1);
    if (*sink->raw == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    if (in->len > 0)
        memcpy(*sink->raw, in->data, in->len);
    *sink->raw_len = in->len;
    return TK_CODE_OK;
}

/* A varint at *at (bounded by len); advances past it. */
static bool get_varint(const uint8_t *buf, size_t len, size_t *at,
                       uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *at < len; shift += 7) {
        uint8_t b = buf[(*at)++];
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field at *at: advances past it; sets *payload when it is
 * Reply.payload (field 3). false when it is not well formed. */
static bool skip_field(const uint8_t *buf, size_t len, size_t *at,
                       bool *is_payload, ProtobufCBinaryData *payload)
{
    uint64_t key, n;
    *is_payload = false;
    if (!get_varint(buf, len, at, &key))
        return false;
    switch (key & 7) {
    case 0:
        return get_varint(buf, len, at, &n);
    case 1:
    case 5: {
        size_t w = (key & 7) == 1 ? 8 : 4;
        if (len - *at < w)
            return false;
        *at += w;
        return true;
    }
    case 2:
        if (!get_varint(buf, len, at, &n) || n > len - *at)
            return false;
        if (key >> 3 == 3) { /* the last one counts, as for the unpacker */
            *payload = (ProtobufCBinaryData){ (size_t)n, (uint8_t *)buf + *at };
            *is_payload = true;
        }
        *at += (size_t)n;
        return true;
    default:
        return false;
    }
}

/* The frame's fields but Reply.payload, copied to out (NULL: only
 * counted) and their size in *rest_len; *payload is where the payload
 * lies. false when the frame is not well formed at this level. */
static bool scan_fields(const uint8_t *buf, size_t len, uint8_t *out,
                        size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest_len = 0;
    *payload = (ProtobufCBinaryData){ 0, NULL };
    for (size_t at = 0; at < len;) {
        size_t start = at;
        bool is_payload;
        if (!skip_field(buf, len, &at, &is_payload, payload))
            return false;
        if (!is_payload && out != NULL)
            memcpy(out + *rest_len, buf + start, at - start);
        *rest_len += is_payload ? 0 : at - start;
    }
    return true;
}

/* Reply.payload located in the frame rather than copied out of it by the
 * unpacker (a search reply is MBs): *payload points into buf, and *rest
 * (malloc'd) holds the frame's other fields, to be unpacked as the
 * envelope. false when the frame is not well formed at this level: the
 * caller then unpacks it whole, and protobuf-c judges it. */
static bool split_payload(const uint8_t *buf, size_t len, uint8_t **rest,
                          size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest = NULL;
    if (!scan_fields(buf, len, NULL, rest_len, payload))
        return false;
    *rest = malloc(*rest_len > 0 ? *rest_len : 1);
    return *rest != NULL && scan_fields(buf, len, *rest, rest_len, payload);
}

static int decode_reply(nng_msg *msg, uint64_t id, const reply_sink *sink,
                        tk_status *st)
{
    const uint8_t *body = nng_msg_body(msg);
    size_t len = nng_msg_len(msg);
    uint8_t *rest = NULL;
    size_t rest_len = 0;
    ProtobufCBinaryData payload;
    bool split = split_payload(body, len, &rest, &rest_len, &payload);
    Tk__V1__Reply *env = split ? tk__v1__reply__unpack(NULL, rest_len, rest)
                               : tk__v1__reply__unpack(NULL, len, body);
    free(rest);
    if (env == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply (%zu bytes) is not a tk.v1.Reply",
                            nng_msg_len(msg));
    int code;
    if (env->call_id != id && env->call_id != 0) {
        code = local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply is for call %llu, not %llu",
                            (unsigned long long)env->call_id,
                            (unsigned long long)id);
    } else {
        code = copy_status(st, env->status);
        if (code == TK_CODE_OK)
            code = sink_payload(sink, split ? &payload : &env->payload, st);
    }
    tk__v1__reply__free_unpacked(env, NULL);
    return code;
}

/* Waits for the reply on ctx until wait_ms has passed since the start. */
static int await_reply(tk_client *client, chan *ch, uint64_t id, nng_time start,
                       nng_duration wait_ms, const reply_sink *sink,
                       tk_status *st, bool *replied)
{
    nng_ctx ctx = ch->ctx;
    nng_aio *aio = ch->aio;
    nng_time now = nng_clock();
    nng_duration left = (nng_duration)(start + (nng_time)wait_ms > now
                                           ? start + (nng_time)wait_ms - now
                                           : 1);
    nng_aio_set_timeout(aio, left);
    nng_ctx_recv(ctx, aio);
    nng_aio_wait(aio);
    int rv = nng_aio_result(aio);
    *replied = rv == 0;
    switch (rv) {
    case 0: {
        nng_msg *msg = nng_aio_get_msg(aio);
        int code = decode_reply(msg, id, sink, st);
        nng_msg_free(msg);
        return code;
    }
    case NNG_ETIMEDOUT:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of grace:"
            " the server did not answer (a WRITE may still complete there)",
            client->url, TK_DEADLINE_GRACE_MS);
    case NNG_ECONNRESET:
    case NNG_ECONNSHUT:
        return local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "the connection to tkd at %s was lost while the call was in "
            "flight; whether it ran is unknown (it is not resent)",
            client->url);
    case NNG_ECLOSED:
        return local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                            "the client was closed during the call");
    default:
        return local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "receiving from %s: %s", client->url,
                            nng_strerror(rv));
    }
}

/* One call, its payload already serialized; the reply goes to sink. */
static int call_payload(tk_client *client, const char *method,
                        const uint8_t *payload, size_t plen,
                        const reply_sink *sink, const tk_call_opts *opts,
                        tk_status *status)
{
    static const tk_call_opts no_opts = { 0 };
    if (opts == NULL)
        opts = &no_opts;
    nng_time start = nng_clock();
    /* In 64 bits, then clamped: timeout_ms may be up to UINT32_MAX, and
     * nng_duration is a signed 32-bit count whose negative values are
     * special (a sum that wrapped, or went past INT32_MAX, would give up
     * at once while the call runs on). */
    uint64_t want = opts->timeout_ms == 0
                        ? (uint64_t)TK_MAX_WAIT_MS
                        : (uint64_t)opts->timeout_ms + TK_DEADLINE_GRACE_MS;
    nng_duration wait_ms =
        want > (uint64_t)INT32_MAX ? INT32_MAX : (nng_duration)want;
    uint64_t id = atomic_fetch_add(&client->next_id, 1);
    if (!cancel_bind(opts->cancel, client, id, status))
        return status->code;

    int code;
    bool replied = false;
    chan *ch = NULL;
    nng_msg *msg = encode_request(id, method, opts->timeout_ms, payload, plen);
    if (msg == NULL || (ch = chan_get(client)) == NULL) {
        if (msg != NULL)
            nng_msg_free(msg);
        code = local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
        goto done;
    }
    /* A send waits for a connection; bound it by the same deadline. */
    nng_aio_set_msg(ch->aio, msg);
    nng_aio_set_timeout(ch->aio, wait_ms);
    nng_ctx_send(ch->ctx, ch->aio);
    nng_aio_wait(ch->aio);
    if (nng_aio_result(ch->aio) != 0) {
        int rv = nng_aio_result(ch->aio);
        nng_msg_free(nng_aio_get_msg(ch->aio));
        code = local_status(status, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "could not send to tkd at %s: %s (the call was "
                            "not sent)",
                            client->url, nng_strerror(rv));
        goto done;
    }
    cancel_set(opts->cancel, CS_SENT);
    code = await_reply(client, ch, id, start, wait_ms, sink, status, &replied);
done:
    cancel_set(opts->cancel, CS_IDLE);
    chan_put(client, ch, replied);
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
        return local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                            "tk_call: client, method, request, reply_desc "
                            "and reply are required");
    size_t plen = protobuf_c_message_get_packed_size(request);
    uint8_t *payload = malloc(plen > 0 ? plen : 1);
    if (payload == NULL)
        return local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    protobuf_c_message_pack(request, payload);
    reply_sink sink = { .desc = reply_desc, .msg = reply };
    int code = call_payload(client, method, payload, plen, &sink, opts, status);
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
        return local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                            "tk_call_raw: client, method, payload, reply "
                            "and reply_len are required");
    reply_sink sink = { .raw = reply, .raw_len = reply_len };
    return call_payload(client, method, payload, len, &sink, opts, status);
}
