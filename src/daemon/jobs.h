/*
 * jobs.h — the job table (jobs.c): starting and attaching, reports,
 * allocations, stopping and a job's end. The epoch and the tick that
 * drive it are epoch.h's; a job's record and its states record.h's.
 */
#ifndef SLAQ_DAEMON_JOBS_H
#define SLAQ_DAEMON_JOBS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/slaq.h"
#include "slaq/deadline.h"
#include "daemon/record.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_conn sd_conn;
typedef struct sd_array sd_array;
typedef struct sd_user sd_user;

#define SD_ADVICE_WAIT_S 2.0          /* a lower share waits at most this
                                         for the job to follow its thread
                                         advice (job_apply_alloc) */
#define SD_MAX_NAME 200               /* bytes in a job's name */

/* The longest metric name a job may declare (hello/info "metric_name"). */
#define SD_METRIC_NAME_MAX 64

/* Task `index` of array a as a submit request: its command ({index}
 * replaced), directory, name and environment (SLAQ_ARRAY_INDEX and
 * SLAQ_ARRAY_ID added); NULL when out of memory. */
json_t *job_task_req(const sd_array *a, long index);
/* An agent's: starts a task the controller queued here (job id and
 * secret given, as job_submit_as). */
sd_job *job_submit_task_as(sd_daemon *d, json_t *req, int64_t id,
                           const char *secret, const sd_user *owner,
                           int64_t array, long index, char *err,
                           size_t errlen);
/* Fills j->secret with fresh random hex digits: 0, or -1. */
int job_new_secret(sd_job *j);
/* Starts task `index` of array a as a process of its own; NULL with err
 * filled. */
sd_job *job_start_task(sd_daemon *d, sd_array *a, long index, char *err,
                       size_t errlen);
/* Takes id (> every id in use) for a record that is not a job (a task
 * array's): 0, or -1. */
int job_reserve_id(sd_daemon *d, int64_t id);
/* Records a task that never ran (cancelled, or its start failed) as a
 * finished job; NULL when out of memory. */
sd_job *job_task_record(sd_daemon *d, sd_array *a, long index,
                        sd_state state, const char *reason);
/* A submit's "cmd" (a non-empty array of strings) and "env" (absent, or
 * an array): 0, or -1 with a message naming the field. */
int job_check_cmd(json_t *cmd, json_t *env, char *err, size_t errlen);
/* A submit's optional goal fields, "deadline" (Unix time), "accuracy",
 * "direction" ("max" or "min") and "urgency" (1-10), into g (the defaults
 * where absent). 0, or -1 with a message naming the field. */
int job_goal_get(json_t *req, slaq_goal *g, char *err, size_t errlen);
/* A request's or hello's optional "convergence" field: 0 when absent
 * (out untouched), 1 with *out set, -1 with a message naming the field. */
int job_convergence_get(json_t *msg, slaq_convergence *out, char *err,
                        size_t errlen);
/* The job declares its convergence class (hello/info): the core's job
 * gets it (its predictor is made anew) and state.db records it. */
int job_declare_convergence(sd_daemon *d, sd_job *j, slaq_convergence c);
/* What a job declares of itself in hello or info ("iters", "convergence",
 * "metric_name", and with with_kind "kind"), applied to j; a bad value is
 * answered with an error on c, the job's session, and ignored. */
void job_declare(sd_daemon *d, sd_conn *c, sd_job *j, json_t *msg,
                 int with_kind);
/* Creates a job record (not yet started); NULL when out of memory. */
sd_job *job_new(sd_daemon *d, int64_t id);
/* Starts a managed job from a submit request, run as `owner` (whom the
 * caller vouches for: never a field of the request); on failure fills
 * err. */
sd_job *job_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                   char *err, size_t errlen);
/* Creates an attached (cooperative) job for a client's hello, owned by
 * the connection's user. */
sd_job *job_attach(sd_daemon *d, const char *name, pid_t pid,
                   const sd_user *owner);
/* Enters the scheduler (state must be active). */
int job_schedule(sd_daemon *d, sd_job *j);
/* Makes the job's scheduler entry a `kind` job (SLAQ_JOB_*; a query's
 * mini-batches then go to aqpd.c); only before its first report. -1 with
 * a message otherwise. */
int job_set_kind(sd_daemon *d, sd_job *j, int kind, char *err,
                 size_t errlen);
/* Gives job j's (new) scheduler entry its stored reports: a query's
 * mini-batches with their estimates through the query path (its progress
 * metric, predictor and dashboard points are rebuilt), other jobs' reports
 * as they are. `count`: also count them in j's own fields (a job restored
 * after a restart starts from none; one placed again has them). */
void job_replay_history(sd_daemon *d, sd_job *j, int count);
/* Handles one iteration report; returns 0 or fills err. */
int job_report(sd_daemon *d, sd_job *j, json_t *msg, char *err, size_t errlen);
/* A report that reaches a job after it ended because its node was lost
 * (its agent acknowledged it to the job and sends it on when it is back):
 * only recorded, in order, the job's core state being gone. 0 stored, 1
 * already had, -1 refused with err filled. */
int job_report_late(sd_daemon *d, sd_job *j, json_t *msg, char *err,
                    size_t errlen);

/* Asks a job to stop (reason "cancelled" for a user's cancel). */
void job_stop(sd_daemon *d, sd_job *j, const char *reason);
/* A user's cancel: job_stop(d, j, "cancelled"), and with `now` SIGTERM at
 * once rather than after the grace period. */
void job_cancel(sd_daemon *d, sd_job *j, int now);
/* The job's process ended (status known if have_status) or its attached
 * client left. Moves it to its final state and out of the scheduler; the
 * modules above hear of it (d->job_ending, d->job_ended: epoch.c). */
void job_finish(sd_daemon *d, sd_job *j, int have_status, int status,
                sd_state state_if_unknown, const char *why);
/* One job's part of the tick: an adopted process gone, a stop's next
 * signal due (a task's too: array_tick). */
void job_watch(sd_daemon *d, sd_job *j, double mono);
void job_free_all(sd_daemon *d);
void job_free_one(sd_job *j);
/* Removes finished jobs beyond --keep-jobs or older than --keep-days from
 * memory, the database and the log directory (a bounded batch per call,
 * every few seconds). */
void job_expire(sd_daemon *d);
/* Sends the job its current allocation (and its stop request) on c. */
void job_greet(sd_daemon *d, sd_job *j, sd_conn *c);
/* Reloads jobs from the store at start; re-adopts live processes. */
int job_restore(sd_daemon *d);
json_t *job_json(sd_daemon *d, const sd_job *j, int detail);

/* The directory of the checkpoints of user uid's jobs:
 * STATE/checkpoints for slaqd's own user, STATE/user-checkpoints/uid-N
 * (that user's) for another. */
void job_checkpoint_dir(const sd_daemon *d, uid_t uid, char *out,
                        size_t len);

/* A job name is at most SD_MAX_NAME bytes, without control characters;
 * returns 0 or fills err. */
int job_name_check(const char *name, char *err, size_t errlen);

/* Each of the core's nodes as MLFS's moves and load control see
 * it under slaqd (its cores, its jobs' core demand; cores stand for
 * memory too, which slaqd does not know). calloc'ed, NULL if out of
 * memory. */
struct slaq_node_use *job_node_use(sd_daemon *d);

/* Applies an allocation to a job (enforcement, store, its client) */
void job_apply_alloc(sd_daemon *d, sd_job *j, double cores, double now);
/* Starts a job from a request as `owner`; with id > 0 (an agent
 * starting the controller's job) under that id and secret. */
sd_job *job_submit_as(sd_daemon *d, json_t *req, int64_t id,
                      const char *secret, const sd_user *owner, char *err,
                      size_t errlen);

#endif
