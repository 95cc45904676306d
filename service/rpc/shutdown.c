/* SPDX-License-Identifier: MIT */
/*
 * Shutdown: READs cancelled, WRITEs given the grace and then stopped, the
 * threads and the socket closed (within a bound), and the server freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>

#include "rpc_int.h"

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
    tkc_cond_init(&c->cv);
    if (pthread_create(&t, NULL, closer_main, c) != 0) {
        closer_free(c);
        return false;
    }
    pthread_detach(t);
    int64_t until = rpc_now_ns() + rpc__ms_to_ns(SOCKET_CLOSE_BOUND_MS);
    pthread_mutex_lock(&c->mu);
    while (!c->done && tkc_cond_wait_until(&c->cv, &c->mu, until) != ETIMEDOUT)
        ;
    bool done = c->done;
    c->abandoned = !done;
    pthread_mutex_unlock(&c->mu);
    if (done) {
        closer_free(c);
        return true;
    }
    const obs_field f[] = { OBS_INT("close_bound_ms", SOCKET_CLOSE_BOUND_MS) };
    obs_log_fields(OBS_LOG_WARN, f, 1,
                   "shutdown: closing the socket has not ended after %d ms (a "
                   "known hang of NNG before 1.9.0, nanomsg/nng#1813); going "
                   "on without it",
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
    int64_t until = rpc_now_ns() + rpc__ms_to_ns(ms);
    while (calls_in_flight(srv))
        if (tkc_cond_wait_until(&srv->reg_cv, &srv->reg_mu, until) == ETIMEDOUT)
            return !calls_in_flight(srv);
    return true;
}

/* One line naming a call that is still running: what, which, and its
 * process group (pid=- when it runs none; no pid member in JSON then).
 * reg_mu held. */
static void log_running(const rpc_slot *s, const char *what)
{
    const rpc_call *call = &s->call;
    char pid[32] = "-";
    int64_t pgid = atomic_load(&call->pgid);
    if (pgid > 0)
        snprintf(pid, sizeof pid, "%lld", (long long)pgid);
    const char *kind = call->reg->method->kind == RPC_WRITE ? "WRITE" : "READ";
    long long running_ms = (rpc_now_ns() - call->t_recv) / 1000000;
    const obs_field f[] = {
        OBS_STR("method", call->reg->method->name),
        OBS_STR("kind", kind),
        OBS_INT("call_id", call->id),
        OBS_INT("conn", call->peer.conn),
        OBS_INT("running_ms", running_ms),
        OBS_INT("pid", pgid),
    };
    obs_log_fields(OBS_LOG_WARN, f, pgid > 0 ? 6 : 5,
                   "shutdown: %s: method=%s kind=%s id=%llu conn=%u pid=%s "
                   "running_ms=%lld",
                   what, call->reg->method->name, kind,
                   (unsigned long long)call->id, (unsigned)call->peer.conn, pid,
                   running_ms);
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
        else if (s->phase == PHASE_SENDING) {
            const obs_field f[] = { OBS_INT("call_id", s->sending.id),
                                    OBS_INT("conn", s->sending.conn) };
            obs_log_fields(OBS_LOG_WARN, f, 2,
                           "shutdown: a reply still being sent at exit: "
                           "id=%llu conn=%u",
                           (unsigned long long)s->sending.id,
                           (unsigned)s->sending.conn);
        }
    }
    return n;
}

/* Past the grace: stop, wait shutdown_stop_ms, report. reg_mu held.
 * Returns how many calls outlived the grace. */
static size_t end_outliving(rpc_server *srv)
{
    uint32_t grace = srv->cfg.shutdown_grace_ms;
    uint32_t stop = srv->cfg.shutdown_stop_ms;
    size_t outlived = count_in_flight(srv);
    obs_field f[] = { OBS_INT("running", outlived),
                      OBS_INT("shutdown_grace_ms", grace),
                      OBS_INT("shutdown_stop_ms", stop), OBS_INT("ended", 0),
                      OBS_INT("left", 0) };
    obs_log_fields(OBS_LOG_WARN, f, 3,
                   "shutdown: %zu call(s) still running after %u ms (the "
                   "grace): the writes among them are stopped, and given %u "
                   "ms to answer",
                   outlived, (unsigned)grace, (unsigned)stop);
    stop_outliving(srv);
    wait_for_calls(srv, stop);
    size_t left = report_left(srv);
    f[0] = OBS_INT("outlived", outlived);
    f[2] = OBS_INT("ended", outlived - left);
    f[3] = OBS_INT("left", left);
    obs_log_fields(OBS_LOG_WARN, f, 4,
                   "shutdown: %zu call(s) outlived the grace of %u ms: %zu "
                   "ended and answered, %zu left running (never answered)",
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
        if (rpc__cancellable(s))
            rpc_call__cancel(&s->call, RPC_CAUSE_SHUTDOWN);
        else if (s->phase == PHASE_RUNNING)
            writes++;
    }
    if (writes > 0) {
        const obs_field f[] = { OBS_INT("writes", writes) };
        obs_log_fields(OBS_LOG_INFO, f, 1, "shutdown: waiting for %zu write(s)",
                       writes);
    }
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
                  OBS_LOG_EXIT_FLUSH_MS;
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void rpc_server_free(rpc_server *srv)
{
    if (srv == NULL)
        return;
    rpc_server_shutdown(srv);
    /* No scrape runs past this: stop waits for the handler's. */
    rpc__metrics_http_stop(srv);
    if (srv->n_threads > 0 || srv->sock_open) {
        /* Calls outlived the grace: their threads still use the server.
         * The process is about to exit; leak rather than free under them. */
        return;
    }
    for (size_t i = 0; i < srv->n_slots; i++) {
        rpc_slot *s = &srv->slots[i];
        if (s->aio != NULL)
            nng_aio_free(s->aio);
        if (s->call.cancel.fd > 0) { /* 0: calloc's, never opened */
            rpc_call__reset(&s->call);
            port_event_close(&s->call.cancel);
        }
        rpc_arena__free(&s->call.arena);
    }
    free(srv->slots);
    rpc__registry_fini(srv);
    free(srv->queue);
    free(srv->threads);
    for (size_t i = 0; i < srv->n_methods; i++)
        free(srv->methods[i].stats);
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
    for (size_t i = 0; i < 4; i++)
        free(srv->kept[i]);
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
