/* SPDX-License-Identifier: MIT */
/*
 * Test support: a private PostgreSQL 15 cluster for one test binary
 * (tools/pg-cluster: initdb, a unix socket in the cluster's own directory,
 * no TCP; as `postgres` when the tests run as root), databases in it, and
 * libpq helpers for the test's own connections. A guard process stops the
 * cluster and removes its directory when the test process ends, however it
 * ends (a crash or a sanitizer abort skips teardown).
 */
#ifndef TK_TESTS_PG_H
#define TK_TESTS_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <libpq-fe.h>

typedef struct ts_pg {
    char dir[256];  /* the cluster (data, socket, logs) */
    char base[512]; /* its DSN without a dbname */
    pid_t guard;
    int guard_fd; /* closing it (or exiting) ends the guard */
} ts_pg;

/* initdb, start; returns 0 or -1 (with a message on stderr). */
int ts_pg_start(ts_pg *pg);
/* Stops the server (fast shutdown); ts_pg_restart starts it again. */
int ts_pg_stop(ts_pg *pg);
int ts_pg_restart(ts_pg *pg);
/* Stops the cluster and removes it. */
void ts_pg_destroy(ts_pg *pg);

/* The DSN of database name in the cluster. */
void ts_pg_dsn(const ts_pg *pg, const char *name, char *out, size_t len);
/* CREATE DATABASE name (dropped first if it exists). */
int ts_pg_createdb(const ts_pg *pg, const char *name);

/* A connection, or NULL (with a message on stderr). */
PGconn *ts_pg_connect(const char *dsn);
/* Runs sql (simple protocol); 0 when it succeeded. *sqlstate (may be
 * NULL) receives the SQLSTATE of an error, "" on success. */
int ts_pg_exec(PGconn *c, const char *sql, char sqlstate[6]);
/* The first column of the first row of sql as a long long; -1 on error or
 * NULL or no row. */
long long ts_pg_int(PGconn *c, const char *sql);
/* Polls sql (every 2 ms) until its first value is true (t), at most
 * timeout_ms. For "has the lock wait begun": pg_stat_activity or pg_locks
 * say so; polling the database for a state is deterministic, a sleep is
 * not. */
bool ts_pg_wait_true(PGconn *c, const char *sql, int timeout_ms);

#endif
