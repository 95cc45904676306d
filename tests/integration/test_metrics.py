# SPDX-License-Identifier: MIT
"""tkd's metrics (issue 19): tkd --metrics-listen serves them in
Prometheus' text format (a small HTTP server of tkd's own),
tk.v1.Control/Stats answers the same families, and tkcall shows them as
text.

A real tkd on a private socket, a real git repository and rg: the test
makes calls whose counts it knows (Pings, an unknown method, a path
outside the roots, a libgit2 read, a read that runs git, a search that
runs rg), scrapes before and after, and checks the differences. Every
scrape is parsed by a strict parser of the text format
(tests/support/exposition.py), which its own negative controls (Parser,
below) prove refuses what Prometheus would refuse.
Nothing waits by sleeping: tkd's stderr says when it serves and where.
Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import re
import resource
import signal
import subprocess
import unittest
import urllib.error
import urllib.request
from typing import Dict, Optional, Set

import tkproc
from exposition import Family, hist_count, parse_exposition, value

import tk
from tk.v1 import control_pb2, git_pb2, search_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0


class Parser(unittest.TestCase):
    """The parser's negative controls: each text breaks one rule."""

    GOOD = ("# HELP a_total A.\n# TYPE a_total counter\na_total 1\n"
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
            "h_sum 0.3\nh_count 2\n")

    def test_good(self) -> None:
        fams = parse_exposition(self.GOOD)
        self.assertEqual(value(fams, "a_total"), 1)
        self.assertEqual(hist_count(fams, "h"), 2)

    def test_refused(self) -> None:
        bad = {
            "no newline at the end": self.GOOD[:-1],
            "a bad name": self.GOOD.replace("a_total 1", "a-total 1"),
            "no TYPE": "a_total 1\n",
            "a counter not _total": "# HELP a A.\n# TYPE a counter\na 1\n",
            "an unknown type": "# HELP a A.\n# TYPE a meter\na 1\n",
            "a series twice": self.GOOD.replace("a_total 1\n",
                                                "a_total 1\na_total 2\n"),
            "an unescaped quote": self.GOOD.replace(
                "a_total 1", "a_total{x=\"a\"b\"} 1"),
            "a bad escape": self.GOOD.replace("a_total 1",
                                              "a_total{x=\"\\t\"} 1"),
            "no value": self.GOOD.replace("a_total 1", "a_total"),
            "a value no number": self.GOOD.replace("a_total 1", "a_total x"),
            "TYPE after samples": self.GOOD + "# TYPE a_total counter\n",
            "interleaved": self.GOOD + "a_total{x=\"1\"} 1\n",
            "a falling bucket": self.GOOD.replace("le=\"+Inf\"} 2",
                                                  "le=\"+Inf\"} 0"),
            "no +Inf": self.GOOD.replace("h_bucket{le=\"+Inf\"} 2\n", ""),
            "+Inf not _count": self.GOOD.replace("h_count 2", "h_count 3"),
            "no _sum": self.GOOD.replace("h_sum 0.3\n", ""),
            "a negative counter": self.GOOD.replace("a_total 1",
                                                    "a_total -1"),
            "an empty line": self.GOOD + "\n",
        }
        for why, text in bad.items():
            with self.assertRaises(ValueError, msg=why):
                parse_exposition(text)


# ---- tkd ---------------------------------------------------------------------


def git(cwd: str, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t"]
                   + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, env=dict(
                       os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=cwd))


class Metrics(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tkproc.tempdir("metrics")
        base = self.dir.name
        self.repo = os.path.join(base, "repo")
        os.mkdir(self.repo)
        git(self.repo, "init", "-q")
        with open(os.path.join(self.repo, "a.txt"), "w") as f:
            f.write("a quokka here\n")
        git(self.repo, "add", "a.txt")
        git(self.repo, "commit", "-q", "-m", "one")
        self.d, self.addr = tkproc.start_tkd(
            base, roots=[base],
            options=["--metrics-listen", "http://127.0.0.1:0"])
        self.d.wait_output("metrics for Prometheus at", "stderr")
        m = re.search(r"metrics for Prometheus at (\S+)",
                      self.d.output("stderr"))
        assert m is not None, self.d.output("stderr")
        self.url = m.group(1)

    def tearDown(self) -> None:
        self.assertEqual(self.d.stop(), 0)
        self.dir.cleanup()

    def scrape(self, path: Optional[str] = None) -> Dict[str, Family]:
        url = self.url if path is None else self.url.replace("/metrics",
                                                             path)
        with urllib.request.urlopen(url, timeout=WAIT_S) as r:
            self.assertEqual(r.status, 200)
            self.assertEqual(r.headers["Content-Type"],
                             "text/plain; version=0.0.4; charset=utf-8")
            return parse_exposition(r.read().decode("utf-8"))

    def test_calls_counted(self) -> None:
        before = self.scrape()
        with tk.Client(self.addr) as c:
            for _ in range(5):
                c.call("tk.v1.Control/Ping", control_pb2.PingRequest())
            with self.assertRaises(tk.TkError):
                c.call("tk.v1.Nope/Nothing", b"",
                       reply_type=bytes)
            with self.assertRaises(tk.TkError):
                c.call("tk.v1.Git/RevParse",
                       git_pb2.GitRevParseRequest(repo="/", rev="HEAD"))
            c.call("tk.v1.Git/RevParse",
                   git_pb2.GitRevParseRequest(repo=self.repo, rev="HEAD"))
            c.call("tk.v1.Git/Status",
                   git_pb2.GitStatusRequest(repo=self.repo))
            rep = c.call("tk.v1.Search/Search", search_pb2.SearchRequest(
                root=self.repo, query="quokka"))
            self.assertEqual(len(rep.matches), 1)
            during = self.scrape()  # the client's connection is open
            stats = c.call("tk.v1.Control/Stats", control_pb2.StatsRequest())
        after = self.scrape()

        def delta(name: str, **labels: str) -> float:
            return value(after, name, **labels) - value(before, name,
                                                        **labels)
        ping = "tk.v1.Control/Ping"
        self.assertEqual(delta("tk_calls_total", method=ping, code="OK"), 5)
        self.assertEqual(delta("tk_calls_total", method="unknown",
                               code="UNIMPLEMENTED"), 1)
        self.assertEqual(delta("tk_calls_total", method="tk.v1.Git/RevParse",
                               code="PERMISSION_DENIED"), 1)
        self.assertEqual(delta("tk_calls_total", method="tk.v1.Git/RevParse",
                               code="OK"), 1)
        self.assertEqual(delta("tk_calls_total", method="tk.v1.Search/Search",
                               code="OK"), 1)
        self.assertEqual(
            hist_count(after, "tk_call_run_seconds", method=ping)
            - hist_count(before, "tk_call_run_seconds", method=ping), 5)
        self.assertEqual(delta("tk_git_reads_total", engine="libgit2"), 1)
        self.assertGreaterEqual(delta("tk_git_reads_total", engine="git"), 1)
        # git status and rg at least; none of them killed
        self.assertGreaterEqual(delta("tk_processes_spawned_total"), 2)
        for why in ("CALLER", "DEADLINE", "TIMEOUT", "LIMIT", "OUTPUT_CAP",
                    "SHUTDOWN"):
            self.assertEqual(delta("tk_processes_killed_total", reason=why),
                             0)
        self.assertEqual(value(after, "tk_search_slots_busy"), 0)
        self.assertEqual(value(after, "tk_search_waiting"), 0)
        self.assertEqual(value(after, "tk_queue_depth"), 0)
        self.assertGreater(delta("tk_received_bytes_total"), 0)
        self.assertGreater(delta("tk_sent_bytes_total"), 0)
        self.assertGreaterEqual(
            value(during, "tk_connections", transport="ipc"), 1)

        # Stats answers the same families, names and types; the counters
        # its own call does not move agree with the scrape after it.
        self.assertEqual(
            sorted(f.name for f in stats.families), sorted(after))
        for f in stats.families:
            kind = control_pb2.MetricFamily.Type.Name(f.type).lower()
            self.assertEqual(after[f.name].type, kind, f.name)
            self.assertEqual(after[f.name].help, f.help.replace(
                "\\", "\\\\").replace("\n", "\\n"))
        calls = {tuple(sorted((lp.name, lp.value) for lp in m.labels)):
                 m.value for f in stats.families
                 if f.name == "tk_calls_total" for m in f.metrics}
        self.assertEqual(calls[(("code", "OK"), ("method", ping))],
                         value(after, "tk_calls_total", method=ping,
                               code="OK"))

    def test_build_info_and_process(self) -> None:
        # What every Prometheus client library exports, and tkd's version.
        fams = self.scrape()
        self.assertEqual(fams["tk_build_info"].type, "gauge")
        version = [dict(labels).get("version")
                   for (_, labels), v in fams["tk_build_info"].samples.items()
                   if v == 1]
        self.assertEqual(len(version), 1, fams["tk_build_info"].samples)
        self.assertRegex(str(version[0]), r"^\d+\.\d+\.\d+")
        pid = self.d.proc.pid
        started = value(fams, "process_start_time_seconds")
        # /proc's own start time of tkd, in the same clock
        with open("/proc/%d/stat" % pid) as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            btime = int(next(ln for ln in f if ln.startswith("btime"))
                        .split()[1])
        self.assertLess(abs(started - (btime + ticks / os.sysconf(
            "SC_CLK_TCK"))), 2.0)
        self.assertEqual(fams["process_cpu_seconds_total"].type, "counter")
        self.assertGreater(value(fams, "process_cpu_seconds_total"), 0)
        if os.environ.get("TK_HAVE_RSS") == "0":
            # A build that cannot tell (macOS, -Dportable) leaves the
            # family out: no resident memory of 0.
            self.assertNotIn("process_resident_memory_bytes", fams)
        else:
            with open("/proc/%d/statm" % pid) as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            got = value(fams, "process_resident_memory_bytes")
            self.assertGreater(got, rss / 2)
            self.assertLess(got, rss * 2)
        fds = len(os.listdir("/proc/%d/fd" % pid))
        self.assertLess(abs(value(fams, "process_open_fds") - fds), 4)
        soft = resource.prlimit(pid, resource.RLIMIT_NOFILE)[0]
        self.assertEqual(value(fams, "process_max_fds"), soft)

    def test_series_from_the_start(self) -> None:
        # Every method and every code has its series before any call, at
        # 0; the histograms appear with a method's first call.
        fams = self.scrape()
        series: Dict[str, Set[str]] = {
            dict(labels)["method"]: set()
            for (_, labels) in fams["tk_calls_total"].samples}
        for (_, labels), v in fams["tk_calls_total"].samples.items():
            series[dict(labels)["method"]].add(dict(labels)["code"])
        codes = set(control_pb2.DESCRIPTOR.pool.FindEnumTypeByName(
            "tk.v1.Status.Code").values_by_name)
        self.assertEqual(len(codes), 17)
        for method in ("tk.v1.Git/Status", "tk.v1.Search/Search",
                       "tk.v1.Control/Ping", "unknown"):
            self.assertEqual(series[method], codes, method)
        self.assertEqual(value(fams, "tk_calls_total",
                               method="tk.v1.Git/Status", code="INTERNAL"), 0)
        self.assertNotIn("tk.v1.Git/Status", {
            dict(labels).get("method") for (_, labels)
            in fams["tk_call_run_seconds"].samples}
            if "tk_call_run_seconds" in fams else set())

    def test_one_case_for_a_why(self) -> None:
        # A label that says why (code, cause, reason) is spelled as tk.v1
        # spells its codes, causes and reasons, in every family: one word,
        # one spelling (reason="caller" stood beside cause="CALLER").
        fams = self.scrape()
        seen = set()
        for fam in fams.values():
            for (_, labels) in fam.samples:
                for name, v in labels:
                    if name in ("code", "cause", "reason"):
                        seen.add((fam.name, name))
                        self.assertRegex(v, r"^[A-Z][A-Z0-9_]*$",
                                         (fam.name, name))
        for f in ("tk_calls_total", "tk_call_cancellations_total",
                  "tk_processes_killed_total", "tk_queue_rejected_total",
                  "tk_connections_refused_total",
                  "tk_metrics_http_closed_total"):
            self.assertTrue(any(fn == f for fn, _ in seen), f)
        self.assertEqual(value(fams, "tk_processes_killed_total",
                               reason="CALLER"), 0)
        self.assertIn((("cause", "CALLER"),), {
            labels for (_, labels)
            in fams["tk_call_cancellations_total"].samples})

    def test_tkcall_shows_them(self) -> None:
        with tk.Client(self.addr) as c:
            c.call("tk.v1.Control/Ping", control_pb2.PingRequest())
        r = subprocess.run([tkproc.program("TKCALL"), "-a", self.addr,
                            "Control/Stats"], capture_output=True,
                           text=True, timeout=WAIT_S)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^tkd \S+, up \d+\.\ds$")
        self.assertIn("tk_calls_total", lines)
        self.assertTrue(any(re.match(r"^tk_queue_capacity +64$", ln)
                            for ln in lines), r.stdout)
        ping = [ln for ln in lines
                if re.match(r"^  tk\.v1\.Control/Ping  OK +1$", ln)]
        self.assertEqual(len(ping), 1, r.stdout)
        self.assertTrue(any(re.match(
            r"^  tk\.v1\.Control/Ping +1  mean \d+(\.\d+)?(µs|ms)  "
            r"p50 <= \S+  p99 <= \S+$", ln) for ln in lines), r.stdout)

    def test_other_paths_are_not_found(self) -> None:
        with self.assertRaises(urllib.error.HTTPError) as e:
            self.scrape("/other")
        self.assertEqual(e.exception.code, 404)


class Refused(unittest.TestCase):
    """What tkd will not serve metrics on: it says why and does not
    start."""

    def run_tkd(self, base: str, url: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [tkproc.program("TKD"), "--listen", "ipc://%s/t.sock" % base,
             "--metrics-listen", url], capture_output=True, text=True,
            timeout=WAIT_S)

    def test_not_http(self) -> None:
        with tkproc.tempdir("metrics") as base:
            r = self.run_tkd(base, "https://127.0.0.1:0")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("only http://HOST:PORT is served", r.stderr)

    def test_port_in_use(self) -> None:
        with tkproc.tempdir("metrics") as base:
            d, _ = tkproc.start_tkd(
                base, options=["--metrics-listen", "http://127.0.0.1:0"])
            try:
                d.wait_output("metrics for Prometheus at", "stderr")
                url = re.search(r"metrics for Prometheus at (\S+)",
                                d.output("stderr")).group(1)  # type: ignore
                port = url.split(":")[2].split("/")[0]
                os.mkdir(os.path.join(base, "b"))
                r = self.run_tkd(os.path.join(base, "b"),
                                 "http://127.0.0.1:%s" % port)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("--metrics-listen http://127.0.0.1:%s" % port,
                              r.stderr)
            finally:
                self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
