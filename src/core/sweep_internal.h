/*
 * sweep_internal.h — what a sweep policy sees: the shared per-configuration
 * state kept by sweep.c, and the policy interface. A policy is one file
 * (sweep_pop.c, sweep_bandit.c, ...) defining one slaq_sweep_policy; add it
 * to the table in sweep.c and to slaq_sweep_policies.
 */
#ifndef SLAQ_SWEEP_INTERNAL_H
#define SLAQ_SWEEP_INTERNAL_H

#include <stdint.h>

#include "slaq/sweep.h"

/* One configuration. Metric values are oriented: higher is better. */
struct sw_cfg {
    slaq_sweep_state state;
    slaq_sweep_class cls;
    int epochs;
    double *y;          /* y[0..epochs-1], oriented */
    double best, last;  /* oriented; -INFINITY before any report */
    double train_epoch_sum;   /* seconds over all reported epochs */
    double p, ert;      /* the policy's estimates (NaN when none) */
    int p_epochs;       /* POP: epochs when p was last estimated (0: never) */
    double p_M;         /* POP: the horizon M of that estimate */
    double prio;        /* idle-queue priority: higher first; NaN = FIFO */
    uint64_t seq;       /* FIFO position in the idle queue */
    int bracket;        /* hyperband's bracket of this configuration */
    int held;           /* pop-keep: holds a dedicated slot */
};

struct slaq_sweep_policy;

struct slaq_sweep {
    const struct slaq_sweep_policy *pol;
    slaq_sweep_params prm;
    double target;      /* y_target, oriented */
    double kill;        /* kill_threshold, oriented (NaN = none) */
    size_t n;
    struct sw_cfg *cfg;
    uint64_t seq;       /* next FIFO number */
    double gbest;       /* best oriented metric of any configuration */
    double threshold, s_promising; /* POP's last p* and S_promising */
    slaq_lcurve *lc;    /* the curve model (POP, earlyterm) */
    /* With prm.oracle: the configuration and curve of the last
     * sw_model_fit, which sw_model_prob answers for. */
    size_t oracle_i;
    int oracle_best;
    void *priv;         /* the policy's own state */
    /* 1: fresh configurations join the idle queue's FIFO one at a time
     * (the next one when the previous one leaves it), so suspended
     * configurations and fresh ones take turns in one round robin (POP);
     * 0: every fresh configuration is ahead of every suspended one. */
    int fresh_in_turn;
};

/* seq of a fresh configuration not yet in the idle queue (fresh_in_turn). */
#define SW_SEQ_UNQUEUED (UINT64_MAX >> 1)

struct slaq_sweep_policy {
    const char *name;
    int default_b;
    int model;       /* 1: uses the learning-curve model (s->lc) */
    int needs_t_max; /* 1: needs the time budget t_max > 0 */
    /* Optional: set up s->priv; 0 or a negative SLAQ_E* code. */
    int (*init)(slaq_sweep *s, char *err, size_t errlen);
    void (*destroy)(slaq_sweep *s);
    /* Configuration i (just updated with its epoch) asks what next. */
    slaq_sweep_action (*on_train_epoch)(slaq_sweep *s, size_t i, double now);
};

extern const struct slaq_sweep_policy sw_policy_default, sw_policy_pop,
    sw_policy_pop_keep, sw_policy_pop_early, sw_policy_bandit,
    sw_policy_earlyterm, sw_policy_sh, sw_policy_hyperband;

/* POP's steps, shared by pop, pop-keep and pop-early (sweep_pop.c). */
int sw_pop_init(slaq_sweep *s, char *err, size_t errlen);
void sw_pop_destroy(slaq_sweep *s);
double sw_pop_horizon(const slaq_sweep *s, const struct sw_cfg *c, double now);
/* The promising pool's size in configurations for S_promising slots. */
size_t sw_pop_pool(double s_promising, size_t slots, int k);
slaq_sweep_action sw_pop_judge(slaq_sweep *s, struct sw_cfg *c, double now);

/* Helpers shared by the policies (sweep.c). */
int sw_boundary(const slaq_sweep *s, const struct sw_cfg *c);
size_t sw_waiting(const slaq_sweep *s);
double sw_train_epoch_mean(const struct sw_cfg *c);

/* The curve model, or the oracle in its place (prm.oracle). sw_model_fit
 * fits configuration c's curve y[0..n-1] (oriented; best = 1 when it is
 * the best-so-far curve): 0, or a negative SLAQ_E* code when it cannot be
 * fitted. sw_model_prob is then P(y(m) >= level) for the absolute epoch m
 * (level oriented); with the oracle, 1 or 0 from the configuration's true
 * curve (its best up to m, or its value at m or at its last epoch before
 * m). */
int sw_model_fit(slaq_sweep *s, const struct sw_cfg *c, const double *y,
                 int n, int best);
double sw_model_prob(const slaq_sweep *s, double m, double level);

#endif
