/*
 * eval.c — measuring a predictor against recorded loss curves.
 *
 * The definitions are DESIGN.md's, so that numbers compare with the SLAQ
 * paper's Figure 10(a): for every prefix of at least 5 iterations of a
 * curve, predict h iterations ahead; the normalised error divides by the
 * curve's whole loss range L(0) − min L, the relative error by the true
 * loss. `slaq predict-eval` and the tests call this one function.
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
            acc[i].norm_sum += e / range;
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
