/* SPDX-License-Identifier: MIT */
/* The call handle: deadline, cancellation, call-scoped memory, outcome. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc_int.h"

int64_t rpc_now_ns(void)
{
    return tkc_mono_ns();
}

int64_t rpc__ms_to_ns(uint32_t ms)
{
    return (int64_t)ms * 1000000LL;
}

int64_t rpc_call_deadline(const rpc_call *call)
{
    return atomic_load(&call->deadline);
}

int64_t rpc_call_received(const rpc_call *call)
{
    return call->t_recv;
}

rpc_kind rpc_call_kind(const rpc_call *call)
{
    return call->reg->method->kind;
}

const rpc_list *rpc_call_list(const rpc_call *call)
{
    return &call->reg->method->list;
}

uint64_t rpc_call_id(const rpc_call *call)
{
    return call->id;
}

const char *rpc_call_method(const rpc_call *call)
{
    return call->reg->method->name;
}

rpc_peer rpc_call_peer(const rpc_call *call)
{
    return call->peer;
}

rpc_cause rpc_call_cause(const rpc_call *call)
{
    int cause = atomic_load(&call->cause);
    if (cause != RPC_CAUSE_NONE)
        return (rpc_cause)cause;
    if (rpc_now_ns() >= atomic_load(&call->deadline))
        return RPC_CAUSE_DEADLINE;
    return RPC_CAUSE_NONE;
}

int rpc_call_cancel_fd(const rpc_call *call)
{
    return call->cancel.fd;
}

void rpc_call_set_process(rpc_call *call, int64_t pgid)
{
    atomic_store(&call->pgid, pgid);
}

/* Called with the registry lock held, so that a cancel and the end of the
 * call cannot cross: the first cause wins, the event is set once. */
void rpc_call__cancel(rpc_call *call, rpc_cause cause)
{
    int expected = RPC_CAUSE_NONE;
    if (!atomic_compare_exchange_strong(&call->cause, &expected, (int)cause))
        return;
    port_event_set(&call->cancel);
}

/* How long the next poll may wait (ms, at most a minute), or -1 when the
 * call must stop now: cancelled, or the earlier of until_ns and its
 * deadline has come. */
static int next_poll_ms(const rpc_call *call, int64_t until_ns)
{
    if (rpc_call_cause(call) != RPC_CAUSE_NONE)
        return -1;
    int64_t end = rpc_call_deadline(call);
    if (until_ns < end)
        end = until_ns;
    int64_t left = end - rpc_now_ns();
    if (left <= 0)
        return -1;
    /* Round up so that poll never returns just before the deadline. */
    int64_t ms = (left + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* Hands the caller's fds their revents; returns how many have some. */
static int take_revents(struct pollfd *fds, const struct pollfd *all,
                        size_t nfds)
{
    int ready = 0;
    for (size_t i = 0; i < nfds; i++) {
        fds[i].revents = all[i].revents;
        if (all[i].revents != 0)
            ready++;
    }
    return ready;
}

int rpc_call_poll(const rpc_call *call, struct pollfd *fds, size_t nfds,
                  int64_t until_ns)
{
    struct pollfd local[17];
    struct pollfd *all = local;
    if (nfds + 1 > sizeof local / sizeof local[0]) {
        all = calloc(nfds + 1, sizeof *all);
        if (all == NULL)
            return -ENOMEM;
    }
    int rv;
    for (;;) {
        int timeout = next_poll_ms(call, until_ns);
        if (timeout < 0) {
            rv = 0;
            break;
        }
        if (nfds > 0)
            memcpy(all, fds, nfds * sizeof *fds);
        all[nfds].fd = call->cancel.fd;
        all[nfds].events = POLLIN;
        all[nfds].revents = 0;
        int n = poll(all, (nfds_t)nfds + 1, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rv = -errno;
            break;
        }
        if (n == 0)
            continue; /* re-evaluate deadline / until */
        rv = take_revents(fds, all, nfds);
        if (rv > 0)
            break;
        /* Only the cancel fd: the loop head reports it. */
    }
    if (all != local)
        free(all);
    return rv;
}

/* ---- call-scoped memory ---------------------------------------------------
 */

void *rpc_call_alloc(rpc_call *call, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    rpc_arena_block *b = call->arena;
    if (b == NULL || b->cap - b->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        rpc_arena_block *nb = malloc(sizeof *nb + cap);
        if (nb == NULL) {
            const obs_field f[] = { OBS_INT("bytes", size) };
            obs_log_fields(OBS_LOG_ERROR, f, 1,
                           "out of memory for a reply of %zu bytes", size);
            obs_log_flush(1000);
            abort();
        }
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        call->arena = nb;
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *rpc_call_strndup(rpc_call *call, const char *s, size_t n)
{
    char *p = rpc_call_alloc(call, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *rpc_call_strdup(rpc_call *call, const char *s)
{
    return rpc_call_strndup(call, s, strlen(s));
}

ProtobufCBinaryData rpc_call_bytes(rpc_call *call, const void *data, size_t len)
{
    ProtobufCBinaryData b = { 0, NULL };
    if (len == 0)
        return b;
    b.data = rpc_call_alloc(call, len);
    memcpy(b.data, data, len);
    b.len = len;
    return b;
}

void rpc_arena__free(rpc_arena_block **arena)
{
    rpc_arena_block *b = *arena;
    while (b != NULL) {
        rpc_arena_block *next = b->next;
        free(b);
        b = next;
    }
    *arena = NULL;
}

/* ---- outcome --------------------------------------------------------------
 */

static void set_message(rpc_call *call, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void set_message(rpc_call *call, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    call->message = rpc_call_strdup(call, buf);
}

void rpc_call_fail(rpc_call *call, rpc_code code, const char *reason,
                   const char *fmt, ...)
{
    call->code = code;
    call->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    set_message(call, fmt, ap);
    va_end(ap);
}

rpc_cause rpc_call_fail_stopped(rpc_call *call)
{
    rpc_cause cause = rpc_call_cause(call);
    call->end_cause = cause;
    switch (cause) {
    case RPC_CAUSE_CALLER:
        rpc_call_fail(call, RPC_CANCELLED, NULL, "cancelled by the caller");
        break;
    case RPC_CAUSE_SHUTDOWN:
        if (rpc_call_kind(call) == RPC_WRITE) {
            /* Only shutdown past its grace stops a running WRITE. */
            rpc_call_fail(call, RPC_UNAVAILABLE, "SHUTTING_DOWN",
                          "tkd is shutting down: the write was still running "
                          "when the shutdown grace (%u ms) ran out, and tkd "
                          "stopped it; it did not complete (what it had done "
                          "by then stays done)",
                          call->slot != NULL
                              ? (unsigned)call->slot->srv->cfg.shutdown_grace_ms
                              : 0u);
            rpc_call_set_write_completed(call, false);
        } else {
            rpc_call_fail(call, RPC_UNAVAILABLE, "SHUTTING_DOWN",
                          "tkd is shutting down");
        }
        call->retry_after_ms = 1000;
        break;
    case RPC_CAUSE_DEADLINE:
    default:
        call->end_cause = RPC_CAUSE_DEADLINE;
        if (rpc_call_kind(call) == RPC_WRITE)
            rpc_call_fail(call, RPC_DEADLINE_EXCEEDED, "WRITE_TIMEOUT",
                          "the write exceeded its own timeout of %u ms",
                          (unsigned)call->reg->method->ceiling_ms);
        else
            rpc_call_fail(call, RPC_DEADLINE_EXCEEDED, NULL,
                          "deadline exceeded");
        break;
    }
    return call->end_cause;
}

void rpc_call_set_partial(rpc_call *call, rpc_cause cause)
{
    call->partial = true;
    call->end_cause = cause;
}

void rpc_call_set_stderr(rpc_call *call, const void *data, size_t len)
{
    ProtobufCBinaryData b = rpc_call_bytes(call, data, len);
    call->stderr_data = b.data;
    call->stderr_len = b.len;
}

void rpc_call_set_reply_prefix(rpc_call *call, const void *data, size_t len)
{
    call->reply_prefix = data;
    call->reply_prefix_len = len;
}

void rpc_call_set_cleanup(rpc_call *call, bool process_killed,
                          uint32_t cleanup_ms)
{
    call->process_killed = process_killed;
    call->cleanup_ms = cleanup_ms;
}

void rpc_call_write_begins(rpc_call *call)
{
    call->write_begun = true;
}

void rpc_call_set_write_completed(rpc_call *call, bool completed)
{
    call->write_completed_set = true;
    call->write_completed = completed;
}

void rpc_call_set_retry_after(rpc_call *call, uint32_t ms)
{
    call->retry_after_ms = ms;
}

void rpc_call_set_tool(rpc_call *call, const char *tool)
{
    call->tool = tool != NULL ? rpc_call_strdup(call, tool) : NULL;
}

/* Between calls of a slot: drop the outcome and memory, clear the cancel
 * signal. The registry lock is held, so no cancel races with the reset. */
void rpc_call__reset(rpc_call *call)
{
    if (atomic_load(&call->cause) != RPC_CAUSE_NONE)
        port_event_clear(&call->cancel);
    if (call->payload != NULL)
        protobuf_c_message_free_unpacked(call->payload, NULL);
    if (call->request != NULL)
        tk__v1__request__free_unpacked(call->request, NULL);
    /* Keep one block: most calls fit, and it spares a malloc per call. */
    rpc_arena_block *keep = call->arena;
    if (keep != NULL) {
        rpc_arena__free(&keep->next);
        if (keep->cap > 65536) {
            free(keep);
            keep = NULL;
        } else {
            keep->used = 0;
        }
    }
    port_event cancel = call->cancel;
    rpc_slot *slot = call->slot;
    memset(call, 0, sizeof *call);
    call->cancel = cancel;
    call->slot = slot;
    call->arena = keep;
    atomic_init(&call->cause, RPC_CAUSE_NONE);
    atomic_init(&call->deadline, INT64_MAX);
    atomic_init(&call->pgid, 0);
}

static const rpc_method detached_method = {
    .name = "tk.test.Detached/Call",
    .kind = RPC_READ,
    .default_timeout_ms = UINT32_MAX,
    .ceiling_ms = UINT32_MAX,
};
static const rpc_registered detached_reg = { .method = &detached_method };

rpc_call *rpc__test_call_new(void)
{
    rpc_call *call = calloc(1, sizeof *call);
    if (call == NULL)
        return NULL;
    call->reg = &detached_reg;
    call->cancel = PORT_EVENT_NONE; /* poll(2) passes over it */
    atomic_init(&call->cause, RPC_CAUSE_NONE);
    atomic_init(&call->deadline, INT64_MAX);
    call->t_recv = rpc_now_ns();
    call->caller_deadline = INT64_MAX;
    return call;
}

void rpc__test_call_free(rpc_call *call)
{
    if (call == NULL)
        return;
    rpc_arena__free(&call->arena);
    free(call);
}
