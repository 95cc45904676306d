// SPDX-License-Identifier: MIT
// NNG's framing as client/ts speaks it, on canned byte streams: the
// handshake, frames split anywhere or several in one chunk, and what is
// refused. Each test that pins a byte of the protocol is a negative
// control: it fails if the request id loses bit 31, if the handshake names
// another protocol, if ipc frames lose their type byte.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  FrameDecoder, PROTO_REP, PROTO_REQ, WireError, checkHandshake, decodeReply, encodeFrame,
  encodeRequest, handshake,
} from "../src/wire.js";

const bytes = (...b: number[]) => Uint8Array.from(b);
const repHello = handshake(PROTO_REP);

test("the handshake is 00 'S' 'P' 00, the protocol as u16 BE, 00 00", () => {
  assert.deepEqual(handshake(PROTO_REQ), bytes(0, 0x53, 0x50, 0, 0x00, 0x30, 0, 0));
  assert.deepEqual(handshake(PROTO_REP), bytes(0, 0x53, 0x50, 0, 0x00, 0x31, 0, 0));
});

test("a peer whose handshake differs is refused", () => {
  assert.equal(checkHandshake(repHello, PROTO_REP), PROTO_REP);
  // REQ talking to REQ, or a REP that is not one.
  assert.throws(() => checkHandshake(handshake(PROTO_REQ), PROTO_REP), WireError);
  for (const i of [0, 1, 2, 3, 6, 7]) {
    const b = repHello.slice();
    b[i] ^= 0x40;
    assert.throws(() => checkHandshake(b, PROTO_REP), WireError, `byte ${i}`);
  }
  const d = new FrameDecoder(false, PROTO_REP, 1024);
  assert.throws(() => d.push(Buffer.from("HTTP/1.1 400 Bad\r\n")), WireError);
  // Once refused, refused for good.
  assert.throws(() => d.push(encodeFrame(bytes(0x80, 0, 0, 1), false)), WireError);
});

test("a request carries its id with bit 31 set, big-endian, then the payload", () => {
  const body = encodeRequest(0x80000001, bytes(9, 8));
  assert.deepEqual(body, bytes(0x80, 0, 0, 1, 9, 8));
  assert.equal(body[0] & 0x80, 0x80);
  assert.throws(() => encodeRequest(0x7fffffff, bytes()), RangeError);
  assert.throws(() => encodeRequest(1, bytes()), RangeError);
});

test("tcp frames: u64 BE length, then the body; ipc: type byte 0x01 first", () => {
  assert.deepEqual(encodeFrame(bytes(7, 7, 7), false), bytes(0, 0, 0, 0, 0, 0, 0, 3, 7, 7, 7));
  assert.deepEqual(encodeFrame(bytes(7), true), bytes(1, 0, 0, 0, 0, 0, 0, 0, 1, 7));
});

test("a reply's id must have bit 31; its payload follows", () => {
  const r = decodeReply(bytes(0xc0, 0, 0, 2, 5));
  assert.equal(r.requestId, 0xc0000002);
  assert.deepEqual(r.payload, bytes(5));
  assert.throws(() => decodeReply(bytes(0x40, 0, 0, 2, 5)), WireError);
  assert.throws(() => decodeReply(bytes(0x80, 0)), WireError);
});

for (const ipc of [false, true]) {
  const kind = ipc ? "ipc" : "tcp";
  const frames = [bytes(0x80, 0, 0, 1, 1, 2, 3), bytes(0x80, 0, 0, 2), bytes(0x80, 0, 0, 3, 9)];
  const stream = Buffer.concat([repHello, ...frames.map((f) => encodeFrame(f, ipc))]);

  test(`${kind}: every split of the stream gives the same frames`, () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const step of [1, 3, 1000]) {
        const d = new FrameDecoder(ipc, PROTO_REP, 1024);
        const got: Uint8Array[] = [...d.push(stream.subarray(0, cut))];
        for (let i = cut; i < stream.length; i += step) {
          got.push(...d.push(stream.subarray(i, Math.min(i + step, stream.length))));
        }
        assert.deepEqual(got, frames, `cut ${cut} step ${step}`);
      }
    }
  });

  test(`${kind}: several frames in one chunk`, () => {
    const d = new FrameDecoder(ipc, PROTO_REP, 1024);
    assert.deepEqual(d.push(stream), frames);
    assert.equal(d.peerProto, PROTO_REP);
  });

  test(`${kind}: a frame longer than the limit is refused on its length`, () => {
    const d = new FrameDecoder(ipc, PROTO_REP, 16);
    d.push(repHello);
    const head = encodeFrame(new Uint8Array(17), ipc).subarray(0, ipc ? 9 : 8);
    assert.throws(() => d.push(head), /17 bytes, more than the 16/);
    const ok = new FrameDecoder(ipc, PROTO_REP, 16);
    ok.push(repHello);
    assert.equal(ok.push(encodeFrame(new Uint8Array(16), ipc)).length, 1);
    // 2^64 - 1, which no Number holds.
    const huge = new FrameDecoder(ipc, PROTO_REP, 16);
    huge.push(repHello);
    const h = new Uint8Array(ipc ? 9 : 8).fill(0xff);
    if (ipc) h[0] = 1;
    assert.throws(() => huge.push(h), WireError);
  });
}

test("ipc: a frame of another type byte is refused", () => {
  const d = new FrameDecoder(true, PROTO_REP, 1024);
  d.push(repHello);
  const f = encodeFrame(bytes(0x80, 0, 0, 1), true);
  f[0] = 2;
  assert.throws(() => d.push(f), /type 2, not 1/);
  // The same bytes read as tcp are another length, not a type: the control.
  const t = new FrameDecoder(false, PROTO_REP, 1 << 30);
  t.push(repHello);
  assert.doesNotThrow(() => t.push(encodeFrame(bytes(0x80, 0, 0, 1), false)));
});
