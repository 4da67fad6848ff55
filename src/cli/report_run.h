/*
 * report_run.h — the run `slaq report` measures, whichever way it was
 * recorded.
 *
 * A run is its jobs, each with its arrival, its end, its reports and its
 * allocations. cmd_report.c fills one from slaqd's state.db and
 * report_logs.c from the per-job logs of bench/real/stamp.py (runs with
 * no slaqd: jobs started plainly or by a queue); cmd_report.c then
 * measures either with the same code. The readers add to a run only
 * through rpt_push_job and rpt_push_report.
 */
#ifndef SLAQ_CLI_REPORT_RUN_H
#define SLAQ_CLI_REPORT_RUN_H

#include <stddef.h>
#include <stdint.h>

typedef struct rpt_report {
    double t, loss;
} rpt_report;

typedef struct rpt_alloc {
    double t, cores;
    uint64_t epoch;
} rpt_alloc;

typedef struct rpt_job {
    int64_t id;
    char *name, *user, *state;
    const char *log;                    /* its log file; NULL from state.db */
    double submitted, ended, max_cores; /* ended 0: not yet */
    rpt_report *reps;                   /* in iteration order */
    size_t nreps, capreps;
    uint64_t last_iter;
    double cpu_s;
    rpt_alloc *allocs;                  /* sorted by time */
    size_t nallocs, capallocs;
    size_t order;                       /* rank by submission */
    size_t rcur, acur;                  /* the timeline's cursors */
} rpt_job;

typedef struct rpt_run {
    rpt_job *jobs;                      /* in id order */
    size_t njobs, capjobs;
    size_t last;                        /* the job of the last lookup */
} rpt_run;

/*
 * Appends a job with id (larger than every id before it), its name,
 * user and state copied (NULL: "", "-", "-") and every number 0. The job,
 * or NULL when out of memory. The run owns it: run_free in cmd_report.c
 * frees the copies, its reports and its allocations.
 */
rpt_job *rpt_push_job(rpt_run *run, int64_t id, const char *name,
                      const char *user, const char *state);

/* Appends a report at time t with loss, of iteration iter, that carried
 * cpu_s CPU-seconds. 0, or -2 when out of memory. */
int rpt_push_report(rpt_job *j, double t, double loss, uint64_t iter,
                    double cpu_s);

/*
 * Reads the n logs of bench/real/stamp.py (docs/formats.md, "Job logs")
 * into run, job i + 1 from paths[i], named by the file's name less
 * ".log". 0; or, after saying why, -1 for input that is not such a log
 * (exit status 2: the message names the file, the line and the field)
 * or -2 when reading fails midway or memory runs out (exit status 1).
 */
int rpt_read_logs(rpt_run *run, char *const *paths, size_t n);

#endif
