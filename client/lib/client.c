/* libtkclient: calls over one NNG REQ socket, at most once each. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>

#include <tk/client.h>

#include "client_int.h"
#include "port_config.h"

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

/* An NNG REQ context with its aio: one call at a time. Kept for reuse,
 * which spares an allocation and the socket lock of nng_ctx_open per call.
 * The aio's callback marks its operation done, so that the caller can wait
 * for a reply with a bound and go on waiting after it: a receive that
 * times out would abandon the request (NNG's req0 resets the context), and
 * with it a reply that is still on its way. */
typedef struct chan {
    struct chan *next;
    nng_ctx ctx;
    nng_aio *aio;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    bool done;         /* mu: the operation started last has ended */
} chan;

static void chan_free(chan *ch);

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

static void set_errbuf(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_errbuf(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

/* Zeroes a secret (a private key's PEM) in a way the compiler keeps:
 * explicit_bzero, macOS's memset_s, or a memset through a volatile
 * pointer (port_config.h says which this system has). */
static void wipe(void *p, size_t len)
{
#if TK_HAVE_EXPLICIT_BZERO
    explicit_bzero(p, len);
#elif TK_HAVE_MEMSET_S
    memset_s(p, len, 0, len);
#else
    static void *(*const volatile set)(void *, int, size_t) = memset;
    set(p, 0, len);
#endif
}

/* A PEM file whole, NUL-terminated (malloc'd); NULL with errbuf set. A
 * certificate chain is a few KiB; 64 KiB is more than any needs. */
static char *read_pem(const char *what, const char *path, char *errbuf,
                      size_t errlen)
{
    enum { PEM_MAX = 64 * 1024 };
    char ebuf[128];
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        set_errbuf(errbuf, errlen, "%s %s: %s", what, path,
                   tk__errtext(errno, ebuf, sizeof ebuf));
        return NULL;
    }
    char *buf = malloc(PEM_MAX + 1);
    size_t len = buf != NULL ? fread(buf, 1, PEM_MAX + 1, f) : 0;
    bool bad = buf == NULL || ferror(f) || len > PEM_MAX;
    (void)fclose(f); /* read only: nothing is lost if it fails */
    if (bad) {
        set_errbuf(errbuf, errlen, "%s %s: unreadable, or over 64 KiB", what,
                   path);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* The host of a URL ("h" of tls+tcp://h:1, "::1" of tls+tcp://[::1]:1). */
static void url_host(char *out, size_t len, const char *url)
{
    const char *h = strstr(url, "://");
    h = h != NULL ? h + 3 : url;
    const char *end = strrchr(h, ':');
    size_t n = end != NULL ? (size_t)(end - h) : strlen(h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    snprintf(out, len, "%.*s", (int)n, h);
}

/* The client side of mutual TLS, on dialer d. TK_OK, or an error with
 * errbuf set. */
static int tls_setup(nng_dialer d, const char *url, const tk_client_opts *o,
                     char *errbuf, size_t errlen)
{
    nng_tls_config *cfg = NULL;
    char *cert = NULL, *key = NULL, host[256];
    int rv = TK_ERR_ARG, e = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT);
    if (e != 0) {
        set_errbuf(errbuf, errlen, "TLS: %s", nng_strerror(e));
        return TK_ERR_NOMEM;
    }
    if (o->tls_ca == NULL) {
        set_errbuf(errbuf, errlen,
                   "%s needs the CA that signed tkd's certificate "
                   "(TK_TLS_CA, tkcall --cacert)",
                   url);
        goto done;
    }
    if ((e = nng_tls_config_ca_file(cfg, o->tls_ca)) != 0) {
        set_errbuf(errbuf, errlen, "the CA %s: %s", o->tls_ca, nng_strerror(e));
        goto done;
    }
    if ((o->tls_cert == NULL) != (o->tls_key == NULL)) {
        set_errbuf(errbuf, errlen,
                   "a client certificate needs its key, and a key its "
                   "certificate (TK_TLS_CERT and TK_TLS_KEY)");
        goto done;
    }
    if (o->tls_cert != NULL) {
        cert = read_pem("the certificate", o->tls_cert, errbuf, errlen);
        key = cert != NULL ? read_pem("the key", o->tls_key, errbuf, errlen)
                           : NULL;
        if (key == NULL)
            goto done;
        if ((e = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0) {
            set_errbuf(errbuf, errlen, "the certificate %s and key %s: %s",
                       o->tls_cert, o->tls_key, nng_strerror(e));
            goto done;
        }
    }
    url_host(host, sizeof host, url);
    e = nng_tls_config_server_name(
        cfg, o->tls_server_name != NULL ? o->tls_server_name : host);
    if (e == 0)
        e = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg);
    if (e != 0) {
        set_errbuf(errbuf, errlen, "TLS: %s", nng_strerror(e));
        goto done;
    }
    rv = TK_OK;
done:
    if (key != NULL)
        wipe(key, strlen(key));
    free(key);
    free(cert);
    nng_tls_config_free(cfg); /* the dialer holds its own reference */
    return rv;
}

/* Dials c->url (a TLS dialer set up first where the URL asks for one). */
static int dial(tk_client *c, const tk_client_opts *o, char *errbuf,
                size_t errlen)
{
    nng_dialer d;
    int rv = nng_dialer_create(&d, c->sock, c->url);
    if (rv != 0) {
        set_errbuf(errbuf, errlen, "cannot connect to %s: %s", c->url,
                   nng_strerror(rv));
        /* A URL NNG cannot parse is the caller's mistake, not a down tkd. */
        return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? TK_ERR_ARG
                                                         : TK_ERR_CONNECT;
    }
    if (strncmp(c->url, "tls+", 4) == 0) {
        int t = tls_setup(d, c->url, o, errbuf, errlen);
        if (t != TK_OK)
            return t;
    }
    rv = nng_dialer_start(d, 0);
    if (rv == 0)
        return TK_OK;
    const char *hint = "";
    if (rv == NNG_ECONNREFUSED || rv == NNG_ENOENT)
        hint = " (is tkd running there?)";
    else if (strncmp(c->url, "tls+", 4) == 0)
        hint = " (the TLS handshake failed: tkd refuses a client without a "
               "certificate its CA signed, and this client refuses a tkd "
               "whose certificate TK_TLS_CA did not sign or that does not "
               "name the host)";
    set_errbuf(errbuf, errlen, "cannot connect to %s: %s%s", c->url,
               nng_strerror(rv), hint);
    return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? TK_ERR_ARG
                                                     : TK_ERR_CONNECT;
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
    int trv = rv == 0 ? dial(c, o, errbuf, errlen) : TK_ERR_NOMEM;
    if (trv != TK_OK) {
        nng_close(c->sock);
        free(c->url);
        free(c);
        return trv;
    }
    /* Call ids need only be unique per connection; a random start keeps
     * the ids of different clients apart in tkd's log. */
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) != 0)
        seed = (uint64_t)getpid() << 32;
    atomic_init(&c->next_id, (seed >> 16) | 1);
    pthread_mutex_init(&c->mu, NULL);
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
    for (chan *ch = client->free_chans; ch != NULL;) {
        chan *next = ch->next;
        chan_free(ch);
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
    free(status->tool);
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
    st->tool = strdup("");
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
    st->tool = strdup(in->tool);
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
    if (st->message == NULL || st->reason == NULL || st->tool == NULL)
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

static void chan_cb(void *arg)
{
    chan *ch = arg;
    pthread_mutex_lock(&ch->mu);
    ch->done = true;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
}

static void chan_free(chan *ch)
{
    if (ch->aio != NULL)
        nng_aio_free(ch->aio); /* waits for a callback in progress */
    nng_ctx_close(ch->ctx);
    pthread_cond_destroy(&ch->cv);
    pthread_mutex_destroy(&ch->mu);
    free(ch);
}

static int64_t mono_ns(void);

/* A condition variable whose timed waits run to a CLOCK_MONOTONIC time
 * (tkd's twin: service/port/port.c): pthread_condattr_setclock; macOS's
 * pthread_cond_timedwait_relative_np; or the realtime clock, re-aimed at
 * every wait, a timeout judged by the monotonic clock. */
static void cond_init_mono(pthread_cond_t *cv)
{
#if TK_HAVE_CONDATTR_SETCLOCK
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
#else
    pthread_cond_init(cv, NULL);
#endif
}

static struct timespec ns_timespec(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000),
                              .tv_nsec = (long)(ns % 1000000000) };
}

/* 0 when woken (perhaps spuriously), ETIMEDOUT when until_ns has come. */
static int cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                           int64_t until_ns)
{
#if TK_HAVE_CONDATTR_SETCLOCK
    struct timespec ts = ns_timespec(until_ns);
    return pthread_cond_timedwait(cv, mu, &ts);
#else
    int64_t left = until_ns - mono_ns();
    if (left <= 0)
        return ETIMEDOUT;
#if TK_HAVE_COND_TIMEDWAIT_RELATIVE_NP
    struct timespec rel = ns_timespec(left);
    int rv = pthread_cond_timedwait_relative_np(cv, mu, &rel);
#else
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct timespec ts =
        ns_timespec((int64_t)now.tv_sec * 1000000000 + now.tv_nsec + left);
    int rv = pthread_cond_timedwait(cv, mu, &ts);
#endif
    return rv == ETIMEDOUT && mono_ns() < until_ns ? 0 : rv;
#endif
}

static chan *chan_new(tk_client *c)
{
    chan *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return NULL;
    cond_init_mono(&ch->cv);
    pthread_mutex_init(&ch->mu, NULL);
    if (nng_ctx_open(&ch->ctx, c->sock) != 0) {
        pthread_cond_destroy(&ch->cv);
        pthread_mutex_destroy(&ch->mu);
        free(ch);
        return NULL;
    }
    if (nng_aio_alloc(&ch->aio, chan_cb, ch) != 0) {
        ch->aio = NULL;
        chan_free(ch);
        return NULL;
    }
    return ch;
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
    return ch != NULL ? ch : chan_new(c);
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
    if (ch != NULL)
        chan_free(ch);
}

/* Before an operation is started on ch->aio. */
static void chan_arm(chan *ch)
{
    pthread_mutex_lock(&ch->mu);
    ch->done = false;
    pthread_mutex_unlock(&ch->mu);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits until the operation on ch->aio ends (true) or CLOCK_MONOTONIC
 * reaches until_ns (false); the operation goes on either way. */
static bool chan_wait_until(chan *ch, int64_t until_ns)
{
    pthread_mutex_lock(&ch->mu);
    while (!ch->done &&
           cond_wait_until(&ch->cv, &ch->mu, until_ns) != ETIMEDOUT)
        ;
    bool done = ch->done;
    pthread_mutex_unlock(&ch->mu);
    return done;
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

/* The status of a call that got no reply: NNG's error rv on receiving. */
static int no_reply(tk_client *client, int rv, tk_status *st)
{
    switch (rv) {
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

static int call_payload(tk_client *client, const char *method,
                        const uint8_t *payload, size_t plen,
                        const reply_sink *sink, const tk_call_opts *opts,
                        tk_status *status, bool ask);

/* Where call id stands at tkd (tk.v1.CallStateReply.State), asked on the
 * same socket and so on the call's connection; -1 when tkd did not answer,
 * -2 when it does not know the method (a tkd older than CallState). */
static int ask_state(tk_client *client, uint64_t id)
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
    int code = call_payload(client, "tk.v1.Control/CallState", buf, len, &sink,
                            &opts, &st, false);
    int state = code == TK_CODE_UNIMPLEMENTED ? -2 : -1;
    if (code == TK_CODE_OK && rep != NULL)
        state = (int)((Tk__V1__CallStateReply *)rep)->state;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    tk_status_clear(&st);
    return state;
}

/* Why the client stopped waiting for a reply that did not come. */
typedef enum gave_up {
    GAVE_UP_SILENT,  /* tkd did not answer the inquiry */
    GAVE_UP_OLD,     /* tkd cannot be asked */
    GAVE_UP_UNKNOWN, /* tkd does not know the call */
    GAVE_UP_LOST,    /* tkd answered it; the reply did not come */
    GAVE_UP_LAST,    /* the client's own last bound */
} gave_up;

/* How long to wait for a reply, and why the wait ended without one. */
typedef struct waiting {
    uint64_t id;
    int64_t first_ns; /* the first question (or the end, without ask) */
    int64_t last_ns;  /* the client's own last bound */
    bool ask;         /* ask tkd about a late reply */
    bool write;       /* the method is a WRITE (the catalog says) */
    bool started;     /* out: tkd said the WRITE runs: it has started */
    gave_up why;      /* out: when the client stopped waiting */
} waiting;

/* Waits for the reply on ch (its receive started) until first_ns. From
 * then on it asks tkd where the call stands and goes on waiting while tkd
 * says it is queued or running: tkd ends every call itself (a READ at its
 * deadline, once its processes are stopped; a WRITE at its own timeout),
 * and its structured answer tells the caller more than one the client
 * makes up. A loaded machine can delay that answer by any amount; only
 * tkd can say it is still coming. True when the receive ended; false,
 * with *why, when the client stopped waiting (the receive still runs). */
static bool wait_reply(tk_client *client, chan *ch, waiting *w)
{
    const int64_t first_ns = w->first_ns, last_ns = w->last_ns;
    const uint64_t id = w->id;
    gave_up *why = &w->why;
    const bool ask = w->ask;
    int64_t at = first_ns < last_ns ? first_ns : last_ns;
    int64_t pause = (int64_t)TK_DEADLINE_GRACE_MS * 1000000;
    int same = 0, last_state = -1;
    for (;;) {
        if (chan_wait_until(ch, at))
            return true;
        if (!ask || at >= last_ns) {
            *why = GAVE_UP_LAST;
            return false;
        }
        int state = ask_state(client, id);
        if (chan_wait_until(ch, 0))
            return true; /* it came while we asked */
        same = state == last_state ? same + 1 : 1;
        last_state = state;
        switch (state) {
        case TK__V1__CALL_STATE_REPLY__STATE__RUNNING:
            /* tkd starts a WRITE only before its caller's deadline, and
             * then runs it to completion: wait for that answer. */
            w->started = w->started || w->write;
            break;
        case TK__V1__CALL_STATE_REPLY__STATE__QUEUED:
            break;
        case TK__V1__CALL_STATE_REPLY__STATE__ANSWERED:
            if (same >= PROBE_SAME_ANSWERS) {
                *why = GAVE_UP_LOST;
                return false;
            }
            break;
        case -2:
            *why = GAVE_UP_OLD;
            return false;
        case -1:
            *why = GAVE_UP_SILENT;
            return false;
        default: /* NOT_FOUND, or a state this client does not know */
            if (same >= PROBE_SAME_ANSWERS) {
                *why = GAVE_UP_UNKNOWN;
                return false;
            }
            break;
        }
        at = mono_ns() + pause;
        if (at > last_ns)
            at = last_ns;
        if (pause < (int64_t)PROBE_MAX_INTERVAL_MS * 1000000)
            pause *= 2;
    }
}

/* The status of a WRITE that tkd said had started, when no reply came:
 * never DEADLINE_EXCEEDED, which would say the write failed. */
static int started_status(tk_client *client, uint64_t id, tk_status *st)
{
    return local_status(
        st, TK_CODE_UNKNOWN, TK_CAUSE_NONE,
        "the write (call %llu) had started on tkd at %s, which runs it to "
        "completion whatever its caller's deadline, but its reply did not "
        "reach this client; whether it completed is unknown",
        (unsigned long long)id, client->url);
}

static int gave_up_status(tk_client *client, const waiting *w, tk_status *st)
{
    static const char *const tail = " (a WRITE may still complete there)";
    const uint64_t id = w->id;
    if (w->started)
        return started_status(client, id, st);
    switch (w->why) {
    case GAVE_UP_SILENT:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and no answer "
            "within %u ms when asked where the call stands: the server did "
            "not answer%s",
            client->url, PROBE_TIMEOUT_MS, tail);
    case GAVE_UP_OLD:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace, and this tkd cannot be asked where a call stands "
            "(tk.v1.Control/CallState is unknown to it)%s",
            client->url, TK_DEADLINE_GRACE_MS, tail);
    case GAVE_UP_UNKNOWN:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and tkd has no "
            "record of call %llu on this connection%s",
            client->url, (unsigned long long)id, tail);
    case GAVE_UP_LOST:
        return local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "tkd at %s says it answered call %llu, but its reply did not "
            "arrive; whether it ran is unknown",
            client->url, (unsigned long long)id);
    case GAVE_UP_LAST:
    default:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace: the server did not answer%s",
            client->url, TK_DEADLINE_GRACE_MS, tail);
    }
}

/* Receives the reply on ch: see wait_reply. */
static int await_reply(tk_client *client, chan *ch, waiting *w,
                       const reply_sink *sink, tk_status *st, bool *replied)
{
    nng_aio *aio = ch->aio;
    chan_arm(ch);
    nng_aio_set_timeout(aio, NNG_DURATION_INFINITE);
    nng_ctx_recv(ch->ctx, aio);
    w->why = GAVE_UP_LAST;
    bool ended = wait_reply(client, ch, w);
    if (!ended)
        nng_aio_cancel(aio);
    nng_aio_wait(aio);
    int rv = nng_aio_result(aio);
    *replied = rv == 0;
    if (rv == 0) { /* the reply, even one that came as we gave up */
        nng_msg *msg = nng_aio_get_msg(aio);
        int code = decode_reply(msg, w->id, sink, st);
        nng_msg_free(msg);
        return code;
    }
    if (!ended && rv == NNG_ECANCELED)
        return gave_up_status(client, w, st);
    return no_reply(client, rv, st);
}

/* One call, its payload already serialized; the reply goes to sink. ask:
 * whether to ask tkd about a reply late past the deadline (not when the
 * call is itself such a question). */
static int call_payload(tk_client *client, const char *method,
                        const uint8_t *payload, size_t plen,
                        const reply_sink *sink, const tk_call_opts *opts,
                        tk_status *status, bool ask)
{
    static const tk_call_opts no_opts = { 0 };
    if (opts == NULL)
        opts = &no_opts;
    int64_t start = mono_ns();
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
    waiting w = { .first_ns = start + (int64_t)wait_ms * 1000000, .ask = ask };
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
    chan_arm(ch);
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
    code = await_reply(client, ch, &w, sink, status, &replied);
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
    int code =
        call_payload(client, method, payload, plen, &sink, opts, status, true);
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
    return call_payload(client, method, payload, len, &sink, opts, status,
                        true);
}
