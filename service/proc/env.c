/* SPDX-License-Identifier: MIT */
/* The environment of children: a snapshot of tkd's own, scrubbed to an
 * allowlist once, plus what each run adds; and resolving a program name on
 * a PATH. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
/* No macOS header declares environ; Apple's crt_externs.h gives it to
 * code that may end up in a library (environ(7)). */
#include <crt_externs.h>
#define environ (*_NSGetEnviron())
#endif

#include "proc_int.h"

static const char *const allowlist[] = { PROC_ENV_ALLOWLIST };
#define N_ALLOWED (sizeof allowlist / sizeof *allowlist)

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t snapshot_once = PTHREAD_ONCE_INIT;
static char *snapshot[N_ALLOWED + 1];
static size_t n_snapshot;

static bool allowed(const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (eq == NULL)
        return false;
    size_t n = (size_t)(eq - entry);
    for (size_t i = 0; i < N_ALLOWED; i++)
        if (strlen(allowlist[i]) == n && memcmp(allowlist[i], entry, n) == 0)
            return true;
    return false;
}

/* Takes the allowlisted entries of environ. An entry that cannot be copied
 * (no memory at start-up) is left out: scrubbing errs towards less. */
static void take_snapshot(void)
{
    for (char **e = environ; *e != NULL && n_snapshot < N_ALLOWED; e++) {
        if (!allowed(*e))
            continue;
        char *copy = strdup(*e);
        if (copy != NULL)
            snapshot[n_snapshot++] = copy;
    }
    snapshot[n_snapshot] = NULL;
}

/* The length of an entry's name: up to '=' or the end ("K" removes K). */
static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq != NULL ? (size_t)(eq - entry) : strlen(entry);
}

static bool same_name(const char *a, const char *b)
{
    size_t n = name_len(a);
    return n == name_len(b) && memcmp(a, b, n) == 0;
}

static bool named_in(const char *entry, const char *const *list)
{
    for (size_t i = 0; list != NULL && list[i] != NULL; i++)
        if (same_name(entry, list[i]))
            return true;
    return false;
}

void proc_init(void)
{
    pthread_once(&snapshot_once, take_snapshot);
}

char **proc__child_env(const proc_opts *opts)
{
    pthread_once(&snapshot_once, take_snapshot);
    size_t n_env = 0;
    while (opts->env != NULL && opts->env[n_env] != NULL)
        n_env++;
    char **envp = calloc(n_snapshot + n_env + 1, sizeof *envp);
    if (envp == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_snapshot; i++)
        if (!named_in(snapshot[i], opts->env))
            envp[k++] = snapshot[i];
    for (size_t i = 0; i < n_env; i++) {
        /* The last of duplicate names wins; "K" entries only remove. */
        if (strchr(opts->env[i], '=') != NULL &&
            !named_in(opts->env[i], opts->env + i + 1))
            envp[k++] = (char *)opts->env[i];
    }
    envp[k] = NULL;
    return envp;
}

const char *proc__snapshot_path(void)
{
    pthread_once(&snapshot_once, take_snapshot);
    for (size_t i = 0; i < n_snapshot; i++)
        if (strncmp(snapshot[i], "PATH=", 5) == 0)
            return snapshot[i] + 5;
    return NULL;
}

static bool is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

static int copy_out(char *out, size_t outlen, const char *path)
{
    size_t n = strlen(path);
    if (n >= outlen)
        return -ENAMETOOLONG;
    memcpy(out, path, n + 1);
    return 0;
}

int proc_find_program(char *out, size_t outlen, const char *name,
                      const char *search_path)
{
    if (name == NULL || name[0] == '\0')
        return -ENOENT;
    if (strchr(name, '/') != NULL) {
        if (name[0] != '/' || !is_executable_file(name))
            return -ENOENT;
        return copy_out(out, outlen, name);
    }
    if (search_path == NULL)
        search_path = proc__snapshot_path();
    if (search_path == NULL)
        return -ENOENT;
    for (const char *p = search_path; *p != '\0';) {
        size_t n = strcspn(p, ":");
        char cand[PATH_MAX];
        /* Empty and relative entries would mean the working directory. */
        if (n > 0 && p[0] == '/' &&
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name) <
                (int)sizeof cand &&
            is_executable_file(cand))
            return copy_out(out, outlen, cand);
        p += n;
        if (*p == ':')
            p++;
    }
    return -ENOENT;
}
