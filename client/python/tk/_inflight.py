# SPDX-License-Identifier: MIT
"""A call in flight (Call, which tk and tk.client export): sent as a
tk.v1.Request on its node's socket, its reply collected and decoded
(tk._messages), and the wait for it: past the deadline, the questions to
tkd about where the call stands (tk.v1.Control/CallState, asked through
the client on the call's own connection), in a fleet the Ping of its node
(NODE_PROBE_MS, tk._nodesock's); and tk.v1.Control/Cancel for it. It
decides no route and reads no table: a call of a fleet is routed, and a
READ whose node failed sent on, by tk._nodetable.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Callable, Generic, Optional, Tuple, TypeVar, Union

from tk import _nng, _nodetable, catalog
from tk._messages import decode_reply
from tk._nodesock import NODE_PING_TIMEOUT, NODE_PROBE_MS, _Node
from tk.status import CancelOutcome, Cause, Code, Status, TkError, _enum_or_int
from tk.v1 import control_pb2, rpc_pb2

if TYPE_CHECKING:
    from tk.client import Client

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

# CallStateReply.State, by number (tk.v1's generated enum values).
_QUEUED, _RUNNING, _ANSWERED, _NOT_FOUND = 1, 2, 3, 4

R = TypeVar("R")


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
                 plan: Optional[_nodetable._Plan] = None) -> None:
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
        self._finish(*decode_reply(data or b"", self.call_id, self._decode))

    def _settle(self) -> bool:
        """Under self._lock, once the receive has ended: collects the
        outcome and, in a fleet, sends the call on to the next node where
        it may go; True when the outcome is final."""
        self._collect()
        if self._final:
            return True
        node = self._node
        if self._node_failed and node is not None:
            _nodetable.mark_down(self._client, node)
        if not _nodetable.again(self._client, self):
            self._final = True
            return True
        _nodetable.dispatch(self._client, self)
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
