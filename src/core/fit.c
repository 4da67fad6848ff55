/*
 * fit.c — the two curve families of SLAQ §4.2.2 and the weighted points
 * they are fitted to (see fit.h for the parameterisation).
 */
#include <math.h>
#include <string.h>

#include "fit.h"

void fit_data_load(fit_data *d, const slaq_history *h, double lambda)
{
    const slaq_report *last = slaq_history_last(h);
    double k0 = (double)last->iter;
    double loglam = log(lambda);
    int n = 0;
    /* Newest first, then reversed: the most recent FIT_MAXPTS points. */
    for (size_t i = h->len; i-- > 0 && n < FIT_MAXPTS;) {
        const slaq_report *r = slaq_history_at(h, i);
        double age = k0 - (double)r->iter;
        double w = exp(age * loglam);
        if (w < FIT_MINW)
            break;
        d->u[n] = -age;
        d->y[n] = r->loss;
        d->w[n] = w;
        n++;
    }
    /* A first step that dwarfs every later one (a model that learns most
     * of what it will in its first epoch) is left out: a family bent to
     * fit it predicts a plateau right after, while the job is still
     * falling steadily. The oldest point is d->[n - 1] here. */
    if (n >= FIT_MIN_AFTER_STEP + 1) {
        double big = (d->y[n - 1] - d->y[n - 2]) / (d->u[n - 2] - d->u[n - 1]);
        double later = 0;
        for (int i = 0; i + 1 < n - 1; i++)
            later = fmax(later, (d->y[i + 1] - d->y[i]) /
                                    (d->u[i] - d->u[i + 1]));
        if (later > 0 && big > FIT_STEP_RATIO * later)
            n--;
    }
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        double t;
        t = d->u[i], d->u[i] = d->u[j], d->u[j] = t;
        t = d->y[i], d->y[i] = d->y[j], d->y[j] = t;
        t = d->w[i], d->w[i] = d->w[j], d->w[j] = t;
    }
    d->n = n;
    double sw = 0, sw2 = 0;
    for (int i = 0; i < n; i++)
        sw += d->w[i], sw2 += d->w[i] * d->w[i];
    d->neff = sw * sw / sw2;
    d->off = last->loss;
    double sc = h->max_delta;
    for (int i = 0; i < n; i++)
        sc = fmax(sc, fabs(d->y[i] - d->off));
    if (!(sc > 0))
        sc = fmax(fabs(d->off), 1.0);
    d->sc = sc;
    for (int i = 0; i < n; i++)
        d->y[i] = (d->y[i] - d->off) / sc;
}

int fit_npar(int model) { return model == PRED_RATIONAL ? 4 : 3; }

static double sigmoid(double t) { return 1.0 / (1.0 + exp(-t)); }

/* The model's value at the last report (u = 0). */
static double fit_value_now(int model, const double *th)
{
    return model == PRED_RATIONAL ? 1.0 / th[2] + th[3] : th[1] + th[2];
}

void fit_eval_all(int model, const double *th, const fit_data *d, double *f,
                  double (*jac)[4])
{
    int n = d->n;
    if (model == PRED_RATIONAL) {
        for (int i = 0; i < n; i++) {
            double u = d->u[i];
            double inv = 1.0 / ((th[0] * u + th[1]) * u + th[2]);
            f[i] = inv + th[3];
            if (jac) {
                double i2 = -inv * inv;
                jac[i][0] = i2 * u * u;
                jac[i][1] = i2 * u;
                jac[i][2] = i2;
                jac[i][3] = 1;
            }
        }
        return;
    }
    /* μ^u for every point, newest (u = 0) first: consecutive iterations
     * need a multiplication each instead of an exp(). */
    double mu = sigmoid(th[0]), lmu = log(mu), inv_mu = 1.0 / mu;
    double pw = 1, next_u = 0;
    for (int i = n - 1; i >= 0; i--) {
        double u = d->u[i];
        if (u == next_u - 1)
            pw *= inv_mu;
        else if (u != next_u)
            pw = exp(u * lmu);
        next_u = u;
        f[i] = th[1] * pw + th[2];
        if (jac) {
            jac[i][0] = th[1] * u * pw * (1 - mu);
            jac[i][1] = pw;
            jac[i][2] = 1;
        }
    }
}

double fit_cost(int model, const double *th, const fit_data *d)
{
    double f[FIT_MAXPTS], s = 0;
    fit_eval_all(model, th, d, f, NULL);
    for (int i = 0; i < d->n; i++) {
        double r = f[i] - d->y[i];
        s += d->w[i] * r * r;
    }
    return isfinite(s) ? s : INFINITY;
}

int fit_valid(int model, const double *th, const fit_data *d)
{
    int np = fit_npar(model);
    for (int i = 0; i < np; i++)
        if (!isfinite(th[i]))
            return 0;
    if (model == PRED_EXP)
        return sigmoid(th[0]) < 1.0; /* t finite and not saturated */
    double a = th[0], b = th[1], c = th[2];
    /* The denominator must stay positive from the oldest point used to
     * FIT_UMAX: check both ends and the vertex if it lies in between. */
    double lo = d->n ? d->u[0] : 0;
    double ends[3] = {lo, FIT_UMAX, 0};
    int ne = 2;
    if (a != 0) {
        double v = -b / (2 * a);
        if (v > lo && v < FIT_UMAX)
            ends[ne++] = v;
    }
    for (int i = 0; i < ne; i++)
        if (!((a * ends[i] + b) * ends[i] + c > 0))
            return 0;
    return 1;
}

/* ---------------------------------------------------------- cold starts */

/* The last drop per iteration of the (scaled) data, or a small positive
 * stand-in when it did not fall. */
static double last_drop(const fit_data *d)
{
    int n = d->n;
    double g = 0;
    if (n >= 2)
        g = (d->y[n - 2] - d->y[n - 1]) / (d->u[n - 1] - d->u[n - 2]);
    return g > 1e-9 ? g : 1e-3;
}

/*
 * Exponential cold start. For a fixed μ the family is linear in A and c:
 * scan μ on a grid denser towards 1, solve the 2×2 weighted least squares
 * for each and keep the best. This finds the right basin even when an
 * early transient (an S-shaped start) pulls a local solver away. g, the
 * last drop, only seeds the fallback when no μ gives a solution.
 */
static void guess_exp(const fit_data *d, double g, double *th)
{
    int n = d->n;
    double best = INFINITY;
    th[0] = log(0.8 / 0.2), th[1] = g / -log(0.8), th[2] = -th[1];
    for (int gi = 0; gi < FIT_MU_GRID; gi++) {
        double mu = 1 - pow(10, -0.05 - 2.5 * gi / (FIT_MU_GRID - 1));
        double lm = log(mu);
        double sw = 0, sz = 0, sy = 0, szz = 0, szy = 0;
        for (int i = 0; i < n; i++) {
            double z = exp(d->u[i] * lm), w = d->w[i];
            sw += w, sz += w * z, sy += w * d->y[i];
            szz += w * z * z, szy += w * z * d->y[i];
        }
        double det = sw * szz - sz * sz;
        if (!(fabs(det) > 1e-300))
            continue;
        double cand[3] = {log(mu / (1 - mu)), (sw * szy - sz * sy) / det,
                          0};
        cand[2] = (sy - cand[1] * sz) / sw;
        double c = fit_cost(PRED_EXP, cand, d);
        if (c < best) {
            best = c;
            memcpy(th, cand, sizeof cand);
        }
    }
}

/*
 * Rational cold start. For an asymptote d below every point, z = 1/(y − d)
 * is the quadratic a·u² + b·u + c, so a weighted linear fit gives a, b, c
 * (weights w·(y − d)⁴ turn errors in z back into errors in y). The d whose
 * curve fits y best, over a geometric grid of distances below the lowest
 * point in multiples of the last drop g, is kept.
 */
static void guess_rational(const fit_data *d, double g, double *th)
{
    int n = d->n;
    double ymin = d->y[0];
    for (int i = 1; i < n; i++)
        ymin = fmin(ymin, d->y[i]);
    double best = INFINITY;
    th[0] = 0, th[1] = g, th[2] = 1, th[3] = ymin - 1;
    for (int gi = 0; gi < FIT_D_GRID; gi++) {
        double dd = ymin - g * pow(10, -0.5 + 3.5 * gi / (FIT_D_GRID - 1));
        double M[4][4] = {{0}}, rhs[4] = {0}, sol[4];
        for (int i = 0; i < n; i++) {
            double e = d->y[i] - dd, z = 1.0 / e;
            double w = d->w[i] * e * e * e * e;
            double x[3] = {d->u[i] * d->u[i], d->u[i], 1};
            for (int a = 0; a < 3; a++) {
                rhs[a] += w * x[a] * z;
                for (int b = 0; b <= a; b++)
                    M[a][b] += w * x[a] * x[b];
            }
        }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < a; b++)
                M[b][a] = M[a][b];
        if (!fit_chol_solve(3, M, rhs, sol))
            continue;
        double cand[4] = {sol[0], sol[1], sol[2], dd};
        if (!fit_valid(PRED_RATIONAL, cand, d)) {
            cand[0] = 0; /* the same line without curvature */
            if (!fit_valid(PRED_RATIONAL, cand, d))
                continue;
        }
        double c = fit_cost(PRED_RATIONAL, cand, d);
        if (c < best) {
            best = c;
            memcpy(th, cand, sizeof cand);
        }
    }
}

void fit_guess(int model, const fit_data *d, double *th)
{
    double g = last_drop(d);
    if (model == PRED_EXP)
        guess_exp(d, g, th);
    else
        guess_rational(d, g, th);
}

int fit_chol_solve(int p, double M[4][4], const double *b, double *x)
{
    /* LDLᵀ without square roots; pivots kept as reciprocals so that the
     * solve multiplies instead of divides. Reads the lower triangle. */
    double L[4][4], dg[4], dinv[4], y[4];
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < i; j++) {
            double s = M[i][j];
            for (int k = 0; k < j; k++)
                s -= L[i][k] * L[j][k] * dg[k];
            L[i][j] = s * dinv[j];
        }
        double s = M[i][i];
        for (int k = 0; k < i; k++)
            s -= L[i][k] * L[i][k] * dg[k];
        if (!(s > 0))
            return 0;
        dg[i] = s;
        dinv[i] = 1.0 / s;
    }
    for (int i = 0; i < p; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= L[i][k] * y[k];
        y[i] = s;
    }
    for (int i = p; i-- > 0;) {
        double s = y[i] * dinv[i];
        for (int k = i + 1; k < p; k++)
            s -= L[k][i] * x[k];
        x[i] = s;
    }
    return 1;
}

void fit_to_forecast(int model, const double *th, const fit_data *d,
                     int anchor, slaq_forecast *f)
{
    f->yscale = d->sc;
    if (model == PRED_RATIONAL) {
        f->model = SLAQ_MODEL_RATIONAL;
        memcpy(f->par, th, 4 * sizeof *th);
    } else {
        f->model = SLAQ_MODEL_EXP;
        f->par[0] = sigmoid(th[0]);
        f->par[1] = th[1];
        f->par[2] = th[2];
        f->par[3] = 0;
    }
    f->shift = d->off;
    if (anchor)
        f->shift -= d->sc * fit_value_now(model, th);
    double asym = model == PRED_RATIONAL ? th[3] : th[2];
    /* A rational curve with a = b = 0 is flat: its value is its limit. */
    if (model == PRED_RATIONAL && th[0] == 0 && th[1] == 0)
        asym = fit_value_now(model, th);
    f->final_loss = d->sc * asym + f->shift;
}

void fit_reframe(int model, double *th, const fit_frame *from,
                 const fit_frame *to)
{
    double dk = to->k0 - from->k0; /* old u = new u + dk */
    double r = from->sc / to->sc;
    double lin = (from->off - to->off) / to->sc;
    if (model == PRED_RATIONAL) {
        double a = th[0], b = th[1], c = th[2];
        th[0] = a / r;
        th[1] = (b + 2 * a * dk) / r;
        th[2] = (c + b * dk + a * dk * dk) / r;
        th[3] = th[3] * r + lin;
    } else {
        double mu = 1.0 / (1.0 + exp(-th[0]));
        th[1] = th[1] * r * pow(mu, dk);
        th[2] = th[2] * r + lin;
    }
}
