/* SPDX-License-Identifier: MIT */
/* Where a parser keeps its matches: blocks carved from 256 KiB chunks, and
 * the chunks handed back to the service's pool when the search is over,
 * for the next search to fill without faulting their pages in again.
 *
 * A malloc for each match (34 000 for `quokka` in tools/bench/search) and
 * the frees after it were about 15% of tkd's CPU beside rg's
 * (_int_malloc, malloc_consolidate, free), and when glibc had given the
 * worker's heap back since the last search, its pages faulted in anew.
 * Fresh chunks were tried and filled twice as slowly as malloc (every
 * page a fault); kept chunks are the difference. The pool keeps at most
 * SEARCH_POOL_KEEP chunks (4 MiB) between searches, whatever the number
 * of searches at once; a block too large for a quarter of a chunk (a long
 * line) gets a chunk of its own, never kept. */
#include <stdint.h>
#include <stdlib.h>

#include "search_int.h"

struct search_chunk {
    search_chunk *next;
    size_t size, used; /* the bytes after this header */
};

int search__pool_init(search_pool *pool)
{
    pool->free = NULL;
    pool->n_free = 0;
    return -pthread_mutex_init(&pool->mu, NULL);
}

void search__pool_fini(search_pool *pool)
{
    while (pool->free != NULL) {
        search_chunk *c = pool->free;
        pool->free = c->next;
        free(c);
    }
    pool->n_free = 0;
    pthread_mutex_destroy(&pool->mu);
}

static search_chunk *new_chunk(size_t size)
{
    search_chunk *c = malloc(sizeof *c + size);
    if (c != NULL) {
        c->size = size;
        c->used = 0;
    }
    return c;
}

/* A chunk of SEARCH_CHUNK bytes: one the pool kept, or a new one. */
static search_chunk *take_chunk(search_pool *pool)
{
    search_chunk *c = NULL;
    if (pool != NULL) {
        pthread_mutex_lock(&pool->mu);
        c = pool->free;
        if (c != NULL) {
            pool->free = c->next;
            pool->n_free--;
        }
        pthread_mutex_unlock(&pool->mu);
    }
    if (c == NULL)
        return new_chunk(SEARCH_CHUNK);
    c->used = 0;
    return c;
}

void *search__store_alloc(search_store *st, size_t n)
{
    n = (n + 7) & ~(size_t)7; /* spans (uint32_t) lead a block */
    search_chunk *c = st->chunks;
    if (c != NULL && c->size - c->used >= n) {
        c->used += n;
        return (char *)(c + 1) + c->used - n;
    }
    if (n > SEARCH_CHUNK / 4) { /* its own, behind the one being filled */
        search_chunk *big = new_chunk(n);
        if (big == NULL)
            return NULL;
        big->used = n;
        big->next = c != NULL ? c->next : NULL;
        if (c != NULL)
            c->next = big;
        else
            st->chunks = big;
        return big + 1;
    }
    c = take_chunk(st->pool);
    if (c == NULL)
        return NULL;
    c->next = st->chunks;
    st->chunks = c;
    c->used = n;
    return c + 1;
}

void search__store_release(search_store *st)
{
    search_chunk *keep = NULL, *c = st->chunks;
    st->chunks = NULL;
    if (st->pool != NULL)
        pthread_mutex_lock(&st->pool->mu);
    while (c != NULL) {
        search_chunk *next = c->next;
        if (st->pool != NULL && c->size == SEARCH_CHUNK &&
            st->pool->n_free < SEARCH_POOL_KEEP) {
            c->next = st->pool->free;
            st->pool->free = c;
            st->pool->n_free++;
        } else {
            c->next = keep;
            keep = c;
        }
        c = next;
    }
    if (st->pool != NULL)
        pthread_mutex_unlock(&st->pool->mu);
    while (keep != NULL) { /* freed outside the lock */
        c = keep;
        keep = c->next;
        free(c);
    }
}

/* ---- for tests ---------------------------------------------------------- */

search_pool *search__test_pool_new(void)
{
    search_pool *pool = malloc(sizeof *pool);
    if (pool != NULL && search__pool_init(pool) != 0) {
        free(pool);
        pool = NULL;
    }
    return pool;
}

void search__test_pool_free(search_pool *pool)
{
    search__pool_fini(pool);
    free(pool);
}

size_t search__test_pool_kept(search_pool *pool)
{
    pthread_mutex_lock(&pool->mu);
    size_t n = pool->n_free;
    pthread_mutex_unlock(&pool->mu);
    return n;
}
