/*
 * runtime.c — how long a job's next iteration takes (SLAQ §4.2.1).
 *
 * An iteration costs c·S CPU-seconds, c a per-sample cost and S the samples
 * it processes; N cores finish it in c·S / min(N, max parallelism) seconds.
 * The prediction is an exponentially weighted mean of each report's c·S
 * (weight RT_ALPHA for the newest), so one slow iteration does not swing it
 * but a job whose cost changes is followed within a few reports. c and S
 * have their own means, kept for display only: EWMA(c)·EWMA(S) is not
 * EWMA(c·S) when S varies between reports.
 */
#include <math.h>

#include "slaq/slaq.h"

#define RT_ALPHA 0.3

void slaq_runtime_init(slaq_runtime *rt, double default_iter_cpu_s)
{
    rt->cpu_per_sample = 0;
    rt->samples_per_iter = 0;
    rt->iter_cpu_s = 0;
    rt->default_iter_cpu_s =
        default_iter_cpu_s > 0 ? default_iter_cpu_s : SLAQ_DEFAULT_ITER_CPU_S;
    rt->observed = 0;
}

void slaq_runtime_observe(slaq_runtime *rt, double cpu_s, double samples,
                          double iters)
{
    if (!(iters > 0) || !(cpu_s > 0) || !isfinite(cpu_s))
        return;
    /* A job that does not report data size is modelled as S = 1. */
    double s = samples > 0 && isfinite(samples) ? samples / iters : 1.0;
    double c = cpu_s / (s * iters);
    if (rt->observed == 0) {
        rt->cpu_per_sample = c;
        rt->samples_per_iter = s;
        rt->iter_cpu_s = c * s;
    } else {
        rt->cpu_per_sample += RT_ALPHA * (c - rt->cpu_per_sample);
        rt->samples_per_iter += RT_ALPHA * (s - rt->samples_per_iter);
        rt->iter_cpu_s += RT_ALPHA * (c * s - rt->iter_cpu_s);
    }
    rt->observed += (uint64_t)ceil(iters);
}

double slaq_runtime_iter_cpu(const slaq_runtime *rt)
{
    if (rt->observed == 0)
        return rt->default_iter_cpu_s;
    return rt->iter_cpu_s;
}

double slaq_runtime_iter_time(const slaq_runtime *rt, double cores,
                              double max_par)
{
    double n = cores;
    if (max_par > 0 && max_par < n)
        n = max_par;
    if (!(n > 0))
        return INFINITY;
    return slaq_runtime_iter_cpu(rt) / n;
}
