#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/check-suppressions, one fixture per rule: the first line of each
file under fixtures/suppressions says what the tool must report of it,
`/* expect: clean -- why */` or `/* expect: LINE: TEXT[; LINE: TEXT] -- why */`:
exactly one problem on each LINE, its message containing TEXT, and no
other. The line names no suppression keyword: the tool would read it as
one (the fixture would then prove nothing about the line it is about).
Keep it within 80 columns: tools/format would wrap it and move every line."""

import faulthandler
import glob
import os
import re
import signal
import unittest

from lintrepo import Repo

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures", "suppressions")


def expectation(path):
    """None for clean, else [(line, text)]."""
    with open(path) as f:
        m = re.match(r"/\* expect: (.*?)(?: -- .*)? \*/$", f.readline())
    assert m, f"{path}: first line must be /* expect: ... -- why */"
    if m[1] == "clean":
        return None
    want = []
    for part in m[1].split("; "):
        n, text = part.split(": ", 1)
        want.append((int(n), text))
    return want


class CheckSuppressions(unittest.TestCase):
    def check(self, name):
        src = os.path.join(FIXTURES, name)
        repo = Repo.temp(self)
        with open(src) as f:
            repo.write(name, f.read())
        repo.commit_all(name)
        return repo, repo.run("check-suppressions")

    def test_every_fixture(self):
        files = sorted(glob.glob(os.path.join(FIXTURES, "*.c")))
        self.assertGreaterEqual(len(files), 9)
        for path in files:
            name, want = os.path.basename(path), expectation(path)
            with self.subTest(fixture=name):
                _, (rc, out, err) = self.check(name)
                if want is None:
                    self.assertEqual(rc, 0, out + err)
                    self.assertEqual(out, "")
                    continue
                self.assertEqual(rc, 1, out + err)
                left = out.splitlines()
                for n, text in want:
                    hit = [p for p in left
                           if p.startswith(f"{name}:{n}: ") and text in p]
                    self.assertTrue(hit, f"no problem at {name}:{n} saying "
                                    f"{text!r} in {out}")
                    left.remove(hit[0])
                self.assertEqual(left, [], "not expected")

    def test_stale_names_the_check_that_no_longer_fires(self):
        _, (rc, out, _) = self.check("stale_check.c")
        self.assertEqual(rc, 1)
        self.assertIn("NOLINT(bugprone-branch-clone) is stale", out)
        self.assertNotIn("NOLINT(cert-err34-c) is stale", out)

    def test_list_prints_the_inventory(self):
        repo = Repo.temp(self)
        for name in ("live.c", "live_block.c"):
            with open(os.path.join(FIXTURES, name)) as f:
                repo.write(name, f.read())
        repo.commit_all("two")
        rc, out, err = repo.run("check-suppressions", "--list")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(out.splitlines(), [
            "live.c:8: cert-err34-c: the fixture needs a live suppression",
            "live_block.c:8: cert-err34-c: the fixture needs a live block",
        ])

    def test_fixtures_are_left_out_of_the_real_tree(self):
        # The fixtures break the rules on purpose: the tree's own run must
        # not see them (tests/**/fixtures/** is excluded).
        repo = Repo.temp(self)
        with open(os.path.join(FIXTURES, "bare.c")) as f:
            repo.write("tests/x/fixtures/bare.c", f.read())
        repo.commit_all("fixture")
        rc, out, err = repo.run("check-suppressions")
        self.assertEqual(rc, 0, out + err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
