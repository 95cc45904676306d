/* SPDX-License-Identifier: MIT */
/* The fixture of the tk.v1.Services tests: see services_fx.c. */
#ifndef TK_TESTS_SERVICES_FX_H
#define TK_TESTS_SERVICES_FX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <tk/client.h>

#include "fixture.h"
#include "proc/proc.h"
#include "services/services.h"
#include "tk/v1/services.tk.h"

#define LAUNCHD TK__V1__SERVICE_MANAGER__KIND__LAUNCHD
#define SYSTEMD TK__V1__SERVICE_MANAGER__KIND__SYSTEMD
#define A_UNCHANGED TK__V1__SERVICE_REGISTER_REPLY__ACTION__UNCHANGED
#define A_INSTALLED TK__V1__SERVICE_REGISTER_REPLY__ACTION__INSTALLED
#define A_UPDATED TK__V1__SERVICE_REGISTER_REPLY__ACTION__UPDATED
#define EIO_TEXT "Bootstrap failed: 5: Input/output error"

typedef struct fx {
    ts_fx base; /* the server, its client, its directory (fixture.h) */
    char bin[PATH_MAX], state[PATH_MAX], home[PATH_MAX], config[PATH_MAX];
    char run[PATH_MAX], linger[PATH_MAX], units[PATH_MAX], agents[PATH_MAX];
    services *reg;
    bool real; /* the real launchctl and plutil, recorded (fx_opts) */
} fx;

typedef struct fx_opts {
    bool plutil;           /* put the plutil model on PATH */
    bool no_loginctl;      /* leave loginctl off PATH */
    bool no_runtime;       /* no XDG_RUNTIME_DIR */
    bool no_home;          /* no (absolute) HOME */
    unsigned gone_wait_ms; /* services_config's; 0: the default, 10 s */
    /* macOS only (TK_TEST_LAUNCHCTL=real): /bin/launchctl and
     * /usr/bin/plutil through tests/fakes/recorder, which logs each call
     * as the models do; the agents' plists in the fixture's home. fx_stop
     * boots out every label whose plist is there, and removes it. */
    bool real_launchctl;
} fx_opts;

typedef struct spec {
    Tk__V1__ServiceSpec m;
    Tk__V1__ServiceSpec__EnvEntry e[16];
    Tk__V1__ServiceSpec__EnvEntry *ep[16];
    char *args[32];
} spec;

typedef struct call_rec {
    char tool[16];
    char verb[32];
    char argv[PATH_MAX]; /* all of it, space-joined */
    int exit;
    double t_ms;
    bool loaded;     /* launchctl bootstrap: loaded */
    char runs[4096]; /* systemctl: the argv that "runs", as JSON */
    char err[1024];
    /* launchctl bootout: when the model starts the teardown and, for a
     * timed one, when the label leaves (the model's clock; -1: absent) */
    double teardown_start_ms, teardown_end_ms;
} call_rec;

typedef struct call_log {
    call_rec *v;
    size_t n;
} call_log;

void join(char *out, size_t len, const char *a, const char *b);
/* TK_SOURCE_ROOT/rel (a per-thread buffer). */
const char *source(const char *rel);
void write_file(const char *path, const char *text);
/* The whole file (free it), or NULL. */
char *read_file(const char *path);

/* Whether this run tests against the real launchctl too: the environment
 * TK_TEST_LAUNCHCTL is "real" (the macOS CI job sets it). */
bool fx_real_launchctl(void);
/* A label no other run or test uses: dev.tk.test.<pid>.<n>.<tag>. */
void fx_label(char *out, size_t len, const char *tag);
/* Boots out (the real launchctl) what an earlier run of a test left in
 * gui/<uid> and user/<uid> when it died before its teardown: labels
 * dev.tk.test.<pid>.* of a pid that no longer exists. */
void fx_sweep_stale_labels(void);

void fx_start(fx *f, const fx_opts *o);
void fx_stop(fx *f);
/* The fakes' config.json: the manager's unit directory and extra keys
 * (JSON members, e.g. "\"teardown_ms\": 500"). */
void fx_config(fx *f, const char *extra);
/* cmocka setup/teardown: a started fixture in *state. */
int fx_setup(void **state);
int fx_setup_with(void **state, const fx_opts *o);
int fx_teardown(void **state);

/* /bin/sh with args (NULL-terminated). */
void spec_init(spec *s, const char *label, const char *const *args);
/* /bin/sh -c word: a spec whose version is the word. */
void spec_v(spec *s, const char *label, const char *word);
void spec_env(spec *s, const char *k, const char *v);
/* Arguments, environment and paths no shell, XML or unit-file writer should
 * get wrong. */
extern const char *const hostile_args[];
void spec_hostile(spec *s, const char *label);
void spec_basic(spec *s);
/* program and args, as the program's argv. */
void spec_argv(const spec *s, const char **argv, size_t *n);

int call_register(fx *f, spec *s, int backend,
                  Tk__V1__ServiceRegisterReply **rep, tk_status *st,
                  tk_cancel *cancel);
/* Registers; asserts OK and the action; returns the attempts. */
unsigned register_ok(fx *f, spec *s, int backend, int action);
/* Registers expecting code; returns the status (clear it). */
tk_status register_fails(fx *f, spec *s, int backend, int code);
/* Render's reply; asserts OK (free it: protobuf_c_message_free_unpacked). */
Tk__V1__ServiceRenderReply *render_reply(fx *f, spec *s, int backend);
/* The rendered definition (free it). */
char *render(fx *f, spec *s, int backend);
/* Status by label, or by spec (s; label may then be ""); asserts OK. */
Tk__V1__ServiceStatusReply *status_of(fx *f, const char *label, spec *s,
                                      int backend);
/* Unregister; asserts OK. */
Tk__V1__ServiceUnregisterReply *unregister_ok(fx *f, const char *label,
                                              int backend);
/* The installed definition is byte for byte the rendered one. */
void assert_installed(fx *f, spec *s, int backend);
void def_path(char *out, size_t len, const fx *f, const char *label,
              int backend);

void log_read(const fx *f, call_log *l);
void log_free(call_log *l);
size_t log_size(const fx *f);
/* Calls from index from on, of tool and verb, whose argv has `has` (NULL:
 * any). */
size_t count_calls(const call_log *l, size_t from, const char *tool,
                   const char *verb, const char *has);
/* launchctl bootout/bootstrap/enable/disable; systemctl daemon-reload,
 * enable, disable, start, restart, stop. */
bool mutating(const call_rec *c);
size_t count_mutating(const call_log *l, size_t from);
/* Waits until a call of tool and verb is logged at index from or later. */
void wait_for_call(const fx *f, size_t from, const char *tool,
                   const char *verb);
/* Waits until n such calls are logged at index from or later. */
void wait_for_calls(const fx *f, size_t from, const char *tool,
                    const char *verb, size_t n);

/* Runs argv to its end: its exit status; out and err (may be NULL) get its
 * output (free them). */
int run(const char *const *argv, const char *const *env, char **out,
        char **err);
/* Runs a fake directly (as a person at a terminal would). */
int fake(const fx *f, const char *tool, const char *a1, const char *a2,
         const char *a3, char **err);
/* /usr/bin/python3 -c script arg, its stdout parsed as JSON. */
json_object *python_json(const char *script, const char *arg);
/* The JSON array o holds exactly want[0..n). */
void assert_strings(json_object *o, const char *const *want, size_t n);

#endif
