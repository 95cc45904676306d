/* SPDX-License-Identifier: MIT */
/*
 * roots — the directories tkd may touch on a caller's behalf.
 *
 * Owns: the --root list (each resolved with realpath once, at start) and
 * the check that a caller's path resolves, symlinks followed, inside one
 * of them.
 * May call: libc only.
 * Must never: accept a path by its spelling (".." and symlinks are
 * resolved first), or change after tkd starts (it is shared by every
 * worker thread without a lock).
 */
#ifndef TK_SERVICE_ROOTS_H
#define TK_SERVICE_ROOTS_H

#include <stddef.h>

typedef struct roots roots;

/* Resolves every dir (which must exist and be a directory). Errors are
 * negative errno values with a message in err. n may be 0: then every
 * path is outside. */
int roots_new(roots **out, const char *const *dirs, size_t n, char *err,
              size_t errlen);
void roots_free(roots *r);
size_t roots_count(const roots *r);
/* The i-th resolved root. */
const char *roots_get(const roots *r, size_t i);

/* The root that holds resolved (a path roots_resolve returned): the
 * longest when roots nest, NULL when none does. */
const char *roots_root_of(const roots *r, const char *resolved);

/* Resolves path into out (realpath) and checks that it lies inside a
 * root. Returns 0, or:
 *   -EINVAL  path is empty, not absolute, or longer than PATH_MAX
 *   -EACCES  it is not inside any root: it resolves outside (".." or a
 *            symlink escape), or it does not resolve and the deepest of
 *            its ancestors that exists lies outside
 *   -ENOENT  path (or a component) does not exist, inside a root
 *   other    -errno of realpath inside a root (e.g. -EACCES for a
 *            component tkd may not search, -ENOTDIR)
 * err gets a message for the caller that names the path as given, and
 * the reason. Outside the roots every path gets one answer, which names
 * nothing but the path: not where it resolves, nor whether it exists. */
int roots_resolve(const roots *r, const char *path, char *out, size_t outlen,
                  char *err, size_t errlen);

#endif /* TK_SERVICE_ROOTS_H */
