/*
 * sched.c — a set of jobs and the per-epoch scheduling step.
 *
 * slaq_sched_epoch() is the one call both drivers make: slaqd on its epoch
 * timer with real time, the simulator with virtual time. It refits the
 * predictors of jobs that reported, places each job on its forecast (last
 * report plus the progress made since), hands everything to the policy and
 * refills the token buckets. Per-job scratch (the policy's view of the jobs
 * and the allocation vector) grows with the job count and is reused, so a
 * warmed-up epoch allocates nothing.
 *
 * Jobs run on nodes (placement.c places them and keeps the pending queue);
 * the epoch divides every node's cores in one call of
 * slaq_allocate_nodes(). A single machine is the scheduler's one node.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "slaq/deadline.h"
#include "slaq/shares.h"
#include "heap.h"
#include "internal.h"
#include "sched_int.h"

void slaq_job_opts_init(slaq_job_opts *o)
{
    o->weight = 1;
    o->max_cores = INFINITY;
    o->truth = NULL;
    o->truth_len = 0;
    o->iter_cpu_s = 0;
    o->convergence = SLAQ_CONV_UNKNOWN;
    o->iters = 0;
    o->user = NULL;
    o->kind = SLAQ_JOB_ML;
    o->node = SLAQ_NODE_ANY;
    slaq_goal_init(&o->goal);
    o->tenant = -1;
    o->target = 0;
    o->program = 0;
    o->mem = 0;
}

slaq_sched *slaq_sched_new(const slaq_sched_config *cfg)
{
    if (!(cfg->cores > 0) || !(cfg->unit > 0) || !(cfg->epoch_s > 0) ||
        !(cfg->reserved >= 0) || cfg->window == 1 ||
        !alloc_policy_of(cfg->policy) ||
        (slaq_policy_needs_model(cfg->policy) && !cfg->rl) ||
        cfg->query.min_points < 2 || !(cfg->query_min_cores >= 0) ||
        !isfinite(cfg->query_min_cores) ||
        (unsigned)cfg->predictor > SLAQ_PRED_ORACLE ||
        !(cfg->pred.lambda > 0 && cfg->pred.lambda <= 1) ||
        (unsigned)cfg->normalise > SLAQ_SCALE_MAX_DELTA ||
        !(cfg->hysteresis >= 0) || !isfinite(cfg->hysteresis) ||
        !(cfg->damping >= 0 && cfg->damping < 1) ||
        !(cfg->hold >= 0 && cfg->hold <= 1) ||
        !(cfg->starve_s >= 0) ||
        !(cfg->share_half_life_s >= 0) || !isfinite(cfg->share_half_life_s) ||
        !(cfg->share_lend_at >= 0 && cfg->share_lend_at <= 1) ||
        !(cfg->share_guarantee >= 0 && cfg->share_guarantee <= 1) ||
        (unsigned)cfg->placement > SLAQ_PLACE_GAIN ||
        cfg->nodes > (size_t)INT32_MAX)
        return NULL;
    slaq_sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cfg = *cfg;
    if (s->cfg.nodes == 0)
        s->cfg.nodes = 1;
    s->ws = slaq_alloc_ws_new();
    if (s->ws && cfg->rl) {
        slaq_prio_params pp = *slaq_alloc_ws_prio(s->ws);
        pp.rl = cfg->rl;
        slaq_alloc_ws_set_prio(s->ws, &pp);
    }
    if (!s->ws || clu_init(&s->clu, s->cfg.nodes, s->cfg.cores) != SLAQ_OK) {
        slaq_alloc_ws_free(s->ws);
        free(s);
        return NULL;
    }
    return s;
}

static void job_free(slaq_job *j)
{
    slaq_history_free(j->hist);
    slaq_predictor_free(j->pred);
    slaq_query_free(j->query);
    free(j);
}

void slaq_sched_free(slaq_sched *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        job_free(s->jobs[i]);
    free(s->jobs);
    free(s->due);
    free(s->pjobs);
    free(s->alloc);
    free(s->node_of);
    free(s->ncap);
    free(s->nweight);
    free(s->sh_demand);
    free(s->sh_part);
    free(s->sh_ref);
    free(s->sh_group);
    free(s->sh_gnode);
    free(s->sh_nodecap);
    free(s->sh_improving);
    free(s->sh_done);
    free(s->sh_charge);
    free(s->sh_order);
    free(s->sh_held);
    clu_free(&s->clu);
    slaq_alloc_ws_free(s->ws);
    sched_mlfs_free(s->mlfs);
    free(s);
}

void slaq_sched_set_policy(slaq_sched *s, slaq_policy_kind policy)
{
    if (alloc_policy_of(policy) &&
        (!slaq_policy_needs_model(policy) || s->cfg.rl)) {
        s->cfg.policy = policy;
        s->changed = 1;
    }
}

/* Computes the last epoch's gain of job j before its forecast changes. */
static void job_gain_keep(slaq_job *j)
{
    if (j->gain_lazy) {
        j->gain = slaq_job_gain(j);
        j->gain_lazy = 0;
    }
}

/* Queues job j for a refit if it has one due and is not queued yet. */
static void job_due(slaq_job *j)
{
    slaq_sched *s = j->sched;
    if (j->fit_due && j->reported && !j->queued) {
        s->due[s->ndue++] = j; /* room for every job: sched_reserve */
        j->queued = 1;
    }
}

/* Takes job j out of the refit queue, keeping the others' order. */
static void job_undue(slaq_job *j)
{
    slaq_sched *s = j->sched;
    if (!j->queued)
        return;
    for (size_t i = 0; i < s->ndue; i++)
        if (s->due[i] == j) {
            memmove(s->due + i, s->due + i + 1,
                    (s->ndue - i - 1) * sizeof *s->due);
            s->ndue--;
            break;
        }
    j->queued = 0;
}

static slaq_predictor *job_predictor(const slaq_sched *s, const slaq_job *j)
{
    slaq_predictor_opts o = s->cfg.pred;
    o.convergence = j->convergence;
    slaq_predictor *p = slaq_predictor_new(s->cfg.predictor, &o);
    if (p && j->truth)
        slaq_predictor_set_truth(p, j->truth, j->truth_len);
    return p;
}

int slaq_sched_set_predictor(slaq_sched *s, slaq_predictor_kind kind)
{
    if ((unsigned)kind > SLAQ_PRED_ORACLE)
        return SLAQ_EINVAL;
    slaq_predictor_kind old = s->cfg.predictor;
    s->cfg.predictor = kind;
    for (size_t i = 0; i < s->n; i++) {
        slaq_predictor *p = job_predictor(s, s->jobs[i]);
        if (!p) {
            s->cfg.predictor = old;
            return SLAQ_ENOMEM;
        }
        job_gain_keep(s->jobs[i]);
        slaq_predictor_free(s->jobs[i]->pred);
        s->jobs[i]->pred = p;
        s->jobs[i]->fit_due = 1;
        s->jobs[i]->scale_ok = 0;
        job_due(s->jobs[i]);
    }
    return SLAQ_OK;
}

const slaq_sched_config *slaq_sched_get_config(const slaq_sched *s)
{
    return &s->cfg;
}

static int sched_reserve(slaq_sched *s, size_t n)
{
    if (n <= s->cap)
        return SLAQ_OK;
    size_t cap = grow_cap(s->cap, n, 16);
    if (!cap || GROW_ARRAY(s->jobs, cap) || GROW_ARRAY(s->pjobs, cap) ||
        GROW_ARRAY(s->alloc, cap) || GROW_ARRAY(s->node_of, cap) ||
        GROW_ARRAY(s->due, cap) || clu_pend_reserve(&s->clu, cap) != SLAQ_OK)
        return SLAQ_ENOMEM;
    s->cap = cap;
    return SLAQ_OK;
}

/* What placement needs to know about job j. */
clu_job sched_job_clu(const slaq_sched *s, const slaq_job *j)
{
    clu_job c;
    c.weight = j->weight;
    c.max_cores = j->max_cores;
    c.minsh = s->cfg.unit < j->max_cores ? s->cfg.unit : j->max_cores;
    c.pin = j->pin;
    return c;
}

static double job_gain_on(void *arg, double cores);

/* Places job j (not on a node) on a node, or returns -1 if none fits. */
static long job_place(slaq_sched *s, slaq_job *j)
{
    clu_job cj = sched_job_clu(s, j);
    clu_gain g = {job_gain_on, j};
    int known = slaq_history_total(j->hist) >= 2;
    long v = clu_choose(&s->clu, &s->cfg, &cj, known ? &g : NULL);
    if (v >= 0) {
        clu_attach(&s->clu, (size_t)v, &cj);
        j->node = v;
        s->changed = 1;
    }
    return v;
}

/* Places job j, or queues it behind the jobs already waiting (it may
 * start at the next epoch, on a node none of them keeps). */
static void job_place_or_queue(slaq_sched *s, slaq_job *j)
{
    j->node = -1;
    j->passed_since = NAN;
    /* MLFS's cluster places waiting jobs at its epoch, in key order. */
    if (s->mlfs || s->clu.npend > 0 || job_place(s, j) < 0)
        clu_pend_push(&s->clu, j); /* room reserved by sched_reserve */
}

/* Takes job j off its node or out of the queue. */
static void job_unplace(slaq_sched *s, slaq_job *j)
{
    if (j->node >= 0) {
        clu_job cj = sched_job_clu(s, j);
        clu_detach(&s->clu, (size_t)j->node, &cj, j->alloc);
    } else {
        clu_pend_remove(&s->clu, j);
    }
    j->node = -1;
    s->changed = 1;
}

/* Whether waiting job j has been passed by later arrivals for ST. */
static int job_starved(const slaq_sched *s, const slaq_job *j, double now)
{
    return j->passed_since == j->passed_since &&
           now - j->passed_since >= s->cfg.starvation.st;
}

static double job_iter_cpu(const slaq_job *j, double prior);

/* Pending job j as an item of a queue order (slaq/queue.h): one item per
 * job, its remaining work the CPU-seconds of the iterations it has left
 * (its declared length less its last reported iteration, at its measured
 * or given cost per iteration, else default-iter-cpu's; INFINITY for a
 * job of unknown length). */
static slaq_qitem job_qitem(const slaq_sched *s, const slaq_job *j)
{
    double left = INFINITY;
    if (j->iters > 0) {
        double done = j->reported ? j->last_k : 0;
        double it = (double)j->iters > done ? (double)j->iters - done : 0;
        left = it * job_iter_cpu(j, s->cfg.default_iter_cpu_s);
    }
    return (slaq_qitem){.job_arrival = j->arrival, .enqueued = j->arrival,
                        .dur_est = left, .job_work = left, .job_tasks = 1};
}

/*
 * The order of the pending queue: whether job a is tried before job b at
 * time now. This one function decides it. Starved jobs come first (Yaq's
 * hard starvation threshold ST, the one passed longest first), then the
 * driver's order (slaq_sched_set_pend_order), then the queue-order
 * setting's (srjf, lrtf and stf: the least remaining work first; ejf and
 * fifo: arrival), then arrival.
 */
static int pend_before(const slaq_sched *s, const slaq_job *a,
                       const slaq_job *b, double now)
{
    int sa = job_starved(s, a, now), sb = job_starved(s, b, now);
    if (sa != sb)
        return sa;
    if (sa && a->passed_since != b->passed_since)
        return a->passed_since < b->passed_since;
    if (!sa && s->pend_cmp) {
        int c = s->pend_cmp(a, b, now, s->pend_arg);
        if (c)
            return c < 0;
    }
    if (!sa && s->cfg.queue_order != SLAQ_QORDER_FIFO) {
        /* Starvation is the rule above (passed for ST), not the items'. */
        static const slaq_starvation none = {INFINITY, INFINITY};
        slaq_qitem x = job_qitem(s, a), y = job_qitem(s, b);
        int c = slaq_qorder_cmp(s->cfg.queue_order, &x, &y, now, &none);
        if (c)
            return c > 0;
    }
    return a->arrival < b->arrival;
}

/* Sorts the pending queue by pend_before, stably. An insertion sort: the
 * queue is in order from the last epoch but for the jobs that arrived or
 * starved since, so this is O(pending) in the common case (a driver
 * order that reshuffles everything each epoch makes it quadratic). */
static void pend_sort(slaq_sched *s, double now)
{
    slaq_job **p = s->clu.pend;
    for (size_t k = 1; k < s->clu.npend; k++) {
        slaq_job *j = p[k];
        size_t i = k;
        while (i > 0 && pend_before(s, j, p[i - 1], now)) {
            p[i] = p[i - 1];
            i--;
        }
        p[i] = j;
    }
}

/*
 * Starts the pending jobs that fit, in queue order (pend_before). A job
 * that does not fit keeps its place, and keeps the nodes it could run on
 * once they have room from the jobs behind it (clu_hold): first come,
 * first served where jobs compete for the same nodes, and no head-of-line
 * blocking where they do not: a job waiting for a node that is down, or
 * pinned to a node that is full, holds up no job that can run elsewhere.
 * A job free to go anywhere that waits keeps every node that could take
 * any job no smaller than it, so those behind it are not tried. A job
 * still waiting when one that arrived after it starts has been passed,
 * and its starvation clock starts. O(pending) plus O(nodes) per job
 * tried.
 */
static void sched_start_pending(slaq_sched *s, double now)
{
    clu_state *c = &s->clu;
    size_t keep = 0, n = c->npend;
    pend_sort(s, now);
    for (size_t k = 0; k < n; k++) {
        slaq_job *j = c->pend[k];
        clu_job cj = sched_job_clu(s, j);
        if ((cj.pin >= 0 || cj.minsh < c->hold_minsh) &&
            job_place(s, j) >= 0)
            continue;
        clu_hold(c, &s->cfg, &cj);
    }
    /* The latest arrival among the jobs that started: every job still
     * waiting that arrived before it has been passed. */
    double latest = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        slaq_job *j = c->pend[k];
        if (j->node >= 0 && j->arrival > latest)
            latest = j->arrival;
    }
    for (size_t k = 0; k < n; k++) {
        slaq_job *j = c->pend[k];
        if (j->node < 0 && latest > j->arrival &&
            j->passed_since != j->passed_since)
            j->passed_since = now;
    }
    for (size_t k = 0; k < n; k++) {
        slaq_job *j = c->pend[k];
        if (j->node >= 0)
            continue;
        c->pend[keep++] = j;
        clu_job cj = sched_job_clu(s, j);
        clu_hold_clear(c, &cj);
    }
    c->npend = keep;
    clu_hold_clear(c, NULL);
}

void slaq_sched_set_pend_order(slaq_sched *s, slaq_pend_cmp cmp, void *arg)
{
    s->pend_cmp = cmp;
    s->pend_arg = arg;
}

double slaq_job_passed_since(const slaq_job *j) { return j->passed_since; }

static int tenant_ok(const slaq_shares *t, int id)
{
    const slaq_share_entry *e = slaq_shares_at(t, id);
    return e && e->user;
}

int slaq_sched_set_shares(slaq_sched *s, slaq_shares *t)
{
    for (size_t i = 0; t && i < s->n; i++)
        if (!tenant_ok(t, s->jobs[i]->tenant))
            return SLAQ_EINVAL;
    s->shares = t;
    s->share_t = NAN;
    s->changed = 1;
    s->redivide = 1;
    return SLAQ_OK;
}

slaq_shares *slaq_sched_shares(const slaq_sched *s) { return s->shares; }

int slaq_job_tenant(const slaq_job *j) { return j->tenant; }

int slaq_job_set_tenant(slaq_job *j, int tenant)
{
    slaq_sched *s = j->sched;
    if (s->shares && !tenant_ok(s->shares, tenant))
        return SLAQ_EINVAL;
    if (tenant != j->tenant)
        s->changed = s->redivide = 1;
    j->tenant = tenant;
    return SLAQ_OK;
}

slaq_job *slaq_sched_add(slaq_sched *s, const slaq_job_opts *o, double t)
{
    slaq_job_opts def;
    if (!o) {
        slaq_job_opts_init(&def);
        o = &def;
    }
    if (!(o->weight > 0) || !(o->max_cores > 0) || !isfinite(t) ||
        (o->truth && o->truth_len == 0) || !(o->iter_cpu_s >= 0) ||
        !isfinite(o->iter_cpu_s) ||
        (unsigned)o->convergence > SLAQ_CONV_NONCONVEX ||
        (unsigned)o->kind > SLAQ_JOB_EXACT ||
        slaq_goal_check(&o->goal) != SLAQ_OK ||
        (o->node != SLAQ_NODE_ANY &&
         (o->node < 0 || (size_t)o->node >= s->clu.n)) ||
        (s->shares && !tenant_ok(s->shares, o->tenant)) ||
        !(o->mem >= 0) || !isfinite(o->mem) || (s->mlfs && !o->truth))
        return NULL;
    if (sched_reserve(s, s->n + 1) != SLAQ_OK ||
        (s->mlfs && sched_mlfs_reserve(s, s->n + 1) != SLAQ_OK))
        return NULL;
    slaq_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->sched = s;
    j->weight = o->weight;
    j->max_cores = o->max_cores;
    j->arrival = t;
    j->truth = o->truth;
    j->truth_len = o->truth_len;
    j->iters = o->iters;
    for (int i = 0; i < SCHED_END_FITS; i++)
        j->ends[i] = NAN;
    j->user = o->user;
    j->goal = o->goal;
    j->target = o->target;
    j->metric = NAN;
    j->seen_t = t;
    j->alloc_t = NAN;
    j->low_since = NAN;
    j->lift_t = NAN;
    j->cost_known = o->iter_cpu_s > 0;
    j->convergence = o->convergence;
    slaq_runtime_init(&j->rt, j->cost_known ? o->iter_cpu_s
                                            : s->cfg.default_iter_cpu_s);
    j->kind = o->kind;
    j->program = o->program;
    j->tenant = o->tenant;
    j->mem = o->mem;
    j->prev_loss = o->truth ? o->truth[0] : NAN;
    j->moved_at = -INFINITY;
    j->moving_until = -INFINITY;
    slaq_scaling_init(&j->scaling);
    j->hist = slaq_history_new(s->cfg.window);
    j->pred = job_predictor(s, j);
    if (j->kind == SLAQ_JOB_QUERY)
        j->query = slaq_query_new(&s->cfg.query);
    if (!j->hist || !j->pred || (j->kind == SLAQ_JOB_QUERY && !j->query)) {
        job_free(j);
        return NULL;
    }
    j->pin = o->node;
    j->index = s->n;
    s->jobs[s->n++] = j;
    s->changed = 1;
    s->redivide = 1;
    job_place_or_queue(s, j);
    return j;
}

void slaq_sched_remove(slaq_sched *s, slaq_job *j)
{
    if (s->mlfs)
        sched_mlfs_leave(s, j);
    job_unplace(s, j);
    job_undue(j);
    size_t i = j->index;
    if (s->mlfs) {
        /* MLFS's cluster keeps its jobs in their order of arrival. */
        memmove(s->jobs + i, s->jobs + i + 1,
                (s->n - i - 1) * sizeof *s->jobs);
        for (size_t k = i; k + 1 < s->n; k++)
            s->jobs[k]->index = k;
        s->n--;
    } else {
        s->jobs[i] = s->jobs[--s->n];
        s->jobs[i]->index = i;
    }
    job_free(j);
    s->changed = 1;
    s->redivide = 1;
}

size_t slaq_sched_count(const slaq_sched *s) { return s->n; }
int slaq_sched_due(const slaq_sched *s) { return s->redivide; }

slaq_job *slaq_sched_job(const slaq_sched *s, size_t i)
{
    return i < s->n ? s->jobs[i] : NULL;
}

int slaq_job_report(slaq_job *j, const slaq_report *r)
{
    const slaq_report *prev = slaq_history_last(j->hist);
    uint64_t prev_iter = prev ? prev->iter : 0;
    int err = slaq_history_add(j->hist, r);
    if (err)
        return err;
    j->last_k = (double)r->iter;
    j->last_t = r->t;
    j->reported = 1;
    j->fit_due = 1;
    j->scale_ok = 0;
    job_due(j);
    if (r->iter > 0) {
        slaq_runtime_observe(&j->rt, r->cpu_s, r->samples,
                             (double)(r->iter - prev_iter));
        slaq_tokens_consume(&j->tokens, r->cpu_s);
        j->iter_reports++;
    }
    return SLAQ_OK;
}

int slaq_job_report_scaling(slaq_job *j, const slaq_report *r,
                            double threads, double wall_s)
{
    const slaq_report *prev = slaq_history_last(j->hist);
    double gap = prev ? r->t - prev->t : 0;
    double iters = prev ? (double)r->iter - (double)prev->iter : 0;
    double share = j->alloc < j->max_cores ? j->alloc : j->max_cores;
    int err = slaq_job_report(j, r);
    if (err)
        return err;
    /* The share is the one of the epoch the report ends: a report that
     * straddles a change is counted at the new share, which the next
     * reports then outweigh. */
    if (threads >= 1 && iters > 0 && share > 0)
        slaq_scaling_observe(&j->scaling, share, threads,
                             wall_s > 0 ? wall_s : gap, r->cpu_s, iters);
    return SLAQ_OK;
}

const slaq_scaling *slaq_job_scaling(const slaq_job *j) { return &j->scaling; }

int slaq_job_threads(const slaq_job *j, double cores)
{
    return slaq_scaling_threads(&j->scaling, cores);
}

int slaq_job_report_estimates(slaq_job *j, const slaq_report *r,
                              const double *x, size_t n)
{
    if (j->kind != SLAQ_JOB_QUERY || !r)
        return SLAQ_EINVAL;
    const slaq_report *prev = slaq_history_last(j->hist);
    if (prev && r->iter <= prev->iter)
        return SLAQ_EORDER;
    /* Check what the history will accept before the query changes. */
    if (!(r->cpu_s >= 0) || !isfinite(r->cpu_s) || !(r->samples >= 0) ||
        !isfinite(r->samples))
        return SLAQ_EINVAL;
    int err = slaq_query_add(j->query, r->iter, x, n, r->cpu_s);
    if (err)
        return err;
    slaq_report h = *r;
    double p = slaq_query_last(j->query);
    h.loss = isnan(p) ? 1 : p;
    /* Its first mini-batch ends the fair share it had until now. */
    if (slaq_progress_batches(slaq_query_progress(j->query)) == 1)
        j->sched->redivide = 1;
    return slaq_job_report(j, &h);
}

int slaq_job_query_resume(slaq_job *j, uint64_t after)
{
    if (j->kind != SLAQ_JOB_QUERY)
        return SLAQ_EINVAL;
    return slaq_query_resume(j->query, after);
}

int slaq_job_kind(const slaq_job *j) { return j->kind; }
const slaq_query *slaq_job_query(const slaq_job *j) { return j->query; }

/* CPU-seconds of job j's next iteration; `prior` for a job that has not
 * reported CPU time and whose cost the driver did not give. */
static double job_iter_cpu(const slaq_job *j, double prior)
{
    if (j->rt.observed == 0 && !j->cost_known)
        return prior;
    return slaq_runtime_iter_cpu(&j->rt);
}

/*
 * Where job j is on its curve at `now`, in iterations: its last report
 * plus the part of the next iteration its current allocation has done
 * since at the speed-up of `scaling` (NULL: linear), capped below one
 * whole iteration (a report would have come).
 */
static double job_position(const slaq_job *j, const slaq_scaling *scaling,
                           double now, double iter_cpu)
{
    double k = j->reported ? j->last_k : 0;
    double since = now - (j->reported ? j->last_t : j->arrival);
    double cores = j->alloc < j->max_cores ? j->alloc : j->max_cores;
    if (since > 0 && cores > 0) {
        double part = since * slaq_scaling_speedup(scaling, cores) / iter_cpu;
        k += part < 0.99 ? part : 0.99;
    }
    return k;
}

/* The end loss the job's current forecast predicts (NAN if none). */
static double forecast_end_loss(const slaq_job *j)
{
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    const slaq_report *last = slaq_history_last(j->hist);
    if (j->iters > last->iter)
        return slaq_forecast_end(f, (double)j->iters);
    if (j->iters > 0)
        return last->loss;
    return f->final_loss;
}

/* Records the current forecast's end loss once per new report, from the
 * job's third finished iteration on: a forecast from one or two steps is a
 * straight line whose end means nothing, and as the lowest of the last
 * fits it would hold the shown progress down for a dozen reports. */
#define SCHED_END_MIN_ITERS 3
static void job_note_end(slaq_job *j)
{
    uint64_t total = slaq_history_total(j->hist);
    if (j->iter_reports < SCHED_END_MIN_ITERS || total == j->end_total)
        return;
    memmove(j->ends + 1, j->ends, (SCHED_END_FITS - 1) * sizeof *j->ends);
    memmove(j->end_iter + 1, j->end_iter,
            (SCHED_END_FITS - 1) * sizeof *j->end_iter);
    j->ends[0] = forecast_end_loss(j);
    j->end_iter[0] = slaq_history_last(j->hist)->iter;
    j->end_total = total;
}

/* Loss units of one unit of job j's progress (slaq_scale_kind). */
static double job_scale_calc(const slaq_sched *s, const slaq_job *j)
{
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    if (s->cfg.normalise == SLAQ_SCALE_MAX_DELTA)
        return f->scale;
    /* The current forecast's end, not the cautious one users are shown:
     * the allocator must follow the latest fit, or a new job's wild first
     * extrapolations would hold its gains down for a dozen reports. */
    double end = slaq_history_total(j->hist) < 2 ? NAN : forecast_end_loss(j);
    const slaq_report *last = slaq_history_last(j->hist);
    if (last && !(end <= last->loss))
        end = last->loss;
    double span = slaq_history_first_loss(j->hist) - end;
    return span > f->scale ? span : f->scale;
}

/* job_scale_calc, computed again only when one of its inputs changed: the
 * history (a report), the forecast (a fit) or the declared length. */
static double job_scale(const slaq_sched *s, const slaq_job *j)
{
    slaq_job *m = (slaq_job *)j;
    if (!j->scale_ok) {
        m->scale = job_scale_calc(s, j);
        m->scale_ok = 1;
    }
    return j->scale;
}

/* Refits job j's predictor on its history (it has a refit due). */
static void job_fit(slaq_job *j)
{
    job_gain_keep(j);
    slaq_predictor_fit(j->pred, j->hist);
    job_note_end(j);
    j->fit_due = 0;
    j->scale_ok = 0;
    j->queued = 0;
}

/*
 * Only jobs with something new are visited (the refit queue): a predictor
 * refits only after a report anyway, and at tens of thousands of jobs even
 * a visit to each job costs. At most cfg.max_fits jobs are refitted, the
 * ones that have waited longest: the others keep their forecast one more
 * epoch and go first next time. Every job's fit depends on that job alone,
 * so below the bound the order changes nothing.
 */
void slaq_sched_refit(slaq_sched *s)
{
    size_t k = s->ndue;
    if (s->cfg.max_fits > 0 && k > s->cfg.max_fits)
        k = s->cfg.max_fits;
    for (size_t i = 0; i < k; i++)
        job_fit(s->due[i]);
    memmove(s->due, s->due + k, (s->ndue - k) * sizeof *s->due);
    s->ndue -= k;
    s->last_fits = k;
}

void slaq_job_refit(slaq_job *j)
{
    if (!j->queued)
        return;
    job_undue(j);
    job_fit(j);
}

size_t slaq_sched_refits(const slaq_sched *s) { return s->last_fits; }
size_t slaq_sched_refit_backlog(const slaq_sched *s) { return s->ndue; }

/* A job is settling until it has reported enough iterations to be
 * predicted: until then it gets at least its fair share (a job loading
 * its data reports nothing for a while, and must not starve at the
 * minimum share meanwhile). Until its first report (iteration 0, its
 * loss before training: it has loaded its data and is ready) it is
 * unproven: it gets that share and no more. From then on a new job is
 * assumed to be at its steepest, SLAQ's premise. */
static int job_settling(const slaq_sched *s, const slaq_job *j)
{
    return j->iter_reports < s->cfg.startup_reports;
}

/*
 * Whether job j is still improving, as the bound on starvation sees it.
 * A loss that has not moved below its first value yet is no proof of
 * convergence: such a job counts as improving, and so does one with too
 * few reports (LIFT_RECENT or fewer) to tell (under slaq-index, which
 * gives a settling job no floor, such a job could otherwise wait without
 * end after its first reports). A loss that has moved counts while its
 * recent reports (those of the last starve_s seconds, at least
 * 2 × LIFT_RECENT) fell by at least LIFT_MOVING of the drop so far, the
 * mean of their older half to that of their newer half (what it
 * measured: a job on a plateau has stopped; a noisy loss reported every
 * step is judged by its trend, not by two of its samples) and
 * its forecast puts it short of LIFT_DONE of the drop from its first loss
 * to its predicted final one (what it predicts: noise on a converged
 * curve is not progress).
 */
#define LIFT_RECENT 5
#define LIFT_MOVING 0.01
#define LIFT_DONE 0.95
#define LIFT_WINDOW_MAX 256 /* reports at most in the window: O(1) a job */

/* Whether job j's loss has not moved yet: its lowest loss is within
 * PRIOR_MOVED of its first (relative to the first's size). */
#define PRIOR_MOVED 1e-3

static int job_unmoved(const slaq_job *j)
{
    double first = slaq_history_first_loss(j->hist);
    double drop = first - slaq_history_min_loss(j->hist);
    return !(drop > PRIOR_MOVED * fabs(first));
}

/* Whether job j's recent reports still fall (the measured half of
 * job_improving; 1 also for a job too new to tell). With trend non-NULL,
 * also *trend: the fall per iteration of those reports, the older half's
 * mean loss less the newer half's over the iterations between their
 * mean positions (0 when it is not falling, has not moved or is too new
 * to tell: slaq-trend's measured gain). */
static int job_trend(const slaq_job *j, double window_s, double *trend)
{
    const slaq_history *h = j->hist;
    size_t len = slaq_history_len(h);
    double first = slaq_history_first_loss(h);
    double drop = first - slaq_history_min_loss(h);
    if (trend)
        *trend = 0;
    if (job_unmoved(j))
        return 1;
    if (len <= LIFT_RECENT)
        return 1; /* too few reports to tell: no proof it has stopped */
    /* The recent reports: those of the last window_s seconds, at least
     * 2 × LIFT_RECENT; the mean of their older half less that of their
     * newer half, so that a job reporting every step, its loss noisy from
     * one to the next, is judged by its trend and not by two samples. */
    double last_t = slaq_history_at(h, len - 1)->t;
    size_t w = 0;
    while (w < len && w < LIFT_WINDOW_MAX &&
           slaq_history_at(h, len - 1 - w)->t >= last_t - window_s)
        w++;
    if (w < 2 * LIFT_RECENT)
        w = 2 * LIFT_RECENT;
    if (w > len - 1)
        w = len - 1; /* never the first loss: the fall from it is the start */
    double older = 0, newer = 0, kold = 0, knew = 0;
    size_t half = w / 2;
    for (size_t i = 0; i < half; i++) {
        const slaq_report *o = slaq_history_at(h, len - w + i);
        const slaq_report *r = slaq_history_at(h, len - half + i);
        older += o->loss;
        newer += r->loss;
        kold += (double)o->iter;
        knew += (double)r->iter;
    }
    double recent = (older - newer) / (double)half;
    int falling = recent >= LIFT_MOVING * drop;
    if (trend && falling && knew > kold)
        *trend = (older - newer) / (knew - kold);
    return falling;
}

static int job_falling(const slaq_job *j, double window_s)
{
    return job_trend(j, window_s, NULL);
}

static int job_improving(const slaq_job *j, double k, double window_s)
{
    if (job_unmoved(j) || slaq_history_len(j->hist) <= LIFT_RECENT)
        return 1;
    if (!job_falling(j, window_s))
        return 0;
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    double span = f->first_loss - f->final_loss;
    double now = slaq_forecast_loss(f, k);
    if (!(span > 0) || !isfinite(now))
        return 1;
    return (f->first_loss - now) / span < LIFT_DONE;
}

/*
 * The bound on starvation (config.starve_s): returns the share job j is
 * guaranteed this epoch, 0 when none. The clock runs under every policy
 * (slaq_job_starved_max), the lift only under one that divides by
 * forecasts and with starve_s > 0. A training job held at the minimum
 * share, below its fair share, while still improving, runs a clock from
 * the epoch that gave it that share; when the clock reaches starve_s the
 * job is lifted: it holds its fair share until it reports again (at
 * least one epoch, at most starve_s), so that its forecast sees its
 * loss move, and its clock starts afresh. Whatever the forecasts say, no
 * improving job waits at the minimum share longer than starve_s plus
 * one epoch. The epoch that lifts a job is not damped (the lift is
 * whole at once). O(1) per job, one forecast evaluation for a job at the
 * minimum share.
 */
static double job_lift(slaq_sched *s, slaq_job *j, double now,
                       double k, double fair)
{
    const slaq_sched_config *c = &s->cfg;
    if (j->kind != SLAQ_JOB_ML || !j->reported || j->alloc_t != j->alloc_t)
        return 0;
    if (j->lift_t == j->lift_t) {
        double held = now - j->lift_t;
        if (held < c->starve_s &&
            (j->iter_reports <= j->lift_reports || held < c->epoch_s))
            return fair;
        j->lift_t = NAN;
    }
    double floor = fmin(c->unit, fair);
    int low = j->alloc <= floor * 1.05 && j->alloc < fair * 0.95;
    if (!low || !job_improving(j, k, c->starve_s)) {
        if (j->low_since == j->low_since && now - j->low_since > j->low_max)
            j->low_max = now - j->low_since;
        j->low_since = NAN;
        return 0;
    }
    if (j->low_since != j->low_since)
        j->low_since = j->alloc_t;
    if (!(c->starve_s > 0) || now - j->low_since < c->starve_s ||
        !alloc_policy_of(c->policy)->forecasts)
        return 0;
    if (now - j->low_since > j->low_max)
        j->low_max = now - j->low_since;
    j->low_since = NAN;
    j->lift_t = now;
    j->lift_reports = j->iter_reports;
    j->lifts++;
    s->changed = 1; /* undamped: the lift is whole at once */
    return fair;
}

/*
 * The class prior (config.prior, docs/libslaq.md "Class priors"): a
 * training job whose loss has not moved yet has a flat forecast, which
 * values its cores at nothing, so that it never runs fast enough to move.
 * Until it moves, and for at most as many reports as its class's curves
 * take to 90% of their drop, it is valued by its class's prior curve from
 * where it is, and holds at least its fair share. Returns the forecast to
 * divide by (NULL: the job's own).
 */
static const slaq_forecast *job_prior(slaq_sched *s, slaq_job *j)
{
    const slaq_sched_config *c = &s->cfg;
    if (!c->prior || j->kind != SLAQ_JOB_ML || !j->reported ||
        c->predictor == SLAQ_PRED_ORACLE ||
        !alloc_policy_of(c->policy)->forecasts || !job_unmoved(j))
        return NULL;
    const slaq_prior_class *pc =
        slaq_prior_of(slaq_prior_default(), j->convergence);
    if ((double)j->iter_reports >= pc->done_iters)
        return NULL;
    const slaq_report *last = slaq_history_last(j->hist);
    slaq_prior_forecast(pc, (double)last->iter, last->loss, &j->pfc);
    return &j->pfc;
}

double slaq_job_starved_max(const slaq_job *j, double now)
{
    double open = j->low_since == j->low_since ? now - j->low_since : 0;
    return fmax(j->low_max, open);
}

unsigned slaq_job_lifts(const slaq_job *j) { return j->lifts; }

/*
 * The seconds a job's gain is judged over: the horizon, or, for a job
 * whose iteration (a query's: mini-batch) of unit_cpu CPU-seconds takes
 * longer than that at its fair share of cap (its weight of wsum),
 * horizon_iters of its iterations at that share (its gain then scaled
 * back to one horizon by the caller): over a fraction of one iteration
 * every forecast is nearly a straight line, and a greedy allocator on
 * straight lines swings all spare cores from one job to another at
 * every report.
 */
static double judged_horizon(const slaq_sched_config *c, double horizon,
                             double cap, double weight, double wsum,
                             double unit_cpu)
{
    double h = horizon;
    if (c->horizon_iters > 0 && wsum > 0) {
        double fair = cap * weight / wsum;
        double t = fair > 0 ? unit_cpu / fair : 0;
        if (t * c->horizon_iters > h)
            h = t * c->horizon_iters;
    }
    return h;
}

/*
 * A query as the policy sees it (ReLAQS): its forecast is its predicted
 * progress metric on an axis of CPU-seconds, so one core gives it
 * `horizon` of them per epoch; its position is the work of its finished
 * mini-batches plus what its cores have done on the next one since. One
 * unit of progress is 1 (P is normalised). Until its first mini-batch it
 * has its fair share (1/n of the cores with equal weights) and no more;
 * after it, the tunable minimum allocation.
 */
static void sched_query_pjob(const slaq_sched *s, slaq_job *j, slaq_pjob *pj,
                             double now, double prior, double cap,
                             double wsum, double horizon)
{
    const slaq_sched_config *c = &s->cfg;
    slaq_query_forecast(j->query, prior, &j->qfc);
    pj->fc = &j->qfc;
    size_t done = slaq_query_batches(j->query);
    double next = j->qfc.par[2] + j->qfc.par[3] * (double)(done + 1);
    double k = slaq_query_work(j->query);
    const slaq_report *last = slaq_history_last(j->hist);
    double since = now - (last ? last->t : j->arrival);
    double cores = j->alloc < j->max_cores ? j->alloc : j->max_cores;
    if (since > 0 && cores > 0)
        k += fmin(since * cores, 0.99 * next);
    pj->k = k;
    double h = judged_horizon(c, horizon, cap, j->weight, wsum, next);
    pj->iters_per_core = h;
    pj->scale = h / horizon;
    /* no mini-batch here yet (one resumed elsewhere has no P here) */
    int seen = slaq_progress_batches(slaq_query_progress(j->query)) > 0;
    pj->unproven = !seen;
    if (!seen)
        pj->min_cores = cap * j->weight / wsum;
    else
        pj->min_cores = c->query_min_cores;
}

/* An exact job (one with no progress to predict) is served its fair share
 * before the rest is divided: it gets exactly that, and no gain. */
/* What the priority policies read (slaq_pjob's last fields): the goal,
 * the service and wait accumulated at the allocations since the last
 * epoch, and the loss drops of the history. */
static void sched_goal_pjob(slaq_job *j, slaq_pjob *pj, double now,
                            double cpu)
{
    double dt = now > j->seen_t ? now - j->seen_t : 0;
    j->attained += j->alloc * dt;
    if (!(j->alloc > 0))
        j->waited += dt;
    j->seen_t = now > j->seen_t ? now : j->seen_t;
    pj->now = now;
    pj->arrival = j->arrival;
    pj->deadline = j->goal.deadline;
    pj->urgency = j->goal.urgency;
    pj->attained = j->attained;
    pj->waited = j->waited;
    pj->iter = pj->k;
    pj->remaining_s = j->iters > 0 && j->max_cores < INFINITY
        ? fmax((double)j->iters - pj->k, 0) * cpu / j->max_cores : INFINITY;
    size_t len = slaq_history_len(j->hist);
    pj->last_drop = len >= 2
        ? slaq_history_at(j->hist, len - 2)->loss -
          slaq_history_at(j->hist, len - 1)->loss : 0;
    pj->total_drop = len >= 1
        ? slaq_history_first_loss(j->hist) - slaq_history_last(j->hist)->loss
        : 0;
}

static void sched_exact_pjob(slaq_job *j, slaq_pjob *pj, double cap,
                             double wsum)
{
    double fair = wsum > 0 ? cap * j->weight / wsum : 0;
    if (fair > j->max_cores)
        fair = j->max_cores;
    memset(&j->qfc, 0, sizeof j->qfc);
    j->qfc.model = SLAQ_MODEL_LINEAR; /* flat: L = 0 − 0·u */
    j->qfc.yscale = 1;
    j->qfc.scale = 1;
    j->qfc.first_loss = 1;
    pj->fc = &j->qfc;
    pj->scale = 1;
    pj->unproven = 0;
    if (fair > 0) {
        pj->min_cores = fair;
        pj->max_cores = fair;
    }
}

static int sched_reserve_nodes(slaq_sched *s, size_t n)
{
    if (n <= s->nncap)
        return SLAQ_OK;
    size_t cap = grow_cap(s->nncap, n, 4);
    if (!cap || GROW_ARRAY(s->ncap, cap) || GROW_ARRAY(s->nweight, cap))
        return SLAQ_ENOMEM;
    s->nncap = cap;
    return SLAQ_OK;
}

/* The population prior: the mean iteration cost of jobs that reported
 * (slaq_sched_allocate computes the same sum in its first pass). */
static double sched_prior(const slaq_sched *s)
{
    double sum = 0;
    size_t known = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->jobs[i]->rt.observed > 0) {
            sum += slaq_runtime_iter_cpu(&s->jobs[i]->rt);
            known++;
        }
    return known ? sum / (double)known : s->cfg.default_iter_cpu_s;
}

/*
 * Job j's predicted normalised gain over one horizon on `cores` cores,
 * from where it is now (its last report): gain placement's estimate of
 * what a job with history would do on a node. O(jobs) for the prior, so
 * only for the rare re-placed job.
 */
/* The scaling model the allocator divides job j by: NULL (linear, the
 * paper's) with the setting off, for queries and exact jobs, and for a
 * job that has never said how many threads it runs (an old client's, a simulated curve's): nothing
 * is known of it, and it is treated as SLAQ treats every job. */
static const slaq_scaling *job_scaling(const slaq_sched *s,
                                       const slaq_job *j)
{
    return s->cfg.scaling && j->kind == SLAQ_JOB_ML && j->scaling.a > 0
               ? &j->scaling : NULL;
}

/* CPU-seconds of one iteration on one core at one thread: the scaling
 * model's where it is used (a job that ran two threads spinning on each
 * other used twice the CPU of its iteration), else the runtime's. */
static double job_unit_cpu(const slaq_sched *s, const slaq_job *j,
                           double prior)
{
    const slaq_scaling *m = job_scaling(s, j);
    return m ? m->a : job_iter_cpu(j, prior);
}

static double job_gain_on(void *arg, double cores)
{
    const slaq_job *j = arg;
    const slaq_sched *s = j->sched;
    const slaq_sched_config *c = &s->cfg;
    double cpu = job_unit_cpu(s, j, sched_prior(s));
    double horizon = c->horizon_s > c->epoch_s ? c->horizon_s : c->epoch_s;
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    double k = j->last_k;
    if (cores > j->max_cores)
        cores = j->max_cores;
    double drop = slaq_forecast_loss(f, k) -
                  slaq_forecast_loss(f, k + horizon / cpu *
                                               slaq_scaling_speedup(
                                                   job_scaling(s, j), cores));
    double g = j->weight * drop / job_scale(s, j);
    return g == g ? g : 0;
}

static int sched_reserve_shares(slaq_sched *s, size_t nn, size_t users)
{
    size_t cells = nn * users;
    if (cells > s->sh_cells) {
        size_t c = grow_cap(s->sh_cells, cells, 16);
        if (!c || GROW_ARRAY(s->sh_demand, c) || GROW_ARRAY(s->sh_part, c) ||
            GROW_ARRAY(s->sh_group, c) || GROW_ARRAY(s->sh_ref, c))
            return SLAQ_ENOMEM;
        s->sh_cells = c;
    }
    if (nn > s->sh_nodes) {
        size_t c = grow_cap(s->sh_nodes, nn, 4);
        if (!c || GROW_ARRAY(s->sh_nodecap, c) ||
            GROW_ARRAY(s->sh_improving, c))
            return SLAQ_ENOMEM;
        s->sh_nodes = c;
    }
    if (users > s->sh_users) {
        size_t c = grow_cap(s->sh_users, users, 8);
        if (!c || GROW_ARRAY(s->sh_charge, c))
            return SLAQ_ENOMEM;
        s->sh_users = c;
    }
    if (s->n + 1 > s->sh_jobs) {
        size_t c = grow_cap(s->sh_jobs, s->n + 1, 16);
        if (!c || GROW_ARRAY(s->sh_order, c) || GROW_ARRAY(s->sh_held, c) ||
            GROW_ARRAY(s->sh_done, c) || GROW_ARRAY(s->sh_gnode, c))
            return SLAQ_ENOMEM;
        s->sh_jobs = c;
    }
    return SLAQ_OK;
}

static int arrival_cmp(const void *a, const void *b)
{
    const struct sh_key *x = a, *y = b;
    if (x->arrival != y->arrival)
        return x->arrival < y->arrival ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The caps on running jobs: each job, oldest first, runs if its user and
 * every account above it have room; sh_held[i] marks the others. */
static void shares_hold(slaq_sched *s)
{
    slaq_shares *t = s->shares;
    int capped = 0;
    for (size_t u = 0; u < slaq_shares_count(t); u++)
        if (slaq_shares_at(t, (int)u)->max_jobs)
            capped = 1;
    for (size_t i = 0; i < s->n; i++) {
        s->sh_order[i].arrival = s->jobs[i]->arrival;
        s->sh_order[i].i = i;
        s->sh_held[i] = 0;
    }
    if (capped)
        heap_sort_records(s->sh_order, s->n, sizeof *s->sh_order,
                          arrival_cmp);
    slaq_shares_reset_jobs(t);
    for (size_t k = 0; k < s->n; k++) {
        size_t i = s->sh_order[k].i;
        int run = !capped || slaq_shares_room(t, s->jobs[i]->tenant);
        s->sh_held[i] = !run;
        slaq_shares_add_job(t, s->jobs[i]->tenant, 1, (size_t)run, 0);
    }
}

/*
 * Shares between users: charges the usage since the last epoch, divides
 * each node's cores (ncap[], nn nodes) between the users, and turns the
 * (node, user) pairs into the groups the policy divides as it divides
 * nodes: node_of[i] becomes job i's group and ncap[]/nweight[] the
 * groups'. Group 0 has no cores: pending jobs and jobs held back by a
 * cap on jobs. The nodes' own cores are kept in sh_nodecap[].
 */
static int shares_group(slaq_sched *s, double now, size_t nn, size_t *ngroups)
{
    slaq_shares *t = s->shares;
    size_t users = slaq_shares_count(t);
    if (sched_reserve_shares(s, nn, users) != SLAQ_OK ||
        sched_reserve_nodes(s, s->n + 1) != SLAQ_OK)
        return SLAQ_ENOMEM;
    for (size_t u = 0; u < users; u++)
        s->sh_charge[u] = 0;
    double dt = isnan(s->share_t) || now < s->share_t ? 0 : now - s->share_t;
    for (size_t i = 0; i < s->n; i++)
        s->sh_charge[s->jobs[i]->tenant] += s->jobs[i]->alloc * dt;
    int err = slaq_shares_set_half_life(t, s->cfg.share_half_life_s);
    if (err)
        return err;
    err = slaq_shares_charge(t, dt, s->sh_charge);
    if (err)
        return err;
    s->share_t = now;
    shares_hold(s);
    for (size_t c = 0; c < nn * users; c++) {
        s->sh_demand[c] = 0;
        s->sh_group[c] = -1;
    }
    for (size_t v = 0; v < nn; v++)
        s->sh_nodecap[v] = s->ncap[v];
    /* Lending: under a policy that divides by forecasts, a job whose
     * forecast calls it nearly done asks no more than its fair share of
     * the node among all jobs there, but only where another user's job
     * still improves and can take the rest of its user's part (with no
     * borrower the users' weights alone divide). It still runs at a fair
     * pace to its end. */
    double lend = alloc_policy_of(s->cfg.policy)->forecasts
                      ? s->cfg.share_lend_at : 0;
    for (size_t v = 0; v < nn; v++)
        s->sh_improving[v] = -1;
    for (size_t i = 0; i < s->n; i++) {
        const slaq_job *j = s->jobs[i];
        size_t v = s->node_of[i];
        s->sh_done[i] = lend > 0 && slaq_job_reduction(j) >= lend;
        if (v >= nn || s->sh_held[i] || s->sh_done[i])
            continue;
        long *imp = &s->sh_improving[v];
        *imp = *imp == -1 || *imp == j->tenant ? j->tenant : -2;
    }
    for (size_t i = 0; i < s->n; i++) {
        const slaq_job *j = s->jobs[i];
        size_t v = s->node_of[i];
        if (v >= nn || s->sh_held[i])
            continue;
        double want = fmin(j->max_cores, s->ncap[v]);
        long imp = s->sh_improving[v];
        if (s->sh_done[i] && s->nweight[v] > 0 &&
            (imp == -2 || (imp >= 0 && imp != j->tenant)))
            want = fmin(want, s->ncap[v] * j->weight / s->nweight[v]);
        s->sh_demand[v * users + (size_t)j->tenant] += want;
    }
    err = slaq_shares_divide(t, nn, s->sh_nodecap, s->sh_demand,
                             s->sh_part);
    if (!err && s->sh_blend)
        err = slaq_shares_mix(t, nn, s->cfg.share_guarantee, s->sh_ref,
                              s->sh_part);
    if (err)
        return err;
    size_t ng = 1;
    s->ncap[0] = 0;
    s->nweight[0] = 0;
    s->sh_gnode[0] = nn;
    for (size_t i = 0; i < s->n; i++) {
        const slaq_job *j = s->jobs[i];
        size_t v = s->node_of[i], g = 0;
        if (v < nn && !s->sh_held[i]) {
            size_t c = v * users + (size_t)j->tenant;
            if (s->sh_group[c] < 0) {
                s->sh_group[c] = (long)ng;
                s->sh_gnode[ng] = v;
                s->ncap[ng] = s->sh_part[c];
                s->nweight[ng] = 0;
                ng++;
            }
            g = (size_t)s->sh_group[c];
        }
        s->node_of[i] = g;
        s->nweight[g] += j->weight;
    }
    *ngroups = ng;
    return SLAQ_OK;
}

/* The first pass over the jobs: each job's node (index nn for pending
 * jobs, on a node of no cores) into s->node_of, each node's weights
 * (summed in job order, as the one pool always was) into s->nweight, and
 * in the same pass sched_prior()'s mean, which it returns. */
static double sched_tally(slaq_sched *s, size_t nn)
{
    for (size_t v = 0; v <= nn; v++)
        s->nweight[v] = 0;
    double cpu_sum = 0;
    size_t cpu_known = 0;
    for (size_t i = 0; i < s->n; i++) {
        const slaq_job *j = s->jobs[i];
        if (i + SLAQ_PREFETCH_AHEAD < s->n)
            slaq_prefetch(s->jobs[i + SLAQ_PREFETCH_AHEAD], JOB_HOT_BYTES);
        long v = j->node;
        s->node_of[i] = v < 0 ? nn : (size_t)v;
        s->nweight[s->node_of[i]] += j->weight;
        if (j->rt.observed > 0) {
            cpu_sum += slaq_runtime_iter_cpu(&j->rt);
            cpu_known++;
        }
    }
    return cpu_known ? cpu_sum / (double)cpu_known
                     : s->cfg.default_iter_cpu_s;
}

/* The cores ML jobs get on each of the nn nodes into s->ncap (0 on the
 * pending jobs' node nn); returns their sum. */
static double sched_node_caps(slaq_sched *s, size_t nn)
{
    const slaq_sched_config *c = &s->cfg;
    double total_cap = 0;
    for (size_t v = 0; v < nn; v++) {
        s->ncap[v] = slaq_capacity_for_ml(s->clu.node[v].cores, c->reserved,
                                          c->nonml_jobs, s->clu.node[v].jobs);
        total_cap += s->ncap[v];
    }
    s->ncap[nn] = 0;
    return total_cap;
}

/* What the policy is told of job i, into s->pjobs[i]: its forecast and
 * position, its iterations per core over the horizon, its floor (fair
 * share while settling, lifts, priors), its goal and scaling; prior is
 * the population's iteration cost. forecasts and admits: the policy's.
 * With reference set, for an allocation that only says what the policy
 * would do (shares_reference): the bound on starvation's clock is
 * neither read nor advanced. */
static void sched_fill_pjob(slaq_sched *s, size_t i, double now, double prior,
                            double horizon, int forecasts, int admits,
                            int reference)
{
    const slaq_sched_config *c = &s->cfg;
    slaq_job *j = s->jobs[i];
    slaq_pjob *pj = &s->pjobs[i];
    int trend = alloc_policy_of(c->policy)->trend;
    double cap = s->ncap[s->node_of[i]];
    double wsum = s->nweight[s->node_of[i]];
    double cpu = job_unit_cpu(s, j, prior);
    pj->fc = slaq_predictor_forecast(j->pred);
    pj->k = job_position(j, job_scaling(s, j), now, cpu);
    double h = judged_horizon(c, horizon, cap, j->weight, wsum, cpu);
    pj->iters_per_core = h / cpu;
    pj->weight = j->weight;
    pj->max_cores = j->max_cores;
    pj->scale = job_scale(s, j) * h / horizon;
    double fair = wsum > 0 ? fmin(cap * j->weight / wsum,
                                  j->max_cores) : 0;
    pj->settling = job_settling(s, j);
    pj->min_cores = pj->settling && !admits ? fair : 0;
    double lift = reference ? 0 : job_lift(s, j, now, pj->k, fair);
    if (lift > pj->min_cores)
        pj->min_cores = lift;
    const slaq_forecast *pf = job_prior(s, j);
    if (pf) {
        pj->fc = pf;
        pj->scale = pf->scale * h / horizon;
        if (fair > pj->min_cores && !admits)
            pj->min_cores = fair;
    }
    pj->unproven = !j->reported;
    /* The measured trend, for the policies that read it (slaq-index's
     * falling, slaq-trend's trend): O(reports in the window) a job. */
    pj->falling = 0;
    pj->trend = 0;
    if ((admits || trend) && j->kind == SLAQ_JOB_ML && j->reported) {
        int falling = job_trend(j, c->starve_s, trend ? &pj->trend : NULL);
        pj->falling = admits && falling;
    }
    pj->prev_alloc = j->alloc;
    pj->stay = c->hysteresis;
    sched_goal_pjob(j, pj, now, cpu);
    pj->scaling = job_scaling(s, j);
    /* A program not measured yet: the prior (slaq_scaling_init's σ),
     * for the policy that sizes each admitted job by its scaling. */
    if (!pj->scaling && admits && j->program && c->scaling &&
        j->kind == SLAQ_JOB_ML)
        pj->scaling = &j->scaling;
    if (j->kind == SLAQ_JOB_QUERY)
        sched_query_pjob(s, j, pj, now, cpu, cap, wsum, horizon);
    else if (j->kind == SLAQ_JOB_EXACT && forecasts)
        sched_exact_pjob(j, pj, cap, wsum);
}

/* Takes s->alloc as the jobs' cores from now: each job's allocation and
 * its gain's terms, its tokens, its node's and its user's sums. */
static void sched_apply(slaq_sched *s, size_t nn, double now)
{
    const slaq_sched_config *c = &s->cfg;
    for (size_t v = 0; v < nn; v++)
        s->clu.node[v].alloc = 0;
    for (size_t i = 0; i < s->n; i++) {
        slaq_job *j = s->jobs[i];
        const slaq_pjob *pj = &s->pjobs[i];
        if (i + SLAQ_PREFETCH_AHEAD < s->n)
            slaq_prefetch(s->jobs[i + SLAQ_PREFETCH_AHEAD], JOB_HOT_BYTES);
        double a = s->alloc[i];
        double cores = a < j->max_cores ? a : j->max_cores;
        double k1 = pj->k + pj->iters_per_core *
                                slaq_scaling_speedup(pj->scaling, cores);
        j->alloc = a;
        j->alloc_t = now;
        j->gain_k0 = pj->k;
        j->gain_k1 = k1;
        j->gain_scale = pj->scale;
        j->gain_lazy = 1;
        slaq_tokens_refill(&j->tokens, a, c->epoch_s);
        if (j->node >= 0)
            s->clu.node[j->node].alloc += a;
        if (s->shares)
            slaq_shares_add_job(s->shares, j->tenant, 0, 0, a);
    }
}

/* Each node's free cores and its price for placing a job (with shares,
 * its cheapest group's of the ngroups). */
static void sched_node_prices(slaq_sched *s, size_t nn, size_t ngroups)
{
    const double *node_cap = s->shares ? s->sh_nodecap : s->ncap;
    for (size_t v = 0; v < nn; v++) {
        clu_node *nd = &s->clu.node[v];
        nd->free = node_cap[v] - nd->alloc;
        if (nd->free < 0)
            nd->free = 0;
        nd->price = s->shares ? 0 : alloc_node_price(s->ws, v);
    }
    /* With shares a node's price is its cheapest group's. */
    for (size_t g = 1; s->shares && g < ngroups; g++) {
        clu_node *nd = &s->clu.node[s->sh_gnode[g]];
        double p = alloc_node_price(s->ws, g);
        if (nd->price == 0 || p < nd->price)
            nd->price = p;
    }
}

/* sched_fill_pjob for every job, for the groups that node_of[], ncap[]
 * and nweight[] describe (nodes, or with shares the (node, user) groups). */
static void sched_fill_pjobs(slaq_sched *s, double now, double prior,
                             int reference)
{
    const slaq_sched_config *c = &s->cfg;
    int forecasts = alloc_policy_of(c->policy)->forecasts;
    int admits = alloc_policy_of(c->policy)->admits;
    double horizon = c->horizon_s > c->epoch_s ? c->horizon_s : c->epoch_s;
    for (size_t i = 0; i < s->n; i++) {
        if (i + SLAQ_PREFETCH_AHEAD < s->n)
            slaq_prefetch(s->jobs[i + SLAQ_PREFETCH_AHEAD], JOB_HOT_BYTES);
        sched_fill_pjob(s, i, now, prior, horizon, forecasts, admits,
                        reference);
    }
}

/*
 * A guarantee below 1 (share_guarantee G): what the policy would give
 * each user's jobs on each node without shares, sh_ref[node * users +
 * user], from an allocation over the nodes (node_of[], ncap[] as
 * slaq_sched_allocate set them, before shares_group) that changes no
 * job. shares_group then gives each (node, user) group G x its share
 * plus (1 - G) x that (slaq_shares_mix): both sum to the node's cores,
 * so their mix does too. Only under a policy that divides by forecasts
 * (as lending: what is given up goes where quality gains most), and not
 * with caps on cores or jobs, which the reference does not know of:
 * there the shares are strict (sh_blend stays 0).
 */
static int shares_reference(slaq_sched *s, double now, double prior,
                            size_t nn)
{
    const slaq_shares *t = s->shares;
    size_t users = slaq_shares_count(t);
    s->sh_blend = 0;
    if (!(s->cfg.share_guarantee < 1) ||
        !alloc_policy_of(s->cfg.policy)->forecasts)
        return SLAQ_OK;
    for (size_t u = 0; u < users; u++) {
        const slaq_share_entry *e = slaq_shares_at(t, (int)u);
        if (e->max_jobs || e->max_cores < INFINITY)
            return SLAQ_OK;
    }
    if (sched_reserve_shares(s, nn, users) != SLAQ_OK)
        return SLAQ_ENOMEM;
    sched_fill_pjobs(s, now, prior, 1);
    slaq_alloc_ws_set_hold(s->ws, s->cfg.hold);
    int err = slaq_allocate_nodes(s->cfg.policy, s->pjobs, s->n, s->node_of,
                                  s->ncap, nn + 1, s->cfg.unit, s->ws,
                                  s->alloc);
    if (err)
        return err;
    for (size_t c = 0; c < nn * users; c++)
        s->sh_ref[c] = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->node_of[i] < nn)
            s->sh_ref[s->node_of[i] * users + (size_t)s->jobs[i]->tenant] +=
                s->alloc[i];
    s->sh_blend = 1;
    return SLAQ_OK;
}

/*
 * Each job's verdict at the end of the epoch (slaq_job_verdict): its
 * target reached, under every policy; and MLF-C under a policy of load
 * control (mlfs): whether the cluster is overloaded, by
 * slaq_mlfs_overloaded's rule with cores standing for memory too (a
 * slaq_sched does not know its jobs' memory: a node's demand is its
 * jobs' max_cores, at most its cores each; a node that is down counts as
 * neither busy nor idle), and the job's verdict under its own stop rule
 * (slaq_mlfc_decide: its last metric against its required accuracy, its
 * last SLAQ_MLFS_OPTSTOP_N losses for a plateau).
 */
static int sched_overload(slaq_sched *s, size_t nn)
{
    for (size_t v = 0; v < nn; v++)
        s->clu.node[v].demand = 0;
    for (size_t i = 0; i < s->n; i++) {
        const slaq_job *j = s->jobs[i];
        if (j->node >= 0 && (size_t)j->node < nn) {
            clu_node *nd = &s->clu.node[j->node];
            nd->demand += fmin(j->max_cores, nd->cores);
        }
    }
    double sum = 0;
    size_t up = 0;
    for (size_t v = 0; v < nn; v++) {
        const clu_node *nd = &s->clu.node[v];
        if (!(nd->cores > 0))
            continue;
        slaq_node_use u = {nd->cores, nd->cores, nd->demand, nd->demand};
        sum += mlfs_degree(&u);
        up++;
    }
    return s->clu.npend > 0 || (up > 0 && sum / (double)up > SLAQ_MLFS_H_S);
}

static void sched_verdicts(slaq_sched *s, size_t nn)
{
    int control = slaq_policy_load_control(s->cfg.policy);
    s->overloaded = control && sched_overload(s, nn);
    for (size_t i = 0; i < s->n; i++) {
        slaq_job *j = s->jobs[i];
        j->verdict = SLAQ_VERDICT_RUN;
        if (j->target > 0 && slaq_history_total(j->hist) >= 3 &&
            slaq_job_reduction(j) >= j->target) {
            j->verdict = SLAQ_VERDICT_TARGET;
            continue;
        }
        if (!control)
            continue;
        double recent[SLAQ_MLFS_OPTSTOP_N];
        size_t len = slaq_history_len(j->hist);
        /* Fewer values than the window while the job is young: they
         * start at its first loss, so their range is the whole fall and
         * no plateau is seen until the window has moved past the start. */
        size_t n = len < SLAQ_MLFS_OPTSTOP_N ? len : SLAQ_MLFS_OPTSTOP_N;
        for (size_t k = 0; k < n; k++)
            recent[k] = slaq_history_at(j->hist, len - n + k)->loss;
        j->verdict = slaq_mlfc_decide(&j->goal, j->metric, s->overloaded,
                                      slaq_history_first_loss(j->hist),
                                      recent, n, SLAQ_MLFS_OPTSTOP_EPS);
    }
}

int slaq_sched_allocate(slaq_sched *s, double now)
{
    if (s->mlfs)
        return sched_mlfs_epoch(s, now);
    const slaq_sched_config *c = &s->cfg;
    /* A policy that divides by forecasts gives exact jobs their fair
     * share as a floor, and is damped; fair shares need neither. */
    int forecasts = alloc_policy_of(c->policy)->forecasts;
    int admits = alloc_policy_of(c->policy)->admits;
    sched_start_pending(s, now);
    size_t nn = s->clu.n;
    if (sched_reserve_nodes(s, nn + 1) != SLAQ_OK)
        return SLAQ_ENOMEM;
    double prior = sched_tally(s, nn);
    double total_cap = sched_node_caps(s, nn);
    /* What the policy divides: the nodes (and the pending jobs' node of
     * no cores), or with shares the (node, user) groups. */
    size_t ngroups = nn + 1;
    if (s->shares) {
        int err = shares_reference(s, now, prior, nn);
        if (!err)
            err = shares_group(s, now, nn, &ngroups);
        if (err)
            return err;
    }
    sched_fill_pjobs(s, now, prior, 0);
    slaq_alloc_ws_set_hold(s->ws, c->hold);
    int err = slaq_allocate_nodes(c->policy, s->pjobs, s->n, s->node_of,
                                  s->ncap, ngroups, c->unit, s->ws, s->alloc);
    if (err)
        return err;
    /* Damping: with the same jobs and capacity as last epoch, move only
     * part of the way from the old allocation to the new one. Both are
     * feasible (within caps, above floors, summing to the capacity), so
     * their mix is too. */
    if (c->damping > 0 && forecasts && !admits && !s->changed &&
        total_cap == s->last_cap)
        for (size_t i = 0; i < s->n; i++)
            s->alloc[i] = c->damping * s->jobs[i]->alloc +
                          (1 - c->damping) * s->alloc[i];
    s->changed = 0;
    s->redivide = 0;
    s->last_cap = total_cap;
    sched_apply(s, nn, now);
    sched_node_prices(s, nn, ngroups);
    sched_verdicts(s, nn);
    return SLAQ_OK;
}

int slaq_sched_epoch(slaq_sched *s, double now)
{
    slaq_sched_refit(s);
    return slaq_sched_allocate(s, now);
}

double slaq_job_alloc(const slaq_job *j) { return j->alloc; }
double slaq_job_gain(const slaq_job *j)
{
    if (!j->gain_lazy)
        return j->gain;
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    return (slaq_forecast_loss(f, j->gain_k0) -
            slaq_forecast_loss(f, j->gain_k1)) / j->gain_scale;
}
const slaq_history *slaq_job_history(const slaq_job *j) { return j->hist; }
const slaq_predictor *slaq_job_predictor(const slaq_job *j) { return j->pred; }
const slaq_runtime *slaq_job_runtime(const slaq_job *j) { return &j->rt; }
const slaq_tokens *slaq_job_tokens(const slaq_job *j) { return &j->tokens; }
int slaq_job_throttled(const slaq_job *j)
{
    return slaq_tokens_throttled(&j->tokens);
}
double slaq_job_weight(const slaq_job *j) { return j->weight; }
double slaq_job_max_cores(const slaq_job *j) { return j->max_cores; }
double slaq_job_arrival(const slaq_job *j) { return j->arrival; }
void *slaq_job_user(const slaq_job *j) { return j->user; }
const slaq_goal *slaq_job_goal(const slaq_job *j) { return &j->goal; }
slaq_verdict slaq_job_verdict(const slaq_job *j) { return j->verdict; }
void slaq_job_set_metric(slaq_job *j, double value) { j->metric = value; }
const char *slaq_verdict_name(slaq_verdict v)
{
    static const char *const names[] = {"run", "target_reduction",
                                        "accuracy_met", "optstop"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
int slaq_sched_overloaded(const slaq_sched *s) { return s->overloaded; }

/* A placed job's weight and cap are part of its node's bookkeeping: it
 * is taken off and put back with the new values. */
void slaq_job_set_weight(slaq_job *j, double weight)
{
    if (!(weight > 0))
        return;
    slaq_sched *s = j->sched;
    if (j->node >= 0) {
        clu_job cj = sched_job_clu(s, j);
        clu_node *nd = &s->clu.node[j->node];
        nd->weight += weight - cj.weight;
    }
    j->weight = weight;
}

void slaq_job_set_max_cores(slaq_job *j, double max_cores)
{
    if (!(max_cores > 0))
        return;
    slaq_sched *s = j->sched;
    if (j->node >= 0) {
        clu_job before = sched_job_clu(s, j);
        j->max_cores = max_cores;
        clu_job after = sched_job_clu(s, j);
        s->clu.node[j->node].minsum += after.minsh - before.minsh;
    }
    j->max_cores = max_cores;
}

int slaq_job_set_convergence(slaq_job *j, slaq_convergence c)
{
    if ((unsigned)c > SLAQ_CONV_NONCONVEX)
        return SLAQ_EINVAL;
    if (c == j->convergence)
        return SLAQ_OK;
    slaq_convergence old = j->convergence;
    j->convergence = c;
    slaq_predictor *p = job_predictor(j->sched, j);
    if (!p) {
        j->convergence = old;
        return SLAQ_ENOMEM;
    }
    slaq_predictor_free(j->pred);
    j->pred = p;
    return SLAQ_OK;
}

slaq_convergence slaq_job_convergence(const slaq_job *j)
{
    return j->convergence;
}

/* ------------------------------------------------------------------ nodes */

size_t slaq_sched_node_count(const slaq_sched *s) { return s->clu.n; }

int slaq_sched_add_node(slaq_sched *s, double cores)
{
    int v = clu_add_node(&s->clu, cores);
    if (v >= 0)
        s->changed = 1;
    return v;
}

int slaq_sched_set_node_cores(slaq_sched *s, size_t node, double cores)
{
    if (node >= s->clu.n || !(cores >= 0) || !isfinite(cores))
        return SLAQ_EINVAL;
    clu_node *nd = &s->clu.node[node];
    nd->free += cores - nd->cores;
    if (nd->free < 0)
        nd->free = 0;
    nd->cores = cores;
    s->changed = 1;
    return SLAQ_OK;
}

double slaq_sched_node_cores(const slaq_sched *s, size_t node)
{
    return node < s->clu.n ? s->clu.node[node].cores : 0;
}

size_t slaq_sched_node_jobs(const slaq_sched *s, size_t node)
{
    return node < s->clu.n ? s->clu.node[node].jobs : 0;
}

double slaq_sched_node_alloc(const slaq_sched *s, size_t node)
{
    return node < s->clu.n ? s->clu.node[node].alloc : 0;
}

size_t slaq_sched_pending(const slaq_sched *s) { return s->clu.npend; }

slaq_job *slaq_sched_pending_job(const slaq_sched *s, size_t i)
{
    return i < s->clu.npend ? s->clu.pend[i] : NULL;
}

int slaq_job_node(const slaq_job *j)
{
    return j->node >= 0 ? (int)j->node : SLAQ_NODE_PENDING;
}

int slaq_sched_replace(slaq_sched *s, slaq_job *j)
{
    job_unplace(s, j);
    j->alloc = 0;
    job_place_or_queue(s, j);
    return SLAQ_OK;
}

int slaq_sched_move(slaq_sched *s, slaq_job *j, size_t node)
{
    if (j->node < 0 || node >= s->clu.n)
        return SLAQ_EINVAL;
    job_unplace(s, j);
    if (j->pin >= 0)
        j->pin = (long)node;
    j->alloc = 0;
    clu_job cj = sched_job_clu(s, j);
    clu_attach(&s->clu, node, &cj);
    j->node = (long)node;
    return SLAQ_OK;
}

int slaq_sched_keys(slaq_sched *s, double *key)
{
    if (s->mlfs) {
        sched_mlfs_keys(s, key);
        return SLAQ_OK;
    }
    return slaq_policy_keys(s->cfg.policy, s->pjobs, s->n, s->ws, key);
}

int slaq_sched_terms(slaq_sched *s, slaq_prio_terms *out)
{
    return slaq_mlfs_terms(s->cfg.policy, s->pjobs, s->n,
                           slaq_alloc_ws_prio(s->ws), out);
}

void slaq_sched_remaining(const slaq_sched *s, double *out)
{
    for (size_t i = 0; i < s->n; i++)
        out[i] = s->pjobs[i].remaining_s;
}

void slaq_job_set_iters(slaq_job *j, uint64_t iters)
{
    j->iters = iters;
    j->scale_ok = 0;
}
uint64_t slaq_job_iters(const slaq_job *j) { return j->iters; }

double slaq_job_end_loss(const slaq_job *j)
{
    if (slaq_history_total(j->hist) < 2)
        return NAN;
    const slaq_report *last = slaq_history_last(j->hist);
    if (j->iters > 0 && j->iters <= last->iter)
        return last->loss;
    double end = last->loss;
    int known = 0;
    for (int i = 0; i < SCHED_END_FITS; i++) {
        /* the newest fit always counts, however sparse the reports */
        if (isnan(j->ends[i]) ||
            (i > 0 && j->end_iter[i] + SCHED_END_ITERS <= last->iter))
            continue;
        known = 1;
        if (j->ends[i] < end)
            end = j->ends[i];
    }
    /* Before its first fit a job's end is unknown, not its last loss. */
    return known ? end : NAN;
}

/* The reduction (first − loss) / (first − end) in [0, 1]; 0 when
 * first − end is not positive or unknown. */
static double reduction_of(double loss, double first, double end)
{
    double span = first - end;
    if (!(span > 0))
        return 0;
    double r = (first - loss) / span;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

double slaq_job_reduction(const slaq_job *j)
{
    if (slaq_history_total(j->hist) < 2)
        return 0;
    return reduction_of(slaq_history_last(j->hist)->loss,
                        slaq_history_first_loss(j->hist),
                        slaq_job_end_loss(j));
}

double slaq_norm_loss(double loss, double first, double end)
{
    if (isnan(loss) || isnan(first) || isnan(end))
        return NAN;
    return 1 - reduction_of(loss, first, end);
}

double slaq_job_iters_to(const slaq_job *j, double target)
{
    if (slaq_history_total(j->hist) < 2 || !(target > 0 && target <= 1))
        return NAN;
    if (slaq_job_reduction(j) >= target)
        return 0;
    double first = slaq_history_first_loss(j->hist);
    double goal = first - target * (first - slaq_job_end_loss(j));
    const slaq_forecast *f = slaq_predictor_forecast(j->pred);
    double k0 = (double)slaq_history_last(j->hist)->iter;
    /* Forecasts fall monotonically: bracket the crossing by doubling,
     * then bisect to half an iteration. */
    /* A job that declared its length has all of its reduction at its
     * last iteration, whatever the forecast says before. */
    double most = j->iters > 0 ? (double)j->iters - k0 : 1e9;
    double lo = 0, hi = 1;
    while (slaq_forecast_loss(f, k0 + hi) > goal) {
        lo = hi;
        hi *= 2;
        if (hi >= most)
            return j->iters > 0 ? most : INFINITY;
    }
    while (hi - lo > 0.5) {
        double mid = (lo + hi) / 2;
        if (slaq_forecast_loss(f, k0 + mid) > goal)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}
