/* The benchmarks' clock (header only: every benchmark uses it, not all of
 * them link the rest of common.c). */
#ifndef TK_BENCH_CLOCK_H
#define TK_BENCH_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline long long bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
