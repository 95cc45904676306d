/* SPDX-License-Identifier: MIT */
/* tkd as a program: its command line, the default socket directory and
 * mode, the per-call log line. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

static int run_tkd(const char *const argv[], ts_proc *p)
{
    assert_int_equal(ts_spawn(p, argv, NULL), 0);
    return ts_finish(p, 20000);
}

static void test_help_and_version(void **state)
{
    (void)state;
    ts_proc p;
    const char *help[] = { ts_program("TKD"), "--help", NULL };
    assert_int_equal(run_tkd(help, &p), 0);
    assert_non_null(strstr(p.out, "--listen URL"));
    assert_non_null(strstr(p.out, "--max-request-bytes"));
    assert_non_null(strstr(p.out, "--pg DSN"));
    /* the exit status of a shutdown whose grace ran out (docs/tkd.md too) */
    assert_non_null(strstr(p.out, "3 calls outlived --shutdown-grace-ms"));
    ts_proc_free(&p);
    const char *version[] = { ts_program("TKD"), "--version", NULL };
    assert_int_equal(run_tkd(version, &p), 0);
    assert_true(strncmp(p.out, "tkd ", 4) == 0);
    ts_proc_free(&p);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        { "--workers", "0", "--workers" },
        { "--workers", "x", "--workers" },
        { "--log-level", "loud", "--log-level" },
        { "--root", "/nonexistent/dir", "--root" },
        { "--max-request-bytes", "-5", "--max-request-bytes" },
        { "--pg-pool", "0", "--pg-pool" },
        { "--frobnicate", NULL, "--help" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_proc p;
        const char *argv[] = { ts_program("TKD"), cases[i][0], cases[i][1],
                               NULL };
        assert_int_equal(run_tkd(argv, &p), 2);
        if (p.err == NULL || strstr(p.err, cases[i][2]) == NULL)
            fail_msg("%s: stderr does not mention %s: %s", cases[i][0],
                     cases[i][2], p.err);
        ts_proc_free(&p);
    }
}

/* Without --listen: $XDG_RUNTIME_DIR/tk/tkd.sock, directory 0700, socket
 * 0600; and one log line per call. */
static void test_default_socket_and_call_log(void **state)
{
    (void)state;
    char dir[256], env[300], sockdir[300], sock[320];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "xdg"), 0);
    snprintf(env, sizeof env, "XDG_RUNTIME_DIR=%s", dir);
    snprintf(sockdir, sizeof sockdir, "%s/tk", dir);
    snprintf(sock, sizeof sock, "%s/tk/tkd.sock", dir);
    const char *envs[] = { env, "TK_ADDR=", NULL };
    const char *argv[] = { ts_program("TKD"), NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, envs), 0);
    assert_true(ts_wait_output(&p, 2, "listening on", 20000));
    struct stat st;
    assert_int_equal(stat(sockdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(sock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    ts_proc c;
    const char *call[] = { ts_program("TKCALL"), "tk.v1.Control/Ping", NULL };
    assert_int_equal(ts_spawn(&c, call, envs), 0); /* the same default */
    assert_int_equal(ts_finish(&c, 20000), 0);
    ts_proc_free(&c);
    assert_true(ts_wait_output(
        &p, 2, "call method=tk.v1.Control/Ping code=OK reason=-", 20000));
    assert_non_null(strstr(p.err, "elapsed_us="));
    assert_non_null(strstr(p.err, "cause=NONE"));

    ts_signal(&p, SIGTERM);
    assert_int_equal(ts_finish(&p, 20000), 0);
    ts_proc_free(&p);
    ts_rmtree(dir);
}

/* Two runs of this test at once (two clones' suites, one uid) share the
 * fixed /tmp/tk-$UID: each would see its tkd's directory appear or vanish
 * under the other, and one's clean-up would remove the other's socket.
 * They take turns on a lock beside it, held for the whole test. The file
 * stays: removing a lock file races with its next taker. A private
 * XDG_RUNTIME_DIR would not do: the fixed path is what the test is about. */
static int lock_fallback_dir(const char *sockdir)
{
    char path[96];
    snprintf(path, sizeof path, "%s.test-lock", sockdir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    while (flock(fd, LOCK_EX) != 0)
        assert_int_equal(errno, EINTR);
    return fd;
}

/* Without XDG_RUNTIME_DIR: /tmp/tk-$UID/tkd.sock (the path is fixed, TMPDIR
 * does not move it), directory 0700, socket 0600. Skipped when that
 * directory exists already: it may be a real tkd's, which a test must
 * not touch. */
static void test_default_socket_without_xdg(void **state)
{
    (void)state;
    char sockdir[64], sock[96];
    snprintf(sockdir, sizeof sockdir, "/tmp/tk-%u", (unsigned)geteuid());
    snprintf(sock, sizeof sock, "%s/tkd.sock", sockdir);
    int lock = lock_fallback_dir(sockdir); /* released when the fd closes */
    struct stat st;
    if (lstat(sockdir, &st) == 0) {
        fprintf(stderr, "%s exists; not testing the fallback address\n",
                sockdir);
        close(lock);
        skip();
    }
    const char *envs[] = { "XDG_RUNTIME_DIR=", "TK_ADDR=", NULL };
    const char *argv[] = { ts_program("TKD"), NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, envs), 0);
    bool up = ts_wait_output(&p, 2, "listening on ipc:///tmp/tk-", 20000);
    bool dir_ok = stat(sockdir, &st) == 0 && (st.st_mode & 0777) == 0700 &&
                  st.st_uid == geteuid();
    bool sock_ok = stat(sock, &st) == 0 && (st.st_mode & 0777) == 0600;
    int call_rv = -1;
    if (up) {
        ts_proc c;
        const char *call[] = { ts_program("TKCALL"), "tk.v1.Control/Ping",
                               NULL };
        assert_int_equal(ts_spawn(&c, call, envs), 0); /* the same default */
        call_rv = ts_finish(&c, 20000);
        ts_proc_free(&c);
    }
    ts_signal(&p, SIGTERM);
    int rv = ts_finish(&p, 20000);
    /* Ours: tkd created it (it did not exist). */
    unlink(sock);
    rmdir(sockdir);
    close(lock);
    if (!up)
        fail_msg("tkd did not listen on the fallback: %s", p.err);
    ts_proc_free(&p);
    assert_true(dir_ok);
    assert_true(sock_ok);
    assert_int_equal(call_rv, 0);
    assert_int_equal(rv, 0);
}

/* A socket directory others may enter is refused, not used. */
static void test_refuses_open_socket_dir(void **state)
{
    (void)state;
    char dir[256], env[300], sockdir[300];
    assert_int_equal(ts_mkdtemp(dir, sizeof dir, "xdg"), 0);
    snprintf(env, sizeof env, "XDG_RUNTIME_DIR=%s", dir);
    snprintf(sockdir, sizeof sockdir, "%s/tk", dir);
    assert_int_equal(mkdir(sockdir, 0700), 0);
    assert_int_equal(chmod(sockdir, 0755), 0);
    const char *envs[] = { env, "TK_ADDR=", NULL };
    const char *argv[] = { ts_program("TKD"), NULL };
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, envs), 0);
    assert_int_equal(ts_finish(&p, 20000), 1);
    assert_non_null(strstr(p.err, "must be a 0700 directory"));
    ts_proc_free(&p);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_default_socket_and_call_log),
        cmocka_unit_test(test_default_socket_without_xdg),
        cmocka_unit_test(test_refuses_open_socket_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
