# SPDX-License-Identifier: MIT
"""tools/gen-stubs.py and tools/gen-python.py on small protos: each
method's option (tk.v1.method) becomes that method's row in tkd's method
table (.methods.h, plain data that includes nothing of tkd) and in the C
and the Python catalogs, and both generators refuse a method without the
option, or with one tkd would refuse. The C catalog also keeps the
.proto's comments (escaped as C strings), oneof names, maps and the
option (tk.v1.path), which only a string field may carry.

  test_gen_options.py SOURCE_ROOT
"""

from __future__ import annotations

import ast
import faulthandler
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GEN_C = os.path.join(ROOT, "tools", "gen-stubs.py")
GEN_PY = os.path.join(ROOT, "tools", "gen-python.py")
# As tools/regen runs them.
PY = "/usr/bin/python3"

# The watchdog (tests/support/watchdog.py) asks a hanging test for its
# threads' Python stacks with SIGUSR1.
faulthandler.register(signal.SIGUSR1, all_threads=True)

HEAD = """syntax = "proto3";
package tk.v1;
import "tk/v1/options.proto";
message Req {}
message Rep {}
service Thing {
"""


def rpc(name: str, option: str = "") -> str:
    if not option:
        return "  rpc %s(Req) returns (Rep);\n" % name
    return ("  rpc %s(Req) returns (Rep) {\n"
            "    option (tk.v1.method) = { %s };\n  }\n" % (name, option))


def entries(header: str) -> Dict[str, List[str]]:
    """The method table's rows, method by method: {name: the arguments of
    its ROW(...), as written ("TK__V1__METHOD_SPEC__KIND__READ", ...)}."""
    table = header[header.index("__METHODS(ROW, prefix)"):]
    table = re.sub(r"/\*.*?\*/", "", table, flags=re.S)
    out: Dict[str, List[str]] = {}
    for args in re.findall(r"ROW\(([^()]*)\),", table.replace("\\\n", " ")):
        row = [a.strip() for a in args.split(",")]
        out[row[0].strip('"')] = row
    return out


class GenOptions(unittest.TestCase):
    def gen(self, body: str, gen: str = GEN_C,
            head: str = HEAD) -> subprocess.CompletedProcess:
        d = tempfile.mkdtemp(prefix="tk-genopt-")
        self.addCleanup(shutil.rmtree, d)
        os.makedirs(os.path.join(d, "tk", "v1"))
        shutil.copy(os.path.join(ROOT, "proto", "tk", "v1", "options.proto"),
                    os.path.join(d, "tk", "v1"))
        with open(os.path.join(d, "tk", "v1", "thing.proto"), "w") as f:
            f.write(head + body + "}\n")
        subprocess.run(["protoc", "--include_imports", "--include_source_info",
                        "--descriptor_set_out=set.pb", "-I.",
                        "tk/v1/thing.proto"], cwd=d, check=True)
        self.out = os.path.join(d, "out")
        self.tkd = os.path.join(d, "tkd")
        outs = [self.out, self.tkd] if gen == GEN_C else [self.out]
        return subprocess.run([PY, gen, os.path.join(d, "set.pb")] + outs,
                              capture_output=True, text=True)

    def read(self, rel: str, tkd: bool = False) -> str:
        with open(os.path.join(self.tkd if tkd else self.out, rel)) as f:
            return f.read()

    BODY = (rpc("Look", "kind: READ, default_timeout_ms: 5000, "
                "ceiling_ms: 60000, inline: true") +
            rpc("Register", "kind: WRITE, default_timeout_ms: 9000, "
                "ceiling_ms: 9000") +
            rpc("Take", "kind: READ, default_timeout_ms: 100, "
                "ceiling_ms: 200, writes: true"))

    def test_the_option_makes_the_table(self) -> None:
        p = self.gen(self.BODY)
        self.assertEqual(p.returncode, 0, p.stderr)
        h = self.read("tk/v1/thing.methods.h", tkd=True)
        self.assertIn("#define TK_V1_THING__N_METHODS 3\n", h)
        for method, default, ceiling in (("LOOK", 5000, 60000),
                                         ("REGISTER", 9000, 9000),
                                         ("TAKE", 100, 200)):
            self.assertIn("#define TK_V1_THING__%s__DEFAULT_TIMEOUT_MS %du\n"
                          "#define TK_V1_THING__%s__CEILING_MS %du\n"
                          % (method, default, method, ceiling), h)

        # Plain data: nothing of tkd (rpc/'s RPC_METHOD_ROW makes the
        # table of the rows in the module that serves the service).
        self.assertEqual(re.findall(r'^#include (.*)$', h, re.M),
                         ['"tk/v1/options.pb-c.h"', '"tk/v1/thing.pb-c.h"'])

        def entry(method: str, kind: str, handler: str,
                  inline: str, writes: str) -> List[str]:
            macro = "TK_V1_THING__%s__" % method.upper()
            return ['"tk.v1.Thing/%s"' % method,
                    "&tk__v1__req__descriptor",
                    "&tk__v1__rep__descriptor",
                    "TK__V1__METHOD_SPEC__KIND__" + kind,
                    macro + "DEFAULT_TIMEOUT_MS",
                    macro + "CEILING_MS",
                    inline, writes,
                    "NULL", "NULL", "0u", "0u", "0u",
                    "prefix##" + handler]

        self.assertEqual(entries(h), {
            "tk.v1.Thing/Look": entry("Look", "READ", "look", "1", "0"),
            # A C keyword gets a trailing underscore.
            "tk.v1.Thing/Register": entry("Register", "WRITE", "register_",
                                          "0", "0"),
            "tk.v1.Thing/Take": entry("Take", "READ", "take", "0", "1"),
        })

    def test_the_option_makes_the_c_catalog(self) -> None:
        p = self.gen(self.BODY)
        self.assertEqual(p.returncode, 0, p.stderr)
        cat = self.read("tk/catalog.c")
        rows = cat[cat.index("tk_catalog__methods[] = {"):]
        rows = rows[:rows.index("};")]
        self.assertEqual(rows.count('{"tk.v1.Thing/'), 3, rows)
        for method, kind, default, ceiling in (
                ("Look", "READ", 5000, 60000),
                ("Register", "WRITE", 9000, 9000),
                ("Take", "READ", 100, 200)):
            self.assertIn('{"tk.v1.Thing/%s", &tk__v1__req__descriptor, '
                          '&tk__v1__rep__descriptor,\n'
                          '     TK_METHOD_%s, %d, %d,\n'
                          '     NULL, NULL, 0, 0, 0},'
                          % (method, kind, default, ceiling), rows)

    def test_the_option_makes_the_python_catalog(self) -> None:
        p = self.gen(self.BODY, GEN_PY)
        self.assertEqual(p.returncode, 0, p.stderr)
        tree = ast.parse(self.read("tk/_catalog.py"))
        methods = [n.value for n in tree.body if isinstance(n, ast.Assign)
                   and n.targets[0].id == "METHODS"]  # type: ignore
        self.assertEqual(ast.literal_eval(methods[0]), (
            ("tk.v1.Thing/Look", "tk.v1.Req", "tk.v1.Rep", "READ", 5000,
             60000, None),
            ("tk.v1.Thing/Register", "tk.v1.Req", "tk.v1.Rep", "WRITE", 9000,
             9000, None),
            ("tk.v1.Thing/Take", "tk.v1.Req", "tk.v1.Rep", "READ", 100, 200,
             None),
        ))

    def test_a_method_without_the_option_is_refused(self) -> None:
        for gen in (GEN_C, GEN_PY):
            with self.subTest(gen=os.path.basename(gen)):
                p = self.gen(rpc("Look", "kind: READ, default_timeout_ms: 1, "
                                 "ceiling_ms: 1") + rpc("Forgot"), gen)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("tk.v1.Thing/Forgot (tk/v1/thing.proto) has no "
                              "option (tk.v1.method)", p.stderr)

    def test_what_tkd_would_refuse_is_refused(self) -> None:
        for option, why in (
                ("default_timeout_ms: 1, ceiling_ms: 1",
                 "kind must be READ or WRITE"),
                ("kind: READ, ceiling_ms: 1",
                 "default_timeout_ms and ceiling_ms must be given"),
                ("kind: READ, default_timeout_ms: 2, ceiling_ms: 1",
                 "default_timeout_ms 2 is above ceiling_ms 1"),
                ("kind: WRITE, default_timeout_ms: 1, ceiling_ms: 1, "
                 "writes: true", "writes is for a READ")):
            for gen in (GEN_C, GEN_PY):
                with self.subTest(option=option, gen=os.path.basename(gen)):
                    p = self.gen(rpc("Look", option), gen)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn("tk.v1.Thing/Look (tk/v1/thing.proto): "
                                  "option (tk.v1.method): " + why, p.stderr)

    # A method whose reply holds a list declares its ceiling: the request's
    # limit, the reply's repeated field, the numbers.
    LISTED = """syntax = "proto3";
package tk.v1;
import "tk/v1/options.proto";
message Req {
  uint32 max_n = 1;
  string name = 2;
}
message Rep {
  repeated string items = 1;
  string one = 2;
}
service Thing {
"""
    LIST = ("kind: READ, default_timeout_ms: 5, ceiling_ms: 5, list: { "
            "field: \"items\", limit_field: \"max_n\", default_items: 10, "
            "max_items: 100, max_bytes: 4096 }")

    def test_the_list_reaches_the_table_and_the_catalogs(self) -> None:
        body = rpc("Many", self.LIST) + rpc(
            "Fixed", "kind: READ, default_timeout_ms: 5, ceiling_ms: 5, "
            "list: { field: \"items\", max_items: 7 }")
        p = self.gen(body, head=self.LISTED)
        self.assertEqual(p.returncode, 0, p.stderr)
        h = self.read("tk/v1/thing.methods.h", tkd=True)
        for method, items, most, size in (("MANY", 10, 100, 4096),
                                          ("FIXED", 0, 7, 0)):
            self.assertIn("#define TK_V1_THING__%s__DEFAULT_ITEMS %du\n"
                          "#define TK_V1_THING__%s__MAX_ITEMS %du\n"
                          "#define TK_V1_THING__%s__MAX_BYTES %du\n"
                          % (method, items, method, most, method, size), h)
        table = entries(h)
        self.assertEqual(table["tk.v1.Thing/Many"][8:13],
                         ['"items"', '"max_n"',
                          "TK_V1_THING__MANY__DEFAULT_ITEMS",
                          "TK_V1_THING__MANY__MAX_ITEMS",
                          "TK_V1_THING__MANY__MAX_BYTES"])
        self.assertEqual(table["tk.v1.Thing/Fixed"][8:10], ['"items"', "NULL"])
        cat = self.read("tk/catalog.c")
        self.assertIn('TK_METHOD_READ, 5, 5,\n     "items", "max_n", 10, 100, '
                      '4096},', cat)
        self.assertIn('TK_METHOD_READ, 5, 5,\n     "items", NULL, 0, 7, 0},',
                      cat)
        p = self.gen(body, GEN_PY, head=self.LISTED)
        self.assertEqual(p.returncode, 0, p.stderr)
        tree = ast.parse(self.read("tk/_catalog.py"))
        methods = [n.value for n in tree.body if isinstance(n, ast.Assign)
                   and n.targets[0].id == "METHODS"]  # type: ignore
        self.assertEqual([m[6] for m in ast.literal_eval(methods[0])],
                         [("items", "max_n", 10, 100, 4096),
                          ("items", "", 0, 7, 0)])

    def test_a_wrong_list_is_refused(self) -> None:
        for option, why in (
                ('list: { max_items: 1 }', "list needs field and max_items"),
                ('list: { field: "items" }', "list needs field and max_items"),
                ('list: { field: "one", max_items: 1 }',
                 "list: Rep has no repeated field one"),
                ('list: { field: "items", limit_field: "name", '
                 'default_items: 1, max_items: 1 }',
                 "list: Req has no uint32 field name"),
                ('list: { field: "items", limit_field: "max_n", '
                 'max_items: 1 }',
                 "list: default_items 0 must be given and at most "
                 "max_items 1"),
                ('list: { field: "items", limit_field: "max_n", '
                 'default_items: 2, max_items: 1 }',
                 "list: default_items 2 must be given and at most "
                 "max_items 1"),
                ('list: { field: "items", default_items: 1, max_items: 1 }',
                 "list: default_items is for a list the caller limits")):
            for gen in (GEN_C, GEN_PY):
                with self.subTest(option=option, gen=os.path.basename(gen)):
                    p = self.gen(rpc("Look", "kind: READ, default_timeout_ms: "
                                     "5, ceiling_ms: 5, " + option), gen,
                                 head=self.LISTED)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn("tk.v1.Thing/Look (tk/v1/thing.proto): "
                                  "option (tk.v1.method): " + why, p.stderr)

    # What the catalog keeps of a .proto beyond protobuf-c: comments (the
    # one below holds what a C string must escape), oneof names, maps, and
    # the option (tk.v1.path).
    DOCUMENTED = """syntax = "proto3";
package tk.v1;
import "tk/v1/options.proto";
// A request.
message Req {
  // Where: say "hi" \\ \u00e9 ??)
  string repo = 1 [(tk.v1.path) = PATH_IN_ROOTS];
  string prog = 2 [(tk.v1.path) = PATH_ABSOLUTE];
  map<string, string> env = 3;
  // Either.
  oneof choice {
    bool a = 4;
    string b = 5;
  }
  enum Mode {
    MODE_UNSPECIFIED = 0;
    // Fast.
    FAST = 1;
  }
  Mode mode = 6;
}
message Rep {}
service Thing {
"""

    def test_comments_oneofs_maps_and_paths_reach_the_catalog(self) -> None:
        p = self.gen("  // Looks.\n" + rpc(
            "Look", "kind: READ, default_timeout_ms: 5, ceiling_ms: 5"),
            head=self.DOCUMENTED)
        self.assertEqual(p.returncode, 0, p.stderr)
        cat = self.read("tk/catalog.c")
        for name, text in (
                ("tk.v1.Req", '"A request."'),
                ("tk.v1.Req.repo",
                 '"Where: say \\"hi\\" \\\\ \\303\\251 \\?\\?)"'),
                ("tk.v1.Req.choice", '"Either."'),
                ("tk.v1.Req.Mode.FAST", '"Fast."'),
                ("tk.v1.Thing/Look", '"Looks."')):
            self.assertIn('    {"%s",\n     %s},\n' % (name, text), cat)
        for row in ('{"tk.v1.Req", "repo", NULL, false, TK_PATH_IN_ROOTS}',
                    '{"tk.v1.Req", "prog", NULL, false, TK_PATH_ABSOLUTE}',
                    '{"tk.v1.Req", "env", NULL, true, TK_PATH_NONE}',
                    '{"tk.v1.Req", "a", "choice", false, TK_PATH_NONE}',
                    '{"tk.v1.Req", "b", "choice", false, TK_PATH_NONE}'):
            self.assertIn(row, cat)
        self.assertNotIn('"mode"', cat[cat.index("tk_catalog__fields[]"):])

    def test_the_path_option_is_for_a_string(self) -> None:
        head = self.DOCUMENTED.replace(
            "string prog = 2", "int32 prog = 2")
        p = self.gen(rpc("Look", "kind: READ, default_timeout_ms: 5, "
                         "ceiling_ms: 5"), head=head)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("tk.v1.Req.prog: option (tk.v1.path) is for a string "
                      "field", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
