# SPDX-License-Identifier: MIT
"""The Python client on a real fleet (DESIGN.md "Scaling out"): two or
three tkd on 127.0.0.1 tls+tcp:// ports, each with --node-id, its own
--root holding a real git repository, and one private PostgreSQL
(tools/pg-cluster), certificates made with the openssl CLI
(tests/support/certs.py). The client opens with one node's address and
routes by itself.

Covered: Git reaches the node whose root holds the repository (the
answer is that repository's HEAD, Status.node that node), also when the
list the client opens with starts with a dead address; a path no node
holds is NOT_FOUND NO_NODE_FOR_PATH and is sent nowhere; Ping and
ListNodes go round robin (each ListNodes' self_id is the node its status
names); Services need a node (NODE_REQUIRED) and go to the one named;
Cancel of a held call is answered CANCELLED by the call's own node; a
node killed with SIGKILL is skipped by the round robin; a READ whose node
is killed mid-call is UNAVAILABLE "whether it ran is unknown" without
retry_reads (the negative control) and answered by the other owner of
its path with it.

Skips (exit 77) where there is no PostgreSQL 15, no openssl or psql, or
no TLS in the NNG tkd is linked with. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import select
import signal
import subprocess
import unittest
from typing import Dict, List, Optional, Tuple

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
# Fifteen heartbeats: a loaded machine (a sanitizer build) that delays a
# beat does not drop a node from a reading mid-test.
TTL_MS = 3000


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


CLUSTER: Optional[Cluster] = None


def setUpModule() -> None:
    global CLUSTER
    need_programs("openssl", "psql", "git")
    need_tls()
    CLUSTER = Cluster()


def tearDownModule() -> None:
    if CLUSTER is not None:
        CLUSTER.close()


class Node:
    """One tkd of the fleet: its id, address, root, repository and
    process."""

    def __init__(self, node_id: str, address: str, root: str,
                 daemon: tkproc.Daemon) -> None:
        self.id, self.address, self.root, self.d = node_id, address, root, daemon
        self.repo = os.path.join(root, "repo")


class FleetCase(unittest.TestCase):
    serial = 0

    def setUp(self) -> None:
        assert CLUSTER is not None
        self.tmp = tkproc.tempdir("flpy")
        d = self.tmp.name
        self.ca = make_ca(d, "ca")
        self.alice = make_cert(d, "alice", self.ca, CLIENT_EXT)
        # A database of its own per test: no row of another test's nodes.
        FleetCase.serial += 1
        db = "flpy%d" % FleetCase.serial
        CLUSTER.sql("tk", "DROP DATABASE IF EXISTS %s" % db)
        CLUSTER.sql("tk", "CREATE DATABASE %s" % db)
        self.dsn = CLUSTER.dsn_of(db)
        self.nodes: Dict[str, Node] = {}
        self.clients: List[tk.Client] = []
        self.hook_pids: List[int] = []

    def tearDown(self) -> None:
        for c in self.clients:
            c.close()
        for n in self.nodes.values():
            n.d.stop()
        for pid in self.hook_pids:  # a hook whose tkd was killed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.tmp.cleanup()

    def env(self) -> Dict[str, str]:
        # git reads no ~/.gitconfig of the developer's.
        return dict(os.environ, HOME=self.tmp.name,
                    XDG_CONFIG_HOME=self.tmp.name, GIT_CONFIG_NOSYSTEM="1")

    def make_root(self, name: str, commits: int) -> str:
        """A root holding repo/, a repository of `commits` commits."""
        root = os.path.join(self.tmp.name, "root-" + name)
        repo = os.path.join(root, "repo")
        os.makedirs(repo)
        env = self.env()
        subprocess.run(["git", "-C", repo, "init", "-q"], check=True, env=env)
        for i in range(commits):
            subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c",
                            "user.email=t@t", "commit", "-q", "--allow-empty",
                            "-m", "%s %d" % (name, i)], check=True, env=env)
        return root

    def start(self, node_id: str, root: str) -> Node:
        """A tkd that has joined the fleet; a port another process took
        between free_port and tkd's bind is tried again."""
        # Its certificate names its id, which the client checks.
        cert = make_cert(self.tmp.name, "node-" + node_id, self.ca,
                         node_ext(node_id))

        def argv(port: int) -> List[str]:
            addr = "tls+tcp://127.0.0.1:%d" % port
            return [
                tkproc.program("TKD"), "--listen", addr,
                "--tls-cert", cert[0], "--tls-key", cert[1],
                "--tls-ca", self.ca[0], "--node-id", node_id,
                "--advertise", addr, "--pg", self.dsn, "--root", root,
                "--heartbeat-ms", str(HEARTBEAT_MS), "--node-ttl-ms",
                str(TTL_MS), "--log-level", "info"]
        d, port = start_tkd(argv, self.env())
        n = Node(node_id, "tls+tcp://127.0.0.1:%d" % port, root, d)
        self.nodes[node_id] = n
        return n

    def fleet(self, roots: Dict[str, str]) -> None:
        """Nodes by id with their roots, each having seen all join."""
        for nid in sorted(roots):
            self.start(nid, roots[nid])
        for n in self.nodes.values():
            for nid in roots:
                n.d.wait_output("fleet: node %s joined" % nid, "stderr")

    def client(self, addr: str) -> tk.Client:
        c = tk.Client(addr, tls_ca=self.ca[0], tls_cert=self.alice[0],
                      tls_key=self.alice[1])
        self.clients.append(c)
        return c

    def hold_status(self, repo: str) -> Tuple[str, str]:
        """Makes the next Git/Status of repo block in a core.fsmonitor hook
        (the owner's, in tkd's HOME) that writes its pid to a fifo and
        sleeps; later ones run at once (the hook fails, git scans).
        (fifo, marker)."""
        fifo = os.path.join(self.tmp.name, "hook.fifo")
        marker = os.path.join(self.tmp.name, "hook.ran")
        hook = os.path.join(self.tmp.name, "hook")
        os.mkfifo(fifo, 0o600)
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n[ -e '%s' ] && exit 1\n: > '%s'\n"
                    "echo $$ > '%s'\nexec sleep 120\n" % (marker, marker, fifo))
        os.chmod(hook, 0o700)
        tkproc.owner_config(self.tmp.name, repo, "core.fsmonitor", hook)
        return fifo, marker

    def wait_hook(self, fifo: str) -> None:
        """Until the hook has run (it wrote its pid)."""
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            got = b""
            p = select.poll()
            p.register(fd, select.POLLIN)
            while not got.endswith(b"\n"):
                self.assertTrue(p.poll(WAIT_S * 1000), "the hook never ran")
                got += os.read(fd, 64)
        finally:
            os.close(fd)
        self.hook_pids.append(int(got))


class TestRouting(FleetCase):
    def setUp(self) -> None:
        super().setUp()
        self.fleet({"a": self.make_root("a", 1), "b": self.make_root("b", 2),
                    "c": self.make_root("c", 3)})
        dead = "tls+tcp://127.0.0.1:%d" % free_port()
        self.c = self.client(dead + "," + self.nodes["a"].address)

    def test_git_goes_to_the_owner(self) -> None:
        self.assertTrue(self.c.fleet)
        self.assertEqual(self.c.address, self.nodes["a"].address)
        for nid, n in sorted(self.nodes.items()):
            call = self.c.git.start_rev_parse(repo=n.repo, rev="HEAD", timeout=30)
            self.assertEqual(call.result().oid, git(n.repo, "rev-parse", "HEAD"))
            self.assertEqual(call.status().node, nid)
            log = self.c.git.log(repo=n.repo, rev="HEAD", timeout=30)
            self.assertEqual(len(log.commits), {"a": 1, "b": 2, "c": 3}[nid])
        # Search too, by its root.
        st = self.c.search.start_search(root=self.nodes["c"].repo,
                                        query="x", timeout=30).status()
        self.assertEqual(st.node, "c")
        self.assertTrue(st.from_server)

    def test_no_node_for_path(self) -> None:
        nowhere = os.path.join(self.tmp.name, "elsewhere", "repo")
        with self.assertRaises(tk.TkError) as cm:
            self.c.git.rev_parse(repo=nowhere, rev="HEAD", timeout=30)
        e = cm.exception
        self.assertEqual((e.code, e.reason), (tk.Code.NOT_FOUND, "NO_NODE_FOR_PATH"))
        self.assertIn(nowhere, e.message)
        self.assertFalse(e.from_server)
        self.assertEqual(e.node, "")
        # Negative control: the same call named to a node is sent, and that
        # tkd refuses the path itself.
        with self.assertRaises(tk.TkError) as cm:
            self.c.git.rev_parse(repo=nowhere, rev="HEAD", timeout=30, node="b")
        self.assertTrue(cm.exception.from_server)
        self.assertEqual(cm.exception.node, "b")

    def test_round_robin(self) -> None:
        got = []
        for _ in range(6):
            call = self.c.control.start_list_nodes(timeout=5)
            got.append((call.status().node, call.result().self_id))
        self.assertEqual([n for n, _ in got], [s for _, s in got])
        self.assertEqual(sorted(n for n, _ in got), ["a", "a", "b", "b", "c", "c"])
        pings = [self.c.control.start_ping(data=b"x", timeout=5) for _ in range(3)]
        self.assertEqual(sorted(p.status().node for p in pings), ["a", "b", "c"])

    def test_services_need_a_node(self) -> None:
        with self.assertRaises(tk.TkError) as cm:
            self.c.services.status(label="nothing", timeout=10)
        self.assertEqual((cm.exception.code, cm.exception.reason),
                         (tk.Code.INVALID_ARGUMENT, "NODE_REQUIRED"))
        self.assertFalse(cm.exception.from_server)
        st = self.c.services.start_status(label="nothing", timeout=10,
                                          node="b").status()
        self.assertTrue(st.from_server, st)  # whatever b's manager says
        self.assertEqual(st.node, "b")
        with self.assertRaises(tk.TkError) as cm:
            self.c.control.ping(node="zz", timeout=5)
        self.assertEqual((cm.exception.code, cm.exception.reason),
                         (tk.Code.NOT_FOUND, "UNKNOWN_NODE"))

    def test_cancel_on_the_calls_node(self) -> None:
        b = self.nodes["b"]
        fifo, _ = self.hold_status(b.repo)
        call = self.c.git.start_status(repo=b.repo, timeout=60)
        self.wait_hook(fifo)
        # Other calls meanwhile go round robin; the Cancel does not.
        for _ in range(3):
            self.c.control.ping(timeout=5)
        self.assertEqual(call.cancel(), tk.CancelOutcome.CANCELLED)
        st = call.status()
        self.assertEqual(st.code, tk.Code.CANCELLED, st)
        self.assertEqual(st.cancellation.cause, tk.Cause.CALLER)
        self.assertTrue(st.cancellation.process_killed)
        self.assertTrue(st.from_server)
        self.assertEqual(st.node, "b")

    def test_a_killed_node_is_skipped(self) -> None:
        c = self.nodes["c"]
        self.c.control.ping(timeout=5, node="c")  # connected to c
        c.d.proc.send_signal(signal.SIGKILL)
        c.d.proc.wait()
        nodes = [self.c.control.start_ping(timeout=5).status() for _ in range(6)]
        self.assertTrue(all(st.ok for st in nodes), nodes)
        self.assertEqual(sorted(set(st.node for st in nodes)), ["a", "b"])
        # A Git call for c's repository has nowhere to go, and is sent
        # nowhere: c is down (or, past the TTL, out of the table).
        with self.assertRaises(tk.TkError) as cm:
            self.c.git.rev_parse(repo=c.repo, rev="HEAD", timeout=30)
        self.assertIn((cm.exception.code, cm.exception.reason),
                      [(tk.Code.UNAVAILABLE, "NO_LIVE_NODE"),
                       (tk.Code.NOT_FOUND, "NO_NODE_FOR_PATH")])
        self.assertFalse(cm.exception.from_server)


class TestRetryReads(FleetCase):
    """b and c serve one root (one directory on this machine, as two
    machines with the same checkout would); a Git/Status held there on the
    first owner, whose tkd is then killed."""

    def run_killed(self, retry_reads: bool) -> tk.Status:
        shared = self.make_root("shared", 1)
        self.fleet({"b": shared, "c": shared})
        c = self.client(self.nodes["b"].address)
        owners = [n.node_id for n in c.nodes()]
        self.assertEqual(sorted(owners), ["b", "c"])
        first = self.nodes[owners[0]]
        fifo, marker = self.hold_status(first.repo)
        call = c.git.start_status(repo=first.repo, timeout=60,
                                  retry_reads=retry_reads)
        self.wait_hook(fifo)
        first.d.proc.send_signal(signal.SIGKILL)
        first.d.proc.wait()
        st = call.status()
        self.first = owners[0]
        self.other = owners[1]
        self.assertTrue(os.path.exists(marker))
        return st

    def test_without_retry_reads(self) -> None:
        st = self.run_killed(False)
        self.assertEqual(st.code, tk.Code.UNAVAILABLE, st)
        self.assertIn("whether it ran is unknown", st.message)
        self.assertFalse(st.from_server)
        self.assertEqual(st.node, self.first)

    def test_with_retry_reads(self) -> None:
        st = self.run_killed(True)
        self.assertTrue(st.ok, st)
        self.assertTrue(st.from_server)
        self.assertEqual(st.node, self.other)


if __name__ == "__main__":
    unittest.main(verbosity=2)
