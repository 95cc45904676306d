/* SPDX-License-Identifier: MIT */
/* The JSON codec's names: protoc's lowerCamelCase of a field's name, a
 * field found by either name, a map field told, a map key's text, and the
 * C facts of a field (its element's size, whether it is held by pointer,
 * its presence flag, its repeated array).
 *
 * Owns: tk_json_field_name, tk_json_is_map and the descriptor questions
 * of json_int.h.
 * May call: protobuf-c's descriptors, libtkclient's catalog (which fields
 * of tk's messages are maps), libc.
 * Must never: read or write JSON text (json_text.c). */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "json_int.h"

const char *const json__type_names[] = {
    [PROTOBUF_C_TYPE_INT32] = "int32",
    [PROTOBUF_C_TYPE_SINT32] = "sint32",
    [PROTOBUF_C_TYPE_SFIXED32] = "sfixed32",
    [PROTOBUF_C_TYPE_INT64] = "int64",
    [PROTOBUF_C_TYPE_SINT64] = "sint64",
    [PROTOBUF_C_TYPE_SFIXED64] = "sfixed64",
    [PROTOBUF_C_TYPE_UINT32] = "uint32",
    [PROTOBUF_C_TYPE_FIXED32] = "fixed32",
    [PROTOBUF_C_TYPE_UINT64] = "uint64",
    [PROTOBUF_C_TYPE_FIXED64] = "fixed64",
    [PROTOBUF_C_TYPE_FLOAT] = "float",
    [PROTOBUF_C_TYPE_DOUBLE] = "double",
    [PROTOBUF_C_TYPE_BOOL] = "bool",
    [PROTOBUF_C_TYPE_ENUM] = "enum",
    [PROTOBUF_C_TYPE_STRING] = "string",
    [PROTOBUF_C_TYPE_BYTES] = "bytes",
    [PROTOBUF_C_TYPE_MESSAGE] = "message",
};

/* ---- names --------------------------------------------------------------- */

static char ascii_upper(char c)
{
    if (c >= 'a' && c <= 'z')
        return (char)(c - 'a' + 'A');
    return c;
}

/* protoc's camel-casing of a snake_case name into buf (NUL-terminated,
 * cut at len - 1): '_' dropped, the letter after it upper-cased
 * (ToJsonName; with upper_first, the first letter too, as MapEntryName
 * does). Returns the length of the whole camel-cased name. */
size_t json__to_camel(char *buf, size_t len, const char *name, bool upper_first)
{
    bool up = upper_first;
    size_t k = 0;
    for (; *name != '\0'; name++) {
        if (*name == '_') {
            up = true;
            continue;
        }
        if (k + 1 < len) {
            /* not `up ? ascii_upper(*name) : *name`: ?: promotes the
             * chars to int and the store back narrows */
            char c = *name;
            if (up)
                c = ascii_upper(c);
            buf[k] = c;
        }
        k++;
        up = false;
    }
    if (len > 0)
        buf[k < len ? k : len - 1] = '\0';
    return k;
}

size_t tk_json_field_name(char *buf, size_t len, const char *proto_name)
{
    return json__to_camel(buf, len, proto_name, false);
}

/* s[0..n) is the camel-casing of name. */
static bool camel_eq(const char *name, bool upper_first, const char *s,
                     size_t n)
{
    char buf[256];
    size_t k = json__to_camel(buf, sizeof buf, name, upper_first);
    return k == n && k < sizeof buf && memcmp(buf, s, n) == 0;
}

static bool field_matches(const ProtobufCFieldDescriptor *f, const char *key)
{
    return strcmp(f->name, key) == 0 ||
           camel_eq(f->name, false, key, strlen(key));
}

const ProtobufCFieldDescriptor *
json__find_field(const ProtobufCMessageDescriptor *desc, const char *key)
{
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (field_matches(&desc->fields[i], key))
            return &desc->fields[i];
    return NULL;
}

/* Whether entry is what the codec writes a map's entry from: key = 1 and
 * value = 2, nothing else. */
static bool entry_shaped(const ProtobufCMessageDescriptor *e)
{
    return e->n_fields == 2 && e->fields[0].id == 1 && e->fields[1].id == 2 &&
           strcmp(e->fields[0].name, "key") == 0 &&
           strcmp(e->fields[1].name, "value") == 0;
}

/* protoc's entry of a map field f of parent: <FieldName>Entry, nested. */
static bool named_as_entry(const ProtobufCMessageDescriptor *parent,
                           const ProtobufCFieldDescriptor *f,
                           const ProtobufCMessageDescriptor *e)
{
    size_t pl = strlen(parent->name);
    if (strncmp(e->name, parent->name, pl) != 0 || e->name[pl] != '.')
        return false;
    const char *short_name = e->name + pl + 1;
    size_t sl = strlen(short_name);
    return sl > 5 && strcmp(short_name + sl - 5, "Entry") == 0 &&
           camel_eq(f->name, true, short_name, sl - 5);
}

/* The catalog is asked only of fields whose entry is map-shaped: the
 * repeated messages of a large reply (a search's matches) are not, and
 * cost no lookup. */
bool json__is_map(const ProtobufCMessageDescriptor *parent,
                  const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED ||
        f->type != PROTOBUF_C_TYPE_MESSAGE || !entry_shaped(f->descriptor))
        return false;
    const tk_field_note *note = tk_catalog_find_field(parent->name, f->name);
    if (note != NULL)
        return note->map;
    if (tk_catalog_find_message(parent->name) != NULL)
        return false; /* tk's message, and the catalog says no map */
    return named_as_entry(parent, f, f->descriptor);
}

bool tk_json_is_map(const ProtobufCMessageDescriptor *message,
                    const char *field)
{
    if (message == NULL || field == NULL)
        return false;
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(message, field);
    return f != NULL && json__is_map(message, f);
}

size_t json__elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return sizeof(uint64_t);
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    default: /* the 32-bit types, enums included (as protobuf-c packs them) */
        return sizeof(uint32_t);
    }
}

bool json__is_ptr_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_STRING || t == PROTOBUF_C_TYPE_MESSAGE;
}

/* A map key is always a JSON string: the key's text (numbers in buf). */
const char *json__map_key_text(const ProtobufCFieldDescriptor *kf,
                               const void *mem, char *buf, size_t len)
{
    const char *s = buf;
    switch (kf->type) {
    case PROTOBUF_C_TYPE_STRING:
        s = *(const char *const *)mem;
        s = s != NULL ? s : "";
        break;
    case PROTOBUF_C_TYPE_BOOL:
        s = *(const protobuf_c_boolean *)mem ? "true" : "false";
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        snprintf(buf, len, "%" PRId64, *(const int64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        snprintf(buf, len, "%" PRIu64, *(const uint64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        snprintf(buf, len, "%" PRIu32, *(const uint32_t *)mem);
        break;
    default:
        snprintf(buf, len, "%" PRId32, *(const int32_t *)mem);
        break;
    }
    return s;
}

/* Marks a singular field set: the has_ flag of a proto2 optional scalar,
 * the case of a oneof member. */
void json__mark_present(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *MEMBER(uint32_t, m, f->quantifier_offset) = f->id;
    else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
             !json__is_ptr_type(f->type))
        *MEMBER(protobuf_c_boolean, m, f->quantifier_offset) = 1;
}

/* Allocates a repeated field's array, counted at once: free_unpacked frees
 * NULL elements fine if a later element fails. */
void *json__alloc_repeated(ProtobufCMessage *m,
                           const ProtobufCFieldDescriptor *f, size_t n)
{
    void *arr = calloc(n, json__elem_size(f->type));
    if (arr == NULL)
        return NULL;
    *MEMBER(void *, m, f->offset) = arr;
    *MEMBER(size_t, m, f->quantifier_offset) = n;
    return arr;
}
