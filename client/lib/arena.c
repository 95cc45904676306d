/* SPDX-License-Identifier: MIT */
/* libtkclient: tk_arena, a bump allocator that a reply is decoded into
 * (tk_call_opts.reply_allocator) and that is released whole.
 *
 * Why: protobuf-c unpacks a dense SearchReply (34,000 matches, 3.1 MB) with
 * five mallocs a match, and frees it with as many frees; a process that
 * frees its reply between calls gets the pages faulted in again on the
 * next (glibc trims the heap), about 3 us a page (BENCHMARKS.md, Search).
 * An arena that is reset, not freed, keeps its pages, and an allocation is
 * an add and a compare.
 *
 * Two kinds of chunk. Small allocations (up to LARGE_MIN) are bumped from
 * general chunks, used in list order: those before cur are in use, those
 * after it are empty. A larger one (protobuf-c's array of a repeated
 * field, its scratch slabs) gets a chunk of its own from the large list,
 * the best fit among the free ones or a new one of its exact size. So a
 * reply decoded again after a reset makes the same requests of the same
 * chunks, and takes no new memory. */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <tk/client.h>

#include "client_int.h"

#define ALIGN alignof(max_align_t)
/* The first general chunk when the caller gives no size hint, and the
 * least it gets. */
#define DEFAULT_CHUNK ((size_t)64 * 1024)
#define MIN_CHUNK ((size_t)1024)
/* General chunks double in size up to this. */
#define MAX_CHUNK ((size_t)4 * 1024 * 1024)
/* An allocation larger than this gets a chunk of its own. */
#define LARGE_MIN ((size_t)32 * 1024)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size;  /* of data */
    size_t used;  /* general: bytes handed out; large: 0 free, else size */
    uint64_t seq; /* large and in use: the arena's count when taken */
    alignas(max_align_t) unsigned char data[];
} chunk;

struct tk_arena {
    ProtobufCAllocator allocator; /* allocator_data: this arena */
    chunk *head;                  /* general chunks, never empty */
    chunk *cur;                   /* the one bumped from */
    chunk *large;                 /* large chunks, free or in use */
    size_t next_size;             /* of the next general chunk made */
    size_t used;                  /* bytes handed out since the reset */
    size_t capacity;              /* bytes of every chunk's data */
    uint64_t seq;                 /* large chunks taken since the reset */
};

static chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(chunk))
        return NULL;
    chunk *c = malloc(sizeof(chunk) + size);
    if (c != NULL)
        *c = (chunk){ .size = size };
    return c;
}

static void chunks_free(chunk *c)
{
    while (c != NULL) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
}

/* A general chunk after cur with room for want bytes (they are all
 * empty), moved to follow cur, or a new one there; it becomes cur. */
static void *alloc_general(tk_arena *a, size_t want)
{
    chunk **at = &a->cur->next;
    while (*at != NULL && (*at)->size < want)
        at = &(*at)->next;
    chunk *c = *at;
    if (c != NULL) {
        *at = c->next;
    } else {
        c = chunk_new(want > a->next_size ? want : a->next_size);
        if (c == NULL)
            return NULL;
        a->capacity += c->size;
        if (a->next_size < MAX_CHUNK)
            a->next_size *= 2;
    }
    c->next = a->cur->next;
    a->cur->next = c;
    a->cur = c;
    c->used = want;
    return c->data;
}

/* The smallest free large chunk that holds want bytes, or a new one. */
static void *alloc_large(tk_arena *a, size_t want)
{
    chunk *best = NULL;
    for (chunk *c = a->large; c != NULL; c = c->next)
        if (c->used == 0 && c->size >= want &&
            (best == NULL || c->size < best->size))
            best = c;
    if (best == NULL) {
        if ((best = chunk_new(want)) == NULL)
            return NULL;
        best->next = a->large;
        a->large = best;
        a->capacity += want;
    }
    best->used = best->size;
    best->seq = ++a->seq;
    return best->data;
}

static void *arena_alloc(void *data, size_t size)
{
    tk_arena *a = data;
    if (size > SIZE_MAX - ALIGN)
        return NULL;
    /* Every size rounded up, so every address stays aligned for any
     * field protobuf-c places there; 0 still gets a distinct address. */
    size_t want = size == 0 ? ALIGN : (size + ALIGN - 1) & ~(ALIGN - 1);
    void *p;
    if (a->cur->size - a->cur->used >= want) {
        p = a->cur->data + a->cur->used;
        a->cur->used += want;
    } else {
        p = want > LARGE_MIN ? alloc_large(a, want) : alloc_general(a, want);
    }
    if (p != NULL)
        a->used += want;
    return p;
}

/* What the arena holds is released whole, by tk_arena_reset. */
static void arena_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

int tk_arena_new(tk_arena **out, size_t size_hint)
{
    if (out == NULL)
        return TK_ERR_ARG;
    *out = NULL;
    tk_arena *a = calloc(1, sizeof *a);
    size_t first = size_hint == 0          ? DEFAULT_CHUNK
                   : size_hint < MIN_CHUNK ? MIN_CHUNK
                                           : size_hint;
    if (a == NULL || (a->head = chunk_new(first)) == NULL) {
        free(a);
        return TK_ERR_NOMEM;
    }
    a->allocator = (ProtobufCAllocator){ .alloc = arena_alloc,
                                         .free = arena_free,
                                         .allocator_data = a };
    a->cur = a->head;
    a->capacity = first;
    a->next_size = first < MAX_CHUNK ? first * 2 : MAX_CHUNK;
    *out = a;
    return TK_OK;
}

ProtobufCAllocator *tk_arena_allocator(tk_arena *a)
{
    return a != NULL ? &a->allocator : NULL;
}

void tk_arena_reset(tk_arena *a)
{
    if (a == NULL)
        return;
    for (chunk *c = a->head; c != NULL; c = c->next)
        c->used = 0;
    for (chunk *c = a->large; c != NULL; c = c->next)
        c->used = 0;
    a->cur = a->head;
    a->used = 0;
    a->seq = 0;
}

void tk_arena_free(tk_arena *a)
{
    if (a == NULL)
        return;
    chunks_free(a->head);
    chunks_free(a->large);
    free(a);
}

size_t tk_arena_used(const tk_arena *a)
{
    return a != NULL ? a->used : 0;
}

size_t tk_arena_capacity(const tk_arena *a)
{
    return a != NULL ? a->capacity : 0;
}

tk_arena *tk__arena_of(const ProtobufCAllocator *allocator)
{
    return allocator != NULL && allocator->alloc == arena_alloc
               ? allocator->allocator_data
               : NULL;
}

void tk__arena_mark(const tk_arena *a, tk__arena_pos *pos)
{
    *pos = (tk__arena_pos){
        .cur = a->cur, .cur_used = a->cur->used, .used = a->used, .seq = a->seq
    };
}

void tk__arena_rewind(tk_arena *a, const tk__arena_pos *pos)
{
    chunk *mark = pos->cur;
    for (chunk *c = mark->next; c != NULL; c = c->next)
        c->used = 0;
    mark->used = pos->cur_used;
    a->cur = mark;
    for (chunk *c = a->large; c != NULL; c = c->next)
        if (c->used != 0 && c->seq > pos->seq)
            c->used = 0;
    a->used = pos->used;
    a->seq = pos->seq;
}
