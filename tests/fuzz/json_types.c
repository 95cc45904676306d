/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <tk/client.h>

#include "json_fixture.pb-c.h"
#include "json_fixture2.pb-c.h"
#include "json_types.h"

static const ProtobufCMessageDescriptor *const fixtures[] = {
    &tk__jsontest__scalars__descriptor, &tk__jsontest__repeats__descriptor,
    &tk__jsontest__tree__descriptor,    &tk__jsontest__choice__descriptor,
    &tk__jsontest__maps__descriptor,    &tk__jsontest__legacy__descriptor,
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static const ProtobufCMessageDescriptor *type_at(size_t i)
{
    return i < N_FIXTURES ? fixtures[i] : tk_catalog_message(i - N_FIXTURES);
}

const ProtobufCMessageDescriptor *fuzz_json_type(const uint8_t **data,
                                                 size_t *size)
{
    size_t scan = *size < 128 ? *size : 128;
    const uint8_t *nl = memchr(*data, '\n', scan);
    size_t name_len = nl != NULL ? (size_t)(nl - *data) : 0;
    size_t n = N_FIXTURES + tk_catalog_message_count();
    const ProtobufCMessageDescriptor *d = NULL;
    unsigned hash = 0;
    for (size_t i = 0; i < name_len; i++)
        hash = hash * 31 + (*data)[i];
    for (size_t i = 0; i < n && d == NULL; i++) {
        const ProtobufCMessageDescriptor *t = type_at(i);
        if (strlen(t->name) == name_len &&
            memcmp(t->name, *data, name_len) == 0)
            d = t;
    }
    if (d == NULL)
        d = type_at(n > 0 ? hash % n : 0);
    if (nl != NULL) {
        *size -= name_len + 1;
        *data += name_len + 1;
    }
    return d;
}

int fuzz_json_depth(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    int deepest = 0;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *at = (const char *)m + f->offset;
        size_t n = 1;
        const ProtobufCMessage *const *subs =
            (const ProtobufCMessage *const *)(const void *)at;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            n = *(const size_t *)(const void *)((const char *)m +
                                                f->quantifier_offset);
            subs = *(const ProtobufCMessage *const *const *)(const void *)at;
        } else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                   *(const uint32_t *)(const void *)((const char *)m +
                                                     f->quantifier_offset) !=
                       f->id) {
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            if (subs[k] == NULL)
                continue;
            int dd = fuzz_json_depth(subs[k]);
            if (dd > deepest)
                deepest = dd;
        }
    }
    return deepest + 1;
}
