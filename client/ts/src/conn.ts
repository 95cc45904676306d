// SPDX-License-Identifier: MIT
// One connection to tkd speaking NNG's REQ protocol (version 0) over
// node:net (ipc://, tcp://) or node:tls (tls+tcp://): the SP handshake,
// the frames, and many requests at once, each under its own request id,
// as NNG's REQ contexts do. Nothing is ever resent: a request whose
// connection drops is reported lost to its caller, who decides.

import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import * as net from "node:net";
import * as tls from "node:tls";

import {
  FrameDecoder, PROTO_REP, PROTO_REQ, REQUEST_ID_BIT, WireError, decodeReply,
  encodeFrame, encodeRequest, handshake,
} from "./wire.js";

/** Where tkd listens, from its URL. */
export type Endpoint =
  | { readonly transport: "ipc"; readonly path: string }
  | { readonly transport: "tcp" | "tls+tcp"; readonly host: string; readonly port: number };

/** The endpoint of an NNG URL: ipc:///path, tcp://host:port, tls+tcp://host:port. */
export function parseAddress(addr: string): Endpoint {
  const m = /^([a-z+]+):\/\/(.*)$/.exec(addr);
  if (!m) throw new TypeError(`tk: ${addr} is not an NNG URL (ipc://, tcp://, tls+tcp://)`);
  const [, scheme, rest] = m;
  if (scheme === "ipc") {
    if (rest === "") throw new TypeError(`tk: ${addr} names no socket path`);
    return { transport: "ipc", path: rest };
  }
  if (scheme === "tcp" || scheme === "tls+tcp") {
    const hp = /^(?:\[([^\]]+)\]|([^:/[\]]*)):(\d+)$/.exec(rest);
    if (!hp) throw new TypeError(`tk: ${addr}: want ${scheme}://host:port`);
    const host = hp[1] ?? hp[2];
    const port = Number(hp[3]);
    if (port < 1 || port > 65535) throw new TypeError(`tk: ${addr}: bad port`);
    return { transport: scheme, host: host === "" ? "127.0.0.1" : host, port };
  }
  throw new TypeError(`tk: ${addr}: NNG's transports here are ipc://, tcp:// and ` +
                      `tls+tcp://, not ${scheme}://`);
}

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

function pem(v: string | Buffer | undefined): Buffer | undefined {
  if (v === undefined) return undefined;
  if (Buffer.isBuffer(v)) return v;
  return v.includes("-----BEGIN") ? Buffer.from(v) : readFileSync(v);
}

/** What a request's sender hears back: its reply's payload, or the loss. */
export interface Pending {
  reply(payload: Uint8Array): void;
  lost(why: LostReason): void;
}

/** Why a connection ended with requests in flight. */
export type LostReason =
  | { readonly kind: "closed" } // close() of this side
  | { readonly kind: "dropped"; readonly detail: string }; // the peer or the network

export interface ConnectOptions {
  readonly tls?: TlsFiles;
  /** The longest reply frame accepted; a longer one drops the connection. */
  readonly maxReplyBytes: number;
  /** How long the connection and the handshake may take. */
  readonly timeoutMs: number;
}

/** A connection that failed before it was ready; the message says why. */
export class ConnectError extends Error {
  override name = "ConnectError";
  constructor(message: string, readonly errno?: string) {
    super(message);
  }
}

export class Connection {
  private readonly pending = new Map<number, Pending>();
  private nextId: number;
  private ended: LostReason | null = null;
  private readonly decoder: FrameDecoder;
  private readonly onEnd: Array<() => void> = [];

  private constructor(private readonly sock: net.Socket, readonly endpoint: Endpoint,
                      maxReplyBytes: number) {
    this.decoder = new FrameDecoder(endpoint.transport === "ipc", PROTO_REP, maxReplyBytes);
    // Request ids are NNG's: 31 bits with bit 31 set, from a random start.
    this.nextId = REQUEST_ID_BIT + randomInt(0, 0x7fffffff);
  }

  /** Dials ep, exchanges the SP handshake, and resolves once ready. */
  static open(ep: Endpoint, opts: ConnectOptions): Promise<Connection> {
    return new Promise((resolve, reject) => {
      let sock: net.Socket;
      try {
        sock = dial(ep, opts.tls);
      } catch (e) {
        reject(new ConnectError(e instanceof Error ? e.message : String(e)));
        return;
      }
      sock.setNoDelay?.(true);
      const conn = new Connection(sock, ep, opts.maxReplyBytes);
      let settled = false;
      const fail = (err: ConnectError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sock.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(new ConnectError(
          `no connection and SP handshake within ${opts.timeoutMs} ms`, "ETIMEDOUT")),
          opts.timeoutMs);
      const connectEvent = ep.transport === "tls+tcp" ? "secureConnect" : "connect";
      sock.once(connectEvent, () => sock.write(handshake(PROTO_REQ)));
      sock.on("error", (e: NodeJS.ErrnoException) => {
        if (!settled) fail(new ConnectError(e.message, e.code));
        else conn.end({ kind: "dropped", detail: e.message });
      });
      sock.on("close", () => {
        if (!settled) fail(new ConnectError("the connection closed during the SP handshake",
                                            "ECONNRESET"));
        else conn.end({ kind: "dropped", detail: "the connection closed" });
      });
      sock.on("data", (chunk: Buffer) => {
        let frames: Uint8Array[];
        try {
          frames = conn.decoder.push(chunk);
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          if (!settled) fail(new ConnectError(msg, "EPROTO"));
          else conn.end({ kind: "dropped", detail: msg });
          return;
        }
        if (!settled && conn.decoder.ready) {
          settled = true;
          clearTimeout(timer);
          if (conn.pending.size === 0) sock.unref();
          resolve(conn);
        }
        for (const f of frames) conn.deliver(f);
      });
    });
  }

  /** Whether the connection has ended (no request can be sent on it). */
  get isClosed(): boolean {
    return this.ended !== null;
  }

  /** Calls fn once the connection ends (at once if it has). */
  onClose(fn: () => void): void {
    if (this.ended) fn();
    else this.onEnd.push(fn);
  }

  /**
   * Sends payload as a request; its reply or loss goes to p. Returns the
   * request id (for forget()). Throws when the connection has ended.
   */
  send(payload: Uint8Array, p: Pending): number {
    if (this.ended) throw new ConnectError("the connection has closed", "ECLOSED");
    let id = this.nextId;
    while (this.pending.has(id)) id = id >= 0xffffffff ? REQUEST_ID_BIT : id + 1;
    this.nextId = id >= 0xffffffff ? REQUEST_ID_BIT : id + 1;
    this.pending.set(id, p);
    // A connection with nothing in flight does not keep Node running.
    if (this.pending.size === 1) this.sock.ref();
    this.sock.write(encodeFrame(encodeRequest(id, payload),
                                this.endpoint.transport === "ipc"));
    return id;
  }

  /** Stops waiting for request id's reply: one that comes is dropped. */
  forget(id: number): void {
    if (this.pending.delete(id) && this.pending.size === 0) this.sock.unref();
  }

  /** How many requests wait for their reply. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Closes the connection; requests in flight are lost ("closed"). */
  close(): void {
    this.end({ kind: "closed" });
  }

  private deliver(frame: Uint8Array): void {
    let r: { requestId: number; payload: Uint8Array };
    try {
      r = decodeReply(frame);
    } catch (e) {
      // NNG's REQ closes a pipe that sends garbage.
      this.end({ kind: "dropped", detail: e instanceof WireError ? e.message : String(e) });
      return;
    }
    const p = this.pending.get(r.requestId);
    if (p === undefined) return; // a reply nobody waits for, as NNG drops it
    this.forget(r.requestId);
    p.reply(r.payload);
  }

  private end(why: LostReason): void {
    if (this.ended) return;
    this.ended = why;
    this.sock.destroy();
    const lost = [...this.pending.values()];
    this.pending.clear();
    for (const p of lost) p.lost(why);
    for (const fn of this.onEnd.splice(0)) fn();
  }
}

function dial(ep: Endpoint, files?: TlsFiles): net.Socket {
  if (ep.transport === "ipc") return net.connect({ path: ep.path });
  if (ep.transport === "tcp") return net.connect({ host: ep.host, port: ep.port });
  const servername = files?.serverName ?? ep.host;
  return tls.connect({
    host: ep.host,
    port: ep.port,
    ca: pem(files?.ca),
    cert: pem(files?.cert),
    key: pem(files?.key),
    // SNI takes a name, not an address; the check below takes either.
    servername: net.isIP(servername) ? undefined : servername,
    checkServerIdentity: (_host, cert) => tls.checkServerIdentity(servername, cert),
    rejectUnauthorized: true,
  });
}
