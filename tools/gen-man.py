#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes a man page from a program's --help, so that the two never say
different things (meson runs it at build time; meson install installs the
page).

  gen-man.py OUT NAME SECTION SUMMARY VERSION PROGRAM [ARG...] [-- MORE...]

The page: NAME (NAME - SUMMARY), SYNOPSIS (the help's usage lines), then
the rest of `PROGRAM ARG... --help`, each paragraph as it is printed
(preformatted: the help is laid out for 80 columns already); a line of its
own that ends in ':' ("options:", "exit status:") starts a section. After
`--`, MORE is another command line whose --help becomes one more section
(tkd install). SEE ALSO names the other pages of tk.
"""

import re
import subprocess
import sys

SEE_ALSO = {"tkcall": "tkd(8)", "tkd": "tkcall(1)"}


def escape(line):
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def help_text(argv):
    out = subprocess.run(argv + ["--help"], check=True, capture_output=True,
                         text=True)
    return out.stdout.rstrip("\n").split("\n")


def body(lines, first_section):
    """roff of help lines after the usage block."""
    out, section = [], first_section
    out.append(".SH %s\n.nf\n" % section)
    for line in lines:
        heading = re.fullmatch(r"([A-Za-z][A-Za-z ]*):", line)
        if heading:
            out.append(".fi\n.SH %s\n.nf\n" % heading.group(1).upper())
            continue
        out.append(escape(line) + "\n")
    out.append(".fi\n")
    return out


def split_usage(lines):
    """The usage lines (up to the first blank line), and the rest."""
    for i, line in enumerate(lines):
        if not line.strip():
            return lines[:i], lines[i + 1:]
    return lines, []


def main():
    if len(sys.argv) < 7:
        sys.stderr.write(__doc__)
        return 2
    out_path, name, section, summary, version = sys.argv[1:6]
    rest = sys.argv[6:]
    more = []
    if "--" in rest:
        more = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    usage, lines = split_usage(help_text(rest))
    page = ['.\\" Generated from %s --help by tools/gen-man.py.\n' % name,
            '.TH %s %s "" "tk %s" "tk"\n' % (name.upper(), section, version),
            ".SH NAME\n%s \\- %s\n" % (name, escape(summary)),
            ".SH SYNOPSIS\n.nf\n"]
    for line in usage:
        page.append(escape(re.sub(r"^(usage:|      ) ", "", line)) + "\n")
    page.append(".fi\n")
    page += body(lines, "DESCRIPTION")
    if more:
        usage2, lines2 = split_usage(help_text(more))
        page.append(".SH %s\n.nf\n" % " ".join([name] + more[1:]).upper())
        for line in usage2 + [""] + lines2:
            page.append(escape(line) + "\n")
        page.append(".fi\n")
    page.append(".SH SEE ALSO\n%s, README.md and DESIGN.md of tk\n" %
                SEE_ALSO.get(name, ""))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("".join(page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
