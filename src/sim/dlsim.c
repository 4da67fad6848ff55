/*
 * dlsim.c — the simulator of jobs with deadlines (dlsim.h): workloads
 * (generated, or from a trace) and the round-by-round engine.
 *
 * The engine keeps every job in one of three states (future, active,
 * done); an active job is a job of the core's scheduler, MLFS's cluster
 * (slaq_sched_set_mlfs), which knows whether it waits or where it runs.
 * Each round the engine tells the core where every active job is on its
 * true curve (slaq_job_observe), calls the epoch, which decides the
 * stops, the pending order, placements, moves and cores, then ends the
 * stopped jobs and advances every other job by its cores until the next
 * round. A round costs O(active jobs × log) in the core plus O(nodes ×
 * jobs) for moves; the epoch is timed here (the core reads no clock).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "core/util.h"
#include "sim/dlsim.h"

const int dl_pct[DL_NPCT] = {10, 25, 50, 75, 90, 95, 99};

void dl_workload_free(dl_workload *w)
{
    free(w->jobs);
    w->jobs = NULL;
    w->n = 0;
}

void dl_result_free(dl_result *r)
{
    free(r->jct);
    free(r->completion);
    r->jct = NULL;
    r->completion = NULL;
}

void dl_config_init(dl_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = SLAQ_POLICY_MLFS;
    c->cl = (dl_cluster){20, 32, 32 * 6.0};
    c->epoch_s = 60;
    slaq_mlfs_config_init(&c->mlfs);
}

/* --------------------------------------------------------- workloads */

/* Curves whose loss falls: the others have no reduction to require. */
static size_t usable_curves(const curve_set *cs, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].loss[0] > cs->v[i].loss[cs->v[i].n - 1])
            idx[m++] = i;
    return m;
}

/* What neither workload's source says, drawn per job in this order:
 * curve (uniform over the usable ones), urgency U{1..10}, required
 * reduction U[req->lo, req->hi] of the curve's, memory U[2, 6] GB per
 * core. */
static void draw_extras(gsl_rng *rng, const size_t *idx, size_t m,
                        const dl_req *req, dl_job *j)
{
    j->curve = idx[gsl_rng_uniform_int(rng, m)];
    j->urgency = 1 + (int)gsl_rng_uniform_int(rng, 10);
    j->req = req->lo + (req->hi - req->lo) * gsl_rng_uniform(rng);
    j->mem = j->size * (2 + 4 * gsl_rng_uniform(rng));
}

static int by_arrival(const void *a, const void *b)
{
    const dl_job *x = a, *y = b;
    if (x->arrival != y->arrival)
        return (x->arrival > y->arrival) - (x->arrival < y->arrival);
    return (x->line > y->line) - (x->line < y->line);
}

int dl_generate(size_t n, double load, double deadline_scale,
                unsigned long seed, const dl_req *req, const dl_cluster *cl,
                const curve_set *cs, dl_workload *w, char *err,
                size_t errlen)
{
    static const double sizes[] = {1, 2, 4, 8, 16, 32};
    static const double share[] = {0.55, 0.15, 0.12, 0.10, 0.05, 0.03};
    w->jobs = NULL;
    w->n = 0;
    if (n == 0 || !(load > 0) || !(deadline_scale > 0)) {
        util_errf(err, errlen, "--jobs, --load and --deadline-scale must be "
                  "> 0");
        return -1;
    }
    size_t *idx = malloc((cs->n ? cs->n : 1) * sizeof *idx);
    dl_job *jobs = calloc(n, sizeof *jobs);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t m = idx ? usable_curves(cs, idx) : 0;
    if (!idx || !jobs || !rng || m == 0) {
        util_errf(err, errlen, m == 0 && idx ? "no curve in the library "
                  "whose loss falls" : "out of memory");
        free(idx);
        free(jobs);
        gsl_rng_free(rng);
        return -1;
    }
    gsl_rng_set(rng, seed);
    double work = 0;
    for (size_t i = 0; i < n; i++) {
        dl_job *j = &jobs[i];
        double u = gsl_rng_uniform(rng), acc = 0;
        size_t s = 0;
        while (s + 1 < sizeof sizes / sizeof *sizes && u >= acc + share[s])
            acc += share[s++];
        j->size = fmin(sizes[s], cl->cores);
        /* Heavy-tailed durations: lognormal, median 2 h, σ 1.4, at most
         * 48 h (the ITP traces' median is 1.7-2.2 h; Philly's span
         * minutes to days). */
        double dur = fmin(7200 * exp(1.4 * gsl_ran_ugaussian(rng)),
                          48 * 3600.0);
        j->work = dur * j->size;
        work += j->work;
        draw_extras(rng, idx, m, req, j);
        /* The estimate is the duration (MLFS assumes predicted running
         * times); the deadline max(1.1 × est, U[0.5, 24] h × scale). */
        double slack = (0.5 + 23.5 * gsl_rng_uniform(rng)) * 3600 *
                       deadline_scale;
        j->deadline = fmax(1.1 * dur, slack); /* relative until arrival */
    }
    /* Arrivals: a Poisson process whose rate follows the day,
     * λ(t) = λ0 (1 + 0.6 sin(2πt / 1 d)), by thinning; λ0 offers `load`
     * of the cores on average. */
    double lambda0 = load * (double)cl->nodes * cl->cores / (work / (double)n);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        for (;;) {
            t += gsl_ran_exponential(rng, 1 / (1.6 * lambda0));
            double rate = 1 + 0.6 * sin(2 * M_PI * t / 86400);
            if (gsl_rng_uniform(rng) * 1.6 < rate)
                break;
        }
        jobs[i].arrival = t;
        jobs[i].deadline += t;
    }
    w->jobs = jobs;
    w->n = n;
    w->load = work / ((double)cl->nodes * cl->cores * (t > 0 ? t : 1));
    w->compress = 1;
    free(idx);
    gsl_rng_free(rng);
    return 0;
}

int dl_from_trace(const dlt_trace *t, size_t first, size_t n,
                  double gpu_cores, double load, unsigned long seed,
                  const dl_req *req, const dl_cluster *cl,
                  const curve_set *cs, dl_workload *w, char *err,
                  size_t errlen)
{
    w->jobs = NULL;
    w->n = 0;
    if (first >= t->n) {
        util_errf(err, errlen, "--window starts at job %zu, but the trace "
                  "has %zu", first, t->n);
        return -1;
    }
    if (n == 0 || first + n > t->n)
        n = t->n - first;
    if (!(gpu_cores > 0) || !(load > 0)) {
        util_errf(err, errlen, "--gpu-cores and --load must be > 0");
        return -1;
    }
    size_t *idx = malloc((cs->n ? cs->n : 1) * sizeof *idx);
    dl_job *jobs = calloc(n, sizeof *jobs);
    dlt_job *src = malloc(t->n * sizeof *src);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t m = idx ? usable_curves(cs, idx) : 0;
    if (!idx || !jobs || !src || !rng || m == 0) {
        util_errf(err, errlen, m == 0 && idx ? "no curve in the library "
                  "whose loss falls" : "out of memory");
        free(idx);
        free(jobs);
        free(src);
        gsl_rng_free(rng);
        return -1;
    }
    gsl_rng_set(rng, seed);
    /* Submission order (the files are, but a reader must not assume). */
    memcpy(src, t->jobs, t->n * sizeof *src);
    for (size_t i = 1; i < t->n; i++) {
        dlt_job x = src[i];
        size_t k = i;
        while (k > 0 && src[k - 1].submit > x.submit) {
            src[k] = src[k - 1];
            k--;
        }
        src[k] = x;
    }
    double work = 0, t0 = src[first].submit, span = 0;
    for (size_t i = 0; i < n; i++) {
        const dlt_job *s = &src[first + i];
        dl_job *j = &jobs[i];
        double want = s->gpus * gpu_cores;
        double stretch = want > cl->cores ? want / cl->cores : 1;
        j->size = fmin(want, cl->cores);
        j->work = s->duration * want;
        j->arrival = s->submit - t0;
        j->deadline = (s->deadline - s->submit) * stretch; /* relative */
        j->line = s->line;
        work += j->work;
        span = j->arrival;
        draw_extras(rng, idx, m, req, j);
    }
    /* Compress the arrivals so that the window offers `load`. */
    double cores = (double)cl->nodes * cl->cores;
    double want_span = work / (load * cores);
    w->compress = span > 0 ? span / want_span : 1;
    for (size_t i = 0; i < n; i++) {
        jobs[i].arrival /= w->compress;
        jobs[i].deadline += jobs[i].arrival;
    }
    qsort(jobs, n, sizeof *jobs, by_arrival);
    w->jobs = jobs;
    w->n = n;
    w->load = span > 0 ? load : 0;
    free(idx);
    free(src);
    gsl_rng_free(rng);
    return 0;
}

/* ------------------------------------------------------------ engine */

enum { J_FUTURE, J_ACTIVE, J_DONE };

/* What the simulator keeps of a job: the truth of its run. Where it is,
 * what it waits for and its cores are its slaq_job's, the core's. */
typedef struct dl_state {
    int state;
    slaq_job *sj;       /* while active: its job in the scheduler */
    double done;        /* core-seconds of work done */
    double attained, waited;
    double completion;
    double at_deadline; /* reduction fraction at the deadline; NAN: not yet */
    int acc_by_deadline;
} dl_state;

/* The job's curve position (iteration index) and loss after `done`. */
static double curve_pos(const curve *c, const dl_job *j, double done)
{
    double f = done / j->work;
    return (f < 1 ? f : 1) * (double)(c->n - 1);
}

static double curve_loss(const curve *c, double x)
{
    if (!(x > 0))
        return c->loss[0];
    double fl = floor(x);
    if (fl >= (double)(c->n - 1))
        return c->loss[c->n - 1];
    size_t i = (size_t)fl;
    return c->loss[i] + (x - fl) * (c->loss[i + 1] - c->loss[i]);
}

/* The share of the curve's whole reduction reached at loss l, [0, 1]. */
static double reduction(const curve *c, double l)
{
    double span = c->loss[0] - c->loss[c->n - 1];
    double r = span > 0 ? (c->loss[0] - l) / span : 1;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

static double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef struct dl_engine {
    const dl_workload *w;
    const curve_set *cs;
    const dl_config *c;
    dl_state *st;
    size_t *act;        /* the active jobs, in order of arrival (the
                           scheduler's order of its jobs) */
    slaq_sched *s;      /* MLFS's cluster: every decision of a round */
} dl_engine;

static const curve *job_curve(const dl_engine *e, size_t i)
{
    return &e->cs->v[e->w->jobs[i].curve];
}

/* Ends job i at `when` (inside the round from t): its results, the
 * done hook, and its job leaves the scheduler. */
static void finish(dl_engine *e, size_t i, double when, double t)
{
    dl_state *s = &e->st[i];
    const dl_job *j = &e->w->jobs[i];
    const curve *c = job_curve(e, i);
    slaq_sched_remove(e->s, s->sj);
    s->sj = NULL;
    s->state = J_DONE;
    s->completion = when;
    if (isnan(s->at_deadline)) {
        double l = curve_loss(c, curve_pos(c, j, s->done));
        s->at_deadline = reduction(c, l);
        s->acc_by_deadline = when <= j->deadline &&
                             s->at_deadline >= j->req - 1e-12;
    }
    const dl_hook *h = e->c->hook;
    if (h && h->done)
        h->done(h->ctx, t, i, when - j->arrival, when <= j->deadline + 1e-9,
                s->acc_by_deadline, s->at_deadline);
}

/* Records the job's reduction at its deadline (inside this round). */
static void note_deadline(dl_engine *e, size_t i, double done_at_deadline)
{
    dl_state *s = &e->st[i];
    const dl_job *j = &e->w->jobs[i];
    const curve *c = job_curve(e, i);
    double l = curve_loss(c, curve_pos(c, j, done_at_deadline));
    s->at_deadline = reduction(c, l);
    s->acc_by_deadline = s->at_deadline >= j->req - 1e-12;
}

/* The scheduler the run's decisions are asked of: MLFS's cluster
 * (slaq_sched_set_mlfs) of c's nodes under c's policy, its parameters
 * and the hook's keys. NULL when the core refuses it (mlfs-rl and mlfs
 * need a model) or out of memory. */
static slaq_sched *engine_sched(const dl_config *c)
{
    slaq_sched_config sc;
    slaq_sched_config_init(&sc);
    sc.policy = c->policy;
    sc.cores = c->cl.cores;
    sc.nodes = c->cl.nodes;
    sc.epoch_s = c->epoch_s;
    sc.unit = 1;
    sc.rl = c->mlfs.prio.rl;
    slaq_mlfs_config mc = c->mlfs;
    mc.node_mem = c->cl.mem;
    if (c->hook && c->hook->keys) {
        mc.keys = c->hook->keys;
        mc.keys_ctx = c->hook->ctx;
    }
    slaq_sched *s = slaq_sched_new(&sc);
    if (s && slaq_sched_set_mlfs(s, &mc) != SLAQ_OK) {
        slaq_sched_free(s);
        s = NULL;
    }
    return s;
}

static int engine_alloc(dl_engine *e, size_t n)
{
    e->st = calloc(n, sizeof *e->st);
    e->act = malloc(n * sizeof *e->act);
    e->s = engine_sched(e->c);
    return e->st && e->act && e->s ? 0 : -1;
}

static void engine_free(dl_engine *e)
{
    free(e->st);
    free(e->act);
    slaq_sched_free(e->s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether the run can start: jobs, nodes, cores, memory and an epoch,
 * and every job fits a node and has a curve. Returns 0, or -1 with err
 * set. */
static int dl_check(const dl_workload *w, const curve_set *cs,
                    const dl_config *c, char *err, size_t errlen)
{
    const size_t n = w->n, nn = c->cl.nodes;
    if (n == 0 || nn == 0 || !(c->cl.cores > 0) || !(c->cl.mem > 0) ||
        !(c->epoch_s > 0)) {
        util_errf(err, errlen, "a run needs jobs, nodes, cores, memory and "
                  "an epoch > 0");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (w->jobs[i].size > c->cl.cores || w->jobs[i].mem > c->cl.mem ||
            w->jobs[i].curve >= cs->n) {
            util_errf(err, errlen, "job %zu%s needs %g cores and %g GB, "
                      "more than a node's %g and %g", i + 1,
                      w->jobs[i].line ? " (trace line)" : "",
                      w->jobs[i].size, w->jobs[i].mem, c->cl.cores,
                      c->cl.mem);
            return -1;
        }
    return 0;
}

/* The start: every job in the future. */
static void engine_start(dl_engine *e)
{
    for (size_t i = 0; i < e->w->n; i++)
        e->st[i].at_deadline = NAN;
}

/* Job i arrives: a job of the scheduler that asks its size in cores and
 * its memory, follows its curve (the oracle the policy divides by) and
 * has its deadline, urgency and required accuracy (a loss, MLF-C's
 * metric; OptStop's rule with --optstop). Returns 0, or -1 when the core
 * refused it (out of memory). */
static int round_arrive(dl_engine *e, size_t i)
{
    const dl_job *j = &e->w->jobs[i];
    const curve *c = job_curve(e, i);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.max_cores = j->size;
    o.mem = j->mem;
    o.truth = c->loss;
    o.truth_len = c->n;
    o.goal.deadline = j->deadline;
    o.goal.urgency = j->urgency;
    o.goal.maximize = 0;
    o.goal.accuracy = c->loss[0] - j->req * (c->loss[0] - c->loss[c->n - 1]);
    o.goal.stop = e->c->optstop ? SLAQ_STOP_OPTSTOP : SLAQ_STOP_ACCURACY;
    e->st[i].sj = slaq_sched_add(e->s, &o, j->arrival);
    e->st[i].state = J_ACTIVE;
    return e->st[i].sj ? 0 : -1;
}

/* What the core is told of the na active jobs before the round's epoch:
 * where each is on its curve, how fast a core moves it, its work left,
 * its service and its wait so far. */
static void round_observe(dl_engine *e, size_t na)
{
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        const dl_job *j = &e->w->jobs[i];
        const dl_state *s = &e->st[i];
        const curve *c = job_curve(e, i);
        slaq_job_obs o = {
            .k = curve_pos(c, j, s->done),
            .iters_per_core = (double)(c->n - 1) / j->work * e->c->epoch_s,
            .remaining_s = (j->work - s->done) / j->size,
            .attained = s->attained,
            .waited = s->waited,
        };
        slaq_job_observe(s->sj, &o);
    }
}

/* Drops the jobs that ended from the na active ones; returns how many
 * are left. */
static size_t round_compact(dl_engine *e, size_t na)
{
    size_t k = 0;
    for (size_t a = 0; a < na; a++)
        if (e->st[e->act[a]].state != J_DONE)
            e->act[k++] = e->act[a];
    return k;
}

/* MLF-C's stops at time t, as the epoch decided them (slaq_job_verdict):
 * each stopped job ends now, counted in r->stopped and *ndone. Returns
 * the active jobs left. */
static size_t round_stop(dl_engine *e, double t, size_t na, dl_result *r,
                         size_t *ndone)
{
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        if (slaq_job_verdict(e->st[i].sj) != SLAQ_VERDICT_RUN) {
            finish(e, i, t, t);
            r->stopped++;
            (*ndone)++;
        }
    }
    return round_compact(e, na);
}

/* The cores the epoch gave the na active jobs; their sum. */
static double round_given(const dl_engine *e, size_t na)
{
    double given = 0;
    for (size_t a = 0; a < na; a++)
        given += slaq_job_alloc(e->st[e->act[a]].sj);
    return given;
}

/* Advances the na active jobs from t to t + T at the epoch's cores (a
 * job that moved starts when its move ends): work done, the reduction
 * at a deadline passed, the jobs that finish. Returns how many finished
 * (they are dropped from e->act); *left the active jobs left. */
static size_t round_advance(dl_engine *e, double t, size_t na, size_t *left)
{
    const double T = e->c->epoch_s;
    size_t ndone = 0;
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        dl_state *s = &e->st[i];
        const dl_job *j = &e->w->jobs[i];
        double start = fmax(t, slaq_job_moving_until(s->sj));
        double a_c = slaq_job_alloc(s->sj);
        double run = a_c > 0 ? t + T - start : 0;
        if (run < 0)
            run = 0;
        if (isnan(s->at_deadline) && j->deadline < t + T)
            note_deadline(e, i, fmin(j->work, s->done + a_c *
                          fmax(0, fmin(run, j->deadline - start))));
        if (a_c > 0 && s->done + a_c * run >= j->work) {
            double when = start + (j->work - s->done) / a_c;
            s->attained += j->work - s->done;
            s->done = j->work;
            finish(e, i, when, t);
            ndone++;
            continue;
        }
        s->done += a_c * run;
        s->attained += a_c * run;
        if (!(a_c > 0))
            s->waited += T;
    }
    *left = round_compact(e, na);
    return ndone;
}

/* The run's results into r once every job ended: its JCTs and their
 * percentiles, waits, deadlines and accuracies met, makespan. Returns
 * 0, or -1 with err set. */
static int dl_results(const dl_engine *e, dl_result *r, char *err,
                      size_t errlen)
{
    const dl_workload *w = e->w;
    const size_t n = w->n;
    r->jct = malloc(n * sizeof *r->jct);
    r->completion = malloc(n * sizeof *r->completion);
    if (!r->jct || !r->completion) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    double first = w->jobs[0].arrival, last = first, jsum = 0, wsum = 0,
           asum = 0;
    for (size_t i = 0; i < n; i++) {
        const dl_state *s = &e->st[i];
        const dl_job *j = &w->jobs[i];
        r->jct[i] = s->completion - j->arrival;
        r->completion[i] = s->completion;
        jsum += r->jct[i];
        wsum += s->waited;
        asum += s->at_deadline;
        last = fmax(last, s->completion);
        r->deadline_met += s->completion <= j->deadline + 1e-9;
        r->acc_met += s->acc_by_deadline;
        if (j->urgency > 8) {
            r->urgent++;
            r->urgent_met += s->completion <= j->deadline + 1e-9;
        }
    }
    qsort(r->jct, n, sizeof *r->jct, cmp_double);
    for (int k = 0; k < DL_NPCT; k++) {
        size_t at = (size_t)ceil(dl_pct[k] / 100.0 * (double)n);
        r->jct_pct[k] = r->jct[at > 0 ? at - 1 : 0];
    }
    r->avg_jct = jsum / (double)n;
    r->avg_wait = wsum / (double)n;
    r->acc_at_deadline = asum / (double)n;
    r->makespan = last - first;
    return 0;
}

int dl_run(const dl_workload *w, const curve_set *cs, const dl_config *c,
           dl_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    const size_t n = w->n, nn = c->cl.nodes;
    if (dl_check(w, cs, c, err, errlen) < 0)
        return -1;
    dl_engine e = {.w = w, .cs = cs, .c = c};
    if (engine_alloc(&e, n)) {
        util_errf(err, errlen, "out of memory, or the core refused the "
                  "scheduler (mlfs-rl and mlfs need a model; bad priority "
                  "parameters)");
        engine_free(&e);
        return -1;
    }
    engine_start(&e);
    const double T = c->epoch_s;
    double t = floor(w->jobs[0].arrival / T) * T;
    size_t next = 0, ndone = 0, rounds = 0, na = 0;
    double sched_us = 0, given = 0, given_arr = 0;
    size_t rounds_arr = 0;
    const double last_arrival = w->jobs[n - 1].arrival;
    int rc = 0;

    while (ndone < n) {
        if (++rounds > DL_MAX_ROUNDS) {
            util_errf(err, errlen, "more than %d rounds: a larger --epoch "
                      "or fewer jobs", DL_MAX_ROUNDS);
            rc = -1;
            break;
        }
        while (rc == 0 && next < n && w->jobs[next].arrival <= t) {
            rc = round_arrive(&e, next);
            e.act[na++] = next++;
        }
        if (rc) {
            util_errf(err, errlen, "out of memory");
            break;
        }
        /* The round's decisions are the epoch's: stops, the order of the
         * waiting jobs and their places, moves, cores. */
        round_observe(&e, na);
        double t0 = wall_us();
        if (slaq_sched_epoch(e.s, t) != SLAQ_OK) {
            util_errf(err, errlen, "the core refused the round's keys or "
                      "its allocation");
            rc = -1;
            break;
        }
        sched_us += wall_us() - t0;
        na = round_stop(&e, t, na, r, &ndone);
        double round_given_ = round_given(&e, na);
        given += round_given_;
        if (t <= last_arrival) {
            given_arr += round_given_;
            rounds_arr++;
        }
        /* Advance to t + T. */
        ndone += round_advance(&e, t, na, &na);
        t += T;
    }
    if (!rc) {
        slaq_mlfs_stats ms = slaq_sched_mlfs_stats(e.s);
        r->moves = ms.moves;
        r->move_s = ms.move_s;
        r->move_gb = ms.move_gb;
        r->moves_skipped = ms.moves_skipped;
        r->jobs = n;
        r->rounds = rounds;
        r->sched_us = sched_us / (double)rounds;
        r->util = given / ((double)rounds * (double)nn * c->cl.cores);
        r->util_arrivals = rounds_arr ? given_arr / ((double)rounds_arr *
                                        (double)nn * c->cl.cores) : r->util;
        rc = dl_results(&e, r, err, errlen);
    }
    engine_free(&e);
    if (rc)
        dl_result_free(r);
    return rc;
}
