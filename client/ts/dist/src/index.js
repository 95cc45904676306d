// SPDX-License-Identifier: MIT
// tk: the TypeScript client of tkd, NNG's REQ protocol on node:net and
// node:tls, no native code.
//
//     import { Client, TkError } from "tk-client";
//     const client = new Client();            // TK_ADDR, else tkd's default socket
//     const reply = await client.control.ping({ data: new TextEncoder().encode("hi") },
//                                             { timeoutMs: 2000 });
//     const call = client.git.startStatus({ repo }, { signal });  // abort: Control/Cancel
//     const st = await client.git.status({ repo: ".", paths: ["README.md"] });
//     text(st.branch!.head);                  // "main" (the field: its bytes)
//     client.close();
export { Client, DEFAULT_MAX_REPLY_BYTES, defaultAddress, registry, } from "./client.js";
export { ASK_MAX_PAUSE_MS, ASK_SAME_ANSWERS, ASK_TIMEOUT_MS, CANCEL_TIMEOUT_MS, Call, GRACE_MS, MAX_WAIT_MS, WRITE_STOP_MS, } from "./inflight.js";
export { parseAddress } from "./conn.js";
export { Cause, CancelOutcome, Code, Status, TkError, codeName, enumName, } from "./status.js";
export { text } from "./text.js";
export * as catalog from "./catalog.js";
export * as jsonform from "./jsonform.js";
export * as wire from "./wire.js";
export { services } from "../gen/tk/services.js";
