# SPDX-License-Identifier: MIT
"""Test support for the fleet tests on one machine (fleet-nodes,
fleet-client, fleet-python): a private PostgreSQL that outlives no test
process, the check that tkd's NNG has TLS, a free port, and the skip
(exit 77) that says why. tests/fleet/netfleet.py, which puts each tkd in a
network namespace, has its own.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from typing import Callable, Dict, List, Optional, Tuple

import tkproc

SKIP = 77
PG_CLUSTER = os.path.join(tkproc.SOURCE_ROOT, "tools", "pg-cluster")


def skip(why: str) -> None:
    """Ends the test as skipped (meson: exit 77), saying why."""
    print("SKIP: " + why, file=sys.stderr)
    sys.exit(SKIP)


def need_programs(*progs: str) -> None:
    """Skips unless every program of progs is on PATH."""
    for prog in progs:
        if subprocess.run(["sh", "-c", "command -v " + prog],
                          stdout=subprocess.DEVNULL).returncode != 0:
            skip("no %s here" % prog)


def need_tls() -> None:
    """Skips where tkd's NNG has no TLS: Homebrew's on a Mac. Anywhere
    else that is a failure: tk's own NNG (subprojects/nng.wrap, every Linux
    build) has TLS."""
    r = subprocess.run([tkproc.program("TKD"), "--listen",
                        "tls+tcp://127.0.0.1:0", "--tls-cert", "/nonexistent",
                        "--tls-key", "/nonexistent", "--tls-ca", "/nonexistent"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    if "built without TLS" not in r.stderr:
        return
    if sys.platform != "darwin":
        raise AssertionError("tkd's NNG has no TLS: subprojects/nng.wrap makes one")
    skip("the NNG tkd is linked with has no TLS (Homebrew's on a Mac)")


def free_port() -> int:
    """A port nothing listens on now (bound, then closed: the kernel's
    pick, for tkd to bind next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_tkd(argv_of: Callable[[int], List[str]],
              env: Optional[Dict[str, str]]) -> Tuple[tkproc.Daemon, int]:
    """tkd started with argv_of(a free port), once it has logged
    "listening on"; a port another process took between free_port and
    tkd's bind is tried again (5 tries). The daemon and its port."""
    for _ in range(5):
        port = free_port()
        d = tkproc.Daemon(argv_of(port), env)
        try:
            d.wait_output("listening on", "stderr")
        except AssertionError:
            d.stop()
            if "in use" in d.output("stderr"):
                continue
            raise
        return d, port
    raise AssertionError("no free port in 5 tries")


class Cluster:
    """A private PostgreSQL (tools/pg-cluster start DIR --fast). A guard
    shell in a session of its own stops and removes it when this process
    dies, however it dies (the pipe it reads closes). Skips where there is
    no PostgreSQL 15."""

    def __init__(self) -> None:
        # Under /tmp itself: the server (user postgres, when root) must
        # reach it through its parents.
        self.dir = tempfile.mkdtemp(prefix="tk-pg-")
        r, w = os.pipe()
        self.guard = subprocess.Popen(
            ["/bin/sh", "-c", 'cat >/dev/null; "$0" stop "$1"; rm -rf "$1"',
             PG_CLUSTER, self.dir], stdin=r, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(r)
        self.guard_w = w
        started = self.run("start", "--fast")
        if started.returncode != 0:
            if "no PostgreSQL" in started.stderr:
                self.close()
                skip("no PostgreSQL 15 here: " + started.stderr.strip())
            raise AssertionError("pg-cluster start: %s" % started.stderr)
        self.dsn = started.stdout.strip().splitlines()[-1]

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([PG_CLUSTER, args[0], self.dir] + list(args[1:]),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)

    def stop(self) -> None:
        r = self.run("stop")
        assert r.returncode == 0, r.stderr

    def start(self) -> None:
        r = self.run("start")
        assert r.returncode == 0, r.stderr

    def dsn_of(self, dbname: str) -> str:
        """The DSN of database dbname in this cluster."""
        return re.sub(r"dbname=\S+", "dbname=" + dbname, self.dsn)

    def sql(self, dbname: str, query: str) -> str:
        """psql's unaligned output of query in dbname, one row a line."""
        r = subprocess.run(["psql", "-XAtq", "-F", "|", "-d",
                            self.dsn_of(dbname), "-c", query],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        if r.returncode != 0:
            raise AssertionError("psql %r: %s" % (query, r.stderr))
        return r.stdout.strip()

    def close(self) -> None:
        """Stops and removes the cluster (through its guard)."""
        os.close(self.guard_w)
        self.guard.wait(timeout=120)
