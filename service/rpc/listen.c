/* SPDX-License-Identifier: MIT */
/* Listeners and connections: binding each --listen address with its
 * limits (its connections, those in their handshake included, and how
 * long a handshake may take), the credentials of each connection (read
 * once, when it is added), and the connections' comings and goings. What
 * a connection's calls become when it closes is the registry's
 * (registry.c); what NNG only counts of them is the watch's (watch.c). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "rpc_int.h"

/* 0, 1, 2: rpc__listener_transport's numbers. */
typedef enum scheme { SCHEME_IPC, SCHEME_TCP, SCHEME_TLS, SCHEME_OTHER } scheme;

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static scheme scheme_of(const char *url)
{
    if (has_prefix(url, "ipc://"))
        return SCHEME_IPC;
    if (has_prefix(url, "tcp://") || has_prefix(url, "tcp4://") ||
        has_prefix(url, "tcp6://"))
        return SCHEME_TCP;
    if (has_prefix(url, "tls+tcp://") || has_prefix(url, "tls+tcp4://") ||
        has_prefix(url, "tls+tcp6://"))
        return SCHEME_TLS;
    return SCHEME_OTHER;
}

int rpc__listener_transport(const rpc_listener *L)
{
    scheme sc = scheme_of(L->url); /* in the order the function answers */
    return sc == SCHEME_OTHER ? -1 : (int)sc;
}

/* Whether url may be listened on as configured; a message in err if not. */
static bool url_allowed(const rpc_config *c, const char *url, char *err,
                        size_t errlen)
{
    switch (scheme_of(url)) {
    case SCHEME_IPC:
        return true;
    case SCHEME_TCP:
        if (c->allow_plain_tcp)
            return true;
        snprintf(err, errlen,
                 "refusing to listen on %s: plain tcp:// authenticates no "
                 "one, so anyone who can reach the port could call tkd and "
                 "run git as its user. Use tls+tcp:// with a certificate, "
                 "its key and the CA of the clients' certificates (tkd "
                 "--tls-cert, --tls-key, --tls-ca), or ipc:// on this "
                 "machine",
                 url);
        return false;
    case SCHEME_TLS:
        if (c->tls_cert != NULL && c->tls_key != NULL && c->tls_ca != NULL)
            return true;
        snprintf(err, errlen,
                 "%s needs tkd's certificate, its key and the CA that signs "
                 "the clients' certificates (tkd --tls-cert, --tls-key, "
                 "--tls-ca): every client must show a certificate",
                 url);
        return false;
    default:
        snprintf(err, errlen,
                 "cannot listen on %s: tkd listens on ipc:// and tls+tcp:// "
                 "(and tcp:// for a lab, with --insecure-plain-tcp)",
                 url);
        return false;
    }
}

int rpc__check_listeners(rpc_server *srv, char *err, size_t errlen)
{
    const rpc_config *c = &srv->cfg;
    size_t n = c->n_listen + c->n_listen_read_only;
    srv->listeners = calloc(n, sizeof *srv->listeners);
    if (srv->listeners == NULL)
        return -ENOMEM;
    srv->n_listeners = n;
    for (size_t i = 0; i < n; i++) {
        rpc_listener *L = &srv->listeners[i];
        bool ro = i >= c->n_listen;
        L->url = ro ? c->listen_read_only[i - c->n_listen] : c->listen[i];
        L->read_only = ro;
        L->local = scheme_of(L->url) == SCHEME_IPC;
        snprintf(L->bound, sizeof L->bound, "%s", L->url);
        if (!url_allowed(c, L->url, err, errlen))
            return -EINVAL;
    }
    return 0;
}

/* The server side of mutual TLS: tkd's certificate and key, the CA that
 * must have signed each client's certificate, and a certificate required
 * of every client (NNG refuses the handshake otherwise). */
static int load_tls(rpc_server *srv, char *err, size_t errlen)
{
    const rpc_config *c = &srv->cfg;
    nng_tls_config *cfg = NULL;
    char *cert = NULL, *key = NULL;
    int rv = -EINVAL;
    /* First whether this NNG has TLS at all (Homebrew's is built without):
     * no certificate can help then. */
    int e = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_SERVER);
    if (e == NNG_ENOTSUP) {
        snprintf(err, errlen,
                 "TLS: the NNG this tkd is linked with was built without "
                 "TLS; link one with it (subprojects/nng.wrap builds one) or "
                 "listen on ipc:// only");
        goto done;
    }
    if (e != 0) {
        snprintf(err, errlen, "TLS: %s", nng_strerror(e));
        goto done;
    }
    cert = tkc_read_pem("tkd's certificate", c->tls_cert, err, errlen);
    key = cert != NULL ? tkc_read_pem("tkd's key", c->tls_key, err, errlen)
                       : NULL;
    if (key == NULL)
        goto done;
    if ((e = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0) {
        snprintf(err, errlen, "tkd's certificate %s and key %s: %s",
                 c->tls_cert, c->tls_key, nng_strerror(e));
        goto done;
    }
    if ((e = nng_tls_config_ca_file(cfg, c->tls_ca)) != 0) {
        snprintf(err, errlen, "the clients' CA %s: %s", c->tls_ca,
                 nng_strerror(e));
        goto done;
    }
    if ((e = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED)) != 0) {
        snprintf(err, errlen, "TLS: %s", nng_strerror(e));
        goto done;
    }
    srv->tls = cfg;
    cfg = NULL;
    rv = 0;
done:
    if (cfg != NULL)
        nng_tls_config_free(cfg);
    if (key != NULL)
        tkc_wipe(key, strlen(key));
    free(key);
    free(cert);
    return rv;
}

/* L->bound: the URL with the port a tcp or tls+tcp listener got. */
static void set_bound(rpc_listener *L)
{
    int port;
    if (scheme_of(L->url) == SCHEME_IPC ||
        nng_listener_get_int(L->l, NNG_OPT_TCP_BOUND_PORT, &port) != 0)
        return;
    const char *colon = strrchr(L->url, ':');
    const char *sep = strstr(L->url, "://");
    if (colon == NULL || sep == NULL || colon < sep + 3)
        return;
    snprintf(L->bound, sizeof L->bound, "%.*s:%d", (int)(colon - L->url),
             L->url, port);
}

#ifndef NNG_OPT_CONN_MAX /* tk's NNG has them (nng-patches/06, 07) */
#define NNG_OPT_CONN_MAX "conn-max"
#endif
#ifndef NNG_OPT_HANDSHAKE_TIMEOUT
#define NNG_OPT_HANDSHAKE_TIMEOUT "handshake-timeout"
#endif

/* The listener's limits: its connections, counted from their accept, and
 * how long a handshake may take. An NNG without them (not tk's own) is
 * said once, at start: its listeners count connections once their
 * handshake is done (rpc__pipe_event), and its handshakes run to NNG's own
 * 10 s, a TLS handshake without end (nng-patches/05). */
static int set_limits(rpc_server *srv, rpc_listener *L)
{
    int rv = nng_listener_set_int(L->l, NNG_OPT_CONN_MAX, (int)L->limit);
    if (rv == 0)
        rv = nng_listener_set_ms(L->l, NNG_OPT_HANDSHAKE_TIMEOUT,
                                 (nng_duration)srv->cfg.handshake_timeout_ms);
    if (rv != NNG_ENOTSUP)
        return rv;
    if (!srv->nng_lacks_limits)
        obs_log(OBS_LOG_WARN,
                "the NNG tkd is linked with cannot limit connections in "
                "their handshake nor bound a handshake's time (tk's own, "
                "subprojects/nng.wrap, can): a peer that never finishes one "
                "holds a descriptor");
    srv->nng_lacks_limits = true;
    return 0;
}

static int start_listener(rpc_server *srv, rpc_listener *L, char *err,
                          size_t errlen)
{
    int rv = nng_listener_create(&L->l, srv->sock, L->url);
    if (rv != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", L->url,
                 nng_strerror(rv));
        return -EINVAL;
    }
    /* NNG's default is unlimited: one huge frame must not take the daemon's
     * memory. Larger frames close that connection. */
    rv = nng_listener_set_size(L->l, NNG_OPT_RECVMAXSZ,
                               srv->cfg.max_request_bytes);
    scheme sc = scheme_of(L->url);
    if (rv == 0 && sc == SCHEME_IPC)
        rv = nng_listener_set_int(L->l, NNG_OPT_IPC_PERMISSIONS, 0600);
    if (rv == 0 && sc == SCHEME_TLS)
        rv = nng_listener_set_ptr(L->l, NNG_OPT_TLS_CONFIG, srv->tls);
    if (rv == 0)
        rv = set_limits(srv, L);
    if (rv != 0) {
        snprintf(err, errlen, "cannot configure %s: %s", L->url,
                 nng_strerror(rv));
        return -EINVAL;
    }
    rv = nng_listener_start(L->l, 0);
    if (rv != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", L->url,
                 nng_strerror(rv));
        return rv == NNG_EADDRINUSE ? -EADDRINUSE : -EINVAL;
    }
    L->started = true;
    set_bound(L);
    if (sc == SCHEME_TCP) {
        obs_field f[] = { OBS_STR("url", L->bound) };
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "%s authenticates no one: anyone who can reach it may "
                       "call tkd (plain tcp was asked for; use tls+tcp:// "
                       "outside a lab)",
                       L->bound);
    }
    return 0;
}

int rpc__start_listeners(rpc_server *srv, char *err, size_t errlen)
{
    bool tls = false;
    for (size_t i = 0; i < srv->n_listeners; i++)
        tls = tls || scheme_of(srv->listeners[i].url) == SCHEME_TLS;
    int rv = tls ? load_tls(srv, err, errlen) : 0;
    if (rv == 0)
        rpc__share_fds(srv);
    for (size_t i = 0; rv == 0 && i < srv->n_listeners; i++)
        rv = start_listener(srv, &srv->listeners[i], err, errlen);
    if (rv != 0)
        return rv;
    pthread_mutex_lock(&srv->watch_mu);
    rpc__heap_start(srv);
    srv->watching =
        pthread_create(&srv->watcher, NULL, rpc__watch_main, srv) == 0;
    pthread_mutex_unlock(&srv->watch_mu);
    return 0;
}

const char *rpc_server_bound_url(const rpc_server *srv, size_t i)
{
    return i < srv->n_listeners ? srv->listeners[i].bound : NULL;
}

unsigned rpc_server_listener_limit(const rpc_server *srv, size_t i)
{
    return i < srv->n_listeners ? srv->listeners[i].limit : 0;
}

void rpc__stop_listeners(rpc_server *srv)
{
    pthread_mutex_lock(&srv->watch_mu);
    srv->watch_stop = true;
    pthread_cond_signal(&srv->watch_cv);
    bool join = srv->watching;
    srv->watching = false;
    pthread_mutex_unlock(&srv->watch_mu);
    if (join)
        pthread_join(srv->watcher, NULL);
}

/* The listener a connection came on; NULL for none of ours. */
static rpc_listener *listener_of(const rpc_server *srv, nng_pipe pipe)
{
    int lid = nng_listener_id(nng_pipe_listener(pipe));
    for (size_t i = 0; i < srv->n_listeners; i++)
        if (srv->listeners[i].started &&
            nng_listener_id(srv->listeners[i].l) == lid)
            return &srv->listeners[i];
    return NULL;
}

/* The credentials the transport knows of a connection (ipc only), and
 * whether its listener serves READs only. */
static void read_peer(const rpc_server *srv, nng_pipe pipe, rpc_peer *peer)
{
    uint64_t v;
    peer->conn = (uint32_t)nng_pipe_id(pipe);
    peer->uid = -1;
    peer->pid = -1;
    const rpc_listener *L = listener_of(srv, pipe);
    peer->read_only = L != NULL && L->read_only;
    if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, &v) == 0)
        peer->uid = (int64_t)v;
    if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &v) == 0)
        peer->pid = (int64_t)v;
}

/* Index of conn in the sorted table, or where it would go; peers_mu. */
static size_t peer_slot(const rpc_server *srv, uint32_t conn)
{
    size_t lo = 0, hi = srv->n_peers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (srv->peers[mid].conn < conn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void remember_peer(rpc_server *srv, nng_pipe pipe)
{
    rpc_peer p;
    read_peer(srv, pipe, &p);
    pthread_mutex_lock(&srv->peers_mu);
    size_t i = peer_slot(srv, p.conn);
    bool present = i < srv->n_peers && srv->peers[i].conn == p.conn;
    if (!present) {
        rpc_peer *np = tkc_grow(srv->peers, &srv->cap_peers, srv->n_peers + 1,
                                sizeof *np, 64);
        if (np == NULL) {
            /* Not cached: rpc__peer_of reads it for each call instead. */
            pthread_mutex_unlock(&srv->peers_mu);
            return;
        }
        srv->peers = np;
    }
    if (!present) {
        memmove(&srv->peers[i + 1], &srv->peers[i],
                (srv->n_peers - i) * sizeof *srv->peers);
        srv->n_peers++;
    }
    srv->peers[i] = p;
    pthread_mutex_unlock(&srv->peers_mu);
}

static void forget_peer(rpc_server *srv, uint32_t conn)
{
    pthread_mutex_lock(&srv->peers_mu);
    size_t i = peer_slot(srv, conn);
    if (i < srv->n_peers && srv->peers[i].conn == conn) {
        memmove(&srv->peers[i], &srv->peers[i + 1],
                (srv->n_peers - i - 1) * sizeof *srv->peers);
        srv->n_peers--;
    }
    pthread_mutex_unlock(&srv->peers_mu);
}

void rpc__peer_of(rpc_server *srv, nng_pipe pipe, rpc_peer *peer)
{
    uint32_t conn = (uint32_t)nng_pipe_id(pipe);
    pthread_mutex_lock(&srv->peers_mu);
    size_t i = peer_slot(srv, conn);
    bool found = i < srv->n_peers && srv->peers[i].conn == conn;
    if (found)
        *peer = srv->peers[i];
    pthread_mutex_unlock(&srv->peers_mu);
    if (!found) /* a frame that beat the ADD_POST notification */
        read_peer(srv, pipe, peer);
}

/* At debug, a connection's coming or going; in JSON, its conn (as a
 * call's line's peer names it) and its listener's url are members. */
static void say_conn(const rpc_server *srv, nng_pipe pipe, const char *what)
{
    if (!obs_log_enabled(OBS_LOG_DEBUG))
        return;
    const rpc_listener *L = listener_of(srv, pipe);
    obs_field f[] = { OBS_INT("conn", (unsigned)nng_pipe_id(pipe)),
                      OBS_STR("url", L != NULL ? L->bound : "-") };
    obs_log_fields(OBS_LOG_DEBUG, f, 2, "connection %u %s",
                   (unsigned)nng_pipe_id(pipe), what);
}

/* A new connection during shutdown is refused (closing the listeners
 * instead would close their established connections too, and with them
 * the replies of the calls that shutdown lets finish). A closed
 * connection's calls are the registry's to end (registry.c). */
void rpc__pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
    rpc_server *srv = arg;
    if (ev == NNG_PIPE_EV_ADD_PRE) {
        /* Counted here, and uncounted at REM_POST, which NNG sends for
         * every pipe that had ADD_PRE, closed here or not. tk's NNG has
         * refused those over the limit already, counting handshakes too
         * (NNG_OPT_CONN_MAX); another counts them here. */
        rpc_listener *L = listener_of(srv, pipe);
        unsigned open = L != NULL ? atomic_fetch_add(&L->open, 1) : 0;
        if (atomic_load(&srv->stopping)) {
            nng_pipe_close(pipe);
        } else if (L != NULL && open >= L->limit) {
            atomic_fetch_add(&L->refused_here, 1);
            nng_pipe_close(pipe);
        }
        return;
    }
    if (ev == NNG_PIPE_EV_ADD_POST) {
        remember_peer(srv, pipe);
        say_conn(srv, pipe, "opened");
        return;
    }
    if (ev != NNG_PIPE_EV_REM_POST)
        return;
    uint32_t conn = (uint32_t)nng_pipe_id(pipe);
    rpc_listener *L = listener_of(srv, pipe);
    if (L != NULL)
        atomic_fetch_sub(&L->open, 1);
    say_conn(srv, pipe, "closed");
    forget_peer(srv, conn);
    rpc__connection_closed(srv, conn);
}
