/* SPDX-License-Identifier: MIT */
/* What the files of libtkclient share and do not export. */
#ifndef TK_CLIENT_LIB_INT_H
#define TK_CLIENT_LIB_INT_H

#include <stddef.h>
#include <stdint.h>

struct ProtobufCAllocator;
struct tk_arena;

/* arena.c: the tk_arena whose allocator this is, or NULL (another one). */
struct tk_arena *tk__arena_of(const struct ProtobufCAllocator *allocator);

/* Where an arena stands, to go back there: what a failed decoding took
 * from it is handed back (protobuf-c frees what it took, and an arena's
 * free does nothing). */
typedef struct tk__arena_pos {
    struct arena_chunk *cur;
    size_t cur_used;
    size_t used;
    uint64_t seq;
} tk__arena_pos;

void tk__arena_mark(const struct tk_arena *a, tk__arena_pos *pos);
void tk__arena_rewind(struct tk_arena *a, const tk__arena_pos *pos);

#endif
