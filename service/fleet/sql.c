/* SPDX-License-Identifier: MIT */
/* The membership's connection and its statements on tk_nodes. Every wait
 * is in poll(2) on the connection's socket with a bound (and the abort
 * descriptor), never a blocking libpq call: the server's statement_timeout
 * ends a slow statement first, and the bound ends the wait for a server
 * that does not answer at all (stopped, or a link down). Any failure
 * closes the connection; the next heartbeat connects anew. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"
#include "common/common.h"

/* pg_advisory_xact_lock key: "tknodes" in ASCII. */
#define TABLE_LOCK "32769219357861235"

static const char create_sql[] =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(" TABLE_LOCK ");"
    "CREATE TABLE IF NOT EXISTS tk_nodes ("
    "  node_id text PRIMARY KEY,"
    "  address text NOT NULL,"
    "  roots text[] NOT NULL,"
    "  version text NOT NULL,"
    "  draining boolean NOT NULL DEFAULT false,"
    "  instance text NOT NULL,"
    "  started_at timestamptz NOT NULL DEFAULT now(),"
    "  heartbeat_at timestamptz NOT NULL DEFAULT now());"
    "COMMIT";

/* The row is this instance's, or its holder's heartbeat is not live
 * (stale, or in the future: see read_sql): only then is it taken.
 * started_at stays while the instance does. */
static const char claim_sql[] =
    "INSERT INTO tk_nodes AS n (node_id, address, roots, version, draining,"
    "  instance, started_at, heartbeat_at)"
    " VALUES ($1, $2, $3::text[], $4, $5::boolean, $6, now(), now())"
    " ON CONFLICT (node_id) DO UPDATE SET address = excluded.address,"
    "  roots = excluded.roots, version = excluded.version,"
    "  draining = excluded.draining, instance = excluded.instance,"
    "  started_at = CASE WHEN n.instance = excluded.instance"
    "    THEN n.started_at ELSE now() END,"
    "  heartbeat_at = now()"
    " WHERE n.instance = excluded.instance"
    "  OR n.heartbeat_at <= now() - $7::bigint * interval '1 millisecond'"
    "  OR n.heartbeat_at > clock_timestamp()"
    " RETURNING 1";

static const char holder_sql[] =
    "SELECT address, greatest(0, (extract(epoch FROM now() - heartbeat_at)"
    "  * 1000)::bigint), instance FROM tk_nodes WHERE node_id = $1";

/* One row per (node, root), nodes by id and their roots in order; a node
 * without roots has one row whose root is NULL. A live heartbeat is
 * younger than the TTL and not in the future: every node writes its own
 * with now(), which is before it commits and so before any reader's
 * clock_timestamp(), and a row written with a later time (heartbeat_at
 * now() + 1 hour) is someone's forgery that would otherwise stay live
 * for as long as it says.
 *
 * Bounded, since any writer of the database (every node is one) can add
 * rows: 10,000 rows of one root each cost the heartbeat thread some 800
 * MB (a roots array as long as the whole reading for each node). At most
 * $2 nodes (ListNodes' ceiling and one, so that its reply can say it was
 * cut), $4 roots a node, no id longer than tkd accepts (64) nor an
 * address or a version longer than any tkd writes, and the nodes whose
 * strings come to $3 bytes in all, in id order: a reading of a few MiB,
 * whatever the table holds. Rows past a bound are not live to this node,
 * nor to its clients. */
static const char read_sql[] =
    "WITH live AS ("
    "  SELECT node_id, address, version, draining,"
    "    greatest(0, (extract(epoch FROM now() - heartbeat_at) * 1000)"
    "    ::bigint) AS age_ms, roots[1:$4::int] AS roots"
    "  FROM tk_nodes"
    "  WHERE heartbeat_at > now() - $1::bigint * interval '1 millisecond'"
    "   AND heartbeat_at <= clock_timestamp()"
    "   AND octet_length(node_id) <= 64 AND octet_length(address) <= 1024"
    "   AND octet_length(version) <= 256"
    "  ORDER BY node_id LIMIT $2::int),"
    " sized AS ("
    "  SELECT *, sum(octet_length(node_id) + octet_length(address)"
    "    + octet_length(version)"
    "    + coalesce(octet_length(array_to_string(roots, '')), 0))"
    "    OVER (ORDER BY node_id) AS running FROM live)"
    " SELECT s.node_id, s.address, s.version, s.draining, s.age_ms, u.root"
    " FROM sized s LEFT JOIN LATERAL unnest(s.roots) WITH ORDINALITY"
    "  AS u(root, ord) ON true"
    " WHERE s.running <= $3::bigint"
    " ORDER BY s.node_id, u.ord";

/* libpq's messages span lines; the log's are one. */
static void set_message(fleet_pg *pg, const char *what, const char *msg)
{
    size_t n = (size_t)snprintf(pg->message, sizeof pg->message, "%s: ", what);
    if (n >= sizeof pg->message)
        n = sizeof pg->message - 1;
    bool space = false;
    for (const char *p = msg != NULL ? msg : ""; *p != '\0'; p++) {
        if (*p == '\n' || *p == '\t' || *p == ' ') {
            space = true;
            continue;
        }
        if (n + 2 >= sizeof pg->message)
            break;
        if (space && pg->message[n - 1] != ' ')
            pg->message[n++] = ' ';
        space = false;
        pg->message[n++] = *p;
    }
    pg->message[n] = '\0';
}

static int fail(fleet_pg *pg, const char *what, const char *msg)
{
    set_message(pg, what,
                msg != NULL        ? msg
                : pg->conn != NULL ? PQerrorMessage(pg->conn)
                                   : "no connection");
    fleet__pg_close(pg);
    return -1;
}

void fleet__pg_close(fleet_pg *pg)
{
    if (pg->conn != NULL)
        PQfinish(pg->conn);
    pg->conn = NULL;
}

/* poll(2) on the socket (and the abort fd) until until_ns: > 0 ready, 0
 * time up or aborted, -errno. */
static int wait_socket(const fleet_pg *pg, short events, int64_t until_ns)
{
    struct pollfd pfd[2] = {
        { .fd = PQsocket(pg->conn), .events = events },
        { .fd = pg->abort_fd, .events = POLLIN },
    };
    if (pfd[0].fd < 0)
        return -EBADF;
    for (;;) {
        int64_t left = until_ns - tkc_mono_ns();
        if (left <= 0)
            return 0;
        int64_t ms = (left + FLEET_MS - 1) / FLEET_MS;
        int n =
            poll(pfd, pg->abort_fd >= 0 ? 2 : 1, ms > 60000 ? 60000 : (int)ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (pfd[1].revents != 0)
            return 0;
        if (n > 0)
            return n;
    }
}

static const char *wait_failure(const fleet_pg *pg, int n, int64_t until_ns)
{
    if (n < 0)
        return "poll failed";
    if (pg->abort_fd >= 0 && tkc_mono_ns() < until_ns)
        return "stopped";
    return "PostgreSQL did not answer in time";
}

/* Every result of what was sent, to the end; *out the first error or the
 * last result. 0, or -1 (closed, message set). */
static int collect(fleet_pg *pg, const char *what, PGresult **out,
                   int64_t until_ns)
{
    PGresult *keep = NULL;
    *out = NULL;
    for (;;) {
        int f = PQflush(pg->conn);
        if (f < 0)
            break;
        if (f == 0 && !PQisBusy(pg->conn)) {
            PGresult *r = PQgetResult(pg->conn);
            if (r == NULL) {
                *out = keep;
                return 0;
            }
            if (keep != NULL && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
                PQclear(r);
            } else {
                PQclear(keep);
                keep = r;
            }
            continue;
        }
        int n =
            wait_socket(pg, (short)(POLLIN | (f == 1 ? POLLOUT : 0)), until_ns);
        if (n <= 0) {
            PQclear(keep);
            return fail(pg, what, wait_failure(pg, n, until_ns));
        }
        if (!PQconsumeInput(pg->conn))
            break;
    }
    PQclear(keep);
    return fail(pg, what, NULL);
}

/* Runs sql (n_params < 0: the simple protocol, several statements) and
 * checks that it succeeded; *out (may be NULL) its last result. */
static int exec(fleet_pg *pg, const char *what, PGresult **out, const char *sql,
                int n_params, const char *const *params, int64_t until_ns)
{
    if (out != NULL)
        *out = NULL;
    int sent = n_params < 0 ? PQsendQuery(pg->conn, sql)
                            : PQsendQueryParams(pg->conn, sql, n_params, NULL,
                                                params, NULL, NULL, 0);
    PGresult *r = NULL;
    if (!sent)
        return fail(pg, what, NULL);
    if (collect(pg, what, &r, until_ns) != 0)
        return -1;
    ExecStatusType st = r != NULL ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s",
                 r != NULL ? PQresultErrorMessage(r) : "no result");
        PQclear(r);
        return fail(pg, what, msg);
    }
    if (out != NULL)
        *out = r;
    else
        PQclear(r);
    return 0;
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
    obs_log_fields(OBS_LOG_DEBUG, f, 2, "fleet: %.*s", (int)len, message);
}

/* PQconnectStartParams + PQconnectPoll in poll(2); but for the one step
 * libpq does synchronously, resolving a host name (a unix socket or
 * hostaddr= avoids it). */
static int connect_pg(fleet_pg *pg, int64_t until_ns)
{
    static const char *const keys[] = { "dbname", "fallback_application_name",
                                        NULL };
    const char *const values[] = { pg->dsn, "tkd fleet", NULL };
    char why[512];
    if (pq_load(why, sizeof why) != 0)
        return fail(pg, "connecting", why);
    pg->conn = PQconnectStartParams(keys, values, 1);
    if (pg->conn == NULL)
        return fail(pg, "connecting", "out of memory");
    if (PQstatus(pg->conn) == CONNECTION_BAD)
        return fail(pg, "connecting", NULL);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK) {
        if (st == PGRES_POLLING_FAILED)
            return fail(pg, "connecting", NULL);
        int n = wait_socket(pg, st == PGRES_POLLING_READING ? POLLIN : POLLOUT,
                            until_ns);
        if (n <= 0)
            return fail(pg, "connecting", wait_failure(pg, n, until_ns));
        st = PQconnectPoll(pg->conn);
    }
    PQsetNoticeReceiver(pg->conn, log_notice, NULL);
    if (PQsetnonblocking(pg->conn, 1) != 0)
        return fail(pg, "connecting", NULL);
    return 0;
}

int fleet__pg_open(fleet_pg *pg, int64_t until_ns)
{
    if (pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_OK &&
        PQtransactionStatus(pg->conn) == PQTRANS_IDLE)
        return 0;
    fleet__pg_close(pg);
    if (connect_pg(pg, until_ns) != 0)
        return -1;
    char set[64];
    snprintf(set, sizeof set, "SET statement_timeout = %u", pg->stmt_ms);
    if (exec(pg, "setting statement_timeout", NULL, set, -1, NULL, until_ns) !=
            0 ||
        exec(pg, "creating tk_nodes", NULL, create_sql, -1, NULL, until_ns) !=
            0)
        return -1;
    return 0;
}

static int64_t int_value(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static void find_holder(fleet_pg *pg, const char *node_id, fleet_holder *holder,
                        int64_t until_ns)
{
    const char *const params[] = { node_id };
    PGresult *r = NULL;
    snprintf(holder->address, sizeof holder->address, "(unknown)");
    snprintf(holder->instance, sizeof holder->instance, "(unknown)");
    holder->age_ms = -1;
    if (exec(pg, "reading the holder", &r, holder_sql, 1, params, until_ns) !=
        0)
        return;
    if (PQntuples(r) == 1) {
        snprintf(holder->address, sizeof holder->address, "%s",
                 PQgetvalue(r, 0, 0));
        holder->age_ms = int_value(r, 0, 1);
        snprintf(holder->instance, sizeof holder->instance, "%s",
                 PQgetvalue(r, 0, 2));
    }
    PQclear(r);
}

int fleet__pg_claim(fleet_pg *pg, const fleet_row *row, fleet_holder *holder,
                    int64_t until_ns)
{
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%u", row->ttl_ms);
    const char *const params[] = { row->node_id,
                                   row->address,
                                   row->roots,
                                   row->version,
                                   row->draining ? "true" : "false",
                                   row->instance,
                                   ttl };
    PGresult *r = NULL;
    if (exec(pg, "refreshing this node's row", &r, claim_sql, 7, params,
             until_ns) != 0)
        return -1;
    int claimed = PQntuples(r) == 1;
    PQclear(r);
    if (!claimed)
        find_holder(pg, row->node_id, holder, until_ns);
    return claimed;
}

static char *dup_value(const PGresult *r, int row, int col)
{
    return strdup(PQgetvalue(r, row, col));
}

/* The rows from i on that are one node's: its roots (read_sql keeps a
 * node's rows together). */
static size_t rows_of_node(const PGresult *r, int i)
{
    int n = 1;
    while (i + n < PQntuples(r) &&
           strcmp(PQgetvalue(r, i + n, 0), PQgetvalue(r, i, 0)) == 0)
        n++;
    return (size_t)n;
}

/* Adds row i of r to out: a new node when its id differs from the last
 * one's, else one more root of it. 0 or -ENOMEM. */
static int add_row(fleet_reading *out, const PGresult *r, int i)
{
    fleet_node *last = out->n > 0 ? &out->nodes[out->n - 1] : NULL;
    if (last == NULL || last->node_id == NULL ||
        strcmp(last->node_id, PQgetvalue(r, i, 0)) != 0) {
        last = &out->nodes[out->n++];
        memset(last, 0, sizeof *last);
        last->node_id = dup_value(r, i, 0);
        last->address = dup_value(r, i, 1);
        last->version = dup_value(r, i, 2);
        last->draining = strcmp(PQgetvalue(r, i, 3), "t") == 0;
        last->age_ms = int_value(r, i, 4);
        last->roots = calloc(rows_of_node(r, i), sizeof *last->roots);
        if (last->node_id == NULL || last->address == NULL ||
            last->version == NULL || last->roots == NULL)
            return -ENOMEM;
    }
    if (PQgetisnull(r, i, 5))
        return 0;
    char *root = dup_value(r, i, 5);
    if (root == NULL)
        return -ENOMEM;
    last->roots[last->n_roots++] = root;
    return 0;
}

int fleet__pg_read(fleet_pg *pg, uint32_t ttl_ms, fleet_reading *out,
                   int64_t until_ns)
{
    char ttl[16], nodes[16], bytes[24], per_node[16];
    snprintf(ttl, sizeof ttl, "%u", ttl_ms);
    snprintf(nodes, sizeof nodes, "%u", FLEET_READ_MAX_NODES);
    snprintf(bytes, sizeof bytes, "%zu", FLEET_READ_MAX_BYTES);
    snprintf(per_node, sizeof per_node, "%u", FLEET_READ_MAX_ROOTS);
    const char *const params[] = { ttl, nodes, bytes, per_node };
    PGresult *r = NULL;
    memset(out, 0, sizeof *out);
    if (exec(pg, "reading tk_nodes", &r, read_sql, 4, params, until_ns) != 0)
        return -1;
    int rows = PQntuples(r);
    out->nodes = calloc(rows > 0 ? (size_t)rows : 1, sizeof *out->nodes);
    int rv = out->nodes != NULL ? 0 : -ENOMEM;
    for (int i = 0; i < rows && rv == 0; i++)
        rv = add_row(out, r, i);
    PQclear(r);
    if (rv != 0) {
        fleet__reading_fini(out);
        snprintf(pg->message, sizeof pg->message,
                 "reading tk_nodes: out of memory");
        return -1;
    }
    return 0;
}

int fleet__pg_delete(fleet_pg *pg, const char *node_id, const char *instance,
                     int64_t until_ns)
{
    const char *const params[] = { node_id, instance };
    if (fleet__pg_open(pg, until_ns) != 0)
        return -1;
    return exec(pg, "deleting this node's row", NULL,
                "DELETE FROM tk_nodes WHERE node_id = $1 AND instance = $2", 2,
                params, until_ns);
}

void fleet__reading_fini(fleet_reading *r)
{
    for (size_t i = 0; r->nodes != NULL && i < r->n; i++) {
        fleet_node *n = &r->nodes[i];
        free(n->node_id);
        free(n->address);
        free(n->version);
        for (size_t j = 0; j < n->n_roots; j++)
            free(n->roots[j]);
        free(n->roots);
    }
    free(r->nodes);
    memset(r, 0, sizeof *r);
}
