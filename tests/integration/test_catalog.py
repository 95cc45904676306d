# SPDX-License-Identifier: MIT
"""The clients know each method as tkd serves it: tkd's
tk.v1.Control/ListMethods (name, request and reply types, kind, default
timeout, ceiling, and the reply's list with its ceiling) against the C
client's catalog (tk_catalog_*, printed by catalog_dump), the Python
client's (tk.catalog) and the TypeScript client's (gen/ts/tk/catalog.ts,
read as the data it is), method by method and both ways: a method one side
has and the other lacks fails, as does any field that differs. All four
come from each method's option (tk.v1.method) in proto/ (tools/regen):
this is the check that they did, and that tkd registers every method its
.proto files declare, as declared.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import signal
import subprocess
import unittest
from typing import Dict, Optional, Tuple

import tkproc

import tk
from tk.v1 import control_pb2

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

FIELDS = ("request_type", "reply_type", "kind", "default_timeout_ms",
          "ceiling_ms", "list")
# The reply's list: (field, limit field or "", default items, max items,
# max bytes), or None.
ListRow = Optional[Tuple[str, str, int, int, int]]
# name -> (request type, reply type, kind name, default ms, ceiling ms,
# list)
Table = Dict[str, Tuple[str, str, str, int, int, ListRow]]


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
                             m.default_timeout_ms, m.ceiling_ms,
                             (m.list.field, m.list.limit_field,
                              m.list.default_items, m.list.max_items,
                              m.list.max_bytes)
                             if m.HasField("list") else None))
                   for m in reply.methods), "ListMethods")


def c_catalog() -> Table:
    out = subprocess.run([tkproc.program("CATALOG_DUMP")], check=True,
                         capture_output=True, text=True, timeout=30).stdout
    rows = []
    for line in out.splitlines():
        (name, req, rep, kind, default, ceiling, field, limit, items,
         max_items, max_bytes) = line.split(" ")
        lst: ListRow = None
        if field != "-":
            lst = (field, "" if limit == "-" else limit, int(items),
                   int(max_items), int(max_bytes))
        rows.append((name, (req, rep, kind_name(int(kind)), int(default),
                            int(ceiling), lst)))
    return unique(rows, "the C catalog")


def python_catalog() -> Table:
    return unique(((m.name, (m.request_type, m.reply_type,
                             kind_name(int(m.kind)), m.default_timeout_ms,
                             m.ceiling_ms,
                             tuple(m.list) if m.list is not None else None))
                   for m in tk.catalog.METHODS), "tk.catalog")


TS_CATALOG = os.path.join(tkproc.SOURCE_ROOT, "gen", "ts", "tk", "catalog.ts")


def ts_catalog(text: Optional[str] = None) -> Table:
    """gen/ts/tk/catalog.ts's METHODS (or those of text, a catalog.ts), an
    array literal of plain data (keys unquoted, trailing commas), read as
    JSON once the keys are quoted and the trailing commas gone."""
    if text is None:
        with open(TS_CATALOG, encoding="utf-8") as f:
            text = f.read()
    start = text.index("=", text.index("export const METHODS")) + 1
    literal = text[start:text.index("];", start) + 1]
    literal = re.sub(r"^(\s*)(\w+):", r'\1"\2":', literal, flags=re.M)
    literal = re.sub(r",(\s*[}\]])", r"\1", literal)
    rows = []
    for m in json.loads(literal):
        lst = m["list"]
        rows.append((m["name"], (
            m["requestType"], m["replyType"], m["kind"],
            m["defaultTimeoutMs"], m["ceilingMs"],
            (lst["field"], lst["limitField"], lst["defaultItems"],
             lst["maxItems"], lst["maxBytes"]) if lst is not None else None)))
    return unique(rows, "gen/ts/tk/catalog.ts")


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
    server: Table

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

    def test_ts_catalog_is_what_tkd_serves(self) -> None:
        diff = differences(self.server, ts_catalog(), "the TypeScript catalog")
        self.assertEqual(diff, [], "\n" + "\n".join(diff))

    def test_lists_are_served(self) -> None:
        # Not vacuous: the methods whose replies grow with what they read
        # carry their ceilings (proto/: the option's list).
        lists = {name: row[5] for name, row in self.server.items()
                 if row[5] is not None}
        self.assertEqual(lists["tk.v1.Git/Log"][:2], ("commits", "max_count"))
        self.assertEqual(lists["tk.v1.Search/Search"][:2], ("matches", "limit"))
        self.assertIn("tk.v1.Git/Grep", lists)
        self.assertIn("tk.v1.Git/Status", lists)

    def test_a_difference_is_seen(self) -> None:
        # The comparison itself, on a table with one method missing, one
        # too many and one changed.
        server = dict(self.server)
        client = dict(server)
        gone = sorted(client)[0]
        del client[gone]
        client["tk.v1.Nope/Nothing"] = ("a", "b", "READ", 1, 1, None)
        changed = sorted(client)[1]
        row = client[changed]
        client[changed] = row[:4] + (row[4] + 1,) + row[5:]
        self.assertEqual(differences(server, client, "x"), sorted([
            "%s: tkd serves it, x lacks it" % gone,
            "tk.v1.Nope/Nothing: x has it, tkd does not serve it",
            "%s: ceiling_ms is %d in tkd, %d in x" % (changed, row[4],
                                                      row[4] + 1),
        ], key=lambda s: s.split(":")[0]))

    def test_a_list_difference_is_seen(self) -> None:
        # A list's ceiling that differs, and one a side lacks.
        client = dict(self.server)
        log, status = "tk.v1.Git/Log", "tk.v1.Git/Status"
        lst = client[log][5]
        assert lst is not None
        client[log] = client[log][:5] + (lst[:3] + (lst[3] + 1, lst[4]),)
        client[status] = client[status][:5] + (None,)
        self.assertEqual(differences(self.server, client, "x"), [
            "%s: list is %r in tkd, %r in x" % (
                log, lst, lst[:3] + (lst[3] + 1, lst[4])),
            "%s: list is %r in tkd, None in x" % (status,
                                                  self.server[status][5]),
        ])

    def test_a_ts_catalog_difference_is_seen(self) -> None:
        # The TypeScript catalog as read from its file, not only the
        # comparison: catalog.ts with one method gone, one ceiling and one
        # list's ceiling changed.
        with open(TS_CATALOG, encoding="utf-8") as f:
            text = f.read()

        def entry(text: str, name: str) -> "re.Match[str]":
            m = re.search(r"  \{\n    name: \"%s\",\n.*?\n  \},\n"
                          % re.escape(name), text, re.S)
            assert m is not None, "%s: no entry in catalog.ts" % name
            return m

        def edit(text: str, name: str, key: str, value: int) -> str:
            m = entry(text, name)
            body = re.sub(r"(\n\s*%s: )\d+," % key,
                          lambda k: "%s%d," % (k[1], value), m[0], count=1)
            return text[:m.start()] + body + text[m.end():]

        gone = entry(text, "tk.v1.Git/WorktreeRemove")
        text = text[:gone.start()] + text[gone.end():]
        ceiling = self.server["tk.v1.Git/ConfigSet"][4]
        text = edit(text, "tk.v1.Git/ConfigSet", "ceilingMs", ceiling + 1)
        log = self.server["tk.v1.Git/Log"][5]
        assert log is not None
        text = edit(text, "tk.v1.Git/Log", "maxItems", log[3] + 1)
        self.assertEqual(differences(self.server, ts_catalog(text), "ts"), [
            "tk.v1.Git/ConfigSet: ceiling_ms is %d in tkd, %d in ts"
            % (ceiling, ceiling + 1),
            "tk.v1.Git/Log: list is %r in tkd, %r in ts"
            % (log, log[:3] + (log[3] + 1, log[4])),
            "tk.v1.Git/WorktreeRemove: tkd serves it, ts lacks it",
        ])


if __name__ == "__main__":
    unittest.main(verbosity=2)
