/* SPDX-License-Identifier: MIT */
/* Small helpers of the Services module: a growable string (and the shell
 * words of a dry run), the error record and the warnings of a result. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services_int.h"

void services__buf_add(tkc_buf *b, const char *s, size_t n)
{
    if (tkc_buf_append(b, s, n) != 0)
        abort(); /* as rpc_call_alloc: nothing sensible to answer */
}

void services__buf_puts(tkc_buf *b, const char *s)
{
    services__buf_add(b, s, strlen(s));
}

void services__buf_printf(tkc_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        services__buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL)
        abort();
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    services__buf_add(b, big, (size_t)n);
    free(big);
}

void services__buf_shword(tkc_buf *b, const char *s)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                                "UVWXYZ0123456789_@%+=:,./-";
    if (s[0] != '\0' && s[strspn(s, plain)] == '\0') {
        services__buf_puts(b, s);
        return;
    }
    services__buf_puts(b, "'");
    for (const char *q; (q = strchr(s, '\'')) != NULL; s = q + 1) {
        services__buf_add(b, s, (size_t)(q - s));
        services__buf_puts(b, "'\\''");
    }
    services__buf_puts(b, s);
    services__buf_puts(b, "'");
}

void services__buf_shline(tkc_buf *b, const char *const *argv)
{
    for (size_t i = 0; argv[i] != NULL; i++) {
        if (i > 0)
            services__buf_puts(b, " ");
        services__buf_shword(b, argv[i]);
    }
    services__buf_puts(b, "\n");
}

void services__script_file(tkc_buf *b, const char *dir, const char *path,
                           const tkc_buf *def)
{
    const char *mk[] = { "mkdir", "-p", dir, NULL };
    services__buf_shline(b, mk);
    /* The spec has no newline in any field (spec.c), so no line of the
     * definition is the delimiter. */
    services__buf_puts(b, "cat > ");
    services__buf_shword(b, path);
    services__buf_puts(b, " <<'TKD_DEFINITION'\n");
    services__buf_add(b, (const char *)def->data, def->len);
    services__buf_puts(b, "TKD_DEFINITION\n");
}

bool services__buf_equal(const tkc_buf *a, const tkc_buf *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

int services__fail(services_error *e, rpc_code code, const char *reason,
                   const char *fmt, ...)
{
    e->code = code;
    e->reason = reason;
    e->stopped = false;
    e->fds_errno = 0;
    e->ran = false;
    e->output[0] =
        '\0'; /* services__keep_output fills it after, when a tool spoke */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

int services__fail_fds(services_error *e, int err, const char *fmt, ...)
{
    e->code = RPC_RESOURCE_EXHAUSTED;
    e->reason = RPC_R_TOO_MANY_OPEN_FILES;
    e->stopped = false;
    e->fds_errno = err;
    e->ran = false;
    e->output[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

int services__atoi(const char *s, int def)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || v < INT_MIN || v > INT_MAX)
        return def;
    return (int)v;
}

int services__stop(services_error *e, const char *what)
{
    services__fail(e, RPC_DEADLINE_EXCEEDED, "WRITE_TIMEOUT",
                   "stopped before %s: the call's time is up", what);
    e->stopped = true;
    return -1;
}

int services__fail_run(services_error *e, const tool_answer *a)
{
    services__fail(e, tool_answer_code(a), tool_answer_reason(a), "%s",
                   a->message);
    e->stopped = a->end == TOOL_END_STOPPED;
    e->fds_errno = a->end == TOOL_END_NO_FDS ? a->spawn_errno : 0;
    e->ran = true;
    e->run = *a;
    return -1;
}

void services__warn(services_result *res, const char *fmt, ...)
{
    if (res->n_warnings == SERVICES_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->warnings[res->n_warnings], sizeof res->warnings[0], fmt, ap);
    va_end(ap);
    res->n_warnings++;
}
