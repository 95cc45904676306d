# SPDX-License-Identifier: MIT
"""No caller string reaches git as an option (issue 31, point 1).

Two attacks succeeded on main at 31f2572:

- WorktreeAdd with new_branch "-D" and rev "feature": git 2.39's
  `worktree add -b` runs `git branch <name> <rev>` with no "--", so git
  ran `git branch -D feature` and the branch was gone, its reflog with it
  ("-M" renamed over another branch the same way).
- Diff with from "--no-index": git diff looks for "--no-index" among its
  arguments before it parses them, "--end-of-options" or not.

The table below sends option-looking values in every string (and bytes)
field of every tk.v1.Git method, each on a fresh copy of one repository,
and checks that nothing the value could have made git do happened: every
ref is where it was (but the one a write is asked to make or move, under
exactly the name asked for), nothing appeared outside the repository, the
config holds what it held (but ConfigSet's own key, with the value as
data), a READ changed nothing at all, and no program ran. The field rows
are checked against the service's descriptors: a method or a string
field without a row fails the test, so a new one cannot be forgotten.

A field that names a branch (create_branch, new_branch) is refused by
git's own rules for one before git runs, INVALID_ARGUMENT naming the
field; a revision that begins with '-' names nothing, NOT_FOUND
BAD_REVISION naming the field, before git runs. A negative control runs
the attack with git itself and shows that the checks see it.

Run by meson under /usr/bin/python3 (Debian's python3-protobuf).
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

import tkproc

import tk
from google.protobuf.descriptor import FieldDescriptor
from tk.v1 import git_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

Snapshot = Dict[str, Any]


def git(repo: str, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=check,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True).stdout


def files_of(top: str, skip_git: bool) -> Dict[str, str]:
    """Every file under top (symlinks as their targets), by content hash.
    With skip_git, what a write of git's own may touch in .git is left out
    (objects, logs, the index and the lock files of a run): refs and
    config are compared apart, by what they hold."""
    out: Dict[str, str] = {}
    for d, dirs, names in os.walk(top):
        rel = os.path.relpath(d, top)
        if skip_git and (rel == ".git" or rel.startswith(".git" + os.sep)):
            continue
        for n in names:
            p = os.path.join(d, n)
            if os.path.islink(p):
                out[os.path.relpath(p, top)] = "-> " + os.readlink(p)
            else:
                with open(p, "rb") as f:
                    out[os.path.relpath(p, top)] = hashlib.sha256(
                        f.read()).hexdigest()
    return out


class Case:
    """One call: the method, its request, the field under test and its
    value, and the repository it runs on."""

    def __init__(self, method: str, field: str, value: str,
                 request: object) -> None:
        self.method = method
        self.field = field
        self.value = value
        self.request = request


# How each field of each method is filled when it is not the one under
# test, from the case's repository (repo), a fresh path for a new
# worktree (wt) and a file outside the root (outside). None: left empty.
# kind: "rev" (a revision: nothing that begins with '-' names one),
# "branch" (a branch name: git's rules), "data" (anything, as data).
Base = Callable[[str, str], str]
ROWS: Dict[str, Dict[str, Tuple[str, Optional[Base]]]] = {
    "Status": {
        "repo": ("path", lambda r, w: r),
        "paths": ("data", None),
    },
    "Log": {
        "repo": ("path", lambda r, w: r),
        "rev": ("rev", lambda r, w: "feature"),
        "paths": ("data", None),
    },
    "Diff": {
        "repo": ("path", lambda r, w: r),
        "from": ("rev", lambda r, w: "main"),
        "to": ("rev", lambda r, w: "feature"),
        "paths": ("data", None),
    },
    "RevParse": {
        "repo": ("path", lambda r, w: r),
        "rev": ("rev", lambda r, w: "feature"),
    },
    "Grep": {
        "repo": ("path", lambda r, w: r),
        "pattern": ("data", lambda r, w: "a"),
        "paths": ("data", None),
    },
    "Commit": {
        "repo": ("path", lambda r, w: r),
        "message": ("data", lambda r, w: "m"),
        "paths": ("data", None),
        "author_name": ("data", lambda r, w: "n"),
        "author_email": ("data", lambda r, w: "n@example.invalid"),
    },
    "Checkout": {
        "repo": ("path", lambda r, w: r),
        "rev": ("rev", lambda r, w: "feature"),
        "create_branch": ("branch", lambda r, w: "made"),
    },
    "WorktreeAdd": {
        "repo": ("path", lambda r, w: r),
        "path": ("path", lambda r, w: w),
        "rev": ("rev", lambda r, w: "feature"),
        "new_branch": ("branch", lambda r, w: "made"),
    },
    "WorktreeRemove": {
        "repo": ("path", lambda r, w: r),
        "path": ("path", lambda r, w: w),
    },
    "ConfigSet": {
        "repo": ("path", lambda r, w: r),
        "key": ("key", lambda r, w: "user.name"),
        "value": ("data", lambda r, w: "v"),
    },
    "ConfigGet": {
        "repo": ("path", lambda r, w: r),
        "key": ("key", lambda r, w: "user.name"),
    },
}


class GitOptions(unittest.TestCase):
    """One tkd whose root holds a template repository (main, and feature
    one commit ahead), copied afresh for every case."""

    dir: tempfile.TemporaryDirectory[str]
    root: str
    outside: str
    template: str
    tkd: tkproc.Daemon
    client: tk.Client
    n: int
    repo: Optional[str]
    wt: str
    before: Snapshot

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tkproc.tempdir("opt")
        base = cls.dir.name
        os.environ["HOME"] = base
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        cls.root = os.path.join(base, "root")
        cls.outside = os.path.join(base, "outside")
        cls.template = os.path.join(base, "template")
        os.makedirs(cls.root)
        os.makedirs(cls.outside)
        t = cls.template
        git(base, "init", "-q", "-b", "main", t)
        git(t, "config", "user.name", "tk")
        git(t, "config", "user.email", "tk@example.invalid")
        with open(os.path.join(t, "a.txt"), "w", encoding="utf-8") as f:
            f.write("a\n")
        git(t, "add", "a.txt")
        git(t, "commit", "-q", "-m", "first")
        git(t, "branch", "feature")
        git(t, "checkout", "-q", "feature")
        with open(os.path.join(t, "b.txt"), "w", encoding="utf-8") as f:
            f.write("ab\n")
        git(t, "add", "b.txt")
        git(t, "commit", "-q", "-m", "second")
        git(t, "checkout", "-q", "main")
        with open(os.path.join(t, "a.txt"), "w", encoding="utf-8") as f:
            f.write("a changed\n")  # a change for Commit, Diff and Status
        cls.tkd, addr = tkproc.start_tkd(base, [cls.root])
        cls.client = tk.Client(addr)
        cls.n = 0
        cls.repo = None
        cls.wt = ""
        cls.before = {}

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.tkd.stop()
        cls.dir.cleanup()

    # ---- the values -------------------------------------------------------

    def values(self) -> List[str]:
        """Option-looking values; those that name a file or a program name
        ones that would leave a mark in outside."""
        o = self.outside
        return [
            "-D", "-M", "-d", "-f", "--force", "--no-index", "--delete",
            "--output=%s/output" % o,
            "--exec=touch %s/exec" % o,
            "--upload-pack=touch %s/upload-pack" % o,
            "-c", "-ccore.fsmonitor=touch %s/c" % o,
            "-c core.pager=touch %s/pager" % o,
            "--git-dir=%s" % o, "--work-tree=%s" % o,
            "--help", "-h", "--version", "--end-of-options", "--",
        ]

    # ---- one case -------------------------------------------------------

    def fresh(self) -> Tuple[str, str]:
        type(self).n += 1
        repo = os.path.join(self.root, "r%d" % self.n)
        shutil.copytree(self.template, repo, symlinks=True)
        return repo, os.path.join(self.root, "wt%d" % self.n)

    def snapshot(self, repo: str) -> Snapshot:
        refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
        return {
            "refs": dict(line.split(" ", 1) for line in refs.splitlines()),
            "HEAD": git(repo, "symbolic-ref", "-q", "HEAD", check=False),
            "config": git(repo, "config", "--local", "--list"),
            "worktrees": git(repo, "worktree", "list", "--porcelain"),
            "tree": files_of(repo, skip_git=True),
            "git": files_of(os.path.join(repo, ".git"), skip_git=False),
            "outside": files_of(self.outside, skip_git=False),
            "root": sorted(os.listdir(self.root)),
        }

    def request(self, method: str, field: str, value: str, repo: str,
                wt: str) -> object:
        cls = getattr(git_pb2, "Git%sRequest" % method)
        req = cls()
        for name, (_, base) in ROWS[method].items():
            v = value if name == field else (base(repo, wt) if base else None)
            if v is None:
                continue
            f = cls.DESCRIPTOR.fields_by_name[name]
            if f.label == FieldDescriptor.LABEL_REPEATED:
                getattr(req, name).append(v.encode())
            else:
                setattr(req, name, v)
        if method == "Commit" and field != "paths":
            req.allow_empty = True
        return req

    def call(self, method: str, req: object) -> Optional[tk.TkError]:
        try:
            self.client.call("tk.v1.Git/%s" % method, req, timeout=30)
        except tk.TkError as e:
            self.assertTrue(e.from_server, "%s: %s" % (method, e))
            return e
        return None

    def check(self, method: str, field: str, value: str, repo: str,
              before: Snapshot, after: Snapshot,
              err: Optional[tk.TkError]) -> List[str]:
        """What changed that the call was not asked for: a list of
        complaints (empty: nothing)."""
        bad: List[str] = []
        refs_b = dict(before["refs"])
        refs_a = dict(after["refs"])
        made = "refs/heads/" + value
        if err is None and method == "Commit":
            # The branch HEAD is on moves by one commit, whose message and
            # author hold the values as data.
            head = str(before["HEAD"]).strip()
            refs_b.pop(head, None)
            moved = refs_a.pop(head, None)
            msg = git(repo, "log", "-1", "--format=%B%x00%an%x00%ae",
                      str(moved)).rstrip("\n")
            want = {"message": value, "author_name": value,
                    "author_email": value}.get(field)
            if want is not None and want not in msg.split("\x00")[
                    ["message", "author_name", "author_email"].index(field)]:
                bad.append("the commit does not hold %r as its %s: %r"
                           % (value, field, msg))
        if err is None and field in ("create_branch", "new_branch"):
            if made not in refs_a or made in refs_b:
                bad.append("no branch %r was made" % value)
            refs_a.pop(made, None)
        if refs_a != refs_b:
            bad.append("refs changed: %r -> %r" % (refs_b, refs_a))
        if after["outside"] != before["outside"]:
            bad.append("files outside the root: %r" % after["outside"])
        want_config = before["config"]
        if err is None and method == "ConfigSet":
            # git writes the value (the key as data too, but no key that
            # looks like an option is accepted: checked below).
            got = git(repo, "config", "--local", "--get", "user.name",
                      check=False).rstrip("\n")
            if field == "value" and got != value:
                bad.append("config user.name is %r, not %r" % (got, value))
            if field == "key":
                bad.append("key %r accepted" % value)
            want_config = after["config"]
        if err is None and method == "ConfigGet" and field == "key":
            bad.append("key %r accepted" % value)
        if after["config"] != want_config:
            bad.append("config changed:\n%s" % after["config"])
        writes = {"Commit", "Checkout", "WorktreeAdd", "WorktreeRemove",
                  "ConfigSet"}
        if method not in writes or err is not None:
            for k in ("tree", "git", "worktrees", "root", "HEAD"):
                if after[k] != before[k]:
                    bad.append("%s changed" % k)
        elif method == "Checkout" and field != "create_branch":
            if after["HEAD"] != before["HEAD"]:
                bad.append("HEAD changed to %r" % after["HEAD"])
        return bad

    def run_case(self, method: str, field: str, value: str) -> List[str]:
        # A case that changed nothing leaves its repository to the next
        # one (most are refused): a copy and two snapshots less.
        if self.repo is None:
            self.repo, self.wt = self.fresh()
            self.before = self.snapshot(self.repo)
        repo, wt, before = self.repo, self.wt, self.before
        req = self.request(method, field, value, repo, wt)
        err = self.call(method, req)
        after = self.snapshot(repo)
        bad = self.check(method, field, value, repo, before, after, err)
        if after != before:
            self.repo = None
        kind = ROWS[method][field][0]
        if kind == "branch" and value.startswith("-"):
            if err is None or err.code != tk.Code.INVALID_ARGUMENT or \
                    err.reason != "BAD_BRANCH_NAME" or field not in err.message:
                bad.append("not INVALID_ARGUMENT BAD_BRANCH_NAME naming %s: %s"
                           % (field, err))
        if kind == "rev" and value.startswith("-"):
            if err is None or err.code != tk.Code.NOT_FOUND or \
                    err.reason != "BAD_REVISION" or field not in err.message:
                bad.append("not NOT_FOUND BAD_REVISION naming %s: %s"
                           % (field, err))
        if kind in ("rev", "branch") and value.startswith("-") and \
                err is not None and err.status.tool != "":
            bad.append("refused only after %s ran" % err.status.tool)
        if err is not None and err.cancellation.write_completed and \
                kind in ("branch", "rev", "key", "path") and \
                value.startswith("-"):
            bad.append("refused, but says write_completed")
        return ["%s.%s = %r: %s" % (method, field, value, b) for b in bad]

    # ---- the tests --------------------------------------------------------

    def test_rows_cover_every_string_field(self) -> None:
        svc = git_pb2.DESCRIPTOR.services_by_name["Git"]
        self.assertEqual(sorted(m.name for m in svc.methods), sorted(ROWS),
                         "a Git method without a row in ROWS (or a row of "
                         "none): add one")
        for m in svc.methods:
            strings = sorted(
                f.name for f in m.input_type.fields
                if f.type in (FieldDescriptor.TYPE_STRING,
                              FieldDescriptor.TYPE_BYTES))
            self.assertEqual(strings, sorted(ROWS[m.name]),
                             "%s: a string field without a row in ROWS"
                             % m.name)

    def test_option_values_in_every_field(self) -> None:
        bad: List[str] = []
        tried = 0
        for method, fields in ROWS.items():
            for field in fields:
                for value in self.values():
                    bad += self.run_case(method, field, value)
                    tried += 1
        self.assertGreater(tried, 400)
        self.assertEqual(bad, [], "\n".join(bad))

    def test_the_reported_attacks(self) -> None:
        # Exactly as reported, with the reply asserted in full.
        repo, wt = self.fresh()
        before = self.snapshot(repo)
        req = git_pb2.GitWorktreeAddRequest(repo=repo, path=wt,
                                            new_branch="-D", rev="feature")
        err = self.call("WorktreeAdd", req)
        assert err is not None
        self.assertEqual(err.code, tk.Code.INVALID_ARGUMENT, err.message)
        self.assertEqual(err.reason, "BAD_BRANCH_NAME")
        self.assertIn("new_branch", err.message)
        self.assertFalse(err.cancellation.write_completed)
        self.assertEqual(self.snapshot(repo)["refs"], before["refs"])
        from_: Dict[str, Any] = {"from": "--no-index"}  # a keyword in Python
        err = self.call("Diff", git_pb2.GitDiffRequest(repo=repo, **from_))
        assert err is not None
        self.assertEqual((err.code, err.reason),
                         (tk.Code.NOT_FOUND, "BAD_REVISION"), err.message)
        self.assertIn("from", err.message)

    def test_valid_names_still_work(self) -> None:
        # The checks refuse options, not names: a branch with '-' inside,
        # a revision with '~', '^' and ':/', a value that only looks odd.
        repo, wt = self.fresh()
        self.client.call("tk.v1.Git/WorktreeAdd", git_pb2.GitWorktreeAddRequest(
            repo=repo, path=wt, new_branch="fix-1/a-b", rev="feature~1"),
            timeout=30)
        self.assertIn("refs/heads/fix-1/a-b",
                      self.snapshot(repo)["refs"])
        for rev in ("feature^", "main~0", ":/second", "HEAD@{0}"):
            self.client.call("tk.v1.Git/RevParse", git_pb2.GitRevParseRequest(
                repo=repo, rev=rev), timeout=30)

    def test_branch_rules_are_gits(self) -> None:
        # tk's check of a branch name against git's own: check-ref-format
        # of refs/heads/NAME, and git branch's two extra rules (no leading
        # '-', not "HEAD"). Each name is tried through Checkout's
        # create_branch; a name git allows must not be refused as a name.
        names = ["ok", "a/b", "a-b", "-x", "HEAD", "a..b", "a.lock",
                 "a/.b", ".a", "a/", "/a", "a//b", "a b", "a~b", "a^b",
                 "a:b", "a?b", "a*b", "a[b", "a\\b", "a@{b", "@", "a.",
                 "a\tb", "a\x7fb", "é", "a@b", "x/@/y", "HEAD/x"]
        bad = []
        for name in names:
            gits = subprocess.run(
                ["git", "check-ref-format", "refs/heads/" + name],
                check=False).returncode == 0 and \
                not name.startswith("-") and name != "HEAD"
            repo, _ = self.fresh()
            err = self.call("Checkout", git_pb2.GitCheckoutRequest(
                repo=repo, rev="main", create_branch=name))
            refused = err is not None and err.reason == "BAD_BRANCH_NAME"
            if refused == gits:
                bad.append("%r: git %s, tk %s" % (
                    name, "allows" if gits else "refuses",
                    "refuses" if refused else "allows (%s)" % err))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_control_git_itself_is_caught(self) -> None:
        # Negative control: the attack run by git itself (as tkd ran it on
        # 31f2572) is what the checks above see.
        repo, wt = self.fresh()
        before = self.snapshot(repo)
        subprocess.run(["git", "-C", repo, "worktree", "add", "-q", "-b",
                        "-D", "--", wt, "feature"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = self.snapshot(repo)
        self.assertNotIn("refs/heads/feature", after["refs"])
        self.assertNotEqual(
            self.check("WorktreeAdd", "new_branch", "-D", repo, before,
                       after, None), [])
        # git itself takes "--no-index" after --end-of-options as its
        # mode: what tkd ran on 31f2572 (tkd now refuses it before git
        # runs: the status names no tool).
        repo, _ = self.fresh()
        r = subprocess.run(["git", "-C", repo, "diff", "--numstat", "-z",
                            "-p", "--end-of-options", "--no-index", "feature",
                            "--"], check=False, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        self.assertIn("usage: git diff --no-index", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
