/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "support.h"
#include "tree.h"

/* errno's text for a failure message, in a buffer that lives as long as
 * the statement that names it (the C library's words on every system). */
#define ERRNO_TEXT() tkc_strerror(errno, (char[128]){ 0 }, 128)

static void join(char *out, size_t len, const char *dir, const char *rel)
{
    int n = snprintf(out, len, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= len)
        fail_msg("path too long: %s/%s", dir, rel);
}

/* Makes the directories that lead to path. */
static void parents(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = strchr(buf + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", buf, ERRNO_TEXT());
        *s = '/';
    }
}

void tree_write(const char *dir, const char *rel, const void *data, size_t len)
{
    char path[PATH_MAX];
    join(path, sizeof path, dir, rel);
    parents(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("open %s: %s", path, ERRNO_TEXT());
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            fail_msg("write %s: %s", path, ERRNO_TEXT());
        p += n;
        len -= (size_t)n;
    }
    close(fd);
}

void tree_puts(const char *dir, const char *rel, const char *text)
{
    tree_write(dir, rel, text, strlen(text));
}

void tree_lines(const char *dir, const char *rel, const char *line, size_t n)
{
    size_t ll = strlen(line);
    char *buf = malloc(n * (ll + 1) + 1);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        memcpy(buf + i * (ll + 1), line, ll + 1);
        buf[i * (ll + 1) + ll] = '\n'; /* over the NUL */
    }
    tree_write(dir, rel, buf, n * (ll + 1));
    free(buf);
}

void tree_mkdir(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    join(path, sizeof path, dir, rel);
    parents(path);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", path, ERRNO_TEXT());
}

void tree_mkfifo(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    join(path, sizeof path, dir, rel);
    parents(path);
    if (mkfifo(path, 0600) != 0)
        fail_msg("mkfifo %s: %s", path, ERRNO_TEXT());
}

void tree_script(const char *dir, const char *rel, const char *body)
{
    char text[8192];
    snprintf(text, sizeof text, "#!/bin/sh\n%s", body);
    tree_puts(dir, rel, text);
    tree_chmod(dir, rel, 0755);
}

void tree_symlink(const char *target, const char *dir, const char *rel)
{
    char path[PATH_MAX];
    join(path, sizeof path, dir, rel);
    parents(path);
    if (symlink(target, path) != 0)
        fail_msg("symlink %s: %s", path, ERRNO_TEXT());
}

void tree_chmod(const char *dir, const char *rel, mode_t mode)
{
    char path[PATH_MAX];
    join(path, sizeof path, dir, rel);
    if (chmod(path, mode) != 0)
        fail_msg("chmod %s: %s", path, ERRNO_TEXT());
}

bool tree_which(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", path != NULL ? path : "/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d != NULL;
         d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        snprintf(out, len, "%s/%s", d, name);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

void tree_git(const char *dir, const char *const args[])
{
    char git[PATH_MAX];
    if (!tree_which("git", git, sizeof git))
        fail_msg("git is not in PATH");
    const char *argv[32] = { git,
                             "-C",
                             dir,
                             "-c",
                             "user.name=tk test",
                             "-c",
                             "user.email=test@tk.invalid",
                             "-c",
                             "init.defaultBranch=main" };
    size_t n = 9;
    for (size_t i = 0; args[i] != NULL && n + 1 < 32; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    ts_proc p;
    assert_int_equal(ts_spawn(&p, argv, NULL), 0);
    int rv = ts_finish(&p, 30000);
    if (rv != 0)
        fail_msg("git %s: %d: %s", args[0], rv, p.err != NULL ? p.err : "");
    ts_proc_free(&p);
}

static bool cmdline_has(const char *pid, const char *needle)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false; /* gone meanwhile, or not ours to read */
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 && memmem(buf, (size_t)n, needle, strlen(needle)) != NULL;
}

bool tree_process_with_arg(const char *needle)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    char self[32];
    snprintf(self, sizeof self, "%d", (int)getpid());
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
            strcmp(e->d_name, self) == 0)
            continue;
        found = cmdline_has(e->d_name, needle);
    }
    closedir(d);
    return found;
}
