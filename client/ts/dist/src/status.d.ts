import type { Status as StatusMessage } from "../gen/tk/v1/rpc_pb.js";
import { Cancellation_Cause as Cause, Status_Code as Code } from "../gen/tk/v1/rpc_pb.js";
export { Cause, Code };
/**
 * What a Cancel achieved (tk.v1.CancelReply.Outcome), plus NOT_SENT: the
 * call was never sent, so there was nothing to cancel.
 */
export declare enum CancelOutcome {
    NOT_SENT = 0,
    CANCELLED = 1,
    NOT_FOUND = 2,
    ALREADY_DONE = 3,
    WRITE_CONTINUES = 4
}
/** "DEADLINE_EXCEEDED"; "CODE_<n>" for a number outside the table. */
export declare function codeName(code: number): string;
/** The name of a value of an enum, or its number as text. */
export declare function enumName(e: Record<number, string>, value: number): string;
/** Why a call ended before its natural end, and what that cost. */
export interface Cancellation {
    readonly cause: Cause | number;
    readonly processKilled: boolean;
    readonly writeCompleted: boolean;
    readonly cleanupMs: number;
}
/**
 * The status of a call, from tkd (fromServer) or made by the client when no
 * reply came (then the message says so). Compare code and reason, never
 * message.
 */
export declare class Status {
    readonly code: Code | number;
    readonly message: string;
    readonly reason: string;
    /** The bounded stderr excerpt of a tool that failed (head and tail). */
    readonly stderr: Uint8Array;
    readonly partial: boolean;
    readonly retryAfterMs: number;
    readonly elapsedUs: bigint;
    readonly cancellation: Cancellation;
    readonly fromServer: boolean;
    /** What did the call's work ("git grep", "libgit2"); for people only. */
    readonly tool: string;
    constructor(init: Partial<Status> & {
        code: Code | number;
    });
    get ok(): boolean;
    get codeName(): string;
    /** From a tk.v1.Status message (a reply's). */
    static fromProto(st: StatusMessage): Status;
    /** A status the client makes itself: no reply came. */
    static local(code: Code, message: string, cause?: Cause): Status;
    toString(): string;
}
/** A call that did not end OK. Compare code and reason, never message. */
export declare class TkError extends Error {
    name: string;
    readonly status: Status;
    constructor(status: Status);
    toString(): string;
    /** The gRPC code (a Code when the client knows it). */
    get code(): Code | number;
    get codeName(): string;
    get reason(): string;
    get stderr(): Uint8Array;
    get partial(): boolean;
    get retryAfterMs(): number;
    get cancellation(): Cancellation;
    get fromServer(): boolean;
    get tool(): string;
}
