# SPDX-License-Identifier: MIT
"""A bare NNG REP socket through the Python client's libnng (ctypes): a
server that is not tkd, for the Python client's tests (test_client.py,
test_fleet_routing.py). lib is that libnng with the prototypes the tests
call."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_uint32, c_void_p

from tk import _nng


class Pipe(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


lib = _nng._lib
for _name, _res, _args in (
        ("nng_rep0_open", c_int, [POINTER(_nng.Socket)]),
        ("nng_listen", c_int, [_nng.Socket, c_char_p, c_void_p, c_int]),
        ("nng_recvmsg", c_int, [_nng.Socket, POINTER(c_void_p), c_int]),
        ("nng_sendmsg", c_int, [_nng.Socket, c_void_p, c_int]),
        ("nng_msg_get_pipe", Pipe, [c_void_p]),
        ("nng_pipe_close", c_int, [Pipe])):
    getattr(lib, _name).restype = _res
    getattr(lib, _name).argtypes = _args


def rep_socket(url: str, recv_timeout_ms: int) -> _nng.Socket:
    """A bare REP socket listening on url: a server that is not tkd."""
    sock = _nng.Socket()
    assert lib.nng_rep0_open(byref(sock)) == 0
    assert lib.nng_socket_set_ms(sock, b"recv-timeout", recv_timeout_ms) == 0
    assert lib.nng_listen(sock, url.encode(), None, 0) == 0
    return sock
