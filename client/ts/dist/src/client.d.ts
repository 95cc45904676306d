import { type DescMessage, type Message, type MessageShape, type Registry } from "@bufbuild/protobuf";
import { Connection, type LostReason } from "./conn.js";
import { Call, type Decode } from "./inflight.js";
import { Status } from "./status.js";
import { type CallOptions, type Services } from "./stubs.js";
/** The longest reply frame a client accepts by default. */
export declare const DEFAULT_MAX_REPLY_BYTES: number;
/**
 * The address tkd listens on by default: TK_ADDR if set, else
 * ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else ipc:///tmp/tk-<uid>/tkd.sock (as
 * tk_default_address of libtkclient).
 */
export declare function defaultAddress(): string;
/** Every message of proto/, by full name ("tk.v1.PingRequest"). */
export declare const registry: Registry;
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
export declare class Client {
    readonly address: string;
    private readonly endpoint;
    private readonly tls;
    private readonly maxReplyBytes;
    private conn;
    private dialing;
    private closed;
    private ids;
    constructor(addr?: string, opts?: ClientOptions);
    /**
     * Dials tkd now (calls dial when needed): resolves once the connection
     * and its SP handshake are done, rejects with TkError UNAVAILABLE.
     */
    connect(timeoutMs?: number): Promise<void>;
    /** Closes the connection; calls in flight end CANCELLED (cause CALLER). Idempotent. */
    close(): void;
    /**
     * Calls method ("tk.v1.Control/Ping") with request and resolves to the
     * reply; rejects with TkError for any other end. request is a message,
     * the fields of the method's request (a method gen/ts knows), or bytes
     * sent as the payload as they are.
     */
    call<D extends DescMessage = DescMessage>(method: string, request: Message | Uint8Array | Record<string, unknown>, options?: GenericCallOptions<D>): Promise<MessageShape<D>>;
    call(method: string, request: Message | Uint8Array | Record<string, unknown>, options: GenericCallOptions & {
        replyType: "bytes";
    }): Promise<Uint8Array>;
    /** As call(), without waiting: sends the request and returns its Call. */
    start<D extends DescMessage = DescMessage>(method: string, request: Message | Uint8Array | Record<string, unknown>, options?: GenericCallOptions<D>): Call<MessageShape<D>>;
    start(method: string, request: Message | Uint8Array | Record<string, unknown>, options: GenericCallOptions & {
        replyType: "bytes";
    }): Call<Uint8Array>;
    /** @internal A call on conn (null: the client's connection). */
    startOn<R>(conn: Connection | null, method: string, payload: Uint8Array, timeout: number, decode: Decode<R>, ask: boolean, signal?: AbortSignal): Call<R>;
    /** @internal The connection, dialed if there is none. */
    connection(timeoutMs: number): Promise<Connection>;
    /** @internal Where call callId stands, asked on conn: a CallStateReply.State. */
    callState(conn: Connection, callId: bigint): Promise<number>;
    /** @internal The status of a call that could not be sent. */
    notSent(e: unknown, call?: boolean): Status;
    /** @internal The status of a call whose connection ended before its reply. */
    failure(why: LostReason): Status;
    /** @internal (status, reply) of a tk.v1.Reply frame. */
    decodeReply<R>(data: Uint8Array, callId: bigint, decode: Decode<R>): [Status, R?];
    private payload;
    private decoder;
}
export interface Client extends Services {
}
