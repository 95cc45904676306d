// SPDX-License-Identifier: MIT
// tk's Client: calls to tkd on one connection, at most once each.
//
// Mirrors libtkclient (client/lib/) and the Python client (client/python/tk/):
// call ids unique per connection, the deadline sent in the envelope
// (timeout_ms), nothing ever resent, a client that, when no reply has come
// 250 ms past the deadline, asks tkd where the call stands
// (tk.v1.Control/CallState) on the call's connection and waits on while tkd
// says it is queued or running; a lost connection reported as UNAVAILABLE
// ("whether it ran is unknown"); cancellation as tk.v1.Control/Cancel on the
// call's own connection (Call.cancel(), or an AbortSignal).
//
// This file is the Client: its connection dialed, its calls numbered,
// framed and started, the questions it asks on a call's connection, and
// what a call that was not sent or lost its connection ends with. A call
// in flight and its wait are inflight.ts's; the typed stubs' types and the
// method table stubs.ts's.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { create, createRegistry, fromBinary, isMessage, toBinary, } from "@bufbuild/protobuf";
import { files, services } from "../gen/tk/services.js";
import { CallStateReplySchema, CallStateRequestSchema } from "../gen/tk/v1/control_pb.js";
import { ReplySchema, RequestSchema } from "../gen/tk/v1/rpc_pb.js";
import { ConnectError, Connection, parseAddress } from "./conn.js";
import { ASK_TIMEOUT_MS, Call, NO_ANSWER, UNKNOWN_METHOD } from "./inflight.js";
import { Cause, Code, Status, TkError } from "./status.js";
import { specOf } from "./stubs.js";
import { absolutePaths, textInit } from "./text.js";
/** The longest reply frame a client accepts by default. */
export const DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024;
/**
 * The address tkd listens on by default: TK_ADDR if set, else
 * ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else ipc:///tmp/tk-<uid>/tkd.sock (as
 * tk_default_address of libtkclient).
 */
export function defaultAddress() {
    const addr = process.env.TK_ADDR ?? "";
    if (addr !== "")
        return addr;
    const xdg = process.env.XDG_RUNTIME_DIR ?? "";
    if (xdg.startsWith("/"))
        return `ipc://${xdg}/tk/tkd.sock`;
    return `ipc:///tmp/tk-${process.geteuid?.() ?? 0}/tkd.sock`;
}
/** Every message of proto/, by full name ("tk.v1.PingRequest"). */
export const registry = createRegistry(...files);
function timeoutMs(v) {
    if (v === undefined || v === 0)
        return 0;
    // Rounded first: 0.2 s in binary floating point is a hair over 200 ms.
    const ms = Math.ceil(Math.round(v * 1e6) / 1e6);
    if (!(v > 0) || ms > 0xffffffff) {
        throw new RangeError(`tk: timeoutMs must be > 0 and < 2^32, not ${v}`);
    }
    return ms;
}
/**
 * A connection to tkd: new Client(addr) (default: defaultAddress(), so
 * TK_ADDR). It dials on the first call and again on the call after its
 * connection dropped; calls share the connection, many at once.
 *
 *     const client = new Client();
 *     const reply = await client.control.ping({ data }, { timeoutMs: 2000 });
 *     client.close();
 *
 * Every method of proto/ is a typed method on an attribute per service
 * (client.git.revParse({ repo, rev }), client.git.startRevParse(...) ->
 * Call); call() and start() call any method by name.
 */
export class Client {
    address;
    endpoint;
    tls;
    maxReplyBytes;
    conn = null;
    dialing = null;
    closed = false;
    ids;
    constructor(addr, opts = {}) {
        this.address = addr ?? defaultAddress();
        this.endpoint = parseAddress(this.address);
        const env = process.env;
        this.tls = {
            ca: opts.tlsCa ?? orUndefined(env.TK_TLS_CA),
            cert: opts.tlsCert ?? orUndefined(env.TK_TLS_CERT),
            key: opts.tlsKey ?? orUndefined(env.TK_TLS_KEY),
            serverName: opts.tlsServerName,
        };
        if (this.endpoint.transport === "tls+tcp") {
            for (const [what, v] of Object.entries(this.tls)) {
                if (what !== "serverName" && typeof v === "string" && !v.includes("-----BEGIN")) {
                    readFileSync(v); // a file that cannot be read fails here, by name
                }
            }
        }
        this.maxReplyBytes = opts.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
        // Ids need only be unique per connection; a random start keeps the
        // ids of different clients apart in tkd's log.
        this.ids = (randomBytes(8).readBigUInt64LE() >> 16n) | 1n;
        for (const [attr, table] of Object.entries(services)) {
            const stub = {};
            for (const [name, spec] of Object.entries(table)) {
                const start = (request, options) => this.start(spec.method, create(spec.input, textInit(spec.input, request ?? {})), { ...options, replyType: spec.output });
                stub[name] = (request, options) => start(request, options).result();
                stub[`start${name[0].toUpperCase()}${name.slice(1)}`] = start;
            }
            this[attr] = stub;
        }
    }
    /**
     * Dials tkd now (calls dial when needed): resolves once the connection
     * and its SP handshake are done, rejects with TkError UNAVAILABLE.
     */
    async connect(timeoutMs = 10000) {
        try {
            await this.connection(timeoutMs);
        }
        catch (e) {
            throw new TkError(this.notSent(e, false));
        }
    }
    /** Closes the connection; calls in flight end CANCELLED (cause CALLER). Idempotent. */
    close() {
        this.closed = true;
        this.conn?.close();
        this.conn = null;
    }
    call(method, request, options) {
        return this.start(method, request, options).result();
    }
    start(method, request, 
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    options = {}) {
        const payload = this.payload(method, request);
        const decode = this.decoder(method, options.replyType);
        return this.startOn(null, method, payload, timeoutMs(options.timeoutMs), decode, true, options.signal);
    }
    /** @internal A call on conn (null: the client's connection). */
    startOn(conn, method, payload, timeout, decode, ask, signal) {
        if (this.closed)
            throw new Error("tk: the client is closed");
        const callId = this.ids;
        this.ids = (this.ids + 1n) & 0xffffffffffffffffn;
        const envelope = toBinary(RequestSchema, create(RequestSchema, {
            callId, method, timeoutMs: timeout, payload,
        }));
        const call = new Call(this, callId, method, decode, ask);
        void call.run(envelope, timeout, conn, signal);
        return call;
    }
    /** @internal The connection, dialed if there is none. */
    connection(timeoutMs) {
        if (this.closed)
            return Promise.reject(new ConnectError("the client is closed", "ECLOSED"));
        if (this.conn !== null && !this.conn.isClosed)
            return Promise.resolve(this.conn);
        if (this.dialing === null) {
            this.dialing = Connection.open(this.endpoint, {
                tls: this.tls, maxReplyBytes: this.maxReplyBytes, timeoutMs: Math.min(timeoutMs, 30000),
            }).then((c) => {
                this.dialing = null;
                if (this.closed) {
                    c.close();
                    throw new ConnectError("the client is closed", "ECLOSED");
                }
                this.conn = c;
                return c;
            }, (e) => {
                this.dialing = null;
                throw e;
            });
        }
        return this.dialing;
    }
    /** @internal Where call callId stands, asked on conn: a CallStateReply.State. */
    async callState(conn, callId) {
        const c = this.startOn(conn, "tk.v1.Control/CallState", toBinary(CallStateRequestSchema, create(CallStateRequestSchema, { callId })), ASK_TIMEOUT_MS, (b) => fromBinary(CallStateReplySchema, b), false);
        const st = await c.status();
        if (st.code === Code.UNIMPLEMENTED)
            return UNKNOWN_METHOD;
        if (!st.ok)
            return NO_ANSWER;
        return (await c.result()).state;
    }
    /** @internal The status of a call that could not be sent. */
    notSent(e, call = true) {
        if (this.closed) {
            return Status.local(Code.CANCELLED, "the client was closed during the call", Cause.CALLER);
        }
        const msg = e instanceof Error ? e.message : String(e);
        const errno = e instanceof ConnectError ? e.errno : undefined;
        let hint = "";
        if (errno === "ECONNREFUSED" || errno === "ENOENT") {
            hint = " (is tkd running there?)";
        }
        else if (this.endpoint.transport === "tls+tcp" && errno !== "ETIMEDOUT") {
            hint = " (the TLS handshake failed: tkd refuses a client without a certificate its " +
                "CA signed, and this client refuses a tkd whose certificate tlsCa did not sign or " +
                "that does not name the host)";
        }
        return Status.local(Code.UNAVAILABLE, `could not ${call ? "send to" : "connect to"} tkd ` +
            `at ${this.address}: ${msg}${hint}` +
            (call ? " (the call was not sent)" : ""));
    }
    /** @internal The status of a call whose connection ended before its reply. */
    failure(why) {
        if (this.closed || why.kind === "closed") {
            return Status.local(Code.CANCELLED, "the client was closed during the call", Cause.CALLER);
        }
        return Status.local(Code.UNAVAILABLE, `the connection to tkd at ${this.address} was lost while the call was ` +
            `in flight (${why.detail}); whether it ran is unknown (it is not resent)`);
    }
    /** @internal (status, reply) of a tk.v1.Reply frame. */
    decodeReply(data, callId, decode) {
        let env;
        try {
            env = fromBinary(ReplySchema, data);
        }
        catch {
            return [Status.local(Code.INTERNAL, `the reply (${data.length} bytes) is not a tk.v1.Reply`)];
        }
        if (env.callId !== callId && env.callId !== 0n) {
            return [Status.local(Code.INTERNAL, `the reply is for call ${env.callId}, not ${callId}`)];
        }
        if (env.status === undefined) {
            return [Status.local(Code.INTERNAL, "the reply carries no status")];
        }
        const status = Status.fromProto(env.status);
        if (!status.ok)
            return [status];
        try {
            return [status, decode(env.payload)];
        }
        catch {
            return [Status.local(Code.INTERNAL, "the reply payload does not decode as the method's reply")];
        }
    }
    payload(method, request) {
        if (request instanceof Uint8Array)
            return request;
        if (isMessage(request)) {
            const schema = registry.getMessage(request.$typeName);
            if (schema === undefined) {
                throw new TypeError(`tk: ${request.$typeName} is not a message of gen/ts`);
            }
            return toBinary(schema, absolutePaths(schema, request));
        }
        const spec = specOf(method);
        if (spec === undefined) {
            throw new TypeError(`tk: ${method} is not in gen/ts; give a message or bytes`);
        }
        const made = create(spec.input, textInit(spec.input, request));
        return toBinary(spec.input, absolutePaths(spec.input, made));
    }
    decoder(method, replyType) {
        if (replyType === "bytes")
            return (b) => b;
        const schema = replyType ?? specOf(method)?.output;
        if (schema === undefined) {
            throw new TypeError(`tk: ${method} is not in gen/ts; give options.replyType (a ` +
                "message schema, or \"bytes\" for the payload undecoded)");
        }
        return (b) => fromBinary(schema, b);
    }
}
function orUndefined(v) {
    return v === undefined || v === "" ? undefined : v;
}
