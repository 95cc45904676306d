/** NNG's protocol numbers (nng/protocol/reqrep0). */
export declare const PROTO_REQ = 48;
export declare const PROTO_REP = 49;
/** The first byte of every ipc frame (NNG refuses any other). */
export declare const IPC_MSG_TYPE = 1;
/** Bit 31 of a request id: NNG's REQ sets it; REP's backtrace ends at it. */
export declare const REQUEST_ID_BIT = 2147483648;
/**
 * The 8 bytes each side sends first: 00 'S' 'P' 00, the protocol number as
 * u16 big-endian, 00 00.
 */
export declare function handshake(proto: number): Uint8Array;
/**
 * The peer's protocol number from its 8 handshake bytes, or throws
 * WireError when they are not an SP header (NNG: NNG_EPROTO) or not of
 * the protocol expected (NNG closes the pipe).
 */
export declare function checkHandshake(b: Uint8Array, expect: number): number;
/** A frame of body: (ipc: the type byte 0x01), u64 big-endian length, body. */
export declare function encodeFrame(body: Uint8Array, ipc: boolean): Uint8Array;
/** A REQ message body: the request id (bit 31 set), then the payload. */
export declare function encodeRequest(requestId: number, payload: Uint8Array): Uint8Array;
/**
 * A REP message body: its request id and payload. A reply without a whole
 * id, or whose first word lacks bit 31, is garbage to NNG's REQ, which
 * closes the pipe: WireError.
 */
export declare function decodeReply(body: Uint8Array): {
    requestId: number;
    payload: Uint8Array;
};
/** A byte stream that is not NNG's protocol: the connection is dropped. */
export declare class WireError extends Error {
    name: string;
}
/**
 * Reads the peer's side of a connection: its 8-byte handshake, then
 * frames, from chunks as the socket delivers them (split anywhere, several
 * in one). push() returns the whole frames' bodies; it throws WireError on
 * a bad handshake, a bad ipc type byte or a frame longer than maxFrame
 * (checked on its length, before any of its body is held, as NNG does).
 */
export declare class FrameDecoder {
    readonly ipc: boolean;
    readonly expectProto: number;
    readonly maxFrame: number;
    private chunks;
    private have;
    private need;
    private shaken;
    private failed;
    /** The peer's protocol number once its handshake has come. */
    peerProto: number;
    constructor(ipc: boolean, expectProto: number, maxFrame: number);
    /** Whether the peer's handshake has come and was accepted. */
    get ready(): boolean;
    push(chunk: Uint8Array): Uint8Array[];
    private take;
}
