/* SPDX-License-Identifier: MIT */
/* The JSON codec's decoder, its third pass: json-c's tree (json_scan.c
 * built it) mapped onto a message allocated with malloc, in a state that
 * protobuf_c_message_free_unpacked can free at every step.
 *
 * Owns: tk_json_decode, tk_json_decode_ex: the walk of a message, its maps
 * and repeated fields, required fields, oneofs (each scalar's type and
 * range checked by json_scalars.c).
 * May call: json_scalars.c (each scalar value), json_scan.c, json_names.c,
 * json_text.c, json-c, protobuf-c.
 * Must never: accept an unknown field silently, reinterpret what was typed
 * (text as base64 in text mode), print. */
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

static int dec_message(dec *d, const ProtobufCMessageDescriptor *desc,
                       json_object *obj, ProtobufCMessage **out);

/* One value of field f into dst: a singular field, an array element, a map
 * value. */
static int dec_value(dec *d, const ProtobufCFieldDescriptor *f, json_object *v,
                     void *dst)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return json__dec_real(d, f, v, dst);
    case PROTOBUF_C_TYPE_BOOL:
        if (json_object_get_type(v) != json_type_boolean)
            return json__dec_fail(d, "expected true or false, got %s",
                                  json__jtype(v));
        *(protobuf_c_boolean *)dst = json_object_get_boolean(v) ? 1 : 0;
        return 0;
    case PROTOBUF_C_TYPE_ENUM:
        return json__dec_enum(d, f, v, dst);
    case PROTOBUF_C_TYPE_STRING:
        return json__dec_string(d, v, dst);
    case PROTOBUF_C_TYPE_BYTES:
        return json__dec_bytes(d, v, dst);
    case PROTOBUF_C_TYPE_MESSAGE:
        return dec_message(d, f->descriptor, v, dst);
    default:
        return json__dec_int(d, f, v, dst);
    }
}
static int dec_array(dec *d, ProtobufCMessage *m,
                     const ProtobufCFieldDescriptor *f, json_object *v)
{
    if (json_object_get_type(v) != json_type_array)
        return json__dec_fail(d, "expected an array, got %s", json__jtype(v));
    size_t n = json_object_array_length(v);
    if (n == 0)
        return 0;
    char *arr = json__alloc_repeated(m, f, n);
    if (arr == NULL)
        return json__dec_nomem(d);
    for (size_t i = 0; i < n; i++) {
        json_object *elem = json_object_array_get_idx(v, i);
        size_t saved = json__path_push(d, "[%zu]", i);
        int rv =
            elem == NULL
                ? json__dec_fail(d, "null is not a value of a repeated field")
                : dec_value(d, f, elem, arr + i * json__elem_size(f->type));
        json__path_pop(d, saved);
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
            return json__dec_nomem(d);
        memcpy(copy, key, n + 1);
        *(char **)dst = copy;
        return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (strcmp(key, "true") != 0 && strcmp(key, "false") != 0)
            return json__dec_fail(d, "a bool map key is \"true\" or \"false\"");
        *(protobuf_c_boolean *)dst = key[0] == 't';
        return 0;
    default:
        return json__store_int(d, kf->type, key, n, dst);
    }
}

static int dec_map_entry(dec *d, const ProtobufCMessageDescriptor *ed,
                         const char *key, json_object *val,
                         ProtobufCMessage **slot)
{
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    ProtobufCMessage *e = malloc(ed->sizeof_message);
    if (e == NULL)
        return json__dec_nomem(d);
    protobuf_c_message_init(ed, e);
    *slot = e;
    int rv = dec_map_key(d, kf, key, MEMBER(char, e, kf->offset));
    if (rv != 0)
        return rv;
    json__mark_present(e, kf);
    if (val == NULL)
        return json__dec_fail(d, "null is not a map value");
    rv = dec_value(d, vf, val, MEMBER(char, e, vf->offset));
    if (rv == 0)
        json__mark_present(e, vf);
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
    bool wide = json__elem_size(kf->type) == sizeof(uint64_t);
    uint64_t *keys = malloc(n * sizeof *keys);
    if (keys == NULL)
        return json__dec_nomem(d);
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
        const char *text = json__map_key_text(
            kf, wide ? (const void *)&wide_key : (const void *)&narrow_key, buf,
            sizeof buf);
        rv = json__dec_fail(d, "duplicate key %s, written two ways", text);
    }
    free(keys);
    return rv;
}

static int dec_map(dec *d, ProtobufCMessage *m,
                   const ProtobufCFieldDescriptor *f, json_object *v)
{
    if (json_object_get_type(v) != json_type_object)
        return json__dec_fail(d, "expected an object (a map), got %s",
                              json__jtype(v));
    size_t n = (size_t)json_object_object_length(v);
    if (n == 0)
        return 0;
    ProtobufCMessage **arr = json__alloc_repeated(m, f, n);
    if (arr == NULL)
        return json__dec_nomem(d);
    struct json_object_iterator it = json_object_iter_begin(v);
    struct json_object_iterator end = json_object_iter_end(v);
    for (size_t i = 0; !json_object_iter_equal(&it, &end);
         i++, json_object_iter_next(&it)) {
        const char *key = json_object_iter_peek_name(&it);
        char q[QUOTE_MAX * 6 + 8];
        size_t saved = json__path_push(
            d, "[%s]", json__quoted(q, sizeof q, key, strlen(key)));
        int rv = dec_map_entry(d, f->descriptor, key,
                               json_object_iter_peek_value(&it), &arr[i]);
        json__path_pop(d, saved);
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
            return json__dec_fail(d, "a required field cannot be null");
        return 0;
    }
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return json__is_map(m->descriptor, f) ? dec_map(d, m, f, v)
                                              : dec_array(d, m, f, v);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t set = *MEMBER(uint32_t, m, f->quantifier_offset);
        const ProtobufCFieldDescriptor *other =
            set != 0
                ? protobuf_c_message_descriptor_get_field(m->descriptor, set)
                : NULL;
        if (other != NULL && other != f)
            return json__dec_fail(d,
                                  "only one member of a oneof may be set, and "
                                  "\"%s\" is set already",
                                  other->name);
    }
    int rv = dec_value(d, f, v, MEMBER(char, m, f->offset));
    if (rv == 0)
        json__mark_present(m, f);
    return rv;
}

static int dec_member(dec *d, ProtobufCMessage *m, bool *seen, const char *key,
                      json_object *v)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    const ProtobufCFieldDescriptor *f = json__find_field(desc, key);
    char q[QUOTE_MAX * 6 + 8];
    if (f == NULL)
        return json__dec_fail(d, "unknown field %s in %s",
                              json__quoted(q, sizeof q, key, strlen(key)),
                              desc->name);
    size_t idx = (size_t)(f - desc->fields);
    if (seen[idx])
        return json__dec_fail(d,
                              "field \"%s\" is given twice (by its proto name "
                              "and its JSON name)",
                              f->name);
    seen[idx] = true;
    size_t saved = json__path_push_key(d, key, strlen(key));
    int rv = dec_field(d, m, f, v);
    json__path_pop(d, saved);
    return rv;
}

static int check_required(dec *d, const ProtobufCMessageDescriptor *desc,
                          const bool *seen)
{
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (desc->fields[i].label == PROTOBUF_C_LABEL_REQUIRED && !seen[i])
            return json__dec_fail(d, "missing required field \"%s\" of %s",
                                  desc->fields[i].name, desc->name);
    return 0;
}

static int dec_message(dec *d, const ProtobufCMessageDescriptor *desc,
                       json_object *obj, ProtobufCMessage **out)
{
    *out = NULL;
    if (json_object_get_type(obj) != json_type_object)
        return json__dec_fail(d, "expected an object (%s), got %s", desc->name,
                              json__jtype(obj));
    ProtobufCMessage *m = malloc(desc->sizeof_message);
    bool *seen = calloc(desc->n_fields + 1, sizeof *seen);
    if (m == NULL || seen == NULL) {
        free(m);
        free(seen);
        return json__dec_nomem(d);
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
        return json__dec_fail(&d, "tk_json_decode: desc, json and out are "
                                  "required");
    if (len > (size_t)INT32_MAX) /* json-c takes an int length */
        return json__dec_fail(&d, "the input is larger than 2 GiB");
    scan sc = { .d = &d, .s = json, .n = len };
    json_object *root = NULL;
    c_numeric loc;
    json__c_numeric_enter(&loc);
    int rv = json__sc_run(&sc);
    if (rv == 0)
        rv = json__parse_tree(&d, &sc, &root);
    if (rv == 0)
        rv = dec_message(&d, desc, root, out);
    json__c_numeric_leave(&loc);
    json_object_put(root);
    free(sc.nums);
    return rv;
}
