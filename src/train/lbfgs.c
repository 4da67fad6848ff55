/*
 * lbfgs.c — L-BFGS through liblbfgs for slaq-train's quasi-Newton jobs
 * (linreg, mlpc).
 *
 * liblbfgs owns the optimisation loop, so slaq's per-iteration bookkeeping
 * runs in its progress callback: every L-BFGS iteration (including its line
 * search evaluations) is one slaq iteration, and returning non-zero from
 * the callback is how slaq's stop signal, --iters and --target-reduction
 * end the run.
 */
#include <lbfgs.h>
#include <string.h>

#include "train/train.h"

struct lbfgs_ctx {
    struct train_job *job;
    train_objective_fn f;
    void *ctx;
    size_t n;           /* real variables; the rest is padding */
    double *out;        /* the model's parameters, kept current */
    bool stopped;
};

static lbfgsfloatval_t lbfgs_eval(void *inst, const lbfgsfloatval_t *x,
                                  lbfgsfloatval_t *g, const int n,
                                  const lbfgsfloatval_t step)
{
    struct lbfgs_ctx *c = inst;
    (void)step;
    double fx = c->f(c->ctx, x, g);
    for (int i = (int)c->n; i < n; i++)
        g[i] = 0;
    return fx;
}

static int lbfgs_progress(void *inst, const lbfgsfloatval_t *x,
                          const lbfgsfloatval_t *g, const lbfgsfloatval_t fx,
                          const lbfgsfloatval_t xnorm,
                          const lbfgsfloatval_t gnorm,
                          const lbfgsfloatval_t step, int n, int k, int ls)
{
    struct lbfgs_ctx *c = inst;
    /* The model's own copy follows every iterate, so that the metric and
     * a checkpoint after this iteration see it. */
    memcpy(c->out, x, c->n * sizeof *c->out);
    (void)g, (void)xnorm, (void)gnorm, (void)step, (void)n, (void)k,
        (void)ls;
    c->stopped = train_job_iterate(c->job, fx);
    return c->stopped ? 1 : 0;
}

int train_lbfgs_run(struct train_job *job, double *x, size_t n,
                    train_objective_fn f, void *ctx, char *err, size_t len)
{
    /* liblbfgs built with SSE wants a multiple of 16 variables, aligned. */
    size_t np = (n + 15) / 16 * 16;
    lbfgsfloatval_t *v = lbfgs_malloc((int)np), fx;
    struct lbfgs_ctx c = {.job = job, .f = f, .ctx = ctx, .n = n, .out = x};
    lbfgs_parameter_t prm;
    if (!v) {
        snprintf(err, len, "out of memory for %zu L-BFGS variables", np);
        return -1;
    }
    memset(v, 0, np * sizeof *v);
    memcpy(v, x, n * sizeof *x);
    lbfgs_parameter_init(&prm);
    prm.m = 10;
    prm.epsilon = 1e-10;
    prm.max_iterations = 0;     /* the driver decides when to stop */
    prm.linesearch = LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    prm.max_linesearch = 40;
    int r = lbfgs((int)np, v, &fx, lbfgs_eval, lbfgs_progress, &c, &prm);
    memcpy(x, v, n * sizeof *x);
    lbfgs_free(v);
    if (!c.stopped) {
        /* liblbfgs ended on its own: converged, or no further decrease can
         * be found in floating point. Both mean the job is done. */
        job->stop_reason = "converged";
        if (job->iters == 0 && r < 0 && r != LBFGSERR_ROUNDING_ERROR) {
            snprintf(err, len, "L-BFGS failed before its first iteration "
                               "(liblbfgs status %d)", r);
            return -1;
        }
    }
    return 0;
}
