/* SPDX-License-Identifier: MIT */
/* Inside tkd's entry point: what service/main.c (the process's start-up
 * and shutdown), tkd_options.c (the command line) and tkd_usage.c (the
 * text of --help) share. No module: these files may include every
 * module's public header and use no library; nothing outside service/'s
 * top level includes this one.
 */
#ifndef TK_SERVICE_TKD_INT_H
#define TK_SERVICE_TKD_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "fleet/fleet.h"
#include "orders/orders.h"
#include "obs/obs.h"
#include "roots/roots.h"
#include "rpc/rpc.h"
#include "tkd_version.h"

#define MAX_LISTEN 16
#define MAX_ROOTS 64

typedef struct options {
    /* Who says what is wrong: "tkd", or "tkd install" checking the options
     * a unit will start tkd with. */
    const char *who;
    bool install_check;
    const char *listen[MAX_LISTEN];
    size_t n_listen;
    const char *listen_ro[MAX_LISTEN];
    size_t n_listen_ro;
    const char *root_args[MAX_ROOTS];
    size_t n_roots;
    roots *roots;
    rpc_config rpc;
    orders_config orders;
    fleet_config fleet;
    unsigned search_slots;
    char default_addr[PATH_MAX + 8];
} options;

/* tkd_usage.c: tkd --help. */
extern const char tkd__usage_text[];

/* tkd_options.c: 0 to run, 1 to exit 0 (help/version), -1 on a usage
 * error. */
int tkd__parse_args(options *o, int argc, char **argv);
/* tkd_options.c: the fleet's options checked and completed; 0, or -1 said
 * on stderr. */
int tkd__check_fleet(options *o);
/* tkd_options.c: tkd install -- OPTION...: 0 when the options a unit will
 * start tkd with pass (or this is no install), 2 with a message. */
int tkd__check_install(int argc, char **argv);

#endif /* TK_SERVICE_TKD_INT_H */
