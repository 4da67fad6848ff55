/*
 * policy_edf.c — earliest deadline first: the key of the `edf` share
 * policy (policy.c's table). The job whose deadline is nearest goes first
 * and takes up to its max_cores of its node; a job without a deadline
 * (INFINITY, the paper's "largest deadline") goes after every job with
 * one, in arrival order among themselves. A deadline that has passed is
 * still the earliest: plain EDF, as the baselines of MLFS and ElasticFlow
 * run it.
 */
#include <math.h>

#include "internal.h"

void edf_keys(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
              double *key)
{
    (void)pp;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        /* No deadline: after every finite one (deadlines and arrivals
         * are below 1e15 s, the simulator's cap), by arrival. */
        key[i] = isfinite(j->deadline) ? -j->deadline
                                       : -(4e15 + j->arrival);
    }
}
