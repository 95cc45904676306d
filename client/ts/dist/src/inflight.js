// SPDX-License-Identifier: MIT
// A call in flight (Call, which index.ts exports): its envelope sent on the
// client's connection (or the one given), its reply decoded, and the wait
// for it: past the deadline, the questions to tkd about where the call
// stands (tk.v1.Control/CallState, asked through the client on the call's
// own connection) until tkd answers or the client gives up, saying why; and
// tk.v1.Control/Cancel for it (Call.cancel(), or an AbortSignal). The
// client (client.ts) dials, numbers and frames the calls; this file never
// opens a connection of its own.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CancelReplySchema, CancelRequestSchema } from "../gen/tk/v1/control_pb.js";
import { findMethod } from "./catalog.js";
import { Cause, CancelOutcome, Code, Status, TkError } from "./status.js";
/**
 * How long past the deadline the client waits for the reply before it asks
 * tkd where the call stands (TK_DEADLINE_GRACE_MS of libtkclient).
 */
export const GRACE_MS = 250;
/**
 * How long a call without a timeout may wait for its reply at most, and how
 * much longer than its deadline a call may wait while tkd says it runs.
 */
export const MAX_WAIT_MS = 15 * 60 * 1000;
/** What tkd takes to stop a write at its own timeout (TK_WRITE_STOP_MS). */
export const WRITE_STOP_MS = 5000;
/** The bound of a Cancel (tkd answers it inline). */
export const CANCEL_TIMEOUT_MS = 5000;
/** The bound of a CallState question, answered inline as a Cancel is. */
export const ASK_TIMEOUT_MS = 5000;
/** The longest pause between two questions about a late reply. */
export const ASK_MAX_PAUSE_MS = 2000;
/** Answers in a row that end the wait when ANSWERED or NOT_FOUND. */
export const ASK_SAME_ANSWERS = 3;
// CallStateReply.State, by number.
const QUEUED = 1;
const RUNNING = 2;
const ANSWERED = 3;
// The answer to a question that was not answered, and to one tkd does not know.
export const NO_ANSWER = -1;
export const UNKNOWN_METHOD = -2;
/**
 * A call in flight, from Client.start (or a start<Method> stub). result()
 * resolves to the reply or rejects with TkError; status() resolves to the
 * status of any end (partial, writeCompleted of a success); cancel() sends
 * tk.v1.Control/Cancel for it on its connection.
 */
export class Call {
    client;
    decode;
    ask;
    /** The call's id on its connection (tk.v1.Request.call_id). */
    callId;
    method;
    outcome;
    settle;
    ended = null;
    conn = null;
    requestId = 0;
    aborted = false;
    sentFlag = false;
    timer = null;
    // Asking about a late reply.
    nextAsk = Infinity;
    last = Infinity;
    pause = GRACE_MS;
    same = 0;
    lastState = null;
    write;
    ceilingMs;
    started = false;
    cancelled = null;
    /** @internal */
    constructor(client, callId, method, decode, ask) {
        this.client = client;
        this.decode = decode;
        this.ask = ask;
        this.callId = callId;
        this.method = method;
        this.outcome = new Promise((resolve) => { this.settle = resolve; });
        const m = findMethod(method);
        this.write = m?.kind === "WRITE";
        this.ceilingMs = m?.ceilingMs ?? 0;
    }
    /** Whether the call has ended. */
    get done() {
        return this.ended !== null;
    }
    /** Whether the request was handed to a connection. */
    get sent() {
        return this.sentFlag;
    }
    /** The status of the call's end, OK or not; never rejects. */
    status() {
        return this.outcome.then((o) => o.status);
    }
    /** The reply, or a TkError with the status of any other end. */
    async result() {
        const o = await this.outcome;
        if (!o.status.ok)
            throw new TkError(o.status);
        return o.reply;
    }
    /**
     * Sends tk.v1.Control/Cancel for this call on its connection and
     * resolves to tkd's outcome: CANCELLED (the call ends CANCELLED, cause
     * CALLER), WRITE_CONTINUES (a started WRITE runs to completion),
     * ALREADY_DONE, NOT_FOUND; NOT_SENT when the call was never sent (it
     * then ends CANCELLED without being sent). Rejects with TkError when the
     * Cancel itself fails.
     */
    cancel() {
        if (this.cancelled !== null)
            return this.cancelled;
        if (!this.sentFlag || this.conn === null) {
            this.aborted = true;
            if (this.ended === null && this.conn === null) {
                // Not sent yet: it never will be.
                this.finish(Status.local(Code.CANCELLED, "the call was cancelled before it was sent", Cause.CALLER));
            }
            return Promise.resolve(CancelOutcome.NOT_SENT);
        }
        const c = this.client.startOn(this.conn, "tk.v1.Control/Cancel", toBinary(CancelRequestSchema, create(CancelRequestSchema, { callId: this.callId })), CANCEL_TIMEOUT_MS, (b) => fromBinary(CancelReplySchema, b), false);
        this.cancelled = c.result().then((r) => r.outcome);
        return this.cancelled;
    }
    /** @internal Sends the envelope on conn (or ends the call saying why not). */
    async run(envelope, timeout, conn, signal) {
        const waitMs = timeout === 0 ? MAX_WAIT_MS : timeout + GRACE_MS;
        const t0 = Date.now();
        if (signal !== undefined) {
            if (signal.aborted) {
                this.aborted = true;
            }
            else {
                const onAbort = () => { this.cancel().catch(() => { }); };
                signal.addEventListener("abort", onAbort, { once: true });
                void this.outcome.then(() => signal.removeEventListener("abort", onAbort));
            }
        }
        if (conn === null) {
            try {
                conn = await this.client.connection(waitMs);
            }
            catch (e) {
                this.finish(this.client.notSent(e));
                return;
            }
        }
        if (this.aborted || this.ended !== null) {
            this.finish(Status.local(Code.CANCELLED, "the call was cancelled before it was sent", Cause.CALLER));
            return;
        }
        this.conn = conn;
        try {
            this.requestId = conn.send(envelope, {
                reply: (payload) => this.finish(...this.client.decodeReply(payload, this.callId, this.decode)),
                lost: (why) => this.finish(this.client.failure(why)),
            });
        }
        catch (e) {
            this.finish(this.client.notSent(e));
            return;
        }
        this.sentFlag = true;
        // The first question at the deadline plus the grace; however long tkd
        // says the call runs, MAX_WAIT_MS more at most. With the method's
        // default deadline, known only to tkd, nothing is asked.
        this.nextAsk = t0 + waitMs;
        this.last = timeout === 0 || !this.ask ? this.nextAsk : this.nextAsk + MAX_WAIT_MS;
        if (this.write) { // at least the write's own timeout, and its stop
            const own = t0 + this.ceilingMs + WRITE_STOP_MS;
            if (timeout === 0)
                this.nextAsk = Math.max(this.nextAsk, own);
            this.last = Math.max(this.last, own);
        }
        this.schedule();
    }
    schedule() {
        if (this.ended !== null)
            return;
        this.timer = setTimeout(() => { void this.askOnce(); }, Math.max(0, this.nextAsk - Date.now()));
    }
    async askOnce() {
        this.timer = null;
        if (this.ended !== null)
            return;
        const addr = this.client.address;
        let why;
        if (!this.ask || Date.now() >= this.last) {
            why = [Code.DEADLINE_EXCEEDED,
                `no reply from tkd at ${addr} within the deadline and ${GRACE_MS} ms of ` +
                    "grace: the server did not answer"];
        }
        else {
            const state = await this.client.callState(this.conn, this.callId);
            if (this.ended !== null)
                return;
            this.same = state === this.lastState ? this.same + 1 : 1;
            this.lastState = state;
            why = this.verdict(state);
        }
        if (why === null) {
            this.nextAsk = Math.min(Date.now() + this.pause, this.last);
            this.pause = Math.min(this.pause * 2, ASK_MAX_PAUSE_MS);
            this.schedule();
            return;
        }
        let [code, text] = why;
        if (this.started) {
            code = Code.UNKNOWN;
            text = `the write (call ${this.callId}) had started on tkd at ${addr}, which runs it ` +
                "to completion whatever its caller's deadline, but its reply did not reach this " +
                "client; whether it completed is unknown";
        }
        if (code !== Code.UNAVAILABLE && code !== Code.UNKNOWN) {
            text += " (a WRITE may still complete there)";
        }
        this.finish(Status.local(code, text, code === Code.DEADLINE_EXCEEDED ? Cause.DEADLINE : Cause.NONE));
    }
    // null to wait on after tkd's answer, else why the client stops waiting.
    verdict(state) {
        const addr = this.client.address;
        if (state === RUNNING && this.write)
            this.started = true; // tkd starts it before its deadline
        if (state === QUEUED || state === RUNNING)
            return null;
        if (state === NO_ANSWER) {
            return [Code.DEADLINE_EXCEEDED,
                `no reply from tkd at ${addr} within the deadline, and no answer within ` +
                    `${ASK_TIMEOUT_MS} ms when asked where the call stands: the server did not answer`];
        }
        if (state === UNKNOWN_METHOD) {
            return [Code.DEADLINE_EXCEEDED,
                `no reply from tkd at ${addr} within the deadline and ${GRACE_MS} ms of grace, ` +
                    "and this tkd cannot be asked where a call stands (tk.v1.Control/CallState is " +
                    "unknown to it)"];
        }
        if (this.same < ASK_SAME_ANSWERS)
            return null;
        if (state === ANSWERED) {
            return [Code.UNAVAILABLE,
                `tkd at ${addr} says it answered call ${this.callId}, but its reply did not arrive; ` +
                    "whether it ran is unknown"];
        }
        return [Code.DEADLINE_EXCEEDED,
            `no reply from tkd at ${addr} within the deadline, and tkd has no record of call ` +
                `${this.callId} on this connection`];
    }
    /** @internal */
    finish(status, reply) {
        if (this.ended !== null)
            return;
        this.ended = { status, reply };
        if (this.timer !== null)
            clearTimeout(this.timer);
        this.timer = null;
        if (this.conn !== null && this.sentFlag)
            this.conn.forget(this.requestId);
        this.settle(this.ended);
    }
}
