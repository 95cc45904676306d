/* SPDX-License-Identifier: MIT */
/* tk.v1.Orders: the handlers, their SQL, the method table and the
 * service's life cycle. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orders_int.h"
#include "tk/v1/orders.methods.h"
#include "tk/v1/orders.pb-c.h"

#define MAX_SKU_BYTES 1024u
#define DEFAULT_START_TIMEOUT_MS 5000u

/* Reasons of this service that are not SQLSTATEs (those are in tx.c). */
#define REASON_NOT_CONFIGURED "DB_NOT_CONFIGURED"
#define REASON_ORDER_MISSING "ORDER_MISSING"
#define REASON_ORDER_CLOSED "ORDER_CLOSED"
#define REASON_BAD_ORDER_ID "BAD_ORDER_ID"
#define REASON_BAD_SKU "BAD_SKU"

/* The first connection made and migrated says where it went, once. */
static void announce(orders *svc, PGconn *pg)
{
    if (atomic_exchange(&svc->announced, true))
        return;
    const obs_field f[] = { OBS_STR("database", PQdb(pg)),
                            OBS_STR("host", PQhost(pg)),
                            OBS_INT("pool", svc->pool.n) };
    obs_log_fields(OBS_LOG_INFO, f, 3,
                   "orders: connected to database %s on %s, schema current; "
                   "pool of %zu",
                   PQdb(pg), PQhost(pg), svc->pool.n);
}

/* Checkout, connect and migrate if needed, BEGIN with the timeouts. On
 * failure tx->err says why; orders__tx_end must follow in every case. */
static int tx_open(orders_tx *tx, orders *svc, rpc_call *call, int64_t deadline)
{
    memset(tx, 0, sizeof *tx);
    tx->svc = svc;
    tx->call = call;
    tx->deadline = call != NULL ? rpc_call_deadline(call) : deadline;
    if (call != NULL)
        rpc_call_set_tool(call, "postgresql");
    if (orders__pool_checkout(tx) != 0)
        return -1;
    for (int attempt = 0;; attempt++) {
        bool reused = tx->conn->pg != NULL;
        if (!reused && orders__conn_open(tx) != 0)
            return -1;
        if (!reused && orders__migrate(tx) != 0) {
            /* Never pooled unmigrated: the next call migrates again. */
            orders__conn_discard(tx->conn);
            return -1;
        }
        if (!reused)
            announce(svc, tx->conn->pg);
        if (orders__tx_begin_statement(tx) == 0)
            return 0;
        /* A pooled connection that died while it sat idle (the server
         * restarted) fails its first statement; nothing of this call has
         * run, so one fresh connection may be tried. */
        if (!reused || tx->err != ORDERS_EDOWN || attempt > 0)
            return -1;
        const obs_field f[] = { OBS_STR("error", tx->message) };
        obs_log_fields(OBS_LOG_INFO, f, 1,
                       "orders: a pooled connection was lost (%s); "
                       "reconnecting",
                       tx->message);
        obs_metric_add(OBS_M_PG_CONNECTIONS_BROKEN, 1);
        orders__conn_discard(tx->conn);
        tx->err = ORDERS_OK;
    }
}

static bool configured(const orders *svc, rpc_call *call)
{
    if (svc->dsn != NULL)
        return true;
    rpc_call_fail(call, RPC_UNAVAILABLE, REASON_NOT_CONFIGURED,
                  "no database is configured: start tkd with --pg DSN (or "
                  "TK_PG_DSN=DSN), e.g. --pg 'host=/var/run/postgresql "
                  "dbname=tk'");
    return false;
}

static bool valid_order_id(int64_t id, rpc_call *call)
{
    if (id > 0)
        return true;
    rpc_call_fail(call, RPC_INVALID_ARGUMENT, REASON_BAD_ORDER_ID,
                  "order_id must be a positive order id, not %" PRId64, id);
    return false;
}

static void fail_missing(rpc_call *call, int64_t id)
{
    rpc_call_fail(call, RPC_NOT_FOUND, REASON_ORDER_MISSING,
                  "no order %" PRId64, id);
}

static int64_t value_i64(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* Ends the transaction and, if it failed, says why. */
static void finish(orders_tx *tx, rpc_call *call)
{
    orders__tx_end(tx);
    if (tx->err != ORDERS_OK)
        orders__tx_fail(tx, call);
}

/* ---- CreateOrder ---------------------------------------------------------
 */

static void create_order(void *arg, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    orders *svc = arg;
    Tk__V1__CreateOrderReply *out = (Tk__V1__CreateOrderReply *)reply;
    (void)request;
    if (!configured(svc, call))
        return;
    orders_tx tx;
    PGresult *r = NULL;
    if (tx_open(&tx, svc, call, 0) == 0 &&
        orders__tx_exec(&tx, &r,
                        "INSERT INTO orders DEFAULT VALUES RETURNING id", 0,
                        NULL) == 0 &&
        orders__tx_commit(&tx) == 0)
        out->id = value_i64(r, 0, 0);
    PQclear(r);
    finish(&tx, call);
}

/* ---- AddItem -------------------------------------------------------------
 */

/* The order's status and the insert in one statement. The status check is
 * in the insert itself (WHERE status = 'open'): refusing items for a
 * closed order is stated in the child's write path, not left to a side
 * effect of the lock a transition takes. The foreign-key check takes FOR
 * KEY SHARE on the order, which a transition's FOR NO KEY UPDATE does not
 * block: an item never waits for a transition in flight (it sees the
 * order as it was before it). */
static const char add_item_sql[] =
    "WITH o AS (SELECT id, status FROM orders WHERE id = $1),"
    " ins AS (INSERT INTO order_items (order_id, sku)"
    "         SELECT id, $2 FROM o WHERE status = 'open'"
    "         RETURNING id)"
    " SELECT (SELECT status FROM o), (SELECT id FROM ins)";

static void add_item(void *arg, rpc_call *call, const ProtobufCMessage *request,
                     ProtobufCMessage *reply)
{
    orders *svc = arg;
    const Tk__V1__AddItemRequest *in = (const Tk__V1__AddItemRequest *)request;
    Tk__V1__AddItemReply *out = (Tk__V1__AddItemReply *)reply;
    if (!configured(svc, call) || !valid_order_id(in->order_id, call))
        return;
    size_t sku_len = strlen(in->sku);
    if (sku_len == 0 || sku_len > MAX_SKU_BYTES) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, REASON_BAD_SKU,
                      "sku must have 1 to %u bytes, not %zu", MAX_SKU_BYTES,
                      sku_len);
        return;
    }
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, in->order_id);
    const char *const params[] = { id, in->sku };
    orders_tx tx;
    PGresult *r = NULL;
    if (tx_open(&tx, svc, call, 0) == 0 &&
        orders__tx_exec(&tx, &r, add_item_sql, 2, params) == 0) {
        if (PQgetisnull(r, 0, 0))
            fail_missing(call, in->order_id);
        else if (PQgetisnull(r, 0, 1))
            rpc_call_fail(call, RPC_FAILED_PRECONDITION, REASON_ORDER_CLOSED,
                          "order %" PRId64 " is %s: items are added to open "
                          "orders only",
                          in->order_id, PQgetvalue(r, 0, 0));
        else if (orders__tx_commit(&tx) == 0)
            out->item_id = value_i64(r, 0, 1);
    }
    PQclear(r);
    finish(&tx, call);
}

/* ---- CloseOrder / ReopenOrder --------------------------------------------
 */

/*
 * Read, decide, write, in one transaction, serialized per order by the row
 * lock of this SELECT. FOR NO KEY UPDATE because nothing here changes a
 * key: it conflicts with itself, so two transitions of one order still run
 * one after the other, but not with the FOR KEY SHARE that the foreign-key
 * check of every in-flight item insert holds on the order until its
 * transaction ends. FOR UPDATE would make each transition wait for all of
 * those inserts and each insert wait for the transition (a lock convoy on
 * a hot order) while protecting nothing more: the UPDATE below takes FOR
 * NO KEY UPDATE itself.
 * Do not weaken further (FOR SHARE would let two transitions read the same
 * status and both write). Strengthen to FOR UPDATE only when the
 * transaction deletes the order or changes a key column (those take FOR
 * UPDATE anyway; take the strongest lock first, since upgrading one is a
 * classic deadlock), or when blocking item inserts is the intent — and
 * then say so with a status check in the insert, as AddItem does, rather
 * than through a lock mode's side effect.
 * Tests: tests/integration/test_orders.c proves inserts pass under this
 * lock and fail under FOR UPDATE (the negative control).
 */
static const char *const transition_lock_sql[] = {
    [ORDERS_ROW_LOCK_NO_KEY_UPDATE] =
        "SELECT status FROM orders WHERE id = $1 FOR NO KEY UPDATE",
    [ORDERS_ROW_LOCK_UPDATE] =
        "SELECT status FROM orders WHERE id = $1 FOR UPDATE",
    /* tests only: the lock that does not serialize */
    [ORDERS_ROW_LOCK_SHARE] =
        "SELECT status FROM orders WHERE id = $1 FOR SHARE",
};

typedef struct transition {
    const char *to; /* the status it moves to */
    const char *update_sql;
} transition;

static const transition close_transition = {
    "closed",
    "UPDATE orders SET status = 'closed', closed_at = now() WHERE id = $1",
};
static const transition reopen_transition = {
    "open",
    "UPDATE orders SET status = 'open', closed_at = NULL WHERE id = $1",
};

/* Returns 1 when this call changed the status, 0 when it was already
 * there, -1 when the call failed (its status is set). */
static int run_transition(orders *svc, rpc_call *call, int64_t order_id,
                          const transition *t)
{
    if (!configured(svc, call) || !valid_order_id(order_id, call))
        return -1;
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, order_id);
    const char *const params[] = { id };
    int lock = atomic_load(&svc->row_lock);
    int rv = -1;
    orders_tx tx;
    PGresult *r = NULL;
    if (tx_open(&tx, svc, call, 0) == 0 &&
        orders__tx_exec(&tx, &r, transition_lock_sql[lock], 1, params) == 0) {
        if (PQntuples(r) > 0 && svc->after_lock != NULL)
            svc->after_lock(svc->after_lock_arg, order_id, PQgetvalue(r, 0, 0));
        if (PQntuples(r) == 0)
            fail_missing(call, order_id);
        else if (strcmp(PQgetvalue(r, 0, 0), t->to) == 0)
            rv = 0; /* idempotent: the rollback in finish releases the lock */
        else if (orders__tx_exec(&tx, NULL, t->update_sql, 1, params) == 0 &&
                 orders__tx_commit(&tx) == 0)
            rv = 1;
    }
    PQclear(r);
    finish(&tx, call);
    return tx.err == ORDERS_OK ? rv : -1;
}

static void close_order(void *svc, rpc_call *call,
                        const ProtobufCMessage *request,
                        ProtobufCMessage *reply)
{
    const Tk__V1__CloseOrderRequest *in =
        (const Tk__V1__CloseOrderRequest *)request;
    Tk__V1__CloseOrderReply *out = (Tk__V1__CloseOrderReply *)reply;
    int rv = run_transition(svc, call, in->order_id, &close_transition);
    if (rv >= 0)
        out->outcome = rv ? TK__V1__CLOSE_ORDER_REPLY__OUTCOME__CLOSED
                          : TK__V1__CLOSE_ORDER_REPLY__OUTCOME__ALREADY_CLOSED;
}

static void reopen_order(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    const Tk__V1__ReopenOrderRequest *in =
        (const Tk__V1__ReopenOrderRequest *)request;
    Tk__V1__ReopenOrderReply *out = (Tk__V1__ReopenOrderReply *)reply;
    int rv = run_transition(svc, call, in->order_id, &reopen_transition);
    if (rv >= 0)
        out->outcome = rv ? TK__V1__REOPEN_ORDER_REPLY__OUTCOME__REOPENED
                          : TK__V1__REOPEN_ORDER_REPLY__OUTCOME__ALREADY_OPEN;
}

/* ---- GetOrder ------------------------------------------------------------
 */

static void get_order(void *arg, rpc_call *call,
                      const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    orders *svc = arg;
    const Tk__V1__GetOrderRequest *in =
        (const Tk__V1__GetOrderRequest *)request;
    Tk__V1__GetOrderReply *out = (Tk__V1__GetOrderReply *)reply;
    if (!configured(svc, call) || !valid_order_id(in->order_id, call))
        return;
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, in->order_id);
    const char *const params[] = { id };
    orders_tx tx;
    PGresult *r = NULL;
    /* A plain read: no row lock, it waits for nobody. */
    if (tx_open(&tx, svc, call, 0) == 0 &&
        orders__tx_exec(
            &tx, &r,
            "SELECT o.status, coalesce(to_char(o.closed_at AT TIME ZONE 'UTC',"
            " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), ''),"
            " (SELECT count(*) FROM order_items i WHERE i.order_id = o.id)"
            " FROM orders o WHERE o.id = $1",
            1, params) == 0) {
        if (PQntuples(r) == 0) {
            fail_missing(call, in->order_id);
        } else {
            out->status = strcmp(PQgetvalue(r, 0, 0), "closed") == 0
                              ? TK__V1__GET_ORDER_REPLY__STATUS__CLOSED
                              : TK__V1__GET_ORDER_REPLY__STATUS__OPEN;
            out->closed_at = rpc_call_strdup(call, PQgetvalue(r, 0, 1));
            out->item_count = (uint64_t)value_i64(r, 0, 2);
        }
    }
    PQclear(r);
    finish(&tx, call); /* read only: ends with ROLLBACK */
}

/* ---- the method table ----------------------------------------------------
 *
 * Every method is a lock operation (DESIGN.md, "Lifetimes"): bound to its
 * caller's cancel and deadline until it commits. In rpc's terms that is a
 * READ, not a WRITE: a started WRITE ignores its caller's cancel and runs
 * under its own ceiling, which would leave a lock wait running after its
 * caller gave up — holding a pooled connection, and in the queue of the
 * very row lock the next caller wants. As a READ, cancel, deadline and
 * shutdown reach the handler, which cancels the statement (PQcancel),
 * drains and rolls back. The one point past which a lock operation must
 * not be stopped, COMMIT, is its commit point (rpc_call_commit_point, in
 * orders__tx_commit): from there rpc treats it as a started WRITE — a
 * Cancel answers WRITE_CONTINUES, the reply says write_completed — and
 * the handler waits for COMMIT's answer a bounded time past the deadline.
 *
 * tk/v1/orders.proto declares them so (kind READ), with `writes` on the
 * transitions, whose COMMIT writes (a listener that serves reads only
 * refuses them). The handlers are the functions above, by method name.
 */
static const rpc_method methods[TK_V1_ORDERS__N_METHODS] = {
    TK_V1_ORDERS__METHODS(RPC_METHOD_ROW, )
};

/* ---- the service ---------------------------------------------------------
 */

int orders_new(orders **out, const orders_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    unsigned n = cfg->pool_size != 0 ? cfg->pool_size : ORDERS_DEFAULT_POOL;
    if (n > ORDERS_MAX_POOL) {
        snprintf(err, errlen, "a pool of %u connections is more than %u", n,
                 ORDERS_MAX_POOL);
        return -EINVAL;
    }
    orders *svc = calloc(1, sizeof *svc);
    if (svc == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    atomic_init(&svc->row_lock, ORDERS_ROW_LOCK_NO_KEY_UPDATE);
    atomic_init(&svc->server_timeouts, true);
    atomic_init(&svc->test_lock_ms, 0);
    atomic_init(&svc->test_stmt_ms, 0);
    atomic_init(&svc->announced, false);
    svc->connect_on_first_call = cfg->connect_on_first_call;
    svc->start_timeout_ms = cfg->start_timeout_ms != 0
                                ? cfg->start_timeout_ms
                                : DEFAULT_START_TIMEOUT_MS;
    if (cfg->dsn != NULL && cfg->dsn[0] != '\0')
        svc->dsn = strdup(cfg->dsn);
    int rv = cfg->dsn != NULL && cfg->dsn[0] != '\0' && svc->dsn == NULL
                 ? -ENOMEM
                 : orders__pool_init(&svc->pool, n);
    if (rv != 0) {
        char ebuf[128];
        snprintf(err, errlen, "cannot make a pool of %u connections: %s", n,
                 tkc_strerror(-rv, ebuf, sizeof ebuf));
        free(svc->dsn);
        free(svc);
        return rv;
    }
    *out = svc;
    return 0;
}

void orders_start(orders *svc)
{
    if (svc->dsn == NULL) {
        obs_log(OBS_LOG_INFO, "orders: no database configured (--pg DSN or "
                              "TK_PG_DSN); tk.v1.Orders answers UNAVAILABLE");
        return;
    }
    if (svc->connect_on_first_call) {
        const obs_field f[] = { OBS_INT("pool", svc->pool.n) };
        obs_log_fields(OBS_LOG_INFO, f, 1,
                       "orders: the first Orders call connects to the "
                       "database and migrates its schema; pool of %zu",
                       svc->pool.n);
        return;
    }
    orders_tx tx;
    int64_t deadline =
        rpc_now_ns() + (int64_t)svc->start_timeout_ms * ORDERS_MS;
    int rv = tx_open(&tx, svc, NULL, deadline);
    orders__tx_end(&tx);
    if (rv != 0) {
        const char *why = tx.message[0] != '\0' ? tx.message : "timed out";
        const obs_field f[] = { OBS_STR("error", why) };
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "orders: the database is not usable at start (%s); "
                       "Orders calls answer UNAVAILABLE until it is, and the "
                       "first connection made migrates the schema",
                       why);
    }
}

int orders_register(orders *svc, rpc_server *srv, char *err, size_t errlen)
{
    return rpc_server_add_service(
        srv, svc, methods, sizeof methods / sizeof methods[0], err, errlen);
}

void orders_free(orders *svc)
{
    if (svc == NULL)
        return;
    orders__pool_fini(&svc->pool);
    free(svc->dsn);
    free(svc);
}

void orders__test_set_row_lock(orders *svc, orders_row_lock lock)
{
    atomic_store(&svc->row_lock, (int)lock);
}

void orders__test_set_server_timeouts(orders *svc, bool on)
{
    atomic_store(&svc->server_timeouts, on);
}

void orders__test_set_timeouts(orders *svc, uint32_t lock_ms, uint32_t stmt_ms)
{
    atomic_store(&svc->test_lock_ms, lock_ms);
    atomic_store(&svc->test_stmt_ms, stmt_ms);
}

void orders__test_set_after_lock(orders *svc, orders_after_lock_fn fn,
                                 void *arg)
{
    svc->after_lock = fn;
    svc->after_lock_arg = arg;
}

void orders__test_set_before_cancel(orders *svc, orders_before_cancel_fn fn,
                                    void *arg)
{
    svc->before_cancel = fn;
    svc->before_cancel_arg = arg;
}
