import type { Client } from "./client.js";
import type { Connection } from "./conn.js";
import { CancelOutcome, Status } from "./status.js";
/**
 * How long past the deadline the client waits for the reply before it asks
 * tkd where the call stands (TK_DEADLINE_GRACE_MS of libtkclient).
 */
export declare const GRACE_MS = 250;
/**
 * How long a call without a timeout may wait for its reply at most, and how
 * much longer than its deadline a call may wait while tkd says it runs.
 */
export declare const MAX_WAIT_MS: number;
/** What tkd takes to stop a write at its own timeout (TK_WRITE_STOP_MS). */
export declare const WRITE_STOP_MS = 5000;
/** The bound of a Cancel (tkd answers it inline). */
export declare const CANCEL_TIMEOUT_MS = 5000;
/** The bound of a CallState question, answered inline as a Cancel is. */
export declare const ASK_TIMEOUT_MS = 5000;
/** The longest pause between two questions about a late reply. */
export declare const ASK_MAX_PAUSE_MS = 2000;
/** Answers in a row that end the wait when ANSWERED or NOT_FOUND. */
export declare const ASK_SAME_ANSWERS = 3;
export declare const NO_ANSWER = -1;
export declare const UNKNOWN_METHOD = -2;
/** How a call's reply payload becomes its reply. */
export type Decode<R> = (payload: Uint8Array) => R;
/**
 * A call in flight, from Client.start (or a start<Method> stub). result()
 * resolves to the reply or rejects with TkError; status() resolves to the
 * status of any end (partial, writeCompleted of a success); cancel() sends
 * tk.v1.Control/Cancel for it on its connection.
 */
export declare class Call<R> {
    private readonly client;
    private readonly decode;
    private readonly ask;
    /** The call's id on its connection (tk.v1.Request.call_id). */
    readonly callId: bigint;
    readonly method: string;
    private readonly outcome;
    private settle;
    private ended;
    private conn;
    private requestId;
    private aborted;
    private sentFlag;
    private timer;
    private nextAsk;
    private last;
    private pause;
    private same;
    private lastState;
    private readonly write;
    private readonly ceilingMs;
    private started;
    private cancelled;
    /** @internal */
    constructor(client: Client, callId: bigint, method: string, decode: Decode<R>, ask: boolean);
    /** Whether the call has ended. */
    get done(): boolean;
    /** Whether the request was handed to a connection. */
    get sent(): boolean;
    /** The status of the call's end, OK or not; never rejects. */
    status(): Promise<Status>;
    /** The reply, or a TkError with the status of any other end. */
    result(): Promise<R>;
    /**
     * Sends tk.v1.Control/Cancel for this call on its connection and
     * resolves to tkd's outcome: CANCELLED (the call ends CANCELLED, cause
     * CALLER), WRITE_CONTINUES (a started WRITE runs to completion),
     * ALREADY_DONE, NOT_FOUND; NOT_SENT when the call was never sent (it
     * then ends CANCELLED without being sent). Rejects with TkError when the
     * Cancel itself fails.
     */
    cancel(): Promise<CancelOutcome>;
    /** @internal Sends the envelope on conn (or ends the call saying why not). */
    run(envelope: Uint8Array, timeout: number, conn: Connection | null, signal?: AbortSignal): Promise<void>;
    private schedule;
    private askOnce;
    private verdict;
    /** @internal */
    finish(status: Status, reply?: R): void;
}
