/* RevParse, in process: git_revparse_single on the repository the call
 * names. One libgit2 call, so the cancel and deadline are checked around
 * it (":/text" walks history inside libgit2 and cannot be interrupted). */
#include "git_int.h"

void tkgit__rev_parse(void *svc, rpc_call *call,
                      const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    const Tk__V1__GitRevParseRequest *in =
        (const Tk__V1__GitRevParseRequest *)request;
    Tk__V1__GitRevParseReply *out = (Tk__V1__GitRevParseReply *)reply;
    if (!tkgit__rev_ok(call, in->rev, "rev"))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    git_object *obj = NULL;
    if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call);
        goto done;
    }
    int rv = git_revparse_single(&obj, repo.repo, in->rev);
    if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call);
        goto done;
    }
    if (rv < 0) {
        tkgit__fail_libgit2(call, repo.repo, TKGIT_STEP_REV, rv, in->rev);
        goto done;
    }
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, git_object_id(obj));
    out->oid = rpc_call_strdup(call, hex);
done:
    git_object_free(obj);
    tkgit__close(&repo);
}
