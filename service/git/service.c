/* tk.v1.Git: the method table and the service's life. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

void tkgit_config_init(tkgit_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->read_timeout_ms = TKGIT_DEFAULT_READ_TIMEOUT_MS;
    cfg->read_ceiling_ms = TKGIT_DEFAULT_READ_CEILING_MS;
    cfg->write_timeout_ms = TKGIT_DEFAULT_WRITE_TIMEOUT_MS;
}

typedef struct method_def {
    const char *name;
    const ProtobufCMessageDescriptor *request, *reply;
    rpc_kind kind;
    rpc_handler handler;
} method_def;

static const method_def defs[TKGIT_N_METHODS] = {
    { "tk.v1.Git/Status", &tk__v1__git_status_request__descriptor,
      &tk__v1__git_status_reply__descriptor, RPC_READ, tkgit__status },
    { "tk.v1.Git/Log", &tk__v1__git_log_request__descriptor,
      &tk__v1__git_log_reply__descriptor, RPC_READ, tkgit__log },
    { "tk.v1.Git/Diff", &tk__v1__git_diff_request__descriptor,
      &tk__v1__git_diff_reply__descriptor, RPC_READ, tkgit__diff },
    { "tk.v1.Git/RevParse", &tk__v1__git_rev_parse_request__descriptor,
      &tk__v1__git_rev_parse_reply__descriptor, RPC_READ, tkgit__rev_parse },
    { "tk.v1.Git/Grep", &tk__v1__git_grep_request__descriptor,
      &tk__v1__git_grep_reply__descriptor, RPC_READ, tkgit__grep },
    { "tk.v1.Git/Commit", &tk__v1__git_commit_request__descriptor,
      &tk__v1__git_commit_reply__descriptor, RPC_WRITE, tkgit__commit },
    { "tk.v1.Git/Checkout", &tk__v1__git_checkout_request__descriptor,
      &tk__v1__git_checkout_reply__descriptor, RPC_WRITE, tkgit__checkout },
    { "tk.v1.Git/WorktreeAdd", &tk__v1__git_worktree_add_request__descriptor,
      &tk__v1__git_worktree_add_reply__descriptor, RPC_WRITE,
      tkgit__worktree_add },
    { "tk.v1.Git/ConfigSet", &tk__v1__git_config_set_request__descriptor,
      &tk__v1__git_config_set_reply__descriptor, RPC_WRITE, tkgit__config_set },
};

static void fill_methods(tkgit *g)
{
    for (size_t i = 0; i < TKGIT_N_METHODS; i++) {
        rpc_method *m = &g->methods[i];
        m->name = defs[i].name;
        m->request = defs[i].request;
        m->reply = defs[i].reply;
        m->kind = defs[i].kind;
        m->handler = defs[i].handler;
        if (defs[i].kind == RPC_READ) {
            m->default_timeout_ms = g->cfg.read_timeout_ms;
            m->ceiling_ms = g->cfg.read_ceiling_ms;
        } else {
            m->default_timeout_ms = g->cfg.write_timeout_ms;
            m->ceiling_ms = g->cfg.write_timeout_ms;
        }
    }
}

static void apply_defaults(tkgit_config *cfg)
{
    if (cfg->read_ceiling_ms == 0)
        cfg->read_ceiling_ms = TKGIT_DEFAULT_READ_CEILING_MS;
    if (cfg->read_timeout_ms == 0)
        cfg->read_timeout_ms = TKGIT_DEFAULT_READ_TIMEOUT_MS;
    if (cfg->read_timeout_ms > cfg->read_ceiling_ms)
        cfg->read_timeout_ms = cfg->read_ceiling_ms;
    if (cfg->write_timeout_ms == 0)
        cfg->write_timeout_ms = TKGIT_DEFAULT_WRITE_TIMEOUT_MS;
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
    bool libgit2 = false;
    g->roots = rs;
    if (cfg != NULL)
        g->cfg = *cfg;
    apply_defaults(&g->cfg);
    const char *name = g->cfg.git != NULL ? g->cfg.git : "git";
    int rv = proc_find_program(g->git, sizeof g->git, name, NULL);
    if (rv == -ENOENT) {
        /* Not fatal: the methods that need it answer TOOL_NOT_FOUND, and
         * tkd's other services (and RevParse, Log) work without it. */
        g->git[0] = '\0';
        rpc_log(RPC_LOG_WARN,
                "no git program \"%s\" on PATH: git CLI "
                "methods will answer TOOL_NOT_FOUND",
                name);
        rv = 0;
    } else if (rv != 0) {
        snprintf(err, errlen, "no git program \"%s\" (name too long)", name);
        goto done;
    }
    /* Once per service: libgit2 counts its initialisations. */
    if (git_libgit2_init() < 0) {
        snprintf(err, errlen, "libgit2 failed to initialise");
        rv = -EIO;
        goto done;
    }
    libgit2 = true;
    /* Workers keep repositories open (cache.c), and with them libgit2's
     * cache of parsed objects, shared by all of them: bound it below
     * libgit2's default of 256 MiB. */
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE,
                     (ssize_t)TKGIT_OBJECT_CACHE_BYTES);
    if (tkgit__cache_init(g) != 0) {
        snprintf(err, errlen, "no thread-local key for the repository cache");
        rv = -EAGAIN;
        goto done;
    }
    fill_methods(g);
    *out = g;
    g = NULL;
done:
    if (g != NULL) {
        if (libgit2)
            git_libgit2_shutdown();
        free(g);
    }
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
    git_libgit2_shutdown();
    free(g);
}
