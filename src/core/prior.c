/*
 * prior.c — class priors: how the recorded curves of each convergence
 * class fall (docs/libslaq.md, "Class priors").
 *
 * A job whose loss has not moved yet has a flat forecast, so every policy
 * that divides by forecasts values its cores at nothing, and it never
 * runs fast enough for its loss to move. Until it moves, the scheduler
 * values it by its class's prior instead: a curve that falls by the
 * class's median relative drop, half of it in the class's median
 * iterations to half the drop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"

/*
 * Learned by `slaq prior --curves tests/data/curves-dev.jsonl` (the
 * tuning curves; tests/cli/test_prior.sh checks that it prints these).
 */
static const slaq_prior default_prior = {{
    [SLAQ_CONV_UNKNOWN] = {2, 10, 0.877382, 26},
    [SLAQ_CONV_SUBLINEAR] = {1.5, 14, 0.68119, 20},
    [SLAQ_CONV_LINEAR] = {3, 7, 0.946218, 4},
    [SLAQ_CONV_NONCONVEX] = {3, 6, 0.998067, 2},
}};

const slaq_prior *slaq_prior_default(void) { return &default_prior; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The first iteration of curve l at which it has dropped `part` of d. */
static double iters_to(const double *l, size_t len, double d, double part)
{
    for (size_t k = 1; k < len; k++)
        if (l[0] - l[k] >= part * d)
            return (double)k;
    return (double)(len - 1);
}

int slaq_prior_learn(const double *const *loss, const size_t *len,
                     const slaq_convergence *cls, size_t n, slaq_prior *out)
{
    memset(out, 0, sizeof *out);
    double *half = malloc((n ? n : 1) * sizeof *half);
    double *done = malloc((n ? n : 1) * sizeof *done);
    double *rel = malloc((n ? n : 1) * sizeof *rel);
    int rc = half && done && rel ? SLAQ_OK : SLAQ_ENOMEM;
    /* c = SLAQ_CONV_UNKNOWN takes every curve, each other class its own */
    for (int c = 0; rc == SLAQ_OK && c < SLAQ_NCONV; c++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (len[i] < 2 || (c && (int)cls[i] != c))
                continue;
            double lo = loss[i][0];
            for (size_t k = 1; k < len[i]; k++)
                lo = fmin(lo, loss[i][k]);
            double d = loss[i][0] - lo;
            if (!(d > 0) || !isfinite(d) || loss[i][0] == 0)
                continue;
            half[m] = iters_to(loss[i], len[i], d, 0.5);
            done[m] = iters_to(loss[i], len[i], d, 0.9);
            rel[m] = d / fabs(loss[i][0]);
            m++;
        }
        if (!m) {
            if (!c)
                rc = SLAQ_EINVAL;
            continue;
        }
        slaq_prior_class *p = &out->cls[c];
        p->curves = m;
        p->half_iters = median(half, m);
        p->done_iters = median(done, m);
        p->rel_drop = fmin(median(rel, m), 1);
    }
    free(half);
    free(done);
    free(rel);
    return rc;
}

const slaq_prior_class *slaq_prior_of(const slaq_prior *p,
                                      slaq_convergence c)
{
    if ((unsigned)c >= SLAQ_NCONV || !p->cls[c].curves)
        c = SLAQ_CONV_UNKNOWN;
    return &p->cls[c];
}

/*
 * L = loss0 − D·u/(u + h) is the rational family with p0 = 0, p1 =
 * 1/(D·h), p2 = 1/D and p3 = loss0 − D: D·h/(u + h) = 1/(u/(D·h) + 1/D).
 * No recent step bounds its fall (max_step = ∞): it has none.
 */
void slaq_prior_forecast(const slaq_prior_class *c, double k0, double loss0,
                         slaq_forecast *out)
{
    double d = c->rel_drop * fabs(loss0), h = fmax(c->half_iters, 1);
    if (!(d > 0))
        d = 1;
    memset(out, 0, sizeof *out);
    out->model = SLAQ_MODEL_RATIONAL;
    out->par[0] = 0;
    out->par[1] = 1 / (d * h);
    out->par[2] = 1 / d;
    out->par[3] = loss0 - d;
    out->yscale = 1;
    out->shift = 0;
    out->k0 = k0;
    out->loss0 = loss0;
    out->first_loss = loss0;
    out->final_loss = loss0 - d;
    out->scale = d;
    out->max_step = INFINITY;
    out->floor_loss = loss0 - d;
}
