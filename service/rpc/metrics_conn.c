/* SPDX-License-Identifier: MIT */
/* One connection of the Prometheus listener, as HTTP/1.1: its request line
 * and headers read into a buffer of their own and judged, its answer
 * written. One request a connection, and every answer says "Connection:
 * close": a connection is never kept open idle. The listener
 * (metrics_http.c) owns the connections, their deadlines and the
 * rendering; this file knows no time and no server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "rpc_int.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void rpc__mh_body_drop(rpc_mh_body *b)
{
    if (b != NULL && --b->refs == 0) {
        tkc_buf_fini(&b->text);
        free(b);
    }
}

void rpc__mh_answer(rpc_mh_conn *c, const char *status, const char *extra,
                    rpc_mh_body *body, const char *text)
{
    size_t len = body != NULL ? body->text.len : strlen(text);
    int n = snprintf(
        c->head_buf, sizeof c->head_buf,
        "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
        "Connection: close\r\n\r\n%s",
        status, body != NULL ? CONTENT_TYPE : "text/plain; charset=utf-8", len,
        extra, body != NULL || c->head ? "" : text);
    c->head_len = n < 0 ? 0 : (size_t)n;
    if (c->head_len >= sizeof c->head_buf)
        c->head_len = sizeof c->head_buf - 1;
    if (body != NULL && !c->head) {
        body->refs++;
        c->body = body;
    }
    c->state = RPC_MH_SEND;
    c->sent = 0;
}

/* The request line judged: NULL for a scrape of path, else the status of
 * the answer, with its extra header and text. line is cut up. */
static const char *judge(rpc_mh_conn *c, char *line, const char *path,
                         const char **extra, const char **text)
{
    char *save = NULL;
    char *method = strtok_r(line, " \r", &save);
    char *target = strtok_r(NULL, " \r", &save);
    char *version = strtok_r(NULL, " \r", &save);
    *extra = "";
    if (method == NULL || target == NULL || version == NULL ||
        strtok_r(NULL, " \r", &save) != NULL) {
        *text = "Bad request\n";
        return "400 Bad Request";
    }
    if (strncmp(version, "HTTP/1.", 7) != 0) {
        *text = "HTTP/1.x only\n";
        return "505 HTTP Version Not Supported";
    }
    c->head = strcmp(method, "HEAD") == 0;
    if (!c->head && strcmp(method, "GET") != 0) {
        *extra = "Allow: GET, HEAD\r\n";
        *text = "GET only\n";
        return "405 Method Not Allowed";
    }
    target[strcspn(target, "?#")] = '\0';
    if (strcmp(target, path) != 0) {
        *text = "Not found\n";
        return "404 Not Found";
    }
    return NULL;
}

/* The request, complete in c->req: a scrape waits for the rendering;
 * anything else is answered now. */
static void request(rpc_mh_conn *c, const char *path)
{
    /* The request line, as a string: bytes are bytes until its end (a NUL
     * in it ends it early, and judge refuses what is left). */
    char *eol = memchr(c->req, '\n', c->got);
    *eol = '\0';
    const char *extra, *text;
    const char *status = judge(c, c->req, path, &extra, &text);
    if (status != NULL)
        rpc__mh_answer(c, status, extra, NULL, text);
    else
        c->state = RPC_MH_WAIT;
}

/* Whether the headers end (an empty line) in the first got bytes of req,
 * looked for from from on. */
static bool headers_end(const char *req, size_t from, size_t got)
{
    for (size_t i = from; i < got; i++)
        if (req[i] == '\n' &&
            ((i >= 1 && req[i - 1] == '\n') ||
             (i >= 2 && req[i - 1] == '\r' && req[i - 2] == '\n')))
            return true;
    return false;
}

bool rpc__mh_read(rpc_mh_conn *c, const char *path)
{
    size_t room = sizeof c->req - c->got;
    ssize_t n = recv(c->fd, c->req + c->got, room, 0);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (n == 0)
        return false;
    size_t from = c->got;
    c->got += (size_t)n;
    if (headers_end(c->req, from, c->got))
        request(c, path);
    else if (c->got == sizeof c->req)
        rpc__mh_answer(c, "431 Request Header Fields Too Large", "", NULL,
                       "Request headers too large\n");
    return true;
}

bool rpc__mh_send(rpc_mh_conn *c)
{
    size_t body_len = c->body != NULL ? c->body->text.len : 0;
    struct iovec iov[2];
    int n = 0;
    if (c->sent < c->head_len)
        iov[n++] =
            (struct iovec){ c->head_buf + c->sent, c->head_len - c->sent };
    size_t from = c->sent > c->head_len ? c->sent - c->head_len : 0;
    if (from < body_len)
        iov[n++] = (struct iovec){ c->body->text.data + from, body_len - from };
    if (n == 0)
        return false;
    /* SIGPIPE is blocked in the listener's thread: a peer gone is EPIPE. */
    ssize_t w = writev(c->fd, iov, n);
    if (w < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c->sent += (size_t)w;
    return c->sent < c->head_len + body_len;
}
