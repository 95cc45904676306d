from tk.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AddItemReply(_message.Message):
    __slots__ = ["item_id"]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    item_id: int
    def __init__(self, item_id: _Optional[int] = ...) -> None: ...

class AddItemRequest(_message.Message):
    __slots__ = ["order_id", "sku"]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    SKU_FIELD_NUMBER: _ClassVar[int]
    order_id: int
    sku: str
    def __init__(self, order_id: _Optional[int] = ..., sku: _Optional[str] = ...) -> None: ...

class CloseOrderReply(_message.Message):
    __slots__ = ["outcome"]
    class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ALREADY_CLOSED: CloseOrderReply.Outcome
    CLOSED: CloseOrderReply.Outcome
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_UNSPECIFIED: CloseOrderReply.Outcome
    outcome: CloseOrderReply.Outcome
    def __init__(self, outcome: _Optional[_Union[CloseOrderReply.Outcome, str]] = ...) -> None: ...

class CloseOrderRequest(_message.Message):
    __slots__ = ["order_id"]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    order_id: int
    def __init__(self, order_id: _Optional[int] = ...) -> None: ...

class CreateOrderReply(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class CreateOrderRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetOrderReply(_message.Message):
    __slots__ = ["closed_at", "item_count", "status"]
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CLOSED: GetOrderReply.Status
    CLOSED_AT_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    OPEN: GetOrderReply.Status
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_UNSPECIFIED: GetOrderReply.Status
    closed_at: str
    item_count: int
    status: GetOrderReply.Status
    def __init__(self, status: _Optional[_Union[GetOrderReply.Status, str]] = ..., closed_at: _Optional[str] = ..., item_count: _Optional[int] = ...) -> None: ...

class GetOrderRequest(_message.Message):
    __slots__ = ["order_id"]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    order_id: int
    def __init__(self, order_id: _Optional[int] = ...) -> None: ...

class ReopenOrderReply(_message.Message):
    __slots__ = ["outcome"]
    class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ALREADY_OPEN: ReopenOrderReply.Outcome
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_UNSPECIFIED: ReopenOrderReply.Outcome
    REOPENED: ReopenOrderReply.Outcome
    outcome: ReopenOrderReply.Outcome
    def __init__(self, outcome: _Optional[_Union[ReopenOrderReply.Outcome, str]] = ...) -> None: ...

class ReopenOrderRequest(_message.Message):
    __slots__ = ["order_id"]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    order_id: int
    def __init__(self, order_id: _Optional[int] = ...) -> None: ...
