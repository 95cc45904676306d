// SPDX-License-Identifier: MIT
// Runs client/ts's own tests with node --test (Node >= 18): the compiled
// dist/test/*.test.js, named one by one (node 18 and 20 read a directory
// argument differently).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const top = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(top, "dist", "test");
if (!existsSync(join(top, "node_modules")) || !existsSync(dist)) {
  console.error(`client/ts is not installed and built: run npm ci in ${top}`);
  process.exit(1);
}
const files = readdirSync(dist).filter((f) => f.endsWith(".test.js")).sort()
  .map((f) => join(dist, f));
const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
