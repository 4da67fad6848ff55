/*
 * queue.h — queue management when the cluster is full: how long a node's
 * queue may grow, where a task waits, and in what order waiting work runs
 * (Yaq, Rasley et al., EuroSys'16; the thesis's chapter 3).
 *
 * Three independent pieces, all pure functions of their arguments:
 *
 *   bounds      the queue length b a node needs to stay busy between two
 *               heartbeats, from the exact Erlang tail (Eq. 3.2) or its
 *               Chernoff bound (Eq. 3.1); the utilisation a given b buys
 *               (Proposition 2); or a maximum queue wait (MWT) instead.
 *   placement   Algorithms 1 and 2: a node's estimated queue wait, and the
 *               node with the highest affinity x 1/load once free capacity
 *               has fallen below R_fmin.
 *   order       Algorithm 3: one comparator over queue items with the
 *               strategies fifo, srjf, lrtf, stf and ejf and the hard (ST)
 *               and relative (ST_R) starvation thresholds. An item is a
 *               task in a node's queue or a job in a pending queue alike:
 *               it carries numbers, not a simulator's or slaqd's types.
 *
 * Times are seconds on the caller's clock; nothing here reads one.
 * docs/queues.md explains the choices and their limits.
 */
#ifndef SLAQ_QUEUE_H
#define SLAQ_QUEUE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- bounds */

/*
 * Pr[X_{n,lambda} <= x] for X_{n,lambda} an Erlang(n, lambda) variable
 * (the sum of n exponentials of mean 1/lambda), computed as the Poisson
 * tail Pr[Poisson(lambda x) >= n]. 1 for n = 0; 0 for lambda x = 0 and
 * n > 0.
 */
double slaq_erlang_cdf(size_t n, double lambda, double x);

/*
 * The smallest queue length b with Pr[X_{b+1, r mu} <= tau] <= delta
 * (Eq. 3.2, the thesis's exact condition): at least a 1 - delta fraction
 * of heartbeat intervals then keep every slot busy. `load` is r mu tau,
 * the tasks a node of r slots finishes in one heartbeat interval tau when
 * tasks last 1/mu on average; delta in (0, 1]. Capped at
 * SLAQ_QBOUND_MAX.
 */
size_t slaq_qbound_exact(double load, double delta);

/*
 * The smallest b that satisfies the Chernoff form of the same condition
 * (Eq. 3.1): r mu tau (1 + ((b+1)/(r mu tau)) (log((b+1)/(r mu tau)) - 1))
 * >= log(1/delta). Never smaller than slaq_qbound_exact(); capped at
 * SLAQ_QBOUND_MAX.
 */
size_t slaq_qbound_chernoff(double load, double delta);

#define SLAQ_QBOUND_MAX 1000000

/*
 * Proposition 2: the long-run utilisation of a node of r slots whose
 * queue is topped up to b tasks every tau seconds, tasks lasting an
 * exponential time of mean 1/mu. b = 0 gives (1 - e^{-mu tau}) / (mu tau).
 * r >= 1, mu > 0, tau > 0; NaN otherwise.
 */
double slaq_qbound_util(unsigned r, double mu, double tau, size_t b);

/* How a node's queue is bounded (the setting queue-bound). */
typedef enum slaq_qbound_kind {
    SLAQ_QBOUND_AUTO,   /* a length from Eq. 3.2 for a target utilisation */
    SLAQ_QBOUND_LENGTH, /* a fixed length */
    SLAQ_QBOUND_MWT,    /* a maximum estimated queue wait, in seconds */
} slaq_qbound_kind;

typedef struct slaq_queue_bound {
    slaq_qbound_kind kind;
    double value;       /* LENGTH: tasks; MWT: seconds; AUTO: unused (0) */
} slaq_queue_bound;

/*
 * Reads "auto", a whole number of tasks ("6", 0 to SLAQ_QBOUND_MAX) or
 * "mwt:SECONDS" (a positive number) into *out. SLAQ_OK, or SLAQ_EINVAL
 * with *out unchanged.
 */
int slaq_queue_bound_parse(const char *text, slaq_queue_bound *out);
/* Writes b as slaq_queue_bound_parse() reads it back; as snprintf. */
int slaq_queue_bound_format(const slaq_queue_bound *b, char *buf,
                            size_t len);

/*
 * The queue length b stands for on nodes of r slots, with tasks of mean
 * duration mean_s, heartbeats every tau seconds and a target utilisation
 * util in (0, 1): AUTO is slaq_qbound_exact(r tau / mean_s, 1 - util),
 * LENGTH its value; MWT is SLAQ_QBOUND_MAX (its bound is the wait, see
 * slaq_queue_admits()).
 */
size_t slaq_queue_bound_length(const slaq_queue_bound *b, unsigned r,
                               double mean_s, double tau, double util);

/*
 * Whether a node whose queue holds qlen items and whose estimated wait is
 * wait_s (slaq_queue_wait()) takes one more: qlen < length for AUTO and
 * LENGTH (length from slaq_queue_bound_length()), wait_s < value for MWT.
 */
int slaq_queue_admits(const slaq_queue_bound *b, size_t length, size_t qlen,
                      double wait_s);

/* ---------------------------------------------------------- placement */

/*
 * Algorithm 2: the estimated wait of the next task queued at a node. run
 * holds the remaining durations of the nrun running tasks, queued the
 * estimated durations of the queued ones in the order they will run. A
 * node with more than free_min free slots has no wait. Otherwise every
 * queued task takes the slot that frees first, and the wait is when the
 * slot after the last of them frees. scratch holds nrun doubles and
 * slots nrun indices (the caller's, so that the hot path does not
 * allocate). 0 if nrun is 0.
 */
double slaq_queue_wait(const double *run, size_t nrun, const double *queued,
                       size_t nqueued, size_t free_slots, size_t free_min,
                       double *scratch, size_t *slots);

/* What a node's load is when placing into queues (the setting
 * queue-load). */
typedef enum slaq_qload {
    SLAQ_QLOAD_WAIT,   /* its estimated queue wait (Algorithm 2) */
    SLAQ_QLOAD_LENGTH, /* the number of items in its queue */
} slaq_qload;

int slaq_qload_parse(const char *name, slaq_qload *out);
const char *slaq_qload_name(slaq_qload kind);   /* "?" if none */

/* A node as the placement sees it. */
typedef struct slaq_qnode {
    size_t free_slots;   /* slots no task runs on */
    size_t qlen;         /* items in its queue */
    double wait_s;       /* its estimated queue wait (slaq_queue_wait) */
    double affinity;     /* in (0, 1]: locality, 1 if none matters */
    int admits;          /* slaq_queue_admits() for one more item */
} slaq_qnode;

/*
 * Algorithm 1: the node a task goes to. While free/total slots >
 * r_fmin, the free node with the highest affinity (then the most free
 * slots, then the lowest index): the task starts at once. Below it,
 * among the nodes that admit one more item, the one with the highest
 * affinity x 1/(load + 1e-9) (load: wait or length, ties to the lowest
 * index). Returns the node's index, or -1 if no node takes the task (it
 * waits where it is: in the scheduler's or the job's own queue).
 */
long slaq_queue_place(const slaq_qnode *nodes, size_t n, size_t free_total,
                      size_t slots_total, double r_fmin, slaq_qload load);

/* -------------------------------------------------------------- order */

/* The queue orders: each is a row of the table in src/core/queue.c,
 * 0 to slaq_qorder_count() - 1. */
typedef enum slaq_qorder {
    SLAQ_QORDER_FIFO, /* in the order items joined the queue */
    SLAQ_QORDER_SRJF, /* least remaining work of the item's job first */
    SLAQ_QORDER_LRTF, /* fewest remaining tasks of the item's job first */
    SLAQ_QORDER_STF,  /* shortest item first */
    SLAQ_QORDER_EJF,  /* earliest job first */
} slaq_qorder;

size_t slaq_qorder_count(void);
int slaq_qorder_parse(const char *name, slaq_qorder *out);
const char *slaq_qorder_name(slaq_qorder kind);    /* "?" if none */
const char *slaq_qorder_summary(slaq_qorder kind); /* NULL if none */
/* Every order's name, separated by sep, into buf; as snprintf. */
int slaq_qorder_list(char *buf, size_t len, const char *sep);

/*
 * Starvation thresholds (Algorithm 3's isStarved): an item has starved
 * once it has waited longer than min(st, its duration estimate x st_r).
 * INFINITY switches either off. The orders that do not reorder (fifo,
 * ejf) starve nothing and ignore them.
 */
typedef struct slaq_starvation {
    double st;    /* hard threshold, seconds (> 0) */
    double st_r;  /* relative threshold, x the item's estimate (> 0) */
} slaq_starvation;

/* Reads "off", "ST" or "ST,ST_R" (positive numbers; either may be
 * "inf"). SLAQ_OK, or SLAQ_EINVAL with *out unchanged. */
int slaq_starvation_parse(const char *text, slaq_starvation *out);
int slaq_starvation_format(const slaq_starvation *s, char *buf, size_t len);

/* One waiting item: a task in a node's queue, or a pending job. */
typedef struct slaq_qitem {
    double job_arrival;  /* when its job arrived */
    double enqueued;     /* when it joined this queue */
    double dur_est;      /* its own estimated duration */
    double job_work;     /* its job's remaining work (sum of estimates of
                            the job's unfinished tasks, or a predicted
                            remaining time) */
    double job_tasks;    /* its job's remaining tasks */
} slaq_qitem;

/* Whether item a has starved at time now. */
int slaq_qitem_starved(const slaq_qitem *a, double now,
                       const slaq_starvation *sv);

/*
 * Algorithm 3: > 0 if a goes before b, < 0 if b before a, 0 if neither
 * (same item). Starved items go before the others, and among themselves
 * by earliest job; the others by the order's key; ties to the item that
 * has waited longer, then to the earlier job.
 */
int slaq_qorder_cmp(slaq_qorder order, const slaq_qitem *a,
                    const slaq_qitem *b, double now,
                    const slaq_starvation *sv);

/* The index of the item that goes first, or -1 if n is 0. */
long slaq_qorder_first(slaq_qorder order, const slaq_qitem *items, size_t n,
                       double now, const slaq_starvation *sv);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_QUEUE_H */
