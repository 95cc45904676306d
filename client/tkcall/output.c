/* SPDX-License-Identifier: MIT */
/* tkcall's output: replies on stdout, and the statuses other than OK on
 * stderr: for a person on a terminal, else as one line of JSON (see
 * tkcall_int.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tk/client.h>
#include <tk/json.h>

#include "tkcall.h"
#include "tkcall_int.h"

int tkcall_make_status(tk_status *st, int code, const char *fmt, ...)
{
    tk_status_clear(st);
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&st->message, fmt, ap) < 0)
        st->message = NULL;
    va_end(ap);
    st->code = code;
    st->reason = strdup("");
    st->tool = strdup("");
    st->from_server = false;
    return code;
}

int tkcall_exit_status_of(int code)
{
    return code >= 1 && code <= 16 ? code : TK_CODE_UNKNOWN;
}

static void put_member(FILE *f, bool *first, const char *key, const char *raw)
{
    fprintf(f, "%s\"%s\":%s", *first ? "" : ",", key, raw);
    *first = false;
}

static void put_text(FILE *f, bool *first, const char *key, const void *s,
                     size_t n)
{
    char *q = tk_json_string(s, n);
    put_member(f, first, key, q != NULL ? q : "\"\"");
    free(q);
}

static void put_uint(FILE *f, bool *first, const char *key, uint64_t v)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    put_member(f, first, key, num);
}

static void put_cancellation(FILE *f, bool *first, const tk_status *st)
{
    if (st->cause == TK_CAUSE_NONE && !st->process_killed &&
        !st->write_completed && st->cleanup_ms == 0)
        return;
    bool inner = true;
    put_member(f, first, "cancellation", "{");
    if (st->cause != TK_CAUSE_NONE)
        put_text(f, &inner, "cause", tk_cause_name(st->cause),
                 strlen(tk_cause_name(st->cause)));
    if (st->process_killed)
        put_member(f, &inner, "processKilled", "true");
    if (st->write_completed)
        put_member(f, &inner, "writeCompleted", "true");
    if (st->cleanup_ms != 0)
        put_uint(f, &inner, "cleanupMs", st->cleanup_ms);
    fputc('}', f);
}

/* Statuses as text for a person (tkcall_status_for_people). */
static bool status_as_text;

void tkcall_status_for_people(bool json_asked)
{
    status_as_text = !json_asked && isatty(STDERR_FILENO);
}

/* A value as text: a control byte (an escape sequence from a tool's stderr
 * or a message) as \xNN, so that it cannot drive the terminal; a newline
 * goes on at indent. */
static void put_clean(FILE *f, const char *s, size_t n, const char *indent)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' && i + 1 < n)
            fprintf(f, "\n%s", indent);
        else if (c == '\n')
            continue;
        else if ((c < 0x20 && c != '\t') || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

static void put_line(FILE *f, const char *key, const char *s, size_t n)
{
    fprintf(f, "  %-14s", key);
    put_clean(f, s, n, "                ");
    fputc('\n', f);
}

static void put_cancellation_text(FILE *f, const tk_status *st)
{
    if (st->cause == TK_CAUSE_NONE && !st->process_killed &&
        !st->write_completed && st->cleanup_ms == 0)
        return;
    fprintf(f, "  %-14s", "Cancellation:");
    const char *sep = "";
    if (st->cause != TK_CAUSE_NONE) {
        fprintf(f, "cause %s", tk_cause_name(st->cause));
        sep = ", ";
    }
    if (st->process_killed) {
        fprintf(f, "%sprocess killed", sep);
        sep = ", ";
    }
    if (st->write_completed) {
        fprintf(f, "%swrite completed", sep);
        sep = ", ";
    }
    if (st->cleanup_ms != 0)
        fprintf(f, "%scleanup %u ms", sep, (unsigned)st->cleanup_ms);
    fputc('\n', f);
}

/* A status for a person, one item a line, as grpcurl's "ERROR:\n  Code:":
 * what the JSON line holds, under the same names. */
static void put_status_text(FILE *f, const tk_status *st)
{
    const char *msg = st->message != NULL ? st->message : "";
    const char *code = tk_code_name(st->code);
    fputs(st->code == TK_OK ? "STATUS:\n" : "ERROR:\n", f);
    put_line(f, "Code:", code, strlen(code));
    if (st->reason != NULL && st->reason[0] != '\0')
        put_line(f, "Reason:", st->reason, strlen(st->reason));
    put_line(f, "Message:", msg, strlen(msg));
    put_cancellation_text(f, st);
    if (st->partial)
        fprintf(f, "  %-14syes\n", "Partial:");
    if (st->retry_after_ms != 0)
        fprintf(f, "  %-14s%u ms\n",
                "Retry after:", (unsigned)st->retry_after_ms);
    if (st->stderr_len > 0)
        put_line(f, "Stderr:", (const char *)st->stderr_excerpt,
                 st->stderr_len);
    if (st->node != NULL && st->node[0] != '\0')
        put_line(f, "Node:", st->node, strlen(st->node));
    fprintf(f, "  %-14s%s\n",
            "From:", st->from_server ? "tkd" : "tkcall (not sent by tkd)");
}

/* The status as one line of JSON (--help says its members). */
static void put_status_json(FILE *f, const tk_status *st)
{
    const char *msg = st->message != NULL ? st->message : "";
    bool first = true;
    fputc('{', f);
    put_text(f, &first, "code", tk_code_name(st->code),
             strlen(tk_code_name(st->code)));
    if (st->reason != NULL && st->reason[0] != '\0')
        put_text(f, &first, "reason", st->reason, strlen(st->reason));
    put_text(f, &first, "message", msg, strlen(msg));
    if (st->stderr_len > 0)
        put_text(f, &first, "stderr", st->stderr_excerpt, st->stderr_len);
    if (st->partial)
        put_member(f, &first, "partial", "true");
    if (st->retry_after_ms != 0)
        put_uint(f, &first, "retryAfterMs", st->retry_after_ms);
    if (st->elapsed_us != 0)
        put_uint(f, &first, "elapsedUs", st->elapsed_us);
    put_member(f, &first, "fromServer", st->from_server ? "true" : "false");
    if (st->node != NULL && st->node[0] != '\0')
        put_text(f, &first, "node", st->node, strlen(st->node));
    put_cancellation(f, &first, st);
    fputs("}\n", f);
}

/* The status on stderr, written at once: for a person on a terminal, else
 * one line of JSON. */
void tkcall_print_status(const tk_status *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *msg = st->message != NULL ? st->message : "";
    if (f == NULL) {
        fprintf(stderr, "tkcall: %s: %s\n", tk_code_name(st->code), msg);
        return;
    }
    if (status_as_text)
        put_status_text(f, st);
    else
        put_status_json(f, st);
    if (fclose(f) != 0 || buf == NULL) { /* out of memory */
        fprintf(stderr, "tkcall: %s: %s\n", tk_code_name(st->code), msg);
        free(buf);
        return;
    }
    fputs(buf, stderr);
    free(buf);
}

/* Prints a non-OK status and frees it; returns the exit status. */
int tkcall_report(tk_status *st)
{
    int code = st->code;
    tkcall_print_status(st);
    tk_status_clear(st);
    return tkcall_exit_status_of(code);
}

static int print_json(const tkcall_output *o, const ProtobufCMessage *reply)
{
    int flags = o->json_flags;
    if (o->format != TKCALL_OUT_COMPACT)
        flags |= TK_JSON_PRETTY;
    char *json = tk_json_encode(reply, flags);
    if (json == NULL) {
        tk_status st = { 0 };
        tkcall_make_status(&st, TK_CODE_INTERNAL,
                           "out of memory printing the reply");
        return tkcall_report(&st);
    }
    printf("%s\n", json);
    free(json);
    return TKCALL_EXIT_OK;
}

int tkcall_print_reply(const tkcall_output *o, const char *method,
                       const ProtobufCMessage *request,
                       const ProtobufCMessage *reply)
{
    int rv = TKCALL_EXIT_OK;
    tkcall_text text = { .out = stdout,
                         .color = o->color,
                         .long_form = o->format == TKCALL_OUT_LONG };
    bool as_text = o->format == TKCALL_OUT_TEXT || o->format == TKCALL_OUT_LONG;
    if (!as_text || !tkcall_text_print(&text, method, request, reply))
        rv = print_json(o, reply);
    if (fflush(stdout) != 0 && rv == TKCALL_EXIT_OK)
        rv = TK_CODE_UNKNOWN;
    return rv;
}

/* How many results the reply holds: the count of its first repeated
 * field (matches, commits); -1 when it has none. */
static long result_count(const ProtobufCMessage *reply)
{
    const ProtobufCMessageDescriptor *d = reply->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++)
        if (d->fields[i].label == PROTOBUF_C_LABEL_REPEATED)
            return (long)*(const size_t *)((const char *)reply +
                                           d->fields[i].quantifier_offset);
    return -1;
}

void tkcall_note_partial(const char *method, const ProtobufCMessage *reply,
                         const tk_status *st)
{
    if (!st->partial)
        return;
    long n = reply != NULL ? result_count(reply) : -1;
    const char *limit = tkcall_limit_field(method);
    fputs("tkcall: partial reply: more results exist than", stderr);
    if (n >= 0)
        fprintf(stderr, " the %ld here", n);
    else
        fputs(" this reply holds", stderr);
    fputs(st->cause == TK_CAUSE_LIMIT ? " (tkd stopped at a limit)" : "",
          stderr);
    /* At the method's ceiling (tk.v1.ListSpec) a larger limit would be
     * served as the same: say so rather than ask for one. */
    const tk_method_desc *md = tk_catalog_find_method(method);
    if (md != NULL && md->list_field != NULL && n >= (long)md->max_items)
        fprintf(stderr,
                "; %u is tkd's ceiling for %s: narrow the request for "
                "the rest",
                (unsigned)md->max_items, method);
    else if (limit != NULL)
        fprintf(stderr, "; raise \"%s\" for more", limit);
    fputs("\n", stderr);
}

/* "1.234 ms", "2.5 s": the server's elapsed time. */
static void put_elapsed(FILE *f, uint64_t us)
{
    if (us < 1000)
        fprintf(f, "%llu us", (unsigned long long)us);
    else if (us < 10000000)
        fprintf(f, "%.3f ms", (double)us / 1000.0);
    else
        fprintf(f, "%.3f s", (double)us / 1e6);
}

void tkcall_print_verbose(const tkcall_verbose *v, const tk_status *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return;
    fprintf(f, "tkcall: method   %s\n", v->method);
    fprintf(f, "tkcall: deadline %s%s\n", v->deadline,
            strcmp(v->deadline, "0s") == 0 ? " (the method's default)" : "");
    fprintf(f, "tkcall: status   %s", tk_code_name(st->code));
    if (st->reason != NULL && st->reason[0] != '\0')
        fprintf(f, " %s", st->reason);
    if (st->partial)
        fputs(", partial", f);
    if (st->cause != TK_CAUSE_NONE)
        fprintf(f, ", cause %s", tk_cause_name(st->cause));
    if (st->process_killed)
        fputs(", process killed", f);
    if (st->write_completed)
        fputs(", write completed", f);
    fputs(st->from_server ? ", from tkd\n" : ", made by the client\n", f);
    if (st->node != NULL && st->node[0] != '\0')
        fprintf(f, "tkcall: node     %s\n", st->node);
    if (st->from_server) {
        fputs("tkcall: elapsed  ", f);
        put_elapsed(f, st->elapsed_us);
        fputs(" in tkd\n", f);
    }
    if (st->tool != NULL && st->tool[0] != '\0')
        fprintf(f, "tkcall: tool     %s\n", st->tool);
    if (fclose(f) == 0 && buf != NULL)
        fputs(buf, stderr);
    free(buf);
}
