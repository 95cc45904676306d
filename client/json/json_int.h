/* SPDX-License-Identifier: MIT */
/* What the files of the JSON codec (client/json/) share; none of it is
 * exported (JSON__HIDDEN). The codec's design is below.
 *
 * The files, each above those it calls (tests/arch, rule circle):
 *   json_encode.c  a message to JSON
 *   json_decode.c  JSON to a message (the third pass)
 *   json_scalars.c one JSON value to one scalar field (for json_decode.c)
 *   json_scan.c    the strict scan and json-c's tree (the first two), and
 *                  the errors and path of decoding
 *   json_text.c    base64, number literals, the output buffer, the locale
 *   json_names.c   field names, maps, the C facts of a field's type */
#ifndef TK_JSON_INT_H
#define TK_JSON_INT_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <protobuf-c/protobuf-c.h>

#include "common/common.h"

#define JSON__HIDDEN __attribute__((visibility("hidden")))

/* The proto3 JSON mapping over protobuf-c descriptors (tk/json.h).
 *
 * Decoding runs in three passes. A strict RFC 8259 scan of the text comes
 * first, because json-c's strict mode still accepts NaN, 'single quotes',
 * "1." and raw control characters, silently keeps the last of duplicate
 * keys, and clamps integers beyond 64 bits. The scan records the literal
 * text of every number; json-c then builds the tree, and each of its number
 * objects gets its literal hung on it, so integer ranges are checked on the
 * text, exactly, and nothing passes through a double on the way. Last, the
 * tree is mapped onto a message allocated with malloc, in a state that
 * protobuf_c_message_free_unpacked can free at every step.
 *
 * Beyond the mapping of proto/: map<K,V> fields (tk_json_is_map: tk's
 * catalog says which, for its messages; protoc's shape of the entry, for
 * others) are mapped to JSON objects.
 * protobuf-c 1.4.1 descriptors carry no json_name option and no oneof
 * names; well-known types (Timestamp, Duration, wrappers, Any, Struct) are
 * mapped as ordinary messages, not with their special JSON forms.
 * TK_JSON_BYTES_TEXT gives bytes fields a form people can read and type
 * (tk/json.h): the text when it is UTF-8, else {"base64":"..."}.
 */

/* Deeper input is refused by the scan; json-c's own limit sits above it. */
#define MAX_DEPTH 64
#define PATH_CAP 256
/* Bytes of user text quoted in an error message. */
#define QUOTE_MAX 64

#define MEMBER(type, msg, off) ((type *)(void *)((char *)(msg) + (off)))
#define CMEMBER(type, msg, off)                                                \
    ((const type *)(const void *)((const char *)(msg) + (off)))

JSON__HIDDEN extern const char *const json__type_names[];

/* ---- json_names.c ------------------------------------------------------ */

JSON__HIDDEN size_t json__to_camel(char *buf, size_t len, const char *name,
                                   bool upper_first);
/* tk_json_is_map, for a field at hand. */
JSON__HIDDEN bool json__is_map(const ProtobufCMessageDescriptor *parent,
                               const ProtobufCFieldDescriptor *f);
JSON__HIDDEN const ProtobufCFieldDescriptor *
json__find_field(const ProtobufCMessageDescriptor *desc, const char *key);
JSON__HIDDEN size_t json__elem_size(ProtobufCType t);
JSON__HIDDEN void json__mark_present(ProtobufCMessage *m,
                                     const ProtobufCFieldDescriptor *f);
JSON__HIDDEN void *json__alloc_repeated(ProtobufCMessage *m,
                                        const ProtobufCFieldDescriptor *f,
                                        size_t n);
JSON__HIDDEN const char *json__map_key_text(const ProtobufCFieldDescriptor *kf,
                                            const void *mem, char *buf,
                                            size_t len);
JSON__HIDDEN bool json__is_ptr_type(ProtobufCType t);

/* ---- json_text.c ------------------------------------------------------- */

enum { NUM_OK = 0, NUM_SYNTAX = -1, NUM_FRACTION = -2, NUM_RANGE = -3 };

/* The codec's output: a byte buffer (common/'s, whose growth rule is also
 * that of the codec's arrays: tkc_grow) that stops at the first failure to
 * grow, so that a writer checks once, at its end. */
typedef struct jbuf {
    tkc_buf buf;
    bool oom;
} jbuf;

JSON__HIDDEN int json__b64_decode(const char *s, size_t n,
                                  ProtobufCBinaryData *out);
JSON__HIDDEN bool json__is_digit(char c);
JSON__HIDDEN size_t json__number_prefix(const char *s, size_t n);
JSON__HIDDEN int json__parse_integer(const char *s, size_t n, bool *neg,
                                     uint64_t *mag);
JSON__HIDDEN void json__jb_put(jbuf *b, const char *s, size_t n);
JSON__HIDDEN void json__jb_puts(jbuf *b, const char *s);
JSON__HIDDEN void json__jb_printf(jbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
JSON__HIDDEN void json__jb_quote(jbuf *b, const char *s, size_t n);
JSON__HIDDEN void json__jb_base64(jbuf *b, const uint8_t *d, size_t n);

/* Numbers are read and written in the C locale whatever the caller set for
 * LC_NUMERIC ("1.5", never "1,5"); uselocale affects this thread only. */
typedef struct c_numeric {
    locale_t c, old;
} c_numeric;

JSON__HIDDEN void json__c_numeric_enter(c_numeric *l);
JSON__HIDDEN void json__c_numeric_leave(c_numeric *l);

/* ---- json_scan.c ------------------------------------------------------- */

typedef struct span {
    size_t off, len;
} span;

typedef struct dec {
    const char *text; /* the input, which number spans point into */
    int flags;        /* TK_JSON_BYTES_TEXT */
    char *err;
    size_t errlen;
    bool failed;
    char path[PATH_CAP];
    size_t plen;
} dec;

typedef struct scan {
    dec *d;
    const char *s;
    size_t n, i;
    int depth;
    span *nums; /* every number literal, in document order */
    size_t n_nums, cap_nums;
} scan;

JSON__HIDDEN int json__dec_fail(dec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
JSON__HIDDEN int json__dec_nomem(dec *d);
JSON__HIDDEN const char *json__quoted(char *buf, size_t cap, const char *s,
                                      size_t n);
JSON__HIDDEN size_t json__path_push(dec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
JSON__HIDDEN size_t json__path_push_key(dec *d, const char *key, size_t n);
JSON__HIDDEN void json__path_pop(dec *d, size_t saved);
JSON__HIDDEN int json__sc_run(scan *sc);
JSON__HIDDEN int json__parse_tree(dec *d, scan *sc, json_object **root);

/* ---- json_scalars.c ---------------------------------------------------- */

/* The JSON type of v, named for a message ("a string", "null"). */
JSON__HIDDEN const char *json__jtype(json_object *v);
/* One JSON value into the scalar field f's storage dst: integers of any
 * width, float and double, an enum, a string, bytes; each fails through
 * json__dec_fail saying what was wrong. */
/* An integer literal's text s (n bytes) into an integer field of type t
 * at dst: range-checked for t (a map's key uses it, as a value does). */
JSON__HIDDEN int json__store_int(dec *d, ProtobufCType t, const char *s,
                                 size_t n, void *dst);
JSON__HIDDEN int json__dec_int(dec *d, const ProtobufCFieldDescriptor *f,
                               json_object *v, void *dst);
JSON__HIDDEN int json__dec_real(dec *d, const ProtobufCFieldDescriptor *f,
                                json_object *v, void *dst);
JSON__HIDDEN int json__dec_enum(dec *d, const ProtobufCFieldDescriptor *f,
                                json_object *v, void *dst);
JSON__HIDDEN int json__dec_string(dec *d, json_object *v, void *dst);
JSON__HIDDEN int json__dec_bytes(dec *d, json_object *v, void *dst);

#endif
