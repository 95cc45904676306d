/* The keys ConfigSet may write. git's config is also a list of programs
 * git runs (core.fsmonitor, core.hooksPath, filters, aliases, credential
 * helpers, ssh commands, the pager...) and of files it reads (include.path,
 * core.worktree): a caller who may set any key may run any program as
 * tkd's user. So the rule is an allowlist, not a denylist that must keep
 * up with every git release: identity, branch tracking and how the working
 * tree's files are written. Anything else is refused before git runs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git_int.h"

typedef struct config_rule {
    const char *section;
    bool subsection; /* "branch.<name>.merge": any subsection, and only then */
    const char *name;
    bool path; /* the value is a path: it must lie inside the roots */
} config_rule;

/* README.md lists these; keep the two together. git compares section and
 * variable names without case ("USER.Name" is user.name). */
static const config_rule allowed[] = {
    { "user", false, "name", false },
    { "user", false, "email", false },
    { "author", false, "name", false },
    { "author", false, "email", false },
    { "committer", false, "name", false },
    { "committer", false, "email", false },
    { "branch", true, "remote", false },
    { "branch", true, "pushRemote", false },
    { "branch", true, "merge", false },
    { "branch", true, "rebase", false },
    { "branch", true, "description", false },
    { "core", false, "autocrlf", false },
    { "core", false, "eol", false },
    { "core", false, "safecrlf", false },
    { "core", false, "filemode", false },
    { "core", false, "excludesFile", true },
};

/* key is "section.name" or "section.subsection.name" (key_ok checked the
 * dots). */
static const config_rule *rule_for(const char *key)
{
    const char *first = strchr(key, '.');
    const char *last = strrchr(key, '.');
    size_t section_len = (size_t)(first - key);
    bool has_sub = last != first;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        const config_rule *r = &allowed[i];
        if (strlen(r->section) == section_len &&
            strncasecmp(key, r->section, section_len) == 0 &&
            r->subsection == has_sub && strcasecmp(last + 1, r->name) == 0)
            return r;
    }
    return NULL;
}

/* A path value: absolute, and resolving (or its parent, for a file not
 * made yet) inside the roots. */
static bool path_value_ok(const tkgit *g, rpc_call *call, const char *key,
                          const char *value)
{
    if (value[0] != '/') {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_PATH",
                      "%.200s takes an absolute path inside a --root", key);
        return false;
    }
    const char *resolved;
    return tkgit__resolve_new_path(g, call, value, &resolved) == 0;
}

bool tkgit__config_allowed(const tkgit *g, rpc_call *call, const char *key,
                           const char *value)
{
    const config_rule *r = rule_for(key);
    if (r == NULL) {
        rpc_call_fail(
            call, RPC_PERMISSION_DENIED, "CONFIG_KEY_NOT_ALLOWED",
            "ConfigSet may not set %.200s: only the keys of its allowlist "
            "(identity, branch tracking, line endings; README.md lists "
            "them), since a key that names a program, a hook, a filter, an "
            "include, the work tree, credentials, ssh or an alias would "
            "let a caller choose what tkd runs",
            key);
        return false;
    }
    return !r->path || path_value_ok(g, call, key, value);
}
