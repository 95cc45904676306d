/* SPDX-License-Identifier: MIT */
/* launchctl, plutil, systemctl and loginctl, run through tool/ and only
 * there: a READ's runs follow its caller, a WRITE's ignore it and end at
 * its own deadline (tool/ says how); each run is bound by
 * SERVICES_TOOL_TIMEOUT_MS too. What the tools say is the backends'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services_int.h"

void services__find_tool(char *out, size_t len, const char *name,
                         const char *path)
{
    if (proc_find_program(out, len, name, path) != 0)
        out[0] = '\0';
}

/* The environment every tool gets on top of proc's allowlist: messages in
 * English (they are matched, e.g. "Input/output error"), plus the
 * caller's. */
static void build_env(const char **env, size_t cap,
                      const char *const *extra_env)
{
    size_t n = 0;
    env[n++] = "LC_ALL=C";
    for (; extra_env != NULL && *extra_env != NULL && n + 1 < cap; extra_env++)
        env[n++] = *extra_env;
    env[n] = NULL;
}

int services__run(services_out *o, const services_ctx *c, const char *tool,
                  const char *const *argv, const char *const *extra_env,
                  services_error *e)
{
    memset(o, 0, sizeof *o);
    o->exit = -1;
    const char *env[16];
    build_env(env, sizeof env / sizeof *env, extra_env);
    tool_opts t;
    tool_opts_init(&t, argv[0], tool, argv);
    t.proc.env = env;
    t.proc.stdout_cap = (size_t)1024 * 1024;
    t.timeout_ms = SERVICES_TOOL_TIMEOUT_MS;
    t.deadline_ns = c->deadline_ns; /* only for a run with no call */
    proc_result r;
    tool_answer a;
    int rv = 0;
    if (tool_try(&r, &a, c->call, &t) != TOOL_END_EXITED) {
        rv = services__fail_run(e, &a);
    } else {
        o->exit = r.status.kind == PROC_STATUS_EXITED ? r.status.code : -1;
        o->out = r.out;
        o->err = r.err;
        r.out = r.err = NULL;
    }
    proc_result_fini(&r);
    return rv;
}

void services__out_fini(services_out *o)
{
    free(o->out);
    free(o->err);
    o->out = o->err = NULL;
}

static const char *trimmed(char *s)
{
    if (s == NULL)
        return "";
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

const char *services__out_text(const services_out *o)
{
    const char *err = trimmed(o->err);
    return err[0] != '\0' ? err : trimmed(o->out);
}

void services__keep_output(services_error *e, const services_out *o)
{
    snprintf(e->output, sizeof e->output, "%s", services__out_text(o));
}

int services__sleep_ms(const services_ctx *c, unsigned ms, services_error *e)
{
    int64_t until = proc_now_ns() + (int64_t)ms * 1000000;
    if (until > c->deadline_ns)
        return services__stop(e, "waiting again");
    struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
                           .tv_nsec = (long)(ms % 1000) * 1000000L };
    /* A WRITE's own pace, not synchronisation: the 200 ms poll and the
     * backoff between bootstrap attempts. */
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return 0;
}
