/* SPDX-License-Identifier: MIT */
/* tk.v1.Search/Search: the request checked (query, limit, tool, root), a
 * slot taken (waiting as long as the caller does), the search run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "search_int.h"
#include "tk/v1/search.pb-c.h"

struct search {
    search_config cfg;
    search_slots slots;
    search_pool pool; /* the matches' chunks between searches */
};

/* roots_resolve's verdict as a status; the reasons are the Git service's.
 * A path that does not exist is not told apart from one outside the
 * roots: either way the caller learns nothing about the file system. */
static void fail_root(rpc_call *call, int rv, const char *msg)
{
    if (rv == -EACCES || rv == -ENOENT)
        rpc_call_fail(call, RPC_PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
                      "root: %s", msg);
    else if (rv == -ENOTDIR)
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NOT_A_DIRECTORY", "root: %s",
                      msg);
    else
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH", "root: %s", msg);
}

static int resolve_root(search_job *j, const search *s, const char *root)
{
    if (root[0] == '\0') {
        rpc_call_fail(j->call, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                      "root is required");
        return -1;
    }
    char msg[600];
    int rv = roots_resolve(s->cfg.roots, root, j->root, sizeof j->root, msg,
                           sizeof msg);
    if (rv != 0) {
        fail_root(j->call, rv, msg);
        return -1;
    }
    struct stat st;
    if (stat(j->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rpc_call_fail(j->call, RPC_INVALID_ARGUMENT, "NOT_A_DIRECTORY",
                      "%.200s is not a directory", root);
        return -1;
    }
    return 0;
}

/* The query and the numbers; 0, or -1 with the call failed. (A NUL in the
 * query never arrives: rpc refuses strings that hold one.) */
static int check_request(rpc_call *call, const Tk__V1__SearchRequest *in)
{
    if (in->query[0] == '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "EMPTY_QUERY",
                      "the query is empty");
        return -1;
    }
    size_t len = strlen(in->query);
    if (len > SEARCH_QUERY_MAX) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "QUERY_TOO_LONG",
                      "the query is %zu bytes, at most %u", len,
                      SEARCH_QUERY_MAX);
        return -1;
    }
    if (memchr(in->query, '\n', len) != NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "NEWLINE_IN_QUERY",
                      "the query holds a newline; matches are lines");
        return -1;
    }
    if ((int)in->tool < SEARCH_TOOL_AUTO || (int)in->tool > SEARCH_TOOL_GREP) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_TOOL",
                      "no tool numbered %d", (int)in->tool);
        return -1;
    }
    if (in->tool == TK__V1__SEARCH_REQUEST__TOOL__RG &&
        !tkc_utf8_valid(in->query, len)) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "QUERY_NOT_UTF8",
                      "rg takes no query that is not UTF-8 (git grep and "
                      "grep do: AUTO picks one of them)");
        return -1;
    }
    return 0;
}

static int prepare(search_job *j, const search *s, rpc_call *call,
                   const Tk__V1__SearchRequest *in, Tk__V1__SearchReply *out)
{
    memset(j, 0, sizeof *j);
    j->call = call;
    j->out = out;
    if (check_request(call, in) != 0 || resolve_root(j, s, in->root) != 0)
        return -1;
    j->q = (search_query){
        .text = in->query,
        .len = strlen(in->query),
        .ignore_case = in->ignore_case,
        .include_hidden =
            in->hidden_case != TK__V1__SEARCH_REQUEST__HIDDEN_INCLUDE_HIDDEN ||
            in->include_hidden,
    };
    /* The caller's limit, held to the method's ceiling (search.proto): a
     * larger one is served as the ceiling, never refused. */
    const rpc_list *list = rpc_call_list(call);
    j->lim.max_matches = rpc_list_items(list, in->limit);
    j->lim.max_bytes = list->max_bytes;
    j->forced = (search_tool)in->tool;
    j->allow_unreadable = in->allow_unreadable;
    return 0;
}

static void handle_search(void *svc, rpc_call *call,
                          const ProtobufCMessage *request,
                          ProtobufCMessage *reply)
{
    search *s = svc;
    search_job j;
    if (prepare(&j, s, call, (const Tk__V1__SearchRequest *)request,
                (Tk__V1__SearchReply *)reply) != 0)
        return;
    int64_t t0 = rpc_now_ns();
    int rv = search__slot_take(&s->slots, call);
    if (rv != 0) {
        char ebuf[128];
        if (rv > 0)
            rpc_call_fail_stopped(call);
        else
            rpc_call_fail(call, RPC_INTERNAL, "SLOT_WAIT_FAILED",
                          "waiting for a search slot: %s",
                          tkc_strerror(-rv, ebuf, sizeof ebuf));
        return;
    }
    j.slot_wait_ms = (uint32_t)((rpc_now_ns() - t0) / 1000000);
    j.pool = &s->pool;
    search__run(&j);
    search__slot_give(&s->slots);
}

/* As tk/v1/search.proto declares it; the handler is handle_search. */
static const rpc_method methods[TK_V1_SEARCH__N_METHODS] = {
    TK_V1_SEARCH__METHODS(RPC_METHOD_ROW, handle_)
};

int search_new(search **out, const search_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    unsigned slots = cfg->slots != 0 ? cfg->slots : SEARCH_DEFAULT_SLOTS;
    if (cfg->roots == NULL || slots > SEARCH_MAX_SLOTS) {
        snprintf(err, errlen,
                 "search: roots are required, and at most %u "
                 "slots",
                 SEARCH_MAX_SLOTS);
        return -EINVAL;
    }
    search *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, errlen, "search: out of memory");
        return -ENOMEM;
    }
    s->cfg = *cfg;
    int rv = search__slots_init(&s->slots, slots);
    if (rv != 0) {
        char ebuf[128];
        snprintf(err, errlen, "search: slots: %s",
                 tkc_strerror(-rv, ebuf, sizeof ebuf));
        free(s);
        return rv;
    }
    rv = search__pool_init(&s->pool);
    if (rv != 0) {
        snprintf(err, errlen, "search: out of memory");
        search__slots_fini(&s->slots);
        free(s);
        return rv;
    }
    *out = s;
    return 0;
}

int search_register(search *s, rpc_server *srv, char *err, size_t errlen)
{
    return rpc_server_add_service(
        srv, s, methods, sizeof methods / sizeof methods[0], err, errlen);
}

void search_free(search *s)
{
    if (s == NULL)
        return;
    search__slots_fini(&s->slots);
    search__pool_fini(&s->pool);
    free(s);
}
