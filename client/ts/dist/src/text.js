// SPDX-License-Identifier: MIT
// Requests as people type them, the rules tkcall follows: text for a bytes
// field, and a relative path made absolute. Owns text() (a bytes field read
// as text), the encoding of a string given for a bytes field, and the paths
// of a request made absolute against the process's working directory.
// Reads only the message descriptors (the field option (tk.v1.path) of
// proto/tk/v1/options.proto, as tkcall's paths.c reads it from the
// catalog); sends nothing.
import { ScalarType, clone, getOption, } from "@bufbuild/protobuf";
import { PathKind, path as pathOption } from "../gen/tk/v1/options_pb.js";
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/**
 * A bytes field as text, when it is UTF-8: text(reply.branch!.head) is
 * "main". Bytes that are not UTF-8 (git's names need not be) throw a
 * TypeError rather than become other text: use the bytes themselves, which
 * the field keeps, and which a bytes field takes back as they are.
 */
export function text(bytes) {
    try {
        return decoder.decode(bytes);
    }
    catch {
        throw new TypeError(`tk: the bytes ${Buffer.from(bytes).toString("hex")} are not UTF-8 ` +
            "text: use them as bytes");
    }
}
/** A string's UTF-8; one with a lone surrogate is no text UTF-8 holds. */
function utf8(s, where) {
    if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)) {
        throw new TypeError(`tk: ${where}: the string holds a lone surrogate, which UTF-8 ` +
            "cannot encode; give a Uint8Array");
    }
    return new TextEncoder().encode(s);
}
function isBytes(f) {
    return (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar") ||
        (f.fieldKind === "map" && f.mapKind === "scalar")) && f.scalar === ScalarType.BYTES;
}
function value(f, v) {
    if (v === undefined || v === null)
        return v;
    if (isBytes(f)) {
        const one = (x) => typeof x === "string" ? utf8(x, f.parent.typeName + "." + f.name)
            : x;
        if (f.fieldKind === "list" && Array.isArray(v))
            return v.map(one);
        if (f.fieldKind === "map" && typeof v === "object") {
            return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, one(x)]));
        }
        return one(v);
    }
    const m = f.message;
    if (m === undefined || typeof v !== "object")
        return v;
    if (f.fieldKind === "list" && Array.isArray(v))
        return v.map((x) => textInit(m, x));
    if (f.fieldKind === "map") {
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, textInit(m, x)]));
    }
    return textInit(m, v);
}
/**
 * The fields of a message of desc as given, each string given for a bytes
 * field encoded as UTF-8; a copy, the caller's object untouched.
 */
export function textInit(desc, init) {
    if (init === null || typeof init !== "object" || init instanceof Uint8Array)
        return init;
    const out = { ...init };
    for (const f of desc.fields) {
        if (f.oneof !== undefined) {
            const o = out[f.oneof.localName];
            if (o?.case === f.localName)
                out[f.oneof.localName] = { ...o, value: value(f, o.value) };
        }
        else if (f.localName in out) {
            out[f.localName] = value(f, out[f.localName]);
        }
    }
    return out;
}
/**
 * cwd joined with rel as tkcall's paths.c joins them: "." is cwd, a leading
 * "./" is dropped; ".." stays for tkd to resolve (symlinks included), as a
 * shell would.
 */
export function joined(cwd, rel) {
    while (rel.startsWith("./"))
        rel = rel.slice(2).replace(/^\/+/, "");
    if (rel === ".")
        rel = "";
    if (rel === "")
        return cwd;
    return cwd === "/" ? cwd + rel : `${cwd}/${rel}`;
}
const hasPaths = new Map();
/** Whether desc has a path field (tk.v1.path) at any depth. */
function holdsPaths(desc) {
    const known = hasPaths.get(desc.typeName);
    if (known !== undefined)
        return known;
    hasPaths.set(desc.typeName, false); // a recursive message ends here
    const yes = desc.fields.some((f) => f.fieldKind === "scalar" ? isPath(f)
        : (f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message"))
            && holdsPaths(f.message));
    hasPaths.set(desc.typeName, yes);
    return yes;
}
function isPath(f) {
    return f.fieldKind === "scalar" && f.scalar === ScalarType.STRING &&
        getOption(f, pathOption) !== PathKind.PATH_KIND_UNSPECIFIED;
}
/** Walks m's path fields: fix(value) gives the new value, or undefined. */
function walk(desc, m, fix) {
    let any = false;
    for (const f of desc.fields) {
        if (f.fieldKind === "scalar" && isPath(f)) {
            const holder = f.oneof === undefined ? m : m[f.oneof.localName];
            const key = f.oneof === undefined ? f.localName : "value";
            if (f.oneof !== undefined && holder.case !== f.localName)
                continue;
            const got = fix(holder[key]);
            if (got !== undefined) {
                holder[key] = got;
                any = true;
            }
        }
        else if (f.fieldKind === "message" && holdsPaths(f.message)) {
            const v = f.oneof === undefined ? m[f.localName]
                : m[f.oneof.localName].case === f.localName
                    ? m[f.oneof.localName].value : undefined;
            if (v !== undefined)
                any = walk(f.message, v, fix) || any;
        }
        else if (f.fieldKind === "list" && f.listKind === "message" && holdsPaths(f.message)) {
            for (const v of m[f.localName]) {
                any = walk(f.message, v, fix) || any;
            }
        }
    }
    return any;
}
const relative = (v) => v !== "" && !v.startsWith("/") ? v : undefined;
/**
 * m with each relative path in a field marked (tk.v1.path) made absolute
 * against cwd (default: the process's working directory), as tkcall does:
 * a copy when there is one, m itself when not. tkd refuses a relative
 * path: it resolves paths itself, on its own machine.
 */
export function absolutePaths(desc, m, cwd) {
    if (!holdsPaths(desc))
        return m;
    const bag = m;
    if (!walk(desc, bag, (v) => relative(v) === undefined ? undefined : v))
        return m;
    let dir = cwd;
    if (dir === undefined) {
        try {
            dir = process.cwd();
        }
        catch (e) {
            throw new TypeError("tk: cannot make the request's relative paths absolute (the " +
                `working directory: ${e.message}); give absolute paths`);
        }
    }
    const copy = clone(desc, m);
    walk(desc, copy, (v) => relative(v) === undefined ? undefined : joined(dir, v));
    return copy;
}
