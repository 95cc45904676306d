/* SPDX-License-Identifier: MIT */
/* The READ methods served by the git CLI: Status, Diff and Grep. Each
 * builds its argv (the caller's input after -e, --end-of-options or --),
 * runs git through proc/ bound to its caller, and parses the -z output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

static void unparseable(rpc_call *call, const char *what)
{
    rpc_call_fail(call, RPC_INTERNAL, "UNPARSEABLE_OUTPUT",
                  "%s printed output tk cannot read", what);
}

/* ---- Status ---------------------------------------------------------------
 */

void tkgit__status(void *svc, rpc_call *call, const ProtobufCMessage *request,
                   ProtobufCMessage *reply)
{
    const Tk__V1__GitStatusRequest *in =
        (const Tk__V1__GitStatusRequest *)request;
    if (!tkgit__paths_ok(call, in->n_paths, in->paths))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "status");
    tkgit__argv_add(&a, "--porcelain=v2");
    tkgit__argv_add(&a, "-z");
    tkgit__argv_add(&a, "--branch");
    if (in->untracked == TK__V1__GIT_STATUS_REQUEST__UNTRACKED__UNTRACKED_NO)
        tkgit__argv_add(&a, "--untracked-files=no");
    else if (in->untracked ==
             TK__V1__GIT_STATUS_REQUEST__UNTRACKED__UNTRACKED_ALL)
        tkgit__argv_add(&a, "--untracked-files=all");
    tkgit__argv_paths(&a, in->n_paths, in->paths);
    tkgit_run run;
    tkgit__run_init(&run, svc, call, &repo, "git status");
    proc_result r;
    if (tkgit__run(&r, &run, &a, false) == 0 &&
        tkgit__parse_status(call, r.out, r.out_len,
                            (Tk__V1__GitStatusReply *)reply) != 0)
        unparseable(call, run.what);
    proc_result_fini(&r);
    tkgit__close(&repo);
}

/* ---- Diff ------------------------------------------------------------------
 */

static void diff_argv(tkgit_argv *a, const Tk__V1__GitDiffRequest *in)
{
    tkgit__argv_add(a, "--no-ext-diff");
    tkgit__argv_add(a, "--no-textconv");
    tkgit__argv_add(a, "--no-color");
    tkgit__argv_add(a, "--src-prefix=a/");
    tkgit__argv_add(a, "--dst-prefix=b/");
    tkgit__argv_add(a, "--numstat");
    tkgit__argv_add(a, "-z");
    tkgit__argv_add(a, "-p");
    if (in->context_lines > 0) {
        char *u = rpc_call_alloc(a->call, 16);
        snprintf(u, 16, "-U%u", (unsigned)in->context_lines);
        tkgit__argv_add(a, u);
    }
    if (in->cached)
        tkgit__argv_add(a, "--cached");
    tkgit__argv_add(a, "--end-of-options");
    if (in->from[0] != '\0')
        tkgit__argv_add(a, in->from);
    if (in->to[0] != '\0')
        tkgit__argv_add(a, in->to);
    tkgit__argv_paths(a, in->n_paths, in->paths);
}

void tkgit__diff(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply)
{
    const Tk__V1__GitDiffRequest *in = (const Tk__V1__GitDiffRequest *)request;
    Tk__V1__GitDiffReply *out = (Tk__V1__GitDiffReply *)reply;
    if (!tkgit__paths_ok(call, in->n_paths, in->paths) ||
        !tkgit__rev_ok(call, in->from, "from") ||
        !tkgit__rev_ok(call, in->to, "to"))
        return;
    if (in->to[0] != '\0' && in->from[0] == '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                      "to needs from");
        return;
    }
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "diff");
    diff_argv(&a, in);
    tkgit_run run;
    tkgit__run_init(&run, svc, call, &repo, "git diff");
    proc_result r;
    if (tkgit__run(&r, &run, &a, false) == 0) {
        long patch = tkgit__parse_numstat(call, r.out, r.out_len, out);
        if (patch < 0)
            unparseable(call, run.what);
        else
            out->patch =
                rpc_call_bytes(call, r.out + patch, r.out_len - (size_t)patch);
    }
    proc_result_fini(&r);
    tkgit__close(&repo);
}

/* ---- Grep ------------------------------------------------------------------
 */

/* Matches arrive one line at a time: "path\0line\0column\0text". A path
 * holding '\n' splits a match over two lines; they are joined again. */
typedef struct grep_state {
    rpc_call *call;
    Tk__V1__GitGrepReply *out;
    size_t cap;
    uint32_t limit;
    /* The list's byte budget of paths and text (0: none), and what the
     * matches kept have taken of it. */
    size_t max_bytes, bytes;
    bool limited;
    char *pending;
    size_t pending_len;
} grep_state;

static int nuls(const char *s, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\0';
    return k;
}

/* Keeps the match, unless its path and text would take the reply past
 * the list's byte budget: false then (a match is never cut itself). */
static bool grep_match(grep_state *st, const char *s, size_t n)
{
    const char *nul1 = memchr(s, '\0', n);
    const char *nul2 = memchr(nul1 + 1, '\0', (size_t)(s + n - nul1 - 1));
    const char *nul3 = memchr(nul2 + 1, '\0', (size_t)(s + n - nul2 - 1));
    size_t bytes = (size_t)(nul1 - s) + (size_t)(s + n - nul3 - 1);
    if (st->max_bytes != 0 && st->bytes + bytes > st->max_bytes)
        return false;
    st->bytes += bytes;
    Tk__V1__GitGrepMatch *m = rpc_call_alloc(st->call, sizeof *m);
    tk__v1__git_grep_match__init(m);
    m->path = rpc_call_bytes(st->call, s, (size_t)(nul1 - s));
    m->line = (uint32_t)strtoul(nul1 + 1, NULL, 10);
    m->column = (uint32_t)strtoul(nul2 + 1, NULL, 10);
    m->text = rpc_call_bytes(st->call, nul3 + 1, (size_t)(s + n - nul3 - 1));
    st->out->matches =
        tkgit__grow(st->call, st->out->matches, st->out->n_matches, &st->cap,
                    sizeof(Tk__V1__GitGrepMatch *));
    st->out->matches[st->out->n_matches++] = m;
    return true;
}

static proc_verdict grep_line(void *arg, const char *data, size_t len,
                              bool truncated)
{
    grep_state *st = arg;
    (void)truncated; /* a long line's text is cut; the match stands */
    const char *s = data;
    size_t n = len;
    if (st->pending != NULL) { /* the rest of a path that held '\n' */
        char *joined = malloc(st->pending_len + 1 + len);
        if (joined == NULL)
            return PROC_STOP;
        memcpy(joined, st->pending, st->pending_len);
        joined[st->pending_len] = '\n';
        memcpy(joined + st->pending_len + 1, data, len);
        free(st->pending);
        st->pending = joined;
        st->pending_len += 1 + len;
        s = st->pending;
        n = st->pending_len;
    }
    if (nuls(s, n) < 3) {
        if (st->pending == NULL) {
            st->pending = malloc(len);
            if (st->pending == NULL)
                return PROC_STOP;
            memcpy(st->pending, data, len);
            st->pending_len = len;
        }
        return PROC_CONTINUE;
    }
    /* A match beyond the limit (or the byte budget) is not kept: it says
     * that more exist (partial), which the limit's own last match cannot. */
    st->limited = st->out->n_matches == st->limit || !grep_match(st, s, n);
    free(st->pending);
    st->pending = NULL;
    return st->limited ? PROC_STOP : PROC_CONTINUE;
}

static void grep_argv(tkgit_argv *a, const Tk__V1__GitGrepRequest *in)
{
    static const char *const fixed[] = { "-z", "-n",         "--column", "-F",
                                         "-I", "--no-color", NULL };
    for (size_t i = 0; fixed[i] != NULL; i++)
        tkgit__argv_add(a, fixed[i]);
    if (in->ignore_case)
        tkgit__argv_add(a, "-i");
    if (in->untracked)
        tkgit__argv_add(a, "--untracked");
    tkgit__argv_add(a, "-e"); /* the pattern is never an option */
    tkgit__argv_add(a, in->pattern);
    tkgit__argv_paths(a, in->n_paths, in->paths);
}

void tkgit__grep(void *svc, rpc_call *call, const ProtobufCMessage *request,
                 ProtobufCMessage *reply)
{
    const Tk__V1__GitGrepRequest *in = (const Tk__V1__GitGrepRequest *)request;
    if (!tkgit__paths_ok(call, in->n_paths, in->paths) ||
        !tkgit__required(call, in->pattern, "pattern"))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    grep_state st = { .call = call, .out = (Tk__V1__GitGrepReply *)reply };
    /* The caller's limit, held to the method's ceiling (git.proto). */
    const rpc_list *list = rpc_call_list(call);
    st.limit = rpc_list_items(list, in->max_matches);
    st.max_bytes = list->max_bytes;
    tkgit_argv a;
    tkgit__argv_init(&a, call, "grep");
    grep_argv(&a, in);
    tkgit_run run;
    tkgit__run_init(&run, svc, call, &repo, "git grep");
    run.on_out = grep_line;
    run.on_out_arg = &st;
    run.record_max = (size_t)64 * 1024;
    proc_result r;
    int rv = tkgit__run(&r, &run, &a, true);
    if (rv >= 0 && st.limited)
        rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
    free(st.pending);
    proc_result_fini(&r);
    tkgit__close(&repo);
}
