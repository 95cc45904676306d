# SPDX-License-Identifier: MIT
"""Issue 15's tests on one machine: three tkd, each in a network namespace
of its own, joined by veth pairs, with mutual TLS from certificates the
openssl CLI made and one private PostgreSQL (tests/fleet/netfleet.py).
What DESIGN.md "Scaling out" promises, on real processes and a real
network stack:

1. a Git call reaches the node whose root holds its repository;
2. Cancel of a call held on node b answers CANCELLED from b (on another
   node's connection the same Cancel finds nothing);
3. kill -9 of the node running a Commit: the caller gets UNAVAILABLE,
   "whether it ran is unknown"; git commit ran once (its pre-commit
   hook's runs) and the repository got at most one new commit, even with
   retry_reads (a READ is retried on the other owner of the path; a
   Commit resent would have made two: the negative controls);
4. a node whose heartbeat stops (SIGSTOP) leaves ListNodes and the
   routing of a client (its Pings go round the other two);
5. a client whose certificate another CA signed is refused by every node;
6. a link set down mid-call ends the call UNAVAILABLE within its deadline,
   through the client's probe, while the other nodes serve on (the
   negative control: with the link up the probes are answered and the
   call runs to its end).

Each runs through the Python client and through tkcall, the C client (-v
names the node that carried the call).

Needs root (ip netns), the ip and openssl programs: exits 77 saying why
when the machine lacks one of them. Run by meson (suite fleet) under
/usr/bin/python3; waits are on output, fifos and the table, never sleeps.
"""

from __future__ import annotations

import errno
import json
import faulthandler
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, List, Optional, Set, Tuple

import netfleet
import tkproc
from netfleet import Hook, git, wait_for

import tk
from tk.v1 import control_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

FLEET: Optional[netfleet.Fleet] = None
# The client's probe (TK_NODE_PROBE_MS): a Ping after 5 s without a
# reply, 5 s for its answer.
PROBE_S = 5.0
CALL_S = 30.0


def say(text: str) -> None:
    """A measure for the test's log (meson's testlog.txt)."""
    sys.stderr.write("  %s\n" % text)
    sys.stderr.flush()


def fleet() -> netfleet.Fleet:
    assert FLEET is not None
    return FLEET


def setUpModule() -> None:
    global FLEET
    FLEET = netfleet.Fleet("t")
    try:
        FLEET.start()
        wait_live(set(n.node_id for n in FLEET.nodes))
    except BaseException:
        FLEET.close()
        FLEET = None
        raise


def tearDownModule() -> None:
    global FLEET
    if FLEET is None:
        return
    try:
        for n in FLEET.nodes:
            n.stop()  # the logs are whole once tkd has exited
        reports = [r for n in FLEET.nodes for r in n.sanitizer_reports()]
    finally:
        FLEET.close()
        FLEET = None
    if reports:
        raise AssertionError("a sanitizer reported in tkd:\n" +
                             "\n".join(reports))


def client(names: str = "abc",
           cert: Optional[Tuple[str, str]] = None) -> tk.Client:
    """A client bootstrapped from the nodes named (a comma-separated list
    of their addresses), with the fleet's client certificate or cert."""
    f = fleet()
    cert = cert or f.client_cert
    return tk.Client(f.addrs(names), tls_ca=f.ca[0], tls_cert=cert[0],
                     tls_key=cert[1])


def list_nodes(via: str) -> control_pb2.ListNodesReply:
    """ListNodes asked of node via alone (a client bootstrapped from it,
    the call named to it)."""
    node = fleet().node(via)
    with client(via) as c:
        return c.control.list_nodes(node=node.node_id, timeout=10)


def live(via: str = "a") -> Set[str]:
    return {n.node_id for n in list_nodes(via).nodes}


def wait_live(want: Set[str], via: str = "a") -> None:
    wait_for(lambda: live(via) == want,
             "ListNodes of %s to be %s" % (via, sorted(want)), every=0.1)


def tkcall_argv(args: Tuple[str, ...], addrs: str = "abc",
                cert: Optional[Tuple[str, str]] = None) -> List[str]:
    f = fleet()
    cert = cert or f.client_cert
    return [os.environ["TKCALL"], "--addr", f.addrs(addrs), "--cacert",
            f.ca[0], "--cert", cert[0], "--key", cert[1], "-v"] + list(args)


def tkcall(*args: str, addrs: str = "abc",
           cert: Optional[Tuple[str, str]] = None,
           timeout: float = 60) -> subprocess.CompletedProcess:
    """tkcall -v (it names the node that carried the call on stderr)."""
    return subprocess.run(tkcall_argv(args, addrs, cert),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          check=False)


class Tkcall:
    """tkcall -v running in the background; wait() gives its exit status,
    stdout and stderr; done() whether it has exited (for Hook.entered)."""

    def __init__(self, *args: str, addrs: str = "abc") -> None:
        self.proc = subprocess.Popen(tkcall_argv(args, addrs),
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def done(self) -> bool:
        return self.proc.poll() is not None

    def status(self) -> str:
        return "tkcall exited %s" % self.proc.returncode

    def wait(self, timeout: float = CALL_S + 30) -> Tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def status_json(stderr: str) -> dict:
    """The status tkcall prints on stderr for a call that was not OK."""
    for line in stderr.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError("no status on tkcall's stderr:\n" + stderr)


def node_named(stderr: str) -> List[str]:
    """The nodes tkcall -v says carried its calls ("tkcall: node  ID")."""
    return re.findall(r"^tkcall: node\s+(\S+)$", stderr, re.M)


def ping_node(c: tk.Client, timeout: float = 10, **kw: Any) -> str:
    """A Ping; the node that answered it."""
    call = c.control.start_ping(data=b"x", timeout=timeout, **kw)
    call.result()
    return call.status().node


class FleetCase(unittest.TestCase):
    def setUp(self) -> None:
        self.f = fleet()
        self.a, self.b, self.c = self.f.nodes
        self.hooks: List[Hook] = []
        self.undo: List = []

    def tearDown(self) -> None:
        for fn in reversed(self.undo):
            fn()
        for h in self.hooks:
            h.close()

    def hook(self, name: str, once: bool = False) -> Hook:
        h = Hook(self.f.dir, name, once)
        self.hooks.append(h)
        self.undo.append(lambda: release_quietly(h))
        return h

    def fsmonitor(self, repo: str, h: Hook) -> None:
        """git status in repo runs h (core.fsmonitor, in the owner's
        configuration: each node's HOME) until the test ends."""
        for node in self.f.nodes:
            self.undo.append(tkproc.owner_config(node.dir, repo,
                                                 "core.fsmonitor", h.path))

    def pre_commit(self, repo: str, h: Hook) -> None:
        hook = os.path.join(repo, ".git", "hooks", "pre-commit")
        os.symlink(h.path, hook)
        self.undo.append(lambda: os.unlink(hook))

    def restart_after_kill(self, node: netfleet.Node) -> None:
        """Once node's row has gone stale (it leaves ListNodes: a tkd
        with a live row's id would refuse to start), starts it again and
        waits until it is back."""
        everyone = {n.node_id for n in self.f.nodes}
        via = next(n.name for n in self.f.nodes if n is not node)
        wait_live(everyone - {node.node_id}, via)
        node.start()
        wait_live(everyone, via)

    def wait_orphan(self, h: Hook) -> None:
        """Releases the git a killed tkd left behind (it runs on in its own
        process group) and waits until it has finished."""
        release_quietly(h)
        wait_for(lambda: netfleet.pid_gone(h.git_pid),
                 "the orphaned git %d to finish" % h.git_pid)


def release_quietly(h: Hook) -> None:
    """Releases a hook's git; nothing when no hook holds the fifo any
    more (it was released, or killed with its call)."""
    try:
        h.release()
    except OSError as e:
        if e.errno != errno.ENXIO:
            raise


# ---- 1. routing ---------------------------------------------------------------

class Routing(FleetCase):
    def test_git_reaches_the_owning_node(self) -> None:
        with client("a") as c:  # one bootstrap address is enough
            for n in self.f.nodes:
                call = c.git.start_rev_parse(repo=n.repo, rev="HEAD",
                                             timeout=10)
                self.assertEqual(call.result().oid,
                                 git(n.repo, "rev-parse", "HEAD").strip())
                self.assertEqual(call.status().node, n.node_id)

    def test_tkcall_reaches_the_owning_node(self) -> None:
        r = tkcall("Git/RevParse", "-d",
                   '{"repo": "%s", "rev": "HEAD"}' % self.b.repo)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(),
                         git(self.b.repo, "rev-parse", "HEAD").strip())
        self.assertEqual(node_named(r.stderr), ["nb"], r.stderr)

    def test_routing_negative_controls(self) -> None:
        # Sent to a node whose roots do not hold it, the same call fails
        # there: the routing is what made it reach b.
        with client() as c:
            call = c.git.start_rev_parse(repo=self.b.repo, rev="HEAD",
                                         node=self.a.node_id, timeout=10)
            st = call.status()
            self.assertFalse(st.ok)
            self.assertTrue(st.from_server, st)
            self.assertEqual(st.node, "na")
            # A path no node holds: NOT_FOUND, naming it.
            nowhere = os.path.join(self.f.dir, "nowhere", "repo")
            with self.assertRaises(tk.TkError) as cm:
                c.git.rev_parse(repo=nowhere, rev="HEAD", timeout=10)
            self.assertEqual(cm.exception.code, tk.Code.NOT_FOUND)
            self.assertEqual(cm.exception.reason, "NO_NODE_FOR_PATH")
            self.assertIn(nowhere, cm.exception.message)


# ---- 2. Cancel on the call's node ------------------------------------------------

class CancelOnB(FleetCase):
    def test_cancel_answered_by_b(self) -> None:
        h = self.hook("cancel")
        self.fsmonitor(self.b.repo, h)
        with client() as c:
            call = c.git.start_status(repo=self.b.repo, timeout=CALL_S)
            self.assertIs(netfleet.node_of(self.f, h.entered(call)), self.b)
            # Negative control: the same call id cancelled on a's
            # connection is unknown there, and the call runs on.
            other = c.control.cancel(call_id=call.call_id,
                                     node=self.a.node_id, timeout=10)
            self.assertEqual(other.outcome, control_pb2.CancelReply.NOT_FOUND)
            self.assertFalse(call.done())
            # call.cancel() takes no node: it goes where the call went.
            self.assertEqual(call.cancel(), tk.CancelOutcome.CANCELLED)
            st = call.status()
        self.assertEqual(st.code, tk.Code.CANCELLED)
        self.assertTrue(st.from_server)
        self.assertEqual(st.node, "nb")
        self.assertEqual(st.cancellation.cause, tk.Cause.CALLER)
        self.assertTrue(st.cancellation.process_killed)

    def test_tkcall_ctrl_c_answered_by_b(self) -> None:
        # tkcall's Ctrl-C is its Cancel, on the call's connection.
        h = self.hook("cancel")
        self.fsmonitor(self.b.repo, h)
        t = Tkcall("Git/Status", "-t", "30s", "-d",
                   json.dumps({"repo": self.b.repo}))
        self.undo.append(t.kill)
        self.assertIs(netfleet.node_of(self.f, h.entered(t)), self.b)
        t.proc.send_signal(signal.SIGINT)
        rc, _, err = t.wait()
        self.assertEqual(rc, tk.Code.CANCELLED, err)
        st = status_json(err)
        self.assertEqual(st["code"], "CANCELLED")
        self.assertTrue(st["fromServer"])
        self.assertEqual(st["cancellation"]["cause"], "CALLER")
        self.assertEqual(node_named(err), ["nb"], err)


# ---- 3. kill -9 during a Commit ----------------------------------------------------

class KillDuringCommit(FleetCase):
    """On the root b and c share: a call on it has two owners, so a client
    that resent it would find another node to run it."""

    def commit_then_kill(self, c: tk.Client) -> Tuple[tk.Status, Hook,
                                                      netfleet.Node]:
        h = self.hook("commit", once=True)
        self.pre_commit(self.f.shared_repo, h)
        call = c.git.start_commit(repo=self.f.shared_repo, message="once",
                                  allow_empty=True, retry_reads=True,
                                  timeout=CALL_S)
        owner = netfleet.node_of(self.f, h.entered(call))
        self.assertIn(owner.name, ("b", "c"))
        self.undo.append(lambda: self.restart_after_kill(owner))
        owner.kill9()
        st = call.status(timeout=CALL_S)
        return st, h, owner

    def assert_unknown(self, st: tk.Status, owner: netfleet.Node) -> None:
        self.assertEqual(st.code, tk.Code.UNAVAILABLE, st)
        self.assertFalse(st.from_server)
        self.assertIn("whether it ran is unknown", st.message)
        self.assertEqual(st.node, owner.node_id)

    def test_commit_runs_at_most_once(self) -> None:
        before = netfleet.commit_count(self.f.shared_repo)
        with client() as c:
            st, h, owner = self.commit_then_kill(c)
        # The property first, whatever the status says: git commit ran
        # once (its pre-commit hook, on the killed node), and the
        # repository has at most one new commit. (Two gits racing would
        # leave one commit, the other's ref update refused: the count of
        # commits alone could miss a second run.)
        self.wait_orphan(h)
        added = netfleet.commit_count(self.f.shared_repo) - before
        runs = [netfleet.node_of(self.f, ns).node_id for ns in h.runs()]
        say("kill -9 of %s during a Commit: %s; git commit ran on %s; "
            "%d new commit(s)" % (owner.node_id, st.code_name, runs, added))
        self.assertEqual(runs, [owner.node_id])
        self.assertIn(added, (0, 1))
        self.assert_unknown(st, owner)

    def test_tkcall_commit_runs_at_most_once(self) -> None:
        before = netfleet.commit_count(self.f.shared_repo)
        h = self.hook("commit", once=True)
        self.pre_commit(self.f.shared_repo, h)
        t = Tkcall("Git/Commit", "--retry-reads", "-t", "30s", "-d",
                   json.dumps({"repo": self.f.shared_repo, "message": "once",
                               "allowEmpty": True}))
        self.undo.append(t.kill)
        owner = netfleet.node_of(self.f, h.entered(t))
        self.undo.append(lambda: self.restart_after_kill(owner))
        owner.kill9()
        rc, _, err = t.wait()
        self.wait_orphan(h)
        added = netfleet.commit_count(self.f.shared_repo) - before
        runs = [netfleet.node_of(self.f, ns).node_id for ns in h.runs()]
        say("tkcall: kill -9 of %s during a Commit: exit %d; git commit ran "
            "on %s; %d new commit(s)" % (owner.node_id, rc, runs, added))
        self.assertEqual(runs, [owner.node_id])
        self.assertIn(added, (0, 1))
        self.assertEqual(rc, tk.Code.UNAVAILABLE, err)
        st = status_json(err)
        self.assertFalse(st["fromServer"])
        self.assertIn("whether it ran is unknown", st["message"])
        self.assertEqual(node_named(err), [owner.node_id], err)

    def test_commit_resent_runs_twice_negative_control(self) -> None:
        # What a client that resent the Commit to the other owner would
        # have done: the killed node's git ran on and committed, and so
        # does the resend. The count sees the second run.
        before = netfleet.commit_count(self.f.shared_repo)
        with client() as c:
            st, h, owner = self.commit_then_kill(c)
            self.assert_unknown(st, owner)
            self.wait_orphan(h)
            other = self.c if owner is self.b else self.b
            call = c.git.start_commit(repo=self.f.shared_repo, message="twice",
                                      allow_empty=True, node=other.node_id,
                                      timeout=CALL_S)
            call.result()
            self.assertEqual(call.status().node, other.node_id)
        self.assertEqual(netfleet.commit_count(self.f.shared_repo) - before, 2)
        self.assertEqual(len(h.runs()), 2)

    def test_read_retried_on_the_other_owner_negative_control(self) -> None:
        # The same kill under a READ with retry_reads: the client does
        # resend where it may, and the other owner of the path answers.
        h = self.hook("status", once=True)
        self.fsmonitor(self.f.shared_repo, h)
        with client() as c:
            call = c.git.start_status(repo=self.f.shared_repo,
                                      retry_reads=True, timeout=CALL_S)
            owner = netfleet.node_of(self.f, h.entered(call))
            self.undo.append(lambda: self.restart_after_kill(owner))
            owner.kill9()
            st = call.status(timeout=CALL_S)
        self.assertTrue(st.ok, st)
        other = self.c if owner is self.b else self.b
        self.assertEqual(st.node, other.node_id)

    def test_tkcall_read_retried_on_the_other_owner_negative_control(
            self) -> None:
        # The same through tkcall --retry-reads (libtkclient): a READ the
        # catalog knows, its node killed mid-call, answered by the other.
        h = self.hook("status", once=True)
        self.fsmonitor(self.f.shared_repo, h)
        t = Tkcall("Git/Status", "--retry-reads", "-t", "30s", "-d",
                   json.dumps({"repo": self.f.shared_repo}))
        self.undo.append(t.kill)
        owner = netfleet.node_of(self.f, h.entered(t))
        self.undo.append(lambda: self.restart_after_kill(owner))
        owner.kill9()
        rc, _, err = t.wait()
        self.assertEqual(rc, 0, err)
        other = self.c if owner is self.b else self.b
        self.assertEqual(node_named(err)[-1:], [other.node_id], err)


# ---- 4. a node whose heartbeat stops ------------------------------------------------

class HeartbeatStops(FleetCase):
    def pings(self, c: tk.Client, n: int) -> Set[str]:
        return {ping_node(c) for _ in range(n)}

    def test_stopped_node_leaves_table_and_routing(self) -> None:
        everyone = {n.node_id for n in self.f.nodes}
        # Negative control: before, the round robin reaches all three.
        with client("ab") as c:
            self.assertEqual(self.pings(c, 6), everyone)
        os.kill(self.c.pid, signal.SIGSTOP)

        def resume() -> None:
            os.kill(self.c.pid, signal.SIGCONT)
            wait_live(everyone)  # and it comes back
        self.undo.append(resume)
        wait_live(everyone - {"nc"}, "a")
        wait_live(everyone - {"nc"}, "b")  # each node reads the table itself
        # A client that reads the table now routes around it; so does
        # tkcall, which reads it at each start.
        with client("ab") as c:
            self.assertEqual(self.pings(c, 6), everyone - {"nc"})
        for _ in range(3):
            r = tkcall("Control/Ping", addrs="ab", timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("nc", node_named(r.stderr))


# ---- 5. a certificate another CA signed ------------------------------------

class OtherCA(FleetCase):
    def test_refused_by_every_node(self) -> None:
        for n in self.f.nodes:
            before = handshake_failures(n.log())
            with self.assertRaises(tk.TkError) as cm:
                client(n.name, self.f.mallory)
            self.assertEqual(cm.exception.code, tk.Code.UNAVAILABLE)
            self.assertFalse(cm.exception.from_server)
            # (wait_until calls it before the loop moves on)
            n.running().wait_until(
                lambda err: handshake_failures(err) > before,
                "a failed TLS handshake logged")
            r = tkcall("Control/Ping", addrs=n.name, cert=self.f.mallory)
            self.assertEqual(r.returncode, tk.Code.UNAVAILABLE, r.stderr)
        with self.assertRaises(tk.TkError):  # the list: none of them
            client("abc", self.f.mallory)

    def test_our_ca_served_by_every_node_negative_control(self) -> None:
        with client() as c:
            for n in self.f.nodes:
                self.assertEqual(ping_node(c, node=n.node_id), n.node_id)


def handshake_failures(log: str) -> int:
    return sum(int(x) for x in
               re.findall(r"(\d+) connection\(s\) failed the TLS", log))


# ---- 6. a link down mid-call ------------------------------------------------

class LinkDown(FleetCase):
    def held_status(self, c: tk.Client) -> Tuple[tk.Call, Hook]:
        h = self.hook("link")
        self.fsmonitor(self.c.repo, h)
        call = c.git.start_status(repo=self.c.repo, timeout=CALL_S)
        self.assertIs(netfleet.node_of(self.f, h.entered(call)), self.c)
        return call, h

    def link_back(self) -> None:
        """c's link up again, and usable: the first dial after it came up
        sometimes fails (the neighbours are learnt again), so this polls a
        Ping of c by a client of its own until one is answered."""
        self.c.link(True)

        def answered() -> bool:
            try:
                with client("c") as c:
                    return ping_node(c, timeout=2, node="nc") == "nc"
            except tk.TkError:
                return False
        wait_for(answered, "a Ping of c once its link is up")

    def others_serve(self, c: tk.Client) -> None:
        for n in (self.a, self.b):
            call = c.git.start_rev_parse(repo=n.repo, rev="HEAD", timeout=10)
            call.result()
            self.assertEqual(call.status().node, n.node_id)
            self.assertEqual(ping_node(c, node=n.node_id), n.node_id)

    def test_link_down_unavailable_within_deadline(self) -> None:
        with client() as c:
            t0 = time.monotonic()
            call, _ = self.held_status(c)
            self.c.link(False)
            self.undo.append(self.link_back)
            # While the call waits on the dead link, a and b serve.
            self.others_serve(c)
            st = call.status(timeout=CALL_S + 10)
            took = time.monotonic() - t0
            say("link down: %s after %.1f s: %s"
                % (st.code_name, took, st.message))
            self.assertEqual(st.code, tk.Code.UNAVAILABLE, st)
            self.assertFalse(st.from_server)
            self.assertIn("stopped answering", st.message)
            self.assertIn("whether it ran is unknown", st.message)
            self.assertEqual(st.node, "nc")
            # the probe: 5 s without a reply, then 5 s for the Ping's
            # answer; well before the deadline
            self.assertGreaterEqual(took, PROBE_S)
            self.assertLess(took, CALL_S - 5, "not ended by the probe")
            self.others_serve(c)

    def test_tkcall_link_down_unavailable_within_deadline(self) -> None:
        h = self.hook("link")
        self.fsmonitor(self.c.repo, h)
        t0 = time.monotonic()
        t = Tkcall("Git/Status", "-t", "%ds" % CALL_S, "-d",
                   json.dumps({"repo": self.c.repo}))
        self.undo.append(t.kill)
        self.assertIs(netfleet.node_of(self.f, h.entered(t)), self.c)
        self.c.link(False)
        self.undo.append(self.link_back)
        with client("ab") as c:
            self.others_serve(c)
        rc, _, err = t.wait()
        took = time.monotonic() - t0
        say("tkcall: link down: exit %d after %.1f s" % (rc, took))
        self.assertEqual(rc, tk.Code.UNAVAILABLE, err)
        st = status_json(err)
        self.assertIn("stopped answering", st["message"])
        self.assertIn("whether it ran is unknown", st["message"])
        self.assertEqual(node_named(err), ["nc"], err)
        self.assertGreaterEqual(took, PROBE_S)
        self.assertLess(took, CALL_S - 5, "not ended by the probe")

    def test_link_up_probes_answered_negative_control(self) -> None:
        # The same held call with the link up: the client's probes (Pings
        # on its connection) are answered, inline, and the call runs on
        # until its git is released.
        with client() as c:
            mark = self.c.running().mark("stderr")
            call, h = self.held_status(c)
            done = threading.Event()

            def wait_status() -> None:
                call.status()
                done.set()
            threading.Thread(target=wait_status, daemon=True).start()
            self.c.running().wait_until(
                lambda err: err[mark:].count("tk.v1.Control/Ping") >= 2,
                "two probes logged on c", timeout=CALL_S)
            self.assertFalse(done.is_set())
            h.release()
            st = call.status(timeout=CALL_S)
        self.assertTrue(st.ok, st)
        self.assertEqual(st.node, "nc")


if __name__ == "__main__":
    why = netfleet.needs()
    if why is not None:
        print("SKIP: " + why)
        sys.exit(77)
    try:
        unittest.main(verbosity=2)
    finally:
        if FLEET is not None:  # interrupted (SIGTERM): no tearDownModule
            FLEET.close()
