# SPDX-License-Identifier: MIT
"""A tkd the client calls, on a REQ socket of its own (_Node): the one tkd
of a client without a fleet, or a node of a fleet's table, dialed on first
use and again when its connection dropped; and how long a node gets to
connect and to answer. Uses tk._nng for the socket and tk._fleet for what
the client dials (refusal, node_name); it never sends a call (tk._inflight
does) and never reads the table (tk._nodetable does).
"""

from __future__ import annotations

import threading
from typing import Optional, Tuple

from tk import _fleet, _nng

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
