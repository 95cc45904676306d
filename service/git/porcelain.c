/* SPDX-License-Identifier: MIT */
/* Parsers of git's -z output: `git status --porcelain=v2 -z --branch` and
 * the numstat block of `git diff --numstat -z -p`. Paths are taken as the
 * bytes git printed (after NUL-splitting nothing is unquoted). Each keeps
 * at most the call's list ceiling of entries (the method's option in
 * tk/v1/git.proto) and says partial beyond it: git's output is read up to
 * proc's 16 MiB, and an entry of a few bytes there ("? a") is a message of
 * a few hundred here, so the output's cap alone would let one Status hold
 * some 40 times its size. */
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

/* The NUL-terminated record at *pos of [out, out+len), or NULL at the end;
 * an unterminated last record counts. */
static const char *record(const char *out, size_t len, size_t *pos,
                          size_t *rlen)
{
    if (*pos >= len)
        return NULL;
    const char *r = out + *pos;
    const char *nul = memchr(r, '\0', len - *pos);
    *rlen = nul != NULL ? (size_t)(nul - r) : len - *pos;
    *pos += *rlen + 1;
    return r;
}

/* Splits the first n space-separated fields of r off; returns the rest
 * (the path), or NULL when r has fewer fields. */
static const char *fields(const char *r, size_t rlen, char **f, size_t n,
                          rpc_call *call, size_t *rest_len)
{
    const char *p = r, *end = r + rlen;
    for (size_t i = 0; i < n; i++) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (sp == NULL)
            return NULL;
        f[i] = rpc_call_strndup(call, p, (size_t)(sp - p));
        p = sp + 1;
    }
    *rest_len = (size_t)(end - p);
    return p;
}

/* A count of "# branch.ab +A -B", sign dropped and held to int32: git's
 * counts fit, and other text must not overflow the negation or the
 * conversion. */
static int32_t ab_count(long v)
{
    unsigned long m = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    return m > INT32_MAX ? INT32_MAX : (int32_t)m;
}

static void branch_header(rpc_call *call, const char *r, size_t rlen,
                          Tk__V1__GitStatusBranch *b)
{
    static const char oid[] = "# branch.oid ", head[] = "# branch.head ",
                      up[] = "# branch.upstream ", ab[] = "# branch.ab ";
    if (rlen > sizeof oid - 1 && strncmp(r, oid, sizeof oid - 1) == 0) {
        const char *v = r + sizeof oid - 1;
        size_t n = rlen - (sizeof oid - 1);
        if (strncmp(v, "(initial)", n) != 0)
            b->oid = rpc_call_strndup(call, v, n);
    } else if (rlen > sizeof head - 1 &&
               strncmp(r, head, sizeof head - 1) == 0) {
        const char *v = r + sizeof head - 1;
        size_t n = rlen - (sizeof head - 1);
        if (n == 10 && strncmp(v, "(detached)", n) == 0)
            b->detached = true;
        else
            b->head = rpc_call_bytes(call, v, n);
    } else if (rlen > sizeof up - 1 && strncmp(r, up, sizeof up - 1) == 0) {
        b->upstream =
            rpc_call_bytes(call, r + sizeof up - 1, rlen - (sizeof up - 1));
    } else if (rlen > sizeof ab - 1 && strncmp(r, ab, sizeof ab - 1) == 0) {
        char *v =
            rpc_call_strndup(call, r + sizeof ab - 1, rlen - (sizeof ab - 1));
        char *end;
        b->ahead = ab_count(strtol(v, &end, 10)); /* "+A -B" */
        b->behind = ab_count(strtol(end, NULL, 10));
        b->has_ahead_behind = true;
    }
}

/* What each kind of entry holds before its path (porcelain v2). */
typedef struct entry_shape {
    char tag;
    Tk__V1__GitStatusEntry__Kind kind;
    size_t n_fields; /* space-separated fields, the tag included */
    size_t n_modes;
    size_t n_oids;
} entry_shape;

static const entry_shape shapes[] = {
    { '1', TK__V1__GIT_STATUS_ENTRY__KIND__CHANGED, 8, 3, 2 },
    { '2', TK__V1__GIT_STATUS_ENTRY__KIND__RENAMED, 9, 3, 2 },
    { 'u', TK__V1__GIT_STATUS_ENTRY__KIND__UNMERGED, 10, 4, 3 },
    { '?', TK__V1__GIT_STATUS_ENTRY__KIND__UNTRACKED, 1, 0, 0 },
    { '!', TK__V1__GIT_STATUS_ENTRY__KIND__IGNORED, 1, 0, 0 },
};

static const entry_shape *shape_of(char tag)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (shapes[i].tag == tag)
            return &shapes[i];
    return NULL;
}

/* "1 XY sub mH mI mW hH hI path": fields in order after the tag. */
static int fill_entry(rpc_call *call, const entry_shape *s, char **f,
                      Tk__V1__GitStatusEntry *e)
{
    e->kind = s->kind;
    if (s->n_fields == 1)
        return 0;
    const char *xy = f[1];
    if (xy == NULL || strlen(xy) != 2)
        return -1;
    e->index_status = rpc_call_strndup(call, xy, 1);
    e->worktree_status = rpc_call_strndup(call, xy + 1, 1);
    e->submodule = f[2];
    e->modes = rpc_call_alloc(call, s->n_modes * sizeof *e->modes);
    for (size_t i = 0; i < s->n_modes; i++)
        e->modes[e->n_modes++] = f[3 + i];
    e->oids = rpc_call_alloc(call, s->n_oids * sizeof *e->oids);
    for (size_t i = 0; i < s->n_oids; i++)
        e->oids[e->n_oids++] = f[3 + s->n_modes + i];
    if (s->tag == '2')
        e->score = f[8];
    return 0;
}

int tkgit__parse_status(rpc_call *call, const char *out, size_t len,
                        Tk__V1__GitStatusReply *reply)
{
    Tk__V1__GitStatusBranch *b = rpc_call_alloc(call, sizeof *b);
    tk__v1__git_status_branch__init(b);
    reply->branch = b;
    uint32_t most = rpc_list_items(rpc_call_list(call), 0);
    size_t pos = 0, rlen, cap = 0;
    const char *r;
    while ((r = record(out, len, &pos, &rlen)) != NULL) {
        if (rlen > 0 && r[0] == '#') {
            branch_header(call, r, rlen, b);
            continue;
        }
        if (reply->n_entries == most) { /* the headers come first */
            rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
            break;
        }
        const entry_shape *s = rlen > 2 ? shape_of(r[0]) : NULL;
        char *f[10] = { 0 };
        size_t plen;
        const char *path =
            s != NULL ? fields(r, rlen, f, s->n_fields, call, &plen) : NULL;
        if (path == NULL)
            return -1;
        Tk__V1__GitStatusEntry *e = rpc_call_alloc(call, sizeof *e);
        tk__v1__git_status_entry__init(e);
        if (fill_entry(call, s, f, e) != 0)
            return -1;
        e->path = rpc_call_bytes(call, path, plen);
        if (s->tag == '2') { /* the original path is the next record */
            const char *orig = record(out, len, &pos, &rlen);
            if (orig == NULL)
                return -1;
            e->orig_path = rpc_call_bytes(call, orig, rlen);
        }
        reply->entries = tkgit__grow(call, reply->entries, reply->n_entries,
                                     &cap, sizeof(Tk__V1__GitStatusEntry *));
        reply->entries[reply->n_entries++] = e;
    }
    return 0;
}

/* "added\tdeleted\tpath" or, for a rename, "added\tdeleted\t" followed by
 * the records "old" and "new"; "-\t-\t" for binary files. */
static int numstat_entry(rpc_call *call, const char *r, size_t rlen,
                         const char *out, size_t len, size_t *pos,
                         Tk__V1__GitFileStat *fs)
{
    char *s = rpc_call_strndup(call, r, rlen);
    char *tab1 = strchr(s, '\t');
    char *tab2 = tab1 != NULL ? strchr(tab1 + 1, '\t') : NULL;
    if (tab2 == NULL)
        return -1;
    if (s[0] == '-') {
        fs->binary = true;
    } else {
        fs->added = strtoull(s, NULL, 10);
        fs->deleted = strtoull(tab1 + 1, NULL, 10);
    }
    size_t plen = rlen - (size_t)(tab2 + 1 - s);
    if (plen > 0) {
        fs->path = rpc_call_bytes(call, r + (tab2 + 1 - s), plen);
        return 0;
    }
    size_t olen, nlen;
    const char *old = record(out, len, pos, &olen);
    const char *new = old != NULL ? record(out, len, pos, &nlen) : NULL;
    if (new == NULL)
        return -1;
    fs->old_path = rpc_call_bytes(call, old, olen);
    fs->path = rpc_call_bytes(call, new, nlen);
    return 0;
}

/* Passes over an entry beyond the ceiling: its record, and the two of a
 * rename's paths. 0, or -1 on output that is no entry. */
static int numstat_skip(const char *r, size_t rlen, const char *out, size_t len,
                        size_t *pos)
{
    const char *tab1 = memchr(r, '\t', rlen);
    const char *tab2 =
        tab1 != NULL ? memchr(tab1 + 1, '\t', (size_t)(r + rlen - tab1 - 1))
                     : NULL;
    if (tab2 == NULL)
        return -1;
    size_t olen, nlen;
    if (tab2 + 1 < r + rlen)
        return 0;
    return record(out, len, pos, &olen) != NULL &&
                   record(out, len, pos, &nlen) != NULL
               ? 0
               : -1;
}

long tkgit__parse_numstat(rpc_call *call, const char *out, size_t len,
                          Tk__V1__GitDiffReply *reply)
{
    uint32_t most = rpc_list_items(rpc_call_list(call), 0);
    size_t pos = 0, rlen, cap = 0;
    const char *r;
    /* The block ends with an empty record; then comes the patch. */
    while ((r = record(out, len, &pos, &rlen)) != NULL && rlen > 0) {
        if (reply->n_files == most) {
            if (numstat_skip(r, rlen, out, len, &pos) != 0)
                return -1;
            rpc_call_set_partial(call, RPC_CAUSE_LIMIT);
            continue;
        }
        Tk__V1__GitFileStat *fs = rpc_call_alloc(call, sizeof *fs);
        tk__v1__git_file_stat__init(fs);
        if (numstat_entry(call, r, rlen, out, len, &pos, fs) != 0)
            return -1;
        reply->files = tkgit__grow(call, reply->files, reply->n_files, &cap,
                                   sizeof(Tk__V1__GitFileStat *));
        reply->files[reply->n_files++] = fs;
    }
    return pos > len ? (long)len : (long)pos;
}

int tkgit__test_parse_status(rpc_call *call, const char *out, size_t len,
                             Tk__V1__GitStatusReply *reply)
{
    return tkgit__parse_status(call, out, len, reply);
}

long tkgit__test_parse_numstat(rpc_call *call, const char *out, size_t len,
                               Tk__V1__GitDiffReply *reply)
{
    return tkgit__parse_numstat(call, out, len, reply);
}
