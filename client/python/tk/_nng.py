# SPDX-License-Identifier: MIT
"""A ctypes binding to the few calls of the system NNG (libnng.so.1, Debian's
libnng1 1.5.2) that a REQ client needs. Internal to the client (tk.client
and its parts).

nng_socket and nng_ctx are structs of one uint32 passed by value, so they
are ctypes Structures (libffi passes them as the C ABI does), never bare
integers. Every pointer result is declared c_void_p: ctypes' default int
would cut 64-bit pointers. CDLL releases the GIL during each call, so a
thread blocked in NNG never blocks the others.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_size_t, c_uint32
from ctypes import c_void_p
from typing import Callable, Dict, List, Optional, Tuple

# nng.h's error numbers that the client tells apart.
ETIMEDOUT = 5
ECANCELED = 20
ECONNREFUSED = 6
ECLOSED = 7
ENOTSUP = 9
ENOENT = 12
EADDRINVAL = 15
ECONNRESET = 19
ECONNSHUT = 31

DURATION_INFINITE = -1
OPT_REQ_RESENDTIME = b"req:resend-time"
OPT_TLS_CONFIG = b"tls-config"
TLS_MODE_CLIENT = 0


class Socket(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


class Ctx(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


class Dialer(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


# void (*)(void *): an aio's completion callback.
AIO_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p)
# void (*)(nng_pipe, nng_pipe_ev, void *): a pipe event's callback. nng_pipe
# is a struct of one uint32, which the C ABIs pass as the integer itself.
PIPE_CALLBACK = ctypes.CFUNCTYPE(None, c_uint32, c_int, c_void_p)
PIPE_EV_ADD_PRE = 0
PIPE_EV_REM_POST = 2


# Where Homebrew puts libnng.dylib (arm64, then Intel Macs): ctypes'
# search on macOS does not look there.
_BREW_LIBS = ("/opt/homebrew/lib/libnng.dylib", "/usr/local/lib/libnng.dylib")


def _load() -> ctypes.CDLL:
    """libnng: TK_LIBNNG if set, else Debian's libnng.so.1, else what
    ctypes finds, else Homebrew's."""
    named = os.environ.get("TK_LIBNNG")
    if named:
        return ctypes.CDLL(named)
    try:
        return ctypes.CDLL("libnng.so.1")
    except OSError:
        pass
    found = ctypes.util.find_library("nng")
    if found is not None:
        return ctypes.CDLL(found)
    for path in _BREW_LIBS:
        if os.path.exists(path):
            return ctypes.CDLL(path)
    raise ImportError("tk: libnng not found; apt-get install libnng1 "
                      "(Debian), brew install nng (macOS), or set TK_LIBNNG "
                      "to its path") from None


_lib = _load()

_SIGNATURES = {
    "nng_req0_open": (c_int, [POINTER(Socket)]),
    "nng_socket_set_ms": (c_int, [Socket, c_char_p, c_int32]),
    "nng_dial": (c_int, [Socket, c_char_p, c_void_p, c_int]),
    "nng_dialer_create": (c_int, [POINTER(Dialer), Socket, c_char_p]),
    "nng_dialer_set_ptr": (c_int, [Dialer, c_char_p, c_void_p]),
    "nng_dialer_start": (c_int, [Dialer, c_int]),
    "nng_dialer_close": (c_int, [Dialer]),
    "nng_pipe_notify": (c_int, [Socket, c_int, PIPE_CALLBACK, c_void_p]),
    "nng_tls_config_alloc": (c_int, [POINTER(c_void_p), c_int]),
    "nng_tls_config_free": (None, [c_void_p]),
    "nng_tls_config_ca_file": (c_int, [c_void_p, c_char_p]),
    "nng_tls_config_own_cert": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p]),
    "nng_tls_config_server_name": (c_int, [c_void_p, c_char_p]),
    "nng_close": (c_int, [Socket]),
    "nng_ctx_open": (c_int, [POINTER(Ctx), Socket]),
    "nng_ctx_close": (c_int, [Ctx]),
    "nng_ctx_send": (None, [Ctx, c_void_p]),
    "nng_ctx_recv": (None, [Ctx, c_void_p]),
    "nng_aio_alloc": (c_int, [POINTER(c_void_p), AIO_CALLBACK, c_void_p]),
    "nng_aio_free": (None, [c_void_p]),
    "nng_aio_wait": (None, [c_void_p]),
    "nng_aio_cancel": (None, [c_void_p]),
    "nng_aio_result": (c_int, [c_void_p]),
    "nng_aio_set_timeout": (None, [c_void_p, c_int32]),
    "nng_aio_set_msg": (None, [c_void_p, c_void_p]),
    "nng_aio_get_msg": (c_void_p, [c_void_p]),
    "nng_msg_alloc": (c_int, [POINTER(c_void_p), c_size_t]),
    "nng_msg_free": (None, [c_void_p]),
    "nng_msg_body": (c_void_p, [c_void_p]),
    "nng_msg_len": (c_size_t, [c_void_p]),
    "nng_strerror": (c_char_p, [c_int]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(_lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


class NngError(Exception):
    """An NNG call failed; errno is NNG's error number."""

    def __init__(self, errno: int, what: str) -> None:
        super().__init__("%s: %s" % (what, strerror(errno)))
        self.errno = errno


def strerror(errno: int) -> str:
    text: bytes = _lib.nng_strerror(errno)
    return text.decode("utf-8", "replace")


def _check(rv: int, what: str) -> None:
    if rv != 0:
        raise NngError(rv, what)


class TlsFiles:
    """The client side of mutual TLS: the CA that signed tkd's certificate,
    this client's certificate and key (PEM files), and the name tkd's
    certificate must carry (None: the URL's host)."""

    def __init__(self, ca: Optional[str], cert: Optional[str],
                 key: Optional[str], server_name: Optional[str]) -> None:
        self.ca, self.cert, self.key = ca, cert, key
        self.server_name = server_name


def _url_host(url: str) -> str:
    host = url.split("://", 1)[-1].rsplit(":", 1)[0]
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _tls_config(url: str, tls: TlsFiles) -> c_void_p:
    """An nng_tls_config for dialing url; ValueError for files that cannot
    be used (the message names them)."""
    if not tls.ca:
        raise ValueError("%s needs the CA that signed tkd's certificate "
                         "(tls_ca, or TK_TLS_CA)" % url)
    if bool(tls.cert) != bool(tls.key):
        raise ValueError("a client certificate needs its key, and a key its "
                         "certificate (tls_cert and tls_key)")
    cfg = c_void_p()
    _check(_lib.nng_tls_config_alloc(byref(cfg), TLS_MODE_CLIENT), "TLS")
    try:
        rv = _lib.nng_tls_config_ca_file(cfg, tls.ca.encode())
        if rv != 0:
            raise ValueError("the CA %s: %s" % (tls.ca, strerror(rv)))
        if tls.cert and tls.key:
            with open(tls.cert, "rb") as f:
                cert = f.read()
            with open(tls.key, "rb") as f:
                key = f.read()
            rv = _lib.nng_tls_config_own_cert(cfg, cert, key, None)
            if rv != 0:
                raise ValueError("the certificate %s and key %s: %s"
                                 % (tls.cert, tls.key, strerror(rv)))
        name = tls.server_name or _url_host(url)
        _check(_lib.nng_tls_config_server_name(cfg, name.encode()), "TLS")
    except BaseException:
        _lib.nng_tls_config_free(cfg)
        raise
    return cfg


def open_socket() -> Socket:
    """A REQ socket with resend disabled (at most once), not dialed."""
    sock = Socket()
    _check(_lib.nng_req0_open(byref(sock)), "nng_req0_open")
    try:
        # REQ would resend an unanswered request (every 60 s, and at once
        # on a new pipe): a WRITE would run twice.
        _check(
            _lib.nng_socket_set_ms(sock, OPT_REQ_RESENDTIME, DURATION_INFINITE),
            "setting " + OPT_REQ_RESENDTIME.decode(),
        )
    except BaseException:
        _lib.nng_close(sock)
        raise
    return sock


def _start_within(dialer: Dialer, bound_ms: int) -> int:
    """nng_dialer_start(dialer, 0), given bound_ms at most: NNG's dial has
    no bound of its own, and a host that is down, or a tkd that is stopped
    (its TLS handshake unanswered), would hold it for as long as TCP tries,
    or for ever. Past the bound the dialer is closed, which ends the dial,
    and the answer is ETIMEDOUT. The dial waits on a thread of its own
    (ctypes lets go of the GIL while it does)."""
    result: List[int] = []
    t = threading.Thread(
        target=lambda: result.append(_lib.nng_dialer_start(dialer, 0)),
        name="tk-dial", daemon=True)
    t.start()
    t.join(bound_ms / 1000)
    if not t.is_alive():
        return result[0]
    _lib.nng_dialer_close(dialer)  # ends the dial: ECLOSED
    t.join()
    return ETIMEDOUT


def dial(sock: Socket, url: str, tls: Optional[TlsFiles] = None,
         bound_ms: int = 0) -> Dialer:
    """Dials url from sock and waits for the connection (NNG redials it
    after a drop), bound_ms at most when not 0 (ETIMEDOUT past it);
    tls+tcp:// with tls's files. NngError when it does not connect,
    ValueError for TLS files that cannot be used."""
    dialer = Dialer()
    _check(_lib.nng_dialer_create(byref(dialer), sock, url.encode()),
           "cannot connect to " + url)
    try:
        if url.startswith("tls+"):
            cfg = _tls_config(url, tls or TlsFiles(None, None, None, None))
            try:
                _check(_lib.nng_dialer_set_ptr(dialer, OPT_TLS_CONFIG, cfg), "TLS")
            finally:
                _lib.nng_tls_config_free(cfg)  # the dialer holds a reference
        rv = (_start_within(dialer, bound_ms) if bound_ms > 0
              else _lib.nng_dialer_start(dialer, 0))
        _check(rv, "cannot connect to " + url)
    except BaseException:
        _lib.nng_dialer_close(dialer)
        raise
    return dialer


def close_dialer(dialer: Dialer) -> None:
    _lib.nng_dialer_close(dialer)


def open_req(url: str, tls: Optional[TlsFiles] = None,
             bound_ms: int = 0) -> Socket:
    """A REQ socket dialed to url (see dial), with resend disabled (at
    most once); tls+tcp:// with tls's files."""
    sock = open_socket()
    try:
        dial(sock, url, tls, bound_ms)
    except BaseException:
        _lib.nng_close(sock)
        raise
    return sock


# The connections up of each socket that count them (count_pipes), by a key
# of their own: the callback is the module's, so NNG never calls a function
# that was freed, whatever becomes of the objects that asked.
_pipes: Dict[int, int] = {}
_pipes_lock = threading.Lock()
_pipe_keys = itertools.count(1)


def _on_pipe(_pipe: int, event: int, arg: Optional[int]) -> None:
    with _pipes_lock:
        if arg in _pipes:
            _pipes[arg] += 1 if event == PIPE_EV_ADD_PRE else -1


_PIPE_CB = PIPE_CALLBACK(_on_pipe)


def count_pipes(sock: Socket) -> int:
    """Counts sock's connections from now on (before it dials); the key
    for pipes() and uncount_pipes()."""
    key = next(_pipe_keys)
    with _pipes_lock:
        _pipes[key] = 0
    for ev in (PIPE_EV_ADD_PRE, PIPE_EV_REM_POST):
        rv = _lib.nng_pipe_notify(sock, ev, _PIPE_CB, c_void_p(key))
        if rv != 0:
            uncount_pipes(key)
            raise NngError(rv, "nng_pipe_notify")
    return key


def pipes(key: int) -> int:
    """How many connections the socket of key has."""
    with _pipes_lock:
        return _pipes.get(key, 0)


def uncount_pipes(key: int) -> None:
    """Forgets key (after its socket is closed)."""
    with _pipes_lock:
        _pipes.pop(key, None)


def close(sock: Socket) -> None:
    _lib.nng_close(sock)


class Channel:
    """One REQ context with a send aio (waited on in place) and a receive
    aio whose completion calls on_done from an NNG thread. For one call."""

    def __init__(self, sock: Socket, on_done: Callable[[], None]) -> None:
        self._ctx = Ctx()
        self._send_aio = c_void_p()
        self._recv_aio = c_void_p()
        # Kept here: the C side holds only a pointer to it.
        self._callback = AIO_CALLBACK(lambda _arg: on_done())
        self._open = False
        _check(_lib.nng_ctx_open(byref(self._ctx), sock), "nng_ctx_open")
        self._open = True
        try:
            _check(
                _lib.nng_aio_alloc(byref(self._send_aio),
                                   AIO_CALLBACK(0), None),  # no callback
                "nng_aio_alloc",
            )
            _check(
                _lib.nng_aio_alloc(byref(self._recv_aio), self._callback, None),
                "nng_aio_alloc",
            )
        except NngError:
            self.close()
            raise

    def send(self, data: bytes, timeout_ms: int) -> int:
        """Queues data for sending; returns 0 or NNG's error number."""
        msg = c_void_p()
        rv: int = _lib.nng_msg_alloc(byref(msg), len(data))
        if rv != 0:
            return rv
        ctypes.memmove(_lib.nng_msg_body(msg), data, len(data))
        _lib.nng_aio_set_msg(self._send_aio, msg)
        _lib.nng_aio_set_timeout(self._send_aio, timeout_ms)
        _lib.nng_ctx_send(self._ctx, self._send_aio)
        _lib.nng_aio_wait(self._send_aio)
        rv = _lib.nng_aio_result(self._send_aio)
        if rv != 0:  # the message is still ours
            _lib.nng_msg_free(_lib.nng_aio_get_msg(self._send_aio))
        return rv

    def start_recv(self) -> None:
        """Starts receiving the reply, with no timeout: NNG's req0 abandons
        a request whose receive times out, and with it a reply still on its
        way. on_done is called when the receive ends; stop_recv ends it."""
        _lib.nng_aio_set_timeout(self._recv_aio, DURATION_INFINITE)
        _lib.nng_ctx_recv(self._ctx, self._recv_aio)

    def stop_recv(self) -> None:
        """Gives up the receive (recv_result then says ECANCELED, unless the
        reply came first); on_done is called."""
        _lib.nng_aio_cancel(self._recv_aio)

    def recv_result(self) -> Tuple[int, Optional[bytes]]:
        """After on_done: (0, the reply) or (NNG's error number, None)."""
        _lib.nng_aio_wait(self._recv_aio)
        rv = _lib.nng_aio_result(self._recv_aio)
        if rv != 0:
            return rv, None
        msg = _lib.nng_aio_get_msg(self._recv_aio)
        try:
            return 0, ctypes.string_at(_lib.nng_msg_body(msg), _lib.nng_msg_len(msg))
        finally:
            _lib.nng_msg_free(msg)

    def close(self) -> None:
        """Stops what is in flight (waiting for its callback) and frees all.
        Never from on_done itself. Idempotent."""
        for aio in (self._send_aio, self._recv_aio):
            if aio.value is not None:
                _lib.nng_aio_free(aio)
                aio.value = None
        if self._open:
            _lib.nng_ctx_close(self._ctx)
            self._open = False
