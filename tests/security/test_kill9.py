# SPDX-License-Identifier: MIT
"""After kill -9 of tkd, a READ's processes die with it; a WRITE finishes
and leaves no lock (issue 31, point 7).

On main at 31f2572, a READ's git (and the fsmonitor it had started) ran
on after tkd was killed outright, reparented to init with nobody to
answer for them; tkd's own kill of a READ's process group needs tkd to be
running. Now a guard process (service/proc/guard.c) kills every READ's
group that is still running when tkd ends, however it ends.

- READ: tkd's git is a stand-in on its PATH that starts a child of its
  own (as git starts an fsmonitor or a pager) and waits; the test kills
  tkd with SIGKILL and waits, on pidfds (no polling, no sleeps), for both
  to die, and for the guard to exit.
- WRITE (and the negative control of the kill's scope): a real git commit
  whose pre-commit hook, the repository owner's, waits on a fifo. tkd is
  killed with SIGKILL; the hook is still alive (the pidfd is not
  readable); released, the commit lands and no index.lock is left.

Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import select
import signal
import subprocess
import unittest
from typing import List, Optional, Tuple

import tkproc

import tk
from tk.v1 import git_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def children(pid: int) -> List[int]:
    out: List[int] = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
            out += [int(c) for c in f.read().split()]
    return out


def wait_dead(pids: List[int], timeout: float = WAIT_S) -> List[int]:
    """Waits on each pid's pidfd (readable once it has exited); the pids
    still alive after timeout."""
    alive = []
    fds = []
    for p in pids:
        try:
            fds.append((p, os.pidfd_open(p)))
        except ProcessLookupError:
            pass  # gone already
    for p, fd in fds:
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            alive.append(p)
        os.close(fd)
    return alive


class Kill9(unittest.TestCase):

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("k9")
        base = self.dir.name
        os.environ["HOME"] = base
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        self.root = os.path.join(base, "root")
        self.repo = os.path.join(self.root, "r")
        os.makedirs(self.repo)
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "config", "user.name", "tk")
        git(self.repo, "config", "user.email", "tk@example.invalid")
        with open(os.path.join(self.repo, "a.txt"), "w") as f:
            f.write("a\n")
        git(self.repo, "add", "a.txt")
        git(self.repo, "commit", "-q", "-m", "first")
        self.fifo = os.path.join(base, "fifo")
        os.mkfifo(self.fifo)
        self.release = os.path.join(base, "release")
        os.mkfifo(self.release)
        self.tkd: Optional[tkproc.Daemon] = None
        self.client: Optional[tk.Client] = None

    def tearDown(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.tkd is not None and self.tkd.proc.poll() is None:
            self.tkd.stop()
        elif self.tkd is not None:
            self.tkd.stop()  # reaps and joins its readers
        self.dir.cleanup()

    def start(self, path_first: str = ""
              ) -> Tuple[tkproc.Daemon, tk.Client]:
        env_path = os.environ["PATH"]
        if path_first:
            os.environ["PATH"] = path_first + ":" + env_path
        try:
            tkd, addr = tkproc.start_tkd(self.dir.name, [self.root])
        finally:
            os.environ["PATH"] = env_path
        self.tkd, self.client = tkd, tk.Client(addr)
        return tkd, self.client

    def guard_of(self, tkd: tkproc.Daemon) -> List[int]:
        """tkd's children when it is idle: its guard (and nothing else)."""
        return children(tkd.proc.pid)

    def test_read_dies_with_tkd(self) -> None:
        fake = os.path.join(self.dir.name, "bin")
        os.makedirs(fake)
        with open(os.path.join(fake, "git"), "w") as f:
            # A git that starts a program of its own, says both pids, and
            # waits for it (the child waits for ever). First it writes 1 MiB
            # to stderr, more than the pipe holds, so that it says the pids
            # only once tkd reads its pipes, which tkd does after telling
            # the guard of the group (proc/execute.c): a kill -9 before that
            # falls in the gap proc/guard.c names (spawned, not yet told),
            # which a loaded machine once hit.
            f.write("#!/bin/sh\nhead -c 1048576 /dev/zero >&2\n"
                    "sleep 1000 &\necho \"$$ $!\" > '%s'\n"
                    "wait\n" % self.fifo)
        os.chmod(os.path.join(fake, "git"), 0o755)
        tkd, client = self.start(fake)
        guard = self.guard_of(tkd)
        call = client.start("tk.v1.Git/Status",
                            self.status_request(), timeout=60)
        pids = [int(p) for p in tkproc.read_line(self.fifo).split()]
        self.addCleanup(self.kill_left, pids)
        self.assertEqual(wait_dead(pids, 0), pids)  # running
        os.kill(tkd.proc.pid, signal.SIGKILL)
        tkd.proc.wait()
        self.assertEqual(wait_dead(pids), [],
                         "a READ's processes outlived tkd")
        self.assertEqual(len(guard), 1, "tkd's children: %r" % guard)
        self.assertEqual(wait_dead(guard), [], "the guard outlived tkd")
        with self.assertRaises(tk.TkError):
            call.result()

    def kill_left(self, pids: List[int]) -> None:
        """A failed test leaves no process behind."""
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def status_request(self) -> git_pb2.GitStatusRequest:
        return git_pb2.GitStatusRequest(repo=self.repo)

    def test_write_finishes_and_leaves_no_lock(self) -> None:
        hook = os.path.join(self.repo, ".git", "hooks", "pre-commit")
        with open(hook, "w") as f:
            # The owner's hook: says its pid and its git's, then waits to
            # be released.
            f.write("#!/bin/sh\necho \"$$ $PPID\" > '%s'\nread x < '%s'\n"
                    "exit 0\n" % (self.fifo, self.release))
        os.chmod(hook, 0o755)
        tkd, client = self.start()
        guard = self.guard_of(tkd)
        with open(os.path.join(self.repo, "a.txt"), "w") as f:
            f.write("changed\n")
        # With all, git holds index.lock while the hook runs.
        call = client.start("tk.v1.Git/Commit", git_pb2.GitCommitRequest(
            repo=self.repo, message="landed", all=True), timeout=60)
        pids = [int(p) for p in tkproc.read_line(self.fifo).split()]
        self.addCleanup(self.kill_left, pids)
        self.assertTrue(os.path.exists(
            os.path.join(self.repo, ".git", "index.lock")))
        os.kill(tkd.proc.pid, signal.SIGKILL)
        tkd.proc.wait()
        self.assertEqual(wait_dead(guard), [], "the guard outlived tkd")
        # Negative control of the kill's scope: the write's processes are
        # alive after tkd and the guard are gone (the READ's check above
        # would see such a survivor).
        self.assertEqual(wait_dead(pids, 0), pids, "the write was killed")
        with open(self.release, "w") as f:
            f.write("go\n")
        self.assertEqual(wait_dead(pids), [])
        self.assertEqual(git(self.repo, "log", "-1", "--format=%s").strip(),
                         "landed")
        self.assertFalse(os.path.exists(
            os.path.join(self.repo, ".git", "index.lock")))
        with self.assertRaises(tk.TkError):
            call.result()


if __name__ == "__main__":
    unittest.main(verbosity=2)
