#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A model of how systemd reads a unit file, as documented in
systemd.syntax(7) ("Quoting"), systemd.unit(5) ("Specifiers"),
systemd.service(5) ("Command lines") and systemd.exec(5) (Environment=).
The fake systemctl uses it to decide what a unit "runs"; the tests use it
to read back what tk rendered.

  sdunit.py argv FILE   prints {"argv": [...], "env": {...}, "warnings": []}
                        for the unit file FILE, as JSON
"""

import json
import re
import sys

ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t", "v": "\v", "\\": "\\", '"': '"', "'": "'", "s": " "}
WHITESPACE = " \t\n\r"


class UnitError(Exception):
    pass


def parse(text):
    """Sections of a unit file: {section: [(key, value, line)]}. Comments
    start with '#' or ';'; a trailing backslash joins the next line (with a
    space); whitespace around keys and values is dropped."""
    sections: dict[str, list] = {}
    current = None
    pending = ""
    for n, raw in enumerate(text.split("\n"), 1):
        line = pending + raw
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            current = sections.setdefault(stripped[1:-1], [])
            continue
        if current is None or "=" not in stripped:
            raise UnitError(f"line {n}: assignment outside a section or "
                            f"without '='")
        key, value = stripped.split("=", 1)
        current.append((key.strip(), value.strip(), n))
    return sections


def specifiers(value, unit_name="", home="/home/user"):
    """Specifier expansion (systemd.unit(5)): "%%" is "%"; the few
    specifiers modelled here are %n (unit name) and %h (home); any other is
    an error, as systemd refuses an unknown specifier."""
    known = {"%": "%", "n": unit_name, "h": home}
    out = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "%":
            if i + 1 >= len(value) or value[i + 1] not in known:
                raise UnitError(f"unknown specifier in {value!r}")
            out.append(known[value[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _unescape(s, i, warnings):
    """One C-style escape starting after the backslash at s[i-1]. Returns
    (text, next index). Unknown escapes are kept as they are, with a
    warning, as systemd's *_and_warn parsers do."""
    if i >= len(s):
        raise UnitError("trailing backslash")
    c = s[i]
    if c in ESCAPES:
        return ESCAPES[c], i + 1
    for prefix, digits, base in (("x", 2, 16), ("u", 4, 16), ("U", 8, 16)):
        if c == prefix:
            hexs = s[i + 1:i + 1 + digits]
            if len(hexs) == digits and re.fullmatch("[0-9a-fA-F]+", hexs):
                return chr(int(hexs, base)), i + 1 + digits
    octs = s[i:i + 3]
    if len(octs) == 3 and re.fullmatch("[0-7]{3}", octs):
        return chr(int(octs, 8)), i + 3
    warnings.append(f"Ignoring unknown escape sequences: \\{c}")
    return "\\" + c, i + 1


def words(line, warnings):
    """extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE) over a whole
    line: words split at unquoted whitespace, '...' and "..." quote (also
    inside a word, as the code does: systemd's test-extract-word.c has
    yay'foo'bar → yayfoobar), C escapes inside and outside quotes.
    Returns [(word, raw)] where raw is the text as written (an unquoted
    lone ';' separates commands)."""
    out: list[tuple[str, str]] = []
    i = 0
    n = len(line)
    while True:
        while i < n and line[i] in WHITESPACE:
            i += 1
        if i >= n:
            return out
        start = i
        word = []
        quote = None
        while i < n:
            c = line[i]
            if quote is None and c in WHITESPACE:
                break
            if c == "\\":
                text, i = _unescape(line, i + 1, warnings)
                word.append(text)
                continue
            if quote is None and c in "'\"":
                quote = c
            elif quote is not None and c == quote:
                quote = None
            else:
                word.append(c)
            i += 1
        if quote is not None:
            raise UnitError(f"unbalanced quote in {line!r}")
        out.append(("".join(word), line[start:i]))


def environment(sections, unit_name="", warnings=None):
    """Environment= of [Service]: each value unquoted into assignments; "$"
    has no special meaning; specifiers are expanded; later wins."""
    warnings = [] if warnings is None else warnings
    env: dict[str, str] = {}
    for key, value, _ in sections.get("Service", []):
        if key != "Environment":
            continue
        if value == "":
            env = {}
            continue
        for word, _ in words(specifiers(value, unit_name), warnings):
            name, sep, val = word.partition("=")
            if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise UnitError(f"invalid environment assignment {word!r}")
            if any(ord(ch) < 32 or ord(ch) == 127 for ch in val):
                raise UnitError(f"non-printable character in {name}")
            env[name] = val
    return env


def _substitute(word, raw, env):
    """replace_env_argv: "$$" is "$"; "${FOO}" anywhere is FOO's value as
    one word; "$FOO" as a whole word is FOO's value split at whitespace."""
    m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
    if m:
        return [w for w, _ in words(env.get(m[1], ""), [])]
    out = []
    i = 0
    while i < len(word):
        if word.startswith("$$", i):
            out.append("$")
            i += 2
        elif word.startswith("${", i) and "}" in word[i:]:
            end = word.index("}", i)
            out.append(env.get(word[i + 2:end], ""))
            i = end + 1
        else:
            out.append(word[i])
            i += 1
    return ["".join(out)]


def exec_start(sections, unit_name="", warnings=None):
    """The argv of the single ExecStart= of [Service] (after specifiers,
    unquoting and variable substitution)."""
    warnings = [] if warnings is None else warnings
    lines = [v for k, v, _ in sections.get("Service", [])
             if k == "ExecStart" and v != ""]
    if len(lines) != 1:
        raise UnitError(f"{len(lines)} ExecStart= lines; a service that is "
                        f"not Type=oneshot needs exactly one")
    env = environment(sections, unit_name, warnings)
    parts = words(specifiers(lines[0], unit_name), warnings)
    if any(raw == ";" for _, raw in parts):
        raise UnitError("more than one command line")
    argv = []
    for word, raw in parts:
        # "\;" is a literal semicolon (systemd.service(5), "Command lines")
        argv += [";"] if raw == "\\;" else _substitute(word, raw, env)
    if not argv or not argv[0].startswith("/"):
        raise UnitError("ExecStart= needs an absolute program path")
    if any(ord(ch) < 32 for ch in argv[0]):
        raise UnitError("control character in the program path")
    return argv


def main(argv):
    if len(argv) != 3 or argv[1] != "argv":
        sys.stderr.write("usage: sdunit.py argv FILE\n")
        return 2
    with open(argv[2], encoding="utf-8") as f:
        text = f.read()
    warnings: list[str] = []
    try:
        sections = parse(text)
        result = {"argv": exec_start(sections, warnings=warnings),
                  "env": environment(sections, warnings=warnings)}
    except UnitError as e:
        sys.stderr.write(f"{argv[2]}: {e}\n")
        return 1
    result["warnings"] = warnings
    json.dump(result, sys.stdout, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
