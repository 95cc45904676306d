/* SPDX-License-Identifier: MIT */
/*
 * proc — every subprocess tkd starts.
 *
 * Owns: starting programs (argv only, execve of a resolved path, no shell)
 * as the leader of a new process group, with stdin from /dev/null, no fd
 * of tkd's but the two output pipes, the default signal dispositions and
 * an empty signal mask, and an environment scrubbed to an allowlist; one
 * poll loop per run over stdout, stderr, the child's exit, the caller's
 * cancel fd and the deadlines; stdout as the result (captured up to a cap,
 * or streamed to a callback that may stop the run); stderr as a bounded
 * head-and-tail excerpt; killing the whole process group; the bounded
 * drain after a kill; reaping; the report of why a run ended; and the
 * guard, which kills every READ's group still running when tkd ends,
 * however it ends (guard.c).
 * May call: libc only (and the pidfd_open system call, through libc).
 * Must never: run a shell; include rpc.h or know of calls, NNG or
 * protobuf (tool/ turns an rpc_call into proc_opts and a proc_result
 * into a status: tool.h); install a signal handler, change a signal
 * disposition or set SIGCHLD to SIG_IGN; call wait on any pid it did not
 * spawn (no waitpid(-1)); signal a process group after reaping its leader
 * (its id could then be reused); report a kill it caused as the program's
 * own failure; leave a zombie or an fd behind, or any process of a READ
 * or of a run it cut short.
 *
 * How a run ends (proc_run):
 *  - It ends by itself when the leader (the spawned program) exits.
 *  - A READ also ends when the caller's cancel fd becomes readable or the
 *    caller's deadline passes; a READ or a WRITE ends when its own bound
 *    (timeout_ms from the start) passes; a READ ends when on_stdout says
 *    PROC_STOP or stdout overflows its cap under PROC_CAP_KILL; a WRITE
 *    also ends when its owner abandons it (abort_fd becomes readable: the
 *    owner is exiting and will not wait for it).
 *  - The reason is decided, and recorded in proc_result.end, at the
 *    moment it is observed and before the exit status is looked at. In one
 *    poll round the order is: cancel (or abort) fd, caller deadline, own
 *    bound, then stdout (stop, cap), then the leader's exit. So a run we
 *    killed reports PROC_END_CANCELLED (and the status says SIGKILL), never
 *    "killed by signal 9".
 *  - Cutting a READ short: SIGKILL to the whole group at once (a read has
 *    nothing to clean up). Cutting a WRITE short (its own timeout, or its
 *    owner abandoning it): SIGTERM to the group, so that git can remove
 *    its lock files, and SIGKILL after term_grace_ms.
 *  - When the leader has exited, and before it is reaped (while the group
 *    id is still ours), the rest of the group gets SIGKILL — for every
 *    READ, and for every run that was cut short. Nothing of a read
 *    outlives it: it has nothing to finish. This sweep is routine and not
 *    process_killed.
 *  - A WRITE that ended by itself is not swept: what it left running is
 *    part of the write. git's background gc/maintenance daemonizes
 *    (fork; the parent exits; the child calls setsid) and a sweep at the
 *    parent's exit could land between fork and setsid and kill a gc half
 *    way. Such leftovers are reparented to init (never our zombies); if
 *    they keep our pipes open, the drain bound below cuts them loose.
 *  - After that the pipes are read until both close, for at most drain_ms
 *    (a process outside the group — a daemon that kept our stdout — must
 *    not hang the run); then our ends are closed (drain_timed_out) and the
 *    leader is reaped with waitpid(pid). A leader that has not died by
 *    then (stuck in the kernel) is reaped by a detached thread when it
 *    does die, and the result says reaped == false.
 *
 * Waiting: on Linux >= 5.3 a pidfd (pidfd_open) of the leader is in the
 * poll set, so the exit wakes the loop. Where pidfd_open is missing
 * (ENOSYS), the loop wakes every PROC_FALLBACK_TICK_MS and asks
 * waitid(WNOHANG | WNOWAIT), which does not reap. Either way tkd must not
 * reap children it did not start itself: no waitpid(-1), no SIGCHLD set to
 * SIG_IGN or SA_NOCLDWAIT anywhere in the process.
 *
 * Batched stdout (stdout_batch_ms > 0): rg writes once a file (2 049
 * writes for 9.2 MB of JSON in the search benchmark), and a reader that
 * polls wakes for nearly each: about 45% of tkd's CPU beside rg's, on two
 * cores, was the kernel's wakeups and reads. With a batch, a read that
 * empties the pipe leaves stdout out of the poll set for stdout_batch_ms,
 * so the next read takes what several writes left. Nothing else waits:
 * the cancel fd, the caller's deadline, the run's bound, stderr and the
 * leader's exit wake the loop as before, and once the leader has exited
 * (or the run is cut short) stdout is read as it comes. The pipe is made
 * larger, so that the program does not fill it while it is left alone.
 * Whoever needs the first output soon (a reader that stops after a few
 * records) leaves it 0.
 *
 * Threads: proc_run may be called from any number of threads at once. The
 * only process-wide state is the environment snapshot (taken once, at the
 * first use, with pthread_once) and whether pidfd_open works (an atomic).
 * A callback runs on the thread that called proc_run.
 */
#ifndef TK_SERVICE_PROC_H
#define TK_SERVICE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_DEFAULT_TIMEOUT_MS 60000u
#define PROC_DEFAULT_TERM_GRACE_MS 2000u
#define PROC_DEFAULT_DRAIN_MS 2000u
#define PROC_DEFAULT_STDOUT_CAP ((size_t)16 * 1024 * 1024)
#define PROC_DEFAULT_STDERR_HEAD 4096u
#define PROC_DEFAULT_STDERR_TAIL 4096u
#define PROC_FALLBACK_TICK_MS 10
/* The stdout pipe's size when stdout is batched (Linux: F_SETPIPE_SZ; an
 * unprivileged process may ask up to /proc/sys/fs/pipe-max-size, 1 MiB by
 * default). Elsewhere the pipe keeps the system's size. */
#define PROC_BATCH_PIPE ((size_t)1024 * 1024)
/* A cut record resumed at record_resume: what follows the string, kept. */
#define PROC_RESUME_MAX ((size_t)4096)
#define PROC_RESUME_MARK_MAX 32u

/* What the environment of every child starts from: these variables, when
 * tkd had them at its first run, and nothing else. Callers add to it. */
#define PROC_ENV_ALLOWLIST                                                     \
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE",           \
        "LC_MESSAGES", "TZ", "TMPDIR", "XDG_RUNTIME_DIR",                      \
        "DBUS_SESSION_BUS_ADDRESS"

typedef enum proc_kind {
    PROC_READ = 1,  /* follows its caller: cancel fd and deadline end it */
    PROC_WRITE = 2, /* runs to completion under its own timeout only */
} proc_kind;

/* Why a run ended. Judge a run by this first, its status second. */
typedef enum proc_end {
    PROC_END_NOT_STARTED = 0, /* see proc_result.spawn (or a READ whose
                                 caller had already gone: then CANCELLED or
                                 DEADLINE with started == false) */
    PROC_END_EXITED,          /* the program ended by itself: see status */
    PROC_END_CANCELLED,       /* READ: the cancel fd became readable */
    PROC_END_DEADLINE,        /* READ: the caller's deadline passed */
    PROC_END_STOPPED,         /* READ: on_stdout returned PROC_STOP */
    PROC_END_OUTPUT_CAP,      /* READ: stdout overflowed under PROC_CAP_KILL */
    PROC_END_TIMEOUT,         /* its own bound passed (READ: its ceiling;
                                 WRITE: a write that timed out) */
    PROC_END_ABORTED,         /* WRITE: abort_fd became readable (started
                                 false: it already was at the start) */
} proc_end;

/* Why a program could not be started. */
typedef enum proc_spawn_error {
    PROC_SPAWN_OK = 0,
    PROC_SPAWN_NOT_FOUND,      /* no such program (ENOENT, ENOTDIR) */
    PROC_SPAWN_NOT_EXECUTABLE, /* EACCES, ENOEXEC, EISDIR, ... */
    PROC_SPAWN_BAD_CWD,        /* the working directory cannot be opened */
    PROC_SPAWN_SYSTEM,         /* out of fds (spawn_errno EMFILE: tkd's
                                  RLIMIT_NOFILE; ENFILE: the system's),
                                  processes or memory */
} proc_spawn_error;

/* How the leader ended, from its wait status. */
typedef enum proc_status_kind {
    PROC_STATUS_NONE = 0, /* not started */
    PROC_STATUS_EXITED,   /* code is its exit code */
    PROC_STATUS_SIGNALED, /* signal is the signal that killed it */
    PROC_STATUS_UNKNOWN,  /* not reaped by proc_run (see reaped) */
} proc_status_kind;

typedef struct proc_status {
    proc_status_kind kind;
    int code;
    int signal;
} proc_status;

/* What to do when stdout overflows its cap. Either way the overflow is
 * reported (proc_result.out_truncated), never cut silently. */
typedef enum proc_cap_policy {
    PROC_CAP_KILL = 0, /* READ: stop and kill (PROC_END_OUTPUT_CAP); a
                          WRITE is never cut short: it discards */
    PROC_CAP_DISCARD,  /* keep the first cap bytes, read and drop the rest,
                          let the program finish */
} proc_cap_policy;

typedef enum proc_verdict {
    PROC_CONTINUE = 0,
    PROC_STOP = 1,
} proc_verdict;

/* Receives stdout as it arrives, instead of capturing it. With
 * record_max == 0: each chunk as read (truncated is false). With
 * record_max > 0: one record at a time, split at delim (which is not
 * passed), at most record_max bytes; a longer record is cut there, its
 * rest dropped, and truncated is true. With record_resume set, what is
 * dropped of a cut record ends at the first occurrence of that string
 * (none within the first record_max bytes: it may begin in them):
 * the record passed is its first record_max bytes, the string, and up to
 * PROC_RESUME_MAX bytes that follow it (a record whose middle is a
 * value of tens of MiB, and whose end says what it was about). An unterminated
 * last record is passed at EOF. Return PROC_STOP to end the run (a READ is then
 * killed, drained and reported PROC_END_STOPPED; a WRITE runs on and its
 * further stdout is dropped); after PROC_STOP the callback is not called again.
 */
typedef proc_verdict (*proc_stdout_fn)(void *arg, const char *data, size_t len,
                                       bool truncated);

/* Told the run's process group: its id (the leader's pid) once the leader
 * is spawned, and 0 once the run no longer holds that id (before the
 * leader is reaped: from then on the id could be another's). Called on
 * proc_run's thread. For an owner that names the run's processes (tkd's
 * log at shutdown); it must not signal them: cutting a run short is
 * proc's, through cancel_fd and abort_fd. */
typedef void (*proc_group_fn)(void *arg, pid_t pgid);

typedef struct proc_opts {
    const char *path;        /* the program: an absolute path (see
                                proc_find_program); never searched */
    const char *const *argv; /* NULL-terminated; argv[0] is the name the
                                program sees */
    const char *const *env;  /* NULL-terminated or NULL: "K=V" sets K over
                                the snapshot, "K" removes K */
    const char *cwd;         /* NULL: tkd's own working directory */
    proc_kind kind;
    int cancel_fd;          /* READ: readable means stop (never read or
                               closed here); -1: none. WRITE: ignored */
    int64_t deadline_ns;    /* READ: CLOCK_MONOTONIC ns, INT64_MAX: none.
                               WRITE: ignored */
    int abort_fd;           /* WRITE: readable means its owner abandons the
                               write: cut short as its own timeout cuts it,
                               PROC_END_ABORTED; not started when readable
                               at the start. Never read or closed here; -1:
                               none. READ: ignored */
    uint32_t timeout_ms;    /* own bound from the spawn; 0: default */
    uint32_t term_grace_ms; /* WRITE past timeout: SIGTERM..SIGKILL */
    uint32_t drain_ms;      /* pipes after the group kill; 0: default */
    size_t stdout_cap;      /* bytes of stdout taken in (captured or
                               passed to on_stdout); 0: the default
                               when captured, no cap when streamed */
    proc_cap_policy cap_policy;
    proc_stdout_fn on_stdout; /* NULL: capture stdout in the result */
    void *on_stdout_arg;
    proc_group_fn on_group; /* NULL: nobody is told */
    void *on_group_arg;
    size_t record_max; /* see proc_stdout_fn */
    char record_delim; /* '\n' after proc_opts_init; '\0' for -z output */
    /* A cut record resumes here (see proc_stdout_fn); NULL: it does not.
     * At most PROC_RESUME_MARK_MAX bytes. */
    const char *record_resume;
    size_t stderr_head; /* excerpt: first bytes kept; 0: default */
    size_t stderr_tail; /* excerpt: last bytes kept; 0: default */
    /* 0: stdout is read as soon as anything is in its pipe (a wakeup for
     * each of the program's writes). > 0: after a read that emptied the
     * pipe, stdout is left to fill for this long before it is read again
     * (the cancel fd, the clocks, stderr and the exit still wake the run
     * at once), in a pipe of PROC_BATCH_PIPE bytes where the system lets
     * it be made so. See "Batched stdout" at the top. */
    uint32_t stdout_batch_ms;
} proc_opts;

/* Starts the guard, which kills every READ's process group still
 * running when tkd ends, however it ends (kill -9 included: guard.c).
 * WRITEs run on, as they would have. Call once, before any thread exists
 * (it forks). 0, or -errno. Without it (the tests of proc, tkd install)
 * runs are what they are, but a process killed outright leaves its
 * READs' processes running. */
int proc_guard_start(void);

/* kind READ, cancel_fd and abort_fd -1, deadline_ns INT64_MAX,
 * cap_policy KILL, record_delim '\n', every bound and cap 0 (their
 * defaults), no callbacks. Always start from this. */
void proc_opts_init(proc_opts *opts);

typedef struct proc_result {
    proc_end end;
    proc_kind kind;
    bool started;           /* a process was spawned */
    proc_spawn_error spawn; /* why it was not started (proc_run < 0) */
    int spawn_errno;        /* the errno behind spawn */
    pid_t pid;              /* the leader = the group id. Reaped when
                               proc_run returns: never signal it */
    proc_status status;     /* the leader's wait status */
    bool reaped;            /* false: still dying, a thread reaps it */
    bool process_killed;    /* we signalled the group to cut it short */
    int kill_signal;        /* SIGKILL, or SIGTERM if that sufficed;
                               0 when not cut short */
    bool drain_timed_out;   /* a pipe stayed open past drain_ms */
    uint32_t timeout_ms;    /* the own bound that applied */
    uint32_t elapsed_ms;    /* spawn to reap */
    uint32_t cleanup_ms;    /* from the end decision (or the leader's
                               exit) to the reap: kill, drain, wait */
    /* stdout, when captured (on_stdout NULL) and started: NUL-terminated,
     * malloc'd; else NULL. */
    char *out;
    size_t out_len;
    uint64_t out_total;     /* bytes read from stdout in all */
    bool out_truncated;     /* out_total exceeded stdout_cap */
    bool records_truncated; /* on_stdout got a record cut at record_max */
    /* stderr excerpt, when started: all of it when it fits head + tail,
     * else the head, a line "[... N bytes omitted ...]", and the tail.
     * NUL-terminated, malloc'd; NULL when not started. */
    char *err;
    size_t err_len;
    uint64_t err_total;
    bool err_truncated;
} proc_result;

/* Runs a program to its end (see the top of this file). Returns 0 when
 * out describes a run (started, or a READ not started because its caller
 * had already cancelled or passed the deadline), -EINVAL for bad options,
 * or the negative errno of a failed spawn (out->spawn says which part
 * failed; -ENOENT with PROC_SPAWN_NOT_FOUND is "program not found"). out
 * is always initialised: call proc_result_fini on it in every case. */
int proc_run(proc_result *out, const proc_opts *opts);
void proc_result_fini(proc_result *r);

/* One line for humans: "exited with status 1", "cancelled by the caller
 * (process group killed)", "write timed out after 60000 ms (SIGTERM, then
 * SIGKILL)", "write abandoned by its owner (ended after SIGTERM)",
 * "program not found (No such file or directory)", ... Never a
 * signal for a kill of ours. Returns what snprintf returns. */
int proc_result_describe(char *buf, size_t len, const proc_result *r);
const char *proc_end_name(proc_end end);

/* Resolves name to an absolute path of an executable regular file. A name
 * with a '/' is taken as it is (it must be absolute); otherwise each
 * absolute directory of search_path (PATH syntax; NULL: PATH from the
 * environment snapshot) is tried in order — empty and relative entries
 * are skipped, never the working directory. 0, -ENOENT, -ENAMETOOLONG.
 * Callers resolve their tools once (pthread_once), not per call. */
int proc_find_program(char *out, size_t outlen, const char *name,
                      const char *search_path);

/* Takes the environment snapshot now. Optional (the first run takes it
 * otherwise); call it in main, before any thread exists, so that nothing
 * can change the environment while it is read. */
void proc_init(void);

/* CLOCK_MONOTONIC in ns: the clock of deadline_ns. */
int64_t proc_now_ns(void);

/* ---- for tests only: tkd never calls these ------------------------------ */

/* Switches that take away one of proc's precautions, so a test can show
 * what the precaution prevents (a negative control). */
enum {
    /* Signal the leader alone, never its group. */
    PROC__TEST_KILL_LEADER_ONLY = 1u << 0,
    /* Wait as if pidfd_open were missing (the waitid polling fallback). */
    PROC__TEST_NO_PIDFD = 1u << 1,
    /* Send no signal at all, so a leader outlives the drain bound and goes
     * to the reaper thread. */
    PROC__TEST_NO_KILL = 1u << 2,
};

/* proc_run with some of the switches above (an OR of them). */
int proc__test_run(proc_result *out, const proc_opts *opts, unsigned test);

#endif /* TK_SERVICE_PROC_H */
