# SPDX-License-Identifier: MIT
"""One answer whichever tool runs, for a file of one line of tens of MiB
(issue 31, point 7).

On main at 31f2572, Search of a 60 MB single-line file answered 0 matches
and partial with rg, while git grep and grep answered one truncated
match: rg's JSON record for the line was longer than tkd reads whole, and
was cut before the line's number. Here the same Search runs through tkd
with each tool forced, and every answer must be the same: the line, its
first MiB flagged as truncated, the column where the occurrence lies in
that MiB and none where it lies beyond (git grep's --column knew it, grep
did not), not partial.

Run by meson under /usr/bin/python3.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import unittest

import tkproc

import tk
from tk.v1 import search_pb2

faulthandler.register(signal.SIGUSR1, all_threads=True)

MIB = 1 << 20


class LongLine(unittest.TestCase):

    def setUp(self) -> None:
        self.dir = tkproc.tempdir("ll")
        base = self.dir.name
        os.environ["HOME"] = base
        self.root = os.path.join(base, "root")
        os.makedirs(self.root)
        subprocess.run(["git", "init", "-q", self.root], check=True)
        for name, at in (("start.txt", 0), ("mid.txt", 30 * MIB)):
            with open(os.path.join(self.root, name), "wb") as f:
                f.write(b"x" * at + b"needle" + b"y" * (60 * MIB - at) +
                        b"\n")
        self.tkd, addr = tkproc.start_tkd(base, [self.root])
        self.client = tk.Client(addr)

    def tearDown(self) -> None:
        self.client.close()
        self.tkd.stop()
        self.dir.cleanup()

    def answer(self, tool: search_pb2.SearchRequest.Tool) -> tuple:
        reply = self.client.call(
            "tk.v1.Search/Search",
            search_pb2.SearchRequest(root=self.root, query="needle",
                                     tool=tool), timeout=60)
        matches = sorted(
            (m.path, m.line, m.column, len(m.text), m.text[:16], m.truncated,
             tuple((s.start, s.end) for s in m.submatches))
            for m in reply.matches)
        return (reply.partial, matches)

    def test_every_tool_answers_alike(self) -> None:
        answers = {}
        T = search_pb2.SearchRequest
        for tool in (T.RG, T.GIT_GREP, T.GREP):
            answers[T.Tool.Name(tool)] = self.answer(tool)
        want = (False, [
            (b"mid.txt", 1, 0, MIB, b"x" * 16, True, ()),
            (b"start.txt", 1, 1, MIB, b"needle" + b"y" * 10, True,
             ((0, 6),)),
        ])
        for name, got in answers.items():
            self.assertEqual(got, want, name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
