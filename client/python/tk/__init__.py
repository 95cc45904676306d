# SPDX-License-Identifier: MIT
"""tk: the Python client of tkd.

    import tk
    with tk.Client() as client:                 # TK_ADDR or tkd's default
        reply = client.control.ping(data=b"hi", timeout=2.0)
        call = client.control.start_ping(data=b"hi")   # from another thread:
        call.cancel()                                   #   Control/Cancel
        call.result()                           # the reply, or raises TkError
    st = client.git.status(repo=".", paths=["README.md"])  # text, relative
    tk.text(st.branch.head)                     # "main"; st.branch.head: b"main"
    tk.catalog.find_method("tk.v1.Git/Status")  # kind and timeouts (.proto)
    print(tk.jsonform.to_json(reply))       # JSON as tkcall prints it: bytes
                                            # as text, {"base64": ...} if not
                                            # UTF-8 (proto_json=True: base64)

Needs Debian's python3-protobuf and libnng1 (through ctypes), nothing else.
The messages and the typed methods are generated from proto/ into
gen/python (tools/regen); in a checkout this package finds them itself, so
PYTHONPATH=client/python is enough.

As tkcall: a bytes field takes a str, its UTF-8; a reply's bytes stay
bytes (git's names need not be UTF-8) and tk.text(b) reads them as text
(bytes that are not UTF-8 as os.fsdecode's escapes, which a bytes field
takes back as the same bytes); a relative path in a field that names a
file (option (tk.v1.path)) is made absolute against the working directory.
"""

import os as _os
import pkgutil as _pkgutil

# `tk` is one package in two directories: this one (the client) and
# gen/python/tk (generated), found on sys.path or, in a checkout, beside us.
__path__ = _pkgutil.extend_path(__path__, __name__)
_gen = _os.path.normpath(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)),
                                       _os.pardir, _os.pardir, _os.pardir,
                                       "gen", "python", "tk"))
if _os.path.isdir(_gen) and _gen not in __path__:
    __path__.append(_gen)

from tk import catalog, jsonform  # noqa: E402
from tk._text import text  # noqa: E402
from tk.client import (  # noqa: E402
    Call,
    Client,
    default_address,
    message_class,
    reply_class,
    request_class,
)
from tk.status import (  # noqa: E402
    CancelOutcome,
    Cancellation,
    Cause,
    Code,
    Status,
    TkError,
)

__all__ = [
    "Call",
    "CancelOutcome",
    "Cancellation",
    "Cause",
    "Client",
    "Code",
    "Status",
    "TkError",
    "catalog",
    "jsonform",
    "default_address",
    "message_class",
    "reply_class",
    "request_class",
    "text",
]
