/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"
#include "tk/v1/control.tk.h"

/* The server's own report of what it counted. */

Tk__V1__StatsReply *ts_stats(tk_client *client)
{
    Tk__V1__StatsRequest req = TK__V1__STATS_REQUEST__INIT;
    Tk__V1__StatsReply *rep = NULL;
    tk_status st = { 0 };
    int rv = tk_control_stats(client, &req, &rep, NULL, &st);
    if (rv != 0)
        fail_msg("Stats answered %d: %s", rv, st.message ? st.message : "");
    tk_status_clear(&st);
    return rep;
}

double ts_stat(const Tk__V1__StatsReply *r, const char *name, size_t n_labels,
               const char *const *labels)
{
    for (size_t i = 0; i < r->n_families; i++) {
        const Tk__V1__MetricFamily *f = r->families[i];
        if (strcmp(f->name, name) != 0)
            continue;
        for (size_t j = 0; j < f->n_metrics; j++) {
            const Tk__V1__Metric *m = f->metrics[j];
            bool match = m->n_labels == n_labels;
            for (size_t k = 0; match && k < n_labels; k++)
                match = strcmp(m->labels[k]->name, labels[2 * k]) == 0 &&
                        strcmp(m->labels[k]->value, labels[2 * k + 1]) == 0;
            if (match)
                return m->histogram != NULL ? (double)m->histogram->sample_count
                                            : m->value;
        }
    }
    return -1;
}
