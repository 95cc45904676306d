import { type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
export interface JsonFormOptions {
    /** The proto3 mapping: bytes as base64 strings. */
    readonly protoJson?: boolean;
    /** Fields at their default values too (proto3 omits them). */
    readonly emitDefaults?: boolean;
}
export declare const PRESENCES: readonly (readonly [string, string, string, boolean])[];
/** The message as JSON values (lowerCamelCase names), bytes as text; a
 * field at its default left out (unless emitDefaults), but for a zero
 * that is a value. */
export declare function toJson<D extends DescMessage>(schema: D, msg: MessageShape<D>, opts?: JsonFormOptions): JsonValue;
/** A message of schema from JSON values (proto or lowerCamelCase names). */
export declare function fromJson<D extends DescMessage>(schema: D, json: JsonValue, opts?: JsonFormOptions): MessageShape<D>;
