/* What every handler shares, beneath them all: a request's paths and
 * revisions checked, a reply's repeated fields grown in the call's memory. */
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
