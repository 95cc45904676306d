/* SPDX-License-Identifier: MIT */
/* tkd: the tk worker daemon. Takes the command line (tkd_options.c),
 * prepares the default socket directory, registers the services and serves
 * until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control.h"
#include "fleet/fleet.h"
#include "git/git.h"
#include "orders/orders.h"
#include "common/common.h"
#include "proc/proc.h"
#include "services/services.h"
#include "roots/roots.h"
#include "rpc/rpc.h"
#include "search/search.h"
#include "tkd_int.h"

/* The exit status when calls outlived the shutdown grace (--help). */
#define EXIT_OUTLIVED 3

/* The default socket's directory: created 0700, and refused when someone
 * else owns it or others may enter it. */
static int prepare_socket_dir(const char *url)
{
    if (strncmp(url, "ipc://", 6) != 0)
        return 0;
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s", url + 6);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        char ebuf[128];
        fprintf(stderr, "tkd: cannot create %s: %s\n", dir,
                tkc_strerror(errno, ebuf, sizeof ebuf));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tkd: %s is not a directory\n", dir);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        fprintf(stderr,
                "tkd: %s must be a 0700 directory owned by uid %u; fix it "
                "or pass --listen\n",
                dir, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

/* --listen, or the default address (whose directory tkd prepares). */
static int set_listen(options *o)
{
    if (o->n_listen == 0) {
        if (tkc_default_address(o->default_addr, sizeof o->default_addr) != 0) {
            fprintf(stderr, "tkd: the default socket path is too long; "
                            "pass --listen\n");
            return -1;
        }
        const char *env_addr = getenv("TK_ADDR");
        bool from_env = env_addr != NULL && env_addr[0] != '\0';
        if (!from_env && prepare_socket_dir(o->default_addr) != 0)
            return -1;
        o->listen[o->n_listen++] = o->default_addr;
    }
    o->rpc.listen = o->listen;
    o->rpc.n_listen = o->n_listen;
    o->rpc.listen_read_only = o->listen_ro;
    o->rpc.n_listen_read_only = o->n_listen_ro;
    return 0;
}

/* tkd's server and its services; all NULL is none made yet. */
typedef struct tkd_daemon {
    rpc_server *srv;
    orders *ord;
    tkgit *git;
    services *reg;
    search *srch;
    fleet *fl;          /* NULL: no member of a fleet */
    bool node_id_taken; /* fleet_join refused the id */
} tkd_daemon;

/* Makes the server and each service, registers them, and starts serving:
 * 0, or non-zero with err set (what was made is in d, for daemon_fini). */
static int daemon_start(tkd_daemon *d, options *o, char *err, size_t errlen)
{
    search_config scfg = { .roots = o->roots, .slots = o->search_slots };
    int rv = rpc_server_new(&d->srv, &o->rpc, err, errlen);
    if (rv == 0)
        rv = control_register(d->srv, err, errlen);
    if (rv == 0)
        rv = orders_new(&d->ord, &o->orders, err, errlen);
    if (rv == 0)
        rv = orders_register(d->ord, d->srv, err, errlen);
    if (rv == 0)
        rv = tkgit_new(&d->git, o->roots, NULL, err, errlen);
    if (rv == 0)
        rv = tkgit_register(d->git, d->srv, err, errlen);
    if (rv == 0)
        rv = services_new(&d->reg, NULL, err, errlen);
    if (rv == 0)
        rv = services_register(d->reg, d->srv, err, errlen);
    if (rv == 0)
        rv = search_new(&d->srch, &scfg, err, errlen);
    if (rv == 0)
        rv = search_register(d->srch, d->srv, err, errlen);
    /* Joined before the listeners: an id another tkd holds stops tkd
     * before it serves anything. */
    if (rv == 0 && o->fleet.node_id != NULL) {
        rv = fleet_new(&d->fl, &o->fleet, err, errlen);
        if (rv == 0)
            rv = fleet_join(d->fl, err, errlen);
        d->node_id_taken = rv == -EEXIST;
        if (rv == 0)
            fleet_register(d->fl, d->srv);
    }
    if (rv == 0)
        rv = rpc_server_start(d->srv, err, errlen);
    if (rv == 0 && d->fl != NULL)
        rv = fleet_start(d->fl, err, errlen);
    return rv;
}

static void daemon_fini(tkd_daemon *d)
{
    /* The server first: no call runs in a service once it is freed. */
    rpc_server_free(d->srv);
    orders_free(d->ord);
    tkgit_free(d->git);
    services_free(d->reg);
    search_free(d->srch);
    /* After the server: no ListNodes runs; its row is deleted last. */
    fleet_free(d->fl);
}

/* In JSON, the values each line names are members of their own too. */
static void log_serving(const tkd_daemon *d, const options *o)
{
    for (size_t i = 0; rpc_server_bound_url(d->srv, i) != NULL; i++) {
        const char *url = rpc_server_bound_url(d->srv, i);
        unsigned limit = rpc_server_listener_limit(d->srv, i);
        bool ro = i >= o->n_listen;
        obs_field f[] = { OBS_STR("version", TKD_VERSION), OBS_STR("url", url),
                          OBS_INT("read_only", ro),
                          OBS_INT("max_connections", limit) };
        obs_log_fields(OBS_LOG_INFO, f, sizeof f / sizeof f[0],
                       "tkd %s listening on %s%s (%u connections at most)",
                       TKD_VERSION, url, ro ? " (reads only)" : "", limit);
    }
    const char *murl = rpc_server_metrics_url(d->srv);
    if (murl != NULL) {
        unsigned limit = rpc_server_metrics_limit(d->srv);
        obs_field f[] = { OBS_STR("metrics_url", murl),
                          OBS_INT("max_connections", limit) };
        obs_log_fields(OBS_LOG_INFO, f, sizeof f / sizeof f[0],
                       "metrics for Prometheus at %s (%u connections at most)",
                       murl, limit);
    }
    for (size_t i = 0; i < roots_count(o->roots); i++) {
        obs_field f[] = { OBS_STR("root", roots_get(o->roots, i)) };
        obs_log_fields(OBS_LOG_INFO, f, 1, "root %s", roots_get(o->roots, i));
    }
    rpc_fd_log_capacity(d->srv);
}

int main(int argc, char **argv)
{
    /* The environment every child starts from, before any thread exists. */
    proc_init();
    if (tkd__check_install(argc, argv) != 0)
        return 2;
    int cli = services_cli(argc, argv); /* tkd install, tkd uninstall */
    if (cli >= 0)
        return cli;
    /* Before any thread exists, so every thread inherits the mask. */
    if (rpc_block_stop_signals() != 0) {
        fprintf(stderr, "tkd: cannot block signals\n");
        return 1;
    }
    options o;
    memset(&o, 0, sizeof o);
    o.who = "tkd";
    rpc_config_init(&o.rpc);
    o.rpc.version = TKD_VERSION;
    int rv = tkd__parse_args(&o, argc, argv);
    if (rv != 0)
        return rv > 0 ? 0 : 2;
    if (o.orders.dsn == NULL)
        o.orders.dsn = getenv("TK_PG_DSN");
    /* An idle tkd holds no database connection, nor libpq (pq/): the
     * first Orders call connects (DESIGN.md, "Start-up and idle"). */
    o.orders.connect_on_first_call = true;
    char err[512] = "";
    if (roots_new(&o.roots, o.root_args, o.n_roots, err, sizeof err) != 0) {
        fprintf(stderr, "tkd: %s\n", err);
        return 2;
    }
    int status = 1;
    tkd_daemon d = { 0 };
    if (tkd__check_fleet(&o) != 0) {
        status = 2;
        goto done;
    }
    if (set_listen(&o) != 0)
        goto done;
    /* Before any thread exists (it forks), and before the listeners
     * open: the guard keeps no descriptor of tkd's. */
    if ((rv = proc_guard_start()) != 0) {
        char ebuf[128];
        fprintf(stderr, "tkd: cannot start the guard of READs' processes: %s\n",
                tkc_strerror(-rv, ebuf, sizeof ebuf));
        goto done;
    }
    /* Before anything opens descriptors: every connection, tool and
     * repository takes some, and the soft limit is often far below the
     * hard one (256 or 1024). */
    rpc_fd_limit_raise();
    if (daemon_start(&d, &o, err, sizeof err) != 0) {
        fprintf(stderr, "tkd: %s\n", err);
        if (d.node_id_taken)
            status = 2;
        goto done;
    }
    log_serving(&d, &o);
    /* After the listener: says whether a database is configured; the
     * first Orders call connects to it. */
    orders_start(d.ord);
    rv = rpc_serve_until_signal(d.srv);
    status = rv == 0 ? 0 : rv > 0 ? EXIT_OUTLIVED : 1;
done:
    daemon_fini(&d);
    roots_free(o.roots);
    return status;
}
