import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { services } from "../gen/tk/services.js";
import type { Call } from "./inflight.js";
import type { TextInit } from "./text.js";
/** The options of one call. */
export interface CallOptions {
    /**
     * The deadline in milliseconds, sent to tkd as timeout_ms (relative, so
     * clocks never need to agree); omitted or 0: the method's default.
     */
    readonly timeoutMs?: number;
    /**
     * Aborting it cancels the call: tk.v1.Control/Cancel on the call's
     * connection. The call then ends with tkd's answer (CANCELLED, cause
     * CALLER; a started WRITE runs to completion and ends with its result).
     */
    readonly signal?: AbortSignal;
}
/** A method of gen/ts's services: its full name, request and reply. */
export type MethodSpec = {
    readonly method: string;
    readonly input: DescMessage;
    readonly output: DescMessage;
};
/**
 * The typed methods of one service: m(request, options) and startM(...). A
 * bytes field takes a string too (its UTF-8), as tkcall takes text; a
 * relative path in a field marked (tk.v1.path) is made absolute against
 * the working directory, as tkcall does (tkd refuses relative paths).
 */
export type Stub<S> = {
    -readonly [K in keyof S]: S[K] extends MethodSpec ? (request?: TextInit<MessageInitShape<S[K]["input"]>>, options?: CallOptions) => Promise<MessageShape<S[K]["output"]>> : never;
} & {
    -readonly [K in keyof S as K extends string ? `start${Capitalize<K>}` : never]: S[K] extends MethodSpec ? (request?: TextInit<MessageInitShape<S[K]["input"]>>, options?: CallOptions) => Call<MessageShape<S[K]["output"]>> : never;
};
/** Every service of proto/ as a typed stub: client.git.revParse(...). */
export type Services = {
    -readonly [S in keyof typeof services]: Stub<(typeof services)[S]>;
};
/** The spec of a method by full name; undefined when gen/ts lacks it. */
export declare function specOf(method: string): MethodSpec | undefined;
