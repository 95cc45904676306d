/* SPDX-License-Identifier: MIT */
/*
 * search — the tk.v1.Search service: literal full-text search of a tree
 * under one of tkd's --root directories, delegated to the tools that are
 * good at it: rg, else git grep (inside a git work tree), else grep.
 *
 * Owns: resolving each tool's path once per process (pthread_once);
 * choosing the tool (the fallback, or the one a caller forces); the
 * command lines (literal -F, the query after -e, -- before any path); the
 * search slots (at most N tools at once, waiting that follows the caller);
 * the result limit and the reply's byte budget (reaching either stops the
 * tool: a partial success, cause LIMIT); the three parsers of tool output
 * (rg --json, git grep -z, grep --null); and the judgement of how a search
 * ended: the caller first and a tool that could not start (tool/'s one
 * answer), then the limit, then the tool's exit status.
 * May call: tool/ (every process it starts), proc/ (to find the tools;
 * the types of a run), roots/ (every path a caller names), rpc/ (its
 * calls), obs/ (the log, the metrics), libc.
 * Must never: start a process but through tool/ (fork, exec,
 * posix_spawn: proc_run does, for tool/); search file contents itself
 * (the tools do; it only locates the query within a line a tool
 * reported, for the submatch offsets); start a tool for a caller that
 * gave up while waiting for a slot; answer a
 * cancelled or expired call with an empty (or any) match list; treat exit
 * status 2 (files it could not read) as success unless the limit was
 * reached or the caller allowed it; run more tools at once than it has
 * slots.
 */
#ifndef TK_SERVICE_SEARCH_H
#define TK_SERVICE_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roots/roots.h"
#include "rpc/rpc.h"

#define SEARCH_DEFAULT_SLOTS 3u
#define SEARCH_MAX_SLOTS 64u
/* The longest query, in bytes: far beyond any line one means to find,
 * and far below the kernel's limit on a command line (a query of 200 KiB
 * would fail exec with E2BIG). */
#define SEARCH_QUERY_MAX 4096u
/* The result limit: its default, and the ceiling a larger limit is
 * served as (the reply is then partial when more exist). The method's
 * list bounds in tk/v1/search.proto, which the handler reads from its
 * method table; search_int.h holds these equal to them. */
#define SEARCH_DEFAULT_LIMIT 1000u
#define SEARCH_MAX_LIMIT 100000u
/* Lines longer than this are cut to it and flagged. */
#define SEARCH_LINE_MAX ((size_t)1 << 20)
/* Paths and text in one reply; past it the reply is partial (LIMIT). */
#define SEARCH_REPLY_BYTES ((size_t)32 << 20)

/* The numbers of tk.v1.SearchRequest.Tool. */
typedef enum search_tool {
    SEARCH_TOOL_AUTO = 0,
    SEARCH_TOOL_RG = 1,
    SEARCH_TOOL_GIT_GREP = 2,
    SEARCH_TOOL_GREP = 3,
} search_tool;

const char *search_tool_name(search_tool tool); /* "rg", "git grep", ... */

/* ---- the service -------------------------------------------------------- */

typedef struct search_config {
    const roots *roots; /* must outlive the service */
    unsigned slots;     /* tools running at once; 0: SEARCH_DEFAULT_SLOTS */
} search_config;

typedef struct search search;

/* Errors: negative errno values with a message in err. */
int search_new(search **out, const search_config *cfg, char *err,
               size_t errlen);
/* Adds tk.v1.Search/Search to srv. */
int search_register(search *s, rpc_server *srv, char *err, size_t errlen);
/* After the server is freed. NULL is accepted. */
void search_free(search *s);

/* ---- command lines ------------------------------------------------------ */

typedef struct search_query {
    const char *text; /* literal; not empty, no NUL, no newline */
    size_t len;
    bool ignore_case;
    bool include_hidden;
} search_query;

#define SEARCH_ARGV_MAX 32

/* What runs for one search, in the root as the working directory. */
typedef struct search_command {
    const char *argv[SEARCH_ARGV_MAX]; /* NULL-terminated; argv[0] is the
                                          program's name ("rg", "git") */
    const char *env[4];                /* over proc's scrubbed environment */
    char record_delim;                 /* how the output splits into records */
    size_t record_max;                 /* longest record taken whole */
    const char *record_resume;         /* where a cut record resumes
                                          (proc_opts), or NULL */
} search_command;

/* The command line of tool (not AUTO) for q; argv borrows q->text, which
 * must be NUL-terminated at q->len. Exposed so that the tests run exactly
 * what tkd runs. 0, or -EINVAL (also for rg with a query that is not
 * UTF-8: rg refuses such a pattern, -F or not). */
int search_command_build(search_command *out, search_tool tool,
                         const search_query *q);

/* ---- parsers ------------------------------------------------------------ */

typedef struct search_span {
    uint32_t start, end; /* byte offsets into search_match.text */
} search_span;

typedef struct search_match {
    const char *path; /* relative to the root, no "./"; not NUL-safe: use
                         path_len */
    size_t path_len;
    uint64_t line;    /* 1-based */
    uint32_t column;  /* 1-based byte offset of the first occurrence; 0
                         when it lies beyond the text kept */
    const char *text; /* the line without its newline, at most line_max */
    size_t text_len;
    bool truncated; /* the line was longer than line_max */
    const search_span *spans;
    size_t n_spans;
} search_match;

typedef struct search_stats {
    uint32_t matched_lines;
    uint32_t files_with_matches;
    uint32_t truncated_lines;
    uint32_t skipped_records; /* output that could not be parsed */
} search_stats;

typedef struct search_limits {
    uint32_t max_matches; /* the request's limit */
    size_t max_bytes;     /* paths + text; 0: SEARCH_REPLY_BYTES */
    size_t line_max;      /* 0: SEARCH_LINE_MAX */
} search_limits;

/* Turns one tool's output, a record at a time (as proc's record mode
 * passes it), into matches. Owns copies of everything it keeps. */
typedef struct search_parser search_parser;

int search_parser_new(search_parser **out, search_tool tool,
                      const search_query *q, const search_limits *lim);
void search_parser_free(search_parser *p);
/* One record without its delimiter; cut: it was longer than the command's
 * record_max and holds only its start (and, after it, where the record
 * resumed at the command's record_resume, if it did). Returns false once a
 * match beyond the limit (or the byte budget) arrived: the search is then
 * partial and the parser takes nothing more. */
bool search_parser_record(search_parser *p, const char *data, size_t len,
                          bool cut);
/* The reply misses matches: the limit or the byte budget was reached, or
 * a match could not be read (stats.skipped_records counts it). */
bool search_parser_partial(const search_parser *p);
size_t search_parser_count(const search_parser *p);
/* The i-th match, valid until search_parser_free. */
const search_match *search_parser_match(const search_parser *p, size_t i);
void search_parser_stats(const search_parser *p, search_stats *out);
/* The matches as fields of a tk.v1.SearchReply (SearchReply.matches, in
 * protobuf's wire format): the bytes protobuf-c packs for the same
 * matches built as messages, written straight from the parser's storage.
 * out holds search_parser_encoded_size bytes. */
size_t search_parser_encoded_size(const search_parser *p);
void search_parser_encode(const search_parser *p, uint8_t *out);

/* ---- for tests and benchmarks only --------------------------------------
 * tkd never calls these. false: rg's match records are read by the general
 * JSON reader alone, never by the fast path for rg's own layout, so a test
 * can compare the two on the same records (and a benchmark time them). */
void search__test_set_rg_fast(search_parser *p, bool on);
/* The records the fast path read (the rest went to the general reader). */
size_t search__test_rg_fast_read(const search_parser *p);
/* A pool of chunks for the matches, as the service has one (the parser
 * keeps its matches in chunks of its own otherwise); the chunks it keeps
 * between parsers. */
typedef struct search_pool search_pool;
search_pool *search__test_pool_new(void);
void search__test_pool_free(search_pool *pool);
size_t search__test_pool_kept(search_pool *pool);
/* Before the first record. */
void search__parser_use_pool(search_parser *p, search_pool *pool);

#endif /* TK_SERVICE_SEARCH_H */
