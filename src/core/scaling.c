/*
 * scaling.c — a job's speed on n cores with t threads, fitted online from
 * its own reports (include/slaq/scaling.h has the model and its
 * contract; docs/libslaq.md, "Scaling", the reasons).
 *
 * Each report adds one measurement y = e · wall / iters (the core-seconds
 * an iteration held at its thread count) to the discounted mean of its
 * thread count, and the three parameters are fitted again by weighted
 * least squares on those means: at most SLAQ_SCALING_SLOTS points, a 3×3
 * system at most, no allocation. Known limit: a thread count measured
 * slow is not tried again, so a job whose scaling improves later (a
 * bigger batch, a quieter machine) keeps the advice of its first
 * measurements; and a measurement on a loaded machine (other processes
 * taking the cores the share promised) is taken for the job's own.
 */
#include <math.h>

#include "slaq/slaq.h"
#include "slaq/scaling.h"

/* The weight of a new report in its thread count's mean once it has a
 * few: a job whose iterations change cost is followed within a few
 * reports, and one slow report does not swing the advice. */
#define SC_ALPHA 0.25

void slaq_scaling_init(slaq_scaling *m)
{
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++) {
        m->threads[i] = 0;
        m->count[i] = 0;
        m->mean[i] = 0;
        m->var[i] = 0;
    }
    m->a = NAN;
    m->sigma = SLAQ_SCALING_PRIOR_SIGMA;
    m->kappa = 0;
    m->rel_sd = NAN;
    m->known = 0;
}

void slaq_scaling_init_linear(slaq_scaling *m)
{
    slaq_scaling_init(m);
    m->a = 1;
    m->sigma = 0;
    m->rel_sd = 0;
    m->known = 1;
}

int slaq_scaling_slot(const slaq_scaling *m, unsigned t)
{
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++)
        if (m->threads[i] == t && t > 0)
            return i;
    return -1;
}

/* The model's cost factor at t threads: y(t) / a. */
static double sc_factor(double sigma, double kappa, double t)
{
    return 1 + sigma * (t - 1) + kappa * t * (t - 1);
}

/* The basis of the least-squares fit at t threads: y = Σ c_i · x_i(t)
 * with c = (a, a·σ, a·κ). */
static void sc_basis(double t, double x[3])
{
    x[0] = 1;
    x[1] = t - 1;
    x[2] = t * (t - 1);
}

/*
 * Weighted least squares on the first p (1 to 3) basis functions over
 * the measured thread counts; c gets the coefficients. 0, or -1 when the
 * system is singular (fewer distinct thread counts than p).
 */
static int sc_solve(const slaq_scaling *m, int p, double c[3])
{
    double A[3][4] = {{0}};
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++) {
        if (!m->count[i])
            continue;
        double x[3], w = m->count[i];
        sc_basis(m->threads[i], x);
        for (int r = 0; r < p; r++) {
            for (int k = 0; k < p; k++)
                A[r][k] += w * x[r] * x[k];
            A[r][3] += w * x[r] * m->mean[i];
        }
    }
    /* Gaussian elimination with partial pivoting. */
    for (int col = 0; col < p; col++) {
        int piv = col;
        for (int r = col + 1; r < p; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col]))
                piv = r;
        if (!(fabs(A[piv][col]) > 1e-12 * (fabs(A[0][0]) + 1e-300)))
            return -1;
        for (int k = 0; k < 4; k++) {
            double tmp = A[col][k];
            A[col][k] = A[piv][k];
            A[piv][k] = tmp;
        }
        for (int r = 0; r < p; r++) {
            if (r == col)
                continue;
            double f = A[r][col] / A[col][col];
            for (int k = col; k < 4; k++)
                A[r][k] -= f * A[col][k];
        }
    }
    for (int r = 0; r < 3; r++)
        c[r] = r < p ? A[r][3] / A[r][r] : 0;
    return 0;
}

void slaq_scaling_fit(slaq_scaling *m)
{
    int distinct = 0, only = 0;
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++)
        if (m->count[i]) {
            distinct++;
            only = i;
        }
    m->kappa = 0;
    m->known = distinct >= 2;
    if (distinct == 0) {
        m->a = NAN;
        m->sigma = SLAQ_SCALING_PRIOR_SIGMA;
        m->rel_sd = NAN;
        return;
    }
    if (distinct == 1) {
        m->sigma = SLAQ_SCALING_PRIOR_SIGMA;
        m->a = m->mean[only] / sc_factor(m->sigma, 0, m->threads[only]);
    } else {
        /* All three parameters where three counts allow it; a negative
         * contention (a fit bending upwards) is noise: refit without. */
        double c[3];
        int ok = distinct >= 3 && sc_solve(m, 3, c) == 0 && c[0] > 0 &&
                 c[1] >= 0 && c[2] >= 0;
        if (!ok)
            ok = sc_solve(m, 2, c) == 0 && c[0] > 0 && c[1] >= 0;
        if (!ok) { /* faster than linear: taken as linear */
            sc_solve(m, 1, c);
        }
        m->a = c[0];
        m->sigma = c[1] / c[0];
        m->kappa = c[2] / c[0];
    }
    /* The spread about the fit, within and between thread counts,
     * relative to the fitted y. */
    double ss = 0, ws = 0;
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++) {
        if (!m->count[i])
            continue;
        double fit = m->a * sc_factor(m->sigma, m->kappa, m->threads[i]);
        double d = m->mean[i] - fit;
        ss += m->count[i] * (m->var[i] + d * d) / (fit * fit);
        ws += m->count[i];
    }
    m->rel_sd = sqrt(ss / ws);
}

int slaq_scaling_observe(slaq_scaling *m, double cores, double threads,
                         double wall_s, double cpu_s, double iters)
{
    if (!(cores > 0) || !isfinite(cores) || !(threads >= 1) ||
        !isfinite(threads) || !(wall_s > 0) || !isfinite(wall_s) ||
        !(iters > 0) || !isfinite(iters) || cpu_s < 0 || isinf(cpu_s))
        return SLAQ_EINVAL;
    double t = floor(threads);
    if (t > SLAQ_SCALING_MAX_THREADS)
        t = SLAQ_SCALING_MAX_THREADS;
    double held = cores;
    if (cpu_s > 0 && cpu_s / wall_s > held) /* NAN compares false */
        held = cpu_s / wall_s;
    double e = t < held ? t : held;
    double y = e * wall_s / iters;
    int i = slaq_scaling_slot(m, (unsigned)t);
    if (i < 0) { /* a free slot, or the one measured least often */
        i = 0;
        for (int k = 1; k < SLAQ_SCALING_SLOTS; k++)
            if (m->count[k] < m->count[i])
                i = k;
        m->threads[i] = (unsigned)t;
        m->count[i] = 0;
    }
    unsigned n = ++m->count[i];
    if (n == 1) {
        m->mean[i] = y;
        m->var[i] = 0;
    } else {
        double alpha = 1.0 / n > SC_ALPHA ? 1.0 / n : SC_ALPHA;
        double d = y - m->mean[i];
        m->mean[i] += alpha * d;
        m->var[i] = (1 - alpha) * (m->var[i] + alpha * d * d);
    }
    slaq_scaling_fit(m);
    return SLAQ_OK;
}

double slaq_scaling_speed(const slaq_scaling *m, double cores,
                          double threads)
{
    if (!(cores > 0) || !(threads >= 1) || !(m->a > 0))
        return NAN;
    double e = threads < cores ? threads : cores;
    return e / (m->a * sc_factor(m->sigma, m->kappa, threads));
}

/* min(t, n) / factor(t): the speed-up of t threads on n cores. */
static double sc_gain(const slaq_scaling *m, double n, double t)
{
    return (t < n ? t : n) / sc_factor(m->sigma, m->kappa, t);
}

/*
 * The whole thread count from 1 to `top` with the largest fitted gain on
 * `cores` cores; *gain gets it. t/factor(t) rises to its peak at
 * sqrt((1 − σ)/κ) (for ever when κ = 0) and falls after, and above
 * `cores` threads only ceil(cores) can gain (on a fractional core): the
 * best t is among a few.
 */
static double sc_best(const slaq_scaling *m, double cores, double top,
                      double *gain)
{
    double cand[5] = {1, floor(cores), top, top, top};
    if (m->kappa > 0 && m->sigma < 1) {
        double peak = sqrt((1 - m->sigma) / m->kappa);
        cand[3] = floor(peak);
        cand[4] = ceil(peak);
    }
    double best = 1, bg = 0;
    for (int k = 0; k < 5; k++) {
        double t = cand[k] < 1 ? 1 : cand[k] > top ? top : cand[k];
        double g = sc_gain(m, cores, t);
        if (g > bg || (g == bg && t < best)) {
            bg = g;
            best = t;
        }
    }
    *gain = bg;
    return best;
}

double slaq_scaling_speedup(const slaq_scaling *m, double cores)
{
    if (!(cores > 0))
        return 0;
    if (!m || (m->sigma == 0 && m->kappa == 0))
        return cores; /* linear: min(ceil(n), n) / 1, exactly n */
    double top = ceil(cores), g;
    if (top > SLAQ_SCALING_MAX_THREADS)
        top = SLAQ_SCALING_MAX_THREADS;
    sc_best(m, cores, top, &g);
    return g;
}

int slaq_scaling_busy_threads(double cores)
{
    if (!(cores + 0.25 >= 1)) /* also NaN */
        return 1;
    if (cores + 0.25 >= SLAQ_SCALING_MAX_THREADS)
        return SLAQ_SCALING_MAX_THREADS;
    return (int)floor(cores + 0.25);
}

int slaq_scaling_threads(const slaq_scaling *m, double cores)
{
    int cap = slaq_scaling_busy_threads(cores);
    int one = slaq_scaling_slot(m, 1);
    if (one < 0 || m->count[one] < SLAQ_SCALING_EXPLORE_REPORTS)
        return 1;
    /* A count being tried goes on until it has its reports. */
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++)
        if ((int)m->threads[i] <= cap && m->count[i] > 0 &&
            m->count[i] < SLAQ_SCALING_EXPLORE_REPORTS)
            return (int)m->threads[i];
    int best = 1;
    double best_speed = (cores < 1 ? cores : 1) / m->mean[one];
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++) {
        int t = (int)m->threads[i];
        if (t < 2 || t > cap || m->count[i] < SLAQ_SCALING_EXPLORE_REPORTS)
            continue;
        double speed = (t < cores ? t : cores) / m->mean[i];
        if (speed > best_speed) {
            best = t;
            best_speed = speed;
        }
    }
    if (cap >= 2 && slaq_scaling_slot(m, 2) < 0)
        return 2; /* the second point of the fit */
    /* The count the fit says is fastest, if untried and clearly faster. */
    double g;
    int t = (int)sc_best(m, cores, cap, &g);
    if (slaq_scaling_slot(m, (unsigned)t) < 0 &&
        g / m->a > best_speed * (1 + SLAQ_SCALING_EXPLORE_GAIN))
        return t;
    return best;
}
