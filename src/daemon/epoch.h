/*
 * epoch.h — what drives slaqd's jobs (epoch.c): the epoch, the tick,
 * children reaped, and what the modules above the job table do at a
 * job's end.
 */
#ifndef SLAQ_DAEMON_EPOCH_H
#define SLAQ_DAEMON_EPOCH_H

typedef struct sd_daemon sd_daemon;

/* Registers with the job table (jobs.c) and suspend.c what the modules
 * above them do when a job ends or is launched on a controller, or a
 * sweep's suspension is answered (d->job_ending and the others). Once,
 * before any job is made or restored. */
void job_modules_init(sd_daemon *d);
void job_epoch(sd_daemon *d);
void job_tick(sd_daemon *d);
/* Reaps exited children: a task's (array.c) or a job's. */
void job_reap_children(sd_daemon *d);
/* Starts the tasks that may start now: on a node agent those of its
 * queue (agent.c), elsewhere those of the arrays (array.c). */
void job_dispatch(sd_daemon *d);

#endif
