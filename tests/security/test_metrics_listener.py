# SPDX-License-Identifier: MIT
"""The metrics listener (tkd --metrics-listen), attacked as issue 31 did:

- 120 connections that never finish their request headers held tkd's
  descriptors for good (NNG's HTTP server times nothing out), and RPC
  Pings over ipc failed. Now a connection whose headers have not come
  within --metrics-header-timeout-ms is closed and counted, and beyond
  --metrics-max-connections one is closed as it comes and counted: the
  flood, under a low RLIMIT_NOFILE, leaves Pings over ipc served, and
  every one of its connections closed.
- The header timeout is a deadline from the accept, not an idle timeout:
  a peer that trickles a byte at a time is closed all the same. A request
  sent in time is answered (the negative control).
- The listener's cap is its own: the RPC listeners serve their own
  --max-connections while it is full, and refuse none. Whatever
  --metrics-max-connections says, it takes no more than its part of the
  descriptors (limits.c), so ipc and the work keep theirs.
- A listener bound to anything but loopback is warned of at start;
  loopback is not (the negative controls).
- A tight loop of scrapers costs one rendering per --metrics-min-interval-ms
  (the renderings are counted by tk_metrics_http_renders_total, and at
  most 1 + elapsed / interval of them can fit in the time the loop took),
  and every scrape still reads counts from after its request.
  BENCHMARKS.md ("The metrics listener under a scrape loop") measures
  what that does to Pings.

Nothing waits by sleeping: tkd's log says when it serves, a closed
connection is read as EOF (or a reset), /proc counts tkd's descriptors.
Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import re
import select
import signal
import socket
import threading
import time
import unittest
from typing import Dict, List, Optional, Tuple

import tkproc
from exposition import Family, parse_exposition, value
from test_limits import fd_count, nofile_wrapper

import tk
from tk.v1 import control_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0
# tkd's RLIMIT_NOFILE in the floods: below a flood's 120, and above what
# tkd holds at start (35 here; 60 in a -Dportable build, whose events are
# pipes) with room for its listeners' parts (limits.c).
LIMIT = 96
FLOOD = 120  # as the issue measured
PARTIAL = b"GET /metrics HTTP/1.1\r\nHost: tkd\r\n"  # no empty line: unfinished
WARNING = "is not on loopback"
# The log's lines of closed connections (at most one a second a reason).
LIMIT_LOGGED = r"(\d+) connection\(s\) closed as they came: " \
    r"its limit of connections were open"
HEADERS_LOGGED = r"(\d+) connection\(s\) closed: their request headers " \
    r"had not come within --metrics-header-timeout-ms"


def closed_by_peer(s: socket.socket, timeout: float = WAIT_S) -> bool:
    """Whether tkd closes s within timeout: EOF, or a reset (tkd closed it
    with the request unread). Bytes tkd sends first are read past."""
    until = time.monotonic() + timeout
    while True:
        left = until - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            return False
        try:
            if s.recv(65536) == b"":
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True


def exchange(port: int, request: bytes) -> Tuple[int, bytes, str]:
    """request sent on a connection of its own: (status, headers, body),
    the body as long as its Content-Length says (a server may keep the
    connection open)."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < want(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head, body.decode("utf-8")


def http_get(port: int, path: str = "/metrics") -> Tuple[int, str]:
    """One GET on its own connection: (status, body)."""
    status, _, body = exchange(
        port, ("GET %s HTTP/1.1\r\nHost: tkd\r\n\r\n" % path).encode())
    return status, body


def want(data: bytes) -> int:
    """The length of an answer whose headers are in data."""
    head, _, _ = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    return len(head) + 4 + (int(m.group(1)) if m else 1 << 30)


def scrape(port: int) -> Dict[str, Family]:
    status, body = http_get(port)
    assert status == 200, (status, body)
    return parse_exposition(body)


class Listener(unittest.TestCase):
    """A tkd with a metrics listener on loopback."""

    tkd: tkproc.Daemon  # start()'s; tearDown stops them if started
    client: tk.Client

    def start(self, options: List[str], wrapper: Optional[List[str]] = None,
              url: str = "http://127.0.0.1:0") -> None:
        self.tkd, self.addr = tkproc.start_tkd(
            self.dir.name, options=["--metrics-listen", url] + options,
            wrapper=wrapper)
        self.tkd.wait_output("metrics for Prometheus at", "stderr")
        m = re.search(r"metrics for Prometheus at http://\S+:(\d+)/\S*"
                      r"( \((\d+) connections at most\))?",
                      self.tkd.output("stderr"))
        assert m is not None, self.tkd.output("stderr")
        self.port = int(m.group(1))
        # The limit in force (None: a tkd that does not say it).
        self.limit = int(m.group(3)) if m.group(3) else None
        self.client = tk.Client(self.addr)

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("mh")
        self.held: List[socket.socket] = []

    def tearDown(self) -> None:
        for s in self.held:
            s.close()
        if hasattr(self, "client"):
            self.client.close()
        if hasattr(self, "tkd"):
            self.assertEqual(self.tkd.stop(), 0)
        self.dir.cleanup()

    def connect(self, send: bytes = b"") -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT_S)
        self.held.append(s)
        if send:
            s.sendall(send)
        return s

    def stats(self) -> Dict[str, Dict[Tuple[Tuple[str, str], ...], float]]:
        """Control/Stats over ipc: family -> labels -> value (it reads the
        same atomics the scrape does, without the listener)."""
        reply = self.client.call("tk.v1.Control/Stats",
                                 control_pb2.StatsRequest(), timeout=WAIT_S)
        return {f.name: {tuple(sorted((lp.name, lp.value) for lp in m.labels)):
                         m.value for m in f.metrics}
                for f in reply.families}

    def closed(self, reason: str) -> float:
        return self.stats()["tk_metrics_http_closed_total"][
            (("reason", reason),)]

    def open_now(self) -> float:
        return self.stats()["tk_metrics_http_connections"][()]

    def wait_open(self, n: int) -> None:
        """Until tkd holds n connections of the listener (it accepts them
        on its own thread), bounded."""
        until = time.monotonic() + WAIT_S
        while self.open_now() != n:
            if time.monotonic() > until:
                self.fail("tkd holds %d metrics connections, not %d"
                          % (self.open_now(), n))
            time.sleep(0.01)

    def wait_logged(self, pattern: str, n: int) -> None:
        """Until the log's lines matching pattern count n connections."""
        self.tkd.wait_until(
            lambda log: sum(int(x) for x in re.findall(pattern, log)) == n,
            "%d connection(s) logged as %r" % (n, pattern))

    def ping(self, client: Optional[tk.Client] = None) -> None:
        (client or self.client).call("tk.v1.Control/Ping",
                                     control_pb2.PingRequest(), timeout=5)


class Flood(Listener):
    """Issue 31's reproduction: 120 connections that never finish their
    headers, under a low RLIMIT_NOFILE, while Pings come over ipc."""

    def wait_fds(self, at_most: int) -> None:
        pid = self.tkd.proc.pid
        until = time.monotonic() + WAIT_S
        while fd_count(pid) > at_most:
            if time.monotonic() > until:
                self.fail("tkd still holds %d descriptors, not %d"
                          % (fd_count(pid), at_most))
            time.sleep(0.01)

    def test_flood_of_unfinished_headers(self) -> None:
        self.start(["--workers", "2", "--queue-depth", "4"],
                   wrapper=nofile_wrapper("%d:%d" % (LIMIT, LIMIT)))
        self.ping()
        # The descriptors tkd holds with one ipc client and no other.
        base = fd_count(self.tkd.proc.pid)
        flood = [self.connect(PARTIAL) for _ in range(FLOOD)]
        # During the flood: a new ipc connection is accepted and served.
        with tk.Client(self.addr) as fresh:
            self.ping(fresh)
        self.ping()
        # Every connection of the flood is closed by tkd: at once beyond
        # the cap, the others at the header timeout; all counted.
        still = [s for s in flood if not closed_by_peer(s)]
        self.assertEqual(still, [], "%d of %d flood connections still open"
                         % (len(still), FLOOD))
        self.wait_fds(base)
        limit, timed_out = self.closed("LIMIT"), self.closed("HEADER_TIMEOUT")
        self.assertEqual(limit + timed_out, FLOOD)
        self.assertGreaterEqual(timed_out, self.limit or 1)  # the first ones
        self.assertEqual(self.open_now(), 0)
        self.wait_logged(LIMIT_LOGGED, int(limit))
        self.wait_logged(HEADERS_LOGGED, int(timed_out))
        self.ping()


class Part(Listener):
    """The listener takes no more than its part of the descriptors
    (limits.c's split), whatever --metrics-max-connections says: the
    ipc listener and the calls' work keep theirs."""

    def test_limit_is_its_part_of_the_descriptors(self) -> None:
        self.start(["--workers", "2", "--queue-depth", "4",
                    "--metrics-max-connections", "64",
                    "--metrics-header-timeout-ms", "600000"],
                   wrapper=nofile_wrapper("%d:%d" % (LIMIT, LIMIT)))
        limit = self.limit
        assert limit is not None, "tkd logs no limit of the listener"
        self.assertLess(limit, 64)
        pid = self.tkd.proc.pid
        base = fd_count(pid)
        n = 60
        for _ in range(n):
            self.connect(PARTIAL)
        # Until tkd has taken each: kept, or closed as it came.
        until = time.monotonic() + WAIT_S
        while self.open_now() + self.closed("LIMIT") != n:
            if time.monotonic() > until:
                self.fail("tkd took %d of %d connections" % (
                    self.open_now() + self.closed("LIMIT"), n))
            time.sleep(0.01)
        self.assertEqual(self.open_now(), limit)
        self.assertEqual(self.closed("LIMIT"), n - limit)
        self.assertLessEqual(fd_count(pid), base + limit)
        with tk.Client(self.addr) as fresh:  # ipc's part is its own
            self.ping(fresh)
        self.wait_logged(LIMIT_LOGGED, n - limit)


class HeaderTimeout(Listener):
    """--metrics-header-timeout-ms: a deadline from the accept."""

    def test_unfinished_headers_closed_and_counted(self) -> None:
        self.start(["--metrics-header-timeout-ms", "300"])
        silent = self.connect()
        partial = self.connect(PARTIAL)
        slow = self.connect(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
        # A byte every 50 ms, for as long as tkd keeps the connection: an
        # idle timeout would never end it.
        slow.setblocking(False)
        until = time.monotonic() + WAIT_S
        while not select.select([slow], [], [], 0.05)[0]:
            if time.monotonic() > until:
                self.fail("tkd kept a connection that trickles its headers")
            try:
                slow.send(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
        self.assertTrue(closed_by_peer(slow))
        self.assertTrue(closed_by_peer(silent))
        self.assertTrue(closed_by_peer(partial))
        self.assertEqual(self.closed("HEADER_TIMEOUT"), 3)
        self.assertEqual(self.closed("LIMIT"), 0)
        self.wait_logged(HEADERS_LOGGED, 3)

    def test_a_request_in_time_is_answered(self) -> None:
        # The negative control: the same tkd answers a whole request.
        self.start(["--metrics-header-timeout-ms", "300"])
        fams = scrape(self.port)
        self.assertEqual(value(fams, "tk_metrics_http_closed_total",
                               reason="HEADER_TIMEOUT"), 0)
        self.assertEqual(http_get(self.port, "/other")[0], 404)
        self.assertEqual(self.closed("HEADER_TIMEOUT"), 0)


class Requests(Listener):
    """What tk's own HTTP makes of requests it does not serve: a status
    each, never a crash; tkd serves on after them."""

    def test_each_request_gets_its_status(self) -> None:
        self.start([])
        head = b"GET /metrics HTTP/1.1\r\nX-Pad: "
        cases = [
            (b"\x00\n\n", 400),  # a NUL ends the line early
            (b"GET\r\n\r\n", 400),
            (b"GET /metrics HTTP/1.1 x\r\n\r\n", 400),
            (bytes(range(1, 10)) + b"\xff\xfe\r\n\r\n", 400),
            (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
            (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405),
            (b"GET /other HTTP/1.1\r\n\r\n", 404),
            (b"GET /metricsx HTTP/1.1\r\n\r\n", 404),
            # headers that fill the buffer (4096 bytes) without ending
            (head + b"a" * (4096 - len(head)), 431),
            (b"GET /metrics?x=1 HTTP/1.0\n\n", 200),  # LF alone, a query
        ]
        for request, want_status in cases:
            status, headers, body = exchange(self.port, request)
            self.assertEqual(status, want_status, request[:40])
            self.assertIn(b"\r\nConnection: close", headers)
            if status == 405:
                self.assertIn(b"\r\nAllow: GET, HEAD", headers)
        status, headers, body = exchange(
            self.port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
        self.assertEqual((status, body), (200, ""))
        self.assertRegex(headers.decode(), r"\r\nContent-Length: [1-9]\d*")
        fams = scrape(self.port)
        self.assertEqual(value(fams, "tk_metrics_http_scrapes_total"), 3)
        self.ping()


class Cap(Listener):
    """--metrics-max-connections is the listener's own."""

    CAP = 4

    def test_connections_beyond_the_cap_are_closed(self) -> None:
        # A header timeout far beyond the test: only the cap closes.
        self.start(["--metrics-max-connections", str(self.CAP),
                    "--metrics-header-timeout-ms", "600000",
                    "--max-connections", "2"])
        held = [self.connect() for _ in range(self.CAP)]
        self.wait_open(self.CAP)
        extra = [self.connect(), self.connect(PARTIAL)]
        for s in extra:
            self.assertTrue(closed_by_peer(s), "a connection beyond the cap "
                            "was kept")
        self.assertEqual(self.closed("LIMIT"), 2)
        self.assertEqual(self.closed("HEADER_TIMEOUT"), 0)
        for s in held:  # kept: no EOF
            self.assertFalse(select.select([s], [], [], 0)[0])
        # The RPC listener is not touched: its own two connections (this
        # test's client and another) are served, and it refused none.
        with tk.Client(self.addr) as other:
            self.ping(other)
            self.ping()
            stats = self.stats()
        self.assertEqual(stats["tk_connections_refused_total"][
            (("reason", "LIMIT"),)], 0)
        self.assertEqual(stats["tk_metrics_http_connections"][()], self.CAP)
        self.wait_logged(LIMIT_LOGGED, 2)
        # Once they go, it serves again.
        for s in held:
            s.close()
        self.wait_open(0)
        self.assertEqual(http_get(self.port)[0], 200)


def own_address() -> Optional[str]:
    """An IPv4 address of this machine that is not loopback (the one a
    route out would use), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent
        except OSError:
            return None
        addr = s.getsockname()[0]
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr


def have_ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class NotLoopback(unittest.TestCase):
    """Warned at start: any address but loopback."""

    def started(self, url: str) -> str:
        """tkd's log up to its serving, with the metrics listener on url."""
        with tkproc.tempdir("mhw") as base:
            d, _ = tkproc.start_tkd(base, options=["--metrics-listen", url])
            try:
                d.wait_output("metrics for Prometheus at", "stderr")
                return d.output("stderr")
            finally:
                self.assertEqual(d.stop(), 0)

    def warned(self, url: str) -> None:
        log = self.started(url)
        line = [x for x in log.splitlines() if WARNING in x]
        self.assertEqual(len(line), 1, log)
        self.assertIn(" warn: metrics listener http://", line[0])
        self.assertIn("answers anyone who can reach the port", line[0])

    def not_warned(self, url: str) -> None:
        log = self.started(url)
        self.assertNotIn(WARNING, log)

    def test_any_ipv4_address(self) -> None:
        self.warned("http://0.0.0.0:0")

    def test_any_ipv6_address(self) -> None:
        if not have_ipv6():
            self.skipTest("no IPv6 here")
        self.warned("http://[::]:0")

    def test_a_non_loopback_address(self) -> None:
        addr = own_address()
        if addr is None:
            self.skipTest("this machine has no IPv4 address but loopback")
        self.warned("http://%s:0" % addr)

    def test_loopback_is_not_warned(self) -> None:
        self.not_warned("http://127.0.0.1:0")
        self.not_warned("http://localhost:0")
        if have_ipv6():
            self.not_warned("http://[::1]:0")


class ScrapeLoop(Listener):
    """Eight scrapers in a tight loop, at the default interval (1 s): a
    rendering an interval, and each scrape fresh."""

    SCRAPERS = 8
    ROUNDS = 3
    INTERVAL_S = 1.0  # --metrics-min-interval-ms's default

    def test_one_rendering_an_interval(self) -> None:
        self.start([])
        before = scrape(self.port)
        errors: List[BaseException] = []

        def loop() -> None:
            try:
                for _ in range(self.ROUNDS):
                    # Fresh: the scrape reads counts from after its
                    # request, never a rendering older than it.
                    with tk.Client(self.addr) as c:
                        self.ping(c)
                    pings = self.stats()["tk_calls_total"][
                        (("code", "OK"), ("method", "tk.v1.Control/Ping"))]
                    fams = scrape(self.port)
                    self.assertGreaterEqual(
                        value(fams, "tk_calls_total", code="OK",
                              method="tk.v1.Control/Ping"), pings)
            except BaseException as e:  # noqa: B902: reported below
                errors.append(e)

        threads = [threading.Thread(target=loop) for _ in range(self.SCRAPERS)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        self.assertEqual(errors, [])
        after = scrape(self.port)
        n = self.SCRAPERS * self.ROUNDS
        scrapes = (value(after, "tk_metrics_http_scrapes_total")
                   - value(before, "tk_metrics_http_scrapes_total"))
        self.assertEqual(scrapes, n + 1)  # and the one after
        # The loop's renderings (after's text counts its own) are an
        # interval apart at least, so no more than this fit in the time
        # the loop took; one a scrape would be n of them, in about
        # ROUNDS x the time a Ping and two round trips take.
        renders = (value(after, "tk_metrics_http_renders_total")
                   - value(before, "tk_metrics_http_renders_total") - 1)
        bound = 1 + int(elapsed / self.INTERVAL_S)
        self.assertLessEqual(renders, bound, "%d renderings for %d scrapes "
                             "in %.2f s" % (renders, n, elapsed))


if __name__ == "__main__":
    unittest.main(verbosity=2)
