/*
 * The REP socket, its contexts, the registry and the worker pool.
 *
 * Each slot is one NNG REP context with one aio that alternates between
 * receiving a request and sending its reply. The aio callback (an NNG
 * thread) decodes the envelope, checks the peer, finds the method, computes
 * the deadline and registers the call, then queues it for a worker; it
 * never blocks (short mutexes only). There are more slots than workers plus
 * queue places, so that a full queue is answered RESOURCE_EXHAUSTED at once
 * and a Cancel (an inline method) still gets through when every worker is
 * busy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>

#include "rpc_int.h"

#define SPARE_SLOTS 16u
/* After the last reply is handed to NNG at shutdown, how long the socket
 * stays open so the transport can write it: NNG 1.5 has no linger option
 * and no signal for "written to the peer". */
#define SHUTDOWN_FLUSH_MS 100
/* How long closing the socket may take. NNG 1.5.2 can hang in nng_close
 * for good when a frame is arriving on a connection as it closes (the ipc
 * transport leaves a started receive that nothing completes, and the reap
 * thread waits on it: nanomsg/nng#1813, fixed in 1.9.0). A close takes
 * microseconds otherwise; past this bound tkd gives up on it and exits. */
#define SOCKET_CLOSE_BOUND_MS 5000

static void slot_cb(void *arg);
static void *worker_main(void *arg);
static void *reaper_main(void *arg);
static void wake_reaper(rpc_server *srv);

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int64_t ms_to_ns(uint32_t ms)
{
    return (int64_t)ms * 1000000LL;
}

static struct timespec mono_timespec(int64_t ns)
{
    struct timespec ts = { .tv_sec = ns / 1000000000LL,
                           .tv_nsec = ns % 1000000000LL };
    return ts;
}

void rpc_config_init(rpc_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->workers = RPC_DEFAULT_WORKERS;
    cfg->queue_depth = RPC_DEFAULT_QUEUE_DEPTH;
    cfg->max_request_bytes = RPC_DEFAULT_MAX_REQUEST_BYTES;
    cfg->max_connections = RPC_DEFAULT_MAX_CONNECTIONS;
    cfg->allowed_uid = -1;
    cfg->shutdown_grace_ms = RPC_DEFAULT_SHUTDOWN_GRACE_MS;
    cfg->shutdown_stop_ms = RPC_DEFAULT_SHUTDOWN_STOP_MS;
    cfg->version = "unknown";
}

static int check_config(const rpc_config *cfg, char *err, size_t errlen)
{
    if (cfg->n_listen + cfg->n_listen_read_only == 0) {
        set_err(err, errlen, "no listen address");
        return -EINVAL;
    }
    if (cfg->workers == 0 || cfg->workers > 1024) {
        set_err(err, errlen, "workers must be 1..1024, not %u", cfg->workers);
        return -EINVAL;
    }
    if (cfg->queue_depth == 0 || cfg->queue_depth > 65536) {
        set_err(err, errlen, "queue depth must be 1..65536, not %u",
                cfg->queue_depth);
        return -EINVAL;
    }
    if (cfg->max_request_bytes < 64) {
        set_err(err, errlen, "max request bytes must be at least 64");
        return -EINVAL;
    }
    if (cfg->max_connections == 0) {
        set_err(err, errlen, "max connections must be at least 1");
        return -EINVAL;
    }
    return 0;
}

/* strdup, NULL staying NULL; false when out of memory. */
static bool keep(char **out, const char *s)
{
    *out = s != NULL ? strdup(s) : NULL;
    return s == NULL || *out != NULL;
}

/* Copies of the configuration's strings, which the caller may free. */
static int keep_config(rpc_server *srv, const rpc_config *cfg)
{
    size_t n = cfg->n_listen + cfg->n_listen_read_only;
    srv->listen_urls = calloc(n, sizeof *srv->listen_urls);
    if (srv->listen_urls == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *url = i < cfg->n_listen
                              ? cfg->listen[i]
                              : cfg->listen_read_only[i - cfg->n_listen];
        if (!keep(&srv->listen_urls[i], url))
            return -ENOMEM;
    }
    srv->cfg.listen = (const char *const *)srv->listen_urls;
    srv->cfg.listen_read_only =
        (const char *const *)srv->listen_urls + cfg->n_listen;
    if (!keep(&srv->tls_files[0], cfg->tls_cert) ||
        !keep(&srv->tls_files[1], cfg->tls_key) ||
        !keep(&srv->tls_files[2], cfg->tls_ca))
        return -ENOMEM;
    srv->cfg.tls_cert = srv->tls_files[0];
    srv->cfg.tls_key = srv->tls_files[1];
    srv->cfg.tls_ca = srv->tls_files[2];
    snprintf(srv->version, sizeof srv->version, "%s",
             cfg->version ? cfg->version : "unknown");
    srv->cfg.version = srv->version;
    return 0;
}

static void init_sync(rpc_server *srv)
{
    /* Timed waits are on the monotonic clock, like every deadline. */
    pthread_condattr_t mono;
    pthread_condattr_init(&mono);
    pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    pthread_mutex_init(&srv->reg_mu, NULL);
    pthread_cond_init(&srv->reg_cv, &mono);
    pthread_mutex_init(&srv->pool_mu, NULL);
    pthread_cond_init(&srv->pool_cv, NULL);
    pthread_cond_init(&srv->reaper_cv, &mono);
    pthread_mutex_init(&srv->watch_mu, NULL);
    pthread_cond_init(&srv->watch_cv, &mono);
    pthread_condattr_destroy(&mono);
    pthread_mutex_init(&srv->life_mu, NULL);
    pthread_mutex_init(&srv->peers_mu, NULL);
    atomic_init(&srv->stopping, false);
    atomic_init(&srv->avg_service_us, 0);
    atomic_init(&srv->connections, 0);
    atomic_init(&srv->refused_limit, 0);
}

int rpc_server_new(rpc_server **out, const rpc_config *cfg, char *err,
                   size_t errlen)
{
    *out = NULL;
    int rv = check_config(cfg, err, errlen);
    if (rv != 0)
        return rv;
    rpc_server *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return -ENOMEM;
    init_sync(srv);
    srv->cfg = *cfg;
    srv->allowed_uid =
        cfg->allowed_uid >= 0 ? cfg->allowed_uid : (int64_t)geteuid();
    srv->reaper_until = INT64_MIN;
    srv->t_start = rpc_now_ns();
    rv = keep_config(srv, cfg);
    if (rv == 0)
        rv = rpc__check_listeners(srv, err, errlen);
    if (rv == 0)
        rv = rpc_server_add_service(srv, srv, rpc_control__methods,
                                    rpc_control__n_methods, err, errlen);
    if (rv != 0) {
        if (rv == -ENOMEM)
            set_err(err, errlen, "out of memory");
        rpc_server_free(srv);
        return rv;
    }
    *out = srv;
    return 0;
}

static int method_cmp(const void *a, const void *b)
{
    const rpc_registered *x = a, *y = b;
    return strcmp(x->method->name, y->method->name);
}

static const rpc_registered *find_method(const rpc_server *srv,
                                         const char *name)
{
    rpc_method key_method = { .name = name };
    rpc_registered key = { .method = &key_method };
    return bsearch(&key, srv->methods, srv->n_methods, sizeof key, method_cmp);
}

int rpc_server_add_service(rpc_server *srv, void *svc,
                           const rpc_method *methods, size_t n_methods,
                           char *err, size_t errlen)
{
    if (srv->started) {
        set_err(err, errlen, "services are added before the server starts");
        return -EBUSY;
    }
    for (size_t i = 0; i < n_methods; i++) {
        const rpc_method *m = &methods[i];
        if (m->name == NULL || strchr(m->name, '/') == NULL ||
            m->request == NULL || m->reply == NULL || m->handler == NULL ||
            (m->kind != RPC_READ && m->kind != RPC_WRITE) ||
            m->ceiling_ms == 0 || m->default_timeout_ms == 0 ||
            m->default_timeout_ms > m->ceiling_ms) {
            set_err(err, errlen, "method %s is malformed",
                    m->name ? m->name : "(null)");
            return -EINVAL;
        }
        for (size_t j = 0; j < srv->n_methods; j++) {
            if (strcmp(srv->methods[j].method->name, m->name) == 0) {
                set_err(err, errlen, "method %s registered twice", m->name);
                return -EEXIST;
            }
        }
        if (srv->n_methods == srv->cap_methods) {
            size_t cap = srv->cap_methods ? srv->cap_methods * 2 : 16;
            rpc_registered *nm = realloc(srv->methods, cap * sizeof *nm);
            if (nm == NULL)
                return -ENOMEM;
            srv->methods = nm;
            srv->cap_methods = cap;
        }
        srv->methods[srv->n_methods].method = m;
        srv->methods[srv->n_methods].svc = svc;
        srv->n_methods++;
    }
    qsort(srv->methods, srv->n_methods, sizeof *srv->methods, method_cmp);
    return 0;
}

const rpc_registered *rpc_server__methods(const rpc_server *srv, size_t *n)
{
    *n = srv->n_methods;
    return srv->methods;
}

int64_t rpc_server__uptime_ms(const rpc_server *srv)
{
    return (rpc_now_ns() - srv->t_start) / 1000000;
}

const char *rpc_server__version(const rpc_server *srv)
{
    return srv->version;
}

static void arm_recv(rpc_slot *s)
{
    if (s->detached)
        return; /* rpc__test_serve_frame's: no context to receive on */
    s->receiving = true;
    nng_ctx_recv(s->ctx, s->aio);
}

/* The slot's call is over: idle, and receiving again unless tkd stops.
 * reg_mu held. */
static void slot_idle(rpc_slot *s)
{
    s->phase = PHASE_IDLE;
    pthread_cond_broadcast(&s->srv->reg_cv);
    if (!atomic_load(&s->srv->stopping))
        arm_recv(s);
}

static int start_slots(rpc_server *srv, char *err, size_t errlen)
{
    srv->n_slots =
        (size_t)srv->cfg.workers + srv->cfg.queue_depth + SPARE_SLOTS;
    srv->slots = calloc(srv->n_slots, sizeof *srv->slots);
    if (srv->slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        s->srv = srv;
        s->call.slot = s;
        s->call.cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->call.cancel_fd < 0) {
            int e = errno;
            char ebuf[128];
            set_err(err, errlen, "eventfd: %s",
                    strerror_r(e, ebuf, sizeof ebuf));
            return -e;
        }
        atomic_init(&s->call.cause, RPC_CAUSE_NONE);
        atomic_init(&s->call.deadline, INT64_MAX);
        atomic_init(&s->call.pgid, 0);
        int rv = nng_ctx_open(&s->ctx, srv->sock);
        if (rv == 0)
            rv = nng_aio_alloc(&s->aio, slot_cb, s);
        if (rv != 0) {
            set_err(err, errlen, "nng context: %s", nng_strerror(rv));
            return -ENOMEM;
        }
    }
    return 0;
}

int rpc_server_start(rpc_server *srv, char *err, size_t errlen)
{
    pthread_mutex_lock(&srv->life_mu);
    int rv = 0;
    if (srv->started) {
        rv = -EBUSY;
        goto done;
    }
    srv->started = true;
    if ((rv = nng_rep0_open(&srv->sock)) != 0) {
        set_err(err, errlen, "nng_rep0_open: %s", nng_strerror(rv));
        rv = -ENOMEM;
        goto done;
    }
    srv->sock_open = true;
    nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_PRE, rpc__pipe_event, srv);
    nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_POST, rpc__pipe_event, srv);
    nng_pipe_notify(srv->sock, NNG_PIPE_EV_REM_POST, rpc__pipe_event, srv);
    srv->q_cap = srv->cfg.queue_depth;
    srv->queue = calloc(srv->q_cap, sizeof(rpc_slot *));
    srv->threads = calloc(srv->cfg.workers, sizeof *srv->threads);
    if (srv->queue == NULL || srv->threads == NULL) {
        rv = -ENOMEM;
        goto done;
    }
    if ((rv = start_slots(srv, err, errlen)) != 0)
        goto done;
    for (size_t i = 0; i < srv->cfg.workers; i++) {
        if (pthread_create(&srv->threads[i], NULL, worker_main, srv) != 0) {
            set_err(err, errlen, "cannot start worker threads");
            rv = -EAGAIN;
            goto done;
        }
        srv->n_threads++;
    }
    if (pthread_create(&srv->reaper, NULL, reaper_main, srv) != 0) {
        set_err(err, errlen, "cannot start the queue reaper");
        rv = -EAGAIN;
        goto done;
    }
    srv->reaper_running = true;
    if ((rv = rpc__start_listeners(srv, err, errlen)) != 0)
        goto done;
    pthread_mutex_lock(&srv->reg_mu);
    for (size_t i = 0; i < srv->n_slots; i++)
        arm_recv(&srv->slots[i]);
    pthread_mutex_unlock(&srv->reg_mu);
done:
    pthread_mutex_unlock(&srv->life_mu);
    return rv;
}

/* ---- the registry -----------------------------------------------------------
 */

static bool recently_done(const rpc_server *srv, uint32_t conn, uint64_t id)
{
    for (size_t i = 0; i < RPC_RECENT; i++)
        if (srv->recent[i].id == id && srv->recent[i].conn == conn)
            return true;
    return false;
}

/* Where a call of a connection stands in the registry. */
typedef enum call_where {
    WHERE_NONE,    /* unknown: never arrived, or forgotten */
    WHERE_LIVE,    /* queued or running (*live is its slot) */
    WHERE_SENDING, /* its reply is being handed to NNG */
    WHERE_DONE,    /* its reply was handed to NNG ahead of any later one */
} call_where;

/* reg_mu held; id != 0. */
static call_where locate(rpc_server *srv, uint32_t conn, uint64_t id,
                         rpc_slot **live)
{
    *live = NULL;
    call_where where = WHERE_NONE;
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        if ((s->phase == PHASE_QUEUED || s->phase == PHASE_RUNNING) &&
            s->call.id == id && s->call.peer.conn == conn) {
            *live = s;
            return WHERE_LIVE;
        }
        if (s->sending.id == id && s->sending.conn == conn)
            where = WHERE_SENDING;
    }
    if (where == WHERE_NONE && recently_done(srv, conn, id))
        where = WHERE_DONE;
    return where;
}

/* A running WRITE, or a call past its commit point, completes whatever its
 * caller does; everything else may still be stopped. reg_mu held. */
static bool cancellable(const rpc_slot *s)
{
    return s->phase == PHASE_QUEUED ||
           (s->phase == PHASE_RUNNING &&
            s->call.reg->method->kind == RPC_READ && !s->call.committing);
}

rpc_cause rpc_call_commit_point(rpc_call *call)
{
    rpc_server *srv = call->slot->srv;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_cause cause = (rpc_cause)atomic_load(&call->cause);
    if (cause == RPC_CAUSE_NONE)
        call->committing = true;
    pthread_mutex_unlock(&srv->reg_mu);
    return cause;
}

/* A Cancel can overtake its call: NNG hands the frames of one connection to
 * different contexts, whose callbacks run on different threads. The cancel
 * is remembered for a while and applied when the call registers. */
static void add_tombstone(rpc_server *srv, uint32_t conn, uint64_t id)
{
    rpc_callref *t = &srv->tombstones[srv->tomb_next];
    srv->tomb_next = (srv->tomb_next + 1) % RPC_TOMBSTONES;
    t->conn = conn;
    t->id = id;
    t->expires = rpc_now_ns() + RPC_TOMBSTONE_TTL_NS;
}

static bool take_tombstone(rpc_server *srv, uint32_t conn, uint64_t id)
{
    int64_t now = rpc_now_ns();
    for (size_t i = 0; i < RPC_TOMBSTONES; i++) {
        rpc_callref *t = &srv->tombstones[i];
        if (t->id == id && t->conn == conn && t->expires > now) {
            memset(t, 0, sizeof *t);
            return true;
        }
    }
    return false;
}

Tk__V1__CancelReply__Outcome rpc_server__cancel(rpc_server *srv, uint32_t conn,
                                                uint64_t id)
{
    Tk__V1__CancelReply__Outcome out = TK__V1__CANCEL_REPLY__OUTCOME__NOT_FOUND;
    if (id == 0)
        return out;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *s;
    switch (locate(srv, conn, id, &s)) {
    case WHERE_NONE:
        add_tombstone(srv, conn, id);
        break;
    case WHERE_SENDING:
    case WHERE_DONE:
        out = TK__V1__CANCEL_REPLY__OUTCOME__ALREADY_DONE;
        break;
    case WHERE_LIVE:
        if (!cancellable(s)) {
            out = TK__V1__CANCEL_REPLY__OUTCOME__WRITE_CONTINUES;
        } else {
            /* A READ, or a WRITE still in the queue: nothing written yet. */
            rpc_call__cancel(&s->call, RPC_CAUSE_CALLER);
            out = TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED;
        }
        break;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    if (out == TK__V1__CANCEL_REPLY__OUTCOME__CANCELLED)
        wake_reaper(srv); /* it may have been waiting in the queue */
    return out;
}

/* Unlike Cancel, leaves no tombstone: asking is not acting. */
Tk__V1__CallStateReply__State rpc_server__call_state(rpc_server *srv,
                                                     uint32_t conn, uint64_t id)
{
    Tk__V1__CallStateReply__State out =
        TK__V1__CALL_STATE_REPLY__STATE__NOT_FOUND;
    if (id == 0)
        return out;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *s;
    switch (locate(srv, conn, id, &s)) {
    case WHERE_NONE:
        break;
    case WHERE_LIVE:
        out = s->phase == PHASE_QUEUED
                  ? TK__V1__CALL_STATE_REPLY__STATE__QUEUED
                  : TK__V1__CALL_STATE_REPLY__STATE__RUNNING;
        break;
    case WHERE_SENDING:
        out = TK__V1__CALL_STATE_REPLY__STATE__RUNNING;
        break;
    case WHERE_DONE:
        out = TK__V1__CALL_STATE_REPLY__STATE__ANSWERED;
        break;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    return out;
}

/* A closed connection's READ calls have nobody to answer to: they are
 * cancelled, and its early cancels forgotten. */
void rpc__connection_closed(rpc_server *srv, uint32_t conn)
{
    pthread_mutex_lock(&srv->reg_mu);
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        /* phase first: peer is written before the call registers */
        if (cancellable(s) && s->call.peer.conn == conn)
            rpc_call__cancel(&s->call, RPC_CAUSE_CALLER);
    }
    for (size_t i = 0; i < RPC_TOMBSTONES; i++)
        if (srv->tombstones[i].conn == conn)
            memset(&srv->tombstones[i], 0, sizeof srv->tombstones[i]);
    pthread_mutex_unlock(&srv->reg_mu);
    wake_reaper(srv);
}

/* ---- replies --------------------------------------------------------------
 */

static int64_t elapsed_us(const rpc_call *call)
{
    return (rpc_now_ns() - call->t_recv) / 1000;
}

static uint32_t retry_after(rpc_server *srv)
{
    /* Roughly the time for the queue ahead to drain; at least 10 ms. */
    int64_t avg = atomic_load(&srv->avg_service_us);
    int64_t ms =
        avg * (int64_t)srv->cfg.queue_depth / (int64_t)srv->cfg.workers / 1000;
    if (ms < 10)
        ms = 10;
    if (ms > 10000)
        ms = 10000;
    return (uint32_t)ms;
}

/* Reply.payload's key: field 3, length-delimited. */
#define REPLY_PAYLOAD_TAG ((uint8_t)(3 << 3 | 2))

/* Builds the Reply frame of the call's outcome; payload may be NULL. */
static nng_msg *encode_reply(rpc_call *call, const ProtobufCMessage *payload)
{
    Tk__V1__Reply rep = TK__V1__REPLY__INIT;
    Tk__V1__Status st = TK__V1__STATUS__INIT;
    Tk__V1__Cancellation cn = TK__V1__CANCELLATION__INIT;
    rep.call_id = call->id;
    rep.status = &st;
    st.code = (Tk__V1__Status__Code)call->code;
    if (call->message != NULL)
        st.message = call->message;
    if (call->reason != NULL)
        st.reason = (char *)call->reason;
    st.stderr_excerpt.data = (uint8_t *)call->stderr_data;
    st.stderr_excerpt.len = call->stderr_len;
    st.partial = call->partial;
    st.retry_after_ms = call->retry_after_ms;
    st.elapsed_us = (uint64_t)elapsed_us(call);
    cn.cause = (Tk__V1__Cancellation__Cause)call->end_cause;
    cn.process_killed = call->process_killed;
    cn.cleanup_ms = call->cleanup_ms;
    if (call->reg != NULL && call->ran &&
        (call->reg->method->kind == RPC_WRITE || call->committing))
        cn.write_completed =
            call->write_completed_set ? call->write_completed : true;
    if (cn.cause != TK__V1__CANCELLATION__CAUSE__NONE || cn.process_killed ||
        cn.write_completed || cn.cleanup_ms != 0)
        st.cancellation = &cn;
    /* The envelope without its payload, then the payload (field 3, the
     * last) written into the message after it: the bytes protobuf-c would
     * write for the whole, without packing the payload into memory of its
     * own first and copying it (a search reply can be MBs). The payload is
     * the handler's encoded prefix, if any, then the packed reply. */
    size_t plen = 0, prefix = 0;
    if (payload != NULL && call->code == RPC_OK) {
        prefix = call->reply_prefix_len;
        plen = prefix + protobuf_c_message_get_packed_size(payload);
    }
    size_t head = tk__v1__reply__get_packed_size(&rep);
    size_t size = head + (plen > 0 ? 1 + rpc_varint_len(plen) + plen : 0);
    nng_msg *msg = NULL;
    if (nng_msg_alloc(&msg, size) != 0)
        return NULL;
    uint8_t *p = nng_msg_body(msg);
    p += tk__v1__reply__pack(&rep, p);
    if (plen > 0) {
        *p++ = REPLY_PAYLOAD_TAG;
        p = rpc_put_varint(p, plen);
        if (prefix > 0)
            memcpy(p, call->reply_prefix, prefix);
        protobuf_c_message_pack(payload, p + prefix);
    }
    return msg;
}

/* Ends the call: remembers it as done, logs it and sends its reply. */
static void finish(rpc_slot *s, const ProtobufCMessage *payload)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    if (call->message == NULL && call->code != RPC_OK)
        call->message = rpc_call_strdup(call, rpc_code_name(call->code));
    if (call->message != NULL)
        call->message = (char *)rpc__text_escaped(call, call->message);
    if (payload != NULL && call->code == RPC_OK)
        rpc__escape_strings(call, (ProtobufCMessage *)payload);
    nng_msg *msg = encode_reply(call, payload);
    rpc_log__call(call, elapsed_us(call));
    pthread_mutex_lock(&srv->reg_mu);
    if (msg != NULL && call->id != 0 &&
        (s->phase == PHASE_QUEUED || s->phase == PHASE_RUNNING)) {
        rpc_callref *r = &srv->recent[srv->recent_next];
        srv->recent_next = (srv->recent_next + 1) % RPC_RECENT;
        r->conn = call->peer.conn;
        r->id = call->id;
        /* Answered only once the send completes (slot_cb): until then it
         * is SENDING, which locate() reports ahead of recent. */
        s->sending = *r;
    }
    s->phase = PHASE_SENDING;
    rpc_call__reset(call);
    if (msg == NULL || s->detached) {
        /* Out of memory for the reply: the call is forgotten, and a
         * client that asks is told NOT_FOUND. Or a detached slot's reply,
         * handed back to rpc__test_serve_frame: sent at once, as far as
         * the registry can tell. */
        s->reply = msg;
        s->sending = (rpc_callref){ 0 };
        slot_idle(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    nng_aio_set_msg(s->aio, msg);
    nng_ctx_send(s->ctx, s->aio);
}

/* A status-only answer to a frame that never became a running call. */
static void answer(rpc_slot *s, rpc_code code, const char *reason,
                   rpc_cause cause, uint32_t retry_ms, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void answer(rpc_slot *s, rpc_code code, const char *reason,
                   rpc_cause cause, uint32_t retry_ms, const char *fmt, ...)
{
    rpc_call *call = &s->call;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    call->code = code;
    call->reason = reason;
    call->message = rpc_call_strdup(call, buf);
    call->end_cause = cause;
    call->retry_after_ms = retry_ms;
    finish(s, NULL);
}

/* A string field the handler must not see: cut by a NUL, or not UTF-8. */
static void fail_bad_string(rpc_call *call, const char *message,
                            const char *field, rpc_bad_string why)
{
    if (why == RPC_STRING_NUL)
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NUL_IN_STRING",
                      "%s.%s holds a NUL byte, which no string field may",
                      message, field);
    else
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "STRING_NOT_UTF8",
                      "%s.%s is not UTF-8, which every string field must be "
                      "(bytes fields take any bytes)",
                      message, field);
}

/* ---- receiving --------------------------------------------------------------
 */

static void set_deadlines(rpc_call *call)
{
    const rpc_method *m = call->reg->method;
    uint32_t t = call->request->timeout_ms;
    if (t == 0)
        t = m->default_timeout_ms;
    if (t > m->ceiling_ms)
        t = m->ceiling_ms;
    call->caller_deadline = call->t_recv + ms_to_ns(t);
    atomic_store(&call->deadline, call->caller_deadline);
}

/* Registers the call; false when it is a duplicate to be dropped. */
static bool register_call(rpc_slot *s, bool *dup_done)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    bool ok = true;
    pthread_mutex_lock(&srv->reg_mu);
    rpc_slot *live;
    call_where where = call->id != 0
                           ? locate(srv, call->peer.conn, call->id, &live)
                           : WHERE_NONE;
    if (where == WHERE_LIVE || where == WHERE_SENDING) {
        /* A REQ socket that did not disable resend sent it again: the
         * original is still running and will answer (REQ matches the
         * reply by its own request id, which a resend keeps). An answer
         * to the copy now could reach the client first. */
        ok = false;
    } else if (where == WHERE_DONE) {
        /* The same, arriving after the original answered: its reply went
         * first on this connection, so REQ discards this one's. */
        *dup_done = true;
    } else {
        s->phase = PHASE_QUEUED;
        if (call->id != 0 && take_tombstone(srv, call->peer.conn, call->id))
            rpc_call__cancel(call, RPC_CAUSE_CALLER);
    }
    pthread_mutex_unlock(&srv->reg_mu);
    return ok;
}

static void run_call(rpc_slot *s);

static bool enqueue(rpc_server *srv, rpc_slot *s)
{
    pthread_mutex_lock(&srv->pool_mu);
    bool ok = srv->q_len < srv->q_cap && !srv->pool_stop;
    if (ok) {
        srv->queue[(srv->q_head + srv->q_len) % srv->q_cap] = s;
        srv->q_len++;
        pthread_cond_signal(&srv->pool_cv);
        /* Only a new earliest deadline needs the reaper before it wakes
         * on its own: waking it for every call is a third thread to
         * schedule per call. And a call cancelled before it got here (a
         * Cancel that overtook it, taken from a tombstone; or one whose
         * wake_reaper ran before it was in the queue): else it waits
         * behind busy workers until its deadline. */
        if (s->call.caller_deadline < srv->reaper_until ||
            atomic_load(&s->call.cause) != RPC_CAUSE_NONE)
            pthread_cond_signal(&srv->reaper_cv);
    }
    pthread_mutex_unlock(&srv->pool_mu);
    return ok;
}

static void unregister(rpc_slot *s)
{
    pthread_mutex_lock(&s->srv->reg_mu);
    s->phase = PHASE_IDLE;
    pthread_mutex_unlock(&s->srv->reg_mu);
}

/* Decodes the envelope of a frame and checks its strings; false when the
 * frame has been answered (it is no call). */
static bool decode_envelope(rpc_slot *s, const uint8_t *frame, size_t len)
{
    rpc_call *call = &s->call;
    call->request = tk__v1__request__unpack(NULL, len, frame);
    if (call->request == NULL) {
        answer(s, RPC_INVALID_ARGUMENT, "BAD_FRAME", RPC_CAUSE_NONE, 0,
               "the frame (%zu bytes) is not a tk.v1.Request", len);
        return false;
    }
    call->id = call->request->call_id;
    rpc_bad_string why = RPC_STRING_OK;
    const char *bad =
        rpc__bad_string(&tk__v1__request__descriptor, frame, len, true, &why);
    if (bad != NULL) {
        /* "tk.v1.Control/Ping\0x" would run Ping. */
        fail_bad_string(call, "tk.v1.Request", bad, why);
        finish(s, NULL);
        return false;
    }
    return true;
}

/* A decoded request, from its peer's check to a call that runs (inline),
 * waits in the queue, or is answered at once. */
static void dispatch(rpc_slot *s)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    if (call->peer.uid >= 0 && call->peer.uid != srv->allowed_uid) {
        answer(s, RPC_PERMISSION_DENIED, "PEER_UID", RPC_CAUSE_NONE, 0,
               "uid %lld may not call this tkd (it serves uid %lld)",
               (long long)call->peer.uid, (long long)srv->allowed_uid);
        return;
    }
    if (atomic_load(&srv->stopping)) {
        answer(s, RPC_UNAVAILABLE, "SHUTTING_DOWN", RPC_CAUSE_SHUTDOWN, 1000,
               "tkd is shutting down");
        return;
    }
    call->reg = find_method(srv, call->request->method);
    if (call->reg == NULL) {
        answer(s, RPC_UNIMPLEMENTED, "UNKNOWN_METHOD", RPC_CAUSE_NONE, 0,
               "unknown method \"%.*s\" (tk.v1.Control/ListMethods lists "
               "them)",
               rpc_utf8_prefix(call->request->method, 200),
               call->request->method);
        return;
    }
    const rpc_method *m = call->reg->method;
    if (call->peer.read_only &&
        (m->kind == RPC_WRITE || (m->flags & RPC_METHOD_WRITES))) {
        answer(s, RPC_PERMISSION_DENIED, "READ_ONLY_LISTENER", RPC_CAUSE_NONE,
               0,
               "%s writes, and the listener this call came on serves reads "
               "only; call it on one that serves every method",
               m->name);
        return;
    }
    set_deadlines(call);
    bool dup_done = false;
    if (!register_call(s, &dup_done)) {
        rpc_log(RPC_LOG_WARN,
                "dropped a resent copy of call %llu on connection %u",
                (unsigned long long)call->id, (unsigned)call->peer.conn);
        pthread_mutex_lock(&srv->reg_mu);
        rpc_call__reset(call);
        arm_recv(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    if (dup_done) {
        answer(s, RPC_ALREADY_EXISTS, "DUPLICATE_CALL_ID", RPC_CAUSE_NONE, 0,
               "call %llu was already answered on this connection; it does "
               "not run twice",
               (unsigned long long)call->id);
        return;
    }
    /* A detached slot has no worker to wait for: its call runs here. */
    if ((call->reg->method->flags & RPC_METHOD_INLINE) || s->detached) {
        run_call(s);
        return;
    }
    if (!enqueue(srv, s)) {
        unregister(s);
        answer(s, RPC_RESOURCE_EXHAUSTED, "QUEUE_FULL", RPC_CAUSE_NONE,
               retry_after(srv), "all %u workers are busy and %u calls wait",
               srv->cfg.workers, srv->cfg.queue_depth);
    }
}

static void on_request(rpc_slot *s, nng_msg *msg)
{
    s->call.t_recv = rpc_now_ns();
    rpc__peer_of(s->srv, nng_msg_get_pipe(msg), &s->call.peer);
    bool decoded = decode_envelope(s, nng_msg_body(msg), nng_msg_len(msg));
    nng_msg_free(msg);
    if (decoded)
        dispatch(s);
}

/* The receive path of a frame on a slot of its own, without NNG: a slot
 * is made for the call (its cancel signal, its memory) and freed after. */
int rpc__test_serve_frame(rpc_server *srv, const rpc_peer *peer,
                          const void *frame, size_t len, uint8_t **reply,
                          size_t *reply_len)
{
    *reply = NULL;
    *reply_len = 0;
    pthread_mutex_lock(&srv->life_mu);
    bool started = srv->started;
    pthread_mutex_unlock(&srv->life_mu);
    if (started)
        return -EBUSY;
    rpc_slot *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    s->srv = srv;
    s->detached = true;
    s->call.slot = s;
    s->call.cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->call.cancel_fd < 0) {
        int e = errno;
        free(s);
        return -e;
    }
    atomic_init(&s->call.cause, RPC_CAUSE_NONE);
    atomic_init(&s->call.deadline, INT64_MAX);
    s->call.t_recv = rpc_now_ns();
    s->call.peer = *peer;
    if (decode_envelope(s, frame, len))
        dispatch(s);
    int rv = 0;
    if (s->reply != NULL) {
        size_t n = nng_msg_len(s->reply);
        *reply = malloc(n > 0 ? n : 1);
        if (*reply != NULL) {
            memcpy(*reply, nng_msg_body(s->reply), n);
            *reply_len = n;
        } else {
            rv = -ENOMEM;
        }
        nng_msg_free(s->reply);
    }
    rpc_call__reset(&s->call);
    close(s->call.cancel_fd);
    rpc_arena__free(&s->call.arena);
    free(s);
    return rv;
}

static void slot_cb(void *arg)
{
    rpc_slot *s = arg;
    rpc_server *srv = s->srv;
    int rv = nng_aio_result(s->aio);
    pthread_mutex_lock(&srv->reg_mu);
    bool was_receiving = s->receiving;
    s->receiving = false;
    if (!was_receiving) {
        /* A send completed (or failed: the peer went away). */
        if (rv != 0)
            nng_msg_free(nng_aio_get_msg(s->aio));
        s->sending = (rpc_callref){ 0 };
        slot_idle(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    pthread_mutex_unlock(&srv->reg_mu);
    if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
        return; /* the socket closes */
    if (rv != 0) {
        pthread_mutex_lock(&srv->reg_mu);
        if (!atomic_load(&srv->stopping))
            arm_recv(s);
        pthread_mutex_unlock(&srv->reg_mu);
        return;
    }
    on_request(s, nng_aio_get_msg(s->aio));
}

/* ---- running
 * ------------------------------------------------------------------ */

static void invoke(rpc_slot *s)
{
    rpc_call *call = &s->call;
    const rpc_method *m = call->reg->method;
    const Tk__V1__Request *req = call->request;
    ProtobufCMessage *in = protobuf_c_message_unpack(
        m->request, NULL, req->payload.len, req->payload.data);
    if (in == NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PAYLOAD",
                      "the payload (%zu bytes) does not decode as %s",
                      req->payload.len, m->request->name);
        finish(s, NULL);
        return;
    }
    rpc_bad_string why;
    const char *bad = rpc__bad_string(m->request, req->payload.data,
                                      req->payload.len, false, &why);
    if (bad != NULL) {
        protobuf_c_message_free_unpacked(in, NULL);
        fail_bad_string(call, m->request->name, bad, why);
        finish(s, NULL);
        return;
    }
    ProtobufCMessage *out = rpc_call_alloc(call, m->reply->sizeof_message);
    m->reply->message_init(out);
    /* Freed with the call: the reply may point into the request. */
    call->payload = in;
    call->ran = true;
    m->handler(call->reg->svc, call, in, out);
    finish(s, out);
}

/* Decides whether the call may start, then runs it (worker or inline). */
static void run_call(rpc_slot *s)
{
    rpc_server *srv = s->srv;
    rpc_call *call = &s->call;
    int64_t now = rpc_now_ns();
    pthread_mutex_lock(&srv->reg_mu);
    rpc_cause cause = (rpc_cause)atomic_load(&call->cause);
    bool start = cause == RPC_CAUSE_NONE && now < call->caller_deadline &&
                 !atomic_load(&srv->stopping);
    if (start) {
        s->phase = PHASE_RUNNING;
        if (call->reg->method->kind == RPC_WRITE)
            atomic_store(&call->deadline,
                         now + ms_to_ns(call->reg->method->ceiling_ms));
    }
    pthread_mutex_unlock(&srv->reg_mu);
    if (start) {
        invoke(s);
        return;
    }
    if (cause == RPC_CAUSE_CALLER) {
        answer(s, RPC_CANCELLED, NULL, RPC_CAUSE_CALLER, 0,
               "cancelled by the caller before it started");
    } else if (cause == RPC_CAUSE_SHUTDOWN || atomic_load(&srv->stopping)) {
        answer(s, RPC_UNAVAILABLE, "SHUTTING_DOWN", RPC_CAUSE_SHUTDOWN, 1000,
               "tkd is shutting down; the call did not start");
    } else {
        answer(s, RPC_DEADLINE_EXCEEDED, "EXPIRED_IN_QUEUE", RPC_CAUSE_DEADLINE,
               0,
               "the deadline passed after %lld ms in the queue; the call "
               "did not start",
               (long long)((now - call->t_recv) / 1000000));
    }
}

static void *worker_main(void *arg)
{
    rpc_server *srv = arg;
    for (;;) {
        pthread_mutex_lock(&srv->pool_mu);
        while (srv->q_len == 0 && !srv->pool_stop)
            pthread_cond_wait(&srv->pool_cv, &srv->pool_mu);
        if (srv->q_len == 0) {
            pthread_mutex_unlock(&srv->pool_mu);
            return NULL;
        }
        rpc_slot *s = srv->queue[srv->q_head];
        srv->q_head = (srv->q_head + 1) % srv->q_cap;
        srv->q_len--;
        pthread_mutex_unlock(&srv->pool_mu);
        int64_t t0 = rpc_now_ns();
        run_call(s);
        int64_t us = (rpc_now_ns() - t0) / 1000;
        int64_t avg = atomic_load(&srv->avg_service_us);
        atomic_store(&srv->avg_service_us, avg + (us - avg) / 8);
    }
}

/* A queued call that can no longer start (its deadline passed, or it was
 * cancelled) is answered now, not when a worker frees up: the caller is
 * told DEADLINE_EXCEEDED or CANCELLED while it still listens. */
static bool dead_in_queue(const rpc_slot *s, int64_t now, int64_t *next)
{
    if (atomic_load(&s->call.cause) != RPC_CAUSE_NONE ||
        now >= s->call.caller_deadline)
        return true;
    if (s->call.caller_deadline < *next)
        *next = s->call.caller_deadline;
    return false;
}

/* Removes and returns the first dead queued slot; pool_mu held. */
static rpc_slot *take_dead(rpc_server *srv, int64_t *next)
{
    int64_t now = rpc_now_ns();
    *next = INT64_MAX;
    for (size_t i = 0; i < srv->q_len; i++) {
        rpc_slot *s = srv->queue[(srv->q_head + i) % srv->q_cap];
        if (!dead_in_queue(s, now, next))
            continue;
        for (size_t j = i; j + 1 < srv->q_len; j++)
            srv->queue[(srv->q_head + j) % srv->q_cap] =
                srv->queue[(srv->q_head + j + 1) % srv->q_cap];
        srv->q_len--;
        return s;
    }
    return NULL;
}

static void *reaper_main(void *arg)
{
    rpc_server *srv = arg;
    pthread_mutex_lock(&srv->pool_mu);
    while (!srv->pool_stop) {
        int64_t next;
        rpc_slot *s = take_dead(srv, &next);
        if (s != NULL) {
            pthread_mutex_unlock(&srv->pool_mu);
            run_call(s); /* it will not start: this only answers */
            pthread_mutex_lock(&srv->pool_mu);
            continue;
        }
        srv->reaper_until = next;
        if (next == INT64_MAX) {
            pthread_cond_wait(&srv->reaper_cv, &srv->pool_mu);
        } else {
            struct timespec until = mono_timespec(next + 1000000);
            pthread_cond_timedwait(&srv->reaper_cv, &srv->pool_mu, &until);
        }
        srv->reaper_until = INT64_MIN;
    }
    pthread_mutex_unlock(&srv->pool_mu);
    return NULL;
}

static void wake_reaper(rpc_server *srv)
{
    pthread_mutex_lock(&srv->pool_mu);
    pthread_cond_signal(&srv->reaper_cv);
    pthread_mutex_unlock(&srv->pool_mu);
}

/* ---- shutdown
 * ------------------------------------------------------------------ */

static size_t count_in_flight(const rpc_server *srv)
{
    size_t n = 0;
    for (size_t i = 0; i < srv->n_slots; i++)
        if (srv->slots[i].phase != PHASE_IDLE)
            n++;
    return n;
}

static bool calls_in_flight(const rpc_server *srv)
{
    return count_in_flight(srv) > 0;
}

typedef struct closer {
    nng_socket sock;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    bool done, abandoned;
} closer;

static void closer_free(closer *c)
{
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

static void *closer_main(void *arg)
{
    closer *c = arg;
    nng_close(c->sock);
    pthread_mutex_lock(&c->mu);
    c->done = true;
    bool abandoned = c->abandoned;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (abandoned)
        closer_free(c);
    return NULL;
}

/* nng_close, given up after SOCKET_CLOSE_BOUND_MS (see there): true when
 * the socket closed. A close given up on leaves its thread behind. */
static bool close_bounded(rpc_server *srv)
{
    closer *c = calloc(1, sizeof *c);
    pthread_t t;
    if (c == NULL)
        return false;
    c->sock = srv->sock;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t mono;
    pthread_condattr_init(&mono);
    pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &mono);
    pthread_condattr_destroy(&mono);
    if (pthread_create(&t, NULL, closer_main, c) != 0) {
        closer_free(c);
        return false;
    }
    pthread_detach(t);
    struct timespec until =
        mono_timespec(rpc_now_ns() + ms_to_ns(SOCKET_CLOSE_BOUND_MS));
    pthread_mutex_lock(&c->mu);
    while (!c->done &&
           pthread_cond_timedwait(&c->cv, &c->mu, &until) != ETIMEDOUT)
        ;
    bool done = c->done;
    c->abandoned = !done;
    pthread_mutex_unlock(&c->mu);
    if (done) {
        closer_free(c);
        return true;
    }
    rpc_log(RPC_LOG_WARN,
            "shutdown: closing the socket has not ended after %d ms (a "
            "known hang of NNG before 1.9.0, nanomsg/nng#1813); going on "
            "without it",
            SOCKET_CLOSE_BOUND_MS);
    return false;
}

/* The end of shutdown: the pool and the reaper stop; with no call left
 * (clean), the workers are joined and the socket closed. */
static void stop_threads(rpc_server *srv, bool clean)
{
    rpc__stop_listeners(srv);
    pthread_mutex_lock(&srv->pool_mu);
    srv->pool_stop = true;
    pthread_cond_broadcast(&srv->pool_cv);
    pthread_cond_broadcast(&srv->reaper_cv);
    pthread_mutex_unlock(&srv->pool_mu);
    if (srv->reaper_running) {
        pthread_join(srv->reaper, NULL);
        srv->reaper_running = false;
    }
    if (!clean) {
        /* Calls outlived the grace: their workers are left running (the
         * process is about to exit) and never joined, so detached; the
         * idle ones end on pool_stop. */
        for (size_t i = 0; i < srv->n_threads; i++)
            pthread_detach(srv->threads[i]);
        return;
    }
    for (size_t i = 0; i < srv->n_threads; i++)
        pthread_join(srv->threads[i], NULL);
    srv->n_threads = 0;
    if (close_bounded(srv)) {
        srv->sock_open = false;
        for (size_t i = 0; i < srv->n_slots; i++)
            if (srv->slots[i].aio != NULL)
                nng_aio_stop(srv->slots[i].aio);
    }
}

/* Waits until no call is in flight, at most ms; reg_mu held. True when
 * none is. */
static bool wait_for_calls(rpc_server *srv, uint32_t ms)
{
    struct timespec until = mono_timespec(rpc_now_ns() + ms_to_ns(ms));
    while (calls_in_flight(srv))
        if (pthread_cond_timedwait(&srv->reg_cv, &srv->reg_mu, &until) ==
            ETIMEDOUT)
            return !calls_in_flight(srv);
    return true;
}

/* One line naming a call that is still running: what, which, and its
 * process group (pid=- when it runs none). reg_mu held. */
static void log_running(const rpc_slot *s, const char *what)
{
    const rpc_call *call = &s->call;
    char pid[32] = "-";
    int64_t pgid = atomic_load(&call->pgid);
    if (pgid > 0)
        snprintf(pid, sizeof pid, "%lld", (long long)pgid);
    rpc_log(RPC_LOG_WARN,
            "shutdown: %s: method=%s kind=%s id=%llu conn=%u pid=%s "
            "running_ms=%lld",
            what, call->reg->method->name,
            call->reg->method->kind == RPC_WRITE ? "WRITE" : "READ",
            (unsigned long long)call->id, (unsigned)call->peer.conn, pid,
            (long long)((rpc_now_ns() - call->t_recv) / 1000000));
}

/* The grace has run out: each call still running is named, and the WRITEs
 * among them are stopped (cause SHUTDOWN: their cancel fd fires, and proc
 * cuts their processes short as their own timeout would, SIGTERM first).
 * A READ was cancelled when shutdown began and is only slow to end; one
 * past its commit point is left to finish. reg_mu held. */
static void stop_outliving(rpc_server *srv)
{
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        if (s->phase != PHASE_RUNNING)
            continue; /* queued: being answered; sending: answered */
        if (s->call.reg->method->kind == RPC_WRITE) {
            log_running(s, "grace over, stopping the write");
            rpc_call__cancel(&s->call, RPC_CAUSE_SHUTDOWN);
        } else {
            log_running(s, s->call.committing
                               ? "grace over, past its commit point"
                               : "grace over, still ending");
        }
    }
}

/* What is still in flight when tkd gives up waiting: each running call is
 * named (its client never gets a reply: the process ends under it).
 * reg_mu held. Returns the calls in flight. */
static size_t report_left(rpc_server *srv)
{
    size_t n = 0;
    for (size_t i = 0; i < srv->n_slots; i++) {
        const rpc_slot *s = &srv->slots[i];
        if (s->phase == PHASE_IDLE)
            continue;
        n++;
        if (s->phase == PHASE_RUNNING)
            log_running(s, "left running at exit, never answered");
        else if (s->phase == PHASE_SENDING)
            rpc_log(RPC_LOG_WARN,
                    "shutdown: a reply still being sent at exit: id=%llu "
                    "conn=%u",
                    (unsigned long long)s->sending.id,
                    (unsigned)s->sending.conn);
    }
    return n;
}

/* Past the grace: stop, wait shutdown_stop_ms, report. reg_mu held.
 * Returns how many calls outlived the grace. */
static size_t end_outliving(rpc_server *srv)
{
    uint32_t grace = srv->cfg.shutdown_grace_ms;
    size_t outlived = count_in_flight(srv);
    rpc_log(RPC_LOG_WARN,
            "shutdown: %zu call(s) still running after %u ms (the grace): "
            "the writes among them are stopped, and given %u ms to answer",
            outlived, (unsigned)grace, (unsigned)srv->cfg.shutdown_stop_ms);
    stop_outliving(srv);
    wait_for_calls(srv, srv->cfg.shutdown_stop_ms);
    size_t left = report_left(srv);
    rpc_log(RPC_LOG_WARN,
            "shutdown: %zu call(s) outlived the grace of %u ms: %zu ended and "
            "answered, %zu left running (never answered)",
            outlived, (unsigned)grace, outlived - left, left);
    return outlived;
}

unsigned rpc_server_shutdown(rpc_server *srv)
{
    pthread_mutex_lock(&srv->life_mu);
    if (!srv->started || srv->shut_down) {
        unsigned n = srv->outlived;
        pthread_mutex_unlock(&srv->life_mu);
        return n;
    }
    srv->shut_down = true;
    atomic_store(&srv->stopping, true);

    pthread_mutex_lock(&srv->reg_mu);
    size_t writes = 0;
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        if (cancellable(s))
            rpc_call__cancel(&s->call, RPC_CAUSE_SHUTDOWN);
        else if (s->phase == PHASE_RUNNING)
            writes++;
    }
    if (writes > 0)
        rpc_log(RPC_LOG_INFO, "shutdown: waiting for %zu write(s)", writes);
    size_t outlived = 0;
    if (!wait_for_calls(srv, srv->cfg.shutdown_grace_ms))
        outlived = end_outliving(srv);
    bool clean = !calls_in_flight(srv);
    srv->outlived = (unsigned)outlived;
    pthread_mutex_unlock(&srv->reg_mu);
    nng_msleep(SHUTDOWN_FLUSH_MS);

    stop_threads(srv, clean);
    pthread_mutex_unlock(&srv->life_mu);
    return (unsigned)outlived;
}

uint32_t rpc_shutdown_bound_ms(const rpc_config *cfg)
{
    uint64_t ms = (uint64_t)cfg->shutdown_grace_ms + cfg->shutdown_stop_ms +
                  SHUTDOWN_FLUSH_MS + SOCKET_CLOSE_BOUND_MS +
                  RPC_LOG_EXIT_FLUSH_MS;
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void rpc_server_free(rpc_server *srv)
{
    if (srv == NULL)
        return;
    rpc_server_shutdown(srv);
    if (srv->n_threads > 0 || srv->sock_open) {
        /* Calls outlived the grace: their threads still use the server.
         * The process is about to exit; leak rather than free under them. */
        return;
    }
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        if (s->aio != NULL)
            nng_aio_free(s->aio);
        if (s->call.cancel_fd > 0) {
            rpc_call__reset(&s->call);
            close(s->call.cancel_fd);
        }
        rpc_arena__free(&s->call.arena);
    }
    free(srv->slots);
    free(srv->queue);
    free(srv->threads);
    free(srv->methods);
    rpc__stop_listeners(srv);
    if (srv->tls != NULL)
        nng_tls_config_free(srv->tls);
    free(srv->listeners);
    for (size_t i = 0; srv->listen_urls != NULL &&
                       i < srv->cfg.n_listen + srv->cfg.n_listen_read_only;
         i++)
        free(srv->listen_urls[i]);
    free(srv->listen_urls);
    for (size_t i = 0; i < 3; i++)
        free(srv->tls_files[i]);
    pthread_mutex_destroy(&srv->watch_mu);
    pthread_cond_destroy(&srv->watch_cv);
    pthread_mutex_destroy(&srv->reg_mu);
    pthread_cond_destroy(&srv->reg_cv);
    pthread_mutex_destroy(&srv->pool_mu);
    pthread_cond_destroy(&srv->pool_cv);
    pthread_cond_destroy(&srv->reaper_cv);
    pthread_mutex_destroy(&srv->life_mu);
    pthread_mutex_destroy(&srv->peers_mu);
    free(srv->peers);
    free(srv);
}
