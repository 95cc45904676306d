/* SPDX-License-Identifier: MIT */
/* Starting a child: posix_spawn (glibc's runs the child on its own stack
 * with CLONE_VFORK, so nothing async-signal-unsafe of ours runs between
 * fork and exec in a multi-threaded tkd), as the leader of a new process
 * group, with stdin from /dev/null, stdout and stderr on pipes, every
 * other fd closed, the signal mask emptied and every disposition reset:
 * tkd blocks SIGTERM/SIGINT in all threads, and a child must not inherit
 * that (nor an ignored SIGPIPE).
 *
 * Every other fd: closed in the child by posix_spawn itself where the
 * system can (glibc's posix_spawn_file_actions_addclosefrom_np, macOS's
 * POSIX_SPAWN_CLOEXEC_DEFAULT); elsewhere (and with -Dportable) each fd
 * that is open and not close-on-exec is listed and closed by a file
 * action, under the spawn lock held shared (port_spawn_lock), which every
 * fd of tkd's that is not close-on-exec at birth is made under
 * exclusively (port_pipe): none can appear between the list and the
 * spawn. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "port_config.h"
#include "proc_int.h"

#define CLOSE_BY_ACTIONS                                                       \
    (!TK_HAVE_SPAWN_CLOSEFROM && !TK_HAVE_SPAWN_CLOEXEC_DEFAULT)

/* Moves fd above the standard descriptors, so that dup2 onto 0-2 in the
 * child always makes a new descriptor (dup2(fd, fd) would keep
 * close-on-exec). */
static int above_stdio(int fd)
{
    if (fd > STDERR_FILENO)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    int e = errno;
    close(fd);
    errno = e;
    return moved;
}

/* A close-on-exec pipe with both ends above stdio; the read end (ours) is
 * non-blocking. */
static int make_pipe(int p[2])
{
    int rv = port_pipe(p, false);
    if (rv != 0)
        return rv;
    p[0] = above_stdio(p[0]);
    p[1] = above_stdio(p[1]);
    if (p[0] < 0 || p[1] < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
        int e = errno;
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
        p[0] = p[1] = -1;
        return -e;
    }
    return 0;
}

/* A batched stdout's pipe made PROC_BATCH_PIPE bytes (proc.h), where the
 * system can; a pipe the system will not enlarge (a user past
 * pipe-user-pages-soft, a smaller pipe-max-size) keeps its size, and the
 * batch still holds: the program then waits for room a little sooner. */
static void size_out_pipe(int fd, const proc_opts *opts)
{
#if TK_HAVE_SETPIPE_SZ
    if (opts->stdout_batch_ms > 0)
        (void)fcntl(fd, F_SETPIPE_SZ, (int)PROC_BATCH_PIPE);
#else
    (void)fd;
    (void)opts;
#endif
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

typedef struct spawn_setup {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ok, attr_ok;
    int out[2], err[2];
    int cwd_fd;
    char **envp;
} spawn_setup;

#if CLOSE_BY_ACTIONS
static int add_close(int fd, void *arg)
{
    return -posix_spawn_file_actions_addclose(arg, fd);
}
#endif

static int set_file_actions(spawn_setup *s)
{
    posix_spawn_file_actions_t *fa = &s->fa;
    int rv = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null",
                                              O_RDONLY, 0);
    if (rv == 0)
        rv = posix_spawn_file_actions_adddup2(fa, s->out[1], STDOUT_FILENO);
    if (rv == 0)
        rv = posix_spawn_file_actions_adddup2(fa, s->err[1], STDERR_FILENO);
    if (rv == 0 && s->cwd_fd >= 0)
        rv = posix_spawn_file_actions_addfchdir_np(fa, s->cwd_fd);
#if TK_HAVE_SPAWN_CLOSEFROM
    /* Whatever another thread opened without O_CLOEXEC stays with us. */
    if (rv == 0)
        rv = posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
#elif CLOSE_BY_ACTIONS
    /* The same, fd by fd. One another thread closes before the spawn is
     * closed again in the child, which glibc's posix_spawn lets pass; one
     * it opens is close-on-exec, or made under the spawn lock we hold. */
    if (rv == 0)
        rv = -port_fds_inheritable(add_close, fa);
#endif
    return -rv;
}

static int set_attributes(posix_spawnattr_t *attr)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    short flags =
        POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#if !TK_HAVE_SPAWN_CLOSEFROM && TK_HAVE_SPAWN_CLOEXEC_DEFAULT
    /* macOS: the child gets only the fds the file actions name (0-2). */
    flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
    int rv = posix_spawnattr_setflags(attr, flags);
    if (rv == 0)
        rv = posix_spawnattr_setpgroup(attr, 0); /* its own group */
    if (rv == 0)
        rv = posix_spawnattr_setsigmask(attr, &none);
    if (rv == 0)
        rv = posix_spawnattr_setsigdefault(attr, &all);
    return -rv;
}

static int prepare(spawn_setup *s, const proc_opts *opts, proc_result *r)
{
    if (opts->cwd != NULL) {
#if TK_HAVE_O_PATH
        s->cwd_fd = open(opts->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
        /* Without O_PATH the directory must be readable, not only
         * searchable: a working directory tk chose always is. */
        s->cwd_fd = open(opts->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
        if (s->cwd_fd < 0) {
            int e = errno;
            /* Out of descriptors or memory says nothing of the directory. */
            r->spawn = e == EMFILE || e == ENFILE || e == ENOMEM
                           ? PROC_SPAWN_SYSTEM
                           : PROC_SPAWN_BAD_CWD;
            return -e;
        }
    }
    r->spawn = PROC_SPAWN_SYSTEM;
    s->envp = proc__child_env(opts);
    if (s->envp == NULL)
        return -ENOMEM;
    int rv = make_pipe(s->out);
    if (rv == 0) {
        size_out_pipe(s->out[0], opts);
        rv = make_pipe(s->err);
    }
    if (rv == 0) {
        rv = -posix_spawn_file_actions_init(&s->fa);
        s->fa_ok = rv == 0;
    }
    if (rv == 0) {
        rv = -posix_spawnattr_init(&s->attr);
        s->attr_ok = rv == 0;
    }
    if (rv == 0)
        rv = set_attributes(&s->attr);
    if (rv == 0)
        r->spawn = PROC_SPAWN_OK;
    return rv;
}

static void setup_fini(spawn_setup *s)
{
    if (s->fa_ok)
        posix_spawn_file_actions_destroy(&s->fa);
    if (s->attr_ok)
        posix_spawnattr_destroy(&s->attr);
    close_fd(&s->out[0]);
    close_fd(&s->out[1]);
    close_fd(&s->err[0]);
    close_fd(&s->err[1]);
    close_fd(&s->cwd_fd);
    free(s->envp);
}

static proc_spawn_error classify(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return PROC_SPAWN_NOT_FOUND;
    case EACCES:
    case ENOEXEC:
    case EISDIR:
    case EPERM:
    case ETXTBSY:
    case ELOOP:
    case ENAMETOOLONG:
        return PROC_SPAWN_NOT_EXECUTABLE;
    default:
        return PROC_SPAWN_SYSTEM;
    }
}

int proc__spawn(proc_child *c, const proc_opts *opts, proc_result *r)
{
    spawn_setup s = { .out = { -1, -1 }, .err = { -1, -1 }, .cwd_fd = -1 };
    c->pid = -1;
    c->out_fd = c->err_fd = -1;
    int rv = prepare(&s, opts, r);
    if (rv == 0) {
        /* From listing the fds the child must not get to its start. */
        port_spawn_lock();
        rv = set_file_actions(&s);
        if (rv != 0)
            r->spawn = PROC_SPAWN_SYSTEM;
        if (rv == 0) {
            rv = -posix_spawn(&c->pid, opts->path, &s.fa, &s.attr,
                              (char *const *)opts->argv, s.envp);
            if (rv != 0)
                r->spawn = classify(-rv);
        }
        port_spawn_unlock();
    }
    if (rv == 0) {
        c->out_fd = s.out[0];
        c->err_fd = s.err[0];
        s.out[0] = s.err[0] = -1;
    }
    setup_fini(&s);
    return rv;
}
