/* SPDX-License-Identifier: MIT */
/* libtkclient: calls over one NNG REQ socket, at most once each. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"

/* An NNG REQ context with its aio: one call at a time. Kept for reuse,
 * which spares an allocation and the socket lock of nng_ctx_open per call.
 * The aio's callback marks its operation done, so that the caller can wait
 * for a reply with a bound and go on waiting after it: a receive that
 * times out would abandon the request (NNG's req0 resets the context), and
 * with it a reply that is still on its way. */
typedef struct chan {
    nng_ctx ctx;
    nng_aio *aio; /* the receive's */
    /* The send's, with no callback: its end is waited for at once
     * (nng_aio_wait), and an aio without one is ended by the thread that
     * completes it, often the caller's own; one with a callback is handed
     * to NNG's task threads, two more thread switches per call. */
    nng_aio *send_aio;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    bool done;         /* mu: the operation started last has ended */
} chan;

static void chan_free(chan *ch);

#define CHAN_POOL_MAX 64

/* A tkd the client calls: its own REQ socket (resend disabled, one
 * dialer), its pool of channels. One in single mode (the URL opened, id
 * ""); in a fleet, one a row of the table tk.v1.Control/ListNodes gave,
 * dialed on first use. Counted: the table holds a reference, and so does
 * every call, Cancel handle and probe that uses it; the last one closes
 * its socket. */
typedef struct node {
    _Atomic int refs;
    char *id;   /* "" in single mode */
    char *addr; /* what is dialed */
    /* The client's mu: what the table says of it. */
    char **roots;
    size_t n_roots;
    bool draining;
    bool down;       /* failed to connect, or stopped answering */
    int64_t down_ns; /* when it was marked down (CLOCK_MONOTONIC) */
    /* dial_mu: the socket and its dialer. */
    pthread_mutex_t dial_mu;
    bool sock_open;
    bool dialed;
    nng_socket sock;
    nng_dialer dialer;
    _Atomic int pipes; /* connections up (pipe notifications) */
    /* The free channels: a channel is taken from a place with an atomic
     * exchange and put back into an empty one with a compare-and-swap, so
     * that the callers of one client do not queue on a lock for them. */
    _Atomic(chan *) free_chans[CHAN_POOL_MAX];
} node;

struct tk_client {
    char *url; /* as given (a comma-separated list, perhaps) */
    /* The scheme a fleet's nodes are dialed over: that of the address the
     * client came in on ("tls+tcp://" after any tls+, "tcp://" after
     * tcp://); NULL: none (node_refused). */
    const char *link;
    bool fleet;
    _Atomic uint64_t next_id;
    /* The TLS files, kept for the nodes of a fleet, dialed later. */
    char *tls_ca, *tls_cert, *tls_key, *tls_server_name;
    pthread_mutex_t mu; /* the table */
    node **nodes;
    size_t n_nodes;
    int64_t read_ns; /* when the table was read; 0: read it again now */
    uint32_t ttl_ms;
    bool refreshing; /* a thread reads the table */
    size_t rr;       /* the next node of round robin */
};

typedef enum cancel_state { CS_IDLE, CS_SENDING, CS_SENT } cancel_state;

struct tk_cancel {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool fired;
    cancel_state state;
    tk_client *client; /* of the call in flight */
    node *node;        /* its node, referenced while it is bound */
    uint64_t call_id;
};

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

static node *node_new(const char *id, const char *addr, size_t addr_len)
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

static node *node_ref(node *n)
{
    atomic_fetch_add(&n->refs, 1);
    return n;
}

static void free_roots(node *n)
{
    for (size_t i = 0; i < n->n_roots; i++)
        free(n->roots[i]);
    free(n->roots);
    n->roots = NULL;
    n->n_roots = 0;
}

static void node_unref(node *n)
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
    free_roots(n);
    pthread_mutex_destroy(&n->dial_mu);
    free(n->id);
    free(n->addr);
    free(n);
}

/* How long a node of a fleet (or an address of a list) gets to connect,
 * TLS handshake included: NNG's dial has no bound of its own, and a host
 * that is down, or a tkd that is stopped, would hold the call for as long
 * as TCP tries (or for ever, its handshake unanswered). */
#define NODE_CONNECT_MS 5000

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

/* node_connect's answer for a node this client does not dial
 * (node_refused): the call goes nowhere, NODE_REFUSED. */
#define CONNECT_REFUSED (-64)

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
static int node_connect(tk_client *c, node *n, int bound_ms, char *errbuf,
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

static char *dup_or_null(const char *s, bool *failed)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *failed = true;
    return d;
}

static void client_free(tk_client *c)
{
    for (size_t i = 0; i < c->n_nodes; i++)
        node_unref(c->nodes[i]);
    free(c->nodes);
    pthread_mutex_destroy(&c->mu);
    free(c->url);
    free(c->tls_ca);
    free(c->tls_cert);
    if (c->tls_key != NULL)
        tkc_wipe(c->tls_key, strlen(c->tls_key));
    free(c->tls_key);
    free(c->tls_server_name);
    free(c);
}

static bool ask_nodes(tk_client *c, node *n, Tk__V1__ListNodesReply **out);
static int install_table(tk_client *c, const Tk__V1__ListNodesReply *r);

/* Dials url, or the first of a comma-separated list that connects: the
 * client's one node, c->nodes[0]. */
static int dial_first(tk_client *c, const char *url, char *errbuf,
                      size_t errlen)
{
    int rv = TK_ERR_ARG;
    for (const char *at = url;;) {
        const char *comma = strchr(at, ',');
        size_t len = comma != NULL ? (size_t)(comma - at) : strlen(at);
        if (len == 0) {
            tkc_set_err(errbuf, errlen, "an empty address in \"%s\"", url);
            return TK_ERR_ARG;
        }
        node *n = node_new("", at, len);
        if (n == NULL)
            return TK_ERR_NOMEM;
        /* One address: NNG's own wait, as always. */
        int bound = comma != NULL || at != url ? NODE_CONNECT_MS : 0;
        rv = node_connect(c, n, bound, errbuf, errlen);
        if (rv == TK_OK) {
            c->nodes[0] = n;
            c->n_nodes = 1;
            c->link = strncmp(at, "tls+", 4) == 0  ? "tls+tcp://"
                      : strncmp(at, "tcp", 3) == 0 ? "tcp://"
                                                   : NULL;
            return TK_OK;
        }
        node_unref(n);
        if (rv != TK_ERR_CONNECT || comma == NULL)
            return rv;
        at = comma + 1;
    }
}

int tk_client_open_opts(tk_client **out, const char *url,
                        const tk_client_opts *opts, char *errbuf, size_t errlen)
{
    if (out == NULL || url == NULL)
        return TK_ERR_ARG;
    *out = NULL;
    tk_client_opts env = {
        .tls_ca = getenv("TK_TLS_CA"),
        .tls_cert = getenv("TK_TLS_CERT"),
        .tls_key = getenv("TK_TLS_KEY"),
    };
    const tk_client_opts *o = opts != NULL ? opts : &env;
    tk_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    bool failed = false;
    c->url = dup_or_null(url, &failed);
    c->tls_ca = dup_or_null(o->tls_ca, &failed);
    c->tls_cert = dup_or_null(o->tls_cert, &failed);
    c->tls_key = dup_or_null(o->tls_key, &failed);
    c->tls_server_name = dup_or_null(o->tls_server_name, &failed);
    c->nodes = calloc(1, sizeof(node *));
    if (failed || c->nodes == NULL) {
        client_free(c);
        return TK_ERR_NOMEM;
    }
    int rv = dial_first(c, url, errbuf, errlen);
    if (rv != TK_OK) {
        client_free(c);
        return rv;
    }
    /* Call ids need only be unique per connection; a random start keeps
     * the ids of different clients apart in tkd's log. */
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) != 0)
        seed = (uint64_t)getpid() << 32;
    atomic_init(&c->next_id, (seed >> 16) | 1);
    /* And a random start of the round robin, so that short-lived clients
     * (a tkcall a call) spread over the nodes too. */
    c->rr = (size_t)(seed >> 3);
    /* A fleet? Not over ipc://, which reaches one tkd on this machine: that
     * client works exactly as it always has. */
    Tk__V1__ListNodesReply *r = NULL;
    if (strncmp(c->nodes[0]->addr, "ipc://", 6) != 0 &&
        ask_nodes(c, c->nodes[0], &r)) {
        if (install_table(c, r) == TK_OK)
            c->fleet = true;
        protobuf_c_message_free_unpacked(&r->base, NULL);
    }
    *out = c;
    return TK_OK;
}

int tk_client_open(tk_client **out, const char *url, char *errbuf,
                   size_t errlen)
{
    return tk_client_open_opts(out, url, NULL, errbuf, errlen);
}

void tk_client_close(tk_client *client)
{
    if (client == NULL)
        return;
    client_free(client);
}

/* ---- status ---------------------------------------------------------------
 */

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *tk_code_name(int code)
{
    static _Thread_local char other[24];
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, code);
    if (v != NULL)
        return v->name;
    snprintf(other, sizeof other, "CODE_%d", code);
    return other;
}

int tk_code_from_name(const char *name)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(
        &tk__v1__status__code__descriptor, name);
    return v != NULL ? v->value : -1;
}

const char *tk_cause_name(int cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, cause);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *tk_cancel_outcome_name(int outcome)
{
    static const char *const names[] = { "NOT_SENT", "CANCELLED", "NOT_FOUND",
                                         "ALREADY_DONE", "WRITE_CONTINUES" };
    if (outcome >= 0 && (size_t)outcome < sizeof names / sizeof names[0])
        return names[outcome];
    return "UNKNOWN";
}

void tk_status_clear(tk_status *status)
{
    if (status == NULL)
        return;
    free(status->message);
    free(status->reason);
    free(status->stderr_excerpt);
    free(status->tool);
    free(status->node);
    memset(status, 0, sizeof *status);
}

/* A status the client makes itself: no reply came, or none could be read. */
static int local_status(tk_status *st, int code, int cause, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));
static int local_status(tk_status *st, int code, int cause, const char *fmt,
                        ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tk_status_clear(st);
    st->code = code;
    st->cause = cause;
    st->message = strdup(buf);
    st->reason = strdup("");
    st->tool = strdup("");
    st->node = strdup("");
    st->from_server = false;
    return code;
}

static int copy_status(tk_status *st, const Tk__V1__Status *in)
{
    tk_status_clear(st);
    st->from_server = true;
    if (in == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply carries no status");
    st->code = (int)in->code;
    st->message = strdup(in->message);
    st->reason = strdup(in->reason);
    st->tool = strdup(in->tool);
    st->node = strdup("");
    if (in->stderr_excerpt.len > 0) {
        st->stderr_excerpt = malloc(in->stderr_excerpt.len);
        if (st->stderr_excerpt != NULL) {
            memcpy(st->stderr_excerpt, in->stderr_excerpt.data,
                   in->stderr_excerpt.len);
            st->stderr_len = in->stderr_excerpt.len;
        }
    }
    st->partial = in->partial;
    st->retry_after_ms = in->retry_after_ms;
    st->elapsed_us = in->elapsed_us;
    if (in->cancellation != NULL) {
        st->cause = (int)in->cancellation->cause;
        st->process_killed = in->cancellation->process_killed;
        st->write_completed = in->cancellation->write_completed;
        st->cleanup_ms = in->cancellation->cleanup_ms;
    }
    if (st->message == NULL || st->reason == NULL || st->tool == NULL ||
        st->node == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    st->from_server = true;
    return st->code;
}

/* ---- cancellation handles -------------------------------------------------
 */

int tk_cancel_new(tk_cancel **out)
{
    if (out == NULL)
        return TK_ERR_ARG;
    tk_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    *out = c;
    return TK_OK;
}

void tk_cancel_free(tk_cancel *cancel)
{
    if (cancel == NULL)
        return;
    pthread_mutex_destroy(&cancel->mu);
    pthread_cond_destroy(&cancel->cv);
    free(cancel);
}

uint64_t tk_cancel_call_id(tk_cancel *cancel)
{
    if (cancel == NULL)
        return 0;
    pthread_mutex_lock(&cancel->mu);
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    uint64_t id = cancel->state == CS_SENT ? cancel->call_id : 0;
    pthread_mutex_unlock(&cancel->mu);
    return id;
}

/* How long a Cancel may take: it is inline on the server, so this is only
 * the bound for a server that stopped answering. */
#define CANCEL_TIMEOUT_MS 5000u

/* What call_payload is to do besides the call. */
enum {
    CALL_ASK = 1,   /* ask tkd about a reply late past the deadline */
    CALL_PROBE = 2, /* Ping the node of a call kept waiting (a fleet's) */
};

/* How a call ended where the caller may go on elsewhere. */
typedef struct call_end {
    bool unsent;      /* it was not sent */
    bool node_failed; /* no reply: the node's connection failed or the node
                         stopped answering (client-made UNAVAILABLE) */
} call_end;

/* Where a reply's payload goes: decoded as a message of desc (with
 * allocator: NULL is malloc), or copied as bytes when desc is NULL. */
typedef struct reply_sink {
    const ProtobufCMessageDescriptor *desc;
    ProtobufCAllocator *allocator;
    ProtobufCMessage **msg;
    uint8_t **raw;
    size_t *raw_len;
} reply_sink;

static int call_payload(tk_client *client, node *n, const char *method,
                        const uint8_t *payload, size_t plen,
                        const reply_sink *sink, const tk_call_opts *opts,
                        tk_status *status, int flags, call_end *end);

int tk_cancel_fire(tk_cancel *cancel, int *outcome)
{
    if (cancel == NULL)
        return TK_ERR_ARG;
    pthread_mutex_lock(&cancel->mu);
    cancel->fired = true;
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    bool sent = cancel->state == CS_SENT;
    tk_client *client = cancel->client;
    /* The call's own node, kept while the Cancel is on its way, whether or
     * not the call ends meanwhile. */
    node *n = sent ? node_ref(cancel->node) : NULL;
    uint64_t id = cancel->call_id;
    pthread_mutex_unlock(&cancel->mu);
    if (!sent) {
        if (outcome != NULL)
            *outcome = TK_CANCEL_NOT_SENT;
        return TK_OK;
    }
    Tk__V1__CancelRequest req = TK__V1__CANCEL_REQUEST__INIT;
    req.call_id = id;
    uint8_t buf[16];
    size_t len = tk__v1__cancel_request__pack(&req, buf);
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__cancel_reply__descriptor,
                        .msg = &rep };
    tk_status st = { 0 };
    tk_call_opts opts = { .timeout_ms = CANCEL_TIMEOUT_MS };
    call_end end;
    int code = call_payload(client, n, "tk.v1.Control/Cancel", buf, len, &sink,
                            &opts, &st, CALL_ASK, &end);
    node_unref(n);
    int rv = TK_OK;
    if (code == TK_CODE_OK && rep != NULL) {
        if (outcome != NULL)
            *outcome = (int)((Tk__V1__CancelReply *)rep)->outcome;
        protobuf_c_message_free_unpacked(rep, NULL);
    } else {
        rv = TK_ERR_CONNECT;
    }
    tk_status_clear(&st);
    return rv;
}

/* Binds the handle to a call on node n; false (with a status) when it
 * must not be sent. */
static bool cancel_bind(tk_cancel *cancel, tk_client *client, node *n,
                        uint64_t id, tk_status *st)
{
    if (cancel == NULL)
        return true;
    pthread_mutex_lock(&cancel->mu);
    bool ok = false;
    if (cancel->state != CS_IDLE) {
        local_status(st, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                     "the tk_cancel handle is in use by another call");
    } else if (cancel->fired) {
        local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                     "cancelled before it was sent");
    } else {
        cancel->state = CS_SENDING;
        cancel->client = client;
        cancel->node = node_ref(n);
        cancel->call_id = id;
        ok = true;
    }
    pthread_mutex_unlock(&cancel->mu);
    return ok;
}

static void cancel_set(tk_cancel *cancel, cancel_state state)
{
    if (cancel == NULL)
        return;
    node *unbound = NULL;
    pthread_mutex_lock(&cancel->mu);
    cancel->state = state;
    if (state == CS_IDLE) {
        cancel->client = NULL;
        unbound = cancel->node;
        cancel->node = NULL;
    }
    pthread_cond_broadcast(&cancel->cv);
    pthread_mutex_unlock(&cancel->mu);
    node_unref(unbound);
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

static chan *chan_get(node *c)
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
static void chan_put(node *c, chan *ch, bool reusable)
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
static void chan_arm(chan *ch)
{
    pthread_mutex_lock(&ch->mu);
    ch->done = false;
    pthread_mutex_unlock(&ch->mu);
}

/* Waits until the operation on ch->aio ends (true) or CLOCK_MONOTONIC
 * reaches until_ns (false); the operation goes on either way. */
static bool chan_wait_until(chan *ch, int64_t until_ns)
{
    pthread_mutex_lock(&ch->mu);
    while (!ch->done &&
           tkc_cond_wait_until(&ch->cv, &ch->mu, until_ns) != ETIMEDOUT)
        ;
    bool done = ch->done;
    pthread_mutex_unlock(&ch->mu);
    return done;
}

/* ---- calls ------------------------------------------------------------------
 */

static nng_msg *encode_request(uint64_t id, const char *method,
                               uint32_t timeout_ms, const uint8_t *payload,
                               size_t plen)
{
    Tk__V1__Request env = TK__V1__REQUEST__INIT;
    env.call_id = id;
    env.method = (char *)method;
    env.timeout_ms = timeout_ms;
    env.payload.data = (uint8_t *)payload;
    env.payload.len = plen;
    nng_msg *msg = NULL;
    size_t n = tk__v1__request__get_packed_size(&env);
    if (nng_msg_alloc(&msg, n) == 0)
        tk__v1__request__pack(&env, nng_msg_body(msg));
    return msg;
}

static int sink_payload(const reply_sink *sink, const ProtobufCBinaryData *in,
                        tk_status *st)
{
    if (sink->desc != NULL) {
        /* A payload that does not decode leaves nothing in the caller's
         * allocator: protobuf-c frees what it took, and a tk_arena, whose
         * free does nothing, goes back to where it stood. */
        tk_arena *arena = tk__arena_of(sink->allocator);
        tk__arena_pos pos;
        if (arena != NULL)
            tk__arena_mark(arena, &pos);
        *sink->msg = protobuf_c_message_unpack(sink->desc, sink->allocator,
                                               in->len, in->data);
        if (*sink->msg != NULL)
            return TK_CODE_OK;
        if (arena != NULL)
            tk__arena_rewind(arena, &pos);
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply payload does not decode as %s",
                            sink->desc->name);
    }
    *sink->raw = malloc(in->len > 0 ? in->len : 1);
    if (*sink->raw == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    if (in->len > 0)
        memcpy(*sink->raw, in->data, in->len);
    *sink->raw_len = in->len;
    return TK_CODE_OK;
}

/* A varint at *at (bounded by len); advances past it. */
static bool get_varint(const uint8_t *buf, size_t len, size_t *at,
                       uint64_t *out)
{
    const uint8_t *p = buf + *at;
    if (!tkc_get_varint(&p, buf + len, out))
        return false;
    *at = (size_t)(p - buf);
    return true;
}

/* One field at *at: advances past it; sets *payload when it is
 * Reply.payload (field 3). false when it is not well formed. */
static bool skip_field(const uint8_t *buf, size_t len, size_t *at,
                       bool *is_payload, ProtobufCBinaryData *payload)
{
    uint64_t key, n;
    *is_payload = false;
    if (!get_varint(buf, len, at, &key))
        return false;
    switch (key & 7) {
    case 0:
        return get_varint(buf, len, at, &n);
    case 1:
    case 5: {
        size_t w = (key & 7) == 1 ? 8 : 4;
        if (len - *at < w)
            return false;
        *at += w;
        return true;
    }
    case 2:
        if (!get_varint(buf, len, at, &n) || n > len - *at)
            return false;
        if (key >> 3 == 3) { /* the last one counts, as for the unpacker */
            *payload = (ProtobufCBinaryData){ (size_t)n, (uint8_t *)buf + *at };
            *is_payload = true;
        }
        *at += (size_t)n;
        return true;
    default:
        return false;
    }
}

/* The frame's fields but Reply.payload, copied to out (NULL: only
 * counted) and their size in *rest_len; *payload is where the payload
 * lies. false when the frame is not well formed at this level. */
static bool scan_fields(const uint8_t *buf, size_t len, uint8_t *out,
                        size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest_len = 0;
    *payload = (ProtobufCBinaryData){ 0, NULL };
    for (size_t at = 0; at < len;) {
        size_t start = at;
        bool is_payload;
        if (!skip_field(buf, len, &at, &is_payload, payload))
            return false;
        if (!is_payload && out != NULL)
            memcpy(out + *rest_len, buf + start, at - start);
        *rest_len += is_payload ? 0 : at - start;
    }
    return true;
}

/* Reply.payload located in the frame rather than copied out of it by the
 * unpacker (a search reply is MBs): *payload points into buf, and *rest
 * (malloc'd) holds the frame's other fields, to be unpacked as the
 * envelope. false when the frame is not well formed at this level: the
 * caller then unpacks it whole, and protobuf-c judges it. */
static bool split_payload(const uint8_t *buf, size_t len, uint8_t **rest,
                          size_t *rest_len, ProtobufCBinaryData *payload)
{
    *rest = NULL;
    if (!scan_fields(buf, len, NULL, rest_len, payload))
        return false;
    *rest = malloc(*rest_len > 0 ? *rest_len : 1);
    return *rest != NULL && scan_fields(buf, len, *rest, rest_len, payload);
}

static int decode_reply(nng_msg *msg, uint64_t id, const reply_sink *sink,
                        tk_status *st)
{
    const uint8_t *body = nng_msg_body(msg);
    size_t len = nng_msg_len(msg);
    uint8_t *rest = NULL;
    size_t rest_len = 0;
    ProtobufCBinaryData payload;
    bool split = split_payload(body, len, &rest, &rest_len, &payload);
    Tk__V1__Reply *env = split ? tk__v1__reply__unpack(NULL, rest_len, rest)
                               : tk__v1__reply__unpack(NULL, len, body);
    free(rest);
    if (env == NULL)
        return local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply (%zu bytes) is not a tk.v1.Reply",
                            nng_msg_len(msg));
    int code;
    if (env->call_id != id && env->call_id != 0) {
        code = local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "the reply is for call %llu, not %llu",
                            (unsigned long long)env->call_id,
                            (unsigned long long)id);
    } else {
        code = copy_status(st, env->status);
        if (code == TK_CODE_OK)
            code = sink_payload(sink, split ? &payload : &env->payload, st);
    }
    tk__v1__reply__free_unpacked(env, NULL);
    return code;
}

/* The status of a call that got no reply: NNG's error rv on receiving. */
static int no_reply(node *n, int rv, tk_status *st, call_end *end)
{
    switch (rv) {
    case NNG_ECONNRESET:
    case NNG_ECONNSHUT:
        end->node_failed = true;
        return local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "the connection to tkd at %s was lost while the call was in "
            "flight; whether it ran is unknown (it is not resent)",
            n->addr);
    case NNG_ECLOSED:
        return local_status(st, TK_CODE_CANCELLED, TK_CAUSE_CALLER,
                            "the client was closed during the call");
    default:
        return local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "receiving from %s: %s", n->addr, nng_strerror(rv));
    }
}

/* How long tkd gets to answer a CallState. It is answered inline, ahead of
 * busy workers, so this bounds only a tkd that has stopped answering. */
#define PROBE_TIMEOUT_MS 5000u
/* The longest pause between two inquiries about a late reply. */
#define PROBE_MAX_INTERVAL_MS 2000u
/* How many answers in a row end the wait when they are ANSWERED (the reply
 * was handed to the connection ahead of the answer, so only this client's
 * own threads can still be delivering it) or NOT_FOUND (tkd's receive
 * contexts may take a call and a later inquiry in either order, so one
 * NOT_FOUND can come before the call is registered). */
#define PROBE_SAME_ANSWERS 3
/* How long a node of a fleet gets to answer the Ping of TK_NODE_PROBE_MS:
 * it is answered inline, even when every worker is busy. */
#define NODE_PING_TIMEOUT_MS 5000u

/* Where call id stands at tkd (tk.v1.CallStateReply.State), asked on the
 * same socket and so on the call's connection; -1 when tkd did not answer,
 * -2 when it does not know the method (a tkd older than CallState). */
static int ask_state(tk_client *client, node *n, uint64_t id)
{
    Tk__V1__CallStateRequest req = TK__V1__CALL_STATE_REQUEST__INIT;
    req.call_id = id;
    uint8_t buf[16];
    size_t len = tk__v1__call_state_request__pack(&req, buf);
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__call_state_reply__descriptor,
                        .msg = &rep };
    tk_call_opts opts = { .timeout_ms = PROBE_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    int code = call_payload(client, n, "tk.v1.Control/CallState", buf, len,
                            &sink, &opts, &st, 0, &end);
    int state = code == TK_CODE_UNIMPLEMENTED ? -2 : -1;
    if (code == TK_CODE_OK && rep != NULL)
        state = (int)((Tk__V1__CallStateReply *)rep)->state;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    tk_status_clear(&st);
    return state;
}

/* Whether node n answers a Ping on its socket within
 * NODE_PING_TIMEOUT_MS: any reply of tkd's is an answer. */
static bool node_answers(tk_client *client, node *n)
{
    static const uint8_t empty[1];
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__ping_reply__descriptor, .msg = &rep };
    tk_call_opts opts = { .timeout_ms = NODE_PING_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    (void)call_payload(client, n, "tk.v1.Control/Ping", empty, 0, &sink, &opts,
                       &st, 0, &end);
    bool answered = st.from_server;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    tk_status_clear(&st);
    return answered;
}

/* Why the client stopped waiting for a reply that did not come. */
typedef enum gave_up {
    GAVE_UP_SILENT,  /* tkd did not answer the inquiry */
    GAVE_UP_OLD,     /* tkd cannot be asked */
    GAVE_UP_UNKNOWN, /* tkd does not know the call */
    GAVE_UP_LOST,    /* tkd answered it; the reply did not come */
    GAVE_UP_LAST,    /* the client's own last bound */
    GAVE_UP_NODE,    /* the node did not answer its probe (a fleet's) */
} gave_up;

/* How long to wait for a reply, and why the wait ended without one. */
typedef struct waiting {
    uint64_t id;
    int64_t first_ns; /* the first question (or the end, without ask) */
    int64_t last_ns;  /* the client's own last bound */
    bool ask;         /* ask tkd about a late reply */
    bool probe;       /* Ping the node of a call kept waiting */
    bool write;       /* the method is a WRITE (the catalog says) */
    bool started;     /* out: tkd said the WRITE runs: it has started */
    gave_up why;      /* out: when the client stopped waiting */
} waiting;

/* What an answer to CallState (state; same: how many in a row) makes of
 * the wait: true to stop waiting, with w->why. */
static bool judge_state(waiting *w, int state, int same)
{
    switch (state) {
    case TK__V1__CALL_STATE_REPLY__STATE__RUNNING:
        /* tkd starts a WRITE only before its caller's deadline, and then
         * runs it to completion: wait for that answer. */
        w->started = w->started || w->write;
        return false;
    case TK__V1__CALL_STATE_REPLY__STATE__QUEUED:
        return false;
    case TK__V1__CALL_STATE_REPLY__STATE__ANSWERED:
        w->why = GAVE_UP_LOST;
        return same >= PROBE_SAME_ANSWERS;
    case -2:
        w->why = GAVE_UP_OLD;
        return true;
    case -1:
        w->why = GAVE_UP_SILENT;
        return true;
    default: /* NOT_FOUND, or a state this client does not know */
        w->why = GAVE_UP_UNKNOWN;
        return same >= PROBE_SAME_ANSWERS;
    }
}

/* The probe of a fleet's node, due at *next_probe: true when the node
 * answered (and the next is set), false when it did not (w->why). */
static bool probe_node(tk_client *client, node *n, waiting *w,
                       int64_t *next_probe)
{
    if (!node_answers(client, n)) {
        w->why = GAVE_UP_NODE;
        return false;
    }
    *next_probe = tkc_mono_ns() + (int64_t)TK_NODE_PROBE_MS * 1000000;
    return true;
}

/* When to ask again: after *pause (which grows to PROBE_MAX_INTERVAL_MS),
 * and not past last_ns. */
static int64_t next_question(int64_t last_ns, int64_t *pause)
{
    int64_t at = tkc_mono_ns() + *pause;
    if (*pause < (int64_t)PROBE_MAX_INTERVAL_MS * 1000000)
        *pause *= 2;
    return at < last_ns ? at : last_ns;
}

/* Waits for the reply on ch (its receive started) until first_ns. From
 * then on it asks tkd where the call stands and goes on waiting while tkd
 * says it is queued or running: tkd ends every call itself (a READ at its
 * deadline, once its processes are stopped; a WRITE at its own timeout),
 * and its structured answer tells the caller more than one the client
 * makes up. A loaded machine can delay that answer by any amount; only
 * tkd can say it is still coming. In a fleet, a call kept waiting
 * TK_NODE_PROBE_MS Pings its node, and again every TK_NODE_PROBE_MS: a
 * link that went down tells nobody. True when the receive ended; false,
 * with w->why, when the client stopped waiting (the receive still runs). */
static bool wait_reply(tk_client *client, node *n, chan *ch, waiting *w)
{
    const int64_t last_ns = w->last_ns;
    int64_t at = w->first_ns < last_ns ? w->first_ns : last_ns;
    int64_t next_probe =
        w->probe ? tkc_mono_ns() + (int64_t)TK_NODE_PROBE_MS * 1000000
                 : INT64_MAX;
    int64_t pause = (int64_t)TK_DEADLINE_GRACE_MS * 1000000;
    int same = 0, last_state = -1;
    for (;;) {
        if (chan_wait_until(ch, at < next_probe ? at : next_probe))
            return true;
        if (next_probe <= at && tkc_mono_ns() >= next_probe) {
            if (!probe_node(client, n, w, &next_probe))
                return chan_wait_until(ch, 0);
            continue;
        }
        if (!w->ask || at >= last_ns) {
            w->why = GAVE_UP_LAST;
            return false;
        }
        int state = ask_state(client, n, w->id);
        if (chan_wait_until(ch, 0))
            return true; /* it came while we asked */
        same = state == last_state ? same + 1 : 1;
        last_state = state;
        if (judge_state(w, state, same))
            return false;
        at = next_question(last_ns, &pause);
    }
}

/* The status of a WRITE that tkd said had started, when no reply came:
 * never DEADLINE_EXCEEDED, which would say the write failed. */
static int started_status(node *n, uint64_t id, tk_status *st)
{
    return local_status(
        st, TK_CODE_UNKNOWN, TK_CAUSE_NONE,
        "the write (call %llu) had started on tkd at %s, which runs it to "
        "completion whatever its caller's deadline, but its reply did not "
        "reach this client; whether it completed is unknown",
        (unsigned long long)id, n->addr);
}

static int gave_up_status(node *n, const waiting *w, tk_status *st,
                          call_end *end)
{
    static const char *const tail = " (a WRITE may still complete there)";
    const uint64_t id = w->id;
    if (w->why == GAVE_UP_NODE) {
        end->node_failed = true;
        return local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "node %s at %s stopped answering (no answer to "
                            "a Ping within %u ms); whether it ran is unknown",
                            n->id, n->addr, NODE_PING_TIMEOUT_MS);
    }
    if (w->started)
        return started_status(n, id, st);
    switch (w->why) {
    case GAVE_UP_SILENT:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and no answer "
            "within %u ms when asked where the call stands: the server did "
            "not answer%s",
            n->addr, PROBE_TIMEOUT_MS, tail);
    case GAVE_UP_OLD:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace, and this tkd cannot be asked where a call stands "
            "(tk.v1.Control/CallState is unknown to it)%s",
            n->addr, TK_DEADLINE_GRACE_MS, tail);
    case GAVE_UP_UNKNOWN:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline, and tkd has no "
            "record of call %llu on this connection%s",
            n->addr, (unsigned long long)id, tail);
    case GAVE_UP_LOST:
        return local_status(
            st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
            "tkd at %s says it answered call %llu, but its reply did not "
            "arrive; whether it ran is unknown",
            n->addr, (unsigned long long)id);
    case GAVE_UP_LAST:
    default:
        return local_status(
            st, TK_CODE_DEADLINE_EXCEEDED, TK_CAUSE_DEADLINE,
            "no reply from tkd at %s within the deadline and %u ms of "
            "grace: the server did not answer%s",
            n->addr, TK_DEADLINE_GRACE_MS, tail);
    }
}

/* Receives the reply on ch: see wait_reply. */
static int await_reply(tk_client *client, node *n, chan *ch, waiting *w,
                       const reply_sink *sink, tk_status *st, bool *replied,
                       call_end *end)
{
    nng_aio *aio = ch->aio;
    chan_arm(ch);
    nng_aio_set_timeout(aio, NNG_DURATION_INFINITE);
    nng_ctx_recv(ch->ctx, aio);
    w->why = GAVE_UP_LAST;
    bool ended = wait_reply(client, n, ch, w);
    if (!ended)
        nng_aio_cancel(aio);
    nng_aio_wait(aio);
    int rv = nng_aio_result(aio);
    *replied = rv == 0;
    if (rv == 0) { /* the reply, even one that came as we gave up */
        nng_msg *msg = nng_aio_get_msg(aio);
        int code = decode_reply(msg, w->id, sink, st);
        nng_msg_free(msg);
        return code;
    }
    if (!ended && rv == NNG_ECANCELED)
        return gave_up_status(n, w, st, end);
    return no_reply(n, rv, st, end);
}

/* One call on node n, its payload already serialized; the reply goes to
 * sink. flags: CALL_ASK, CALL_PROBE. */
static int call_payload(tk_client *client, node *n, const char *method,
                        const uint8_t *payload, size_t plen,
                        const reply_sink *sink, const tk_call_opts *opts,
                        tk_status *status, int flags, call_end *end)
{
    static const tk_call_opts no_opts = { 0 };
    if (opts == NULL)
        opts = &no_opts;
    *end = (call_end){ 0 };
    int64_t start = tkc_mono_ns();
    /* In 64 bits, then clamped: timeout_ms may be up to UINT32_MAX, and
     * nng_duration is a signed 32-bit count whose negative values are
     * special (a sum that wrapped, or went past INT32_MAX, would give up
     * at once while the call runs on). */
    uint64_t want = opts->timeout_ms == 0
                        ? (uint64_t)TK_MAX_WAIT_MS
                        : (uint64_t)opts->timeout_ms + TK_DEADLINE_GRACE_MS;
    nng_duration wait_ms =
        want > (uint64_t)INT32_MAX ? INT32_MAX : (nng_duration)want;
    /* The first question at the deadline plus the grace. However long tkd
     * says the call still runs, the client waits TK_MAX_WAIT_MS more at
     * most (tkd ends a READ at its deadline and a WRITE at its ceiling,
     * both well inside it). A call with the method's default deadline,
     * which only tkd knows, waits TK_MAX_WAIT_MS and asks nothing. */
    waiting w = { .first_ns = start + (int64_t)wait_ms * 1000000,
                  .ask = (flags & CALL_ASK) != 0,
                  .probe = (flags & CALL_PROBE) != 0 };
    w.last_ns = opts->timeout_ms == 0
                    ? w.first_ns
                    : w.first_ns + (int64_t)TK_MAX_WAIT_MS * 1000000;
    uint64_t id = atomic_fetch_add(&client->next_id, 1);
    w.id = id;
    /* A WRITE that has started runs to completion under its own timeout
     * (its ceiling), whatever its caller's deadline: the caller's
     * deadline bounds only the wait before it starts, and the client
     * waits for a started one at least that ceiling and tkd's time to
     * stop it (TK_WRITE_STOP_MS). */
    const tk_method_desc *md = tk_catalog_find_method(method);
    w.write = md != NULL && md->kind == TK_METHOD_WRITE;
    if (w.write) {
        int64_t own =
            start + ((int64_t)md->ceiling_ms + TK_WRITE_STOP_MS) * 1000000;
        if (opts->timeout_ms == 0 && own > w.first_ns)
            w.first_ns = own;
        if (own > w.last_ns)
            w.last_ns = own;
    }
    end->unsent = true;
    if (!cancel_bind(opts->cancel, client, n, id, status))
        return status->code;

    int code;
    bool replied = false;
    chan *ch = NULL;
    nng_msg *msg = encode_request(id, method, opts->timeout_ms, payload, plen);
    if (msg == NULL || (ch = chan_get(n)) == NULL) {
        if (msg != NULL)
            nng_msg_free(msg);
        code = local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
        goto done;
    }
    /* A send waits for a connection; bound it by the same deadline. In a
     * fleet, by TK_NODE_PROBE_MS at most: a node that has no connection
     * for that long is down, and the call (not sent) may go elsewhere. */
    nng_duration send_ms = wait_ms;
    if (client->fleet && send_ms > (nng_duration)TK_NODE_PROBE_MS)
        send_ms = (nng_duration)TK_NODE_PROBE_MS;
    nng_aio_set_msg(ch->send_aio, msg);
    nng_aio_set_timeout(ch->send_aio, send_ms);
    nng_ctx_send(ch->ctx, ch->send_aio);
    nng_aio_wait(ch->send_aio);
    if (nng_aio_result(ch->send_aio) != 0) {
        int rv = nng_aio_result(ch->send_aio);
        nng_msg_free(nng_aio_get_msg(ch->send_aio));
        end->node_failed = true;
        code = local_status(status, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "could not send to tkd at %s: %s (the call was "
                            "not sent)",
                            n->addr, nng_strerror(rv));
        goto done;
    }
    end->unsent = false;
    cancel_set(opts->cancel, CS_SENT);
    code = await_reply(client, n, ch, &w, sink, status, &replied, end);
done:
    cancel_set(opts->cancel, CS_IDLE);
    chan_put(n, ch, replied);
    return code;
}

/* ---- the nodes of a fleet ---------------------------------------------------
 */

/* How routing picks a node for a method. */
typedef enum route_kind {
    ROUTE_ANY,   /* Orders, Control: round robin */
    ROUTE_PATH,  /* Git, Search: the node whose roots hold the path */
    ROUTE_NAMED, /* Services: the node the caller names */
} route_kind;

static route_kind route_kind_of(const char *method)
{
    if (strncmp(method, "tk.v1.Git/", 10) == 0 ||
        strncmp(method, "tk.v1.Search/", 13) == 0)
        return ROUTE_PATH;
    if (strncmp(method, "tk.v1.Services/", 15) == 0)
        return ROUTE_NAMED;
    return ROUTE_ANY;
}

/* The request's first non-empty field marked (tk.v1.path) = PATH_IN_ROOTS,
 * or NULL: a string inside m. */
static const char *path_of(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING ||
            f->label == PROTOBUF_C_LABEL_REPEATED)
            continue;
        const tk_field_note *note = tk_catalog_find_field(d->name, f->name);
        if (note == NULL || note->path != TK_PATH_IN_ROOTS)
            continue;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0 &&
            *(const uint32_t *)((const char *)m + f->quantifier_offset) !=
                f->id)
            continue;
        const char *v = *(char *const *)((const char *)m + f->offset);
        if (v != NULL && v[0] != '\0')
            return v;
    }
    return NULL;
}

/* How much of path root holds, by whole components: its length, 0 when it
 * holds none of it ("/" holds every absolute path, as length 1). */
static size_t root_holds(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 0 || path[0] != '/')
        return 0;
    if (n == 1 && root[0] == '/')
        return 1;
    if (strncmp(root, path, n) != 0)
        return 0;
    return path[n] == '\0' || path[n] == '/' ? n : 0;
}

static size_t node_holds(const node *n, const char *path)
{
    size_t best = 0;
    for (size_t i = 0; i < n->n_roots; i++) {
        size_t l = root_holds(n->roots[i], path);
        if (l > best)
            best = l;
    }
    return best;
}

static bool was_tried(node *const *tried, size_t n_tried, const node *n)
{
    for (size_t i = 0; i < n_tried; i++)
        if (tried[i] == n)
            return true;
    return false;
}

/* The nodes, said for a message: "a, b (down), c (draining)", or with
 * roots "a: /r1 /r2; b: /r3". */
static void say_nodes(char *buf, size_t len, node *const *nodes, size_t n,
                      bool roots)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++) {
        const node *x = nodes[i];
        int k = snprintf(buf + at, len - at, "%s%s%s%s%s",
                         i > 0 ? (roots ? "; " : ", ") : "", x->id,
                         x->down ? " (down)" : "",
                         x->draining ? " (draining)" : "", roots ? ":" : "");
        if (k < 0)
            return;
        at += (size_t)k;
        for (size_t r = 0; roots && r < x->n_roots && at < len; r++) {
            k = snprintf(buf + at, len - at, " %s", x->roots[r]);
            if (k < 0)
                return;
            at += (size_t)k;
        }
    }
}

static void set_reason(tk_status *st, const char *reason)
{
    char *r = strdup(reason);
    if (r != NULL) {
        free(st->reason);
        st->reason = r;
    }
}

/* A node named by the caller: its index, or -1 (UNKNOWN_NODE). */
static int route_named(node *const *nodes, size_t n, const char *named,
                       tk_status *st)
{
    char list[768];
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i]->id, named) == 0)
            return (int)i;
    say_nodes(list, sizeof list, nodes, n, false);
    local_status(st, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
                 "no node \"%s\" in the fleet; its nodes are %s", named, list);
    set_reason(st, "UNKNOWN_NODE");
    return -1;
}

/* The node whose roots hold path longest, live and not tried yet; -1 with
 * NO_NODE_FOR_PATH (none holds it) or NO_LIVE_NODE (none that does can
 * take it). */
static int route_path(node *const *nodes, size_t n, const char *path,
                      node *const *tried, size_t n_tried, tk_status *st)
{
    char list[768];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = node_holds(nodes[i], path);
        best = l > best ? l : best;
    }
    for (size_t i = 0; best > 0 && i < n; i++) {
        const node *x = nodes[i];
        if (node_holds(x, path) == best && !x->down && !x->draining &&
            !was_tried(tried, n_tried, x))
            return (int)i;
    }
    say_nodes(list, sizeof list, nodes, n, true);
    if (best == 0) {
        local_status(st, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
                     "no node of the fleet holds %s: the nodes' roots are %s",
                     path, list);
        set_reason(st, "NO_NODE_FOR_PATH");
    } else {
        local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                     "no node that holds %s can take the call%s: %s", path,
                     n_tried > 0 ? " now" : "", list);
        set_reason(st, "NO_LIVE_NODE");
    }
    return -1;
}

/* Any live node not tried yet, round robin from *rr (advanced); -1 with
 * NO_LIVE_NODE. */
static int route_any(node *const *nodes, size_t n, size_t *rr,
                     node *const *tried, size_t n_tried, tk_status *st)
{
    char list[768];
    for (size_t k = 0; k < n; k++) {
        size_t i = (*rr + k) % n;
        const node *x = nodes[i];
        if (x->down || x->draining || was_tried(tried, n_tried, x))
            continue;
        *rr = i + 1;
        return (int)i;
    }
    say_nodes(list, sizeof list, nodes, n, false);
    local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                 "no live node of the fleet can take the call: %s", list);
    set_reason(st, "NO_LIVE_NODE");
    return -1;
}

/* The node for a call: its index in nodes, or -1 with *st said. rr: the
 * round robin's next (advanced); tried: the nodes this call has tried
 * already, which it does not try again. Under the client's mu. */
static int route(node *const *nodes, size_t n, const char *method,
                 const char *path, const char *named, size_t *rr,
                 node *const *tried, size_t n_tried, tk_status *st)
{
    if (named != NULL && named[0] != '\0')
        return route_named(nodes, n, named, st);
    route_kind kind = route_kind_of(method);
    if (kind == ROUTE_NAMED) {
        char list[768];
        if (n == 1)
            return 0;
        say_nodes(list, sizeof list, nodes, n, false);
        local_status(st, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                     "%s works on one machine's registrations: name its node "
                     "(tk_call_opts.node, tkcall --node); the nodes are %s",
                     method, list);
        set_reason(st, "NODE_REQUIRED");
        return -1;
    }
    if (kind == ROUTE_PATH && path != NULL)
        return route_path(nodes, n, path, tried, n_tried, st);
    /* Any live node; and a Git or Search request without a path, which
     * tkd refuses as it would anywhere. */
    return route_any(nodes, n, rr, tried, n_tried, st);
}

/* Marks n down (until a reading of the table shows a heartbeat since) and
 * the table due for reading. */
static void mark_down(tk_client *c, node *n)
{
    pthread_mutex_lock(&c->mu);
    n->down = true;
    n->down_ns = tkc_mono_ns();
    c->read_ns = 0;
    pthread_mutex_unlock(&c->mu);
}

/* The table tkd at n gives; false when it gives none (no fleet, an older
 * tkd, an error, no answer in 5 s). */
static bool ask_nodes(tk_client *c, node *n, Tk__V1__ListNodesReply **out)
{
    static const uint8_t empty[1];
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__list_nodes_reply__descriptor,
                        .msg = &rep };
    tk_call_opts opts = { .timeout_ms = NODE_PING_TIMEOUT_MS };
    tk_status st = { 0 };
    call_end end;
    int code = call_payload(c, n, "tk.v1.Control/ListNodes", empty, 0, &sink,
                            &opts, &st, 0, &end);
    tk_status_clear(&st);
    *out = (Tk__V1__ListNodesReply *)rep;
    if (code == TK_CODE_OK && *out != NULL && (*out)->n_nodes > 0)
        return true;
    if (rep != NULL)
        protobuf_c_message_free_unpacked(rep, NULL);
    *out = NULL;
    return false;
}

static char **copy_roots(const Tk__V1__NodeInfo *in)
{
    char **v = calloc(in->n_roots + 1, sizeof *v);
    for (size_t i = 0; v != NULL && i < in->n_roots; i++)
        if ((v[i] = strdup(in->roots[i])) == NULL) {
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            v = NULL;
        }
    return v;
}

/* The node of the old table that in is: one with the same id and address
 * (referenced), or the node the client opened with (id "", while
 * opening: no other thread knows it yet), which is the one that answered
 * (self_id), renamed; NULL when none. Under the client's mu. */
static node *match_node(tk_client *c, const Tk__V1__NodeInfo *in,
                        const char *self_id)
{
    for (size_t j = 0; j < c->n_nodes; j++) {
        node *old = c->nodes[j];
        if (strcmp(old->id, in->node_id) == 0 &&
            strcmp(old->addr, in->address) == 0)
            return node_ref(old);
        if (old->id[0] != '\0' || strcmp(in->node_id, self_id) != 0)
            continue;
        char *id = strdup(in->node_id), *addr = strdup(in->address);
        if (id == NULL || addr == NULL) {
            free(id);
            free(addr);
            return NULL;
        }
        free(old->id);
        free(old->addr);
        old->id = id;
        old->addr = addr;
        return node_ref(old);
    }
    return NULL;
}

static void free_root_list(char **roots)
{
    if (roots == NULL)
        return;
    for (char **p = roots; *p != NULL; p++)
        free(*p);
    free(roots);
}

/* Puts reply r's rows on nodes v (their roots already copied to roots)
 * and makes v the table. Under the client's mu. */
static void swap_table(tk_client *c, node **v, char ***roots,
                       const Tk__V1__ListNodesReply *r)
{
    int64_t now = tkc_mono_ns();
    for (size_t i = 0; i < r->n_nodes; i++) {
        node *x = v[i];
        const Tk__V1__NodeInfo *in = r->nodes[i];
        free_roots(x);
        x->roots = roots[i];
        x->n_roots = in->n_roots;
        roots[i] = NULL;
        x->draining = in->draining;
        /* Down until its heartbeat shows it alive since. */
        if (x->down &&
            now - (int64_t)in->heartbeat_age_ms * 1000000 > x->down_ns)
            x->down = false;
    }
    c->nodes = v;
    c->n_nodes = r->n_nodes;
    c->ttl_ms = r->ttl_ms > 0 ? r->ttl_ms : 6000;
    c->read_ns = now;
}

/* The client's table, from reply r: a node of the old one with the same id
 * and address is kept (with its socket), and so is the node the client
 * opened with, which is the one that answered (r->self_id). */
static int install_table(tk_client *c, const Tk__V1__ListNodesReply *r)
{
    size_t n = r->n_nodes;
    node **v = calloc(n, sizeof(node *));
    char ***roots = calloc(n, sizeof(char **));
    int rv = v != NULL && roots != NULL ? TK_OK : TK_ERR_NOMEM;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; rv == TK_OK && i < n; i++) {
        const Tk__V1__NodeInfo *in = r->nodes[i];
        v[i] = match_node(c, in, r->self_id);
        if (v[i] == NULL)
            v[i] = node_new(in->node_id, in->address, strlen(in->address));
        roots[i] = copy_roots(in);
        if (v[i] == NULL || roots[i] == NULL)
            rv = TK_ERR_NOMEM;
    }
    node **old = c->nodes;
    size_t n_old = c->n_nodes;
    if (rv == TK_OK) {
        swap_table(c, v, roots, r);
        v = old;
        n = n_old;
    }
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; v != NULL && i < n; i++)
        node_unref(v[i]);
    for (size_t i = 0; roots != NULL && i < r->n_nodes; i++)
        free_root_list(roots[i]);
    free(v);
    free(roots);
    return rv;
}

/* Reads the table again when it is older than its TTL (or a node failed):
 * one calling thread does, the others go on with the table they have. It
 * asks the live nodes in turn; when none answers, the client keeps its
 * table and asks again after the TTL. */
static void refresh_table(tk_client *c)
{
    pthread_mutex_lock(&c->mu);
    int64_t now = tkc_mono_ns();
    bool due =
        c->fleet && !c->refreshing &&
        (c->read_ns == 0 || now - c->read_ns >= (int64_t)c->ttl_ms * 1000000);
    node **v = NULL;
    size_t n = 0;
    if (due && (v = calloc(c->n_nodes, sizeof(node *))) != NULL) {
        c->refreshing = true;
        /* The live nodes first; the others too, or a client whose nodes
         * were all marked down would never learn that they are back. */
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < c->n_nodes; i++) {
                node *x = c->nodes[i];
                if ((x->down || x->draining) == (pass == 1))
                    v[n++] = node_ref(x);
            }
    }
    pthread_mutex_unlock(&c->mu);
    if (v == NULL)
        return;
    bool read = false;
    for (size_t i = 0; i < n; i++) {
        char err[512];
        Tk__V1__ListNodesReply *r = NULL;
        if (!read &&
            node_connect(c, v[i], NODE_CONNECT_MS, err, sizeof err) == TK_OK &&
            ask_nodes(c, v[i], &r)) {
            read = install_table(c, r) == TK_OK;
            protobuf_c_message_free_unpacked(&r->base, NULL);
        }
        node_unref(v[i]);
    }
    free(v);
    pthread_mutex_lock(&c->mu);
    if (!read)
        c->read_ns = tkc_mono_ns();
    c->refreshing = false;
    pthread_mutex_unlock(&c->mu);
}

static void set_node(tk_status *st, const char *id)
{
    char *d = strdup(id);
    if (d != NULL) {
        free(st->node);
        st->node = d;
    }
}

/* The most nodes one call tries. */
#define MAX_TRIES 16

/* What one call of call_fleet is: its method's routing, and its one
 * deadline. */
typedef struct fleet_call {
    const char *method;
    const char *path;
    const uint8_t *payload;
    size_t plen;
    const reply_sink *sink;
    const tk_call_opts *opts;
    bool read; /* the catalog knows the method as a READ */
    bool named;
    route_kind kind;
    uint32_t budget_ms; /* the one deadline a retried READ shares */
    int64_t start;
} fleet_call;

/* One try of call fc on node n, with timeout_ms; whether it may go on to
 * the next node in *again. */
static int try_node(tk_client *c, const fleet_call *fc, node *n,
                    uint32_t timeout_ms, size_t n_tried, tk_status *status,
                    bool *again)
{
    tk_call_opts o = *fc->opts;
    o.timeout_ms = timeout_ms;
    char err[512];
    call_end end = { .unsent = true };
    int code, rv = node_connect(c, n, NODE_CONNECT_MS, err, sizeof err);
    if (rv != TK_OK) {
        code = local_status(status, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                            "could not connect to node %s: %s (the call was "
                            "not sent)",
                            n->id, err);
        if (rv == CONNECT_REFUSED)
            set_reason(status, "NODE_REFUSED");
        end.node_failed = true;
    } else {
        code = call_payload(c, n, fc->method, fc->payload, fc->plen, fc->sink,
                            &o, status, CALL_ASK | CALL_PROBE, &end);
    }
    if (end.node_failed)
        mark_down(c, n);
    set_node(status, n->id);
    bool cancelled = o.cancel != NULL && code == TK_CODE_CANCELLED;
    /* Not sent: Orders and Control go to the next node, whatever the
     * method; a READ may go on where its caller allows. */
    bool unsent_any = end.unsent && fc->kind == ROUTE_ANY;
    bool read_retry =
        fc->read && fc->opts->retry_reads && fc->kind != ROUTE_NAMED;
    *again = !fc->named && end.node_failed && !cancelled &&
             n_tried < MAX_TRIES && (unsent_any || read_retry);
    return code;
}

/* The timeout of the next try: what is left of the one deadline; false
 * when nothing is. */
static bool time_left(const fleet_call *fc, size_t n_tried, uint32_t *out)
{
    *out = fc->opts->timeout_ms;
    if (n_tried == 0 || fc->budget_ms == 0)
        return true;
    int64_t spent = (tkc_mono_ns() - fc->start) / 1000000;
    if (spent >= (int64_t)fc->budget_ms)
        return false;
    *out = fc->budget_ms - (uint32_t)spent;
    return true;
}

/* A call in a fleet: routed (see route), dialed, and where the call may
 * go on elsewhere (it was not sent; or a READ whose node failed, when its
 * caller allows), to the next node within its one deadline. */
static int call_fleet(tk_client *c, fleet_call *fc, tk_status *status)
{
    const tk_method_desc *md = tk_catalog_find_method(fc->method);
    /* A method the catalog does not know may be a WRITE of a newer tkd:
     * only a known READ is ever sent a second time. */
    fc->read = md != NULL && md->kind == TK_METHOD_READ;
    fc->named = fc->opts->node != NULL && fc->opts->node[0] != '\0';
    fc->kind = route_kind_of(fc->method);
    fc->budget_ms = fc->opts->timeout_ms != 0 ? fc->opts->timeout_ms
                    : md != NULL              ? md->default_timeout_ms
                                              : 0;
    fc->start = tkc_mono_ns();
    node *tried[MAX_TRIES];
    size_t n_tried = 0;
    int code = TK_CODE_INTERNAL;
    bool again = true;
    uint32_t timeout_ms;
    while (again && time_left(fc, n_tried, &timeout_ms)) {
        refresh_table(c);
        tk_status rst = { 0 };
        node *n = NULL;
        pthread_mutex_lock(&c->mu);
        int i = route(c->nodes, c->n_nodes, fc->method, fc->path,
                      fc->opts->node, &c->rr, tried, n_tried, &rst);
        if (i >= 0)
            n = node_ref(c->nodes[i]);
        pthread_mutex_unlock(&c->mu);
        if (n == NULL && n_tried > 0) {
            /* Nowhere else to go: the last node's failure says more. */
            tk_status_clear(&rst);
            break;
        }
        if (n == NULL) {
            tk_status_clear(status);
            *status = rst;
            code = status->code;
            break;
        }
        tried[n_tried++] = n;
        code = try_node(c, fc, n, timeout_ms, n_tried, status, &again);
    }
    for (size_t i = 0; i < n_tried; i++)
        node_unref(tried[i]);
    return code;
}

/* A call, routed in a fleet; on the one node otherwise. m: the request,
 * when the caller has it as a message (else it is found in the payload
 * where routing needs it). */
static int call_routed(tk_client *c, const char *method,
                       const ProtobufCMessage *m, const uint8_t *payload,
                       size_t plen, const reply_sink *sink,
                       const tk_call_opts *opts, tk_status *status)
{
    if (!c->fleet) {
        if (opts != NULL && opts->node != NULL && opts->node[0] != '\0') {
            local_status(status, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
                         "no node \"%s\": tkd at %s is no member of a fleet",
                         opts->node, c->nodes[0]->addr);
            set_reason(status, "UNKNOWN_NODE");
            return status->code;
        }
        call_end end;
        return call_payload(c, c->nodes[0], method, payload, plen, sink, opts,
                            status, CALL_ASK, &end);
    }
    const char *path = NULL;
    ProtobufCMessage *unpacked = NULL;
    if (route_kind_of(method) == ROUTE_PATH &&
        (opts == NULL || opts->node == NULL || opts->node[0] == '\0')) {
        const tk_method_desc *md = tk_catalog_find_method(method);
        if (m == NULL && md != NULL)
            m = unpacked =
                protobuf_c_message_unpack(md->request, NULL, plen, payload);
        if (m != NULL)
            path = path_of(m);
    }
    static const tk_call_opts no_opts = { 0 };
    fleet_call fc = { .method = method,
                      .path = path,
                      .payload = payload,
                      .plen = plen,
                      .sink = sink,
                      .opts = opts != NULL ? opts : &no_opts };
    int code = call_fleet(c, &fc, status);
    if (unpacked != NULL)
        protobuf_c_message_free_unpacked(unpacked, NULL);
    return code;
}

int tk_call(tk_client *client, const char *method,
            const ProtobufCMessage *request,
            const ProtobufCMessageDescriptor *reply_desc,
            ProtobufCMessage **reply, const tk_call_opts *opts,
            tk_status *status)
{
    if (status == NULL)
        return TK_CODE_INVALID_ARGUMENT;
    memset(status, 0, sizeof *status);
    if (reply != NULL)
        *reply = NULL;
    if (client == NULL || method == NULL || request == NULL ||
        reply_desc == NULL || reply == NULL)
        return local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                            "tk_call: client, method, request, reply_desc "
                            "and reply are required");
    size_t plen = protobuf_c_message_get_packed_size(request);
    uint8_t *payload = malloc(plen > 0 ? plen : 1);
    if (payload == NULL)
        return local_status(status, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                            "out of memory");
    protobuf_c_message_pack(request, payload);
    reply_sink sink = {
        .desc = reply_desc,
        .allocator = opts != NULL ? opts->reply_allocator : NULL,
        .msg = reply,
    };
    int code = call_routed(client, method, request, payload, plen, &sink, opts,
                           status);
    free(payload);
    return code;
}

int tk_call_raw(tk_client *client, const char *method, const void *payload,
                size_t len, uint8_t **reply, size_t *reply_len,
                const tk_call_opts *opts, tk_status *status)
{
    if (status == NULL)
        return TK_CODE_INVALID_ARGUMENT;
    memset(status, 0, sizeof *status);
    if (reply != NULL)
        *reply = NULL;
    if (reply_len != NULL)
        *reply_len = 0;
    if (client == NULL || method == NULL || (payload == NULL && len > 0) ||
        reply == NULL || reply_len == NULL)
        return local_status(status, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
                            "tk_call_raw: client, method, payload, reply "
                            "and reply_len are required");
    reply_sink sink = { .raw = reply, .raw_len = reply_len };
    return call_routed(client, method, NULL, payload, len, &sink, opts, status);
}

/* ---- test seams -------------------------------------------------------------
 */

/* A node of tk__test_route's table, with no socket; NULL out of memory. */
static node *test_node(const tk__test_node *t)
{
    node *x = node_new(t->id, "", 0);
    const char *r = t->roots != NULL ? t->roots : "";
    size_t count = r[0] != '\0';
    for (const char *p = r; *p != '\0'; p++)
        count += *p == ':';
    if (x == NULL || (x->roots = calloc(count + 1, sizeof(char *))) == NULL) {
        node_unref(x);
        return NULL;
    }
    x->draining = t->draining;
    x->down = t->down;
    for (const char *p = r; x->n_roots < count;) {
        const char *colon = strchr(p, ':');
        size_t l = colon != NULL ? (size_t)(colon - p) : strlen(p);
        if ((x->roots[x->n_roots] = strndup(p, l)) == NULL) {
            node_unref(x);
            return NULL;
        }
        x->n_roots++;
        p = colon != NULL ? colon + 1 : p + l;
    }
    return x;
}

int tk__test_route(const tk__test_node *nodes, size_t n, const char *method,
                   const void *payload, size_t len, const char *named,
                   size_t *rr, tk_status *st)
{
    memset(st, 0, sizeof *st);
    node **v = calloc(n > 0 ? n : 1, sizeof(node *));
    bool made = v != NULL;
    for (size_t k = 0; made && k < n; k++)
        made = (v[k] = test_node(&nodes[k])) != NULL;
    const tk_method_desc *md = tk_catalog_find_method(method);
    ProtobufCMessage *m =
        md != NULL && made
            ? protobuf_c_message_unpack(md->request, NULL, len, payload)
            : NULL;
    const char *path =
        m != NULL && route_kind_of(method) == ROUTE_PATH ? path_of(m) : NULL;
    int i = made ? route(v, n, method, path, named, rr, NULL, 0, st) : -1;
    if (i >= 0)
        local_status(st, TK_CODE_OK, TK_CAUSE_NONE, "routed");
    else if (!made)
        local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE, "out of memory");
    if (m != NULL)
        protobuf_c_message_free_unpacked(m, NULL);
    for (size_t k = 0; v != NULL && k < n; k++)
        node_unref(v[k]);
    free(v);
    return i;
}
