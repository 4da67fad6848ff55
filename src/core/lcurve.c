/*
 * lcurve.c — learning-curve probabilities: P(y(m) >= target | y(1..n)).
 *
 * The model of Domhan, Springenberg and Hutter (IJCAI'15), which HyperDrive
 * uses for POP: a weighted ensemble of eleven parametric curve families
 * (pow3, pow4, log_power, vap, loglog_linear, hill3, mmf, exp4, ilog2,
 * weibull, janoschek) with Gaussian observation noise. Domhan et al.
 * sample the joint posterior over weights and parameters with MCMC, which
 * takes minutes per curve. This file computes a cheaper posterior:
 *
 *   1. Each family is fitted by Levenberg-Marquardt least squares in an
 *      unconstrained parameterisation (positive shapes as logarithms).
 *   2. Around the fit, the posterior of the parameters is the Laplace
 *      (Gaussian) approximation: covariance s^2 (J'J + R)^-1, with s^2 the
 *      residual variance (at least sigma_min^2) and R a weak ridge prior.
 *   3. The predictive distribution of y(m) for one family is normal, mean
 *      f(m; theta) and variance inflate * g' C g + s^2 (g the gradient of
 *      f(m) in the parameters: the delta method), where `inflate` widens
 *      the parameter part for extrapolation far beyond the data.
 *   4. The families are weighted equally (every family that could be
 *      fitted; Domhan et al.'s sampled weights are similarly spread), or
 *      by exp(-BIC/2), an approximation of their marginal likelihood; the
 *      probability is the mixture's tail:
 *      P = sum_k w_k Q((target - mu_k(m)) / s_k(m)).
 *   5. Beyond the last epoch, a twelfth hypothesis: the curve has stopped
 *      and stays at its last value (prior stop_prior). Every family is a
 *      smooth approach to an asymptote, so a curve that stops dead (an
 *      optimiser that converged, a network that starts to overfit) would
 *      otherwise always be expected to rise. The evidence is the stall:
 *      k epochs in which the best value so far rose by at most stall_tol.
 *      If the curve followed family k, which rises by slope_k an epoch at
 *      the last epoch, rises of about `jump` (the stall tolerance, or the
 *      curve's own epoch-to-epoch jitter if larger) come at a rate of
 *      slope_k / jump, and k epochs without one have likelihood
 *      exp(-k slope_k / jump); the stopped curve explains them with
 *      likelihood 1. So a family that expects the curve to be flat by now
 *      loses nothing, one that expects it to keep climbing loses its share.
 *      P = [(1-pi) sum_k w_k a_k P_k + pi [y_n >= target]]
 *          / [(1-pi) sum_k w_k a_k + pi].
 *
 * Whether this is as well calibrated as the MCMC posterior is an empirical
 * question: `slaq sim --sweep TRACES --calib` measures reliability and Brier score
 * on held-out traces (docs/sweeps.md). It costs a few milliseconds a curve.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/sweep.h"

#define LC_MAXP 4           /* parameters of the largest family */
#define LC_ITERS 60         /* Levenberg-Marquardt iterations per family */
#define LC_PRIOR_SD 10.0    /* ridge prior on the unconstrained parameters */

typedef double (*lc_fn)(double x, const double *t);

/* Every family maps an epoch x >= 1 and unconstrained parameters t to the
 * curve's value. Shapes that must be positive are exp() of a parameter. */
static double f_pow3(double x, const double *t)
{
    return t[0] - t[1] * pow(x, -exp(t[2]));
}

static double f_pow4(double x, const double *t)
{
    return t[0] - pow(exp(t[1]) * x + exp(t[2]), -exp(t[3]));
}

static double f_log_power(double x, const double *t)
{
    return t[0] / (1 + pow(x / exp(t[1]), t[2]));
}

static double f_vap(double x, const double *t)
{
    return exp(t[0] + t[1] / x + t[2] * log(x));
}

static double f_loglog_linear(double x, const double *t)
{
    double a = t[0] * log(x) + t[1];
    return a > 0 ? log(a) : NAN;
}

static double f_hill3(double x, const double *t)
{
    double eta = exp(t[1]), xe = pow(x, eta);
    return t[0] * xe / (pow(exp(t[2]), eta) + xe);
}

static double f_mmf(double x, const double *t)
{
    return t[0] - (t[0] - t[1]) / (1 + pow(exp(t[2]) * x, exp(t[3])));
}

static double f_exp4(double x, const double *t)
{
    return t[0] - exp(-exp(t[1]) * pow(x, exp(t[2])) + t[3]);
}

static double f_ilog2(double x, const double *t)
{
    return t[0] - t[1] / log(x + 1);
}

static double f_weibull(double x, const double *t)
{
    return t[0] - (t[0] - t[1]) * exp(-pow(exp(t[2]) * x, exp(t[3])));
}

static double f_janoschek(double x, const double *t)
{
    return t[0] - (t[0] - t[1]) * exp(-exp(t[2]) * pow(x, exp(t[3])));
}

static const struct lc_family {
    const char *name;
    int np;
    lc_fn f;
} lc_families[SLAQ_LCURVE_FAMILIES] = {
    {"pow3", 3, f_pow3},
    {"pow4", 4, f_pow4},
    {"log_power", 3, f_log_power},
    {"vap", 3, f_vap},
    {"loglog_linear", 2, f_loglog_linear},
    {"hill3", 3, f_hill3},
    {"mmf", 4, f_mmf},
    {"exp4", 4, f_exp4},
    {"ilog2", 2, f_ilog2},
    {"weibull", 4, f_weibull},
    {"janoschek", 4, f_janoschek},
};

struct lc_fit {
    bool ok;
    double t[LC_MAXP];
    double cov[LC_MAXP * LC_MAXP]; /* Laplace covariance of t */
    double s2;                      /* observation noise variance */
    double rv;                      /* residual variance, unfloored */
    double w;                       /* ensemble weight */
};

struct slaq_lcurve {
    slaq_lcurve_opts o;
    size_t cap, n;
    double *x, *y;
    double stall; /* epochs since the curve last rose by > stall_tol */
    double jump;  /* typical rise of the best so far: max(tol, jitter) */
    double *J, *r; /* n x np Jacobian and residuals, scratch */
    bool fitted;
    struct lc_fit fit[SLAQ_LCURVE_FAMILIES];
};

const char *slaq_lcurve_family_name(int f)
{
    return f >= 0 && f < SLAQ_LCURVE_FAMILIES ? lc_families[f].name : "?";
}

slaq_lcurve *slaq_lcurve_new(const slaq_lcurve_opts *opts)
{
    slaq_lcurve_opts o = {0};
    if (opts)
        o = *opts;
    if (!(o.inflate >= 0) || !(o.sigma_min >= 0) || !(o.temper >= 0) ||
        (o.has_upper && !isfinite(o.upper)) || !(o.stop_prior >= 0) ||
        !(o.stop_prior < 1) || !(o.stall_tol >= 0))
        return NULL;
    if (o.stop_prior == 0)
        o.stop_prior = SLAQ_LCURVE_STOP_PRIOR_DEFAULT;
    if (o.stall_tol == 0)
        o.stall_tol = SLAQ_LCURVE_STALL_TOL_DEFAULT;
    if (o.temper == 0)
        o.temper = o.bic_weights ? 1 : SLAQ_LCURVE_TEMPER_DEFAULT;
    if (o.inflate == 0)
        o.inflate = SLAQ_LCURVE_INFLATE_DEFAULT;
    if (o.sigma_min == 0)
        o.sigma_min = SLAQ_LCURVE_SIGMA_MIN_DEFAULT;
    if (o.families == 0)
        o.families = (1u << SLAQ_LCURVE_FAMILIES) - 1;
    slaq_lcurve *lc = calloc(1, sizeof *lc);
    if (!lc)
        return NULL;
    lc->o = o;
    return lc;
}

void slaq_lcurve_free(slaq_lcurve *lc)
{
    if (!lc)
        return;
    free(lc->x);
    free(lc->y);
    free(lc->J);
    free(lc->r);
    free(lc);
}

/* Sum of squared residuals of family fam at t; fills lc->r. Infinite when
 * the curve is not finite at some observed epoch. */
static double lc_rss(slaq_lcurve *lc, const struct lc_family *fam,
                     const double *t)
{
    double s = 0;
    for (size_t i = 0; i < lc->n; i++) {
        double v = fam->f(lc->x[i], t);
        if (!isfinite(v))
            return INFINITY;
        lc->r[i] = lc->y[i] - v;
        s += lc->r[i] * lc->r[i];
    }
    return s;
}

/* Gradient of f(x) in the parameters by forward differences. */
static bool lc_grad(const struct lc_family *fam, double x, const double *t,
                    double f0, double *g)
{
    double tt[LC_MAXP];
    memcpy(tt, t, sizeof tt);
    for (int j = 0; j < fam->np; j++) {
        double h = 1e-6 * fmax(1, fabs(t[j]));
        tt[j] = t[j] + h;
        double v = fam->f(x, tt);
        tt[j] = t[j];
        if (!isfinite(v))
            return false;
        g[j] = (v - f0) / h;
    }
    return true;
}

/* Solves the symmetric positive definite p x p system A z = b in place
 * (Cholesky); A is overwritten by its factor. False if not positive
 * definite. */
static bool lc_cholesky_solve(double *A, int p, double *b)
{
    for (int j = 0; j < p; j++) {
        double d = A[j * p + j];
        for (int k = 0; k < j; k++)
            d -= A[j * p + k] * A[j * p + k];
        if (!(d > 0))
            return false;
        d = sqrt(d);
        A[j * p + j] = d;
        for (int i = j + 1; i < p; i++) {
            double v = A[i * p + j];
            for (int k = 0; k < j; k++)
                v -= A[i * p + k] * A[j * p + k];
            A[i * p + j] = v / d;
        }
    }
    for (int i = 0; i < p; i++) {
        double v = b[i];
        for (int k = 0; k < i; k++)
            v -= A[i * p + k] * b[k];
        b[i] = v / A[i * p + i];
    }
    for (int i = p - 1; i >= 0; i--) {
        double v = b[i];
        for (int k = i + 1; k < p; k++)
            v -= A[k * p + i] * b[k];
        b[i] = v / A[i * p + i];
    }
    return true;
}

/* Fills J (n x np) at t; false if any entry is not finite. */
static bool lc_jacobian(slaq_lcurve *lc, const struct lc_family *fam,
                        const double *t)
{
    int p = fam->np;
    for (size_t i = 0; i < lc->n; i++) {
        double f0 = fam->f(lc->x[i], t);
        if (!isfinite(f0) || !lc_grad(fam, lc->x[i], t, f0, lc->J + i * p))
            return false;
    }
    return true;
}

/* J'J (+ ridge) into A. */
static void lc_normal(const slaq_lcurve *lc, int p, double ridge, double *A)
{
    memset(A, 0, sizeof(double) * (size_t)(p * p));
    for (size_t i = 0; i < lc->n; i++) {
        const double *g = lc->J + i * p;
        for (int a = 0; a < p; a++)
            for (int b = 0; b <= a; b++)
                A[a * p + b] += g[a] * g[b];
    }
    for (int a = 0; a < p; a++) {
        A[a * p + a] += ridge;
        for (int b = 0; b < a; b++)
            A[b * p + a] = A[a * p + b];
    }
}

/* Starting points from the observed curve: first, last and largest value,
 * and the number of epochs. */
static void lc_start(int f, double y1, double yl, double ymax, double n,
                     double *t)
{
    double c = ymax + 0.01 + 0.1 * fabs(ymax);
    double gap = fmax(c - y1, 1e-3);
    switch (f) {
    case 0: t[0] = c; t[1] = gap; t[2] = log(0.5); break;
    case 1: t[0] = c; t[1] = 0; t[2] = 0; t[3] = log(fmax(-log2(fmin(gap, 0.9)), 0.05)); break;
    case 2: t[0] = c; t[2] = -1; t[1] = log(fmax(y1 > 0 ? c / y1 - 1 : 1, 1e-3)); break;
    case 3: t[0] = log(fmax(yl, 1e-3)); t[1] = 0; t[2] = 0; break;
    case 4: t[1] = exp(y1); t[0] = fmax((exp(yl) - t[1]) / log(fmax(n, 2)), 1e-3); break;
    case 5: t[0] = c; t[1] = 0; t[2] = log(fmax(y1 > 0 ? c / y1 - 1 : 1, 1e-3)); break;
    case 6: t[0] = c; t[1] = y1; t[2] = log(3 / fmax(n, 3)); t[3] = 0; break;
    case 7: t[0] = c; t[1] = log(3 / fmax(n, 3)); t[2] = 0; t[3] = log(gap) + exp(t[1]); break;
    case 8: {
        double d = 1 / log(2) - 1 / log(fmax(n, 2) + 1);
        t[1] = (yl - y1) / d;
        t[0] = yl + t[1] / log(fmax(n, 2) + 1);
        break;
    }
    case 9: case 10: t[0] = c; t[1] = y1; t[2] = log(3 / fmax(n, 3)); t[3] = 0; break;
    }
}

/* Levenberg-Marquardt for one family; fills fit (ok = false if it fails). */
static void lc_fit_family(slaq_lcurve *lc, int f, struct lc_fit *fit)
{
    const struct lc_family *fam = &lc_families[f];
    int p = fam->np;
    double y1 = lc->y[0], yl = lc->y[lc->n - 1], ymax = y1;
    for (size_t i = 0; i < lc->n; i++)
        ymax = fmax(ymax, lc->y[i]);
    double t[LC_MAXP] = {0}, A[LC_MAXP * LC_MAXP], step[LC_MAXP];
    lc_start(f, y1, yl, ymax, (double)lc->n, t);
    fit->ok = false;
    if ((size_t)p >= lc->n)
        return;
    double rss = lc_rss(lc, fam, t), lambda = 1e-3;
    if (!isfinite(rss))
        return;
    for (int it = 0; it < LC_ITERS; it++) {
        if (!lc_jacobian(lc, fam, t))
            return;
        lc_rss(lc, fam, t);
        double gtr[LC_MAXP] = {0};
        for (size_t i = 0; i < lc->n; i++)
            for (int j = 0; j < p; j++)
                gtr[j] += lc->J[i * p + j] * lc->r[i];
        bool improved = false;
        while (lambda < 1e10) {
            lc_normal(lc, p, 0, A);
            for (int j = 0; j < p; j++)
                A[j * p + j] *= 1 + lambda, A[j * p + j] += 1e-12;
            memcpy(step, gtr, sizeof step);
            if (lc_cholesky_solve(A, p, step)) {
                double tn[LC_MAXP];
                for (int j = 0; j < p; j++)
                    tn[j] = t[j] + step[j];
                double rn = lc_rss(lc, fam, tn);
                if (rn < rss) {
                    double drop = rss - rn;
                    memcpy(t, tn, sizeof t);
                    rss = rn;
                    lambda = fmax(lambda / 5, 1e-9);
                    improved = true;
                    if (drop < 1e-12 * (rss + 1e-12))
                        it = LC_ITERS;
                    break;
                }
            }
            lambda *= 8;
        }
        if (!improved)
            break;
    }
    /* Laplace covariance at the optimum. */
    if (!lc_jacobian(lc, fam, t))
        return;
    double n = (double)lc->n;
    double dof = n - p > 1 ? n - p : 1;
    double s2 = fmax(rss / dof, lc->o.sigma_min * lc->o.sigma_min);
    double prior = s2 / (LC_PRIOR_SD * LC_PRIOR_SD);
    for (int j = 0; j < p; j++) {
        double e[LC_MAXP] = {0};
        e[j] = 1;
        lc_normal(lc, p, prior, A);
        if (!lc_cholesky_solve(A, p, e))
            return;
        for (int k = 0; k < p; k++)
            fit->cov[k * p + j] = s2 * e[k];
    }
    memcpy(fit->t, t, sizeof t);
    fit->s2 = s2;
    fit->rv = rss / dof;
    /* BIC with the residual sum floored at the noise the model assumes. */
    double rss_eff = fmax(rss, n * lc->o.sigma_min * lc->o.sigma_min);
    fit->w = n * log(rss_eff / n) + p * log(n);
    fit->ok = true;
}

/* The curve's own jump size: the mean of the nonzero changes between
 * consecutive epochs over the last half of the points (about the noise
 * for a noisy curve; the typical rise of a best-so-far curve, which moves
 * in jumps and is flat in between). 0 for a curve that has not moved. */
static double lc_jitter(const slaq_lcurve *lc)
{
    size_t from = lc->n / 2, k = 0;
    double sum = 0;
    for (size_t i = from > 0 ? from : 1; i < lc->n; i++) {
        double d = fabs(lc->y[i] - lc->y[i - 1]);
        if (d > 0) {
            sum += d;
            k++;
        }
    }
    return k ? sum / (double)k : 0;
}

int slaq_lcurve_fit(slaq_lcurve *lc, const double *y, size_t n)
{
    if (!lc || !y)
        return SLAQ_EINVAL;
    if (n > lc->cap) {
        size_t cap = n < 64 ? 64 : n;
        double *x = realloc(lc->x, cap * sizeof *x);
        if (!x)
            return SLAQ_ENOMEM;
        lc->x = x;
        double *yy = realloc(lc->y, cap * sizeof *yy);
        if (!yy)
            return SLAQ_ENOMEM;
        lc->y = yy;
        double *r = realloc(lc->r, cap * sizeof *r);
        if (!r)
            return SLAQ_ENOMEM;
        lc->r = r;
        double *J = realloc(lc->J, cap * LC_MAXP * sizeof *J);
        if (!J)
            return SLAQ_ENOMEM;
        lc->J = J;
        lc->cap = cap;
    }
    lc->n = 0;
    lc->fitted = false;
    for (size_t i = 0; i < n; i++)
        if (isfinite(y[i])) {
            lc->x[lc->n] = (double)(i + 1);
            lc->y[lc->n] = y[i];
            lc->n++;
        }
    if (lc->n < 3)
        return SLAQ_ENODATA;
    /* The stall: how many epochs back the best value so far was already
     * within stall_tol of the best at the last epoch (the best-so-far
     * curve rose by at most stall_tol since then). */
    lc->jump = fmax(lc->o.stall_tol, lc_jitter(lc));
    double top = -INFINITY;
    for (size_t i = 0; i < lc->n; i++)
        top = fmax(top, lc->y[i]);
    double run = -INFINITY;
    lc->stall = 0;
    for (size_t i = 0; i < lc->n; i++) {
        run = fmax(run, lc->y[i]);
        if (run >= top - lc->o.stall_tol) {
            lc->stall = lc->x[lc->n - 1] - lc->x[i];
            break;
        }
    }
    double best = INFINITY;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++) {
        lc->fit[f].ok = false;
        if (lc->o.families & (1u << f)) {
            lc_fit_family(lc, f, &lc->fit[f]);
            if (lc->fit[f].ok && lc->fit[f].w < best)
                best = lc->fit[f].w;
        }
    }
    if (!isfinite(best))
        return SLAQ_ENODATA;
    double sum = 0;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++)
        if (lc->fit[f].ok) {
            lc->fit[f].w = exp(-0.5 * (lc->fit[f].w - best) / lc->o.temper);
            sum += lc->fit[f].w;
        }
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++)
        if (lc->fit[f].ok)
            lc->fit[f].w /= sum;
    lc->fitted = true;
    return SLAQ_OK;
}

/* One family's predictive mean and standard deviation at m; false if the
 * curve is not finite there. */
static bool lc_family_at(const slaq_lcurve *lc, int f, double m, double *mu,
                         double *sd)
{
    const struct lc_family *fam = &lc_families[f];
    const struct lc_fit *fit = &lc->fit[f];
    int p = fam->np;
    double g[LC_MAXP];
    double v = fam->f(m, fit->t);
    if (!isfinite(v) || !lc_grad(fam, m, fit->t, v, g))
        return false;
    double q = 0;
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++)
            q += g[a] * fit->cov[a * p + b] * g[b];
    if (!(q >= 0))
        q = 0;
    *mu = v;
    *sd = sqrt(lc->o.inflate * q + fit->s2);
    return isfinite(*sd);
}

/* A family's mean beyond the metric's bound: outside the prior. */
static bool lc_above(const slaq_lcurve *lc, double mu)
{
    return lc->o.has_upper && mu > lc->o.upper;
}

/* Beyond the last epoch, family f's share of "the curve still rises":
 * the likelihood of the stall seen so far if the curve followed f, which
 * rises by slope_f an epoch at the last epoch: exp(-stall * slope_f / tol).
 * 1 for predictions inside the observed epochs or without the stopped
 * hypothesis. */
static double lc_alive(const slaq_lcurve *lc, int f, double m)
{
    double xn = lc->x[lc->n - 1];
    if (lc->o.no_stall || !(m > xn) || lc->stall <= 0)
        return 1;
    const struct lc_family *fam = &lc_families[f];
    double slope = fam->f(xn, lc->fit[f].t) - fam->f(xn - 1, lc->fit[f].t);
    if (!isfinite(slope) || slope <= 0)
        return 1;
    return exp(-lc->stall * slope / lc->jump);
}

/* Prior weight of the stopped hypothesis at m (0 when not in play). */
static double lc_stop_prior(const slaq_lcurve *lc, double m)
{
    return lc->o.no_stall || !(m > lc->x[lc->n - 1]) ? 0 : lc->o.stop_prior;
}

static double lc_prob(const slaq_lcurve *lc, double m, double target,
                      bool bound)
{
    double p = 0, wsum = 0, alive = 0;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++) {
        double mu, sd;
        if (!lc->fit[f].ok || lc->fit[f].w < 1e-6 ||
            !lc_family_at(lc, f, m, &mu, &sd) || (bound && lc_above(lc, mu)))
            continue;
        double w = lc->fit[f].w, a = lc_alive(lc, f, m);
        p += w * a * gsl_cdf_ugaussian_Q((target - mu) / sd);
        alive += w * a;
        wsum += w;
    }
    if (!(wsum > 0))
        return NAN;
    /* Posterior over "rising as family f" and "stopped at the last value":
     * prior (1 - pi) w_f / wsum and pi, likelihoods of the stall a_f and 1. */
    double pi = lc_stop_prior(lc, m);
    double stopped = lc->y[lc->n - 1] >= target ? 1 : 0;
    return ((1 - pi) * p / wsum + pi * stopped) /
           ((1 - pi) * alive / wsum + pi);
}

double slaq_lcurve_prob(const slaq_lcurve *lc, double m, double target)
{
    if (!lc || !lc->fitted || !(m >= 1))
        return NAN;
    double p = lc_prob(lc, m, target, true);
    /* Every family beyond the bound: they agree the curve gets there. */
    return isnan(p) ? lc_prob(lc, m, target, false) : p;
}

int slaq_lcurve_predict(const slaq_lcurve *lc, double m, double *mean,
                        double *sd)
{
    if (!lc || !lc->fitted)
        return SLAQ_ENODATA;
    if (!(m >= 1))
        return SLAQ_EINVAL;
    double s1 = 0, s2 = 0, wsum = 0, alive = 0;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++) {
        double mu, s;
        if (!lc->fit[f].ok || lc->fit[f].w < 1e-6 ||
            !lc_family_at(lc, f, m, &mu, &s))
            continue;
        double w = lc->fit[f].w, a = lc_alive(lc, f, m);
        s1 += w * a * mu;
        s2 += w * a * (s * s + mu * mu);
        alive += w * a;
        wsum += w;
    }
    if (!(wsum > 0))
        return SLAQ_ENODATA;
    /* The same posterior as slaq_lcurve_prob: the stopped hypothesis is a
     * point at the last value. */
    double pi = lc_stop_prior(lc, m), yl = lc->y[lc->n - 1];
    double z = (1 - pi) * alive / wsum + pi;
    s1 = ((1 - pi) * s1 / wsum + pi * yl) / z;
    s2 = ((1 - pi) * s2 / wsum + pi * yl * yl) / z;
    if (mean)
        *mean = s1;
    if (sd)
        *sd = sqrt(fmax(s2 - s1 * s1, 0));
    return SLAQ_OK;
}

double slaq_lcurve_weight(const slaq_lcurve *lc, int f)
{
    if (!lc || !lc->fitted || f < 0 || f >= SLAQ_LCURVE_FAMILIES ||
        !lc->fit[f].ok)
        return 0;
    return lc->fit[f].w;
}

void slaq_lcurve_bound_metric(slaq_lcurve_opts *o, const char *metric,
                              int maximize)
{
    if (o && metric && maximize && strstr(metric, "accuracy")) {
        o->has_upper = 1;
        o->upper = 1;
    }
}
