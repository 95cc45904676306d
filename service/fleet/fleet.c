/* SPDX-License-Identifier: MIT */
/* The membership: one heartbeat thread refreshes this node's row and reads
 * the live table every heartbeat, and keeps that reading, with the
 * monotonic time it was taken, for ListNodes to answer from. What fails
 * is logged when it starts failing, when the failure changes and when it
 * ends, never every beat; the table's changes (a node joins, drains,
 * leaves) at info. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet_int.h"
#include "common/common.h"
#include "port/port.h"
#include "tk/v1/control.pb-c.h"

/* How long fleet_join may take at start. */
#define JOIN_MS 5000u
/* The shortest statement_timeout, whatever the heartbeat. */
#define MIN_STMT_MS 500u
/* A server that does not answer at all: the wait past statement_timeout. */
#define NO_ANSWER_MS 1000u

struct fleet {
    char *node_id, *address, *dsn, *version;
    char *roots_literal; /* text[] */
    char instance[33];   /* hex: this process's token */
    uint32_t heartbeat_ms, ttl_ms;
    fleet_pg pg;      /* the heartbeat thread's (fleet_join's before) */
    port_event abort; /* set: stop waiting for the database */
    pthread_t thread;
    bool joined;         /* fleet_join claimed the row */
    bool started;        /* the heartbeat thread runs */
    fleet_reading shown; /* the thread's: the last reading it logged */
    bool failing;        /* the thread's: the last beat failed */
    char logged[512];    /* the thread's: the failure it logged last */
    bool held;           /* the thread's: a claim of the row succeeded */
    int64_t held_ns;     /* the thread's: when the last one did */

    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cv;
    bool stop;
    bool draining;
    bool drain_pending; /* a beat with draining set is wanted */
    bool drain_ok;
    fleet_reading reading;
    bool have_reading;
    int64_t read_ns;  /* monotonic, when reading was taken */
    time_t read_wall; /* the same, by the wall clock */
    int64_t start_ns; /* fleet_new, monotonic and wall */
    time_t start_wall;
    char error[512]; /* why the last beat failed; "" when it did not */
    /* The row was taken from this running node (beat): it no longer
     * advertises, and ListNodes answers MEMBERSHIP_STALE saying so. */
    bool taken;
    time_t taken_wall;
};

int fleet_check_node_id(const char *id, char *err, size_t errlen)
{
    size_t n = strlen(id);
    bool ok = n >= 1 && n <= FLEET_MAX_ID;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)id[i]) || strchr("._-", id[i]) != NULL;
    if (!ok)
        snprintf(err, errlen,
                 "--node-id is 1 to %d of the characters A-Z a-z 0-9 . _ -, "
                 "not \"%.80s\"",
                 FLEET_MAX_ID, id);
    return ok ? 0 : -1;
}

/* Whether host (as spelled in a URL) is one that nobody can dial. */
static bool wildcard_host(const char *host, size_t n)
{
    static const char *const any[] = { "*", "0.0.0.0", "[::]", "::" };
    for (size_t i = 0; i < sizeof any / sizeof any[0]; i++)
        if (strlen(any[i]) == n && strncmp(host, any[i], n) == 0)
            return true;
    return false;
}

int fleet_check_advertise(const char *url, bool allow_plain_tcp, char *err,
                          size_t errlen)
{
    const char *rest = NULL;
    if (strncmp(url, "tls+tcp://", 10) == 0)
        rest = url + 10;
    else if (allow_plain_tcp && strncmp(url, "tcp://", 6) == 0)
        rest = url + 6;
    const char *colon = rest != NULL ? strrchr(rest, ':') : NULL;
    const char *port = colon != NULL ? colon + 1 : "";
    char *end = NULL;
    long p = strtol(port, &end, 10);
    bool ok = colon != NULL && colon > rest && port[0] >= '0' &&
              port[0] <= '9' && *end == '\0' && p >= 1 && p <= 65535 &&
              strchr(rest, '/') == NULL &&
              !wildcard_host(rest, (size_t)(colon - rest));
    if (!ok && !allow_plain_tcp && strncmp(url, "tcp://", 6) == 0)
        snprintf(err, errlen,
                 "--advertise tcp:// needs --insecure-plain-tcp (tcp:// "
                 "authenticates no one): pass tls+tcp://HOST:PORT, not "
                 "\"%.120s\"",
                 url);
    else if (!ok)
        snprintf(err, errlen,
                 "--advertise wants the address clients dial, "
                 "tls+tcp://HOST:PORT%s (a host that is no wildcard, a port "
                 "from 1 to 65535), not \"%.120s\"",
                 allow_plain_tcp ? " or tcp://HOST:PORT" : "", url);
    return ok ? 0 : -1;
}

/* The resolved roots as a PostgreSQL text[] literal: {"a","b"}. */
static char *roots_literal(const roots *r)
{
    size_t n = roots_count(r), len = 3;
    for (size_t i = 0; i < n; i++)
        len += 2 * strlen(roots_get(r, i)) + 3;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    char *p = out;
    *p++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '"';
        for (const char *s = roots_get(r, i); *s != '\0'; s++) {
            if (*s == '"' || *s == '\\')
                *p++ = '\\';
            *p++ = *s;
        }
        *p++ = '"';
    }
    *p++ = '}';
    *p = '\0';
    return out;
}

/* A token no other process has: 16 bytes of /dev/urandom in hex (or, where
 * it cannot be read, the pid and the clocks, unique enough on one host). */
static void make_instance(char out[33])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof b) {
        uint64_t a = (uint64_t)getpid() ^ ((uint64_t)time(NULL) << 20);
        uint64_t c = (uint64_t)tkc_mono_ns();
        memcpy(b, &a, 8);
        memcpy(b + 8, &c, 8);
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static uint32_t stmt_ms(uint32_t heartbeat_ms)
{
    return heartbeat_ms > MIN_STMT_MS ? heartbeat_ms : MIN_STMT_MS;
}

/* What fleet_new allocates besides the lock and the condition: its
 * copies of the configuration, the abort event, and f. */
static void release(fleet *f)
{
    port_event_close(&f->abort);
    free(f->node_id);
    free(f->address);
    free(f->dsn);
    free(f->version);
    free(f->roots_literal);
    free(f);
}

int fleet_new(fleet **out, const fleet_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    fleet *f = calloc(1, sizeof *f);
    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    f->abort = PORT_EVENT_NONE;
    f->heartbeat_ms =
        cfg->heartbeat_ms != 0 ? cfg->heartbeat_ms : FLEET_DEFAULT_HEARTBEAT_MS;
    f->ttl_ms = cfg->ttl_ms != 0 ? cfg->ttl_ms : 3 * f->heartbeat_ms;
    f->node_id = strdup(cfg->node_id);
    f->address = strdup(cfg->address);
    f->dsn = strdup(cfg->dsn);
    f->version = strdup(cfg->version != NULL ? cfg->version : "");
    f->roots_literal = roots_literal(cfg->roots);
    int rv = 0;
    if (f->node_id == NULL || f->address == NULL || f->dsn == NULL ||
        f->version == NULL || f->roots_literal == NULL)
        rv = -ENOMEM;
    if (rv == 0)
        rv = port_event_open(&f->abort);
    if (rv == 0)
        rv = -tkc_cond_init(&f->cv);
    if (rv != 0) {
        snprintf(err, errlen, "fleet: cannot start: %s",
                 rv == -ENOMEM ? "out of memory" : "no event");
        release(f);
        return rv;
    }
    pthread_mutex_init(&f->mu, NULL);
    make_instance(f->instance);
    f->pg = (fleet_pg){ .dsn = f->dsn,
                        .stmt_ms = stmt_ms(f->heartbeat_ms),
                        .abort_fd = -1 };
    f->start_ns = tkc_mono_ns();
    f->start_wall = time(NULL);
    *out = f;
    return 0;
}

/* ---- the table's changes, logged --------------------------------------- */

static const fleet_node *find(const fleet_reading *r, const char *id)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->nodes[i].node_id, id) == 0)
            return &r->nodes[i];
    return NULL;
}

/* Logs how now differs from what was logged last. */
static void log_changes(fleet *f, const fleet_reading *now)
{
    for (size_t i = 0; i < now->n; i++) {
        const fleet_node *n = &now->nodes[i];
        const fleet_node *was = find(&f->shown, n->node_id);
        const char *self =
            strcmp(n->node_id, f->node_id) == 0 ? " (this node)" : "";
        if (was == NULL || strcmp(was->address, n->address) != 0)
            rpc_log(RPC_LOG_INFO, "fleet: node %s joined at %s%s", n->node_id,
                    n->address, self);
        if (n->draining && (was == NULL || !was->draining))
            rpc_log(RPC_LOG_INFO, "fleet: node %s is draining%s", n->node_id,
                    self);
    }
    for (size_t i = 0; i < f->shown.n; i++)
        if (find(now, f->shown.nodes[i].node_id) == NULL)
            rpc_log(RPC_LOG_INFO, "fleet: node %s left",
                    f->shown.nodes[i].node_id);
}

/* A copy of r for the log's comparison: ids, addresses and draining. */
static void remember(fleet *f, const fleet_reading *r)
{
    fleet__reading_free(&f->shown);
    f->shown.nodes = calloc(r->n > 0 ? r->n : 1, sizeof *f->shown.nodes);
    if (f->shown.nodes == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        fleet_node *c = &f->shown.nodes[f->shown.n];
        c->node_id = strdup(r->nodes[i].node_id);
        c->address = strdup(r->nodes[i].address);
        c->draining = r->nodes[i].draining;
        if (c->node_id == NULL || c->address == NULL) {
            free(c->node_id);
            free(c->address);
            c->node_id = c->address = NULL;
            continue;
        }
        f->shown.n++;
    }
}

/* ---- one heartbeat ------------------------------------------------------- */

static void beat_failed(fleet *f, const char *why)
{
    pthread_mutex_lock(&f->mu);
    snprintf(f->error, sizeof f->error, "%s", why);
    pthread_mutex_unlock(&f->mu);
    if (!f->failing || strcmp(f->logged, why) != 0)
        rpc_log(RPC_LOG_WARN,
                "fleet: node %s: %s (membership not refreshed; tried every "
                "%u ms)",
                f->node_id, why, f->heartbeat_ms);
    snprintf(f->logged, sizeof f->logged, "%s", why);
    f->failing = true;
}

static void beat_ok(fleet *f, fleet_reading *r)
{
    int64_t now = tkc_mono_ns();
    f->held = true;
    f->held_ns = now;
    pthread_mutex_lock(&f->mu);
    int64_t since = f->have_reading ? f->read_ns : f->start_ns;
    fleet__reading_free(&f->reading);
    f->reading = *r;
    f->have_reading = true;
    f->read_ns = now;
    f->read_wall = time(NULL);
    f->error[0] = '\0';
    pthread_mutex_unlock(&f->mu);
    /* Logged once ListNodes answers it: a reader of the log who then asks
     * is told what the line says. This thread is the reading's only
     * writer, so it reads it without the lock. */
    log_changes(f, &f->reading);
    remember(f, &f->reading);
    if (f->failing)
        rpc_log(RPC_LOG_INFO,
                "fleet: node %s: membership refreshed again after %" PRId64
                " ms",
                f->node_id, (now - since) / FLEET_MS);
    f->failing = false;
}

/* Claims the row (draining as given) and reads the table: 1 done, 0 the
 * id is held by another live tkd (*holder), -1 failed (f->pg.message). */
static int claim_and_read(fleet *f, bool draining, fleet_holder *holder,
                          fleet_reading *r, int64_t until_ns)
{
    fleet_row row = { .node_id = f->node_id,
                      .address = f->address,
                      .roots = f->roots_literal,
                      .version = f->version,
                      .instance = f->instance,
                      .draining = draining,
                      .ttl_ms = f->ttl_ms };
    if (fleet__pg_open(&f->pg, until_ns) != 0)
        return -1;
    int claimed = fleet__pg_claim(&f->pg, &row, holder, until_ns);
    if (claimed <= 0)
        return claimed;
    return fleet__pg_read(&f->pg, f->ttl_ms, r, until_ns) == 0 ? 1 : -1;
}

static void held_message(const fleet *f, const fleet_holder *h, char *out,
                         size_t len)
{
    snprintf(out, len,
             "node id %s is held by the tkd at %s, whose heartbeat is %" PRId64
             " ms old (younger than --node-ttl-ms %u): stop that one or pick "
             "another --node-id",
             f->node_id, h->address, h->age_ms, f->ttl_ms);
}

/* The row this node held was taken by another instance: whoever did it
 * could write the database, and the row now names another process for
 * this node's id. Fighting back (a claim a beat) would only flap the
 * address between the two; so the node stops advertising, says why once,
 * at error, and ListNodes answers MEMBERSHIP_STALE from now on. */
static void taken(fleet *f, const fleet_holder *h)
{
    int64_t quiet_ms = (tkc_mono_ns() - f->held_ns) / FLEET_MS;
    fleet__pg_close(&f->pg); /* the database is not touched again */
    pthread_mutex_lock(&f->mu);
    f->taken = true;
    f->taken_wall = time(NULL);
    pthread_mutex_unlock(&f->mu);
    rpc_log(RPC_LOG_ERROR,
            "fleet: node %s: its row in tk_nodes was taken over while it "
            "ran: instance %s, address %s (this process is instance %s; its "
            "last heartbeat was %" PRId64 " ms ago, --node-ttl-ms %u)%s; this "
            "node stops advertising and ListNodes answers MEMBERSHIP_STALE "
            "until tkd restarts",
            f->node_id, h->instance, h->address, f->instance, quiet_ms,
            f->ttl_ms,
            quiet_ms < (int64_t)f->ttl_ms
                ? ": no tkd claims a live row, so someone who can write the "
                  "database rewrote it"
                : ": another tkd with this id may have started while this "
                  "node could not reach the database");
}

/* One heartbeat: 0 or -1 (logged). */
static int beat(fleet *f, bool draining)
{
    int64_t until =
        tkc_mono_ns() + (int64_t)(f->pg.stmt_ms + NO_ANSWER_MS) * 3 * FLEET_MS;
    fleet_holder holder;
    fleet_reading r;
    int rv = claim_and_read(f, draining, &holder, &r, until);
    if (rv == 1) {
        beat_ok(f, &r);
        return 0;
    }
    if (rv == 0 && f->held) {
        taken(f, &holder);
        return -1;
    }
    char why[512];
    if (rv == 0)
        held_message(f, &holder, why, sizeof why);
    beat_failed(f, rv == 0 ? why : f->pg.message);
    return -1;
}

int fleet_join(fleet *f, char *err, size_t errlen)
{
    int64_t until = tkc_mono_ns() + (int64_t)JOIN_MS * FLEET_MS;
    fleet_holder holder;
    fleet_reading r;
    int rv = claim_and_read(f, false, &holder, &r, until);
    if (rv == 0) {
        held_message(f, &holder, err, errlen);
        fleet__pg_close(&f->pg);
        return -EEXIST;
    }
    f->joined = rv == 1;
    if (rv == 1)
        beat_ok(f, &r);
    else
        beat_failed(f, f->pg.message);
    return 0;
}

/* ---- the heartbeat thread ------------------------------------------------ */

/* Deletes the row, within FLEET_STOP_MS; not one that was taken, which
 * is no longer this node's. */
static void leave(fleet *f)
{
    pthread_mutex_lock(&f->mu);
    bool gone = f->taken;
    pthread_mutex_unlock(&f->mu);
    if (gone) {
        fleet__pg_close(&f->pg);
        return;
    }
    int64_t until = tkc_mono_ns() + (int64_t)FLEET_STOP_MS * FLEET_MS;
    f->pg.abort_fd = -1;
    if (fleet__pg_delete(&f->pg, f->node_id, f->instance, until) == 0)
        rpc_log(RPC_LOG_INFO, "fleet: node %s left the table", f->node_id);
    else
        rpc_log(RPC_LOG_WARN,
                "fleet: node %s: could not delete its row (%s); it drops "
                "out when its heartbeat is %u ms old",
                f->node_id, f->pg.message, f->ttl_ms);
    fleet__pg_close(&f->pg);
}

static void *run(void *arg)
{
    fleet *f = arg;
    int64_t next = tkc_mono_ns() + (int64_t)f->heartbeat_ms * FLEET_MS;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->stop && !f->drain_pending && tkc_mono_ns() < next)
            tkc_cond_wait_until(&f->cv, &f->mu, next);
        if (f->stop)
            break;
        bool draining = f->draining, drain = f->drain_pending;
        bool gone = f->taken;
        pthread_mutex_unlock(&f->mu);
        int64_t t0 = tkc_mono_ns();
        int rv = gone ? -1 : beat(f, draining);
        next = t0 + (int64_t)f->heartbeat_ms * FLEET_MS;
        pthread_mutex_lock(&f->mu);
        if (drain) {
            f->drain_pending = false;
            f->drain_ok = rv == 0;
            pthread_cond_broadcast(&f->cv);
        }
    }
    pthread_mutex_unlock(&f->mu);
    leave(f);
    return NULL;
}

int fleet_start(fleet *f, char *err, size_t errlen)
{
    f->pg.abort_fd = f->abort.fd;
    int rv = pthread_create(&f->thread, NULL, run, f);
    if (rv != 0) {
        char ebuf[128];
        snprintf(err, errlen, "fleet: no heartbeat thread: %s",
                 tkc_strerror(rv, ebuf, sizeof ebuf));
        return -rv;
    }
    f->started = true;
    return 0;
}

/* rpc's stop hook: the row says draining before tkd stops accepting. The
 * heartbeat thread writes it (the connection is its own); this waits for
 * that beat, FLEET_STOP_MS at most. */
static void drain(void *arg)
{
    fleet *f = arg;
    int64_t until = tkc_mono_ns() + (int64_t)FLEET_STOP_MS * FLEET_MS;
    pthread_mutex_lock(&f->mu);
    f->draining = true;
    f->drain_pending = f->started;
    pthread_cond_broadcast(&f->cv);
    while (f->drain_pending && tkc_mono_ns() < until)
        tkc_cond_wait_until(&f->cv, &f->mu, until);
    bool pending = f->drain_pending, ok = f->drain_ok, gone = f->taken;
    pthread_mutex_unlock(&f->mu);
    if (gone)
        rpc_log(RPC_LOG_INFO,
                "fleet: node %s: not marked draining: its row was taken over",
                f->node_id);
    else if (!pending && ok)
        rpc_log(RPC_LOG_INFO, "fleet: node %s marked draining", f->node_id);
    else
        rpc_log(RPC_LOG_WARN,
                "fleet: node %s: could not mark its row draining within %u "
                "ms; stopping anyway",
                f->node_id, FLEET_STOP_MS);
}

/* ---- ListNodes ----------------------------------------------------------- */

/* t as 2006-01-02T15:04:05Z, or "?". */
static void utc_text(time_t t, char *out, size_t len)
{
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL ||
        strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, len, "?");
}

/* When the reading is old, or the row was taken, the answer is no table
 * rather than one nobody can vouch for. */
static void fail_stale(const fleet *f, rpc_call *call, int64_t now)
{
    bool read = f->have_reading;
    int64_t ago = (now - (read ? f->read_ns : f->start_ns)) / FLEET_MS;
    char when[32];
    utc_text(f->taken ? f->taken_wall
             : read   ? f->read_wall
                      : f->start_wall,
             when, sizeof when);
    if (f->taken)
        rpc_call_fail(call, RPC_UNAVAILABLE, "MEMBERSHIP_STALE",
                      "node %s stopped advertising at %s: its row in "
                      "tk_nodes was taken over by another process (tkd's "
                      "log says which); it serves the calls sent to it, but "
                      "vouches for no table until it restarts",
                      f->node_id, when);
    else
        rpc_call_fail(call, RPC_UNAVAILABLE, "MEMBERSHIP_STALE",
                      "node %s has not read the membership from PostgreSQL "
                      "since %s%s (%" PRId64 " ms ago; --node-ttl-ms %u)%s%s",
                      f->node_id, read ? "" : "tkd started at ", when, ago,
                      f->ttl_ms, f->error[0] != '\0' ? ": " : "", f->error);
}

/* What n takes of ListNodes' byte budget: its strings. */
static size_t node_bytes(const fleet_node *n)
{
    size_t bytes = strlen(n->node_id) + strlen(n->address) + strlen(n->version);
    for (size_t j = 0; j < n->n_roots; j++)
        bytes += strlen(n->roots[j]);
    return bytes;
}

static Tk__V1__NodeInfo *node_info(rpc_call *call, const fleet_node *n,
                                   int64_t age_ms)
{
    Tk__V1__NodeInfo *ni = rpc_call_alloc(call, sizeof *ni);
    tk__v1__node_info__init(ni);
    ni->node_id = rpc_call_strdup(call, n->node_id);
    ni->address = rpc_call_strdup(call, n->address);
    ni->version = rpc_call_strdup(call, n->version);
    ni->draining = n->draining;
    ni->heartbeat_age_ms = (uint64_t)age_ms;
    ni->roots = rpc_call_alloc(call, (n->n_roots + 1) * sizeof(char *));
    for (size_t j = 0; j < n->n_roots; j++)
        ni->roots[ni->n_roots++] = rpc_call_strdup(call, n->roots[j]);
    return ni;
}

/* Inline (rpc_nodes_fn): a copy of the reading, the ages moved on by the
 * time since it was taken; a node whose heartbeat is now older than the
 * TTL is left out. */
static void list_nodes(void *arg, rpc_call *call, ProtobufCMessage *reply)
{
    fleet *f = arg;
    Tk__V1__ListNodesReply *out = (Tk__V1__ListNodesReply *)reply;
    int64_t now = tkc_mono_ns();
    pthread_mutex_lock(&f->mu);
    int64_t elapsed = (now - f->read_ns) / FLEET_MS;
    if (f->taken || !f->have_reading || elapsed > (int64_t)f->ttl_ms) {
        fail_stale(f, call, now);
        pthread_mutex_unlock(&f->mu);
        return;
    }
    out->self_id = rpc_call_strdup(call, f->node_id);
    out->ttl_ms = f->ttl_ms;
    /* The table is what the database's writers put there: the reply holds
     * at most the method's list ceiling of nodes and bytes
     * (tk/v1/control.proto), partial beyond. */
    const rpc_list *list = rpc_call_list(call);
    uint32_t most = rpc_list_items(list, 0);
    size_t n_max = f->reading.n < most ? f->reading.n : most, bytes = 0;
    out->nodes = rpc_call_alloc(call, (n_max + 1) * sizeof(Tk__V1__NodeInfo *));
    for (size_t i = 0; i < f->reading.n; i++) {
        const fleet_node *n = &f->reading.nodes[i];
        int64_t age = n->age_ms + elapsed;
        if (age > (int64_t)f->ttl_ms)
            continue;
        size_t cost = node_bytes(n);
        if (out->n_nodes == n_max ||
            (list->max_bytes != 0 && bytes + cost > list->max_bytes)) {
            rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
            break;
        }
        bytes += cost;
        out->nodes[out->n_nodes++] = node_info(call, n, age);
    }
    pthread_mutex_unlock(&f->mu);
}

void fleet_register(fleet *f, rpc_server *srv)
{
    rpc_server_set_nodes(srv, list_nodes, f);
    rpc_server_set_on_stop(srv, drain, f);
}

void fleet_free(fleet *f)
{
    if (f == NULL)
        return;
    if (f->started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        port_event_set(&f->abort);
        pthread_join(f->thread, NULL); /* it leaves the table */
    } else if (f->joined) {
        leave(f);
    }
    fleet__pg_close(&f->pg);
    fleet__reading_free(&f->reading);
    fleet__reading_free(&f->shown);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    release(f);
}
