/* SPDX-License-Identifier: MIT */
/* tk.v1.Services on the systemd backend, against the systemctl model
 * (tests/fakes/systemctl): the manager keeps the definition it loaded
 * until daemon-reload, and records which definition "runs" (the argv its
 * ExecStart= gives, read as systemd reads it). The negative control: a
 * restart without daemon-reload runs the old definition. */
#include <pwd.h>
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

static int setup_no_runtime(void **state)
{
    fx_opts o = { .no_runtime = true };
    return fx_setup_with(state, &o);
}

static int setup_no_loginctl(void **state)
{
    fx_opts o = { .no_loginctl = true };
    return fx_setup_with(state, &o);
}

/* The argv of the last "runs" record, as JSON. */
static const char *last_runs(const call_log *l)
{
    for (size_t i = l->n; i-- > 0;)
        if (l->v[i].runs[0] != '\0')
            return l->v[i].runs;
    return "";
}

static char *argv_json(const spec *s)
{
    const char *argv[40];
    size_t n;
    spec_argv(s, argv, &n);
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(argv[i]));
    char *text =
        strdup(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
    json_object_put(a);
    return text;
}

static void assert_runs(fx *f, const spec *s)
{
    call_log l;
    log_read(f, &l);
    char *want = argv_json(s);
    assert_string_equal(last_runs(&l), want);
    free(want);
    log_free(&l);
}

static void test_register_then_unchanged(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    assert_int_equal(register_ok(f, &s, SYSTEMD, A_INSTALLED), 1);
    assert_installed(f, &s, SYSTEMD);
    call_log l;
    log_read(f, &l);
    /* file, daemon-reload, enable, restart — in that order */
    static const char *const want[] = { "daemon-reload", "enable", "restart" };
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (!mutating(&l.v[i]))
            continue;
        if (k == 3) {
            fail_msg("a fourth change: %s", l.v[i].argv);
            break;
        }
        assert_string_equal(l.v[i].verb, want[k]);
        k++;
    }
    assert_int_equal(k, 3);
    log_free(&l);
    assert_runs(f, &s);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, "demo", SYSTEMD);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);

    size_t before = log_size(f);
    assert_int_equal(register_ok(f, &s, SYSTEMD, A_UNCHANGED), 0);
    log_read(f, &l);
    assert_int_equal(count_mutating(&l, before), 0);
    log_free(&l);
}

static void test_changed_spec_one_round(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    register_ok(f, &s, SYSTEMD, A_INSTALLED);
    size_t before = log_size(f);
    spec_v(&s, "demo", "v2");
    register_ok(f, &s, SYSTEMD, A_UPDATED);
    call_log l;
    log_read(f, &l);
    assert_int_equal(
        count_calls(&l, before, "systemctl", "daemon-reload", NULL), 1);
    assert_int_equal(count_calls(&l, before, "systemctl", "enable", NULL), 1);
    assert_int_equal(count_calls(&l, before, "systemctl", "restart", NULL), 1);
    assert_int_equal(count_mutating(&l, before), 3); /* and nothing else */
    log_free(&l);
    assert_runs(f, &s); /* the new definition runs, not the old one */
}

/* An old installation that names an old binary path (the program moved in
 * an upgrade) is fixed by the next Register with the spec as it is now: no
 * separate migration. */
static void test_old_binary_path_is_fixed(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    char *def = render(f, &s, SYSTEMD);
    char *at = strstr(def, "ExecStart=\"/bin/sh\"");
    assert_non_null(at);
    char *old = NULL;
    assert_true(asprintf(&old, "%.*sExecStart=\"/opt/old/bin/demo\"%s",
                         (int)(at - def), def,
                         at + strlen("ExecStart=\"/bin/sh\"")) > 0);
    free(def);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, "demo", SYSTEMD);
    char parent[PATH_MAX];
    join(parent, sizeof parent, f->config, "systemd");
    assert_int_equal(mkdir(parent, 0700), 0);
    assert_int_equal(mkdir(f->units, 0700), 0);
    write_file(path, old); /* installed and enabled by the old version */
    free(old);
    assert_int_equal(
        fake(f, "systemctl", "--user", "enable", "demo.service", NULL), 0);
    size_t before = log_size(f);
    register_ok(f, &s, SYSTEMD, A_UPDATED);
    assert_installed(f, &s, SYSTEMD);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_mutating(&l, before), 3);
    log_free(&l);
    assert_runs(f, &s); /* /bin/sh runs, not /opt/old/bin/demo */
}

/* Negative control: the file changed, restart without daemon-reload — the
 * model runs the old definition. Then Register repairs it. */
static void test_restart_without_reload_runs_the_old(void **state)
{
    fx *f = *state;
    spec v1, v2;
    spec_v(&v1, "demo", "v1");
    spec_v(&v2, "demo", "v2");
    register_ok(f, &v1, SYSTEMD, A_INSTALLED);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, "demo", SYSTEMD);
    char *def = render(f, &v2, SYSTEMD);
    write_file(path, def); /* the naive upgrade: new file ... */
    free(def);
    char *err = NULL;
    assert_int_equal(
        fake(f, "systemctl", "--user", "restart", "demo.service", &err),
        0); /* ... restart */
    assert_non_null(strstr(err, "daemon-reload"));
    free(err);
    assert_runs(f, &v1); /* still v1 */
    /* the file is already v2, but the manager has not read it: Register
     * sees NeedDaemonReload=yes and reloads */
    register_ok(f, &v2, SYSTEMD, A_UPDATED);
    assert_runs(f, &v2);
}

/* The unit's last start failed (its program could not run then): systemd
 * keeps it "failed", and the next Register with the same spec restarts it
 * instead of answering UNCHANGED (sd_in_effect's "not failed"). */
static void test_register_after_a_failed_start(void **state)
{
    fx *f = *state;
    char prog[PATH_MAX];
    join(prog, sizeof prog, f->base.dir, "prog");
    write_file(prog, "#!/bin/sh\nexit 0\n");
    assert_int_equal(chmod(prog, 0755), 0);
    spec s;
    spec_v(&s, "demo", "v1");
    s.m.program = prog;
    register_ok(f, &s, SYSTEMD, A_INSTALLED);
    assert_int_equal(chmod(prog, 0644), 0); /* it cannot run ... */
    char *err = NULL;
    assert_int_equal(
        fake(f, "systemctl", "--user", "restart", "demo.service", &err), 1);
    free(err);
    assert_int_equal(chmod(prog, 0755), 0); /* ... and can again */
    Tk__V1__ServiceStatusReply *r = status_of(f, "", &s, SYSTEMD);
    assert_true(r->installed && r->loaded);
    assert_false(r->up_to_date); /* installed as rendered, but failed */
    assert_non_null(r->last_exit);
    assert_int_equal(r->last_exit->code, 203); /* EXIT_EXEC */
    protobuf_c_message_free_unpacked(&r->base, NULL);

    size_t before = log_size(f);
    register_ok(f, &s, SYSTEMD, A_UPDATED);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "systemctl", "restart", NULL), 1);
    assert_int_equal(count_mutating(&l, before), 3);
    log_free(&l);
    assert_runs(f, &s);
    r = status_of(f, "", &s, SYSTEMD);
    assert_true(r->up_to_date && r->pid > 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    before = log_size(f); /* and now it is current */
    register_ok(f, &s, SYSTEMD, A_UNCHANGED);
    log_read(f, &l);
    assert_int_equal(count_mutating(&l, before), 0);
    log_free(&l);
}

static void test_hostile_args_arrive_as_given(void **state)
{
    fx *f = *state;
    spec s;
    spec_hostile(&s, "dev.example.hostile");
    s.m.working_dir = "";
    s.m.stdout_path = "";
    s.m.stderr_path = "";
    register_ok(f, &s, SYSTEMD, A_INSTALLED);
    assert_runs(f, &s); /* every argument, as systemd would unquote it */
}

static void test_no_runtime_dir(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    tk_status st = register_fails(f, &s, SYSTEMD, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "NO_USER_MANAGER");
    assert_non_null(strstr(st.message, "XDG_RUNTIME_DIR"));
    assert_non_null(strstr(st.message, "loginctl enable-linger"));
    tk_status_clear(&st);
    assert_int_equal(log_size(f), 0);
    char path[PATH_MAX];
    struct stat sb;
    def_path(path, sizeof path, f, "demo", SYSTEMD);
    assert_int_not_equal(stat(path, &sb), 0); /* nothing half-installed */
}

/* No user manager listens: NO_USER_MANAGER, in the wording of systemd 252
 * and in that of 254 and later. */
static void test_no_bus(void **state)
{
    fx *f = *state;
    char sock[PATH_MAX];
    join(sock, sizeof sock, f->run, "systemd/private");
    assert_int_equal(unlink(sock), 0); /* no user manager listens */
    static const struct {
        const char *config;
        const char *said;
    } versions[] = {
        { "", "Failed to connect to bus: No such file" },
        { "\"systemd_version\": 254",
          "Failed to connect to user scope bus via local transport: No such "
          "file" },
    };
    for (size_t i = 0; i < 2; i++) {
        fx_config(f, versions[i].config);
        spec s;
        spec_v(&s, "demo", "v1");
        tk_status st =
            register_fails(f, &s, SYSTEMD, TK_CODE_FAILED_PRECONDITION);
        assert_string_equal(st.reason, "NO_USER_MANAGER");
        assert_non_null(strstr(st.message, "loginctl enable-linger"));
        assert_non_null(st.stderr_excerpt);
        assert_non_null(
            strstr((const char *)st.stderr_excerpt, versions[i].said));
        tk_status_clear(&st);
    }
}

static size_t linger_warnings(fx *f, spec *s, int action)
{
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    assert_int_equal(call_register(f, s, SYSTEMD, &rep, &st, NULL), TK_OK);
    assert_int_equal(rep->action, action);
    size_t n = 0;
    for (size_t i = 0; i < rep->n_warnings; i++)
        n += strstr(rep->warnings[i], "loginctl enable-linger") != NULL;
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return n;
}

static void test_linger_warning(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    assert_int_equal(linger_warnings(f, &s, A_INSTALLED), 1);
    fx_config(f, "\"linger\": true");
    assert_int_equal(linger_warnings(f, &s, A_UNCHANGED), 0);
    /* logind does not know the user at all: the marker file decides */
    fx_config(f, "\"linger\": false, \"logged_in\": false");
    assert_int_equal(linger_warnings(f, &s, A_UNCHANGED), 1);
}

static void test_linger_marker_without_loginctl(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    assert_int_equal(linger_warnings(f, &s, A_INSTALLED), 1);
    /* logind's marker: /var/lib/systemd/linger/<user> (here the
     * fixture's directory), named as the module names the user */
    struct passwd pw;
    struct passwd *found = NULL;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) != 0 ||
        found == NULL) {
        skip();
        return;
    }
    char marker[PATH_MAX];
    join(marker, sizeof marker, f->linger, pw.pw_name);
    write_file(marker, "");
    assert_int_equal(linger_warnings(f, &s, A_UNCHANGED), 0);
}

static void test_status_and_unregister(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    register_ok(f, &s, SYSTEMD, A_INSTALLED);
    Tk__V1__ServiceStatusReply *r = status_of(f, "demo", NULL, SYSTEMD);
    assert_true(r->installed && r->up_to_date && r->loaded);
    assert_true(r->pid > 0);
    assert_null(r->last_exit);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    /* stopped by hand: it ended by SIGTERM */
    assert_int_equal(
        fake(f, "systemctl", "--user", "stop", "demo.service", NULL), 0);
    r = status_of(f, "demo", NULL, SYSTEMD);
    assert_int_equal(r->pid, 0);
    assert_non_null(r->last_exit);
    assert_int_equal(r->last_exit->signal, 15);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    size_t before = log_size(f);
    Tk__V1__ServiceUnregisterReply *u = unregister_ok(f, "demo", SYSTEMD);
    assert_true(u->removed && u->unloaded);
    protobuf_c_message_free_unpacked(&u->base, NULL);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "systemctl", "disable", NULL), 1);
    assert_int_equal(
        count_calls(&l, before, "systemctl", "daemon-reload", NULL), 1);
    log_free(&l);
    char link[PATH_MAX];
    join(link, sizeof link, f->units, "default.target.wants/demo.service");
    struct stat sb;
    assert_int_not_equal(lstat(link, &sb), 0);
    r = status_of(f, "demo", NULL, SYSTEMD);
    assert_false(r->installed || r->loaded);
    protobuf_c_message_free_unpacked(&r->base, NULL);
}

static int status_fails(fx *f, const char *label, tk_status *st)
{
    Tk__V1__ServiceStatusRequest req = TK__V1__SERVICE_STATUS_REQUEST__INIT;
    req.label = (char *)label;
    req.backend = SYSTEMD;
    Tk__V1__ServiceStatusReply *rep = NULL;
    int code = tk_services_status(f->base.client, &req, &rep, NULL, st);
    assert_null(rep);
    return code;
}

/* A systemctl tkd found at start and gone when a call runs it: the answer
 * every service gives a missing program, FAILED_PRECONDITION
 * TOOL_NOT_FOUND, for a Register (which did not complete) and a Status.
 * One there but not executable: INTERNAL TOOL_NOT_STARTED (it was
 * FAILED_PRECONDITION TOOL_NOT_FOUND). One whose output passes what tkd
 * keeps of it (1 MiB) on a Status, a READ: RESOURCE_EXHAUSTED
 * OUTPUT_TOO_LARGE (it was UNAVAILABLE TOOL_TIMEOUT). The negative
 * control: the same Register while it is there. */
static void test_systemctl_gone_after_start(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "demo", "v1");
    register_ok(f, &s, SYSTEMD, A_INSTALLED);
    char link[PATH_MAX];
    join(link, sizeof link, f->bin, "systemctl");
    assert_int_equal(unlink(link), 0);

    spec_v(&s, "demo", "v2");
    tk_status st = register_fails(f, &s, SYSTEMD, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "TOOL_NOT_FOUND");
    assert_non_null(strstr(st.message, "program not found"));
    assert_false(st.write_completed);
    tk_status_clear(&st);
    assert_int_equal(status_fails(f, "demo", &st), TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "TOOL_NOT_FOUND");
    tk_status_clear(&st);

    write_file(link, "not a program\n"); /* mode 0644 */
    st = register_fails(f, &s, SYSTEMD, TK_CODE_INTERNAL);
    assert_string_equal(st.reason, "TOOL_NOT_STARTED");
    assert_false(st.write_completed);
    tk_status_clear(&st);

    assert_int_equal(unlink(link), 0);
    write_file(link, "#!/bin/sh\nexec yes\n");
    assert_int_equal(chmod(link, 0755), 0);
    assert_int_equal(status_fails(f, "demo", &st), TK_CODE_RESOURCE_EXHAUSTED);
    assert_string_equal(st.reason, "OUTPUT_TOO_LARGE");
    tk_status_clear(&st);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    proc_init();
    const struct CMUnitTest tests[] = {
        T(test_register_then_unchanged),
        T(test_changed_spec_one_round),
        T(test_old_binary_path_is_fixed),
        T(test_restart_without_reload_runs_the_old),
        T(test_register_after_a_failed_start),
        T(test_hostile_args_arrive_as_given),
        cmocka_unit_test_setup_teardown(test_no_runtime_dir, setup_no_runtime,
                                        fx_teardown),
        T(test_no_bus),
        T(test_linger_warning),
        cmocka_unit_test_setup_teardown(test_linger_marker_without_loginctl,
                                        setup_no_loginctl, fx_teardown),
        T(test_status_and_unregister),
        T(test_systemctl_gone_after_start),
    };
    return cmocka_run_group_tests_name("services-systemd", tests, NULL, NULL);
}
