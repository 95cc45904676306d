import type { GenEnum, GenExtension, GenFile, GenMessage } from "@bufbuild/protobuf/codegenv2";
import type { FieldOptions, MethodOptions } from "@bufbuild/protobuf/wkt";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/options.proto.
 */
export declare const file_tk_v1_options: GenFile;
/**
 * @generated from message tk.v1.MethodSpec
 */
export type MethodSpec = Message<"tk.v1.MethodSpec"> & {
    /**
     * Required.
     *
     * @generated from field: tk.v1.MethodSpec.Kind kind = 1;
     */
    kind: MethodSpec_Kind;
    /**
     * The deadline of a request that says timeout_ms 0. Required, at most
     * ceiling_ms.
     *
     * @generated from field: uint32 default_timeout_ms = 2;
     */
    defaultTimeoutMs: number;
    /**
     * READ: no caller's timeout goes past it. WRITE: its own timeout.
     * Required.
     *
     * @generated from field: uint32 ceiling_ms = 3;
     */
    ceilingMs: number;
    /**
     * tkd runs it on the receive path, before the queue, so that it answers
     * when every worker is busy: only for a handler that never blocks
     * (RPC_METHOD_INLINE).
     *
     * @generated from field: bool inline = 4;
     */
    inline: boolean;
    /**
     * A READ whose last step writes (it has a commit point): a listener that
     * serves READs only refuses it as it refuses a WRITE
     * (RPC_METHOD_WRITES). Only on a READ.
     *
     * @generated from field: bool writes = 5;
     */
    writes: boolean;
    /**
     * The reply's list that grows with what the repository, the tree or
     * the table holds, and its ceiling. Unset: the reply has no such list
     * (its lists are bounded by what tkd itself holds, such as its method
     * table; the method's comment says how).
     *
     * @generated from field: tk.v1.ListSpec list = 6;
     */
    list?: ListSpec;
};
/**
 * Describes the message tk.v1.MethodSpec.
 * Use `create(MethodSpecSchema)` to create a new message.
 */
export declare const MethodSpecSchema: GenMessage<MethodSpec>;
/**
 * The numbers of MethodInfo.Kind (control.proto), which cannot be
 * imported here: control.proto imports this file.
 *
 * @generated from enum tk.v1.MethodSpec.Kind
 */
export declare enum MethodSpec_Kind {
    /**
     * @generated from enum value: KIND_UNSPECIFIED = 0;
     */
    KIND_UNSPECIFIED = 0,
    /**
     * Follows its caller: cancel, deadline and shutdown end it.
     *
     * @generated from enum value: READ = 1;
     */
    READ = 1,
    /**
     * Once started, runs to completion under its own timeout (ceiling_ms),
     * whatever its caller does; a read-only listener refuses it.
     *
     * @generated from enum value: WRITE = 2;
     */
    WRITE = 2
}
/**
 * Describes the enum tk.v1.MethodSpec.Kind.
 */
export declare const MethodSpec_KindSchema: GenEnum<MethodSpec_Kind>;
/**
 * What bounds a reply's list. No reply holds more than max_items items
 * (nor, with max_bytes, more than max_bytes of their paths and text): a
 * reply cut at a bound is a success with partial results (Status.partial,
 * cause LIMIT), never an error. A caller may lower the bound with the
 * request's limit_field, never raise it: a limit above max_items is served
 * as max_items (and the reply is partial when more exist). tkd's memory
 * for one call follows from these numbers (DESIGN.md, "Bounds").
 *
 * @generated from message tk.v1.ListSpec
 */
export type ListSpec = Message<"tk.v1.ListSpec"> & {
    /**
     * The reply's repeated field: "commits". Required.
     *
     * @generated from field: string field = 1;
     */
    field: string;
    /**
     * The request's uint32 field that lowers it ("max_count"), 0 meaning
     * default_items; empty when the caller cannot lower it.
     *
     * @generated from field: string limit_field = 2;
     */
    limitField: string;
    /**
     * The items of a reply whose request names no limit: required with
     * limit_field (at most max_items), 0 without it.
     *
     * @generated from field: uint32 default_items = 3;
     */
    defaultItems: number;
    /**
     * The ceiling: no reply holds more items. Required.
     *
     * @generated from field: uint32 max_items = 4;
     */
    maxItems: number;
    /**
     * The most bytes of the items' paths and text (file contents, commit
     * messages, names); 0 when max_items alone bounds them (the method's
     * comment says how).
     *
     * @generated from field: uint32 max_bytes = 5;
     */
    maxBytes: number;
};
/**
 * Describes the message tk.v1.ListSpec.
 * Use `create(ListSpecSchema)` to create a new message.
 */
export declare const ListSpecSchema: GenMessage<ListSpec>;
/**
 * What a string field that names a file or directory holds.
 *
 * @generated from enum tk.v1.PathKind
 */
export declare enum PathKind {
    /**
     * Not a path.
     *
     * @generated from enum value: PATH_KIND_UNSPECIFIED = 0;
     */
    PATH_KIND_UNSPECIFIED = 0,
    /**
     * An absolute path that must resolve (symlinks followed) inside one of
     * tkd's --root directories: PERMISSION_DENIED PATH_OUTSIDE_ROOT
     * otherwise.
     *
     * @generated from enum value: PATH_IN_ROOTS = 1;
     */
    PATH_IN_ROOTS = 1,
    /**
     * An absolute path on tkd's machine, anywhere.
     *
     * @generated from enum value: PATH_ABSOLUTE = 2;
     */
    PATH_ABSOLUTE = 2
}
/**
 * Describes the enum tk.v1.PathKind.
 */
export declare const PathKindSchema: GenEnum<PathKind>;
/**
 * 51700: a number in the range protobuf leaves to an organisation's own
 * options (50000-99999).
 *
 * @generated from extension: tk.v1.MethodSpec method = 51700;
 */
export declare const method: GenExtension<MethodOptions, MethodSpec>;
/**
 * 51701: the next number of the same range.
 *
 * @generated from extension: tk.v1.PathKind path = 51701;
 */
export declare const path: GenExtension<FieldOptions, PathKind>;
