/* SPDX-License-Identifier: MIT */
/*
 * Test support: the one "server + client" fixture of the tests, in two
 * parts.
 *
 * In process (ts_fx): an rpc_server on a private ipc socket in a fresh
 * temporary directory, with the services the test asks for, and a
 * tk_client dialled to it. tk.test.Test (testsvc.h) is a flag; any other
 * service comes as callbacks the test passes in (ts_fx_service), so this
 * library links no service module: a test of Git links libgit2, one of
 * Orders libpq, and the others neither.
 *
 * As a process (ts_fx_daemon): tkd or testd as a child, on a private ipc
 * socket, started once it says it serves, with a tk_client; its output is
 * captured (ts_proc) for the test to wait on.
 *
 * Every helper fails the running cmocka test when something does not come
 * up. A test judges by events (semaphores, output lines, the fixture's
 * hooks) and by the server's own report (the status it answers), never by
 * the wall clock: the only times here are bounds on waits for something a
 * working server does at once, so that a broken one fails the test instead
 * of hanging it.
 */
#ifndef TK_TESTS_FIXTURE_H
#define TK_TESTS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tk/client.h>

#include "roots/roots.h"
#include "rpc/rpc.h"
#include "support.h"
#include "testsvc.h"

/* How long the fixture waits for a server to come up or to exit. */
#define TS_FX_WAIT_MS 20000

/* ---- in process ---------------------------------------------------------- */

typedef struct ts_fx ts_fx;

/* A service the fixture serves, made by the test's own code. */
typedef struct ts_fx_service {
    /* Makes the service and adds its methods to fx->srv: the directory,
     * the roots and the server exist, the server does not serve yet.
     * Returns the service (fx->service[i]); fails the test itself. */
    void *(*add)(ts_fx *fx, void *arg);
    /* Once the server serves (may be NULL): what the service starts only
     * then (orders_start). */
    void (*started)(void *service);
    /* After the server is freed (may be NULL). */
    void (*free)(void *service);
    void *arg; /* add's; only during ts_fx_start */
} ts_fx_service;

#define TS_FX_MAX_SERVICES 4

typedef struct ts_fx_opts {
    const char *tag; /* of the temporary directory (NULL: "fx") */
    /* The server; 0 is rpc's default (rpc_config_init). */
    unsigned workers, queue_depth;
    size_t max_request_bytes;
    int64_t allowed_uid;
    uint32_t shutdown_grace_ms;
    /* A second listener, url_ro, that serves READs only. */
    bool read_only_listener;
    /* What it serves. */
    bool testsvc; /* tk.test.Test, fx->svc */
    /* fx->roots, for the services that take paths (git); n_roots 0: none */
    const char *const *roots;
    size_t n_roots;
    const ts_fx_service *services; /* added in this order */
    size_t n_services;
} ts_fx_opts;

struct ts_fx {
    char dir[256];    /* private, removed by ts_fx_stop */
    char path[300];   /* the socket: dir/s.sock */
    char url[320];    /* ipc://path */
    char url_ro[320]; /* the read-only listener's, when asked for */
    testsvc svc;      /* when opts.testsvc */
    roots *roots;     /* when opts.n_roots */
    rpc_server *srv;
    tk_client *client;
    void *service[TS_FX_MAX_SERVICES]; /* what each service's add returned */
    ts_fx_service services[TS_FX_MAX_SERVICES];
    size_t n_services;
    bool has_svc;
};

/* o may be NULL: rpc's defaults, nothing but tk.v1.Control. */
void ts_fx_start(ts_fx *fx, const ts_fx_opts *o);
/* Closes the client, frees the server (shutting it down: a WRITE still
 * running has its grace), then the services, the roots and the directory. */
void ts_fx_stop(ts_fx *fx);

/* ---- as a process -------------------------------------------------------- */

typedef struct ts_fx_daemon_opts {
    /* testd (tests/integration/testd.c: tk.test.Test, "ENTERED <method>"
     * on stdout), else tkd. */
    bool testd;
    /* The socket's directory (it stays); NULL: a fresh one, removed by
     * ts_fx_daemon_stop. */
    const char *dir;
    const char *const *args; /* after --listen URL, NULL-terminated */
    const char *const *env;  /* over this process's ("K=V"), as ts_spawn */
} ts_fx_daemon_opts;

typedef struct ts_fx_daemon {
    char dir[256];
    char url[320]; /* ipc://dir/s.sock */
    ts_proc p;     /* its output, for ts_wait_output; its exit */
    tk_client *client;
    bool up;      /* started: ts_fx_daemon_stop has a process to end */
    bool own_dir; /* dir is the fixture's */
} ts_fx_daemon;

/* Starts it and waits until it serves (testd: "READY" on stdout; tkd:
 * "listening on" on stderr, logged at info, its default level), then
 * opens the client. */
void ts_fx_daemon_start(ts_fx_daemon *d, const ts_fx_daemon_opts *o);
/* Ends it: SIGTERM unless it has exited already (a test that signals it
 * itself reaps it first with ts_finish), then waits for its exit. Returns
 * its exit status as ts_finish does (-1: it did not exit in time and was
 * killed). Closes the client after the exit, removes the fixture's
 * directory. A zeroed ts_fx_daemon, or one that did not come up, is fine. */
int ts_fx_daemon_stop(ts_fx_daemon *d);

#endif
