/*
 * aqpsim.c — the simulator of approximate queries (see aqpsim.h).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/setopt.h"
#include "sim/aqpsim.h"
#include "sim/sim.h"
#include "slaq/deadline.h"
#include "slaq/settings.h"

void aqpsim_config_init(aqpsim_config *c)
{
    static const char *const own[][2] = {
        {"policy", "relaqs"}, {"cores", "16"}, {"epoch", "5"},
        {"query-min-cores", "1"}, {"damping", "0"}, {"hysteresis", "0"},
    };
    slaq_sched_config_init(&c->sched);
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        int rc = slaq_sched_config_set(&c->sched, own[i][0], own[i][1],
                                       NULL, 0);
        assert(rc == SLAQ_OK);
        (void)rc;
    }
    c->cpu_scale = 1;
}

/* A query while it is in the simulation. */
typedef struct aq {
    const aqpsim_query *q;
    aqpsim_qres *res;
    slaq_job *j;
    size_t done;   /* mini-batches finished */
    double w;      /* CPU-seconds done of mini-batch done+1 */
    double cores;
    int state;     /* 0 not arrived, 1 running, 2 finished */
} aq;

static double batch_cost(const aq *a, const aqpsim_config *c)
{
    double v = a->q->t->cpu_s[a->done] * c->cpu_scale;
    return v > 1e-9 ? v : 1e-9;
}

void aqpsim_results_free(aqpsim_qres *res, size_t n)
{
    for (size_t i = 0; res && i < n; i++) {
        free(res[i].batch_t);
        free(res[i].red);
        res[i].batch_t = res[i].red = NULL;
    }
}

/* Ties on the clock: events this close count as simultaneous. */
#define AQ_EPS 1e-9

int aqpsim_config_check(const aqpsim_config *cfg, const aqpsim_query *qs,
                        size_t n, char *err, size_t errlen)
{
    if (!(cfg->sched.cores > 0) || !(cfg->sched.epoch_s > 0) || !(cfg->cpu_scale > 0) ||
        !isfinite(cfg->sched.cores) || !isfinite(cfg->sched.epoch_s) ||
        !isfinite(cfg->cpu_scale)) {
        snprintf(err, errlen, "--cores, --epoch and --cpu-scale must be "
                 "finite numbers > 0");
        return -1;
    }
    if (cfg->sched.cores > SIM_MAX_UNITS) {
        snprintf(err, errlen, "--cores %g: more than the cap of %d cores",
                 cfg->sched.cores, SIM_MAX_UNITS);
        return -1;
    }
    if (n > AQPSIM_MAX_QUERIES) {
        snprintf(err, errlen, "--queries: more than the cap of %d queries",
                 AQPSIM_MAX_QUERIES);
        return -1;
    }
    if (!qs)
        return 0;
    double last = 0, work = 0;
    for (size_t i = 0; i < n; i++) {
        last = fmax(last, qs[i].arrival);
        for (size_t b = 0; b < qs[i].t->B; b++)
            work += qs[i].t->cpu_s[b] * cfg->cpu_scale;
    }
    double span = last + work / cfg->sched.cores, epochs = span / cfg->sched.epoch_s;
    if (!(epochs <= SIM_MAX_EPOCHS)) {
        snprintf(err, errlen, "the last arrival at %g s (--mean-interarrival, "
                 "--sweep)"
                 " and %g CPU-seconds of mini-batches (--cpu-scale %g) on "
                 "--cores %g take at least %g s, %g epochs of --epoch %g s, "
                 "more than the cap of %d epochs", last, work,
                 cfg->cpu_scale, cfg->sched.cores, span, epochs, cfg->sched.epoch_s,
                 SIM_MAX_EPOCHS);
        return -1;
    }
    return 0;
}

int aqpsim_run(const aqpsim_query *qs, size_t n, const aqpsim_config *cfg,
               aqpsim_qres *res, char *err, size_t errlen)
{
    if (aqpsim_config_check(cfg, qs, n, err, errlen))
        return -1;
    memset(res, 0, n * sizeof *res);
    slaq_sched_config sc = cfg->sched;
    slaq_rl_model net; /* mlfs-rl's and mlfs's: the committed one */
    if (setopt_model(&sc, NULL, &net, err, errlen))
        return -1;
    slaq_sched *s = slaq_sched_new(&sc);
    aq *a = calloc(n ? n : 1, sizeof *a);
    if (!s || !a) {
        slaq_sched_free(s);
        free(a);
        snprintf(err, errlen, "out of memory or bad scheduler settings");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const aqp_trace *t = qs[i].t;
        a[i].q = &qs[i];
        a[i].res = &res[i];
        res[i].arrival = qs[i].arrival;
        res[i].B = t->B;
        res[i].batch_t = malloc(t->B * sizeof(double));
        res[i].red = malloc(t->B * sizeof(double));
        if (!res[i].batch_t || !res[i].red) {
            snprintf(err, errlen, "out of memory");
            goto err;
        }
        slaq_query_error_curve(t->est, t->truth, t->B, t->K, res[i].red);
        for (size_t b = 1; b <= t->B; b++) /* reduction; exact at the end */
            res[i].red[b - 1] = b == t->B ? 1 : 1 - res[i].red[b - 1];
    }

    double t = 0, next_epoch = 0;
    size_t left = n, epochs = 0;
    while (left > 0) {
        if (epochs > SIM_MAX_EPOCHS) {
            snprintf(err, errlen, "the run reached the cap of %d epochs at "
                     "t=%.3f s with %zu queries unfinished", SIM_MAX_EPOCHS,
                     t, left);
            goto err;
        }
        /* the next event */
        double tn = next_epoch;
        for (size_t i = 0; i < n; i++) {
            if (a[i].state == 0 && qs[i].arrival < tn)
                tn = qs[i].arrival;
            if (a[i].state == 1 && a[i].cores > 0) {
                double te = t + (batch_cost(&a[i], cfg) - a[i].w) /
                                    a[i].cores;
                if (te < tn)
                    tn = te;
            }
        }
        if (tn < t)
            tn = t;
        for (size_t i = 0; i < n; i++)
            if (a[i].state == 1)
                a[i].w += a[i].cores * (tn - t);
        t = tn;
        /* finished mini-batches */
        for (size_t i = 0; i < n; i++) {
            aq *x = &a[i];
            if (x->state != 1 || !(x->cores > 0))
                continue;
            double cost = batch_cost(x, cfg);
            if (x->w < cost - AQ_EPS * (1 + cost))
                continue;
            const aqp_trace *tr = x->q->t;
            slaq_report r = {.iter = x->done + 1,
                             .loss = 0,
                             .cpu_s = cost,
                             .samples = tr->rows[x->done],
                             .t = t};
            int rc = slaq_job_report_estimates(x->j, &r,
                                               tr->est + x->done * tr->K,
                                               tr->K);
            if (rc) {
                snprintf(err, errlen, "%s: mini-batch %zu: %s", tr->name,
                         x->done + 1, slaq_strerror(rc));
                goto err;
            }
            x->res->batch_t[x->done] = t;
            x->done++;
            x->w = 0;
            if (x->done == tr->B) {
                x->state = 2;
                x->res->completion = t;
                slaq_sched_remove(s, x->j);
                x->j = NULL;
                x->cores = 0;
                left--;
            }
        }
        /* arrivals */
        for (size_t i = 0; i < n; i++) {
            if (a[i].state != 0 || qs[i].arrival > t + AQ_EPS)
                continue;
            slaq_job_opts o;
            slaq_job_opts_init(&o);
            o.kind = SLAQ_JOB_QUERY;
            o.iters = qs[i].t->B;
            a[i].j = slaq_sched_add(s, &o, t);
            if (!a[i].j) {
                snprintf(err, errlen, "out of memory");
                goto err;
            }
            a[i].state = 1;
        }
        /* The cores are divided again at every epoch and whenever the
         * core says so (arrivals, departures, a query's first
         * mini-batch): slaq_sched_due(). slaqd divides on its timer
         * only (docs/relaqs.md). */
        int decide = slaq_sched_due(s);
        if (t >= next_epoch - AQ_EPS) {
            decide = 1;
            next_epoch += cfg->sched.epoch_s;
            epochs++;
        }
        if (decide && slaq_sched_count(s) > 0) {
            int rc = slaq_sched_epoch(s, t);
            if (rc) {
                snprintf(err, errlen, "scheduler: %s", slaq_strerror(rc));
                goto err;
            }
            for (size_t i = 0; i < n; i++)
                if (a[i].state == 1)
                    a[i].cores = slaq_job_alloc(a[i].j);
        }
    }
    slaq_sched_free(s);
    free(a);
    return 0;
err:
    slaq_sched_free(s);
    free(a);
    aqpsim_results_free(res, n);
    return -1;
}

double aqpsim_time_to(const aqpsim_qres *r, double x, int stay)
{
    size_t first = r->B; /* the last mini-batch always reaches 1 */
    if (stay) {
        while (first > 1 && r->red[first - 2] >= x)
            first--;
    } else {
        for (size_t i = 1; i <= r->B; i++)
            if (r->red[i - 1] >= x) {
                first = i;
                break;
            }
    }
    return r->batch_t[first - 1] - r->arrival;
}

/* A small deterministic generator (splitmix64), so workloads do not
 * depend on the C library's rand(). */
static double urand(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

void aqpsim_workload(const aqp_trace_set *ts, size_t n, double mean_ia,
                     unsigned seed, aqpsim_query *out)
{
    uint64_t st = seed * 0x2545f4914f6cdd1dULL + 1;
    size_t *perm = malloc(ts->n * sizeof *perm);
    for (size_t i = 0; perm && i < ts->n; i++)
        perm[i] = i;
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pick;
        if (perm && n <= ts->n) { /* without replacement */
            size_t k = i + (size_t)(urand(&st) * (double)(ts->n - i));
            if (k >= ts->n)
                k = ts->n - 1;
            size_t tmp = perm[i];
            perm[i] = perm[k];
            perm[k] = tmp;
            pick = perm[i];
        } else {
            pick = (size_t)(urand(&st) * (double)ts->n) % ts->n;
        }
        out[i].t = &ts->v[pick];
        if (i > 0)
            t += -mean_ia * log(1 - urand(&st));
        out[i].arrival = t;
    }
    free(perm);
}
