# SPDX-License-Identifier: MIT
"""What the generated typed methods (gen/python/tk/*/*_tk.py) share."""

from __future__ import annotations

from typing import Mapping, Optional, Type, TypeVar

from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


def build_request(cls: Type[M], request: Optional[M],
                  fields: Mapping[str, object]) -> M:
    """The request of a typed call: the message given, or one made of the
    fields given as keyword arguments (None: not given), not both."""
    given = {k: v for k, v in fields.items() if v is not None}
    if request is None:
        made: M = cls(**given)
        return made
    if given:
        raise TypeError("give a %s or its fields as keyword arguments, not "
                        "both" % cls.DESCRIPTOR.full_name)
    if not isinstance(request, cls):
        raise TypeError("the request must be a %s, not %s"
                        % (cls.DESCRIPTOR.full_name, type(request).__name__))
    return request
