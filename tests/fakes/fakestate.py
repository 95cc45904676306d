# SPDX-License-Identifier: MIT
"""State shared by the fakes of launchctl, systemctl, loginctl and plutil.

launchd and systemd cannot run here, so the tests put these models first on
the PATH of the code under test. A model keeps its state in a directory
next to the place it was run from: a fake run as /tmp/x/bin/launchctl (a
symlink to tests/fakes/launchctl) keeps it in /tmp/x/bin/fake-state/. So
tkd, whose children get a scrubbed environment, needs to pass nothing.

  fake-state/lock          flock(2): every invocation holds it from start to
                           end, so concurrent callers see one call at a time
  fake-state/config.json   what the test sets (absent keys: defaults)
  fake-state/calls.jsonl   one JSON line per call: tool, argv, exit, stderr,
                           t_ms (the fake clock), and what the call changed
  fake-state/*.json        each model's own state

The clock is CLOCK_MONOTONIC (system wide, so comparable between
processes), or, when config "clock_ms" is set, that value: the model tests
stop the clock and advance it instead of sleeping.
"""

import fcntl
import json
import os
import sys
import time


class State:
    def __init__(self, tool):
        self.tool = tool
        here = os.path.dirname(os.path.abspath(sys.argv[0]))
        self.dir = os.path.join(here, "fake-state")
        os.makedirs(self.dir, exist_ok=True)
        self._lock = open(os.path.join(self.dir, "lock"), "a")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.config = self._read("config.json", {})
        self.record = {}

    def _read(self, name, default):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return json.load(f)
        except FileNotFoundError:
            return default

    def load(self, name, default):
        return self._read(name, default)

    def save(self, name, value):
        path = os.path.join(self.dir, name)
        with open(path + ".tmp", "w") as f:
            json.dump(value, f, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)

    def now_ms(self):
        if "clock_ms" in self.config:
            return float(self.config["clock_ms"])
        return time.monotonic() * 1000.0

    def finish(self, code, out="", err=""):
        """Logs the call, prints its output and exits with code; the lock
        goes with the process."""
        entry = {"tool": self.tool, "argv": sys.argv[1:], "exit": code,
                 "stderr": err, "t_ms": round(self.now_ms(), 1),
                 "pid": os.getpid()}
        entry.update(self.record)
        with open(os.path.join(self.dir, "calls.jsonl"), "a") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.stdout.flush()
        sys.stderr.flush()
        sys.exit(code)
