/* SPDX-License-Identifier: MIT */
/*
 * git_log: a commit message, any bytes up to the first NUL (as libgit2
 * hands it to Log), through Log's reading of it into subject and body
 * (service/git/message.c, tkgit__test_message), against a model of git's
 * %s and %b written here from git's pretty.c: skip blank lines; the
 * subject is the first paragraph's lines, each without trailing white
 * space, joined by one space; the body is what follows the blank lines
 * after it, as it is. Blank: nothing but space, tab, CR, VT, FF.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "git/git.h"
#include "rpc/rpc.h"

static bool white(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The line at p: its length without '\n' in *n, without trailing white
 * space in *t; returns the start of the next line. */
static const char *line(const char *p, size_t *n, size_t *t)
{
    const char *e = strchr(p, '\n');
    *n = e != NULL ? (size_t)(e - p) : strlen(p);
    *t = *n;
    while (*t > 0 && white(p[*t - 1]))
        (*t)--;
    return e != NULL ? e + 1 : p + *n;
}

static const char *skip_blank(const char *p)
{
    size_t n, t;
    const char *next;
    while (*p != '\0' && (next = line(p, &n, &t), t == 0))
        p = next;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *msg = malloc(size + 1);
    char *want = malloc(size + 1);
    FUZZ_CHECK(msg != NULL && want != NULL, "out of memory");
    memcpy(msg, data, size);
    msg[size] = '\0';

    size_t len = 0, n, t;
    const char *p = skip_blank(msg);
    while (*p != '\0') {
        const char *next = line(p, &n, &t);
        if (t == 0)
            break;
        if (len > 0)
            want[len++] = ' ';
        memcpy(want + len, p, t);
        len += t;
        p = next;
    }
    const char *body = skip_blank(p);

    rpc_call *call = rpc__test_call_new();
    FUZZ_CHECK(call != NULL, "out of memory");
    Tk__V1__GitCommit c = TK__V1__GIT_COMMIT__INIT;
    tkgit__test_message(call, msg, &c);
    FUZZ_CHECK(c.subject.len == len &&
                   (len == 0 || memcmp(c.subject.data, want, len) == 0),
               "subject of %zu bytes, want %zu: \"%.*s\"", c.subject.len, len,
               (int)len, want);
    size_t blen = strlen(body);
    FUZZ_CHECK(c.body.len == blen &&
                   (blen == 0 || memcmp(c.body.data, body, blen) == 0),
               "body of %zu bytes, want %zu", c.body.len, blen);
    rpc__test_call_free(call);
    free(want);
    free(msg);
    return 0;
}
