# SPDX-License-Identifier: MIT
"""What tools/lint-sh and tools/lint-py share: the tracked files we own in
each scripting language, found by extension or, for a script without one
(tools/lint, .ci/run, tests/fakes/launchctl), by its #! line.

Debian's /usr/bin/python3 and the standard library only (no PyPI here).
"""

import os
import re
import subprocess

# The gates' exit statuses, CannotRun, die and repo_root are tidy.py's.
from tidy import CANNOT_RUN, CLEAN, FINDINGS, CannotRun, die, repo_root

# What we do not own: protoc's and the generators' output (the generators
# themselves, tools/gen-*.py, are ours): gen/, and the generated files of
# the Python client's package (tools/regen writes both).
NOT_OURS = ("gen/", "client/python/tk/v1/", "client/python/tk/_services.py",
            "client/python/tk/_catalog.py")

EXTENSIONS = {".sh": "sh", ".bash": "bash", ".zsh": "zsh", ".py": "python"}
# "#!/bin/sh", "#!/usr/bin/env bash", "#!/usr/bin/python3", ...
SHEBANG = re.compile(rb"^#!\s*(?:/usr)?/bin/(?:env\s+)?(\S+)")
INTERPRETERS = {"sh": "sh", "bash": "bash", "zsh": "zsh",
                "python3": "python", "python": "python"}

__all__ = ["CANNOT_RUN", "CLEAN", "FINDINGS", "CannotRun", "chosen", "die",
           "language", "owned", "repo_root"]


def language(root: str, path: str) -> str:
    """"sh", "bash", "zsh", "python", or "" (none of them) for a file."""
    ext = EXTENSIONS.get(os.path.splitext(path)[1])
    if ext:
        return ext
    full = os.path.join(root, path)
    if os.path.islink(full) or not os.path.isfile(full):
        return ""
    with open(full, "rb") as f:
        first = f.readline(200)
    if first.startswith(b"#compdef "):  # a zsh completion (_tkcall)
        return "zsh"
    m = SHEBANG.match(first)
    return INTERPRETERS.get(m[1].decode(), "") if m else ""


def owned(root: str, languages: tuple) -> dict:
    """{path: language} of the tracked files in those languages, not
    under gen/, sorted by path."""
    p = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CannotRun(f"git ls-files: {p.stderr.strip()}")
    out = {}
    for path in sorted(filter(None, p.stdout.split("\0"))):
        if path.startswith(NOT_OURS):
            continue
        lang = language(root, path)
        if lang in languages:
            out[path] = lang
    return out


def chosen(root: str, languages: tuple, files: list) -> dict:
    """owned(), or the FILE arguments of the command line (which must be
    ones it would choose)."""
    mine = owned(root, languages)
    if not files:
        return mine
    want = [os.path.relpath(os.path.abspath(f), root) for f in files]
    other = [f for f in want if f not in mine]
    if other:
        raise CannotRun("not a tracked %s file we own: %s"
                        % ("/".join(languages), " ".join(other)))
    return {f: mine[f] for f in want}
