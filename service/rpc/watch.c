/* SPDX-License-Identifier: MIT */
/* The listener watch: once a second, the refusals and errors that NNG
 * only counts (a connection over a listener's limit, a handshake that
 * failed or took too long, a frame too large), counted for the metrics
 * and logged, a line a kind a listener at most; and the heap given back
 * after a burst (trim.c). The listeners themselves are listen.c's. */
#include <stdatomic.h>
#include <string.h>

#include <nng/nng.h>

#include "rpc_int.h"

/* NNG's name of the counter of each kind, the reason a JSON line and
 * tk_connections_refused_total (stats.c) name it by, and what a count
 * means (the limit's, the handshake's and the frame's are said with
 * their numbers: say()). */
static const struct {
    const char *stat;
    const char *reason;
    const char *meaning;
} kinds[RPC_REFUSED_KINDS] = {
    [RPC_REFUSED_LIMIT] = { "conn_refused", "LIMIT", NULL },
    [RPC_REFUSED_HANDSHAKE] = { "timeout", "HANDSHAKE_TIMEOUT", NULL },
    [RPC_REFUSED_AUTH] = { "auth", "TLS",
                           "failed the TLS handshake: a client with no "
                           "certificate or one the clients' CA did not "
                           "sign, or a client that refused tkd's" },
    [RPC_REFUSED_PROTO] = { "proto", "PROTOCOL",
                            "did not speak NNG's REQ protocol" },
    /* tk's NNG counts a client's close as "discon" (nng-patches/08). */
    [RPC_REFUSED_OTHER] = { "other", "OTHER",
                            "ended in an error NNG names no further (a "
                            "peer that hung up during the handshake, or, "
                            "with an NNG without tk's patches, a close)" },
    [RPC_REFUSED_FRAME] = { "msgsize", "REQUEST_TOO_LARGE", NULL },
    [RPC_REFUSED_ACCEPT] = { "oom", "ACCEPT",
                             "could not be accepted (out of memory)" },
};

const char *rpc__refused_reason(int k)
{
    return k >= 0 && k < RPC_REFUSED_KINDS ? kinds[k].reason : NULL;
}

/* The statistics of listener id. Not nng_stat_find_listener: in NNG 1.5.2
 * it searches the children by name alone and returns the first listener's,
 * whatever the id. */
static nng_stat *listener_stats(nng_stat *st, int id)
{
    if (nng_stat_type(st) == NNG_STAT_SCOPE &&
        strcmp(nng_stat_name(st), "listener") == 0) {
        nng_stat *sid = nng_stat_find(st, "id");
        return sid != NULL && nng_stat_value(sid) == (uint64_t)id ? st : NULL;
    }
    for (nng_stat *c = nng_stat_child(st); c != NULL; c = nng_stat_next(c)) {
        nng_stat *found = listener_stats(c, id);
        if (found != NULL)
            return found;
    }
    return NULL;
}

/* The line for n more connections of kind k on L; in JSON, its values are
 * members too: the listener's url, the connections, the reason, and the
 * limit the line names (named as the options are). */
static void say(const rpc_server *srv, const rpc_listener *L, int k,
                unsigned long long n)
{
    obs_field f[4] = { OBS_STR("url", L->bound), OBS_INT("connections", n),
                       OBS_STR("reason", kinds[k].reason) };
    if (k == RPC_REFUSED_LIMIT) {
        f[3] = OBS_INT("max_connections", L->limit);
        obs_log_fields(OBS_LOG_WARN, f, 4,
                       "%s: refused %llu connection(s): %u were open, its "
                       "limit (handshakes included)",
                       L->bound, n, L->limit);
    } else if (k == RPC_REFUSED_HANDSHAKE) {
        f[3] = OBS_INT("handshake_timeout_ms", srv->cfg.handshake_timeout_ms);
        obs_log_fields(OBS_LOG_WARN, f, 4,
                       "%s: %llu connection(s) did not finish the handshake "
                       "within %u ms (--handshake-timeout-ms), closed",
                       L->bound, n, srv->cfg.handshake_timeout_ms);
    } else if (k == RPC_REFUSED_FRAME) {
        f[3] = OBS_INT("max_request_bytes", srv->cfg.max_request_bytes);
        obs_log_fields(OBS_LOG_WARN, f, 4,
                       "%s: %llu connection(s) closed: a request frame larger "
                       "than the limit, %zu bytes (--max-request-bytes)",
                       L->bound, n, srv->cfg.max_request_bytes);
    } else { /* an NNG without nng-patches/08 counts every close as "other" */
        obs_log_fields(k != RPC_REFUSED_OTHER ? OBS_LOG_WARN
                       : L->closes_apart      ? OBS_LOG_INFO
                                              : OBS_LOG_DEBUG,
                       f, 3, "%s: %llu connection(s) %s", L->bound, n,
                       kinds[k].meaning);
    }
}

/* Logs what grew since the last look: at most one line a kind a listener
 * a second, however many connections a flood brings. */
static void look(rpc_server *srv)
{
    nng_stat *all;
    if (nng_stats_get(&all) != 0)
        return;
    for (size_t i = 0; i < srv->n_listeners; i++) {
        rpc_listener *L = &srv->listeners[i];
        nng_stat *ls =
            L->started ? listener_stats(all, nng_listener_id(L->l)) : NULL;
        if (ls != NULL)
            L->closes_apart = nng_stat_find(ls, "msgsize") != NULL;
        for (int k = 0; ls != NULL && k < RPC_REFUSED_KINDS; k++) {
            nng_stat *st = nng_stat_find(ls, kinds[k].stat);
            uint64_t v = st != NULL ? nng_stat_value(st) : 0;
            if (k == RPC_REFUSED_LIMIT)
                v += atomic_load(&L->refused_here);
            if (v <= L->logged[k])
                continue;
            /* Counted before it is logged: a line read means the count
             * is there to read too. */
            atomic_fetch_add(&srv->refused[k], v - L->logged[k]);
            say(srv, L, k, (unsigned long long)(v - L->logged[k]));
            L->logged[k] = v;
        }
    }
    nng_stats_free(all);
}

void *rpc__watch_main(void *arg)
{
    rpc_server *srv = arg;
    pthread_mutex_lock(&srv->watch_mu);
    while (!srv->watch_stop) {
        tkc_cond_wait_until(&srv->watch_cv, &srv->watch_mu,
                            rpc_now_ns() + 1000000000);
        if (!srv->watch_stop) {
            look(srv);
            rpc__heap_look(srv);
        }
    }
    pthread_mutex_unlock(&srv->watch_mu);
    return NULL;
}
