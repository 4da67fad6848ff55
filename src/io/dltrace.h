/*
 * dltrace.h — reading deep-learning job traces with deadlines, in the
 * CSV format of microsoft/elasticflow-traces (ElasticFlow, ASPLOS'23):
 *
 *   job_id,submission_time,num_iteration,model_name,deadline,batch_size,
 *   num_gpu,duration
 *
 * one job per line after that header; times in seconds, `deadline`
 * absolute, `duration` the job's run time on num_gpu GPUs. `slaq sim
 * --deadlines --trace FILE` replays them (docs/deadlines.md). The reader
 * refuses anything else with the file, line and field named, and caps
 * every value so that no file can make a replay unbounded.
 */
#ifndef SLAQ_IO_DLTRACE_H
#define SLAQ_IO_DLTRACE_H

#include <stddef.h>
#include <stdio.h>

#define DLT_MAX_JOBS 1000000  /* jobs in one trace */
#define DLT_MAX_GPUS 4096     /* num_gpu at most */
#define DLT_MAX_SECONDS 1e9   /* times and durations at most */
#define DLT_MAX_LINE 4096     /* bytes of one line */

typedef struct dlt_job {
    double submit;    /* submission_time, >= 0 */
    double deadline;  /* absolute, >= submit */
    double duration;  /* > 0: seconds on num_gpu GPUs */
    unsigned gpus;    /* 1..DLT_MAX_GPUS */
    size_t line;      /* 1-based line it came from */
} dlt_job;

typedef struct dlt_trace {
    dlt_job *jobs;    /* in file order */
    size_t n;
} dlt_trace;

/*
 * Reads the trace at `path`. Returns 0 with at least one job, or -1 with
 * a message such as "c.csv:12: field 'num_gpu': expected a whole number
 * from 1 to 4096, got 'x'" in err and t empty.
 */
int dlt_read(const char *path, dlt_trace *t, char *err, size_t errlen);
/* The same from an open stream (not closed); path names it in messages. */
int dlt_read_stream(FILE *f, const char *path, dlt_trace *t, char *err,
                    size_t errlen);
void dlt_free(dlt_trace *t);

#endif
