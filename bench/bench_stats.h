/* bench_stats.h - what the benchmarks print of their timings: the best and
 * the median of a run's times. */
#ifndef OPENINFER_BENCH_STATS_H
#define OPENINFER_BENCH_STATS_H

#include <stdlib.h>

static int bench_compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) in place, so v[0] is the best time, and returns the median. */
static inline double bench_sort_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
