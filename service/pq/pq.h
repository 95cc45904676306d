/* SPDX-License-Identifier: MIT */
/*
 * pq — libpq, loaded by the first use, not at start. tkd links no libpq:
 * libpq and what it needs (OpenLDAP, and through it GnuTLS, whose
 * initialiser runs at load; Kerberos, SASL, p11-kit) were 3.2 MB of the
 * 8.9 MB resident in a tkd that had not talked to PostgreSQL yet, and
 * many never do (no --pg).
 *
 * Owns: loading libpq (dlopen of the library tk was built against, once,
 * whichever thread asks first) and the libpq functions orders/ and fleet/
 * call, defined in pq.c with libpq-fe.h's own prototypes, each calling
 * libpq's. So orders/ and fleet/ are written against libpq-fe.h as ever;
 * they call pq_load before their first connection, which says why libpq
 * could not be loaded.
 * May call: libpq (through dlopen and dlsym only), libc.
 * Must never: unload libpq; let a libpq function run before libpq is
 * loaded (one that gets an object only libpq made cannot be reached
 * before; the three that take NULL do nothing on it, as libpq's do).
 */
#ifndef TK_SERVICE_PQ_H
#define TK_SERVICE_PQ_H

#include <stddef.h>

/* Loads libpq unless it is loaded: 0, or -1 with why in err (every later
 * call fails the same way). Thread-safe. */
int pq_load(char *err, size_t errlen);

#endif /* TK_SERVICE_PQ_H */
