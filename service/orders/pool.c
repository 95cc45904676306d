/* SPDX-License-Identifier: MIT */
/* The connection pool: a fixed set of slots, a free stack, and a semaphore
 * (port_sem) so a call waits for a connection in poll(2), together with its
 * cancel fd and deadline. Connections are made lazily, asynchronously, by
 * the call that needs one. A broken connection is reset by discarding it
 * and connecting anew in the next call's own poll loop (PQreset would block
 * a worker without regard to its call's deadline). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orders_int.h"

int orders__pool_init(orders_pool *p, size_t n)
{
    memset(p, 0, sizeof *p);
    p->sem = (port_sem){ .fd = -1, .wfd = -1 };
    p->conns = calloc(n, sizeof *p->conns);
    p->free_list = calloc(n, sizeof *p->free_list);
    if (p->conns == NULL || p->free_list == NULL) {
        orders__pool_fini(p);
        return -ENOMEM;
    }
    int rv = n <= PORT_SEM_MAX ? port_sem_open(&p->sem, (unsigned)n) : -EINVAL;
    if (rv != 0) {
        orders__pool_fini(p);
        return rv;
    }
    pthread_mutex_init(&p->mu, NULL);
    p->n = n;
    /* Slot 0 on top, so a lone caller always gets the same connection. */
    for (size_t i = 0; i < n; i++)
        p->free_list[i] = n - 1 - i;
    p->n_free = n;
    return 0;
}

void orders__pool_fini(orders_pool *p)
{
    if (p->conns != NULL) {
        for (size_t i = 0; i < p->n; i++)
            orders__conn_discard(&p->conns[i]);
        pthread_mutex_destroy(&p->mu);
    }
    port_sem_close(&p->sem);
    free(p->conns);
    free(p->free_list);
    memset(p, 0, sizeof *p);
    p->sem = (port_sem){ .fd = -1, .wfd = -1 };
}

/* poll(2) on one fd until until_ns (monotonic). > 0 ready, 0 time up,
 * -errno. For start-up, which has no call. */
static int poll_until(struct pollfd *pfd, int64_t until_ns)
{
    for (;;) {
        int64_t left = until_ns - rpc_now_ns();
        if (left <= 0)
            return 0;
        int64_t ms = (left + ORDERS_MS - 1) / ORDERS_MS;
        int n = poll(pfd, 1, ms > 60000 ? 60000 : (int)ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n > 0)
            return n;
    }
}

int orders__wait_fd(const orders_tx *tx, struct pollfd *pfd, bool follow,
                    int64_t until_ns)
{
    if (follow && tx->call != NULL)
        return rpc_call_poll(tx->call, pfd, 1, until_ns);
    if (follow && tx->deadline < until_ns)
        until_ns = tx->deadline;
    return poll_until(pfd, until_ns);
}

/* A connection that is not idle: discarded, and counted as broken when
 * the server or the network ended it (not when a call left it inside a
 * transaction). */
static void discard_unusable(orders_conn *c)
{
    if (PQstatus(c->pg) != CONNECTION_OK)
        obs_metric_add(OBS_M_PG_CONNECTIONS_BROKEN, 1);
    orders__conn_discard(c);
}

int orders__pool_checkout(orders_tx *tx)
{
    orders_pool *p = &tx->svc->pool;
    bool waits = false; /* counted among the waiting */
    int rv = 0;
    for (;;) {
        if (port_sem_trytake(&p->sem))
            break;
        if (errno != EAGAIN && errno != EINTR) {
            char ebuf[128];
            tx->err = ORDERS_EINTERNAL;
            snprintf(tx->message, sizeof tx->message,
                     "the pool's semaphore: %s",
                     tkc_strerror(errno, ebuf, sizeof ebuf));
            rv = -1;
            break;
        }
        if (!waits) {
            obs_metric_add(OBS_M_PG_POOL_WAITING, 1);
            waits = true;
        }
        struct pollfd pfd = { .fd = p->sem.fd, .events = POLLIN };
        int n = orders__wait_fd(tx, &pfd, true, INT64_MAX);
        if (n == 0) {
            tx->err = ORDERS_ESTOPPED;
            tx->pool_wait = true;
            snprintf(tx->message, sizeof tx->message,
                     "all %zu database connections stayed busy until the "
                     "deadline (tkd --pg-pool sets how many)",
                     p->n);
            rv = -1;
            break;
        }
        if (n < 0) {
            tx->err = ORDERS_EINTERNAL;
            char ebuf[128];
            snprintf(tx->message, sizeof tx->message,
                     "waiting for a database connection: %s",
                     tkc_strerror(-n, ebuf, sizeof ebuf));
            rv = -1;
            break;
        }
    }
    if (waits)
        obs_metric_add(OBS_M_PG_POOL_WAITING, -1);
    if (rv != 0)
        return rv;
    obs_metric_add(OBS_M_PG_POOL_IN_USE, 1);
    pthread_mutex_lock(&p->mu);
    size_t i = p->free_list[--p->n_free];
    pthread_mutex_unlock(&p->mu);
    tx->conn = &p->conns[i];
    PGconn *pg = tx->conn->pg;
    /* Handed to a call only when idle. Checkin already discards anything
     * else, so this is the rule restated where it matters, for two field
     * reads; a connection the server dropped while it sat here still
     * reads as idle, and tx_open's one retry (orders.c) replaces it. */
    if (pg != NULL && (PQstatus(pg) != CONNECTION_OK ||
                       PQtransactionStatus(pg) != PQTRANS_IDLE))
        discard_unusable(tx->conn);
    return 0;
}

void orders__pool_checkin(orders_pool *p, orders_conn *c)
{
    if (c->pg != NULL && (PQstatus(c->pg) != CONNECTION_OK ||
                          PQtransactionStatus(c->pg) != PQTRANS_IDLE))
        discard_unusable(c);
    obs_metric_add(OBS_M_PG_POOL_IN_USE, -1);
    pthread_mutex_lock(&p->mu);
    p->free_list[p->n_free++] = (size_t)(c - p->conns);
    pthread_mutex_unlock(&p->mu);
    port_sem_give(&p->sem); /* at most pool-size counts: never full */
}

void orders__conn_discard(orders_conn *c)
{
    if (c->cancel != NULL)
        PQfreeCancel(c->cancel);
    if (c->pg != NULL)
        PQfinish(c->pg);
    c->cancel = NULL;
    c->pg = NULL;
}

/* libpq's messages span lines ("...\n\tIs the server running...?\n");
 * a status message is one line. */
void orders__set_message(orders_tx *tx, const char *msg)
{
    size_t n = 0;
    bool space = false;
    for (const char *p = msg != NULL ? msg : ""; *p != '\0'; p++) {
        bool ws = *p == '\n' || *p == '\t' || *p == ' ';
        if (ws) {
            space = n > 0;
            continue;
        }
        if (n + 2 >= sizeof tx->message)
            break;
        if (space)
            tx->message[n++] = ' ';
        space = false;
        tx->message[n++] = *p;
    }
    tx->message[n] = '\0';
}

static void conn_failed(orders_tx *tx, PGconn *pg, const char *what)
{
    tx->err = ORDERS_EDOWN;
    orders__set_message(tx, pg != NULL ? PQerrorMessage(pg) : what);
    /* libpq keeps no errno; its message ends in strerror's words ("could
     * not create socket: Too many open files"), in English: tkd never
     * calls setlocale. */
    char ebuf[128];
    if (strstr(tx->message, tkc_strerror(EMFILE, ebuf, sizeof ebuf)) != NULL)
        tx->err = ORDERS_EFDS;
    if (pg != NULL)
        PQfinish(pg);
}

/* libpq prints notices (CREATE ... IF NOT EXISTS: "already exists,
 * skipping") on stderr by default; here they are debug lines. A receiver,
 * not a processor: the result has the severity and the bare message apart
 * for a JSON line's members (the text line is libpq's whole message). */
static void log_notice(void *arg, const PGresult *r)
{
    (void)arg;
    const char *message = PQresultErrorMessage(r);
    const char *severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    size_t len = strlen(message);
    while (len > 0 && message[len - 1] == '\n')
        len--;
    const obs_field f[] = {
        OBS_STR("notice", primary != NULL ? primary : ""),
        OBS_STR("severity", severity != NULL ? severity : ""),
    };
    obs_log_fields(OBS_LOG_DEBUG, f, 2, "orders: %.*s", (int)len, message);
}

/* PQconnectStartParams + PQconnectPoll: the connection is made in poll(2)
 * with the call's cancel fd and deadline, never blocking past them — but
 * for the one step libpq does synchronously, resolving a host name
 * (getaddrinfo); a unix socket or hostaddr= avoids it. */
int orders__conn_open(orders_tx *tx)
{
    static const char *const keys[] = { "dbname", "fallback_application_name",
                                        NULL };
    const char *const values[] = { tx->svc->dsn, "tkd", NULL };
    char why[512];
    if (pq_load(why, sizeof why) != 0) {
        conn_failed(tx, NULL, why);
        return -1;
    }
    PGconn *pg = PQconnectStartParams(keys, values, 1);
    if (pg == NULL || PQstatus(pg) == CONNECTION_BAD) {
        conn_failed(tx, pg, "out of memory for a connection");
        return -1;
    }
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK) {
        if (st == PGRES_POLLING_FAILED) {
            conn_failed(tx, pg, NULL);
            return -1;
        }
        struct pollfd pfd = {
            .fd = PQsocket(pg),
            .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT,
        };
        int n = orders__wait_fd(tx, &pfd, true, INT64_MAX);
        if (n == 0) {
            PQfinish(pg);
            tx->err = ORDERS_ESTOPPED;
            snprintf(tx->message, sizeof tx->message,
                     "stopped while connecting to the database");
            return -1;
        }
        st = PQconnectPoll(pg);
    }
    PQsetNoticeReceiver(pg, log_notice, NULL);
    tx->conn->cancel = PQgetCancel(pg);
    if (tx->conn->cancel == NULL || PQsetnonblocking(pg, 1) != 0) {
        if (tx->conn->cancel != NULL)
            PQfreeCancel(tx->conn->cancel);
        tx->conn->cancel = NULL;
        conn_failed(tx, pg, NULL);
        return -1;
    }
    tx->conn->pg = pg;
    return 0;
}
