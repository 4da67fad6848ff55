/*
 * fit.h — the curve families slaq fits to loss histories, and their data.
 *
 * Both fitting predictors (slaq-fit through GSL, auto through a small
 * solver of its own) fit the same two families of SLAQ §4.2.2 to the same
 * weighted points, so the families' values and derivatives live here once.
 *
 * Points are taken relative to the last report: u = k − k0 (≤ 0 for the
 * history) and y = (L − off) / sc with off the last loss and sc the loss
 * range of the points used, so every fit sees numbers near 1 whatever the
 * loss's units. The weight of a point m iterations old is Λ^m.
 *
 *   rational  y = 1/(a·u² + b·u + c) + d          θ = (a, b, c, d)
 *   exp       y = A·μ^u + c,  μ = 1/(1 + e^(−t))   θ = (t, A, c)
 *
 * The exponential family is the paper's μ^(k−b) + c with A = μ^(−b); A is
 * free in sign so that rising curves can be fitted too.
 */
#ifndef SLAQ_CORE_FIT_H
#define SLAQ_CORE_FIT_H

#include "internal.h"


#define FIT_MAXPTS 128   /* points used at most (the most recent) */
#define FIT_UMAX 1e4     /* a forecast must stay finite this far ahead */
#define FIT_MINW 1e-3    /* points lighter than this are not used */
#define FIT_STEP_RATIO 8 /* a first step this many times steeper than any
                            later one is left out of the fit ... */
#define FIT_MIN_AFTER_STEP 5 /* ... when this many points remain */
#define FIT_MU_GRID 40   /* rates μ tried by the exponential cold start */
#define FIT_D_GRID 12    /* asymptotes tried by the rational cold start */

typedef struct fit_data {
    int n;
    double u[FIT_MAXPTS];
    double y[FIT_MAXPTS];
    double w[FIT_MAXPTS];
    double off, sc;  /* L = sc·y + off */
    double neff;     /* effective number of points, (Σw)² / Σw² */
} fit_data;

/* Fills d from the history with weights lambda^age. */
void fit_data_load(fit_data *d, const slaq_history *h, double lambda);

int fit_npar(int model);

/* Model values f[i] at every point of d and, if jac != NULL, the
 * gradients jac[i][0..npar-1]: one pass, constants hoisted. */
void fit_eval_all(int model, const double *th, const fit_data *d, double *f,
                  double (*jac)[4]);

/* Weighted sum of squared residuals; INFINITY if not finite. */
double fit_cost(int model, const double *th, const fit_data *d);

/* Whether θ gives a usable forecast: finite on the data and for
 * 0 ≤ u ≤ FIT_UMAX (no pole for the rational family). */
int fit_valid(int model, const double *th, const fit_data *d);

/* Solves the p×p symmetric system M x = b (p ≤ 4) by Cholesky; 0 if M
 * is not positive definite. */
int fit_chol_solve(int p, double M[4][4], const double *b, double *x);

/* Cold-start parameters from the data's shape. */
void fit_guess(int model, const fit_data *d, double *th);

/* Turns a fit into a forecast: model parameters in the forecast's units,
 * the data's scale, and the final loss. If `anchor`, the curve is shifted
 * to pass through the last observed loss. */
void fit_to_forecast(int model, const double *th, const fit_data *d,
                     int anchor, slaq_forecast *f);



/* Where a fit's coordinates were: to carry θ to a new data set (the next
 * report moves u's origin and the scaling). */
typedef struct fit_frame {
    double k0, off, sc;
} fit_frame;

/* Rewrites θ, fitted in frame `from`, for data d whose frame is `to`, so
 * that it describes the same loss curve (a warm start). */
void fit_reframe(int model, double *th, const fit_frame *from,
                 const fit_frame *to);
#endif
