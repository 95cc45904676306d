# SPDX-License-Identifier: MIT
"""Small git repositories for the tests of tools/lint-new and
tools/check-suppressions: C files, the project's .clang-tidy, and a
compile_commands.json in build/ (no meson needed)."""

import json
import os
import shutil
import subprocess
import tempfile

SRC = os.environ.get("TK_SOURCE_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(SRC, "tools")


class Repo:
    def __init__(self, path):
        self.path = path
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "test@example.invalid")
        self.git("config", "user.name", "test")
        shutil.copy(os.path.join(SRC, ".clang-tidy"), path)
        with open(os.path.join(path, ".gitignore"), "w") as f:
            f.write("/build/\n")
        self.commit_all("config")

    @classmethod
    def temp(cls, case):
        d = tempfile.mkdtemp(prefix="tk-lint-test-")
        case.addCleanup(shutil.rmtree, d, ignore_errors=True)
        return cls(d)

    def git(self, *args):
        return subprocess.run(["git", "-C", self.path, *args], check=True,
                              capture_output=True, text=True).stdout

    def write(self, name, text):
        p = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        self.compdb()

    def compdb(self):
        """build/compile_commands.json for every .c in the work tree."""
        entries = []
        for dirpath, _, files in os.walk(self.path):
            if "/.git" in dirpath or "/build" in dirpath:
                continue
            for f in files:
                if f.endswith(".c"):
                    entries.append({"directory": self.path,
                                    "file": os.path.join(dirpath, f),
                                    "command": "cc -std=c11 -c "
                                    + os.path.join(dirpath, f)})
        os.makedirs(os.path.join(self.path, "build"), exist_ok=True)
        with open(os.path.join(self.path, "build",
                               "compile_commands.json"), "w") as f:
            json.dump(entries, f)

    def commit_all(self, msg):
        self.git("add", "-A")
        self.git("commit", "-q", "-m", msg)

    def run(self, tool, *args, cwd=None):
        p = subprocess.run(["/usr/bin/python3", os.path.join(TOOLS, tool),
                            "--build", "build", *args],
                           cwd=cwd or self.path, capture_output=True,
                           text=True)
        return p.returncode, p.stdout, p.stderr
