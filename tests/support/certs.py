# SPDX-License-Identifier: MIT
"""Test support for the Python tests that speak tls+tcp://: a CA and
certificates made with the openssl CLI, as docs/tkd.md shows (tests/security,
the fleet tests, whose nodes' certificates name their ids: node_ext).
"""

from __future__ import annotations

import os
import subprocess
from typing import Tuple

# mbedTLS, which Debian's NNG uses, matches the host a client dials
# against the certificate's DNS names only: an address is named as one.
SERVER_EXT = ("subjectAltName=DNS:localhost,DNS:127.0.0.1,IP:127.0.0.1\n"
              "extendedKeyUsage=serverAuth\n")
CLIENT_EXT = "extendedKeyUsage=clientAuth\n"
# The DNS name a fleet's node's certificate carries for its id, which the
# clients check against the row of tk_nodes they route by (DESIGN.md,
# "Scaling out"): node "a" is a.tk-node.invalid.
NODE_NAME_SUFFIX = ".tk-node.invalid"


def node_ext(node_id: str, hosts: str = "DNS:localhost,DNS:127.0.0.1,"
             "IP:127.0.0.1") -> str:
    """The extensions of the certificate of a fleet's node node_id: its
    hosts' names (SERVER_EXT's by default) and its id's."""
    return ("subjectAltName=%s,DNS:%s%s\nextendedKeyUsage=serverAuth\n"
            % (hosts, node_id, NODE_NAME_SUFFIX))


def openssl(*args: str) -> None:
    subprocess.run(["openssl"] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(d: str, name: str) -> Tuple[str, str]:
    """A CA: (certificate, key)."""
    cert, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", cert, "-days", "30", "-subj", "/CN=" + name)
    return cert, key


def make_cert(d: str, name: str, ca: Tuple[str, str], ext: str) -> Tuple[str, str]:
    """A certificate ca signed, with the extensions ext: (cert, key)."""
    cert, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    csr, extf = os.path.join(d, name + ".csr"), os.path.join(d, name + ".ext")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
    with open(extf, "w", encoding="utf-8") as f:
        f.write(ext)
    openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
            "-CAcreateserial", "-out", cert, "-days", "30", "-extfile", extf)
    return cert, key
