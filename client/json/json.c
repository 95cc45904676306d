/* SPDX-License-Identifier: MIT */
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
 * Beyond the mapping of proto/: map<K,V> fields are recognised by the shape
 * protoc gives their entry message (fields key = 1 and value = 2, named
 * <FieldName>Entry, nested in the parent) and mapped to JSON objects.
 * protobuf-c 1.4.1 descriptors carry no json_name option and no oneof
 * names; well-known types (Timestamp, Duration, wrappers, Any, Struct) are
 * mapped as ordinary messages, not with their special JSON forms.
 * TK_JSON_BYTES_TEXT gives bytes fields a form people can read and type
 * (tk/json.h): the text when it is UTF-8, else {"base64":"..."}.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

/* Deeper input is refused by the scan; json-c's own limit sits above it. */
#define MAX_DEPTH 64
#define PATH_CAP 256
/* Bytes of user text quoted in an error message. */
#define QUOTE_MAX 64

#define MEMBER(type, msg, off) ((type *)(void *)((char *)(msg) + (off)))
#define CMEMBER(type, msg, off)                                                \
    ((const type *)(const void *)((const char *)(msg) + (off)))

static const char *const type_names[] = {
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
static size_t to_camel(char *buf, size_t len, const char *name,
                       bool upper_first)
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
    return to_camel(buf, len, proto_name, false);
}

/* s[0..n) is the camel-casing of name. */
static bool camel_eq(const char *name, bool upper_first, const char *s,
                     size_t n)
{
    char buf[256];
    size_t k = to_camel(buf, sizeof buf, name, upper_first);
    return k == n && k < sizeof buf && memcmp(buf, s, n) == 0;
}

static bool field_matches(const ProtobufCFieldDescriptor *f, const char *key)
{
    return strcmp(f->name, key) == 0 ||
           camel_eq(f->name, false, key, strlen(key));
}

static const ProtobufCFieldDescriptor *
find_field(const ProtobufCMessageDescriptor *desc, const char *key)
{
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (field_matches(&desc->fields[i], key))
            return &desc->fields[i];
    return NULL;
}

/* A map<K,V> field: protoc's synthetic entry message, recognised by shape
 * since protobuf-c keeps no map_entry option. */
static bool is_map(const ProtobufCMessageDescriptor *parent,
                   const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED ||
        f->type != PROTOBUF_C_TYPE_MESSAGE)
        return false;
    const ProtobufCMessageDescriptor *e = f->descriptor;
    if (e->n_fields != 2 || e->fields[0].id != 1 || e->fields[1].id != 2 ||
        strcmp(e->fields[0].name, "key") != 0 ||
        strcmp(e->fields[1].name, "value") != 0)
        return false;
    size_t pl = strlen(parent->name);
    if (strncmp(e->name, parent->name, pl) != 0 || e->name[pl] != '.')
        return false;
    const char *short_name = e->name + pl + 1;
    size_t sl = strlen(short_name);
    return sl > 5 && strcmp(short_name + sl - 5, "Entry") == 0 &&
           camel_eq(f->name, true, short_name, sl - 5);
}

/* ---- base64 -------------------------------------------------------------- */

/* Standard or URL-safe base64, with or without padding. Returns 0,
 * TK_ERR_ARG when malformed, TK_ERR_NOMEM. *out is NULL for no bytes. */
static int b64_decode(const char *s, size_t n, ProtobufCBinaryData *out)
{
    const unsigned flags = TKC_B64_URL | TKC_B64_NOPAD;
    size_t len = tkc_base64_len(s, n, flags);
    if (len == SIZE_MAX)
        return TK_ERR_ARG;
    out->data = NULL;
    out->len = 0;
    if (len == 0)
        return 0;
    uint8_t *buf = malloc(len);
    if (buf == NULL)
        return TK_ERR_NOMEM;
    if (tkc_base64_decode(buf, s, n, flags) == SIZE_MAX) {
        free(buf);
        return TK_ERR_ARG;
    }
    out->data = buf;
    out->len = len;
    return 0;
}

/* ---- numbers ------------------------------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the run of digits that starts at s[i]. */
static size_t skip_digits(const char *s, size_t n, size_t i)
{
    while (i < n && is_digit(s[i]))
        i++;
    return i;
}

/* The length of the JSON number (RFC 8259 grammar) at the start of s, or 0. */
static size_t number_prefix(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && is_digit(s[i]))
        i = skip_digits(s, n, i);
    else
        return 0;
    if (i < n && s[i] == '.') {
        if (i + 1 >= n || !is_digit(s[i + 1]))
            return 0;
        i = skip_digits(s, n, i + 1);
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i]))
            return 0;
        i = skip_digits(s, n, i);
    }
    return i;
}

enum { NUM_OK = 0, NUM_SYNTAX = -1, NUM_FRACTION = -2, NUM_RANGE = -3 };

/* The exponent of a number whose 'e' or 'E' is at s[i]; beyond 10^6 it only
 * decides the error. */
static long exponent_value(const char *s, size_t n, size_t i)
{
    long e = 0;
    bool eneg = s[++i] == '-';
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; i < n; i++)
        e = e < 1000000 ? e * 10 + (s[i] - '0') : e;
    return eneg ? -e : e;
}

/* The integer digits[0..nd) * 10^scale into *mag, or NUM_FRACTION /
 * NUM_RANGE. Leading zeros are already gone. */
static int digits_value(const char *digits, size_t nd, long scale,
                        uint64_t *mag)
{
    while (nd > 0 && digits[nd - 1] == '0')
        nd--, scale++;
    if (nd == 0)
        return NUM_OK;
    if (scale < 0)
        return NUM_FRACTION;
    if ((long)nd + scale > 20)
        return NUM_RANGE;
    uint64_t v = 0;
    for (size_t k = 0; k < nd + (size_t)scale; k++) {
        unsigned d = k < nd ? (unsigned)(digits[k] - '0') : 0;
        if (v > (UINT64_MAX - d) / 10)
            return NUM_RANGE;
        v = v * 10 + d;
    }
    *mag = v;
    return NUM_OK;
}

/* A JSON number that must be an exact integer ("-12", "1e3", "1.50e1"):
 * sign and magnitude, or NUM_SYNTAX / NUM_FRACTION / NUM_RANGE (beyond 64
 * bits). Exact at every size: no double on the way. */
static int parse_integer(const char *s, size_t n, bool *neg, uint64_t *mag)
{
    *neg = false;
    *mag = 0;
    if (n == 0 || number_prefix(s, n) != n)
        return NUM_SYNTAX;
    size_t i = 0;
    if (s[i] == '-')
        *neg = true, i++;
    /* The digits of the mantissa (the point skipped), with their scale. */
    char digits[32];
    size_t nd = 0, skipped = 0;
    long scale = 0;
    bool frac = false;
    for (; i < n && (is_digit(s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.') {
            frac = true;
            continue;
        }
        if (frac)
            scale--;
        if (nd == 0 && s[i] == '0')
            continue;
        if (nd < sizeof digits)
            digits[nd++] = s[i];
        else if (s[i] != '0')
            return frac ? NUM_FRACTION : NUM_RANGE;
        else
            skipped++;
    }
    if (i < n)
        scale += exponent_value(s, n, i);
    scale += (long)skipped;
    return digits_value(digits, nd, scale, mag);
}

/* ---- output -------------------------------------------------------------- */

/* The codec's output: a byte buffer (common/'s, whose growth rule is also
 * that of the codec's arrays: tkc_grow) that stops at the first failure to
 * grow, so that a writer checks once, at its end. */
typedef struct jbuf {
    tkc_buf buf;
    bool oom;
} jbuf;

static void jb_put(jbuf *b, const char *s, size_t n)
{
    if (!b->oom && tkc_buf_append(&b->buf, s, n) != 0)
        b->oom = true;
}

static void jb_puts(jbuf *b, const char *s)
{
    jb_put(b, s, strlen(s));
}

static void jb_printf(jbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void jb_printf(jbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        jb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string. Bytes that are not UTF-8 become U+FFFD: protobuf-c does
 * not check strings on unpack, and the output must stay valid JSON. */
/* The two-character escape of c (RFC 8259), or NULL. */
static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    case '\b':
        return "\\b";
    case '\f':
        return "\\f";
    default:
        return NULL;
    }
}

static void jb_quote(jbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    jb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = short_escape(c);
        if (esc != NULL) {
            jb_puts(b, esc);
            i++;
        } else if (c < 0x20) {
            char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            jb_put(b, u, sizeof u);
            i++;
        } else {
            size_t l = tkc_utf8_seq(s + i, n - i, NULL);
            jb_put(b, l ? s + i : "\xef\xbf\xbd", l ? l : 3);
            i += l ? l : 1;
        }
    }
    jb_put(b, "\"", 1);
}

static void jb_base64(jbuf *b, const uint8_t *d, size_t n)
{
    jb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i += 48) { /* whole groups of three */
        char q[64];
        jb_put(b, q, tkc_base64_encode(q, d + i, n - i < 48 ? n - i : 48));
    }
    jb_put(b, "\"", 1);
}

/* ---- encoding --------------------------------------------------------------
 */

typedef struct enc {
    jbuf b;
    int flags;
    int depth;
} enc;

static void enc_message(enc *e, const ProtobufCMessage *m);

static size_t elem_size(ProtobufCType t)
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

static bool is_ptr_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_STRING || t == PROTOBUF_C_TYPE_MESSAGE;
}

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
        return elem_size(f->type) == sizeof(uint64_t)
                   ? *(const uint64_t *)mem == 0
                   : *(const uint32_t *)mem == 0;
    }
}

/* Whether the field is printed: exactly when protobuf-c would pack it, or
 * always with TK_JSON_EMIT_DEFAULTS (unchosen oneof members excepted). */
static bool field_emitted(const ProtobufCMessage *m,
                          const ProtobufCFieldDescriptor *f, int flags)
{
    const void *mem = CMEMBER(char, m, f->offset);
    bool all = (flags & TK_JSON_EMIT_DEFAULTS) != 0;
    bool ptr_set = is_ptr_type(f->type) && *(const void *const *)mem != NULL &&
                   *(const void *const *)mem != f->default_value;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *CMEMBER(uint32_t, m, f->quantifier_offset) == f->id &&
               (!is_ptr_type(f->type) || ptr_set);
    switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
        return true;
    case PROTOBUF_C_LABEL_REPEATED:
        return all || *CMEMBER(size_t, m, f->quantifier_offset) > 0;
    case PROTOBUF_C_LABEL_OPTIONAL:
        return all || (is_ptr_type(f->type) ? ptr_set
                                            : *CMEMBER(protobuf_c_boolean, m,
                                                       f->quantifier_offset));
    default:
        return all || !is_zero(f, mem);
    }
}

static void enc_newline(enc *e)
{
    if (!(e->flags & TK_JSON_PRETTY))
        return;
    jb_put(&e->b, "\n", 1);
    for (int i = 0; i < e->depth; i++)
        jb_put(&e->b, "  ", 2);
}

/* Opens an object member or array element: the comma, the line, the key. */
static void enc_member(enc *e, bool *first, const char *key, size_t klen)
{
    if (!*first)
        jb_put(&e->b, ",", 1);
    *first = false;
    enc_newline(e);
    if (key == NULL)
        return;
    jb_quote(&e->b, key, klen);
    jb_puts(&e->b, e->flags & TK_JSON_PRETTY ? ": " : ":");
}

static void enc_close(enc *e, bool empty, const char *bracket)
{
    e->depth--;
    if (!empty)
        enc_newline(e);
    jb_puts(&e->b, bracket);
}

/* Shortest text that reads back to the same value; NaN and the infinities
 * as the strings of the mapping. */
static void enc_real(enc *e, double v, bool single)
{
    if (isnan(v)) {
        jb_puts(&e->b, "\"NaN\"");
        return;
    }
    if (isinf(v)) {
        jb_puts(&e->b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            break;
    }
    jb_puts(&e->b, buf);
}

static void enc_enum(enc *e, const ProtobufCFieldDescriptor *f, int v)
{
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value(f->descriptor, v);
    if (ev != NULL)
        jb_quote(&e->b, ev->name, strlen(ev->name));
    else
        jb_printf(&e->b, "%d", v);
}

/* Bytes: base64 (the proto3 mapping); with TK_JSON_BYTES_TEXT, the text
 * when they are UTF-8 (U+0000 and control characters included, escaped as
 * JSON escapes them), else {"base64":"..."}, which no text can be taken
 * for. Both read back to the same bytes. */
static void enc_bytes(enc *e, const ProtobufCBinaryData *bd)
{
    const char *s = (const char *)bd->data;
    if (!(e->flags & TK_JSON_BYTES_TEXT)) {
        jb_base64(&e->b, bd->data, bd->len);
    } else if (bd->len == 0 || tkc_utf8_valid(s, bd->len)) {
        jb_quote(&e->b, bd->len > 0 ? s : "", bd->len);
    } else {
        jb_puts(&e->b,
                e->flags & TK_JSON_PRETTY ? "{\"base64\": " : "{\"base64\":");
        jb_base64(&e->b, bd->data, bd->len);
        jb_put(&e->b, "}", 1);
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
        jb_printf(&e->b, "%" PRId32, *(const int32_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        jb_printf(&e->b, "%" PRIu32, *(const uint32_t *)mem);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        jb_printf(&e->b, "\"%" PRId64 "\"", *(const int64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        jb_printf(&e->b, "\"%" PRIu64 "\"", *(const uint64_t *)mem);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        enc_real(e, *(const float *)mem, true);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        enc_real(e, *(const double *)mem, false);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        jb_puts(&e->b, *(const protobuf_c_boolean *)mem ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM:
        enc_enum(e, f, *(const int *)mem);
        break;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)mem;
        if (s == NULL) /* an unset proto2 field, printed for EMIT_DEFAULTS */
            s = f->default_value != NULL ? f->default_value : "";
        jb_quote(&e->b, s, strlen(s));
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
            jb_puts(&e->b, "null");
        break;
    }
    }
}

static void enc_array(enc *e, const ProtobufCFieldDescriptor *f,
                      const char *arr, size_t n)
{
    bool first = true;
    jb_put(&e->b, "[", 1);
    e->depth++;
    for (size_t i = 0; i < n; i++) {
        enc_member(e, &first, NULL, 0);
        enc_value(e, f, arr + i * elem_size(f->type));
    }
    enc_close(e, n == 0, "]");
}

/* A map key is always a JSON string: the key's text (numbers in buf). */
static const char *map_key_text(const ProtobufCFieldDescriptor *kf,
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

/* Each entry's key as the output shows it (quoted), in keys[i]; NULL for
 * an entry that is NULL. false when out of memory. */
static bool map_keys(const ProtobufCFieldDescriptor *kf,
                     ProtobufCMessage *const *entries, size_t n, jbuf *keys)
{
    for (size_t i = 0; i < n; i++) {
        if (entries[i] == NULL)
            continue;
        char buf[32];
        const char *s = map_key_text(kf, CMEMBER(char, entries[i], kf->offset),
                                     buf, sizeof buf);
        jb_quote(&keys[i], s, strlen(s));
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
    jb_put(&e->b, "{", 1);
    e->depth++;
    for (size_t i = 0; i < shown; i++) {
        const ProtobufCMessage *entry = entries[i];
        if (entry == NULL || key_again(keys, i, n))
            continue;
        char buf[32];
        const char *key =
            map_key_text(kf, CMEMBER(char, entry, kf->offset), buf, sizeof buf);
        enc_member(e, &first, key, strlen(key));
        const void *vmem = CMEMBER(char, entry, vf->offset);
        /* A message value missing from the wire is an empty message. */
        if (vf->type == PROTOBUF_C_TYPE_MESSAGE &&
            *(const ProtobufCMessage *const *)vmem == NULL)
            jb_puts(&e->b, "{}");
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
    if (is_map(m->descriptor, f))
        enc_map(e, f, arr, n);
    else
        enc_array(e, f, arr, n);
}

static void enc_message(enc *e, const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    bool first = true;
    jb_put(&e->b, "{", 1);
    e->depth++;
    for (unsigned i = 0; i < desc->n_fields && !e->b.oom; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (!field_emitted(m, f, e->flags))
            continue;
        char name[256];
        size_t k = to_camel(name, sizeof name, f->name, false);
        enc_member(e, &first, name, k < sizeof name ? k : sizeof name - 1);
        enc_field(e, m, f);
    }
    enc_close(e, first, "}");
}

/* Numbers are read and written in the C locale whatever the caller set for
 * LC_NUMERIC ("1.5", never "1,5"); uselocale affects this thread only. */
typedef struct c_numeric {
    locale_t c, old;
} c_numeric;

static void c_numeric_enter(c_numeric *l)
{
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    l->old = l->c != (locale_t)0 ? uselocale(l->c) : (locale_t)0;
}

static void c_numeric_leave(c_numeric *l)
{
    if (l->c == (locale_t)0)
        return;
    uselocale(l->old);
    freelocale(l->c);
}

char *tk_json_encode(const ProtobufCMessage *msg, int flags)
{
    if (msg == NULL || msg->descriptor == NULL)
        return NULL;
    enc e = { .flags = flags };
    c_numeric loc;
    c_numeric_enter(&loc);
    enc_message(&e, msg);
    c_numeric_leave(&loc);
    if (e.b.oom) {
        free(e.b.buf.data);
        return NULL;
    }
    return e.b.buf.data;
}

char *tk_json_string(const void *data, size_t len)
{
    jbuf b = { 0 };
    jb_quote(&b, data != NULL ? data : "", data != NULL ? len : 0);
    if (b.oom) {
        free(b.buf.data);
        return NULL;
    }
    return b.buf.data;
}

/* ---- decoding: errors and the path --------------------------------------- */

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

static int dec_fail(dec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int dec_fail(dec *d, const char *fmt, ...)
{
    if (d->failed || d->err == NULL || d->errlen == 0) {
        d->failed = true;
        return TK_ERR_ARG;
    }
    d->failed = true;
    int n = d->plen > 0 ? snprintf(d->err, d->errlen, "%s: ", d->path) : 0;
    if (n < 0 || (size_t)n >= d->errlen)
        return TK_ERR_ARG;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return TK_ERR_ARG;
}

static int dec_nomem(dec *d)
{
    dec_fail(d, "out of memory");
    return TK_ERR_NOMEM;
}

/* User text for a message: quoted, escaped, cut at QUOTE_MAX bytes. */
static const char *quoted(char *buf, size_t cap, const char *s, size_t n)
{
    jbuf b = { 0 };
    bool cut = n > QUOTE_MAX;
    jb_quote(&b, s, cut ? QUOTE_MAX : n);
    snprintf(buf, cap, "%s%s", b.buf.data != NULL ? b.buf.data : "\"\"",
             cut ? "..." : "");
    free(b.buf.data);
    return buf;
}

static size_t path_push(dec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static size_t path_push(dec *d, const char *fmt, ...)
{
    size_t saved = d->plen;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->plen, sizeof d->path - d->plen, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->plen += (size_t)n < sizeof d->path - d->plen
                       ? (size_t)n
                       : sizeof d->path - d->plen - 1;
    return saved;
}

/* "name" or ".name": a key as the user wrote it, control bytes shown as ?. */
static size_t path_push_key(dec *d, const char *key, size_t n)
{
    char shown[QUOTE_MAX + 1];
    size_t k = 0;
    for (size_t i = 0; i < n && k < QUOTE_MAX; i++)
        shown[k++] = (char)((unsigned char)key[i] < 0x20 ? '?' : key[i]);
    shown[k] = '\0';
    return path_push(d, "%s%s", d->plen > 0 ? "." : "", shown);
}

static void path_pop(dec *d, size_t saved)
{
    d->plen = saved;
    d->path[saved] = '\0';
}

/* ---- decoding: the strict scan ---------------------------------------------
 */

typedef struct scan {
    dec *d;
    const char *s;
    size_t n, i;
    int depth;
    span *nums; /* every number literal, in document order */
    size_t n_nums, cap_nums;
} scan;

/* A key of an object being scanned, decoded when it holds escapes. */
typedef struct key_ref {
    const char *p;
    size_t len;
    char *owned;
    span raw;
} key_ref;

static int sc_value(scan *sc);

/* The next character, or NUL at the end. */
static char sc_peek(const scan *sc)
{
    if (sc->i < sc->n)
        return sc->s[sc->i];
    return '\0';
}

static int sc_fail(scan *sc, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t k = 0; k < sc->i && k < sc->n; k++) {
        if (sc->s[k] == '\n')
            line++, col = 1;
        else
            col++;
    }
    return dec_fail(sc->d, "invalid JSON at line %zu, column %zu: %s", line,
                    col, what);
}

static void sc_ws(scan *sc)
{
    while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
                             sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
        sc->i++;
}

/* The escape at s[i] ('\\'); a \u escape must be a whole code point (no
 * lone surrogate: json-c would turn it into U+FFFD without a word). */
static int sc_escape(scan *sc, bool *nul)
{
    const char *s = sc->s;
    size_t i = ++sc->i;
    if (i >= sc->n)
        return sc_fail(sc, "unterminated string");
    if (s[i] != 'u') {
        if (strchr("\"\\/bfnrt", s[i]) == NULL || s[i] == '\0')
            return sc_fail(sc, "invalid escape in a string");
        sc->i++;
        return 0;
    }
    uint32_t cp, lo;
    if (!tkc_hex4(s + i + 1, sc->n - i - 1, &cp))
        return sc_fail(sc, "\\u needs four hex digits");
    sc->i += 5;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return sc_fail(sc, "unpaired UTF-16 surrogate in a \\u escape");
    if (cp >= 0xd800 && cp <= 0xdbff) {
        i = sc->i;
        if (i + 1 >= sc->n || s[i] != '\\' || s[i + 1] != 'u' ||
            !tkc_hex4(s + i + 2, sc->n - i - 2, &lo) || lo < 0xdc00 ||
            lo > 0xdfff)
            return sc_fail(sc, "unpaired UTF-16 surrogate in a \\u escape");
        sc->i += 6;
    }
    if (cp == 0)
        *nul = true;
    return 0;
}

/* A string at s[i] ('"'); *out is its raw content between the quotes. */
static int sc_string(scan *sc, span *out, bool *escaped, bool *nul)
{
    size_t start = ++sc->i;
    *escaped = *nul = false;
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i];
        if (c == '"') {
            *out = (span){ start, sc->i - start };
            sc->i++;
            return 0;
        }
        if (c == '\\') {
            *escaped = true;
            if (sc_escape(sc, nul) != 0)
                return TK_ERR_ARG;
        } else if (c < 0x20) {
            return sc_fail(sc, "a control character in a string must be "
                               "escaped");
        } else {
            size_t l = tkc_utf8_seq(sc->s + sc->i, sc->n - sc->i, NULL);
            if (l == 0)
                return sc_fail(sc, "invalid UTF-8 in a string");
            sc->i += l;
        }
    }
    return sc_fail(sc, "unterminated string");
}

static int sc_number(scan *sc)
{
    size_t len = number_prefix(sc->s + sc->i, sc->n - sc->i);
    size_t end = sc->i + len;
    if (len == 0 || (end < sc->n && strchr(".eE0123456789", sc->s[end]) &&
                     sc->s[end] != '\0'))
        return sc_fail(sc, "invalid number (JSON has no leading zeros, "
                           "'+' signs or bare points)");
    span *nn =
        tkc_grow(sc->nums, &sc->cap_nums, sc->n_nums + 1, sizeof *nn, 16);
    if (nn == NULL)
        return dec_nomem(sc->d);
    sc->nums = nn;
    sc->nums[sc->n_nums++] = (span){ sc->i, len };
    sc->i = end;
    return 0;
}

static int sc_literal(scan *sc, const char *word)
{
    size_t n = strlen(word);
    if (sc->n - sc->i < n || memcmp(sc->s + sc->i, word, n) != 0)
        return sc_fail(sc, "unexpected character");
    sc->i += n;
    return 0;
}

/* The decoded text of a key holding escapes (the scan checked them). */
static char *unescape(const char *s, size_t n, size_t *out_len)
{
    char *out = malloc(n + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        char c = s[++i];
        const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
        if (c != 'u' && map != NULL) {
            *o++ = map[1];
            continue;
        }
        uint32_t cp = 0, lo = 0;
        (void)tkc_hex4(s + i + 1, n - i - 1, &cp);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            (void)tkc_hex4(s + i + 3, n - i - 3, &lo);
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i += 6;
        }
        o += tkc_utf8_put(o, cp);
    }
    *out_len = (size_t)(o - out);
    return out;
}

static int key_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* json-c would keep the last of two equal keys without a word. */
static int sc_check_dups(scan *sc, key_ref *keys, size_t n)
{
    if (n < 2)
        return 0;
    qsort(keys, n, sizeof *keys, key_cmp);
    for (size_t k = 1; k < n; k++) {
        if (key_cmp(&keys[k - 1], &keys[k]) == 0) {
            char q[QUOTE_MAX * 6 + 8];
            return dec_fail(sc->d, "duplicate key %s",
                            quoted(q, sizeof q, keys[k].p, keys[k].len));
        }
    }
    return 0;
}

static int sc_key(scan *sc, key_ref *key)
{
    bool escaped, nul;
    if (sc->i >= sc->n)
        return sc_fail(sc, "unexpected end of input");
    if (sc->s[sc->i] != '"')
        return sc_fail(sc, sc->s[sc->i] == '\''
                               ? "keys take double quotes"
                               : "expected a double-quoted key");
    if (sc_string(sc, &key->raw, &escaped, &nul) != 0)
        return TK_ERR_ARG;
    if (nul)
        return sc_fail(sc, "a key must not contain \\u0000");
    key->p = sc->s + key->raw.off;
    key->len = key->raw.len;
    if (escaped) {
        key->owned = unescape(key->p, key->len, &key->len);
        if (key->owned == NULL)
            return dec_nomem(sc->d);
        key->p = key->owned;
    }
    return 0;
}

/* One member: key, ':', value. Adds the key to *keys. */
static int sc_member(scan *sc, key_ref **keys, size_t *n, size_t *cap)
{
    key_ref *nk = tkc_grow(*keys, cap, *n + 1, sizeof *nk, 8);
    if (nk == NULL)
        return dec_nomem(sc->d);
    *keys = nk;
    key_ref *key = &(*keys)[*n];
    *key = (key_ref){ 0 };
    sc_ws(sc);
    int rv = sc_key(sc, key);
    (*n)++;
    if (rv != 0)
        return rv;
    sc_ws(sc);
    if (sc->i >= sc->n || sc->s[sc->i] != ':')
        return sc_fail(sc, "expected ':' after a key");
    sc->i++;
    size_t saved = path_push_key(sc->d, sc->s + key->raw.off, key->raw.len);
    rv = sc_value(sc);
    path_pop(sc->d, saved);
    return rv;
}

static int sc_object(scan *sc)
{
    key_ref *keys = NULL;
    size_t n = 0, cap = 0;
    int rv = 0;
    sc->i++;
    sc_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == '}') {
        sc->i++;
        return 0;
    }
    for (;;) {
        rv = sc_member(sc, &keys, &n, &cap);
        if (rv != 0)
            goto done;
        sc_ws(sc);
        char c = sc_peek(sc);
        if (c != ',' && c != '}') {
            rv = sc_fail(sc, "expected ',' or '}'");
            goto done;
        }
        sc->i++;
        if (c == '}')
            break;
    }
    rv = sc_check_dups(sc, keys, n);
done:
    for (size_t k = 0; k < n; k++)
        free(keys[k].owned);
    free(keys);
    return rv;
}

static int sc_array(scan *sc)
{
    sc->i++;
    sc_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    for (size_t idx = 0;; idx++) {
        size_t saved = path_push(sc->d, "[%zu]", idx);
        int rv = sc_value(sc);
        path_pop(sc->d, saved);
        if (rv != 0)
            return rv;
        sc_ws(sc);
        char c = sc_peek(sc);
        if (c != ',' && c != ']')
            return sc_fail(sc, "expected ',' or ']'");
        sc->i++;
        if (c == ']')
            return 0;
    }
}

static int sc_value(scan *sc)
{
    sc_ws(sc);
    if (sc->i >= sc->n)
        return sc_fail(sc, "unexpected end of input");
    char c = sc->s[sc->i];
    bool escaped, nul;
    span sp;
    if (c == '{' || c == '[') {
        if (++sc->depth > MAX_DEPTH)
            return sc_fail(sc, "nested too deeply");
        int rv = c == '{' ? sc_object(sc) : sc_array(sc);
        sc->depth--;
        return rv;
    }
    if (c == '"')
        return sc_string(sc, &sp, &escaped, &nul);
    if (c == '-' || is_digit(c))
        return sc_number(sc);
    if (c == 't' || c == 'f' || c == 'n')
        return sc_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null");
    if (c == 'N' || c == 'I')
        return sc_fail(sc, "NaN and Infinity are strings (\"NaN\") in JSON");
    if (c == '\'')
        return sc_fail(sc, "strings take double quotes");
    return sc_fail(sc, "unexpected character");
}

/* What a JSON value that starts with c is, for a message. */
static const char *value_kind(char c)
{
    return c == '['                  ? "an array"
           : c == '"'                ? "a string"
           : c == '-' || is_digit(c) ? "a number"
           : c == 't' || c == 'f'    ? "a boolean"
           : c == 'n'                ? "null"
                                     : "this";
}

static int sc_run(scan *sc)
{
    sc_ws(sc);
    if (sc->i >= sc->n)
        return dec_fail(sc->d, "empty input: expected a JSON object");
    char c = sc->s[sc->i];
    if (c != '{')
        return dec_fail(sc->d, "the top level must be a JSON object, not %s",
                        value_kind(c));
    int rv = sc_value(sc);
    if (rv != 0)
        return rv;
    sc_ws(sc);
    if (sc->i < sc->n)
        return sc_fail(sc, "trailing data after the JSON object");
    return 0;
}

/* ---- decoding: json-c's tree ----------------------------------------------
 */

/* Hangs each number's literal (a span of the scan) on json-c's number
 * object, in document order: with duplicate keys refused, json-c's objects
 * iterate in insertion order, which is the order of the text. */
static int attach_numbers(json_object *o, scan *sc, size_t *next)
{
    switch (json_object_get_type(o)) {
    case json_type_object: {
        struct json_object_iterator it = json_object_iter_begin(o);
        struct json_object_iterator end = json_object_iter_end(o);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
            if (attach_numbers(json_object_iter_peek_value(&it), sc, next))
                return -1;
        return 0;
    }
    case json_type_array:
        for (size_t k = 0; k < json_object_array_length(o); k++)
            if (attach_numbers(json_object_array_get_idx(o, k), sc, next))
                return -1;
        return 0;
    case json_type_int:
    case json_type_double:
        if (*next >= sc->n_nums)
            return -1;
        /* NULL: keep the default serializer; the span is owned by sc. */
        json_object_set_serializer(o, NULL, &sc->nums[(*next)++], NULL);
        return 0;
    default:
        return 0;
    }
}

static int parse_tree(dec *d, scan *sc, json_object **root)
{
    *root = NULL;
    struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH + 2);
    if (tok == NULL)
        return dec_nomem(d);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    *root = json_tokener_parse_ex(tok, sc->s, (int)sc->n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    int rv = 0;
    if (*root == NULL || jerr != json_tokener_success) {
        rv = dec_fail(d, "invalid JSON: %s", json_tokener_error_desc(jerr));
    } else {
        /* The whole input: only whitespace may follow the object. */
        while (end < sc->n && strchr(" \t\r\n", sc->s[end]) != NULL &&
               sc->s[end] != '\0')
            end++;
        if (end != sc->n)
            rv = dec_fail(d, "trailing data after the JSON object");
    }
    size_t next = 0;
    if (rv == 0 &&
        (attach_numbers(*root, sc, &next) != 0 || next != sc->n_nums))
        rv = dec_fail(d, "internal error: json-c and the scan disagree on "
                         "the numbers of the input");
    return rv;
}

/* ---- decoding: values ---------------------------------------------------- */

static int dec_message(dec *d, const ProtobufCMessageDescriptor *desc,
                       json_object *obj, ProtobufCMessage **out);

static const char *jtype(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_int:
    case json_type_double:
        return "a number";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    default:
        return "a string";
    }
}

/* The text of a number (its literal) or a string; false for other types. */
static bool value_text(const dec *d, json_object *v, const char **s, size_t *n)
{
    json_type t = json_object_get_type(v);
    if (t == json_type_string) {
        *s = json_object_get_string(v);
        *n = (size_t)json_object_get_string_len(v);
        return true;
    }
    if (t != json_type_int && t != json_type_double)
        return false;
    const span *sp = json_object_get_userdata(v);
    if (sp == NULL)
        return false;
    *s = d->text + sp->off;
    *n = sp->len;
    return true;
}

static bool is_signed_int(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
           t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_INT64 ||
           t == PROTOBUF_C_TYPE_SINT64 || t == PROTOBUF_C_TYPE_SFIXED64 ||
           t == PROTOBUF_C_TYPE_ENUM;
}

/* How much of a number's text an error shows (it is not NUL-terminated). */
static int shown_len(size_t n)
{
    return n < QUOTE_MAX ? (int)n : QUOTE_MAX;
}

/* An integer of type t from its text, range-checked, stored at dst. */
static int store_int(dec *d, ProtobufCType t, const char *s, size_t n,
                     void *dst)
{
    bool neg, wide = elem_size(t) == sizeof(uint64_t);
    uint64_t mag;
    char q[QUOTE_MAX * 6 + 8];
    int rv = parse_integer(s, n, &neg, &mag);
    if (rv == NUM_SYNTAX)
        return dec_fail(d, "%s is not a number", quoted(q, sizeof q, s, n));
    if (rv == NUM_FRACTION)
        return dec_fail(d, "%.*s is not an integer", shown_len(n), s);
    uint64_t pos_max = wide ? (is_signed_int(t) ? INT64_MAX : UINT64_MAX)
                            : (is_signed_int(t) ? INT32_MAX : UINT32_MAX);
    uint64_t neg_max = is_signed_int(t) ? pos_max + 1 : 0;
    if (rv == NUM_RANGE || mag > (neg ? neg_max : pos_max))
        return dec_fail(d, "%.*s is out of range for %s", shown_len(n), s,
                        type_names[t]);
    /* Two's complement without overflow: -(mag - 1) - 1. */
    int64_t sv = neg && mag > 0 ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
    if (wide && is_signed_int(t))
        *(int64_t *)dst = sv;
    else if (wide)
        *(uint64_t *)dst = mag;
    else if (is_signed_int(t))
        *(int32_t *)dst = (int32_t)sv;
    else
        *(uint32_t *)dst = (uint32_t)mag;
    return 0;
}

static int dec_int(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                   void *dst)
{
    const char *s;
    size_t n;
    if (!value_text(d, v, &s, &n))
        return dec_fail(d, "expected %s (a number or a string), got %s",
                        type_names[f->type], jtype(v));
    return store_int(d, f->type, s, n, dst);
}

/* Rounds to a float the way a conversion would, without the undefined
 * behaviour of converting a double beyond FLT_MAX. */
static int to_float(dec *d, double x, const char *s, size_t n, float *dst)
{
    /* Below 2^128 - 2^103 a double rounds to FLT_MAX, not to infinity. */
    const double limit = 0x1.ffffffp+127;
    double mag = x < 0 ? -x : x; /* no libm: users link libtkclient alone */
    if (isfinite(x) && mag > FLT_MAX) {
        if (mag >= limit)
            return dec_fail(d, "%.*s is out of range for float", shown_len(n),
                            s);
        x = x < 0 ? -FLT_MAX : FLT_MAX;
    }
    *dst = (float)x;
    return 0;
}

static int dec_real(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                    void *dst)
{
    const char *s;
    size_t n;
    double x;
    if (!value_text(d, v, &s, &n))
        return dec_fail(d,
                        "expected %s (a number, or \"NaN\", \"Infinity\", "
                        "\"-Infinity\"), got %s",
                        type_names[f->type], jtype(v));
    char q[QUOTE_MAX * 6 + 8];
    bool is_str = json_object_get_type(v) == json_type_string;
    if (is_str && strcmp(s, "NaN") == 0) {
        x = NAN;
    } else if (is_str && strcmp(s, "Infinity") == 0) {
        x = INFINITY;
    } else if (is_str && strcmp(s, "-Infinity") == 0) {
        x = -INFINITY;
    } else {
        if (n == 0 || number_prefix(s, n) != n)
            return dec_fail(d, "%s is not a number", quoted(q, sizeof q, s, n));
        /* The text ends at a delimiter or NUL, where strtod stops. */
        x = strtod(s, NULL);
        if (isinf(x))
            return dec_fail(d, "%.*s is out of range for %s", shown_len(n), s,
                            type_names[f->type]);
    }
    if (f->type == PROTOBUF_C_TYPE_FLOAT)
        return to_float(d, x, s, n, dst);
    *(double *)dst = x;
    return 0;
}

static int dec_enum(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                    void *dst)
{
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    json_type t = json_object_get_type(v);
    const char *s;
    size_t n;
    if ((t == json_type_int || t == json_type_double) &&
        value_text(d, v, &s, &n))
        return store_int(d, PROTOBUF_C_TYPE_ENUM, s, n, dst);
    if (t != json_type_string)
        return dec_fail(d,
                        "expected a value name of %s (a string) or a "
                        "number, got %s",
                        ed->name, jtype(v));
    const char *name = json_object_get_string(v);
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value_by_name(ed, name);
    if (ev == NULL) {
        char q[QUOTE_MAX * 6 + 8], names[256] = "";
        size_t k = 0;
        for (unsigned i = 0; i < ed->n_values && k < sizeof names; i++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s",
                                  i ? ", " : "", ed->values[i].name);
        return dec_fail(
            d, "unknown enum value %s for %s (one of: %s)",
            quoted(q, sizeof q, name, (size_t)json_object_get_string_len(v)),
            ed->name, names);
    }
    *(int *)dst = ev->value;
    return 0;
}

static int dec_string(dec *d, json_object *v, void *dst)
{
    if (json_object_get_type(v) != json_type_string)
        return dec_fail(d, "expected a string, got %s", jtype(v));
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (memchr(s, '\0', n) != NULL)
        return dec_fail(d, "a string field cannot hold U+0000");
    if (!tkc_utf8_valid(s, n))
        return dec_fail(d, "the string is not valid UTF-8");
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return dec_nomem(d);
    memcpy(copy, s, n + 1);
    *(char **)dst = copy;
    return 0;
}

/* A JSON string of base64 into dst. */
static int dec_base64(dec *d, json_object *v, void *dst)
{
    int rv = b64_decode(json_object_get_string(v),
                        (size_t)json_object_get_string_len(v), dst);
    if (rv == TK_ERR_NOMEM)
        return dec_nomem(d);
    if (rv != 0)
        return dec_fail(d, "invalid base64 (standard or URL-safe alphabet, "
                           "padding optional)");
    return 0;
}

/* TK_JSON_BYTES_TEXT: a string is its own UTF-8 bytes, never base64
 * ("aGk=" is four bytes of text); {"base64":"..."} is base64. */
static int dec_bytes_text(dec *d, json_object *v, ProtobufCBinaryData *dst)
{
    static const char form[] =
        "text (a string) or {\"base64\":\"...\"} (bytes that are not UTF-8)";
    json_type t = json_object_get_type(v);
    if (t == json_type_string) {
        size_t n = (size_t)json_object_get_string_len(v);
        dst->len = 0;
        dst->data = n > 0 ? malloc(n) : NULL;
        if (n > 0 && dst->data == NULL)
            return dec_nomem(d);
        if (n > 0)
            memcpy(dst->data, json_object_get_string(v), n);
        dst->len = n;
        return 0;
    }
    json_object *b64 = NULL;
    if (t != json_type_object || json_object_object_length(v) != 1 ||
        !json_object_object_get_ex(v, "base64", &b64))
        return dec_fail(d, "expected bytes as %s, got %s", form,
                        t == json_type_object ? "another object" : jtype(v));
    size_t saved = path_push(d, ".base64");
    int rv =
        json_object_get_type(b64) == json_type_string
            ? dec_base64(d, b64, dst)
            : dec_fail(d, "expected base64 (a string), got %s", jtype(b64));
    path_pop(d, saved);
    return rv;
}

static int dec_bytes(dec *d, json_object *v, void *dst)
{
    if (d->flags & TK_JSON_BYTES_TEXT)
        return dec_bytes_text(d, v, dst);
    if (json_object_get_type(v) != json_type_string)
        return dec_fail(d, "expected base64 bytes (a string), got %s",
                        jtype(v));
    return dec_base64(d, v, dst);
}

/* One value of field f into dst: a singular field, an array element, a map
 * value. */
static int dec_value(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                     void *dst)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return dec_real(d, f, v, dst);
    case PROTOBUF_C_TYPE_BOOL:
        if (json_object_get_type(v) != json_type_boolean)
            return dec_fail(d, "expected true or false, got %s", jtype(v));
        *(protobuf_c_boolean *)dst = json_object_get_boolean(v) ? 1 : 0;
        return 0;
    case PROTOBUF_C_TYPE_ENUM:
        return dec_enum(d, f, v, dst);
    case PROTOBUF_C_TYPE_STRING:
        return dec_string(d, v, dst);
    case PROTOBUF_C_TYPE_BYTES:
        return dec_bytes(d, v, dst);
    case PROTOBUF_C_TYPE_MESSAGE:
        return dec_message(d, f->descriptor, v, dst);
    default:
        return dec_int(d, f, v, dst);
    }
}

/* Marks a singular field set: the has_ flag of a proto2 optional scalar,
 * the case of a oneof member. */
static void mark_present(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *MEMBER(uint32_t, m, f->quantifier_offset) = f->id;
    else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && !is_ptr_type(f->type))
        *MEMBER(protobuf_c_boolean, m, f->quantifier_offset) = 1;
}

/* Allocates a repeated field's array, counted at once: free_unpacked frees
 * NULL elements fine if a later element fails. */
static void *alloc_repeated(ProtobufCMessage *m,
                            const ProtobufCFieldDescriptor *f, size_t n)
{
    void *arr = calloc(n, elem_size(f->type));
    if (arr == NULL)
        return NULL;
    *MEMBER(void *, m, f->offset) = arr;
    *MEMBER(size_t, m, f->quantifier_offset) = n;
    return arr;
}

static int dec_array(dec *d, ProtobufCMessage *m,
                     const ProtobufCFieldDescriptor *f, json_object *v)
{
    if (json_object_get_type(v) != json_type_array)
        return dec_fail(d, "expected an array, got %s", jtype(v));
    size_t n = json_object_array_length(v);
    if (n == 0)
        return 0;
    char *arr = alloc_repeated(m, f, n);
    if (arr == NULL)
        return dec_nomem(d);
    for (size_t i = 0; i < n; i++) {
        json_object *elem = json_object_array_get_idx(v, i);
        size_t saved = path_push(d, "[%zu]", i);
        int rv = elem == NULL
                     ? dec_fail(d, "null is not a value of a repeated field")
                     : dec_value(d, f, elem, arr + i * elem_size(f->type));
        path_pop(d, saved);
        if (rv != 0)
            return rv;
    }
    return 0;
}

static int dec_map_key(dec *d, const ProtobufCFieldDescriptor *kf,
                       const char *key, void *dst)
{
    size_t n = strlen(key);
    switch (kf->type) {
    case PROTOBUF_C_TYPE_STRING: {
        char *copy = malloc(n + 1);
        if (copy == NULL)
            return dec_nomem(d);
        memcpy(copy, key, n + 1);
        *(char **)dst = copy;
        return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (strcmp(key, "true") != 0 && strcmp(key, "false") != 0)
            return dec_fail(d, "a bool map key is \"true\" or \"false\"");
        *(protobuf_c_boolean *)dst = key[0] == 't';
        return 0;
    default:
        return store_int(d, kf->type, key, n, dst);
    }
}

static int dec_map_entry(dec *d, const ProtobufCMessageDescriptor *ed,
                         const char *key, json_object *val,
                         ProtobufCMessage **slot)
{
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    ProtobufCMessage *e = malloc(ed->sizeof_message);
    if (e == NULL)
        return dec_nomem(d);
    protobuf_c_message_init(ed, e);
    *slot = e;
    int rv = dec_map_key(d, kf, key, MEMBER(char, e, kf->offset));
    if (rv != 0)
        return rv;
    mark_present(e, kf);
    if (val == NULL)
        return dec_fail(d, "null is not a map value");
    rv = dec_value(d, vf, val, MEMBER(char, e, vf->offset));
    if (rv == 0)
        mark_present(e, vf);
    return rv;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Two members of the object that are one key of an integer map ("0" and
 * "-0", "1" and "1e0"): no duplicate in the JSON, one in the map, where
 * protobuf would keep the last value and drop the other without a word.
 * Refused as the duplicate it is. String and bool keys are compared as
 * text by the scan already. */
static int dec_map_same_keys(dec *d, const ProtobufCFieldDescriptor *kf,
                             ProtobufCMessage *const *entries, size_t n)
{
    if (n < 2 || kf->type == PROTOBUF_C_TYPE_STRING ||
        kf->type == PROTOBUF_C_TYPE_BOOL)
        return 0;
    bool wide = elem_size(kf->type) == sizeof(uint64_t);
    uint64_t *keys = malloc(n * sizeof *keys);
    if (keys == NULL)
        return dec_nomem(d);
    for (size_t i = 0; i < n; i++)
        keys[i] = wide ? *CMEMBER(uint64_t, entries[i], kf->offset)
                       : *CMEMBER(uint32_t, entries[i], kf->offset);
    qsort(keys, n, sizeof *keys, u64_cmp);
    size_t i = 1;
    while (i < n && keys[i] != keys[i - 1])
        i++;
    int rv = 0;
    if (i < n) {
        uint64_t wide_key = keys[i];
        uint32_t narrow_key = (uint32_t)keys[i];
        char buf[32];
        const char *text = map_key_text(
            kf, wide ? (const void *)&wide_key : (const void *)&narrow_key, buf,
            sizeof buf);
        rv = dec_fail(d, "duplicate key %s, written two ways", text);
    }
    free(keys);
    return rv;
}

static int dec_map(dec *d, ProtobufCMessage *m,
                   const ProtobufCFieldDescriptor *f, json_object *v)
{
    if (json_object_get_type(v) != json_type_object)
        return dec_fail(d, "expected an object (a map), got %s", jtype(v));
    size_t n = (size_t)json_object_object_length(v);
    if (n == 0)
        return 0;
    ProtobufCMessage **arr = alloc_repeated(m, f, n);
    if (arr == NULL)
        return dec_nomem(d);
    struct json_object_iterator it = json_object_iter_begin(v);
    struct json_object_iterator end = json_object_iter_end(v);
    for (size_t i = 0; !json_object_iter_equal(&it, &end);
         i++, json_object_iter_next(&it)) {
        const char *key = json_object_iter_peek_name(&it);
        char q[QUOTE_MAX * 6 + 8];
        size_t saved =
            path_push(d, "[%s]", quoted(q, sizeof q, key, strlen(key)));
        int rv = dec_map_entry(d, f->descriptor, key,
                               json_object_iter_peek_value(&it), &arr[i]);
        path_pop(d, saved);
        if (rv != 0)
            return rv;
    }
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    return dec_map_same_keys(d, &ed->fields[0], arr, n);
}

static int dec_field(dec *d, ProtobufCMessage *m,
                     const ProtobufCFieldDescriptor *f, json_object *v)
{
    if (v == NULL) { /* null: the field keeps its default */
        if (f->label == PROTOBUF_C_LABEL_REQUIRED)
            return dec_fail(d, "a required field cannot be null");
        return 0;
    }
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return is_map(m->descriptor, f) ? dec_map(d, m, f, v)
                                        : dec_array(d, m, f, v);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t set = *MEMBER(uint32_t, m, f->quantifier_offset);
        const ProtobufCFieldDescriptor *other =
            set != 0
                ? protobuf_c_message_descriptor_get_field(m->descriptor, set)
                : NULL;
        if (other != NULL && other != f)
            return dec_fail(d,
                            "only one member of a oneof may be set, and "
                            "\"%s\" is set already",
                            other->name);
    }
    int rv = dec_value(d, f, v, MEMBER(char, m, f->offset));
    if (rv == 0)
        mark_present(m, f);
    return rv;
}

static int dec_member(dec *d, ProtobufCMessage *m, bool *seen, const char *key,
                      json_object *v)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    const ProtobufCFieldDescriptor *f = find_field(desc, key);
    char q[QUOTE_MAX * 6 + 8];
    if (f == NULL)
        return dec_fail(d, "unknown field %s in %s",
                        quoted(q, sizeof q, key, strlen(key)), desc->name);
    size_t idx = (size_t)(f - desc->fields);
    if (seen[idx])
        return dec_fail(d,
                        "field \"%s\" is given twice (by its proto name "
                        "and its JSON name)",
                        f->name);
    seen[idx] = true;
    size_t saved = path_push_key(d, key, strlen(key));
    int rv = dec_field(d, m, f, v);
    path_pop(d, saved);
    return rv;
}

static int check_required(dec *d, const ProtobufCMessageDescriptor *desc,
                          const bool *seen)
{
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (desc->fields[i].label == PROTOBUF_C_LABEL_REQUIRED && !seen[i])
            return dec_fail(d, "missing required field \"%s\" of %s",
                            desc->fields[i].name, desc->name);
    return 0;
}

static int dec_message(dec *d, const ProtobufCMessageDescriptor *desc,
                       json_object *obj, ProtobufCMessage **out)
{
    *out = NULL;
    if (json_object_get_type(obj) != json_type_object)
        return dec_fail(d, "expected an object (%s), got %s", desc->name,
                        jtype(obj));
    ProtobufCMessage *m = malloc(desc->sizeof_message);
    bool *seen = calloc(desc->n_fields + 1, sizeof *seen);
    if (m == NULL || seen == NULL) {
        free(m);
        free(seen);
        return dec_nomem(d);
    }
    protobuf_c_message_init(desc, m);
    int rv = 0;
    struct json_object_iterator it = json_object_iter_begin(obj);
    struct json_object_iterator end = json_object_iter_end(obj);
    for (; rv == 0 && !json_object_iter_equal(&it, &end);
         json_object_iter_next(&it))
        rv = dec_member(d, m, seen, json_object_iter_peek_name(&it),
                        json_object_iter_peek_value(&it));
    if (rv == 0)
        rv = check_required(d, desc, seen);
    free(seen);
    if (rv != 0) {
        protobuf_c_message_free_unpacked(m, NULL);
        return rv;
    }
    *out = m;
    return 0;
}

int tk_json_decode(const ProtobufCMessageDescriptor *desc, const char *json,
                   size_t len, ProtobufCMessage **out, char *err, size_t errlen)
{
    return tk_json_decode_ex(out, desc, json, len, 0, err, errlen);
}

int tk_json_decode_ex(ProtobufCMessage **out,
                      const ProtobufCMessageDescriptor *desc, const char *json,
                      size_t len, int flags, char *err, size_t errlen)
{
    dec d = { .text = json,
              .flags = flags & TK_JSON_BYTES_TEXT,
              .err = err,
              .errlen = errlen };
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (out != NULL)
        *out = NULL;
    if (desc == NULL || json == NULL || out == NULL)
        return dec_fail(&d, "tk_json_decode: desc, json and out are "
                            "required");
    if (len > (size_t)INT32_MAX) /* json-c takes an int length */
        return dec_fail(&d, "the input is larger than 2 GiB");
    scan sc = { .d = &d, .s = json, .n = len };
    json_object *root = NULL;
    c_numeric loc;
    c_numeric_enter(&loc);
    int rv = sc_run(&sc);
    if (rv == 0)
        rv = parse_tree(&d, &sc, &root);
    if (rv == 0)
        rv = dec_message(&d, desc, root, out);
    c_numeric_leave(&loc);
    json_object_put(root);
    free(sc.nums);
    return rv;
}
