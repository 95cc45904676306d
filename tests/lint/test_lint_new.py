#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/lint-new reports what a branch added since its merge-base, and
nothing else; it refuses a shallow clone."""

import faulthandler
import os
import signal
import subprocess
import tempfile
import unittest

from lintrepo import Repo

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

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

    def test_an_untracked_file_is_named_not_linted(self):
        self.repo.write("src/new.c", NEW)
        rc, out, err = self.lint_new("--target", "main")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(out, "")
        self.assertIn("src/new.c is untracked: not linted (git add it)", err)

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

    def test_target_defaults_to_origin_main_and_its_merge_base(self):
        # origin/main is ahead of the local main, which was never updated:
        # it gained a file with its own violation, and the branch started
        # from there. Against the stale local main that file would read as
        # the branch's own.
        self.repo.git("checkout", "-q", "main")
        self.repo.git("checkout", "-q", "-b", "upstream")
        self.repo.write("src/shared.c",
                        NEW.replace("new_parse", "shared_parse"))
        self.repo.commit_all("landed upstream, with a violation")
        origin = os.path.join(self.repo.path, "build", "origin.git")
        subprocess.run(["git", "init", "-q", "--bare", origin], check=True)
        self.repo.git("remote", "add", "origin", origin)
        self.repo.git("push", "-q", "origin", "upstream:main")
        self.repo.git("fetch", "-q", "origin")
        self.repo.git("checkout", "-q", "-b", "feature2", "origin/main")
        self.repo.write("src/new.c", NEW)
        self.repo.commit_all("new code, with a violation")
        base = self.repo.git("merge-base", "origin/main", "HEAD").strip()
        # Then origin/main moves on past the branch point: it rewrites the
        # old violation, which a tool diffing against its tip would read as
        # added by the branch.
        self.repo.git("checkout", "-q", "upstream")
        self.repo.write("src/old.c", OLD.replace("atoi(s)", "atoi(s + 0)"))
        self.repo.commit_all("upstream moves on")
        self.repo.git("push", "-q", "origin", "upstream:main")
        self.repo.git("fetch", "-q", "origin")
        self.repo.git("checkout", "-q", "feature2")
        self.repo.compdb()
        self.assertNotEqual(self.repo.git("rev-parse", "origin/main").strip(),
                            base)
        self.assertNotEqual(self.repo.git("rev-parse", "main"),
                            self.repo.git("rev-parse", "origin/main"))
        rc, out, err = self.lint_new()
        self.assertEqual(rc, 1, out + err)
        self.assertIn(f"since {base[:12]} (merge-base with origin/main)", err)
        self.assertIn("src/new.c:7:", out)
        self.assertNotIn("src/shared.c", out)
        self.assertNotIn("src/old.c", out)
        # Negative control: with the stale local main as the target,
        # upstream's file is blamed on the branch.
        rc, out, _ = self.lint_new("--target", "main")
        self.assertEqual(rc, 1)
        self.assertIn("src/shared.c:7:", out)

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
