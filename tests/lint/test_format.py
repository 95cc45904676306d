#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/format --check fails on a C file .clang-format would change,
naming it, passes a formatted one, and cannot run without clang-format."""

import faulthandler
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

from lintrepo import SRC, Repo

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

FORMATTED = """int add(int a, int b);

int add(int a, int b)
{
    return a + b;
}
"""
MISFORMATTED = """int add(int a,int b);

int add(int a, int b) {
  return a+b;
}
"""


class Format(unittest.TestCase):
    def setUp(self):
        # tools/format works on the repository it lives in: give the
        # temporary one its own copy, and the project's .clang-format.
        self.repo = Repo.temp(self)
        os.makedirs(os.path.join(self.repo.path, "tools"))
        shutil.copy(os.path.join(SRC, "tools", "format"),
                    os.path.join(self.repo.path, "tools", "format"))
        shutil.copy(os.path.join(SRC, ".clang-format"), self.repo.path)
        self.repo.write("src/good.c", FORMATTED)
        self.repo.commit_all("formatted code")

    def check(self, env=None):
        p = subprocess.run([os.path.join(self.repo.path, "tools", "format"),
                            "--check"], cwd=self.repo.path, env=env,
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def test_formatted_code_passes(self):
        rc, out, err = self.check()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(out, "")

    def test_misformatted_file_fails_and_is_named(self):
        self.repo.write("src/bad.c", MISFORMATTED)
        self.repo.commit_all("misformatted code")
        rc, out, err = self.check()
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(out.splitlines(), [
            "not formatted: src/bad.c (tools/format fixes it)"])

    def test_gen_is_not_checked(self):
        self.repo.write("gen/c/x.pb-c.c", MISFORMATTED)
        self.repo.commit_all("generated code")
        rc, out, err = self.check()
        self.assertEqual(rc, 0, out + err)

    def test_without_clang_format_it_cannot_run(self):
        # A PATH with what the script needs, but no clang-format.
        with tempfile.TemporaryDirectory(prefix="tk-format-path-") as bin_:
            for tool in ("bash", "git", "grep", "dirname"):
                path = shutil.which(tool)
                assert path is not None, tool
                os.symlink(path, os.path.join(bin_, tool))
            rc, out, err = self.check(dict(os.environ, PATH=bin_))
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(out, "")
        self.assertIn("clang-format not found", err)
        self.assertIn("tools/install-deps", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
