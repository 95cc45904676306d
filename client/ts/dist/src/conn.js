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
import { FrameDecoder, PROTO_REP, PROTO_REQ, REQUEST_ID_BIT, WireError, decodeReply, encodeFrame, encodeRequest, handshake, } from "./wire.js";
/** The endpoint of an NNG URL: ipc:///path, tcp://host:port, tls+tcp://host:port. */
export function parseAddress(addr) {
    const m = /^([a-z+]+):\/\/(.*)$/.exec(addr);
    if (!m)
        throw new TypeError(`tk: ${addr} is not an NNG URL (ipc://, tcp://, tls+tcp://)`);
    const [, scheme, rest] = m;
    if (scheme === "ipc") {
        if (rest === "")
            throw new TypeError(`tk: ${addr} names no socket path`);
        return { transport: "ipc", path: rest };
    }
    if (scheme === "tcp" || scheme === "tls+tcp") {
        const hp = /^(?:\[([^\]]+)\]|([^:/[\]]*)):(\d+)$/.exec(rest);
        if (!hp)
            throw new TypeError(`tk: ${addr}: want ${scheme}://host:port`);
        const host = hp[1] ?? hp[2];
        const port = Number(hp[3]);
        if (port < 1 || port > 65535)
            throw new TypeError(`tk: ${addr}: bad port`);
        return { transport: scheme, host: host === "" ? "127.0.0.1" : host, port };
    }
    throw new TypeError(`tk: ${addr}: NNG's transports here are ipc://, tcp:// and ` +
        `tls+tcp://, not ${scheme}://`);
}
function pem(v) {
    if (v === undefined)
        return undefined;
    if (Buffer.isBuffer(v))
        return v;
    return v.includes("-----BEGIN") ? Buffer.from(v) : readFileSync(v);
}
/** A connection that failed before it was ready; the message says why. */
export class ConnectError extends Error {
    errno;
    name = "ConnectError";
    constructor(message, errno) {
        super(message);
        this.errno = errno;
    }
}
export class Connection {
    sock;
    endpoint;
    pending = new Map();
    nextId;
    ended = null;
    decoder;
    onEnd = [];
    constructor(sock, endpoint, maxReplyBytes) {
        this.sock = sock;
        this.endpoint = endpoint;
        this.decoder = new FrameDecoder(endpoint.transport === "ipc", PROTO_REP, maxReplyBytes);
        // Request ids are NNG's: 31 bits with bit 31 set, from a random start.
        this.nextId = REQUEST_ID_BIT + randomInt(0, 0x7fffffff);
    }
    /** Dials ep, exchanges the SP handshake, and resolves once ready. */
    static open(ep, opts) {
        return new Promise((resolve, reject) => {
            let sock;
            try {
                sock = dial(ep, opts.tls);
            }
            catch (e) {
                reject(new ConnectError(e instanceof Error ? e.message : String(e)));
                return;
            }
            sock.setNoDelay?.(true);
            const conn = new Connection(sock, ep, opts.maxReplyBytes);
            let settled = false;
            const fail = (err) => {
                if (settled)
                    return;
                settled = true;
                clearTimeout(timer);
                sock.destroy();
                reject(err);
            };
            const timer = setTimeout(() => fail(new ConnectError(`no connection and SP handshake within ${opts.timeoutMs} ms`, "ETIMEDOUT")), opts.timeoutMs);
            const connectEvent = ep.transport === "tls+tcp" ? "secureConnect" : "connect";
            sock.once(connectEvent, () => sock.write(handshake(PROTO_REQ)));
            sock.on("error", (e) => {
                if (!settled)
                    fail(new ConnectError(e.message, e.code));
                else
                    conn.end({ kind: "dropped", detail: e.message });
            });
            sock.on("close", () => {
                if (!settled)
                    fail(new ConnectError("the connection closed during the SP handshake", "ECONNRESET"));
                else
                    conn.end({ kind: "dropped", detail: "the connection closed" });
            });
            sock.on("data", (chunk) => {
                let frames;
                try {
                    frames = conn.decoder.push(chunk);
                }
                catch (e) {
                    const msg = e instanceof Error ? e.message : String(e);
                    if (!settled)
                        fail(new ConnectError(msg, "EPROTO"));
                    else
                        conn.end({ kind: "dropped", detail: msg });
                    return;
                }
                if (!settled && conn.decoder.ready) {
                    settled = true;
                    clearTimeout(timer);
                    if (conn.pending.size === 0)
                        sock.unref();
                    resolve(conn);
                }
                for (const f of frames)
                    conn.deliver(f);
            });
        });
    }
    /** Whether the connection has ended (no request can be sent on it). */
    get isClosed() {
        return this.ended !== null;
    }
    /** Calls fn once the connection ends (at once if it has). */
    onClose(fn) {
        if (this.ended)
            fn();
        else
            this.onEnd.push(fn);
    }
    /**
     * Sends payload as a request; its reply or loss goes to p. Returns the
     * request id (for forget()). Throws when the connection has ended.
     */
    send(payload, p) {
        if (this.ended)
            throw new ConnectError("the connection has closed", "ECLOSED");
        let id = this.nextId;
        while (this.pending.has(id))
            id = id >= 0xffffffff ? REQUEST_ID_BIT : id + 1;
        this.nextId = id >= 0xffffffff ? REQUEST_ID_BIT : id + 1;
        this.pending.set(id, p);
        // A connection with nothing in flight does not keep Node running.
        if (this.pending.size === 1)
            this.sock.ref();
        this.sock.write(encodeFrame(encodeRequest(id, payload), this.endpoint.transport === "ipc"));
        return id;
    }
    /** Stops waiting for request id's reply: one that comes is dropped. */
    forget(id) {
        if (this.pending.delete(id) && this.pending.size === 0)
            this.sock.unref();
    }
    /** How many requests wait for their reply. */
    get inFlight() {
        return this.pending.size;
    }
    /** Closes the connection; requests in flight are lost ("closed"). */
    close() {
        this.end({ kind: "closed" });
    }
    deliver(frame) {
        let r;
        try {
            r = decodeReply(frame);
        }
        catch (e) {
            // NNG's REQ closes a pipe that sends garbage.
            this.end({ kind: "dropped", detail: e instanceof WireError ? e.message : String(e) });
            return;
        }
        const p = this.pending.get(r.requestId);
        if (p === undefined)
            return; // a reply nobody waits for, as NNG drops it
        this.forget(r.requestId);
        p.reply(r.payload);
    }
    end(why) {
        if (this.ended)
            return;
        this.ended = why;
        this.sock.destroy();
        const lost = [...this.pending.values()];
        this.pending.clear();
        for (const p of lost)
            p.lost(why);
        for (const fn of this.onEnd.splice(0))
            fn();
    }
}
function dial(ep, files) {
    if (ep.transport === "ipc")
        return net.connect({ path: ep.path });
    if (ep.transport === "tcp")
        return net.connect({ host: ep.host, port: ep.port });
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
