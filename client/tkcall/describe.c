/* tkcall describe: messages and enums printed as a .proto declares them. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

static void print_field(FILE *out, const ProtobufCFieldDescriptor *f,
                        const char *scope, const char *indent)
{
    const char *label = f->label == PROTOBUF_C_LABEL_REPEATED   ? "repeated "
                        : f->label == PROTOBUF_C_LABEL_REQUIRED ? "required "
                        : f->label == PROTOBUF_C_LABEL_OPTIONAL &&
                                !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
                            ? "optional "
                            : "";
    char jname[256];
    tk_json_field_name(jname, sizeof jname, f->name);
    fprintf(out, "%s%s%s %s = %u;", indent, label, type_name(f, scope), f->name,
            f->id);
    if (strcmp(jname, f->name) != 0)
        fprintf(out, "  // JSON: %s", jname);
    fputc('\n', out);
}

/* protobuf-c keeps no oneof names: members share the offset of the case. */
static void print_oneof(FILE *out, const ProtobufCMessageDescriptor *m,
                        const ProtobufCFieldDescriptor *first)
{
    fprintf(out, "  oneof {  // at most one of these is set\n");
    for (unsigned i = 0; i < m->n_fields; i++)
        if ((m->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            m->fields[i].quantifier_offset == first->quantifier_offset)
            print_field(out, &m->fields[i], m->name, "    ");
    fprintf(out, "  }\n");
}

static void print_enum(FILE *out, const ProtobufCEnumDescriptor *e,
                       const char *scope, const char *indent)
{
    fprintf(out, "%senum %s {\n", indent, relative(e->name, scope));
    for (unsigned i = 0; i < e->n_values; i++)
        fprintf(out, "%s  %s = %d;\n", indent, e->values[i].name,
                e->values[i].value);
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

static void print_message(FILE *out, const ProtobufCMessageDescriptor *m)
{
    fprintf(out, "message %s {\n", m->name);
    for (unsigned i = 0; i < m->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &m->fields[i];
        if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
            print_field(out, f, m->name, "  ");
            continue;
        }
        bool first = true;
        for (unsigned j = 0; j < i; j++)
            if ((m->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                m->fields[j].quantifier_offset == f->quantifier_offset)
                first = false;
        if (first)
            print_oneof(out, m, f);
    }
    print_enums(out, m, true);
    fprintf(out, "}\n");
    print_enums(out, m, false);
}

void describe_message(FILE *out, const ProtobufCMessageDescriptor *m)
{
    print_message(out, m);
}

void describe_enum(FILE *out, const ProtobufCEnumDescriptor *e)
{
    print_enum(out, e, "", "");
}
