"""The clients know each method as tkd serves it: tkd's
tk.v1.Control/ListMethods (name, request and reply types, kind, default
timeout, ceiling) against the C client's catalog (tk_catalog_*, printed by
catalog_dump) and the Python client's (tk.catalog), method by method and
both ways: a method one side has and the other lacks fails, as does any
field that differs. All three come from each method's option
(tk.v1.method) in proto/ (tools/regen): this is the check that they did,
and that tkd registers every method its .proto files declare, as declared.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import unittest
from typing import Dict, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "support"))
import tkproc  # noqa: E402

import tk  # noqa: E402
from tk.v1 import control_pb2  # noqa: E402

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

FIELDS = ("request_type", "reply_type", "kind", "default_timeout_ms",
          "ceiling_ms")
# name -> (request type, reply type, kind name, default ms, ceiling ms)
Table = Dict[str, Tuple[str, str, str, int, int]]


def kind_name(number: int) -> str:
    try:
        return control_pb2.MethodInfo.Kind.Name(number)
    except ValueError:
        return "KIND_%d" % number


def unique(pairs, where: str) -> Table:
    table: Table = {}
    for name, row in pairs:
        if name in table:
            raise AssertionError("%s lists %s twice" % (where, name))
        table[name] = row
    return table


def served() -> Table:
    """What a tkd with every service says it serves."""
    with tkproc.tempdir("cat") as d:
        daemon, addr = tkproc.start_tkd(d, [d])
        try:
            with tk.Client(addr) as client:
                reply = client.control.list_methods(timeout=10.0)
        finally:
            daemon.stop()
    return unique(((m.name, (m.request_type, m.reply_type, kind_name(m.kind),
                             m.default_timeout_ms, m.ceiling_ms))
                   for m in reply.methods), "ListMethods")


def c_catalog() -> Table:
    out = subprocess.run([tkproc.program("CATALOG_DUMP")], check=True,
                         capture_output=True, text=True, timeout=30).stdout
    rows = []
    for line in out.splitlines():
        name, req, rep, kind, default, ceiling = line.split(" ")
        rows.append((name, (req, rep, kind_name(int(kind)), int(default),
                            int(ceiling))))
    return unique(rows, "the C catalog")


def python_catalog() -> Table:
    return unique(((m.name, (m.request_type, m.reply_type,
                             kind_name(int(m.kind)), m.default_timeout_ms,
                             m.ceiling_ms))
                   for m in tk.catalog.METHODS), "tk.catalog")


def differences(server: Table, client: Table, who: str) -> list:
    """Every way client differs from server, one line each."""
    out = []
    for name in sorted(server.keys() | client.keys()):
        if name not in client:
            out.append("%s: tkd serves it, %s lacks it" % (name, who))
        elif name not in server:
            out.append("%s: %s has it, tkd does not serve it" % (name, who))
        else:
            for field, want, got in zip(FIELDS, server[name], client[name]):
                if want != got:
                    out.append("%s: %s is %r in tkd, %r in %s"
                               % (name, field, want, got, who))
    return out


class Catalogs(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = served()

    def test_tkd_serves_methods(self) -> None:
        # Not vacuous: every service is there.
        services = {name.split("/")[0] for name in self.server}
        self.assertEqual(services, {"tk.v1.Control", "tk.v1.Git",
                                    "tk.v1.Orders", "tk.v1.Search",
                                    "tk.v1.Services"})

    def test_c_catalog_is_what_tkd_serves(self) -> None:
        diff = differences(self.server, c_catalog(), "the C catalog")
        self.assertEqual(diff, [], "\n" + "\n".join(diff))

    def test_python_catalog_is_what_tkd_serves(self) -> None:
        diff = differences(self.server, python_catalog(), "tk.catalog")
        self.assertEqual(diff, [], "\n" + "\n".join(diff))

    def test_a_difference_is_seen(self) -> None:
        # The comparison itself, on a table with one method missing, one
        # too many and one changed.
        server = dict(self.server)
        client = dict(server)
        gone = sorted(client)[0]
        del client[gone]
        client["tk.v1.Nope/Nothing"] = ("a", "b", "READ", 1, 1)
        changed = sorted(client)[1]
        row = client[changed]
        client[changed] = row[:4] + (row[4] + 1,)
        self.assertEqual(differences(server, client, "x"), sorted([
            "%s: tkd serves it, x lacks it" % gone,
            "tk.v1.Nope/Nothing: x has it, tkd does not serve it",
            "%s: ceiling_ms is %d in tkd, %d in x" % (changed, row[4],
                                                      row[4] + 1),
        ], key=lambda s: s.split(":")[0]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
