// SPDX-License-Identifier: MIT
// The outcome of a call: Status (code, reason, message, stderr excerpt,
// cancellation, ...) and TkError, which carries the Status of a call that
// did not end OK. Mirrors tk_status of libtkclient and tk.status of the
// Python client.
// The canonical gRPC status codes (tk.v1.Status.Code) and why a call ended
// early (tk.v1.Cancellation.Cause): the generated enums, by shorter names.
import { Cancellation_Cause as Cause, Status_Code as Code } from "../gen/tk/v1/rpc_pb.js";
export { Cause, Code };
/**
 * What a Cancel achieved (tk.v1.CancelReply.Outcome), plus NOT_SENT: the
 * call was never sent, so there was nothing to cancel.
 */
export var CancelOutcome;
(function (CancelOutcome) {
    CancelOutcome[CancelOutcome["NOT_SENT"] = 0] = "NOT_SENT";
    CancelOutcome[CancelOutcome["CANCELLED"] = 1] = "CANCELLED";
    CancelOutcome[CancelOutcome["NOT_FOUND"] = 2] = "NOT_FOUND";
    CancelOutcome[CancelOutcome["ALREADY_DONE"] = 3] = "ALREADY_DONE";
    CancelOutcome[CancelOutcome["WRITE_CONTINUES"] = 4] = "WRITE_CONTINUES";
})(CancelOutcome || (CancelOutcome = {}));
/** "DEADLINE_EXCEEDED"; "CODE_<n>" for a number outside the table. */
export function codeName(code) {
    return Code[code] ?? `CODE_${code}`;
}
/** The name of a value of an enum, or its number as text. */
export function enumName(e, value) {
    return e[value] ?? String(value);
}
/**
 * The status of a call, from tkd (fromServer) or made by the client when no
 * reply came (then the message says so). Compare code and reason, never
 * message.
 */
export class Status {
    code;
    message;
    reason;
    /** The bounded stderr excerpt of a tool that failed (head and tail). */
    stderr;
    partial;
    retryAfterMs;
    elapsedUs;
    cancellation;
    fromServer;
    /** What did the call's work ("git grep", "libgit2"); for people only. */
    tool;
    constructor(init) {
        this.code = init.code;
        this.message = init.message ?? "";
        this.reason = init.reason ?? "";
        this.stderr = init.stderr ?? new Uint8Array(0);
        this.partial = init.partial ?? false;
        this.retryAfterMs = init.retryAfterMs ?? 0;
        this.elapsedUs = init.elapsedUs ?? 0n;
        this.cancellation = init.cancellation ?? {
            cause: Cause.NONE, processKilled: false, writeCompleted: false, cleanupMs: 0,
        };
        this.fromServer = init.fromServer ?? true;
        this.tool = init.tool ?? "";
    }
    get ok() {
        return this.code === Code.OK;
    }
    get codeName() {
        return codeName(this.code);
    }
    /** From a tk.v1.Status message (a reply's). */
    static fromProto(st) {
        const c = st.cancellation;
        return new Status({
            code: st.code,
            message: st.message,
            reason: st.reason,
            stderr: st.stderrExcerpt,
            partial: st.partial,
            retryAfterMs: st.retryAfterMs,
            elapsedUs: st.elapsedUs,
            cancellation: {
                cause: c?.cause ?? Cause.NONE,
                processKilled: c?.processKilled ?? false,
                writeCompleted: c?.writeCompleted ?? false,
                cleanupMs: c?.cleanupMs ?? 0,
            },
            fromServer: true,
            tool: st.tool,
        });
    }
    /** A status the client makes itself: no reply came. */
    static local(code, message, cause = Cause.NONE) {
        return new Status({
            code,
            message,
            cancellation: { cause, processKilled: false, writeCompleted: false, cleanupMs: 0 },
            fromServer: false,
        });
    }
    toString() {
        let out = `${this.codeName} (${this.code})`;
        if (this.reason)
            out += ` ${this.reason}`;
        out += `: ${this.message}`;
        if (this.cancellation.cause !== Cause.NONE) {
            out += ` [cause ${enumName(Cause, this.cancellation.cause)}]`;
        }
        return out;
    }
}
/** A call that did not end OK. Compare code and reason, never message. */
export class TkError extends Error {
    name = "TkError";
    status;
    constructor(status) {
        // message is the status's, as the other fields are; the first
        // line of the stack (what Node prints of an uncaught error) says all.
        super(status.message);
        this.status = status;
        if (this.stack !== undefined) {
            const nl = this.stack.indexOf("\n");
            this.stack = `TkError: ${status}` + (nl < 0 ? "" : this.stack.slice(nl));
        }
    }
    toString() {
        return `TkError: ${this.status}`;
    }
    /** The gRPC code (a Code when the client knows it). */
    get code() {
        return this.status.code;
    }
    get codeName() {
        return this.status.codeName;
    }
    get reason() {
        return this.status.reason;
    }
    get stderr() {
        return this.status.stderr;
    }
    get partial() {
        return this.status.partial;
    }
    get retryAfterMs() {
        return this.status.retryAfterMs;
    }
    get cancellation() {
        return this.status.cancellation;
    }
    get fromServer() {
        return this.status.fromServer;
    }
    get tool() {
        return this.status.tool;
    }
}
