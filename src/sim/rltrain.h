/*
 * rltrain.h — training MLF-RL's network (include/slaq/deadline.h) in the
 * deadline simulator (dlsim.h): `slaq sim --deadlines --train mlfs-rl`.
 *
 * Two phases, both on generated workloads of the tuning seeds only
 * (docs/deadlines.md, "MLF-RL"):
 *
 *  1. Imitation of MLF-H. mlfs-h runs each tuning workload; at every
 *     round the active jobs' features and MLF-H's priorities are kept,
 *     and the network is fitted to the priorities (mean squared error,
 *     Adam) so that its scores order the jobs as MLF-H does.
 *  2. REINFORCE with a baseline on Eq. 7's reward. mlfs-rl runs each
 *     workload twice per iteration: once with Gaussian noise of sd sigma
 *     added to the score of every job that holds no cores (the
 *     stochastic policy: the action is the order those keys give the
 *     pending queue, which the free nodes take) and once without,
 *     the baseline. A round's reward r_t is Eq. 7 over the jobs that
 *     ended in it; its return G_t = Σ η^i r_{t+i}; the advantage is G_t
 *     minus the noise-free run's return at the same round. The gradient
 *     Σ_t A_t Σ_j (ε_j / σ²) ∂s_j/∂θ goes to Adam.
 *
 * The model kept is the one whose noise-free runs had the largest total
 * reward (the imitation's, if no iteration beats it). Everything is drawn
 * from the seed: the same options give the same model, bit for bit.
 */
#ifndef SLAQ_SIM_RLTRAIN_H
#define SLAQ_SIM_RLTRAIN_H

#include <stdio.h>

#include "sim/dlsim.h"

/* Eq. 7's weights (MLFS §4.1) and discount. */
#define RL_BETA_JCT 0.5
#define RL_BETA_DEADLINE 0.55
#define RL_BETA_BANDWIDTH 0.25
#define RL_BETA_ACC_MET 0.15
#define RL_BETA_ACC 0.15
#define RL_ETA 0.95

typedef struct rl_train_opts {
    size_t jobs;            /* per generated workload */
    double load, dscale;    /* as dl_generate takes them */
    dl_req req;
    unsigned long seed;     /* >= 1: tuning workloads 1000·seed + 1 .. */
    size_t workloads;       /* tuning workloads (default 2) */
    size_t imitate_epochs;  /* passes over MLF-H's states (default 40) */
    size_t iterations;      /* REINFORCE iterations (default 30) */
    double sigma;           /* exploration noise on the scores (0.05) */
    double lr_imitate, lr_rl; /* Adam's step sizes (0.01, 0.005) */
} rl_train_opts;

void rl_train_opts_init(rl_train_opts *o);

/* Eq. 7's reward of one job that ended: its share of a round's reward,
 * before dividing by the workload's jobs (rltrain.c says how each g_i is
 * normalised). */
double rl_job_reward(double jct, int met, int acc_met, double acc);

/*
 * Trains a network on the cluster and settings of `base` (its policy is
 * ignored). Progress lines go to `progress` (NULL: none). Returns 0 with
 * the model in *out and, in *best_reward, the mean reward per job of its
 * noise-free runs; -1 with a message.
 */
int rl_train(const rl_train_opts *o, const curve_set *cs,
             const dl_config *base, slaq_rl_model *out, double *best_reward,
             FILE *progress, char *err, size_t errlen);

#endif
