/*
 * sweep_bandit.c — TuPAQ's action elimination, as HyperDrive's "Bandit"
 * baseline: every b epochs (10), a configuration goes on only if its best
 * metric, widened by epsilon (0.5), still reaches the best any
 * configuration has shown:
 *
 *     continue iff jobBest * (1 + eps) > globalBest      (accuracy, up)
 *     continue iff jobBest < globalBest * (1 + eps)      (a loss, down)
 *
 * It looks at the best value so far, not the curve, so a late bloomer that
 * starts low is eliminated.
 */
#include <stdbool.h>

#include "core/sweep_internal.h"

static slaq_sweep_action bandit_on_train_epoch(slaq_sweep *s, size_t i,
                                               double now)
{
    (void)now;
    const struct sw_cfg *c = &s->cfg[i];
    if (!sw_boundary(s, c))
        return SLAQ_SWEEP_CONTINUE;
    double eps = s->prm.eps;
    bool keep;
    if (s->prm.maximize)
        keep = c->best * (1 + eps) > s->gbest || c->best >= s->gbest;
    else /* oriented values are -loss */
        keep = -c->best < -s->gbest * (1 + eps) || c->best >= s->gbest;
    return keep ? SLAQ_SWEEP_CONTINUE : SLAQ_SWEEP_KILL;
}

const struct slaq_sweep_policy sw_policy_bandit = {
    .name = "bandit",
    .default_b = 10,
    .on_train_epoch = bandit_on_train_epoch,
};
