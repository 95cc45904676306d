# SPDX-License-Identifier: MIT
"""What tools/lint, tools/lint-new and tools/check-suppressions share:
finding the compilation database, choosing the files we own, running
clang-tidy over them in parallel and reading its findings.

Debian's /usr/bin/python3 and the standard library only (no PyPI here).
"""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Optional, Set

# The exit statuses of the three gates.
CLEAN, FINDINGS, CANNOT_RUN = 0, 1, 2

# What we do not own: protoc's output.
NOT_OURS = ("gen/",)

CLANG_TIDY_NAMES = ("clang-tidy-14", "clang-tidy")


class CannotRun(Exception):
    """The gate could not do its job (exit 2), as opposed to a finding."""


def die(tool, exc):
    print(f"{tool}: {exc}", file=sys.stderr)
    sys.exit(CANNOT_RUN)


def git(root, *args, check=True):
    p = subprocess.run(["git", "-C", root, *args], capture_output=True,
                       text=True)
    if check and p.returncode != 0:
        raise CannotRun(f"git {' '.join(args)}: {p.stderr.strip()}")
    return p


def repo_root(start=None):
    start = start or os.getcwd()
    p = subprocess.run(["git", "-C", start, "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CannotRun(f"{start} is not inside a git work tree")
    return p.stdout.strip()


def clang_tidy_binary():
    for name in CLANG_TIDY_NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise CannotRun("clang-tidy not found (tools/install-deps installs it)")


def prepare_build(root, build):
    """Returns the absolute build directory holding compile_commands.json.

    A missing meson build directory is set up the way tools/test sets up
    build/gcc, and built, so that generated headers exist; a directory that
    only holds a compile_commands.json (the tests' small repositories) is
    used as it is.
    """
    bdir = build if os.path.isabs(build) else os.path.join(root, build)
    cdb = os.path.join(bdir, "compile_commands.json")
    if os.path.exists(os.path.join(bdir, "build.ninja")) or not os.path.exists(cdb):
        if not os.path.exists(os.path.join(root, "meson.build")):
            raise CannotRun(f"no {cdb} and no meson.build to make one")
        if not os.path.exists(os.path.join(bdir, "build.ninja")):
            run_quiet(["meson", "setup", bdir, "-Dwerror=true"], root)
        # Generated headers (tests' protobuf fixtures) must exist for the
        # files that include them to parse; nothing else needs building.
        outputs = generated_outputs(bdir, root)
        if outputs:
            run_quiet(["ninja", "-C", bdir] + outputs, root)
    if not os.path.exists(cdb):
        raise CannotRun(f"{cdb} missing")
    return bdir


def generated_outputs(bdir, root):
    """The outputs of the build's custom targets, relative to bdir."""
    p = subprocess.run(["meson", "introspect", "--targets", bdir], cwd=root,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CannotRun(f"meson introspect {bdir} failed: {p.stderr[-400:]}")
    return [os.path.relpath(f, bdir) for t in json.loads(p.stdout)
            if t["type"] == "custom" for f in t["filename"]]


def run_quiet(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:] + p.stderr[-4000:])
        raise CannotRun(f"{' '.join(cmd)} failed")


@dataclass
class Unit:
    """One translation unit of the compilation database."""
    path: str  # relative to the repository root
    entry: dict


def load_units(root, bdir):
    """The translation units we own: tracked by git, not under gen/."""
    with open(os.path.join(bdir, "compile_commands.json")) as f:
        entries = json.load(f)
    tracked = set(git(root, "ls-files", "-z").stdout.split("\0"))
    units: dict[str, Unit] = {}
    for e in entries:
        absf = os.path.normpath(os.path.join(e["directory"], e["file"]))
        rel = os.path.relpath(absf, root)
        if rel in tracked and not rel.startswith(NOT_OURS):
            units.setdefault(rel, Unit(rel, e))
    return [units[k] for k in sorted(units)]


@dataclass
class Finding:
    path: str  # relative to the root when inside it
    line: int
    col: int
    level: str
    message: str
    checks: list
    notes: list = field(default_factory=list)  # (path, line, text)

    def key(self):
        return (self.path, self.line, self.col, self.message)

    def render(self):
        out = [f"{self.path}:{self.line}:{self.col}: {self.level}: "
               f"{self.message} [{','.join(self.checks)}]"]
        out += [f"{p}:{n}: note: {t}" for p, n, t in self.notes]
        return "\n".join(out)


DIAG = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                  r"(?P<level>warning|error|note): (?P<msg>.*?)"
                  r"(?: \[(?P<checks>[A-Za-z0-9_.,-]+)\])?$")


def parse_output(text, root, directory):
    """Findings (with their notes) from clang-tidy's output."""
    findings, cur = [], None
    for raw in text.splitlines():
        m = DIAG.match(raw)
        if not m:
            continue
        path = os.path.normpath(os.path.join(directory, m["path"]))
        if path.startswith(root + os.sep):
            path = os.path.relpath(path, root)
        if m["level"] == "note":
            if cur is not None:
                cur.notes.append((path, int(m["line"]), m["msg"]))
            continue
        checks = (m["checks"] or "clang-diagnostic-error").split(",")
        cur = Finding(path, int(m["line"]), int(m["col"]), m["level"],
                      m["msg"], checks)
        findings.append(cur)
    return findings


@dataclass
class Tidy:
    root: str
    bdir: str
    binary: str = field(default_factory=clang_tidy_binary)
    checks: Optional[str] = None  # overrides .clang-tidy's Checks when set
    vfsoverlay: Optional[str] = None
    _tracked: Set[str] = field(default_factory=set)

    def __post_init__(self):
        self._tracked = set(git(self.root, "ls-files", "-z").stdout.split("\0"))

    def owns(self, path):
        """Whether a finding there is ours: a tracked file, not generated."""
        return path in self._tracked and not path.startswith(NOT_OURS)

    def run_unit(self, unit):
        """Findings of one unit in files we own (its headers included)."""
        cmd = [self.binary, "-p", self.bdir, "--quiet",
               "--header-filter=.*",
               # tkd is compiled by gcc: its warning flags are not all clang's.
               "--extra-arg=-Wno-unknown-warning-option",
               "--extra-arg=-Wno-error"]
        if self.checks:
            cmd.append(f"--checks={self.checks}")
        if self.vfsoverlay:
            cmd.append(f"--vfsoverlay={self.vfsoverlay}")
        cmd.append(os.path.join(self.root, unit.path))
        p = subprocess.run(cmd, capture_output=True, text=True,
                           cwd=self.root)
        findings = parse_output(p.stdout, self.root, unit.entry["directory"])
        findings = [f for f in findings if self.owns(f.path)]
        if p.returncode != 0 and not findings:
            raise CannotRun(f"clang-tidy failed on {unit.path}:\n"
                            f"{p.stdout[-3000:]}{p.stderr[-3000:]}")
        return findings

    def run(self, units, jobs=None):
        """Findings of all units, deduplicated (a header's finding is seen
        by every unit that includes it), sorted by place."""
        jobs = jobs or os.cpu_count() or 2
        seen, out = set(), []
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for findings in pool.map(self.run_unit, units):
                for f in findings:
                    if f.key() not in seen:
                        seen.add(f.key())
                        out.append(f)
        out.sort(key=lambda f: (f.path, f.line, f.col))
        return out
