// SPDX-License-Identifier: MIT
// tk.v1.Control/Ping through the TypeScript client, for tools/bench/rpc:
//   node client/ts/bench/ping.mjs URL CALLS CONCURRENCY SIZE
// CONCURRENCY calls at once on one connection (one Client); prints one line,
// "p50_us p99_us calls_per_s errors", after a warm-up of CALLS/10.
import { Client } from "../dist/src/index.js";

const [url, callsArg, concArg, sizeArg] = process.argv.slice(2);
const calls = Number(callsArg);
const conc = Number(concArg ?? 1);
const data = new Uint8Array(Number(sizeArg ?? 64)).fill(0x78);
const client = new Client(url);
await client.connect();

async function run(n) {
  const lat = [];
  let next = 0;
  let errors = 0;
  const one = async () => {
    while (next < n) {
      next++;
      const t = process.hrtime.bigint();
      try {
        await client.control.ping({ data }, { timeoutMs: 10000 });
      } catch {
        errors++;
      }
      lat.push(Number(process.hrtime.bigint() - t) / 1000);
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: conc }, one));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { p50: q(0.5), p99: q(0.99), tp: n / s, errors };
}

await run(Math.floor(calls / 10) + 1);
const r = await run(calls);
console.log(`${r.p50.toFixed(1)} ${r.p99.toFixed(1)} ${r.tp.toFixed(0)} ${r.errors}`);
client.close();
