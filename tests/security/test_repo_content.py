# SPDX-License-Identifier: MIT
"""Repository content is data: what the repositories under a root hold can
make tkd run no program, write nowhere outside the roots, and break no
repository (issue 31, part 2). Each attack as it was made against a real
tkd at 31f2572, where it succeeded:

- A commit holding a bare repository's files (vendor/evil/HEAD, config,
  objects/, refs/) whose config sets core.fsmonitor: Status, Grep and Diff
  of repo=$ROOT/r/vendor/evil ran it, from a read-only listener too. tk now
  refuses a git dir found inside another repository's tree (as git's
  safe.bareRepository=explicit does), hands git the repository it opened
  (--git-dir, --work-tree), and every git it runs, a hook's git included,
  refuses an implicit bare repository.
- A READ ran the programs the repository's own config names: fsmonitor,
  filter drivers (status and diff clean a work-tree file whose stat data
  changed), ssh and credential helpers (a partial clone fetches what it
  lacks). tk overrides them with the owner's settings or off; external
  diff, textconv, the pager and hooks stay off.
- A .git file naming a git dir outside the roots whose commondir points
  back inside: Commit wrote COMMIT_EDITMSG, the index and logs/ there.
- WorktreeAdd of a path in a repository's git dir (.git/index.lock locked
  the index for good); and no way to remove a worktree (WorktreeRemove).

Every check has its negative control: the same repository, with git run
directly by the test, does run the program (or write the file), so each
test could fail. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import http.server
import os
import pty
import shutil
import signal
import subprocess
import tempfile
import threading
import unittest
from typing import Callable, Dict, List, Optional, Tuple

import tkproc

import tk
from tk.v1 import search_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

BASE: Optional[tempfile.TemporaryDirectory] = None
TKD: Optional[tkproc.Daemon] = None
RW: Optional[tk.Client] = None  # the read-write ipc listener
RO: Optional[tk.Client] = None  # a --listen-read-only one
T = 30  # each call's deadline, s


def base() -> str:
    assert BASE is not None
    return BASE.name


def root() -> str:
    return os.path.join(base(), "root")


def outside() -> str:
    return os.path.join(base(), "outside")


def rw() -> tk.Client:
    """setUpModule's client of the read-write listener (for a lambda,
    where an assert on the global does not hold)."""
    assert RW is not None
    return RW


def ro() -> tk.Client:
    """setUpModule's client of the read-only listener."""
    assert RO is not None
    return RO


def git(repo: str, *args: str, env: Optional[Dict[str, str]] = None,
        check: bool = True) -> subprocess.CompletedProcess:
    """git in repo as its owner would run it (HOME is tkd's: the owner's
    global config), with git's defaults (safe.bareRepository=all)."""
    return subprocess.run(["git", "-C", repo] + list(args), check=check,
                          env=dict(os.environ, **(env or {})),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def setUpModule() -> None:
    global BASE, TKD, RW, RO
    BASE = tkproc.tempdir("rc")
    os.environ["HOME"] = base()  # the tests' git and tkd's read this HOME
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    for k, v in (("GIT_AUTHOR_NAME", "tk"), ("GIT_COMMITTER_NAME", "tk"),
                 ("GIT_AUTHOR_EMAIL", "tk@example.invalid"),
                 ("GIT_COMMITTER_EMAIL", "tk@example.invalid")):
        os.environ[k] = v
    os.makedirs(root())
    os.makedirs(os.path.join(outside(), "marks"))
    ro = "ipc://%s/ro.sock" % base()
    TKD, addr = tkproc.start_tkd(base(), [root()],
                                 options=["--listen-read-only", ro])
    TKD.wait_until(lambda err: "ro.sock" in err, "the read-only listener")
    RW = tk.Client(addr)
    RO = tk.Client(ro)


def tearDownModule() -> None:
    for c in (RW, RO):
        if c is not None:
            c.close()
    if TKD is not None:
        TKD.stop()
    if BASE is not None:
        BASE.cleanup()


def clients() -> List[Tuple[str, tk.Client]]:
    assert RW is not None and RO is not None
    return [("read-write", RW), ("read-only", RO)]


def planted(name: str, after: str = "exit 1") -> str:
    """A program outside the roots that leaves the mark name when it runs
    (as the attack's `id > $ROOT/pwned`), then does after."""
    path = os.path.join(outside(), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nid >> '%s'\n%s\n" % (mark(name), after))
    os.chmod(path, 0o755)
    return path


def mark(name: str) -> str:
    return os.path.join(outside(), "marks", name)


def marked(name: str) -> bool:
    return os.path.exists(mark(name))


def new_repo(name: str, files: Optional[Dict[str, str]] = None) -> str:
    """root/name: a repository with files committed (one commit), and a
    second commit that changes a.txt."""
    repo = os.path.join(root(), name)
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "tk")  # tkd's git has no identity env
    git(repo, "config", "user.email", "tk@example.invalid")
    for rel, text in dict({"a.txt": "a\n"}, **(files or {})).items():
        write(os.path.join(repo, rel), text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    write(os.path.join(repo, "a.txt"), "a\nb\n")
    git(repo, "commit", "-q", "-am", "second")
    return repo


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def stat_dirty(path: str) -> None:
    """Moves path's times, not its bytes: git hashes it again (through
    its filter) to learn whether it changed."""
    st = os.stat(path)
    os.utime(path, (st.st_atime + 100, st.st_mtime + 100))


def evil_files(under: str, fsmonitor: str) -> None:
    """A bare repository's files, as the commit of the issue held them."""
    write(os.path.join(under, "HEAD"), "ref: refs/heads/main\n")
    write(os.path.join(under, "config"),
          "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
          "\tworktree = .\n\tfsmonitor = \"%s\"\n" % fsmonitor)
    write(os.path.join(under, "objects", ".keep"), "")
    write(os.path.join(under, "refs", ".keep"), "")


# The READs of tk.v1.Git, each as a call on a repository path.
READS: List[Tuple[str, Callable[[tk.Client, str], object]]] = [
    ("Status", lambda c, r: c.git.status(repo=r, timeout=T)),
    ("Grep", lambda c, r: c.git.grep(repo=r, pattern="a", timeout=T)),
    ("Diff", lambda c, r: c.git.diff(repo=r, timeout=T)),
    ("RevParse", lambda c, r: c.git.rev_parse(repo=r, rev="HEAD", timeout=T)),
    ("Log", lambda c, r: c.git.log(repo=r, timeout=T)),
]


class Case(unittest.TestCase):
    def refused(self, call: Callable[[], object], code: tk.Code,
                reason: str) -> tk.TkError:
        with self.assertRaises(tk.TkError) as cm:
            call()
        e = cm.exception
        self.assertEqual((e.code, e.reason), (code, reason), e.message)
        self.assertTrue(e.from_server, e.message)
        return e


# ---- 1. a bare repository among a commit's files -----------------------------

class ImplicitBare(Case):
    def test_the_issue(self) -> None:
        # As reproduced in the issue: the files of a bare repository in a
        # commit of r, its config naming a program as core.fsmonitor.
        repo = os.path.join(root(), "r1")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        evil = os.path.join(repo, "vendor", "evil")
        evil_files(evil, planted("issue") + "; false")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "vendor a dependency")
        for listener, c in clients():
            for path in (evil, os.path.join(evil, "refs")):
                for method, call in READS:
                    with self.subTest(listener=listener, method=method,
                                      path=path):
                        e = self.refused(lambda: call(c, path),
                                         tk.Code.PERMISSION_DENIED,
                                         "UNSAFE_REPOSITORY")
                        self.assertIn("safe.bareRepository", e.message)
            # Search's git discovers no repository there either (its
            # git grep, forced, finds no work tree; AUTO takes rg).
            self.refused(lambda: c.search.search(
                root=evil, query="x", tool=search_pb2.SearchRequest.GIT_GREP,
                timeout=T), tk.Code.FAILED_PRECONDITION, "NOT_A_WORK_TREE")
        self.assertFalse(marked("issue"), "a READ ran the planted program")
        # r itself is served, the files in it being files.
        assert RO is not None
        st = RO.git.status(repo=repo, timeout=T)
        self.assertEqual(len(st.entries), 0)
        # Negative control: git itself, run in that directory, runs it.
        git(evil, "status", check=False)
        self.assertTrue(marked("issue"))

    def test_bare_repository_at_the_top_of_a_root(self) -> None:
        # A bare repository no repository holds is one: served as before.
        src = new_repo("src2")
        bare = os.path.join(root(), "x2.git")
        git(root(), "clone", "-q", "--bare", src, bare)
        assert RO is not None
        head = git(src, "rev-parse", "HEAD").stdout.strip()
        for path in (bare, os.path.join(bare, "refs")):
            self.assertEqual(RO.git.rev_parse(repo=path, rev="HEAD",
                                              timeout=T).oid, head)
        self.assertEqual(len(RO.git.log(repo=bare, timeout=T).commits), 2)
        d = RO.git.diff(repo=bare, from_="HEAD~1", to="HEAD", timeout=T)
        self.assertIn(b"+b", d.patch)
        self.refused(lambda: ro().git.status(repo=bare, timeout=T),
                     tk.Code.FAILED_PRECONDITION, "BARE_REPOSITORY")

    def test_bare_looking_directory_in_no_repository(self) -> None:
        # The same files where no repository holds them (a plain
        # directory): a repository to tk, whose config's program a READ
        # still does not run.
        evil = os.path.join(root(), "plain3", "vendor", "evil")
        evil_files(evil, planted("plain") + "; false")
        assert RO is not None
        RO.git.status(repo=evil, timeout=T)
        self.assertFalse(marked("plain"), "a READ ran the planted program")
        git(evil, "status", check=False)
        self.assertTrue(marked("plain"))

    def test_the_gits_git_starts_refuse_it(self) -> None:
        # A hook of the owner's, run by a WRITE, runs git where a commit
        # put a bare repository's files; without tk's git dir (GIT_DIR,
        # which git hands its hooks), that git discovers the directory
        # itself. tk's safe.bareRepository=explicit reaches it.
        repo = new_repo("r4")
        evil = os.path.join(repo, "vendor", "evil")
        evil_files(evil, planted("hookgit") + "; false")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "vendor")
        hook = os.path.join(repo, ".git", "hooks", "pre-commit")
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nenv -u GIT_DIR -u GIT_WORK_TREE "
                    "-u GIT_INDEX_FILE git -C '%s' status >/dev/null 2>&1\n"
                    "exit 0\n" % evil)
        os.chmod(hook, 0o755)
        assert RW is not None
        RW.git.commit(repo=repo, message="m", allow_empty=True, timeout=T)
        self.assertFalse(marked("hookgit"), "the hook's git ran the program")
        # Negative control: the same hook under git commit run directly.
        git(repo, "commit", "-q", "--allow-empty", "-m", "direct")
        self.assertTrue(marked("hookgit"))


# ---- 2. a READ runs no program the repository's config names ----------------

class ReadPrograms(Case):
    def statuses(self, repo: str) -> None:
        for _, c in clients():
            c.git.status(repo=repo, timeout=T)

    def test_fsmonitor(self) -> None:
        repo = new_repo("f1")
        git(repo, "config", "core.fsmonitor", planted("fsmonitor"))
        self.statuses(repo)
        self.assertFalse(marked("fsmonitor"))
        git(repo, "status")  # negative control
        self.assertTrue(marked("fsmonitor"))

    def test_the_owners_fsmonitor_runs(self) -> None:
        # The override keeps what the owner's own config says: their
        # fsmonitor runs (the repository's, set too, does not).
        repo = new_repo("f2")
        git(repo, "config", "core.fsmonitor", planted("f2-repo"))
        undo = tkproc.owner_config(base(), repo, "core.fsmonitor",
                                   planted("f2-owner"))
        self.addCleanup(undo)
        assert RO is not None
        RO.git.status(repo=repo, timeout=T)
        self.assertTrue(marked("f2-owner"))
        self.assertFalse(marked("f2-repo"))

    def test_filter_drivers(self) -> None:
        # .gitattributes (content) names a driver, the repository's config
        # defines it: status and diff would clean a.txt through it.
        repo = new_repo("f3", {".gitattributes": "*.txt filter=x\n"
                                                 "*.md filter=y\n",
                               "b.md": "b\n"})
        git(repo, "config", "filter.x.clean", planted("clean", "exec cat"))
        git(repo, "config", "filter.x.smudge", planted("smudge", "exec cat"))
        git(repo, "config", "filter.x.required", "true")
        # The owner's driver runs: git-lfs is installed so.
        self.addCleanup(tkproc.owner_config(base(), repo, "filter.y.clean",
                                            planted("owner-clean",
                                                    "exec cat")))
        for name in ("a.txt", "b.md"):
            stat_dirty(os.path.join(repo, name))
        assert RO is not None
        st = RO.git.status(repo=repo, timeout=T)
        self.assertEqual(len(st.entries), 0, st)  # cat: the same bytes
        RO.git.diff(repo=repo, timeout=T)
        self.assertFalse(marked("clean"))
        self.assertFalse(marked("smudge"))
        self.assertTrue(marked("owner-clean"))
        git(repo, "status", env={"GIT_OPTIONAL_LOCKS": "0"})
        self.assertTrue(marked("clean"))  # negative control

    def test_filter_in_an_included_file(self) -> None:
        # The repository's config includes a tracked file of its own work
        # tree (content), which defines the driver.
        repo = new_repo("f4", {".gitattributes": "*.txt filter=x\n",
                               "evil.cfg": "[filter \"x\"]\n\tclean = %s\n"
                                           % planted("inc-clean", "exec cat")})
        git(repo, "config", "include.path", "../evil.cfg")
        stat_dirty(os.path.join(repo, "a.txt"))
        self.statuses(repo)
        self.assertFalse(marked("inc-clean"))
        git(repo, "status", env={"GIT_OPTIONAL_LOCKS": "0"})
        self.assertTrue(marked("inc-clean"))

    def test_filter_in_config_worktree(self) -> None:
        # config.worktree, which git 2.39 reads with
        # extensions.worktreeConfig even in a format 0 repository, and
        # libgit2 1.5 does not.
        repo = new_repo("f5", {".gitattributes": "*.txt filter=x\n"})
        git(repo, "config", "extensions.worktreeConfig", "true")
        write(os.path.join(repo, ".git", "config.worktree"),
              "[filter \"x\"]\n\tclean = %s\n"
              % planted("wt-clean", "exec cat"))
        stat_dirty(os.path.join(repo, "a.txt"))
        self.statuses(repo)
        self.assertFalse(marked("wt-clean"))
        git(repo, "status", env={"GIT_OPTIONAL_LOCKS": "0"})
        self.assertTrue(marked("wt-clean"))

    def test_include_libgit2_cannot_read_is_refused(self) -> None:
        # includeIf "hasconfig:" (git 2.36), which libgit2 1.5 does not
        # evaluate: tk cannot see what the file defines, and refuses.
        repo = new_repo("f6", {".gitattributes": "*.txt filter=x\n",
                               "evil.cfg": "[filter \"x\"]\n\tclean = %s\n"
                                           % planted("hc-clean", "exec cat")})
        git(repo, "config", "remote.origin.url", "https://example.invalid/x")
        git(repo, "config",
            "includeIf.hasconfig:remote.*.url:https://example.invalid/**.path",
            "../evil.cfg")
        stat_dirty(os.path.join(repo, "a.txt"))
        for _, c in clients():
            self.refused(lambda: c.git.status(repo=repo, timeout=T),
                         tk.Code.PERMISSION_DENIED, "UNSAFE_REPOSITORY")
        self.assertFalse(marked("hc-clean"))
        git(repo, "status", env={"GIT_OPTIONAL_LOCKS": "0"})
        self.assertTrue(marked("hc-clean"))

    def test_config_of_many_drivers(self) -> None:
        # A driver named many times is one; more drivers than any project
        # needs (64) are refused, so a config's size cannot make a READ's
        # scan long.
        repo = new_repo("f11")
        cfg = os.path.join(repo, ".git", "config")
        with open(cfg, "a", encoding="utf-8") as f:
            f.write("[filter \"x\"]\n" + "\tclean = cat\n" * 20000)
        assert RO is not None
        RO.git.status(repo=repo, timeout=T)
        with open(cfg, "a", encoding="utf-8") as f:
            for i in range(64):
                f.write("[filter \"d%d\"]\n\tclean = cat\n" % i)
        self.refused(lambda: ro().git.status(repo=repo, timeout=T),
                     tk.Code.PERMISSION_DENIED, "UNSAFE_REPOSITORY")

    def test_diff_programs(self) -> None:
        # textconv and an external diff: Diff says --no-ext-diff
        # --no-textconv, as before.
        repo = new_repo("f7", {".gitattributes": "*.txt diff=x\n"})
        git(repo, "config", "diff.x.textconv", planted("textconv", "exec cat"))
        git(repo, "config", "diff.external", planted("extdiff", "exit 0"))
        assert RO is not None
        d = RO.git.diff(repo=repo, from_="HEAD~1", to="HEAD", timeout=T)
        self.assertIn(b"+b", d.patch)
        self.assertFalse(marked("textconv") or marked("extdiff"))
        git(repo, "diff", "HEAD~1", "HEAD")
        self.assertTrue(marked("extdiff"))
        git(repo, "diff", "--no-ext-diff", "HEAD~1", "HEAD")
        self.assertTrue(marked("textconv"))

    def test_pager(self) -> None:
        repo = new_repo("f8")
        git(repo, "config", "core.pager", planted("pager",
                                                  "cat > /dev/null"))
        for _, c in clients():
            c.git.diff(repo=repo, from_="HEAD~1", to="HEAD", timeout=T)
            c.git.status(repo=repo, timeout=T)
            c.git.grep(repo=repo, pattern="a", timeout=T)
        self.assertFalse(marked("pager"))
        # Negative control: git on a terminal pages.
        m, s = pty.openpty()
        try:
            subprocess.run(["git", "-C", repo, "diff", "HEAD~1", "HEAD"],
                           stdin=subprocess.DEVNULL, stdout=s, stderr=s,
                           check=True)
        finally:
            os.close(s)
            os.close(m)
        self.assertTrue(marked("pager"))

    def test_hooks(self) -> None:
        # post-index-change runs when git writes the index, as a status
        # does to refresh a stale one (not tk's: GIT_OPTIONAL_LOCKS=0).
        repo = new_repo("f9")
        hook = os.path.join(repo, ".git", "hooks", "post-index-change")
        shutil.copy(planted("hook", "exit 0"), hook)
        stat_dirty(os.path.join(repo, "a.txt"))
        self.statuses(repo)
        self.assertFalse(marked("hook"))
        git(repo, "status")
        self.assertTrue(marked("hook"))

    def test_partial_clone_fetches_nothing(self) -> None:
        # A partial clone lacks the blobs a Diff of two commits needs; git
        # would fetch them from the remote the repository's config names,
        # through its ssh command or, over https, its credential helper.
        src = new_repo("f10-src")
        git(src, "config", "uploadpack.allowFilter", "true")
        server = Unauthorized()
        self.addCleanup(server.close)
        cases = [("ssh://example.invalid/x", "core.sshCommand", "ssh"),
                 (server.url, "credential.helper", "helper")]
        for url, key, name in cases:
            repo = os.path.join(root(), "f10-" + name)
            git(root(), "clone", "-q", "--filter=blob:none", "--no-checkout",
                "file://" + src, repo)
            git(repo, "config", "remote.origin.url", url)
            git(repo, "config", key, planted(name))
            for _, c in clients():
                with self.assertRaises(tk.TkError):
                    c.git.diff(repo=repo, from_="HEAD~1", to="HEAD",
                               timeout=T)
            self.assertFalse(marked(name), key)
            # Negative control: git itself fetches, and runs it.
            git(repo, "diff", "HEAD~1", "HEAD", check=False,
                env={"GIT_TERMINAL_PROMPT": "0"})
            self.assertTrue(marked(name), key)


class Unauthorized:
    """An HTTP server that answers 401 to everything: git asks its
    credential helper."""

    def __init__(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(401)
                self.send_header("WWW-Authenticate", "Basic realm=tk")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/x" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


# ---- 3. a git dir outside the roots ------------------------------------------

def tree_of(path: str) -> Dict[str, Tuple[int, int]]:
    """Every file below path: its size and mtime (ns)."""
    out = {}
    for d, _, files in os.walk(path):
        for name in files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            out[os.path.relpath(p, path)] = (st.st_size, st.st_mtime_ns)
    return out


class GitDirOutside(Case):
    def test_commit_writes_nothing_outside(self) -> None:
        # A linked worktree whose .git file names a git dir outside the
        # roots, and whose commondir points back inside: its work tree and
        # common dir pass the roots; its git dir must too.
        repo = new_repo("g1")
        wt = os.path.join(root(), "g1-wt")
        git(repo, "worktree", "add", "-q", "--detach", wt)
        gitdir = os.path.join(outside(), "g1-gitdir")
        shutil.move(os.path.join(repo, ".git", "worktrees", "g1-wt"), gitdir)
        write(os.path.join(wt, ".git"), "gitdir: %s\n" % gitdir)
        write(os.path.join(gitdir, "commondir"),
              os.path.join(repo, ".git") + "\n")
        before = tree_of(gitdir)
        assert RW is not None and RO is not None
        e = self.refused(lambda: rw().git.commit(repo=wt, message="m",
                                                 allow_empty=True, timeout=T),
                         tk.Code.PERMISSION_DENIED, "PATH_OUTSIDE_ROOT")
        # Where the git dir lies is the .git file's word, not the
        # caller's: not named.
        self.assertNotIn(outside(), e.message)
        self.assertIn("git dir", e.message)
        for method, call in READS:
            with self.subTest(method=method):
                self.refused(lambda: call(ro(), wt), tk.Code.PERMISSION_DENIED,
                             "PATH_OUTSIDE_ROOT")
        self.assertEqual(tree_of(gitdir), before)
        # Negative control: git itself commits there, and writes in it.
        git(wt, "commit", "-q", "--allow-empty", "-m", "direct")
        self.assertIn("COMMIT_EDITMSG", set(tree_of(gitdir)) - set(before))


# ---- 4. worktrees ------------------------------------------------------------

class Worktrees(Case):
    def add(self, repo: str, path: str) -> None:
        assert RW is not None
        RW.git.worktree_add(repo=repo, path=path, detach=True, timeout=T)

    def test_worktree_add_in_a_git_dir(self) -> None:
        repo = new_repo("w1")
        git(repo, "worktree", "add", "-q", "--detach",
            os.path.join(root(), "w1-linked"))
        bare = os.path.join(root(), "w1.git")
        git(root(), "clone", "-q", "--bare", repo, bare)
        sep = os.path.join(root(), "w1-sep")
        git(root(), "init", "-q", "--separate-git-dir",
            os.path.join(root(), "w1-sepgit"), sep)
        paths = [os.path.join(repo, ".git", "index.lock"),
                 os.path.join(repo, ".git", "hooks", "pre-commit"),
                 os.path.join(repo, ".git", "worktrees", "w1-linked", "x"),
                 os.path.join(repo, ".git"),
                 os.path.join(bare, "hooks", "pre-receive"),
                 os.path.join(root(), "w1-sepgit", "hooks", "x")]
        for path in paths:
            with self.subTest(path=path):
                e = self.refused(lambda: self.add(repo, path),
                                 tk.Code.INVALID_ARGUMENT, "BAD_PATH")
                self.assertIn("git directory", e.message)
        for path in paths[:3] + paths[4:]:
            self.assertFalse(os.path.exists(path), path)
        # The repository still commits and checks out.
        assert RW is not None
        RW.git.commit(repo=repo, message="m", allow_empty=True, timeout=T)
        RW.git.checkout(repo=repo, rev="HEAD~1", timeout=T)
        # Negative control: git makes the worktree, and the index is
        # locked for good.
        other = new_repo("w1-control")
        git(other, "worktree", "add", "-q", "--detach",
            os.path.join(other, ".git", "index.lock"))
        r = git(other, "commit", "--allow-empty", "-m", "x", check=False)
        self.assertIn("index.lock", r.stderr)

    def test_worktree_remove(self) -> None:
        repo = new_repo("w2")
        wt = os.path.join(root(), "w2-wt")
        self.add(repo, wt)
        other = new_repo("w2-other")
        other_wt = os.path.join(root(), "w2-other-wt")
        git(other, "worktree", "add", "-q", "--detach", other_wt)
        # A directory whose .git file names w2's worktree: not one.
        forged = os.path.join(root(), "w2-forged")
        write(os.path.join(forged, ".git"), "gitdir: %s\n"
              % os.path.join(repo, ".git", "worktrees", "w2-wt"))
        plain = os.path.join(root(), "w2-plain")
        os.makedirs(plain)
        assert RW is not None and RO is not None
        # The main worktree, another repository's, a forged one, none.
        for path in (repo, other_wt, forged, plain):
            with self.subTest(path=path):
                self.refused(lambda: rw().git.worktree_remove(
                    repo=repo, path=path, force=True, timeout=T),
                    tk.Code.INVALID_ARGUMENT, "NOT_A_LINKED_WORKTREE")
        self.refused(lambda: rw().git.worktree_remove(
            repo=repo, path=outside(), timeout=T),
            tk.Code.PERMISSION_DENIED, "PATH_OUTSIDE_ROOT")
        self.refused(lambda: ro().git.worktree_remove(
            repo=repo, path=wt, timeout=T),
            tk.Code.PERMISSION_DENIED, "READ_ONLY_LISTENER")
        for path in (repo, other_wt, forged, plain, wt):
            self.assertTrue(os.path.isdir(path), path)
        RW.git.worktree_remove(repo=repo, path=wt, timeout=T)
        self.assertFalse(os.path.exists(wt))
        listed = git(repo, "worktree", "list", "--porcelain").stdout
        self.assertNotIn(wt, listed)


if __name__ == "__main__":
    unittest.main(verbosity=2)
