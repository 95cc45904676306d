/* SPDX-License-Identifier: MIT */
/* The membership: one heartbeat thread refreshes this node's row and reads
 * the live table every heartbeat, and keeps that reading, with the
 * monotonic time it was taken, for ListNodes to answer from. What fails
 * is logged when it starts failing, when the failure changes and when it
 * ends, never every beat; the table's changes (a node joins, drains,
 * leaves) at info. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet_int.h"
#include "common/common.h"
#include "port/port.h"

/* How long fleet_join may take at start. */
#define JOIN_MS 5000u
/* A server that does not answer at all: the wait past statement_timeout. */
#define NO_ANSWER_MS 1000u

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
        const obs_field fs[] = { OBS_STR("node_id", n->node_id),
                                 OBS_STR("address", n->address) };
        if (was == NULL || strcmp(was->address, n->address) != 0)
            obs_log_fields(OBS_LOG_INFO, fs, 2, "fleet: node %s joined at %s%s",
                           n->node_id, n->address, self);
        if (n->draining && (was == NULL || !was->draining))
            obs_log_fields(OBS_LOG_INFO, fs, 2, "fleet: node %s is draining%s",
                           n->node_id, self);
    }
    for (size_t i = 0; i < f->shown.n; i++)
        if (find(now, f->shown.nodes[i].node_id) == NULL) {
            const obs_field fs[] = {
                OBS_STR("node_id", f->shown.nodes[i].node_id),
                OBS_STR("address", f->shown.nodes[i].address),
            };
            obs_log_fields(OBS_LOG_INFO, fs, 2, "fleet: node %s left",
                           f->shown.nodes[i].node_id);
        }
}

/* A copy of r for the log's comparison: ids, addresses and draining. */
static void remember(fleet *f, const fleet_reading *r)
{
    fleet__reading_fini(&f->shown);
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
    if (!f->failing || strcmp(f->logged, why) != 0) {
        const obs_field fs[] = { OBS_STR("node_id", f->node_id),
                                 OBS_STR("error", why),
                                 OBS_INT("heartbeat_ms", f->heartbeat_ms) };
        obs_log_fields(OBS_LOG_WARN, fs, 3,
                       "fleet: node %s: %s (membership not refreshed; tried "
                       "every %u ms)",
                       f->node_id, why, f->heartbeat_ms);
    }
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
    fleet__reading_fini(&f->reading);
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
    if (f->failing) {
        const obs_field fs[] = { OBS_STR("node_id", f->node_id),
                                 OBS_INT("after_ms",
                                         (now - since) / FLEET_MS) };
        obs_log_fields(OBS_LOG_INFO, fs, 2,
                       "fleet: node %s: membership refreshed again after "
                       "%" PRId64 " ms",
                       f->node_id, (now - since) / FLEET_MS);
    }
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
    const obs_field fs[] = { OBS_STR("node_id", f->node_id),
                             OBS_STR("instance", h->instance),
                             OBS_STR("address", h->address),
                             OBS_STR("this_instance", f->instance),
                             OBS_INT("last_heartbeat_ms", quiet_ms),
                             OBS_INT("node_ttl_ms", f->ttl_ms) };
    obs_log_fields(
        OBS_LOG_ERROR, fs, 6,
        "fleet: node %s: its row in tk_nodes was taken over while it "
        "ran: instance %s, address %s (this process is instance %s; its "
        "last heartbeat was %" PRId64 " ms ago, --node-ttl-ms %u)%s; this "
        "node stops advertising and ListNodes answers MEMBERSHIP_STALE "
        "until tkd restarts",
        f->node_id, h->instance, h->address, f->instance, quiet_ms, f->ttl_ms,
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
void fleet__leave(fleet *f)
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
    const obs_field fs[] = { OBS_STR("node_id", f->node_id),
                             OBS_STR("error", f->pg.message),
                             OBS_INT("node_ttl_ms", f->ttl_ms) };
    if (fleet__pg_delete(&f->pg, f->node_id, f->instance, until) == 0)
        obs_log_fields(OBS_LOG_INFO, fs, 1, "fleet: node %s left the table",
                       f->node_id);
    else
        obs_log_fields(OBS_LOG_WARN, fs, 3,
                       "fleet: node %s: could not delete its row (%s); it "
                       "drops out when its heartbeat is %u ms old",
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
    fleet__leave(f);
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
void fleet__drain(void *arg)
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
    const obs_field fs[] = { OBS_STR("node_id", f->node_id),
                             OBS_INT("wait_ms", FLEET_STOP_MS) };
    if (gone)
        obs_log_fields(OBS_LOG_INFO, fs, 1,
                       "fleet: node %s: not marked draining: its row was "
                       "taken over",
                       f->node_id);
    else if (!pending && ok)
        obs_log_fields(OBS_LOG_INFO, fs, 1, "fleet: node %s marked draining",
                       f->node_id);
    else
        obs_log_fields(OBS_LOG_WARN, fs, 2,
                       "fleet: node %s: could not mark its row draining "
                       "within %u ms; stopping anyway",
                       f->node_id, FLEET_STOP_MS);
}
