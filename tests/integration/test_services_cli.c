/* SPDX-License-Identifier: MIT */
/* `tkd install` / `tkd uninstall`: the real tkd registers itself through
 * the Register code, on a temporary HOME, with the models of launchctl and
 * systemctl first on its PATH. */
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

/* tkd with argv[1..] (NULL-terminated) in the fixture's environment; its
 * exit status, *out its stdout and *err its stderr (either may be NULL;
 * free them). */
static int tkd_env(const fx *f, bool runtime_dir, const char *const *args,
                   char **out, char **err_out);

static int tkd_err(const fx *f, const char *const *args, char **out,
                   char **err_out)
{
    return tkd_env(f, true, args, out, err_out);
}

/* tkd_err, with XDG_RUNTIME_DIR or without (no systemd user manager). */
static int tkd_env(const fx *f, bool runtime_dir, const char *const *args,
                   char **out, char **err_out)
{
    const char *argv[16] = { ts_program("TKD") };
    size_t n = 1;
    for (; *args != NULL; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    char home[PATH_MAX + 8], xdg[PATH_MAX + 32], rt[PATH_MAX + 32],
        path[PATH_MAX + 32];
    snprintf(home, sizeof home, "HOME=%s", f->home);
    snprintf(xdg, sizeof xdg, "XDG_CONFIG_HOME=%s", f->config);
    snprintf(rt, sizeof rt, "XDG_RUNTIME_DIR=%s", f->run);
    snprintf(path, sizeof path, "PATH=%s:/usr/bin:/bin", f->bin);
    const char *env[] = { home, xdg, path, runtime_dir ? rt : NULL, NULL };
    char *err = NULL;
    int rc = run(argv, env, out, &err);
    if (rc != 0 && rc != 2)
        fprintf(stderr, "tkd %s: %s\n", args[0], err ? err : "");
    if (err_out != NULL)
        *err_out = err;
    else
        free(err);
    return rc;
}

static int tkd(const fx *f, const char *const *args, char **out)
{
    return tkd_err(f, args, out, NULL);
}

/* tkd args exits 2, says want on stderr and nothing on stdout. */
static void usage_error(const fx *f, const char *const *args, const char *want)
{
    char *out = NULL;
    char *err = NULL;
    assert_int_equal(tkd_err(f, args, &out, &err), 2);
    if (err == NULL || strstr(err, want) == NULL)
        fail_msg("tkd %s: stderr \"%s\" lacks \"%s\"", args[0], err ? err : "",
                 want);
    assert_string_equal(out != NULL ? out : "", "");
    free(out);
    free(err);
}

static void test_install_systemd(void **state)
{
    fx *f = *state;
    const char *args[] = { "install",     "--backend",
                           "systemd",     "--",
                           "--listen",    "ipc:///tmp/tk test.sock",
                           "--log-level", "debug",
                           NULL };
    char *out = NULL;
    assert_int_equal(tkd(f, args, &out), 0);
    assert_non_null(strstr(out, "INSTALLED"));
    free(out);
    /* what runs is this tkd, with the options after "--" */
    char self[PATH_MAX];
    assert_non_null(realpath(ts_program("TKD"), self));
    json_object *want = json_object_new_array();
    json_object_array_add(want, json_object_new_string(self));
    for (size_t i = 4; args[i] != NULL; i++)
        json_object_array_add(want, json_object_new_string(args[i]));
    call_log l;
    log_read(f, &l);
    const char *runs = "";
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].runs[0] != '\0')
            runs = l.v[i].runs;
    assert_string_equal(
        runs, json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN));
    json_object_put(want);
    size_t before = l.n;
    log_free(&l);
    char unit[PATH_MAX];
    join(unit, sizeof unit, f->units, "tkd.service");
    char *text = read_file(unit);
    assert_non_null(strstr(text, "Restart=on-failure\n"));
    /* the default grace, 60 s: see test_stop_timeout */
    assert_non_null(strstr(text, "KillMode=mixed\nTimeoutStopSec=78\n"));
    free(text);

    /* again: nothing to do */
    assert_int_equal(tkd(f, args, &out), 0);
    assert_non_null(strstr(out, "UNCHANGED"));
    free(out);
    log_read(f, &l);
    assert_int_equal(count_mutating(&l, before), 0);
    log_free(&l);

    /* an old install with a wrong restart policy is repaired */
    text = read_file(unit);
    char *p = strstr(text, "Restart=on-failure\n");
    assert_non_null(p);
    char *old = NULL;
    assert_true(asprintf(&old, "%.*sRestart=no\n%s", (int)(p - text), text,
                         p + strlen("Restart=on-failure\n")) > 0);
    write_file(unit, old);
    free(old);
    free(text);
    assert_int_equal(tkd(f, args, &out), 0);
    assert_non_null(strstr(out, "UPDATED"));
    free(out);
    text = read_file(unit);
    assert_non_null(strstr(text, "Restart=on-failure\n"));
    free(text);

    const char *un[] = { "uninstall", "--backend", "systemd", NULL };
    assert_int_equal(tkd(f, un, &out), 0);
    assert_non_null(strstr(out, "definition removed"));
    free(out);
    struct stat sb;
    assert_int_not_equal(stat(unit, &sb), 0);
}

static void test_install_launchd(void **state)
{
    fx *f = *state;
    fx_config(f, "\"teardown_ms\": 400");
    const char *args[] = { "install", "--backend", "launchd", NULL };
    char *out = NULL;
    assert_int_equal(tkd(f, args, &out), 0);
    assert_non_null(strstr(out, "INSTALLED"));
    free(out);
    char plist[PATH_MAX];
    join(plist, sizeof plist, f->agents, "dev.tk.tkd.plist");
    char *text = read_file(plist);
    assert_non_null(text);
    char self[PATH_MAX], want[PATH_MAX + 32];
    assert_non_null(realpath(ts_program("TKD"), self));
    snprintf(want, sizeof want, "<string>%s</string>", self);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "<key>SuccessfulExit</key>"));
    assert_non_null(
        strstr(text, "\t<key>ExitTimeOut</key>\n\t<integer>78</integer>\n"));
    free(text);
    /* a new option is a new definition: one bootout/bootstrap round */
    size_t before = log_size(f);
    const char *again[] = { "install",   "--backend", "launchd", "--",
                            "--workers", "4",         NULL };
    assert_int_equal(tkd(f, again, &out), 0);
    assert_non_null(strstr(out, "UPDATED"));
    free(out);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootout", NULL), 1);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootstrap", NULL),
                     1);
    log_free(&l);
    const char *un[] = { "uninstall", "--backend", "launchd", NULL };
    assert_int_equal(tkd(f, un, &out), 0);
    assert_non_null(strstr(out, "unloaded, definition removed"));
    free(out);
}

/* Services/Render of tkd's own spec, as tkd install builds it: tkd's
 * label, this tkd and the options after "--", restart on failure, its stop
 * timeout (78 s with the default grace) and, for launchd, its log file. */
static Tk__V1__ServiceRenderReply *render_tkd(fx *f, int backend,
                                              const char *const *opts)
{
    char self[PATH_MAX], log[PATH_MAX];
    assert_non_null(realpath(ts_program("TKD"), self));
    spec s;
    spec_init(&s, backend == LAUNCHD ? "dev.tk.tkd" : "tkd", opts);
    s.m.program = self;
    s.m.restart = TK__V1__SERVICE_SPEC__RESTART__ON_FAILURE;
    s.m.stop_timeout_seconds = 78;
    if (backend == LAUNCHD) {
        join(log, sizeof log, f->home, "Library/Logs/tkd.log");
        s.m.stdout_path = s.m.stderr_path = log;
    }
    return render_reply(f, &s, backend);
}

/* tkd install [--dry-run] --backend B -- opts: its exit status and
 * stdout (free it). */
static int install_as(fx *f, int backend, bool dry_run, const char *const *opts,
                      char **out)
{
    const char *args[16] = { "install", "--backend",
                             backend == LAUNCHD ? "launchd" : "systemd" };
    size_t n = 3;
    if (dry_run)
        args[n++] = "--dry-run";
    args[n++] = "--";
    for (size_t i = 0; opts[i] != NULL; i++)
        args[n++] = opts[i];
    return tkd(f, args, out);
}

/* What tkd install writes is Services/Render of the same spec, byte for
 * byte (docs/services.md, docs/macos.md say so). */
static void same_as_render(fx *f, int backend, const char *const *opts)
{
    char *out = NULL;
    assert_int_equal(install_as(f, backend, false, opts, &out), 0);
    free(out);
    Tk__V1__ServiceRenderReply *rep = render_tkd(f, backend, opts);
    char path[PATH_MAX];
    if (backend == LAUNCHD)
        join(path, sizeof path, f->agents, "dev.tk.tkd.plist");
    else
        join(path, sizeof path, f->units, "tkd.service");
    assert_string_equal(rep->path, path);
    char *text = read_file(path);
    assert_non_null(text);
    if (strcmp(text, rep->definition) != 0)
        fail_msg("tkd install wrote\n%s\nRender gives\n%s", text,
                 rep->definition);
    free(text);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void test_install_is_render(void **state)
{
    fx *f = *state;
    static const char *const opts[] = { "--listen", "ipc:///tmp/tk.sock",
                                        NULL };
    same_as_render(f, SYSTEMD, opts);
    fx_config(f, "\"teardown_ms\": 100");
    same_as_render(f, LAUNCHD, opts);
}

/* The lines of text that start with prefix, each ending in '\n', in order
 * (free it). */
static char *lines_with(const char *text, const char *prefix)
{
    char *got = calloc(1, strlen(text) + 1);
    assert_non_null(got);
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            strncat(got, p, n);
        p += n;
    }
    return got;
}

/* --dry-run: exit 0, the file Render gives under its path in a
 * here-document, nothing written and nothing run; its commands are those
 * a real install then runs (the models' log), in order. */
static void dry_run(fx *f, int backend, const char *const *opts)
{
    size_t before = log_size(f);
    char *out = NULL;
    assert_int_equal(install_as(f, backend, true, opts, &out), 0);
    assert_int_equal(log_size(f), before);
    Tk__V1__ServiceRenderReply *rep = render_tkd(f, backend, opts);
    struct stat sb;
    assert_int_not_equal(stat(rep->path, &sb), 0);
    char *want = NULL;
    assert_true(asprintf(&want,
                         "cat > %s <<'TKD_DEFINITION'\n%sTKD_DEFINITION\n",
                         rep->path, rep->definition) > 0);
    if (strstr(out, want) == NULL)
        fail_msg("--dry-run printed\n%s\nwithout\n%s", out, want);
    free(want);
    protobuf_c_message_free_unpacked(&rep->base, NULL);

    const char *tool = backend == LAUNCHD ? "launchctl" : "systemctl";
    char *listed = lines_with(out, tool);
    char *real = NULL;
    assert_int_equal(install_as(f, backend, false, opts, &real), 0);
    free(real);
    call_log l;
    log_read(f, &l);
    char ran[4096] = "";
    for (size_t i = before; i < l.n; i++)
        if (mutating(&l.v[i])) {
            char line[PATH_MAX + 32];
            snprintf(line, sizeof line, "%s %s\n", l.v[i].tool, l.v[i].argv);
            if (strstr(listed, line) == NULL)
                fail_msg("the install ran %s--dry-run listed\n%s", line,
                         listed);
            strncat(ran, line, sizeof ran - strlen(ran) - 1);
        }
    log_free(&l);
    /* systemd: the same commands; launchd lists bootout too, which a first
     * install (nothing loaded) does not run */
    if (backend == SYSTEMD)
        assert_string_equal(listed, ran);
    else
        assert_true(strlen(ran) > 0);
    free(listed);
    free(out);
}

static void test_dry_run(void **state)
{
    fx *f = *state;
    static const char *const opts[] = { "--listen", "ipc:///tmp/tk.sock",
                                        NULL };
    dry_run(f, SYSTEMD, opts);
    fx_config(f, "\"teardown_ms\": 100");
    dry_run(f, LAUNCHD, opts);

    /* uninstall --dry-run: the commands, nothing removed, nothing run */
    size_t before = log_size(f);
    const char *un[] = { "uninstall", "--backend", "systemd", "--dry-run",
                         NULL };
    char *out = NULL;
    assert_int_equal(tkd(f, un, &out), 0);
    char unit[PATH_MAX], want[PATH_MAX + 16];
    join(unit, sizeof unit, f->units, "tkd.service");
    snprintf(want, sizeof want, "rm -f %s\n", unit);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "systemctl --user stop tkd.service\n"));
    free(out);
    struct stat sb;
    assert_int_equal(stat(unit, &sb), 0);
    assert_int_equal(log_size(f), before);
}

/* Without a systemd user manager, tkd install says what to do for an
 * install (not how to start a tkd that serves calls): where to run it
 * again, tkd itself as the unit would run it, and the dry run. Nothing
 * is written. */
static void test_no_manager_advice(void **state)
{
    fx *f = *state;
    const char *args[] = { "install",   "--backend", "systemd", "--",
                           "--workers", "2",         NULL };
    char *out = NULL;
    char *err = NULL;
    assert_int_equal(tkd_env(f, false, args, &out, &err), 1);
    char self[PATH_MAX], want[2 * PATH_MAX + 256];
    assert_non_null(realpath(ts_program("TKD"), self));
    const char *says[] = {
        "tkd install: systemctl --user cannot reach the user manager of ",
        "(XDG_RUNTIME_DIR is not set)\n",
        "tkd install needs a systemd user manager, which a login of ",
        "`loginctl enable-linger ",
        want,
        NULL,
    };
    snprintf(want, sizeof want,
             "Or run tkd without a service manager:\n  %s --workers 2\nor "
             "print the unit and the commands, to install it by hand:\n  %s "
             "install --dry-run --backend systemd -- --workers 2\n",
             self, self);
    for (size_t i = 0; says[i] != NULL; i++)
        if (strstr(err, says[i]) == NULL)
            fail_msg("stderr lacks \"%s\":\n%s", says[i], err);
    /* the advice for a tkd that serves calls is not this command's */
    assert_null(strstr(err, "start tkd with"));
    free(err);
    free(out);
    const char *un[] = { "uninstall", "--backend", "systemd", NULL };
    assert_int_equal(tkd_env(f, false, un, &out, &err), 1);
    assert_non_null(strstr(err, "tkd uninstall needs the systemd user "
                                "manager that runs the unit"));
    assert_non_null(strstr(err, "tkd uninstall --dry-run"));
    free(err);
    free(out);
    assert_int_equal(log_size(f), 0);
    char unit[PATH_MAX];
    struct stat sb;
    join(unit, sizeof unit, f->units, "tkd.service");
    assert_int_not_equal(stat(unit, &sb), 0);
}

static void test_usage_errors(void **state)
{
    fx *f = *state;
    const char *bad_backend[] = { "install", "--backend", "upstart", NULL };
    usage_error(f, bad_backend,
                "tkd install: --backend is auto, launchd or systemd, not "
                "\"upstart\"");
    const char *no_backend[] = { "install", "--backend", NULL };
    usage_error(f, no_backend,
                "tkd install: --backend needs a value (auto, launchd or "
                "systemd)");
    const char *no_label[] = { "uninstall", "--label", NULL };
    usage_error(f, no_label, "tkd uninstall: --label needs a value");
    const char *bad_label[] = { "install", "--label", "a/b", NULL };
    usage_error(f, bad_label, "tkd install: spec.label \"a/b\"");
    const char *stray[] = { "uninstall", "--", "x", NULL };
    usage_error(f, stray,
                "tkd uninstall: unexpected \"--\" (tkd uninstall --help)");
    assert_int_equal(log_size(f), 0);
}

/* The stop timeout of tkd's own unit lies above the longest tkd takes to
 * stop with the grace it is given (rpc_shutdown_bound_ms): the grace, 5 s
 * for the writes it stops, 0.1 s flush, 5 s bounded socket close, 2 s log
 * flush, rounded up to seconds, and 5 s more. */
static void test_stop_timeout(void **state)
{
    fx *f = *state;
    static const struct {
        const char *args[4];
        const char *want;
    } cases[] = {
        { { NULL }, "TimeoutStopSec=78\n" },
        { { "--shutdown-grace-ms", "1000", NULL }, "TimeoutStopSec=19\n" },
        { { "--shutdown-grace-ms=120000", NULL }, "TimeoutStopSec=138\n" },
        /* getopt_long's unique prefix; the last one wins */
        { { "--shut", "0", "--shutdown-grace-ms=500", NULL },
          "TimeoutStopSec=18\n" },
        /* another option's value, not the option */
        { { "--listen", "--shutdown-grace-ms", NULL }, "TimeoutStopSec=78\n" },
    };
    char unit[PATH_MAX];
    join(unit, sizeof unit, f->units, "tkd.service");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[10] = { "install", "--backend", "systemd", "--" };
        for (size_t k = 0; cases[i].args[k] != NULL; k++)
            args[4 + k] = cases[i].args[k];
        char *out = NULL;
        assert_int_equal(tkd(f, args, &out), 0);
        free(out);
        char *text = read_file(unit);
        if (strstr(text, cases[i].want) == NULL)
            fail_msg("case %zu: no %s in\n%s", i, cases[i].want, text);
        free(text);
    }
    const char *bad[] = { "install", "--backend",           "systemd",
                          "--",      "--shutdown-grace-ms", "soon",
                          NULL };
    usage_error(f, bad,
                "tkd install: --shutdown-grace-ms wants a whole number from "
                "0 to 3600000, not \"soon\"");
}

/* A fleet's node is installed with its flags in the unit, and tkd install
 * checks tkd's options as tkd would at start: a unit that would fail at
 * every start is refused before anything is written. */
static void test_install_fleet(void **state)
{
    fx *f = *state;
    const char *args[] = { "install",
                           "--backend",
                           "systemd",
                           "--",
                           "--listen",
                           "tls+tcp://0.0.0.0:7070",
                           "--node-id",
                           "node-1.a_b",
                           "--advertise",
                           "tls+tcp://h1.example:7070",
                           "--pg",
                           "host=/run/pg dbname=tk",
                           "--heartbeat-ms",
                           "1000",
                           NULL };
    char *out = NULL;
    assert_int_equal(tkd(f, args, &out), 0);
    assert_non_null(strstr(out, "INSTALLED"));
    free(out);
    char unit[PATH_MAX];
    join(unit, sizeof unit, f->units, "tkd.service");
    char *text = read_file(unit);
    const char *want = "\"--node-id\" \"node-1.a_b\" \"--advertise\" "
                       "\"tls+tcp://h1.example:7070\" \"--pg\" "
                       "\"host=/run/pg dbname=tk\" \"--heartbeat-ms\" \"1000\"";
    if (strstr(text, want) == NULL)
        fail_msg("no %s in\n%s", want, text);
    free(text);
    size_t before = log_size(f);
    static const struct {
        const char *args[6];
        const char *want;
    } bad[] = {
        { { "--node-id", "a b", "--advertise", "tls+tcp://h:1", NULL },
          "tkd install: --node-id is 1 to 64 of the characters" },
        { { "--node-id", "a", NULL },
          "tkd install: --node-id needs --advertise tls+tcp://HOST:PORT" },
        { { "--advertise", "tls+tcp://h:1", NULL },
          "tkd install: --advertise is for a node of a fleet" },
        { { "--node-id", "a", "--advertise", "tcp://h:1", NULL },
          "tkd install: --advertise tcp:// needs --insecure-plain-tcp" },
        { { "--node-id", "a", "--advertise", "tls+tcp://0.0.0.0:1", NULL },
          "tkd install: --advertise wants the address clients dial" },
        { { "--heartbeat-ms", "50", NULL },
          "tkd install: --heartbeat-ms wants a whole number from 100 to "
          "60000, not \"50\"" },
        { { "--workers", "0", NULL },
          "tkd install: --workers wants a whole number from 1 to 1024" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *a[10] = { "install", "--backend", "systemd", "--" };
        for (size_t k = 0; bad[i].args[k] != NULL; k++)
            a[4 + k] = bad[i].args[k];
        usage_error(f, a, bad[i].want);
    }
    assert_int_equal(log_size(f), before);
}

static void test_help(void **state)
{
    fx *f = *state;
    static const char *const cmds[] = { "install", "uninstall" };
    for (size_t i = 0; i < 2; i++) {
        const char *args[] = { cmds[i], "--help", NULL };
        char *out = NULL;
        char *err = NULL;
        assert_int_equal(tkd_err(f, args, &out, &err), 0);
        assert_non_null(out);
        static const char head[] =
            "usage: tkd install [--backend auto|launchd|systemd] [--label L]\n"
            "                   [--dry-run] [-- TKD-OPTION...]\n";
        assert_true(strncmp(out, head, strlen(head)) == 0);
        assert_non_null(strstr(out, "       tkd uninstall [--backend "
                                    "auto|launchd|systemd] [--label L]\n"
                                    "                     [--dry-run]\n"));
        assert_non_null(strstr(out, "--dry-run writes nothing and runs "
                                    "nothing"));
        assert_non_null(strstr(out, "Labels: dev.tk.tkd (launchd), tkd "
                                    "(systemd).\n"));
        assert_string_equal(err != NULL ? err : "", "");
        free(out);
        free(err);
    }
    assert_int_equal(log_size(f), 0); /* help installs nothing */
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    proc_init();
    const struct CMUnitTest tests[] = {
        T(test_install_systemd),   T(test_install_launchd),
        T(test_usage_errors),      T(test_stop_timeout),
        T(test_install_fleet),     T(test_help),
        T(test_install_is_render), T(test_dry_run),
        T(test_no_manager_advice),
    };
    return cmocka_run_group_tests_name("services-cli", tests, NULL, NULL);
}
