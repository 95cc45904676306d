#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The architecture rules hold on the tree, and each fails on the fixture
that breaks it.

  test_arch.py [BUILD_DIR]   (meson passes its build directory)

Each folder under fixtures/ is a small tree with an `expect` file, one line
per violation it must produce: `FILE:LINE: RULE: part of the message` (as
arch.py prints it; a module folder in place of FILE:LINE where the rule
names no line), `stale: part of the message` for an allowlist entry no
longer needed, or `clean: why` for none. Each expected line must match its
own violation, and every violation must be expected: a fixture proves one
rule, at the places it breaks it, not whatever else a rule reports in it.

A fixture is checked against tk's DESIGN.md (its module table), or against
its own DESIGN.md where it has one: only a tree's own DESIGN.md has a
layout the tree must follow, so the layout rule checks only those fixtures.

A fixture with a `compile_commands.in` is checked as the real tree is, with
a build's compilation database: the test writes it to a build directory
outside the fixture, @BUILD@ replaced by that directory and @ROOT@ by the
fixture's path relative to it, as meson writes its flags (-I../../src).
A `build.ninja.in` becomes that directory's build.ninja the same way (what
the rule share reads of what each program and library is built of)."""

import faulthandler
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import arch

HERE = os.path.dirname(os.path.abspath(__file__))

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 else None
FIXTURES = os.path.join(HERE, "fixtures")


class Architecture(unittest.TestCase):
    def test_the_tree_follows_the_rules(self):
        unresolved: list[str] = []
        violations, unused = arch.check(ROOT, BUILD,
                                        os.path.join(HERE, "allowlist"),
                                        unresolved=unresolved)
        self.assertEqual([str(v) for v in violations], [])
        self.assertEqual(unused, [])
        if BUILD:  # every file has the build's flags: all is checked
            self.assertEqual(unresolved, [])

    def test_every_fixture_fails_as_expected(self):
        names = sorted(os.listdir(FIXTURES))
        self.assertGreaterEqual(len(names), 14)
        for name in names:
            with self.subTest(fixture=name):
                self.check_fixture(os.path.join(FIXTURES, name))

    def test_no_client_file_is_bigger_than_the_service_sides_largest(self):
        # Issue 32: beside the caps (rule lines), no room of the client,
        # in any of its languages, bigger than the service side's largest.
        client, service = (arch.largest(ROOT, top)
                           for top in ("client", "service"))
        self.assertGreater(service[0], 0)
        self.assertLessEqual(client[0], service[0],
                             f"{client[1]} ({client[0]} lines) is bigger "
                             f"than {service[1]} ({service[0]}): split it")
        # Negative control: in the lines fixture the same comparison fails
        # (a 601-line file of its client, 551 lines at most of its service).
        lines = os.path.join(FIXTURES, "lines")
        self.assertEqual(arch.largest(lines, "client")[0], 601)
        self.assertEqual(arch.largest(lines, "service"),
                         (551, "service/orders/big_int.h"))

    def test_an_allowlist_entry_without_a_reason_cannot_run(self):
        for entry in ("library service/git NNG",
                      "library service/git NNG -- "):
            with self.subTest(entry=entry), tempfile.NamedTemporaryFile(
                    "w", prefix="tk-allowlist-") as f:
                f.write("# a comment\n" + entry + "\n")
                f.flush()
                p = subprocess.run(
                    ["/usr/bin/python3", os.path.join(HERE, "arch.py"),
                     "--root", os.path.join(FIXTURES, "allowlist_used"),
                     "--allowlist", f.name,
                     "--design", os.path.join(ROOT, "DESIGN.md")],
                    capture_output=True, text=True)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(f"{f.name}:2: want `RULE SUBJECT -- REASON`",
                              p.stderr)

    def build_dir(self, root):
        """None, or a build directory with the fixture's compile commands
        and build.ninja."""
        made = {t: os.path.join(root, name) for t, name in (
            ("compile_commands.json", "compile_commands.in"),
            ("build.ninja", "build.ninja.in"))}
        made = {t: p for t, p in made.items() if os.path.exists(p)}
        if not made:
            return None
        build = tempfile.mkdtemp(prefix="tk-arch-build-")
        self.addCleanup(shutil.rmtree, build, ignore_errors=True)
        for target, template in made.items():
            with open(template) as f:
                text = f.read().replace("@BUILD@", build).replace(
                    "@ROOT@", os.path.relpath(root, build))
            with open(os.path.join(build, target), "w") as f:
                f.write(text)
        return build

    def check_fixture(self, root):
        with open(os.path.join(root, "expect")) as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
        own = os.path.join(root, "DESIGN.md")
        violations, unused = arch.check(
            root, self.build_dir(root), os.path.join(root, "allowlist"),
            own if os.path.exists(own) else os.path.join(ROOT, "DESIGN.md"))
        got = [str(v) for v in violations]
        stale = [f"allowlist entry no longer needed: {e[0]} {e[1]}"
                 for e in unused]
        if any(line.startswith("clean: ") for line in lines):
            self.assertEqual(got + stale, [])
            return
        left, left_stale = list(violations), list(stale)
        for line in lines:
            if line.startswith("stale: "):
                hit = [s for s in left_stale if line[7:] in s]
                self.assertTrue(hit, f"expected {line!r}, stale: {stale}")
                left_stale.remove(hit[0])
                continue
            m = re.match(r"^(\S+): ([a-z-]+): (.+)$", line)
            assert m is not None, f"bad expect line {line!r}"
            where, rule, text = m.groups()
            hit = [v for v in left if v.where == where and v.rule == rule
                   and text in v.text]
            self.assertTrue(hit, f"no {rule} violation at {where} saying "
                            f"{text!r} in {got}")
            left.remove(hit[0])
        self.assertEqual([str(v) for v in left], [], "not expected")
        self.assertEqual(left_stale, [], "not expected")


if __name__ == "__main__":
    unittest.main(verbosity=2)
