/*
 * fit_auto.c — the `auto` predictor, slaq's default.
 *
 * SLAQ's fit (fit_gsl.c) picks a curve family by in-sample residual, which
 * favours the more flexible family and trusts a handful of heavily
 * weighted points; its forecasts ten iterations out can dive far below any
 * plausible loss. `auto` keeps the paper's families and weights but changes
 * how a forecast is chosen and bounded:
 *
 *  - Four candidates each round: both fitted families, anchored to pass
 *    through the last observed loss; the strawman line; and the geometric
 *    continuation of the last two drops (usable from three reports on).
 *  - Choice by track record: every candidate's forecasts of the last
 *    AUTO_PAST rounds are scored against the reports that came after them
 *    (decayed mean of |miss| / normaliser). The candidate that has been
 *    predicting best is used; a fitted family within AUTO_NEAR of a
 *    simpler winner is preferred (simple candidates win short horizons by
 *    a hair and lose long ones). Before any record, the better in-sample
 *    fit is used.
 *  - Bounds: besides the common "never faster than the recent steepest
 *    step" (predictor.c), the remaining reduction may not exceed
 *    AUTO_FLOOR times what the job has achieved so far.
 *  - Its own small Levenberg–Marquardt solver (below) instead of GSL's
 *    general one: the same least-squares problem, but no heap and no
 *    per-call set-up, which is what lets a scheduler refit thousands of
 *    jobs every epoch (`slaq bench sched`).
 *
 * Measured with `slaq predict-eval` (docs/predictors.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

#define AUTO_PAST 4     /* rounds of forecasts each candidate is judged on */
#define AUTO_DECAY 0.7  /* weight of a report's misses, per newer report */
#define AUTO_MIN_PAST 2 /* rounds before the track record decides */
#define AUTO_MIN_FIT 6  /* reports before the families are fitted */
#define AUTO_NEAR 2.5   /* a fitted family within this factor is preferred */
#define AUTO_FLOOR 0.75 /* remaining reduction <= this × achieved */
#define AUTO_WARM_ITER 4 /* solver steps from a warm start, per report */
#define AUTO_MIX_POW 2  /* blend weights ∝ 1 / miss^this */
#define LM_MAX_ITER 50

/* The normal equations JᵀWJ and JᵀWr (lower triangle of A). Inlined with
 * np a constant, so the compiler unrolls the inner loops: this is the
 * innermost work of every fit. */
static inline void lm_normal(const int np, const fit_data *d, const double *f,
                             double (*J)[4], double A[4][4], double *g)
{
    for (int a = 0; a < np; a++) {
        g[a] = 0;
        for (int b = 0; b <= a; b++)
            A[a][b] = 0;
    }
    for (int i = 0; i < d->n; i++) {
        double r = f[i] - d->y[i];
        double w = d->w[i];
        for (int a = 0; a < np; a++) {
            double wg = w * J[i][a];
            g[a] += wg * r;
            for (int b = 0; b <= a; b++)
                A[a][b] += wg * J[i][b];
        }
    }
}

/*
 * Levenberg–Marquardt for a family of at most four parameters. Small
 * enough to keep the normal equations on the stack, so a fit neither
 * allocates nor goes through a general solver's per-iteration set-up.
 * Each trial point is evaluated with its Jacobian, which the next step
 * reuses when the trial is accepted. *lam carries the damping from one fit
 * of a job to the next: a warm start resumes where the last fit left off.
 * Returns the final weighted cost (INFINITY if the start was unusable).
 */
static double lm_solve(int model, const fit_data *d, double *th,
                       unsigned max_iter, double *lam)
{
    int np = fit_npar(model);
    if (!fit_valid(model, th, d))
        return INFINITY;
    double f[FIT_MAXPTS], J[FIT_MAXPTS][4];
    double cf[FIT_MAXPTS], cJ[FIT_MAXPTS][4];
    fit_eval_all(model, th, d, f, J);
    double cost = 0;
    for (int i = 0; i < d->n; i++)
        cost += d->w[i] * (f[i] - d->y[i]) * (f[i] - d->y[i]);
    if (!isfinite(cost))
        return INFINITY;
    if (!(*lam > 0))
        *lam = 1e-3;
    for (unsigned it = 0; it < max_iter; it++) {
        double A[4][4], g[4];
        if (np == 4)
            lm_normal(4, d, f, J, A, g);
        else
            lm_normal(3, d, f, J, A, g);
        int accepted = 0;
        double cand[4], newcost = cost;
        for (int tries = 0; tries < 12 && !accepted; tries++) {
            double M[4][4], negg[4], step[4];
            for (int a = 0; a < np; a++) {
                for (int b = 0; b <= a; b++)
                    M[a][b] = M[b][a] = A[a][b];
                M[a][a] += *lam * A[a][a] + 1e-300;
                negg[a] = -g[a];
            }
            if (fit_chol_solve(np, M, negg, step)) {
                for (int a = 0; a < np; a++)
                    cand[a] = th[a] + step[a];
                if (fit_valid(model, cand, d)) {
                    fit_eval_all(model, cand, d, cf, cJ);
                    newcost = 0;
                    for (int i = 0; i < d->n; i++)
                        newcost += d->w[i] * (cf[i] - d->y[i]) *
                                   (cf[i] - d->y[i]);
                    if (newcost < cost) {
                        accepted = 1;
                        break;
                    }
                }
            }
            *lam *= 4;
        }
        if (!accepted)
            break;
        double gain = cost - newcost;
        memcpy(th, cand, (size_t)np * sizeof *th);
        memcpy(f, cf, (size_t)d->n * sizeof *f);
        memcpy(J, cJ, (size_t)d->n * sizeof *J);
        cost = newcost;
        *lam = fmax(*lam / 9, 1e-12);
        if (gain <= 1e-12 * cost + 1e-300)
            break;
    }
    if (*lam > 1e6)
        *lam = 1e-3; /* stuck: let the next fit start afresh */
    return cost;
}

/* Geometric continuation of the last two drops: the closed-form member of
 * the exponential family through the last three points. */
static int auto_geometric(slaq_forecast *f, const slaq_history *h)
{
    if (h->len < 3)
        return 0;
    const slaq_report *a = slaq_history_at(h, h->len - 3);
    const slaq_report *b = slaq_history_at(h, h->len - 2);
    const slaq_report *c = slaq_history_at(h, h->len - 1);
    double g1 = report_drop(a, b);
    double g2 = report_drop(b, c);
    if (!(g1 > 0 && g2 > 0))
        return 0;
    double rho = g2 / g1;
    if (!(rho < 0.98))
        return 0;
    if (rho < 0.02)
        rho = 0.02;
    pred_forecast_base(f, h);
    f->model = SLAQ_MODEL_EXP;
    f->par[0] = rho;
    f->par[1] = g2 * rho / (1 - rho);
    f->par[2] = f->loss0 - f->par[1];
    f->par[3] = 0;
    f->final_loss = f->par[2];
    return 1;
}

enum { CAND_RATIONAL, CAND_EXP, CAND_LINE, CAND_GEOM, AUTO_NCAND };
#define AUTO_PAST 4

/* auto's memory: each candidate's last AUTO_PAST forecasts and a decayed
 * sum of how far they missed the reports that came after them. */
typedef struct auto_state {
    slaq_forecast past[AUTO_PAST][AUTO_NCAND];
    int valid[AUTO_PAST][AUTO_NCAND];
    int npast, head;
    double err[AUTO_NCAND]; /* decayed sum of normalised misses */
    double cnt[AUTO_NCAND]; /* decayed count of forecasts scored */
    uint64_t last_iter;
} auto_state;

void pred_auto_free(void *st) { free(st); }

/* A candidate's mean recent miss; INFINITY before it has a record. */
static double auto_miss(const auto_state *st, int c)
{
    return st->cnt[c] > 0.5 ? st->err[c] / st->cnt[c] : INFINITY;
}

/* Charges every remembered forecast with its miss on the reports that
 * arrived since the last fit. */
static void auto_score(auto_state *st, const slaq_history *h)
{
    for (size_t i = 0; i < h->len; i++) {
        const slaq_report *r = slaq_history_at(h, i);
        if (r->iter <= st->last_iter)
            continue;
        for (int c = 0; c < AUTO_NCAND; c++) {
            st->err[c] *= AUTO_DECAY;
            st->cnt[c] *= AUTO_DECAY;
        }
        for (int j = 0; j < st->npast; j++)
            for (int c = 0; c < AUTO_NCAND; c++) {
                if (!st->valid[j][c])
                    continue;
                const slaq_forecast *f = &st->past[j][c];
                st->err[c] += fabs(slaq_forecast_loss(f, (double)r->iter) -
                                   r->loss) / f->scale;
                st->cnt[c] += 1;
            }
    }
}

/* The two fitted families as candidates: each warm-started from its last
 * fit, cold-started only when that fails; ok[] and cost[] (the in-sample
 * residual per degree of freedom) are set for the families that fit. */
static void auto_fit_families(slaq_predictor *p, const slaq_history *h,
                              slaq_forecast *cand, int *ok, double *cost)
{
    fit_data d;
    fit_data_load(&d, h, p->opts.lambda);
    fit_frame now = {(double)slaq_history_last(h)->iter, d.off, d.sc};
    unsigned max_iter = p->opts.max_iter ? p->opts.max_iter : AUTO_WARM_ITER;
    for (int m = 0; m < PRED_NMODELS; m++) {
        pred_fitstate *fs = &p->model[m];
        double th[4], c = INFINITY;
        if (fs->have) {
            memcpy(th, fs->th, sizeof th);
            fit_frame was = {fs->k0, fs->off, fs->sc};
            fit_reframe(m, th, &was, &now);
            c = lm_solve(m, &d, th, max_iter, &fs->lam);
        }
        /* A cold start costs several warm fits; it runs only when there
         * is no usable warm start. A family stuck in a poor basin loses
         * the track-record contest to the other candidates meanwhile. */
        if (!isfinite(c)) {
            double th2[4];
            fit_guess(m, &d, th2);
            fs->lam = 0;
            double c2 = lm_solve(m, &d, th2, LM_MAX_ITER, &fs->lam);
            if (c2 < c) {
                c = c2;
                memcpy(th, th2, sizeof th);
            }
        }
        fs->have = isfinite(c);
        if (!fs->have)
            continue;
        memcpy(fs->th, th, sizeof th);
        fs->k0 = now.k0, fs->off = now.off, fs->sc = now.sc;
        int ci = m == PRED_RATIONAL ? CAND_RATIONAL : CAND_EXP;
        pred_forecast_base(&cand[ci], h);
        fit_to_forecast(m, th, &d, 1, &cand[ci]);
        ok[ci] = 1;
        cost[ci] = c / fmax(d.neff - fit_npar(m), 0.5);
    }
}

/* The candidate whose recent forecasts missed least; until there is a
 * track record, the better in-sample fit (then the line). -1 if none. */
static int auto_choose(const auto_state *st, const int *ok,
                       const double *cost, int use_oos)
{
    int best = -1;
    for (int c = 0; c < AUTO_NCAND; c++) {
        if (!ok[c])
            continue;
        if (best < 0) {
            best = c;
            continue;
        }
        double ec = auto_miss(st, c), eb = auto_miss(st, best);
        if (use_oos && (isfinite(ec) || isfinite(eb)) ? ec < eb
                                                       : cost[c] < cost[best])
            best = c;
    }
    return best;
}

/* A fitted family within AUTO_NEAR of a simpler winner's miss is
 * preferred to it (the simple candidates win short horizons by a hair and
 * lose the long ones); the better in-sample fit of those that qualify. */
static int auto_prefer_fitted(const auto_state *st, const int *ok,
                              const double *cost, int best)
{
    double eb = auto_miss(st, best);
    int alt = -1;
    for (int c = CAND_RATIONAL; c <= CAND_EXP; c++)
        if (ok[c] && auto_miss(st, c) <= AUTO_NEAR * eb &&
            (alt < 0 || cost[c] < cost[alt]))
            alt = c;
    return alt >= 0 ? alt : best;
}

/* Blends the runner-up into f, weighted by the inverse AUTO_MIX_POW power
 * of the two candidates' recent misses. */
static void auto_blend(const auto_state *st, const slaq_forecast *cand,
                       const int *ok, int best, slaq_forecast *f)
{
    int second = -1;
    for (int c = 0; c < AUTO_NCAND; c++)
        if (c != best && ok[c] && isfinite(auto_miss(st, c)) &&
            (second < 0 || auto_miss(st, c) < auto_miss(st, second)))
            second = c;
    double e1 = auto_miss(st, best);
    if (second < 0 || !isfinite(e1))
        return;
    double e2 = auto_miss(st, second);
    double w2 = pow(e1, AUTO_MIX_POW) /
                (pow(e1, AUTO_MIX_POW) + pow(e2, AUTO_MIX_POW) + 1e-300);
    const slaq_forecast *o = &cand[second];
    f->model2 = o->model;
    memcpy(f->par2, o->par, sizeof o->par);
    f->yscale2 = o->yscale;
    f->shift2 = o->shift;
    f->mix = w2;
    f->final_loss += w2 * (o->final_loss - f->final_loss);
}

/* Keeps this round's candidates, to score them against what comes. */
static void auto_remember(auto_state *st, const slaq_forecast *cand,
                          const int *ok)
{
    st->head = (st->head + 1) % AUTO_PAST;
    if (st->npast < AUTO_PAST)
        st->npast++;
    for (int c = 0; c < AUTO_NCAND; c++) {
        st->past[st->head][c] = cand[c];
        st->valid[st->head][c] = ok[c];
    }
}

int pred_fit_auto(slaq_predictor *p, const slaq_history *h)
{
    if (h->len < 3) {
        pred_forecast_linear(&p->fc, h);
        return SLAQ_OK;
    }
    auto_state *st = p->autost;
    if (!st) {
        st = p->autost = calloc(1, sizeof *st);
        if (!st) {
            pred_forecast_linear(&p->fc, h);
            return SLAQ_ENOMEM;
        }
    }
    auto_score(st, h);
    st->last_iter = slaq_history_last(h)->iter;

    slaq_forecast cand[AUTO_NCAND];
    int ok[AUTO_NCAND] = {0};
    double cost[AUTO_NCAND] = {INFINITY, INFINITY, INFINITY, INFINITY};
    pred_forecast_linear(&cand[CAND_LINE], h);
    ok[CAND_LINE] = 1;
    ok[CAND_GEOM] = auto_geometric(&cand[CAND_GEOM], h);
    if (h->len >= AUTO_MIN_FIT)
        auto_fit_families(p, h, cand, ok, cost);

    int use_oos = st->npast >= AUTO_MIN_PAST;
    int best = auto_choose(st, ok, cost, use_oos);
    if (use_oos && best >= CAND_LINE)
        best = auto_prefer_fitted(st, ok, cost, best);
    p->fc = cand[best < 0 ? CAND_LINE : best];
    if (use_oos && best >= 0)
        auto_blend(st, cand, ok, best, &p->fc);
    /* Bound: the remaining reduction is at most AUTO_FLOOR × the done. */
    double done = p->fc.first_loss - p->fc.loss0;
    if (done > 0)
        p->fc.floor_loss = p->fc.loss0 - AUTO_FLOOR * done;

    auto_remember(st, cand, ok);
    return SLAQ_OK;
}
