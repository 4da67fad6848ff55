/*
 * stats.c — measuring helpers shared by slaq's tools (see stats.h).
 */
#include "io/stats.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

double stats_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double stats_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int stats_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile(double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, stats_cmp_double);
    size_t k = (size_t)ceil(p * (double)n);
    return v[k ? k - 1 : 0];
}

double stats_median_sorted(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
