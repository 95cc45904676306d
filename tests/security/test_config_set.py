# SPDX-License-Identifier: MIT
"""ConfigSet cannot break a repository (issue 31, point 6).

On main at 31f2572, ConfigSet of `branch..remote = x` answered OK, and
afterwards every Status and Checkout failed with "bad config variable
'branch..remote'", with no call of tk that could repair it (git config
itself reads the config first). Invalid values of typed keys
(core.filemode, core.autocrlf, core.safecrlf) were accepted the same way.

Here every key of ConfigSet's allowlist is written with bad values (and
keys are written that break git's syntax), and after each the next
Status, Checkout and Commit still work, git itself still reads the
config, and a good value still goes in. The allowlist's keys are read
from docs/git.md, which lists them: a key added there without a row here
fails the test. A negative control writes the same bad keys with git
itself and shows that tkd's Status then fails, so the check can fail.

Run by meson under /usr/bin/python3 (Debian's python3-protobuf).
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

import tkproc

import tk

faulthandler.register(signal.SIGUSR1, all_threads=True)

BOOL_BAD = ["maybe", "", "1x", "true false", "99999999999", "on\n"]
TEXT_ODD = ["a\nb", "x\"]\n[core]\n\tfsmonitor = touch MARK", "\\", "",
            "-D", "#", ";"]

# Each allowlisted key (as docs/git.md spells it): a good value, and values
# that must not break the repository (refused, or taken as data). A
# branch key's rows use the branch "main".
KEYS: Dict[str, Tuple[str, List[str]]] = {
    "user.name": ("A U Thor", TEXT_ODD),
    "user.email": ("a@example.invalid", TEXT_ODD),
    "author.name": ("A U Thor", TEXT_ODD),
    "author.email": ("a@example.invalid", TEXT_ODD),
    "committer.name": ("C O Mitter", TEXT_ODD),
    "committer.email": ("c@example.invalid", TEXT_ODD),
    "branch.<name>.remote": ("origin", TEXT_ODD),
    "branch.<name>.pushRemote": ("origin", TEXT_ODD),
    "branch.<name>.merge": ("refs/heads/main", TEXT_ODD),
    "branch.<name>.rebase": ("merges", BOOL_BAD + ["preserve", "sometimes"]),
    "branch.<name>.description": ("what it is for", TEXT_ODD),
    "core.autocrlf": ("input", BOOL_BAD + ["inputs"]),
    "core.eol": ("lf", ["cr", "", "lf crlf", "native\n"]),
    "core.safecrlf": ("warn", BOOL_BAD + ["warning"]),
    "core.filemode": ("false", BOOL_BAD),
    "core.excludesFile": ("%ROOT%/ignore", ["relative", "/", "%OUT%/x", ""]),
}

# Keys that break git's syntax of a key, or whose branch is none.
BAD_KEYS = ["branch..remote", "branch.\n.remote", "branch..merge",
            "user.na_me", "user.1name", "user.", ".name", "us er.name",
            "user.name\n", "branch.-D.remote", "branch.a..b.merge",
            "branch.HEAD.merge", "branch.a b.merge", "user", "-D", "",
            "branch.main.", "core.file mode"]


def git(repo: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", repo] + list(args), check=check,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class ConfigSet(unittest.TestCase):

    dir: tempfile.TemporaryDirectory[str]
    root: str
    outside: str
    template: str
    tkd: tkproc.Daemon
    client: tk.Client
    n: int

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tkproc.tempdir("cfg")
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
        cls.tkd, addr = tkproc.start_tkd(base, [cls.root])
        cls.client = tk.Client(addr)
        cls.n = 0

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.tkd.stop()
        cls.dir.cleanup()

    def fresh(self) -> str:
        type(self).n += 1
        repo = os.path.join(self.root, "r%d" % self.n)
        shutil.copytree(self.template, repo, symlinks=True)
        return repo

    def subst(self, s: str) -> str:
        return s.replace("%ROOT%", self.root).replace(
            "%OUT%", self.outside).replace(
            "MARK", os.path.join(self.outside, "mark"))

    def config_set(self, repo: str, key: str,
                   value: str) -> Optional[tk.TkError]:
        try:
            self.client.git.config_set(repo=repo, key=key, value=value,
                                       timeout=30)
        except tk.TkError as e:
            self.assertTrue(e.from_server, str(e))
            return e
        return None

    def still_works(self, repo: str, what: str) -> List[str]:
        """What no longer works in repo: tkd's Status, Checkout and Commit,
        git's own read of the config."""
        bad = []
        for name, call in (
                ("Status", lambda: self.client.git.status(repo=repo,
                                                          timeout=30)),
                ("Checkout", lambda: self.client.git.checkout(
                    repo=repo, rev="main", timeout=30)),
                ("Commit", lambda: self.client.git.commit(
                    repo=repo, message="m", allow_empty=True,
                    author_name="a", author_email="a@example.invalid",
                    timeout=30))):
            try:
                call()
            except tk.TkError as e:
                bad.append("%s: then %s fails: %s" % (what, name, e))
        r = git(repo, "config", "--local", "--list", check=False)
        if r.returncode != 0:
            bad.append("%s: then git config --list fails: %s"
                       % (what, r.stderr))
        if os.path.exists(os.path.join(self.outside, "mark")):
            bad.append("%s: a program ran" % what)
        return bad

    def documented_keys(self) -> List[str]:
        with open(os.path.join(tkproc.SOURCE_ROOT, "docs", "git.md"),
                  encoding="utf-8") as f:
            text = f.read()
        para = text[text.index("`ConfigSet` writes the repository's own"):]
        para = para[para.index("):") + 2:para.index("Section and name")]
        keys = re.findall(r"`([^`]+)`", para)
        # ".pushRemote" and the like continue branch.<name>.
        return ["branch.<name>" + k if k.startswith(".") else k
                for k in keys if not k.startswith("-")]

    def test_rows_are_the_documented_keys(self) -> None:
        self.assertEqual(sorted(self.documented_keys()), sorted(KEYS))

    def test_bad_values_break_nothing(self) -> None:
        bad: List[str] = []
        repo = self.fresh()
        for key, (good, values) in KEYS.items():
            k = key.replace("<name>", "main")
            for v in values:
                v = self.subst(v)
                before = git(repo, "config", "--local", "--list").stdout
                err = self.config_set(repo, k, v)
                what = "%s = %r (%s)" % (k, v, err or "OK")
                if err is not None:
                    if err.code not in (tk.Code.INVALID_ARGUMENT,
                                        tk.Code.PERMISSION_DENIED):
                        bad.append("%s: not refused as bad input" % what)
                    if git(repo, "config", "--local", "--list").stdout != \
                            before:
                        bad.append("%s: refused, but the config changed"
                                   % what)
                found = self.still_works(repo, what)
                bad += found
                if found:
                    repo = self.fresh()
            # A good value goes in, and git reads it back.
            err = self.config_set(repo, k, self.subst(good))
            if err is not None:
                bad.append("%s = %r refused: %s" % (k, good, err))
            elif git(repo, "config", "--local", "--get", k).stdout != \
                    self.subst(good) + "\n":
                bad.append("%s = %r not read back" % (k, good))
            bad += self.still_works(repo, "%s = %r" % (k, good))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_bad_keys_break_nothing(self) -> None:
        bad: List[str] = []
        repo = self.fresh()
        for k in BAD_KEYS:
            before = git(repo, "config", "--local", "--list").stdout
            err = self.config_set(repo, k, "x")
            if err is None or err.code != tk.Code.INVALID_ARGUMENT or \
                    err.reason != "BAD_CONFIG_KEY" or \
                    "key" not in err.message:
                # Refused as not allowed is refused too, but a key git
                # would not parse is told as one.
                if not (err is not None and err.reason in (
                        "CONFIG_KEY_NOT_ALLOWED", "BAD_BRANCH_NAME")):
                    bad.append("%r: not BAD_CONFIG_KEY naming key: %s"
                               % (k, err))
            if git(repo, "config", "--local", "--list").stdout != before:
                bad.append("%r: the config changed" % k)
            bad += self.still_works(repo, repr(k))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_reported(self) -> None:
        repo = self.fresh()
        err = self.config_set(repo, "branch..remote", "x")
        self.assertIsNotNone(err)
        assert err is not None
        self.assertEqual((err.code, err.reason),
                         (tk.Code.INVALID_ARGUMENT, "BAD_CONFIG_KEY"),
                         err.message)
        err = self.config_set(repo, "core.filemode", "maybe")
        assert err is not None
        self.assertEqual((err.code, err.reason),
                         (tk.Code.INVALID_ARGUMENT, "BAD_CONFIG_VALUE"),
                         err.message)
        self.assertIn("core.filemode", err.message)
        self.assertFalse(err.cancellation.write_completed)

    def test_control_git_itself_breaks_it(self) -> None:
        # Negative control: the same keys written by git itself (as tkd's
        # git wrote them on 31f2572) leave a repository whose next Status
        # fails: still_works sees it.
        for key, value in (("branch..remote", "x"),
                           ("core.filemode", "maybe"),
                           ("core.autocrlf", "maybe")):
            repo = self.fresh()
            git(repo, "config", "--local", key, value)
            self.assertNotEqual(self.still_works(repo, key), [], key)


if __name__ == "__main__":
    unittest.main(verbosity=2)
