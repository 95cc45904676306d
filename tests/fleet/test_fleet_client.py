# SPDX-License-Identifier: MIT
"""The client side of a fleet (DESIGN.md "Scaling out"), through tkcall -v
(libtkclient): which node carries each call, and what fails how.

Two fleets, one a run (the first argument):
  testd  three testd on 127.0.0.1 tcp:// whose ListNodes answers a fixed
         table (testd --node): no PostgreSQL. Routing by path (the node
         that answers, whatever it answers), NO_NODE_FOR_PATH,
         NODE_REQUIRED, UNKNOWN_NODE, Ping spread over the nodes, Cancel
         answered CANCELLED by the node that runs the call, the probe of a
         stopped node, a killed node skipped, and a method the client's
         catalog does not know never sent twice, --retry-reads or not.
  tkd    three tkd on 127.0.0.1 tls+tcp://, members of one fleet through a
         private PostgreSQL (tools/pg-cluster), each with its own --root
         and a real git repository in it: RevParse answered by the owning
         node, NO_NODE_FOR_PATH, Ping spread, Services without --node,
         Cancel of a held RevParse answered CANCELLED by its node, the
         probe (SIGSTOP with the call in flight: UNAVAILABLE after about
         10 s of a 30 s deadline), and a killed node: --retry-reads off
         (UNAVAILABLE, not sent) and on (the other owner answers), and
         Orders/Control calls going elsewhere.
Skips (77), saying why, where there is no PostgreSQL or openssl, or
tkd's NNG has no TLS (Homebrew's on a Mac; anywhere else that fails).
Nothing waits by sleeping: processes are waited for by their output, a
held call by its git in /proc.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple

import tkproc
from fleetfx import Cluster, free_port, need_programs, need_tls

faulthandler.register(signal.SIGUSR1, all_threads=True)

TKCALL = tkproc.program("TKCALL")
WAIT_S = 30.0


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def make_repo(path: str, text: str) -> str:
    """A repository with one commit; its HEAD."""
    os.makedirs(path)
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    with open(os.path.join(path, "a.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", text)
    return git(path, "rev-parse", "HEAD")


class Result:
    def __init__(self, rc: int, out: str, err: str, secs: float) -> None:
        self.rc, self.out, self.err, self.secs = rc, out, err, secs
        # -v says it of every call (tkcall may ask ListMethods first): the
        # last one is the method's.
        calls = err.split("tkcall: method ")
        m = re.search(r"^tkcall: node +(\S+)$", calls[-1], re.M)
        self.node = m.group(1) if m else ""
        m = re.search(r"^(\{\"code\".*\})$", err, re.M)
        self.status: Dict[str, Any] = json.loads(m.group(1)) if m else {}

    def __repr__(self) -> str:
        return "rc=%d node=%r out=%r err=%r" % (self.rc, self.node, self.out,
                                                self.err)


class Held:
    """A call held on tkd: git rev-parse of a ":/" revision (run by tkd's
    proc) blocks for ever opening packed-refs, a fifo nobody writes. The
    call is in flight once that git runs (seen in /proc: Linux)."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self.fifo = os.path.join(repo, ".git", "packed-refs")
        os.mkfifo(self.fifo)

    def git_running(self) -> bool:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
                cwd = os.readlink("/proc/%s/cwd" % pid)
            except OSError:
                continue
            if b"rev-parse" in argv and (
                    cwd.startswith(self.repo)
                    or any(a.decode(errors="replace").startswith(self.repo)
                           for a in argv)):
                return True
        return False

    def wait_git(self) -> None:
        until = time.monotonic() + WAIT_S
        while not self.git_running():
            if time.monotonic() > until:
                raise AssertionError("tkd never ran git in %s" % self.repo)
            select.select([], [], [], 0.02)  # /proc has no event for it

    def release(self) -> None:
        os.unlink(self.fifo)


class FleetBase(unittest.TestCase):
    """Shared: tkcall, and the nodes as Daemons by id."""

    nodes: Dict[str, tkproc.Daemon] = {}
    addrs: Dict[str, str] = {}
    env: Dict[str, str] = {}

    @classmethod
    def tkcall(cls, args: List[str], addr: Optional[str] = None,
               wait: bool = True):
        argv = [TKCALL, "-v", "--addr", addr or cls.bootstrap()] + args
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=cls.env)
        if not wait:
            return p
        out, err = p.communicate(timeout=120)
        return Result(p.returncode, out, err, time.monotonic() - t0)

    @staticmethod
    def finish(p: subprocess.Popen, t0: float) -> Result:
        out, err = p.communicate(timeout=120)
        return Result(p.returncode, out, err, time.monotonic() - t0)

    @classmethod
    def bootstrap(cls) -> str:
        return ",".join(cls.addrs[i] for i in sorted(cls.addrs))

    def assert_node(self, r: Result, node: str) -> None:
        self.assertEqual(r.node, node, r)

    def ping_nodes(self, n: int) -> List[str]:
        seen = []
        for _ in range(n):
            r = self.tkcall(["tk.v1.Control/Ping"])
            self.assertEqual(r.rc, 0, r)
            seen.append(r.node)
        return seen


# ---- testd ------------------------------------------------------------------

class TestdFleet(FleetBase):
    """a, b, c on tcp://127.0.0.1; a holds /srv/a, b /srv/b and
    /srv/a/deep, c /home."""

    ports: Dict[str, int]
    table: List[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.ports = {i: free_port() for i in ("a", "b", "c")}
        cls.addrs = {i: "tcp://127.0.0.1:%d" % p for i, p in cls.ports.items()}
        roots = {"a": "/srv/a", "b": "/srv/b:/srv/a/deep", "c": "/home"}
        cls.table = []
        for i in ("a", "b", "c"):
            cls.table += ["--node", "%s=%s=%s" % (i, cls.addrs[i], roots[i])]
        cls.env = dict(os.environ)
        cls.nodes = {}
        for i in ("a", "b", "c"):
            cls.start(i)

    @classmethod
    def start(cls, i: str) -> None:
        d = tkproc.Daemon([tkproc.program("TESTD"), "--insecure-plain-tcp",
                           "--listen", cls.addrs[i], "--self", i] + cls.table)
        d.wait_output("READY")
        cls.nodes[i] = d

    @classmethod
    def tearDownClass(cls) -> None:
        for d in cls.nodes.values():
            if d.proc.poll() is None:
                os.kill(d.proc.pid, signal.SIGCONT)
            d.stop()

    def restart_if_dead(self, i: str) -> None:
        if self.nodes[i].proc.poll() is not None:
            self.nodes[i].stop()
            self.start(i)

    def test_a_path_routing(self) -> None:
        for repo, node in (("/srv/a/x", "a"), ("/srv/a/deep/y", "b"),
                           ("/srv/a/deeper", "a"), ("/srv/b", "b"),
                           ("/home/u/r", "c")):
            r = self.tkcall(["-d", json.dumps({"repo": repo, "rev": "HEAD"}),
                             "tk.v1.Git/RevParse"])
            # testd serves no Git: the node that carried it answers so.
            self.assertEqual(r.status.get("reason"), "UNKNOWN_METHOD", r)
            self.assert_node(r, node)

    def test_b_no_node_for_path(self) -> None:
        r = self.tkcall(["-d", '{"repo":"/nowhere/r"}', "tk.v1.Git/Status"])
        self.assertEqual(r.rc, 5, r)
        self.assertEqual(r.status["reason"], "NO_NODE_FOR_PATH")
        self.assertIn("/nowhere/r", r.status["message"])
        self.assertIn("b: /srv/b /srv/a/deep", r.status["message"])
        self.assertEqual(r.node, "")

    def test_c_spread_and_named(self) -> None:
        seen = self.ping_nodes(12)
        self.assertTrue(set(seen) <= {"a", "b", "c"}, seen)
        self.assertGreaterEqual(len(set(seen)), 2, seen)
        r = self.tkcall(["--node", "c", "tk.v1.Control/Ping"])
        self.assertEqual(r.rc, 0, r)
        self.assert_node(r, "c")
        r = self.tkcall(["--node", "zz", "tk.v1.Control/Ping"])
        self.assertEqual((r.rc, r.status["reason"]), (5, "UNKNOWN_NODE"), r)
        r = self.tkcall(["-d", '{"label":"x"}', "tk.v1.Services/Status"])
        self.assertEqual((r.rc, r.status["reason"]), (3, "NODE_REQUIRED"), r)
        self.assertIn("a, b, c", r.status["message"])
        r = self.tkcall(["--node", "b", "-d", '{"label":"x"}',
                         "tk.v1.Services/Status"])
        self.assert_node(r, "b")
        self.assertTrue(r.status["fromServer"], r)

    def entered(self) -> Dict[str, int]:
        return {i: d.mark() for i, d in self.nodes.items()}

    def which_entered(self, marks: Dict[str, int]) -> str:
        """The node whose testd announces the Wait after marks (polled:
        the announcement may come from any of them)."""
        until = time.monotonic() + WAIT_S
        while time.monotonic() < until:
            for i, d in self.nodes.items():
                if "ENTERED Wait" in d.output()[marks[i]:]:
                    return i
            select.select([], [], [], 0.02)
        raise AssertionError("no node entered Wait")

    def test_d_cancel_on_its_node(self) -> None:
        for _ in range(3):  # wherever the round robin puts it
            marks = self.entered()
            t0 = time.monotonic()
            p = self.tkcall(["-t", "60s", "tk.test.Test/Wait"], wait=False)
            ran = self.which_entered(marks)
            errs = {i: d.mark("stderr") for i, d in self.nodes.items()}
            p.send_signal(signal.SIGINT)
            r = self.finish(p, t0)
            self.assertEqual(r.rc, 1, r)
            self.assertEqual(r.status["code"], "CANCELLED")
            self.assertTrue(r.status["fromServer"], r)
            self.assert_node(r, ran)
            # The node that ran it logged the cancellation; no other did.
            self.nodes[ran].wait_output("code=CANCELLED", "stderr",
                                        start=errs[ran])
            for i, d in self.nodes.items():
                if i != ran:
                    self.assertNotIn("Control/Cancel",
                                     d.output("stderr")[errs[i]:])

    def test_e_probe(self) -> None:
        """b stopped with a call in flight: UNAVAILABLE after the probe's
        5 s and its Ping's 5 s, long before the 30 s deadline."""
        marks = self.entered()
        t0 = time.monotonic()
        p = self.tkcall(["--node", "b", "-t", "30s", "tk.test.Test/Wait"],
                        wait=False)
        self.nodes["b"].wait_output("ENTERED Wait", start=marks["b"])
        os.kill(self.nodes["b"].proc.pid, signal.SIGSTOP)
        try:
            r = self.finish(p, t0)
        finally:
            os.kill(self.nodes["b"].proc.pid, signal.SIGCONT)
        self.assertEqual(r.rc, 14, r)
        self.assertIn("node b at %s stopped answering" % self.addrs["b"],
                      r.status["message"])
        self.assertIn("whether it ran is unknown", r.status["message"])
        self.assertGreater(r.secs, 9.0, r)
        self.assertLess(r.secs, 20.0, r)

    def test_f_retry_reads(self) -> None:
        """The node running a Wait killed: UNAVAILABLE, "whether it ran is
        unknown", with --retry-reads as without it. tk.test.Test/Wait is a
        READ to testd, but the client's catalog does not know it, and a
        method it does not know may be a WRITE: it is never sent twice.
        (A READ the catalog knows, retried on another node after its node
        was killed mid-call: fleet-netns; one that was not sent: the tkd
        fleet below.)"""
        for retry in (False, True):
            marks = self.entered()
            t0 = time.monotonic()
            p = self.tkcall((["--retry-reads"] if retry else [])
                            + ["-t", "4s", "tk.test.Test/Wait"], wait=False)
            victim = self.which_entered(marks)
            os.kill(self.nodes[victim].proc.pid, signal.SIGKILL)
            r = self.finish(p, t0)
            self.nodes[victim].proc.wait()
            self.assertEqual(r.rc, 14, r)
            self.assertIn("whether it ran is unknown", r.status["message"])
            self.assert_node(r, victim)
            # A killed node: the next calls go elsewhere, every one OK.
            seen = self.ping_nodes(6)
            self.assertNotIn(victim, seen)
            self.restart_if_dead(victim)


# ---- tkd --------------------------------------------------------------------

class TkdFleet(FleetBase):
    """n1, n2, n3 on tls+tcp://127.0.0.1, one PostgreSQL; each root with a
    repository; /shared served by n2 and n3 both."""

    dir: tempfile.TemporaryDirectory[str]  # main's, as is dsn
    dsn: str
    heads: Dict[str, str]
    roots: Dict[str, str]
    shared: str
    argv: Dict[str, List[str]]

    @classmethod
    def setUpClass(cls) -> None:
        import certs  # tests/support/certs.py
        base = cls.dir.name  # main made it, and started PostgreSQL there
        ca = certs.make_ca(base, "ca")
        cli = certs.make_cert(base, "client", ca, certs.CLIENT_EXT)
        cls.env = dict(os.environ, TK_TLS_CA=ca[0], TK_TLS_CERT=cli[0],
                       TK_TLS_KEY=cli[1], HOME=base, GIT_CONFIG_NOSYSTEM="1")
        os.environ.update(HOME=base, GIT_CONFIG_NOSYSTEM="1")
        cls.heads, cls.roots = {}, {}
        for i in ("n1", "n2", "n3"):
            cls.roots[i] = os.path.join(base, "root-" + i)
            cls.heads[i] = make_repo(os.path.join(cls.roots[i], "r"), i)
        cls.shared = os.path.join(base, "shared")
        cls.heads["shared"] = make_repo(os.path.join(cls.shared, "r"), "s")
        make_repo(os.path.join(cls.roots["n2"], "hold"), "hold")
        cls.argv = {}
        cls.addrs, cls.nodes = {}, {}
        for i in ("n1", "n2", "n3"):
            addr = "tls+tcp://127.0.0.1:%d" % free_port()
            cls.addrs[i] = addr
            # Each node's certificate names its id, which clients check.
            srv = certs.make_cert(base, "node-" + i, ca, certs.node_ext(i))
            roots = ["--root", cls.roots[i]]
            if i != "n1":
                roots += ["--root", cls.shared]
            cls.argv[i] = [tkproc.program("TKD"), "--listen", addr,
                           "--tls-cert", srv[0], "--tls-key", srv[1],
                           "--tls-ca", ca[0], "--node-id", i,
                           "--advertise", addr, "--pg", cls.dsn,
                           "--heartbeat-ms", "1000", "--node-ttl-ms",
                           "15000", "--log-level", "info"] + roots
            cls.start(i)
        cls.wait_table(3)

    @classmethod
    def start(cls, i: str) -> None:
        d = tkproc.Daemon(cls.argv[i], dict(cls.env))
        d.wait_output("listening on", "stderr")
        cls.nodes[i] = d

    @classmethod
    def wait_table(cls, n: int) -> None:
        """Until ListNodes lists n live nodes (their first heartbeats)."""
        until = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < until:
            r = cls.tkcall(["-o", "compact", "tk.v1.Control/ListNodes"],
                           addr=cls.addrs["n1"])
            if r.rc == 0:
                got = json.loads(r.out)
                if len(got.get("nodes", [])) == n:
                    return
            select.select([], [], [], 0.1)
        raise AssertionError("ListNodes never listed %d nodes: %r" % (n, got))

    @classmethod
    def tearDownClass(cls) -> None:
        for d in cls.nodes.values():
            if d.proc.poll() is None:
                os.kill(d.proc.pid, signal.SIGCONT)
            d.stop()

    def rev_parse(self, repo: str, rev: str = "HEAD",
                  extra: Optional[List[str]] = None, wait: bool = True):
        return self.tkcall((extra or []) + [
            "-d", json.dumps({"repo": repo, "rev": rev}),
            "tk.v1.Git/RevParse"], wait=wait)

    def test_a_revparse_on_owner(self) -> None:
        for i in ("n1", "n2", "n3"):
            r = self.rev_parse(os.path.join(self.roots[i], "r"))
            self.assertEqual(r.rc, 0, r)
            self.assert_node(r, i)
            self.assertEqual(r.out.strip(), self.heads[i])

    def test_b_no_node_for_path(self) -> None:
        r = self.rev_parse("/nowhere/r")
        self.assertEqual(r.rc, 5, r)
        self.assertEqual(r.status["reason"], "NO_NODE_FOR_PATH")
        self.assertIn("/nowhere/r", r.status["message"])
        self.assertIn(self.roots["n1"], r.status["message"])

    def test_c_ping_spread_and_services(self) -> None:
        seen = self.ping_nodes(12)
        self.assertTrue(set(seen) <= {"n1", "n2", "n3"}, seen)
        self.assertGreaterEqual(len(set(seen)), 2, seen)
        r = self.tkcall(["-d", '{"label":"x"}', "tk.v1.Services/Status"])
        self.assertEqual((r.rc, r.status["reason"]), (3, "NODE_REQUIRED"), r)
        self.assertIn("n1, n2, n3", r.status["message"])
        r = self.tkcall(["--node", "n2", "-d", '{"label":"x"}',
                         "tk.v1.Services/Status"])
        self.assert_node(r, "n2")
        self.assertTrue(r.status.get("fromServer", True), r)

    def held_call(self, args: List[str]
                  ) -> Tuple[subprocess.Popen, float, Held]:
        repo = os.path.join(self.roots["n2"], "hold")
        held = Held(repo)
        t0 = time.monotonic()
        p = self.rev_parse(repo, ":/nothing", args, wait=False)
        held.wait_git()
        return p, t0, held

    def test_d_cancel_on_its_node(self) -> None:
        errs = {i: d.mark("stderr") for i, d in self.nodes.items()}
        p, t0, held = self.held_call(["-t", "60s"])
        try:
            p.send_signal(signal.SIGINT)
            r = self.finish(p, t0)
        finally:
            held.release()
        self.assertEqual(r.rc, 1, r)
        self.assertEqual(r.status["code"], "CANCELLED")
        self.assertTrue(r.status["fromServer"], r)
        self.assert_node(r, "n2")
        self.nodes["n2"].wait_output("code=CANCELLED", "stderr",
                                     start=errs["n2"])

    def test_e_probe(self) -> None:
        n2 = self.nodes["n2"]
        p, t0, held = self.held_call(["-t", "30s"])
        os.kill(n2.proc.pid, signal.SIGSTOP)
        try:
            r = self.finish(p, t0)
        finally:
            os.kill(n2.proc.pid, signal.SIGCONT)
            held.release()
        self.assertEqual(r.rc, 14, r)
        self.assertIn("node n2 at %s stopped answering" % self.addrs["n2"],
                      r.status["message"])
        self.assertGreater(r.secs, 9.0, r)
        self.assertLess(r.secs, 20.0, r)

    def test_z_killed_node(self) -> None:
        """/shared/r belongs to n2 and n3: its first owner killed, a
        RevParse without --retry-reads is UNAVAILABLE, not sent (the
        negative control); with it, the other owner answers. Pings skip the
        dead node."""
        repo = os.path.join(self.shared, "r")
        r = self.rev_parse(repo)
        self.assertEqual(r.rc, 0, r)
        first = r.node
        other = "n3" if first == "n2" else "n2"
        self.nodes[first].proc.kill()
        self.nodes[first].proc.wait()
        r = self.rev_parse(repo)
        self.assertEqual(r.rc, 14, r)
        self.assert_node(r, first)
        self.assertIn("the call was not sent", r.status["message"])
        r = self.rev_parse(repo, extra=["--retry-reads"])
        self.assertEqual(r.rc, 0, r)
        self.assert_node(r, other)
        self.assertEqual(r.out.strip(), self.heads["shared"])
        seen = self.ping_nodes(6)
        self.assertNotIn(first, seen)


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "testd"
    if which == "tkd":
        need_programs("openssl", "git")
        need_tls()
        return run_tkd()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestdFleet)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    return 0 if ok else 1


def run_tkd() -> int:
    """TkdFleet, with a private PostgreSQL for the run."""
    TkdFleet.dir = tkproc.tempdir("fleetc")
    cluster = Cluster()
    try:
        TkdFleet.dsn = cluster.dsn
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(TkdFleet)
        ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
        return 0 if ok else 1
    finally:
        cluster.close()
        TkdFleet.dir.cleanup()


if __name__ == "__main__":
    sys.exit(main())
