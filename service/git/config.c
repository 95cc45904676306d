/* SPDX-License-Identifier: MIT */
/* The keys ConfigSet may write, and ConfigGet read. git's config is also a list
 * of programs git runs (core.fsmonitor, core.hooksPath, filters, aliases,
 * credential helpers, ssh commands, the pager...) and of files it reads
 * (include.path, core.worktree): a caller who may set any key may run any
 * program as tkd's user. So the rule is an allowlist, not a denylist that must
 * keep up with every git release: identity, branch tracking and how the working
 * tree's files are written. Anything else is refused before git runs.
 *
 * A key or a value git would write but not read back breaks the
 * repository for every later call, this one's repair included: git
 * config itself reads the config first ("branch..remote = x" made every
 * Status and Checkout fail with "bad config variable", "core.filemode =
 * maybe" with "bad boolean config value"). So a key is checked by git's
 * own syntax (config.c, git_config_parse_key) and by what a branch's
 * section names, and a typed key's value by what git will parse, before
 * git runs.
 *
 * ConfigGet, the READ that checks a ConfigSet, is here too: the same
 * allowlist, and libgit2 in process, which runs no program whatever the
 * config names. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git_int.h"

/* What a key's value must be. */
typedef enum config_value {
    VALUE_TEXT,    /* anything (git writes it quoted and escaped) */
    VALUE_NAME,    /* a name: not only the characters git strips */
    VALUE_PATH,    /* an absolute path inside the roots */
    VALUE_BOOL,    /* git's boolean: true/false/yes/no/on/off or an integer */
    VALUE_ENUM,    /* one of the rule's words (without case) */
    VALUE_BOOL_OR, /* a boolean or one of the rule's words */
} config_value;

typedef struct config_rule {
    const char *section;
    /* "branch.<name>.merge": a subsection, and only then; it names a
     * branch, by git's rules for one */
    bool subsection;
    const char *name;
    config_value value;
    /* VALUE_ENUM, VALUE_BOOL_OR: the words, "|"-separated (docs/git.md) */
    const char *words;
} config_rule;

/* docs/git.md lists these; keep the two together. git compares section and
 * variable names without case ("USER.Name" is user.name). */
static const config_rule allowed[] = {
    { "user", false, "name", VALUE_NAME, NULL },
    { "user", false, "email", VALUE_TEXT, NULL },
    { "author", false, "name", VALUE_NAME, NULL },
    { "author", false, "email", VALUE_TEXT, NULL },
    { "committer", false, "name", VALUE_NAME, NULL },
    { "committer", false, "email", VALUE_TEXT, NULL },
    { "branch", true, "remote", VALUE_TEXT, NULL },
    { "branch", true, "pushRemote", VALUE_TEXT, NULL },
    { "branch", true, "merge", VALUE_TEXT, NULL },
    /* git 2.39's pull: "preserve" is refused there, not parsed */
    { "branch", true, "rebase", VALUE_BOOL_OR, "merges|m|interactive|i" },
    { "branch", true, "description", VALUE_TEXT, NULL },
    { "core", false, "autocrlf", VALUE_BOOL_OR, "input" },
    { "core", false, "eol", VALUE_ENUM, "lf|crlf|native" },
    { "core", false, "safecrlf", VALUE_BOOL_OR, "warn" },
    { "core", false, "filemode", VALUE_BOOL, NULL },
    { "core", false, "excludesFile", VALUE_PATH, NULL },
};

static bool keychar(char c)
{
    return isalnum((unsigned char)c) || c == '-';
}

/* git's syntax of a key (config.c, git_config_parse_key): a section of
 * letters, digits and '-'; an optional subsection of anything but a
 * newline (tk: not empty either: git writes `[branch ""]` and then reads
 * every key of it as a bad variable); a name that begins with a letter,
 * then letters, digits and '-'. NULL when key is one, else the rule it
 * breaks. */
static const char *key_syntax(const char *key)
{
    const char *first = strchr(key, '.');
    const char *last = strrchr(key, '.');
    if (first == NULL || first == key)
        return "it needs a section: section.name or "
               "section.subsection.name";
    for (const char *c = key; c < first; c++)
        if (!keychar(*c))
            return "a section holds only letters, digits and '-'";
    if (last != first && last == first + 1)
        return "a subsection may not be empty";
    if (memchr(first, '\n', (size_t)(last - first)) != NULL)
        return "a subsection may not hold a newline";
    if (!isalpha((unsigned char)last[1]))
        return "a name begins with a letter";
    for (const char *c = last + 1; *c != '\0'; c++)
        if (!keychar(*c))
            return "a name holds only letters, digits and '-'";
    return NULL;
}

/* key is "section.name" or "section.subsection.name" (key_syntax checked
 * it). */
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

/* git's boolean (config.c, git_parse_maybe_bool, then git_parse_int):
 * true/yes/on, false/no/off without case, or a decimal integer with an
 * optional k, m or g. The empty value git reads as false is refused: it
 * is a key set to nothing, not a choice. */
static bool is_bool(const char *v)
{
    static const char *const words[] = { "true",  "yes", "on",
                                         "false", "no",  "off" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    const char *d = v + (v[0] == '-' || v[0] == '+');
    if (!isdigit((unsigned char)*d))
        return false;
    errno = 0;
    char *end;
    long n = strtol(v, &end, 10);
    if (errno != 0 || n > INT_MAX || n < INT_MIN)
        return false;
    if (*end != '\0' && strchr("kKmMgG", *end) != NULL)
        end++;
    return *end == '\0';
}

/* git's ident.c strips these from a name's ends ("crud"), and refuses a
 * name of nothing else: every commit fails ("name consists only of
 * disallowed characters") until the name is set again. */
static bool is_name(const char *v)
{
    for (const unsigned char *c = (const unsigned char *)v; *c != '\0'; c++)
        if (*c > ' ' && strchr(".,:;<>\"\\'", *c) == NULL)
            return true;
    return false;
}

/* v is one of words ("a|b|c"), without case. */
static bool is_word(const char *v, const char *words)
{
    size_t n = strlen(v);
    for (const char *w = words; *w != '\0';) {
        size_t len = strcspn(w, "|");
        if (len == n && n > 0 && strncasecmp(v, w, n) == 0)
            return true;
        w += len + (w[len] == '|');
    }
    return false;
}

static bool value_ok(const tkgit *g, rpc_call *call, const char *key,
                     const config_rule *r, const char *value)
{
    const char *expect = NULL;
    switch (r->value) {
    case VALUE_TEXT:
        return true;
    case VALUE_PATH:
        return path_value_ok(g, call, key, value);
    case VALUE_NAME:
        if (is_name(value))
            return true;
        expect = "a name with a letter or digit in it (git's ident rules)";
        break;
    case VALUE_BOOL:
        if (is_bool(value))
            return true;
        expect = "a boolean (true, false, yes, no, on, off or a number)";
        break;
    case VALUE_ENUM:
        if (is_word(value, r->words))
            return true;
        expect = r->words;
        break;
    case VALUE_BOOL_OR:
        if (is_bool(value) || is_word(value, r->words))
            return true;
        expect = r->words;
        break;
    }
    rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_CONFIG_VALUE",
                  "value: %.200s takes %s%s, not \"%.200s\" (git would "
                  "refuse to read the config afterwards)",
                  key, r->value == VALUE_BOOL_OR ? "a boolean or " : "", expect,
                  value);
    return false;
}

bool tkgit__config_key_ok(rpc_call *call, const char *key)
{
    const char *broken = key[0] == '\0' ? "it is empty" : key_syntax(key);
    if (broken != NULL) {
        rpc_call_fail(call, RPC_INVALID_ARGUMENT, "BAD_CONFIG_KEY",
                      "key: \"%.200s\" is not a config key by git's rules: "
                      "%s",
                      key, broken);
        return false;
    }
    return true;
}

bool tkgit__config_allowed(const tkgit *g, rpc_call *call, const char *key,
                           const char *value)
{
    const config_rule *r = rule_for(key);
    if (r == NULL) {
        rpc_call_fail(
            call, RPC_PERMISSION_DENIED, "CONFIG_KEY_NOT_ALLOWED",
            "ConfigSet may not set %.200s: only the keys of its allowlist "
            "(identity, branch tracking, line endings; docs/git.md lists "
            "them), since a key that names a program, a hook, a filter, an "
            "include, the work tree, credentials, ssh or an alias would "
            "let a caller choose what tkd runs",
            key);
        return false;
    }
    return value_ok(g, call, key, r, value);
}

/* The same allowlist for a read: the other keys hold what a caller has no
 * business reading through tkd (a remote's url with its password,
 * http.extraHeader's token, a credential helper's arguments), and what
 * ConfigSet cannot set, ConfigGet has no ConfigSet to check. */
bool tkgit__config_readable(rpc_call *call, const char *key)
{
    if (rule_for(key) != NULL)
        return true;
    rpc_call_fail(call, RPC_PERMISSION_DENIED, "CONFIG_KEY_NOT_ALLOWED",
                  "ConfigGet may not read %.200s: only the keys ConfigSet "
                  "may set (identity, branch tracking, line endings; "
                  "docs/git.md lists them), since the others may hold "
                  "credentials (a remote's url, http.extraHeader)",
                  key);
    return false;
}

bool tkgit__config_branch_ok(rpc_call *call, const char *key)
{
    const char *first = strchr(key, '.');
    const char *last = strrchr(key, '.');
    if (last == first)
        return true;
    char *branch =
        rpc_call_strndup(call, first + 1, (size_t)(last - first - 1));
    return tkgit__branch_ok(call, branch, "key's branch");
}

/* ---- ConfigGet ----------------------------------------------------------- */

/* key's last value in the repository's own config (libgit2's LOCAL level:
 * the file ConfigSet writes, and what it includes), into out. One
 * libgit2 call that reads a small file: the cancel and deadline are
 * checked after it. 0, or -1 with the call failed. */
static int read_local(rpc_call *call, const tkgit_repo *repo, const char *key,
                      Tk__V1__GitConfigGetReply *out)
{
    git_config *all = NULL;
    git_config *local = NULL;
    git_config_entry *e = NULL;
    int rv = git_repository_config(&all, repo->repo);
    if (rv == 0)
        rv = git_config_open_level(&local, all, GIT_CONFIG_LEVEL_LOCAL);
    if (rv == 0)
        rv = git_config_get_entry(&e, local, key);
    if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
        rpc_call_fail_stopped(call);
        rv = -1;
    } else if (rv == GIT_ENOTFOUND) {
        rpc_call_fail(call, RPC_NOT_FOUND, "CONFIG_KEY_NOT_SET",
                      "%.200s is not set in the repository's config (set it "
                      "with Git/ConfigSet)",
                      key);
    } else if (rv < 0) {
        tkgit__fail_libgit2(call, repo->repo, TKGIT_STEP_CONFIG, rv, NULL);
    } else {
        /* A key with no "=" ("[core] filemode") has no value: git reads
         * it as true, and prints nothing for it, as here. (e is set when
         * rv is 0; the analyzer cannot know libgit2 returns no more.) */
        const char *v = e != NULL && e->value != NULL ? e->value : "";
        out->value = rpc_call_bytes(call, v, strlen(v));
    }
    git_config_entry_free(e);
    git_config_free(local);
    git_config_free(all);
    return rv < 0 ? -1 : 0;
}

void tkgit__config_get(void *svc, rpc_call *call,
                       const ProtobufCMessage *request, ProtobufCMessage *reply)
{
    const Tk__V1__GitConfigGetRequest *in =
        (const Tk__V1__GitConfigGetRequest *)request;
    if (!tkgit__config_key_ok(call, in->key) ||
        !tkgit__config_readable(call, in->key))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, in->repo) != 0)
        return;
    if (tkgit__config_branch_ok(call, in->key)) {
        rpc_call_set_tool(call, "libgit2");
        obs_metric_add(OBS_M_GIT_READS_LIBGIT2, 1);
        read_local(call, &repo, in->key, (Tk__V1__GitConfigGetReply *)reply);
    }
    tkgit__close(&repo);
}
