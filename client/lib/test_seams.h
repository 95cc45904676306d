/* SPDX-License-Identifier: MIT */
/* libtkclient's test seams: what tests/ call to reach inside the library
 * and a program never does. Not installed (client/include/tk/ is, and
 * declares only what a program may use); only client/lib/, tests/ and
 * tools/ include it (tests/arch, rules seam and include). */
#ifndef TK_CLIENT_LIB_TEST_SEAMS_H
#define TK_CLIENT_LIB_TEST_SEAMS_H

#include <stdbool.h>
#include <stddef.h>

#include <tk/client.h>

/* For tests only (tests/unit/test_route.c): the node the routing of a
 * fleet picks for method with this request (its payload, as tk_call_raw
 * takes it), over a table of nodes given here, of which none has been
 * tried. roots: the node's roots separated by ':'. Returns the node's
 * index, with st OK; or -1 with st as the call would end. *rr: the round
 * robin's next, advanced. st is to be cleared with tk_status_clear. */
typedef struct tk__test_node {
    const char *id;
    const char *roots;
    bool draining;
    bool down;
} tk__test_node;
int tk__test_route(const tk__test_node *nodes, size_t n, const char *method,
                   const void *payload, size_t len, const char *named,
                   size_t *rr, tk_status *st);

#endif /* TK_CLIENT_LIB_TEST_SEAMS_H */
