/*
 * agent.h — the node agent's side of the agent protocol (agent.c).
 */
#ifndef SLAQ_DAEMON_AGENT_H
#define SLAQ_DAEMON_AGENT_H

#include <jansson.h>
#include <stddef.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_conn sd_conn;

int agent_start(sd_daemon *d);
void agent_message(sd_daemon *d, sd_conn *c, json_t *msg);

/* A handshake line from the controller before the link is open. */
void agent_handshake(sd_daemon *d, sd_conn *c, const char *line,
                     size_t len);
void agent_conn_closed(sd_daemon *d, sd_conn *c);
void agent_tick(sd_daemon *d);
/* Relays a job's accepted report (or info) to the controller. */
void agent_relay(sd_daemon *d, sd_job *j, json_t *msg);
void agent_job_ended(sd_daemon *d, sd_job *j);
/* At exit with --end-jobs-at-exit: SIGTERM to every job, SIGKILL to those
 * left after the grace period (at most 3 s: Slurm's KillWait may be 5). */
void agent_end_jobs(sd_daemon *d);
/* Starts the tasks of this agent's queue while it has cores for them. */
void agent_start_queued(sd_daemon *d);

#endif
