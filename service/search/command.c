/* SPDX-License-Identifier: MIT */
/* The tools: where they are (looked up once per process, in the PATH tkd
 * started with) and the command line each runs with. Every command line
 * matches literally (-F), passes the query after -e and ends its options
 * with --, so a query such as "-e" or "--help" is a query. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "proc/proc.h"
#include "search_int.h"

/* rg --json writes a line as JSON: escaped text or base64, its offsets and
 * its submatches again. A record this long holds a line of several MiB. */
#define RG_RECORD_MAX ((size_t)32 << 20)
/* A match record whose line alone is longer than RG_RECORD_MAX (a file of
 * one line of tens of MiB) is cut inside the line; it resumes where the
 * line's value ends, with the line's number (parse_rg.c). A quote inside
 * the line is escaped, so this text is never a part of it. */
#define RG_RESUME "\"},\"line_number\":"
/* grep, git grep: a path, two numbers, and the line (kept up to
 * SEARCH_LINE_MAX; what is cut beyond it is flagged). */
#define GREP_RECORD_MAX (SEARCH_LINE_MAX + (size_t)PATH_MAX + 64)

/* Absolute paths of the tools; NULL for a tool that is missing. */
typedef struct search_tools {
    const char *rg, *git, *grep;
} search_tools;

static pthread_once_t tools_once = PTHREAD_ONCE_INIT;
static char rg_path[PATH_MAX], git_path[PATH_MAX], grep_path[PATH_MAX];
static search_tools tools;

static const char *find(char *buf, size_t len, const char *name)
{
    return proc_find_program(buf, len, name, NULL) == 0 ? buf : NULL;
}

static void resolve_tools(void)
{
    tools.rg = find(rg_path, sizeof rg_path, "rg");
    tools.git = find(git_path, sizeof git_path, "git");
    tools.grep = find(grep_path, sizeof grep_path, "grep");
}

static const search_tools *search__tools(void)
{
    pthread_once(&tools_once, resolve_tools);
    return &tools;
}

const char *search__tool_path(search_tool tool)
{
    const search_tools *t = search__tools();
    switch (tool) {
    case SEARCH_TOOL_RG:
        return t->rg;
    case SEARCH_TOOL_GIT_GREP:
        return t->git;
    case SEARCH_TOOL_GREP:
        return t->grep;
    default:
        return NULL;
    }
}

const char *search_tool_name(search_tool tool)
{
    switch (tool) {
    case SEARCH_TOOL_RG:
        return "rg";
    case SEARCH_TOOL_GIT_GREP:
        return "git grep";
    case SEARCH_TOOL_GREP:
        return "grep";
    default:
        return "auto";
    }
}

/* Non-interactive, no optional locks, and bytes as bytes: in the C locale
 * no byte sequence is an encoding error that would make a file "binary". */
const char *const search__git_env[] = { "GIT_TERMINAL_PROMPT=0",
                                        "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C",
                                        NULL };
static const char *const c_locale_env[] = { "LC_ALL=C", NULL };
_Static_assert(sizeof search__git_env <= sizeof((search_command *)0)->env,
               "search_command.env holds git's environment");

typedef struct argv_builder {
    search_command *cmd;
    size_t n;
} argv_builder;

static void add(argv_builder *b, const char *arg)
{
    if (b->n + 1 < SEARCH_ARGV_MAX)
        b->cmd->argv[b->n++] = arg;
    b->cmd->argv[b->n] = NULL;
}

static void add_all(argv_builder *b, const char *const *args, size_t n)
{
    for (size_t i = 0; i < n; i++)
        add(b, args[i]);
}

/* The end of every command line: the query, literal, after -e, and the
 * end of the options. */
static void add_query(argv_builder *b, const search_query *q)
{
    if (q->ignore_case)
        add(b, "-i");
    add(b, "-e");
    add(b, q->text);
    add(b, "--");
}

/* rg --json --no-config --hidden --glob '!.git' -F -e Q -- .: the path is
 * explicit (without one rg would read stdin); hidden files are searched,
 * .git/ is not. */
static void rg_command(argv_builder *b, const search_query *q)
{
    add(b, "rg");
    add(b, "--json");
    add(b, "--no-config");
    if (q->include_hidden)
        add(b, "--hidden");
    add(b, "--glob");
    add(b, "!.git");
    add(b, "-F");
    add_query(b, q);
    add(b, ".");
    b->cmd->record_max = RG_RECORD_MAX;
    b->cmd->record_resume = RG_RESUME;
}

/* git grep -z -n --column --untracked -I -F -e Q --: NUL after each field,
 * untracked files that are not ignored, no binary files. The -c settings
 * keep a user's configuration from changing the output: paths relative to
 * the working directory (the root), no colour, no submodule recursion
 * (which --untracked refuses); and git discovers no implicit bare
 * repository (SEARCH_GIT_SAFE_BARE). */
static void git_command(argv_builder *b, const search_query *q)
{
    static const char *const head[] = {
        "git",
        "-c",
        SEARCH_GIT_SAFE_BARE,
        "-c",
        "core.quotepath=off",
        "-c",
        "grep.fullName=false",
        "-c",
        "submodule.recurse=false",
        "grep",
        "--no-color",
        "-z",
        "-n",
        "--column",
        "--untracked",
        "-I",
        "-F",
    };
    add_all(b, head, sizeof head / sizeof head[0]);
    add_query(b, q);
    if (!q->include_hidden) { /* a hidden file, and all under a hidden dir */
        add(b, ":(exclude,glob)**/.*");
        add(b, ":(exclude,glob)**/.*/**");
    }
    b->cmd->record_max = GREP_RECORD_MAX;
    memcpy(b->cmd->env, search__git_env, sizeof search__git_env);
}

/* grep -r --null -n -I -F --exclude-dir=.git --exclude-dir=node_modules
 * -e Q -- .: grep knows no ignore files, so the directories no one means
 * to search are named. Hidden ones: ".?*", since ".*" would match the
 * "." it starts from. */
static void grep_command(argv_builder *b, const search_query *q)
{
    static const char *const head[] = {
        "grep",
        "-r",
        "--null",
        "-n",
        "-I",
        "-F",
        "--exclude-dir=.git",
        "--exclude-dir=node_modules",
    };
    add_all(b, head, sizeof head / sizeof head[0]);
    if (!q->include_hidden) {
        add(b, "--exclude-dir=.?*");
        add(b, "--exclude=.*");
    }
    add_query(b, q);
    add(b, ".");
    b->cmd->record_max = GREP_RECORD_MAX;
    memcpy(b->cmd->env, c_locale_env, sizeof c_locale_env);
}

int search_command_build(search_command *out, search_tool tool,
                         const search_query *q)
{
    memset(out, 0, sizeof *out);
    out->record_delim = '\n';
    if (q->text == NULL || q->len == 0 || strlen(q->text) != q->len)
        return -EINVAL;
    argv_builder b = { out, 0 };
    switch (tool) {
    case SEARCH_TOOL_RG:
        if (!tkc_utf8_valid(q->text, q->len))
            return -EINVAL; /* rg would refuse it: exit status 2 */
        rg_command(&b, q);
        return 0;
    case SEARCH_TOOL_GIT_GREP:
        git_command(&b, q);
        return 0;
    case SEARCH_TOOL_GREP:
        grep_command(&b, q);
        return 0;
    default:
        return -EINVAL;
    }
}
