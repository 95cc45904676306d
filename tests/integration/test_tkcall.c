/* SPDX-License-Identifier: MIT */
/* tkcall end to end: the real tkcall against a real tkd (one for the whole
 * group, its root the group's directory, where the output tests make a real
 * git repository and search it with the real rg) and, for the tests that
 * need slow methods, a real testd of their own (tk.test.Test/Wait and
 * SlowWrite). Waits are on output, never sleeps.
 */
#include <errno.h>
#include <limits.h>
#ifdef __APPLE__
#include <util.h> /* forkpty(3): in <util.h> on macOS, <pty.h> in glibc */
#else
#include <pty.h>
#endif
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"
#include "tree.h"

#define RUN_MS 30000
#define START_MS 10000
#define MAX_ARGS 16

typedef struct fixture {
    char dir[200];
    char tkd_addr[300];
    ts_proc tkd;
    /* A test's own testd and its tkcall running in the background: the
     * test's teardown ends them even when an assertion cut the test. */
    ts_proc testd, call;
    bool testd_up, call_up;
    char testd_addr[300];
    char repo[300]; /* made by the first test that needs it */
} fixture;

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL || ts_mkdtemp(f->dir, sizeof f->dir, "tkcall") != 0)
        return -1;
    snprintf(f->tkd_addr, sizeof f->tkd_addr, "ipc://%s/tkd.sock", f->dir);
    /* --root: the repositories of the tests live in dir. */
    const char *argv[] = {
        ts_program("TKD"), "--listen", f->tkd_addr, "--root", f->dir,
        "--log-level",     "info",     NULL
    };
    /* tkd logs "listening on" (info) once its socket exists. */
    if (ts_spawn(&f->tkd, argv, NULL) != 0 ||
        !ts_wait_output(&f->tkd, 2, "listening on", START_MS)) {
        fprintf(stderr, "tkd did not start: %s\n",
                f->tkd.err != NULL ? f->tkd.err : "");
        return -1;
    }
    *state = f;
    return 0;
}

static int end_processes(void **state);

static int group_teardown(void **state)
{
    fixture *f = *state;
    end_processes(state);
    ts_signal(&f->tkd, SIGTERM);
    int rv = ts_finish(&f->tkd, RUN_MS);
    ts_proc_free(&f->tkd);
    ts_rmtree(f->dir);
    free(f);
    return rv == 0 ? 0 : -1;
}

/* A testd of the test's own, so that its "ENTERED" lines are the test's;
 * with held_writes, its SlowWrite runs until the test sends it SIGUSR1
 * (release_write). */
static void start_testd_with(fixture *f, const char *name, bool held_writes)
{
    snprintf(f->testd_addr, sizeof f->testd_addr, "ipc://%s/%s.sock", f->dir,
             name);
    const char *argv[] = { ts_program("TESTD"),
                           "--listen",
                           f->testd_addr,
                           "--grace-ms",
                           "200",
                           held_writes ? "--release-writes" : NULL,
                           NULL };
    assert_int_equal(ts_spawn(&f->testd, argv, NULL), 0);
    f->testd_up = true;
    if (!ts_wait_output(&f->testd, 1, "READY", START_MS))
        fail_msg("testd did not start: %s", f->testd.err ? f->testd.err : "");
}

static void start_testd(fixture *f, const char *name)
{
    start_testd_with(f, name, false);
}

/* Ends the held SlowWrite of a testd started with held_writes. */
static void release_write(fixture *f)
{
    assert_int_equal(kill(f->testd.pid, SIGUSR1), 0);
}

/* The teardown of the tests that start a testd or a background tkcall:
 * SIGTERM and a bounded wait, then ts_proc_free's SIGKILL of the group. */
static int end_processes(void **state)
{
    fixture *f = *state;
    if (f->call_up) {
        ts_proc_free(&f->call);
        f->call_up = false;
    }
    if (f->testd_up) {
        ts_signal(&f->testd, SIGTERM);
        ts_finish(&f->testd, RUN_MS);
        ts_proc_free(&f->testd);
        f->testd_up = false;
    }
    return 0;
}

/* The teardown of the tests that make dir/repo (make_repo). */
static int remove_repo(void **state)
{
    fixture *f = *state;
    char repo[300];
    snprintf(repo, sizeof repo, "%s/repo", f->dir);
    ts_rmtree(repo);
    return 0;
}

/* Starts tkcall [--addr addr] args... (args NULL-terminated). */
static void spawn_tkcall(ts_proc *p, const char *addr, const char *stdin_path,
                         const char *const env[], const char *const *args)
{
    const char *argv[MAX_ARGS + 4];
    size_t k = 0;
    argv[k++] = ts_program("TKCALL");
    if (addr != NULL) {
        argv[k++] = "--addr";
        argv[k++] = addr;
    }
    for (; *args != NULL && k < MAX_ARGS; args++)
        argv[k++] = *args;
    argv[k] = NULL;
    assert_int_equal(ts_spawn_in(p, argv, env, stdin_path), 0);
}

/* Runs tkcall to its end; returns its exit status, output in p. */
static int tkcall(ts_proc *p, const char *addr, const char *const *args)
{
    spawn_tkcall(p, addr, NULL, NULL, args);
    return ts_finish(p, RUN_MS);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void expect_in(const char *hay, const char *needle)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("\"%s\" not in:\n%s", needle, hay ? hay : "(nothing)");
}

static void expect_exit(ts_proc *p, int got, int want)
{
    if (got != want)
        fail_msg("tkcall exited %d, want %d\nstdout:\n%s\nstderr:\n%s", got,
                 want, p->out ? p->out : "", p->err ? p->err : "");
}

/* ---- no server needed ------------------------------------------------------
 */

static void test_help(void **state)
{
    (void)state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, NULL, ARGS("--help")), 0);
    expect_in(p.out, "usage: tkcall");
    expect_in(p.out, "exit status:");
    expect_in(p.out, "1..16");
    expect_in(p.out, "64 ");
    expect_in(p.out, "65 ");
    expect_in(p.out, "130 ");
    expect_in(p.out, "14 UNAVAILABLE");
    expect_in(p.out, "Grep that matched nothing");
    ts_proc_free(&p);
}

static void test_version(void **state)
{
    (void)state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, NULL, ARGS("--version")), 0);
    expect_in(p.out, "tkcall ");
    ts_proc_free(&p);
}

static void test_usage_errors(void **state)
{
    fixture *f = *state;
    const char *const *cases[] = {
        ARGS("--timeout", "1x", "tk.v1.Control/Ping"),
        ARGS("--timeout", "-1s", "tk.v1.Control/Ping"),
        ARGS("--timeout", "", "tk.v1.Control/Ping"),
        ARGS("--timeout", "s", "tk.v1.Control/Ping"),
        ARGS("--bogus", "tk.v1.Control/Ping"),
        ARGS("frobnicate"),
        ARGS("describe"),
        ARGS("describe", "tk.v1.Nope"),
        ARGS("-d", "@/nonexistent/req.json", "tk.v1.Control/Ping"),
        ARGS("-o", "yaml", "tk.v1.Control/Ping"),
        ARGS("-o", "", "tk.v1.Control/Ping"),
        ARGS("--color", "sometimes", "tk.v1.Control/Ping"),
        ARGS("--color", "tk.v1.Control/Ping"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_proc p;
        expect_exit(&p, tkcall(&p, f->tkd_addr, cases[i]), 64);
        ts_proc_free(&p);
    }
    ts_proc p;
    expect_exit(
        &p,
        tkcall(&p, f->tkd_addr, ARGS("--timeout", "1x", "tk.v1.Control/Ping")),
        64);
    expect_in(p.err, "--timeout");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, NULL, ARGS("-o", "yaml", "tk.v1.Control/Ping")),
                64);
    expect_in(p.err, "-o takes text, long, json or compact, not \"yaml\"");
    ts_proc_free(&p);
}

static void test_no_tkd(void **state)
{
    fixture *f = *state;
    char addr[300];
    snprintf(addr, sizeof addr, "ipc://%s/nobody.sock", f->dir);
    ts_proc p;
    expect_exit(&p, tkcall(&p, addr, ARGS("tk.v1.Control/Ping")), 14);
    expect_in(p.err, "\"code\":\"UNAVAILABLE\"");
    expect_in(p.err, "tkd is not running at ");
    expect_in(p.err, addr);
    expect_in(p.err, "tkd --listen");
    expect_in(p.err, "\"fromServer\":false");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, addr, ARGS("list")), 14);
    ts_proc_free(&p);
    /* Plain tcp:// is a lab's (tkd --insecure-plain-tcp): the advice is
     * what tkd accepts, not `tkd --listen tcp://`, which it refuses. Port
     * 1 of 127.0.0.1: nothing listens there. */
    expect_exit(&p, tkcall(&p, "tcp://127.0.0.1:1", ARGS("ping")), 14);
    expect_in(p.err, "tkd is not running at tcp://127.0.0.1:1");
    expect_in(p.err, "--insecure-plain-tcp");
    expect_in(p.err, "tkd --listen tls+tcp://HOST:PORT --tls-cert F");
    assert_null(strstr(p.err, "tkd --listen tcp://"));
    ts_proc_free(&p);
}

/* An address in a scheme tkcall does not dial is a usage error that
 * names those it does, from --addr or TK_ADDR, before any dial. */
static void test_addr_schemes(void **state)
{
    (void)state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, "http://localhost:80", ARGS("ping")), 64);
    expect_in(p.err, "--addr: tkcall cannot dial \"http://localhost:80\"");
    expect_in(p.err, "ipc://PATH");
    expect_in(p.err, "tls+tcp://HOST:PORT");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, "ipc:///nobody.sock,ws://h:1", ARGS("ping")),
                64);
    expect_in(p.err, "cannot dial \"ws://h:1\"");
    ts_proc_free(&p);
    const char *const env[] = { "TK_ADDR=http://localhost:80", NULL };
    spawn_tkcall(&p, NULL, NULL, env, ARGS("ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 64);
    expect_in(p.err, "TK_ADDR: tkcall cannot dial \"http://localhost:80\"");
    ts_proc_free(&p);
}

/* ---- against tkd -----------------------------------------------------------
 */

static void test_list(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("list")), 0);
    expect_in(p.out, "tk.v1.Control/Cancel\n");
    expect_in(p.out, "tk.v1.Control/ListMethods\n");
    expect_in(p.out, "tk.v1.Control/Ping\n");
    /* One name a line, sorted. */
    const char *prev = NULL;
    char *save = NULL;
    for (char *line = strtok_r(p.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        assert_non_null(strchr(line, '/'));
        if (prev != NULL)
            assert_true(strcmp(prev, line) < 0);
        prev = line;
    }
    ts_proc_free(&p);
}

static void test_list_service(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("list", "tk.v1.Control")), 0);
    expect_in(p.out, "tk.v1.Control/Ping\n");
    char *save = NULL;
    for (char *line = strtok_r(p.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        assert_int_equal(strncmp(line, "tk.v1.Control/", 14), 0);
    ts_proc_free(&p);

    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("list", "tk.nope")), 5);
    expect_in(p.err, "\"code\":\"NOT_FOUND\"");
    expect_in(p.err, "\"fromServer\":true");
    assert_true(p.out == NULL || p.out[0] == '\0');
    ts_proc_free(&p);
}

static void test_describe_method(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("describe", "tk.v1.Control/Ping")), 0);
    expect_in(p.out, "request   tk.v1.PingRequest");
    expect_in(p.out, "reply     tk.v1.PingReply");
    expect_in(p.out, "kind      READ");
    expect_in(p.out, "message tk.v1.PingRequest {");
    expect_in(p.out, "bytes data = 1;");
    ts_proc_free(&p);
}

static void test_describe_message(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("describe", "tk.v1.PingRequest")), 0);
    expect_in(p.out, "message tk.v1.PingRequest {\n  bytes data = 1;  // text, "
                     "or {\"base64\":\"...\"} if not UTF-8\n}\n");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, NULL, ARGS("describe", "tk.v1.MethodInfo")), 0);
    expect_in(p.out, "  Kind kind = 4;\n");
    expect_in(p.out, "uint32 default_timeout_ms = 5;  // JSON: "
                     "defaultTimeoutMs\n");
    expect_in(p.out, "  enum Kind {\n    KIND_UNSPECIFIED = 0;\n"
                     "    // Follows its caller: cancel and deadline end it.\n"
                     "    READ = 1;\n");
    ts_proc_free(&p);
}

static void test_ping(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("-d", "{\"data\":\"aGk=\"}", "tk.v1.Control/Ping")),
                0);
    expect_in(p.out, "{\n  \"data\": \"aGk=\",\n");
    expect_in(p.out, "  \"serverVersion\": \"");
    expect_in(p.out, "\n}\n");
    ts_proc_free(&p);
    /* No -d is {}; a timeout of 0 is the method's default. */
    expect_exit(
        &p,
        tkcall(&p, f->tkd_addr, ARGS("--timeout", "0", "tk.v1.Control/Ping")),
        0);
    expect_in(p.out, "\"serverVersion\"");
    assert_null(strstr(p.out, "\"data\""));
    ts_proc_free(&p);
}

/* "data" of a PingReply as tkcall prints it: the decimal text testd's
 * Timeout method answers with (the timeout in force, in ms). */
static void expect_timeout_echo(fixture *f, const char *flag, const char *value,
                                const char *ms)
{
    ts_proc p;
    int rv = flag != NULL
                 ? tkcall(&p, f->testd_addr,
                          ARGS(flag, value, "tk.test.Test/Timeout"))
                 : tkcall(&p, f->testd_addr, ARGS("tk.test.Test/Timeout"));
    expect_exit(&p, rv, 0);
    char want[64];
    snprintf(want, sizeof want, "\"data\": \"%s\"", ms);
    if (strstr(p.out, want) == NULL)
        fail_msg("--timeout %s: want %s in:\n%s", value ? value : "(none)",
                 want, p.out);
    ts_proc_free(&p);
}

/* Each form of --timeout, as the server received it: testd's Timeout
 * method (ceiling UINT32_MAX) echoes the timeout in force. */
static void test_durations(void **state)
{
    fixture *f = *state;
    start_testd(f, "durations");
    static const struct {
        const char *form, *ms;
    } cases[] = {
        { "500ms", "500" },        { "30s", "30000" },  { "1.5s", "1500" },
        { "2m", "120000" },        { "1h", "3600000" }, { "3", "3000" },
        { "0.25", "250" },         { "0", "7000" }, /* the method's default */
        { "1193h", "4294800000" },                  /* near UINT32_MAX */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_timeout_echo(f, "-t", cases[i].form, cases[i].ms);
    /* Without --timeout: tkcall's default of 30 s, not the method's. */
    expect_timeout_echo(f, NULL, NULL, "30000");
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static void test_data_file_and_stdin(void **state)
{
    fixture *f = *state;
    char path[300], arg[310];
    snprintf(path, sizeof path, "%s/req.json", f->dir);
    snprintf(arg, sizeof arg, "@%s", path);
    write_file(path, "{\n  \"data\": \"aGk=\"\n}\n");
    ts_proc p;
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("-d", arg, "tk.v1.Control/Ping")), 0);
    expect_in(p.out, "\"data\": \"aGk=\"");
    ts_proc_free(&p);

    spawn_tkcall(&p, f->tkd_addr, path, NULL,
                 ARGS("-d", "@-", "tk.v1.Control/Ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    expect_in(p.out, "\"data\": \"aGk=\"");
    ts_proc_free(&p);
    /* grpcurl's bare @ is standard input too. */
    spawn_tkcall(&p, f->tkd_addr, path, NULL,
                 ARGS("-d", "@", "tk.v1.Control/Ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    expect_in(p.out, "\"data\": \"aGk=\"");
    ts_proc_free(&p);
}

/* grpcurl's single-dash long options: tkcall's name for those it has, a
 * sentence for those tk has none of; exit 64, before any call. Short
 * options run together (-vD) and values that start with a dash are
 * still options and values. */
static void test_grpcurl_habits(void **state)
{
    fixture *f = *state;
    static const char *const cases[][2] = {
        { "-cacert", "-cacert: did you mean --cacert?" },
        { "-max-time", "-max-time: did you mean --timeout?" },
        { "-emit-defaults", "-emit-defaults: did you mean --emit-defaults?" },
        { "-format", "-format: did you mean -o/--output?" },
        { "-timeout=3", "-timeout: did you mean --timeout?" },
        { "-H", "-H: tk has no headers" },
        { "-plaintext", "-plaintext: tkd has no plaintext TCP" },
        { "-insecure", "--cacert FILE" },
        { "-protoset", "tk's protos built in" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_proc p;
        expect_exit(&p,
                    tkcall(&p, f->tkd_addr,
                           ARGS(cases[i][0], "x", "tk.v1.Control/Ping")),
                    64);
        expect_in(p.err, cases[i][1]);
        assert_null(strstr(p.err, "invalid option"));
        ts_proc_free(&p);
    }
    ts_proc p;
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("-vD", "-o", "compact", "tk.v1.Control/Ping")),
                0);
    expect_in(p.out, "\"data\":\"\"");
    expect_in(p.err, "tkcall: method   tk.v1.Control/Ping");
    ts_proc_free(&p);
}

static void test_bad_data(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("-d", "{\"rpeo\":1}", "tk.v1.Control/Ping")),
                65);
    expect_in(p.err, "unknown field \"rpeo\" in tk.v1.PingRequest");
    ts_proc_free(&p);
    const char *bad[] = { "{", "[1]", "{\"data\":5}",
                          "{\"data\":{\"base64\":\"!\"}}",
                          "{\"data\":\"\"} x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_exit(
            &p,
            tkcall(&p, f->tkd_addr, ARGS("-d", bad[i], "tk.v1.Control/Ping")),
            65);
        ts_proc_free(&p);
    }
    /* Bad data is refused before any connection: no tkd needed. */
    expect_exit(&p,
                tkcall(&p, "ipc:///nonexistent/tkd.sock",
                       ARGS("-d", "{\"rpeo\":1}", "tk.v1.Control/Ping")),
                65);
    ts_proc_free(&p);
}

/* ---- bytes fields: text for people, base64 with --proto-json ------------ */

/* tkcall -o json [flag] -d data method: exits 0; returns its stdout (free
 * it). */
static char *call_ok(fixture *f, const char *flag, const char *data,
                     const char *method)
{
    ts_proc p;
    int rv = flag != NULL ? tkcall(&p, f->tkd_addr,
                                   ARGS("-o", "json", flag, "-d", data, method))
                          : tkcall(&p, f->tkd_addr,
                                   ARGS("-o", "json", "-d", data, method));
    expect_exit(&p, rv, 0);
    char *out = strdup(p.out != NULL ? p.out : "");
    assert_non_null(out);
    ts_proc_free(&p);
    return out;
}

/* The issue's Ping: "hi" is text, echoed as text; only --proto-json reads
 * it as base64 (of the one byte 0x86, echoed "hg=="). */
static void test_bytes_as_text(void **state)
{
    fixture *f = *state;
    const char *ping = "tk.v1.Control/Ping";
    static const struct {
        const char *flag, *data, *want;
    } cases[] = {
        { NULL, "{\"data\":\"hi\"}", "\"data\": \"hi\",\n" },
        { "--proto-json", "{\"data\":\"hi\"}", "\"data\": \"hg==\",\n" },
        /* Text that looks like base64 is text. */
        { NULL, "{\"data\":\"aGk=\"}", "\"data\": \"aGk=\",\n" },
        { "--proto-json", "{\"data\":\"aGk=\"}", "\"data\": \"aGk=\",\n" },
        /* Bytes that are not UTF-8: the object form, both ways. */
        { NULL, "{\"data\":{\"base64\":\"/2hp\"}}",
          "\"data\": {\"base64\": \"/2hp\"},\n" },
        { NULL, "{\"data\":{\"base64\":\"aGk=\"}}", "\"data\": \"hi\",\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = call_ok(f, cases[i].flag, cases[i].data, ping);
        expect_in(out, cases[i].want);
        free(out);
    }
    /* A bad object form names the field; --proto-json takes no object. */
    ts_proc p;
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("-d", "{\"data\":{\"base64\":\"h\"}}", ping)),
                65);
    expect_in(p.err, "data.base64: invalid base64");
    ts_proc_free(&p);
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("--proto-json", "-d",
                            "{\"data\":{\"base64\":\"aGk=\"}}", ping)),
                65);
    expect_in(p.err, "data: expected base64 bytes (a string), got an object");
    ts_proc_free(&p);
}

/* git -C repo args..., with an identity; exits 0. */
static void git(const char *repo, const char *const *args)
{
    const char *argv[MAX_ARGS + 8] = {
        "/usr/bin/env", "git",         "-C", repo,
        "-c",           "user.name=T", "-c", "user.email=t@example.com"
    };
    size_t k = 8;
    for (; *args != NULL && k < MAX_ARGS + 7; args++)
        argv[k++] = *args;
    argv[k] = NULL;
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, NULL), 0);
    int rv = ts_finish(&p, RUN_MS);
    if (rv != 0)
        fail_msg("git %s exited %d: %s", argv[8], rv, p.err ? p.err : "");
    ts_proc_free(&p);
}

/* dir/name: a repository with three commits: "add gen" (gen/a), "add
 * other" (other/b), "add latin1" (a file whose name is Latin-1, not UTF-8:
 * caf\xe9.txt), the last then changed in the working tree. */
static void make_repo(const fixture *f, char *repo, size_t len)
{
    snprintf(repo, len, "%s/repo", f->dir);
    char path[400];
    assert_int_equal(mkdir(repo, 0700), 0);
    git(repo, ARGS("init", "-q"));
    const char *files[][2] = { { "gen", "gen/a" },
                               { "other", "other/b" },
                               { NULL, "caf\xe9.txt" } };
    const char *subjects[] = { "add gen", "add other", "add latin1" };
    for (size_t i = 0; i < 3; i++) {
        if (files[i][0] != NULL) {
            snprintf(path, sizeof path, "%s/%s", repo, files[i][0]);
            assert_int_equal(mkdir(path, 0700), 0);
        }
        snprintf(path, sizeof path, "%s/%s", repo, files[i][1]);
        write_file(path, "one\n");
        git(repo, ARGS("add", "."));
        git(repo, ARGS("commit", "-q", "-m", subjects[i]));
    }
    write_file(path, "two\n"); /* caf\xe9.txt, modified */
}

/* The issue's Log: paths ["gen/"] is the directory gen/, so Log finds the
 * one commit that touched it, its subject and author printed as text. With
 * --proto-json the same request is base64 (three other bytes): no commit. */
static void test_bytes_git_log_paths(void **state)
{
    fixture *f = *state;
    char repo[300], data[600];
    make_repo(f, repo, sizeof repo);
    snprintf(data, sizeof data, "{\"repo\":\"%s\",\"paths\":[\"gen/\"]}", repo);
    char *out = call_ok(f, NULL, data, "tk.v1.Git/Log");
    expect_in(out, "\"subject\": \"add gen\"");
    expect_in(out, "\"name\": \"T\"");
    assert_int_equal(ts_count(out, "\"subject\""), 1);
    free(out);
    out = call_ok(f, "--proto-json", data, "tk.v1.Git/Log");
    assert_string_equal(out, "{}\n");
    free(out);
}

/* A path that is not UTF-8, from git itself: Status gives it in the object
 * form, and that form sent back (Log's paths) names the same file. */
static void test_bytes_not_utf8_path(void **state)
{
    fixture *f = *state;
    char repo[300], data[600];
    make_repo(f, repo, sizeof repo);
    snprintf(data, sizeof data, "{\"repo\":\"%s\"}", repo);
    char *out = call_ok(f, NULL, data, "tk.v1.Git/Status");
    /* base64 of "caf\xe9.txt" */
    expect_in(out, "\"path\": {\"base64\": \"Y2Fm6S50eHQ=\"}");
    free(out);
    snprintf(data, sizeof data,
             "{\"repo\":\"%s\",\"paths\":[{\"base64\":\"Y2Fm6S50eHQ=\"}]}",
             repo);
    out = call_ok(f, NULL, data, "tk.v1.Git/Log");
    expect_in(out, "\"subject\": \"add latin1\"");
    assert_int_equal(ts_count(out, "\"subject\""), 1);
    free(out);
}

/* describe says how a bytes field is typed, in the mode in force. */
static void test_bytes_describe(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("describe", "tk.v1.GitLogRequest")),
        0);
    expect_in(p.out, "  repeated bytes paths = 5;  // text, or "
                     "{\"base64\":\"...\"} if not UTF-8\n");
    ts_proc_free(&p);
    expect_exit(&p,
                tkcall(&p, f->tkd_addr,
                       ARGS("--proto-json", "describe", "tk.v1.Status")),
                0);
    expect_in(p.out, "  bytes stderr_excerpt = 4;  // JSON: stderrExcerpt; "
                     "base64 (--proto-json)\n");
    ts_proc_free(&p);
}

static void test_unknown_method(void **state)
{
    fixture *f = *state;
    ts_proc p;
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("tk.v1.Control/Pnig")), 64);
    expect_in(p.err, "unknown method \"tk.v1.Control/Pnig\"");
    expect_in(p.err, "tkcall list");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("tk.nope.Svc/Call")), 64);
    expect_in(p.err, "tkcall list");
    ts_proc_free(&p);
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("describe", "tk.nope.Svc/Call")), 64);
    ts_proc_free(&p);
}

static void test_tk_addr(void **state)
{
    fixture *f = *state;
    char env_addr[320];
    snprintf(env_addr, sizeof env_addr, "TK_ADDR=%s", f->tkd_addr);
    const char *env[] = { env_addr, NULL };
    ts_proc p;
    spawn_tkcall(&p, NULL, NULL, env, ARGS("tk.v1.Control/Ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    ts_proc_free(&p);
    /* --addr wins over TK_ADDR. */
    const char *bad_env[] = { "TK_ADDR=ipc:///nonexistent/tkd.sock", NULL };
    spawn_tkcall(&p, f->tkd_addr, NULL, bad_env, ARGS("tk.v1.Control/Ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    ts_proc_free(&p);
    spawn_tkcall(&p, NULL, NULL, bad_env, ARGS("tk.v1.Control/Ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 14);
    expect_in(p.err, "ipc:///nonexistent/tkd.sock");
    ts_proc_free(&p);
}

/* ---- names, describe and paths as people type them -------------------- */

static void test_method_names(void **state)
{
    fixture *f = *state;
    const char *forms[] = { "tk.v1.Control/Ping",
                            "tk.v1.Control.Ping",
                            ".tk.v1.Control/Ping",
                            "Control/Ping",
                            "control.ping",
                            "ping",
                            "PING" };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ts_proc p;
        expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS(forms[i])), 0);
        expect_in(p.out, "\"serverVersion\"");
        ts_proc_free(&p);
    }
    ts_proc p;
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("git/stauts")), 64);
    expect_in(p.err, "unknown method \"git/stauts\"; did you mean "
                     "tk.v1.Git/Status?");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("tk.v1.Git/Staus")), 64);
    expect_in(p.err, "did you mean tk.v1.Git/Status?");
    ts_proc_free(&p);
    /* Two methods end in Status: neither is guessed. */
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("status")), 64);
    expect_in(p.err, "could be tk.v1.Git/Status, tk.v1.Services/Status");
    ts_proc_free(&p);
    /* A tail is whole parts: "ing" is no tail of Ping. */
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("ing")), 64);
    expect_in(p.err, "unknown method \"ing\"");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("lsit")), 64);
    expect_in(p.err, "unknown command \"lsit\"; did you mean list?");
    ts_proc_free(&p);
}

static void test_list_short_service(void **state)
{
    fixture *f = *state;
    const char *forms[] = { "Git", "git", "tk.v1.git", "v1.Git" };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ts_proc p;
        expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("list", forms[i])), 0);
        expect_in(p.out, "tk.v1.Git/Status\n");
        char *save = NULL;
        for (char *line = strtok_r(p.out, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save))
            assert_int_equal(strncmp(line, "tk.v1.Git/", 10), 0);
        ts_proc_free(&p);
    }
    ts_proc p;
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("list", "gti")), 5);
    expect_in(p.err, "did you mean tk.v1.Git?");
    expect_in(p.err, "\"code\":\"NOT_FOUND\"");
    ts_proc_free(&p);
}

static void test_describe_schema(void **state)
{
    fixture *f = *state;
    ts_proc p;
    /* The method's comment, the request and the reply. */
    expect_exit(&p, tkcall(&p, f->tkd_addr, ARGS("describe", "control.ping")),
                0);
    expect_in(p.out, "method    tk.v1.Control/Ping\n");
    expect_in(p.out, "// Echoes `data`; says which tkd answered");
    expect_in(p.out, "message tk.v1.PingRequest {");
    expect_in(p.out, "message tk.v1.PingReply {");
    ts_proc_free(&p);
    /* Oneofs by name, paths, field comments. */
    expect_exit(&p, tkcall(&p, NULL, ARGS("describe", "SearchRequest")), 0);
    expect_in(p.out, "  oneof hidden {");
    expect_in(p.out, "  // An absolute directory that resolves");
    expect_in(p.out, "  string root = 1;  // path: absolute, inside one of "
                     "tkd's --root directories (tkcall makes a relative one "
                     "absolute)\n");
    expect_in(p.out, "  string query = 2;\n");
    ts_proc_free(&p);
    /* Maps as maps, JSON objects; enum values' comments. */
    expect_exit(&p, tkcall(&p, NULL, ARGS("describe", "tk.v1.ServiceSpec")), 0);
    expect_in(p.out, "  map<string, string> env = 4;  // JSON: an object\n");
    expect_in(p.out, "  string working_dir = 5;  // JSON: workingDir; path: "
                     "absolute, on tkd's machine");
    expect_in(p.out, "    // Started once.");
    ts_proc_free(&p);
    /* A service: its methods with their comments and kinds. */
    expect_exit(&p, tkcall(&p, NULL, ARGS("describe", "git")), 0);
    expect_in(p.out, "service tk.v1.Git {\n");
    expect_in(p.out, "  rpc Status(tk.v1.GitStatusRequest) returns "
                     "(tk.v1.GitStatusReply);  // READ\n");
    expect_in(p.out, "// WRITE\n");
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, NULL, ARGS("describe", "PingRequst")), 64);
    expect_in(p.err, "did you mean tk.v1.PingRequest?");
    ts_proc_free(&p);
}

/* Runs tkcall in dir (the test's own working directory meanwhile). */
static int tkcall_in(ts_proc *p, const char *dir, const char *addr,
                     const char *const *args)
{
    char back[PATH_MAX];
    assert_non_null(getcwd(back, sizeof back));
    assert_int_equal(chdir(dir), 0);
    int rv = tkcall(p, addr, args);
    assert_int_equal(chdir(back), 0);
    return rv;
}

static void test_relative_paths(void **state)
{
    fixture *f = *state;
    char repo[300];
    snprintf(repo, sizeof repo, "%s/repo", f->dir);
    ts_proc p;
    const char *git[] = { "/usr/bin/git", "init", "-q", repo, NULL };
    assert_int_equal(ts_spawn(&p, git, NULL), 0);
    assert_int_equal(ts_finish(&p, RUN_MS), 0);
    ts_proc_free(&p);
    const char *const *cases[] = {
        ARGS("-o", "json", "-d", "{\"repo\":\"repo\"}", "git/status"),
        ARGS("-o", "json", "-d", "{\"repo\":\"./repo/\"}", "git/status"),
        ARGS("-o", "json", "-d", "{\"repo\":\"repo/../repo\"}", "git/status"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_exit(&p, tkcall_in(&p, f->dir, f->tkd_addr, cases[i]), 0);
        expect_in(p.out, "\"branch\"");
        ts_proc_free(&p);
    }
    expect_exit(&p,
                tkcall_in(&p, repo, f->tkd_addr,
                          ARGS("-d", "{\"repo\":\".\"}", "git/status")),
                0);
    ts_proc_free(&p);
    /* Made absolute against the working directory, not sent as typed
     * (tkd would say BAD_PATH): from / it is /repo. */
    expect_exit(&p,
                tkcall_in(&p, "/", f->tkd_addr,
                          ARGS("-d", "{\"repo\":\"repo\"}", "git/status")),
                7);
    expect_in(p.err, "\"message\":\"repo: /repo is not inside");
    ts_proc_free(&p);
    /* Inside a message of the request (Services/Render's spec). */
    char want[400];
    snprintf(want, sizeof want, "WorkingDirectory=%s/sub/dir\\n", f->dir);
    expect_exit(&p,
                tkcall_in(&p, f->dir, f->tkd_addr,
                          ARGS("-d",
                               "{\"spec\":{\"label\":\"dev.tk.x\","
                               "\"program\":\"/bin/true\","
                               "\"workingDir\":\"./sub/dir\"},"
                               "\"backend\":\"SYSTEMD\"}",
                               "services/render")),
                0);
    expect_in(p.out, want);
    ts_proc_free(&p);
}

static void test_addr_bare_path(void **state)
{
    fixture *f = *state;
    char sock[300];
    snprintf(sock, sizeof sock, "%s/tkd.sock", f->dir);
    ts_proc p;
    expect_exit(&p, tkcall(&p, sock, ARGS("ping")), 0);
    ts_proc_free(&p);
    expect_exit(&p, tkcall_in(&p, f->dir, "tkd.sock", ARGS("ping")), 0);
    ts_proc_free(&p);
    expect_exit(&p, tkcall(&p, "/nonexistent/tkd.sock", ARGS("ping")), 14);
    expect_in(p.err, "ipc:///nonexistent/tkd.sock");
    ts_proc_free(&p);
    char env_addr[320];
    snprintf(env_addr, sizeof env_addr, "TK_ADDR=%s", sock);
    const char *env[] = { env_addr, NULL };
    spawn_tkcall(&p, NULL, NULL, env, ARGS("ping"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    ts_proc_free(&p);
}

/* ---- against testd: deadlines and Ctrl-C -------------------------------- */

static void test_deadline(void **state)
{
    fixture *f = *state;
    ts_proc p;
    start_testd(f, "deadline");
    expect_exit(&p,
                tkcall(&p, f->testd_addr,
                       ARGS("--timeout", "200ms", "tk.test.Test/Wait")),
                4);
    expect_in(p.err, "\"code\":\"DEADLINE_EXCEEDED\"");
    expect_in(p.err, "\"cause\":\"DEADLINE\"");
    expect_in(p.err, "\"fromServer\":true");
    ts_proc_free(&p);
    /* A method tkcall's catalog lacks, described from tkd's ListMethods. */
    expect_exit(
        &p, tkcall(&p, f->testd_addr, ARGS("describe", "tk.test.Test/Wait")),
        0);
    expect_in(p.out, "request   tk.v1.PingRequest");
    expect_in(p.out, "kind      READ");
    ts_proc_free(&p);
}

/* Starts tkcall args... against the test's testd and waits until testd's
 * handler of method runs. */
static void call_until_entered(fixture *f, const char *method,
                               const char *const *args)
{
    char entered[64];
    snprintf(entered, sizeof entered, "ENTERED %s", method);
    spawn_tkcall(&f->call, f->testd_addr, NULL, NULL, args);
    f->call_up = true;
    if (!ts_wait_output(&f->testd, 1, entered, RUN_MS))
        fail_msg("testd never ran %s", method);
}

static void test_ctrl_c_read(void **state)
{
    fixture *f = *state;
    start_testd(f, "ctrlc-read");
    call_until_entered(f, "Wait", ARGS("tk.test.Test/Wait"));
    ts_signal(&f->call, SIGINT);
    expect_exit(&f->call, ts_finish(&f->call, RUN_MS), 1);
    expect_in(f->call.err, "\"code\":\"CANCELLED\"");
    expect_in(f->call.err, "\"cause\":\"CALLER\"");
    expect_in(f->call.err, "\"fromServer\":true");
}

/* The write runs until released, and is released only once tkcall has said
 * what the Cancel answered: so the Cancel finds it running, whatever the
 * load. A write that ended on its own before the Cancel came would make
 * the Cancel ALREADY_DONE, and "runs to completion" would never come. */
static void test_ctrl_c_write(void **state)
{
    fixture *f = *state;
    start_testd_with(f, "ctrlc-write", true);
    call_until_entered(f, "SlowWrite", ARGS("tk.test.Test/SlowWrite"));
    ts_signal(&f->call, SIGINT);
    if (!ts_wait_output(&f->call, 2, "runs to completion", RUN_MS))
        fail_msg("no WRITE_CONTINUES; stderr:\n%s",
                 f->call.err ? f->call.err : "");
    release_write(f);
    expect_exit(&f->call, ts_finish(&f->call, RUN_MS), 0);
    expect_in(f->call.out, "\"data\": \"written\"");
}

static void test_ctrl_c_twice(void **state)
{
    fixture *f = *state;
    start_testd_with(f, "ctrlc-twice", true);
    call_until_entered(f, "SlowWrite", ARGS("tk.test.Test/SlowWrite"));
    ts_signal(&f->call, SIGINT);
    assert_true(ts_wait_output(&f->call, 2, "runs to completion", RUN_MS));
    /* The second one exits at once: the write is still held. */
    ts_signal(&f->call, SIGINT);
    expect_exit(&f->call, ts_finish(&f->call, RUN_MS), 130);
    expect_in(f->call.err, "tkcall: interrupted");
    release_write(f); /* now the write may end, and testd with it */
}

/* ---- output formats, colour, -v and partial replies ---------------------- */

/* The group's repository: a.c (changed, not staged), s.txt (staged, new),
 * u.txt (untracked), sub/b.c; 7 lines hold "tk_client_open"; two commits,
 * the first with a body. */
static const char *repo(fixture *f)
{
    if (f->repo[0] != '\0')
        return f->repo;
    snprintf(f->repo, sizeof f->repo, "%s/ux", f->dir);
    tree_mkdir(f->dir, "ux");
    tree_git(f->repo, ARGS("init", "-q"));
    tree_puts(f->repo, "a.c",
              "tk_client_open one\nx tk_client_open two tk_client_open\n");
    tree_lines(f->repo, "sub/b.c", "call tk_client_open", 5);
    tree_git(f->repo, ARGS("add", "."));
    tree_git(f->repo, ARGS("commit", "-q", "-m", "first commit", "-m",
                           "body line one\nbody line two"));
    tree_puts(f->repo, "c.txt", "c\n");
    tree_git(f->repo, ARGS("add", "c.txt"));
    tree_git(f->repo, ARGS("commit", "-q", "-m", "second: c.txt"));
    tree_puts(f->repo, "a.c",
              "tk_client_open one\nx tk_client_open two tk_client_open\n"
              "change\n");
    tree_puts(f->repo, "s.txt", "s\n");
    tree_git(f->repo, ARGS("add", "s.txt"));
    tree_puts(f->repo, "u.txt", "u\n");
    return f->repo;
}

/* -d {"repo":REPO<extra>} (or "root" for Search). */
static const char *req(fixture *f, const char *key, const char *extra)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "{\"%s\":\"%s\"%s}", key, repo(f), extra);
    return buf;
}

/* got is exactly want; no output at all (NULL) is "". */
static void expect_eq(const char *got, const char *want)
{
    if (strcmp(got != NULL ? got : "", want) != 0)
        fail_msg("want:\n%s\ngot:\n%s", want, got != NULL ? got : "");
}

static void expect_no_colour(const char *text)
{
    if (text != NULL && strchr(text, '\033') != NULL)
        fail_msg("colour (ESC) in:\n%s", text);
}

/* Runs tkcall with args against the group's tkd; wants exit 0. */
static void run_ok(fixture *f, ts_proc *p, const char *const *args)
{
    expect_exit(p, tkcall(p, f->tkd_addr, args), 0);
}

static void test_text_grep_and_search(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(f, &p,
           ARGS("-d", req(f, "repo", ",\"pattern\":\"tk_client_open\""),
                "tk.v1.Git/Grep"));
    expect_eq(p.out, "a.c:1:1:tk_client_open one\n"
                     "a.c:2:3:x tk_client_open two tk_client_open\n"
                     "sub/b.c:1:6:call tk_client_open\n"
                     "sub/b.c:2:6:call tk_client_open\n"
                     "sub/b.c:3:6:call tk_client_open\n"
                     "sub/b.c:4:6:call tk_client_open\n"
                     "sub/b.c:5:6:call tk_client_open\n");
    expect_eq(p.err, "");
    ts_proc_free(&p);
    /* Search by rg: its order of files is its own. */
    run_ok(f, &p,
           ARGS("-d", req(f, "root", ",\"query\":\"two tk_\",\"tool\":\"RG\""),
                "tk.v1.Search/Search"));
    expect_eq(p.out, "a.c:2:18:x tk_client_open two tk_client_open\n");
    ts_proc_free(&p);
    /* No match is not an error: exit 0 (1 is CANCELLED), nothing printed
     * in the text form, and a reply without matches in JSON (--help says
     * so). */
    run_ok(f, &p,
           ARGS("-d", req(f, "repo", ",\"pattern\":\"no such words\""),
                "tk.v1.Git/Grep"));
    expect_eq(p.out, "");
    expect_eq(p.err, "");
    ts_proc_free(&p);
    run_ok(f, &p,
           ARGS("-d", req(f, "root", ",\"query\":\"no such words\""),
                "tk.v1.Search/Search"));
    expect_eq(p.out, "");
    expect_eq(p.err, "");
    ts_proc_free(&p);
    run_ok(f, &p,
           ARGS("-o", "compact", "-d",
                req(f, "root", ",\"query\":\"no such words\""),
                "tk.v1.Search/Search"));
    expect_in(p.out, "{\"tool\":");
    assert_null(strstr(p.out, "\"matches\""));
    ts_proc_free(&p);
}

static void test_text_log(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(f, &p,
           ARGS("-d", req(f, "repo", ",\"rev\":\"HEAD~1\""),
                "tk.v1.Git/RevParse"));
    assert_int_equal(strlen(p.out), 41); /* the id and a newline */
    char first[41];
    memcpy(first, p.out, 40);
    first[40] = '\0';
    ts_proc_free(&p);
    run_ok(f, &p, ARGS("-d", req(f, "repo", ""), "tk.v1.Git/Log"));
    char want[128];
    snprintf(want, sizeof want, "\n%.7s first commit\n", first);
    expect_in(p.out, want);
    expect_in(p.out, " second: c.txt\n");
    assert_int_equal(ts_count(p.out, "\n"), 2);
    ts_proc_free(&p);
    run_ok(f, &p,
           ARGS("-o", "long", "-d", req(f, "repo", ",\"rev\":\"HEAD~1\""),
                "tk.v1.Git/Log"));
    snprintf(want, sizeof want,
             "commit %s\nAuthor: tk test <test@tk.invalid>\n"
             "Date:   ",
             first);
    assert_int_equal(strncmp(p.out, want, strlen(want)), 0);
    expect_in(p.out, " +0000\n\n    first commit\n\n    body line one\n"
                     "    body line two\n");
    ts_proc_free(&p);
}

static void test_text_status_and_diff(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(f, &p, ARGS("-d", req(f, "repo", ""), "tk.v1.Git/Status"));
    expect_eq(p.out, "## main\n M a.c\nA  s.txt\n?? u.txt\n");
    ts_proc_free(&p);
    /* A clone a commit ahead of its upstream, with a rename staged; then
     * detached. */
    char clone[400], d[500];
    snprintf(clone, sizeof clone, "%s/ux-clone", f->dir);
    tree_git(f->dir, ARGS("clone", "-q", repo(f), clone));
    snprintf(d, sizeof d, "{\"repo\":\"%s\"}", clone);
    /* Level with its upstream: JSON says 0 and 0, not the flag alone. */
    run_ok(f, &p, ARGS("-o", "compact", "-d", d, "tk.v1.Git/Status"));
    expect_in(p.out, "\"hasAheadBehind\":true,\"ahead\":0,\"behind\":0");
    ts_proc_free(&p);
    tree_puts(clone, "e.txt", "e\n");
    tree_git(clone, ARGS("add", "e.txt"));
    tree_git(clone, ARGS("commit", "-q", "-m", "e"));
    tree_git(clone, ARGS("mv", "c.txt", "d.txt"));
    snprintf(d, sizeof d, "{\"repo\":\"%s\"}", clone);
    run_ok(f, &p, ARGS("-d", d, "tk.v1.Git/Status"));
    expect_eq(p.out, "## main...origin/main [ahead 1]\nR  c.txt -> d.txt\n");
    ts_proc_free(&p);
    tree_git(clone, ARGS("checkout", "-q", "--detach"));
    run_ok(f, &p, ARGS("-d", d, "tk.v1.Git/Status"));
    expect_eq(p.out, "## HEAD (no branch)\nR  c.txt -> d.txt\n");
    ts_proc_free(&p);
    run_ok(f, &p, ARGS("-d", req(f, "repo", ""), "tk.v1.Git/Diff"));
    assert_int_equal(strncmp(p.out, "diff --git a/a.c b/a.c\n", 23), 0);
    expect_in(p.out, "\n@@ -1,2 +1,3 @@\n tk_client_open one\n");
    expect_in(p.out, "\n+change\n");
    ts_proc_free(&p);
}

/* ConfigGet reads back what ConfigSet wrote, as git config --get prints
 * it; ConfigSet prints nothing, as git config. */
static void test_text_config(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(f, &p,
           ARGS("-d",
                req(f, "repo",
                    ",\"key\":\"branch.main.description\","
                    "\"value\":\"the main line\""),
                "tk.v1.Git/ConfigSet"));
    expect_eq(p.out, "");
    ts_proc_free(&p);
    run_ok(f, &p,
           ARGS("-d", req(f, "repo", ",\"key\":\"branch.main.description\""),
                "tk.v1.Git/ConfigGet"));
    expect_eq(p.out, "the main line\n");
    ts_proc_free(&p);
}

/* -o json is the pretty JSON of before, compact one line of it, and a
 * method without a text form prints JSON under text. */
static void test_json_forms(void **state)
{
    fixture *f = *state;
    /* A counter at 0 has its "value" (no call was cancelled yet). */
    ts_proc s;
    run_ok(f, &s, ARGS("-o", "compact", "tk.v1.Control/Stats"));
    expect_in(s.out, "\"name\":\"tk_call_cancellations_total\"");
    expect_in(s.out, "}],\"value\":0}");
    ts_proc_free(&s);
    const char *grep = req(f, "repo", ",\"pattern\":\"two\"");
    ts_proc p;
    run_ok(f, &p, ARGS("-o", "json", "-d", grep, "tk.v1.Git/Grep"));
    expect_eq(p.out, "{\n  \"matches\": [\n    {\n      \"path\": \"a.c\",\n"
                     "      \"line\": 2,\n      \"column\": 18,\n"
                     "      \"text\": \"x tk_client_open two tk_client_open\"\n"
                     "    }\n  ]\n}\n");
    ts_proc_free(&p);
    run_ok(f, &p, ARGS("-o", "compact", "-d", grep, "tk.v1.Git/Grep"));
    expect_eq(p.out, "{\"matches\":[{\"path\":\"a.c\",\"line\":2,\"column\":18,"
                     "\"text\":\"x tk_client_open two tk_client_open\"}]}\n");
    ts_proc_free(&p);
    run_ok(
        f, &p,
        ARGS("-o", "text", "-d", "{\"data\":\"aGk=\"}", "tk.v1.Control/Ping"));
    expect_in(p.out, "{\n  \"data\": \"aGk=\",\n");
    ts_proc_free(&p);
}

/* Runs tkcall --addr addr args on a terminal (a pty) with env, and
 * expects it to exit want; returns what it wrote there (stdout and stderr
 * both, each newline as the terminal's "\r\n"). */
static char *on_terminal_at(const char *addr, const char *const env[], int want,
                            const char *const *args)
{
    const char *argv[MAX_ARGS + 4] = { ts_program("TKCALL"), "--addr", addr };
    size_t k = 3;
    for (; *args != NULL && k < MAX_ARGS; args++)
        argv[k++] = *args;
    /* The environment without NO_COLOR, with a TERM that has colour, and
     * env. */
    size_t n_env = 0, e = 0;
    while (environ[n_env] != NULL)
        n_env++;
    const char **envp = calloc(n_env + 8, sizeof *envp);
    assert_non_null(envp);
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(environ[i], "NO_COLOR=", 9) != 0 &&
            strncmp(environ[i], "TERM=", 5) != 0)
            envp[e++] = environ[i];
    envp[e++] = "TERM=xterm";
    for (size_t i = 0; env[i] != NULL && i < 4; i++)
        envp[e++] = env[i];
    int fd;
    pid_t pid = forkpty(&fd, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    free(envp);
    char *out = calloc(1, 65536);
    assert_non_null(out);
    size_t n = 0;
    ssize_t r;
    /* Until the child's side closes: EIO on Linux. */
    while (n < 65535 && ((r = read(fd, out + n, 65535 - n)) > 0 ||
                         (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    close(fd);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != want)
        fail_msg("tkcall on a terminal: status %d, want exit %d:\n%s", st, want,
                 out);
    return out;
}

static char *on_terminal(fixture *f, const char *const env[],
                         const char *const *args)
{
    return on_terminal_at(f->tkd_addr, env, 0, args);
}

/* An error on a terminal reads as text, one item a line; in a pipe, or
 * with -o json or compact, it is the one line of JSON. */
static void test_errors_on_terminal(void **state)
{
    fixture *f = *state;
    const char *const none[] = { NULL };
    const char *outside = "{\"repo\":\"/\"}";
    char *tty = on_terminal_at(f->tkd_addr, none, 7,
                               ARGS("-d", outside, "tk.v1.Git/Status"));
    expect_in(tty, "ERROR:\r\n  Code:         PERMISSION_DENIED\r\n"
                   "  Reason:       PATH_OUTSIDE_ROOT\r\n  Message:      ");
    expect_in(tty, "\r\n  From:         tkd\r\n");
    assert_null(strstr(tty, "{\"code\""));
    free(tty);
    static const char *const json_forms[] = { "json", "compact" };
    for (size_t i = 0; i < 2; i++) {
        tty = on_terminal_at(
            f->tkd_addr, none, 7,
            ARGS("-o", json_forms[i], "-d", outside, "tk.v1.Git/Status"));
        expect_in(tty, "{\"code\":\"PERMISSION_DENIED\",\"reason\":"
                       "\"PATH_OUTSIDE_ROOT\"");
        assert_null(strstr(tty, "ERROR:"));
        free(tty);
    }
    /* A pipe: JSON (the negative control of the first case). */
    ts_proc p;
    expect_exit(
        &p, tkcall(&p, f->tkd_addr, ARGS("-d", outside, "tk.v1.Git/Status")),
        7);
    expect_in(p.err, "{\"code\":\"PERMISSION_DENIED\",\"reason\":"
                     "\"PATH_OUTSIDE_ROOT\"");
    assert_null(strstr(p.err, "ERROR:"));
    ts_proc_free(&p);
    /* A control byte in a message (here the address tkcall was given)
     * cannot drive the terminal. */
    char addr[300];
    snprintf(addr, sizeof addr, "ipc://%s/no\033[31mbody.sock", f->dir);
    tty = on_terminal_at(addr, none, 14, ARGS("tk.v1.Control/Ping"));
    expect_in(tty, "  Code:         UNAVAILABLE\r\n");
    expect_in(tty, "no\\x1b[31mbody.sock");
    assert_null(strchr(tty, '\033'));
    expect_in(tty, "  From:         tkcall (not sent by tkd)\r\n");
    free(tty);
}

/* Colour on a terminal (auto), never in a pipe, never with NO_COLOR
 * unless asked for by --color=always. */
static void test_colour(void **state)
{
    fixture *f = *state;
    const char *grep = req(f, "repo", ",\"pattern\":\"two\"");
    const char *const none[] = { NULL };
    char *tty = on_terminal(f, none, ARGS("-d", grep, "tk.v1.Git/Grep"));
    expect_in(tty, "\033[35ma.c\033[0m:\033[32m2\033[0m:\033[32m18\033[0m:"
                   "x tk_client_open \033[1;31mtwo\033[0m tk_client_open");
    free(tty);
    const char *const no_color[] = { "NO_COLOR=1", NULL };
    tty = on_terminal(f, no_color, ARGS("-d", grep, "tk.v1.Git/Grep"));
    expect_in(tty, "a.c:2:18:x tk_client_open two tk_client_open");
    expect_no_colour(tty);
    free(tty);
    tty = on_terminal(f, none,
                      ARGS("--color", "never", "-d", grep, "tk.v1.Git/Grep"));
    expect_no_colour(tty);
    free(tty);
    /* A pipe: no colour in any text form, by default or with auto. */
    static const char *const methods[] = { "tk.v1.Git/Grep", "tk.v1.Git/Log",
                                           "tk.v1.Git/Status",
                                           "tk.v1.Git/Diff" };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        ts_proc p;
        const char *d = i == 0 ? grep : req(f, "repo", "");
        run_ok(f, &p, ARGS("-d", d, methods[i]));
        expect_no_colour(p.out);
        ts_proc_free(&p);
        run_ok(f, &p, ARGS("--color", "auto", "-d", d, methods[i]));
        assert_true(p.out != NULL && p.out[0] != '\0');
        expect_no_colour(p.out);
        ts_proc_free(&p);
    }
    /* Asked for: colour in a pipe too, NO_COLOR or not. */
    ts_proc p;
    const char *env[] = { "NO_COLOR=1", NULL };
    spawn_tkcall(&p, f->tkd_addr, NULL, env,
                 ARGS("--color", "always", "-d", req(f, "repo", ""),
                      "tk.v1.Git/Status"));
    expect_exit(&p, ts_finish(&p, RUN_MS), 0);
    expect_eq(p.out, "## \033[32mmain\033[0m\n \033[31mM\033[0m a.c\n"
                     "\033[32mA\033[0m  s.txt\n\033[31m??\033[0m u.txt\n");
    ts_proc_free(&p);
}

static void test_verbose(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(f, &p,
           ARGS("-v", "-t", "2s", "-d",
                req(f, "root", ",\"query\":\"two\",\"tool\":\"RG\""),
                "tk.v1.Search/Search"));
    expect_in(p.err, "tkcall: method   tk.v1.Search/Search\n"
                     "tkcall: deadline 2s\n"
                     "tkcall: status   OK, from tkd\n"
                     "tkcall: elapsed  ");
    expect_in(p.err, " in tkd\ntkcall: tool     rg\n");
    ts_proc_free(&p);
    /* The tool as tkd names it: git's subcommand, or libgit2 in tkd. */
    run_ok(f, &p,
           ARGS("-v", "-d", req(f, "repo", ",\"pattern\":\"two\""),
                "tk.v1.Git/Grep"));
    expect_in(p.err, "tkcall: tool     git grep\n");
    ts_proc_free(&p);
    run_ok(f, &p, ARGS("-v", "-d", req(f, "repo", ""), "tk.v1.Git/Log"));
    expect_in(p.err, "tkcall: tool     libgit2\n");
    ts_proc_free(&p);
    /* Not OK: the same lines, then the status. */
    char missing[400];
    snprintf(missing, sizeof missing, "{\"repo\":\"%s/nonexistent\"}", f->dir);
    expect_exit(
        &p,
        tkcall(&p, f->tkd_addr,
               ARGS("-v", "-t", "0", "-d", missing, "tk.v1.Git/Status")),
        5);
    expect_in(p.err, "tkcall: deadline 0s (the method's default)\n"
                     "tkcall: status   NOT_FOUND PATH_NOT_FOUND, from tkd\n"
                     "tkcall: elapsed  ");
    expect_in(p.err, "{\"code\":\"NOT_FOUND\"");
    assert_null(strstr(p.err, "tool")); /* refused before any ran */
    ts_proc_free(&p);
    /* No tkd: the client's own status, and no elapsed time of tkd's. */
    char addr[300];
    snprintf(addr, sizeof addr, "ipc://%s/nobody.sock", f->dir);
    expect_exit(&p, tkcall(&p, addr, ARGS("-v", "tk.v1.Control/Ping")), 14);
    expect_in(p.err, "tkcall: status   UNAVAILABLE, made by the client\n");
    assert_null(strstr(p.err, "elapsed"));
    ts_proc_free(&p);
    /* Without -v, an OK call says nothing on stderr. */
    run_ok(f, &p, ARGS("tk.v1.Control/Ping"));
    expect_eq(p.err, "");
    ts_proc_free(&p);
}

/* A reply that reached its limit says so on stderr; one that holds every
 * result does not. */
static void test_partial_notice(void **state)
{
    fixture *f = *state;
    ts_proc p;
    run_ok(
        f, &p,
        ARGS("-d",
             req(f, "repo", ",\"pattern\":\"tk_client_open\",\"maxMatches\":3"),
             "tk.v1.Git/Grep"));
    assert_int_equal(ts_count(p.out, "\n"), 3);
    expect_eq(p.err, "tkcall: partial reply: more results exist than the 3 "
                     "here (tkd stopped at a limit); raise \"maxMatches\" "
                     "for more\n");
    ts_proc_free(&p);
    /* As many as exist: whole. */
    run_ok(
        f, &p,
        ARGS("-d",
             req(f, "repo", ",\"pattern\":\"tk_client_open\",\"maxMatches\":7"),
             "tk.v1.Git/Grep"));
    assert_int_equal(ts_count(p.out, "\n"), 7);
    expect_eq(p.err, "");
    ts_proc_free(&p);
    /* Search, and under -o json too (stdout stays the reply alone). */
    run_ok(f, &p,
           ARGS("-o", "json", "-d",
                req(f, "root",
                    ",\"query\":\"tk_client_open\",\"limit\":2,"
                    "\"tool\":\"RG\""),
                "tk.v1.Search/Search"));
    expect_in(p.out, "\"partial\": true");
    expect_eq(p.err, "tkcall: partial reply: more results exist than the 2 "
                     "here (tkd stopped at a limit); raise \"limit\" for "
                     "more\n");
    ts_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_no_tkd),
        cmocka_unit_test(test_addr_schemes),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_list_service),
        cmocka_unit_test(test_describe_method),
        cmocka_unit_test(test_describe_message),
        cmocka_unit_test(test_ping),
        cmocka_unit_test_teardown(test_durations, end_processes),
        cmocka_unit_test(test_data_file_and_stdin),
        cmocka_unit_test(test_grpcurl_habits),
        cmocka_unit_test(test_bad_data),
        cmocka_unit_test(test_bytes_as_text),
        cmocka_unit_test_teardown(test_bytes_git_log_paths, remove_repo),
        cmocka_unit_test_teardown(test_bytes_not_utf8_path, remove_repo),
        cmocka_unit_test(test_bytes_describe),
        cmocka_unit_test(test_unknown_method),
        cmocka_unit_test(test_tk_addr),
        cmocka_unit_test(test_text_grep_and_search),
        cmocka_unit_test(test_text_log),
        cmocka_unit_test(test_text_status_and_diff),
        cmocka_unit_test(test_text_config),
        cmocka_unit_test(test_json_forms),
        cmocka_unit_test(test_colour),
        cmocka_unit_test(test_errors_on_terminal),
        cmocka_unit_test(test_verbose),
        cmocka_unit_test(test_partial_notice),
        cmocka_unit_test(test_method_names),
        cmocka_unit_test(test_list_short_service),
        cmocka_unit_test(test_describe_schema),
        cmocka_unit_test(test_relative_paths),
        cmocka_unit_test(test_addr_bare_path),
        cmocka_unit_test_teardown(test_deadline, end_processes),
        cmocka_unit_test_teardown(test_ctrl_c_read, end_processes),
        cmocka_unit_test_teardown(test_ctrl_c_write, end_processes),
        cmocka_unit_test_teardown(test_ctrl_c_twice, end_processes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
