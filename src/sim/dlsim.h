/*
 * dlsim.h — slaq's simulator of jobs with deadlines, required accuracy
 * and urgency (MLFS's setting; docs/deadlines.md).
 *
 * Jobs are data-parallel training jobs of a fixed size (cores, one per
 * worker), a memory demand and an amount of work (core-seconds at their
 * size); each follows a loss curve of the curve library stretched over
 * its work. A cluster of nodes with cores and memory runs them in rounds
 * of epoch_s seconds, and every decision of a round is the core's: the
 * jobs are a slaq_sched's, made MLFS's cluster (slaq_sched_set_mlfs,
 * slaq/deadline.h), and each round's slaq_sched_epoch decides
 *
 *   stops          slaq_mlfs_overloaded + slaq_mlfc_decide (mlfs)
 *   pending order  slaq_policy_keys(policy), slaq_key_order (every
 *                  policy)
 *   placement      slaq_mlfs_host, strict (policies that move), else
 *                  slaq_node_most_free
 *   moves          slaq_mlfs_plan, weighed with --weigh-moves
 *                                               (mlfs-h, mlfs, mlfs-rl)
 *   cores          slaq_allocate_nodes(policy)  (every policy)
 *
 * after the simulator has told it where each job is (slaq_job_observe);
 * the simulator applies the decisions and advances the true curves.
 * A placed job keeps its memory on its node and is given cores there by
 * the policy, at most its size; with a cores it progresses a core-seconds
 * per second (linear scaling). A move stops the job for move_fixed_s plus
 * its memory over move_gbps (its checkpoint written and read) and is
 * counted. Cores freed inside a round stay idle until the next, as
 * slaqd's epoch does. slaq is handed each job's true curve (the oracle
 * forecast): its best case, not what a prediction would give it.
 *
 * This engine is not sim.c's: that one replays iterative jobs through a
 * plain slaq_sched, which places a job once at arrival and never moves
 * it; the deadline setting's pending queues in a policy's order,
 * placement by memory and moves are MLFS's cluster's.
 */
#ifndef SLAQ_SIM_DLSIM_H
#define SLAQ_SIM_DLSIM_H

#include <stddef.h>

#include "io/curves.h"
#include "io/dltrace.h"
#include "slaq/deadline.h"

typedef struct dl_job {
    double arrival;   /* seconds */
    double deadline;  /* absolute seconds; INFINITY: none */
    double work;      /* core-seconds at its size */
    double size;      /* cores (its workers) */
    double mem;       /* GB */
    int urgency;      /* 1..10 */
    double req;       /* required fraction of its curve's loss reduction,
                         (0, 1]: its accuracy, below its final one */
    size_t curve;     /* index into the curve set */
    size_t line;      /* trace line (0: generated) */
} dl_job;

typedef struct dl_workload {
    dl_job *jobs;     /* sorted by arrival */
    size_t n;
    double load;      /* offered load: work / (cores × arrival span) */
    double compress;  /* traces: arrival span divided by this */
} dl_workload;

void dl_workload_free(dl_workload *w);

/* The required accuracy drawn for each job: U[lo, hi] of its curve's
 * loss reduction (default 0.5, 0.95). */
typedef struct dl_req {
    double lo, hi;
} dl_req;

/* The cluster a workload is made for and run on. */
typedef struct dl_cluster {
    size_t nodes;
    double cores;     /* per node */
    double mem;       /* GB per node */
} dl_cluster;

/*
 * The generated Philly-style workload (docs/deadlines.md, "The generated
 * workload", states every distribution): n jobs whose arrivals follow a
 * daily cycle at the rate that offers `load` of the cluster's cores.
 * deadline_scale multiplies the U[0.5, 24] h part of the deadline.
 * Returns 0, or -1 with a message.
 */
int dl_generate(size_t n, double load, double deadline_scale,
                unsigned long seed, const dl_req *req, const dl_cluster *cl,
                const curve_set *cs, dl_workload *w, char *err,
                size_t errlen);

/*
 * The trace's jobs [first, first + n) in submission order as a workload
 * (docs/deadlines.md, "The traces"): one GPU is gpu_cores cores; a job
 * larger than a node runs on a whole node, its duration stretched so its
 * work is kept; arrivals are compressed so the offered load is `load`;
 * each deadline keeps its distance from its submission (stretched with
 * the duration). Urgency, required accuracy, memory and curve are drawn
 * from `seed` as for the generated workload. Returns 0 or -1.
 */
int dl_from_trace(const dlt_trace *t, size_t first, size_t n,
                  double gpu_cores, double load, unsigned long seed,
                  const dl_req *req, const dl_cluster *cl,
                  const curve_set *cs, dl_workload *w, char *err,
                  size_t errlen);

/*
 * What a trainer of MLF-RL (rltrain.h) watches and changes in a run.
 * keys: after each round's keys are computed over the n active jobs
 * (pj, whose slaq_rl_features are the network's input), before they
 * order the pending queue and the moves; it may change them (the
 * policy's exploration). done: job `job` (an index into the workload)
 * finished in the round that started at t: `met` 1 if by its deadline,
 * `acc_met` 1 if it had reached its required accuracy by then, `acc`
 * the share of its curve's reduction it had at its deadline (or its
 * end). Either may be NULL.
 */
typedef struct dl_hook {
    void *ctx;
    void (*keys)(void *ctx, double t, const slaq_pjob *pj, size_t n,
                 double *key);
    void (*done)(void *ctx, double t, size_t job, double jct, int met,
                 int acc_met, double acc);
} dl_hook;

typedef struct dl_config {
    slaq_policy_kind policy;
    dl_cluster cl;
    double epoch_s;       /* a round; default 60 (MLFS's scheduler runs
                             every minute) */
    int optstop;          /* MLF-C's OptStop too (mlfs) */
    /* MLFS's cluster (slaq_mlfs_config_init's defaults): the priorities,
     * moves, load control and its thresholds, OptStop's plateau (over the
     * last DL_OPTSTOP_ROUNDS rounds), a move's cost and whether it is
     * weighed; its node_mem is cl.mem's and its keys hook the trainer's,
     * set by dl_run */
    slaq_mlfs_config mlfs;
    const dl_hook *hook;  /* NULL: none */
} dl_config;

#define DL_OPTSTOP_ROUNDS SLAQ_MLFS_OPTSTOP_N
#define DL_MAX_ROUNDS 2000000

void dl_config_init(dl_config *c);

#define DL_NPCT 7
extern const int dl_pct[DL_NPCT]; /* JCT percentiles: 10 25 50 75 90 95 99 */

typedef struct dl_result {
    size_t jobs;
    size_t deadline_met;  /* completed by their deadline */
    size_t acc_met;       /* met their required accuracy by their deadline */
    size_t urgent, urgent_met; /* urgency > 8, and those on time */
    double avg_jct, makespan, avg_wait;
    double acc_at_deadline; /* mean fraction of the curve's reduction
                               reached by the deadline (or at the end) */
    double jct_pct[DL_NPCT];
    double *jct;          /* jobs values, sorted (for the CDF); owned */
    double *completion;   /* per job, in workload order; owned */
    size_t moves;
    double move_s, move_gb;
    size_t moves_skipped; /* --weigh-moves: refused, once per stretch */
    size_t stopped;       /* jobs MLF-C stopped */
    size_t rounds;
    double sched_us;      /* mean wall µs of a round's decisions */
    double util;          /* mean share of the cores given out */
    double util_arrivals; /* the same over the rounds while jobs arrive
                             (up to the last arrival): how heavy the load
                             is, before the last long jobs run alone */
} dl_result;

/* Runs the workload; 0, or -1 with a message (a job larger than every
 * node, no curves, a run beyond DL_MAX_ROUNDS). */
int dl_run(const dl_workload *w, const curve_set *cs, const dl_config *c,
           dl_result *r, char *err, size_t errlen);
void dl_result_free(dl_result *r);

#endif
