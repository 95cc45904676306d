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
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import threading
import time
import weakref
from typing import (Any, Callable, Generic, List, Optional, Sequence, Tuple,
                    Type, TypeVar, Union, overload)

from google.protobuf import descriptor_pool, message_factory, symbol_database
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError, Message

from tk import _fleet, _nng, catalog
from tk._services import Services
from tk.status import CancelOutcome, Cause, Code, Status, TkError, _enum_or_int
from tk.v1 import control_pb2, rpc_pb2

#: How long past the deadline the client waits for the reply before it asks
#: tkd where the call stands (TK_DEADLINE_GRACE_MS of libtkclient).
GRACE_MS = 250
#: How long a call without a timeout (the method's default, which is the
#: server's: tk.catalog has the declared one, a tkd's configuration may
#: change it) may wait for its reply at most, and how much longer than its
#: deadline a call may wait while tkd says it runs (TK_MAX_WAIT_MS).
MAX_WAIT_MS = 15 * 60 * 1000
#: What tkd takes to stop a write at its own timeout (proc's SIGTERM grace
#: and drain, and the reply): past the deadline, a WRITE's reply is waited
#: for at least its ceiling and this (TK_WRITE_STOP_MS).
WRITE_STOP_MS = 5000
#: The bound of a Cancel: tkd answers it inline, so this only matters for a
#: server that stopped answering.
CANCEL_TIMEOUT = 5.0
#: The bound of a CallState question, answered inline as a Cancel is.
ASK_TIMEOUT = 5.0
#: The longest pause between two questions about a late reply.
ASK_MAX_PAUSE = 2.0
#: How many answers in a row end the wait when they are ANSWERED (the reply
#: was handed to the connection ahead of the answer) or NOT_FOUND (tkd may
#: take a question before the call it follows, so one can be premature).
ASK_SAME_ANSWERS = 3

#: In a fleet, how long a call waits for its reply before the client Pings
#: its node on the same connection, and again every NODE_PROBE_MS while it
#: waits (TK_NODE_PROBE_MS of libtkclient): a link that went down tells
#: nobody. Not with one tkd.
NODE_PROBE_MS = 5000
#: How long a node gets to answer that Ping (it is answered inline, even
#: when every worker is busy), and a ListNodes.
NODE_PING_TIMEOUT = 5.0
#: How long a node of a fleet, or an address of a list, gets to connect,
#: TLS handshake included (NODE_CONNECT_MS of libtkclient): a host that is
#: down, or a tkd that is stopped, fails to connect instead of holding the
#: call. One address alone is dialed as NNG does, unbounded, as ever.
NODE_CONNECT_MS = 5000
#: The most nodes one call tries.
MAX_TRIES = 16

# CallStateReply.State, by number (gen/python's enum values).
_QUEUED, _RUNNING, _ANSWERED, _NOT_FOUND = 1, 2, 3, 4

M = TypeVar("M", bound=Message)
R = TypeVar("R")


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


def message_class(full_name: str) -> Type[Message]:
    """The generated class of a message by its full name
    ("tk.v1.PingRequest"); KeyError when gen/python has no such message."""
    desc = descriptor_pool.Default().FindMessageTypeByName(full_name)
    get = getattr(message_factory, "GetMessageClass", None)
    cls: Type[Message]
    if get is not None:  # protobuf >= 4.22
        cls = get(desc)
    else:
        cls = symbol_database.Default().GetSymbol(full_name)
    return cls


def _method(method: str) -> Optional[MethodDescriptor]:
    service, _, name = method.partition("/")
    try:
        svc = descriptor_pool.Default().FindServiceByName(service)
    except KeyError:
        return None
    return svc.methods_by_name.get(name)


def request_class(method: str) -> Optional[Type[Message]]:
    """The request class of a method ("tk.v1.Git/RevParse") from the
    service descriptors, or None when gen/python does not have the method."""
    rpc = _method(method)
    return None if rpc is None else message_class(rpc.input_type.full_name)


def reply_class(method: str) -> Optional[Type[Message]]:
    """The reply class of a method, as request_class."""
    rpc = _method(method)
    return None if rpc is None else message_class(rpc.output_type.full_name)


def _timeout_ms(timeout: Optional[float]) -> int:
    if timeout is None:
        return 0
    # Rounded first: 0.2 s is 200.00000000000003 ms in binary floating point.
    ms = math.ceil(round(timeout * 1000, 6))
    if timeout <= 0 or ms > 0xFFFFFFFF:
        raise ValueError("timeout must be > 0 and < 2^32 ms, not %r" % timeout)
    return ms


class _Node:
    """A tkd the client calls, with its own REQ socket: the one tkd of a
    client without a fleet (id "", its socket dialed at open), or a node of
    the table ListNodes gave (dialed on first use, and again when its
    connection dropped: NNG would redial on its own, but a call must learn
    at once that a node is gone, to go to the next). Never several dialers
    on one socket. What the table says of it (roots, draining) and whether
    it failed (down) are the client's, under its lock."""

    def __init__(self, node_id: str, address: str, tls: _nng.TlsFiles,
                 sock: Optional[_nng.Socket] = None,
                 refused: Optional[str] = None) -> None:
        self.id = node_id
        self.address = address
        self.refused = refused  # why it is never dialed (_fleet.refusal)
        self.roots: Tuple[str, ...] = ()
        self.draining = False
        self.down = False  # failed: skipped until the table shows it alive
        self.down_at = 0.0
        self._tls = tls
        self._lock = threading.Lock()  # the socket and its dialer
        self.sock = sock
        self._dialer: Optional[_nng.Dialer] = None
        self._pipes: Optional[int] = None  # _nng.count_pipes's key
        self._closed = False
        # The dials that failed, and the last one's error: a thread that
        # waited for the lock while a dial failed takes that answer rather
        # than waiting NODE_CONNECT_MS again for its own.
        self._failed = 0
        self._error: Optional[Exception] = None

    def connect(self) -> None:
        """Opens the socket on first use and dials it when it has no
        connection. Raises NngError (it did not connect), NodeRefused (a
        node this client does not dial), ValueError or OSError (TLS
        files)."""
        if self.refused is not None:
            raise _fleet.NodeRefused(self.refused)
        failed = self._failed
        with self._lock:
            if self._closed:
                raise _nng.NngError(_nng.ECLOSED, "node %s" % self.id)
            if self.sock is None:
                sock = _nng.open_socket()
                try:
                    self._pipes = _nng.count_pipes(sock)
                except BaseException:
                    _nng.close(sock)
                    raise
                self.sock = sock
            assert self._pipes is not None
            if self._dialer is None or _nng.pipes(self._pipes) == 0:
                e = self._error
                if self._failed != failed and e is not None:
                    if isinstance(e, _nng.NngError):
                        raise _nng.NngError(e.errno, "cannot connect to "
                                            + self.address)
                    raise ValueError(str(e))
                if self._dialer is not None:
                    _nng.close_dialer(self._dialer)
                    self._dialer = None
                try:
                    self._dialer = _nng.dial(self.sock, self.address,
                                             self._tls, NODE_CONNECT_MS)
                except (_nng.NngError, ValueError, OSError) as err:
                    self._failed += 1
                    self._error = err
                    raise

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            sock, key = self.sock, self._pipes
        if sock is not None:
            _nng.close(sock)
        if key is not None:
            _nng.uncount_pipes(key)


def _tls_hint(node: _Node, e: Exception) -> str:
    """What a failed TLS dial of a fleet's node may mean (libtkclient's
    words)."""
    if (not isinstance(e, _nng.NngError) or not node.address.startswith("tls+")
            or e.errno in (_nng.ECONNREFUSED, _nng.ENOENT, _nng.ETIMEDOUT)):
        return ""
    return (" (the TLS handshake failed: tkd refuses a client without a "
            "certificate its CA signed, and this client refuses a tkd whose "
            "certificate tls_ca did not sign or that does not name node %s, "
            "DNS:%s)" % (node.id, _fleet.node_name(node.id)))


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


class Call(Generic[R]):
    """A call in flight, from Client.start (or a start_<method> stub).

    result() waits for its end and returns the reply or raises TkError;
    cancel() sends tk.v1.Control/Cancel for it, from any thread. Past the
    deadline, the wait in result() and status() asks tkd where the call
    stands and goes on while tkd says it still runs (tkd ends every call
    itself), so the caller gets tkd's own answer; the client reports a
    status of its own when tkd does not answer the question, no longer
    knows the call, or says it answered and no reply follows. A WRITE that
    tkd said runs has started and runs to completion: its reply is waited
    for at least its ceiling (tk.catalog) and WRITE_STOP_MS, and it is
    never reported DEADLINE_EXCEEDED by the client (UNKNOWN when its reply
    cannot come: whether it completed is unknown). Thread-safe.

    In a fleet, the wait also Pings the call's node when no reply has come
    for NODE_PROBE_MS, and again every NODE_PROBE_MS; and a READ started
    with retry_reads=True whose node failed (client-made UNAVAILABLE) is
    sent again, within its one deadline, to the next node that can serve
    it, by the wait (status(), result(), done()): call_id is then the new
    call's. Status.node says which node carried it.
    """

    def __init__(self, client: Client, method: str, payload: bytes,
                 decode: Callable[[bytes], R], ask: bool = True,
                 plan: Optional[_Plan] = None) -> None:
        self.call_id = 0
        self.method = method
        self._client = client
        self._payload = payload
        self._decode = decode
        self._plan = plan
        self._done = threading.Event()
        self._lock = threading.Lock()  # collecting the outcome
        self._final = plan is None  # no other node will be tried
        # The attempt cancel() reads (under _sent_lock).
        self._sent_lock = threading.Lock()
        self._node: Optional[_Node] = None
        self._sent = False
        self._cancelled = False
        self._channel: Optional[_nng.Channel] = None
        self._status: Optional[Status] = None
        self._reply: Optional[R] = None
        # The node failed: no connection, lost, or no answer to its probe;
        # and whether the call was sent at all.
        self._node_failed = False
        self._unsent = True
        # Asking about a late reply, and probing the node (under _ask_lock).
        self._ask = ask
        self._probe = plan is not None
        self._ask_lock = threading.Lock()
        self._next_ask = math.inf
        self._next_probe = math.inf
        self._last = math.inf
        self._pause = GRACE_MS / 1000
        self._same = 0
        self._last_state: Optional[int] = None
        self._gave_up: Optional[Status] = None
        # A WRITE that has started runs to completion whatever its
        # caller's deadline: once tkd says it runs, the client never
        # reports DEADLINE_EXCEEDED for it.
        m = catalog.find_method(method)
        self._write = m is not None and m.kind == catalog.Kind.WRITE
        self._ceiling_ms = m.ceiling_ms if m is not None else 0
        self._started = False

    @property
    def _address(self) -> str:
        return self._node.address if self._node is not None else self._client.address

    def _attempt(self, node: _Node, timeout_ms: int) -> None:
        """Sends the call to node (whose socket is open) as a new call;
        the status is set at once when it could not be sent."""
        with self._ask_lock:
            self._status, self._reply = None, None
            self._node_failed, self._unsent = False, True
            self._next_ask = self._next_probe = self._last = math.inf
            self._pause = GRACE_MS / 1000
            self._same, self._last_state = 0, None
            self._gave_up, self._started = None, False
            self._done.clear()
        call_id = self._client._new_id()
        with self._sent_lock:
            self._node, self.call_id, self._sent = node, call_id, False
        envelope = rpc_pb2.Request(call_id=call_id, method=self.method,
                                   timeout_ms=timeout_ms, payload=self._payload)
        assert node.sock is not None
        self._send(node.sock, envelope.SerializeToString(), timeout_ms)

    def _send(self, sock: _nng.Socket, envelope: bytes, timeout_ms: int) -> None:
        wait_ms = MAX_WAIT_MS if timeout_ms == 0 else timeout_ms + GRACE_MS
        t0 = time.monotonic()
        try:
            self._channel = _nng.Channel(sock, self._done.set)
        except _nng.NngError as e:
            self._finish(self._client._failure(self._node, e.errno))
            return
        # A send waits for a connection; bound it by the same deadline. In
        # a fleet, by NODE_PROBE_MS at most: a node that has had no
        # connection that long is down, and the call (not sent) may go on.
        send_ms = wait_ms
        if self._client._fleet:
            send_ms = min(send_ms, NODE_PROBE_MS)
        rv = self._channel.send(envelope, send_ms)
        if rv != 0:
            self._node_failed = True
            self._finish(Status.local(
                Code.UNAVAILABLE,
                "could not send to tkd at %s: %s (the call was not sent)"
                % (self._address, _nng.strerror(rv))))
            return
        with self._sent_lock:
            self._sent = True
        self._unsent = False
        # The first question at the deadline plus the grace; however long
        # tkd says the call runs, MAX_WAIT_MS more at most. With the
        # method's default deadline, known only to tkd, nothing is asked.
        with self._ask_lock:
            self._next_ask = t0 + wait_ms / 1000
            self._last = (self._next_ask if timeout_ms == 0 or not self._ask
                          else self._next_ask + MAX_WAIT_MS / 1000)
            if self._write:  # at least the write's own timeout, and its stop
                own = t0 + (self._ceiling_ms + WRITE_STOP_MS) / 1000
                if timeout_ms == 0:
                    self._next_ask = max(self._next_ask, own)
                self._last = max(self._last, own)
            if self._probe:
                self._next_probe = t0 + NODE_PROBE_MS / 1000
        self._channel.start_recv()

    def _finish(self, status: Status, reply: Optional[R] = None) -> None:
        node = self._node.id if self._node is not None else ""
        self._status, self._reply = status._on_node(node), reply
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self._done.set()

    def _collect(self) -> None:
        # Under self._lock, once the receive has ended.
        if self._status is not None:
            return
        assert self._channel is not None
        rv, data = self._channel.recv_result()
        if rv != 0:
            if rv == _nng.ECANCELED and self._gave_up is not None:
                self._finish(self._gave_up)
            else:
                if rv in (_nng.ECONNRESET, _nng.ECONNSHUT):
                    self._node_failed = True
                self._finish(self._client._failure(self._node, rv))
            return
        self._finish(*self._client._decode_reply(data or b"", self.call_id,
                                                 self._decode))

    def _settle(self) -> bool:
        """Under self._lock, once the receive has ended: collects the
        outcome and, in a fleet, sends the call on to the next node where
        it may go; True when the outcome is final."""
        self._collect()
        if self._final:
            return True
        node = self._node
        if self._node_failed and node is not None:
            self._client._mark_down(node)
        if not self._client._again(self):
            self._final = True
            return True
        self._client._dispatch(self)
        return self._final and self._done.is_set()

    def _wait(self, timeout: Optional[float]) -> bool:
        """Waits for the end of the call, asking tkd and probing the node
        when it is time; False when timeout (seconds) passed first."""
        end = math.inf if timeout is None else time.monotonic() + timeout
        while not self._done.is_set():
            with self._ask_lock:
                at = min(self._next_ask, self._next_probe)
            until = min(at, end)
            if self._done.wait(max(0.0, until - time.monotonic())
                               if until != math.inf else None):
                return True
            now = time.monotonic()
            if now < at:
                if now >= end:
                    return False
                continue
            with self._ask_lock:
                if self._done.is_set():
                    break
                now = time.monotonic()
                if now >= self._next_probe:
                    self._probe_once()
                elif now >= self._next_ask:
                    self._ask_once()
        return True

    def _probe_once(self) -> None:
        # Under _ask_lock: Pings the call's node on the call's socket; any
        # answer of tkd's will do. None within NODE_PING_TIMEOUT: the node
        # stopped answering, and the call ends.
        node = self._node
        assert node is not None
        answered = self._client._node_answers(node)
        if answered or self._done.is_set():
            self._next_probe = time.monotonic() + NODE_PROBE_MS / 1000
            return
        self._node_failed = True
        self._gave_up = Status.local(
            Code.UNAVAILABLE,
            "node %s at %s stopped answering (no answer to a Ping within "
            "%d ms); whether it ran is unknown"
            % (node.id, node.address, NODE_PING_TIMEOUT * 1000))
        self._next_ask = self._next_probe = math.inf
        if self._channel is not None:
            self._channel.stop_recv()

    def _ask_once(self) -> None:
        # Under _ask_lock, at the time of the next question: asks it, and
        # either sets the time of the one after or gives up.
        why: Union[None, str, Tuple[Code, str]] = None
        if not self._ask or time.monotonic() >= self._last:
            why = ("no reply from tkd at %s within the deadline and %d ms of "
                   "grace: the server did not answer"
                   % (self._address, GRACE_MS))
        else:
            assert self._node is not None
            state = self._client._call_state(self._node, self.call_id)
            self._same = self._same + 1 if state == self._last_state else 1
            self._last_state = state
            why = self._verdict(state)
        if why is None:
            self._next_ask = min(time.monotonic() + self._pause, self._last)
            self._pause = min(self._pause * 2, ASK_MAX_PAUSE)
            return
        code, text = why if isinstance(why, tuple) else (Code.DEADLINE_EXCEEDED, why)
        if self._started:
            code, text = Code.UNKNOWN, (
                "the write (call %d) had started on tkd at %s, which runs it "
                "to completion whatever its caller's deadline, but its reply "
                "did not reach this client; whether it completed is unknown"
                % (self.call_id, self._address))
        self._gave_up = Status.local(
            code, text + ("" if code in (Code.UNAVAILABLE, Code.UNKNOWN)
                          else " (a WRITE may still complete there)"),
            Cause.DEADLINE if code == Code.DEADLINE_EXCEEDED else Cause.NONE)
        self._next_ask = self._next_probe = math.inf
        if self._channel is not None:
            self._channel.stop_recv()

    def _verdict(self, state: Optional[int]) -> Union[None, str, Tuple[Code, str]]:
        """None to wait on after tkd's answer state (None: no answer, -2: the
        method is unknown to tkd), else why the client stops waiting."""
        addr = self._address
        if state == _RUNNING and self._write:
            self._started = True  # tkd starts a WRITE only before its deadline
        if state in (_QUEUED, _RUNNING):
            return None
        if state is None:
            return ("no reply from tkd at %s within the deadline, and no "
                    "answer within %d ms when asked where the call stands: "
                    "the server did not answer" % (addr, ASK_TIMEOUT * 1000))
        if state == -2:
            return ("no reply from tkd at %s within the deadline and %d ms of "
                    "grace, and this tkd cannot be asked where a call stands "
                    "(tk.v1.Control/CallState is unknown to it)"
                    % (addr, GRACE_MS))
        if self._same < ASK_SAME_ANSWERS:
            return None
        if state == _ANSWERED:
            return (Code.UNAVAILABLE,
                    "tkd at %s says it answered call %d, but its reply did not "
                    "arrive; whether it ran is unknown" % (addr, self.call_id))
        return ("no reply from tkd at %s within the deadline, and tkd has no "
                "record of call %d on this connection" % (addr, self.call_id))

    def done(self) -> bool:
        """Whether the call has ended (result() would not wait). In a
        fleet, a READ whose node failed may be sent on from here
        (retry_reads): then it has not ended."""
        if not self._done.is_set():
            return False
        with self._lock:
            return self._done.is_set() and self._settle()

    def status(self, timeout: Optional[float] = None) -> Status:
        """Waits for the end of the call and returns its status, OK or not
        (partial, write_completed, elapsed_us of a successful call; node).
        Raises TimeoutError when timeout (seconds) passes first; the call
        goes on."""
        end = math.inf if timeout is None else time.monotonic() + timeout
        while True:
            left = None if end == math.inf else max(0.0, end - time.monotonic())
            if not self._wait(left):
                raise TimeoutError("%s (call %d) still running"
                                   % (self.method, self.call_id))
            with self._lock:
                if self._done.is_set() and self._settle():
                    assert self._status is not None
                    return self._status

    def result(self, timeout: Optional[float] = None) -> R:
        """Waits for the end of the call: returns the reply, or raises
        TkError with the status. TimeoutError as for status()."""
        st = self.status(timeout)
        if not st.ok:
            raise TkError(st)
        assert self._reply is not None
        return self._reply

    def cancel(self) -> Union[CancelOutcome, int]:
        """Sends tk.v1.Control/Cancel for this call on the same connection
        (in a fleet, to the node that carries it) and returns tkd's
        outcome: CANCELLED (the call ends CANCELLED, cause CALLER),
        WRITE_CONTINUES (a started WRITE runs to completion), ALREADY_DONE,
        NOT_FOUND; NOT_SENT when the call was never sent. A cancelled call
        is not sent to another node. Raises TkError when the Cancel itself
        fails."""
        with self._sent_lock:
            self._cancelled = True
            node, call_id, sent = self._node, self.call_id, self._sent
        if not sent or node is None:
            return CancelOutcome.NOT_SENT
        call: Call[control_pb2.CancelReply] = self._client._start_on(
            node, "tk.v1.Control/Cancel",
            control_pb2.CancelRequest(call_id=call_id), CANCEL_TIMEOUT,
            control_pb2.CancelReply, True)
        return _enum_or_int(CancelOutcome, call.result().outcome)

    def __del__(self) -> None:
        # An abandoned call: stop its receive and free the NNG objects.
        channel = getattr(self, "_channel", None)
        if channel is not None:
            try:
                channel.close()
            except Exception:  # interpreter shutdown
                pass


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
    generated from the service descriptors (gen/python/tk/*/*_tk.py):
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
        # The table (under _lock): its nodes, when it was read (None: read
        # it at the next call), its TTL, whether a thread reads it now, the
        # round robin's next; and the nodes that left it, closed with the
        # client (a call in flight may still use them).
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
            reply = self._ask_nodes(self._single)
            if reply is not None:
                self._install(reply)
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

        request is a message, or bytes sent as the payload as they are.
        timeout (seconds) is the deadline sent to tkd; None means the
        method's default. reply_type is the class to decode the reply as
        (default: from the service descriptors), or bytes for the payload
        undecoded; a method gen/python does not know needs one.

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
        decode = self._decoder(method, reply_type)
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
        plan = _Plan(method, path, node, retry_reads, timeout_ms)
        call = Call(self, method, payload, decode, True, plan)
        self._dispatch(call)
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
                               self._decoder(method, reply_type), ask)
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

    # ---- the table of a fleet ----

    def _ask_nodes(self, node: _Node) -> Optional[control_pb2.ListNodesReply]:
        """The table tkd at node gives; None when it gives none (no fleet,
        an older tkd, an error, no answer within NODE_PING_TIMEOUT)."""
        call = self._start_on(node, "tk.v1.Control/ListNodes",
                              control_pb2.ListNodesRequest(), NODE_PING_TIMEOUT,
                              control_pb2.ListNodesReply, False)
        st = call.status()
        reply: Optional[control_pb2.ListNodesReply] = call._reply
        if st.ok and reply is not None and len(reply.nodes) > 0:
            return reply
        return None

    def _install(self, reply: control_pb2.ListNodesReply) -> None:
        """The table from reply: a node of the old one with the same id and
        address is kept, with its socket; one that left is retired."""
        now = time.monotonic()
        with self._lock:
            new: List[_Node] = []
            for info in reply.nodes:
                node = next((x for x in self._nodes if x.id == info.node_id
                             and x.address == info.address), None)
                if node is None:
                    node = _Node(info.node_id, info.address,
                                 _nng.TlsFiles(*self._tls_files,
                                               _fleet.node_name(info.node_id)),
                                 refused=_fleet.refusal(self._link, info.node_id,
                                                        info.address))
                node.roots = tuple(info.roots)
                node.draining = info.draining
                # Down until its heartbeat shows it alive since.
                if node.down and now - info.heartbeat_age_ms / 1000 > node.down_at:
                    node.down = False
                new.append(node)
            self._retired += [x for x in self._nodes
                              if not any(x is y for y in new)]
            self._nodes = new
            self._ttl = (reply.ttl_ms or 6000) / 1000
            self._read_at = now

    def _refresh(self) -> None:
        """Reads the table again when it is older than its TTL (or a node
        failed): one calling thread does, the others go on with the table
        they have. It asks the live nodes in turn; when none answers, the
        client keeps its table and asks again after the TTL."""
        with self._lock:
            now = time.monotonic()
            due = (self._fleet and not self._refreshing and not self._closed
                   and (self._read_at is None or now - self._read_at >= self._ttl))
            if not due:
                return
            self._refreshing = True
            live = [x for x in self._nodes if not x.down and not x.draining]
        read = False
        try:
            for node in live:
                try:
                    node.connect()
                except (_nng.NngError, ValueError, OSError):
                    continue
                reply = self._ask_nodes(node)
                if reply is not None:
                    self._install(reply)
                    read = True
                    break
        finally:
            with self._lock:
                if not read:
                    self._read_at = time.monotonic()
                self._refreshing = False

    def _mark_down(self, node: _Node) -> None:
        """node failed: skipped until a reading of the table shows a
        heartbeat since; the table is read again at the next call."""
        with self._lock:
            node.down = True
            node.down_at = time.monotonic()
            self._read_at = None

    def _dispatch(self, call: Call[Any]) -> None:
        """Routes call (a fleet's) to its next node and sends it there;
        when it could not be sent, on to the next node where it may go
        (see _again). Sets the call's status when it ends here."""
        plan = call._plan
        assert plan is not None
        while True:
            self._refresh()
            with self._lock:
                i, self._rr, refused = _fleet.route(
                    self._nodes, plan.method, plan.path, plan.named, self._rr,
                    plan.tried)
                node = self._nodes[i] if i is not None else None
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
                self._mark_down(node)
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
                    self._mark_down(node)
            if not self._again(call):
                call._final = True
                return

    def _again(self, call: Call[Any]) -> bool:
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

    @staticmethod
    def _decoder(method: str, reply_type: Optional[type]) -> Callable[[bytes], Any]:
        if reply_type is bytes:
            return bytes
        cls: Optional[Type[Message]] = (reply_type if reply_type is not None
                                        else reply_class(method))
        if cls is None:
            raise ValueError(
                "tk: %s is not in gen/python; pass reply_type (a message "
                "class, or bytes for the payload undecoded)" % method)
        decode: Callable[[bytes], Any] = cls.FromString
        return decode

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

    @staticmethod
    def _decode_reply(data: bytes, call_id: int,
                      decode: Callable[[bytes], R]) -> Tuple[Status, Optional[R]]:
        """(status, reply or None) of a tk.v1.Reply frame."""
        try:
            env = rpc_pb2.Reply.FromString(data)
        except DecodeError:
            return Status.local(Code.INTERNAL, "the reply (%d bytes) is not "
                                "a tk.v1.Reply" % len(data)), None
        if env.call_id not in (call_id, 0):
            return Status.local(Code.INTERNAL, "the reply is for call %d, "
                                "not %d" % (env.call_id, call_id)), None
        if not env.HasField("status"):
            return Status.local(Code.INTERNAL, "the reply carries no status"), None
        status = Status.from_proto(env.status)
        if not status.ok:
            return status, None
        try:
            return status, decode(env.payload)
        except DecodeError:
            return Status.local(Code.INTERNAL, "the reply payload does not "
                                "decode as the method's reply"), None
