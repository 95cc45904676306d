#!/usr/bin/python3
"""tools/check-suppressions, one fixture per rule: each file under
fixtures/suppressions says on its first line what the tool must say of it
(`expect: clean`, or a piece of the message)."""

import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lintrepo import Repo  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures", "suppressions")


def expectation(path):
    with open(path) as f:
        m = re.match(r"/\* expect: (.*?)\.( |\*/)", f.readline())
    assert m, f"{path}: first line must be /* expect: ... */"
    return m[1]


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
                if want == "clean":
                    self.assertEqual(rc, 0, out + err)
                    self.assertEqual(out, "")
                else:
                    self.assertEqual(rc, 1, out + err)
                    self.assertIn(want, out)
                    self.assertIn(name + ":", out)

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
