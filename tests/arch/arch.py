#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The architecture rules of DESIGN.md, checked on the parsed source.

  tests/arch/arch.py [--root DIR] [--build DIR] [--allowlist FILE]
                     [--design FILE]

C is parsed by libclang (Debian's python3-clang-14), with the flags of the
meson build's compile_commands.json where it has the file: rules about
code (which library a file uses, which functions it calls, what a
signature or a public header declares) look at declarations, references,
call expressions and include directives, never at comments or strings.
Only the boundary comment of a header, which is text, is read as text.

Modules. A module is a folder:
  - service/NAME/ is tkd's module NAME; its public header is
    service/NAME/NAME.h. service/main.c, with tkd_*.c and tkd_int.h
    beside it, is tkd's entry point, no module: it may include every
    module's public header and use no library.
  - client/lib/ is libtkclient; its public header is
    client/include/tk/client.h. client/json/ is the JSON codec; its public
    header is client/include/tk/json.h. Any other client/NAME/ with C files
    (client/tkcall/) has client/NAME/NAME.h. client/include/ holds public
    headers and is no module; client/python/ has no C.
  - common/ is no module but the base under both sides (the rule share):
    libtkcommon, whose one header is common/common.h.
  - tests/ and tools/ are no modules: they may use any library and spawn
    processes, but they too reach a module only through its public header.
Any other header in a module folder is internal: its name ends in _int.h
and only files of that folder include it.

Rules (the name before the colon is the one the allowlist uses):
  boundary: every module has its public header, and it opens with a comment
    saying what the module owns, what it may call and what it must never
    do ("Owns"/"owns", "May call"/"may use", "Must never"); a module folder
    has no second public header. common/common.h opens with that comment
    too, and is common/'s one header.
  library: only service/rpc/ and client/lib/ use NNG, only service/git/
    libgit2, only service/orders/ and service/fleet/ libpq, and
    service/pq/, which loads it for them (by include or by reference to
    anything their headers declare).
  process: only service/proc/ calls fork, vfork, clone, the exec family,
    posix_spawn[p], system or popen, or includes <spawn.h>.
  bridge: in tkd (service/), only service/tool/ calls proc_run: a program
    run for a call goes through tool/, the one bridge from a call to a
    process (its bounds into proc_opts, one answer per way a run ends).
  signature: no service module's public header, and no function of a
    service module other than rpc/, mentions an NNG type or includes NNG:
    handlers see the rpc_call handle only.
  include: a file reaches another module only through its public header;
    a service module includes another's only where DESIGN.md's table says
    it may use it (every module may use port/, the calls that differ by
    system, obs/, the process-wide log and metrics, and rpc/, the host
    that hands it its calls). port/ and obs/ are beneath every module:
    they use only what their own rows say, not rpc/ nor each other, so
    that no arrow comes back up to them. Included files
    are resolved as the compiler does, with the build's flags, against
    the directory of the compile command; an include those flags cannot
    resolve fails, and one of a file without a compile command is counted
    and listed, never skipped silently.
  share: tkd and the clients share common/ and nothing else: no file of
    service/ (main.c too) includes a file of client/, none of client/ one
    of service/; and no program or library built in either links or
    compiles what the other side's folder holds (read from the build's
    build.ninja: each link's objects, by the source they are compiled
    from, and its libraries, by the folder that builds them). gen/, the
    contract's generated code, is both sides'. common/ is at the bottom
    of the include graph, arrows only into it: its files include only
    their own folder's, the system's and the build's configuration
    (port_config.h), no other file of the tree (service/, client/, gen/)
    and no library of tk's build (NNG, libgit2, libpq, protobuf-c,
    json-c, mbed TLS, cmocka); its library is built from its own files
    alone.
  public-header: client/include/tk/*.h declare only tk_/TK_ names, and
    every type they mention is their own, a C standard type, or opaque.
  gen-table: a method table of tkd that tools/regen generates,
    gen/tkd/tk/v1/NAME.methods.h (the one of tk/v1/NAME.proto), is included
    only by files of the module that serves NAME's services: service/NAME/
    (the proto service and its folder share a name: tk.v1.Control is
    service/control/'s). Not by another module, not by main.c, tests or
    tools: a second includer could register the same methods.
  gen-include: generated code depends only downward. A file of gen/c/
    (protoc-c's messages, the typed stubs, the C client's catalog)
    includes nothing of the tree but gen/c/ and the client's public
    headers (client/include/tk/: the stubs and the catalog are
    libtkclient's, written against its API); a file of gen/tkd/ (tkd's
    method tables) nothing but gen/c/; beyond the tree, protobuf-c and
    libc. Never a file of service/: the module that serves a service
    makes its table of the generated rows (rpc/'s RPC_METHOD_ROW), not
    the other way round.
  layout: DESIGN.md's Layout (the block after its "## Layout" heading)
    is true of the tree it sits in: every path it names exists (the paths
    of its first column, and those its descriptions name: tests/'s unit/
    is tests/unit/, client/'s client/python/ is spelled from the top);
    every top-level folder is named (not .git, nor one git ignores); an
    entry whose description names folders in it (tests/: unit/, ...)
    names them all; and the module table names every folder of service/
    and no other. The Layout is the one list of the tree: README.md links
    to it (DESIGN.md#layout) and lists no folders of its own (no fenced
    line that starts with one of the tree's folders, as a layout's entry
    does). Checked when DESIGN.md is the tree's own: --design of another
    file checks a tree against that file's module table only.
  print: library code never prints: no file of client/lib/, client/json/
    or common/ calls printf, fprintf, puts, perror or their kin (the err/warn
    family, dprintf, putchar, ...), or names stdout, stderr,
    STDOUT_FILENO or STDERR_FILENO; what a caller should see goes in a
    status, an error buffer or a returned string (snprintf into a buffer
    is fine).
  seam: a test seam (a function named MOD__test_*, a constant MOD__TEST_*)
    is declared in its module's public header, under a comment saying it
    is for tests only, never in an internal one; no code of tkd or of the
    client calls one (tests, fuzzing harnesses and benchmarks do). A
    client module's public header is installed (client/include/tk/) and
    declares none: its seams are in FOLDER/test_seams.h, which is not
    installed, is no second public header, and only its own folder, tests/
    and tools/ include.
  names: a file's name says its job without its folder: no two C files
    (.c, .h) under service/, client/ and common/ share a name, and no
    folder there shares its name with a C file of another place (tool/
    and services/tool.c were two things). A module's own files are not
    another place: service/X/X.c and X.h, and the public header of a
    module of client/ (client/include/tk/json.h, client/json/'s). gen/,
    generated, is not read.
  circle: the files of one module do not call each other in a circle
    (a.c calls b.c, which calls a.c, directly or through others): each
    file stands above the files it uses.
  lines: no source file under client/ is over 600 lines, C (.c, .h),
    Python (.py) or TypeScript (.ts) alike, and no C file under service/
    over 550 (LINE_CAPS): one concern a file, and no room of the client,
    in any of its languages, bigger than the service side's (test_arch
    compares the two largest, largest()). Not counted:
    what a tool generates (a file whose first lines say "generated by"
    and "do not edit", as every file of gen/ does), npm's node_modules/,
    tsc's dist/, Python's __pycache__/, and a linked folder (client/ts/gen
    is gen/ts). An exception is an allowlist entry, as for every rule.

Known exceptions live in tests/arch/allowlist, one a line,
`RULE SUBJECT -- REASON`, where SUBJECT is what the rule's message puts in
[brackets]. An entry that no rule needs any more fails the test, so the
list only shrinks. Exit 0 clean, 1 violations, 2 could not run.
"""

import argparse
import fnmatch
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import clang.cindex as ci

LIBCLANG = ("/usr/lib/llvm-14/lib/libclang-14.so.1",
            "/usr/lib/llvm-14/lib/libclang.so.1",
            "/usr/lib/x86_64-linux-gnu/libclang-14.so.1")

# Which library a header belongs to, by its path (resolved or as spelled).
LIBRARIES = {
    "NNG": re.compile(r"(^|/)nng/"),
    "libgit2": re.compile(r"(^|/)(git2\.h$|git2/)"),
    "libpq": re.compile(r"(^|/)(libpq-fe\.h$|libpq/|postgresql/)"),
}
LIBRARY_USERS = {
    "NNG": ("service/rpc", "client/lib"),
    "libgit2": ("service/git",),
    "libpq": ("service/orders", "service/fleet", "service/pq"),
}
PROCESS_FUNCS = re.compile(r"^(fork|vfork|clone|clone3|system|popen|"
                           r"posix_spawnp?|f?exec(l|lp|le|v|vp|vpe|ve|veat))$")
PROCESS_HEADER = re.compile(r"(^|/)spawn\.h$")
PRINTING_MODULES = ("client/lib", "client/json", "common")
PRINT_FUNCS = re.compile(r"^(v?f?printf|v?dprintf|puts|putchar|perror|"
                         r"psignal|psiginfo|v?(err|errx|warn|warnx)|"
                         r"error|error_at_line)$")
PRINT_NAMES = re.compile(r"^(stdout|stderr|STDOUT_FILENO|STDERR_FILENO)$")
PROCESS_OWNER = "service/proc"
BRIDGE_OWNER = "service/tool"
BRIDGE_FUNCS = re.compile(r"^proc_run$")
GEN_TABLE = re.compile(r"^gen/tkd/tk/v1/(\w+)\.methods\.h$")
# What each part of gen/ may include of the tree (protobuf-c and libc are
# not the tree's); a part not named here, nothing.
GEN_INCLUDES = {
    "gen/c": ("gen/c/", "client/include/tk/"),
    "gen/tkd": ("gen/c/",),
}
HOST = "rpc"  # every service module may use it: it hands them their calls
BASE = "port"  # every service module may use it: what differs by system
OBS = "obs"  # every service module may use it: the log and the metrics
# What every service module may use without its row of DESIGN.md's table
# saying so; the modules beneath them all use only what their rows say.
EVERYONES = (HOST, BASE, OBS)
BENEATH = (BASE, OBS)
CLIENT_PUBLIC = {
    "client/lib": "client/include/tk/client.h",
    "client/json": "client/include/tk/json.h",
}
NOT_CLIENT_MODULES = ("client/include", "client/python")
PUBLIC_DIR = "client/include/tk"
# Where a module whose public header is installed (PUBLIC_DIR's) keeps its
# test seams: FOLDER/SEAMS_HEADER, which meson does not install.
SEAMS_HEADER = "test_seams.h"
# The share rule: what each side's programs and libraries may be built of
# (folders of the tree), and the libraries common/ may not use.
SIDES = {"service": {"service", "common", "gen"},
         "client": {"client", "common", "gen"},
         "common": {"common"}}
COMMON_PUBLIC = "common/common.h"
COMMON_NOT = re.compile(r"(^|/)(nng/|git2\.h$|git2/|libpq-fe\.h$|libpq/|"
                        r"postgresql/|protobuf-c/|json-c/|"
                        r"mbedtls/|psa/|cmocka\.h$)")
C_STANDARD = re.compile(r"/(stddef|stdint|stdbool|stdarg|stdio|time|"
                        r"sys/types|bits/[a-z0-9_-]+|"
                        r"bits/types/[a-z0-9_]+)\.h$")

# The most lines a source file of each top folder may have (rule lines),
# and the files it counts by their ending: the client's Python and
# TypeScript as well as its C.
LINE_CAPS = (("client", 600, (".c", ".h", ".py", ".ts")),
             ("service", 550, (".c", ".h")))
# What the rule lines does not count: npm's packages, tsc's output,
# Python's caches, a rule's fixtures; and what a tool generated.
LINE_SKIP = ("node_modules", "dist", "__pycache__", "fixtures")
LINE_LANGUAGE = {".c": "C", ".h": "C", ".py": "Python", ".ts": "TypeScript"}

REF_KINDS = {ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.TYPE_REF,
             ci.CursorKind.MEMBER_REF_EXPR, ci.CursorKind.MACRO_INSTANTIATION,
             ci.CursorKind.CALL_EXPR}


class CannotRun(Exception):
    """The check could not run (exit 2): no libclang, no module table, an
    allowlist entry that is not `RULE SUBJECT -- REASON`."""


def load_libclang():
    if ci.Config.loaded:
        return
    for path in LIBCLANG:
        if os.path.exists(path):
            ci.Config.set_library_file(path)
            return
    raise CannotRun("libclang 14 not found (tools/install-deps)")


class Module:
    def __init__(self, name, folder, public, side):
        self.name, self.folder, self.public, self.side = (
            name, folder, public, side)

    def __repr__(self):
        return self.folder + "/"


class Violation:
    def __init__(self, rule, where, subject, text):
        self.rule, self.where, self.subject, self.text = (
            rule, where, subject, text)

    def __str__(self):
        return f"{self.where}: {self.rule}: {self.text} [{self.subject}]"


class Tree:
    def __init__(self, root, build, design):
        self.root = os.path.abspath(root)
        self.build = build
        self.design = os.path.abspath(design)
        self.commands = self._compdb()
        self.deps = self._design_table(design)
        self.modules = self._modules()
        self.index = ci.Index.create()
        self.violations = []
        self._tus = {}
        self._dirs = {}  # rel -> the directory its compile command runs in
        self.unresolved = []  # includes of files parsed without a command

    # ---- the tree -------------------------------------------------------

    def rel(self, path):
        """path relative to the root if it is tk's: not outside the tree,
        nor under subprojects/ (a library's, as the system's are: tk's NNG,
        subprojects/nng.wrap)."""
        path = os.path.normpath(path)
        if path.startswith(self.root + os.sep) and not path.startswith(
                os.path.join(self.root, "subprojects") + os.sep):
            return os.path.relpath(path, self.root)
        return None

    def c_files(self, top):
        out = []
        for d, dirs, files in os.walk(os.path.join(self.root, top)):
            dirs[:] = sorted(x for x in dirs if x != "fixtures")
            out += [self.rel(os.path.join(d, f)) for f in sorted(files)
                    if f.endswith((".c", ".h"))]
        return out

    def _compdb(self):
        cmds = {}
        path = os.path.join(self.build or "", "compile_commands.json")
        if self.build and os.path.exists(path):
            with open(path) as f:
                for e in json.load(f):
                    p = os.path.normpath(os.path.join(e["directory"],
                                                      e["file"]))
                    cmds[p] = (e["directory"], e.get("arguments") or
                               shlex.split(e["command"]))
        return cmds

    def _design_table(self, design):
        """{module: set of modules it may use} from DESIGN.md's table."""
        deps = {}
        if not os.path.exists(design):
            raise CannotRun(f"no {design} (--design FILE)")
        with open(design) as f:
            for line in f:
                m = re.match(r"^\|\s*`(\w+)/`\s*\|.*\|(.*)\|\s*$", line)
                if m:
                    deps[m[1]] = set(re.findall(r"`(\w+)/`", m[2]))
        if not deps:
            raise CannotRun(f"no module table in {design}")
        return deps

    def _modules(self):
        mods = []
        sdir = os.path.join(self.root, "service")
        for name in sorted(os.listdir(sdir)) if os.path.isdir(sdir) else []:
            folder = f"service/{name}"
            if os.path.isdir(os.path.join(self.root, folder)):
                mods.append(Module(name, folder, f"{folder}/{name}.h",
                                   "service"))
        cdir = os.path.join(self.root, "client")
        for name in sorted(os.listdir(cdir)) if os.path.isdir(cdir) else []:
            folder = f"client/{name}"
            if (folder in NOT_CLIENT_MODULES or
                    not os.path.isdir(os.path.join(self.root, folder)) or
                    not self.c_files(folder)):
                continue
            public = CLIENT_PUBLIC.get(folder, f"{folder}/{name}.h")
            mods.append(Module(name, folder, public, "client"))
        return mods

    def module_of(self, rel):
        """The module a file belongs to (its folder, or the module whose
        public header it is), or None."""
        for m in self.modules:
            if rel == m.public or rel.startswith(m.folder + "/"):
                return m
        return None

    # ---- parsing --------------------------------------------------------

    def has_command(self, rel):
        """Whether rel is parsed with a compile command of the build (its
        own, or for a header one beside it), not with guessed flags."""
        absf = os.path.join(self.root, rel)
        return absf in self.commands or rel.endswith(".h") and any(
            os.path.dirname(p) == os.path.dirname(absf)
            for p in self.commands)

    def _args(self, rel):
        absf = os.path.join(self.root, rel)
        if absf in self.commands:
            directory, argv = self.commands[absf]
            return directory, clean_args(argv[1:], absf)
        if rel.endswith(".h"):  # a header: the flags of a unit beside it,
            # its own .c first (pg.h needs pg.c's libpq flags, which
            # fixture.c beside it has not)
            here = os.path.dirname(absf)
            own = absf[:-2] + ".c"
            for p, (directory, argv) in sorted(
                    self.commands.items(), key=lambda kv: (kv[0] != own, kv[0])):
                if os.path.dirname(p) == here:
                    return directory, clean_args(argv[1:], p) + [
                        "-x", "c-header"]
        args = ["-std=c11", "-D_GNU_SOURCE"]
        for d in ("", "service", "client/include", "gen/c", "gen/tkd",
                  os.path.dirname(rel)):
            args += ["-I", os.path.join(self.root, d)]
        if self.build:  # what meson writes there: tk/version.h
            args += ["-I", os.path.join(os.path.abspath(self.build),
                                        "client/include")]
        if rel.endswith(".h"):
            args += ["-x", "c-header"]
        return self.root, args

    def path(self, rel, name):
        """The absolute path of a file name libclang reports while parsing
        rel: with the build's relative -I flags (-I../../service) it reports
        names relative to the compile command's directory."""
        return os.path.normpath(os.path.join(self._dirs.get(rel, self.root),
                                             name))

    def parse(self, rel):
        if rel not in self._tus:
            directory, args = self._args(rel)
            self._dirs[rel] = directory
            cwd = os.getcwd()
            os.chdir(directory)  # the database's relative -I flags
            try:
                self._tus[rel] = self.index.parse(
                    os.path.join(self.root, rel),
                    args=args + ["-Wno-unknown-warning-option"],
                    options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
            finally:
                os.chdir(cwd)
        return self._tus[rel]

    def own_cursors(self, rel):
        """Every cursor of the file itself (not of what it includes)."""
        tu = self.parse(rel)
        path = os.path.join(self.root, rel)

        def walk(c):
            for k in c.get_children():
                f = k.location.file
                if f is not None and self.path(rel, f.name) != path:
                    continue
                yield k
                yield from walk(k)
        return walk(tu.cursor)

    def includes(self, rel):
        """(line, spelled name, resolved path or None) of each #include."""
        out = []
        for c in self.parse(rel).cursor.get_children():
            if (c.kind != ci.CursorKind.INCLUSION_DIRECTIVE or
                    c.location.file is None or
                    self.path(rel, c.location.file.name) !=
                    os.path.join(self.root, rel)):
                continue
            try:
                inc = c.get_included_file()
                resolved = self.path(rel, inc.name) if inc else None
            except AssertionError:
                resolved = None
            out.append((c.location.line, c.displayname, resolved))
        return out

    def fail(self, rule, where, subject, text):
        v = Violation(rule, where, subject, text)
        if str(v) not in {str(w) for w in self.violations}:
            self.violations.append(v)


def clean_args(argv, source):
    """A compile command's flags, for libclang: no output, no dependency
    files, no source file."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or os.path.basename(a) == \
                os.path.basename(source):
            continue
        out.append(a)
    return out


def library_of(path):
    for lib, pat in LIBRARIES.items():
        if path and pat.search(path):
            return lib
    return None


def referenced_file(t, rel, c):
    try:
        ref = c.referenced
    except Exception:  # noqa: BLE001 - libclang raises on odd cursors
        return None, None
    if ref is None or ref.location.file is None:
        return None, None
    return ref, t.path(rel, ref.location.file.name)


# ---- the rules ------------------------------------------------------------

BOUNDARY_WORDS = (("owns", r"\bowns?\b"),
                  ("may call", r"\bmay (call|use)\b"),
                  ("must never", r"\bmust never\b"))


def leading_comment(text):
    """The comment a file opens with, after its SPDX line (its licence,
    tests/arch/test_license.py)."""
    text = re.sub(r"^\s*/\* SPDX-License-Identifier: [^*]*\*/", "", text)
    text = text.lstrip()
    if text.startswith("/*"):
        end = text.find("*/")
        return text[:end] if end >= 0 else ""
    lines = []
    for line in text.splitlines():
        if not line.lstrip().startswith("//"):
            break
        lines.append(line)
    return "\n".join(lines)


def boundary_header(t, folder, public):
    """Whether folder has its header public, and it opens with the
    boundary comment; no second header beside it but *_int.h ones."""
    path = os.path.join(t.root, public)
    if not os.path.exists(path):
        return False
    with open(path, errors="replace") as f:
        comment = leading_comment(f.read())
    missing = [w for w, pat in BOUNDARY_WORDS
               if not re.search(pat, comment, re.I)]
    if missing:
        t.fail("boundary", f"{public}:1", public,
               "the header must open with a comment stating the "
               "module's boundary; it does not say: " + ", ".join(missing))
    for rel in t.c_files(folder):
        if (rel.endswith(".h") and rel != public and
                not rel.endswith("_int.h") and
                rel != f"{folder}/{SEAMS_HEADER}"):
            t.fail("boundary", f"{rel}:1", rel,
                   f"a second public header in {folder}/: the "
                   f"module's one header is {public}; an internal "
                   "one is named *_int.h")
    return True


def rule_boundary(t):
    for m in t.modules:
        if not boundary_header(t, m.folder, m.public):
            t.fail("boundary", m.folder + "/", m.folder,
                   f"module {m.name} has no public header {m.public}")
    common = os.path.dirname(COMMON_PUBLIC)
    if os.path.isdir(os.path.join(t.root, common)) and \
            not boundary_header(t, common, COMMON_PUBLIC):
        t.fail("boundary", common + "/", common,
               f"common/ has no header {COMMON_PUBLIC}")
    for rel in t.c_files(PUBLIC_DIR):
        if t.module_of(rel) is None:
            t.fail("boundary", f"{rel}:1", rel,
                   "a public client header that no client module owns "
                   "(tests/arch/arch.py, CLIENT_PUBLIC)")


def module_files(t):
    """The files of tkd's and the client's modules, and tkd's entry point
    (service/main.c and the files beside it)."""
    return [r for r in t.c_files("service") + t.c_files("client")
            if t.module_of(r) is not None or r.startswith("service/")]


def rule_library_and_process(t):
    for rel in module_files(t):
        m = t.module_of(rel)
        folder = m.folder if m else rel
        for line, name, resolved in t.includes(rel):
            lib = library_of(resolved) or library_of(name)
            if lib and folder not in LIBRARY_USERS[lib]:
                t.fail("library", f"{rel}:{line}", f"{folder} {lib}",
                       f"includes <{name}>: only "
                       f"{', '.join(LIBRARY_USERS[lib])} use {lib}")
            if PROCESS_HEADER.search(name) and folder != PROCESS_OWNER:
                t.fail("process", f"{rel}:{line}", f"{folder} spawn.h",
                       f"includes <{name}>: only {PROCESS_OWNER}/ starts "
                       "processes")
        seen = set()
        for c in t.own_cursors(rel):
            if c.kind not in REF_KINDS:
                continue
            ref, path = referenced_file(t, rel, c)
            if ref is None:
                continue
            line = c.location.line
            lib = library_of(path)
            if (lib and folder not in LIBRARY_USERS[lib] and
                    (lib, line) not in seen):
                seen.add((lib, line))
                t.fail("library", f"{rel}:{line}", f"{folder} {lib}",
                       f"uses {ref.spelling} ({lib}): only "
                       f"{', '.join(LIBRARY_USERS[lib])} use {lib}")
            if (c.kind == ci.CursorKind.DECL_REF_EXPR and
                    ref.kind == ci.CursorKind.FUNCTION_DECL and
                    PROCESS_FUNCS.match(ref.spelling) and
                    t.rel(path) is None and folder != PROCESS_OWNER):
                t.fail("process", f"{rel}:{line}",
                       f"{folder} {ref.spelling}",
                       f"calls {ref.spelling}: only {PROCESS_OWNER}/ "
                       "starts processes")


def rule_bridge(t):
    for rel in module_files(t):
        if not rel.startswith("service/"):
            continue
        m = t.module_of(rel)
        folder = m.folder if m else rel
        if folder in (BRIDGE_OWNER, PROCESS_OWNER):
            continue
        for c in t.own_cursors(rel):
            if c.kind != ci.CursorKind.DECL_REF_EXPR:
                continue
            ref, path = referenced_file(t, rel, c)
            if (ref is None or ref.kind != ci.CursorKind.FUNCTION_DECL or
                    not BRIDGE_FUNCS.match(ref.spelling) or
                    t.rel(path) is None):
                continue
            t.fail("bridge", f"{rel}:{c.location.line}",
                   f"{folder} {ref.spelling}",
                   f"uses {ref.spelling}: only {BRIDGE_OWNER}/ runs a "
                   "program for a call (tool_run, tool_try)")


def type_libraries(t, ty, depth=0):
    """The libraries whose declarations a type mentions."""
    found: set[str] = set()
    if depth > 20:
        return found
    k = ty.kind
    if k == ci.TypeKind.POINTER:
        return type_libraries(t, ty.get_pointee(), depth + 1)
    if k in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
             ci.TypeKind.VARIABLEARRAY):
        return type_libraries(t, ty.element_type, depth + 1)
    if k == ci.TypeKind.FUNCTIONPROTO:
        for a in [ty.get_result(), *ty.argument_types()]:
            found |= type_libraries(t, a, depth + 1)
        return found
    if k == ci.TypeKind.ELABORATED:
        return type_libraries(t, ty.get_named_type(), depth + 1)
    decl = ty.get_declaration()
    if decl is not None and decl.location.file is not None:
        lib = library_of(os.path.normpath(decl.location.file.name))
        if lib:
            found.add(lib)
        if k == ci.TypeKind.TYPEDEF:
            found |= type_libraries(t, decl.underlying_typedef_type,
                                    depth + 1)
    return found


def signature_types(c):
    """The types a declaration shows: a function's result and parameters,
    a typedef's or a field's type."""
    if c.kind == ci.CursorKind.FUNCTION_DECL:
        return [c.result_type] + [a.type for a in c.get_arguments()]
    if c.kind in (ci.CursorKind.TYPEDEF_DECL, ci.CursorKind.FIELD_DECL):
        return [c.underlying_typedef_type
                if c.kind == ci.CursorKind.TYPEDEF_DECL else c.type]
    return []


def rule_signature(t):
    for m in t.modules:
        if m.side != "service":
            continue
        files = [m.public] if m.name == HOST else t.c_files(m.folder)
        for rel in files:
            if not os.path.exists(os.path.join(t.root, rel)):
                continue
            for line, name, resolved in t.includes(rel):
                if rel == m.public and "NNG" in {library_of(resolved),
                                                 library_of(name)}:
                    t.fail("signature", f"{rel}:{line}", rel,
                           f"a module's public header includes <{name}>: "
                           "every service would see NNG")
            for c in t.own_cursors(rel):
                for ty in signature_types(c):
                    if "NNG" in type_libraries(t, ty):
                        t.fail("signature", f"{rel}:{c.location.line}",
                               f"{rel} {c.spelling}",
                               f"{c.spelling} mentions an NNG type "
                               f"({ty.spelling}): handlers see the "
                               "rpc_call handle only")


def allowed_include(t, src_mod, dst_mod, rel, target):
    """None, or why src may not include target (a file of dst_mod)."""
    if src_mod is dst_mod:
        return None
    if (target == f"{dst_mod.folder}/{SEAMS_HEADER}" and
            top(rel) in ("tests", "tools")):
        return None  # the seams, for tests and benchmarks
    if target != dst_mod.public:
        return (f"{target} is internal to {dst_mod.folder}/; include "
                f"{dst_mod.public}")
    if src_mod is None:  # tkd's main.c, tests/, tools/
        return None
    if src_mod.side != dst_mod.side:
        return None  # from one side to the other: the rule share's
    if src_mod.side != "service":
        return None
    given = t.deps.get(src_mod.name, set())
    if src_mod.name in BENEATH:
        if dst_mod.name in given:
            return None
        uses = ", ".join(sorted(a + "/" for a in given))
        return (f"{src_mod.name}/ is beneath every module and may use "
                f"{'only ' + uses if uses else 'none of them'} (DESIGN.md), "
                f"not {dst_mod.name}/")
    if dst_mod.name in EVERYONES or dst_mod.name in given:
        return None
    allowed = sorted(given | set(EVERYONES))
    return (f"{src_mod.name}/ may use only "
            f"{', '.join(a + '/' for a in allowed)} (DESIGN.md), "
            f"not {dst_mod.name}/")


def resolve_quoted(t, rel, name, resolved):
    if resolved:
        return t.rel(resolved)
    for base in (os.path.dirname(rel), "", "service", "client/include"):
        p = os.path.normpath(os.path.join(t.root, base, name))
        if os.path.exists(p):
            return t.rel(p)
    return None


def cannot_resolve(t, rule, rel, line, name):
    """Never skip silently what cannot be checked. With the build's flags
    the compiler finds every include, so one not found is a broken flag
    and fails; with guessed flags (no --build, or no command for the file)
    it is counted."""
    if t.has_command(rel):
        t.fail(rule, f"{rel}:{line}", f"{rel} {name}",
               f"cannot resolve #include {name} with the build's flags, so "
               "the rule cannot check it")
    else:
        t.unresolved.append(f"{rel}:{line}: {name}")


def rule_include(t):
    files = (t.c_files("service") + t.c_files("client") +
             t.c_files("tests") + t.c_files("tools"))
    for rel in files:
        src_mod = t.module_of(rel)
        for line, name, resolved in t.includes(rel):
            if resolved and t.rel(resolved) is None:
                continue  # a system or library header: not the tree's
            target = resolve_quoted(t, rel, name, resolved)
            if target is None:
                cannot_resolve(t, "include", rel, line, name)
                continue
            dst_mod = t.module_of(target)
            if dst_mod is None:
                continue
            why = allowed_include(t, src_mod, dst_mod, rel, target)
            if why:
                t.fail("include", f"{rel}:{line}", f"{rel} {target}", why)


def top(rel):
    return rel.split("/", 1)[0] if rel else None


def in_build(t, path):
    """Whether path lies in the build directory (port_config.h, what the
    build generates), which may sit inside the tree."""
    b = os.path.abspath(t.build) if t.build else None
    return b is not None and os.path.normpath(path).startswith(b + os.sep)


def rule_share(t):
    share_sides(t)
    share_common(t)
    share_links(t)


def share_sides(t):
    """No file of service/ includes one of client/, nor the reverse."""
    for rel in t.c_files("service") + t.c_files("client"):
        here = top(rel)
        for line, name, resolved in t.includes(rel):
            if resolved and (t.rel(resolved) is None or
                             in_build(t, resolved)):
                continue  # the system's, a library's, the build's
            target = resolve_quoted(t, rel, name, resolved)
            if top(target) in ("service", "client") and top(target) != here:
                t.fail("share", f"{rel}:{line}", f"{rel} {target}",
                       f"{here}/ includes {target}: tkd and the clients "
                       "share common/ and nothing else")


def share_common(t):
    """common/ is at the bottom of the include graph: its files include
    their own folder's, the system's and the build's, nothing above."""
    for rel in t.c_files("common"):
        for line, name, resolved in t.includes(rel):
            if COMMON_NOT.search(name) or (resolved and
                                           COMMON_NOT.search(resolved)):
                t.fail("share", f"{rel}:{line}", f"{rel} {name}",
                       f"includes <{name}>, a library's: common/ uses "
                       "libc only")
                continue
            if resolved and (t.rel(resolved) is None or
                             in_build(t, resolved)):
                continue  # the system's, the build's (port_config.h)
            target = resolve_quoted(t, rel, name, resolved)
            if target is None:
                cannot_resolve(t, "share", rel, line, name)
            elif top(target) != "common":
                t.fail("share", f"{rel}:{line}", f"{rel} {target}",
                       f"includes {target}: common/ is at the bottom, "
                       "arrows only into it; it includes nothing of tk's "
                       "but its own")


def ninja_builds(build):
    """(outputs, rule, inputs) of each build statement of build.ninja (the
    explicit and implicit inputs, relative to the build directory as
    written), or [] without one."""
    path = os.path.join(build or "", "build.ninja")
    if not build or not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        text = f.read().replace("$\n", " ")
    for line in text.splitlines():
        if not line.startswith("build "):
            continue
        line = line[6:].replace("$ ", "\0").replace("$:", "\1")
        head, _, rest = line.partition(":")
        words = [w.replace("\0", " ").replace("\1", ":")
                 for w in rest.split()]
        if not words:
            continue
        ins = words[1:]
        if "||" in ins:
            ins = ins[:ins.index("||")]
        out.append(([w for w in head.split() if w != "|"], words[0],
                    [w for w in ins if w != "|"]))
    return out


def share_links(t):
    """What each program and library of service/, client/ and common/ is
    built of (build.ninja): the sources its objects are compiled from and
    the libraries of the build it links stay on its side."""
    builds = ninja_builds(t.build)
    source = {}  # object -> the tree's file it is compiled from
    for outs, rule, ins in builds:
        if rule.endswith("_COMPILER") and outs and ins:
            source[outs[0]] = t.rel(os.path.join(os.path.abspath(t.build),
                                                 ins[0]))
    for outs, rule, ins in builds:
        if not rule.endswith("LINKER") or not outs:
            continue
        side = top(outs[0])
        if side not in SIDES:
            continue
        for i in ins:
            if i in source:
                what = source[i]
            elif os.path.isabs(i) or not i.endswith((".a", ".so")) and \
                    ".so." not in i or i.startswith("subprojects/"):
                continue  # the system's libraries, a subproject's (tk's
                # NNG); what is not code
            else:
                what = i  # a library of this build: the folder building it
            if what is None or top(what) in SIDES[side]:
                continue
            allowed = ", ".join(sorted(x + "/" for x in SIDES[side]))
            t.fail("share", outs[0], f"{outs[0]} {what}",
                   f"{outs[0]} is built of {what}: what {side}/ builds "
                   f"uses only {allowed} (tkd and the clients share "
                   "common/ and nothing else)")


def rule_gen_table(t):
    files = (t.c_files("service") + t.c_files("client") +
             t.c_files("tests") + t.c_files("tools"))
    for rel in files:
        mod = t.module_of(rel)
        for line, name, resolved in t.includes(rel):
            target = t.rel(resolved) if resolved else None
            if target is None and os.path.exists(
                    os.path.join(t.root, "gen/tkd", name)):
                target = os.path.normpath(os.path.join("gen/tkd", name))
            m = GEN_TABLE.match(target or "")
            if not m:
                continue
            owner = "service/" + m[1]
            if mod is None or mod.folder != owner:
                t.fail("gen-table", f"{rel}:{line}", f"{rel} {target}",
                       f"includes {target}, tkd's method table of "
                       f"tk/v1/{m[1]}.proto: only {owner}/, which serves "
                       "it, includes it")


def rule_gen_include(t):
    for rel in t.c_files("gen"):
        part = "/".join(rel.split("/")[:2])
        allowed = GEN_INCLUDES.get(part, ())
        for line, name, resolved in t.includes(rel):
            if resolved and t.rel(resolved) is None:
                continue  # protobuf-c, libc
            target = resolve_quoted(t, rel, name, resolved)
            if target is not None and target.startswith(allowed):
                continue
            what = target or f"{name} (not found)"
            t.fail("gen-include", f"{rel}:{line}", f"{rel} {what}",
                   f"generated code includes {what}: {part}/ includes "
                   f"nothing of the tree but "
                   f"{', '.join(allowed) or 'nothing'}")


def rule_public_header(t):
    for rel in t.c_files(PUBLIC_DIR):
        if not rel.endswith(".h"):
            continue
        path = os.path.join(t.root, rel)
        with open(path, errors="replace") as f:
            # libclang places the compiler's predefined macros in the main
            # file: only the file's own #defines are its names.
            defined = set(re.findall(r"^\s*#\s*define\s+(\w+)", f.read(),
                                     re.M))
        for c in t.own_cursors(rel):
            kind = c.kind
            if kind == ci.CursorKind.MACRO_DEFINITION and \
                    c.spelling not in defined:
                continue
            if kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.VAR_DECL,
                        ci.CursorKind.TYPEDEF_DECL,
                        ci.CursorKind.ENUM_CONSTANT_DECL,
                        ci.CursorKind.MACRO_DEFINITION) or (
                    kind in (ci.CursorKind.STRUCT_DECL,
                             ci.CursorKind.UNION_DECL,
                             ci.CursorKind.ENUM_DECL) and c.spelling and
                    not c.is_anonymous()):
                if c.semantic_parent is not None and \
                        c.semantic_parent.kind in (
                            ci.CursorKind.STRUCT_DECL,
                            ci.CursorKind.UNION_DECL):
                    continue  # a field's name is not a global name
                if not re.match(r"^(tk_|TK_)", c.spelling):
                    t.fail("public-header", f"{rel}:{c.location.line}",
                           f"{rel} {c.spelling}",
                           f"declares {c.spelling}: a public client "
                           "header declares tk_/TK_ names only")
            for ty in signature_types(c):
                for name in foreign_types(t, ty, path):
                    t.fail("public-header", f"{rel}:{c.location.line}",
                           name, f"{c.spelling} shows the type {name}, "
                           "which is neither tk's own, a C standard type, "
                           "nor opaque")


def foreign_types(t, ty, header, depth=0):
    """Names of the non-opaque types declared outside the header and the C
    standard headers that a type shows."""
    out: set[str] = set()
    if depth > 20:
        return out
    k = ty.kind
    if k == ci.TypeKind.POINTER:
        pointee = ty.get_pointee()
        decl = pointee.get_declaration()
        # A pointer to an incomplete struct is an opaque handle.
        if decl.kind == ci.CursorKind.STRUCT_DECL and \
                decl.get_definition() is None:
            return out
        return foreign_types(t, pointee, header, depth + 1)
    if k in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        return foreign_types(t, ty.element_type, header, depth + 1)
    if k == ci.TypeKind.FUNCTIONPROTO:
        for a in [ty.get_result(), *ty.argument_types()]:
            out |= foreign_types(t, a, header, depth + 1)
        return out
    if k == ci.TypeKind.ELABORATED:
        return foreign_types(t, ty.get_named_type(), header, depth + 1)
    decl = ty.get_declaration()
    if decl is None or decl.location.file is None:
        return out  # a builtin type
    where = os.path.normpath(decl.location.file.name)
    if where == header or C_STANDARD.search(where) or \
            "/clang/" in where and where.endswith(("stddef.h", "stdbool.h",
                                                   "stdint.h", "stdarg.h")):
        return out
    out.add(decl.spelling or ty.spelling)
    return out


def rule_print(t):
    for folder in PRINTING_MODULES:
        for rel in t.c_files(folder):
            seen = set()
            for c in t.own_cursors(rel):
                name = None
                if c.kind == ci.CursorKind.MACRO_INSTANTIATION:
                    if PRINT_NAMES.match(c.spelling):
                        name = c.spelling
                elif c.kind == ci.CursorKind.DECL_REF_EXPR:
                    ref, path = referenced_file(t, rel, c)
                    if ref is not None and t.rel(path) is None and (
                            (ref.kind == ci.CursorKind.FUNCTION_DECL and
                             PRINT_FUNCS.match(ref.spelling)) or
                            (ref.kind == ci.CursorKind.VAR_DECL and
                             PRINT_NAMES.match(ref.spelling))):
                        name = ref.spelling
                line = c.location.line
                if name is None or (name, line) in seen:
                    continue
                seen.add((name, line))
                t.fail("print", f"{rel}:{line}", f"{folder} {name}",
                       f"uses {name}: library code never prints; report "
                       "through a status, an error buffer or a returned "
                       "string")


SEAM_FUNC = re.compile(r"^[a-z][a-z0-9_]*__test_")
SEAM_CONST = re.compile(r"^[A-Z][A-Z0-9_]*__TEST_")


def is_seam(c):
    return ((c.kind in (ci.CursorKind.FUNCTION_DECL,
                        ci.CursorKind.TYPEDEF_DECL) and
             SEAM_FUNC.match(c.spelling)) or
            (c.kind == ci.CursorKind.ENUM_CONSTANT_DECL and
             SEAM_CONST.match(c.spelling)))


def rule_seam(t):
    for rel in t.c_files(PUBLIC_DIR):
        if not rel.endswith(".h"):
            continue
        m = t.module_of(rel)
        home = f"{m.folder}/{SEAMS_HEADER}" if m else SEAMS_HEADER
        for c in t.own_cursors(rel):
            if is_seam(c):
                t.fail("seam", f"{rel}:{c.location.line}",
                       f"{rel} {c.spelling}",
                       f"{c.spelling} is a test seam in an installed "
                       f"header: a program never calls it; declare it in "
                       f"{home}, which is not installed")
    for rel in module_files(t):
        if rel.endswith("_int.h"):
            for c in t.own_cursors(rel):
                if is_seam(c) and c.kind != ci.CursorKind.TYPEDEF_DECL:
                    t.fail("seam", f"{rel}:{c.location.line}",
                           f"{rel} {c.spelling}",
                           f"{c.spelling} is a test seam in an internal "
                           "header: seams live in the module's public "
                           "header, under a comment saying they are for "
                           "tests only")
        if rel.endswith(".h"):
            continue
        for c in t.own_cursors(rel):
            if c.kind != ci.CursorKind.DECL_REF_EXPR:
                continue
            ref, _ = referenced_file(t, rel, c)
            if (ref is not None and ref.kind == ci.CursorKind.FUNCTION_DECL
                    and SEAM_FUNC.match(ref.spelling)):
                t.fail("seam", f"{rel}:{c.location.line}",
                       f"{rel} {ref.spelling}",
                       f"calls {ref.spelling}, a test seam: tkd and the "
                       "client never do (tests, harnesses and benchmarks "
                       "call seams)")


NAMED_TOPS = ("service", "client", "common")


def subfolders(root, top):
    """Every folder under top (paths from root, with a trailing /) but
    those git ignores, fixtures/ and symbolic links (client/ts/gen/ is
    gen/ts/)."""
    out: list[str] = []
    stack = [top + "/"]
    while stack:
        for d in folders(root, stack.pop()):
            if (os.path.basename(d.rstrip("/")) != "fixtures" and
                    not os.path.islink(os.path.join(root, d.rstrip("/")))):
                out.append(d)
                stack.append(d)
    return sorted(out)


def rule_names(t):
    files = [rel for top in NAMED_TOPS for rel in t.c_files(top)]
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(os.path.basename(rel), []).append(rel)
    for name, rels in sorted(by_name.items()):
        if len(rels) > 1:
            t.fail("names", rels[0], name,
                   f"{len(rels)} files are named {name} ({', '.join(rels)}): "
                   "give each a name that says its job without its folder")
    for top in NAMED_TOPS:
        if not os.path.isdir(os.path.join(t.root, top)):
            continue
        for folder in subfolders(t.root, top):
            name = os.path.basename(folder.rstrip("/"))
            own = t.module_of(folder)
            own_public = (own.public if own and own.folder + "/" == folder
                          else None)
            clash = [rel for rel in files
                     if os.path.splitext(os.path.basename(rel))[0] == name and
                     os.path.dirname(rel) + "/" != folder and
                     rel != own_public]
            if clash:
                t.fail("names", folder, folder,
                       f"the folder {name}/ shares its name with "
                       f"{', '.join(clash)}: give one of them a name that "
                       "says which is which")


def circles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def rule_circle(t):
    for m in t.modules:
        files = [r for r in t.c_files(m.folder) if r.endswith(".c")]
        defined = {}
        for rel in files:
            for c in t.own_cursors(rel):
                if (c.kind == ci.CursorKind.FUNCTION_DECL and
                        c.is_definition() and
                        c.linkage == ci.LinkageKind.EXTERNAL):
                    defined[c.spelling] = rel
        edges: dict[str, set[str]] = {}
        names: dict[tuple[str, str], set[str]] = {}
        for rel in files:
            for c in t.own_cursors(rel):
                if c.kind != ci.CursorKind.DECL_REF_EXPR:
                    continue
                ref, _ = referenced_file(t, rel, c)
                if ref is None or ref.kind != ci.CursorKind.FUNCTION_DECL:
                    continue
                dst = defined.get(ref.spelling)
                if dst is None or dst == rel:
                    continue
                edges.setdefault(rel, set()).add(dst)
                names.setdefault((rel, dst), set()).add(ref.spelling)
        for comp in circles(edges):
            ties = "; ".join(
                f"{a} -> {b} ({', '.join(sorted(names[(a, b)]))})"
                for a in comp for b in sorted(edges.get(a, ()))
                if b in comp)
            t.fail("circle", f"{m.folder}/", " ".join(comp),
                   f"files that call each other in a circle: {ties}; "
                   "each file calls only files beneath it")


def line_count(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def generated(path):
    """Whether a file's first lines say a tool generated it and it is not
    to be edited (tests/gen holds every file of gen/ to saying so)."""
    with open(path, "rb") as f:
        head = b"".join(f.readline() for _ in range(3)).decode(
            "utf-8", "replace")
    return bool(re.search(r"generated by \S", head, re.I)
                and re.search(r"do not edit", head, re.I))


def line_files(t, top, endings):
    """The files of top the rule lines counts: those whose names end in
    endings, outside LINE_SKIP's folders and linked folders (os.walk does
    not follow a link), and not generated."""
    out = []
    for d, dirs, files in os.walk(os.path.join(t.root, top)):
        dirs[:] = sorted(x for x in dirs if x not in LINE_SKIP)
        out += [t.rel(os.path.join(d, f)) for f in sorted(files)
                if f.endswith(endings)
                and not generated(os.path.join(d, f))]
    return out


def largest(root, top):
    """(lines, path) of the largest file of top (client or service) that
    the rule lines counts, by LINE_CAPS's endings; (0, None) if none. The
    issue's bound beside the caps, "no room of the client bigger than the
    service side's", compares the two (test_arch holds the tree to it)."""
    endings = next(e for t, _, e in LINE_CAPS if t == top)
    tree = Tree.__new__(Tree)  # line_files reads only root and rel
    tree.root = os.path.abspath(root)
    return max(((line_count(os.path.join(tree.root, rel)), rel)
                for rel in line_files(tree, top, endings)),
               default=(0, None))


def rule_lines(t):
    for top, cap, endings in LINE_CAPS:
        for rel in line_files(t, top, endings):
            n = line_count(os.path.join(t.root, rel))
            if n > cap:
                kind = LINE_LANGUAGE[os.path.splitext(rel)[1]]
                t.fail("lines", f"{rel}:{cap + 1}", rel,
                       f"{n} lines, over the {cap} a {kind} file of {top}/ "
                       "may have: split it along its sections, each file "
                       "above those it calls")


def layout_block(path):
    """[(line number, line)] of the first fenced block after "## Layout",
    or None."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines)
                  if re.match(r"^##\s+Layout\s*$", line)), None)
    if start is None:
        return None
    fence = next((i for i in range(start + 1, len(lines))
                  if lines[i].startswith("```")), None)
    if fence is None:
        return None
    out: list[tuple[int, str]] = []
    for i in range(fence + 1, len(lines)):
        if lines[i].startswith("```"):
            return out
        out.append((i + 1, lines[i]))
    return None


def layout_entries(block):
    """[(line, entry path, [paths its description names])]: an entry line
    starts in the first column with paths two spaces apart; the first field
    with a space in it begins the description, which goes on in the
    indented lines below."""
    entries = []
    for n, line in block:
        if not line.strip():
            continue
        paths: list[str] = []
        if line[0].isspace():
            fields = [line.strip()]
        else:
            fields = re.split(r"\s{2,}", line.strip())
            while fields and " " not in fields[0]:
                paths.append(fields.pop(0))
            entries += [[n, p, []] for p in paths]
        named = re.findall(r"(?<![\w./-])((?:[\w.-]+/)+[\w.*-]*)",
                           " ".join(fields))
        if entries:
            entries[-1][2] += [(n, x) for x in named]
    return entries


def folders(root, under=""):
    """The folders in root/under (paths from root, with a trailing /) but
    .git and those git ignores (git check-ignore; outside a git work tree,
    the one-name patterns of the tree's .gitignore)."""
    here = os.path.join(root, under)
    names = sorted(d + "/" for d in os.listdir(here)
                   if d != ".git" and os.path.isdir(os.path.join(here, d)))
    rels = [under + d for d in names]
    if not rels:
        return []
    try:
        p = subprocess.run(["git", "-C", root, "check-ignore", "--"] + rels,
                           capture_output=True, text=True)
        if p.returncode in (0, 1):
            ignored = set(p.stdout.splitlines())
            return [r for r in rels if r not in ignored]
    except OSError:
        pass
    pats = []
    gi = os.path.join(root, ".gitignore")
    if os.path.exists(gi):
        with open(gi) as f:
            pats = [x.strip().strip("/") for x in f
                    if x.strip() and not x.startswith(("#", "!")) and
                    "/" not in x.strip().strip("/")]
    return [under + d for d in names
            if not any(fnmatch.fnmatch(d.rstrip("/"), p) for p in pats)]


def rule_layout(t):
    design = os.path.join(t.root, "DESIGN.md")
    if t.design != design:
        return  # another tree's DESIGN.md: its layout is not this tree's
    block = layout_block(design)
    if block is None:
        t.fail("layout", "DESIGN.md:1", "DESIGN.md",
               'no "## Layout" heading followed by a ``` block of the tree')
        return
    named = set()  # every path the block names, and the folders above
    listing: dict[str, int] = {}  # entry folder -> its line, where it
    # names folders in it
    for n, entry, described in layout_entries(block):
        paths = [(n, entry)]
        for dn, x in described:
            # client/python/ under client/ is spelled from the top;
            # unit/ under tests/ is tests/unit/.
            inside = entry.endswith("/") and not x.startswith(
                entry.split("/")[0] + "/")
            paths.append((dn, entry + x if inside else x))
            if x.endswith("/") and entry.endswith("/"):
                listing.setdefault(entry, n)
        for dn, path in paths:
            parts = path.split("/")
            named |= {"/".join(parts[:i]) + "/" for i in range(1, len(parts))}
            if not glob.glob(os.path.join(t.root, path)):
                t.fail("layout", f"DESIGN.md:{dn}", path,
                       f"the Layout names {path}, which is not in the tree")
    for d in folders(t.root):
        if d not in named:
            t.fail("layout", d, d, "a top-level folder that DESIGN.md's "
                   "Layout does not name")
    for entry, n in sorted(listing.items()):
        if not os.path.isdir(os.path.join(t.root, entry)):
            continue
        for d in folders(t.root, entry):
            if d not in named:
                t.fail("layout", d, d, f"the Layout lists the folders of "
                       f"{entry} (DESIGN.md:{n}) but not this one")
    sdir = os.path.join(t.root, "service")
    real = {d for d in (os.listdir(sdir) if os.path.isdir(sdir) else [])
            if os.path.isdir(os.path.join(sdir, d))}
    for d in sorted(real - set(t.deps)):
        t.fail("layout", f"service/{d}/", f"service/{d}/",
               "a module of tkd that DESIGN.md's module table does not "
               "name")
    with open(design) as f:
        rows = {m[1]: n for n, line in enumerate(f, 1)
                for m in [re.match(r"^\|\s*`(\w+)/`\s*\|", line)] if m}
    for d in sorted(set(t.deps) - real):
        t.fail("layout", f"DESIGN.md:{rows.get(d, 1)}", f"service/{d}/",
               f"the module table names {d}/, which is no folder of "
               "service/")
    readme_layout(t, named)


def readme_layout(t, named):
    """README.md names the Layout by a link and does not repeat it."""
    path = os.path.join(t.root, "README.md")
    if not os.path.exists(path):
        return
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    if not any("](DESIGN.md#layout)" in line for line in lines):
        t.fail("layout", "README.md:1", "README.md",
               "README.md does not link to DESIGN.md's Layout "
               "(DESIGN.md#layout), the one list of the tree")
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"^((?:[\w.-]+/)+)\s{2,}\S", line) if fenced else None
        if m and m[1].split("/")[0] + "/" in named:
            t.fail("layout", f"README.md:{n}", "README.md",
                   f"README.md lists {m[1]} as a layout does: link to "
                   "DESIGN.md#layout instead of repeating it")


RULES = (rule_boundary, rule_library_and_process, rule_bridge,
         rule_signature, rule_include, rule_share, rule_gen_table,
         rule_gen_include, rule_public_header, rule_print, rule_seam,
         rule_circle, rule_lines, rule_layout, rule_names)


def read_allowlist(path):
    entries: list[tuple[str, str, str, str]] = []
    if not path or not os.path.exists(path):
        return entries
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(\S+)\s+(.+?)\s+--\s+(\S.*)$", line)
            if not m:
                raise CannotRun(f"{path}:{n}: want `RULE SUBJECT -- REASON`: "
                                "every exception says why")
            entries.append((m[1], m[2], m[3], f"{path}:{n}"))
    return entries


def check(root, build=None, allowlist=None, design=None, unresolved=None):
    """(violations not allowed, allowlist entries no longer needed); the
    includes that files without a compile command left unresolved, which
    the include rule could not check, are added to the list unresolved."""
    entries = read_allowlist(allowlist)
    load_libclang()
    t = Tree(root, build, design or os.path.join(root, "DESIGN.md"))
    for rule in RULES:
        rule(t)
    if unresolved is not None:
        unresolved += t.unresolved
    used: set[str] = set()
    left = []
    for v in t.violations:
        hit = [e for e in entries if e[0] == v.rule and e[1] == v.subject]
        if hit:
            used.update(e[3] for e in hit)
        else:
            left.append(v)
    unused = [e for e in entries if e[3] not in used]
    return left, unused


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        prog="tests/arch/arch.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--build")
    ap.add_argument("--allowlist", default=os.path.join(here, "allowlist"))
    ap.add_argument("--design")
    args = ap.parse_args()
    unresolved: list[str] = []
    try:
        violations, unused = check(args.root, args.build, args.allowlist,
                                   args.design, unresolved)
    except CannotRun as e:
        print(f"arch: {e}", file=sys.stderr)
        return 2
    for v in violations:
        print(v)
    for entry in unused:
        print(f"{entry[3]}: allowlist entry no longer needed: {entry[0]} "
              f"{entry[1]} (delete it: the list only shrinks)")
    if unresolved:
        print(f"arch: {len(unresolved)} include(s) not resolved, so not "
              "checked, in files without a compile command (--build DIR "
              "gives them the build's flags):\n  " + "\n  ".join(unresolved),
              file=sys.stderr)
    print(f"arch: {len(violations)} violation(s), {len(unused)} stale "
          "allowlist entr(y/ies)", file=sys.stderr)
    return 1 if violations or unused else 0


if __name__ == "__main__":
    sys.exit(main())
