/* SPDX-License-Identifier: MIT */
/*
 * A bare NNG REP socket that echoes every request: what the handshake
 * hang-up test (tests/security/test_listeners.py) runs twice, linked with
 * the NNG tk builds (subprojects/nng.wrap) and with the system's, to show that
 * the test tells the two apart.
 *
 * usage: rep_echo URL   (prints "ready" once listening)
 */
#include <stdio.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

int main(int argc, char **argv)
{
    nng_socket s;
    int rv;
    if (argc != 2) {
        fprintf(stderr, "usage: rep_echo URL\n");
        return 2;
    }
    if ((rv = nng_rep0_open(&s)) != 0 ||
        (rv = nng_listen(s, argv[1], NULL, 0)) != 0) {
        fprintf(stderr, "rep_echo: %s\n", nng_strerror(rv));
        return 1;
    }
    if (printf("ready\n") < 0 || fflush(stdout) != 0)
        return 1;
    for (;;) {
        nng_msg *m;
        if ((rv = nng_recvmsg(s, &m, 0)) != 0)
            break;
        if ((rv = nng_sendmsg(s, m, 0)) != 0) {
            nng_msg_free(m);
            break;
        }
    }
    fprintf(stderr, "rep_echo: %s\n", nng_strerror(rv));
    return 1;
}
