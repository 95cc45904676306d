// SPDX-License-Identifier: MIT
// The TypeScript client driven by tests/conformance/test_conformance.py
// (TK_CONFORMANCE_CLIENT=ts): one process per case, one JSON command a line
// on stdin, one JSON event a line on stdout. The runner keeps the table's
// logic (fixtures, hooks, the other connection's Cancel, the verdict); this
// program makes the client's calls and cancels, as the case says when.
//
//   node dist/test/conformance-driver.js ADDR
//   {"op": "start", "id": 1, "method": M, "request": {...} | "payload_base64": B,
//    "json": "text"|"proto3", "timeout_ms": N, "request_type": T, "reply_type": T}
//     -> {"event": "started", "id": 1, "call_id": "123"}
//     -> {"event": "done", "id": 1, "status": {...}, "reply": {...} | null}
//   {"op": "cancel", "id": 1} -> {"event": "cancelled", "id": 1, "outcome": "CANCELLED"}

import { createInterface } from "node:readline";

import type { DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import { type Call, CancelOutcome, Cause, Client, enumName, jsonform, registry }
  from "../src/index.js";

interface Start {
  op: "start";
  id: number;
  method: string;
  request?: JsonValue;
  payload_base64?: string;
  json?: "text" | "proto3";
  timeout_ms: number;
  request_type?: string;
  reply_type?: string;
}

const client = new Client(process.argv[2]);
const calls = new Map<number, Call<unknown>>();

function emit(ev: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(ev) + "\n");
}

function schema(name: string | undefined, what: string): DescMessage {
  const s = name === undefined ? undefined : registry.getMessage(name);
  if (s === undefined) throw new Error(`no ${what} type known: ${name}`);
  return s;
}

function start(cmd: Start): void {
  const protoJson = cmd.json === "proto3";
  let request: Uint8Array | Message;
  let reply: DescMessage | "bytes";
  if (cmd.payload_base64 !== undefined) {
    request = Buffer.from(cmd.payload_base64, "base64");
    reply = "bytes";
  } else {
    const req = schema(cmd.request_type, "request");
    request = jsonform.fromJson(req, cmd.request ?? {}, { protoJson }) as Message;
    reply = schema(cmd.reply_type, "reply");
  }
  const call = client.start(cmd.method, request, { timeoutMs: cmd.timeout_ms, replyType: reply });
  calls.set(cmd.id, call as Call<unknown>);
  emit({ event: "started", id: cmd.id, call_id: String(call.callId) });
  void call.status().then(async (st) => {
    let json: JsonValue | null = null;
    if (st.ok && reply !== "bytes") {
      json = jsonform.toJson(reply, (await call.result()) as Message, { protoJson });
    }
    emit({
      event: "done",
      id: cmd.id,
      status: {
        code: st.codeName,
        reason: st.reason,
        message: st.message,
        cause: enumName(Cause, st.cancellation.cause),
        process_killed: st.cancellation.processKilled,
        write_completed: st.cancellation.writeCompleted,
        partial: st.partial,
        retry_after_ms: st.retryAfterMs,
        from_server: st.fromServer,
        tool: st.tool,
      },
      reply: json,
    });
  });
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const cmd = JSON.parse(line) as Start | { op: "cancel"; id: number };
  try {
    if (cmd.op === "start") {
      start(cmd);
    } else if (cmd.op === "cancel") {
      const call = calls.get(cmd.id);
      if (call === undefined) throw new Error(`no call ${cmd.id}`);
      call.cancel().then(
        (o) => emit({ event: "cancelled", id: cmd.id, outcome: enumName(CancelOutcome, o) }),
        (e: unknown) => emit({ event: "cancelled", id: cmd.id, error: String(e) }));
    } else {
      throw new Error(`unknown op ${JSON.stringify(cmd)}`);
    }
  } catch (e) {
    emit({ event: "error", id: (cmd as { id?: number }).id ?? null, error: String(e) });
  }
});
lines.on("close", () => client.close());
