# SPDX-License-Identifier: MIT
"""tk.jsonform (client/python/tk/jsonform.py): messages to and from JSON as
tkcall prints and reads them, bytes as text or {"base64": ...}, and the
proto3 mapping with proto_json. No server: the codec alone, on tk's
messages and on a message made here with a map of bytes (tk's protos have
none) and a nested one. A zero that is a value is printed; the table that
says which is the same in C, Python and TypeScript.
"""

from __future__ import annotations

import os
import re
import unittest

from typing import List, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf import json_format, message_factory

from tk import jsonform
from tk.v1 import control_pb2, git_pb2, rpc_pb2


def _bag_class() -> type:
    """message Bag { map<string, bytes> m = 1; repeated Bag kids = 2;
    bytes b = 3; } in a pool of its own."""
    f = descriptor_pb2.FileDescriptorProto(name="bag.proto",
                                           package="tkt", syntax="proto3")
    bag = f.message_type.add(name="Bag")
    entry = bag.nested_type.add(name="MEntry")
    entry.options.map_entry = True
    L = T = descriptor_pb2.FieldDescriptorProto
    entry.field.add(name="key", number=1, type=T.TYPE_STRING,
                    label=L.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=T.TYPE_BYTES,
                    label=L.LABEL_OPTIONAL)
    bag.field.add(name="m", number=1, type=T.TYPE_MESSAGE,
                  label=L.LABEL_REPEATED, type_name=".tkt.Bag.MEntry")
    bag.field.add(name="kids", number=2, type=T.TYPE_MESSAGE,
                  label=L.LABEL_REPEATED, type_name=".tkt.Bag")
    bag.field.add(name="b", number=3, type=T.TYPE_BYTES,
                  label=L.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.MessageFactory(pool).GetPrototype(
        pool.FindMessageTypeByName("tkt.Bag"))


Bag = _bag_class()


class Output(unittest.TestCase):
    def test_text_and_object_form(self) -> None:
        d = jsonform.to_dict(control_pb2.PingReply(data=b"hi"))
        self.assertEqual(d, {"data": "hi"})
        d = jsonform.to_dict(control_pb2.PingReply(data=b"gen\xff"))
        self.assertEqual(d, {"data": {"base64": "Z2Vu/w=="}})
        # U+0000 is text; a surrogate encoded in UTF-8 is not UTF-8.
        d = jsonform.to_dict(control_pb2.PingReply(data=b"a\x00b"))
        self.assertEqual(d, {"data": "a\x00b"})
        d = jsonform.to_dict(control_pb2.PingReply(data=b"\xed\xa0\x80"))
        self.assertEqual(d, {"data": {"base64": "7aCA"}})

    def test_proto_json(self) -> None:
        d = jsonform.to_dict(control_pb2.PingReply(data=b"hi"), proto_json=True)
        self.assertEqual(d, {"data": "aGk="})

    def test_nested_repeated_and_maps(self) -> None:
        reply = git_pb2.GitLogReply(commits=[git_pb2.GitCommit(
            subject=b"add gen", author=git_pb2.GitSignature(name=b"Jos\xe9"))])
        self.assertEqual(jsonform.to_dict(reply), {"commits": [{
            "author": {"name": {"base64": "Sm9z6Q=="}}, "subject": "add gen"}]})
        bag = Bag(b=b"x", kids=[Bag(b=b"\xff")])
        bag.m["k"] = b"v"
        bag.m["z"] = b"\xfe"
        self.assertEqual(jsonform.to_dict(bag), {
            "m": {"k": "v", "z": {"base64": "/g=="}}, "kids": [
                {"b": {"base64": "/w=="}}], "b": "x"})

    def test_to_json(self) -> None:
        text = jsonform.to_json(control_pb2.PingReply(data="é".encode()),
                                indent=None)
        self.assertEqual(text, '{"data": "é"}')


class Input(unittest.TestCase):
    def data(self, value: object, proto_json: bool = False) -> bytes:
        return jsonform.from_dict({"data": value}, control_pb2.PingRequest(),
                                  proto_json).data

    def test_text_is_never_base64(self) -> None:
        self.assertEqual(self.data("hi"), b"hi")
        self.assertEqual(self.data("aGk="), b"aGk=")
        self.assertEqual(self.data("a\x00b"), b"a\x00b")
        self.assertEqual(self.data(""), b"")
        # The Ping, under the proto3 mapping: one byte, 0x86.
        self.assertEqual(self.data("hi", proto_json=True), b"\x86")

    def test_object_form(self) -> None:
        self.assertEqual(self.data({"base64": "aGk="}), b"hi")
        self.assertEqual(self.data({"base64": "Z2Vu_w"}), b"gen\xff")
        self.assertEqual(self.data({"base64": ""}), b"")

    def test_errors_name_the_field(self) -> None:
        cases = [
            ({"base64": "a"}, "data.base64: invalid base64"),
            ({"base64": "!!!!"}, "data.base64: invalid base64"),
            ({"base64": "ab=c"}, "data.base64: invalid base64"),
            ({"base64": 7}, "data.base64: expected base64 (a string), got a "
                            "number"),
            ({"base46": "aGk="}, "data: expected bytes as text"),
            ({"base64": "aGk=", "x": 1}, "data: expected bytes as text"),
            (12, "got a number"),
            (["a"], "got an array"),
        ]
        for value, want in cases:
            with self.subTest(value=value):
                with self.assertRaises(json_format.ParseError) as cm:
                    self.data(value)
                self.assertIn(want, str(cm.exception))

    def test_repeated_and_maps(self) -> None:
        req = jsonform.from_dict(
            {"repo": "/r", "paths": ["gen/", {"base64": "/w=="}]},
            git_pb2.GitLogRequest())
        self.assertEqual(list(req.paths), [b"gen/", b"\xff"])
        with self.assertRaises(json_format.ParseError) as cm:
            jsonform.from_dict({"paths": ["ok", {"base64": "="}]},
                               git_pb2.GitLogRequest())
        self.assertIn("paths[1].base64: invalid base64", str(cm.exception))
        bag = jsonform.from_dict({"m": {"k": "v", "z": {"base64": "/g=="}},
                                  "kids": [{"b": "x"}]}, Bag())
        self.assertEqual(dict(bag.m), {"k": b"v", "z": b"\xfe"})
        self.assertEqual(bag.kids[0].b, b"x")
        with self.assertRaises(json_format.ParseError) as cm:
            jsonform.from_dict({"m": {"z": {"base64": "%%"}}}, Bag())
        self.assertIn('m["z"].base64: invalid base64', str(cm.exception))

    def test_proto_names_too(self) -> None:
        st = jsonform.from_dict({"stderr_excerpt": "oops"}, rpc_pb2.Status())
        self.assertEqual(st.stderr_excerpt, b"oops")

    def test_round_trip(self) -> None:
        for raw in (b"", b"hi", b"aGk=", b"\x00", b"\xff\xfe", b"caf\xe9.txt",
                    "✓".encode(), b"\xed\xa0\x80"):
            for proto_json in (False, True):
                with self.subTest(raw=raw, proto_json=proto_json):
                    text = jsonform.to_json(control_pb2.PingReply(data=raw),
                                            proto_json)
                    back = jsonform.from_json(text, control_pb2.PingReply(),
                                              proto_json)
                    self.assertEqual(back.data, raw)


TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _rows(rel: str, start: str) -> List[Tuple[str, str, str, bool]]:
    """The rows {"message", "field", "when", true} (C) or [..., true] (TS)
    of the table that begins at start in the file rel of the checkout."""
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        text = f.read()
    at = text.index(start)
    table = text[at:text.index(";", at)]
    return [(m, f, w, s == "true") for m, f, w, s in re.findall(
        r'[{\[]\s*"([\w.]+)",\s*"(\w+)",\s*"(\w+)",\s*(true|false)\s*[}\]]',
        table)]


class ZeroThatIsAValue(unittest.TestCase):
    """A proto3 zero whose presence matters is printed (tkcall's rule,
    client/json/json_encode.c's presences); any other zero is not."""

    def test_ahead_and_behind(self) -> None:
        b = git_pb2.GitStatusBranch()
        self.assertEqual(jsonform.to_dict(b), {})
        b.has_ahead_behind = True
        self.assertEqual(jsonform.to_json(b, indent=None),
                         '{"hasAheadBehind": true, "ahead": 0, "behind": 0}')
        b.oid, b.ahead = "x", 2
        for proto_json in (False, True):
            self.assertEqual(
                jsonform.to_json(b, proto_json, indent=None),
                '{"oid": "x", "hasAheadBehind": true, "ahead": 2, '
                '"behind": 0}')
        # In a reply, where Git/Status puts it.
        r = git_pb2.GitStatusReply()
        r.branch.has_ahead_behind = True
        self.assertEqual(jsonform.to_dict(r), {"branch": {
            "hasAheadBehind": True, "ahead": 0, "behind": 0}})

    def test_metric_value(self) -> None:
        self.assertEqual(jsonform.to_dict(control_pb2.Metric()), {"value": 0})
        h = control_pb2.Metric()
        h.histogram.SetInParent()
        self.assertEqual(jsonform.to_dict(h), {"histogram": {}})
        s = control_pb2.StatsReply()
        s.families.add(name="c", metrics=[control_pb2.Metric(), h])
        self.assertEqual(jsonform.to_dict(s), {"families": [
            {"name": "c", "metrics": [{"value": 0}, {"histogram": {}}]}]})
        # emit_defaults prints every field, these as the others.
        self.assertEqual(
            jsonform.to_dict(control_pb2.Metric(), emit_defaults=True),
            {"labels": [], "value": 0})
        # Read back: the same message.
        back = jsonform.from_dict({"value": 0}, control_pb2.Metric())
        self.assertEqual(jsonform.to_dict(back), {"value": 0})

    def test_one_table_in_c_python_and_ts(self) -> None:
        c = _rows("client/json/json_encode.c", "presences[] = {")
        ts = _rows("client/ts/src/jsonform.ts", "PRESENCES:")
        py = list(jsonform._PRESENCES)
        self.assertTrue(c, "json_encode.c: no rows read from presences")
        self.assertEqual(py, c, "tk.jsonform's _PRESENCES is not C's")
        self.assertEqual(ts, c, "client/ts's PRESENCES is not C's")
        # Each row names a message, a scalar and the field that says so.
        for message, field, when, _ in py:
            with self.subTest(message=message, field=field):
                desc = descriptor_pool.Default().FindMessageTypeByName(
                    message)
                self.assertIn(field, desc.fields_by_name)
                self.assertIn(when, desc.fields_by_name)


if __name__ == "__main__":
    unittest.main()
