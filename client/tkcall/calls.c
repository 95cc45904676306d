/* SPDX-License-Identifier: MIT */
/* tkcall's calls: the client opened on first use, one call run with the
 * cancel handle of Ctrl-C bound to it, and the questions tkcall asks tkd
 * about its methods (ListMethods).
 *
 * Owns: open_client, tkcall__run_call and what tkd is asked of its
 * methods; a method name resolved against the catalog and tkd.
 * May call: libtkclient, usage.c, output.c.
 * Must never: print a reply (output.c does), read the command line. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

#include "tk/v1/control.pb-c.h"

/* Opens the client on first use; on failure *st says tkd is not running. */
static int open_client(tkcall *t, tk_status *st)
{
    if (t->client != NULL)
        return TK_OK;
    char err[512] = "";
    int rv = tk_client_open_opts(&t->client, t->addr, &t->tls, err, sizeof err);
    if (rv == TK_OK)
        return TK_OK;
    /* Nothing listens there: say how to start one, as tkd takes it (plain
     * tcp:// only for a lab). Anything else (a TLS handshake, a
     * certificate file) is said as it is. */
    bool refused =
        rv == TK_ERR_CONNECT && strstr(err, "is tkd running there?") != NULL;
    if (refused && strncmp(t->addr, "tcp", 3) == 0)
        return tkcall_make_status(
            st, TK_CODE_UNAVAILABLE,
            "tkd is not running at %s (%s); tkd listens on plain tcp:// "
            "only for a lab (`tkd --insecure-plain-tcp --listen %s`: it "
            "authenticates no one); start it with `tkd --listen "
            "tls+tcp://HOST:PORT --tls-cert F --tls-key F --tls-ca F` and "
            "call tls+tcp:// with --cacert, --cert and --key, or run `tkd` "
            "on this machine (ipc://, the default address)",
            t->addr, err, t->addr);
    if (refused && strncmp(t->addr, "tls+", 4) == 0)
        return tkcall_make_status(
            st, TK_CODE_UNAVAILABLE,
            "tkd is not running at %s (%s); start it with `tkd --listen "
            "%s --tls-cert F --tls-key F --tls-ca F`, or point tkcall at a "
            "running tkd with --addr URL or TK_ADDR",
            t->addr, err, t->addr);
    if (refused)
        return tkcall_make_status(
            st, TK_CODE_UNAVAILABLE,
            "tkd is not running at %s (%s); start it with "
            "`tkd --listen %s` (or `tkd` for the default "
            "address), or point tkcall at a running tkd with "
            "--addr URL or TK_ADDR",
            t->addr, err, t->addr);
    return tkcall_make_status(st, TK_CODE_UNAVAILABLE, "cannot reach tkd: %s",
                              err);
}

int tkcall__run_call(tkcall *t, const char *method,
                     const ProtobufCMessage *request,
                     const ProtobufCMessageDescriptor *reply_desc,
                     ProtobufCMessage **reply, tk_status *st)
{
    tk_call_opts opts = { .timeout_ms = t->timeout_ms,
                          .cancel = t->sig.cancel,
                          .node = t->node,
                          .retry_reads = t->retry_reads,
                          .reply_allocator =
                              tk_arena_allocator(t->reply_arena) };
    int code = open_client(t, st);
    if (code == TK_OK) {
        atomic_store(&t->sig.in_call, true);
        code =
            tk_call(t->client, method, request, reply_desc, reply, &opts, st);
        atomic_store(&t->sig.in_call, false);
    }
    if (t->verbose) {
        char deadline[32];
        tkcall__format_ms(deadline, sizeof deadline, t->timeout_ms);
        tkcall_verbose v = { .method = method, .deadline = deadline };
        tkcall_print_verbose(&v, st);
    }
    return code;
}

int tkcall__list_methods(tkcall *t, const char *service,
                         Tk__V1__ListMethodsReply **out, tk_status *st)
{
    Tk__V1__ListMethodsRequest req = TK__V1__LIST_METHODS_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.service = (char *)service;
    int code =
        tkcall__run_call(t, "tk.v1.Control/ListMethods", &req.base,
                         &tk__v1__list_methods_reply__descriptor, &reply, st);
    *out = (Tk__V1__ListMethodsReply *)reply;
    return code;
}

/* What tkd says of method: *info is NULL when it does not serve it. */
int tkcall__fetch_method_info(tkcall *t, const char *method,
                              Tk__V1__ListMethodsReply **list,
                              const Tk__V1__MethodInfo **info, tk_status *st)
{
    *list = NULL;
    *info = NULL;
    const char *slash = strchr(method, '/');
    char service[256];
    snprintf(service, sizeof service, "%.*s", (int)(slash - method), method);
    int code = tkcall__list_methods(t, service, list, st);
    if (code != TK_OK && code != TK_CODE_NOT_FOUND)
        return code;
    tk_status_clear(st); /* NOT_FOUND: no such service */
    if (code == TK_CODE_NOT_FOUND)
        return TK_OK;
    for (size_t i = 0; i < (*list)->n_methods; i++)
        if (strcmp((*list)->methods[i]->name, method) == 0)
            *info = (*list)->methods[i];
    return TK_OK;
}

int tkcall__unknown_method(const tkcall *t, const char *method)
{
    return tkcall__usage_error(
        "unknown method \"%s\": neither tkcall's catalog nor "
        "tkd at %s knows it; `tkcall list` shows the methods "
        "tkd serves",
        method, t->addr);
}

/* The request and reply types of method: from the catalog compiled in, or
 * else from tkd's ListMethods (a method tkd added, with known types). */
int tkcall__resolve_method(tkcall *t, const char *method,
                           const ProtobufCMessageDescriptor **req,
                           const ProtobufCMessageDescriptor **rep)
{
    const tk_method_desc *m = tk_catalog_find_method(method);
    if (m != NULL) {
        *req = m->request;
        *rep = m->reply;
        return TKCALL_EXIT_OK;
    }
    Tk__V1__ListMethodsReply *list = NULL;
    const Tk__V1__MethodInfo *info = NULL;
    tk_status st = { 0 };
    int rv = TKCALL_EXIT_OK;
    if (tkcall__fetch_method_info(t, method, &list, &info, &st) != TK_OK) {
        rv = tkcall_report(&st);
    } else if (info == NULL) {
        rv = tkcall__unknown_method(t, method);
    } else {
        *req = tk_catalog_find_message(info->request_type);
        *rep = tk_catalog_find_message(info->reply_type);
        if (*req == NULL || *rep == NULL)
            rv = tkcall__usage_error(
                "tkd serves %s (%s -> %s), but tkcall's catalog "
                "lacks %s; use a tkcall built with its proto",
                method, info->request_type, info->reply_type,
                *req == NULL ? info->request_type : info->reply_type);
    }
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    return rv;
}
