/*
 * agent_link.c — the controller's side of the agent protocol
 * (docs/protocol.md, "Agents"; docs/cluster.md).
 *
 * With --agents ADDR:PORT, slaqd is a controller: node agents (slaqd
 * --agent, one per machine) connect there, name their node, prove with
 * this side that both hold that node's key (derived here from the agent
 * token, the cluster secret) and open a sealed link (link.h), and
 * register that node, and no other. A submitted job is placed on a node
 * and started by that node's agent; the agent relays its reports and its
 * exit, and this slaqd divides the cores every epoch as it always does,
 * sending each node the allocations of its jobs. A job run by an agent
 * is "remote" here (SD_REMOTE): it has no process on this machine, and
 * every step that would touch one (signals, enforcement, reaping) is the
 * agent's.
 *
 * A node whose agent is silent for SD_NODE_SILENT_EPOCHS epochs is down:
 * its jobs are lost, or started again on another node when they declared
 * themselves restartable. A node that registers again re-adopts the jobs
 * this controller still counts as running there (after a restart of
 * either side), and is told to stop those it does not.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>

#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/agent_link.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/jobs.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/nodes.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "slaq/deadline.h"

int ctl_listen(sd_daemon *d, const char *addr)
{
    if (sd_link_key(d) < 0)
        return -1;
    if (conn_listen_at(d, addr, &d->agents_h, "--agents") < 0)
        return -1;
    /* With port 0 the kernel picks one: STATE/agents.port tells which
     * (slaq cluster up's batch script reads it). */
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    unsigned port = 0;
    if (getsockname(d->agents_h.fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/agents.port", d->cfg.state_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 ||
        rename(tmp, path) < 0) {
        sd_log(d, 0, "%s: %s", path, strerror(errno));
        return -1;
    }
    sd_log(d, 0, "agent listener on %s, port %u (each node's key required)",
           addr, port);
    return 0;
}

/* STATE/nodes.json: the nodes as `slaq nodes --json` shows them, for
 * `slaq cluster up`, which waits for the agents without a connection to
 * the controller. Written whenever a node comes or goes. */
static void nodes_file(sd_daemon *d)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/nodes.json", d->cfg.state_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    json_t *o = json_pack("{s:o, s:f}", "nodes", ctl_nodes_json(d),
                          "written", sd_now());
    if (!o || json_dump_file(o, tmp, JSON_COMPACT) < 0 ||
        rename(tmp, path) < 0)
        sd_log(d, 1, "%s: cannot write it", path);
    json_decref(o);
}

static void send_msg(sd_daemon *d, sd_conn *c, json_t *m)
{
    if (c && m)
        conn_send(d, c, m);
    json_decref(m);
}

static void send_err(sd_daemon *d, sd_conn *c, const char *code,
                     const char *msg)
{
    send_msg(d, c, json_pack("{s:s, s:s, s:s}", "type", "error", "code",
                             code, "message", msg));
}

/* ------------------------------------------------------------ placement */

/* ---------------------------------------------------------------- start */

/* Sends j's start message to its node's agent. */
static void send_start(sd_daemon *d, sd_job *j)
{
    sd_node *n = &d->nodes[j->place.node];
    json_object_set_new(j->place.launch, "secret", json_string(j->secret));
    send_msg(d, n->conn, json_incref(j->place.launch));
}

/* ------------------------------------------------------------- fencing */

/*
 * Begins job j's next generation (the first at its start, one more each
 * time it is started again after its node was lost). From then on only
 * messages of that generation count (node_job): an earlier instance that
 * still runs on a node that comes back can neither report nor end the
 * job. A restartable job's checkpoints are fenced too: each generation's
 * SLAQ_CHECKPOINT_DIR is STATE/checkpoints/ID/gen-G, and the new one is
 * the earlier one's directory, renamed. The rename is atomic and is the
 * fence: the new generation starts from the last checkpoint the earlier
 * one completed (written to a temporary file and renamed in, as
 * slaq-train does), and whatever the earlier one writes afterwards goes
 * to a directory that no longer exists (its writes fail), never over the
 * new one's checkpoint.
 */
static void job_fence(sd_daemon *d, sd_job *j)
{
    j->place.gen++;
    json_object_set_new(j->place.launch, "gen", json_integer(j->place.gen));
    if (!j->place.restartable)
        return;
    char base[4200], from[4300], to[4300];
    char *abs = realpath(d->cfg.state_dir, NULL);
    snprintf(base, sizeof base, "%s/checkpoints", abs ? abs
                                                      : d->cfg.state_dir);
    free(abs);
    mkdir(base, 0700);
    snprintf(base + strlen(base), sizeof base - strlen(base), "/%lld",
             (long long)j->id);
    mkdir(base, 0700);
    snprintf(from, sizeof from, "%s/gen-%u", base, j->place.gen - 1);
    snprintf(to, sizeof to, "%s/gen-%u", base, j->place.gen);
    if (j->place.gen > 1 && rename(from, to) < 0 && errno != ENOENT)
        sd_log(d, 0, "job %lld: cannot move %s to %s: %s", (long long)j->id,
               from, to, strerror(errno));
    if (mkdir(to, 0700) < 0 && errno != EEXIST)
        sd_log(d, 0, "job %lld: cannot create %s: %s", (long long)j->id, to,
               strerror(errno));
    /* The generation's directory is the job's SLAQ_CHECKPOINT_DIR on its
     * agent ("checkpoint_dir"); one the submitter's environment names
     * would let an old generation write where the new one reads, so it
     * is taken out. */
    json_t *env = json_object_get(j->place.launch, "env");
    for (size_t i = json_array_size(env); i-- > 0;) {
        const char *kv = json_string_value(json_array_get(env, i));
        if (kv && !strncmp(kv, "SLAQ_CHECKPOINT_DIR=", 20))
            json_array_remove(env, i);
    }
    json_object_set_new(j->place.launch, "checkpoint_dir", json_string(to));
    if (j->place.gen > 1) {
        char detail[32];
        snprintf(detail, sizeof detail, "generation %u", j->place.gen);
        store_event(d->store, sd_now(), j->id, "fence", detail);
    }
}

/* The generation an agent's message about a job speaks for: its "gen", or
 * 1 without one (a first start); 0 if it is not a positive integer. */
static unsigned msg_gen(json_t *msg)
{
    json_t *g = json_object_get(msg, "gen");
    if (!g)
        return 1;
    if (!json_is_integer(g) || json_integer_value(g) < 1 ||
        json_integer_value(g) > UINT32_MAX)
        return 0;
    return (unsigned)json_integer_value(g);
}

/* Starts j on the node the core placed it on. */
static void start_on(sd_daemon *d, sd_job *j, int node, const char *what)
{
    j->place.node = node;
    free(j->place.node_at);
    j->place.node_at = strdup(d->nodes[node].name);
    j->proc.pid = 0;
    j->place.alloc_sent = -1; /* its first allocation goes out in any case */
    if (j->state == SD_PENDING)
        j->state = SD_RUNNING;
    j->started = sd_now();
    store_put_job(d->store, j);
    store_event(d->store, j->started, j->id, what, d->nodes[node].name);
    send_start(d, j);
    sd_log(d, 0, "job %lld (%s): %s on node %s", (long long)j->id, j->name,
           strcmp(what, "restart") ? "started" : "started again",
           d->nodes[node].name);
}

/* Whether job j, pinned to a node, has waited for it in vain: its node
 * has been down for --pin-wait. Fills why. */
static int pin_expired(sd_daemon *d, const sd_job *j, char *why,
                       size_t len)
{
    int i = j->place.pin ? node_find(d, j->place.pin, 0) : -1;
    if (i < 0 || d->nodes[i].up || !(d->cfg.pin_wait_s > 0))
        return 0;
    double down = sd_mono() - d->nodes[i].down_since;
    if (down < d->cfg.pin_wait_s)
        return 0;
    snprintf(why, len, "it is pinned to node %s (--node), which has been "
             "down for %.0f s (--pin-wait %g)", j->place.pin, down,
             d->cfg.pin_wait_s);
    return 1;
}

int ctl_launch(sd_daemon *d, sd_job *j, json_t *env, char *err,
                   size_t errlen)
{
    if (j->place.pin && node_find(d, j->place.pin, 0) < 0) {
        snprintf(err, errlen, "no node %s has joined this controller (slaq "
                 "nodes lists them)", j->place.pin);
        return -1;
    }
    if (pin_expired(d, j, err, errlen))
        return -1;
    j->place.launch = node_launch_msg(j, env);
    if (!j->place.launch) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    j->place.gen = 0;
    job_fence(d, j);
    j->place.remote = 1;
    j->place.node = -1;
    j->state = SD_PENDING;
    if (job_schedule(d, j) < 0) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "submit", NULL);
    if (store_flush(d->store) < 0) {
        snprintf(err, errlen, "slaqd cannot write its database (%s); the "
                 "job was not started", store_error(d->store));
        slaq_sched_remove(d->sched, j->sj);
        j->sj = NULL;
        goto err;
    }
    int node = slaq_job_node(j->sj);
    if (node >= 0)
        start_on(d, j, node, "start");
    else
        sd_log(d, 0, "job %lld (%s): pending (no node has room)",
               (long long)j->id, j->name);
    store_flush(d->store);
    return 0;
err:
    json_decref(j->place.launch);
    j->place.launch = NULL;
    j->place.remote = 0;
    j->state = SD_RUNNING;
    return -1;
}

/* ---------------------------------------------------------------- faults */

/* A job whose node was lost: placed again by the core (its history kept)
 * and started from its checkpoint when it may be, else lost. */
static void job_node_lost(sd_daemon *d, sd_job *j, const char *why)
{
    if (!j->place.restartable || j->state == SD_STOPPING || !j->place.launch) {
        job_finish(d, j, 0, 0, SD_LOST, why);
        return;
    }
    const char *from = d->nodes[j->place.node].name;
    sd_log(d, 0, "job %lld (%s): node %s lost; placing it again%s",
           (long long)j->id, j->name, from, j->place.move_to >= 0
           ? " (its move is given up)" : "");
    j->place.move_to = j->place.move_from = -1;
    /* Out and in again, without the pin to its old node that a job
     * restored after a restart of this controller carries. */
    slaq_sched_remove(d->sched, j->sj);
    j->sj = NULL;
    j->place.node = -1;
    j->place.restarts++;
    job_fence(d, j); /* before anything starts it again */
    j->state = SD_PENDING;
    j->enf.alloc = 0;
    if (job_schedule(d, j) < 0) {
        job_finish(d, j, 0, 0, SD_LOST, why);
        return;
    }
    job_replay_history(d, j, 0); /* a query's through the query path */
    store_put_job(d->store, j);
    int node = slaq_job_node(j->sj);
    if (node >= 0)
        start_on(d, j, node, "restart");
}

/* ----------------------------------------------------------------- moves */

/* The bytes of the regular files in dir (a generation's checkpoints), or
 * -1 if it cannot be read. */
static long long dir_bytes(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    long long sum = 0;
    struct dirent *e;
    char path[4800];
    struct stat st;
    while ((e = readdir(dp))) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            sum += (long long)st.st_size;
    }
    closedir(dp);
    return sum;
}

/* Whether job j may move now, wherever to: 0, or -1 with err saying why
 * not (slaq move's refusals; the policy's moves take only such jobs). */
static int job_movable(sd_daemon *d, sd_job *j, char *err, size_t errlen)
{
    long long id = (long long)j->id;
    if (!d->cfg.agents || !SD_REMOTE(j)) {
        snprintf(err, errlen, "job %lld does not run on a node agent: only "
                 "a cluster controller's jobs move (docs/cluster.md)", id);
        return -1;
    }
    if (j->array) {
        snprintf(err, errlen, "job %lld is task %ld of task array %lld: a "
                 "task does not move (it is short; cancel it instead)", id,
                 j->array_index, (long long)j->array);
        return -1;
    }
    if (j->kind == SLAQ_JOB_QUERY) {
        snprintf(err, errlen, "job %lld is an approximate query: a query "
                 "does not move (its estimates are not checkpointed)", id);
        return -1;
    }
    if (j->state != SD_RUNNING || j->place.node < 0) {
        snprintf(err, errlen, "job %lld is %s; only a running job moves", id,
                 j->place.node < 0 && SD_ACTIVE(j->state)
                     ? "waiting for a node"
                     : job_state_name(j->state));
        return -1;
    }
    if (!j->place.restartable || !j->place.launch) {
        snprintf(err, errlen, "job %lld is not restartable: only a job "
                 "submitted with --restartable saves the checkpoint a move "
                 "starts it again from", id);
        return -1;
    }
    if (j->place.move_to >= 0 || j->place.move_from >= 0) {
        snprintf(
            err, errlen,
            "job %lld is being moved already (to node "
            "%s); wait for its first report there",
            id,
            d->nodes[j->place.move_to >= 0 ? j->place.move_to : j->place.node]
                .name);
        return -1;
    }
    if (j->proc.suspended || j->place.op_wait) {
        snprintf(err, errlen, "job %lld is %s; resume it first", id,
                 j->proc.suspended ? "suspended"
                                   : "being suspended or resumed");
        return -1;
    }
    if (!d->nodes[j->place.node].conn) {
        snprintf(err, errlen, "job %lld runs on node %s, whose agent is not "
                 "connected: it cannot be asked to stop the job now", id,
                 d->nodes[j->place.node].name);
        return -1;
    }
    if (j->proc.pid <= 0) {
        snprintf(err, errlen, "job %lld has not started on node %s yet (its "
                 "agent has not said so); try again in a moment", id,
                 d->nodes[j->place.node].name);
        return -1;
    }
    return 0;
}

/* Asks j's agent to stop it for its move to node `to` (`by`: who moves
 * it, for the log and its events). */
static void move_ask(sd_daemon *d, sd_job *j, int to, const char *by)
{
    /* Asked as a stop (reason "move"): the job saves its checkpoint and
     * exits, as slaq-train does at any stop; the agent sends SIGTERM after
     * the grace period. Its exit carries the move out (move_exit); until
     * then it runs here as before. */
    j->place.move_to = to;
    j->place.move_t0 = sd_mono();
    j->place.moved_at = j->place.move_t0;
    char detail[200];
    snprintf(detail, sizeof detail, "from %s to %s (%s)",
             d->nodes[j->place.node].name, d->nodes[to].name, by);
    store_event(d->store, sd_now(), j->id, "move_asked", detail);
    send_msg(d, d->nodes[j->place.node].conn,
             json_pack("{s:s, s:I, s:s, s:b}", "type", "stop", "job",
                       (json_int_t)j->id, "reason", "move", "now", 0));
    sd_log(d, 0, "job %lld (%s): moving %s; stopping it with its "
           "checkpoint", (long long)j->id, j->name, detail);
}

int ctl_move(sd_daemon *d, sd_job *j, const char *node, char *err,
                 size_t errlen)
{
    long long id = (long long)j->id;
    int to = node_find(d, node, 0);
    if (job_movable(d, j, err, errlen) < 0)
        return -1;
    if (to < 0) {
        snprintf(err, errlen, "no node %s has joined this controller (slaq "
                 "nodes lists them)", node);
        return -1;
    }
    if (!node_ready(d, to)) {
        snprintf(err, errlen, "node %s is %s: a job moves only to a node "
                 "that is up", node, d->nodes[to].up ? "away" : "down");
        return -1;
    }
    if (to == j->place.node) {
        snprintf(err, errlen, "job %lld already runs on node %s", id, node);
        return -1;
    }
    if (j->place.pin && strcmp(j->place.pin, node)) {
        snprintf(err, errlen, "job %lld is pinned to node %s (slaq submit "
                 "--node): it runs there only", id, j->place.pin);
        return -1;
    }
    move_ask(d, j, to, "slaq move");
    return 0;
}

void ctl_policy_moves(sd_daemon *d)
{
    const slaq_sched_config *c = slaq_sched_get_config(d->sched);
    size_t n = slaq_sched_count(d->sched), nn = d->nnodes;
    if (!d->cfg.agents || !d->cfg.policy_moves ||
        !slaq_policy_moves(c->policy) || n == 0 || nn < 2)
        return;
    slaq_node_use *all = job_node_use(d), *use = calloc(nn, sizeof *use);
    slaq_node_use *before = malloc(nn * sizeof *before);
    double *key = malloc(n * sizeof *key), *left = malloc(n * sizeof *left);
    double *mleft = malloc(n * sizeof *mleft); /* mj index: its left */
    slaq_move_job *mj = malloc(n * sizeof *mj);
    slaq_move *mv = malloc(n * sizeof *mv);
    sd_job **who = malloc(n * sizeof *who);
    size_t *scratch = malloc(3 * n * sizeof *scratch);
    int *slot = malloc(nn * sizeof *slot); /* d->nodes index -> use's */
    size_t *node_of = malloc(nn * sizeof *node_of); /* and back */
    if (!all || !use || !before || !key || !left || !mleft || !mj || !mv ||
        !who || !scratch || !slot || !node_of ||
        slaq_sched_keys(d->sched, key) != SLAQ_OK)
        goto out;
    slaq_sched_remaining(d->sched, left);
    /* The nodes that can take a job: up, connected, with cores. */
    size_t up = 0;
    for (size_t v = 0; v < nn; v++) {
        slot[v] = -1;
        if (all[v].cores > 0 && node_ready(d, (int)v)) {
            slot[v] = (int)up;
            node_of[up] = v;
            use[up++] = all[v];
        }
    }
    double mono = sd_mono();
    char err[256];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        slaq_job *sj = slaq_sched_job(d->sched, i);
        sd_job *j = slaq_job_user(sj);
        int v = slaq_job_node(sj);
        if (v < 0 || (size_t)v >= nn || slot[v] < 0 || !SD_REMOTE(j))
            continue;
        double need = fmin(slaq_job_max_cores(sj), all[v].cores);
        if (j->place.move_to >=
            0) { /* counted where it goes, and held there */
            if (slot[j->place.move_to] >= 0) {
                slaq_node_use *a = &use[slot[v]],
                              *b = &use[slot[j->place.move_to]];
                a->use_cores -= need;
                a->use_mem -= need;
                b->use_cores += need;
                b->use_mem += need;
            }
            continue;
        }
        int movable = !j->place.pin &&
                      job_movable(d, j, err, sizeof err) == 0 &&
                      (j->place.moved_at == 0 ||
                       mono - j->place.moved_at >= SD_MOVE_HOLD_S);
        mj[m] = (slaq_move_job){(size_t)slot[v], need, need, key[i],
                                movable};
        mleft[m] = left[i];
        who[m++] = j;
    }
    /* The core's plan, each move weighed against its cost, the mean stop
     * of the moves measured so far: one that costs the job more than its
     * end comes sooner is not made. */
    double cost = d->moves_total > 0
        ? d->move_seconds_total / (double)d->moves_total : NAN;
    long k = slaq_mlfs_plan(use, before, up, mj, mleft, m, SD_MOVE_H_R,
                            SD_MOVE_P_S, cost, 1, mv, m, scratch);
    for (size_t x = 0; x < m; x++)
        mj[x].movable = 0; /* from here: its move was refused */
    for (long q = 0; q < k; q++) {
        if (!mv[q].made)
            mj[mv[q].job].movable = 1;
        else
            move_ask(d, who[mv[q].job], (int)node_of[mv[q].to],
                     "the policy's move off an overloaded node");
    }
    for (size_t x = 0; x < m; x++) {
        sd_job *j = who[x];
        if (mj[x].movable && !j->place.move_skipped) {
            d->moves_skipped_total++;
            sd_log(d, 1, "job %lld (%s): its move would cost more than it "
                   "gains; not made", (long long)j->id, j->name);
        }
        j->place.move_skipped = mj[x].movable;
    }
out:
    free(all);
    free(use);
    free(before);
    free(key);
    free(left);
    free(mleft);
    free(mj);
    free(mv);
    free(who);
    free(scratch);
    free(slot);
    free(node_of);
}

/* The exit of a job being moved: the move is carried out. Its generation
 * is fenced (the checkpoint directory renamed: the old instance can
 * neither report nor write there any more), its place in the core is the
 * new node's, and it is started there from the checkpoint. A target that
 * went down meanwhile: placed again, as for a lost node. */
static void move_exit(sd_daemon *d, sd_job *j)
{
    int from = j->place.node, to = j->place.move_to;
    const char *dir = json_string_value(json_object_get(j->place.launch,
                                                        "checkpoint_dir"));
    j->proc.checkpoint_bytes = dir ? dir_bytes(dir) : -1;
    j->place.move_to = -1;
    j->place.restarts++; /* reports of iterations it repeats are ignored */
    job_fence(d, j);
    j->enf.alloc = 0;
    j->place.move_from = from;
    if (!node_ready(d, to)) {
        sd_log(d, 0, "job %lld: node %s went away during the move; placing "
               "the job again", (long long)j->id, d->nodes[to].name);
        slaq_sched_replace(d->sched, j->sj);
        j->place.node = -1;
        j->state = SD_PENDING;
        store_put_job(d->store, j);
        int node = slaq_job_node(j->sj);
        if (node >= 0)
            start_on(d, j, node, "restart");
        return;
    }
    slaq_sched_move(d->sched, j->sj, (size_t)to);
    start_on(d, j, to, "restart");
}

/* The first report of a moved job on its new node: the move's cost,
 * recorded and counted. */
static void move_done(sd_daemon *d, sd_job *j)
{
    j->place.move_s = sd_mono() - j->place.move_t0;
    j->place.moves++;
    d->moves_total++;
    d->move_seconds_total += j->place.move_s;
    if (j->proc.checkpoint_bytes > 0)
        d->move_checkpoint_bytes += (uint64_t)j->proc.checkpoint_bytes;
    char detail[256];
    snprintf(detail, sizeof detail,
             "from %s to %s, %.3f s stopped, %lld "
             "checkpoint bytes",
             d->nodes[j->place.move_from].name, d->nodes[j->place.node].name,
             j->place.move_s, j->proc.checkpoint_bytes);
    store_event(d->store, sd_now(), j->id, "move", detail);
    store_put_job(d->store, j);
    sd_log(d, 0, "job %lld (%s): moved %s", (long long)j->id, j->name,
           detail);
    j->place.move_from = -1;
}

static void node_down(sd_daemon *d, int idx, const char *why)
{
    sd_node *n = &d->nodes[idx];
    n->up = 0;
    n->down_since = sd_mono();
    slaq_sched_set_node_cores(d->sched, (size_t)idx, 0);
    sd_log(d, 0, "node %s: down (%s)", n->name, why);
    store_event(d->store, sd_now(), 0, "node_down", n->name);
    if (n->conn) {
        sd_conn *c = n->conn;
        n->conn = NULL;
        c->node = -1;
        conn_close(d, c);
    }
    char reason[160];
    snprintf(reason, sizeof reason, "node %s was lost (%s)", n->name, why);
    /* The reports taken so far are committed first, since a job placed
     * again gets its history from the database; then one commit for all
     * of its jobs (one each took seconds for a node of thousands). */
    store_flush(d->store);
    d->flush_hold++;
    for (size_t i = slaq_sched_count(d->sched); i-- > 0;) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->place.node == idx && SD_REMOTE(j))
            job_node_lost(d, j, reason);
    }
    array_node_lost(d, idx, reason);
    d->flush_hold--;
    store_flush(d->store);
    nodes_file(d);
}

/* ---------------------------------------------------------------- epoch */

void ctl_epoch(sd_daemon *d)
{
    double mono = sd_mono();
    double silent = SD_NODE_SILENT_EPOCHS * d->cfg.sched.epoch_s;
    /* Silent for 3 epochs of this controller (not only 3 epochs' time: a
     * controller that was itself too busy to read must not blame them). */
    for (size_t i = 0; i < d->nnodes; i++)
        if (d->nodes[i].up && mono - d->nodes[i].last_seen > silent &&
            d->epoch_no - d->nodes[i].seen_epoch > SD_NODE_SILENT_EPOCHS)
            node_down(d, (int)i, "its agent was silent for 3 epochs");
    /* Jobs waiting for a node that has been down too long fail (they hold
     * up no other job meanwhile: the core passes them by). */
    for (size_t i = slaq_sched_pending(d->sched); i-- > 0;) {
        sd_job *j = slaq_job_user(slaq_sched_pending_job(d->sched, i));
        char why[256];
        if (SD_REMOTE(j) && j->place.node < 0 && pin_expired(d, j, why,
                                                       sizeof why))
            job_finish(d, j, 0, 0, SD_FAILED, why);
    }
    /* Jobs the core took from the pending queue this epoch. */
    size_t n = slaq_sched_count(d->sched);
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        int node = slaq_job_node(j->sj);
        if (SD_REMOTE(j) && j->place.node < 0 && node >= 0)
            start_on(d, j, node, j->place.restarts ? "restart" : "start");
    }
    /* One message per node: [[job, cores], ...] for the jobs whose
     * allocation changed since the last one sent (every job's, every
     * SD_ALLOCS_FULL_EVERY epochs), written as text (one json_t per job
     * costs more than the rest of the epoch's bookkeeping with thousands
     * of jobs). */
    int full = d->epoch_no % SD_ALLOCS_FULL_EVERY == 0;
    typedef struct buf { char *s; size_t len, cap; } buf;
    buf *per = calloc(d->nnodes ? d->nnodes : 1, sizeof *per);
    if (!per)
        return;
    /* Every connected node gets one, if empty: it is the agent's epoch. */
    for (size_t i = 0; i < d->nnodes; i++) {
        buf *b = &per[i];
        if (!d->nodes[i].conn || !(b->s = malloc(4096)))
            continue;
        b->cap = 4096;
        b->len = (size_t)snprintf(b->s, b->cap, "{\"type\":\"allocs\","
                                  "\"epoch\":%llu,\"jobs\":[",
                                  (unsigned long long)d->epoch_no);
    }
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (!SD_REMOTE(j) || j->place.node < 0 || !per[j->place.node].s)
            continue;
        if (!full && fabs(j->enf.alloc - j->place.alloc_sent) < 1e-6)
            continue;
        buf *b = &per[j->place.node];
        if (b->cap - b->len < 64) {
            char *ns = realloc(b->s, b->cap * 2);
            if (!ns)
                continue; /* sent at the next epoch */
            b->s = ns;
            b->cap *= 2;
        }
        b->len += (size_t)snprintf(b->s + b->len, b->cap - b->len,
                                   "%s[%lld,%.17g]", b->s[b->len - 1] == '['
                                   ? "" : ",", (long long)j->id, j->enf.alloc);
        j->place.alloc_sent = j->enf.alloc;
    }
    for (size_t i = 0; i < d->nnodes; i++) {
        if (per[i].s && per[i].cap - per[i].len >= 3) {
            per[i].len += (size_t)snprintf(per[i].s + per[i].len,
                                           per[i].cap - per[i].len, "]}");
            conn_send_line(d, d->nodes[i].conn, per[i].s, per[i].len);
        }
        free(per[i].s);
    }
    free(per);
}

/* ------------------------------------------------------------- messages */

/* The job named by msg's "job", if it runs on c's node. */
static sd_job *node_job(sd_daemon *d, sd_conn *c, json_t *msg)
{
    json_t *v = json_object_get(msg, "job");
    sd_job *j = json_is_integer(v) ? job_get(d, json_integer_value(v))
                                   : NULL;
    /* A job (or task) this node was never given, or another node's: an
     * agent that names it is wrong or lying, and is told nowhere but the
     * log (a job moved away or restarted elsewhere lands here too, when
     * its old node reports late). */
    if (!j || !SD_REMOTE(j) || j->place.node != c->node) {
        uint64_t held;
        char id[32] = "none", why[96];
        if (json_is_integer(v))
            snprintf(id, sizeof id, "%lld", (long long)json_integer_value(v));
        if (!j)
            snprintf(why, sizeof why, "no such job");
        else if (!SD_REMOTE(j))
            snprintf(why, sizeof why, "not a job of any node");
        else if (j->place.node < 0)
            snprintf(why, sizeof why, "it is on no node yet");
        else
            snprintf(why, sizeof why, "it is node %.64s's",
                     d->nodes[j->place.node].name);
        if (sd_ratelog_ok(&d->reject_log, &held))
            sd_log(d, 0, "node %s: a \"%.32s\" naming job %s refused: %s "
                   "(%llu not logged)", d->nodes[c->node].name,
                   json_string_value(json_object_get(msg, "type")), id, why,
                   (unsigned long long)held);
        return NULL;
    }
    if (!SD_ACTIVE(j->state))
        return NULL;
    unsigned g = msg_gen(msg);
    if (j->place.gen &&
        g != j->place.gen) { /* 0: recorded before generations */
        uint64_t held;
        if (sd_ratelog_ok(&d->reject_log, &held))
            sd_log(d, 0, "node %s, job %lld: a \"%.32s\" of generation %u "
                   "ignored (generation %u runs now)", d->nodes[c->node].name,
                   (long long)j->id, json_string_value(json_object_get(
                       msg, "type")), g, j->place.gen);
        return NULL;
    }
    return j;
}

/* A job that ended lost while its node was away, named by an agent
 * message of that node and of the generation that ran there: its agent
 * acknowledged the job's reports it kept meanwhile, and those still count
 * (job_report_late), though nothing else of the job does. */
static sd_job *lost_job(sd_daemon *d, sd_conn *c, json_t *msg)
{
    json_t *v = json_object_get(msg, "job");
    sd_job *j = json_is_integer(v) ? job_get(d, json_integer_value(v))
                                   : NULL;
    if (!j || !SD_REMOTE(j) || j->place.node != c->node ||
        j->state != SD_LOST || (j->place.gen && msg_gen(msg) != j->place.gen))
        return NULL;
    return j;
}

/* A pid an agent reports for a job: a process the agent started itself,
 * so never 0 (its own group), 1 (init; -1 would be every process) or
 * negative, nor beyond the kernel's limit. 0, or -1 with why filled. The
 * controller signals no pid (suspend.c); the pid is shown, and a bad one
 * says the agent is not to be believed. */
static int pid_check(json_t *v, char *why, size_t len)
{
    if (!json_is_integer(v)) {
        snprintf(why, len, "\"pid\" must be an integer");
        return -1;
    }
    json_int_t p = json_integer_value(v);
    if (p < 2 || p > SD_PID_MAX) {
        snprintf(why, len, "pid %lld is not a process an agent starts (2 to "
                 "%d)", (long long)p, SD_PID_MAX);
        return -1;
    }
    return 0;
}

/* Whether the agent's register listed job id (have: its n ids, negative
 * for an earlier generation). */
static int listed(const int64_t *have, size_t n, int64_t id)
{
    for (size_t i = 0; have && i < n; i++)
        if (have[i] == id || have[i] == -id)
            return 1;
    return 0;
}

/* A job of the node in its welcome: the last iteration the controller
 * holds of it (-1: none) in `mine`, its generation in `gens`. */
static void welcome_job(json_t *mine, json_t *gens, const sd_job *j)
{
    char key[32];
    snprintf(key, sizeof key, "%lld", (long long)j->id);
    json_object_set_new(mine, key, json_integer(
        j->hist.nreports ? (json_int_t)j->hist.last_iter : -1));
    if (j->place.gen)
        json_object_set_new(gens, key, json_integer(j->place.gen));
}

/* How long a node's connection must have been silent before another
 * connection with the node's key may take its place: two epochs (an agent
 * heartbeats twice an epoch), at least a second. A restarted agent's old
 * connection has usually closed already; one left half open (its machine
 * rebooted, the network cut) falls silent and is replaced after that. */
static double takeover_s(const sd_daemon *d)
{
    double s = 2 * d->cfg.sched.epoch_s;
    return s > 1 ? s : 1;
}

/* Whether connection c may register node name (docs/security.md, "The
 * cluster"): its link was opened with that node's key, and no other
 * connection of the node has spoken within takeover_s. A refusal is
 * answered (wrong_node, node_connected), logged (limited), counted in
 * register_refused_total, and the connection closed. */
static int register_allowed(sd_daemon *d, sd_conn *c, const char *name)
{
    char m[512];
    const char *code = NULL;
    if (strcmp(name, c->link->node)) {
        code = "wrong_node";
        snprintf(m, sizeof m, "this link was opened with node %s's key, "
                 "which registers node %s only, not %.63s (each node's agent "
                 "needs its own key: slaq cluster node-key)", c->link->node,
                 c->link->node, name);
    } else {
        int idx = node_find(d, name, 0);
        const sd_node *n = idx >= 0 ? &d->nodes[idx] : NULL;
        double quiet = n && n->conn && n->conn != c
                           ? sd_mono() - n->last_seen : INFINITY;
        if (quiet < takeover_s(d)) {
            code = "node_connected";
            snprintf(m, sizeof m, "node %s is connected from %s (heard from "
                     "%.1f s ago): another agent with its key takes its place "
                     "only once that connection has been silent for %.1f s; "
                     "two agents run as %s, stop one", name, n->conn->peer,
                     quiet, takeover_s(d), name);
        }
    }
    if (!code)
        return 1;
    uint64_t held;
    d->register_refused_total++;
    if (sd_ratelog_ok(&d->auth_log, &held))
        sd_log(d, 0, "agent connection from %s: register refused: %s (%llu "
               "not logged)", c->peer, m, (unsigned long long)held);
    send_err(d, c, code, m);
    c->closing = 1;
    return 0;
}

/* Whether a register message of node name, with capacity cores and its
 * jobs (NULL or an array), may be taken: well formed, from the node's
 * own link (register_allowed), every pid it reports sound. A refusal is
 * answered and the connection closed. */
static int register_valid(sd_daemon *d, sd_conn *c, const char *name,
                          json_t *cores, json_t *jobs)
{
    if (!name || !*name || strlen(name) >= sizeof d->nodes[0].name ||
        !json_is_number(cores) || !(json_number_value(cores) > 0) ||
        (jobs && !json_is_array(jobs))) {
        send_err(d, c, "bad_register", "register needs \"node\" (a name of "
                 "at most 63 bytes), \"capacity\" (> 0) and \"jobs\" (an "
                 "array)");
        c->closing = 1;
        return 0;
    }
    if (!register_allowed(d, c, name))
        return 0;
    /* Every pid it reports is checked before anything is taken from it. */
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *e = json_array_get(jobs, i);
        json_t *pid = json_object_get(e, "pid");
        char why[128], m[256];
        if (pid && pid_check(pid, why, sizeof why) < 0) {
            snprintf(m, sizeof m, "register refused: job %lld: %s",
                     (long long)json_integer_value(json_object_get(e, "job")),
                     why);
            sd_log(d, 0, "agent connection from %s (node %.63s): %s",
                   c->peer, name, m);
            send_err(d, c, "bad_register", m);
            c->closing = 1;
            return 0;
        }
    }
    return 1;
}

/* Node name (index idx) is up on connection c (an older one of it
 * closed), with cores and enforcement enf; *was_down whether it was
 * down. Returns when it was called down, on the wall clock (its jobs
 * lost since then have reports its agent kept, which the welcome asks
 * for), or -1. */
static double register_node_up(sd_daemon *d, sd_conn *c, int idx,
                               const char *name, double cores,
                               const char *enf, int *was_down)
{
    sd_node *n = &d->nodes[idx];
    if (n->conn && n->conn != c) {
        sd_log(d, 0, "node %s: registered again after %.1f s of silence; "
               "the old connection is closed", name,
               sd_mono() - n->last_seen);
        sd_conn *old = n->conn;
        n->conn = NULL;
        old->node = -1;
        conn_close(d, old);
    }
    *was_down = !n->up;
    double down_wall = *was_down && n->down_since > 0
                           ? sd_now() - (sd_mono() - n->down_since) : -1;
    n->conn = c;
    n->cores = cores;
    slaq_sched_set_node_cores(d->sched, (size_t)idx, n->cores);
    snprintf(n->enforce, sizeof n->enforce, "%s", enf ? enf : "?");
    n->up = 1;
    n->down_since = 0;
    n->joined = sd_now();
    n->last_seen = sd_mono();
    n->last_seen_wall = sd_now();
    n->seen_epoch = d->epoch_no;
    c->node = idx;
    return down_wall;
}

/* What the agent of node idx has running (jobs, na of them), into
 * have[i]: the job's id; minus it for an earlier generation of a job now
 * placed here again (its start makes the agent replace it); 0 for none.
 * Re-adopts the current ones' pids, and puts those this controller counts
 * as stopping into stopping[] (*nstop of them; stopping may be NULL): their
 * stop may have gone nowhere. A job that ended here meanwhile (its node
 * was down) is stopped there. */
static void register_adopt(sd_daemon *d, sd_conn *c, int idx, json_t *jobs,
                           int64_t *have, size_t na, sd_job **stopping,
                           size_t *nstop)
{
    *nstop = 0;
    for (size_t i = 0; have && i < na; i++) {
        json_t *e = json_array_get(jobs, i);
        json_t *id = json_object_get(e, "job");
        json_t *pid = json_object_get(e, "pid");
        have[i] = json_is_integer(id) ? json_integer_value(id) : 0;
        sd_job *j = have[i] > 0 ? job_get(d, have[i]) : NULL;
        int current = j && (!j->place.gen || msg_gen(e) == j->place.gen);
        if (j && SD_REMOTE(j) && j->place.node == idx && SD_ACTIVE(j->state) &&
            !current) {
            /* An earlier generation of a job now placed here again: the
             * start makes the agent replace it (its start was sent while
             * the node was away, or not yet). */
            have[i] = -have[i];
        } else if (j && SD_REMOTE(j) && j->place.node == idx &&
                   SD_ACTIVE(j->state)) {
            if (json_is_integer(pid)) {
                j->proc.pid = (pid_t)json_integer_value(pid);
                free(j->place.pid_refused);
                j->place.pid_refused = NULL;
            }
            if (j->state == SD_STOPPING && stopping)
                stopping[(*nstop)++] = j;
        } else if (have[i] > 0) {
            /* Ended here meanwhile (its node was down): end it there. */
            send_msg(d, c, json_pack("{s:s, s:I, s:s, s:b}", "type", "stop",
                                     "job", (json_int_t)have[i], "reason",
                                     !j ? "unknown to the controller"
                                     : SD_ACTIVE(j->state) ? "moved to "
                                       "another node" : job_state_name(
                                           j->state), "now", 1));
        }
    }
}

/* The jobs this controller counts as node idx's, with their generations,
 * into mine and gens: its running tasks, its scheduled jobs, and those
 * lost since down_wall (>= 0). Jobs placed there while its agent was
 * away, whose start went nowhere, go to unsent (*nunsent of them, unsent
 * may be NULL) instead: they are started now, not counted as the
 * agent's (it would answer that it does not know the job, and the job
 * would be lost). */
static void register_mine(sd_daemon *d, int idx, const int64_t *have,
                          size_t na, double down_wall, json_t *mine,
                          json_t *gens, sd_job **unsent, size_t *nunsent)
{
    for (size_t i = 0; i < d->ntasks; i++) {
        sd_job *j = d->tasks[i];
        char key[32];
        if (j->place.node != idx || j->state == SD_PENDING)
            continue;
        snprintf(key, sizeof key, "%lld", (long long)j->id);
        json_object_set_new(mine, key, json_integer(-1));
        json_object_set_new(gens, key,
                            json_integer(j->place.gen ? j->place.gen : 1));
    }
    *nunsent = 0;
    for (size_t i = slaq_sched_count(d->sched); i-- > 0;) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (!SD_REMOTE(j) || j->place.node != idx)
            continue;
        j->place.alloc_sent = -1; /* sent again at the next epoch */
        if (unsent && !j->proc.pid && j->place.launch && SD_ACTIVE(j->state) &&
            !listed(have, na, j->id)) {
            unsent[(*nunsent)++] = j;
            continue;
        }
        welcome_job(mine, gens, j);
    }
    for (uint64_t k = 0; down_wall >= 0 && k < d->njobs; k++) {
        sd_job *j = d->jobs[k];
        if (!j || !SD_REMOTE(j) || j->place.node != idx ||
            j->state != SD_LOST || j->ended < down_wall - 1)
            continue;
        welcome_job(mine, gens, j);
    }
}

/* Welcomes node name's agent on c: its jobs (mine, gens; taken), the
 * epoch, the grace, and the queue order and starvation thresholds it
 * orders its queue of tasks by (agent.c, welcome_order). */
static void register_welcome(sd_daemon *d, sd_conn *c, const char *name,
                             json_t *mine, json_t *gens)
{
    const slaq_sched_config *sc = slaq_sched_get_config(d->sched);
    char starve[64];
    slaq_starvation_format(&sc->starvation, starve, sizeof starve);
    send_msg(d, c, json_pack("{s:s, s:s, s:f, s:f, s:o, s:o, s:s, s:s}",
                             "type", "welcome", "node", name, "epoch_s",
                             d->cfg.sched.epoch_s, "grace_s", d->cfg.grace_s,
                             "jobs", mine, "gens", gens, "queue_order",
                             slaq_qorder_name(sc->queue_order), "starvation",
                             starve));
}

/* Re-adopts the jobs a (re)registering agent runs, and tells it which
 * jobs this controller counts as its and how far their reports reached. */
static void on_register(sd_daemon *d, sd_conn *c, json_t *msg)
{
    const char *name = json_string_value(json_object_get(msg, "node"));
    /* "cores" is what an agent before "capacity" sent (deprecated, taken
     * until the next release). */
    json_t *cores = json_object_get(msg, "capacity");
    if (!cores)
        cores = json_object_get(msg, "cores");
    const char *enf = json_string_value(json_object_get(msg, "enforce"));
    json_t *jobs = json_object_get(msg, "jobs");
    if (!register_valid(d, c, name, cores, jobs))
        return;
    int idx = node_find(d, name, 1);
    if (idx < 0) {
        send_err(d, c, "too_many_nodes", "this controller takes at most "
                 "4096 nodes");
        c->closing = 1;
        return;
    }
    int was_down;
    double down_wall = register_node_up(d, c, idx, name,
                                        json_number_value(cores), enf,
                                        &was_down);
    size_t na = json_array_size(jobs);
    int64_t *have = calloc(na ? na : 1, sizeof *have);
    sd_job **stopping = calloc(na ? na : 1, sizeof *stopping);
    size_t nstop;
    register_adopt(d, c, idx, jobs, have, na, stopping, &nstop);
    /* Tasks: those it started meanwhile run; the rest of its queue went
     * with its link, and go back to their arrays (array.c). */
    array_node_registered(d, idx, have, have ? na : 0);
    json_t *mine = json_object(), *gens = json_object();
    size_t nunsent;
    sd_job **unsent = calloc(slaq_sched_count(d->sched) + 1, sizeof *unsent);
    register_mine(d, idx, have, na, down_wall, mine, gens, unsent, &nunsent);
    register_welcome(d, c, name, mine, gens);
    for (size_t i = 0; i < nunsent; i++) {
        sd_log(d, 1, "node %s: job %lld was placed there while it was away; "
               "its start is sent now", name, (long long)unsent[i]->id);
        send_start(d, unsent[i]);
    }
    free(unsent);
    /* Asked to stop while the agent was away, or just before it (or this
     * controller) restarted: the stop may have gone nowhere, and the job
     * would run on to its end, counted as stopping here all along (with
     * the sweep slot it holds). It is asked again; an agent that had the
     * stop already takes it again, harmlessly. */
    for (size_t i = 0; i < nstop; i++) {
        sd_log(d, 1, "node %s: job %lld is stopping (%s); its stop is sent "
               "again", name, (long long)stopping[i]->id,
               stopping[i]->reason ? stopping[i]->reason : "stopped");
        node_send_stop(d, stopping[i], stopping[i]->proc.stop_now);
    }
    free(stopping);
    for (size_t i = 0; have && i < na; i++) {
        sd_job *j = have[i] < 0 ? job_get(d, -have[i]) : NULL;
        if (j && j->place.launch) {
            sd_log(d, 0, "node %s: job %lld runs there as an earlier "
                   "generation; generation %u is started in its place",
                   name, (long long)j->id, j->place.gen);
            send_start(d, j);
        }
    }
    free(have);
    store_event(d->store, sd_now(), 0, "node_up", name);
    nodes_file(d);
    sd_log(d, 0, "node %s: %s (%g cores, enforcement %s, %zu jobs running "
           "there)", name, was_down ? "back up" : "registered",
           d->nodes[idx].cores, d->nodes[idx].enforce, na);
}

static void on_exit_msg(sd_daemon *d, sd_conn *c, json_t *msg)
{
    sd_job *j = node_job(d, c, msg);
    if (!j)
        return;
    json_t *st = json_object_get(msg, "status");
    const char *state = json_string_value(json_object_get(msg, "state"));
    const char *why = json_string_value(json_object_get(msg, "reason"));
    json_t *bytes = json_object_get(msg, "checkpoint_bytes");
    if (json_is_integer(bytes) && json_integer_value(bytes) >= 0)
        j->proc.checkpoint_bytes = json_integer_value(bytes);
    sd_state s = SD_LOST;
    if (state)
        job_state_parse(state, &s);
    if (SD_ACTIVE(s))
        s = SD_LOST;
    /* Stopped for its move (its agent's stop, reason "move"): started on
     * the other node. One cancelled meanwhile (state stopping here) or
     * ended otherwise ends as usual. */
    if (j->place.move_to >= 0 && j->state == SD_RUNNING && s == SD_STOPPED) {
        move_exit(d, j);
        return;
    }
    j->place.move_to = -1;
    /* Stopped for a move an earlier run of this controller asked (the
     * target was not kept): placed again from its checkpoint, as a job
     * whose node was lost, rather than ended. */
    if (j->state == SD_RUNNING && s == SD_STOPPED && why &&
        !strcmp(why, "move")) {
        job_node_lost(d, j, "stopped for a move this controller no longer "
                      "knows of");
        return;
    }
    /* Its node lost it (an agent that restarted without it, or ended
     * with its allocation): started again if it may be, as when the whole
     * node is lost. */
    if (s == SD_LOST && !json_is_integer(st)) {
        char reason[256];
        snprintf(reason, sizeof reason, "node %s lost it (%s)",
                 d->nodes[j->place.node].name, why ? why : "no reason given");
        job_node_lost(d, j, reason);
        return;
    }
    job_finish(d, j, json_is_integer(st), (int)json_integer_value(st), s,
               why);
}

/*
 * The agent link's handshake on the controller's side (link.h): the
 * agent's hello names its node and is answered with this side's nonce and
 * proof under that node's key; the agent's proof is a credential like a
 * token, checked under conn.c's rate limits (per address, per port,
 * overall) and counted when wrong.
 */
void ctl_handshake(sd_daemon *d, sd_conn *c, const char *line,
                       size_t len)
{
    char out[LINK_MAX_HANDSHAKE], err[256], msg[512];
    uint64_t held;
    if (c->link->state == LINK_NEW) {
        int n = link_on_hello(c->link, d->link_key, line, len, out,
                              sizeof out, err, sizeof err);
        if (n < 0) {
            if (sd_ratelog_ok(&d->auth_log, &held))
                sd_log(d, 0, "agent connection from %s: refused: %s (%llu "
                       "not logged)", c->peer, err, (unsigned long long)held);
            snprintf(msg, sizeof msg, "the agent port speaks the agent "
                     "link (docs/protocol.md): %s", err);
            conn_refuse(d, c, "bad_handshake", msg);
            return;
        }
        conn_send_raw(d, c, out, (size_t)n);
        return;
    }
    double wait = conn_auth_wait(d, c);
    if (wait > 0) {
        snprintf(msg, sizeof msg, "too many failed attempts; try again in "
                 "%.1f s", wait);
        conn_refuse(d, c, "rate_limited", msg);
        return;
    }
    int rc = link_on_proof(c->link, line, len, err, sizeof err);
    if (rc == -2) {
        conn_auth_failed(d, c, err);
        snprintf(msg, sizeof msg, "the agent link's proof does not match "
                 "node %s's key under this controller's agent token (a key "
                 "issued for another node name, from another cluster "
                 "secret, or altered): issue this node's key again with "
                 "slaq cluster node-key %s", c->link->node, c->link->node);
        conn_refuse(d, c, "unauthorized", msg);
        return;
    }
    if (rc < 0) {
        if (sd_ratelog_ok(&d->auth_log, &held))
            sd_log(d, 0, "agent connection from %s: refused: %s (%llu not "
                   "logged)", c->peer, err, (unsigned long long)held);
        conn_refuse(d, c, "bad_handshake", err);
        return;
    }
    conn_auth_succeeded(d, c);
}

void ctl_proof_refused(sd_daemon *d, const sd_conn *c)
{
    /* The agent checks the controller's proof before it proves anything
     * (link.h), so an agent with a wrong key is seen here only: without
     * this line its refusal would be in its own log alone. A peer that
     * only fetches a proof hangs up here too. */
    uint64_t held;
    if (sd_ratelog_ok(&d->auth_log, &held))
        sd_log(d, 0, "agent connection from %s (node %s): it hung up on this "
               "controller's proof, so its key for node %s is likely not "
               "this cluster's (issued from another agent token, or for "
               "another name): issue it again with slaq cluster node-key %s "
               "(%llu not logged)", c->peer, c->link->node, c->link->node,
               c->link->node, (unsigned long long)held);
}

void ctl_message(sd_daemon *d, sd_conn *c, json_t *msg)
{
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (!c->authed) { /* the link is open: the agent proved its key */
        if (strcmp(type, "register")) {
            send_err(d, c, "bad_message", "the first message on the agent "
                     "link must be \"register\"");
            c->closing = 1;
            return;
        }
        c->authed = 1; /* agent rights only: may_control stays 0 */
        on_register(d, c, msg);
        return;
    }
    if (c->node < 0)
        return; /* replaced by a newer connection of its node */
    sd_node *n = &d->nodes[c->node];
    n->last_seen = sd_mono();
    n->last_seen_wall = sd_now();
    n->seen_epoch = d->epoch_no;
    char err[256];
    if (!strcmp(type, "report")) {
        sd_job *j = node_job(d, c, msg);
        sd_job *lost = j ? NULL : lost_job(d, c, msg);
        if (lost && job_report_late(d, lost, msg, err, sizeof err) < 0) {
            d->errors_total++;
            uint64_t held;
            if (sd_ratelog_ok(&d->reject_log, &held))
                sd_log(d, 1, "node %s, job %lld: late report refused: %s",
                       n->name, (long long)lost->id, err);
        }
        if (!j)
            return;
        if (j->place.move_from >= 0)
            move_done(d, j);
        json_t *it = json_object_get(msg, "iter");
        /* A job started again from its checkpoint repeats iterations. */
        if (j->place.restarts && json_is_integer(it) && j->hist.nreports &&
            (uint64_t)json_integer_value(it) <= j->hist.last_iter)
            return;
        /* A query's checkpoint may be ahead of its last report here (the
         * reports in between were lost with its node): its estimates go
         * on from the mini-batch that comes. */
        if (j->place.restarts && j->kind == SLAQ_JOB_QUERY && j->sj &&
            json_is_integer(it) &&
            (uint64_t)json_integer_value(it) > j->hist.last_iter + 1)
            slaq_job_query_resume(j->sj,
                                  (uint64_t)json_integer_value(it) - 1);
        n->reports++;
        if (job_report(d, j, msg, err, sizeof err) < 0) {
            d->errors_total++;
            uint64_t held;
            if (sd_ratelog_ok(&d->reject_log, &held))
                sd_log(d, 1, "node %s, job %lld: report refused: %s",
                       n->name, (long long)j->id, err);
        }
    } else if (!strcmp(type, "heartbeat")) {
        /* last_seen above is all it does */
    } else if (!strcmp(type, "info")) {
        sd_job *j = node_job(d, c, msg);
        if (j)
            job_declare(d, c, j, msg, 1);
    } else if (!strcmp(type, "started")) {
        sd_job *j = node_job(d, c, msg);
        char why[128], m[256];
        if (!j)
            return;
        if (pid_check(json_object_get(msg, "pid"), why, sizeof why) < 0) {
            snprintf(m, sizeof m, "started refused for job %lld: %s",
                     (long long)j->id, why);
            sd_log(d, 0, "node %s: %s", n->name, m);
            send_err(d, c, "bad_pid", m);
            free(j->place.pid_refused);
            j->place.pid_refused = strdup(why);
            j->proc.pid = 0;
            return;
        }
        j->proc.pid = (pid_t)json_integer_value(json_object_get(msg, "pid"));
        free(j->place.pid_refused);
        j->place.pid_refused = NULL;
        if (j->array && j->state == SD_PENDING) /* left its node's queue */
            array_task_running(d, j);
        store_put_job(d->store, j);
    } else if (!strcmp(type, "op_result")) {
        sd_job *j = node_job(d, c, msg);
        if (j)
            job_op_result(d, j, msg);
    } else if (!strcmp(type, "start_failed")) {
        sd_job *j = node_job(d, c, msg);
        const char *why = json_string_value(json_object_get(msg, "message"));
        if (j)
            job_finish(d, j, 0, 0, SD_FAILED, why ? why : "start failed");
    } else if (!strcmp(type, "exit")) {
        on_exit_msg(d, c, msg);
    } else if (!strcmp(type, "register")) {
        send_err(d, c, "bad_message", "already registered");
    } else {
        char m[128];
        snprintf(m, sizeof m, "unknown message type \"%.64s\" from an agent",
                 type);
        send_err(d, c, "unknown_type", m);
    }
}

void ctl_conn_closed(sd_daemon *d, sd_conn *c)
{
    if (c->node < 0 || (size_t)c->node >= d->nnodes)
        return;
    sd_node *n = &d->nodes[c->node];
    if (n->conn == c) {
        n->conn = NULL;
        sd_log(d, 0, "node %s: connection closed (down after %d silent "
               "epochs)", n->name, SD_NODE_SILENT_EPOCHS);
    }
    c->node = -1;
}

/* ----------------------------------------------------------------- view */

json_t *ctl_nodes_json(sd_daemon *d)
{
    json_t *arr = json_array();
    double mono = sd_mono();
    size_t n = slaq_sched_count(d->sched);
    if (!d->cfg.agents) { /* this machine is the one node */
        char host[64] = "local";
        double used = 0;
        for (size_t i = 0; i < n; i++)
            used += slaq_job_alloc(slaq_sched_job(d->sched, i));
        /* "cores" is a deprecated alias of "capacity", removed in the
         * next release (docs/protocol.md). */
        json_array_append_new(arr, json_pack(
            "{s:s, s:f, s:f, s:f, s:I, s:s, s:n, s:f, s:s}", "name", host,
            "capacity", d->cfg.sched.cores, "cores", d->cfg.sched.cores,
            "allocated", used,
            "jobs", (json_int_t)n,
            "state", "up", "last_heartbeat", "heartbeat_age_s", 0.0,
            "enforce", enf_mode_name(d->enf.mode)));
        return arr;
    }
    for (size_t k = 0; k < d->nnodes; k++) {
        sd_node *nd = &d->nodes[k];
        double used = slaq_sched_node_alloc(d->sched, k);
        json_int_t cnt = (json_int_t)slaq_sched_node_jobs(d->sched, k);
        json_array_append_new(arr, json_pack(
            "{s:s, s:f, s:f, s:f, s:I, s:s, s:f, s:f, s:s, s:b, s:I}", "name",
            nd->name, "capacity", nd->cores, "cores", nd->cores,
            "allocated", used, "jobs", cnt,
            "state", !nd->up ? "down" : nd->conn ? "up" : "away",
            "last_heartbeat", nd->last_seen_wall, "heartbeat_age_s",
            mono - nd->last_seen, "enforce", nd->enforce, "connected",
            nd->conn != NULL, "reports", (json_int_t)nd->reports));
    }
    return arr;
}
