// SPDX-License-Identifier: MIT
// tk's Client: calls to tkd on one connection, at most once each.
//
// Mirrors libtkclient (client/lib/client.c) and the Python client
// (client/python/tk/client.py): call ids unique per connection, the
// deadline sent in the envelope (timeout_ms), nothing ever resent, a client
// that, when no reply has come 250 ms past the deadline, asks tkd where the
// call stands (tk.v1.Control/CallState) on the call's connection and waits
// on while tkd says it is queued or running; a lost connection reported as
// UNAVAILABLE ("whether it ran is unknown"); cancellation as
// tk.v1.Control/Cancel on the call's own connection (Call.cancel(), or an
// AbortSignal).

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

import {
  type DescMessage, type Message, type MessageInitShape, type MessageShape, type Registry,
  create, createRegistry, fromBinary, isMessage, toBinary,
} from "@bufbuild/protobuf";

import { files, services } from "../gen/tk/services.js";
import {
  CallStateReplySchema, CallStateRequestSchema, CancelReplySchema, CancelRequestSchema,
} from "../gen/tk/v1/control_pb.js";
import { ReplySchema, RequestSchema } from "../gen/tk/v1/rpc_pb.js";
import { findMethod } from "./catalog.js";
import { ConnectError, Connection, type Endpoint, type LostReason, type TlsFiles, parseAddress }
  from "./conn.js";
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
/** The longest reply frame a client accepts by default. */
export const DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024;

// CallStateReply.State, by number.
const QUEUED = 1;
const RUNNING = 2;
const ANSWERED = 3;
// The answer to a question that was not answered, and to one tkd does not know.
const NO_ANSWER = -1;
const UNKNOWN_METHOD = -2;

/**
 * The address tkd listens on by default: TK_ADDR if set, else
 * ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else ipc:///tmp/tk-<uid>/tkd.sock (as
 * tk_default_address of libtkclient).
 */
export function defaultAddress(): string {
  const addr = process.env.TK_ADDR ?? "";
  if (addr !== "") return addr;
  const xdg = process.env.XDG_RUNTIME_DIR ?? "";
  if (xdg.startsWith("/")) return `ipc://${xdg}/tk/tkd.sock`;
  return `ipc:///tmp/tk-${process.geteuid?.() ?? 0}/tkd.sock`;
}

/** Every message of proto/, by full name ("tk.v1.PingRequest"). */
export const registry: Registry = createRegistry(...files);

/** The options of one call. */
export interface CallOptions {
  /**
   * The deadline in milliseconds, sent to tkd as timeout_ms (relative, so
   * clocks never need to agree); omitted or 0: the method's default.
   */
  readonly timeoutMs?: number;
  /**
   * Aborting it cancels the call: tk.v1.Control/Cancel on the call's
   * connection. The call then ends with tkd's answer (CANCELLED, cause
   * CALLER; a started WRITE runs to completion and ends with its result).
   */
  readonly signal?: AbortSignal;
}

/** The options of a call by name: the reply's type too. */
export interface GenericCallOptions<D extends DescMessage = DescMessage> extends CallOptions {
  /**
   * The schema to decode the reply as (default: from the generated
   * services), or "bytes" for the payload undecoded; a method gen/ts does
   * not know needs one.
   */
  readonly replyType?: D | "bytes";
}

/** The options of a Client. */
export interface ClientOptions {
  /** tls+tcp://: PEM files or their text; default TK_TLS_CA, TK_TLS_CERT, TK_TLS_KEY. */
  readonly tlsCa?: string | Buffer;
  readonly tlsCert?: string | Buffer;
  readonly tlsKey?: string | Buffer;
  /** The name tkd's certificate must have (default: the URL's host). */
  readonly tlsServerName?: string;
  /** A longer reply frame drops the connection (default 256 MiB). */
  readonly maxReplyBytes?: number;
}

type MethodSpec = {
  readonly method: string;
  readonly input: DescMessage;
  readonly output: DescMessage;
};

/** The typed methods of one service: m(request, options) and startM(...). */
export type Stub<S> = {
  -readonly [K in keyof S]: S[K] extends MethodSpec
    ? (request?: MessageInitShape<S[K]["input"]>, options?: CallOptions)
      => Promise<MessageShape<S[K]["output"]>>
    : never;
} & {
  -readonly [K in keyof S as K extends string ? `start${Capitalize<K>}` : never]:
    S[K] extends MethodSpec
      ? (request?: MessageInitShape<S[K]["input"]>, options?: CallOptions)
        => Call<MessageShape<S[K]["output"]>>
      : never;
};

/** Every service of proto/ as a typed stub: client.git.revParse(...). */
export type Services = { -readonly [S in keyof typeof services]: Stub<(typeof services)[S]> };

type Decode<R> = (payload: Uint8Array) => R;

interface Outcome<R> {
  readonly status: Status;
  readonly reply: R | undefined;
}

function timeoutMs(v: number | undefined): number {
  if (v === undefined || v === 0) return 0;
  // Rounded first: 0.2 s in binary floating point is a hair over 200 ms.
  const ms = Math.ceil(Math.round(v * 1e6) / 1e6);
  if (!(v > 0) || ms > 0xffffffff) {
    throw new RangeError(`tk: timeoutMs must be > 0 and < 2^32, not ${v}`);
  }
  return ms;
}

/**
 * A call in flight, from Client.start (or a start<Method> stub). result()
 * resolves to the reply or rejects with TkError; status() resolves to the
 * status of any end (partial, writeCompleted of a success); cancel() sends
 * tk.v1.Control/Cancel for it on its connection.
 */
export class Call<R> {
  /** The call's id on its connection (tk.v1.Request.call_id). */
  readonly callId: bigint;
  readonly method: string;
  private readonly outcome: Promise<Outcome<R>>;
  private settle!: (o: Outcome<R>) => void;
  private ended: Outcome<R> | null = null;
  private conn: Connection | null = null;
  private requestId = 0;
  private aborted = false;
  private sentFlag = false;
  private timer: NodeJS.Timeout | null = null;
  // Asking about a late reply.
  private nextAsk = Infinity;
  private last = Infinity;
  private pause = GRACE_MS;
  private same = 0;
  private lastState: number | null = null;
  private readonly write: boolean;
  private readonly ceilingMs: number;
  private started = false;
  private cancelled: Promise<CancelOutcome> | null = null;

  /** @internal */
  constructor(private readonly client: Client, callId: bigint, method: string,
              private readonly decode: Decode<R>, private readonly ask: boolean) {
    this.callId = callId;
    this.method = method;
    this.outcome = new Promise((resolve) => { this.settle = resolve; });
    const m = findMethod(method);
    this.write = m?.kind === "WRITE";
    this.ceilingMs = m?.ceilingMs ?? 0;
  }

  /** Whether the call has ended. */
  get done(): boolean {
    return this.ended !== null;
  }

  /** Whether the request was handed to a connection. */
  get sent(): boolean {
    return this.sentFlag;
  }

  /** The status of the call's end, OK or not; never rejects. */
  status(): Promise<Status> {
    return this.outcome.then((o) => o.status);
  }

  /** The reply, or a TkError with the status of any other end. */
  async result(): Promise<R> {
    const o = await this.outcome;
    if (!o.status.ok) throw new TkError(o.status);
    return o.reply as R;
  }

  /**
   * Sends tk.v1.Control/Cancel for this call on its connection and
   * resolves to tkd's outcome: CANCELLED (the call ends CANCELLED, cause
   * CALLER), WRITE_CONTINUES (a started WRITE runs to completion),
   * ALREADY_DONE, NOT_FOUND; NOT_SENT when the call was never sent (it
   * then ends CANCELLED without being sent). Rejects with TkError when the
   * Cancel itself fails.
   */
  cancel(): Promise<CancelOutcome> {
    if (this.cancelled !== null) return this.cancelled;
    if (!this.sentFlag || this.conn === null) {
      this.aborted = true;
      if (this.ended === null && this.conn === null) {
        // Not sent yet: it never will be.
        this.finish(Status.local(Code.CANCELLED, "the call was cancelled before it was sent",
                                 Cause.CALLER));
      }
      return Promise.resolve(CancelOutcome.NOT_SENT);
    }
    const c = this.client.startOn(this.conn, "tk.v1.Control/Cancel",
                                  toBinary(CancelRequestSchema,
                                           create(CancelRequestSchema, { callId: this.callId })),
                                  CANCEL_TIMEOUT_MS,
                                  (b) => fromBinary(CancelReplySchema, b), false);
    this.cancelled = c.result().then((r) => r.outcome as number as CancelOutcome);
    return this.cancelled;
  }

  /** @internal Sends the envelope on conn (or ends the call saying why not). */
  async run(envelope: Uint8Array, timeout: number, conn: Connection | null,
            signal?: AbortSignal): Promise<void> {
    const waitMs = timeout === 0 ? MAX_WAIT_MS : timeout + GRACE_MS;
    const t0 = Date.now();
    if (signal !== undefined) {
      if (signal.aborted) {
        this.aborted = true;
      } else {
        const onAbort = () => { this.cancel().catch(() => { /* the call's end says */ }); };
        signal.addEventListener("abort", onAbort, { once: true });
        void this.outcome.then(() => signal.removeEventListener("abort", onAbort));
      }
    }
    if (conn === null) {
      try {
        conn = await this.client.connection(waitMs);
      } catch (e) {
        this.finish(this.client.notSent(e));
        return;
      }
    }
    if (this.aborted || this.ended !== null) {
      this.finish(Status.local(Code.CANCELLED, "the call was cancelled before it was sent",
                               Cause.CALLER));
      return;
    }
    this.conn = conn;
    try {
      this.requestId = conn.send(envelope, {
        reply: (payload) => this.finish(...this.client.decodeReply(payload, this.callId,
                                                                    this.decode)),
        lost: (why) => this.finish(this.client.failure(why)),
      });
    } catch (e) {
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
      if (timeout === 0) this.nextAsk = Math.max(this.nextAsk, own);
      this.last = Math.max(this.last, own);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.ended !== null) return;
    this.timer = setTimeout(() => { void this.askOnce(); },
                            Math.max(0, this.nextAsk - Date.now()));
  }

  private async askOnce(): Promise<void> {
    this.timer = null;
    if (this.ended !== null) return;
    const addr = this.client.address;
    let why: [Code, string] | null;
    if (!this.ask || Date.now() >= this.last) {
      why = [Code.DEADLINE_EXCEEDED,
        `no reply from tkd at ${addr} within the deadline and ${GRACE_MS} ms of ` +
        "grace: the server did not answer"];
    } else {
      const state = await this.client.callState(this.conn as Connection, this.callId);
      if (this.ended !== null) return;
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
    this.finish(Status.local(code, text,
                             code === Code.DEADLINE_EXCEEDED ? Cause.DEADLINE : Cause.NONE));
  }

  // null to wait on after tkd's answer, else why the client stops waiting.
  private verdict(state: number): [Code, string] | null {
    const addr = this.client.address;
    if (state === RUNNING && this.write) this.started = true; // tkd starts it before its deadline
    if (state === QUEUED || state === RUNNING) return null;
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
    if (this.same < ASK_SAME_ANSWERS) return null;
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
  finish(status: Status, reply?: R): void {
    if (this.ended !== null) return;
    this.ended = { status, reply };
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.conn !== null && this.sentFlag) this.conn.forget(this.requestId);
    this.settle(this.ended);
  }
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
  readonly address: string;
  private readonly endpoint: Endpoint;
  private readonly tls: TlsFiles;
  private readonly maxReplyBytes: number;
  private conn: Connection | null = null;
  private dialing: Promise<Connection> | null = null;
  private closed = false;
  private ids: bigint;

  constructor(addr?: string, opts: ClientOptions = {}) {
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
      const stub: Record<string, unknown> = {};
      for (const [name, spec] of Object.entries(table as Record<string, MethodSpec>)) {
        const start = (request?: MessageInitShape<DescMessage>, options?: CallOptions) =>
          this.start(spec.method, create(spec.input, request ?? {}),
                     { ...options, replyType: spec.output });
        stub[name] = (request?: MessageInitShape<DescMessage>, options?: CallOptions) =>
          start(request, options).result();
        stub[`start${name[0].toUpperCase()}${name.slice(1)}`] = start;
      }
      (this as Record<string, unknown>)[attr] = stub;
    }
  }

  /**
   * Dials tkd now (calls dial when needed): resolves once the connection
   * and its SP handshake are done, rejects with TkError UNAVAILABLE.
   */
  async connect(timeoutMs = 10000): Promise<void> {
    try {
      await this.connection(timeoutMs);
    } catch (e) {
      throw new TkError(this.notSent(e, false));
    }
  }

  /** Closes the connection; calls in flight end CANCELLED (cause CALLER). Idempotent. */
  close(): void {
    this.closed = true;
    this.conn?.close();
    this.conn = null;
  }

  /**
   * Calls method ("tk.v1.Control/Ping") with request and resolves to the
   * reply; rejects with TkError for any other end. request is a message,
   * the fields of the method's request (a method gen/ts knows), or bytes
   * sent as the payload as they are.
   */
  call<D extends DescMessage = DescMessage>(
      method: string, request: Message | Uint8Array | Record<string, unknown>,
      options?: GenericCallOptions<D>): Promise<MessageShape<D>>;
  call(method: string, request: Message | Uint8Array | Record<string, unknown>,
       options: GenericCallOptions & { replyType: "bytes" }): Promise<Uint8Array>;
  call(method: string, request: Message | Uint8Array | Record<string, unknown>,
       options?: GenericCallOptions): Promise<unknown> {
    return this.start(method, request, options).result();
  }

  /** As call(), without waiting: sends the request and returns its Call. */
  start<D extends DescMessage = DescMessage>(
      method: string, request: Message | Uint8Array | Record<string, unknown>,
      options?: GenericCallOptions<D>): Call<MessageShape<D>>;
  start(method: string, request: Message | Uint8Array | Record<string, unknown>,
        options: GenericCallOptions & { replyType: "bytes" }): Call<Uint8Array>;
  start(method: string, request: Message | Uint8Array | Record<string, unknown>,
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        options: GenericCallOptions = {}): Call<any> {
    const payload = this.payload(method, request);
    const decode = this.decoder(method, options.replyType);
    return this.startOn(null, method, payload, timeoutMs(options.timeoutMs), decode, true,
                        options.signal);
  }

  /** @internal A call on conn (null: the client's connection). */
  startOn<R>(conn: Connection | null, method: string, payload: Uint8Array, timeout: number,
             decode: Decode<R>, ask: boolean, signal?: AbortSignal): Call<R> {
    if (this.closed) throw new Error("tk: the client is closed");
    const callId = this.ids;
    this.ids = (this.ids + 1n) & 0xffffffffffffffffn;
    const envelope = toBinary(RequestSchema, create(RequestSchema, {
      callId, method, timeoutMs: timeout, payload,
    }));
    const call = new Call<R>(this, callId, method, decode, ask);
    void call.run(envelope, timeout, conn, signal);
    return call;
  }

  /** @internal The connection, dialed if there is none. */
  connection(timeoutMs: number): Promise<Connection> {
    if (this.closed) return Promise.reject(new ConnectError("the client is closed", "ECLOSED"));
    if (this.conn !== null && !this.conn.isClosed) return Promise.resolve(this.conn);
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
  async callState(conn: Connection, callId: bigint): Promise<number> {
    const c = this.startOn(conn, "tk.v1.Control/CallState",
                           toBinary(CallStateRequestSchema,
                                    create(CallStateRequestSchema, { callId })),
                           ASK_TIMEOUT_MS, (b) => fromBinary(CallStateReplySchema, b), false);
    const st = await c.status();
    if (st.code === Code.UNIMPLEMENTED) return UNKNOWN_METHOD;
    if (!st.ok) return NO_ANSWER;
    return (await c.result()).state;
  }

  /** @internal The status of a call that could not be sent. */
  notSent(e: unknown, call = true): Status {
    if (this.closed) {
      return Status.local(Code.CANCELLED, "the client was closed during the call", Cause.CALLER);
    }
    const msg = e instanceof Error ? e.message : String(e);
    const errno = e instanceof ConnectError ? e.errno : undefined;
    let hint = "";
    if (errno === "ECONNREFUSED" || errno === "ENOENT") {
      hint = " (is tkd running there?)";
    } else if (this.endpoint.transport === "tls+tcp" && errno !== "ETIMEDOUT") {
      hint = " (the TLS handshake failed: tkd refuses a client without a certificate its " +
        "CA signed, and this client refuses a tkd whose certificate tlsCa did not sign or " +
        "that does not name the host)";
    }
    return Status.local(Code.UNAVAILABLE, `could not ${call ? "send to" : "connect to"} tkd ` +
                        `at ${this.address}: ${msg}${hint}` +
                        (call ? " (the call was not sent)" : ""));
  }

  /** @internal The status of a call whose connection ended before its reply. */
  failure(why: LostReason): Status {
    if (this.closed || why.kind === "closed") {
      return Status.local(Code.CANCELLED, "the client was closed during the call", Cause.CALLER);
    }
    return Status.local(Code.UNAVAILABLE,
                        `the connection to tkd at ${this.address} was lost while the call was ` +
                        `in flight (${why.detail}); whether it ran is unknown (it is not resent)`);
  }

  /** @internal (status, reply) of a tk.v1.Reply frame. */
  decodeReply<R>(data: Uint8Array, callId: bigint, decode: Decode<R>): [Status, R?] {
    let env;
    try {
      env = fromBinary(ReplySchema, data);
    } catch {
      return [Status.local(Code.INTERNAL, `the reply (${data.length} bytes) is not a tk.v1.Reply`)];
    }
    if (env.callId !== callId && env.callId !== 0n) {
      return [Status.local(Code.INTERNAL, `the reply is for call ${env.callId}, not ${callId}`)];
    }
    if (env.status === undefined) {
      return [Status.local(Code.INTERNAL, "the reply carries no status")];
    }
    const status = Status.fromProto(env.status);
    if (!status.ok) return [status];
    try {
      return [status, decode(env.payload)];
    } catch {
      return [Status.local(Code.INTERNAL,
                           "the reply payload does not decode as the method's reply")];
    }
  }

  private payload(method: string, request: Message | Uint8Array | Record<string, unknown>)
      : Uint8Array {
    if (request instanceof Uint8Array) return request;
    if (isMessage(request)) {
      const schema = registry.getMessage(request.$typeName);
      if (schema === undefined) {
        throw new TypeError(`tk: ${request.$typeName} is not a message of gen/ts`);
      }
      return toBinary(schema, request);
    }
    const spec = specOf(method);
    if (spec === undefined) {
      throw new TypeError(`tk: ${method} is not in gen/ts; give a message or bytes`);
    }
    return toBinary(spec.input, create(spec.input, request as MessageInitShape<DescMessage>));
  }

  private decoder(method: string, replyType: DescMessage | "bytes" | undefined)
      : Decode<unknown> {
    if (replyType === "bytes") return (b) => b;
    const schema = replyType ?? specOf(method)?.output;
    if (schema === undefined) {
      throw new TypeError(`tk: ${method} is not in gen/ts; give options.replyType (a ` +
                          "message schema, or \"bytes\" for the payload undecoded)");
    }
    return (b) => fromBinary(schema, b);
  }
}

// The typed services, as attributes the constructor sets.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Client extends Services {}

function orUndefined(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

const byMethod = new Map<string, MethodSpec>();
for (const table of Object.values(services)) {
  for (const spec of Object.values(table as Record<string, MethodSpec>)) {
    byMethod.set(spec.method, spec);
  }
}

function specOf(method: string): MethodSpec | undefined {
  return byMethod.get(method);
}
