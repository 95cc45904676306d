# SPDX-License-Identifier: MIT
"""The Python client installs as client/python/README.md says, offline,
and its example runs from the install against a real tkd: a copy of
client/python (so nothing of the checkout is reachable) installed with
pip into a venv made with --system-site-packages, and with
/usr/bin/python3 -m pip --break-system-packages --target into a private
directory (never into the system); each runs the README's example from a
directory outside the checkout, with no PYTHONPATH but the target and no
LD_LIBRARY_PATH. pip gets no index and no configuration, so nothing can
come from the network.

Negative controls: without pyproject.toml pip refuses the directory; with
build isolation (pip's default) the offline build cannot get setuptools,
which is why the README says --no-build-isolation; and without the
generated tk/v1 in the copy, setuptools refuses to build it; and without
an install the example finds no tk (nothing of the checkout is on its
path).

  test_python_install.py     (from meson: TKD; suite integration)
"""

from __future__ import annotations

import faulthandler
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List, Optional

import tkproc

PYTHON = "/usr/bin/python3"
PIP_S = 300.0
README = os.path.join(tkproc.SOURCE_ROOT, "client", "python", "README.md")

faulthandler.register(signal.SIGUSR1, all_threads=True)


def readme_example() -> str:
    """The first ```python block of client/python/README.md."""
    with open(README, encoding="utf-8") as f:
        m = re.search(r"^```python\n(.*?)^```$", f.read(), re.M | re.S)
    if m is None:
        raise AssertionError("client/python/README.md has no ```python block")
    return m.group(1)


def clean_env(**extra: str) -> Dict[str, str]:
    """The environment without meson's PYTHONPATH, LD_LIBRARY_PATH or any
    pip setting of the machine's; pip offline and unconfigured."""
    drop = ("PYTHONPATH", "LD_LIBRARY_PATH")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIP_") and k not in drop}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def run(argv: List[str], cwd: str,
        env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=PIP_S)


@unittest.skipIf(sys.platform == "darwin",
                 "the pip install is Debian's (python3-setuptools 66 as the "
                 "build backend, offline); macOS's /usr/bin/python3 is "
                 "Xcode's, with no such setuptools")
class PythonInstall(unittest.TestCase):
    tmp: "tempfile.TemporaryDirectory[str]"
    dir: str
    daemon: tkproc.Daemon
    addr: str
    elsewhere: str
    example: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tkproc.tempdir("pyinst")
        cls.dir = cls.tmp.name
        cls.daemon, cls.addr = tkproc.start_tkd(cls.dir)
        cls.elsewhere = os.path.join(cls.dir, "elsewhere")
        os.mkdir(cls.elsewhere)
        cls.example = os.path.join(cls.dir, "example.py")
        with open(cls.example, "w", encoding="utf-8") as f:
            f.write(readme_example())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()
        cls.tmp.cleanup()

    def copy(self, name: str, drop: tuple = ()) -> str:
        """A copy of client/python (no __pycache__), without drop."""
        dst = os.path.join(self.dir, name)
        shutil.copytree(os.path.join(tkproc.SOURCE_ROOT, "client", "python"),
                        dst, ignore=shutil.ignore_patterns("__pycache__",
                                                           "build",
                                                           "*.egg-info"))
        for rel in drop:
            path = os.path.join(dst, rel)
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
        return dst

    def venv(self, name: str) -> str:
        v = os.path.join(self.dir, name)
        p = run([PYTHON, "-m", "venv", "--system-site-packages", v], self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        return os.path.join(v, "bin", "python")

    def assert_example_runs(self, python: str, where: str,
                            env: Dict[str, str]) -> None:
        """The README's example, from outside the checkout, against tkd;
        tk imported from where (the install), py.typed beside it."""
        p = run([python, "-c", "import tk, tk.v1; print(tk.__file__)"],
                self.elsewhere, env)
        self.assertEqual(p.returncode, 0, p.stderr)
        init = os.path.realpath(p.stdout.strip())
        self.assertTrue(init.startswith(os.path.realpath(where) + os.sep), init)
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(init),
                                                    "py.typed")))
        p = run([python, self.example, self.addr], self.elsewhere, env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^tkd \S+ says hello\nand again\n$")

    def test_venv_with_system_site_packages(self) -> None:
        src = self.copy("venv-src")
        python = self.venv("venv")
        p = run([python, "-m", "pip", "install", "--no-build-isolation", src],
                self.dir)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_example_runs(python, os.path.join(self.dir, "venv"),
                                 clean_env())

    def test_system_python_into_a_target(self) -> None:
        src = self.copy("target-src")
        target = os.path.join(self.dir, "target")
        p = run([PYTHON, "-m", "pip", "install", "--break-system-packages",
                 "--no-build-isolation", "--no-deps", "--target", target, src],
                self.dir)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_example_runs(PYTHON, target, clean_env(PYTHONPATH=target))

    def test_no_pyproject_is_refused(self) -> None:
        src = self.copy("nopyproject-src", drop=("pyproject.toml",))
        python = self.venv("venv-nopyproject")
        p = run([python, "-m", "pip", "install", "--no-build-isolation", src],
                self.dir)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Neither 'setup.py' nor 'pyproject.toml' found",
                      p.stdout + p.stderr)

    def test_build_isolation_offline_fails(self) -> None:
        src = self.copy("isolated-src")
        python = self.venv("venv-isolated")
        p = run([python, "-m", "pip", "install", src], self.dir)
        self.assertNotEqual(p.returncode, 0)
        self.assertRegex(p.stdout + p.stderr, r"setuptools")

    def test_without_the_generated_code_it_does_not_build(self) -> None:
        src = self.copy("nogen-src", drop=(os.path.join("tk", "v1"),))
        target = os.path.join(self.dir, "target-nogen")
        p = run([PYTHON, "-m", "pip", "install", "--break-system-packages",
                 "--no-build-isolation", "--no-deps", "--target", target, src],
                self.dir)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("package directory 'tk/v1' does not exist",
                      p.stdout + p.stderr)

    def test_nothing_of_the_checkout_without_an_install(self) -> None:
        p = run([PYTHON, self.example, self.addr], self.elsewhere)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("No module named 'tk'", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=[sys.argv[0]])
