# SPDX-License-Identifier: MIT
"""A strict parser of Prometheus' text format (0.0.4), for the tests that
scrape tkd's metrics listener (tests/integration/test_metrics.py, whose
Parser tests are its negative controls, and
tests/security/test_metrics_listener.py): parse_exposition refuses what
Prometheus would refuse; value and hist_count read a sample.
"""

from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Tuple

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")

Labels = Tuple[Tuple[str, str], ...]


class Family:
    def __init__(self, name: str) -> None:
        self.name = name
        self.help: Optional[str] = None
        self.type: Optional[str] = None
        # (sample name, labels) -> value, in order of appearance
        self.samples: Dict[Tuple[str, Labels], float] = {}


def parse_value(text: str) -> float:
    if text in ("+Inf", "-Inf", "NaN"):
        return float(text.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        raise ValueError("not a number: %r" % text)
    return float(text)


def parse_labels(text: str) -> Tuple[Labels, str]:
    """The labels of "{a="x",b="y"} rest" and the rest."""
    assert text.startswith("{")
    i, out = 1, []
    while True:
        if text[i] == "}":
            i += 1
            break
        m = re.match(r"([^=]*)=\"", text[i:])
        if m is None:
            raise ValueError("a label without =\"...\": %r" % text)
        name = m.group(1)
        if not LABEL.match(name) or name.startswith("__"):
            raise ValueError("a bad label name: %r" % name)
        i += m.end()
        value = []
        while text[i] != "\"":
            if text[i] == "\\":
                esc = text[i + 1]
                if esc not in "\\\"n":
                    raise ValueError("a bad escape \\%s" % esc)
                value.append("\n" if esc == "n" else esc)
                i += 2
            elif text[i] == "\n":
                raise ValueError("a newline in a label value")
            else:
                value.append(text[i])
                i += 1
        i += 1
        out.append((name, "".join(value)))
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise ValueError("labels not separated by commas: %r" % text)
    names = [n for n, _ in out]
    if len(names) != len(set(names)):
        raise ValueError("a label given twice: %r" % text)
    return tuple(sorted(out)), text[i:]


def family_of(sample: str, families: Dict[str, Family]) -> Optional[Family]:
    if sample in families:
        return families[sample]
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample[:-len(suffix)]
        if sample.endswith(suffix) and base in families and \
                families[base].type == "histogram":
            return families[base]
    return None


def parse_exposition(text: str) -> Dict[str, Family]:
    """Families by name; raises ValueError at anything Prometheus' parser
    refuses, and at what its conventions forbid (a counter not named
    _total, a broken histogram)."""
    if text and not text.endswith("\n"):
        raise ValueError("the text does not end with a newline")
    families: Dict[str, Family] = {}
    done: set = set()  # families whose samples have ended
    current: Optional[Family] = None
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4 or not NAME.match(parts[2]):
                raise ValueError("a bad comment line: %r" % line)
            name = parts[2]
            if name in done:
                raise ValueError("%s again after other families" % name)
            fam = families.setdefault(name, Family(name))
            if current is not None and current is not fam:
                done.add(current.name)
            current = fam
            if fam.samples:
                raise ValueError("HELP or TYPE of %s after its samples" % name)
            if parts[1] == "HELP":
                if fam.help is not None:
                    raise ValueError("two HELPs of %s" % name)
                if re.search(r"\\[^\\n]", parts[3]):
                    raise ValueError("a bad escape in HELP: %r" % line)
                fam.help = parts[3]
            else:
                if fam.type is not None or parts[3] not in TYPES:
                    raise ValueError("a bad or second TYPE: %r" % line)
                fam.type = parts[3]
            continue
        if line.startswith("#") or line == "":
            raise ValueError("a line tkd does not write: %r" % line)
        m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
        if m is None:
            raise ValueError("a bad sample line: %r" % line)
        sample, rest = m.group(0), line[m.end():]
        labels: Labels = ()
        if rest.startswith("{"):
            labels, rest = parse_labels(rest)
        if not rest.startswith(" "):
            raise ValueError("no value: %r" % line)
        fields = rest[1:].split(" ")
        if len(fields) not in (1, 2):
            raise ValueError("a bad value: %r" % line)
        value = parse_value(fields[0])
        owner = family_of(sample, families)
        if owner is None:
            raise ValueError("%s has no TYPE before it" % sample)
        if owner is not current:
            raise ValueError("the samples of %s are not together"
                             % owner.name)
        key = (sample, labels)
        if key in owner.samples:
            raise ValueError("a series given twice: %r" % line)
        owner.samples[key] = value
    for fam in families.values():
        check_family(fam)
    return families


def check_family(fam: Family) -> None:
    if fam.help is None or fam.type is None:
        raise ValueError("%s lacks HELP or TYPE" % fam.name)
    if fam.type == "counter":
        if not fam.name.endswith("_total"):
            raise ValueError("counter %s is not named _total" % fam.name)
        for v in fam.samples.values():
            if not v >= 0:
                raise ValueError("counter %s is below 0" % fam.name)
    if fam.type != "histogram":
        return
    series: Dict[Labels, List[Tuple[float, float]]] = {}
    sums: Dict[Labels, float] = {}
    counts: Dict[Labels, float] = {}
    for (sample, labels), v in fam.samples.items():
        if sample.endswith("_bucket"):
            le = dict(labels).get("le")
            if le is None:
                raise ValueError("a bucket of %s without le" % fam.name)
            rest = tuple(x for x in labels if x[0] != "le")
            series.setdefault(rest, []).append((parse_value(le), v))
        elif sample.endswith("_sum"):
            sums[labels] = v
        elif sample.endswith("_count"):
            counts[labels] = v
        else:
            raise ValueError("%s in histogram %s" % (sample, fam.name))
    if set(series) != set(sums) or set(series) != set(counts):
        raise ValueError("%s: buckets, _sum and _count disagree" % fam.name)
    for labels, buckets in series.items():
        bounds = [b for b, _ in buckets]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ValueError("%s: le not ascending" % fam.name)
        if not math.isinf(bounds[-1]):
            raise ValueError("%s: no +Inf bucket" % fam.name)
        cum = [c for _, c in buckets]
        if cum != sorted(cum):
            raise ValueError("%s: a bucket below the one before" % fam.name)
        if cum[-1] != counts[labels]:
            raise ValueError("%s: +Inf is not _count" % fam.name)


def value(fams: Dict[str, Family], name: str, **labels: str) -> float:
    """A counter's or gauge's sample; 0 when the series is not there yet
    (a counter starts at 0)."""
    key = (name, tuple(sorted(labels.items())))
    fam = family_of(name, fams)
    assert fam is not None, name
    return fam.samples.get(key, 0.0)


def hist_count(fams: Dict[str, Family], name: str, **labels: str) -> float:
    return value(fams, name + "_count", **labels)
