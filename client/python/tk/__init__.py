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
The messages and the typed methods (tk.v1, tk._services, tk._catalog) are
generated from proto/ into this package by tools/regen and ship with it:
pip install ./client/python (README.md there), or, in a checkout,
PYTHONPATH=client/python.

As tkcall: a bytes field takes a str, its UTF-8; a reply's bytes stay
bytes (git's names need not be UTF-8) and tk.text(b) reads them as text
(bytes that are not UTF-8 as os.fsdecode's escapes, which a bytes field
takes back as the same bytes); a relative path in a field that names a
file (option (tk.v1.path)) is made absolute against the working directory.
"""

from tk import catalog, jsonform
from tk._text import text
from tk.client import (
    Call,
    Client,
    default_address,
    message_class,
    reply_class,
    request_class,
)
from tk.status import (
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
