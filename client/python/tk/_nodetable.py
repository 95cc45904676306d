# SPDX-License-Identifier: MIT
"""The table of a fleet as the client keeps it, and each call of a fleet
sent to its node: the table read (tk.v1.Control/ListNodes) and read again
after its TTL or a node's failure, a node that failed marked down, and a
call routed (tk._fleet decides where, on the table alone), sent, and sent
on to the next node where it may go (_Plan: where it has been). Works on
the client's state under the client's lock (tk.client.Client holds it);
the nodes' sockets are tk._nodesock's and the call's wait tk._inflight's.
Without a fleet none of it runs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, List, Optional

from tk import _fleet, _nng, catalog
from tk._nodesock import NODE_PING_TIMEOUT, _Node, _tls_hint
from tk.status import Code, Status
from tk.v1 import control_pb2

if TYPE_CHECKING:
    from tk._inflight import Call
    from tk.client import Client

#: The most nodes one call tries.
MAX_TRIES = 16


class _Plan:
    """How a call of a fleet is routed, and where it has been."""

    def __init__(self, method: str, path: Optional[str], named: Optional[str],
                 retry_reads: bool, timeout_ms: int) -> None:
        self.method = method
        self.path = path
        self.named = named or None
        self.retry_reads = retry_reads
        self.timeout_ms = timeout_ms
        m = catalog.find_method(method)
        # Only a READ the client knows is ever sent twice.
        self.read = m is not None and m.kind == catalog.Kind.READ
        # The one deadline a retried READ shares.
        self.budget_ms = timeout_ms or (m.default_timeout_ms if m else 0)
        self.start = time.monotonic()
        self.tried: List[_Node] = []


def ask_nodes(client: Client, node: _Node) -> Optional[control_pb2.ListNodesReply]:
    """The table tkd at node gives; None when it gives none (no fleet,
    an older tkd, an error, no answer within NODE_PING_TIMEOUT)."""
    call = client._start_on(node, "tk.v1.Control/ListNodes",
                            control_pb2.ListNodesRequest(), NODE_PING_TIMEOUT,
                            control_pb2.ListNodesReply, False)
    st = call.status()
    reply: Optional[control_pb2.ListNodesReply] = call._reply
    if st.ok and reply is not None and len(reply.nodes) > 0:
        return reply
    return None


def install(client: Client, reply: control_pb2.ListNodesReply) -> None:
    """The table from reply: a node of the old one with the same id and
    address is kept, with its socket; one that left is retired."""
    now = time.monotonic()
    with client._lock:
        new: List[_Node] = []
        for info in reply.nodes:
            node = next((x for x in client._nodes if x.id == info.node_id
                         and x.address == info.address), None)
            if node is None:
                node = _Node(info.node_id, info.address,
                             _nng.TlsFiles(*client._tls_files,
                                           _fleet.node_name(info.node_id)),
                             refused=_fleet.refusal(client._link, info.node_id,
                                                    info.address))
            node.roots = tuple(info.roots)
            node.draining = info.draining
            # Down until its heartbeat shows it alive since.
            if node.down and now - info.heartbeat_age_ms / 1000 > node.down_at:
                node.down = False
            new.append(node)
        client._retired += [x for x in client._nodes
                            if not any(x is y for y in new)]
        client._nodes = new
        client._ttl = (reply.ttl_ms or 6000) / 1000
        client._read_at = now


def refresh(client: Client) -> None:
    """Reads the table again when it is older than its TTL (or a node
    failed): one calling thread does, the others go on with the table
    they have. It asks the live nodes in turn; when none answers, the
    client keeps its table and asks again after the TTL."""
    with client._lock:
        now = time.monotonic()
        due = (client._fleet and not client._refreshing and not client._closed
               and (client._read_at is None or now - client._read_at >= client._ttl))
        if not due:
            return
        client._refreshing = True
        live = [x for x in client._nodes if not x.down and not x.draining]
    read = False
    try:
        for node in live:
            try:
                node.connect()
            except (_nng.NngError, ValueError, OSError):
                continue
            reply = ask_nodes(client, node)
            if reply is not None:
                install(client, reply)
                read = True
                break
    finally:
        with client._lock:
            if not read:
                client._read_at = time.monotonic()
            client._refreshing = False


def mark_down(client: Client, node: _Node) -> None:
    """node failed: skipped until a reading of the table shows a
    heartbeat since; the table is read again at the next call."""
    with client._lock:
        node.down = True
        node.down_at = time.monotonic()
        client._read_at = None


def dispatch(client: Client, call: Call[Any]) -> None:
    """Routes call (a fleet's) to its next node and sends it there;
    when it could not be sent, on to the next node where it may go
    (see again). Sets the call's status when it ends here."""
    plan = call._plan
    assert plan is not None
    while True:
        refresh(client)
        with client._lock:
            i, client._rr, refused = _fleet.route(
                client._nodes, plan.method, plan.path, plan.named, client._rr,
                plan.tried)
            node = client._nodes[i] if i is not None else None
        if node is None:
            # Nowhere (else) to go: the last node's failure says more.
            if not plan.tried:
                assert refused is not None
                call._finish(refused)
            call._final = True
            return
        timeout_ms = plan.timeout_ms
        if plan.tried and plan.budget_ms:
            spent = int((time.monotonic() - plan.start) * 1000)
            if spent >= plan.budget_ms:
                call._final = True  # the deadline has passed
                return
            timeout_ms = plan.budget_ms - spent
        plan.tried.append(node)
        try:
            node.connect()
        except (_nng.NngError, ValueError, OSError) as e:
            mark_down(client, node)
            with call._sent_lock:
                call._node = node
            call._node_failed, call._unsent = True, True
            call._finish(Status.local(
                Code.UNAVAILABLE, "could not connect to node %s: %s%s "
                "(the call was not sent)" % (node.id, e, _tls_hint(node, e)),
                reason=(_fleet.NODE_REFUSED
                        if isinstance(e, _fleet.NodeRefused) else "")))
        else:
            call._attempt(node, timeout_ms)
            if not call._unsent:
                return  # sent: its end is collected by the wait
            if call._node_failed:  # no connection to send it on
                mark_down(client, node)
        if not again(client, call):
            call._final = True
            return


def again(client: Client, call: Call[Any]) -> bool:
    """Whether call, ended by its node's failure, goes on to the next
    node: not when its caller named the node or cancelled it; one not
    sent, for Orders and Control (any node will do); a READ whose
    caller allows it (retry_reads), but for Services. A WRITE that was
    sent is never sent again."""
    plan = call._plan
    if (plan is None or plan.named or not call._node_failed
            or call._cancelled or len(plan.tried) >= MAX_TRIES):
        return False
    kind = _fleet.route_of(plan.method)
    if call._unsent and kind == _fleet.Route.ANY:
        return True
    return plan.read and plan.retry_reads and kind != _fleet.Route.NAMED
