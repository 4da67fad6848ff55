/*
 * cmd_sim_sweep.c — `slaq sim --sweep TRACES`: replays a recorded sweep
 * under several sweep policies and configuration orders in virtual time
 * and reports each policy's time to target and its spread over orders;
 * with --calib, measures the learning-curve model's calibration and speed
 * on the same traces instead.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "sim/sweep_sim.h"

#define SW_MAX_POLICIES 32

static void sw_usage(FILE *f)
{
    fprintf(f,
        "usage: slaq sim --sweep TRACES [options]\n"
        "\n"
        "Replays a recorded sweep (data/sweeps/*.jsonl, from make sweep-traces)\n"
        "in virtual time under sweep policies, over several configuration\n"
        "orders, and reports each policy's time to target: the first moment any\n"
        "configuration's metric reaches it. The last rows are lower bounds:\n"
        "in each order, the earliest a policy that starts configurations in\n"
        "that order could reach the target (row \"bound\"), and in any order,\n"
        "the earliest one configuration alone from t = 0 reaches it.\n"
        "\n"
        "  --slots S            concurrent configurations (default 4)\n"
        "  --policy LIST        comma-separated, of pop, pop-keep, pop-early,\n"
        "                       default, bandit, earlyterm, sh, hyperband\n"
        "                       (pop-keep: POP keeping a promising\n"
        "                       configuration's slot while it rises on course\n"
        "                       for the target; pop-early: pop-keep that also\n"
        "                       applies POP's kill rules at epoch 0.4 b);\n"
        "                       a name + \"+oracle\" (pop+oracle) runs a policy\n"
        "                       that uses the curve model (the POPs and\n"
        "                       earlyterm) with the traces' true future in\n"
        "                       its place: what a perfect model would give\n"
        "                       (default pop,bandit,earlyterm,default,hyperband)\n"
        "  --orders N           configuration orders, the first the recorded one\n"
        "                       (default 25)\n"
        "  --seed N             seed of the orders (default 1)\n"
        "  --target X           the target metric\n"
        "  --target-top K       or: the K-th best configuration's best metric\n"
        "                       (default K = 4, used when --target is absent)\n"
        "  --kill-threshold X   POP's domain kill threshold (default none)\n"
        "  --t-max SECONDS      POP's time budget (default: the time Default\n"
        "                       needs for all of them: total work / slots)\n"
        "  --b N                evaluation boundary (default: each policy's)\n"
        "  --reeval SECONDS     POP: at a boundary, every other active\n"
        "                       configuration's p is estimated again when\n"
        "                       this long has passed since the last time\n"
        "                       (default 0: b epochs of the configuration at\n"
        "                       its boundary; -1: never, each p only at its\n"
        "                       own boundary)\n"
        "  --inflate X          curve model's parameter-uncertainty factor\n"
        "  --temper T           curve model's weight temperature (default 16;\n"
        "                       1 = BIC weights, 1e9 = equal weights)\n"
        "  --stop-prior X       curve model's prior that a curve has stopped\n"
        "                       (default 0.1)\n"
        "  --stall-tol X        a rise of at most X counts as a stall (default\n"
        "                       0.00025, the metric's units)\n"
        "  --no-stall           curve model without the stopped hypothesis\n"
        "  --suspend-cost S     seconds a slot stays busy after a suspend\n"
        "                       (default 0.01: SIGSTOP on the same node)\n"
        "  --resume-cost S      seconds before a resumed epoch starts (0.01)\n"
        "  --start-scale X      multiplies the recorded start-up times (default\n"
        "                       1; 0: processes that start with data loaded)\n"
        "  --orders-out FILE    write the orders (JSON) for other harnesses\n"
        "  --json FILE          write every run's result as JSON\n"
        "  --trace FILE         write every decision as JSON lines: starts,\n"
        "                       resumes, suspensions, kills and each\n"
        "                       evaluation's p, ERT, class and threshold\n"
        "  --trace-order K      trace only order K (default: every order)\n"
        "  --calib              instead: calibration (reliability, Brier),\n"
        "                       discrimination at the target (AUC at epochs\n"
        "                       b..4b, against the best so far) and speed\n"
        "                       of the curve model on held-out traces\n"
        "  --calib-dump FILE    instead: the library default's predictions on\n"
        "                       both halves, one CSV line each (id, n, level,\n"
        "                       p, outcome, ...), and each half's Brier score\n"
        "  -h, --help           this help\n"
        "\n"
        "See docs/sweeps.md.\n");
}

static int sw_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sw_quant(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n || pos == (double)i)
        return sorted[i < n ? i : n - 1];
    if (isinf(sorted[i + 1])) /* an unreached order: infinitely late */
        return INFINITY;
    return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* max - min of sorted times; infinite when the last never reached. */
static double sw_spread(const double *sorted, size_t n)
{
    return isinf(sorted[n - 1]) ? INFINITY : sorted[n - 1] - sorted[0];
}

/* The K-th best configuration's best metric (oriented by direction). */
static double sw_target_top(const sweep_set *set, int K)
{
    double *b = malloc(set->n * sizeof *b);
    if (!b)
        return NAN;
    for (size_t i = 0; i < set->n; i++) {
        double v = -INFINITY;
        for (size_t e = 0; e < set->v[i].n; e++) {
            double y = set->maximize ? set->v[i].metric[e] : -set->v[i].metric[e];
            v = fmax(v, y);
        }
        b[i] = v;
    }
    qsort(b, set->n, sizeof *b, sw_cmp);
    size_t k = (size_t)K > set->n ? set->n : (size_t)K;
    double t = b[set->n - k];
    free(b);
    return set->maximize ? t : -t;
}

/* ---------------------------------------------------------- calibration */

struct calib_acc {
    double brier, n;
    double bin_p[10], bin_o[10], bin_n[10];
};

static void calib_add(struct calib_acc *a, double p, int o)
{
    a->brier += (p - o) * (p - o);
    a->n++;
    int b = (int)(p * 10);
    b = b < 0 ? 0 : b > 9 ? 9 : b;
    a->bin_p[b] += p;
    a->bin_o[b] += o;
    a->bin_n[b]++;
}

static double calib_ece(const struct calib_acc *a)
{
    double e = 0;
    for (int b = 0; b < 10; b++)
        if (a->bin_n[b] > 0)
            e += fabs(a->bin_p[b] - a->bin_o[b]) / a->n;
    return e;
}

/* Per-evaluation times: thread CPU and wall milliseconds. */
struct calib_speed {
    double *cpu, *wall;
    size_t n, cap;
};

static double calib_ms(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 +
           (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/*
 * For every configuration of one half (id % 2 == half) and every
 * evaluation point n = b, 2b, ... before its last epoch: fit the curve to
 * y(1..n) and predict P(y(E) >= level) for the final epoch E and each
 * level; the outcome is whether the recorded y(E) reached the level.
 */
static int calib_half(const sweep_set *set, int half,
                      const slaq_lcurve_opts *o, int b, int best,
                      const double *levels, int nl, struct calib_acc *acc,
                      struct calib_speed *sp, FILE *dump)
{
    slaq_lcurve *lc = slaq_lcurve_new(o);
    double *y = malloc((size_t)set->epochs * sizeof *y);
    if (!lc || !y) {
        slaq_lcurve_free(lc);
        free(y);
        return -1;
    }
    double sign = set->maximize ? 1 : -1;
    for (size_t i = 0; i < set->n; i++) {
        const sweep_trace *t = &set->v[i];
        if (t->id % 2 != half)
            continue;
        for (size_t e = 0; e < t->n; e++) {
            y[e] = sign * t->metric[e];
            if (best && e > 0)
                y[e] = fmax(y[e], y[e - 1]);
        }
        /* A run that ended early (converged, diverged) keeps its last value. */
        double final = y[t->n - 1];
        for (int n = b; n < set->epochs && (size_t)n <= t->n; n += b) {
            /* CPU time of this thread: the cost of the model itself, not
             * of whatever else the machine runs (wall time beside it). What
             * POP does at an evaluation: one fit, then P(y(n+m) >= target)
             * for every remaining epoch m; here also the levels at the end. */
            struct timespec a0, a1, w0, w1;
            clock_gettime(CLOCK_MONOTONIC, &w0);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a0);
            if (slaq_lcurve_fit(lc, y, (size_t)n) < 0)
                continue;
            double P[16], sink = 0;
            for (int l = 0; l < nl; l++)
                P[l] = slaq_lcurve_prob(lc, set->epochs, sign * levels[l]);
            if (sp)
                for (int m = n + 1; m <= set->epochs; m++)
                    sink += slaq_lcurve_prob(lc, m, sign * levels[nl - 1]);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a1);
            clock_gettime(CLOCK_MONOTONIC, &w1);
            if (sp && sp->n < sp->cap && !isnan(sink)) {
                sp->cpu[sp->n] = calib_ms(&a0, &a1);
                sp->wall[sp->n++] = calib_ms(&w0, &w1);
            }
            /* With the best-so-far curve (POP's question: will it get
             * there?), a level already reached is no longer a question. */
            for (int l = 0; l < nl; l++)
                if (isfinite(P[l]) && !(best && y[n - 1] >= sign * levels[l])) {
                    calib_add(acc, P[l], final >= sign * levels[l]);
                    if (dump)
                        fprintf(dump, "%d,%d,%d,%.6f,%.6f,%d,%zu,%.6f,%.6f\n",
                                t->id, n, l, sign * levels[l], P[l],
                                final >= sign * levels[l], t->n, y[n - 1],
                                final);
                }
        }
    }
    slaq_lcurve_free(lc);
    free(y);
    return 0;
}

static void calib_bins(const struct calib_acc *a)
{
    printf("reliability (predicted probability bin: mean predicted, observed "
           "frequency, count):\n");
    for (int k = 0; k < 10; k++)
        if (a->bin_n[k] > 0)
            printf("  [%.1f,%.1f)  %.3f  %.3f  %.0f\n", k / 10.0, (k + 1) / 10.0,
                   a->bin_p[k] / a->bin_n[k], a->bin_o[k] / a->bin_n[k],
                   a->bin_n[k]);
}

static void calib_bins_json(FILE *js, const struct calib_acc *a)
{
    int first = 1;
    fprintf(js, "[");
    for (int k = 0; k < 10; k++)
        if (a->bin_n[k] > 0) {
            fprintf(js, "%s[%.4f,%.4f,%.0f]", first ? "" : ",",
                    a->bin_p[k] / a->bin_n[k], a->bin_o[k] / a->bin_n[k],
                    a->bin_n[k]);
            first = 0;
        }
    fprintf(js, "]");
}

static const char *calib_temper_name(double t, char *buf, size_t len)
{
    if (isinf(t))
        return "equal";
    snprintf(buf, len, "T=%g", t);
    return buf;
}

/* The library default on both halves, one line per scored prediction
 * (CSV) for finding where the Brier score's mass comes from; no grid. */
static int calib_dump(const sweep_set *set, int b, int best,
                      const double *levels, int nl, const char *path,
                      const slaq_lcurve_opts *model)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("sim", "%s: cannot open for writing", path);
        return EXIT_RUNTIME;
    }
    fprintf(f, "id,n,level_index,level,p,outcome,epochs,y_n,y_final\n");
    slaq_lcurve_opts base = *model;
    slaq_lcurve_bound_metric(&base, set->metric_name, set->maximize);
    for (int half = 0; half < 2; half++) {
        struct calib_acc a = {0};
        if (calib_half(set, half, &base, b, best, levels, nl, &a, NULL, f) < 0) {
            fclose(f);
            return EXIT_RUNTIME;
        }
        double rate = 0;
        for (int k = 0; k < 10; k++)
            rate += a.bin_o[k];
        rate /= a.n;
        printf("%s ids: library default Brier %.4f, ECE %.4f, %.0f "
               "predictions; base rate %.3f: Brier %.4f\n",
               half ? "odd" : "even", a.brier / a.n, calib_ece(&a), a.n, rate,
               rate * (1 - rate));
    }
    fclose(f);
    printf("predictions written to %s\n", path);
    return 0;
}

/* The chance that a configuration that reaches `target` scores above one
 * that does not (ties count half): the area under the ROC curve of the
 * score, 0.5 for a score that tells nothing. NaN without both kinds. */
static double calib_auc(const double *score, const int *hit, size_t n)
{
    double above = 0, pairs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n && hit[i]; j++)
            if (!hit[j]) {
                above += score[i] > score[j] ? 1 : score[i] == score[j] ? 0.5 : 0;
                pairs++;
            }
    return pairs > 0 ? above / pairs : NAN;
}

#define CALIB_DISC_POINTS 4

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

#define CALIB_DISC_RANKS 8

struct calib_disc {
    int n, reach, total;
    double auc_model, auc_best;
    /* Where the first CALIB_DISC_RANKS that will reach the target rank
     * among the total by their best so far (1 = the highest), ascending. */
    int rank[CALIB_DISC_RANKS], nrank;
};

/*
 * Discrimination at the target, at the first CALIB_DISC_POINTS evaluation
 * points n = b, 2b, ...: over every configuration that has run n epochs
 * and not yet reached the target, how well the model's P(reaching the
 * target by the last epoch) ranks those that will reach it above those
 * that will not, against the plain ranking by the best metric so far.
 * Calibration (Brier, reliability) scores every prediction; this is the
 * question POP asks at its first boundaries: which of these to run.
 */
static int calib_discrimination(const sweep_set *set, int b,
                                const slaq_lcurve_opts *o, double target,
                                struct calib_disc *out)
{
    slaq_lcurve *lc = slaq_lcurve_new(o);
    double *y = malloc((size_t)set->epochs * sizeof *y);
    double *pm = malloc(set->n * sizeof *pm), *pb = malloc(set->n * sizeof *pb);
    int *hit = malloc(set->n * sizeof *hit);
    int rc = -1;
    if (!lc || !y || !pm || !pb || !hit)
        goto out;
    double sign = set->maximize ? 1 : -1;
    for (int k = 0; k < CALIB_DISC_POINTS; k++) {
        int n = b * (k + 1);
        size_t m = 0;
        for (size_t i = 0; i < set->n && n < set->epochs; i++) {
            const sweep_trace *t = &set->v[i];
            if (t->n < (size_t)n)
                continue;
            for (size_t e = 0; e < t->n; e++)
                y[e] = e ? fmax(sign * t->metric[e], y[e - 1]) : sign * t->metric[e];
            if (y[n - 1] >= sign * target || slaq_lcurve_fit(lc, y, (size_t)n) < 0)
                continue;
            double p = slaq_lcurve_prob(lc, set->epochs, sign * target);
            if (!isfinite(p))
                continue;
            pm[m] = p;
            pb[m] = y[n - 1];
            hit[m++] = y[t->n - 1] >= sign * target;
        }
        out[k] = (struct calib_disc){.n = n, .total = (int)m};
        for (size_t i = 0; i < m; i++)
            out[k].reach += hit[i];
        out[k].auc_model = calib_auc(pm, hit, m);
        out[k].auc_best = calib_auc(pb, hit, m);
        for (size_t i = 0; i < m && out[k].nrank < CALIB_DISC_RANKS; i++) {
            if (!hit[i])
                continue;
            int r = 1;
            for (size_t j = 0; j < m; j++)
                r += pb[j] > pb[i];
            out[k].rank[out[k].nrank++] = r;
        }
        qsort(out[k].rank, (size_t)out[k].nrank, sizeof *out[k].rank, int_cmp);
    }
    rc = 0;
out:
    slaq_lcurve_free(lc);
    free(y);
    free(pm);
    free(pb);
    free(hit);
    return rc;
}

/* What sw_calib measures on the held-out half, for its table and JSON. */
struct calib_report {
    slaq_lcurve_opts base;    /* the library default (as the options say) */
    slaq_lcurve_opts chosen;  /* the grid's best on the even half */
    struct calib_acc plain;   /* odd half: the library default */
    struct calib_acc test;    /* odd half: the chosen weights */
    struct calib_acc flat;    /* odd half: without the stopped hypothesis */
    double rate, brier_base;  /* the outcomes' mean and its Brier score */
    struct calib_speed sp;    /* the library default's times; owns cpu, wall */
    struct calib_disc disc[CALIB_DISC_POINTS];
    int reach, near;          /* reach the target; end within noise of it */
    double noise;
};

/* The levels scored: quantiles of the final metric, so that both likely
 * and unlikely events are scored, then the target. Fills levels[0..4];
 * returns how many, or -1 out of memory. */
static int calib_levels(const sweep_set *set, double target, double *levels)
{
    int nl = 0;
    double *fin = malloc(set->n * sizeof *fin);
    if (!fin)
        return -1;
    for (size_t i = 0; i < set->n; i++)
        fin[i] = set->v[i].metric[set->v[i].n - 1];
    qsort(fin, set->n, sizeof *fin, sw_cmp);
    const double qs[] = {0.25, 0.5, 0.75, 0.9};
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++)
        levels[nl++] = sw_quant(fin, set->n, qs[q]);
    levels[nl++] = target;
    free(fin);
    return nl;
}

/* Prints what is measured on which curves, and the levels. */
static void calib_print_header(const sweep_set *set, int b, int best,
                               const slaq_lcurve_opts *base,
                               const double *levels, int nl)
{
    printf("calibration of the curve model on %s (%zu configurations, "
           "evaluated every %d epochs, final epoch %d), %s%s\n", set->name,
           set->n, b, set->epochs,
           best ? "best-so-far curves (POP): P(reaching the level by the "
                  "last epoch)"
                : "raw curves (EarlyTerm): P(y(last epoch) >= level)",
           base->has_upper ? "; the metric is bounded by 1" : "");
    printf("levels:");
    for (int l = 0; l < nl; l++)
        printf(" %.4f", levels[l]);
    printf("\n");
}

/* The family weights' temperature (1 = BIC, inf = equal) and the
 * parameter-uncertainty factor with the lowest Brier score on the even
 * half, one table row per pair: *chosen is base with them (base itself
 * when no pair scores). Returns 0, or -1 out of memory. */
static int calib_choose(const sweep_set *set, int b, int best,
                        const double *levels, int nl,
                        const slaq_lcurve_opts *base, slaq_lcurve_opts *chosen)
{
    const double tgrid[] = {1, 4, 8, 16, 64, INFINITY};
    const double igrid[] = {0.5, 2, 8, 32};
    size_t nt = sizeof tgrid / sizeof *tgrid, ni = sizeof igrid / sizeof *igrid;
    double bestb = INFINITY;
    char tb[32];
    *chosen = *base;
    printf("\nchoosing the weights' temperature (T=1: BIC, equal: T=inf) "
           "and inflate on the even half:\n"
           "  weights inflate  brier   ece     n\n");
    for (size_t t = 0; t < nt; t++)
        for (size_t g = 0; g < ni; g++) {
            struct calib_acc a = {0};
            slaq_lcurve_opts o = *base;
            o.temper = tgrid[t];
            o.inflate = igrid[g];
            if (calib_half(set, 0, &o, b, best, levels, nl, &a, NULL, NULL) < 0)
                return -1;
            double br = a.n ? a.brier / a.n : NAN;
            printf("  %-7s %7.2f  %.4f  %.4f  %.0f\n",
                   calib_temper_name(tgrid[t], tb, sizeof tb), igrid[g], br,
                   calib_ece(&a), a.n);
            if (br < bestb) {
                bestb = br;
                *chosen = o;
            }
        }
    return 0;
}

/* Scores r->chosen, the model without the stopped hypothesis and r->base
 * (timed, into r->sp) on the odd half, and the base rate. Returns 0, or
 * -1 out of memory (r->sp then freed). */
static int calib_heldout(const sweep_set *set, int b, int best,
                         const double *levels, int nl, struct calib_report *r)
{
    slaq_lcurve_opts nostall = r->base;
    nostall.no_stall = 1;
    size_t cap = set->n * (size_t)(set->epochs / b + 1);
    r->sp = (struct calib_speed){malloc(cap * sizeof(double)),
                                 malloc(cap * sizeof(double)), 0, cap};
    if (!r->sp.cpu || !r->sp.wall ||
        calib_half(set, 1, &r->chosen, b, best, levels, nl, &r->test, NULL,
                   NULL) < 0 ||
        calib_half(set, 1, &nostall, b, best, levels, nl, &r->flat, NULL,
                   NULL) < 0 ||
        calib_half(set, 1, &r->base, b, best, levels, nl, &r->plain, &r->sp,
                   NULL) < 0) {
        free(r->sp.cpu);
        free(r->sp.wall);
        return -1;
    }
    /* Base rate: the Brier score of always predicting the outcomes' mean. */
    double rate = 0;
    for (int k = 0; k < 10; k++)
        rate += r->test.bin_o[k];
    rate /= r->test.n;
    r->rate = rate;
    r->brier_base = rate * (1 - rate);
    return 0;
}

/* Prints the held-out scores and the reliability bins. */
static void calib_print_heldout(const struct calib_report *r)
{
    char tb[32];
    printf("\nheld-out odd half:\n"
           "  library default (T=%g, inflate %.2f, %s): Brier %.4f, "
           "ECE %.4f, %.0f predictions\n",
           (double)SLAQ_LCURVE_TEMPER_DEFAULT,
           (double)SLAQ_LCURVE_INFLATE_DEFAULT,
           r->base.no_stall ? "no stopped hypothesis" : "stopped hypothesis",
           r->plain.brier / r->plain.n,
           calib_ece(&r->plain), r->plain.n);
    printf("  chosen on the even half (%s, inflate %.2f): Brier %.4f, "
           "ECE %.4f\n",
           calib_temper_name(r->chosen.temper, tb, sizeof tb),
           r->chosen.inflate, r->test.brier / r->test.n, calib_ece(&r->test));
    printf("  without the stopped hypothesis (--no-stall): Brier %.4f, "
           "ECE %.4f\n", r->flat.brier / r->flat.n, calib_ece(&r->flat));
    printf("  always the base rate %.3f: Brier %.4f\n", r->rate,
           r->brier_base);
    printf("library default, ");
    calib_bins(&r->plain);
    printf("chosen, ");
    calib_bins(&r->test);
}

/* Prints the discrimination table (calib_discrimination's). */
static void calib_print_disc(const struct calib_disc *disc, double target)
{
    printf("discrimination at the target %.4f (the model as given: library "
           "default unless model options are given; every "
           "configuration not yet there; AUC: the chance that one that will "
           "reach it ranks above one that will not, 0.5 = no information; "
           "ranks: where those that will reach it stand by their best so "
           "far):\n"
           "  epoch  reach  total  model_p  best_so_far  ranks\n", target);
    for (int k = 0; k < CALIB_DISC_POINTS; k++) {
        printf("  %5d  %5d  %5d  %7.3f  %11.3f ", disc[k].n, disc[k].reach,
               disc[k].total, disc[k].auc_model, disc[k].auc_best);
        for (int r = 0; r < disc[k].nrank; r++)
            printf(" %d", disc[k].rank[r]);
        printf("\n");
    }
}

/* How many miss the target by less than the metric's noise: for them,
 * reaching it or not is decided within the noise the model assumes.
 * Counts them into r and prints the line. */
static void calib_near_target(const sweep_set *set, double target,
                              struct calib_report *r)
{
    int reach = 0, near = 0;
    double noise = SLAQ_LCURVE_SIGMA_MIN_DEFAULT;
    for (size_t i = 0; i < set->n; i++) {
        double top = -INFINITY, sign = set->maximize ? 1 : -1;
        for (size_t e = 0; e < set->v[i].n; e++)
            top = fmax(top, sign * set->v[i].metric[e]);
        reach += top >= sign * target;
        near += top < sign * target && top >= sign * target - noise;
    }
    printf("near the target: %d configurations reach it, %d more end less "
           "than %g (the model's noise floor) short of it\n", reach, near,
           noise);
    r->reach = reach;
    r->near = near;
    r->noise = noise;
}

/* Sorts the times of r->sp and prints their quantiles. */
static void calib_print_speed(struct calib_report *r, int nl)
{
    double *ms = r->sp.cpu;
    size_t nms = r->sp.n;
    qsort(r->sp.cpu, r->sp.n, sizeof *r->sp.cpu, sw_cmp);
    qsort(r->sp.wall, r->sp.n, sizeof *r->sp.wall, sw_cmp);
    printf("speed (library default; per configuration per evaluation: one fit "
           "and P(y(n+m) >= target) for every remaining epoch m, plus %d "
           "levels): CPU median %.2f ms, p95 %.2f ms, max %.2f ms; wall "
           "median %.2f ms, max %.2f ms; over %zu evaluations\n",
           nl, sw_quant(ms, nms, 0.5), sw_quant(ms, nms, 0.95),
           nms ? ms[nms - 1] : NAN, sw_quant(r->sp.wall, nms, 0.5),
           nms ? r->sp.wall[nms - 1] : NAN, nms);
}

/* Writes the report as one JSON object (--json); r->sp sorted. */
static void calib_json(FILE *js, const sweep_set *set, int best,
                       const struct calib_report *r)
{
    const double *ms = r->sp.cpu;
    size_t nms = r->sp.n;
    fprintf(js, "{\"sweep\":\"%s\",\"curve\":\"%s\",\"bounded\":%d,"
                "\"default\":{\"temper\":%g,\"inflate\":%g,"
                "\"stall\":%d,\"brier\":%.6f,\"ece\":%.6f,\"n\":%.0f,"
                "\"bins\":",
            set->name, best ? "best" : "raw", r->base.has_upper,
            (double)SLAQ_LCURVE_TEMPER_DEFAULT,
            (double)SLAQ_LCURVE_INFLATE_DEFAULT, !r->base.no_stall,
            r->plain.brier / r->plain.n,
            calib_ece(&r->plain), r->plain.n);
    calib_bins_json(js, &r->plain);
    fprintf(js, "},\"chosen\":{\"temper\":%g,\"inflate\":%g,"
                "\"brier\":%.6f,\"ece\":%.6f,\"n\":%.0f,\"bins\":",
            isinf(r->chosen.temper) ? -1 : r->chosen.temper,
            r->chosen.inflate, r->test.brier / r->test.n,
            calib_ece(&r->test), r->test.n);
    calib_bins_json(js, &r->test);
    fprintf(js, "},\"no_stall\":{\"brier\":%.6f,\"ece\":%.6f,"
                "\"n\":%.0f,\"bins\":",
            r->flat.brier / r->flat.n, calib_ece(&r->flat), r->flat.n);
    calib_bins_json(js, &r->flat);
    fprintf(js, "},\"discrimination\":[");
    for (int k = 0; k < CALIB_DISC_POINTS; k++) {
        const struct calib_disc *d = &r->disc[k];
        fprintf(js, "%s{\"epoch\":%d,\"reach\":%d,\"total\":%d,"
                    "\"ranks\":[",
                k ? "," : "", d->n, d->reach, d->total);
        for (int i = 0; i < d->nrank; i++)
            fprintf(js, "%s%d", i ? "," : "", d->rank[i]);
        fprintf(js, "],");
        if (isfinite(d->auc_model) && isfinite(d->auc_best))
            fprintf(js, "\"auc_model\":%.6f,\"auc_best\":%.6f}",
                    d->auc_model, d->auc_best);
        else
            fprintf(js, "\"auc_model\":null,\"auc_best\":null}");
    }
    fprintf(js, "],\"near_target\":{\"reach\":%d,\"within_noise\":%d,"
                "\"noise\":%g}", r->reach, r->near, r->noise);
    fprintf(js, ",\"base_rate\":%.6f,\"brier_base_rate\":%.6f,"
                "\"ms_median\":%.3f,\"ms_p95\":%.3f,\"ms_max\":%.3f}\n",
            r->rate, r->brier_base, sw_quant(ms, nms, 0.5),
            sw_quant(ms, nms, 0.95), nms ? ms[nms - 1] : NAN);
}

/*
 * --calib: the curve model's calibration on one half of the traces with
 * its weights chosen on the other, its discrimination at the target and
 * its speed, printed (and as JSON to js when given); --calib-dump (dump
 * set): calib_dump's predictions instead. Returns 0 or EXIT_RUNTIME.
 */
static int sw_calib(const sweep_set *set, int b, int best, double target,
                    FILE *js, const char *dump, const slaq_lcurve_opts *model)
{
    double levels[8];
    int nl = calib_levels(set, target, levels);
    if (nl < 0)
        return EXIT_RUNTIME;
    if (dump)
        return calib_dump(set, b, best, levels, nl, dump, model);

    struct calib_report r = {
        .base = {.stop_prior = model->stop_prior,
                 .stall_tol = model->stall_tol, .no_stall = model->no_stall}};
    slaq_lcurve_bound_metric(&r.base, set->metric_name, set->maximize);
    calib_print_header(set, b, best, &r.base, levels, nl);
    if (calib_choose(set, b, best, levels, nl, &r.base, &r.chosen) < 0 ||
        calib_heldout(set, b, best, levels, nl, &r) < 0)
        return EXIT_RUNTIME;
    calib_print_heldout(&r);
    slaq_lcurve_opts given = r.base; /* the library default, or as given */
    given.temper = model->temper;
    given.inflate = model->inflate;
    if (calib_discrimination(set, b, &given, target, r.disc) < 0) {
        free(r.sp.cpu);
        free(r.sp.wall);
        return EXIT_RUNTIME;
    }
    calib_print_disc(r.disc, target);
    calib_near_target(set, target, &r);
    calib_print_speed(&r, nl);
    if (js)
        calib_json(js, set, best, &r);
    free(r.sp.cpu);
    free(r.sp.wall);
    return 0;
}

/* ----------------------------------------------------------------- main */

static const struct option sw_options[] = {
    {"sweep", required_argument, NULL, 'w'},
    {"slots", required_argument, NULL, 's'},
    {"policy", required_argument, NULL, 'p'},
    {"orders", required_argument, NULL, 'o'},
    {"seed", required_argument, NULL, 'e'},
    {"target", required_argument, NULL, 't'},
    {"target-top", required_argument, NULL, 'K'},
    {"kill-threshold", required_argument, NULL, 'k'},
    {"t-max", required_argument, NULL, 'T'},
    {"b", required_argument, NULL, 'b'},
    {"reeval", required_argument, NULL, 'E'},
    {"inflate", required_argument, NULL, 'i'},
    {"temper", required_argument, NULL, 'M'},
    {"stop-prior", required_argument, NULL, 'P'},
    {"stall-tol", required_argument, NULL, 'L'},
    {"no-stall", no_argument, NULL, 'N'},
    {"suspend-cost", required_argument, NULL, 'S'},
    {"resume-cost", required_argument, NULL, 'R'},
    {"start-scale", required_argument, NULL, 'A'},
    {"orders-out", required_argument, NULL, 'O'},
    {"json", required_argument, NULL, 'j'},
    {"trace", required_argument, NULL, 'r'},
    {"trace-order", required_argument, NULL, 'q'},
    {"calib", no_argument, NULL, 'c'},
    {"calib-dump", required_argument, NULL, 'D'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The options of `slaq sim --sweep`, as given or by default. */
typedef struct sw_args {
    const char *path, *policies, *orders_out, *json, *trace, *dump;
    long slots, norders, seed, top, b, trace_order;
    double target, kill, tmax, inflate, temper;
    double stop_prior, stall_tol, reeval;
    int no_stall;
    double suspend_s, resume_s, start_scale;
    int calib;
} sw_args;

/* Whether option c takes a number (every option but these). */
static int sw_numeric(int c)
{
    return c != 'w' && c != 'p' && c != 'O' && c != 'j' && c != 'r' &&
           c != 'c' && c != 'D' && c != 'N' && c != 'h' && c != '?';
}

/* Reads argv into *a and checks the ranges. Returns 0 to go on, -1 once
 * --help is printed (exit 0), or EXIT_USAGE once the error is printed. */
static int sw_parse(int argc, char **argv, sw_args *a)
{
    *a = (sw_args){.policies = "pop,bandit,earlyterm,default,hyperband",
                   .slots = 4, .norders = 25, .seed = 1, .top = 4,
                   .trace_order = -1, .target = NAN, .kill = NAN,
                   .suspend_s = 0.01, .resume_s = 0.01, .start_scale = 1};
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", sw_options, NULL)) != -1) {
        double v = 0;
        long l = 0;
        if (sw_numeric(c)) {
            v = strtod(optarg, &end);
            if (end == optarg || *end || !isfinite(v)) {
                const char *name = "?";
                for (const struct option *q = sw_options; q->name; q++)
                    if (q->val == c)
                        name = q->name;
                cli_error("sim", "--%s '%s': expected a number", name, optarg);
                return EXIT_USAGE;
            }
            l = (long)v;
        }
        switch (c) {
        case 'w': a->path = optarg; break;
        case 's': a->slots = l; break;
        case 'p': a->policies = optarg; break;
        case 'o': a->norders = l; break;
        case 'e': a->seed = l; break;
        case 't': a->target = v; break;
        case 'K': a->top = l; break;
        case 'k': a->kill = v; break;
        case 'T': a->tmax = v; break;
        case 'b': a->b = l; break;
        case 'E': a->reeval = v; break;
        case 'i': a->inflate = v; break;
        case 'M': a->temper = v; break;
        case 'P': a->stop_prior = v; break;
        case 'L': a->stall_tol = v; break;
        case 'N': a->no_stall = 1; break;
        case 'S': a->suspend_s = v; break;
        case 'R': a->resume_s = v; break;
        case 'A': a->start_scale = v; break;
        case 'O': a->orders_out = optarg; break;
        case 'j': a->json = optarg; break;
        case 'r': a->trace = optarg; break;
        case 'q': a->trace_order = l; break;
        case 'c': a->calib = 1; break;
        case 'D': a->calib = 1; a->dump = optarg; break;
        case 'h': sw_usage(stdout); return -1;
        default: sw_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc || !a->path) {
        cli_error("sim", optind < argc ? "unexpected argument '%s'"
                                       : "--sweep TRACES is required%s",
                  optind < argc ? argv[optind] : "");
        return EXIT_USAGE;
    }
    if (a->slots < 1 || a->slots > 100000 || a->norders < 1 ||
        a->norders > 100000 || a->top < 1 || a->b < 0 || a->inflate < 0 ||
        a->temper < 0 || a->suspend_s < 0 || a->resume_s < 0 ||
        a->stop_prior < 0 || a->stop_prior >= 1 || a->stall_tol < 0 ||
        a->tmax < 0 || a->seed < 0 || a->start_scale < 0 ||
        a->trace_order < -1 || a->trace_order >= a->norders) {
        cli_error("sim", "--slots, --orders and --target-top must be >= 1; "
                         "--b, --inflate, --temper, --stall-tol, --t-max, --seed and the "
                         "costs >= 0; --stop-prior in [0, 1); --trace-order in 0..orders-1");
        return EXIT_USAGE;
    }
    return 0;
}

/* The default budget: Default's time for all configurations on the
 * slots (the total work, start-ups scaled, over the slots). */
static double sw_default_tmax(const sweep_set *set, const sw_args *a)
{
    double work = 0;
    for (size_t i = 0; i < set->n; i++) {
        work += a->start_scale * set->v[i].start_s;
        for (size_t e = 0; e < set->v[i].n; e++)
            work += set->v[i].epoch_s[e];
    }
    return work / (double)a->slots;
}

/* Splits list (modified) at its commas into names[0..*np). Returns 0, or
 * EXIT_USAGE once the error is printed (more than SW_MAX_POLICIES). */
static int sw_policy_names(char *list, const char **names, int *np)
{
    char *save = NULL;
    *np = 0;
    for (char *t = list ? strtok_r(list, ",", &save) : NULL; t;
         t = strtok_r(NULL, ",", &save)) {
        if (*np == SW_MAX_POLICIES) {
            cli_error("sim", "--policy: at most %d policies", SW_MAX_POLICIES);
            return EXIT_USAGE;
        }
        names[(*np)++] = t;
    }
    return 0;
}

/* Writes the orders as JSON, by configuration id, for other harnesses
 * (--orders-out). Returns 0, or -1 once the error is printed. */
static int sw_write_orders(const char *path, const sweep_set *set,
                           size_t **orders, long norders, long seed)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("sim", "%s: cannot open for writing", path);
        return -1;
    }
    fprintf(f, "{\"sweep\":\"%s\",\"seed\":%ld,\"orders\":[", set->name, seed);
    for (long k = 0; k < norders; k++) {
        fprintf(f, "%s[", k ? "," : "");
        for (size_t i = 0; i < set->n; i++)
            fprintf(f, "%s%d", i ? "," : "", set->v[orders[k][i]].id);
        fprintf(f, "]");
    }
    fprintf(f, "]}\n");
    fclose(f);
    return 0;
}

/* The parameters every policy shares, from the options and the traces. */
static void sw_config(sweep_sim_config *cfg, const sw_args *a,
                      const sweep_set *set, double tmax)
{
    *cfg = (sweep_sim_config){.suspend_s = a->suspend_s,
                              .resume_s = a->resume_s,
                              .start_scale = a->start_scale};
    slaq_sweep_params_init(&cfg->prm, (size_t)a->slots, set->epochs);
    cfg->prm.y_target = a->target;
    cfg->prm.maximize = set->maximize;
    cfg->prm.t_max = tmax;
    cfg->prm.kill_threshold = a->kill;
    cfg->prm.b = (int)a->b;
    cfg->prm.reeval = a->reeval;
    cfg->prm.lcurve.inflate = a->inflate;
    cfg->prm.lcurve.temper = a->temper;
    cfg->prm.lcurve.stop_prior = a->stop_prior;
    cfg->prm.lcurve.stall_tol = a->stall_tol;
    cfg->prm.lcurve.no_stall = a->no_stall;
    slaq_lcurve_bound_metric(&cfg->prm.lcurve, set->metric_name,
                             set->maximize);
}

/* Prints the run's line and the table's header. */
static void sw_print_header(const sweep_set *set, const sw_args *a,
                            double tmax)
{
    printf("sweep %s: %zu configurations, %d epochs, %ld slots, target %s %s "
           "%.4f, T_max %.1f s, suspend %.2f s, resume %.2f s, start-up x%g, "
           "%ld orders\n",
           set->name, set->n, set->epochs, a->slots, set->metric_name,
           set->maximize ? ">=" : "<=", a->target, tmax, a->suspend_s,
           a->resume_s, a->start_scale, a->norders);
    printf("%-16s %7s %9s %9s %9s %9s %9s %8s %6s %6s\n", "policy", "reached",
           "median_s", "mean_s", "min_s", "max_s", "spread_s", "epochs",
           "kills", "susp");
}

/* Opens the JSON result: the run's parameters and the bounds (bound, of
 * any order; bounds[k], of order k), up to the policies' object. */
static void sw_json_head(FILE *js, const sweep_set *set, const sw_args *a,
                         double tmax, double bound, int bound_id,
                         int bound_epoch, const double *bounds)
{
    fprintf(js, "{\"sweep\":\"%s\",\"target\":%.6f,\"slots\":%ld,"
                "\"t_max\":%.3f,\"suspend_s\":%g,\"resume_s\":%g,"
                "\"start_scale\":%g,",
            set->name, a->target, a->slots, tmax, a->suspend_s, a->resume_s,
            a->start_scale);
    if (isfinite(bound)) {
        fprintf(js, "\"bound\":{\"time_s\":%.3f,\"id\":%d,\"epoch\":%d,"
                    "\"orders\":[",
                bound, bound_id, bound_epoch);
        for (long k = 0; k < a->norders; k++)
            fprintf(js, "%s%.3f", k ? "," : "", bounds[k]);
        fprintf(js, "]},");
    } else {
        fprintf(js, "\"bound\":null,");
    }
    fprintf(js, "\"policies\":{");
}

/* Runs policy p (cfg->policy) in every order, tracing to trf (only order
 * a->trace_order, if one), and prints its row; its runs as JSON to js.
 * times has a->norders places. Returns 0, or EXIT_USAGE once the error
 * is printed. */
static int sw_run_policy(const sweep_set *set, const sw_args *a,
                         sweep_sim_config *cfg, int p, size_t **orders,
                         double *times, FILE *js, FILE *trf)
{
    long norders = a->norders;
    long reached = 0, epochs = 0, kills = 0, susp = 0;
    char err[512];
    if (js)
        fprintf(js, "%s\"%s\":[", p ? "," : "", cfg->policy);
    for (long k = 0; k < norders; k++) {
        sweep_sim_result r;
        cfg->trace = trf && (a->trace_order < 0 || a->trace_order == k)
                         ? trf : NULL;
        cfg->trace_order = (int)k;
        if (sweep_sim_run(set, orders[k], set->n, cfg, &r, err,
                          sizeof err) < 0) {
            cli_error("sim", "%s", err);
            return EXIT_USAGE;
        }
        times[k] = r.time_to_target;
        reached += isfinite(r.time_to_target);
        epochs += r.epochs;
        kills += r.kills;
        susp += r.suspends;
        if (js)
            fprintf(js, "%s{\"order\":%ld,\"time_to_target\":%s%.3f%s,"
                        "\"winner\":%d,\"makespan\":%.3f,\"epochs\":%ld,"
                        "\"kills\":%ld,\"suspends\":%ld,\"resumes\":%ld}",
                    k ? "," : "", k, isfinite(r.time_to_target) ? "" : "\"",
                    isfinite(r.time_to_target) ? r.time_to_target : INFINITY,
                    isfinite(r.time_to_target) ? "" : "\"",
                    r.winner >= 0 ? set->v[r.winner].id : -1, r.makespan,
                    r.epochs, r.kills, r.suspends, r.resumes);
    }
    if (js)
        fprintf(js, "]");
    /* Unreached orders count as infinitely late in the statistics. */
    qsort(times, (size_t)norders, sizeof *times, sw_cmp);
    double mean = 0;
    for (long k = 0; k < norders; k++)
        mean += times[k] / (double)norders;
    printf("%-16s %4ld/%-3ld %9.2f %9.2f %9.2f %9.2f %9.2f %8.0f %6.1f %6.1f\n",
           cfg->policy, reached, norders,
           sw_quant(times, (size_t)norders, 0.5), mean, times[0],
           times[norders - 1], sw_spread(times, (size_t)norders),
           (double)epochs / (double)norders, (double)kills / (double)norders,
           (double)susp / (double)norders);
    return 0;
}

/* Prints the bounds' row and what they mean (bounds[] gets sorted). */
static void sw_print_bound(double bound, int bound_id, int bound_epoch,
                           double *bounds, long norders)
{
    if (!isfinite(bound)) {
        printf("bound: no configuration reaches the target\n");
        return;
    }
    /* In each order, no in-order policy reaches the target sooner. */
    qsort(bounds, (size_t)norders, sizeof *bounds, sw_cmp);
    double mean = 0;
    for (long k = 0; k < norders; k++)
        mean += bounds[k] / (double)norders;
    printf("%-16s %4ld/%-3ld %9.2f %9.2f %9.2f %9.2f %9.2f %8s %6s %6s\n",
           "bound", norders, norders, sw_quant(bounds, (size_t)norders, 0.5),
           mean, bounds[0], bounds[norders - 1],
           sw_spread(bounds, (size_t)norders), "-", "-", "-");
    printf("bound: in each order, no policy that starts configurations in "
           "that order reaches the target sooner (the row above); in any "
           "order, none before %.2f s (configuration %d alone from t = 0, "
           "to epoch %d)\n",
           bound, bound_id, bound_epoch);
}

/*
 * The replay: every policy of a->policies in a->norders orders of the
 * configurations, a row each, then the lower bounds; JSON to js, the
 * decisions to trf, when open. Returns 0, EXIT_USAGE (the error printed)
 * or EXIT_RUNTIME (out of memory, or the error printed).
 */
static int sw_replay(const sweep_set *set, const sw_args *a, FILE *js,
                     FILE *trf)
{
    long norders = a->norders;
    double tmax = a->tmax == 0 ? sw_default_tmax(set, a) : a->tmax;
    char *list = strdup(a->policies);
    const char *names[SW_MAX_POLICIES];
    int np;
    if (sw_policy_names(list, names, &np)) {
        free(list);
        return EXIT_USAGE;
    }
    size_t **orders = calloc((size_t)norders, sizeof *orders);
    double *times = malloc((size_t)norders * sizeof *times);
    double *bounds = malloc((size_t)norders * sizeof *bounds);
    int rc = EXIT_RUNTIME;
    char err[512];
    if (!list || !orders || !times || !bounds)
        goto out;
    for (long k = 0; k < norders; k++) {
        orders[k] = malloc(set->n * sizeof **orders);
        if (!orders[k])
            goto out;
        sweep_sim_order(orders[k], set->n, (unsigned long)a->seed, (int)k);
    }
    if (a->orders_out &&
        sw_write_orders(a->orders_out, set, orders, norders, a->seed) < 0)
        goto out;
    /* Every policy shares the parameters; each name is checked before
     * any runs. */
    sweep_sim_config cfg;
    sw_config(&cfg, a, set, tmax);
    for (int p = 0; p < np; p++) {
        cfg.policy = names[p];
        if (sweep_sim_check(&cfg, set->n, err, sizeof err) < 0) {
            cli_error("sim", "--policy: %s", err);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    sw_print_header(set, a, tmax);
    /* The bounds: any policy's, and each order's for in-order policies. */
    int bound_id, bound_epoch;
    double bound = sweep_sim_bound(set, NULL, set->n, (size_t)a->slots,
                                   a->target, set->maximize, a->start_scale,
                                   &bound_id, &bound_epoch);
    for (long k = 0; k < norders; k++) {
        int id, ep;
        bounds[k] = sweep_sim_bound(set, orders[k], set->n, (size_t)a->slots,
                                    a->target, set->maximize, a->start_scale,
                                    &id, &ep);
        if (bounds[k] < 0) {
            cli_error("sim", "out of memory");
            goto out;
        }
    }
    if (js)
        sw_json_head(js, set, a, tmax, bound, bound_id, bound_epoch, bounds);
    for (int p = 0; p < np; p++) {
        cfg.policy = names[p];
        rc = sw_run_policy(set, a, &cfg, p, orders, times, js, trf);
        if (rc)
            goto out;
    }
    sw_print_bound(bound, bound_id, bound_epoch, bounds, norders);
    if (js)
        fprintf(js, "}}\n");
    rc = 0;
out:
    for (long k = 0; orders && k < norders; k++)
        free(orders[k]);
    free(orders);
    free(times);
    free(bounds);
    free(list);
    return rc;
}

int cmd_sim_sweep(int argc, char **argv)
{
    sw_args a;
    int rc = sw_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char err[512];
    sweep_set set;
    if (sweeps_load(a.path, &set, err, sizeof err) < 0) {
        cli_error("sim", "%s", err);
        return EXIT_USAGE;
    }
    if (isnan(a.target))
        a.target = sw_target_top(&set, (int)a.top);
    FILE *js = NULL, *trf = NULL;
    if (a.json && !(js = fopen(a.json, "w"))) {
        cli_error("sim", "%s: cannot open for writing", a.json);
        sweeps_free(&set);
        return EXIT_RUNTIME;
    }
    if (a.trace && !(trf = fopen(a.trace, "w"))) {
        cli_error("sim", "%s: cannot open for writing", a.trace);
        if (js)
            fclose(js);
        sweeps_free(&set);
        return EXIT_RUNTIME;
    }
    if (a.calib) {
        slaq_lcurve_opts model = {.inflate = a.inflate, .temper = a.temper,
                                  .stop_prior = a.stop_prior,
                                  .stall_tol = a.stall_tol,
                                  .no_stall = a.no_stall};
        rc = sw_calib(&set, a.b ? (int)a.b : 10, 1, a.target, js, a.dump,
                      &model);
    } else {
        rc = sw_replay(&set, &a, js, trf);
    }
    if (js)
        fclose(js);
    if (trf && fclose(trf) != 0 && rc == 0) {
        cli_error("sim", "%s: write failed", a.trace);
        rc = EXIT_RUNTIME;
    }
    sweeps_free(&set);
    return rc;
}
