# SPDX-License-Identifier: MIT
"""The conformance table (tests/conformance/cases.json) run through the
Python client (client/python/tk): each case a test, against a fresh real
tkd or testd. The C client runs the same table (conformance.c); both
assert the table, so both agree on code, reason and cause.
    /usr/bin/python3 test_conformance.py   (TKD, TESTD from meson; another
                                           table: TK_CONFORMANCE_CASES)
Waits are on the server's output or on the fixture's git hook, which
announces itself on a fifo (bounded with poll), never sleeps.
"""

from __future__ import annotations

import base64
import faulthandler
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple, Type

import tkproc

import tk
from google.protobuf.message import Message
from tk import jsonform
from tk.v1 import control_pb2

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

CASES = os.environ.get("TK_CONFORMANCE_CASES") or os.path.join(
    tkproc.SOURCE_ROOT, "tests", "conformance", "cases.json")
DEFAULT_TIMEOUT_MS = 10000
# The client under test: "python" (client/python/tk), "tkcall" (the CLI,
# run as a program: the cases it can express, a request in JSON and no
# cancel; the others are skipped, by name), or "ts" (client/ts, the
# TypeScript client, through a node program per case that makes its calls
# and cancels when told: every case).
CLIENT = os.environ.get("TK_CONFORMANCE_CLIENT", "python")
# The TypeScript client's package (built: dist/, node_modules/).
TS_DIR = os.environ.get("TK_TS_DIR") or os.path.join(tkproc.SOURCE_ROOT,
                                                     "client", "ts")
TS_DRIVER = os.path.join(TS_DIR, "dist", "test", "conformance-driver.js")
# A case whose method the server does not serve fails, unless this is "1".
ALLOW_SKIP = os.environ.get("TK_CONFORMANCE_ALLOW_SKIP") == "1"
# The names of the cases that ran to their verdict; main checks that they
# are the whole table (with the allowed skips).
RAN: List[str] = []
# The cases tkcall cannot express (TK_CONFORMANCE_CLIENT=tkcall).
SKIPPED_TKCALL: List[str] = []


def substitute(value: Any, root: str) -> Any:
    """value with ${ROOT} replaced by root in every string."""
    if isinstance(value, str):
        return value.replace("${ROOT}", root)
    if isinstance(value, list):
        return [substitute(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, root) for k, v in value.items()}
    return value


def git(root: str, home: str, *args: str) -> None:
    env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="tk", GIT_AUTHOR_EMAIL="tk@example.invalid",
               GIT_COMMITTER_NAME="tk",
               GIT_COMMITTER_EMAIL="tk@example.invalid")
    subprocess.run(["git", "-C", root] + list(args), env=env, check=True)


def make_hook(fixture: Dict[str, Any], root: str, home: str) -> Optional[str]:
    """fixture.hook "block": a core.fsmonitor hook (git runs it at the
    start of a status) that writes a line to a fifo in the case's
    directory, then blocks until it is killed. Outside root, so no search
    finds it; in the global config of tkd's user (HOME is home): a READ
    runs the owner's fsmonitor, never the repository's own. "pre-commit":
    a pre-commit hook that writes its line, then waits for one on
    release.fifo (release_hook). The fifo's path, or None without a hook."""
    hook = fixture.get("hook")
    if hook is None:
        return None
    if hook not in ("block", "pre-commit"):
        raise AssertionError("fixture.hook: %r (block, pre-commit)" % hook)
    if not fixture.get("git"):
        raise AssertionError('fixture.hook needs "git": true')
    fifo = os.path.join(home, "hook.fifo")
    os.mkfifo(fifo, 0o600)
    if hook == "pre-commit":
        release = os.path.join(home, "release.fifo")
        os.mkfifo(release, 0o600)
        path = os.path.join(root, ".git", "hooks", "pre-commit")
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n"
                    "echo \"hook $$\" > '%s'\n"
                    "read line < '%s'\n" % (fifo, release))
        os.chmod(path, 0o700)
        return fifo
    path = os.path.join(home, "fsmonitor-hook")
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n"
                "echo \"hook $$\" > '%s'\n"
                "exec sleep 1000\n" % fifo)
    os.chmod(path, 0o700)
    git(root, home, "config", "--global", "core.fsmonitor", path)
    return fifo


def wait_hook(fifo: str, name: str) -> None:
    """Waits (bounded) for the hook's line on its fifo: git has reached
    the hook and blocks in it."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        line = b""
        until = time.monotonic() + tkproc.START_S
        while not line.endswith(b"\n"):
            left = until - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                raise AssertionError(
                    "%s: the git hook never announced itself (did git not "
                    "run, or not reach it before the deadline?)" % name)
            chunk = os.read(fd, 128)
            if not chunk:
                break  # the writer closed
            line += chunk
    finally:
        os.close(fd)
    if not line:
        raise AssertionError("%s: the hook's fifo closed without a line" % name)


def make_fixture(fixture: Optional[Dict[str, Any]], root: str, home: str
                 ) -> Optional[str]:
    """The fixture in root; the hook's fifo, or None."""
    if not fixture:
        return None
    for rel, text in fixture.get("files", {}).items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    if fixture.get("git"):
        for args in (["init", "-q"], ["add", "-A"],
                     ["commit", "-q", "-m", "fixture"],
                     # the identity tkd's git commits with
                     ["config", "user.name", "tk"],
                     ["config", "user.email", "tk@example.invalid"]):
            git(root, home, *args)
    if fixture.get("upstream"):
        if not fixture.get("git"):
            raise AssertionError('fixture.upstream needs "git": true')
        # A branch at HEAD that HEAD's branch tracks: level with it.
        git(root, home, "branch", "-q", "upstream")
        git(root, home, "branch", "-q", "--set-upstream-to=upstream")
    return make_hook(fixture, root, home)  # after the commit, which would run it


def release_hook(fifo: Optional[str]) -> None:
    """Lets a pre-commit hook that waits on release.fifo (beside fifo) go
    on; nothing when no hook waits there."""
    if fifo is None:
        return
    release = os.path.join(os.path.dirname(fifo), "release.fifo")
    if not os.path.exists(release):
        return
    try:
        fd = os.open(release, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return  # no hook is reading
    try:
        os.write(fd, b"go\n")
    except BrokenPipeError:
        pass  # the hook read an earlier "go" and closed since the open
    finally:
        os.close(fd)


def head_commits(root: str, home: str) -> int:
    """How many commits HEAD of root has."""
    env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1")
    out = subprocess.run(["git", "-C", root, "rev-list", "--count", "HEAD"],
                         env=env, check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def method_types(method: str, served: Dict[str, control_pb2.MethodInfo]
                 ) -> Tuple[Type[Message], Type[Message]]:
    """The request and reply classes: from the generated tk.v1's descriptors, else
    by the names the server gives in ListMethods (test methods have no
    .proto)."""
    req, rep = tk.request_class(method), tk.reply_class(method)
    if req is not None and rep is not None:
        return req, rep
    info = served.get(method)
    if info is None:
        raise AssertionError("%s: no request/reply type known (give "
                             "payload_base64)" % method)
    return tk.message_class(info.request_type), tk.message_class(info.reply_type)


def subset(want: Any, got: Any) -> bool:
    """Every key of want is in got with a value that matches: objects by
    subset, arrays element by element (same length), the rest equal."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(
            k in got and subset(v, got[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(want) == len(got) and all(
            subset(w, g) for w, g in zip(want, got))
    return bool(want == got)


def enum_name(cls: type, value: int) -> str:
    try:
        return str(cls(value).name)
    except ValueError:
        return str(value)


class TkcallStatus:
    """tkcall's status line (stderr) read back into what check() asks of a
    tk.Status; an exit 0 without one is OK with nothing else to say."""

    class _Cancellation:
        def __init__(self, c: Dict[str, Any]) -> None:
            self.cause = tk.Cause[c["cause"]].value if "cause" in c else 0
            self.process_killed = c.get("processKilled", False)
            self.write_completed = c.get("writeCompleted", False)

    def __init__(self, exit_code: int, stderr: str) -> None:
        lines = [ln for ln in stderr.splitlines() if ln.startswith("{")]
        st: Dict[str, Any] = json.loads(lines[-1]) if lines else {}
        if not st and exit_code != 0:
            raise AssertionError("tkcall exit %d without a status: %s"
                                 % (exit_code, stderr))
        self.code_name = st.get("code", "OK")
        self.ok = self.code_name == "OK"
        if self.ok != (exit_code == 0):
            raise AssertionError("tkcall exit %d with status %s"
                                 % (exit_code, self.code_name))
        self.reason = st.get("reason", "")
        self.from_server = st.get("fromServer", True)
        self.partial = st.get("partial", False)
        self.cancellation = self._Cancellation(st.get("cancellation", {}))
        if self.ok and "tkcall: partial reply:" in stderr:
            # An OK reply prints no status line; its notice says that tkd
            # stopped at a limit (cause LIMIT).
            self.partial = True
            self.cancellation.cause = tk.Cause.LIMIT.value
        self.line = stderr

    def __str__(self) -> str:
        return self.line


class TkcallCall:
    """One call made by running tkcall."""

    def __init__(self, addr: str, method: str, request: Dict[str, Any],
                 timeout_ms: int, proto_json: bool) -> None:
        argv = [tkproc.program("TKCALL"), "--addr", addr, "-o", "json",
                "--timeout", "%dms" % timeout_ms,
                "-d", json.dumps(request), method]
        if proto_json:
            argv.insert(1, "--proto-json")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self._result: Optional[Tuple[TkcallStatus, Any]] = None

    def result(self) -> Tuple[TkcallStatus, Any]:
        if self._result is None:
            out, err = self.p.communicate(timeout=120)
            st = TkcallStatus(self.p.returncode, err)
            self._result = (st, json.loads(out) if st.ok else None)
        return self._result


class TsStatus:
    """The status the TypeScript client reported, as check() reads it."""

    class _Cancellation:
        def __init__(self, st: Dict[str, Any]) -> None:
            self.cause = tk.Cause[st["cause"]].value
            self.process_killed = st["process_killed"]
            self.write_completed = st["write_completed"]

    def __init__(self, st: Dict[str, Any]) -> None:
        self.code_name = st["code"]
        self.ok = self.code_name == "OK"
        self.reason = st["reason"]
        self.from_server = st["from_server"]
        self.partial = st["partial"]
        self.cancellation = self._Cancellation(st)
        self.line = json.dumps(st)

    def __str__(self) -> str:
        return self.line


class TsDriver:
    """The node program that makes a case's calls with client/ts
    (client/ts/test/conformance-driver.ts): JSON commands on its stdin,
    JSON events on its stdout, read by a thread."""

    def __init__(self, addr: str) -> None:
        self.p = subprocess.Popen(["node", TS_DRIVER, addr],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        self._events: Dict[Tuple[str, int], Dict[str, Any]] = {}
        self._cv = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ids = 0

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            ev = json.loads(line)
            with self._cv:
                self._events[(ev["event"], ev["id"])] = ev
                self._cv.notify_all()
        with self._cv:
            self._eof = True
            self._cv.notify_all()

    def send(self, cmd: Dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()

    def wait(self, event: str, ident: int, timeout: float = 120) -> Dict[str, Any]:
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                err = self._events.get(("error", ident))
                if err is not None:
                    raise AssertionError("the TypeScript driver: %s" % err["error"])
                ev = self._events.get((event, ident))
                if ev is not None:
                    return ev
                left = end - time.monotonic()
                if self._eof or left <= 0:
                    raise AssertionError("the TypeScript driver %s before %s of call %d"
                                         % ("exited" if self._eof else "timed out",
                                            event, ident))
                self._cv.wait(left)

    def start(self, cmd: Dict[str, Any]) -> "TsCall":
        self._ids += 1
        cmd = dict(cmd, op="start", id=self._ids)
        self.send(cmd)
        started = self.wait("started", self._ids)
        return TsCall(self, self._ids, int(started["call_id"]))

    def close(self) -> None:
        if self.p.stdin is not None:
            self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._reader.join()
        if self.p.stdout is not None:
            self.p.stdout.close()


class TsCall:
    """One call made by the TypeScript client."""

    def __init__(self, driver: TsDriver, ident: int, call_id: int) -> None:
        self.driver, self.ident, self.call_id = driver, ident, call_id

    def cancel(self) -> str:
        self.driver.send({"op": "cancel", "id": self.ident})
        ev = self.driver.wait("cancelled", self.ident)
        if "error" in ev:
            raise AssertionError("the TypeScript client's cancel: %s" % ev["error"])
        return str(ev["outcome"])

    def result(self) -> Tuple[TsStatus, Any]:
        ev = self.driver.wait("done", self.ident)
        return TsStatus(ev["status"]), ev["reply"]


class Case:
    """One case being run: its directory, fixture and server."""

    def __init__(self, test: unittest.TestCase, case: Dict[str, Any],
                 workdir: str) -> None:
        self.t, self.case = test, case
        self.workdir = workdir
        self.root = os.path.join(workdir, "root")
        os.mkdir(self.root)
        self.fifo = make_fixture(case.get("fixture"), self.root, workdir)
        kind = case.get("server", "tkd")
        if kind == "tkd":
            self.server, self.addr = tkproc.start_tkd(
                workdir, [self.root], case.get("server_args"))
        elif kind == "testd":
            self.server, self.addr = tkproc.start_testd(workdir)
        else:
            raise AssertionError("unknown server %r (tkd or testd)" % kind)

    def request(self, served: Dict[str, control_pb2.MethodInfo]
                ) -> Tuple[Any, type]:
        """(the request: a message, or bytes; the reply type)."""
        if "payload_base64" in self.case:
            return base64.b64decode(self.case["payload_base64"], validate=True), bytes
        req_cls, rep_cls = method_types(self.case["method"], served)
        msg: Message = req_cls()
        jsonform.from_dict(substitute(self.case.get("request", {}), self.root),
                           msg, self.proto_json())
        return msg, rep_cls

    def proto_json(self) -> bool:
        """The case's form of bytes: "json": "proto3" is the proto3 mapping
        (base64), the default "text" tkcall's text form."""
        form = self.case.get("json", "text")
        if form not in ("text", "proto3"):
            raise AssertionError('json: %r is neither "text" nor "proto3"' % form)
        return form == "proto3"

    def cancel(self, call: Any) -> str:
        """Cancels the call (a tk.Call, or a TsCall) from where the case
        says, once the server printed after_output, or once the fixture's
        hook announced itself (after "hook": run waited for it)."""
        how = self.case["cancel"]
        if "after" in how and (how["after"] != "hook" or self.fifo is None):
            raise AssertionError('cancel.after: %r ("hook", with fixture.hook)'
                                 % how["after"])
        if "after_output" in how:
            self.server.wait_output(how["after_output"])
        where = how.get("from", "same_connection")
        if where == "same_connection" and isinstance(call, TsCall):
            return call.cancel()
        if where == "same_connection":
            return enum_name(tk.CancelOutcome, call.cancel())
        self.t.assertEqual(where, "other_connection")
        with tk.Client(self.addr) as other:
            reply = other.control.cancel(call_id=call.call_id, timeout=5)
        return enum_name(tk.CancelOutcome, reply.outcome)

    def run(self) -> None:
        with tk.Client(self.addr) as client:
            served = {m.name: m for m in
                      client.control.list_methods(timeout=10).methods}
            for need in self.case.get("needs", []):
                if need not in served:
                    why = ("the server does not serve %s (not in "
                           "tk.v1.Control/ListMethods)" % need)
                    if not ALLOW_SKIP:
                        self.t.fail(why + "; TK_CONFORMANCE_ALLOW_SKIP=1 "
                                    "skips such a case")
                    self.t.skipTest(why)
            if CLIENT == "tkcall":
                self.run_tkcall(client)
                return
            if CLIENT == "ts":
                self.run_ts(client, served)
                return
            request, reply_type = self.request(served)
            timeout = self.case.get("timeout_ms", DEFAULT_TIMEOUT_MS) / 1000
            occupier = self.occupy(client, served)
            call: tk.Call[Any] = client.start(
                self.case["method"], request, timeout=timeout,
                reply_type=reply_type)
            outcome = None
            if occupier is not None:
                status = call.status()
                self.free(occupier)
            else:
                if self.fifo is not None:  # the call is in git, in the hook
                    wait_hook(self.fifo, self.case["name"])
                outcome = self.cancel(call) if "cancel" in self.case else None
                # The Python client asks tkd about a late reply while the
                # caller waits: wait while the release waits for the
                # question.
                waiter = threading.Thread(target=call.status)
                waiter.start()
                released = False
                try:
                    self.release()
                    released = True
                finally:
                    if not released:  # the call ends, and the case fails
                        release_hook(self.fifo)
                    waiter.join()
                status = call.status()
            reply = call.result() if status.ok else None
        self.check(status, reply, outcome)

    def run_tkcall(self, client: tk.Client) -> None:
        """The case through tkcall; an occupying call, which is not the
        one under test, through the Python client."""
        for cannot in ("cancel", "payload_base64"):
            if cannot in self.case:
                SKIPPED_TKCALL.append(self.case["name"])
                self.t.skipTest("tkcall runs no case with %s" % cannot)
        request = substitute(self.case.get("request", {}), self.root)
        timeout_ms = self.case.get("timeout_ms", DEFAULT_TIMEOUT_MS)
        occupier = self.occupy(client, {})
        call = TkcallCall(self.addr, self.case["method"], request, timeout_ms,
                          self.proto_json())
        status, reply, _ = self.finish(call, occupier)
        self.check(status, reply, None)

    def run_ts(self, client: tk.Client,
               served: Dict[str, control_pb2.MethodInfo]) -> None:
        """The case through the TypeScript client (a node program told when
        to call and cancel); an occupying call, which is not the one under
        test, through the Python client."""
        cmd: Dict[str, Any] = {
            "method": self.case["method"],
            "timeout_ms": self.case.get("timeout_ms", DEFAULT_TIMEOUT_MS),
            "json": "proto3" if self.proto_json() else "text",
        }
        if "payload_base64" in self.case:
            cmd["payload_base64"] = self.case["payload_base64"]
        else:
            req_cls, rep_cls = method_types(self.case["method"], served)
            cmd["request"] = substitute(self.case.get("request", {}), self.root)
            cmd["request_type"] = req_cls.DESCRIPTOR.full_name
            cmd["reply_type"] = rep_cls.DESCRIPTOR.full_name
        occupier = self.occupy(client, served)
        driver = TsDriver(self.addr)
        try:
            status, reply, outcome = self.finish(driver.start(cmd), occupier)
        finally:
            driver.close()
        self.check(status, reply, outcome)

    def finish(self, call: Any, occupier: Any) -> Tuple[Any, Any, Any]:
        """(status, reply, cancel outcome) of a call of a program (tkcall,
        the TypeScript driver) whose result() gives (status, reply): behind
        the occupying call when there is one, else once the held call (in
        the hook, in testd) is let go, cancelled first where the case
        says."""
        if occupier is not None:
            status, reply = call.result()
            self.free(occupier)
            return status, reply, None
        if self.fifo is not None:  # the call is in git, in the hook
            wait_hook(self.fifo, self.case["name"])
        outcome = self.cancel(call) if "cancel" in self.case else None
        try:
            self.release()
        finally:
            release_hook(self.fifo)  # no-op once released
        status, reply = call.result()
        return status, reply, outcome

    def occupy(self, client: tk.Client,
               served: Dict[str, control_pb2.MethodInfo]
               ) -> Optional[tk.Call[Any]]:
        """"occupy": the case's request with a long deadline, through the
        Python client, held in the hook (so holding the worker) while the
        case's call waits; None without it."""
        if not self.case.get("occupy"):
            return None
        msg, reply_type = self.request(served)
        occupier: tk.Call[Any] = client.start(
            self.case["method"], msg, timeout=30, reply_type=reply_type)
        wait_hook(self.fifo or "", self.case["name"])
        return occupier

    def free(self, occupier: tk.Call[Any]) -> None:
        """Lets the occupying call go on; it must end OK."""
        self.release()
        occupied = occupier.status()
        self.t.assertTrue(occupied.ok, "the occupying call: %s" % occupied)

    def release(self) -> None:
        """Lets the pre-commit hook go on, once the server logged the
        case's release.after_output (if any)."""
        after = self.case.get("release", {}).get("after_output")
        if after is not None:
            self.server.wait_output(after, "stderr")
        release_hook(self.fifo)

    def check(self, st: tk.Status, reply: Any, cancel_outcome: Optional[str]) -> None:
        e = self.case["expect"]
        got = {
            "code": st.code_name,
            "reason": st.reason,
            "cause": enum_name(tk.Cause, st.cancellation.cause),
            "from_server": st.from_server,
        }
        want = {
            "code": e.get("code", "OK"),
            "reason": e.get("reason", ""),
            "cause": e.get("cause", "NONE"),
            "from_server": e.get("from_server", True),
        }
        if "partial" in e:
            got["partial"], want["partial"] = st.partial, e["partial"]
        if "process_killed" in e:
            got["process_killed"] = st.cancellation.process_killed
            want["process_killed"] = e["process_killed"]
        if "write_completed" in e:
            got["write_completed"] = st.cancellation.write_completed
            want["write_completed"] = e["write_completed"]
        if "head_commits" in e:
            got["head_commits"] = head_commits(self.root, self.workdir)
            want["head_commits"] = e["head_commits"]
        if "cancel_outcome" in e:
            got["cancel_outcome"] = cancel_outcome
            want["cancel_outcome"] = e["cancel_outcome"]
        self.t.assertEqual(got, want, "status: %s" % st)
        if "reply" in e:
            if isinstance(reply, dict):  # tkcall's stdout or client/ts's JSON
                as_json = reply
            else:
                self.t.assertIsInstance(reply, Message)
                as_json = jsonform.to_dict(reply, self.proto_json())
            self.t.assertTrue(subset(e["reply"], as_json),
                              "reply %s lacks %s" % (as_json, e["reply"]))

    def close(self) -> None:
        release_hook(self.fifo)  # a hook still waiting goes on
        self.server.stop()


class Conformance(unittest.TestCase):
    """One test per case of cases.json, added below."""


def _test(case: Dict[str, Any]) -> Any:
    def test(self: unittest.TestCase) -> None:
        with tkproc.tempdir("conf") as workdir:
            c = Case(self, case, workdir)
            try:
                c.run()
            finally:
                c.close()
        RAN.append(case["name"])
    test.__doc__ = case.get("about")
    return test


def _load() -> List[str]:
    with open(CASES, encoding="utf-8") as f:
        table = json.load(f)
    for case in table["cases"]:
        setattr(Conformance, "test_" + case["name"], _test(case))
    return [case["name"] for case in table["cases"]]


NAMES = _load()


def main() -> int:
    """Runs the table; fails unless every case ran to its verdict (or was
    skipped, where TK_CONFORMANCE_ALLOW_SKIP=1 allows it). Test names on
    the command line run those alone, without the count."""
    if CLIENT == "ts":
        missing = [p for p in (os.path.join(TS_DIR, "node_modules"), TS_DRIVER)
                   if not os.path.exists(p)]
        if shutil.which("node") is None or missing:
            print("conformance (ts): %s; run npm ci in %s (npm ci --prefix "
                  "client/ts: installs and builds it)"
                  % ("node is not installed (apt-get install nodejs npm)"
                     if shutil.which("node") is None
                     else "missing " + ", ".join(missing), TS_DIR),
                  file=sys.stderr)
            return 1
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if len(sys.argv) > 1:
        return 0
    skipped = len(result.skipped)
    if SKIPPED_TKCALL:
        print("conformance (tkcall): not expressible with tkcall: %s"
              % ", ".join(SKIPPED_TKCALL))
    if len(RAN) + skipped != len(NAMES):
        print("conformance: %d of %d cases ran, %d skipped; never ran: %s"
              % (len(RAN), len(NAMES), skipped,
                 sorted(set(NAMES) - set(RAN))), file=sys.stderr)
        return 1
    print("conformance: %d of %d cases ran, %d skipped%s"
          % (len(RAN), len(NAMES), skipped,
             " (TK_CONFORMANCE_ALLOW_SKIP=1)" if skipped > len(SKIPPED_TKCALL)
             else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
