/* SPDX-License-Identifier: MIT */
/*
 * A program that links both libtkclient and the system's NNG (Debian's
 * libnng.so.1), as a user's might (tests/install/two_nngs.sh runs it):
 * its own nng_ calls must reach the system's NNG, and tk's calls tk's NNG
 * inside libtkclient. It makes a REQ/REP round trip over inproc:// through
 * the system's NNG, a Ping through libtkclient to the tkd at TK_ADDR, and
 * asks where its nng_version lies: in libnng.so.1, never in libtkclient
 * (which, exporting its NNG, came first in the link and took every nng_
 * name before client/lib/libtkclient.map) nor in the program itself (a
 * libtkclient.a linked with an NNG whose names are public).
 * Exit 0 when all three hold; 1, with the reason on stderr, otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT: meson sets it, a user's cc not */
#endif
#include <dlfcn.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tk/client.h>
#include <tk/v1/control.tk.h>

static int fail(const char *what, int rv)
{
    fprintf(stderr, "two-nngs: %s: %s\n", what, nng_strerror(rv));
    return 1;
}

/* Whether buf holds the 5 bytes of want ("ping" and its NUL); frees it. */
static int got(char *buf, size_t len, const char *want)
{
    int ok = len == 5 && memcmp(buf, want, 5) == 0;
    nng_free(buf, len);
    return ok;
}

/* "ping" from REQ to REP and "pong" back, over the system's NNG. */
static int round_trip(void)
{
    nng_socket rep = NNG_SOCKET_INITIALIZER;
    nng_socket req = NNG_SOCKET_INITIALIZER;
    char *buf;
    size_t len;
    int bad = 1;
    int rv;
    if ((rv = nng_rep0_open(&rep)) != 0 || (rv = nng_req0_open(&req)) != 0 ||
        (rv = nng_listen(rep, "inproc://two-nngs", NULL, 0)) != 0 ||
        (rv = nng_dial(req, "inproc://two-nngs", NULL, 0)) != 0 ||
        (rv = nng_send(req, "ping", 5, 0)) != 0 ||
        (rv = nng_recv(rep, &buf, &len, NNG_FLAG_ALLOC)) != 0) {
        fail("REQ/REP over inproc", rv);
        goto done;
    }
    bad = !got(buf, len, "ping");
    if ((rv = nng_send(rep, "pong", 5, 0)) != 0 ||
        (rv = nng_recv(req, &buf, &len, NNG_FLAG_ALLOC)) != 0) {
        bad = fail("the reply over inproc", rv);
        goto done;
    }
    bad |= !got(buf, len, "pong");
    if (bad)
        fprintf(stderr,
                "two-nngs: REQ/REP over inproc carried the wrong bytes\n");
done:
    nng_close(req); /* NNG_ECLOSED for one never opened: nothing to do */
    nng_close(rep);
    return bad;
}

/* A Ping through libtkclient to the tkd at TK_ADDR. */
static int ping(void)
{
    char err[256];
    tk_client *c;
    const char *addr = getenv("TK_ADDR");
    if (addr == NULL || tk_client_open(&c, addr, err, sizeof err) != TK_OK) {
        fprintf(stderr, "two-nngs: tk_client_open(%s): %s\n",
                addr ? addr : "(TK_ADDR unset)", addr ? err : "");
        return 1;
    }
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    Tk__V1__PingReply *rep;
    tk_call_opts opts = { .timeout_ms = 10000 };
    tk_status st;
    int bad = tk_control_ping(c, &req, &rep, &opts, &st) != TK_OK;
    if (bad)
        fprintf(stderr, "two-nngs: Ping: %s: %s\n", tk_code_name(st.code),
                st.message);
    else
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    tk_client_close(c);
    return bad;
}

/* Whether sym, an address of nng_version, lies in the system's
 * libnng.so.1; says where it lies when not. how: whose address it is. */
static int in_libnng(const char *how, void *sym)
{
    Dl_info info;
    const char *where = "no loaded object";
    if (sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL) {
        where = info.dli_fname;
        const char *base = strrchr(where, '/');
        if (strcmp(base ? base + 1 : where, "libnng.so.1") == 0)
            return 1;
    }
    fprintf(stderr,
            "two-nngs: nng_version (%s) resolves in %s, not the system's "
            "libnng.so.1\n",
            how, where);
    return 0;
}

/* Where the program's nng_ calls go: the function its call reaches (a PIE
 * takes the address through the GOT, from the object that defines it),
 * and the dynamic linker's answer for the name. */
static int nng_is_systems(void)
{
    if (!in_libnng("the program's call", (void *)nng_version) ||
        !in_libnng("the dynamic linker's lookup",
                   dlsym(RTLD_DEFAULT, "nng_version")))
        return 0;
    printf("two-nngs: nng_version %s, from libnng.so.1\n", nng_version());
    return 1;
}

int main(void)
{
    /* First: with the names split between two NNGs the round trip hangs
     * (measured: nng_send in libtkclient's NNG waited for ever). */
    if (!nng_is_systems())
        return 1;
    int bad = round_trip();
    bad |= ping();
    if (bad)
        return 1;
    printf("two-nngs: REQ/REP through the system's NNG and a Ping through "
           "libtkclient: ok\n");
    return 0;
}
