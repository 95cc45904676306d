/* SPDX-License-Identifier: MIT */
/* tkcall describe: services, messages and enums printed as a .proto
 * declares them, with its comments (the catalog has them) and what
 * protobuf-c does not keep: oneof names, maps, path fields. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "tkcall.h"
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
    if (tk_json_is_map(m, f->name))
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

/* ---- describe --------------------------------------------------------------
 */

/* "16 MiB": max_bytes as people read it. */
static void format_bytes(char *buf, size_t len, uint32_t n)
{
    if (n % (1u << 20) == 0)
        snprintf(buf, len, "%u MiB", (unsigned)(n >> 20));
    else if (n % (1u << 10) == 0)
        snprintf(buf, len, "%u KiB", (unsigned)(n >> 10));
    else
        snprintf(buf, len, "%u bytes", (unsigned)n);
}

/* The ceiling of the reply's list, as tkd serves it, with the limit's
 * name as JSON spells it (what a tkcall user types). */
static void print_list(const Tk__V1__ListSpec *l)
{
    printf("list      %s: ", l->field);
    if (l->limit_field[0] != '\0') {
        char name[64];
        tk_json_field_name(name, sizeof name, l->limit_field);
        printf("%u by default (%s 0), %u at most (a larger %s is served "
               "as %u)",
               (unsigned)l->default_items, name, (unsigned)l->max_items, name,
               (unsigned)l->max_items);
    } else {
        printf("%u at most", (unsigned)l->max_items);
    }
    if (l->max_bytes != 0) {
        char bytes[32];
        format_bytes(bytes, sizeof bytes, l->max_bytes);
        printf(", and %s of their paths and text", bytes);
    }
    printf("; a reply cut there is partial\n");
}

static void print_method_info(const Tk__V1__MethodInfo *info)
{
    char dflt[32], ceiling[32];
    tkcall__format_ms(dflt, sizeof dflt, info->default_timeout_ms);
    tkcall__format_ms(ceiling, sizeof ceiling, info->ceiling_ms);
    const ProtobufCEnumValue *kind = protobuf_c_enum_descriptor_get_value(
        &tk__v1__method_info__kind__descriptor, (int)info->kind);
    printf("kind      %s\n", kind != NULL ? kind->name : "?");
    printf("timeout   %s by default (timeout_ms 0), %s at most%s\n", dflt,
           ceiling,
           info->kind == TK__V1__METHOD_INFO__KIND__WRITE
               ? " (a write's own timeout)"
               : "");
    if (info->list != NULL)
        print_list(info->list);
}

static void print_schema(const char *type, int json_flags)
{
    const ProtobufCMessageDescriptor *d = tk_catalog_find_message(type);
    printf("\n");
    if (d != NULL)
        describe_message(stdout, d, json_flags);
    else
        printf("(tkcall's catalog has no schema for %s)\n", type);
}

/* Prints what is known of a method: its types from the catalog or tkd, its
 * kind and timeouts when tkd answers, its comment, then the request's and
 * the reply's schemas. */
static int describe_method(tkcall *t, const char *name)
{
    const tk_method_desc *local = tk_catalog_find_method(name);
    Tk__V1__ListMethodsReply *list = NULL;
    const Tk__V1__MethodInfo *info = NULL;
    tk_status st = { 0 };
    int code = tkcall__fetch_method_info(t, name, &list, &info, &st);
    int rv = TKCALL_EXIT_OK;
    if (local == NULL && code != TK_OK) {
        rv = tkcall_report(&st);
    } else if (local == NULL && info == NULL) {
        rv = tkcall__unknown_method(t, name);
    } else {
        const char *req =
            local != NULL ? local->request->name : info->request_type;
        printf("method    %s\n", name);
        printf("request   %s\n", req);
        printf("reply     %s\n",
               local != NULL ? local->reply->name : info->reply_type);
        if (info != NULL)
            print_method_info(info);
        else
            printf("kind      unknown: %s\n",
                   code != TK_OK && st.message != NULL
                       ? st.message
                       : "tkd does not serve this method");
        if (local != NULL) {
            printf("\n");
            describe_comment(stdout, name);
        }
        print_schema(req, t->out.json_flags);
        print_schema(local != NULL ? local->reply->name : info->reply_type,
                     t->out.json_flags);
    }
    tk_status_clear(&st);
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    return rv;
}

int tkcall__cmd_describe(tkcall *t)
{
    if (t->n_args != 2)
        return tkcall__usage_error(
            "describe takes one name: a service, a method, a "
            "message or an enum");
    const char *typed = t->args[1];
    namelist l = { 0 };
    names_result r;
    if (!names_add_catalog(&l, NAMES_METHODS | NAMES_SERVICES | NAMES_MESSAGES |
                                   NAMES_ENUMS)) {
        names_fini(&l);
        return tkcall__out_of_memory();
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    int rv = TKCALL_EXIT_OK;
    const ProtobufCMessageDescriptor *m = tk_catalog_find_message(r.name);
    const ProtobufCEnumDescriptor *e = tk_catalog_find_enum(r.name);
    if (r.verdict == NAMES_NONE && strchr(typed, '/') != NULL)
        rv = describe_method(t, typed[0] == '.' ? typed + 1 : typed);
    else if (r.verdict != NAMES_FOUND)
        rv = tkcall__no_match(t, "name", typed, &r);
    else if (strchr(r.name, '/') != NULL)
        rv = describe_method(t, r.name);
    else if (m != NULL)
        describe_message(stdout, m, t->out.json_flags);
    else if (e != NULL)
        describe_enum(stdout, e);
    else
        describe_service(stdout, r.name);
    names_fini(&l);
    return rv;
}
