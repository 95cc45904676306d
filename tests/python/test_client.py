# SPDX-License-Identifier: MIT
"""The Python client (client/python/tk) against a real testd, against a
real tkd (typed methods of Git and Search on a fixture repository, and
the TkError of a failed git), and against bare NNG REP sockets for what no
tkd does (never answering, dropping the connection). Run by meson under
/usr/bin/python3; waits are on the daemon's output or on a fifo a git
hook writes, never sleeps.
"""

from __future__ import annotations

import ctypes
import dataclasses
import faulthandler
import glob
import importlib
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
import typing
import unittest
from ctypes import byref, c_void_p
from unittest import mock

import repsock
import tkproc

import tk
from tk import _nng
from tk.v1 import control_pb2, git_pb2, rpc_pb2, search_pb2

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT = "tk.test.Test/Wait"
WRITE = "tk.test.Test/SlowWrite"


_lib = repsock.lib


class TestdCase(unittest.TestCase):
    """Each test with a testd of its own and a client on it."""

    held_writes = False  # testd --release-writes: SlowWrite ends on SIGUSR1

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("py")
        self.testd, self.addr = tkproc.start_testd(self.dir.name,
                                                   held_writes=self.held_writes)
        self.client = tk.Client(self.addr)

    def tearDown(self) -> None:
        self.client.close()
        self.testd.stop()
        self.dir.cleanup()

    def start_wait(self, timeout: float = 30.0) -> tk.Call[control_pb2.PingReply]:
        """A Wait that has entered its handler."""
        mark = self.testd.mark()
        call = self.client.start(WAIT, control_pb2.PingRequest(), timeout=timeout,
                                 reply_type=control_pb2.PingReply)
        self.testd.wait_output("ENTERED Wait", start=mark)
        return call


class TestCalls(TestdCase):
    def test_typed_ping(self) -> None:
        reply = self.client.control.ping(data=b"\x00\xffbytes", timeout=5)
        self.assertIsInstance(reply, control_pb2.PingReply)
        self.assertEqual(reply.data, b"\x00\xffbytes")
        self.assertEqual(reply.server_version, "testd")
        # A message instead of keyword arguments; not both.
        req = control_pb2.PingRequest(data=b"m")
        self.assertEqual(self.client.control.ping(req).data, b"m")
        with self.assertRaises(TypeError):
            self.client.control.ping(req, data=b"x")
        with self.assertRaises(TypeError):
            self.client.control.ping(control_pb2.CancelRequest())

    def test_call_by_name(self) -> None:
        reply = self.client.call("tk.v1.Control/Ping",
                                 control_pb2.PingRequest(data=b"x"))
        self.assertEqual(reply, control_pb2.PingReply(
            data=b"x", server_version="testd", uptime_ms=reply.uptime_ms))
        raw = self.client.call("tk.v1.Control/Ping",
                               control_pb2.PingRequest(data=b"y").SerializeToString(),
                               reply_type=bytes)
        self.assertEqual(control_pb2.PingReply.FromString(raw).data, b"y")

    def test_list_methods(self) -> None:
        names = {m.name for m in self.client.control.list_methods().methods}
        self.assertIn(WAIT, names)
        self.assertIn("tk.v1.Control/Cancel", names)

    def test_unknown_method(self) -> None:
        # Not in the generated tk.v1: the client cannot know the reply type.
        with self.assertRaises(ValueError):
            self.client.call("tk.v1.Nope/Nothing", control_pb2.PingRequest())
        with self.assertRaises(tk.TkError) as cm:
            self.client.call("tk.v1.Nope/Nothing", b"", reply_type=bytes)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.UNIMPLEMENTED)
        assert isinstance(e.code, tk.Code), type(e.code)
        self.assertEqual(e.code.name, "UNIMPLEMENTED")
        self.assertEqual(e.reason, "UNKNOWN_METHOD")
        self.assertTrue(e.from_server)
        self.assertIn("UNIMPLEMENTED (12) UNKNOWN_METHOD", str(e))

    def test_deadline_from_server(self) -> None:
        t0 = time.monotonic()
        with self.assertRaises(tk.TkError) as cm:
            self.client.call(WAIT, control_pb2.PingRequest(), timeout=0.2,
                             reply_type=control_pb2.PingReply)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.DEADLINE_EXCEEDED)
        self.assertEqual(e.cancellation.cause, tk.Cause.DEADLINE)
        self.assertTrue(e.from_server)  # the server's answer, not a timeout
        self.assertGreaterEqual(e.status.elapsed_us, 200000)
        self.assertGreaterEqual(time.monotonic() - t0, 0.2)

    def test_bad_timeouts(self) -> None:
        for bad in (0, -1, 2 ** 32 / 1000):
            with self.assertRaises(ValueError):
                self.client.control.ping(timeout=bad)

    def test_many_threads_one_client(self) -> None:
        failures = []

        def hammer(n: int) -> None:
            for i in range(50):
                data = b"t%d-%d" % (n, i)
                try:
                    if self.client.control.ping(data=data, timeout=10).data != data:
                        failures.append(data)
                except tk.TkError as e:
                    failures.append(str(e).encode())

        threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])


class TestCancel(TestdCase):
    def test_cancel_from_another_thread(self) -> None:
        call = self.start_wait()
        outcome: list = []
        t = threading.Thread(target=lambda: outcome.append(call.cancel()))
        t.start()
        with self.assertRaises(tk.TkError) as cm:
            call.result()
        t.join()
        self.assertEqual(outcome, [tk.CancelOutcome.CANCELLED])
        e = cm.exception
        self.assertEqual(e.code, tk.Code.CANCELLED)
        self.assertEqual(e.cancellation.cause, tk.Cause.CALLER)
        self.assertTrue(e.from_server)
        self.assertTrue(call.done())
        # Asked again: the call is over.
        self.assertEqual(call.cancel(), tk.CancelOutcome.ALREADY_DONE)

    def test_cancel_from_another_client_not_honoured(self) -> None:
        call = self.start_wait(timeout=1.0)
        with tk.Client(self.addr) as other:
            reply = other.control.cancel(call_id=call.call_id)
        self.assertEqual(reply.outcome, control_pb2.CancelReply.NOT_FOUND)
        st = call.status()  # ran on to its deadline
        self.assertEqual(st.code, tk.Code.DEADLINE_EXCEEDED)
        self.assertEqual(st.cancellation.cause, tk.Cause.DEADLINE)

    def test_result_timeout_leaves_the_call_running(self) -> None:
        call = self.start_wait()
        with self.assertRaises(TimeoutError):
            call.result(timeout=0.01)
        self.assertFalse(call.done())
        self.assertEqual(call.cancel(), tk.CancelOutcome.CANCELLED)
        self.assertEqual(call.status().code, tk.Code.CANCELLED)

    def test_close_during_call(self) -> None:
        call = self.start_wait()
        self.client.close()
        st = call.status()
        self.assertEqual(st.code, tk.Code.CANCELLED)
        self.assertFalse(st.from_server)
        with self.assertRaises(ValueError):
            self.client.control.ping()
        self.client.close()  # idempotent

    def test_late_answer_reaches_the_caller(self) -> None:
        # tkd's answer comes long after the grace: Late holds it until
        # SIGUSR1, sent only once the client has asked where the call
        # stands (tkd logs the question). A client with a fixed grace
        # never asks, and this fails waiting for the question.
        mark = self.testd.mark("stderr")
        call = self.client.start("tk.test.Test/Late", control_pb2.PingRequest(),
                                 timeout=0.1, reply_type=control_pb2.PingReply)
        waiter = threading.Thread(target=call.status)
        waiter.start()
        self.testd.wait_output("ENTERED Late")
        self.testd.wait_output("method=tk.v1.Control/CallState", "stderr",
                               start=mark)
        self.assertFalse(call.done())
        self.testd.proc.send_signal(signal.SIGUSR1)
        waiter.join()
        st = call.status()
        self.assertEqual(st.code, tk.Code.DEADLINE_EXCEEDED, st.message)
        self.assertTrue(st.from_server)
        self.assertEqual(st.cancellation.cause, tk.Cause.DEADLINE)


class TestCancelHeldWrite(TestdCase):
    """SlowWrite runs until testd gets SIGUSR1, sent once the Cancel has
    answered: the Cancel finds the write running, however slowly it gets
    there. (Had the write ended first, the Cancel would say ALREADY_DONE.)"""

    held_writes = True

    def test_cancel_running_write_continues(self) -> None:
        mark = self.testd.mark()
        w = self.client.start(WRITE, control_pb2.PingRequest(),
                              timeout=30, reply_type=control_pb2.PingReply)
        self.testd.wait_output("ENTERED SlowWrite", start=mark)
        self.assertEqual(w.cancel(), tk.CancelOutcome.WRITE_CONTINUES)
        self.assertFalse(w.done())
        self.testd.proc.send_signal(signal.SIGUSR1)
        self.assertEqual(w.result().data, b"written")
        st = w.status()
        self.assertTrue(st.ok)
        self.assertTrue(st.cancellation.write_completed)
        self.assertEqual(st.cancellation.cause, tk.Cause.NONE)


def git(repo: str, *args: str) -> str:
    """git in repo with a fixed identity and no user or system config;
    its stdout."""
    env = dict(os.environ, HOME=repo, GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="tk", GIT_AUTHOR_EMAIL="tk@example.invalid",
               GIT_COMMITTER_NAME="tk", GIT_COMMITTER_EMAIL="tk@example.invalid")
    return subprocess.run(["git", "-C", repo] + list(args), env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout


class TestTkd(unittest.TestCase):
    """Typed methods against a real tkd whose root holds a git repository
    with two commits and a file to search."""

    dir: tempfile.TemporaryDirectory
    root: str
    repo: str
    head: str
    first: str
    tkd: tkproc.Daemon
    addr: str
    client: tk.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tkproc.tempdir("pyt")
        cls.root = os.path.join(cls.dir.name, "root")
        cls.repo = os.path.join(cls.root, "repo")
        os.makedirs(cls.repo)
        git(cls.repo, "init", "-q")
        with open(os.path.join(cls.repo, "a.txt"), "w", encoding="utf-8") as f:
            f.write("alpha needle\nbeta\nneedle gamma\n")
        git(cls.repo, "add", "a.txt")
        git(cls.repo, "commit", "-q", "-m", "first")
        git(cls.repo, "commit", "-q", "--allow-empty", "-m", "second")
        cls.head = git(cls.repo, "rev-parse", "HEAD").strip()
        cls.first = git(cls.repo, "rev-parse", "HEAD~1").strip()
        cls.tkd, cls.addr = tkproc.start_tkd(cls.dir.name, [cls.root])
        cls.client = tk.Client(cls.addr)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.tkd.stop()
        cls.dir.cleanup()

    def test_git_rev_parse(self) -> None:
        reply = self.client.git.rev_parse(repo=self.repo, rev="HEAD", timeout=30)
        self.assertIsInstance(reply, git_pb2.GitRevParseReply)
        self.assertEqual(reply.oid, self.head)
        self.assertEqual(self.client.git.rev_parse(repo=self.repo, rev="HEAD~1").oid,
                         self.first)
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.rev_parse(repo=self.repo, rev="no-such-branch")
        self.assertEqual(cm.exception.code, tk.Code.NOT_FOUND)
        self.assertEqual(cm.exception.reason, "BAD_REVISION")
        self.assertTrue(cm.exception.from_server)

    def test_git_log(self) -> None:
        reply = self.client.git.log(repo=self.repo, rev="HEAD", max_count=5)
        self.assertEqual([(c.oid, c.subject) for c in reply.commits],
                         [(self.head, b"second"), (self.first, b"first")])
        self.assertEqual(list(reply.commits[0].parents), [self.first])

    def test_search(self) -> None:
        root = self.repo
        reply = self.client.search.search(root=root, query="needle", timeout=30)
        self.assertIsInstance(reply, search_pb2.SearchReply)
        self.assertEqual([(m.path, m.line, m.text) for m in reply.matches],
                         [(b"a.txt", 1, b"alpha needle"),
                          (b"a.txt", 3, b"needle gamma")])
        self.assertEqual([(s.start, s.end) for s in reply.matches[0].submatches],
                         [(6, 12)])
        self.assertFalse(reply.partial)
        self.assertNotEqual(reply.tool, search_pb2.SearchRequest.AUTO)
        # A limit: the status of a success says partial, with cause LIMIT.
        call = self.client.search.start_search(root=root, query="needle", limit=1)
        self.assertEqual([m.line for m in call.result().matches], [1])
        st = call.status()
        self.assertTrue(st.ok)
        self.assertTrue(st.partial)
        self.assertEqual(st.cancellation.cause, tk.Cause.LIMIT)
        # What ran, as tkd names it: the tool the reply names.
        names = {search_pb2.SearchRequest.RG: "rg",
                 search_pb2.SearchRequest.GIT_GREP: "git grep",
                 search_pb2.SearchRequest.GREP: "grep"}
        self.assertEqual(st.tool, names[reply.tool])

    def test_text_and_relative_paths(self) -> None:
        # As tkcall takes them: repo="." from a working directory inside a
        # root, text for bytes fields (paths), text read back (tk.text), and
        # a name that is not UTF-8 still the same bytes both ways.
        for name in (b"u.txt", b"v.txt", b"n\xff.txt"):
            with open(os.path.join(os.fsencode(self.repo), name), "wb"):
                pass
        branch = git(self.repo, "symbolic-ref", "--short", "HEAD").strip()
        cwd = os.getcwd()
        os.chdir(self.repo)
        try:
            st = self.client.git.status(repo=".", paths=["u.txt"],
                                        untracked="UNTRACKED_ALL", timeout=30)
            req = git_pb2.GitRevParseRequest(repo="./", rev="HEAD")
            oid = self.client.call("tk.v1.Git/RevParse", req,
                                   reply_type=git_pb2.GitRevParseReply).oid
        finally:
            os.chdir(cwd)
        self.assertEqual([e.path for e in st.entries], [b"u.txt"])
        self.assertEqual(tk.text(st.branch.head), branch)
        self.assertEqual(st.branch.head, branch.encode())  # the raw bytes
        self.assertEqual(oid, self.head)
        self.assertEqual(req.repo, "./")  # the caller's message untouched
        st = self.client.git.status(repo=self.repo, untracked="UNTRACKED_ALL",
                                    timeout=30)
        odd = [e.path for e in st.entries if e.path.startswith(b"n")]
        self.assertEqual(odd, [b"n\xff.txt"])
        self.assertEqual(tk.text(odd[0]), "n\udcff.txt")
        for given in (odd[0], tk.text(odd[0])):
            st = self.client.git.status(repo=self.repo, paths=[given],
                                        untracked="UNTRACKED_ALL", timeout=30)
            self.assertEqual([e.path for e in st.entries], [b"n\xff.txt"])

    def test_error_carries_stderr(self) -> None:
        # A python keyword as a field name: from_ is the field "from".
        with self.assertRaises(tk.TkError) as cm:
            self.client.git.diff(repo=self.repo, from_="nope", timeout=30)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.NOT_FOUND)
        self.assertEqual(e.reason, "BAD_REVISION")
        self.assertEqual(e.stderr, b"fatal: bad revision 'nope'\n")
        self.assertTrue(e.from_server)
        self.assertEqual(e.cancellation, tk.Cancellation())

    def test_cancel_kills_git(self) -> None:
        # A Status blocked in a core.fsmonitor hook (the owner's: tkd's
        # user's global config) that announces itself on a fifo: the
        # cancellation fields of a real kill.
        repo = os.path.join(self.root, "blocked")
        os.mkdir(repo)
        git(repo, "init", "-q")
        git(repo, "commit", "-q", "--allow-empty", "-m", "x")
        fifo = os.path.join(self.dir.name, "hook.fifo")
        hook = os.path.join(self.dir.name, "hook")
        os.mkfifo(fifo, 0o600)
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho hook > '%s'\nexec sleep 1000\n" % fifo)
        os.chmod(hook, 0o700)
        tkproc.owner_config(self.dir.name, repo, "core.fsmonitor", hook)
        call = self.client.git.start_status(repo=repo, timeout=30)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            self.assertTrue(poller.poll(tkproc.START_S * 1000), "the hook never ran")
            self.assertEqual(os.read(fd, 64), b"hook\n")
        finally:
            os.close(fd)
        self.assertEqual(call.cancel(), tk.CancelOutcome.CANCELLED)
        with self.assertRaises(tk.TkError) as cm:
            call.result()
        e = cm.exception
        self.assertEqual((e.code, e.reason), (tk.Code.CANCELLED, ""))
        self.assertEqual(e.cancellation.cause, tk.Cause.CALLER)
        self.assertTrue(e.cancellation.process_killed)
        self.assertFalse(e.cancellation.write_completed)
        self.assertIn("[cause CALLER]", str(e))


class TestWithoutTkd(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tkproc.tempdir("py")

    def tearDown(self) -> None:
        self.dir.cleanup()

    def test_connect_errors(self) -> None:
        with self.assertRaises(tk.TkError) as cm:
            tk.Client("ipc://%s/nobody.sock" % self.dir.name)
        self.assertEqual(cm.exception.code, tk.Code.UNAVAILABLE)
        self.assertFalse(cm.exception.from_server)
        self.assertIn("is tkd running there?", cm.exception.message)
        with self.assertRaises(ValueError):
            tk.Client("nosuch://where")

    def test_deadline_without_reply(self) -> None:
        url = "ipc://%s/mute.sock" % self.dir.name
        rep = repsock.rep_socket(url, 1000)
        try:
            with tk.Client(url) as c:
                t0 = time.monotonic()
                with self.assertRaises(tk.TkError) as cm:
                    c.control.ping(timeout=0.1)
                took = time.monotonic() - t0
        finally:
            _nng.close(rep)
        e = cm.exception
        self.assertEqual(e.code, tk.Code.DEADLINE_EXCEEDED)
        self.assertEqual(e.cancellation.cause, tk.Cause.DEADLINE)
        self.assertFalse(e.from_server)
        self.assertIn("did not answer", e.message)
        # It waited the deadline plus the grace for the server's own answer.
        self.assertGreaterEqual(took, (100 + tk.client.GRACE_MS - 5) / 1000)

    def against_script(self, script: typing.Sequence[int],
                       method: str = "tk.v1.Control/Ping"
                       ) -> typing.Tuple[tk.TkError, int]:
        """A 0.1 s call of method (a PingRequest) against a fake tkd that
        never answers the call and answers each CallState about it with the
        next state of script (-2: UNIMPLEMENTED); the error and how many
        questions came. Each step is an event, a question arriving: no
        clock."""
        url = "ipc://%s/asker.sock" % self.dir.name
        rep = repsock.rep_socket(url, 30000)
        asked: typing.List[str] = []

        def recv() -> typing.Optional[rpc_pb2.Request]:
            msg = c_void_p()
            if _lib.nng_recvmsg(rep, byref(msg), 0) != 0:
                return None
            data = ctypes.string_at(_lib.nng_msg_body(msg), _lib.nng_msg_len(msg))
            _lib.nng_msg_free(msg)
            return rpc_pb2.Request.FromString(data)

        def serve() -> None:
            call = recv()  # never answered: a socket-level REP moves on
            for step in script:
                q = recv()
                if call is None or q is None:
                    return
                about = control_pb2.CallStateRequest.FromString(q.payload)
                asked.append("%s %d" % (q.method, about.call_id - call.call_id))
                if step == -2:
                    reply = rpc_pb2.Reply(call_id=q.call_id, status=rpc_pb2.Status(
                        code=rpc_pb2.Status.UNIMPLEMENTED))
                else:
                    reply = rpc_pb2.Reply(
                        call_id=q.call_id, status=rpc_pb2.Status(),
                        payload=control_pb2.CallStateReply(state=typing.cast(
                            "control_pb2.CallStateReply.State",
                            step)).SerializeToString())
                data = reply.SerializeToString()
                msg = c_void_p()
                assert _lib.nng_msg_alloc(byref(msg), len(data)) == 0
                ctypes.memmove(_lib.nng_msg_body(msg), data, len(data))
                assert _lib.nng_sendmsg(rep, msg, 0) == 0

        server = threading.Thread(target=serve)
        server.start()
        try:
            with tk.Client(url) as c:
                with self.assertRaises(tk.TkError) as cm:
                    c.call(method, control_pb2.PingRequest(), timeout=0.1,
                           reply_type=control_pb2.PingReply)
        finally:
            _nng.close(rep)
            server.join()
        self.assertEqual(set(asked) - {"tk.v1.Control/CallState 0"}, set())
        return cm.exception, len(asked)

    def test_gives_up_on_what_tkd_says(self) -> None:
        S = control_pb2.CallStateReply
        cases: typing.List[typing.Tuple[typing.Sequence[int], tk.Code, str]]
        cases = [([S.NOT_FOUND] * 3, tk.Code.DEADLINE_EXCEEDED,
                  "has no record of call"),
                 ([S.ANSWERED] * 3, tk.Code.UNAVAILABLE, "says it answered call"),
                 ([-2], tk.Code.DEADLINE_EXCEEDED, "cannot be asked"),
                 # Still running, then no longer known: only the end counts.
                 ([S.RUNNING, S.QUEUED] + [S.NOT_FOUND] * 3,
                  tk.Code.DEADLINE_EXCEEDED, "has no record of call")]
        for script, code, says in cases:
            e, asked = self.against_script(script)
            self.assertEqual(e.code, code, e.message)
            self.assertIn(says, e.message)
            self.assertFalse(e.from_server)
            self.assertEqual(asked, len(script))

    def test_started_write_is_not_deadline_exceeded(self) -> None:
        """A WRITE that tkd said runs (it started before its caller's
        deadline and runs to completion) is never reported
        DEADLINE_EXCEEDED by the client: when its reply cannot come, the
        status says whether it completed is unknown. Negative controls: the
        same answers about a READ, and about a WRITE only queued."""
        S = control_pb2.CallStateReply
        started = [S.RUNNING] + [S.NOT_FOUND] * 3
        queued = [S.QUEUED] + [S.NOT_FOUND] * 3
        cases = [("tk.v1.Git/Commit", started, tk.Code.UNKNOWN,
                  "whether it completed is unknown"),
                 ("tk.v1.Git/Status", started, tk.Code.DEADLINE_EXCEEDED,
                  "has no record of call"),
                 ("tk.v1.Git/Commit", queued, tk.Code.DEADLINE_EXCEEDED,
                  "has no record of call")]
        for method, script, code, says in cases:
            e, asked = self.against_script(script, method)
            self.assertEqual(e.code, code, e.message)
            self.assertIn(says, e.message)
            self.assertFalse(e.from_server)
            self.assertFalse(e.status.cancellation.write_completed)
            self.assertEqual(asked, len(script))

    def dropped_calls(self, url: str, use_tk: bool) -> int:
        """How often a request reaches a server that drops the connection
        on receipt, then waits a second for a resent copy."""
        rep = repsock.rep_socket(url, 1000)
        received = []

        def serve() -> None:
            msg = c_void_p()
            if _lib.nng_recvmsg(rep, byref(msg), 0) == 0:
                received.append(1)
                _lib.nng_pipe_close(_lib.nng_msg_get_pipe(msg))
                _lib.nng_msg_free(msg)
            if _lib.nng_recvmsg(rep, byref(msg), 0) == 0:
                received.append(2)
                _lib.nng_msg_free(msg)

        server = threading.Thread(target=serve)
        server.start()
        if use_tk:
            with tk.Client(url) as c:
                with self.assertRaises(tk.TkError) as cm:
                    c.control.ping(timeout=5)
            self.assertEqual(cm.exception.code, tk.Code.UNAVAILABLE)
            self.assertIn("not resent", cm.exception.message)
            server.join()
        else:
            # What a plain REQ socket does: resend on the next connection.
            req = _nng.Socket()
            assert _lib.nng_req0_open(byref(req)) == 0
            _lib.nng_socket_set_ms(req, b"reconnect-time-min", 10)
            assert _lib.nng_dial(req, url.encode(), None, 0) == 0
            env = rpc_pb2.Request(call_id=1, method="tk.v1.Control/Ping",
                                  timeout_ms=1000).SerializeToString()
            msg = c_void_p()
            assert _lib.nng_msg_alloc(byref(msg), len(env)) == 0
            ctypes.memmove(_lib.nng_msg_body(msg), env, len(env))
            assert _lib.nng_sendmsg(req, msg, 0) == 0
            server.join()
            _nng.close(req)
        _nng.close(rep)
        return len(received)

    def test_at_most_once(self) -> None:
        self.assertEqual(self.dropped_calls("ipc://%s/a.sock" % self.dir.name, True), 1)
        # Negative control: NNG's default REQ delivers the request twice.
        self.assertEqual(
            self.dropped_calls("ipc://%s/b.sock" % self.dir.name, False), 2)


class TestSurface(unittest.TestCase):
    def test_default_address(self) -> None:
        with mock.patch.dict(os.environ, {"TK_ADDR": "tcp://h:1",
                                          "XDG_RUNTIME_DIR": "/run/u"}):
            self.assertEqual(tk.default_address(), "tcp://h:1")
        with mock.patch.dict(os.environ, {"TK_ADDR": "", "XDG_RUNTIME_DIR": "/run/u"}):
            self.assertEqual(tk.default_address(), "ipc:///run/u/tk/tkd.sock")
        with mock.patch.dict(os.environ, {"TK_ADDR": "", "XDG_RUNTIME_DIR": "rel"}):
            self.assertEqual(tk.default_address(),
                             "ipc:///tmp/tk-%d/tkd.sock" % os.geteuid())

    def test_paths_and_text_as_tkcall_takes_them(self) -> None:
        # tkcall's paths.c: "." is the directory, "./" dropped, ".." kept
        # for tkd, absolute and empty left; nested messages too; bytes
        # fields take str, in lists and in a dict for a message field.
        from tk._text import absolute_paths
        from tk.v1 import services_pb2
        for given, made in ((".", "/w"), ("./a", "/w/a"), (".//a", "/w/a"),
                            ("../x", "/w/../x"), ("/abs", "/abs"), ("", "")):
            req = git_pb2.GitStatusRequest(repo=given)
            self.assertEqual(absolute_paths(req, "/w").repo, made, given)
        self.assertEqual(absolute_paths(git_pb2.GitStatusRequest(repo="a"),
                                        "/").repo, "/a")
        spec = services_pb2.ServiceRenderRequest(
            spec=services_pb2.ServiceSpec(program="bin/x", working_dir="."))
        out = absolute_paths(spec, "/w")
        self.assertEqual((out.spec.program, out.spec.working_dir), ("/w/bin/x", "/w"))
        self.assertEqual(spec.spec.program, "bin/x")
        from tk._stub import build_request
        req = build_request(git_pb2.GitCommitRequest, None, {"paths": ["a", b"b"]})
        self.assertEqual(list(req.paths), [b"a", b"b"])
        ping = build_request(control_pb2.PingRequest, None, {"data": "h\u00e9"})
        self.assertEqual(ping.data, "h\u00e9".encode())
        with self.assertRaises(ValueError):
            build_request(control_pb2.PingRequest, None, {"data": "\ud800"})
        self.assertEqual(tk.text(b"\xff/\xc3\xa9"), "\udcff/\u00e9")

    def test_enums_match_the_proto(self) -> None:
        enums: typing.List[typing.Tuple[typing.Any, typing.Any]] = [
            (tk.Code, rpc_pb2.Status.Code),
            (tk.Cause, rpc_pb2.Cancellation.Cause)]
        for enum_cls, proto_enum in enums:
            self.assertEqual({m.name: m.value for m in enum_cls},
                             dict(proto_enum.items()))
        outcomes = dict(control_pb2.CancelReply.Outcome.items())
        del outcomes["OUTCOME_UNSPECIFIED"]  # the client's NOT_SENT is 0
        self.assertEqual({m.name: m.value for m in tk.CancelOutcome
                          if m is not tk.CancelOutcome.NOT_SENT}, outcomes)

    def test_every_rpc_has_typed_methods(self) -> None:
        # Whatever the package's generated tk/v1 holds, generated from the
        # service descriptors.
        gen = os.path.join(tkproc.SOURCE_ROOT, "client", "python")
        hints = typing.get_type_hints(tk._services.Services)
        n = 0
        for path in glob.glob(gen + "/tk/**/*_pb2.py", recursive=True):
            name = os.path.relpath(path, gen)[:-3].replace(os.sep, ".")
            module = importlib.import_module(name)
            for svc in module.DESCRIPTOR.services_by_name.values():
                stub = hints[_snake(svc.name)]
                for m in svc.methods:
                    self.assertTrue(callable(getattr(stub, _snake(m.name))))
                    self.assertTrue(callable(getattr(stub, "start_" + _snake(m.name))))
                    n += 1
        self.assertGreaterEqual(n, 3)

    def test_status_from_proto_carries_every_field(self) -> None:
        proto = rpc_pb2.Status(
            code=rpc_pb2.Status.DEADLINE_EXCEEDED, message="m", reason="R",
            stderr_excerpt=b"fatal: \xff\n", partial=True, retry_after_ms=7,
            elapsed_us=9, tool="git grep",
            cancellation=rpc_pb2.Cancellation(
                cause=rpc_pb2.Cancellation.DEADLINE, process_killed=True,
                write_completed=True, cleanup_ms=12))
        e = tk.TkError(tk.Status.from_proto(proto))
        self.assertEqual((e.code, e.code_name, e.reason, e.message, e.stderr),
                         (tk.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED", "R",
                          "m", b"fatal: \xff\n"))
        self.assertTrue(e.from_server)
        self.assertTrue(e.status.partial)
        self.assertEqual((e.status.retry_after_ms, e.status.elapsed_us), (7, 9))
        self.assertEqual(e.status.tool, "git grep")
        self.assertEqual(e.cancellation, tk.Cancellation(
            cause=tk.Cause.DEADLINE, process_killed=True, write_completed=True,
            cleanup_ms=12))
        self.assertIs(type(e.cancellation.cause), tk.Cause)
        # Every field of the proto has its place: one added to rpc.proto
        # must be added to Status and Cancellation too.
        renamed = {"stderr_excerpt": "stderr"}
        pairs: typing.List[typing.Tuple[typing.Any, type]] = [
            (rpc_pb2.Status, tk.Status), (rpc_pb2.Cancellation, tk.Cancellation)]
        for msg, cls in pairs:
            ours = {f.name for f in dataclasses.fields(cls)} - {"from_server"}
            self.assertEqual({renamed.get(f.name, f.name)
                              for f in msg.DESCRIPTOR.fields}, ours)
        # Each value above differs from the default, so each was copied.
        for f in rpc_pb2.Status.DESCRIPTOR.fields:
            self.assertTrue(proto.HasField(f.name) if f.message_type
                            else getattr(proto, f.name) != f.default_value, f.name)
        for f in rpc_pb2.Cancellation.DESCRIPTOR.fields:
            self.assertNotEqual(getattr(proto.cancellation, f.name), f.default_value)

    def test_status_of_unknown_numbers(self) -> None:
        code = typing.cast("rpc_pb2.Status.Code", 99)  # in no table
        st = tk.Status.from_proto(rpc_pb2.Status(code=code, reason="R"))
        self.assertEqual(st.code, 99)
        self.assertEqual(st.code_name, "CODE_99")
        self.assertIn("CODE_99 (99) R", str(tk.TkError(st)))


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower()
                   for i, c in enumerate(name))


if __name__ == "__main__":
    unittest.main(verbosity=2)
