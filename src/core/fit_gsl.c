/*
 * fit_gsl.c — the `slaq-fit` predictor: SLAQ's own method (§4.2.2).
 *
 * Weighted least squares, weight Λ^m for a point m iterations old, of both
 * curve families, 1/(a k² + b k + c) + d and μ^(k−b) + c, with GSL's
 * trust-region non-linear least-squares solver (Levenberg–Marquardt); the
 * family with the smaller weighted residual is the forecast. A job that
 * declares its convergence class gets only that class's family, as in the
 * paper (sublinear: rational; linear or superlinear: exponential). Each family
 * is warm-started from its previous fit, carried into the new coordinates
 * (fit_reframe), and cold-started from the data's shape when there is no
 * previous fit or the warm start fails.
 *
 * The GSL workspaces are made once, at the first fit, for the most points
 * a fit can use (the window, FIT_MAXPTS, and the age at which Λ^age falls
 * below FIT_MINW bound it); a fit with fewer points fills the remaining
 * rows with weight 0, which changes no residual. So the number of points,
 * which changes with the gaps between reports, never re-creates a
 * workspace, and a fit allocates nothing.
 * GSL's error handler is process-wide state, which libslaq does not touch:
 * the inputs handed to GSL are valid by construction, and a program that
 * cannot afford GSL's default (abort) on an allocation failure switches it
 * off once at start-up, as slaq and slaqd do (see slaq.h).
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

#define GSL_MAX_ITER 100

typedef struct gsl_fit {
    gsl_multifit_nlinear_workspace *ws[PRED_NMODELS];
    size_t rows;            /* rows of every workspace */
    double w[FIT_MAXPTS];   /* the fit's weights, 0 beyond its points */
} gsl_fit;

typedef struct gsl_ctx {
    int model;
    const fit_data *d;
} gsl_ctx;

void pred_gsl_free(void *p)
{
    gsl_fit *g = p;
    if (!g)
        return;
    for (int m = 0; m < PRED_NMODELS; m++)
        if (g->ws[m])
            gsl_multifit_nlinear_free(g->ws[m]);
    free(g);
}

static int gsl_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    const gsl_ctx *c = params;
    double v[FIT_MAXPTS];
    fit_eval_all(c->model, x->data, c->d, v, NULL);
    for (int i = 0; i < c->d->n; i++)
        gsl_vector_set(f, (size_t)i, v[i] - c->d->y[i]);
    for (size_t i = (size_t)c->d->n; i < f->size; i++)
        gsl_vector_set(f, i, 0);
    return GSL_SUCCESS;
}

static int gsl_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
    const gsl_ctx *c = params;
    double v[FIT_MAXPTS], g[FIT_MAXPTS][4];
    int np = fit_npar(c->model);
    fit_eval_all(c->model, x->data, c->d, v, g);
    for (int i = 0; i < c->d->n; i++)
        for (int j = 0; j < np; j++)
            gsl_matrix_set(J, (size_t)i, (size_t)j, g[i][j]);
    for (size_t i = (size_t)c->d->n; i < J->size1; i++)
        for (int j = 0; j < np; j++)
            gsl_matrix_set(J, i, (size_t)j, 0);
    return GSL_SUCCESS;
}

/* The most points a fit of a history with this window can use. */
static size_t gsl_rows(size_t window, double lambda)
{
    size_t rows = window < FIT_MAXPTS ? window : FIT_MAXPTS;
    if (lambda < 1) {
        /* Points are used while Λ^age >= FIT_MINW; ages are whole. */
        double oldest = floor(log(FIT_MINW) / log(lambda) + 1e-9);
        if (oldest + 1 < (double)rows)
            rows = (size_t)oldest + 1;
    }
    return rows;
}

/* Makes the workspaces, `rows` rows each. */
static int gsl_fit_init(gsl_fit *g, size_t rows)
{
    gsl_multifit_nlinear_parameters fp =
        gsl_multifit_nlinear_default_parameters();
    for (int m = 0; m < PRED_NMODELS; m++) {
        size_t p = (size_t)fit_npar(m);
        g->ws[m] = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp,
                                              rows > p ? rows : p, p);
        if (!g->ws[m])
            return SLAQ_ENOMEM;
    }
    g->rows = rows;
    return SLAQ_OK;
}

/* Runs the solver from th; on success th holds the fit. */
static int gsl_solve(gsl_fit *g, int model, const fit_data *d, double *th,
                     unsigned max_iter)
{
    size_t n = (size_t)d->n, p = (size_t)fit_npar(model);
    if (n < p) /* fewer points than parameters: GSL would raise an error */
        return SLAQ_EINVAL;
    gsl_multifit_nlinear_workspace *ws = g->ws[model];
    size_t rows = g->rows > p ? g->rows : p; /* as gsl_fit_init made it */
    if (n > rows) /* cannot happen: gsl_rows bounds fit_data_load */
        return SLAQ_EINVAL;
    memcpy(g->w, d->w, n * sizeof *g->w);
    for (size_t i = n; i < rows; i++)
        g->w[i] = 0;
    gsl_ctx ctx = {model, d};
    gsl_multifit_nlinear_fdf fdf = {.f = gsl_f, .df = gsl_df, .fvv = NULL,
                                    .n = rows, .p = p, .params = &ctx};
    gsl_vector_view x = gsl_vector_view_array(th, p);
    gsl_vector_const_view wt = gsl_vector_const_view_array(g->w, rows);
    if (gsl_multifit_nlinear_winit(&x.vector, &wt.vector, &fdf, ws))
        return SLAQ_EINVAL;
    int info;
    int st = gsl_multifit_nlinear_driver(max_iter, 1e-10, 1e-10, 1e-10, NULL,
                                         NULL, &info, ws);
    const gsl_vector *pos = gsl_multifit_nlinear_position(ws);
    double cand[4];
    memcpy(cand, pos->data, p * sizeof *cand);
    /* A solver that stopped without converging (GSL_EMAXITER, or no
     * progress possible) may still have improved the start; the caller
     * judges the result by its validity and cost. */
    (void)st;
    if (!fit_valid(model, cand, d))
        return SLAQ_EINVAL;
    memcpy(th, cand, p * sizeof *cand);
    return SLAQ_OK;
}

/* Whether family m may be fitted for a job of the declared class: the
 * paper's choice by convergence class, or both when not declared. */
static int family_declared(slaq_convergence c, int m)
{
    if (c == SLAQ_CONV_SUBLINEAR)
        return m == PRED_RATIONAL;
    if (c == SLAQ_CONV_LINEAR)
        return m == PRED_EXP;
    return 1;
}

int pred_fit_slaq(slaq_predictor *p, const slaq_history *h)
{
    if (h->len < 3) {
        pred_forecast_linear(&p->fc, h);
        return SLAQ_OK;
    }
    size_t rows = gsl_rows(h->window, p->opts.lambda);
    if (p->gsl && ((gsl_fit *)p->gsl)->rows < rows) {
        /* A history with a larger window than the first one fitted. */
        pred_gsl_free(p->gsl);
        p->gsl = NULL;
    }
    if (!p->gsl) {
        p->gsl = calloc(1, sizeof(gsl_fit));
        if (!p->gsl || gsl_fit_init(p->gsl, rows)) {
            pred_gsl_free(p->gsl);
            p->gsl = NULL;
            pred_forecast_linear(&p->fc, h);
            return SLAQ_ENOMEM;
        }
    }
    fit_data d;
    fit_data_load(&d, h, p->opts.lambda);
    fit_frame now = {(double)slaq_history_last(h)->iter, d.off, d.sc};
    unsigned max_iter = p->opts.max_iter ? p->opts.max_iter : GSL_MAX_ITER;

    int best = -1;
    double best_cost = INFINITY, best_th[4] = {0};
    for (int m = 0; m < PRED_NMODELS; m++) {
        if (!family_declared(p->opts.convergence, m))
            continue;
        pred_fitstate *st = &p->model[m];
        double th[4], cost = INFINITY;
        int ok = 0;
        if (st->have) {
            memcpy(th, st->th, sizeof th);
            fit_frame was = {st->k0, st->off, st->sc};
            fit_reframe(m, th, &was, &now);
            ok = gsl_solve(p->gsl, m, &d, th, max_iter) == SLAQ_OK;
        }
        if (ok)
            cost = fit_cost(m, th, &d);
        double th2[4];
        fit_guess(m, &d, th2);
        if (gsl_solve(p->gsl, m, &d, th2, max_iter) == SLAQ_OK) {
            double c2 = fit_cost(m, th2, &d);
            if (!ok || c2 < cost) {
                memcpy(th, th2, sizeof th);
                cost = c2;
                ok = 1;
            }
        }
        st->have = ok;
        if (!ok)
            continue;
        memcpy(st->th, th, sizeof th);
        st->k0 = now.k0, st->off = now.off, st->sc = now.sc;
        double score = cost / fmax(d.neff - fit_npar(m), 0.5);
        if (score < best_cost) {
            best_cost = score;
            best = m;
            memcpy(best_th, th, sizeof th);
        }
    }

    if (best < 0) {
        pred_forecast_linear(&p->fc, h);
        return SLAQ_OK;
    }
    pred_forecast_base(&p->fc, h);
    fit_to_forecast(best, best_th, &d, 0, &p->fc);
    return SLAQ_OK;
}
