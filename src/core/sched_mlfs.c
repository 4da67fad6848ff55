/*
 * sched_mlfs.c — MLFS's cluster in a slaq_sched (slaq_sched_set_mlfs,
 * slaq/deadline.h): the epoch of the deadline setting, where nodes have
 * memory, jobs wait in the policy's order and move between nodes, and
 * MLF-C stops jobs before anything is placed.
 *
 * The epoch makes MLFS's decisions in one place, each by the core's own
 * function: the stops (slaq_mlfs_overloaded, slaq_mlfc_decide), the keys
 * (slaq_policy_keys), the order of the waiting jobs (slaq_key_order),
 * their placement (slaq_mlfs_host, slaq_node_most_free), the moves
 * (slaq_mlfs_plan) and the cores (slaq_allocate_nodes). The driver
 * observes its jobs before the epoch (slaq_job_observe) and applies what
 * the epoch decided: it stops the jobs with a verdict, stalls the jobs
 * that moved and runs the others at their cores.
 *
 * The nodes' use (cores and memory asked) is kept as a running sum, as
 * jobs are placed, moved, stopped and removed, in the order that happens:
 * the thresholds of placement and overload compare against it, and a sum
 * made afresh in another order could round to the other side of one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "sched_int.h"

struct sched_mlfs {
    slaq_mlfs_config cfg;
    slaq_alloc_ws *ws;      /* the keys' and the division's, with cfg.prio */
    slaq_mlfs_stats stats;
    /* Per node (nn of them): its use, as the moves start, its cores. */
    size_t nn;
    slaq_node_use *nodes, *before;
    double *cap;
    /* Per job, room for cap_jobs: the epoch's active jobs (in order of
     * arrival) and their views, keys, order; the jobs given cores (pl:
     * their place in act) with their views, nodes and cores; the jobs
     * the moves see, their seconds left and who they are. */
    size_t cap_jobs;
    slaq_job **act;
    size_t nact;            /* active at the last epoch (m->key's) */
    slaq_pjob *pj, *ppj;
    double *key, *alloc, *left;
    size_t *order, *pl, *node_of, *scratch;
    slaq_move_job *mj;
    slaq_move *moves;
    slaq_job **mj_of;
};

void slaq_mlfs_config_init(slaq_mlfs_config *c)
{
    memset(c, 0, sizeof *c);
    c->node_mem = 32 * 6.0;
    c->moves = 1;
    c->control = 1;
    c->optstop_eps = SLAQ_MLFS_OPTSTOP_EPS;
    c->h_r = 0.9;
    c->p_s = 0.1;
    c->h_s = 0.9;
    c->move_fixed_s = 30;
    c->move_gbps = 1;
    c->move_hold_s = 600;
    slaq_prio_params_init(&c->prio);
}

void sched_mlfs_free(struct sched_mlfs *m)
{
    if (!m)
        return;
    slaq_alloc_ws_free(m->ws);
    free(m->nodes);
    free(m->before);
    free(m->cap);
    free(m->act);
    free(m->pj);
    free(m->ppj);
    free(m->key);
    free(m->alloc);
    free(m->left);
    free(m->order);
    free(m->pl);
    free(m->node_of);
    free(m->scratch);
    free(m->mj);
    free(m->moves);
    free(m->mj_of);
    free(m);
}

int sched_mlfs_reserve(slaq_sched *s, size_t n)
{
    struct sched_mlfs *m = s->mlfs;
    if (n <= m->cap_jobs)
        return SLAQ_OK;
    size_t cap = grow_cap(m->cap_jobs, n, 16);
    if (!cap || GROW_ARRAY(m->act, cap) || GROW_ARRAY(m->pj, cap) ||
        GROW_ARRAY(m->ppj, cap) || GROW_ARRAY(m->key, cap) ||
        GROW_ARRAY(m->alloc, cap) || GROW_ARRAY(m->left, cap) ||
        GROW_ARRAY(m->order, cap) || GROW_ARRAY(m->pl, cap) ||
        GROW_ARRAY(m->node_of, cap) || GROW_ARRAY(m->scratch, 3 * cap) ||
        GROW_ARRAY(m->mj, cap) || GROW_ARRAY(m->moves, cap) ||
        GROW_ARRAY(m->mj_of, cap))
        return SLAQ_ENOMEM;
    m->cap_jobs = cap;
    return SLAQ_OK;
}

/* The nodes as the scheduler has them now: a node added since is empty
 * with cfg.node_mem of memory; every node's cores are its current ones. */
static int mlfs_nodes(slaq_sched *s)
{
    struct sched_mlfs *m = s->mlfs;
    size_t nn = s->clu.n;
    if (nn > m->nn) {
        if (GROW_ARRAY(m->nodes, nn) || GROW_ARRAY(m->before, nn) ||
            GROW_ARRAY(m->cap, nn))
            return SLAQ_ENOMEM;
        for (size_t v = m->nn; v < nn; v++)
            m->nodes[v] = (slaq_node_use){0, m->cfg.node_mem, 0, 0};
        m->nn = nn;
    }
    for (size_t v = 0; v < nn; v++) {
        m->nodes[v].cores = s->clu.node[v].cores;
        m->cap[v] = s->clu.node[v].cores;
    }
    return SLAQ_OK;
}

int slaq_sched_set_mlfs(slaq_sched *s, const slaq_mlfs_config *c)
{
    if (s->n > 0 || s->mlfs || !(c->node_mem > 0) || !(c->h_r > 0) ||
        !(c->p_s > 0 && c->p_s <= 1) || !(c->move_gbps > 0) ||
        !(c->move_fixed_s >= 0) || !(c->optstop_eps >= 0))
        return SLAQ_EINVAL;
    struct sched_mlfs *m = calloc(1, sizeof *m);
    if (!m)
        return SLAQ_ENOMEM;
    m->cfg = *c;
    m->ws = slaq_alloc_ws_new();
    if (!m->ws || slaq_alloc_ws_set_prio(m->ws, &c->prio) != SLAQ_OK) {
        int err = m->ws ? SLAQ_EINVAL : SLAQ_ENOMEM;
        sched_mlfs_free(m);
        return err;
    }
    s->mlfs = m;
    if (mlfs_nodes(s) != SLAQ_OK || sched_mlfs_reserve(s, s->cap) != SLAQ_OK) {
        s->mlfs = NULL;
        sched_mlfs_free(m);
        return SLAQ_ENOMEM;
    }
    return SLAQ_OK;
}

/* Job j leaves its node's use (stopped, or removed); once. */
void sched_mlfs_leave(slaq_sched *s, slaq_job *j)
{
    if (j->node < 0 || j->off)
        return;
    slaq_node_use *v = &s->mlfs->nodes[j->node];
    v->use_cores -= j->max_cores;
    v->use_mem -= j->mem;
    j->off = 1;
}

int slaq_job_observe(slaq_job *j, const slaq_job_obs *o)
{
    if (!j->sched->mlfs || !j->truth)
        return SLAQ_EINVAL;
    const double *c = j->truth;
    size_t n = j->truth_len;
    j->obs = *o;
    /* Its true curve from where it is: what the policy divides by. */
    j->qfc = (slaq_forecast){
        .model = SLAQ_MODEL_TABLE, .table = c, .table_len = n,
        .k0 = o->k, .first_loss = c[0], .final_loss = c[n - 1],
        .yscale = 1, .scale = c[0] - c[n - 1],
    };
    double l = slaq_forecast_loss(&j->qfc, o->k);
    j->qfc.loss0 = l;
    if (l < j->prev_loss)
        j->last_drop = j->prev_loss - l;
    j->prev_loss = l;
    /* OptStop's window: the losses after the epochs it had cores. */
    if (j->nrecent == SLAQ_MLFS_OPTSTOP_N) {
        memmove(j->recent, j->recent + 1,
                (SLAQ_MLFS_OPTSTOP_N - 1) * sizeof *j->recent);
        j->nrecent--;
    }
    if (j->alloc > 0)
        j->recent[j->nrecent++] = l;
    return SLAQ_OK;
}

double slaq_job_moved_at(const slaq_job *j) { return j->moved_at; }
double slaq_job_moving_until(const slaq_job *j) { return j->moving_until; }

slaq_mlfs_stats slaq_sched_mlfs_stats(const slaq_sched *s)
{
    slaq_mlfs_stats none = {0, 0, 0, 0};
    return s->mlfs ? s->mlfs->stats : none;
}

/*
 * MLF-C at `now`: the verdict on every job (RUN for the waiting ones);
 * a placed job that the core says to stop (overloaded, its accuracy met;
 * or OptStop's plateau) leaves its node. The others, in order of
 * arrival, into m->act; returns how many.
 */
static size_t mlfs_stops(slaq_sched *s)
{
    struct sched_mlfs *m = s->mlfs;
    const slaq_mlfs_config *c = &m->cfg;
    size_t npend = 0, na = 0;
    for (size_t i = 0; i < s->n; i++) {
        s->jobs[i]->verdict = SLAQ_VERDICT_RUN;
        npend += s->jobs[i]->node < 0;
    }
    int control = c->control && slaq_policy_load_control(s->cfg.policy);
    s->overloaded = control &&
                    slaq_mlfs_overloaded(m->nodes, m->nn, npend, c->h_s);
    for (size_t i = 0; i < s->n; i++) {
        slaq_job *j = s->jobs[i];
        if (control && j->node >= 0) {
            slaq_verdict v = slaq_mlfc_decide(&j->goal, j->qfc.loss0,
                                              s->overloaded, j->truth[0],
                                              j->recent, j->nrecent,
                                              c->optstop_eps);
            if (v != SLAQ_VERDICT_RUN) {
                j->verdict = v;
                sched_mlfs_leave(s, j);
                continue;
            }
        }
        m->act[na++] = j;
    }
    return na;
}

/* What the policy sees of job j at `now`: its true curve from where it
 * is, and what the driver observed. */
static void mlfs_pjob(const slaq_job *j, double now, slaq_pjob *p)
{
    memset(p, 0, sizeof *p);
    p->fc = &j->qfc;
    p->k = j->obs.k;
    p->iters_per_core = j->obs.iters_per_core;
    p->weight = j->weight;
    p->max_cores = j->max_cores;
    p->prev_alloc = j->alloc;
    p->now = now;
    p->arrival = j->arrival;
    p->deadline = j->goal.deadline;
    p->urgency = j->goal.urgency;
    p->attained = j->obs.attained;
    p->waited = j->obs.waited;
    p->remaining_s = j->obs.remaining_s;
    p->iter = j->obs.k;
    p->last_drop = j->last_drop;
    p->total_drop = j->truth[0] - j->qfc.loss0;
}

/* The waiting jobs of the na active ones placed in the order of their
 * keys (m->key): under a policy that moves on MLFS's ideal host, which
 * must stay underloaded, else on the node with the most free memory. A
 * job no node takes waits on. */
static void mlfs_place(slaq_sched *s, size_t na, int moves)
{
    struct sched_mlfs *m = s->mlfs;
    const slaq_mlfs_config *c = &m->cfg;
    slaq_key_order(m->key, na, m->order, NULL);
    for (size_t o = 0; o < na; o++) {
        slaq_job *j = m->act[m->order[o]];
        if (j->node >= 0)
            continue;
        long v = moves ? slaq_mlfs_host(m->nodes, m->nn, j->max_cores,
                                        j->mem, c->h_r, -1, 1)
                       : slaq_node_most_free(m->nodes, m->nn, j->mem);
        if (v < 0)
            continue;
        m->nodes[v].use_cores += j->max_cores;
        m->nodes[v].use_mem += j->mem;
        clu_pend_remove(&s->clu, j);
        clu_job cj = sched_job_clu(s, j);
        clu_attach(&s->clu, (size_t)v, &cj);
        j->node = v;
    }
}

/* MLFS's moves at `now` over the placed jobs of the na active ones, as
 * slaq_mlfs_plan decides them (weighed at the mean stop of the moves so
 * far with cfg.weigh_moves); each move made is carried out here and
 * stops its job for its cost; the moves refused are counted once per
 * stretch. */
static void mlfs_moves(slaq_sched *s, double now, size_t na)
{
    struct sched_mlfs *m = s->mlfs;
    const slaq_mlfs_config *c = &m->cfg;
    size_t n = 0;
    for (size_t a = 0; a < na; a++) {
        slaq_job *j = m->act[a];
        if (j->node < 0)
            continue;
        m->mj[n] = (slaq_move_job){
            (size_t)j->node, j->max_cores, j->mem, m->key[a],
            now - j->moved_at >= c->move_hold_s && j->moving_until <= now};
        m->left[n] = j->obs.remaining_s;
        m->mj_of[n++] = j;
    }
    slaq_mlfs_stats *st = &m->stats;
    double mean = st->moves ? st->move_s / (double)st->moves : NAN;
    long k = slaq_mlfs_plan(m->nodes, m->before, m->nn, m->mj, m->left, n,
                            c->h_r, c->p_s, mean, c->weigh_moves, m->moves,
                            n, m->scratch);
    /* From here mj[x].movable says whether job x's move was refused. */
    for (size_t x = 0; x < n; x++)
        m->mj[x].movable = 0;
    for (long q = 0; q < k; q++) {
        const slaq_move *mv = &m->moves[q];
        if (!mv->made) {
            m->mj[mv->job].movable = 1;
            continue;
        }
        slaq_job *j = m->mj_of[mv->job];
        double cost = c->move_fixed_s + j->mem / c->move_gbps;
        slaq_sched_move(s, j, mv->to);
        j->moved_at = now;
        j->moving_until = now + cost;
        st->moves++;
        st->move_s += cost;
        st->move_gb += j->mem;
    }
    for (size_t x = 0; x < n; x++) {
        slaq_job *j = m->mj_of[x];
        if (m->mj[x].movable && !j->move_refused)
            st->moves_skipped++;
        j->move_refused = m->mj[x].movable;
    }
}

/* The policy's cores for the epoch from `now` over the placed jobs of
 * the na active ones that are not moving to its end; every other job
 * gets none. */
static int mlfs_cores(slaq_sched *s, double now, size_t na)
{
    struct sched_mlfs *m = s->mlfs;
    size_t np = 0;
    for (size_t a = 0; a < na; a++) {
        slaq_job *j = m->act[a];
        if (j->node < 0 || j->moving_until >= now + s->cfg.epoch_s)
            continue;
        m->ppj[np] = m->pj[a];
        m->node_of[np] = (size_t)j->node;
        m->pl[np++] = a;
    }
    int err = slaq_allocate_nodes(s->cfg.policy, m->ppj, np, m->node_of,
                                  m->cap, m->nn, s->cfg.unit, m->ws,
                                  m->alloc);
    if (err)
        return err;
    for (size_t i = 0; i < s->n; i++)
        s->jobs[i]->alloc = 0;
    for (size_t v = 0; v < m->nn; v++)
        s->clu.node[v].alloc = 0;
    for (size_t p = 0; p < np; p++) {
        slaq_job *j = m->act[m->pl[p]];
        j->alloc = m->alloc[p];
        j->alloc_t = now;
        s->clu.node[j->node].alloc += j->alloc;
    }
    return SLAQ_OK;
}

int sched_mlfs_epoch(slaq_sched *s, double now)
{
    struct sched_mlfs *m = s->mlfs;
    const slaq_mlfs_config *c = &m->cfg;
    m->nact = 0;
    if (mlfs_nodes(s) != SLAQ_OK)
        return SLAQ_ENOMEM;
    size_t na = mlfs_stops(s);
    for (size_t a = 0; a < na; a++)
        mlfs_pjob(m->act[a], now, &m->pj[a]);
    /* Every job's view for slaq_sched_terms and slaq_sched_remaining. */
    for (size_t i = 0; i < s->n; i++)
        mlfs_pjob(s->jobs[i], now, &s->pjobs[i]);
    int err = slaq_policy_keys(s->cfg.policy, m->pj, na, m->ws, m->key);
    if (err)
        return err;
    if (c->keys)
        c->keys(c->keys_ctx, now, m->pj, na, m->key);
    m->nact = na;
    int moves = c->moves && slaq_policy_moves(s->cfg.policy);
    mlfs_place(s, na, moves);
    if (moves)
        mlfs_moves(s, now, na);
    return mlfs_cores(s, now, na);
}

void sched_mlfs_keys(const slaq_sched *s, double *key)
{
    const struct sched_mlfs *m = s->mlfs;
    for (size_t i = 0; i < s->n; i++)
        key[i] = NAN;
    for (size_t a = 0; a < m->nact; a++)
        key[m->act[a]->index] = m->key[a];
}
