/*
 * sched_int.h — the scheduler's structures, shared by the two files of
 * its epoch: sched.c (the jobs, their predictors and the division of
 * cores) and sched_mlfs.c (MLFS's cluster: pending order, placement,
 * moves and stops). Private to libslaq, as internal.h is.
 */
#ifndef SLAQ_CORE_SCHED_INT_H
#define SLAQ_CORE_SCHED_INT_H

#include <stddef.h>

#include "slaq/deadline.h"
#include "slaq/shares.h"
#include "internal.h"

/* A job's end loss is the lowest that its fits of the last
 * SCHED_END_ITERS iterations have predicted: a fit made on a few points
 * often says the job is nearly done just before the next points pull it
 * further down, and what users read off a job (its reduction, "reached",
 * --target-reduction stops) must not claim more than the job has done.
 * The window is in iterations, not fits, so that it means the same
 * whether the job is refitted after every report or every few. */
#define SCHED_END_ITERS 12
#define SCHED_END_FITS SCHED_END_ITERS

struct slaq_job {
    /* What every epoch reads or writes, together at the front: at tens of
     * thousands of jobs the per-job loops are cache misses, and these
     * fields fill the first few cache lines of the structure. */
    slaq_predictor *pred;
    long node;               /* its node, or -1 while pending */
    double weight;
    double max_cores;
    double alloc;
    slaq_runtime rt;
    int cost_known;          /* the driver gave the iteration cost */
    int kind;                /* SLAQ_JOB_ML, _QUERY or _EXACT */
    /* Copies the per-epoch loop reads without visiting the history (at
     * tens of thousands of jobs, each visit is a cache miss): the last
     * report's iteration and time, and whether there is one. */
    double last_k, last_t;
    int reported;
    int scale_ok;            /* `scale` is job_scale's answer for the
                                current history, forecast and declared
                                length */
    double scale;
    double arrival;
    uint64_t iter_reports;   /* reports of finished iterations (iter > 0) */
    /* The last epoch's gain is computed when asked (most jobs' gains are
     * never read), from where the job was and would be; before its
     * forecast changes it is computed and kept. */
    double gain_k0, gain_k1, gain_scale;
    int gain_lazy;
    int fit_due;             /* a report or a new predictor since the last
                                fit */
    int queued;              /* in sched->due, waiting for its refit */
    slaq_tokens tokens;
    double gain;             /* valid unless gain_lazy */
    /* The rest is read on reports, fits and by drivers. */
    slaq_sched *sched;
    size_t index;            /* position in sched->jobs */
    slaq_history *hist;
    const double *truth;
    size_t truth_len;
    uint64_t iters;          /* declared length, 0 if unknown */
    double ends[SCHED_END_FITS]; /* the end loss of the last few fits */
    uint64_t end_iter[SCHED_END_FITS]; /* the iteration each was fitted at */
    uint64_t end_total;      /* history total when ends[] was last updated */
    long pin;                /* the node it is pinned to, or -1 */
    double passed_since;     /* pending: when a job that arrived after it
                                first started while it waited (NAN: not
                                passed; the starvation clock) */
    slaq_convergence convergence; /* declared class (predictor option) */
    slaq_query *query;       /* a query's progress state, else NULL */
    slaq_forecast qfc;       /* a query's (or exact job's) forecast */
    slaq_scaling scaling;    /* its speed on n cores, from its reports */
    void *user;
    slaq_goal goal;          /* deadline, accuracy, urgency */
    int program;             /* slaq_job_opts.program */
    int tenant;              /* slaq_job_opts.tenant */
    double attained;         /* core-seconds held so far (at allocations) */
    double waited;           /* seconds at no cores so far */
    double seen_t;           /* when attained and waited were last advanced */
    /* The bound on starvation (config.starve_s, job_lift): */
    double alloc_t;          /* when alloc was last set (NAN: never) */
    double low_since;        /* since when it has been at the minimum share
                                while improving (NAN: it is not) */
    double low_max;          /* the longest such spell that has ended */
    double lift_t;           /* when its lift began (NAN: not lifted) */
    uint64_t lift_reports;   /* iter_reports when it was lifted */
    unsigned lifts;
    slaq_forecast pfc;       /* its class prior's forecast (job_prior) */
    /* Its end (sched_verdicts): */
    double target;           /* slaq_job_opts.target (0: none) */
    double metric;           /* the last metric it reported (NAN: none) */
    slaq_verdict verdict; /* the last epoch's verdict on it */
    /* Under MLFS's cluster (sched_mlfs.c): */
    double mem;              /* GB it holds on its node */
    slaq_job_obs obs;        /* the driver's last observation */
    double prev_loss;        /* its loss at the last observation */
    double last_drop;        /* its last fall of loss between two */
    double recent[SLAQ_MLFS_OPTSTOP_N]; /* its losses after the last
                                epochs it had cores, oldest first */
    size_t nrecent;
    double moved_at;         /* when it last moved (-INFINITY: never) */
    double moving_until;     /* its move stops it until then */
    int move_refused;        /* its planned move was not worth its cost */
    int off;                 /* stopped: off its node's use already */
};

/* The per-epoch part of a job: its first bytes, up to `gain`. */
#define JOB_HOT_BYTES (offsetof(struct slaq_job, gain) + sizeof(double))

struct slaq_sched {
    slaq_sched_config cfg;
    slaq_job **jobs;
    size_t n, cap;
    slaq_pjob *pjobs;    /* cap entries */
    double *alloc;       /* cap entries */
    slaq_alloc_ws *ws;
    size_t *node_of;     /* cap entries: each job's node (pending: nnodes) */
    clu_state clu;       /* the nodes and the pending queue */
    double *ncap;        /* per node + 1: the ML cores divided last time */
    double *nweight;     /* per node + 1: its jobs' weights this epoch */
    size_t nncap;
    int overloaded;      /* MLF-C: the cluster at the last epoch */
    int changed;         /* jobs came or went, or the policy changed,
                            since the last allocation */
    int redivide;        /* slaq_sched_due(): jobs came or went, or a
                            query ended its fair share */
    /* Jobs whose refit is due, in the order they became due (cap
     * entries): a refit visits only these, at most cfg.max_fits of them,
     * and the rest keep their place at the front for the next one. */
    slaq_job **due;
    size_t ndue;
    size_t last_fits;    /* refits the last slaq_sched_refit did */
    double last_cap;     /* the capacity divided last time */
    slaq_pend_cmp pend_cmp; /* the pending queue's order (NULL: arrival) */
    void *pend_arg;
    /* Shares between users (slaq_sched_set_shares), and the epoch's
     * scratch for them: per (node, user) cell the demand, the part and
     * its group; per group its node; per node its cores; per user its
     * charge; the jobs in arrival order for the caps on jobs. */
    slaq_shares *shares;
    double share_t;      /* when usage was last charged (NAN: never) */
    double *sh_demand, *sh_part;
    long *sh_group;
    size_t sh_cells;
    size_t *sh_gnode;
    size_t sh_groups;
    double *sh_nodecap;
    long *sh_improving;  /* per node: the one user with improving jobs
                            there, -1 none, -2 more than one */
    size_t sh_nodes;
    double *sh_charge;
    size_t sh_users;
    struct sh_key { double arrival; size_t i; } *sh_order;
    unsigned char *sh_held;
    unsigned char *sh_done; /* its forecast calls it done (share_lend_at) */
    double *sh_ref;      /* per (node, user) cell: what the policy would
                            give its jobs without shares (share_guarantee) */
    int sh_blend;        /* this epoch's parts blend in sh_ref */
    size_t sh_jobs;
    struct sched_mlfs *mlfs; /* MLFS's cluster, or NULL */
};

/* MLFS's cluster (sched_mlfs.c); NULL in a scheduler that is not one. */
struct sched_mlfs;
int sched_mlfs_epoch(slaq_sched *s, double now);
int sched_mlfs_reserve(slaq_sched *s, size_t n);
void sched_mlfs_leave(slaq_sched *s, slaq_job *j);
void sched_mlfs_keys(const slaq_sched *s, double *key);
void sched_mlfs_free(struct sched_mlfs *m);
clu_job sched_job_clu(const slaq_sched *s, const slaq_job *j);

#endif
