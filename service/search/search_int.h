/* SPDX-License-Identifier: MIT */
/*
 * Internal to service/search: what its files share. Nothing outside
 * service/search includes this.
 */
#ifndef TK_SERVICE_SEARCH_INT_H
#define TK_SERVICE_SEARCH_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search.h"
#include "common/common.h"
#include "obs/obs.h"
#include "port/port.h"
#include "tk/v1/search.methods.h"

/* search.h's numbers are the method's list bounds (its option in
 * tk/v1/search.proto), which the handler serves: these keep the two equal. */
_Static_assert(SEARCH_DEFAULT_LIMIT == TK_V1_SEARCH__SEARCH__DEFAULT_ITEMS,
               "search.h's default limit is search.proto's");
_Static_assert(SEARCH_MAX_LIMIT == TK_V1_SEARCH__SEARCH__MAX_ITEMS,
               "search.h's ceiling is search.proto's");
_Static_assert(SEARCH_REPLY_BYTES == TK_V1_SEARCH__SEARCH__MAX_BYTES,
               "search.h's byte budget is search.proto's");

/* The method's ceiling (tk/v1/search.proto): no search runs longer,
 * whatever its caller asks. */
#define SEARCH_CEILING_MS TK_V1_SEARCH__SEARCH__CEILING_MS

/* ---- chunks.c: where the matches are kept ----------------------------- */

#define SEARCH_CHUNK ((size_t)256 * 1024)
#define SEARCH_POOL_KEEP 16u /* chunks kept between searches: 4 MiB */

typedef struct search_chunk search_chunk;

/* The service's chunks between searches (chunks.c says why). */
typedef struct search_pool {
    pthread_mutex_t mu;
    search_chunk *free;
    size_t n_free;
} search_pool;

int search__pool_init(search_pool *pool);
/* When no search runs any more. */
void search__pool_fini(search_pool *pool);

/* One parser's chunks. */
typedef struct search_store {
    search_pool *pool;    /* NULL: chunks are malloc'd and freed */
    search_chunk *chunks; /* the one being filled first */
} search_store;

/* n bytes, 8-aligned, until search__store_release; NULL: out of memory. */
void *search__store_alloc(search_store *st, size_t n);
/* Every block at once: the chunks back to the pool (up to its keep), the
 * rest freed. */
void search__store_release(search_store *st);

/* ---- the parser (parse.c over parse_rg.c, parse_grep.c over matches.c) -- */

/* 'A'..'Z' to lower case, every other byte as it is. */
char search__fold_ascii(char c);

struct search_parser {
    search_tool tool;
    char *query; /* the query, folded to lower case when ignore_case */
    size_t qlen;
    bool ignore_case;
    search_limits lim;
    search_match *matches;
    size_t n, cap;
    /* the matches' paths, text and spans */
    search_store store;
    size_t bytes; /* paths and text kept, against lim.max_bytes */
    bool partial; /* beyond the limit or the byte budget: take no more */
    bool lost;    /* a match that could not be read (rg: a record cut
                     before its line number): the reply is partial */
    search_stats stats;
    tkc_buf pending; /* grep, git grep: a path holding newlines so far */
    tkc_buf fold;    /* a line folded to lower case */
    tkc_buf path, text;
    tkc_buf key, type, raw; /* rg: a member's name, the record's type,
                                  a base64 value */
    search_span *spans;     /* the spans of the match being added */
    size_t n_spans, spans_cap;
    /* rg: the fast path for match records in rg's layout (parse_rg.c) */
    bool rg_general_only; /* off: search__test_set_rg_fast(p, false) */
    size_t rg_fast_read;  /* the records it read */
};

/* One match as a parser found it; everything borrowed. */
typedef struct search_found {
    const char *path;
    size_t path_len;
    uint64_t line;
    uint32_t column; /* from the tool (git grep); 0: the first span's */
    const char *text;
    size_t text_len;
    bool cut;       /* the tool's record was cut: text is only its start */
    bool has_spans; /* p->spans holds the tool's own (rg); else located */
} search_found;

/* matches.c: keeping what a tool's parser found. Keeps f, or returns false when
 * it is beyond the limit or the byte budget (the parser is then partial). */
bool search__add(search_parser *p, const search_found *f);
int search__span_push(search_parser *p, uint32_t start, uint32_t end);

/* parse_rg.c, parse_grep.c: one record each. */
bool search__rg_record(search_parser *p, const char *data, size_t len,
                       bool cut);
bool search__grep_record(search_parser *p, const char *data, size_t len,
                         bool cut);
/* matches.c: standard base64 with padding, as rg writes {"bytes": ...}. -EINVAL
 * on anything else. */
int search__base64_decode(tkc_buf *out, const char *in, size_t len);

/* ---- command.c ---------------------------------------------------------- */

/* The path of tool (not AUTO) in tkd's PATH, resolved once per process at
 * the first search; NULL for a tool that is missing. */
const char *search__tool_path(search_tool tool);
/* The environment git runs with (also for rev-parse). */
extern const char *const search__git_env[];
/* What every git of a search gets (-c): git discovers no bare repository
 * from the root, so a bare repository's files that a commit holds (with a
 * config naming programs) are never a repository to it (git 2.38+). */
#define SEARCH_GIT_SAFE_BARE "safe.bareRepository=explicit"

/* ---- slots.c ------------------------------------------------------------ */

/* A counting semaphore that can be waited on together with a call's
 * cancellation and deadline (port_sem). */
typedef struct search_slots {
    port_sem sem;
} search_slots;

int search__slots_init(search_slots *s, unsigned n);
void search__slots_fini(search_slots *s);
/* Takes a slot: 0; 1 when the caller stopped waiting (rpc_call_cause says
 * why; no slot is held); -errno when poll failed. A caller that has
 * already gone gets no slot. */
int search__slot_take(search_slots *s, rpc_call *call);
void search__slot_give(search_slots *s);

/* ---- run.c -------------------------------------------------------------- */

typedef struct search_job {
    rpc_call *call;
    search_pool *pool;
    char root[PATH_MAX];
    search_query q;
    search_limits lim;
    search_tool forced;
    bool allow_unreadable;
    uint32_t slot_wait_ms;
    struct Tk__V1__SearchReply *out;
} search_job;

/* With a slot held: chooses the tool, runs it, judges how it ended and
 * fills the reply or fails the call. */
void search__run(search_job *j);

#endif /* TK_SERVICE_SEARCH_INT_H */
