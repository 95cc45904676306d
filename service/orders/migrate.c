/* SPDX-License-Identifier: MIT */
/* The schema, as numbered migrations applied in order and recorded in
 * tk_schema_migrations. Run on every new connection (at start, on first
 * use, after a reconnect): when the schema is current that is one short
 * transaction, and it means a database that was down at start, restored
 * or replaced is migrated before any call uses it. Idempotent, and safe
 * with several tkd at once: an advisory lock serializes them. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "orders_int.h"

typedef struct migration {
    int version;
    const char *name;
    const char *sql; /* simple protocol: several statements */
} migration;

/* Append only: a released migration is never edited, a change is a new
 * version. IF NOT EXISTS adopts these tables where they were made by hand
 * before tkd managed the schema, instead of failing on them. */
static const migration migrations[] = {
    {
        1,
        "orders and order_items",
        "CREATE TABLE IF NOT EXISTS orders ("
        "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        "  status text NOT NULL DEFAULT 'open',"
        "  closed_at timestamptz);"
        "CREATE TABLE IF NOT EXISTS order_items ("
        "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        "  order_id bigint NOT NULL REFERENCES orders (id),"
        "  sku text NOT NULL);"
        /* Item counts, and deletes of orders, look items up by order. */
        "CREATE INDEX IF NOT EXISTS order_items_order_id ON order_items "
        "(order_id)",
    },
};

/* pg_advisory_xact_lock key: "tkschema" in ASCII. */
#define MIGRATION_LOCK "8388925601698114913"

static int current_version(orders_tx *tx, int *out)
{
    PGresult *r = NULL;
    if (orders__tx_exec(tx, NULL,
                        "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK "); "
                        "CREATE TABLE IF NOT EXISTS tk_schema_migrations ("
                        "  version integer PRIMARY KEY,"
                        "  name text NOT NULL,"
                        "  applied_at timestamptz NOT NULL DEFAULT now())",
                        -1, NULL) != 0 ||
        orders__tx_exec(tx, &r,
                        "SELECT coalesce(max(version), 0) "
                        "FROM tk_schema_migrations",
                        0, NULL) != 0)
        return -1;
    const char *text = PQgetvalue(r, 0, 0);
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    bool ok =
        end != text && *end == '\0' && errno == 0 && v >= 0 && v <= INT_MAX;
    PQclear(r);
    if (!ok) {
        tx->err = ORDERS_EINTERNAL;
        orders__set_message(tx, "tk_schema_migrations holds a version "
                                "that is not a non-negative integer");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int apply(orders_tx *tx, const migration *m)
{
    char version[16];
    snprintf(version, sizeof version, "%d", m->version);
    const char *const params[] = { version, m->name };
    if (orders__tx_exec(tx, NULL, m->sql, -1, NULL) != 0 ||
        orders__tx_exec(tx, NULL,
                        "INSERT INTO tk_schema_migrations (version, name) "
                        "VALUES ($1, $2)",
                        2, params) != 0)
        return -1;
    const obs_field f[] = { OBS_INT("version", m->version),
                            OBS_STR("name", m->name) };
    obs_log_fields(OBS_LOG_INFO, f, 2,
                   "orders: schema migration %d (%s) applied", m->version,
                   m->name);
    return 0;
}

int orders__migrate(orders_tx *tx)
{
    const size_t n = sizeof migrations / sizeof migrations[0];
    int have = 0;
    if (orders__tx_begin_statement(tx) != 0 || current_version(tx, &have) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (migrations[i].version > have && apply(tx, &migrations[i]) != 0)
            return -1;
    if (have > migrations[n - 1].version) {
        const obs_field f[] = { OBS_INT("version", have),
                                OBS_INT("known_version",
                                        migrations[n - 1].version) };
        obs_log_fields(OBS_LOG_WARN, f, 2,
                       "orders: the schema is at version %d, newer than this "
                       "tkd knows (%d)",
                       have, migrations[n - 1].version);
    }
    if (have >= migrations[n - 1].version) {
        /* Nothing written: end the transaction without a commit. */
        return orders__tx_exec(tx, NULL, "ROLLBACK", -1, NULL);
    }
    return orders__tx_commit(tx);
}
