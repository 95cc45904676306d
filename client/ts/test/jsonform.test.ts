// SPDX-License-Identifier: MIT
// jsonform (src/jsonform.ts) without a server: a zero that is a value is
// printed (ahead/behind beside hasAheadBehind, a Metric's value without a
// histogram), at any depth; a zero that is no value is still left out.

import assert from "node:assert/strict";
import { test } from "node:test";

import { create } from "@bufbuild/protobuf";

import {
  HistogramSchema, MetricSchema, MetricFamilySchema, StatsReplySchema,
} from "../gen/tk/v1/control_pb.js";
import { GitStatusBranchSchema, GitStatusReplySchema } from "../gen/tk/v1/git_pb.js";
import { fromJson, toJson } from "../src/jsonform.js";

const compact = (v: unknown): string => JSON.stringify(v);

test("ahead and behind are printed at 0 beside hasAheadBehind, not without it", () => {
  const b = create(GitStatusBranchSchema);
  assert.equal(compact(toJson(GitStatusBranchSchema, b)), "{}");
  b.hasAheadBehind = true;
  assert.equal(compact(toJson(GitStatusBranchSchema, b)),
               '{"hasAheadBehind":true,"ahead":0,"behind":0}');
  b.oid = "x";
  b.ahead = 2;
  assert.equal(compact(toJson(GitStatusBranchSchema, b)),
               '{"oid":"x","hasAheadBehind":true,"ahead":2,"behind":0}');
  assert.equal(compact(toJson(GitStatusBranchSchema, b, { protoJson: true })),
               '{"oid":"x","hasAheadBehind":true,"ahead":2,"behind":0}');
  // In a reply, where Git/Status puts it.
  const r = create(GitStatusReplySchema, { branch: { hasAheadBehind: true } });
  assert.equal(compact(toJson(GitStatusReplySchema, r)),
               '{"branch":{"hasAheadBehind":true,"ahead":0,"behind":0}}');
});

test("a Metric's value is printed at 0 without a histogram, left out beside one", () => {
  assert.equal(compact(toJson(MetricSchema, create(MetricSchema))), '{"value":0}');
  const h = create(MetricSchema, { histogram: create(HistogramSchema) });
  assert.equal(compact(toJson(MetricSchema, h)), '{"histogram":{}}');
  const s = create(StatsReplySchema, {
    families: [create(MetricFamilySchema, { name: "c", metrics: [create(MetricSchema), h] })],
  });
  assert.equal(compact(toJson(StatsReplySchema, s)),
               '{"families":[{"name":"c","metrics":[{"value":0},{"histogram":{}}]}]}');
  // emitDefaults prints every field, these as the others.
  assert.equal(compact(toJson(MetricSchema, create(MetricSchema), { emitDefaults: true })),
               '{"labels":[],"value":0}');
  // Read back: the same message.
  const back = fromJson(MetricSchema, { value: 0 });
  assert.equal(compact(toJson(MetricSchema, back)), '{"value":0}');
});
