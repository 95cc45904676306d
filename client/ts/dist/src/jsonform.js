// SPDX-License-Identifier: MIT
// Messages to and from JSON as tkcall prints and reads them, the rule of
// tk.jsonform (Python) and TK_JSON_BYTES_TEXT (C): bytes that are UTF-8 are
// a JSON string of their text, bytes that are not {"base64": "..."}; on
// input a string is always its own UTF-8 bytes and only the object is
// base64. { protoJson: true } is the strict proto3 mapping both ways.
// A field at its default is left out, as the proto3 mapping leaves it
// ({ emitDefaults: true } prints every one), except a zero that is a value
// (PRESENCES): Git/Status's "ahead": 0 and "behind": 0 beside
// "hasAheadBehind": true, a Metric's "value": 0 without a histogram.
import { create, fromJson as fromProto3, isFieldSet, toJson as toProto3, } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
// Proto3 scalars whose zero is a value, not an absence: printed when their
// message says they hold one, by a flag beside them or by the other side of
// an either-or being unset: [message, field, the field that says whether it
// holds a value, whether it does when that one is set]. The table
// `presences` of client/json/json_encode.c, the one of tk.jsonform (Python)
// too; tests/python/test_jsonform.py holds the three equal.
export const PRESENCES = [
    ["tk.v1.GitStatusBranch", "ahead", "has_ahead_behind", true],
    ["tk.v1.GitStatusBranch", "behind", "has_ahead_behind", true],
    ["tk.v1.Metric", "value", "histogram", false],
];
const FORM = 'text (a string) or {"base64": "..."} (bytes that are not UTF-8)';
const utf8 = new TextDecoder("utf-8", { fatal: true });
/** The message as JSON values (lowerCamelCase names), bytes as text; a
 * field at its default left out (unless emitDefaults), but for a zero
 * that is a value. */
export function toJson(schema, msg, opts = {}) {
    let json = toProto3(schema, msg, { alwaysEmitImplicit: opts.emitDefaults ?? false });
    if (!opts.emitDefaults)
        json = addZeros(schema, msg, json);
    return opts.protoJson ? json : walk(schema, json, "", shown);
}
// json, the JSON of msg, with the zeros that are values (PRESENCES) at
// every depth, its keys in toJson's order (field numbers).
function addZeros(schema, msg, json) {
    if (json === null || typeof json !== "object" || Array.isArray(json))
        return json;
    const out = { ...json };
    let added = false;
    for (const [name, field, when, whenSet] of PRESENCES) {
        const f = name === schema.typeName ? schema.fields.find((x) => x.name === field) : undefined;
        const w = schema.fields.find((x) => x.name === when);
        if (f === undefined || w === undefined || f.jsonName in out ||
            isFieldSet(msg, w) !== whenSet)
            continue;
        const zero = toProto3(schema, create(schema), { alwaysEmitImplicit: true });
        out[f.jsonName] = zero[f.jsonName] ?? null;
        added = true;
    }
    const sorted = {};
    if (added) {
        for (const f of [...schema.fields].sort((a, b) => a.number - b.number)) {
            if (f.jsonName in out)
                sorted[f.jsonName] = out[f.jsonName] ?? null;
        }
    }
    const res = added ? sorted : out;
    const fields = msg;
    for (const f of schema.fields) {
        const v = res[f.jsonName];
        if (v === undefined || v === null)
            continue;
        if (f.fieldKind === "message") {
            res[f.jsonName] = addZeros(f.message, fields[f.localName], v);
        }
        else if (f.fieldKind === "list" && f.listKind === "message" && Array.isArray(v)) {
            const ms = fields[f.localName];
            res[f.jsonName] = v.map((x, i) => addZeros(f.message, ms[i], x));
        }
        else if (f.fieldKind === "map" && f.mapKind === "message" && typeof v === "object" &&
            !Array.isArray(v)) {
            const ms = fields[f.localName];
            const o = {};
            for (const [k, x] of Object.entries(v))
                o[k] = addZeros(f.message, ms[k], x);
            res[f.jsonName] = o;
        }
    }
    return res;
}
/** A message of schema from JSON values (proto or lowerCamelCase names). */
export function fromJson(schema, json, opts = {}) {
    if (opts.protoJson)
        return fromProto3(schema, json);
    if (json === null || typeof json !== "object" || Array.isArray(json)) {
        throw new Error("expected a JSON object");
    }
    return fromProto3(schema, walk(schema, json, "", typed));
}
function shown(v, _path) {
    const raw = Buffer.from(String(v), "base64");
    try {
        return utf8.decode(raw);
    }
    catch {
        return { base64: raw.toString("base64") };
    }
}
function typed(v, path) {
    if (typeof v === "string")
        return Buffer.from(v, "utf8").toString("base64");
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        const keys = Object.keys(v);
        const b64 = v.base64;
        if (keys.length === 1 && typeof b64 === "string" &&
            /^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) {
            return b64;
        }
    }
    throw new Error(`${path}: bytes are ${FORM}`);
}
function isBytes(f) {
    return f.fieldKind === "scalar" && f.scalar === ScalarType.BYTES;
}
// A copy of json (of schema) with every bytes value passed through conv.
function walk(schema, json, path, conv) {
    if (json === null || typeof json !== "object" || Array.isArray(json))
        return json;
    const out = {};
    for (const [k, v] of Object.entries(json)) {
        const f = schema.fields.find((x) => x.jsonName === k || x.name === k);
        const p = path ? `${path}.${k}` : k;
        out[k] = f === undefined || v === null ? v : field(f, v, p, conv);
    }
    return out;
}
function field(f, v, path, conv) {
    const one = (x, p) => {
        switch (f.fieldKind) {
            case "scalar":
                return isBytes(f) ? conv(x, p) : x;
            case "message":
                return walk(f.message, x, p, conv);
            case "list":
                if (f.listKind === "message")
                    return walk(f.message, x, p, conv);
                return f.listKind === "scalar" && f.scalar === ScalarType.BYTES ? conv(x, p) : x;
            case "map":
                if (f.mapKind === "message")
                    return walk(f.message, x, p, conv);
                return f.mapKind === "scalar" && f.scalar === ScalarType.BYTES ? conv(x, p) : x;
            default:
                return x;
        }
    };
    if (f.fieldKind === "list" && Array.isArray(v))
        return v.map((x, i) => one(x, `${path}[${i}]`));
    if (f.fieldKind === "map" && v !== null && typeof v === "object" && !Array.isArray(v)) {
        const out = {};
        for (const [mk, mv] of Object.entries(v))
            out[mk] = one(mv, `${path}.${mk}`);
        return out;
    }
    return one(v, path);
}
