/* SPDX-License-Identifier: MIT */
/* The bookkeeping of Log's walk (log.c): a set of object ids, by open
 * addressing, and the queue of commits by date that the walk takes the
 * next one from. Out of memory is an answer, never an abort. */
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

static size_t oid_hash(const git_oid *id)
{
    size_t h;
    memcpy(&h, id->id, sizeof h);
    return h;
}

static int oidset_grow(tkgit_oidset *s);

/* 1 when added, 0 when it was there, -1 out of memory. Grows at a load
 * of 3/4: linear probing stays short, and a slot is 20 bytes. */
int tkgit__oidset_add(tkgit_oidset *s, const git_oid *id)
{
    if ((s->n + 1) * 4 > s->cap * 3 && oidset_grow(s) != 0)
        return -1;
    size_t i = oid_hash(id) & (s->cap - 1);
    while (!git_oid_is_zero(&s->slots[i])) {
        if (git_oid_equal(&s->slots[i], id))
            return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->slots[i] = *id;
    s->n++;
    return 1;
}

bool tkgit__oidset_has(const tkgit_oidset *s, const git_oid *id)
{
    if (s->cap == 0)
        return false;
    size_t i = oid_hash(id) & (s->cap - 1);
    while (!git_oid_is_zero(&s->slots[i])) {
        if (git_oid_equal(&s->slots[i], id))
            return true;
        i = (i + 1) & (s->cap - 1);
    }
    return false;
}

static int oidset_grow(tkgit_oidset *s)
{
    tkgit_oidset bigger = { 0 };
    bigger.cap = s->cap == 0 ? 256 : s->cap * 2;
    bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
    if (bigger.slots == NULL)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (!git_oid_is_zero(&s->slots[i]))
            tkgit__oidset_add(&bigger, &s->slots[i]);
    free(s->slots);
    *s = bigger;
    return 0;
}

void tkgit__oidset_fini(tkgit_oidset *s)
{
    free(s->slots);
}

/* a before b: newer first; of equal dates, the one queued first. */
static bool before(const tkgit_queued *a, const tkgit_queued *b)
{
    return a->time > b->time || (a->time == b->time && a->seq < b->seq);
}

static void swap(tkgit_queued *a, tkgit_queued *b)
{
    tkgit_queued t = *a;
    *a = *b;
    *b = t;
}

int tkgit__queue_push(tkgit_queue *q, const git_commit *c)
{
    tkgit_queued *items =
        tkc_grow(q->items, &q->cap, q->n + 1, sizeof *items, 64);
    if (items == NULL)
        return -1;
    q->items = items;
    size_t i = q->n++;
    q->items[i] =
        (tkgit_queued){ *git_commit_id(c), git_commit_time(c), q->seq++ };
    while (i > 0 && before(&q->items[i], &q->items[(i - 1) / 2])) {
        swap(&q->items[i], &q->items[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return 0;
}

/* The id of the commit whose turn it is into *out; false when none waits. */
bool tkgit__queue_pop(tkgit_queue *q, git_oid *out)
{
    if (q->n == 0)
        return false;
    *out = q->items[0].id;
    q->items[0] = q->items[--q->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && before(&q->items[l], &q->items[m]))
            m = l;
        if (r < q->n && before(&q->items[r], &q->items[m]))
            m = r;
        if (m == i)
            break;
        swap(&q->items[i], &q->items[m]);
        i = m;
    }
    return true;
}

void tkgit__queue_fini(tkgit_queue *q)
{
    free(q->items);
}
