/* SPDX-License-Identifier: MIT */
/* A fleet's membership made and ended: the options that make this tkd a
 * node checked, the fleet made from them (its copies, the token of this
 * process), its hooks registered with the server, and all of it freed. The
 * membership itself, the heartbeat, is heartbeat.c's; ListNodes' answer
 * list_nodes.c's. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet_int.h"
#include "common/common.h"
#include "port/port.h"

/* The shortest statement_timeout, whatever the heartbeat. */
#define MIN_STMT_MS 500u

int fleet_check_node_id(const char *id, char *err, size_t errlen)
{
    size_t n = strlen(id);
    bool ok = n >= 1 && n <= FLEET_MAX_ID;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)id[i]) || strchr("._-", id[i]) != NULL;
    if (!ok)
        snprintf(err, errlen,
                 "--node-id is 1 to %d of the characters A-Z a-z 0-9 . _ -, "
                 "not \"%.80s\"",
                 FLEET_MAX_ID, id);
    return ok ? 0 : -1;
}

/* Whether host (as spelled in a URL) is one that nobody can dial. */
static bool wildcard_host(const char *host, size_t n)
{
    static const char *const any[] = { "*", "0.0.0.0", "[::]", "::" };
    for (size_t i = 0; i < sizeof any / sizeof any[0]; i++)
        if (strlen(any[i]) == n && strncmp(host, any[i], n) == 0)
            return true;
    return false;
}

int fleet_check_advertise(const char *url, bool allow_plain_tcp, char *err,
                          size_t errlen)
{
    const char *rest = NULL;
    if (strncmp(url, "tls+tcp://", 10) == 0)
        rest = url + 10;
    else if (allow_plain_tcp && strncmp(url, "tcp://", 6) == 0)
        rest = url + 6;
    const char *colon = rest != NULL ? strrchr(rest, ':') : NULL;
    const char *port = colon != NULL ? colon + 1 : "";
    char *end = NULL;
    long p = strtol(port, &end, 10);
    bool ok = colon != NULL && colon > rest && port[0] >= '0' &&
              port[0] <= '9' && *end == '\0' && p >= 1 && p <= 65535 &&
              strchr(rest, '/') == NULL &&
              !wildcard_host(rest, (size_t)(colon - rest));
    if (!ok && !allow_plain_tcp && strncmp(url, "tcp://", 6) == 0)
        snprintf(err, errlen,
                 "--advertise tcp:// needs --insecure-plain-tcp (tcp:// "
                 "authenticates no one): pass tls+tcp://HOST:PORT, not "
                 "\"%.120s\"",
                 url);
    else if (!ok)
        snprintf(err, errlen,
                 "--advertise wants the address clients dial, "
                 "tls+tcp://HOST:PORT%s (a host that is no wildcard, a port "
                 "from 1 to 65535), not \"%.120s\"",
                 allow_plain_tcp ? " or tcp://HOST:PORT" : "", url);
    return ok ? 0 : -1;
}

/* The resolved roots as a PostgreSQL text[] literal: {"a","b"}. */
static char *roots_literal(const roots *r)
{
    size_t n = roots_count(r), len = 3;
    for (size_t i = 0; i < n; i++)
        len += 2 * strlen(roots_get(r, i)) + 3;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    char *p = out;
    *p++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '"';
        for (const char *s = roots_get(r, i); *s != '\0'; s++) {
            if (*s == '"' || *s == '\\')
                *p++ = '\\';
            *p++ = *s;
        }
        *p++ = '"';
    }
    *p++ = '}';
    *p = '\0';
    return out;
}

/* A token no other process has: 16 bytes of /dev/urandom in hex (or, where
 * it cannot be read, the pid and the clocks, unique enough on one host). */
static void make_instance(char out[33])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof b) {
        uint64_t a = (uint64_t)getpid() ^ ((uint64_t)time(NULL) << 20);
        uint64_t c = (uint64_t)tkc_mono_ns();
        memcpy(b, &a, 8);
        memcpy(b + 8, &c, 8);
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static uint32_t stmt_ms(uint32_t heartbeat_ms)
{
    return heartbeat_ms > MIN_STMT_MS ? heartbeat_ms : MIN_STMT_MS;
}

/* What fleet_new allocates besides the lock and the condition: its
 * copies of the configuration, the abort event, and f. */
static void allocations_free(fleet *f)
{
    port_event_close(&f->abort);
    free(f->node_id);
    free(f->address);
    free(f->dsn);
    free(f->version);
    free(f->roots_literal);
    free(f);
}

int fleet_new(fleet **out, const fleet_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    fleet *f = calloc(1, sizeof *f);
    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    f->abort = PORT_EVENT_NONE;
    f->heartbeat_ms =
        cfg->heartbeat_ms != 0 ? cfg->heartbeat_ms : FLEET_DEFAULT_HEARTBEAT_MS;
    f->ttl_ms = cfg->ttl_ms != 0 ? cfg->ttl_ms : 3 * f->heartbeat_ms;
    f->node_id = strdup(cfg->node_id);
    f->address = strdup(cfg->address);
    f->dsn = strdup(cfg->dsn);
    f->version = strdup(cfg->version != NULL ? cfg->version : "");
    f->roots_literal = roots_literal(cfg->roots);
    int rv = 0;
    if (f->node_id == NULL || f->address == NULL || f->dsn == NULL ||
        f->version == NULL || f->roots_literal == NULL)
        rv = -ENOMEM;
    if (rv == 0)
        rv = port_event_open(&f->abort);
    if (rv == 0)
        rv = -tkc_cond_init(&f->cv);
    if (rv != 0) {
        snprintf(err, errlen, "fleet: cannot start: %s",
                 rv == -ENOMEM ? "out of memory" : "no event");
        allocations_free(f);
        return rv;
    }
    pthread_mutex_init(&f->mu, NULL);
    make_instance(f->instance);
    f->pg = (fleet_pg){ .dsn = f->dsn,
                        .stmt_ms = stmt_ms(f->heartbeat_ms),
                        .abort_fd = -1 };
    f->start_ns = tkc_mono_ns();
    f->start_wall = time(NULL);
    *out = f;
    return 0;
}

void fleet_register(fleet *f, rpc_server *srv)
{
    rpc_server_set_nodes(srv, fleet__list_nodes, f);
    rpc_server_set_on_stop(srv, fleet__drain, f);
}

void fleet_free(fleet *f)
{
    if (f == NULL)
        return;
    if (f->started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        port_event_set(&f->abort);
        pthread_join(f->thread, NULL); /* it leaves the table */
    } else if (f->joined) {
        fleet__leave(f);
    }
    fleet__pg_close(&f->pg);
    fleet__reading_fini(&f->reading);
    fleet__reading_fini(&f->shown);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    allocations_free(f);
}
