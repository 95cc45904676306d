/* SPDX-License-Identifier: MIT */
/* The Prometheus listener (tkd --metrics-listen http://HOST:PORT): a small
 * HTTP/1.1 server of rpc's own, one thread over poll(2), that answers
 * GET (and HEAD) of one path with the metrics of stats.c in Prometheus'
 * text format, and every other request with its error.
 *
 * It replaces NNG's HTTP server, which bounds nothing a peer can make it
 * hold (NNG 1.5.2, and its master too: no connection limit, no timeout on
 * a request, keep-alive connections kept for good; 120 connections that
 * never sent their headers held tkd's descriptors until ipc accepted no
 * more). Here each is bounded (DESIGN.md, "Metrics"):
 *  - connections at once: cfg.metrics_max_connections, or its part of
 *    tkd's descriptors (srv->metrics_part, limits.c's split) if that is
 *    smaller; one more is closed as it comes, and counted;
 *  - time: a connection has cfg.metrics_header_timeout_ms from its accept
 *    for its request's headers, and as long again to take its answer;
 *    then it is closed and counted. One request a connection: every
 *    answer says "Connection: close", so none stays open idle;
 *  - memory: a request's line and headers fit RPC_MH_REQUEST_MAX bytes,
 *    or are answered 431; a body is never read (metrics_conn.c);
 *  - CPU: the metrics are rendered at most once per
 *    cfg.metrics_min_interval_ms. A scrape waits for the next rendering
 *    after its request came (so it never reads counts older than its
 *    request), and that rendering answers every scrape waiting: a tight
 *    loop of scrapers costs tkd one rendering an interval.
 * The thread touches the connections alone; what it counts, it counts in
 * the server's atomics (stats.c reads them). Closing is logged at most a
 * line a second a reason. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include "common/common.h"
#include "port/port.h"
#include "rpc_int.h"

#define MH_BACKLOG 64
/* Accepts per wake-up: the connections get their turn between bursts. */
#define MH_ACCEPT_BURST 64
/* After accept ran out of descriptors (or memory): they are not back at
 * once, and polling the listener meanwhile would spin. */
#define MH_ACCEPT_BACKOFF_MS 100
#define MH_LOG_EVERY_NS 1000000000LL
#define MS_NS 1000000LL

struct rpc_mhttp {
    rpc_server *srv;
    int lfd;
    port_event wake; /* set: stop */
    pthread_t thread;
    char path[256]; /* what GET must ask for */
    rpc_mh_conn **conns;
    size_t n_conns, cap;
    struct pollfd *pfd; /* wake, the listener, then conns */
    int64_t next_render, accept_after;
    int64_t logged_at[RPC_MH_CLOSED_KINDS + 1]; /* + accept errors */
    uint64_t logged[RPC_MH_CLOSED_KINDS];
};

static int64_t timeout_ns(const rpc_server *srv)
{
    return (int64_t)srv->cfg.metrics_header_timeout_ms * MS_NS;
}

/* ---- connections ---- */

/* Closes connection i, counted first as why (-1: not counted): a peer
 * that sees the close may ask for the count at once. */
static void conn_close(struct rpc_mhttp *m, size_t i, int why)
{
    rpc_mh_conn *c = m->conns[i];
    if (why >= 0)
        atomic_fetch_add(&m->srv->mh_closed[why], 1);
    atomic_fetch_sub(&m->srv->mh_open, 1);
    close(c->fd);
    rpc__mh_body_drop(c->body);
    free(c);
    m->conns[i] = m->conns[--m->n_conns];
}

/* Reads or writes what poll found c ready for; false: it is over. A
 * request judged starts the answer's deadline, or waits as a scrape. */
static bool conn_io(struct rpc_mhttp *m, rpc_mh_conn *c, short re)
{
    if ((re & (POLLERR | POLLNVAL)) != 0)
        return false;
    if (c->state == RPC_MH_SEND)
        return rpc__mh_send(c);
    if (c->state == RPC_MH_WAIT) /* nothing asked: only a hang-up */
        return (re & POLLHUP) == 0;
    if (!rpc__mh_read(c, m->path))
        return false;
    if (c->state == RPC_MH_SEND)
        c->deadline = rpc_now_ns() + timeout_ns(m->srv);
    else if (c->state == RPC_MH_WAIT)
        atomic_fetch_add(&m->srv->mh_scrapes, 1);
    return true;
}

/* ---- the rendering ---- */

static rpc_mh_body *render(rpc_server *srv)
{
    rpc_mh_body *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    /* Before the reading: a scrape's text counts its own rendering. */
    atomic_fetch_add(&srv->mh_renders, 1);
    /* The text's memory: an rpc_call that holds only its arena. */
    rpc_call scratch;
    memset(&scratch, 0, sizeof scratch);
    Tk__V1__StatsReply st = TK__V1__STATS_REPLY__INIT;
    rpc__stats_fill(srv, &scratch, &st);
    int rv = rpc__stats_text(&st, &b->text);
    rpc_arena__free(&scratch.arena);
    if (rv != 0) {
        tkc_buf_fini(&b->text);
        free(b);
        return NULL;
    }
    return b;
}

/* One rendering for every scrape waiting, once the interval allows it. */
static void answer_scrapes(struct rpc_mhttp *m, int64_t now)
{
    bool waiting = false;
    for (size_t i = 0; i < m->n_conns && !waiting; i++)
        waiting = m->conns[i]->state == RPC_MH_WAIT;
    if (!waiting || now < m->next_render)
        return;
    m->next_render = now + (int64_t)m->srv->cfg.metrics_min_interval_ms * MS_NS;
    rpc_mh_body *b = render(m->srv);
    if (b != NULL)
        b->refs = 1; /* this function's, until every answer has its own */
    for (size_t i = 0; i < m->n_conns; i++) {
        rpc_mh_conn *c = m->conns[i];
        if (c->state != RPC_MH_WAIT)
            continue;
        if (b != NULL)
            rpc__mh_answer(c, "200 OK", "", b, NULL);
        else
            rpc__mh_answer(c, "500 Internal Server Error", "", NULL,
                           "Out of memory\n");
        c->deadline = now + timeout_ns(m->srv);
    }
    rpc__mh_body_drop(b);
}

/* ---- the loop ---- */

static const char *const closed_meaning[RPC_MH_CLOSED_KINDS] = {
    [RPC_MH_LIMIT] = "closed as they came: its limit of connections were "
                     "open",
    [RPC_MH_HEADER_TIMEOUT] = "closed: their request headers had not come "
                              "within --metrics-header-timeout-ms",
    [RPC_MH_SEND_TIMEOUT] = "closed: their answer was not taken within "
                            "--metrics-header-timeout-ms",
};

/* What was closed since the last line, a line a reason at most a second;
 * in JSON, with its values as members (the limit or the timeout). */
static void log_closed(struct rpc_mhttp *m, int64_t now)
{
    const rpc_server *srv = m->srv;
    for (int k = 0; k < RPC_MH_CLOSED_KINDS; k++) {
        uint64_t v = atomic_load(&srv->mh_closed[k]);
        if (v == m->logged[k] || now < m->logged_at[k] + MH_LOG_EVERY_NS)
            continue;
        obs_field f[] = {
            OBS_STR("metrics_url", srv->metrics_bound),
            OBS_INT("connections", v - m->logged[k]),
            OBS_STR("reason", rpc__mh_closed_reason(k)),
            k == RPC_MH_LIMIT ? OBS_INT("max_connections", srv->metrics_limit)
                              : OBS_INT("header_timeout_ms",
                                        srv->cfg.metrics_header_timeout_ms),
        };
        obs_log_fields(
            OBS_LOG_WARN, f, sizeof f / sizeof f[0],
            "metrics listener %s: %llu connection(s) %s", srv->metrics_bound,
            (unsigned long long)(v - m->logged[k]), closed_meaning[k]);
        m->logged[k] = v;
        m->logged_at[k] = now;
    }
}

/* Takes what waits to be accepted: each kept, or closed at the limit. */
static void accept_some(struct rpc_mhttp *m, int64_t now)
{
    for (int n = 0; n < MH_ACCEPT_BURST; n++) {
        int fd = port_accept(m->lfd);
        if (fd == -EAGAIN || fd == -EWOULDBLOCK)
            return;
        if (fd == -EINTR || fd == -ECONNABORTED)
            continue;
        if (fd < 0) { /* out of descriptors or memory: they come back */
            m->accept_after = now + MH_ACCEPT_BACKOFF_MS * MS_NS;
            int64_t *at = &m->logged_at[RPC_MH_CLOSED_KINDS];
            if (now >= *at + MH_LOG_EVERY_NS) {
                char ebuf[128];
                const char *why = tkc_strerror(-fd, ebuf, sizeof ebuf);
                obs_field f[] = { OBS_STR("metrics_url", m->srv->metrics_bound),
                                  OBS_STR("error", why),
                                  OBS_INT("retry_ms", MH_ACCEPT_BACKOFF_MS) };
                obs_log_fields(OBS_LOG_WARN, f, sizeof f / sizeof f[0],
                               "metrics listener %s: cannot accept: %s "
                               "(trying again every %d ms)",
                               m->srv->metrics_bound, why,
                               MH_ACCEPT_BACKOFF_MS);
                *at = now;
            }
            return;
        }
        bool room = m->n_conns < m->cap;
        rpc_mh_conn *c = room ? malloc(sizeof *c) : NULL;
        if (c == NULL) {
            /* Counted first: a peer that sees the close may ask at once. */
            if (!room)
                atomic_fetch_add(&m->srv->mh_closed[RPC_MH_LIMIT], 1);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->state = RPC_MH_READ;
        c->deadline = now + timeout_ns(m->srv);
        c->head = false;
        c->body = NULL;
        c->got = c->sent = c->head_len = 0;
        m->conns[m->n_conns++] = c;
        atomic_fetch_add(&m->srv->mh_open, 1);
    }
}

/* Closes the connections whose deadline has passed. */
static void expire(struct rpc_mhttp *m, int64_t now)
{
    for (size_t i = m->n_conns; i-- > 0;) {
        rpc_mh_conn *c = m->conns[i];
        if (c->state != RPC_MH_WAIT && now >= c->deadline)
            conn_close(m, i,
                       c->state == RPC_MH_READ ? RPC_MH_HEADER_TIMEOUT
                                               : RPC_MH_SEND_TIMEOUT);
    }
}

/* How long poll may wait: until the next deadline, rendering, accept or
 * log line due, in ms rounded up; -1: until something happens. */
static int wait_ms(const struct rpc_mhttp *m, int64_t now)
{
    int64_t until = INT64_MAX;
    for (size_t i = 0; i < m->n_conns; i++) {
        const rpc_mh_conn *c = m->conns[i];
        int64_t t = c->state == RPC_MH_WAIT ? m->next_render : c->deadline;
        until = t < until ? t : until;
    }
    if (m->accept_after > now && m->accept_after < until)
        until = m->accept_after;
    for (int k = 0; k < RPC_MH_CLOSED_KINDS; k++) {
        int64_t t = m->logged_at[k] + MH_LOG_EVERY_NS;
        if (atomic_load(&m->srv->mh_closed[k]) != m->logged[k] && t < until)
            until = t;
    }
    if (until == INT64_MAX)
        return -1;
    int64_t ms = until <= now ? 0 : (until - now + MS_NS - 1) / MS_NS;
    return ms > 60000 ? 60000 : (int)ms;
}

/* The pollfds: the wake event, the listener (-1 while accept backs off),
 * then each connection for what its state waits for. */
static nfds_t poll_set(struct rpc_mhttp *m, int64_t now)
{
    m->pfd[0] = (struct pollfd){ .fd = m->wake.fd, .events = POLLIN };
    m->pfd[1] = (struct pollfd){ .fd = now >= m->accept_after ? m->lfd : -1,
                                 .events = POLLIN };
    for (size_t i = 0; i < m->n_conns; i++) {
        const rpc_mh_conn *c = m->conns[i];
        short ev = 0; /* RPC_MH_WAIT: only a hang-up, which poll says */
        if (c->state == RPC_MH_READ)
            ev = POLLIN;
        else if (c->state == RPC_MH_SEND)
            ev = POLLOUT;
        m->pfd[2 + i] = (struct pollfd){ .fd = c->fd, .events = ev };
    }
    return (nfds_t)(2 + m->n_conns);
}

/* Each connection poll found ready, read or written; those that are over
 * closed. From the last: closing moves the last connection into i. */
static void serve_ready(struct rpc_mhttp *m, nfds_t n)
{
    for (size_t i = n - 2; i-- > 0;) {
        short re = m->pfd[2 + i].revents;
        if (re != 0 && !conn_io(m, m->conns[i], re))
            conn_close(m, i, -1);
    }
}

static void *mh_main(void *arg)
{
    struct rpc_mhttp *m = arg;
    /* As NNG does in its threads: a peer gone is EPIPE, not a signal. */
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &blocked, NULL);
    for (;;) {
        int64_t now = rpc_now_ns();
        expire(m, now);
        answer_scrapes(m, now);
        log_closed(m, now);
        nfds_t n = poll_set(m, now);
        if (poll(m->pfd, n, wait_ms(m, now)) < 0) {
            if (errno != EINTR) /* ENOMEM: not again at once */
                nanosleep(&(struct timespec){ 0, MH_ACCEPT_BACKOFF_MS * MS_NS },
                          NULL);
            continue;
        }
        if (m->pfd[0].revents != 0)
            break;
        serve_ready(m, n);
        if (m->pfd[1].revents != 0)
            accept_some(m, rpc_now_ns());
    }
    return NULL;
}

/* ---- start and stop ---- */

static void mh_free(struct rpc_mhttp *m)
{
    while (m->n_conns > 0)
        conn_close(m, m->n_conns - 1, -1);
    if (m->lfd >= 0)
        close(m->lfd);
    port_event_close(&m->wake);
    free(m->conns);
    free(m->pfd);
    free(m);
}

/* 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104. */
static bool loopback(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return ntohl(in->sin_addr.s_addr) >> 24 == 127;
    }
    if (sa->ss_family != AF_INET6)
        return false;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) ||
           (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* A listening socket on host:port: the first address it resolves to that
 * binds. 0, or -errno with why (a resolver's error: -EINVAL). */
static int bind_first(const char *host, const char *port, int *out, char *why,
                      size_t len)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
    if (g != 0) {
        snprintf(why, len, "cannot resolve it: %s", gai_strerror(g));
        return -EINVAL;
    }
    int rv = -EADDRNOTAVAIL;
    for (const struct addrinfo *ai = res; ai != NULL && rv != 0;
         ai = ai->ai_next) {
        int fd = port_socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            rv = fd;
            continue;
        }
        int one = 1; /* a restarted tkd binds past TIME_WAIT, as NNG's did */
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, MH_BACKLOG) == 0) {
            *out = fd;
            rv = 0;
        } else {
            rv = -errno;
            close(fd);
        }
    }
    freeaddrinfo(res);
    if (rv != 0) {
        char ebuf[128];
        snprintf(why, len, "cannot serve it: %s",
                 tkc_strerror(-rv, ebuf, sizeof ebuf));
    }
    return rv;
}

/* srv->metrics_bound: the URL as given, with the port bound; and the
 * warning when the address is not loopback. */
static void name_bound(struct rpc_mhttp *m, const nng_url *u)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    (void)getsockname(m->lfd, (struct sockaddr *)&sa, &len);
    unsigned port =
        ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                       : ((struct sockaddr_in *)&sa)->sin_port);
    bool v6 = strchr(u->u_hostname, ':') != NULL; /* [::1] */
    snprintf(m->srv->metrics_bound, sizeof m->srv->metrics_bound,
             "http://%s%s%s:%u%s", v6 ? "[" : "", u->u_hostname, v6 ? "]" : "",
             port, m->path);
    if (!loopback(&sa)) {
        obs_field f[] = { OBS_STR("metrics_url", m->srv->metrics_bound) };
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "metrics listener %s is not on loopback: it answers "
                       "anyone who can reach the port, without authentication "
                       "(bind it to 127.0.0.1 or [::1], or keep the port on a "
                       "network only the scraper reaches)",
                       m->srv->metrics_bound);
    }
}

static int mh_new(struct rpc_mhttp **out, rpc_server *srv, const nng_url *u,
                  char *why, size_t len)
{
    struct rpc_mhttp *m = calloc(1, sizeof *m);
    if (m == NULL)
        return -ENOMEM;
    m->srv = srv;
    m->lfd = -1;
    m->wake = PORT_EVENT_NONE;
    /* Its part of the descriptors (limits.c), never none: one at a time. */
    unsigned part = srv->metrics_part > 0 ? srv->metrics_part : 1;
    m->cap = srv->cfg.metrics_max_connections < part
                 ? srv->cfg.metrics_max_connections
                 : part;
    srv->metrics_limit = (unsigned)m->cap;
    m->next_render = INT64_MIN;
    for (int k = 0; k <= RPC_MH_CLOSED_KINDS; k++)
        m->logged_at[k] = INT64_MIN / 2;
    const char *path = u->u_path[0] != '\0' && strcmp(u->u_path, "/") != 0
                           ? u->u_path
                           : "/metrics";
    snprintf(m->path, sizeof m->path, "%s", path);
    m->conns = calloc(m->cap, sizeof(rpc_mh_conn *));
    m->pfd = calloc(m->cap + 2, sizeof *m->pfd);
    int rv = m->conns != NULL && m->pfd != NULL ? 0 : -ENOMEM;
    if (rv == 0 && (rv = port_event_open(&m->wake)) != 0)
        snprintf(why, len, "cannot make its wake-up event");
    if (rv == 0)
        rv = bind_first(u->u_hostname, u->u_port, &m->lfd, why, len);
    if (rv != 0) {
        mh_free(m);
        return rv;
    }
    name_bound(m, u);
    *out = m;
    return 0;
}

int rpc__metrics_http_start(rpc_server *srv, char *err, size_t errlen)
{
    const char *url = srv->cfg.metrics_listen;
    if (url == NULL)
        return 0;
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(err, errlen,
                 "--metrics-listen %s: only http://HOST:PORT is served "
                 "(Prometheus scrapes it; put it on 127.0.0.1 or a network "
                 "only the scraper reaches)",
                 url);
        return -EINVAL;
    }
    nng_url *u = NULL;
    int rv = nng_url_parse(&u, url);
    if (rv != 0) {
        snprintf(err, errlen, "--metrics-listen %s: not a URL: %s", url,
                 nng_strerror(rv));
        return -EINVAL;
    }
    char why[192] = "out of memory";
    struct rpc_mhttp *m = NULL;
    rv = mh_new(&m, srv, u, why, sizeof why);
    nng_url_free(u);
    if (rv == 0 && pthread_create(&m->thread, NULL, mh_main, m) != 0) {
        snprintf(why, sizeof why, "cannot start its thread");
        mh_free(m);
        rv = -EAGAIN;
    }
    if (rv != 0) {
        snprintf(err, errlen, "--metrics-listen %s: %s", url, why);
        srv->metrics_bound[0] = '\0';
        return rv;
    }
    srv->metrics_http = m;
    return 0;
}

void rpc__metrics_http_stop(rpc_server *srv)
{
    struct rpc_mhttp *m = srv->metrics_http;
    if (m == NULL)
        return;
    srv->metrics_http = NULL;
    port_event_set(&m->wake);
    pthread_join(m->thread, NULL);
    mh_free(m);
}
