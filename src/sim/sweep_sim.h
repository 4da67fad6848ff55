/*
 * sweep_sim.h — replaying a recorded sweep under a sweep policy in virtual
 * time (slaq sim --sweep). The policy is libslaq's slaq_sweep, the same
 * object `slaq sweep` drives under slaqd.
 */
#ifndef SLAQ_SWEEP_SIM_H
#define SLAQ_SWEEP_SIM_H

#include <stddef.h>
#include <stdio.h>

#include "io/sweeps.h"
#include "slaq/sweep.h"

typedef struct sweep_sim_config {
    const char *policy;
    slaq_sweep_params prm;  /* slots, max_epochs, y_target, ... */
    double suspend_s;       /* a slot is busy this long after a suspend */
    double resume_s;        /* and this long before a resumed epoch */
    double start_scale;     /* multiplies each trace's start-up time (1) */
    FILE *trace;            /* optional: one JSON line per decision */
    int trace_order;        /* the order number written in those lines */
} sweep_sim_config;

typedef struct sweep_sim_result {
    double time_to_target;  /* virtual seconds; INFINITY if never reached */
    int winner;             /* trace index that reached it; -1 if none */
    double makespan;        /* when the last slot went idle (or the target) */
    long epochs;            /* epochs trained, over all configurations */
    long suspends, resumes, kills, started;
} sweep_sim_result;

/* A policy name with this suffix ("pop+oracle") runs the policy with its
 * curve model replaced by the traces' truth (slaq_sweep_params.oracle):
 * what the policy's rules would give with a perfect model. */
#define SWEEP_SIM_ORACLE "+oracle"

/*
 * Replays the traces in the order order[0..n-1] (trace indices; the
 * sweep's configuration j is trace order[j]) with cfg. Stops at the first
 * epoch whose metric reaches the target. Returns 0, or -1 with a message
 * in err (the policy rejected its parameters, or a suffix other than
 * SWEEP_SIM_ORACLE).
 */
int sweep_sim_run(const sweep_set *set, const size_t *order, size_t n,
                  const sweep_sim_config *cfg, sweep_sim_result *res,
                  char *err, size_t errlen);

/* Whether sweep_sim_run would accept cfg's policy name and parameters for
 * n configurations: 0, or -1 with the reason in err. */
int sweep_sim_check(const sweep_sim_config *cfg, size_t n, char *err,
                    size_t errlen);

/*
 * With cfg->trace set, sweep_sim_run writes one JSON line per event:
 *   {"policy","order","t","ev":"start"|"resume","id"}          a slot takes it
 *   {"policy","order","t","ev":"epoch","id","epoch","metric","action",
 *    "cls","p","ert","pstar","s_promising","promising":[ids],
 *    "opportunistic":N}                                           an epoch's verdict
 *   {"policy","order","t","ev":"target","id","epoch","metric"}   the end
 * (id is the trace's configuration id; "epoch" lines with action
 * "continue" are written only where the policy evaluated: at a change of
 * p, class or threshold.)
 */

/*
 * Lower bounds on a policy's time to target, from the traces alone.
 *
 * With order NULL, the bound for any policy: the earliest time at which
 * some configuration, started alone at t = 0 and never suspended, reaches
 * the target (start_scale times its start-up, then its epochs up to the
 * first one at or beyond the target). A configuration's epochs cannot
 * overlap and suspensions only add time, so no policy on any number of
 * slots is faster.
 *
 * With order (the sweep's configuration j is trace order[j], n of them),
 * the bound in that order for a policy that starts fresh configurations in
 * the order given and decides only at epoch ends, as every slaq policy and
 * the Optuna harness do: when configuration j starts, at most S - 1 of the
 * j before it still hold a slot, so the others have each used a slot for
 * at least their start-up and first epoch, and S slots have given at least
 * the j - S + 1 smallest of those; configuration j cannot start before
 * that sum / S, nor reach the target before then plus its own time alone.
 *
 * Returns INFINITY (id and epoch -1) when no configuration reaches the
 * target; otherwise id is the trace id of the configuration that gives the
 * bound and epoch the epoch at which it reaches the target. -1 with order
 * set and out of memory.
 */
double sweep_sim_bound(const sweep_set *set, const size_t *order, size_t n,
                       size_t slots, double target, int maximize,
                       double start_scale, int *id, int *epoch);

/* Fills order with permutation number k (k = 0: the recorded order) of
 * 0..n-1, from seed; the same (n, seed, k) always gives the same order. */
void sweep_sim_order(size_t *order, size_t n, unsigned long seed, int k);

#endif
