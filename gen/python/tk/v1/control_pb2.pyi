from tk.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Bucket(_message.Message):
    __slots__ = ["cumulative_count", "upper_bound"]
    CUMULATIVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    UPPER_BOUND_FIELD_NUMBER: _ClassVar[int]
    cumulative_count: int
    upper_bound: float
    def __init__(self, upper_bound: _Optional[float] = ..., cumulative_count: _Optional[int] = ...) -> None: ...

class CallStateReply(_message.Message):
    __slots__ = ["state"]
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ANSWERED: CallStateReply.State
    NOT_FOUND: CallStateReply.State
    QUEUED: CallStateReply.State
    RUNNING: CallStateReply.State
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATE_UNSPECIFIED: CallStateReply.State
    state: CallStateReply.State
    def __init__(self, state: _Optional[_Union[CallStateReply.State, str]] = ...) -> None: ...

class CallStateRequest(_message.Message):
    __slots__ = ["call_id"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    def __init__(self, call_id: _Optional[int] = ...) -> None: ...

class CancelReply(_message.Message):
    __slots__ = ["outcome"]
    class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ALREADY_DONE: CancelReply.Outcome
    CANCELLED: CancelReply.Outcome
    NOT_FOUND: CancelReply.Outcome
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_UNSPECIFIED: CancelReply.Outcome
    WRITE_CONTINUES: CancelReply.Outcome
    outcome: CancelReply.Outcome
    def __init__(self, outcome: _Optional[_Union[CancelReply.Outcome, str]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ["call_id"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    def __init__(self, call_id: _Optional[int] = ...) -> None: ...

class Histogram(_message.Message):
    __slots__ = ["buckets", "sample_count", "sample_sum"]
    BUCKETS_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_SUM_FIELD_NUMBER: _ClassVar[int]
    buckets: _containers.RepeatedCompositeFieldContainer[Bucket]
    sample_count: int
    sample_sum: float
    def __init__(self, sample_count: _Optional[int] = ..., sample_sum: _Optional[float] = ..., buckets: _Optional[_Iterable[_Union[Bucket, _Mapping]]] = ...) -> None: ...

class LabelPair(_message.Message):
    __slots__ = ["name", "value"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ListMethodsReply(_message.Message):
    __slots__ = ["methods"]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    methods: _containers.RepeatedCompositeFieldContainer[MethodInfo]
    def __init__(self, methods: _Optional[_Iterable[_Union[MethodInfo, _Mapping]]] = ...) -> None: ...

class ListMethodsRequest(_message.Message):
    __slots__ = ["service"]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    service: str
    def __init__(self, service: _Optional[str] = ...) -> None: ...

class ListNodesReply(_message.Message):
    __slots__ = ["nodes", "self_id", "ttl_ms"]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SELF_ID_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[NodeInfo]
    self_id: str
    ttl_ms: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[NodeInfo, _Mapping]]] = ..., self_id: _Optional[str] = ..., ttl_ms: _Optional[int] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class MethodInfo(_message.Message):
    __slots__ = ["ceiling_ms", "default_timeout_ms", "kind", "list", "name", "reply_type", "request_type"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CEILING_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_UNSPECIFIED: MethodInfo.Kind
    LIST_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ: MethodInfo.Kind
    REPLY_TYPE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    WRITE: MethodInfo.Kind
    ceiling_ms: int
    default_timeout_ms: int
    kind: MethodInfo.Kind
    list: _options_pb2.ListSpec
    name: str
    reply_type: str
    request_type: str
    def __init__(self, name: _Optional[str] = ..., request_type: _Optional[str] = ..., reply_type: _Optional[str] = ..., kind: _Optional[_Union[MethodInfo.Kind, str]] = ..., default_timeout_ms: _Optional[int] = ..., ceiling_ms: _Optional[int] = ..., list: _Optional[_Union[_options_pb2.ListSpec, _Mapping]] = ...) -> None: ...

class Metric(_message.Message):
    __slots__ = ["histogram", "labels", "value"]
    HISTOGRAM_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    histogram: Histogram
    labels: _containers.RepeatedCompositeFieldContainer[LabelPair]
    value: float
    def __init__(self, labels: _Optional[_Iterable[_Union[LabelPair, _Mapping]]] = ..., value: _Optional[float] = ..., histogram: _Optional[_Union[Histogram, _Mapping]] = ...) -> None: ...

class MetricFamily(_message.Message):
    __slots__ = ["help", "metrics", "name", "type"]
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    COUNTER: MetricFamily.Type
    GAUGE: MetricFamily.Type
    HELP_FIELD_NUMBER: _ClassVar[int]
    HISTOGRAM: MetricFamily.Type
    METRICS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TYPE_UNSPECIFIED: MetricFamily.Type
    help: str
    metrics: _containers.RepeatedCompositeFieldContainer[Metric]
    name: str
    type: MetricFamily.Type
    def __init__(self, name: _Optional[str] = ..., help: _Optional[str] = ..., type: _Optional[_Union[MetricFamily.Type, str]] = ..., metrics: _Optional[_Iterable[_Union[Metric, _Mapping]]] = ...) -> None: ...

class NodeInfo(_message.Message):
    __slots__ = ["address", "draining", "heartbeat_age_ms", "node_id", "roots", "version"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    ROOTS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    address: str
    draining: bool
    heartbeat_age_ms: int
    node_id: str
    roots: _containers.RepeatedScalarFieldContainer[str]
    version: str
    def __init__(self, node_id: _Optional[str] = ..., address: _Optional[str] = ..., roots: _Optional[_Iterable[str]] = ..., version: _Optional[str] = ..., draining: bool = ..., heartbeat_age_ms: _Optional[int] = ...) -> None: ...

class PingReply(_message.Message):
    __slots__ = ["data", "server_version", "uptime_ms"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    UPTIME_MS_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    server_version: str
    uptime_ms: int
    def __init__(self, data: _Optional[bytes] = ..., server_version: _Optional[str] = ..., uptime_ms: _Optional[int] = ...) -> None: ...

class PingRequest(_message.Message):
    __slots__ = ["data"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class StatsReply(_message.Message):
    __slots__ = ["families", "server_version", "uptime_ms"]
    FAMILIES_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    UPTIME_MS_FIELD_NUMBER: _ClassVar[int]
    families: _containers.RepeatedCompositeFieldContainer[MetricFamily]
    server_version: str
    uptime_ms: int
    def __init__(self, families: _Optional[_Iterable[_Union[MetricFamily, _Mapping]]] = ..., uptime_ms: _Optional[int] = ..., server_version: _Optional[str] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...
