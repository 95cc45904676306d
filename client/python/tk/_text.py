# SPDX-License-Identifier: MIT
"""Requests as people type them, the rules tkcall follows: text for a
bytes field, and a relative path made absolute. Owns tk.text (a bytes
field read as text), the encoding of a str given for a bytes field, and
the paths of a request made absolute against the process's working
directory. Reads only the message descriptors (the field option
(tk.v1.path) of proto/tk/v1/options.proto, as tkcall's paths.c reads it
from the catalog); sends nothing.

Bytes as text: a str given for a bytes field is its UTF-8 bytes; a lone
surrogate U+DC80..U+DCFF is the byte it escapes (errors="surrogateescape",
Python's rule for file names: os.fsencode), so that text(b) given back is
b again, whatever b is.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, Mapping, Optional, Tuple, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


def text(value: bytes) -> str:
    """A bytes field as text: its UTF-8, bytes that are not UTF-8 as lone
    surrogates (os.fsdecode's rule), so that reply.branch.head reads
    "main" and a name that is not UTF-8 still goes back as the same bytes
    when given to a bytes field. The field itself keeps the raw bytes."""
    return value.decode("utf-8", "surrogateescape")


def _bytes_of(value: object, name: str) -> object:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise ValueError("tk: %s: %r holds a lone surrogate that is no "
                             "escaped byte; give bytes" % (name, value)) from None
    return value


def _field_value(f: FieldDescriptor, value: object) -> object:
    repeated = f.label == FieldDescriptor.LABEL_REPEATED
    if f.type == FieldDescriptor.TYPE_BYTES:
        if repeated and not isinstance(value, (str, bytes)):
            items: Any = value  # a list or tuple of str and bytes
            return [_bytes_of(v, f.full_name) for v in items]
        return _bytes_of(value, f.full_name)
    if f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type is not None:
        sub = f.message_type
        if sub.GetOptions().map_entry:
            vf = sub.fields_by_name["value"]
            if isinstance(value, Mapping):
                return {k: _field_value(vf, v) for k, v in value.items()}
            return value
        if isinstance(value, Mapping):
            return text_fields(sub, value)
        if repeated and not isinstance(value, (str, bytes)):
            return [text_fields(sub, v) if isinstance(v, Mapping) else v
                    for v in value]  # type: ignore[attr-defined]
    return value


def text_fields(desc: Descriptor, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword fields of a message, each str given for a bytes field
    (in a list, a map's values or a dict for a message field too) encoded
    as the module says."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        f = desc.fields_by_name.get(name)
        out[name] = value if f is None else _field_value(f, value)
    return out


def _joined(cwd: str, rel: str) -> str:
    """cwd joined with rel as tkcall's paths.c joins them: "." is cwd, a
    leading "./" is dropped; ".." stays for tkd to resolve (symlinks
    included), as a shell would."""
    while rel.startswith("./"):
        rel = rel[2:].lstrip("/")
    if rel == ".":
        rel = ""
    if not rel:
        return cwd
    return cwd + rel if cwd == "/" else cwd + "/" + rel


@lru_cache(maxsize=None)
def _path_fields(desc: Descriptor) -> Tuple[Tuple[FieldDescriptor, bool], ...]:
    """desc's singular string fields marked (tk.v1.path) (False), and its
    message fields that hold such a field at any depth (True)."""
    from tk.v1 import options_pb2  # the extension; importing tk loads all
    out = []
    for f in desc.fields:
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            if f.message_type is not None and _path_fields(f.message_type):
                out.append((f, True))
        elif (f.type == FieldDescriptor.TYPE_STRING
              and f.label != FieldDescriptor.LABEL_REPEATED
              and f.GetOptions().Extensions[options_pb2.path]
              != options_pb2.PATH_KIND_UNSPECIFIED):
            out.append((f, False))
    return tuple(out)


def _fix(m: Message, cwd: str) -> None:
    for f, nested in _path_fields(m.DESCRIPTOR):
        if nested:
            if f.label == FieldDescriptor.LABEL_REPEATED:
                for sub in getattr(m, f.name):
                    _fix(sub, cwd)
            elif m.HasField(f.name):
                _fix(getattr(m, f.name), cwd)
            continue
        v = getattr(m, f.name)
        if v and not v.startswith("/"):
            setattr(m, f.name, _joined(cwd, v))


def _relative(m: Message) -> bool:
    for f, nested in _path_fields(m.DESCRIPTOR):
        if not nested:
            v = getattr(m, f.name)
            if v and not v.startswith("/"):
                return True
        elif f.label == FieldDescriptor.LABEL_REPEATED:
            if any(_relative(sub) for sub in getattr(m, f.name)):
                return True
        elif m.HasField(f.name) and _relative(getattr(m, f.name)):
            return True
    return False


def absolute_paths(request: M, cwd: Optional[str] = None) -> M:
    """request with each relative path in a field marked (tk.v1.path) made
    absolute against cwd (default: the process's working directory), as
    tkcall does: a copy when there is one, request itself when not. tkd
    refuses a relative path: it resolves paths itself, on its own
    machine."""
    if not _relative(request):
        return request
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError as e:
            raise ValueError("tk: cannot make the request's relative paths "
                             "absolute (the working directory: %s); give "
                             "absolute paths" % e.strerror) from None
    copy: M = type(request)()
    copy.CopyFrom(request)
    _fix(copy, cwd)
    return copy
