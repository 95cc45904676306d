#!/usr/bin/python3
"""tools/lint-new reports what a branch added since its merge-base, and
nothing else; it refuses a shallow clone."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lintrepo import Repo  # noqa: E402

# cert-err34-c: atoi cannot report a conversion error.
OLD = """#include <stdlib.h>

int old_parse(const char *s);

int old_parse(const char *s)
{
    return atoi(s);
}
"""
CLEAN_ADDITION = """
int old_twice(const char *s);

int old_twice(const char *s)
{
    return 2 * old_parse(s);
}
"""
NEW = """#include <stdlib.h>

long new_parse(const char *s);

long new_parse(const char *s)
{
    return atol(s);
}
"""


class LintNew(unittest.TestCase):
    def setUp(self):
        self.repo = Repo.temp(self)
        self.repo.write("src/old.c", OLD)
        self.repo.commit_all("old code, with a violation")
        self.repo.git("checkout", "-q", "-b", "feature")

    def lint_new(self, *args):
        return self.repo.run("lint-new", *args)

    def test_a_commit_that_adds_a_violation_is_caught(self):
        self.repo.write("src/new.c", NEW)
        self.repo.commit_all("new code, with a violation")
        rc, out, err = self.lint_new("--target", "main")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("src/new.c:7:", out)
        self.assertIn("[cert-err34-c]", out)
        self.assertNotIn("src/old.c", out)

    def test_uncommitted_lines_count_as_new(self):
        self.repo.write("src/new.c", NEW)
        self.repo.git("add", "src/new.c")
        rc, out, _ = self.lint_new("--target", "main")
        self.assertEqual(rc, 1)
        self.assertIn("src/new.c:7:", out)

    def test_a_violation_in_untouched_code_is_not_reported(self):
        with open(os.path.join(self.repo.path, "src/old.c"), "a") as f:
            f.write(CLEAN_ADDITION)
        self.repo.compdb()
        self.repo.commit_all("clean addition to a file with old debt")
        rc, out, err = self.lint_new("--target", "main")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(out, "")
        # Negative control: the old violation is there for tools/lint.
        rc, out, _ = self.repo.run("lint")
        self.assertEqual(rc, 1)
        self.assertIn("src/old.c:7:", out)

    def test_the_target_moving_on_does_not_change_the_report(self):
        self.repo.write("src/new.c", NEW)
        self.repo.commit_all("new code, with a violation")
        before = self.lint_new("--target", "main")
        self.assertEqual(before[0], 1)
        # main moves on: it rewrites the old violation and adds its own.
        self.repo.git("checkout", "-q", "main")
        self.repo.write("src/old.c", OLD.replace("atoi(s)", "atoi(s + 0)"))
        self.repo.write("src/theirs.c", NEW.replace("new_parse", "their_parse"))
        self.repo.commit_all("main's own change, with violations")
        self.repo.git("checkout", "-q", "feature")
        self.repo.compdb()
        after = self.lint_new("--target", "main")
        self.assertEqual(after[:2], before[:2])
        self.assertNotIn("theirs.c", after[1])
        self.assertNotIn("old.c", after[1])
        # Negative control: against main's tip, the branch's copy of old.c
        # line 7 reads as added, so a tip-based tool would blame it here.
        diff = self.repo.git("diff", "-U0", "main", "--", "src/old.c")
        self.assertIn("+    return atoi(s);", diff)

    def test_target_defaults_to_main_without_origin(self):
        self.repo.write("src/new.c", NEW)
        self.repo.commit_all("new code, with a violation")
        rc, out, err = self.lint_new()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("merge-base with main", err)

    def test_no_target_cannot_run(self):
        rc, _, err = self.lint_new("--target", "no-such-branch")
        self.assertEqual(rc, 2)
        self.assertIn("no-such-branch", err)

    def test_a_shallow_clone_is_refused(self):
        self.repo.write("src/new.c", NEW)
        self.repo.commit_all("new code, with a violation")
        with tempfile.TemporaryDirectory(prefix="tk-lint-shallow-") as d:
            clone = os.path.join(d, "clone")
            subprocess.run(["git", "clone", "-q", "--depth", "1", "-b",
                            "feature", "file://" + self.repo.path, clone],
                           check=True, capture_output=True)
            subprocess.run(["git", "-C", clone, "branch", "main",
                            "origin/feature"], capture_output=True)
            rc, out, err = self.repo.run("lint-new", cwd=clone)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("shallow clone", err)
        self.assertIn("full history", err)
        self.assertIn("fetch-depth: 0", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
