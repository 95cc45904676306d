/* SPDX-License-Identifier: MIT */
/* What a READ's git may take from the repository it reads: no program.
 *
 * git runs programs that configuration names: core.fsmonitor at the start
 * of a status, a filter driver's clean command on every work-tree file it
 * hashes (status and diff of a file whose stat data changed), and more
 * that tk's argv turns off for every run (argv.c). The repository's own
 * configuration (its config file, config.worktree, and what they include,
 * a tracked file of the work tree among them) is the repository's
 * content, not its owner's word: a READ's git gets, over every such
 * setting, the value the owner's configuration gives (tkd's user's global
 * and system files), or the one that runs nothing. So a READ runs the
 * owner's fsmonitor and the owner's filter drivers (git-lfs, installed in
 * ~/.gitconfig: without them a file stored through one would read as
 * modified), and never one the repository names.
 *
 * The settings go in GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n> and
 * GIT_CONFIG_VALUE_<n> (git 2.31): any subsection name, '=' included, is
 * one key there, where "-c key=value" would split it. git passes them on
 * to the git processes it starts (a submodule's status among them).
 *
 * libgit2 1.5 reads the config files as git does, includes and
 * "includeIf.gitdir:"/"onbranch:" too, but not config.worktree (it refuses
 * a repository of format 1 with that extension; git honours it in format
 * 0 as well) nor "includeIf.hasconfig:": config.worktree is read here, and
 * a repository whose own config includes a file on a condition libgit2
 * does not evaluate is refused, as tk cannot see what that file names. */
#include <stdio.h>
#include <string.h>

#include "git_int.h"

/* A filter driver's settings and the value of each that runs nothing: the
 * three commands (an empty one is none), and whether its failure fails
 * git (with no command, "required" would fail every file). */
static const struct {
    const char *key, *off;
} driver_keys[] = {
    { "clean", "" },
    { "smudge", "" },
    { "process", "" },
    { "required", "false" },
};
#define N_DRIVER_KEYS (sizeof driver_keys / sizeof *driver_keys)
/* The filter drivers a repository's config may define for a READ to run:
 * each costs git four settings in its environment, and each setting
 * seen is looked up among them. A config that defines more (no project
 * needs more than a handful: git-lfs is one) is refused, so that its
 * size cannot hold a worker in a scan no cancel reaches. */
#define MAX_DRIVERS 64

/* The levels of the owner's configuration, the one git reads last first. */
static const git_config_level_t owner_levels[] = {
    GIT_CONFIG_LEVEL_GLOBAL,
    GIT_CONFIG_LEVEL_XDG,
    GIT_CONFIG_LEVEL_SYSTEM,
    GIT_CONFIG_LEVEL_PROGRAMDATA,
};
#define N_OWNER_LEVELS (sizeof owner_levels / sizeof *owner_levels)

typedef struct setting {
    const char *key, *value;
} setting;

/* The settings being built, in the call's arena. */
typedef struct settings {
    rpc_call *call;
    git_config *cfg; /* the repository's, every level */
    setting *v;
    size_t n, cap;
    size_t drivers;
} settings;

/* key and value outlive the call: literals, or in its arena. */
static void add(settings *s, const char *key, const char *value)
{
    s->v = tkgit__grow(s->call, s->v, s->n, &s->cap, sizeof *s->v);
    s->v[s->n].key = key;
    s->v[s->n++].value = value;
}

/* What the owner's configuration says of key, or NULL. */
static const char *owner_value(settings *s, const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; i < N_OWNER_LEVELS && found == NULL; i++) {
        git_config *level = NULL;
        git_config_entry *e = NULL;
        if (git_config_open_level(&level, s->cfg, owner_levels[i]) == 0 &&
            git_config_get_entry(&e, level, key) == 0)
            /* "[core] fsmonitor" without a value: git's true */
            found =
                rpc_call_strdup(s->call, e->value != NULL ? e->value : "true");
        git_config_entry_free(e);
        git_config_free(level);
    }
    git_error_clear(); /* not set at a level is no error */
    return found;
}

/* key set to the owner's value, or to off. */
static void owners_or(settings *s, const char *key, const char *off)
{
    const char *v = owner_value(s, key);
    add(s, key, v != NULL ? v : off);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The driver a filter setting names ("filter.<driver>.clean"): its length
 * (it starts at name + 7), or 0 for another key. */
static size_t driver_of(const char *name)
{
    if (strncmp(name, "filter.", 7) != 0)
        return 0;
    const char *dot = strrchr(name + 7, '.');
    if (dot == NULL || dot == name + 7)
        return 0;
    for (size_t i = 0; i < N_DRIVER_KEYS; i++)
        if (strcmp(dot + 1, driver_keys[i].key) == 0)
            return (size_t)(dot - name - 7);
    return 0;
}

/* Whether the driver (len bytes at driver) has its settings already:
 * each driver's first is "filter.<driver>.clean". Nothing is allocated
 * for a driver seen before, however often the config names it. */
static bool added(const settings *s, const char *driver, size_t len)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *k = s->v[i].key;
        if (strncmp(k, "filter.", 7) == 0 && strncmp(k + 7, driver, len) == 0 &&
            strcmp(k + 7 + len, ".clean") == 0)
            return true;
    }
    return false;
}

/* A driver the repository names: its four settings, the owner's or off,
 * once. 0, or -1 with the call failed (more than MAX_DRIVERS). */
static int override_driver(settings *s, const char *driver, size_t len)
{
    if (added(s, driver, len))
        return 0;
    if (++s->drivers > MAX_DRIVERS) {
        rpc_call_fail(s->call, RPC_PERMISSION_DENIED, "UNSAFE_REPOSITORY",
                      "repo: its config defines more than %d filter "
                      "drivers",
                      MAX_DRIVERS);
        return -1;
    }
    for (size_t i = 0; i < N_DRIVER_KEYS; i++) {
        size_t n = len + 32;
        char *key = rpc_call_alloc(s->call, n);
        snprintf(key, n, "filter.%.*s.%s", (int)len, driver,
                 driver_keys[i].key);
        owners_or(s, key, driver_keys[i].off);
    }
    return 0;
}

/* "includeIf.<condition>.path" whose condition libgit2 1.5 does not
 * evaluate (git's "hasconfig:"): what it includes is unknown to tk. */
static bool unseen_include(const char *name)
{
    static const char *const known[] = { "gitdir:", "gitdir/i:", "onbranch:" };
    if (strncmp(name, "includeif.", 10) != 0 || !ends_with(name, ".path"))
        return false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strncmp(name + 10, known[i], strlen(known[i])) == 0)
            return false;
    return true;
}

/* Every setting of one file of the repository's own configuration (and
 * what it includes). 0, or -1 with the call failed. */
static int scan(settings *s, git_config *level)
{
    git_config_iterator *it = NULL;
    git_config_entry *e;
    int rv = git_config_iterator_new(&it, level);
    while (rv == 0 && (rv = git_config_next(&e, it)) == 0) {
        if (unseen_include(e->name)) {
            rpc_call_fail(s->call, RPC_PERMISSION_DENIED, "UNSAFE_REPOSITORY",
                          "repo: its config includes a file on a condition "
                          "tk cannot evaluate (%.200s), so tk cannot tell "
                          "what programs that file names",
                          e->name);
            git_config_iterator_free(it);
            return -1;
        }
        size_t driver = driver_of(e->name);
        if (driver > 0 && override_driver(s, e->name + 7, driver) != 0) {
            git_config_iterator_free(it);
            return -1;
        }
    }
    git_config_iterator_free(it);
    if (rv == GIT_ITEROVER)
        return 0;
    rpc_call_fail(s->call, RPC_UNKNOWN, "LIBGIT2_ERROR",
                  "libgit2: reading the repository's config (%d)", rv);
    return -1;
}

/* config.worktree, which git reads when extensions.worktreeConfig is set
 * and libgit2 1.5 does not: scanned as the repository's own. */
static int scan_worktree_config(settings *s, git_repository *repo,
                                git_config *local)
{
    int on = 0;
    if (git_config_get_bool(&on, local, "extensions.worktreeconfig") != 0 ||
        !on) {
        git_error_clear();
        return 0;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%sconfig.worktree", git_repository_path(repo));
    git_config *wt = NULL;
    int rv = git_config_new(&wt);
    if (rv == 0)
        rv = git_config_add_file_ondisk(wt, path, GIT_CONFIG_LEVEL_LOCAL, repo,
                                        0);
    if (rv == 0)
        rv = scan(s, wt);
    else
        rpc_call_fail(s->call, RPC_UNKNOWN, "LIBGIT2_ERROR",
                      "libgit2: reading %.200s (%d)", path, rv);
    git_config_free(wt);
    return rv == 0 ? 0 : -1;
}

/* The settings of a READ's git for repo; 0, or -1 with the call failed. */
static int read_settings(settings *s, git_repository *repo)
{
    if (git_repository_config(&s->cfg, repo) != 0) {
        rpc_call_fail(s->call, RPC_UNKNOWN, "LIBGIT2_ERROR",
                      "libgit2: the repository's config: %s",
                      git_error_last() != NULL ? git_error_last()->message
                                               : "");
        return -1;
    }
    /* Always, not only where the repository sets it: a submodule's git,
     * which a status starts, gets the same settings. */
    owners_or(s, "core.fsmonitor", "false");
    git_config *local = NULL;
    int rv = 0;
    if (git_config_open_level(&local, s->cfg, GIT_CONFIG_LEVEL_LOCAL) == 0)
        rv = scan(s, local) == 0 ? scan_worktree_config(s, repo, local) : -1;
    git_error_clear(); /* no config file of its own: nothing to scan */
    git_config_free(local);
    git_config_free(s->cfg);
    return rv;
}

/* "GIT_CONFIG_<what>_<i>=<text>" in the call's arena. */
static const char *env_entry(rpc_call *call, const char *what, size_t i,
                             const char *text)
{
    size_t len = strlen(text) + 48;
    char *e = rpc_call_alloc(call, len);
    snprintf(e, len, "GIT_CONFIG_%s_%zu=%s", what, i, text);
    return e;
}

const char **tkgit__read_env(rpc_call *call, git_repository *repo,
                             const char *const *base)
{
    settings s = { .call = call };
    if (read_settings(&s, repo) != 0)
        return NULL;
    size_t n_base = 0;
    while (base[n_base] != NULL)
        n_base++;
    const char **env =
        rpc_call_alloc(call, (n_base + 2 * s.n + 2) * sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n_base; i++)
        env[k++] = base[i];
    char *count = rpc_call_alloc(call, 48);
    snprintf(count, 48, "GIT_CONFIG_COUNT=%zu", s.n);
    env[k++] = count;
    for (size_t i = 0; i < s.n; i++) {
        env[k++] = env_entry(call, "KEY", i, s.v[i].key);
        env[k++] = env_entry(call, "VALUE", i, s.v[i].value);
    }
    env[k] = NULL;
    return env;
}
