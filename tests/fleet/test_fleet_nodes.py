# SPDX-License-Identifier: MIT
"""A fleet's membership, tkd's side (service/fleet, DESIGN.md "Scaling
out"): several real tkd on 127.0.0.1 tls+tcp:// ports, each with
--node-id, its own --root and --heartbeat-ms 200, against one private
PostgreSQL (tools/pg-cluster). Each is asked tk.v1.Control/ListNodes on its
own address, by the Python client in single-node use (the clients' routing
is tested elsewhere).

Covered: the live table as every node answers it; an id another live tkd
holds is refused (and, the negative control, free again once its holder
has gone); a node whose heartbeat stops (SIGSTOP) leaves the others'
answers within the TTL and a heartbeat, and comes back (SIGCONT); SIGTERM
marks the row draining while the node is still in its shutdown grace (a
held Commit keeps it there), and the row is gone once it has exited;
PostgreSQL stopped: ListNodes answers UNAVAILABLE MEMBERSHIP_STALE after
the TTL while Ping and Git go on, and membership resumes with the
database.

Skips (exit 77) where there is no PostgreSQL 15, no openssl, or no TLS in
the NNG tkd is linked with. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import subprocess
import time
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

import tkproc
from certs import CLIENT_EXT, make_ca, make_cert, node_ext
from fleetfx import (Cluster, free_port, need_programs, need_tls,
                     start_tkd)

import tk

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0
HEARTBEAT_MS = 200
# Five heartbeats, not tkd's default of three: room for a beat that a
# loaded machine (a sanitizer build) delays. The default is checked too.
TTL_MS = 5 * HEARTBEAT_MS
DEFAULT_TTL_MS = 3 * HEARTBEAT_MS


def wait_for(pred: Callable[[], bool], what: str,
             timeout: float = WAIT_S, step: float = 0.02) -> float:
    """Polls pred until it holds; the seconds it took. AssertionError
    naming what after timeout."""
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("%s: not within %.0f s" % (what, timeout))
        time.sleep(step)
    return time.monotonic() - t0


def not_raising(f: Callable[[], object]) -> object:
    """f(), or None when it raised tk.TkError."""
    try:
        return f()
    except tk.TkError:
        return None


CLUSTER: Optional[Cluster] = None


def setUpModule() -> None:
    global CLUSTER
    need_programs("openssl", "psql")
    need_tls()
    CLUSTER = Cluster()


def tearDownModule() -> None:
    if CLUSTER is not None:
        CLUSTER.stop()
        CLUSTER.close()


class Node:
    """One tkd of the fleet: its id, address, root and process."""

    def __init__(self, node_id: str, address: str, root: str,
                 daemon: tkproc.Daemon) -> None:
        self.node_id, self.address, self.root, self.d = (
            node_id, address, root, daemon)


class Fleet(unittest.TestCase):
    db_serial = 0

    def setUp(self) -> None:
        assert CLUSTER is not None
        self.pg = CLUSTER
        self.tmp = tkproc.tempdir("fleet")
        d = self.tmp.name
        self.ca = make_ca(d, "ca")
        self.alice = make_cert(d, "alice", self.ca, CLIENT_EXT)
        self.certs: Dict[str, Tuple[str, str]] = {}
        # A database of its own per test: no row of another test's nodes.
        Fleet.db_serial += 1
        self.db = "fleet%d" % Fleet.db_serial
        self.pg.sql("tk", "DROP DATABASE IF EXISTS %s" % self.db)
        self.pg.sql("tk", "CREATE DATABASE %s" % self.db)
        self.dsn = self.pg.dsn_of(self.db)
        self.nodes: List[Node] = []
        self.clients: List[tk.Client] = []
        self.node_of: Dict[int, str] = {}
        self.version = subprocess.run(
            [tkproc.program("TKD"), "--version"], stdout=subprocess.PIPE,
            text=True, check=True).stdout.split()[1]

    def tearDown(self) -> None:
        for c in self.clients:
            c.close()
        for n in self.nodes:
            if n.d.proc.poll() is None:
                os.kill(n.d.proc.pid, signal.SIGCONT)
            n.d.stop()
        self.tmp.cleanup()

    # ---- helpers --------------------------------------------------------

    def argv(self, node_id: str, port: int, root: str,
             extra: Optional[List[str]] = None,
             ttl: Optional[int] = TTL_MS) -> List[str]:
        addr = "tls+tcp://127.0.0.1:%d" % port
        cert = self.cert(node_id)
        return [tkproc.program("TKD"), "--listen", addr,
                "--tls-cert", cert[0], "--tls-key", cert[1],
                "--tls-ca", self.ca[0], "--node-id", node_id,
                "--advertise", addr, "--pg", self.dsn, "--root", root,
                "--heartbeat-ms", str(HEARTBEAT_MS), "--log-level", "info",
                "--shutdown-grace-ms", "20000"] + (
                    ["--node-ttl-ms", str(ttl)] if ttl is not None else []
                ) + (extra or [])

    def cert(self, node_id: str) -> Tuple[str, str]:
        """Node node_id's certificate, which names its id."""
        if node_id not in self.certs:
            self.certs[node_id] = make_cert(self.tmp.name, "node-" + node_id,
                                            self.ca, node_ext(node_id))
        return self.certs[node_id]

    def env(self) -> Dict[str, str]:
        # git (a Commit's) reads no ~/.gitconfig of the developer's.
        return dict(os.environ, HOME=self.tmp.name,
                    XDG_CONFIG_HOME=self.tmp.name, GIT_CONFIG_NOSYSTEM="1")

    def root(self, node_id: str) -> str:
        root = os.path.join(self.tmp.name, "root-" + node_id)
        os.makedirs(root, exist_ok=True)
        return root

    def start(self, node_id: str, extra: Optional[List[str]] = None,
              ttl: Optional[int] = TTL_MS) -> Node:
        """A tkd that has joined (logged "listening on"); a port another
        process took between free_port and tkd's bind is tried again."""
        root = self.root(node_id)
        d, port = start_tkd(
            lambda port: self.argv(node_id, port, root, extra, ttl), self.env())
        n = Node(node_id, "tls+tcp://127.0.0.1:%d" % port, root, d)
        self.nodes.append(n)
        return n

    def client(self, n: Node) -> tk.Client:
        """A client of the fleet, opened on n; the tests' calls name n
        (node=), as the client would otherwise spread Control calls over
        every live node."""
        c = tk.Client(n.address, tls_ca=self.ca[0], tls_cert=self.alice[0],
                      tls_key=self.alice[1])
        self.clients.append(c)
        self.node_of[id(c)] = n.node_id
        return c

    def list_nodes(self, c: tk.Client) -> Any:
        """ListNodes asked of the node c was opened on."""
        return c.control.list_nodes(timeout=5, node=self.node_of[id(c)])

    def ids(self, c: tk.Client) -> List[str]:
        return [x.node_id for x in self.list_nodes(c).nodes]

    def wait_members(self, observer: Node, ids: List[str]) -> None:
        """Until observer has logged that each of ids joined."""
        for i in ids:
            observer.d.wait_output("fleet: node %s joined at" % i, "stderr")

    # ---- the tests ------------------------------------------------------

    def test_every_node_lists_the_fleet(self) -> None:
        fleet = [self.start(i) for i in ("a", "b", "c")]
        for n in fleet:
            self.wait_members(n, ["a", "b", "c"])
        for n in fleet:
            reply = self.list_nodes(self.client(n))
            self.assertEqual(reply.self_id, n.node_id)
            self.assertEqual(reply.ttl_ms, TTL_MS)
            got = {x.node_id: x for x in reply.nodes}
            self.assertEqual(sorted(got), ["a", "b", "c"])
            for m in fleet:
                info = got[m.node_id]
                self.assertEqual(info.address, m.address)
                self.assertEqual(list(info.roots), [os.path.realpath(m.root)])
                self.assertEqual(info.version, self.version)
                self.assertFalse(info.draining)
                self.assertLessEqual(info.heartbeat_age_ms, TTL_MS)
        # The table says the same, by PostgreSQL's clock.
        rows = self.pg.sql(self.db, "SELECT node_id, address, draining FROM "
                           "tk_nodes ORDER BY node_id").splitlines()
        self.assertEqual(rows, ["%s|%s|f" % (n.node_id, n.address)
                                for n in fleet])
        # Without --node-ttl-ms, the TTL is three heartbeats.
        d = self.start("d", ttl=None)
        self.wait_members(d, ["a", "b", "c", "d"])
        reply = self.list_nodes(self.client(d))
        self.assertEqual(reply.ttl_ms, DEFAULT_TTL_MS)
        self.assertEqual([x.node_id for x in reply.nodes],
                         ["a", "b", "c", "d"])

    def test_an_id_held_by_a_live_node_is_refused(self) -> None:
        a = self.start("a")
        a.d.wait_output("fleet: node a joined at", "stderr")
        argv = self.argv("a", free_port(), self.root("a2"))
        r = subprocess.run(argv, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=WAIT_S, env=self.env())
        self.assertEqual(r.returncode, 2, r.stderr)
        m = re.search(r"node id a is held by the tkd at (\S+), whose "
                      r"heartbeat is (\d+) ms old", r.stderr)
        self.assertIsNotNone(m, r.stderr)
        self.assertEqual(m.group(1), a.address)  # type: ignore
        self.assertLess(int(m.group(2)), TTL_MS)  # type: ignore
        self.assertNotIn("listening on", r.stderr)
        # The holder's row is untouched: its address, and it serves on.
        self.assertEqual(self.pg.sql(self.db, "SELECT address FROM tk_nodes"),
                         a.address)
        self.assertEqual(self.ids(self.client(a)), ["a"])
        # Negative control: once the holder has exited (its row deleted),
        # the same id starts.
        self.assertEqual(a.d.stop(), 0, a.d.output("stderr"))
        self.assertEqual(self.pg.sql(self.db, "SELECT count(*) FROM tk_nodes"),
                         "0")
        a2 = self.start("a")
        self.assertEqual(self.ids(self.client(a2)), ["a"])
        # And once a holder killed outright has gone stale (its row
        # stays, its heartbeat ages past the TTL).
        a2.d.proc.kill()
        a2.d.proc.wait()
        wait_for(lambda: self.pg.sql(
            self.db, "SELECT count(*) FROM tk_nodes WHERE heartbeat_at > "
            "now() - interval '%d milliseconds'" % TTL_MS) == "0",
            "the killed node's row stale")
        a3 = self.start("a")
        self.assertEqual(self.ids(self.client(a3)), ["a"])

    def test_a_stopped_node_leaves_and_comes_back(self) -> None:
        a, b = self.start("a"), self.start("b")
        self.wait_members(a, ["a", "b"])
        self.wait_members(b, ["a", "b"])
        ca = self.client(a)
        self.assertEqual(self.ids(ca), ["a", "b"])
        mark = a.d.mark("stderr")
        b.d.proc.send_signal(signal.SIGSTOP)
        took = wait_for(lambda: self.ids(ca) == ["a"], "b out of a's ListNodes")
        # Its last heartbeat came at most one heartbeat before the stop.
        self.assertLess(took, (TTL_MS + HEARTBEAT_MS) / 1000 + 1.0,
                        "b left a's ListNodes %.2f s after SIGSTOP" % took)
        a.d.wait_output("fleet: node b left", "stderr", start=mark)
        mark = a.d.mark("stderr")
        b.d.proc.send_signal(signal.SIGCONT)
        wait_for(lambda: self.ids(ca) == ["a", "b"], "b back in a's ListNodes")
        a.d.wait_output("fleet: node b joined at " + b.address, "stderr",
                        start=mark)
        wait_for(lambda: self.ids(self.client(b)) == ["a", "b"],
                 "b's own ListNodes")

    def test_sigterm_drains_then_leaves(self) -> None:
        a, b = self.start("a"), self.start("b")
        self.wait_members(a, ["a", "b"])
        self.wait_members(b, ["a", "b"])
        # A Commit on b, held in its pre-commit hook: b stays in its
        # shutdown grace until the test lets the hook go.
        repo = os.path.join(b.root, "r")
        os.makedirs(repo)
        env = self.env()
        for args in (["init", "-q"], ["config", "user.name", "tk"],
                     ["config", "user.email", "tk@example.invalid"]):
            subprocess.run(["git", "-C", repo] + args, check=True, env=env)
        entered = os.path.join(self.tmp.name, "entered.fifo")
        go = os.path.join(self.tmp.name, "go.fifo")
        os.mkfifo(entered, 0o600)
        os.mkfifo(go, 0o600)
        hook = os.path.join(repo, ".git", "hooks", "pre-commit")
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho in > '%s'\nread -r x < '%s'\n"
                    % (entered, go))
        os.chmod(hook, 0o755)
        with open(os.path.join(repo, "a.txt"), "w", encoding="utf-8") as f:
            f.write("a\n")
        call = self.client(b).git.start_commit(
            repo=repo, message="held", paths=[b"a.txt"], timeout=60)
        self.assertEqual(tkproc.read_line(entered), "in")
        ca = self.client(a)
        mark = b.d.mark("stderr")
        b.d.proc.send_signal(signal.SIGTERM)
        b.d.wait_output("shutdown: waiting for 1 write(s)", "stderr",
                        start=mark)
        # b marked its row before it stopped accepting.
        out = b.d.output("stderr")[mark:]
        self.assertLess(out.index("fleet: node b marked draining"),
                        out.index("shutdown: waiting for 1 write(s)"), out)
        self.assertEqual(self.pg.sql(
            self.db, "SELECT draining FROM tk_nodes WHERE node_id = 'b'"), "t")
        wait_for(lambda: {x.node_id: x.draining for x in
                          self.list_nodes(ca).nodes}
                 == {"a": False, "b": True}, "b draining in a's ListNodes")
        a.d.wait_output("fleet: node b is draining", "stderr")
        self.assertIsNone(b.d.proc.poll())  # still in its grace
        with open(go, "w", encoding="utf-8") as f:
            f.write("go\n")
        self.assertTrue(call.status(timeout=WAIT_S).ok)
        self.assertEqual(b.d.proc.wait(timeout=WAIT_S), 0,
                         b.d.output("stderr"))
        self.assertIn("fleet: node b left the table", b.d.output("stderr"))
        # Gone at once, not when its heartbeat would have gone stale.
        self.assertEqual(self.pg.sql(
            self.db, "SELECT count(*) FROM tk_nodes WHERE node_id = 'b'"), "0")
        a.d.wait_output("fleet: node b left", "stderr")
        self.assertEqual(self.ids(ca), ["a"])

    def test_postgresql_down_membership_stale_service_goes_on(self) -> None:
        a = self.start("a")
        self.start("b")
        self.wait_members(a, ["a", "b"])
        repo = os.path.join(a.root, "r")
        os.makedirs(repo)
        subprocess.run(["git", "-C", repo, "init", "-q"], check=True,
                       env=self.env())
        ca = self.client(a)
        mark = a.d.mark("stderr")
        self.pg.stop()
        try:
            a.d.wait_output("membership not refreshed", "stderr", start=mark)

            def stale() -> bool:
                try:
                    self.list_nodes(ca)
                    return False
                except tk.TkError as e:
                    self.assertEqual(e.code, tk.Code.UNAVAILABLE)
                    self.assertEqual(e.reason, "MEMBERSHIP_STALE")
                    self.assertIn("since", e.message)
                    return True
            wait_for(stale, "ListNodes UNAVAILABLE MEMBERSHIP_STALE")
            # The node serves on: Ping and Git.
            self.assertEqual(ca.control.ping(data=b"x", timeout=5,
                                             node="a").data, b"x")
            ca.git.status(repo=repo, timeout=30, node="a")
        finally:
            self.pg.start()
        wait_for(lambda: not_raising(lambda: self.ids(ca)) == ["a", "b"],
                 "membership back with PostgreSQL")
        a.d.wait_output("membership refreshed again", "stderr", start=mark)

    def test_no_fleet_no_nodes(self) -> None:
        # A tkd without --node-id is no member: no nodes, no self_id, as
        # before the fleet existed; and it needs no database.
        d, addr = tkproc.start_tkd(self.tmp.name)
        try:
            with tk.Client(addr) as c:
                reply = c.control.list_nodes(timeout=5)
                self.assertEqual(list(reply.nodes), [])
                self.assertEqual(reply.self_id, "")
        finally:
            d.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
