export interface MethodEntry {
    /** "tk.v1.Control/Ping" */
    readonly name: string;
    /** "tk.v1.PingRequest" */
    readonly requestType: string;
    readonly replyType: string;
    /** READ follows its caller; WRITE, once started, runs to completion. */
    readonly kind: "READ" | "WRITE";
    /** What a call with no timeout gets. */
    readonly defaultTimeoutMs: number;
    /** READ: no call runs longer; WRITE: its own timeout. */
    readonly ceilingMs: number;
    /** The reply's list and its ceiling (tk.v1.ListSpec), or null. */
    readonly list: ListBound | null;
}
/** What bounds a reply's list (tk.v1.ListSpec, options.proto). */
export interface ListBound {
    /** The reply's repeated field, as in the .proto: "commits". */
    readonly field: string;
    /** The request's field that lowers it, "" when none. */
    readonly limitField: string;
    /** Items when the request names no limit (0 without limitField). */
    readonly defaultItems: number;
    /** The ceiling: no reply holds more; a larger limit is served as it. */
    readonly maxItems: number;
    /** Bytes of the items' paths and text at most; 0: none but maxItems. */
    readonly maxBytes: number;
}
/** Every method, in the order of proto/ (files by name, then as declared). */
export declare const METHODS: readonly MethodEntry[];
