/*
 * eval.c — measuring a predictor against recorded loss curves.
 *
 * The definitions are docs/metrics.md's, so that numbers compare with the SLAQ
 * paper's Figure 10(a): for every prefix of at least 5 iterations of a
 * curve, predict h iterations ahead; the normalised error divides by the
 * curve's whole loss range L(0) − min L, the relative error by the true
 * loss. `slaq predict-eval` and the tests call this one function.
 * slaq_eval_progress() measures the other thing users read off a job, its
 * loss reduction so far, against the truth (`slaq progress-eval`).
 */
#include <math.h>

#include "internal.h"

#define EVAL_MIN_PREFIX 5

int slaq_eval_curve(slaq_predictor_kind kind, const slaq_predictor_opts *opts,
                    const double *loss, size_t n, const double *iter_cpu_s,
                    const int *horizons, size_t nh, slaq_eval_acc *acc)
{
    if (!loss || n < 2 || !horizons || !acc ||
        (unsigned)kind > SLAQ_PRED_ORACLE ||
        (opts && !(opts->lambda > 0 && opts->lambda <= 1)))
        return SLAQ_EINVAL;
    double lmin = loss[0];
    for (size_t i = 1; i < n; i++)
        lmin = fmin(lmin, loss[i]);
    double range = loss[0] - lmin;
    if (!(range > 0))
        return SLAQ_OK;

    slaq_history *h = slaq_history_new(SLAQ_DEFAULT_WINDOW);
    slaq_predictor *p = slaq_predictor_new(kind, opts);
    if (!h || !p) {
        slaq_history_free(h);
        slaq_predictor_free(p);
        return SLAQ_ENOMEM; /* the arguments were checked above */
    }
    if (kind == SLAQ_PRED_ORACLE)
        slaq_predictor_set_truth(p, loss, n);

    int err = SLAQ_OK;
    for (size_t k = 0; k + 1 < n && !err; k++) {
        slaq_report r = {.iter = k,
                         .loss = loss[k],
                         .cpu_s = k && iter_cpu_s ? iter_cpu_s[k - 1] : 0,
                         .samples = 0,
                         .t = (double)k};
        err = slaq_history_add(h, &r);
        if (err || k < EVAL_MIN_PREFIX)
            continue;
        slaq_predictor_fit(p, h);
        for (size_t i = 0; i < nh; i++) {
            size_t t = k + (size_t)horizons[i];
            if (horizons[i] <= 0 || t >= n)
                continue;
            double e = fabs(slaq_predictor_loss(p, horizons[i]) - loss[t]);
            acc[i].err_sum += e / range;
            acc[i].n++;
            if (loss[t] != 0) {
                acc[i].rel_sum += e / fabs(loss[t]);
                acc[i].n_rel++;
            }
        }
    }
    slaq_history_free(h);
    slaq_predictor_free(p);
    return err;
}

int slaq_eval_progress(slaq_predictor_kind kind, const double *loss, size_t n,
                       int declare, double target, slaq_progress_acc *out)
{
    if (!loss || n < 2 || !out || !(target > 0 && target <= 1) ||
        (unsigned)kind > SLAQ_PRED_ORACLE)
        return SLAQ_EINVAL;
    out->err_sum = 0;
    out->over_max = -INFINITY;
    out->n = 0;
    out->stop_true = out->stop_iter = NAN;
    double span = loss[0] - loss[n - 1];
    if (!(span > 0))
        return SLAQ_OK;

    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.predictor = kind;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.iters = declare ? n - 1 : 0;
    if (kind == SLAQ_PRED_ORACLE) {
        o.truth = loss;
        o.truth_len = n;
    }
    slaq_job *j = s ? slaq_sched_add(s, &o, 0) : NULL;
    if (!j) {
        slaq_sched_free(s);
        return SLAQ_ENOMEM;
    }
    int err = SLAQ_OK;
    for (size_t k = 0; k < n && !err; k++) {
        slaq_report r = {.iter = k, .loss = loss[k], .cpu_s = k ? 1 : 0,
                         .samples = 1, .t = (double)k};
        err = slaq_job_report(j, &r);
        if (err || k == 0)
            continue;
        err = slaq_sched_epoch(s, (double)k);
        double shown = slaq_job_reduction(j);
        double truth = (loss[0] - loss[k]) / span;
        truth = truth < 0 ? 0 : truth > 1 ? 1 : truth; /* as shown ones are */
        out->err_sum += fabs(shown - truth);
        out->over_max = fmax(out->over_max, shown - truth);
        out->n++;
        if (shown >= target && isnan(out->stop_true)) {
            out->stop_true = truth;
            out->stop_iter = (double)k;
        }
    }
    slaq_sched_free(s);
    return err;
}
