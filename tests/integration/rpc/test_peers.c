/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * peer checks (a peer of another uid is refused, the socket is private).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <tk/client.h>

#include "rpc_fx.h"

/* ---- tests: security
 * --------------------------------------------------------- */

static void test_peer_uid_refused(void **state)
{
    (void)state;
    ts_fx fx;
    ts_fx_opts o = { .allowed_uid = (int64_t)geteuid() + 1 };
    fx_start(&fx, &o);
    tk_status st;
    int code = call_ping_like(fx.client, "tk.v1.Control/Ping", NULL, 1000, NULL,
                              &st, NULL);
    assert_int_equal(code, TK_CODE_PERMISSION_DENIED);
    assert_string_equal(st.reason, "PEER_UID");
    assert_true(st.from_server);
    tk_status_clear(&st);
    ts_fx_stop(&fx);
    /* Negative control: the default (tkd's own uid) lets us in. */
    fx_start(&fx, NULL);
    expect_ping_ok(fx.client);
    ts_fx_stop(&fx);
}

static void test_socket_is_private(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    struct stat st;
    assert_int_equal(stat(fx.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    if (geteuid() == 0) {
        /* Another user cannot even connect. */
        pid_t pid = fork();
        if (pid == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0)
                _exit(3);
            /* Plain connect(2): NNG must not be used after fork. */
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            struct sockaddr_un sa = { .sun_family = AF_UNIX };
            memcpy(sa.sun_path, fx.path,
                   strnlen(fx.path, sizeof sa.sun_path - 1));
            int rv = connect(fd, (struct sockaddr *)&sa, sizeof sa);
            _exit(rv != 0 && errno == EACCES ? 0 : 1);
        }
        int status;
        waitpid(pid, &status, 0);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_uid_refused),
        cmocka_unit_test(test_socket_is_private),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
