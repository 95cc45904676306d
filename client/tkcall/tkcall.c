/* SPDX-License-Identifier: MIT */
/* tkcall: a grpcurl-style command line over libtkclient (see tkcall.h).
 * Commands return an exit status of the table in tkcall.h.
 *
 * Owns: main, the commands (dispatch): a call (its request read from -d)
 * and list.
 * May call: every other file of client/tkcall/ (tkcall_int.h says which
 * is which), libtkclient and its JSON codec.
 * Must never: print a reply but through output.c. */
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
#include <unistd.h>

#include <tk/client.h>
#include <tk/json.h>

#include "tk/v1/control.pb-c.h"

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

/* The largest request tkcall reads (tkd refuses far smaller ones). */
#define MAX_REQUEST_BYTES (64u << 20)

static int read_all(FILE *f, char **out, size_t *len)
{
    tkc_buf b = { 0 };
    char chunk[4096];
    for (;;) {
        size_t n = fread(chunk, 1, sizeof chunk, f);
        int rv = ferror(f) ? -EIO : b.len + n > MAX_REQUEST_BYTES ? -EFBIG : 0;
        if (rv == 0 && tkc_buf_append(&b, chunk, n) != 0)
            rv = -ENOMEM;
        if (rv == 0 && feof(f) && tkc_buf_reserve(&b, b.len) != 0)
            rv = -ENOMEM;
        if (rv != 0) {
            tkc_buf_fini(&b);
            return rv;
        }
        if (feof(f)) {
            b.data[b.len] = '\0';
            *out = b.data;
            *len = b.len;
            return 0;
        }
    }
}

/* -d: literal JSON, @file or @- (stdin), or grpcurl's bare @ (stdin too);
 * none means {}. */
static int read_request(const tkcall *t, char **out, size_t *len)
{
    const char *d = t->data != NULL ? t->data : "{}";
    if (d[0] != '@') {
        *out = strdup(d);
        *len = strlen(d);
        return *out != NULL ? TKCALL_EXIT_OK
                            : tkcall__usage_error("out of memory");
    }
    bool is_stdin = strcmp(d, "@-") == 0 || strcmp(d, "@") == 0;
    FILE *f = is_stdin ? stdin : fopen(d + 1, "rb");
    char ebuf[128];
    if (f == NULL)
        return tkcall__usage_error("cannot read the request from %s: %s", d + 1,
                                   tkc_strerror(errno, ebuf, sizeof ebuf));
    int rv = read_all(f, out, len);
    if (!is_stdin)
        (void)fclose(f); /* read only: nothing is lost if it fails */
    if (rv != 0)
        return tkcall__usage_error("cannot read the request from %s: %s",
                                   is_stdin ? "standard input" : d + 1,
                                   rv == -EFBIG
                                       ? "larger than 64 MiB"
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
        // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): tkcall__resolve_method says OK only with both descriptors set; the analyzer does not follow tkcall__usage_error (variadic) to see that it never returns OK
        const char *type = req_desc->name;
        fprintf(stderr, "tkcall: the request is not a valid %s: %s\n", type,
                err);
        return TKCALL_EXIT_DATA;
    }
    char cwd[4096];
    if (paths_make_absolute(req, getcwd(cwd, sizeof cwd)) != 0) {
        protobuf_c_message_free_unpacked(req, NULL);
        return tkcall__usage_error(
            "cannot make the request's relative paths "
            "absolute: the working directory is unknown or "
            "memory ran out; give absolute paths");
    }
    tk_status st = { 0 };
    int rv;
    /* Out of memory: the reply is malloc'd, as without an arena. */
    if (tk_arena_new(&t->reply_arena, 0) != TK_OK)
        t->reply_arena = NULL;
    int64_t t0 = tkc_mono_ns();
    if (tkcall__run_call(t, method, req, rep_desc, &reply, &st) == TK_OK) {
        long long ms = (long long)((tkc_mono_ns() - t0) / 1000000);
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
        return tkcall__usage_error(
            "unexpected \"%s\" after the method (the request "
            "goes in -d)",
            t->args[1]);
    int rv = read_request(t, &text, &len);
    if (rv == TKCALL_EXIT_OK)
        rv = tkcall__find_method(t, t->args[0], &method);
    if (rv == TKCALL_EXIT_OK && method != NULL)
        rv = tkcall__resolve_method(t, method, &req, &rep);
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
        return tkcall__out_of_memory();
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
        names_fini(&l);
        return tkcall__out_of_memory();
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    int rv;
    if (r.verdict == NAMES_FOUND) {
        rv = print_methods(all, r.name);
    } else if (r.verdict == NAMES_AMBIGUOUS) {
        rv = tkcall__no_match(t, "service", typed, &r);
    } else {
        Tk__V1__ListMethodsReply *list = NULL;
        tk_status st = { 0 };
        if (tkcall__list_methods(t, typed, &list, &st) == TK_OK) {
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
    names_fini(&l);
    return rv;
}

static int cmd_list(tkcall *t)
{
    if (t->n_args > 2)
        return tkcall__usage_error("list takes at most one SERVICE");
    Tk__V1__ListMethodsReply *list = NULL;
    tk_status st = { 0 };
    if (tkcall__list_methods(t, "", &list, &st) != TK_OK)
        return tkcall_report(&st);
    tk_status_clear(&st);
    int rv = t->n_args == 2 ? list_service(t, list, t->args[1])
                            : print_methods(list, NULL);
    protobuf_c_message_free_unpacked(&list->base, NULL);
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
    { "describe", tkcall__cmd_describe },
};

static int dispatch(tkcall *t)
{
    if (t->n_args == 0)
        return tkcall__usage_error("a METHOD or a command (list, describe) is "
                                   "needed; see tkcall --help");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(t->args[0], commands[i].name) == 0)
            return commands[i].run(t);
    return cmd_call(t);
}

int main(int argc, char **argv)
{
    tkcall__block_signals();
    tkcall t = { .timeout_ms = TKCALL_DEFAULT_TIMEOUT_MS,
                 .out = { .format = TKCALL_OUT_TEXT,
                          .json_flags = TK_JSON_BYTES_TEXT } };
    int rv = tkcall__parse_args(&t, argc, argv);
    if (rv >= 0)
        return rv;
    if (tkcall__sig_start(&t.sig) != 0) {
        fprintf(stderr, "tkcall: cannot start the signal thread\n");
        tkcall__sig_stop(&t.sig);
        return TK_CODE_INTERNAL;
    }
    rv = dispatch(&t);
    tkcall__sig_stop(&t.sig);
    tk_client_close(t.client);
    return rv;
}
