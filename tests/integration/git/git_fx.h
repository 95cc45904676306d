/* SPDX-License-Identifier: MIT */
/*
 * The fixture the tests of tk.v1.Git share (tests/integration/git/): the
 * repositories git_fixture.sh builds in a directory of the test's own, an
 * in-process server of tk.v1.Git with that directory as its root, and git
 * run as the CLI side. Each test program of this folder builds its own
 * (git_fx_setup, in its group's setup), so that meson runs them at once
 * without sharing a directory, a socket or a HOME.
 *
 * The test process is a child subreaper, as in test_proc.c: what git's
 * hooks leave behind comes back to it, so their deaths are observed and
 * reaped here. Where there is no child subreaper (PR_SET_CHILD_SUBREAPER,
 * Linux's prctl) or no /proc (macOS has neither), a test that needs one
 * says so and is skipped; the others run. Which it is is judged by the
 * facility itself (its macro, /proc/self/status), never by the system's
 * name.
 */
#ifndef TK_TESTS_GIT_FX_H
#define TK_TESTS_GIT_FX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <tk/client.h>

#include "fixture.h"

extern char dir[PATH_MAX];     /* the fixture */
extern char git_bin[PATH_MAX]; /* the git the CLI side runs */
/* Set by git_fx_init, before any test: this process is a child subreaper,
 * and there is a /proc (each process's stat and fds, /proc/self/fd). */
extern bool subreaper, have_proc;
extern ts_fx fx; /* the group's server: default ceilings */

/* ---- the program and its group ------------------------------------------- */

/* main's first step: a HOME of the fixture's own for tkd's children and
 * the test's, LC_ALL=C, proc_init, git found, SIGTERM and SIGINT blocked,
 * SIGPIPE ignored, the child subreaper. 0, else -1. */
int git_fx_init(void);
/* The group's setup and teardown: the repositories (git_fixture.sh) and
 * the group's server, fx. */
int git_fx_setup(void **state);
int git_fx_teardown(void **state);
/* After the group: removes git_fx_init's HOME. */
void git_fx_fini(void);

/* ---- skips, paths, servers ----------------------------------------------- */

/* Skips the current test, saying why, when this system lacks what it
 * needs. */
void need(bool have, const char *what);
#define NEED_PROC(why) need(have_proc, "/proc (" why ")")
/* dir/rel, in one of a few rotating buffers. */
const char *at(const char *rel);
/* A server of its own: read_ceiling_ms and workers 0 are the defaults;
 * git_name is the git program to look for (NULL: "git"). */
void fx_start_git(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers,
                  const char *git_name);
void fx_start(ts_fx *f, uint32_t read_ceiling_ms, unsigned workers);

/* ---- the CLI side and the file system ------------------------------------ */

/* Runs git with args in repo; returns its stdout (malloc'd, may hold NULs)
 * and sets *status (exit code). Environment as the fixture built it. */
char *git_cli(const char *repo, int *status, size_t *len,
              const char *const *args);
#define GIT(repo, ...)                                                         \
    do {                                                                       \
        const char *args_[] = { __VA_ARGS__, NULL };                           \
        int st_;                                                               \
        free(git_cli(repo, &st_, NULL, args_));                                \
        assert_int_equal(st_, 0);                                              \
    } while (0)
void write_file(const char *path, const char *text, int mode);
bool exists(const char *path);
/* This process's children, from /proc: up to max of their pids, and each
 * one's state ('Z': a zombie); how many there are. */
size_t children(pid_t *pids, char *states, size_t max);
/* Reaps the orphans this subreaper adopted (git_fx.c says which). */
void reap_adopted(void);
/* A fresh clone of main under name, for tests that change a repository. */
const char *scratch(const char *name);
/* core.fsmonitor of repo in its owner's configuration (git_fx.c). */
void owner_fsmonitor(const char *repo, const char *hook);
/* The CLI's answer to a revision: its oid, or "" when git refuses it. */
void cli_rev_parse(const char *repo, const char *rev, char *oid);

/* ---- calls --------------------------------------------------------------- */

ProtobufCBinaryData bin(const char *s);
bool bin_eq(ProtobufCBinaryData b, const char *s);
/* Fails the test unless st is code and reason. */
void expect(const tk_status *st, int code, const char *reason);
int rev_parse_on(tk_client *c, const char *repo, const char *rev, char *oid,
                 tk_status *st);
/* rev_parse_on the group's server. */
int rev_parse(const char *repo, const char *rev, char *oid, tk_status *st);
/* A Status of repo on the group's server. */
void call_status(const char *repo, tk_status *st);

#endif
