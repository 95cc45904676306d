/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "spwire.h"
#include "support.h"

/* NNG's protocol numbers (nng/protocol/reqrep0/req.h, rep.h). */
#define SP_REQ0 0x0030u
#define SP_REP0 0x0031u
/* The largest reply frame read: far beyond any reply a test expects. */
#define SP_MAX_FRAME (16u << 20)

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads exactly n bytes, or fails once the time is up or the peer closes. */
static int read_all(int fd, uint8_t *p, size_t n, long long until)
{
    while (n > 0) {
        long long left = until - ts_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)(v & 0xff);
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

int ts_sp_req_open(const char *path, int timeout_ms)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sa.sun_path)
        return -1;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    uint8_t mine[8] = { 0, 'S', 'P', 0, 0, 0, 0, 0 }, theirs[8];
    put_be(mine + 4, SP_REQ0, 2);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        write_all(fd, mine, sizeof mine) != 0 ||
        read_all(fd, theirs, sizeof theirs, ts_now_ms() + timeout_ms) != 0 ||
        memcmp(theirs, "\0SP\0", 4) != 0 || get_be(theirs + 4, 2) != SP_REP0 ||
        theirs[6] != 0 || theirs[7] != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int ts_sp_req_send(int fd, uint32_t id, const void *body, size_t len)
{
    uint8_t head[1 + 8 + 4];
    head[0] = 1;
    put_be(head + 1, 4 + (uint64_t)len, 8);
    put_be(head + 9, id | 0x80000000u, 4);
    /* One write for the frame: a resend is one frame on the wire too. */
    uint8_t *frame = malloc(sizeof head + len);
    if (frame == NULL)
        return -1;
    memcpy(frame, head, sizeof head);
    if (len > 0)
        memcpy(frame + sizeof head, body, len);
    int rv = write_all(fd, frame, sizeof head + len);
    free(frame);
    return rv;
}

int ts_sp_req_recv(int fd, uint32_t *id, uint8_t **body, size_t *len,
                   int timeout_ms)
{
    long long until = ts_now_ms() + timeout_ms;
    uint8_t head[1 + 8 + 4];
    if (read_all(fd, head, 1 + 8, until) != 0 || head[0] != 1)
        return -1;
    uint64_t n = get_be(head + 1, 8);
    if (n < 4 || n > SP_MAX_FRAME || read_all(fd, head + 9, 4, until) != 0)
        return -1;
    *id = (uint32_t)get_be(head + 9, 4);
    *len = (size_t)(n - 4);
    *body = malloc(*len + 1); /* never malloc(0) */
    if (*body == NULL || read_all(fd, *body, *len, until) != 0) {
        free(*body);
        *body = NULL;
        return -1;
    }
    return 0;
}
