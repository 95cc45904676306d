/* SPDX-License-Identifier: MIT */
/* A commit's raw message as git's %s (the subject) and %b (the body),
 * the way git's pretty.c cuts them, into Log's reply (log.c). */
#include <stdbool.h>
#include <string.h>

#include "git_int.h"

/* Length of the line at p (with its '\n'), and whether it is blank. */
static size_t one_line(const char *p, bool *blank, size_t *trimmed)
{
    size_t n = strcspn(p, "\n");
    size_t t = n;
    while (t > 0 && strchr(" \t\r\v\f", p[t - 1]) != NULL)
        t--;
    *blank = t == 0;
    *trimmed = t;
    return n + (p[n] == '\n');
}

static const char *skip_blank_lines(const char *p)
{
    bool blank;
    size_t t, n;
    while (*p != '\0' && (n = one_line(p, &blank, &t), blank))
        p += n;
    return p;
}

/* git's %s (the first paragraph, lines trimmed and joined by spaces) and
 * %b (the rest after the blank lines that follow it), from pretty.c. */
void tkgit__subject_body(rpc_call *call, const char *msg,
                         Tk__V1__GitCommit *out)
{
    const char *p = skip_blank_lines(msg);
    /* The first paragraph's bytes bound the subject's (the lines' ends
     * become single spaces), not the whole message's: one copy of a long
     * body, not two. */
    size_t cap = 1, len = 0;
    for (const char *q = p;;) {
        bool blank;
        size_t t, n = one_line(q, &blank, &t);
        if (n == 0 || blank)
            break;
        cap += n;
        q += n;
    }
    char *subject = rpc_call_alloc(call, cap);
    for (;;) {
        bool blank;
        size_t t, n = one_line(p, &blank, &t);
        if (n == 0 || blank)
            break;
        if (len > 0)
            subject[len++] = ' ';
        memcpy(subject + len, p, t);
        len += t;
        p += n;
    }
    out->subject.data = (uint8_t *)subject;
    out->subject.len = len;
    p = skip_blank_lines(p);
    out->body = rpc_call_bytes(call, p, strlen(p));
}

void tkgit__test_message(rpc_call *call, const char *message,
                         Tk__V1__GitCommit *out)
{
    tkgit__subject_body(call, message, out);
}
