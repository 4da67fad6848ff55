/*
 * goal.c — what a job's user asks beyond its loss: a deadline, a
 * required accuracy of its metric, an urgency and MLF-C's stopping rule
 * (slaq_goal, slaq.h).
 */
#include <math.h>

#include "internal.h"

void slaq_goal_init(slaq_goal *g)
{
    g->deadline = INFINITY;
    g->accuracy = NAN;
    g->maximize = 1;
    g->urgency = SLAQ_URGENCY_MIN;
    g->stop = SLAQ_STOP_ITERS;
}

int slaq_goal_check(const slaq_goal *g)
{
    if (isnan(g->deadline) || isinf(g->accuracy) ||
        g->urgency < SLAQ_URGENCY_MIN || g->urgency > SLAQ_URGENCY_MAX ||
        (unsigned)g->stop >= SLAQ_STOP_NRULES ||
        (g->stop == SLAQ_STOP_ACCURACY && isnan(g->accuracy)))
        return SLAQ_EINVAL;
    return SLAQ_OK;
}

int slaq_goal_met(const slaq_goal *g, double value)
{
    if (isnan(value))
        return 0;
    if (isnan(g->accuracy))
        return 1;
    return g->maximize ? value >= g->accuracy : value <= g->accuracy;
}
