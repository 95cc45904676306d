/* SPDX-License-Identifier: MIT */
/* service/proc with real processes: /bin/sh scripts written to a temporary
 * directory play the tools. Every safety property has its negative
 * control: a spawn without proc's precautions (or proc with a test hook
 * that leaves one out) shows what the property prevents.
 *
 * The test process makes itself a child subreaper, so the grandchildren a
 * script leaves behind come back to it when their parent dies: their
 * deaths are then observed (pidfd) and reaped here, deterministically,
 * instead of by an init that reaps when it gets round to it.
 *
 * Where there is no child subreaper (PR_SET_CHILD_SUBREAPER, Linux's
 * prctl) or no /proc (macOS has neither), a test that needs one says so
 * and is skipped; the others run. Which it is is judged by the facility
 * itself (the macro, /proc/self/status), never by the system's name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* prctl(2) is Linux's alone, and so is its header: no check can ask
 * whether it is there without including it. What this file uses of it is
 * then judged by its macro (PR_SET_CHILD_SUBREAPER). */
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cmocka.h>

#include "port/port.h"
#include "proc/proc.h"
#include "support.h"

static char tmp[PATH_MAX];

/* Set in main, before any test: this process is a child subreaper, and
 * there is a /proc (with each process's stat and status, and
 * /proc/self/fd). */
static bool subreaper, have_proc;

/* Skips the current test, saying why, when this system lacks what it
 * needs. */
static void need(bool have, const char *what)
{
    if (!have) {
        print_message("[   SKIP   ] this system has no %s\n", what);
        skip();
    }
}

/* For a test that reaps what a killed group left (ts_reap_orphan). */
#define NEED_SUBREAPER()                                                       \
    need(subreaper, "child subreaper (PR_SET_CHILD_SUBREAPER): what a "        \
                    "killed group leaves would not come back to this test")

/* ---- scripts ------------------------------------------------------------ */

static const struct {
    const char *name, *body;
} scripts[] = {
    { "basic", "echo out1\necho err1 >&2\necho out2\nexit 3\n" },
    { "yes", "exec yes abcdefghi\n" },
    { "hundredk", "yes abcdefghi | head -c 100000\n" },
    { "stderr", "printf HEAD-START >&2\n"
                "head -c 20000 /dev/zero | tr '\\0' x >&2\n"
                "printf TAIL-END >&2\n" },
    { "small_stderr", "printf 'a little' >&2\n" },
    { "env", "exec env\n" },
    { "fds", "exec ls -l /proc/self/fd/\n" },
    /* The signal state is read by the program exec'd in the end: the
     * shell itself blocks signals around its forks. */
    { "state", "read -r stat < /proc/$$/stat\n"
               "set -- $stat\n"
               "echo \"pid $1 pgrp $5\"\n"
               "echo \"stdin $(readlink /proc/$$/fd/0)\"\n"
               "exec grep -E '^Sig(Blk|Ign):' /proc/self/status\n" },
    { "pwd", "exec /bin/pwd\n" },
    /* A grandchild that holds stdout and sleeps: the pipe stays open after
     * the leader dies unless the whole group dies. */
    { "tree", "sleep 1000 &\necho \"grandchild $!\"\necho ready\nwait\n" },
    { "slow", "echo ready\nexec sleep 1000\n" },
    { "write_slow", "echo ready\nsleep 0.3\necho done\n" },
    { "stubborn", "trap 'echo got-TERM >&2' TERM\n"
                  "echo ready\n"
                  "while :; do sleep 1; done\n" },
    { "lines", "i=0\nwhile :; do i=$((i+1)); echo \"line $i\"; done\n" },
    { "records", "printf 'short\\0a-very-long-record\\0\\0tail'\n" },
    /* Cut records that resume at "-MARK-": after the cut, with the mark
     * begun in the part kept, never. */
    { "resumed", "printf 'aaaaaaaaaa-MARK-tail1\\0xxxx\\0bbbbb-MARK-tail2\\0'\n"
                 "printf 'cccccccccccc\\0'\n" },
    { "numbered", "printf 'out %s\\n' \"$1\"\n"
                  "printf 'err %s\\n' \"$1\" >&2\n"
                  "exit $(($1 % 7))\n" },
    /* 3000 writes of a line each (echo is sh's own), then an
     * unterminated record. */
    { "many_writes", "i=0\nwhile [ $i -lt 3000 ]; do i=$((i+1)); "
                     "echo \"line $i\"; done\nprintf last\n" },
    /* More than a batched pipe holds. */
    { "threemeg", "yes abcdefghi | head -c 3000000\n" },
    /* A process left behind in the group, not holding the pipes. */
    { "leftovers", "sleep 1000 >/dev/null 2>&1 &\n"
                   "echo \"straggler $!\"\n" },
};

/* dir/name into buf, which must hold it. */
static void in_dir(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < len);
}

#define N_SCRIPTS (sizeof scripts / sizeof *scripts)
static char script_paths[N_SCRIPTS][PATH_MAX]; /* set before any thread */

static const char *script(const char *name)
{
    for (size_t i = 0; i < N_SCRIPTS; i++)
        if (strcmp(scripts[i].name, name) == 0)
            return script_paths[i];
    fail_msg("no script %s", name);
    return NULL;
}

/* Written once, before any thread or child exists (a file open for
 * writing while another thread spawns could make exec fail, ETXTBSY). */
static void write_scripts(void)
{
    for (size_t i = 0; i < N_SCRIPTS; i++) {
        char *path = script_paths[i];
        in_dir(path, PATH_MAX, tmp, scripts[i].name);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fprintf(f, "#!/bin/sh\n%s", scripts[i].body);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, 0755), 0);
    }
}

/* ---- observing processes ------------------------------------------------ */

/* Kills and reaps what a negative control left alive (which came back to
 * this process, a child subreaper). */
static void kill_orphan(pid_t pid)
{
    kill(pid, SIGKILL);
    assert_true(ts_reap_orphan(pid, 5000) != -1);
}

static void reap_group(pid_t pgid)
{
    assert_true(ts_reap_group(pgid));
}

/* State and parent of a process, from /proc/<pid>/stat; false when the
 * process is gone (reaped). */
static bool read_stat(const char *pid, char *state, long *ppid)
{
    need(have_proc, "/proc to read a process's state in");
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ppid ...": comm may hold anything but ends at the
     * last ')'. */
    char *rp = strrchr(buf, ')');
    if (rp == NULL || rp[1] != ' ' || rp[2] == '\0')
        return false;
    *state = rp[2];
    *ppid = strtol(rp + 3, NULL, 10);
    return true;
}

static char proc_state(pid_t pid)
{
    char id[16], state = '\0';
    long ppid;
    snprintf(id, sizeof id, "%d", (int)pid);
    if (!read_stat(id, &state, &ppid))
        state = '\0';
    return state;
}

/* Children of this process, all or zombies only, from /proc. */
static int count_children(bool zombies_only)
{
    need(have_proc, "/proc to count this process's children in");
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char state;
        long ppid;
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' &&
            read_stat(e->d_name, &state, &ppid) && ppid == (long)getpid() &&
            (!zombies_only || state == 'Z'))
            n++;
    }
    closedir(d);
    return n;
}

/* The descriptors open here, as a directory listing counts them (with the
 * listing's own): /proc/self/fd, or where there is no /proc, /dev/fd
 * (macOS's fdesc). Compared only with another count of the same. */
static int open_fds(void)
{
    DIR *d = opendir(have_proc ? "/proc/self/fd" : "/dev/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* ---- running scripts ---------------------------------------------------- */

/* Watches stdout line by line: remembers lines, fires the cancel event
 * when a line equals fire_on, stops after stop_after lines, and picks up
 * the pids a script announces. */
typedef struct watcher {
    port_event cancel; /* PORT_EVENT_NONE when there is none */
    const char *fire_on;
    int stop_after;
    int n_lines;
    size_t bytes;
    bool any_truncated;
    char lines[16][64];
    char last[64]; /* the last line */
    pid_t grandchild, straggler;
} watcher;

static void note_pid(watcher *w, const char *line)
{
    static const char gc[] = "grandchild ", st[] = "straggler ";
    if (strncmp(line, gc, sizeof gc - 1) == 0)
        w->grandchild = (pid_t)strtol(line + sizeof gc - 1, NULL, 10);
    else if (strncmp(line, st, sizeof st - 1) == 0)
        w->straggler = (pid_t)strtol(line + sizeof st - 1, NULL, 10);
}

static proc_verdict watch(void *arg, const char *data, size_t len,
                          bool truncated)
{
    watcher *w = arg;
    char line[64];
    snprintf(line, sizeof line, "%.*s", (int)len, data);
    if (w->n_lines < 16)
        memcpy(w->lines[w->n_lines], line, sizeof line);
    memcpy(w->last, line, sizeof line);
    w->n_lines++;
    w->bytes += len;
    w->any_truncated |= truncated;
    note_pid(w, line);
    if (w->fire_on != NULL && strcmp(line, w->fire_on) == 0)
        port_event_set(&w->cancel);
    if (w->stop_after > 0 && w->n_lines >= w->stop_after)
        return PROC_STOP;
    return PROC_CONTINUE;
}

typedef struct run_case {
    proc_opts o;
    const char *argv[4];
    watcher w;
} run_case;

/* A run of script name with its stdout captured, kind READ. */
static void setup_case(run_case *c, const char *name)
{
    memset(c, 0, sizeof *c);
    proc_opts_init(&c->o);
    c->argv[0] = script(name);
    c->o.path = c->argv[0];
    c->o.argv = c->argv;
    c->w.cancel = PORT_EVENT_NONE;
}

/* ... with stdout passed line by line to the watcher, and a cancel fd. */
static void setup_watched(run_case *c, const char *name, const char *fire_on)
{
    setup_case(c, name);
    assert_int_equal(port_event_open(&c->w.cancel), 0);
    c->w.fire_on = fire_on;
    c->o.cancel_fd = c->w.cancel.fd;
    c->o.on_stdout = watch;
    c->o.on_stdout_arg = &c->w;
    c->o.record_max = 1024;
}

static void teardown_case(run_case *c)
{
    port_event_close(&c->w.cancel);
}

static void assert_described(const proc_result *r, const char *want)
{
    char d[256];
    proc_result_describe(d, sizeof d, r);
    if (strstr(d, want) == NULL)
        fail_msg("described as \"%s\", expected \"%s\"", d, want);
    /* A kill of ours is never told as the program's own signal. */
    if (r->end != PROC_END_EXITED && strstr(d, "signal") != NULL)
        fail_msg("\"%s\" mentions a signal", d);
}

/* ---- tests -------------------------------------------------------------- */

static void test_stdout_stderr_apart(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "basic");
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_true(r.started && r.reaped && !r.process_killed);
    assert_int_equal(r.status.kind, PROC_STATUS_EXITED);
    assert_int_equal(r.status.code, 3);
    assert_string_equal(r.out, "out1\nout2\n");
    assert_int_equal(r.out_len, 10);
    assert_string_equal(r.err, "err1\n");
    assert_false(r.out_truncated || r.err_truncated || r.drain_timed_out);
    assert_described(&r, "exited with status 3");
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_stdout_cap_kill(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "yes"); /* endless output */
    c.o.stdout_cap = 1000;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_OUTPUT_CAP);
    assert_true(r.out_truncated && r.process_killed);
    assert_int_equal(r.out_len, 1000);
    assert_int_equal(strlen(r.out), 1000);
    assert_true(r.out_total > 1000);
    assert_described(&r, "stdout exceeded its cap");
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_stdout_cap_discard(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "hundredk");
    c.o.stdout_cap = 1000;
    c.o.cap_policy = PROC_CAP_DISCARD;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 0);
    assert_false(r.process_killed);
    assert_true(r.out_truncated);
    assert_int_equal(r.out_len, 1000);
    assert_int_equal(r.out_total, 100000);
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_stdout_cap_streamed(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "yes", NULL);
    c.o.record_max = 0; /* chunks */
    c.o.stdout_cap = 5000;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_OUTPUT_CAP);
    assert_true(r.out_truncated && r.out == NULL);
    assert_int_equal(c.w.bytes, 5000);
    proc_result_fini(&r);
    teardown_case(&c);

    /* Streamed, the consumer bounds what it keeps: no cap by default. */
    setup_watched(&c, "hundredk", NULL);
    c.o.record_max = 0;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_false(r.out_truncated);
    assert_int_equal(c.w.bytes, 100000);
    assert_int_equal(r.out_total, 100000);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* A WRITE is never cut short by its output: a cap under PROC_CAP_KILL and
 * a PROC_STOP from the callback only drop the rest of stdout. */
static void test_write_not_cut_by_output(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "hundredk");
    c.o.kind = PROC_WRITE;
    c.o.stdout_cap = 1000;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 0);
    assert_false(r.process_killed);
    assert_true(r.out_truncated);
    assert_int_equal(r.out_len, 1000);
    assert_int_equal(r.out_total, 100000);
    proc_result_fini(&r);
    teardown_case(&c);

    setup_watched(&c, "hundredk", NULL);
    c.o.kind = PROC_WRITE;
    c.o.record_max = 0;
    c.w.stop_after = 1;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_false(r.process_killed);
    assert_int_equal(c.w.n_lines, 1); /* not called after PROC_STOP */
    assert_int_equal(r.out_total, 100000);
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_stderr_head_and_tail(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "stderr");
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.err_total, 10 + 20000 + 8);
    assert_true(r.err_truncated);
    char marker[64];
    int ml = snprintf(marker, sizeof marker, "\n[... %d bytes omitted ...]\n",
                      10 + 20000 + 8 - 8192);
    assert_int_equal(r.err_len, 4096 + (size_t)ml + 4096);
    assert_memory_equal(r.err, "HEAD-STARTxxxx", 14);
    assert_memory_equal(r.err + 4096, marker, (size_t)ml);
    assert_string_equal(r.err + r.err_len - 12, "xxxxTAIL-END");
    assert_int_equal(strlen(r.err), r.err_len);
    proc_result_fini(&r);

    /* Small enough: all of it, no marker. */
    setup_case(&c, "small_stderr");
    c.o.stderr_head = 4;
    c.o.stderr_tail = 4;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_string_equal(r.err, "a little");
    assert_false(r.err_truncated);
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_missing_program(void **state)
{
    (void)state;
    int before = open_fds();
    run_case c;
    setup_case(&c, "basic");
    c.o.path = "/nonexistent/tk-no-such-program";
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), -ENOENT);
    assert_int_equal(r.end, PROC_END_NOT_STARTED);
    assert_int_equal(r.spawn, PROC_SPAWN_NOT_FOUND);
    assert_int_equal(r.spawn_errno, ENOENT);
    assert_false(r.started);
    assert_null(r.out);
    assert_described(&r, "program not found");
    proc_result_fini(&r);

    /* Present but not executable: told apart from missing. */
    char plain[PATH_MAX];
    in_dir(plain, sizeof plain, tmp, "not-executable");
    FILE *f = fopen(plain, "we");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    c.o.path = plain;
    assert_int_equal(proc_run(&r, &c.o), -EACCES);
    assert_int_equal(r.spawn, PROC_SPAWN_NOT_EXECUTABLE);
    proc_result_fini(&r);

    /* A working directory that does not exist is not "program not found". */
    c.o.path = script("basic");
    c.o.cwd = "/nonexistent/dir";
    assert_int_equal(proc_run(&r, &c.o), -ENOENT);
    assert_int_equal(r.spawn, PROC_SPAWN_BAD_CWD);
    assert_described(&r, "working directory");
    proc_result_fini(&r);

    /* No shell and no search: a relative path is refused. */
    c.o.cwd = NULL;
    c.o.path = "basic";
    assert_int_equal(proc_run(&r, &c.o), -EINVAL);
    proc_result_fini(&r);
    assert_int_equal(open_fds(), before);
    assert_int_equal(count_children(false), 0);
    teardown_case(&c);
}

static void test_find_program(void **state)
{
    (void)state;
    char out[PATH_MAX];
    assert_int_equal(proc_find_program(out, sizeof out, "sh", "/usr/bin:/bin"),
                     0);
    assert_true(strcmp(out, "/usr/bin/sh") == 0 || strcmp(out, "/bin/sh") == 0);
    assert_int_equal(
        proc_find_program(out, sizeof out, "tk-no-such-tool", "/usr/bin"),
        -ENOENT);
    /* The snapshot's PATH by default. */
    assert_int_equal(proc_find_program(out, sizeof out, "env", NULL), 0);
    assert_int_equal(proc_find_program(out, 4, "env", NULL), -ENAMETOOLONG);
    /* A directory is not a program; an absolute name is taken as is. */
    assert_int_equal(proc_find_program(out, sizeof out, "tmp", "/"), -ENOENT);
    assert_int_equal(proc_find_program(out, sizeof out, script("basic"), NULL),
                     0);
    assert_string_equal(out, script("basic"));

    /* Empty and relative entries never mean the working directory: from
     * inside tmp, "basic" is not found through "" or ".", only through
     * tmp's absolute path. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmp), 0);
    assert_int_equal(proc_find_program(out, sizeof out, "basic", ":.:sub"),
                     -ENOENT);
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, ".:%s", tmp);
    assert_int_equal(proc_find_program(out, sizeof out, "basic", path), 0);
    assert_string_equal(out, script("basic"));
    assert_int_equal(chdir(cwd), 0);
}

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return true;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return false;
}

static bool has_name(const char *text, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "%s=", name);
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, key, strlen(key)) == 0)
            return true;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return false;
}

static void test_env_scrubbed(void **state)
{
    (void)state;
    /* The negative control: the test's own environment has them. */
    assert_non_null(getenv("TK_PROC_SECRET"));
    assert_non_null(getenv("HOME"));
    assert_non_null(getenv("PATH"));
    run_case c;
    setup_case(&c, "env");
    const char *env[] = { "TK_ADDED=yes", "LANG=C", "HOME", "LANG=C.UTF-8",
                          NULL };
    c.o.env = env;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.status.code, 0);
    assert_false(has_name(r.out, "TK_PROC_SECRET")); /* not allowlisted */
    assert_false(has_name(r.out, "HOME"));           /* removed by the call */
    assert_true(has_line(r.out, "TK_ADDED=yes"));    /* added by the call */
    assert_true(has_line(r.out, "LANG=C.UTF-8"));    /* the last one wins */
    assert_false(has_line(r.out, "LANG=C"));
    assert_true(has_name(r.out, "PATH")); /* allowlisted, inherited */
    proc_result_fini(&r);
    teardown_case(&c);
}

/* Spawns argv without proc's precautions (fds left open, tkd's signal
 * mask kept) and returns its stdout. The negative control of the fd and
 * signal tests. */
static char *naive_run(const char *const argv[])
{
    int p[2];
    assert_int_equal(port_pipe(p, false), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    pid_t pid;
    assert_int_equal(
        posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t len = 0;
    ssize_t n;
    while ((n = read(p[0], buf + len, 65535 - len)) > 0)
        len += (size_t)n;
    close(p[0]);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return buf;
}

/* The fds of `ls -l /proc/self/fd/`: 0-2 and ls's own directory, no
 * more; nothing of ours. */
static void assert_fds_clean(const char *listing)
{
    int n = 0;
    for (const char *p = strstr(listing, " -> "); p != NULL;
         p = strstr(p + 4, " -> ")) {
        n++;
        assert_true(strncmp(p + 4, "/dev/null", 9) == 0 ||
                    strncmp(p + 4, "pipe:", 5) == 0 ||
                    strncmp(p + 4, "/proc/", 6) == 0);
    }
    assert_int_equal(n, 4);
    assert_null(strstr(listing, "canary"));
}

static void test_no_fd_leak(void **state)
{
    (void)state;
    need(have_proc, "/proc (the script lists /proc/self/fd)");
    char canary[PATH_MAX];
    in_dir(canary, sizeof canary, tmp, "canary");
    /* As another thread or library might: without O_CLOEXEC. */
    int leak = open(canary, O_WRONLY | O_CREAT, 0600);
    int leak_pipe[2];
    assert_true(leak >= 0);
    assert_int_equal(pipe(leak_pipe), 0);
    int before = open_fds();

    run_case c;
    setup_case(&c, "fds");
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.status.code, 0);
    assert_fds_clean(r.out);
    assert_null(strstr(r.out, "anon_inode")); /* no pidfd, no eventfd */
    proc_result_fini(&r);
    assert_int_equal(open_fds(), before); /* and none left with us */

    /* Negative control: the same listing from a plain spawn shows the
     * canary, so the check above can fail. */
    const char *argv[] = { script("fds"), NULL };
    char *naive = naive_run(argv);
    assert_non_null(strstr(naive, "canary"));
    free(naive);

    close(leak);
    close(leak_pipe[0]);
    close(leak_pipe[1]);
    teardown_case(&c);
}

#define SIG_BIT(sig) (1ull << ((sig)-1))
/* 1-31; glibc's posix_spawn leaves its internal signals (32, 33) ignored
 * in every child, which the program's own libc resets. */
#define STD_SIGNALS 0x7fffffffull

/* A "SigBlk:\t<hex>" line of /proc/PID/status, as a set. */
static unsigned long long sig_set(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    assert_non_null(p);
    return strtoull(p + strlen(name) + 2, NULL, 16);
}

static void test_child_state(void **state)
{
    (void)state;
    need(have_proc, "/proc (the script reads /proc/<pid>/stat and "
                    "/proc/self/status)");
    /* main() blocks SIGTERM and SIGINT and ignores SIGPIPE, as tkd does. */
    run_case c;
    setup_case(&c, "state");
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    char want[64];
    snprintf(want, sizeof want, "pid %d pgrp %d", (int)r.pid, (int)r.pid);
    assert_true(has_line(r.out, want)); /* the leader of its own group */
    assert_int_equal(sig_set(r.out, "SigBlk") & STD_SIGNALS, 0);
    assert_int_equal(sig_set(r.out, "SigIgn") & STD_SIGNALS, 0);
    assert_true(has_line(r.out, "stdin /dev/null"));
    proc_result_fini(&r);

    /* Negative control: a plain spawn hands on the mask and SIG_IGN. */
    const char *argv[] = { script("state"), NULL };
    char *naive = naive_run(argv);
    assert_true(sig_set(naive, "SigBlk") & SIG_BIT(SIGTERM));
    assert_true(sig_set(naive, "SigBlk") & SIG_BIT(SIGINT));
    assert_true(sig_set(naive, "SigIgn") & SIG_BIT(SIGPIPE));
    free(naive);
    teardown_case(&c);
}

static void test_cwd(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "pwd");
    char real[PATH_MAX], want[PATH_MAX + 2];
    assert_non_null(realpath(tmp, real));
    c.o.cwd = tmp;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    snprintf(want, sizeof want, "%s\n", real);
    assert_string_equal(r.out, want);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* With the descriptors used up (the soft RLIMIT_NOFILE lowered to the
 * lowest free descriptor, so that no open can succeed), a run does not
 * start and says why: PROC_SPAWN_SYSTEM with EMFILE, whichever descriptor
 * it needed first (the working directory's, the pipes), never "working
 * directory not usable". */
static void test_out_of_descriptors(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "pwd");
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int lowest = dup(STDIN_FILENO);
    assert_true(lowest >= 0);
    close(lowest);
    int before = open_fds();
    proc_result r[2];
    int rv[2];
    struct rlimit full = { .rlim_cur = (rlim_t)lowest,
                           .rlim_max = saved.rlim_max };
    for (int i = 0; i < 2; i++) {
        c.o.cwd = i == 0 ? tmp : NULL;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &full), 0);
        rv[i] = proc_run(&r[i], &c.o);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rv[i], -EMFILE);
        assert_int_equal(r[i].end, PROC_END_NOT_STARTED);
        assert_false(r[i].started);
        assert_int_equal(r[i].spawn, PROC_SPAWN_SYSTEM);
        assert_int_equal(r[i].spawn_errno, EMFILE);
        assert_described(&r[i], "could not start the program (Too many open "
                                "files)");
        proc_result_fini(&r[i]);
    }
    assert_int_equal(open_fds(), before);
    /* Negative control: with the limit back, the same run starts. */
    c.o.cwd = tmp;
    proc_result ok;
    assert_int_equal(proc_run(&ok, &c.o), 0);
    assert_int_equal(ok.end, PROC_END_EXITED);
    proc_result_fini(&ok);
    assert_int_equal(count_children(false), 0);
    teardown_case(&c);
}

/* The tree scenario: the script forks a grandchild that keeps stdout and
 * sleeps; the cancel fd fires once the script says "ready". */
static void run_tree(proc_result *r, run_case *c, unsigned hooks,
                     uint32_t drain_ms)
{
    setup_watched(c, "tree", "ready");
    c->o.drain_ms = drain_ms;
    assert_int_equal(proc__test_run(r, &c->o, hooks), 0);
    assert_true(c->w.grandchild > 0);
}

static void test_cancel_kills_the_group(void **state)
{
    (void)state;
    NEED_SUBREAPER();
    int before = open_fds();
    run_case c;
    proc_result r;
    run_tree(&r, &c, 0, 0);
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_true(r.process_killed && r.reaped);
    assert_int_equal(r.kill_signal, SIGKILL);
    assert_false(r.drain_timed_out);
    assert_true(r.cleanup_ms < PROC_DEFAULT_DRAIN_MS); /* within the bound */
    /* It did die of our SIGKILL, and is reported as cancelled all the same. */
    assert_int_equal(r.status.kind, PROC_STATUS_SIGNALED);
    assert_int_equal(r.status.signal, SIGKILL);
    assert_described(&r, "cancelled by the caller (process group killed)");

    /* The grandchild died of the group kill; then nothing of the group is
     * left, and no zombie. */
    int st = ts_reap_orphan(c.w.grandchild, 5000);
    assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_false(ts_group_exists(r.pid));
    assert_int_equal(count_children(true), 0);
    assert_int_equal(count_children(false), 0);
    proc_result_fini(&r);
    teardown_case(&c);
    assert_int_equal(open_fds(), before);
}

static void test_cancel_leader_only_negative_control(void **state)
{
    (void)state;
    NEED_SUBREAPER();
    need(have_proc, "/proc to read the grandchild's state in");
    run_case c;
    proc_result r;
    run_tree(&r, &c, PROC__TEST_KILL_LEADER_ONLY, 300);
    /* Killing the leader alone: the grandchild lives on with the pipe, and
     * only the drain bound ended the run. */
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_true(r.drain_timed_out);
    assert_true(r.cleanup_ms >= 300);
    assert_true(kill(c.w.grandchild, 0) == 0);
    char s = proc_state(c.w.grandchild);
    assert_true(s == 'S' || s == 'R');
    assert_true(ts_group_exists(r.pid));
    kill_orphan(c.w.grandchild);
    assert_false(ts_group_exists(r.pid));
    proc_result_fini(&r);
    teardown_case(&c);
}

/* The caller's deadline ends a READ that has started (one that has not
 * is test_caller_gone_before_start's). Nothing here depends on how far
 * the script got by then: a deadline that passed while posix_spawn ran
 * still finds a started run, which is killed. What the script printed
 * before a kill is kept: test_stdout_cap_kill (captured) and the cancel
 * tests (streamed, the cancel fired on the script's "ready") show that,
 * on an event rather than on how soon sh starts. */
static void test_deadline(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "slow");
    int64_t deadline = proc_now_ns() + 300 * 1000000LL;
    c.o.deadline_ns = deadline;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_true(proc_now_ns() >= deadline); /* not before it */
    assert_int_equal(r.end, PROC_END_DEADLINE);
    assert_true(r.started && r.process_killed);
    assert_int_equal(r.kill_signal, SIGKILL);
    assert_described(&r, "deadline passed (process group killed)");
    proc_result_fini(&r);

    /* With no deadline, the run's own ceiling. */
    c.o.deadline_ns = INT64_MAX;
    c.o.timeout_ms = 300;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_TIMEOUT);
    assert_true(r.process_killed);
    assert_int_equal(r.kill_signal, SIGKILL);
    assert_described(&r, "ran past its ceiling of 300 ms");
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_caller_gone_before_start(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "basic", NULL);
    c.o.deadline_ns = proc_now_ns() - 1;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_DEADLINE);
    assert_false(r.started);
    assert_described(&r, "before it started");
    proc_result_fini(&r);

    port_event_set(&c.w.cancel);
    c.o.deadline_ns = INT64_MAX;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_false(r.started);
    assert_int_equal(c.w.n_lines, 0);
    proc_result_fini(&r);

    /* A WRITE starts whatever its caller did. */
    c.o.kind = PROC_WRITE;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 3);
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_write_runs_to_completion(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "write_slow", "ready");
    c.o.kind = PROC_WRITE;
    c.o.deadline_ns = proc_now_ns() + 50 * 1000000LL; /* ignored too */
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.kind, PROC_STATUS_EXITED);
    assert_int_equal(r.status.code, 0);
    assert_false(r.process_killed);
    assert_int_equal(c.w.n_lines, 2);
    assert_string_equal(c.w.lines[1], "done"); /* written after the cancel */
    proc_result_fini(&r);
    teardown_case(&c);
}

/* A WRITE past its own timeout gets SIGTERM, then SIGKILL after the grace.
 * The script must survive SIGTERM to show the SIGKILL, so its trap must be
 * set when SIGTERM comes, TERM_AFTER_MS after the spawn; it prints "ready"
 * once it is. A WRITE's timeout cannot wait for that line, so the bound is
 * derived: from proc_run to the "ready" line took at most 11 ms in 360
 * runs under load (two busy loops on the 2 cores, load average 5, ASan
 * and TSan builds alike); 1000 ms is 90 times that. Should it still come
 * first, the test says so rather than that TERM was missing. */
#define TERM_AFTER_MS 1000

static void test_write_timeout_term_then_kill(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "stubborn", NULL); /* survives SIGTERM */
    c.o.kind = PROC_WRITE;
    c.o.timeout_ms = TERM_AFTER_MS;
    c.o.term_grace_ms = 300;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    if (c.w.n_lines < 1 || strcmp(c.w.lines[0], "ready") != 0)
        fail_msg("the script had not set its trap when SIGTERM came, "
                 "%u ms after the spawn (stderr: %s)",
                 TERM_AFTER_MS, r.err != NULL ? r.err : "");
    assert_int_equal(r.end, PROC_END_TIMEOUT);
    assert_true(r.process_killed);
    assert_int_equal(r.kill_signal, SIGKILL);
    assert_non_null(strstr(r.err, "got-TERM")); /* TERM came first */
    assert_true(r.elapsed_ms >= TERM_AFTER_MS + 300);
    assert_int_equal(r.status.kind, PROC_STATUS_SIGNALED);
    assert_described(&r,
                     "write timed out after 1000 ms (SIGTERM, then SIGKILL)");
    reap_group(r.pid); /* the script's last `sleep 1` */
    proc_result_fini(&r);
    teardown_case(&c);

    /* One that does end on SIGTERM is not killed: SIGKILL would have come
     * at the end of the grace. (Whether sh has started by the time SIGTERM
     * comes does not matter: without a trap, it ends on it either way.) */
    setup_case(&c, "slow");
    c.o.kind = PROC_WRITE;
    c.o.timeout_ms = 300;
    c.o.term_grace_ms = 5000;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_TIMEOUT);
    assert_int_equal(r.kill_signal, SIGTERM);
    assert_described(&r, "write timed out after 300 ms (ended after SIGTERM)");
    proc_result_fini(&r);
    teardown_case(&c);
}

/* What on_group was told, in order. */
typedef struct groups {
    pid_t told[4];
    int n;
} groups;

static void note_group(void *arg, pid_t pgid)
{
    groups *g = arg;
    if (g->n < 4)
        g->told[g->n] = pgid;
    g->n++;
}

/* A WRITE its owner abandons (the abort fd fires once the script says
 * "ready") is cut short as a timeout cuts it: SIGTERM first, SIGKILL
 * after the grace; reported ABORTED, never the program's own end. */
static void test_write_abandoned(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "stubborn", "ready"); /* survives SIGTERM */
    c.o.kind = PROC_WRITE;
    c.o.abort_fd = c.w.cancel.fd;
    c.o.cancel_fd = -1;
    /* Above the script's `sleep 1`: SIGTERM can reach the group before
     * the shell forks it, and the shell runs its trap once it ends. */
    c.o.term_grace_ms = 1500;
    groups g = { 0 };
    c.o.on_group = note_group;
    c.o.on_group_arg = &g;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_ABORTED);
    assert_true(r.started);
    assert_true(r.process_killed);
    assert_int_equal(r.kill_signal, SIGKILL);
    assert_non_null(strstr(r.err, "got-TERM")); /* TERM came first */
    assert_true(r.cleanup_ms >= 1500);
    assert_described(&r, "write abandoned by its owner (SIGTERM, then "
                         "SIGKILL)");
    /* Told the group when it started, and 0 before the reap. */
    assert_int_equal(g.n, 2);
    assert_int_equal(g.told[0], r.pid);
    assert_int_equal(g.told[1], 0);
    reap_group(r.pid); /* the script's last `sleep 1` */
    proc_result_fini(&r);
    teardown_case(&c);

    /* One that ends on SIGTERM is not killed. */
    setup_watched(&c, "slow", "ready");
    c.o.kind = PROC_WRITE;
    c.o.abort_fd = c.w.cancel.fd;
    c.o.cancel_fd = -1;
    c.o.term_grace_ms = 5000;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_ABORTED);
    assert_int_equal(r.kill_signal, SIGTERM);
    assert_true(r.elapsed_ms < 5000);
    assert_described(&r, "write abandoned by its owner (ended after SIGTERM)");
    proc_result_fini(&r);

    /* Abandoned already: not started at all. */
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_ABORTED);
    assert_false(r.started);
    assert_described(&r, "write abandoned by its owner before it started");
    proc_result_fini(&r);
    teardown_case(&c);

    /* Negative control: a READ ignores the abort fd (its cancel_fd is
     * what stops it), and runs to its end. */
    setup_case(&c, "basic");
    port_event fired;
    assert_int_equal(port_event_open(&fired), 0);
    port_event_set(&fired); /* readable */
    c.o.abort_fd = fired.fd;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 3);
    proc_result_fini(&r);
    port_event_close(&fired);
    teardown_case(&c);
}

static void test_stream_stop(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "lines", NULL); /* endless lines */
    c.w.stop_after = 10;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_STOPPED);
    assert_true(r.process_killed && r.reaped);
    assert_false(r.drain_timed_out);
    assert_int_equal(c.w.n_lines, 10); /* never called after PROC_STOP */
    assert_string_equal(c.w.lines[0], "line 1");
    assert_string_equal(c.w.lines[9], "line 10");
    assert_described(&r, "stopped by its reader (process group killed)");
    assert_false(ts_group_exists(r.pid));
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_records(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "records", NULL);
    c.o.record_delim = '\0';
    c.o.record_max = 8;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(c.w.n_lines, 4);
    assert_string_equal(c.w.lines[0], "short");
    assert_string_equal(c.w.lines[1], "a-very-l"); /* cut at record_max */
    assert_string_equal(c.w.lines[2], "");
    assert_string_equal(c.w.lines[3], "tail"); /* unterminated, at EOF */
    assert_true(c.w.any_truncated && r.records_truncated);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* A cut record resumes at record_resume: its first record_max bytes, the
 * string, and what follows; the string may begin in the part kept. */
static void test_records_resume(void **state)
{
    (void)state;
    run_case c;
    setup_watched(&c, "resumed", NULL);
    c.o.record_delim = '\0';
    c.o.record_max = 8;
    c.o.record_resume = "-MARK-";
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(c.w.n_lines, 4);
    assert_string_equal(c.w.lines[0], "aaaaaaaa-MARK-tail1");
    assert_string_equal(c.w.lines[1], "xxxx");
    assert_string_equal(c.w.lines[2], "bbbbb-MA-MARK-tail2");
    assert_string_equal(c.w.lines[3], "cccccccc"); /* never resumed */
    assert_true(c.w.any_truncated && r.records_truncated);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* ---- batched stdout ----------------------------------------------------- */

/* Batched, stdout still arrives whole and in order, the unterminated last
 * record at EOF, with the leader's exit watched by a pidfd or by waitid. */
static void test_batched_stdout_whole(void **state)
{
    (void)state;
    size_t want = 4; /* "last" */
    for (int i = 1; i <= 3000; i++) {
        char line[32];
        want += (size_t)snprintf(line, sizeof line, "line %d", i);
    }
    static const unsigned hooks[] = { 0, PROC__TEST_NO_PIDFD };
    for (size_t h = 0; h < sizeof hooks / sizeof *hooks; h++) {
        run_case c;
        setup_watched(&c, "many_writes", NULL);
        c.o.stdout_batch_ms = 5;
        proc_result r;
        assert_int_equal(proc__test_run(&r, &c.o, hooks[h]), 0);
        assert_int_equal(r.end, PROC_END_EXITED);
        assert_int_equal(r.status.code, 0);
        assert_int_equal(c.w.n_lines, 3001);
        assert_string_equal(c.w.lines[0], "line 1");
        assert_string_equal(c.w.lines[15], "line 16");
        assert_string_equal(c.w.last, "last");
        assert_int_equal(c.w.bytes, want);
        assert_int_equal(r.out_total, want + 3000); /* with the newlines */
        assert_false(c.w.any_truncated || r.drain_timed_out);
        proc_result_fini(&r);
        teardown_case(&c);
    }
}

/* More than the enlarged pipe holds, captured: every byte, and the EOF. */
static void test_batched_stdout_large(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "threemeg");
    c.o.stdout_batch_ms = 5;
    c.o.stdout_cap = 4000000;
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.out_len, 3000000);
    assert_int_equal(r.out_total, 3000000);
    assert_false(r.out_truncated);
    for (size_t i = 0; i < r.out_len; i += 10)
        assert_memory_equal(r.out + i, "abcdefghi\n",
                            r.out_len - i < 10 ? r.out_len - i : 10);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* While stdout is left to fill, the rest still wakes the run: the cancel
 * fd, the deadline, and the leader's exit (whose last output is read as
 * it comes). The batch here is longer than the test may take. */
static void test_batched_stdout_other_events(void **state)
{
    (void)state;
    const uint32_t batch = 600000;
    run_case c;
    proc_result r;
    /* The cancel fires on "ready", the read that starts the batch. */
    setup_watched(&c, "slow", "ready");
    c.o.stdout_batch_ms = batch;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_true(r.process_killed && r.reaped);
    assert_true(r.elapsed_ms < batch);
    proc_result_fini(&r);
    teardown_case(&c);

    setup_watched(&c, "slow", NULL);
    c.o.stdout_batch_ms = batch;
    c.o.deadline_ns = proc_now_ns() + 300 * 1000000LL;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_DEADLINE);
    assert_true(r.elapsed_ms < batch);
    proc_result_fini(&r);
    teardown_case(&c);

    setup_watched(&c, "write_slow", NULL); /* ready, 0.3 s, done, exit */
    c.o.stdout_batch_ms = batch;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(c.w.n_lines, 2);
    assert_string_equal(c.w.lines[0], "ready");
    assert_string_equal(c.w.lines[1], "done");
    assert_true(r.elapsed_ms < batch);
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_pidfd_fallback(void **state)
{
    (void)state;
    run_case c;
    setup_case(&c, "basic");
    proc_result r;
    assert_int_equal(proc__test_run(&r, &c.o, PROC__TEST_NO_PIDFD), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 3);
    assert_string_equal(r.out, "out1\nout2\n");
    proc_result_fini(&r);
    teardown_case(&c);

    NEED_SUBREAPER();
    setup_watched(&c, "tree", "ready");
    assert_int_equal(proc__test_run(&r, &c.o, PROC__TEST_NO_PIDFD), 0);
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_true(r.reaped && !r.drain_timed_out);
    assert_true(ts_reap_orphan(c.w.grandchild, 5000) != -1);
    assert_false(ts_group_exists(r.pid));
    proc_result_fini(&r);
    teardown_case(&c);
}

static void test_stuck_leader_goes_to_reaper(void **state)
{
    (void)state;
    need(have_proc, "/proc to see the leader reaped in");
    run_case c;
    setup_watched(&c, "slow", "ready");
    c.o.drain_ms = 200;
    proc_result r;
    /* No signal is sent: the leader outlives the drain bound, as one stuck
     * in the kernel would. */
    assert_int_equal(proc__test_run(&r, &c.o, PROC__TEST_NO_KILL), 0);
    assert_int_equal(r.end, PROC_END_CANCELLED);
    assert_false(r.reaped);
    assert_int_equal(r.status.kind, PROC_STATUS_UNKNOWN);
    assert_true(r.drain_timed_out);
    /* The run waited out its own drain bound, and then not the leader
     * (that would not end before the test kills it, below): at least
     * drain_ms, and less than the default bound, which a run that ignored
     * drain_ms would have waited (that leaves 1.8 s for scheduling). */
    assert_true(r.cleanup_ms >= c.o.drain_ms);
    assert_true(r.cleanup_ms < PROC_DEFAULT_DRAIN_MS);
    /* Once it dies, the reaper thread reaps it: no zombie stays. */
    assert_int_equal(kill(r.pid, SIGKILL), 0);
    long long until = ts_now_ms() + 5000;
    while (proc_state(r.pid) != '\0' && ts_now_ms() < until) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL); /* polls a condition; nothing to wait on */
    }
    assert_int_equal(proc_state(r.pid), '\0');
    proc_result_fini(&r);
    teardown_case(&c);
}

/* A process left in the group, not holding the pipes, after the leader
 * exited by itself: a READ sweeps it, a WRITE leaves it (proc.h says why:
 * a detached gc must not be caught half way). */
static void test_leftovers(void **state)
{
    (void)state;
    NEED_SUBREAPER();
    run_case c;
    setup_watched(&c, "leftovers", NULL);
    proc_result r;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(r.status.code, 0);
    assert_false(r.process_killed);
    int st = ts_reap_orphan(c.w.straggler, 5000);
    assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_false(ts_group_exists(r.pid));
    proc_result_fini(&r);
    teardown_case(&c);

    /* Negative control: without the group sweep the straggler survives. */
    setup_watched(&c, "leftovers", NULL);
    assert_int_equal(proc__test_run(&r, &c.o, PROC__TEST_KILL_LEADER_ONLY), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_int_equal(kill(c.w.straggler, 0), 0);
    assert_true(proc_state(c.w.straggler) != 'Z');
    kill_orphan(c.w.straggler);
    proc_result_fini(&r);
    teardown_case(&c);

    /* A WRITE that completed keeps what it started. */
    setup_watched(&c, "leftovers", NULL);
    c.o.kind = PROC_WRITE;
    assert_int_equal(proc_run(&r, &c.o), 0);
    assert_int_equal(r.end, PROC_END_EXITED);
    assert_false(r.process_killed);
    assert_int_equal(kill(c.w.straggler, 0), 0);
    assert_true(proc_state(c.w.straggler) != 'Z');
    kill_orphan(c.w.straggler);
    proc_result_fini(&r);
    teardown_case(&c);
}

/* ---- concurrency --------------------------------------------------------- */

#define N_THREADS 16

typedef struct job {
    int index;
    int rv;
    proc_result r;
    watcher w;
} job;

/* Even jobs run to their end; odd ones are cancelled once ready. */
static void *run_job(void *arg)
{
    job *j = arg;
    char num[16];
    snprintf(num, sizeof num, "%d", j->index);
    proc_opts o;
    proc_opts_init(&o);
    const char *argv[] = { NULL, num, NULL };
    argv[0] = script(j->index % 2 == 0 ? "numbered" : "slow");
    o.path = argv[0];
    o.argv = argv;
    if (j->index % 2 != 0) {
        assert_int_equal(port_event_open(&j->w.cancel), 0);
        j->w.fire_on = "ready";
        o.cancel_fd = j->w.cancel.fd;
        o.on_stdout = watch;
        o.on_stdout_arg = &j->w;
        o.record_max = 64;
    }
    j->rv = proc_run(&j->r, &o);
    if (j->index % 2 != 0)
        port_event_close(&j->w.cancel);
    return NULL;
}

static void check_job(const job *j)
{
    assert_int_equal(j->rv, 0);
    assert_true(j->r.reaped);
    assert_false(ts_group_exists(j->r.pid));
    if (j->index % 2 != 0) {
        assert_int_equal(j->r.end, PROC_END_CANCELLED);
        assert_true(j->r.process_killed);
        return;
    }
    char out[32], err[32];
    snprintf(out, sizeof out, "out %d\n", j->index);
    snprintf(err, sizeof err, "err %d\n", j->index);
    assert_int_equal(j->r.end, PROC_END_EXITED);
    assert_int_equal(j->r.status.code, j->index % 7);
    assert_string_equal(j->r.out, out);
    assert_string_equal(j->r.err, err);
}

static void test_concurrent_runs(void **state)
{
    (void)state;
    int before = open_fds();
    static job jobs[N_THREADS];
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].index = i;
        assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < N_THREADS; i++) {
        check_job(&jobs[i]);
        proc_result_fini(&jobs[i].r);
    }
    assert_int_equal(open_fds(), before);
    assert_int_equal(count_children(false), 0);
}

static void test_no_zombies_at_the_end(void **state)
{
    (void)state;
    assert_int_equal(count_children(true), 0);
    assert_int_equal(count_children(false), 0);
}

/* ---- main -----------------------------------------------------------------
 */

static int group_setup(void **state)
{
    (void)state;
    if (ts_mkdtemp(tmp, sizeof tmp, "proc") != 0)
        return -1;
    write_scripts();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return ts_rmtree(tmp);
}

int main(void)
{
    /* Before proc takes its snapshot of the environment. */
    // NOLINTNEXTLINE(concurrency-mt-unsafe): main, before any thread starts
    int rv = setenv("TK_PROC_SECRET", "must-not-reach-children", 1);
    // NOLINTNEXTLINE(concurrency-mt-unsafe): main, before any thread starts
    rv |= setenv("HOME", "/home/tk-test", 0);
    if (rv != 0)
        return 1;
    proc_init();
    /* As tkd: SIGTERM/SIGINT blocked in every thread, SIGPIPE ignored. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct sigaction ign = { .sa_handler = SIG_IGN };
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        sigaction(SIGPIPE, &ign, NULL) != 0)
        return 1;
#ifdef PR_SET_CHILD_SUBREAPER
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 1;
    subreaper = true;
#endif
    have_proc = access("/proc/self/status", R_OK) == 0;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdout_stderr_apart),
        cmocka_unit_test(test_stdout_cap_kill),
        cmocka_unit_test(test_stdout_cap_discard),
        cmocka_unit_test(test_stdout_cap_streamed),
        cmocka_unit_test(test_write_not_cut_by_output),
        cmocka_unit_test(test_stderr_head_and_tail),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_find_program),
        cmocka_unit_test(test_env_scrubbed),
        cmocka_unit_test(test_no_fd_leak),
        cmocka_unit_test(test_child_state),
        cmocka_unit_test(test_cwd),
        cmocka_unit_test(test_out_of_descriptors),
        cmocka_unit_test(test_cancel_kills_the_group),
        cmocka_unit_test(test_cancel_leader_only_negative_control),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_caller_gone_before_start),
        cmocka_unit_test(test_write_runs_to_completion),
        cmocka_unit_test(test_write_timeout_term_then_kill),
        cmocka_unit_test(test_write_abandoned),
        cmocka_unit_test(test_stream_stop),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_records_resume),
        cmocka_unit_test(test_batched_stdout_whole),
        cmocka_unit_test(test_batched_stdout_large),
        cmocka_unit_test(test_batched_stdout_other_events),
        cmocka_unit_test(test_pidfd_fallback),
        cmocka_unit_test(test_stuck_leader_goes_to_reaper),
        cmocka_unit_test(test_leftovers),
        cmocka_unit_test(test_concurrent_runs),
        cmocka_unit_test(test_no_zombies_at_the_end),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
