/*
 * sim.c — the discrete-event loop of slaq's simulator.
 *
 * Events are job arrivals, iteration completions and epoch boundaries
 * (multiples of T). Each active job keeps the time its current iteration
 * completes at its current rate; a binary min-heap on those times finds the
 * next completion in O(log n), so an event costs O(log n) and only a
 * decision (an epoch) touches every job. Progress is kept relative to the
 * last time a job's rate changed (its anchor), so completion times carry
 * one rounding, not one per iteration: a job alone finishes at exactly its
 * work over its cores.
 *
 * Every decision is the core's: the loop only calls slaq_sched_add,
 * slaq_job_report, slaq_sched_epoch and slaq_job_alloc, in the order slaqd
 * would see the same events, and decides only at epoch boundaries, as
 * slaqd's epoch timer does. The wall time of each slaq_sched_epoch() is
 * measured here (the core reads no clock).
 */
#include "sim/sim.h"
#include "sim/metrics.h"
#include "slaq/deadline.h"
#include "slaq/settings.h"
#include "slaq/shares.h"

#include "core/heap.h"
#include "core/util.h"
#include "io/setopt.h"
#include "io/stats.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const int sim_x_pct[SIM_NX] = {50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 99};

void sim_config_init(sim_config *c)
{
    slaq_sched_config_init(&c->sched);
    /* The simulator's one default of its own (docs/sim.md): the paper's
     * evaluation divides the cores every 2 s. */
    int rc = slaq_sched_config_set(&c->sched, "epoch", "2", NULL, 0);
    assert(rc == SLAQ_OK);
    (void)rc;
    c->arrival_scale = 1;
    c->declare_iters = 1;
    c->nodes = 0;
    c->shares = 0;
    c->progress = NULL;
    c->progress_arg = NULL;
    c->on_report = NULL;
    c->on_alloc = NULL;
    c->trace_arg = NULL;
}

int sim_config_check(const sim_config *c, const wl_workload *wl, char *err,
                     size_t errlen)
{
    if (!(c->sched.cores > 0) || !isfinite(c->sched.cores) || !(c->sched.unit > 0) ||
        !isfinite(c->sched.unit) || !(c->sched.epoch_s > 0) || !isfinite(c->sched.epoch_s) ||
        !(c->arrival_scale > 0) || !isfinite(c->arrival_scale)) {
        util_errf(err, errlen, "--cores, --epoch and --unit must be finite "
                  "numbers > 0");
        return -1;
    }
    if (c->nodes > SIM_MAX_NODES) {
        util_errf(err, errlen, "--nodes %zu: more than the cap of %d nodes",
                  c->nodes, SIM_MAX_NODES);
        return -1;
    }
    if (c->sched.cores / c->sched.unit > SIM_MAX_UNITS) {
        util_errf(err, errlen, "--cores %g / --unit %g is %g units to divide "
                  "every epoch, more than the cap of %d; use a larger "
                  "--unit", c->sched.cores, c->sched.unit, c->sched.cores / c->sched.unit,
                  SIM_MAX_UNITS);
        return -1;
    }
    const double per_node = c->nodes ? c->sched.cores / (double)c->nodes
                                     : c->sched.cores;
    const char *per_name = c->nodes ? "a node's cores" : "--cores";
    const double T = c->sched.epoch_s;
    double first = INFINITY, work = 0, longest = 0;
    size_t lj = 0, late = 0;
    for (size_t i = 0; i < wl->n; i++)
        first = fmin(first, wl->jobs[i].arrival_s);
    for (size_t i = 0; i < wl->n; i++) {
        const wl_job *j = &wl->jobs[i];
        double w = (double)(j->nlosses - 1) * j->iter_cpu_s;
        double t = w / fmin(j->max_cores, per_node);
        work += w;
        if (t > longest || i == 0) {
            longest = t;
            lj = i;
        }
        if (j->arrival_s > wl->jobs[late].arrival_s)
            late = i;
    }
    if (wl->n == 0)
        return 0;
    double last = first + (wl->jobs[late].arrival_s - first) *
                          c->arrival_scale;
    if (last / T > SIM_MAX_BOUNDARY) {
        util_errf(err, errlen, "job %s (line %zu): arrival_s %g is epoch "
                  "boundary %g of --epoch %g s, beyond the cap of %g",
                  wl->jobs[late].id, wl->jobs[late].line, last, last / T, T,
                  SIM_MAX_BOUNDARY);
        return -1;
    }
    const wl_job *j = &wl->jobs[lj];
    if (longest / T > SIM_MAX_EPOCHS) {
        double maxc = fmin(j->max_cores, per_node);
        util_errf(err, errlen, "job %s (line %zu): %zu iterations of "
                  "iter_cpu_s %g on at most %g cores (%s) take at least %g "
                  "s, %g epochs of --epoch %g s, more than the cap of %d "
                  "epochs", j->id, j->line, j->nlosses - 1, j->iter_cpu_s,
                  maxc, j->max_cores <= per_node ? "max_cores" : per_name,
                  longest, longest / T, T, SIM_MAX_EPOCHS);
        return -1;
    }
    if (work / c->sched.cores / T > SIM_MAX_EPOCHS) {
        util_errf(err, errlen, "the workload's %g CPU-seconds on --cores %g "
                  "take at least %g s, %g epochs of --epoch %g s, more than "
                  "the cap of %d epochs", work, c->sched.cores, work / c->sched.cores,
                  work / c->sched.cores / T, T, SIM_MAX_EPOCHS);
        return -1;
    }
    return 0;
}

int sim_parse_run(const char *name, slaq_predictor_kind dflt, sim_config *c)
{
    char pol[64], whole[128];
    const char *plus = strstr(name, "+shares");
    c->shares = 0;
    if (plus && !strcmp(plus, "+shares")) {
        size_t len = (size_t)(plus - name);
        if (len >= sizeof whole)
            return -1;
        memcpy(whole, name, len);
        whole[len] = '\0';
        name = whole;
        c->shares = 1;
    }
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    if (len >= sizeof pol)
        return -1;
    memcpy(pol, name, len);
    pol[len] = '\0';
    c->sched.predictor = dflt;
    if (!strcmp(pol, "slaq-linear")) { /* slaq without the scaling model */
        c->sched.scaling = 0;
        snprintf(pol, sizeof pol, "slaq");
    }
    if (!strcmp(pol, "oracle-greedy") || !strcmp(pol, "oracle") ||
        !strcmp(pol, "oracle-plan") || !strcmp(pol, "oracle-index")) {
        if (colon)
            return -1;
        c->sched.policy = !strcmp(pol, "oracle-plan")    ? SLAQ_POLICY_PLAN
                          : !strcmp(pol, "oracle-index") ? SLAQ_POLICY_INDEX
                                                         : SLAQ_POLICY_SLAQ;
        c->sched.predictor = SLAQ_PRED_ORACLE;
        return 0;
    }
    if (slaq_policy_parse(pol, &c->sched.policy) != SLAQ_OK)
        return -1;
    if (colon && (slaq_predictor_parse(colon + 1, &c->sched.predictor) !=
                      SLAQ_OK ||
                  c->sched.predictor == SLAQ_PRED_ORACLE))
        return -1;
    return 0;
}

int sim_x_index(int pct)
{
    for (int i = 0; i < SIM_NX; i++)
        if (sim_x_pct[i] == pct)
            return i;
    return -1;
}

double sim_mean_interarrival(const wl_workload *wl)
{
    if (wl->n < 2)
        return 0;
    double lo = wl->jobs[0].arrival_s, hi = lo;
    for (size_t i = 1; i < wl->n; i++) {
        lo = fmin(lo, wl->jobs[i].arrival_s);
        hi = fmax(hi, wl->jobs[i].arrival_s);
    }
    return (hi - lo) / (double)(wl->n - 1);
}

/* A job while it is in the simulation. */
typedef struct sjob {
    const wl_job *w;
    sim_jobres *res;
    slaq_job *sj;
    size_t order;     /* rank by arrival: the tie-break everywhere */
    double arrival;
    size_t k;         /* iterations completed */
    double anchor_t;  /* last rate change */
    size_t anchor_k;  /* iterations completed at anchor_t */
    double anchor_w;  /* CPU-seconds of iteration anchor_k+1 done then */
    double cores;     /* cores in use since anchor_t: min(alloc, max) */
    double speed;     /* the work they do, in cores: `cores` for a job
                         that scales linearly, min(threads, cores) /
                         (1 + σ(t − 1) + κt(t − 1)) for one with a curve */
    int threads;      /* the threads it runs (0: it does not say) */
    double last_t;    /* its last report */
    double next_t;    /* completion of iteration k+1; INFINITY if stalled */
    double norm_loss; /* normalised loss after iteration k */
    int xi;           /* first loss reduction not reached yet */
    size_t act_pos;   /* position in the active array */
    int decided;      /* has had its first allocation */
} sjob;

typedef struct simstate {
    const sim_config *cfg;
    slaq_sched *s;
    sjob *jobs;       /* in arrival order */
    size_t *heap;     /* active jobs' indices in jobs, a heap on
                         (next_t, order) */
    sjob **active;    /* active jobs, unordered */
    metric_point *rank; /* scratch for loss groups */
    size_t nactive;
    sim_result *r;
    slaq_shares *shares; /* cfg->shares: the workload's users */
    int *tenant;         /* each workload job's user in it */
    const wl_job *wl_jobs; /* the workload's jobs, tenant[]'s index */
    size_t samples_cap, epochs_cap;
    double done_iters, total_iters;
} simstate;

/* ------------------------------------------------------------------ heap */

/* The heap's order (heap.h), ctx the jobs: the next completion first,
 * ties by arrival. */
static int job_before(const void *ctx, size_t a, size_t b)
{
    const sjob *x = (const sjob *)ctx + a, *y = (const sjob *)ctx + b;
    if (x->next_t != y->next_t)
        return x->next_t < y->next_t;
    return x->order < y->order;
}

/* The active job whose iteration completes first. */
static sjob *next_job(const simstate *st) { return &st->jobs[st->heap[0]]; }

/* ------------------------------------------------------------ job model */

/* ℓ after iteration k (docs/metrics.md, metric_norm_loss). */
static double norm_loss(const wl_job *w, size_t k)
{
    return metric_norm_loss(w->loss[k], w->loss[0], w->loss[w->nlosses - 1],
                            k + 1 >= w->nlosses);
}

/* The cost factor of a job with a scaling curve at t threads: its
 * iteration holds iter_cpu_s times this many core-seconds. */
static double job_factor(const wl_job *w, int t)
{
    return 1 + w->sigma * (t - 1) + w->kappa * t * (t - 1);
}

/* Sets the completion time of iteration k+1 from the job's anchor. */
static void job_schedule(sjob *j)
{
    if (!(j->speed > 0)) {
        j->next_t = INFINITY;
        return;
    }
    double work = (double)(j->k + 1 - j->anchor_k) * j->w->iter_cpu_s -
                  j->anchor_w;
    j->next_t = j->anchor_t + work / j->speed;
}

/* Changes the job's cores at time t (a decision), keeping its progress:
 * `cores` in use doing the work of `speed` cores of one thread. */
static void job_set_cores(sjob *j, double t, double cores, double speed)
{
    if (cores == j->cores && speed == j->speed)
        return;
    double done = j->anchor_w + (t - j->anchor_t) * j->speed -
                  (double)(j->k - j->anchor_k) * j->w->iter_cpu_s;
    if (done < 0) /* rounding right after a completion */
        done = 0;
    if (done > j->w->iter_cpu_s)
        done = j->w->iter_cpu_s;
    j->anchor_t = t;
    j->anchor_k = j->k;
    j->anchor_w = done;
    j->cores = cores;
    j->speed = speed;
    job_schedule(j);
}

static void job_reached(sjob *j, double t)
{
    j->xi = metric_reached(j->norm_loss, t - j->arrival, j->xi, j->res->tx);
}

/* ------------------------------------------------------------ the loop */

static int push_epoch(simstate *st, double t, double ms, double cpu_ms,
                      double fit_cpu_ms)
{
    sim_result *r = st->r;
    if (r->nepochs == st->epochs_cap) {
        size_t nc = grow_cap(st->epochs_cap, r->nepochs + 1, 256);
        if (!nc || GROW_ARRAY(r->epochs, nc))
            return -1;
        st->epochs_cap = nc;
    }
    r->epochs[r->nepochs++] =
        (sim_epoch){t, st->nactive, ms, cpu_ms, fit_cpu_ms,
                    slaq_sched_refits(st->s), slaq_sched_refit_backlog(st->s)};
    return 0;
}

/* One decision at time t: the core's epoch, then every job's new rate. */
static int decide(simstate *st, double t, char *err, size_t errlen)
{
    /* slaq_sched_epoch() in its two halves, to time the refit apart */
    double t0 = stats_now_ms(), c0 = stats_cpu_ms();
    slaq_sched_refit(st->s);
    double c1 = stats_cpu_ms();
    int rc = slaq_sched_allocate(st->s, t);
    double ms = stats_now_ms() - t0, cpu_ms = stats_cpu_ms() - c0;
    if (rc != SLAQ_OK) {
        util_errf(err, errlen, "scheduling epoch at t=%.6f s failed: %s", t,
                  slaq_strerror(rc));
        return -1;
    }
    if (push_epoch(st, t, ms, cpu_ms, c1 - c0)) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    int progress = 0;
    for (size_t i = 0; i < st->nactive; i++) {
        sjob *j = st->active[i];
        double a = slaq_job_alloc(j->sj);
        double mc = j->w->max_cores;
        double use = a < mc ? a : mc;
        if (st->cfg->on_alloc)
            st->cfg->on_alloc(st->cfg->trace_arg, t,
                              (size_t)(j->res - st->r->jobs), a);
        if (j->decided && fabs(use - j->cores) > 1e-9) {
            j->res->changes++;
            j->res->moved += fabs(use - j->cores);
        }
        j->decided = 1;
        if (use > 0 && isnan(j->res->start))
            j->res->start = t;
        /* A job with a scaling curve runs the threads the core advises
         * on its share (as a client's threads() does), at the speed its
         * curve gives them; the others are the paper's. */
        double speed = use;
        if (j->w->scaled) {
            j->threads = slaq_job_threads(j->sj, use);
            speed = fmin(j->threads, use) / job_factor(j->w, j->threads);
        }
        job_set_cores(j, t, use, speed);
        progress |= isfinite(j->next_t);
    }
    heap_build(st->heap, st->nactive, job_before, st->jobs);
    if (st->nactive && !progress) {
        util_errf(err, errlen, "at t=%.6f s no active job has cores: the "
                  "policy allocated nothing", t);
        return -1;
    }
    return 0;
}

/* Records the timeline row of an epoch boundary. */
static int sample(simstate *st, double t, char *err, size_t errlen)
{
    sim_result *r = st->r;
    if (r->nsamples == st->samples_cap) {
        size_t nc = grow_cap(st->samples_cap, r->nsamples + 1, 256);
        if (!nc || GROW_ARRAY(r->samples, nc)) {
            util_errf(err, errlen, "out of memory");
            return -1;
        }
        st->samples_cap = nc;
    }
    for (size_t i = 0; i < st->nactive; i++) {
        const sjob *j = st->active[i];
        st->rank[i] = (metric_point){j->norm_loss, j->cores, j->order};
    }
    metric_sample(&r->samples[r->nsamples++], t, st->rank, st->nactive);
    return 0;
}

static int by_arrival(const void *a, const void *b)
{
    const sjob *x = a, *y = b;
    if (x->arrival != y->arrival)
        return x->arrival < y->arrival ? -1 : 1;
    return x->w < y->w ? -1 : x->w > y->w;
}

/* Hands job j's report to the scheduler and, once it is accepted, to the
 * trace hook. 0, or -1 with err saying which report was refused. */
static int job_report(simstate *st, sjob *j, const slaq_report *rep,
                      char *err, size_t errlen)
{
    int rc = j->threads ? slaq_job_report_scaling(j->sj, rep, j->threads,
                                                  rep->t - j->last_t)
                        : slaq_job_report(j->sj, rep);
    j->last_t = rep->t;
    if (rc != SLAQ_OK) {
        util_errf(err, errlen, "job %s: report of iteration %llu refused: %s",
                  j->w->id, (unsigned long long)rep->iter, slaq_strerror(rc));
        return -1;
    }
    if (st->cfg->on_report)
        st->cfg->on_report(st->cfg->trace_arg, (size_t)(j->res - st->r->jobs),
                           rep);
    return 0;
}

static int job_arrive(simstate *st, sjob *j, char *err, size_t errlen)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.weight = j->w->weight;
    o.max_cores = j->w->max_cores;
    wl_job_goal(j->w, &o.goal);
    /* The class the job declares (checked when the workload was read). */
    if (slaq_convergence_parse(j->w->convergence, &o.convergence))
        o.convergence = SLAQ_CONV_UNKNOWN;
    /* A job says how many iterations it runs (a training loop's epochs):
     * its end of curve. */
    if (st->cfg->declare_iters)
        o.iters = j->w->nlosses - 1;
    if (st->cfg->sched.predictor == SLAQ_PRED_ORACLE) {
        o.truth = j->w->loss;
        o.truth_len = j->w->nlosses;
        /* The oracle knows the job: its loss curve and its cost. */
        o.iter_cpu_s = j->w->iter_cpu_s;
    }
    o.user = j;
    if (st->shares)
        o.tenant = st->tenant[j->w - st->wl_jobs];
    j->sj = slaq_sched_add(st->s, &o, j->arrival);
    if (!j->sj) {
        util_errf(err, errlen, "job %s (line %zu): the scheduler refused it",
                  j->w->id, j->w->line);
        return -1;
    }
    slaq_report rep = {.iter = 0, .loss = j->w->loss[0], .t = j->arrival};
    if (job_report(st, j, &rep, err, errlen) < 0)
        return -1;
    j->anchor_t = j->arrival;
    j->cores = 0;
    j->speed = 0;
    j->next_t = INFINITY;
    j->norm_loss = norm_loss(j->w, 0);
    j->res->arrival = j->arrival;
    j->res->start = NAN;
    j->act_pos = st->nactive;
    st->active[st->nactive] = j;
    heap_push(st->heap, st->nactive, (size_t)(j - st->jobs), job_before,
              st->jobs);
    st->nactive++;
    return 0;
}

/* Iteration k+1 of the heap's top job completes at its next_t. Returns 1
 * if the job finished (and left), 0 if not, -1 on error. */
static int job_complete(simstate *st, char *err, size_t errlen)
{
    sjob *j = next_job(st);
    double t = j->next_t;
    j->k++;
    /* A job with a scaling curve reports the core-seconds its threads
     * held (spinning ones included), as a process's CPU time does. */
    double cpu = j->w->iter_cpu_s;
    if (j->threads)
        cpu *= job_factor(j->w, j->threads);
    slaq_report rep = {.iter = j->k, .loss = j->w->loss[j->k],
                       .cpu_s = cpu, .samples = 1, .t = t};
    if (job_report(st, j, &rep, err, errlen) < 0)
        return -1;
    j->norm_loss = norm_loss(j->w, j->k);
    job_reached(j, t);
    st->done_iters++;
    if (j->k + 1 < j->w->nlosses) {
        job_schedule(j);
        heap_sift_down(st->heap, st->nactive, 0, job_before, st->jobs);
        return 0;
    }
    j->res->completion = t;
    j->res->starved = slaq_job_starved_max(j->sj, t);
    slaq_sched_remove(st->s, j->sj);
    j->sj = NULL;
    heap_pop(st->heap, st->nactive, job_before, st->jobs);
    st->nactive--;
    if (st->nactive > 0) {
        sjob *last = st->active[st->nactive];
        st->active[j->act_pos] = last;
        last->act_pos = j->act_pos;
    }
    return 1;
}

void sim_result_free(sim_result *r)
{
    free(r->jobs);
    free(r->samples);
    free(r->epochs);
    memset(r, 0, sizeof *r);
}

/* The workload's accounts and users as a tree of equal weights (an
 * account under the root, a user under its job's account or the root),
 * handed to the scheduler. */
static int sim_shares(simstate *st, const wl_workload *wl, char *err,
                      size_t errlen)
{
    st->shares = slaq_shares_new();
    st->tenant = malloc((wl->n ? wl->n : 1) * sizeof *st->tenant);
    if (!st->shares || !st->tenant) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < wl->n; i++) {
        const wl_job *w = &wl->jobs[i];
        const char *user = *w->user ? w->user : "-";
        int id = slaq_shares_place(st->shares, user, w->account);
        if (id < 0) {
            int u = slaq_shares_find(st->shares, user);
            const slaq_share_entry *e = slaq_shares_at(st->shares, u);
            util_errf(err, errlen, "job %s (line %zu): user '%s' of account "
                      "'%s': %s", w->id, w->line, user, w->account,
                      e && e->user ? "the user is in another account"
                                   : "the name is an account's and a user's");
            return -1;
        }
        st->tenant[i] = id;
    }
    if (slaq_sched_set_shares(st->s, st->shares) != SLAQ_OK) {
        util_errf(err, errlen, "the scheduler refused the workload's users");
        return -1;
    }
    return 0;
}

/* What sim_run made for a run, freed whether it ended or failed. */
static void simstate_free(simstate *st)
{
    slaq_sched_free(st->s);
    slaq_shares_free(st->shares);
    free(st->tenant);
    free(st->jobs);
    free(st->heap);
    free(st->active);
    free(st->rank);
}

int sim_run(const wl_workload *wl, const sim_config *cfg, sim_result *r,
            char *err, size_t errlen)
{
    simstate st = {.cfg = cfg, .r = r};
    memset(r, 0, sizeof *r);
    if (sim_config_check(cfg, wl, err, errlen))
        return -1;
    slaq_sched_config sc = cfg->sched;
    slaq_rl_model net; /* mlfs-rl's and mlfs's: the committed one */
    if (setopt_model(&sc, NULL, &net, err, errlen))
        return -1;
    if (cfg->nodes > 0) {
        sc.nodes = cfg->nodes;
        sc.cores = cfg->sched.cores / (double)cfg->nodes;
        sc.queue = 1;
    }
    size_t n = wl->n;
    st.s = slaq_sched_new(&sc);
    r->jobs = calloc(n, sizeof *r->jobs);
    st.jobs = calloc(n, sizeof *st.jobs);
    st.heap = malloc(n * sizeof *st.heap);
    st.active = malloc(n * sizeof *st.active);
    st.rank = malloc(n * sizeof *st.rank);
    r->njobs = n;
    if (!st.s || !r->jobs || !st.jobs || !st.heap || !st.active || !st.rank) {
        util_errf(err, errlen, st.s ? "out of memory"
                  : "invalid scheduler configuration");
        goto err;
    }
    double first = INFINITY;
    for (size_t i = 0; i < n; i++)
        first = fmin(first, wl->jobs[i].arrival_s);
    for (size_t i = 0; i < n; i++) {
        sjob *j = &st.jobs[i];
        j->w = &wl->jobs[i];
        j->res = &r->jobs[i];
        j->arrival = first + (j->w->arrival_s - first) * cfg->arrival_scale;
        st.total_iters += (double)(j->w->nlosses - 1);
    }
    qsort(st.jobs, n, sizeof *st.jobs, by_arrival);
    for (size_t i = 0; i < n; i++)
        st.jobs[i].order = i;
    st.wl_jobs = wl->jobs;
    if (cfg->shares && sim_shares(&st, wl, err, errlen))
        goto err;

    const double T = cfg->sched.epoch_s;
    size_t next_arr = 0;
    double e = 0; /* index of the next epoch boundary, e·T */
    double last_report = 0;
    while (next_arr < n || st.nactive > 0) {
        double t = INFINITY;
        if (st.nactive > 0)
            t = fmin(next_job(&st)->next_t, e * T);
        if (next_arr < n)
            t = fmin(t, st.jobs[next_arr].arrival);
        /* After an idle gap the grid resumes at the first boundary not
         * before t: empty epochs are skipped, not simulated. */
        if (st.nactive == 0)
            e = ceil(t / T);
        while (st.nactive > 0 && next_job(&st)->next_t <= t)
            if (job_complete(&st, err, errlen) < 0)
                goto err;
        while (next_arr < n && st.jobs[next_arr].arrival <= t)
            if (job_arrive(&st, &st.jobs[next_arr++], err, errlen))
                goto err;
        /* Decisions are made at epoch boundaries only, as slaqd's epoch
         * timer does: an arrival waits for the next boundary with no
         * cores, and a finished job's cores stay unused until then. */
        int boundary = e * T == t;
        while (e * T <= t)
            e++;
        if (st.nactive > 0 && boundary) {
            if (r->nepochs >= SIM_MAX_EPOCHS) {
                util_errf(err, errlen, "the run reached the cap of %d epoch "
                          "decisions at t=%.6f s with %zu jobs still active "
                          "(jobs the configuration cannot finish?)",
                          SIM_MAX_EPOCHS, t, st.nactive);
                goto err;
            }
            if (decide(&st, t, err, errlen))
                goto err;
            if (sample(&st, t, err, errlen))
                goto err;
        }
        if (cfg->progress && st.done_iters - last_report >= 1000) {
            cfg->progress(cfg->progress_arg, st.done_iters, st.total_iters);
            last_report = st.done_iters;
        }
    }
    if (cfg->progress)
        cfg->progress(cfg->progress_arg, st.done_iters, st.total_iters);
    simstate_free(&st);
    return 0;
err:
    simstate_free(&st);
    sim_result_free(r);
    return -1;
}

/* ------------------------------------------------------------- metrics */

void sim_summarize(const sim_result *r, sim_summary *s)
{
    memset(s, 0, sizeof *s);
    s->jobs = r->njobs;
    /* The jobs each mean is over: those with a number (all of a
     * simulation's; slaq report's may not have ended or reached X). */
    size_t have_tx[SIM_NX] = {0}, ended = 0;
    for (size_t i = 0; i < r->njobs; i++) {
        for (int x = 0; x < SIM_NX; x++)
            have_tx[x] += !isnan(r->jobs[i].tx[x]);
        ended += !isnan(r->jobs[i].completion);
    }
    for (int x = 0; x < SIM_NX; x++)
        s->tx_mean[x] = have_tx[x] ? 0 : NAN;
    s->jct_mean = ended ? 0 : NAN;
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < r->njobs; i++) {
        const sim_jobres *j = &r->jobs[i];
        for (int x = 0; x < SIM_NX; x++)
            if (!isnan(j->tx[x]))
                s->tx_mean[x] += j->tx[x] / (double)have_tx[x];
        if (!isnan(j->completion))
            s->jct_mean += (j->completion - j->arrival) / (double)ended;
        first = fmin(first, j->arrival);
        last = fmax(last, j->completion);
    }
    s->makespan = ended && ended == r->njobs ? last - first : NAN;
    double job_min = 0, changes = 0, moved = 0;
    for (size_t i = 0; i < r->njobs; i++) {
        if (isnan(r->jobs[i].completion))
            continue;
        job_min += (r->jobs[i].completion - r->jobs[i].arrival) / 60;
        changes += (double)r->jobs[i].changes;
        moved += r->jobs[i].moved;
        s->starved_max = fmax(s->starved_max, r->jobs[i].starved);
    }
    if (job_min > 0) {
        s->changes_per_job_min = changes / job_min;
        s->moved_per_job_min = moved / job_min;
    }
    size_t used = 0;
    for (size_t i = 0; i < r->nsamples; i++) {
        const sim_sample *sm = &r->samples[i];
        s->avg_norm_loss += sm->avg_norm_loss / (double)r->nsamples;
        double tot = sm->cores[0] + sm->cores[1] + sm->cores[2];
        if (tot > 0) {
            used++;
            for (int g = 0; g < SIM_NGROUPS; g++)
                s->share[g] += sm->cores[g] / tot;
        }
    }
    for (int g = 0; g < SIM_NGROUPS && used; g++)
        s->share[g] /= (double)used;
    s->epochs = r->nepochs;
    if (r->nepochs) {
        double *v = malloc(r->nepochs * sizeof *v);
        double sum = 0;
        for (size_t i = 0; i < r->nepochs; i++)
            sum += r->epochs[i].ms;
        s->sched_mean_ms = sum / (double)r->nepochs;
        if (v) {
            for (size_t i = 0; i < r->nepochs; i++)
                v[i] = r->epochs[i].ms;
            s->sched_p99_ms = stats_quantile(v, r->nepochs, 0.99);
            s->sched_max_ms = v[r->nepochs - 1];
            free(v);
        }
    }
}

int sim_write_summary(FILE *f, const char *name, const sim_config *cfg,
                      const sim_summary *s)
{
    const slaq_sched_config *sc = &cfg->sched;
    int rc = 0;
    rc |= fprintf(f, "{\"policy\": \"%s\", \"core_policy\": \"%s\", "
                  "\"predictor\": \"%s\",\n",
                  name, slaq_policy_name(sc->policy),
                  sc->policy == SLAQ_POLICY_FAIR
                      ? "none" : slaq_predictor_name(sc->predictor)) < 0;
    rc |= fprintf(f, " \"cores\": %.6g, \"epoch_s\": %.6g, \"unit\": %.6g, "
                  "\"default_iter_cpu_s\": %.6g, \"jobs\": %zu,\n",
                  sc->cores, sc->epoch_s, sc->unit, sc->default_iter_cpu_s,
                  s->jobs) < 0;
    if (cfg->nodes > 0)
        rc |= fprintf(f, " \"nodes\": %zu, \"cores_per_node\": %.6g, "
                      "\"placement\": \"%s\",\n", cfg->nodes,
                      sc->cores / (double)cfg->nodes,
                      slaq_placement_name(sc->placement)) < 0;
    rc |= fprintf(f, " \"avg_norm_loss\": %.6f, \"t90_mean_s\": %.3f, "
                  "\"t95_mean_s\": %.3f,\n", s->avg_norm_loss,
                  s->tx_mean[sim_x_index(90)],
                  s->tx_mean[sim_x_index(95)]) < 0;
    rc |= fprintf(f, " \"jct_mean_s\": %.3f, \"makespan_s\": %.3f,\n",
                  s->jct_mean, s->makespan) < 0;
    rc |= fprintf(f, " \"alloc_changes_per_job_min\": %.4f, "
                  "\"cores_moved_per_job_min\": %.4f,\n",
                  s->changes_per_job_min, s->moved_per_job_min) < 0;
    rc |= fprintf(f, " \"starved_max_s\": %.3f,\n", s->starved_max) < 0;
    rc |= fputs(" \"time_to_reduction_mean_s\": {", f) < 0;
    for (int x = 0; x < SIM_NX; x++)
        rc |= fprintf(f, "%s\"%d\": %.3f", x ? ", " : "", sim_x_pct[x],
                      s->tx_mean[x]) < 0;
    rc |= fprintf(f, "},\n \"share_by_loss_group\": {\"high\": %.6f, "
                  "\"medium\": %.6f, \"low\": %.6f},\n", s->share[SIM_HIGH],
                  s->share[SIM_MEDIUM], s->share[SIM_LOW]) < 0;
    rc |= fprintf(f, " \"sched_ms\": {\"mean\": %.4f, \"p99\": %.4f, "
                  "\"max\": %.4f},\n \"epochs\": %zu}\n", s->sched_mean_ms,
                  s->sched_p99_ms, s->sched_max_ms, s->epochs) < 0;
    return rc ? -1 : 0;
}

int sim_write_timeline(FILE *f, const sim_result *r)
{
    int rc = fputs("time_s,active_jobs,avg_norm_loss,cores_high,"
                   "cores_medium,cores_low\n", f) < 0;
    for (size_t i = 0; i < r->nsamples; i++) {
        const sim_sample *s = &r->samples[i];
        rc |= fprintf(f, "%.3f,%zu,%.6f,%.4f,%.4f,%.4f\n", s->t, s->active,
                      s->avg_norm_loss, s->cores[SIM_HIGH],
                      s->cores[SIM_MEDIUM], s->cores[SIM_LOW]) < 0;
    }
    return rc ? -1 : 0;
}

/* Writes a CSV field, quoted when it holds a comma, quote or newline. */
static int csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r"))
        return fputs(s, f) < 0;
    int rc = fputc('"', f) == EOF;
    for (; *s; s++) {
        if (*s == '"')
            rc |= fputc('"', f) == EOF;
        rc |= fputc(*s, f) == EOF;
    }
    return rc | (fputc('"', f) == EOF);
}

int sim_write_jobs(FILE *f, const wl_workload *wl, const sim_result *r)
{
    int rc = fputs("id,algorithm,arrival_s", f) < 0;
    for (int x = 0; x < SIM_NX; x++)
        rc |= fprintf(f, ",t%d_s", sim_x_pct[x]) < 0;
    rc |= fputs(",completion_s,jct_s,wait_s,user,account\n", f) < 0;
    for (size_t i = 0; i < r->njobs; i++) {
        const sim_jobres *j = &r->jobs[i];
        rc |= csv_str(f, wl->jobs[i].id);
        rc |= fputc(',', f) == EOF;
        rc |= csv_str(f, wl->jobs[i].algorithm);
        rc |= fprintf(f, ",%.3f", j->arrival) < 0;
        for (int x = 0; x < SIM_NX; x++)
            rc |= fprintf(f, ",%.3f", j->tx[x]) < 0;
        rc |= fprintf(f, ",%.3f,%.3f,%.3f,", j->completion,
                      j->completion - j->arrival,
                      (isnan(j->start) ? j->completion : j->start) -
                          j->arrival) < 0;
        rc |= csv_str(f, wl->jobs[i].user);
        rc |= fputc(',', f) == EOF;
        rc |= csv_str(f, wl->jobs[i].account);
        rc |= fputc('\n', f) == EOF;
    }
    return rc ? -1 : 0;
}

int sim_write_sched(FILE *f, const sim_result *r)
{
    int rc = fputs("time_s,active_jobs,sched_ms\n", f) < 0;
    for (size_t i = 0; i < r->nepochs; i++)
        rc |= fprintf(f, "%.3f,%zu,%.4f\n", r->epochs[i].t,
                      r->epochs[i].jobs, r->epochs[i].ms) < 0;
    return rc ? -1 : 0;
}
