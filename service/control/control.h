/* SPDX-License-Identifier: MIT */
/*
 * control — the tk.v1.Control service: Ping, Cancel, CallState,
 * ListMethods, ListNodes, Stats.
 *
 * Owns: its handlers, which answer from what rpc/ keeps of the server it
 * serves (the methods, uptime and version, the call registry, the fleet's
 * ListNodes hook, the metrics: rpc.h, "what the server tells
 * tk.v1.Control").
 * May call: rpc/ (through rpc.h), libc.
 * Must never: keep state of its own, block (every Control method is
 * inline: Ping must answer while every worker is busy, Cancel and
 * CallState must not wait behind them), or cancel a call of another
 * connection than the caller's.
 */
#ifndef TK_SERVICE_CONTROL_H
#define TK_SERVICE_CONTROL_H

#include <stddef.h>

#include "rpc/rpc.h"

/* Adds tk.v1.Control to srv, the server it reports on (before
 * rpc_server_start). Every server tkd runs serves it, as every test
 * server does. Errors as rpc_server_add_service's. */
int control_register(rpc_server *srv, char *err, size_t errlen);

#endif
