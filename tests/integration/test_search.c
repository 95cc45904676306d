/* SPDX-License-Identifier: MIT */
/* tk.v1.Search end to end: a real tkd whose PATH is a directory the test
 * fills with the tools it wants (symlinks to the real rg, git and grep, or
 * /bin/sh wrappers around them), real tools on fixture trees, the C
 * client. A wrapper announces each start by writing its pid (= its process
 * group) to a FIFO the test reads; a search is made long by a FIFO the
 * real tool reads and nobody writes to. Every wait is on output or a FIFO,
 * never a sleep. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>
#include <tk/v1/search.tk.h>

#include "stats.h"
#include "support.h"
#include "tree.h"

#define START_MS 20000
#define WAIT_MS 20000

enum { RG = 1, GIT_GREP = 2, GREP = 3 };
static const int all_tools[] = { RG, GIT_GREP, GREP };
static const char *const tool_names[] = { "AUTO", "rg", "git", "grep" };

/* ---- tkd with a PATH of the test's making ------------------------------- */

typedef struct tkd {
    char dir[256];
    char root[300]; /* the --root */
    char bin[300];  /* tkd's PATH */
    char url[320];
    char started[320]; /* the FIFO wrappers announce themselves on */
    int started_fd;
    char lines[4096]; /* read from started, not yet taken */
    size_t n_lines;
    ts_proc p;
    tk_client *c;
    bool up;
} tkd;

static void tkd_init(tkd *d, const char *tag)
{
    memset(d, 0, sizeof *d);
    d->started_fd = -1;
    assert_int_equal(ts_mkdtemp(d->dir, sizeof d->dir, tag), 0);
    snprintf(d->root, sizeof d->root, "%s/root", d->dir);
    snprintf(d->bin, sizeof d->bin, "%s/bin", d->dir);
    snprintf(d->url, sizeof d->url, "ipc://%s/tkd.sock", d->dir);
    snprintf(d->started, sizeof d->started, "%s/started", d->dir);
    tree_mkdir(d->dir, "root");
    tree_mkdir(d->dir, "bin");
    tree_mkfifo(d->dir, "started");
    /* Read and write, so that a wrapper never blocks opening it. */
    d->started_fd = open(d->started, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    assert_true(d->started_fd >= 0);
}

static bool real_tool(const char *name, char *out, size_t len)
{
    return tree_which(name, out, len);
}

/* bin/name -> the real tool. */
static void link_tool(tkd *d, const char *name)
{
    char real[PATH_MAX];
    if (!real_tool(name, real, sizeof real))
        fail_msg("%s is not installed (tools/install-deps)", name);
    tree_symlink(real, d->bin, name);
}

/* bin/name: announces its pid on the started FIFO, then runs the real
 * tool with tail (a shell fragment) deciding how. */
static void wrap_tool(tkd *d, const char *name, const char *tail)
{
    char real[PATH_MAX], body[2 * PATH_MAX];
    if (!real_tool(name, real, sizeof real))
        fail_msg("%s is not installed", name);
    snprintf(body, sizeof body, "REAL='%s'\necho $$ > '%s'\n%s\n", real,
             d->started, tail);
    tree_script(d->bin, name, body);
}

typedef struct start_opts {
    const char *slots;
    bool drop_dac; /* run tkd without the root's file access override */
} start_opts;

static void tkd_start(tkd *d, const start_opts *so)
{
    char path[400], home[300], setpriv[PATH_MAX];
    snprintf(path, sizeof path, "PATH=%s", d->bin);
    snprintf(home, sizeof home, "HOME=%s", d->dir);
    const char *env[] = { path, home, NULL };
    const char *argv[16];
    size_t n = 0;
    if (so != NULL && so->drop_dac) {
        assert_true(tree_which("setpriv", setpriv, sizeof setpriv));
        argv[n++] = setpriv;
        argv[n++] = "--bounding-set=-dac_override,-dac_read_search";
        argv[n++] = "--inh-caps=-all";
    }
    const char *rest[] = { ts_program("TKD"),
                           "--listen",
                           d->url,
                           "--root",
                           d->root,
                           "--log-level",
                           "debug",
                           "--search-slots",
                           so != NULL && so->slots != NULL ? so->slots : "3" };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        argv[n++] = rest[i];
    argv[n] = NULL;
    assert_int_equal(ts_spawn(&d->p, argv, env), 0);
    d->up = true;
    if (!ts_wait_output(&d->p, 2, "listening on", START_MS))
        fail_msg("tkd did not start: %s", d->p.err ? d->p.err : "");
    char err[256];
    assert_int_equal(tk_client_open(&d->c, d->url, err, sizeof err), TK_OK);
}

static void tkd_stop(tkd *d)
{
    tk_client_close(d->c);
    d->c = NULL;
    if (d->up) {
        ts_signal(&d->p, SIGTERM);
        assert_int_equal(ts_finish(&d->p, WAIT_MS), 0);
        ts_proc_free(&d->p);
        d->up = false;
    }
    if (d->started_fd >= 0)
        close(d->started_fd);
    d->started_fd = -1;
    ts_rmtree(d->dir);
}

/* The next pid a wrapper announced, or -1 when none comes in timeout_ms
 * (0: only one already there). */
static pid_t next_start(tkd *d, int timeout_ms)
{
    for (;;) {
        char *nl = memchr(d->lines, '\n', d->n_lines);
        if (nl != NULL) {
            *nl = '\0';
            pid_t pid = (pid_t)strtol(d->lines, NULL, 10);
            size_t used = (size_t)(nl - d->lines) + 1;
            memmove(d->lines, nl + 1, d->n_lines - used);
            d->n_lines -= used;
            return pid;
        }
        struct pollfd p = { .fd = d->started_fd, .events = POLLIN };
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        ssize_t got = read(d->started_fd, d->lines + d->n_lines,
                           sizeof d->lines - d->n_lines);
        if (got > 0)
            d->n_lines += (size_t)got;
    }
}

/* Nothing of the process group led by pid is alive. */
static void assert_group_gone(pid_t pgid)
{
    assert_true(pgid > 0);
    errno = 0;
    assert_int_equal(kill(-pgid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* ---- calls -------------------------------------------------------------- */

typedef struct sreq {
    const char *root;     /* relative to d->root; NULL: d->root itself */
    const char *abs_root; /* as it is, instead */
    const char *query;
    uint32_t limit;
    int tool;
    int hidden; /* -1 unset, 0, 1 */
    bool ignore_case, allow_unreadable;
    uint32_t timeout_ms;
    tk_cancel *cancel;
} sreq;

typedef struct sres {
    int code;
    tk_status st;
    Tk__V1__SearchReply *rep; /* on OK */
} sres;

static void call(tkd *d, const sreq *r, sres *out)
{
    char root[PATH_MAX];
    if (r->abs_root != NULL)
        snprintf(root, sizeof root, "%s", r->abs_root);
    else
        snprintf(root, sizeof root, "%s%s%s", d->root, r->root ? "/" : "",
                 r->root ? r->root : "");
    Tk__V1__SearchRequest req = TK__V1__SEARCH_REQUEST__INIT;
    req.root = root;
    req.query = (char *)r->query;
    req.limit = r->limit;
    req.tool = (Tk__V1__SearchRequest__Tool)r->tool;
    if (r->hidden >= 0) {
        req.hidden_case = TK__V1__SEARCH_REQUEST__HIDDEN_INCLUDE_HIDDEN;
        req.include_hidden = r->hidden == 1;
    }
    req.ignore_case = r->ignore_case;
    req.allow_unreadable = r->allow_unreadable;
    tk_call_opts opts = { .timeout_ms = r->timeout_ms ? r->timeout_ms : 20000,
                          .cancel = r->cancel };
    memset(out, 0, sizeof *out);
    out->code = tk_search_search(d->c, &req, &out->rep, &opts, &out->st);
}

static void sres_free(sres *s)
{
    if (s->rep != NULL)
        protobuf_c_message_free_unpacked(&s->rep->base, NULL);
    s->rep = NULL;
    tk_status_clear(&s->st);
}

static void expect_ok(const sres *s)
{
    if (s->code != TK_OK)
        fail_msg("%s %s: %s", tk_code_name(s->code), s->st.reason,
                 s->st.message);
    assert_non_null(s->rep);
}

static void expect_fail(const sres *s, int code, const char *reason)
{
    if (s->code != code || strcmp(s->st.reason, reason) != 0)
        fail_msg("want %s %s, got %s %s: %s", tk_code_name(code), reason,
                 tk_code_name(s->code), s->st.reason, s->st.message);
    assert_null(s->rep);
    assert_true(s->st.from_server);
}

static bool has_line(const Tk__V1__SearchReply *rep, const char *path,
                     uint64_t line)
{
    for (size_t i = 0; i < rep->n_matches; i++) {
        const Tk__V1__SearchMatch *m = rep->matches[i];
        if (m->line == line && m->path.len == strlen(path) &&
            memcmp(m->path.data, path, m->path.len) == 0)
            return true;
    }
    return false;
}

/* A call on a thread of its own, for the tests that hold several. */
typedef struct async {
    tkd *d;
    sreq r;
    sres s;
    pthread_t t;
} async;

static void *async_run(void *arg)
{
    async *a = arg;
    call(a->d, &a->r, &a->s);
    return NULL;
}

static void async_start(async *a, tkd *d, const sreq *r)
{
    a->d = d;
    a->r = *r;
    assert_int_equal(pthread_create(&a->t, NULL, async_run, a), 0);
}

static void async_join(async *a)
{
    assert_int_equal(pthread_join(a->t, NULL), 0);
}

/* ---- tests -------------------------------------------------------------- */

static const char *const literal_lines[] = {
    "-e", "--help", "-", "--", "*", "a.b", "[x]", "$(id)", "needle", "NEEDLE",
};
#define N_LITERAL (sizeof literal_lines / sizeof literal_lines[0])

/* Queries that look like flags, globs or patterns are found literally, by
 * every tool, on exactly the lines that hold them. */
static void test_literal_queries(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-lit");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    link_tool(&d, "grep");
    char text[512] = "";
    for (size_t i = 0; i < N_LITERAL; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s\n",
                 literal_lines[i]);
    tree_puts(d.root, "lit.txt", text);
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    static const char *const queries[] = { "-e", "--help", "-",   "--",
                                           "*",  ".",      "[x]", "$(" };
    for (size_t t = 0; t < 3; t++) {
        for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
            sreq r = { .query = queries[q],
                       .tool = all_tools[t],
                       .hidden = -1 };
            sres s;
            call(&d, &r, &s);
            expect_ok(&s);
            assert_int_equal(s.rep->tool, all_tools[t]);
            size_t want = 0;
            for (size_t i = 0; i < N_LITERAL; i++) {
                bool holds = strstr(literal_lines[i], queries[q]) != NULL;
                want += holds;
                if (has_line(s.rep, "lit.txt", i + 1) != holds)
                    fail_msg("%s, query \"%s\": line %zu \"%s\"",
                             tool_names[all_tools[t]], queries[q], i + 1,
                             literal_lines[i]);
            }
            assert_int_equal(s.rep->n_matches, want);
            sres_free(&s);
        }
    }
    tkd_stop(&d);
}

/* Hidden files are searched unless the caller says include_hidden: false;
 * ignore_case folds; the status of a complete search is not partial. Each
 * call changes one of the two from the first. */
static void test_hidden_and_case(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-hid");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    link_tool(&d, "grep");
    tree_puts(d.root, ".github/workflows/ci.yml", "run: make # needle\n");
    tree_puts(d.root, "src/a.c", "/* needle */\n");
    tree_puts(d.root, "src/b.c", "/* NEEDLE */\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    static const struct {
        int hidden;
        bool ignore_case;
        bool ci, a, b; /* which files it finds */
    } cases[] = {
        { -1, false, true, true, false }, /* hidden by default */
        { 1, false, true, true, false },  /* said so */
        { 0, false, false, true, false }, /* include_hidden: false */
        { -1, true, true, true, true },   /* ignore_case */
    };
    for (size_t t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            sreq r = { .query = "needle",
                       .tool = all_tools[t],
                       .hidden = cases[i].hidden,
                       .ignore_case = cases[i].ignore_case };
            sres s;
            call(&d, &r, &s);
            expect_ok(&s);
            size_t want = cases[i].ci + cases[i].a + cases[i].b;
            if (s.rep->n_matches != want ||
                has_line(s.rep, ".github/workflows/ci.yml", 1) != cases[i].ci ||
                has_line(s.rep, "src/a.c", 1) != cases[i].a ||
                has_line(s.rep, "src/b.c", 1) != cases[i].b)
                fail_msg("%s, case %zu: %zu matches", tool_names[all_tools[t]],
                         i, s.rep->n_matches);
            assert_false(s.rep->partial);
            assert_false(s.st.partial);
            assert_int_equal(s.st.cause, TK_CAUSE_NONE);
            assert_int_equal(s.rep->stats->matched_lines, want);
            assert_int_equal(s.rep->stats->files_with_matches, want);
            sres_free(&s);
        }
    }
    tkd_stop(&d);
}

/* A search that finds nothing, with each tool: OK, no matches, complete
 * (not partial, cause NONE, nothing killed): the control for "a cancelled
 * search is never 0 hits". */
static void test_zero_hits(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-zero");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    link_tool(&d, "grep");
    tree_puts(d.root, "a.txt", "hay\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    for (size_t t = 0; t < 3; t++) {
        sreq r = { .query = "needle", .tool = all_tools[t], .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        expect_ok(&s);
        assert_int_equal(s.rep->tool, all_tools[t]);
        assert_int_equal(s.rep->n_matches, 0);
        assert_false(s.rep->partial);
        assert_false(s.st.partial);
        assert_int_equal(s.st.cause, TK_CAUSE_NONE);
        assert_false(s.st.process_killed);
        assert_int_equal(s.rep->stats->unreadable_files, 0);
        sres_free(&s);
    }
    tkd_stop(&d);
}

/* A query that is not UTF-8, in a file that is not either: rg refuses
 * such a pattern (exit status 2, even with -F), so AUTO passes rg over for
 * git grep (in a work tree) or grep, each finds it byte for byte, and a
 * forced rg is refused before it runs. */
static void test_non_utf8_query(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-bytes");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    link_tool(&d, "grep");
    static const char line[] = "x = \"caf\xe9 \xff\xfe\";\n";
    tree_write(d.root, "repo/latin1.txt", line, sizeof line - 1);
    tree_write(d.root, "plain/latin1.txt", line, sizeof line - 1);
    tree_puts(d.root, "repo/other.txt", "caf\xc3\xa9 \xff\n");
    const char *init[] = { "init", "-q", "repo", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    static const struct {
        const char *root;
        int tool, runs;
    } cases[] = {
        { "repo", 0, GIT_GREP },        { "plain", 0, GREP },
        { "repo", GIT_GREP, GIT_GREP }, { "repo", GREP, GREP },
        { "plain", GREP, GREP },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sreq r = { .root = cases[i].root,
                   .query = "caf\xe9 \xff",
                   .tool = cases[i].tool,
                   .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        expect_ok(&s);
        if ((int)s.rep->tool != cases[i].runs)
            fail_msg("case %zu: ran %s, want %s", i, tool_names[s.rep->tool],
                     tool_names[cases[i].runs]);
        assert_int_equal(s.rep->n_matches, 1);
        const Tk__V1__SearchMatch *m = s.rep->matches[0];
        assert_true(has_line(s.rep, "latin1.txt", 1));
        assert_int_equal(m->text.len, sizeof line - 2);
        assert_memory_equal(m->text.data, line, sizeof line - 2);
        assert_int_equal(m->column, 6);
        assert_int_equal(m->n_submatches, 1);
        assert_int_equal(m->submatches[0]->start, 5);
        assert_int_equal(m->submatches[0]->end, 11);
        assert_int_equal(s.rep->stats->unreadable_files, 0);
        sres_free(&s);
    }
    sreq r = { .root = "repo", .query = "\xff", .tool = RG, .hidden = -1 };
    sres s;
    call(&d, &r, &s);
    expect_fail(&s, TK_CODE_INVALID_ARGUMENT, "QUERY_NOT_UTF8");
    sres_free(&s);
    assert_int_equal(next_start(&d, 0), -1);
    tkd_stop(&d);
}

/* What rg says on stderr that is not about a file it could not read (here
 * an ignore file it cannot parse: a warning, exit status 0) counts no
 * unreadable file. */
static void test_rg_warning_not_unreadable(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-rgwarn");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    tree_puts(d.root, ".gitignore", "[abc\n");
    tree_puts(d.root, "a.txt", "needle\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    sreq r = { .query = "needle", .tool = RG, .hidden = -1 };
    sres s;
    call(&d, &r, &s);
    expect_ok(&s);
    assert_int_equal(s.rep->n_matches, 1);
    assert_int_equal(s.rep->stats->unreadable_files, 0);
    sres_free(&s);
    tkd_stop(&d);
}

/* Requests refused before any tool runs, each with its reason. */
static void test_bad_requests(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-bad");
    link_tool(&d, "rg");
    tree_puts(d.root, "a.txt", "needle\n");
    tree_mkdir(d.dir, "outside");
    tree_symlink("../outside", d.root, "escape");
    tkd_start(&d, NULL);
    static const struct {
        sreq r;
        int code;
        const char *reason;
    } cases[] = {
        { { .query = "", .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "EMPTY_QUERY" },
        { { .query = "a\nb", .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "NEWLINE_IN_QUERY" },
        { { .query = "x", .tool = 9, .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "BAD_TOOL" },
        { { .abs_root = "/", .query = "x", .hidden = -1 },
          TK_CODE_PERMISSION_DENIED,
          "PATH_OUTSIDE_ROOT" },
        { { .root = "escape", .query = "x", .hidden = -1 },
          TK_CODE_PERMISSION_DENIED,
          "PATH_OUTSIDE_ROOT" },
        { { .root = "../outside", .query = "x", .hidden = -1 },
          TK_CODE_PERMISSION_DENIED,
          "PATH_OUTSIDE_ROOT" },
        { { .root = "nope", .query = "x", .hidden = -1 },
          TK_CODE_PERMISSION_DENIED,
          "PATH_OUTSIDE_ROOT" },
        { { .abs_root = "relative/dir", .query = "x", .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "BAD_PATH" },
        { { .abs_root = "", .query = "x", .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "MISSING_FIELD" },
        { { .root = "a.txt", .query = "x", .hidden = -1 },
          TK_CODE_INVALID_ARGUMENT,
          "NOT_A_DIRECTORY" },
        { { .query = "x", .tool = GREP, .hidden = -1 },
          TK_CODE_FAILED_PRECONDITION,
          "TOOL_NOT_FOUND" },
        { { .query = "x", .tool = GIT_GREP, .hidden = -1 },
          TK_CODE_FAILED_PRECONDITION,
          "TOOL_NOT_FOUND" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sres s;
        call(&d, &cases[i].r, &s);
        expect_fail(&s, cases[i].code, cases[i].reason);
        sres_free(&s);
    }

    /* A bad root is named by its field, not as "the path is empty". */
    static const struct {
        const char *root, *says;
    } named[] = {
        { "", "root is required" },
        { "relative/dir", "root: \"relative/dir\" is not an absolute path" },
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        sreq r = { .abs_root = named[i].root, .query = "x", .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        assert_int_equal(s.st.code, TK_CODE_INVALID_ARGUMENT);
        if (strcmp(s.st.message, named[i].says) != 0)
            fail_msg("message \"%s\", want \"%s\"", s.st.message,
                     named[i].says);
        sres_free(&s);
    }

    /* The query's length: 4096 bytes is a query, one more is refused
     * (before, 200 KiB ended in exec's "Argument list too long"). */
    static char longq[200 * 1024 + 1];
    memset(longq, 'q', sizeof longq - 1);
    static const size_t lens[] = { 4096, 4097, sizeof longq - 1 };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        longq[lens[i]] = '\0';
        sreq r = { .query = longq, .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        if (lens[i] <= 4096) {
            expect_ok(&s);
            assert_int_equal(s.rep->n_matches, 0);
        } else {
            expect_fail(&s, TK_CODE_INVALID_ARGUMENT, "QUERY_TOO_LONG");
            assert_non_null(strstr(s.st.message, "at most 4096"));
        }
        sres_free(&s);
        longq[lens[i]] = 'q';
    }

    /* A NUL in the query: rpc refuses the string before the service. */
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", d.root);
    Tk__V1__SearchRequest req = TK__V1__SEARCH_REQUEST__INIT;
    req.root = root;
    req.query = "nee";
    uint8_t buf[PATH_MAX + 64];
    size_t n = tk__v1__search_request__pack(&req, buf);
    /* query is field 2, "nee": make it "n\0e" in place */
    uint8_t *q = memmem(buf, n, "\x12\x03nee", 5);
    assert_non_null(q);
    q[3] = 0;
    uint8_t *reply = NULL;
    size_t reply_len = 0;
    tk_call_opts opts = { .timeout_ms = 5000 };
    tk_status st;
    int code = tk_call_raw(d.c, "tk.v1.Search/Search", buf, n, &reply,
                           &reply_len, &opts, &st);
    assert_int_equal(code, TK_CODE_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "NUL_IN_STRING");
    free(reply);
    tk_status_clear(&st);
    tkd_stop(&d);
}

/* Which tool runs follows tkd's PATH (resolved once, at its first search)
 * and the root: rg; without rg, git grep in a work tree and grep outside
 * one; nothing at all: NO_SEARCH_TOOL. A forced git grep outside a work
 * tree says so. */
static void test_fallback(void **state)
{
    (void)state;
    static const struct {
        const char *tools[3];
        int in_repo, outside; /* the tool that runs, or -1: NO_SEARCH_TOOL */
    } cases[] = {
        { { "rg", "git", "grep" }, RG, RG },
        { { "git", "grep", NULL }, GIT_GREP, GREP },
        { { "git", NULL, NULL }, GIT_GREP, -1 },
        { { "grep", NULL, NULL }, GREP, GREP },
        { { NULL, NULL, NULL }, -1, -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tkd d;
        tkd_init(&d, "srch-fb");
        for (size_t k = 0; k < 3 && cases[i].tools[k] != NULL; k++)
            link_tool(&d, cases[i].tools[k]);
        tree_puts(d.root, "repo/a.txt", "needle\n");
        tree_puts(d.root, "plain/a.txt", "needle\n");
        const char *init[] = { "init", "-q", "repo", NULL };
        tree_git(d.root, init);
        tkd_start(&d, NULL);
        const char *roots[] = { "repo", "plain" };
        int want[] = { cases[i].in_repo, cases[i].outside };
        for (size_t k = 0; k < 2; k++) {
            sreq r = { .root = roots[k], .query = "needle", .hidden = -1 };
            sres s;
            call(&d, &r, &s);
            if (want[k] < 0) {
                expect_fail(&s, TK_CODE_FAILED_PRECONDITION, "NO_SEARCH_TOOL");
            } else {
                expect_ok(&s);
                if ((int)s.rep->tool != want[k])
                    fail_msg("case %zu, %s: ran %s, want %s", i, roots[k],
                             tool_names[s.rep->tool], tool_names[want[k]]);
                assert_int_equal(s.rep->n_matches, 1);
            }
            sres_free(&s);
        }
        if (cases[i].in_repo == GIT_GREP) {
            sreq r = { .root = "plain",
                       .query = "needle",
                       .tool = GIT_GREP,
                       .hidden = -1 };
            sres s;
            call(&d, &r, &s);
            expect_fail(&s, TK_CODE_FAILED_PRECONDITION, "NOT_A_WORK_TREE");
            sres_free(&s);
        }
        tkd_stop(&d);
    }
}

/* Each tool's path is resolved once per process, at the first search: rg
 * put into tkd's PATH afterwards is not seen, and grep keeps running. */
static void test_resolved_once(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-once");
    link_tool(&d, "grep");
    tree_puts(d.root, "a.txt", "needle\n");
    tkd_start(&d, NULL);
    sreq r = { .query = "needle", .hidden = -1 };
    sres s;
    call(&d, &r, &s);
    expect_ok(&s);
    assert_int_equal(s.rep->tool, GREP);
    sres_free(&s);
    link_tool(&d, "rg");
    call(&d, &r, &s);
    expect_ok(&s);
    assert_int_equal(s.rep->tool, GREP);
    assert_int_equal(s.rep->n_matches, 1);
    sres_free(&s);
    sreq forced = { .query = "needle", .tool = RG, .hidden = -1 };
    call(&d, &forced, &s);
    expect_fail(&s, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    sres_free(&s);
    tkd_stop(&d);
}

/* A tool tkd found at its first search and that is gone by the next gets
 * the answer every service gives a missing program: FAILED_PRECONDITION
 * TOOL_NOT_FOUND (it was INTERNAL TOOL_FAILED), never a fallback to
 * another tool or an empty match list. One there but not executable:
 * INTERNAL TOOL_NOT_STARTED. */
static void test_tool_gone_after_start(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-gone");
    link_tool(&d, "grep");
    tree_puts(d.root, "a.txt", "needle\n");
    tkd_start(&d, NULL);
    sreq r = { .query = "needle", .hidden = -1 };
    sres s;
    call(&d, &r, &s);
    expect_ok(&s);
    assert_int_equal(s.rep->tool, GREP);
    sres_free(&s);
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/grep", d.bin);
    assert_int_equal(unlink(link), 0);
    call(&d, &r, &s);
    expect_fail(&s, TK_CODE_FAILED_PRECONDITION, "TOOL_NOT_FOUND");
    assert_non_null(strstr(s.st.message, "program not found"));
    sres_free(&s);
    tree_puts(d.bin, "grep", "not a program\n"); /* mode 0644 */
    call(&d, &r, &s);
    expect_fail(&s, TK_CODE_INTERNAL, "TOOL_NOT_STARTED");
    sres_free(&s);
    tkd_stop(&d);
}

/* A search stopped at its limit: limit matches, partial in the reply and
 * the status, cause LIMIT, a success; its tool was killed, and nothing of
 * its process group is left. */
static void expect_limited(tkd *d, const sres *s, size_t limit, int tool)
{
    expect_ok(s);
    assert_int_equal(s->rep->n_matches, limit);
    assert_true(s->rep->partial);
    assert_true(s->st.partial);
    assert_int_equal(s->st.cause, TK_CAUSE_LIMIT);
    assert_true(s->st.process_killed);
    if (tool == GIT_GREP)
        assert_true(next_start(d, 0) > 0); /* git rev-parse */
    /* kill(-pgid, 0) sees a zombie too, which /proc/N/cmdline (empty
     * for one) would not */
    assert_group_gone(next_start(d, 0));
}

/* The limit: the matches up to it, partial (in the reply and the status),
 * cause LIMIT, a success; the tool was killed mid-output and nothing of it
 * is left. Exactly limit matches: complete, not partial. */
static void test_limit_partial(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-lim");
    wrap_tool(&d, "rg", "exec \"$REAL\" \"$@\"");
    wrap_tool(&d, "git", "exec \"$REAL\" \"$@\"");
    wrap_tool(&d, "grep", "exec \"$REAL\" \"$@\"");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    /* Output far beyond a pipe's buffer: no tool can finish it unread. */
    tree_lines(d.root, "many.txt", "limitneedle and more text on the line",
               100000);
    tree_lines(d.root, "three.txt", "exactneedle", 3);
    tkd_start(&d, NULL);
    for (size_t t = 0; t < 3; t++) {
        sreq r = { .query = "limitneedle",
                   .limit = 5,
                   .tool = all_tools[t],
                   .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        expect_limited(&d, &s, 5, all_tools[t]);
        for (size_t i = 0; i < 5; i++)
            assert_int_equal(s.rep->matches[i]->column, 1);
        sres_free(&s);

        /* A limit above the default: the tool's output is read in batches
         * (service/search/run.c), and the limit still stops the tool. */
        sreq big = { .query = "limitneedle",
                     .limit = 2000,
                     .tool = all_tools[t],
                     .hidden = -1 };
        call(&d, &big, &s);
        expect_limited(&d, &s, 2000, all_tools[t]);
        sres_free(&s);

        sreq exact = { .query = "exactneedle",
                       .limit = 3,
                       .tool = all_tools[t],
                       .hidden = -1 };
        call(&d, &exact, &s);
        expect_ok(&s);
        assert_int_equal(s.rep->n_matches, 3);
        assert_false(s.rep->partial);
        assert_false(s.st.partial);
        assert_int_equal(s.st.cause, TK_CAUSE_NONE);
        assert_false(s.st.process_killed);
        sres_free(&s);
        while (next_start(&d, 0) > 0) /* this search's starts */
            ;
    }
    tkd_stop(&d);
}

/* A search that wants every match (a limit above the default: its tool's
 * output read in batches, service/search/run.c) gets every one of many
 * files' matches, the file count and a complete status, from each tool. */
static void test_every_match_batched(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-all");
    link_tool(&d, "rg");
    link_tool(&d, "git");
    link_tool(&d, "grep");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    for (int f = 0; f < 300; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "d%d/f%d.txt", f % 7, f);
        tree_lines(d.root, rel, "a batchneedle line, and the rest of it", 20);
    }
    tkd_start(&d, NULL);
    for (size_t t = 0; t < 3; t++) {
        sreq r = { .query = "batchneedle",
                   .limit = 100000,
                   .tool = all_tools[t],
                   .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        expect_ok(&s);
        assert_int_equal(s.rep->n_matches, 6000);
        assert_false(s.rep->partial || s.st.partial);
        assert_int_equal(s.rep->stats->files_with_matches, 300);
        assert_true(has_line(s.rep, "d0/f0.txt", 1));
        assert_true(has_line(s.rep, "d5/f299.txt", 20));
        for (size_t i = 0; i < s.rep->n_matches; i++)
            assert_int_equal(s.rep->matches[i]->column, 3);
        sres_free(&s);
    }
    tkd_stop(&d);
}

/* A long search: the real tool reads a FIFO no one writes (rg and grep
 * read a FIFO named on their command line; git grep's wrapper waits on it
 * before it starts git). The caller's Cancel: CANCELLED, cause CALLER, no
 * reply at all (never "0 matches"), the tool's whole group gone. Its
 * deadline: DEADLINE_EXCEEDED, likewise.
 *
 * The Cancel waits for the tool's start (its wrapper's announcement). A
 * deadline cannot wait for an event, so LATE_MS is derived: it must
 * outlast the way from the call to the tool's start (for git grep, two
 * spawns: git rev-parse first), or the call ends before a tool runs and
 * nothing is killed. That way, from the call to the wrapper's
 * announcement, took at most 20 ms (git grep; rg 10, grep 8) in 60 loaded
 * calls per tool and build (two busy loops on the 2 cores, ASan and TSan):
 * LATE_MS is 50 times that, and a deadline that came first anyway is
 * reported as such. */
#define LATE_MS 1000

static void test_cancel_and_deadline(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-cancel");
    char tail[1024];
    snprintf(tail, sizeof tail, "exec \"$REAL\" \"$@\" '%s/hold'", d.dir);
    wrap_tool(&d, "rg", tail);
    wrap_tool(&d, "grep", tail);
    snprintf(tail, sizeof tail,
             "case \" $* \" in *' grep '*) read x < '%s/hold';; esac\n"
             "exec \"$REAL\" \"$@\"",
             d.dir);
    wrap_tool(&d, "git", tail);
    tree_mkfifo(d.dir, "hold");
    char hold[PATH_MAX];
    snprintf(hold, sizeof hold, "%s/hold", d.dir);
    int hold_fd =
        open(hold, O_RDWR | O_CLOEXEC); /* a writer that never writes */
    assert_true(hold_fd >= 0);
    tree_puts(d.root, "a.txt", "needle\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    tkd_start(&d, NULL);
    for (size_t t = 0; t < 3; t++) {
        async a = { 0 };
        assert_int_equal(tk_cancel_new(&a.r.cancel), TK_OK);
        sreq r = { .query = "needle",
                   .tool = all_tools[t],
                   .hidden = -1,
                   .cancel = a.r.cancel };
        async_start(&a, &d, &r);
        if (all_tools[t] == GIT_GREP)
            assert_true(next_start(&d, WAIT_MS) > 0); /* git rev-parse */
        pid_t pid = next_start(&d, WAIT_MS);
        assert_true(pid > 0);
        int outcome = -1;
        assert_int_equal(tk_cancel_fire(r.cancel, &outcome), TK_OK);
        assert_int_equal(outcome, TK_CANCEL_CANCELLED);
        async_join(&a);
        expect_fail(&a.s, TK_CODE_CANCELLED, "");
        assert_int_equal(a.s.st.cause, TK_CAUSE_CALLER);
        assert_true(a.s.st.process_killed);
        assert_group_gone(pid);
        sres_free(&a.s);
        tk_cancel_free(r.cancel);

        /* The same with a limit above the default (stdout read in
         * batches): the Cancel still ends it at once. */
        a = (async){ 0 };
        assert_int_equal(tk_cancel_new(&a.r.cancel), TK_OK);
        r.limit = 100000;
        r.cancel = a.r.cancel;
        async_start(&a, &d, &r);
        if (all_tools[t] == GIT_GREP)
            assert_true(next_start(&d, WAIT_MS) > 0);
        pid = next_start(&d, WAIT_MS);
        assert_true(pid > 0);
        assert_int_equal(tk_cancel_fire(r.cancel, &outcome), TK_OK);
        assert_int_equal(outcome, TK_CANCEL_CANCELLED);
        async_join(&a);
        expect_fail(&a.s, TK_CODE_CANCELLED, "");
        assert_int_equal(a.s.st.cause, TK_CAUSE_CALLER);
        assert_true(a.s.st.process_killed);
        assert_group_gone(pid);
        sres_free(&a.s);
        tk_cancel_free(r.cancel);

        sreq late = { .query = "needle",
                      .tool = all_tools[t],
                      .hidden = -1,
                      .timeout_ms = LATE_MS };
        sres s;
        call(&d, &late, &s);
        expect_fail(&s, TK_CODE_DEADLINE_EXCEEDED, "");
        assert_int_equal(s.st.cause, TK_CAUSE_DEADLINE);
        if (all_tools[t] == GIT_GREP)
            assert_true(next_start(&d, 0) > 0);
        pid = next_start(&d, 0); /* the call has ended: it is here or never */
        if (pid <= 0 || !s.st.process_killed)
            fail_msg("%s: the deadline (%d ms) came before the tool started "
                     "(started: %s, killed: %d)",
                     tool_names[all_tools[t]], LATE_MS, pid > 0 ? "yes" : "no",
                     s.st.process_killed);
        assert_group_gone(pid);
        sres_free(&s);
    }
    close(hold_fd);
    tkd_stop(&d);
}

/* Holds one of the slot test's searches: its root has hold.fifo, which
 * the rg wrapper hands to rg; rg reads it until the test closes its end. */
typedef struct holder {
    async a;
    int fd;
    pid_t pid;
} holder;

static void hold_slot(tkd *d, holder *h, const char *name)
{
    char rel[64], fifo[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/hold.fifo", name);
    tree_mkfifo(d->root, rel);
    snprintf(fifo, sizeof fifo, "%s/%s", d->root, rel);
    h->fd = open(fifo, O_RDWR | O_CLOEXEC);
    assert_true(h->fd >= 0);
    snprintf(rel, sizeof rel, "%s/a.txt", name);
    tree_puts(d->root, rel, "needle\n");
    memset(&h->a, 0, sizeof h->a);
    sreq r = { .root = strdup(name), .query = "needle", .hidden = -1 };
    async_start(&h->a, d, &r);
    h->pid = next_start(d, WAIT_MS);
    assert_true(h->pid > 0);
}

/* EOF on its FIFO: rg finishes, the call succeeds with its one match. */
static void release_slot(holder *h)
{
    close(h->fd);
    async_join(&h->a);
    expect_ok(&h->a.s);
    assert_int_equal(h->a.s.rep->n_matches, 1);
    sres_free(&h->a.s);
    free((void *)h->a.r.root);
}

/* tkd's metrics of its slots (tk.v1.Control/Stats): searches running in
 * them, and waiting for one. */
static void expect_slot_gauges(tkd *d, double busy, double waiting)
{
    Tk__V1__StatsReply *r = ts_stats(d->c);
    assert_true(ts_stat(r, "tk_search_slots_busy", 0, NULL) == busy);
    assert_true(ts_stat(r, "tk_search_waiting", 0, NULL) == waiting);
    protobuf_c_message_free_unpacked((ProtobufCMessage *)r, NULL);
}

/* Three slots, three searches holding them: a fourth waits (tkd says so);
 * cancelled or expired while waiting, it answers CANCELLED or
 * DEADLINE_EXCEEDED and never starts a tool; a waiter runs as soon as a
 * slot is given back. */
static void test_slots(void **state)
{
    (void)state;
    tkd d;
    tkd_init(&d, "srch-slots");
    wrap_tool(&d, "rg",
              "[ -p ./hold.fifo ] && exec \"$REAL\" \"$@\" ./hold.fifo\n"
              "exec \"$REAL\" \"$@\"");
    tree_puts(d.root, "free/a.txt", "needle\nneedle\n");
    tkd_start(&d, &(start_opts){ .slots = "3" });
    holder h[3];
    hold_slot(&d, &h[0], "h0");
    hold_slot(&d, &h[1], "h1");
    hold_slot(&d, &h[2], "h2");

    /* Cancelled while waiting. */
    async w = { 0 };
    assert_int_equal(tk_cancel_new(&w.r.cancel), TK_OK);
    sreq r = {
        .root = "free", .query = "needle", .hidden = -1, .cancel = w.r.cancel
    };
    async_start(&w, &d, &r);
    assert_true(ts_wait_output_n(&d.p, 2, "waits for a slot", 1, WAIT_MS));
    assert_int_equal(tk_cancel_fire(r.cancel, NULL), TK_OK);
    async_join(&w);
    expect_fail(&w.s, TK_CODE_CANCELLED, "");
    assert_int_equal(w.s.st.cause, TK_CAUSE_CALLER);
    assert_false(w.s.st.process_killed);
    sres_free(&w.s);
    tk_cancel_free(r.cancel);
    expect_slot_gauges(&d, 3, 0); /* the cancelled one waits no more */

    /* Expired while waiting: it says it waits before its deadline comes.
     * The deadline must outlast the way from the call to the wait (else it
     * expires in tkd's queue, EXPIRED_IN_QUEUE, or before its log line):
     * that took at most 26 ms in 60 loaded calls (ASan and TSan, as in
     * test_cancel_and_deadline), and LATE_MS is 38 times that. */
    sreq late = {
        .root = "free", .query = "needle", .hidden = -1, .timeout_ms = LATE_MS
    };
    async_start(&w, &d, &late);
    if (!ts_wait_output_n(&d.p, 2, "waits for a slot", 2, WAIT_MS))
        fail_msg("the search did not wait for a slot: %s", d.p.err);
    async_join(&w);
    expect_fail(&w.s, TK_CODE_DEADLINE_EXCEEDED, "");
    assert_int_equal(w.s.st.cause, TK_CAUSE_DEADLINE);
    assert_false(w.s.st.process_killed);
    sres_free(&w.s);
    assert_int_equal(next_start(&d, 0), -1); /* neither started a tool */

    /* Waits until a slot is given back, then runs. */
    sreq next = { .root = "free", .query = "needle", .hidden = -1 };
    async_start(&w, &d, &next);
    assert_true(ts_wait_output_n(&d.p, 2, "waits for a slot", 3, WAIT_MS));
    assert_int_equal(next_start(&d, 0), -1);
    expect_slot_gauges(&d, 3, 1);
    release_slot(&h[1]);
    assert_true(next_start(&d, WAIT_MS) > 0);
    async_join(&w);
    expect_ok(&w.s);
    assert_int_equal(w.s.rep->n_matches, 2);
    sres_free(&w.s);
    release_slot(&h[0]);
    release_slot(&h[2]);
    assert_int_equal(next_start(&d, 0), -1); /* 3 + 1 starts in all */
    expect_slot_gauges(&d, 0, 0);
    tkd_stop(&d);
}

/* Files that cannot be read: exit status 2 (git grep: its error lines) is
 * UNREADABLE_FILES with the tool's words; allow_unreadable returns the
 * matches and the count; a search that reached its limit is a partial
 * success whatever else happened. tkd runs without CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH when the test runs as root. */
static void test_unreadable(void **state)
{
    (void)state;
    char setpriv[PATH_MAX];
    bool root = geteuid() == 0;
    if (root && !tree_which("setpriv", setpriv, sizeof setpriv)) {
        fprintf(stderr, "skipped: root without setpriv cannot be refused\n");
        skip();
    }
    tkd d;
    tkd_init(&d, "srch-unread");
    /* Each tool runs to its end before tkd reads a byte of its output, so
     * its stderr (the files it could not read) is whole whether the limit
     * then stops the wrapper or the wrapper exits first. */
    char tail[PATH_MAX + 1024], cat[PATH_MAX];
    assert_true(tree_which("cat", cat, sizeof cat)); /* not in tkd's PATH */
    snprintf(tail, sizeof tail,
             "\"$REAL\" \"$@\" > '%s/out.$$'; rc=$?\n"
             "'%s' '%s/out.$$'; exit $rc",
             d.dir, cat, d.dir);
    wrap_tool(&d, "rg", tail);
    wrap_tool(&d, "git", tail);
    wrap_tool(&d, "grep", tail);
    tree_puts(d.root, "a.txt", "needle\n");
    tree_puts(d.root, "b.txt", "needle\n");
    tree_puts(d.root, "secret.txt", "needle\n");
    tree_puts(d.root, "locked/c.txt", "needle\n");
    const char *init[] = { "init", "-q", NULL };
    tree_git(d.root, init);
    const char *add[] = { "add", "a.txt", "secret.txt", NULL };
    tree_git(d.root, add);
    tree_chmod(d.root, "secret.txt", 0);
    tree_chmod(d.root, "locked", 0);
    tkd_start(&d, &(start_opts){ .drop_dac = root });
    for (size_t t = 0; t < 3; t++) {
        sreq r = { .query = "needle", .tool = all_tools[t], .hidden = -1 };
        sres s;
        call(&d, &r, &s);
        expect_fail(&s, TK_CODE_FAILED_PRECONDITION, "UNREADABLE_FILES");
        assert_non_null(s.st.stderr_excerpt);
        assert_non_null(memmem(s.st.stderr_excerpt, s.st.stderr_len,
                               "ermission denied", 16));
        sres_free(&s);

        r.allow_unreadable = true;
        call(&d, &r, &s);
        expect_ok(&s);
        assert_int_equal(s.rep->n_matches, 2);
        assert_true(has_line(s.rep, "a.txt", 1));
        assert_true(has_line(s.rep, "b.txt", 1));
        assert_true(s.rep->stats->unreadable_files >= 2);
        sres_free(&s);

        sreq lim = {
            .query = "needle", .tool = all_tools[t], .hidden = -1, .limit = 1
        };
        call(&d, &lim, &s);
        expect_ok(&s);
        assert_int_equal(s.rep->n_matches, 1);
        assert_true(s.st.partial);
        assert_int_equal(s.st.cause, TK_CAUSE_LIMIT);
        /* The tool did meet the unreadable files (rg, grep: exit status
         * 2; git grep: its error lines), and the limit still won. */
        assert_true(s.rep->stats->unreadable_files >= 2);
        sres_free(&s);
    }
    tree_chmod(d.root, "locked", 0755);
    tkd_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal_queries),
        cmocka_unit_test(test_hidden_and_case),
        cmocka_unit_test(test_zero_hits),
        cmocka_unit_test(test_non_utf8_query),
        cmocka_unit_test(test_rg_warning_not_unreadable),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_resolved_once),
        cmocka_unit_test(test_tool_gone_after_start),
        cmocka_unit_test(test_limit_partial),
        cmocka_unit_test(test_every_match_batched),
        cmocka_unit_test(test_cancel_and_deadline),
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
