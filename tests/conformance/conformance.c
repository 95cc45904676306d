/* SPDX-License-Identifier: MIT */
/*
 * The conformance table (tests/conformance/cases.json) run through
 * libtkclient: requests decoded from JSON with tk_json_decode and sent with
 * tk_call (tk_call_raw for payload_base64 cases), each case against a fresh
 * real tkd or testd. The Python client runs the same table
 * (test_conformance.py); both assert the table, so both agree.
 *   conformance [CASES.json]   (else $TK_CONFORMANCE_CASES, else the
 *                              table of $TK_SOURCE_ROOT)
 * Waits are on the server's output (READY, "listening on", "ENTERED
 * Wait") or on the fixture's git hook, which announces itself on a fifo
 * (bounded with poll), never sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include <tk/client.h>
#include <tk/json.h>

#include "fixture.h"
#include "tk/v1/control.tk.h"

#define START_MS 20000
#define DEFAULT_TIMEOUT_MS 10000

/* How many cases ran to their verdict, and how many were skipped (only
 * with TK_CONFORMANCE_ALLOW_SKIP=1): main checks that they add up to the
 * table. */
static size_t cases_ran;
static size_t cases_skipped;

static bool skip_allowed(void)
{
    const char *v = getenv("TK_CONFORMANCE_ALLOW_SKIP");
    return v != NULL && strcmp(v, "1") == 0;
}

/* What a call ended with. */
typedef struct outcome {
    tk_status st;
    ProtobufCMessage *reply; /* message requests */
    uint8_t *raw;            /* payload_base64 requests */
    size_t raw_len;
    int cancel_outcome; /* -1: no cancel */
} outcome;

/* The request of a case, ready for tk_call or tk_call_raw. */
typedef struct request {
    const char *method;
    ProtobufCMessage *msg; /* NULL: raw */
    const ProtobufCMessageDescriptor *reply_desc;
    uint8_t *raw;
    size_t raw_len;
    uint32_t timeout_ms;
} request;

/* One case being run, on the heap: the teardown ends what an assertion
 * cut short (the server, a call in its thread). */
typedef struct run {
    json_object *c;
    char dir[200];
    char root[260];
    char fifo[260];    /* the hook's fifo; "" without a hook */
    char release[260]; /* the pre-commit hook's way on; "" without one */
    ts_fx_daemon srv;
    request q;
    outcome out;
    outcome occ; /* the call that holds the worker ("occupy") */
    Tk__V1__ListMethodsReply *methods;
    tk_cancel *cancel;
    pthread_t thread;
    bool thread_up;
} run;

static const char *get_str(json_object *o, const char *key, const char *dflt)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v)
                                                 : dflt;
}

static json_object *get_obj(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* ---- the server ------------------------------------------------------- */

static void start_server(run *r)
{
    const char *kind = get_str(r->c, "server", "tkd");
    if (strcmp(kind, "testd") == 0) {
        ts_fx_daemon_start(
            &r->srv, &(ts_fx_daemon_opts){ .testd = true, .dir = r->dir });
        return;
    }
    if (strcmp(kind, "tkd") != 0)
        fail_msg("case %s: unknown server \"%s\" (tkd or testd)",
                 get_str(r->c, "name", "?"), kind);
    const char *args[16] = { "--root", r->root, "--log-level", "info" };
    json_object *extra = get_obj(r->c, "server_args");
    size_t n_extra = extra != NULL ? json_object_array_length(extra) : 0;
    if (n_extra > 11)
        fail_msg("server_args: at most 11");
    for (size_t i = 0; i < n_extra; i++)
        args[4 + i] =
            json_object_get_string(json_object_array_get_idx(extra, i));
    /* The case's directory as HOME, as for the fixture's git: the git tkd
     * runs (HOME is in its environment allowlist) and libgit2 in it
     * (XDG_CONFIG_HOME too) read no config of the developer's. */
    char home[300], xdg[320];
    snprintf(home, sizeof home, "HOME=%s", r->dir);
    snprintf(xdg, sizeof xdg, "XDG_CONFIG_HOME=%s", r->dir);
    const char *env[] = { home, xdg, "GIT_CONFIG_NOSYSTEM=1", NULL };
    ts_fx_daemon_start(&r->srv, &(ts_fx_daemon_opts){
                                    .dir = r->dir, .args = args, .env = env });
}

static Tk__V1__ListMethodsReply *list_methods(run *r)
{
    Tk__V1__ListMethodsRequest req = TK__V1__LIST_METHODS_REQUEST__INIT;
    Tk__V1__ListMethodsReply *rep = NULL;
    tk_call_opts opts = { .timeout_ms = 10000 };
    tk_status st;
    int code = tk_control_list_methods(r->srv.client, &req, &rep, &opts, &st);
    if (code != TK_OK)
        fail_msg("ListMethods: %s %s", tk_code_name(code), st.message);
    tk_status_clear(&st);
    return rep;
}

static const Tk__V1__MethodInfo *
find_info(const Tk__V1__ListMethodsReply *methods, const char *name)
{
    for (size_t i = 0; i < methods->n_methods; i++)
        if (strcmp(methods->methods[i]->name, name) == 0)
            return methods->methods[i];
    return NULL;
}

/* The first method of "needs" the server does not serve, or NULL. */
static const char *missing_method(run *r,
                                  const Tk__V1__ListMethodsReply *methods)
{
    json_object *needs = get_obj(r->c, "needs");
    size_t n = needs != NULL ? json_object_array_length(needs) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *m =
            json_object_get_string(json_object_array_get_idx(needs, i));
        if (find_info(methods, m) == NULL)
            return m;
    }
    return NULL;
}

/* ---- the fixture -------------------------------------------------------- */

static void write_file(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = strchr(path + strlen(root) + 1, '/'); s != NULL;
         s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            fail_msg("mkdir %s: errno %d", path, errno);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fail_msg("%s: errno %d", path, errno);
    if (fputs(text, f) < 0 || fclose(f) != 0)
        fail_msg("%s: cannot write", path);
}

/* git from PATH: ts_spawn takes a path. */
static void find_git(char *out, size_t len)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path != NULL ? path : "/usr/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d != NULL;
         d = strtok_r(NULL, ":", &save)) {
        snprintf(out, len, "%s/git", d);
        if (access(out, X_OK) == 0)
            return;
    }
    fail_msg("git not found in PATH");
}

static void git(run *r, const char *const args[])
{
    char exe[512], home[300];
    find_git(exe, sizeof exe);
    snprintf(home, sizeof home, "HOME=%s", r->dir);
    const char *argv[12] = { exe, "-C", r->root };
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL && n + 1 < 12; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[] = { home,
                          "GIT_CONFIG_NOSYSTEM=1",
                          "GIT_AUTHOR_NAME=tk",
                          "GIT_AUTHOR_EMAIL=tk@example.invalid",
                          "GIT_COMMITTER_NAME=tk",
                          "GIT_COMMITTER_EMAIL=tk@example.invalid",
                          NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    int rv = ts_finish(&p, START_MS);
    if (rv != 0)
        fail_msg("git %s: exit %d: %s", args[0], rv, p.err ? p.err : "");
    ts_proc_free(&p);
}

/* fixture.hook "block": a core.fsmonitor hook (git runs it at the start
 * of a status) that writes a line to a fifo in the case's directory, then
 * blocks until it is killed. Outside ${ROOT}, so no search finds it; in
 * the global config of tkd's user (its HOME is the case's directory): a
 * READ runs the owner's fsmonitor, never the repository's own. */
/* fixture.hook "pre-commit": a pre-commit hook that writes its line to
 * the fifo, then waits for a line on a second one (release_hook). */
static void make_pre_commit(run *r)
{
    snprintf(r->release, sizeof r->release, "%s/release.fifo", r->dir);
    if (mkfifo(r->release, 0600) != 0)
        fail_msg("mkfifo %s: errno %d", r->release, errno);
    char body[700];
    snprintf(body, sizeof body,
             "#!/bin/sh\n"
             "echo \"hook $$\" > '%s'\n"
             "read line < '%s'\n",
             r->fifo, r->release);
    write_file(r->root, ".git/hooks/pre-commit", body);
    char path[300];
    snprintf(path, sizeof path, "%s/.git/hooks/pre-commit", r->root);
    if (chmod(path, 0700) != 0)
        fail_msg("chmod %s: errno %d", path, errno);
}

static void make_hook(run *r, json_object *fx)
{
    const char *hook = get_str(fx, "hook", NULL);
    if (hook == NULL)
        return;
    if (strcmp(hook, "block") != 0 && strcmp(hook, "pre-commit") != 0)
        fail_msg("fixture.hook: \"%s\" (block, pre-commit)", hook);
    json_object *g = get_obj(fx, "git");
    if (g == NULL || !json_object_get_boolean(g))
        fail_msg("fixture.hook needs \"git\": true");
    snprintf(r->fifo, sizeof r->fifo, "%s/hook.fifo", r->dir);
    if (mkfifo(r->fifo, 0600) != 0)
        fail_msg("mkfifo %s: errno %d", r->fifo, errno);
    if (strcmp(hook, "pre-commit") == 0) {
        make_pre_commit(r);
        return;
    }
    char path[300], body[700];
    snprintf(path, sizeof path, "%s/fsmonitor-hook", r->dir);
    snprintf(body, sizeof body,
             "#!/bin/sh\n"
             "echo \"hook $$\" > '%s'\n"
             "exec sleep 1000\n",
             r->fifo);
    write_file(r->dir, "fsmonitor-hook", body);
    if (chmod(path, 0700) != 0)
        fail_msg("chmod %s: errno %d", path, errno);
    git(r, (const char *const[]){ "config", "--global", "core.fsmonitor", path,
                                  NULL });
}

/* Waits (bounded) for the hook's line on its fifo: git has reached the
 * hook and blocks in it. */
static void wait_hook(const run *r)
{
    int fd = open(r->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        fail_msg("%s: errno %d", r->fifo, errno);
    char line[128];
    size_t got = 0;
    long long until = ts_now_ms() + START_MS;
    while (got == 0 || line[got - 1] != '\n') {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = (int)(until - ts_now_ms());
        if (left <= 0 || poll(&p, 1, left) != 1)
            fail_msg("%s: the git hook never announced itself (did git "
                     "not run, or not reach it before the deadline?)",
                     get_str(r->c, "name", "?"));
        ssize_t n = read(fd, line + got, sizeof line - 1 - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0)
            break; /* the writer closed */
        if (got == sizeof line - 1)
            break;
    }
    close(fd);
    if (got == 0)
        fail_msg("%s: the hook's fifo closed without a line",
                 get_str(r->c, "name", "?"));
}

/* Lets the pre-commit hook go on, once the server printed the case's
 * release.after_output on stderr (its log) when it gives one. */
static void release_hook(run *r)
{
    if (r->release[0] == '\0')
        return;
    const char *after = get_str(get_obj(r->c, "release"), "after_output", NULL);
    if (after != NULL && !ts_wait_output(&r->srv.p, 2, after, START_MS))
        fail_msg("%s: the server never logged \"%s\"",
                 get_str(r->c, "name", "?"), after);
    /* The hook waits in its read: the open does not block for long. */
    int fd = open(r->release, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "go\n", 3) != 3)
        fail_msg("%s: errno %d", r->release, errno);
    close(fd);
}

/* How many commits HEAD of ${ROOT} has (git rev-list --count HEAD). */
static long head_commits(const run *r)
{
    char exe[512], home[300];
    find_git(exe, sizeof exe);
    snprintf(home, sizeof home, "HOME=%s", r->dir);
    const char *argv[] = { exe,       "-C",   r->root, "rev-list",
                           "--count", "HEAD", NULL };
    const char *env[] = { home, "GIT_CONFIG_NOSYSTEM=1", NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    if (ts_finish(&p, START_MS) != 0)
        fail_msg("git rev-list: %s", p.err ? p.err : "");
    long n = p.out != NULL ? strtol(p.out, NULL, 10) : -1;
    ts_proc_free(&p);
    return n;
}

static void make_fixture(run *r)
{
    json_object *fx = get_obj(r->c, "fixture");
    if (fx == NULL)
        return;
    json_object *files = get_obj(fx, "files");
    if (files != NULL) {
        json_object_object_foreach(files, rel, text)
        {
            write_file(r->root, rel, json_object_get_string(text));
        }
    }
    json_object *g = get_obj(fx, "git");
    if (g != NULL && json_object_get_boolean(g)) {
        git(r, (const char *const[]){ "init", "-q", NULL });
        git(r, (const char *const[]){ "add", "-A", NULL });
        git(r, (const char *const[]){ "commit", "-q", "-m", "fixture", NULL });
        /* The identity tkd's git commits with. */
        git(r, (const char *const[]){ "config", "user.name", "tk", NULL });
        git(r, (const char *const[]){ "config", "user.email",
                                      "tk@example.invalid", NULL });
    }
    json_object *up = get_obj(fx, "upstream");
    if (up != NULL && json_object_get_boolean(up)) {
        if (g == NULL || !json_object_get_boolean(g))
            fail_msg("fixture.upstream needs \"git\": true");
        /* A branch at HEAD that HEAD's branch tracks: level with it. */
        git(r, (const char *const[]){ "branch", "-q", "upstream", NULL });
        git(r, (const char *const[]){ "branch", "-q",
                                      "--set-upstream-to=upstream", NULL });
    }
    make_hook(r, fx); /* after the commit, which would run it */
}

/* ---- the request -------------------------------------------------------- */

/* text with every ${ROOT} replaced by root (a temporary path: nothing in
 * it needs JSON escaping). */
static char *substitute(const char *text, const char *root)
{
    static const char var[] = "${ROOT}";
    size_t cap = strlen(text) + 1, len = 0;
    for (const char *s = text; (s = strstr(s, var)) != NULL; s += 1)
        cap += strlen(root);
    char *out = malloc(cap);
    assert_non_null(out);
    for (const char *s = text; *s != '\0';) {
        if (strncmp(s, var, sizeof var - 1) == 0) {
            len += (size_t)snprintf(out + len, cap - len, "%s", root);
            s += sizeof var - 1;
        } else {
            out[len++] = *s++;
        }
    }
    out[len] = '\0';
    return out;
}

/* Base64 through the JSON codec, which reads proto3 JSON bytes fields as
 * base64: PingRequest.data is such a field. */
static void decode_base64(const char *b64, uint8_t **out, size_t *len)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "data", json_object_new_string(b64));
    const char *text =
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    ProtobufCMessage *m = NULL;
    char err[256] = "";
    if (tk_json_decode(&tk__v1__ping_request__descriptor, text, strlen(text),
                       &m, err, sizeof err) != TK_OK)
        fail_msg("payload_base64: %s", err);
    json_object_put(o);
    Tk__V1__PingRequest *p = (Tk__V1__PingRequest *)m;
    *len = p->data.len;
    *out = malloc(*len > 0 ? *len : 1);
    assert_non_null(*out);
    if (*len > 0)
        memcpy(*out, p->data.data, *len);
    protobuf_c_message_free_unpacked(m, NULL);
}

/* The form of bytes of the case's request and reply: "json": "proto3" is
 * the proto3 mapping (base64); the default is tkcall's text form. */
static int case_json_flags(json_object *c)
{
    const char *form = get_str(c, "json", "text");
    if (strcmp(form, "proto3") == 0)
        return 0;
    if (strcmp(form, "text") != 0)
        fail_msg("json: \"%s\" is neither \"text\" nor \"proto3\"", form);
    return TK_JSON_BYTES_TEXT;
}

/* The request and reply types: from the compiled-in catalog, else by the
 * names the server gives in ListMethods (test methods have no .proto). */
static void method_types(const Tk__V1__ListMethodsReply *methods,
                         const char *method,
                         const ProtobufCMessageDescriptor **req,
                         const ProtobufCMessageDescriptor **rep)
{
    const tk_method_desc *m = tk_catalog_find_method(method);
    if (m != NULL) {
        *req = m->request;
        *rep = m->reply;
        return;
    }
    const Tk__V1__MethodInfo *info = find_info(methods, method);
    *req = info ? tk_catalog_find_message(info->request_type) : NULL;
    *rep = info ? tk_catalog_find_message(info->reply_type) : NULL;
    if (*req == NULL || *rep == NULL)
        fail_msg("%s: no request/reply type known (give payload_base64)",
                 method);
}

static void build_request(run *r, const Tk__V1__ListMethodsReply *methods,
                          request *q)
{
    memset(q, 0, sizeof *q);
    q->method = get_str(r->c, "method", NULL);
    assert_non_null(q->method);
    json_object *t = get_obj(r->c, "timeout_ms");
    q->timeout_ms = t ? (uint32_t)json_object_get_int64(t) : DEFAULT_TIMEOUT_MS;
    const char *b64 = get_str(r->c, "payload_base64", NULL);
    if (b64 != NULL) {
        decode_base64(b64, &q->raw, &q->raw_len);
        return;
    }
    const ProtobufCMessageDescriptor *req_desc;
    method_types(methods, q->method, &req_desc, &q->reply_desc);
    json_object *req = get_obj(r->c, "request");
    const char *text =
        req ? json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)
            : "{}";
    char *json = substitute(text, r->root);
    char err[512] = "";
    if (tk_json_decode_ex(&q->msg, req_desc, json, strlen(json),
                          case_json_flags(r->c), err, sizeof err) != TK_OK)
        fail_msg("request of %s: %s", q->method, err);
    free(json);
}

static void request_free(request *q)
{
    if (q->msg != NULL)
        protobuf_c_message_free_unpacked(q->msg, NULL);
    free(q->raw);
}

/* ---- the call ------------------------------------------------------------ */

static void call_into(run *r, outcome *out, uint32_t timeout_ms,
                      tk_cancel *cancel)
{
    const request *q = &r->q;
    tk_call_opts opts = { .timeout_ms = timeout_ms, .cancel = cancel };
    if (q->msg != NULL)
        tk_call(r->srv.client, q->method, q->msg, q->reply_desc, &out->reply,
                &opts, &out->st);
    else
        tk_call_raw(r->srv.client, q->method, q->raw, q->raw_len, &out->raw,
                    &out->raw_len, &opts, &out->st);
}

static void call(run *r, tk_cancel *cancel)
{
    call_into(r, &r->out, r->q.timeout_ms, cancel);
}

static void *call_main(void *arg)
{
    run *r = arg;
    call(r, r->cancel);
    return NULL;
}

/* "occupy": the case's request with a long deadline, holding the worker
 * in the hook while the case's call waits in the queue. */
static void *occupy_main(void *arg)
{
    run *r = arg;
    call_into(r, &r->occ, 30000, NULL);
    return NULL;
}

static void run_occupied(run *r)
{
    if (r->release[0] == '\0')
        fail_msg("occupy needs fixture.hook \"pre-commit\"");
    assert_int_equal(pthread_create(&r->thread, NULL, occupy_main, r), 0);
    r->thread_up = true;
    wait_hook(r); /* the worker is held */
    call(r, NULL);
    release_hook(r);
    pthread_join(r->thread, NULL);
    r->thread_up = false;
    if (r->occ.st.code != TK_OK)
        fail_msg("the occupying call: %s %s", tk_code_name(r->occ.st.code),
                 r->occ.st.message);
}

/* Cancels the call of handle from where the case says, once the server
 * printed the line that says the call runs (after_output), or once the
 * fixture's hook announced itself (after "hook": run_call waited for it). */
static int cancel_call(run *r, json_object *how, tk_cancel *handle)
{
    const char *from = get_str(how, "from", "same_connection");
    const char *after = get_str(how, "after_output", NULL);
    const char *event = get_str(how, "after", NULL);
    if (event != NULL && (strcmp(event, "hook") != 0 || r->fifo[0] == '\0'))
        fail_msg("cancel.after: \"%s\" (\"hook\", with fixture.hook)", event);
    if (after != NULL && !ts_wait_output(&r->srv.p, 1, after, START_MS))
        fail_msg("the server never printed \"%s\"", after);
    int result = -1;
    if (strcmp(from, "same_connection") == 0) {
        assert_int_equal(tk_cancel_fire(handle, &result), TK_OK);
        return result;
    }
    if (strcmp(from, "other_connection") != 0)
        fail_msg("cancel.from: \"%s\" (same_connection or other_connection)",
                 from);
    Tk__V1__CancelRequest req = TK__V1__CANCEL_REQUEST__INIT;
    req.call_id = tk_cancel_call_id(handle);
    assert_true(req.call_id != 0);
    tk_client *other;
    assert_int_equal(tk_client_open(&other, r->srv.url, NULL, 0), TK_OK);
    Tk__V1__CancelReply *rep = NULL;
    tk_status st;
    tk_call_opts opts = { .timeout_ms = 5000 };
    int code = tk_control_cancel(other, &req, &rep, &opts, &st);
    if (code != TK_OK)
        fail_msg("Cancel: %s %s", tk_code_name(code), st.message);
    result = (int)rep->outcome;
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    tk_client_close(other);
    return result;
}

static void run_call(run *r)
{
    r->out.cancel_outcome = -1;
    json_object *occupy = get_obj(r->c, "occupy");
    if (occupy != NULL && json_object_get_boolean(occupy)) {
        run_occupied(r);
        return;
    }
    json_object *how = get_obj(r->c, "cancel");
    bool hook = r->fifo[0] != '\0';
    if (how == NULL && !hook) {
        call(r, NULL);
        return;
    }
    assert_int_equal(tk_cancel_new(&r->cancel), TK_OK);
    assert_int_equal(pthread_create(&r->thread, NULL, call_main, r), 0);
    r->thread_up = true;
    if (hook)
        wait_hook(r); /* the call is in git, blocked in the hook */
    if (how != NULL)
        r->out.cancel_outcome = cancel_call(r, how, r->cancel);
    release_hook(r);
    pthread_join(r->thread, NULL);
    r->thread_up = false;
}

/* ---- the verdict ----------------------------------------------------------
 */

static void expect_str(const run *r, const char *what, const char *want,
                       const char *got)
{
    if (strcmp(want, got) != 0)
        fail_msg("%s: %s is %s, the table says %s (status: %s %s \"%s\")",
                 get_str(r->c, "name", "?"), what, got, want,
                 tk_code_name(r->out.st.code), r->out.st.reason,
                 r->out.st.message ? r->out.st.message : "");
}

/* Every key of want is in got with a value that matches: objects by
 * subset, arrays element by element (same length), the rest equal. */
static bool json_subset(json_object *want, json_object *got)
{
    if (json_object_is_type(want, json_type_array)) {
        size_t n = json_object_array_length(want);
        if (!json_object_is_type(got, json_type_array) ||
            json_object_array_length(got) != n)
            return false;
        for (size_t i = 0; i < n; i++)
            if (!json_subset(json_object_array_get_idx(want, i),
                             json_object_array_get_idx(got, i)))
                return false;
        return true;
    }
    if (!json_object_is_type(want, json_type_object))
        return json_object_equal(want, got);
    if (!json_object_is_type(got, json_type_object))
        return false;
    json_object_object_foreach(want, key, value)
    {
        json_object *g;
        if (!json_object_object_get_ex(got, key, &g) || !json_subset(value, g))
            return false;
    }
    return true;
}

static void expect_reply(const run *r, json_object *want)
{
    if (r->out.reply == NULL)
        fail_msg("%s: the table expects a reply message; there is none",
                 get_str(r->c, "name", "?"));
    char *text = tk_json_encode(r->out.reply, case_json_flags(r->c));
    assert_non_null(text);
    json_object *got = json_tokener_parse(text);
    bool ok = json_subset(want, got);
    json_object_put(got);
    if (!ok)
        fail_msg("%s: reply %s lacks %s", get_str(r->c, "name", "?"), text,
                 json_object_to_json_string(want));
    free(text);
}

static void check_outcome(const run *r)
{
    json_object *e = get_obj(r->c, "expect");
    assert_non_null(e);
    const tk_status *st = &r->out.st;
    expect_str(r, "code", get_str(e, "code", "OK"), tk_code_name(st->code));
    expect_str(r, "reason", get_str(e, "reason", ""), st->reason);
    expect_str(r, "cause", get_str(e, "cause", "NONE"),
               tk_cause_name(st->cause));
    json_object *v = get_obj(e, "from_server");
    bool from_server = v != NULL ? json_object_get_boolean(v) : true;
    expect_str(r, "from_server", from_server ? "true" : "false",
               st->from_server ? "true" : "false");
    if ((v = get_obj(e, "partial")) != NULL)
        expect_str(r, "partial", json_object_get_boolean(v) ? "true" : "false",
                   st->partial ? "true" : "false");
    if ((v = get_obj(e, "process_killed")) != NULL)
        expect_str(r, "process_killed",
                   json_object_get_boolean(v) ? "true" : "false",
                   st->process_killed ? "true" : "false");
    if ((v = get_obj(e, "write_completed")) != NULL)
        expect_str(r, "write_completed",
                   json_object_get_boolean(v) ? "true" : "false",
                   st->write_completed ? "true" : "false");
    if ((v = get_obj(e, "cancel_outcome")) != NULL)
        expect_str(r, "cancel_outcome", json_object_get_string(v),
                   tk_cancel_outcome_name(r->out.cancel_outcome));
    if ((v = get_obj(e, "reply")) != NULL)
        expect_reply(r, v);
    if ((v = get_obj(e, "head_commits")) != NULL &&
        head_commits(r) != json_object_get_int64(v))
        fail_msg("%s: HEAD has %ld commits, the table says %lld",
                 get_str(r->c, "name", "?"), head_commits(r),
                 (long long)json_object_get_int64(v));
}

/* ---- cases as cmocka tests ------------------------------------------------
 */

static int case_setup(void **state)
{
    run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -1;
    r->c = *state;
    if (ts_mkdtemp(r->dir, sizeof r->dir, "conf") != 0)
        return -1;
    snprintf(r->root, sizeof r->root, "%s/root", r->dir);
    if (mkdir(r->root, 0700) != 0)
        return -1;
    *state = r;
    return 0;
}

static int case_teardown(void **state)
{
    run *r = *state;
    if (r->release[0] != '\0') { /* a hook still waiting goes on */
        int fd = open(r->release, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t n = write(fd, "go\n", 3);
            (void)n; /* no hook was waiting */
            close(fd);
        }
    }
    if (r->srv.up) {
        ts_signal(&r->srv.p, SIGTERM); /* ends a call still in flight */
        if (r->thread_up)
            pthread_join(r->thread, NULL);
        ts_finish(&r->srv.p, START_MS);
    }
    ts_fx_daemon_stop(&r->srv);
    tk_cancel_free(r->cancel);
    if (r->methods != NULL)
        protobuf_c_message_free_unpacked(&r->methods->base, NULL);
    request_free(&r->q);
    tk_status_clear(&r->out.st);
    if (r->out.reply != NULL)
        protobuf_c_message_free_unpacked(r->out.reply, NULL);
    free(r->out.raw);
    tk_status_clear(&r->occ.st);
    if (r->occ.reply != NULL)
        protobuf_c_message_free_unpacked(r->occ.reply, NULL);
    free(r->occ.raw);
    ts_rmtree(r->dir);
    free(r);
    return 0;
}

static void run_case(void **state)
{
    run *r = *state;
    make_fixture(r);
    start_server(r);
    r->methods = list_methods(r);
    const char *missing = missing_method(r, r->methods);
    if (missing != NULL) {
        if (!skip_allowed())
            fail_msg("%s: the server does not serve %s (not in "
                     "tk.v1.Control/ListMethods); TK_CONFORMANCE_ALLOW_SKIP=1 "
                     "skips such a case",
                     get_str(r->c, "name", "?"), missing);
        print_message("%s: SKIPPED, the server does not serve %s (not in "
                      "tk.v1.Control/ListMethods)\n",
                      get_str(r->c, "name", "?"), missing);
        cases_skipped++;
        skip();
    }
    build_request(r, r->methods, &r->q);
    run_call(r);
    check_outcome(r);
    cases_ran++;
}

int main(int argc, char **argv)
{
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 1;
    char path[1024];
    const char *env = getenv("TK_CONFORMANCE_CASES");
    if (argc > 1 || (env != NULL && env[0] != '\0'))
        snprintf(path, sizeof path, "%s", argc > 1 ? argv[1] : env);
    else
        snprintf(path, sizeof path, "%s/tests/conformance/cases.json",
                 ts_program("TK_SOURCE_ROOT"));
    json_object *table = json_object_from_file(path);
    json_object *cases = table ? get_obj(table, "cases") : NULL;
    if (cases == NULL) {
        fprintf(stderr, "conformance: %s: no \"cases\" (%s)\n", path,
                json_util_get_last_err() ? json_util_get_last_err() : "");
        return 1;
    }
    size_t n = json_object_array_length(cases);
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    if (tests == NULL)
        return 1;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(cases, i);
        tests[i] = (struct CMUnitTest){
            .name = get_str(c, "name", "?"),
            .test_func = run_case,
            .setup_func = case_setup,
            .teardown_func = case_teardown,
            .initial_state = c,
        };
    }
    /* The table's length is known at run time only: the function behind
     * cmocka_run_group_tests, which wants an array of static size. */
    int failed =
        _cmocka_run_group_tests("conformance (C client)", tests, n, NULL, NULL);
    free(tests);
    json_object_put(table);
    /* A case that neither failed nor reached its verdict (a skip that was
     * not allowed, a runner that lost one) must not pass unseen. */
    if (failed == 0 && cases_ran + cases_skipped != n) {
        fprintf(stderr, "conformance: %zu of %zu cases ran, %zu skipped\n",
                cases_ran, n, cases_skipped);
        return 1;
    }
    printf("conformance: %zu of %zu cases ran, %zu skipped%s\n", cases_ran, n,
           cases_skipped,
           cases_skipped > 0 ? " (TK_CONFORMANCE_ALLOW_SKIP=1)" : "");
    return failed;
}
