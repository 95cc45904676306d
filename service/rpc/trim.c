/* SPDX-License-Identifier: MIT */
/* The heap given back after a burst. glibc's malloc keeps what a burst
 * freed: a flood of TLS handshakes (each connection some 34 KiB of NNG's
 * and mbedTLS's buffers), or stalled frames (NNG allocates each whole
 * when its length arrives), are freed in the middle of the arenas of the
 * threads that took them, where nothing gives them back. Measured before:
 * 65.7 MB resident after a handshake flood that peaked at 98.9, 157 MB
 * after 128 stalled 1 MiB frames. So the listener watch, once a second,
 * looks at how much the heap holds free, and when that has grown by a
 * burst's worth since it last looked (it may have been reused since:
 * the lowest level seen counts), gives the free pages back
 * (port_heap_trim, malloc_trim(0)) and logs it. In steady work the free
 * memory moves by far less, and nothing is trimmed. */
#include <stdint.h>

#include "rpc_int.h"

/* What a burst is: this much more held free than the lowest level seen
 * since the last trim. A few hundred connections' handshakes, or a few
 * stalled frames of the default limit; the heap of an idle tkd is some
 * 1-2 MiB in all. */
#define HEAP_BURST_BYTES ((int64_t)8 << 20)

static double mib(int64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

void rpc__heap_start(rpc_server *srv)
{
    srv->heap_floor = port_heap_idle_bytes();
}

void rpc__heap_look(rpc_server *srv)
{
    int64_t idle = port_heap_idle_bytes();
    if (idle < 0)
        return; /* an allocator that gives back by itself */
    if (idle < srv->heap_floor)
        srv->heap_floor = idle;
    int64_t burst = idle - srv->heap_floor;
    if (burst < HEAP_BURST_BYTES)
        return;
    int64_t before = port_rss_bytes();
    port_heap_trim();
    int64_t after = port_rss_bytes();
    /* The free chunks stay free (reused, they count less): from here. */
    srv->heap_floor = port_heap_idle_bytes();
    /* In JSON, bytes: the members are whole numbers. */
    const obs_field f[] = { OBS_INT("freed_bytes", burst),
                            OBS_INT("resident_bytes", after),
                            OBS_INT("resident_before_bytes", before) };
    if (before >= 0 && after >= 0)
        obs_log_fields(OBS_LOG_INFO, f, 3,
                       "memory: a burst freed %.1f MiB; given back to the "
                       "system (malloc_trim): resident %.1f MiB, was %.1f MiB",
                       mib(burst), mib(after), mib(before));
    else
        obs_log_fields(OBS_LOG_INFO, f, 1,
                       "memory: a burst freed %.1f MiB; given back to the "
                       "system (malloc_trim)",
                       mib(burst));
}
