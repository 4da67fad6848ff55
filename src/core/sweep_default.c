/*
 * sweep_default.c — the Default policy: random search with every
 * configuration run to its last epoch, new ones started in order as slots
 * free up (HyperDrive's default scheduling-algorithm policy).
 */
#include "core/sweep_internal.h"

static slaq_sweep_action dflt_on_train_epoch(slaq_sweep *s, size_t i,
                                             double now)
{
    (void)s, (void)i, (void)now;
    return SLAQ_SWEEP_CONTINUE;
}

const struct slaq_sweep_policy sw_policy_default = {
    .name = "default",
    .default_b = 10,
    .on_train_epoch = dflt_on_train_epoch,
};
