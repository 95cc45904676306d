/* SPDX-License-Identifier: MIT */
/* Log, in process: libgit2 reads the objects and this file walks them the
 * way `git log` does without ordering options — newest committer date
 * first from a queue of the commits seen so far, ties in the order they
 * were found — so that the answers are git's (the differential test
 * compares them). With paths, git's default history simplification: a
 * commit that is TREESAME to a parent for those paths is not shown, and a
 * merge TREESAME to one of its parents is followed through that parent
 * alone. The call's cancel and deadline are checked at every commit.
 *
 * What one Log may hold (DESIGN.md, "Bounds"): the reply, at most the
 * method's list ceiling of commits and bytes (tk/v1/git.proto), and the
 * walk's bookkeeping, for at most LOG_WALK_MAX commits.
 *
 * The walk's set of ids and its queue by date are oids.c's; a message's
 * %s and %b, message.c's. */
#include <stdlib.h>
#include <string.h>

#include "git_int.h"

/* Commits one Log may visit: shown, skipped, left out by paths, and the
 * ancestors of A hidden for "A..B", together. Each costs a slot of a set
 * (20 bytes at a load of 3/8 to 3/4: at most 54) and, while it waits, a
 * place in the queue (40) or on the hidden walk's stack (20): at most 100
 * bytes, 200 MB for a walk of them all. Beyond every history of note
 * (Linux: 1.3 million commits); a main walk that reaches it answers what
 * it found, partial, and an "A..B" whose A alone has more ancestors has
 * no right answer to give (RESOURCE_EXHAUSTED LOG_WALK_LIMIT). */
#define LOG_WALK_MAX 2000000u
/* What a commit in the reply costs of the list's byte budget beside its
 * message, names and emails: its id and each parent's, in hex. */
#define LOG_OID_BYTES (GIT_OID_HEXSZ + 1)

/* ---- the walk ----------------------------------------------------------- */

typedef struct walk {
    const tkgit *g;
    rpc_call *call;
    const tkgit_repo *r;
    git_repository *repo;
    const Tk__V1__GitLogRequest *in;
    Tk__V1__GitLogReply *out;
    size_t out_cap;
    uint32_t limit, skipped;
    /* The list's byte budget (0: none), and what the reply's commits have
     * taken of it. */
    size_t max_bytes, bytes;
    /* A bound stopped the walk before the end of history: the reply is
     * the newest commits, and partial. */
    bool cut;
    tkgit_queue q;
    tkgit_oidset seen, hidden;
    char **paths; /* NUL-terminated copies of in->paths */
} walk;

/* The commits one Log may walk: LOG_WALK_MAX, or a test's number. */
static uint32_t walk_max(const tkgit *g)
{
    return g->log_walk_max != 0 ? g->log_walk_max : LOG_WALK_MAX;
}

void tkgit__test_set_log_walk_max(tkgit *g, uint32_t max)
{
    g->log_walk_max = max;
}

/* Whether the walk has visited all the commits it may. */
static bool walk_full(const walk *w)
{
    return w->seen.n + w->hidden.n >= walk_max(w->g);
}

/* Queues id unless seen before. 0, or a libgit2 error (< 0). A walk that
 * may visit no more is cut instead. */
static int enqueue(walk *w, const git_oid *id)
{
    if (tkgit__oidset_has(&w->seen, id))
        return 0;
    if (walk_full(w)) {
        w->cut = true;
        return 0;
    }
    int added = tkgit__oidset_add(&w->seen, id);
    if (added <= 0)
        return added < 0 ? GIT_ERROR : 0;
    git_commit *c;
    int rv = git_commit_lookup(&c, w->repo, id);
    if (rv < 0)
        return rv;
    rv = tkgit__queue_push(&w->q, c) != 0 ? GIT_ERROR : 0;
    git_commit_free(c);
    return rv;
}

/* Whether path has the same entry (id and mode, or absence) in trees a
 * and b (b NULL: the empty tree). */
static bool same_entry(git_tree *a, git_tree *b, const char *path)
{
    if (strcmp(path, ".") == 0)
        return b != NULL && git_oid_equal(git_tree_id(a), git_tree_id(b));
    git_tree_entry *ea = NULL, *eb = NULL;
    bool has_a = git_tree_entry_bypath(&ea, a, path) == 0;
    bool has_b = b != NULL && git_tree_entry_bypath(&eb, b, path) == 0;
    bool same = has_a == has_b;
    if (same && has_a)
        same = git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
               git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb);
    git_tree_entry_free(ea);
    git_tree_entry_free(eb);
    return same;
}

static bool treesame(const walk *w, git_tree *a, git_tree *b)
{
    for (size_t i = 0; i < w->in->n_paths; i++)
        if (!same_entry(a, b, w->paths[i]))
            return false;
    return true;
}

/* git's try_to_simplify_commit (default mode): *follow is the one parent
 * to follow (index), or -1 for all of them; returns whether c is shown. */
static int simplify(const walk *w, git_commit *c, bool *show, int *follow)
{
    git_tree *tree = NULL;
    int rv = git_commit_tree(&tree, c);
    if (rv < 0)
        return rv;
    unsigned n = git_commit_parentcount(c);
    *show = true;
    *follow = -1;
    if (n == 0)
        *show = !treesame(w, tree, NULL);
    for (unsigned i = 0; i < n && *follow < 0; i++) {
        git_commit *p = NULL;
        git_tree *pt = NULL;
        rv = git_commit_parent(&p, c, i);
        if (rv == 0)
            rv = git_commit_tree(&pt, p);
        if (rv == 0 && treesame(w, tree, pt)) {
            *show = false;
            *follow = (int)i;
        }
        git_tree_free(pt);
        git_commit_free(p);
        if (rv < 0)
            break;
    }
    git_tree_free(tree);
    return rv < 0 ? rv : 0;
}

static void hex_of(char *hex, const git_oid *id)
{
    git_oid_tostr(hex, GIT_OID_HEXSZ + 1, id);
}

static Tk__V1__GitSignature *signature(rpc_call *call, const git_signature *s)
{
    Tk__V1__GitSignature *out = rpc_call_alloc(call, sizeof *out);
    tk__v1__git_signature__init(out);
    out->name = rpc_call_bytes(call, s->name, strlen(s->name));
    out->email = rpc_call_bytes(call, s->email, strlen(s->email));
    out->time = s->when.time;
    out->offset_minutes = s->when.offset;
    return out;
}

/* What c takes of the list's byte budget: its text, names and ids (the
 * message bounds its subject and body). */
static size_t commit_bytes(git_commit *c)
{
    const git_signature *a = git_commit_author(c);
    const git_signature *m = git_commit_committer(c);
    const char *raw = git_commit_message_raw(c);
    return (raw != NULL ? strlen(raw) : 0) + strlen(a->name) +
           strlen(a->email) + strlen(m->name) + strlen(m->email) +
           LOG_OID_BYTES * ((size_t)git_commit_parentcount(c) + 1);
}

/* Adds c to the reply, unless it would take the reply past the list's
 * byte budget: the walk is then cut (a commit is never cut itself). */
static void add_commit(walk *w, git_commit *c)
{
    rpc_call *call = w->call;
    size_t bytes = commit_bytes(c);
    if (w->max_bytes != 0 && w->bytes + bytes > w->max_bytes) {
        w->cut = true;
        return;
    }
    w->bytes += bytes;
    Tk__V1__GitCommit *out = rpc_call_alloc(call, sizeof *out);
    tk__v1__git_commit__init(out);
    char hex[GIT_OID_HEXSZ + 1];
    hex_of(hex, git_commit_id(c));
    out->oid = rpc_call_strdup(call, hex);
    unsigned n = git_commit_parentcount(c);
    out->parents = rpc_call_alloc(call, (n + 1) * sizeof *out->parents);
    for (unsigned i = 0; i < n; i++) {
        hex_of(hex, git_commit_parent_id(c, i));
        out->parents[out->n_parents++] = rpc_call_strdup(call, hex);
    }
    out->author = signature(call, git_commit_author(c));
    out->committer = signature(call, git_commit_committer(c));
    const char *raw = git_commit_message_raw(c);
    tkgit__subject_body(call, raw != NULL ? raw : "", out);
    w->out->commits = tkgit__grow(call, w->out->commits, w->out->n_commits,
                                  &w->out_cap, sizeof(Tk__V1__GitCommit *));
    w->out->commits[w->out->n_commits++] = out;
}

/* Shows c (or skips it) and queues the parents to follow. */
static int step(walk *w, git_commit *c)
{
    bool show = true;
    int follow = -1, rv = 0;
    if (w->in->n_paths > 0 && (rv = simplify(w, c, &show, &follow)) < 0)
        return rv;
    unsigned n = git_commit_parentcount(c);
    for (unsigned i = 0; i < n && rv == 0; i++) {
        const git_oid *pid = git_commit_parent_id(c, i);
        if ((follow < 0 || (unsigned)follow == i) &&
            !tkgit__oidset_has(&w->hidden, pid))
            rv = enqueue(w, pid);
    }
    if (rv == 0 && show) {
        if (w->skipped < w->in->skip)
            w->skipped++;
        else
            add_commit(w, c);
    }
    return rv;
}

/* Walks until the limit, a bound, the end of history, or the call must
 * stop. Returns 0 or a libgit2 error; sets the call's status when
 * stopped. A reply cut short while history goes on is partial, whoever's
 * limit it was: by the limit (with commits still waiting), the byte
 * budget or the walk's bound. */
static int run_walk(walk *w)
{
    git_oid id;
    int rv = 0;
    while (rv == 0 && !w->cut && w->out->n_commits < w->limit &&
           tkgit__queue_pop(&w->q, &id)) {
        if (rpc_call_cause(w->call) != RPC_CAUSE_NONE) {
            rpc_call_fail_stopped(w->call);
            return 0;
        }
        git_commit *c = NULL;
        if ((rv = git_commit_lookup(&c, w->repo, &id)) == 0)
            rv = step(w, c);
        git_commit_free(c);
    }
    if (rv == 0 && (w->cut || (w->out->n_commits == w->limit && w->q.n > 0)))
        rpc_call_set_partial(w->call, RPC_CAUSE_LIMIT);
    return rv;
}

/* Hides id, and stacks it for its parents, unless hidden before. 0, or a
 * libgit2 error; TKGIT_EREPORTED with the call failed when the walk may
 * visit no more. */
static int hide(walk *w, const git_oid *id, git_oid **stack, size_t *n,
                size_t *cap)
{
    if (tkgit__oidset_has(&w->hidden, id))
        return 0;
    if (walk_full(w)) {
        rpc_call_fail(w->call, RPC_RESOURCE_EXHAUSTED, "LOG_WALK_LIMIT",
                      "the start of the range has more than %u ancestors "
                      "for one Log to walk; name a nearer one",
                      walk_max(w->g));
        return TKGIT_EREPORTED;
    }
    git_oid *grown = tkc_grow(*stack, cap, *n + 1, sizeof **stack, 256);
    if (grown == NULL || tkgit__oidset_add(&w->hidden, id) < 0) {
        if (grown != NULL)
            *stack = grown;
        return GIT_ERROR;
    }
    *stack = grown;
    (*stack)[(*n)++] = *id;
    return 0;
}

/* Marks every ancestor of id (itself included) hidden: "A" of "A..B".
 * Depth first, each commit once: the stack holds no more than the set.
 * (libgit2's revwalk kept some 100 bytes a commit beside this set, until
 * it was freed; measured on 300,000 hidden commits.) */
static int hide_ancestry(walk *w, const git_oid *id)
{
    git_oid *stack = NULL;
    size_t n = 0, cap = 0;
    int rv = hide(w, id, &stack, &n, &cap);
    while (rv == 0 && n > 0) {
        if (rpc_call_cause(w->call) != RPC_CAUSE_NONE) {
            rv = GIT_EUSER;
            break;
        }
        git_commit *c = NULL;
        git_oid next = stack[--n];
        rv = git_commit_lookup(&c, w->repo, &next);
        unsigned parents = rv == 0 ? git_commit_parentcount(c) : 0;
        for (unsigned i = 0; rv == 0 && i < parents; i++)
            rv = hide(w, git_commit_parent_id(c, i), &stack, &n, &cap);
        git_commit_free(c);
    }
    free(stack);
    return rv;
}

/* A revision to a commit id: 0, a libgit2 error (the caller's rev's), or
 * TKGIT_EREPORTED when git resolved it and failed the call. */
static int commit_of(git_oid *out, const walk *w, const char *rev)
{
    git_object *obj = NULL, *peeled = NULL;
    int rv;
    if (tkgit__rev_needs_git(rev)) {
        git_oid id;
        if (tkgit__rev_parse_cli(&id, w->g, w->call, w->r, rev) != 0)
            return TKGIT_EREPORTED;
        rv = git_object_lookup(&obj, w->repo, &id, GIT_OBJECT_ANY);
    } else {
        rv = git_revparse_single(&obj, w->repo, rev);
    }
    if (rv == 0)
        rv = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
    if (rv == 0)
        git_oid_cpy(out, git_object_id(peeled));
    git_object_free(peeled);
    git_object_free(obj);
    return rv == GIT_EPEEL ? GIT_EINVALIDSPEC : rv;
}

/* "B" or "A..B" (A or B may be empty: HEAD). */
static int start(walk *w, const char *rev)
{
    const char *dots = strstr(rev, "..");
    git_oid id;
    int rv;
    if (dots == NULL)
        return (rv = commit_of(&id, w, rev)) < 0 ? rv : enqueue(w, &id);
    if (dots[2] == '.')
        return GIT_EINVALIDSPEC; /* "A...B" is not supported */
    char *from = rpc_call_strndup(w->call, rev, (size_t)(dots - rev));
    const char *to = dots[2] != '\0' ? dots + 2 : "HEAD";
    rv = commit_of(&id, w, from[0] != '\0' ? from : "HEAD");
    if (rv == 0)
        rv = hide_ancestry(w, &id);
    if (rv == 0 && (rv = commit_of(&id, w, to)) == 0 &&
        !tkgit__oidset_has(&w->hidden, &id))
        rv = enqueue(w, &id);
    return rv;
}

static bool prepare(walk *w)
{
    if (!tkgit__paths_ok(w->call, w->in->n_paths, w->in->paths) ||
        !tkgit__rev_ok(w->call, w->in->rev, "rev"))
        return false;
    w->paths = rpc_call_alloc(w->call, (w->in->n_paths + 1) * sizeof(char *));
    for (size_t i = 0; i < w->in->n_paths; i++) {
        const ProtobufCBinaryData *p = &w->in->paths[i];
        size_t n = p->len;
        while (n > 1 && p->data[n - 1] == '/')
            n--; /* "dir/" is "dir" */
        w->paths[i] = rpc_call_strndup(w->call, (const char *)p->data, n);
    }
    /* The caller's limit, held to the method's ceiling (git.proto). */
    const rpc_list *list = rpc_call_list(w->call);
    w->limit = rpc_list_items(list, w->in->max_count);
    w->max_bytes = list->max_bytes;
    return true;
}

void tkgit__log(void *svc, rpc_call *call, const ProtobufCMessage *request,
                ProtobufCMessage *reply)
{
    walk w = { .g = svc,
               .call = call,
               .in = (const Tk__V1__GitLogRequest *)request,
               .out = (Tk__V1__GitLogReply *)reply };
    if (!prepare(&w))
        return;
    tkgit_repo repo;
    if (tkgit__open(&repo, svc, call, w.in->repo) != 0)
        return;
    w.r = &repo;
    w.repo = repo.repo;
    /* The walk's (a revision libgit2 cannot resolve in a way that can be
     * cancelled goes to git rev-parse first, which then says so). */
    rpc_call_set_tool(call, "libgit2");
    obs_metric_add(OBS_M_GIT_READS_LIBGIT2, 1);
    const char *rev = w.in->rev[0] != '\0' ? w.in->rev : "HEAD";
    int rv = start(&w, rev);
    if (rv == GIT_EUSER)
        rpc_call_fail_stopped(call);
    else if (rv < 0 && rv != TKGIT_EREPORTED) /* reported: git said why */
        tkgit__fail_libgit2(call, repo.repo, TKGIT_STEP_REV, rv, rev);
    else if (rv == 0 && (rv = run_walk(&w)) < 0)
        tkgit__fail_libgit2(call, repo.repo, TKGIT_STEP_WALK, rv, NULL);
    tkgit__queue_fini(&w.q);
    tkgit__oidset_fini(&w.seen);
    tkgit__oidset_fini(&w.hidden);
    tkgit__close(&repo);
}
