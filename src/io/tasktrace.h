/*
 * tasktrace.h — reading task-level traces: jobs of many short tasks, in
 * the format of the Hawk and Eagle simulators (EPFL), which the public
 * Google 2011 and Yahoo subsets of ../shared/data/traces/tasks use:
 *
 *   submission_time  number_of_tasks  mean_task_duration  d1 d2 ... dn
 *
 * one job per line, whitespace-separated, times in seconds, each d one
 * task's run time on one slot. Lines must come in order of submission
 * time. Blank lines and lines starting with '#' are skipped (slaq's own
 * test workloads carry a comment). The reader refuses anything else with
 * the file, line and field named, and caps what a file may make it
 * allocate.
 */
#ifndef SLAQ_IO_TASKTRACE_H
#define SLAQ_IO_TASKTRACE_H

#include <stddef.h>
#include <stdio.h>

#define TT_MAX_JOBS 10000000     /* jobs (lines) in one trace */
#define TT_MAX_TASKS 50000000    /* tasks in one trace, all jobs */
#define TT_MAX_JOB_TASKS 1000000 /* number_of_tasks of one job */
#define TT_MAX_SECONDS 1e10      /* any time or duration at most */
#define TT_MAX_LINE (64 << 20)   /* bytes of one line (a job of
                                    TT_MAX_JOB_TASKS tasks of 40 bytes) */

/* A trace: jobs in submission order, their tasks one array. */
typedef struct tt_workload {
    size_t njobs, ntasks;
    double *arrival;   /* per job: submission_time as given */
    double *est;       /* per job: mean_task_duration, the estimate a
                          scheduler is given of each of its tasks */
    size_t *first;     /* per job: its first task's index in dur;
                          first[njobs] = ntasks */
    double *dur;       /* per task: its run time on one slot */
    size_t jcap, tcap; /* capacities of the job and task arrays */
} tt_workload;

/*
 * Reads the trace at path ("-" for stdin) into *out (which the caller
 * frees with tt_free, also after an error). Returns 0, or -1 with err
 * (errlen bytes) saying where and what, e.g.
 *   "jobs.tr line 3: field 5 (task 2's duration) must be a number from 0
 *    to 1e+10, got 'x'"
 */
int tt_read(const char *path, tt_workload *out, char *err, size_t errlen);
/* The same from an open stream; name is used in messages. */
int tt_read_stream(FILE *f, const char *name, tt_workload *out, char *err,
                   size_t errlen);

/* Appends a job; 0, or -1 when out of memory or past a cap. The tasks'
 * durations are copied. */
int tt_push(tt_workload *w, double arrival, double est, const double *dur,
            size_t ntasks);

void tt_free(tt_workload *w);

#endif
