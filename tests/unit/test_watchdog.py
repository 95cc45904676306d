#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tests/support/watchdog.py, which runs every test: on a program that
hangs (tests/unit/hang.c: a thread in pthread_cond_wait, one in
nanosleep, a child in pause) it prints every thread's stack of both
processes, kills them and exits 124, within the time it was given; it
passes a command's output and exit status (or signal) through unchanged,
and forwards SIGTERM; `meson test -t N` is read from meson's command line.
And every meson test runs under it, with its own timeout.

  /usr/bin/python3 test_watchdog.py [BUILD_DIR]   (HANG: the built hang
                                                  program, from meson)
"""

import faulthandler
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

HERE = os.path.dirname(os.path.abspath(__file__))
WATCHDOG = os.path.join(HERE, "..", "support", "watchdog.py")
HUNG = 124
# The dump of a hung test is Linux's: the process tree and the threads
# from /proc, the stacks from gdb (tests/support/watchdog.py).
NO_DUMP = None if os.path.exists("/proc/self/stat") else \
    "no /proc (macOS): the watchdog's dump of a hung test reads the " \
    "process tree and threads there"


def hang_program():
    path = os.environ.get("HANG", "")
    if not path:
        raise RuntimeError("HANG is not set (run the tests with meson test)")
    return path


def watchdog(args, env=None, timeout=60):
    """Runs the watchdog with multiplier 1: (exit status, stdout, stderr,
    seconds)."""
    full = dict(os.environ, TK_TIMEOUT_MULTIPLIER="1")
    full.update(env or {})
    # Files, not pipes: a process the watchdog failed to kill would hold
    # a pipe open, and the test would wait for it.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        r = subprocess.run([WATCHDOG] + args, env=full, stdout=out,
                           stderr=err, timeout=timeout, check=False)
        secs = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return r.returncode, out.read().decode(), err.read().decode(), secs


def alive(pid):
    """Running, stopped or sleeping: anything but gone or a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_alive(pids):
    """What a watchdog that failed its test left behind."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


class Hang(unittest.TestCase):
    # Meson's deadline 20 s away, the dump from 18 s before it: it starts
    # after 2 s (the program hangs within milliseconds) and must be over by
    # the deadline; two processes take about a second in gdb.
    ARGS = ["--margin", "18", "20"]

    def setUp(self):
        if NO_DUMP:
            self.skipTest(NO_DUMP)

    def hang(self, env=None):
        rc, out, err, secs = watchdog(self.ARGS + [hang_program()], env)
        self.assertEqual(rc, HUNG, err)
        self.assertGreaterEqual(secs, 2, err)
        self.assertLess(secs, 20, err)
        self.assertRegex(err, r"==== watchdog: still running after \d+ s")
        self.assertIn(hang_program(), err)
        ready = re.search(r"^ready (\d+)$", out, re.M)
        assert ready is not None, out
        child = int(ready.group(1))
        pids = [int(p) for p in re.findall(r"^---- pid (\d+) ", err, re.M)]
        self.addCleanup(kill_alive, pids + [child])
        self.assertEqual(len(pids), 2, err)
        self.assertEqual(pids[1], child, err)  # the test first, then its child
        self.assertEqual([p for p in pids if alive(p)], [], err)
        self.assertIn("exit status 124 means the test hung", err)
        return err

    def test_gdb_shows_every_thread_of_every_process(self):
        err = self.hang()
        parent, child = err.split("\n---- pid ")[1:3]
        self.assertIn("hang_thread_waits", parent)
        self.assertIn("pthread_cond_wait", parent)
        self.assertIn("hang_main_sleeps", parent)
        self.assertIn("hang_child_pauses", child)
        # and one line for each, in the summary at the end
        where = err.split("==== watchdog: where each thread is")[1]
        self.assertRegex(where, r'thread "hang": \S*pthread_cond_wait\S* < '
                                r'hang_thread_waits\n')
        self.assertRegex(where, r'thread "hang": \S*nanosleep\S* < '
                                r'hang_main_sleeps < main\n')
        self.assertRegex(where, r'thread "hang": \S*pause\S* < '
                                r'hang_child_pauses < main\n')
        # two, and TSan's background thread in that build
        self.assertGreaterEqual(
            len(re.findall(r"^  Thread \d+ ", parent, re.M)), 2, err)

    def test_without_gdb_proc_still_names_each_thread(self):
        with tempfile.TemporaryDirectory() as tmp:
            err = self.hang({"PATH": tmp})
        self.assertIn("no gdb", err)
        parent, child = err.split("\n---- pid ")[1:3]
        threads = re.findall(r'^  thread \d+ "hang" state ', parent, re.M)
        self.assertGreaterEqual(len(threads), 2, err)
        self.assertIn("wchan", child)
        where = err.split("==== watchdog: where each thread is")[1]
        self.assertIn('thread "hang": state S, in the kernel at ', where)

    def test_gdb_refused_falls_back_to_proc(self):
        """As gdb says when ptrace is not allowed."""
        with tempfile.TemporaryDirectory() as tmp:
            gdb = os.path.join(tmp, "gdb")
            with open(gdb, "w") as f:
                f.write("#!/bin/sh\necho 'ptrace: Operation not permitted.'\n"
                        "exit 1\n")
            os.chmod(gdb, 0o755)
            err = self.hang({"PATH": tmp + ":" + os.environ["PATH"]})
        self.assertIn("gdb: ptrace: Operation not permitted.", err)
        self.assertEqual(err.count("  from /proc:"), 2, err)


class PassThrough(unittest.TestCase):
    def test_output_and_exit_status(self):
        for status in (0, 3):
            rc, out, err, _ = watchdog(
                ["30", "sh", "-c", "echo out; echo err >&2; exit %d" % status])
            self.assertEqual((rc, out, err), (status, "out\n", "err\n"))

    def test_a_signal_that_killed_the_command(self):
        rc, out, err, _ = watchdog(["30", "sh", "-c", "kill -KILL $$"])
        self.assertEqual((rc, out, err), (-signal.SIGKILL, "", ""))

    def test_sigterm_is_forwarded(self):
        script = ("trap 'exit 42' TERM; echo ready; "
                  "while :; do sleep 0.1; done")
        with subprocess.Popen([WATCHDOG, "30", "sh", "-c", script],
                              stdout=subprocess.PIPE) as p:
            assert p.stdout is not None
            self.assertEqual(p.stdout.readline(), b"ready\n")
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(timeout=10), 42)

    def test_a_missing_command(self):
        rc, _, err, _ = watchdog(["30", "/nonexistent/tk-test"])
        self.assertEqual(rc, 127)
        self.assertIn("cannot run /nonexistent/tk-test", err)


class MesonMultiplier(unittest.TestCase):
    """meson test -t N: meson's deadline is N times the test's timeout, and
    the watchdog reads N from its parent's command line."""

    def under_fake_meson(self, meson_args, watchdog_args):
        with tempfile.TemporaryDirectory() as tmp:
            meson = os.path.join(tmp, "meson")
            with open(meson, "w") as f:
                f.write("#!/usr/bin/python3\nimport subprocess, sys\n"
                        "sys.exit(subprocess.call(%r))\n"
                        % ([WATCHDOG] + watchdog_args))
            os.chmod(meson, 0o755)
            t0 = time.monotonic()
            r = subprocess.run([meson, "test"] + meson_args,
                               capture_output=True, timeout=60, check=False)
            return r.returncode, r.stderr.decode(), time.monotonic() - t0

    def test_t_shortens_the_deadline(self):
        # 40 s x 0.1: the dump starts 1 s before 4 s, not at 39 s
        if NO_DUMP:
            self.skipTest(NO_DUMP)
        rc, err, secs = self.under_fake_meson(
            ["-t", "0.1"], ["--margin", "1", "40", hang_program()])
        self.assertEqual(rc, HUNG, err)
        self.assertLess(secs, 20, err)

    def test_t_0_means_no_deadline(self):
        rc, err, _ = self.under_fake_meson(
            ["--timeout-multiplier=0"],
            ["--margin", "1", "2", "sh", "-c", "sleep 3; exit 5"])
        self.assertEqual(rc, 5, err)


class EveryTest(unittest.TestCase):
    """Every meson test is run by the watchdog, whose first argument is the
    test's own timeout (a different number would fire it too early, or
    after meson's own kill)."""

    def test_runs_under_the_watchdog_with_its_timeout(self):
        if BUILD is None:
            self.skipTest("no build directory given (meson passes it)")
        with open(os.path.join(BUILD, "meson-info", "intro-tests.json")) as f:
            tests = json.load(f)
        self.assertGreater(len(tests), 10)
        for t in tests:
            cmd = t["cmd"]
            self.assertEqual(os.path.realpath(cmd[0]),
                             os.path.realpath(WATCHDOG), t["name"])
            self.assertEqual(float(cmd[1]), t["timeout"], t["name"])


# test_watchdog.py [BUILD_DIR]
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 and \
    not sys.argv[1].startswith("-") else None

if __name__ == "__main__":
    unittest.main(verbosity=2)
