/* SPDX-License-Identifier: MIT */
/*
 * orders — the tk.v1.Orders service: serialized state transitions on a hot
 * parent row in PostgreSQL, with the weakest row lock that still serializes
 * them (FOR NO KEY UPDATE).
 *
 * Owns: the libpq connection pool (checkout only when idle, reset when
 * broken), the schema and its versioned migrations, the mapping of a call's
 * deadline to lock_timeout / statement_timeout, of its cancellation to
 * PQcancel, and of SQLSTATEs to reasons.
 * May call: libpq, rpc.h (the call handle and the method table), obs/
 * (the log, the metrics), libc.
 * Must never: let libpq be seen outside this folder (this header names no
 * libpq type), hand a connection that is not idle to a call, let a cancel
 * meant for one statement land on another, or cancel a COMMIT it has sent.
 */
#ifndef TK_SERVICE_ORDERS_H
#define TK_SERVICE_ORDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/rpc.h"

typedef struct orders orders;

typedef struct orders_config {
    /* libpq connection string or URI; NULL or "": no database, and every
     * Orders call answers UNAVAILABLE saying how to configure one. */
    const char *dsn;
    unsigned pool_size; /* connections at most; 0: ORDERS_DEFAULT_POOL */
    /* How long start may spend connecting and migrating (0: default). */
    uint32_t start_timeout_ms;
    /* true: orders_start connects nothing, and the first Orders call
     * connects and migrates, as it does after a start the database was
     * down for; a tkd that no Orders call reaches never loads libpq (pq/).
     * tkd sets it. */
    bool connect_on_first_call;
} orders_config;

#define ORDERS_DEFAULT_POOL 8u
#define ORDERS_MAX_POOL 256u

/* Errors: negative errno-style values, with a message in err. */
int orders_new(orders **out, const orders_config *cfg, char *err,
               size_t errlen);
/* Connects once and runs the migrations, within start_timeout_ms (with
 * connect_on_first_call: only logs that the first call will). A database
 * that cannot be reached is not an error: it is logged, and the first call
 * that gets a connection migrates (so tkd starts, and serves its other
 * services, with the database down). The first connection made and
 * migrated logs "connected to ..., schema current", once. */
void orders_start(orders *svc);
/* Adds tk.v1.Orders to srv (before rpc_server_start). */
int orders_register(orders *svc, rpc_server *srv, char *err, size_t errlen);
/* After rpc_server_free (no call may be running). NULL is accepted. */
void orders_free(orders *svc);

/* ---- for tests and benchmarks only --------------------------------------
 * Not reachable from the wire or tkd's command line: tkd never calls these.
 * They exist so a test can prove that the lock the service takes matters
 * (the negative control: the same transition under FOR UPDATE blocks a
 * child insert) and reach code a healthy server never lets run. */

typedef enum orders_row_lock {
    ORDERS_ROW_LOCK_NO_KEY_UPDATE = 0, /* what the service takes */
    ORDERS_ROW_LOCK_UPDATE = 1,        /* the negative control */
    /* Too weak: does not conflict with itself, so two transitions can read
     * the same status (the negative control of "transitions serialize"). */
    ORDERS_ROW_LOCK_SHARE = 2,
} orders_row_lock;

/* The row lock CloseOrder/ReopenOrder take from now on. */
void orders__test_set_row_lock(orders *svc, orders_row_lock lock);
/* false: transactions set no lock_timeout/statement_timeout, so the call's
 * own deadline (PQcancel) ends a lock wait, as it would when the server's
 * timeouts cannot fire first (a stalled server, a slow network). */
void orders__test_set_server_timeouts(orders *svc, bool on);
/* lock_ms > 0: from now on every transaction gets lock_timeout = lock_ms
 * and statement_timeout = stmt_ms (> lock_ms, so that a lock wait ends as
 * 55P03) instead of the ones derived from the call's deadline; 0, 0: derive
 * them again (the default). A test then gives its call a long deadline and
 * the server's timeout alone decides how a wait ends, with the deadline
 * seconds away: the derivation's margin (a tenth of the deadline) is no
 * longer part of the outcome. Read at BEGIN: a transaction keeps the
 * timeouts it began with. */
void orders__test_set_timeouts(orders *svc, uint32_t lock_ms, uint32_t stmt_ms);

/* Called by CloseOrder/ReopenOrder on the worker's thread right after the
 * locking SELECT found the order (status: what it read), before the
 * transition decides and writes: the hook may block, holding the
 * transaction, and its row lock, open. Set it before any call is made;
 * NULL (the default) calls nothing. */
typedef void (*orders_after_lock_fn)(void *arg, int64_t order_id,
                                     const char *status);
void orders__test_set_after_lock(orders *svc, orders_after_lock_fn fn,
                                 void *arg);

/* Called on the worker's thread when a call stopped while a statement was
 * in flight, before the cancel request (PQcancel) is sent: a hook that
 * waits until the statement has ended on the server makes the cancel land
 * late, as a real one can. Set it before any call is made. */
typedef void (*orders_before_cancel_fn)(void *arg);
void orders__test_set_before_cancel(orders *svc, orders_before_cancel_fn fn,
                                    void *arg);

#endif /* TK_SERVICE_ORDERS_H */
