/* SPDX-License-Identifier: MIT */
/* libtkclient's nodes: a tkd the client calls, its REQ socket and its
 * pool of channels (client_int.h).
 *
 * Owns: dialing a node (TLS, the bound on a dial, the nodes of a table it
 * refuses), its reference count, its channels and their waits.
 * May call: NNG and common/ only: it calls no other file of the library.
 * Must never: send a call (wait.c does), read the fleet's table (table.c),
 * print or log. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

static void chan_free(chan *ch);

/* The host of a URL ("h" of tls+tcp://h:1, "::1" of tls+tcp://[::1]:1). */
static void url_host(char *out, size_t len, const char *url)
{
    const char *h = strstr(url, "://");
    h = h != NULL ? h + 3 : url;
    const char *end = strrchr(h, ':');
    size_t n = end != NULL ? (size_t)(end - h) : strlen(h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    snprintf(out, len, "%.*s", (int)n, h);
}

/* The client side of mutual TLS, on dialer d. TK_OK, or an error with
 * errbuf set. */
static int tls_setup(nng_dialer d, const char *url, const tk_client_opts *o,
                     char *errbuf, size_t errlen)
{
    nng_tls_config *cfg = NULL;
    char *cert = NULL, *key = NULL, host[256];
    int rv = TK_ERR_ARG, e = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT);
    if (e != 0) {
        tkc_set_err(errbuf, errlen, "TLS: %s", nng_strerror(e));
        return TK_ERR_NOMEM;
    }
    if (o->tls_ca == NULL) {
        tkc_set_err(errbuf, errlen,
                    "%s needs the CA that signed tkd's certificate "
                    "(TK_TLS_CA, tkcall --cacert)",
                    url);
        goto done;
    }
    if ((e = nng_tls_config_ca_file(cfg, o->tls_ca)) != 0) {
        tkc_set_err(errbuf, errlen, "the CA %s: %s", o->tls_ca,
                    nng_strerror(e));
        goto done;
    }
    if ((o->tls_cert == NULL) != (o->tls_key == NULL)) {
        tkc_set_err(errbuf, errlen,
                    "a client certificate needs its key, and a key its "
                    "certificate (TK_TLS_CERT and TK_TLS_KEY)");
        goto done;
    }
    if (o->tls_cert != NULL) {
        cert = tkc_read_pem("the certificate", o->tls_cert, errbuf, errlen);
        key = cert != NULL ? tkc_read_pem("the key", o->tls_key, errbuf, errlen)
                           : NULL;
        if (key == NULL)
            goto done;
        if ((e = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0) {
            tkc_set_err(errbuf, errlen, "the certificate %s and key %s: %s",
                        o->tls_cert, o->tls_key, nng_strerror(e));
            goto done;
        }
    }
    url_host(host, sizeof host, url);
    e = nng_tls_config_server_name(
        cfg, o->tls_server_name != NULL ? o->tls_server_name : host);
    if (e == 0)
        e = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg);
    if (e != 0) {
        tkc_set_err(errbuf, errlen, "TLS: %s", nng_strerror(e));
        goto done;
    }
    rv = TK_OK;
done:
    if (key != NULL)
        tkc_wipe(key, strlen(key));
    free(key);
    free(cert);
    nng_tls_config_free(cfg); /* the dialer holds its own reference */
    return rv;
}

static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    (void)p;
    node *n = arg;
    if (ev == NNG_PIPE_EV_ADD_PRE)
        atomic_fetch_add(&n->pipes, 1);
    else
        atomic_fetch_sub(&n->pipes, 1);
}

node *tk__node_new(const char *id, const char *addr, size_t addr_len)
{
    node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->id = strdup(id);
    n->addr = strndup(addr, addr_len);
    if (n->id == NULL || n->addr == NULL) {
        free(n->id);
        free(n->addr);
        free(n);
        return NULL;
    }
    atomic_init(&n->refs, 1);
    atomic_init(&n->pipes, 0);
    for (size_t i = 0; i < CHAN_POOL_MAX; i++)
        atomic_init(&n->free_chans[i], NULL);
    pthread_mutex_init(&n->dial_mu, NULL);
    return n;
}

node *tk__node_ref(node *n)
{
    atomic_fetch_add(&n->refs, 1);
    return n;
}

void tk__free_roots(node *n)
{
    for (size_t i = 0; i < n->n_roots; i++)
        free(n->roots[i]);
    free(n->roots);
    n->roots = NULL;
    n->n_roots = 0;
}

void tk__node_unref(node *n)
{
    if (n == NULL || atomic_fetch_sub(&n->refs, 1) != 1)
        return;
    for (size_t i = 0; i < CHAN_POOL_MAX; i++) {
        chan *ch = atomic_load(&n->free_chans[i]);
        if (ch != NULL)
            chan_free(ch);
    }
    if (n->sock_open)
        nng_close(n->sock);
    tk__free_roots(n);
    pthread_mutex_destroy(&n->dial_mu);
    free(n->id);
    free(n->addr);
    free(n);
}

/* A dial (nng_dialer_start, which waits) on a thread of its own, for
 * dial_within to wait on with a bound. Freed by the last of the two. */
typedef struct dial_job {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    nng_dialer d;
    int rv;
    bool done;
    int refs;
} dial_job;

static void dial_job_unref(dial_job *j)
{
    pthread_mutex_lock(&j->mu);
    bool last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (!last)
        return;
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

static void *dial_main(void *arg)
{
    dial_job *j = arg;
    int rv = nng_dialer_start(j->d, 0);
    pthread_mutex_lock(&j->mu);
    j->rv = rv;
    j->done = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    dial_job_unref(j);
    return NULL;
}

/* nng_dialer_start(d, 0), given bound_ms at most (0: no bound, as NNG
 * waits): past it the dialer is closed, which ends the dial, and the
 * answer is NNG_ETIMEDOUT. */
static int dial_within(nng_dialer d, int bound_ms)
{
    if (bound_ms <= 0)
        return nng_dialer_start(d, 0);
    dial_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NNG_ENOMEM;
    pthread_mutex_init(&j->mu, NULL);
    (void)tkc_cond_init(&j->cv);
    j->d = d;
    j->refs = 2;
    pthread_attr_t attr;
    pthread_t tid;
    bool started = false;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&tid, &attr, dial_main, j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        j->refs = 1;
        dial_job_unref(j);
        return nng_dialer_start(d, 0);
    }
    int64_t until = tkc_mono_ns() + (int64_t)bound_ms * 1000000;
    pthread_mutex_lock(&j->mu);
    while (!j->done && tkc_cond_wait_until(&j->cv, &j->mu, until) != ETIMEDOUT)
        ;
    bool late = !j->done;
    pthread_mutex_unlock(&j->mu);
    if (late) {
        nng_dialer_close(d); /* ends the dial: NNG_ECLOSED */
        pthread_mutex_lock(&j->mu);
        while (!j->done)
            pthread_cond_wait(&j->cv, &j->mu);
        pthread_mutex_unlock(&j->mu);
    }
    int rv = late ? NNG_ETIMEDOUT : j->rv;
    dial_job_unref(j);
    return rv;
}

/* The DNS name a node's certificate carries for its id: "a" is
 * "a.tk-node.invalid". A certificate signed by the fleet's CA proves a
 * host name, not which node a tkd is; the id as a name of its own says
 * that, and under .invalid (RFC 6761: never a host) it is no host's. */
#define NODE_NAME_SUFFIX ".tk-node.invalid"

/* The name n's certificate must carry: for a node of the table, its id's
 * (NODE_NAME_SUFFIX), checked against the row the call was routed by,
 * whatever the address; for the address the caller gave, o's
 * tls_server_name, else (NULL) the URL's host. */
static const char *tls_name(const node *n, const tk_client_opts *o, char *buf,
                            size_t len)
{
    if (n->id[0] == '\0')
        return o->tls_server_name;
    snprintf(buf, len, "%s" NODE_NAME_SUFFIX, n->id);
    return buf;
}

/* Dials n->addr (a TLS dialer set up first where the URL asks for one),
 * with one dialer: the one before, if any, is closed first. bound_ms: see
 * dial_within. */
static int dial(node *n, const tk_client_opts *o, int bound_ms, char *errbuf,
                size_t errlen)
{
    nng_dialer d;
    char name[128];
    tk_client_opts named = *o;
    named.tls_server_name = tls_name(n, o, name, sizeof name);
    if (n->dialed) {
        nng_dialer_close(n->dialer);
        n->dialed = false;
    }
    int rv = nng_dialer_create(&d, n->sock, n->addr);
    if (rv != 0) {
        tkc_set_err(errbuf, errlen, "cannot connect to %s: %s", n->addr,
                    nng_strerror(rv));
        /* A URL NNG cannot parse is the caller's mistake, not a down tkd. */
        return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? TK_ERR_ARG
                                                         : TK_ERR_CONNECT;
    }
    if (strncmp(n->addr, "tls+", 4) == 0) {
        int t = tls_setup(d, n->addr, &named, errbuf, errlen);
        if (t != TK_OK) {
            nng_dialer_close(d);
            return t;
        }
    }
    rv = dial_within(d, bound_ms);
    if (rv == 0) {
        n->dialer = d;
        n->dialed = true;
        return TK_OK;
    }
    nng_dialer_close(d); /* NNG_ECLOSED when dial_within closed it */
    char hint[320] = "";
    if (rv == NNG_ECONNREFUSED || rv == NNG_ENOENT)
        snprintf(hint, sizeof hint, " (is tkd running there?)");
    else if (rv == NNG_ETIMEDOUT)
        snprintf(hint, sizeof hint,
                 " (no connection within the bound: the host or its tkd is "
                 "down, stopped, or unreachable)");
    else if (strncmp(n->addr, "tls+", 4) == 0)
        snprintf(hint, sizeof hint,
                 " (the TLS handshake failed: tkd refuses a client without a "
                 "certificate its CA signed, and this client refuses a tkd "
                 "whose certificate TK_TLS_CA did not sign or that does not "
                 "name %s%s%s%s)",
                 n->id[0] != '\0' ? "node " : "", n->id,
                 n->id[0] != '\0' ? ", DNS:" : "",
                 named.tls_server_name != NULL ? named.tls_server_name
                                               : "the host");
    tkc_set_err(errbuf, errlen, "cannot connect to %s: %s%s", n->addr,
                nng_strerror(rv), hint);
    return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? TK_ERR_ARG
                                                     : TK_ERR_CONNECT;
}

static tk_client_opts client_tls(const tk_client *c)
{
    return (tk_client_opts){ .tls_ca = c->tls_ca,
                             .tls_cert = c->tls_cert,
                             .tls_key = c->tls_key,
                             .tls_server_name = c->tls_server_name };
}

/* Whether id is one a tkd could have (tkd's --node-id rule): the name
 * its certificate carries is made of it. */
static bool node_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= 'a' && id[i] <= 'z') ||
              (id[i] >= 'A' && id[i] <= 'Z') ||
              (id[i] >= '0' && id[i] <= '9') || strchr("._-", id[i]) != NULL))
            return false;
    return true;
}

/* Whether n is a node of the table this client does not dial (errbuf
 * then says why): one whose id no tkd could have, or whose address is not
 * over the link the client came in on. A row of tk_nodes is anyone's who
 * can write the database: a client that came in over tls+tcp:// sends
 * nothing to a row's tcp:// or ipc:// (nor anything else), where no
 * certificate proves who answers. The address the caller gave is the
 * caller's own choice, and never refused. */
static bool node_refused(const tk_client *c, const node *n, char *errbuf,
                         size_t errlen)
{
    if (n->id[0] == '\0')
        return false;
    if (!node_id_ok(n->id)) {
        tkc_set_err(errbuf, errlen,
                    "the table names a node \"%.80s\", an id no tkd has (1 to "
                    "64 of A-Z a-z 0-9 . _ -)",
                    n->id);
        return true;
    }
    if (c->link != NULL && strncmp(n->addr, c->link, strlen(c->link)) == 0)
        return false;
    tkc_set_err(errbuf, errlen,
                "the table gives node %s the address %s, and this client came "
                "in over %s: it dials a fleet's nodes over that alone (a row "
                "of tk_nodes is trusted no more than the link it came by)",
                n->id, n->addr,
                c->link != NULL ? c->link : "another transport");
    return true;
}

/* Opens n's socket on first use and dials it when it has no connection:
 * the first time, and in a fleet after its connection dropped (NNG would
 * redial on its own, but a call must learn at once that a node is gone,
 * to go to the next). bound_ms: see dial_within. TK_OK, CONNECT_REFUSED,
 * or an error, with errbuf set. */
int tk__node_connect(tk_client *c, node *n, int bound_ms, char *errbuf,
                     size_t errlen)
{
    if (node_refused(c, n, errbuf, errlen))
        return CONNECT_REFUSED;
    pthread_mutex_lock(&n->dial_mu);
    int rv = TK_OK;
    if (!n->sock_open) {
        if (nng_req0_open(&n->sock) != 0) {
            tkc_set_err(errbuf, errlen, "out of memory");
            rv = TK_ERR_NOMEM;
            goto done;
        }
        n->sock_open = true;
        /* At most once: REQ would resend an unanswered request after 60 s,
         * and a duplicated WRITE is a second write. The server enforces
         * deadlines; the client never repeats itself. */
        if (nng_socket_set_ms(n->sock, NNG_OPT_REQ_RESENDTIME,
                              NNG_DURATION_INFINITE) != 0 ||
            nng_pipe_notify(n->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, n) != 0 ||
            nng_pipe_notify(n->sock, NNG_PIPE_EV_REM_POST, pipe_cb, n) != 0) {
            tkc_set_err(errbuf, errlen, "out of memory");
            rv = TK_ERR_NOMEM;
            goto done;
        }
    }
    if (!n->dialed || atomic_load(&n->pipes) == 0) {
        tk_client_opts o = client_tls(c);
        rv = dial(n, &o, bound_ms, errbuf, errlen);
    }
done:
    pthread_mutex_unlock(&n->dial_mu);
    return rv;
}

static void chan_cb(void *arg)
{
    chan *ch = arg;
    pthread_mutex_lock(&ch->mu);
    ch->done = true;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
}

static void chan_free(chan *ch)
{
    if (ch->aio != NULL)
        nng_aio_free(ch->aio); /* waits for a callback in progress */
    if (ch->send_aio != NULL)
        nng_aio_free(ch->send_aio);
    nng_ctx_close(ch->ctx);
    pthread_cond_destroy(&ch->cv);
    pthread_mutex_destroy(&ch->mu);
    free(ch);
}

static chan *chan_new(node *c)
{
    chan *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return NULL;
    (void)tkc_cond_init(&ch->cv);
    pthread_mutex_init(&ch->mu, NULL);
    if (nng_ctx_open(&ch->ctx, c->sock) != 0) {
        pthread_cond_destroy(&ch->cv);
        pthread_mutex_destroy(&ch->mu);
        free(ch);
        return NULL;
    }
    if (nng_aio_alloc(&ch->aio, chan_cb, ch) != 0)
        ch->aio = NULL;
    if (nng_aio_alloc(&ch->send_aio, NULL, NULL) != 0)
        ch->send_aio = NULL;
    if (ch->aio == NULL || ch->send_aio == NULL) {
        chan_free(ch);
        return NULL;
    }
    return ch;
}

/* Where this thread last put a channel back: it looks there first, and
 * finds its own channel again while the pool is not crowded. */
static _Thread_local unsigned chan_hint;

chan *tk__chan_get(node *c)
{
    for (unsigned k = 0; k < CHAN_POOL_MAX; k++) {
        unsigned i = (chan_hint + k) % CHAN_POOL_MAX;
        if (atomic_load_explicit(&c->free_chans[i], memory_order_relaxed) ==
            NULL)
            continue;
        chan *ch = atomic_exchange(&c->free_chans[i], NULL);
        if (ch != NULL)
            return ch;
    }
    return chan_new(c);
}

/* A channel whose call ended in any way but a reply is closed, not kept:
 * its context may still hold state of the abandoned request. So is one
 * that finds the pool full. */
void tk__chan_put(node *c, chan *ch, bool reusable)
{
    if (ch == NULL)
        return;
    for (unsigned k = 0; reusable && k < CHAN_POOL_MAX; k++) {
        unsigned i = (chan_hint + k) % CHAN_POOL_MAX;
        chan *none = NULL;
        if (atomic_compare_exchange_strong(&c->free_chans[i], &none, ch)) {
            chan_hint = i;
            return;
        }
    }
    chan_free(ch);
}

/* Before an operation is started on ch->aio. */
void tk__chan_arm(chan *ch)
{
    pthread_mutex_lock(&ch->mu);
    ch->done = false;
    pthread_mutex_unlock(&ch->mu);
}

/* Waits until the operation on ch->aio ends (true) or CLOCK_MONOTONIC
 * reaches until_ns (false); the operation goes on either way. */
bool tk__chan_wait_until(chan *ch, int64_t until_ns)
{
    pthread_mutex_lock(&ch->mu);
    while (!ch->done &&
           tkc_cond_wait_until(&ch->cv, &ch->mu, until_ns) != ETIMEDOUT)
        ;
    bool done = ch->done;
    pthread_mutex_unlock(&ch->mu);
    return done;
}
