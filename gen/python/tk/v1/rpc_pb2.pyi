from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Cancellation(_message.Message):
    __slots__ = ["cause", "cleanup_ms", "process_killed", "write_completed"]
    class Cause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CALLER: Cancellation.Cause
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    CLEANUP_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE: Cancellation.Cause
    LIMIT: Cancellation.Cause
    NONE: Cancellation.Cause
    PROCESS_KILLED_FIELD_NUMBER: _ClassVar[int]
    SHUTDOWN: Cancellation.Cause
    WRITE_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    cause: Cancellation.Cause
    cleanup_ms: int
    process_killed: bool
    write_completed: bool
    def __init__(self, cause: _Optional[_Union[Cancellation.Cause, str]] = ..., process_killed: bool = ..., write_completed: bool = ..., cleanup_ms: _Optional[int] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ["call_id", "payload", "status"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    payload: bytes
    status: Status
    def __init__(self, call_id: _Optional[int] = ..., status: _Optional[_Union[Status, _Mapping]] = ..., payload: _Optional[bytes] = ...) -> None: ...

class Request(_message.Message):
    __slots__ = ["call_id", "method", "payload", "timeout_ms"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    method: str
    payload: bytes
    timeout_ms: int
    def __init__(self, call_id: _Optional[int] = ..., method: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ["cancellation", "code", "elapsed_us", "message", "partial", "reason", "retry_after_ms", "stderr_excerpt", "tool"]
    class Code(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ABORTED: Status.Code
    ALREADY_EXISTS: Status.Code
    CANCELLATION_FIELD_NUMBER: _ClassVar[int]
    CANCELLED: Status.Code
    CODE_FIELD_NUMBER: _ClassVar[int]
    DATA_LOSS: Status.Code
    DEADLINE_EXCEEDED: Status.Code
    ELAPSED_US_FIELD_NUMBER: _ClassVar[int]
    FAILED_PRECONDITION: Status.Code
    INTERNAL: Status.Code
    INVALID_ARGUMENT: Status.Code
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND: Status.Code
    OK: Status.Code
    OUT_OF_RANGE: Status.Code
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_DENIED: Status.Code
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_EXHAUSTED: Status.Code
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    STDERR_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    UNAUTHENTICATED: Status.Code
    UNAVAILABLE: Status.Code
    UNIMPLEMENTED: Status.Code
    UNKNOWN: Status.Code
    cancellation: Cancellation
    code: Status.Code
    elapsed_us: int
    message: str
    partial: bool
    reason: str
    retry_after_ms: int
    stderr_excerpt: bytes
    tool: str
    def __init__(self, code: _Optional[_Union[Status.Code, str]] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., stderr_excerpt: _Optional[bytes] = ..., partial: bool = ..., retry_after_ms: _Optional[int] = ..., elapsed_us: _Optional[int] = ..., cancellation: _Optional[_Union[Cancellation, _Mapping]] = ..., tool: _Optional[str] = ...) -> None: ...
