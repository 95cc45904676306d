/* SPDX-License-Identifier: MIT */
/* What every benchmark measures with: the clock, and the ordering and
 * median of what it measured. Header only: not every benchmark links the
 * rest of bench.c. */
#ifndef TK_BENCH_MEASURE_H
#define TK_BENCH_MEASURE_H

#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline long long bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* qsort's comparisons for long long and double. */
static inline int bench_cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static inline int bench_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* v sorted, and its middle element (the upper one of two when n is
 * even). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
    return v[n / 2];
}

#endif
