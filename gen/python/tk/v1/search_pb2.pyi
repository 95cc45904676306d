from tk.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchMatch(_message.Message):
    __slots__ = ["column", "line", "path", "submatches", "text", "truncated"]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SUBMATCHES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    column: int
    line: int
    path: bytes
    submatches: _containers.RepeatedCompositeFieldContainer[SearchSubmatch]
    text: bytes
    truncated: bool
    def __init__(self, path: _Optional[bytes] = ..., line: _Optional[int] = ..., column: _Optional[int] = ..., text: _Optional[bytes] = ..., submatches: _Optional[_Iterable[_Union[SearchSubmatch, _Mapping]]] = ..., truncated: bool = ...) -> None: ...

class SearchReply(_message.Message):
    __slots__ = ["matches", "partial", "stats", "tool"]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[SearchMatch]
    partial: bool
    stats: SearchStats
    tool: SearchRequest.Tool
    def __init__(self, matches: _Optional[_Iterable[_Union[SearchMatch, _Mapping]]] = ..., partial: bool = ..., tool: _Optional[_Union[SearchRequest.Tool, str]] = ..., stats: _Optional[_Union[SearchStats, _Mapping]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ["allow_unreadable", "ignore_case", "include_hidden", "limit", "query", "root", "tool"]
    class Tool(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ALLOW_UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    AUTO: SearchRequest.Tool
    GIT_GREP: SearchRequest.Tool
    GREP: SearchRequest.Tool
    IGNORE_CASE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RG: SearchRequest.Tool
    ROOT_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    allow_unreadable: bool
    ignore_case: bool
    include_hidden: bool
    limit: int
    query: str
    root: str
    tool: SearchRequest.Tool
    def __init__(self, root: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., tool: _Optional[_Union[SearchRequest.Tool, str]] = ..., include_hidden: bool = ..., ignore_case: bool = ..., allow_unreadable: bool = ...) -> None: ...

class SearchStats(_message.Message):
    __slots__ = ["files_with_matches", "matched_lines", "skipped_records", "slot_wait_ms", "tool_ms", "truncated_lines", "unreadable_files"]
    FILES_WITH_MATCHES_FIELD_NUMBER: _ClassVar[int]
    MATCHED_LINES_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_RECORDS_FIELD_NUMBER: _ClassVar[int]
    SLOT_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    TOOL_MS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_LINES_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FILES_FIELD_NUMBER: _ClassVar[int]
    files_with_matches: int
    matched_lines: int
    skipped_records: int
    slot_wait_ms: int
    tool_ms: int
    truncated_lines: int
    unreadable_files: int
    def __init__(self, matched_lines: _Optional[int] = ..., files_with_matches: _Optional[int] = ..., unreadable_files: _Optional[int] = ..., truncated_lines: _Optional[int] = ..., skipped_records: _Optional[int] = ..., slot_wait_ms: _Optional[int] = ..., tool_ms: _Optional[int] = ...) -> None: ...

class SearchSubmatch(_message.Message):
    __slots__ = ["end", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: int
    start: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...
