#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The gates of the scripting languages on small git repositories:
tools/lint-sh (shellcheck, zsh -n), tools/lint-py (flake8, mypy) and
tools/lint-ts (tsc). Each fails on a file that breaks its rules, naming
it, passes a clean tree, finds a script by its #! line, leaves gen/
alone, and cannot run without its program."""

import faulthandler
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

from lintrepo import SRC, TOOLS, Repo

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

SH_OK = '#!/usr/bin/env bash\nset -euo pipefail\necho "${1:-}"\n'
SH_BAD = "#!/bin/sh\necho $1\n"  # SC2086: unquoted
ZSH_BAD = "#!/usr/bin/env zsh\nif true; then\n"  # no fi

PY_OK = '"""A module."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n'
PY_UNUSED = "#!/usr/bin/python3\nimport os\n"  # F401
PY_TYPE = 'def f() -> int:\n    return "one"\n'  # a str for an int
# Passes in tests/ (no annotations asked) but not in the client's tk.
PY_UNTYPED = "def add(a, b):\n    return a + b\n"

TS_OK = "export function add(a: number, b: number): number {\n  return a + b;\n}\n"
TS_BAD = "export function add(a, b) {\n  return a + b;\n}\n"  # implicit any


class Gate(unittest.TestCase):
    tool = ""

    def setUp(self) -> None:
        self.repo = Repo.temp(self)

    def run_tool(self, *args: str, env=None):
        p = subprocess.run(["/usr/bin/python3", os.path.join(TOOLS, self.tool),
                            *args], cwd=self.repo.path, env=env,
                           capture_output=True, text=True, timeout=240)
        return p.returncode, p.stdout, p.stderr

    def without(self, program: str):
        """An environment whose PATH has git and python3 but not program."""
        bin_ = tempfile.mkdtemp(prefix="tk-lint-path-")
        self.addCleanup(shutil.rmtree, bin_, ignore_errors=True)
        for tool in ("git", "python3", "sh"):
            path = shutil.which(tool)
            assert path is not None, tool
            os.symlink(path, os.path.join(bin_, tool))
        self.assertIsNone(shutil.which(program, path=bin_))
        return dict(os.environ, PATH=bin_)


class Shell(Gate):
    tool = "lint-sh"

    def test_clean_scripts_pass(self) -> None:
        self.repo.write("tools/ok", SH_OK)
        self.repo.write("tests/ok.sh", SH_OK)
        self.repo.commit_all("clean")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("in 2 script(s)", err)

    def test_a_script_without_extension_is_found_by_its_shebang(self) -> None:
        self.repo.write("tools/bad", SH_BAD)
        self.repo.write("notes.txt", "echo $1\n")  # no #!: not a script
        self.repo.commit_all("bad")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"^tools/bad:2:6: .*\[SC2086\]$")
        self.assertNotIn("notes.txt", out)

    def test_zsh_gets_its_syntax_checked(self) -> None:
        self.repo.write("tests/x.zsh", ZSH_BAD)
        self.repo.commit_all("zsh")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("tests/x.zsh", out)
        self.assertIn("[zsh -n]", out)

    def test_gen_is_not_checked(self) -> None:
        self.repo.write("gen/x.sh", SH_BAD)
        self.repo.commit_all("generated")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 0, out + err)

    def test_without_shellcheck_it_cannot_run(self) -> None:
        self.repo.write("tools/ok", SH_OK)
        self.repo.commit_all("clean")
        rc, out, err = self.run_tool(env=self.without("shellcheck"))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("shellcheck not found", err)


class Python(Gate):
    tool = "lint-py"

    def setUp(self) -> None:
        super().setUp()
        for name in (".flake8", ".mypy.ini"):
            shutil.copy(os.path.join(SRC, name), self.repo.path)
        with open(os.path.join(self.repo.path, ".gitignore"), "a") as f:
            f.write("/build/\n")

    def test_clean_files_pass(self) -> None:
        self.repo.write("tools/ok.py", PY_OK)
        self.repo.write("tests/untyped.py", PY_UNTYPED)
        self.repo.commit_all("clean")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("in 2 file(s)", err)

    def test_flake8_finds_a_script_by_its_shebang(self) -> None:
        self.repo.write("tools/unused", PY_UNUSED)
        self.repo.commit_all("unused import")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^tools/unused:2:1: F401 ")

    def test_mypy_finds_a_type_error(self) -> None:
        self.repo.write("tests/wrong.py", PY_TYPE)
        self.repo.commit_all("wrong type")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^tests/wrong\.py:2: error: .*"
                              r"\[return-value\]$")

    def test_the_client_package_is_strict(self) -> None:
        self.repo.write("client/python/tk/__init__.py", PY_UNTYPED)
        self.repo.commit_all("untyped client")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^client/python/tk/__init__\.py:1: "
                              r"error: .*\[no-untyped-def\]$")

    def test_gen_is_not_checked(self) -> None:
        self.repo.write("gen/python/x.py", PY_UNUSED)
        self.repo.write("tools/ok.py", PY_OK)
        self.repo.commit_all("generated")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 0, out + err)


class TypeScript(Gate):
    tool = "lint-ts"

    def setUp(self) -> None:
        super().setUp()
        modules = os.path.join(SRC, "client", "ts", "node_modules")
        self.assertTrue(os.path.isdir(modules), "client/ts is not installed: "
                        "npm ci --prefix client/ts (tools/install-deps)")
        ts = os.path.join(self.repo.path, "client", "ts")
        os.makedirs(ts)
        # tsconfig.json extends tsconfig.build.json (the package's build)
        for name in ("tsconfig.json", "tsconfig.build.json"):
            shutil.copy(os.path.join(SRC, "client", "ts", name), ts)
        os.symlink(modules, os.path.join(ts, "node_modules"))
        with open(os.path.join(self.repo.path, ".gitignore"), "a") as f:
            f.write("node_modules\n")

    def test_clean_client_passes(self) -> None:
        self.repo.write("client/ts/src/add.ts", TS_OK)
        self.repo.commit_all("clean")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 0, out + err)

    def test_strict_finds_an_implicit_any(self) -> None:
        self.repo.write("client/ts/src/add.ts", TS_BAD)
        self.repo.commit_all("implicit any")
        rc, out, err = self.run_tool()
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"(?m)^client/ts/src/add\.ts\(1,21\): "
                              r"error TS7006: ")

    def test_without_node_it_cannot_run(self) -> None:
        self.repo.write("client/ts/src/add.ts", TS_OK)
        self.repo.commit_all("clean")
        rc, out, err = self.run_tool(env=self.without("node"))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("node not found", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
