/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "control/control.h"

/* ---- in process ---------------------------------------------------------- */

static void fx_config(ts_fx *fx, const ts_fx_opts *o, rpc_config *cfg,
                      const char **listen, const char **listen_ro)
{
    rpc_config_init(cfg);
    *listen = fx->url;
    cfg->listen = listen;
    cfg->n_listen = 1;
    if (o->read_only_listener) {
        snprintf(fx->url_ro, sizeof fx->url_ro, "ipc://%s/ro.sock", fx->dir);
        *listen_ro = fx->url_ro;
        cfg->listen_read_only = listen_ro;
        cfg->n_listen_read_only = 1;
    }
    cfg->version = "test";
    if (o->workers != 0)
        cfg->workers = o->workers;
    if (o->queue_depth != 0)
        cfg->queue_depth = o->queue_depth;
    if (o->max_request_bytes != 0)
        cfg->max_request_bytes = o->max_request_bytes;
    if (o->allowed_uid != 0)
        cfg->allowed_uid = o->allowed_uid;
    if (o->shutdown_grace_ms != 0)
        cfg->shutdown_grace_ms = o->shutdown_grace_ms;
}

/* What the server serves: tk.test.Test, then the test's services. */
static void fx_services(ts_fx *fx, const ts_fx_opts *o)
{
    if (o->testsvc) {
        testsvc_init(&fx->svc);
        fx->has_svc = true;
        assert_int_equal(testsvc_register(&fx->svc, fx->srv), 0);
    }
    assert_true(o->n_services <= TS_FX_MAX_SERVICES);
    for (size_t i = 0; i < o->n_services; i++) {
        fx->services[i] = o->services[i];
        fx->service[i] = o->services[i].add(fx, o->services[i].arg);
        fx->services[i].arg = NULL; /* add's alone */
        fx->n_services = i + 1;
    }
}

void ts_fx_start(ts_fx *fx, const ts_fx_opts *o)
{
    static const ts_fx_opts none;
    o = o != NULL ? o : &none;
    memset(fx, 0, sizeof *fx);
    assert_int_equal(
        ts_mkdtemp(fx->dir, sizeof fx->dir, o->tag != NULL ? o->tag : "fx"), 0);
    snprintf(fx->path, sizeof fx->path, "%s/s.sock", fx->dir);
    snprintf(fx->url, sizeof fx->url, "ipc://%s", fx->path);
    char err[512] = "";
    if (o->n_roots > 0 &&
        roots_new(&fx->roots, o->roots, o->n_roots, err, sizeof err) != 0)
        fail_msg("roots: %s", err);
    rpc_config cfg;
    const char *listen, *listen_ro;
    fx_config(fx, o, &cfg, &listen, &listen_ro);
    if (rpc_server_new(&fx->srv, &cfg, err, sizeof err) != 0 ||
        control_register(fx->srv, err, sizeof err) != 0)
        fail_msg("server: %s", err);
    fx_services(fx, o);
    if (rpc_server_start(fx->srv, err, sizeof err) != 0)
        fail_msg("start: %s", err);
    for (size_t i = 0; i < fx->n_services; i++)
        if (fx->services[i].started != NULL)
            fx->services[i].started(fx->service[i]);
    if (tk_client_open(&fx->client, fx->url, err, sizeof err) != TK_OK)
        fail_msg("client: %s", err);
}

void ts_fx_stop(ts_fx *fx)
{
    tk_client_close(fx->client);
    fx->client = NULL;
    rpc_server_free(fx->srv);
    fx->srv = NULL;
    for (size_t i = fx->n_services; i-- > 0;)
        if (fx->services[i].free != NULL)
            fx->services[i].free(fx->service[i]);
    fx->n_services = 0;
    roots_free(fx->roots);
    fx->roots = NULL;
    if (fx->has_svc)
        testsvc_destroy(&fx->svc);
    fx->has_svc = false;
    ts_rmtree(fx->dir);
}

/* ---- as a process -------------------------------------------------------- */

void ts_fx_daemon_start(ts_fx_daemon *d, const ts_fx_daemon_opts *o)
{
    static const ts_fx_daemon_opts none;
    o = o != NULL ? o : &none;
    memset(d, 0, sizeof *d);
    if (o->dir != NULL) {
        snprintf(d->dir, sizeof d->dir, "%s", o->dir);
    } else {
        assert_int_equal(
            ts_mkdtemp(d->dir, sizeof d->dir, o->testd ? "testd" : "tkd"), 0);
        d->own_dir = true;
    }
    snprintf(d->url, sizeof d->url, "ipc://%s/s.sock", d->dir);
    const char *name = o->testd ? "testd" : "tkd";
    const char *argv[32] = { ts_program(o->testd ? "TESTD" : "TKD"), "--listen",
                             d->url };
    size_t n = 3;
    for (size_t i = 0; o->args != NULL && o->args[i] != NULL; i++) {
        assert_true(n < sizeof argv / sizeof argv[0] - 1);
        argv[n++] = o->args[i];
    }
    argv[n] = NULL;
    assert_int_equal(ts_spawn(&d->p, argv, o->env), 0);
    d->up = true;
    bool ready = o->testd
                     ? ts_wait_output(&d->p, 1, "READY", TS_FX_WAIT_MS)
                     : ts_wait_output(&d->p, 2, "listening on", TS_FX_WAIT_MS);
    if (!ready)
        fail_msg("%s did not start: %s", name, d->p.err ? d->p.err : "");
    char err[256] = "";
    if (tk_client_open(&d->client, d->url, err, sizeof err) != TK_OK)
        fail_msg("client of %s: %s", name, err);
}

int ts_fx_daemon_stop(ts_fx_daemon *d)
{
    int rv = -1;
    if (d->up) {
        if (!d->p.reaped)
            ts_signal(&d->p, SIGTERM);
        rv = ts_finish(&d->p, TS_FX_WAIT_MS);
        ts_proc_free(&d->p);
        d->up = false;
    }
    tk_client_close(d->client);
    d->client = NULL;
    if (d->own_dir)
        ts_rmtree(d->dir);
    d->own_dir = false;
    return rv;
}
