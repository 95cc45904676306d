/* SPDX-License-Identifier: MIT */
/* tkcall's files among themselves, each above those it calls (tests/arch,
 * rule circle): tkcall.c (main, the commands call and list) over args.c
 * (the command line), describe.c (the command describe, and schemas
 * printed), names.c (the names people type) and interrupt.c (Ctrl-C);
 * those over calls.c (the client, a call, the methods tkd serves); all
 * over output.c (what a call prints) over forms.c (which method has which
 * text form) over render.c (the forms of Search and Git, painting), and
 * usage.c (--help, usage errors) and paths.c (the paths of a request).
 * Internal to client/tkcall/. */
#ifndef TK_TKCALL_INT_H
#define TK_TKCALL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include <tk/client.h>

#include "tk/v1/control.pb-c.h"

/* A status tkcall makes itself, like those libtkclient makes: from_server
 * false, reason "". Returns code. */
int tkcall_make_status(tk_status *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The exit status of a non-OK code: the code itself, 2 (UNKNOWN) beyond
 * 16. */
int tkcall_exit_status_of(int code);

/* How statuses are printed from now on: for a person (one item a line)
 * when stderr is a terminal and json_asked is false (no -o json or
 * compact), else as one line of JSON. Before it is called: JSON. */
void tkcall_status_for_people(bool json_asked);

/* Prints a non-OK status on stderr (as tkcall_status_for_people says) and
 * frees it; returns the exit status. */
int tkcall_report(tk_status *st);

/* Prints st's status on stderr (as tkcall_report), without ending
 * the call: for an OK reply that has more to say (a WRITE that completed
 * after its deadline). */
void tkcall_print_status(const tk_status *st);

/* -o: how a reply is printed. */
typedef enum tkcall_format {
    TKCALL_OUT_TEXT,    /* the method's text form, else pretty JSON */
    TKCALL_OUT_LONG,    /* as TEXT, with Log in git log's long form */
    TKCALL_OUT_JSON,    /* pretty JSON */
    TKCALL_OUT_COMPACT, /* JSON on one line */
} tkcall_format;

typedef struct tkcall_output {
    tkcall_format format;
    bool color;     /* the text forms' colours (--color) */
    int json_flags; /* the codec's, both ways, but for PRETTY (-D, --proto-json)
                     */
} tkcall_output;

/* Prints method's OK reply to request on stdout as o says; returns the
 * exit status. */
int tkcall_print_reply(const tkcall_output *o, const char *method,
                       const ProtobufCMessage *request,
                       const ProtobufCMessage *reply);

/* An OK reply that is partial (st->partial) says so on stderr: how many
 * results it holds and the request field that bounds them. reply may be
 * NULL. */
void tkcall_note_partial(const char *method, const ProtobufCMessage *reply,
                         const tk_status *st);

/* -v: what is known of a call besides its reply. */
typedef struct tkcall_verbose {
    const char *method;
    const char *deadline; /* as sent: "30s", "0s" (the method's default) */
} tkcall_verbose;

/* -v: the call's status, tkd's elapsed time, the tool that ran (the
 * status's) and the deadline sent, on stderr, for every call, OK or not. */
void tkcall_print_verbose(const tkcall_verbose *v, const tk_status *st);

/* ---- forms.c: which method has which text form ------------------------ */

typedef struct tkcall_text {
    FILE *out;
    bool color;     /* SGR colours, as rg and git */
    bool long_form; /* -o long: Log as git log, not --oneline */
} tkcall_text;

/* Prints reply, the reply of method to request, in the method's text form
 * and returns true; returns false, printing nothing, when the method has
 * none (or the reply is not of the type its form expects). */
bool tkcall_text_print(const tkcall_text *t, const char *method,
                       const ProtobufCMessage *request,
                       const ProtobufCMessage *reply);

/* The JSON name of the request field that bounds method's results
 * ("maxMatches"), or NULL. */
const char *tkcall_limit_field(const char *method);

/* ---- render.c's forms and painting, for forms.c ----------------------- */

/* SGR colours, as rg and git use them by default. */
#define SGR_PATH "35"    /* magenta: rg's paths */
#define SGR_NUMBER "32"  /* green: rg's line and column numbers */
#define SGR_MATCH "1;31" /* bold red: rg's matches */
#define SGR_OID "33"     /* yellow: git log's commit ids */
#define SGR_META "1"     /* bold: a diff's headers */
#define SGR_FRAG "36"    /* cyan: a diff's @@ lines */
#define SGR_NEW "32"     /* green: added lines, staged changes, a branch */
#define SGR_OLD "31"     /* red: deleted lines, unstaged, an upstream */

typedef void (*render_fn)(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep);

void tkcall__puts_raw(const tkcall_text *t, const char *s);
void tkcall__paint_s(const tkcall_text *t, const char *sgr, const char *s);
void tkcall__render_search(const tkcall_text *t, const ProtobufCMessage *req,
                           const ProtobufCMessage *rep);
void tkcall__render_grep(const tkcall_text *t, const ProtobufCMessage *req,
                         const ProtobufCMessage *rep);
void tkcall__render_log(const tkcall_text *t, const ProtobufCMessage *req,
                        const ProtobufCMessage *rep);
void tkcall__render_status(const tkcall_text *t, const ProtobufCMessage *req,
                           const ProtobufCMessage *rep);
void tkcall__render_diff(const tkcall_text *t, const ProtobufCMessage *req,
                         const ProtobufCMessage *rep);
void tkcall__render_revparse(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep);
void tkcall__render_commit(const tkcall_text *t, const ProtobufCMessage *req,
                           const ProtobufCMessage *rep);
void tkcall__render_checkout(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep);
void tkcall__render_worktree(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep);
void tkcall__render_config_get(const tkcall_text *t,
                               const ProtobufCMessage *req,
                               const ProtobufCMessage *rep);
void tkcall__render_nothing(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep);

/* describe.c: a message or an enum as a .proto would declare it; a bytes
 * field says how it is typed under json_flags (TK_JSON_BYTES_TEXT). */
void describe_message(FILE *out, const ProtobufCMessageDescriptor *m,
                      int json_flags);
void describe_enum(FILE *out, const ProtobufCEnumDescriptor *e);
/* A service of the catalog: its methods, each with its comment. */
void describe_service(FILE *out, const char *service);
/* The comment proto/ has for full_name, as "// " lines; nothing if none. */
void describe_comment(FILE *out, const char *full_name);

/* names.c: typed matched against full names (no two alike), as
 * "tk.v1.Control/Ping", grpcurl's "tk.v1.Control.Ping", "Control/Ping" or
 * any other tail of whole parts ("ping"), without case. */
typedef enum names_verdict {
    NAMES_FOUND,     /* name is the one match */
    NAMES_AMBIGUOUS, /* name and other are two of n_matches */
    NAMES_NONE,      /* name is the closest one, or NULL: none is close */
} names_verdict;

typedef struct names_result {
    names_verdict verdict;
    const char *name;
    const char *other;
    size_t n_matches;
} names_result;

void names_resolve(names_result *out, const char *typed,
                   const char *const *names, size_t n);

/* Full names to resolve against, each once, copied. */
typedef struct namelist {
    char **v;
    size_t n, cap;
} namelist;

enum {
    NAMES_METHODS = 1,
    NAMES_SERVICES = 2,
    NAMES_MESSAGES = 4,
    NAMES_ENUMS = 8,
};

/* Add the catalog's, or those tkd serves (methods and services only);
 * false: out of memory. */
bool names_add_catalog(namelist *l, unsigned what);
bool names_add_served(namelist *l, const Tk__V1__ListMethodsReply *list,
                      unsigned what);
void names_fini(namelist *l);

/* paths.c: every path field of m (option (tk.v1.path)), in the messages
 * inside it too, that holds a relative path, made absolute against cwd.
 * 0, or -1: out of memory, or a relative path and cwd NULL (unknown). */
int paths_make_absolute(ProtobufCMessage *m, const char *cwd);

/* ---- tkcall.c's state, shared by its files ----------------------------- */

#define ADDR_MAX 1024

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

/* usage.c: --help's text; a usage error on stderr (returns 64); a note
 * on stderr; durations as tkcall writes and reads them. */
extern const char tkcall__usage_text[];
int tkcall__usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void tkcall__note(const char *text);
/* arg as grpcurl means it (-H, -plaintext, -max-time, -format ...), when
 * tkcall has no option of that name: a usage error that says tkcall's
 * option for it, or why tk has none (returns 64); else -1. */
int tkcall__foreign_option(const char *arg);
void tkcall__format_ms(char *buf, size_t len, uint32_t ms);
int tkcall__parse_duration(uint32_t *out_ms, const char *s);
int tkcall__out_of_memory(void);

/* interrupt.c: Ctrl-C (see sigctl). */
void tkcall__block_signals(void);
int tkcall__sig_start(sigctl *s);
void tkcall__sig_stop(sigctl *s);

/* calls.c: one call, the methods tkd serves, a method's request and reply
 * types. */
int tkcall__run_call(tkcall *t, const char *method,
                     const ProtobufCMessage *request,
                     const ProtobufCMessageDescriptor *reply_desc,
                     ProtobufCMessage **reply, tk_status *st);
int tkcall__list_methods(tkcall *t, const char *service,
                         Tk__V1__ListMethodsReply **out, tk_status *st);
int tkcall__fetch_method_info(tkcall *t, const char *method,
                              Tk__V1__ListMethodsReply **list,
                              const Tk__V1__MethodInfo **info, tk_status *st);
int tkcall__unknown_method(const tkcall *t, const char *method);
int tkcall__resolve_method(tkcall *t, const char *method,
                           const ProtobufCMessageDescriptor **req,
                           const ProtobufCMessageDescriptor **rep);

/* names.c: a name that matched nothing, or more than one, as a usage
 * error; the method typed names, in full in *out (to free). */
int tkcall__no_match(const tkcall *t, const char *what, const char *typed,
                     const names_result *r);
int tkcall__find_method(tkcall *t, const char *typed, char **out);

/* describe.c: tkcall describe NAME. */
int tkcall__cmd_describe(tkcall *t);

/* args.c: the command line into t; -1 to go on, else the exit status
 * (--help, --version, a usage error). */
int tkcall__parse_args(tkcall *t, int argc, char **argv);

#endif /* TK_TKCALL_INT_H */
