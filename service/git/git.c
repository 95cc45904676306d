/* SPDX-License-Identifier: MIT */
/* tk.v1.Git: the method table (tk/v1/git.proto's, with the config's
 * timeouts) and the service's life. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

void tkgit_config_init(tkgit_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
}

/* As tk/v1/git.proto declares them; the handlers are tkgit__<method>. */
static const rpc_method declared[TKGIT_N_METHODS] = { TK_V1_GIT__METHODS(
    RPC_METHOD_ROW, tkgit__) };

/* The declared table, with the config's timeouts where it gives one. */
static void fill_methods(tkgit *g)
{
    const tkgit_config *cfg = &g->cfg;
    g->read_ceiling_ms = 0;
    for (size_t i = 0; i < TKGIT_N_METHODS; i++) {
        rpc_method *m = &g->methods[i];
        *m = declared[i];
        if (m->kind == RPC_READ) {
            if (cfg->read_timeout_ms != 0)
                m->default_timeout_ms = cfg->read_timeout_ms;
            if (cfg->read_ceiling_ms != 0)
                m->ceiling_ms = cfg->read_ceiling_ms;
            if (m->default_timeout_ms > m->ceiling_ms)
                m->default_timeout_ms = m->ceiling_ms;
            if (m->ceiling_ms > g->read_ceiling_ms)
                g->read_ceiling_ms = m->ceiling_ms;
        } else if (cfg->write_timeout_ms != 0) {
            m->default_timeout_ms = cfg->write_timeout_ms;
            m->ceiling_ms = cfg->write_timeout_ms;
        }
    }
}

int tkgit_new(tkgit **out, const roots *rs, const tkgit_config *cfg, char *err,
              size_t errlen)
{
    *out = NULL;
    tkgit *g = calloc(1, sizeof *g);
    if (g == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    g->roots = rs;
    if (cfg != NULL)
        g->cfg = *cfg;
    const char *name = g->cfg.git != NULL ? g->cfg.git : "git";
    int rv = proc_find_program(g->git, sizeof g->git, name, NULL);
    if (rv == -ENOENT) {
        /* Not fatal: the methods that need it answer TOOL_NOT_FOUND, and
         * tkd's other services (and RevParse, Log) work without it. */
        g->git[0] = '\0';
        /* The program's name only: PATH is the environment's. */
        const obs_field f[] = { OBS_STR("program", name) };
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "no git program \"%s\" on PATH: git CLI methods will "
                       "answer TOOL_NOT_FOUND",
                       name);
        rv = 0;
    } else if (rv != 0) {
        snprintf(err, errlen, "no git program \"%s\" (name too long)", name);
        goto done;
    }
    if (tkgit__cache_init(g) != 0) {
        snprintf(err, errlen, "no thread-local key for the repository cache");
        rv = -EAGAIN;
        goto done;
    }
    pthread_mutex_init(&g->libgit2_mu, NULL);
    atomic_init(&g->libgit2_inits, 0);
    fill_methods(g);
    *out = g;
    g = NULL;
done:
    free(g);
    return rv;
}

int tkgit_register(tkgit *g, rpc_server *srv, char *err, size_t errlen)
{
    return rpc_server_add_service(srv, g, g->methods, TKGIT_N_METHODS, err,
                                  errlen);
}

void tkgit_free(tkgit *g)
{
    if (g == NULL)
        return;
    tkgit__cache_fini(g);
    if (atomic_load(&g->libgit2_inits) > 0)
        git_libgit2_shutdown();
    pthread_mutex_destroy(&g->libgit2_mu);
    free(g);
}

unsigned tkgit__test_libgit2_inits(const tkgit *g)
{
    return atomic_load(&g->libgit2_inits);
}
