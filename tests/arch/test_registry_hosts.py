#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""No file git tracks names a package registry's host (issue 34): tk gets
what it builds from through each registry's own client and the machine's
own configuration of it (tools/nng/fetch: `apt-get source` with a deb-src
entry derived from the machine's apt sources; npm with its configured
registry; pip with its index), so a mirror, a proxy or an offline copy
(TK_NNG_TARBALL) works unchanged, and the repository pins content by its
hash, never a place by its name.

Hosts: Debian's and Ubuntu's archives, npm's and Yarn's registries, PyPI
and its file host, Rust's crate index and the Go module proxy. A project's home
page (brew.sh, say) is not a registry and may be named.

  test_registry_hosts.py     (from meson, suite arch; no build needed)
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
from typing import Dict, List

faulthandler.register(signal.SIGUSR1, all_threads=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Written with escaped dots so that this file does not match itself.
HOSTS = re.compile(
    r"\b(?:(?:deb|ftp[0-9]*(?:\.[a-z]{2})?|security|snapshot|archive|"
    r"httpredir|incoming|cdn-fastly\.deb)\.debian\.org"
    r"|(?:[a-z0-9-]+\.)?(?:archive|security|ports)\.ubuntu\.com"
    r"|registry\.npmjs\.org|registry\.yarnpkg\.com"
    r"|(?:upload\.|test\.)?pypi\.(?:org|python\.org)"
    r"|files\.pythonhosted\.org"
    r"|(?:static\.)?crates\.io|index\.crates\.io"
    r"|proxy\.golang\.org|sum\.golang\.org)\b", re.IGNORECASE)


def tracked(root: str) -> List[str]:
    """Every regular file git tracks under root (not symbolic links)."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True, text=True).stdout
    return [f for f in sorted(out.split("\0")) if f and not os.path.islink(
        os.path.join(root, f)) and os.path.isfile(os.path.join(root, f))]


def hits(root: str) -> List[str]:
    """One line per registry host named in a tracked text file:
    path:line: host, and what to do instead."""
    bad = []
    for rel in tracked(root):
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        if b"\0" in data:  # binary
            continue
        text = data.decode("utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            for m in HOSTS.finditer(line):
                bad.append(f"{rel}:{n}: names the registry host "
                           f"{m.group(0)!r}: fetch through the registry's "
                           f"own client and the machine's configuration "
                           f"of it (tools/nng/fetch does for apt), and "
                           f"pin the content by its hash")
    return bad


class RegistryHosts(unittest.TestCase):
    def test_the_tree_names_none(self) -> None:
        files = tracked(ROOT)
        # Not vacuous: the files that named one before issue 34.
        for rel in ("tools/nng/fetch", "subprojects/nng.wrap", "CONTRIBUTING.md",
                    "README.md", "client/ts/package-lock.json"):
            self.assertTrue(rel in files, f"{rel} is not tracked")
        bad = hits(ROOT)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_a_host_is_seen(self) -> None:
        org, com = ".debian" + ".org", ".npmjs" + ".com"
        d = self.repo({
            # Hosts alone, assembled at run time: the fixtures name no URL.
            "build": "mirror=deb" + org + "\n",
            "CONTRIBUTING.md": "Fetched from\ndeb" + org + " and checked\n",
            "lock.json": '{"resolved": "registry' + ".npmjs.org" + '"}\n',
            "py.txt": "index files.pythonhosted" + ".org\n",
            "ubuntu": "deb gb.archive.ubuntu" + ".com jammy\n",
            "fine.md": "Homebrew (brew.sh), www" + com + ", "
                       "bugs" + org + "; apt-get source nng\n",
            "blob.bin": "\0deb" + org,
        })
        got = [h.split(": names")[0] for h in hits(d)]
        self.assertEqual(got, ["CONTRIBUTING.md:2", "build:1", "lock.json:1",
                               "py.txt:1", "ubuntu:1"])
        self.assertIn("'deb" + org + "'", hits(d)[0])

    def repo(self, files: Dict[str, str]) -> str:
        d = tempfile.mkdtemp(prefix="tk-registry-hosts-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        for rel, text in files.items():
            with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                f.write(text)
        subprocess.run(["git", "-C", d, "init", "-q"], check=True)
        subprocess.run(["git", "-C", d, "add", "."], check=True)
        return d


if __name__ == "__main__":
    unittest.main(verbosity=2)
