// SPDX-License-Identifier: MIT
// NNG's wire protocol, as NNG 1.5.2 speaks it (src/sp/transport/{ipc,tcp,
// tls}/ and src/sp/protocol/reqrep0/): the SP handshake, the frames of each
// transport and the REQ/REP header. Pure functions and a decoder of a byte
// stream, so that the tests can feed them canned bytes.
/** NNG's protocol numbers (nng/protocol/reqrep0). */
export const PROTO_REQ = 0x0030;
export const PROTO_REP = 0x0031;
/** The first byte of every ipc frame (NNG refuses any other). */
export const IPC_MSG_TYPE = 0x01;
/** Bit 31 of a request id: NNG's REQ sets it; REP's backtrace ends at it. */
export const REQUEST_ID_BIT = 0x80000000;
/**
 * The 8 bytes each side sends first: 00 'S' 'P' 00, the protocol number as
 * u16 big-endian, 00 00.
 */
export function handshake(proto) {
    const b = new Uint8Array(8);
    b[1] = 0x53; // 'S'
    b[2] = 0x50; // 'P'
    b[4] = (proto >> 8) & 0xff;
    b[5] = proto & 0xff;
    return b;
}
/**
 * The peer's protocol number from its 8 handshake bytes, or throws
 * WireError when they are not an SP header (NNG: NNG_EPROTO) or not of
 * the protocol expected (NNG closes the pipe).
 */
export function checkHandshake(b, expect) {
    if (b.length !== 8 || b[0] !== 0 || b[1] !== 0x53 || b[2] !== 0x50 ||
        b[3] !== 0 || b[6] !== 0 || b[7] !== 0) {
        throw new WireError("the peer's handshake is not NNG's SP header: " +
            hex(b));
    }
    const proto = (b[4] << 8) | b[5];
    if (proto !== expect) {
        throw new WireError(`the peer speaks SP protocol 0x${proto.toString(16).padStart(4, "0")}` +
            `, not 0x${expect.toString(16).padStart(4, "0")} (REP)`);
    }
    return proto;
}
/** A frame of body: (ipc: the type byte 0x01), u64 big-endian length, body. */
export function encodeFrame(body, ipc) {
    const head = ipc ? 9 : 8;
    const out = new Uint8Array(head + body.length);
    if (ipc)
        out[0] = IPC_MSG_TYPE;
    new DataView(out.buffer).setBigUint64(head - 8, BigInt(body.length));
    out.set(body, head);
    return out;
}
/** A REQ message body: the request id (bit 31 set), then the payload. */
export function encodeRequest(requestId, payload) {
    if (!Number.isInteger(requestId) || requestId < REQUEST_ID_BIT ||
        requestId > 0xffffffff) {
        throw new RangeError(`a request id has bit 31 set: ${requestId}`);
    }
    const out = new Uint8Array(4 + payload.length);
    new DataView(out.buffer).setUint32(0, requestId);
    out.set(payload, 4);
    return out;
}
/**
 * A REP message body: its request id and payload. A reply without a whole
 * id, or whose first word lacks bit 31, is garbage to NNG's REQ, which
 * closes the pipe: WireError.
 */
export function decodeReply(body) {
    if (body.length < 4) {
        throw new WireError(`a reply of ${body.length} bytes has no request id`);
    }
    const id = new DataView(body.buffer, body.byteOffset, 4).getUint32(0);
    if ((id & REQUEST_ID_BIT) === 0) {
        throw new WireError(`a reply's request id 0x${id.toString(16)} lacks bit 31`);
    }
    return { requestId: id, payload: body.subarray(4) };
}
/** A byte stream that is not NNG's protocol: the connection is dropped. */
export class WireError extends Error {
    name = "WireError";
}
function hex(b) {
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(" ");
}
/**
 * Reads the peer's side of a connection: its 8-byte handshake, then
 * frames, from chunks as the socket delivers them (split anywhere, several
 * in one). push() returns the whole frames' bodies; it throws WireError on
 * a bad handshake, a bad ipc type byte or a frame longer than maxFrame
 * (checked on its length, before any of its body is held, as NNG does).
 */
export class FrameDecoder {
    ipc;
    expectProto;
    maxFrame;
    chunks = [];
    have = 0;
    need = 8; // bytes that must have come before the next step
    shaken = false;
    failed = null;
    /** The peer's protocol number once its handshake has come. */
    peerProto = -1;
    constructor(ipc, expectProto, maxFrame) {
        this.ipc = ipc;
        this.expectProto = expectProto;
        this.maxFrame = maxFrame;
    }
    /** Whether the peer's handshake has come and was accepted. */
    get ready() {
        return this.shaken;
    }
    push(chunk) {
        if (this.failed)
            throw this.failed;
        try {
            return this.take(chunk);
        }
        catch (e) {
            if (e instanceof WireError)
                this.failed = e;
            throw e;
        }
    }
    take(chunk) {
        // Chunks are held apart until what the next step needs has come: a
        // large frame in many chunks is copied once, not once per chunk.
        this.chunks.push(chunk);
        this.have += chunk.length;
        const out = [];
        if (this.have < this.need)
            return out;
        const buf = this.chunks.length === 1 ? this.chunks[0] : concat(this.chunks, this.have);
        let off = 0;
        if (!this.shaken) {
            this.peerProto = checkHandshake(buf.subarray(0, 8), this.expectProto);
            this.shaken = true;
            off = 8;
        }
        const head = this.ipc ? 9 : 8;
        let need = head;
        for (;;) {
            if (buf.length - off < head) {
                need = head;
                break;
            }
            if (this.ipc && buf[off] !== IPC_MSG_TYPE) {
                throw new WireError(`an ipc frame of type ${buf[off]}, not 1`);
            }
            const len = new DataView(buf.buffer, buf.byteOffset + off + head - 8, 8).getBigUint64(0);
            if (len > BigInt(this.maxFrame)) {
                throw new WireError(`a frame of ${len} bytes, more than the ${this.maxFrame} ` +
                    `this client accepts`);
            }
            const n = Number(len);
            if (buf.length - off - head < n) {
                need = head + n;
                break;
            }
            // A copy, and a plain Uint8Array: a Buffer's slice() is a view,
            // and the chunk's memory may be the socket's pool.
            out.push(new Uint8Array(buf.subarray(off + head, off + head + n)));
            off += head + n;
        }
        const rest = buf.subarray(off);
        this.chunks = rest.length ? [rest] : [];
        this.have = rest.length;
        this.need = need;
        return out;
    }
}
function concat(chunks, total) {
    const out = new Uint8Array(total);
    let off = 0;
    for (const c of chunks) {
        out.set(c, off);
        off += c.length;
    }
    return out;
}
