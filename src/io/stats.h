/*
 * stats.h — small measuring helpers shared by slaq's tools (the simulator,
 * the benchmarks): a monotonic clock in milliseconds, a comparison of
 * doubles for qsort, and order statistics.
 */
#ifndef SLAQ_IO_STATS_H
#define SLAQ_IO_STATS_H

#include <stddef.h>

/* Milliseconds on the monotonic clock (for differences only). */
double stats_now_ms(void);
/* CPU time of the calling thread in milliseconds (what a measurement
 * costs itself, whatever else the machine runs). */
double stats_cpu_ms(void);

/* qsort/bsearch comparison of two doubles, ascending. */
int stats_cmp_double(const void *a, const void *b);

/* Sorts v[0..n-1] ascending and returns its nearest-rank p-quantile
 * (0 < p <= 1): the ceil(p·n)-th smallest value. NAN if n == 0. */
double stats_quantile(double *v, size_t n, double p);

/* The median of v[0..n-1], already sorted (the mean of the middle two for
 * even n). NAN if n == 0. */
double stats_median_sorted(const double *v, size_t n);

#endif
