/* SPDX-License-Identifier: MIT */
/* Transactions on a pooled connection under a call's deadline and
 * cancellation: every statement is sent with PQsendQuery[Params] and
 * waited for in poll(2) on PQsocket together with the call's cancel fd;
 * a call that stops mid-statement cancels it (PQcancel), drains it and
 * rolls back before its connection goes back to the pool. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orders_int.h"

/* PQcancel + drain + ROLLBACK after the call stopped: past this, the
 * connection is discarded instead. */
#define CLEANUP_NS (2000 * ORDERS_MS)
/* How long a COMMIT may take past the deadline before its outcome is
 * declared unknown (it is never cancelled: see orders__tx_commit). */
#define COMMIT_GRACE_NS (5000 * ORDERS_MS)

typedef enum await_rv {
    AWAIT_READY,   /* a result can be read without blocking */
    AWAIT_STOPPED, /* follow: the call must stop; else: until passed */
    AWAIT_DOWN,    /* the connection broke */
} await_rv;

/* Flushes what libpq holds (the connection is non-blocking) and reads
 * until PQgetResult will not block. */
static await_rv await_result(const orders_tx *tx, bool follow, int64_t until)
{
    PGconn *pg = tx->conn->pg;
    for (;;) {
        int f = PQflush(pg);
        if (f < 0)
            return AWAIT_DOWN;
        if (f == 0 && !PQisBusy(pg))
            return AWAIT_READY;
        struct pollfd pfd = {
            .fd = PQsocket(pg),
            .events = (short)(POLLIN | (f == 1 ? POLLOUT : 0)),
        };
        if (pfd.fd < 0)
            return AWAIT_DOWN;
        int n = orders__wait_fd(tx, &pfd, follow, until);
        if (n == 0)
            return AWAIT_STOPPED;
        if (n < 0)
            return AWAIT_DOWN;
        if ((pfd.revents & (POLLIN | POLLERR | POLLHUP)) != 0 &&
            !PQconsumeInput(pg))
            return AWAIT_DOWN;
    }
}

/* Reads every result of what was sent, to the end (PQgetResult NULL).
 * *out: the first error, else the last result. */
static await_rv collect(const orders_tx *tx, bool follow, int64_t until,
                        PGresult **out)
{
    PGresult *keep = NULL;
    for (;;) {
        await_rv w = await_result(tx, follow, until);
        if (w != AWAIT_READY) {
            PQclear(keep);
            *out = NULL;
            return w;
        }
        PGresult *r = PQgetResult(tx->conn->pg);
        if (r == NULL)
            break;
        if (keep != NULL && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
            PQclear(r);
        } else {
            PQclear(keep);
            keep = r;
        }
    }
    *out = keep;
    return AWAIT_READY;
}

static int fail_down(orders_tx *tx, orders_err err)
{
    tx->err = err;
    orders__set_message(tx, PQerrorMessage(tx->conn->pg));
    if (tx->message[0] == '\0')
        orders__set_message(tx, "the connection to the database was lost");
    orders__conn_discard(tx->conn);
    return -1;
}

static int fail_result(orders_tx *tx, PGresult *r)
{
    tx->err = ORDERS_ESQL;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    snprintf(tx->sqlstate, sizeof tx->sqlstate, "%s",
             state != NULL ? state : "");
    const char *primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    orders__set_message(tx,
                        primary != NULL ? primary : PQresultErrorMessage(r));
    PQclear(r);
    return -1;
}

/*
 * The call stopped (caller cancel, deadline, shutdown) while a statement
 * was running on the server: cancel it and read it to its end.
 *
 * A cancel request travels on a connection of its own and may land late,
 * after the statement it was meant for has ended. We drain rather than
 * discard: PQcancel returns only once the server has closed the cancel
 * connection, which its cancel handler does after signalling our backend;
 * draining then reads the statement to its end (its error, or its result
 * when it finished first) and the ReadyForQuery after it. From then on the
 * backend is idle, and PostgreSQL drops a cancel that arrives while a
 * backend is idle (PostgresMain checks for interrupts while
 * DoingCommandRead is still set, before it runs the next command), so the
 * ROLLBACK and every later statement on this connection are safe from it.
 * Whenever one of those steps is not certain — PQcancel failed, the drain
 * outlasted CLEANUP_NS, the connection broke — the connection is discarded
 * (PQfinish) instead: a late cancel then hits a backend nobody uses.
 * Reconnecting after every cancel would be safe too, but costs a
 * connection set-up per cancelled call and loses the connection warm.
 * PQcancel itself blocks (a connect, a send, a read until EOF on a new
 * connection): short on a unix socket or a live host; to a host that has
 * vanished, up to the kernel's TCP connect timeout. libpq 17's
 * PQcancelStart would let it join the poll loop; Debian 12 has libpq 15.
 */
static void stop_statement(orders_tx *tx)
{
    int64_t t0 = rpc_now_ns();
    char errbuf[256] = "";
    if (tx->svc->before_cancel != NULL) /* tests only: a late cancel */
        tx->svc->before_cancel(tx->svc->before_cancel_arg);
    bool clean = tx->conn->cancel != NULL &&
                 PQcancel(tx->conn->cancel, errbuf, sizeof errbuf) == 1;
    if (clean) {
        PGresult *r = NULL;
        clean = collect(tx, false, t0 + CLEANUP_NS, &r) == AWAIT_READY &&
                PQstatus(tx->conn->pg) == CONNECTION_OK;
        PQclear(r);
    } else {
        const obs_field f[] = { OBS_STR("error", errbuf) };
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "orders: PQcancel failed (%s); discarding the "
                       "connection",
                       errbuf);
    }
    if (!clean)
        orders__conn_discard(tx->conn);
    tx->cleanup_ns += rpc_now_ns() - t0;
}

/* Waits for the statement just sent and checks its result. follow: the
 * call's cancel and deadline stop it (every statement before COMMIT). */
static int finish_statement(orders_tx *tx, bool follow, int64_t until,
                            PGresult **out)
{
    PGresult *r = NULL;
    await_rv w = collect(tx, follow, until, &r);
    if (w == AWAIT_STOPPED && follow) {
        stop_statement(tx);
        tx->err = ORDERS_ESTOPPED;
        return -1;
    }
    if (w != AWAIT_READY || PQstatus(tx->conn->pg) != CONNECTION_OK) {
        PQclear(r);
        return fail_down(tx, ORDERS_EDOWN);
    }
    if (r == NULL) {
        tx->err = ORDERS_EINTERNAL;
        orders__set_message(tx, "the database sent no result");
        return -1;
    }
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        return fail_result(tx, r);
    if (out != NULL)
        *out = r;
    else
        PQclear(r);
    return 0;
}

int orders__tx_exec(orders_tx *tx, PGresult **out, const char *sql,
                    int n_params, const char *const *params)
{
    if (out != NULL)
        *out = NULL;
    if (tx->err != ORDERS_OK)
        return -1;
    if (tx->call != NULL && rpc_call_cause(tx->call) != RPC_CAUSE_NONE) {
        /* Not sent at all: a cancel sent right after a statement can reach
         * the server before the statement does, and then it is lost. */
        tx->err = ORDERS_ESTOPPED;
        return -1;
    }
    PGconn *pg = tx->conn->pg;
    int sent = n_params < 0 ? PQsendQuery(pg, sql)
                            : PQsendQueryParams(pg, sql, n_params, NULL, params,
                                                NULL, NULL, 0);
    if (!sent)
        return fail_down(tx, ORDERS_EDOWN);
    return finish_statement(tx, true, INT64_MAX, out);
}

/*
 * BEGIN, with lock_timeout and statement_timeout for this transaction
 * only (set_config(..., true) is SET LOCAL) from the time the call has
 * left. lock_timeout comes first, a margin before the deadline, so that a
 * lock wait the deadline would end ends on the server with 55P03 and a
 * clean error instead: no cancel request, the connection stays usable.
 * statement_timeout sits between it and the deadline for statements that
 * are slow without waiting for a lock. Both are per statement, so a
 * transaction of several statements can still outlast the deadline; then
 * the call's deadline cancels it (stop_statement).
 * READ COMMITTED is explicit: the row-lock scheme relies on its re-check
 * of the latest row version after a lock wait.
 */
int orders__tx_begin_statement(orders_tx *tx)
{
    char sql[256];
    tx->lock_timeout_ms = 0;
    if (!atomic_load(&tx->svc->server_timeouts)) {
        return orders__tx_exec(tx, NULL, "BEGIN ISOLATION LEVEL READ COMMITTED",
                               -1, NULL);
    }
    int64_t left = (tx->deadline - rpc_now_ns()) / ORDERS_MS;
    int64_t margin = left / 10;
    if (margin < 20)
        margin = 20;
    if (margin > 1000)
        margin = 1000;
    int64_t lock_ms = left - margin, stmt_ms = left - margin / 2;
    uint32_t fixed_lock = atomic_load(&tx->svc->test_lock_ms);
    if (fixed_lock > 0) { /* tests only: orders__test_set_timeouts */
        lock_ms = fixed_lock;
        stmt_ms = atomic_load(&tx->svc->test_stmt_ms);
    }
    /* 0 would mean "no limit" */
    if (lock_ms < 1)
        lock_ms = 1;
    if (stmt_ms < 1)
        stmt_ms = 1;
    tx->lock_timeout_ms = lock_ms;
    snprintf(sql, sizeof sql,
             "BEGIN ISOLATION LEVEL READ COMMITTED; "
             "SELECT set_config('lock_timeout', '%lldms', true), "
             "set_config('statement_timeout', '%lldms', true)",
             (long long)lock_ms, (long long)stmt_ms);
    return orders__tx_exec(tx, NULL, sql, -1, NULL);
}

/*
 * COMMIT is the point of no return: once it is sent, the transaction may
 * be committed whatever we do, so the call's cancel and deadline no longer
 * apply (a cancel could at best turn a commit into an unknown outcome).
 * It is waited for up to COMMIT_GRACE_NS past the deadline; past that, or
 * if the connection breaks, the outcome is unknown and said so.
 */
int orders__tx_commit(orders_tx *tx)
{
    if (tx->err != ORDERS_OK)
        return -1;
    /* From here rpc answers a Cancel with WRITE_CONTINUES and the reply
     * says write_completed; a cancel that came first rolls back instead. */
    if (tx->call != NULL && rpc_call_commit_point(tx->call) != RPC_CAUSE_NONE) {
        tx->err = ORDERS_ESTOPPED; /* orders__tx_end rolls back */
        return -1;
    }
    if (!PQsendQuery(tx->conn->pg, "COMMIT"))
        return fail_down(tx, ORDERS_EDOWN); /* nothing sent: not committed */
    int64_t from = rpc_now_ns();
    if (tx->deadline > from)
        from = tx->deadline;
    PGresult *r = NULL;
    await_rv w = collect(tx, false, from + COMMIT_GRACE_NS, &r);
    if (w != AWAIT_READY || PQstatus(tx->conn->pg) != CONNECTION_OK) {
        PQclear(r);
        return fail_down(tx, ORDERS_ECOMMIT_UNKNOWN);
    }
    if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
        if (r != NULL)
            return fail_result(tx, r);
        tx->err = ORDERS_EINTERNAL;
        orders__set_message(tx, "COMMIT got no result");
        return -1;
    }
    /* COMMIT of a failed transaction succeeds with the tag ROLLBACK. */
    bool committed = strcmp(PQcmdStatus(r), "COMMIT") == 0;
    PQclear(r);
    if (!committed) {
        tx->err = ORDERS_EINTERNAL;
        orders__set_message(tx, "the transaction was rolled back at COMMIT");
        return -1;
    }
    return 0;
}

void orders__tx_end(orders_tx *tx)
{
    orders_conn *c = tx->conn;
    if (c == NULL)
        return;
    PGTransactionStatusType ts =
        c->pg != NULL ? PQtransactionStatus(c->pg) : PQTRANS_IDLE;
    if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR) {
        int64_t t0 = rpc_now_ns();
        PGresult *r = NULL;
        bool ok = PQsendQuery(c->pg, "ROLLBACK") &&
                  collect(tx, false, t0 + CLEANUP_NS, &r) == AWAIT_READY &&
                  r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok)
            orders__conn_discard(c);
        tx->cleanup_ns += rpc_now_ns() - t0;
    }
    /* Back to the pool idle, or discarded (checkin checks again). */
    orders__pool_checkin(&tx->svc->pool, c);
    tx->conn = NULL;
}

/* ---- the status of a failed transaction -------------------------------- */

typedef struct sqlstate_status {
    const char *state; /* five characters, or a two-character class */
    rpc_code code;
    const char *reason;
    const char *what;
} sqlstate_status;

static const sqlstate_status sqlstates[] = {
    { "55P03", RPC_DEADLINE_EXCEEDED, "LOCK_NOT_AVAILABLE",
      "the row lock was not granted within lock_timeout, which is set "
      "from the call's deadline" },
    { "57014", RPC_DEADLINE_EXCEEDED, "QUERY_CANCELED",
      "the statement was cancelled on the server (statement_timeout, set "
      "from the call's deadline)" },
    { "40P01", RPC_ABORTED, "DEADLOCK", "deadlock detected; try again" },
    { "40001", RPC_ABORTED, "SERIALIZATION",
      "serialization failure; try again" },
    { "23503", RPC_NOT_FOUND, "ORDER_MISSING", "no such order" },
    { "57P01", RPC_UNAVAILABLE, "DB_UNAVAILABLE", "the database shut down" },
    { "57P02", RPC_UNAVAILABLE, "DB_UNAVAILABLE", "the database shut down" },
    { "57P03", RPC_UNAVAILABLE, "DB_UNAVAILABLE",
      "the database is starting up" },
    { "53300", RPC_UNAVAILABLE, "DB_UNAVAILABLE",
      "the database has too many connections" },
    { "08", RPC_UNAVAILABLE, "DB_UNAVAILABLE",
      "the connection to the database failed" },
    { "22", RPC_INVALID_ARGUMENT, "BAD_ARGUMENT",
      "the database refused a "
      "value" },
};

#define DB_RETRY_AFTER_MS 1000u

static void fail_sql(const orders_tx *tx, rpc_call *call)
{
    const sqlstate_status *m = NULL;
    for (size_t i = 0; i < sizeof sqlstates / sizeof sqlstates[0]; i++) {
        size_t n = strlen(sqlstates[i].state);
        if (strncmp(tx->sqlstate, sqlstates[i].state, n) == 0) {
            m = &sqlstates[i];
            break;
        }
    }
    if (m == NULL) {
        rpc_call_fail(call, RPC_INTERNAL, "DB_ERROR", "%s (SQLSTATE %s)",
                      tx->message, tx->sqlstate);
        return;
    }
    if (strcmp(m->state, "55P03") == 0)
        obs_metric_add(OBS_M_PG_LOCK_TIMEOUTS, 1);
    if (strcmp(m->state, "55P03") == 0 && tx->lock_timeout_ms > 0)
        rpc_call_fail(call, m->code, m->reason,
                      "%s (%lld ms); SQLSTATE 55P03: %s", m->what,
                      (long long)tx->lock_timeout_ms, tx->message);
    else
        rpc_call_fail(call, m->code, m->reason, "%s; SQLSTATE %s: %s", m->what,
                      tx->sqlstate, tx->message);
    if (m->code == RPC_UNAVAILABLE)
        rpc_call_set_retry_after(call, DB_RETRY_AFTER_MS);
}

void orders__tx_fail(const orders_tx *tx, rpc_call *call)
{
    uint32_t cleanup_ms = (uint32_t)(tx->cleanup_ns / ORDERS_MS);
    switch (tx->err) {
    case ORDERS_ESTOPPED:
        if (rpc_call_fail_stopped(call) == RPC_CAUSE_DEADLINE && tx->pool_wait)
            rpc_call_fail(call, RPC_DEADLINE_EXCEEDED, "DB_POOL_BUSY", "%s",
                          tx->message);
        rpc_call_set_cleanup(call, false, cleanup_ms);
        break;
    case ORDERS_EDOWN:
        rpc_call_fail(call, RPC_UNAVAILABLE, "DB_UNAVAILABLE",
                      "PostgreSQL cannot be reached; nothing was committed: "
                      "%s",
                      tx->message);
        rpc_call_set_retry_after(call, DB_RETRY_AFTER_MS);
        break;
    case ORDERS_EFDS: {
        char ebuf[128];
        rpc_call_fail_fds(
            call,
            strstr(tx->message, tkc_strerror(ENFILE, ebuf, sizeof ebuf)) != NULL
                ? ENFILE
                : EMFILE,
            "connecting to PostgreSQL (nothing was committed): "
            "%s",
            tx->message);
        break;
    }
    case ORDERS_ECOMMIT_UNKNOWN:
        rpc_call_fail(call, RPC_UNKNOWN, "COMMIT_UNKNOWN",
                      "the connection was lost while COMMIT was in flight; "
                      "whether it committed is unknown: %s",
                      tx->message);
        break;
    case ORDERS_ESQL:
        fail_sql(tx, call);
        break;
    case ORDERS_EINTERNAL:
    case ORDERS_OK:
    default:
        rpc_call_fail(call, RPC_INTERNAL, "DB_ERROR", "%s", tx->message);
        break;
    }
}
