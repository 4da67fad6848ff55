/*
 * placement.c — nodes, placement of new jobs, and the pending queue.
 *
 * A scheduler (sched.c) runs on one or more nodes, each with its cores;
 * every job is on one node, or waits in a pending queue served in
 * arrival order. This file keeps what placement needs to know about each
 * node, decides where a new job goes (least-loaded or gain, see
 * slaq_placement in slaq.h), keeps the queue, and the nodes its waiting
 * jobs hold (clu_hold: a job waits only behind jobs that wait for the same
 * nodes, so one that cannot start holds up no other). The allocation
 * itself is one greedy pass over all jobs of all nodes,
 * slaq_allocate_nodes() in policy.c; a single machine is the one-node
 * case of both.
 *
 * A node's bookkeeping is updated as jobs arrive and leave, so a placement
 * costs one look at every node (O(nodes)) and nothing per job.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "internal.h"

int slaq_placement_parse(const char *name, slaq_placement *out)
{
    if (!name)
        return SLAQ_EINVAL;
    if (strcmp(name, "least-loaded") == 0)
        *out = SLAQ_PLACE_LEAST_LOADED;
    else if (strcmp(name, "gain") == 0)
        *out = SLAQ_PLACE_GAIN;
    else
        return SLAQ_EINVAL;
    return SLAQ_OK;
}

const char *slaq_placement_name(slaq_placement kind)
{
    switch (kind) {
    case SLAQ_PLACE_LEAST_LOADED:
        return "least-loaded";
    case SLAQ_PLACE_GAIN:
        return "gain";
    }
    return "?";
}

int clu_init(clu_state *c, size_t nodes, double cores)
{
    memset(c, 0, sizeof *c);
    c->hold_minsh = INFINITY;
    for (size_t v = 0; v < nodes; v++)
        if (clu_add_node(c, cores) < 0) {
            clu_free(c);
            return SLAQ_ENOMEM;
        }
    return SLAQ_OK;
}

void clu_free(clu_state *c)
{
    free(c->node);
    free(c->pend);
    memset(c, 0, sizeof *c);
}

int clu_add_node(clu_state *c, double cores)
{
    if (!(cores >= 0) || !isfinite(cores) || c->n >= (size_t)INT32_MAX)
        return SLAQ_EINVAL;
    if (c->n == c->cap) {
        size_t cap = grow_cap(c->cap, c->n + 1, 4);
        if (!cap || GROW_ARRAY(c->node, cap))
            return SLAQ_ENOMEM;
        c->cap = cap;
    }
    clu_node *nd = &c->node[c->n];
    memset(nd, 0, sizeof *nd);
    nd->cores = cores;
    nd->free = cores;
    return (int)c->n++;
}

/* The cores of node v that ML jobs may use (config.reserved held back). */
static double node_ml_cores(const clu_node *nd, const slaq_sched_config *cfg)
{
    double c = nd->cores - cfg->reserved;
    return c > 0 ? c : 0;
}

/* Whether a job with minimum share minsh may go to node nd. */
static int node_fits(const clu_node *nd, const slaq_sched_config *cfg,
                     double minsh)
{
    double cap = node_ml_cores(nd, cfg);
    if (!(cap > 0))
        return 0;
    if (!cfg->queue)
        return 1;
    return nd->minsum + minsh <= cap * (1 + 1e-12);
}

/* Whether a job that waits could ever run on node nd: it is up and has
 * cores enough for the job's minimum share alone. */
static int node_could_take(const clu_node *nd, const slaq_sched_config *cfg,
                           double minsh)
{
    double cap = node_ml_cores(nd, cfg);
    return cap > 0 && (!cfg->queue || minsh <= cap * (1 + 1e-12));
}

/* Whether an earlier waiting job keeps node nd (clu_hold). */
static int node_held(const clu_state *c, const clu_node *nd,
                     const slaq_sched_config *cfg)
{
    return nd->held || (c->hold_minsh < INFINITY &&
                        node_could_take(nd, cfg, c->hold_minsh));
}

void clu_hold(clu_state *c, const slaq_sched_config *cfg, const clu_job *job)
{
    if (job->pin < 0) {
        if (job->minsh < c->hold_minsh)
            c->hold_minsh = job->minsh;
    } else if ((size_t)job->pin < c->n &&
               node_could_take(&c->node[job->pin], cfg, job->minsh)) {
        c->node[job->pin].held = 1;
    }
}

void clu_hold_clear(clu_state *c, const clu_job *job)
{
    c->hold_minsh = INFINITY;
    if (job && job->pin >= 0 && (size_t)job->pin < c->n)
        c->node[job->pin].held = 0;
}

/*
 * Where a job goes: returns a node index, or -1 when it fits nowhere.
 * The job's share on node v is its fair share there, d = cores × w /
 * (W + w), at most max_cores: what a new job gets while it settles.
 * Under gain placement the units it takes beyond the node's idle cores
 * are taken from the node's jobs, each worth at least the node's price
 * (the cheapest unit handed out there in the last epoch): displaced =
 * price × max(0, d − idle). `g` predicts the job's own gain on d cores;
 * NULL for a job without history, which is taken to be at its steepest.
 */
long clu_choose(const clu_state *c, const slaq_sched_config *cfg,
                const clu_job *job, const clu_gain *g)
{
    long best = -1;
    double best_a = 0, best_b = 0;
    size_t lo = 0, hi = c->n;
    if (job->pin >= 0) {
        if ((size_t)job->pin >= c->n)
            return -1;
        lo = (size_t)job->pin;
        hi = lo + 1;
    }
    for (size_t v = lo; v < hi; v++) {
        const clu_node *nd = &c->node[v];
        if (!node_fits(nd, cfg, job->minsh) || node_held(c, nd, cfg))
            continue;
        double cap = node_ml_cores(nd, cfg);
        double d = cap * job->weight / (nd->weight + job->weight);
        if (d > job->max_cores)
            d = job->max_cores;
        /* a: compared first (larger wins); b: then (larger wins) */
        double a = d, b = 0;
        if (cfg->placement == SLAQ_PLACE_GAIN) {
            double take = d - (nd->free > 0 ? nd->free : 0);
            double displaced = take > 0 ? nd->price * take : 0;
            if (g) {
                a = g->gain(g->arg, d) - displaced;
            } else {
                b = -displaced;
            }
        }
        if (best < 0 || a > best_a * (1 + 1e-12) + 1e-300 ||
            (fabs(a - best_a) <= fabs(best_a) * 1e-12 && b > best_b)) {
            best = (long)v;
            best_a = a;
            best_b = b;
        }
    }
    return best;
}

void clu_attach(clu_state *c, size_t v, const clu_job *job)
{
    clu_node *nd = &c->node[v];
    nd->jobs++;
    nd->weight += job->weight;
    nd->minsum += job->minsh;
    /* its settling share comes out of the idle cores first */
    double cap = nd->cores;
    double d = cap * job->weight / nd->weight;
    if (d > job->max_cores)
        d = job->max_cores;
    nd->free = nd->free > d ? nd->free - d : 0;
}

void clu_detach(clu_state *c, size_t v, const clu_job *job, double alloc)
{
    clu_node *nd = &c->node[v];
    nd->jobs--;
    nd->weight -= job->weight;
    nd->minsum -= job->minsh;
    /* Its cores leave the node's total now, not at the next epoch: a
     * scheduler with no jobs left runs no epoch, and the node would show
     * the cores of a job that is gone. */
    nd->alloc = nd->alloc > alloc ? nd->alloc - alloc : 0;
    if (nd->jobs == 0) {
        /* no rounding left behind */
        nd->weight = 0;
        nd->minsum = 0;
        nd->alloc = 0;
    }
    nd->free += alloc;
    if (nd->free > nd->cores)
        nd->free = nd->cores;
}

int clu_pend_push(clu_state *c, slaq_job *j)
{
    if (clu_pend_reserve(c, c->npend + 1) != SLAQ_OK)
        return SLAQ_ENOMEM;
    c->pend[c->npend++] = j;
    return SLAQ_OK;
}

int clu_pend_reserve(clu_state *c, size_t n)
{
    if (n <= c->pcap)
        return SLAQ_OK;
    size_t cap = grow_cap(c->pcap, n, 16);
    if (!cap || GROW_ARRAY(c->pend, cap))
        return SLAQ_ENOMEM;
    c->pcap = cap;
    return SLAQ_OK;
}

void clu_pend_remove(clu_state *c, const slaq_job *j)
{
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i] == j) {
            memmove(c->pend + i, c->pend + i + 1,
                    (c->npend - i - 1) * sizeof *c->pend);
            c->npend--;
            return;
        }
}
