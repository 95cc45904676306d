/* SPDX-License-Identifier: MIT */
/* The fixture of the tk.v1.Services tests (test_services_*.c): the shared
 * in-process server (tests/support/fixture.h) with the Services module; the
 * models of launchctl, systemctl, loginctl and plutil (tests/fakes/) first
 * on the module's PATH, or on macOS the real launchctl and plutil through
 * tests/fakes/recorder (fx_opts.real_launchctl); temporary home, config and
 * runtime directories; and the fakes' call log (fake-state/calls.jsonl),
 * which the tests judge by and wait on (inotify; without it, macOS, a
 * bounded poll of the log every 10 ms). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "services_fx.h"
#include "support.h"

void join(char *out, size_t len, const char *a, const char *b)
{
    int n = snprintf(out, len, "%s/%s", a, b);
    assert_true(n > 0 && (size_t)n < len);
}

const char *source(const char *rel)
{
    static _Thread_local char buf[PATH_MAX];
    join(buf, sizeof buf, ts_program("TK_SOURCE_ROOT"), rel);
    return buf;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

char *read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len = 0;
    size_t cap = 4096;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n >= 0);
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

/* ---- the fixture --------------------------------------------------------- */

/* bin/name -> tests/fakes/target */
static void fx_link_as(fx *f, const char *name, const char *target)
{
    char from[PATH_MAX], to[PATH_MAX];
    join(from, sizeof from, source("tests/fakes"), target);
    join(to, sizeof to, f->bin, name);
    assert_int_equal(symlink(from, to), 0);
}

static void fx_link(fx *f, const char *tool)
{
    fx_link_as(f, tool, tool);
}

/* ---- the real launchctl (macOS, TK_TEST_LAUNCHCTL=real) ----------------- */

#define REAL_LAUNCHCTL "/bin/launchctl"
#define TEST_LABELS "dev.tk.test."

bool fx_real_launchctl(void)
{
    const char *v = getenv("TK_TEST_LAUNCHCTL");
    return v != NULL && strcmp(v, "real") == 0;
}

void fx_label(char *out, size_t len, const char *tag)
{
    static unsigned n;
    int k =
        snprintf(out, len, TEST_LABELS "%ld.%u.%s", (long)getpid(), ++n, tag);
    assert_true(k > 0 && (size_t)k < len);
}

/* /bin/launchctl with up to two arguments, its output dropped: its exit
 * status. */
static int real_launchctl(const char *a1, const char *a2, char **out)
{
    const char *argv[] = { REAL_LAUNCHCTL, a1, a2, NULL };
    return run(argv, NULL, out, NULL);
}

/* Boots label out of both of the user's domains and waits (at most 10 s,
 * launchd tears a job down after bootout returns) until print no longer
 * finds it in either. */
static void real_bootout(const char *label)
{
    char target[2][256];
    snprintf(target[0], sizeof target[0], "gui/%u/%s", (unsigned)getuid(),
             label);
    snprintf(target[1], sizeof target[1], "user/%u/%s", (unsigned)getuid(),
             label);
    for (int i = 0; i < 2; i++)
        (void)real_launchctl("bootout", target[i], NULL);
    long long until = ts_now_ms() + 10000;
    for (int i = 0; i < 2; i++)
        while (real_launchctl("print", target[i], NULL) == 0) {
            if (ts_now_ms() >= until) {
                fprintf(stderr,
                        "services_fx: %s is still loaded 10 s after "
                        "launchctl bootout\n",
                        target[i]);
                return;
            }
            struct timespec ts = { 0, 100000000 };
            nanosleep(&ts, NULL);
        }
}

/* Every agent whose plist the fixture's LaunchAgents holds: booted out,
 * its plist removed. Runs in the teardown, so also after a failed test. */
static void real_cleanup(const fx *f)
{
    DIR *d = opendir(f->agents);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 6 || strcmp(e->d_name + n - 6, ".plist") != 0)
            continue;
        char label[256], path[PATH_MAX];
        snprintf(label, sizeof label, "%.*s", (int)(n - 6), e->d_name);
        real_bootout(label);
        join(path, sizeof path, f->agents, e->d_name);
        (void)unlink(path);
    }
    closedir(d);
}

void fx_sweep_stale_labels(void)
{
    if (access(REAL_LAUNCHCTL, X_OK) != 0)
        fail_msg("TK_TEST_LAUNCHCTL=real needs macOS's " REAL_LAUNCHCTL);
    char *out = NULL;
    if (real_launchctl("list", NULL, &out) != 0 || out == NULL) {
        free(out);
        return;
    }
    /* "PID\tStatus\tLabel" lines */
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *label = strrchr(line, '\t');
        label = label != NULL ? label + 1 : line;
        if (strncmp(label, TEST_LABELS, strlen(TEST_LABELS)) != 0)
            continue;
        long pid = strtol(label + strlen(TEST_LABELS), NULL, 10);
        if (pid <= 0 || pid == (long)getpid() ||
            (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
            ; /* its run is gone (or it is ours: a fresh start) */
        else
            continue; /* another run's, still going */
        fprintf(stderr,
                "services_fx: booting out %s, left by an earlier "
                "run\n",
                label);
        real_bootout(label);
    }
    free(out);
}

/* The fakes' config.json: the manager's unit directory and extra keys. */
void fx_config(fx *f, const char *extra)
{
    char path[PATH_MAX], text[PATH_MAX * 2];
    join(path, sizeof path, f->state, "config.json");
    snprintf(text, sizeof text, "{\"unit_dir\": \"%s\"%s%s}\n", f->units,
             extra[0] ? ", " : "", extra);
    write_file(path, text);
}

static void fx_dirs(fx *f, const char *dir)
{
    join(f->bin, sizeof f->bin, dir, "bin");
    join(f->state, sizeof f->state, f->bin, "fake-state");
    join(f->home, sizeof f->home, dir, "home");
    join(f->config, sizeof f->config, dir, "config");
    join(f->run, sizeof f->run, dir, "run");
    join(f->linger, sizeof f->linger, dir, "linger");
    join(f->units, sizeof f->units, f->config, "systemd/user");
    join(f->agents, sizeof f->agents, f->home, "Library/LaunchAgents");
    const char *dirs[] = { f->bin,    f->state, f->home,
                           f->config, f->run,   f->linger };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        assert_int_equal(mkdir(dirs[i], 0700), 0);
    char p[PATH_MAX];
    join(p, sizeof p, f->run, "systemd");
    assert_int_equal(mkdir(p, 0700), 0);
    join(p, sizeof p, f->run, "systemd/private");
    write_file(p, "");
}

typedef struct fx_start_arg {
    fx *f;
    const fx_opts *o;
} fx_start_arg;

/* tk.v1.Services as the fixture's service, its directories and the fakes
 * in the fixture's directory. */
static void *services_svc_add(ts_fx *base, void *arg)
{
    fx *f = ((fx_start_arg *)arg)->f;
    const fx_opts *o = ((fx_start_arg *)arg)->o;
    fx_dirs(f, base->dir);
    if (o->real_launchctl) {
        if (access(REAL_LAUNCHCTL, X_OK) != 0)
            fail_msg("TK_TEST_LAUNCHCTL=real needs macOS's " REAL_LAUNCHCTL);
        f->real = true;
        fx_link_as(f, "launchctl", "recorder");
        fx_link_as(f, "plutil", "recorder");
    } else {
        fx_link(f, "launchctl");
        fx_link(f, "systemctl");
        if (!o->no_loginctl)
            fx_link(f, "loginctl");
        if (o->plutil)
            fx_link(f, "plutil");
    }
    fx_config(f, "");
    services_config rc = {
        .home = o->no_home ? "" : f->home,
        .config_home = f->config,
        .runtime_dir = o->no_runtime ? "" : f->run,
        .path = f->bin,
        .linger_dir = f->linger,
        .gone_wait_ms = o->gone_wait_ms,
    };
    char err[256] = "";
    services *reg = NULL;
    assert_int_equal(services_new(&reg, &rc, err, sizeof err), 0);
    assert_int_equal(services_register(reg, base->srv, err, sizeof err), 0);
    return reg;
}

static void services_svc_free(void *reg)
{
    services_free(reg);
}

void fx_start(fx *f, const fx_opts *o)
{
    static const fx_opts none;
    memset(f, 0, sizeof *f);
    fx_start_arg arg = { .f = f, .o = o != NULL ? o : &none };
    const ts_fx_service svc = { .add = services_svc_add,
                                .free = services_svc_free,
                                .arg = &arg };
    ts_fx_start(
        &f->base,
        &(ts_fx_opts){ .tag = "reg", .services = &svc, .n_services = 1 });
    f->reg = f->base.service[0];
}

void fx_stop(fx *f)
{
    if (f->real)
        real_cleanup(f);
    ts_fx_stop(&f->base);
}

int fx_setup_with(void **state, const fx_opts *o)
{
    fx *f = malloc(sizeof *f);
    assert_non_null(f);
    fx_start(f, o);
    *state = f;
    return 0;
}

int fx_setup(void **state)
{
    return fx_setup_with(state, NULL);
}

int fx_teardown(void **state)
{
    fx_stop(*state);
    free(*state);
    return 0;
}

/* ---- specs and calls ----------------------------------------------------- */

/* /bin/sh with args (NULL-terminated). */
void spec_init(spec *s, const char *label, const char *const *args)
{
    memset(s, 0, sizeof *s);
    tk__v1__service_spec__init(&s->m);
    s->m.label = (char *)label;
    s->m.program = "/bin/sh";
    for (; args != NULL && *args != NULL; args++)
        s->args[s->m.n_args++] = (char *)*args;
    s->m.args = s->args;
}

/* /bin/sh -c word: a spec whose version is the word. */
void spec_v(spec *s, const char *label, const char *word)
{
    const char *args[] = { "-c", word, NULL };
    spec_init(s, label, args);
}

void spec_env(spec *s, const char *k, const char *v)
{
    size_t i = s->m.n_env++;
    tk__v1__service_spec__env_entry__init(&s->e[i]);
    s->e[i].key = (char *)k;
    s->e[i].value = (char *)v;
    s->ep[i] = &s->e[i];
    s->m.env = s->ep;
}

int call_register(fx *f, spec *s, int backend,
                  Tk__V1__ServiceRegisterReply **rep, tk_status *st,
                  tk_cancel *cancel)
{
    Tk__V1__ServiceRegisterRequest req = TK__V1__SERVICE_REGISTER_REQUEST__INIT;
    req.spec = &s->m;
    req.backend = backend;
    tk_call_opts o = { .timeout_ms = 0, .cancel = cancel };
    return tk_services_register(f->base.client, &req, rep, &o, st);
}

/* Registers; asserts OK and the action; returns the attempts. */
unsigned register_ok(fx *f, spec *s, int backend, int action)
{
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    int code = call_register(f, s, backend, &rep, &st, NULL);
    if (code != TK_OK)
        fail_msg("Register %s: %s %s: %s", s->m.label, tk_code_name(code),
                 st.reason, st.message);
    assert_int_equal(rep->action, action);
    unsigned attempts = rep->attempts;
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return attempts;
}

/* Registers expecting a failure; returns the status (clear it). */
tk_status register_fails(fx *f, spec *s, int backend, int code)
{
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    assert_int_equal(call_register(f, s, backend, &rep, &st, NULL), code);
    assert_null(rep);
    return st;
}

Tk__V1__ServiceRenderReply *render_reply(fx *f, spec *s, int backend)
{
    Tk__V1__ServiceRenderRequest req = TK__V1__SERVICE_RENDER_REQUEST__INIT;
    req.spec = &s->m;
    req.backend = backend;
    Tk__V1__ServiceRenderReply *rep = NULL;
    tk_status st;
    int code = tk_services_render(f->base.client, &req, &rep, NULL, &st);
    if (code != TK_OK)
        fail_msg("Render: %s %s", st.reason, st.message);
    tk_status_clear(&st);
    return rep;
}

char *render(fx *f, spec *s, int backend)
{
    Tk__V1__ServiceRenderReply *rep = render_reply(f, s, backend);
    char *def = strdup(rep->definition);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    return def;
}

Tk__V1__ServiceStatusReply *status_of(fx *f, const char *label, spec *s,
                                      int backend)
{
    Tk__V1__ServiceStatusRequest req = TK__V1__SERVICE_STATUS_REQUEST__INIT;
    req.label = (char *)label;
    req.backend = backend;
    req.spec = s != NULL ? &s->m : NULL;
    Tk__V1__ServiceStatusReply *rep = NULL;
    tk_status st;
    int code = tk_services_status(f->base.client, &req, &rep, NULL, &st);
    if (code != TK_OK)
        fail_msg("Status: %s %s", st.reason, st.message);
    tk_status_clear(&st);
    return rep;
}

Tk__V1__ServiceUnregisterReply *unregister_ok(fx *f, const char *label,
                                              int backend)
{
    Tk__V1__ServiceUnregisterRequest req =
        TK__V1__SERVICE_UNREGISTER_REQUEST__INIT;
    req.label = (char *)label;
    req.backend = backend;
    Tk__V1__ServiceUnregisterReply *rep = NULL;
    tk_status st;
    int code = tk_services_unregister(f->base.client, &req, &rep, NULL, &st);
    if (code != TK_OK)
        fail_msg("Unregister: %s %s", st.reason, st.message);
    tk_status_clear(&st);
    return rep;
}

void assert_installed(fx *f, spec *s, int backend)
{
    char path[PATH_MAX];
    def_path(path, sizeof path, f, s->m.label, backend);
    char *on_disk = read_file(path);
    char *rendered = render(f, s, backend);
    assert_non_null(on_disk);
    assert_string_equal(on_disk, rendered);
    free(on_disk);
    free(rendered);
}

void def_path(char *out, size_t len, const fx *f, const char *label,
              int backend)
{
    int n =
        snprintf(out, len, "%s/%s%s", backend == LAUNCHD ? f->agents : f->units,
                 label, backend == LAUNCHD ? ".plist" : ".service");
    assert_true(n > 0 && (size_t)n < len);
}

/* ---- the fakes' call log ------------------------------------------------- */

static void rec_from_json(call_rec *c, json_object *o)
{
    json_object *x;
    memset(c, 0, sizeof *c);
    if (json_object_object_get_ex(o, "tool", &x))
        snprintf(c->tool, sizeof c->tool, "%s", json_object_get_string(x));
    if (json_object_object_get_ex(o, "exit", &x))
        c->exit = json_object_get_int(x);
    if (json_object_object_get_ex(o, "t_ms", &x))
        c->t_ms = json_object_get_double(x);
    if (json_object_object_get_ex(o, "stderr", &x))
        snprintf(c->err, sizeof c->err, "%s", json_object_get_string(x));
    c->loaded = json_object_object_get_ex(o, "loaded", &x);
    c->teardown_start_ms = c->teardown_end_ms = -1;
    if (json_object_object_get_ex(o, "teardown_start_ms", &x))
        c->teardown_start_ms = json_object_get_double(x);
    if (json_object_object_get_ex(o, "teardown_end_ms", &x))
        c->teardown_end_ms = json_object_get_double(x);
    json_object *runs, *argv;
    if (json_object_object_get_ex(o, "runs", &runs) &&
        json_object_object_get_ex(runs, "argv", &argv))
        snprintf(c->runs, sizeof c->runs, "%s",
                 json_object_to_json_string_ext(argv, JSON_C_TO_STRING_PLAIN));
    if (!json_object_object_get_ex(o, "argv", &argv))
        return;
    size_t len = 0;
    for (size_t i = 0; i < json_object_array_length(argv); i++) {
        const char *a =
            json_object_get_string(json_object_array_get_idx(argv, i));
        if (c->verb[0] == '\0' && strncmp(a, "--", 2) != 0)
            snprintf(c->verb, sizeof c->verb, "%s", a);
        int n = snprintf(c->argv + len, sizeof c->argv - len, "%s%s",
                         i ? " " : "", a);
        if (n > 0 && (size_t)n < sizeof c->argv - len)
            len += (size_t)n;
    }
}

void log_read(const fx *f, call_log *l)
{
    char path[PATH_MAX];
    join(path, sizeof path, f->state, "calls.jsonl");
    memset(l, 0, sizeof *l);
    char *text = read_file(path);
    if (text == NULL)
        return;
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        json_object *o = json_tokener_parse(line);
        assert_non_null(o);
        if (l->n == cap) {
            cap = cap ? cap * 2 : 64;
            l->v = realloc(l->v, cap * sizeof *l->v);
            assert_non_null(l->v);
        }
        rec_from_json(&l->v[l->n++], o);
        json_object_put(o);
    }
    free(text);
}

void log_free(call_log *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

size_t log_size(const fx *f)
{
    call_log l;
    log_read(f, &l);
    size_t n = l.n;
    log_free(&l);
    return n;
}

/* Calls from index `from` on of tool and verb whose argv contains `has`
 * (NULL: any). */
size_t count_calls(const call_log *l, size_t from, const char *tool,
                   const char *verb, const char *has)
{
    size_t n = 0;
    for (size_t i = from; i < l->n; i++)
        if (strcmp(l->v[i].tool, tool) == 0 &&
            strcmp(l->v[i].verb, verb) == 0 &&
            (has == NULL || strstr(l->v[i].argv, has) != NULL))
            n++;
    return n;
}

bool mutating(const call_rec *c)
{
    static const char *const launchctl[] = { "bootout", "bootstrap", "enable",
                                             "disable", NULL };
    static const char *const systemctl[] = {
        "daemon-reload", "enable", "disable", "start", "restart", "stop", NULL
    };
    const char *const *verbs = strcmp(c->tool, "launchctl") == 0   ? launchctl
                               : strcmp(c->tool, "systemctl") == 0 ? systemctl
                                                                   : NULL;
    for (; verbs != NULL && *verbs != NULL; verbs++)
        if (strcmp(c->verb, *verbs) == 0)
            return true;
    return false;
}

size_t count_mutating(const call_log *l, size_t from)
{
    size_t n = 0;
    for (size_t i = from; i < l->n; i++)
        n += mutating(&l->v[i]);
    return n;
}

/* Waits (inotify on the fakes' state directory, bounded) until a call of
 * tool and verb appears at index `from` or later. */
void wait_for_call(const fx *f, size_t from, const char *tool, const char *verb)
{
    wait_for_calls(f, from, tool, verb, 1);
}

/* As wait_for_call, until n such calls have appeared. */
void wait_for_calls(const fx *f, size_t from, const char *tool,
                    const char *verb, size_t n)
{
#ifdef __linux__
    int in = inotify_init1(IN_CLOEXEC);
    assert_true(in >= 0);
    assert_true(inotify_add_watch(in, f->state, IN_CLOSE_WRITE | IN_MODIFY) >=
                0);
#else
    /* No inotify (macOS): poll(2) on nothing is a 10 ms sleep, after which
     * the log is read again; the same bound. */
    int in = -1;
#endif
    long long until = ts_now_ms() + 30000;
    for (;;) {
        call_log l;
        log_read(f, &l);
        size_t got = count_calls(&l, from, tool, verb, NULL);
        log_free(&l);
        if (got >= n)
            break;
        struct pollfd p = { .fd = in, .events = POLLIN };
        int left = (int)(until - ts_now_ms());
        if (left <= 0)
            fail_msg("%zu of %zu %s %s calls came", got, n, tool, verb);
        if (in < 0 && left > 10)
            left = 10;
        if (poll(&p, in >= 0 ? 1 : 0, left) > 0) {
            char buf[4096];
            ssize_t r = read(in, buf, sizeof buf);
            (void)r;
        }
    }
    if (in >= 0)
        close(in);
}

/* ---- running the fakes (and python) directly ----------------------------- */

/* Runs argv (argv[0] a path) to its end; returns the exit status; *out and
 * *err (may be NULL) get its output (free them). */
int run(const char *const *argv, const char *const *env, char **out, char **err)
{
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    int rc = ts_finish(&p, 60000);
    if (out != NULL) {
        *out = p.out;
        p.out = NULL;
    }
    if (err != NULL) {
        *err = p.err;
        p.err = NULL;
    }
    ts_proc_free(&p);
    return rc;
}

int fake(const fx *f, const char *tool, const char *a1, const char *a2,
         const char *a3, char **err)
{
    char path[PATH_MAX], rt[PATH_MAX + 32];
    join(path, sizeof path, f->bin, tool);
    snprintf(rt, sizeof rt, "XDG_RUNTIME_DIR=%s", f->run);
    const char *argv[] = { path, a1, a2, a3, NULL };
    const char *env[] = { rt, NULL };
    return run(argv, env, NULL, err);
}

json_object *python_json(const char *script, const char *arg)
{
    const char *argv[] = { "/usr/bin/python3", "-c", script, arg, NULL };
    char *out = NULL;
    char *err = NULL;
    int rc = run(argv, NULL, &out, &err);
    if (rc != 0)
        fail_msg("python: %s", err ? err : "");
    json_object *o = json_tokener_parse(out);
    assert_non_null(o);
    free(out);
    free(err);
    return o;
}

/* The array o holds exactly want[0..n). */
void assert_strings(json_object *o, const char *const *want, size_t n)
{
    assert_non_null(o);
    assert_int_equal(json_object_array_length(o), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(
            json_object_get_string(json_object_array_get_idx(o, i)), want[i]);
}

void spec_argv(const spec *s, const char **argv, size_t *n)
{
    argv[0] = s->m.program;
    for (size_t i = 0; i < s->m.n_args; i++)
        argv[i + 1] = s->m.args[i];
    *n = s->m.n_args + 1;
}

/* ---- specs with everything in them ----------------------------------------
 */

/* Arguments no shell, XML or unit-file writer should get wrong. */
const char *const hostile_args[] = {
    "-c",
    "printf '%s\\n' \"$@\"",
    "a b",
    "q\"uote",
    "single 'quotes'",
    "back\\slash",
    "trailing\\",
    "$HOME",
    "${HOME}",
    "$$",
    "100%",
    "%n %h %%",
    ";",
    "\\;",
    "<tag>&amp;</tag>",
    "-dash",
    "",
    "tab\there",
    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
    NULL,
};

void spec_hostile(spec *s, const char *label)
{
    spec_init(s, label, hostile_args);
    spec_env(s, "ZED", "last");
    spec_env(s, "QUOTE", "say \"hi\" and 'bye'");
    spec_env(s, "BACK", "a\\b\\");
    spec_env(s, "DOLLAR", "$HOME ${X} $$");
    spec_env(s, "PCT", "100% %n");
    spec_env(s, "SPACE", "  a  b  ");
    spec_env(s, "EQ", "a=b=c");
    spec_env(s, "UTF", "\xe6\x97\xa5\xe6\x9c\xac");
    s->m.working_dir = "/srv/with space/%d & <x>";
    s->m.stdout_path = "/var/log/out & \"q\".log";
    s->m.stderr_path = "/var/log/err%%.log";
}

void spec_basic(spec *s)
{
    static const char *const args[] = { "--listen", "ipc:///run/demo.sock",
                                        "--verbose", NULL };
    spec_init(s, "dev.example.demo", args);
    s->m.program = "/bin/sh";
    spec_env(s, "LANG", "C.UTF-8");
    spec_env(s, "DEMO_MODE", "production");
    s->m.working_dir = "/srv/demo";
    s->m.stdout_path = "/var/log/demo.out";
    s->m.stderr_path = "/var/log/demo.err";
}
