/* SPDX-License-Identifier: MIT */
/*
 * The message types the JSON harnesses decode into: every message of the
 * catalog (proto/) and the codec's fixtures (tests/unit/json_fixture*.proto:
 * every scalar type, repeated fields, oneof, maps, recursion, proto2
 * presence and defaults).
 */
#ifndef TK_TESTS_FUZZ_JSON_TYPES_H
#define TK_TESTS_FUZZ_JSON_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* An input is "FULL.NAME\n" then the data: the type of that name, or for
 * a name of no type (or no newline in the first 128 bytes) one chosen
 * by the name's bytes, so that every input has a type. *data and *size
 * are moved past the name's line. */
const ProtobufCMessageDescriptor *fuzz_json_type(const uint8_t **data,
                                                 size_t *size);

/* How deep m's messages nest (m alone: 1). */
int fuzz_json_depth(const ProtobufCMessage *m);

#endif
