/* Inside locks/: the pool, transactions on a pooled connection, the
 * migrations. The only header that names libpq; nothing outside this
 * folder includes it. */
#ifndef TK_SERVICE_LOCKS_INT_H
#define TK_SERVICE_LOCKS_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <libpq-fe.h>

#include "locks.h"

#define LOCKS_MS 1000000LL /* nanoseconds */

/* One pooled connection. Owned by the pool while free, by one call's
 * transaction while checked out: never touched by two threads at once. */
typedef struct locks_conn {
    PGconn *pg;       /* NULL: not connected (made at checkout) */
    PGcancel *cancel; /* PQgetCancel(pg), made with the connection */
} locks_conn;

typedef struct locks_pool {
    pthread_mutex_t mu; /* guards free_list / n_free */
    locks_conn *conns;
    size_t *free_list; /* a stack: the warmest connection is reused first */
    size_t n, n_free;
    /* eventfd semaphore holding one count per free connection, so that a
     * call waits for a connection in poll together with its cancel fd. */
    int sem_fd;
} locks_pool;

struct locks_service {
    char *dsn; /* NULL: no database configured */
    uint32_t start_timeout_ms;
    locks_pool pool;
    _Atomic int row_lock;         /* locks_row_lock */
    _Atomic bool server_timeouts; /* lock_timeout/statement_timeout set */
    /* locks__test_set_timeouts: fixed timeouts (ms); 0: derived */
    _Atomic uint32_t test_lock_ms, test_stmt_ms;
    /* Test seams (locks.h), set before any call: read-only afterwards. */
    locks_after_lock_fn after_lock;
    void *after_lock_arg;
    locks_before_cancel_fn before_cancel;
    void *before_cancel_arg;
};

/* How a step of a transaction ended, first failure wins. */
typedef enum locks_err {
    LOCKS_OK = 0,
    LOCKS_ESQL,            /* the server answered an error (sqlstate) */
    LOCKS_ESTOPPED,        /* the call's cancel/deadline ended it */
    LOCKS_EDOWN,           /* no connection, or it broke: nothing committed */
    LOCKS_EFDS,            /* no connection for want of a descriptor
                              (message: libpq's words): nothing committed */
    LOCKS_ECOMMIT_UNKNOWN, /* COMMIT sent, no answer: outcome unknown */
    LOCKS_EINTERNAL,       /* a result of an unexpected shape */
} locks_err;

/* One call's use of one pooled connection: checkout, BEGIN with timeouts
 * from the deadline, statements, COMMIT, and the way back to the pool. */
typedef struct locks_tx {
    locks_service *svc;
    rpc_call *call;   /* NULL at start-up */
    int64_t deadline; /* the call's, or start-up's bound (monotonic ns) */
    locks_conn *conn; /* NULL until checked out */
    locks_err err;
    char sqlstate[6];
    char message[320];
    int64_t lock_timeout_ms; /* 0: none set */
    int64_t cleanup_ns;      /* spent cancelling, draining, rolling back */
    bool pool_wait;          /* stopped while waiting for a connection */
} locks_tx;

/* ---- pool.c ---- */
int locks__pool_init(locks_pool *p, size_t n);
void locks__pool_destroy(locks_pool *p);
/* Waits for a free connection (the call's cancel and deadline end the
 * wait). It is idle or not connected yet, never in a transaction. */
int locks__pool_checkout(locks_tx *tx);
void locks__pool_checkin(locks_pool *p, locks_conn *c);
/* poll(2) on one fd. follow: the call's cancel and deadline (start-up:
 * tx->deadline) end the wait too. > 0 ready, 0 stop or time up, -errno. */
int locks__wait_fd(const locks_tx *tx, struct pollfd *pfd, bool follow,
                   int64_t until_ns);
/* Connects tx->conn asynchronously within the deadline. */
int locks__conn_open(locks_tx *tx);
void locks__conn_discard(locks_conn *c);

/* ---- tx.c ---- */
/* Checkout, connect and migrate if needed, BEGIN with the timeouts. On
 * failure tx->err says why; locks__tx_end must follow in every case. */
int locks__tx_begin(locks_tx *tx, locks_service *svc, rpc_call *call,
                    int64_t deadline);
/* One statement; n_params < 0: simple protocol (several statements, no
 * parameters). On success *out is the result (PQclear it). */
int locks__tx_exec(locks_tx *tx, PGresult **out, const char *sql, int n_params,
                   const char *const *params);
/* COMMIT, never cancelled once sent. */
int locks__tx_commit(locks_tx *tx);
/* Rolls back what is still open, returns the connection (or discards it
 * when it is not idle). */
void locks__tx_end(locks_tx *tx);
/* The status of a failed transaction: the one place that maps SQLSTATEs
 * and connection trouble to codes and reasons. */
void locks__tx_fail(const locks_tx *tx, rpc_call *call);
/* BEGIN with lock_timeout/statement_timeout from the remaining deadline. */
int locks__tx_begin_statement(locks_tx *tx);
/* tx->message from a (libpq, multi-line) message, on one line. */
void locks__tx_set_message(locks_tx *tx, const char *msg);

/* ---- migrate.c ---- */
/* Brings the schema up to date on tx's connection (no transaction open). */
int locks__migrate(locks_tx *tx);

#endif /* TK_SERVICE_LOCKS_INT_H */
