#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tools/apple/check can fail, and says why: the negative control.

  test_check.py     (meson: suite arch; needs clang and glibc's headers,
                     no build)

fixtures/good.c uses each Apple-only symbol tk keeps in tools/apple/include
and the prelude as Apple documents it, and must pass. fixtures/bad.c
breaks the rules once a line, each marked `/* expect: WHAT */`, and must
fail with the message below at each marked line, for both arches, and
nowhere else."""

import faulthandler
import os
import re
import signal
import subprocess
import unittest

faulthandler.register(signal.SIGUSR1, all_threads=True)

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check")
FIXTURES = os.path.join(HERE, "fixtures")

EXPECT = {
    "linux": "header '<linux/errno.h>' is an implementation detail",
    "eventfd": "Linux only: <sys/eventfd.h> is not on macOS",
    "pipe2": "'pipe2' is unavailable: Linux/glibc only",
    "O_PATH": "undeclared identifier 'O_PATH'",
    "wrong pointer": "passing 'int *' to parameter of type 'uint32_t *'",
    "GNU": "format specifies type 'char *' but the argument has type 'int'",
    "environ": "undeclared identifier 'environ'",
}


def run(*args):
    return subprocess.run([CHECK] + list(args), capture_output=True,
                          text=True)


class Check(unittest.TestCase):
    def test_good_passes(self):
        p = run(os.path.join(FIXTURES, "good.c"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")

    def test_bad_fails_where_marked(self):
        path = os.path.join(FIXTURES, "bad.c")
        want = {}
        with open(path) as f:
            for n, line in enumerate(f, 1):
                m = re.search(r"/\* expect: (.*?) \*/", line)
                if m:
                    want[n] = EXPECT[m[1]]
        self.assertEqual(len(want), len(EXPECT))
        p = run(path)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        got: dict[int, list[str]] = {}
        for line in p.stdout.splitlines():
            m = re.match(r"^tools/apple/fixtures/bad\.c:(\d+): \[(\w+)\] (.*)$",
                         line)
            assert m is not None, f"not FILE:LINE: [arch] message: {line}"
            self.assertEqual(m[2], "both", line)
            got.setdefault(int(m[1]), []).append(m[3])
        self.assertEqual(sorted(got), sorted(want), p.stdout)
        for n, text in want.items():
            self.assertTrue(any(text in msg for msg in got[n]),
                            f"bad.c:{n}: want {text!r}, got {got[n]}")
        self.assertIn("1 of 1 files do not compile", p.stderr)

    def test_config_names_are_mesons(self):
        """tools/apple/port_config.h defines a value for each TK_HAVE_
        meson.build checks, and no other: a check added there without a
        macOS answer here (or one removed) fails."""
        with open(os.path.join(HERE, "..", "..", "meson.build")) as f:
            meson = f.read()
        block = re.search(r"^port_have = \{(.*?)^\}", meson, re.M | re.S)
        assert block is not None, "no port_have in meson.build"
        want = {"TK_HAVE_" + n
                for n in re.findall(r"^\s*'([A-Z0-9_]+)' :", block[1], re.M)}
        self.assertGreater(len(want), 5)
        with open(os.path.join(HERE, "port_config.h")) as f:
            got = set(re.findall(r"^#define (TK_HAVE_\w+) [01]\b", f.read(),
                                 re.M))
        self.assertEqual(got, want)

    def test_help(self):
        p = run("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("tools/apple/check", p.stdout)

    def test_a_missing_build_cannot_run(self):
        p = run("--build", os.path.join(FIXTURES, "no-such-build"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("compile_commands.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
