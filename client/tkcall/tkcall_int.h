/* tkcall's parts, each in a file of its own: describe.c prints schemas.
 * Internal to client/tkcall/. */
#ifndef TK_TKCALL_INT_H
#define TK_TKCALL_INT_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

/* describe.c: a message or an enum as a .proto would declare it. */
void describe_message(FILE *out, const ProtobufCMessageDescriptor *m);
void describe_enum(FILE *out, const ProtobufCEnumDescriptor *e);

#endif /* TK_TKCALL_INT_H */
