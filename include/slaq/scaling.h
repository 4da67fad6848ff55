/*
 * scaling.h — how fast a job runs on n cores with t threads, learnt from
 * the job's own reports (docs/libslaq.md, "Scaling").
 *
 * SLAQ's Algorithm 1 assumes an iteration takes c·S/N seconds on N cores:
 * every job speeds up in proportion to its cores. Real jobs do not: a
 * PyTorch MLP on two cores ran 3.7× slower with two threads than with one,
 * a scikit-learn MLP 1.33× faster. The scaling model fits each job's
 * speed to a few parameters from the iterations it has run, and answers
 * the two questions the scheduler asks: what one more core is worth to
 * the job (slaq_scaling_speedup, for the allocator), and how many threads
 * the job should run on its share (slaq_scaling_threads, for its advice).
 *
 * The model is Gunther's universal scalability law on threads, with the
 * time-slicing of more threads than cores:
 *
 *     y(t) = a · (1 + σ·(t − 1) + κ·t·(t − 1))
 *     speed(n, t) = min(t, n) / y(t)            iterations per second
 *
 * y(t) is the core-seconds one iteration holds at t threads (a: at one
 * thread), σ >= 0 the serial fraction (Amdahl's law: 2 threads are
 * 2 / (1 + σ) times faster than one) and κ >= 0 the cost of threads
 * contending (κ > 0 makes enough threads slower than fewer). σ = κ = 0 is
 * the paper's linear scaling, speed(n, n) = n / a exactly.
 *
 * y(t) is linear in (a, a·σ, a·κ), so a weighted least-squares fit on the
 * mean y measured at each thread count gives the parameters: two thread
 * counts fit a and σ (κ = 0), three or more all three. Until the job has
 * run at two thread counts, σ is the documented prior
 * SLAQ_SCALING_PRIOR_SIGMA.
 *
 * Pure and of fixed size (no allocation): the scheduler keeps one in
 * every job.
 */
#ifndef SLAQ_SCALING_H
#define SLAQ_SCALING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest thread count the model advises or measures (more are
 * counted as this many). */
#define SLAQ_SCALING_MAX_THREADS 4096
/* Thread counts measured at once: when a new count comes and all are
 * taken, the one measured least often makes room. */
#define SLAQ_SCALING_SLOTS 8
/* Reports at a thread count before the advice trusts its measurement
 * (and, while exploring, the reports the job runs at a count it tries). */
#define SLAQ_SCALING_EXPLORE_REPORTS 2
/* Exploration tries a thread count the fit predicts faster than the best
 * measured one only if by more than this fraction. */
#define SLAQ_SCALING_EXPLORE_GAIN 0.05
/* The serial fraction assumed until a job has run at two thread counts:
 * 0.5, the scikit-learn MLP measured on a 2-core machine (1.33× at two
 * threads). A conservative middle: a job is taken to gain a third from a
 * second core, not to double, and not to lose. */
#define SLAQ_SCALING_PRIOR_SIGMA 0.5

typedef struct slaq_scaling {
    /* Per measured thread count (slot i, in no order; threads[i] 0: a
     * free slot): reports seen, and the discounted mean and variance of
     * y, the core-seconds an iteration held. */
    unsigned threads[SLAQ_SCALING_SLOTS];
    unsigned count[SLAQ_SCALING_SLOTS];
    double mean[SLAQ_SCALING_SLOTS];
    double var[SLAQ_SCALING_SLOTS];
    /* The fit (slaq_scaling_fit; kept current by slaq_scaling_observe). */
    double a;      /* core-seconds per iteration at one thread (NAN: none) */
    double sigma;  /* serial fraction, >= 0 */
    double kappa;  /* contention, >= 0 */
    double rel_sd; /* relative standard deviation of y about the fit */
    int known;     /* measured at two or more thread counts */
} slaq_scaling;

/* An empty model: no measurement, the prior σ, a = NAN. */
void slaq_scaling_init(slaq_scaling *m);

/* The slot of thread count t, or -1 if t was not measured. */
int slaq_scaling_slot(const slaq_scaling *m, unsigned t);

/* A model of exactly linear scaling (σ = κ = 0, a = 1, known): the
 * paper's assumption, for tests and for jobs that declare it. */
void slaq_scaling_init_linear(slaq_scaling *m);

/*
 * Adds what a report says: `iters` iterations (> 0) took `wall_s` seconds
 * (> 0) at `threads` threads (>= 1) on a share of `cores` cores (> 0),
 * using `cpu_s` CPU-seconds (0 or NAN when not known). The iterations
 * held e = min(threads, max(cores, cpu_s / wall_s)) cores: a share the
 * kernel let grow (CPU weights lend idle cores) counts as the CPU used,
 * never as more than its threads. Refits the model. SLAQ_EINVAL (model
 * unchanged) on an argument out of range.
 */
int slaq_scaling_observe(slaq_scaling *m, double cores, double threads,
                         double wall_s, double cpu_s, double iters);

/* Fits a, σ, κ, rel_sd and known to the measurements (observe does). */
void slaq_scaling_fit(slaq_scaling *m);

/*
 * The job's predicted speed on `cores` cores (> 0) with `threads` threads
 * (>= 1), in iterations per second: min(threads, cores) / y(threads).
 * NAN before any measurement.
 */
double slaq_scaling_speed(const slaq_scaling *m, double cores,
                          double threads);

/*
 * The speed-up of `cores` cores (>= 0) over one core at one thread, with
 * the best whole number of threads from 1 to ceil(cores):
 * max_t min(t, cores) / (1 + σ(t − 1) + κt(t − 1)). Exactly `cores` when
 * σ = κ = 0; `cores` itself for m NULL (linear). Never NAN.
 */
double slaq_scaling_speedup(const slaq_scaling *m, double cores);

/*
 * The threads a share of `cores` cores can keep busy: max(1, floor(cores
 * + 0.25)), at most SLAQ_SCALING_MAX_THREADS (the client library's
 * thread rule, slaq_client_threads_for, without the CPU count).
 */
int slaq_scaling_busy_threads(double cores);

/*
 * The threads to advise on `cores` cores: among the counts the share can
 * keep busy, the one with the best measured speed (so never one measured
 * slower than one thread). Explores where the share allows it, each count
 * for SLAQ_SCALING_EXPLORE_REPORTS reports: one thread first, then two,
 * then the count the fit predicts fastest, while that prediction beats
 * the best measured speed by more than SLAQ_SCALING_EXPLORE_GAIN and the
 * count is untried. Before any measurement: 1.
 */
int slaq_scaling_threads(const slaq_scaling *m, double cores);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_SCALING_H */
