/* The search slots: an eventfd in semaphore mode holds the number of free
 * slots. Reading it takes one (EAGAIN when none is free); writing 1 gives
 * one back; it polls readable while a slot is free. So a waiter sleeps in
 * one poll on the slots and its call's cancellation and deadline
 * (rpc_call_poll), and gives up the moment its caller does. Waiters race
 * for a freed slot (no queue order): a search is not a ticket counter. */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "search_int.h"

int search__slots_init(search_slots *s, unsigned n)
{
    s->fd = eventfd(n, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
    return s->fd >= 0 ? 0 : -errno;
}

void search__slots_destroy(search_slots *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

static bool try_take(const search_slots *s)
{
    uint64_t v;
    return read(s->fd, &v, sizeof v) == (ssize_t)sizeof v;
}

int search__slot_take(search_slots *s, rpc_call *call)
{
    bool told = false;
    for (;;) {
        if (rpc_call_cause(call) != RPC_CAUSE_NONE)
            return 1;
        if (try_take(s))
            return 0;
        if (!told) {
            rpc_log(RPC_LOG_DEBUG, "search call %llu waits for a slot",
                    (unsigned long long)rpc_call_id(call));
            told = true;
        }
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        int rv = rpc_call_poll(call, &p, 1, INT64_MAX);
        if (rv < 0)
            return rv;
    }
}

void search__slot_give(search_slots *s)
{
    uint64_t one = 1;
    while (write(s->fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}
