/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the rpc core and libtkclient together share
 * (tests/integration/rpc/): the server of these tests (an in-process
 * rpc_server with tk.test.Test, or testd as a process; fixture.h), calls in
 * a thread, and raw NNG for frames no client library would send. Every
 * server is a test's own, on a socket in a fresh temporary directory, so
 * that meson runs the programs of this folder at once.
 */
#ifndef TK_TESTS_RPC_FX_H
#define TK_TESTS_RPC_FX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <pthread.h>

#include <tk/client.h>

#include "fixture.h"
#include "tk/v1/control.tk.h"
#include "tk/v1/rpc.pb-c.h"
#include "tsem.h"

#define WAIT_METHOD "tk.test.Test/Wait"
#define WRITE_METHOD "tk.test.Test/SlowWrite"

/* ---- fixture: an in-process server with tk.test.Test (fixture.h) ------- */

/* The server of these tests: tk.test.Test, a grace of 5 s; o (may be NULL)
 * says the rest. */
void fx_start(ts_fx *fx, const ts_fx_opts *o);
/* testd, the same server as a process (args: more of its options). */
void daemon_start(ts_fx_daemon *d, const char *const *args);
/* A wait bounded, so a broken server fails the test instead of hanging. */
void sem_wait_ok(ts_sem *s, const char *what);

/* ---- calls in a thread ----------------------------------------------------
 */

typedef struct async_call {
    tk_client *client;
    const char *method;
    uint32_t timeout_ms;
    tk_cancel *cancel;
    char data[64];
    tk_status st;
    Tk__V1__PingReply *reply;
    ts_sem *done;         /* posted when the call returns, if set */
    _Atomic bool is_done; /* the call returned */
    pthread_t thread;
} async_call;

/* A call of method with a PingRequest of data, its reply a PingReply
 * (*reply, if reply is not NULL; the caller frees it). */
int call_ping_like(tk_client *c, const char *method, const char *data,
                   uint32_t timeout_ms, tk_cancel *cancel, tk_status *st,
                   Tk__V1__PingReply **reply);
void async_start(async_call *a, tk_client *c, const char *method,
                 uint32_t timeout_ms, tk_cancel *cancel, const char *data);
/* async_start, with done posted when the call returns. */
void async_start_done(async_call *a, tk_client *c, const char *method,
                      uint32_t timeout_ms, tk_cancel *cancel, ts_sem *done);
void async_join(async_call *a);
void async_free(async_call *a);
/* A Ping of "hello" answers OK with it. */
void expect_ping_ok(tk_client *c);

/* ---- raw NNG: frames no client library would send ------------------------ */

typedef struct raw {
    nng_socket sock;
} raw;

/* Sends msg on a fresh context of r and returns that context's aio, whose
 * receive is already started. */
typedef struct raw_call {
    nng_ctx ctx;
    nng_aio *aio;
} raw_call;

/* A REQ socket that never resends, as libtkclient's (rpc_fx.c). */
void raw_open(raw *r, const char *url);
nng_msg *envelope(uint64_t id, const char *method, uint32_t timeout,
                  const ProtobufCMessage *payload);
void raw_send(raw *r, raw_call *rc, nng_msg *m);
Tk__V1__Reply *raw_reply(raw_call *rc);
Tk__V1__Reply *raw_roundtrip(raw *r, nng_msg *m);
nng_msg *raw_bytes(const void *data, size_t len);

/* ---- the fixture's only worker, held ---------------------------------------
 */

/* The fixture's only worker, held by a Wait (30 s) until release_worker. */
typedef struct held {
    tk_cancel *cancel;
    async_call call;
} held;

void hold_worker(ts_fx *fx, held *h);
/* Cancels the Wait (*outcome, if not NULL: the Cancel's outcome), waits for
 * it and frees it; returns what tk_cancel_fire returned. */
int release_worker(held *h, int *outcome);

#endif
