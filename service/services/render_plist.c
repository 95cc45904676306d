/* SPDX-License-Identifier: MIT */
/* A spec as a launchd.plist(5): XML, keys in sorted order, one layout, so
 * the same spec always gives the same bytes. */
#include <string.h>

#include "services_int.h"

/* Text content: &, < and > as entities. The spec has no control
 * characters but tab (spec.c), so everything else is written as it is. */
static void xml_text(tkc_buf *b, const char *s)
{
    const char *run = s;
    for (; *s != '\0'; s++) {
        const char *ent = *s == '&'   ? "&amp;"
                          : *s == '<' ? "&lt;"
                          : *s == '>' ? "&gt;"
                                      : NULL;
        if (ent == NULL)
            continue;
        services__buf_add(b, run, (size_t)(s - run));
        services__buf_puts(b, ent);
        run = s + 1;
    }
    services__buf_puts(b, run);
}

static void key(tkc_buf *b, const char *indent, const char *k)
{
    services__buf_printf(b, "%s<key>", indent);
    xml_text(b, k);
    services__buf_puts(b, "</key>\n");
}

static void string(tkc_buf *b, const char *indent, const char *v)
{
    services__buf_printf(b, "%s<string>", indent);
    xml_text(b, v);
    services__buf_puts(b, "</string>\n");
}

static void keep_alive(tkc_buf *b, services_restart restart)
{
    key(b, "\t", "KeepAlive");
    switch (restart) {
    case SERVICES_ALWAYS:
        services__buf_puts(b, "\t<true/>\n");
        break;
    case SERVICES_NEVER:
        services__buf_puts(b, "\t<false/>\n");
        break;
    case SERVICES_ON_FAILURE:
    default:
        /* Not Crashed: that restarts only after a crash signal, missing
         * SIGKILL and a deliberate non-zero exit. */
        services__buf_puts(b, "\t<dict>\n");
        key(b, "\t\t", "SuccessfulExit");
        services__buf_puts(b, "\t\t<false/>\n\t</dict>\n");
        break;
    }
}

void services__render_plist(tkc_buf *b, const services_spec *s)
{
    services__buf_puts(
        b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
           "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
           "<!-- Written by tkd (tk.v1.Services/Register). Register "
           "rewrites it when\n     the spec changes: change the "
           "spec, not this file. -->\n"
           "<plist version=\"1.0\">\n<dict>\n");
    if (s->n_env > 0) {
        key(b, "\t", "EnvironmentVariables");
        services__buf_puts(b, "\t<dict>\n");
        for (size_t i = 0; i < s->n_env; i++) {
            key(b, "\t\t", s->env[i].name);
            string(b, "\t\t", s->env[i].value);
        }
        services__buf_puts(b, "\t</dict>\n");
    }
    if (s->stop_timeout > 0) {
        /* launchd's SIGTERM goes to the job's process alone. */
        key(b, "\t", "ExitTimeOut");
        services__buf_printf(b, "\t<integer>%u</integer>\n", s->stop_timeout);
    }
    keep_alive(b, s->restart);
    key(b, "\t", "Label");
    string(b, "\t", s->label);
    key(b, "\t", "Program");
    string(b, "\t", s->program);
    key(b, "\t", "ProgramArguments");
    services__buf_puts(b, "\t<array>\n");
    string(b, "\t\t", s->program);
    for (size_t i = 0; i < s->n_args; i++)
        string(b, "\t\t", s->args[i]);
    services__buf_puts(b, "\t</array>\n");
    key(b, "\t", "RunAtLoad");
    services__buf_puts(b, "\t<true/>\n");
    if (s->stderr_path[0] != '\0') {
        key(b, "\t", "StandardErrorPath");
        string(b, "\t", s->stderr_path);
    }
    if (s->stdout_path[0] != '\0') {
        key(b, "\t", "StandardOutPath");
        string(b, "\t", s->stdout_path);
    }
    key(b, "\t", "ThrottleInterval");
    services__buf_printf(b, "\t<integer>%u</integer>\n", s->throttle);
    if (s->working_dir[0] != '\0') {
        key(b, "\t", "WorkingDirectory");
        string(b, "\t", s->working_dir);
    }
    services__buf_puts(b, "</dict>\n</plist>\n");
}
