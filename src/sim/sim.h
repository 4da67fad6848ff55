/*
 * sim.h — slaq's trace-driven, discrete-event simulator.
 *
 * The simulator replays a workload (src/io/workload.h) in virtual time
 * through the very functions slaqd calls: a slaq_sched is given every job
 * on arrival, every completed iteration as a report, and is asked for an
 * allocation at every epoch boundary, and only then (as slaqd's epoch timer
 * does): an arrival has no cores until the next boundary, and the cores
 * of a job that finished stay unused until then.
 * There is no policy or predictor here; comparing policies in the
 * simulator therefore compares what production would do.
 *
 * Between two decisions a job with a cores advances min(a, max_cores) /
 * iter_cpu_s iterations per second. Iteration completions are events at
 * exact times (no time stepping), so one job alone on C cores finishes at
 * exactly its work divided by C. An iteration's loss is reported when the
 * iteration completes, never earlier.
 *
 * Metrics follow docs/metrics.md, computed by sim/metrics.h (which slaq
 * report shares); docs/sim.md lists the output files.
 */
#ifndef SLAQ_SIM_H
#define SLAQ_SIM_H

#include <stddef.h>
#include <stdio.h>

#include "io/workload.h"
#include "slaq/slaq.h"

/* The loss reductions X (in %) whose times "time to X%" are measured. */
#define SIM_NX 11
extern const int sim_x_pct[SIM_NX]; /* 50, 55, ..., 95, 99 */

/* Loss groups (docs/metrics.md): top 25% by ℓ, next 25%, the rest. */
enum { SIM_HIGH = 0, SIM_MEDIUM = 1, SIM_LOW = 2, SIM_NGROUPS = 3 };

typedef struct sim_config {
    /* The core's settings (slaq/settings.h), as given to slaq_sched_new()
     * but for the nodes: sched.cores is the cluster's total. The oracle
     * predictor (sim_parse_run's oracle-greedy) is handed the true
     * curves and costs. */
    slaq_sched_config sched;
    /* Arrivals are replayed at first + (arrival − first) × arrival_scale
     * (1: as recorded); --sweep-interarrival stretches one job mix to
     * several arrival rates this way. */
    double arrival_scale;
    /* Whether jobs declare their length (their iteration count) to the
     * core. */
    int declare_iters;
    /* Nodes (docs/cluster.md): 0 runs the single machine of sched.cores
     * cores, as always; N >= 1 splits them into N nodes of cores / N
     * each, new jobs placed by sched.placement, and jobs that fit
     * nowhere wait in the core's FIFO queue (slaq_sched_config.queue). */
    size_t nodes;
    /* Shares between users (docs/sim.md, "Users"): 1 divides the cores
     * between the workload's accounts and users first (each weight 1; a
     * job with no user is user "-"), and the policy divides each user's
     * part (their usage decays with sched.share_half_life_s). */
    int shares;
    /* Called now and then with iterations done so far and in total. */
    void (*progress)(void *arg, double done, double total);
    void *progress_arg;
    /* Optional trace of what the core was told and answered (NULL: none):
     * every report handed to slaq_job_report, and every job's allocation
     * after each slaq_sched_epoch. `job` is the workload index. A replay
     * of the reports through a slaq_sched, epoch at the same times, gives
     * the same allocations (tests/sim/test_sim.c checks it). */
    void (*on_report)(void *arg, size_t job, const slaq_report *r);
    void (*on_alloc)(void *arg, double t, size_t job, double cores);
    void *trace_arg;
} sim_config;

/* A configuration with the defaults: the core's (slaq/auto, unit 1, ...)
 * but for an epoch of 2 s. */
void sim_config_init(sim_config *c);

/*
 * The caps of one run (docs/sim.md, "Bounds"): with them a run's time and
 * memory are bounded whatever the options and the workload say. An epoch
 * decision costs O(jobs + nodes + cores/unit) and keeps two records, so
 * SIM_MAX_EPOCHS decisions hold at most about 100 MB.
 */
#define SIM_MAX_EPOCHS 1000000 /* epoch decisions of one run */
#define SIM_MAX_UNITS 100000   /* cores / unit: units divided per epoch */
#define SIM_MAX_NODES 10000    /* nodes */
#define SIM_MAX_BOUNDARY 1e15  /* last arrival / epoch (exact in a double) */

/*
 * Checks that the configuration can replay the workload in bounded time and
 * memory: cores, epoch and unit finite and > 0; cores / unit at most
 * SIM_MAX_UNITS; at most SIM_MAX_NODES nodes; the last arrival at most
 * SIM_MAX_BOUNDARY epochs; and a lower bound on the epochs the run needs
 * (the longest job alone on min(max_cores, a node's cores), the whole
 * work on all the cores) at most SIM_MAX_EPOCHS. Returns 0, or -1 with a
 * message naming the option or the job's line and field, the value and the
 * cap. sim_run calls it; callers may call it first to refuse early.
 */
int sim_config_check(const sim_config *c, const wl_workload *wl, char *err,
                     size_t errlen);

/*
 * Parses a run name "POLICY[:PREDICTOR][+shares]" into c->sched.policy,
 * c->sched.predictor and c->shares ("+shares": the cores are divided
 * between users first):
 * POLICY is fair, slaq, slaq-maxmin or oracle-greedy (= slaq with the
 * oracle predictor: the same greedy handed the true curves and costs, a
 * reference and not an upper bound; "oracle" is accepted for it);
 * PREDICTOR (auto, slaq-fit, strawman) overrides `dflt`.
 * Returns 0, or -1 on an unknown name.
 */
int sim_parse_run(const char *name, slaq_predictor_kind dflt, sim_config *c);

/* What happened to one job. Times in seconds of virtual time. */
typedef struct sim_jobres {
    double arrival;
    double start;      /* when it first had cores (NAN: never) */
    double completion;
    double tx[SIM_NX]; /* time from arrival to X% loss reduction */
    size_t changes;    /* decisions that changed its cores (not the first) */
    double moved;      /* sum of |change| in cores over those decisions */
    double starved;    /* its longest spell at the minimum share while
                          still improving (slaq_job_starved_max) */
} sim_jobres;

/* The state after one epoch-boundary decision (one timeline row). */
typedef struct sim_sample {
    double t;
    size_t active;
    double avg_norm_loss;         /* mean normalised loss of active jobs */
    double cores[SIM_NGROUPS];    /* cores used by each loss group */
} sim_sample;

/* One slaq_sched_epoch() call (Fig. 10c: scheduling time against jobs). */
typedef struct sim_epoch {
    double t;       /* virtual time of the decision */
    size_t jobs;    /* active jobs it divided the cores among */
    double ms;      /* its wall time */
    double cpu_ms;  /* its CPU time (the thread's) */
    double fit_cpu_ms; /* the part of it in slaq_sched_refit */
    size_t fits;    /* predictors it refitted */
    size_t backlog; /* jobs whose refit it left for the next epoch */
} sim_epoch;

typedef struct sim_result {
    sim_jobres *jobs;      /* one per workload job, in workload order */
    size_t njobs;
    sim_sample *samples;   /* one per epoch boundary with active jobs */
    size_t nsamples;
    sim_epoch *epochs;     /* every slaq_sched_epoch() call, in order */
    size_t nepochs;
} sim_result;

/*
 * Runs the workload under the configuration. Returns 0 with r filled (free
 * it with sim_result_free), or -1 with a message in err and r empty: the
 * configuration refused by sim_config_check, or the run reaching
 * SIM_MAX_EPOCHS decisions (a policy that leaves a job without cores).
 */
int sim_run(const wl_workload *wl, const sim_config *cfg, sim_result *r,
            char *err, size_t errlen);
void sim_result_free(sim_result *r);

/* The numbers of summary.json. */
typedef struct sim_summary {
    size_t jobs;
    double avg_norm_loss;
    double tx_mean[SIM_NX];
    double jct_mean;
    double makespan;
    double share[SIM_NGROUPS]; /* mean fraction of used cores per group */
    double changes_per_job_min;  /* allocation changes per job-minute */
    double moved_per_job_min;    /* cores moved per job-minute */
    double starved_max;          /* the longest any job spent at the
                                    minimum share while improving (s) */
    double sched_mean_ms, sched_p99_ms, sched_max_ms;
    size_t epochs;
} sim_summary;

/*
 * The run's numbers from its jobs and timeline (docs/metrics.md): mean
 * times to X% over the jobs whose tx[X] is not NAN (NAN if none), mean
 * JCT over the jobs whose completion is not NAN (likewise), the makespan
 * (NAN while a job has not completed, and without jobs), the timeline's
 * averages. Every simulated job completes and reaches every X (and a
 * workload has jobs); slaq report's jobs of a slaqd run
 * (src/cli/cmd_report.c) may not have yet.
 */
void sim_summarize(const sim_result *r, sim_summary *s);

/* Index of X in sim_x_pct, or -1. */
int sim_x_index(int pct);

/*
 * Output files (fixed float formats: the same run gives the same bytes,
 * except for sched_ms fields and sched.csv, wall-clock measurements).
 * Each returns 0, or -1 on a write error.
 */
int sim_write_summary(FILE *f, const char *name, const sim_config *cfg,
                      const sim_summary *s);
int sim_write_timeline(FILE *f, const sim_result *r);
int sim_write_jobs(FILE *f, const wl_workload *wl, const sim_result *r);
/* sched.csv: one row per epoch call; its sched_ms column is wall time. */
int sim_write_sched(FILE *f, const sim_result *r);

/*
 * The workload's mean inter-arrival time, (last − first arrival) / (n − 1);
 * 0 with fewer than two jobs.
 */
double sim_mean_interarrival(const wl_workload *wl);

#endif
