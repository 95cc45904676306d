/* SPDX-License-Identifier: MIT */
/* The text forms of replies (-o text and -o long): one renderer a method,
 * each the form of the command people know for it. Bytes fields (paths,
 * names, text: git's bytes) are written as they are, as git and rg write
 * them; colour is SGR, and only when asked (tkcall_text.color). */
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tk/v1/control.pb-c.h"
#include "tk/v1/git.pb-c.h"
#include "tk/v1/orders.pb-c.h"
#include "tk/v1/search.pb-c.h"

#include "tkcall_int.h"

/* SGR colours, as rg and git use them by default. */
#define SGR_PATH "35"    /* magenta: rg's paths */
#define SGR_NUMBER "32"  /* green: rg's line and column numbers */
#define SGR_MATCH "1;31" /* bold red: rg's matches */
#define SGR_OID "33"     /* yellow: git log's commit ids */
#define SGR_META "1"     /* bold: a diff's headers */
#define SGR_FRAG "36"    /* cyan: a diff's @@ lines */
#define SGR_NEW "32"     /* green: added lines, staged changes, a branch */
#define SGR_OLD "31"     /* red: deleted lines, unstaged, an upstream */

typedef void (*render_fn)(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep);

static void put(const tkcall_text *t, const void *data, size_t len)
{
    /* A failed write sets the stream's error, which the flush after the
     * reply reports (exit 2). */
    if (len > 0)
        (void)fwrite(data, 1, len, t->out);
}

static void puts_raw(const tkcall_text *t, const char *s)
{
    put(t, s, strlen(s));
}

/* data in colour sgr when colour is on. */
static void paint(const tkcall_text *t, const char *sgr, const void *data,
                  size_t len)
{
    if (!t->color || len == 0 || sgr[0] == '\0') {
        put(t, data, len);
        return;
    }
    fprintf(t->out, "\033[%sm", sgr);
    put(t, data, len);
    fputs("\033[0m", t->out);
}

static void paint_s(const tkcall_text *t, const char *sgr, const char *s)
{
    paint(t, sgr, s, strlen(s));
}

static void paint_bin(const tkcall_text *t, const char *sgr,
                      ProtobufCBinaryData b)
{
    paint(t, sgr, b.data, b.len);
}

static void paint_u64(const tkcall_text *t, const char *sgr, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    paint(t, sgr, num, (size_t)n);
}

/* "path:line:column:" as rg --column writes it. */
static void put_location(const tkcall_text *t, ProtobufCBinaryData path,
                         uint64_t line, uint64_t column)
{
    paint_bin(t, SGR_PATH, path);
    puts_raw(t, ":");
    paint_u64(t, SGR_NUMBER, line);
    puts_raw(t, ":");
    paint_u64(t, SGR_NUMBER, column);
    puts_raw(t, ":");
}

/* ---- Search and Git/Grep: like rg --column ----------------------------- */

static void render_search(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__SearchReply *r = (const Tk__V1__SearchReply *)rep;
    for (size_t i = 0; i < r->n_matches; i++) {
        const Tk__V1__SearchMatch *m = r->matches[i];
        put_location(t, m->path, m->line, m->column);
        size_t at = 0;
        for (size_t k = 0; k < m->n_submatches; k++) {
            size_t s = m->submatches[k]->start, e = m->submatches[k]->end;
            if (s < at || e < s || e > m->text.len)
                continue; /* not as the reply promises: left plain */
            put(t, m->text.data + at, s - at);
            paint(t, SGR_MATCH, m->text.data + s, e - s);
            at = e;
        }
        put(t, m->text.data + at, m->text.len - at);
        puts_raw(t, "\n");
    }
}

/* Where the next occurrence of pat (n bytes) in text from "from" begins,
 * ASCII case folded with fold (git grep -i runs in the C locale); len
 * when there is none. */
static size_t find(const uint8_t *text, size_t len, size_t from,
                   const char *pat, size_t n, bool fold)
{
    for (size_t i = from; n > 0 && i + n <= len; i++)
        if (fold ? strncasecmp((const char *)text + i, pat, n) == 0
                 : memcmp(text + i, pat, n) == 0)
            return i;
    return len;
}

static void render_grep(const tkcall_text *t, const ProtobufCMessage *req,
                        const ProtobufCMessage *rep)
{
    const Tk__V1__GitGrepRequest *q = (const Tk__V1__GitGrepRequest *)req;
    const Tk__V1__GitGrepReply *r = (const Tk__V1__GitGrepReply *)rep;
    size_t n = q->pattern != NULL ? strlen(q->pattern) : 0;
    for (size_t i = 0; i < r->n_matches; i++) {
        const Tk__V1__GitGrepMatch *m = r->matches[i];
        const uint8_t *s = m->text.data;
        size_t len = m->text.len, at = 0;
        put_location(t, m->path, m->line, m->column);
        /* The reply gives the first occurrence's column only: the
         * pattern, found again, marks each. */
        for (size_t k = t->color
                            ? find(s, len, 0, q->pattern, n, q->ignore_case)
                            : len;
             k < len; k = find(s, len, at, q->pattern, n, q->ignore_case)) {
            put(t, s + at, k - at);
            paint(t, SGR_MATCH, s + k, n);
            at = k + n;
        }
        put(t, s + at, len - at);
        puts_raw(t, "\n");
    }
}

/* ---- Git/Log: git log --oneline, or git log's default (-o long) --------- */

/* git's default date: "Wed Dec 2 04:19:08 2026 +0100", in the signer's
 * own offset. */
static void put_date(const tkcall_text *t, int64_t when, int32_t offset_min)
{
    time_t local = (time_t)(when + (int64_t)offset_min * 60);
    struct tm tm;
    char buf[64] = "";
    if (gmtime_r(&local, &tm) == NULL ||
        strftime(buf, sizeof buf, "%a %b %-d %H:%M:%S %Y", &tm) == 0)
        buf[0] = '\0'; /* a year past 64 bits of text: the offset alone */
    int32_t off = offset_min < 0 ? -offset_min : offset_min;
    fprintf(t->out, "%s %c%02d%02d", buf, offset_min < 0 ? '-' : '+',
            (int)(off / 60), (int)(off % 60));
}

/* Each line of text indented four spaces, as git log indents a message. */
static void put_indented(const tkcall_text *t, ProtobufCBinaryData text)
{
    size_t len = text.len;
    while (len > 0 && text.data[len - 1] == '\n')
        len--;
    for (size_t at = 0; at < len;) {
        const uint8_t *nl = memchr(text.data + at, '\n', len - at);
        size_t end = nl != NULL ? (size_t)(nl - text.data) : len;
        if (end > at)
            puts_raw(t, "    ");
        put(t, text.data + at, end - at);
        puts_raw(t, "\n");
        at = end + 1;
    }
}

static void put_signature(const tkcall_text *t, const char *label,
                          const Tk__V1__GitSignature *s)
{
    if (s == NULL)
        return;
    fputs(label, t->out);
    put(t, s->name.data, s->name.len);
    puts_raw(t, " <");
    put(t, s->email.data, s->email.len);
    puts_raw(t, ">\n");
}

static void render_commit_long(const tkcall_text *t, const Tk__V1__GitCommit *c)
{
    paint_s(t, SGR_OID, "commit ");
    paint_s(t, SGR_OID, c->oid);
    puts_raw(t, "\n");
    if (c->n_parents > 1) {
        puts_raw(t, "Merge:");
        for (size_t p = 0; p < c->n_parents; p++)
            fprintf(t->out, " %.7s", c->parents[p]);
        puts_raw(t, "\n");
    }
    put_signature(t, "Author: ", c->author);
    if (c->author != NULL) {
        puts_raw(t, "Date:   ");
        put_date(t, c->author->time, c->author->offset_minutes);
        puts_raw(t, "\n");
    }
    puts_raw(t, "\n");
    put_indented(t, c->subject);
    if (c->body.len > 0) {
        puts_raw(t, "\n");
        put_indented(t, c->body);
    }
}

static void render_log(const tkcall_text *t, const ProtobufCMessage *req,
                       const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitLogReply *r = (const Tk__V1__GitLogReply *)rep;
    for (size_t i = 0; i < r->n_commits; i++) {
        const Tk__V1__GitCommit *c = r->commits[i];
        if (t->long_form) {
            if (i > 0)
                puts_raw(t, "\n");
            render_commit_long(t, c);
            continue;
        }
        char abbrev[8];
        snprintf(abbrev, sizeof abbrev, "%.7s", c->oid);
        paint_s(t, SGR_OID, abbrev);
        puts_raw(t, " ");
        put(t, c->subject.data, c->subject.len);
        puts_raw(t, "\n");
    }
}

/* ---- Git/Status: git status --short --branch ---------------------------- */

static void render_branch(const tkcall_text *t,
                          const Tk__V1__GitStatusBranch *b)
{
    puts_raw(t, "## ");
    if (b->detached) {
        paint_s(t, SGR_OLD, "HEAD (no branch)");
    } else {
        if (b->oid == NULL || b->oid[0] == '\0')
            puts_raw(t, "No commits yet on ");
        paint_bin(t, SGR_NEW, b->head);
    }
    if (b->upstream.len > 0) {
        puts_raw(t, "...");
        paint_bin(t, SGR_OLD, b->upstream);
    }
    if (b->upstream.len > 0 && !b->has_ahead_behind)
        puts_raw(t, " [gone]");
    else if (b->ahead != 0 && b->behind != 0)
        fprintf(t->out, " [ahead %d, behind %d]", (int)b->ahead,
                (int)b->behind);
    else if (b->ahead != 0)
        fprintf(t->out, " [ahead %d]", (int)b->ahead);
    else if (b->behind != 0)
        fprintf(t->out, " [behind %d]", (int)b->behind);
    puts_raw(t, "\n");
}

/* X or Y of porcelain v1: v2's '.' (unmodified) is a space. */
static void put_xy(const tkcall_text *t, const char *s, const char *sgr)
{
    char c = ' ';
    if (s != NULL && s[0] != '\0' && s[0] != '.')
        c = s[0];
    paint(t, c != ' ' ? sgr : "", &c, 1);
}

static void render_entry(const tkcall_text *t, const Tk__V1__GitStatusEntry *e)
{
    switch (e->kind) {
    case TK__V1__GIT_STATUS_ENTRY__KIND__UNTRACKED:
        paint_s(t, SGR_OLD, "??");
        break;
    case TK__V1__GIT_STATUS_ENTRY__KIND__IGNORED:
        paint_s(t, SGR_OLD, "!!");
        break;
    case TK__V1__GIT_STATUS_ENTRY__KIND__UNMERGED:
        put_xy(t, e->index_status, SGR_OLD);
        put_xy(t, e->worktree_status, SGR_OLD);
        break;
    default:
        put_xy(t, e->index_status, SGR_NEW);
        put_xy(t, e->worktree_status, SGR_OLD);
        break;
    }
    puts_raw(t, " ");
    if (e->kind == TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED) {
        put(t, e->orig_path.data, e->orig_path.len);
        puts_raw(t, " -> ");
    }
    put(t, e->path.data, e->path.len);
    puts_raw(t, "\n");
}

static void render_status(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitStatusReply *r = (const Tk__V1__GitStatusReply *)rep;
    if (r->branch != NULL)
        render_branch(t, r->branch);
    for (size_t i = 0; i < r->n_entries; i++)
        render_entry(t, r->entries[i]);
}

/* ---- Git/Diff: the patch ------------------------------------------------ */

/* One line of a patch (without its '\n'), coloured as git diff does. */
static void put_patch_line(const tkcall_text *t, const uint8_t *s, size_t n,
                           bool *header)
{
    if (n >= 11 && memcmp(s, "diff --git ", 11) == 0)
        *header = true;
    else if (n >= 2 && memcmp(s, "@@", 2) == 0)
        *header = false;
    const char *sgr = *header                             ? SGR_META
                      : n >= 2 && memcmp(s, "@@", 2) == 0 ? SGR_FRAG
                      : n >= 1 && s[0] == '+'             ? SGR_NEW
                      : n >= 1 && s[0] == '-'             ? SGR_OLD
                                                          : NULL;
    if (sgr != NULL)
        paint(t, sgr, s, n);
    else
        put(t, s, n);
}

static void render_diff(const tkcall_text *t, const ProtobufCMessage *req,
                        const ProtobufCMessage *rep)
{
    (void)req;
    ProtobufCBinaryData p = ((const Tk__V1__GitDiffReply *)rep)->patch;
    if (!t->color) {
        put(t, p.data, p.len);
        return;
    }
    bool header = false;
    for (size_t at = 0; at < p.len;) {
        const uint8_t *nl = memchr(p.data + at, '\n', p.len - at);
        size_t end = nl != NULL ? (size_t)(nl - p.data) : p.len;
        put_patch_line(t, p.data + at, end - at, &header);
        if (nl != NULL)
            puts_raw(t, "\n");
        at = end + 1;
    }
}

/* ---- Git: the writes and RevParse, an object id as git prints it -------- */

static void render_oid(const tkcall_text *t, const char *oid)
{
    if (oid != NULL && oid[0] != '\0')
        fprintf(t->out, "%s\n", oid);
}

static void render_revparse(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitRevParseReply *)rep)->oid);
}

static void render_commit(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitCommitReply *)rep)->oid);
}

static void render_checkout(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitCheckoutReply *)rep)->oid);
}

/* "PATH OID", a line of git worktree list. */
static void render_worktree(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitWorktreeAddReply *r =
        (const Tk__V1__GitWorktreeAddReply *)rep;
    fprintf(t->out, "%s %s\n", r->path != NULL ? r->path : "",
            r->oid != NULL ? r->oid : "");
}

/* git config prints nothing when it sets a key, nor git worktree remove
 * when it removes one. */
static void render_nothing(const tkcall_text *t, const ProtobufCMessage *req,
                           const ProtobufCMessage *rep)
{
    (void)t, (void)req, (void)rep;
}

/* ---- Orders: a line an order, "order ID STATE ..." ---------------------- */

static void render_create_order(const tkcall_text *t,
                                const ProtobufCMessage *req,
                                const ProtobufCMessage *rep)
{
    (void)req;
    fprintf(t->out, "order %lld OPEN\n",
            (long long)((const Tk__V1__CreateOrderReply *)rep)->id);
}

static void render_add_item(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    const Tk__V1__AddItemRequest *q = (const Tk__V1__AddItemRequest *)req;
    fprintf(t->out, "order %lld item %lld %s\n", (long long)q->order_id,
            (long long)((const Tk__V1__AddItemReply *)rep)->item_id,
            q->sku != NULL ? q->sku : "");
}

static void render_close_order(const tkcall_text *t,
                               const ProtobufCMessage *req,
                               const ProtobufCMessage *rep)
{
    fprintf(t->out, "order %lld CLOSED%s\n",
            (long long)((const Tk__V1__CloseOrderRequest *)req)->order_id,
            ((const Tk__V1__CloseOrderReply *)rep)->outcome ==
                    TK__V1__CLOSE_ORDER_REPLY__OUTCOME__ALREADY_CLOSED
                ? " (already)"
                : "");
}

static void render_reopen_order(const tkcall_text *t,
                                const ProtobufCMessage *req,
                                const ProtobufCMessage *rep)
{
    fprintf(t->out, "order %lld OPEN%s\n",
            (long long)((const Tk__V1__ReopenOrderRequest *)req)->order_id,
            ((const Tk__V1__ReopenOrderReply *)rep)->outcome ==
                    TK__V1__REOPEN_ORDER_REPLY__OUTCOME__ALREADY_OPEN
                ? " (already)"
                : "");
}

static void render_get_order(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep)
{
    const Tk__V1__GetOrderReply *r = (const Tk__V1__GetOrderReply *)rep;
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__get_order_reply__status__descriptor, (int)r->status);
    fprintf(t->out, "order %lld %s %llu items",
            (long long)((const Tk__V1__GetOrderRequest *)req)->order_id,
            v != NULL ? v->name : "?", (unsigned long long)r->item_count);
    if (r->closed_at != NULL && r->closed_at[0] != '\0')
        fprintf(t->out, " closed %s", r->closed_at);
    puts_raw(t, "\n");
}

/* A line a node: its id (the answering one marked *), address, "draining"
 * or "live", its heartbeat's age, and its roots. */
static void render_list_nodes(const tkcall_text *t, const ProtobufCMessage *req,
                              const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__ListNodesReply *r = (const Tk__V1__ListNodesReply *)rep;
    if (r->n_nodes == 0)
        puts_raw(t, "no fleet: this tkd is no member of one\n");
    for (size_t i = 0; i < r->n_nodes; i++) {
        const Tk__V1__NodeInfo *n = r->nodes[i];
        paint_s(t, SGR_NEW, n->node_id);
        fprintf(t->out, "%s %s %s %.1fs",
                strcmp(n->node_id, r->self_id) == 0 ? "*" : "", n->address,
                n->draining ? "draining" : "live",
                (double)n->heartbeat_age_ms / 1000.0);
        for (size_t k = 0; k < n->n_roots; k++)
            fprintf(t->out, " %s", n->roots[k]);
        puts_raw(t, "\n");
    }
}

/* ---- Stats -------------------------------------------------------------- */

/* A duration in seconds as people read it: "850µs", "12.5ms", "3.2s". */
static void put_duration(const tkcall_text *t, double s)
{
    if (isinf(s))
        fputs("+Inf", t->out);
    else if (s < 0.001)
        fprintf(t->out, "%.0fµs", s * 1e6);
    else if (s < 1)
        fprintf(t->out, "%.3gms", s * 1e3);
    else
        fprintf(t->out, "%.3gs", s);
}

/* The upper bound of the bucket the q-th quantile falls in. */
static double quantile_bound(const Tk__V1__Histogram *h, double q)
{
    double want = q * (double)h->sample_count;
    for (size_t i = 0; i < h->n_buckets; i++)
        if ((double)h->buckets[i]->cumulative_count >= want)
            return h->buckets[i]->upper_bound;
    return INFINITY;
}

/* Where a metric's value starts. */
#define STATS_COLUMN 48

/* Pads from n characters written to the value's column. */
static void pad_to_value(const tkcall_text *t, int n)
{
    fprintf(t->out, "%*s", n < STATS_COLUMN ? STATS_COLUMN - n : 2, "");
}

/* A metric's label values, two spaces apart, the method's first (people
 * look for a method, then its code); the characters written. */
static int put_labels(const tkcall_text *t, const Tk__V1__Metric *m)
{
    int n = fprintf(t->out, "  ");
    bool first = true;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < m->n_labels; i++) {
            bool method = strcmp(m->labels[i]->name, "method") == 0;
            if (method != (pass == 0))
                continue;
            n +=
                fprintf(t->out, "%s%s", first ? "" : "  ", m->labels[i]->value);
            first = false;
        }
    }
    return n;
}

/* The value: a number, or a histogram's count, mean, and the bucket
 * bounds that hold p50 and p99. */
static void put_metric_value(const tkcall_text *t, const Tk__V1__Metric *m)
{
    const Tk__V1__Histogram *h = m->histogram;
    if (h == NULL) {
        fprintf(t->out, "%.15g\n", m->value);
        return;
    }
    fprintf(t->out, "%llu", (unsigned long long)h->sample_count);
    if (h->sample_count > 0) {
        fputs("  mean ", t->out);
        put_duration(t, h->sample_sum / (double)h->sample_count);
        fputs("  p50 <= ", t->out);
        put_duration(t, quantile_bound(h, 0.5));
        fputs("  p99 <= ", t->out);
        put_duration(t, quantile_bound(h, 0.99));
    }
    puts_raw(t, "\n");
}

/* A metric family: its name (bold) and value on one line when it has one
 * metric without labels; else its name, then a line a metric: its label
 * values and its value. tkcall -o json has every bucket and the help. */
static void render_stats(const tkcall_text *t, const ProtobufCMessage *req,
                         const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__StatsReply *r = (const Tk__V1__StatsReply *)rep;
    fprintf(t->out, "tkd %s, up %.1fs\n", r->server_version,
            (double)r->uptime_ms / 1000.0);
    for (size_t i = 0; i < r->n_families; i++) {
        const Tk__V1__MetricFamily *f = r->families[i];
        paint_s(t, SGR_META, f->name);
        if (f->n_metrics == 1 && f->metrics[0]->n_labels == 0) {
            pad_to_value(t, (int)strlen(f->name));
            put_metric_value(t, f->metrics[0]);
            continue;
        }
        puts_raw(t, f->n_metrics == 0 ? "  (none yet)\n" : "\n");
        for (size_t j = 0; j < f->n_metrics; j++) {
            pad_to_value(t, put_labels(t, f->metrics[j]));
            put_metric_value(t, f->metrics[j]);
        }
    }
}

/* ---- the table ---------------------------------------------------------- */

/* Each method with a text form; its reply's type, checked before the cast
 * (a tkd of another version could answer with another); and the request
 * field that bounds its results, for the partial notice. */
static const struct {
    const char *method;
    const ProtobufCMessageDescriptor *reply;
    render_fn render;
    const char *limit;
} renderers[] = {
    { "tk.v1.Search/Search", &tk__v1__search_reply__descriptor, render_search,
      "limit" },
    { "tk.v1.Git/Grep", &tk__v1__git_grep_reply__descriptor, render_grep,
      "maxMatches" },
    { "tk.v1.Git/Log", &tk__v1__git_log_reply__descriptor, render_log,
      "maxCount" },
    { "tk.v1.Git/Status", &tk__v1__git_status_reply__descriptor, render_status,
      NULL },
    { "tk.v1.Git/Diff", &tk__v1__git_diff_reply__descriptor, render_diff,
      NULL },
    { "tk.v1.Git/RevParse", &tk__v1__git_rev_parse_reply__descriptor,
      render_revparse, NULL },
    { "tk.v1.Git/Commit", &tk__v1__git_commit_reply__descriptor, render_commit,
      NULL },
    { "tk.v1.Git/Checkout", &tk__v1__git_checkout_reply__descriptor,
      render_checkout, NULL },
    { "tk.v1.Git/WorktreeAdd", &tk__v1__git_worktree_add_reply__descriptor,
      render_worktree, NULL },
    { "tk.v1.Git/WorktreeRemove",
      &tk__v1__git_worktree_remove_reply__descriptor, render_nothing, NULL },
    { "tk.v1.Git/ConfigSet", &tk__v1__git_config_set_reply__descriptor,
      render_nothing, NULL },
    { "tk.v1.Orders/CreateOrder", &tk__v1__create_order_reply__descriptor,
      render_create_order, NULL },
    { "tk.v1.Orders/AddItem", &tk__v1__add_item_reply__descriptor,
      render_add_item, NULL },
    { "tk.v1.Orders/CloseOrder", &tk__v1__close_order_reply__descriptor,
      render_close_order, NULL },
    { "tk.v1.Orders/ReopenOrder", &tk__v1__reopen_order_reply__descriptor,
      render_reopen_order, NULL },
    { "tk.v1.Orders/GetOrder", &tk__v1__get_order_reply__descriptor,
      render_get_order, NULL },
    { "tk.v1.Control/ListNodes", &tk__v1__list_nodes_reply__descriptor,
      render_list_nodes, NULL },
    { "tk.v1.Control/Stats", &tk__v1__stats_reply__descriptor, render_stats,
      NULL },
};

static int find_method(const char *method)
{
    for (size_t i = 0; i < sizeof renderers / sizeof renderers[0]; i++)
        if (strcmp(renderers[i].method, method) == 0)
            return (int)i;
    return -1;
}

bool tkcall_text_print(const tkcall_text *t, const char *method,
                       const ProtobufCMessage *request,
                       const ProtobufCMessage *reply)
{
    int i = find_method(method);
    if (i < 0 || reply->descriptor != renderers[i].reply)
        return false;
    renderers[i].render(t, request, reply);
    return true;
}

const char *tkcall_limit_field(const char *method)
{
    int i = find_method(method);
    return i >= 0 ? renderers[i].limit : NULL;
}
