/*
 * dlsim.c — the simulator of jobs with deadlines (dlsim.h): workloads
 * (generated, or from a trace) and the round-by-round engine.
 *
 * The engine keeps every job in one of four states (future, pending,
 * placed, done) and, each round, asks the core for the pending order,
 * placements, moves, stops and cores, then advances every placed job by
 * its cores until the next round. A round costs O(active jobs × log) in
 * the core plus O(nodes × jobs) for moves; the decisions of a round are
 * timed here (the core reads no clock).
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
    slaq_prio_params_init(&c->prio);
    c->moves = 1;
    c->control = 1;
    c->optstop = 0;
    c->optstop_eps = SLAQ_MLFS_OPTSTOP_EPS;
    c->h_r = 0.9;
    c->p_s = 0.1;
    c->h_s = 0.9;
    c->move_fixed_s = 30;
    c->move_gbps = 1;
    c->move_hold_s = 600;
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

enum { J_FUTURE, J_PENDING, J_PLACED, J_DONE };

typedef struct dl_state {
    int state;
    long node;
    double done;        /* core-seconds of work done */
    double alloc;       /* cores this round */
    double attained, waited;
    double stall_until; /* moving until then */
    double moved_at;
    int move_skipped;   /* its planned move was not worth its cost */
    double completion;
    double at_deadline; /* reduction fraction at the deadline; NAN: not yet */
    int acc_by_deadline;
    double prev_loss, last_drop;
    double recent[DL_OPTSTOP_ROUNDS];
    size_t nrecent;
    slaq_forecast fc;
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
    size_t *act;        /* active job indices (pending + placed) */
    slaq_pjob *pj;      /* per active job */
    double *key;
    size_t *order;
    size_t *node_of;    /* per placed job in `pl` */
    size_t *pl;         /* placed jobs getting cores this round */
    slaq_pjob *ppj;
    double *alloc;
    double *cap;
    slaq_node_use *nodes, *before; /* before: as a round's moves start */
    slaq_move_job *mj;
    slaq_move *moves;
    double *left;       /* per entry of mj: its seconds of work left */
    size_t *scratch, *mj_of;
    slaq_alloc_ws *ws;
} dl_engine;

static const curve *job_curve(const dl_engine *e, size_t i)
{
    return &e->cs->v[e->w->jobs[i].curve];
}

static void fill_pjob(const dl_engine *e, size_t i, double now,
                      slaq_pjob *p)
{
    const dl_job *j = &e->w->jobs[i];
    dl_state *s = &e->st[i];
    const curve *c = job_curve(e, i);
    double x = curve_pos(c, j, s->done);
    memset(p, 0, sizeof *p);
    s->fc = (slaq_forecast){
        .model = SLAQ_MODEL_TABLE, .table = c->loss, .table_len = c->n,
        .k0 = x, .loss0 = curve_loss(c, x), .first_loss = c->loss[0],
        .final_loss = c->loss[c->n - 1], .yscale = 1,
        .scale = c->loss[0] - c->loss[c->n - 1],
    };
    p->fc = &s->fc;
    p->k = x;
    p->iters_per_core = (double)(c->n - 1) / j->work * e->c->epoch_s;
    p->weight = 1;
    p->max_cores = j->size;
    p->prev_alloc = s->alloc;
    p->now = now;
    p->arrival = j->arrival;
    p->deadline = j->deadline;
    p->urgency = j->urgency;
    p->attained = s->attained;
    p->waited = s->waited;
    p->remaining_s = (j->work - s->done) / j->size;
    p->iter = x;
    p->last_drop = s->last_drop;
    p->total_drop = c->loss[0] - s->fc.loss0;
}

static void finish(dl_engine *e, size_t i, double when, double t)
{
    dl_state *s = &e->st[i];
    const dl_job *j = &e->w->jobs[i];
    const curve *c = job_curve(e, i);
    if (s->node >= 0) {
        e->nodes[s->node].use_cores -= j->size;
        e->nodes[s->node].use_mem -= j->mem;
    }
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

static int engine_alloc(dl_engine *e, size_t n, size_t nn)
{
    e->st = calloc(n, sizeof *e->st);
    e->act = malloc(n * sizeof *e->act);
    e->pj = malloc(n * sizeof *e->pj);
    e->key = malloc(n * sizeof *e->key);
    e->order = malloc(n * sizeof *e->order);
    e->node_of = malloc(n * sizeof *e->node_of);
    e->pl = malloc(n * sizeof *e->pl);
    e->ppj = malloc(n * sizeof *e->ppj);
    e->alloc = malloc(n * sizeof *e->alloc);
    e->cap = malloc(nn * sizeof *e->cap);
    e->nodes = calloc(nn, sizeof *e->nodes);
    e->before = malloc(nn * sizeof *e->before);
    e->mj = malloc(n * sizeof *e->mj);
    e->moves = malloc(n * sizeof *e->moves);
    e->left = malloc(n * sizeof *e->left);
    e->scratch = malloc(3 * n * sizeof *e->scratch);
    e->mj_of = malloc(n * sizeof *e->mj_of);
    e->ws = slaq_alloc_ws_new();
    return e->st && e->act && e->pj && e->key && e->order && e->node_of &&
           e->pl && e->ppj && e->alloc && e->cap && e->nodes && e->before &&
           e->mj && e->moves && e->left && e->scratch && e->mj_of && e->ws
               ? 0 : -1;
}

static void engine_free(dl_engine *e)
{
    free(e->st);
    free(e->act);
    free(e->pj);
    free(e->key);
    free(e->order);
    free(e->node_of);
    free(e->pl);
    free(e->ppj);
    free(e->alloc);
    free(e->cap);
    free(e->nodes);
    free(e->before);
    free(e->mj);
    free(e->moves);
    free(e->left);
    free(e->scratch);
    free(e->mj_of);
    slaq_alloc_ws_free(e->ws);
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

/* The start: every node empty, every job in the future, unplaced. */
static void engine_start(dl_engine *e)
{
    const dl_config *c = e->c;
    for (size_t v = 0; v < c->cl.nodes; v++) {
        e->nodes[v] = (slaq_node_use){c->cl.cores, c->cl.mem, 0, 0};
        e->cap[v] = c->cl.cores;
    }
    for (size_t i = 0; i < e->w->n; i++) {
        e->st[i].node = -1;
        e->st[i].at_deadline = NAN;
        e->st[i].prev_loss = job_curve(e, i)->loss[0];
        e->st[i].moved_at = -INFINITY;
    }
}

/* The active jobs among the first `next` (pending and placed) into
 * e->act; *npend of them wait. Returns how many. */
static size_t round_active(dl_engine *e, size_t next, size_t *npend)
{
    size_t na = 0;
    *npend = 0;
    for (size_t i = 0; i < next; i++)
        if (e->st[i].state == J_PENDING || e->st[i].state == J_PLACED) {
            e->act[na++] = i;
            *npend += e->st[i].state == J_PENDING;
        }
    return na;
}

/* MLF-C at time t: stops the placed jobs of the na active ones the core
 * says to (slaq_mlfc_decide: their accuracy met while the cluster is busy,
 * npend waiting; with --optstop, a plateau), counted in
 * r->stopped and *ndone, and drops them from e->act. Returns the active
 * jobs left. */
static size_t round_stop(dl_engine *e, double t, size_t na, size_t npend,
                         dl_result *r, size_t *ndone)
{
    const dl_config *c = e->c;
    int over = slaq_mlfs_overloaded(e->nodes, c->cl.nodes, npend, c->h_s);
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        dl_state *s = &e->st[i];
        const dl_job *j = &e->w->jobs[i];
        const curve *cv = job_curve(e, i);
        if (s->state != J_PLACED)
            continue;
        double l = curve_loss(cv, curve_pos(cv, j, s->done));
        slaq_goal g;
        slaq_goal_init(&g);
        g.maximize = 0;
        g.accuracy = cv->loss[0] -
                     j->req * (cv->loss[0] - cv->loss[cv->n - 1]);
        g.stop = c->optstop ? SLAQ_STOP_OPTSTOP : SLAQ_STOP_ACCURACY;
        if (slaq_mlfc_decide(&g, l, over, cv->loss[0], s->recent,
                             s->nrecent, c->optstop_eps) != SLAQ_VERDICT_RUN) {
            finish(e, i, t, t);
            r->stopped++;
            (*ndone)++;
        }
    }
    size_t k = 0;
    for (size_t a = 0; a < na; a++)
        if (e->st[e->act[a]].state != J_DONE)
            e->act[k++] = e->act[a];
    return k;
}

/* Moves off overloaded nodes at time t, as the core decides them
 * (slaq_mlfs_plan) over the placed jobs of the na active ones (e->key
 * their keys): with --weigh-moves a move whose cost outweighs its gain
 * is not made. Applies the moves made and counts into r. */
static void round_moves(dl_engine *e, double t, size_t na, dl_result *r)
{
    const dl_config *c = e->c;
    const dl_workload *w = e->w;
    size_t nn = c->cl.nodes, m = 0;
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        dl_state *s = &e->st[i];
        if (s->state != J_PLACED)
            continue;
        e->mj[m] = (slaq_move_job){
            (size_t)s->node, w->jobs[i].size, w->jobs[i].mem,
            e->key[a], t - s->moved_at >= c->move_hold_s &&
                       s->stall_until <= t};
        e->left[m] = (w->jobs[i].work - s->done) / w->jobs[i].size;
        e->mj_of[m++] = i;
    }
    /* The cost a move is weighed against: the mean of the moves so far. */
    double mean = r->moves ? r->move_s / (double)r->moves : NAN;
    long k = slaq_mlfs_plan(e->nodes, e->before, nn, e->mj, e->left, m,
                            c->h_r, c->p_s, mean, c->weigh_moves, e->moves,
                            m, e->scratch);
    /* From here mj[x].movable says whether job x's move was refused. */
    for (size_t x = 0; x < m; x++)
        e->mj[x].movable = 0;
    for (long q = 0; q < k; q++) {
        const slaq_move *mv = &e->moves[q];
        if (!mv->made) {
            e->mj[mv->job].movable = 1;
            continue;
        }
        size_t i = e->mj_of[mv->job];
        dl_state *s = &e->st[i];
        double cost = c->move_fixed_s + w->jobs[i].mem / c->move_gbps;
        s->node = (long)mv->to;
        s->moved_at = t;
        s->stall_until = t + cost;
        r->moves++;
        r->move_s += cost;
        r->move_gb += w->jobs[i].mem;
    }
    for (size_t x = 0; x < m; x++) {
        dl_state *s = &e->st[e->mj_of[x]];
        if (e->mj[x].movable && !s->move_skipped)
            r->moves_skipped++;
        s->move_skipped = e->mj[x].movable;
    }
}

/* The policy's cores for the round from t, over the placed jobs of the
 * na active ones that are not moving: *np of them, in e->pl (their
 * pjobs e->ppj, nodes e->node_of), their cores into e->alloc; the other
 * jobs' alloc 0. Returns 0, or -1 if the core refused. */
static int round_cores(dl_engine *e, double t, size_t na, size_t *np)
{
    const dl_config *c = e->c;
    *np = 0;
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        dl_state *s = &e->st[i];
        s->alloc = 0;
        if (s->state != J_PLACED || s->stall_until >= t + c->epoch_s)
            continue;
        e->ppj[*np] = e->pj[a];
        e->node_of[*np] = (size_t)s->node;
        e->pl[(*np)++] = i;
    }
    if (slaq_allocate_nodes(c->policy, e->ppj, *np, e->node_of, e->cap,
                            c->cl.nodes, 1, e->ws, e->alloc) != SLAQ_OK)
        return -1;
    return 0;
}

/* Gives the np placed jobs round_cores' cores; returns their sum. */
static double round_give(dl_engine *e, size_t np)
{
    double round_given = 0;
    for (size_t p = 0; p < np; p++) {
        e->st[e->pl[p]].alloc = e->alloc[p];
        round_given += e->alloc[p];
    }
    return round_given;
}

/* Advances the na active jobs from t to t + T at their cores: work done,
 * the reduction at a deadline passed, the jobs that finish, the losses
 * MLF-C's optimal stop reads. Returns how many finished. */
static size_t round_advance(dl_engine *e, double t, size_t na)
{
    const double T = e->c->epoch_s;
    size_t ndone = 0;
    for (size_t a = 0; a < na; a++) {
        size_t i = e->act[a];
        dl_state *s = &e->st[i];
        const dl_job *j = &e->w->jobs[i];
        double start = fmax(t, s->stall_until), a_c = s->alloc;
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
        const curve *cv = job_curve(e, i);
        double l = curve_loss(cv, curve_pos(cv, j, s->done));
        if (l < s->prev_loss)
            s->last_drop = s->prev_loss - l;
        s->prev_loss = l;
        if (s->nrecent == DL_OPTSTOP_ROUNDS) {
            memmove(s->recent, s->recent + 1,
                    (DL_OPTSTOP_ROUNDS - 1) * sizeof *s->recent);
            s->nrecent--;
        }
        if (a_c > 0)
            s->recent[s->nrecent++] = l;
    }
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
    if (engine_alloc(&e, n, nn) ||
        slaq_alloc_ws_set_prio(e.ws, &c->prio) != SLAQ_OK) {
        util_errf(err, errlen, "out of memory, or bad priority parameters");
        engine_free(&e);
        return -1;
    }
    engine_start(&e);
    const int moves = c->moves && slaq_policy_moves(c->policy);
    const int control = c->control && slaq_policy_load_control(c->policy);
    const double T = c->epoch_s;
    double t = floor(w->jobs[0].arrival / T) * T;
    size_t next = 0, ndone = 0, rounds = 0;
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
        while (next < n && w->jobs[next].arrival <= t)
            e.st[next++].state = J_PENDING;
        /* The active jobs, and how many wait. */
        size_t npend, na = round_active(&e, next, &npend);
        double t0 = wall_us();
        /* MLF-C: stop what met its accuracy while the cluster is busy. */
        if (control)
            na = round_stop(&e, t, na, npend, r, &ndone);
        /* Keys over the active jobs, then the pending ones placed in
         * their order. */
        for (size_t a = 0; a < na; a++)
            fill_pjob(&e, e.act[a], t, &e.pj[a]);
        if (slaq_policy_keys(c->policy, e.pj, na, e.ws, e.key) !=
            SLAQ_OK) {
            util_errf(err, errlen, "the core refused the keys (mlfs-rl "
                      "needs a model)");
            rc = -1;
            break;
        }
        if (c->hook && c->hook->keys)
            c->hook->keys(c->hook->ctx, t, e.pj, na, e.key);
        slaq_key_order(e.key, na, e.order, NULL);
        for (size_t o = 0; o < na; o++) {
            size_t a = e.order[o], i = e.act[a];
            dl_state *s = &e.st[i];
            const dl_job *j = &w->jobs[i];
            if (s->state != J_PENDING)
                continue;
            long v = moves ? slaq_mlfs_host(e.nodes, nn, j->size, j->mem,
                                            c->h_r, -1, 1)
                           : slaq_node_most_free(e.nodes, nn, j->mem);
            if (v < 0)
                continue;
            s->state = J_PLACED;
            s->node = v;
            e.nodes[v].use_cores += j->size;
            e.nodes[v].use_mem += j->mem;
        }
        /* Moves off overloaded nodes. */
        if (moves)
            round_moves(&e, t, na, r);
        /* Cores: the policy over the placed jobs that are not moving. */
        size_t np;
        if (round_cores(&e, t, na, &np) < 0) {
            util_errf(err, errlen, "the core refused an allocation");
            rc = -1;
            break;
        }
        sched_us += wall_us() - t0;
        double round_given = round_give(&e, np);
        given += round_given;
        if (t <= last_arrival) {
            given_arr += round_given;
            rounds_arr++;
        }
        /* Advance to t + T. */
        ndone += round_advance(&e, t, na);
        t += T;
    }
    if (!rc) {
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
