#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every registered test is in a folder whose row of tests/README.md lists
its suite, and a test in suite unit reaches out to nothing (tests/README.md,
"What is checked"); each rule fails on a test list made to break it.

  test_folders.py [BUILD_DIR]   (meson passes its build directory)

The tests and each program's sources come from BUILD_DIR/meson-info
(what `meson introspect --tests --targets` prints), written by the same
configure that registered them."""

import faulthandler
import json
import os
import re
import signal
import sys
import tempfile
import unittest
from typing import Dict, List, Optional, Set

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
README = os.path.join(ROOT, "tests", "README.md")

# A unit test runs none of tk's programs (tests/README.md).
TK_PROGRAMS = {"tkd", "testd", "tkcall"}
# What a unit test's source must not name: each mark starts or reaches
# one of tk's programs, git on a tree, or PostgreSQL.
MARKS = [
    (re.compile(r"[\"'$]\{?(TKD|TESTD|TKCALL)\b"), "tk's programs"),
    (re.compile(r'#include\s+"(fixture|tree|pg)\.h"'), "a fixture"),
    (re.compile(r"pg-cluster|\bfleetfx\b|\bnetfleet\b"), "PostgreSQL"),
    (re.compile(r"\bstart_(tkd|testd)\b"), "tk's programs"),
]
ROW = re.compile(r"^\|\s*`([^`]+/)`\s*\|([^|]*)\|")


def read_rule(text: str) -> Dict[str, Set[str]]:
    """tests/README.md's table: folder (relative to the source root, with
    its trailing /) to the suites its tests may be in ("none": none)."""
    rule = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            cell = m.group(2).strip()
            rule[m.group(1)] = (set() if cell == "none" else
                                set(re.findall(r"`([a-z]+)`", cell)))
    return rule


def target_name(target_id: str) -> str:
    """meson's '9df6b02@@tkd@exe' is tkd ('tkd.8@cus', a custom target,
    is returned whole)."""
    return target_id.split("@@")[1].rsplit("@", 1)[0] \
        if "@@" in target_id else target_id


def test_source(test: dict, programs: Dict[str, str], root: str,
                build: str) -> Optional[str]:
    """The file that says where a test lives: its program's first source,
    or the first of its arguments that is a file of the source tree (a
    script; the interpreter before it is not the tree's)."""
    for arg in test["cmd"][2:]:  # after the watchdog and its timeout
        path = os.path.realpath(os.path.join(build, arg))
        if path in programs:
            return programs[path]
        if (os.path.isfile(path) and path.startswith(root + os.sep)
                and not path.startswith(build + os.sep)):
            return path
    return None


def check(tests: List[dict], targets: List[dict], rule: Dict[str, Set[str]],
          root: str, build: str) -> List[str]:
    """Each test held to the rule; a line per violation."""
    root, build = os.path.realpath(root), os.path.realpath(build)
    programs = {}
    for t in targets:
        sources = [s for ts in t.get("target_sources", [])
                   for s in ts.get("sources", [])]
        for f in t.get("filename", []):
            if sources:
                programs[os.path.realpath(f)] = os.path.realpath(sources[0])
    out = [f"tests/README.md: row {folder}: no such folder"
           for folder in sorted(rule)
           if not os.path.isdir(os.path.join(root, folder))]
    for t in tests:
        name = t["name"]
        suites = {s.split(":")[-1] for s in t["suite"]}
        src = test_source(t, programs, root, build)
        if src is None:
            out.append(f"{name}: no source of the tree in its command")
            continue
        rel = os.path.relpath(src, root)
        rows = [f for f in rule if rel.startswith(f)]
        if not rows:
            out.append(f"{name}: {rel}: its folder has no row in "
                       "tests/README.md")
            continue
        folder = max(rows, key=len)
        for s in sorted(suites - rule[folder]):
            out.append(f"{name}: {rel}: suite {s} is not one of {folder}'s "
                       f"({', '.join(sorted(rule[folder])) or 'none'})")
        if "unit" in suites:
            out += unit_violations(name, rel, src, t)
    return out


def unit_violations(name: str, rel: str, src: str, test: dict) -> List[str]:
    out = []
    deps = sorted({target_name(d) for d in test.get("depends", [])}
                  & TK_PROGRAMS)
    if deps:
        out.append(f"{name}: a unit test depends on {', '.join(deps)}")
    with open(src, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for mark, what in MARKS:
        m = mark.search(text)
        if m:
            line = text.count("\n", 0, m.start()) + 1
            out.append(f"{name}: {rel}:{line}: a unit test names "
                       f"{m.group(0).strip()} ({what})")
    return out


class TheTree(unittest.TestCase):
    def test_the_table_has_the_folders(self):
        with open(README, encoding="utf-8") as f:
            rule = read_rule(f.read())
        self.assertGreaterEqual(len(rule), 14, rule)
        self.assertEqual(rule["tests/unit/"], {"unit"})
        self.assertEqual(rule["tests/support/"], set())

    def test_every_test_is_where_the_rule_says(self):
        if BUILD is None:
            self.skipTest("no build directory given (meson passes it)")
        info = os.path.join(BUILD, "meson-info")
        with open(os.path.join(info, "intro-tests.json")) as f:
            tests = json.load(f)
        with open(os.path.join(info, "intro-targets.json")) as f:
            targets = json.load(f)
        with open(README, encoding="utf-8") as f:
            rule = read_rule(f.read())
        self.assertGreater(len(tests), 50)
        self.assertEqual(check(tests, targets, rule, ROOT, BUILD), [])


class NegativeControls(unittest.TestCase):
    """A small tree and build of the test's own, and a test list that
    breaks one rule at a time: each must give its one violation."""

    RULE = ("| `tests/unit/` | `unit` | x |\n"
            "| `tests/integration/` | `integration`, `pg` | x |\n"
            "| `tests/fleet/` | `unit`, `fleet` | x |\n"
            "| `tests/support/` | none | x |\n")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tk-folders-")
        self.root = os.path.realpath(self.tmp.name)
        self.build = os.path.join(self.root, "build")
        for d in ("tests/unit", "tests/integration", "tests/fleet",
                  "tests/support", "tests/other", "build/tests"):
            os.makedirs(os.path.join(self.root, d))
        self.rule = read_rule(self.RULE)
        self.targets: List[dict] = []

    def tearDown(self):
        self.tmp.cleanup()

    def program(self, source: str, text: str = "int main(void) {}\n") -> str:
        """A C test program: its source in the tree, its file in the
        build; returns the command's argument meson gives for it."""
        self.write(source, text)
        exe = "tests/" + os.path.basename(source)[:-2]
        self.targets.append({
            "filename": [os.path.join(self.build, exe)],
            "target_sources": [{"sources": [os.path.join(self.root,
                                                         source)]}]})
        return exe

    def write(self, rel: str, text: str) -> str:
        path = os.path.join(self.root, rel)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def run_check(self, name, suite, args, depends=()) -> List[str]:
        test = {"name": name, "suite": ["tk:" + suite],
                "cmd": [os.path.join(self.root, "tests/support/watchdog.py"),
                        "30"] + args,
                "depends": list(depends)}
        return check([test], self.targets, self.rule, self.root, self.build)

    def assertOne(self, found: List[str], *parts: str):
        self.assertEqual(len(found), 1, found)
        for p in parts:
            self.assertIn(p, found[0])

    def test_in_their_place_they_pass(self):
        exe = self.program("tests/unit/test_a.c")
        self.assertEqual(self.run_check("a", "unit", [exe],
                                        ["1@@test_a@exe"]), [])
        exe = self.program("tests/integration/test_b.c",
                           '#include "fixture.h"\n')
        self.assertEqual(self.run_check("b", "pg", [exe],
                                        ["2@@tkd@exe"]), [])
        script = self.write("tests/fleet/test_c.py", "import fleetfx\n")
        self.assertEqual(self.run_check("c", "fleet",
                                        ["/usr/bin/python3", script]), [])

    def test_a_unit_program_of_integration(self):
        exe = self.program("tests/integration/test_a.c")
        self.assertOne(self.run_check("a", "unit", [exe]),
                       "a: tests/integration/test_a.c: suite unit is not "
                       "one of tests/integration/'s (integration, pg)")

    def test_suite_fleet_outside_tests_fleet(self):
        script = self.write("tests/integration/test_f.py", "pass\n")
        self.assertOne(self.run_check("f", "fleet",
                                      ["/usr/bin/python3", script]),
                       "suite fleet is not one of tests/integration/'s")

    def test_a_folder_without_a_row(self):
        script = self.write("tests/other/test_o.py", "pass\n")
        self.assertOne(self.run_check("o", "unit",
                                      ["/usr/bin/python3", script]),
                       "tests/other/test_o.py: its folder has no row")

    def test_a_folder_with_no_suite(self):
        script = self.write("tests/support/test_s.py", "pass\n")
        self.assertOne(self.run_check("s", "unit",
                                      ["/usr/bin/python3", script]),
                       "suite unit is not one of tests/support/'s (none)")

    def test_a_unit_test_that_depends_on_tkd(self):
        exe = self.program("tests/unit/test_d.c")
        self.assertOne(self.run_check("d", "unit", [exe],
                                      ["1@@test_d@exe", "2@@tkd@exe",
                                       "tkd.8@cus"]),
                       "d: a unit test depends on tkd")

    def test_a_unit_program_with_a_server_fixture(self):
        exe = self.program("tests/unit/test_x.c",
                           '#include <stdio.h>\n#include "fixture.h"\n')
        self.assertOne(self.run_check("x", "unit", [exe]),
                       'tests/unit/test_x.c:2: a unit test names '
                       '#include "fixture.h"')

    def test_a_unit_script_that_starts_tkd(self):
        script = self.write("tests/fleet/test_t.py",
                            "import tkproc\nd = tkproc.start_tkd(x)\n")
        self.assertOne(self.run_check("t", "unit",
                                      ["/usr/bin/python3", script]),
                       "tests/fleet/test_t.py:2: a unit test names start_tkd")

    def test_a_unit_script_that_reads_tkcall(self):
        script = self.write("tests/unit/test_e.sh", '"$TKCALL" ping\n')
        self.assertOne(self.run_check("e", "unit", [script]),
                       "a unit test names $TKCALL")

    def test_a_row_whose_folder_is_gone(self):
        self.rule["tests/gone/"] = {"unit"}
        self.assertOne(check([], [], self.rule, self.root, self.build),
                       "row tests/gone/: no such folder")


# test_folders.py [BUILD_DIR]
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 and \
    not sys.argv[1].startswith("-") else None

if __name__ == "__main__":
    unittest.main(verbosity=2)
