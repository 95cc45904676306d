# SPDX-License-Identifier: MIT
"""tk.Client: calls to tkd over one NNG REQ socket, at most once each.

Mirrors libtkclient (client/lib/): call ids unique per connection,
the deadline sent in the envelope (timeout_ms), NNG's REQ resend disabled,
a client that, when no reply has come 250 ms past the deadline, asks tkd
where the call stands (tk.v1.Control/CallState) and waits on while tkd says
it is queued or running, so that tkd's own structured answer reaches the
caller however late a loaded machine makes it; a lost connection reported
as UNAVAILABLE ("whether it ran is unknown"), and cancellation as
tk.v1.Control/Cancel sent on the same socket, from any thread.

In a fleet (DESIGN.md "Scaling out"), the client keeps one such socket per
node of the table tk.v1.Control/ListNodes gives, and routes each call
(tk._fleet); a call kept waiting NODE_PROBE_MS Pings its node.

This module is the Client: its connection opened, its calls started, the
questions it asks a node on the node's own socket, and what a call that
got no reply ends with. The rest is in the modules it is made of, whose
public names it exports as it always has:

    tk._inflight    Call: a call in flight, its wait past the deadline,
                    its cancel (GRACE_MS, MAX_WAIT_MS, ASK_*, ...)
    tk._nodesock    _Node: one tkd's REQ socket and dialer (NODE_*)
    tk._nodetable   the table of a fleet, and a call sent to its node
                    (MAX_TRIES)
    tk._messages    message_class, request_class, reply_class; the reply
                    frame decoded
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import threading
import weakref
from typing import (Any, List, Optional, Sequence, Type, TypeVar, Union,
                    overload)

from google.protobuf.message import Message

from tk import _fleet, _nng, _nodetable
from tk._inflight import (ASK_MAX_PAUSE, ASK_SAME_ANSWERS, ASK_TIMEOUT,
                          CANCEL_TIMEOUT, GRACE_MS, MAX_WAIT_MS, WRITE_STOP_MS,
                          Call)
from tk._messages import decoder, message_class, reply_class, request_class
from tk._nodesock import NODE_CONNECT_MS, NODE_PING_TIMEOUT, NODE_PROBE_MS
from tk._nodesock import _Node as _Node  # tk.client._Node, as tests/fleet reach it
from tk._nodetable import MAX_TRIES
from tk._services import Services
from tk._text import absolute_paths
from tk.status import Cause, Code, Status, TkError
from tk.v1 import control_pb2

# What tk.client exported before its parts left for the modules above.
__all__ = [
    "ASK_MAX_PAUSE",
    "ASK_SAME_ANSWERS",
    "ASK_TIMEOUT",
    "CANCEL_TIMEOUT",
    "Call",
    "Client",
    "GRACE_MS",
    "MAX_TRIES",
    "MAX_WAIT_MS",
    "NODE_CONNECT_MS",
    "NODE_PING_TIMEOUT",
    "NODE_PROBE_MS",
    "WRITE_STOP_MS",
    "default_address",
    "message_class",
    "reply_class",
    "request_class",
]

M = TypeVar("M", bound=Message)


def default_address() -> str:
    """The address tkd listens on by default: TK_ADDR if set, else
    ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else ipc:///tmp/tk-<uid>/tkd.sock
    (as tk_default_address of libtkclient)."""
    addr = os.environ.get("TK_ADDR", "")
    if addr:
        return addr
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/"):
        return "ipc://%s/tk/tkd.sock" % xdg
    return "ipc:///tmp/tk-%d/tkd.sock" % os.geteuid()


def _timeout_ms(timeout: Optional[float]) -> int:
    if timeout is None:
        return 0
    # Rounded first: 0.2 s is 200.00000000000003 ms in binary floating point.
    ms = math.ceil(round(timeout * 1000, 6))
    if timeout <= 0 or ms > 0xFFFFFFFF:
        raise ValueError("timeout must be > 0 and < 2^32 ms, not %r" % timeout)
    return ms


_open_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # NNG's threads must not call back into a finalizing interpreter.
    for client in list(_open_clients):
        client.close()


class Client(Services):
    """A connection to tkd: Client(addr=None) dials addr (default:
    default_address()); tls+tcp:// with tls_ca (the CA that signed tkd's
    certificate), tls_cert and tls_key (this client's, which tkd requires),
    each defaulting to TK_TLS_CA, TK_TLS_CERT and TK_TLS_KEY, all PEM files.
    Thread-safe: share one Client between threads.

    addr may be a comma-separated list (or a sequence) of addresses: the
    first that connects is used. Unless it is an ipc:// address (one tkd
    on this machine), it is asked tk.v1.Control/ListNodes; when it names
    the nodes of a fleet, the client keeps one connection per node and
    routes each call (DESIGN.md "Scaling out"): Git and Search to the node
    whose roots hold the request's path, Services to the node named
    (node=), Orders and Control to any live node, round robin. Otherwise
    it works on that one connection as with any tkd. A node of the table
    is dialed only over the transport addr came in on, and over TLS its
    certificate must name its id, "ID.tk-node.invalid", whatever its
    address (tls_server_name is for addr alone); any other row is
    UNAVAILABLE NODE_REFUSED, the call not sent.

    Every method of proto/ is a typed method on an attribute per service,
    generated from the service descriptors (client/python/tk/*/*_tk.py):
    client.control.ping(data=b"x"), client.control.start_ping(...) -> Call.
    call()/start() call any method by name. Use it as a context manager,
    or close() it.
    """

    def __init__(self, addr: Union[str, Sequence[str], None] = None, *,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None) -> None:
        given = addr if addr is not None else default_address()
        addrs = given.split(",") if isinstance(given, str) else list(given)
        if not addrs or any(a == "" for a in addrs):
            raise ValueError("tk: an empty address in %r" % (given,))
        self._lock = threading.Lock()
        self._closed = False
        env = os.environ.get
        files = (tls_ca or env("TK_TLS_CA"), tls_cert or env("TK_TLS_CERT"),
                 tls_key or env("TK_TLS_KEY"))
        tls = _nng.TlsFiles(*files, tls_server_name)
        # The nodes of a fleet: the same files, and each node's certificate
        # must name its id (_fleet.node_name), whatever its address.
        self._tls_files = files
        sock: Optional[_nng.Socket] = None
        for i, address in enumerate(addrs):
            self.address = address
            try:
                sock = _nng.open_req(address, tls,
                                     NODE_CONNECT_MS if len(addrs) > 1 else 0)
                break
            except ValueError as e:
                raise ValueError("tk: %s" % e) from None
            except OSError as e:  # a TLS file that cannot be read
                raise ValueError("tk: %s" % e) from None
            except _nng.NngError as e:
                if e.errno in (_nng.EADDRINVAL, _nng.ENOTSUP):
                    raise ValueError("tk: %s is not an address NNG knows: %s"
                                     % (address, e)) from None
                if i + 1 < len(addrs):
                    continue
                hint = ""
                if e.errno in (_nng.ECONNREFUSED, _nng.ENOENT):
                    hint = " (is tkd running there?)"
                elif e.errno == _nng.ETIMEDOUT:
                    hint = (" (no connection within %d ms: the host or its "
                            "tkd is down, stopped, or unreachable)"
                            % NODE_CONNECT_MS)
                elif address.startswith("tls+"):
                    hint = (" (the TLS handshake failed: tkd refuses a client "
                            "without a certificate its CA signed, and this "
                            "client refuses a tkd whose certificate tls_ca did "
                            "not sign or that does not name the host)")
                raise TkError(Status.local(Code.UNAVAILABLE, str(e) + hint)) from None
        assert sock is not None
        # A fleet's nodes are dialed over the transport this came in on.
        self._link = _fleet.link_of(self.address)
        # Without a fleet: the one tkd, on this one socket.
        self._single = _Node("", self.address, tls, sock)
        # The table (under _lock; tk._nodetable keeps it): its nodes, when
        # it was read (None: read it at the next call), its TTL, whether a
        # thread reads it now, the round robin's next; and the nodes that
        # left it, closed with the client (a call in flight may still use
        # them).
        self._fleet = False
        self._nodes: List[_Node] = []
        self._read_at: Optional[float] = None
        self._ttl = 6.0
        self._refreshing = False
        self._rr = 0
        self._retired: List[_Node] = []
        # Ids need only be unique per connection; a random start keeps the
        # ids of different clients apart in tkd's log.
        seed = int.from_bytes(os.urandom(8), "little")
        self._ids = itertools.count((seed >> 16) | 1)
        self._init_services(self)
        _open_clients.add(self)
        # A fleet? Not over ipc://, which reaches one tkd on this machine:
        # that client works exactly as it always has.
        if not self.address.startswith("ipc://"):
            reply = _nodetable.ask_nodes(self, self._single)
            if reply is not None:
                _nodetable.install(self, reply)
                self._fleet = True
                # The nodes have their own sockets, dialed on first use.
                self._single.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections; calls still in flight end CANCELLED
        (cause CALLER, "the client was closed"). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            nodes = [self._single] + self._nodes + self._retired
        for node in nodes:
            node.close()
        _open_clients.discard(self)

    @property
    def fleet(self) -> bool:
        """Whether the client routes over the nodes of a fleet."""
        return self._fleet

    def nodes(self) -> List[control_pb2.NodeInfo]:
        """The table as the client last read it (ListNodes), [] without a
        fleet; down nodes (failed, not yet seen alive since) left out."""
        with self._lock:
            return [control_pb2.NodeInfo(node_id=n.id, address=n.address,
                                         roots=n.roots, draining=n.draining)
                    for n in self._nodes if not n.down]

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: Type[M],
             node: Optional[str] = ..., retry_reads: bool = ...) -> M: ...

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: Type[bytes],
             node: Optional[str] = ..., retry_reads: bool = ...) -> bytes: ...

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: None = ...,
             node: Optional[str] = ..., retry_reads: bool = ...) -> Message: ...

    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = None,
             reply_type: Optional[type] = None,
             node: Optional[str] = None, retry_reads: bool = False) -> object:
        """Calls method ("tk.v1.Control/Ping") with request and waits for
        the reply, which it returns; raises TkError for any other end.

        request is a message, or bytes sent as the payload as they are; a
        relative path in a message's field marked (tk.v1.path) is made
        absolute against the working directory, as tkcall does (tkd
        refuses relative paths).
        timeout (seconds) is the deadline sent to tkd; None means the
        method's default. reply_type is the class to decode the reply as
        (default: from the service descriptors), or bytes for the payload
        undecoded; a method the generated tk.v1 does not know needs one.

        In a fleet: node names the node to send it to, whatever the
        routing would pick (NOT_FOUND UNKNOWN_NODE when the table has no
        such node; without a fleet, any name is unknown); Services need
        one when there are several nodes (INVALID_ARGUMENT NODE_REQUIRED).
        retry_reads=True lets a READ whose node failed (client-made
        UNAVAILABLE: the connection dropped, the node stopped answering)
        go to the next node that can serve it, within the one deadline; a
        WRITE is never sent twice.
        """
        return self.start(method, request, timeout=timeout,
                          reply_type=reply_type, node=node,
                          retry_reads=retry_reads).result()

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ..., reply_type: Type[M],
              node: Optional[str] = ..., retry_reads: bool = ...) -> Call[M]: ...

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ..., reply_type: Type[bytes],
              node: Optional[str] = ...,
              retry_reads: bool = ...) -> Call[bytes]: ...

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ..., reply_type: None = ...,
              node: Optional[str] = ...,
              retry_reads: bool = ...) -> Call[Message]: ...

    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = None,
              reply_type: Optional[type] = None,
              node: Optional[str] = None,
              retry_reads: bool = False) -> Call[Any]:
        """As call(), without waiting for the reply: sends the request and
        returns its Call (result(), status(), cancel())."""
        timeout_ms = _timeout_ms(timeout)
        decode = decoder(method, reply_type)
        if not isinstance(request, bytes):
            request = absolute_paths(request)
        payload = request if isinstance(request, bytes) else request.SerializeToString()
        self._check_open()
        if not self._fleet:
            call: Call[Any] = Call(self, method, payload, decode, True)
            if node:
                call._finish(Status.local(
                    Code.NOT_FOUND, 'no node "%s": tkd at %s is no member of '
                    "a fleet" % (node, self.address), reason=_fleet.UNKNOWN_NODE))
                return call
            call._attempt(self._single, timeout_ms)
            return call
        path = None
        if not node and _fleet.route_of(method) == _fleet.Route.PATH:
            path = _fleet.path_of(method, request)
        plan = _nodetable._Plan(method, path, node, retry_reads, timeout_ms)
        call = Call(self, method, payload, decode, True, plan)
        _nodetable.dispatch(self, call)
        return call

    def _check_open(self) -> None:
        with self._lock:
            if self._closed:
                raise ValueError("tk: the client is closed")

    def _new_id(self) -> int:
        with self._lock:
            return next(self._ids) & 0xFFFFFFFFFFFFFFFF

    def _start_on(self, node: _Node, method: str, request: Message,
                  timeout: float, reply_type: type, ask: bool) -> Call[Any]:
        """A call sent to node as it is, without routing: the questions
        about a call (CallState, Cancel) on its own connection, the probe,
        ListNodes."""
        self._check_open()
        call: Call[Any] = Call(self, method, request.SerializeToString(),
                               decoder(method, reply_type), ask)
        call._attempt(node, _timeout_ms(timeout))
        return call

    def _call_state(self, node: _Node, call_id: int) -> Optional[int]:
        """Where call_id stands at tkd (CallStateReply.State), asked on
        node's socket and so on the call's connection: None when tkd did
        not answer, -2 when it does not know the method."""
        req = control_pb2.CallStateRequest(call_id=call_id)
        call = self._start_on(node, "tk.v1.Control/CallState", req, ASK_TIMEOUT,
                              control_pb2.CallStateReply, False)
        st = call.status()
        if st.code == Code.UNIMPLEMENTED:
            return -2
        if not st.ok or call._reply is None:
            return None
        return int(call._reply.state)

    def _node_answers(self, node: _Node) -> bool:
        """Whether node answers a Ping on its socket within
        NODE_PING_TIMEOUT: any reply of tkd's is an answer."""
        call = self._start_on(node, "tk.v1.Control/Ping",
                              control_pb2.PingRequest(), NODE_PING_TIMEOUT,
                              control_pb2.PingReply, False)
        return call.status().from_server

    def _failure(self, node: Optional[_Node], errno: int) -> Status:
        """The status of a call that got no reply (NNG error errno)."""
        with self._lock:
            closed = self._closed
        address = node.address if node is not None else self.address
        if closed or errno == _nng.ECLOSED:
            # Closing drops the connection first: not a server's doing.
            return Status.local(Code.CANCELLED,
                                "the client was closed during the call",
                                Cause.CALLER)
        if errno in (_nng.ECONNRESET, _nng.ECONNSHUT):
            return Status.local(
                Code.UNAVAILABLE,
                "the connection to tkd at %s was lost while the call was in "
                "flight; whether it ran is unknown (it is not resent)"
                % address)
        return Status.local(Code.UNAVAILABLE, "receiving from %s: %s"
                            % (address, _nng.strerror(errno)))
