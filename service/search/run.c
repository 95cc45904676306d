/* SPDX-License-Identifier: MIT */
/* One search with its slot held: which tool, the run through tool/, and
 * the judgement of how it ended — the caller first (tool/: a cancelled or
 * expired call is never answered with matches, least of all with none;
 * so is a tool that could not start), then the limit (a success,
 * partial), then the tool's exit status (1: no match; 2: files it could
 * not read). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "proc/proc.h"
#include "search_int.h"
#include "tk/v1/search.pb-c.h"
#include "tool/tool.h"

#define STDERR_KEEP ((size_t)16 * 1024)
/* A search whose limit is above this reads the tool's stdout in batches
 * (proc.h, "Batched stdout"): it wants every match, and the tool's writes
 * (rg: one a file) each woke tkd. One within it (the default limit and
 * below) reads each write as it comes, so the first matches answer soon. */
#define BATCH_ABOVE_LIMIT SEARCH_DEFAULT_LIMIT
#define BATCH_MS 2u

/* ---- choosing the tool -------------------------------------------------- */

/* A READ run in the search root, bound by the call and the ceiling.
 *
 * A search ends within 30 s whatever deadline its caller asks for, so
 * that no caller holds a slot and a tool for longer; rpc already sees to it:
 * the method's ceiling_ms (SEARCH_CEILING_MS) caps every caller's deadline,
 * counted from receipt, so the call's deadline is never more than 30 s away and
 * covers the slot wait and the run together. The run's own bound below, counted
 * from the tool's start, therefore never fires first (the deadline does:
 * DEADLINE_EXCEEDED, cause DEADLINE); it stays as a bound that holds even if
 * rpc's cap were ever lifted, and then answers as every run's own bound does
 * (tool/: TOOL_TIMEOUT). */
static void search_opts(tool_opts *o, const search_job *j, const char *name,
                        const char *path, const char *const *argv,
                        const char *const *env)
{
    tool_opts_init(o, name, path, argv);
    o->proc.env = env;
    o->proc.cwd = j->root;
    o->timeout_ms = SEARCH_CEILING_MS;
}

/* 1 when git says root is inside a work tree, 0 when not (or git cannot
 * say), -1 when the caller went away meanwhile or git could not start for
 * want of descriptors (then the call has failed: not knowing is no
 * reason to fall back to grep). */
static int inside_work_tree(const search_job *j, const char *git)
{
    static const char *const argv[] = {
        "git", "-c", SEARCH_GIT_SAFE_BARE, "rev-parse", "--is-inside-work-tree",
        NULL
    };
    char name[PATH_MAX + 64];
    snprintf(name, sizeof name, "git rev-parse (is %s in a work tree?)",
             j->root);
    tool_opts o;
    search_opts(&o, j, name, git, argv, search__git_env);
    o.proc.stdout_cap = 64;
    proc_result r;
    tool_answer a;
    tool_end end = tool_try(&r, &a, j->call, &o);
    int inside = -1;
    if (end == TOOL_END_STOPPED || end == TOOL_END_NO_FDS)
        tool_give(j->call, &a);
    else
        inside = end == TOOL_END_EXITED &&
                 r.status.kind == PROC_STATUS_EXITED && r.status.code == 0 &&
                 strncmp(r.out, "true", 4) == 0;
    proc_result_fini(&r);
    return inside;
}

/* The tool to run, or -1 when the call has failed (its status is set). */
static int choose(const search_job *j, search_tool *out)
{
    static const search_tool fallback[] = { SEARCH_TOOL_RG,
                                            SEARCH_TOOL_GIT_GREP,
                                            SEARCH_TOOL_GREP };
    bool forced = j->forced != SEARCH_TOOL_AUTO;
    const search_tool *order = forced ? &j->forced : fallback;
    size_t n = forced ? 1 : sizeof fallback / sizeof fallback[0];
    for (size_t i = 0; i < n; i++) {
        const char *path = search__tool_path(order[i]);
        if (path == NULL && forced) {
            rpc_call_fail(j->call, RPC_FAILED_PRECONDITION, TOOL_R_NOT_FOUND,
                          "%s is not in tkd's PATH",
                          search_tool_name(order[i]));
            return -1;
        }
        int usable = path != NULL;
        /* rg takes no pattern that is not UTF-8, not even with -F; git
         * grep and grep take bytes. (check_request refuses it forced.) */
        if (usable && order[i] == SEARCH_TOOL_RG)
            usable = tkc_utf8_valid(j->q.text, j->q.len);
        if (usable && order[i] == SEARCH_TOOL_GIT_GREP)
            usable = inside_work_tree(j, path);
        if (usable < 0)
            return -1; /* the call has failed */
        if (usable) {
            *out = order[i];
            return 0;
        }
        if (forced) {
            rpc_call_fail(j->call, RPC_FAILED_PRECONDITION, "NOT_A_WORK_TREE",
                          "%s is not inside a git work tree", j->root);
            return -1;
        }
    }
    rpc_call_fail(j->call, RPC_FAILED_PRECONDITION, "NO_SEARCH_TOOL",
                  "none of rg, git grep (in a work tree) and grep is in "
                  "tkd's PATH");
    return -1;
}

/* ---- the reply ---------------------------------------------------------- */

typedef struct outcome {
    search_tool tool;
    const proc_result *r;
    const search_parser *p;
    uint32_t unreadable;
} outcome;

static void reply(const search_job *j, const outcome *o)
{
    Tk__V1__SearchReply *out = j->out;
    /* The matches are encoded here, straight from the parser, and sent
     * before the rest of the reply; out->matches stays empty. */
    size_t n = search_parser_encoded_size(o->p);
    if (n > 0) {
        uint8_t *enc = rpc_call_alloc(j->call, n);
        search_parser_encode(o->p, enc);
        rpc_call_set_reply_prefix(j->call, enc, n);
    }
    out->partial = search_parser_partial(o->p);
    out->tool = (Tk__V1__SearchRequest__Tool)o->tool;
    search_stats st;
    search_parser_stats(o->p, &st);
    Tk__V1__SearchStats *s = rpc_call_alloc(j->call, sizeof *s);
    tk__v1__search_stats__init(s);
    s->matched_lines = st.matched_lines;
    s->files_with_matches = st.files_with_matches;
    s->unreadable_files = o->unreadable;
    s->truncated_lines = st.truncated_lines;
    s->skipped_records = st.skipped_records;
    s->slot_wait_ms = j->slot_wait_ms;
    s->tool_ms = o->r->elapsed_ms;
    out->stats = s;
}

/* ---- judging the run ---------------------------------------------------- */

/* Whether a line of rg's stderr ends as an I/O error on a path does:
 * "./a/b: Permission denied (os error 13)". Its other lines (a pattern it
 * refuses, an ignore file it cannot parse) name nothing it could not
 * read. The end, not the start, so that a path holding a newline counts
 * once. */
static bool rg_io_error(const char *line, size_t len)
{
    static const char os[] = "(os error ";
    if (len < sizeof os + 1 || line[len - 1] != ')')
        return false;
    size_t at = len - 1;
    while (at > 0 && line[at - 1] >= '0' && line[at - 1] <= '9')
        at--;
    return at < len - 1 && at >= sizeof os - 1 &&
           memcmp(line + at - (sizeof os - 1), os, sizeof os - 1) == 0;
}

/* Whether a line of the tool's stderr names something it could not read:
 * rg's I/O errors on a path; any line of grep (it prints nothing else
 * there with these options, and exits 2 with it); git grep's "error: ..."
 * (a file it could not stat or read) and "warning: could not open
 * directory ..." (it exits 0 or 1 with those), not its other warnings. */
static bool unreadable_line(search_tool tool, const char *line, size_t len)
{
    static const char error[] = "error: ";
    static const char dir[] = "warning: could not open directory ";
    if (tool == SEARCH_TOOL_RG)
        return rg_io_error(line, len);
    if (tool != SEARCH_TOOL_GIT_GREP)
        return len > 0 && strncmp(line, "[... ", 5) != 0;
    return (len >= sizeof error - 1 &&
            memcmp(line, error, sizeof error - 1) == 0) ||
           (len >= sizeof dir - 1 && memcmp(line, dir, sizeof dir - 1) == 0);
}

/* How many things the tool could not read, by its stderr (git grep may
 * repeat a line: repeats count once). */
static uint32_t count_unreadable(search_tool tool, const char *err, size_t len)
{
    uint32_t n = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (size_t at = 0; err != NULL && at < len;) {
        const char *line = err + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl != NULL ? (size_t)(nl - line) : len - at;
        at += ll + 1;
        bool repeat =
            prev != NULL && prev_len == ll && memcmp(prev, line, ll) == 0;
        if (unreadable_line(tool, line, ll) && !repeat)
            n++;
        prev = line;
        prev_len = ll;
    }
    return n;
}

static void set_stderr(const search_job *j, const proc_result *r)
{
    if (r->err != NULL && r->err_len > 0)
        rpc_call_set_stderr(j->call, r->err, r->err_len);
}

/* The tool ran to its end and failed: an exit status it does not
 * document, or a signal that was not ours. */
static void fail_tool(const search_job *j, const outcome *o)
{
    char what[256];
    proc_result_describe(what, sizeof what, o->r);
    set_stderr(j, o->r);
    rpc_call_fail(j->call, RPC_INTERNAL, "TOOL_FAILED", "%s: %s",
                  search_tool_name(o->tool), what);
}

/* The tool ended by itself, or its reader stopped it (limited): the limit
 * first (a success, partial), then the tool's exit status. (The caller
 * came before both, in tool/.) */
static void judge(const search_job *j, const outcome *o, bool limited)
{
    const proc_result *r = o->r;
    /* The parser stopped the tool, or the tool had already written all
     * and exited by the time the match beyond the limit was read. */
    if (limited || search_parser_partial(o->p)) {
        reply(j, o);
        rpc_call_set_partial(j->call, RPC_CAUSE_LIMIT);
        return;
    }
    int code = r->status.kind == PROC_STATUS_EXITED ? r->status.code : -1;
    bool git = o->tool == SEARCH_TOOL_GIT_GREP;
    /* 2 without a word of why is no unreadable file; git grep says 0 or 1
     * and names the files on stderr. */
    if (code < 0 || code > 2 || (code == 2 && (git || o->unreadable == 0))) {
        fail_tool(j, o);
        return;
    }
    bool unreadable_exit = code == 2 || (git && o->unreadable > 0);
    if (unreadable_exit) {
        set_stderr(j, r);
        if (!j->allow_unreadable) {
            rpc_call_fail(j->call, RPC_FAILED_PRECONDITION, "UNREADABLE_FILES",
                          "%s could not read %u files or directories under "
                          "%s (allow_unreadable returns what it found)",
                          search_tool_name(o->tool), o->unreadable, j->root);
            return;
        }
    }
    reply(j, o);
}

/* ---- running ------------------------------------------------------------ */

static proc_verdict on_record(void *arg, const char *data, size_t len,
                              bool truncated)
{
    return search_parser_record(arg, data, len, truncated) ? PROC_CONTINUE
                                                           : PROC_STOP;
}

static void run_tool(const search_job *j, search_tool tool, search_parser *p)
{
    search_command cmd;
    search_command_build(&cmd, tool, &j->q);
    tool_opts o;
    search_opts(&o, j, search_tool_name(tool), search__tool_path(tool),
                cmd.argv, cmd.env);
    o.proc.on_stdout = on_record;
    o.proc.on_stdout_arg = p;
    o.proc.record_max = cmd.record_max;
    o.proc.record_resume = cmd.record_resume;
    o.proc.record_delim = cmd.record_delim;
    o.proc.stderr_head = STDERR_KEEP;
    o.proc.stderr_tail = STDERR_KEEP;
    if (j->lim.max_matches > BATCH_ABOVE_LIMIT)
        o.proc.stdout_batch_ms = BATCH_MS;
    proc_result r;
    int rv = tool_run(&r, j->call, &o);
    if (rv >= 0) { /* else the call has failed: tool/ answered */
        outcome out = { .tool = tool, .r = &r, .p = p };
        out.unreadable = count_unreadable(tool, r.err, r.err_len);
        judge(j, &out, rv == 1);
    }
    proc_result_fini(&r);
}

void search__run(search_job *j)
{
    search_tool tool;
    if (choose(j, &tool) != 0)
        return;
    search_parser *p = NULL;
    if (search_parser_new(&p, tool, &j->q, &j->lim) != 0) {
        rpc_call_fail(j->call, RPC_RESOURCE_EXHAUSTED, "OUT_OF_MEMORY",
                      "no memory for a search");
        return;
    }
    search__parser_use_pool(p, j->pool);
    run_tool(j, tool, p);
    search_parser_free(p);
}
