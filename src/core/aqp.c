/*
 * aqp.c — approximate queries (ReLAQS): the progress metric of Eq. 4.1,
 * the progress curve 1/(a·i² + b), the mini-batch cost line, a query's
 * scheduling state and its forecast for the allocator, and the evaluation
 * of all of it on recorded queries.
 *
 * The allocator is not here: a query's forecast is an ordinary
 * slaq_forecast (model SLAQ_MODEL_AQP) that slaq_allocate()'s greedy
 * evaluates like any job's, which is how ReLAQS's Algorithm 5 reuses
 * SLAQ's Algorithm 1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util.h"

/* ------------------------------------------------------- progress metric */

struct slaq_progress {
    size_t k;         /* columns (0 until the first add) */
    double *prev;     /* last estimate per column (NAN: none) */
    double *maxd;     /* largest |change| so far per column */
    double *p;        /* P_i for i = 1..n, p[i-1]; p[0] = NAN */
    size_t n, cap;
};

slaq_progress *slaq_progress_new(void)
{
    return calloc(1, sizeof(slaq_progress));
}

void slaq_progress_free(slaq_progress *p)
{
    if (!p)
        return;
    free(p->prev);
    free(p->maxd);
    free(p->p);
    free(p);
}

int slaq_progress_add(slaq_progress *p, const double *x, size_t n)
{
    if (!x || n == 0 || (p->k && n != p->k))
        return SLAQ_EINVAL;
    for (size_t c = 0; c < n; c++)
        if (isinf(x[c]))
            return SLAQ_EINVAL;
    if (!p->k) {
        p->prev = malloc(n * sizeof *p->prev);
        p->maxd = calloc(n, sizeof *p->maxd);
        if (!p->prev || !p->maxd) {
            free(p->prev);
            free(p->maxd);
            p->prev = p->maxd = NULL;
            return SLAQ_ENOMEM;
        }
        for (size_t c = 0; c < n; c++)
            p->prev[c] = NAN;
        p->k = n;
    }
    if (p->n == p->cap) {
        size_t cap = grow_cap(p->cap, p->n + 1, 64);
        if (!cap || GROW_ARRAY(p->p, cap))
            return SLAQ_ENOMEM;
        p->cap = cap;
    }
    double sum = 0;
    size_t used = 0;
    for (size_t c = 0; c < n; c++) {
        if (!isnan(x[c]) && !isnan(p->prev[c])) {
            double d = fabs(x[c] - p->prev[c]);
            if (d > p->maxd[c])
                p->maxd[c] = d;
            if (p->maxd[c] > 0) {
                sum += d / p->maxd[c];
                used++;
            }
        }
        if (!isnan(x[c]))
            p->prev[c] = x[c];
    }
    p->p[p->n++] = used ? sum / (double)used : NAN;
    if (p->n == 1)
        p->p[0] = NAN;
    return SLAQ_OK;
}

size_t slaq_progress_batches(const slaq_progress *p) { return p->n; }

double slaq_progress_value(const slaq_progress *p, size_t i)
{
    if (i < 2 || i > p->n)
        return NAN;
    return p->p[i - 1];
}

/* ------------------------------------------------------- progress curve */

void slaq_pcurve_prior(slaq_pcurve *c)
{
    c->a = 0.25;
    c->b = 0;
}

double slaq_pcurve_eval(const slaq_pcurve *c, double i)
{
    if (!(i >= 1))
        i = 1;
    double den = c->a * i * i + c->b;
    /* Below the fitted range the curve may bend up without bound; it is
     * held at 1/a there (the prior's value at i = 1 is 4). */
    if (!(den > c->a))
        den = c->a;
    return 1.0 / den;
}

/* Σ (p − 1/(a·x + b))² over the points, INFINITY where the curve is not
 * positive at a point. */
static double pcurve_sse(const double *x, const double *p, size_t n, double a,
                         double b)
{
    double s = 0;
    for (size_t k = 0; k < n; k++) {
        double den = a * x[k] + b;
        if (!(den > 0))
            return INFINITY;
        double r = p[k] - 1.0 / den;
        s += r * r;
    }
    return s;
}

#define PCURVE_MAXPTS 4096

int slaq_pcurve_fit(const double *iv, const double *pv, size_t n,
                    slaq_pcurve *out)
{
    if (!iv || !pv || !out)
        return SLAQ_EINVAL;
    if (n > PCURVE_MAXPTS) { /* the most recent points */
        iv += n - PCURVE_MAXPTS;
        pv += n - PCURVE_MAXPTS;
        n = PCURVE_MAXPTS;
    }
    double x[PCURVE_MAXPTS];
    size_t pos = 0;
    double xmin = INFINITY, xmax = 0;
    for (size_t k = 0; k < n; k++) {
        if (!(iv[k] >= 1) || !isfinite(iv[k]) || !(pv[k] >= 0) ||
            !isfinite(pv[k]))
            return SLAQ_EINVAL;
        x[k] = iv[k] * iv[k];
        if (pv[k] > 0) {
            pos++;
            xmin = fmin(xmin, x[k]);
            xmax = fmax(xmax, x[k]);
        }
    }
    if (pos < 2 || !(xmax > xmin))
        return SLAQ_ENODATA;

    /* Start: 1/P = a·x + b by least squares weighted with P⁴ (the
     * delta method's weight: an error in P is an error in 1/P times P²),
     * over the points with P > 0. */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t k = 0; k < n; k++) {
        if (!(pv[k] > 0))
            continue;
        double w = pv[k] * pv[k] * pv[k] * pv[k];
        double y = 1.0 / pv[k];
        sw += w;
        sx += w * x[k];
        sy += w * y;
        sxx += w * x[k] * x[k];
        sxy += w * x[k] * y;
    }
    double det = sw * sxx - sx * sx;
    double a = det > 0 ? (sw * sxy - sx * sy) / det : 0;
    double b = det > 0 ? (sy - a * sx) / sw : 0;
    if (!(a > 0) || !isfinite(a) || !isfinite(b) ||
        !isfinite(pcurve_sse(x, pv, n, a, b))) {
        /* b = 0: a from the mean of 1/(P·x) over the points with P > 0 */
        double s = 0;
        for (size_t k = 0; k < n; k++)
            if (pv[k] > 0)
                s += 1.0 / (pv[k] * x[k]);
        a = s / (double)pos;
        b = 0;
    }

    /* Levenberg–Marquardt on (a, b) in P: f = 1/(a·x + b), ∂f/∂a =
     * −x·f², ∂f/∂b = −f². Steps that leave the curve non-positive at a
     * point count as failures. */
    double sse = pcurve_sse(x, pv, n, a, b);
    double lam = 1e-3;
    for (int it = 0; it < 60 && sse > 0; it++) {
        double jaa = 0, jab = 0, jbb = 0, ga = 0, gb = 0;
        for (size_t k = 0; k < n; k++) {
            double f = 1.0 / (a * x[k] + b);
            double da = -x[k] * f * f, db = -f * f;
            double r = pv[k] - f;
            jaa += da * da;
            jab += da * db;
            jbb += db * db;
            ga += da * r;
            gb += db * r;
        }
        int improved = 0;
        while (lam < 1e12) {
            double m11 = jaa * (1 + lam), m22 = jbb * (1 + lam);
            double d = m11 * m22 - jab * jab;
            if (!(d > 0) || !isfinite(d)) {
                lam *= 10;
                continue;
            }
            double sa = (ga * m22 - gb * jab) / d;
            double sb = (m11 * gb - jab * ga) / d;
            double na = a + sa, nb = b + sb;
            double ns = na > 0 ? pcurve_sse(x, pv, n, na, nb) : INFINITY;
            if (ns < sse) {
                double rel = (sse - ns) / sse;
                a = na;
                b = nb;
                sse = ns;
                lam = fmax(lam / 10, 1e-9);
                improved = rel > 1e-10;
                break;
            }
            lam *= 10;
        }
        if (!improved)
            break;
    }
    if (!(a > 0) || !isfinite(a) || !isfinite(b))
        return SLAQ_ENODATA;
    out->a = a;
    out->b = b;
    return SLAQ_OK;
}

/* --------------------------------------------------------- cost line */

int slaq_batchcost_fit(const double *iv, const double *cpu, size_t n,
                       slaq_batchcost *out)
{
    if (!iv || !cpu || !out || n == 0)
        return SLAQ_EINVAL;
    double mi = 0, mc = 0;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(iv[k]) || !(cpu[k] >= 0) || !isfinite(cpu[k]))
            return SLAQ_EINVAL;
        mi += iv[k];
        mc += cpu[k];
    }
    mi /= (double)n;
    mc /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t k = 0; k < n; k++) {
        sxx += (iv[k] - mi) * (iv[k] - mi);
        sxy += (iv[k] - mi) * (cpu[k] - mc);
    }
    double beta = sxx > 0 ? sxy / sxx : 0;
    if (!(beta > 0))
        beta = 0;
    double alpha = mc - beta * mi;
    /* The line must stay positive from mini-batch 1 on; where a steep
     * recent rise would take it below, keep the mean level instead. */
    if (!(alpha + beta > 0)) {
        beta = 0;
        alpha = mc;
    }
    if (!(alpha > 0))
        alpha = mc > 0 ? mc : 1e-9;
    out->alpha = alpha;
    out->beta = beta;
    return SLAQ_OK;
}

double slaq_batchcost_eval(const slaq_batchcost *c, double i)
{
    return c->alpha + c->beta * i;
}

/* ------------------------------------------------------------- query */

struct slaq_query {
    slaq_query_opts opts;
    slaq_progress *prog;
    slaq_pcurve curve;
    double *cost;       /* CPU-seconds of the i-th mini-batch added,
                           cost[i-1] (NAN: not measured) */
    double *num;        /* its number, num[i-1] (they may skip: see
                           slaq_query_resume) */
    size_t cap;
    uint64_t last;      /* the last mini-batch's number */
    double work;
    double fit_i[PCURVE_MAXPTS], fit_p[PCURVE_MAXPTS]; /* scratch */
};

void slaq_query_opts_init(slaq_query_opts *o)
{
    o->window = SLAQ_DEFAULT_QUERY_WINDOW;
    o->cost_window = 10;
    o->min_points = 3;
}

slaq_query *slaq_query_new(const slaq_query_opts *o)
{
    slaq_query_opts def;
    if (!o) {
        slaq_query_opts_init(&def);
        o = &def;
    }
    if (o->min_points < 2)
        return NULL;
    slaq_query *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->opts = *o;
    if (q->opts.cost_window == 0)
        q->opts.cost_window = 10;
    q->prog = slaq_progress_new();
    if (!q->prog) {
        free(q);
        return NULL;
    }
    slaq_pcurve_prior(&q->curve);
    return q;
}

void slaq_query_free(slaq_query *q)
{
    if (!q)
        return;
    slaq_progress_free(q->prog);
    free(q->cost);
    free(q->num);
    free(q);
}

/* Refits the curve to the P values in the window (the prior until there
 * are min_points of them; a failed fit keeps the previous curve). */
static void query_refit(slaq_query *q)
{
    size_t nb = q->prog->n;
    size_t from = 2;
    size_t win = q->opts.window ? q->opts.window : PCURVE_MAXPTS;
    if (win > PCURVE_MAXPTS)
        win = PCURVE_MAXPTS;
    if (nb >= 2 && nb - 1 > win)
        from = nb - win + 1;
    size_t m = 0;
    for (size_t i = from; i <= nb; i++) {
        double v = slaq_progress_value(q->prog, i);
        if (isnan(v))
            continue;
        q->fit_i[m] = q->num[i - 1];
        q->fit_p[m] = v;
        m++;
    }
    if (m < q->opts.min_points) {
        slaq_pcurve_prior(&q->curve);
        return;
    }
    slaq_pcurve c;
    if (slaq_pcurve_fit(q->fit_i, q->fit_p, m, &c) == SLAQ_OK)
        q->curve = c;
}

int slaq_query_add(slaq_query *q, uint64_t batch, const double *x, size_t n,
                   double cpu_s)
{
    if (batch != q->last + 1)
        return SLAQ_EORDER;
    if (!(cpu_s >= 0) || !isfinite(cpu_s))
        return SLAQ_EINVAL;
    if (q->prog->n == q->cap) {
        size_t cap = grow_cap(q->cap, q->prog->n + 1, 64);
        if (!cap || GROW_ARRAY(q->cost, cap) || GROW_ARRAY(q->num, cap))
            return SLAQ_ENOMEM;
        q->cap = cap;
    }
    int err = slaq_progress_add(q->prog, x, n);
    if (err)
        return err;
    q->cost[q->prog->n - 1] = cpu_s > 0 ? cpu_s : NAN;
    q->num[q->prog->n - 1] = (double)batch;
    q->last = batch;
    q->work += cpu_s;
    query_refit(q);
    return SLAQ_OK;
}

int slaq_query_resume(slaq_query *q, uint64_t after)
{
    if (after < q->last)
        return SLAQ_EINVAL;
    q->last = after;
    return SLAQ_OK;
}

size_t slaq_query_batches(const slaq_query *q) { return (size_t)q->last; }
double slaq_query_work(const slaq_query *q) { return q->work; }
const slaq_progress *slaq_query_progress(const slaq_query *q)
{
    return q->prog;
}
const slaq_pcurve *slaq_query_curve(const slaq_query *q) { return &q->curve; }

slaq_batchcost slaq_query_cost(const slaq_query *q, double dflt_cost)
{
    slaq_batchcost c = {dflt_cost > 0 ? dflt_cost : 1, 0};
    size_t nb = q->prog->n;
    double iv[64], cv[64];
    size_t win = q->opts.cost_window < 64 ? q->opts.cost_window : 64;
    size_t m = 0;
    for (size_t i = nb; i >= 1 && m < win; i--) {
        if (isnan(q->cost[i - 1]))
            continue;
        iv[m] = q->num[i - 1];
        cv[m] = q->cost[i - 1];
        m++;
    }
    if (m > 0)
        slaq_batchcost_fit(iv, cv, m, &c);
    return c;
}

double slaq_query_last(const slaq_query *q)
{
    return slaq_progress_value(q->prog, q->prog->n);
}

double slaq_query_predict(const slaq_query *q, double h)
{
    return slaq_pcurve_eval(&q->curve,
                            (double)slaq_query_batches(q) + h);
}

void slaq_query_forecast(const slaq_query *q, double dflt_cost,
                         slaq_forecast *f)
{
    memset(f, 0, sizeof *f);
    slaq_batchcost c = slaq_query_cost(q, dflt_cost);
    f->model = SLAQ_MODEL_AQP;
    f->par[0] = q->curve.a;
    f->par[1] = q->curve.b;
    f->par[2] = c.alpha;
    f->par[3] = c.beta;
    f->par2[0] = (double)slaq_query_batches(q);
    f->k0 = q->work;
    f->yscale = 1;
    f->loss0 = slaq_pcurve_eval(&q->curve, f->par2[0]);
    f->first_loss = 1;
    f->final_loss = 0;
    f->scale = 1;
    f->max_step = INFINITY;
    f->floor_loss = -INFINITY;
}

/*
 * SLAQ_MODEL_AQP at position k (CPU-seconds): the mini-batches j past the
 * i0 done that u = k − k0 CPU-seconds complete, where mini-batch m costs
 * alpha + beta·m: alpha·j + beta·(i0·j + j(j+1)/2) = u, solved for j
 * (the stable root of the quadratic), then P at i0 + j.
 */
double aqp_forecast_eval(const slaq_forecast *f, double k)
{
    double u = k - f->k0;
    double i0 = f->par2[0];
    double alpha = f->par[2], beta = f->par[3];
    double j = 0;
    if (u > 0) {
        double bq = alpha + beta * (i0 + 0.5);
        j = 2 * u / (bq + sqrt(bq * bq + 2 * beta * u));
    }
    slaq_pcurve c = {f->par[0], f->par[1]};
    return slaq_pcurve_eval(&c, i0 + j);
}

/* ------------------------------------------------------ true error */

int slaq_query_error_curve(const double *est, const double *truth, size_t B,
                           size_t K, double *err)
{
    if (!est || !truth || !err || K == 0 || B == 0)
        return SLAQ_EINVAL;
    for (size_t i = 0; i < B; i++)
        err[i] = 0;
    for (size_t c = 0; c < K; c++) {
        /* the column's largest absolute error over the run */
        double zmax = 0;
        for (size_t i = 0; i < B; i++) {
            double x = est[i * K + c];
            if (!isnan(x) && !isnan(truth[c]))
                zmax = fmax(zmax, fabs(x - truth[c]));
        }
        for (size_t i = 0; i < B; i++) {
            double x = est[i * K + c], e;
            if (isnan(truth[c]))      /* SQL's NULL answer */
                e = isnan(x) ? 0 : 1;
            else if (isnan(x))        /* no estimate yet: all error left */
                e = 1;
            else
                e = zmax > 0 ? fabs(x - truth[c]) / zmax : 0;
            err[i] += e / (double)K;
        }
    }
    return SLAQ_OK;
}

/* -------------------------------------------------------- evaluation */

#define EVAL_MIN_BATCHES 3

int slaq_eval_query(const slaq_query_opts *opts, const double *est,
                    const double *truth, size_t B, size_t K,
                    const int *horizons, size_t nh, slaq_query_eval *acc)
{
    if (!est || !truth || K == 0 || !acc || nh > 8 || (nh && !horizons))
        return SLAQ_EINVAL;
    slaq_query *q = slaq_query_new(opts);
    if (!q)
        return opts ? SLAQ_EINVAL : SLAQ_ENOMEM;
    /* P of the whole recording, to compare predictions with. */
    slaq_progress *all = slaq_progress_new();
    double *err = B < SIZE_MAX / sizeof *err ? calloc(B + 1, sizeof *err)
                                              : NULL;
    int rc = all && err ? SLAQ_OK : SLAQ_ENOMEM;
    for (size_t i = 1; i <= B && !rc; i++)
        rc = slaq_progress_add(all, est + (i - 1) * K, K);
    /* The true error (one definition: slaq_query_error_curve), against
     * P wherever P exists (from the second mini-batch on). */
    if (!rc && B > 0)
        rc = slaq_query_error_curve(est, truth, B, K, err);
    for (size_t i = 2; i <= B && !rc; i++) {
        double p = slaq_progress_value(all, i);
        if (isnan(p))
            continue;
        acc->metric_err_sum += fabs(p - err[i - 1]);
        acc->metric_n++;
    }
    for (size_t i = 1; i <= B && !rc; i++) {
        rc = slaq_query_add(q, i, est + (i - 1) * K, K, 0);
        if (rc || i < EVAL_MIN_BATCHES)
            continue;
        for (size_t h = 0; h < nh; h++) {
            if (horizons[h] <= 0 || i + (size_t)horizons[h] > B)
                continue;
            double truep = slaq_progress_value(all, i + (size_t)horizons[h]);
            if (isnan(truep))
                continue;
            double e = fabs(slaq_query_predict(q, horizons[h]) - truep);
            acc->pred[h].err_sum += e;
            acc->pred[h].n++;
            if (truep > 0) {
                acc->pred[h].rel_sum += e / truep;
                acc->pred[h].n_rel++;
            }
        }
    }
    slaq_progress_free(all);
    free(err);
    slaq_query_free(q);
    return rc;
}
