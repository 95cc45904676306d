/* SPDX-License-Identifier: MIT */
/*
 * Test support: messages with every field set, built by reflection over a
 * protobuf-c descriptor, for round-trip tests of every message type
 * (envelope, JSON). Never default values; 64-bit values beyond 2^53 and at
 * the limits; bytes that are not UTF-8; strings that need escapes.
 */
#ifndef TK_TESTS_SAMPLE_H
#define TK_TESTS_SAMPLE_H

#include <protobuf-c/protobuf-c.h>

/* Nested messages deeper than this are left empty (recursive types). */
#define TS_SAMPLE_DEPTH 3

/* A new message of desc with every field set; variant picks which member
 * of each oneof is set. Allocated as unpack would, so
 * protobuf_c_message_free_unpacked(m, NULL) frees it. */
ProtobufCMessage *ts_sample(const ProtobufCMessageDescriptor *desc,
                            unsigned variant);

/* A message packed: malloc'd bytes (free data), never NULL (out of memory
 * aborts the test program). */
typedef struct ts_packed {
    uint8_t *data;
    size_t len;
} ts_packed;
ts_packed ts_pack(const ProtobufCMessage *m);

#endif
