/*
 * metrics.c — docs/metrics.md's normalised loss, time to X% and epoch
 * samples, the one copy that slaq sim and slaq report compute with (see
 * metrics.h).
 */
#include "sim/metrics.h"

#include <stdlib.h>
#include <string.h>

double metric_norm_loss(double loss, double first, double end, int last)
{
    if (last)
        return 0;
    if (!(first - end > 0))
        return 1;
    return (loss - end) / (first - end);
}

int metric_reached(double norm_loss, double since, int xi, double tx[SIM_NX])
{
    while (xi < SIM_NX && 1 - norm_loss >= sim_x_pct[xi] / 100.0 - 1e-12)
        tx[xi++] = since;
    return xi;
}

static int by_loss_desc(const void *a, const void *b)
{
    const metric_point *x = a, *y = b;
    if (x->norm_loss != y->norm_loss)
        return x->norm_loss > y->norm_loss ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void metric_sample(sim_sample *sm, double t, metric_point *pts, size_t n)
{
    qsort(pts, n, sizeof *pts, by_loss_desc);
    memset(sm, 0, sizeof *sm);
    sm->t = t;
    sm->active = n;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        int g = 4 * i < n ? SIM_HIGH : 4 * i < 2 * n ? SIM_MEDIUM : SIM_LOW;
        sm->cores[g] += pts[i].cores;
        sum += pts[i].norm_loss;
    }
    sm->avg_norm_loss = sum / (double)n;
}
