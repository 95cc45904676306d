/* Lookups over the generated catalog (gen/c/tk/catalog.c). */
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
