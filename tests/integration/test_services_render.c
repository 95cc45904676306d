/* SPDX-License-Identifier: MIT */
/* tk.v1.Services/Render and the spec checks: the definitions byte for byte
 * against checked-in golden files (tests/golden/services/; TK_UPDATE_GOLDEN=1
 * rewrites them), read back by real parsers — python's plistlib for the
 * plist; systemd's syntax as the unit model (tests/fakes/sdunit.py) reads it,
 * and `systemd-analyze verify` where it exists — to prove every hostile
 * argument arrives as given; and every bad spec refused, naming its field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "services_fx.h"
#include "support.h"

/* ---- golden files ---------------------------------------------------------
 */

static void spec_always(spec *s)
{
    static const char *const args[] = { "--once", NULL };
    spec_init(s, "dev.example.always", args);
    s->m.restart = TK__V1__SERVICE_SPEC__RESTART__ALWAYS;
    s->m.throttle_seconds = 30;
}

static void spec_never(spec *s)
{
    spec_init(s, "never", NULL);
    s->m.restart = TK__V1__SERVICE_SPEC__RESTART__NEVER;
}

static void golden(fx *f, spec *s, const char *name)
{
    static const struct {
        int backend;
        const char *ext;
    } kinds[] = { { LAUNCHD, "plist" }, { SYSTEMD, "service" } };
    for (size_t k = 0; k < 2; k++) {
        char rel[256], path[PATH_MAX];
        snprintf(rel, sizeof rel, "tests/golden/services/%s.%s", name,
                 kinds[k].ext);
        snprintf(path, sizeof path, "%s", source(rel));
        char *got = render(f, s, kinds[k].backend);
        const char *update = getenv("TK_UPDATE_GOLDEN");
        if (update != NULL && strcmp(update, "1") == 0)
            write_file(path, got);
        char *want = read_file(path);
        if (want == NULL) {
            fail_msg("no golden file %s (TK_UPDATE_GOLDEN=1 writes it)", rel);
            return;
        }
        if (strcmp(got, want) != 0)
            fail_msg("%s differs from the rendering:\n%s", rel, got);
        free(want);
        free(got);
    }
}

static void test_golden(void **state)
{
    fx *f = *state;
    spec s;
    spec_basic(&s);
    golden(f, &s, "basic");
    spec_hostile(&s, "dev.example.hostile");
    golden(f, &s, "hostile");
    spec_always(&s);
    golden(f, &s, "always");
    spec_never(&s);
    golden(f, &s, "never");
}

/* The same spec, its map in another order: the same bytes. */
static void test_deterministic(void **state)
{
    fx *f = *state;
    spec a, b;
    spec_hostile(&a, "dev.example.hostile");
    spec_init(&b, "dev.example.hostile", hostile_args);
    for (size_t i = a.m.n_env; i-- > 0;)
        spec_env(&b, a.e[i].key, a.e[i].value);
    b.m.working_dir = a.m.working_dir;
    b.m.stdout_path = a.m.stdout_path;
    b.m.stderr_path = a.m.stderr_path;
    for (int backend = LAUNCHD; backend <= SYSTEMD; backend++) {
        char *x = render(f, &a, backend);
        char *y = render(f, &b, backend);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
    /* a name given twice: the last wins, as protobuf says of maps */
    spec_env(&b, "ZED", "first");
    spec_env(&b, "ZED", "last");
    char *y = render(f, &b, SYSTEMD);
    assert_non_null(strstr(y, "Environment=\"ZED=last\"\n"));
    assert_null(strstr(y, "ZED=first"));
    free(y);
}

/* ---- read back by real parsers --------------------------------------------
 */

static const char plist_to_json[] =
    "import json, plistlib, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    d = plistlib.load(f)\n"
    "json.dump(d, sys.stdout, ensure_ascii=False)\n";

static void write_rendered(fx *f, spec *s, int backend, char *path, size_t len)
{
    char *def = render(f, s, backend);
    join(path, len, f->base.dir,
         backend == LAUNCHD ? "rendered.plist" : "rendered.service");
    write_file(path, def);
    free(def);
}

static void assert_env(json_object *env, const spec *s)
{
    assert_non_null(env);
    assert_int_equal(json_object_object_length(env), s->m.n_env);
    for (size_t i = 0; i < s->m.n_env; i++) {
        json_object *v;
        assert_true(json_object_object_get_ex(env, s->e[i].key, &v));
        assert_string_equal(json_object_get_string(v), s->e[i].value);
    }
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no %s", key);
    return v;
}

static void test_plist_reads_back(void **state)
{
    fx *f = *state;
    spec s;
    spec_hostile(&s, "dev.example.hostile");
    char path[PATH_MAX];
    write_rendered(f, &s, LAUNCHD, path, sizeof path);
    json_object *d = python_json(plist_to_json, path);
    const char *argv[40];
    size_t n;
    spec_argv(&s, argv, &n);
    assert_strings(get(d, "ProgramArguments"), argv, n);
    assert_string_equal(json_object_get_string(get(d, "Program")), "/bin/sh");
    assert_string_equal(json_object_get_string(get(d, "Label")),
                        "dev.example.hostile");
    assert_env(get(d, "EnvironmentVariables"), &s);
    assert_string_equal(json_object_get_string(get(d, "WorkingDirectory")),
                        s.m.working_dir);
    assert_string_equal(json_object_get_string(get(d, "StandardOutPath")),
                        s.m.stdout_path);
    assert_string_equal(json_object_get_string(get(d, "StandardErrorPath")),
                        s.m.stderr_path);
    assert_true(json_object_get_boolean(get(d, "RunAtLoad")));
    assert_int_equal(json_object_get_int(get(d, "ThrottleInterval")), 5);
    /* ON_FAILURE: KeepAlive { SuccessfulExit = false }, not Crashed */
    json_object *ka = get(d, "KeepAlive");
    assert_int_equal(json_object_object_length(ka), 1);
    assert_false(json_object_get_boolean(get(ka, "SuccessfulExit")));
    json_object_put(d);
}

static void test_plist_restart_policies(void **state)
{
    fx *f = *state;
    spec s;
    char path[PATH_MAX];
    spec_always(&s);
    write_rendered(f, &s, LAUNCHD, path, sizeof path);
    json_object *d = python_json(plist_to_json, path);
    assert_true(json_object_is_type(get(d, "KeepAlive"), json_type_boolean));
    assert_true(json_object_get_boolean(get(d, "KeepAlive")));
    assert_int_equal(json_object_get_int(get(d, "ThrottleInterval")), 30);
    json_object_put(d);
    spec_never(&s);
    write_rendered(f, &s, LAUNCHD, path, sizeof path);
    d = python_json(plist_to_json, path);
    assert_false(json_object_get_boolean(get(d, "KeepAlive")));
    json_object_put(d);
}

static const char unit_to_json[] =
    "import json, sys\n"
    "sys.dont_write_bytecode = True\n"
    "sys.path.insert(0, sys.argv[1].rsplit('|', 1)[0])\n"
    "import sdunit\n"
    "path = sys.argv[1].rsplit('|', 1)[1]\n"
    "with open(path, encoding='utf-8') as f:\n"
    "    s = sdunit.parse(f.read())\n"
    "w = []\n"
    "out = {'argv': sdunit.exec_start(s, 'x.service', w),\n"
    "       'env': sdunit.environment(s, 'x.service', w), 'warnings': w,\n"
    "       'service': {k: v for k, v, _ in s['Service']},\n"
    "       'unit': {k: v for k, v, _ in s['Unit']},\n"
    "       'install': {k: v for k, v, _ in s['Install']}}\n"
    "json.dump(out, sys.stdout, ensure_ascii=False)\n";

static json_object *unit_json(const char *path)
{
    char arg[PATH_MAX * 2];
    snprintf(arg, sizeof arg, "%s|%s", source("tests/fakes"), path);
    return python_json(unit_to_json, arg);
}

static void test_unit_reads_back(void **state)
{
    fx *f = *state;
    spec s;
    spec_hostile(&s, "dev.example.hostile");
    char path[PATH_MAX];
    write_rendered(f, &s, SYSTEMD, path, sizeof path);
    json_object *d = unit_json(path);
    const char *argv[40];
    size_t n;
    spec_argv(&s, argv, &n);
    assert_strings(get(d, "argv"), argv, n);
    assert_env(get(d, "env"), &s);
    assert_int_equal(json_object_array_length(get(d, "warnings")), 0);
    json_object *svc = get(d, "service");
    assert_string_equal(json_object_get_string(get(svc, "Restart")),
                        "on-failure");
    assert_string_equal(json_object_get_string(get(svc, "RestartSec")), "5");
    assert_string_equal(json_object_get_string(get(svc, "WorkingDirectory")),
                        "/srv/with space/%%d & <x>"); /* specifiers: %% */
    assert_string_equal(
        json_object_get_string(get(get(d, "unit"), "StartLimitIntervalSec")),
        "0");
    assert_string_equal(
        json_object_get_string(get(get(d, "install"), "WantedBy")),
        "default.target");
    json_object_put(d);
}

/* The real systemd parser, offline: no warning about the unit. */
static void test_unit_verified_by_systemd(void **state)
{
    fx *f = *state;
    if (access("/usr/bin/systemd-analyze", X_OK) != 0) {
        skip(); /* not every machine has systemd; the model above still ran */
        return;
    }
    spec s;
    spec_hostile(&s, "dev.example.hostile");
    char path[PATH_MAX], rt[PATH_MAX + 32], home[PATH_MAX + 8];
    write_rendered(f, &s, SYSTEMD, path, sizeof path);
    snprintf(rt, sizeof rt, "XDG_RUNTIME_DIR=%s", f->run);
    snprintf(home, sizeof home, "HOME=%s", f->home);
    const char *argv[] = {
        "/usr/bin/systemd-analyze", "--user", "verify", "--man=no", path, NULL
    };
    const char *env[] = { rt, home, NULL };
    char *err = NULL;
    int rc = run(argv, env, NULL, &err);
    if (rc != 0 || (err != NULL && err[0] != '\0'))
        fail_msg("systemd-analyze verify (exit %d): %s", rc, err);
    free(err);
}

/* ---- bad specs --------------------------------------------------------------
 */

typedef struct bad_case {
    const char *what;
    void (*spoil)(spec *s);
    const char *reason;
    const char *field; /* the message names it */
} bad_case;

static void relative_program(spec *s)
{
    s->m.program = "bin/sh";
}
static void missing_program(spec *s)
{
    s->m.program = "/nonexistent/tkd";
}
static void empty_program(spec *s)
{
    s->m.program = "";
}
static void dir_program(spec *s)
{
    s->m.program = "/usr";
}
static void slash_label(spec *s)
{
    s->m.label = "dev/example";
}
static void space_label(spec *s)
{
    s->m.label = "dev example";
}
static void empty_label(spec *s)
{
    s->m.label = "";
}
static void dotdot_label(spec *s)
{
    s->m.label = "..";
}
static void newline_arg(spec *s)
{
    s->args[1] = "two\nlines";
}
static void control_arg(spec *s)
{
    s->args[0] = "bell\a";
}
static void bad_utf8_arg(spec *s)
{
    s->args[0] = "\xc3\x28";
}
static void unknown_restart(spec *s)
{
    s->m.restart = (Tk__V1__ServiceSpec__Restart)7;
}
static void big_throttle(spec *s)
{
    s->m.throttle_seconds = 86400;
}
static void big_stop_timeout(spec *s)
{
    s->m.stop_timeout_seconds = 7201;
}
static void bad_env_name(spec *s)
{
    spec_env(s, "1ST", "x");
}
static void newline_env(spec *s)
{
    spec_env(s, "OK", "a\nb");
}
static void relative_dir(spec *s)
{
    s->m.working_dir = "srv";
}
static void dotdot_log(spec *s)
{
    s->m.stderr_path = "/var/log/../tmp/x";
}
static void backslash_log(spec *s)
{
    s->m.stdout_path = "/var/log/x\\";
}

static const bad_case bad_cases[] = {
    { "relative program", relative_program, "BAD_PROGRAM", "spec.program" },
    { "missing program", missing_program, "BAD_PROGRAM", "spec.program" },
    { "empty program", empty_program, "BAD_PROGRAM", "spec.program" },
    { "directory as program", dir_program, "BAD_PROGRAM", "spec.program" },
    { "label with /", slash_label, "BAD_LABEL", "spec.label" },
    { "label with a space", space_label, "BAD_LABEL", "spec.label" },
    { "empty label", empty_label, "BAD_LABEL", "spec.label" },
    { "label ..", dotdot_label, "BAD_LABEL", "spec.label" },
    { "newline in an argument", newline_arg, "BAD_ARG", "spec.args[1]" },
    { "control character", control_arg, "BAD_ARG", "spec.args[0]" },
    { "not UTF-8", bad_utf8_arg, "BAD_ARG", "spec.args[0]" },
    { "unknown restart", unknown_restart, "BAD_RESTART", "spec.restart" },
    { "throttle too long", big_throttle, "BAD_THROTTLE",
      "spec.throttle_seconds" },
    { "stop timeout too long", big_stop_timeout, "BAD_STOP_TIMEOUT",
      "spec.stop_timeout_seconds" },
    { "bad variable name", bad_env_name, "BAD_ENV", "spec.env" },
    { "newline in a value", newline_env, "BAD_ENV", "spec.env[OK]" },
    { "relative working dir", relative_dir, "BAD_WORKING_DIR",
      "spec.working_dir" },
    { "log path with ..", dotdot_log, "BAD_LOG_PATH", "spec.stderr_path" },
    { "log path ending in \\", backslash_log, "BAD_LOG_PATH",
      "spec.stdout_path" },
};

/* docs/services.md's Render example, as written there: it renders (its
 * program exists), to the path and the ExecStart= line the page shows. */
static void test_readme_example(void **state)
{
    fx *f = *state;
    static const char *const args[] = { "python3", "-m", "http.server", "8080",
                                        NULL };
    spec s;
    spec_init(&s, "dev.example.agent", args);
    s.m.program = "/usr/bin/env";
    spec_env(&s, "MODE", "prod");
    Tk__V1__ServiceRenderReply *rep = render_reply(f, &s, SYSTEMD);
    assert_int_equal(rep->backend, SYSTEMD);
    char want[PATH_MAX];
    join(want, sizeof want, f->units, "dev.example.agent.service");
    assert_string_equal(rep->path, want);
    assert_non_null(strstr(rep->definition,
                           "\nExecStart=\"/usr/bin/env\" \"python3\" \"-m\" "
                           "\"http.server\" \"8080\"\n"));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* backend AUTO (0): systemd here (launchd on macOS), with that backend's
 * path and definition. */
static void test_auto_backend(void **state)
{
    fx *f = *state;
#ifdef __APPLE__
    const int want = LAUNCHD;
    const char *dir = f->agents;
    const char *suffix = ".plist";
#else
    const int want = SYSTEMD;
    const char *dir = f->units;
    const char *suffix = ".service";
#endif
    spec s;
    spec_v(&s, "dev.example.auto", "v1");
    Tk__V1__ServiceRenderReply *rep =
        render_reply(f, &s, TK__V1__SERVICE_MANAGER__KIND__AUTO);
    assert_int_equal(rep->backend, want);
    char name[64];
    char path[PATH_MAX];
    snprintf(name, sizeof name, "dev.example.auto%s", suffix);
    join(path, sizeof path, dir, name);
    assert_string_equal(rep->path, path);
    char *explicit_ = render(f, &s, want);
    assert_string_equal(rep->definition, explicit_);
    free(explicit_);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* Render of a spec expected to be refused: its status (clear it). */
static tk_status render_fails(fx *f, spec *s, int backend)
{
    Tk__V1__ServiceRenderRequest req = TK__V1__SERVICE_RENDER_REQUEST__INIT;
    req.spec = &s->m;
    req.backend = backend;
    Tk__V1__ServiceRenderReply *rep = NULL;
    tk_status st;
    assert_int_equal(tk_services_render(f->base.client, &req, &rep, NULL, &st),
                     TK_CODE_INVALID_ARGUMENT);
    assert_null(rep);
    return st;
}

/* Register and Render refuse the same specs, for the same reason (Render
 * checks the spec as Register does: services.proto says so). */
static void test_bad_specs_name_their_field(void **state)
{
    fx *f = *state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        for (int backend = LAUNCHD; backend <= SYSTEMD; backend++) {
            spec s;
            spec_v(&s, "dev.example.bad", "ok");
            bad_cases[i].spoil(&s);
            tk_status st[2] = {
                register_fails(f, &s, backend, TK_CODE_INVALID_ARGUMENT),
                render_fails(f, &s, backend),
            };
            for (size_t k = 0; k < 2; k++) {
                if (strcmp(st[k].reason, bad_cases[i].reason) != 0 ||
                    strstr(st[k].message, bad_cases[i].field) == NULL)
                    fail_msg("%s (%s): %s %s", bad_cases[i].what,
                             k == 0 ? "Register" : "Render", st[k].reason,
                             st[k].message);
                tk_status_clear(&st[k]);
            }
        }
    }
    /* nothing was written, nothing was run */
    assert_int_equal(log_size(f), 0);
    struct stat st;
    assert_int_not_equal(stat(f->agents, &st), 0);
    assert_int_not_equal(stat(f->units, &st), 0);
}

static void test_unknown_backend(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.ok", "ok");
    tk_status st = register_fails(f, &s, 9, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "BAD_BACKEND");
    tk_status_clear(&st);
}

/* tkd without a home directory still starts; Services says why it
 * cannot work. */
static void test_no_home(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.ok", "ok");
    for (int backend = LAUNCHD; backend <= SYSTEMD; backend++) {
        tk_status st =
            register_fails(f, &s, backend, TK_CODE_FAILED_PRECONDITION);
        assert_string_equal(st.reason, "NO_HOME");
        tk_status_clear(&st);
    }
    assert_int_equal(log_size(f), 0);
}

static int setup_no_home(void **state)
{
    fx_opts o = { .no_home = true };
    return fx_setup_with(state, &o);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    proc_init();
    const struct CMUnitTest tests[] = {
        T(test_golden),
        T(test_deterministic),
        T(test_plist_reads_back),
        T(test_plist_restart_policies),
        T(test_unit_reads_back),
        T(test_unit_verified_by_systemd),
        T(test_readme_example),
        T(test_auto_backend),
        T(test_bad_specs_name_their_field),
        T(test_unknown_backend),
        cmocka_unit_test_setup_teardown(test_no_home, setup_no_home,
                                        fx_teardown),
    };
    return cmocka_run_group_tests_name("services-render", tests, NULL, NULL);
}
