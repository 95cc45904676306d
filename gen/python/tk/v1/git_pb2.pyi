from tk.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GitCheckoutReply(_message.Message):
    __slots__ = ["oid"]
    OID_FIELD_NUMBER: _ClassVar[int]
    oid: str
    def __init__(self, oid: _Optional[str] = ...) -> None: ...

class GitCheckoutRequest(_message.Message):
    __slots__ = ["create_branch", "repo", "rev"]
    CREATE_BRANCH_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    create_branch: str
    repo: str
    rev: str
    def __init__(self, repo: _Optional[str] = ..., rev: _Optional[str] = ..., create_branch: _Optional[str] = ...) -> None: ...

class GitCommit(_message.Message):
    __slots__ = ["author", "body", "committer", "oid", "parents", "subject"]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    COMMITTER_FIELD_NUMBER: _ClassVar[int]
    OID_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    author: GitSignature
    body: bytes
    committer: GitSignature
    oid: str
    parents: _containers.RepeatedScalarFieldContainer[str]
    subject: bytes
    def __init__(self, oid: _Optional[str] = ..., parents: _Optional[_Iterable[str]] = ..., author: _Optional[_Union[GitSignature, _Mapping]] = ..., committer: _Optional[_Union[GitSignature, _Mapping]] = ..., subject: _Optional[bytes] = ..., body: _Optional[bytes] = ...) -> None: ...

class GitCommitReply(_message.Message):
    __slots__ = ["oid"]
    OID_FIELD_NUMBER: _ClassVar[int]
    oid: str
    def __init__(self, oid: _Optional[str] = ...) -> None: ...

class GitCommitRequest(_message.Message):
    __slots__ = ["all", "allow_empty", "author_email", "author_name", "message", "paths", "repo"]
    ALLOW_EMPTY_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_EMAIL_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_NAME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    all: bool
    allow_empty: bool
    author_email: str
    author_name: str
    message: str
    paths: _containers.RepeatedScalarFieldContainer[bytes]
    repo: str
    def __init__(self, repo: _Optional[str] = ..., message: _Optional[str] = ..., paths: _Optional[_Iterable[bytes]] = ..., all: bool = ..., allow_empty: bool = ..., author_name: _Optional[str] = ..., author_email: _Optional[str] = ...) -> None: ...

class GitConfigSetReply(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GitConfigSetRequest(_message.Message):
    __slots__ = ["key", "repo", "value"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    repo: str
    value: str
    def __init__(self, repo: _Optional[str] = ..., key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class GitDiffReply(_message.Message):
    __slots__ = ["files", "patch"]
    FILES_FIELD_NUMBER: _ClassVar[int]
    PATCH_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[GitFileStat]
    patch: bytes
    def __init__(self, patch: _Optional[bytes] = ..., files: _Optional[_Iterable[_Union[GitFileStat, _Mapping]]] = ...) -> None: ...

class GitDiffRequest(_message.Message):
    __slots__ = ["cached", "context_lines", "paths", "repo", "to"]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_LINES_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    cached: bool
    context_lines: int
    paths: _containers.RepeatedScalarFieldContainer[bytes]
    repo: str
    to: str
    def __init__(self, repo: _Optional[str] = ..., to: _Optional[str] = ..., cached: bool = ..., paths: _Optional[_Iterable[bytes]] = ..., context_lines: _Optional[int] = ..., **kwargs) -> None: ...

class GitFileStat(_message.Message):
    __slots__ = ["added", "binary", "deleted", "old_path", "path"]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    OLD_PATH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    added: int
    binary: bool
    deleted: int
    old_path: bytes
    path: bytes
    def __init__(self, path: _Optional[bytes] = ..., old_path: _Optional[bytes] = ..., added: _Optional[int] = ..., deleted: _Optional[int] = ..., binary: bool = ...) -> None: ...

class GitGrepMatch(_message.Message):
    __slots__ = ["column", "line", "path", "text"]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    column: int
    line: int
    path: bytes
    text: bytes
    def __init__(self, path: _Optional[bytes] = ..., line: _Optional[int] = ..., column: _Optional[int] = ..., text: _Optional[bytes] = ...) -> None: ...

class GitGrepReply(_message.Message):
    __slots__ = ["matches"]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[GitGrepMatch]
    def __init__(self, matches: _Optional[_Iterable[_Union[GitGrepMatch, _Mapping]]] = ...) -> None: ...

class GitGrepRequest(_message.Message):
    __slots__ = ["ignore_case", "max_matches", "paths", "pattern", "repo", "untracked"]
    IGNORE_CASE_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    UNTRACKED_FIELD_NUMBER: _ClassVar[int]
    ignore_case: bool
    max_matches: int
    paths: _containers.RepeatedScalarFieldContainer[bytes]
    pattern: str
    repo: str
    untracked: bool
    def __init__(self, repo: _Optional[str] = ..., pattern: _Optional[str] = ..., ignore_case: bool = ..., paths: _Optional[_Iterable[bytes]] = ..., untracked: bool = ..., max_matches: _Optional[int] = ...) -> None: ...

class GitLogReply(_message.Message):
    __slots__ = ["commits"]
    COMMITS_FIELD_NUMBER: _ClassVar[int]
    commits: _containers.RepeatedCompositeFieldContainer[GitCommit]
    def __init__(self, commits: _Optional[_Iterable[_Union[GitCommit, _Mapping]]] = ...) -> None: ...

class GitLogRequest(_message.Message):
    __slots__ = ["max_count", "paths", "repo", "rev", "skip"]
    MAX_COUNT_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    max_count: int
    paths: _containers.RepeatedScalarFieldContainer[bytes]
    repo: str
    rev: str
    skip: int
    def __init__(self, repo: _Optional[str] = ..., rev: _Optional[str] = ..., max_count: _Optional[int] = ..., skip: _Optional[int] = ..., paths: _Optional[_Iterable[bytes]] = ...) -> None: ...

class GitRevParseReply(_message.Message):
    __slots__ = ["oid"]
    OID_FIELD_NUMBER: _ClassVar[int]
    oid: str
    def __init__(self, oid: _Optional[str] = ...) -> None: ...

class GitRevParseRequest(_message.Message):
    __slots__ = ["repo", "rev"]
    REPO_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    repo: str
    rev: str
    def __init__(self, repo: _Optional[str] = ..., rev: _Optional[str] = ...) -> None: ...

class GitSignature(_message.Message):
    __slots__ = ["email", "name", "offset_minutes", "time"]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OFFSET_MINUTES_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    email: bytes
    name: bytes
    offset_minutes: int
    time: int
    def __init__(self, name: _Optional[bytes] = ..., email: _Optional[bytes] = ..., time: _Optional[int] = ..., offset_minutes: _Optional[int] = ...) -> None: ...

class GitStatusBranch(_message.Message):
    __slots__ = ["ahead", "behind", "detached", "has_ahead_behind", "head", "oid", "upstream"]
    AHEAD_FIELD_NUMBER: _ClassVar[int]
    BEHIND_FIELD_NUMBER: _ClassVar[int]
    DETACHED_FIELD_NUMBER: _ClassVar[int]
    HAS_AHEAD_BEHIND_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    OID_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_FIELD_NUMBER: _ClassVar[int]
    ahead: int
    behind: int
    detached: bool
    has_ahead_behind: bool
    head: bytes
    oid: str
    upstream: bytes
    def __init__(self, oid: _Optional[str] = ..., head: _Optional[bytes] = ..., detached: bool = ..., upstream: _Optional[bytes] = ..., has_ahead_behind: bool = ..., ahead: _Optional[int] = ..., behind: _Optional[int] = ...) -> None: ...

class GitStatusEntry(_message.Message):
    __slots__ = ["index_status", "kind", "modes", "oids", "orig_path", "path", "score", "submodule", "worktree_status"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CHANGED: GitStatusEntry.Kind
    IGNORED: GitStatusEntry.Kind
    INDEX_STATUS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_UNSPECIFIED: GitStatusEntry.Kind
    MODES_FIELD_NUMBER: _ClassVar[int]
    OIDS_FIELD_NUMBER: _ClassVar[int]
    ORIG_PATH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RENAMED: GitStatusEntry.Kind
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SUBMODULE_FIELD_NUMBER: _ClassVar[int]
    UNMERGED: GitStatusEntry.Kind
    UNTRACKED: GitStatusEntry.Kind
    WORKTREE_STATUS_FIELD_NUMBER: _ClassVar[int]
    index_status: str
    kind: GitStatusEntry.Kind
    modes: _containers.RepeatedScalarFieldContainer[str]
    oids: _containers.RepeatedScalarFieldContainer[str]
    orig_path: bytes
    path: bytes
    score: str
    submodule: str
    worktree_status: str
    def __init__(self, kind: _Optional[_Union[GitStatusEntry.Kind, str]] = ..., path: _Optional[bytes] = ..., orig_path: _Optional[bytes] = ..., index_status: _Optional[str] = ..., worktree_status: _Optional[str] = ..., submodule: _Optional[str] = ..., modes: _Optional[_Iterable[str]] = ..., oids: _Optional[_Iterable[str]] = ..., score: _Optional[str] = ...) -> None: ...

class GitStatusReply(_message.Message):
    __slots__ = ["branch", "entries"]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    branch: GitStatusBranch
    entries: _containers.RepeatedCompositeFieldContainer[GitStatusEntry]
    def __init__(self, branch: _Optional[_Union[GitStatusBranch, _Mapping]] = ..., entries: _Optional[_Iterable[_Union[GitStatusEntry, _Mapping]]] = ...) -> None: ...

class GitStatusRequest(_message.Message):
    __slots__ = ["paths", "repo", "untracked"]
    class Untracked(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    PATHS_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    UNTRACKED_ALL: GitStatusRequest.Untracked
    UNTRACKED_DEFAULT: GitStatusRequest.Untracked
    UNTRACKED_FIELD_NUMBER: _ClassVar[int]
    UNTRACKED_NO: GitStatusRequest.Untracked
    paths: _containers.RepeatedScalarFieldContainer[bytes]
    repo: str
    untracked: GitStatusRequest.Untracked
    def __init__(self, repo: _Optional[str] = ..., untracked: _Optional[_Union[GitStatusRequest.Untracked, str]] = ..., paths: _Optional[_Iterable[bytes]] = ...) -> None: ...

class GitWorktreeAddReply(_message.Message):
    __slots__ = ["oid", "path"]
    OID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    oid: str
    path: str
    def __init__(self, path: _Optional[str] = ..., oid: _Optional[str] = ...) -> None: ...

class GitWorktreeAddRequest(_message.Message):
    __slots__ = ["detach", "new_branch", "path", "repo", "rev"]
    DETACH_FIELD_NUMBER: _ClassVar[int]
    NEW_BRANCH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    detach: bool
    new_branch: str
    path: str
    repo: str
    rev: str
    def __init__(self, repo: _Optional[str] = ..., path: _Optional[str] = ..., rev: _Optional[str] = ..., new_branch: _Optional[str] = ..., detach: bool = ...) -> None: ...

class GitWorktreeRemoveReply(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GitWorktreeRemoveRequest(_message.Message):
    __slots__ = ["force", "path", "repo"]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    force: bool
    path: str
    repo: str
    def __init__(self, repo: _Optional[str] = ..., path: _Optional[str] = ..., force: bool = ...) -> None: ...
