/* SPDX-License-Identifier: MIT */
/* Inside fleet/: the one header that names libpq; nothing outside this
 * folder includes it. fleet.c (the options checked, the fleet made,
 * registered and freed) over heartbeat.c (the join, each heartbeat and the
 * thread that beats, draining, leaving) and list_nodes.c (ListNodes'
 * answer from the reading); fleet.c and heartbeat.c over sql.c (the
 * connection and the statements on tk_nodes, each bounded). */
#ifndef TK_SERVICE_FLEET_INT_H
#define TK_SERVICE_FLEET_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <libpq-fe.h>

#include "fleet.h"
#include "obs/obs.h"
#include "port/port.h"
#include "pq/pq.h"

#define FLEET_MS ((int64_t)1000000) /* nanoseconds */

/* One live row of tk_nodes, as read. */
typedef struct fleet_node {
    char *node_id;
    char *address;
    char *version;
    char **roots;
    size_t n_roots;
    bool draining;
    int64_t age_ms; /* by PostgreSQL's now(), when it was read */
} fleet_node;

typedef struct fleet_reading {
    fleet_node *nodes; /* by node_id */
    size_t n;
} fleet_reading;

void fleet__reading_fini(fleet_reading *r);

/* The connection: the heartbeat thread's alone (or the thread that calls
 * fleet_join, before it starts). */
typedef struct fleet_pg {
    PGconn *conn; /* NULL: not connected */
    const char *dsn;
    uint32_t stmt_ms; /* statement_timeout */
    /* Polled with the socket: set, it ends what is waited for (abort_fd
     * of fleet__pg_*; -1: none). */
    int abort_fd;
    char message[256]; /* what the last failure was, one line */
} fleet_pg;

/* What a claim of this node's row says. */
typedef struct fleet_row {
    const char *node_id;
    const char *address;
    const char *roots; /* a text[] literal */
    const char *version;
    const char *instance;
    bool draining;
    uint32_t ttl_ms;
} fleet_row;

/* Who holds an id that could not be claimed. */
typedef struct fleet_holder {
    char address[256];
    char instance[64];
    int64_t age_ms;
} fleet_holder;

/* Each returns 0, or -1 with pg->message set (the connection is then
 * closed: the next use connects anew); every wait ends by until_ns
 * (monotonic) or when pg->abort_fd is set. */

/* A reading's bounds (whatever a writer of the database adds): ListNodes'
 * ceiling of nodes and one (so that its reply can say it was cut), twice
 * its byte budget, and more roots than a tkd is given. */
#define FLEET_READ_MAX_NODES 1025u
#define FLEET_READ_MAX_BYTES ((size_t)2 << 20)
#define FLEET_READ_MAX_ROOTS 256u

/* Connects when not connected: sets statement_timeout and creates
 * tk_nodes when missing. */
int fleet__pg_open(fleet_pg *pg, int64_t until_ns);
void fleet__pg_close(fleet_pg *pg);
/* Upserts the row unless another instance's row for the id is live:
 * 1 claimed, 0 held (*holder then says by whom), -1 failed. */
int fleet__pg_claim(fleet_pg *pg, const fleet_row *row, fleet_holder *holder,
                    int64_t until_ns);
/* The rows whose heartbeat is younger than ttl_ms, by node_id: at most
 * FLEET_READ_MAX_NODES of them, FLEET_READ_MAX_ROOTS roots each, and the
 * first nodes whose strings fit in FLEET_READ_MAX_BYTES (sql.c). */
int fleet__pg_read(fleet_pg *pg, uint32_t ttl_ms, fleet_reading *out,
                   int64_t until_ns);
/* Deletes the row of (node_id, instance). */
int fleet__pg_delete(fleet_pg *pg, const char *node_id, const char *instance,
                     int64_t until_ns);

struct fleet {
    char *node_id, *address, *dsn, *version;
    char *roots_literal; /* text[] */
    char instance[33];   /* hex: this process's token */
    uint32_t heartbeat_ms, ttl_ms;
    fleet_pg pg;      /* the heartbeat thread's (fleet_join's before) */
    port_event abort; /* set: stop waiting for the database */
    pthread_t thread;
    bool joined;         /* fleet_join claimed the row */
    bool started;        /* the heartbeat thread runs */
    fleet_reading shown; /* the thread's: the last reading it logged */
    bool failing;        /* the thread's: the last beat failed */
    char logged[512];    /* the thread's: the failure it logged last */
    bool held;           /* the thread's: a claim of the row succeeded */
    int64_t held_ns;     /* the thread's: when the last one did */

    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cv;
    bool stop;
    bool draining;
    bool drain_pending; /* a beat with draining set is wanted */
    bool drain_ok;
    fleet_reading reading;
    bool have_reading;
    int64_t read_ns;  /* monotonic, when reading was taken */
    time_t read_wall; /* the same, by the wall clock */
    int64_t start_ns; /* fleet_new, monotonic and wall */
    time_t start_wall;
    char error[512]; /* why the last beat failed; "" when it did not */
    /* The row was taken from this running node (beat): it no longer
     * advertises, and ListNodes answers MEMBERSHIP_STALE saying so. */
    bool taken;
    time_t taken_wall;
};

/* heartbeat.c: deletes the row (fleet_free, when no thread was started
 * to leave the table). */
void fleet__leave(fleet *f);
/* heartbeat.c: rpc's stop hook, the row marked draining. */
void fleet__drain(void *arg);
/* list_nodes.c: ListNodes' answer (rpc_nodes_fn). */
void fleet__list_nodes(void *arg, rpc_call *call, ProtobufCMessage *reply);

#endif /* TK_SERVICE_FLEET_INT_H */
