# SPDX-License-Identifier: MIT
"""Messages to and from JSON as tkcall prints and reads them.

The proto3 JSON mapping (protobuf's json_format) writes `bytes` fields as
base64, so git's paths, branch names, subjects and patches and search
lines read as "Z2VuLw==", and text typed into one is taken for base64.
tkcall's default form, and this module's, is for people (the same rule as
TK_JSON_BYTES_TEXT in client/include/tk/json.h):

    bytes that are UTF-8     "gen/"                  the text
    bytes that are not       {"base64": "Y2Fm6S50eHQ="}

and on input a string is always its own UTF-8 bytes (never base64: "aGk="
is four characters) and only {"base64": "..."} is base64. U+0000 is text.
proto_json=True gives the strict proto3 mapping both ways, as json_format
(and tkcall --proto-json) read and write it.

A field at its default is left out, as the proto3 mapping leaves it
(emit_defaults=True prints every one), except a zero that is a value
(_PRESENCES): Git/Status's "ahead": 0 and "behind": 0 beside
"hasAheadBehind": true, a Metric's "value": 0 without a histogram.

    from tk import jsonform
    print(jsonform.to_json(reply))                      # {"head": "main", ...}
    req = jsonform.from_dict({"paths": ["gen/"]}, GitLogRequest())
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Callable, Dict, Optional, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)

__all__ = ["from_dict", "from_json", "to_dict", "to_json"]

_FORM = 'text (a string) or {"base64": "..."} (bytes that are not UTF-8)'


# Proto3 scalars whose zero is a value, not an absence: printed when their
# message says they hold one, by a flag beside them or by the other side of
# an either-or being unset: (message, field, the field that says whether it
# holds a value, whether it does when that one is set). The table
# `presences` of client/json/json_encode.c, the one of client/ts/src/
# jsonform.ts too; tests/python/test_jsonform.py holds the three equal.
_PRESENCES = (
    ("tk.v1.GitStatusBranch", "ahead", "has_ahead_behind", True),
    ("tk.v1.GitStatusBranch", "behind", "has_ahead_behind", True),
    ("tk.v1.Metric", "value", "histogram", False),
)


def _b64decode(text: str, path: str) -> bytes:
    """Standard or URL-safe base64, padding optional (as libtkclient)."""
    s = text.rstrip("=")
    if len(text) - len(s) > 2 or (s != text and len(text) % 4 != 0) \
            or len(s) % 4 == 1:
        raise json_format.ParseError("%s: invalid base64" % path)
    try:
        return base64.b64decode(s.translate(str.maketrans("-_", "+/")) +
                                "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise json_format.ParseError("%s: invalid base64" % path) from None


def _shown(b64: str) -> Any:
    """A bytes value of the proto3 mapping (base64) in the text form."""
    raw = base64.b64decode(b64)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def _typed(value: Any, path: str) -> str:
    """A bytes value typed in the text form, as the proto3 mapping's base64."""
    if isinstance(value, str):
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError:
            raise json_format.ParseError(
                "%s: the text is not UTF-8 (a lone surrogate)" % path) from None
        return base64.b64encode(raw).decode("ascii")
    if isinstance(value, dict) and list(value) == ["base64"]:
        if not isinstance(value["base64"], str):
            raise json_format.ParseError(
                "%s.base64: expected base64 (a string), got %s" %
                (path, _jtype(value["base64"])))
        raw = _b64decode(value["base64"], path + ".base64")
        return base64.b64encode(raw).decode("ascii")
    raise json_format.ParseError("%s: expected bytes as %s, got %s" %
                                 (path, _FORM, _jtype(value)))


def _jtype(value: Any) -> str:
    """What a JSON value is, in libtkclient's words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    names: Dict[type, str] = {str: "a string", list: "an array",
                              dict: "another object"}
    return names.get(type(value), type(value).__name__)


def _is_map(f: FieldDescriptor) -> bool:
    is_map: bool = (f.type == FieldDescriptor.TYPE_MESSAGE and
                    f.message_type.GetOptions().map_entry)
    return is_map


def _walk(d: Dict[str, Any], desc: Descriptor, path: str,
          conv: Callable[[Any, str], Any], by_proto_name: bool) -> None:
    """Applies conv to every bytes value of the dict d of a message desc,
    in place, recursing into messages, arrays and maps."""
    for f in desc.fields:
        for key in {f.json_name, f.name} if by_proto_name else {f.json_name}:
            if key in d and d[key] is not None:
                _walk_field(d, key, f, "%s%s" % (path + "." if path else "",
                                                 key), conv, by_proto_name)


def _walk_field(d: Dict[str, Any], key: str, f: FieldDescriptor, path: str,
                conv: Callable[[Any, str], Any], by_proto_name: bool) -> None:
    def value(v: Any, vf: FieldDescriptor, p: str) -> Any:
        if vf.type == FieldDescriptor.TYPE_BYTES:
            return conv(v, p)
        if vf.type == FieldDescriptor.TYPE_MESSAGE and isinstance(v, dict):
            _walk(v, vf.message_type, p, conv, by_proto_name)
        return v

    v = d[key]
    if _is_map(f) and isinstance(v, dict):
        vf = f.message_type.fields_by_name["value"]
        for k in v:
            v[k] = value(v[k], vf, "%s[%s]" % (path, json.dumps(k)))
    elif f.label == FieldDescriptor.LABEL_REPEATED and isinstance(v, list):
        d[key] = [value(e, f, "%s[%d]" % (path, i)) for i, e in enumerate(v)]
    else:
        d[key] = value(v, f, path)


def _is_set(message: Message, f: FieldDescriptor) -> bool:
    """Whether f of message is set, as protobuf-c would pack it."""
    if f.label == FieldDescriptor.LABEL_REPEATED:
        return len(getattr(message, f.name)) > 0
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        return bool(message.HasField(f.name))
    return bool(getattr(message, f.name) != f.default_value)


def _add_zeros(message: Message, d: Dict[str, Any]) -> None:
    """Adds to d, the dict of message, the zeros that are values
    (_PRESENCES), in d's order (field numbers), at every depth."""
    desc = message.DESCRIPTOR
    added = False
    for name, field, when, when_set in _PRESENCES:
        f = desc.fields_by_name.get(field) if name == desc.full_name else None
        if f is None or f.json_name in d or \
                _is_set(message, desc.fields_by_name[when]) != when_set:
            continue
        d[f.json_name] = json_format.MessageToDict(
            type(message)(), including_default_value_fields=True)[f.json_name]
        added = True
    if added:
        numbers = {x.json_name: int(x.number) for x in desc.fields}
        items = sorted(d.items(), key=lambda kv: numbers.get(kv[0], 0))
        d.clear()
        d.update(items)
    for f in desc.fields:
        v = d.get(f.json_name)
        if f.type != FieldDescriptor.TYPE_MESSAGE or v is None:
            continue
        if _is_map(f):
            vf = f.message_type.fields_by_name["value"]
            if vf.type == FieldDescriptor.TYPE_MESSAGE:
                for k, m in getattr(message, f.name).items():
                    key = str(k).lower() if isinstance(k, bool) else str(k)
                    _add_zeros(m, v[key])
        elif f.label == FieldDescriptor.LABEL_REPEATED:
            for m, e in zip(getattr(message, f.name), v):
                _add_zeros(m, e)
        else:
            _add_zeros(getattr(message, f.name), v)


def to_dict(message: Message, proto_json: bool = False,
            emit_defaults: bool = False) -> Dict[str, Any]:
    """The message as a dict of JSON values (lowerCamelCase names), bytes
    in the text form, or base64 with proto_json; a field at its default
    left out (unless emit_defaults), but for a zero that is a value."""
    d: Dict[str, Any] = json_format.MessageToDict(
        message, including_default_value_fields=emit_defaults)
    if not emit_defaults:
        _add_zeros(message, d)
    if not proto_json:
        _walk(d, message.DESCRIPTOR, "", lambda v, p: _shown(v), False)
    return d


def to_json(message: Message, proto_json: bool = False,
            emit_defaults: bool = False, indent: Optional[int] = 2) -> str:
    """to_dict as JSON text (indent=None: one line)."""
    return json.dumps(to_dict(message, proto_json, emit_defaults),
                      indent=indent, ensure_ascii=False)


def from_dict(data: Dict[str, Any], message: M, proto_json: bool = False) -> M:
    """Fills message from a dict of JSON values (proto or lowerCamelCase
    names), bytes in the text form, or base64 with proto_json; returns it.
    A bad value raises json_format.ParseError naming its field path."""
    if not proto_json:
        data = json.loads(json.dumps(data))  # a copy, which _walk changes
        if not isinstance(data, dict):
            raise json_format.ParseError("expected a JSON object")
        _walk(data, message.DESCRIPTOR, "", _typed, True)
    filled: M = json_format.ParseDict(data, message)
    return filled


def from_json(text: str, message: M, proto_json: bool = False) -> M:
    """from_dict of JSON text."""
    return from_dict(json.loads(text), message, proto_json)
