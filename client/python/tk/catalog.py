"""What the client knows of each method of proto/ without asking tkd: its
request and reply types, its kind and its timeouts, as the method's option
(tk.v1.method) declares them (tools/regen generates the table into
gen/python/tk/_catalog.py). The C client's twin is tk_catalog_find_method.

    m = tk.catalog.find_method("tk.v1.Git/Status")
    m.kind is tk.catalog.Kind.READ, m.default_timeout_ms, m.ceiling_ms

tkd's own word is tk.v1.Control/ListMethods: a tkd serves the declared
timeouts unless its configuration changes them, and a newer tkd may serve
methods this client does not know.
"""

from __future__ import annotations

import enum
from typing import Dict, NamedTuple, Optional, Tuple

from tk import _catalog


class Kind(enum.IntEnum):
    """tk.v1.MethodInfo.Kind, same numbers."""

    READ = 1  # follows its caller: cancel and deadline end it
    WRITE = 2  # once started, runs to completion under its own timeout


class Method(NamedTuple):
    name: str  # "tk.v1.Control/Ping"
    request_type: str  # "tk.v1.PingRequest"
    reply_type: str
    kind: Kind
    default_timeout_ms: int  # what a call with no timeout gets
    ceiling_ms: int  # READ: no call runs longer; WRITE: its own timeout


#: Every method, in the order of proto/ (files by name, then as declared).
METHODS: Tuple[Method, ...] = tuple(
    Method(name, req, rep, Kind[kind], default, ceiling)
    for name, req, rep, kind, default, ceiling in _catalog.METHODS)

_BY_NAME: Dict[str, Method] = {m.name: m for m in METHODS}


def find_method(name: str) -> Optional[Method]:
    """The method named "tk.v1.Git/Status", or None."""
    return _BY_NAME.get(name)
