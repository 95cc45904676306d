/** Where tkd listens, from its URL. */
export type Endpoint = {
    readonly transport: "ipc";
    readonly path: string;
} | {
    readonly transport: "tcp" | "tls+tcp";
    readonly host: string;
    readonly port: number;
};
/** The endpoint of an NNG URL: ipc:///path, tcp://host:port, tls+tcp://host:port. */
export declare function parseAddress(addr: string): Endpoint;
/** PEM files (or their contents) of a tls+tcp:// connection. */
export interface TlsFiles {
    /** The CA that signed tkd's certificate. */
    readonly ca?: string | Buffer;
    /** This client's certificate, which tkd requires, and its key. */
    readonly cert?: string | Buffer;
    readonly key?: string | Buffer;
    /** The name tkd's certificate must have (default: the URL's host). */
    readonly serverName?: string;
}
/** What a request's sender hears back: its reply's payload, or the loss. */
export interface Pending {
    reply(payload: Uint8Array): void;
    lost(why: LostReason): void;
}
/** Why a connection ended with requests in flight. */
export type LostReason = {
    readonly kind: "closed";
} | {
    readonly kind: "dropped";
    readonly detail: string;
};
export interface ConnectOptions {
    readonly tls?: TlsFiles;
    /** The longest reply frame accepted; a longer one drops the connection. */
    readonly maxReplyBytes: number;
    /** How long the connection and the handshake may take. */
    readonly timeoutMs: number;
}
/** A connection that failed before it was ready; the message says why. */
export declare class ConnectError extends Error {
    readonly errno?: string | undefined;
    name: string;
    constructor(message: string, errno?: string | undefined);
}
export declare class Connection {
    private readonly sock;
    readonly endpoint: Endpoint;
    private readonly pending;
    private nextId;
    private ended;
    private readonly decoder;
    private readonly onEnd;
    private constructor();
    /** Dials ep, exchanges the SP handshake, and resolves once ready. */
    static open(ep: Endpoint, opts: ConnectOptions): Promise<Connection>;
    /** Whether the connection has ended (no request can be sent on it). */
    get isClosed(): boolean;
    /** Calls fn once the connection ends (at once if it has). */
    onClose(fn: () => void): void;
    /**
     * Sends payload as a request; its reply or loss goes to p. Returns the
     * request id (for forget()). Throws when the connection has ended.
     */
    send(payload: Uint8Array, p: Pending): number;
    /** Stops waiting for request id's reply: one that comes is dropped. */
    forget(id: number): void;
    /** How many requests wait for their reply. */
    get inFlight(): number;
    /** Closes the connection; requests in flight are lost ("closed"). */
    close(): void;
    private deliver;
    private end;
}
