# SPDX-License-Identifier: MIT
"""tkd's log for machines (issue 19's first part): --log-format json writes
one JSON object a line, every line, and a call's line has the call's
fields apart (method, call_id, peer, code, reason, elapsed_us, cause),
and every other line the values its message names (a listener's url, the
listener watch's counts, reasons and limits, the descriptors, a
shutdown's calls, counts and times, a schema migration's version), so
that no number or id is only inside msg (numbers_are_members);
under systemd (stderr is the stream JOURNAL_STREAM names) every line
starts with the syslog priority journald reads. The negative controls:
the default text lines are no JSON, a JOURNAL_STREAM that names another
file adds no priority, and an unknown format is refused at start.

Each tkd's stderr is a pipe this test reads line by line: the first line
("listening on") says tkd serves, its end says tkd has exited. Nothing
waits by sleeping. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import signal
import socket
import struct
import subprocess
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

import fleetfx
import tkproc

import tk
from tk.v1 import control_pb2, git_pb2, orders_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0


def strict_object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """json's object hook that refuses a member named twice."""
    names = [k for k, _ in pairs]
    if len(names) != len(set(names)):
        raise ValueError("a member named twice: %r" % names)
    return dict(pairs)


def parse(line: str) -> Dict[str, Any]:
    """One line as one JSON object, strictly (no control characters in a
    string, no NaN, no member named twice)."""
    def no_constant(name: str) -> object:
        raise ValueError("not JSON: %s" % name)
    obj = json.loads(line, strict=True, object_pairs_hook=strict_object,
                     parse_constant=no_constant)
    if not isinstance(obj, dict):
        raise ValueError("not an object: %r" % line)
    return obj


def member_digits(v: Any, into: set) -> None:
    """Every run of digits in v's values (an int's decimal, a string's
    runs), nested objects' too."""
    if isinstance(v, dict):
        for x in v.values():
            member_digits(x, into)
    elif isinstance(v, bool):
        pass
    elif isinstance(v, int):
        into.add(str(v))
    elif isinstance(v, str):
        into.update(re.findall(r"\d+", v))


def unmembered_numbers(o: Dict[str, Any]) -> List[str]:
    """The runs of digits in o's msg that are no member's value, nor in
    one: a number or id a machine reading the line would have to parse
    out of the message; not those of a name (libgit2, tk.v1). A float's
    digits (the memory line's MiB) or a
    version in prose would be such runs; no line of these tests has one."""
    have: set = set()
    member_digits({k: v for k, v in o.items() if k not in ("msg", "time")},
                  have)
    return [d for d in re.findall(r"(?<!\w)\d+", o["msg"])
            if d not in have]


# NNG's SP header of a REQ peer (tests/support/spwire.h).
SP_REQ = b"\x00SP\x00\x00\x30\x00\x00"


def sp_connect(path: str) -> socket.socket:
    """A connection to tkd's ipc socket at path, past the SP handshake."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(WAIT_S)
    s.connect(path)
    s.sendall(SP_REQ)
    if len(s.recv(8, socket.MSG_WAITALL)) != 8:
        raise AssertionError("tkd did not answer the SP handshake")
    return s


class Tkd:
    """A tkd whose stderr is a pipe read here; JOURNAL_STREAM set to the
    pipe's device and inode when journal is True, or to those of another
    file when it is "other"."""

    def __init__(self, base: str, options: List[str],
                 journal: object = None,
                 path: Optional[str] = None) -> None:
        self.addr = "ipc://%s/tkd.sock" % base
        r, w = os.pipe()
        env = dict(os.environ, HOME=base, XDG_CONFIG_HOME=base,
                   GIT_CONFIG_NOSYSTEM="1")
        env.pop("JOURNAL_STREAM", None)
        if path is not None:
            env["PATH"] = path
        if journal is not None:
            st = os.fstat(w) if journal is True else os.stat(base)
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
        self.proc = subprocess.Popen(
            [tkproc.program("TKD"), "--listen", self.addr,
             "--log-level", "info", "--root", base] + options,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w,
            start_new_session=True, env=env)
        os.close(w)
        self.err = os.fdopen(r, "r", encoding="utf-8", errors="strict")
        self.lines: List[str] = []

    def first_line(self) -> str:
        line = self.err.readline()
        self.lines.append(line)
        return line

    def wait_line(self, want: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
        """Reads tkd's JSON lines until one that want() takes: the line
        says tkd has seen what the test did (the watchdog that runs this
        test bounds the wait)."""
        while True:
            line = self.err.readline()
            if line == "":
                raise AssertionError("tkd's stderr ended: %r" % self.lines)
            self.lines.append(line)
            obj = parse(line)
            if want(obj):
                return obj

    def stop(self) -> List[str]:
        """SIGTERM, and every line it wrote (newlines removed)."""
        self.proc.send_signal(signal.SIGTERM)
        self.lines += self.err.readlines()  # to the pipe's end: tkd exited
        self.err.close()
        self.assertion_exit = self.proc.wait(timeout=WAIT_S)
        return [ln.rstrip("\n") for ln in self.lines]


class LogFormat(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tkproc.tempdir("log")
        self.tkd: Optional[Tkd] = None

    def tearDown(self) -> None:
        if self.tkd is not None and self.tkd.proc.poll() is None:
            self.tkd.proc.kill()
            self.tkd.proc.wait(timeout=WAIT_S)
        self.dir.cleanup()

    def start(self, options: List[str], journal: object = None) -> Tkd:
        self.tkd = Tkd(self.dir.name, options, journal)
        self.assertIn("listening on", self.tkd.first_line())
        return self.tkd

    def calls(self, d: Tkd) -> Tuple[int, int]:
        """A Ping, and a RevParse outside the roots (PERMISSION_DENIED with
        a reason); their call ids."""
        with tk.Client(d.addr) as c:
            ping = c.start("tk.v1.Control/Ping", control_pb2.PingRequest())
            ping.result()
            bad = c.start("tk.v1.Git/RevParse",
                          git_pb2.GitRevParseRequest(repo="/", rev="HEAD"))
            with self.assertRaises(tk.TkError):
                bad.result()
            return ping.call_id, bad.call_id

    def test_json_lines(self) -> None:
        d = self.start(["--log-format", "json", "--metrics-listen",
                        "http://127.0.0.1:0"])
        ping_id, bad_id = self.calls(d)
        lines = d.stop()
        self.assertEqual(d.assertion_exit, 0)
        objs = [parse(ln) for ln in lines]  # every line, or it raises
        self.assertGreater(len(objs), 4)
        for o in objs:
            self.assertRegex(str(o["time"]),
                             r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            self.assertIn(o["level"], ("error", "warn", "info", "debug"))
            self.assertIsInstance(o["msg"], str, o)  # every line, a call's too
            self.assertNotEqual(o["msg"], "", o)
        self.assertIn("listening on", objs[0]["msg"])
        # The values a line names are members of their own, too.
        self.assertEqual(objs[0]["url"], d.addr)
        self.assertEqual(objs[0]["read_only"], 0)
        self.assertIsInstance(objs[0]["max_connections"], int)
        self.assertIsInstance(objs[0]["version"], str)
        metrics = [o for o in objs if "metrics_url" in o]
        self.assertEqual(len(metrics), 1, objs)
        self.assertRegex(metrics[0]["metrics_url"],
                         r"^http://127\.0\.0\.1:\d+/metrics$")
        self.assertIn(metrics[0]["metrics_url"], metrics[0]["msg"])
        roots = [o["root"] for o in objs if "root" in o]
        self.assertEqual(roots, [self.dir.name])
        fds = [o for o in objs if "fds_limit" in o]
        self.assertEqual(len(fds), 1, objs)
        self.assertIn("file descriptors: limit %d" % fds[0]["fds_limit"],
                      fds[0]["msg"])
        self.assertIn(", %d in use after start-up: %d kept" %
                      (fds[0]["fds_in_use"], fds[0]["fds_for_work"]),
                      fds[0]["msg"])
        calls = {o["call_id"]: o for o in objs if o.get("event") == "call"}
        ping = calls[ping_id]
        self.assertEqual(ping["method"], "tk.v1.Control/Ping")
        self.assertEqual(ping["code"], "OK")
        self.assertEqual(ping["reason"], "")
        self.assertEqual(ping["cause"], "NONE")
        self.assertEqual(ping["peer"]["uid"], os.getuid())
        self.assertEqual(ping["peer"]["pid"], os.getpid())
        self.assertIsInstance(ping["peer"]["conn"], int)
        self.assertIsInstance(ping["elapsed_us"], int)
        self.assertIn("call method=tk.v1.Control/Ping code=OK", ping["msg"])
        bad = calls[bad_id]
        self.assertEqual(bad["method"], "tk.v1.Git/RevParse")
        self.assertEqual(bad["code"], "PERMISSION_DENIED")
        self.assertEqual(bad["reason"], "PATH_OUTSIDE_ROOT")
        self.assertEqual(bad["peer"]["conn"], ping["peer"]["conn"])
        sig = [o for o in objs if o["msg"].startswith("signal ")]
        self.assertEqual(len(sig), 1, objs)
        self.assertEqual(sig[0]["signal"], signal.SIGTERM)
        self.assertEqual(sig[0]["signal_name"], "SIGTERM")
        self.assertEqual(objs[-1]["msg"], "shutdown complete")
        self.assertEqual(objs[-1]["outlived"], 0)
        for o in objs:
            self.assertEqual(unmembered_numbers(o), [], o)

    def test_watch_lines(self) -> None:
        """The listener watch's lines (a connection refused at the limit, a
        frame over --max-request-bytes) have their values as members: the
        listener's url, the connections, the reason
        (tk_connections_refused_total's) and the limit the line names."""
        d = self.start(["--log-format", "json", "--max-connections", "1",
                        "--max-request-bytes", "4096"])
        path = d.addr[len("ipc://"):]
        kept = sp_connect(path)
        # The one connection the limit takes is open: the next is closed
        # as it comes, before its SP header.
        refused = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        refused.settimeout(WAIT_S)
        refused.connect(path)
        try:
            refused.sendall(SP_REQ)
            got = refused.recv(8, socket.MSG_WAITALL)
        except (BrokenPipeError, ConnectionResetError):
            got = b""
        refused.close()
        self.assertLess(len(got), 8, "a connection over the limit was served")
        # Found by its message, which the text line says too.
        limit = d.wait_line(lambda o: "refused 1 connection(s): 1 were open"
                            in o["msg"])
        self.assertEqual(limit["level"], "warn")
        self.assertEqual(limit.get("url"), d.addr, limit)
        self.assertEqual(limit.get("connections"), 1, limit)
        self.assertEqual(limit.get("reason"), "LIMIT", limit)
        self.assertEqual(limit.get("max_connections"), 1, limit)
        # A frame over the limit on the connection kept closes it.
        kept.sendall(b"\x01" + struct.pack(">Q", 4097))
        self.assertEqual(kept.recv(1), b"")
        kept.close()
        big = d.wait_line(lambda o: "1 connection(s) closed: a request "
                          "frame larger than the limit, 4096 bytes" in o["msg"])
        self.assertEqual(big["level"], "warn")
        self.assertEqual(big.get("url"), d.addr, big)
        self.assertEqual(big.get("connections"), 1, big)
        self.assertEqual(big.get("reason"), "REQUEST_TOO_LARGE", big)
        self.assertEqual(big.get("max_request_bytes"), 4096, big)
        self.assertNotIn("max_connections", big)
        for ln in d.stop():
            parse(ln)

    def blocking_repo(self) -> Tuple[str, str]:
        """A repository in the root whose pre-commit hook says its process
        group on a fifo, then blocks; (its path, the fifo)."""
        base = self.dir.name
        repo = os.path.join(base, "r")
        os.mkdir(repo)
        env = dict(os.environ, HOME=base, GIT_CONFIG_NOSYSTEM="1")
        for argv in (["init", "-q"], ["config", "user.name", "tk"],
                     ["config", "user.email", "tk@example.invalid"],
                     ["commit", "-q", "--allow-empty", "-m", "first"]):
            subprocess.run(["git", "-C", repo] + argv, check=True, env=env)
        entered = os.path.join(base, "entered.fifo")
        os.mkfifo(entered, 0o600)
        hook = os.path.join(repo, ".git", "hooks", "pre-commit")
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nps -o pgid= -p $$ > '%s'\nexec sleep 1000\n"
                    % entered)
        os.chmod(hook, 0o755)
        return repo, entered

    def test_second_signal_line(self) -> None:
        """A second SIGTERM while a write holds the shutdown: in JSON, its
        line is JSON too (it was the bare text line), and tkd exits 130."""
        repo, entered = self.blocking_repo()
        d = self.start(["--log-format", "json", "--shutdown-grace-ms",
                        "60000"])
        with tk.Client(d.addr) as c:
            call = c.git.start_commit(repo=repo, message="second",
                                      allow_empty=True, timeout=60)
            tkproc.read_line(entered)
            d.proc.send_signal(signal.SIGTERM)
            d.wait_line(lambda o: "waiting for" in o["msg"])
            lines = d.stop()  # the second SIGTERM
            call.status(timeout=WAIT_S)
        self.assertEqual(d.assertion_exit, 130, lines)
        last = parse(lines[-1])
        self.assertEqual(last["msg"], "tkd: second signal, exiting now")
        self.assertEqual(last["signal"], signal.SIGTERM)

    def test_shutdown_lines(self) -> None:
        """A Commit whose pre-commit hook blocks outlives a grace of 300
        ms: the shutdown's lines name the call, the counts and the times
        as members (the hook says its process group on a fifo: no sleep)."""
        repo, entered = self.blocking_repo()
        d = self.start(["--log-format", "json", "--shutdown-grace-ms", "300"])
        with tk.Client(d.addr) as c:
            call = c.git.start_commit(repo=repo, message="second",
                                      allow_empty=True, timeout=60)
            pgid = int(tkproc.read_line(entered))
            lines = d.stop()
            call.status(timeout=WAIT_S)
        self.assertEqual(d.assertion_exit, 3, lines)  # calls outlived
        objs = [parse(ln) for ln in lines]
        waiting = [o for o in objs if "waiting for" in o["msg"]]
        self.assertEqual(waiting[0]["writes"], 1, objs)
        running = [o for o in objs if "still running after" in o["msg"]]
        self.assertEqual(running[0]["running"], 1, objs)
        self.assertEqual(running[0]["shutdown_grace_ms"], 300)
        self.assertIsInstance(running[0]["shutdown_stop_ms"], int)
        stopped = [o for o in objs
                   if "grace over, stopping the write" in o["msg"]]
        self.assertEqual(len(stopped), 1, objs)
        w = stopped[0]
        self.assertEqual(w["method"], "tk.v1.Git/Commit")
        self.assertEqual(w["kind"], "WRITE")
        self.assertEqual(w["call_id"], call.call_id)
        self.assertEqual(w["pid"], pgid)
        self.assertIsInstance(w["conn"], int)
        self.assertGreaterEqual(w["running_ms"], 300)
        out = [o for o in objs if "outlived the grace of" in o["msg"]]
        self.assertEqual((out[0]["outlived"], out[0]["ended"], out[0]["left"],
                          out[0]["shutdown_grace_ms"]), (1, 1, 0, 300), objs)
        self.assertEqual(objs[-1]["outlived"], 1)
        self.assertIn("not clean", objs[-1]["msg"])
        for o in objs:
            self.assertEqual(unmembered_numbers(o), [], o)

    def test_orders_lines(self) -> None:
        """With --pg, the start-up line names the pool; against a private
        PostgreSQL, the first Orders call's migration and connection lines
        name the version, the database and the pool, and (at debug, a
        second tkd on the migrated schema) libpq's notices are members."""
        d = self.start(["--log-format", "json", "--pg",
                        "host=%s/nowhere dbname=x" % self.dir.name])
        objs = [parse(ln) for ln in d.stop()]
        first = [o for o in objs if "the first Orders call" in o["msg"]]
        self.assertIsInstance(first[0]["pool"], int, objs)
        for o in objs:
            self.assertEqual(unmembered_numbers(o), [], o)
        if not os.access(fleetfx.PG_CLUSTER, os.X_OK):
            self.skipTest("no tools/pg-cluster")
        try:
            pg = fleetfx.Cluster()
        except SystemExit:
            self.skipTest("no PostgreSQL 15 here")
        try:
            for level in ("info", "debug"):
                d = self.start(["--log-format", "json", "--pg", pg.dsn,
                                "--log-level", level])
                with tk.Client(d.addr) as c:
                    c.start("tk.v1.Orders/GetOrder",
                            orders_pb2.GetOrderRequest(order_id=1)).status(
                                timeout=WAIT_S)
                objs = [parse(ln) for ln in d.stop()]
                for o in objs:
                    self.assertEqual(unmembered_numbers(o), [], o)
                conn = [o for o in objs if "orders: connected" in o["msg"]]
                self.assertIsInstance(conn[0]["pool"], int, objs)
                dbname = re.search(r"dbname=(\S+)", pg.dsn)
                assert dbname is not None, pg.dsn
                self.assertEqual(conn[0]["database"], dbname[1])
                self.assertIn("host", conn[0])
                if level == "info":
                    mig = [o for o in objs if "schema migration" in o["msg"]]
                    self.assertEqual(mig[0]["version"], 1, objs)
                    self.assertIsInstance(mig[0]["name"], str)
                else:
                    notes = [o for o in objs if "notice" in o]
                    self.assertTrue(notes, objs)
                    self.assertEqual(notes[0]["severity"], "NOTICE")
                    self.assertIn(notes[0]["notice"], notes[0]["msg"])
        finally:
            pg.close()

    def test_git_not_found(self) -> None:
        """No git on PATH: the line names the program (not PATH)."""
        empty = os.path.join(self.dir.name, "bin")
        os.mkdir(empty)
        # Logged before "listening on": read up to it.
        d = self.tkd = Tkd(self.dir.name, ["--log-format", "json"], None,
                           empty)
        d.wait_line(lambda o: "listening on" in o["msg"])
        objs = [parse(ln) for ln in d.stop()]
        nogit = [o for o in objs if "no git program" in o["msg"]]
        self.assertEqual(nogit[0]["program"], "git", objs)
        self.assertNotIn("PATH", nogit[0])

    def test_bytes_of_no_text(self) -> None:
        """A root whose name is no UTF-8 and holds a control character:
        its log line is still JSON, the stray byte written \\xNN as in
        tkd's replies, the control character \\u0001."""
        odd = os.path.join(os.fsencode(self.dir.name), b"r\xff\x01")
        os.mkdir(odd)
        d = self.start(["--log-format", "json", "--root", os.fsdecode(odd)])
        msgs = [parse(ln).get("msg", "") for ln in d.stop()]
        self.assertIn("root %s/r\\xFF\x01" % self.dir.name, msgs)

    def test_text_is_the_default(self) -> None:
        d = self.start([])
        ping_id, _ = self.calls(d)
        lines = d.stop()
        self.assertIn(" tkd info: call method=tk.v1.Control/Ping code=OK",
                      "\n".join(lines))
        for ln in lines:
            with self.assertRaises(ValueError, msg=ln):
                parse(ln)

    def test_journal_priorities(self) -> None:
        d = self.start(["--log-format", "json"], journal=True)
        self.calls(d)
        lines = d.stop()
        for ln in lines:
            self.assertRegex(ln, r"^<[3467]>\{")
            parse(ln[3:])
        self.assertTrue(lines[0].startswith("<6>{"))  # info
        self.assertTrue(any(ln.startswith("<6>{\"time\"") and
                            "\"event\":\"call\"" in ln for ln in lines))

    def test_journal_priorities_in_text(self) -> None:
        d = self.start([], journal=True)
        lines = d.stop()
        self.assertTrue(lines[0].startswith("<6>"), lines[0])
        self.assertIn(" tkd info: ", lines[0])

    def test_another_stream_gets_no_priority(self) -> None:
        d = self.start(["--log-format", "json"], journal="other")
        lines = d.stop()
        for ln in lines:
            self.assertTrue(ln.startswith("{"), ln)
            parse(ln)

    def test_unknown_format_refused(self) -> None:
        r = subprocess.run([tkproc.program("TKD"), "--listen",
                            "ipc://%s/x.sock" % self.dir.name,
                            "--log-format", "xml"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           timeout=WAIT_S)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--log-format is text or json, not \"xml\"", r.stderr)


if __name__ == "__main__":
    unittest.main()
