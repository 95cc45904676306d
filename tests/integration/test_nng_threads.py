# SPDX-License-Identifier: MIT
"""The NNG tk links runs its callbacks on one completion thread per CPU, at
least two (nng-patches/04-tk-taskq-one-thread-per-cpu.patch), where NNG
1.5.2 as released starts two per CPU: with more threads than CPUs, a
completion went to an idle thread to wake more often than to a running
one (BENCHMARKS.md, "NNG's completion threads").

Counted by name ("nng:task", as NNG names them) in /proc, in a bare NNG
REP echo server linked with tk's NNG; the same echo server linked with the
system's NNG (Debian 12's libnng1, when libnng-dev is installed) is the
negative control: it must show NNG's own count, so the count here tells
the two builds apart. Every thread NNG starts names itself ("nng:...") as
the first thing it does, after pthread_create has returned, so the count
is read once every thread of the echo server has a name of NNG's but its
main one and, under ThreadSanitizer, the runtime's own (started at the
first pthread_create, before NNG's; TK_SANITIZE, set by meson, says which
sanitizers the build has). tkd has threads of its own besides, so tkd is
shown to be linked with tk's NNG the way the echo server is: statically,
with no libnng.so in its memory map, where the control maps Debian's.

Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import os
import time
import unittest
from typing import Dict, List

import tkproc

# NNG 1.5.2's upper bound on the completion threads (NNG_MAX_TASKQ_THREADS,
# which neither tk's build nor Debian's changes).
NNG_MAX_TASKQ_THREADS = 16


def thread_names(pid: int) -> Dict[int, str]:
    """pid's threads and their names."""
    names = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                names[int(tid)] = f.read().strip()
        except FileNotFoundError:
            pass  # a thread that ended while we looked
    return names


def runtime_threads() -> int:
    """How many threads the sanitizer runtime adds to a process that
    starts threads: ThreadSanitizer's background thread, none for the
    others."""
    sanitizers = os.environ.get("TK_SANITIZE", "none").split(",")
    return 1 if "thread" in sanitizers else 0


def completion_threads(pid: int) -> int:
    """How many threads NNG named "nng:task" in pid, a process whose
    threads are its main one, the sanitizer runtime's and NNG's, once each
    of NNG's has named itself (polled: nothing tells when a new thread has
    run)."""
    others = runtime_threads()
    deadline = time.monotonic() + tkproc.START_S
    while True:
        names = thread_names(pid)
        unnamed = [t for t, n in names.items()
                   if t != pid and not n.startswith("nng:")]
        if len(unnamed) == others:
            return sum(1 for n in names.values() if n == "nng:task")
        if time.monotonic() > deadline:
            raise AssertionError(
                "threads of %d: %d without a name of NNG's, expected %d "
                "(the sanitizer runtime's): %r"
                % (pid, len(unnamed), others, names))
        time.sleep(0.01)


def maps_libnng(pid: int) -> bool:
    """Whether pid has a shared libnng mapped."""
    with open("/proc/%d/maps" % pid) as f:
        return any("/libnng.so" in line for line in f)


class CompletionThreads(unittest.TestCase):
    def setUp(self) -> None:
        if not os.path.isdir("/proc/self/task"):
            self.skipTest("threads are counted in /proc (Linux)")
        self.dir = tkproc.tempdir("nngt")
        self.daemons: List[tkproc.Daemon] = []
        # What NNG asks for (nni_plat_ncpu: sysconf(_SC_NPROCESSORS_ONLN)).
        self.cpus = os.sysconf("SC_NPROCESSORS_ONLN")

    def tearDown(self) -> None:
        for d in self.daemons:
            d.stop()
        self.dir.cleanup()

    def echo(self, var: str) -> int:
        """The pid of rep_echo (from the environment's var), listening."""
        path = os.path.join(self.dir.name, var.lower() + ".sock")
        d = tkproc.Daemon([tkproc.program(var), "ipc://" + path])
        self.daemons.append(d)
        d.wait_output("ready")
        return d.proc.pid

    def test_echo_with_tks_nng_has_one_per_cpu(self) -> None:
        pid = self.echo("REP_ECHO")
        self.assertEqual(completion_threads(pid), max(self.cpus, 2),
                         "tk's NNG is not subprojects/nng.wrap's (%d CPUs)"
                         % self.cpus)
        self.assertFalse(maps_libnng(pid))

    def test_tkd_links_tks_nng(self) -> None:
        d, _ = tkproc.start_tkd(self.dir.name)
        self.daemons.append(d)
        self.assertFalse(maps_libnng(d.proc.pid),
                         "tkd loads a shared libnng, not tk's static one")

    def test_control_the_system_nng_has_two_per_cpu(self) -> None:
        if not os.environ.get("REP_ECHO_SYSTEM"):
            self.skipTest("no system NNG to compare with (libnng-dev)")
        system = min(2 * self.cpus, NNG_MAX_TASKQ_THREADS)
        if system == max(self.cpus, 2):
            self.skipTest("with %d CPU(s) both NNGs start %d threads"
                          % (self.cpus, system))
        pid = self.echo("REP_ECHO_SYSTEM")
        self.assertEqual(completion_threads(pid), system)
        self.assertTrue(maps_libnng(pid))


if __name__ == "__main__":
    unittest.main(verbosity=2)
