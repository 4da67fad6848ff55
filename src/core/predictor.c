/*
 * predictor.c — the loss predictor interface and its simple kinds.
 *
 * Every predictor turns a job's history into a slaq_forecast, a closed-form
 * loss curve that the allocator evaluates many times per epoch. This file
 * holds the interface (create, fit, evaluate), the forecast evaluator, the
 * `strawman` predictor (repeat the last loss change, SLAQ §4.2.2) and the
 * `oracle` (the true curve, for the simulator's oracle-greedy reference:
 * slaq's greedy with perfect forecasts, not an upper bound). The curve
 * fitting kinds live in fit_gsl.c (`slaq-fit`) and fit_auto.c (`auto`).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Reports whose steps bound how fast a fitted forecast may fall. */
#define PRED_RECENT 3

void slaq_predictor_opts_init(slaq_predictor_opts *o)
{
    o->lambda = 0.8;
    o->convergence = SLAQ_CONV_UNKNOWN;
    o->max_iter = 0;
}

slaq_predictor *slaq_predictor_new(slaq_predictor_kind kind,
                                   const slaq_predictor_opts *opts)
{
    slaq_predictor_opts def;
    if (!opts) {
        slaq_predictor_opts_init(&def);
        opts = &def;
    }
    if (!(opts->lambda > 0 && opts->lambda <= 1) ||
        (unsigned)kind > SLAQ_PRED_ORACLE ||
        (unsigned)opts->convergence > SLAQ_CONV_NONCONVEX)
        return NULL;
    slaq_predictor *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->kind = kind;
    p->opts = *opts;
    p->fc.model = SLAQ_MODEL_LINEAR;
    p->fc.yscale = 1;
    p->fc.par[1] = 1;
    p->fc.scale = 1;
    p->fc.final_loss = -1;
    return p;
}

void slaq_predictor_free(slaq_predictor *p)
{
    if (!p)
        return;
    pred_gsl_free(p->gsl);
    pred_auto_free(p->autost);
    free(p);
}

slaq_predictor_kind slaq_predictor_kind_of(const slaq_predictor *p)
{
    return p->kind;
}

int slaq_predictor_set_truth(slaq_predictor *p, const double *truth,
                             size_t len)
{
    if (p->kind != SLAQ_PRED_ORACLE || !truth || len == 0)
        return SLAQ_EINVAL;
    p->truth = truth;
    p->truth_len = len;
    return SLAQ_OK;
}

const slaq_forecast *slaq_predictor_forecast(const slaq_predictor *p)
{
    return &p->fc;
}

double slaq_predictor_loss(const slaq_predictor *p, double h)
{
    return slaq_forecast_loss(&p->fc, p->fc.k0 + h);
}

double pred_model_eval(slaq_model m, const double *par, double u)
{
    switch (m) {
    case SLAQ_MODEL_RATIONAL: {
        double den = (par[0] * u + par[1]) * u + par[2];
        /* Fits keep the denominator positive and rising after k0; this
         * guards evaluation far outside the fitted range. */
        if (!(den > 0))
            return par[3];
        return 1.0 / den + par[3];
    }
    case SLAQ_MODEL_EXP:
        return par[1] * pow(par[0], u) + par[2];
    default:
        return NAN;
    }
}

/* One closed-form curve of a forecast at u iterations after the last
 * report. */
static double curve_value(slaq_model m, const double *par, double yscale,
                          double shift, double u)
{
    if (m == SLAQ_MODEL_LINEAR)
        return par[0] - par[1] * u;
    return yscale * pred_model_eval(m, par, u) + shift;
}

/* The forecast at k; with `floored`, never below f->floor_loss. */
static double forecast_eval(const slaq_forecast *f, double k, int floored)
{
    double u = k - f->k0;
    if (f->model == SLAQ_MODEL_AQP)
        return aqp_forecast_eval(f, k);
    if (f->model == SLAQ_MODEL_TABLE) {
        if (!(k > 0))
            return f->table[0];
        double fl = floor(k);
        if (fl >= (double)(f->table_len - 1))
            return f->table[f->table_len - 1];
        size_t i = (size_t)fl;
        double w = k - fl;
        return f->table[i] + w * (f->table[i + 1] - f->table[i]);
    }
    double v = curve_value(f->model, f->par, f->yscale, f->shift, u);
    if (f->mix > 0)
        v += f->mix * (curve_value(f->model2, f->par2, f->yscale2, f->shift2,
                                   u) - v);
    if (f->model == SLAQ_MODEL_LINEAR && !(f->mix > 0))
        return v;
    /* Returns diminish: a fitted curve may not fall faster than the job's
     * recent steepest step. A few points can fit a curve that dives far
     * below anything plausible, and the allocator would chase it. */
    if (!(u > 0))
        return v;
    double floor_ = f->loss0 - f->max_step * u;
    if (floored && floor_ < f->floor_loss)
        floor_ = f->floor_loss;
    return v > floor_ ? v : floor_;
}

double slaq_forecast_loss(const slaq_forecast *f, double k)
{
    return forecast_eval(f, k, 1);
}

double slaq_forecast_end(const slaq_forecast *f, double k)
{
    return forecast_eval(f, k, 0);
}

/* Fills the fields every forecast shares: where the job is and how its
 * losses are normalised. */
void pred_forecast_base(slaq_forecast *f, const slaq_history *h)
{
    const slaq_report *last = slaq_history_last(h);
    f->k0 = (double)last->iter;
    f->loss0 = last->loss;
    f->first_loss = h->first_loss;
    f->scale = h->max_delta > 0 ? h->max_delta : 1.0;
    f->max_step = 0;
    f->floor_loss = -INFINITY;
    size_t from = h->len > PRED_RECENT ? h->len - PRED_RECENT : 1;
    for (size_t i = from; i < h->len; i++) {
        const slaq_report *a = slaq_history_at(h, i - 1);
        const slaq_report *b = slaq_history_at(h, i);
        double d = report_drop(a, b);
        if (d > f->max_step)
            f->max_step = d;
    }
    f->yscale = 1;
    f->shift = 0;
    f->mix = 0;
    f->table = NULL;
    f->table_len = 0;
}

/*
 * The strawman: the last per-iteration loss change, repeated. With a single
 * report there is no change yet; the job is then assumed to be at its
 * steepest, falling one normaliser per iteration. Its final loss is a
 * guess with no model behind it: as far below the current loss as the
 * current rate reaches in as many iterations as have been run.
 */
void pred_forecast_linear(slaq_forecast *f, const slaq_history *h)
{
    pred_forecast_base(f, h);
    f->model = SLAQ_MODEL_LINEAR;
    f->par[0] = f->loss0;
    double slope = f->scale;
    if (h->len >= 2) {
        const slaq_report *a = slaq_history_at(h, h->len - 2);
        const slaq_report *b = slaq_history_at(h, h->len - 1);
        slope = report_drop(a, b);
    }
    f->par[1] = slope;
    f->par[2] = f->par[3] = 0;
    f->final_loss = f->loss0 - fmax(slope, 0) * fmax(f->k0, 1.0);
}

static void pred_forecast_table(slaq_predictor *p, const slaq_history *h)
{
    slaq_forecast *f = &p->fc;
    pred_forecast_base(f, h);
    f->model = SLAQ_MODEL_TABLE;
    f->table = p->truth;
    f->table_len = p->truth_len;
    f->final_loss = p->truth[p->truth_len - 1];
    /* The oracle knows the job's whole curve, so it also knows the true
     * largest per-iteration drop and normalises by it from the start. */
    double maxd = 0;
    for (size_t i = 1; i < p->truth_len; i++)
        maxd = fmax(maxd, p->truth[i - 1] - p->truth[i]);
    if (maxd > 0)
        f->scale = maxd;
}

int slaq_predictor_fit(slaq_predictor *p, const slaq_history *h)
{
    if (h->len == 0)
        return SLAQ_ENODATA;
    if (h == p->fitted_hist && h->version == p->fitted_version)
        return SLAQ_OK;
    p->fitted_hist = h;
    p->fitted_version = h->version;
    switch (p->kind) {
    case SLAQ_PRED_STRAWMAN:
        pred_forecast_linear(&p->fc, h);
        return SLAQ_OK;
    case SLAQ_PRED_ORACLE:
        if (!p->truth) {
            pred_forecast_linear(&p->fc, h);
            return SLAQ_EINVAL;
        }
        pred_forecast_table(p, h);
        return SLAQ_OK;
    case SLAQ_PRED_SLAQ_FIT:
        return pred_fit_slaq(p, h);
    case SLAQ_PRED_AUTO:
        return pred_fit_auto(p, h);
    }
    return SLAQ_EINVAL;
}
