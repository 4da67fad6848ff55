/*
 * rltrain.c — MLF-RL's training in the deadline simulator (rltrain.h
 * states the two phases). The network's parameters are handled as one
 * vector: slaq_rl_model holds nothing but doubles (w1, b1, w2, b2 in
 * that order), so a model is also an array of RL_NPARAM of them.
 *
 * Eq. 7's objectives, per job that ends, each in [0, 1] so that the
 * paper's weights mean what they say (it gives no normalisation):
 *   g1 inverse JCT: min(1, 1 h / JCT), a job done within the hour 1
 *   g2 its deadline met (0 or 1)
 *   g3 bandwidth: 0 for every job. A data-parallel job's traffic is the
 *      same wherever it runs and the paper leaves the moves' cost out of
 *      the reward, so nothing here depends on the policy.
 *   g4 its required accuracy met by its deadline (0 or 1)
 *   g5 the share of its curve's reduction it had at its deadline
 * A round's reward is the sum over the jobs that ended in it, divided by
 * the workload's jobs, so a run's total is the mean reward per job.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "core/util.h"
#include "sim/rltrain.h"

#define RL_NPARAM (sizeof(slaq_rl_model) / sizeof(double))
_Static_assert(sizeof(slaq_rl_model) ==
                   (SLAQ_RL_HIDDEN * (SLAQ_RL_NFEAT + 2) + 1) *
                       sizeof(double),
               "slaq_rl_model is a plain array of doubles");

void rl_train_opts_init(rl_train_opts *o)
{
    *o = (rl_train_opts){
        .jobs = 2000, .load = 3, .dscale = 0.5, .req = {0.5, 0.95},
        .seed = 1, .workloads = 2, .imitate_epochs = 40, .iterations = 30,
        .sigma = 0.05, .lr_imitate = 0.01, .lr_rl = 0.005,
    };
}

double rl_job_reward(double jct, int met, int acc_met, double acc)
{
    double g1 = jct > 3600 ? 3600 / jct : 1;
    return RL_BETA_JCT * g1 + RL_BETA_DEADLINE * met +
           RL_BETA_BANDWIDTH * 0 + RL_BETA_ACC_MET * acc_met +
           RL_BETA_ACC * acc;
}

static double *param(slaq_rl_model *m)
{
    return (double *)m;
}

/* g += scale · ∂score/∂θ at features x, whose hidden values are h. */
static void score_grad(const slaq_rl_model *m, const double *x,
                       const double *h, double scale, double *g)
{
    const size_t NF = SLAQ_RL_NFEAT, NH = SLAQ_RL_HIDDEN;
    for (size_t k = 0; k < NH; k++) {
        double d = scale * m->w2[k] * (1 - h[k] * h[k]);
        for (size_t f = 0; f < NF; f++)
            g[k * NF + f] += d * x[f];
        g[NH * NF + k] += d;
        g[NH * NF + NH + k] += scale * h[k];
    }
    g[NH * NF + 2 * NH] += scale;
}

/* Adam (Kingma and Ba), minimising: θ -= lr · m̂ / (√v̂ + 1e-8). */
typedef struct adam {
    double m[RL_NPARAM], v[RL_NPARAM];
    size_t t;
} adam;

static void adam_step(adam *a, double *theta, const double *g, double lr)
{
    a->t++;
    double c1 = 1 - pow(0.9, (double)a->t), c2 = 1 - pow(0.999, (double)a->t);
    for (size_t i = 0; i < RL_NPARAM; i++) {
        a->m[i] = 0.9 * a->m[i] + 0.1 * g[i];
        a->v[i] = 0.999 * a->v[i] + 0.001 * g[i] * g[i];
        theta[i] -= lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + 1e-8);
    }
}

/* A growable array of doubles. */
typedef struct dvec {
    double *v;
    size_t n, cap;
    int oom;
} dvec;

static double *dvec_grow(dvec *d, size_t n)
{
    if (d->n + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->n + n)
            cap *= 2;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            d->oom = 1;
            return NULL;
        }
        d->v = v;
        d->cap = cap;
    }
    double *at = d->v + d->n;
    d->n += n;
    return at;
}

/* What the hooks of one run see and keep. */
typedef struct run_ctx {
    const slaq_prio_params *prio;
    const slaq_rl_model *m;
    gsl_rng *rng;          /* noise; NULL: none */
    double sigma, epoch_s, t0, njobs;
    int started;
    dvec feat;             /* scratch: the round's features */
    dvec samples;          /* imitation: features and MLF-H's key */
    dvec rstart;           /* imitation: where each round's samples start */
    dvec reward;           /* per round */
    dvec grad;             /* noisy runs: per round, Σ_j (ε/σ²) ∂s_j/∂θ */
    size_t met;            /* deadlines met; imitation: rounds seen */
} run_ctx;

#define RL_IMITATE_EVERY 10

static size_t round_of(run_ctx *x, double t)
{
    return (size_t)lround((t - x->t0) / x->epoch_s);
}

/* Makes v's length at least n rounds of `width`, the new ones 0. */
static int ensure_rounds(dvec *v, size_t n, size_t width)
{
    if (v->n >= n * width)
        return 0;
    size_t add = n * width - v->n;
    double *at = dvec_grow(v, add);
    if (!at)
        return -1;
    memset(at, 0, add * sizeof *at);
    return 0;
}

static void imitate_keys(void *ctx, double t, const slaq_pjob *pj, size_t n,
                         double *key)
{
    run_ctx *x = ctx;
    (void)t;
    /* Every RL_IMITATE_EVERY-th round: the states of nearby rounds are
     * much alike. */
    if (x->met++ % RL_IMITATE_EVERY)
        return;
    x->feat.n = 0;
    double *f = dvec_grow(&x->feat, n * SLAQ_RL_NFEAT);
    if (!f)
        return;
    slaq_rl_features(pj, n, x->prio, f);
    double *at = dvec_grow(&x->rstart, 1);
    if (!at)
        return;
    *at = (double)(x->samples.n / (SLAQ_RL_NFEAT + 1));
    for (size_t i = 0; i < n; i++) {
        double *s = dvec_grow(&x->samples, SLAQ_RL_NFEAT + 1);
        if (!s)
            return;
        memcpy(s, f + i * SLAQ_RL_NFEAT, SLAQ_RL_NFEAT * sizeof *s);
        s[SLAQ_RL_NFEAT] = key[i];
    }
}

static void explore_keys(void *ctx, double t, const slaq_pjob *pj, size_t n,
                         double *key)
{
    run_ctx *x = ctx;
    if (!x->started) {
        x->started = 1;
        x->t0 = t;
    }
    if (!x->rng)
        return;
    size_t r = round_of(x, t);
    x->feat.n = 0;
    double *f = dvec_grow(&x->feat, n * SLAQ_RL_NFEAT);
    if (!f || ensure_rounds(&x->grad, r + 1, RL_NPARAM))
        return;
    slaq_rl_features(pj, n, x->prio, f);
    double *g = x->grad.v + r * RL_NPARAM, h[SLAQ_RL_HIDDEN];
    for (size_t i = 0; i < n; i++) {
        /* Only the pending jobs explore: their order is the round's
         * choice (which of them the free nodes take); a running job's
         * key only ranks it for moves, and its noise would add variance
         * to every round's gradient. */
        if (pj[i].prev_alloc > 0)
            continue;
        slaq_rl_score(x->m, f + i * SLAQ_RL_NFEAT, h);
        double eps = x->sigma * gsl_ran_ugaussian(x->rng);
        key[i] += eps;
        score_grad(x->m, f + i * SLAQ_RL_NFEAT, h,
                   eps / (x->sigma * x->sigma), g);
    }
}

static void note_done(void *ctx, double t, size_t job, double jct, int met,
                      int acc_met, double acc)
{
    run_ctx *x = ctx;
    (void)job;
    if (!x->started)
        return;
    size_t r = round_of(x, t);
    if (ensure_rounds(&x->reward, r + 1, 1))
        return;
    x->reward.v[r] += rl_job_reward(jct, met, acc_met, acc) / x->njobs;
    x->met += met;
}

static void ctx_free(run_ctx *x)
{
    free(x->feat.v);
    free(x->samples.v);
    free(x->rstart.v);
    free(x->reward.v);
    free(x->grad.v);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run of w under policy with the hooks of x. */
static int run(const dl_workload *w, const curve_set *cs,
               const dl_config *base, slaq_policy_kind policy,
               const slaq_rl_model *m, run_ctx *x, dl_hook *hook, char *err,
               size_t errlen)
{
    dl_config c = *base;
    c.policy = policy;
    c.mlfs.prio.rl = m;
    c.hook = hook;
    hook->ctx = x;
    x->njobs = (double)w->n;
    dl_result r;
    int rc = dl_run(w, cs, &c, &r, err, errlen);
    if (!rc)
        dl_result_free(&r);
    if (!rc && (x->feat.oom || x->samples.oom || x->rstart.oom ||
                x->reward.oom || x->grad.oom)) {
        util_errf(err, errlen, "out of memory");
        rc = -1;
    }
    return rc;
}

/* Phase 1: fit the network to MLF-H's priorities on its own states. */
static int imitate(const rl_train_opts *o, const dl_workload *ws,
                   const curve_set *cs, const dl_config *base,
                   slaq_rl_model *m, gsl_rng *rng, FILE *progress, char *err,
                   size_t errlen)
{
    run_ctx x = {.prio = &base->mlfs.prio, .epoch_s = base->epoch_s};
    dl_hook hook = {.keys = imitate_keys};
    for (size_t k = 0; k < o->workloads; k++)
        if (run(&ws[k], cs, base, SLAQ_POLICY_MLFS_H, NULL, &x, &hook, err,
                errlen)) {
            ctx_free(&x);
            return -1;
        }
    const size_t W = SLAQ_RL_NFEAT + 1, ns = x.samples.n / W;
    size_t *perm = malloc((ns ? ns : 1) * sizeof *perm);
    adam *a = calloc(1, sizeof *a);
    if (!perm || !a || ns == 0) {
        util_errf(err, errlen, ns ? "out of memory"
                  : "MLF-H's runs left no states to imitate");
        free(perm);
        free(a);
        ctx_free(&x);
        return -1;
    }
    for (size_t i = 0; i < ns; i++)
        perm[i] = i;
    if (progress)
        fprintf(progress, "imitation: %zu states of MLF-H (%zu rounds)\n",
                ns, x.rstart.n);
    enum { BATCH = 64 };
    double g[RL_NPARAM], h[SLAQ_RL_HIDDEN];
    for (size_t ep = 0; ep < o->imitate_epochs; ep++) {
        gsl_ran_shuffle(rng, perm, ns, sizeof *perm);
        double sse = 0;
        for (size_t b = 0; b < ns; b += BATCH) {
            size_t e = b + BATCH < ns ? b + BATCH : ns;
            memset(g, 0, sizeof g);
            for (size_t q = b; q < e; q++) {
                const double *s = x.samples.v + perm[q] * W;
                double d = slaq_rl_score(m, s, h) - s[SLAQ_RL_NFEAT];
                sse += d * d;
                score_grad(m, s, h, 2 * d / (double)(e - b), g);
            }
            adam_step(a, param(m), g, o->lr_imitate);
        }
        if (progress && (ep + 1 == o->imitate_epochs || ep % 10 == 0)) {
            /* How often the network orders two jobs of one round as
             * MLF-H does, over pairs drawn from the rounds. */
            size_t agree = 0, pairs = 0;
            for (size_t q = 0; q < 4000; q++) {
                size_t r = gsl_rng_uniform_int(rng, x.rstart.n);
                size_t lo = (size_t)x.rstart.v[r];
                size_t hi = r + 1 < x.rstart.n ? (size_t)x.rstart.v[r + 1]
                                               : ns;
                if (hi - lo < 2)
                    continue;
                const double *s1 = x.samples.v +
                    (lo + gsl_rng_uniform_int(rng, hi - lo)) * W;
                const double *s2 = x.samples.v +
                    (lo + gsl_rng_uniform_int(rng, hi - lo)) * W;
                if (s1[SLAQ_RL_NFEAT] == s2[SLAQ_RL_NFEAT])
                    continue;
                pairs++;
                agree += (slaq_rl_score(m, s1, NULL) >
                          slaq_rl_score(m, s2, NULL)) ==
                         (s1[SLAQ_RL_NFEAT] > s2[SLAQ_RL_NFEAT]);
            }
            fprintf(progress, "imitation: epoch %zu/%zu, mean squared "
                    "error %.6f, pairs ordered as MLF-H %.3f\n", ep + 1,
                    o->imitate_epochs, sse / (double)ns,
                    pairs ? (double)agree / (double)pairs : 0);
            fflush(progress);
        }
    }
    free(perm);
    free(a);
    ctx_free(&x);
    return 0;
}

/* The discounted returns of a run's rewards, in place. */
static void returns(dvec *r)
{
    double G = 0;
    for (size_t t = r->n; t-- > 0;) {
        G = r->v[t] + RL_ETA * G;
        r->v[t] = G;
    }
}

int rl_train(const rl_train_opts *o, const curve_set *cs,
             const dl_config *base, slaq_rl_model *out, double *best_reward,
             FILE *progress, char *err, size_t errlen)
{
    if (o->seed < 1 || o->workloads < 1 || o->jobs < 1 || !(o->sigma > 0)) {
        util_errf(err, errlen, "training needs a seed >= 1, workloads, jobs "
                  "and sigma > 0");
        return -1;
    }
    double t_start = now_s();
    dl_workload *ws = calloc(o->workloads, sizeof *ws);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    adam *a = calloc(1, sizeof *a);
    slaq_rl_model *m = calloc(1, sizeof *m), *best = calloc(1, sizeof *best);
    int rc = -1;
    if (!ws || !rng || !a || !m || !best) {
        util_errf(err, errlen, "out of memory");
        goto out;
    }
    gsl_rng_set(rng, o->seed);
    for (size_t k = 0; k < o->workloads; k++)
        if (dl_generate(o->jobs, o->load, o->dscale, 1000 * o->seed + k + 1,
                        &o->req, &base->cl, cs, &ws[k], err, errlen))
            goto out;
    /* Small random weights: the hidden units start near their linear
     * range. */
    double *th = param(m);
    for (size_t i = 0; i < RL_NPARAM; i++)
        th[i] = 0.3 * gsl_ran_ugaussian(rng);
    if (imitate(o, ws, cs, base, m, rng, progress, err, errlen))
        goto out;
    if (progress)
        fprintf(progress, "imitation: done in %.0f s\n", now_s() - t_start);

    double best_r = -INFINITY;
    size_t best_it = 0;
    dl_hook hook = {.keys = explore_keys, .done = note_done};
    for (size_t it = 0; it <= o->iterations; it++) {
        double g[RL_NPARAM] = {0}, total = 0;
        size_t met = 0, jobs = 0, steps = 0;
        for (size_t k = 0; k < o->workloads; k++) {
            run_ctx b = {.prio = &base->mlfs.prio, .m = m,
                         .epoch_s = base->epoch_s, .sigma = o->sigma};
            if (run(&ws[k], cs, base, SLAQ_POLICY_MLFS_RL, m, &b, &hook, err,
                    errlen)) {
                ctx_free(&b);
                goto out;
            }
            for (size_t t = 0; t < b.reward.n; t++)
                total += b.reward.v[t] / (double)o->workloads;
            met += b.met;
            jobs += ws[k].n;
            if (it == o->iterations) {
                ctx_free(&b);
                continue;
            }
            run_ctx x = {.prio = &base->mlfs.prio, .m = m, .rng = rng,
                         .epoch_s = base->epoch_s, .sigma = o->sigma};
            if (run(&ws[k], cs, base, SLAQ_POLICY_MLFS_RL, m, &x, &hook, err,
                    errlen)) {
                ctx_free(&b);
                ctx_free(&x);
                goto out;
            }
            returns(&b.reward);
            returns(&x.reward);
            size_t R = x.grad.n / RL_NPARAM;
            for (size_t t = 0; t < R; t++) {
                double A = (t < x.reward.n ? x.reward.v[t] : 0) -
                           (t < b.reward.n ? b.reward.v[t] : 0);
                const double *v = x.grad.v + t * RL_NPARAM;
                for (size_t i = 0; i < RL_NPARAM; i++)
                    g[i] -= A * v[i]; /* ascent, as Adam minimises */
            }
            steps += R;
            ctx_free(&b);
            ctx_free(&x);
        }
        if (total > best_r) {
            best_r = total;
            best_it = it;
            *best = *m;
        }
        if (progress) {
            fprintf(progress, "reinforce: iteration %zu/%zu, reward per job "
                    "%.4f, deadlines met %.3f (best %.4f at %zu), %.0f s\n",
                    it, o->iterations, total, (double)met / (double)jobs,
                    best_r, best_it, now_s() - t_start);
            fflush(progress);
        }
        if (it < o->iterations && steps > 0) {
            for (size_t i = 0; i < RL_NPARAM; i++)
                g[i] /= (double)steps;
            adam_step(a, param(m), g, o->lr_rl);
        }
    }
    *out = *best;
    *best_reward = best_r;
    rc = 0;
out:
    for (size_t k = 0; ws && k < o->workloads; k++)
        dl_workload_free(&ws[k]);
    free(ws);
    gsl_rng_free(rng);
    free(a);
    free(m);
    free(best);
    return rc;
}
