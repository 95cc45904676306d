from tk.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ServiceExit(_message.Message):
    __slots__ = ["code", "signal"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    code: int
    signal: int
    def __init__(self, code: _Optional[int] = ..., signal: _Optional[int] = ...) -> None: ...

class ServiceManager(_message.Message):
    __slots__ = []
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    AUTO: ServiceManager.Kind
    LAUNCHD: ServiceManager.Kind
    SYSTEMD: ServiceManager.Kind
    def __init__(self) -> None: ...

class ServiceRegisterReply(_message.Message):
    __slots__ = ["action", "attempts", "backend", "path", "warnings"]
    class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTION_UNSPECIFIED: ServiceRegisterReply.Action
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    INSTALLED: ServiceRegisterReply.Action
    PATH_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED: ServiceRegisterReply.Action
    UPDATED: ServiceRegisterReply.Action
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    action: ServiceRegisterReply.Action
    attempts: int
    backend: ServiceManager.Kind
    path: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, action: _Optional[_Union[ServiceRegisterReply.Action, str]] = ..., attempts: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., backend: _Optional[_Union[ServiceManager.Kind, str]] = ..., path: _Optional[str] = ...) -> None: ...

class ServiceRegisterRequest(_message.Message):
    __slots__ = ["backend", "spec"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    spec: ServiceSpec
    def __init__(self, spec: _Optional[_Union[ServiceSpec, _Mapping]] = ..., backend: _Optional[_Union[ServiceManager.Kind, str]] = ...) -> None: ...

class ServiceRenderReply(_message.Message):
    __slots__ = ["backend", "definition", "path"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    definition: str
    path: str
    def __init__(self, backend: _Optional[_Union[ServiceManager.Kind, str]] = ..., path: _Optional[str] = ..., definition: _Optional[str] = ...) -> None: ...

class ServiceRenderRequest(_message.Message):
    __slots__ = ["backend", "spec"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    spec: ServiceSpec
    def __init__(self, spec: _Optional[_Union[ServiceSpec, _Mapping]] = ..., backend: _Optional[_Union[ServiceManager.Kind, str]] = ...) -> None: ...

class ServiceSpec(_message.Message):
    __slots__ = ["args", "env", "label", "program", "restart", "stderr_path", "stdout_path", "throttle_seconds", "working_dir"]
    class Restart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    class EnvEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ALWAYS: ServiceSpec.Restart
    ARGS_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    NEVER: ServiceSpec.Restart
    ON_FAILURE: ServiceSpec.Restart
    PROGRAM_FIELD_NUMBER: _ClassVar[int]
    RESTART_FIELD_NUMBER: _ClassVar[int]
    RESTART_UNSPECIFIED: ServiceSpec.Restart
    STDERR_PATH_FIELD_NUMBER: _ClassVar[int]
    STDOUT_PATH_FIELD_NUMBER: _ClassVar[int]
    THROTTLE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    args: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.ScalarMap[str, str]
    label: str
    program: str
    restart: ServiceSpec.Restart
    stderr_path: str
    stdout_path: str
    throttle_seconds: int
    working_dir: str
    def __init__(self, label: _Optional[str] = ..., program: _Optional[str] = ..., args: _Optional[_Iterable[str]] = ..., env: _Optional[_Mapping[str, str]] = ..., working_dir: _Optional[str] = ..., restart: _Optional[_Union[ServiceSpec.Restart, str]] = ..., throttle_seconds: _Optional[int] = ..., stdout_path: _Optional[str] = ..., stderr_path: _Optional[str] = ...) -> None: ...

class ServiceStatusReply(_message.Message):
    __slots__ = ["backend", "installed", "last_exit", "loaded", "path", "pid", "up_to_date"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    INSTALLED_FIELD_NUMBER: _ClassVar[int]
    LAST_EXIT_FIELD_NUMBER: _ClassVar[int]
    LOADED_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    UP_TO_DATE_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    installed: bool
    last_exit: ServiceExit
    loaded: bool
    path: str
    pid: int
    up_to_date: bool
    def __init__(self, backend: _Optional[_Union[ServiceManager.Kind, str]] = ..., path: _Optional[str] = ..., installed: bool = ..., up_to_date: bool = ..., loaded: bool = ..., pid: _Optional[int] = ..., last_exit: _Optional[_Union[ServiceExit, _Mapping]] = ...) -> None: ...

class ServiceStatusRequest(_message.Message):
    __slots__ = ["backend", "label", "spec"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    label: str
    spec: ServiceSpec
    def __init__(self, label: _Optional[str] = ..., backend: _Optional[_Union[ServiceManager.Kind, str]] = ..., spec: _Optional[_Union[ServiceSpec, _Mapping]] = ...) -> None: ...

class ServiceUnregisterReply(_message.Message):
    __slots__ = ["removed", "unloaded"]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    UNLOADED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    unloaded: bool
    def __init__(self, removed: bool = ..., unloaded: bool = ...) -> None: ...

class ServiceUnregisterRequest(_message.Message):
    __slots__ = ["backend", "label"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    backend: ServiceManager.Kind
    label: str
    def __init__(self, label: _Optional[str] = ..., backend: _Optional[_Union[ServiceManager.Kind, str]] = ...) -> None: ...
