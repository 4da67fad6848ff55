/*
 * policy_mlfs.c — MLF-H's priority (MLFS, CoNEXT'20, §3.3.1, Eq. 2-6):
 * the key of the `mlfs-h` share policy (policy.c's table),
 * the dependency recursion of Eq. 3 and 5, and MLF-RL's network (§3.4),
 * the key of `mlfs-rl` and `mlfs` (MLF-RL with MLF-C: the paper's
 * MLFS), which scores the same normalised features.
 * include/slaq/deadline.h states the formula and how slaq normalises the
 * paper's mixed units.
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

/* What normalises the factors: their largest values and the ranges of
 * the time terms over the jobs being ranked, and the share of them that
 * hold no cores (MLF-RL's load). */
typedef struct norm {
    double mL, mI, mDl;
    range rD, rR, rW;
    double idle;
} norm;

static void norm_of(const slaq_pjob *jobs, size_t n, double eps, norm *z)
{
    *z = (norm){0, 0, 0, {INFINITY, 0}, {INFINITY, 0}, {INFINITY, 0}, 0};
    size_t idle = 0;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        z->mL = fmax(z->mL, urgency(j));
        z->mI = fmax(z->mI, 1 / fmax(j->iter, 1));
        z->mDl = fmax(z->mDl, recent_drop(j));
        range_add(&z->rD, deadline_term(j, eps));
        range_add(&z->rR, remaining_term(j, eps));
        range_add(&z->rW, j->waited + eps);
        idle += !(j->prev_alloc > 0);
    }
    z->idle = n ? (double)idle / (double)n : 0;
}

/* Job j's features (deadline.h): the factors of Eq. 2 and the terms of
 * Eq. 4, each normalised, then whether it holds cores and the load. */
static void features(const norm *z, const slaq_pjob *j,
                     const slaq_prio_params *pp, double *f)
{
    double eps = pp->eps_s;
    f[0] = pp->use_urgency ? safe_div(urgency(j), z->mL) : 1;
    f[1] = safe_div(1 / fmax(j->iter, 1), z->mI);
    f[2] = safe_div(recent_drop(j), z->mDl);
    f[3] = pp->use_deadline ? log_place(&z->rD, deadline_term(j, eps)) : 0;
    f[4] = log_place(&z->rR, remaining_term(j, eps));
    f[5] = log_place(&z->rW, j->waited + eps);
    f[6] = j->prev_alloc > 0;
    f[7] = z->idle;
}

void slaq_mlfs_priority(const slaq_pjob *jobs, size_t n,
                        const slaq_prio_params *pp, double *key)
{
    norm z;
    norm_of(jobs, n, pp->eps_s, &z);
    for (size_t i = 0; i < n; i++) {
        double f[SLAQ_RL_NFEAT];
        features(&z, &jobs[i], pp, f);
        /* Eq. 2, summed over the job's workers (S = 1/k each). */
        double pml = f[0] * f[1] * f[2];
        /* Eq. 4. */
        double pc = pp->g_d * f[3] + pp->g_r * f[4] + pp->g_w * f[5];
        /* Eq. 6. */
        key[i] = pp->alpha * pml + (1 - pp->alpha) * pc;
    }
}

void mlfs_keys(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
               double *key)
{
    slaq_mlfs_priority(jobs, n, pp, key);
}

void slaq_rl_features(const slaq_pjob *jobs, size_t n,
                      const slaq_prio_params *pp, double *feat)
{
    norm z;
    norm_of(jobs, n, pp->eps_s, &z);
    for (size_t i = 0; i < n; i++)
        features(&z, &jobs[i], pp, feat + i * SLAQ_RL_NFEAT);
}

double slaq_rl_score(const slaq_rl_model *m, const double *x, double *hidden)
{
    double s = m->b2;
    for (size_t h = 0; h < SLAQ_RL_HIDDEN; h++) {
        double a = m->b1[h];
        for (size_t f = 0; f < SLAQ_RL_NFEAT; f++)
            a += m->w1[h][f] * x[f];
        a = tanh(a);
        if (hidden)
            hidden[h] = a;
        s += m->w2[h] * a;
    }
    return s;
}

void slaq_rl_keys(const slaq_pjob *jobs, size_t n,
                  const slaq_prio_params *pp, double *key)
{
    norm z;
    norm_of(jobs, n, pp->eps_s, &z);
    for (size_t i = 0; i < n; i++) {
        double f[SLAQ_RL_NFEAT];
        features(&z, &jobs[i], pp, f);
        key[i] = slaq_rl_score(pp->rl, f, NULL);
    }
}

int slaq_mlfs_terms(slaq_policy_kind policy, const slaq_pjob *jobs, size_t n,
                    const slaq_prio_params *pp, slaq_prio_terms *out)
{
    int rl = slaq_policy_needs_model(policy);
    if (!slaq_policy_has_terms(policy) || (rl && !pp->rl))
        return SLAQ_EINVAL;
    norm z;
    norm_of(jobs, n, pp->eps_s, &z);
    for (size_t i = 0; i < n; i++) {
        slaq_prio_terms *t = &out[i];
        const double *f = t->feat;
        features(&z, &jobs[i], pp, t->feat);
        t->ml = pp->alpha * f[0] * f[1] * f[2];
        t->comp = (1 - pp->alpha) *
                  (pp->g_d * f[3] + pp->g_r * f[4] + pp->g_w * f[5]);
        t->score = rl ? slaq_rl_score(pp->rl, f, NULL) : NAN;
        t->key = rl ? t->score : t->ml + t->comp;
    }
    return SLAQ_OK;
}

void mlfs_rl_keys(const slaq_pjob *jobs, size_t n,
                  const slaq_prio_params *pp, double *key)
{
    slaq_rl_keys(jobs, n, pp, key);
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
