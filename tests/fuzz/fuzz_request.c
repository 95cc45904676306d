/* SPDX-License-Identifier: MIT */
/*
 * request: one frame through tkd's receive path (rpc__test_serve_frame),
 * as it arrives from a connection: the envelope's decode and its string
 * checks (NUL, UTF-8), the method lookup, the deadline, the registry, the
 * payload's decode against the method's request type and its NUL check,
 * the handler, and the reply's escaping and encoding.
 *
 * The server holds tk.v1.Control (its own, real) and, as the test
 * service, every other method of the catalog (tk.v1.Git/..., Search,
 * Services, Orders) under its real name and request and reply types, with
 * a handler that echoes the request's strings into the reply's string and
 * bytes fields (and sometimes into a failure's message), so that text
 * that is not UTF-8 reaches the reply's escaping.
 *
 * Checked on every frame:
 *   - there is a reply, and it is a tk.v1.Reply with a status;
 *   - every string of it (status, payload) is UTF-8 without NUL, as
 *     proto3 says and strict clients require;
 *   - it answers the frame's call_id, or 0 with BAD_FRAME for a frame
 *     that is no tk.v1.Request;
 *   - an envelope string with a NUL or not UTF-8 is refused (NUL_IN_STRING,
 *     STRING_NOT_UTF8) and nothing runs; a payload that does not decode is
 *     BAD_PAYLOAD, one with a NUL in a string NUL_IN_STRING: a handler
 *     never sees a string that protobuf-c cut at a NUL. This judgement is
 *     the harness's own walk of the wire bytes, not payload.c's.
 *   - an OK reply's payload decodes as the method's reply type.
 */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <tk/client.h>

#include "fuzz.h"
#include "common/common.h"
#include "control/control.h"
#include "obs/obs.h"
#include "rpc/rpc.h"
#include "tk/v1/rpc.pb-c.h"

static rpc_server *srv;
static rpc_method *methods;
static uint32_t next_conn;
static bool handler_ran;

/* ---- the test service: echo ---------------------------------------------- */

#define MAX_TEXTS 8

typedef struct texts {
    const char *s[MAX_TEXTS];
    size_t n;
} texts;

/* The first strings of m, depth first. */
static void collect(const ProtobufCMessage *m, texts *t, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields && t->n < MAX_TEXTS && depth < 8;
         i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(const void *)((const char *)m +
                                              f->quantifier_offset) != f->id)
            continue; /* another member of its oneof holds the memory */
        const char *base = (const char *)m + f->offset;
        size_t n = 1;
        const void *const *items = (const void *const *)(const void *)base;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            n = *(const size_t *)(const void *)((const char *)m +
                                                f->quantifier_offset);
            items = *(const void *const *const *)(const void *)base;
        }
        for (size_t k = 0; k < n && t->n < MAX_TEXTS; k++) {
            if (f->type == PROTOBUF_C_TYPE_STRING && items[k] != NULL &&
                items[k] != f->default_value)
                t->s[t->n++] = items[k];
            else if (f->type == PROTOBUF_C_TYPE_MESSAGE && items[k] != NULL)
                collect(items[k], t, depth + 1);
        }
    }
}

/* Puts the texts into the reply's singular string and bytes fields (not
 * oneof members: the reply types have few). */
static void fill(rpc_call *call, ProtobufCMessage *out, const texts *t)
{
    const ProtobufCMessageDescriptor *d = out->descriptor;
    size_t k = 0;
    for (unsigned i = 0; i < d->n_fields && t->n > 0; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REPEATED ||
            (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        void *at = (char *)out + f->offset;
        const char *s = t->s[k++ % t->n];
        if (f->type == PROTOBUF_C_TYPE_STRING)
            *(char **)at = rpc_call_strdup(call, s);
        else if (f->type == PROTOBUF_C_TYPE_BYTES)
            *(ProtobufCBinaryData *)at = rpc_call_bytes(call, s, strlen(s));
    }
}

static void echo(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply)
{
    (void)svc;
    handler_ran = true;
    texts t = { .n = 0 };
    collect(request, &t, 0);
    if (t.n == 0)
        return;
    unsigned char first = (unsigned char)t.s[0][0];
    if (first & 1) {
        rpc_call_set_stderr(call, t.s[0], strlen(t.s[0]));
        rpc_call_fail(call, RPC_FAILED_PRECONDITION, "FUZZ_ECHO", "echo: %s",
                      t.s[0]);
        return;
    }
    if (first & 2)
        rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
    fill(call, reply, &t);
}

/* ---- the harness's own walk of the wire ---------------------------------- */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p == w->end)
            return false;
        uint8_t b = *w->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

enum { TEXT_OK, TEXT_NUL, TEXT_NOT_UTF8 };

static bool skip(wire *w, uint64_t n)
{
    if (n > (uint64_t)(w->end - w->p))
        return false;
    w->p += n;
    return true;
}

/* Past the value of a field of wire type wt that is not length-delimited
 * (a group: proto2's; tk's protos have none, but a peer may send one as an
 * unknown field). false on anything malformed. */
static bool skip_value(wire *w, unsigned wt, uint64_t num, int depth)
{
    uint64_t v;
    switch (wt) {
    case 0:
        return varint(w, &v);
    case 1:
        return skip(w, 8);
    case 5:
        return skip(w, 4);
    case 3:
        while (depth < 64 && varint(w, &v)) {
            unsigned inner = (unsigned)(v & 7);
            if (inner == 4)
                return (v >> 3) == num;
            if (inner == 2) {
                uint64_t n;
                if (!varint(w, &n) || !skip(w, n))
                    return false;
            } else if (!skip_value(w, inner, v >> 3, depth + 1)) {
                return false;
            }
        }
        return false;
    default:
        return false;
    }
}

/* The worst string of the message d encoded in [p, p+n): the first bad
 * one in wire order, TEXT_NUL before TEXT_NOT_UTF8 within a string (utf8:
 * whether UTF-8 is required). Message fields are walked; malformed
 * framing ends the walk (the decoder judged it already). */
static int worst_text(const ProtobufCMessageDescriptor *d, const uint8_t *p,
                      size_t n, bool utf8, int depth)
{
    if (n == 0)
        return TEXT_OK; /* p may be NULL (an empty payload) */
    wire w = { p, p + n };
    uint64_t key, v;
    while (w.p < w.end && varint(&w, &key)) {
        unsigned wt = (unsigned)(key & 7);
        if (wt != 2) {
            if (!skip_value(&w, wt, key >> 3, depth))
                return TEXT_OK;
            continue;
        }
        if (!varint(&w, &v) || v > (uint64_t)(w.end - w.p))
            return TEXT_OK;
        const ProtobufCFieldDescriptor *f =
            (key >> 3) <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(
                                           d, (unsigned)(key >> 3))
                                     : NULL;
        int r = TEXT_OK;
        if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING) {
            if (memchr(w.p, 0, (size_t)v) != NULL)
                r = TEXT_NUL;
            else if (utf8 && !tkc_utf8_valid((const char *)w.p, (size_t)v))
                r = TEXT_NOT_UTF8;
        } else if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                   depth < 32) {
            r = worst_text(f->descriptor, w.p, (size_t)v, utf8, depth + 1);
        }
        if (r != TEXT_OK)
            return r;
        w.p += v;
    }
    return TEXT_OK;
}

/* ---- the checks ---------------------------------------------------------- */

static const char *reason_of(const Tk__V1__Reply *rep)
{
    return rep->status->reason != NULL ? rep->status->reason : "";
}

static void check_refused(const Tk__V1__Reply *rep, const char *reason)
{
    FUZZ_CHECK(!handler_ran, "the handler ran on a refused frame");
    FUZZ_CHECK(rep->status->code == TK__V1__STATUS__CODE__INVALID_ARGUMENT &&
                   strcmp(reason_of(rep), reason) == 0,
               "want INVALID_ARGUMENT %s, got %d %s", reason,
               (int)rep->status->code, reason_of(rep));
}

static const tk_method_desc *method_of(const char *name)
{
    return tk_catalog_find_method(name);
}

/* What the payload of a decoded envelope must have led to. */
static void check_payload(const Tk__V1__Request *req, const Tk__V1__Reply *rep)
{
    if (strcmp(reason_of(rep), "EXPIRED_IN_QUEUE") == 0) {
        /* A timeout_ms of 1 can pass before the call would start. */
        FUZZ_CHECK(!handler_ran, "the handler ran past the deadline");
        return;
    }
    const tk_method_desc *m = method_of(req->method);
    if (m == NULL) {
        FUZZ_CHECK(rep->status->code == TK__V1__STATUS__CODE__UNIMPLEMENTED &&
                       !handler_ran,
                   "unknown method answered %d", (int)rep->status->code);
        return;
    }
    ProtobufCMessage *in = protobuf_c_message_unpack(
        m->request, NULL, req->payload.len, req->payload.data);
    if (in == NULL) {
        check_refused(rep, "BAD_PAYLOAD");
        return;
    }
    protobuf_c_message_free_unpacked(in, NULL);
    if (worst_text(m->request, req->payload.data, req->payload.len, false, 0) ==
        TEXT_NUL) {
        check_refused(rep, "NUL_IN_STRING");
        return;
    }
    if (rep->status->code != TK__V1__STATUS__CODE__OK)
        return;
    ProtobufCMessage *out = protobuf_c_message_unpack(
        m->reply, NULL, rep->payload.len, rep->payload.data);
    FUZZ_CHECK(out != NULL, "an OK reply of %s does not decode as %s", m->name,
               m->reply->name);
    protobuf_c_message_free_unpacked(out, NULL);
    FUZZ_CHECK(worst_text(m->reply, rep->payload.data, rep->payload.len, true,
                          0) == TEXT_OK,
               "a string of %s's reply is not UTF-8, or holds a NUL", m->name);
}

static void check(const uint8_t *frame, size_t len, const uint8_t *out,
                  size_t out_len)
{
    Tk__V1__Reply *rep = tk__v1__reply__unpack(NULL, out_len, out);
    FUZZ_CHECK(rep != NULL && rep->status != NULL,
               "the reply (%zu bytes) is no tk.v1.Reply with a status",
               out_len);
    FUZZ_CHECK(worst_text(&tk__v1__reply__descriptor, out, out_len, true, 0) ==
                   TEXT_OK,
               "a string of the reply's envelope is not UTF-8, or holds a NUL");
    Tk__V1__Request *req = tk__v1__request__unpack(NULL, len, frame);
    if (req == NULL) {
        FUZZ_CHECK(rep->call_id == 0, "call_id %llu for no request",
                   (unsigned long long)rep->call_id);
        check_refused(rep, "BAD_FRAME");
        tk__v1__reply__free_unpacked(rep, NULL);
        return;
    }
    FUZZ_CHECK(rep->call_id == req->call_id, "call_id %llu answered as %llu",
               (unsigned long long)req->call_id,
               (unsigned long long)rep->call_id);
    int env = worst_text(&tk__v1__request__descriptor, frame, len, true, 0);
    if (env == TEXT_NUL)
        check_refused(rep, "NUL_IN_STRING");
    else if (env == TEXT_NOT_UTF8)
        check_refused(rep, "STRING_NOT_UTF8");
    else
        check_payload(req, rep);
    tk__v1__request__free_unpacked(req, NULL);
    tk__v1__reply__free_unpacked(rep, NULL);
}

/* ---- libFuzzer ------------------------------------------------------------
 */

/* The server and its test service, once. */
static void setup(void)
{
    obs_log_set_level(OBS_LOG_ERROR);
    static const char *const listen[] = { "ipc:///nonexistent/tk-fuzz.sock" };
    rpc_config cfg;
    rpc_config_init(&cfg);
    cfg.listen = listen;
    cfg.n_listen = 1;
    cfg.version = "fuzz";
    char err[256];
    if (rpc_server_new(&srv, &cfg, err, sizeof err) != 0 ||
        control_register(srv, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_request: %s\n", err);
        abort();
    }
    size_t n = tk_catalog_method_count(), k = 0;
    methods = calloc(n, sizeof *methods);
    FUZZ_CHECK(methods != NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const tk_method_desc *m = tk_catalog_method(i);
        if (strncmp(m->name, "tk.v1.Control/", 14) == 0)
            continue; /* control_register's */
        methods[k] = (rpc_method){
            .name = m->name,
            .request = m->request,
            .reply = m->reply,
            .kind = k % 2 == 0 ? RPC_READ : RPC_WRITE,
            .default_timeout_ms = 5000,
            .ceiling_ms = 60000,
            .handler = echo,
        };
        k++;
    }
    if (rpc_server_add_service(srv, NULL, methods, k, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_request: %s\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A connection of its own per frame: the registry's memory of call
     * ids (duplicates, Cancel, CallState) is per connection, and a frame
     * must not depend on the ones before it. */
    rpc_peer peer = { .conn = ++next_conn,
                      .uid = (int64_t)geteuid(),
                      .pid = (int64_t)getpid() };
    uint8_t *out = NULL;
    size_t out_len = 0;
    if (srv == NULL)
        setup();
    handler_ran = false;
    int rv = rpc__test_serve_frame(srv, &peer, data, size, &out, &out_len);
    FUZZ_CHECK(rv == 0, "rpc__test_serve_frame: %d", rv);
    FUZZ_CHECK(out != NULL, "no reply to a frame of %zu bytes", size);
    check(data, size, out, out_len);
    free(out);
    return 0;
}
