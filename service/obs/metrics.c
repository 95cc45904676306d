/* SPDX-License-Identifier: MIT */
/* Metrics: what tkd counts as it works. Every update is one relaxed atomic
 * operation on memory of its own (a counter, a gauge, a histogram's
 * bucket) and takes no lock: a call pays a few of them. What reads them is
 * rpc/stats.c (tk.v1.Control/Stats and the Prometheus listener); a reader
 * may see one update of a call and not yet another, never a torn value. */
#include "obs.h"

/* From 50 µs (a Ping on a fast machine) to a minute (a READ's ceiling). */
const int64_t obs_hist_bounds_us[OBS_HIST_BOUNDS] = {
    50,      100,     250,      500,      1000,     2500,   5000,
    10000,   25000,   50000,    100000,   250000,   500000, 1000000,
    2500000, 5000000, 10000000, 30000000, 60000000,
};

#define COUNTER(f, h) f, h, OBS_METRIC_COUNTER
#define GAUGE(f, h) f, h, OBS_METRIC_GAUGE

/* The families of more than one entry: one name and help, a label value
 * an entry. */
#define KILLED(why)                                                            \
    {                                                                          \
        COUNTER("tk_processes_killed_total",                                   \
                "Process groups tkd killed to stop a program, by why: the "    \
                "caller cancelled, its deadline passed, the program's own "    \
                "timeout passed, the caller's limit was met, its output "      \
                "overflowed the cap, or tkd shut down."),                      \
            "reason", why                                                      \
    }
#define GIT_READS(engine)                                                      \
    {                                                                          \
        COUNTER("tk_git_reads_total",                                          \
                "Git reads by how tkd made them: in process with libgit2, "    \
                "or by running git."),                                         \
            "engine", engine                                                   \
    }

const obs_metric_def obs_metric_defs[OBS_M_COUNT] = {
    [OBS_M_PROCESSES_SPAWNED] = { COUNTER("tk_processes_spawned_total",
                                          "Programs tkd started (git, rg, "
                                          "grep, launchctl, systemctl)."),
                                  NULL, NULL },
    [OBS_M_PROCESSES_KILLED_CALLER] = KILLED("CALLER"),
    [OBS_M_PROCESSES_KILLED_DEADLINE] = KILLED("DEADLINE"),
    [OBS_M_PROCESSES_KILLED_TIMEOUT] = KILLED("TIMEOUT"),
    [OBS_M_PROCESSES_KILLED_LIMIT] = KILLED("LIMIT"),
    [OBS_M_PROCESSES_KILLED_OUTPUT_CAP] = KILLED("OUTPUT_CAP"),
    [OBS_M_PROCESSES_KILLED_SHUTDOWN] = KILLED("SHUTDOWN"),
    [OBS_M_PROCESSES_TIMED_OUT] = { COUNTER("tk_processes_timed_out_total",
                                            "Programs a time bound ended: the "
                                            "caller's deadline or the "
                                            "program's own timeout."),
                                    NULL, NULL },
    [OBS_M_GIT_READS_LIBGIT2] = GIT_READS("libgit2"),
    [OBS_M_GIT_READS_CLI] = GIT_READS("git"),
    [OBS_M_PG_CONNECTIONS_BROKEN] = { COUNTER("tk_pg_connections_broken_total",
                                              "PostgreSQL connections of the "
                                              "Orders pool found broken and "
                                              "discarded (the server closed "
                                              "them, or the network failed)."),
                                      NULL, NULL },
    [OBS_M_PG_LOCK_TIMEOUTS] = { COUNTER("tk_pg_lock_timeouts_total",
                                         "Orders calls a row lock was not "
                                         "granted to within lock_timeout "
                                         "(SQLSTATE 55P03)."),
                                 NULL, NULL },
    [OBS_M_SEARCH_SLOTS_BUSY] = { GAUGE("tk_search_slots_busy",
                                        "Searches running now, each in one "
                                        "of tkd --search-slots slots."),
                                  NULL, NULL },
    [OBS_M_SEARCH_WAITING] = { GAUGE("tk_search_waiting",
                                     "Searches waiting now for a free slot."),
                               NULL, NULL },
    [OBS_M_PG_POOL_IN_USE] = { GAUGE("tk_pg_pool_in_use",
                                     "PostgreSQL connections of the Orders "
                                     "pool that a call holds now."),
                               NULL, NULL },
    [OBS_M_PG_POOL_WAITING] = { GAUGE("tk_pg_pool_waiting",
                                      "Orders calls waiting now for a pool "
                                      "connection (tkd --pg-pool)."),
                                NULL, NULL },
};

const obs_hist_def obs_hist_defs[OBS_H_COUNT] = {
    [OBS_H_PROCESS_CLEANUP] = { "tk_process_cleanup_seconds",
                                "For a program tkd killed: from the decision "
                                "to stop it to its process group reaped and "
                                "its pipes drained." },
};

static _Atomic int64_t values[OBS_M_COUNT];
static obs_hist hists[OBS_H_COUNT];

void obs_metric_add(obs_metric m, int64_t n)
{
    if ((unsigned)m < OBS_M_COUNT)
        atomic_fetch_add_explicit(&values[m], n, memory_order_relaxed);
}

int64_t obs_metric_value(obs_metric m)
{
    return atomic_load_explicit(&values[m], memory_order_relaxed);
}

void obs_hist_observe(obs_hist *h, int64_t us)
{
    if (us < 0)
        us = 0;
    size_t i = 0;
    while (i < OBS_HIST_BOUNDS && us > obs_hist_bounds_us[i])
        i++;
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (uint64_t)us, memory_order_relaxed);
}

void obs_metric_observe(obs_histogram h, int64_t us)
{
    if ((unsigned)h < OBS_H_COUNT)
        obs_hist_observe(&hists[h], us);
}

uint64_t obs_hist_count(const obs_hist *h)
{
    uint64_t n = 0;
    for (size_t i = 0; i <= OBS_HIST_BOUNDS; i++)
        n += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    return n;
}

uint64_t obs_metric_observations(obs_histogram h)
{
    return obs_hist_count(&hists[h]);
}

const obs_hist *obs_hist_of(obs_histogram h)
{
    return &hists[h];
}
