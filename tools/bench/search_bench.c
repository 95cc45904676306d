/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/search: tk.v1.Search through tkd against running the tools
 * directly, same query, same corpus, same run.
 *
 *   bench-search --tkd PATH [--corpus DIR] [--mb N] [--rounds R] [--keep]
 *                [--only full|density|limit] [--no-arena]
 *
 * The corpus is generated (deterministically: a fixed xorshift seed) into
 * a temporary directory unless --corpus names one made before: N MB (200
 * by default) of text in 100 KB files under 20 directories, a git work
 * tree with every file untracked. Every line starts with the hot word
 * (millions of hits); one line in 97 holds the mid word, one in 9973 the
 * rare word.
 *
 * Measured, each the median of R rounds after one warm-up round, rounds
 * alternating the two sides of a comparison:
 *  - full scan, rare word: tkd Search (rg) vs rg --json -F run directly
 *    with tkd's command line and environment (LC_ALL=C), its stdout read
 *    and dropped as tkd reads it;
 *  - the same for git grep and grep (forced through tkd, and directly);
 *  - rg's full scan again on the mid word (tens of thousands of hits:
 *    what tkd's reading, parsing and sending of matches costs, and the
 *    client's decoding of them);
 *  - time to reply with limit 100 on the hot word vs rg --json running
 *    that whole query directly.
 * The client decodes each reply into one arena (tk_arena), reset between
 * calls, as a program that makes call after call would; the density table
 * is then run again with replies decoded by malloc and freed message by
 * message (tk_call_opts.reply_allocator NULL, what every call did before
 * the arena), so the two are side by side in one run. --no-arena: malloc
 * everywhere, and no second table.
 * Prints markdown tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tk/client.h>

#include "measure.h"
#include "bench.h"
#include "proc/proc.h"
#include "search/search.h"

#include "tk/v1/search.tk.h"

#define HOT "hotword"
#define MID "quokka"
#define RARE "zyzzyva"
#define FILE_BYTES ((size_t)100 * 1024)
#define DIRS 20

/* The benchmark runs on one thread: exit is safe here. */
static void fail(const char *what, const char *why)
{
    fprintf(stderr, "bench-search: %s: %s\n", what, why);
    exit(1); // NOLINT(concurrency-mt-unsafe): one thread; it ends here
}

static void die(const char *what)
{
    fail(what, strerrordesc_np(errno));
}

/* ---- the corpus --------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A vocabulary of made-up words, the same every run. */
static char vocab[4096][12];

static void make_vocab(void)
{
    for (size_t i = 0; i < 4096; i++) {
        size_t len = 3 + next_rand() % 8;
        for (size_t k = 0; k < len; k++)
            vocab[i][k] = (char)('a' + next_rand() % 26);
        vocab[i][len] = '\0';
    }
}

static size_t make_line(char *buf, uint64_t n)
{
    size_t at = (size_t)sprintf(buf, HOT);
    int words = 5 + (int)(next_rand() % 6);
    for (int w = 0; w < words; w++) {
        const char *word = vocab[next_rand() % 4096];
        if (w == 2 && n % 97 == 0)
            word = MID;
        if (w == 3 && n % 9973 == 0)
            word = RARE;
        at += (size_t)sprintf(buf + at, " %s", word);
    }
    buf[at++] = '\n';
    return at;
}

static void write_file(const char *path, uint64_t *line)
{
    static char buf[FILE_BYTES + 256];
    size_t len = 0;
    while (len < FILE_BYTES)
        len += make_line(buf + len, (*line)++);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0)
        die(path);
}

static void run(const char *const argv[], const char *cwd);

static void make_corpus(const char *dir, int mb)
{
    make_vocab();
    char path[PATH_MAX + 64];
    int files = (int)((size_t)mb * 1024 * 1024 / FILE_BYTES);
    uint64_t line = 1;
    for (int f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/d%02d", dir, f % DIRS);
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            die(path);
        snprintf(path, sizeof path, "%s/d%02d/f%05d.txt", dir, f % DIRS, f);
        write_file(path, &line);
    }
    const char *git[] = { "/usr/bin/git", "init", "-q", NULL };
    run(git, dir);
    snprintf(path, sizeof path, "%s/.corpus-%d", dir, mb);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        die(path);
    close(fd);
    printf("corpus: %d files, %llu lines, %d MB in %s\n", files,
           (unsigned long long)line - 1, mb, dir);
}

/* ---- running a tool directly -------------------------------------------- */

/* What tkd's children get: PATH, HOME and LANG (of its allowlist, those
 * this benchmark has) and the tools' own settings (tkd sets LC_ALL=C for
 * git grep and grep; rg does not look). */
static char *tool_env[8];

/* Appends NAME=value of this process's environment, when it has NAME. */
static size_t pass_env(size_t n, const char *name)
{
    static char bufs[3][4096];
    const char *v = getenv(name);
    if (v == NULL || n >= 6)
        return n;
    snprintf(bufs[n - 3], sizeof bufs[0], "%s=%s", name, v);
    tool_env[n] = bufs[n - 3];
    return n + 1;
}

static void make_tool_env(void)
{
    static char lc_all[] = "LC_ALL=C", locks[] = "GIT_OPTIONAL_LOCKS=0",
                prompt[] = "GIT_TERMINAL_PROMPT=0";
    tool_env[0] = lc_all;
    tool_env[1] = locks;
    tool_env[2] = prompt;
    size_t n = pass_env(3, "PATH");
    n = pass_env(n, "HOME");
    n = pass_env(n, "LANG");
    tool_env[n] = NULL;
}

/* A helper command (rm) run to completion. */
static void run(const char *const argv[], const char *cwd)
{
    if (bench_run_drain(argv, cwd, NULL, NULL) != 0)
        die(argv[0]);
}

/* Seconds from spawn to reap, stdout read to its end and dropped. */
static double time_direct(const char *const argv[], const char *cwd,
                          unsigned long long *bytes)
{
    *bytes = 0;
    long long t0 = bench_now_ns();
    if (bench_run_drain(argv, cwd, tool_env, bytes) < 0)
        die(argv[0]);
    return (double)(bench_now_ns() - t0) / 1e9;
}

/* ---- through tkd --------------------------------------------------------- */

typedef struct outcome {
    size_t matches;
    bool partial;
    unsigned long long out_bytes; /* a direct run's stdout */
    double tool_s;                /* tkd: spawn to reap, its stats */
    double server_s;              /* tkd: receipt to reply (elapsed_us) */
    double total_s;               /* tkd: the call, as the client saw it */
} outcome;

/* arena: where the reply is decoded, reset after; NULL: malloc, and the
 * reply freed (neither is timed). */
static double time_tkd(tk_client *c, tk_arena *arena, const char *root,
                       const char *query, int tool, uint32_t limit,
                       outcome *out)
{
    Tk__V1__SearchRequest req = TK__V1__SEARCH_REQUEST__INIT;
    req.root = (char *)root;
    req.query = (char *)query;
    req.limit = limit;
    req.tool = (Tk__V1__SearchRequest__Tool)tool;
    Tk__V1__SearchReply *rep = NULL;
    tk_status st;
    tk_call_opts opts = { .timeout_ms = 30000,
                          .reply_allocator = tk_arena_allocator(arena) };
    long long t0 = bench_now_ns();
    int code = tk_search_search(c, &req, &rep, &opts, &st);
    double s = (double)(bench_now_ns() - t0) / 1e9;
    if (code != TK_OK)
        fail(tk_code_name(code), st.message);
    out->matches = rep->n_matches;
    out->partial = rep->partial;
    out->tool_s = rep->stats->tool_ms / 1e3;
    out->server_s = (double)st.elapsed_us / 1e6;
    out->total_s = s;
    if (arena != NULL)
        tk_arena_reset(arena);
    else
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    return s;
}

/* ---- the comparisons ---------------------------------------------------- */

typedef struct side {
    const char *const *argv; /* direct, or NULL: through tkd */
    const char *query;
    int tool;
    uint32_t limit;
    bool malloc_reply; /* through tkd: decoded with malloc, not the arena */
} side;

typedef struct env {
    tk_client *c;
    tk_arena *arena; /* NULL: --no-arena */
    const char *corpus;
    int rounds;
} env;

static double time_side(const env *e, const side *s, outcome *o)
{
    if (s->argv == NULL)
        return time_tkd(e->c, s->malloc_reply ? NULL : e->arena, e->corpus,
                        s->query, s->tool, s->limit, o);
    unsigned long long bytes;
    double t = time_direct(s->argv, e->corpus, &bytes);
    o->matches = 0;
    o->out_bytes = bytes;
    return t;
}

#define MAX_ROUNDS 31

typedef struct comparison {
    double a, b;       /* the median times */
    double ratio;      /* the median of a/b over the rounds: each round's pair
                          ran back to back, so load that comes and goes (a busy
                          two-core machine) mostly cancels out */
    double tool_ratio; /* the same for a's tool_s (tkd's own spawn-to-reap
                          time) against b */
    double after_tool; /* a's server time past its tool run, and the rest of
                          the call (transport, client decoding): medians */
    double client_side;
    outcome oa, ob;
} comparison;

/* a against b, alternating which goes first. */
static void compare(const env *e, const side *a, const side *b, comparison *c)
{
    double va[MAX_ROUNDS], vb[MAX_ROUNDS], vr[MAX_ROUNDS], vt[MAX_ROUNDS];
    double vs[MAX_ROUNDS], vc[MAX_ROUNDS];
    time_side(e, a, &c->oa); /* warm-up: page cache, tool resolution */
    time_side(e, b, &c->ob);
    for (int r = 0; r < e->rounds; r++) {
        if (r % 2 == 0) {
            va[r] = time_side(e, a, &c->oa);
            vb[r] = time_side(e, b, &c->ob);
        } else {
            vb[r] = time_side(e, b, &c->ob);
            va[r] = time_side(e, a, &c->oa);
        }
        vr[r] = va[r] / vb[r];
        vt[r] = c->oa.tool_s / vb[r];
        vs[r] = c->oa.server_s - c->oa.tool_s;
        vc[r] = c->oa.total_s - c->oa.server_s;
    }
    c->a = bench_median(va, e->rounds);
    c->b = bench_median(vb, e->rounds);
    c->ratio = bench_median(vr, e->rounds);
    c->tool_ratio = bench_median(vt, e->rounds);
    c->after_tool = bench_median(vs, e->rounds);
    c->client_side = bench_median(vc, e->rounds);
}

/* A direct side's command line: tkd's own for tool and query
 * (search_command_build, as tkd builds it), its program found in PATH. */
typedef struct direct_cmd {
    search_command cmd;
    char path[PATH_MAX];
} direct_cmd;

static const char *const *direct_argv(direct_cmd *d, search_tool tool,
                                      const char *query)
{
    search_query q = { .text = query,
                       .len = strlen(query),
                       .include_hidden = true };
    if (search_command_build(&d->cmd, tool, &q) != 0)
        fail(query, "no command line for this query");
    if (proc_find_program(d->path, sizeof d->path, d->cmd.argv[0], NULL) != 0)
        fail(d->cmd.argv[0], "not in PATH");
    d->cmd.argv[0] = d->path;
    return d->cmd.argv;
}

static void full_scans(const env *e)
{
    static const struct {
        const char *name;
        search_tool tool;
    } tools[] = { { "rg", SEARCH_TOOL_RG },
                  { "git grep", SEARCH_TOOL_GIT_GREP },
                  { "grep", SEARCH_TOOL_GREP } };
    printf("\n| tool | tkd Search s | direct s | tkd/direct (median of "
           "rounds) | tkd's tool run/direct | matches |\n"
           "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < 3; i++) {
        direct_cmd d;
        side tkd = { NULL, RARE, tools[i].tool, 100000, false };
        side direct = { direct_argv(&d, tools[i].tool, RARE), RARE, 0, 0,
                        false };
        comparison c;
        compare(e, &tkd, &direct, &c);
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %zu |\n", tools[i].name, c.a,
               c.b, c.ratio, c.tool_ratio, c.oa.matches);
        (void)fflush(stdout);
    }
}

/* rg's full scan as the hits get denser: tkd reads, parses and sends
 * every match, the direct run only drains rg's JSON. malloc_reply: the
 * client decodes with malloc (the table's name says so). */
static void density_table(const env *e, bool malloc_reply)
{
    static const struct {
        const char *word, *freq;
    } words[] = { { RARE, "1 line in 9973" }, { MID, "1 line in 97" } };
    printf("\n| rg, query%s | hits | tkd Search s | direct s | tkd/direct "
           "(median of rounds) | tkd's tool run/direct | tkd after its tool "
           "ms | transport + client ms | rg's JSON MB |\n"
           "|---|---|---|---|---|---|---|---|---|\n",
           malloc_reply && e->arena != NULL
               ? " (reply decoded with malloc, not the arena)"
               : "");
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        direct_cmd d;
        side tkd = { NULL, words[i].word, SEARCH_TOOL_RG, 100000,
                     malloc_reply };
        side direct = { direct_argv(&d, SEARCH_TOOL_RG, words[i].word),
                        words[i].word, 0, 0, false };
        comparison c;
        compare(e, &tkd, &direct, &c);
        printf("| %s (%s) | %zu | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f | "
               "%.1f |\n",
               words[i].word, words[i].freq, c.oa.matches, c.a, c.b, c.ratio,
               c.tool_ratio, c.after_tool * 1e3, c.client_side * 1e3,
               (double)c.ob.out_bytes / 1e6);
        (void)fflush(stdout);
    }
}

static void density(const env *e)
{
    density_table(e, e->arena == NULL);
    if (e->arena != NULL)
        density_table(e, true);
}

static void limited(const env *e)
{
    direct_cmd d;
    side tkd = { NULL, HOT, SEARCH_TOOL_RG, 100, false };
    side direct = { direct_argv(&d, SEARCH_TOOL_RG, HOT), HOT, 0, 0, false };
    comparison c;
    compare(e, &tkd, &direct, &c);
    printf("\n| query | tkd Search limit 100 s | rg --json full scan s | "
           "full/limited (median of rounds) | reply |\n"
           "|---|---|---|---|---|\n");
    printf("| %s (every line) | %.4f | %.3f | %.0fx | %zu matches%s; rg "
           "wrote %.0f MB of JSON in the full scan |\n",
           HOT, c.a, c.b, 1 / c.ratio, c.oa.matches,
           c.oa.partial ? ", partial" : "", (double)c.ob.out_bytes / 1e6);
}

/* ---- main --------------------------------------------------------------- */

typedef struct args {
    const char *tkd, *corpus;
    const char *only; /* full, density or limit: that table alone */
    int mb, rounds;
    bool keep;
    bool no_arena;
} args;

static int parse(args *a, int argc, char **argv)
{
    *a = (args){ .mb = 200, .rounds = 5 };
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (argv[i] == NULL)
            return -1;
        if (strcmp(argv[i], "--tkd") == 0 && v != NULL)
            a->tkd = argv[++i];
        else if (strcmp(argv[i], "--corpus") == 0 && v != NULL)
            a->corpus = argv[++i];
        else if (strcmp(argv[i], "--mb") == 0 && v != NULL)
            a->mb = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && v != NULL)
            a->rounds = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && v != NULL)
            a->only = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0)
            a->keep = true;
        else if (strcmp(argv[i], "--no-arena") == 0)
            a->no_arena = true;
        else
            return -1;
    }
    if (a->tkd == NULL || a->mb < 1 || a->rounds < 1 || a->rounds > MAX_ROUNDS)
        return -1;
    if (a->only != NULL && strcmp(a->only, "full") != 0 &&
        strcmp(a->only, "density") != 0 && strcmp(a->only, "limit") != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    if (parse(&a, argc, argv) != 0) {
        fprintf(stderr, "usage: bench-search --tkd PATH [--corpus DIR] "
                        "[--mb N] [--rounds R (1..31)] [--keep]\n"
                        "       [--only full|density|limit] [--no-arena]\n");
        return 2;
    }
    char dir[PATH_MAX], corpus[PATH_MAX + 16], marker[PATH_MAX + 64];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tk-bench-search-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        die("mkdtemp");
    if (a.corpus != NULL)
        snprintf(corpus, sizeof corpus, "%s", a.corpus);
    else
        snprintf(corpus, sizeof corpus, "%s/corpus", dir);
    snprintf(marker, sizeof marker, "%s/.corpus-%d", corpus, a.mb);
    if (access(marker, F_OK) != 0) {
        if (mkdir(corpus, 0755) != 0 && errno != EEXIST)
            die(corpus);
        make_corpus(corpus, a.mb);
    }
    char url[PATH_MAX + 16];
    snprintf(url, sizeof url, "ipc://%s/tkd.sock", dir);
    const char *tkd_argv[] = { a.tkd,  "--listen",    url,    "--root",
                               corpus, "--log-level", "warn", NULL };
    pid_t tkd;
    tk_client *c = bench_start_tkd(tkd_argv, url, &tkd);
    make_tool_env();
    tk_arena *arena = NULL;
    if (!a.no_arena && tk_arena_new(&arena, 0) != TK_OK)
        fail("tk_arena_new", "out of memory");
    env e = { c, arena, corpus, a.rounds };
    printf("rounds: %d (median), corpus %d MB, replies decoded %s\n", a.rounds,
           a.mb,
           arena != NULL ? "into one arena, reset between calls"
                         : "with malloc (--no-arena)");
    if (a.only == NULL || strcmp(a.only, "full") == 0)
        full_scans(&e);
    if (a.only == NULL || strcmp(a.only, "density") == 0)
        density(&e);
    if (a.only == NULL || strcmp(a.only, "limit") == 0)
        limited(&e);
    tk_arena_free(arena);
    tk_client_close(c);
    kill(tkd, SIGTERM);
    waitpid(tkd, NULL, 0);
    bool keep = a.keep && a.corpus == NULL; /* a corpus made here */
    if (keep) {
        printf("kept: %s\n", corpus);
    } else { /* the socket, and the corpus when made here */
        const char *rm[] = { "/bin/rm", "-rf", dir, NULL };
        run(rm, "/");
    }
    return 0;
}
