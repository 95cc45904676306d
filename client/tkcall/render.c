/* SPDX-License-Identifier: MIT */
/* The text forms of replies (-o text and -o long): one renderer a method,
 * each the form of the command people know for it. Bytes fields (paths,
 * names, text: git's bytes) are written as they are, as git and rg write
 * them; colour is SGR, and only when asked (tkcall_text.color).
 *
 * Owns: the forms of Search and Git's methods, and the painting (SGR)
 * every form uses.
 * May call: libc's stdio on tkcall_text.out.
 * Must never: choose a form (forms.c's table does), print anything but
 * the reply it is given. */
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

typedef void (*render_fn)(const tkcall_text *t, const ProtobufCMessage *req,
                          const ProtobufCMessage *rep);

static void put(const tkcall_text *t, const void *data, size_t len)
{
    /* A failed write sets the stream's error, which the flush after the
     * reply reports (exit 2). */
    if (len > 0)
        (void)fwrite(data, 1, len, t->out);
}

void tkcall__puts_raw(const tkcall_text *t, const char *s)
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

void tkcall__paint_s(const tkcall_text *t, const char *sgr, const char *s)
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
    tkcall__puts_raw(t, ":");
    paint_u64(t, SGR_NUMBER, line);
    tkcall__puts_raw(t, ":");
    paint_u64(t, SGR_NUMBER, column);
    tkcall__puts_raw(t, ":");
}

/* ---- Search and Git/Grep: like rg --column ----------------------------- */

void tkcall__render_search(const tkcall_text *t, const ProtobufCMessage *req,
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
        tkcall__puts_raw(t, "\n");
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

void tkcall__render_grep(const tkcall_text *t, const ProtobufCMessage *req,
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
        tkcall__puts_raw(t, "\n");
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
            tkcall__puts_raw(t, "    ");
        put(t, text.data + at, end - at);
        tkcall__puts_raw(t, "\n");
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
    tkcall__puts_raw(t, " <");
    put(t, s->email.data, s->email.len);
    tkcall__puts_raw(t, ">\n");
}

static void render_commit_long(const tkcall_text *t, const Tk__V1__GitCommit *c)
{
    tkcall__paint_s(t, SGR_OID, "commit ");
    tkcall__paint_s(t, SGR_OID, c->oid);
    tkcall__puts_raw(t, "\n");
    if (c->n_parents > 1) {
        tkcall__puts_raw(t, "Merge:");
        for (size_t p = 0; p < c->n_parents; p++)
            fprintf(t->out, " %.7s", c->parents[p]);
        tkcall__puts_raw(t, "\n");
    }
    put_signature(t, "Author: ", c->author);
    if (c->author != NULL) {
        tkcall__puts_raw(t, "Date:   ");
        put_date(t, c->author->time, c->author->offset_minutes);
        tkcall__puts_raw(t, "\n");
    }
    tkcall__puts_raw(t, "\n");
    put_indented(t, c->subject);
    if (c->body.len > 0) {
        tkcall__puts_raw(t, "\n");
        put_indented(t, c->body);
    }
}

void tkcall__render_log(const tkcall_text *t, const ProtobufCMessage *req,
                        const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitLogReply *r = (const Tk__V1__GitLogReply *)rep;
    for (size_t i = 0; i < r->n_commits; i++) {
        const Tk__V1__GitCommit *c = r->commits[i];
        if (t->long_form) {
            if (i > 0)
                tkcall__puts_raw(t, "\n");
            render_commit_long(t, c);
            continue;
        }
        char abbrev[8];
        snprintf(abbrev, sizeof abbrev, "%.7s", c->oid);
        tkcall__paint_s(t, SGR_OID, abbrev);
        tkcall__puts_raw(t, " ");
        put(t, c->subject.data, c->subject.len);
        tkcall__puts_raw(t, "\n");
    }
}

/* ---- Git/Status: git status --short --branch ---------------------------- */

static void render_branch(const tkcall_text *t,
                          const Tk__V1__GitStatusBranch *b)
{
    tkcall__puts_raw(t, "## ");
    if (b->detached) {
        tkcall__paint_s(t, SGR_OLD, "HEAD (no branch)");
    } else {
        if (b->oid == NULL || b->oid[0] == '\0')
            tkcall__puts_raw(t, "No commits yet on ");
        paint_bin(t, SGR_NEW, b->head);
    }
    if (b->upstream.len > 0) {
        tkcall__puts_raw(t, "...");
        paint_bin(t, SGR_OLD, b->upstream);
    }
    if (b->upstream.len > 0 && !b->has_ahead_behind)
        tkcall__puts_raw(t, " [gone]");
    else if (b->ahead != 0 && b->behind != 0)
        fprintf(t->out, " [ahead %d, behind %d]", (int)b->ahead,
                (int)b->behind);
    else if (b->ahead != 0)
        fprintf(t->out, " [ahead %d]", (int)b->ahead);
    else if (b->behind != 0)
        fprintf(t->out, " [behind %d]", (int)b->behind);
    tkcall__puts_raw(t, "\n");
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
        tkcall__paint_s(t, SGR_OLD, "??");
        break;
    case TK__V1__GIT_STATUS_ENTRY__KIND__IGNORED:
        tkcall__paint_s(t, SGR_OLD, "!!");
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
    tkcall__puts_raw(t, " ");
    if (e->kind == TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED) {
        put(t, e->orig_path.data, e->orig_path.len);
        tkcall__puts_raw(t, " -> ");
    }
    put(t, e->path.data, e->path.len);
    tkcall__puts_raw(t, "\n");
}

void tkcall__render_status(const tkcall_text *t, const ProtobufCMessage *req,
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

void tkcall__render_diff(const tkcall_text *t, const ProtobufCMessage *req,
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
            tkcall__puts_raw(t, "\n");
        at = end + 1;
    }
}

/* ---- Git: the writes and RevParse, an object id as git prints it -------- */

static void render_oid(const tkcall_text *t, const char *oid)
{
    if (oid != NULL && oid[0] != '\0')
        fprintf(t->out, "%s\n", oid);
}

void tkcall__render_revparse(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitRevParseReply *)rep)->oid);
}

void tkcall__render_commit(const tkcall_text *t, const ProtobufCMessage *req,
                           const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitCommitReply *)rep)->oid);
}

void tkcall__render_checkout(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep)
{
    (void)req;
    render_oid(t, ((const Tk__V1__GitCheckoutReply *)rep)->oid);
}

/* "PATH OID", a line of git worktree list. */
void tkcall__render_worktree(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitWorktreeAddReply *r =
        (const Tk__V1__GitWorktreeAddReply *)rep;
    fprintf(t->out, "%s %s\n", r->path != NULL ? r->path : "",
            r->oid != NULL ? r->oid : "");
}

/* The value and a newline, as git config --get prints it. */
void tkcall__render_config_get(const tkcall_text *t,
                               const ProtobufCMessage *req,
                               const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__GitConfigGetReply *r = (const Tk__V1__GitConfigGetReply *)rep;
    put(t, r->value.data, r->value.len);
    put(t, "\n", 1);
}

/* git config prints nothing when it sets a key, nor git worktree remove
 * when it removes one. */
void tkcall__render_nothing(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    (void)t, (void)req, (void)rep;
}
