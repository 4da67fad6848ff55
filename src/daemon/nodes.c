/*
 * nodes.c — a controller's nodes (docs/cluster.md): the table of them
 * (d->nodes, its index the core's node), a job's node, and the messages
 * about one job that go to a node's agent: its start and its stop.
 *
 * The job table, suspensions and task arrays use these as well as the
 * agents' link (agent_link.c), which registers nodes, hears from their
 * agents and moves jobs between them. They are here, below all of those,
 * so that the table can stop a remote job or name its node without
 * including the link, which uses the table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/nodes.h"
#include "daemon/record.h"

int node_find(sd_daemon *d, const char *name, int create)
{
    for (size_t i = 0; i < d->nnodes; i++)
        if (!strcmp(d->nodes[i].name, name))
            return (int)i;
    if (!create || d->nnodes >= SD_MAX_NODES)
        return -1;
    /* The core's node with the same index, with no cores until its
     * agent registers (node 0 exists from the start). */
    if (d->nnodes > 0 && slaq_sched_add_node(d->sched, 0) != (int)d->nnodes)
        return -1;
    sd_node *nn = realloc(d->nodes, (d->nnodes + 1) * sizeof *nn);
    if (!nn)
        return -1;
    d->nodes = nn;
    sd_node *n = &d->nodes[d->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->last_seen = sd_mono();
    n->last_seen_wall = sd_now();
    n->seen_epoch = d->epoch_no;
    n->up = 1;
    return (int)d->nnodes++;
}

const char *node_name(const sd_daemon *d, const sd_job *j)
{
    if (!SD_REMOTE(j) || (size_t)j->place.node >= d->nnodes)
        return "?";
    return d->nodes[j->place.node].name;
}

/* Placement and the pending queue are the core's (slaq_sched_add with
 * config.queue, docs/cluster.md): slaqd only maps its node indices,
 * which are d->nodes' indices, to agents. */
int node_of_job(sd_daemon *d, const sd_job *j)
{
    if (j->place.node >= 0)
        return j->place.node;
    if (j->place.pin) {
        int i = node_find(d, j->place.pin, 0);
        if (i >= 0)
            return i;
    }
    return SLAQ_NODE_ANY;
}

int node_ready(const sd_daemon *d, int node)
{
    return d->nodes[node].up && d->nodes[node].conn != NULL;
}

void node_send(sd_daemon *d, int node, json_t *m)
{
    sd_conn *c = d->nodes[node].conn;
    if (c && m)
        conn_send(d, c, m);
    json_decref(m);
}

void node_send_stop(sd_daemon *d, sd_job *j, int now)
{
    if (!SD_REMOTE(j))
        return;
    node_send(d, j->place.node,
              json_pack("{s:s, s:I, s:s, s:b}", "type", "stop", "job",
                        (json_int_t)j->id, "reason",
                        j->reason ? j->reason : "stopped", "now", now));
}

/* Its "env" is the submitter's environment exactly as submitted, or
 * absent when none was (the agent's own then, as with a single slaqd);
 * nothing of this slaqd's is added (docs/protocol.md, "start"). A
 * restartable job's "checkpoint_dir" is set when it is fenced
 * (agent_link.c). */
json_t *node_launch_msg(const sd_job *j, json_t *env)
{
    json_t *cmd = json_loads(j->cmd, 0, NULL);
    /* "uid" and "user": the submitter, whom the agent runs it as. */
    json_t *m = json_pack("{s:s, s:I, s:s, s:o, s:s, s:I, s:s}", "type",
                          "start", "job", (json_int_t)j->id, "name", j->name,
                          "cmd", cmd ? cmd : json_array(), "cwd", j->cwd,
                          "uid", (json_int_t)j->uid, "user", j->user);
    if (!m)
        return NULL;
    if (env)
        json_object_set_new(m, "env", json_deep_copy(env));
    if (isfinite(j->goals.max_cores)) /* its agent leaves tasks the rest */
        json_object_set_new(m, "max_cores", json_real(j->goals.max_cores));
    if (j->resumed_from) /* its agent renames that job's checkpoint first */
        json_object_set_new(m, "resume_from", json_integer(j->resumed_from));
    return m;
}

int node_restore_job(sd_daemon *d, sd_job *j, const char *node)
{
    j->place.remote = 1;
    j->place.restarts = j->place.gen > 1 ? j->place.gen - 1 : 0;
    if (!node || (j->state == SD_PENDING && !j->array)) { /* placed again
                                                              by the core */
        j->place.node = -1;
        j->state = SD_PENDING;
        return 0;
    }
    int idx = node_find(d, node, 1);
    if (idx < 0)
        return -1;
    j->place.node = idx;
    return 0;
}
