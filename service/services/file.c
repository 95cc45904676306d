/* SPDX-License-Identifier: MIT */
/* Definition files: read whole, and replaced atomically — a temporary file
 * in the same directory, written and synced, 0644, renamed over the old
 * one, and the directory synced — so a crash leaves the old definition or
 * the new one, never half of one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "services_int.h"

int services__file_read(tkc_buf *out, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char chunk[8192];
    ssize_t n;
    services__buf_add(out, "", 0);
    while ((n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            close(fd);
            return -err;
        }
        services__buf_add(out, chunk, (size_t)n);
    }
    close(fd);
    return 0;
}

static int fail_errno(services_error *e, int err, const char *what,
                      const char *path)
{
    char ebuf[128];
    if (rpc_fds_exhausted(err))
        return services__fail_fds(e, err, "%s %.1024s: %s", what, path,
                                  tkc_strerror(err, ebuf, sizeof ebuf));
    return services__fail(
        e, err == EACCES || err == EPERM ? RPC_PERMISSION_DENIED : RPC_INTERNAL,
        "INSTALL_FAILED", "%s %.1024s: %s", what, path,
        tkc_strerror(err, ebuf, sizeof ebuf));
}

/* mkdir -p of path's directory (0755 for what it creates). */
static int make_parents(const char *path, services_error *e)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return fail_errno(e, errno, "cannot create", dir);
        *p = c;
        if (c == '\0')
            return 0;
    }
}

static int sync_dir_of(const char *path, services_error *e)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        return 0;
    *(slash == dir ? slash + 1 : slash) = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail_errno(e, errno, "cannot open", dir);
    int rv = fsync(fd) == 0 ? 0 : fail_errno(e, errno, "cannot sync", dir);
    close(fd);
    return rv;
}

static int write_all(int fd, const tkc_buf *content)
{
    size_t off = 0;
    while (off < content->len) {
        ssize_t n = write(fd, content->data + off, content->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        off += (size_t)n;
    }
    return 0;
}

int services__file_stage(services_staged *st, const char *path,
                         const tkc_buf *content, services_error *e)
{
    memset(st, 0, sizeof *st);
    snprintf(st->path, sizeof st->path, "%s", path);
    if (make_parents(path, e) != 0)
        return -1;
    /* A dot file: launchd loads *.plist, systemd *.service, neither this. */
    const char *base = strrchr(path, '/');
    int n = snprintf(st->tmp, sizeof st->tmp, "%.*s/.%s.XXXXXX",
                     (int)(base - path), path, base + 1);
    if (n < 0 || (size_t)n >= sizeof st->tmp)
        return services__fail(e, RPC_INVALID_ARGUMENT, "INSTALL_FAILED",
                              "path too long: %.1024s", path);
    int fd = mkostemp(st->tmp, O_CLOEXEC);
    if (fd < 0)
        return fail_errno(e, errno, "cannot create a file next to", path);
    st->pending = true;
    int err = write_all(fd, content);
    /* 0644 whatever the umask: launchd refuses a plist others may write. */
    if (err == 0 && fchmod(fd, 0644) != 0)
        err = -errno;
    if (err == 0 && fsync(fd) != 0)
        err = -errno;
    if (close(fd) != 0 && err == 0)
        err = -errno;
    if (err != 0) {
        services__file_discard(st);
        return fail_errno(e, -err, "cannot write", st->tmp);
    }
    return 0;
}

int services__file_commit(services_staged *st, services_error *e)
{
    if (rename(st->tmp, st->path) != 0) {
        int err = errno;
        services__file_discard(st);
        return fail_errno(e, err, "cannot rename over", st->path);
    }
    st->pending = false;
    return sync_dir_of(st->path, e);
}

void services__file_discard(services_staged *st)
{
    if (st->pending)
        unlink(st->tmp);
    st->pending = false;
}

int services__file_remove(const char *path, bool *removed, services_error *e)
{
    *removed = false;
    if (unlink(path) != 0) {
        if (errno == ENOENT)
            return 0;
        return fail_errno(e, errno, "cannot remove", path);
    }
    *removed = true;
    return sync_dir_of(path, e);
}
