/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec of libtkclient: any protobuf-c message to and from the
 * proto3 JSON mapping, by reflection over the descriptors (no generated
 * code per message).
 *
 * Boundary: owns the mapping (lowerCamelCase names on output, both the
 * proto name and lowerCamelCase accepted on input; 64-bit integers as
 * strings; bytes as base64, or as text with TK_JSON_BYTES_TEXT; enums by
 * name; default values omitted on output). May call: protobuf-c, json-c
 * (parsing only), libtkclient's catalog (which fields are maps).
 * Must never: print, accept an unknown field silently, reinterpret what
 * was typed (text as base64 in text mode), or produce a message that
 * protobuf_c_message_free_unpacked cannot free.
 *
 * Bytes fields (git's paths, branch names, patches, search lines) have two
 * forms. The proto3 JSON mapping (flags without TK_JSON_BYTES_TEXT) writes
 * and reads them as base64 strings, as every proto3 JSON tool does.
 * TK_JSON_BYTES_TEXT, tkcall's default, is for people:
 *
 *   bytes that are UTF-8     "gen/"                the text, JSON-escaped
 *   bytes that are not       {"base64":"Z2Vu/w=="} standard base64, padded
 *
 * and reads a string as its own UTF-8 bytes (never as base64: "aGk=" is the
 * four bytes a, G, k, =) and {"base64":"..."} (its one member; standard or
 * URL-safe alphabet, padding optional) as base64. U+0000 and control
 * characters are UTF-8, so they are text ("a\u0000b"). The two forms
 * cannot be mistaken for each other, and every value round-trips to the
 * same bytes in both modes.
 */
#ifndef TK_JSON_H
#define TK_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include <tk/client.h> /* TK_ERR_* */

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TK_JSON_PRETTY = 1 << 0,        /* two-space indentation, newlines */
    TK_JSON_EMIT_DEFAULTS = 1 << 1, /* print fields with default values */
    TK_JSON_BYTES_TEXT = 1 << 2,    /* bytes as text or {"base64":...},
                                       both ways (above) */
};

/* Encodes msg: fields in descriptor order, by their lowerCamelCase names;
 * fields that protobuf-c would not put on the wire (proto3 defaults, unset
 * proto2 optionals, unchosen oneof members) left out unless
 * TK_JSON_EMIT_DEFAULTS, but for the few proto3 scalars whose zero is a
 * value when their message says they hold one (GitStatusBranch's ahead
 * and behind with has_ahead_behind, a Metric's value without a histogram),
 * printed then; enums by name, or by number when the enum has no
 * name for the value; NaN and the infinities as "NaN", "Infinity",
 * "-Infinity"; strings that are not UTF-8 with U+FFFD; bytes as base64,
 * or with TK_JSON_BYTES_TEXT as text or {"base64":...}. Deterministic.
 * Returns a malloc'd NUL-terminated string (free it), or NULL when out of
 * memory or msg is NULL. */
char *tk_json_encode(const ProtobufCMessage *msg, int flags);

/* Decodes one JSON object of len bytes into a new message of desc, freed
 * with protobuf_c_message_free_unpacked(*out, NULL), in the proto3 JSON
 * mapping: tk_json_decode_ex with flags 0. The input is strict
 * RFC 8259 JSON (UTF-8; no NaN literals, comments or single quotes) with no
 * duplicate keys, and nothing but whitespace after the object. null for a
 * field means its default. Returns TK_OK, TK_ERR_ARG with err naming the
 * field path and what was wrong ("methods[2].kind: unknown enum value \"REED\"
 * ...", "unknown field \"rpeo\" in tk.v1.PingRequest"), or TK_ERR_NOMEM
 * (the TK_ERR_* of tk/client.h). err may be NULL; a short one is cut. */
int tk_json_decode(const ProtobufCMessageDescriptor *desc, const char *json,
                   size_t len, ProtobufCMessage **out, char *err,
                   size_t errlen);

/* tk_json_decode with flags: TK_JSON_BYTES_TEXT reads bytes fields in the
 * text form (above; a bad one fails naming its path, "paths[0].base64:
 * invalid base64 ..."); other flags are ignored. The output comes first,
 * as new APIs of tk put it. */
int tk_json_decode_ex(ProtobufCMessage **out,
                      const ProtobufCMessageDescriptor *desc, const char *json,
                      size_t len, int flags, char *err, size_t errlen);

/* A JSON string literal, quotes included, of len bytes of text that is not
 * a message (a status's stderr excerpt): escaped as JSON needs, bytes that
 * are not UTF-8 replaced by U+FFFD. Returns a malloc'd string (free it), or
 * NULL when out of memory. */
char *tk_json_string(const void *data, size_t len);

/* The JSON name of a field: protoc's lowerCamelCase of its proto name
 * ("retry_after_ms" -> "retryAfterMs"), NUL-terminated in buf, cut at
 * len - 1. Returns the length of the whole name. */
size_t tk_json_field_name(char *buf, size_t len, const char *proto_name);

/* Whether the field of message whose proto name is field is a map<K, V>,
 * a JSON object (protobuf-c keeps no map_entry option: to it a map is a
 * repeated KEntry of key = 1 and value = 2). For a message of tk's
 * catalog, the catalog's answer (tk_catalog_find_field's map), the one
 * tkcall describe prints too; for any other, protoc's shape of the entry
 * (named <Field>Entry, nested in message). False for no such field. */
bool tk_json_is_map(const ProtobufCMessageDescriptor *message,
                    const char *field);

#ifdef __cplusplus
}
#endif

#endif /* TK_JSON_H */
