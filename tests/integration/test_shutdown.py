# SPDX-License-Identifier: MIT
"""Shutdown that tells the truth, as it was measured: with
--shutdown-grace-ms 1000 and a commit whose hook takes 6 s, SIGTERM made
tkd exit 0 after 2.3 s while git ran on under PID 1 holding index.lock;
the commit landed 4 s later and its client got a connection reset.

Now (DESIGN.md, Lifetimes): a WRITE still running when the grace runs out
is logged (method, call, connection, pid) and stopped — its process group
gets SIGTERM (git removes its lock files), SIGKILL after proc's term grace
— its client is answered UNAVAILABLE SHUTTING_DOWN with write_completed
false and process_killed, and tkd exits 3. A write with no process of its
own (it runs in tkd) cannot be stopped: it is logged as left running, its
client loses the connection, and tkd exits 3 all the same. A write that
ends within the grace is waited for, and tkd exits 0 (the negative
control).

Hooks announce themselves through fifos and the daemons through their
output: nothing here waits by sleeping. Run by meson under
/usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import time
import unittest
from typing import Set

import tkproc

import tk
from tk.v1 import control_pb2

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0
EXIT_OUTLIVED = 3  # tkd --help: calls outlived --shutdown-grace-ms


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


# Linux's process table; elsewhere (macOS) ps(1) reads the same fields.
HAVE_PROC = os.path.exists("/proc/self/stat")


def group_alive(pgid: int) -> Set[int]:
    """The processes of a process group that are not dead (zombies are)."""
    if not HAVE_PROC:
        return group_alive_ps(pgid)
    alive = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            alive.add(int(name))
    return alive


def group_alive_ps(pgid: int) -> Set[int]:
    """group_alive without /proc: every process's pid, process group and
    state from `ps -A` (POSIX, and the state column BSD's and procps')."""
    out = subprocess.run(["ps", "-A", "-o", "pid=,pgid=,stat="], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    alive = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        if int(fields[1]) == pgid and fields[2][0] not in ("Z", "X"):
            alive.add(int(fields[0]))
    return alive


class CommitAtShutdown(unittest.TestCase):
    """tkd with a repository whose pre-commit hook says "<pgid>" on a fifo,
    then blocks (until killed, or until released through a second fifo)."""

    tkd: tkproc.Daemon  # start()'s; tearDown stops them if started
    client: tk.Client

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("stop")
        base = self.dir.name
        os.environ["HOME"] = base
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        self.root = os.path.join(base, "root")
        self.repo = os.path.join(self.root, "r")
        os.makedirs(self.repo)
        git(self.repo, "init", "-q")
        git(self.repo, "config", "user.name", "tk")
        git(self.repo, "config", "user.email", "tk@example.invalid")
        self.write("a.txt", "a\n")
        git(self.repo, "add", "a.txt")
        git(self.repo, "commit", "-q", "-m", "first")
        self.head = git(self.repo, "rev-parse", "HEAD")
        self.entered = os.path.join(base, "entered.fifo")
        self.go = os.path.join(base, "go.fifo")
        os.mkfifo(self.entered, 0o600)
        os.mkfifo(self.go, 0o600)

    def tearDown(self) -> None:
        if hasattr(self, "client"):
            self.client.close()
        if hasattr(self, "tkd"):
            self.tkd.stop()
        self.dir.cleanup()

    def write(self, name: str, text: str) -> None:
        with open(os.path.join(self.repo, name), "w", encoding="utf-8") as f:
            f.write(text)

    def hook(self, block: str) -> None:
        path = os.path.join(self.repo, ".git", "hooks", "pre-commit")
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n"
                    # its process group: field 5 of /proc's stat, or
                    # ps where there is no /proc (macOS)
                    "if [ -r /proc/$$/stat ]; then\n"
                    "  read -r stat < /proc/$$/stat\n"
                    "  set -- $stat\n"
                    "  pgid=$5\n"
                    "else\n"
                    "  pgid=$(ps -o pgid= -p $$)\n"
                    "fi\n"
                    "echo $pgid > '%s'\n"
                    "%s\n" % (self.entered, block))
        os.chmod(path, 0o755)

    def start(self, grace_ms: int) -> None:
        self.tkd, addr = tkproc.start_tkd(
            self.dir.name, [self.root],
            options=["--shutdown-grace-ms", str(grace_ms)])
        self.client = tk.Client(addr)

    def commit(self) -> "tk.Call":
        """A Commit of a change to a tracked file (--all, so git holds
        index.lock while the hook runs), entered into its hook."""
        self.write("a.txt", "b\n")
        call = self.client.git.start_commit(repo=self.repo, message="second",
                                            all=True, timeout=60)
        self.pgid = int(tkproc.read_line(self.entered))
        # The lock the measured commit held when tkd had gone.
        self.assertTrue(os.path.exists(
            os.path.join(self.repo, ".git", "index.lock")))
        return call

    def sigterm(self) -> int:
        self.tkd.proc.send_signal(15)
        return self.tkd.proc.wait(timeout=WAIT_S)

    def test_write_stopped_when_the_grace_runs_out(self) -> None:
        self.hook("exec sleep 1000")
        self.start(300)
        call = self.commit()
        rc = self.sigterm()
        err = self.tkd.output("stderr")
        self.assertEqual(rc, EXIT_OUTLIVED, err)
        self.assertIn("shutdown: grace over, stopping the write: "
                      "method=tk.v1.Git/Commit kind=WRITE id=%d " % call.call_id,
                      err)
        self.assertIn("pid=%d " % self.pgid, err)
        self.assertIn("1 call(s) outlived the grace of 300 ms: 1 ended and "
                      "answered, 0 left running", err)
        # The client is told the truth, by tkd itself.
        st = call.status(timeout=WAIT_S)
        self.assertTrue(st.from_server, st.message)
        self.assertEqual(st.code, tk.Code.UNAVAILABLE, st.message)
        self.assertEqual(st.reason, "SHUTTING_DOWN")
        self.assertEqual(st.cancellation.cause, tk.Cause.SHUTDOWN)
        self.assertFalse(st.cancellation.write_completed)
        self.assertTrue(st.cancellation.process_killed)
        self.assertIn("did not complete", st.message)
        # And it is true: nothing of the write runs on, it left no lock,
        # and the commit did not land.
        self.assertEqual(group_alive(self.pgid), set())
        self.assertFalse(os.path.exists(
            os.path.join(self.repo, ".git", "index.lock")))
        self.assertEqual(git(self.repo, "rev-parse", "HEAD"), self.head)

    def test_write_within_the_grace(self) -> None:
        # Negative control: a write that ends within the grace is waited
        # for, lands, is answered OK with write_completed, and tkd exits 0.
        self.hook("read -r go < '%s'" % self.go)
        self.start(20000)
        call = self.commit()
        mark = self.tkd.mark("stderr")
        self.tkd.proc.send_signal(15)
        self.tkd.wait_output("shutdown: waiting for 1 write(s)", "stderr",
                             start=mark)
        with open(self.go, "w", encoding="utf-8") as f:
            f.write("go\n")
        rc = self.tkd.proc.wait(timeout=WAIT_S)
        st = call.status(timeout=WAIT_S)
        self.assertEqual(rc, 0, self.tkd.output("stderr"))
        self.assertTrue(st.ok, st.message)
        self.assertTrue(st.cancellation.write_completed)
        self.assertNotIn("grace over", self.tkd.output("stderr"))
        self.assertNotEqual(git(self.repo, "rev-parse", "HEAD"), self.head)
        self.assertFalse(os.path.exists(
            os.path.join(self.repo, ".git", "index.lock")))


class InProcessWrite(unittest.TestCase):
    """testd's SlowWrite: a WRITE that runs in the daemon, with no process
    to stop, and does not look at its call while it runs."""

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("stopd")
        addr = "ipc://%s/testd.sock" % self.dir.name
        self.testd = tkproc.Daemon([tkproc.program("TESTD"), "--listen", addr,
                                    "--grace-ms", "200", "--stop-ms", "300"])
        self.testd.wait_output("READY")
        self.client = tk.Client(addr)

    def tearDown(self) -> None:
        self.client.close()
        self.testd.stop()
        self.dir.cleanup()

    def test_write_left_running(self) -> None:
        call = self.client.start("tk.test.Test/SlowWrite",
                                 control_pb2.PingRequest(data=b"30000"),
                                 timeout=60, reply_type=control_pb2.PingReply)
        self.testd.wait_output("ENTERED SlowWrite")
        t0 = time.monotonic()
        self.testd.proc.send_signal(15)
        rc = self.testd.proc.wait(timeout=WAIT_S)
        self.assertLess(time.monotonic() - t0, 15)  # not the write's 30 s
        err = self.testd.output("stderr")
        self.assertEqual(rc, EXIT_OUTLIVED, err)
        self.assertIn("grace over, stopping the write: "
                      "method=tk.test.Test/SlowWrite kind=WRITE id=%d "
                      % call.call_id, err)
        self.assertIn("pid=- ", err)  # it runs no process
        self.assertIn("left running at exit, never answered: "
                      "method=tk.test.Test/SlowWrite", err)
        self.assertIn("1 call(s) outlived the grace of 200 ms: 0 ended and "
                      "answered, 1 left running", err)
        # Its client loses the connection: whether it ran is unknown,
        # which is all it can be told.
        st = call.status(timeout=WAIT_S)
        self.assertFalse(st.from_server)
        self.assertEqual(st.code, tk.Code.UNAVAILABLE, st.message)


if __name__ == "__main__":
    unittest.main(verbosity=2)
