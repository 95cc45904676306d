# SPDX-License-Identifier: MIT
"""The attacks on tk's trust boundary, reproduced as they were made against
a real tkd, each of which succeeded on main at b4c409f:

- ConfigSet of a key that makes git run a program (core.fsmonitor,
  core.hooksPath) or read a file (include.path), or that moves the work
  tree out of the root (core.worktree): refused, nothing written, and the
  next Status runs nothing.
- A method name with a NUL byte ("tk.v1.Control/Ping\\0x" ran Ping).
- A symlink inside a root to a Latin-1 name outside it: the reply carried
  the name's bytes in a string, and a strict protobuf decoder (Python's)
  refused the whole reply.

And one that succeeded on 31f2572 (issue 31): a caller who may only
read probed the file system outside the roots through the answers
("resolves to /etc/shadow", NOT_FOUND for a missing path, tkd's binary
named through /proc/self/exe).

Each has a negative control that shows the test would see the attack work.
Run by meson under /usr/bin/python3 (Debian's python3-protobuf).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import unittest

import tkproc

import tk
from tk.v1 import control_pb2, rpc_pb2

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)


def git(repo: str, *args: str) -> str:
    """git in repo as its owner would run it; its stdout."""
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout


class Attacks(unittest.TestCase):
    """A tkd whose root holds a repository, and a client of it."""

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("sec")
        base = self.dir.name
        # git inside tkd and here read this HOME, never the developer's.
        os.environ["HOME"] = base
        os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
        for k, v in (("GIT_AUTHOR_NAME", "tk"), ("GIT_COMMITTER_NAME", "tk"),
                     ("GIT_AUTHOR_EMAIL", "tk@example.invalid"),
                     ("GIT_COMMITTER_EMAIL", "tk@example.invalid")):
            os.environ[k] = v
        self.root = os.path.join(base, "root")
        self.repo = os.path.join(self.root, "r")
        self.outside = os.path.join(base, "outside")
        os.makedirs(self.repo)
        os.makedirs(self.outside)
        git(self.repo, "init", "-q")
        git(self.repo, "config", "user.name", "tk")  # tkd's git has no env
        git(self.repo, "config", "user.email", "tk@example.invalid")
        with open(os.path.join(self.repo, "a.txt"), "w", encoding="utf-8") as f:
            f.write("a\n")
        git(self.repo, "add", "a.txt")
        git(self.repo, "commit", "-q", "-m", "first")
        self.pwned = os.path.join(base, "pwned")
        self.tkd, addr = tkproc.start_tkd(base, [self.root])
        self.client = tk.Client(addr)

    def tearDown(self) -> None:
        self.client.close()
        self.tkd.stop()
        self.dir.cleanup()

    def config(self) -> str:
        return git(self.repo, "config", "--local", "--list")

    def status(self) -> None:
        self.client.git.status(repo=self.repo, timeout=30)

    def planted_program(self) -> str:
        """A program that leaves a mark when run (as the attack's `id >
        /tmp/sec/pwned`), and fails so git goes on."""
        prog = os.path.join(self.outside, "planted")
        with open(prog, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nid > '%s'\nexit 1\n" % self.pwned)
        os.chmod(prog, 0o755)
        return prog

    def commit(self) -> None:
        self.client.git.commit(repo=self.repo, message="m", allow_empty=True,
                               timeout=30)

    def refused(self, key: str, value: str) -> None:
        before = self.config()
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.config_set(repo=self.repo, key=key, value=value,
                                       timeout=30)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.PERMISSION_DENIED, e.message)
        self.assertEqual(e.reason, "CONFIG_KEY_NOT_ALLOWED")
        self.assertEqual(self.config(), before)
        # Still served (core.worktree would have locked the repository
        # out), and neither a read nor a write runs a planted program.
        self.status()
        self.commit()
        self.assertFalse(os.path.exists(self.pwned), "%s ran a program" % key)

    def test_fsmonitor(self) -> None:
        self.refused("core.fsmonitor", "%s; false" % self.planted_program())

    def planted_hooks(self) -> str:
        hooks = os.path.join(self.outside, "hooks")
        os.makedirs(hooks)
        os.rename(self.planted_program(), os.path.join(hooks, "pre-commit"))
        return hooks

    def test_hooks_path(self) -> None:
        self.refused("core.hooksPath", self.planted_hooks())

    def test_include_path(self) -> None:
        inc = os.path.join(self.outside, "inc")
        with open(inc, "w", encoding="utf-8") as f:
            f.write("[core]\n\tfsmonitor = %s\n" % self.planted_program())
        self.refused("include.path", inc)
        self.refused("includeIf.gitdir:/.path", inc)

    def test_worktree(self) -> None:
        self.refused("core.worktree", self.outside)

    def test_control_the_owner_may(self) -> None:
        # Negative controls: the repository's owner sets core.fsmonitor in
        # their own configuration (tkd's user's global config; a READ runs
        # no program the repository's own config names:
        # tests/security/test_repo_content.py) or core.hooksPath (as they
        # may, for git itself), and the next Status or Commit runs the
        # program: the checks above would see it run.
        undo = tkproc.owner_config(self.dir.name, self.repo, "core.fsmonitor",
                                   self.planted_program())
        self.status()
        self.assertTrue(os.path.exists(self.pwned))
        os.remove(self.pwned)
        undo()
        git(self.repo, "config", "core.hooksPath", self.planted_hooks())
        with self.assertRaises(tk.TkError):  # the hook fails the commit
            self.commit()
        self.assertTrue(os.path.exists(self.pwned))

    def test_nul_in_method(self) -> None:
        with self.assertRaises(tk.TkError) as cm:
            self.client.call("tk.v1.Control/Ping\0x", b"", reply_type=bytes)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.INVALID_ARGUMENT, e.message)
        self.assertEqual(e.reason, "NUL_IN_STRING")
        self.assertTrue(e.from_server)
        # Negative control: the name without its tail is Ping, and runs.
        reply = self.client.call("tk.v1.Control/Ping",
                                 control_pb2.PingRequest(data=b"x"))
        self.assertEqual(reply.data, b"x")

    def test_latin1_symlink(self) -> None:
        name = os.path.join(os.fsencode(self.outside), b"caf\xe9")
        os.makedirs(name)
        link = os.path.join(self.root, "link")
        os.symlink(name, os.fsencode(link))
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.rev_parse(repo=link, rev="HEAD", timeout=30)
        e = cm.exception
        # Decoded by Python's strict protobuf: a reply whose string held
        # the raw byte would be INTERNAL "not a tk.v1.Reply" here.
        self.assertTrue(e.from_server, e.message)
        self.assertEqual(e.code, tk.Code.PERMISSION_DENIED, e.message)
        self.assertEqual(e.reason, "PATH_OUTSIDE_ROOT")
        # The message names the path as sent, never where it resolves
        # (test_probe_outside_roots).
        self.assertNotIn("caf", e.message)
        self.assertIn(link, e.message)
        # Negative control: the raw byte in a string field is what a strict
        # decoder refuses.
        bad = rpc_pb2.Status(message="x").SerializeToString().replace(b"x", b"\xe9")
        with self.assertRaises(Exception):
            rpc_pb2.Status.FromString(bad)

    def test_probe_outside_roots(self) -> None:
        # A caller who may only read under the roots, probing the rest of
        # the file system through the answers (on 31f2572: "/etc/shadow
        # resolves to /etc/shadow", "/etc/nonexistent" NOT_FOUND,
        # "/proc/self/exe resolves to <tkd's binary>"). Every path
        # outside gets one answer, which names only the path as sent.
        sock = os.path.join(self.dir.name, "ro")
        os.makedirs(sock)
        ro_addr = "ipc://%s/ro.sock" % sock
        ro_tkd, _ = tkproc.start_tkd(sock, [self.root],
                                     options=["--listen-read-only", ro_addr])
        self.addCleanup(ro_tkd.stop)
        ro = tk.Client(ro_addr)
        self.addCleanup(ro.close)
        os.symlink(self.outside, os.path.join(self.root, "away"))
        probes = ["/etc/shadow", "/etc/nonexistent", "/proc/self/exe",
                  "/etc/passwd/x", "/nonexistent/deeper/still",
                  os.path.join(self.root, "away"),
                  os.path.join(self.root, "away", "nonexistent"),
                  os.path.join(self.root, "..", "outside"),
                  os.path.join(self.root, "..", "nonexistent")]
        answers = set()
        for path in probes:
            for name, call in (
                    ("repo", lambda p: ro.git.status(repo=p, timeout=30)),
                    ("root", lambda p: ro.search.search(
                        root=p, query="x", timeout=30))):
                with self.assertRaises(tk.TkError) as cm:
                    call(path)
                e = cm.exception
                self.assertTrue(e.from_server, e.message)
                answers.add((name, e.code, e.reason,
                             e.message.replace(path, "PATH")))
        self.assertEqual(sorted(answers), [
            ("repo", tk.Code.PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
             "repo: PATH is not inside tkd's --root directories"),
            ("root", tk.Code.PERMISSION_DENIED, "PATH_OUTSIDE_ROOT",
             "root: PATH is not inside tkd's --root directories")])
        # Negative control: inside the root, a missing path is told as one
        # (the probe above would have seen NOT_FOUND).
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.status(repo=os.path.join(self.repo, "nope"),
                                   timeout=30)
        self.assertEqual(cm.exception.reason, "PATH_NOT_FOUND")


if __name__ == "__main__":
    unittest.main(verbosity=2)
