/* SPDX-License-Identifier: MIT */
/* The search slots: a semaphore (port_sem) holds the number of free slots.
 * Taking one fails at once when none is free; it polls readable while a
 * slot is free. So a waiter sleeps in
 * one poll on the slots and its call's cancellation and deadline
 * (rpc_call_poll), and gives up the moment its caller does. Waiters race
 * for a freed slot (no queue order): a search is not a ticket counter. */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "search_int.h"

int search__slots_init(search_slots *s, unsigned n)
{
    return port_sem_open(&s->sem, n);
}

void search__slots_fini(search_slots *s)
{
    port_sem_close(&s->sem);
}

int search__slot_take(search_slots *s, rpc_call *call)
{
    bool told = false; /* it waits: logged, and counted among the waiting */
    int rv;
    for (;;) {
        if (rpc_call_cause(call) != RPC_CAUSE_NONE) {
            rv = 1;
            break;
        }
        if (port_sem_trytake(&s->sem)) {
            obs_metric_add(OBS_M_SEARCH_SLOTS_BUSY, 1);
            rv = 0;
            break;
        }
        if (!told) {
            obs_metric_add(OBS_M_SEARCH_WAITING, 1);
            const obs_field f[] = { OBS_INT("call_id", rpc_call_id(call)) };
            obs_log_fields(OBS_LOG_DEBUG, f, 1,
                           "search call %llu waits for a slot",
                           (unsigned long long)rpc_call_id(call));
            told = true;
        }
        struct pollfd p = { .fd = s->sem.fd, .events = POLLIN };
        rv = rpc_call_poll(call, &p, 1, INT64_MAX);
        if (rv < 0)
            break;
    }
    if (told)
        obs_metric_add(OBS_M_SEARCH_WAITING, -1);
    return rv;
}

void search__slot_give(search_slots *s)
{
    obs_metric_add(OBS_M_SEARCH_SLOTS_BUSY, -1);
    port_sem_give(&s->sem);
}
