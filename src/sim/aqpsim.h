/*
 * aqpsim.h — the simulator of approximate queries (ReLAQS's evaluation).
 *
 * Replays recorded query runs (src/io/aqptrace.h) in virtual time through
 * the scheduling core slaqd uses: every query is a SLAQ_JOB_QUERY job of
 * a slaq_sched, every finished mini-batch a slaq_job_report_estimates()
 * with the recorded estimates, and the cores are divided by
 * slaq_sched_epoch() at every epoch boundary and whenever a query arrives
 * or finishes. Between decisions a query with a cores runs a CPU-seconds
 * of its mini-batches per second; mini-batch i costs the recorded
 * batch_cpu_s[i−1] × cpu_scale CPU-seconds. What is measured is the true
 * error (slaq_query_error_curve), which the scheduler never sees.
 */
#ifndef SLAQ_AQPSIM_H
#define SLAQ_AQPSIM_H

#include <stddef.h>

#include "io/aqptrace.h"
#include "slaq/slaq.h"

typedef struct aqpsim_config {
    /* The core's settings (slaq/settings.h), as given to slaq_sched_new():
     * sched.policy is fair or relaqs (any policy works), sched.query_min_cores
     * relaqs's minimum allocation of a query, sched.query.window its
     * progress curve's window, sched.horizon_iters counts mini-batches. */
    slaq_sched_config sched;
    double cpu_scale;         /* > 0: multiplies every mini-batch's CPU */
} aqpsim_config;

/* The core's defaults but for the simulator's own (ReLAQS's evaluation):
 * relaqs, 16 cores, epoch 5 s, min 1 core per query, no damping or
 * hysteresis; scale 1. */
void aqpsim_config_init(aqpsim_config *c);

typedef struct aqpsim_query {
    const aqp_trace *t;
    double arrival;
} aqpsim_query;

/* What happened to one query. */
typedef struct aqpsim_qres {
    double arrival;
    double completion;
    size_t B;
    double *batch_t;  /* B completion times of its mini-batches */
    double *red;      /* B true error reductions, 1 − E_i (1 at the last) */
} aqpsim_qres;

/* The most queries of one run: each event looks at every query. */
#define AQPSIM_MAX_QUERIES 1000

/*
 * Checks that the n queries (qs; NULL checks only the configuration and
 * n) can be simulated in bounded time and memory: cores, epoch and cpu
 * scale finite and > 0, cores at most SIM_MAX_UNITS (units of one core),
 * n at most AQPSIM_MAX_QUERIES, and the epochs the run passes through —
 * at least (the last arrival + every mini-batch's CPU-seconds on all the
 * cores) / epoch, since every epoch boundary is an event — at most
 * SIM_MAX_EPOCHS (sim.h). Returns 0, or -1 with a message naming the
 * option, the value and the cap. aqpsim_run calls it.
 */
int aqpsim_config_check(const aqpsim_config *cfg, const aqpsim_query *qs,
                        size_t n, char *err, size_t errlen);

/*
 * Runs the n queries (any order of arrivals). res receives n results
 * (free with aqpsim_results_free). Returns 0, or -1 with a message.
 */
int aqpsim_run(const aqpsim_query *q, size_t n, const aqpsim_config *cfg,
               aqpsim_qres *res, char *err, size_t errlen);
void aqpsim_results_free(aqpsim_qres *res, size_t n);

/*
 * Seconds from arrival until the query's error reduction first reached x
 * (in [0, 1]) after a mini-batch; with `stay`, reached it for good: the
 * first mini-batch from which on every reduction is at least x.
 */
double aqpsim_time_to(const aqpsim_qres *r, double x, int stay);

/*
 * A workload: n queries drawn from the traces (uniformly, with
 * replacement when n exceeds them, each trace at most once otherwise),
 * Poisson arrivals of mean inter-arrival mean_ia (the first at 0),
 * deterministic from seed.
 */
void aqpsim_workload(const aqp_trace_set *ts, size_t n, double mean_ia,
                     unsigned seed, aqpsim_query *out);

#endif
