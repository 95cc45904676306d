/* SPDX-License-Identifier: MIT */
/* Text that tkd sends: proto3 requires every string field to be valid
 * UTF-8, and strict decoders (Python's protobuf among them) refuse a whole
 * reply over one bad byte. What tkd puts in a string comes partly from
 * outside (a path a symlink leads to, git's words, a caller's method name),
 * so every string of a reply is checked before it is encoded, and bytes
 * that are not UTF-8 are escaped (\xNN), never passed through. */
#include <stdio.h>
#include <string.h>

#include "rpc_int.h"

const char *rpc__text_escaped(rpc_call *call, const char *text)
{
    size_t len = strlen(text);
    if (tkc_utf8_valid(text, len))
        return text;
    const unsigned char *s = (const unsigned char *)text;
    char *out = rpc_call_alloc(call, 4 * len + 1), *o = out;
    for (size_t i = 0; i < len;) {
        size_t n = tkc_utf8_seq(text + i, len - i, NULL);
        if (n > 0) {
            memcpy(o, s + i, n);
            o += n;
            i += n;
        } else {
            o += snprintf(o, 5, "\\x%02X", s[i]);
            i++;
        }
    }
    *o = '\0';
    return out;
}

static void escape_message(rpc_call *call, ProtobufCMessage *m, int depth);

/* The strings of one field (one value, or each of a repeated field). */
static void escape_field(rpc_call *call, const ProtobufCFieldDescriptor *f,
                         void *at, size_t count, int depth)
{
    for (size_t i = 0; i < count; i++) {
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            char **p = (char **)at + i;
            if (*p != NULL)
                *p = (char *)rpc__text_escaped(call, *p);
        } else {
            ProtobufCMessage *sub = ((ProtobufCMessage **)at)[i];
            if (sub != NULL)
                escape_message(call, sub, depth + 1);
        }
    }
}

/* Walks m's string and message fields, replacing each string that is not
 * UTF-8 by its escaped copy in the call's arena (reply memory is the
 * call's: nothing is freed). Bounded in depth as the request check is. */
static void escape_message(rpc_call *call, ProtobufCMessage *m, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (depth > 32)
        return;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING &&
            f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        char *base = (char *)m + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(size_t *)((char *)m + f->quantifier_offset);
            escape_field(call, f, *(void **)base, n, depth);
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which = *(uint32_t *)((char *)m + f->quantifier_offset);
            if (which == f->id)
                escape_field(call, f, base, 1, depth);
        } else {
            escape_field(call, f, base, 1, depth);
        }
    }
}

void rpc__escape_strings(rpc_call *call, ProtobufCMessage *msg)
{
    escape_message(call, msg, 0);
}
