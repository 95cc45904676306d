/* SPDX-License-Identifier: MIT */
/*
 * Test support: a server's own report of its metrics (tk.v1.Control/Stats),
 * read by the tests that check what tkd counts.
 */
#ifndef TK_TESTS_STATS_H
#define TK_TESTS_STATS_H

#include <stddef.h>

#include <tk/client.h>

#include "tk/v1/control.pb-c.h"

/* Stats of the server client is dialled to; fails the test when it is not
 * answered. Free with protobuf_c_message_free_unpacked. */
Tk__V1__StatsReply *ts_stats(tk_client *client);
/* The value of the metric of family name whose labels are the n_labels
 * pairs given (name, value, ...; sorted by name, as tkd sends them); a
 * histogram's sample count; -1 when there is no such metric. */
double ts_stat(const Tk__V1__StatsReply *r, const char *name, size_t n_labels,
               const char *const *labels);

#endif
