/* SPDX-License-Identifier: MIT */
/*
 * The fixture of the tk.v1.Git tests (git_fx.h): the repositories, the
 * group's server, git as the CLI side, the calls every topic makes.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* prctl(2) is Linux's alone, and so is its header: no check can ask
 * whether it is there without including it. What this file uses of it is
 * then judged by its macro (PR_SET_CHILD_SUBREAPER). */
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cmocka.h>

#include <tk/client.h>

#include "fixture.h"
#include "git/git.h"
#include "git_fx.h"
#include "proc/proc.h"
#include "tk/v1/git.tk.h"

char dir[PATH_MAX];     /* the fixture */
char git_bin[PATH_MAX]; /* the git the CLI side runs */

/* git_fx_init sets them (git_fx.h). */
bool subreaper, have_proc;

/* Skips the current test, saying why, when this system lacks what it
 * needs. */
void need(bool have, const char *what)
{
    if (!have) {
        print_message("[   SKIP   ] this system has no %s\n", what);
        skip();
    }
}

/* dir/rel, in one of a few rotating buffers. */
const char *at(const char *rel)
{
    static char bufs[8][PATH_MAX + 64];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, rel);
    return b;
}

/* ---- server fixture (fixture.h): tk.v1.Git, the fixture its root ------ */

ts_fx fx; /* the group's server: default ceilings */

typedef struct git_opts {
    uint32_t read_ceiling_ms; /* 0: the default */
    const char *git;          /* the git program to look for; NULL: "git" */
} git_opts;

static void *git_add(ts_fx *f, void *arg)
{
    const git_opts *o = arg;
    tkgit_config gc;
    tkgit_config_init(&gc);
    if (o->read_ceiling_ms != 0)
        gc.read_ceiling_ms = gc.read_timeout_ms = o->read_ceiling_ms;
    gc.git = o->git;
    char err[512] = "";
    tkgit *git = NULL;
    assert_int_equal(tkgit_new(&git, f->roots, &gc, err, sizeof err), 0);
    assert_int_equal(tkgit_register(git, f->srv, err, sizeof err), 0);
    return git;
}

static void git_free(void *git)
{
    tkgit_free(git);
}

/* A server of its own: read_ceiling_ms and workers 0 are the defaults;
 * git_name is the git program to look for (NULL: "git"). */
void fx_start_git(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers,
                  const char *git_name)
{
    git_opts go = { .read_ceiling_ms = read_ceiling_ms, .git = git_name };
    const ts_fx_service git = { .add = git_add, .free = git_free, .arg = &go };
    const char *rootdir = dir;
    ts_fx_start(f, &(ts_fx_opts){ .tag = "gitsrv",
                                  .workers = workers,
                                  .roots = &rootdir,
                                  .n_roots = 1,
                                  .services = &git,
                                  .n_services = 1 });
}

void fx_start(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers)
{
    fx_start_git(f, read_ceiling_ms, workers, NULL);
}

/* ---- the CLI side and the file system ------------------------------------ */

/* Runs git with args in repo; returns its stdout (malloc'd, may hold NULs)
 * and sets *status (exit code). Environment as the fixture built it. */
char *git_cli(const char *repo, int *status, size_t *len,
              const char *const *args)
{
    const char *argv[32] = { git_bin, "-C", repo };
    size_t n = 3;
    for (size_t i = 0; args[i] != NULL && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[] = { "LC_ALL=C", NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, env), 0);
    *status = ts_finish(&p, 20000);
    char *out = malloc(p.out_len + 1);
    assert_non_null(out);
    if (p.out_len > 0)
        memcpy(out, p.out, p.out_len);
    out[p.out_len] = '\0';
    if (len != NULL)
        *len = p.out_len;
    ts_proc_free(&p);
    return out;
}

void write_file(const char *path, const char *text, int mode)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, (mode_t)mode), 0);
}

bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* This process's children, from /proc: up to max of their pids, and each
 * one's state ('Z': a zombie); how many there are. */
size_t children(pid_t *pids, char *states, size_t max)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "re");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        (void)fclose(f);
        buf[len] = '\0';
        char *rp = strrchr(buf, ')');
        if (rp == NULL || rp[1] != ' ' ||
            strtol(rp + 4, NULL, 10) != (long)getpid())
            continue;
        if (n < max) {
            pids[n] = (pid_t)strtol(e->d_name, NULL, 10);
            states[n] = rp[2];
        }
        n++;
    }
    closedir(d);
    return n;
}

/* Reaps the processes this subreaper adopted: git 2.39's `worktree
 * remove` of a working tree with changes dies without waiting for the
 * `git status` it ran, which then comes back to this process. What a test
 * runs through the server is over (and reaped by proc/) when its call
 * returns, so every child left is such an orphan. */
void reap_adopted(void)
{
    if (!subreaper || !have_proc)
        return;
    pid_t pids[16];
    char states[16];
    size_t n = children(pids, states, 16);
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++)
        assert_true(ts_reap_orphan(pids[i], 5000) != -1);
}

/* A fresh clone of main under name, for tests that change a repository. */
const char *scratch(const char *name)
{
    const char *path = at(name);
    GIT(dir, "clone", "-q", at("main"), path);
    GIT(path, "config", "user.name", "Tk Tester");
    GIT(path, "config", "user.email", "tester@example.com");
    return path;
}

/* core.fsmonitor of repo in its owner's configuration: tkd's user's global
 * config (main() gives the test a HOME of its own), scoped to repo by an
 * includeIf. A READ runs the owner's fsmonitor, never the one the
 * repository's own config names (service/git/read_env.c). */
void owner_fsmonitor(const char *repo, const char *hook)
{
    char real[PATH_MAX], inc[PATH_MAX + 16], key[PATH_MAX + 32],
        global[PATH_MAX + 16];
    assert_non_null(realpath(repo, real));
    snprintf(inc, sizeof inc, "%s.owner", real);
    snprintf(key, sizeof key, "includeIf.gitdir:%s/.git.path", real);
    snprintf(global, sizeof global, "%s/.gitconfig", getenv("HOME"));
    GIT(dir, "config", "--file", inc, "core.fsmonitor", hook);
    GIT(dir, "config", "--file", global, key, inc);
}

/* ---- calls --------------------------------------------------------------- */

ProtobufCBinaryData bin(const char *s)
{
    ProtobufCBinaryData b = { strlen(s), (uint8_t *)s };
    return b;
}

bool bin_eq(ProtobufCBinaryData b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

void expect(const tk_status *st, int code, const char *reason)
{
    if (st->code != code || strcmp(st->reason, reason) != 0)
        fail_msg("got %s/%s (%s), want %s/%s", tk_code_name(st->code),
                 st->reason, st->message, tk_code_name(code), reason);
}

int rev_parse_on(tk_client *c, const char *repo, const char *rev, char *oid,
                 tk_status *st)
{
    Tk__V1__GitRevParseRequest req = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    req.repo = (char *)repo;
    req.rev = (char *)rev;
    Tk__V1__GitRevParseReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    int code = tk_git_rev_parse(c, &req, &rep, &o, st);
    if (code == TK_OK) {
        snprintf(oid, 41, "%s", rep->oid);
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    }
    return code;
}

int rev_parse(const char *repo, const char *rev, char *oid, tk_status *st)
{
    return rev_parse_on(fx.client, repo, rev, oid, st);
}

void call_status(const char *repo, tk_status *st)
{
    Tk__V1__GitStatusRequest req = TK__V1__GIT_STATUS_REQUEST__INIT;
    req.repo = (char *)repo;
    Tk__V1__GitStatusReply *rep = NULL;
    tk_call_opts o = { .timeout_ms = 20000 };
    if (tk_git_status(fx.client, &req, &rep, &o, st) == TK_OK)
        protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* The CLI's answer to a revision: its oid, or "" when git refuses it. */
void cli_rev_parse(const char *repo, const char *rev, char *oid)
{
    const char *args[] = { "rev-parse",        "--verify", "-q",
                           "--end-of-options", rev,        NULL };
    int status;
    char *out = git_cli(repo, &status, NULL, args);
    snprintf(oid, 41, "%s", status == 0 ? out : "");
    free(out);
}

/* ---- the group ----------------------------------------------------------- */

int git_fx_setup(void **state)
{
    (void)state;
    if (ts_mkdtemp(dir, sizeof dir, "git") != 0)
        return -1;
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/tests/integration/git/git_fixture.sh",
             ts_program("TK_SOURCE_ROOT"));
    const char *argv[] = { "/bin/sh", script, dir, NULL };
    ts_proc p;
    if (ts_spawn(&p, argv, NULL) != 0)
        return -1;
    int rv = ts_finish(&p, 60000);
    if (rv != 0)
        fprintf(stderr, "git_fixture.sh: %s\n", p.err);
    ts_proc_free(&p);
    if (rv != 0)
        return -1;
    fx_start(&fx, 0, 0);
    return 0;
}

int git_fx_teardown(void **state)
{
    (void)state;
    ts_fx_stop(&fx);
    return ts_rmtree(dir);
}

/* The fixture's HOME for tkd's children and ours. */
static char home[PATH_MAX];

int git_fx_init(void)
{
    /* HOME before proc takes its snapshot of the environment. */
    if (ts_mkdtemp(home, sizeof home, "githome") != 0)
        return -1;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): main, before any thread starts
    if (setenv("HOME", home, 1) != 0 || setenv("LC_ALL", "C", 1) != 0)
        return -1;
    proc_init();
    if (proc_find_program(git_bin, sizeof git_bin, "git", NULL) != 0)
        return -1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct sigaction ign = { .sa_handler = SIG_IGN };
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        sigaction(SIGPIPE, &ign, NULL) != 0)
        return -1;
#ifdef PR_SET_CHILD_SUBREAPER
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return -1;
    subreaper = true;
#endif
    have_proc = access("/proc/self/status", R_OK) == 0;
    return 0;
}

void git_fx_fini(void)
{
    ts_rmtree(home);
}
