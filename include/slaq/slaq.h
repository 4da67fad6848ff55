/*
 * slaq.h — the public API of libslaq, slaq's scheduling core.
 *
 * libslaq decides how many cores each iterative training job gets for the
 * next scheduling epoch. It keeps a bounded history of every job's reported
 * iterations (loss, CPU time, samples), predicts from it how fast the job
 * runs and how much its loss will fall, and divides the cores with a policy:
 * `fair` shares, or `slaq`, which gives cores to the jobs whose predicted
 * normalised loss reduction over the next epoch is largest (SLAQ, SoCC'17,
 * Algorithm 1).
 *
 * The library is pure: it does no I/O, reads no clock and has no global
 * state. Time is always a parameter (seconds on a clock the caller chooses:
 * real time in slaqd, virtual time in the simulator). Once a scheduler has
 * seen its largest job count, an epoch allocates no memory.
 *
 * Layers, bottom up, each usable on its own:
 *   slaq_history    one job's recent iterations plus cumulative statistics
 *   slaq_runtime    CPU time per iteration, c·S, learnt online
 *   slaq_predictor  fits a loss curve to a history -> slaq_forecast
 *   slaq_allocate   a policy: forecasts + capacity -> cores per job
 *   slaq_tokens     the token bucket that turns an allocation into CPU time
 *   slaq_sched      all of the above for a set of jobs; slaq_sched_epoch()
 *                   is the one call slaqd and the simulator make each epoch.
 *   settings.h      the table of slaq_sched_config's user settings: names,
 *                   ranges, defaults, help; parsed and printed by name.
 *
 * Errors are negative integers (SLAQ_E*); slaq_strerror() names them.
 * Full documentation: docs/libslaq.md.
 */
#ifndef SLAQ_SLAQ_H
#define SLAQ_SLAQ_H

#include <stddef.h>
#include <stdint.h>

#include "slaq/queue.h"
#include "slaq/scaling.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */

enum {
    SLAQ_OK = 0,
    SLAQ_EINVAL = -1,  /* an argument is outside its documented range */
    SLAQ_ENOMEM = -2,  /* allocation failed; nothing was changed */
    SLAQ_EORDER = -3,  /* iteration index not after the previous report's */
    SLAQ_ENODATA = -4, /* not enough history for what was asked */
};

/* A short English description of an error code; never NULL. */
const char *slaq_strerror(int err);

/* ----------------------------------------------------------------- history */

/*
 * One report from a job: the state after iteration `iter`. iter 0 is the
 * loss before any iteration (cpu_s and samples are then ignored). Reports
 * may skip iterations (a job reporting every 5th); cpu_s and samples then
 * cover all iterations since the previous report.
 */
typedef struct slaq_report {
    uint64_t iter;  /* iteration index k, strictly increasing per job */
    double loss;    /* the algorithm's own objective after iteration k */
    double cpu_s;   /* CPU-seconds (all threads) since the previous report */
    double samples; /* data size S processed since the previous report */
    double t;       /* when the report was made, on the caller's clock */
} slaq_report;

typedef struct slaq_history slaq_history;

/*
 * Creates an empty history that keeps the `window` most recent reports
 * (window >= 2; 0 selects SLAQ_DEFAULT_WINDOW) and cumulative statistics of
 * all of them. Returns NULL when out of memory or window == 1.
 */
#define SLAQ_DEFAULT_WINDOW 64
slaq_history *slaq_history_new(size_t window);
void slaq_history_free(slaq_history *h);
void slaq_history_clear(slaq_history *h);

/*
 * The largest |loss| a history accepts. Any real objective is far smaller;
 * the bound keeps every difference of two losses (and so max_delta and the
 * allocator's gains) finite, where ±1e308 would overflow to infinity and
 * turn a gain into NaN.
 */
#define SLAQ_LOSS_MAX 1e100

/*
 * Whether r's values may be taken: SLAQ_EINVAL if loss is not finite or
 * |loss| > SLAQ_LOSS_MAX, t is not finite, or (after iteration 0) cpu_s
 * or samples are negative or not finite; else SLAQ_OK. The one rule for
 * every report, whether it goes into a history or only into the record.
 */
int slaq_report_check(const slaq_report *r);

/*
 * Appends a report. Returns SLAQ_EINVAL if slaq_report_check refuses it,
 * SLAQ_EORDER if r->iter is not greater than the previous report's. The
 * history is unchanged on error.
 */
int slaq_history_add(slaq_history *h, const slaq_report *r);

size_t slaq_history_window(const slaq_history *h);
size_t slaq_history_len(const slaq_history *h);   /* reports in the window */
uint64_t slaq_history_total(const slaq_history *h); /* reports ever added */

/* The i-th report in the window, 0 = oldest kept. i must be < len. */
const slaq_report *slaq_history_at(const slaq_history *h, size_t i);
const slaq_report *slaq_history_last(const slaq_history *h); /* NULL if empty */

double slaq_history_first_loss(const slaq_history *h); /* NAN if empty */
double slaq_history_min_loss(const slaq_history *h);   /* NAN if empty */
double slaq_history_cpu_total(const slaq_history *h);
double slaq_history_samples_total(const slaq_history *h);

/*
 * Normalisation (SLAQ §4.1). The per-iteration loss change of a report is
 * ΔL = (L_prev − L) / (k − k_prev). max_delta is the largest ΔL seen so far
 * (only decreases count: a loss that rises never raises it); it is 0 until
 * the loss has fallen once. norm_delta(i) is the i-th report's ΔL divided by
 * max_delta (≤ 1, negative when the loss rose; NAN for i = 0, whose
 * predecessor is not kept, and while max_delta is 0). Because the maximum is "so far", a later
 * larger step re-scales the job: a first ΔL that is not the largest is fine.
 */
double slaq_history_max_delta(const slaq_history *h);
double slaq_history_norm_delta(const slaq_history *h, size_t i);

/* ----------------------------------------------------------------- runtime */

/*
 * Runtime predictor (SLAQ §4.2.1): an iteration costs c·S CPU-seconds, S the
 * samples it processes; with N cores it takes c·S / min(N, max_parallelism)
 * seconds. The cost c·S of each report is averaged with exponential
 * weights (recent iterations weigh more, so a job whose cost drifts is
 * followed); c and S are averaged too, for display, but their product is
 * not the prediction (the mean of a product is not the product of means).
 * Before the first report with CPU time, the cost of one iteration is the
 * documented default `default_iter_cpu_s` (SLAQ_DEFAULT_ITER_CPU_S). A job
 * that reports no samples is modelled with S = 1 per iteration.
 */
#define SLAQ_DEFAULT_ITER_CPU_S 1.0
typedef struct slaq_runtime {
    double cpu_per_sample;  /* c, CPU-seconds per sample (mean, for display) */
    double samples_per_iter;/* S (mean, for display) */
    double iter_cpu_s;      /* c·S: the mean of each report's product */
    double default_iter_cpu_s;
    uint64_t observed;      /* iterations with CPU time seen */
} slaq_runtime;

void slaq_runtime_init(slaq_runtime *rt, double default_iter_cpu_s);
/* Records `iters` iterations that used cpu_s CPU-seconds on `samples`. */
void slaq_runtime_observe(slaq_runtime *rt, double cpu_s, double samples,
                          double iters);
/* Predicted CPU-seconds of the next iteration, c·S (> 0). */
double slaq_runtime_iter_cpu(const slaq_runtime *rt);
/* Predicted wall seconds of the next iteration on `cores` cores, at most
 * `max_par` of which it can use (max_par <= 0: no limit). INFINITY if no
 * core is given. */
double slaq_runtime_iter_time(const slaq_runtime *rt, double cores,
                              double max_par);

/* -------------------------------------------------------------- predictors */

/*
 * `slaq-fit` solves with GSL. libslaq never changes GSL's error handler,
 * which is process-wide state; the data it hands GSL is valid by
 * construction, so the handler is not reached in normal operation. GSL's
 * default handler aborts (e.g. when GSL cannot allocate), so a program that
 * must not abort calls gsl_set_error_handler_off() once at start-up, as
 * slaq and slaqd do.
 */

typedef enum slaq_predictor_kind {
    SLAQ_PRED_STRAWMAN, /* repeat the last ΔL (the paper's baseline) */
    SLAQ_PRED_SLAQ_FIT, /* the paper's weighted fit of two curve families */
    SLAQ_PRED_AUTO,     /* slaq's default: model choice by held-out error
                           (docs/predictors.md has the evidence) */
    SLAQ_PRED_ORACLE,   /* handed the true curve (the simulator's
                           oracle-greedy reference; not an upper bound) */
} slaq_predictor_kind;

/* Parses "strawman", "slaq-fit", "auto", "oracle"; SLAQ_EINVAL otherwise. */
int slaq_predictor_parse(const char *name, slaq_predictor_kind *out);
const char *slaq_predictor_name(slaq_predictor_kind kind);

/* The curve families a forecast can hold; u = k − k0 (iterations after
 * the last report). */
typedef enum slaq_model {
    SLAQ_MODEL_LINEAR,   /* L = p0 − p1·u                   (strawman)  */
    SLAQ_MODEL_RATIONAL, /* L = 1/(p0·u² + p1·u + p2) + p3  (sublinear) */
    SLAQ_MODEL_EXP,      /* L = p1·p0^u + p2, 0 < p0 < 1    (linear+):
                            the paper's μ^(k−b) + c with p1 = μ^(−b)    */
    SLAQ_MODEL_TABLE,    /* L = table[k], linear between, last after    */
    SLAQ_MODEL_AQP,      /* an approximate query's progress metric on an
                            axis of CPU-seconds of work (ReLAQS; see
                            slaq_query_forecast below)                 */
} slaq_model;

/*
 * A forecast: a predicted loss curve in closed form, cheap to evaluate (the
 * allocator evaluates it once per unit handed out). The rational and
 * exponential families are fitted to losses rescaled to a range near 1;
 * their values are mapped back as L = yscale · model(u) + shift.
 */
typedef struct slaq_forecast {
    slaq_model model;
    double par[4];
    double yscale;       /* loss units per model unit (> 0) */
    double shift;        /* added after scaling */
    /* An optional second curve, blended in with weight `mix` (0: none):
     * L = (1 − mix)·first + mix·second. Not for SLAQ_MODEL_TABLE. */
    slaq_model model2;
    double par2[4];
    double yscale2, shift2;
    double mix;
    const double *table; /* SLAQ_MODEL_TABLE: the true curve, borrowed */
    size_t table_len;
    double k0;           /* iteration index of the last report */
    double loss0;        /* loss observed at k0 */
    double first_loss;   /* loss of the first report, L(0) */
    double final_loss;   /* predicted loss as k -> infinity */
    double scale;        /* normaliser: max_delta, or 1 before any decrease */
    double max_step;     /* largest per-iteration drop in the last few
                            reports: fitted curves never fall faster */
    double floor_loss;   /* fitted curves never predict a lower loss */
} slaq_forecast;

/* Predicted loss at iteration k (k may be fractional; k >= k0 intended). */
double slaq_forecast_loss(const slaq_forecast *f, double k);

/*
 * The same without the floor_loss bound (the max_step bound stays): where
 * the curve itself says the job will be at iteration k. The floor keeps
 * the allocator from chasing a forecast that dives; an estimate of where
 * a job ends must not be lifted by it, or progress would be overstated.
 */
double slaq_forecast_end(const slaq_forecast *f, double k);

/*
 * An algorithm's convergence class, as a job may declare it (SLAQ §4.2.2):
 * sublinear (gradient descent, K-Means, ...) follows the rational family,
 * linear and superlinear (L-BFGS, Newton, ...) the exponential one. A
 * non-convex job (a neural network trained with SGD) is predicted as an
 * undeclared one, both families tried; its class is kept so that what a
 * job declared is what slaqd shows.
 */
typedef enum slaq_convergence {
    SLAQ_CONV_UNKNOWN = 0, /* not declared */
    SLAQ_CONV_SUBLINEAR,
    SLAQ_CONV_LINEAR,      /* linear or superlinear */
    SLAQ_CONV_NONCONVEX,   /* declared non-convex: predicted as UNKNOWN */
} slaq_convergence;

/* Parses "sublinear"; "linear" or "superlinear"; "nonconvex"; "unknown" or
 * "" (UNKNOWN). SLAQ_EINVAL otherwise. */
int slaq_convergence_parse(const char *name, slaq_convergence *out);
/* "sublinear", "linear", "nonconvex" or "unknown". */
const char *slaq_convergence_name(slaq_convergence c);

/*
 * Class priors (docs/libslaq.md, "Class priors"): how the recorded
 * curves of a convergence class fall, learned from a curve library, for
 * a job whose own loss has not moved yet. Per class (indexed by
 * slaq_convergence; SLAQ_CONV_UNKNOWN holds every curve's):
 */
typedef struct slaq_prior_class {
    double half_iters; /* median iterations to half a curve's drop */
    double done_iters; /* median iterations to 90% of it */
    double rel_drop;   /* median drop (L(0) − min L) / |L(0)| */
    size_t curves;     /* curves it was learned from (0: UNKNOWN's used) */
} slaq_prior_class;

#define SLAQ_NCONV 4

typedef struct slaq_prior {
    slaq_prior_class cls[SLAQ_NCONV];
} slaq_prior;

/* The prior learned from the project's tuning curves
 * (tests/data/curves-dev.jsonl; `slaq prior` prints it and learns another
 * from any curve file). */
const slaq_prior *slaq_prior_default(void);

/* Learns a prior from n curves (loss[i][0..len[i]−1], class cls[i]):
 * curves with fewer than 2 points or no drop are skipped. SLAQ_EINVAL
 * when no curve has a drop. */
int slaq_prior_learn(const double *const *loss, const size_t *len,
                     const slaq_convergence *cls, size_t n,
                     slaq_prior *out);

/* Class c's row, UNKNOWN's when c has no curves. */
const slaq_prior_class *slaq_prior_of(const slaq_prior *p,
                                      slaq_convergence c);

/* The prior's forecast for a job at iteration k0 with loss loss0 whose
 * loss has not moved: it falls from loss0 by rel_drop·|loss0|, half of
 * that in half_iters iterations (L = loss0 − D·u/(u + h), u = k − k0),
 * its first_loss loss0 and its scale D. */
void slaq_prior_forecast(const slaq_prior_class *c, double k0, double loss0,
                         slaq_forecast *out);

typedef struct slaq_predictor_opts {
    double lambda;       /* weight decay Λ for slaq-fit/auto, (0,1]; 0.8 */
    /* The job's declared class. slaq-fit then fits only that class's
     * family, as the paper does; UNKNOWN (the default): both families,
     * the one with the smaller residual is used. auto ignores it. */
    slaq_convergence convergence;
    unsigned max_iter;   /* solver steps per fit (slaq-fit: GSL's cap,
                            100; auto: steps from a warm start, 4);
                            0 = default */
} slaq_predictor_opts;

void slaq_predictor_opts_init(slaq_predictor_opts *o);

typedef struct slaq_predictor slaq_predictor;

/* Returns NULL when out of memory or the options are out of range. */
slaq_predictor *slaq_predictor_new(slaq_predictor_kind kind,
                                   const slaq_predictor_opts *opts);
void slaq_predictor_free(slaq_predictor *p);
slaq_predictor_kind slaq_predictor_kind_of(const slaq_predictor *p);

/*
 * Oracle only: the true loss curve, truth[k] the loss after iteration k.
 * Borrowed; must outlive the predictor. SLAQ_EINVAL for other kinds.
 */
int slaq_predictor_set_truth(slaq_predictor *p, const double *truth,
                             size_t len);

/*
 * Fits the history and stores the result as the predictor's forecast. With
 * fewer than two reports the forecast is a line that falls by one
 * normaliser per iteration (a new job is assumed to be at its steepest).
 * Warm-started from the previous fit where the kind supports it; a fit that
 * fails keeps a usable forecast (the last good fit re-anchored, else the
 * strawman line). Returns SLAQ_OK, or SLAQ_ENODATA on an empty history.
 */
int slaq_predictor_fit(slaq_predictor *p, const slaq_history *h);

/* The current forecast (valid until the next fit). */
const slaq_forecast *slaq_predictor_forecast(const slaq_predictor *p);

/* Predicted loss after h more iterations than the last fitted report. */
double slaq_predictor_loss(const slaq_predictor *p, double h);

/* ------------------------------------------------------ predictor quality */

/* Accumulated prediction errors at one horizon (see slaq_eval_curve). */
typedef struct slaq_eval_acc {
    double err_sum;  /* Σ |L̂(k+h) − L(k+h)| / (L(0) − min L) */
    double rel_sum;  /* Σ |L̂(k+h) − L(k+h)| / |L(k+h)|, where L(k+h) ≠ 0 */
    uint64_t n;      /* predictions in err_sum */
    uint64_t n_rel;  /* predictions in rel_sum */
} slaq_eval_acc;

/*
 * Replays one recorded curve (loss[0..n-1], loss[0] before the first
 * iteration) through a fresh predictor of `kind`: after every prefix of at
 * least 5 iterations (k = 5 .. n-2) it fits and predicts L(k+h) for each
 * horizon h with k+h < n, adding the errors to acc[i] for horizons[i].
 * iter_cpu_s (n-1 values) may be NULL. The oracle is handed the curve.
 * Curves whose loss never falls below loss[0] add nothing. Returns
 * SLAQ_OK, SLAQ_EINVAL on bad arguments, or SLAQ_ENOMEM.
 */
int slaq_eval_curve(slaq_predictor_kind kind, const slaq_predictor_opts *opts,
                    const double *loss, size_t n, const double *iter_cpu_s,
                    const int *horizons, size_t nh, slaq_eval_acc *acc);

/* The honesty of a job's shown progress on one recorded curve (see
 * slaq_eval_progress). */
typedef struct slaq_progress_acc {
    double err_sum;    /* Σ |shown − true| over every prefix k >= 1 */
    double over_max;   /* the largest shown − true (an overclaim) */
    uint64_t n;        /* prefixes in err_sum */
    double stop_true;  /* true reduction where the shown one first reached
                          the target (NAN if it never did) */
    double stop_iter;  /* that iteration */
} slaq_progress_acc;

/*
 * Replays one recorded curve (loss[0..n-1]) as a job of a scheduler with
 * predictor `kind`, one report per iteration, and compares after each the
 * reduction the scheduler shows (slaq_job_reduction) with the true one,
 * (L(0) − L(k)) / (L(0) − L(n−1)) (DESIGN's definition: the end is the
 * last recorded loss), both kept in [0, 1]. With `declare` the job declares its n − 1
 * iterations. `target` in (0, 1] is a --target-reduction stop: where the
 * shown reduction first reaches it, the true one is recorded. Returns
 * SLAQ_OK (curves whose loss never falls below loss[0] add nothing and
 * leave stop_true NAN), SLAQ_EINVAL or SLAQ_ENOMEM.
 */
int slaq_eval_progress(slaq_predictor_kind kind, const double *loss, size_t n,
                       int declare, double target, slaq_progress_acc *out);

/* ------------------------------------------- approximate queries (ReLAQS) */

/*
 * An approximate query answered by online aggregation (ReLAQS, Stafman's
 * thesis ch. 4) reports after every mini-batch i = 1, 2, ... the vector of
 * its current estimates X_i (every group × aggregate column, or the columns
 * the user named), and the CPU seconds the mini-batch took. Its progress
 * metric (Eq. 4.1, with the absolute value) is, per column c,
 *
 *     P_i,c = |X_i,c − X_i−1,c| / max_{m ≤ i} |X_m,c − X_m−1,c|
 *
 * (the largest change so far, so the first change is 1), and P_i is the
 * mean over the columns that have an estimate at i and i − 1 and have
 * changed at least once. P is defined from the second mini-batch on; it
 * falls towards 0 as the answer settles. A NAN entry in X is a value that
 * does not exist yet (a group no sampled row has reached).
 */
typedef struct slaq_progress slaq_progress;

slaq_progress *slaq_progress_new(void);
void slaq_progress_free(slaq_progress *p);
/*
 * Adds the estimates after the next mini-batch. n must be the same for
 * every call (> 0); entries are finite or NAN. Returns SLAQ_EINVAL (the
 * tracker unchanged) on a wrong n or an infinite entry, SLAQ_ENOMEM.
 */
int slaq_progress_add(slaq_progress *p, const double *x, size_t n);
size_t slaq_progress_batches(const slaq_progress *p); /* estimates added */
/* P_i for mini-batch i (1-based): NAN for i < 2, i beyond the last added,
 * or a mini-batch where no column could be compared. */
double slaq_progress_value(const slaq_progress *p, size_t i);

/* The progress curve P(i) = 1 / (a·i² + b) (thesis §4.3.4: E[P_i] ∝ 1/i²). */
typedef struct slaq_pcurve {
    double a; /* > 0 */
    double b; /* a·i² + b > 0 over the fitted mini-batches */
} slaq_pcurve;

/* The curve before any fit: P(i) = 4/i², 1 at the first change (i = 2). */
void slaq_pcurve_prior(slaq_pcurve *c);
/* P(i) for i >= 1 (smaller i evaluate as 1); never above 1/a. */
double slaq_pcurve_eval(const slaq_pcurve *c, double i);
/*
 * Least squares in P (not 1/P, whose noise grows as P falls) over the n
 * points (i[k], p[k]), i[k] >= 1, p[k] >= 0 finite: Levenberg–Marquardt
 * from a weighted linear fit of 1/P. Needs two distinct i with p > 0;
 * returns SLAQ_ENODATA otherwise (out unchanged), SLAQ_EINVAL on bad
 * points.
 */
int slaq_pcurve_fit(const double *i, const double *p, size_t n,
                    slaq_pcurve *out);

/*
 * Mini-batch cost (thesis §4.3.5): mini-batch i takes alpha + beta·i
 * CPU-seconds, a line fitted to the recent mini-batches' CPU time; a
 * nested query (TPC-H Q17) that recomputes more tuples each mini-batch has
 * beta > 0. On N cores it takes (alpha + beta·i)/N seconds: the thesis's
 * A(iS/N) + B with beta = A·S and the fixed part alpha spread over the
 * cores too (slaq-aqp has no serial driver step worth modelling).
 */
typedef struct slaq_batchcost {
    double alpha; /* > 0 */
    double beta;  /* >= 0: a query does not speed up */
} slaq_batchcost;

/* Ordinary least squares over n >= 1 points (one point: beta = 0; the
 * slope is clamped at 0 and the line kept positive). SLAQ_EINVAL on bad
 * points or n == 0. */
int slaq_batchcost_fit(const double *i, const double *cpu_s, size_t n,
                       slaq_batchcost *out);
double slaq_batchcost_eval(const slaq_batchcost *c, double i);

/* A query's scheduling state: its progress metric, curve and cost line. */
#define SLAQ_DEFAULT_QUERY_WINDOW 12
typedef struct slaq_query_opts {
    size_t window;       /* recent P values fitted (0: all); default
                            SLAQ_DEFAULT_QUERY_WINDOW */
    size_t cost_window;  /* recent mini-batches in the cost line; 10 */
    unsigned min_points; /* P values before the curve is fitted (>= 2;
                            fewer: the prior); default 3 */
} slaq_query_opts;

void slaq_query_opts_init(slaq_query_opts *o);

typedef struct slaq_query slaq_query;

slaq_query *slaq_query_new(const slaq_query_opts *o); /* NULL: bad opts/OOM */
void slaq_query_free(slaq_query *q);
/*
 * Mini-batch `batch` (1-based, the next one: batches() + 1) finished with
 * estimates x[0..n-1] after cpu_s CPU-seconds (>= 0; 0: not measured, the
 * cost line is then not updated). Refits the curve and the cost line.
 * SLAQ_EORDER on a batch number other than the next, SLAQ_EINVAL as
 * slaq_progress_add or a bad cpu_s; the query is unchanged on error.
 */
int slaq_query_add(slaq_query *q, uint64_t batch, const double *x, size_t n,
                   double cpu_s);
/*
 * A query whose mini-batches up to `after` ran elsewhere, or whose
 * reports of them were lost (started again from its checkpoint on
 * another node): its next mini-batch is after + 1, and its progress
 * metric compares that one's estimates with the last ones it has.
 * SLAQ_EINVAL when `after` is below batches().
 */
int slaq_query_resume(slaq_query *q, uint64_t after);
/* Mini-batches done: the last one's number. */
size_t slaq_query_batches(const slaq_query *q);
double slaq_query_work(const slaq_query *q);      /* CPU-seconds so far */
const slaq_progress *slaq_query_progress(const slaq_query *q);
const slaq_pcurve *slaq_query_curve(const slaq_query *q);
/* The cost line; before any measured mini-batch, alpha = dflt_cost. */
slaq_batchcost slaq_query_cost(const slaq_query *q, double dflt_cost);
/* The last P (NAN before the second mini-batch). */
double slaq_query_last(const slaq_query *q);
/* Predicted P at mini-batch batches() + h. */
double slaq_query_predict(const slaq_query *q, double h);

/*
 * The query's forecast for the allocator (SLAQ_MODEL_AQP): the position k
 * is CPU-seconds of work done, k0 = slaq_query_work(); the value at k is
 * the predicted P at the (fractional) mini-batch the work reaches under
 * the cost line. One unit of progress is 1 (P is normalised already), so
 * a query's predicted drop in P and an ML job's predicted drop in
 * normalised loss are weighed on one scale. par[0..1] = a, b of the
 * curve; par[2..3] = alpha, beta; par2[0] = mini-batches done at k0.
 */
void slaq_query_forecast(const slaq_query *q, double dflt_cost,
                         slaq_forecast *f);

/*
 * The true error of a recorded query after each mini-batch, the thesis's
 * normalised absolute error (docs/relaqs.md, "True error"): per column c
 * the absolute error Z_i,c = |X_i,c − truth_c|, normalised like Eq. 4.1
 * by the column's largest absolute error over the run, so it lies in
 * [0, 1]; a column with no estimate yet counts 1, a column whose
 * estimates were always exact 0, and a NULL truth (NAN) is met by a NULL
 * estimate only. E_i is the mean over the K columns, as P_i is (Sec.
 * 4.3.6), and the error reduction is 1 − E_i. est is B × K, row i−1 for
 * mini-batch i (NAN: missing); err gets B values, err[i−1] = E_i. The
 * only definition in slaq: the metric-vs-error evaluation, the simulator
 * and `make demo-aqp` (through `slaq predict-eval --aqp --errors`) use
 * it. SLAQ_OK or SLAQ_EINVAL.
 */
int slaq_query_error_curve(const double *est, const double *truth, size_t B,
                           size_t K, double *err);

/* What slaq_eval_query accumulates over recorded queries. */
typedef struct slaq_query_eval {
    slaq_eval_acc pred[8];  /* per horizon: Σ |P̂_i+h − P_i+h| in err_sum
                               (P is in [0, 1], so this is the normalised
                               error), relative to P_i+h in rel_sum */
    double metric_err_sum;  /* Σ_i |P_i − E_i| over i >= 2, E_i from
                               slaq_query_error_curve */
    uint64_t metric_n;
} slaq_query_eval;

/*
 * Replays one recorded query (est B × K row-major, truth K) through a
 * slaq_query with `opts`: after every mini-batch i >= 3 predicts P at
 * i + h for each of the nh <= 8 horizons and adds the error; adds
 * |P_i − E_i| for every i >= 2 with a P. SLAQ_EINVAL, SLAQ_ENOMEM.
 */
int slaq_eval_query(const slaq_query_opts *opts, const double *est,
                    const double *truth, size_t B, size_t K,
                    const int *horizons, size_t nh, slaq_query_eval *acc);

/* ---------------------------------------------------------------- policies */

/*
 * The share policies. A kind is an index into libslaq's table of policies
 * (src/core/policy.c), 0 to slaq_policy_count() - 1; these are its rows.
 */
typedef enum slaq_policy_kind {
    SLAQ_POLICY_FAIR,   /* weighted max-min fair shares of cores */
    SLAQ_POLICY_SLAQ,   /* maximise total normalised loss reduction */
    SLAQ_POLICY_MAXMIN, /* minimise the largest predicted normalised loss */
    SLAQ_POLICY_RELAQS, /* ReLAQS (Algorithm 5): the slaq greedy on
                           predicted progress of queries and jobs alike,
                           exact jobs served their fair share first */
    /* The priority policies (docs/deadlines.md): jobs in the order of a
     * key, each given up to its max_cores of its node's cores while any
     * are left (slaq_policy_keys). */
    SLAQ_POLICY_EDF,    /* earliest deadline first */
    SLAQ_POLICY_TIRESIAS, /* Tiresias' discretised two-dimensional LAS */
    SLAQ_POLICY_MLFS_H, /* MLFS's MLF-H priority (Eq. 2-6), normalised */
    SLAQ_POLICY_MLFS,   /* the paper's MLFS: MLF-RL with MLF-C's load
                           control (stops jobs that met their accuracy
                           when overloaded); needs the network too */
    SLAQ_POLICY_MLFS_RL, /* MLF-RL: a learned network's scores as the
                            keys (slaq_prio_params.rl; deadline.h) */
    SLAQ_POLICY_PLAN,   /* the most predicted quality per core-second up
                           to each job's next milestone (a horizon of many
                           epochs, not the next one's drop alone) */
    SLAQ_POLICY_INDEX,  /* jobs admitted one core each (more where they
                           scale) in order of the fewest predicted
                           core-seconds to 90% of their drop: a queue
                           that knows which work is nearly done */
    /* The baselines a user would run instead (priority policies). */
    SLAQ_POLICY_QUEUE,  /* first come first served: each job up to its
                           max_cores in order of arrival, as a batch
                           system's queue */
    SLAQ_POLICY_SHORTEST, /* shortest-first: the least predicted
                           core-seconds to 90% of the forecast drop first
                           (a job not yet reported first, one past 90%
                           last), preemptive */
    SLAQ_POLICY_TREND,  /* slaq's greedy, a job whose reports still fall
                           valued at least by a tenth of the drop its
                           measured trend promises (slaq_pjob.trend) */
} slaq_policy_kind;

/* The number of share policies: every kind below it is one. */
size_t slaq_policy_count(void);

/* Parses a policy's name ("fair", "slaq", "slaq-maxmin", "relaqs");
 * SLAQ_EINVAL for any other. */
int slaq_policy_parse(const char *name, slaq_policy_kind *out);

/* The policy's name; "?" for a kind that is none. */
const char *slaq_policy_name(slaq_policy_kind kind);

/* What the policy divides the cores by, in one line for help texts
 * ("weighted fair shares of the cores"); NULL for a kind that is none. */
const char *slaq_policy_summary(slaq_policy_kind kind);

/* 1 if the policy divides by the jobs' forecasts (its slaq_pjob need fc,
 * and a predictor matters), 0 if by weight alone (fair) or not a policy. */
int slaq_policy_uses_forecasts(slaq_policy_kind kind);

/*
 * Writes every policy's name, in kind order, separated by `sep`, into
 * buf (at most len bytes with the terminating NUL, as snprintf): for the
 * "expected ..." of an error message. Returns the length of the whole
 * list, which is >= len when it was cut, or -1.
 */
int slaq_policy_list(char *buf, size_t len, const char *sep);

/* One job as a policy sees it. */
typedef struct slaq_pjob {
    const slaq_forecast *fc; /* its predicted loss curve (NULL: fair only) */
    double k;                /* where it is now, in iterations (fractional) */
    double iters_per_core;   /* iterations one core completes in one epoch */
    double weight;           /* > 0; multiplies the job's gain or share */
    double max_cores;        /* > 0; cap (INFINITY for none) */
    /* The rest may be left zero. */
    double scale;       /* loss units of one unit of progress: gains are
                           loss drops divided by it (0: fc->scale) */
    double min_cores;   /* guaranteed before any unit is handed out
                           (0: the minimum share, below) */
    int unproven;       /* has not reported at all (still loading): it
                           gets spare units only after every other job
                           is at its max_cores */
    double prev_alloc;  /* the job's cores in the previous epoch */
    double stay;        /* >= 0: units up to prev_alloc count (1 + stay)
                           times their gain (hysteresis; 0 for none) */
    /* What the priority policies (edf, tiresias, mlfs-h, mlfs, mlfs-rl)
     * read; the others ignore them. Times on the caller's clock. */
    double now;         /* the time of the decision */
    double arrival;     /* when the job arrived */
    double deadline;    /* absolute; INFINITY: none (the largest) */
    double urgency;     /* L_J, SLAQ_URGENCY_MIN..MAX (0 counts as MIN) */
    double attained;    /* core-seconds of service so far (Tiresias' 2D
                           attained service: cores × time) */
    double waited;      /* seconds it has waited without cores */
    double remaining_s; /* estimated seconds left on max_cores cores */
    double iter;        /* I: iterations done */
    double last_drop;   /* δl_{I-1}: the loss drop of the last iteration */
    double total_drop;  /* Σ δl_j: the loss drop so far */
    const slaq_scaling *scaling; /* how the job scales: a cores gives
                           it iters_per_core × slaq_scaling_speedup(
                           scaling, a) iterations (NULL: linear, exactly
                           a) */
    int settling;       /* has reported, but too few iterations for its
                           forecast: slaq-index ranks it by arrival */
    int falling;        /* its recent reports still fall (measured, as the
                           bound on starvation judges it): slaq-index does
                           not put it last when its forecast says it is
                           past its milestone */
    double trend;       /* >= 0: its recent reports' fall per iteration,
                           in loss units, as the bound on starvation
                           measures it (0: not falling, or too new to
                           tell); slaq-trend reads it */
} slaq_pjob;

/* Scratch space for the allocator; reused across calls so that a warmed-up
 * allocation does not allocate. */
typedef struct slaq_alloc_ws slaq_alloc_ws;
slaq_alloc_ws *slaq_alloc_ws_new(void);
void slaq_alloc_ws_free(slaq_alloc_ws *ws);

/*
 * The parameters of the priority policies (docs/deadlines.md), kept in
 * the workspace (slaq_alloc_ws_set_prio; a new workspace has the
 * defaults of slaq_prio_params_init).
 *
 * MLF-H (MLFS, CoNEXT'20, Eq. 2-6, §4.1's defaults): alpha weighs the ML
 * features against the computation features, gamma discounts a task's
 * dependants (Eq. 3 and 5), g_d, g_r and g_w weigh the deadline, the
 * remaining time and the waiting time (Eq. 4). use_urgency and
 * use_deadline switch the urgency factor of Eq. 2 and the deadline term
 * of Eq. 4 off (0) for the paper's component studies (Fig. 6). eps_s
 * bounds d − t and r from below (the terms 1/(d − t) and 1/r would
 * otherwise be infinite at a deadline or at the end).
 *
 * Tiresias (Gu et al., NSDI'19): the attained service, cores × seconds,
 * is discretised into queues at las_limit[0..las_queues-2]; a job in a
 * lower queue goes first, in arrival order within a queue. The default
 * is its simulator's published setting: two queues split at 3,600
 * GPU-seconds (here core-seconds, one GPU as one core).
 */
#define SLAQ_URGENCY_MIN 1
#define SLAQ_URGENCY_MAX 10
#define SLAQ_LAS_MAX_QUEUES 8
struct slaq_rl_model;
typedef struct slaq_prio_params {
    double alpha, gamma, g_d, g_r, g_w;
    int use_urgency, use_deadline;
    double eps_s;
    double las_limit[SLAQ_LAS_MAX_QUEUES - 1];
    size_t las_queues;
    /* MLF-RL's network (include/slaq/deadline.h), borrowed: the caller
     * keeps it alive while the workspace uses it. NULL (the default):
     * none, and the policies that need one (slaq_policy_needs_model)
     * are refused. */
    const struct slaq_rl_model *rl;
} slaq_prio_params;

void slaq_prio_params_init(slaq_prio_params *p);
/* SLAQ_EINVAL (nothing changed) for a weight outside [0, 1] (alpha,
 * gamma) or negative (g_*), eps_s <= 0, las_queues outside 1..8 or
 * limits not increasing and positive. */
int slaq_alloc_ws_set_prio(slaq_alloc_ws *ws, const slaq_prio_params *p);
const slaq_prio_params *slaq_alloc_ws_prio(const slaq_alloc_ws *ws);

/*
 * The hold (docs/libslaq.md, "Holding a plateaued job"): under slaq and
 * relaqs, a job whose forecast says less than `hold` of its loss drop is
 * left ((L(k) − L_final) / (L_first − L_final)) gets no minimum share, as
 * long as ceil(capacity) other jobs on its node keep one; it gets units
 * only when every running job is at its max_cores. The lowest gains are
 * held first; a job in its start-up share (min_cores) or that has not
 * reported is never held. 0 (a new workspace's value): never. SLAQ_EINVAL
 * (nothing changed) outside [0, 1].
 */
int slaq_alloc_ws_set_hold(slaq_alloc_ws *ws, double hold);

/*
 * Each job's key under `policy`, larger first: the order in which a
 * priority policy hands out cores, and in which a driver serves its
 * pending queue. For the share policies (fair, slaq, ...) it is arrival
 * order (−arrival). edf: −deadline. tiresias: −(queue index) with
 * arrival order inside a queue. mlfs-h: MLF-H's P (Eq. 6), every term
 * normalised over these n jobs (slaq_mlfs_priority). mlfs-rl and mlfs:
 * the score of the workspace's network (slaq_rl_keys). Returns
 * SLAQ_EINVAL for a kind that is none or a policy that needs a network
 * the workspace has not been given, SLAQ_ENOMEM.
 */
int slaq_policy_keys(slaq_policy_kind policy, const slaq_pjob *jobs,
                     size_t n, slaq_alloc_ws *ws, double *key);

/* 1 if the policy moves jobs off overloaded nodes and places pending
 * jobs on the ideal virtual host (mlfs-h, mlfs, mlfs-rl), else 0. */
int slaq_policy_moves(slaq_policy_kind kind);
/* 1 if the policy stops jobs that met their required accuracy while the
 * cluster is overloaded (MLF-C: mlfs), else 0. */
int slaq_policy_load_control(slaq_policy_kind kind);
/* 1 if the policy's keys come from a trained network (mlfs-rl, mlfs),
 * which slaq_prio_params.rl must hold, else 0. */
int slaq_policy_needs_model(slaq_policy_kind kind);

/*
 * Divides `capacity` cores among n jobs; alloc[i] receives job i's cores.
 *
 *  fair:  weighted water-filling: shares proportional to weight, none above
 *         its max_cores, the excess re-divided (exact, fractional shares).
 *  slaq:  Algorithm 1. Every job first gets its guaranteed cores: its
 *         min_cores where given (all of them scaled down together if they
 *         exceed the capacity), else the minimum share min(unit, left /
 *         m, max_cores), `left` the capacity after the min_cores and m the
 *         jobs without one. Then units go one at a time to the job whose
 *         predicted normalised loss reduction over the epoch grows most,
 *         weight × (L(k+n(a)) − L(k+n(a+unit))) / scale with n(a) =
 *         iters_per_core × s(min(a, max_cores)), s the job's speed-up
 *         slaq_scaling_speedup(scaling, ·) (s(a) = a for a NULL scaling, the
 *         paper's c·S/N), multiplied by (1 + stay)
 *         for a unit the job already held (a < prev_alloc): a job keeps
 *         its cores unless another gains clearly more. Unproven jobs
 *         come last. A final
 *         partial unit is given when less than a unit is left.
 *  relaqs: the same greedy as slaq (ReLAQS's Algorithm 5 is SLAQ's
 *         Algorithm 1 on predicted progress); the scheduler, not the
 *         allocator, gives queries and exact jobs their floors.
 *  slaq-maxmin: the same, but the next unit goes to the job with the
 *         largest predicted normalised loss after the epoch,
 *         weight × (L(k+n(a)) − final) / (first − final).
 *  slaq-trend: slaq's greedy, a unit's key the larger of slaq's and
 *         0.1 × weight × trend × (n(a+unit) − n(a)) / scale (with the
 *         same stay bonus): a job whose reports still fall is valued at
 *         least by a tenth of what its measured trend promises.
 *
 * Ties go to the lower index, so equal inputs give equal outputs. The sum
 * of allocations never exceeds capacity; it is less only when every job is
 * at its max_cores. Returns SLAQ_EINVAL on a negative capacity, unit <= 0,
 * a weight or max_cores <= 0, or a missing forecast (slaq, slaq-maxmin);
 * SLAQ_ENOMEM if the workspace cannot grow.
 */
int slaq_allocate(slaq_policy_kind policy, const slaq_pjob *jobs, size_t n,
                  double capacity, double unit, slaq_alloc_ws *ws,
                  double *alloc);

/*
 * The same over several nodes: job i runs on node[i] (< nnodes; node NULL
 * puts every job on node 0) and node v has capacity[v] cores (>= 0). One
 * greedy pass over all jobs, as above, except that a unit goes to the job
 * with the largest key whose node still has room: each node's guaranteed
 * shares are computed from its own capacity and jobs, no node's
 * allocations exceed its capacity, and a node's sum is less only when all
 * its jobs are at their max_cores. fair divides each node separately.
 * slaq_allocate() is exactly this call with one node. Errors as
 * slaq_allocate(), and SLAQ_EINVAL for nnodes == 0 or a node out of range.
 */
int slaq_allocate_nodes(slaq_policy_kind policy, const slaq_pjob *jobs,
                        size_t n, const size_t *node, const double *capacity,
                        size_t nnodes, double unit, slaq_alloc_ws *ws,
                        double *alloc);

/*
 * Cores left for ML jobs after non-ML work (SLAQ §4.3): a fixed reservation
 * `reserved`, and `nonml_jobs` jobs that get fair shares alongside the
 * `ml_jobs` ML jobs. Never negative.
 */
double slaq_capacity_for_ml(double cores, double reserved,
                            unsigned nonml_jobs, size_t ml_jobs);

/* ------------------------------------------------------------ token bucket */

/*
 * Token bucket (SLAQ §5). Each epoch adds allocation × T CPU-seconds to a
 * job's balance; reported CPU time is taken from it; a job whose balance is
 * not positive is throttled until the next refill. Unused tokens do not
 * accumulate: at a refill a positive balance is dropped before the new
 * tokens are added, so a job that idled cannot later burst above its
 * allocation. Debt (a negative balance from CPU reported beyond the tokens)
 * is carried into the next epoch, so overuse is paid back.
 */
typedef struct slaq_tokens {
    double balance; /* CPU-seconds the job may still use this epoch */
    double granted; /* tokens added at the last refill */
} slaq_tokens;

void slaq_tokens_refill(slaq_tokens *b, double alloc_cores, double epoch_s);
void slaq_tokens_consume(slaq_tokens *b, double cpu_s);
int slaq_tokens_throttled(const slaq_tokens *b);

/* ---------------------------------------------------------------- schedule */

/*
 * What one unit of a job's progress is, in loss units: the quantity whose
 * predicted reduction slaq maximises.
 *   SLAQ_SCALE_SPAN:      the job's predicted total reduction,
 *                         L(0) − L_end (L_end its predicted loss at its
 *                         last iteration, or its asymptote when it
 *                         declared none; never less than its largest
 *                         single drop). This is the scale of the
 *                         normalised loss slaq is measured by, so a job
 *                         that fell fast at first is not taken for
 *                         converged while it is far from its own end.
 *   SLAQ_SCALE_MAX_DELTA: the largest per-iteration drop so far (SLAQ §4.1).
 */
typedef enum slaq_scale_kind {
    SLAQ_SCALE_SPAN,
    SLAQ_SCALE_MAX_DELTA,
} slaq_scale_kind;

/* Parses "span", "max-delta"; SLAQ_EINVAL otherwise. */
int slaq_scale_parse(const char *name, slaq_scale_kind *out);
const char *slaq_scale_name(slaq_scale_kind kind);

/*
 * Where a new job goes when the scheduler has several nodes (a one-node
 * scheduler has no choice):
 *   SLAQ_PLACE_LEAST_LOADED: the node where the job's fair share would be
 *       largest, cores × weight / (its jobs' weights + the job's weight);
 *       ties to the lower index.
 *   SLAQ_PLACE_GAIN: the node where the job's predicted gain minus the
 *       gain it displaces is largest (docs/cluster.md, "Placement"). A job
 *       without history is, as in the paper, taken to be at its steepest,
 *       so its gain outweighs what converging jobs would lose: it goes
 *       where its share is largest, and among equal shares where the
 *       units it takes were worth least in the last epoch.
 */
typedef enum slaq_placement {
    SLAQ_PLACE_LEAST_LOADED,
    SLAQ_PLACE_GAIN,
} slaq_placement;

/* Parses "least-loaded", "gain"; SLAQ_EINVAL otherwise. */
int slaq_placement_parse(const char *name, slaq_placement *out);
const char *slaq_placement_name(slaq_placement kind);

#define SLAQ_DEFAULT_STARTUP_REPORTS 3
#define SLAQ_DEFAULT_HOLD 0.0
#define SLAQ_DEFAULT_HYSTERESIS 1.0
#define SLAQ_DEFAULT_DAMPING 0.5
#define SLAQ_DEFAULT_MAX_FITS 1000
#define SLAQ_DEFAULT_STARVE_S 10.0
#define SLAQ_DEFAULT_SHARE_HALF_LIFE_S 3600.0
#define SLAQ_DEFAULT_SHARE_LEND_AT 0.9
#define SLAQ_DEFAULT_SHARE_GUARANTEE 1

typedef struct slaq_sched_config {
    slaq_policy_kind policy;       /* default SLAQ_POLICY_SLAQ */
    slaq_predictor_kind predictor; /* default SLAQ_PRED_AUTO */
    double cores;                  /* total cores (> 0) */
    double unit;                   /* allocation unit; default 1 core */
    double epoch_s;                /* T; default 1 s */
    double reserved;               /* cores reserved for non-ML work */
    unsigned nonml_jobs;           /* non-ML jobs taking fair shares */
    size_t window;                 /* history window; default 64 */
    double default_iter_cpu_s;     /* runtime before any report */
    slaq_predictor_opts pred;      /* predictor options */
    /* Beyond the paper (docs/libslaq.md, "Real jobs"): */
    slaq_scale_kind normalise;     /* the objective's loss unit; default
                                      SLAQ_SCALE_SPAN */
    unsigned startup_reports;      /* a job with fewer reports of finished
                                      iterations is settling: it gets at
                                      least its fair share, and until
                                      its first report no more;
                                      default SLAQ_DEFAULT_STARTUP_REPORTS */
    double horizon_s;              /* gains are predicted over this many
                                      seconds, at least one epoch (0: one
                                      epoch, the paper's) */
    double horizon_iters;          /* >= 0: a job's gain is predicted
                                      over at least this many of its
                                      iterations at its fair share, and
                                      scaled to the horizon (0: off) */
    double damping;                /* in [0, 1): with the same jobs as
                                      last epoch, a job's new allocation
                                      is damping × old + (1 − damping) ×
                                      the policy's (0: off); default
                                      SLAQ_DEFAULT_DAMPING */
    double hysteresis;             /* >= 0: the `stay` bonus of a job's
                                      units from the previous epoch;
                                      default SLAQ_DEFAULT_HYSTERESIS */
    double hold;                   /* in [0, 1]: slaq_alloc_ws_set_hold's
                                      threshold (0: never hold); default
                                      SLAQ_DEFAULT_HOLD */
    double starve_s;               /* > 0: the bound on starvation. Under
                                      a policy that divides by forecasts,
                                      a training job still improving (its
                                      loss not moved yet, or still falling
                                      and short of 95% of its predicted
                                      drop: docs/libslaq.md, "The bound on
                                      starvation") that has
                                      been held at the minimum share,
                                      below its fair share, for this many
                                      seconds gets its fair share until
                                      its next report (a lift); 0:
                                      never; default
                                      SLAQ_DEFAULT_STARVE_S */
    double share_half_life_s;      /* >= 0: with shares between users
                                      (slaq_sched_set_shares), the
                                      half-life of their usage; 0: usage
                                      ignored. Default
                                      SLAQ_DEFAULT_SHARE_HALF_LIFE_S */
    double share_lend_at;          /* in [0, 1]: with shares between
                                      users, under a policy that divides
                                      by forecasts, a job whose predicted
                                      loss reduction reached this fraction
                                      asks at most its fair share of its
                                      node (among all jobs there) in the
                                      division between users where another
                                      user's job still improves, so the
                                      rest of its user's part goes to the
                                      users whose jobs still improve (0:
                                      never).
                                      Default SLAQ_DEFAULT_SHARE_LEND_AT */
    double share_guarantee;        /* in [0, 1]: with shares between
                                      users and no caps on cores or jobs,
                                      the part of each user's share it is
                                      guaranteed: a user's part of a node
                                      is G x its share + (1 - G) x what
                                      the policy would give its jobs
                                      without shares (1: strict shares;
                                      0: shares ignored). Default
                                      SLAQ_DEFAULT_SHARE_GUARANTEE */
    int prior;                     /* non-zero (default): under a policy
                                      that divides by forecasts, with a
                                      predictor other than the oracle, a
                                      training job whose loss has not
                                      moved yet is valued by its class's
                                      prior (slaq_prior_default) and
                                      holds at least its fair share, up
                                      to the class's done_iters reports;
                                      0: by its own flat forecast */
    int scaling;                   /* non-zero (default): a job that has
                                      reported its threads is allocated
                                      by its scaling model's speed-ups
                                      (slaq/scaling.h); 0: every job
                                      scales linearly, the paper's */
    /* Approximate queries (ReLAQS; slaq_job_opts.kind): */
    slaq_query_opts query;         /* their progress curve and cost line */
    double query_min_cores;        /* >= 0: the tunable minimum allocation
                                      of a query that has reported (0: the
                                      allocator's minimum share) */
    /* Nodes (docs/cluster.md). The scheduler starts with `nodes` nodes
     * of `cores` cores each (0 counts as 1: the single machine is the
     * one-node case); reserved and nonml_jobs apply on every node. */
    size_t nodes;                  /* default 1 */
    slaq_placement placement;      /* default SLAQ_PLACE_LEAST_LOADED */
    int queue;                     /* non-zero: a node is full when one
                                      more job would push its jobs'
                                      minimum shares, min(unit,
                                      max_cores) each, past its cores;
                                      a job that fits nowhere waits in a
                                      pending queue, served in arrival
                                      order (slaq_sched_add_node). 0
                                      (default):
                                      nodes are never full, as a single
                                      machine always was */
    size_t max_fits;               /* refits per epoch at most: the jobs
                                      that reported longest ago first,
                                      the rest keep their forecast until
                                      the next epoch (0: no bound);
                                      default SLAQ_DEFAULT_MAX_FITS */
    /* Queues when the cluster is full (slaq/queue.h, docs/queues.md): */
    slaq_queue_bound queue_bound;  /* a node queue's bound; default auto */
    double queue_util;             /* in (0, 1): the utilisation an auto
                                      bound is sized for; default 0.95 */
    slaq_qorder queue_order;       /* default SLAQ_QORDER_FIFO */
    slaq_starvation starvation;    /* default ST = 10 s, no ST_R */
    slaq_qload queue_load;         /* default SLAQ_QLOAD_WAIT */
    /* MLF-RL's network (slaq/deadline.h), borrowed: the driver reads it
     * (slaqd's --rl-model) and keeps it alive as long as the scheduler.
     * NULL (default): none, and a policy that needs one
     * (slaq_policy_needs_model) is refused. */
    const struct slaq_rl_model *rl;
} slaq_sched_config;

/* The defaults: for the fields a user sets, those of the settings table
 * (slaq/settings.h, which also parses and prints them by name); for the
 * rest, the ones documented above. */
void slaq_sched_config_init(slaq_sched_config *c);

typedef struct slaq_sched slaq_sched;
typedef struct slaq_job slaq_job;

/* Returns NULL when out of memory or the configuration is out of range. */
slaq_sched *slaq_sched_new(const slaq_sched_config *cfg);
void slaq_sched_free(slaq_sched *s); /* frees its jobs too */

/* Changes the policy or predictor kind; takes effect at the next epoch. A
 * policy that needs a network (slaq_policy_needs_model) is ignored unless
 * the configuration gave the scheduler one (slaq_sched_config.rl);
 * slaq_sched_new refuses such a policy without one too. */
void slaq_sched_set_policy(slaq_sched *s, slaq_policy_kind policy);
int slaq_sched_set_predictor(slaq_sched *s, slaq_predictor_kind kind);
const slaq_sched_config *slaq_sched_get_config(const slaq_sched *s);

/*
 * When MLF-C may end a job early (MLFS §3.5.4, the user's choice; the
 * driver asks slaq_mlfc_decide, deadline.h): never (it runs its fixed
 * iterations), when the cluster is overloaded and its metric meets its
 * required accuracy, or that and also, at any load, once its curve has
 * flattened (OptStop).
 */
typedef enum slaq_stop_rule {
    SLAQ_STOP_ITERS = 0,
    SLAQ_STOP_ACCURACY,
    SLAQ_STOP_OPTSTOP,
    SLAQ_STOP_NRULES
} slaq_stop_rule;

/* Parses "iters", "accuracy", "optstop"; SLAQ_EINVAL otherwise. */
int slaq_stop_parse(const char *name, slaq_stop_rule *out);
const char *slaq_stop_name(slaq_stop_rule rule);

/*
 * What a job's user asks of it beyond its loss (MLFS, docs/deadlines.md):
 * a deadline, a required value of its metric, an urgency, and the rule
 * by which MLF-C may stop it. Without them a job has the paper's
 * defaults (§3.1): the largest deadline (none) and the lowest accuracy
 * (none required), and the lowest urgency.
 */
typedef struct slaq_goal {
    double deadline; /* absolute, on the scheduler's clock; INFINITY: none */
    double accuracy; /* required value of the metric; NAN: none */
    int maximize;    /* 1: the metric is better higher (an accuracy),
                        0: lower (a loss), as a sweep's metric says */
    int urgency;     /* SLAQ_URGENCY_MIN..SLAQ_URGENCY_MAX */
    slaq_stop_rule stop; /* MLF-C's rule for it */
} slaq_goal;

/* The defaults: no deadline, no required accuracy, maximize 1, urgency
 * SLAQ_URGENCY_MIN, stop SLAQ_STOP_ITERS. */
void slaq_goal_init(slaq_goal *g);
/* SLAQ_EINVAL for a NaN deadline, an infinite accuracy, an urgency out
 * of range, a stop rule out of range, or SLAQ_STOP_ACCURACY without a
 * required accuracy. */
int slaq_goal_check(const slaq_goal *g);
/* 1 if `value` of the metric meets the required accuracy (always, when
 * none is required), 0 if not or value is NaN. */
int slaq_goal_met(const slaq_goal *g, double value);

typedef struct slaq_job_opts {
    double weight;        /* > 0; default 1 */
    double max_cores;     /* > 0; default INFINITY */
    const double *truth;  /* oracle predictor: the true curve (borrowed) */
    size_t truth_len;
    double iter_cpu_s;    /* known CPU-seconds of one iteration, or 0 */
    slaq_convergence convergence; /* declared class; default UNKNOWN */
    uint64_t iters;       /* iterations the job will run, if it says so
                             (0: unknown): its end of curve */
    void *user;           /* the caller's pointer, returned by _user() */
    /* What the job is. A query reports with slaq_job_report_estimates()
     * and is scheduled by its progress metric; an exact job is served
     * its fair share before the policy divides the rest. */
    int kind;             /* SLAQ_JOB_ML (default), _QUERY or _EXACT */
    int node;             /* pins the job to this node; SLAQ_NODE_ANY
                             (the default): placed by config.placement */
    slaq_goal goal;       /* deadline, accuracy, urgency (the priority
                             policies read them); default slaq_goal_init */
    int tenant;           /* the user (slaq/shares.h id) it belongs to
                             under slaq_sched_set_shares(); -1 (the
                             default): none */
    double target;        /* the loss reduction (0, 1] at which the job
                             is done: slaq_job_verdict (0, default: none) */
    int program;          /* a real program (slaqd's jobs): until its
                             scaling is measured, slaq-index takes a second
                             core to buy what the scaling prior says, not
                             to double it (0: linear, a simulated curve) */
    double mem;           /* GB it holds on its node, >= 0 (MLFS's cluster,
                             slaq/deadline.h; default 0) */
} slaq_job_opts;

enum { SLAQ_JOB_ML = 0, SLAQ_JOB_QUERY = 1, SLAQ_JOB_EXACT = 2 };

/* Parses "ml", "query", "exact"; SLAQ_EINVAL otherwise. */
int slaq_job_kind_parse(const char *name, int *out);
const char *slaq_job_kind_name(int kind);

/* Two different words, so two different values: a job's pin "any node"
 * (slaq_job_opts.node) and a job's place "waiting for a node"
 * (slaq_job_node()). Every real node is >= 0. */
#define SLAQ_NODE_ANY (-1)
#define SLAQ_NODE_PENDING (-2)

void slaq_job_opts_init(slaq_job_opts *o);

/*
 * Adds a job (arrived at time t) and places it on a node (see
 * slaq_placement), or, when config.queue is set and no node has room (or
 * others are already waiting), or every node has 0 cores, appends it to
 * the pending queue: it then
 * gets no cores until a later epoch starts it. NULL when out of memory or
 * opts invalid (a pinned node out of range, a tenant that is not a user
 * of the scheduler's shares while they are set).
 * Until a job reports CPU time, its iteration cost is opts.iter_cpu_s if
 * the driver knows it, else the mean cost of the jobs that have reported
 * (a new job is assumed to be a typical one), else
 * config.default_iter_cpu_s.
 */
slaq_job *slaq_sched_add(slaq_sched *s, const slaq_job_opts *o, double t);
/*
 * Shares between users (slaq/shares.h): with a tree set, every epoch
 * first charges each user the core-seconds its jobs held since the last
 * epoch, holds back (at no cores) each user's or account's jobs past its
 * max_jobs, newest first, divides each node's cores between the users
 * with jobs there (slaq_shares_divide, a job asking min(max_cores, the
 * node's cores)), and then divides each user's part among its own jobs
 * with the policy, as it divides a node's cores without shares. The
 * tree's entries then hold the epoch's parts, cores and job counts. The
 * tree is borrowed (NULL: no shares, the default) and must outlive the
 * scheduler or the next call; every job's tenant must be one of its
 * users while it is set. SLAQ_EINVAL (nothing changed) for a job whose
 * tenant is not a user of the tree.
 */
struct slaq_shares;
int slaq_sched_set_shares(slaq_sched *s, struct slaq_shares *t);
struct slaq_shares *slaq_sched_shares(const slaq_sched *s);

/* Removes and frees a job; its cores are re-divided at the next epoch. */
void slaq_sched_remove(slaq_sched *s, slaq_job *j);
size_t slaq_sched_count(const slaq_sched *s);
/*
 * Whether the cores should be divided again now rather than at the next
 * epoch: a job arrived or left, or a query finished its first mini-batch
 * (the end of its fair share, ReLAQS Sec. 4.2.3), since the last
 * slaq_sched_allocate(). A driver that can re-divide between epochs (the
 * simulator) asks this after every event; 0 after an allocation.
 */
int slaq_sched_due(const slaq_sched *s);
slaq_job *slaq_sched_job(const slaq_sched *s, size_t i); /* order may change
                                                            on removal */

/* ------------------------------------------------------------------ nodes */

/*
 * A scheduler's nodes are numbered from 0 in the order they were made:
 * config.nodes at slaq_sched_new(), then one per slaq_sched_add_node().
 * Nodes are never removed; a node with 0 cores (down, or drained) takes no
 * new jobs and gives its jobs no cores. Every epoch first starts pending
 * jobs, in queue order (slaq_sched_set_pend_order: arrival order unless
 * a driver says otherwise), each that fits on a node that no job ahead of
 * it waits for; the rest keep waiting in order. A waiting job waits for the
 * nodes it could run on once they have room (its pin, or any node) that
 * are up and large enough for its minimum share: a job pinned to a node
 * that is down or too small holds up no job behind it.
 */
size_t slaq_sched_node_count(const slaq_sched *s);
/* Adds a node of `cores` (>= 0) cores; returns its index, or SLAQ_EINVAL
 * or SLAQ_ENOMEM (negative). */
int slaq_sched_add_node(slaq_sched *s, double cores);
/* Changes a node's cores (>= 0; 0: down). Its jobs stay on it: a driver
 * that loses a node removes them or re-places them (slaq_sched_replace).
 * SLAQ_EINVAL for a node out of range or bad cores. */
int slaq_sched_set_node_cores(slaq_sched *s, size_t node, double cores);
double slaq_sched_node_cores(const slaq_sched *s, size_t node);
size_t slaq_sched_node_jobs(const slaq_sched *s, size_t node);
/* Cores the node's jobs were given at the last epoch. */
double slaq_sched_node_alloc(const slaq_sched *s, size_t node);

/*
 * The order the pending queue is tried in at each epoch: cmp returns < 0
 * when a should be tried before b, > 0 after, 0 for no preference (then
 * arrival order). NULL (the default): arrival order. The scheduler's own
 * rule comes first: a job that jobs arriving after it have passed for
 * config.starvation.st seconds or more goes before every other job, the
 * one passed longest first, and holds the nodes it could run on (see
 * above) until it starts. cmp must be a strict weak order at each `now`;
 * arg is passed through.
 */
typedef int (*slaq_pend_cmp)(const slaq_job *a, const slaq_job *b,
                             double now, void *arg);
void slaq_sched_set_pend_order(slaq_sched *s, slaq_pend_cmp cmp, void *arg);
/* When jobs arriving after j first started while it waited: since then
 * its wait counts towards config.starvation.st (NAN: never passed). */
double slaq_job_passed_since(const slaq_job *j);

/* Jobs waiting for room, and the i-th of them in queue order (NULL if
 * out of range). */
size_t slaq_sched_pending(const slaq_sched *s);
slaq_job *slaq_sched_pending_job(const slaq_sched *s, size_t i);

/* The node a job is on, or SLAQ_NODE_PENDING while it waits. */
int slaq_job_node(const slaq_job *j);

/*
 * Takes a job off its node and places it again as if it had just arrived
 * (pinned jobs: on their pin), keeping its history: for a job whose node
 * went down and that restarts elsewhere. It waits at the end of the
 * pending queue when it fits nowhere. Returns SLAQ_OK.
 */
int slaq_sched_replace(slaq_sched *s, slaq_job *j);

/*
 * Takes a placed job off its node and puts it on `node`, keeping its
 * history: a move a driver has carried out (the job was stopped on its
 * node and started on the other). The node's room is not checked (the
 * driver decided; the next epoch divides that node's cores with it among
 * them); a job pinned to its node is pinned to the new one. Returns
 * SLAQ_OK, or SLAQ_EINVAL for a node out of range or a job still waiting
 * in the pending queue.
 */
int slaq_sched_move(slaq_sched *s, slaq_job *j, size_t node);

/*
 * Each job's key under the scheduler's policy (slaq_policy_keys), as the
 * last epoch saw the jobs: key[i] is slaq_sched_job(s, i)'s, for the
 * slaq_sched_count(s) jobs. Valid between an epoch and the next change
 * of the job set (a driver planning moves right after the epoch). Errors
 * as slaq_policy_keys().
 */
int slaq_sched_keys(slaq_sched *s, double *key);

/*
 * Each job's estimated seconds left on its max_cores as the last epoch's
 * priority policies saw it (slaq_pjob.remaining_s: from its declared
 * iterations and CPU time per iteration; INFINITY when unknown):
 * out[i] is slaq_sched_job(s, i)'s. Valid as slaq_sched_keys() is.
 */
void slaq_sched_remaining(const slaq_sched *s, double *out);

/*
 * A job's report: appended to its history, its runtime model updated, its
 * tokens consumed. Errors as slaq_history_add(); nothing changes on error.
 */
int slaq_job_report(slaq_job *j, const slaq_report *r);

/*
 * slaq_job_report() of a report that says how it ran: the iterations
 * since the previous report ran `threads` worker threads (>= 1) and took
 * `wall_s` seconds (0: the gap r->t − the previous report's t). Feeds the
 * job's scaling model (slaq/scaling.h) with the job's share of the epoch
 * the report ends. A report without threads (0), a first report, or one
 * of a job with no share yet is only slaq_job_report(). Errors as that.
 */
int slaq_job_report_scaling(slaq_job *j, const slaq_report *r,
                            double threads, double wall_s);

/* The job's scaling model (slaq/scaling.h). */
const slaq_scaling *slaq_job_scaling(const slaq_job *j);

/* The worker threads to advise the job on a share of `cores` cores:
 * slaq_scaling_threads() of its model; the same whatever the policy. */
int slaq_job_threads(const slaq_job *j, double cores);

/*
 * A query's report after mini-batch r->iter (1-based, the next one): its
 * estimates x[0..n-1] (NAN: no value yet), r->cpu_s, r->samples (rows)
 * and r->t. The job's history receives the report with the loss set to
 * the progress metric P (1 until P exists), so displays that read the
 * history show a query's P falling. SLAQ_EINVAL for a job that is not a
 * query, and as slaq_query_add; nothing changes on error.
 */
int slaq_job_report_estimates(slaq_job *j, const slaq_report *r,
                              const double *x, size_t n);
/* slaq_query_resume() of a query job (SLAQ_EINVAL for other jobs). */
int slaq_job_query_resume(slaq_job *j, uint64_t after);
int slaq_job_kind(const slaq_job *j);
/* The query's state (NULL for other jobs). */
const slaq_query *slaq_job_query(const slaq_job *j);

/*
 * The epoch (the one call a driver makes each epoch, or when jobs arrive
 * or leave): refits the predictor of every job that reported since its last
 * fit, computes where each job is now (its last report plus the progress
 * its allocation has made since, at the predicted iteration time), divides
 * the ML capacity with the policy, and refills every job's tokens for an
 * epoch of config.epoch_s seconds. `now` is on the reports' clock.
 */
int slaq_sched_epoch(slaq_sched *s, double now);

/* The two halves of slaq_sched_epoch(), for drivers that time them
 * separately (benchmarks): refit the predictors with new reports, then
 * place, allocate and refill. epoch == refit + allocate. */
void slaq_sched_refit(slaq_sched *s);
int slaq_sched_allocate(slaq_sched *s, double now);
/* At most slaq_sched_config.max_fits jobs are refitted per call, those
 * whose reports are oldest first; the others wait for the next call. */
size_t slaq_sched_refits(const slaq_sched *s);        /* done by the last */
size_t slaq_sched_refit_backlog(const slaq_sched *s); /* jobs still due */
/* Refits job j now if it has reports its forecast has not seen (a driver
 * about to read a finishing job's reduction). */
void slaq_job_refit(slaq_job *j);

double slaq_job_alloc(const slaq_job *j);       /* cores from the last epoch */
/* The longest time job j has spent at the minimum share while still
 * improving (config.starve_s's clock), up to now, in seconds; and how
 * many times it was lifted to its fair share. */
double slaq_job_starved_max(const slaq_job *j, double now);
unsigned slaq_job_lifts(const slaq_job *j);
double slaq_job_gain(const slaq_job *j);        /* predicted normalised loss
                                                   reduction this epoch */
const slaq_history *slaq_job_history(const slaq_job *j);
const slaq_predictor *slaq_job_predictor(const slaq_job *j);
const slaq_runtime *slaq_job_runtime(const slaq_job *j);
const slaq_tokens *slaq_job_tokens(const slaq_job *j);
int slaq_job_throttled(const slaq_job *j);
double slaq_job_weight(const slaq_job *j);
double slaq_job_max_cores(const slaq_job *j);
double slaq_job_arrival(const slaq_job *j);
void slaq_job_set_weight(slaq_job *j, double weight);       /* > 0 */
void slaq_job_set_max_cores(slaq_job *j, double max_cores); /* > 0 */
void *slaq_job_user(const slaq_job *j);
/* The job's user under shares (slaq_job_opts.tenant); setting it
 * returns SLAQ_EINVAL (nothing changed) for an id that is not a user of
 * the scheduler's tree while one is set. */
int slaq_job_tenant(const slaq_job *j);
int slaq_job_set_tenant(slaq_job *j, int tenant);
const slaq_goal *slaq_job_goal(const slaq_job *j);

/*
 * Whether the last epoch ended the job, and by which of its rules: the
 * epoch decides, the driver stops the job (slaqd with the verdict's name
 * as the stop's reason). In order:
 *
 *   SLAQ_VERDICT_TARGET    its loss reduction (slaq_job_reduction) has
 *                          reached its target (slaq_job_opts.target,
 *                          slaq submit --target-reduction), after at
 *                          least 3 reports;
 *   SLAQ_VERDICT_ACCURACY  MLF-C, under a policy of load control: the
 *                          cluster is overloaded and its last metric
 *                          (slaq_job_set_metric) meets its goal's
 *                          required accuracy (slaq/deadline.h);
 *   SLAQ_VERDICT_OPTSTOP   MLF-C: its rule is optstop and its last
 *                          losses have flattened;
 *   SLAQ_VERDICT_RUN       none: it runs on (also before the first
 *                          epoch).
 */
typedef enum slaq_verdict {
    SLAQ_VERDICT_RUN = 0,
    SLAQ_VERDICT_TARGET,
    SLAQ_VERDICT_ACCURACY,
    SLAQ_VERDICT_OPTSTOP,
} slaq_verdict;

slaq_verdict slaq_job_verdict(const slaq_job *j);
/* The verdict's name, a stop's reason: "run", "target_reduction",
 * "accuracy_met", "optstop"; "?" for none. */
const char *slaq_verdict_name(slaq_verdict v);
/* The job's last reported metric (an accuracy, or whatever its goal's
 * accuracy is judged on); NAN: none, never met. */
void slaq_job_set_metric(slaq_job *j, double value);

/*
 * Declares the job's convergence class (see slaq_job_opts) after it was
 * added, e.g. when a job tells slaqd in its hello: the job's predictor is
 * made anew for that class and refits at the next epoch. SLAQ_EINVAL for
 * a value out of range, SLAQ_ENOMEM (the old predictor is kept).
 */
int slaq_job_set_convergence(slaq_job *j, slaq_convergence c);
slaq_convergence slaq_job_convergence(const slaq_job *j);

/* Sets the iterations the job will run (0: unknown); see slaq_job_opts. */
void slaq_job_set_iters(slaq_job *j, uint64_t iters);
uint64_t slaq_job_iters(const slaq_job *j);

/*
 * The job's predicted loss at its end: the forecast at its last iteration
 * when the job declared how many it runs, else the forecast's asymptote;
 * of the last 12 fits' predictions the lowest (one early fit that calls
 * the job nearly done must not make it "reached"); never above the last
 * reported loss. NAN before two reports and before the first epoch has
 * fitted them.
 */
double slaq_job_end_loss(const slaq_job *j);

/*
 * The job's loss reduction so far as a fraction of its predicted total,
 * (L(0) − L_last) / (L(0) − slaq_job_end_loss()), in [0, 1]; 0 before two
 * reports. What "stop at 95% loss reduction" targets, `slaq ls` and the
 * dashboard use.
 */
double slaq_job_reduction(const slaq_job *j);

/*
 * The normalised loss of docs/metrics.md, ℓ = (loss − end) / (first − end),
 * kept in [0, 1], for any loss of a job whose first loss is `first` and
 * whose L_end is taken to be `end`: 1 when first − end is not positive (a
 * curve that never fell), NAN when an argument is NAN. With the job's last
 * loss and slaq_job_end_loss() it is 1 − slaq_job_reduction(); slaqd draws
 * a job's whole loss curve with the newest end, so that a refit rescales
 * the line instead of breaking it.
 */
double slaq_norm_loss(double loss, double first, double end);

/*
 * Predicted iterations after the last report until the job's reduction
 * reaches `target` (in (0, 1]): 0 if it already has, INFINITY if the
 * forecast never gets there (at most the iterations left, for a job that
 * declared its length), NAN before the end is known.
 */
double slaq_job_iters_to(const slaq_job *j, double target);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_SLAQ_H */
