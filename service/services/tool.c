/* launchctl, plutil, systemctl and loginctl, run through proc/ and only
 * there. A WRITE's runs ignore its caller and end at the call's own
 * deadline; a READ's also end when the caller cancels. */
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

static uint32_t run_timeout_ms(const services_ctx *c)
{
    int64_t left = (c->deadline_ns - proc_now_ns()) / 1000000;
    if (left <= 0)
        return 0;
    return left < SERVICES_TOOL_TIMEOUT_MS ? (uint32_t)left
                                           : SERVICES_TOOL_TIMEOUT_MS;
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

static int describe_failure(const services_ctx *c, const proc_result *r,
                            const char *name, services_error *e)
{
    char what[256];
    proc_result_describe(what, sizeof what, r);
    /* The call's own time, not the tool's bound, ran out; or tkd stopped
     * the write past its shutdown grace. */
    if (r->end == PROC_END_CANCELLED || r->end == PROC_END_DEADLINE ||
        r->end == PROC_END_ABORTED ||
        (r->end == PROC_END_TIMEOUT && proc_now_ns() >= c->deadline_ns))
        return services__stop(e, name);
    if (!r->started && rpc_fds_exhausted(r->spawn_errno))
        return services__fail_fds(e, r->spawn_errno, "cannot run %s: %s", name,
                                  what);
    if (!r->started)
        return services__fail(e, RPC_FAILED_PRECONDITION, "TOOL_NOT_FOUND",
                              "cannot run %s: %s", name, what);
    return services__fail(e, RPC_UNAVAILABLE, "TOOL_TIMEOUT", "%s %s", name,
                          what);
}

/* proc's on_group: the call names the tool's process group. */
static void note_group(void *call, pid_t pgid)
{
    rpc_call_set_process(call, pgid);
}

int services__run(services_out *o, const services_ctx *c, const char *tool,
                  const char *const *argv, const char *const *extra_env,
                  services_error *e)
{
    memset(o, 0, sizeof *o);
    o->exit = -1;
    uint32_t timeout = run_timeout_ms(c);
    if (timeout == 0)
        return services__stop(e, argv[0]);
    const char *env[16];
    build_env(env, sizeof env / sizeof *env, extra_env);
    proc_opts opts;
    proc_opts_init(&opts);
    opts.path = tool;
    opts.argv = argv;
    opts.env = env;
    opts.kind = c->kind;
    opts.cancel_fd = c->cancel_fd; /* a READ's */
    opts.abort_fd = c->cancel_fd;  /* a WRITE's */
    opts.deadline_ns = c->deadline_ns;
    if (c->call != NULL) {
        opts.on_group = note_group;
        opts.on_group_arg = c->call;
    }
    opts.timeout_ms = timeout;
    opts.stdout_cap = (size_t)1024 * 1024;
    proc_result r;
    proc_run(&r, &opts);
    int rv = 0;
    if (r.end != PROC_END_EXITED) {
        rv = describe_failure(c, &r, argv[0], e);
    } else {
        o->exit = r.status.kind == PROC_STATUS_EXITED ? r.status.code : -1;
        o->out = r.out;
        o->err = r.err;
        r.out = r.err = NULL;
    }
    proc_result_free(&r);
    return rv;
}

void services__out_free(services_out *o)
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
