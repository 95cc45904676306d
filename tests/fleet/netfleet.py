# SPDX-License-Identifier: MIT
"""A fleet of tkd on one machine, each in a network namespace of its own:
the harness of the multi-node tests (issue 15, DESIGN.md "Scaling out").

    with netfleet.Fleet("tag") as fleet:     # or fleet.start() / close()
        a, b, c = fleet.nodes
        ... a.url, b.repo, fleet.client_tls() ...

What it builds (and tears down on exit, on failure too, and on the
SIGTERM the watchdog forwards):
- three namespaces tkf<pid>a/b/c, each with its loopback up and joined to
  the root namespace by a veth pair on a /30 of its own (10.231.0.0/16,
  the block picked from the pid and checked against `ip route`): the
  root's end is .1, the node's .2;
- a CA, a certificate per node (its address as a DNS and an IP name:
  mbedTLS matches the host against the DNS names; and its id's name,
  ID.tk-node.invalid, which the clients check against the row of the
  table they route by), a client certificate,
  and a client certificate another CA signed, with the openssl CLI
  (tests/support/certs.py);
- one private PostgreSQL (tools/pg-cluster start DIR --fast): it listens
  on a unix socket, which a process in a namespace still reaches (path
  sockets are not namespaced);
- a tkd per namespace (`ip netns exec NS tkd ...`, which execs: the
  daemon's pid is tkd's) listening on tls+tcp://ITS_IP:PORT, member of
  the fleet (--node-id nX --advertise ... --pg ... --heartbeat-ms 200
  --node-ttl-ms 2000), with
  a root of its own holding a real git repository; b and c also share a
  root (as two machines sharing a file system would), so that a call on
  it has two owners.

needs() says why the machine cannot run it (the caller exits 77): not
root, no openssl, no `ip`, or `ip netns add` refused.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, List, Optional, Tuple

import certs
import tkproc

PORT = 7443
HEARTBEAT_MS = 200
# A node drops out of the table after this without a heartbeat: ten
# heartbeats, not tkd's default of three, so that a tkd slowed down by a
# sanitizer on a loaded machine does not drop out now and then, while a
# stopped one still leaves within two seconds.
NODE_TTL_MS = 2000
NAMES = ("a", "b", "c")
# Bounds of waits on state nothing signals (a row in the table, a process
# gone): polled, never slept through. Generous: tkd under TSan is slow.
STATE_S = 60.0
NET = "10.231"
BLOCKS = 16384 // len(NAMES)  # /30s in 10.231.0.0/16, per fleet of three


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, check=check)


def needs() -> Optional[str]:
    """Why this machine cannot run the fleet tests, or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces (ip netns add) need root"
    for prog in ("ip", "openssl"):
        if shutil.which(prog) is None:
            return "no %s on PATH" % prog
    probe = "tkf%dp" % os.getpid()
    r = run("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return "ip netns add refused: %s" % r.stderr.strip()
    run("ip", "netns", "del", probe, check=False)
    return None


def reap_stale() -> None:
    """Deletes the namespaces of earlier runs whose process is gone (a run
    the watchdog killed with SIGKILL had no chance to): their veth pairs
    and routes go with them."""
    r = run("ip", "netns", "list", check=False)
    for line in r.stdout.splitlines():
        m = re.match(r"tkf(\d+)[a-z]\b", line)
        if m and not os.path.exists("/proc/%s" % m.group(1)):
            run("ip", "netns", "del", line.split()[0], check=False)


def wait_for(pred: Callable[[], object], what: str,
             timeout: float = STATE_S, every: float = 0.05) -> object:
    """Polls pred until it returns something true (returned); bounded:
    AssertionError naming what. For states nothing announces."""
    until = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > until:
            raise AssertionError("%s: not within %.0f s" % (what, timeout))
        time.sleep(every)


def git(repo: str, *args: str) -> str:
    return run("git", "-C", repo, *args).stdout


def commit_count(repo: str) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").strip())


def netns_id(ns: str) -> str:
    """The id a process inside ns reads in /proc/self/ns/net."""
    st = os.stat("/run/netns/" + ns)
    return "net:[%d]" % st.st_ino


class Node:
    """One tkd in its namespace."""

    def __init__(self, fleet: Fleet, index: int, name: str) -> None:
        self.fleet = fleet
        self.name = name
        self.node_id = "n" + name
        self.ns = "tkf%d%s" % (os.getpid(), name)
        self.host_if = self.ns + "h"  # the root namespace's end
        self.ns_if = self.ns + "n"
        block = fleet.block * len(NAMES) + index
        base = block * 4
        net = "%s.%d.%d" % (NET, base // 256, base % 256)
        self.subnet = net + "/30"
        self.host_ip = "%s.%d.%d" % (NET, base // 256, base % 256 + 1)
        self.ip = "%s.%d.%d" % (NET, base // 256, base % 256 + 2)
        self.url = "tls+tcp://%s:%d" % (self.ip, PORT)
        self.dir = os.path.join(fleet.dir, name)
        self.root = os.path.join(self.dir, "root")
        self.repo = os.path.join(self.root, "repo")
        self.roots = [self.root]
        self.daemon: Optional[tkproc.Daemon] = None
        # the stderr of each tkd this node ran before the current one
        self.past_logs: List[str] = []
        self.netns_id = ""
        self.cert: Tuple[str, str] = ("", "")

    # ---- the network ----------------------------------------------------

    def make_net(self) -> None:
        run("ip", "netns", "add", self.ns)
        self.netns_id = netns_id(self.ns)
        run("ip", "link", "add", self.host_if, "type", "veth",
            "peer", "name", self.ns_if)
        run("ip", "link", "set", self.ns_if, "netns", self.ns)
        run("ip", "addr", "add", self.host_ip + "/30", "dev", self.host_if)
        run("ip", "link", "set", self.host_if, "up")
        run("ip", "-n", self.ns, "addr", "add", self.ip + "/30",
            "dev", self.ns_if)
        run("ip", "-n", self.ns, "link", "set", self.ns_if, "up")
        run("ip", "-n", self.ns, "link", "set", "lo", "up")
        wait_for(self.link_ready, "the link of %s up" % self.name)

    def link(self, up: bool) -> None:
        """Sets the node's end of its veth pair up or down (the root's end
        loses its carrier with it): packets to and from the node are
        dropped, and TCP tells nobody."""
        run("ip", "-n", self.ns, "link", "set", self.ns_if,
            "up" if up else "down")
        if up:
            # The kernel reports the root end's carrier a moment later
            # (linkwatch), and until then its route is "linkdown": a
            # connect would fail with EHOSTUNREACH. Waits until both ends
            # are up and the route is usable.
            wait_for(self.link_ready, "the link of %s up" % self.name)

    def link_ready(self) -> bool:
        ns_side = run("ip", "-n", self.ns, "-o", "link", "show", "dev",
                      self.ns_if).stdout
        host_side = run("ip", "-o", "link", "show", "dev", self.host_if).stdout
        route = run("ip", "-4", "route", "show", "dev", self.host_if).stdout
        return ("state UP" in ns_side and "state UP" in host_side
                and self.subnet in route and "linkdown" not in route)

    # ---- tkd ----------------------------------------------------------------

    def argv(self) -> List[str]:
        f = self.fleet
        argv = ["ip", "netns", "exec", self.ns, tkproc.program("TKD"),
                "--listen", self.url,
                "--tls-cert", self.cert[0], "--tls-key", self.cert[1],
                "--tls-ca", f.ca[0],
                "--advertise", self.url, "--node-id", self.node_id,
                "--pg", f.dsn, "--heartbeat-ms", str(HEARTBEAT_MS),
                "--node-ttl-ms", str(NODE_TTL_MS),
                "--log-level", "info"]
        for r in self.roots:
            argv += ["--root", r]
        return argv

    def start(self) -> None:
        """Starts tkd and returns once it listens (its log says so)."""
        env = dict(os.environ, HOME=self.dir, XDG_CONFIG_HOME=self.dir,
                   GIT_CONFIG_NOSYSTEM="1")
        self.daemon = tkproc.Daemon(self.argv(), env)
        self.daemon.wait_output("listening on", "stderr",
                                timeout=self.fleet.start_s)

    @property
    def pid(self) -> int:
        assert self.daemon is not None, "tkd of %s is not running" % self.name
        return self.daemon.proc.pid

    def kill9(self) -> int:
        """kill -9 of tkd; returns its exit status once reaped."""
        assert self.daemon is not None
        os.kill(self.pid, signal.SIGKILL)
        rv = self.daemon.stop()
        self.past_logs.append(self.daemon.output("stderr"))
        self.daemon = None
        return rv

    def stop(self) -> None:
        if self.daemon is not None:
            if self.daemon.proc.poll() is None:
                # a stopped tkd cannot act on SIGTERM
                os.kill(self.pid, signal.SIGCONT)
            self.daemon.stop()
            self.past_logs.append(self.daemon.output("stderr"))
            self.daemon = None

    def log(self) -> str:
        return self.daemon.output("stderr") if self.daemon else ""

    def running(self) -> tkproc.Daemon:
        """The tkd this node runs now (start() started it)."""
        assert self.daemon is not None, "%s runs no tkd" % self.name
        return self.daemon

    def sanitizer_reports(self) -> List[str]:
        """What a sanitizer reported in any tkd this node ran (halt_on_error
        stops tkd at the first: a killed node's calls would fail, but
        a report in a tkd that was killed or stopped anyway would pass
        unseen)."""
        return [log for log in self.past_logs + [self.log()]
                if re.search(r"Sanitizer|runtime error:", log)]


class Fleet:
    """Three namespaces, one PostgreSQL, three tkd (see the module's
    comment). start() builds it all; close() undoes whatever was built,
    in reverse, and is safe to call twice."""

    def __init__(self, tag: str) -> None:
        # /tmp/tkf-..., short: the PostgreSQL socket path must fit.
        self._tmp = tempfile.TemporaryDirectory(prefix="tkf-%s-" % tag)
        self.dir = self._tmp.name
        os.chmod(self.dir, 0o711)  # postgres must reach its cluster
        self.block = self._free_block()
        self.nodes = [Node(self, i, n) for i, n in enumerate(NAMES)]
        self.pg_dir = os.path.join(self.dir, "pg")
        self.dsn = ""
        self._pg_started = False
        # tkd under a sanitizer starts slower
        self.start_s = 60.0
        self.shared_root = os.path.join(self.dir, "shared")
        self.shared_repo = os.path.join(self.shared_root, "repo")
        self._old_term: Any = None  # signal.signal's: a handler or a number

    @staticmethod
    def _free_block() -> int:
        """The fleet's block of three /30s: from the pid, moved on past
        any that a route of this machine already covers."""
        routes = run("ip", "-4", "route", "show", "table", "all",
                     check=False).stdout
        taken = set(re.findall(r"\b%s\.(\d+)\.(\d+)" % re.escape(NET), routes))
        start = os.getpid() % BLOCKS
        for k in range(BLOCKS):
            block = (start + k) % BLOCKS
            bases = [(block * len(NAMES) + i) * 4 for i in range(len(NAMES))]
            used = {(str(b // 256), str(b % 256 + j))
                    for b in bases for j in range(4)}
            if not used & taken:
                return block
        raise RuntimeError("no free /30 left in %s.0.0/16" % NET)

    def __enter__(self) -> Fleet:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        # The watchdog forwards SIGTERM before it kills: tear down then.
        self._old_term = signal.signal(signal.SIGTERM, _raise_exit)
        reap_stale()
        self._certs()
        self._pg()
        for n in self.nodes:
            self._repo(n.root, n.repo, n.name)
        self._repo(self.shared_root, self.shared_repo, "shared")
        for n in self.nodes[1:]:
            n.roots.append(self.shared_root)
        for n in self.nodes:
            n.make_net()
        for n in self.nodes:
            n.start()

    def close(self) -> None:
        for n in self.nodes:
            try:
                n.stop()
            except Exception as e:  # noqa: BLE001 - teardown goes on
                sys.stderr.write("netfleet: stopping %s: %s\n" % (n.name, e))
        for n in self.nodes:
            # its veth pair goes with it
            run("ip", "netns", "del", n.ns, check=False)
        if self._pg_started:
            run(os.path.join(tkproc.SOURCE_ROOT, "tools", "pg-cluster"),
                "stop", self.pg_dir, check=False)
            self._pg_started = False
        self._tmp.cleanup()
        if self._old_term is not None:
            signal.signal(signal.SIGTERM, self._old_term)
            self._old_term = None

    # ---- what start() builds ---------------------------------------------

    def _certs(self) -> None:
        d = os.path.join(self.dir, "pki")
        os.mkdir(d)
        self.ca = certs.make_ca(d, "ca")
        for n in self.nodes:
            # Its address (the host clients dial) and its id (the name they
            # check a row of the table against).
            n.cert = certs.make_cert(d, "node-" + n.name, self.ca,
                                     certs.node_ext(n.node_id, "DNS:%s,IP:%s"
                                                    % (n.ip, n.ip)))
        self.client_cert = certs.make_cert(d, "client", self.ca,
                                           certs.CLIENT_EXT)
        self.other_ca = certs.make_ca(d, "other-ca")
        self.mallory = certs.make_cert(d, "mallory", self.other_ca,
                                       certs.CLIENT_EXT)

    def _pg(self) -> None:
        r = run(os.path.join(tkproc.SOURCE_ROOT, "tools", "pg-cluster"),
                "start", self.pg_dir, "--fast", check=False)
        if r.returncode != 0:
            raise RuntimeError("tools/pg-cluster start: exit %d\n%s"
                               % (r.returncode, r.stderr))
        self._pg_started = True
        self.dsn = r.stdout.strip()

    @staticmethod
    def _repo(root: str, repo: str, name: str) -> None:
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.name", "fleet")
        git(repo, "config", "user.email", "fleet@example.invalid")
        with open(os.path.join(repo, "README"), "w", encoding="utf-8") as f:
            f.write("the repository of %s\n" % name)
        git(repo, "add", "README")
        git(repo, "commit", "-q", "-m", "first of " + name)

    # ---- for the tests ------------------------------------------------------

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name or n.node_id == name)

    def addrs(self, names: str = "abc") -> str:
        """The comma-separated bootstrap list a client is given."""
        return ",".join(self.node(x).url for x in names)

    def by_id(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.node_id == node_id)


def _raise_exit(sig: int, frame: object) -> None:
    # KeyboardInterrupt: unittest lets it through (another exception
    # would fail one test and go on to the next), up to a finally that
    # closes the fleet.
    raise KeyboardInterrupt("signal %d" % sig)


class Hook:
    """A git hook that holds the git running it until the test releases
    it, and says so first: "entered NETNS PID" on a fifo (NETNS: the id of
    the network namespace it runs in, which names the node; PID: the git
    that ran it). With once, only the first run holds (a marker
    directory); later runs pass. Every run appends its NETNS to a file
    (runs()): how many times, and where, git ran it.

    The hook opens its release fifo read-write before it announces itself
    (a read-write open never blocks on Linux), so that the release,
    written once the announcement is read, always has a reader."""

    def __init__(self, parent: str, name: str, once: bool = False) -> None:
        dir_ = tempfile.mkdtemp(prefix=name + "-", dir=parent)
        self.enter = os.path.join(dir_, name + ".enter")
        self.release_fifo = os.path.join(dir_, name + ".release")
        self.marker = os.path.join(dir_, name + ".once")
        self.path = os.path.join(dir_, name + ".sh")
        for p in (self.enter, self.release_fifo):
            os.mkfifo(p, 0o600)
        body = ("exec 3<> '%s'\n"
                "echo \"entered $(readlink /proc/self/ns/net) $PPID\" > '%s'\n"
                "read -r x <&3\n" % (self.release_fifo, self.enter))
        if once:
            body = ("if mkdir '%s' 2>/dev/null; then\n%sfi\n"
                    % (self.marker, body))
        # every run, held or not, says where it ran
        self.runs_file = os.path.join(dir_, name + ".runs")
        body = ("readlink /proc/self/ns/net >> '%s'\n%s"
                % (self.runs_file, body))
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n" + body + "exit 0\n")
        os.chmod(self.path, 0o700)
        # opened before any call runs the hook: its open for writing then
        # never blocks, and the line waits in the pipe
        self._fd = os.open(self.enter, os.O_RDONLY | os.O_NONBLOCK)
        self._buf = b""
        self.git_pid = 0

    def entered(self, call: Optional[object] = None,
                timeout: float = STATE_S) -> str:
        """Waits for the hook's announcement; the netns id it ran in.
        With call (a tk.Call), fails at once, with its status, when the
        call ends first."""
        until = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = until - time.monotonic()
            if left <= 0:
                raise AssertionError("the hook %s never ran" % self.path)
            if not select.select([self._fd], [], [], min(left, 0.1))[0]:
                if call is not None and call.done():  # type: ignore
                    raise AssertionError(
                        "the call ended before its hook ran: %s"
                        % (call.status(),))  # type: ignore
                continue
            self._buf += os.read(self._fd, 256)
        line, self._buf = self._buf.split(b"\n", 1)
        _, ns, pid = line.decode().split()
        self.git_pid = int(pid)
        return ns

    def runs(self) -> List[str]:
        """The namespace ids of the hook's runs so far, in order."""
        try:
            with open(self.runs_file, encoding="utf-8") as f:
                return f.read().split()
        except FileNotFoundError:
            return []

    def release(self) -> None:
        fd = os.open(self.release_fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, b"go\n")
        finally:
            os.close(fd)

    def close(self) -> None:
        os.close(self._fd)


def pid_gone(pid: int) -> bool:
    """Whether pid has exited (a zombie counts: it runs no more)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read().decode("utf-8", "replace")
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def node_of(fleet: Fleet, ns_id: str) -> Node:
    """The node whose namespace a hook reported."""
    return next(n for n in fleet.nodes if n.netns_id == ns_id)
