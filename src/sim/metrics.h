/*
 * metrics.h — the job and epoch metrics of docs/metrics.md, written once
 * for the simulator and for slaqd's recorded runs.
 *
 * `slaq sim` (sim.c) calls these as its virtual clock advances; `slaq
 * report` (src/cli/cmd_report.c) calls them on the reports and
 * allocations slaqd kept in state.db. Both then average with
 * sim_summarize (sim.h). So a simulated run and a real one are measured
 * by the same code: normalised loss, time to X% loss reduction, and each
 * epoch boundary's average normalised loss and cores by loss group.
 */
#ifndef SLAQ_SIM_METRICS_H
#define SLAQ_SIM_METRICS_H

#include <stddef.h>

#include "sim/sim.h"

/*
 * The normalised loss ℓ of a job's loss `loss` (docs/metrics.md):
 * (loss − end) / (first − end), `first` its first loss L(0) and `end` its
 * last L_end. 0 at its last iteration (`last` nonzero), whatever the
 * loss; 1 before it when first − end is not positive (a curve that never
 * fell has nothing to normalise by). Not clamped: a loss above L(0) or
 * below L_end gives ℓ above 1 or below 0 (slaq_norm_loss of libslaq
 * clamps; the simulator's numbers never did).
 */
double metric_norm_loss(double loss, double first, double end, int last);

/*
 * Time to X%: records the reductions a job has reached now that its ℓ is
 * `norm_loss`, `since` seconds after its arrival. tx[] has SIM_NX slots,
 * one per sim_x_pct; xi is the first not reached yet. Every X from xi on
 * with 1 − ℓ ≥ X/100 (less 1e-12, so that a reduction of exactly X
 * computed with rounding counts) gets tx = since. Returns the new xi.
 * Call it at each of the job's reports, in iteration order.
 */
int metric_reached(double norm_loss, double since, int xi, double tx[SIM_NX]);

/* One active job at an epoch boundary, as metric_sample sees it. */
typedef struct metric_point {
    double norm_loss; /* its ℓ after its last report */
    double cores;     /* the cores it uses: min(allocation, max_cores) */
    size_t order;     /* its rank by arrival: breaks ties in ℓ */
} metric_point;

/*
 * Fills the timeline row of an epoch boundary at time t with the n > 0
 * active jobs pts: their mean ℓ (summed from the highest ℓ down) and
 * their cores by loss group (ranked by ℓ, highest first, ties by order:
 * rank i of n is high if 4i < n, medium if 4i < 2n, else low). Sorts pts.
 */
void metric_sample(sim_sample *sm, double t, metric_point *pts, size_t n);

#endif
