import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { ListSpec } from "./options_pb.js";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/control.proto.
 */
export declare const file_tk_v1_control: GenFile;
/**
 * @generated from message tk.v1.PingRequest
 */
export type PingRequest = Message<"tk.v1.PingRequest"> & {
    /**
     * @generated from field: bytes data = 1;
     */
    data: Uint8Array;
};
/**
 * Describes the message tk.v1.PingRequest.
 * Use `create(PingRequestSchema)` to create a new message.
 */
export declare const PingRequestSchema: GenMessage<PingRequest>;
/**
 * @generated from message tk.v1.PingReply
 */
export type PingReply = Message<"tk.v1.PingReply"> & {
    /**
     * @generated from field: bytes data = 1;
     */
    data: Uint8Array;
    /**
     * @generated from field: string server_version = 2;
     */
    serverVersion: string;
    /**
     * @generated from field: uint64 uptime_ms = 3;
     */
    uptimeMs: bigint;
};
/**
 * Describes the message tk.v1.PingReply.
 * Use `create(PingReplySchema)` to create a new message.
 */
export declare const PingReplySchema: GenMessage<PingReply>;
/**
 * @generated from message tk.v1.CancelRequest
 */
export type CancelRequest = Message<"tk.v1.CancelRequest"> & {
    /**
     * @generated from field: uint64 call_id = 1;
     */
    callId: bigint;
};
/**
 * Describes the message tk.v1.CancelRequest.
 * Use `create(CancelRequestSchema)` to create a new message.
 */
export declare const CancelRequestSchema: GenMessage<CancelRequest>;
/**
 * @generated from message tk.v1.CancelReply
 */
export type CancelReply = Message<"tk.v1.CancelReply"> & {
    /**
     * @generated from field: tk.v1.CancelReply.Outcome outcome = 1;
     */
    outcome: CancelReply_Outcome;
};
/**
 * Describes the message tk.v1.CancelReply.
 * Use `create(CancelReplySchema)` to create a new message.
 */
export declare const CancelReplySchema: GenMessage<CancelReply>;
/**
 * @generated from enum tk.v1.CancelReply.Outcome
 */
export declare enum CancelReply_Outcome {
    /**
     * @generated from enum value: OUTCOME_UNSPECIFIED = 0;
     */
    OUTCOME_UNSPECIFIED = 0,
    /**
     * The call was cancelled; its own reply carries CANCELLED, cause CALLER.
     *
     * @generated from enum value: CANCELLED = 1;
     */
    CANCELLED = 1,
    /**
     * No call with that id is in flight on this connection.
     *
     * @generated from enum value: NOT_FOUND = 2;
     */
    NOT_FOUND = 2,
    /**
     * The call has already been answered.
     *
     * @generated from enum value: ALREADY_DONE = 3;
     */
    ALREADY_DONE = 3,
    /**
     * The call is a WRITE that has started: it runs to completion and its
     * reply says write_completed.
     *
     * @generated from enum value: WRITE_CONTINUES = 4;
     */
    WRITE_CONTINUES = 4
}
/**
 * Describes the enum tk.v1.CancelReply.Outcome.
 */
export declare const CancelReply_OutcomeSchema: GenEnum<CancelReply_Outcome>;
/**
 * @generated from message tk.v1.CallStateRequest
 */
export type CallStateRequest = Message<"tk.v1.CallStateRequest"> & {
    /**
     * @generated from field: uint64 call_id = 1;
     */
    callId: bigint;
};
/**
 * Describes the message tk.v1.CallStateRequest.
 * Use `create(CallStateRequestSchema)` to create a new message.
 */
export declare const CallStateRequestSchema: GenMessage<CallStateRequest>;
/**
 * @generated from message tk.v1.CallStateReply
 */
export type CallStateReply = Message<"tk.v1.CallStateReply"> & {
    /**
     * @generated from field: tk.v1.CallStateReply.State state = 1;
     */
    state: CallStateReply_State;
};
/**
 * Describes the message tk.v1.CallStateReply.
 * Use `create(CallStateReplySchema)` to create a new message.
 */
export declare const CallStateReplySchema: GenMessage<CallStateReply>;
/**
 * @generated from enum tk.v1.CallStateReply.State
 */
export declare enum CallStateReply_State {
    /**
     * @generated from enum value: STATE_UNSPECIFIED = 0;
     */
    STATE_UNSPECIFIED = 0,
    /**
     * Received and waiting for a worker: it will run, or be answered
     * EXPIRED_IN_QUEUE or CANCELLED without running.
     *
     * @generated from enum value: QUEUED = 1;
     */
    QUEUED = 1,
    /**
     * Its handler runs (a READ past its deadline is being stopped), or its
     * reply is being handed to the connection.
     *
     * @generated from enum value: RUNNING = 2;
     */
    RUNNING = 2,
    /**
     * Its reply was handed to this connection before this reply was: the
     * connection delivers the two in that order.
     *
     * @generated from enum value: ANSWERED = 3;
     */
    ANSWERED = 3,
    /**
     * No call with that id is known on this connection: it never arrived,
     * or it was answered so long ago that tkd no longer remembers it.
     *
     * @generated from enum value: NOT_FOUND = 4;
     */
    NOT_FOUND = 4
}
/**
 * Describes the enum tk.v1.CallStateReply.State.
 */
export declare const CallStateReply_StateSchema: GenEnum<CallStateReply_State>;
/**
 * @generated from message tk.v1.ListMethodsRequest
 */
export type ListMethodsRequest = Message<"tk.v1.ListMethodsRequest"> & {
    /**
     * Only methods of this service ("tk.v1.Control"); empty for all.
     *
     * @generated from field: string service = 1;
     */
    service: string;
};
/**
 * Describes the message tk.v1.ListMethodsRequest.
 * Use `create(ListMethodsRequestSchema)` to create a new message.
 */
export declare const ListMethodsRequestSchema: GenMessage<ListMethodsRequest>;
/**
 * @generated from message tk.v1.MethodInfo
 */
export type MethodInfo = Message<"tk.v1.MethodInfo"> & {
    /**
     * "tk.v1.Control/Ping"
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * Full message names: "tk.v1.PingRequest".
     *
     * @generated from field: string request_type = 2;
     */
    requestType: string;
    /**
     * @generated from field: string reply_type = 3;
     */
    replyType: string;
    /**
     * @generated from field: tk.v1.MethodInfo.Kind kind = 4;
     */
    kind: MethodInfo_Kind;
    /**
     * Used when a request says timeout_ms 0.
     *
     * @generated from field: uint32 default_timeout_ms = 5;
     */
    defaultTimeoutMs: number;
    /**
     * No call of this method runs longer; for a WRITE, its own timeout.
     *
     * @generated from field: uint32 ceiling_ms = 6;
     */
    ceilingMs: number;
    /**
     * The reply's list that grows with what the method reads, and its
     * ceiling (ListSpec, options.proto); unset when the reply has none.
     *
     * @generated from field: tk.v1.ListSpec list = 7;
     */
    list?: ListSpec;
};
/**
 * Describes the message tk.v1.MethodInfo.
 * Use `create(MethodInfoSchema)` to create a new message.
 */
export declare const MethodInfoSchema: GenMessage<MethodInfo>;
/**
 * @generated from enum tk.v1.MethodInfo.Kind
 */
export declare enum MethodInfo_Kind {
    /**
     * @generated from enum value: KIND_UNSPECIFIED = 0;
     */
    KIND_UNSPECIFIED = 0,
    /**
     * Follows its caller: cancel and deadline end it.
     *
     * @generated from enum value: READ = 1;
     */
    READ = 1,
    /**
     * Runs to completion under its own timeout once started.
     *
     * @generated from enum value: WRITE = 2;
     */
    WRITE = 2
}
/**
 * Describes the enum tk.v1.MethodInfo.Kind.
 */
export declare const MethodInfo_KindSchema: GenEnum<MethodInfo_Kind>;
/**
 * @generated from message tk.v1.ListMethodsReply
 */
export type ListMethodsReply = Message<"tk.v1.ListMethodsReply"> & {
    /**
     * @generated from field: repeated tk.v1.MethodInfo methods = 1;
     */
    methods: MethodInfo[];
};
/**
 * Describes the message tk.v1.ListMethodsReply.
 * Use `create(ListMethodsReplySchema)` to create a new message.
 */
export declare const ListMethodsReplySchema: GenMessage<ListMethodsReply>;
/**
 * @generated from message tk.v1.ListNodesRequest
 */
export type ListNodesRequest = Message<"tk.v1.ListNodesRequest"> & {};
/**
 * Describes the message tk.v1.ListNodesRequest.
 * Use `create(ListNodesRequestSchema)` to create a new message.
 */
export declare const ListNodesRequestSchema: GenMessage<ListNodesRequest>;
/**
 * @generated from message tk.v1.NodeInfo
 */
export type NodeInfo = Message<"tk.v1.NodeInfo"> & {
    /**
     * tkd --node-id: unique in the fleet.
     *
     * @generated from field: string node_id = 1;
     */
    nodeId: string;
    /**
     * Where clients dial it (tkd --advertise): tls+tcp://HOST:PORT.
     *
     * @generated from field: string address = 2;
     */
    address: string;
    /**
     * Its --root directories, resolved (realpath) on its machine. A path
     * belongs to the node whose root is its longest prefix.
     *
     * @generated from field: repeated string roots = 3;
     */
    roots: string[];
    /**
     * Its tkd version.
     *
     * @generated from field: string version = 4;
     */
    version: string;
    /**
     * It has been told to stop (SIGTERM): it takes no new calls. Clients
     * send it nothing; it leaves the table when it exits.
     *
     * @generated from field: bool draining = 5;
     */
    draining: boolean;
    /**
     * How long ago it last refreshed its row, by PostgreSQL's clock (the
     * nodes' own clocks need not agree).
     *
     * @generated from field: uint64 heartbeat_age_ms = 6;
     */
    heartbeatAgeMs: bigint;
};
/**
 * Describes the message tk.v1.NodeInfo.
 * Use `create(NodeInfoSchema)` to create a new message.
 */
export declare const NodeInfoSchema: GenMessage<NodeInfo>;
/**
 * @generated from message tk.v1.ListNodesReply
 */
export type ListNodesReply = Message<"tk.v1.ListNodesReply"> & {
    /**
     * @generated from field: repeated tk.v1.NodeInfo nodes = 1;
     */
    nodes: NodeInfo[];
    /**
     * The node that answered; "" when this tkd is no member of a fleet.
     *
     * @generated from field: string self_id = 2;
     */
    selfId: string;
    /**
     * A node whose heartbeat is older than this is left out; clients read
     * the list again at least this often.
     *
     * @generated from field: uint32 ttl_ms = 3;
     */
    ttlMs: number;
};
/**
 * Describes the message tk.v1.ListNodesReply.
 * Use `create(ListNodesReplySchema)` to create a new message.
 */
export declare const ListNodesReplySchema: GenMessage<ListNodesReply>;
/**
 * @generated from message tk.v1.StatsRequest
 */
export type StatsRequest = Message<"tk.v1.StatsRequest"> & {};
/**
 * Describes the message tk.v1.StatsRequest.
 * Use `create(StatsRequestSchema)` to create a new message.
 */
export declare const StatsRequestSchema: GenMessage<StatsRequest>;
/**
 * A metric family as Prometheus has it (its data model, which
 * io.prometheus.client's MetricFamily also carries): one name, its help
 * and type, and a metric for each set of label values seen so far.
 *
 * @generated from message tk.v1.MetricFamily
 */
export type MetricFamily = Message<"tk.v1.MetricFamily"> & {
    /**
     * Prometheus' name: "tk_calls_total", "tk_call_run_seconds".
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * @generated from field: string help = 2;
     */
    help: string;
    /**
     * @generated from field: tk.v1.MetricFamily.Type type = 3;
     */
    type: MetricFamily_Type;
    /**
     * @generated from field: repeated tk.v1.Metric metrics = 4;
     */
    metrics: Metric[];
};
/**
 * Describes the message tk.v1.MetricFamily.
 * Use `create(MetricFamilySchema)` to create a new message.
 */
export declare const MetricFamilySchema: GenMessage<MetricFamily>;
/**
 * @generated from enum tk.v1.MetricFamily.Type
 */
export declare enum MetricFamily_Type {
    /**
     * @generated from enum value: TYPE_UNSPECIFIED = 0;
     */
    TYPE_UNSPECIFIED = 0,
    /**
     * Only grows while tkd runs; it restarts from 0 with tkd.
     *
     * @generated from enum value: COUNTER = 1;
     */
    COUNTER = 1,
    /**
     * Goes up and down: how many there are now.
     *
     * @generated from enum value: GAUGE = 2;
     */
    GAUGE = 2,
    /**
     * Observations counted into buckets by upper bound.
     *
     * @generated from enum value: HISTOGRAM = 3;
     */
    HISTOGRAM = 3
}
/**
 * Describes the enum tk.v1.MetricFamily.Type.
 */
export declare const MetricFamily_TypeSchema: GenEnum<MetricFamily_Type>;
/**
 * @generated from message tk.v1.LabelPair
 */
export type LabelPair = Message<"tk.v1.LabelPair"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * @generated from field: string value = 2;
     */
    value: string;
};
/**
 * Describes the message tk.v1.LabelPair.
 * Use `create(LabelPairSchema)` to create a new message.
 */
export declare const LabelPairSchema: GenMessage<LabelPair>;
/**
 * @generated from message tk.v1.Metric
 */
export type Metric = Message<"tk.v1.Metric"> & {
    /**
     * Sorted by name.
     *
     * @generated from field: repeated tk.v1.LabelPair labels = 1;
     */
    labels: LabelPair[];
    /**
     * A counter's or a gauge's value.
     *
     * @generated from field: double value = 2;
     */
    value: number;
    /**
     * A histogram's.
     *
     * @generated from field: tk.v1.Histogram histogram = 3;
     */
    histogram?: Histogram;
};
/**
 * Describes the message tk.v1.Metric.
 * Use `create(MetricSchema)` to create a new message.
 */
export declare const MetricSchema: GenMessage<Metric>;
/**
 * @generated from message tk.v1.Histogram
 */
export type Histogram = Message<"tk.v1.Histogram"> & {
    /**
     * @generated from field: uint64 sample_count = 1;
     */
    sampleCount: bigint;
    /**
     * In the family's unit: seconds for "_seconds".
     *
     * @generated from field: double sample_sum = 2;
     */
    sampleSum: number;
    /**
     * Ascending upper bounds; each count includes those of the buckets
     * before it. The last bound is +Inf, and its count is sample_count.
     *
     * @generated from field: repeated tk.v1.Bucket buckets = 3;
     */
    buckets: Bucket[];
};
/**
 * Describes the message tk.v1.Histogram.
 * Use `create(HistogramSchema)` to create a new message.
 */
export declare const HistogramSchema: GenMessage<Histogram>;
/**
 * @generated from message tk.v1.Bucket
 */
export type Bucket = Message<"tk.v1.Bucket"> & {
    /**
     * @generated from field: double upper_bound = 1;
     */
    upperBound: number;
    /**
     * @generated from field: uint64 cumulative_count = 2;
     */
    cumulativeCount: bigint;
};
/**
 * Describes the message tk.v1.Bucket.
 * Use `create(BucketSchema)` to create a new message.
 */
export declare const BucketSchema: GenMessage<Bucket>;
/**
 * @generated from message tk.v1.StatsReply
 */
export type StatsReply = Message<"tk.v1.StatsReply"> & {
    /**
     * Sorted by name.
     *
     * @generated from field: repeated tk.v1.MetricFamily families = 1;
     */
    families: MetricFamily[];
    /**
     * @generated from field: uint64 uptime_ms = 2;
     */
    uptimeMs: bigint;
    /**
     * @generated from field: string server_version = 3;
     */
    serverVersion: string;
};
/**
 * Describes the message tk.v1.StatsReply.
 * Use `create(StatsReplySchema)` to create a new message.
 */
export declare const StatsReplySchema: GenMessage<StatsReply>;
/**
 * @generated from service tk.v1.Control
 */
export declare const Control: GenService<{
    /**
     * Echoes `data`; says which tkd answered and for how long it has run.
     * Answered on receipt, even when every worker is busy: it tells "tkd
     * is alive" apart from "tkd is saturated".
     *
     * @generated from rpc tk.v1.Control.Ping
     */
    ping: {
        methodKind: "unary";
        input: typeof PingRequestSchema;
        output: typeof PingReplySchema;
    };
    /**
     * Cancels a call of the same connection. Calls of other connections are
     * never found: a client can cancel only its own calls.
     *
     * @generated from rpc tk.v1.Control.Cancel
     */
    cancel: {
        methodKind: "unary";
        input: typeof CancelRequestSchema;
        output: typeof CancelReplySchema;
    };
    /**
     * Where a call of the same connection stands, without touching it. A
     * client whose deadline has passed with no reply asks this before it
     * gives up, so that a reply tkd is still about to send is waited for.
     *
     * @generated from rpc tk.v1.Control.CallState
     */
    callState: {
        methodKind: "unary";
        input: typeof CallStateRequestSchema;
        output: typeof CallStateReplySchema;
    };
    /**
     * Every method tkd serves, with its kind, timeouts and the ceiling of
     * its reply's list.
     *
     * @generated from rpc tk.v1.Control.ListMethods
     */
    listMethods: {
        methodKind: "unary";
        input: typeof ListMethodsRequestSchema;
        output: typeof ListMethodsReplySchema;
    };
    /**
     * The live nodes of the fleet this tkd is a member of (tkd --node-id):
     * the membership table in PostgreSQL as this node last read it, nodes
     * whose heartbeat is older than ttl_ms left out. A tkd that is no
     * member answers with no nodes and self_id "": its clients use the
     * address they dialed, as with one tkd. Answered from memory, inline.
     * The table is what the database's writers put there: at most 1024
     * nodes and 1 MiB of their ids, addresses, versions and roots (partial
     * beyond).
     *
     * @generated from rpc tk.v1.Control.ListNodes
     */
    listNodes: {
        methodKind: "unary";
        input: typeof ListNodesRequestSchema;
        output: typeof ListNodesReplySchema;
    };
    /**
     * What tkd has counted since it started: calls by method and status
     * code, their time in the queue and running, the queue, connections,
     * processes, search slots, git reads and the PostgreSQL pool. The same
     * families, names and labels as its Prometheus exposition (tkd
     * --metrics-listen). Inline, as Ping is: it answers when every worker
     * is busy, which is when it is wanted.
     *
     * @generated from rpc tk.v1.Control.Stats
     */
    stats: {
        methodKind: "unary";
        input: typeof StatsRequestSchema;
        output: typeof StatsReplySchema;
    };
}>;
