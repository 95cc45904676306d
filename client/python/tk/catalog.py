# SPDX-License-Identifier: MIT
"""What the client knows of each method of proto/ without asking tkd: its
request and reply types, its kind, its timeouts and the ceiling of its
reply's list, as the method's option (tk.v1.method) declares them
(tools/regen generates the table into client/python/tk/_catalog.py). The C
client's twin is tk_catalog_find_method.

    m = tk.catalog.find_method("tk.v1.Git/Status")
    m.kind is tk.catalog.Kind.READ, m.default_timeout_ms, m.ceiling_ms
    tk.catalog.find_method("tk.v1.Git/Log").list.max_items

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


class ListBound(NamedTuple):
    """What bounds a reply's list (tk.v1.ListSpec, options.proto): no reply
    holds more than max_items (a larger limit is served as max_items) nor,
    when it is not 0, more than max_bytes of the items' paths and text; a
    reply cut there is partial."""

    field: str  # the reply's repeated field: "commits"
    limit_field: str  # the request's limit: "max_count"; "" when none
    default_items: int  # for a limit of 0 (0 without limit_field)
    max_items: int
    max_bytes: int


class Method(NamedTuple):
    name: str  # "tk.v1.Control/Ping"
    request_type: str  # "tk.v1.PingRequest"
    reply_type: str
    kind: Kind
    default_timeout_ms: int  # what a call with no timeout gets
    ceiling_ms: int  # READ: no call runs longer; WRITE: its own timeout
    list: Optional[ListBound]  # None: the reply has no such list


#: Every method, in the order of proto/ (files by name, then as declared).
METHODS: Tuple[Method, ...] = tuple(
    Method(name, req, rep, Kind[kind], default, ceiling,
           ListBound(*lst) if lst is not None else None)
    for name, req, rep, kind, default, ceiling, lst in _catalog.METHODS)

_BY_NAME: Dict[str, Method] = {m.name: m for m in METHODS}


def find_method(name: str) -> Optional[Method]:
    """The method named "tk.v1.Git/Status", or None."""
    return _BY_NAME.get(name)
