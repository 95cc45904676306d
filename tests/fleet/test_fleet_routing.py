# SPDX-License-Identifier: MIT
"""The Python client's routing in a fleet (client/python/tk/_fleet.py and
tk.Client's table, DESIGN.md "Scaling out"), with no tkd: first the
decisions on a table alone, then a client against fake nodes, bare NNG
REP sockets that answer ListNodes with a table naming one another and
record every request they get. The fakes serve plain tcp:// (the routing
is the same over tls+tcp://, which test_fleet_py.py runs on real tkd;
which rows a client dials at all, and the names their certificates must
carry: tests/security/test_fleet_trust.py). Waits are on what the fakes
receive, never sleeps.
"""

from __future__ import annotations

import ctypes
import faulthandler
import signal
import socket
import threading
import time
import typing
import unittest
from ctypes import byref, c_void_p

import repsock
import tkproc

import tk
from tk import _fleet, _nng
from tk.v1 import control_pb2, git_pb2, rpc_pb2, search_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)


_lib = repsock.lib


# ---- the decisions, on a table alone ----

class N:
    """A node as routing reads it."""

    def __init__(self, node_id: str, *roots: str, draining: bool = False,
                 down: bool = False) -> None:
        self.id, self.roots = node_id, roots
        self.draining, self.down = draining, down


def rev_parse(repo: str) -> git_pb2.GitRevParseRequest:
    return git_pb2.GitRevParseRequest(repo=repo, rev="HEAD")


class TestDecisions(unittest.TestCase):
    def route(self, nodes: typing.Sequence[N], method: str,
              request: typing.Any = None, named: typing.Optional[str] = None,
              rr: int = 0, tried: typing.Sequence[N] = ()
              ) -> typing.Tuple[typing.Optional[str], int,
                                typing.Optional[tk.Status]]:
        path = _fleet.path_of(method, request) if not named else None
        i, rr, st = _fleet.route(nodes, method, path, named, rr, tried)
        return (nodes[i].id if i is not None else None), rr, st

    def test_root_holds_whole_components(self) -> None:
        h = _fleet.root_holds
        self.assertEqual(h("/srv/a", "/srv/a/r"), 6)
        self.assertEqual(h("/srv/a/", "/srv/a/r"), 6)
        self.assertEqual(h("/srv/a", "/srv/a"), 6)
        self.assertEqual(h("/srv/a", "/srv/ab/r"), 0)  # not by characters
        self.assertEqual(h("/srv/a", "/srv"), 0)
        self.assertEqual(h("/", "/anything"), 1)
        self.assertEqual(h("/srv/a", "srv/a/r"), 0)  # relative: no node's
        self.assertEqual(h("", "/srv"), 0)

    def test_path_fields_from_the_descriptors(self) -> None:
        self.assertEqual(_fleet.path_fields("tk.v1.Git/RevParse"), ("repo",))
        self.assertEqual(_fleet.path_fields("tk.v1.Git/WorktreeAdd"),
                         ("repo", "path"))
        self.assertEqual(_fleet.path_fields("tk.v1.Search/Search"), ("root",))
        self.assertEqual(_fleet.path_fields("tk.v1.Control/Ping"), ())
        self.assertEqual(_fleet.path_fields("tk.v1.Nope/Nothing"), ())
        # The first non-empty one; from a message or its bytes.
        m = "tk.v1.Git/WorktreeAdd"
        self.assertEqual(_fleet.path_of(m, git_pb2.GitWorktreeAddRequest(
            repo="/a", path="/b")), "/a")
        self.assertEqual(_fleet.path_of(m, git_pb2.GitWorktreeAddRequest(
            path="/b").SerializeToString()), "/b")
        self.assertIsNone(_fleet.path_of("tk.v1.Git/RevParse", rev_parse("")))
        self.assertIsNone(_fleet.path_of("tk.v1.Git/RevParse", b"\xff\xff"))

    def test_longest_root_wins(self) -> None:
        nodes = [N("a", "/srv"), N("b", "/srv/b", "/srv/x/y"), N("c", "/srv/x")]
        for path, owner in (("/srv/b/r", "b"), ("/srv/q", "a"),
                            ("/srv/x/y/z", "b"), ("/srv/x/z", "c"),
                            ("/srv/bb", "a")):
            got, _, st = self.route(nodes, "tk.v1.Git/RevParse", rev_parse(path))
            self.assertEqual(got, owner, path)
            self.assertIsNone(st)
        got, _, _ = self.route(nodes, "tk.v1.Search/Search",
                               search_pb2.SearchRequest(root="/srv/x/q"))
        self.assertEqual(got, "c")

    def test_no_node_for_path(self) -> None:
        nodes = [N("a", "/srv/a"), N("b", "/srv/b")]
        for path in ("/elsewhere/r", "/srv/ab", "srv/a/r"):
            got, _, st = self.route(nodes, "tk.v1.Git/RevParse", rev_parse(path))
            self.assertIsNone(got)
            assert st is not None
            self.assertEqual((st.code, st.reason),
                             (tk.Code.NOT_FOUND, "NO_NODE_FOR_PATH"))
            self.assertIn(path, st.message)
            self.assertIn("/srv/b", st.message)  # and what the roots are
            self.assertFalse(st.from_server)
        # No path at all: any node, whose tkd refuses it as it would alone.
        got, _, st = self.route(nodes, "tk.v1.Git/RevParse", rev_parse(""))
        self.assertEqual((got, st), ("a", None))

    def test_owners_down_or_draining(self) -> None:
        # Two owners of one root: the first that can take it, then the
        # other; none left: UNAVAILABLE NO_LIVE_NODE.
        a, b = N("a", "/r"), N("b", "/r")
        self.assertEqual(self.route([a, b], "tk.v1.Git/RevParse",
                                    rev_parse("/r/x"))[0], "a")
        self.assertEqual(self.route([a, b], "tk.v1.Git/RevParse",
                                    rev_parse("/r/x"), tried=[a])[0], "b")
        got, _, st = self.route([N("a", "/r", down=True),
                                 N("b", "/r", draining=True), N("c", "/")],
                                "tk.v1.Git/RevParse", rev_parse("/r/x"))
        self.assertIsNone(got)  # not c: its root is shorter
        assert st is not None
        self.assertEqual((st.code, st.reason),
                         (tk.Code.UNAVAILABLE, "NO_LIVE_NODE"))
        self.assertIn("a (down)", st.message)
        self.assertIn("b (draining)", st.message)

    def test_round_robin(self) -> None:
        nodes = [N("a"), N("b", down=True), N("c"), N("d", draining=True),
                 N("e")]
        rr, seen = 0, []
        for _ in range(6):
            got, rr, st = self.route(nodes, "tk.v1.Control/Ping", rr=rr)
            self.assertIsNone(st)
            seen.append(got)
        self.assertEqual(seen, ["a", "c", "e", "a", "c", "e"])
        for method in ("tk.v1.Orders/AddItem", "tk.test.Test/Wait"):
            self.assertEqual(self.route(nodes, method, rr=1)[0], "c")
        got, _, st = self.route(nodes, "tk.v1.Control/Ping",
                                tried=[nodes[0], nodes[2], nodes[4]])
        self.assertIsNone(got)
        assert st is not None
        self.assertEqual((st.code, st.reason),
                         (tk.Code.UNAVAILABLE, "NO_LIVE_NODE"))

    def test_services_need_a_node(self) -> None:
        m = "tk.v1.Services/Status"
        got, _, st = self.route([N("a"), N("b")], m)
        self.assertIsNone(got)
        assert st is not None
        self.assertEqual((st.code, st.reason),
                         (tk.Code.INVALID_ARGUMENT, "NODE_REQUIRED"))
        self.assertEqual(self.route([N("a"), N("b")], m, named="b")[0], "b")
        self.assertEqual(self.route([N("only")], m)[0], "only")

    def test_a_named_node_overrides(self) -> None:
        nodes = [N("a", "/srv/a"), N("b", "/srv/b", down=True)]
        self.assertEqual(self.route(nodes, "tk.v1.Git/RevParse",
                                    rev_parse("/srv/a/r"), named="b")[0], "b")
        got, _, st = self.route(nodes, "tk.v1.Control/Ping", named="zz")
        self.assertIsNone(got)
        assert st is not None
        self.assertEqual((st.code, st.reason), (tk.Code.NOT_FOUND, "UNKNOWN_NODE"))
        self.assertIn('"zz"', st.message)

    def test_which_rows_are_dialed(self) -> None:
        """A row is dialed over the transport the client came in on, and
        only with an id a tkd could have; its certificate must name the id
        (tests/security/test_fleet_trust.py runs these on real tkd)."""
        tls, tcp = (_fleet.link_of("tls+tcp://h:1"), _fleet.link_of("tcp://h:1"))
        self.assertEqual((tls, tcp), ("tls+tcp://", "tcp://"))
        self.assertEqual(_fleet.link_of("tls+tcp6://[::1]:1"), "tls+tcp://")
        self.assertIsNone(_fleet.link_of("ws://h:1/x"))
        self.assertIsNone(_fleet.refusal(tls, "a", "tls+tcp://h:1"))
        self.assertIsNone(_fleet.refusal(tcp, "a", "tcp://h:1"))
        for link, addr in ((tls, "tcp://h:1"), (tls, "ipc:///tmp/x.sock"),
                           (tls, "tls+tcp6://[::1]:1"), (tls, "ws://h:1/"),
                           (tcp, "tls+tcp://h:1"), (tcp, "ipc:///tmp/x.sock"),
                           (None, "tls+tcp://h:1")):
            why = _fleet.refusal(link, "a", addr)
            assert why is not None, (link, addr)
            self.assertIn(addr, why)
        for bad in ("", "a b", "a/b", "*", "x" * 65, "é"):
            self.assertIsNotNone(_fleet.refusal(tls, bad, "tls+tcp://h:1"), bad)
        self.assertEqual(_fleet.node_name("web-1.eu"),
                         "web-1.eu.tk-node.invalid")


# ---- a client against fake nodes ----

def free_tcp_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "tcp://127.0.0.1:%d" % s.getsockname()[1]


class FakeNode:
    """A bare REP socket on url playing tkd node_id: it answers ListNodes
    with table, Ping with its id as data, Cancel CANCELLED, CallState
    NOT_FOUND, anything else OK with an empty reply; unless behave says
    of the method "hold" (no answer: a REP socket then takes the next
    request) or "drop" (it closes the connection the request came on), or
    mute is set (it answers nothing)."""

    def __init__(self, node_id: str, url: str) -> None:
        self.id, self.url = node_id, url
        self.table: typing.Optional[control_pb2.ListNodesReply] = None
        self.behave: typing.Dict[str, str] = {}
        self.mute = False
        self.seen: typing.List[rpc_pb2.Request] = []
        self._cv = threading.Condition()
        self.sock = repsock.rep_socket(url, 50)
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def methods(self) -> typing.List[str]:
        with self._cv:
            return [r.method for r in self.seen]

    def count(self, method: str) -> int:
        return self.methods().count(method)

    def wait_for(self, method: str, n: int = 1, timeout: float = 20) -> rpc_pb2.Request:
        """The n-th request for method, once it has come."""
        with self._cv:
            ok = self._cv.wait_for(lambda: sum(r.method == method
                                               for r in self.seen) >= n, timeout)
            if not ok:
                raise AssertionError("node %s: no %d %s within %.0f s; saw %s"
                                     % (self.id, n, method, timeout,
                                        [r.method for r in self.seen]))
            return [r for r in self.seen if r.method == method][n - 1]

    def _serve(self) -> None:
        while not self._stop:
            msg = c_void_p()
            rv = _lib.nng_recvmsg(self.sock, byref(msg), 0)
            if rv == _nng.ETIMEDOUT:
                continue
            if rv != 0:
                return
            data = ctypes.string_at(_lib.nng_msg_body(msg), _lib.nng_msg_len(msg))
            req = rpc_pb2.Request.FromString(data)
            with self._cv:
                self.seen.append(req)
                self._cv.notify_all()
            action = "hold" if self.mute else self.behave.get(req.method, "")
            if action == "drop":
                _lib.nng_pipe_close(_lib.nng_msg_get_pipe(msg))
            _lib.nng_msg_free(msg)
            if action:
                continue
            payload = b""
            if req.method == "tk.v1.Control/ListNodes" and self.table is not None:
                payload = self.table.SerializeToString()
            elif req.method == "tk.v1.Control/Ping":
                payload = control_pb2.PingReply(
                    data=self.id.encode(), server_version="fake").SerializeToString()
            elif req.method == "tk.v1.Control/Cancel":
                payload = control_pb2.CancelReply(
                    outcome=control_pb2.CancelReply.CANCELLED).SerializeToString()
            elif req.method == "tk.v1.Control/CallState":
                payload = control_pb2.CallStateReply(
                    state=control_pb2.CallStateReply.NOT_FOUND).SerializeToString()
            out = rpc_pb2.Reply(call_id=req.call_id, status=rpc_pb2.Status(),
                                payload=payload).SerializeToString()
            reply = c_void_p()
            assert _lib.nng_msg_alloc(byref(reply), len(out)) == 0
            ctypes.memmove(_lib.nng_msg_body(reply), out, len(out))
            if _lib.nng_sendmsg(self.sock, reply, 0) != 0:
                _lib.nng_msg_free(reply)

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        _nng.close(self.sock)


class FleetCase(unittest.TestCase):
    """Fakes a (the address the client opens with), b and c, on tcp://
    (the client dials a fleet's nodes over the transport it came in on),
    with roots, and every one of them answering ListNodes with the table."""

    roots = {"a": ["/srv/a"], "b": ["/srv/b", "/srv/dup"],
             "c": ["/srv/dup", "/srv/c"]}

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("fr")
        self.fakes: typing.Dict[str, FakeNode] = {}
        for nid in sorted(self.roots):
            self.fakes[nid] = FakeNode(nid, free_tcp_url())
        self.set_table()
        self.client = tk.Client(self.fakes["a"].url)

    def set_table(self, extra: typing.Sequence[control_pb2.NodeInfo] = ()) -> None:
        table = control_pb2.ListNodesReply(self_id="a", ttl_ms=60000)
        for nid in sorted(self.roots):
            table.nodes.add(node_id=nid, address=self.fakes[nid].url,
                            roots=self.roots[nid], version="fake")
        table.nodes.extend(extra)
        for f in self.fakes.values():
            f.table = table

    def tearDown(self) -> None:
        self.client.close()
        for f in self.fakes.values():
            f.close()
        self.dir.cleanup()

    def carried_by(self, call: tk.Call[typing.Any]) -> typing.List[str]:
        """Which fakes got call's request (by method and id)."""
        return [nid for nid, f in sorted(self.fakes.items())
                if any(r.call_id == call.call_id and r.method == call.method
                       for r in f.seen)]


class TestFleetClient(FleetCase):
    def test_reads_the_table_at_open(self) -> None:
        self.assertTrue(self.client.fleet)
        self.assertEqual([n.node_id for n in self.client.nodes()], ["a", "b", "c"])
        self.assertEqual(self.fakes["a"].count("tk.v1.Control/ListNodes"), 1)

    def reads(self) -> int:
        return sum(f.count("tk.v1.Control/ListNodes")
                   for f in self.fakes.values())

    def test_the_table_is_read_again_after_its_ttl(self) -> None:
        # 60 s: not within these calls (the negative control).
        for _ in range(4):
            self.client.control.ping()
        self.assertEqual(self.reads(), 1)
        # A table whose TTL is 50 ms, read: once that has passed, the next
        # call reads the table again first. (Time is what is tested: no
        # event says a TTL has passed.)
        for f in self.fakes.values():
            assert f.table is not None
            f.table.ttl_ms = 50
        self.client._read_at = None
        self.client.control.ping()
        self.assertEqual(self.reads(), 2)
        time.sleep(0.2)
        self.client.control.ping()
        self.assertEqual(self.reads(), 3)

    def test_git_goes_to_the_owner(self) -> None:
        for repo, owner in (("/srv/b/r", "b"), ("/srv/c/d/e", "c"),
                            ("/srv/a", "a"), ("/srv/dup/r", "b")):
            call = self.client.git.start_rev_parse(repo=repo, rev="HEAD")
            st = call.status()
            self.assertTrue(st.ok, st)
            self.assertEqual(st.node, owner)
            self.assertEqual(self.carried_by(call), [owner])
        call = self.client.search.start_search(root="/srv/c", query="x")
        self.assertEqual(call.status().node, "c")

    def test_no_node_for_path(self) -> None:
        before = {nid: len(f.methods()) for nid, f in self.fakes.items()}
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.rev_parse(repo="/srv/nobody/r", rev="HEAD")
        e = cm.exception
        self.assertEqual((e.code, e.reason), (tk.Code.NOT_FOUND, "NO_NODE_FOR_PATH"))
        self.assertIn("/srv/nobody/r", e.message)
        self.assertEqual(e.node, "")
        self.assertFalse(e.from_server)
        self.assertEqual({nid: len(f.methods()) for nid, f in self.fakes.items()},
                         before)  # sent nowhere

    def test_round_robin_of_ping(self) -> None:
        got = [self.client.control.start_ping(data=b"x") for _ in range(6)]
        answered = [c.result().data.decode() for c in got]
        self.assertEqual(sorted(answered), ["a", "a", "b", "b", "c", "c"])
        self.assertEqual(answered[:3], answered[3:])
        self.assertEqual([c.status().node for c in got], answered)

    def test_services_need_a_node(self) -> None:
        with self.assertRaises(tk.TkError) as cm:
            self.client.services.status(label="web")
        self.assertEqual((cm.exception.code, cm.exception.reason),
                         (tk.Code.INVALID_ARGUMENT, "NODE_REQUIRED"))
        call = self.client.services.start_status(label="web", node="c")
        self.assertEqual(call.status().node, "c")
        self.assertEqual(self.carried_by(call), ["c"])
        with self.assertRaises(tk.TkError) as cm:
            self.client.control.ping(node="zz")
        self.assertEqual((cm.exception.code, cm.exception.reason),
                         (tk.Code.NOT_FOUND, "UNKNOWN_NODE"))
        # node= overrides the path's owner.
        call = self.client.git.start_rev_parse(repo="/srv/b/r", node="a")
        self.assertEqual((call.status().node, self.carried_by(call)), ("a", ["a"]))

    def test_cancel_goes_to_the_calls_node(self) -> None:
        self.fakes["c"].behave["tk.v1.Git/Status"] = "hold"
        call = self.client.git.start_status(repo="/srv/c/r", timeout=30)
        held = self.fakes["c"].wait_for("tk.v1.Git/Status")
        self.assertEqual(held.call_id, call.call_id)
        self.assertEqual(call.cancel(), tk.CancelOutcome.CANCELLED)
        cancel = self.fakes["c"].wait_for("tk.v1.Control/Cancel")
        self.assertEqual(control_pb2.CancelRequest.FromString(cancel.payload).call_id,
                         call.call_id)
        for nid in ("a", "b"):
            self.assertEqual(self.fakes[nid].count("tk.v1.Control/Cancel"), 0)

    def test_a_node_that_does_not_connect_is_skipped(self) -> None:
        # d is in the table, but nothing listens at its address.
        dead = control_pb2.NodeInfo(node_id="d", address=free_tcp_url(),
                                    roots=["/srv/d"])
        self.set_table([dead])
        self.client._read_at = None  # as if the TTL had passed
        self.client.control.ping()  # reads the table
        self.assertEqual([n.node_id for n in self.client.nodes()],
                         ["a", "b", "c", "d"])
        reads = self.fakes["a"].count("tk.v1.Control/ListNodes") + \
            self.fakes["b"].count("tk.v1.Control/ListNodes") + \
            self.fakes["c"].count("tk.v1.Control/ListNodes")
        answered = [self.client.control.ping().data.decode() for _ in range(8)]
        self.assertNotIn("d", answered)
        self.assertEqual(set(answered), {"a", "b", "c"})
        # d failed to connect: the table was read again at once.
        again = self.fakes["a"].count("tk.v1.Control/ListNodes") + \
            self.fakes["b"].count("tk.v1.Control/ListNodes") + \
            self.fakes["c"].count("tk.v1.Control/ListNodes")
        self.assertGreater(again, reads)
        # A Git call for d's root was not sent: UNAVAILABLE, and says so.
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.rev_parse(repo="/srv/d/r")
        self.assertEqual(cm.exception.code, tk.Code.UNAVAILABLE)
        self.assertIn("not sent", cm.exception.message)
        self.assertEqual(cm.exception.node, "d")

    def test_a_node_that_never_completes_the_dial_is_skipped(self) -> None:
        """s accepts TCP connections (the kernel does) but never speaks,
        as a stopped tkd: its dial is given NODE_CONNECT_MS, then the
        call goes on to the next node."""
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            url = "tcp://127.0.0.1:%d" % listener.getsockname()[1]
            self.set_table([control_pb2.NodeInfo(node_id="s", address=url)])
            self.client._read_at = None
            self.client._rr = 0
            self.client.control.ping()  # reads the table (a)
            t0 = time.monotonic()
            # (30 s: more than the bound, which the deadline includes)
            answered = [self.client.control.ping(timeout=30).data.decode()
                        for _ in range(4)]
            took = time.monotonic() - t0
        self.assertEqual(answered, ["b", "c", "a", "b"])  # s skipped
        self.assertGreaterEqual(took, tk.client.NODE_CONNECT_MS / 1000 - 0.1)
        self.assertLess(took, 30)

    def test_retry_reads(self) -> None:
        """b drops the connection of every Git call (as a node that dies
        with the call in flight); /srv/dup is on b and c. A READ with
        retry_reads goes on to c; without, it is UNAVAILABLE from b; a
        WRITE never goes on (the negative controls)."""
        for method in ("tk.v1.Git/Status", "tk.v1.Git/Commit"):
            self.fakes["b"].behave[method] = "drop"
        st = self.client.git.start_status(repo="/srv/dup/r").status()
        self.assertEqual(st.code, tk.Code.UNAVAILABLE)
        self.assertIn("whether it ran is unknown", st.message)
        self.assertEqual(st.node, "b")
        self.assertEqual(self.fakes["c"].count("tk.v1.Git/Status"), 0)

        self.client._read_at = None  # b is back once the table says so
        call = self.client.git.start_status(repo="/srv/dup/r", retry_reads=True)
        st = call.status()
        self.assertTrue(st.ok, st)
        self.assertEqual(st.node, "c")
        self.assertEqual(self.fakes["b"].count("tk.v1.Git/Status"), 2)
        self.assertEqual(self.fakes["c"].count("tk.v1.Git/Status"), 1)
        self.assertEqual(self.carried_by(call), ["c"])

        self.client._read_at = None
        st = self.client.git.start_commit(repo="/srv/dup/r", message="m",
                                          retry_reads=True).status()
        self.assertEqual(st.code, tk.Code.UNAVAILABLE)
        self.assertEqual(st.node, "b")
        self.assertEqual(self.fakes["b"].count("tk.v1.Git/Commit"), 1)
        self.assertEqual(self.fakes["c"].count("tk.v1.Git/Commit"), 0)

    def test_probe_of_a_node_that_stopped_answering(self) -> None:
        """c takes the call and then answers nothing, Pings included: the
        call ends UNAVAILABLE after NODE_PROBE_MS and the Ping's 5 s, well
        before its 60 s deadline. The negative control: c holds the call
        but answers the Ping, and the call goes on to its deadline."""
        f = self.fakes["c"]
        f.behave["tk.v1.Git/Status"] = "hold"
        t0 = time.monotonic()
        call = self.client.git.start_status(repo="/srv/c/r", timeout=60)
        f.wait_for("tk.v1.Git/Status")
        f.mute = True
        st = call.status()
        took = time.monotonic() - t0
        self.assertEqual(st.code, tk.Code.UNAVAILABLE, st)
        self.assertIn("node c at %s stopped answering" % f.url, st.message)
        self.assertIn("whether it ran is unknown", st.message)
        self.assertEqual(st.node, "c")
        self.assertEqual(f.count("tk.v1.Control/Ping"), 1)
        self.assertGreaterEqual(took, (tk.client.NODE_PROBE_MS / 1000)
                                + tk.client.NODE_PING_TIMEOUT - 0.1)
        self.assertLess(took, 30)

        f.mute = False
        self.client._read_at = None  # c is back
        call = self.client.git.start_status(repo="/srv/c/r", timeout=6)
        st = call.status()
        self.assertEqual(st.code, tk.Code.DEADLINE_EXCEEDED, st)
        self.assertEqual(f.count("tk.v1.Control/Ping"), 2)  # answered


class TestDial(unittest.TestCase):
    def test_threads_waiting_on_a_failing_dial_take_its_answer(self) -> None:
        """Three threads connect to one node that never completes the dial:
        one waits NODE_CONNECT_MS, the others take its answer, and all fail
        within about one bound, not three in a row."""
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            url = "tcp://127.0.0.1:%d" % listener.getsockname()[1]
            node = tk.client._Node("s", url, _nng.TlsFiles(None, None, None, None))
            errors: typing.List[_nng.NngError] = []

            def connect() -> None:
                try:
                    node.connect()
                except _nng.NngError as e:
                    errors.append(e)

            t0 = time.monotonic()
            threads = [threading.Thread(target=connect) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.monotonic() - t0
            node.close()
        self.assertEqual(len(errors), 3)
        self.assertTrue(all(e.errno == _nng.ETIMEDOUT for e in errors), errors)
        bound = tk.client.NODE_CONNECT_MS / 1000
        self.assertGreaterEqual(took, bound - 0.1)
        self.assertLess(took, 2 * bound)


class TestWithoutFleet(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tkproc.tempdir("fr")

    def tearDown(self) -> None:
        self.dir.cleanup()

    def test_ipc_never_asks(self) -> None:
        f = FakeNode("a", "ipc://%s/a.sock" % self.dir.name)
        f.table = control_pb2.ListNodesReply(self_id="a", nodes=[
            control_pb2.NodeInfo(node_id="a", address=f.url)])
        try:
            with tk.Client(f.url) as c:
                self.assertFalse(c.fleet)
                st = c.control.start_ping().status()
                self.assertEqual(st.node, "")
                with self.assertRaises(tk.TkError) as cm:
                    c.control.ping(node="a")
                self.assertEqual(cm.exception.reason, "UNKNOWN_NODE")
            self.assertEqual(f.methods(), ["tk.v1.Control/Ping"])
        finally:
            f.close()

    def test_no_nodes_is_one_tkd(self) -> None:
        f = FakeNode("a", free_tcp_url())  # answers ListNodes with none
        try:
            with tk.Client(f.url) as c:
                self.assertFalse(c.fleet)
                self.assertEqual(c.control.ping(data=b"x").data, b"a")
            self.assertEqual(f.methods(), ["tk.v1.Control/ListNodes",
                                           "tk.v1.Control/Ping"])
        finally:
            f.close()

    def test_the_first_address_that_connects(self) -> None:
        f = FakeNode("b", "ipc://%s/b.sock" % self.dir.name)
        try:
            nobody = "ipc://%s/nobody.sock" % self.dir.name
            with tk.Client(nobody + "," + f.url) as c:
                self.assertEqual(c.address, f.url)
                self.assertEqual(c.control.ping().data, b"b")
            with self.assertRaises(ValueError):
                tk.Client(nobody + ",")
            with self.assertRaises(tk.TkError) as cm:
                tk.Client(nobody + "," + nobody)
            self.assertEqual(cm.exception.code, tk.Code.UNAVAILABLE)
        finally:
            f.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
