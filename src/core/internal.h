/*
 * internal.h — private structures shared by the files of libslaq.
 *
 * Nothing here is part of the API; include/slaq/slaq.h is. The structures
 * are defined here so that the predictor, allocator and scheduler files can
 * work on them directly in the per-epoch hot path without accessor calls.
 */
#ifndef SLAQ_CORE_INTERNAL_H
#define SLAQ_CORE_INTERNAL_H

#include "slaq/deadline.h"
#include "slaq/slaq.h"

struct slaq_history {
    slaq_report *ring;  /* `window` slots; oldest at `head` */
    size_t window;
    size_t head;
    size_t len;
    uint64_t total;
    uint64_t version;   /* changes ever made, clears included: never reset */
    double first_loss;
    double min_loss;
    double max_delta;
    double cpu_total;
    double samples_total;
};

/* The per-iteration loss drop from report a to the later report b,
 * ΔL = (L_a − L_b) / (k_b − k_a): the one definition every part of the
 * core uses (normaliser, strawman slope, recent-step bound). */
static inline double report_drop(const slaq_report *a, const slaq_report *b)
{
    return (a->loss - b->loss) / (double)(b->iter - a->iter);
}

/* The per-kind fitting state of a predictor (warm starts). */
typedef struct pred_fitstate {
    double th[4];    /* last good parameters, in the frame below */
    double k0, off, sc; /* the frame th was fitted in (see fit.h) */
    int have;        /* th holds a previous fit */
    double lam;      /* auto's solver damping, carried between fits */
} pred_fitstate;

enum { PRED_RATIONAL = 0, PRED_EXP = 1, PRED_NMODELS = 2 };

/* Asks for the cache lines of [p, p + bytes) ahead of their use. The
 * epoch's loops walk tens of thousands of separately allocated jobs and
 * forecasts; fetching a few iterations ahead hides the memory latency
 * that dominates them (a hint only: it changes no answer). */
#define SLAQ_PREFETCH_AHEAD 12
static inline void slaq_prefetch(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch((const char *)p + o);
}

struct slaq_predictor {
    slaq_predictor_kind kind;
    slaq_predictor_opts opts;
    slaq_forecast fc;
    const double *truth;
    size_t truth_len;
    /* The last fit's input: which history, at which version. The total
     * alone would not do: a cleared and refilled history repeats it. */
    const slaq_history *fitted_hist;
    uint64_t fitted_version;
    pred_fitstate model[PRED_NMODELS];
    void *gsl;                  /* slaq-fit: the GSL solver workspaces */
    void *autost;               /* auto: its candidates' track records */
};

/* Fitting back ends (fit_gsl.c, fit_auto.c). Each fills p->fc from h and
 * returns SLAQ_OK, or an error leaving a usable forecast in place. */
int pred_fit_slaq(slaq_predictor *p, const slaq_history *h);
int pred_fit_auto(slaq_predictor *p, const slaq_history *h);
void pred_gsl_free(void *gsl);
void pred_auto_free(void *autost);

/* Helpers shared by the fitting back ends (predictor.c). */
void pred_forecast_linear(slaq_forecast *f, const slaq_history *h);
void pred_forecast_base(slaq_forecast *f, const slaq_history *h);
double pred_model_eval(slaq_model m, const double *par, double u);

/* SLAQ_MODEL_AQP at position k (aqp.c). */
double aqp_forecast_eval(const slaq_forecast *f, double k);
/* ------------------------------------------------ nodes (placement.c) */

typedef struct clu_node {
    double cores;   /* as given; 0: down */
    double weight;  /* the weights of its jobs, summed as they come/go */
    double minsum;  /* their minimum shares, min(unit, max_cores) each */
    double free;    /* cores idle at the last epoch, less the settling
                       shares of jobs placed since */
    double price;   /* the cheapest unit handed out here last epoch */
    double alloc;   /* cores its jobs were given at the last epoch */
    size_t jobs;
    int held;       /* kept for a waiting job pinned here (clu_hold) */
    double demand;  /* MLF-C's test of overload at the last epoch: its
                       jobs' max_cores, at most its cores each */
} clu_node;

typedef struct clu_state {
    clu_node *node;
    size_t n, cap;
    slaq_job **pend;  /* the pending queue, oldest first */
    size_t npend, pcap;
    /* While the queue is walked: the nodes its earlier jobs keep for
     * themselves (clu_hold). hold_minsh: the smallest minimum share of a
     * waiting job free to go anywhere, which keeps every node it could
     * run on (INFINITY: none). */
    double hold_minsh;
} clu_state;

/* What placement needs to know about a job. */
typedef struct clu_job {
    double weight, max_cores;
    double minsh;   /* its minimum share, min(unit, max_cores) */
    long pin;       /* a node, or -1 */
} clu_job;

/* A job's predicted normalised gain on `cores` cores (gain placement). */
typedef struct clu_gain {
    double (*gain)(void *arg, double cores);
    void *arg;
} clu_gain;

int clu_init(clu_state *c, size_t nodes, double cores);
void clu_free(clu_state *c);
int clu_add_node(clu_state *c, double cores); /* index, or < 0 */
long clu_choose(const clu_state *c, const slaq_sched_config *cfg,
                const clu_job *job, const clu_gain *g);
void clu_attach(clu_state *c, size_t v, const clu_job *job);
void clu_detach(clu_state *c, size_t v, const clu_job *job, double alloc);
int clu_pend_reserve(clu_state *c, size_t n);
int clu_pend_push(clu_state *c, slaq_job *j);
void clu_pend_remove(clu_state *c, const slaq_job *j);
/* A job that waits keeps for itself the nodes it could run on once they
 * have room: its pin, or every node, if the node has cores enough for its
 * minimum share at all. A node down (0 cores), or too small ever to take
 * it, is kept for nobody: a job that cannot start there holds up no job
 * behind it. clu_choose places no later job on a kept node. */
void clu_hold(clu_state *c, const slaq_sched_config *cfg, const clu_job *job);
void clu_hold_clear(clu_state *c, const clu_job *job);

/* The key of the cheapest unit the last greedy allocation in ws handed out
 * on `node` beyond the guaranteed shares, 0 if none (policy.c). */
double alloc_node_price(const slaq_alloc_ws *ws, size_t node);

/*
 * A share policy: one row of policy.c's table, found by its
 * slaq_policy_kind. `divide` fills alloc[0..n) from the nodes' capacities
 * (the workspace already holds room for n jobs and nnodes nodes) and sets
 * each node's price; the greedy allocator ranks a job's next unit by `key`
 * (lcur and lnext: its predicted loss after the epoch at a and at a +
 * unit cores).
 */
typedef struct alloc_policy alloc_policy;
struct alloc_policy {
    const char *name;    /* as slaq_policy_parse reads it */
    const char *summary; /* what it divides by, in a line (help texts) */
    int forecasts;       /* 1: divides by the jobs' forecasts (slaq_pjob.fc
                            required; the scheduler gives exact jobs their
                            floors and damps its changes); 0: by weight */
    void (*divide)(const alloc_policy *p, const slaq_pjob *jobs, size_t n,
                   const size_t *node, const double *capacity, size_t nnodes,
                   double unit, slaq_alloc_ws *ws, double *alloc);
    double (*key)(const slaq_pjob *j, double lcur, double lnext, double a,
                  double unit);
    /* The priority policies (alloc_prio): each job's key, larger first. */
    void (*keys)(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
                 double *key);
    int sticky;  /* a job keeps the cores it held (prev_alloc) before
                    the keys divide the rest: preemption only by moves */
    int moves;   /* places on the ideal virtual host and moves jobs */
    int control; /* MLF-C: stops jobs that met their accuracy */
    int model;   /* its keys need a network (slaq_prio_params.rl) */
    int admits;  /* decides who runs itself: the scheduler gives its jobs
                    no start-up or class-prior floor and does not damp
                    its changes (slaq-index) */
    int trend;   /* its key reads slaq_pjob.trend, which the scheduler
                    then measures (slaq-trend) */
};

/* One node's overload degree, ||U|| / √2 of its (cores, memory)
 * utilisation: slaq_mlfs_overloaded averages it over the nodes, and a
 * slaq_sched's epoch over its own (mlfs.c). */
double mlfs_degree(const slaq_node_use *v);

/* The priority policies' keys (policy_edf.c, policy_tiresias.c,
 * policy_mlfs.c). */
void edf_keys(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
              double *key);
void tiresias_keys(const slaq_pjob *jobs, size_t n,
                   const slaq_prio_params *pp, double *key);
void mlfs_rl_keys(const slaq_pjob *jobs, size_t n,
                  const slaq_prio_params *pp, double *key);
void mlfs_keys(const slaq_pjob *jobs, size_t n, const slaq_prio_params *pp,
               double *key);

/* The policy of `kind`, or NULL if there is none (policy.c). */
const alloc_policy *alloc_policy_of(slaq_policy_kind kind);

#endif
