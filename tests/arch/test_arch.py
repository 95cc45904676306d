#!/usr/bin/python3
"""The architecture rules hold on the tree, and each fails on the fixture
that breaks it.

  test_arch.py [BUILD_DIR]   (meson passes its build directory)

Each folder under fixtures/ is a small tree with an `expect` file, one line
per violation it must produce: `RULE: part of the message`, `stale: ...`
for an allowlist entry no longer needed, or `clean: why` for none. Every
violation of a fixture must be expected: a fixture proves one rule, not
whatever else breaks in it.

A fixture with a `compile_commands.in` is checked as the real tree is, with
a build's compilation database: the test writes it to a build directory
outside the fixture, @BUILD@ replaced by that directory and @ROOT@ by the
fixture's path relative to it, as meson writes its flags (-I../../src)."""

import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 else None
FIXTURES = os.path.join(HERE, "fixtures")


class Architecture(unittest.TestCase):
    def test_the_tree_follows_the_rules(self):
        unresolved = []
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

    def build_dir(self, root):
        """None, or a build directory with the fixture's compile commands."""
        template = os.path.join(root, "compile_commands.in")
        if not os.path.exists(template):
            return None
        build = tempfile.mkdtemp(prefix="tk-arch-build-")
        self.addCleanup(shutil.rmtree, build, ignore_errors=True)
        with open(template) as f:
            text = f.read().replace("@BUILD@", build).replace(
                "@ROOT@", os.path.relpath(root, build))
        with open(os.path.join(build, "compile_commands.json"), "w") as f:
            f.write(text)
        return build

    def check_fixture(self, root):
        with open(os.path.join(root, "expect")) as f:
            expected = [line.rstrip("\n").split(": ", 1) for line in f
                        if line.strip()]
        violations, unused = arch.check(
            root, self.build_dir(root), os.path.join(root, "allowlist"),
            os.path.join(ROOT, "DESIGN.md"))
        got = [str(v) for v in violations]
        stale = [f"allowlist entry no longer needed: {e[0]} {e[1]}"
                 for e in unused]
        rules = {rule for rule, _ in expected}
        for rule, text in expected:
            if rule == "clean":
                self.assertEqual(got + stale, [])
            elif rule == "stale":
                self.assertTrue(any(text in s for s in stale), stale)
            else:
                self.assertTrue(
                    any(text in g and f": {rule}: " in g for g in got),
                    f"no {rule} violation saying {text!r} in {got}")
        for v in violations:
            self.assertIn(v.rule, rules, f"unexpected: {v}")
        if "stale" not in rules:
            self.assertEqual(stale, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
