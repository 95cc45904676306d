# SPDX-License-Identifier: MIT
"""Test support for the Python tests: tkd and testd as child processes on
private sockets, waited for by their output (never by sleeping). The
Python twin of support.h's ts_spawn / ts_wait_output.

The tests import it, and the client (tk), from the PYTHONPATH that meson
gives them (tests/meson.build: tests/support and client/python); by hand,
CONTRIBUTING.md says how.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

SOURCE_ROOT = os.environ.get("TK_SOURCE_ROOT") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

START_S = 20.0


def program(var: str) -> str:
    """A built program handed to the test by meson (TKD, TESTD)."""
    path = os.environ.get(var, "")
    if not path:
        raise RuntimeError("%s is not set (run the tests with meson test)" % var)
    return path


class Daemon:
    """A child process whose stdout and stderr are read by two threads into
    buffers that wait_output searches."""

    def __init__(self, argv: List[str],
                 env: Optional[Dict[str, str]] = None) -> None:
        self.argv = argv
        self._cv = threading.Condition()
        self._out: Dict[str, str] = {"stdout": "", "stderr": ""}
        self._open = {"stdout": True, "stderr": True}
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE,
                                     start_new_session=True, env=env)
        self._threads = [
            threading.Thread(target=self._pump, args=(name, stream), daemon=True)
            for name, stream in (("stdout", self.proc.stdout),
                                 ("stderr", self.proc.stderr))]
        for t in self._threads:
            t.start()

    def _pump(self, name: str, stream: object) -> None:
        fd = stream.fileno()  # type: ignore[attr-defined]
        while True:
            data = os.read(fd, 8192)
            with self._cv:
                if not data:
                    self._open[name] = False
                else:
                    self._out[name] += data.decode("utf-8", "replace")
                self._cv.notify_all()
            if not data:
                return

    def output(self, stream: str = "stdout") -> str:
        with self._cv:
            return self._out[stream]

    def mark(self, stream: str = "stdout") -> int:
        """Where output read later starts (for wait_output's start)."""
        with self._cv:
            return len(self._out[stream])

    def wait_output(self, needle: str, stream: str = "stdout",
                    timeout: float = START_S, start: int = 0) -> None:
        """Waits until needle appears in stream after position start;
        AssertionError when timeout passes or the stream closes first."""
        with self._cv:
            ok = self._cv.wait_for(
                lambda: needle in self._out[stream][start:] or not self._open[stream],
                timeout)
            if not ok or needle not in self._out[stream][start:]:
                raise AssertionError("%s: no %r on %s within %.0f s; stderr:\n%s"
                                     % (os.path.basename(self.argv[0]), needle,
                                        stream, timeout, self._out["stderr"]))

    def wait_until(self, pred: Callable[[str], bool], what: str,
                   stream: str = "stderr", timeout: float = START_S) -> None:
        """Waits until pred(all of stream so far) holds; AssertionError
        naming what when timeout passes or the stream closes first."""
        with self._cv:
            ok = self._cv.wait_for(
                lambda: pred(self._out[stream]) or not self._open[stream],
                timeout)
            if not ok or not pred(self._out[stream]):
                raise AssertionError("%s: %s never came on %s within %.0f s; "
                                     "stderr:\n%s"
                                     % (os.path.basename(self.argv[0]), what,
                                        stream, timeout, self._out["stderr"]))

    def stop(self) -> int:
        """SIGTERM, then reaps; the exit status (negative: signal)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rv = self.proc.wait(timeout=START_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rv = self.proc.wait()
        for t in self._threads:
            t.join()
        for s in (self.proc.stdout, self.proc.stderr):
            if s is not None:
                s.close()
        return rv


def start_tkd(sockdir: str, roots: Optional[List[str]] = None,
              options: Optional[List[str]] = None,
              wrapper: Optional[List[str]] = None) -> Tuple[Daemon, str]:
    """A tkd listening in sockdir, with options after the usual ones and
    wrapper's argv before it (a program that execs tkd: "prlimit ..."), so
    that the daemon's pid is tkd's; (daemon, address).

    Its HOME is sockdir, so the git it runs (which gets HOME through tkd's
    environment allowlist) and libgit2 in it read no ~/.gitconfig of the
    developer's; XDG_CONFIG_HOME likewise for libgit2 (tkd's git children
    do not get it), and GIT_CONFIG_NOSYSTEM=1."""
    addr = "ipc://%s/tkd.sock" % sockdir
    argv = [program("TKD"), "--listen", addr, "--log-level", "info"]
    for r in roots or []:
        argv += ["--root", r]
    env = dict(os.environ, HOME=sockdir, XDG_CONFIG_HOME=sockdir,
               GIT_CONFIG_NOSYSTEM="1")
    d = Daemon((wrapper or []) + argv + (options or []), env)
    d.wait_output("listening on", "stderr")  # logged once the socket exists
    return d, addr


def owner_config(home: str, repo: str, key: str, value: str) -> Callable[[], None]:
    """key = value in the owner's configuration of repo, as git and libgit2
    in a tkd whose HOME is home read it (start_tkd: its sockdir): a file
    that home/.gitconfig includes for repo alone (includeIf "gitdir:").
    A READ runs the owner's core.fsmonitor, never one the repository's
    own config names (service/git/read_env.c): this is how a test makes a
    Status block in a hook. Returns what undoes it."""
    real = os.path.realpath(repo)
    inc = os.path.join(home, "owner-" + real.strip("/").replace("/", "_"))
    cond = "includeIf.gitdir:%s/.git.path" % real
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "config", "--file", inc, key, value], env=env,
                   check=True)
    subprocess.run(["git", "config", "--file",
                    os.path.join(home, ".gitconfig"), cond, inc], env=env,
                   check=True)

    def undo() -> None:
        subprocess.run(["git", "config", "--file", inc, "--unset", key],
                       env=env, check=True)
    return undo


def start_testd(sockdir: str,
                held_writes: bool = False) -> Tuple[Daemon, str]:
    """A testd (tk.test.Test/Wait and SlowWrite) in sockdir; (daemon,
    address). It prints "ENTERED <method>" when a handler starts. With
    held_writes, SlowWrite runs until testd gets SIGUSR1 (one write each)."""
    addr = "ipc://%s/testd.sock" % sockdir
    d = Daemon([program("TESTD"), "--listen", addr]
               + (["--release-writes"] if held_writes else []))
    d.wait_output("READY")
    return d, addr


def tempdir(tag: str) -> tempfile.TemporaryDirectory:
    # Short: an ipc socket path must fit in sun_path (108 bytes).
    return tempfile.TemporaryDirectory(prefix="tk-%s-" % tag)


def read_line(fifo: str, timeout: float = START_S) -> str:
    """A line from the fifo's writer (a hook), waited for in poll, bounded.
    Opened before the writer, non-blocking: a fifo no writer has opened
    yet polls as not ready."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        got = b""
        until = time.monotonic() + timeout
        while not got.endswith(b"\n"):
            left = until - time.monotonic()
            p = select.poll()
            p.register(fd, select.POLLIN)
            if left <= 0 or not p.poll(left * 1000):
                raise AssertionError("no line from %s" % fifo)
            data = os.read(fd, 256)
            if not data and not got:
                continue  # the writer has not written yet
            if not data:
                break
            got += data
        return got.decode().strip()
    finally:
        os.close(fd)
