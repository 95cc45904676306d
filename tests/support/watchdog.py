#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs a test and, when it is still running shortly before meson's timeout
would kill it without a word, shows where it hangs: every thread's stack
of the test and of each of its descendant processes, then kills them all.

  watchdog.py [--margin SECONDS] SECONDS CMD [ARG...]

tests/meson.build runs every test through it, SECONDS being the test's own
`timeout:`. Meson kills a test at that timeout times the setup's
timeout_multiplier, which the setup exports as TK_TIMEOUT_MULTIPLIER (a
`meson test -t N` wins: meson does not pass it on, so it is read from
meson's own command line; 0 or less means no timeout, so no watchdog).

The dump starts MARGIN seconds before meson's deadline (default: a tenth
of it, at least 15 s, at most half of it) and is printed on stderr: a
header naming the command and the time it has run, the process tree
(descendants by their parent pids, and orphans left in the session meson
gave the test), then for each process (the test first) its command line
and `gdb -batch`'s `thread apply all bt`; where gdb is missing, fails or
would outlast the deadline, the threads' names, states and kernel wait
channels (and kernel stacks, when readable) from /proc. Then the Python
stacks of each Python process that registered faulthandler for SIGUSR1
(it prints them on its own stderr), and last a summary, a line per group
of threads in the same place: meson's --print-errorlogs shows only the
last 100 lines of a test's output. Then every process of the tree is
stopped and killed, and the watchdog exits 124 (as timeout(1) does).

Otherwise the command's exit status passes through: its exit code, or,
when a signal killed it, the same signal (without a core dump). SIGTERM,
SIGINT and SIGHUP sent to the watchdog are forwarded to the command's
process group, which holds the test and whatever it started without a
group of its own, as meson's process group did before.
"""

import ctypes
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import time
from typing import List, Optional, Tuple

EXIT_HUNG = 124
# Meson's deadline minus the margin is when the dump starts. gdb takes
# 0.3-1 s to attach to a process and print its stacks, in the plain build
# as under the sanitizers (testd in the tsan build: 0.5 s), more on a
# loaded machine; a Python process adds half a second for faulthandler; a
# test's tree holds up to about ten processes (test_orders: the test, tkd
# and a PostgreSQL cluster). A tenth of the deadline, at least 15 s, leaves
# time for all of them several times over (the shortest deadline, 30 s x 3,
# gives 15 s); the dump never runs past the deadline whatever the margin
# (see GDB_MAX_S). --margin overrides it, for the watchdog's own test.
MARGIN_FRACTION = 0.10
MARGIN_MIN_S = 15.0
# One process's gdb may take this long, and never longer than what is
# left before meson's deadline minus KILL_RESERVE_S, which stopping and
# killing the tree and reaping take. The rest get the /proc fallback.
GDB_MAX_S = 30.0
KILL_RESERVE_S = 3.0
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PR_SET_PDEATHSIG = 1
PR_SET_PTRACER = 0x59616D61

libc = ctypes.CDLL(None, use_errno=True)


def say(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def meson_cli_multiplier():
    """The -t/--timeout-multiplier of the `meson test` that started us, if
    it gave one (meson uses it in place of the setup's, and tells no test)."""
    if os.path.exists("/proc/self/cmdline"):
        try:
            with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            return None
    else:
        # No /proc (macOS): ps's args column, split on blanks (the
        # arguments' boundaries are lost, which -t N does not need).
        try:
            argv = subprocess.run(
                ["ps", "-o", "args=", "-p", str(os.getppid())],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                check=False).stdout.decode("utf-8", "replace").split()
        except OSError:
            return None
    if "test" not in argv or not any(
            os.path.basename(a).startswith("meson") for a in argv[:2]):
        return None
    for i, a in enumerate(argv):
        if a in ("-t", "--timeout-multiplier") and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith("--timeout-multiplier="):
            value = a.split("=", 1)[1]
        elif a.startswith("-t") and not a.startswith("--") and len(a) > 2:
            value = a[2:]
        else:
            continue
        try:
            return float(value)
        except ValueError:
            return None
    return None


def multiplier():
    m = meson_cli_multiplier()
    if m is None:
        m = float(os.environ.get("TK_TIMEOUT_MULTIPLIER") or 1)
    return m


# ---- processes, from /proc ------------------------------------------------

def proc_stat(pid, task=None):
    """(comm, state, ppid, session) of a process (or of one of its
    threads), or None when it is gone."""
    path = "/proc/%d/stat" % pid if task is None else \
        "/proc/%d/task/%d/stat" % (pid, task)
    try:
        with open(path, "rb") as f:
            s = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    comm = s[s.index("(") + 1:s.rindex(")")]
    fields = s[s.rindex(")") + 2:].split()
    return comm, fields[0], int(fields[1]), int(fields[3])


def read_text(path, default=""):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return default


def cmdline(pid):
    args = read_text("/proc/%d/cmdline" % pid).split("\0")
    return " ".join(a for a in args if a) or \
        "[%s]" % (proc_stat(pid) or ("?",))[0]


def family(test_pid):
    """The test and every live descendant (walking the parents in
    /proc/*/stat), parents before children; and, when we lead our session
    (meson starts every test in a session of its own), the processes of
    that session that were orphaned and handed to init."""
    children: dict[int, list[int]] = {}
    orphans = []
    me = os.getpid()
    lead = os.getsid(0) == me
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        st = proc_stat(pid)
        if st is None or st[1] == "Z" or pid == me:
            continue
        children.setdefault(st[2], []).append(pid)
        # in our session, neither the test nor our gdb: an orphan
        if lead and st[3] == me and st[2] != me:
            orphans.append(pid)
    out = []
    todo = [test_pid] if proc_stat(test_pid) is not None else []
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo = sorted(children.get(pid, [])) + todo
    return out + sorted(p for p in orphans if p not in out)


# ---- the dump -------------------------------------------------------------

def catches(pid, sig):
    mask = re.search(r"^SigCgt:\s*([0-9a-f]+)$",
                     read_text("/proc/%d/status" % pid), re.M)
    return mask is not None and int(mask.group(1), 16) >> (sig - 1) & 1


def python_stacks(pid):
    """SIGUSR1 to a Python process that registered faulthandler for it
    (tests/conformance, tests/python, tests/fakes, tests/arch, tests/lint
    do): it prints every thread's Python stack on its own stderr. Never to
    one that does not catch SIGUSR1, which it would kill."""
    st = proc_stat(pid)
    if st is None or not st[0].startswith("python") or \
            not catches(pid, signal.SIGUSR1):
        return False
    say("")
    say("---- pid %d (%s): its Python stacks, from faulthandler:"
        % (pid, st[0]))
    try:
        os.kill(pid, signal.SIGUSR1)
        time.sleep(0.5)  # it writes from its signal handler, at once
    except ProcessLookupError:
        return False
    return True


def gdb_stacks(pid, seconds):
    """Prints gdb's `thread apply all bt` of pid. Returns each thread's
    (name, frames), frames as where() describes them, innermost first;
    None when gdb gave no stack."""
    gdb = shutil.which("gdb")
    if gdb is None:
        say("  (no gdb: install it, tools/install-deps does)")
        return None
    cmd = [gdb, "-p", str(pid), "-batch", "-nx",
           "-iex", "set debuginfod enabled off",
           "-ex", "set pagination off", "-ex", "thread apply all bt"]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=seconds, check=False)
        out, note = r.stdout, None
    except subprocess.TimeoutExpired as e:
        out, note = e.stdout or b"", "gdb gave no answer in %.0f s" % seconds
    text = out.decode("utf-8", "replace").splitlines()
    threads: List[Tuple[str, List[str]]] = []
    for line in text:
        head = re.match(r'Thread \d+ .*"(.*)"\):$', line) or \
            re.match(r"Thread \d+ ", line)
        if head:
            threads.append((head.group(1) if head.groups() else "?", []))
        elif threads and re.match(r"#\d+ ", line):
            threads[-1][1].append(where(line))
    found: Optional[List[Tuple[str, List[str]]]] = threads
    if any(frames for _, frames in threads):
        # gdb's own chatter before the first thread (libthread_db, the
        # current line) and after the last (the detach) says nothing here.
        first = next(i for i, line in enumerate(text)
                     if line.startswith("Thread "))
        for line in text[first:]:
            if not line.startswith("[Inferior "):
                say("  " + line)
    else:
        found = None
        for line in text[-15:]:
            say("  gdb: " + line)
    if note:
        say("  (%s)" % note)
    return found


def where(frame):
    """A frame of gdb's backtrace as a name: the function, or the library
    when gdb knows no function there."""
    # "#3  0x00007f... in name (args) at file:line" or "... from lib";
    # a C++ name of a sanitizer runtime may hold spaces and parentheses.
    m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(.+?) \(", frame)
    if m is None:
        return "?"
    lib = re.search(r"\) from (\S+)$", frame)
    if m.group(1) == "??" and lib:
        return "?? (%s)" % os.path.basename(lib.group(1))
    return m.group(1)


# The frames of the C library and of the sanitizers' runtimes under a
# blocking call (futex internals, interceptors) and those that start every
# thread or program: not where a thread is.
RUNTIME_INNER = re.compile(r"^_|::|<")
THREAD_START = {"start_thread", "clone3", "clone", "__libc_start_call_main",
                "__libc_start_main_impl", "__libc_start_main", "_start",
                "__tsan_thread_start_func", "asan_thread_start"}


def chain(frames):
    """A thread's stack on one line, innermost first: the outermost of the
    runtime's frames it is blocked in, then the callers up to (not
    including) the thread's start."""
    frames = [f for f in frames if f not in THREAD_START]
    while len(frames) > 1 and RUNTIME_INNER.search(frames[0]) and \
            RUNTIME_INNER.search(frames[1]):
        frames = frames[1:]
    runs: list[list] = []  # [name, count]: "?? (libnng.so.1) x4" for four in a row
    for f in frames:
        if runs and runs[-1][0] == f:
            runs[-1][1] += 1
        else:
            runs.append([f, 1])
    names = [f if n == 1 else "%s x%d" % (f, n) for f, n in runs]
    if len(names) > 12:
        names = names[:12] + ["..."]
    return " < ".join(names) or "?"


def proc_threads(pid):
    """Prints what /proc says of each thread: name, state, kernel wait
    channel, the system call it is in, and the kernel stack where readable.
    Returns each thread's (name, one line)."""
    task_dir = "/proc/%d/task" % pid
    tasks = sorted(int(t) for t in os.listdir(task_dir) if t.isdigit()) \
        if os.path.isdir(task_dir) else []
    threads = []
    for tid in tasks:
        st = proc_stat(pid, tid)
        if st is None:
            continue
        base = "%s/%d/" % (task_dir, tid)
        wchan = read_text(base + "wchan", "?") or "-"
        say("  thread %d \"%s\" state %s, wchan %s, syscall %s" % (
            tid, st[0], st[1], wchan,
            read_text(base + "syscall", "?").split(" ")[0]))
        for line in read_text(base + "stack").splitlines():
            say("      " + line)
        threads.append((st[0], "state %s, in the kernel at %s" % (st[1],
                                                                  wchan)))
    return threads


def summary(pid, comm, threads, python):
    """One line per group of threads of pid that are in the same place:
    what meson's --print-errorlogs shows of a long dump is its last 100
    lines."""
    groups: dict[str, list[str]] = {}
    for name, line in threads:
        groups.setdefault(line, []).append(name)
    say("  pid %d %s:%s" % (pid, comm, " (its Python stacks: just above)"
                            if python else ""))
    for line, names in groups.items():
        label = "%d threads" % len(names) if len(names) > 1 else "thread"
        if len(set(names)) == 1:
            label += ' "%s"' % names[0]
        say("    %s: %s" % (label, line))


def dump(test_pid, cmd, started, deadline):
    pids = family(test_pid)
    say("")
    say("==== watchdog: still running after %.0f s, %.0f s before meson's "
        "timeout: %s" % (time.monotonic() - started,
                         deadline - time.monotonic(), " ".join(cmd)))
    say("==== watchdog: %d process(es); each one's threads follow, then the "
        "watchdog kills them all and exits %d" % (len(pids), EXIT_HUNG))
    for pid in pids:
        st = proc_stat(pid)
        if st is not None:
            say("  %7d  parent %7d  %s  %s"
                % (pid, st[2], st[1], cmdline(pid)))
    where_they_are = []
    for pid in pids:
        st = proc_stat(pid)
        if st is None:
            continue
        say("")
        say("---- pid %d (parent %d, %s): %s"
            % (pid, st[2], st[0], cmdline(pid)))
        left = deadline - KILL_RESERVE_S - time.monotonic()
        stacks = gdb_stacks(pid, min(GDB_MAX_S, left)) if left >= 2 else None
        if stacks is not None:
            threads = [(name, chain(frames)) for name, frames in stacks]
        else:
            if left < 2:
                say("  (no time left for gdb before meson's timeout)")
            say("  from /proc:")
            threads = proc_threads(pid)
        where_they_are.append((pid, st[0], threads))
    # Last, so that they come just before the summary: near the end, which
    # is what meson's --print-errorlogs shows of a long output.
    python = [pid for pid in pids if python_stacks(pid)]
    say("")
    say("==== watchdog: where each thread is, innermost call first (the "
        "stacks above in full)")
    for pid, comm, threads in where_they_are:
        summary(pid, comm, threads, pid in python)


def kill_family(test_pid):
    """Stops every process of the tree (so none starts another), until a
    walk finds no new one, then kills them all. Returns how many."""
    stopped = set()
    for _ in range(50):
        new = [p for p in family(test_pid) if p not in stopped]
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
            stopped.add(pid)
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    until = time.monotonic() + KILL_RESERVE_S
    while time.monotonic() < until and any(
            (proc_stat(p) or "ZZ")[1] != "Z" for p in stopped):
        time.sleep(0.05)
    return len(stopped)


# ---- running the command --------------------------------------------------

def start(cmd):
    me = os.getpid()

    def in_child():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
        os.setpgid(0, 0)
        if not sys.platform.startswith("linux"):
            return  # no prctl (macOS): neither of the two below
        # The test never outlives the watchdog (meson's SIGKILL, when it
        # comes, reaches the watchdog's group, no longer the test's).
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != me:
            os._exit(1)
        # Where Yama lets a process be traced by its ancestors only
        # (ptrace_scope 1, Ubuntu's default) and we lack CAP_SYS_PTRACE (a
        # container), this lets our gdb attach to the test itself; its
        # children get the /proc fallback there. Without Yama: EINVAL.
        libc.prctl(PR_SET_PTRACER, me, 0, 0, 0)

    return subprocess.Popen(cmd, preexec_fn=in_child)


def exit_waiter(pid):
    """What select() finds readable once pid has terminated: its pidfd
    (Linux), else a kqueue watching its exit (macOS); None when it has
    terminated already."""
    if sys.platform == "linux":  # os.pidfd_open: Python 3.9, Linux 5.3
        return os.pidfd_open(pid)
    kq = select.kqueue()
    try:
        kq.control([select.kevent(
            pid, select.KQ_FILTER_PROC,
            select.KQ_EV_ADD | select.KQ_EV_ONESHOT,
            select.KQ_NOTE_EXIT)], 0)
    except ProcessLookupError:
        kq.close()
        return None
    return kq


def exit_as(returncode):
    if returncode >= 0:
        sys.exit(returncode)
    sig = -returncode
    # Die of the same signal, so that meson reports it as it did; the
    # test's core, if any, is written already.
    resource.setrlimit(resource.RLIMIT_CORE,
                       (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    try:
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):
        pass  # SIGKILL, SIGSTOP: theirs already
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    os.kill(os.getpid(), sig)
    sys.exit(128 + sig)


def usage():
    say("usage: watchdog.py [--margin SECONDS] SECONDS CMD [ARG...]")
    sys.exit(2)


def main(argv):
    margin = None
    if argv[:1] == ["--margin"] and len(argv) > 1:
        margin, argv = float(argv[1]), argv[2:]
    if len(argv) < 2:
        usage()
    try:
        total = float(argv[0]) * multiplier()
    except ValueError:
        usage()
    cmd = argv[1:]
    if margin is None:
        margin = min(max(MARGIN_FRACTION * total, MARGIN_MIN_S), total / 2)

    # Blocked until the handlers that forward them know the child: one
    # that comes while it starts is forwarded, not lost (nor fatal to us).
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    started = time.monotonic()
    try:
        child = start(cmd)
    except OSError as e:
        say("watchdog: cannot run %s: %s" % (cmd[0], e))
        sys.exit(127)

    def forward(sig, frame):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        signal.signal(sig, forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    waiter = exit_waiter(child.pid)
    if total > 0 and waiter is not None:
        deadline = started + total
        fire_at = deadline - margin
        while not select.select([waiter], [], [],
                                max(0.0, fire_at - time.monotonic()))[0]:
            if time.monotonic() >= fire_at:
                dump(child.pid, cmd, started, deadline)
                n = kill_family(child.pid)
                child.wait()
                say("")
                say("==== watchdog: killed %d process(es) after %.0f s; exit "
                    "status %d means the test hung (stacks above)" % (
                        n, time.monotonic() - started, EXIT_HUNG))
                sys.exit(EXIT_HUNG)
    exit_as(child.wait())


if __name__ == "__main__":
    main(sys.argv[1:])
