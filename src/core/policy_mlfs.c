/*
 * policy_mlfs.c — MLF-H's priority (MLFS, CoNEXT'20, §3.3.1, Eq. 2-6):
 * the key of the `mlfs-h` and `mlfs` share policies (policy.c's table),
 * and the dependency recursion of Eq. 3 and 5. include/slaq/deadline.h
 * states the formula and how slaq normalises the paper's mixed units.
 */
#include <math.h>

#include "slaq/deadline.h"
#include "internal.h"

/* The recent loss reduction δl_{I−1} / Σ δl, in [0, 1]; 1 before the
 * second iteration (an empty sum: a new job is at its steepest). */
static double recent_drop(const slaq_pjob *j)
{
    if (j->iter < 2 || !(j->total_drop > 0))
        return 1;
    double r = j->last_drop / j->total_drop;
    return r > 1 ? 1 : r > 0 ? r : 0;
}

static double urgency(const slaq_pjob *j)
{
    return j->urgency >= SLAQ_URGENCY_MIN ? j->urgency : SLAQ_URGENCY_MIN;
}

/* Eq. 4's three raw terms: 1/(d − t), 1/r, w. A deadline the job can
 * no longer meet (d − t < r: it would have to run faster than on all its
 * cores) weighs nothing: it cannot be helped, and a term that grows as
 * it passes would put the lost jobs ahead of those that can still make
 * theirs. */
static double deadline_term(const slaq_pjob *j, double eps)
{
    if (!isfinite(j->deadline))
        return 0;
    double left = j->deadline - j->now;
    if (left < j->remaining_s)
        return 0;
    return 1 / (left > eps ? left : eps);
}

static double remaining_term(const slaq_pjob *j, double eps)
{
    return 1 / (j->remaining_s > eps ? j->remaining_s : eps);
}

static double safe_div(double x, double max)
{
    return max > 0 ? x / max : 0;
}

/* The range of the positive values of a term over the jobs. */
typedef struct range {
    double lo, hi;
} range;

static void range_add(range *r, double x)
{
    if (x > 0) {
        r->lo = fmin(r->lo, x);
        r->hi = fmax(r->hi, x);
    }
}

/* x's place in the range on a logarithmic scale, in [0, 1]: 1 at the
 * largest value, 0 at the smallest and for 0 (no term). The time terms
 * span minutes to days; divided by their largest value, all but the few
 * most extreme jobs would be near 0 and the weights would mean nothing.
 * A range narrower than a factor of 2 counts as a factor of 2: two jobs
 * that waited 61 and 62 s are not told as far apart as 1 minute and 1
 * day. */
static double log_place(const range *r, double x)
{
    if (!(x > 0))
        return 0;
    if (!(r->hi > r->lo))
        return 1;
    return log(x / r->lo) / fmax(log(r->hi / r->lo), M_LN2);
}

void slaq_mlfs_priority(const slaq_pjob *jobs, size_t n,
                        const slaq_prio_params *pp, double *key)
{
    double eps = pp->eps_s;
    double mL = 0, mI = 0, mDl = 0;
    range rD = {INFINITY, 0}, rR = {INFINITY, 0}, rW = {INFINITY, 0};
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        mL = fmax(mL, urgency(j));
        mI = fmax(mI, 1 / fmax(j->iter, 1));
        mDl = fmax(mDl, recent_drop(j));
        range_add(&rD, deadline_term(j, eps));
        range_add(&rR, remaining_term(j, eps));
        range_add(&rW, j->waited + eps);
    }
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        /* Eq. 2, summed over the job's workers (S = 1/k each). */
        double L = pp->use_urgency ? safe_div(urgency(j), mL) : 1;
        double pml = L * safe_div(1 / fmax(j->iter, 1), mI) *
                     safe_div(recent_drop(j), mDl);
        /* Eq. 4. */
        double pc = (pp->use_deadline
                         ? pp->g_d * log_place(&rD, deadline_term(j, eps))
                         : 0) +
                    pp->g_r * log_place(&rR, remaining_term(j, eps)) +
                    pp->g_w * log_place(&rW, j->waited + eps);
        /* Eq. 6. */
        key[i] = pp->alpha * pml + (1 - pp->alpha) * pc;
    }
}

void mlfs_keys(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
               double *key)
{
    slaq_mlfs_priority(jobs, n, pp, key);
}

int slaq_mlfs_dag(const double *base, const size_t *off, const size_t *child,
                  size_t ntasks, double gamma, double *out)
{
    if (!(gamma >= 0 && gamma <= 1))
        return SLAQ_EINVAL;
    for (size_t k = 0; k < ntasks; k++)
        for (size_t c = off[k]; c < off[k + 1]; c++)
            if (child[c] <= k || child[c] >= ntasks)
                return SLAQ_EINVAL;
    for (size_t k = ntasks; k-- > 0;) {
        double sum = 0;
        for (size_t c = off[k]; c < off[k + 1]; c++)
            sum += out[child[c]];
        out[k] = base[k] + gamma * sum;
    }
    return SLAQ_OK;
}
