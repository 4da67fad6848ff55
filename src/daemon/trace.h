/*
 * trace.h — the timeline, forecast and predictor-error views (trace.c).
 */
#ifndef SLAQ_DAEMON_TRACE_H
#define SLAQ_DAEMON_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

/* Before slaq_sched_epoch: scores each job's forecast against the reports
 * that arrived since it was fitted. */
void trace_before_epoch(sd_daemon *d);
/* After the epoch's allocations are applied: records a timeline frame. */
void trace_after_epoch(sd_daemon *d, double now);
void trace_free(sd_daemon *d);
/* GET /api/timeline: {"t":[...], "jobs":{ID:{"id","name","norm_loss":[...],
 * "cores":[...]}}, "stride_epochs":N}, the series aligned with t, only the
 * frames after `since` (wall-clock seconds; 0: all). New reference. */
json_t *trace_timeline_json(sd_daemon *d, double since);
/* GET /api/jobs/ID/forecast: the job's reports and its forecast ahead. */
json_t *trace_forecast_json(sd_daemon *d, const sd_job *j);
/* The job's forecast error: the mean |forecast − reported| one epoch
 * ahead in units of its loss range L(0) − min L (slaq_eval_curve's
 * normalised error, with the range of the reports so far: for an ended
 * job, of its whole curve); NAN until measured. */
double trace_forecast_error(const sd_job *j);
/* The same over every job slaqd holds, each report weighing the same. */
double trace_forecast_error_all(sd_daemon *d);

/* L_end of the job's normalised loss (slaq_norm_loss): the core's
 * slaq_job_end_loss while it is active, the one it had when it ended
 * after; NAN while unknown. */
double trace_end_loss(const sd_job *j);

/* Predicted seconds until the job's loss has fallen by 90 % of its
 * predicted total reduction at its current allocation: 0 if it has, NAN if
 * unknown (inactive, fewer than two reports), INFINITY if never. */
double trace_eta90(const sd_job *j);

#endif
