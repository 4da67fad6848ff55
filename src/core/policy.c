/*
 * policy.c — the share policies, the ways of dividing cores among jobs:
 * fair shares, SLAQ's Algorithm 1, its max-min variant, slaq-trend (the
 * same greedy, a job still falling valued by its measured trend too) and
 * ReLAQS, and the priority policies (edf, tiresias, mlfs-h, mlfs,
 * mlfs-rl), whose keys live in a file each (policy_*.c) and share one
 * division here.
 *
 * Each policy is one row of the table `policies` below: its name, what it
 * does in a line, whether it divides by the jobs' forecasts, and its
 * allocator (and, for the greedy ones, the key a unit goes by). Parsing,
 * names, the list printed in help texts and the checks of a kind all come
 * from that table, so a new policy is its functions and its row; its
 * slaq_policy_kind is its index.
 *
 * All are pure functions of (jobs with forecasts, the node each job is
 * on, each node's capacity, unit); the scheduler (sched.c), the simulator
 * and the benchmarks call slaq_allocate_nodes() (or slaq_allocate(), its
 * one-node case) and nothing else. The quality policies share one greedy
 * loop over a binary max-heap of all jobs of all nodes keyed on what one
 * more unit would buy; only the key differs. A unit goes to the top job
 * whose node still has room; a job whose node is full leaves the heap.
 * Scratch arrays live in a slaq_alloc_ws that grows to the largest job
 * and node counts seen and is then reused, so a warmed-up epoch does not
 * allocate.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "util.h"
#include "slaq/deadline.h"
#include "internal.h"

typedef struct fair_item {
    double ratio; /* max_cores / weight: the share level at which it caps */
    size_t idx;
} fair_item;

struct slaq_alloc_ws {
    size_t cap;
    size_t *heap;   /* job indices: heaps on key[]; fair: sorted by it */
    double *key;    /* per job: the heap key; fair: its cap level */
    double *lcur;   /* per job: predicted loss after the epoch at alloc */
    double *lnext;  /* per job: ... at alloc + one unit */
    fair_item *items;
    unsigned char *held; /* greedy: held by greedy_hold this call */
    double *goal;   /* plan: iterations to the job's next milestone */
    double *rate;   /* plan: its gain per iteration on the way there */
    /* per node */
    size_t ncap;
    double *left;   /* capacity not yet handed out */
    double *want;   /* fair: weight still to serve; greedy: min_cores */
    double *shrink; /* greedy: how far the min_cores are scaled down */
    double *minsh;  /* greedy: the minimum share of its jobs */
    size_t *rest;   /* greedy: jobs without a min_cores */
    double *price;  /* greedy: the key of the cheapest unit handed out */
    size_t *off;    /* greedy: where the node's job heap starts in heap */
    size_t *nheap;  /* greedy: the heap of nodes */
    slaq_prio_params prio; /* the priority policies' parameters */
    double hold;           /* slaq_alloc_ws_set_hold; 0: never */
};

slaq_alloc_ws *slaq_alloc_ws_new(void)
{
    slaq_alloc_ws *ws = calloc(1, sizeof(slaq_alloc_ws));
    if (ws)
        slaq_prio_params_init(&ws->prio);
    return ws;
}

void slaq_alloc_ws_free(slaq_alloc_ws *ws)
{
    if (!ws)
        return;
    free(ws->heap);
    free(ws->key);
    free(ws->lcur);
    free(ws->lnext);
    free(ws->items);
    free(ws->held);
    free(ws->goal);
    free(ws->rate);
    free(ws->left);
    free(ws->want);
    free(ws->shrink);
    free(ws->minsh);
    free(ws->rest);
    free(ws->price);
    free(ws->off);
    free(ws->nheap);
    free(ws);
}

static int ws_reserve(slaq_alloc_ws *ws, size_t n)
{
    if (n <= ws->cap)
        return SLAQ_OK;
    size_t cap = grow_cap(ws->cap, n, 64);
    if (!cap || GROW_ARRAY(ws->heap, cap) || GROW_ARRAY(ws->key, cap) ||
        GROW_ARRAY(ws->lcur, cap) || GROW_ARRAY(ws->lnext, cap) ||
        GROW_ARRAY(ws->items, cap) || GROW_ARRAY(ws->held, cap) ||
        GROW_ARRAY(ws->goal, cap) || GROW_ARRAY(ws->rate, cap))
        return SLAQ_ENOMEM;
    ws->cap = cap;
    return SLAQ_OK;
}

static int ws_reserve_nodes(slaq_alloc_ws *ws, size_t n)
{
    if (n <= ws->ncap)
        return SLAQ_OK;
    size_t cap = grow_cap(ws->ncap, n, 4);
    if (!cap || GROW_ARRAY(ws->left, cap) || GROW_ARRAY(ws->want, cap) ||
        GROW_ARRAY(ws->shrink, cap) || GROW_ARRAY(ws->minsh, cap) ||
        GROW_ARRAY(ws->price, cap) || GROW_ARRAY(ws->rest, cap) ||
        GROW_ARRAY(ws->off, cap) || GROW_ARRAY(ws->nheap, cap))
        return SLAQ_ENOMEM;
    ws->ncap = cap;
    return SLAQ_OK;
}

int slaq_alloc_ws_set_hold(slaq_alloc_ws *ws, double hold)
{
    if (!ws || !(hold >= 0 && hold <= 1))
        return SLAQ_EINVAL;
    ws->hold = hold;
    return SLAQ_OK;
}

double alloc_node_price(const slaq_alloc_ws *ws, size_t node)
{
    return node < ws->ncap ? ws->price[node] : 0;
}

/* ---------------------------------------------------------------- heap */

/* A NaN key (a forecast that overflowed) ranks below every number: NaN
 * compares false both ways, and a NaN at the root would never be sifted
 * down and so would take every unit. */
static double key_rank(double key) { return key == key ? key : -INFINITY; }

/* The job heaps' order (heap.h), ctx the keys: larger key first; equal
 * keys, lower job index first. */
static int key_before(const void *ctx, size_t a, size_t b)
{
    const double *key = ctx;
    double ka = key_rank(key[a]), kb = key_rank(key[b]);
    if (ka != kb)
        return ka > kb;
    return a < b;
}

/* --------------------------------------------------------------- fair */

/* Fair's order, ctx the level at which each job caps: a heap sort by
 * fair_later leaves the jobs by increasing level, ties by index (a heap
 * sort in place, where the C library's qsort may allocate a buffer on
 * every call: glibc's merge sort does). */
static int fair_later(const void *ctx, size_t a, size_t b)
{
    const double *level = ctx;
    if (level[a] != level[b])
        return !(level[a] < level[b]);
    return a > b;
}

/*
 * Weighted water-filling, on each node separately: every job gets level ×
 * weight cores, except jobs whose max_cores is below that, which get their
 * max; each node's level is the highest its capacity allows. Jobs are
 * visited in increasing order of the level at which they cap, so one pass
 * settles every capped job and the rest of each node share what is left
 * there in proportion to weight.
 */
static void alloc_fair(const alloc_policy *p, const slaq_pjob *jobs,
                       size_t n, const size_t *node, const double *capacity,
                       size_t nnodes, double unit, slaq_alloc_ws *ws,
                       double *alloc)
{
    (void)p;
    (void)unit;
    double *wsum = ws->want, *left = ws->left;
    for (size_t v = 0; v < nnodes; v++) {
        wsum[v] = 0;
        left[v] = capacity[v];
    }
    for (size_t i = 0; i < n; i++) {
        ws->key[i] = jobs[i].max_cores / jobs[i].weight;
        ws->heap[i] = i;
        wsum[node ? node[i] : 0] += jobs[i].weight;
    }
    heap_sort(ws->heap, n, fair_later, ws->key);
    for (size_t r = 0; r < n; r++) {
        size_t i = ws->heap[r], v = node ? node[i] : 0;
        double share = wsum[v] > 0 ? left[v] * jobs[i].weight / wsum[v] : 0;
        if (share > jobs[i].max_cores)
            share = jobs[i].max_cores;
        alloc[i] = share;
        left[v] -= share;
        wsum[v] -= jobs[i].weight;
    }
    for (size_t v = 0; v < nnodes; v++)
        ws->price[v] = 0;
}

/* ------------------------------------------------- quality policies */

/* Predicted loss of job j after one epoch on `a` cores: the paper's
 * iters_per_core × a iterations when the job scales linearly (scaling
 * NULL, or σ = κ = 0: the speed-up is then a itself, bit for bit), its
 * model's speed-up of a otherwise. */
static double loss_after(const slaq_pjob *j, double a)
{
    double cores = a < j->max_cores ? a : j->max_cores;
    return slaq_forecast_loss(j->fc, j->k + j->iters_per_core *
                                               slaq_scaling_speedup(
                                                   j->scaling, cores));
}

/* The loss units of one unit of progress for job j. */
static double job_scale(const slaq_pjob *j)
{
    return j->scale > 0 ? j->scale : j->fc->scale;
}

/*
 * slaq's key: what the unit from `a` to a + unit cores buys job j, its
 * weighted, normalised predicted loss reduction (lcur to lnext). A unit
 * the job held in the previous epoch weighs (1 + stay) more, so that
 * noise in the forecasts does not move cores back and forth.
 */
static double gain_key(const slaq_pjob *j, double lcur, double lnext,
                       double a, double unit)
{
    double gain = j->weight * (lcur - lnext) / job_scale(j);
    /* A NaN gain (a forecast gone wrong) must not win every comparison. */
    if (gain != gain)
        gain = -INFINITY;
    if (j->stay > 0 && a + unit * 1e-9 < j->prev_alloc)
        gain *= gain > 0 ? 1 + j->stay : 1 / (1 + j->stay);
    return gain;
}

/*
 * The planner (slaq-plan). Algorithm 1 values a core by the next epoch's
 * drop alone, so a job whose loss has not moved yet, or moves slowly,
 * gets nothing while others fall fast, and a batch is spread over every
 * job instead of finishing a few. The planner values a core by how fast
 * it brings its job to the job's next milestone (50, 90, 95 and 99% of
 * the drop its forecast predicts from its first loss to its last): the
 * quality gained up to the milestone divided by the iterations it takes
 * (plan_goal), so that work close to a milestone and cheap to finish
 * goes first (an index rule, as shortest remaining time first on the
 * time to quality), and a core beyond what reaches the milestone this
 * epoch is worth Algorithm 1's gain alone (plan_unit_key adds the two).
 * The horizon is the milestone, however many epochs away.
 *
 * Measured (docs/libslaq.md, "The planner"): handed the true curves
 * (oracle-plan), it reaches t90 in 0.28x fair's time on the held-out
 * curves at 10 s mean inter-arrival, where Algorithm 1 handed the same
 * curves takes 1.40x; on forecasts fitted to a job's own reports it is
 * Algorithm 1's equal, since a forecast cannot see a drop that has not
 * begun (the class priors and the bound on starvation in sched.c help
 * both alike: docs/libslaq.md, "Class priors").
 */
#define PLAN_FAR 1e12 /* iterations: a milestone the forecast never reaches */
#define PLAN_GAIN 1.0 /* Algorithm 1's gain, added to each unit's key */

/* The iterations X job j's forecast needs from where it is to milestone m
 * (a fraction of the drop from its first loss to its final one), by
 * doubling and bisection, and the weighted, normalised drop on the way:
 * 0, or -1 when it is past m or its forecast never gets there. */
static int milestone_iters(const slaq_pjob *j, double m, double *iters,
                           double *drop)
{
    const slaq_forecast *f = j->fc;
    double first = f->first_loss, span = first - f->final_loss;
    double now = slaq_forecast_loss(f, j->k);
    if (!(span > 0) || !isfinite(now) || !((first - now) / span <
                                           m - 1e-9))
        return -1;
    double target = first - m * span;
    double hi = j->iters_per_core > 0 ? j->iters_per_core : 1, lo = 0;
    while (hi < PLAN_FAR && slaq_forecast_loss(f, j->k + hi) > target) {
        lo = hi;
        hi *= 2;
    }
    if (!(hi < PLAN_FAR))
        return -1;
    for (int step = 0; step < 24 && hi - lo > 1e-6 * hi; step++) {
        double mid = 0.5 * (lo + hi);
        if (slaq_forecast_loss(f, j->k + mid) > target)
            lo = mid;
        else
            hi = mid;
    }
    *iters = hi;
    *drop = j->weight * (now - target) / job_scale(j);
    return 0;
}

static void plan_goal(const slaq_pjob *j, double *goal, double *rate)
{
    static const double milestones[] = {0.5, 0.9, 0.95, 0.99};
    double x, drop;
    *goal = PLAN_FAR;
    *rate = 0;
    for (size_t i = 0; i < sizeof milestones / sizeof *milestones; i++)
        if (milestone_iters(j, milestones[i], &x, &drop) == 0) {
            *goal = x;
            *rate = drop / x;
            return;
        }
    /* past its last milestone (or never there): Algorithm 1's gain only */
}

/* Iterations job j makes in one epoch on a cores (loss_after's). */
static double iters_on(const slaq_pjob *j, double a)
{
    double cores = a < j->max_cores ? a : j->max_cores;
    return j->iters_per_core * slaq_scaling_speedup(j->scaling, cores);
}

/* The planner's key of the unit from a to a + unit: the quality it
 * brings toward the milestone this epoch, plus Algorithm 1's gain (which
 * alone decides between cores past every milestone). */
static double plan_unit_key(const slaq_pjob *j, double goal, double rate,
                            double lcur, double lnext, double a, double unit)
{
    double toward = rate * (fmin(iters_on(j, a + unit), goal) -
                            fmin(iters_on(j, a), goal));
    double key = toward + PLAN_GAIN * gain_key(j, lcur, lnext, a, unit);
    if (key != key)
        return -INFINITY;
    if (j->stay > 0 && a + unit * 1e-9 < j->prev_alloc && toward > 0)
        key += toward * j->stay;
    return key;
}

/*
 * slaq-trend's key: Algorithm 1's gain (gain_key), or, when larger,
 * TREND_WEIGHT times the gain the job's measured trend promises, its
 * recent fall per iteration (slaq_pjob.trend) over the iterations the
 * unit adds, weighted and normalised alike (and with the same stay
 * bonus). A forecast fitted to a flat start, a staircase or a noisy
 * plateau says the job is done when its reports still fall: Algorithm 1
 * then values its cores at nothing and keeps it at the minimum share,
 * ranked at random among jobs that are done. The trend ranks these jobs
 * by how fast they really fall, and brings the ones still falling back
 * as soon as cores are left over from jobs whose forecasts are sure. A
 * recent trend overstates what a converging curve will drop next (the
 * fall slows), so it counts at TREND_WEIGHT only: enough to order the
 * jobs that forecasts call done, too little to take cores from a job
 * whose forecast is still steep. TREND_WEIGHT is the largest of 1, 0.5,
 * 0.25, 0.2, 0.1, 0.05 and 0.02 at which the tuning set's mean t90 was no
 * worse than Algorithm 1's at 2, 4 and 10 s mean inter-arrival
 * (docs/libslaq.md, "slaq-trend").
 */
#define TREND_WEIGHT 0.1

static double trend_key(const slaq_pjob *j, double lcur, double lnext,
                        double a, double unit)
{
    double g = gain_key(j, lcur, lnext, a, unit);
    if (!(j->trend > 0))
        return g;
    double t = TREND_WEIGHT * j->weight * j->trend *
               (iters_on(j, a + unit) - iters_on(j, a)) / job_scale(j);
    if (j->stay > 0 && a + unit * 1e-9 < j->prev_alloc)
        t *= 1 + j->stay;
    return t > g ? t : g;
}

/* The planner's row needs a key function of the table's type; the unit
 * keys go through plan_unit_key (greedy_key), with what plan_goal left
 * in the workspace. */
static double plan_key(const slaq_pjob *j, double lcur, double lnext,
                       double a, double unit)
{
    return gain_key(j, lcur, lnext, a, unit);
}

/* Max-min's key: the job's weighted, normalised predicted loss. */
static double maxmin_key(const slaq_pjob *j, double lcur, double lnext,
                         double a, double unit)
{
    (void)lnext;
    (void)a;
    (void)unit;
    const slaq_forecast *f = j->fc;
    double span = f->first_loss - f->final_loss;
    if (!(span > 0))
        span = f->scale;
    return j->weight * (lcur - f->final_loss) / span;
}

/* Re-keys job i in the heap at allocation alloc[i] by the policy's key;
 * an unproven job's guess of a forecast ranks below every real one. */
static void greedy_key(const alloc_policy *p, const slaq_pjob *j, size_t i,
                       const double *alloc, double unit, slaq_alloc_ws *ws)
{
    if (j->unproven || (ws->hold > 0 && ws->held[i]))
        ws->key[i] = -INFINITY;
    else if (p->key == plan_key)
        ws->key[i] = plan_unit_key(j, ws->goal[i], ws->rate[i], ws->lcur[i],
                                   ws->lnext[i], alloc[i], unit);
    else
        ws->key[i] = p->key(j, ws->lcur[i], ws->lnext[i], alloc[i], unit);
}

/*
 * The guaranteed cores every job starts from, on each node: explicit
 * min_cores first (scaled down together if they exceed the node's
 * capacity), then the minimum share, min(unit, what is left / the node's
 * jobs without a min_cores). Leaves what is left of each node in ws->left.
 */
static void greedy_floor(const slaq_pjob *jobs, size_t n, const size_t *node,
                         const double *capacity, size_t nnodes, double unit,
                         slaq_alloc_ws *ws, double *alloc)
{
    for (size_t v = 0; v < nnodes; v++) {
        ws->want[v] = 0;
        ws->rest[v] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t v = node ? node[i] : 0;
        if (jobs[i].min_cores > 0)
            ws->want[v] += fmin(jobs[i].min_cores, jobs[i].max_cores);
        else
            ws->rest[v]++;
    }
    for (size_t v = 0; v < nnodes; v++) {
        double want = ws->want[v], cap = capacity[v];
        ws->shrink[v] = want > cap ? cap / want : 1;
        double left = cap - want * ws->shrink[v];
        ws->minsh[v] = ws->rest[v] ? fmin(unit, left / (double)ws->rest[v])
                                   : 0;
        ws->left[v] = cap;
    }
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        size_t v = node ? node[i] : 0;
        double a = j->min_cores > 0
                       ? fmin(j->min_cores, j->max_cores) * ws->shrink[v]
                       : fmin(ws->minsh[v], j->max_cores);
        alloc[i] = a;
    }
    for (size_t i = 0; i < n; i++)
        ws->left[node ? node[i] : 0] -= alloc[i];
    for (size_t v = 0; v < nnodes; v++)
        if (!(ws->left[v] > 0))
            ws->left[v] = 0;
}

/* Candidates for the hold, by node and then by gain, lowest first. */
/* Lowest gain first; equal gains by index, the order the C library's
 * (merge) sort kept them in before. */
static int hold_cmp(const void *a, const void *b)
{
    const fair_item *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio < y->ratio ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The hold (slaq_alloc_ws_set_hold): time-slicing many jobs on few cores
 * costs each of them cache and switches, and a plateaued job's minimum
 * share buys next to nothing. A job is plateaued when its forecast says
 * less than `hold` of its loss drop is left: (L(k) − L_final) / (L_first
 * − L_final) < hold (a forecast with no drop at all counts as
 * plateaued). Plateaued jobs give their minimum shares back, lowest gain
 * from that share first (the policy's key from 0 cores), while more than
 * ceil(capacity) jobs on the node keep one (one thread each keeps the
 * cores busy). A held job then ranks as an unproven one: it gets units
 * only when every job still running is at its max_cores. Uses
 * ws->shrink and ws->items as scratch; greedy_floor must have run.
 */
static void greedy_hold(const alloc_policy *p, const slaq_pjob *jobs,
                        size_t n, const size_t *node, const double *capacity,
                        size_t nnodes, slaq_alloc_ws *ws, double *alloc)
{
    double *running = ws->shrink;
    for (size_t v = 0; v < nnodes; v++)
        running[v] = 0;
    for (size_t i = 0; i < n; i++)
        if (alloc[i] > 0)
            running[node ? node[i] : 0] += 1;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        if (j->min_cores > 0 || j->unproven || !(alloc[i] > 0))
            continue;
        const slaq_forecast *f = j->fc;
        double now = loss_after(j, 0);
        double span = f->first_loss - f->final_loss;
        double left = span > 0 ? (now - f->final_loss) / span : 0;
        if (!(left < ws->hold))
            continue;
        double g = p->key(j, now, loss_after(j, alloc[i]), 0, alloc[i]);
        if (g != g)
            g = -INFINITY;
        ws->items[nc++] = (fair_item){g, i};
    }
    if (nc == 0)
        return;
    /* Lowest gain first over all nodes: each node's own candidates then
     * come in their order, and `running` is per node. */
    heap_sort_records(ws->items, nc, sizeof *ws->items, hold_cmp);
    for (size_t r = 0; r < nc; r++) {
        size_t i = ws->items[r].idx, v = node ? node[i] : 0;
        double keep = ceil(capacity[v] - 1e-9);
        if (keep < 1)
            keep = 1;
        if (running[v] <= keep)
            continue;
        ws->left[v] += alloc[i];
        alloc[i] = 0;
        ws->held[i] = 1;
        running[v] -= 1;
    }
}

/*
 * SLAQ's Algorithm 1 (maximise total loss reduction) and its max-min
 * variant, in the paper's names:
 *
 *   alloc[job] = guaranteed share         (paper: 1 core, lines 6-10)
 *   prior_q    = max-heap of jobs keyed on
 *                  slaq:   PREDICTLOSSREDUCTION(job), the extra normalised
 *                          loss reduction one more unit buys this epoch,
 *                          times the job's weight
 *                  maxmin: the job's predicted normalised loss after the
 *                          epoch (the paper writes argmin; the objective,
 *                          min max loss, needs the largest: see DESIGN.md)
 *   while num_cores > 0:                   (lines 11-16)
 *       job = prior_q.top; alloc[job] += unit; num_cores -= unit
 *       re-key job (or drop it at its max_cores)
 *
 * Over several nodes (slaq_allocate_nodes) num_cores is kept per node and
 * the loop is the same: the top job takes a unit from its own node, and a
 * job whose node has no room left drops out of prior_q; the loop ends when
 * every node is full. One node is the paper's single pool.
 *
 * The guaranteed share (greedy_floor) lets more jobs than units all run.
 * When less than a unit is left on a node its top job gets the rest.
 * Beyond the paper: per-job guaranteed shares and hysteresis (gain_key).
 * ws->price[v] records the smallest key of a unit handed out on node v
 * (0 if none): what a job placed there later has to outbid.
 */
/* The node heap's order (heap.h), ctx the workspace: nodes by their best
 * job (key_before on the jobs at the roots of their own heaps). */
static int node_before(const void *ctx, size_t u, size_t v)
{
    const slaq_alloc_ws *ws = ctx;
    return key_before(ws->key, ws->heap[ws->off[u]], ws->heap[ws->off[v]]);
}

static void alloc_greedy(const alloc_policy *p, const slaq_pjob *jobs,
                         size_t n, const size_t *node, const double *capacity,
                         size_t nnodes, double unit, slaq_alloc_ws *ws,
                         double *alloc)
{
    greedy_floor(jobs, n, node, capacity, nnodes, unit, ws, alloc);
    if (ws->hold > 0) {
        memset(ws->held, 0, n);
        if (p->key == gain_key)
            greedy_hold(p, jobs, n, node, capacity, nnodes, ws, alloc);
    }
    double *left = ws->left;
    size_t *hn = ws->rest; /* per node: jobs in its heap */

    /* Each node's jobs get a heap of their own, side by side in
     * ws->heap (node v's at off[v]); a heap of nodes picks the best
     * root. Equivalent to one heap of all jobs whose node has room, and
     * a full node leaves with all its jobs at once. */
    for (size_t v = 0; v < nnodes; v++)
        hn[v] = 0;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        if (i + SLAQ_PREFETCH_AHEAD < n)
            slaq_prefetch(jobs[i + SLAQ_PREFETCH_AHEAD].fc,
                          sizeof(slaq_forecast));
        if (alloc[i] >= j->max_cores)
            continue;
        if (p->key == plan_key)
            plan_goal(j, &ws->goal[i], &ws->rate[i]);
        ws->lcur[i] = loss_after(j, alloc[i]);
        ws->lnext[i] = loss_after(j, alloc[i] + unit);
        greedy_key(p, j, i, alloc, unit, ws);
        hn[node ? node[i] : 0]++;
    }
    size_t pos = 0;
    for (size_t v = 0; v < nnodes; v++) {
        ws->off[v] = pos;
        pos += hn[v];
        hn[v] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (alloc[i] >= jobs[i].max_cores)
            continue;
        size_t v = node ? node[i] : 0;
        ws->heap[ws->off[v] + hn[v]++] = i;
    }
    /* A node counts as full a rounding hair above zero so float dust is
     * not handed out; the loop ends when every node is. */
    size_t nh = 0;
    for (size_t v = 0; v < nnodes; v++) {
        ws->price[v] = INFINITY;
        heap_build(ws->heap + ws->off[v], hn[v], key_before, ws->key);
        if (hn[v] > 0 && left[v] > capacity[v] * 1e-12)
            ws->nheap[nh++] = v;
    }
    heap_build(ws->nheap, nh, node_before, ws);

    while (nh > 0) {
        size_t v = ws->nheap[0], *h = ws->heap + ws->off[v];
        size_t i = h[0];
        const slaq_pjob *j = &jobs[i];
        double step = unit;
        if (step > left[v])
            step = left[v];
        if (step > j->max_cores - alloc[i])
            step = j->max_cores - alloc[i];
        alloc[i] += step;
        left[v] -= step;
        if (isfinite(ws->key[i]) && ws->key[i] < ws->price[v])
            ws->price[v] = ws->key[i];
        int drop = !(left[v] > capacity[v] * 1e-12);
        if (!drop && alloc[i] >= j->max_cores) {
            heap_pop(h, hn[v], key_before, ws->key);
            drop = --hn[v] == 0;
        } else if (!drop) {
            ws->lcur[i] = step == unit ? ws->lnext[i]
                                       : loss_after(j, alloc[i]);
            ws->lnext[i] = loss_after(j, alloc[i] + unit);
            greedy_key(p, j, i, alloc, unit, ws);
            heap_sift_down(h, hn[v], 0, key_before, ws->key);
        }
        if (drop) /* the node is full, or all its jobs are capped */
            heap_pop(ws->nheap, nh--, node_before, ws);
        else
            heap_sift_down(ws->nheap, nh, 0, node_before, ws);
    }
    for (size_t v = 0; v < nnodes; v++)
        if (ws->price[v] == INFINITY)
            ws->price[v] = 0;
}

/* ------------------------------------------------------- index policy */

/*
 * The index policy (slaq-index). Sharing every core among every job is
 * what a batch of short jobs loses to a queue by: eight jobs on two
 * cores all reach quality late, where a queue brings two at a time to
 * it. slaq-index admits jobs in the order of an index and gives each
 * admitted job the cores it can use, one core and then each further unit
 * that speeds it up by at least INDEX_SPEEDUP of the unit (its measured
 * scaling; all of its max_cores with none); a job not admitted gets
 * nothing this epoch (slaqd runs it on idle cycles only, the simulator
 * not at all). The order, in four tiers:
 *
 *   0. jobs short of INDEX_MILESTONE of their forecast drop, fewest
 *      core-epochs to it first (shortest remaining time first on the
 *      time to quality, so that work near its quality finishes); a job
 *      that held cores last epoch counts its cost 1 / (1 + stay) times,
 *      so that two near equals do not trade places every epoch;
 *   1. jobs too new to be forecast (settling or unproven), the ones
 *      already running first, then by arrival (a queue's order: their
 *      iterations, and so a prior's count of them, are not comparable
 *      from one program to the next);
 *   2. jobs past the milestone, or whose forecast never reaches it, but
 *      whose reports still fall (slaq_pjob.falling: the trend the bound
 *      on starvation reads), by their quality per core-epoch to their
 *      next milestone (plan_goal): a forecast fitted to a flat start or
 *      a plateau takes the job for done when it is not;
 *   3. the other jobs past the milestone, in the same order.
 *
 * What is left once every admitted job has what it can use goes down the
 * same order up to each job's max_cores. Floors come first: min_cores
 * (the bound on starvation's lift, an exact job's share, a query's) is
 * given before the index divides the rest, so no job that improves waits
 * longer than the bound (sched.c gives this policy no start-up or prior
 * floor and does not damp it: alloc_policy.admits).
 */
#define INDEX_MILESTONE 0.9
#define INDEX_SPEEDUP 0.5

static int index_cmp(const void *a, const void *b)
{
    const fair_item *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio < y->ratio ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Job j's tier and its place in it (smaller first). */
static int index_rank(const slaq_pjob *j, double *place)
{
    int held = j->prev_alloc > 0;
    if (j->unproven || j->settling) {
        *place = held ? -INFINITY : j->arrival;
        return 1;
    }
    double x, drop;
    if (milestone_iters(j, INDEX_MILESTONE, &x, &drop) == 0) {
        double cost = x / (j->iters_per_core > 0 ? j->iters_per_core : 1) /
                      j->weight;
        *place = held ? cost / (1 + j->stay) : cost;
        return 0;
    }
    double goal, rate;
    plan_goal(j, &goal, &rate);
    *place = -rate;
    return j->falling ? 2 : 3;
}

/* The next unit job j takes at a cores, or 0: one core first, then
 * units worth INDEX_SPEEDUP (pass 0); anything up to max_cores (pass 1). */
static double index_step(const slaq_pjob *j, double a, double unit,
                         double left, int pass)
{
    double step = fmin(unit, fmin(left, j->max_cores - a));
    if (!(step > 1e-12))
        return 0;
    if (pass || a + 1e-12 < 1)
        return a < 1 && !pass ? fmin(step, 1 - a) : step;
    double gain = slaq_scaling_speedup(j->scaling, a + step) -
                  slaq_scaling_speedup(j->scaling, a);
    return gain >= INDEX_SPEEDUP * step ? step : 0;
}

static void alloc_index(const alloc_policy *p, const slaq_pjob *jobs,
                        size_t n, const size_t *node, const double *capacity,
                        size_t nnodes, double unit, slaq_alloc_ws *ws,
                        double *alloc)
{
    (void)p;
    /* Floors, scaled down together on a node where they exceed it. */
    for (size_t v = 0; v < nnodes; v++) {
        ws->want[v] = 0;
        ws->price[v] = 0;
    }
    for (size_t i = 0; i < n; i++)
        ws->want[node ? node[i] : 0] += fmin(fmax(jobs[i].min_cores, 0),
                                             jobs[i].max_cores);
    for (size_t v = 0; v < nnodes; v++) {
        ws->shrink[v] = ws->want[v] > capacity[v] ? capacity[v] / ws->want[v]
                                                  : 1;
        ws->left[v] = capacity[v];
    }
    size_t tier_n[4] = {0, 0, 0, 0}; /* each job's tier goes in ws->held */
    for (size_t i = 0; i < n; i++) {
        size_t v = node ? node[i] : 0;
        alloc[i] = fmin(fmax(jobs[i].min_cores, 0), jobs[i].max_cores) *
                   ws->shrink[v];
        ws->left[v] -= alloc[i];
        double place;
        int t = index_rank(&jobs[i], &place);
        ws->key[i] = place;
        ws->held[i] = (unsigned char)t;
        tier_n[t]++;
    }
    for (size_t v = 0; v < nnodes; v++)
        if (!(ws->left[v] > 0))
            ws->left[v] = 0;
    /* The order: each tier's segment of ws->items, sorted by place. */
    size_t at[4] = {0, tier_n[0], tier_n[0] + tier_n[1],
                    tier_n[0] + tier_n[1] + tier_n[2]};
    for (size_t i = 0; i < n; i++)
        ws->items[at[ws->held[i]]++] = (fair_item){ws->key[i], i};
    for (size_t t = 0, off = 0; t < 4; off += tier_n[t++])
        heap_sort_records(ws->items + off, tier_n[t], sizeof *ws->items,
                          index_cmp);
    for (int pass = 0; pass < 2; pass++)
        for (size_t r = 0; r < n; r++) {
            size_t i = ws->items[r].idx, v = node ? node[i] : 0;
            double step;
            while ((step = index_step(&jobs[i], alloc[i], unit, ws->left[v],
                                      pass)) > 0) {
                alloc[i] += step;
                ws->left[v] -= step;
            }
        }
}

/* -------------------------------------------------- priority policies */

/*
 * The priority policies' division: jobs in the order of their keys
 * (larger first, ties to the lower index), each given up to its
 * max_cores of what is left on its node. edf and tiresias are
 * preemptive — a job of a higher key takes the cores of a lower one at
 * the next epoch; a sticky policy (MLF-H, whose queue feeds free
 * servers and which preempts only by moving a job, §3.3.3) first gives
 * every job back the cores it held (prev_alloc), in key order, and then
 * divides what is left by key. Both are work-conserving: a node's cores
 * go unused only when all its jobs are at their max_cores. The heap of
 * all jobs is popped once per job and pass.
 */
static void alloc_prio(const alloc_policy *p, const slaq_pjob *jobs,
                       size_t n, const size_t *node, const double *capacity,
                       size_t nnodes, double unit, slaq_alloc_ws *ws,
                       double *alloc)
{
    (void)unit;
    p->keys(jobs, n, &ws->prio, ws->key);
    for (size_t v = 0; v < nnodes; v++) {
        ws->left[v] = capacity[v];
        ws->price[v] = 0;
    }
    for (size_t i = 0; i < n; i++)
        alloc[i] = 0;
    for (int pass = p->sticky ? 0 : 1; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++)
            ws->heap[i] = i;
        heap_build(ws->heap, n, key_before, ws->key);
        for (size_t h = n; h > 0; h--) {
            size_t i = heap_pop(ws->heap, h, key_before, ws->key);
            size_t v = node ? node[i] : 0;
            double want = pass ? jobs[i].max_cores
                               : fmin(jobs[i].prev_alloc, jobs[i].max_cores);
            double a = fmin(want - alloc[i], ws->left[v]);
            if (a > 0) {
                alloc[i] += a;
                ws->left[v] -= a;
            }
        }
    }
}

/*
 * The two baselines a user would pick instead of slaq: a queue (FIFO,
 * each job up to its max_cores, as many as fit: a batch system's
 * jobs run to their ends in order of arrival) and shortest-first (the
 * least predicted core-seconds to 90% of the forecast drop first,
 * preemptive, each job up to its max_cores). Shortest-first judges by
 * the same forecast and milestone as slaq-index; a job that has not
 * reported yet goes first (it must run to be measured), a job past the
 * milestone last, each of those two groups by its place in the
 * scheduler (arrival). Neither has a floor or a bound on starvation:
 * they are what slaq is measured against, as users run them.
 */
static void shortest_keys(const slaq_pjob *jobs, size_t n,
                          const slaq_prio_params *pp, double *key)
{
    (void)pp;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        double x, drop;
        if (j->unproven || !j->fc)
            key[i] = INFINITY;
        else if (milestone_iters(j, INDEX_MILESTONE, &x, &drop) == 0)
            key[i] = -x / (j->iters_per_core > 0 ? j->iters_per_core : 1) /
                     j->weight;
        else
            key[i] = -INFINITY;
    }
}

/* The order of the share policies' pending queues: arrival. */
static void arrival_keys(const slaq_pjob *jobs, size_t n,
                         const slaq_prio_params *pp, double *key)
{
    (void)pp;
    for (size_t i = 0; i < n; i++)
        key[i] = -jobs[i].arrival;
}

void slaq_prio_params_init(slaq_prio_params *p)
{
    /* MLFS §4.1's defaults; Tiresias' simulator's two queues at 3,600
     * GPU-seconds. */
    *p = (slaq_prio_params){
        .alpha = 0.3, .gamma = 0.8, .g_d = 0.3, .g_r = 0.3, .g_w = 0.35,
        .use_urgency = 1, .use_deadline = 1, .eps_s = 60,
        .las_limit = {3600}, .las_queues = 2,
    };
}

int slaq_alloc_ws_set_prio(slaq_alloc_ws *ws, const slaq_prio_params *p)
{
    if (!(p->alpha >= 0 && p->alpha <= 1) || !(p->gamma >= 0 &&
        p->gamma <= 1) || !(p->g_d >= 0) || !(p->g_r >= 0) ||
        !(p->g_w >= 0) || !isfinite(p->g_d + p->g_r + p->g_w) ||
        !(p->eps_s > 0) || !isfinite(p->eps_s) || p->las_queues < 1 ||
        p->las_queues > SLAQ_LAS_MAX_QUEUES)
        return SLAQ_EINVAL;
    for (size_t q = 0; q + 1 < p->las_queues; q++)
        if (!(p->las_limit[q] > (q ? p->las_limit[q - 1] : 0)) ||
            !isfinite(p->las_limit[q]))
            return SLAQ_EINVAL;
    ws->prio = *p;
    return SLAQ_OK;
}

const slaq_prio_params *slaq_alloc_ws_prio(const slaq_alloc_ws *ws)
{
    return &ws->prio;
}

/* -------------------------------------------------------------- table */

/* The share policies, indexed by slaq_policy_kind. */
static const alloc_policy policies[] = {
    [SLAQ_POLICY_FAIR] = {
        "fair", "weighted fair shares of the cores",
        0, alloc_fair, NULL},
    [SLAQ_POLICY_SLAQ] = {
        "slaq", "the most predicted loss reduction (SLAQ's Algorithm 1)",
        1, alloc_greedy, gain_key},
    [SLAQ_POLICY_MAXMIN] = {
        "slaq-maxmin", "the lowest worst predicted loss",
        1, alloc_greedy, maxmin_key},
    [SLAQ_POLICY_RELAQS] = {
        "relaqs", "ReLAQS: slaq's greedy on queries' progress too",
        1, alloc_greedy, gain_key},
    [SLAQ_POLICY_EDF] = {
        "edf", "earliest deadline first",
        0, alloc_prio, NULL, edf_keys, 0, 0, 0},
    [SLAQ_POLICY_TIRESIAS] = {
        "tiresias", "Tiresias: least attained service (cores x time)",
        0, alloc_prio, NULL, tiresias_keys, 0, 0, 0},
    [SLAQ_POLICY_MLFS_H] = {
        "mlfs-h", "MLFS's priority of deadline, urgency and progress",
        0, alloc_prio, NULL, mlfs_keys, 1, 1, 0},
    [SLAQ_POLICY_MLFS] = {
        "mlfs", "MLFS: mlfs-rl, and stops jobs whose accuracy is met when busy",
        0, alloc_prio, NULL, mlfs_rl_keys, 1, 1, 1, 1},
    [SLAQ_POLICY_MLFS_RL] = {
        "mlfs-rl", "a learned network's order (MLF-RL), MLFS's moves",
        0, alloc_prio, NULL, mlfs_rl_keys, 1, 1, 0, 1},
    [SLAQ_POLICY_PLAN] = {
        "slaq-plan", "the most quality per core-second to each job's next "
        "milestone", 1, alloc_greedy, plan_key},
    [SLAQ_POLICY_INDEX] = {
        "slaq-index", "jobs admitted by the least core-seconds to 90% of "
        "their drop", 1, alloc_index, .admits = 1},
    [SLAQ_POLICY_QUEUE] = {
        "queue", "first come first served, each job up to its max cores",
        0, alloc_prio, NULL, arrival_keys},
    [SLAQ_POLICY_SHORTEST] = {
        "shortest-first", "the least predicted core-seconds to 90% of the "
        "drop first", 1, alloc_prio, NULL, shortest_keys, .admits = 1},
    [SLAQ_POLICY_TREND] = {
        "slaq-trend", "slaq's greedy, a job still falling valued at least "
        "by its measured trend", 1, alloc_greedy, trend_key, .trend = 1},
};

#define NPOLICIES (sizeof policies / sizeof *policies)

const alloc_policy *alloc_policy_of(slaq_policy_kind kind)
{
    return (unsigned)kind < NPOLICIES && policies[kind].name
               ? &policies[kind] : NULL;
}

size_t slaq_policy_count(void)
{
    return NPOLICIES;
}

int slaq_policy_parse(const char *name, slaq_policy_kind *out)
{
    for (size_t i = 0; name && i < NPOLICIES; i++)
        if (policies[i].name && !strcmp(name, policies[i].name)) {
            *out = (slaq_policy_kind)i;
            return SLAQ_OK;
        }
    return SLAQ_EINVAL;
}

const char *slaq_policy_name(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p ? p->name : "?";
}

const char *slaq_policy_summary(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p ? p->summary : NULL;
}

int slaq_policy_uses_forecasts(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p && p->forecasts;
}

int slaq_policy_moves(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p && p->moves;
}

int slaq_policy_load_control(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p && p->control;
}

int slaq_policy_needs_model(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p && p->model;
}

int slaq_policy_has_terms(slaq_policy_kind kind)
{
    const alloc_policy *p = alloc_policy_of(kind);
    return p && (p->keys == mlfs_keys || p->keys == mlfs_rl_keys);
}

int slaq_policy_keys(slaq_policy_kind policy, const slaq_pjob *jobs,
                     size_t n, slaq_alloc_ws *ws, double *key)
{
    const alloc_policy *p = alloc_policy_of(policy);
    if (!p || (p->model && !ws->prio.rl))
        return SLAQ_EINVAL;
    (p->keys ? p->keys : arrival_keys)(jobs, n, &ws->prio, key);
    return SLAQ_OK;
}

int slaq_policy_list(char *buf, size_t len, const char *sep)
{
    size_t used = 0;
    for (size_t i = 0; i < NPOLICIES; i++) {
        if (!policies[i].name)
            continue;
        int w = snprintf(used < len ? buf + used : NULL,
                         used < len ? len - used : 0, "%s%s",
                         used ? sep : "", policies[i].name);
        if (w < 0)
            return -1;
        used += (size_t)w;
    }
    return (int)used;
}

/* ------------------------------------------------------------ allocate */

/*
 * The division's contract (slaq.h): every job between 0 and its
 * max_cores, no node given more than its capacity, up to rounding (a
 * share computed as what is left may come out a few 1e-17 below 0). A
 * policy that broke it would hand a driver cores it does not have; the
 * check is one pass over the jobs, with the workspace's per-node scratch.
 */
static void alloc_check(const slaq_pjob *jobs, size_t n, const size_t *node,
                        const double *capacity, size_t nnodes,
                        slaq_alloc_ws *ws, const double *alloc)
{
    for (size_t v = 0; v < nnodes; v++)
        ws->want[v] = 0;
    for (size_t i = 0; i < n; i++) {
        assert(alloc[i] >= -1e-9);
        assert(alloc[i] <= jobs[i].max_cores * (1 + 1e-9) + 1e-9);
        ws->want[node ? node[i] : 0] += alloc[i];
    }
    for (size_t v = 0; v < nnodes; v++)
        assert(ws->want[v] <= capacity[v] * (1 + 1e-9) + 1e-9);
    (void)jobs; /* read by the asserts only */
    (void)capacity;
}

int slaq_allocate_nodes(slaq_policy_kind policy, const slaq_pjob *jobs,
                        size_t n, const size_t *node, const double *capacity,
                        size_t nnodes, double unit, slaq_alloc_ws *ws,
                        double *alloc)
{
    const alloc_policy *p = alloc_policy_of(policy);
    if (nnodes == 0 || !(unit > 0) || !p || (p->model && !ws->prio.rl))
        return SLAQ_EINVAL;
    for (size_t v = 0; v < nnodes; v++)
        if (!(capacity[v] >= 0) || !isfinite(capacity[v]))
            return SLAQ_EINVAL;
    for (size_t i = 0; i < n; i++) {
        const slaq_pjob *j = &jobs[i];
        if (!(j->weight > 0) || !(j->max_cores > 0) ||
            !(j->iters_per_core >= 0) || !isfinite(j->k) ||
            !(j->scale >= 0) || !isfinite(j->scale) ||
            !(j->min_cores >= 0) || !isfinite(j->min_cores) ||
            !(j->stay >= 0) || !isfinite(j->stay) ||
            !(j->prev_alloc >= 0) || !isfinite(j->prev_alloc) ||
            (node && node[i] >= nnodes))
            return SLAQ_EINVAL;
        if (p->forecasts && (!j->fc || !(j->fc->scale > 0)))
            return SLAQ_EINVAL;
    }
    if (ws_reserve_nodes(ws, nnodes) != SLAQ_OK)
        return SLAQ_ENOMEM;
    if (n == 0) {
        for (size_t v = 0; v < nnodes; v++)
            ws->price[v] = 0;
        return SLAQ_OK;
    }
    if (ws_reserve(ws, n) != SLAQ_OK)
        return SLAQ_ENOMEM;
    p->divide(p, jobs, n, node, capacity, nnodes, unit, ws, alloc);
    alloc_check(jobs, n, node, capacity, nnodes, ws, alloc);
    return SLAQ_OK;
}

int slaq_allocate(slaq_policy_kind policy, const slaq_pjob *jobs, size_t n,
                  double capacity, double unit, slaq_alloc_ws *ws,
                  double *alloc)
{
    return slaq_allocate_nodes(policy, jobs, n, NULL, &capacity, 1, unit, ws,
                               alloc);
}

double slaq_capacity_for_ml(double cores, double reserved,
                            unsigned nonml_jobs, size_t ml_jobs)
{
    double c = cores - (reserved > 0 ? reserved : 0);
    if (nonml_jobs > 0 && ml_jobs > 0)
        c = c * (double)ml_jobs / (double)(ml_jobs + nonml_jobs);
    else if (nonml_jobs > 0)
        c = 0;
    return c > 0 ? c : 0;
}
