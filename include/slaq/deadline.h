/*
 * deadline.h — MLFS's pieces in libslaq: the MLF-H priority, the ideal
 * virtual host and task of its placement and moves, and MLF-C's load
 * control (Wang, Liu and Shen, "Job Scheduling for Large-Scale Machine
 * Learning Clusters", CoNEXT'20). docs/deadlines.md describes them and
 * how slaq reads the paper where it is silent.
 *
 * Like the rest of libslaq these are pure functions: no I/O, no clock
 * (time is slaq_pjob.now), no globals, and no allocation (the caller
 * hands the scratch). The share policies edf, tiresias, mlfs-h, mlfs-rl
 * and mlfs (slaq.h) order jobs by slaq_policy_keys(); a driver (slaqd,
 * or a slaq_sched made MLFS's cluster, below) places pending jobs and
 * moves running ones with the functions below when slaq_policy_moves()
 * says the policy does, and stops jobs with slaq_mlfc_decide() when
 * slaq_policy_load_control() says so. MLF-RL (mlfs-rl) is a row of the policy table whose keys are the
 * scores of a small network (slaq_rl_model, below) over the same
 * normalised features; mlfs, the paper's MLFS, is MLF-RL with MLF-C.
 */
#ifndef SLAQ_DEADLINE_H
#define SLAQ_DEADLINE_H

#include "slaq/slaq.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * MLF-H's priority of n jobs (Eq. 2-6), into key[0..n):
 *
 *   P'ML = L · (1/I) · (δl_{I−1} / Σ δl) · S      (2)   S = 1 per job
 *   P'C  = γd / (d − t) + γr / r + γw · w          (4)
 *   P    = α · PML + (1 − α) · PC                  (6)
 *
 * The paper mixes units (urgency levels, 1/seconds, seconds); slaq
 * normalises every factor and term over the n jobs given, dividing it by
 * its largest value among them, so each lies in [0, 1] and the weights
 * mean what they say: L by the largest urgency, 1/I by the largest (the
 * job with fewest iterations has 1), the recent loss reduction δl_{I−1}
 * / Σ δl (clamped to [0, 1]; 1 before the second iteration, when the sum
 * is empty) by the largest. The time terms 1/(d − t), 1/r and w + eps_s
 * are placed on a logarithmic scale between their smallest and largest
 * values among the jobs (0 to 1; a range narrower than a factor of 2
 * counts as 2). d − t and r are at least params->eps_s. A job without a
 * deadline, or whose deadline it can no longer meet (d − t < r), has a
 * deadline term of 0.
 *
 * A data-parallel job's workers are its tasks (Eq. 3 and 5 with no
 * dependants): each of its k workers has S = 1/k, so the job's P, the
 * sum over its tasks, is the formula above with S = 1 (slaq_mlfs_dag
 * is the general recursion, and the tests check the two agree).
 */
void slaq_mlfs_priority(const slaq_pjob *jobs, size_t n,
                        const slaq_prio_params *params, double *key);

/*
 * Eq. 3 / Eq. 5 over one job's task graph: out[k] = base[k] + gamma ·
 * Σ_{c ∈ child(k)} out[c]. Task k's children are child[off[k] ..
 * off[k+1]), each of a larger index than k (tasks in topological order),
 * so one pass from the last task computes every value (a task reached
 * by several paths counts once per path, as the recursion says). Returns
 * SLAQ_EINVAL for a child index not above its parent or out of range,
 * gamma outside [0, 1].
 */
int slaq_mlfs_dag(const double *base, const size_t *off, const size_t *child,
                  size_t ntasks, double gamma, double *out);

/*
 * One node as MLFS's placement sees it: its capacities and what the jobs
 * placed on it use (cores: their max_cores, memory: their demand).
 * Utilisation u_m = use_m / cap_m; a node is overloaded when some u_m >
 * h_r (RIAL's definition, MLFS §3.3.2).
 */
typedef struct slaq_node_use {
    double cores, mem;         /* capacities (> 0) */
    double use_cores, use_mem; /* demand of the jobs on it (>= 0) */
} slaq_node_use;

int slaq_node_overloaded(const slaq_node_use *v, double h_r);

/*
 * Where a job goes under a policy without MLFS's placement (edf,
 * tiresias): the node with the most free memory on which the job's
 * memory `mem` fits (cores may be oversubscribed: the jobs of a node
 * share them by the policy), ties to the lower index; -1 if none.
 */
long slaq_node_most_free(const slaq_node_use *nodes, size_t nn, double mem);

/*
 * The ideal virtual host (MLFS §3.3.2, after RIAL): among the candidate
 * nodes — underloaded ones (every u_m <= h_r) other than `except` (-1:
 * none) on which the job's memory fits (u_mem + need_mem <= h_r) — the
 * one whose utilisation vector (u_cores, u_mem) is nearest, in Euclidean
 * distance, to the vector of the smallest utilisation of each resource
 * among the candidates. The paper's two further dimensions, the job's
 * traffic with tasks already on a node and the degradation a move
 * causes, are the same on every node for a data-parallel job whose
 * workers run together (no tasks of it are on any node yet; a move
 * costs the same wherever it goes) and so drop out. strict != 0 asks
 * also that the node stays underloaded in cores after taking the job
 * (the paper's "will not be overloaded by hosting the task"; the
 * simulator places and moves with it: a job waits in the queue, where
 * any node that frees cores can take it, rather than on a full node);
 * strict == 0 lets cores be oversubscribed, the jobs of a node sharing
 * them by the policy. An empty node takes any job whose memory fits it
 * at all, or a job larger than h_r of a node would never run. Returns
 * the node, or -1 if no candidate exists. Ties go to the lower index.
 */
long slaq_mlfs_host(const slaq_node_use *nodes, size_t nn, double need_cores,
                    double need_mem, double h_r, long except, int strict);

/* One job on a node, as MLFS's moves see it. */
typedef struct slaq_move_job {
    size_t node;    /* where it is */
    double cores;   /* its demand: max_cores */
    double mem;     /* its memory */
    double prio;    /* its key (slaq_policy_keys); lower moves first */
    int movable;    /* 0: may not move now (it moved recently, or its
                       driver cannot restart it elsewhere) */
} slaq_move_job;

/*
 * Plans MLF-H's moves off overloaded nodes (§3.3.3): for each
 * overloaded node, while it is overloaded, the candidates are the
 * lowest-priority ceil(p_s × its movable jobs) of them; among these the
 * one nearest the ideal virtual task (for each overloaded resource the
 * candidates' largest use, for each other resource their smallest: take
 * what relieves the hot resource and fragments the others least) moves
 * to slaq_mlfs_host(..., strict = 1). A candidate that no node can take
 * stays where it is (the paper's "moved back to the queue" read as not
 * moved: a stop and restart that gains nothing is not made) and the next
 * nearest is tried. nodes[] is updated with the planned moves. At most
 * `max` moves are written to move_job[] (an index into jobs) and
 * move_to[] (the node); scratch holds n entries. Returns the number of
 * moves, or SLAQ_EINVAL on a bad argument.
 */
long slaq_mlfs_moves(slaq_node_use *nodes, size_t nn,
                     const slaq_move_job *jobs, size_t n, double h_r,
                     double p_s, size_t *move_job, size_t *move_to,
                     size_t max, size_t *scratch);

/*
 * What a planned move gains the job it moves, in seconds of deadline
 * slack (the seconds by which its end comes sooner; the same whether or
 * not it has a deadline): slaq's test of a move's cost, which MLFS counts
 * but does not weigh. The job has remaining_s seconds of work left on its
 * max_cores; where it runs, its node's jobs ask for from_demand cores of
 * the node's from_cores (itself included), and where it would go
 * to_demand of to_cores (itself included). A node asked for more than it
 * has gives its jobs, on average, the share s = min(1, cores / demand) of
 * what they ask. The move stops the job for cost_s seconds (the mean of
 * the moves measured so far; NaN: none yet, counted as 0). The gain is
 *
 *     remaining_s / s_from - (cost_s + remaining_s / s_to)
 *
 * and a move whose gain is below 0 costs more than it gains. A job of
 * unknown length (remaining_s INFINITY) gains INFINITY from a larger
 * share and -cost_s otherwise. What the move gives the jobs it leaves on
 * the overloaded node is not counted: the rule is the moved job's own.
 * Returns NaN for capacities that are not positive, a negative demand,
 * remaining_s or cost_s, or a NaN argument other than cost_s.
 */
double slaq_mlfs_move_gain(double remaining_s, double from_cores,
                           double from_demand, double to_cores,
                           double to_demand, double cost_s);

/* One move slaq_mlfs_plan decided, weighed. */
typedef struct slaq_move {
    size_t job;  /* an index into the jobs given */
    size_t to;   /* the node it goes to */
    double gain; /* slaq_mlfs_move_gain: seconds by which its end comes
                    sooner (NaN: not known, e.g. no capacity) */
    int made;    /* 1: the driver makes it; 0: it costs more than it
                    gains, and nodes[] has the job back where it was */
} slaq_move;

/*
 * MLFS's moves for one epoch, decided: slaq_mlfs_moves' plan, each move
 * then weighed by slaq_mlfs_move_gain against cost_s (the mean stop of
 * the moves measured so far; NaN: none yet) on the nodes as they were
 * before the plan. With `weigh`, a move whose gain is below 0 is not
 * made (made = 0) and its demand goes back to the node it would have
 * left, in the plan's order; without, every planned move is made (the
 * paper's MLFS, which counts a move's cost but does not weigh it).
 * remaining_s[i] is job i's seconds of work left on its max_cores
 * (INFINITY: unknown). nodes[] ends with the moves made; before[] (nn
 * entries) is the caller's scratch and ends as the nodes were given;
 * scratch holds n + 2 × max entries. At most max moves are written to
 * moves[]. Returns how many, or SLAQ_EINVAL on a bad argument. slaqd's
 * controller and MLFS's cluster (slaq_sched_set_mlfs) apply what it
 * returns and decide nothing of their own.
 */
long slaq_mlfs_plan(slaq_node_use *nodes, slaq_node_use *before, size_t nn,
                    const slaq_move_job *jobs, const double *remaining_s,
                    size_t n, double h_r, double p_s, double cost_s,
                    int weigh, slaq_move *moves, size_t max,
                    size_t *scratch);

/*
 * The order of n jobs by their keys (slaq_policy_keys): order[0..n) the
 * job indices, the largest key first, a NaN key last, ties to the lower
 * index. rank[i], if rank is not NULL, is job i's place from 1. The
 * pending queue of the priority policies is placed in this order, and
 * slaqd shows a job's place (`slaq show`). No allocation.
 */
void slaq_key_order(const double *key, size_t n, size_t *order,
                    size_t *rank);

/*
 * MLF-C's test of overload (§3.5): jobs are waiting, or the cluster's
 * overload degree, the mean over nodes of ||U_s|| / √M (M = 2: cores and
 * memory; the paper's norm divided so that it lies in [0, 1] and h_s =
 * 90% means what it says), is above h_s.
 */
int slaq_mlfs_overloaded(const slaq_node_use *nodes, size_t nn,
                         size_t pending, double h_s);

/*
 * MLF-C's decision for one job (§3.5.4): 1 if it should stop now. A job
 * stops when the cluster is overloaded and its metric `value` meets its
 * required accuracy (slaq_goal_met with a required accuracy), or, with
 * `optstop`, at any load once its curve has flattened: the metric moved
 * by less than optstop_eps of its whole change so far over the last
 * `n` values recent[0..n) (oldest first; recent[n-1] is the current
 * value, first the value before training). OptStop (Domhan et al.)
 * fits a probabilistic learning-curve model; slaq's test is the plateau
 * rule the MLFS authors' own code uses, on the metric's recent values.
 */
/* OptStop's plateau, as slaqd and the simulator apply it: the last
 * SLAQ_MLFS_OPTSTOP_N values (rounds in the simulator, reports under
 * slaqd) moved by less than SLAQ_MLFS_OPTSTOP_EPS of the change so far. */
#define SLAQ_MLFS_OPTSTOP_N 10
#define SLAQ_MLFS_OPTSTOP_EPS 0.002
/* MLF-C's threshold of overload, h_s, as a slaq_sched applies it. */
#define SLAQ_MLFS_H_S 0.9

int slaq_mlfs_stop(const slaq_goal *goal, double value, int overloaded,
                   int optstop, double first, const double *recent, size_t n,
                   double optstop_eps);

/*
 * MLF-C's verdict for one job under its own stop rule (goal->stop;
 * docs/deadlines.md), what a driver applies: SLAQ_STOP_ITERS never stops
 * early; SLAQ_STOP_ACCURACY stops when the cluster is overloaded and
 * `metric` meets goal->accuracy; SLAQ_STOP_OPTSTOP does that too and, at
 * any load, stops once recent[0..n) (the job's last losses, oldest
 * first; first its loss before training) have flattened by
 * slaq_mlfs_stop's plateau rule with optstop_eps. The verdict
 * (slaq_verdict, slaq.h) names the rule that stopped the job:
 * SLAQ_VERDICT_RUN, _ACCURACY or _OPTSTOP.
 */
slaq_verdict slaq_mlfc_decide(const slaq_goal *goal, double metric,
                                   int overloaded, double first,
                                   const double *recent, size_t n,
                                   double optstop_eps);

/*
 * MLF-C in a slaq_sched's epoch. Under a policy of load control
 * (slaq_policy_load_control: mlfs) each slaq_sched_epoch decides whether
 * the cluster is overloaded (slaq_mlfs_overloaded's rule with h_s =
 * SLAQ_MLFS_H_S over the nodes that are up, cores standing for memory:
 * a node's demand is its jobs' max_cores, at most its cores each; a job
 * waiting for a node makes it overloaded; slaq_sched_overloaded) and
 * each job's verdict by slaq_mlfc_decide on its goal's stop rule, its
 * last metric (slaq_job_set_metric) and its last SLAQ_MLFS_OPTSTOP_N
 * losses: slaq_job_verdict (slaq.h).
 */
int slaq_sched_overloaded(const slaq_sched *s);

/*
 * MLFS's cluster in a slaq_sched (docs/deadlines.md): nodes with memory
 * as well as cores, jobs that hold memory on their node, a pending queue
 * in the policy's order, MLFS's placement and moves, and MLF-C's stops
 * before anything is placed. The deadline simulator's scheduler: with it
 * set, each slaq_sched_epoch (or slaq_sched_allocate: there is nothing to
 * refit) decides, in this order,
 *
 *   stops      under a policy of load control (slaq_policy_load_control)
 *              with `control`: whether the cluster is overloaded
 *              (slaq_mlfs_overloaded over the nodes' cores and memory
 *              and the jobs waiting, with h_s; slaq_sched_overloaded),
 *              then each placed job's verdict by slaq_mlfc_decide on its
 *              goal, its loss now and its losses after the last
 *              SLAQ_MLFS_OPTSTOP_N epochs it had cores, with optstop_eps
 *              (slaq_job_verdict). A stopped job is off its node at once
 *              and takes part in nothing below; the driver removes it.
 *   keys       the policy's key of every other job (slaq_policy_keys,
 *              with `prio`), over what the jobs are now: each job's true
 *              curve (slaq_job_opts.truth: the oracle) from its position,
 *              and what the driver observed (slaq_job_observe); then
 *              `keys`, if set, may change them (a trainer's exploration).
 *              slaq_sched_keys gives them (NAN for a stopped job).
 *   placement  the waiting jobs in the order of their keys
 *              (slaq_key_order), each on slaq_mlfs_host's node (strict)
 *              under a policy that moves (slaq_policy_moves) with
 *              `moves`, else slaq_node_most_free's; a job no node takes
 *              waits. A job asks its max_cores and slaq_job_opts.mem.
 *   moves      under a policy that moves, with `moves`: slaq_mlfs_plan
 *              over the placed jobs, their keys as priorities, each
 *              movable unless it moved less than move_hold_s ago or is
 *              still moving, weighed (weigh_moves) at the mean stop of
 *              the moves so far; a move made stops the job for
 *              move_fixed_s plus its memory over move_gbps
 *              (slaq_job_moving_until).
 *   cores      slaq_allocate_nodes over the placed jobs that can run
 *              this epoch (not moving until its end), each node's cores
 *              its capacity; every other job gets 0 (slaq_job_alloc).
 *
 * Jobs keep their order of arrival (ties of keys go to the earlier),
 * and a new job waits until the next epoch places it. No allocation in
 * an epoch once the scheduler has seen its largest job count.
 */
typedef struct slaq_mlfs_config {
    double node_mem;      /* GB of memory on every node (> 0) */
    int moves;            /* 1: MLFS's placement and moves under a policy
                             that moves; 0: never */
    int control;          /* 1: MLF-C's stops under a policy of load
                             control; 0: never */
    double optstop_eps;   /* OptStop's plateau (a job's goal.stop) */
    double h_r, p_s, h_s; /* MLFS's thresholds: 0.9, 0.1, 0.9 */
    double move_fixed_s;  /* seconds a move stops a job, plus ... */
    double move_gbps;     /* ... its memory over this many GB/s (> 0) */
    double move_hold_s;   /* a moved job stays this long at least */
    int weigh_moves;      /* 1: a move that costs more than it gains is
                             not made (slaq_mlfs_plan's weigh) */
    slaq_prio_params prio; /* the priority policies' parameters */
    /* Called with the epoch's keys of the n jobs pj, before they order
     * anything; may change them. NULL: none. */
    void (*keys)(void *ctx, double now, const slaq_pjob *pj, size_t n,
                 double *key);
    void *keys_ctx;
} slaq_mlfs_config;

/* The defaults: node_mem 192 GB, moves and control on, OptStop's
 * SLAQ_MLFS_OPTSTOP_EPS, h_r 0.9, p_s 0.1, h_s 0.9, a move 30 s plus
 * 1 GB/s, held 600 s, not weighed, slaq_prio_params_init's priorities. */
void slaq_mlfs_config_init(slaq_mlfs_config *c);

/* Makes the scheduler MLFS's cluster (above). Before any job is added;
 * SLAQ_EINVAL for a scheduler with jobs or a value out of range,
 * SLAQ_ENOMEM. */
int slaq_sched_set_mlfs(slaq_sched *s, const slaq_mlfs_config *c);

/*
 * What the driver of MLFS's cluster observes of a job before each epoch
 * (the simulator knows it exactly): where the job is on its true curve,
 * in iterations (fractional), the iterations one core gives it in an
 * epoch, its seconds of work left on its max_cores, the core-seconds it
 * has run and the seconds it has waited at no cores. The epoch reads its
 * loss now off its curve at k; the fall since the last observation and,
 * when it had cores in the last epoch, the loss as one of its recent
 * ones, are kept from one observation to the next.
 */
typedef struct slaq_job_obs {
    double k;
    double iters_per_core;
    double remaining_s;
    double attained;
    double waited;
} slaq_job_obs;

/* SLAQ_EINVAL for a job without a true curve or a scheduler that is not
 * MLFS's cluster. */
int slaq_job_observe(slaq_job *j, const slaq_job_obs *o);

/* When the job last moved (-INFINITY: never), and until when that move
 * stops it. */
double slaq_job_moved_at(const slaq_job *j);
double slaq_job_moving_until(const slaq_job *j);

/* What MLFS's cluster has moved so far: moves made, the seconds and GB
 * they stopped and carried, and the moves refused as not worth their
 * cost (once per stretch of epochs a job's move is refused). */
typedef struct slaq_mlfs_stats {
    size_t moves;
    double move_s, move_gb;
    size_t moves_skipped;
} slaq_mlfs_stats;

/* Zeros for a scheduler that is not MLFS's cluster. */
slaq_mlfs_stats slaq_sched_mlfs_stats(const slaq_sched *s);

/*
 * MLF-RL's policy network (MLFS §3.4): it scores each job from MLF-H's
 * own features, normalised as slaq_mlfs_priority normalises them, and
 * the scores are the keys (larger first), ordering the pending queue,
 * the division of cores and the moves as MLF-H's priority does. The
 * features of job i (slaq_rl_features), each in [0, 1]:
 *
 *   0 urgency L / largest       3 deadline term (log place)
 *   1 (1/I) / largest           4 remaining-time term (log place)
 *   2 recent loss reduction     5 waiting-time term (log place)
 *     / largest                 6 1 if it holds cores (prev_alloc > 0)
 *                               7 the cluster's load: the share of the
 *                                 n jobs that hold no cores
 *
 * (0-5 as slaq_mlfs_priority computes them, with the use_urgency and
 * use_deadline switches; MLF-H's P is α·f0·f1·f2 + (1 − α)(γd·f3 +
 * γr·f4 + γw·f5).) The network is one hidden layer of tanh units:
 *
 *   h = tanh(w1 · x + b1),   score = w2 · h + b2
 *
 * Its sizes are fixed so that a model is a plain value: no allocation
 * in the decision path. src/io/rlmodel.h reads and writes it.
 */
#define SLAQ_RL_NFEAT 8
#define SLAQ_RL_HIDDEN 16

typedef struct slaq_rl_model {
    double w1[SLAQ_RL_HIDDEN][SLAQ_RL_NFEAT];
    double b1[SLAQ_RL_HIDDEN];
    double w2[SLAQ_RL_HIDDEN];
    double b2;
} slaq_rl_model;

/* The features of n jobs into feat[i * SLAQ_RL_NFEAT + f]. */
void slaq_rl_features(const slaq_pjob *jobs, size_t n,
                      const slaq_prio_params *params, double *feat);

/* The network's score of one job's features x[SLAQ_RL_NFEAT]; with
 * hidden != NULL, the hidden units' values into hidden[SLAQ_RL_HIDDEN]
 * (what a trainer needs for the gradient). */
double slaq_rl_score(const slaq_rl_model *m, const double *x,
                     double *hidden);

/* mlfs-rl's keys: each job's score under params->rl (which must be set)
 * over its features. */
void slaq_rl_keys(const slaq_pjob *jobs, size_t n,
                  const slaq_prio_params *params, double *key);

/*
 * Why a job is where it is under mlfs-h, mlfs-rl or mlfs: its features
 * (slaq_rl_features: the normalised terms of Eq. 2 and 4, whether it
 * holds cores, the load), MLF-H's two halves of Eq. 6 over them, ml =
 * α · P_ML and comp = (1 − α) · P_C (mlfs-h's key is their sum), the
 * network's score (the key of mlfs-rl and mlfs; NAN under mlfs-h), and
 * the key of the policy asked about.
 */
typedef struct slaq_prio_terms {
    double feat[SLAQ_RL_NFEAT];
    double ml, comp;
    double score;
    double key;
} slaq_prio_terms;

/* 1 if the policy's keys are made of MLF-H's features (mlfs-h, mlfs-rl,
 * mlfs), whose terms slaq_mlfs_terms gives, else 0. */
int slaq_policy_has_terms(slaq_policy_kind kind);

/* The terms of n jobs under `policy` (which must have them), into
 * out[0..n): key is the one slaq_policy_keys gives. SLAQ_EINVAL for a
 * policy without terms, or one that needs a network params->rl lacks. */
int slaq_mlfs_terms(slaq_policy_kind policy, const slaq_pjob *jobs, size_t n,
                    const slaq_prio_params *params, slaq_prio_terms *out);

/* The terms of the scheduler's jobs under its policy, as the last epoch
 * saw them: out[i] is slaq_sched_job(s, i)'s, for the slaq_sched_count(s)
 * jobs (valid when slaq_sched_keys is). Errors as slaq_mlfs_terms. */
int slaq_sched_terms(slaq_sched *s, slaq_prio_terms *out);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_DEADLINE_H */
