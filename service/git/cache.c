/* SPDX-License-Identifier: MIT */
/* Open repositories kept by each worker thread between its calls.
 *
 * git_repository_open_ext reads the system, global and repository config
 * files, checks ownership and sets up the object database: about 190 µs,
 * most of a RevParse's time in tkd. A worker keeps the last few handles it
 * opened, keyed by the path the caller named once resolved, and only for
 * a path that is the top of its repository (the working tree, or the git
 * dir of a bare one): discovery from a subdirectory could find another
 * repository tomorrow (a `git init` below the top), so those open per
 * call. A handle belongs to one thread, as libgit2 requires; the cache is
 * freed when the thread exits.
 *
 * What libgit2 reads afresh on every lookup needs no check: loose refs,
 * packed-refs (re-read when its stat changes), loose objects, and a pack
 * it does not know yet (a miss rescans objects/pack). What it reads once
 * at open — the config, the list of packs, the object cache, the very
 * directory it opened — is checked per call by stat(2) of:
 *   the .git entry of the working tree (or the bare git dir),
 *   the git dir and the common dir (a worktree's differ),
 *   the common dir's config file and objects/pack directory,
 * comparing device, inode, owner, mode, size, and change and modify times
 * to the nanosecond. A directory's times change when an entry is created,
 * renamed or removed in it, so a repository removed and created again at
 * the same path (even on a reused inode), any lock file git takes in the
 * git dir (every write of HEAD, the index, the config, packed-refs), a
 * config edited in place, and a new or removed pack each make the next
 * call open the repository again. A handle whose stamps changed within
 * SETTLE_NS before its open began is not kept: it may predate a change
 * that the stamps already show.
 *
 * Not watched: the global and system config files of tkd's user (libgit2
 * re-reads a changed file when asked for a value, but values it caches at
 * open stay until the handle is reopened), objects/info/alternates, and
 * the working tree (RevParse and Log never read it). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "git_int.h"

/* Handles per worker thread. */
#define SLOTS 4
/* How old the stamps of a handle must be at its open to keep it: more
 * than the lag of the kernel's coarse clock behind CLOCK_REALTIME. */
#define SETTLE_NS (20 * 1000000LL)

enum { ST_TOP, ST_GITDIR, ST_COMMON, ST_CONFIG, ST_PACKS, N_STAMPS };

typedef struct stamp {
    bool present;
    dev_t dev;
    ino_t ino;
    uid_t uid;
    mode_t mode;
    off_t size;
    struct timespec ctim, mtim;
} stamp;

typedef struct entry {
    char *key; /* NULL: a free slot */
    git_repository *repo;
    char *paths[N_STAMPS]; /* NULL: the same as an earlier one */
    stamp st[N_STAMPS];
    uint64_t used;
} entry;

typedef struct cache {
    entry e[SLOTS];
    uint64_t tick;
} cache;

/* ---- stamps -------------------------------------------------------------- */

/* 0, or -1 when path cannot be judged (any error but its absence). */
static int stamp_of(stamp *s, const char *path)
{
    struct stat st;
    memset(s, 0, sizeof *s);
    if (stat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    s->present = true;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->uid = st.st_uid;
    s->mode = st.st_mode;
    s->size = st.st_size;
    s->ctim = st.st_ctim;
    s->mtim = st.st_mtim;
    return 0;
}

static bool same_time(struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool same_stamp(const stamp *a, const stamp *b)
{
    if (a->present != b->present)
        return false;
    return !a->present ||
           (a->dev == b->dev && a->ino == b->ino && a->uid == b->uid &&
            a->mode == b->mode && a->size == b->size &&
            same_time(a->ctim, b->ctim) && same_time(a->mtim, b->mtim));
}

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Whether the entry's repository is, on disk, the one it opened. */
static bool still_valid(const entry *e)
{
    for (int i = 0; i < N_STAMPS; i++) {
        stamp now;
        if (e->paths[i] != NULL &&
            (stamp_of(&now, e->paths[i]) != 0 || !same_stamp(&now, &e->st[i])))
            return false;
    }
    return true;
}

/* ---- entries ------------------------------------------------------------- */

static void entry_fini(entry *e)
{
    free(e->key);
    for (int i = 0; i < N_STAMPS; i++)
        free(e->paths[i]);
    git_repository_free(e->repo);
    memset(e, 0, sizeof *e);
}

/* dir/name (name may be NULL: dir itself) without dir's trailing '/'. */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t len = n + (name != NULL ? strlen(name) + 1 : 0) + 1;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%.*s%s%s", (int)n, dir, name != NULL ? "/" : "",
                 name != NULL ? name : "");
    return p;
}

/* The paths to stamp; a repeat of an earlier one is NULL. 0, or -1 out of
 * memory. */
static int entry_paths(entry *e, const char *key)
{
    git_repository *r = e->repo;
    const char *common = git_repository_commondir(r);
    e->paths[ST_TOP] =
        git_repository_is_bare(r) ? join(key, NULL) : join(key, ".git");
    e->paths[ST_GITDIR] = join(git_repository_path(r), NULL);
    e->paths[ST_COMMON] = join(common, NULL);
    e->paths[ST_CONFIG] = join(common, "config");
    e->paths[ST_PACKS] = join(common, "objects/pack");
    for (int i = 0; i < N_STAMPS; i++)
        if (e->paths[i] == NULL)
            return -1;
    for (int i = 1; i < N_STAMPS; i++) {
        for (int j = 0; j < i && e->paths[i] != NULL; j++) {
            if (e->paths[j] != NULL && strcmp(e->paths[i], e->paths[j]) == 0) {
                free(e->paths[i]);
                e->paths[i] = NULL;
            }
        }
    }
    return 0;
}

/* Stamps the entry; false when a stamp cannot be taken or changed after
 * not_before (ns, CLOCK_REALTIME). */
static bool entry_stamp(entry *e, int64_t not_before)
{
    for (int i = 0; i < N_STAMPS; i++) {
        if (e->paths[i] == NULL)
            continue;
        stamp *s = &e->st[i];
        if (stamp_of(s, e->paths[i]) != 0)
            return false;
        if (s->present &&
            (ns_of(s->ctim) >= not_before || ns_of(s->mtim) >= not_before))
            return false;
    }
    return true;
}

/* ---- the thread's cache ------------------------------------------------- */

static void cache_free(void *arg)
{
    cache *c = arg;
    for (int i = 0; i < SLOTS; i++)
        if (c->e[i].key != NULL)
            entry_fini(&c->e[i]);
    free(c);
}

int tkgit__cache_init(tkgit *g)
{
    return pthread_key_create(&g->cache_key, cache_free) == 0 ? 0 : -1;
}

void tkgit__cache_fini(tkgit *g)
{
    /* The workers have exited (the server is freed first), and with them
     * their caches. */
    pthread_key_delete(g->cache_key);
}

git_repository *tkgit__cache_get(const tkgit *g, const char *key)
{
    cache *c = pthread_getspecific(g->cache_key);
    if (c == NULL)
        return NULL;
    for (int i = 0; i < SLOTS; i++) {
        entry *e = &c->e[i];
        if (e->key == NULL || strcmp(e->key, key) != 0)
            continue;
        if (!still_valid(e)) {
            entry_fini(e);
            return NULL;
        }
        e->used = ++c->tick;
        return e->repo;
    }
    return NULL;
}

/* A free slot, or the least recently used one emptied. Entries whose
 * repository changed are dropped on the way: a thread that only misses
 * would otherwise keep their packs open. */
static entry *free_slot(cache *c)
{
    entry *lru = &c->e[0];
    for (int i = 0; i < SLOTS; i++) {
        entry *e = &c->e[i];
        if (e->key != NULL && !still_valid(e))
            entry_fini(e);
        if (e->key == NULL)
            return e;
        if (e->used < lru->used)
            lru = e;
    }
    entry_fini(lru);
    return lru;
}

static cache *thread_cache(const tkgit *g)
{
    cache *c = pthread_getspecific(g->cache_key);
    if (c != NULL)
        return c;
    c = calloc(1, sizeof *c);
    if (c != NULL && pthread_setspecific(g->cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

bool tkgit__cache_put(const tkgit *g, const char *key, git_repository *repo,
                      int64_t opened_at)
{
    cache *c = thread_cache(g);
    if (c == NULL)
        return false;
    entry fresh = { .repo = repo, .key = strdup(key) };
    bool keep = fresh.key != NULL && entry_paths(&fresh, key) == 0 &&
                entry_stamp(&fresh, opened_at - SETTLE_NS);
    if (!keep) {
        fresh.repo = NULL; /* the caller's still */
        entry_fini(&fresh);
        return false;
    }
    entry *e = free_slot(c);
    *e = fresh;
    e->used = ++c->tick;
    return true;
}

int64_t tkgit__cache_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ns_of(ts);
}
