/* SPDX-License-Identifier: MIT */
/* RevParse: git_revparse_single in process, except for the revisions that
 * libgit2 would answer with a regular expression. libgit2 1.5.1 reaches
 * PCRE2 for ":/text" and "rev^{/text}" (a search of commit messages),
 * "@{-N}" (a pattern over the HEAD reflog), "@{upstream}" / "@{push}" (the
 * remote's url.*.insteadOf config, matched by pattern) and any name
 * holding "-g" that is no ref (its `git describe` parser); with the system
 * PCRE2 every unmatched search leaks its match data (~20 KB), and the
 * search over history is one libgit2 call that no cancel or deadline can
 * interrupt. Those revisions go to `git rev-parse` through proc/ instead:
 * cancellable (the group is killed), leak-free, and git's own answer. The
 * same routing serves Log's revisions. */
#include <stdio.h>
#include <string.h>

#include "git_int.h"

/* Whether the "@{...}" at p (p[0] == '@', p[1] == '{') holds anything but
 * a reflog index: "@{-1}", "@{u}", "@{push}", "@{yesterday}". */
static bool at_needs_git(const char *p)
{
    const char *q = p + 2;
    while (*q >= '0' && *q <= '9')
        q++;
    return q == p + 2 || *q != '}';
}

bool tkgit__rev_needs_git(const char *rev)
{
    if (strstr(rev, ":/") != NULL || strstr(rev, "^{/") != NULL ||
        strstr(rev, "-g") != NULL)
        return true;
    for (const char *p = strstr(rev, "@{"); p != NULL; p = strstr(p + 2, "@{"))
        if (at_needs_git(p))
            return true;
    return false;
}

/* 0 and *out from "<40 hex>\n", else -1. */
static int parse_oid(git_oid *out, const char *s, size_t len)
{
    const size_t hex = GIT_OID_HEXSZ;
    if (len != hex + 1 || s[hex] != '\n')
        return -1;
    return git_oid_fromstrn(out, s, hex) == 0 ? 0 : -1;
}

int tkgit__rev_parse_cli(git_oid *out, const tkgit *g, rpc_call *call,
                         const tkgit_repo *repo, const char *rev)
{
    tkgit_argv a;
    tkgit__argv_init(&a, call, "rev-parse");
    tkgit__argv_add(&a, "--verify");
    tkgit__argv_add(&a, "--end-of-options");
    tkgit__argv_add(&a, rev);
    tkgit_run run;
    tkgit__run_init(&run, g, call, repo, "git rev-parse");
    run.rev = rev;
    proc_result r;
    int rv = tkgit__run(&r, &run, &a, false);
    if (rv == 0 && parse_oid(out, r.out, r.out_len) != 0) {
        rpc_call_fail(call, RPC_INTERNAL, "UNPARSEABLE_OUTPUT",
                      "git rev-parse printed output tk cannot read");
        rv = -1;
    }
    proc_result_fini(&r);
    return rv == 0 ? 0 : -1;
}

/* The object rev names, in process: one libgit2 call, so the cancel and
 * deadline are checked after it. 0, or -1 with the call failed. */
static int parse_in_process(git_oid *out, rpc_call *call,
                            const tkgit_repo *repo, const char *rev)
{
    git_object *obj = NULL;
    int rv = git_revparse_single(&obj, repo->repo, rev);
    if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call);
        rv = -1;
    } else if (rv < 0) {
        tkgit__fail_libgit2(call, repo->repo, TKGIT_STEP_REV, rv, rev);
    } else {
        git_oid_cpy(out, git_object_id(obj));
    }
    git_object_free(obj);
    return rv < 0 ? -1 : 0;
}

void tkgit__rev_parse(void *svc, rpc_call *call,
                      const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    const Tk__V1__GitRevParseRequest *in =
        (const Tk__V1__GitRevParseRequest *)request;
    Tk__V1__GitRevParseReply *out = (Tk__V1__GitRevParseReply *)reply;
    if (!tkgit__required(call, in->rev, "rev") ||
        !tkgit__rev_ok(call, in->rev, "rev"))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    git_oid id;
    int rv;
    if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call);
        rv = -1;
    } else if (tkgit__rev_needs_git(in->rev)) {
        rv = tkgit__rev_parse_cli(&id, svc, call, &repo, in->rev);
    } else {
        rpc_call_set_tool(call, "libgit2");
        obs_metric_add(OBS_M_GIT_READS_LIBGIT2, 1);
        rv = parse_in_process(&id, call, &repo, in->rev);
    }
    if (rv == 0) {
        char hex[GIT_OID_HEXSZ + 1];
        git_oid_tostr(hex, sizeof hex, &id);
        out->oid = rpc_call_strdup(call, hex);
    }
    tkgit__close(&repo);
}
