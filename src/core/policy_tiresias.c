/*
 * policy_tiresias.c — Tiresias' discretised two-dimensional least
 * attained service (Gu et al., "Tiresias: A GPU Cluster Manager for
 * Distributed Deep Learning", NSDI'19, §3.2): the key of the `tiresias`
 * share policy (policy.c's table).
 *
 * A job's attained service is its cores × the seconds it held them (the
 * two dimensions, space and time), which it knows without knowing its
 * length. The service is discretised into queues at the thresholds
 * slaq_prio_params.las_limit (default: the Tiresias simulator's two
 * queues split at 3,600 GPU-seconds, its README); a job in a lower queue
 * goes before every job in a higher one, and jobs of one queue go in
 * arrival order (FIFO inside a queue, as Tiresias does so that a job is
 * not preempted by one that merely attained a little less).
 * Tiresias' promotion of starved jobs (PromoteKnob) is not modelled.
 */
#include "internal.h"

void tiresias_keys(const slaq_pjob *jobs, size_t n,
                   const slaq_prio_params *pp, double *key)
{
    for (size_t i = 0; i < n; i++) {
        size_t q = 0;
        while (q + 1 < pp->las_queues && jobs[i].attained >= pp->las_limit[q])
            q++;
        /* Queue first; inside a queue, earlier arrivals first. Arrival
         * times are below 1e15 (the simulator's cap), so one queue's
         * range of keys never reaches the next. */
        key[i] = -(double)q * 1e16 - jobs[i].arrival;
    }
}
