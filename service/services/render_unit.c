/* SPDX-License-Identifier: MIT */
/* A spec as a systemd user unit (systemd.unit(5), systemd.service(5)),
 * quoted as systemd.syntax(7) says, so every argument and value arrives
 * as it was given. One layout: the same spec always gives the same bytes.
 */
#include <string.h>

#include "services_int.h"

enum {
    Q_DOLLAR = 1u << 0, /* "$" → "$$": ExecStart= substitutes variables */
    Q_QUOTE = 1u << 1,  /* in "...": '"' and '\' escaped, tab as \t */
};

/* Specifiers are expanded in every setting written here: '%' → "%%". */
static void escaped(tkc_buf *b, const char *s, unsigned how)
{
    const char *run = s;
    for (; *s != '\0'; s++) {
        const char *rep = NULL;
        if (*s == '%')
            rep = "%%";
        else if (*s == '$' && (how & Q_DOLLAR))
            rep = "$$";
        else if (*s == '"' && (how & Q_QUOTE))
            rep = "\\\"";
        else if (*s == '\\' && (how & Q_QUOTE))
            rep = "\\\\";
        else if (*s == '\t' && (how & Q_QUOTE))
            rep = "\\t";
        if (rep == NULL)
            continue;
        services__buf_add(b, run, (size_t)(s - run));
        services__buf_puts(b, rep);
        run = s + 1;
    }
    services__buf_puts(b, run);
}

static void quoted(tkc_buf *b, const char *s, unsigned how)
{
    services__buf_puts(b, "\"");
    escaped(b, s, how | Q_QUOTE);
    services__buf_puts(b, "\"");
}

static void exec_start(tkc_buf *b, const services_spec *s)
{
    /* The program is the executable's path itself, which systemd takes
     * without variable substitution (spec.c refuses a '$' in it). Every
     * word is quoted, so a ';' or a leading '-' in an argument is just
     * that. */
    services__buf_puts(b, "ExecStart=");
    quoted(b, s->program, 0);
    for (size_t i = 0; i < s->n_args; i++) {
        services__buf_puts(b, " ");
        quoted(b, s->args[i], Q_DOLLAR);
    }
    services__buf_puts(b, "\n");
}

static const char *restart_value(services_restart r)
{
    switch (r) {
    case SERVICES_ALWAYS:
        return "always";
    case SERVICES_NEVER:
        return "no";
    case SERVICES_ON_FAILURE:
    default:
        return "on-failure";
    }
}

void services__render_unit(tkc_buf *b, const services_spec *s)
{
    services__buf_puts(b,
                       "# Written by tkd (tk.v1.Services/Register). Register "
                       "rewrites it when the\n# spec changes: change the spec, "
                       "not this file.\n[Unit]\nDescription=");
    escaped(b, s->label, 0);
    /* In [Unit], where systemd reads it. No limit: like launchd's
     * ThrottleInterval, RestartSec= slows a crash loop down, and the unit
     * is never given up on. */
    services__buf_puts(b,
                       "\nStartLimitIntervalSec=0\n\n[Service]\nType=exec\n");
    exec_start(b, s);
    for (size_t i = 0; i < s->n_env; i++) {
        /* Environment= unquotes and expands specifiers; "$" is literal. */
        services__buf_printf(b, "Environment=\"%s=", s->env[i].name);
        escaped(b, s->env[i].value, Q_QUOTE);
        services__buf_puts(b, "\"\n");
    }
    if (s->working_dir[0] != '\0') {
        /* Paths are taken as written, specifiers expanded. */
        services__buf_puts(b, "WorkingDirectory=");
        escaped(b, s->working_dir, 0);
        services__buf_puts(b, "\n");
    }
    if (s->stdout_path[0] != '\0') {
        services__buf_puts(b, "StandardOutput=append:");
        escaped(b, s->stdout_path, 0);
        services__buf_puts(b, "\n");
    }
    if (s->stderr_path[0] != '\0') {
        services__buf_puts(b, "StandardError=append:");
        escaped(b, s->stderr_path, 0);
        services__buf_puts(b, "\n");
    }
    if (s->stop_timeout > 0)
        /* The default, control-group, would send SIGTERM to every process
         * of the unit at once: a write's git with its main process. */
        services__buf_printf(
            b,
            "# The stop signal goes to the main process alone, "
            "which stops its own\n# children in order; what is "
            "left gets SIGKILL after the timeout.\n"
            "KillMode=mixed\nTimeoutStopSec=%u\n",
            s->stop_timeout);
    services__buf_printf(b,
                         "Restart=%s\nRestartSec=%u\n\n[Install]\n"
                         "WantedBy=default.target\n",
                         restart_value(s->restart), s->throttle);
}
