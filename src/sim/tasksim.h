/*
 * tasksim.h — the task-level simulator behind `slaq sim --tasks`: jobs of
 * many short tasks on a cluster of N nodes of S slots each, replayed in
 * virtual time under one of five schedulers, to judge Yaq's queue
 * management (slaq/queue.h) against the baselines the thesis and Hawk
 * compare with (docs/queues.md).
 *
 *   yarn     central; a node's free slots are filled when it heartbeats
 *            (every tau seconds, nodes out of phase), FIFO; no node queues
 *   sparrow  distributed; each job probes probe_ratio x its tasks nodes
 *            at random and puts its tasks on the least loaded by queue
 *            length (batch sampling), FIFO node queues without bound
 *   fifo     slaq's own: one central FIFO queue that a freed slot takes
 *            its next task from at once (no heartbeat, no node queues)
 *   yaq-c    central; at heartbeats and arrivals the scheduler places
 *            tasks into node queues bounded by queue-bound, by Algorithm
 *            1 on the nodes' reported state (free slots, then the
 *            highest 1/load); the central queue and the node queues run
 *            in queue-order with the starvation thresholds
 *   yaq-d    distributed; each job samples like sparrow, probes answer
 *            with the node's current queue wait, tasks go by Algorithm 1
 *            into bounded queues; a task that fits nowhere waits at its
 *            job, which samples again tau seconds later (backing off to
 *            16 tau while nothing fits)
 *
 * Each task's estimate is its job's mean_task_duration (a stage average,
 * as the thesis gives Yaq). Events are exact times; ties go in the order
 * they were scheduled. The run is deterministic for a seed.
 */
#ifndef SLAQ_SIM_TASKSIM_H
#define SLAQ_SIM_TASKSIM_H

#include <stddef.h>
#include <stdint.h>

#include "io/tasktrace.h"
#include "slaq/queue.h"

typedef enum tsim_sched {
    TSIM_YARN,
    TSIM_SPARROW,
    TSIM_FIFO,
    TSIM_YAQC,
    TSIM_YAQD,
} tsim_sched;

#define TSIM_NSCHED 5

int tsim_sched_parse(const char *name, tsim_sched *out); /* 0 or -1 */
const char *tsim_sched_name(tsim_sched s);

#define TSIM_MAX_NODES 1000000
#define TSIM_MAX_SLOTS 4096      /* per node */

typedef struct tsim_config {
    tsim_sched sched;
    size_t nodes;                /* N >= 1 */
    unsigned slots;              /* S per node, >= 1 */
    double heartbeat;            /* tau, s (> 0): yarn, yaq-c; yaq-d's
                                    retry period */
    unsigned probe_ratio;        /* sparrow, yaq-d: probes per task */
    /* yaq-c and yaq-d (the settings of slaq/settings.h): */
    slaq_queue_bound bound;
    double util;                 /* auto bound's target */
    slaq_qorder order;
    slaq_starvation starvation;
    slaq_qload load;
    int random_place;            /* yaq-c: a random node that admits,
                                    not Algorithm 1 (Fig. 4.6's baseline) */
    double r_fmin;               /* Algorithm 1's R_fmin, in [0, 1) */
    double short_cutoff;         /* a job is short when its estimate is
                                    at most this many seconds */
    uint64_t seed;
} tsim_config;

/* The defaults: yaq-c, 100 nodes of 10 slots, tau 3 s, probe ratio 2,
 * the settings table's queue defaults, R_fmin 0, seed 1. */
void tsim_config_init(tsim_config *c);

typedef struct tsim_result {
    size_t njobs, ntasks, nshort;
    size_t qlen;                 /* the node queues' length bound in
                                    force (SLAQ_QBOUND_MAX: none) */
    double jct_p50, jct_mean, jct_p90, jct_p99;
    double short_p50, short_p90; /* NaN if no job is short */
    double wait_mean, wait_p50;  /* a task's wait: arrival to start */
    double qdelay_mean, qdelay_sd, qdelay_p50, qdelay_max;
                                 /* a task's wait in a node queue */
    double util;                 /* busy slot-seconds over slots x the
                                    load window (tsim_window) */
    double throughput;           /* jobs per minute: jobs / makespan */
    double makespan;             /* first arrival to last completion */
    double *jct;                 /* per job, owned */
} tsim_result;

/*
 * Replays w under c into *r (freed with tsim_result_free, also after an
 * error). Returns 0, or -1 with err saying which parameter is wrong or
 * that memory ran out.
 */
int tsim_run(const tt_workload *w, const tsim_config *c, tsim_result *r,
             char *err, size_t errlen);
void tsim_result_free(tsim_result *r);

/*
 * The load window, in seconds from the first arrival: from the arrival of
 * the job at the 1st percentile to the last arrival, so that a handful of
 * jobs long before the rest (the Google subset has 16 jobs in its first
 * 60,000 s and 9,984 in its last 33,500) do not stretch it. Utilisation
 * is measured over it, and its jobs' work over it is the offered load
 * (tsim_offered). A window of one instant is the whole run instead.
 */
void tsim_window(const tt_workload *w, double *from, double *to);
/* The work of the jobs arriving in the window over its length: the
 * offered load on one slot (NaN for a window of one instant). */
double tsim_offered(const tt_workload *w);

/* The workload's mean task estimate, weighted by tasks (what an auto
 * bound is sized from). */
double tsim_mean_estimate(const tt_workload *w);

/*
 * The thesis's synthetic workloads, by name: "sec:X" (every task X
 * seconds), "exp:M" (exponential tasks of mean M), "mixed-5-50" (80% of
 * jobs of 5-s tasks, 20% of 50-s ones), "gridmix" (exponential, mean 49
 * s), "gridmix-heavy" (the same with the longest 20% of tasks 500 s
 * longer), "hive" (185 jobs of about 58 map and 1.5 reduce tasks,
 * lognormal durations of mean 22.9 s and sd 27.8 s). Jobs of 100 tasks
 * (hive: its own) arrive as a Poisson process whose rate puts an offered
 * load `load` on `slots` slots, for `span` seconds of arrivals (hive: its
 * 185 jobs). Returns 0, or -1 with err naming what is wrong.
 */
int tsim_workload(const char *name, double load, size_t slots, double span,
                  uint64_t seed, tt_workload *out, char *err, size_t errlen);

/* The list of workload names for help texts. */
#define TSIM_WORKLOADS "sec:X, exp:M, mixed-5-50, gridmix, gridmix-heavy, hive"

#endif
