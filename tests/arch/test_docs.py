#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The docs hold what a test can check of them (issue 32, point 6: docs
drift where no test reads them):

- every relative link of the tree's Markdown (README.md, DESIGN.md,
  CONTRIBUTING.md, BENCHMARKS.md, docs/, the READMEs under tests/) names a
  file of the tree, and its #anchor a heading of that file, as GitHub
  makes anchors of headings;
- every method of every service in proto/ is named, in backticks, on its
  service's page (PAGES below): a method added without its docs fails;
- README.md stays a front door: at most README_MAX_LINES lines, the
  reference in docs/;
- tkcall's synopsis, in README.md and docs/tkcall.md, names every long
  option of its --help (client/tkcall/usage.c);
- no file of the tree (code, docs, comments, generated code) names a name
  libtkclient's API no longer has (REMOVED below): the compiler sees the
  code's uses, not the docs' nor the comments'.

The examples the docs show are run elsewhere: tests/install/check.sh (the
README's C example), tests/conformance/readme.sh (its tkcall, Python and
TypeScript examples, docs/contract.md's shell block), and the docs' lists
that code keeps by other tests (the ConfigSet allowlist of docs/git.md:
tests/security/test_config_set.py; DESIGN.md's Layout: tests/arch).

  test_docs.py        (from meson, suite arch; no build needed)
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
from typing import Dict, List, Set

faulthandler.register(signal.SIGUSR1, all_threads=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Each service of proto/tk/v1 and the page that documents its methods.
PAGES = {
    "tk.v1.Control": "docs/contract.md",
    "tk.v1.Git": "docs/git.md",
    "tk.v1.Search": "docs/search.md",
    "tk.v1.Services": "docs/services.md",
    "tk.v1.Orders": "docs/orders.md",
}

# About 200 lines (issue 32): what tk is, the two commands, a first call
# in each client, links. Reference goes to docs/.
README_MAX_LINES = 250

# Names libtkclient's API no longer has, and what replaced them.
REMOVED = {
    "TK_CODE_OK": "TK_OK, the one name of 0 (client.h says why)",
}

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files(root: str) -> List[str]:
    """The tree's own Markdown files (tracked by git; not gen/, not a
    test's fixtures), relative to root."""
    out = subprocess.run(["git", "-C", root, "ls-files", "--", "*.md"],
                         check=True, capture_output=True,
                         text=True).stdout.split()
    return sorted(f for f in out
                  if not f.startswith("gen/") and "/fixtures/" not in f)


def prose(text: str) -> List[str]:
    """The lines of text outside fenced blocks (others blanked, so that
    line numbers stay)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped
    (letters, digits, spaces, '-' and '_' kept), spaces made '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text: str) -> Set[str]:
    """Every anchor the headings of a Markdown text make (a repeated one
    gets -1, -2, ... as on GitHub)."""
    seen: Dict[str, int] = {}
    out = set()
    for line in prose(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m[1])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(root: str, files: List[str]) -> List[str]:
    """Every relative link of files that names no file of root, or no
    heading of it; one line each, FILE:LINE: LINK: why."""
    bad = []
    texts: Dict[str, str] = {}

    def read(rel: str) -> str:
        if rel not in texts:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                texts[rel] = f.read()
        return texts[rel]

    for rel in files:
        for n, line in enumerate(prose(read(rel)), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                path, _, anchor = target.partition("#")
                dest = (os.path.normpath(os.path.join(os.path.dirname(rel),
                                                      path))
                        if path else rel)
                where = f"{rel}:{n}: {target}"
                if dest.startswith("..") or not os.path.exists(
                        os.path.join(root, dest)):
                    bad.append(f"{where}: no file {dest}")
                elif anchor and not dest.endswith(".md"):
                    bad.append(f"{where}: an anchor in a file that is not "
                               "Markdown")
                elif anchor and anchor not in anchors(read(dest)):
                    bad.append(f"{where}: {dest} has no heading #{anchor}")
    return bad


def services(root: str) -> Dict[str, List[str]]:
    """{full service name: [method names]} of proto/tk/v1/*.proto."""
    out: Dict[str, List[str]] = {}
    pdir = os.path.join(root, "proto", "tk", "v1")
    for name in sorted(os.listdir(pdir)):
        if not name.endswith(".proto"):
            continue
        with open(os.path.join(pdir, name), encoding="utf-8") as f:
            text = f.read()
        pkg = re.search(r"^package\s+([\w.]+)\s*;", text, re.M)
        for m in re.finditer(r"^service\s+(\w+)\s*\{(.*?)^\}", text,
                             re.M | re.S):
            full = f"{pkg[1]}.{m[1]}" if pkg else m[1]
            out[full] = re.findall(r"^\s*rpc\s+(\w+)\s*\(", m[2], re.M)
    return out


def undocumented(root: str, pages: Dict[str, str]) -> List[str]:
    """Every service without a page and every method its page does not
    name in backticks (`Name`, `Service/Name` or `tk.v1.Service/Name`)."""
    bad = []
    for svc, methods in sorted(services(root).items()):
        page = pages.get(svc)
        if page is None:
            bad.append(f"{svc}: no page in docs/ documents it (PAGES in "
                       "tests/arch/test_docs.py)")
            continue
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        short = svc.rsplit(".", 1)[-1]
        for m in methods:
            pat = (r"`(?:(?:" + re.escape(svc) + r"|" + re.escape(short)
                   + r")/)?" + re.escape(m) + r"`")
            if not re.search(pat, text):
                bad.append(f"{svc}/{m}: {page} does not name it (`{m}`)")
    return bad


# An option line of tkcall's --help, as usage.c writes it: "  -a, --addr".
HELP_OPTION = re.compile(r'^\s*"  (?:-\w, |    )--([a-z][a-z-]*)', re.M)
SYNOPSIS_OF = ("README.md", "docs/tkcall.md")


def synopsis(text: str) -> str:
    """The first fenced block of text that begins "tkcall ", or ""."""
    for m in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S):
        if m.group(1).startswith("tkcall "):
            return m.group(1)
    return ""


def unlisted_options(root: str, files=SYNOPSIS_OF) -> List[str]:
    """The long options of tkcall's --help that a synopsis leaves out."""
    with open(os.path.join(root, "client/tkcall/usage.c"),
              encoding="utf-8") as f:
        options = HELP_OPTION.findall(f.read())
    bad = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            block = synopsis(f.read())
        if block == "":
            bad.append(f"{rel}: no synopsis (a ``` block that begins "
                       "\"tkcall \")")
        bad += [f"{rel}: the synopsis lacks --{o}" for o in options
                if not re.search(rf"--{o}\b(?!-)", block)]
    return bad


def tree_files(root: str) -> List[str]:
    """The files of the tree, relative to root: git's, or in a directory
    git does not know (a negative control's), every file."""
    if os.path.exists(os.path.join(root, ".git")):  # a worktree's is a file
        return subprocess.run(["git", "-C", root, "ls-files"], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def removed_names(root: str, removed: Dict[str, str]) -> List[str]:
    """FILE:LINE: NAME for each use of a removed name (not in this file,
    which lists them)."""
    here = os.path.relpath(os.path.abspath(__file__), ROOT)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, removed)) + r")\b")
    bad = []
    for rel in tree_files(root):
        if rel == here:
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or gone from the work tree
        for n, line in enumerate(text.split("\n"), 1):
            for m in pattern.finditer(line):
                bad.append(f"{rel}:{n}: {m.group(1)} is gone; use "
                           f"{removed[m.group(1)]}")
    return bad


class Docs(unittest.TestCase):
    def test_links_lead_somewhere(self) -> None:
        files = markdown_files(ROOT)
        self.assertIn("README.md", files)
        self.assertIn("docs/contract.md", files)
        bad = broken_links(ROOT, files)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_every_method_has_its_docs(self) -> None:
        found = services(ROOT)
        # Not vacuous: the services, and a method of each.
        self.assertEqual(set(found), set(PAGES))
        self.assertIn("WorktreeRemove", found["tk.v1.Git"])
        bad = undocumented(ROOT, PAGES)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_readme_is_a_front_door(self) -> None:
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            n = len(f.read().splitlines())
        self.assertLessEqual(n, README_MAX_LINES,
                             "README.md is for what tk is, the two commands, "
                             "a first call and links: reference goes to docs/")

    def test_tkcalls_synopsis_names_every_option(self) -> None:
        # Not vacuous: --help's options are read, -D's among them.
        with open(os.path.join(ROOT, "client/tkcall/usage.c"),
                  encoding="utf-8") as f:
            self.assertIn("emit-defaults", HELP_OPTION.findall(f.read()))
        bad = unlisted_options(ROOT)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    def test_no_file_names_a_removed_name(self) -> None:
        self.assertIn("README.md", tree_files(ROOT))  # not vacuous
        bad = removed_names(ROOT, REMOVED)
        self.assertEqual(bad, [], "\n" + "\n".join(bad))

    # ---- negative controls: each check fails where it should ----------

    def test_a_removed_name_is_seen(self) -> None:
        d = self.tree({
            "README.md": "if (tk_call(...) == TK_CODE_OK)\n",
            "client/x.c": "/* TK_CODE_OKAY, MY_TK_CODE_OK */ TK_OK\n"
                          "return TK_CODE_OK;\n",
        })
        self.assertEqual(removed_names(d, {"TK_CODE_OK": "TK_OK"}), [
            "README.md:1: TK_CODE_OK is gone; use TK_OK",
            "client/x.c:2: TK_CODE_OK is gone; use TK_OK",
        ])

    def test_an_option_left_out_of_the_synopsis_is_seen(self) -> None:
        d = self.tree({
            "client/tkcall/usage.c":
                '"  -a, --addr URL\\n"\n"      --proto-json  x\\n"\n'
                '"  -D, --emit-defaults   print\\n"\n',
            "README.md": "```\ntkcall [--addr URL] [--proto-json-x]\n```\n",
            "docs/tkcall.md": "no block\n",
        })
        self.assertEqual(unlisted_options(d), [
            "README.md: the synopsis lacks --proto-json",
            "README.md: the synopsis lacks --emit-defaults",
            "docs/tkcall.md: no synopsis (a ``` block that begins "
            "\"tkcall \")",
            "docs/tkcall.md: the synopsis lacks --addr",
            "docs/tkcall.md: the synopsis lacks --proto-json",
            "docs/tkcall.md: the synopsis lacks --emit-defaults",
        ])

    def test_a_broken_link_is_seen(self) -> None:
        d = self.tree({
            "README.md": "[a](docs/a.md#there) [b](docs/b.md) "
                         "[c](docs/a.md#nowhere) [d](#top)\n"
                         "```\n[e](not/looked/at.md)\n```\n"
                         "[f](https://example.com/x.md) [g](../outside.md)\n",
            "docs/a.md": "# There\n\n# Top\n",
        })
        self.assertEqual(broken_links(d, ["README.md"]), [
            "README.md:1: docs/b.md: no file docs/b.md",
            "README.md:1: docs/a.md#nowhere: docs/a.md has no heading "
            "#nowhere",
            "README.md:1: #top: README.md has no heading #top",
            "README.md:5: ../outside.md: no file ../outside.md",
        ])

    def test_anchors_are_githubs(self) -> None:
        self.assertEqual(anchors(
            "# A node's certificate\n## Operating tkd\n"
            "## User services: `tkd install` and `tk.v1.Services`\n"
            "```\n# not a heading\n```\n## Operating tkd\n"), {
            "a-nodes-certificate", "operating-tkd", "operating-tkd-1",
            "user-services-tkd-install-and-tkv1services"})

    def test_an_undocumented_method_is_seen(self) -> None:
        d = self.tree({
            "proto/tk/v1/a.proto":
                "package tk.v1;\nservice A {\n  rpc One(X) returns (Y) {}\n"
                "  rpc Two(X) returns (Y) {}\n  rpc Three(X) returns (Y);\n}\n"
                "service B {\n  rpc Four(X) returns (Y);\n}\n",
            "docs/a.md": "`One`, `A/Two` and Three without backticks\n",
        })
        self.assertEqual(undocumented(d, {"tk.v1.A": "docs/a.md"}), [
            "tk.v1.A/Three: docs/a.md does not name it (`Three`)",
            "tk.v1.B: no page in docs/ documents it (PAGES in "
            "tests/arch/test_docs.py)",
        ])

    def tree(self, files: Dict[str, str]) -> str:
        d = tempfile.mkdtemp(prefix="tk-docs-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                f.write(text)
        return d


if __name__ == "__main__":
    unittest.main(verbosity=2)
