/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg.h"
#include "support.h"

static void tool_path(char *out, size_t len)
{
    snprintf(out, len, "%s/tools/pg-cluster", ts_program("TK_SOURCE_ROOT"));
}

/* tools/pg-cluster CMD DIR [--fast]; its stdout (the DSN) in out. */
static int cluster(const ts_pg *pg, const char *cmd, char *out, size_t len)
{
    char tool[512];
    tool_path(tool, sizeof tool);
    const char *argv[] = { tool, cmd, pg->dir, "--fast", NULL };
    if (strcmp(cmd, "start") != 0)
        argv[3] = NULL;
    ts_proc p;
    if (ts_spawn(&p, argv, NULL) != 0)
        return -1;
    int rv = ts_finish(&p, 120000);
    if (rv != 0)
        fprintf(stderr, "pg-cluster %s %s: exit %d\n%s%s\n", cmd, pg->dir, rv,
                p.out ? p.out : "", p.err ? p.err : "");
    else if (out != NULL)
        snprintf(out, len, "%s", p.out ? p.out : "");
    ts_proc_free(&p);
    return rv == 0 ? 0 : -1;
}

/* A shell in a session of its own that waits for EOF on its stdin (the
 * read end of a pipe only this process writes), then stops the cluster and
 * removes it: the cleanup happens even when the test dies. */
static int start_guard(ts_pg *pg)
{
    int fds[2];
    if (ts_pipe_cloexec(fds) != 0)
        return -1;
    char tool[512];
    tool_path(tool, sizeof tool);
    const char *argv[] = {
        "/bin/sh", "-c",    "cat >/dev/null; \"$0\" stop \"$1\"; rm -rf \"$1\"",
        tool,      pg->dir, NULL
    };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
    int rv = posix_spawn(&pg->guard, argv[0], &fa, &at, (char *const *)argv,
                         environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[0]);
    if (rv != 0) {
        close(fds[1]);
        return -1;
    }
    pg->guard_fd = fds[1];
    return 0;
}

int ts_pg_start(ts_pg *pg)
{
    memset(pg, 0, sizeof *pg);
    pg->guard = -1;
    pg->guard_fd = -1;
    char tool[512];
    tool_path(tool, sizeof tool); /* aborts before anything is made */
    if (ts_mkdtemp(pg->dir, sizeof pg->dir, "pg") != 0)
        return -1;
    if (start_guard(pg) != 0)
        return -1;
    char dsn[512];
    if (cluster(pg, "start", dsn, sizeof dsn) != 0)
        return -1;
    /* "host=... port=... user=tk dbname=tk\n": keep all but dbname. */
    char *db = strstr(dsn, " dbname=");
    if (db == NULL)
        return -1;
    *db = '\0';
    snprintf(pg->base, sizeof pg->base, "%s", dsn);
    return 0;
}

int ts_pg_stop(ts_pg *pg)
{
    return cluster(pg, "stop", NULL, 0);
}

int ts_pg_restart(ts_pg *pg)
{
    return cluster(pg, "start", NULL, 0);
}

void ts_pg_destroy(ts_pg *pg)
{
    if (pg->dir[0] != '\0') {
        cluster(pg, "stop", NULL, 0);
        ts_rmtree(pg->dir);
    }
    if (pg->guard_fd >= 0)
        close(pg->guard_fd);
    if (pg->guard > 0)
        waitpid(pg->guard, NULL, 0);
    pg->guard = -1;
    pg->guard_fd = -1;
}

void ts_pg_dsn(const ts_pg *pg, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s dbname=%s", pg->base, name);
}

int ts_pg_createdb(const ts_pg *pg, const char *name)
{
    char dsn[600], sql[256];
    ts_pg_dsn(pg, "postgres", dsn, sizeof dsn);
    PGconn *c = ts_pg_connect(dsn);
    if (c == NULL)
        return -1;
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", name);
    int rv = ts_pg_exec(c, sql, NULL);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
    if (rv == 0)
        rv = ts_pg_exec(c, sql, NULL);
    PQfinish(c);
    return rv;
}

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

PGconn *ts_pg_connect(const char *dsn)
{
    PGconn *c = PQconnectdb(dsn);
    if (c == NULL || PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "connect %s: %s", dsn,
                c ? PQerrorMessage(c) : "out of memory\n");
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, quiet, NULL);
    return c;
}

int ts_pg_exec(PGconn *c, const char *sql, char sqlstate[6])
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (sqlstate != NULL) {
        const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        snprintf(sqlstate, 6, "%s", ok || s == NULL ? "" : s);
    } else if (!ok) {
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
    return ok ? 0 : -1;
}

long long ts_pg_int(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    long long v = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 &&
        !PQgetisnull(r, 0, 0))
        v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return v;
}

bool ts_pg_wait_true(PGconn *c, const char *sql, int timeout_ms)
{
    long long until = ts_now_ms() + timeout_ms;
    for (;;) {
        PGresult *r = PQexec(c, sql);
        bool yes = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 &&
                   strcmp(PQgetvalue(r, 0, 0), "t") == 0;
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        if (yes)
            return true;
        if (ts_now_ms() >= until)
            return false;
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
}
