import { type DescMessage, type Message } from "@bufbuild/protobuf";
/**
 * A message's fields as a typed method takes them: a bytes field also takes
 * a string, its UTF-8 (as tkcall takes text for bytes), at any depth.
 */
export type TextInit<T> = T extends Uint8Array ? Uint8Array | string : T extends readonly (infer E)[] ? TextInit<E>[] : T extends object ? {
    [K in keyof T]: TextInit<T[K]>;
} : T;
/**
 * A bytes field as text, when it is UTF-8: text(reply.branch!.head) is
 * "main". Bytes that are not UTF-8 (git's names need not be) throw a
 * TypeError rather than become other text: use the bytes themselves, which
 * the field keeps, and which a bytes field takes back as they are.
 */
export declare function text(bytes: Uint8Array): string;
/**
 * The fields of a message of desc as given, each string given for a bytes
 * field encoded as UTF-8; a copy, the caller's object untouched.
 */
export declare function textInit(desc: DescMessage, init: unknown): unknown;
/**
 * cwd joined with rel as tkcall's paths.c joins them: "." is cwd, a leading
 * "./" is dropped; ".." stays for tkd to resolve (symlinks included), as a
 * shell would.
 */
export declare function joined(cwd: string, rel: string): string;
/**
 * m with each relative path in a field marked (tk.v1.path) made absolute
 * against cwd (default: the process's working directory), as tkcall does:
 * a copy when there is one, m itself when not. tkd refuses a relative
 * path: it resolves paths itself, on its own machine.
 */
export declare function absolutePaths<M extends Message>(desc: DescMessage, m: M, cwd?: string): M;
