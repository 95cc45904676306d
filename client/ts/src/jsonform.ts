// SPDX-License-Identifier: MIT
// Messages to and from JSON as tkcall prints and reads them, the rule of
// tk.jsonform (Python) and TK_JSON_BYTES_TEXT (C): bytes that are UTF-8 are
// a JSON string of their text, bytes that are not {"base64": "..."}; on
// input a string is always its own UTF-8 bytes and only the object is
// base64. { protoJson: true } is the strict proto3 mapping both ways.

import {
  type DescField, type DescMessage, type JsonObject, type JsonValue, type MessageShape,
  fromJson as fromProto3, toJson as toProto3,
} from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";

export interface JsonFormOptions {
  /** The proto3 mapping: bytes as base64 strings. */
  readonly protoJson?: boolean;
  /** Fields at their default values too (proto3 omits them). */
  readonly emitDefaults?: boolean;
}

const FORM = 'text (a string) or {"base64": "..."} (bytes that are not UTF-8)';
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The message as JSON values (lowerCamelCase names), bytes as text. */
export function toJson<D extends DescMessage>(schema: D, msg: MessageShape<D>,
                                              opts: JsonFormOptions = {}): JsonValue {
  const json = toProto3(schema, msg, { alwaysEmitImplicit: opts.emitDefaults ?? false });
  return opts.protoJson ? json : walk(schema, json, "", shown);
}

/** A message of schema from JSON values (proto or lowerCamelCase names). */
export function fromJson<D extends DescMessage>(schema: D, json: JsonValue,
                                                opts: JsonFormOptions = {}): MessageShape<D> {
  if (opts.protoJson) return fromProto3(schema, json);
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new Error("expected a JSON object");
  }
  return fromProto3(schema, walk(schema, json, "", typed));
}

function shown(v: JsonValue, _path: string): JsonValue {
  const raw = Buffer.from(String(v), "base64");
  try {
    return utf8.decode(raw);
  } catch {
    return { base64: raw.toString("base64") };
  }
}

function typed(v: JsonValue, path: string): JsonValue {
  if (typeof v === "string") return Buffer.from(v, "utf8").toString("base64");
  if (v !== null && typeof v === "object" && !Array.isArray(v)) {
    const keys = Object.keys(v);
    const b64 = (v as JsonObject).base64;
    if (keys.length === 1 && typeof b64 === "string" &&
        /^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) {
      return b64;
    }
  }
  throw new Error(`${path}: bytes are ${FORM}`);
}

function isBytes(f: DescField): boolean {
  return f.fieldKind === "scalar" && f.scalar === ScalarType.BYTES;
}

// A copy of json (of schema) with every bytes value passed through conv.
function walk(schema: DescMessage, json: JsonValue, path: string,
              conv: (v: JsonValue, path: string) => JsonValue): JsonValue {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(json)) {
    const f = schema.fields.find((x) => x.jsonName === k || x.name === k);
    const p = path ? `${path}.${k}` : k;
    out[k] = f === undefined || v === null ? v : field(f, v, p, conv);
  }
  return out;
}

function field(f: DescField, v: JsonValue, path: string,
               conv: (v: JsonValue, path: string) => JsonValue): JsonValue {
  const one = (x: JsonValue, p: string): JsonValue => {
    switch (f.fieldKind) {
      case "scalar":
        return isBytes(f) ? conv(x, p) : x;
      case "message":
        return walk(f.message, x, p, conv);
      case "list":
        if (f.listKind === "message") return walk(f.message, x, p, conv);
        return f.listKind === "scalar" && f.scalar === ScalarType.BYTES ? conv(x, p) : x;
      case "map":
        if (f.mapKind === "message") return walk(f.message, x, p, conv);
        return f.mapKind === "scalar" && f.scalar === ScalarType.BYTES ? conv(x, p) : x;
      default:
        return x;
    }
  };
  if (f.fieldKind === "list" && Array.isArray(v)) return v.map((x, i) => one(x, `${path}[${i}]`));
  if (f.fieldKind === "map" && v !== null && typeof v === "object" && !Array.isArray(v)) {
    const out: JsonObject = {};
    for (const [mk, mv] of Object.entries(v)) out[mk] = one(mv, `${path}.${mk}`);
    return out;
  }
  return one(v, path);
}
