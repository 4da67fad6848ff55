/*
 * mlfs.c — MLFS's placement, moves and load control (CoNEXT'20, §3.3.2,
 * §3.3.3, §3.5): the ideal virtual host, the ideal virtual task, the
 * overload tests and MLF-C's stop. include/slaq/deadline.h states each
 * contract and where slaq reads the paper one way of several.
 *
 * Nodes have two resources here, cores and memory; utilisations are
 * demand over capacity. Everything is O(nodes × jobs) at worst per call,
 * called once per epoch by a driver; no allocation (the caller gives the
 * scratch).
 */
#include <math.h>

#include "heap.h"
#include "slaq/deadline.h"
#include "internal.h"

static double ucores(const slaq_node_use *v) { return v->use_cores / v->cores; }
static double umem(const slaq_node_use *v) { return v->use_mem / v->mem; }

int slaq_node_overloaded(const slaq_node_use *v, double h_r)
{
    return ucores(v) > h_r || umem(v) > h_r;
}

long slaq_node_most_free(const slaq_node_use *nodes, size_t nn, double mem)
{
    long best = -1;
    double bestf = -1;
    for (size_t v = 0; v < nn; v++) {
        double f = nodes[v].mem - nodes[v].use_mem;
        if (f >= mem && f > bestf) {
            bestf = f;
            best = (long)v;
        }
    }
    return best;
}

static int host_ok(const slaq_node_use *v, double nc, double nm, double h_r,
                   int strict)
{
    if (!(v->cores > 0) || !(v->mem > 0))
        return 0;
    /* An empty node takes any job that fits in it at all: a job larger
     * than h_r of a node would otherwise never run. */
    int empty = !(v->use_cores > 0) && !(v->use_mem > 0);
    if (empty)
        return nm <= v->mem;
    if ((v->use_mem + nm) / v->mem > h_r)
        return 0;
    if (strict && (v->use_cores + nc) / v->cores > h_r)
        return 0;
    return 1;
}

long slaq_mlfs_host(const slaq_node_use *nodes, size_t nn, double need_cores,
                    double need_mem, double h_r, long except, int strict)
{
    double minc = INFINITY, minm = INFINITY;
    for (size_t v = 0; v < nn; v++) {
        if ((long)v == except ||
            !host_ok(&nodes[v], need_cores, need_mem, h_r, strict))
            continue;
        minc = fmin(minc, ucores(&nodes[v]));
        minm = fmin(minm, umem(&nodes[v]));
    }
    long best = -1;
    double bestd = INFINITY;
    for (size_t v = 0; v < nn; v++) {
        if ((long)v == except ||
            !host_ok(&nodes[v], need_cores, need_mem, h_r, strict))
            continue;
        double dc = ucores(&nodes[v]) - minc, dm = umem(&nodes[v]) - minm;
        double d = sqrt(dc * dc + dm * dm);
        if (d < bestd) {
            bestd = d;
            best = (long)v;
        }
    }
    return best;
}

/* The order of the candidates to move (heap.h), ctx the jobs: a heap
 * sort by prio_later leaves them by ascending priority, ties by index,
 * without allocating. */
static int prio_later(const void *ctx, size_t a, size_t b)
{
    const slaq_move_job *jobs = ctx;
    if (jobs[a].prio != jobs[b].prio)
        return jobs[a].prio > jobs[b].prio;
    return a > b;
}

long slaq_mlfs_moves(slaq_node_use *nodes, size_t nn,
                     const slaq_move_job *jobs, size_t n, double h_r,
                     double p_s, size_t *move_job, size_t *move_to,
                     size_t max, size_t *scratch)
{
    if (!(h_r > 0) || !(p_s > 0 && p_s <= 1))
        return SLAQ_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].node >= nn)
            return SLAQ_EINVAL;
    long moves = 0;
    for (size_t v = 0; v < nn && (size_t)moves < max; v++) {
        slaq_node_use *src = &nodes[v];
        /* Its movable jobs, lowest priority first. Jobs moved already
         * this call are on another node in nodes[] but not in jobs[]:
         * skip them by their planned target. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            int planned = 0;
            for (long k = 0; k < moves; k++)
                planned |= move_job[k] == i;
            if (jobs[i].node == v && jobs[i].movable && !planned)
                scratch[m++] = i;
        }
        heap_sort(scratch, m, prio_later, jobs);
        while (m > 0 && slaq_node_overloaded(src, h_r) &&
               (size_t)moves < max) {
            size_t c = (size_t)ceil(p_s * (double)m);
            if (c < 1)
                c = 1;
            int hot_c = ucores(src) > h_r, hot_m = umem(src) > h_r;
            /* The ideal virtual task: the candidates' largest use of an
             * overloaded resource, their smallest of the others. */
            double ic = hot_c ? 0 : INFINITY, im = hot_m ? 0 : INFINITY;
            for (size_t r = 0; r < c; r++) {
                const slaq_move_job *j = &jobs[scratch[r]];
                ic = hot_c ? fmax(ic, j->cores / src->cores)
                           : fmin(ic, j->cores / src->cores);
                im = hot_m ? fmax(im, j->mem / src->mem)
                           : fmin(im, j->mem / src->mem);
            }
            /* Candidates by distance to it; the nearest that some node
             * can take moves. */
            long pick = -1, to = -1, tried_r = -1;
            double tried = -1;
            for (size_t attempt = 0; attempt < c && pick < 0; attempt++) {
                /* The next candidate after (tried, tried_r) in the order
                 * of (distance, rank). */
                long r_best = -1;
                double d_best = INFINITY;
                for (size_t r = 0; r < c; r++) {
                    const slaq_move_job *j = &jobs[scratch[r]];
                    double dc = j->cores / src->cores - ic;
                    double dm = j->mem / src->mem - im;
                    double d = sqrt(dc * dc + dm * dm);
                    int after = d > tried || (d == tried && (long)r > tried_r);
                    if (after && d < d_best) {
                        d_best = d;
                        r_best = (long)r;
                    }
                }
                if (r_best < 0)
                    break;
                tried = d_best;
                tried_r = r_best;
                const slaq_move_job *j = &jobs[scratch[r_best]];
                long host = slaq_mlfs_host(nodes, nn, j->cores, j->mem, h_r,
                                           (long)v, 1);
                if (host >= 0) {
                    pick = r_best;
                    to = host;
                }
            }
            if (pick < 0)
                break; /* nobody can take any candidate: it stays */
            size_t i = scratch[pick];
            move_job[moves] = i;
            move_to[moves] = (size_t)to;
            moves++;
            src->use_cores -= jobs[i].cores;
            src->use_mem -= jobs[i].mem;
            nodes[to].use_cores += jobs[i].cores;
            nodes[to].use_mem += jobs[i].mem;
            for (size_t r = (size_t)pick; r + 1 < m; r++)
                scratch[r] = scratch[r + 1];
            m--;
        }
    }
    return moves;
}

/* The share of what it asks that a job gets on a node asked for demand
 * of its cores: all of it until the node is full, then cores / demand. */
static double node_share(double cores, double demand)
{
    return demand > cores ? cores / demand : 1;
}

double slaq_mlfs_move_gain(double remaining_s, double from_cores,
                           double from_demand, double to_cores,
                           double to_demand, double cost_s)
{
    if (!(from_cores > 0) || !(to_cores > 0) || !(from_demand >= 0) ||
        !(to_demand >= 0) || !(remaining_s >= 0) || cost_s < 0)
        return NAN;
    double cost = isnan(cost_s) ? 0 : cost_s;
    double s_from = node_share(from_cores, from_demand);
    double s_to = node_share(to_cores, to_demand);
    if (isinf(remaining_s))
        return s_to > s_from ? INFINITY : -cost;
    return remaining_s / s_from - (cost + remaining_s / s_to);
}

double mlfs_degree(const slaq_node_use *v)
{
    double c = ucores(v), m = umem(v);
    return sqrt((c * c + m * m) / 2);
}

int slaq_mlfs_overloaded(const slaq_node_use *nodes, size_t nn,
                         size_t pending, double h_s)
{
    if (pending > 0)
        return 1;
    if (nn == 0)
        return 0;
    double sum = 0;
    for (size_t v = 0; v < nn; v++)
        sum += mlfs_degree(&nodes[v]);
    return sum / (double)nn > h_s;
}

int slaq_mlfs_stop(const slaq_goal *goal, double value, int overloaded,
                   int optstop, double first, const double *recent, size_t n,
                   double optstop_eps)
{
    if (overloaded && !isnan(goal->accuracy) && slaq_goal_met(goal, value))
        return 1;
    if (!optstop || n < 2)
        return 0;
    double span = fabs(recent[n - 1] - first);
    if (!(span > 0))
        return 0;
    double lo = recent[0], hi = recent[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, recent[i]);
        hi = fmax(hi, recent[i]);
    }
    return hi - lo < optstop_eps * span;
}

slaq_verdict slaq_mlfc_decide(const slaq_goal *goal, double metric,
                                   int overloaded, double first,
                                   const double *recent, size_t n,
                                   double optstop_eps)
{
    if (goal->stop == SLAQ_STOP_ITERS)
        return SLAQ_VERDICT_RUN;
    if (overloaded &&
        slaq_mlfs_stop(goal, metric, 1, 0, NAN, NULL, 0, optstop_eps))
        return SLAQ_VERDICT_ACCURACY;
    if (goal->stop == SLAQ_STOP_OPTSTOP &&
        slaq_mlfs_stop(goal, NAN, 0, 1, first, recent, n, optstop_eps))
        return SLAQ_VERDICT_OPTSTOP;
    return SLAQ_VERDICT_RUN;
}

long slaq_mlfs_plan(slaq_node_use *nodes, slaq_node_use *before, size_t nn,
                    const slaq_move_job *jobs, const double *remaining_s,
                    size_t n, double h_r, double p_s, double cost_s,
                    int weigh, slaq_move *moves, size_t max,
                    size_t *scratch)
{
    size_t *mjob = scratch + n, *mto = mjob + max;
    for (size_t v = 0; v < nn; v++)
        before[v] = nodes[v];
    long k = slaq_mlfs_moves(nodes, nn, jobs, n, h_r, p_s, mjob, mto, max,
                             scratch);
    for (long q = 0; q < k; q++) {
        const slaq_move_job *j = &jobs[mjob[q]];
        const slaq_node_use *a = &before[j->node], *b = &before[mto[q]];
        double gain = slaq_mlfs_move_gain(remaining_s[mjob[q]], a->cores,
                                          a->use_cores, b->cores,
                                          b->use_cores + j->cores, cost_s);
        int made = !(weigh && gain < 0);
        moves[q] = (slaq_move){mjob[q], mto[q], gain, made};
        if (!made) { /* it stays: its demand goes back */
            nodes[j->node].use_cores += j->cores;
            nodes[j->node].use_mem += j->mem;
            nodes[mto[q]].use_cores -= j->cores;
            nodes[mto[q]].use_mem -= j->mem;
        }
    }
    return k;
}

/* The order of slaq_key_order (heap.h), ctx the keys: a heap sort by
 * key_after leaves the largest key first, a NaN last, ties to the lower
 * index. */
static int key_after(const void *ctx, size_t a, size_t b)
{
    const double *key = ctx;
    double ka = key[a] == key[a] ? key[a] : -INFINITY;
    double kb = key[b] == key[b] ? key[b] : -INFINITY;
    if (ka != kb)
        return ka < kb;
    return a > b;
}

void slaq_key_order(const double *key, size_t n, size_t *order,
                    size_t *rank)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    heap_sort(order, n, key_after, key);
    if (rank)
        for (size_t r = 0; r < n; r++)
            rank[order[r]] = r + 1;
}
