// SPDX-License-Identifier: MIT
// The client against a fake REP peer written here (what it sends, byte by
// byte; a peer that hangs up, that speaks another protocol) and against the
// real tkd and testd (TKD, TESTD from meson): ipc, tcp, tls+tcp with
// client certificates, AbortSignal's Cancel, the deadline. Without TKD the
// server tests are skipped, saying so, unless TK_TS_REQUIRE_SERVERS=1
// (meson sets it), where they fail.

import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { create, fromBinary, toBinary } from "@bufbuild/protobuf";

import { PingReplySchema, PingRequestSchema } from "../gen/tk/v1/control_pb.js";
import {
  GitRevParseReplySchema, GitRevParseRequestSchema, GitStatusRequest_Untracked,
} from "../gen/tk/v1/git_pb.js";
import { ServiceRenderRequestSchema } from "../gen/tk/v1/services_pb.js";
import { ReplySchema, RequestSchema, StatusSchema } from "../gen/tk/v1/rpc_pb.js";
import { Cause, CancelOutcome, Client, Code, TkError, defaultAddress, text }
  from "../src/index.js";
import { absolutePaths, textInit } from "../src/text.js";
import {
  FrameDecoder, PROTO_REP, PROTO_REQ, REQUEST_ID_BIT, encodeFrame, handshake,
} from "../src/wire.js";

const dir = mkdtempSync(join(tmpdir(), "tk-ts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Every client a test opens is closed after the file's tests, also when an
// assertion stopped a test before its own close(): an open connection
// would keep node, and the run, alive until the watchdog.
const opened: Client[] = [];
after(() => { for (const c of opened) c.close(); });
class TestClient extends Client {
  constructor(...args: ConstructorParameters<typeof Client>) {
    super(...args);
    opened.push(this);
  }
}
const enc = (s: string) => new TextEncoder().encode(s);

interface Seen { hello: Uint8Array; requests: { id: number; env: ReturnType<typeof parseEnv> }[] }
const parseEnv = (b: Uint8Array) => fromBinary(RequestSchema, b);

// A REP peer on ipc: answers with `hello`, then calls `answer` per request.
function fakeRep(name: string, hello: Uint8Array,
                 answer: (sock: net.Socket, id: number, env: ReturnType<typeof parseEnv>) => void)
    : Promise<{ url: string; seen: Seen; server: net.Server }> {
  const path = join(dir, name);
  const seen: Seen = { hello: new Uint8Array(0), requests: [] };
  const server = net.createServer((sock) => {
    sock.write(hello);
    let got = Buffer.alloc(0);
    // The client's side, read as NNG's REP would (REQ's protocol number).
    const d = new FrameDecoder(true, PROTO_REQ, 1 << 20);
    sock.on("data", (c) => {
      if (seen.hello.length < 8) {
        got = Buffer.concat([got, c]);
        seen.hello = new Uint8Array(got.subarray(0, 8));
      }
      for (const f of d.push(c)) {
        const id = new DataView(f.buffer, f.byteOffset).getUint32(0);
        const env = parseEnv(f.subarray(4));
        seen.requests.push({ id, env });
        answer(sock, id, env);
      }
    });
    sock.on("error", () => { /* the client hung up */ });
  });
  // A failed test leaves no server keeping node alive.
  server.unref();
  return new Promise((resolve) => server.listen(path, () =>
    resolve({ url: `ipc://${path}`, seen, server })));
}

function reply(sock: net.Socket, id: number, callId: bigint, payload: Uint8Array,
               code = 0, cause = 0): void {
  const env = toBinary(ReplySchema, create(ReplySchema, {
    callId, payload, status: create(StatusSchema, { code, cancellation: { cause } }),
  }));
  const body = new Uint8Array(4 + env.length);
  new DataView(body.buffer).setUint32(0, id);
  body.set(env, 4);
  sock.write(encodeFrame(body, true));
}

test("the client sends REQ's handshake and request ids with bit 31 (negative control)",
     async () => {
  const { url, seen, server } = await fakeRep("echo.sock", handshake(PROTO_REP),
    (sock, id, env) => reply(sock, id, env.callId, toBinary(PingReplySchema,
      create(PingReplySchema, { data: enc("pong"), serverVersion: "fake" }))));
  const c = new TestClient(url);
  const r = await Promise.all([1, 2, 3].map(() => c.control.ping({}, { timeoutMs: 1234 })));
  assert.equal(r[0].serverVersion, "fake");
  assert.deepEqual(seen.hello, handshake(PROTO_REQ));
  assert.equal(seen.hello[5], 0x30);
  assert.equal(seen.requests.length, 3);
  for (const q of seen.requests) {
    assert.ok((q.id & REQUEST_ID_BIT) !== 0, `request id ${q.id.toString(16)} has bit 31`);
    assert.equal(q.env.method, "tk.v1.Control/Ping");
    assert.equal(q.env.timeoutMs, 1234);
  }
  // Call ids unique on the connection; request ids too.
  assert.equal(new Set(seen.requests.map((q) => q.env.callId)).size, 3);
  assert.equal(new Set(seen.requests.map((q) => q.id)).size, 3);
  c.close();
  server.close();
});

test("a peer that is not REP is refused: UNAVAILABLE, not sent", async () => {
  const { url, seen, server } = await fakeRep("req.sock", handshake(PROTO_REQ), () => {});
  const c = new TestClient(url);
  await assert.rejects(c.control.ping({}, { timeoutMs: 2000 }), (e: TkError) => {
    assert.equal(e.code, Code.UNAVAILABLE);
    assert.equal(e.fromServer, false);
    assert.match(e.message, /0x0030, not 0x0031.*not sent/);
    return true;
  });
  assert.equal(seen.requests.length, 0);
  c.close();
  server.close();
});

test("a connection lost in flight: UNAVAILABLE, whether it ran is unknown, never resent",
     async () => {
  const { url, seen, server } = await fakeRep("drop.sock", handshake(PROTO_REP),
                                              (sock) => sock.destroy());
  const c = new TestClient(url);
  await assert.rejects(c.control.ping({}, { timeoutMs: 2000 }), (e: TkError) => {
    assert.equal(e.code, Code.UNAVAILABLE);
    assert.match(e.message, /whether it ran is unknown/);
    return true;
  });
  assert.equal(seen.requests.length, 1);
  c.close();
  server.close();
});

test("an AbortSignal sends Control/Cancel for the call, on its connection", async () => {
  const conns = new Set<net.Socket>();
  const { url, seen, server } = await fakeRep("cancel.sock", handshake(PROTO_REP),
    (sock, id, env) => {
      conns.add(sock);
      if (env.method !== "tk.v1.Control/Cancel") return; // held until cancelled
      const held = seen.requests[0];
      reply(sock, id, env.callId, Uint8Array.of(8, 1)); // outcome CANCELLED
      reply(sock, held.id, held.env.callId, new Uint8Array(0), Code.CANCELLED, Cause.CALLER);
    });
  const c = new TestClient(url);
  const ac = new AbortController();
  const call = c.control.startPing({}, { timeoutMs: 5000, signal: ac.signal });
  while (seen.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  ac.abort();
  const st = await call.status();
  assert.equal(st.code, Code.CANCELLED);
  assert.equal(st.cancellation.cause, Cause.CALLER);
  assert.ok(st.fromServer);
  assert.equal(seen.requests[1].env.method, "tk.v1.Control/Cancel");
  assert.equal(conns.size, 1, "the Cancel went on the call's connection");
  // An abort before the call is sent sends nothing.
  const early = new AbortController();
  early.abort();
  await assert.rejects(c.control.ping({}, { signal: early.signal }),
                       (e: TkError) => e.code === Code.CANCELLED && !e.fromServer);
  assert.equal(seen.requests.length, 2);
  c.close();
  server.close();
});

test("the default address: TK_ADDR, else XDG_RUNTIME_DIR's socket", () => {
  const saved = { ...process.env };
  try {
    process.env.TK_ADDR = "tcp://127.0.0.1:1";
    assert.equal(defaultAddress(), "tcp://127.0.0.1:1");
    delete process.env.TK_ADDR;
    process.env.XDG_RUNTIME_DIR = "/run/user/7";
    assert.equal(defaultAddress(), "ipc:///run/user/7/tk/tkd.sock");
    delete process.env.XDG_RUNTIME_DIR;
    assert.equal(defaultAddress(), `ipc:///tmp/tk-${process.geteuid?.()}/tkd.sock`);
  } finally {
    process.env = saved;
  }
});

// ---- the real servers ----

const TKD = process.env.TKD;
const TESTD = process.env.TESTD;
const skip = TKD && TESTD ? false
  : process.env.TK_TS_REQUIRE_SERVERS === "1" ? false
  : "TKD and TESTD (meson's test environment) are not set";

function daemon(argv: string[], ready: string, stream: "stdout" | "stderr")
    : Promise<{ p: ChildProcess; output: () => string }> {
  if (!argv[0]) throw new Error("TKD/TESTD not set: run under meson (meson test -C build/gcc)");
  const p = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  p.stdout!.on("data", (c) => { out += c; });
  p.stderr!.on("data", (c) => { err += c; });
  after(() => { p.kill("SIGKILL"); });
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if ((stream === "stdout" ? out : err).includes(ready)) {
        clearInterval(t);
        resolve({ p, output: () => out });
      } else if (p.exitCode !== null) {
        clearInterval(t);
        reject(new Error(`${argv[0]} exited: ${err}`));
      }
    }, 10);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { stdio: "ignore" });
}

function certs(): Record<string, string> {
  const f = (n: string) => join(dir, n);
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "30", "-subj", "/CN=tk test CA");
  for (const [name, ext] of [
    ["server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"],
    ["client", "extendedKeyUsage=clientAuth\n"],
  ]) {
    writeFileSync(f(`${name}.ext`), ext);
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f(`${name}.key`), "-out", f(`${name}.csr`), "-subj", `/CN=${name}`);
    openssl("x509", "-req", "-in", f(`${name}.csr`), "-CA", f("ca.pem"), "-CAkey", f("ca.key"),
            "-CAcreateserial", "-out", f(`${name}.pem`), "-days", "30",
            "-extfile", f(`${name}.ext`));
  }
  return { ca: f("ca.pem"), serverCert: f("server.pem"), serverKey: f("server.key"),
           cert: f("client.pem"), key: f("client.key") };
}

test("tkd over ipc, tcp and tls+tcp with a client certificate", { skip }, async () => {
  const c = certs();
  const [tcpPort, tlsPort] = [await freePort(), await freePort()];
  const ipc = `ipc://${join(dir, "tkd.sock")}`;
  const tcp = `tcp://127.0.0.1:${tcpPort}`;
  const tls = `tls+tcp://127.0.0.1:${tlsPort}`;
  await daemon([TKD!, "--listen", ipc, "--listen", tcp, "--insecure-plain-tcp",
                "--listen", tls, "--tls-cert", c.serverCert, "--tls-key", c.serverKey,
                "--tls-ca", c.ca, "--root", dir, "--log-level", "info"],
               `listening on ${tls}`, "stderr");
  for (const [url, opts] of [[ipc, {}], [tcp, {}],
                             [tls, { tlsCa: c.ca, tlsCert: c.cert, tlsKey: c.key }]] as const) {
    const client = new TestClient(url, opts);
    const r = await client.control.ping({ data: enc(url) }, { timeoutMs: 5000 });
    assert.equal(new TextDecoder().decode(r.data), url);
    const many = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      client.control.ping({ data: Uint8Array.of(i) }, { timeoutMs: 5000 })));
    assert.deepEqual(many.map((m) => m.data[0]), Array.from({ length: 16 }, (_, i) => i));
    await assert.rejects(client.call("tk.v1.Nope/Nothing", new Uint8Array(0),
                                     { replyType: "bytes" }),
                         (e: TkError) => e.reason === "UNKNOWN_METHOD" && e.fromServer);
    client.close();
  }
  // No client certificate: tkd refuses the handshake.
  const anon = new TestClient(tls, { tlsCa: c.ca });
  await assert.rejects(anon.control.ping({}, { timeoutMs: 3000 }),
                       (e: TkError) => e.code === Code.UNAVAILABLE && /not sent/.test(e.message));
  anon.close();
});

test("testd: the deadline is tkd's, an AbortSignal is CANCELLED by tkd", { skip }, async () => {
  const url = `ipc://${join(dir, "testd.sock")}`;
  const d = await daemon([TESTD!, "--listen", url], "READY", "stdout");
  const client = new TestClient(url);
  const late = await client.start("tk.test.Test/Wait", new Uint8Array(0),
                                  { timeoutMs: 200, replyType: "bytes" }).status();
  assert.equal(late.code, Code.DEADLINE_EXCEEDED);
  assert.equal(late.cancellation.cause, Cause.DEADLINE);
  assert.ok(late.fromServer, `${late}`);
  const entered = (d.output().match(/ENTERED Wait/g) ?? []).length;
  const ac = new AbortController();
  const call = client.start("tk.test.Test/Wait", new Uint8Array(0),
                            { timeoutMs: 10000, replyType: "bytes", signal: ac.signal });
  while ((d.output().match(/ENTERED Wait/g) ?? []).length === entered) {
    await new Promise((r) => setTimeout(r, 10));
  }
  ac.abort();
  const st = await call.status();
  assert.equal(await call.cancel(), CancelOutcome.CANCELLED, "the abort's Cancel");
  assert.equal(st.code, Code.CANCELLED);
  assert.equal(st.cancellation.cause, Cause.CALLER);
  assert.ok(st.fromServer);
  client.close();
});

test("paths and text as tkcall takes them, without a server", () => {
  // tkcall's paths.c: "." is the directory, "./" dropped, ".." kept for
  // tkd, absolute and empty left; nested messages too, the caller's own
  // message untouched; bytes fields take strings, lists included.
  for (const [given, made] of [[".", "/w"], ["./a", "/w/a"], [".//a", "/w/a"],
                               ["../x", "/w/../x"], ["/abs", "/abs"], ["", ""]]) {
    const req = create(GitRevParseRequestSchema, { repo: given });
    assert.equal(absolutePaths(GitRevParseRequestSchema, req, "/w").repo, made, given);
  }
  const spec = create(ServiceRenderRequestSchema, { spec: { program: "bin/x", workingDir: "." } });
  const out = absolutePaths(ServiceRenderRequestSchema, spec, "/w");
  assert.deepEqual([out.spec!.program, out.spec!.workingDir], ["/w/bin/x", "/w"]);
  assert.equal(spec.spec!.program, "bin/x");
  const ping = create(PingRequestSchema, textInit(PingRequestSchema, { data: "h\u00e9" }) as never);
  assert.deepEqual(ping.data, enc("h\u00e9"));
  assert.throws(() => textInit(PingRequestSchema, { data: "\ud800" }), TypeError);
  assert.equal(text(enc("h\u00e9")), "h\u00e9");
  assert.throws(() => text(Uint8Array.of(0x6e, 0xff)), /not UTF-8/);
});

function git(repo: string, ...args: string[]): string {
  return execFileSync("git", ["-C", repo, ...args], {
    encoding: "utf8",
    env: { ...process.env, HOME: repo, GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "tk",
           GIT_AUTHOR_EMAIL: "tk@example.invalid", GIT_COMMITTER_NAME: "tk",
           GIT_COMMITTER_EMAIL: "tk@example.invalid" },
  });
}

test("tkd: repo \".\", paths as text, a branch as text, a name not UTF-8 as bytes",
     { skip }, async () => {
  const root = join(dir, "root");
  const repo = join(root, "repo");
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q");
  git(repo, "commit", "-q", "--allow-empty", "-m", "first");
  const branch = git(repo, "symbolic-ref", "--short", "HEAD").trim();
  for (const name of ["u.txt", "v.txt"]) writeFileSync(join(repo, name), "");
  const odd = Buffer.concat([Buffer.from(repo + "/n"), Buffer.of(0xff), Buffer.from(".txt")]);
  writeFileSync(odd, "");
  const url = `ipc://${join(dir, "tkd-text.sock")}`;
  await daemon([TKD!, "--listen", url, "--root", root, "--log-level", "info"],
               `listening on ${url}`, "stderr");
  const client = new TestClient(url);
  const ALL = GitStatusRequest_Untracked.ALL;
  const cwd = process.cwd();
  process.chdir(repo);
  let st;
  let oid;
  try {
    st = await client.git.status({ repo: ".", paths: ["u.txt"], untracked: ALL },
                                 { timeoutMs: 30000 });
    oid = (await client.call("tk.v1.Git/RevParse",
                             create(GitRevParseRequestSchema, { repo: "./", rev: "HEAD" }),
                             { replyType: GitRevParseReplySchema })).oid;
  } finally {
    process.chdir(cwd);
  }
  assert.deepEqual(st.entries.map((e) => text(e.path)), ["u.txt"]);
  assert.equal(text(st.branch!.head), branch);
  assert.deepEqual(st.branch!.head, enc(branch)); // the raw bytes
  assert.equal(oid, git(repo, "rev-parse", "HEAD").trim());
  const all = await client.git.status({ repo, untracked: ALL }, { timeoutMs: 30000 });
  const raw = all.entries.map((e) => e.path).filter((p) => p[0] === 0x6e);
  assert.deepEqual(raw, [Uint8Array.of(0x6e, 0xff, 0x2e, 0x74, 0x78, 0x74)]);
  const again = await client.git.status({ repo, paths: raw, untracked: ALL },
                                        { timeoutMs: 30000 });
  assert.deepEqual(again.entries.map((e) => e.path), raw);
  client.close();
});
