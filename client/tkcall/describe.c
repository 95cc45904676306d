/* SPDX-License-Identifier: MIT */
/* tkcall describe: services, messages and enums printed as a .proto
 * declares them, with its comments (the catalog has them) and what
 * protobuf-c does not keep: oneof names, maps, path fields. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "tkcall_int.h"

static const char *const scalar_names[] = {
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
    [PROTOBUF_C_TYPE_STRING] = "string",
    [PROTOBUF_C_TYPE_BYTES] = "bytes",
};

/* A type's name as written inside scope: nested types by their short name. */
static const char *relative(const char *full, const char *scope)
{
    size_t n = strlen(scope);
    return strncmp(full, scope, n) == 0 && full[n] == '.' ? full + n + 1 : full;
}

/* The comment of full_name in proto/, one "// " line per line. */
static void print_comment(FILE *out, const char *full_name, const char *indent)
{
    const char *text = tk_catalog_comment(full_name);
    while (text != NULL && *text != '\0') {
        size_t n = strcspn(text, "\n");
        fprintf(out, "%s//%s%.*s\n", indent, n > 0 ? " " : "", (int)n, text);
        text += n + (text[n] == '\n');
    }
}

/* Of m.f: "tk.v1.PingRequest.data", the name its comment has. */
static void print_member_comment(FILE *out, const char *scope,
                                 const char *member, const char *indent)
{
    char full[512];
    snprintf(full, sizeof full, "%s.%s", scope, member);
    print_comment(out, full, indent);
}

static const char *type_name(const ProtobufCFieldDescriptor *f,
                             const char *scope)
{
    if (f->type == PROTOBUF_C_TYPE_ENUM)
        return relative(((const ProtobufCEnumDescriptor *)f->descriptor)->name,
                        scope);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
        return relative(
            ((const ProtobufCMessageDescriptor *)f->descriptor)->name, scope);
    return scalar_names[f->type];
}

/* A map<K, V>: to protobuf-c a repeated KEntry { K key = 1; V value = 2; }. */
static bool is_map(const ProtobufCMessageDescriptor *m,
                   const ProtobufCFieldDescriptor *f)
{
    const tk_field_note *note = tk_catalog_find_field(m->name, f->name);
    return note != NULL && note->map && f->type == PROTOBUF_C_TYPE_MESSAGE &&
           ((const ProtobufCMessageDescriptor *)f->descriptor)->n_fields == 2;
}

/* How a bytes field is typed, in the mode of tkcall's codec flags. */
static const char *bytes_form(int json_flags)
{
    return json_flags & TK_JSON_BYTES_TEXT
               ? "text, or {\"base64\":\"...\"} if not UTF-8"
               : "base64 (--proto-json)";
}

/* What a field's line says after it: its JSON name and form, its path. */
static void print_notes(FILE *out, const ProtobufCMessageDescriptor *m,
                        const ProtobufCFieldDescriptor *f, int json_flags)
{
    const tk_field_note *note = tk_catalog_find_field(m->name, f->name);
    char jname[256];
    tk_json_field_name(jname, sizeof jname, f->name);
    const char *sep = "  // ";
    if (strcmp(jname, f->name) != 0) {
        fprintf(out, "%sJSON: %s", sep, jname);
        sep = "; ";
    }
    if (note != NULL && note->map) {
        fprintf(out, "%sJSON: an object", sep);
        sep = "; ";
    }
    if (f->type == PROTOBUF_C_TYPE_BYTES) {
        fprintf(out, "%s%s", sep, bytes_form(json_flags));
        sep = "; ";
    }
    if (note != NULL && note->path != TK_PATH_NONE)
        fprintf(out,
                "%spath: absolute, %s (tkcall makes a relative one "
                "absolute)",
                sep,
                note->path == TK_PATH_IN_ROOTS
                    ? "inside one of tkd's --root directories"
                    : "on tkd's machine");
}

static void print_field(FILE *out, const ProtobufCMessageDescriptor *m,
                        const ProtobufCFieldDescriptor *f, const char *indent,
                        int json_flags)
{
    const char *label = f->label == PROTOBUF_C_LABEL_REPEATED   ? "repeated "
                        : f->label == PROTOBUF_C_LABEL_REQUIRED ? "required "
                        : f->label == PROTOBUF_C_LABEL_OPTIONAL &&
                                !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
                            ? "optional "
                            : "";
    print_member_comment(out, m->name, f->name, indent);
    const ProtobufCMessageDescriptor *entry = f->descriptor;
    if (is_map(m, f))
        fprintf(out, "%smap<%s, %s> %s = %u;", indent,
                type_name(&entry->fields[0], m->name),
                type_name(&entry->fields[1], m->name), f->name, f->id);
    else
        fprintf(out, "%s%s%s %s = %u;", indent, label, type_name(f, m->name),
                f->name, f->id);
    print_notes(out, m, f, json_flags);
    fputc('\n', out);
}

/* protobuf-c keeps no oneof names (the catalog has them): members share
 * the offset of the case. */
static void print_oneof(FILE *out, const ProtobufCMessageDescriptor *m,
                        const ProtobufCFieldDescriptor *first, int json_flags)
{
    const tk_field_note *note = tk_catalog_find_field(m->name, first->name);
    const char *name = note != NULL && note->oneof != NULL ? note->oneof : "";
    print_member_comment(out, m->name, name, "  ");
    fprintf(out, "  oneof %s%s{  // at most one of these is set\n", name,
            name[0] != '\0' ? " " : "");
    for (unsigned i = 0; i < m->n_fields; i++)
        if ((m->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            m->fields[i].quantifier_offset == first->quantifier_offset)
            print_field(out, m, &m->fields[i], "    ", json_flags);
    fprintf(out, "  }\n");
}

static void print_enum(FILE *out, const ProtobufCEnumDescriptor *e,
                       const char *scope, const char *indent)
{
    char inner[16];
    snprintf(inner, sizeof inner, "%s  ", indent);
    print_comment(out, e->name, indent);
    fprintf(out, "%senum %s {\n", indent, relative(e->name, scope));
    for (unsigned i = 0; i < e->n_values; i++) {
        print_member_comment(out, e->name, e->values[i].name, inner);
        fprintf(out, "%s  %s = %d;\n", indent, e->values[i].name,
                e->values[i].value);
    }
    fprintf(out, "%s}\n", indent);
}

/* The enums m's fields use, each once; nested ones inside the block. */
static void print_enums(FILE *out, const ProtobufCMessageDescriptor *m,
                        bool nested)
{
    for (unsigned i = 0; i < m->n_fields; i++) {
        const ProtobufCEnumDescriptor *e = m->fields[i].descriptor;
        if (m->fields[i].type != PROTOBUF_C_TYPE_ENUM)
            continue;
        bool seen = false;
        for (unsigned j = 0; j < i; j++)
            seen |= m->fields[j].descriptor == e;
        if (seen || (relative(e->name, m->name) != e->name) != nested)
            continue;
        fputc('\n', out);
        print_enum(out, e, m->name, nested ? "  " : "");
    }
}

static void print_message(FILE *out, const ProtobufCMessageDescriptor *m,
                          int json_flags)
{
    print_comment(out, m->name, "");
    fprintf(out, "message %s {\n", m->name);
    for (unsigned i = 0; i < m->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &m->fields[i];
        if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
            print_field(out, m, f, "  ", json_flags);
            continue;
        }
        bool first = true;
        for (unsigned j = 0; j < i; j++)
            if ((m->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                m->fields[j].quantifier_offset == f->quantifier_offset)
                first = false;
        if (first)
            print_oneof(out, m, f, json_flags);
    }
    print_enums(out, m, true);
    fprintf(out, "}\n");
    print_enums(out, m, false);
}

void describe_message(FILE *out, const ProtobufCMessageDescriptor *m,
                      int json_flags)
{
    print_message(out, m, json_flags);
}

void describe_enum(FILE *out, const ProtobufCEnumDescriptor *e)
{
    print_enum(out, e, "", "");
}

void describe_comment(FILE *out, const char *full_name)
{
    print_comment(out, full_name, "");
}

void describe_service(FILE *out, const char *service)
{
    size_t n = strlen(service);
    print_comment(out, service, "");
    fprintf(out, "service %s {\n", service);
    for (size_t i = 0; i < tk_catalog_method_count(); i++) {
        const tk_method_desc *d = tk_catalog_method(i);
        if (strncmp(d->name, service, n) != 0 || d->name[n] != '/')
            continue;
        print_comment(out, d->name, "  ");
        fprintf(out, "  rpc %s(%s) returns (%s);  // %s\n", d->name + n + 1,
                d->request->name, d->reply->name,
                d->kind == TK_METHOD_WRITE ? "WRITE" : "READ");
    }
    fprintf(out, "}\n");
}
