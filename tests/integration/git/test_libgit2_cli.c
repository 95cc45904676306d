/* SPDX-License-Identifier: MIT */
/*
 * tk.v1.Git's in-process reads through libgit2 (RevParse, Log) against the
 * git CLI on the same fixtures (git_fx.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git_fx.h"
#include "tk/v1/git.tk.h"

/* ---- libgit2 against the git CLI --------------------------------------------
 */

/* The revisions libgit2 would resolve with a regular expression (":/",
 * "^{/", "@{-N}", "@{upstream}", "@{push}", a describe name) are resolved
 * by git rev-parse: they are compared here as well. */
static const struct {
    const char *repo;
    const char *revs[32];
} rev_cases[] = {
    { "main",
      { "HEAD",
        "HEAD~1",
        "HEAD~3",
        "HEAD~3^2",
        "HEAD~3^2~1",
        "HEAD^2",
        "HEAD~100",
        "v1",
        "v1^{}",
        "v1^{commit}",
        "v1^{tree}",
        "v1^{blob}",
        "light",
        "side",
        "main",
        "refs/heads/side",
        "HEAD:a b.txt",
        "HEAD:h\303\251llo.txt",
        "HEAD:dir",
        "HEAD^{tree}:dir/x",
        "HEAD:raw\377name.txt",
        ":/tie one",
        "HEAD@{0}",
        "@",
        "HEAD^0",
        "no-such",
        "-n",
        "side@{upstream}",
        "HEAD:no-such",
        "%SHORT%",
        NULL } },
    /* resolved by git */
    { "main",
      { ":/second", ":/no such text", ":/", "HEAD^{/side: a}", "HEAD^{/}",
        "HEAD^{/no such text}", "side^{/first}~1", "HEAD^{/first}:dir/x",
        "@{-1}", "@{-1}~1", "@{-9}", "nosuch@{u}", "main@{push}", "%DESCRIBE%",
        "v1-1-gffff", "no-such-gizmo", "HEAD@{1.day.ago}", NULL } },
    { "clone",
      { "HEAD", "origin/main", "origin/HEAD", "@{upstream}", "HEAD@{u}~1",
        "main@{u}", "v1", "@{push}", "main@{U}", ":/clone", NULL } },
    { "clone-detached", { "HEAD", "HEAD~1", "main", "@", "@{u}", NULL } },
    { "unborn",
      { "HEAD", "main", "@", "HEAD~1", "@{-1}", ":/x", "@{u}", NULL } },
    { "bare.git", { "HEAD", "v1^{}", "side~1", ":/side", NULL } },
};

static void test_differential_rev_parse(void **state)
{
    (void)state;
    char head[41], shortoid[8], describe[32];
    cli_rev_parse(at("main"), "HEAD", head);
    snprintf(shortoid, sizeof shortoid, "%.7s", head);
    snprintf(describe, sizeof describe, "v1-2-g%.7s", head);
    int compared = 0, found = 0;
    for (size_t i = 0; i < sizeof rev_cases / sizeof rev_cases[0]; i++) {
        const char *repo = at(rev_cases[i].repo);
        for (size_t j = 0; rev_cases[i].revs[j] != NULL; j++) {
            const char *rev = rev_cases[i].revs[j];
            if (strcmp(rev, "%SHORT%") == 0)
                rev = shortoid;
            else if (strcmp(rev, "%DESCRIBE%") == 0)
                rev = describe;
            char cli[41], lg[41] = "";
            cli_rev_parse(repo, rev, cli);
            tk_status st;
            if (rev_parse(repo, rev, lg, &st) != TK_OK) {
                if (strcmp(st.reason, "BAD_REVISION") != 0 &&
                    strcmp(st.reason, "UNBORN_HEAD") != 0)
                    fail_msg("%s %s: %s", rev_cases[i].repo, rev, st.message);
                lg[0] = '\0';
            }
            tk_status_clear(&st);
            if (strcmp(cli, lg) != 0)
                fail_msg("%s: rev-parse \"%s\": git \"%s\", libgit2 \"%s\"",
                         rev_cases[i].repo, rev, cli, lg);
            compared++;
            found += cli[0] != '\0';
        }
    }
    assert_true(compared >= 70 && found >= 40);
}

/* One commit as git log's format below prints it. */
static void render(char *buf, size_t len, const Tk__V1__GitCommit *c)
{
    size_t n = (size_t)snprintf(buf, len, "%s\x1f", c->oid);
    for (size_t i = 0; i < c->n_parents && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
                              c->parents[i]);
    const Tk__V1__GitSignature *sig[2] = { c->author, c->committer };
    for (int k = 0; k < 2 && n < len; k++) {
        int off = sig[k]->offset_minutes, a = off < 0 ? -off : off;
        n += (size_t)snprintf(
            buf + n, len - n, "\x1f%.*s\x1f%.*s\x1f%lld %c%02d%02d",
            (int)sig[k]->name.len, (const char *)sig[k]->name.data,
            (int)sig[k]->email.len, (const char *)sig[k]->email.data,
            (long long)sig[k]->time, off < 0 ? '-' : '+', a / 60, a % 60);
    }
    if (n < len)
        snprintf(buf + n, len - n, "\x1f%.*s\x1f%.*s", (int)c->subject.len,
                 (const char *)c->subject.data, (int)c->body.len,
                 (const char *)c->body.data);
}

typedef struct log_case {
    const char *repo, *rev;
    uint32_t max, skip;
    const char *paths[3];
} log_case;

static const log_case log_cases[] = {
    { "main", "", 0, 0, { NULL } },
    { "main", "HEAD~3", 0, 0, { NULL } },
    { "main", "side", 0, 0, { NULL } },
    { "main", "v1", 0, 0, { NULL } },
    { "main", "light..side", 0, 0, { NULL } },
    { "main", "side..", 0, 0, { NULL } },
    { "main", "", 3, 2, { NULL } },
    { "main", "", 0, 0, { "a b.txt", NULL } },
    { "main", "", 0, 0, { "dir", NULL } },
    { "main", "", 0, 0, { "dir/", NULL } },
    { "main", "", 0, 0, { "h\303\251llo.txt", NULL } },
    { "main", "", 0, 0, { "side.txt", NULL } },
    { "main", "", 0, 0, { "raw\377name.txt", "dir/x", NULL } },
    { "main", "side", 1, 1, { "dir/x", NULL } },
    { "main", "", 0, 0, { "no-such", NULL } },
    /* revisions resolved by git */
    { "main", ":/second", 0, 0, { NULL } },
    { "main", "HEAD^{/side: a}", 0, 0, { NULL } },
    { "main", "@{-1}", 0, 0, { NULL } },
    { "main", "HEAD^{/first}..@{-1}", 0, 0, { NULL } },
    { "main", ":/no such text", 0, 0, { NULL } },
    { "clone", "@{u}..", 0, 0, { NULL } },
    { "clone", "@{u}", 2, 1, { "a b.txt", NULL } },
    { "clone", "origin/main..HEAD", 0, 0, { NULL } },
    { "clone-detached", "", 0, 0, { NULL } },
    { "bare.git", "", 0, 0, { NULL } },
    { "unborn", "", 0, 0, { NULL } },
};

/* Fields apart by 0x1f: what render() builds from a reply. */
#define LOG_FORMAT                                                             \
    "--format=%H%x1f%P%x1f%an%x1f%ae%x1f%ad%x1f%cn%x1f%ce%x1f%cd%x1f%s%x1f%b"

/* The CLI's log as records; NULL when git refused. */
static char *cli_log(const log_case *c, size_t *len)
{
    char max[32], skip[32];
    snprintf(max, sizeof max, "--max-count=%u", c->max ? c->max : 100000u);
    snprintf(skip, sizeof skip, "--skip=%u", c->skip);
    const char *args[16] = {
        "--literal-pathspecs", "log", "-z", "--date=raw", max, skip, LOG_FORMAT,
    };
    size_t n = 7;
    if (c->rev[0] != '\0')
        args[n++] = c->rev;
    args[n++] = "--";
    for (size_t i = 0; c->paths[i] != NULL; i++)
        args[n++] = c->paths[i];
    args[n] = NULL;
    int status;
    char *out = git_cli(at(c->repo), &status, len, args);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void compare_log(const log_case *c)
{
    size_t len;
    char *cli = cli_log(c, &len);
    Tk__V1__GitLogRequest req = TK__V1__GIT_LOG_REQUEST__INIT;
    req.repo = (char *)at(c->repo);
    req.rev = (char *)c->rev;
    req.max_count = c->max;
    req.skip = c->skip;
    ProtobufCBinaryData paths[3];
    for (; c->paths[req.n_paths] != NULL; req.n_paths++)
        paths[req.n_paths] = bin(c->paths[req.n_paths]);
    req.paths = paths;
    Tk__V1__GitLogReply *rep = NULL;
    tk_status st;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_log(fx.client, &req, &rep, &o, &st);
    if ((cli == NULL) != (code != TK_OK))
        fail_msg("%s log %s: git %s, libgit2 %s (%s)", c->repo, c->rev,
                 cli ? "answered" : "refused", tk_code_name(code), st.message);
    size_t pos = 0, i = 0;
    for (; cli != NULL && pos < len; i++) {
        const char *rec = cli + pos;
        pos += strlen(rec) + 1;
        if (i >= rep->n_commits)
            fail_msg("%s log %s: libgit2 has %zu commits, git more", c->repo,
                     c->rev, rep->n_commits);
        static char mine[65536];
        render(mine, sizeof mine, rep->commits[i]);
        if (strcmp(rec, mine) != 0)
            fail_msg("%s log %s #%zu:\n git:     %s\n libgit2: %s", c->repo,
                     c->rev, i, rec, mine);
    }
    if (code == TK_OK && i != rep->n_commits)
        fail_msg("%s log %s: git %zu commits, libgit2 %zu", c->repo, c->rev, i,
                 rep->n_commits);
    if (rep != NULL)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    free(cli);
}

static void test_differential_log(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof log_cases / sizeof log_cases[0]; i++)
        compare_log(&log_cases[i]);
}

int main(void)
{
    if (git_fx_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential_rev_parse),
        cmocka_unit_test(test_differential_log),
    };
    int rv = cmocka_run_group_tests(tests, git_fx_setup, git_fx_teardown);
    git_fx_fini();
    return rv;
}
