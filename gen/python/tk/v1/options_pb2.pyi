from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
METHOD_FIELD_NUMBER: _ClassVar[int]
PATH_ABSOLUTE: PathKind
PATH_FIELD_NUMBER: _ClassVar[int]
PATH_IN_ROOTS: PathKind
PATH_KIND_UNSPECIFIED: PathKind
method: _descriptor.FieldDescriptor
path: _descriptor.FieldDescriptor

class ListSpec(_message.Message):
    __slots__ = ["default_items", "field", "limit_field", "max_bytes", "max_items"]
    DEFAULT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_ITEMS_FIELD_NUMBER: _ClassVar[int]
    default_items: int
    field: str
    limit_field: str
    max_bytes: int
    max_items: int
    def __init__(self, field: _Optional[str] = ..., limit_field: _Optional[str] = ..., default_items: _Optional[int] = ..., max_items: _Optional[int] = ..., max_bytes: _Optional[int] = ...) -> None: ...

class MethodSpec(_message.Message):
    __slots__ = ["ceiling_ms", "default_timeout_ms", "inline", "kind", "list", "writes"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CEILING_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    INLINE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_UNSPECIFIED: MethodSpec.Kind
    LIST_FIELD_NUMBER: _ClassVar[int]
    READ: MethodSpec.Kind
    WRITE: MethodSpec.Kind
    WRITES_FIELD_NUMBER: _ClassVar[int]
    ceiling_ms: int
    default_timeout_ms: int
    inline: bool
    kind: MethodSpec.Kind
    list: ListSpec
    writes: bool
    def __init__(self, kind: _Optional[_Union[MethodSpec.Kind, str]] = ..., default_timeout_ms: _Optional[int] = ..., ceiling_ms: _Optional[int] = ..., inline: bool = ..., writes: bool = ..., list: _Optional[_Union[ListSpec, _Mapping]] = ...) -> None: ...

class PathKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
