/* SPDX-License-Identifier: MIT */
/* One run from spawn to reap: the poll loop over stdout, stderr, the
 * leader's exit (a pidfd), the caller's cancel fd and the clocks; the
 * decision of why it ends; the group kill; the bounded drain; the reap. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port_config.h"
#if TK_HAVE_PIDFD_OPEN
#include <sys/syscall.h>
#endif

#include "proc_int.h"

#define READ_CHUNK ((size_t)64 * 1024)
#define MS 1000000LL

#if TK_HAVE_PIDFD_OPEN
/* Whether pidfd_open exists here: 0 not yet known, 1 yes, -1 no (ENOSYS).
 * Published once per process; a race only repeats the probe. */
static atomic_int pidfd_support;
#endif

int64_t proc_now_ns(void)
{
    return tkc_mono_ns();
}

/* The phases of a run; each only moves forward. */
typedef enum phase {
    PH_RUNNING,     /* the program runs: every event counts */
    PH_TERMINATING, /* a WRITE past its timeout got SIGTERM: waiting for it
                       to exit, or for the grace to end in SIGKILL */
    PH_DRAINING,    /* the group got SIGKILL (or the leader exited): read
                       what is left, until both pipes close and the leader
                       is dead, or the drain bound */
} phase;

/* Fixed slots of the poll set; an absent fd is -1, which poll skips.
 * SLOT_CANCEL holds a READ's cancel_fd, or a WRITE's abort_fd. */
enum { SLOT_OUT, SLOT_ERR, SLOT_EXIT, SLOT_CANCEL, N_SLOTS };

typedef struct run {
    const proc_opts *opts;
    proc_result *r;
    unsigned test;
    pid_t pid;
    int fd[N_SLOTS]; /* out, err, pidfd, cancel or abort (borrowed) */
    bool exited;     /* the leader terminated and is not reaped yet */
    bool decided;    /* r->end holds the reason */
    phase ph;
    int64_t t_start, t_deadline, t_bound, t_grace, t_drain, t_decided;
    int64_t t_out_next; /* batched stdout: not read again before this */
    uint32_t grace_ms, drain_ms;
    proc_sink sink;
    proc_excerpt excerpt;
    char *buf;
} run;

static void close_slot(run *u, int slot)
{
    if (u->fd[slot] >= 0 && slot != SLOT_CANCEL)
        close(u->fd[slot]);
    u->fd[slot] = -1;
}

/* Signals the group while its leader is unreaped, so its id is ours. */
static void signal_group(const run *u, int sig)
{
    if (u->test & PROC__TEST_NO_KILL)
        return;
    pid_t target = (u->test & PROC__TEST_KILL_LEADER_ONLY) ? u->pid : -u->pid;
    kill(target, sig);
}

static void start_drain(run *u, int64_t now)
{
    u->ph = PH_DRAINING;
    u->t_drain = now + (int64_t)u->drain_ms * MS;
}

/* Cuts the run short: a READ at once with SIGKILL, a WRITE (its own
 * timeout is the only thing that can) with SIGTERM first. */
static void cut(run *u, int64_t now)
{
    u->r->process_killed = true;
    if (u->opts->kind == PROC_WRITE) {
        signal_group(u, SIGTERM);
        u->r->kill_signal = SIGTERM;
        u->ph = PH_TERMINATING;
        u->t_grace = now + (int64_t)u->grace_ms * MS;
        return;
    }
    signal_group(u, SIGKILL);
    u->r->kill_signal = SIGKILL;
    start_drain(u, now);
}

/* Records why the run ends: the first reason observed wins. */
static void decide(run *u, proc_end end, int64_t now)
{
    if (u->decided)
        return;
    u->decided = true;
    u->r->end = end;
    u->t_decided = now;
    if (end != PROC_END_EXITED)
        cut(u, now);
}

/* The leader terminated. What is left of the group of a READ, or of a
 * run cut short, is killed now, before the reap gives the group id away
 * (routine, not process_killed). A WRITE that ended by itself keeps what
 * it started: proc.h says why. */
static void leader_exited(run *u, int64_t now)
{
    u->exited = true;
    close_slot(u, SLOT_EXIT);
    decide(u, PROC_END_EXITED, now);
    if (u->opts->kind == PROC_READ || u->r->end != PROC_END_EXITED)
        signal_group(u, SIGKILL);
    if (u->ph != PH_DRAINING)
        start_drain(u, now);
}

static void check_clocks(run *u, int64_t now)
{
    if (u->ph == PH_RUNNING) {
        if (u->opts->kind == PROC_READ && now >= u->t_deadline)
            decide(u, PROC_END_DEADLINE, now);
        else if (now >= u->t_bound)
            decide(u, PROC_END_TIMEOUT, now);
    }
    if (u->ph == PH_TERMINATING && now >= u->t_grace) {
        signal_group(u, SIGKILL);
        u->r->kill_signal = SIGKILL;
        start_drain(u, now);
    }
}

static void on_stdout(run *u, const char *data, size_t len, int64_t now)
{
    proc_feed f = proc__sink_feed(&u->sink, data, len);
    if (u->opts->kind != PROC_READ || u->ph != PH_RUNNING)
        return; /* a WRITE is never cut short by its output */
    if (f == PROC_FEED_STOP)
        decide(u, PROC_END_STOPPED, now);
    else if (f == PROC_FEED_OVERFLOW && u->opts->cap_policy == PROC_CAP_KILL)
        decide(u, PROC_END_OUTPUT_CAP, now);
}

static void read_pipe(run *u, int slot, int64_t now)
{
    ssize_t n = read(u->fd[slot], u->buf, READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* EOF, or an error that ends the stream all the same */
        close_slot(u, slot);
        if (slot == SLOT_OUT)
            proc__sink_eof(&u->sink);
        return;
    }
    if (slot == SLOT_OUT) {
        /* The pipe is empty when a read did not fill the buffer: a batched
         * stdout is left to fill for a while (proc.h). */
        if ((size_t)n < READ_CHUNK && u->opts->stdout_batch_ms > 0)
            u->t_out_next = now + (int64_t)u->opts->stdout_batch_ms * MS;
        on_stdout(u, u->buf, (size_t)n, now);
    } else
        proc__excerpt_feed(&u->excerpt, u->buf, (size_t)n);
}

/* Without a pidfd: whether the leader terminated, without reaping it. */
static bool leader_gone_nowait(const run *u)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rv = waitid(P_PID, (id_t)u->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    return rv == 0 && si.si_pid == u->pid;
}

/* A batched stdout left to fill (proc.h): only while the program runs;
 * once it has exited or is cut short, what is left is read as it comes. */
static bool holding_stdout(const run *u, int64_t now)
{
    return u->ph == PH_RUNNING && !u->exited && now < u->t_out_next;
}

/* The poll timeout: until the next clock event of the phase, at most
 * PROC_FALLBACK_TICK_MS while the exit is watched by polling waitid. */
static int poll_timeout(const run *u, int64_t now)
{
    int64_t next = u->t_drain;
    if (u->ph == PH_RUNNING) {
        next = u->t_bound;
        if (u->opts->kind == PROC_READ && u->t_deadline < next)
            next = u->t_deadline;
    } else if (u->ph == PH_TERMINATING) {
        next = u->t_grace;
    }
    int64_t ms = next > now ? (next - now + MS - 1) / MS : 0;
    if (!u->exited && u->fd[SLOT_EXIT] < 0 && ms > PROC_FALLBACK_TICK_MS)
        ms = PROC_FALLBACK_TICK_MS;
    if (holding_stdout(u, now)) {
        int64_t hold = (u->t_out_next - now + MS - 1) / MS;
        ms = hold < ms ? hold : ms;
    }
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static bool finished(const run *u, int64_t now)
{
    if (u->ph != PH_DRAINING)
        return false;
    bool quiet = u->fd[SLOT_OUT] < 0 && u->fd[SLOT_ERR] < 0 && u->exited;
    return quiet || now >= u->t_drain;
}

/* One poll round. The events are taken in the order the reasons rank:
 * the caller's cancel (a WRITE: its owner's abort), the clocks, stdout,
 * and the leader's exit last, so a run we cut short is never reported as
 * the program's own ending. */
static void poll_once(run *u)
{
    struct pollfd pfd[N_SLOTS];
    bool watch_cancel = u->ph == PH_RUNNING;
    for (int i = 0; i < N_SLOTS; i++)
        pfd[i] = (struct pollfd){ .fd = u->fd[i], .events = POLLIN };
    if (!watch_cancel)
        pfd[SLOT_CANCEL].fd = -1;
    int64_t before = proc_now_ns();
    if (holding_stdout(u, before))
        pfd[SLOT_OUT].fd = -1;
    int n = poll(pfd, N_SLOTS, poll_timeout(u, before));
    int64_t now = proc_now_ns();
    if (n < 0) {
        /* EINTR, or ENOMEM: the clocks still apply; try again. */
        check_clocks(u, now);
        return;
    }
    if (watch_cancel && pfd[SLOT_CANCEL].revents != 0)
        decide(u,
               u->opts->kind == PROC_READ ? PROC_END_CANCELLED
                                          : PROC_END_ABORTED,
               now);
    check_clocks(u, now);
    for (int i = SLOT_OUT; i <= SLOT_ERR; i++)
        if (pfd[i].revents != 0 && u->fd[i] >= 0)
            read_pipe(u, i, now);
    bool gone = pfd[SLOT_EXIT].revents != 0 ||
                (!u->exited && u->fd[SLOT_EXIT] < 0 && leader_gone_nowait(u));
    if (gone && !u->exited)
        leader_exited(u, now);
}

static void *reap_later(void *arg)
{
    pid_t pid = (pid_t)(intptr_t)arg;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* A leader that outlived SIGKILL and the drain bound is stuck in the
 * kernel; a detached thread reaps it when it dies, so the caller is not
 * held. Should no thread be available, the caller waits after all. */
static void hand_to_reaper(run *u)
{
    pthread_attr_t attr;
    pthread_t t;
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, reap_later, (void *)(intptr_t)u->pid) ==
             0;
        pthread_attr_destroy(&attr);
    }
    if (!ok)
        reap_later((void *)(intptr_t)u->pid);
    u->r->status.kind = PROC_STATUS_UNKNOWN;
}

static void reap(run *u)
{
    if (!u->exited) {
        hand_to_reaper(u);
        return;
    }
    int st = 0;
    pid_t got;
    while ((got = waitpid(u->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    u->r->reaped = true;
    if (got != u->pid) /* ECHILD: SIGCHLD ignored somewhere (proc.h) */
        u->r->status.kind = PROC_STATUS_UNKNOWN;
    else if (WIFEXITED(st)) {
        u->r->status.kind = PROC_STATUS_EXITED;
        u->r->status.code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        u->r->status.kind = PROC_STATUS_SIGNALED;
        u->r->status.signal = WTERMSIG(st);
    }
}

/* A pidfd of the leader (close-on-exec, as every pidfd), or -1: then this
 * run polls waitid. Without pidfd_open in this build (a system that has
 * none, or -Dportable) every run does. */
static int open_pidfd(pid_t pid, unsigned test)
{
#if TK_HAVE_PIDFD_OPEN
    if ((test & PROC__TEST_NO_PIDFD) || atomic_load(&pidfd_support) < 0)
        return -1;
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        atomic_store(&pidfd_support, 1);
    else if (errno == ENOSYS)
        atomic_store(&pidfd_support, -1);
    return fd; /* other errors (EMFILE): this run polls waitid instead */
#else
    (void)pid;
    (void)test;
    return -1;
#endif
}

static uint32_t ms_between(int64_t from, int64_t to)
{
    int64_t ms = to > from ? (to - from) / MS : 0;
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

static int prepare(run *u, proc_result *r, const proc_opts *opts, unsigned test)
{
    memset(u, 0, sizeof *u);
    u->opts = opts;
    u->r = r;
    u->test = test;
    for (int i = 0; i < N_SLOTS; i++)
        u->fd[i] = -1;
    u->grace_ms = opts->term_grace_ms != 0 ? opts->term_grace_ms
                                           : PROC_DEFAULT_TERM_GRACE_MS;
    u->drain_ms = opts->drain_ms != 0 ? opts->drain_ms : PROC_DEFAULT_DRAIN_MS;
    proc__sink_init(&u->sink, opts);
    int rv = proc__excerpt_init(&u->excerpt, opts);
    if (rv == 0) {
        u->buf = malloc(READ_CHUNK);
        rv = u->buf != NULL ? 0 : -ENOMEM;
    }
    return rv;
}

/* Closes what is left open once the loop is over: a pipe still open here
 * is held by something outside our reach. */
static void finish(run *u)
{
    /* Before the reap, after which the group's id could be another's. */
    if (u->opts->on_group != NULL)
        u->opts->on_group(u->opts->on_group_arg, 0);
    if (u->opts->kind == PROC_READ)
        proc__guard_remove(u->pid);
    if (u->fd[SLOT_OUT] >= 0 || u->fd[SLOT_ERR] >= 0)
        u->r->drain_timed_out = true;
    for (int i = 0; i < N_SLOTS; i++)
        close_slot(u, i);
    reap(u);
    int64_t now = proc_now_ns();
    u->r->elapsed_ms = ms_between(u->t_start, now);
    u->r->cleanup_ms = ms_between(u->t_decided, now);
}

int proc__execute(proc_result *r, const proc_opts *opts, unsigned test)
{
    run u;
    int rv = prepare(&u, r, opts, test);
    proc_child c;
    u.t_start = proc_now_ns();
    if (rv == 0)
        rv = proc__spawn(&c, opts, r);
    if (rv == 0) {
        uint32_t t = r->timeout_ms; /* proc_run applied the default */
        r->started = true;
        r->pid = u.pid = c.pid;
        u.fd[SLOT_OUT] = c.out_fd;
        u.fd[SLOT_ERR] = c.err_fd;
        u.fd[SLOT_EXIT] = open_pidfd(c.pid, test);
        u.fd[SLOT_CANCEL] =
            opts->kind == PROC_READ ? opts->cancel_fd : opts->abort_fd;
        if (opts->kind == PROC_READ)
            proc__guard_add(c.pid);
        if (opts->on_group != NULL)
            opts->on_group(opts->on_group_arg, c.pid);
        u.t_deadline = opts->deadline_ns;
        u.t_bound = u.t_start + (int64_t)t * MS;
        while (!finished(&u, proc_now_ns()))
            poll_once(&u);
        finish(&u);
        proc__sink_finish(&u.sink, r);
        proc__excerpt_finish(&u.excerpt, r);
    } else {
        r->spawn = r->spawn != PROC_SPAWN_OK ? r->spawn : PROC_SPAWN_SYSTEM;
        r->spawn_errno = -rv;
        proc__sink_discard(&u.sink);
        proc__excerpt_discard(&u.excerpt);
    }
    free(u.buf);
    return rv;
}
