/* SPDX-License-Identifier: MIT */
/*
 * The server's life cycle: its configuration, its method table, the REP
 * socket and its contexts, and start.
 *
 * Each slot is one NNG REP context with one aio that alternates between
 * receiving a request and sending its reply. The aio callback (an NNG
 * thread) decodes the envelope, checks the peer, finds the method, computes
 * the deadline and registers the call, then queues it for a worker; it
 * never blocks (short mutexes only). There are more slots than workers plus
 * queue places, so that a full queue is answered RESOURCE_EXHAUSTED at once
 * and a Cancel (an inline method) still gets through when every worker is
 * busy.
 *
 * The rest of the server, each file calling only the ones after it:
 * shutdown.c (shutdown and free), receive.c (a frame to a call), listen.c
 * (the listeners and connections), registry.c (where each call stands:
 * cancel, CallState, a closed connection), workers.c (the worker pool and
 * the queue's reaper), reply.c (a call's reply, and its slot made idle).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "rpc_int.h"
#include "tk/v1/options.pb-c.h"

/* A generated row's kind (tk.v1.MethodSpec.Kind) becomes an rpc_kind by
 * its number (RPC_METHOD_ROW). */
_Static_assert((int)RPC_READ == (int)TK__V1__METHOD_SPEC__KIND__READ &&
                   (int)RPC_WRITE == (int)TK__V1__METHOD_SPEC__KIND__WRITE,
               "rpc_kind has the numbers of tk.v1.MethodSpec.Kind");

#define SPARE_SLOTS 16u

void rpc_config_init(rpc_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->workers = RPC_DEFAULT_WORKERS;
    cfg->queue_depth = RPC_DEFAULT_QUEUE_DEPTH;
    cfg->max_request_bytes = RPC_DEFAULT_MAX_REQUEST_BYTES;
    cfg->max_connections = 0; /* each listener's part, at most the default */
    cfg->handshake_timeout_ms = RPC_DEFAULT_HANDSHAKE_TIMEOUT_MS;
    cfg->metrics_max_connections = RPC_DEFAULT_METRICS_MAX_CONNECTIONS;
    cfg->metrics_header_timeout_ms = RPC_DEFAULT_METRICS_HEADER_TIMEOUT_MS;
    cfg->metrics_min_interval_ms = RPC_DEFAULT_METRICS_MIN_INTERVAL_MS;
    cfg->allowed_uid = -1;
    cfg->shutdown_grace_ms = RPC_DEFAULT_SHUTDOWN_GRACE_MS;
    cfg->shutdown_stop_ms = RPC_DEFAULT_SHUTDOWN_STOP_MS;
    cfg->version = "unknown";
}

/* The Prometheus listener's bounds (tkd_options.c checks its flags the
 * same). */
static int check_metrics_config(const rpc_config *cfg, char *err, size_t errlen)
{
    if (cfg->metrics_max_connections == 0 ||
        cfg->metrics_max_connections > RPC_MAX_METRICS_CONNECTIONS) {
        tkc_set_err(err, errlen,
                    "metrics max connections must be 1..%u, not %u",
                    RPC_MAX_METRICS_CONNECTIONS, cfg->metrics_max_connections);
        return -EINVAL;
    }
    if (cfg->metrics_header_timeout_ms < RPC_MIN_METRICS_HEADER_TIMEOUT_MS ||
        cfg->metrics_header_timeout_ms > RPC_MAX_METRICS_HEADER_TIMEOUT_MS) {
        tkc_set_err(
            err, errlen, "metrics header timeout must be %u..%u ms, not %u",
            RPC_MIN_METRICS_HEADER_TIMEOUT_MS,
            RPC_MAX_METRICS_HEADER_TIMEOUT_MS, cfg->metrics_header_timeout_ms);
        return -EINVAL;
    }
    if (cfg->metrics_min_interval_ms < RPC_MIN_METRICS_MIN_INTERVAL_MS ||
        cfg->metrics_min_interval_ms > RPC_MAX_METRICS_MIN_INTERVAL_MS) {
        tkc_set_err(
            err, errlen, "metrics min interval must be %u..%u ms, not %u",
            RPC_MIN_METRICS_MIN_INTERVAL_MS, RPC_MAX_METRICS_MIN_INTERVAL_MS,
            cfg->metrics_min_interval_ms);
        return -EINVAL;
    }
    return 0;
}

static int check_config(const rpc_config *cfg, char *err, size_t errlen)
{
    if (cfg->n_listen + cfg->n_listen_read_only == 0) {
        tkc_set_err(err, errlen, "no listen address");
        return -EINVAL;
    }
    if (cfg->workers == 0 || cfg->workers > 1024) {
        tkc_set_err(err, errlen, "workers must be 1..1024, not %u",
                    cfg->workers);
        return -EINVAL;
    }
    if (cfg->queue_depth == 0 || cfg->queue_depth > 65536) {
        tkc_set_err(err, errlen, "queue depth must be 1..65536, not %u",
                    cfg->queue_depth);
        return -EINVAL;
    }
    if (cfg->max_request_bytes < 64) {
        tkc_set_err(err, errlen, "max request bytes must be at least 64");
        return -EINVAL;
    }
    if (cfg->handshake_timeout_ms == 0 ||
        cfg->handshake_timeout_ms > RPC_MAX_HANDSHAKE_TIMEOUT_MS) {
        tkc_set_err(err, errlen, "handshake timeout must be 1..%u ms, not %u",
                    RPC_MAX_HANDSHAKE_TIMEOUT_MS, cfg->handshake_timeout_ms);
        return -EINVAL;
    }
    return check_metrics_config(cfg, err, errlen);
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
    if (!keep(&srv->kept[0], cfg->tls_cert) ||
        !keep(&srv->kept[1], cfg->tls_key) ||
        !keep(&srv->kept[2], cfg->tls_ca) ||
        !keep(&srv->kept[3], cfg->metrics_listen))
        return -ENOMEM;
    srv->cfg.metrics_listen = srv->kept[3];
    srv->cfg.tls_cert = srv->kept[0];
    srv->cfg.tls_key = srv->kept[1];
    srv->cfg.tls_ca = srv->kept[2];
    snprintf(srv->version, sizeof srv->version, "%s",
             cfg->version ? cfg->version : "unknown");
    srv->cfg.version = srv->version;
    return 0;
}

/* The slots: one per worker, one per place in the queue, SPARE_SLOTS more. */
static size_t slot_count(const rpc_config *cfg)
{
    return (size_t)cfg->workers + cfg->queue_depth + SPARE_SLOTS;
}

static void init_sync(rpc_server *srv)
{
    /* Timed waits are on the monotonic clock, like every deadline. */
    pthread_mutex_init(&srv->reg_mu, NULL);
    tkc_cond_init(&srv->reg_cv);
    pthread_mutex_init(&srv->pool_mu, NULL);
    pthread_cond_init(&srv->pool_cv, NULL);
    tkc_cond_init(&srv->reaper_cv);
    pthread_mutex_init(&srv->watch_mu, NULL);
    tkc_cond_init(&srv->watch_cv);
    pthread_mutex_init(&srv->life_mu, NULL);
    pthread_mutex_init(&srv->peers_mu, NULL);
    atomic_init(&srv->stopping, false);
    atomic_init(&srv->avg_service_us, 0);
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
        rv = rpc__registry_init(srv, slot_count(cfg));
    if (rv == 0)
        rv = rpc__check_listeners(srv, err, errlen);
    if (rv != 0) {
        if (rv == -ENOMEM)
            tkc_set_err(err, errlen, "out of memory");
        rpc_server_free(srv);
        return rv;
    }
    *out = srv;
    return 0;
}

uint32_t rpc_list_items(const rpc_list *list, uint32_t limit)
{
    if (list->max_items == 0) /* no list declared: nothing to hold to */
        return limit != 0 ? limit : UINT32_MAX;
    if (limit == 0)
        limit =
            list->default_items != 0 ? list->default_items : list->max_items;
    return limit < list->max_items ? limit : list->max_items;
}

/* What tools/gen-stubs.py refuses of a declared list, refused again for a
 * table built by hand (a test's). */
static bool list_malformed(const rpc_list *l)
{
    if (l->field == NULL)
        return l->limit_field != NULL || l->default_items != 0 ||
               l->max_items != 0 || l->max_bytes != 0;
    if (l->max_items == 0 || l->default_items > l->max_items)
        return true;
    return (l->limit_field != NULL) != (l->default_items != 0);
}

int rpc_server_add_service(rpc_server *srv, void *svc,
                           const rpc_method *methods, size_t n_methods,
                           char *err, size_t errlen)
{
    if (srv->started) {
        tkc_set_err(err, errlen, "services are added before the server starts");
        return -EBUSY;
    }
    for (size_t i = 0; i < n_methods; i++) {
        const rpc_method *m = &methods[i];
        if (m->name == NULL || strchr(m->name, '/') == NULL ||
            m->request == NULL || m->reply == NULL || m->handler == NULL ||
            (m->kind != RPC_READ && m->kind != RPC_WRITE) ||
            m->ceiling_ms == 0 || m->default_timeout_ms == 0 ||
            m->default_timeout_ms > m->ceiling_ms || list_malformed(&m->list)) {
            tkc_set_err(err, errlen, "method %s is malformed",
                        m->name ? m->name : "(null)");
            return -EINVAL;
        }
        for (size_t j = 0; j < srv->n_methods; j++) {
            if (strcmp(srv->methods[j].method->name, m->name) == 0) {
                tkc_set_err(err, errlen, "method %s registered twice", m->name);
                return -EEXIST;
            }
        }
        rpc_registered *nm = tkc_grow(srv->methods, &srv->cap_methods,
                                      srv->n_methods + 1, sizeof *nm, 16);
        if (nm == NULL)
            return -ENOMEM;
        srv->methods = nm;
        rpc_method_stats *st = calloc(1, sizeof *st);
        if (st == NULL)
            return -ENOMEM;
        srv->methods[srv->n_methods].method = m;
        srv->methods[srv->n_methods].svc = svc;
        srv->methods[srv->n_methods].stats = st;
        srv->n_methods++;
    }
    qsort(srv->methods, srv->n_methods, sizeof *srv->methods, rpc__method_cmp);
    return 0;
}

const char *rpc_server_metrics_url(const rpc_server *srv)
{
    return srv->metrics_http != NULL ? srv->metrics_bound : NULL;
}

unsigned rpc_server_metrics_limit(const rpc_server *srv)
{
    return srv->metrics_http != NULL ? srv->metrics_limit : 0;
}

size_t rpc_server_n_methods(const rpc_server *srv)
{
    return srv->n_methods;
}

const rpc_method *rpc_server_method(const rpc_server *srv, size_t i)
{
    return srv->methods[i].method;
}

int64_t rpc_server_uptime_ms(const rpc_server *srv)
{
    return (rpc_now_ns() - srv->t_start) / 1000000;
}

const char *rpc_server_version(const rpc_server *srv)
{
    return srv->version;
}

void rpc_server_set_nodes(rpc_server *srv, rpc_nodes_fn fn, void *arg)
{
    if (srv == NULL || srv->started)
        return;
    srv->nodes = fn;
    srv->nodes_arg = arg;
}

void rpc_server_set_on_stop(rpc_server *srv, rpc_stop_fn fn, void *arg)
{
    if (srv == NULL || srv->started)
        return;
    srv->on_stop = fn;
    srv->on_stop_arg = arg;
}

void rpc_server__on_stop(const rpc_server *srv)
{
    if (srv->on_stop != NULL)
        srv->on_stop(srv->on_stop_arg);
}

void rpc_server_list_nodes(const rpc_server *srv, rpc_call *call,
                           ProtobufCMessage *reply)
{
    if (srv->nodes != NULL)
        srv->nodes(srv->nodes_arg, call, reply);
}

static int start_slots(rpc_server *srv, char *err, size_t errlen)
{
    srv->n_slots = slot_count(&srv->cfg);
    srv->slots = calloc(srv->n_slots, sizeof *srv->slots);
    if (srv->slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        s->srv = srv;
        s->call.slot = s;
        int erv = port_event_open(&s->call.cancel);
        if (erv != 0) {
            char ebuf[128];
            tkc_set_err(err, errlen, "the slots' cancel events: %s",
                        tkc_strerror(-erv, ebuf, sizeof ebuf));
            return erv;
        }
        atomic_init(&s->call.cause, RPC_CAUSE_NONE);
        atomic_init(&s->call.deadline, INT64_MAX);
        atomic_init(&s->call.pgid, 0);
        atomic_init(&s->receiving, false);
        int rv = nng_ctx_open(&s->ctx, srv->sock);
        if (rv == 0)
            rv = nng_aio_alloc(&s->aio, rpc__slot_cb, s);
        if (rv != 0) {
            tkc_set_err(err, errlen, "nng context: %s", nng_strerror(rv));
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
        tkc_set_err(err, errlen, "nng_rep0_open: %s", nng_strerror(rv));
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
    /* One worker; the others start as calls queue up (rpc__add_worker). */
    pthread_mutex_lock(&srv->pool_mu);
    if (pthread_create(&srv->threads[0], NULL, rpc__worker_main, srv) == 0)
        srv->n_threads++;
    pthread_mutex_unlock(&srv->pool_mu);
    if (srv->n_threads == 0) {
        tkc_set_err(err, errlen, "cannot start a worker thread");
        rv = -EAGAIN;
        goto done;
    }
    if (pthread_create(&srv->reaper, NULL, rpc__reaper_main, srv) != 0) {
        tkc_set_err(err, errlen, "cannot start the queue reaper");
        rv = -EAGAIN;
        goto done;
    }
    srv->reaper_running = true;
    if ((rv = rpc__start_listeners(srv, err, errlen)) != 0)
        goto done;
    if ((rv = rpc__metrics_http_start(srv, err, errlen)) != 0)
        goto done;
    pthread_mutex_lock(&srv->reg_mu);
    for (size_t i = 0; i < srv->n_slots; i++)
        rpc__arm_recv(&srv->slots[i]);
    pthread_mutex_unlock(&srv->reg_mu);
done:
    pthread_mutex_unlock(&srv->life_mu);
    return rv;
}
