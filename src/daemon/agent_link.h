/*
 * agent_link.h — the controller's side of the agent protocol (agent_link.c,
 * docs/cluster.md): its nodes' agents, placing and moving jobs on them
 * (the table of nodes is nodes.h's).
 */
#ifndef SLAQ_DAEMON_AGENT_LINK_H
#define SLAQ_DAEMON_AGENT_LINK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_conn sd_conn;

#define SD_ALLOCS_FULL_EVERY 16       /* epochs between full allocs messages */
#define SD_NODE_SILENT_EPOCHS 3   /* heartbeats missed before a node is down */
#define SD_PIN_WAIT_S 300.0       /* --pin-wait's default */
/* The policy's moves (ctl_policy_moves; docs/deadlines.md): MLFS's
 * h_r and p_s, and how long a moved job stays before it may move again
 * (the simulator's hold, 10 minutes). */
#define SD_MOVE_H_R 0.9
#define SD_MOVE_P_S 0.1
#define SD_MOVE_HOLD_S 600.0

/* The largest process id any Linux kernel gives (PID_MAX_LIMIT): an
 * agent's pid outside 2 .. SD_PID_MAX is refused (agent_link.c). */
#define SD_PID_MAX 4194304

int ctl_listen(sd_daemon *d, const char *addr);
/* A message on an agent connection (c->agent), once its link is open. */
void ctl_message(sd_daemon *d, sd_conn *c, json_t *msg);
/* A handshake line on an agent connection whose link is not open yet. */
void ctl_handshake(sd_daemon *d, sd_conn *c, const char *line,
                       size_t len);
void ctl_conn_closed(sd_daemon *d, sd_conn *c);
/* An agent hung up on this controller's challenge: it did not take the
 * proof of its node's key (logged, limited, with what to do). */
void ctl_proof_refused(sd_daemon *d, const sd_conn *c);
/* Starts a submitted job (fields filled, not yet forked) on a node;
 * 0, or -1 with err filled (the caller frees the job). */
int ctl_launch(sd_daemon *d, sd_job *j, json_t *env, char *err,
                   size_t errlen);
/* slaq move: asks the agent of running job j to stop it with its
 * checkpoint saved, then starts it on node `node` from that checkpoint
 * (its id, history and reports kept; the old instance fenced). 0 once
 * asked, or -1 with err saying why it cannot move. */
int ctl_move(sd_daemon *d, sd_job *j, const char *node, char *err,
                 size_t errlen);
/* Right after the epoch, under a policy that moves jobs (mlfs-h, mlfs)
 * and --policy-moves on: MLF-H's moves off overloaded nodes
 * as the core plans and weighs them (slaq_mlfs_plan) among the jobs that
 * may move and did not in the last SD_MOVE_HOLD_S, each move it makes
 * carried out as a slaq move. */
void ctl_policy_moves(sd_daemon *d);

/* After each epoch: allocations to the agents, silent nodes marked down. */
void ctl_epoch(sd_daemon *d);
json_t *ctl_nodes_json(sd_daemon *d);

#endif
