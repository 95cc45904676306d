/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testsvc.h"
#include "tk/v1/control.pb-c.h"

static void announce(testsvc *t, const char *what)
{
    ts_sem_post(&t->entered);
    if (t->announce_stdout) {
        char line[128];
        int n = snprintf(line, sizeof line, "ENTERED %s\n", what);
        ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
        (void)w;
    }
}

static void wait_handler(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    testsvc *t = svc;
    (void)request;
    (void)reply;
    atomic_fetch_add(&t->wait_runs, 1);
    announce(t, "Wait");
    while (rpc_call_cause(call) == RPC_CAUSE_NONE)
        rpc_call_poll(call, NULL, 0, INT64_MAX);
    atomic_store(&t->last_cause, (int)rpc_call_fail_stopped(call));
    ts_sem_post(&t->exited);
}

/* A READ whose stopping outlasts its client's grace, as a process group
 * slow to drain on a loaded machine does: once cancelled or past its
 * deadline it announces "Late" and holds its answer until released, then
 * answers as every READ must. */
static void late_handler(void *svc, rpc_call *call,
                         const ProtobufCMessage *request,
                         ProtobufCMessage *reply)
{
    testsvc *t = svc;
    (void)request;
    (void)reply;
    while (rpc_call_cause(call) == RPC_CAUSE_NONE)
        rpc_call_poll(call, NULL, 0, INT64_MAX);
    announce(t, "Late");
    ts_sem_wait(&t->release);
    atomic_store(&t->last_cause, (int)rpc_call_fail_stopped(call));
}

static void slow_write(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    testsvc *t = svc;
    const Tk__V1__PingRequest *in = (const Tk__V1__PingRequest *)request;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    atomic_fetch_add(&t->write_runs, 1);
    announce(t, "SlowWrite");
    if (t->use_release) {
        ts_sem_wait(&t->release);
    } else {
        char ms[32] = "0";
        size_t n = in->data.len < sizeof ms - 1 ? in->data.len : sizeof ms - 1;
        memcpy(ms, in->data.data, n);
        ms[n] = '\0';
        long v = strtol(ms, NULL, 10);
        /* The write itself: it takes its time whatever the caller does. */
        struct timespec ts = { v / 1000, (v % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    out->data.data = (uint8_t *)rpc_call_strdup(call, "written");
    out->data.len = 7;
}

/* A READ with a write inside: it passes its commit point when released,
 * then finishes when released again. Announces each phase. */
static void commit_handler(void *svc, rpc_call *call,
                           const ProtobufCMessage *request,
                           ProtobufCMessage *reply)
{
    testsvc *t = svc;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    (void)request;
    announce(t, "Commit");
    ts_sem_wait(&t->release);
    if (rpc_call_commit_point(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call); /* nothing was written */
        return;
    }
    announce(t, "Committing");
    ts_sem_wait(&t->release);
    out->data.data = (uint8_t *)rpc_call_strdup(call, "committed");
    out->data.len = 9;
}

/* Echoes the timeout in force, in ms, as decimal text in PingReply.data:
 * what the caller's timeout_ms became on the server. */
static void timeout_handler(void *svc, rpc_call *call,
                            const ProtobufCMessage *request,
                            ProtobufCMessage *reply)
{
    (void)svc;
    (void)request;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    char text[32];
    int n = snprintf(
        text, sizeof text, "%lld",
        (long long)((rpc_call_deadline(call) - rpc_call_received(call)) /
                    1000000LL));
    out->data = rpc_call_bytes(call, text, (size_t)n);
}

/* A reply in two parts: PingReply.server_version encoded by hand as the
 * reply's prefix, data and uptime_ms set in the message; then failed when
 * the request's data is "fail". */
static void prefix_handler(void *svc, rpc_call *call,
                           const ProtobufCMessage *request,
                           ProtobufCMessage *reply)
{
    (void)svc;
    static const char version[] = "from the prefix";
    const Tk__V1__PingRequest *in = (const Tk__V1__PingRequest *)request;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    uint8_t *enc = rpc_call_alloc(call, sizeof version + 1);
    enc[0] = 2 << 3 | 2; /* field 2, length-delimited */
    enc[1] = (uint8_t)(sizeof version - 1);
    memcpy(enc + 2, version, sizeof version - 1);
    rpc_call_set_reply_prefix(call, enc, sizeof version + 1);
    out->data = rpc_call_bytes(call, "after", 5);
    out->uptime_ms = 7;
    if (in->data.len == 4 && memcmp(in->data.data, "fail", 4) == 0)
        rpc_call_fail(call, RPC_FAILED_PRECONDITION, "ASKED_TO_FAIL",
                      "the caller asked for a failure");
}

static const rpc_method test_methods[] = {
    {
        .name = "tk.test.Test/Wait",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 60000,
        .ceiling_ms = 600000,
        .handler = wait_handler,
    },
    {
        /* Wait under a small ceiling: a caller's long timeout is cut. */
        .name = "tk.test.Test/Capped",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 300,
        .ceiling_ms = 300,
        .handler = wait_handler,
    },
    {
        /* The ceiling caps nothing a uint32 can say. */
        .name = "tk.test.Test/Timeout",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 7000,
        .ceiling_ms = UINT32_MAX,
        .handler = timeout_handler,
    },
    {
        .name = "tk.test.Test/Prefix",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 5000,
        .ceiling_ms = 5000,
        .handler = prefix_handler,
    },
    {
        .name = "tk.test.Test/Late",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 5000,
        .ceiling_ms = 600000,
        .handler = late_handler,
    },
    {
        .name = "tk.test.Test/SlowWrite",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_WRITE,
        .default_timeout_ms = 60000,
        .ceiling_ms = 60000,
        .handler = slow_write,
    },
    {
        .name = "tk.test.Test/Commit",
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 60000,
        .ceiling_ms = 600000,
        .handler = commit_handler,
        .flags = RPC_METHOD_WRITES,
    },
};

void testsvc_init(testsvc *t)
{
    memset(t, 0, sizeof *t);
    atomic_init(&t->wait_runs, 0);
    atomic_init(&t->write_runs, 0);
    ts_sem_init(&t->entered, 0);
    ts_sem_init(&t->exited, 0);
    atomic_init(&t->last_cause, 0);
    ts_sem_init(&t->release, 0);
}

void testsvc_destroy(testsvc *t)
{
    ts_sem_destroy(&t->entered);
    ts_sem_destroy(&t->exited);
    ts_sem_destroy(&t->release);
}

int testsvc_register(testsvc *t, rpc_server *srv)
{
    char err[256];
    int rv = rpc_server_add_service(srv, t, test_methods,
                                    sizeof test_methods / sizeof *test_methods,
                                    err, sizeof err);
    if (rv != 0)
        fprintf(stderr, "testsvc: %s\n", err);
    return rv;
}
