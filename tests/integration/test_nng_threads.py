"""The NNG tk links runs its callbacks on one completion thread per CPU, at
least two (tools/nng/04-tk-taskq-one-thread-per-cpu.patch), where NNG
1.5.2 as released starts two per CPU: with more threads than CPUs, a
completion went to an idle thread to wake more often than to a running
one (BENCHMARKS.md, "NNG's completion threads").

Counted by name ("nng:task", as NNG names them) in /proc, in a running
tkd and in a bare NNG REP echo server linked with tk's NNG; the same echo
server linked with the system's NNG (Debian 12's libnng1, when
libnng-dev is installed) is the negative control: it must show NNG's own
count, so the count here tells the two builds apart.

Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import os
import sys
import unittest
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "support"))
import tkproc  # noqa: E402

# NNG 1.5.2's upper bound on the completion threads (NNG_MAX_TASKQ_THREADS,
# which neither tk's build nor Debian's changes).
NNG_MAX_TASKQ_THREADS = 16


def completion_threads(pid: int) -> int:
    """How many of pid's threads NNG named "nng:task"."""
    n = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() == "nng:task":
                    n += 1
        except FileNotFoundError:
            pass  # a thread that ended while we looked
    return n


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

    def test_tkd_has_one_per_cpu(self) -> None:
        d, _ = tkproc.start_tkd(self.dir.name)
        self.daemons.append(d)
        self.assertEqual(completion_threads(d.proc.pid), max(self.cpus, 2),
                         "tkd's NNG is not tools/nng/build's (%d CPUs)"
                         % self.cpus)

    def test_echo_with_tks_nng_has_one_per_cpu(self) -> None:
        self.assertEqual(completion_threads(self.echo("REP_ECHO")),
                         max(self.cpus, 2))

    def test_control_the_system_nng_has_two_per_cpu(self) -> None:
        if not os.environ.get("REP_ECHO_SYSTEM"):
            self.skipTest("no system NNG to compare with (libnng-dev)")
        system = min(2 * self.cpus, NNG_MAX_TASKQ_THREADS)
        if system == max(self.cpus, 2):
            self.skipTest("with %d CPU(s) both NNGs start %d threads"
                          % (self.cpus, system))
        self.assertEqual(completion_threads(self.echo("REP_ECHO_SYSTEM")),
                         system)


if __name__ == "__main__":
    unittest.main(verbosity=2)
