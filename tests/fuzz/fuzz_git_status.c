/* SPDX-License-Identifier: MIT */
/*
 * git_status: `git status --porcelain=v2 -z --branch` output, any bytes,
 * through the parser tk.v1.Git/Status runs on it (service/git/porcelain.c,
 * tkgit__test_parse_status).
 *
 * Checked: the parser reads or refuses, within the input's bytes (ASan);
 * what it fills in is a GitStatusReply that packs and unpacks; every
 * entry has its kind, one-letter index and worktree states where the
 * kind has them, and a path (and an original path for a rename) that
 * is bytes of the input.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "git/git.h"
#include "rpc/rpc.h"

static bool inside(const uint8_t *data, size_t size, ProtobufCBinaryData b)
{
    return b.len == 0 || (b.len <= size && memmem(data, size, b.data, b.len));
}

static void check_entry(const uint8_t *data, size_t size,
                        const Tk__V1__GitStatusEntry *e)
{
    bool states = e->kind == TK__V1__GIT_STATUS_ENTRY__KIND__CHANGED ||
                  e->kind == TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED ||
                  e->kind == TK__V1__GIT_STATUS_ENTRY__KIND__UNMERGED;
    FUZZ_CHECK(e->kind != TK__V1__GIT_STATUS_ENTRY__KIND__KIND_UNSPECIFIED,
               "an entry without a kind");
    if (states)
        FUZZ_CHECK(strlen(e->index_status) == 1 &&
                       strlen(e->worktree_status) == 1,
                   "states \"%s\" \"%s\"", e->index_status, e->worktree_status);
    FUZZ_CHECK(inside(data, size, e->path), "a path that is not input");
    FUZZ_CHECK(inside(data, size, e->orig_path),
               "an original path that is not input");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_call *call = rpc__test_call_new();
    FUZZ_CHECK(call != NULL, "out of memory");
    Tk__V1__GitStatusReply reply = TK__V1__GIT_STATUS_REPLY__INIT;
    int rv = tkgit__test_parse_status(call, (const char *)data, size, &reply);
    FUZZ_CHECK(rv == 0 || rv == -1, "returned %d", rv);
    if (rv == 0) {
        FUZZ_CHECK(reply.branch != NULL, "no branch");
        for (size_t i = 0; i < reply.n_entries; i++)
            check_entry(data, size, reply.entries[i]);
        size_t n = tk__v1__git_status_reply__get_packed_size(&reply);
        uint8_t *buf = malloc(n > 0 ? n : 1);
        FUZZ_CHECK(buf != NULL, "out of memory");
        tk__v1__git_status_reply__pack(&reply, buf);
        Tk__V1__GitStatusReply *back =
            tk__v1__git_status_reply__unpack(NULL, n, buf);
        FUZZ_CHECK(back != NULL && back->n_entries == reply.n_entries,
                   "the reply does not unpack to its entries");
        tk__v1__git_status_reply__free_unpacked(back, NULL);
        free(buf);
    }
    rpc__test_call_free(call);
    return 0;
}
