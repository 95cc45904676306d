/* SPDX-License-Identifier: MIT */
/* tk.v1.Services on the method table: requests to specs, the operations of
 * core.c, results to replies, errors to statuses (built here, in one
 * place). */
#include <string.h>

#include "services_int.h"

/* The status for a failed operation. */
static void fail_with(rpc_call *call, const services_error *e)
{
    if (e->output[0] != '\0')
        rpc_call_set_stderr(call, e->output, strlen(e->output));
    if (e->ran) { /* a tool's run: tool/'s one answer */
        tool_give(call, &e->run);
        return;
    }
    if (e->stopped) {
        rpc_call_fail_stopped(call);
        if (rpc_call_kind(call) == RPC_WRITE)
            rpc_call_set_write_completed(call, false);
        return;
    }
    if (e->fds_errno != 0) {
        rpc_call_fail_fds(call, e->fds_errno, "%s", e->message);
        return;
    }
    if (e->code == RPC_UNAVAILABLE)
        rpc_call_set_retry_after(call, 1000);
    rpc_call_fail(call, e->code, e->reason, "%s", e->message);
}

static services_ctx ctx_of(services *r, rpc_call *call)
{
    services_ctx c = {
        .r = r,
        .deadline_ns = rpc_call_deadline(call),
        .call = call,
    };
    return c;
}

static void render(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply)
{
    const services *r = svc;
    const Tk__V1__ServiceRenderRequest *in =
        (const Tk__V1__ServiceRenderRequest *)request;
    Tk__V1__ServiceRenderReply *out = (Tk__V1__ServiceRenderReply *)reply;
    services_error e;
    services_spec s;
    char path[PATH_MAX];
    const services_backend_ops *ops =
        services__backend_for((int)in->backend, &e);
    if (ops == NULL || services__spec_from_msg(&s, in->spec, &e) != 0) {
        fail_with(call, &e);
        return;
    }
    if (services__def_path(path, sizeof path, r, ops, s.label, &e) != 0) {
        services__spec_fini(&s);
        fail_with(call, &e);
        return;
    }
    tkc_buf def = { 0 };
    ops->render(&def, &s);
    out->backend = (Tk__V1__ServiceManager__Kind)ops->kind;
    out->path = rpc_call_strdup(call, path);
    out->definition = rpc_call_strndup(call, def.data, def.len);
    tkc_buf_fini(&def);
    services__spec_fini(&s);
}

static void register_(void *svc, rpc_call *call,
                      const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    services *r = svc;
    const Tk__V1__ServiceRegisterRequest *in =
        (const Tk__V1__ServiceRegisterRequest *)request;
    Tk__V1__ServiceRegisterReply *out = (Tk__V1__ServiceRegisterReply *)reply;
    services_error e;
    services_spec s;
    const services_backend_ops *ops =
        services__backend_for((int)in->backend, &e);
    if (ops == NULL || services__spec_from_msg(&s, in->spec, &e) != 0) {
        fail_with(call, &e);
        return;
    }
    services_ctx c = ctx_of(r, call);
    services_result res;
    rpc_call_write_begins(call); /* the spec is good: installing begins */
    char path[PATH_MAX];
    if (services__op_register(&c, ops, &s, &res, &e) != 0 ||
        services__def_path(path, sizeof path, r, ops, s.label, &e) != 0) {
        services__spec_fini(&s);
        fail_with(call, &e);
        return;
    }
    out->action = (Tk__V1__ServiceRegisterReply__Action)res.action;
    out->attempts = res.attempts;
    out->backend = (Tk__V1__ServiceManager__Kind)ops->kind;
    out->path = rpc_call_strdup(call, path);
    out->warnings = rpc_call_alloc(call, (res.n_warnings + 1) * sizeof(char *));
    for (size_t i = 0; i < res.n_warnings; i++)
        out->warnings[out->n_warnings++] =
            rpc_call_strdup(call, res.warnings[i]);
    services__spec_fini(&s);
}

static void unregister(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    services *r = svc;
    const Tk__V1__ServiceUnregisterRequest *in =
        (const Tk__V1__ServiceUnregisterRequest *)request;
    Tk__V1__ServiceUnregisterReply *out =
        (Tk__V1__ServiceUnregisterReply *)reply;
    services_error e;
    const services_backend_ops *ops =
        services__backend_for((int)in->backend, &e);
    if (ops == NULL || services__label_check(in->label, &e) != 0) {
        fail_with(call, &e);
        return;
    }
    services_ctx c = ctx_of(r, call);
    bool removed;
    rpc_call_write_begins(call); /* the label is good: removing begins */
    bool unloaded;
    if (services__op_unregister(&c, ops, in->label, &removed, &unloaded, &e) !=
        0) {
        fail_with(call, &e);
        return;
    }
    out->removed = removed;
    out->unloaded = unloaded;
}

/* Status names its service by label, by spec, or by both when they agree. */
static int status_target(const Tk__V1__ServiceStatusRequest *in,
                         services_spec *s, bool *have_spec, const char **label,
                         services_error *e)
{
    *have_spec = in->spec != NULL;
    if (!*have_spec) {
        *label = in->label;
        return services__label_check(in->label, e);
    }
    if (services__spec_from_msg(s, in->spec, e) != 0)
        return -1;
    *label = s->label;
    if (in->label[0] != '\0' && strcmp(in->label, s->label) != 0) {
        services__spec_fini(s);
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
                              "label \"%.200s\" is not spec.label \"%s\"",
                              in->label, s->label);
    }
    return 0;
}

static void fill_status(rpc_call *call, Tk__V1__ServiceStatusReply *out,
                        const services_status *st)
{
    out->installed = st->installed;
    out->up_to_date = st->up_to_date;
    out->loaded = st->loaded;
    out->pid = st->pid;
    if (st->exited) {
        Tk__V1__ServiceExit *x = rpc_call_alloc(call, sizeof *x);
        tk__v1__service_exit__init(x);
        x->code = st->exit_code;
        x->signal = st->exit_signal;
        out->last_exit = x;
    }
}

static void status(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply)
{
    services *r = svc;
    const Tk__V1__ServiceStatusRequest *in =
        (const Tk__V1__ServiceStatusRequest *)request;
    Tk__V1__ServiceStatusReply *out = (Tk__V1__ServiceStatusReply *)reply;
    services_error e;
    services_spec s;
    bool have_spec;
    const char *label;
    const services_backend_ops *ops =
        services__backend_for((int)in->backend, &e);
    if (ops == NULL || status_target(in, &s, &have_spec, &label, &e) != 0) {
        fail_with(call, &e);
        return;
    }
    services_ctx c = ctx_of(r, call);
    services_status st;
    char path[PATH_MAX];
    int rv =
        services__op_status(&c, ops, label, have_spec ? &s : NULL, &st, &e);
    if (rv == 0)
        rv = services__def_path(path, sizeof path, r, ops, label, &e);
    if (rv != 0) {
        fail_with(call, &e);
    } else {
        out->backend = (Tk__V1__ServiceManager__Kind)ops->kind;
        out->path = rpc_call_strdup(call, path);
        fill_status(call, out, &st);
    }
    if (have_spec)
        services__spec_fini(&s);
}

/* As tk/v1/services.proto declares them; the handlers are the functions
 * above, by method name. Register's own timeout covers the worst launchd
 * case with room: 10 s of polling, 4.5 s of backoff and the launchctl
 * runs. */
static const rpc_method methods[TK_V1_SERVICES__N_METHODS] = {
    TK_V1_SERVICES__METHODS(RPC_METHOD_ROW, )
};

int services_register(services *r, rpc_server *srv, char *err, size_t errlen)
{
    return rpc_server_add_service(
        srv, r, methods, sizeof methods / sizeof *methods, err, errlen);
}
