/*
 * tasksim.c — the task-level simulator (sim/tasksim.h).
 *
 * State: per node its running tasks, its queue and, for the central
 * schedulers, what it last reported (free slots, queue length, estimated
 * wait, when); per job the next task not yet placed and the tasks not yet
 * finished; one binary heap of events. The policies themselves are
 * libslaq's: the bound (slaq_queue_bound_length, slaq_queue_admits), the
 * wait (slaq_queue_wait), the placement (slaq_queue_place) and the order
 * of node and central queues (slaq_qorder_first); this file only moves
 * tasks.
 *
 * Heartbeats are lazy: a node reports at its next heartbeat only after
 * something changed on it (a task started or finished), and a report
 * that is not refreshed ages (its wait counts down with time), which is
 * what a fresh report would say when the estimates hold. So a run costs
 * events per task, not per node and heartbeat, and the Google subset's
 * 312,558 tasks replay in seconds. A placement scans every node
 * (slaq_queue_place is linear): O(nodes) per placed task.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "core/util.h"
#include "io/stats.h"
#include "sim/tasksim.h"
#include "slaq/slaq.h"

static const char *const sched_names[TSIM_NSCHED] = {
    [TSIM_YARN] = "yarn", [TSIM_SPARROW] = "sparrow", [TSIM_FIFO] = "fifo",
    [TSIM_YAQC] = "yaq-c", [TSIM_YAQD] = "yaq-d",
};

int tsim_sched_parse(const char *name, tsim_sched *out)
{
    for (int i = 0; name && i < TSIM_NSCHED; i++)
        if (!strcmp(name, sched_names[i])) {
            *out = (tsim_sched)i;
            return 0;
        }
    return -1;
}

const char *tsim_sched_name(tsim_sched s)
{
    return (unsigned)s < TSIM_NSCHED ? sched_names[s] : "?";
}

void tsim_config_init(tsim_config *c)
{
    slaq_sched_config d;
    slaq_sched_config_init(&d);
    memset(c, 0, sizeof *c);
    c->sched = TSIM_YAQC;
    c->nodes = 100;
    c->slots = 10;
    c->heartbeat = 3;
    c->probe_ratio = 2;
    c->bound = d.queue_bound;
    c->util = d.queue_util;
    c->order = d.queue_order;
    c->starvation = d.starvation;
    c->load = d.queue_load;
    c->r_fmin = 0;
    c->short_cutoff = INFINITY;
    c->seed = 1;
}

double tsim_mean_estimate(const tt_workload *w)
{
    double s = 0;
    for (size_t j = 0; j < w->njobs; j++)
        s += w->est[j] * (double)(w->first[j + 1] - w->first[j]);
    return w->ntasks ? s / (double)w->ntasks : 0;
}

void tsim_window(const tt_workload *w, double *from, double *to)
{
    size_t k = (size_t)(0.01 * (double)(w->njobs - 1));
    *from = w->arrival[k] - w->arrival[0];
    *to = w->arrival[w->njobs - 1] - w->arrival[0];
}

double tsim_offered(const tt_workload *w)
{
    double a, b, work = 0;
    tsim_window(w, &a, &b);
    if (!(b > a))
        return NAN;
    for (size_t j = 0; j < w->njobs; j++)
        if (w->arrival[j] - w->arrival[0] >= a)
            for (size_t t = w->first[j]; t < w->first[j + 1]; t++)
                work += w->dur[t];
    return work / (b - a);
}

void tsim_result_free(tsim_result *r)
{
    free(r->jct);
    r->jct = NULL;
}

/* ----------------------------------------------------------- engine */

enum { EV_FINISH, EV_ARRIVE, EV_HEARTBEAT, EV_RETRY };

typedef struct event {
    double t;
    uint64_t seq;
    int type;
    size_t a, b;          /* FINISH: task, node; others: job or node */
} event;

typedef struct node {
    unsigned running;
    size_t *run;          /* running tasks [slots] */
    size_t *q;            /* queued tasks */
    size_t qn, qcap;
    /* the last report (yarn, yaq-c) */
    unsigned rep_free;
    size_t rep_qlen;
    double rep_wait, rep_time;
    double phase;         /* heartbeats at phase + k tau */
    int hb_pending;
} node;

typedef struct tsim {
    const tt_workload *w;
    const tsim_config *c;
    size_t qlen;          /* the node queues' bound (length) */
    int central;          /* yarn, yaq-c: placement by reports */
    slaq_qload load;
    double now, t0;
    uint64_t rng, seq;
    node *nodes;
    /* events: each in a slot of ev, the slots in use in a heap (heap.h)
     * in the order of (t, seq), the free ones in spare */
    event *ev;
    size_t *heap, *spare;
    size_t nev, nspare, evcap;
    /* tasks */
    double *start, *disp;
    size_t *job;          /* each task's job */
    /* jobs */
    size_t *next;         /* next task to place */
    double *backoff;      /* yaq-d: seconds to its job's next sampling */
    size_t *unfinished;
    double *done;
    /* central queue: jobs with tasks to place, in arrival order */
    size_t *pend;
    size_t npend;
    /* scratch */
    slaq_qnode *view;
    size_t *sample;
    size_t *perm;
    slaq_qitem *items;
    size_t icap;
    double *wrun, *wq, *wscratch;
    size_t *wslot;
    size_t wqcap;
} tsim;

static double rnd(tsim *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The events' order (heap.h), ctx the slots: the earliest first, ties
 * in the order they were pushed. */
static int ev_before(const void *ctx, size_t a, size_t b)
{
    const event *x = (const event *)ctx + a, *y = (const event *)ctx + b;
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int ev_push(tsim *s, double t, int type, size_t a, size_t b)
{
    size_t slot;
    if (s->nspare) {
        slot = s->spare[--s->nspare];
    } else {
        if (s->nev == s->evcap) {
            size_t c = grow_cap(s->evcap, s->nev + 1, 1024);
            if (!c || GROW_ARRAY(s->ev, c) || GROW_ARRAY(s->heap, c) ||
                GROW_ARRAY(s->spare, c))
                return -1;
            s->evcap = c;
        }
        slot = s->nev; /* no spare slot: slots 0 .. nev-1 are all in use */
    }
    s->ev[slot] = (event){t, s->seq++, type, a, b};
    heap_push(s->heap, s->nev++, slot, ev_before, s->ev);
    return 0;
}

static event ev_pop(tsim *s)
{
    size_t slot = heap_pop(s->heap, s->nev, ev_before, s->ev);
    s->nev--;
    s->spare[s->nspare++] = slot;
    return s->ev[slot];
}

static size_t job_of(const tsim *s, size_t task)
{
    return s->job[task];
}

/* A waiting item for the order: a task at a node (enqueued when it was
 * dispatched) or, in the central queue, a job (enqueued on arrival). */
static slaq_qitem item_of(const tsim *s, size_t job, double enqueued)
{
    double est = s->w->est[job];
    return (slaq_qitem){
        .job_arrival = s->w->arrival[job] - s->t0,
        .enqueued = enqueued,
        .dur_est = est,
        .job_work = est * (double)s->unfinished[job],
        .job_tasks = (double)s->unfinished[job],
    };
}

static int heartbeat_soon(tsim *s, size_t v)
{
    node *n = &s->nodes[v];
    if (!s->central || n->hb_pending)
        return 0;
    double tau = s->c->heartbeat;
    double k = floor((s->now - n->phase) / tau) + 1;
    n->hb_pending = 1;
    return ev_push(s, n->phase + k * tau, EV_HEARTBEAT, v, 0);
}

static int start_task(tsim *s, size_t task, size_t v)
{
    node *n = &s->nodes[v];
    n->run[n->running++] = task;
    s->start[task] = s->now;
    if (ev_push(s, s->now + s->w->dur[task], EV_FINISH, task, v))
        return -1;
    return heartbeat_soon(s, v);
}

/* Puts task on node v: it starts if a slot is free, else queues. */
static int dispatch(tsim *s, size_t task, size_t v)
{
    node *n = &s->nodes[v];
    s->disp[task] = s->now;
    if (n->running < s->c->slots)
        return start_task(s, task, v);
    if (n->qn == n->qcap) {
        size_t c = grow_cap(n->qcap, n->qn + 1, 8);
        if (!c || GROW_ARRAY(n->q, c))
            return -1;
        n->qcap = c;
    }
    n->q[n->qn++] = task;
    return 0;
}

static int items_reserve(tsim *s, size_t n)
{
    if (n <= s->icap)
        return 0;
    size_t c = grow_cap(s->icap, n, 64);
    if (!c || GROW_ARRAY(s->items, c))
        return -1;
    s->icap = c;
    return 0;
}

/* The node's queued task that goes next, removed from its queue. */
static long take_queued(tsim *s, size_t v)
{
    node *n = &s->nodes[v];
    if (!n->qn)
        return -1;
    if (items_reserve(s, n->qn))
        return -2;
    for (size_t i = 0; i < n->qn; i++)
        s->items[i] = item_of(s, job_of(s, n->q[i]), s->disp[n->q[i]]);
    long i = slaq_qorder_first(s->c->order, s->items, n->qn, s->now,
                               &s->c->starvation);
    size_t task = n->q[i];
    n->q[i] = n->q[--n->qn];
    return (long)task;
}

/* The central queue's job that goes next (its index in pend), dropping
 * the jobs whose tasks are all placed; -1 if none. */
static long central_first(tsim *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->npend; i++) {
        size_t j = s->pend[i];
        if (s->next[j] < s->w->first[j + 1])
            s->pend[k++] = j;
    }
    s->npend = k;
    if (!k)
        return -1;
    if (s->c->order == SLAQ_QORDER_FIFO || s->c->order == SLAQ_QORDER_EJF)
        return 0;
    if (items_reserve(s, k))
        return -2;
    for (size_t i = 0; i < k; i++)
        s->items[i] = item_of(s, s->pend[i],
                              s->w->arrival[s->pend[i]] - s->t0);
    return slaq_qorder_first(s->c->order, s->items, k, s->now,
                             &s->c->starvation);
}

/* The next task of the central queue's first job, or -1. */
static long central_take(tsim *s)
{
    size_t i;
    /* fast path for FIFO: the head, once it has tasks left */
    if (s->c->order == SLAQ_QORDER_FIFO || s->c->order == SLAQ_QORDER_EJF) {
        while (s->npend && s->next[s->pend[0]] >= s->w->first[s->pend[0] + 1])
            memmove(s->pend, s->pend + 1, --s->npend * sizeof *s->pend);
        if (!s->npend)
            return -1;
        i = 0;
    } else {
        long f = central_first(s);
        if (f < 0)
            return f;
        i = (size_t)f;
    }
    return (long)s->next[s->pend[i]]++;
}

/* Algorithm 2 on node v's current state. */
static double node_wait(tsim *s, size_t v)
{
    node *n = &s->nodes[v];
    if (n->qn > s->wqcap) {
        size_t c = grow_cap(s->wqcap, n->qn, 64);
        if (!c || GROW_ARRAY(s->wq, c))
            return INFINITY;
        s->wqcap = c;
    }
    for (unsigned i = 0; i < n->running; i++) {
        size_t t = n->run[i];
        s->wrun[i] = s->w->est[job_of(s, t)] - (s->now - s->start[t]);
    }
    for (size_t i = 0; i < n->qn; i++)
        s->wq[i] = s->w->est[job_of(s, n->q[i])];
    return slaq_queue_wait(s->wrun, n->running, s->wq, n->qn,
                           s->c->slots - n->running, 0, s->wscratch,
                           s->wslot);
}

/* A random index among view[0..n) that Algorithm 1 would consider: free
 * slots while above R_fmin, else admitting. -1 if none. */
static long place_random(tsim *s, size_t n, size_t free_total,
                         size_t slots_total)
{
    int free_phase = free_total &&
                     (double)free_total / (double)slots_total > s->c->r_fmin;
    long pick = -1;
    double seen = 0;
    for (size_t i = 0; i < n; i++) {
        int ok = free_phase ? s->view[i].free_slots > 0 : s->view[i].admits;
        if (ok && rnd(s) * ++seen < 1)
            pick = (long)i;
    }
    return pick;
}

/* The central schedulers (yarn, yaq-c) and fifo: place what the central
 * queue holds, while a node takes it. */
static int central_place(tsim *s)
{
    const tsim_config *c = s->c;
    size_t N = c->nodes;
    size_t slots_total = N * c->slots;
    for (;;) {
        if (!s->npend)
            return 0;
        size_t free_total = 0;
        int any = 0;
        for (size_t v = 0; v < N; v++) {
            node *n = &s->nodes[v];
            slaq_qnode *q = &s->view[v];
            if (c->sched == TSIM_FIFO) {  /* the real state, no queues */
                q->free_slots = c->slots - n->running;
                q->admits = 0;
            } else {
                double age = s->now - n->rep_time;
                q->free_slots = n->rep_free;
                q->qlen = n->rep_qlen;
                q->wait_s = n->rep_wait > age ? n->rep_wait - age : 0;
                q->admits = slaq_queue_admits(&c->bound, s->qlen, q->qlen,
                                              q->wait_s);
            }
            q->affinity = 1;
            free_total += q->free_slots;
            any |= q->free_slots > 0 || q->admits;
        }
        if (!any)
            return 0;
        long v = c->random_place
                     ? place_random(s, N, free_total, slots_total)
                     : slaq_queue_place(s->view, N, free_total, slots_total,
                                        c->r_fmin, s->load);
        if (v < 0)
            return 0;
        long task = central_take(s);
        if (task == -2)
            return -1;
        if (task < 0)
            return 0;
        node *n = &s->nodes[v];
        if (n->rep_free) {
            n->rep_free--;
        } else {
            /* until its next report: one more queued, and its wait
             * longer by the task's share of the node's slots */
            n->rep_qlen++;
            n->rep_wait += s->w->est[job_of(s, (size_t)task)] / c->slots;
        }
        if (dispatch(s, (size_t)task, (size_t)v))
            return -1;
    }
}

/* sparrow and yaq-d: job j samples nodes and places what it can. */
static int sample_place(tsim *s, size_t j)
{
    const tsim_config *c = s->c;
    size_t N = c->nodes;
    size_t left = s->w->first[j + 1] - s->next[j];
    if (!left)
        return 0;
    size_t k = left * c->probe_ratio;
    if (k > N || k / c->probe_ratio != left)
        k = N;
    /* k distinct nodes: a partial Fisher-Yates shuffle of perm */
    for (size_t i = 0; i < k; i++) {
        size_t r = i + (size_t)(rnd(s) * (double)(N - i));
        if (r >= N)
            r = N - 1;
        size_t t = s->perm[i];
        s->perm[i] = s->perm[r];
        s->perm[r] = t;
        s->sample[i] = s->perm[i];
    }
    size_t free_total = 0;
    for (size_t i = 0; i < k; i++) {
        node *n = &s->nodes[s->sample[i]];
        slaq_qnode *q = &s->view[i];
        q->free_slots = c->slots - n->running;
        q->qlen = n->qn;
        q->wait_s = c->sched == TSIM_YAQD ? node_wait(s, s->sample[i]) : 0;
        q->affinity = 1;
        q->admits = c->sched == TSIM_SPARROW ||
                    slaq_queue_admits(&c->bound, s->qlen, q->qlen,
                                      q->wait_s);
        free_total += q->free_slots;
    }
    while (s->next[j] < s->w->first[j + 1]) {
        long i = slaq_queue_place(s->view, k, free_total, k * c->slots,
                                  c->r_fmin, s->load);
        if (i < 0)
            break;
        size_t task = s->next[j]++;
        slaq_qnode *q = &s->view[i];
        if (q->free_slots) {
            q->free_slots--;
            free_total--;
        } else {
            q->qlen++;
            q->wait_s += s->w->est[j] / c->slots;
            q->admits = c->sched == TSIM_SPARROW ||
                        slaq_queue_admits(&c->bound, s->qlen, q->qlen,
                                          q->wait_s);
        }
        if (dispatch(s, task, s->sample[i]))
            return -1;
    }
    if (s->next[j] == s->w->first[j + 1])
        return 0;
    /* Tasks that fit nowhere wait at their job, which samples again: a
     * heartbeat later if some of its tasks were placed this time, else
     * twice as long as the last wait, up to 16 heartbeats (a job of long
     * tasks on a full cluster would otherwise sample every node every
     * few seconds for hours). */
    if (s->w->first[j + 1] - s->next[j] < left)
        s->backoff[j] = c->heartbeat;
    else if (s->backoff[j] < 16 * c->heartbeat)
        s->backoff[j] = s->backoff[j] ? 2 * s->backoff[j] : c->heartbeat;
    return ev_push(s, s->now + s->backoff[j], EV_RETRY, j, 0);
}

static int on_finish(tsim *s, size_t task, size_t v)
{
    node *n = &s->nodes[v];
    for (unsigned i = 0; i < n->running; i++)
        if (n->run[i] == task) {
            n->run[i] = n->run[--n->running];
            break;
        }
    size_t j = job_of(s, task);
    if (--s->unfinished[j] == 0)
        s->done[j] = s->now;
    long next = take_queued(s, v);
    if (next == -2)
        return -1;
    if (next >= 0)
        return start_task(s, (size_t)next, v);
    if (s->c->sched == TSIM_FIFO) {
        long t = central_take(s);
        if (t == -2)
            return -1;
        if (t >= 0)
            return dispatch(s, (size_t)t, v);
        return 0;
    }
    return heartbeat_soon(s, v);
}

static int on_heartbeat(tsim *s, size_t v)
{
    node *n = &s->nodes[v];
    n->hb_pending = 0;
    n->rep_free = s->c->slots - n->running;
    n->rep_qlen = n->qn;
    n->rep_wait = node_wait(s, v);
    n->rep_time = s->now;
    return central_place(s);
}

static int on_arrive(tsim *s, size_t j)
{
    if (s->c->sched == TSIM_SPARROW || s->c->sched == TSIM_YAQD)
        return sample_place(s, j);
    s->pend[s->npend++] = j;
    return central_place(s);
}

static int check_config(const tt_workload *w, const tsim_config *c,
                        char *err, size_t errlen)
{
    if ((unsigned)c->sched >= TSIM_NSCHED) {
        util_errf(err, errlen, "no such scheduler");
        return -1;
    }
    if (c->nodes < 1 || c->nodes > TSIM_MAX_NODES) {
        util_errf(err, errlen, "nodes: expected a whole number from 1 to "
                  "%d, got %zu", TSIM_MAX_NODES, c->nodes);
        return -1;
    }
    if (c->slots < 1 || c->slots > TSIM_MAX_SLOTS) {
        util_errf(err, errlen, "slots per node: expected a whole number "
                  "from 1 to %d, got %u", TSIM_MAX_SLOTS, c->slots);
        return -1;
    }
    if (!(c->heartbeat > 0) || !isfinite(c->heartbeat)) {
        util_errf(err, errlen, "heartbeat: expected a positive number of "
                  "seconds");
        return -1;
    }
    if (c->probe_ratio < 1) {
        util_errf(err, errlen, "probe ratio: expected at least 1");
        return -1;
    }
    if (!(c->r_fmin >= 0 && c->r_fmin < 1)) {
        util_errf(err, errlen, "r_fmin: expected a number from 0 to 1 (1 "
                  "excluded)");
        return -1;
    }
    if (!w->njobs || !w->ntasks) {
        util_errf(err, errlen, "the workload has no tasks");
        return -1;
    }
    return 0;
}

static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / (double)n : NAN;
}

/* Fills the result's statistics from the finished run. */
static int summarise(tsim *s, tsim_result *r)
{
    const tt_workload *w = s->w;
    size_t nj = w->njobs, nt = w->ntasks;
    double *tmp = malloc((nt > nj ? nt : nj) * sizeof *tmp);
    if (!tmp)
        return -1;
    double last = 0;
    for (size_t j = 0; j < nj; j++) {
        r->jct[j] = s->done[j] - (w->arrival[j] - s->t0);
        if (s->done[j] > last)
            last = s->done[j];
    }
    memcpy(tmp, r->jct, nj * sizeof *tmp);
    r->jct_mean = mean_of(tmp, nj);
    r->jct_p50 = stats_quantile(tmp, nj, 0.5);
    r->jct_p90 = stats_quantile(tmp, nj, 0.9);
    r->jct_p99 = stats_quantile(tmp, nj, 0.99);
    size_t ns = 0;
    for (size_t j = 0; j < nj; j++)
        if (w->est[j] <= s->c->short_cutoff)
            tmp[ns++] = r->jct[j];
    r->nshort = ns;
    r->short_p50 = ns ? stats_quantile(tmp, ns, 0.5) : NAN;
    r->short_p90 = ns ? stats_quantile(tmp, ns, 0.9) : NAN;
    /* waits: from the job's arrival; in node queues: from dispatch */
    double t0, t1;
    tsim_window(w, &t0, &t1);
    if (!(t1 > t0)) {
        t0 = 0;
        t1 = last;
    }
    double busy = 0;
    for (size_t j = 0; j < nj; j++)
        for (size_t t = w->first[j]; t < w->first[j + 1]; t++) {
            tmp[t] = s->start[t] - (w->arrival[j] - s->t0);
            double a = s->start[t], b = a + w->dur[t];
            if (a < t0)
                a = t0;
            if (b > t1)
                b = t1;
            if (b > a)
                busy += b - a;
        }
    r->wait_mean = mean_of(tmp, nt);
    r->wait_p50 = stats_quantile(tmp, nt, 0.5);
    double sq = 0;
    r->qdelay_max = 0;
    for (size_t t = 0; t < nt; t++) {
        tmp[t] = s->start[t] - s->disp[t];
        if (tmp[t] > r->qdelay_max)
            r->qdelay_max = tmp[t];
    }
    r->qdelay_mean = mean_of(tmp, nt);
    for (size_t t = 0; t < nt; t++)
        sq += (tmp[t] - r->qdelay_mean) * (tmp[t] - r->qdelay_mean);
    r->qdelay_sd = sqrt(sq / (double)nt);
    r->qdelay_p50 = stats_quantile(tmp, nt, 0.5);
    double slots = (double)s->c->nodes * s->c->slots;
    r->util = t1 > t0 ? busy / (slots * (t1 - t0)) : NAN;
    r->makespan = last;
    r->throughput = last > 0 ? (double)nj / last * 60 : NAN;
    free(tmp);
    return 0;
}

static void tsim_free(tsim *s)
{
    if (s->nodes)
        for (size_t v = 0; v < s->c->nodes; v++) {
            free(s->nodes[v].run);
            free(s->nodes[v].q);
        }
    free(s->nodes);
    free(s->ev);
    free(s->heap);
    free(s->spare);
    free(s->start);
    free(s->disp);
    free(s->job);
    free(s->next);
    free(s->backoff);
    free(s->unfinished);
    free(s->done);
    free(s->pend);
    free(s->view);
    free(s->sample);
    free(s->perm);
    free(s->items);
    free(s->wrun);
    free(s->wq);
    free(s->wscratch);
    free(s->wslot);
}

int tsim_run(const tt_workload *w, const tsim_config *c, tsim_result *r,
             char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (check_config(w, c, err, errlen))
        return -1;
    tsim s = {.w = w, .c = c, .t0 = w->arrival[0], .rng = c->seed};
    size_t N = c->nodes, nj = w->njobs, nt = w->ntasks;
    s.central = c->sched == TSIM_YARN || c->sched == TSIM_YAQC;
    s.load = c->sched == TSIM_SPARROW ? SLAQ_QLOAD_LENGTH : c->load;
    if (c->sched == TSIM_YARN || c->sched == TSIM_FIFO)
        s.qlen = 0;
    else if (c->sched == TSIM_SPARROW)
        s.qlen = SLAQ_QBOUND_MAX;
    else
        s.qlen = slaq_queue_bound_length(&c->bound, c->slots,
                                         tsim_mean_estimate(w), c->heartbeat,
                                         c->util);
    s.nodes = calloc(N, sizeof *s.nodes);
    s.start = calloc(nt, sizeof *s.start);
    s.disp = calloc(nt, sizeof *s.disp);
    s.job = malloc(nt * sizeof *s.job);
    s.next = malloc(nj * sizeof *s.next);
    s.backoff = calloc(nj, sizeof *s.backoff);
    s.unfinished = malloc(nj * sizeof *s.unfinished);
    s.done = calloc(nj, sizeof *s.done);
    s.pend = malloc(nj * sizeof *s.pend);
    s.view = calloc(N, sizeof *s.view);
    s.sample = malloc(N * sizeof *s.sample);
    s.perm = malloc(N * sizeof *s.perm);
    s.wrun = malloc(c->slots * sizeof *s.wrun);
    s.wscratch = malloc(c->slots * sizeof *s.wscratch);
    s.wslot = malloc(c->slots * sizeof *s.wslot);
    r->jct = malloc(nj * sizeof *r->jct);
    if (!s.nodes || !s.start || !s.disp || !s.job || !s.next || !s.backoff ||
        !s.unfinished ||
        !s.done || !s.pend || !s.view || !s.sample || !s.perm || !s.wrun ||
        !s.wscratch || !s.wslot || !r->jct)
        goto err;
    for (size_t v = 0; v < N; v++) {
        s.nodes[v].run = malloc(c->slots * sizeof *s.nodes[v].run);
        if (!s.nodes[v].run)
            goto err;
        s.nodes[v].rep_free = c->slots;
        /* heartbeats spread evenly over one interval */
        s.nodes[v].phase = c->heartbeat * (double)v / (double)N;
        s.perm[v] = v;
    }
    for (size_t j = 0; j < nj; j++) {
        s.next[j] = w->first[j];
        s.unfinished[j] = w->first[j + 1] - w->first[j];
        for (size_t t = w->first[j]; t < w->first[j + 1]; t++)
            s.job[t] = j;
        if (ev_push(&s, w->arrival[j] - s.t0, EV_ARRIVE, j, 0))
            goto err;
    }
    while (s.nev) {
        event e = ev_pop(&s);
        s.now = e.t;
        int rc = 0;
        switch (e.type) {
        case EV_FINISH: rc = on_finish(&s, e.a, e.b); break;
        case EV_ARRIVE: rc = on_arrive(&s, e.a); break;
        case EV_HEARTBEAT: rc = on_heartbeat(&s, e.a); break;
        case EV_RETRY: rc = sample_place(&s, e.a); break;
        }
        if (rc)
            goto err;
    }
    r->njobs = nj;
    r->ntasks = nt;
    r->qlen = s.qlen;
    if (summarise(&s, r))
        goto err;
    tsim_free(&s);
    return 0;
err:
    util_errf(err, errlen, "out of memory");
    tsim_free(&s);
    tsim_result_free(r);
    return -1;
}
