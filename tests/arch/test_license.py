#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tk is MIT-licensed (LICENSE; meson.build and client/ts/package.json say
so too), and every source file of tk's own says so in its first lines:

  C, C++        /* SPDX-License-Identifier: MIT */
  Python, shell # SPDX-License-Identifier: MIT     (after a #! line)
  TypeScript    // SPDX-License-Identifier: MIT

Owned: the files git tracks, by their extension (.c .h .cc .py .sh .bash
.zsh .ts .mjs .js) or, without one, by a first line that starts #! or
#compdef (tools/run, tests/fakes/launchctl, tkcall's zsh completion).
Not owned: gen/ and the generated files of client/python/tk (what protoc
and the generators write), client/ts/dist/ (tsc's output of client/ts/src
and gen/ts, checked in), NNG's patches (subprojects/packagefiles/
nng-patches: NNG's code), a test's fixtures/ (inputs shaped to the rule
they test, line numbers included), the fuzzing corpora, and symbolic links.

  test_license.py        (from meson, suite arch; no build needed)
"""

from __future__ import annotations

import faulthandler
import os
import re
import shutil
import signal
import subprocess
import tempfile
import unittest
from typing import Dict, List, Optional, Tuple

faulthandler.register(signal.SIGUSR1, all_threads=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

MARK = "SPDX-License-Identifier: MIT"
# The line goes first, or second after a #! or #compdef line: it is looked
# for in this many.
HEAD_LINES = 3
LINE = {
    "c": "/* " + MARK + " */",
    "hash": "# " + MARK,
    "slash": "// " + MARK,
}
KIND_OF_EXT = {
    ".c": "c", ".h": "c", ".cc": "c",
    ".py": "hash", ".sh": "hash", ".bash": "hash", ".zsh": "hash",
    ".ts": "slash", ".mjs": "slash", ".js": "slash",
}
NOT_OWNED = re.compile(r"^gen/|^client/python/tk/(v1/|_services\.py$|"
                       r"_catalog\.py$)|^client/ts/dist/|(^|/)fixtures/|"
                       r"^tests/fuzz/corpus/|"
                       r"^subprojects/packagefiles/nng-patches/.*\.patch$")


def kind_of(root: str, rel: str) -> Optional[str]:
    """The comment style of an owned source file, or None if rel is not
    one."""
    path = os.path.join(root, rel)
    if NOT_OWNED.search(rel) or os.path.islink(path) or not os.path.isfile(
            path):
        return None
    ext = os.path.splitext(rel)[1]
    if ext:
        return KIND_OF_EXT.get(ext)
    with open(path, "rb") as f:
        first = f.readline()
    return "hash" if first.startswith((b"#!", b"#compdef")) else None


def owned_sources(root: str) -> List[Tuple[str, str]]:
    """[(path relative to root, comment kind)] of every owned source
    file git tracks under root."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True, text=True).stdout
    files = [f for f in out.split("\0") if f]
    return [(f, k) for f in sorted(files)
            for k in [kind_of(root, f)] if k is not None]


def unlicensed(root: str) -> List[str]:
    """Every owned source file without its SPDX line, one line each saying
    the line to add."""
    bad = []
    for rel, kind in owned_sources(root):
        with open(os.path.join(root, rel), encoding="utf-8",
                  errors="replace") as f:
            head = [f.readline() for _ in range(HEAD_LINES)]
        if not any(MARK in line for line in head):
            bad.append(f"{rel}: no {MARK!r} in its first {HEAD_LINES} "
                       f"lines: add `{LINE[kind]}` (after a #! line)")
    return bad


class License(unittest.TestCase):
    def test_license_is_mit(self) -> None:
        with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("MIT License\n"), text[:40])
        self.assertIn("Copyright (c) 2026 the tk authors", text)
        with open(os.path.join(ROOT, "meson.build"), encoding="utf-8") as f:
            self.assertIn("license : 'MIT'", f.read())
        with open(os.path.join(ROOT, "client", "ts", "package.json"),
                  encoding="utf-8") as f:
            self.assertIn('"license": "MIT"', f.read())

    def test_every_owned_source_says_so(self) -> None:
        found = dict(owned_sources(ROOT))
        # Not vacuous: each kind, and what has no extension.
        for rel in ("service/main.c", "tools/gen-stubs.py", "tools/run",
                    "client/ts/src/client.ts", "tests/fakes/launchctl",
                    "client/tkcall/completion/_tkcall"):
            self.assertIn(rel, found)
        self.assertNotIn("gen/c/tk/catalog.c", found)
        bad = unlicensed(ROOT)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_a_file_without_it_is_seen(self) -> None:
        d = self.repo({
            "a.c": "/* " + MARK + " */\nint a;\n",
            "b.h": "/* b: no line */\n",
            "run": "#!/bin/sh\n# " + MARK + "\necho\n",
            "late": "#!/bin/sh\n\n\n# " + MARK + "\n",
            "t.ts": "export {};\n",
            "data.json": "{}\n",
            "gen/x.c": "int x;\n",
            "tests/arch/fixtures/f/y.c": "int y;\n",
            "subprojects/packagefiles/nng-patches/01-x.patch": "--- a\n",
        })
        self.assertEqual([b.split(":")[0] for b in unlicensed(d)],
                         ["b.h", "late", "t.ts"])
        self.assertIn("add `// " + MARK + "`", unlicensed(d)[2])

    def repo(self, files: Dict[str, str]) -> str:
        d = tempfile.mkdtemp(prefix="tk-license-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                f.write(text)
        subprocess.run(["git", "-C", d, "init", "-q"], check=True)
        subprocess.run(["git", "-C", d, "add", "."], check=True)
        return d


if __name__ == "__main__":
    unittest.main(verbosity=2)
