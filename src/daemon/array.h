/*
 * array.h — task arrays (array.c, docs/arrays.md): many short one-core
 * tasks of one command, and the node queues that hold them.
 */
#ifndef SLAQ_DAEMON_ARRAY_H
#define SLAQ_DAEMON_ARRAY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/record.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_user sd_user;

#define SD_MAX_ARRAY 100000       /* tasks in one array at most */
#define SD_ENQUEUE_MAX 256        /* tasks in one "enqueue" message */
#define SD_AGENT_QUEUE_MAX 4096   /* tasks an agent's queue holds at most */
#define SD_MAX_INDEX 1000000000L  /* the largest task index */

/* A submit with "array": records the array and starts what may start;
 * NULL with err filled. */
sd_array *array_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                       char *err, size_t errlen);
sd_array *array_get(sd_daemon *d, int64_t id);
/* Starts pending tasks while this machine has cores no ML job may use
 * (docs/arrays.md, "Cores"): after a submit, and after a task's end and
 * every tick (job_dispatch, epoch.c). Not on a node agent, which has no arrays: it starts
 * the tasks its controller queued there (agent_start_queued). */
void array_dispatch(sd_daemon *d);
/* job_finish's: a task ended (its array counts it, its core is free). */
void array_task_ended(sd_daemon *d, sd_job *j);
/* A task's pid has exited (job_reap_children): 1 if it was a task's. */
int array_reap(sd_daemon *d, pid_t pid, int status);
/* Every tick (job_tick): each task's part of it (job_watch). */
void array_tick(sd_daemon *d);
/* The array as `ls` (detail 0) or `show` (1) shows it. */
json_t *array_json(sd_daemon *d, const sd_array *a, int detail);
/* Pending index `index` of a, as show lists a task that has no job. */
json_t *array_pending_json(const sd_array *a, long index);
/* A controller: node idx is down; its queued tasks go back to their
 * arrays, its running ones are lost. */
void array_node_lost(sd_daemon *d, int idx, const char *why);
/* A controller: node idx (re)registered, running the jobs have[0..n)
 * (ids; negative: an earlier generation). Its queued tasks that it runs
 * now are running; the others go back to their arrays. */
void array_node_registered(sd_daemon *d, int idx, const int64_t *have,
                           size_t n);
/* A controller: a queued task's agent started it. */
void array_task_running(sd_daemon *d, sd_job *j);
/* An agent: a task the controller queued here has started. */
int array_task_add(sd_daemon *d, sd_job *j);
/* The cores tasks may take on this machine now (agent or single slaqd). */
double array_task_room(sd_daemon *d);
/* Each node's queue of tasks (docs/arrays.md, "Node queues"). */
json_t *array_queue_json(sd_daemon *d);
/* Whether the array has pending or running tasks. */
int array_active(sd_daemon *d, const sd_array *a);
/* Cancels every task of a not yet ended (0), or only index (1 task);
 * -1 with err filled. */
int array_cancel(sd_daemon *d, sd_array *a, long index, int now, char *err,
                 size_t errlen);
/* --array's "A-B[%K]" (array.c states it); 0, or -1 with err filled. */
int array_parse_range(const char *s, long *first, long *last, unsigned *k,
                      char *err, size_t errlen);
/* "ID" or "ID_N" (a task of array ID): the array (and *index, -1 for the
 * whole array), or NULL. */
sd_array *array_parse_ref(sd_daemon *d, json_t *v, long *index);
/* After the jobs are restored: the arrays, their tasks counted. */
int array_restore(sd_daemon *d);
void array_free_all(sd_daemon *d);

#endif
