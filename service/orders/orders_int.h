/* SPDX-License-Identifier: MIT */
/* Inside orders/: the pool, transactions on a pooled connection, the
 * migrations. The only header that names libpq; nothing outside this
 * folder includes it. Each file calls only the ones beneath it:
 * orders.c (the service; it opens a call's transaction) over migrate.c
 * over tx.c (statements, COMMIT, the way back) over pool.c (connections,
 * waiting in poll(2)). */
#ifndef TK_SERVICE_ORDERS_INT_H
#define TK_SERVICE_ORDERS_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <libpq-fe.h>

#include "orders.h"
#include "common/common.h"
#include "obs/obs.h"
#include "port/port.h"
#include "pq/pq.h"

#define ORDERS_MS 1000000LL /* nanoseconds */

/* One pooled connection. Owned by the pool while free, by one call's
 * transaction while checked out: never touched by two threads at once. */
typedef struct orders_conn {
    PGconn *pg;       /* NULL: not connected (made at checkout) */
    PGcancel *cancel; /* PQgetCancel(pg), made with the connection */
} orders_conn;

typedef struct orders_pool {
    pthread_mutex_t mu; /* guards free_list / n_free */
    orders_conn *conns;
    size_t *free_list; /* a stack: the warmest connection is reused first */
    size_t n, n_free;
    /* A semaphore holding one count per free connection, so that a call
     * waits for a connection in poll together with its cancel fd. */
    port_sem sem;
} orders_pool;

struct orders {
    char *dsn; /* NULL: no database configured */
    uint32_t start_timeout_ms;
    bool connect_on_first_call; /* orders_config's */
    orders_pool pool;
    /* Whether "connected to ..., schema current" has been logged: by the
     * first connection made and migrated, at start or by a call. */
    _Atomic bool announced;
    _Atomic int row_lock;         /* orders_row_lock */
    _Atomic bool server_timeouts; /* lock_timeout/statement_timeout set */
    /* orders__test_set_timeouts: fixed timeouts (ms); 0: derived */
    _Atomic uint32_t test_lock_ms, test_stmt_ms;
    /* Test seams (orders.h), set before any call: read-only afterwards. */
    orders_after_lock_fn after_lock;
    void *after_lock_arg;
    orders_before_cancel_fn before_cancel;
    void *before_cancel_arg;
};

/* How a step of a transaction ended, first failure wins. */
typedef enum orders_err {
    ORDERS_OK = 0,
    ORDERS_ESQL,            /* the server answered an error (sqlstate) */
    ORDERS_ESTOPPED,        /* the call's cancel/deadline ended it */
    ORDERS_EDOWN,           /* no connection, or it broke: nothing committed */
    ORDERS_EFDS,            /* no connection for want of a descriptor
                              (message: libpq's words): nothing committed */
    ORDERS_ECOMMIT_UNKNOWN, /* COMMIT sent, no answer: outcome unknown */
    ORDERS_EINTERNAL,       /* a result of an unexpected shape */
} orders_err;

/* One call's use of one pooled connection: checkout, BEGIN with timeouts
 * from the deadline, statements, COMMIT, and the way back to the pool. */
typedef struct orders_tx {
    orders *svc;
    rpc_call *call;    /* NULL at start-up */
    int64_t deadline;  /* the call's, or start-up's bound (monotonic ns) */
    orders_conn *conn; /* NULL until checked out */
    orders_err err;
    char sqlstate[6];
    char message[320];
    int64_t lock_timeout_ms; /* 0: none set */
    int64_t cleanup_ns;      /* spent cancelling, draining, rolling back */
    bool pool_wait;          /* stopped while waiting for a connection */
} orders_tx;

/* ---- pool.c ---- */
int orders__pool_init(orders_pool *p, size_t n);
void orders__pool_fini(orders_pool *p);
/* Waits for a free connection (the call's cancel and deadline end the
 * wait). It is idle or not connected yet, never in a transaction. */
int orders__pool_checkout(orders_tx *tx);
void orders__pool_checkin(orders_pool *p, orders_conn *c);
/* poll(2) on one fd. follow: the call's cancel and deadline (start-up:
 * tx->deadline) end the wait too. > 0 ready, 0 stop or time up, -errno. */
int orders__wait_fd(const orders_tx *tx, struct pollfd *pfd, bool follow,
                    int64_t until_ns);
/* Connects tx->conn asynchronously within the deadline. */
int orders__conn_open(orders_tx *tx);
void orders__conn_discard(orders_conn *c);
/* tx->message from a (libpq, multi-line) message, on one line. */
void orders__set_message(orders_tx *tx, const char *msg);

/* ---- tx.c ---- */
/* One statement; n_params < 0: simple protocol (several statements, no
 * parameters). On success *out is the result (PQclear it). */
int orders__tx_exec(orders_tx *tx, PGresult **out, const char *sql,
                    int n_params, const char *const *params);
/* COMMIT, never cancelled once sent. */
int orders__tx_commit(orders_tx *tx);
/* Rolls back what is still open, returns the connection (or discards it
 * when it is not idle). */
void orders__tx_end(orders_tx *tx);
/* The status of a failed transaction: the one place that maps SQLSTATEs
 * and connection trouble to codes and reasons. */
void orders__tx_fail(const orders_tx *tx, rpc_call *call);
/* BEGIN with lock_timeout/statement_timeout from the remaining deadline. */
int orders__tx_begin_statement(orders_tx *tx);

/* ---- migrate.c ---- */
/* Brings the schema up to date on tx's connection (no transaction open). */
int orders__migrate(orders_tx *tx);

#endif /* TK_SERVICE_ORDERS_INT_H */
