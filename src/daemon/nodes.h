/*
 * nodes.h — a controller's nodes (nodes.c, docs/cluster.md): the table of
 * them, a job's node, and the messages about a job sent to their agents.
 */
#ifndef SLAQ_DAEMON_NODES_H
#define SLAQ_DAEMON_NODES_H

#include <jansson.h>
#include <stdint.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_conn sd_conn;

#define SD_MAX_NODES 4096

typedef struct sd_node {
    char name[64];
    double cores;
    char enforce[16];
    sd_conn *conn;        /* the agent's connection, NULL while away */
    double last_seen;     /* monotonic: its last message */
    double last_seen_wall;
    uint64_t seen_epoch;  /* the controller's epoch at its last message */
    double joined;        /* wall clock of its (last) register */
    int up;               /* 0: down (silent too long, or never back) */
    double down_since;    /* monotonic: when it went down (up: 0) */
    uint64_t reports;     /* relayed reports received */
} sd_node;

/* The node called name, created (up, away) when new and `create` is set;
 * -1 if there is none, or the table is full or out of memory. */
int node_find(sd_daemon *d, const char *name, int create);
/* The name of the node a remote job runs on, "?" for none. */
const char *node_name(const sd_daemon *d, const sd_job *j);
/* The core's node for a job entering the scheduler: the node it runs on,
 * else its --node pin, else SLAQ_NODE_ANY. */
int node_of_job(sd_daemon *d, const sd_job *j);
/* Whether node is up with its agent connected. */
int node_ready(const sd_daemon *d, int node);
/* Sends m (taken) to node's agent, if it is connected. */
void node_send(sd_daemon *d, int node, json_t *m);
/* Asks the agent of remote job j to stop it (now: at once, as slaq cancel
 * --now); nothing for a job that is not remote. */
void node_send_stop(sd_daemon *d, sd_job *j, int now);
/* The start message an agent's job_submit_as takes for job j, with the
 * submitter's environment env (NULL: none); NULL if out of memory. */
json_t *node_launch_msg(const sd_job *j, json_t *env);
/* At start: a job recorded on a node waits for its agent to come back. */
int node_restore_job(sd_daemon *d, sd_job *j, const char *node);

#endif
