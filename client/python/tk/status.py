# SPDX-License-Identifier: MIT
"""The outcome of a call: Status (code, reason, message, stderr excerpt,
cancellation, ...) and TkError, which carries the Status of a call that did
not end OK. Mirrors tk_status of libtkclient (client/include/tk/client.h).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Type, Union

if TYPE_CHECKING:
    from tk.v1 import rpc_pb2


class Code(enum.IntEnum):
    """The canonical gRPC status codes (tk.v1.Status.Code), same numbers."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class Cause(enum.IntEnum):
    """Why a call ended early (tk.v1.Cancellation.Cause)."""

    NONE = 0
    CALLER = 1
    DEADLINE = 2
    SHUTDOWN = 3
    LIMIT = 4


class CancelOutcome(enum.IntEnum):
    """What Call.cancel achieved (tk.v1.CancelReply.Outcome), plus NOT_SENT:
    the call was never sent, so there was nothing to cancel."""

    NOT_SENT = 0
    CANCELLED = 1
    NOT_FOUND = 2
    ALREADY_DONE = 3
    WRITE_CONTINUES = 4


def _enum_or_int(cls: Type[enum.IntEnum], value: int) -> int:
    # A number this client does not know (a newer server) stays a number.
    try:
        return cls(value)
    except ValueError:
        return value


def code_name(code: int) -> str:
    """'DEADLINE_EXCEEDED'; 'CODE_<n>' for a number outside the table."""
    try:
        return Code(code).name
    except ValueError:
        return "CODE_%d" % code


@dataclass(frozen=True)
class Cancellation:
    """Why a call ended before its natural end, and what that cost."""

    cause: Union[Cause, int] = Cause.NONE
    process_killed: bool = False
    write_completed: bool = False
    cleanup_ms: int = 0


@dataclass(frozen=True)
class Status:
    """The status of a call, from tkd (from_server) or made by the client
    when no reply came (then the message says so)."""

    code: Union[Code, int]
    message: str = ""
    reason: str = ""
    stderr: bytes = b""
    partial: bool = False
    retry_after_ms: int = 0
    elapsed_us: int = 0
    cancellation: Cancellation = field(default_factory=Cancellation)
    from_server: bool = True
    # What did the call's work, as tkd names it ("git grep", "libgit2"); for
    # people, not to compare.
    tool: str = ""

    @property
    def ok(self) -> bool:
        return self.code == Code.OK

    @property
    def code_name(self) -> str:
        return code_name(self.code)

    @classmethod
    def from_proto(cls, st: rpc_pb2.Status) -> Status:
        """From a tk.v1.Status message."""
        c = st.cancellation
        return cls(
            code=_enum_or_int(Code, st.code),
            message=st.message,
            reason=st.reason,
            stderr=st.stderr_excerpt,
            partial=st.partial,
            retry_after_ms=st.retry_after_ms,
            elapsed_us=st.elapsed_us,
            cancellation=Cancellation(
                cause=_enum_or_int(Cause, c.cause),
                process_killed=c.process_killed,
                write_completed=c.write_completed,
                cleanup_ms=c.cleanup_ms,
            ),
            from_server=True,
            tool=st.tool,
        )

    @classmethod
    def local(cls, code: Code, message: str, cause: Cause = Cause.NONE,
              reason: str = "") -> Status:
        """A status the client makes itself: no reply came, or the call
        could not be routed (reason NO_NODE_FOR_PATH, ...)."""
        return cls(
            code=code,
            message=message,
            reason=reason,
            cancellation=Cancellation(cause=cause),
            from_server=False,
        )

    @property
    def node(self) -> str:
        """The id of the node that carried the call (or was to): in a
        fleet, the node the client routed it to; "" with one tkd, and for
        a call no node was chosen for (NO_NODE_FOR_PATH, ...). Not a
        field of tk.v1.Status: the client knows it, tkd does not send it."""
        return str(self.__dict__.get("_node", ""))

    def _on_node(self, node: str) -> Status:
        """This status, said of node."""
        st = dataclasses.replace(self)
        object.__setattr__(st, "_node", node)
        return st


class TkError(Exception):
    """A call that did not end OK. Compare code and reason, never message."""

    def __init__(self, status: Status) -> None:
        super().__init__(status)
        self.status = status

    @property
    def code(self) -> Union[Code, int]:
        """The gRPC code: an int, a Code member when the client knows it
        (err.code.name, int(err.code))."""
        return self.status.code

    @property
    def code_name(self) -> str:
        return self.status.code_name

    @property
    def reason(self) -> str:
        return self.status.reason

    @property
    def message(self) -> str:
        return self.status.message

    @property
    def node(self) -> str:
        """The node that carried the call (Status.node); "" with one tkd."""
        return self.status.node

    @property
    def stderr(self) -> bytes:
        """The bounded stderr excerpt of a tool that failed (head and tail)."""
        return self.status.stderr

    @property
    def cancellation(self) -> Cancellation:
        return self.status.cancellation

    @property
    def from_server(self) -> bool:
        return self.status.from_server

    def __str__(self) -> str:
        st = self.status
        out = "%s (%d)" % (st.code_name, int(st.code))
        if st.reason:
            out += " %s" % st.reason
        out += ": %s" % st.message
        if st.cancellation.cause != Cause.NONE:
            out += " [cause %s]" % _name(Cause, st.cancellation.cause)
        if st.node:
            out += " [node %s]" % st.node
        return out


def _name(cls: type, value: int) -> str:
    try:
        return str(cls(value).name)
    except ValueError:
        return str(value)
