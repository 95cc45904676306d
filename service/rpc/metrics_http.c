/* The Prometheus listener (tkd --metrics-listen http://HOST:PORT): NNG's
 * own HTTP server with one handler, GET /metrics (or the URL's path),
 * which answers the metrics of stats.c in Prometheus' text format. No HTTP
 * of tkd's own: parsing, connections and errors (404, 405) are NNG's. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "rpc_int.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Runs on an NNG thread: reads atomics and takes the pool's and the
 * registry's locks briefly, as the receive path does. */
static void scrape(nng_aio *aio)
{
    nng_http_handler *h = nng_aio_get_input(aio, 1);
    rpc_server *srv = nng_http_handler_get_data(h);
    /* The reply's memory: an rpc_call that holds only its arena. */
    rpc_call scratch;
    memset(&scratch, 0, sizeof scratch);
    Tk__V1__StatsReply st = TK__V1__STATS_REPLY__INIT;
    rpc__stats_fill(srv, &scratch, &st);
    rpc_buf text = { 0 };
    nng_http_res *res = NULL;
    int rv = rpc__stats_text(&st, &text) != 0 ? NNG_ENOMEM : 0;
    rpc_arena__free(&scratch.arena);
    if (rv == 0)
        rv = nng_http_res_alloc(&res);
    if (rv == 0)
        rv = nng_http_res_set_header(res, "Content-Type", CONTENT_TYPE);
    if (rv == 0)
        rv = nng_http_res_copy_data(res, text.data, text.len);
    rpc_buf_free(&text);
    if (rv != 0) {
        if (res != NULL)
            nng_http_res_free(res);
        nng_aio_finish(aio, rv); /* NNG answers 500 and closes */
        return;
    }
    nng_aio_set_output(aio, 0, res);
    nng_aio_finish(aio, 0);
}

/* NNG's error (rv > 0) as a start error. */
static int fail(char *err, size_t errlen, int rv, const char *what,
                const char *url)
{
    snprintf(err, errlen, "--metrics-listen %s: %s: %s", url, what,
             nng_strerror(rv));
    return -EINVAL;
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
    if (rv != 0)
        return fail(err, errlen, rv, "not a URL", url);
    const char *path = u->u_path[0] != '\0' && strcmp(u->u_path, "/") != 0
                           ? u->u_path
                           : "/metrics";
    nng_http_server *hs = NULL;
    nng_http_handler *h = NULL;
    rv = nng_http_server_hold(&hs, u);
    if (rv == 0)
        rv = nng_http_handler_alloc(&h, path, scrape);
    if (rv == 0)
        rv = nng_http_handler_set_data(h, srv, NULL);
    if (rv == 0) {
        rv = nng_http_server_add_handler(hs, h);
        if (rv == 0)
            h = NULL; /* the server's now */
    }
    if (rv == 0)
        rv = nng_http_server_start(hs);
    nng_sockaddr sa;
    if (rv == 0 && nng_http_server_get_addr(hs, &sa) == 0 &&
        (sa.s_family == NNG_AF_INET || sa.s_family == NNG_AF_INET6)) {
        uint16_t port =
            sa.s_family == NNG_AF_INET ? sa.s_in.sa_port : sa.s_in6.sa_port;
        bool v6 = strchr(u->u_hostname, ':') != NULL; /* [::1] */
        snprintf(srv->metrics_bound, sizeof srv->metrics_bound,
                 "http://%s%s%s:%u%s", v6 ? "[" : "", u->u_hostname,
                 v6 ? "]" : "", (unsigned)ntohs(port), path);
    } else if (rv == 0) {
        snprintf(srv->metrics_bound, sizeof srv->metrics_bound, "%s", url);
    }
    if (h != NULL)
        nng_http_handler_free(h);
    if (rv != 0) {
        if (hs != NULL)
            nng_http_server_release(hs);
        rv = fail(err, errlen, rv, "cannot serve it", url);
        nng_url_free(u);
        return rv;
    }
    nng_url_free(u);
    srv->metrics_http = hs;
    return 0;
}

void rpc__metrics_http_stop(rpc_server *srv)
{
    nng_http_server *hs = srv->metrics_http;
    if (hs == NULL)
        return;
    srv->metrics_http = NULL;
    nng_http_server_stop(hs);
    nng_http_server_release(hs);
}
