/*
 * sweep_earlyterm.c — Domhan et al.'s predictive termination criterion,
 * HyperDrive's "EarlyTerm" baseline: every b epochs (30), predict the
 * configuration's curve to its last epoch m and kill it when
 *
 *     P( y(m) > y_best | y(1..n) ) < delta        (delta = 0.05)
 *
 * with y_best the best metric any configuration has shown so far.
 */
#include <math.h>

#include "core/sweep_internal.h"

static slaq_sweep_action et_on_train_epoch(slaq_sweep *s, size_t i,
                                           double now)
{
    (void)now;
    struct sw_cfg *c = &s->cfg[i];
    if (!sw_boundary(s, c))
        return SLAQ_SWEEP_CONTINUE;
    if (sw_model_fit(s, c, c->y, c->epochs, 0) < 0)
        return SLAQ_SWEEP_CONTINUE;
    c->p = sw_model_prob(s, s->prm.max_epochs, s->gbest);
    return c->p < s->prm.delta ? SLAQ_SWEEP_KILL : SLAQ_SWEEP_CONTINUE;
}

const struct slaq_sweep_policy sw_policy_earlyterm = {
    .name = "earlyterm",
    .default_b = 30,
    .model = 1,
    .on_train_epoch = et_on_train_epoch,
};
