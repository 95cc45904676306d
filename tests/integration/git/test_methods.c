/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git with real git and real repositories (git_fx.h): what each
 * method returns, a leading '-' always being data; without git, and with git
 * gone after the start.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git_fx.h"
#include "tk/v1/git.tk.h"

/* ---- what the methods return ------------------------------------------- */

/* Without git on PATH the service still starts: what runs git says so,
 * with tool/'s one answer for a missing program (FAILED_PRECONDITION
 * TOOL_NOT_FOUND, as Search and Services say it); libgit2's methods
 * (RevParse, ConfigGet) still answer. */
static void test_without_git(void **state)
{
    (void)state;
    ts_fx f;
    fx_start_git(&f, 0, 0, "tk-no-such-git-program");
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)at("main");
    Tk__V1__GitStatusReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_status(f.client, &req, &rep, &o, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_non_null(strstr(st.message, "is not on tkd's PATH"));
    tk_status_clear(&st);
    Tk__V1__GitRevParseRequest rreq = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    rreq.repo = (char *)at("main");
    rreq.rev = "HEAD";
    Tk__V1__GitRevParseReply *rrep = NULL;
    assert_int_equal(tk_git_rev_parse(f.client, &rreq, &rrep, &o, &st), TK_OK);
    protobuf_c_message_free_unpacked(&rrep->base, NULL);
    tk_status_clear(&st);
    Tk__V1__GitConfigGetRequest creq = TK__V1__GIT_CONFIG_GET_REQUEST__INIT;
    creq.repo = (char *)at("main");
    creq.key = "user.name";
    Tk__V1__GitConfigGetReply *crep = NULL;
    assert_int_equal(tk_git_config_get(f.client, &creq, &crep, &o, &st), TK_OK);
    assert_true(bin_eq(crep->value, "Tk Tester"));
    protobuf_c_message_free_unpacked(&crep->base, NULL);
    tk_status_clear(&st);
    ts_fx_stop(&f);
}

static int status_of_main(tk_client *c, tk_status *st)
{
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)at("main");
    Tk__V1__GitStatusReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_status(c, &req, &rep, &o, st);
    if (rep != NULL)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    return code;
}

/* The git tkd found at start, gone when a call runs it: the same answer
 * as no git at all, FAILED_PRECONDITION TOOL_NOT_FOUND (it was INTERNAL
 * GIT_NOT_STARTED), for a READ and for a WRITE, which did not complete.
 * One there but not executable: INTERNAL TOOL_NOT_STARTED. The negative
 * control: the same calls while it is there. */
static void test_git_gone_after_start(void **state)
{
    (void)state;
    char tmp[PATH_MAX], link[PATH_MAX + 16];
    assert_int_equal(ts_mkdtemp(tmp, sizeof tmp, "gitgone"), 0);
    snprintf(link, sizeof link, "%s/git", tmp);
    assert_int_equal(symlink(git_bin, link), 0);
    ts_fx f;
    fx_start_git(&f, 0, 0, link);
    tk_status st;
    assert_int_equal(status_of_main(f.client, &st), TK_OK);
    tk_status_clear(&st);

    assert_int_equal(unlink(link), 0);
    assert_int_equal(status_of_main(f.client, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_non_null(strstr(st.message, "program not found"));
    tk_status_clear(&st);
    Tk__V1__GitConfigSetRequest req = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.key = "user.name";
    req.value = "Gone";
    Tk__V1__GitConfigSetReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_config_set(f.client, &req, &rep, &o, &st),
                     TK_CODE_FAILED_PRECONDITION);
    expect(&st, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_false(st.write_completed);
    tk_status_clear(&st);

    int fd = open(link, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(status_of_main(f.client, &st), TK_CODE_INTERNAL);
    expect(&st, TK_CODE_INTERNAL, "TOOL_NOT_STARTED");
    tk_status_clear(&st);
    ts_fx_stop(&f);
    ts_rmtree(tmp);
}

static void test_rev_parse(void **state)
{
    (void)state;
    char oid[41];
    tk_status st;
    assert_int_equal(rev_parse(at("main"), "HEAD", oid, &st), TK_OK);
    assert_int_equal(strlen(oid), 40);
    tk_status_clear(&st);
    /* A subdirectory names its repository; "-n" is a revision. */
    assert_int_equal(rev_parse(at("main/dir"), "HEAD", oid, &st), TK_OK);
    tk_status_clear(&st);
    rev_parse(at("main"), "-n", oid, &st);
    expect(&st, TK_CODE_NOT_FOUND, "BAD_REVISION");
    tk_status_clear(&st);
}

static void test_status(void **state)
{
    (void)state;
    const char *repo = scratch("status");
    char p1[PATH_MAX + 64], p2[PATH_MAX + 64];
    snprintf(p1, sizeof p1, "%s/new \303\274.txt", repo);
    write_file(p1, "new\n", 0644);
    snprintf(p2, sizeof p2, "%s/a b.txt", repo);
    write_file(p2, "changed\n", 0644);
    GIT(repo, "mv", "dir/x", "dir/y");
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitStatusReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_status(fx.client, &req, &rep, &o, &st), TK_OK);
    assert_true(bin_eq(rep->branch->head, "main"));
    assert_true(bin_eq(rep->branch->upstream, "origin/main"));
    assert_true(rep->branch->has_ahead_behind);
    assert_int_equal(rep->branch->ahead, 0);
    assert_int_equal(strlen(rep->branch->oid), 40);
    int seen = 0;
    for (size_t i = 0; i < rep->n_entries; i++) {
        const Tk__V1__GitStatusEntry *e = rep->entries[i];
        if (bin_eq(e->path, "a b.txt")) {
            assert_int_equal(e->kind, TK__V1__GIT_STATUS_ENTRY__KIND__CHANGED);
            assert_string_equal(e->index_status, ".");
            assert_string_equal(e->worktree_status, "M");
            assert_int_equal(e->n_oids, 2);
            seen |= 1;
        } else if (bin_eq(e->path, "dir/y")) {
            assert_int_equal(e->kind, TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED);
            assert_true(bin_eq(e->orig_path, "dir/x"));
            assert_string_equal(e->score, "R100");
            seen |= 2;
        } else if (bin_eq(e->path, "new \303\274.txt")) { /* its bytes */
            assert_int_equal(e->kind,
                             TK__V1__GIT_STATUS_ENTRY__KIND__UNTRACKED);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static void test_diff(void **state)
{
    (void)state;
    Tk__V1__GitDiffRequest req = TK__V1__GIT_DIFF_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.from = "light";
    req.to = "v1";
    Tk__V1__GitDiffReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_OK);
    assert_int_equal(rep->n_files, 3); /* a b.txt, dir/x, side.txt */
    assert_true(bin_eq(rep->files[0]->path, "a b.txt"));
    assert_int_equal(rep->files[0]->added, 1);
    assert_int_equal(rep->files[0]->deleted, 0);
    assert_non_null(memmem(rep->patch.data, rep->patch.len,
                           "diff --git a/a b.txt b/a b.txt", 30));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);

    /* A binary file: counted as binary, and a path beginning with '-' is a
     * path (no such file: an empty diff, not an option error). */
    req.from = "v1";
    req.to = "HEAD";
    ProtobufCBinaryData paths[] = { bin("bin.dat"), bin("-x") };
    req.paths = paths;
    req.n_paths = 2;
    assert_int_equal(tk_git_diff(fx.client, &req, &rep, &o, &st), TK_OK);
    assert_int_equal(rep->n_files, 1);
    assert_true(rep->files[0]->binary);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static Tk__V1__GitGrepReply *grep(const char *pattern, uint32_t max,
                                  tk_status *st)
{
    Tk__V1__GitGrepRequest req = TK__V1__GIT_GREP_REQUEST__INIT;
    req.repo = (char *)at("main");
    req.pattern = (char *)pattern;
    req.max_matches = max;
    Tk__V1__GitGrepReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_grep(fx.client, &req, &rep, &o, st), TK_OK);
    return rep;
}

static void test_grep(void **state)
{
    (void)state;
    tk_status st;
    /* A pattern beginning with '-' is the pattern; binary files skipped. */
    Tk__V1__GitGrepReply *rep = grep("-x", 0, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_true(bin_eq(rep->matches[0]->path, "n.txt"));
    assert_int_equal(rep->matches[0]->line, 1);
    assert_int_equal(rep->matches[0]->column, 8);
    assert_true(bin_eq(rep->matches[0]->text, "needle -x here"));
    assert_false(st.partial);
    assert_string_equal(st.tool, "git grep");
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* Literal: "." is a dot, not any character. No match is a success. */
    rep = grep("needle.", 0, &st);
    assert_int_equal(rep->n_matches, 0);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* The limit: partial, cause LIMIT. */
    rep = grep("e", 1, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_true(st.partial);
    assert_int_equal(st.cause, TK_CAUSE_LIMIT);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    /* As many matches as the limit, and no more: whole, not partial. */
    rep = grep("-x", 1, &st);
    assert_int_equal(rep->n_matches, 1);
    assert_false(st.partial);
    assert_int_equal(st.cause, TK_CAUSE_NONE);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
}

static void test_writes(void **state)
{
    (void)state;
    const char *repo = scratch("writes");
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/-dash.txt", repo);
    write_file(path, "dash\n", 0644);
    tk_call_opts o = { .timeout_ms = 20000 };
    tk_status st;

    Tk__V1__GitCommitRequest c = TK__V1__GIT_COMMIT_REQUEST__INIT;
    c.repo = (char *)repo;
    c.message = "-m is a message\n\nwith a body";
    ProtobufCBinaryData paths[] = { bin("-dash.txt") };
    c.paths = paths;
    c.n_paths = 1;
    c.author_name = "Other Author";
    c.author_email = "other@example.com";
    Tk__V1__GitCommitReply *cr = NULL;
    assert_int_equal(tk_git_commit(fx.client, &c, &cr, &o, &st), TK_OK);
    assert_true(st.write_completed);
    char head[41];
    tk_status st2;
    assert_int_equal(rev_parse(repo, "HEAD", head, &st2), TK_OK);
    assert_string_equal(cr->oid, head);
    protobuf_c_message_free_unpacked(&cr->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    Tk__V1__GitCheckoutRequest co = TK__V1__GIT_CHECKOUT_REQUEST__INIT;
    co.repo = (char *)repo;
    co.rev = "v1";
    co.create_branch = "from-v1";
    Tk__V1__GitCheckoutReply *cor = NULL;
    assert_int_equal(tk_git_checkout(fx.client, &co, &cor, &o, &st), TK_OK);
    assert_int_equal(rev_parse(repo, "v1^{commit}", head, &st2), TK_OK);
    assert_string_equal(cor->oid, head);
    protobuf_c_message_free_unpacked(&cor->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    Tk__V1__GitWorktreeAddRequest w = TK__V1__GIT_WORKTREE_ADD_REQUEST__INIT;
    w.repo = (char *)repo;
    w.path = (char *)at("writes-wt");
    w.rev = "light";
    w.new_branch = "wt-branch";
    Tk__V1__GitWorktreeAddReply *wr = NULL;
    assert_int_equal(tk_git_worktree_add(fx.client, &w, &wr, &o, &st), TK_OK);
    assert_int_equal(rev_parse(repo, "light", head, &st2), TK_OK);
    assert_string_equal(wr->oid, head);
    assert_true(exists(at("writes-wt/h\303\251llo.txt")));
    protobuf_c_message_free_unpacked(&wr->base, NULL);
    tk_status_clear(&st);
    tk_status_clear(&st2);

    /* Repository-local only; a value beginning with '-' is a value. */
    Tk__V1__GitConfigSetRequest cs = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    cs.repo = (char *)repo;
    cs.key = "user.name";
    cs.value = "-z";
    Tk__V1__GitConfigSetReply *csr = NULL;
    assert_int_equal(tk_git_config_set(fx.client, &cs, &csr, &o, &st), TK_OK);
    protobuf_c_message_free_unpacked(&csr->base, NULL);
    tk_status_clear(&st);
    const char *args[] = { "config", "--local", "--get", "user.name", NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    assert_string_equal(out, "-z\n");
    free(out);
    assert_false(exists(at("home/.gitconfig")));
}

/* ConfigGet on the group's server: 0 and *value (malloc'd), or the
 * code with st. */
static int config_get(const char *repo, const char *key, char **value,
                      tk_status *st)
{
    Tk__V1__GitConfigGetRequest req = TK__V1__GIT_CONFIG_GET_REQUEST__INIT;
    req.repo = (char *)repo;
    req.key = (char *)key;
    Tk__V1__GitConfigGetReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_config_get(fx.client, &req, &rep, &o, st);
    *value = NULL;
    if (rep != NULL) {
        *value = strndup((const char *)rep->value.data, rep->value.len);
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    }
    return code;
}

/* ConfigGet reads back what ConfigSet wrote (the key without case, as
 * git compares it), the last of a key set twice, as git config --get;
 * a key not set is NOT_FOUND CONFIG_KEY_NOT_SET; the keys ConfigSet
 * refuses, refused the same, before the repository is read; a repo
 * outside the roots, PATH_OUTSIDE_ROOT. */
static void test_config_get(void **state)
{
    (void)state;
    const char *repo = scratch("config-get");
    tk_status st;
    char *v;
    assert_int_equal(config_get(repo, "branch.main.description", &v, &st),
                     TK_CODE_NOT_FOUND);
    expect(&st, TK_CODE_NOT_FOUND, "CONFIG_KEY_NOT_SET");
    assert_non_null(strstr(st.message, "Git/ConfigSet"));
    tk_status_clear(&st);

    Tk__V1__GitConfigSetRequest cs = TK__V1__GIT_CONFIG_SET_REQUEST__INIT;
    cs.repo = (char *)repo;
    cs.key = "branch.main.description";
    cs.value = "-z \"quoted\"\tand\\ escaped";
    Tk__V1__GitConfigSetReply *csr = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    assert_int_equal(tk_git_config_set(fx.client, &cs, &csr, &o, &st), TK_OK);
    protobuf_c_message_free_unpacked(&csr->base, NULL);
    tk_status_clear(&st);
    assert_int_equal(config_get(repo, "Branch.main.DESCRIPTION", &v, &st),
                     TK_OK);
    assert_string_equal(v, cs.value);
    free(v);
    tk_status_clear(&st);

    GIT(repo, "config", "--local", "--add", "branch.main.description",
        "second");
    assert_int_equal(config_get(repo, "branch.main.description", &v, &st),
                     TK_OK);
    assert_string_equal(v, "second");
    free(v);
    tk_status_clear(&st);

    /* Set in the repository, but no key of the allowlist. */
    GIT(repo, "config", "--local", "remote.origin.url",
        "https://user:secret@example.com/r.git");
    const struct {
        const char *key, *reason;
        int code;
    } refused[] = {
        { "remote.origin.url", "CONFIG_KEY_NOT_ALLOWED",
          TK_CODE_PERMISSION_DENIED },
        { "core.fsmonitor", "CONFIG_KEY_NOT_ALLOWED",
          TK_CODE_PERMISSION_DENIED },
        { "nodot", "BAD_CONFIG_KEY", TK_CODE_INVALID_ARGUMENT },
        { "", "BAD_CONFIG_KEY", TK_CODE_INVALID_ARGUMENT },
        { "branch..merge", "BAD_CONFIG_KEY", TK_CODE_INVALID_ARGUMENT },
        { "branch.-x.merge", "BAD_BRANCH_NAME", TK_CODE_INVALID_ARGUMENT },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(config_get(repo, refused[i].key, &v, &st),
                         refused[i].code);
        expect(&st, refused[i].code, refused[i].reason);
        assert_null(strstr(st.message, "secret"));
        tk_status_clear(&st);
    }

    /* The owner's config (global, scoped to repo by an includeIf) is
     * git's answer, not ConfigGet's: never global or system. */
    char real[PATH_MAX], inc[PATH_MAX + 16], key[PATH_MAX + 32],
        global[PATH_MAX + 16];
    assert_non_null(realpath(repo, real));
    snprintf(inc, sizeof inc, "%s.owner", real);
    snprintf(key, sizeof key, "includeIf.gitdir:%s/.git.path", real);
    snprintf(global, sizeof global, "%s/.gitconfig", getenv("HOME"));
    GIT(dir, "config", "--file", inc, "author.name", "Owner");
    GIT(dir, "config", "--file", global, key, inc);
    const char *args[] = { "config", "--get", "author.name", NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    assert_string_equal(out, "Owner\n");
    free(out);
    assert_int_equal(config_get(repo, "author.name", &v, &st),
                     TK_CODE_NOT_FOUND);
    expect(&st, TK_CODE_NOT_FOUND, "CONFIG_KEY_NOT_SET");
    tk_status_clear(&st);

    assert_int_equal(config_get("/", "user.name", &v, &st),
                     TK_CODE_PERMISSION_DENIED);
    expect(&st, TK_CODE_PERMISSION_DENIED, "PATH_OUTSIDE_ROOT");
    tk_status_clear(&st);
}

int main(void)
{
    if (git_fx_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rev_parse),
        cmocka_unit_test(test_without_git),
        cmocka_unit_test(test_git_gone_after_start),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_grep),
        cmocka_unit_test(test_writes),
        cmocka_unit_test(test_config_get),
    };
    int rv = cmocka_run_group_tests(tests, git_fx_setup, git_fx_teardown);
    git_fx_fini();
    return rv;
}
