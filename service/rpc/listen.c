/* Listeners and connections: binding each --listen address, the
 * credentials of each connection (read once, when it is added), and the
 * connections' comings and goings. What a connection's calls become when
 * it closes is the registry's (server.c). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "rpc_int.h"

int rpc__start_listener(rpc_server *srv, const char *url, nng_listener *l,
                        char *err, size_t errlen)
{
    int rv = nng_listener_create(l, srv->sock, url);
    if (rv != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", url, nng_strerror(rv));
        return -EINVAL;
    }
    /* NNG's default is unlimited: one huge frame must not take the daemon's
     * memory. Larger frames close that connection. */
    rv = nng_listener_set_size(*l, NNG_OPT_RECVMAXSZ,
                               srv->cfg.max_request_bytes);
    if (rv == 0 && strncmp(url, "ipc://", 6) == 0)
        rv = nng_listener_set_int(*l, NNG_OPT_IPC_PERMISSIONS, 0600);
    if (rv != 0) {
        snprintf(err, errlen, "cannot configure %s: %s", url, nng_strerror(rv));
        return -EINVAL;
    }
    rv = nng_listener_start(*l, 0);
    if (rv != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", url, nng_strerror(rv));
        return rv == NNG_EADDRINUSE ? -EADDRINUSE : -EINVAL;
    }
    return 0;
}

/* The credentials the transport knows of a connection (ipc only). */
static void read_peer(nng_pipe pipe, rpc_peer *peer)
{
    uint64_t v;
    peer->conn = (uint32_t)nng_pipe_id(pipe);
    peer->uid = -1;
    peer->pid = -1;
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
    read_peer(pipe, &p);
    pthread_mutex_lock(&srv->peers_mu);
    size_t i = peer_slot(srv, p.conn);
    bool present = i < srv->n_peers && srv->peers[i].conn == p.conn;
    if (!present && srv->n_peers == srv->cap_peers) {
        size_t cap = srv->cap_peers ? srv->cap_peers * 2 : 64;
        rpc_peer *np = realloc(srv->peers, cap * sizeof *np);
        if (np == NULL) {
            /* Not cached: rpc__peer_of reads it for each call instead. */
            pthread_mutex_unlock(&srv->peers_mu);
            return;
        }
        srv->peers = np;
        srv->cap_peers = cap;
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
        read_peer(pipe, peer);
}

/* A new connection during shutdown is refused (closing the listeners
 * instead would close their established connections too, and with them
 * the replies of the calls that shutdown lets finish). A closed
 * connection's calls are the registry's to end (server.c). */
void rpc__pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
    rpc_server *srv = arg;
    if (ev == NNG_PIPE_EV_ADD_PRE) {
        if (atomic_load(&srv->stopping))
            nng_pipe_close(pipe);
        return;
    }
    if (ev == NNG_PIPE_EV_ADD_POST) {
        remember_peer(srv, pipe);
        return;
    }
    if (ev != NNG_PIPE_EV_REM_POST)
        return;
    uint32_t conn = (uint32_t)nng_pipe_id(pipe);
    forget_peer(srv, conn);
    rpc__connection_closed(srv, conn);
}
