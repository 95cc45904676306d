/* SPDX-License-Identifier: MIT */
/*
 * fleet — this tkd's membership of a fleet (DESIGN.md, "Scaling out").
 *
 * Owns: the row of the table tk_nodes in PostgreSQL that says this node
 * is a member (its id, advertised address, resolved roots, version,
 * draining flag, the token of this process, a heartbeat by PostgreSQL's
 * clock), the table itself (created under an advisory lock), the one
 * connection and the one thread that refresh the row and read the live
 * table every heartbeat, and tk.v1.Control/ListNodes' answer from that
 * reading.
 * May use: libpq (its own connection, never Orders' pool), roots/, rpc.h
 * (the ListNodes hook, the stop hook), obs/ (the log), port/, libc.
 * Must never: block a call (ListNodes copies the last reading under a
 * mutex; the database is touched by the heartbeat thread alone), let
 * libpq be seen outside this folder (this header names no libpq type),
 * take over an id whose row another live tkd holds, fight over its own
 * row once another instance has taken it (it stops advertising, and
 * ListNodes says so), or hold up shutdown by more than its bounds
 * (FLEET_STOP_MS for draining, again for the row's delete).
 */
#ifndef TK_SERVICE_FLEET_H
#define TK_SERVICE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roots/roots.h"
#include "rpc/rpc.h"

typedef struct fleet fleet;

typedef struct fleet_config {
    const char *node_id;   /* --node-id (fleet_check_node_id) */
    const char *address;   /* --advertise (fleet_check_advertise) */
    const char *dsn;       /* libpq connection string or URI */
    const roots *roots;    /* resolved --root directories; outlives fleet */
    const char *version;   /* tkd's */
    uint32_t heartbeat_ms; /* 0: FLEET_DEFAULT_HEARTBEAT_MS */
    uint32_t ttl_ms;       /* 0: 3 heartbeats */
} fleet_config;

#define FLEET_DEFAULT_HEARTBEAT_MS 2000u
#define FLEET_MIN_HEARTBEAT_MS 100u
#define FLEET_MAX_HEARTBEAT_MS 60000u
#define FLEET_MAX_ID 64
/* How long draining, and then the row's delete, may each hold up a
 * shutdown: a database that does not answer within it is logged and left
 * behind (the row then drops out when its heartbeat goes stale). */
#define FLEET_STOP_MS 1500u

/* 0 when id is a node id (1 to FLEET_MAX_ID of [A-Za-z0-9._-]); else -1
 * with a message in err saying what is allowed. */
int fleet_check_node_id(const char *id, char *err, size_t errlen);
/* 0 when url is an address clients can dial: tls+tcp://HOST:PORT, or
 * tcp://HOST:PORT when allow_plain_tcp; a port from 1 to 65535 and a host
 * that is no wildcard. Else -1 with a message in err saying what to pass. */
int fleet_check_advertise(const char *url, bool allow_plain_tcp, char *err,
                          size_t errlen);

/* Errors: negative errno-style values, with a message in err. */
int fleet_new(fleet **out, const fleet_config *cfg, char *err, size_t errlen);
/* Joins: creates the table when it is missing, claims this node's row and
 * reads the table, within a few seconds, on the calling thread (at start,
 * before the listeners). -EEXIST when another tkd whose heartbeat is live
 * holds the id (err names the id, its address and the heartbeat's age):
 * tkd must not start. A database that cannot be reached is no error: it is
 * logged, and the heartbeat thread joins when it answers (and refuses the
 * id then, logged, if another tkd has taken it meanwhile). */
int fleet_join(fleet *f, char *err, size_t errlen);
/* Answers ListNodes from the reading, and marks the row draining when tkd
 * is told to stop (before it stops accepting): rpc_server_set_nodes and
 * rpc_server_set_on_stop. Before rpc_server_start. */
void fleet_register(fleet *f, rpc_server *srv);
/* Starts the heartbeat thread. 0 or -errno (with a message in err). */
int fleet_start(fleet *f, char *err, size_t errlen);
/* Stops the heartbeat, deletes this node's row (within FLEET_STOP_MS;
 * logged when it could not) and frees. After rpc_server_free. NULL is
 * accepted. */
void fleet_free(fleet *f);

#endif /* TK_SERVICE_FLEET_H */
