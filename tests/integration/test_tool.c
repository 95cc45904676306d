/* SPDX-License-Identifier: MIT */
/*
 * service/tool, the one bridge from a call to a process: each event of
 * tool.h's table gets its one answer, on real calls (an in-process rpc
 * server with a test service whose handlers run /bin/sh through the
 * bridge, called over ipc with libtkclient) and on runs with no call
 * (tool_try with call NULL, as tkd install runs its tools).
 *
 * A handler that must be stopped while its program runs prints "ready
 * <pid>" first; its on_stdout posts a semaphore, so no test sleeps to
 * synchronise. Where a short bound may pass before the program starts (a
 * loaded machine), the test asks whether it had started and says what
 * that answer must then be.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>

#include "rpc/rpc.h"
#include "fixture.h"
#include "obs/obs.h"
#include "support.h"
#include "tk/v1/control.pb-c.h"
#include "tool/tool.h"
#include "tsem.h"

#define READ_METHOD "tk.test.Tool/Read"
#define WRITE_METHOD "tk.test.Tool/Write"
/* A WRITE whose own timeout is short enough to pass in a test. */
#define SHORT_WRITE_METHOD "tk.test.Tool/ShortWrite"
#define SHORT_WRITE_MS 1000u
#define HANG "echo ready $$; exec sleep 30"
#define WAIT_S 20

/* ---- the test service: a request's data says how to run sh ---------- */

typedef struct toolsvc {
    ts_sem ready; /* posted when a program printed "ready <pid>" */
    _Atomic int pid;
} toolsvc;

static proc_verdict on_line(void *arg, const char *data, size_t len,
                            bool truncated)
{
    toolsvc *t = arg;
    (void)truncated;
    if (len > 6 && memcmp(data, "ready ", 6) == 0) {
        atomic_store(&t->pid, (int)strtol(data + 6, NULL, 10));
        ts_sem_post(&t->ready);
    }
    return PROC_CONTINUE;
}

static proc_verdict stop_at_once(void *arg, const char *data, size_t len,
                                 bool truncated)
{
    (void)arg;
    (void)data;
    (void)len;
    (void)truncated;
    return PROC_STOP;
}

/* Data "MODE:ARG:SCRIPT"; MODE says what the handler sets up:
 *   sh      the script, stdout captured and sent back
 *   wait    the script, stdout to on_line (ready <pid>)
 *   own     wait, with the run's own bound ARG ms
 *   cap     the script, stdout capped at ARG bytes
 *   limit   the script, on_stdout stopping at the first line
 *   fds     the script, with the descriptors used up
 *   path    the program ARG (no script): a missing or unusable one
 *   cwd     the script in the working directory ARG */
typedef struct scenario {
    char mode[8];
    char arg[256];
    const char *script;
} scenario;

/* (The handlers run on tkd's workers: they fail the call, never assert.) */
static bool parse(scenario *s, rpc_call *call, const ProtobufCBinaryData *d)
{
    char *text = rpc_call_strndup(call, (const char *)d->data, d->len);
    memset(s, 0, sizeof *s);
    char *a = strchr(text, ':');
    char *b = a != NULL ? strchr(a + 1, ':') : NULL;
    if (b == NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "TEST_DATA", "MODE:ARG:");
        return false;
    }
    snprintf(s->mode, sizeof s->mode, "%.*s", (int)(a - text), text);
    snprintf(s->arg, sizeof s->arg, "%.*s", (int)(b - a - 1), a + 1);
    s->script = b + 1;
    return true;
}

/* The soft descriptor limit lowered to the lowest free descriptor: no
 * open can succeed until it is put back. */
static bool use_up_fds(struct rlimit *saved)
{
    if (getrlimit(RLIMIT_NOFILE, saved) != 0)
        return false;
    int lowest = dup(STDIN_FILENO);
    if (lowest < 0)
        return false;
    close(lowest);
    struct rlimit full = { .rlim_cur = (rlim_t)lowest,
                           .rlim_max = saved->rlim_max };
    return setrlimit(RLIMIT_NOFILE, &full) == 0;
}

static void setup_run(tool_opts *o, const scenario *s, toolsvc *t,
                      const char *const *argv)
{
    tool_opts_init(o, "the test's sh", "/bin/sh", argv);
    if (strcmp(s->mode, "wait") == 0 || strcmp(s->mode, "own") == 0) {
        o->proc.on_stdout = on_line;
        o->proc.on_stdout_arg = t;
        o->proc.record_max = 256;
    }
    if (strcmp(s->mode, "own") == 0)
        o->timeout_ms = (uint32_t)strtoul(s->arg, NULL, 10);
    if (strcmp(s->mode, "cap") == 0)
        o->proc.stdout_cap = (size_t)strtoul(s->arg, NULL, 10);
    if (strcmp(s->mode, "limit") == 0)
        o->proc.on_stdout = stop_at_once;
    if (strcmp(s->mode, "cwd") == 0)
        o->proc.cwd = s->arg;
    if (strcmp(s->mode, "path") == 0) {
        o->name = "the test's program";
        o->proc.path = s->arg;
        o->proc.argv = argv + 2; /* { "tk-test-program", NULL } */
    }
}

static void run_handler(void *svc, rpc_call *call,
                        const ProtobufCMessage *request,
                        ProtobufCMessage *reply)
{
    const Tk__V1__PingRequest *in = (const Tk__V1__PingRequest *)request;
    Tk__V1__PingReply *out = (Tk__V1__PingReply *)reply;
    scenario s;
    if (!parse(&s, call, &in->data))
        return;
    const char *argv[] = { "sh", "-c", "tk-test-program", NULL };
    const char *sh_argv[] = { "sh", "-c", s.script, NULL };
    tool_opts o;
    setup_run(&o, &s, svc, strcmp(s.mode, "path") == 0 ? argv : sh_argv);
    struct rlimit saved;
    bool fds = strcmp(s.mode, "fds") == 0;
    if (fds && !use_up_fds(&saved)) {
        rpc_call_fail(call, RPC_INTERNAL, "TEST_RLIMIT", "getrlimit");
        return;
    }
    proc_result r;
    int rv = tool_run(&r, call, &o);
    if (fds && setrlimit(RLIMIT_NOFILE, &saved) != 0)
        abort(); /* nothing could go on */
    if (rv == 1)
        rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
    if (rv == 0 && r.status.code != 0) /* the module's: its exit status */
        rpc_call_fail(call, RPC_UNKNOWN, "TEST_EXIT", "exit %d", r.status.code);
    if (rv >= 0 && r.out != NULL)
        out->data = rpc_call_bytes(call, r.out, r.out_len);
    proc_result_fini(&r);
}

static const rpc_method methods[] = {
    {
        .name = READ_METHOD,
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_READ,
        .default_timeout_ms = 10000,
        .ceiling_ms = 60000,
        .handler = run_handler,
    },
    {
        .name = WRITE_METHOD,
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_WRITE,
        .default_timeout_ms = 60000,
        .ceiling_ms = 60000,
        .handler = run_handler,
    },
    {
        .name = SHORT_WRITE_METHOD,
        .request = &tk__v1__ping_request__descriptor,
        .reply = &tk__v1__ping_reply__descriptor,
        .kind = RPC_WRITE,
        .default_timeout_ms = SHORT_WRITE_MS,
        .ceiling_ms = SHORT_WRITE_MS,
        .handler = run_handler,
    },
};

/* ---- fixture: the server in process, a client --------------------------- */

typedef struct fixture {
    ts_fx fx;          /* the server, the client, the directory */
    toolsvc svc;       /* served as the test service's state */
    rpc_server *srv;   /* fx.srv */
    tk_client *client; /* fx.client */
    const char *dir;   /* fx.dir */
} fixture;

static void *add_toolsvc(ts_fx *fx, void *svc)
{
    char err[256] = "";
    if (rpc_server_add_service(fx->srv, svc, methods,
                               sizeof methods / sizeof *methods, err,
                               sizeof err) != 0)
        fail_msg("add the test service: %s", err);
    return svc;
}

static void fx_start(fixture *f, uint32_t grace_ms)
{
    memset(f, 0, sizeof *f);
    ts_sem_init(&f->svc.ready, 0);
    ts_fx_service svc = { .add = add_toolsvc, .arg = &f->svc };
    ts_fx_opts o = {
        .tag = "tool",
        .workers = 4,
        .shutdown_grace_ms = grace_ms != 0 ? grace_ms : 5000,
        .services = &svc,
        .n_services = 1,
    };
    ts_fx_start(&f->fx, &o);
    f->srv = f->fx.srv;
    f->client = f->fx.client;
    f->dir = f->fx.dir;
}

static void fx_stop(fixture *f)
{
    ts_fx_stop(&f->fx);
    ts_sem_destroy(&f->svc.ready);
}

/* ---- calls ------------------------------------------------------------- */

typedef struct async_call {
    tk_client *client;
    const char *method;
    char data[512];
    uint32_t timeout_ms;
    tk_cancel *cancel;
    tk_status st;
    char *out; /* the reply's data, NUL-terminated, when OK */
    pthread_t thread;
} async_call;

static void *call_main(void *arg)
{
    async_call *a = arg;
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    req.data.data = (uint8_t *)a->data;
    req.data.len = strlen(a->data);
    tk_call_opts opts = { .timeout_ms = a->timeout_ms, .cancel = a->cancel };
    ProtobufCMessage *rep = NULL;
    tk_call(a->client, a->method, (const ProtobufCMessage *)&req,
            &tk__v1__ping_reply__descriptor, &rep, &opts, &a->st);
    if (rep != NULL) {
        const Tk__V1__PingReply *p = (const Tk__V1__PingReply *)rep;
        /* An empty bytes field has no data at all (NULL). */
        a->out = p->data.len > 0
                     ? strndup((const char *)p->data.data, p->data.len)
                     : strdup("");
        protobuf_c_message_free_unpacked(rep, NULL);
    }
    return NULL;
}

static void call_start(async_call *a, const fixture *fx, const char *method,
                       uint32_t timeout_ms, tk_cancel *cancel, const char *fmt,
                       ...) __attribute__((format(printf, 6, 7)));

static void call_start(async_call *a, const fixture *fx, const char *method,
                       uint32_t timeout_ms, tk_cancel *cancel, const char *fmt,
                       ...)
{
    memset(a, 0, sizeof *a);
    a->cancel = cancel;
    a->client = fx->client;
    a->method = method;
    a->timeout_ms = timeout_ms;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->data, sizeof a->data, fmt, ap);
    va_end(ap);
    assert_int_equal(pthread_create(&a->thread, NULL, call_main, a), 0);
}

static void call_join(async_call *a)
{
    assert_int_equal(pthread_join(a->thread, NULL), 0);
}

static void call_free(async_call *a)
{
    tk_status_clear(&a->st);
    free(a->out);
}

/* One call, to its end. */
static void call_sync(async_call *a, const fixture *fx, const char *method,
                      const char *data)
{
    call_start(a, fx, method, 20000, NULL, "%s", data);
    call_join(a);
}

static void expect(const async_call *a, int code, const char *reason)
{
    if (a->st.code != code || strcmp(a->st.reason, reason) != 0)
        fail_msg("%s: got %s/%s (%s), want %s/%s", a->data,
                 tk_code_name(a->st.code), a->st.reason, a->st.message,
                 tk_code_name(code), reason);
}

static void sem_wait_ok(ts_sem *s, const char *what)
{
    if (!ts_sem_wait_ms(s, WAIT_S * 1000))
        fail_msg("timed out waiting for %s", what);
}

/* Whether the program printed "ready" (it had started), without waiting. */
static bool had_started(fixture *fx)
{
    return ts_sem_trywait(&fx->svc.ready);
}

/* Nothing of the run's process group is left. */
static void assert_group_gone(pid_t pgid)
{
    assert_true(pgid > 0);
    errno = 0;
    assert_int_equal(kill(-pgid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* ---- the program ends by itself: the module's ----------------------------
 */

/* ---- the metrics of a run ------------------------------------------------ */

/* The process counters now (tool/ counts each run it hands to proc). */
typedef struct counts {
    int64_t spawned, killed[OBS_M_PROCESSES_TIMED_OUT + 1], timed_out;
    uint64_t cleanups;
} counts;

static counts counts_now(void)
{
    counts c = { .spawned = obs_metric_value(OBS_M_PROCESSES_SPAWNED),
                 .timed_out = obs_metric_value(OBS_M_PROCESSES_TIMED_OUT),
                 .cleanups = obs_metric_observations(OBS_H_PROCESS_CLEANUP) };
    for (int m = OBS_M_PROCESSES_KILLED_CALLER;
         m <= OBS_M_PROCESSES_KILLED_SHUTDOWN; m++)
        c.killed[m] = obs_metric_value((obs_metric)m);
    return c;
}

/* Since before: one run started, killed for why (or for nothing: -1), a
 * time bound's end or not; and every other kill counter unchanged, which
 * is the negative control of the reason. */
static void expect_counted(const counts *before, int why, bool timed_out)
{
    counts now = counts_now();
    assert_int_equal(now.spawned - before->spawned, 1);
    for (int m = OBS_M_PROCESSES_KILLED_CALLER;
         m <= OBS_M_PROCESSES_KILLED_SHUTDOWN; m++)
        assert_int_equal(now.killed[m] - before->killed[m], m == why ? 1 : 0);
    assert_int_equal(now.timed_out - before->timed_out, timed_out ? 1 : 0);
    assert_int_equal(now.cleanups - before->cleanups, why >= 0 ? 1 : 0);
}

/* Exit 0: the output is the module's, no status of the bridge, nothing
 * said of a kill. A non-zero exit is the module's to judge too. */
static void test_exited(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    counts before = counts_now();
    call_sync(&a, &fx, READ_METHOD, "sh::echo hi");
    expect(&a, TK_OK, "");
    assert_string_equal(a.out, "hi\n");
    assert_false(a.st.process_killed);
    assert_int_equal(a.st.cause, TK_CAUSE_NONE);
    expect_counted(&before, -1, false); /* started, not killed */
    call_free(&a);
    call_sync(&a, &fx, READ_METHOD, "sh::exit 3");
    expect(&a, TK_CODE_UNKNOWN, "TEST_EXIT");
    call_free(&a);
    call_sync(&a, &fx, WRITE_METHOD, "sh::exit 3");
    expect(&a, TK_CODE_UNKNOWN, "TEST_EXIT");
    assert_true(a.st.write_completed); /* it ran to its end */
    call_free(&a);
    call_sync(&a, &fx, WRITE_METHOD, "sh::echo written");
    expect(&a, TK_OK, "");
    assert_true(a.st.write_completed);
    assert_string_equal(a.out, "written\n");
    call_free(&a);
    fx_stop(&fx);
}

/* ---- the call's cause first -------------------------------------------- */

static void test_caller_cancels(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    tk_cancel *cancel;
    assert_int_equal(tk_cancel_new(&cancel), TK_OK);
    counts before = counts_now();
    call_start(&a, &fx, READ_METHOD, 20000, cancel, "wait::" HANG);
    sem_wait_ok(&fx.svc.ready, "the program to start");
    assert_int_equal(tk_cancel_fire(cancel, NULL), TK_OK);
    call_join(&a);
    expect(&a, TK_CODE_CANCELLED, "");
    assert_int_equal(a.st.cause, TK_CAUSE_CALLER);
    assert_true(a.st.process_killed);
    expect_counted(&before, OBS_M_PROCESSES_KILLED_CALLER, false);
    assert_true(a.st.cleanup_ms < PROC_DEFAULT_DRAIN_MS);
    assert_group_gone(atomic_load(&fx.svc.pid));
    call_free(&a);
    tk_cancel_free(cancel);
    fx_stop(&fx);
}

static void test_deadline(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    call_start(&a, &fx, READ_METHOD, 500, NULL, "wait::" HANG);
    call_join(&a);
    expect(&a, TK_CODE_DEADLINE_EXCEEDED, "");
    assert_int_equal(a.st.cause, TK_CAUSE_DEADLINE);
    /* Started before the deadline (almost always): killed for it. */
    bool started = had_started(&fx);
    assert_int_equal(a.st.process_killed, started);
    if (started)
        assert_group_gone(atomic_load(&fx.svc.pid));
    call_free(&a);
    fx_stop(&fx);
}

typedef struct shutdown_thread {
    rpc_server *srv;
    unsigned outlived;
    pthread_t t;
} shutdown_thread;

static void *shutdown_main(void *arg)
{
    shutdown_thread *sd = arg;
    sd->outlived = rpc_server_shutdown(sd->srv);
    return NULL;
}

/* A call of method running its program when the server shuts down (its
 * grace grace_ms, 0: 5000): the caller is told UNAVAILABLE SHUTTING_DOWN,
 * the group is gone; returns the calls shutdown counted as outliving it. */
static unsigned shut_down_running(const char *method, uint32_t grace_ms,
                                  async_call *a)
{
    fixture fx;
    fx_start(&fx, grace_ms);
    counts before = counts_now();
    call_start(a, &fx, method, 20000, NULL, "wait::" HANG);
    sem_wait_ok(&fx.svc.ready, "the program to start");
    shutdown_thread sd = { .srv = fx.srv };
    assert_int_equal(pthread_create(&sd.t, NULL, shutdown_main, &sd), 0);
    call_join(a);
    expect(a, TK_CODE_UNAVAILABLE, "SHUTTING_DOWN");
    assert_int_equal(a->st.cause, TK_CAUSE_SHUTDOWN);
    assert_true(a->st.process_killed);
    /* A READ's cancel fd, a WRITE's abort fd: shutdown's either way, not
     * the caller's. */
    expect_counted(&before, OBS_M_PROCESSES_KILLED_SHUTDOWN, false);
    assert_group_gone(atomic_load(&fx.svc.pid));
    assert_int_equal(pthread_join(sd.t, NULL), 0);
    fx_stop(&fx);
    return sd.outlived;
}

/* Shutdown cancels a READ: UNAVAILABLE SHUTTING_DOWN, its group killed. */
static void test_shutdown_read(void **state)
{
    (void)state;
    async_call a;
    assert_int_equal(shut_down_running(READ_METHOD, 0, &a), 0);
    call_free(&a);
}

/* A WRITE still running when the shutdown grace runs out: its abort fd
 * fires, the group gets SIGTERM, and the caller is told it did not
 * complete. */
static void test_shutdown_stops_a_write(void **state)
{
    (void)state;
    async_call a;
    assert_int_equal(shut_down_running(WRITE_METHOD, 200, &a), 1);
    assert_false(a.st.write_completed);
    call_free(&a);
}

/* A WRITE's own timeout bounds its program: DEADLINE_EXCEEDED
 * WRITE_TIMEOUT, not completed; a Cancel does not stop it. */
static void test_write_timeout(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    tk_cancel *cancel;
    assert_int_equal(tk_cancel_new(&cancel), TK_OK);
    call_start(&a, &fx, SHORT_WRITE_METHOD, 0, cancel, "wait::" HANG);
    int outcome = -1;
    bool started = false;
    if (ts_sem_wait_ms(&fx.svc.ready, WAIT_S * 1000)) {
        started = true;
        assert_int_equal(tk_cancel_fire(cancel, &outcome), TK_OK);
    }
    call_join(&a);
    expect(&a, TK_CODE_DEADLINE_EXCEEDED, "WRITE_TIMEOUT");
    assert_int_equal(a.st.cause, TK_CAUSE_DEADLINE);
    assert_false(a.st.write_completed);
    assert_int_equal(a.st.process_killed, started);
    if (started) {
        assert_true(outcome == TK_CANCEL_WRITE_CONTINUES ||
                    outcome == TK_CANCEL_ALREADY_DONE);
        assert_group_gone(atomic_load(&fx.svc.pid));
    }
    call_free(&a);
    tk_cancel_free(cancel);
    fx_stop(&fx);
}

/* ---- could not start: one reason and code in every module --------------- */

static void test_missing_program(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    static const char *const methods_[] = { READ_METHOD, WRITE_METHOD };
    for (size_t i = 0; i < 2; i++) {
        async_call a;
        /* gone when it was started */
        call_sync(&a, &fx, methods_[i], "path:/nonexistent/tk-test-program:");
        expect(&a, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
        assert_non_null(strstr(a.st.message, "program not found"));
        assert_false(a.st.process_killed);
        if (i == 1)
            assert_false(a.st.write_completed);
        call_free(&a);
        /* not on tkd's PATH when it was looked up */
        call_sync(&a, &fx, methods_[i], "path::");
        expect(&a, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
        assert_non_null(strstr(a.st.message, "tk-test-program is not on "
                                             "tkd's PATH"));
        call_free(&a);
    }
    fx_stop(&fx);
}

/* Not executable, or its working directory gone: INTERNAL
 * TOOL_NOT_STARTED. */
static void test_not_started(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    char file[512];
    snprintf(file, sizeof file, "%s/not-executable", fx.dir);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
    close(fd);
    async_call a;
    char data[600];
    snprintf(data, sizeof data, "path:%s:", file);
    call_sync(&a, &fx, READ_METHOD, data);
    expect(&a, TK_CODE_INTERNAL, "TOOL_NOT_STARTED");
    assert_non_null(strstr(a.st.message, "not executable"));
    call_free(&a);
    snprintf(data, sizeof data, "cwd:%s/gone:echo hi", fx.dir);
    call_sync(&a, &fx, WRITE_METHOD, data);
    expect(&a, TK_CODE_INTERNAL, "TOOL_NOT_STARTED");
    assert_false(a.st.write_completed);
    call_free(&a);
    fx_stop(&fx);
}

/* With tkd's descriptors used up: RESOURCE_EXHAUSTED TOO_MANY_OPEN_FILES
 * with retry_after_ms. The negative control: the same run with the limit
 * back. */
static void test_out_of_descriptors(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    call_sync(&a, &fx, READ_METHOD, "fds::echo hi");
    expect(&a, TK_CODE_RESOURCE_EXHAUSTED, "TOO_MANY_OPEN_FILES");
    assert_true(a.st.retry_after_ms > 0);
    assert_non_null(strstr(a.st.message, "Too many open files"));
    call_free(&a);
    call_sync(&a, &fx, READ_METHOD, "sh::echo hi");
    expect(&a, TK_OK, "");
    call_free(&a);
    fx_stop(&fx);
}

/* ---- the run's own bounds ---------------------------------------------- */

/* Its own bound passes while the call has time: a program that hangs,
 * UNAVAILABLE TOOL_TIMEOUT with retry_after_ms, no cause of the call. */
static void test_own_bound(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    counts before = counts_now();
    call_sync(&a, &fx, READ_METHOD, "own:200:" HANG);
    expect(&a, TK_CODE_UNAVAILABLE, "TOOL_TIMEOUT");
    assert_int_equal(a.st.retry_after_ms, TOOL_TIMEOUT_RETRY_MS);
    assert_int_equal(a.st.cause, TK_CAUSE_NONE);
    assert_true(a.st.process_killed);
    expect_counted(&before, OBS_M_PROCESSES_KILLED_TIMEOUT, true);
    if (had_started(&fx))
        assert_group_gone(atomic_load(&fx.svc.pid));
    call_free(&a);
    fx_stop(&fx);
}

static void test_output_cap(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    counts before = counts_now();
    call_sync(&a, &fx, READ_METHOD,
              "cap:16:head -c 100000 /dev/zero; exec sleep 30");
    expect(&a, TK_CODE_RESOURCE_EXHAUSTED, "OUTPUT_TOO_LARGE");
    assert_non_null(strstr(a.st.message, "more than 16 bytes"));
    assert_true(a.st.process_killed);
    expect_counted(&before, OBS_M_PROCESSES_KILLED_OUTPUT_CAP, false);
    call_free(&a);
    fx_stop(&fx);
}

/* on_stdout stops it: a success; partial is the module's to say. */
static void test_limit(void **state)
{
    (void)state;
    fixture fx;
    fx_start(&fx, 0);
    async_call a;
    counts before = counts_now();
    call_sync(&a, &fx, READ_METHOD, "limit::echo one; exec sleep 30");
    expect(&a, TK_OK, "");
    assert_true(a.st.partial);
    assert_int_equal(a.st.cause, TK_CAUSE_LIMIT);
    assert_true(a.st.process_killed);
    expect_counted(&before, OBS_M_PROCESSES_KILLED_LIMIT, false);
    call_free(&a);
    fx_stop(&fx);
}

/* ---- runs with no call (tkd install) ------------------------------------ */

static tool_end try_sh(proc_result *r, tool_answer *a, const char *script,
                       int64_t deadline_ns, uint32_t timeout_ms)
{
    const char *argv[] = { "sh", "-c", script, NULL };
    tool_opts o;
    tool_opts_init(&o, "sh", "/bin/sh", argv);
    o.deadline_ns = deadline_ns;
    o.timeout_ms = timeout_ms;
    return tool_try(r, a, NULL, &o);
}

static void test_no_call(void **state)
{
    (void)state;
    proc_result r;
    tool_answer a;
    int64_t later = proc_now_ns() + (int64_t)20000 * 1000000;
    assert_int_equal(try_sh(&r, &a, "echo hi", later, 0), TOOL_END_EXITED);
    assert_string_equal(r.out, "hi\n");
    assert_int_equal(tool_answer_code(&a), RPC_OK);
    proc_result_fini(&r);

    /* Its time is up before it starts: not started, as a WRITE whose own
     * timeout passed. */
    assert_int_equal(try_sh(&r, &a, "echo hi", proc_now_ns() - 1, 0),
                     TOOL_END_STOPPED);
    assert_false(a.started);
    assert_int_equal(tool_answer_code(&a), RPC_DEADLINE_EXCEEDED);
    assert_string_equal(tool_answer_reason(&a), "WRITE_TIMEOUT");
    assert_non_null(strstr(a.message, "sh not started: the call's time"));
    proc_result_fini(&r);

    /* Its deadline passes while it runs: stopped, as the call's time. */
    int64_t soon = proc_now_ns() + (int64_t)300 * 1000000;
    assert_int_equal(try_sh(&r, &a, "exec sleep 30", soon, 0),
                     TOOL_END_STOPPED);
    assert_true(a.process_killed);
    assert_true(proc_now_ns() >= soon);
    proc_result_fini(&r);

    /* Its own bound, well before the deadline: TOOL_TIMEOUT. */
    assert_int_equal(try_sh(&r, &a, "exec sleep 30", later, 200),
                     TOOL_END_TIMEOUT);
    assert_int_equal(tool_answer_code(&a), RPC_UNAVAILABLE);
    assert_string_equal(tool_answer_reason(&a), "TOOL_TIMEOUT");
    proc_result_fini(&r);

    const char *argv[] = { "tk-test-program", NULL };
    tool_opts o;
    tool_opts_init(&o, "the test's program", "/nonexistent/tk-test-program",
                   argv);
    o.deadline_ns = later;
    assert_int_equal(tool_try(&r, &a, NULL, &o), TOOL_END_MISSING);
    assert_int_equal(tool_answer_code(&a), RPC_FAILED_PRECONDITION);
    assert_string_equal(tool_answer_reason(&a), "TOOL_NOT_FOUND");
    proc_result_fini(&r);
}

int main(void)
{
    (void)signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exited),
        cmocka_unit_test(test_caller_cancels),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_shutdown_read),
        cmocka_unit_test(test_shutdown_stops_a_write),
        cmocka_unit_test(test_write_timeout),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_not_started),
        cmocka_unit_test(test_out_of_descriptors),
        cmocka_unit_test(test_own_bound),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_no_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
