/* SPDX-License-Identifier: MIT */
/* The JSON codec's encoder: a message to the proto3 JSON mapping
 * (tk_json_encode), and a string quoted as JSON (tk_json_string).
 *
 * Owns: which fields are emitted (and the proto3 scalars whose zero is
 * printed: presences) and how each value is written (maps as
 * objects with their keys in order, 64-bit integers as strings, bytes as
 * base64 or text).
 * May call: json_names.c, json_text.c, protobuf-c's descriptors.
 * Must never: decode, print. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "json_int.h"

typedef struct enc {
    jbuf b;
    int flags;
    int depth;
} enc;

static void enc_message(enc *e, const ProtobufCMessage *m);

/* The value protobuf-c leaves out of the wire for a proto3 field. */
static bool is_zero(const ProtobufCFieldDescriptor *f, const void *mem)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)mem == 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)mem == 0;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)mem;
        return s == NULL || s[0] == '\0';
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)mem)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(const ProtobufCMessage *const *)mem == NULL;
    default:
        return json__elem_size(f->type) == sizeof(uint64_t)
                   ? *(const uint64_t *)mem == 0
                   : *(const uint32_t *)mem == 0;
    }
}

/* Proto3 scalars whose zero is a value, not an absence: printed when their
 * message says they hold one, by a flag beside them or by the other side
 * of an either-or being unset. A branch level with its upstream is
 * "hasAheadBehind":true,"ahead":0,"behind":0, not a flag alone; a counter
 * at 0 is "value":0, not a metric with neither value nor histogram. The
 * Python and TypeScript JSON forms (tk.jsonform's _PRESENCES, client/ts's
 * PRESENCES) hold the same rows: python-jsonform fails when they differ. */
static const struct presence {
    const char *message, *field;
    const char *when; /* the field that says whether field holds a value */
    bool when_set;    /* it does when `when` is set (else: when unset) */
} presences[] = {
    { "tk.v1.GitStatusBranch", "ahead", "has_ahead_behind", true },
    { "tk.v1.GitStatusBranch", "behind", "has_ahead_behind", true },
    { "tk.v1.Metric", "value", "histogram", false },
};

static bool holds_a_value(const ProtobufCMessage *m,
                          const ProtobufCFieldDescriptor *f)
{
    for (size_t i = 0; i < sizeof presences / sizeof presences[0]; i++) {
        const struct presence *p = &presences[i];
        if (strcmp(f->name, p->field) != 0 ||
            strcmp(m->descriptor->name, p->message) != 0)
            continue;
        const ProtobufCFieldDescriptor *w =
            protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
                                                            p->when);
        return w != NULL &&
               !is_zero(w, CMEMBER(char, m, w->offset)) == p->when_set;
    }
    return false;
}

/* Whether the field is printed: exactly when protobuf-c would pack it, or
 * when it holds a value whose zero matters (presences), or always with
 * TK_JSON_EMIT_DEFAULTS (unchosen oneof members excepted). */
static bool field_emitted(const ProtobufCMessage *m,
                          const ProtobufCFieldDescriptor *f, int flags)
{
    const void *mem = CMEMBER(char, m, f->offset);
    bool all = (flags & TK_JSON_EMIT_DEFAULTS) != 0;
    bool ptr_set = json__is_ptr_type(f->type) &&
                   *(const void *const *)mem != NULL &&
                   *(const void *const *)mem != f->default_value;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *CMEMBER(uint32_t, m, f->quantifier_offset) == f->id &&
               (!json__is_ptr_type(f->type) || ptr_set);
    switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
        return true;
    case PROTOBUF_C_LABEL_REPEATED:
        return all || *CMEMBER(size_t, m, f->quantifier_offset) > 0;
    case PROTOBUF_C_LABEL_OPTIONAL:
        return all ||
               (json__is_ptr_type(f->type)
                    ? ptr_set
                    : *CMEMBER(protobuf_c_boolean, m, f->quantifier_offset));
    default:
        return all || !is_zero(f, mem) || holds_a_value(m, f);
    }
}

static void enc_newline(enc *e)
{
    if (!(e->flags & TK_JSON_PRETTY))
        return;
    json__jb_put(&e->b, "\n", 1);
    for (int i = 0; i < e->depth; i++)
        json__jb_put(&e->b, "  ", 2);
}

/* Opens an object member or array element: the comma, the line, the key. */
static void enc_member(enc *e, bool *first, const char *key, size_t klen)
{
    if (!*first)
        json__jb_put(&e->b, ",", 1);
    *first = false;
    enc_newline(e);
    if (key == NULL)
        return;
    json__jb_quote(&e->b, key, klen);
    json__jb_puts(&e->b, e->flags & TK_JSON_PRETTY ? ": " : ":");
}

static void enc_close(enc *e, bool empty, const char *bracket)
{
    e->depth--;
    if (!empty)
        enc_newline(e);
    json__jb_puts(&e->b, bracket);
}

/* Shortest text that reads back to the same value; NaN and the infinities
 * as the strings of the mapping. */
static void enc_real(enc *e, double v, bool single)
{
    if (isnan(v)) {
        json__jb_puts(&e->b, "\"NaN\"");
        return;
    }
    if (isinf(v)) {
        json__jb_puts(&e->b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            break;
    }
    json__jb_puts(&e->b, buf);
}

static void enc_enum(enc *e, const ProtobufCFieldDescriptor *f, int v)
{
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value(f->descriptor, v);
    if (ev != NULL)
        json__jb_quote(&e->b, ev->name, strlen(ev->name));
    else
        json__jb_printf(&e->b, "%d", v);
}

/* Bytes: base64 (the proto3 mapping); with TK_JSON_BYTES_TEXT, the text
 * when they are UTF-8 (U+0000 and control characters included, escaped as
 * JSON escapes them), else {"base64":"..."}, which no text can be taken
 * for. Both read back to the same bytes. */
static void enc_bytes(enc *e, const ProtobufCBinaryData *bd)
{
    const char *s = (const char *)bd->data;
    if (!(e->flags & TK_JSON_BYTES_TEXT)) {
        json__jb_base64(&e->b, bd->data, bd->len);
    } else if (bd->len == 0 || tkc_utf8_valid(s, bd->len)) {
        json__jb_quote(&e->b, bd->len > 0 ? s : "", bd->len);
    } else {
        json__jb_puts(&e->b, e->flags & TK_JSON_PRETTY ? "{\"base64\": "
                                                       : "{\"base64\":");
        json__jb_base64(&e->b, bd->data, bd->len);
        json__jb_put(&e->b, "}", 1);
    }
}

/* One value: a singular field, an element of a repeated one, a map value. */
static void enc_value(enc *e, const ProtobufCFieldDescriptor *f,
                      const void *mem)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        json__jb_printf(&e->b, "%" PRId32, *(const int32_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        json__jb_printf(&e->b, "%" PRIu32, *(const uint32_t *)mem);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        json__jb_printf(&e->b, "\"%" PRId64 "\"", *(const int64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        json__jb_printf(&e->b, "\"%" PRIu64 "\"", *(const uint64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        enc_real(e, *(const float *)mem, true);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        enc_real(e, *(const double *)mem, false);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        json__jb_puts(&e->b,
                      *(const protobuf_c_boolean *)mem ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM:
        enc_enum(e, f, *(const int *)mem);
        break;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)mem;
        if (s == NULL) /* an unset proto2 field, printed for EMIT_DEFAULTS */
            s = f->default_value != NULL ? f->default_value : "";
        json__jb_quote(&e->b, s, strlen(s));
        break;
    }
    case PROTOBUF_C_TYPE_BYTES:
        enc_bytes(e, mem);
        break;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)mem;
        if (sub != NULL)
            enc_message(e, sub);
        else
            json__jb_puts(&e->b, "null");
        break;
    }
    }
}

static void enc_array(enc *e, const ProtobufCFieldDescriptor *f,
                      const char *arr, size_t n)
{
    bool first = true;
    json__jb_put(&e->b, "[", 1);
    e->depth++;
    for (size_t i = 0; i < n; i++) {
        enc_member(e, &first, NULL, 0);
        enc_value(e, f, arr + i * json__elem_size(f->type));
    }
    enc_close(e, n == 0, "]");
}

/* Each entry's key as the output shows it (quoted), in keys[i]; NULL for
 * an entry that is NULL. false when out of memory. */
static bool map_keys(const ProtobufCFieldDescriptor *kf,
                     ProtobufCMessage *const *entries, size_t n, jbuf *keys)
{
    for (size_t i = 0; i < n; i++) {
        if (entries[i] == NULL)
            continue;
        char buf[32];
        const char *s = json__map_key_text(
            kf, CMEMBER(char, entries[i], kf->offset), buf, sizeof buf);
        json__jb_quote(&keys[i], s, strlen(s));
        if (keys[i].oom)
            return false;
    }
    return true;
}

/* Whether a later entry has entry i's key. */
static bool key_again(const jbuf *keys, size_t i, size_t n)
{
    for (size_t j = i + 1; j < n; j++)
        if (keys[j].buf.data != NULL &&
            strcmp(keys[i].buf.data, keys[j].buf.data) == 0)
            return true;
    return false;
}

/* On the wire a map key may come more than once, and protobuf keeps the
 * last; a JSON object may not (tk_json_decode refuses a repeated key), so
 * each key is written once, with its last value. Keys are compared as
 * written: "\xff" and "\xfe" both show as U+FFFD, bool keys 1 and 5 as
 * "true", a string key holding a NUL as its text before it. */
static void enc_map(enc *e, const ProtobufCFieldDescriptor *f,
                    ProtobufCMessage *const *entries, size_t n)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    jbuf *keys = n > 0 ? calloc(n, sizeof *keys) : NULL;
    size_t shown = n;
    if ((n > 0 && keys == NULL) || !map_keys(kf, entries, n, keys)) {
        e->b.oom = true;
        shown = 0;
    }
    bool first = true;
    json__jb_put(&e->b, "{", 1);
    e->depth++;
    for (size_t i = 0; i < shown; i++) {
        const ProtobufCMessage *entry = entries[i];
        if (entry == NULL || key_again(keys, i, n))
            continue;
        char buf[32];
        const char *key = json__map_key_text(
            kf, CMEMBER(char, entry, kf->offset), buf, sizeof buf);
        enc_member(e, &first, key, strlen(key));
        const void *vmem = CMEMBER(char, entry, vf->offset);
        /* A message value missing from the wire is an empty message. */
        if (vf->type == PROTOBUF_C_TYPE_MESSAGE &&
            *(const ProtobufCMessage *const *)vmem == NULL)
            json__jb_puts(&e->b, "{}");
        else
            enc_value(e, vf, vmem);
    }
    enc_close(e, first, "}");
    for (size_t i = 0; keys != NULL && i < n; i++)
        free(keys[i].buf.data);
    free(keys);
}

static void enc_field(enc *e, const ProtobufCMessage *m,
                      const ProtobufCFieldDescriptor *f)
{
    const void *mem = CMEMBER(char, m, f->offset);
    if (f->label != PROTOBUF_C_LABEL_REPEATED) {
        enc_value(e, f, mem);
        return;
    }
    size_t n = *CMEMBER(size_t, m, f->quantifier_offset);
    const void *arr = *(const void *const *)mem;
    if (arr == NULL)
        n = 0;
    if (json__is_map(m->descriptor, f))
        enc_map(e, f, arr, n);
    else
        enc_array(e, f, arr, n);
}

static void enc_message(enc *e, const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    bool first = true;
    json__jb_put(&e->b, "{", 1);
    e->depth++;
    for (unsigned i = 0; i < desc->n_fields && !e->b.oom; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (!field_emitted(m, f, e->flags))
            continue;
        char name[256];
        size_t k = json__to_camel(name, sizeof name, f->name, false);
        enc_member(e, &first, name, k < sizeof name ? k : sizeof name - 1);
        enc_field(e, m, f);
    }
    enc_close(e, first, "}");
}

char *tk_json_encode(const ProtobufCMessage *msg, int flags)
{
    if (msg == NULL || msg->descriptor == NULL)
        return NULL;
    enc e = { .flags = flags };
    c_numeric loc;
    json__c_numeric_enter(&loc);
    enc_message(&e, msg);
    json__c_numeric_leave(&loc);
    if (e.b.oom) {
        free(e.b.buf.data);
        return NULL;
    }
    return e.b.buf.data;
}

char *tk_json_string(const void *data, size_t len)
{
    jbuf b = { 0 };
    json__jb_quote(&b, data != NULL ? data : "", data != NULL ? len : 0);
    if (b.oom) {
        free(b.buf.data);
        return NULL;
    }
    return b.buf.data;
}
