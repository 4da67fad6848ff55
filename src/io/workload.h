/*
 * workload.h — reading and writing slaq workload files.
 *
 * A workload is what `slaq sim` replays: JSON Lines, one job per line,
 *
 *   {"id": "j17", "arrival_s": 63.2, "iter_cpu_s": 41.5, "max_cores": 64,
 *    "weight": 1, "algorithm": "svm", "loss": [1.0, 0.77, 0.63]}
 *
 * and optionally what the job's user asks: "deadline_s" (absolute),
 * "accuracy" with its "direction" ("max" or "min"), "urgency" (1-10).
 *
 * (docs/sim.md and docs/formats.md describe the format). The job runs
 * len(loss)-1 iterations of iter_cpu_s CPU-seconds each. The format is a
 * contract with tools outside slaq, so the reader accepts any file that
 * follows it (unknown fields are ignored, lines need not be sorted by
 * arrival) and rejects anything else with the file, line and field named.
 */
#ifndef SLAQ_IO_WORKLOAD_H
#define SLAQ_IO_WORKLOAD_H

#include <stddef.h>
#include <stdio.h>

/* One job of a workload. Strings and the loss array are owned. */
typedef struct wl_job {
    char *id;
    char *algorithm;   /* "" when absent */
    char *curve;       /* name of the recorded curve; "" when absent */
    char *convergence; /* declared class (slaq_convergence_parse); "" when
                          absent */
    double arrival_s;  /* >= 0 */
    double iter_cpu_s; /* > 0, CPU-seconds per iteration */
    double max_cores;  /* > 0; INFINITY when absent */
    double weight;     /* > 0; 1 when absent */
    /* How the job scales (docs/sim.md, "Scaling"): an iteration on t
     * threads costs iter_cpu_s · (1 + sigma·(t − 1) + kappa·t·(t − 1))
     * core-seconds, min(t, cores) of them at a time. `scaled` 0: the
     * fields are absent, the job speeds up with its cores linearly and
     * says nothing of threads (the paper's model). */
    int scaled;
    double sigma, kappa; /* >= 0, at most WL_MAX_SCALING */
    double *loss;      /* loss[0] before the first iteration */
    size_t nlosses;    /* >= 2: the job runs nlosses-1 iterations */
    size_t line;       /* line of the file it came from (1-based) */
    /* What the job's user asks (docs/deadlines.md); absent, the paper's
     * defaults: the largest deadline and the lowest accuracy. */
    double deadline_s; /* absolute, >= arrival_s; 0 when absent (none) */
    int has_accuracy;  /* "accuracy" was given */
    double accuracy;   /* the required value of the job's metric */
    int minimize;      /* "direction": "min" (a loss); 0: "max" */
    int urgency;       /* 1..10; 0 when absent (1) */
    /* Whose job it is (docs/formats.md; shares between users, slaq sim's
     * "+shares" runs): a user and the account it is charged to, each ""
     * when absent, of slaq/shares.h's name characters. */
    char *user;
    char *account;
} wl_job;

/* The job's goal for the core (slaq_goal): its deadline on the
 * workload's clock, accuracy, direction and urgency, with the defaults
 * where absent. */
struct slaq_goal;
void wl_job_goal(const wl_job *j, struct slaq_goal *g);

/*
 * The format's caps (docs/sim.md). A value beyond them is refused with the
 * line and field, before anything is allocated for it: no workload can make
 * the reader, or a replay of it, grow without bound. 1e9 seconds is about 32
 * years; a simulator run has caps of its own on top (sim_config_check).
 */
#define WL_MAX_JOBS 1000000      /* lines (jobs) in one workload */
#define WL_MAX_ITERS 10000000    /* len(loss) − 1 of one job */
#define WL_MAX_SECONDS 1e9       /* arrival_s and iter_cpu_s at most */
#define WL_MIN_CORES 1e-3        /* max_cores at least */
#define WL_MAX_CORES 1e9         /* max_cores at most */
#define WL_MIN_WEIGHT 1e-6       /* weight in [WL_MIN_WEIGHT, WL_MAX_WEIGHT] */
#define WL_MAX_WEIGHT 1e6
#define WL_MAX_SCALING 1000      /* sigma and kappa at most */

typedef struct wl_workload {
    wl_job *jobs;
    size_t n;
} wl_workload;

/*
 * Reads a workload from f; `name` is used in error messages. Blank lines
 * are skipped. On success returns 0 with the jobs in file order. On a
 * malformed line, a duplicate id, an empty file or a read error returns -1
 * with a message naming name:line and the field in err, and wl empty.
 */
int wl_read(FILE *f, const char *name, wl_workload *wl, char *err,
            size_t errlen);

/* Reads the file at path ("-" is stdin); as wl_read. */
int wl_read_path(const char *path, wl_workload *wl, char *err, size_t errlen);

/*
 * Writes one job as a line of the format, with fixed float formats so that
 * the same job always gives the same bytes (losses round-trip exactly).
 * Returns 0, or -1 on a write error.
 */
int wl_write_job(FILE *f, const wl_job *j);

/* Frees the jobs and empties wl (safe on an empty workload). */
void wl_free(wl_workload *wl);

#endif
