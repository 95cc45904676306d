/* SPDX-License-Identifier: MIT */
/* tkcall: a grpcurl-style command line over libtkclient (see tkcall.h).
 * Commands return an exit status of the table in tkcall.h. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tk/client.h>
#include <tk/json.h>

#include "tk/v1/control.pb-c.h"

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

#ifndef TK_VERSION
#define TK_VERSION "0.0.0"
#endif

/* The largest request tkcall reads (tkd refuses far smaller ones). */
#define MAX_REQUEST_BYTES (64u << 20)
#define ADDR_MAX 1024

static const char usage_text[] =
    "usage: tkcall [options] METHOD              call METHOD\n"
    "       tkcall [options] list [SERVICE]      the methods tkd serves\n"
    "       tkcall [options] describe NAME       a service, method, message\n"
    "                                            or enum, with its comments\n"
    "       tkcall --help | --version\n"
    "\n"
    "A grpcurl-style client of tkd. METHOD is a full name such as\n"
    "tk.v1.Control/Ping, grpcurl's tk.v1.Control.Ping, or any tail of it\n"
    "that names one method (Control/Ping, ping), in any case; SERVICE and\n"
    "NAME alike (list git, describe PingRequest). Requests and replies are\n"
    "JSON in the proto3 JSON mapping: lowerCamelCase names (proto names\n"
    "accepted too), 64-bit integers as strings, enums by name; but bytes\n"
    "fields (git's paths, branch names, patches, search lines) are text when\n"
    "they are UTF-8, \"gen/\", and {\"base64\":\"Z2Vu/w==\"} when they are\n"
    "not. A string typed into a bytes field is its text, never base64. A\n"
    "relative path in a field that names a file (describe marks them\n"
    "\"path:\") is made absolute against the working directory.\n"
    "\n"
    "options:\n"
    "  -a, --addr URL|PATH     tkd's address; default $TK_ADDR, else\n"
    "                          ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else\n"
    "                          ipc:///tmp/tk-$UID/tkd.sock; a bare socket\n"
    "                          path (/run/tk/tkd.sock) means ipc:// it; a\n"
    "                          comma-separated list of URLs: the first\n"
    "                          that connects (a fleet: see below)\n"
    "      --cacert FILE       for tls+tcp://: the CA (PEM) that signed\n"
    "                          tkd's certificate; default $TK_TLS_CA\n"
    "      --cert FILE         this client's certificate (PEM), which tkd\n"
    "                          requires; default $TK_TLS_CERT\n"
    "      --key FILE          its private key (PEM); default $TK_TLS_KEY\n"
    "  -t, --timeout DURATION  the call's deadline, enforced by tkd\n"
    "                          (default 30s): 500ms, 30s, 1.5s, 2m, 1h, or a\n"
    "                          bare number of seconds; 0 means the method's\n"
    "                          own default (see describe)\n"
    "  -d, --data JSON|@FILE|@-\n"
    "                          the request (default {}); @FILE reads a file,\n"
    "                          @- standard input\n"
    "  -o, --output FORMAT     how the reply is printed (default text):\n"
    "                          text     the method's text form where it has\n"
    "                                   one (below), else JSON as json\n"
    "                          long     as text, with Git/Log in git log's\n"
    "                                   long form\n"
    "                          json     pretty JSON, the proto3 mapping: the\n"
    "                                   stable form for scripts\n"
    "                          compact  the same JSON on one line (jq, logs)\n"
    "      --color WHEN        colour in the text forms: auto (default: only\n"
    "                          when stdout is a terminal, NO_COLOR is unset\n"
    "                          or empty and TERM is not dumb), always, never\n"
    "  -v, --verbose           for every call, OK or not, on stderr: the\n"
    "                          method, the deadline sent, the status, tkd's\n"
    "                          elapsed time and what did the work (the\n"
    "                          program tkd ran, or libgit2, postgresql)\n"
    "                          and, in a fleet, the node that carried it\n"
    "      --node ID           in a fleet: call node ID, whatever the\n"
    "                          routing would pick (Services need one)\n"
    "      --retry-reads       in a fleet: a read whose node could not be\n"
    "                          reached or stopped answering is tried on the\n"
    "                          next node that can serve it, within the one\n"
    "                          deadline (a write never is)\n"
    "  -D, --emit-defaults     print reply fields that hold default values\n"
    "                          (JSON)\n"
    "      --proto-json        the strict proto3 JSON mapping, both ways:\n"
    "                          bytes as base64 strings, as grpcurl, buf curl\n"
    "                          and other proto3 JSON tools read and write "
    "them\n"
    "  -h, --help              this text\n"
    "  -V, --version           the version\n"
    "\n"
    "Text forms (bytes such as paths and lines are written as they are):\n"
    "  Search/Search, Git/Grep  path:line:column:text, as rg --column\n"
    "  Git/Log                  git log --oneline; -o long: git log\n"
    "  Git/Status               git status --short --branch\n"
    "  Git/Diff                 the patch\n"
    "  Git/RevParse, Commit, Checkout  the object id; WorktreeAdd: PATH OID;\n"
    "                           WorktreeRemove, ConfigSet: nothing\n"
    "  Orders/*                 a line an order: order ID STATE ...\n"
    "Every other method prints JSON under -o text too. Scripts should say\n"
    "-o json (or compact): the text forms are for people and may change.\n"
    "\n"
    "The reply is printed on stdout. A reply that is OK but partial (a limit\n"
    "was reached: Search's limit, Grep's maxMatches) says so on stderr.\n"
    "A status other than OK is printed on stderr as one JSON object:\n"
    "{\"code\":\"DEADLINE_EXCEEDED\",\"reason\":..,\n"
    "\"message\":..,\"stderr\":..,\"partial\":..,\"retryAfterMs\":..,\n"
    "\"elapsedUs\":..,\"fromServer\":..,\"node\":..,\n"
    "\"cancellation\":{\"cause\":..,\"processKilled\":..,\n"
    "\"writeCompleted\":..,\"cleanupMs\":..}}, members that are empty or\n"
    "zero left out (code, message and fromServer never; node is a fleet's).\n"
    "A write whose deadline passed after it had started ran to completion\n"
    "on tkd: tkcall waits for it, exits 0 when it succeeded, and prints its\n"
    "OK status on stderr too, with \"writeCompleted\":true.\n"
    "\n"
    "Ctrl-C cancels the call (tk.v1.Control/Cancel on its connection): a\n"
    "read ends CANCELLED; a write that has started runs to completion on\n"
    "tkd, and tkcall says so and waits for its reply. A second Ctrl-C\n"
    "exits at once.\n"
    "\n"
    "A fleet (tkd --node-id on several machines, sharing one PostgreSQL):\n"
    "tkcall asks the tkd it reaches over tcp:// or tls+tcp:// for the\n"
    "nodes (tkcall Control/ListNodes shows them) and sends each call to\n"
    "one: Git and Search to the node whose root holds the request's path\n"
    "(none: NOT_FOUND NO_NODE_FOR_PATH), Orders and Control to any live\n"
    "node in turn, Services to the node --node names (without it, with\n"
    "several nodes: INVALID_ARGUMENT NODE_REQUIRED). A call whose node\n"
    "stops answering (no answer to a Ping after 5 s of waiting, within 5\n"
    "s) ends UNAVAILABLE: whether it ran is unknown.\n"
    "\n"
    "exit status:\n"
    "  0       OK\n"
    "  1..16   the gRPC code of a non-OK status, sent by tkd or made by the\n"
    "          client: 1 CANCELLED (Ctrl-C), 4 DEADLINE_EXCEEDED (also when\n"
    "          no reply came in time), 5 NOT_FOUND (list with an unknown\n"
    "          service), 14 UNAVAILABLE (tkd not running or unreachable), ...\n"
    "          (a code beyond 16 exits 2, UNKNOWN)\n"
    "  64      usage: bad flags or duration, unreadable -d @FILE, a method\n"
    "          neither tkcall's catalog nor tkd knows (or a name that fits\n"
    "          more than one), an unknown message\n"
    "  65      bad request data: the JSON does not parse or does not match\n"
    "          the request message (the message names the field)\n"
    "  130     interrupted: a second Ctrl-C, or one outside a call\n";

/* Ctrl-C. The signal thread owns SIGINT; the first one during a call fires
 * the call's cancel handle from a thread of its own, so that a second
 * SIGINT is still taken while the Cancel is on the wire. That thread is
 * detached (a second Ctrl-C exits without waiting for it) and posts
 * canceller_done when it no longer touches the handle or the client. */
typedef struct sigctl {
    pthread_t thread;
    bool started;
    tk_cancel *cancel;
    _Atomic bool in_call;
    _Atomic bool quitting;
    bool canceller_started; /* written by the signal thread alone */
    /* The canceller's end, for sig_stop to wait on (a mutex and a
     * condition: macOS has no unnamed semaphores). */
    pthread_mutex_t done_mu;
    pthread_cond_t done_cv;
    bool canceller_done;
} sigctl;

typedef struct tkcall {
    char addr[ADDR_MAX];
    tk_client_opts tls; /* --cacert, --cert, --key over TK_TLS_* */
    uint32_t timeout_ms;
    const char *data;  /* -d, or NULL for {} */
    tkcall_output out; /* -o, --color, -D */
    bool verbose;      /* -v */
    const char *node;  /* --node */
    bool retry_reads;  /* --retry-reads */
    char **args;       /* the words after the options */
    int n_args;
    tk_client *client; /* opened on first use */
    /* Where call_method's reply is decoded (NULL: malloc): one arena a
     * process, freed whole instead of message by message (a dense
     * search's reply is tens of thousands of them). */
    tk_arena *reply_arena;
    sigctl sig;
} tkcall;

/* ---- small helpers ---------------------------------------------------------
 */

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("tkcall: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    return TKCALL_EXIT_USAGE;
}

static void note(const char *text)
{
    fputs(text, stderr);
}

/* "5s", "1m", "1500ms": a duration as --timeout reads it. */
static void format_ms(char *buf, size_t len, uint32_t ms)
{
    if (ms != 0 && ms % 3600000u == 0)
        snprintf(buf, len, "%uh", ms / 3600000u);
    else if (ms != 0 && ms % 60000u == 0)
        snprintf(buf, len, "%um", ms / 60000u);
    else if (ms % 1000u == 0)
        snprintf(buf, len, "%us", ms / 1000u);
    else
        snprintf(buf, len, "%ums", ms);
}

/* "500ms", "30s", "1.5s", "2m", "1h", or a bare number of seconds. 0 is
 * allowed (the method's default); a positive value below 1 ms is 1 ms. */
static int parse_duration(uint32_t *out_ms, const char *s)
{
    size_t i = 0, digits = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return -1;
    const char *unit = s + i;
    double scale = strcmp(unit, "") == 0 || strcmp(unit, "s") == 0 ? 1000
                   : strcmp(unit, "ms") == 0                       ? 1
                   : strcmp(unit, "m") == 0                        ? 60000
                   : strcmp(unit, "h") == 0                        ? 3600000
                                                                   : -1;
    if (scale < 0)
        return -1;
    double ms = strtod(s, NULL) * scale;
    if (!(ms >= 0) || ms > (double)UINT32_MAX)
        return -1;
    *out_ms = (uint32_t)(ms + 0.5);
    if (*out_ms == 0 && ms > 0)
        *out_ms = 1;
    return 0;
}

/* ---- Ctrl-C
 * ------------------------------------------------------------------ */

static void *canceller_main(void *arg)
{
    sigctl *s = arg;
    int outcome = TK_CANCEL_NOT_SENT;
    if (tk_cancel_fire(s->cancel, &outcome) != 0)
        note("tkcall: the cancel did not reach tkd; still waiting for the "
             "reply (Ctrl-C again to exit now)\n");
    else if (outcome == TK_CANCEL_WRITE_CONTINUES)
        note("tkcall: the call is a write that has started: it runs to "
             "completion on tkd, and tkcall waits for its reply (Ctrl-C "
             "again to exit now)\n");
    pthread_mutex_lock(&s->done_mu);
    s->canceller_done = true;
    pthread_cond_signal(&s->done_cv);
    pthread_mutex_unlock(&s->done_mu);
    return NULL;
}

static bool start_canceller(sigctl *s)
{
    pthread_attr_t attr;
    pthread_t tid;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool ok = pthread_create(&tid, &attr, canceller_main, s) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}

static void *signal_main(void *arg)
{
    sigctl *s = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    int count = 0;
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGUSR1) { /* sig_stop's wake-up, or a stray one */
            if (atomic_load(&s->quitting))
                break;
            continue;
        }
        /* Outside a call there is nothing to cancel: stop, as a second
         * Ctrl-C does. The call itself is left to tkd (the connection
         * closes, which cancels a read there). */
        if (++count > 1 || !atomic_load(&s->in_call) || !start_canceller(s)) {
            note("tkcall: interrupted\n");
            _exit(TKCALL_EXIT_INTERRUPTED);
        }
        s->canceller_started = true;
    }
    return NULL;
}

/* Before any thread exists (NNG starts its own when the client opens):
 * every thread inherits the mask, so SIGINT reaches only sigwait. */
static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int sig_start(sigctl *s)
{
    pthread_mutex_init(&s->done_mu, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    s->canceller_done = false;
    if (tk_cancel_new(&s->cancel) != TK_OK)
        return -1;
    atomic_init(&s->in_call, false);
    atomic_init(&s->quitting, false);
    s->started = pthread_create(&s->thread, NULL, signal_main, s) == 0;
    return s->started ? 0 : -1;
}

/* After it the handle and the client are free to go. */
static void sig_stop(sigctl *s)
{
    if (s->started) {
        atomic_store(&s->quitting, true);
        pthread_kill(s->thread, SIGUSR1);
        pthread_join(s->thread, NULL);
    }
    if (s->canceller_started) {
        pthread_mutex_lock(&s->done_mu);
        while (!s->canceller_done)
            pthread_cond_wait(&s->done_cv, &s->done_mu);
        pthread_mutex_unlock(&s->done_mu);
    }
    tk_cancel_free(s->cancel);
    pthread_cond_destroy(&s->done_cv);
    pthread_mutex_destroy(&s->done_mu);
}

/* ---- calls -----------------------------------------------------------------
 */

/* Opens the client on first use; on failure *st says tkd is not running. */
static int open_client(tkcall *t, tk_status *st)
{
    if (t->client != NULL)
        return TK_CODE_OK;
    char err[512] = "";
    int rv = tk_client_open_opts(&t->client, t->addr, &t->tls, err, sizeof err);
    if (rv == TK_OK)
        return TK_CODE_OK;
    /* Nothing listens there: say how to start one. Anything else (a TLS
     * handshake, a certificate file) is said as it is. */
    if (rv == TK_ERR_CONNECT && strstr(err, "is tkd running there?") != NULL)
        return tkcall_make_status(
            st, TK_CODE_UNAVAILABLE,
            "tkd is not running at %s (%s); start it with "
            "`tkd --listen %s` (or `tkd` for the default "
            "address), or point tkcall at a running tkd with "
            "--addr URL or TK_ADDR",
            t->addr, err, t->addr);
    return tkcall_make_status(st, TK_CODE_UNAVAILABLE, "cannot reach tkd: %s",
                              err);
}

static int run_call(tkcall *t, const char *method,
                    const ProtobufCMessage *request,
                    const ProtobufCMessageDescriptor *reply_desc,
                    ProtobufCMessage **reply, tk_status *st)
{
    tk_call_opts opts = { .timeout_ms = t->timeout_ms,
                          .cancel = t->sig.cancel,
                          .node = t->node,
                          .retry_reads = t->retry_reads,
                          .reply_allocator =
                              tk_arena_allocator(t->reply_arena) };
    int code = open_client(t, st);
    if (code == TK_CODE_OK) {
        atomic_store(&t->sig.in_call, true);
        code =
            tk_call(t->client, method, request, reply_desc, reply, &opts, st);
        atomic_store(&t->sig.in_call, false);
    }
    if (t->verbose) {
        char deadline[32];
        format_ms(deadline, sizeof deadline, t->timeout_ms);
        tkcall_verbose v = { .method = method, .deadline = deadline };
        tkcall_print_verbose(&v, st);
    }
    return code;
}

static int list_methods(tkcall *t, const char *service,
                        Tk__V1__ListMethodsReply **out, tk_status *st)
{
    Tk__V1__ListMethodsRequest req = TK__V1__LIST_METHODS_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.service = (char *)service;
    int code = run_call(t, "tk.v1.Control/ListMethods", &req.base,
                        &tk__v1__list_methods_reply__descriptor, &reply, st);
    *out = (Tk__V1__ListMethodsReply *)reply;
    return code;
}

/* What tkd says of method: *info is NULL when it does not serve it. */
static int fetch_method_info(tkcall *t, const char *method,
                             Tk__V1__ListMethodsReply **list,
                             const Tk__V1__MethodInfo **info, tk_status *st)
{
    *list = NULL;
    *info = NULL;
    const char *slash = strchr(method, '/');
    char service[256];
    snprintf(service, sizeof service, "%.*s", (int)(slash - method), method);
    int code = list_methods(t, service, list, st);
    if (code != TK_CODE_OK && code != TK_CODE_NOT_FOUND)
        return code;
    tk_status_clear(st); /* NOT_FOUND: no such service */
    if (code == TK_CODE_NOT_FOUND)
        return TK_CODE_OK;
    for (size_t i = 0; i < (*list)->n_methods; i++)
        if (strcmp((*list)->methods[i]->name, method) == 0)
            *info = (*list)->methods[i];
    return TK_CODE_OK;
}

static int unknown_method(const tkcall *t, const char *method)
{
    return usage_error("unknown method \"%s\": neither tkcall's catalog nor "
                       "tkd at %s knows it; `tkcall list` shows the methods "
                       "tkd serves",
                       method, t->addr);
}

/* The request and reply types of method: from the catalog compiled in, or
 * else from tkd's ListMethods (a method tkd added, with known types). */
static int resolve_method(tkcall *t, const char *method,
                          const ProtobufCMessageDescriptor **req,
                          const ProtobufCMessageDescriptor **rep)
{
    const tk_method_desc *m = tk_catalog_find_method(method);
    if (m != NULL) {
        *req = m->request;
        *rep = m->reply;
        return TKCALL_EXIT_OK;
    }
    Tk__V1__ListMethodsReply *list = NULL;
    const Tk__V1__MethodInfo *info = NULL;
    tk_status st = { 0 };
    int rv = TKCALL_EXIT_OK;
    if (fetch_method_info(t, method, &list, &info, &st) != TK_CODE_OK) {
        rv = tkcall_report(&st);
    } else if (info == NULL) {
        rv = unknown_method(t, method);
    } else {
        *req = tk_catalog_find_message(info->request_type);
        *rep = tk_catalog_find_message(info->reply_type);
        if (*req == NULL || *rep == NULL)
            rv = usage_error("tkd serves %s (%s -> %s), but tkcall's catalog "
                             "lacks %s; use a tkcall built with its proto",
                             method, info->request_type, info->reply_type,
                             *req == NULL ? info->request_type
                                          : info->reply_type);
    }
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    return rv;
}

/* ---- names as people type them ---------------------------------------------
 */

/* What matched nothing, or more than one name, said as a usage error. */
static int no_match(const tkcall *t, const char *what, const char *typed,
                    const names_result *r)
{
    if (r->verdict == NAMES_AMBIGUOUS)
        return usage_error("\"%s\" could be %s, %s%s: write more of the "
                           "name",
                           typed, r->name, r->other,
                           r->n_matches > 2 ? " and more" : "");
    if (r->name != NULL)
        return usage_error("unknown %s \"%s\"; did you mean %s? (`tkcall "
                           "list` shows the methods tkd serves)",
                           what, typed, r->name);
    return usage_error("unknown %s \"%s\": neither tkcall's catalog nor tkd "
                       "at %s knows it; `tkcall list` shows the methods tkd "
                       "serves",
                       what, typed, t->addr);
}

static int out_of_memory(void)
{
    tk_status st = { 0 };
    tkcall_make_status(&st, TK_CODE_INTERNAL, "out of memory");
    return tkcall_report(&st);
}

/* The commands of dispatch, for a hint when a word is neither. */
static const char *const command_names[] = { "list", "describe" };

/* The method typed names, in full in *out (to free): the catalog's, else
 * one tkd serves. A name with a '/' that tkd cannot be asked about goes
 * on as typed (the call then says why tkd did not answer). */
static int find_method(tkcall *t, const char *typed, char **out)
{
    namelist l = { 0 };
    names_result r;
    Tk__V1__ListMethodsReply *list = NULL;
    tk_status st = { 0 };
    int rv = TKCALL_EXIT_OK;
    if (!names_add_catalog(&l, NAMES_METHODS)) {
        rv = out_of_memory();
        goto done;
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    if (r.verdict == NAMES_NONE) {
        if (list_methods(t, "", &list, &st) != TK_CODE_OK) {
            if (strchr(typed, '/') != NULL) {
                r = (names_result){ NAMES_FOUND, typed, NULL, 1 };
            } else if (r.name == NULL) { /* nothing to say but why */
                rv = tkcall_report(&st);
                goto done;
            }
        } else if (!names_add_served(&l, list, NAMES_METHODS)) {
            rv = out_of_memory();
            goto done;
        } else {
            names_resolve(&r, typed, (const char *const *)l.v, l.n);
        }
    }
    names_result cmd;
    names_resolve(&cmd, typed, command_names, 2);
    if (r.verdict == NAMES_NONE && r.name == NULL && cmd.name != NULL)
        rv = usage_error("unknown command \"%s\"; did you mean %s?", typed,
                         cmd.name); /* "lsit" */
    else if (r.verdict != NAMES_FOUND)
        rv = no_match(t, "method", typed, &r);
    else if ((*out = strdup(r.name)) == NULL)
        rv = out_of_memory();
done:
    tk_status_clear(&st);
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    names_free(&l);
    return rv;
}

static int read_all(FILE *f, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f) || n > MAX_REQUEST_BYTES) {
            free(buf);
            return ferror(f) ? -EIO : -EFBIG;
        }
        if (feof(f)) {
            buf[n] = '\0';
            *out = buf;
            *len = n;
            return 0;
        }
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    return -ENOMEM;
}

/* -d: literal JSON, @file or @- (stdin); none means {}. */
static int read_request(const tkcall *t, char **out, size_t *len)
{
    const char *d = t->data != NULL ? t->data : "{}";
    if (d[0] != '@') {
        *out = strdup(d);
        *len = strlen(d);
        return *out != NULL ? TKCALL_EXIT_OK : usage_error("out of memory");
    }
    bool is_stdin = strcmp(d, "@-") == 0;
    FILE *f = is_stdin ? stdin : fopen(d + 1, "rb");
    char ebuf[128];
    if (f == NULL)
        return usage_error("cannot read the request from %s: %s", d + 1,
                           tkc_strerror(errno, ebuf, sizeof ebuf));
    int rv = read_all(f, out, len);
    if (!is_stdin)
        (void)fclose(f); /* read only: nothing is lost if it fails */
    if (rv != 0)
        return usage_error("cannot read the request from %s: %s",
                           is_stdin ? "standard input" : d + 1,
                           rv == -EFBIG ? "larger than 64 MiB"
                                        : tkc_strerror(-rv, ebuf, sizeof ebuf));
    return TKCALL_EXIT_OK;
}

static int call_method(tkcall *t, const char *method,
                       const ProtobufCMessageDescriptor *req_desc,
                       const ProtobufCMessageDescriptor *rep_desc,
                       const char *text, size_t len)
{
    ProtobufCMessage *req = NULL, *reply = NULL;
    char err[512];
    if (tk_json_decode_ex(&req, req_desc, text, len, t->out.json_flags, err,
                          sizeof err) != 0) {
        // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): resolve_method says OK only with both descriptors set; the analyzer does not follow usage_error (variadic) to see that it never returns OK
        const char *type = req_desc->name;
        fprintf(stderr, "tkcall: the request is not a valid %s: %s\n", type,
                err);
        return TKCALL_EXIT_DATA;
    }
    char cwd[4096];
    if (paths_make_absolute(req, getcwd(cwd, sizeof cwd)) != 0) {
        protobuf_c_message_free_unpacked(req, NULL);
        return usage_error("cannot make the request's relative paths "
                           "absolute: the working directory is unknown or "
                           "memory ran out; give absolute paths");
    }
    tk_status st = { 0 };
    int rv;
    struct timespec t0, t1;
    /* Out of memory: the reply is malloc'd, as without an arena. */
    if (tk_arena_new(&t->reply_arena, 0) != TK_OK)
        t->reply_arena = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (run_call(t, method, req, rep_desc, &reply, &st) == TK_CODE_OK) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long long ms = (t1.tv_sec - t0.tv_sec) * 1000LL +
                       (t1.tv_nsec - t0.tv_nsec) / 1000000;
        /* The deadline passed while the write ran: say it completed. */
        if (st.write_completed && t->timeout_ms != 0 && ms > t->timeout_ms)
            tkcall_print_status(&st);
        rv = tkcall_print_reply(&t->out, method, req, reply);
        tkcall_note_partial(method, reply, &st);
        tk_status_clear(&st);
    } else {
        rv = tkcall_report(&st);
    }
    protobuf_c_message_free_unpacked(req, NULL);
    if (reply != NULL && t->reply_arena == NULL)
        protobuf_c_message_free_unpacked(reply, NULL);
    tk_arena_free(t->reply_arena); /* the reply with it */
    t->reply_arena = NULL;
    return rv;
}

static int cmd_call(tkcall *t)
{
    char *method = NULL;
    const ProtobufCMessageDescriptor *req = NULL, *rep = NULL;
    char *text = NULL;
    size_t len = 0;
    if (t->n_args > 1)
        return usage_error("unexpected \"%s\" after the method (the request "
                           "goes in -d)",
                           t->args[1]);
    int rv = read_request(t, &text, &len);
    if (rv == TKCALL_EXIT_OK)
        rv = find_method(t, t->args[0], &method);
    if (rv == TKCALL_EXIT_OK && method != NULL)
        rv = resolve_method(t, method, &req, &rep);
    if (rv == TKCALL_EXIT_OK)
        rv = call_method(t, method, req, rep, text, len);
    free(method);
    free(text);
    return rv;
}

/* ---- list ------------------------------------------------------------------
 */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The methods of list (of service only, unless NULL), sorted. */
static int print_methods(const Tk__V1__ListMethodsReply *list,
                         const char *service)
{
    const char **names = calloc(list->n_methods + 1, sizeof *names);
    size_t n = 0, slen = service != NULL ? strlen(service) : 0;
    if (names == NULL)
        return out_of_memory();
    for (size_t i = 0; i < list->n_methods; i++) {
        const char *name = list->methods[i]->name;
        if (service == NULL ||
            (strncmp(name, service, slen) == 0 && name[slen] == '/'))
            names[n++] = name;
    }
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++)
        printf("%s\n", names[i]);
    free(names);
    return TKCALL_EXIT_OK;
}

/* list SERVICE: typed as people type it ("Git", "git", "tk.v1.Git") among
 * the services of the catalog and of tkd; else tkd says what it makes of
 * the name (NOT_FOUND), with the closest service as a hint. */
static int list_service(tkcall *t, const Tk__V1__ListMethodsReply *all,
                        const char *typed)
{
    namelist l = { 0 };
    names_result r;
    if (!names_add_catalog(&l, NAMES_SERVICES) ||
        !names_add_served(&l, all, NAMES_SERVICES)) {
        names_free(&l);
        return out_of_memory();
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    int rv;
    if (r.verdict == NAMES_FOUND) {
        rv = print_methods(all, r.name);
    } else if (r.verdict == NAMES_AMBIGUOUS) {
        rv = no_match(t, "service", typed, &r);
    } else {
        Tk__V1__ListMethodsReply *list = NULL;
        tk_status st = { 0 };
        if (list_methods(t, typed, &list, &st) == TK_CODE_OK) {
            rv = print_methods(list, NULL);
        } else {
            if (r.name != NULL)
                fprintf(stderr, "tkcall: did you mean %s?\n", r.name);
            rv = tkcall_report(&st);
        }
        tk_status_clear(&st);
        if (list != NULL)
            protobuf_c_message_free_unpacked(&list->base, NULL);
    }
    names_free(&l);
    return rv;
}

static int cmd_list(tkcall *t)
{
    if (t->n_args > 2)
        return usage_error("list takes at most one SERVICE");
    Tk__V1__ListMethodsReply *list = NULL;
    tk_status st = { 0 };
    if (list_methods(t, "", &list, &st) != TK_CODE_OK)
        return tkcall_report(&st);
    tk_status_clear(&st);
    int rv = t->n_args == 2 ? list_service(t, list, t->args[1])
                            : print_methods(list, NULL);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return rv;
}

/* ---- describe --------------------------------------------------------------
 */

/* "16 MiB": max_bytes as people read it. */
static void format_bytes(char *buf, size_t len, uint32_t n)
{
    if (n % (1u << 20) == 0)
        snprintf(buf, len, "%u MiB", (unsigned)(n >> 20));
    else if (n % (1u << 10) == 0)
        snprintf(buf, len, "%u KiB", (unsigned)(n >> 10));
    else
        snprintf(buf, len, "%u bytes", (unsigned)n);
}

/* The ceiling of the reply's list, as tkd serves it, with the limit's
 * name as JSON spells it (what a tkcall user types). */
static void print_list(const Tk__V1__ListSpec *l)
{
    printf("list      %s: ", l->field);
    if (l->limit_field[0] != '\0') {
        char name[64];
        tk_json_field_name(name, sizeof name, l->limit_field);
        printf("%u by default (%s 0), %u at most (a larger %s is served "
               "as %u)",
               (unsigned)l->default_items, name, (unsigned)l->max_items, name,
               (unsigned)l->max_items);
    } else {
        printf("%u at most", (unsigned)l->max_items);
    }
    if (l->max_bytes != 0) {
        char bytes[32];
        format_bytes(bytes, sizeof bytes, l->max_bytes);
        printf(", and %s of their paths and text", bytes);
    }
    printf("; a reply cut there is partial\n");
}

static void print_method_info(const Tk__V1__MethodInfo *info)
{
    char dflt[32], ceiling[32];
    format_ms(dflt, sizeof dflt, info->default_timeout_ms);
    format_ms(ceiling, sizeof ceiling, info->ceiling_ms);
    const ProtobufCEnumValue *kind = protobuf_c_enum_descriptor_get_value(
        &tk__v1__method_info__kind__descriptor, (int)info->kind);
    printf("kind      %s\n", kind != NULL ? kind->name : "?");
    printf("timeout   %s by default (timeout_ms 0), %s at most%s\n", dflt,
           ceiling,
           info->kind == TK__V1__METHOD_INFO__KIND__WRITE
               ? " (a write's own timeout)"
               : "");
    if (info->list != NULL)
        print_list(info->list);
}

static void print_schema(const char *type, int json_flags)
{
    const ProtobufCMessageDescriptor *d = tk_catalog_find_message(type);
    printf("\n");
    if (d != NULL)
        describe_message(stdout, d, json_flags);
    else
        printf("(tkcall's catalog has no schema for %s)\n", type);
}

/* Prints what is known of a method: its types from the catalog or tkd, its
 * kind and timeouts when tkd answers, its comment, then the request's and
 * the reply's schemas. */
static int describe_method(tkcall *t, const char *name)
{
    const tk_method_desc *local = tk_catalog_find_method(name);
    Tk__V1__ListMethodsReply *list = NULL;
    const Tk__V1__MethodInfo *info = NULL;
    tk_status st = { 0 };
    int code = fetch_method_info(t, name, &list, &info, &st);
    int rv = TKCALL_EXIT_OK;
    if (local == NULL && code != TK_CODE_OK) {
        rv = tkcall_report(&st);
    } else if (local == NULL && info == NULL) {
        rv = unknown_method(t, name);
    } else {
        const char *req =
            local != NULL ? local->request->name : info->request_type;
        printf("method    %s\n", name);
        printf("request   %s\n", req);
        printf("reply     %s\n",
               local != NULL ? local->reply->name : info->reply_type);
        if (info != NULL)
            print_method_info(info);
        else
            printf("kind      unknown: %s\n",
                   code != TK_CODE_OK && st.message != NULL
                       ? st.message
                       : "tkd does not serve this method");
        if (local != NULL) {
            printf("\n");
            describe_comment(stdout, name);
        }
        print_schema(req, t->out.json_flags);
        print_schema(local != NULL ? local->reply->name : info->reply_type,
                     t->out.json_flags);
    }
    tk_status_clear(&st);
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    return rv;
}

static int cmd_describe(tkcall *t)
{
    if (t->n_args != 2)
        return usage_error("describe takes one name: a service, a method, a "
                           "message or an enum");
    const char *typed = t->args[1];
    namelist l = { 0 };
    names_result r;
    if (!names_add_catalog(&l, NAMES_METHODS | NAMES_SERVICES | NAMES_MESSAGES |
                                   NAMES_ENUMS)) {
        names_free(&l);
        return out_of_memory();
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    int rv = TKCALL_EXIT_OK;
    const ProtobufCMessageDescriptor *m = tk_catalog_find_message(r.name);
    const ProtobufCEnumDescriptor *e = tk_catalog_find_enum(r.name);
    if (r.verdict == NAMES_NONE && strchr(typed, '/') != NULL)
        rv = describe_method(t, typed[0] == '.' ? typed + 1 : typed);
    else if (r.verdict != NAMES_FOUND)
        rv = no_match(t, "name", typed, &r);
    else if (strchr(r.name, '/') != NULL)
        rv = describe_method(t, r.name);
    else if (m != NULL)
        describe_message(stdout, m, t->out.json_flags);
    else if (e != NULL)
        describe_enum(stdout, e);
    else
        describe_service(stdout, r.name);
    names_free(&l);
    return rv;
}

/* ---- the command line ------------------------------------------------------
 */

typedef struct command {
    const char *name;
    int (*run)(tkcall *t);
} command;

static const command commands[] = {
    { "list", cmd_list },
    { "describe", cmd_describe },
};

static int dispatch(tkcall *t)
{
    if (t->n_args == 0)
        return usage_error("a METHOD or a command (list, describe) is "
                           "needed; see tkcall --help");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(t->args[0], commands[i].name) == 0)
            return commands[i].run(t);
    return cmd_call(t);
}

/* A bare socket path ("/run/user/1000/tk/tkd.sock", "build/run/tkd.sock")
 * means ipc:// that path, made absolute. -1: too long. */
static int ipc_of_path(char addr[ADDR_MAX])
{
    if (strstr(addr, "://") != NULL || addr[0] == '\0')
        return 0;
    char path[ADDR_MAX], cwd[ADDR_MAX];
    int n;
    if (addr[0] == '/')
        n = snprintf(path, sizeof path, "ipc://%s", addr);
    else if (getcwd(cwd, sizeof cwd) != NULL)
        n = snprintf(path, sizeof path, "ipc://%s/%s", cwd, addr);
    else
        return 0; /* left as it is: opening it says what is wrong */
    if (n < 0 || (size_t)n >= sizeof path)
        return -1;
    memcpy(addr, path, (size_t)n + 1);
    return 0;
}

enum {
    OPT_CACERT = 1000,
    OPT_CERT,
    OPT_KEY,
    OPT_COLOR,
    OPT_PROTO_JSON,
    OPT_NODE,
    OPT_RETRY_READS
};

static const char *const format_names[] = {
    [TKCALL_OUT_TEXT] = "text",
    [TKCALL_OUT_LONG] = "long",
    [TKCALL_OUT_JSON] = "json",
    [TKCALL_OUT_COMPACT] = "compact",
};

static int parse_format(tkcall *t, const char *name)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcmp(name, format_names[i]) == 0) {
            t->out.format = (tkcall_format)i;
            return -1;
        }
    return usage_error("-o takes text, long, json or compact, not \"%s\"",
                       name);
}

/* --color: auto is colour only on a terminal, and never with NO_COLOR set
 * to anything but "" (no-color.org) or TERM=dumb. */
static int parse_color(tkcall *t, const char *when)
{
    const char *no_color = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (strcmp(when, "always") == 0)
        t->out.color = true;
    else if (strcmp(when, "never") == 0)
        t->out.color = false;
    else if (strcmp(when, "auto") == 0)
        t->out.color = isatty(STDOUT_FILENO) &&
                       (no_color == NULL || no_color[0] == '\0') &&
                       (term == NULL || strcmp(term, "dumb") != 0);
    else
        return usage_error("--color takes auto, always or never, not \"%s\"",
                           when);
    return -1;
}

/* -o, --color (resolved once all flags are read), -v and -D. Returns -1
 * to go on, or the status to exit with now. */
static int output_option(tkcall *t, int c, const char *arg, const char **color)
{
    switch (c) {
    case 'o':
        return parse_format(t, arg);
    case OPT_COLOR:
        *color = arg;
        return -1;
    case 'v':
        t->verbose = true;
        return -1;
    default: /* 'D' */
        t->out.json_flags |= TK_JSON_EMIT_DEFAULTS;
        return -1;
    }
}

/* Returns -1 to go on, or the status to exit with now. */
static int parse_args(tkcall *t, int argc, char **argv)
{
    t->tls = (tk_client_opts){ .tls_ca = getenv("TK_TLS_CA"),
                               .tls_cert = getenv("TK_TLS_CERT"),
                               .tls_key = getenv("TK_TLS_KEY") };
    static const struct option longopts[] = {
        { "addr", required_argument, NULL, 'a' },
        { "cacert", required_argument, NULL, OPT_CACERT },
        { "cert", required_argument, NULL, OPT_CERT },
        { "key", required_argument, NULL, OPT_KEY },
        { "timeout", required_argument, NULL, 't' },
        { "data", required_argument, NULL, 'd' },
        { "emit-defaults", no_argument, NULL, 'D' },
        { "proto-json", no_argument, NULL, OPT_PROTO_JSON },
        { "output", required_argument, NULL, 'o' },
        { "color", required_argument, NULL, OPT_COLOR },
        { "verbose", no_argument, NULL, 'v' },
        { "node", required_argument, NULL, OPT_NODE },
        { "retry-reads", no_argument, NULL, OPT_RETRY_READS },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *addr = NULL, *color = "auto";
    int c, rv;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): argv is parsed in main, before any thread starts
    while ((c = getopt_long(argc, argv, "a:t:d:Do:vhV", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'a':
            addr = optarg;
            break;
        case OPT_CACERT:
            t->tls.tls_ca = optarg;
            break;
        case OPT_CERT:
            t->tls.tls_cert = optarg;
            break;
        case OPT_KEY:
            t->tls.tls_key = optarg;
            break;
        case 't':
            if (parse_duration(&t->timeout_ms, optarg) != 0)
                return usage_error("--timeout takes a duration such as "
                                   "500ms, 30s, 1.5s, 2m, 1h or a number of "
                                   "seconds, not \"%s\"",
                                   optarg);
            break;
        case 'd':
            t->data = optarg;
            break;
        case 'o':
        case OPT_COLOR:
        case 'v':
        case 'D':
            if ((rv = output_option(t, c, optarg, &color)) >= 0)
                return rv;
            break;
        case OPT_PROTO_JSON:
            t->out.json_flags &= ~TK_JSON_BYTES_TEXT;
            break;
        case OPT_NODE:
            t->node = optarg;
            break;
        case OPT_RETRY_READS:
            t->retry_reads = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return TKCALL_EXIT_OK;
        case 'V':
            printf("tkcall %s\n", TK_VERSION);
            return TKCALL_EXIT_OK;
        default: /* getopt said what */
            return usage_error("see tkcall --help");
        }
    }
    int n = addr != NULL
                ? snprintf(t->addr, sizeof t->addr, "%s", addr)
                : (tk_default_address(t->addr, sizeof t->addr) == 0 ? 0 : -1);
    if (n < 0 || (size_t)n >= sizeof t->addr || ipc_of_path(t->addr) != 0)
        return usage_error("the address is too long");
    if ((rv = parse_color(t, color)) >= 0)
        return rv;
    t->args = argv + optind;
    t->n_args = argc - optind;
    return -1;
}

int main(int argc, char **argv)
{
    block_signals();
    tkcall t = { .timeout_ms = TKCALL_DEFAULT_TIMEOUT_MS,
                 .out = { .format = TKCALL_OUT_TEXT,
                          .json_flags = TK_JSON_BYTES_TEXT } };
    int rv = parse_args(&t, argc, argv);
    if (rv >= 0)
        return rv;
    if (sig_start(&t.sig) != 0) {
        fprintf(stderr, "tkcall: cannot start the signal thread\n");
        sig_stop(&t.sig);
        return TK_CODE_INTERNAL;
    }
    rv = dispatch(&t);
    sig_stop(&t.sig);
    tk_client_close(t.client);
    return rv;
}
