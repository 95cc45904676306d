/* SPDX-License-Identifier: MIT */
/* Lookups over the generated catalog (gen/c/tk/catalog.c). */
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "tk/catalog.h"

size_t tk_catalog_method_count(void)
{
    return tk_catalog__n_methods;
}

const tk_method_desc *tk_catalog_method(size_t i)
{
    return i < tk_catalog__n_methods ? &tk_catalog__methods[i] : NULL;
}

const tk_method_desc *tk_catalog_find_method(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < tk_catalog__n_methods; i++)
        if (strcmp(tk_catalog__methods[i].name, name) == 0)
            return &tk_catalog__methods[i];
    return NULL;
}

size_t tk_catalog_message_count(void)
{
    return tk_catalog__n_messages;
}

const ProtobufCMessageDescriptor *tk_catalog_message(size_t i)
{
    return i < tk_catalog__n_messages ? tk_catalog__messages[i] : NULL;
}

const ProtobufCMessageDescriptor *tk_catalog_find_message(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < tk_catalog__n_messages; i++)
        if (strcmp(tk_catalog__messages[i]->name, name) == 0)
            return tk_catalog__messages[i];
    return NULL;
}

const ProtobufCEnumDescriptor *tk_catalog_find_enum(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < tk_catalog__n_enums; i++)
        if (strcmp(tk_catalog__enums[i]->name, name) == 0)
            return tk_catalog__enums[i];
    return NULL;
}

static int doc_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const tk_catalog__doc *)elem)->name);
}

const char *tk_catalog_comment(const char *full_name)
{
    if (full_name == NULL)
        return NULL;
    const tk_catalog__doc *d = bsearch(full_name, tk_catalog__docs,
                                       tk_catalog__n_docs, sizeof *d, doc_cmp);
    return d != NULL ? d->text : NULL;
}

const tk_field_note *tk_catalog_find_field(const char *message,
                                           const char *field)
{
    if (message == NULL || field == NULL)
        return NULL;
    for (size_t i = 0; i < tk_catalog__n_fields; i++)
        if (strcmp(tk_catalog__fields[i].message, message) == 0 &&
            strcmp(tk_catalog__fields[i].field, field) == 0)
            return &tk_catalog__fields[i];
    return NULL;
}
