/* SPDX-License-Identifier: MIT */
/* What tkcall says to people about how it is used: --help's text, usage
 * errors (exit 64), notes on stderr, and durations as people type and read
 * them.
 *
 * Owns: tkcall__usage_text and the messages of a usage error.
 * May call: output.c (a status printed), libc.
 * Must never: call tkd, read the command line (args.c does). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>
#include <tk/json.h>

#include "common/common.h"

#include "tkcall.h"
#include "tkcall_int.h"

const char tkcall__usage_text[] =
    "usage: tkcall [options] METHOD              call METHOD\n"
    "       tkcall [options] list [SERVICE]      the methods tkd serves\n"
    "       tkcall [options] describe NAME       a service, method, message\n"
    "                                            or enum, with its comments\n"
    "       tkcall --help | --version\n"
    "\n"
    "A grpcurl-style client of tkd. METHOD is a full name such as\n"
    "tk.v1.Control/Ping, grpcurl's tk.v1.Control.Ping, or any tail of it\n"
    "that names one method (Control/Ping, ping), in any case; SERVICE and\n"
    "NAME alike (list git, describe PingRequest). Requests and replies are\n"
    "JSON in the proto3 JSON mapping: lowerCamelCase names (proto names\n"
    "accepted too), 64-bit integers as strings, enums by name; but bytes\n"
    "fields (git's paths, branch names, patches, search lines) are text when\n"
    "they are UTF-8, \"gen/\", and {\"base64\":\"Z2Vu/w==\"} when they are\n"
    "not. A string typed into a bytes field is its text, never base64. A\n"
    "relative path in a field that names a file (describe marks them\n"
    "\"path:\") is made absolute against the working directory.\n"
    "\n"
    "options:\n"
    "  -a, --addr URL|PATH     tkd's address; default $TK_ADDR, else\n"
    "                          ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else\n"
    "                          ipc:///tmp/tk-$UID/tkd.sock; a bare socket\n"
    "                          path (/run/tk/tkd.sock) means ipc:// it; a\n"
    "                          comma-separated list of URLs: the first\n"
    "                          that connects (a fleet: see below); the\n"
    "                          schemes are ipc://, tls+tcp:// and a lab's\n"
    "                          tcp:// (tkd --insecure-plain-tcp); any\n"
    "                          other is a usage error\n"
    "      --cacert FILE       for tls+tcp://: the CA (PEM) that signed\n"
    "                          tkd's certificate; default $TK_TLS_CA\n"
    "      --cert FILE         this client's certificate (PEM), which tkd\n"
    "                          requires; default $TK_TLS_CERT\n"
    "      --key FILE          its private key (PEM); default $TK_TLS_KEY\n"
    "  -t, --timeout DURATION  the call's deadline, enforced by tkd\n"
    "                          (default 30s): 500ms, 30s, 1.5s, 2m, 1h, or a\n"
    "                          bare number of seconds; 0 means the method's\n"
    "                          own default (see describe)\n"
    "  -d, --data JSON|@FILE|@-\n"
    "                          the request (default {}); @FILE reads a file,\n"
    "                          @- (or grpcurl's @) standard input\n"
    "  -o, --output FORMAT     how the reply is printed (default text):\n"
    "                          text     the method's text form where it has\n"
    "                                   one (below), else JSON as json\n"
    "                          long     as text, with Git/Log in git log's\n"
    "                                   long form\n"
    "                          json     pretty JSON, the proto3 mapping: the\n"
    "                                   stable form for scripts\n"
    "                          compact  the same JSON on one line (jq, logs)\n"
    "      --color WHEN        colour in the text forms: auto (default: only\n"
    "                          when stdout is a terminal, NO_COLOR is unset\n"
    "                          or empty and TERM is not dumb), always, never\n"
    "  -v, --verbose           for every call, OK or not, on stderr: the\n"
    "                          method, the deadline sent, the status, tkd's\n"
    "                          elapsed time and what did the work (the\n"
    "                          program tkd ran, or libgit2, postgresql)\n"
    "                          and, in a fleet, the node that carried it\n"
    "      --node ID           in a fleet: call node ID, whatever the\n"
    "                          routing would pick (Services need one)\n"
    "      --retry-reads       in a fleet: a read whose node could not be\n"
    "                          reached or stopped answering is tried on the\n"
    "                          next node that can serve it, within the one\n"
    "                          deadline (a write never is)\n"
    "  -D, --emit-defaults     print reply fields that hold default values\n"
    "                          (JSON)\n"
    "      --proto-json        the strict proto3 JSON mapping, both ways:\n"
    "                          bytes as base64 strings, as grpcurl, buf curl\n"
    "                          and other proto3 JSON tools read and write "
    "them\n"
    "  -h, --help              this text (grpcurl's single-dash options,\n"
    "                          -cacert, -max-time, -H, -plaintext ..., are\n"
    "                          refused with tkcall's name for each, or why\n"
    "                          tk has none)\n"
    "  -V, --version           the version\n"
    "\n"
    "Text forms (bytes such as paths and lines are written as they are):\n"
    "  Search/Search, Git/Grep  path:line:column:text, as rg --column\n"
    "  Git/Log                  git log --oneline; -o long: git log\n"
    "  Git/Status               git status --short --branch\n"
    "  Git/Diff                 the patch\n"
    "  Git/RevParse, Commit, Checkout  the object id; WorktreeAdd: PATH OID;\n"
    "                           WorktreeRemove, ConfigSet: nothing\n"
    "  Git/ConfigGet            the value, as git config --get\n"
    "  Orders/*                 a line an order: order ID STATE ...\n"
    "Every other method prints JSON under -o text too. Scripts should say\n"
    "-o json (or compact): the text forms are for people and may change.\n"
    "\n"
    "The reply is printed on stdout. A reply that is OK but partial (a limit\n"
    "was reached: Search's limit, Grep's maxMatches) says so on stderr.\n"
    "A status other than OK is printed on stderr. On a terminal, unless -o\n"
    "json or compact is asked for, it is text for a person, one item a line\n"
    "(ERROR:, then Code:, Reason:, Message:, Cancellation:, Partial:, Retry\n"
    "after:, Stderr:, Node:, From:); otherwise it is one JSON object:\n"
    "{\"code\":\"DEADLINE_EXCEEDED\",\"reason\":..,\n"
    "\"message\":..,\"stderr\":..,\"partial\":..,\"retryAfterMs\":..,\n"
    "\"elapsedUs\":..,\"fromServer\":..,\"node\":..,\n"
    "\"cancellation\":{\"cause\":..,\"processKilled\":..,\n"
    "\"writeCompleted\":..,\"cleanupMs\":..}}, members that are empty or\n"
    "zero left out (code, message and fromServer never; node is a fleet's).\n"
    "A write whose deadline passed after it had started ran to completion\n"
    "on tkd: tkcall waits for it, exits 0 when it succeeded, and prints its\n"
    "OK status on stderr too, with \"writeCompleted\":true.\n"
    "\n"
    "Ctrl-C cancels the call (tk.v1.Control/Cancel on its connection): a\n"
    "read ends CANCELLED; a write that has started runs to completion on\n"
    "tkd, and tkcall says so and waits for its reply. A second Ctrl-C\n"
    "exits at once.\n"
    "\n"
    "A fleet (tkd --node-id on several machines, sharing one PostgreSQL):\n"
    "tkcall asks the tkd it reaches over tcp:// or tls+tcp:// for the\n"
    "nodes (tkcall Control/ListNodes shows them) and sends each call to\n"
    "one: Git and Search to the node whose root holds the request's path\n"
    "(none: NOT_FOUND NO_NODE_FOR_PATH), Orders and Control to any live\n"
    "node in turn, Services to the node --node names (without it, with\n"
    "several nodes: INVALID_ARGUMENT NODE_REQUIRED). A call whose node\n"
    "stops answering (no answer to a Ping after 5 s of waiting, within 5\n"
    "s) ends UNAVAILABLE: whether it ran is unknown.\n"
    "\n"
    "exit status:\n"
    "  0       OK, a search or Grep that matched nothing included: it\n"
    "          prints nothing (-o json: no \"matches\"); rg and grep exit\n"
    "          1 there, but tkcall's 1 is CANCELLED\n"
    "  1..16   the gRPC code of a non-OK status, sent by tkd or made by the\n"
    "          client: 1 CANCELLED (Ctrl-C), 4 DEADLINE_EXCEEDED (also when\n"
    "          no reply came in time), 5 NOT_FOUND (list with an unknown\n"
    "          service), 14 UNAVAILABLE (tkd not running or unreachable), ...\n"
    "          (a code beyond 16 exits 2, UNKNOWN)\n"
    "  64      usage: bad flags or duration, an address tkcall cannot\n"
    "          dial (http://), unreadable -d @FILE, a method\n"
    "          neither tkcall's catalog nor tkd knows (or a name that fits\n"
    "          more than one), an unknown message\n"
    "  65      bad request data: the JSON does not parse or does not match\n"
    "          the request message (the message names the field)\n"
    "  130     interrupted: a second Ctrl-C, or one outside a call\n";

int tkcall__usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("tkcall: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    return TKCALL_EXIT_USAGE;
}

/* grpcurl's single-dash options whose name tkcall does not have (args.c
 * says "did you mean --cacert?" for those it has): tkcall's option for
 * each, or why tk has none. */
static const struct habit {
    const char *name;  /* after the one dash, before any = */
    const char *ours;  /* tkcall's option, or NULL */
    const char *words; /* after "did you mean ours?", or the reason */
} habits[] = {
    { "max-time", "--timeout",
      "(the call's deadline, enforced by tkd: 30s, 1.5s, or seconds)" },
    { "connect-timeout", "--timeout", "(tkcall has one deadline, the call's)" },
    { "format", "-o/--output",
      "(requests are JSON always; -o text|long|json|compact is how the "
      "reply prints)" },
    { "format-error", "-o json",
      "(errors are JSON with -o json or compact, or when stderr is not a "
      "terminal)" },
    { "unix", "--addr PATH", "(a socket path is ipc:// that path)" },
    { "H", NULL,
      "tk has no headers: a call is its method, request (-d) and deadline "
      "(--timeout) alone; what a header would carry goes in the request" },
    { "rpc-header", NULL, "tk has no headers: see -H" },
    { "reflect-header", NULL, "tk has no headers: see -H" },
    { "expand-headers", NULL, "tk has no headers: see -H" },
    { "plaintext", NULL,
      "tkd has no plaintext TCP (but for a lab: tkd --insecure-plain-tcp, "
      "which authenticates no one); call ipc:// on this machine (the "
      "default) or tls+tcp:// with --cacert, --cert and --key" },
    { "insecure", NULL,
      "tkcall always checks tkd's certificate: give the CA that signed it "
      "with --cacert FILE" },
    { "proto", NULL,
      "tkcall has tk's protos built in and asks tkd what it serves "
      "(tkcall list, tkcall describe NAME): there is nothing to load" },
    { "protoset", NULL, "tkcall has tk's protos built in: see -proto" },
    { "import-path", NULL, "tkcall has tk's protos built in: see -proto" },
    { "use-reflection", NULL, "tkcall has tk's protos built in: see -proto" },
    { "allow-unknown-fields", NULL,
      "tkcall refuses a field the request message does not have, and "
      "names it: take it out of -d" },
};

int tkcall__foreign_option(const char *arg)
{
    if (arg[0] != '-' || arg[1] == '-' || arg[1] == '\0')
        return -1;
    size_t n = strcspn(arg + 1, "=");
    for (size_t i = 0; i < sizeof habits / sizeof habits[0]; i++) {
        const struct habit *h = &habits[i];
        if (strlen(h->name) != n || strncmp(arg + 1, h->name, n) != 0)
            continue;
        if (h->ours != NULL)
            return tkcall__usage_error(
                "-%.*s: did you mean %s?%s%s", (int)n, arg + 1, h->ours,
                h->words != NULL ? " " : "", h->words != NULL ? h->words : "");
        return tkcall__usage_error("-%.*s: %s", (int)n, arg + 1, h->words);
    }
    return -1;
}

void tkcall__note(const char *text)
{
    fputs(text, stderr);
}

/* "5s", "1m", "1500ms": a duration as --timeout reads it. */
void tkcall__format_ms(char *buf, size_t len, uint32_t ms)
{
    if (ms != 0 && ms % 3600000u == 0)
        snprintf(buf, len, "%uh", ms / 3600000u);
    else if (ms != 0 && ms % 60000u == 0)
        snprintf(buf, len, "%um", ms / 60000u);
    else if (ms % 1000u == 0)
        snprintf(buf, len, "%us", ms / 1000u);
    else
        snprintf(buf, len, "%ums", ms);
}

/* "500ms", "30s", "1.5s", "2m", "1h", or a bare number of seconds. 0 is
 * allowed (the method's default); a positive value below 1 ms is 1 ms. */
int tkcall__parse_duration(uint32_t *out_ms, const char *s)
{
    size_t i = 0, digits = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return -1;
    const char *unit = s + i;
    double scale = strcmp(unit, "") == 0 || strcmp(unit, "s") == 0 ? 1000
                   : strcmp(unit, "ms") == 0                       ? 1
                   : strcmp(unit, "m") == 0                        ? 60000
                   : strcmp(unit, "h") == 0                        ? 3600000
                                                                   : -1;
    if (scale < 0)
        return -1;
    double ms = strtod(s, NULL) * scale;
    if (!(ms >= 0) || ms > (double)UINT32_MAX)
        return -1;
    *out_ms = (uint32_t)(ms + 0.5);
    if (*out_ms == 0 && ms > 0)
        *out_ms = 1;
    return 0;
}

int tkcall__out_of_memory(void)
{
    tk_status st = { 0 };
    tkcall_make_status(&st, TK_CODE_INTERNAL, "out of memory");
    return tkcall_report(&st);
}
