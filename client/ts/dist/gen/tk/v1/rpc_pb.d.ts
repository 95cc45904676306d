import type { GenEnum, GenFile, GenMessage } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/rpc.proto.
 */
export declare const file_tk_v1_rpc: GenFile;
/**
 * @generated from message tk.v1.Request
 */
export type Request = Message<"tk.v1.Request"> & {
    /**
     * Chosen by the client, unique per connection; names the call for
     * tk.v1.Control/Cancel. 0 means "not cancellable".
     *
     * @generated from field: uint64 call_id = 1;
     */
    callId: bigint;
    /**
     * Full method name, gRPC style: "tk.v1.Control/Ping".
     *
     * @generated from field: string method = 2;
     */
    method: string;
    /**
     * Relative deadline in milliseconds (like grpc-timeout), so clocks never
     * need to agree. 0 means the method's default. The server caps it at the
     * method's ceiling.
     *
     * @generated from field: uint32 timeout_ms = 3;
     */
    timeoutMs: number;
    /**
     * The serialized request message of `method`.
     *
     * @generated from field: bytes payload = 4;
     */
    payload: Uint8Array;
};
/**
 * Describes the message tk.v1.Request.
 * Use `create(RequestSchema)` to create a new message.
 */
export declare const RequestSchema: GenMessage<Request>;
/**
 * @generated from message tk.v1.Reply
 */
export type Reply = Message<"tk.v1.Reply"> & {
    /**
     * @generated from field: uint64 call_id = 1;
     */
    callId: bigint;
    /**
     * @generated from field: tk.v1.Status status = 2;
     */
    status?: Status;
    /**
     * The serialized reply message of the method; empty unless status.code is
     * OK.
     *
     * @generated from field: bytes payload = 3;
     */
    payload: Uint8Array;
};
/**
 * Describes the message tk.v1.Reply.
 * Use `create(ReplySchema)` to create a new message.
 */
export declare const ReplySchema: GenMessage<Reply>;
/**
 * @generated from message tk.v1.Status
 */
export type Status = Message<"tk.v1.Status"> & {
    /**
     * @generated from field: tk.v1.Status.Code code = 1;
     */
    code: Status_Code;
    /**
     * For humans; never compare it.
     *
     * @generated from field: string message = 2;
     */
    message: string;
    /**
     * For machines: a stable UPPER_SNAKE word such as BAD_REVISION. Callers
     * compare reasons, never messages.
     *
     * @generated from field: string reason = 3;
     */
    reason: string;
    /**
     * A bounded excerpt of a tool's stderr (head and tail), as bytes: tools
     * print whatever the file system holds.
     *
     * @generated from field: bytes stderr_excerpt = 4;
     */
    stderrExcerpt: Uint8Array;
    /**
     * The reply holds fewer results than exist (a limit was reached).
     *
     * @generated from field: bool partial = 5;
     */
    partial: boolean;
    /**
     * When to try again, for RESOURCE_EXHAUSTED and UNAVAILABLE.
     *
     * @generated from field: uint32 retry_after_ms = 6;
     */
    retryAfterMs: number;
    /**
     * Server time from receipt of the request to the reply.
     *
     * @generated from field: uint64 elapsed_us = 7;
     */
    elapsedUs: bigint;
    /**
     * @generated from field: tk.v1.Cancellation cancellation = 8;
     */
    cancellation?: Cancellation;
    /**
     * What did the call's work, as tkd names it: the program it ran (or
     * tried to run) last, "git status", "git grep", "rg", "launchctl"; or
     * the library in tkd, "libgit2", "postgresql". Empty when neither (a
     * request refused before any ran, tk.v1.Control). For people (tkcall
     * -v), not to compare.
     *
     * @generated from field: string tool = 9;
     */
    tool: string;
};
/**
 * Describes the message tk.v1.Status.
 * Use `create(StatusSchema)` to create a new message.
 */
export declare const StatusSchema: GenMessage<Status>;
/**
 * The canonical gRPC status codes, same numbers.
 *
 * @generated from enum tk.v1.Status.Code
 */
export declare enum Status_Code {
    /**
     * @generated from enum value: OK = 0;
     */
    OK = 0,
    /**
     * @generated from enum value: CANCELLED = 1;
     */
    CANCELLED = 1,
    /**
     * @generated from enum value: UNKNOWN = 2;
     */
    UNKNOWN = 2,
    /**
     * @generated from enum value: INVALID_ARGUMENT = 3;
     */
    INVALID_ARGUMENT = 3,
    /**
     * @generated from enum value: DEADLINE_EXCEEDED = 4;
     */
    DEADLINE_EXCEEDED = 4,
    /**
     * @generated from enum value: NOT_FOUND = 5;
     */
    NOT_FOUND = 5,
    /**
     * @generated from enum value: ALREADY_EXISTS = 6;
     */
    ALREADY_EXISTS = 6,
    /**
     * @generated from enum value: PERMISSION_DENIED = 7;
     */
    PERMISSION_DENIED = 7,
    /**
     * @generated from enum value: RESOURCE_EXHAUSTED = 8;
     */
    RESOURCE_EXHAUSTED = 8,
    /**
     * @generated from enum value: FAILED_PRECONDITION = 9;
     */
    FAILED_PRECONDITION = 9,
    /**
     * @generated from enum value: ABORTED = 10;
     */
    ABORTED = 10,
    /**
     * @generated from enum value: OUT_OF_RANGE = 11;
     */
    OUT_OF_RANGE = 11,
    /**
     * @generated from enum value: UNIMPLEMENTED = 12;
     */
    UNIMPLEMENTED = 12,
    /**
     * @generated from enum value: INTERNAL = 13;
     */
    INTERNAL = 13,
    /**
     * @generated from enum value: UNAVAILABLE = 14;
     */
    UNAVAILABLE = 14,
    /**
     * @generated from enum value: DATA_LOSS = 15;
     */
    DATA_LOSS = 15,
    /**
     * @generated from enum value: UNAUTHENTICATED = 16;
     */
    UNAUTHENTICATED = 16
}
/**
 * Describes the enum tk.v1.Status.Code.
 */
export declare const Status_CodeSchema: GenEnum<Status_Code>;
/**
 * Why a call ended before running to its natural end, and what that cost.
 *
 * @generated from message tk.v1.Cancellation
 */
export type Cancellation = Message<"tk.v1.Cancellation"> & {
    /**
     * @generated from field: tk.v1.Cancellation.Cause cause = 1;
     */
    cause: Cancellation_Cause;
    /**
     * A child process (group) was killed to end the call.
     *
     * @generated from field: bool process_killed = 2;
     */
    processKilled: boolean;
    /**
     * A WRITE began and ran to completion (whatever its caller did
     * meanwhile). False for one refused before it began: it wrote nothing.
     *
     * @generated from field: bool write_completed = 3;
     */
    writeCompleted: boolean;
    /**
     * Time spent killing, draining and reaping after the decision to stop.
     *
     * @generated from field: uint32 cleanup_ms = 4;
     */
    cleanupMs: number;
};
/**
 * Describes the message tk.v1.Cancellation.
 * Use `create(CancellationSchema)` to create a new message.
 */
export declare const CancellationSchema: GenMessage<Cancellation>;
/**
 * @generated from enum tk.v1.Cancellation.Cause
 */
export declare enum Cancellation_Cause {
    /**
     * @generated from enum value: NONE = 0;
     */
    NONE = 0,
    /**
     * The caller sent tk.v1.Control/Cancel, or its connection closed.
     *
     * @generated from enum value: CALLER = 1;
     */
    CALLER = 1,
    /**
     * The call's deadline (or the method's ceiling) passed.
     *
     * @generated from enum value: DEADLINE = 2;
     */
    DEADLINE = 2,
    /**
     * tkd is shutting down.
     *
     * @generated from enum value: SHUTDOWN = 3;
     */
    SHUTDOWN = 3,
    /**
     * The server stopped early on purpose because a result limit was
     * reached; the call succeeded with partial results.
     *
     * @generated from enum value: LIMIT = 4;
     */
    LIMIT = 4
}
/**
 * Describes the enum tk.v1.Cancellation.Cause.
 */
export declare const Cancellation_CauseSchema: GenEnum<Cancellation_Cause>;
