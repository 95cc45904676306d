/* SPDX-License-Identifier: MIT */
/* File descriptors: the soft RLIMIT_NOFILE raised to the hard limit at
 * start; those free after start-up split between the calls' work and the
 * listeners, each listener's limit its part, and the split logged; a call
 * that runs out of descriptors ends RESOURCE_EXHAUSTED TOO_MANY_OPEN_FILES
 * with a retry_after_ms, and the log says so at most once a second,
 * counting the failures it did not log (when thousands of calls fail, one
 * line each would bury the log). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "rpc_int.h"

/* A retry_after_ms for a call that ran out of descriptors: roughly what the
 * calls running now take to end and close theirs (the average service
 * time), within these bounds. */
#define FDS_RETRY_MIN_MS 100
#define FDS_RETRY_MAX_MS 10000
/* At most one warning line this often. */
#define FDS_LOG_EVERY_NS 1000000000LL

/* What a running tool holds (for the capacity line): its stdout and
 * stderr pipes and a pidfd (proc.h). A connection holds one, its socket. */
#define FDS_PER_TOOL 3
/* Beyond the listeners' own sockets, what starting them may open (the
 * metrics listener's, NNG's resolver): not part of what is shared. */
#define FDS_START_MARGIN 8

static struct {
    pthread_mutex_t mu;
    int64_t last_ns; /* when the last warning was logged; 0: never */
    uint64_t unlogged;
    rlim_t raised_from; /* the soft limit before the raise; 0: not raised */
} fds = { .mu = PTHREAD_MUTEX_INITIALIZER };

bool rpc_fds_exhausted(int err)
{
    return err == EMFILE || err == ENFILE;
}

static rlim_t soft_limit(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
}

uint64_t rpc_fd_limit_raise(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur >= rl.rlim_max)
        return (uint64_t)rl.rlim_cur;
    struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
#ifdef __APPLE__
    /* macOS takes no soft limit above OPEN_MAX (setrlimit(2)). */
    if (want.rlim_cur > OPEN_MAX)
        want.rlim_cur = OPEN_MAX;
    if (rl.rlim_cur >= want.rlim_cur)
        return (uint64_t)rl.rlim_cur;
#endif
    if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
        char ebuf[128];
        const char *why = tkc_strerror(errno, ebuf, sizeof ebuf);
        obs_field f[] = { OBS_INT("soft_limit", rl.rlim_cur),
                          OBS_INT("hard_limit", rl.rlim_max),
                          OBS_STR("error", why) };
        obs_log_fields(OBS_LOG_WARN, f, 3,
                       "file descriptors: cannot raise the soft limit %llu to "
                       "the hard limit %llu: %s",
                       (unsigned long long)rl.rlim_cur,
                       (unsigned long long)rl.rlim_max, why);
        return (uint64_t)rl.rlim_cur;
    }
    pthread_mutex_lock(&fds.mu);
    fds.raised_from = rl.rlim_cur;
    pthread_mutex_unlock(&fds.mu);
    return (uint64_t)want.rlim_cur;
}

/* ---- the split ------------------------------------------------------------
 *
 * A connection holds a descriptor from its accept, its handshake included,
 * and with no limit a flood on one listener took them all: no listener
 * accepted, the local ipc socket included, and no call could start git.
 * So of the descriptors free once tkd has started, half are kept for the
 * calls' work (a running tool holds three, libgit2 a few a repository,
 * the database pool one a connection), which no listener may take; the
 * listeners share the other half, the local ones (ipc://) one half of it
 * and the network ones (with the metrics listener) the other, or a kind
 * alone all of it, in equal parts. A listener's limit is the smaller of
 * its part and RPC_DEFAULT_MAX_CONNECTIONS, or --max-connections as
 * given. So no listener, read-only or not, can take another's part or
 * the work's. */

static unsigned part_of(uint64_t count, size_t n)
{
    uint64_t part = n != 0 ? count / n : 0;
    return part > UINT_MAX ? UINT_MAX : (unsigned)part;
}

void rpc__share_fds(rpc_server *srv)
{
    const rpc_config *c = &srv->cfg;
    size_t n_local = 0, n_net = c->metrics_listen != NULL ? 1 : 0;
    for (size_t i = 0; i < srv->n_listeners; i++)
        *(srv->listeners[i].local ? &n_local : &n_net) += 1;
    rlim_t limit = soft_limit();
    long used = port_fds_open();
    srv->fds_limit = (uint64_t)limit;
    srv->fds_used = limit == RLIM_INFINITY ? -1 : used;
    uint64_t free = 0;
    if (srv->fds_used >= 0) {
        uint64_t taken = (uint64_t)used + srv->n_listeners + FDS_START_MARGIN;
        free = (uint64_t)limit > taken ? (uint64_t)limit - taken : 0;
    }
    uint64_t listeners = free / 2;
    srv->fds_work = free - listeners;
    uint64_t local = n_net == 0 ? listeners : n_local == 0 ? 0 : listeners / 2;
    unsigned local_part = part_of(local, n_local);
    unsigned net_part = part_of(listeners - local, n_net);
    if (srv->fds_used < 0) /* no count to split: the default alone */
        local_part = net_part = UINT_MAX;
    srv->metrics_part = net_part;
    for (size_t i = 0; i < srv->n_listeners; i++) {
        rpc_listener *L = &srv->listeners[i];
        unsigned part = L->local ? local_part : net_part;
        if (c->max_connections != 0)
            L->limit = c->max_connections;
        else if (part < RPC_DEFAULT_MAX_CONNECTIONS)
            L->limit = part > 0 ? part : 1;
        else
            L->limit = RPC_DEFAULT_MAX_CONNECTIONS;
        L->part = part;
    }
}

/* A warning for each listener whose limit passes its part: given so, or
 * a part of none at all. */
static void warn_over_parts(const rpc_server *srv)
{
    for (size_t i = 0; i < srv->n_listeners; i++) {
        const rpc_listener *L = &srv->listeners[i];
        if (L->limit <= L->part)
            continue;
        obs_field f[] = { OBS_STR("url", L->bound),
                          OBS_INT("max_connections", L->limit),
                          OBS_INT("fds_part", L->part) };
        if (srv->cfg.max_connections != 0)
            obs_log_fields(OBS_LOG_WARN, f, 3,
                           "%s: --max-connections %u is more than its part of "
                           "the file descriptors (%u): a flood there can take "
                           "those the calls' work and the other listeners "
                           "need",
                           L->bound, L->limit, L->part);
        else
            obs_log_fields(OBS_LOG_WARN, f, 3,
                           "%s: no file descriptors to spare for it, so it "
                           "takes one connection at a time: raise the limit "
                           "(ulimit -n) or lower --workers and --queue-depth, "
                           "which hold some each",
                           L->bound);
    }
}

void rpc_fd_log_capacity(const rpc_server *srv)
{
    pthread_mutex_lock(&fds.mu);
    rlim_t from = fds.raised_from;
    pthread_mutex_unlock(&fds.mu);
    char raised[96] = "";
    if (from != 0)
        snprintf(raised, sizeof raised, " (raised from %llu to the hard limit)",
                 (unsigned long long)from);
    /* In JSON, the numbers the line says: no count when there was none to
     * make (an unlimited soft limit), no raised_from when not raised. */
    obs_field f[5] = { OBS_INT("fds_limit", srv->fds_limit),
                       OBS_INT("fds_in_use", srv->fds_used),
                       OBS_INT("fds_for_work", srv->fds_work),
                       OBS_INT("fds_per_tool", FDS_PER_TOOL) };
    size_t nf = srv->fds_used < 0 ? 1 : 4;
    if (from != 0)
        f[nf++] = OBS_INT("raised_from", from);
    if (srv->fds_used < 0) {
        obs_log_fields(OBS_LOG_INFO, f, nf, "file descriptors: limit %llu%s",
                       (unsigned long long)srv->fds_limit, raised);
        return;
    }
    obs_log_fields(OBS_LOG_INFO, f, nf,
                   "file descriptors: limit %llu%s, %ld in use after "
                   "start-up: %llu kept for the calls' work (git, search "
                   "tools, libgit2, PostgreSQL; a running tool holds %d), the "
                   "rest shared by the listeners (each listening line says "
                   "its limit)",
                   (unsigned long long)srv->fds_limit, raised, srv->fds_used,
                   (unsigned long long)srv->fds_work, FDS_PER_TOOL);
    warn_over_parts(srv);
}

static uint32_t fds_retry_after(const rpc_call *call)
{
    int64_t ms = FDS_RETRY_MIN_MS;
    if (call->slot != NULL)
        ms = atomic_load(&call->slot->srv->avg_service_us) / 1000;
    if (ms < FDS_RETRY_MIN_MS)
        ms = FDS_RETRY_MIN_MS;
    if (ms > FDS_RETRY_MAX_MS)
        ms = FDS_RETRY_MAX_MS;
    return (uint32_t)ms;
}

/* The warning, unless one was logged less than a second ago (then it is
 * counted, and the next line says how many went unlogged). */
static void log_exhausted(const rpc_call *call, int err, const char *what)
{
    int64_t now = rpc_now_ns();
    pthread_mutex_lock(&fds.mu);
    bool due = fds.last_ns == 0 || now - fds.last_ns >= FDS_LOG_EVERY_NS;
    uint64_t unlogged = fds.unlogged;
    if (due) {
        fds.last_ns = now;
        fds.unlogged = 0;
    } else {
        fds.unlogged++;
    }
    pthread_mutex_unlock(&fds.mu);
    if (!due)
        return;
    char more[96] = "";
    if (unlogged > 0)
        snprintf(more, sizeof more,
                 "; %llu more such call(s) since the last line",
                 (unsigned long long)unlogged);
    const char *method = call->reg != NULL ? call->reg->method->name : "-";
    obs_field f[] = { OBS_STR("error", err == ENFILE ? "ENFILE" : "EMFILE"),
                      OBS_INT("soft_limit", soft_limit()),
                      OBS_STR("method", method),
                      OBS_INT("call_id", call->id),
                      OBS_INT("conn", call->peer.conn),
                      OBS_STR("what", what),
                      OBS_INT("unlogged", unlogged) };
    obs_log_fields(OBS_LOG_WARN, f, sizeof f / sizeof f[0],
                   "out of file descriptors (%s, soft limit %llu): method=%s "
                   "id=%llu conn=%u: %s%s",
                   err == ENFILE ? "ENFILE: the system's table is full"
                                 : "EMFILE: tkd's own limit",
                   (unsigned long long)soft_limit(), method,
                   (unsigned long long)call->id, (unsigned)call->peer.conn,
                   what, more);
}

void rpc_call_fail_fds(rpc_call *call, int err, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    log_exhausted(call, err, what);
    if (err == ENFILE)
        rpc_call_fail(call, RPC_RESOURCE_EXHAUSTED, RPC_R_TOO_MANY_OPEN_FILES,
                      "%s: the system's file table is full; try again later",
                      what);
    else
        rpc_call_fail(call, RPC_RESOURCE_EXHAUSTED, RPC_R_TOO_MANY_OPEN_FILES,
                      "%s: tkd has used up its %llu file descriptors "
                      "(RLIMIT_NOFILE); try again later",
                      what, (unsigned long long)soft_limit());
    rpc_call_set_retry_after(call, fds_retry_after(call));
}
