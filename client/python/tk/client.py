"""tk.Client: calls to tkd over one NNG REQ socket, at most once each.

Mirrors libtkclient (client/lib/client.c): call ids unique per connection,
the deadline sent in the envelope (timeout_ms), NNG's REQ resend disabled,
a client that, when no reply has come 250 ms past the deadline, asks tkd
where the call stands (tk.v1.Control/CallState) and waits on while tkd says
it is queued or running, so that tkd's own structured answer reaches the
caller however late a loaded machine makes it; a lost connection reported
as UNAVAILABLE ("whether it ran is unknown"), and cancellation as
tk.v1.Control/Cancel sent on the same socket, from any thread.
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import threading
import time
import weakref
from typing import (Any, Callable, Generic, Optional, Tuple, Type, TypeVar,
                    Union, overload)

from google.protobuf import descriptor_pool, message_factory, symbol_database
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError, Message

from tk import _nng, catalog
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
    if get is not None:  # protobuf >= 4.22
        return get(desc)
    return symbol_database.Default().GetSymbol(full_name)


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
    """

    def __init__(self, client: Client, call_id: int, method: str,
                 decode: Callable[[bytes], R], ask: bool = True) -> None:
        self.call_id = call_id
        self.method = method
        self._client = client
        self._decode = decode
        self._done = threading.Event()
        self._lock = threading.Lock()  # collecting the outcome
        self._channel: Optional[_nng.Channel] = None
        self._sent = False
        self._status: Optional[Status] = None
        self._reply: Optional[R] = None
        # Asking about a late reply (under _ask_lock).
        self._ask = ask
        self._ask_lock = threading.Lock()
        self._next_ask = math.inf
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

    def _send(self, sock: _nng.Socket, envelope: bytes, timeout_ms: int) -> None:
        wait_ms = MAX_WAIT_MS if timeout_ms == 0 else timeout_ms + GRACE_MS
        t0 = time.monotonic()
        try:
            self._channel = _nng.Channel(sock, self._done.set)
        except _nng.NngError as e:
            self._finish(self._client._failure(e.errno))
            return
        # A send waits for a connection; bound it by the same deadline.
        rv = self._channel.send(envelope, wait_ms)
        if rv != 0:
            self._finish(Status.local(
                Code.UNAVAILABLE,
                "could not send to tkd at %s: %s (the call was not sent)"
                % (self._client.address, _nng.strerror(rv))))
            return
        self._sent = True
        # The first question at the deadline plus the grace; however long
        # tkd says the call runs, MAX_WAIT_MS more at most. With the
        # method's default deadline, known only to tkd, nothing is asked.
        self._next_ask = t0 + wait_ms / 1000
        self._last = (self._next_ask if timeout_ms == 0 or not self._ask
                      else self._next_ask + MAX_WAIT_MS / 1000)
        if self._write:  # at least the write's own timeout, and its stop
            own = t0 + (self._ceiling_ms + WRITE_STOP_MS) / 1000
            if timeout_ms == 0:
                self._next_ask = max(self._next_ask, own)
            self._last = max(self._last, own)
        self._channel.start_recv()

    def _finish(self, status: Status, reply: Optional[R] = None) -> None:
        self._status, self._reply = status, reply
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
                self._finish(self._client._failure(rv))
            return
        self._finish(*self._client._decode_reply(data or b"", self.call_id,
                                                 self._decode))

    def _wait(self, timeout: Optional[float]) -> bool:
        """Waits for the end of the call, asking tkd when it is time; False
        when timeout (seconds) passed first."""
        end = math.inf if timeout is None else time.monotonic() + timeout
        while not self._done.is_set():
            with self._ask_lock:
                at = self._next_ask
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
                if not self._done.is_set() and now >= self._next_ask:
                    self._ask_once()
        return True

    def _ask_once(self) -> None:
        # Under _ask_lock, at the time of the next question: asks it, and
        # either sets the time of the one after or gives up.
        why = None
        if not self._ask or time.monotonic() >= self._last:
            why = ("no reply from tkd at %s within the deadline and %d ms of "
                   "grace: the server did not answer" % (self._client.address,
                                                        GRACE_MS))
        else:
            state = self._client._call_state(self.call_id)
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
                % (self.call_id, self._client.address))
        self._gave_up = Status.local(
            code, text + ("" if code in (Code.UNAVAILABLE, Code.UNKNOWN)
                          else " (a WRITE may still complete there)"),
            Cause.DEADLINE if code == Code.DEADLINE_EXCEEDED else Cause.NONE)
        self._next_ask = math.inf
        if self._channel is not None:
            self._channel.stop_recv()

    def _verdict(self, state: Optional[int]) -> Union[None, str, Tuple[Code, str]]:
        """None to wait on after tkd's answer state (None: no answer, -2: the
        method is unknown to tkd), else why the client stops waiting."""
        addr = self._client.address
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
        """Whether the call has ended (result() would not wait)."""
        return self._done.is_set()

    def status(self, timeout: Optional[float] = None) -> Status:
        """Waits for the end of the call and returns its status, OK or not
        (partial, write_completed, elapsed_us of a successful call).
        Raises TimeoutError when timeout (seconds) passes first; the call
        goes on."""
        if not self._wait(timeout):
            raise TimeoutError("%s (call %d) still running" % (self.method, self.call_id))
        with self._lock:
            self._collect()
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
        and returns tkd's outcome: CANCELLED (the call ends CANCELLED, cause
        CALLER), WRITE_CONTINUES (a started WRITE runs to completion),
        ALREADY_DONE, NOT_FOUND; NOT_SENT when the call was never sent.
        Raises TkError when the Cancel itself fails."""
        if not self._sent:
            return CancelOutcome.NOT_SENT
        reply = self._client.control.cancel(call_id=self.call_id,
                                            timeout=CANCEL_TIMEOUT)
        return _enum_or_int(CancelOutcome, reply.outcome)

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

    Every method of proto/ is a typed method on an attribute per service,
    generated from the service descriptors (gen/python/tk/*/*_tk.py):
    client.control.ping(data=b"x"), client.control.start_ping(...) -> Call.
    call()/start() call any method by name. Use it as a context manager,
    or close() it.
    """

    def __init__(self, addr: Optional[str] = None, *,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None) -> None:
        self.address = addr if addr is not None else default_address()
        self._lock = threading.Lock()
        self._closed = False
        env = os.environ.get
        tls = _nng.TlsFiles(tls_ca or env("TK_TLS_CA"),
                            tls_cert or env("TK_TLS_CERT"),
                            tls_key or env("TK_TLS_KEY"), tls_server_name)
        try:
            self._sock = _nng.open_req(self.address, tls)
        except ValueError as e:
            raise ValueError("tk: %s" % e) from None
        except OSError as e:  # a TLS file that cannot be read
            raise ValueError("tk: %s" % e) from None
        except _nng.NngError as e:
            if e.errno in (_nng.EADDRINVAL, _nng.ENOTSUP):
                raise ValueError("tk: %s is not an address NNG knows: %s"
                                 % (self.address, e)) from None
            hint = ""
            if e.errno in (_nng.ECONNREFUSED, _nng.ENOENT):
                hint = " (is tkd running there?)"
            elif self.address.startswith("tls+"):
                hint = (" (the TLS handshake failed: tkd refuses a client "
                        "without a certificate its CA signed, and this client "
                        "refuses a tkd whose certificate tls_ca did not sign "
                        "or that does not name the host)")
            raise TkError(Status.local(Code.UNAVAILABLE, str(e) + hint)) from None
        # Ids need only be unique per connection; a random start keeps the
        # ids of different clients apart in tkd's log.
        seed = int.from_bytes(os.urandom(8), "little")
        self._ids = itertools.count((seed >> 16) | 1)
        self._init_services(self)
        _open_clients.add(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection; calls still in flight end CANCELLED
        (cause CALLER, "the client was closed"). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _nng.close(self._sock)
        _open_clients.discard(self)

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: Type[M]) -> M: ...

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: Type[bytes]) -> bytes: ...

    @overload
    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = ..., reply_type: None = ...) -> Message: ...

    def call(self, method: str, request: Union[Message, bytes], *,
             timeout: Optional[float] = None,
             reply_type: Optional[type] = None) -> object:
        """Calls method ("tk.v1.Control/Ping") with request and waits for
        the reply, which it returns; raises TkError for any other end.

        request is a message, or bytes sent as the payload as they are.
        timeout (seconds) is the deadline sent to tkd; None means the
        method's default. reply_type is the class to decode the reply as
        (default: from the service descriptors), or bytes for the payload
        undecoded; a method gen/python does not know needs one.
        """
        return self.start(method, request, timeout=timeout,
                          reply_type=reply_type).result()

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ..., reply_type: Type[M]) -> Call[M]: ...

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ...,
              reply_type: Type[bytes]) -> Call[bytes]: ...

    @overload
    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = ...,
              reply_type: None = ...) -> Call[Message]: ...

    def start(self, method: str, request: Union[Message, bytes], *,
              timeout: Optional[float] = None,
              reply_type: Optional[type] = None) -> Call[Any]:
        """As call(), without waiting for the reply: sends the request and
        returns its Call (result(), status(), cancel())."""
        return self._start(method, request, timeout, reply_type, True)

    def _call_state(self, call_id: int) -> Optional[int]:
        """Where call_id stands at tkd (CallStateReply.State), asked on this
        socket and so on the call's connection: None when tkd did not
        answer, -2 when it does not know the method."""
        req = control_pb2.CallStateRequest(call_id=call_id)
        call = self._start("tk.v1.Control/CallState", req, ASK_TIMEOUT,
                           control_pb2.CallStateReply, False)
        st = call.status()
        if st.code == Code.UNIMPLEMENTED:
            return -2
        if not st.ok or call._reply is None:
            return None
        return int(call._reply.state)

    def _start(self, method: str, request: Union[Message, bytes],
               timeout: Optional[float], reply_type: Optional[type],
               ask: bool) -> Call[Any]:
        timeout_ms = _timeout_ms(timeout)
        decode = self._decoder(method, reply_type)
        payload = request if isinstance(request, bytes) else request.SerializeToString()
        with self._lock:
            if self._closed:
                raise ValueError("tk: the client is closed")
            call_id = next(self._ids) & 0xFFFFFFFFFFFFFFFF
        envelope = rpc_pb2.Request(call_id=call_id, method=method,
                                   timeout_ms=timeout_ms, payload=payload)
        call: Call[Any] = Call(self, call_id, method, decode, ask)
        call._send(self._sock, envelope.SerializeToString(), timeout_ms)
        return call

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
        return cls.FromString

    def _failure(self, errno: int) -> Status:
        """The status of a call that got no reply (NNG error errno)."""
        with self._lock:
            closed = self._closed
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
                % self.address)
        return Status.local(Code.UNAVAILABLE, "receiving from %s: %s"
                            % (self.address, _nng.strerror(errno)))

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
