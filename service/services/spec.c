/* SPDX-License-Identifier: MIT */
/* A ServiceSpec checked field by field. Everything a backend writes comes
 * from here, so a rule that keeps one backend's file well formed is a rule
 * for both: the same spec is valid everywhere or nowhere. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "services_int.h"

/* Valid UTF-8 without control characters (tab allowed when tab_ok), and
 * without U+FFFE/U+FFFF, which XML cannot carry. */
static bool text_ok(const char *s, bool tab_ok)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if ((c < 0x20 && !(tab_ok && c == '\t')) || c == 0x7f)
                return false;
            i++;
            continue;
        }
        uint32_t cp = 0;
        size_t n = tkc_utf8_seq(s + i, len - i, &cp);
        if (n == 0 || cp == 0xfffe || cp == 0xffff)
            return false;
        i += n;
    }
    return true;
}

int services__label_check(const char *label, services_error *e)
{
    size_t n = strlen(label);
    if (n == 0)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
                              "spec.label is empty");
    if (n > SERVICES_LABEL_MAX)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
                              "spec.label is longer than %u bytes",
                              SERVICES_LABEL_MAX);
    /* It is a file name in both backends and a systemd unit name: no '/',
     * no space, no '@' (a template), no '\' (unit-name escapes). */
    size_t ok = strspn(label, "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
    if (ok != n)
        return services__fail(
            e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
            "spec.label \"%.200s\" has a character other than "
            "letters, digits, '.', '_' and '-' (at byte %zu)",
            text_ok(label, false) ? label : "?", ok);
    if (strchr("._-", label[0]) != NULL)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_LABEL",
                              "spec.label must start with a letter or a digit");
    return 0;
}

/* Absolute and normalized (no "//", "." or ".." parts, no trailing '/'),
 * no control characters, no trailing white space (a unit file drops it). */
static const char *path_problem(const char *p)
{
    size_t n = strlen(p);
    if (p[0] != '/')
        return "is not an absolute path";
    if (n >= PATH_MAX)
        return "is too long";
    if (!text_ok(p, false))
        return "has a control character or is not UTF-8";
    if (n > 1 && p[n - 1] == '/')
        return "ends in '/'";
    if (p[n - 1] == ' ')
        return "ends in a space";
    if (p[n - 1] == '\\') /* a unit file would join the next line */
        return "ends in a backslash";
    if (strstr(p, "//") != NULL || strstr(p, "/./") != NULL ||
        strstr(p, "/../") != NULL ||
        strcmp(p + (n >= 2 ? n - 2 : 0), "/.") == 0 ||
        strcmp(p + (n >= 3 ? n - 3 : 0), "/..") == 0)
        return "is not normalized (\"//\", \".\" or \"..\")";
    return NULL;
}

static int check_program(const char *program, services_error *e)
{
    if (program[0] == '\0')
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_PROGRAM",
                              "spec.program is empty");
    const char *why = path_problem(program);
    if (why != NULL)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_PROGRAM",
                              "spec.program %s", why);
    if (strchr(program, '$') != NULL)
        return services__fail(
            e, RPC_INVALID_ARGUMENT, "BAD_PROGRAM",
            "spec.program has a '$', which systemd would take "
            "for a variable in the program's argv[0]");
    struct stat st;
    char ebuf[128];
    if (stat(program, &st) != 0)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_PROGRAM",
                              "spec.program %.1024s: %s", program,
                              tkc_strerror(errno, ebuf, sizeof ebuf));
    if (!S_ISREG(st.st_mode) || access(program, X_OK) != 0)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_PROGRAM",
                              "spec.program %.1024s is not an executable file",
                              program);
    return 0;
}

static int check_path(const char *field, const char *reason, const char *p,
                      services_error *e)
{
    if (p[0] == '\0')
        return 0;
    const char *why = path_problem(p);
    if (why != NULL)
        return services__fail(e, RPC_INVALID_ARGUMENT, reason, "spec.%s %s",
                              field, why);
    return 0;
}

static int check_args(const Tk__V1__ServiceSpec *m, services_error *e)
{
    for (size_t i = 0; i < m->n_args; i++) {
        if (strchr(m->args[i], '\n') != NULL)
            return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_ARG",
                                  "spec.args[%zu] has a newline", i);
        if (!text_ok(m->args[i], true))
            return services__fail(
                e, RPC_INVALID_ARGUMENT, "BAD_ARG",
                "spec.args[%zu] has a control character other "
                "than tab, or is not UTF-8",
                i);
    }
    return 0;
}

static int env_cmp(const void *a, const void *b)
{
    const services_env *x = a;
    const services_env *y = b;
    int c = strcmp(x->name, y->name);
    /* stable for equal names: the later entry sorts after */
    return c != 0 ? c : (x < y ? -1 : x > y);
}

static int check_env_entry(const char *name, const char *value,
                           services_error *e)
{
    size_t n = strlen(name);
    if (n == 0 || strchr("0123456789", name[0]) != NULL ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_") != n)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_ENV",
                              "spec.env: \"%.100s\" is not a variable name "
                              "(letters, digits and '_', not starting with a "
                              "digit)",
                              text_ok(name, false) ? name : "?");
    if (!text_ok(value, false))
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_ENV",
                              "spec.env[%s] has a control character or is not "
                              "UTF-8",
                              name);
    return 0;
}

/* Sorted by name; of repeated names (a map sent twice on the wire) the
 * last wins, as protobuf says. */
static int take_env(services_spec *s, const Tk__V1__ServiceSpec *m,
                    services_error *e)
{
    if (m->n_env == 0)
        return 0;
    services_env *env = calloc(m->n_env, sizeof *env);
    if (env == NULL)
        return services__fail(e, RPC_RESOURCE_EXHAUSTED, "NO_MEMORY",
                              "out of memory");
    for (size_t i = 0; i < m->n_env; i++) {
        env[i].name = m->env[i]->key;
        env[i].value = m->env[i]->value;
        if (check_env_entry(env[i].name, env[i].value, e) != 0) {
            free(env);
            return -1;
        }
    }
    qsort(env, m->n_env, sizeof *env, env_cmp);
    size_t n = 0;
    for (size_t i = 0; i < m->n_env; i++) {
        if (n > 0 && strcmp(env[n - 1].name, env[i].name) == 0)
            n--;
        env[n++] = env[i];
    }
    s->env = env;
    s->n_env = n;
    return 0;
}

static int take_restart(services_spec *s, int restart, unsigned throttle,
                        services_error *e)
{
    switch (restart) {
    case TK__V1__SERVICE_SPEC__RESTART__RESTART_UNSPECIFIED:
    case TK__V1__SERVICE_SPEC__RESTART__ON_FAILURE:
        s->restart = SERVICES_ON_FAILURE;
        break;
    case TK__V1__SERVICE_SPEC__RESTART__ALWAYS:
        s->restart = SERVICES_ALWAYS;
        break;
    case TK__V1__SERVICE_SPEC__RESTART__NEVER:
        s->restart = SERVICES_NEVER;
        break;
    default:
        return services__fail(
            e, RPC_INVALID_ARGUMENT, "BAD_RESTART",
            "spec.restart: unknown value %d (ON_FAILURE, ALWAYS "
            "or NEVER)",
            restart);
    }
    if (throttle > SERVICES_MAX_THROTTLE)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_THROTTLE",
                              "spec.throttle_seconds: %u is more than %u",
                              throttle, SERVICES_MAX_THROTTLE);
    s->throttle = throttle != 0 ? throttle : SERVICES_DEFAULT_THROTTLE;
    return 0;
}

static int take_stop_timeout(services_spec *s, unsigned seconds,
                             services_error *e)
{
    if (seconds > SERVICES_MAX_STOP_TIMEOUT)
        return services__fail(e, RPC_INVALID_ARGUMENT, "BAD_STOP_TIMEOUT",
                              "spec.stop_timeout_seconds: %u is more than %u",
                              seconds, SERVICES_MAX_STOP_TIMEOUT);
    s->stop_timeout = seconds;
    return 0;
}

int services__spec_from_msg(services_spec *out, const Tk__V1__ServiceSpec *m,
                            services_error *e)
{
    memset(out, 0, sizeof *out);
    if (m == NULL)
        return services__fail(e, RPC_INVALID_ARGUMENT, "MISSING_FIELD",
                              "spec is required");
    if (services__label_check(m->label, e) != 0 ||
        check_program(m->program, e) != 0 || check_args(m, e) != 0 ||
        check_path("working_dir", "BAD_WORKING_DIR", m->working_dir, e) != 0 ||
        check_path("stdout_path", "BAD_LOG_PATH", m->stdout_path, e) != 0 ||
        check_path("stderr_path", "BAD_LOG_PATH", m->stderr_path, e) != 0 ||
        take_restart(out, (int)m->restart, m->throttle_seconds, e) != 0 ||
        take_stop_timeout(out, m->stop_timeout_seconds, e) != 0)
        return -1;
    out->label = m->label;
    out->program = m->program;
    out->args = (const char *const *)m->args;
    out->n_args = m->n_args;
    out->working_dir = m->working_dir;
    out->stdout_path = m->stdout_path;
    out->stderr_path = m->stderr_path;
    return take_env(out, m, e);
}

void services__spec_fini(services_spec *s)
{
    free(s->env);
    s->env = NULL;
    s->n_env = 0;
}
