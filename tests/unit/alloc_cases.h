/*
 * alloc_cases.h — deterministic random inputs for the allocator and the
 * scheduler, and a hash of what they answer.
 *
 * test_placement.c replays these cases through today's code and compares
 * each answer's hash with alloc_golden.h, recorded from the single-machine
 * allocator before it became the one-node case of the cluster allocator:
 * the one-node case must give the very same bits. Only public API is used,
 * so the same cases run against any version of libslaq.
 */
#ifndef SLAQ_ALLOC_CASES_H
#define SLAQ_ALLOC_CASES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "slaq/slaq.h"

#define CASES_N 240       /* slaq_allocate cases */
#define CASES_MAXJOBS 40
#define CASES_SCHED 12    /* slaq_sched scenarios */

typedef struct cases_rng {
    uint64_t s;
} cases_rng;

static uint64_t cases_next(cases_rng *r)
{
    /* splitmix64: fixed, so the cases never change */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double cases_unif(cases_rng *r)
{
    return (double)(cases_next(r) >> 11) / 9007199254740992.0;
}

static uint64_t cases_hash(uint64_t h, const double *v, size_t n)
{
    if (!h)
        h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &v[i], sizeof b);
        for (int k = 0; k < 8; k++) {
            h ^= (b >> (8 * k)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

/* One slaq_allocate case: fills the forecasts, jobs and arguments. */
typedef struct alloc_case {
    slaq_policy_kind policy;
    size_t n;
    double capacity, unit;
    slaq_forecast fc[CASES_MAXJOBS];
    slaq_pjob jobs[CASES_MAXJOBS];
} alloc_case;

static void cases_forecast(cases_rng *r, slaq_forecast *f)
{
    memset(f, 0, sizeof *f);
    double first = 1 + 9 * cases_unif(r);
    double fin = first * 0.05 * cases_unif(r);
    f->yscale = first - fin;
    f->shift = fin;
    switch (cases_next(r) % 3) {
    case 0:
        f->model = SLAQ_MODEL_RATIONAL;
        f->par[0] = 0.001 * cases_unif(r);
        f->par[1] = 0.05 + 0.5 * cases_unif(r);
        f->par[2] = 1;
        f->par[3] = 0;
        break;
    case 1:
        f->model = SLAQ_MODEL_EXP;
        f->par[0] = 0.8 + 0.19 * cases_unif(r);
        f->par[1] = 1;
        f->par[2] = 0;
        break;
    default:
        f->model = SLAQ_MODEL_LINEAR;
        f->yscale = 1;
        f->shift = 0;
        f->par[0] = first;
        f->par[1] = 0.01 + 0.1 * cases_unif(r);
        break;
    }
    f->k0 = floor(20 * cases_unif(r));
    f->loss0 = slaq_forecast_loss(f, f->k0);
    f->first_loss = first;
    f->final_loss = fin;
    f->scale = 0.01 + 0.2 * cases_unif(r);
    f->max_step = INFINITY;
    f->floor_loss = -INFINITY;
}

static void cases_alloc(int c, alloc_case *out)
{
    cases_rng r = {(uint64_t)c * 7919 + 17};
    out->policy = (slaq_policy_kind)(c % 3);
    out->n = (size_t)(cases_next(&r) % (CASES_MAXJOBS + 1));
    out->capacity = cases_next(&r) % 4 == 0 ? 64 * cases_unif(&r)
                                            : (double)(cases_next(&r) % 65);
    static const double units[] = {1, 1, 0.5, 2, 0.25};
    out->unit = units[cases_next(&r) % 5];
    for (size_t i = 0; i < out->n; i++) {
        slaq_pjob *j = &out->jobs[i];
        memset(j, 0, sizeof *j);
        cases_forecast(&r, &out->fc[i]);
        j->fc = &out->fc[i];
        j->k = out->fc[i].k0 + cases_unif(&r);
        j->iters_per_core = 0.2 + 5 * cases_unif(&r);
        j->weight = cases_next(&r) % 4 == 0 ? 0.5 + 3 * cases_unif(&r) : 1;
        j->max_cores = cases_next(&r) % 3 == 0 ? 0.5 + 8 * cases_unif(&r)
                                               : INFINITY;
        if (cases_next(&r) % 3 == 0)
            j->scale = 0.05 + cases_unif(&r);
        if (cases_next(&r) % 6 == 0)
            j->min_cores = 4 * cases_unif(&r);
        j->unproven = cases_next(&r) % 10 == 0;
        if (cases_next(&r) % 2 == 0) {
            j->prev_alloc = floor(6 * cases_unif(&r));
            j->stay = cases_next(&r) % 2 ? 1 : 0.3;
        }
    }
}

/*
 * One slaq_sched scenario: jobs on curves of both families arrive, report
 * every epoch and leave; returns the hash of every allocation and gain
 * after every epoch. `cfg_edit` may change the configuration (the cluster
 * test uses it to make the scheduler a one-node cluster explicitly).
 */
static uint64_t cases_sched(int c, void (*cfg_edit)(slaq_sched_config *))
{
    cases_rng r = {(uint64_t)c * 104729 + 3};
    slaq_sched_config cfg;
    slaq_sched_config_init(&cfg);
    cfg.policy = (slaq_policy_kind)(c % 3);
    cfg.predictor = c % 4 == 3 ? SLAQ_PRED_STRAWMAN : SLAQ_PRED_AUTO;
    cfg.cores = 4 + (double)(cases_next(&r) % 29);
    cfg.epoch_s = 2;
    /* The hashes were recorded before the bound on starvation and the
     * class priors existed: they pin the epoch without them (each has
     * its own tests). */
    cfg.starve_s = 0;
    cfg.prior = 0;
    if (c % 5 == 4)
        cfg.reserved = 1;
    if (cfg_edit)
        cfg_edit(&cfg);
    slaq_sched *s = slaq_sched_new(&cfg);
    if (!s)
        return 0;
    enum { NJ = 14 };
    slaq_job *jobs[NJ] = {0};
    double a[NJ], b[NJ], cost[NJ];
    uint64_t k[NJ];
    uint64_t h = 0;
    for (int e = 0; e < 40; e++) {
        double t = 2.0 * e;
        for (int i = 0; i < NJ; i++) {
            if (!jobs[i] && e == i * 2) {
                slaq_job_opts o;
                slaq_job_opts_init(&o);
                if (i % 4 == 1)
                    o.weight = 2;
                if (i % 5 == 2)
                    o.max_cores = 3;
                jobs[i] = slaq_sched_add(s, &o, t);
                a[i] = 0.05 + 0.3 * cases_unif(&r);
                b[i] = 0.85 + 0.12 * cases_unif(&r);
                cost[i] = 0.5 + 3 * cases_unif(&r);
                k[i] = 0;
                slaq_report rep = {0, 10, 0, 0, t};
                slaq_job_report(jobs[i], &rep);
            } else if (jobs[i]) {
                double al = slaq_job_alloc(jobs[i]);
                uint64_t step = (uint64_t)floor(al * 2 / cost[i] + 0.5);
                if (step > 0) {
                    k[i] += step;
                    double kk = (double)k[i];
                    double loss = i % 2 ? 10 / (1 + a[i] * kk)
                                        : 10 * pow(b[i], kk) + 0.1;
                    slaq_report rep = {k[i], loss, cost[i] * (double)step,
                                       100.0 * (double)step, t};
                    slaq_job_report(jobs[i], &rep);
                }
                if (k[i] > 60 + 5 * (uint64_t)i) {
                    slaq_sched_remove(s, jobs[i]);
                    jobs[i] = NULL;
                    k[i] = 0;
                }
            }
        }
        if (slaq_sched_epoch(s, t) != SLAQ_OK) {
            slaq_sched_free(s);
            return 0;
        }
        for (int i = 0; i < NJ; i++) {
            if (!jobs[i])
                continue;
            double v[2] = {slaq_job_alloc(jobs[i]), slaq_job_gain(jobs[i])};
            h = cases_hash(h, v, 2);
        }
    }
    slaq_sched_free(s);
    return h;
}

#endif
