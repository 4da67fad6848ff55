/*
 * taskgen.c — the thesis's synthetic task workloads (tsim_workload in
 * sim/tasksim.h): GridMix-like jobs of 100 tasks, homogeneous, mixed,
 * exponential and heavy-tailed, and the Hive-like workload of §4.3.
 *
 * Each task's estimate is its stage's mean (as Yaq was given): the
 * distribution's mean, not the task's own duration. Arrivals are a
 * Poisson process whose rate puts the offered load asked for on the
 * slots: mean job work / (load x slots) seconds apart on average.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/stats.h"
#include "sim/tasksim.h"

#define GEN_TASKS 100          /* tasks per GridMix job */
#define GRIDMIX_MEAN 49.0      /* GridMix-MS: exponential, mean 49 s */
#define HEAVY_SHARE 0.2        /* the longest 20% of tasks ... */
#define HEAVY_EXTRA 500.0      /* ... last 500 s longer */
#define HIVE_JOBS 185
#define HIVE_MAPS 57.9         /* mappers per job, on average */
#define HIVE_REDUCES 1.5       /* reducers per job, on average */
#define HIVE_MEAN 22.9         /* task duration: mean and sd, s */
#define HIVE_SD 27.8
#define GEN_MAX_JOBS 1000000

typedef struct gen {
    uint64_t s;
} gen;

static double uni(gen *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double expo(gen *g, double mean)
{
    return -mean * log(uni(g));
}

static double normal(gen *g)
{
    return sqrt(-2 * log(uni(g))) * cos(2 * M_PI * uni(g));
}

static size_t poisson(gen *g, double mean)
{
    double l = exp(-mean), p = 1;
    size_t k = 0;
    do {
        k++;
        p *= uni(g);
    } while (p > l);
    return k - 1;
}

typedef enum { W_SEC, W_EXP, W_MIXED, W_GRIDMIX, W_HEAVY, W_HIVE } wkind;

int tsim_workload(const char *name, double load, size_t slots, double span,
                  uint64_t seed, tt_workload *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    wkind k;
    double x = 0;
    char *end;
    if (!strncmp(name, "sec:", 4) || !strncmp(name, "exp:", 4)) {
        k = name[0] == 's' ? W_SEC : W_EXP;
        x = strtod(name + 4, &end);
        if (end == name + 4 || *end || !(x > 0) || x > 1e6) {
            util_errf(err, errlen, "workload %s: expected %s:SECONDS with "
                      "SECONDS a positive number up to 1e6", name,
                      k == W_SEC ? "sec" : "exp");
            return -1;
        }
    } else if (!strcmp(name, "mixed-5-50")) {
        k = W_MIXED;
    } else if (!strcmp(name, "gridmix")) {
        k = W_GRIDMIX;
    } else if (!strcmp(name, "gridmix-heavy")) {
        k = W_HEAVY;
    } else if (!strcmp(name, "hive")) {
        k = W_HIVE;
    } else {
        util_errf(err, errlen, "no workload '%s' (expected %s)", name,
                  TSIM_WORKLOADS);
        return -1;
    }
    if (!(load > 0) || load > 100 || !slots || !(span > 0) || span > 1e7) {
        util_errf(err, errlen, "workload %s: the load must be in (0, 100], "
                  "the slots at least 1 and the span in (0, 1e7] s", name);
        return -1;
    }
    /* the mean work of a job, for the arrival rate */
    double job_work;
    switch (k) {
    case W_SEC: case W_EXP: job_work = GEN_TASKS * x; break;
    case W_MIXED: job_work = GEN_TASKS * (0.8 * 5 + 0.2 * 50); break;
    case W_GRIDMIX: job_work = GEN_TASKS * GRIDMIX_MEAN; break;
    case W_HEAVY:
        job_work = GEN_TASKS * (GRIDMIX_MEAN + HEAVY_SHARE * HEAVY_EXTRA);
        break;
    default: job_work = (HIVE_MAPS + HIVE_REDUCES) * HIVE_MEAN; break;
    }
    double ia = job_work / (load * (double)slots);
    if (k == W_HIVE)
        span = ia * HIVE_JOBS;
    gen g = {seed};
    double lsd = sqrt(log(1 + (HIVE_SD / HIVE_MEAN) * (HIVE_SD / HIVE_MEAN)));
    double lmu = log(HIVE_MEAN) - lsd * lsd / 2;
    double dur[GEN_TASKS * 20];
    double t = 0;
    for (size_t j = 0; j < GEN_MAX_JOBS; j++) {
        if (k == W_HIVE ? j == HIVE_JOBS : t >= span)
            break;
        size_t n = GEN_TASKS;
        double est = x;
        if (k == W_HIVE) {
            n = (size_t)lround(expo(&g, HIVE_MAPS - 1)) + 1 +
                poisson(&g, HIVE_REDUCES - 1) + 1;
            if (n > sizeof dur / sizeof *dur)
                n = sizeof dur / sizeof *dur;
            est = HIVE_MEAN;
        } else if (k == W_MIXED) {
            est = uni(&g) < 0.8 ? 5 : 50;
        } else if (k == W_GRIDMIX || k == W_HEAVY) {
            est = GRIDMIX_MEAN;
        }
        for (size_t i = 0; i < n; i++) {
            switch (k) {
            case W_SEC: case W_MIXED: dur[i] = est; break;
            case W_HIVE: dur[i] = exp(lmu + lsd * normal(&g)); break;
            default: dur[i] = expo(&g, k == W_EXP ? x : GRIDMIX_MEAN);
            }
        }
        if (tt_push(out, t, est, dur, n)) {
            util_errf(err, errlen, "workload %s: out of memory", name);
            tt_free(out);
            return -1;
        }
        t += expo(&g, ia);
    }
    if (k == W_HEAVY) {
        /* the longest 20% of all tasks, 500 s longer; the estimate is
         * the new stage mean */
        double *tmp = malloc(out->ntasks * sizeof *tmp);
        if (!tmp) {
            util_errf(err, errlen, "workload %s: out of memory", name);
            tt_free(out);
            return -1;
        }
        memcpy(tmp, out->dur, out->ntasks * sizeof *tmp);
        double cut = stats_quantile(tmp, out->ntasks, 1 - HEAVY_SHARE);
        free(tmp);
        double sum = 0;
        for (size_t i = 0; i < out->ntasks; i++) {
            if (out->dur[i] > cut)
                out->dur[i] += HEAVY_EXTRA;
            sum += out->dur[i];
        }
        for (size_t j = 0; j < out->njobs; j++)
            out->est[j] = sum / (double)out->ntasks;
    }
    return 0;
}
