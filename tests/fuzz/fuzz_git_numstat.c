/* SPDX-License-Identifier: MIT */
/*
 * git_numstat: `git diff --numstat -z -p` output, any bytes, through the
 * parser tk.v1.Git/Diff runs on it (service/git/porcelain.c,
 * tkgit__test_parse_numstat): the numstat block, then the patch.
 *
 * Checked: the parser reads or refuses, within the input's bytes (ASan);
 * the patch starts inside the input (or at its end); each file's path
 * and old path are bytes of the input (empty ones included: git prints
 * none, and the parser takes what it is given), and it has counts only
 * when it is not binary; the GitDiffReply packs and unpacks.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_call *call = rpc__test_call_new();
    FUZZ_CHECK(call != NULL, "out of memory");
    Tk__V1__GitDiffReply reply = TK__V1__GIT_DIFF_REPLY__INIT;
    long patch =
        tkgit__test_parse_numstat(call, (const char *)data, size, &reply);
    FUZZ_CHECK(patch == -1 || (patch >= 0 && (size_t)patch <= size),
               "the patch starts at %ld of %zu bytes", patch, size);
    if (patch >= 0) {
        for (size_t i = 0; i < reply.n_files; i++) {
            const Tk__V1__GitFileStat *f = reply.files[i];
            FUZZ_CHECK(inside(data, size, f->path),
                       "file %zu: a path that is not input", i);
            FUZZ_CHECK(inside(data, size, f->old_path),
                       "file %zu: an old path that is not input", i);
            FUZZ_CHECK(!f->binary || (f->added == 0 && f->deleted == 0),
                       "file %zu: binary with line counts", i);
        }
        reply.patch.data = (uint8_t *)data + patch;
        reply.patch.len = size - (size_t)patch;
        size_t n = tk__v1__git_diff_reply__get_packed_size(&reply);
        uint8_t *buf = malloc(n > 0 ? n : 1);
        FUZZ_CHECK(buf != NULL, "out of memory");
        tk__v1__git_diff_reply__pack(&reply, buf);
        Tk__V1__GitDiffReply *back =
            tk__v1__git_diff_reply__unpack(NULL, n, buf);
        FUZZ_CHECK(back != NULL && back->n_files == reply.n_files,
                   "the reply does not unpack to its files");
        tk__v1__git_diff_reply__free_unpacked(back, NULL);
        free(buf);
    }
    rpc__test_call_free(call);
    return 0;
}
