# SPDX-License-Identifier: MIT
"""Control/ListNodes has a server-side bound (issue 31, part 4): its nodes
are the live rows of tk_nodes, and any writer of the fleet's database
(every node is one) can add rows. At 31f2572 a node answered every live
row, in one reply made on the receive path, whatever their number and
size. Now the reply holds at most the method's list ceiling of nodes
(1024) and of their bytes (1 MiB of ids, addresses, versions and roots),
as ListMethods reports it, and says partial, cause LIMIT, beyond it.

One tkd is a node (--node-id, --pg, a TLS listener); the test writes rows
into its database as such a writer would, with a fresh heartbeat and a
TTL that keeps them live for the test, and asks the node (its own reading,
read again every heartbeat). The negative control: a few rows more are
all listed, whole.

Skips (exit 77) where there is no PostgreSQL 15, no openssl or psql, or
no TLS in the NNG tkd is linked with. Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time
import unittest
from typing import Any, Optional

import tkproc
from certs import CLIENT_EXT, make_ca, make_cert, node_ext
from fleetfx import Cluster, need_programs, need_tls, start_tkd

import tk

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

WAIT_S = 20.0
HEARTBEAT_MS = 200
# Rows written with a fresh heartbeat stay live this long: the test.
TTL_MS = 120000

CLUSTER: Optional[Cluster] = None


def setUpModule() -> None:
    global CLUSTER
    need_programs("openssl", "psql")
    need_tls()
    CLUSTER = Cluster()


def tearDownModule() -> None:
    if CLUSTER is not None:
        CLUSTER.stop()
        CLUSTER.close()


class NodesBound(unittest.TestCase):
    """A node of its own database, and a client of it."""

    db_serial = 0

    def setUp(self) -> None:
        assert CLUSTER is not None
        self.pg = CLUSTER
        self.tmp = tkproc.tempdir("nodes")
        d = self.tmp.name
        ca = make_ca(d, "ca")
        server = make_cert(d, "tkd", ca, node_ext("self"))
        alice = make_cert(d, "alice", ca, CLIENT_EXT)
        NodesBound.db_serial += 1
        self.db = "nodes%d" % NodesBound.db_serial
        self.pg.sql("tk", "DROP DATABASE IF EXISTS %s" % self.db)
        self.pg.sql("tk", "CREATE DATABASE %s" % self.db)
        root = os.path.join(d, "root")
        os.makedirs(root)

        def argv(port: int) -> list:
            addr = "tls+tcp://127.0.0.1:%d" % port
            return [tkproc.program("TKD"), "--listen", addr,
                    "--tls-cert", server[0], "--tls-key", server[1],
                    "--tls-ca", ca[0], "--node-id", "self",
                    "--advertise", addr, "--pg", self.pg.dsn_of(self.db),
                    "--root", root, "--heartbeat-ms", str(HEARTBEAT_MS),
                    "--node-ttl-ms", str(TTL_MS), "--log-level", "info"]

        env = dict(os.environ, HOME=d, XDG_CONFIG_HOME=d,
                   GIT_CONFIG_NOSYSTEM="1")
        self.tkd, port = start_tkd(argv, env)
        self.tkd.wait_output("fleet: node self joined at", "stderr")
        self.client = tk.Client("tls+tcp://127.0.0.1:%d" % port,
                                tls_ca=ca[0], tls_cert=alice[0],
                                tls_key=alice[1])
        methods = self.client.control.list_methods(timeout=10,
                                                   node="self").methods
        lists = {m.name: m.list for m in methods if m.HasField("list")}
        # The declared bound (the client's catalog, from proto/), which
        # tkd must report as it is.
        declared = tk.catalog.find_method("tk.v1.Control/ListNodes")
        assert declared is not None and declared.list is not None
        self.bound = declared.list
        served = lists.get("tk.v1.Control/ListNodes")
        self.served = (served.max_items, served.max_bytes) if served else None

    def tearDown(self) -> None:
        self.client.close()
        self.tkd.stop()
        self.tmp.cleanup()

    def write_rows(self, n: int, root_bytes: int = 10) -> None:
        """n rows as any writer of the database can write them: live (a
        fresh heartbeat), each with one root of root_bytes."""
        self.pg.sql(self.db, (
            "INSERT INTO tk_nodes (node_id, address, roots, version, "
            "instance, heartbeat_at) SELECT 'w' || g, "
            "'tls+tcp://192.0.2.1:' || (1000 + g), "
            "ARRAY['/' || repeat('r', %d)], 'x', 'w', now() "
            "FROM generate_series(1, %d) AS g" % (root_bytes, n)))

    def listed(self, want: int) -> Any:
        """The node's answer once its reading holds want rows or more (it
        reads every heartbeat): the reply and its status."""
        end = time.monotonic() + WAIT_S
        while True:
            call = self.client.control.start_list_nodes(timeout=5,
                                                        node="self")
            reply = call.result()
            if len(reply.nodes) >= min(want, self.bound.max_items) or \
                    call.status().partial or time.monotonic() > end:
                return reply, call.status()
            time.sleep(HEARTBEAT_MS / 1000 / 4)

    def test_tkd_reports_the_declared_bound(self) -> None:
        self.assertEqual(self.served, (self.bound.max_items,
                                       self.bound.max_bytes))

    def test_nodes_past_the_ceiling(self) -> None:
        self.write_rows(self.bound.max_items + 100)
        reply, st = self.listed(self.bound.max_items + 101)
        self.assertEqual(len(reply.nodes), self.bound.max_items)
        self.assertTrue(st.partial, "a reply cut at its ceiling is partial")
        self.assertEqual(st.cancellation.cause, tk.Cause.LIMIT)

    def test_bytes_past_the_budget(self) -> None:
        # 100 rows of 20 KiB of roots: 2 MiB, twice the budget.
        self.write_rows(100, 20 * 1024)
        reply, st = self.listed(101)
        self.assertTrue(st.partial)
        self.assertEqual(st.cancellation.cause, tk.Cause.LIMIT)
        kept = sum(len(n.node_id) + len(n.address) + len(n.version) +
                   sum(len(r) for r in n.roots) for n in reply.nodes)
        self.assertLessEqual(kept, self.bound.max_bytes)
        self.assertGreater(len(reply.nodes), 40, "as many as fit")
        self.assertLess(len(reply.nodes), 101)

    def memory(self) -> dict:
        """VmRSS and VmHWM of the node, in bytes."""
        out = {}
        with open("/proc/%d/status" % self.tkd.proc.pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(rest.split()[0]) * 1024
        return out

    def test_reading_is_bounded(self) -> None:
        # What the node reads of the table every heartbeat is bounded too:
        # on 31f2572, 10,000 rows of one root each cost the heartbeat
        # thread a roots array as long as the whole reading for each node
        # (some 800 MB), and 20 rows of a 10 MB root 200 MB of libpq's
        # result. Now the node's peak grows by a few MiB (its reading is
        # at most 1025 nodes and 2 MiB of strings, sql.c).
        with open("/proc/%d/clear_refs" % self.tkd.proc.pid, "w") as f:
            f.write("5")  # VmHWM from here on
        before = self.memory()["VmRSS"]
        self.write_rows(10000)
        self.pg.sql(self.db, (
            "INSERT INTO tk_nodes (node_id, address, roots, version, "
            "instance, heartbeat_at) SELECT 'big' || g, "
            "'tls+tcp://192.0.2.2:' || (1000 + g), "
            "ARRAY['/' || repeat('r', 10000000)], 'x', 'w', now() "
            "FROM generate_series(1, 20) AS g"))
        reply, st = self.listed(10001)
        self.assertTrue(st.partial)
        self.assertEqual(len(reply.nodes), self.bound.max_items)
        peak = self.memory()["VmHWM"]
        self.assertLess(peak - before, 64 << 20,
                        "the node's peak grew from %d to %d bytes"
                        % (before, peak))

    def test_control_a_few_rows_are_whole(self) -> None:
        self.write_rows(10)
        reply, st = self.listed(11)
        self.assertEqual(len(reply.nodes), 11)
        self.assertFalse(st.partial)


if __name__ == "__main__":
    unittest.main(verbosity=2)
