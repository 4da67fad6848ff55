/*
 * sweep.h — hyperparameter sweeps in libslaq: learning-curve probabilities
 * and the policies that decide, epoch by epoch, which configurations of a
 * sweep run, wait or die.
 *
 * A sweep is N configurations of one training command, S slots to run
 * them (one configuration per slot at a time), a metric the user follows
 * (validation accuracy, or a loss) and a target y_target. The goal is the
 * earliest time at which any configuration reaches the target.
 *
 * Every epoch in this header is a training epoch, one pass of a
 * configuration over its data (`train_epoch`), never the scheduler's
 * epoch (docs/glossary.md).
 *
 * Two layers, each usable on its own:
 *
 *   slaq_lcurve   one configuration's learning curve y(1..n) -> the
 *                 probability P(y(m) >= y_target) for future epochs m.
 *                 An ensemble of eleven parametric curve families (Domhan,
 *                 Springenberg and Hutter, IJCAI'15), each fitted by least
 *                 squares, with a Laplace (Gaussian) posterior around its
 *                 fit, the families weighted by a tempered BIC, and a
 *                 "stopped" hypothesis for curves that have levelled off.
 *                 See docs/sweeps.md.
 *
 *   slaq_sweep    a policy over N configurations and S slots. The caller
 *                 (slaqd's `slaq sweep`, or the simulator) owns the clock
 *                 and the processes, and drives the policy with three calls:
 *
 *                   slaq_sweep_next(s, now)        a slot is idle: which
 *                       configuration should it start or resume?
 *                   slaq_sweep_report(s, i, ...)   configuration i finished
 *                       an epoch: continue, suspend or kill it?
 *                   slaq_sweep_ended(s, i, now)    i ended by itself (ran
 *                       all its epochs, or failed).
 *
 *                 Policies: "pop" (HyperDrive's POP), "pop-keep" (POP
 *                 keeping a promising configuration's slot while it
 *                 still rises on course for the target), "pop-early"
 *                 (pop-keep, with POP's kill rules applied once more
 *                 at epoch floor(0.4 b), before the first boundary),
 *                 "default" (every
 *                 configuration to its end), "bandit" (TuPAQ's action
 *                 elimination), "earlyterm" (Domhan's predictive
 *                 termination), "sh" (asynchronous successive halving) and
 *                 "hyperband". Each is one file in src/core/ behind
 *                 slaq_sweep_policy (src/core/sweep_internal.h).
 *
 * Metrics are oriented inside the library: for a metric that falls (a
 * loss), set maximize = 0 and every value and threshold is negated
 * internally; callers always pass and receive the metric as reported.
 *
 * Pure like the rest of libslaq: no I/O, no clock (now is a parameter), no
 * global state. Errors are negative SLAQ_E* codes (slaq.h).
 */
#ifndef SLAQ_SWEEP_H
#define SLAQ_SWEEP_H

#include <stddef.h>

#include "slaq/slaq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ learning curves */

/* The curve families, in the order of slaq_lcurve_family_name(). */
#define SLAQ_LCURVE_FAMILIES 11

typedef struct slaq_lcurve_opts {
    /* Multiplies the parameter-uncertainty part of the predictive
     * variance (1 = the plain Laplace posterior); 0 selects the default
     * (2). `slaq sim --sweep TRACES --calib` chooses it on one half of a
     * recorded sweep and reports on the other (docs/sweeps.md). */
    double inflate;
    /* Smallest noise standard deviation assumed for an observation (the
     * metric's own jitter: 1-2% accuracy between identical runs); 0 selects
     * the default SLAQ_LCURVE_SIGMA_MIN_DEFAULT (0.005). */
    double sigma_min;
    /* Bitmask of families to use (bit f = family f); 0 = all. */
    unsigned families;
    /* How the families are weighted: 0 by the tempered BIC below (the
     * default), 1 by exp(-BIC/2) (temper = 1). */
    int bic_weights;
    /* Temperature of the family weights exp(-(BIC_k - BIC_min) / (2 T)):
     * 1 is plain BIC (the posterior collapses onto the family that fits
     * the points seen so far best: the residuals of a learning curve are
     * correlated, so n points carry far less than n points' evidence),
     * INFINITY weighs the families equally. 0 selects the default
     * (SLAQ_LCURVE_TEMPER_DEFAULT); negative is an error. Chosen on held-out
     * traces like inflate. */
    double temper;
    /* When has_upper: the metric cannot exceed `upper` (accuracy: 1; as
     * passed, i.e. after negating a loss). A family whose prediction at the
     * queried epoch lies above it is left out of that prediction, as
     * Domhan et al.'s prior rejects such curves. */
    int has_upper;
    double upper;
    /* Evidence that the curve has stopped (docs/sweeps.md, "A curve that
     * has levelled off"). Beside the families, the model holds a
     * "stopped" hypothesis: the curve stays at its last value. Its prior
     * probability is stop_prior; each family's probability of still
     * rising is discounted by exp(-k * slope_k / stall_tol), k the epochs
     * since the curve last rose by more than stall_tol and slope_k the
     * family's own slope at the last epoch: a family that expects the
     * curve to keep rising is contradicted by a long stall, one that
     * expects it to be flat is not. Applies to predictions beyond the last
     * epoch. stall_tol is in the metric's units; 0 selects the defaults
     * (SLAQ_LCURVE_STOP_PRIOR_DEFAULT, SLAQ_LCURVE_STALL_TOL_DEFAULT);
     * no_stall = 1 leaves the hypothesis out (the model before it). */
    double stop_prior;
    double stall_tol;
    int no_stall;
} slaq_lcurve_opts;

#define SLAQ_LCURVE_INFLATE_DEFAULT 2.0
#define SLAQ_LCURVE_SIGMA_MIN_DEFAULT 0.005
#define SLAQ_LCURVE_TEMPER_DEFAULT 16.0
#define SLAQ_LCURVE_STOP_PRIOR_DEFAULT 0.1
#define SLAQ_LCURVE_STALL_TOL_DEFAULT 0.00025

typedef struct slaq_lcurve slaq_lcurve;

/* A reusable model. opts may be NULL for the defaults. NULL when out of
 * memory or an option is out of range (inflate < 0, sigma_min < 0,
 * temper < 0, stop_prior outside [0, 1), stall_tol < 0). */
slaq_lcurve *slaq_lcurve_new(const slaq_lcurve_opts *opts);
void slaq_lcurve_free(slaq_lcurve *lc);

/*
 * Fits the model to y[0..n-1], the metric after epochs 1..n (higher is
 * better; NaN entries are skipped). Needs n >= 3 finite values:
 * SLAQ_ENODATA otherwise. SLAQ_EINVAL when y is NULL. Replaces any
 * previous fit.
 */
int slaq_lcurve_fit(slaq_lcurve *lc, const double *y, size_t n);

/* P(y(m) >= target) under the current fit, for the absolute epoch m >= 1
 * (m <= n is a prediction too: of a fresh observation at m). NaN before a
 * successful fit. */
double slaq_lcurve_prob(const slaq_lcurve *lc, double m, double target);

/* Mean and standard deviation of the predicted y(m) (mixture over the
 * families). Either pointer may be NULL. SLAQ_ENODATA before a fit. */
int slaq_lcurve_predict(const slaq_lcurve *lc, double m, double *mean,
                        double *sd);

/* Sets o's bound from the metric's name: a maximised metric named
 * "...accuracy..." cannot exceed 1 (has_upper = 1, upper = 1); any other
 * leaves o unchanged. */
void slaq_lcurve_bound_metric(slaq_lcurve_opts *o, const char *metric,
                              int maximize);

/* Weight of family f in the current fit (0 when it was not fitted), and
 * the family's name ("pow3", "weibull", ...; "?" when f is out of range). */
double slaq_lcurve_weight(const slaq_lcurve *lc, int f);
const char *slaq_lcurve_family_name(int f);

/* -------------------------------------------------------------- sweeps */

typedef enum slaq_sweep_action {
    SLAQ_SWEEP_CONTINUE = 0, /* keep training on this slot */
    SLAQ_SWEEP_SUSPEND = 1,  /* stop it now; it may be resumed later */
    SLAQ_SWEEP_KILL = 2,     /* stop it for good */
} slaq_sweep_action;

typedef enum slaq_sweep_state {
    SLAQ_CFG_NEW = 0,   /* never started */
    SLAQ_CFG_RUNNING,   /* on a slot */
    SLAQ_CFG_SUSPENDED, /* started, waiting for a slot */
    SLAQ_CFG_KILLED,    /* stopped by the policy */
    SLAQ_CFG_ENDED,     /* ran to its end (or failed) by itself */
} slaq_sweep_state;

/* POP's classes (other policies leave every configuration UNKNOWN). */
typedef enum slaq_sweep_class {
    SLAQ_CLASS_UNKNOWN = 0,
    SLAQ_CLASS_PROMISING,
    SLAQ_CLASS_OPPORTUNISTIC,
    SLAQ_CLASS_POOR,
} slaq_sweep_class;

typedef struct slaq_sweep_params {
    size_t slots;         /* S >= 1 */
    int max_epochs;       /* epochs of a configuration run to its end */
    double y_target;      /* the target metric */
    int maximize;         /* 1: higher is better (accuracy); 0: a loss */
    double t_max;         /* POP: the time budget T_max (> 0, caller's clock) */
    double kill_threshold;/* POP: kill when the best metric has not passed
                           * it at a boundary; NaN = none */
    int b;                /* evaluation boundary in epochs; 0 = the
                           * policy's default (POP/bandit 10, earlyterm 30) */
    int k;                /* POP: slots per promising configuration (1) */
    double p_kill;        /* POP: kill below this p (0 = 0.05) */
    double reeval;        /* POP: at a configuration's boundary, every
                           * other active configuration's p is estimated
                           * again if this many seconds have passed since
                           * the last time (0 = b epochs of the
                           * configuration at its boundary; < 0 = never:
                           * each p only at its own boundary) */
    double eps;           /* bandit: epsilon (0 = 0.5) */
    double delta;         /* earlyterm: delta (0 = 0.05) */
    int eta;              /* sh/hyperband: reduction factor (0 = 3) */
    int min_epochs;       /* sh/hyperband: first rung (0 = 1) */
    slaq_lcurve_opts lcurve; /* POP and earlyterm's curve model */
    /* Analysis only, NULL in real sweeps. When set, the policies that use
     * the curve model (pop, pop-keep, pop-early, earlyterm) ask it instead:
     * oracle(oracle_ctx, i, m) is the metric configuration i will report
     * at epoch m (1-based, as reported; NaN past its last epoch), as a
     * recorded trace knows it. Their probabilities become 1 or 0: perfect
     * foresight, which separates what a better curve model could gain
     * from what the policy's own rules cost (slaq sim --sweep's
     * POLICY+oracle rows). slaq_sweep_new refuses it for a policy without
     * a model. */
    double (*oracle)(void *oracle_ctx, size_t i, int m);
    void *oracle_ctx;
} slaq_sweep_params;

/* Fills p with the defaults for `slots` and `max_epochs` (maximize = 1,
 * kill_threshold = NaN, every 0-means-default field 0, y_target = NaN and
 * t_max = 0 to be set by the caller). */
void slaq_sweep_params_init(slaq_sweep_params *p, size_t slots, int max_epochs);

/* What a policy knows about one configuration. */
typedef struct slaq_sweep_info {
    slaq_sweep_state state;
    slaq_sweep_class cls;
    int epochs;      /* epochs reported so far */
    double best;     /* best metric so far (as reported); NaN before any */
    double last;     /* latest metric; NaN before any */
    double p;        /* POP: confidence p of reaching y_target within
                      * T_max; earlyterm: P(beating the best); NaN if none */
    double ert;      /* POP: expected remaining time; NaN if none */
    double train_epoch_s; /* mean training epoch's duration so far; NaN
                             before any */
} slaq_sweep_info;

typedef struct slaq_sweep slaq_sweep;

/* Names of the built-in policies, NULL-terminated. */
extern const char *const slaq_sweep_policies[];

/*
 * A sweep of n_configs configurations (indexed 0..n-1, in the order the
 * generator produced them: policies start new configurations in that
 * order) under the named policy. NULL on error with a message in err
 * (unknown policy, a parameter out of range: which one and why).
 */
slaq_sweep *slaq_sweep_new(const char *policy, const slaq_sweep_params *p,
                           size_t n_configs, char *err, size_t errlen);
void slaq_sweep_free(slaq_sweep *s);
const char *slaq_sweep_policy_name(const slaq_sweep *s);

/*
 * A slot is idle at time `now`: the configuration it should run next
 * (start it if its state is SLAQ_CFG_NEW, resume it if SUSPENDED), marked
 * RUNNING; or (size_t)-1 when none should (every configuration is running,
 * killed or ended, or the policy holds the rest back).
 */
size_t slaq_sweep_next(slaq_sweep *s, double now);

/*
 * Configuration i (RUNNING) finished training epoch `train_epoch`
 * (1-based, increasing) with `metric`, the training epoch having taken
 * train_epoch_s seconds. Returns the action (>= 0), or SLAQ_EINVAL (i out
 * of range, not running, train_epoch not after the last, metric NaN...).
 * On SUSPEND and KILL the state changes to SUSPENDED / KILLED at once; the
 * caller stops the process.
 */
int slaq_sweep_report(slaq_sweep *s, size_t i, int train_epoch,
                      double metric, double train_epoch_s, double now);

/* Configuration i stopped by itself (its last epoch, or a failure): it
 * becomes ENDED and its slot is free. SLAQ_EINVAL if i is out of range. */
int slaq_sweep_ended(slaq_sweep *s, size_t i, double now);

/* State of configuration i; SLAQ_EINVAL if out of range. */
int slaq_sweep_get(const slaq_sweep *s, size_t i, slaq_sweep_info *out);
size_t slaq_sweep_count(const slaq_sweep *s);

/* POP's current dynamic threshold p* and promising slot count
 * S_promising (NaN / 0 for other policies or before any evaluation). */
double slaq_sweep_threshold(const slaq_sweep *s, double *s_promising);

#ifdef __cplusplus
}
#endif

#endif
