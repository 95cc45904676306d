/* SPDX-License-Identifier: MIT */
/* What a run's output becomes: stdout captured up to its cap or passed on
 * (as chunks or records) to the caller's callback; stderr kept as a head
 * and a tail with the count of what lies between. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_int.h"

/* ---- stdout ------------------------------------------------------------- */

void proc__sink_init(proc_sink *s, const proc_opts *opts)
{
    memset(s, 0, sizeof *s);
    s->opts = opts;
    s->cap = opts->stdout_cap;
    if (s->cap == 0) /* a consumer bounds what it keeps itself */
        s->cap = opts->on_stdout != NULL ? SIZE_MAX : PROC_DEFAULT_STDOUT_CAP;
}

/* Makes room for len more bytes (plus a NUL) in s->buf. */
static int reserve(proc_sink *s, size_t len)
{
    if (s->len + len + 1 <= s->alloc)
        return 0;
    size_t want = s->alloc != 0 ? s->alloc : 4096;
    while (want < s->len + len + 1)
        want *= 2;
    char *nb = realloc(s->buf, want);
    if (nb == NULL)
        return -ENOMEM;
    s->buf = nb;
    s->alloc = want;
    return 0;
}

/* Appends what fits in limit; false when bytes had to be dropped (or
 * memory ran out, which drops them too and so is reported the same). */
static bool append(proc_sink *s, const char *data, size_t len, size_t limit)
{
    size_t room = limit > s->len ? limit - s->len : 0;
    size_t take = len < room ? len : room;
    if (take > 0 && reserve(s, take) == 0) {
        memcpy(s->buf + s->len, data, take);
        s->len += take;
        s->buf[s->len] = '\0';
    } else if (take > 0) {
        return false;
    }
    return take == len;
}

static proc_feed deliver(proc_sink *s, const char *data, size_t len,
                         bool truncated)
{
    if (s->opts->on_stdout(s->opts->on_stdout_arg, data, len, truncated) ==
        PROC_STOP) {
        s->stopped = true;
        return PROC_FEED_STOP;
    }
    return PROC_FEED_OK;
}

/* The end of record_resume in a cut record's dropped bytes [p, p + n),
 * which follow the carry: its index in p just past the string, or -1
 * (the carry then keeps the last bytes, for the next read). */
static long resume_end(proc_sink *s, const char *p, size_t n)
{
    const char *mark = s->opts->record_resume;
    size_t m = strlen(mark);
    /* Begun in the carry, ended in p: the earliest end first. */
    for (size_t k = m - 1; k >= 1; k--) {
        if (s->carry_len >= k && n >= m - k &&
            memcmp(s->carry + s->carry_len - k, mark, k) == 0 &&
            memcmp(p, mark + k, m - k) == 0)
            return (long)(m - k);
    }
    const char *at = memmem(p, n, mark, m);
    if (at != NULL)
        return (long)(at - p + (long)m);
    /* The last m - 1 bytes of carry and p. */
    size_t keep = m - 1;
    if (n >= keep) {
        memcpy(s->carry, p + n - keep, keep);
        s->carry_len = keep;
    } else {
        size_t old = s->carry_len + n > keep ? keep - n : s->carry_len;
        memmove(s->carry, s->carry + s->carry_len - old, old);
        memcpy(s->carry + old, p, n);
        s->carry_len = old + n;
    }
    return -1;
}

/* Bytes of a cut record past record_max: dropped, but for record_resume
 * and what follows it. */
static void feed_cut(proc_sink *s, const char *p, size_t n)
{
    const char *mark = s->opts->record_resume;
    size_t limit = s->opts->record_max + PROC_RESUME_MARK_MAX + PROC_RESUME_MAX;
    if (mark == NULL || mark[0] == '\0')
        return;
    if (!s->resumed) {
        long end = resume_end(s, p, n);
        if (end < 0)
            return;
        s->resumed = true;
        append(s, mark, strlen(mark), limit);
        p += end;
        n -= (size_t)end;
    }
    append(s, p, n, limit);
}

/* A record is cut: the carry starts with the last bytes kept, in which
 * record_resume may begin. */
static void cut_record(proc_sink *s)
{
    s->rec_cut = true;
    s->records_cut = true;
    const char *mark = s->opts->record_resume;
    if (mark == NULL || mark[0] == '\0' || s->buf == NULL)
        return;
    size_t keep = strlen(mark) - 1;
    keep = s->len < keep ? s->len : keep;
    memcpy(s->carry, s->buf + s->len - keep, keep);
    s->carry_len = keep;
}

/* Record mode: splits at the delimiter, cutting records at record_max. */
static proc_feed feed_records(proc_sink *s, const char *data, size_t len)
{
    size_t max = s->opts->record_max;
    while (len > 0 && !s->stopped) {
        const char *end = memchr(data, s->opts->record_delim, len);
        size_t part = end != NULL ? (size_t)(end - data) : len;
        if (end != NULL && s->len == 0 && !s->rec_cut && part <= max) {
            /* A whole record within what was read: passed from there,
             * not copied first. */
            proc_feed f = deliver(s, data, part, false);
            data += part + 1;
            len -= part + 1;
            if (f != PROC_FEED_OK)
                return f;
            continue;
        }
        if (s->rec_cut) {
            feed_cut(s, data, part);
        } else {
            size_t before = s->len;
            if (!append(s, data, part, max)) {
                size_t took = s->len - before;
                cut_record(s);
                feed_cut(s, data + took, part - took);
            }
        }
        if (end == NULL)
            return PROC_FEED_OK;
        proc_feed f =
            deliver(s, s->buf != NULL ? s->buf : "", s->len, s->rec_cut);
        s->len = 0;
        s->rec_cut = s->resumed = false;
        s->carry_len = 0;
        data += part + 1;
        len -= part + 1;
        if (f != PROC_FEED_OK)
            return f;
    }
    return PROC_FEED_OK;
}

proc_feed proc__sink_feed(proc_sink *s, const char *data, size_t len)
{
    uint64_t before = s->total;
    s->total += len;
    if (s->stopped || s->overflow)
        return PROC_FEED_OK;
    size_t take = len;
    if (before + len > s->cap) {
        take = before < s->cap ? (size_t)(s->cap - before) : 0;
        s->overflow = true;
    }
    proc_feed f = PROC_FEED_OK;
    if (s->opts->on_stdout == NULL) {
        if (!append(s, data, take, s->cap))
            s->overflow = true; /* out of memory: reported as a cut too */
    } else if (s->opts->record_max > 0) {
        f = feed_records(s, data, take);
    } else if (take > 0) {
        f = deliver(s, data, take, false);
    }
    if (f == PROC_FEED_OK && s->overflow)
        return PROC_FEED_OVERFLOW;
    return f;
}

void proc__sink_eof(proc_sink *s)
{
    if (s->opts->on_stdout != NULL && s->opts->record_max > 0 && !s->stopped &&
        !s->overflow && (s->len > 0 || s->rec_cut))
        deliver(s, s->buf != NULL ? s->buf : "", s->len, s->rec_cut);
    if (s->opts->on_stdout != NULL)
        s->len = 0;
}

void proc__sink_finish(proc_sink *s, proc_result *r)
{
    r->out_total = s->total;
    r->out_truncated = s->overflow;
    r->records_truncated = s->records_cut;
    if (s->opts->on_stdout == NULL) {
        if (s->buf == NULL)
            s->buf = calloc(1, 1);
        r->out = s->buf;
        r->out_len = s->buf != NULL ? s->len : 0;
    } else {
        free(s->buf);
    }
    s->buf = NULL;
}

void proc__sink_discard(proc_sink *s)
{
    free(s->buf);
    s->buf = NULL;
}

/* ---- stderr ------------------------------------------------------------- */

int proc__excerpt_init(proc_excerpt *e, const proc_opts *opts)
{
    memset(e, 0, sizeof *e);
    e->head_max =
        opts->stderr_head != 0 ? opts->stderr_head : PROC_DEFAULT_STDERR_HEAD;
    e->tail_max =
        opts->stderr_tail != 0 ? opts->stderr_tail : PROC_DEFAULT_STDERR_TAIL;
    e->head = malloc(e->head_max);
    e->tail = malloc(e->tail_max);
    if (e->head == NULL || e->tail == NULL) {
        proc__excerpt_discard(e);
        return -ENOMEM;
    }
    return 0;
}

void proc__excerpt_feed(proc_excerpt *e, const char *data, size_t len)
{
    e->total += len;
    size_t h = e->head_max - e->head_len;
    if (h > len)
        h = len;
    memcpy(e->head + e->head_len, data, h);
    e->head_len += h;
    data += h;
    len -= h;
    if (len > e->tail_max) { /* only the last tail_max bytes can stay */
        data += len - e->tail_max;
        len = e->tail_max;
    }
    while (len > 0) {
        size_t n = e->tail_max - e->tail_pos;
        if (n > len)
            n = len;
        memcpy(e->tail + e->tail_pos, data, n);
        e->tail_pos = (e->tail_pos + n) % e->tail_max;
        data += n;
        len -= n;
    }
}

void proc__excerpt_discard(proc_excerpt *e)
{
    free(e->head);
    free(e->tail);
    e->head = e->tail = NULL;
}

void proc__excerpt_finish(proc_excerpt *e, proc_result *r)
{
    uint64_t after_head = e->total - e->head_len;
    size_t in_tail =
        after_head < e->tail_max ? (size_t)after_head : e->tail_max;
    uint64_t omitted = after_head - in_tail;
    char marker[64] = "";
    if (omitted > 0)
        snprintf(marker, sizeof marker, "\n[... %llu bytes omitted ...]\n",
                 (unsigned long long)omitted);
    size_t ml = strlen(marker);
    char *s = malloc(e->head_len + ml + in_tail + 1);
    if (s != NULL) {
        size_t k = 0;
        memcpy(s, e->head, e->head_len);
        k += e->head_len;
        memcpy(s + k, marker, ml);
        k += ml;
        /* Oldest first: the ring starts at tail_pos once it has wrapped. */
        size_t start = after_head >= e->tail_max ? e->tail_pos : 0;
        for (size_t i = 0; i < in_tail; i++)
            s[k++] = e->tail[(start + i) % e->tail_max];
        s[k] = '\0';
        r->err_len = k;
    }
    r->err = s;
    r->err_total = e->total;
    r->err_truncated = omitted > 0;
    proc__excerpt_discard(e);
}
