/* SPDX-License-Identifier: MIT */
/* What every handler shares, beneath them all: a request's paths,
 * revisions and branch names checked, a reply's repeated fields grown in
 * the call's memory.
 *
 * No caller string reaches git as an option. Paths go after "--",
 * patterns after "-e", messages as an option's value; revisions go after
 * --end-of-options, but that is not enough: git diff looks for
 * "--no-index" among its arguments before it parses them, and git 2.39's
 * `worktree add -b NAME` runs `git branch NAME REV` with no "--" (a
 * new_branch "-D" deleted the branch REV named). So a revision that
 * begins with '-' is refused here (none names anything: no ref name may
 * begin with '-'), and a branch name must be one by git's rules, before
 * git runs. */
#include <string.h>

#include "git_int.h"

void *tkgit__grow(rpc_call *call, void *array, size_t n, size_t *cap,
                  size_t elem)
{
    if (n < *cap)
        return array;
    size_t ncap = *cap == 0 ? 16 : *cap * 2;
    void *bigger = rpc_call_alloc(call, ncap * elem);
    if (n > 0)
        memcpy(bigger, array, n * elem);
    *cap = ncap;
    return bigger;
}

bool tkgit__paths_ok(rpc_call *call, size_t n, const ProtobufCBinaryData *p)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i].len == 0 || memchr(p[i].data, '\0', p[i].len) != NULL) {
            rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH",
                          "paths[%zu] is empty or holds a NUL byte", i);
            return false;
        }
    }
    return true;
}

bool tkgit__required(rpc_call *call, const char *s, const char *field)
{
    if (s == NULL || s[0] == '\0') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                      "%s is required", field);
        return false;
    }
    return true;
}

bool tkgit__rev_ok(rpc_call *call, const char *rev, const char *field)
{
    if (rev != NULL && rev[0] == '-') {
        rpc_call_fail(call, RPC_NOT_FOUND, TKGIT_R_BAD_REVISION,
                      "%s: no revision begins with '-' (\"%.200s\")", field,
                      rev);
        return false;
    }
    return true;
}

bool tkgit__branch_ok(rpc_call *call, const char *name, const char *field)
{
    /* libgit2's check is git's check-ref-format of refs/heads/NAME, with
     * git branch's own two rules: no leading '-', not "HEAD"
     * (tests/security/test_git_options.py compares it with git's). */
    int valid = 0;
    if (git_branch_name_is_valid(&valid, name) < 0 || !valid) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, TKGIT_R_BAD_BRANCH_NAME,
                      "%s: \"%.200s\" is not a valid branch name (git "
                      "check-ref-format's rules; it may not begin with '-')",
                      field, name);
        return false;
    }
    return true;
}
