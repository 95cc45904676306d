/* SPDX-License-Identifier: MIT */
/* Paths as people type them: a relative path in a field that names a file
 * or directory (option (tk.v1.path), in the catalog) is made absolute
 * against tkcall's working directory before the request is sent, since
 * tkd resolves paths itself and refuses relative ones. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "tkcall_int.h"

/* cwd joined with rel: "." is cwd, a leading "./" is dropped; ".." stays
 * for tkd to resolve (symlinks included), as it would in a shell. */
static char *joined(const char *cwd, const char *rel)
{
    while (rel[0] == '.' && rel[1] == '/') {
        rel += 2;
        while (rel[0] == '/')
            rel++;
    }
    if (strcmp(rel, ".") == 0)
        rel = "";
    char *out = NULL;
    bool root = strcmp(cwd, "/") == 0;
    if (asprintf(&out, "%s%s%s", cwd, root || rel[0] == '\0' ? "" : "/", rel) <
        0)
        return NULL;
    return out;
}

static bool is_set(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return true;
    const uint32_t *which =
        (const uint32_t *)(const void *)((const char *)m +
                                         f->quantifier_offset);
    return *which == f->id;
}

static int fix_string(char **slot, const char *cwd)
{
    if (*slot == NULL || (*slot)[0] == '\0' || (*slot)[0] == '/')
        return 0;
    char *abs = cwd != NULL ? joined(cwd, *slot) : NULL;
    if (abs == NULL)
        return -1;
    free(*slot); /* tk_json_decode's, from malloc */
    *slot = abs;
    return 0;
}

int paths_make_absolute(ProtobufCMessage *m, const char *cwd)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        void *at = (char *)m + f->offset;
        if (!is_set(m, f))
            continue;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            size_t n =
                f->label == PROTOBUF_C_LABEL_REPEATED
                    ? *(size_t *)(void *)((char *)m + f->quantifier_offset)
                    : 1;
            ProtobufCMessage **v = f->label == PROTOBUF_C_LABEL_REPEATED
                                       ? *(ProtobufCMessage ***)at
                                       : (ProtobufCMessage **)at;
            for (size_t k = 0; k < n; k++)
                if (v[k] != NULL && paths_make_absolute(v[k], cwd) != 0)
                    return -1;
            continue;
        }
        const tk_field_note *note = tk_catalog_find_field(d->name, f->name);
        if (note == NULL || note->path == TK_PATH_NONE ||
            f->type != PROTOBUF_C_TYPE_STRING ||
            f->label == PROTOBUF_C_LABEL_REPEATED)
            continue;
        if (fix_string((char **)at, cwd) != 0)
            return -1;
    }
    return 0;
}
