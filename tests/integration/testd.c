/* SPDX-License-Identifier: MIT */
/* testd: the rpc core with tk.test.Test registered, as a process, for the
 * tests that need one (signals, tkcall's Ctrl-C). Prints "READY" on stdout
 * once listening, and "ENTERED <method>" when a test handler starts. Each
 * SIGUSR1 releases one held handler (testsvc.h): Late, and with
 * --release-writes SlowWrite too, which then ignores its data and runs
 * until released, so that a test ends the write when it has seen what it
 * waits for instead of guessing how long the write must take.
 *   testd --listen URL [--workers N] [--queue-depth N] [--grace-ms N]
 *         [--release-writes] [--stop-ms N]
 *         [--insecure-plain-tcp]
 *         [--node ID=ADDR=ROOT[:ROOT...] ... --self ID [--ttl-ms N]]
 * --node: a row of the fleet's table its tk.v1.Control/ListNodes answers
 * (a fixed one: the clients' side of a fleet without PostgreSQL).
 * Exits as tkd does: 0 after a clean shutdown, 3 when calls outlived the
 * grace.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "rpc/rpc.h"
#include "testsvc.h"
#include "tk/v1/control.pb-c.h"

/* A number option's value into *out; false when s is not a number. */
static bool number_arg(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v > UINT32_MAX)
        return false;
    *out = (unsigned)v;
    return true;
}

/* An option with a value into cfg or *listen; false when the option is
 * unknown or its value is not a number. */
static bool value_option(rpc_config *cfg, const char **listen, const char *opt,
                         const char *val)
{
    if (strcmp(opt, "--listen") == 0) {
        *listen = val;
        return true;
    }
    if (strcmp(opt, "--workers") == 0)
        return number_arg(val, &cfg->workers);
    if (strcmp(opt, "--queue-depth") == 0)
        return number_arg(val, &cfg->queue_depth);
    if (strcmp(opt, "--grace-ms") == 0)
        return number_arg(val, &cfg->shutdown_grace_ms);
    if (strcmp(opt, "--stop-ms") == 0)
        return number_arg(val, &cfg->shutdown_stop_ms);
    return false;
}

/* --node, --self, --ttl-ms: the table ListNodes answers. */
#define MAX_NODES 8
#define MAX_ROOTS 8
static struct {
    Tk__V1__NodeInfo info[MAX_NODES];
    Tk__V1__NodeInfo *ptr[MAX_NODES];
    char *roots[MAX_NODES][MAX_ROOTS];
    size_t n;
    const char *self;
    unsigned ttl_ms;
} fleet = { .ttl_ms = 6000 };

/* ID=ADDR=ROOT[:ROOT...] (s is kept, and cut). */
static bool node_arg(char *s)
{
    char *addr = strchr(s, '=');
    char *roots = addr != NULL ? strchr(addr + 1, '=') : NULL;
    if (roots == NULL || fleet.n == MAX_NODES)
        return false;
    *addr++ = '\0';
    *roots++ = '\0';
    Tk__V1__NodeInfo *n = &fleet.info[fleet.n];
    tk__v1__node_info__init(n);
    n->node_id = s;
    n->address = addr;
    n->version = "testd";
    n->roots = fleet.roots[fleet.n];
    char *save = NULL;
    for (char *r = strtok_r(roots, ":", &save);
         r != NULL && n->n_roots < MAX_ROOTS; r = strtok_r(NULL, ":", &save))
        n->roots[n->n_roots++] = r;
    fleet.ptr[fleet.n] = n;
    fleet.n++;
    return true;
}

static void list_nodes(void *arg, rpc_call *call, ProtobufCMessage *reply)
{
    (void)arg;
    (void)call;
    Tk__V1__ListNodesReply *r = (Tk__V1__ListNodesReply *)reply;
    r->nodes = fleet.ptr;
    r->n_nodes = fleet.n;
    r->self_id = (char *)fleet.self;
    r->ttl_ms = fleet.ttl_ms;
}

/* Each SIGUSR1 (blocked in every thread) posts the release semaphore. */
static void *releaser(void *arg)
{
    testsvc *t = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) == 0)
            ts_sem_post(&t->release);
    }
    return NULL;
}

/* The command line into cfg, *listen, *release_writes and fleet; false
 * when an option is unknown or its value wrong. */
static bool parse_args(int argc, char **argv, rpc_config *cfg,
                       const char **listen, bool *release_writes)
{
    bool ok = true;
    for (int i = 1; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--release-writes") == 0) {
            *release_writes = true;
            continue;
        }
        if (strcmp(argv[i], "--insecure-plain-tcp") == 0) {
            cfg->allow_plain_tcp = true;
            continue;
        }
        if (val == NULL)
            return false;
        i++;
        if (strcmp(argv[i - 1], "--node") == 0)
            ok = ok && node_arg(argv[i]);
        else if (strcmp(argv[i - 1], "--self") == 0)
            fleet.self = val;
        else if (strcmp(argv[i - 1], "--ttl-ms") == 0)
            ok = ok && number_arg(val, &fleet.ttl_ms);
        else
            ok = ok && value_option(cfg, listen, argv[i - 1], val);
    }
    return ok;
}

int main(int argc, char **argv)
{
    rpc_block_stop_signals();
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    rpc_config cfg;
    rpc_config_init(&cfg);
    const char *listen = NULL;
    bool release_writes = false;
    bool ok = parse_args(argc, argv, &cfg, &listen, &release_writes);
    if (listen == NULL || !ok) {
        fprintf(stderr, "usage: testd --listen URL [...]\n");
        return 2;
    }
    cfg.listen = &listen;
    cfg.n_listen = 1;
    cfg.version = "testd";
    if (setvbuf(stdout, NULL, _IONBF, 0) != 0)
        return 1;
    static testsvc t;
    testsvc_init(&t);
    t.announce_stdout = true;
    t.use_release = release_writes;
    pthread_t rel;
    if (pthread_create(&rel, NULL, releaser, &t) != 0 ||
        pthread_detach(rel) != 0)
        return 1;
    char err[256];
    rpc_server *srv = NULL;
    bool made = rpc_server_new(&srv, &cfg, err, sizeof err) == 0 &&
                control_register(srv, err, sizeof err) == 0 &&
                testsvc_register(&t, srv) == 0;
    if (made && fleet.n > 0)
        rpc_server_set_nodes(srv, list_nodes, NULL);
    if (!made || rpc_server_start(srv, err, sizeof err) != 0) {
        fprintf(stderr, "testd: %s\n", err);
        return 1;
    }
    printf("READY %s\n", listen);
    int rv = rpc_serve_until_signal(srv);
    rpc_server_free(srv);
    /* A write still running past the grace (rv > 0) may be waiting on
     * t.release: a condition variable with a waiter must not be destroyed
     * (glibc's pthread_cond_destroy would wait for it), so the process
     * exits with it. */
    if (rv == 0)
        testsvc_destroy(&t);
    return rv == 0 ? 0 : rv > 0 ? 3 : 1;
}
