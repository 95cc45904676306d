# SPDX-License-Identifier: MIT
"""A peer that holds connections open until tkd runs out of file
descriptors, as it was measured (under `ulimit -n 256` Git answered
UNKNOWN LIBGIT2_ERROR "Too many open files", Search INTERNAL TOOL_FAILED,
and nothing was logged):

- tkd raises its soft RLIMIT_NOFILE to the hard limit at start and logs
  the capacity;
- with its descriptors used up, Git Status (git through proc/), RevParse
  (libgit2), Search (a tool through proc/) and Orders (libpq's connect)
  end RESOURCE_EXHAUSTED
  TOO_MANY_OPEN_FILES with a retry_after_ms, and the log says so, at most
  once a second with a count of the calls it did not log;
- released, tkd serves the same calls again.

tkd runs under `prlimit --nofile=64:64` (the hard limit too, so its raise
cannot undo the test), and the descriptors are used up deterministically:
raw connections, each completing NNG's SP handshake (tkd's answer says it
accepted it), are opened until /proc/PID/fd counts the limit. By default
a listener takes no more connections than its part of the descriptors,
so that a flood of them leaves the calls' work its own
(test_floods.py); here --max-connections, which is taken as given, lets
the connections take them all, the case this test is about. Where there
is no /proc or no prlimit (macOS), lsof(8) counts tkd's descriptors and
Python's setrlimit, then exec, sets the limits. The calls
travel on a connection made before. The negative controls: the same calls
succeed before the descriptors are used up and after they are released.

Here rather than in tests/integration: it is an attack on the trust
boundary (any local peer may hold connections), reproduced as measured,
beside test_attacks.py. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest
from typing import Callable, List

import tkproc

import tk

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

LIMIT = 64
# NNG's SP header (sp-tcp/ipc mapping): "\0SP\0", the protocol (REQ 0x30,
# REP 0x31) in 16 bits, two reserved bytes.
REQ_HEADER = b"\x00SP\x00\x00\x30\x00\x00"
REP_HEADER = b"\x00SP\x00\x00\x31\x00\x00"
WAIT_S = 20.0
WARNING = "out of file descriptors"


def git(repo: str, *args: str) -> None:
    subprocess.run(["git", "-C", repo] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


# Linux's; elsewhere (macOS) lsof counts, and Python sets the limits.
HAVE_PROC = os.path.exists("/proc/self/fd")
# prlimit's work where there is no prlimit: SOFT HARD PROGRAM ARG...
SETRLIMIT_EXEC = ("import os, resource, sys; "
                  "resource.setrlimit(resource.RLIMIT_NOFILE, "
                  "(int(sys.argv[1]), int(sys.argv[2]))); "
                  "os.execv(sys.argv[3], sys.argv[3:])")


def fd_count(pid: int) -> int:
    if not HAVE_PROC:
        return fd_count_lsof(pid)
    return len(os.listdir("/proc/%d/fd" % pid))


def fd_count_lsof(pid: int) -> int:
    """fd_count without /proc: the descriptors lsof lists for pid (its
    f field; cwd, txt and the like are not descriptors)."""
    r = subprocess.run(["lsof", "-n", "-P", "-w", "-p", str(pid), "-F", "f"],
                       stdout=subprocess.PIPE, text=True, check=False)
    fds = [line for line in r.stdout.splitlines()
           if line.startswith("f") and line[1:].isdigit()]
    if not fds:
        raise AssertionError("lsof -p %d listed no descriptor (exit %d)"
                             % (pid, r.returncode))
    return len(fds)


def nofile_wrapper(nofile: str) -> List[str]:
    """A program that runs tkd (the rest of its argv) with RLIMIT_NOFILE
    SOFT:HARD, by exec (the daemon's pid is tkd's)."""
    if shutil.which("prlimit") is not None:
        return ["prlimit", "--nofile=" + nofile, "--"]
    soft, hard = nofile.split(":")
    return [sys.executable, "-c", SETRLIMIT_EXEC, soft, hard]


class Descriptors(unittest.TestCase):
    """A tkd with a repository under its root, started under a limit."""

    tkd: tkproc.Daemon  # start()'s; tearDown stops them if started
    client: tk.Client

    def start(self, nofile: str) -> None:
        self.tkd, addr = tkproc.start_tkd(
            self.dir.name, [self.root],
            # Orders on a database that is not there: each call tries to
            # connect, which takes a socket first.
            options=["--workers", "2", "--queue-depth", "4",
                     "--max-connections", str(4 * LIMIT),
                     "--search-slots", "1", "--pg",
                     "host=%s dbname=tk" % os.path.join(self.dir.name, "nopg")],
            wrapper=nofile_wrapper(nofile))
        self.sock = addr[len("ipc://"):]
        self.tkd.wait_output("file descriptors: limit", "stderr")
        self.client = tk.Client(addr)

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("fds")
        base = self.dir.name
        os.environ["HOME"] = base
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        self.root = os.path.join(base, "root")
        self.repo = os.path.join(self.root, "r")
        os.makedirs(self.repo)
        git(self.repo, "init", "-q")
        git(self.repo, "config", "user.name", "tk")
        git(self.repo, "config", "user.email", "tk@example.invalid")
        with open(os.path.join(self.repo, "a.txt"), "w", encoding="utf-8") as f:
            f.write("needle\n")
        git(self.repo, "add", "a.txt")
        git(self.repo, "commit", "-q", "-m", "first")
        self.held: List[socket.socket] = []

    def tearDown(self) -> None:
        self.release()
        if hasattr(self, "client"):
            self.client.close()
        if hasattr(self, "tkd"):
            self.tkd.stop()
        self.dir.cleanup()

    # ---- the calls ------------------------------------------------------

    def status(self) -> None:
        self.client.git.status(repo=self.repo, timeout=30)

    def rev_parse(self) -> None:
        self.client.git.rev_parse(repo=self.repo, rev="HEAD", timeout=30)

    def search(self) -> None:
        reply = self.client.search.search(root=self.root, query="needle",
                                          timeout=30)
        self.assertEqual(len(reply.matches), 1)

    def calls(self) -> List[Callable[[], None]]:
        return [self.status, self.rev_parse, self.search]

    def create_order(self) -> None:
        self.client.orders.create_order(timeout=30)

    def db_down(self) -> None:
        """What CreateOrder answers with descriptors to spare."""
        with self.assertRaises(tk.TkError) as cm:
            self.create_order()
        self.assertEqual(cm.exception.reason, "DB_UNAVAILABLE", cm.exception)

    def exhausted(self, call: Callable[[], None]) -> None:
        with self.assertRaises(tk.TkError) as cm:
            call()
        e = cm.exception
        self.assertTrue(e.from_server, e.message)
        self.assertEqual(e.code, tk.Code.RESOURCE_EXHAUSTED,
                         "%s: %s" % (call.__name__, e))
        self.assertEqual(e.reason, "TOO_MANY_OPEN_FILES")
        self.assertGreater(e.status.retry_after_ms, 0)
        self.assertIn("file descriptors", e.message)

    # ---- using the descriptors up ----------------------------------------

    def connect(self) -> socket.socket:
        """A connection tkd accepted: its SP header came back."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(WAIT_S)
        s.connect(self.sock)
        s.sendall(REQ_HEADER)
        got = b""
        while len(got) < len(REP_HEADER):
            chunk = s.recv(len(REP_HEADER) - len(got))
            if not chunk:
                raise AssertionError("tkd closed a new connection")
            got += chunk
        self.assertEqual(got, REP_HEADER)
        return s

    def use_up(self) -> None:
        """Connections until tkd holds LIMIT descriptors. Each one is
        accepted (tkd had a descriptor for it) before the next is made, so
        the count is exact: none waits in the listen backlog."""
        pid = self.tkd.proc.pid
        while fd_count(pid) < LIMIT:
            self.held.append(self.connect())
        self.assertEqual(fd_count(pid), LIMIT)

    def release(self) -> None:
        for s in self.held:
            s.close()
        self.held = []

    def wait_released(self, below: int) -> None:
        """Until tkd has closed its ends (it sees EOF on each): the count
        is the event, read from /proc (or lsof), bounded."""
        pid = self.tkd.proc.pid
        until = time.monotonic() + WAIT_S
        while fd_count(pid) >= below:
            if time.monotonic() > until:
                self.fail("tkd still holds %d descriptors" % fd_count(pid))
            time.sleep(0.01)

    def warnings(self, start: int) -> List[str]:
        text = self.tkd.output("stderr")[start:]
        return [line for line in text.splitlines() if WARNING in line]

    # ---- the tests --------------------------------------------------------

    def test_out_of_descriptors(self) -> None:
        self.start("%d:%d" % (LIMIT, LIMIT))
        for call in self.calls():  # negative control: served
            call()
        self.db_down()
        # What tkd holds idle (the portable build's events are pipes, two
        # descriptors each): after the release it holds that again.
        idle = fd_count(self.tkd.proc.pid)
        mark = self.tkd.mark("stderr")
        self.use_up()
        for call in self.calls() + [self.create_order]:
            self.exhausted(call)
        self.tkd.wait_output(WARNING, "stderr", start=mark)
        self.tkd.wait_output("method=tk.v1.Git/Status code=RESOURCE_EXHAUSTED "
                             "reason=TOO_MANY_OPEN_FILES", "stderr",
                             start=mark)
        self.tkd.wait_output("method=tk.v1.Search/Search "
                             "code=RESOURCE_EXHAUSTED "
                             "reason=TOO_MANY_OPEN_FILES", "stderr",
                             start=mark)
        self.release()
        self.wait_released(idle + 3)
        for call in self.calls():  # served again
            call()
        self.db_down()

    def test_warning_at_most_once_a_second(self) -> None:
        self.start("%d:%d" % (LIMIT, LIMIT))
        mark = self.tkd.mark("stderr")
        self.use_up()
        failed = 0
        t0 = time.monotonic()
        for _ in range(30):
            self.exhausted(self.rev_parse)
            failed += 1
        burst_s = time.monotonic() - t0
        # The property is the rate: a second must pass before the next
        # line, which then counts the calls that were not logged.
        time.sleep(1.1)
        self.exhausted(self.rev_parse)
        failed += 1
        self.tkd.wait_output("more such call(s) since the last line", "stderr",
                             start=mark)
        lines = self.warnings(mark)
        self.assertLessEqual(len(lines), int(burst_s) + 2, "\n".join(lines))
        unlogged = sum(int(m.group(1)) for m in (
            re.search(r"; (\d+) more such call", line) for line in lines)
            if m is not None)
        self.assertEqual(len(lines) + unlogged, failed, "\n".join(lines))
        self.assertIn("method=tk.v1.Git/RevParse", lines[0])

    def test_limit_raised_at_start(self) -> None:
        self.start("%d:%d" % (LIMIT, 2 * LIMIT))
        self.tkd.wait_output("file descriptors: limit %d (raised from %d to "
                             "the hard limit)" % (2 * LIMIT, LIMIT), "stderr")
        limits = "/proc/%d/limits" % self.tkd.proc.pid
        if not os.path.exists(limits):
            self.status()
            self.skipTest("no /proc/PID/limits (macOS): tkd's log says it "
                          "raised the limit, but another process's limits "
                          "cannot be read here to confirm it")
        with open(limits, encoding="utf-8") as f:
            line = [x for x in f if x.startswith("Max open files")][0]
        self.assertEqual(line.split()[3:5], [str(2 * LIMIT), str(2 * LIMIT)])
        self.status()

    def test_limit_at_the_hard_limit(self) -> None:
        # Negative control of the raise: nothing to raise, and it says so
        # by not claiming it.
        self.start("%d:%d" % (LIMIT, LIMIT))
        out = self.tkd.output("stderr")
        self.assertIn("file descriptors: limit %d, " % LIMIT, out)
        self.assertNotIn("raised from", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
