# SPDX-License-Identifier: MIT
"""Routing a call in a fleet (DESIGN.md "Scaling out"): which node of the
table a call goes to, decided on the table alone, no sockets. Internal to
the client (tk.client and its parts); libtkclient's twin is tk__route() in
client/lib/route.c, and the two decide alike.

    Git, Search        the node whose root is the longest prefix, by whole
                       path components, of the request's first non-empty
                       field marked (tk.v1.path) = PATH_IN_ROOTS; none:
                       NOT_FOUND NO_NODE_FOR_PATH. A request without such
                       a path goes to any node, whose tkd refuses it.
    Services           the node named; with one node, that one; several
                       and none named: INVALID_ARGUMENT NODE_REQUIRED
    the rest           any node not down nor draining, round robin
                       (Orders, Control, and services this client does
                       not know)
    node= (any call)   that node; one not in the table: NOT_FOUND
                       UNKNOWN_NODE

A node that failed (did not connect, lost its connection, stopped
answering) is down until a reading of the table shows a heartbeat since;
a draining node takes no new calls. When every node that could take the
call is down, draining or tried already: UNAVAILABLE NO_LIVE_NODE.

A row of the table is anyone's who can write the fleet's database, so it
is trusted no more than the link it came by (refusal): a node is dialed
only over the transport the client came in on (tls+tcp:// after tls+,
tcp:// after tcp://), and over TLS its certificate must name its id
(node_name), whatever its address; a node refused is UNAVAILABLE
NODE_REFUSED, the call not sent.
"""

from __future__ import annotations

import enum
import re
from typing import List, Optional, Protocol, Sequence, Tuple, Union

from google.protobuf import descriptor_pool
from google.protobuf.message import DecodeError, Message

from tk import catalog
from tk._messages import request_class
from tk.status import Code, Status

NO_NODE_FOR_PATH = "NO_NODE_FOR_PATH"
NODE_REQUIRED = "NODE_REQUIRED"
UNKNOWN_NODE = "UNKNOWN_NODE"
NO_LIVE_NODE = "NO_LIVE_NODE"
NODE_REFUSED = "NODE_REFUSED"

#: The DNS name a node's certificate carries for its id: "a" is
#: "a.tk-node.invalid" (libtkclient's NODE_NAME_SUFFIX). A certificate the
#: fleet's CA signed proves a host name, not which node a tkd is; the id as
#: a name of its own says that, and under .invalid (RFC 6761: never a host)
#: it is no host's.
NODE_NAME_SUFFIX = ".tk-node.invalid"

_NODE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")


def node_name(node_id: str) -> str:
    """The name the certificate of node node_id must carry."""
    return node_id + NODE_NAME_SUFFIX


def link_of(address: str) -> Optional[str]:
    """The scheme a fleet's nodes are dialed over, by the address the
    client came in on: "tls+tcp://" after any tls+, "tcp://" after tcp;
    None after anything else (every node is then refused)."""
    if address.startswith("tls+"):
        return "tls+tcp://"
    if address.startswith("tcp"):
        return "tcp://"
    return None


def refusal(link: Optional[str], node_id: str, address: str) -> Optional[str]:
    """Why a node of the table is not dialed, or None: an id no tkd has, or
    an address not over the link the client came in on (a client that
    came in over tls+tcp:// sends nothing to a row's tcp:// or ipc://,
    where no certificate proves who answers)."""
    if not _NODE_ID.match(node_id):
        return ('the table names a node "%s", an id no tkd has (1 to 64 of '
                "A-Z a-z 0-9 . _ -)" % node_id[:80])
    if link is not None and address.startswith(link):
        return None
    return ("the table gives node %s the address %s, and this client came in "
            "over %s: it dials a fleet's nodes over that alone (a row of "
            "tk_nodes is trusted no more than the link it came by)"
            % (node_id, address, link or "another transport"))


class NodeRefused(ValueError):
    """A node of the table this client does not dial (refusal)."""


class Route(enum.Enum):
    ANY = 1  # Orders, Control: round robin
    PATH = 2  # Git, Search: the node whose roots hold the path
    NAMED = 3  # Services: the node the caller names


def route_of(method: str) -> Route:
    if method.startswith("tk.v1.Git/") or method.startswith("tk.v1.Search/"):
        return Route.PATH
    if method.startswith("tk.v1.Services/"):
        return Route.NAMED
    return Route.ANY


def path_fields(method: str) -> Tuple[str, ...]:
    """The names of the request's singular string fields marked
    (tk.v1.path) = PATH_IN_ROOTS, in their order; () for a method this
    client does not know."""
    m = catalog.find_method(method)
    if m is None:
        return ()
    from tk.v1 import options_pb2  # the extension; importing tk loads all
    try:
        desc = descriptor_pool.Default().FindMessageTypeByName(m.request_type)
    except KeyError:
        return ()
    return tuple(f.name for f in desc.fields
                 if f.type == f.TYPE_STRING and f.label != f.LABEL_REPEATED
                 and f.GetOptions().Extensions[options_pb2.path]
                 == options_pb2.PATH_IN_ROOTS)


def path_of(method: str, request: Union[Message, bytes, None]) -> Optional[str]:
    """The path a Git or Search request names (its first non-empty
    PATH_IN_ROOTS field), or None. Bytes are decoded as the method's
    request when the client knows it."""
    names = path_fields(method)
    if not names or request is None:
        return None
    if isinstance(request, bytes):
        cls = request_class(method)
        if cls is None:
            return None
        try:
            request = cls.FromString(request)
        except DecodeError:
            return None
    for name in names:
        try:
            v = getattr(request, name)
        except AttributeError:
            return None
        if isinstance(v, str) and v:
            return v
    return None


def root_holds(root: str, path: str) -> int:
    """How much of path root holds, by whole components: the length of
    root (trailing slashes aside), 0 when it holds none of it ("/" holds
    every absolute path, as length 1)."""
    n = len(root)
    while n > 1 and root[n - 1] == "/":
        n -= 1
    if n == 0 or not path.startswith("/"):
        return 0
    if n == 1 and root[0] == "/":
        return 1
    if path[:n] != root[:n]:
        return 0
    return n if len(path) == n or path[n] == "/" else 0


class NodeView(Protocol):
    """What routing reads of a node: a _Node of tk._nodesock, or a stand-in
    in the tests (read only: a property each, which an attribute is)."""

    @property
    def id(self) -> str: ...
    @property
    def roots(self) -> Sequence[str]: ...
    @property
    def draining(self) -> bool: ...
    @property
    def down(self) -> bool: ...


def node_holds(node: NodeView, path: str) -> int:
    return max((root_holds(r, path) for r in node.roots), default=0)


def say_nodes(nodes: Sequence[NodeView], roots: bool) -> str:
    """"a, b (down), c (draining)", or with roots "a: /r1 /r2; b: /r3"."""
    out: List[str] = []
    for x in nodes:
        s = x.id + (" (down)" if x.down else "") + \
            (" (draining)" if x.draining else "")
        if roots:
            s += ":" + "".join(" " + r for r in x.roots)
        out.append(s)
    return ("; " if roots else ", ").join(out)


def _refuse(code: Code, reason: str, message: str) -> Status:
    return Status.local(code, message, reason=reason)


def route(nodes: Sequence[NodeView], method: str, path: Optional[str],
          named: Optional[str], rr: int,
          tried: Sequence[NodeView] = ()) -> Tuple[Optional[int], int,
                                                   Optional[Status]]:
    """(the index of the node for the call, the round robin's next, None),
    or (None, rr, the status the call ends with). tried: the nodes this
    call has tried already, which it does not try again."""
    if named:
        for i, x in enumerate(nodes):
            if x.id == named:
                return i, rr, None
        return None, rr, _refuse(
            Code.NOT_FOUND, UNKNOWN_NODE, 'no node "%s" in the fleet; its '
            "nodes are %s" % (named, say_nodes(nodes, False)))
    kind = route_of(method)
    if kind == Route.NAMED:
        if len(nodes) == 1:
            return 0, rr, None
        return None, rr, _refuse(
            Code.INVALID_ARGUMENT, NODE_REQUIRED,
            "%s registers on one machine: name its node (node=); the nodes "
            "are %s" % (method, say_nodes(nodes, False)))
    if kind == Route.PATH and path is not None:
        best = max((node_holds(x, path) for x in nodes), default=0)
        if best == 0:
            return None, rr, _refuse(
                Code.NOT_FOUND, NO_NODE_FOR_PATH,
                "no node of the fleet holds %s: the nodes' roots are %s"
                % (path, say_nodes(nodes, True)))
        for i, x in enumerate(nodes):
            if (node_holds(x, path) == best and not x.down
                    and not x.draining and not any(t is x for t in tried)):
                return i, rr, None
        return None, rr, _refuse(
            Code.UNAVAILABLE, NO_LIVE_NODE,
            "no node that holds %s can take the call%s: %s"
            % (path, " now" if tried else "", say_nodes(nodes, True)))
    # Any live node, round robin; and a Git or Search request without a
    # path, which tkd refuses as it would anywhere.
    n = len(nodes)
    for k in range(n):
        i = (rr + k) % n
        x = nodes[i]
        if x.down or x.draining or any(t is x for t in tried):
            continue
        return i, i + 1, None
    return None, rr, _refuse(
        Code.UNAVAILABLE, NO_LIVE_NODE,
        "no live node of the fleet can take the call: %s"
        % say_nodes(nodes, False))
