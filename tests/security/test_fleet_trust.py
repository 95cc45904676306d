# SPDX-License-Identifier: MIT
"""A fleet's clients trust a row of tk_nodes no more than the link they
came in on (issue 31, part 5; DESIGN.md "Scaling out", "What a writer of
the database can do"). Anyone who can write the fleet's PostgreSQL can
write a row (every node can): these are the rows the issue wrote, against
real tkd nodes on 127.0.0.1 tls+tcp:// (certificates from the openssl CLI,
each node's naming its id), one private PostgreSQL (tools/pg-cluster), and
the two clients that route by the table, tkcall (libtkclient) and the
Python client. (The TypeScript client does not route: it calls the node
it dials.)

1. A row with a tcp:// or ipc:// address, where a fake REP server answers
   a forged OK, is never dialed by a client that came in over tls+tcp://:
   UNAVAILABLE NODE_REFUSED naming the address, and the fake got no
   connection. Control: dialed by the caller's own choice, the fake gets
   the Commit and its forged OK is printed, as in the issue.
2. A node's certificate must name its id: a row that points an id at
   another node's address is refused (that node gets nothing), and so is
   a real node whose certificate names only its host. Control: the node
   whose certificate names it answers.
3. A heartbeat in the future is not live: the issue's row (now() + 1 hour)
   is in no ListNodes, routes nothing, and holds no id against a tkd that
   claims it. Control: a live heartbeat holds its id.
4. A row whose instance changed under a running node (its id taken and
   pointed at another node): that node logs an error, stops advertising
   (ListNodes MEMBERSHIP_STALE at once; it never writes the row again) and
   clients see MEMBERSHIP_STALE or a refusal, never the new address.
5. DESIGN.md says what a writer of the database can and cannot do, each
   claim naming the test here that shows it.

Each failed on main at 31f2572. Skips (exit 77) where there is no
PostgreSQL 15, no openssl, psql or git, or no TLS in the NNG tkd is
linked with. Waits are on tkd's log, the database and what the fakes
receive, never on sleeps.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import unittest
from ctypes import byref, c_void_p
from typing import Any, Callable, Dict, List, Optional, Tuple

import repsock
import tkproc
from certs import CLIENT_EXT, make_ca, make_cert, node_ext
from fleetfx import (Cluster, free_port, need_programs, need_tls,
                     start_tkd)

import tk
from tk import _nng
from tk.v1 import git_pb2, rpc_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0
HEARTBEAT_MS = 200
# Long: a forged row written with now() stays live for the whole test.
TTL_MS = 60000
FORGED_OID = "deadbeef" * 5
TKCALL = tkproc.program("TKCALL")
_lib = repsock.lib

CLUSTER: Optional[Cluster] = None


def setUpModule() -> None:
    global CLUSTER
    need_programs("openssl", "psql", "git")
    need_tls()
    CLUSTER = Cluster()


def tearDownModule() -> None:
    if CLUSTER is not None:
        CLUSTER.close()


def wait_for(pred: Callable[[], bool], what: str) -> None:
    """Polls pred (a state of the database or a process) until it holds."""
    until = time.monotonic() + WAIT_S
    while not pred():
        if time.monotonic() > until:
            raise AssertionError("%s: not within %.0f s" % (what, WAIT_S))
        time.sleep(0.02)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def make_repo(path: str) -> str:
    """A repository with one commit and an untracked secret.txt; its HEAD."""
    os.makedirs(path)
    git(path, "init", "-q")
    git(path, "config", "user.name", "tk")  # tkd's git sees no GIT_AUTHOR_*
    git(path, "config", "user.email", "tk@example.invalid")
    with open(os.path.join(path, "a.txt"), "w", encoding="utf-8") as f:
        f.write("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "one")
    with open(os.path.join(path, "secret.txt"), "w", encoding="utf-8") as f:
        f.write("the secret\n")
    return git(path, "rev-parse", "HEAD")


class FakeRep:
    """A bare REP socket at url that is no tkd: it counts the connections
    it ever had, records every request, and answers ListNodes with no
    nodes and anything else with a forged OK (a GitCommitReply of
    FORGED_OID), as the issue's fake did."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connections = 0
        self.requests: List[rpc_pb2.Request] = []
        self._mu = threading.Lock()
        self.sock = _nng.Socket()
        assert _lib.nng_rep0_open(byref(self.sock)) == 0
        assert _lib.nng_socket_set_ms(self.sock, b"recv-timeout", 50) == 0
        self._on_pipe = _nng.PIPE_CALLBACK(self._pipe)
        assert _lib.nng_pipe_notify(self.sock, _nng.PIPE_EV_ADD_PRE,
                                    self._on_pipe, None) == 0
        assert _lib.nng_listen(self.sock, url.encode(), None, 0) == 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _pipe(self, _pipe: int, _event: int, _arg: Optional[int]) -> None:
        with self._mu:
            self.connections += 1

    def seen(self) -> Tuple[int, List[str]]:
        """(connections ever, the methods of the requests received)."""
        with self._mu:
            return self.connections, [r.method for r in self.requests]

    def _serve(self) -> None:
        while not self._stop:
            msg = c_void_p()
            rv = _lib.nng_recvmsg(self.sock, byref(msg), 0)
            if rv == _nng.ETIMEDOUT:
                continue
            if rv != 0:
                return
            data = ctypes.string_at(_lib.nng_msg_body(msg),
                                    _lib.nng_msg_len(msg))
            _lib.nng_msg_free(msg)
            req = rpc_pb2.Request.FromString(data)
            with self._mu:
                self.requests.append(req)
            payload = b""
            if req.method != "tk.v1.Control/ListNodes":
                payload = git_pb2.GitCommitReply(
                    oid=FORGED_OID).SerializeToString()
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


class Result:
    """A tkcall -v run: exit status, stdout, and from stderr the node that
    carried the call and the status (JSON) of one that was not OK."""

    def __init__(self, rc: int, out: str, err: str) -> None:
        self.rc, self.out, self.err = rc, out, err
        calls = err.split("tkcall: method ")
        m = re.search(r"^tkcall: node +(\S+)$", calls[-1], re.M)
        self.node = m.group(1) if m else ""
        m = re.search(r"^(\{\"code\".*\})$", err, re.M)
        self.status: Dict[str, Any] = json.loads(m.group(1)) if m else {}

    def __repr__(self) -> str:
        return "rc=%d node=%r out=%r err=%r" % (self.rc, self.node, self.out,
                                                self.err)


class Node:
    def __init__(self, node_id: str, address: str, root: str,
                 daemon: tkproc.Daemon) -> None:
        self.node_id, self.address, self.root, self.d = (
            node_id, address, root, daemon)


class FleetTrust(unittest.TestCase):
    db_serial = 0
    pki: tempfile.TemporaryDirectory[str]
    ca: Tuple[str, str]
    alice: Tuple[str, str]
    certs: Dict[str, Tuple[str, str]]

    @classmethod
    def setUpClass(cls) -> None:
        cls.pki = tkproc.tempdir("ftpki")
        d = cls.pki.name
        cls.ca = make_ca(d, "ca")
        cls.alice = make_cert(d, "alice", cls.ca, CLIENT_EXT)
        # A node's certificate names its host (the URL's) and its id; c's
        # names only its host, as every node's did before issue 31.
        cls.certs = {i: make_cert(d, "node-" + i, cls.ca, node_ext(i))
                     for i in ("a", "b", "f")}
        cls.certs["c"] = make_cert(d, "node-c", cls.ca, (
            "subjectAltName=DNS:localhost,DNS:127.0.0.1,IP:127.0.0.1\n"
            "extendedKeyUsage=serverAuth\n"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.pki.cleanup()

    def setUp(self) -> None:
        assert CLUSTER is not None
        self.pg = CLUSTER
        self.tmp = tkproc.tempdir("ft")
        FleetTrust.db_serial += 1
        self.db = "trust%d" % FleetTrust.db_serial
        self.pg.sql("tk", "DROP DATABASE IF EXISTS %s" % self.db)
        self.pg.sql("tk", "CREATE DATABASE %s" % self.db)
        self.dsn = self.pg.dsn_of(self.db)
        self.nodes: List[Node] = []
        self.fakes: List[FakeRep] = []
        self.clients: List[tk.Client] = []
        self.env = dict(os.environ, HOME=self.tmp.name,
                        XDG_CONFIG_HOME=self.tmp.name, GIT_CONFIG_NOSYSTEM="1",
                        TK_TLS_CA=self.ca[0], TK_TLS_CERT=self.alice[0],
                        TK_TLS_KEY=self.alice[1])
        for k, v in (("GIT_AUTHOR_NAME", "tk"), ("GIT_COMMITTER_NAME", "tk"),
                     ("GIT_AUTHOR_EMAIL", "tk@example.invalid"),
                     ("GIT_COMMITTER_EMAIL", "tk@example.invalid"),
                     ("HOME", self.tmp.name), ("GIT_CONFIG_NOSYSTEM", "1")):
            os.environ[k] = v
            self.env[k] = v

    def tearDown(self) -> None:
        for c in self.clients:
            c.close()
        for n in self.nodes:
            n.d.stop()
        for f in self.fakes:
            f.close()
        self.tmp.cleanup()
        # A sanitizer's report in any node fails the test (its build's).
        for n in self.nodes:
            log = n.d.output("stderr")
            self.assertIsNone(re.search(r"Sanitizer|runtime error:", log),
                              "node %s: %s" % (n.node_id, log))

    # ---- helpers --------------------------------------------------------

    def argv(self, node_id: str, port: int, root: str, cert: str) -> List[str]:
        addr = "tls+tcp://127.0.0.1:%d" % port
        return [tkproc.program("TKD"), "--listen", addr,
                "--tls-cert", self.certs[cert][0],
                "--tls-key", self.certs[cert][1], "--tls-ca", self.ca[0],
                "--node-id", node_id, "--advertise", addr, "--pg", self.dsn,
                "--root", root, "--heartbeat-ms", str(HEARTBEAT_MS),
                "--node-ttl-ms", str(TTL_MS), "--log-level", "info"]

    def start(self, node_id: str, cert: Optional[str] = None) -> Node:
        """tkd node node_id (with the certificate of cert, by default its
        own), once it listens."""
        root = os.path.join(self.tmp.name, "root-" + node_id)
        os.makedirs(root, exist_ok=True)
        d, port = start_tkd(lambda port: self.argv(node_id, port, root,
                                                   cert or node_id), self.env)
        n = Node(node_id, "tls+tcp://127.0.0.1:%d" % port, root, d)
        self.nodes.append(n)
        return n

    def fake(self, url: str) -> FakeRep:
        f = FakeRep(url)
        self.fakes.append(f)
        return f

    def client(self, n: Node) -> tk.Client:
        c = tk.Client(n.address, tls_ca=self.ca[0], tls_cert=self.alice[0],
                      tls_key=self.alice[1])
        self.clients.append(c)
        return c

    def sql(self, query: str) -> str:
        return self.pg.sql(self.db, query)

    def forge(self, *rows: Tuple[str, str, str, str]) -> None:
        """Rows written as anyone with the database's write access could:
        (node_id, address, root, heartbeat_at as SQL), one statement."""
        values = ", ".join(
            "('%s', '%s', ARRAY['%s'], 'forged', 'forged', %s)" % row
            for row in rows)
        self.sql("INSERT INTO tk_nodes (node_id, address, roots, version, "
                 "instance, heartbeat_at) VALUES " + values)

    @staticmethod
    def joined(observer: Node, node_id: str, address: str = "") -> None:
        """Until observer's reading of the table shows node_id (logged)."""
        observer.d.wait_output("fleet: node %s joined at %s"
                               % (node_id, address), "stderr")

    def tkcall(self, addr: str, *args: str) -> Result:
        p = subprocess.run([TKCALL, "-v", "--addr", addr] + list(args),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120,
                           env=self.env)
        return Result(p.returncode, p.stdout, p.stderr)

    def commit(self, addr: str, repo: str) -> Result:
        return self.tkcall(addr, "-d", json.dumps(
            {"repo": repo, "message": "secret message", "paths":
             ["secret.txt"]}), "tk.v1.Git/Commit")

    def rev_parse(self, addr: str, repo: str) -> Result:
        return self.tkcall(addr, "-d", json.dumps({"repo": repo, "rev": "HEAD"}),
                           "tk.v1.Git/RevParse")

    def assert_refused(self, r: Result, node: str, words: str) -> None:
        """tkcall's call was not sent: UNAVAILABLE from node, saying
        words."""
        self.assertEqual(r.rc, 14, r)
        self.assertEqual(r.node, node, r)
        self.assertFalse(r.status.get("fromServer", False), r)
        self.assertIn(words, str(r.status.get("message")), r)
        self.assertIn("the call was not sent", str(r.status.get("message")), r)

    def assert_py_refused(self, call: Callable[[], object], node: str,
                          words: str) -> tk.TkError:
        with self.assertRaises(tk.TkError) as cm:
            call()
        e = cm.exception
        self.assertEqual((e.code, e.node), (tk.Code.UNAVAILABLE, node), e)
        self.assertFalse(e.from_server, e)
        self.assertIn(words, e.message)
        self.assertIn("the call was not sent", e.message)
        return e

    def rev_parses(self, n: Node, start: int) -> List[str]:
        """The codes of the RevParse calls n has logged since start."""
        return re.findall(r"call method=tk\.v1\.Git/RevParse code=(\w+)",
                          n.d.output("stderr")[start:])

    # ---- 1. the transport of a row ---------------------------------------

    def test_1_tls_client_never_dials_a_plain_row(self) -> None:
        a = self.start("a")
        repos = {k: os.path.join(a.root, k) for k in ("tcp", "ipc")}
        heads = {k: make_repo(r) for k, r in repos.items()}
        fakes = {"tcp": self.fake("tcp://127.0.0.1:%d" % free_port()),
                 "ipc": self.fake("ipc://%s/fake.sock" % self.tmp.name)}
        # Each row holds one repository of a's, a longer root than a's own:
        # the routing picks it.
        self.forge(*[("evil-" + k, fakes[k].url, repos[k], "now()")
                     for k in ("tcp", "ipc")])
        for k in ("tcp", "ipc"):
            self.joined(a, "evil-" + k, fakes[k].url)
        c = self.client(a)
        for k in ("tcp", "ipc"):
            words = "the table gives node evil-%s the address %s" % (
                k, fakes[k].url)
            r = self.commit(a.address, repos[k])
            self.assert_refused(r, "evil-" + k, words)
            self.assertEqual(r.status.get("reason"), "NODE_REFUSED", r)
            self.assertIn("came in over tls+tcp://", r.status["message"])
            self.assertNotIn(FORGED_OID, r.out)
            e = self.assert_py_refused(
                lambda: c.git.commit(repo=repos[k], message="secret message",
                                     paths=[b"secret.txt"]), "evil-" + k, words)
            self.assertEqual(e.reason, "NODE_REFUSED")
        for k in ("tcp", "ipc"):
            # Nothing reached the fakes; nothing ran anywhere.
            self.assertEqual(fakes[k].seen(), (0, []), k)
            self.assertEqual(git(repos[k], "rev-parse", "HEAD"), heads[k])
            self.assertEqual(git(repos[k], "status", "--porcelain"),
                             "?? secret.txt")
        # The control: dialed by the caller's own choice, the fake gets the
        # Commit (its repository and message in clear) and its forged OK is
        # what the caller sees, as the issue saw it through the forged row.
        r = self.commit(fakes["tcp"].url, repos["tcp"])
        self.assertEqual(r.rc, 0, r)
        self.assertIn(FORGED_OID, r.out)
        n, methods = fakes["tcp"].seen()
        self.assertGreater(n, 0)
        self.assertIn("tk.v1.Git/Commit", methods)
        got = [q for q in fakes["tcp"].requests
               if q.method == "tk.v1.Git/Commit"][0]
        self.assertEqual(git_pb2.GitCommitRequest.FromString(got.payload).message,
                         "secret message")

    # ---- 2. a node's certificate names its id ----------------------------

    def test_2_certificate_must_name_the_node_id(self) -> None:
        a, b, c = self.start("a"), self.start("b"), self.start("c")
        pointed = os.path.join(b.root, "r")  # x's, by the forged row
        own = os.path.join(b.root, "own")  # b's alone
        unnamed = os.path.join(c.root, "r")  # c's, whose certificate lacks c
        heads = {p: make_repo(p) for p in (pointed, own, unnamed)}
        # Another node's address under an id its certificate does not name.
        self.forge(("x", b.address, pointed, "now()"))
        for i, n in (("x", b), ("b", b), ("c", c)):
            self.joined(a, i, n.address)
        mark = b.d.mark("stderr")
        r = self.rev_parse(a.address, pointed)
        self.assert_refused(r, "x", "does not name node x, "
                            "DNS:x.tk-node.invalid")
        self.assertIn(b.address, r.status["message"])
        r = self.rev_parse(a.address, unnamed)
        self.assert_refused(r, "c", "does not name node c, "
                            "DNS:c.tk-node.invalid")
        py = self.client(a)
        self.assert_py_refused(lambda: py.git.rev_parse(repo=pointed, rev="HEAD"),
                               "x", "does not name node x, "
                               "DNS:x.tk-node.invalid")
        self.assert_py_refused(lambda: py.git.rev_parse(repo=unnamed, rev="HEAD"),
                               "c", "does not name node c")
        # The control: b's own row, whose id b's certificate names.
        r = self.rev_parse(a.address, own)
        self.assertEqual((r.rc, r.node, r.out.strip()), (0, "b", heads[own]), r)
        self.assertEqual(py.git.rev_parse(repo=own, rev="HEAD").oid, heads[own])
        # b logs its calls in the order they end: once the controls' two
        # are there, any from the refused calls would be before them.
        b.d.wait_until(lambda out: len(re.findall(
            r"call method=tk\.v1\.Git/RevParse", out[mark:])) >= 2,
            "b's log of the two controls")
        self.assertEqual(self.rev_parses(b, mark), ["OK", "OK"])

    # ---- 3. a heartbeat in the future --------------------------------------

    def test_3_future_heartbeat_is_not_live(self) -> None:
        a = self.start("a")
        repo = os.path.join(a.root, "r")
        head = make_repo(repo)
        fake = self.fake("tcp://127.0.0.1:%d" % free_port())
        # The row, and in the same statement a witness with a live
        # heartbeat: once a has logged the witness, its reading saw both.
        self.forge(("evil", fake.url, repo, "now() + interval '1 hour'"),
                   ("w", "tls+tcp://127.0.0.1:1", "/nonexistent/w", "now()"))
        self.joined(a, "w")
        self.assertNotIn("fleet: node evil", a.d.output("stderr"))
        r = self.tkcall(a.address, "--node", "a", "-o", "compact",
                        "tk.v1.Control/ListNodes")
        self.assertEqual(r.rc, 0, r)
        self.assertEqual([x["nodeId"] for x in json.loads(r.out)["nodes"]],
                         ["a", "w"])
        self.assertEqual(sorted(x.node_id for x in self.client(a).nodes()),
                         ["a", "w"])
        # The Commit goes to the repository's real owner.
        r = self.commit(a.address, repo)
        self.assertEqual((r.rc, r.node), (0, "a"), r)
        self.assertNotEqual(git(repo, "rev-parse", "HEAD"), head)
        self.assertEqual(fake.seen(), (0, []))
        # A future heartbeat holds no id: a tkd claiming it starts.
        self.forge(("f", "tls+tcp://127.0.0.1:1", "/nonexistent/f",
                    "now() + interval '1 hour'"))
        f = self.start("f")
        self.joined(f, "f", f.address)
        self.assertEqual(self.sql("SELECT address, instance <> 'forged' FROM "
                                  "tk_nodes WHERE node_id = 'f'"),
                         "%s|t" % f.address)
        # The control: a live one does (exit 2, naming its holder).
        self.forge(("g", "tls+tcp://127.0.0.1:1", "/nonexistent/g", "now()"))
        p = subprocess.run(self.argv("g", free_port(), a.root, "a"),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=WAIT_S,
                           env=self.env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("node id g is held by the tkd at tls+tcp://127.0.0.1:1",
                      p.stderr)

    # ---- 4. an id taken from a running node --------------------------------

    def fleet_connections(self) -> int:
        return int(self.sql("SELECT count(*) FROM pg_stat_activity WHERE "
                            "datname = current_database() AND "
                            "application_name = 'tkd fleet'"))

    def test_4_taken_id_stops_advertising(self) -> None:
        a, b = self.start("a"), self.start("b")
        repo = os.path.join(a.root, "r")
        head = make_repo(repo)
        b_repo = os.path.join(b.root, "r")
        b_head = make_repo(b_repo)
        for observer in (a, b):
            for n in (a, b):
                self.joined(observer, n.node_id, n.address)
        self.assertEqual(self.fleet_connections(), 2)
        mark_a = a.d.mark("stderr")
        # Someone takes a's id and points it at b.
        self.sql("UPDATE tk_nodes SET address = '%s', instance = 'intruder' "
                 "WHERE node_id = 'a'" % b.address)
        a.d.wait_until(lambda out: "taken over" in out[mark_a:]
                       or "is held by" in out[mark_a:],
                       "a's word on its row")
        log = a.d.output("stderr")[mark_a:]
        self.assertIn("tkd error: fleet: node a: its row in tk_nodes was taken "
                      "over while it ran: instance intruder, address %s"
                      % b.address, log)
        self.assertIn("someone who can write the database rewrote it", log)
        self.assertIn("stops advertising", log)
        # a answers MEMBERSHIP_STALE at once, naming no address of the row.
        r = self.tkcall(a.address, "tk.v1.Control/ListNodes")
        self.assertEqual((r.rc, r.status.get("reason")),
                         (14, "MEMBERSHIP_STALE"), r)
        self.assertIn("taken over", r.status["message"])
        self.assertNotIn(b.address, r.err + r.out)
        # A client that came in on a: no table, so a alone, never b.
        mark_b = b.d.mark("stderr")
        r = self.rev_parse(a.address, repo)
        self.assertEqual((r.rc, r.node, r.out.strip()), (0, "", head), r)
        py_a = self.client(a)
        self.assertFalse(py_a.fleet)
        with self.assertRaises(tk.TkError) as cm:
            py_a.control.list_nodes(timeout=5)
        self.assertEqual(cm.exception.reason, "MEMBERSHIP_STALE")
        self.assertEqual(py_a.git.rev_parse(repo=repo, rev="HEAD").oid, head)
        # A client that came in on b reads the row as written: a at b's
        # address, which b's certificate does not name for a.
        r = self.rev_parse(b.address, repo)
        self.assert_refused(r, "a", "does not name node a, "
                            "DNS:a.tk-node.invalid")
        self.assertIn(b.address, r.status["message"])
        py_b = self.client(b)
        self.assert_py_refused(lambda: py_b.git.rev_parse(repo=repo, rev="HEAD"),
                               "a", "does not name node a")
        # The control, on b, logged after anything the refusals sent there.
        r = self.rev_parse(b.address, b_repo)
        self.assertEqual((r.rc, r.node, r.out.strip()), (0, "b", b_head), r)
        b.d.wait_until(lambda out: "call method=tk.v1.Git/RevParse"
                       in out[mark_b:], "b's log of the control")
        self.assertEqual(self.rev_parses(b, mark_b), ["OK"])
        # a let go of the database, and does not take the row back when
        # it goes stale: b, beating five times meanwhile, sees it stay.
        wait_for(lambda: self.fleet_connections() == 1,
                 "a's fleet connection closed")
        mark_b = b.d.mark("stderr")
        self.sql("UPDATE tk_nodes SET heartbeat_at = now() - interval "
                 "'1 hour' WHERE node_id = 'a'")
        b.d.wait_output("fleet: node a left", "stderr", start=mark_b)
        beats = set()

        def b_beat() -> bool:
            beats.add(self.sql("SELECT heartbeat_at FROM tk_nodes WHERE "
                               "node_id = 'b'"))
            return len(beats) >= 5
        wait_for(b_beat, "five heartbeats of b")
        self.assertEqual(self.sql("SELECT address, instance FROM tk_nodes "
                                  "WHERE node_id = 'a'"),
                         "%s|intruder" % b.address)
        self.assertNotIn("joined at", a.d.output("stderr")[mark_a:])
        # Nor does it mark or delete the row when it stops.
        self.assertEqual(a.d.stop(), 0, a.d.output("stderr"))
        out = a.d.output("stderr")[mark_a:]
        self.assertIn("not marked draining: its row was taken over", out)
        self.assertNotIn("left the table", out)
        self.assertEqual(self.sql("SELECT address, instance, draining FROM "
                                  "tk_nodes WHERE node_id = 'a'"),
                         "%s|intruder|f" % b.address)

    # ---- 5. DESIGN.md ------------------------------------------------------

    def test_5_design_says_what_a_database_writer_can_do(self) -> None:
        """DESIGN.md's "What a writer of the database can do" names, for
        each claim, the test of this file that shows it; every test above
        is named there, and every test named there exists."""
        with open(os.path.join(tkproc.SOURCE_ROOT, "DESIGN.md"),
                  encoding="utf-8") as f:
            design = f.read()
        m = re.search(r"\*\*What a writer of the database can do\.\*\*(.*?)"
                      r"\n\n(?!- )", design + "\n\n", re.S)
        self.assertIsNotNone(m, "DESIGN.md has no paragraph \"What a writer "
                             "of the database can do\"")
        assert m is not None
        named = set(re.findall(r"test_fleet_trust\.py:\s*(test_\w+)",
                               m.group(1)))
        here = {t for t in dir(self) if t.startswith("test_")} - {
            "test_5_design_says_what_a_database_writer_can_do"}
        self.assertEqual(named - here, set(), "named in DESIGN.md, not here")
        self.assertEqual(here - named, set(), "here, not named in DESIGN.md")
        for word in ("cannot", "can"):
            self.assertIn(word, m.group(1))


if __name__ == "__main__":
    unittest.main(verbosity=2)
