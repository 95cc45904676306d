/* SPDX-License-Identifier: MIT */
/* The JSON codec's decoder of single values: a JSON number, string,
 * boolean or enum name into one scalar field of a message (json_decode.c
 * walks the message and calls these for each value it reaches).
 *
 * Owns: every scalar's type and range check (integers by their literal's
 * text, floats and doubles, enums by name or number, strings as UTF-8
 * without U+0000, bytes as base64 or, with TK_JSON_BYTES_TEXT, as text).
 * May call: json_scan.c's failure and path helpers, json_text.c, common/
 * (UTF-8), json-c's values, protobuf-c's descriptors.
 * Must never: walk a message or allocate one (json_decode.c), reinterpret
 * what was typed (text as base64 in text mode), print. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "json_int.h"

const char *json__jtype(json_object *v)
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
int json__store_int(dec *d, ProtobufCType t, const char *s, size_t n, void *dst)
{
    bool neg, wide = json__elem_size(t) == sizeof(uint64_t);
    uint64_t mag;
    char q[QUOTE_MAX * 6 + 8];
    int rv = json__parse_integer(s, n, &neg, &mag);
    if (rv == NUM_SYNTAX)
        return json__dec_fail(d, "%s is not a number",
                              json__quoted(q, sizeof q, s, n));
    if (rv == NUM_FRACTION)
        return json__dec_fail(d, "%.*s is not an integer", shown_len(n), s);
    uint64_t pos_max = wide ? (is_signed_int(t) ? INT64_MAX : UINT64_MAX)
                            : (is_signed_int(t) ? INT32_MAX : UINT32_MAX);
    uint64_t neg_max = is_signed_int(t) ? pos_max + 1 : 0;
    if (rv == NUM_RANGE || mag > (neg ? neg_max : pos_max))
        return json__dec_fail(d, "%.*s is out of range for %s", shown_len(n), s,
                              json__type_names[t]);
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

int json__dec_int(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                  void *dst)
{
    const char *s;
    size_t n;
    if (!value_text(d, v, &s, &n))
        return json__dec_fail(d, "expected %s (a number or a string), got %s",
                              json__type_names[f->type], json__jtype(v));
    return json__store_int(d, f->type, s, n, dst);
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
            return json__dec_fail(d, "%.*s is out of range for float",
                                  shown_len(n), s);
        x = x < 0 ? -FLT_MAX : FLT_MAX;
    }
    *dst = (float)x;
    return 0;
}

int json__dec_real(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                   void *dst)
{
    const char *s;
    size_t n;
    double x;
    if (!value_text(d, v, &s, &n))
        return json__dec_fail(
            d,
            "expected %s (a number, or \"NaN\", \"Infinity\", "
            "\"-Infinity\"), got %s",
            json__type_names[f->type], json__jtype(v));
    char q[QUOTE_MAX * 6 + 8];
    bool is_str = json_object_get_type(v) == json_type_string;
    if (is_str && strcmp(s, "NaN") == 0) {
        x = NAN;
    } else if (is_str && strcmp(s, "Infinity") == 0) {
        x = INFINITY;
    } else if (is_str && strcmp(s, "-Infinity") == 0) {
        x = -INFINITY;
    } else {
        if (n == 0 || json__number_prefix(s, n) != n)
            return json__dec_fail(d, "%s is not a number",
                                  json__quoted(q, sizeof q, s, n));
        /* The text ends at a delimiter or NUL, where strtod stops. */
        x = strtod(s, NULL);
        if (isinf(x))
            return json__dec_fail(d, "%.*s is out of range for %s",
                                  shown_len(n), s, json__type_names[f->type]);
    }
    if (f->type == PROTOBUF_C_TYPE_FLOAT)
        return to_float(d, x, s, n, dst);
    *(double *)dst = x;
    return 0;
}

int json__dec_enum(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                   void *dst)
{
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    json_type t = json_object_get_type(v);
    const char *s;
    size_t n;
    if ((t == json_type_int || t == json_type_double) &&
        value_text(d, v, &s, &n))
        return json__store_int(d, PROTOBUF_C_TYPE_ENUM, s, n, dst);
    if (t != json_type_string)
        return json__dec_fail(d,
                              "expected a value name of %s (a string) or a "
                              "number, got %s",
                              ed->name, json__jtype(v));
    const char *name = json_object_get_string(v);
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value_by_name(ed, name);
    if (ev == NULL) {
        char q[QUOTE_MAX * 6 + 8], names[256] = "";
        size_t k = 0;
        for (unsigned i = 0; i < ed->n_values && k < sizeof names; i++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s",
                                  i ? ", " : "", ed->values[i].name);
        return json__dec_fail(
            d, "unknown enum value %s for %s (one of: %s)",
            json__quoted(q, sizeof q, name,
                         (size_t)json_object_get_string_len(v)),
            ed->name, names);
    }
    *(int *)dst = ev->value;
    return 0;
}

int json__dec_string(dec *d, json_object *v, void *dst)
{
    if (json_object_get_type(v) != json_type_string)
        return json__dec_fail(d, "expected a string, got %s", json__jtype(v));
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (memchr(s, '\0', n) != NULL)
        return json__dec_fail(d, "a string field cannot hold U+0000");
    if (!tkc_utf8_valid(s, n))
        return json__dec_fail(d, "the string is not valid UTF-8");
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return json__dec_nomem(d);
    memcpy(copy, s, n + 1);
    *(char **)dst = copy;
    return 0;
}

/* A JSON string of base64 into dst. */
static int dec_base64(dec *d, json_object *v, void *dst)
{
    int rv = json__b64_decode(json_object_get_string(v),
                              (size_t)json_object_get_string_len(v), dst);
    if (rv == TK_ERR_NOMEM)
        return json__dec_nomem(d);
    if (rv != 0)
        return json__dec_fail(d,
                              "invalid base64 (standard or URL-safe alphabet, "
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
            return json__dec_nomem(d);
        if (n > 0)
            memcpy(dst->data, json_object_get_string(v), n);
        dst->len = n;
        return 0;
    }
    json_object *b64 = NULL;
    if (t != json_type_object || json_object_object_length(v) != 1 ||
        !json_object_object_get_ex(v, "base64", &b64))
        return json__dec_fail(d, "expected bytes as %s, got %s", form,
                              t == json_type_object ? "another object"
                                                    : json__jtype(v));
    size_t saved = json__path_push(d, ".base64");
    int rv = json_object_get_type(b64) == json_type_string
                 ? dec_base64(d, b64, dst)
                 : json__dec_fail(d, "expected base64 (a string), got %s",
                                  json__jtype(b64));
    json__path_pop(d, saved);
    return rv;
}

int json__dec_bytes(dec *d, json_object *v, void *dst)
{
    if (d->flags & TK_JSON_BYTES_TEXT)
        return dec_bytes_text(d, v, dst);
    if (json_object_get_type(v) != json_type_string)
        return json__dec_fail(d, "expected base64 bytes (a string), got %s",
                              json__jtype(v));
    return dec_base64(d, v, dst);
}
