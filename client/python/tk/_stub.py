# SPDX-License-Identifier: MIT
"""What the generated typed methods (client/python/tk/*/*_tk.py) share."""

from __future__ import annotations

from typing import Mapping, Optional, Type, TypeVar

from google.protobuf.message import Message

from tk._text import text_fields

M = TypeVar("M", bound=Message)


def build_request(cls: Type[M], request: Optional[M],
                  fields: Mapping[str, object]) -> M:
    """The request of a typed call: the message given, or one made of the
    fields given as keyword arguments (None: not given), not both. A str
    given for a bytes field is its UTF-8 (tk._text), as tkcall takes it."""
    given = {k: v for k, v in fields.items() if v is not None}
    if request is None:
        made: M = cls(**text_fields(cls.DESCRIPTOR, given))
        return made
    if given:
        raise TypeError("give a %s or its fields as keyword arguments, not "
                        "both" % cls.DESCRIPTOR.full_name)
    if not isinstance(request, cls):
        raise TypeError("the request must be a %s, not %s"
                        % (cls.DESCRIPTOR.full_name, type(request).__name__))
    return request
