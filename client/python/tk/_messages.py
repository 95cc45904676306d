# SPDX-License-Identifier: MIT
"""The messages of a call: the generated class of a message or of a
method's request and reply, from the generated tk.v1's descriptors, and the reply
frame (tk.v1.Reply) decoded into a Status and the reply. Internal to the
client but for message_class, request_class and reply_class, which tk and
tk.client export. No sockets: tk.client and tk._inflight hand it bytes.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Type, TypeVar

from google.protobuf import descriptor_pool, message_factory, symbol_database
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError, Message

from tk.status import Code, Status
from tk.v1 import rpc_pb2

R = TypeVar("R")


def message_class(full_name: str) -> Type[Message]:
    """The generated class of a message by its full name
    ("tk.v1.PingRequest"); KeyError when tk.v1 has no such message."""
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
    service descriptors, or None when tk.v1 does not have the method."""
    rpc = _method(method)
    return None if rpc is None else message_class(rpc.input_type.full_name)


def reply_class(method: str) -> Optional[Type[Message]]:
    """The reply class of a method, as request_class."""
    rpc = _method(method)
    return None if rpc is None else message_class(rpc.output_type.full_name)


def decoder(method: str, reply_type: Optional[type]) -> Callable[[bytes], Any]:
    """How a reply of method is decoded: as reply_type (a message class,
    or bytes for the payload undecoded), by default as the method's reply
    class; ValueError when tk.v1 does not know the method."""
    if reply_type is bytes:
        return bytes
    cls: Optional[Type[Message]] = (reply_type if reply_type is not None
                                    else reply_class(method))
    if cls is None:
        raise ValueError(
            "tk: %s is not in the generated tk.v1; pass reply_type (a message "
            "class, or bytes for the payload undecoded)" % method)
    decode: Callable[[bytes], Any] = cls.FromString
    return decode


def decode_reply(data: bytes, call_id: int,
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
