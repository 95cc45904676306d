/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roots.h"
#include "common/common.h"

struct roots {
    size_t n;
    char **dirs;
};

int roots_new(roots **out, const char *const *dirs, size_t n, char *err,
              size_t errlen)
{
    *out = NULL;
    roots *r = calloc(1, sizeof *r);
    if (r == NULL ||
        (n > 0 && (r->dirs = calloc(n, sizeof *r->dirs)) == NULL)) {
        free(r);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char *real = realpath(dirs[i], NULL);
        if (real == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
            int e = real == NULL ? errno : ENOTDIR;
            char ebuf[128];
            tkc_set_err(err, errlen, "--root %s: %s", dirs[i],
                        tkc_strerror(e, ebuf, sizeof ebuf));
            free(real);
            roots_free(r);
            return -e;
        }
        r->dirs[r->n++] = real;
    }
    *out = r;
    return 0;
}

void roots_free(roots *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->dirs[i]);
    free(r->dirs);
    free(r);
}

size_t roots_count(const roots *r)
{
    return r->n;
}

const char *roots_get(const roots *r, size_t i)
{
    return i < r->n ? r->dirs[i] : NULL;
}

/* real lies in dir: equal, or dir followed by '/' ("/" holds everything). */
static int inside(const char *dir, const char *real)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return 1;
    return strncmp(real, dir, n) == 0 && (real[n] == '\0' || real[n] == '/');
}

const char *roots_root_of(const roots *r, const char *resolved)
{
    const char *best = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (inside(r->dirs[i], resolved) &&
            (best == NULL || strlen(r->dirs[i]) > strlen(best)))
            best = r->dirs[i];
    return best;
}

/* What every path outside the roots is told, whatever it is: missing,
 * a file, a symlink to anywhere, /proc/self/exe. A message that said
 * where a path resolves to, or that it does not exist, let a caller who
 * may only read under the roots probe the rest of the file system. */
static int outside(const roots *r, const char *path, char *err, size_t errlen)
{
    if (r->n == 0)
        tkc_set_err(
            err, errlen,
            "%.200s: tkd serves no directories (start it with --root DIR)",
            path);
    else
        tkc_set_err(err, errlen,
                    "%.200s is not inside tkd's --root directories", path);
    return -EACCES;
}

/* Whether the deepest ancestor of path that exists resolves inside a
 * root: then a path realpath could not resolve is the root's business
 * (missing, not a directory, not searchable) and may be told as such. */
static bool ancestor_inside(const roots *r, const char *path)
{
    char up[PATH_MAX], real[PATH_MAX];
    snprintf(up, sizeof up, "%s", path);
    for (;;) {
        char *slash = strrchr(up, '/');
        if (slash == NULL)
            return false;
        if (slash == up) {
            if (up[1] == '\0')
                return false; /* "/" itself failed */
            slash[1] = '\0';
        } else {
            *slash = '\0';
        }
        if (realpath(up, real) != NULL)
            return roots_root_of(r, real) != NULL;
    }
}

int roots_resolve(const roots *r, const char *path, char *out, size_t outlen,
                  char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0') {
        tkc_set_err(err, errlen, "the path is empty");
        return -EINVAL;
    }
    if (path[0] != '/') {
        tkc_set_err(err, errlen, "\"%.200s\" is not an absolute path", path);
        return -EINVAL;
    }
    if (strlen(path) >= PATH_MAX) {
        tkc_set_err(err, errlen, "the path is longer than %d bytes", PATH_MAX);
        return -EINVAL;
    }
    char real[PATH_MAX];
    if (realpath(path, real) == NULL) {
        int e = errno;
        if (!ancestor_inside(r, path))
            return outside(r, path, err, errlen);
        char ebuf[128];
        tkc_set_err(err, errlen, "%.200s: %s", path,
                    tkc_strerror(e, ebuf, sizeof ebuf));
        return -e;
    }
    if (roots_root_of(r, real) == NULL)
        return outside(r, path, err, errlen);
    if (strlen(real) >= outlen) {
        tkc_set_err(err, errlen, "%.200s: resolved path too long", path);
        return -EINVAL;
    }
    memcpy(out, real, strlen(real) + 1);
    return 0;
}
