/*
 * agent.c — slaqd --agent: a node agent (docs/cluster.md, docs/protocol.md
 * "Agents").
 *
 * An agent is slaqd with its own state directory, socket, job table,
 * launcher and enforcement (jobs.c, enforce.c, conn.c: the same code), and
 * one difference: it does not divide the cores. It registers its node with
 * the controller named by --join, starts the jobs the controller places
 * on it (same environment, logs and process groups as a single slaqd),
 * applies the allocations the controller sends each epoch, serves its
 * jobs' connections on its own socket, and relays their reports, declared
 * lengths and exits upstream. It heartbeats twice an epoch.
 *
 * Every connection opens with the agent link's handshake (link.h): the
 * hello names this node, the controller must prove first that it holds
 * this node's key (derived from the cluster secret, which agents never
 * hold), and nothing else is said or taken until both have; then every
 * line is sealed. A peer on the --join address that cannot prove it (a
 * stale port taken by anyone, an old controller, another node's agent
 * with its own key) gets no register and no hearing.
 *
 * When the link drops it reconnects every half second; on register it
 * lists its jobs, and the controller's welcome says which jobs it counts
 * as this node's and the last iteration it has of each: the agent then
 * sends what the controller missed (reports from its own database, exits
 * of jobs that ended meanwhile).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/agent.h"
#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/jobs.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/users.h"

#define AGENT_RETRY_S 0.5
/* Every message about a job carries the generation this agent runs
 * (agent_link.c fences the others); 1 for a job recorded before there were
 * generations. */
#define JOB_GEN(j) ((j)->place.gen ? (j)->place.gen : 1u)

static void up_send(sd_daemon *d, json_t *m)
{
    if (d->up && m)
        conn_send(d, d->up, m);
    json_decref(m);
}

/* A TCP connection to host:port within 2 s, or -1 with err filled. */
static int dial(const char *join, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(join, ':');
    if (!colon || colon == join || (size_t)(colon - join) >= sizeof host ||
        !colon[1]) {
        snprintf(err, errlen, "--join %s: expected HOST:PORT", join);
        return -1;
    }
    memcpy(host, join, (size_t)(colon - join));
    host[colon - join] = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "--join %s: %s", join, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int e = 0;
            socklen_t len = sizeof e;
            if (poll(&p, 1, 2000) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 &&
                e == 0)
                break;
            errno = e ? e : ETIMEDOUT;
        }
        snprintf(err, errlen, "--join %s: %s", join, strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static void send_register(sd_daemon *d)
{
    json_t *jobs = json_array();
    size_t nml = slaq_sched_count(d->sched);
    for (size_t i = 0; i < nml + d->ntasks; i++) { /* ML jobs, then tasks */
        sd_job *j = i < nml ? slaq_job_user(slaq_sched_job(d->sched, i))
                            : d->tasks[i - nml];
        json_t *e = json_pack("{s:I, s:s, s:I, s:I}", "job",
                              (json_int_t)j->id, "state",
                              job_state_name(j->state), "last_iter",
                              (json_int_t)j->hist.last_iter, "gen",
                              (json_int_t)JOB_GEN(j));
        if (e &&
            j->proc.pid > 0) /* an attached job may not have said its own */
            json_object_set_new(e, "pid", json_integer(j->proc.pid));
        json_array_append_new(jobs, e);
    }
    /* "cores" too, for a controller before "capacity" (deprecated, sent
     * until the next release). */
    up_send(d, json_pack("{s:s, s:s, s:f, s:f, s:s, s:o}", "type",
                         "register", "node", d->cfg.node_name, "capacity",
                         d->cfg.sched.cores, "cores", d->cfg.sched.cores,
                         "enforce", enf_mode_name(d->enf.mode), "jobs",
                         jobs));
}

static void try_connect(sd_daemon *d)
{
    char err[512];
    d->up_retry = sd_mono() + AGENT_RETRY_S;
    int fd = dial(d->cfg.join, err, sizeof err);
    if (fd < 0) {
        uint64_t held;
        if (sd_ratelog_ok(&d->reject_log, &held))
            sd_log(d, 1, "controller not reachable: %s", err);
        return;
    }
    sd_conn *c = conn_add(d, fd, 1);
    if (!c)
        return;
    c->upstream = 1;
    c->authed = 1;
    c->spoke = 1; /* the controller is never timed out as an idle peer */
    snprintf(c->peer, sizeof c->peer, "%.47s", d->cfg.join);
    c->link = calloc(1, sizeof *c->link);
    char hello[LINK_MAX_HANDSHAKE];
    int n = c->link ? link_hello(c->link, d->cfg.node_name, hello,
                                 sizeof hello) : -1;
    if (n < 0) {
        conn_close(d, c);
        return;
    }
    d->up = c;
    d->up_welcomed = 0;
    conn_send_raw(d, c, hello, (size_t)n);
}

/* The controller's challenge: its proof checked, ours sent, then the
 * register, the first sealed line. */
void agent_handshake(sd_daemon *d, sd_conn *c, const char *line, size_t len)
{
    char proof[LINK_MAX_HANDSHAKE], err[300];
    int n = link_on_challenge(c->link, d->link_key, line, len, proof,
                              sizeof proof, err, sizeof err);
    if (n < 0) {
        uint64_t held;
        d->auth_failures_total++;
        if (sd_ratelog_ok(&d->auth_log, &held))
            sd_log(d, 0, "controller %s: not trusted: %s; disconnected, "
                   "nothing but the hello sent (%llu such not logged)",
                   d->cfg.join, err,
                   (unsigned long long)held);
        conn_close(d, c);
        return;
    }
    conn_send_raw(d, c, proof, (size_t)n);
    send_register(d);
}

int agent_start(sd_daemon *d)
{
    char err[512];
    /* An unusable address is an error now; an unreachable one is retried. */
    const char *colon = strrchr(d->cfg.join, ':');
    if (!colon || colon == d->cfg.join || !colon[1]) {
        snprintf(err, sizeof err, "--join %s: expected HOST:PORT",
                 d->cfg.join);
        sd_log(d, 0, "%s", err);
        return -1;
    }
    if (sd_link_key(d) < 0)
        return -1;
    sd_log(d, 0, "agent for node %s (%g cores): joining %s", d->cfg.node_name,
           d->cfg.sched.cores, d->cfg.join);
    try_connect(d);
    return 0;
}

void agent_conn_closed(sd_daemon *d, sd_conn *c)
{
    if (d->up != c)
        return;
    d->up = NULL;
    d->up_welcomed = 0;
    d->up_retry = sd_mono() + AGENT_RETRY_S;
    /* The queued tasks are the controller's until they start: it places
     * them again when this node registers (array.c), so none of them may
     * start here meanwhile. */
    if (json_array_size(d->task_queue))
        sd_log(d, 0, "%zu queued tasks dropped with the link",
               json_array_size(d->task_queue));
    json_array_clear(d->task_queue);
    /* Limited: a controller that refuses this node (its key, or another
     * agent holding the node) closes every half second. */
    uint64_t held;
    if (sd_ratelog_ok(&d->reject_log, &held))
        sd_log(d, 0, "controller %s: connection lost; reconnecting (%llu "
               "such not logged)", d->cfg.join, (unsigned long long)held);
}

/* ------------------------------------------------------------- relaying */

static json_t *job_msg(const char *type, const sd_job *j)
{
    return json_pack("{s:s, s:I, s:I}", "type", type, "job",
                     (json_int_t)j->id, "gen", (json_int_t)JOB_GEN(j));
}

static void send_report(sd_daemon *d, const sd_job *j, const slaq_report *r)
{
    char line[288];
    int n = snprintf(line, sizeof line, "{\"type\":\"report\",\"job\":%lld,"
                     "\"gen\":%u,\"iter\":%llu,\"loss\":%.17g,"
                     "\"cpu_s\":%.17g,\"samples\":%.17g}", (long long)j->id,
                     JOB_GEN(j), (unsigned long long)r->iter, r->loss,
                     r->cpu_s, r->samples);
    if (d->up && n > 0 && (size_t)n < sizeof line)
        conn_send_line(d, d->up, line, (size_t)n);
}

void agent_relay(sd_daemon *d, sd_job *j, json_t *msg)
{
    if (!d->up || !d->up_welcomed)
        return; /* the controller gets it from the store on reconnect */
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (type && !strcmp(type, "report")) {
        if (json_object_get(msg, "metric") || json_object_get(msg,
                                                              "estimates")) {
            /* a metric or a query's estimates: the report as the job sent
             * it, with its job id (the text line below is the common,
             * faster case) */
            json_t *m = json_copy(msg);
            if (m) {
                json_object_set_new(m, "job", json_integer(j->id));
                json_object_set_new(m, "gen", json_integer(JOB_GEN(j)));
            }
            up_send(d, m);
            return;
        }
        slaq_report r = {
            .iter = (uint64_t)json_integer_value(json_object_get(msg,
                                                                 "iter")),
            .loss = json_number_value(json_object_get(msg, "loss")),
            .cpu_s = json_number_value(json_object_get(msg, "cpu_s")),
            .samples = json_number_value(json_object_get(msg, "samples")),
        };
        send_report(d, j, &r);
        return;
    }
    /* hello or info: what the job declared of itself, as one info */
    static const char *const said[] = {"iters", "convergence",
                                       "metric_name", "kind"};
    json_t *info = job_msg("info", j);
    int any = 0;
    for (size_t i = 0; info && i < sizeof said / sizeof *said; i++) {
        json_t *v = json_object_get(msg, said[i]);
        if (v && !json_is_null(v)) {
            json_object_set(info, said[i], v);
            any = 1;
        }
    }
    if (any)
        up_send(d, info);
    else
        json_decref(info);
}

static void send_exit(sd_daemon *d, const sd_job *j)
{
    json_t *m = job_msg("exit", j);
    if (m)
        json_object_set_new(m, "state", json_string(job_state_name(
                                            j->state)));
    if (m && j->reason)
        json_object_set_new(m, "reason", json_string(j->reason));
    if (m && j->proc.have_status)
        json_object_set_new(m, "status", json_integer(j->proc.exit_status));
    if (m && j->proc.suspended == SD_SUSP_CHECKPOINT &&
        j->proc.checkpoint_bytes >= 0)
        json_object_set_new(m, "checkpoint_bytes",
                            json_integer(j->proc.checkpoint_bytes));
    up_send(d, m);
}

void agent_job_ended(sd_daemon *d, sd_job *j)
{
    if (d->up && d->up_welcomed)
        send_exit(d, j);
}

typedef struct replay_ctx {
    sd_daemon *d;
    const sd_job *j;
    int64_t after;
} replay_ctx;

/* A stored report resent to the controller with everything the job sent:
 * its metric and a query's estimates and bounds (est: their stored JSON
 * object), else the controller's query would take the mini-batch as an
 * ML report and refuse every one after it. */
static int replay_one(void *arg, const slaq_report *r, const char *est,
                      double metric)
{
    replay_ctx *x = arg;
    if ((int64_t)r->iter <= x->after)
        return 0;
    if (!est && isnan(metric)) {
        send_report(x->d, x->j, r);
        return 0;
    }
    json_t *m = json_pack("{s:s, s:I, s:I, s:I, s:f, s:f, s:f}", "type",
                          "report", "job", (json_int_t)x->j->id, "gen",
                          (json_int_t)JOB_GEN(x->j), "iter",
                          (json_int_t)r->iter, "loss", r->loss, "cpu_s",
                          r->cpu_s, "samples", r->samples);
    if (m && !isnan(metric))
        json_object_set_new(m, "metric", json_real(metric));
    json_t *v = est ? json_loads(est, 0, NULL) : NULL;
    if (m && json_is_object(v))
        json_object_update(m, v);
    json_decref(v);
    up_send(x->d, m);
    return 0;
}

/* Sends the controller job j's reports after iteration `after` (-1: all)
 * from the store, and its exit if it has ended. */
static void catch_up(sd_daemon *d, const sd_job *j, int64_t after)
{
    replay_ctx x = {d, j, after};
    if (x.after < (int64_t)j->hist.last_iter || !j->hist.nreports)
        store_each_full_report(d->store, j->id, replay_one, &x);
    if (!SD_ACTIVE(j->state))
        send_exit(d, j);
}

/* The controller's queue order and starvation thresholds (its
 * --queue-order and --starvation), which order this node's queue of tasks
 * (queue_next): they replace the agent's own settings, so that a task
 * waits at its node by the same rule as at the controller. A welcome
 * without them (an older controller) leaves the agent's. */
static void welcome_order(sd_daemon *d, json_t *msg)
{
    const char *order = json_string_value(json_object_get(msg,
                                                          "queue_order"));
    const char *st = json_string_value(json_object_get(msg, "starvation"));
    slaq_qorder o = d->cfg.sched.queue_order;
    slaq_starvation sv = d->cfg.sched.starvation;
    if ((order && slaq_qorder_parse(order, &o) != SLAQ_OK) ||
        (st && slaq_starvation_parse(st, &sv) != SLAQ_OK)) {
        sd_log(d, 0, "controller: welcome: queue_order '%s' or starvation "
               "'%s' not understood; the node's queue keeps %s",
               order ? order : "", st ? st : "",
               slaq_qorder_name(d->cfg.sched.queue_order));
        return;
    }
    d->cfg.sched.queue_order = o;
    d->cfg.sched.starvation = sv;
}

/* The controller's welcome: what it counts as ours, and how far. */
static void on_welcome(sd_daemon *d, json_t *msg)
{
    json_t *eps = json_object_get(msg, "epoch_s");
    json_t *grace = json_object_get(msg, "grace_s");
    d->up_epoch_s = json_is_number(eps) ? json_number_value(eps) : 1;
    if (json_is_number(grace) && json_number_value(grace) > 0)
        d->cfg.grace_s = json_number_value(grace);
    d->up_welcomed = 1;
    welcome_order(d, msg);
    json_t *jobs = json_object_get(msg, "jobs");
    const char *key;
    json_t *v;
    json_object_foreach(jobs, key, v) {
        int64_t id = strtoll(key, NULL, 10);
        sd_job *j = job_get(d, id);
        if (!j) { /* started before this agent's state was lost */
            json_t *g = json_object_get(json_object_get(msg, "gens"), key);
            up_send(d, json_pack("{s:s, s:I, s:I, s:s, s:s}", "type", "exit",
                                 "job", (json_int_t)id, "gen",
                                 json_is_integer(g) ? json_integer_value(g)
                                                    : 1,
                                 "state", "lost", "reason", "its node's "
                                 "agent does not know it (state directory "
                                 "lost)"));
            continue;
        }
        catch_up(d, j, json_is_integer(v) ? json_integer_value(v) : -1);
    }
    sd_log(d, 0, "registered with %s (epoch %g s)", d->cfg.join,
           d->up_epoch_s);
}

/* A start with "resume_from": that job's checkpoint, left on this node
 * by a checkpoint suspend, becomes the new job's (slaq-train reads
 * $SLAQ_CHECKPOINT_DIR/job-$SLAQ_JOB_ID.ckpt). The directory is the one
 * its jobs are given (jobs.c, child_env): the start's env's
 * SLAQ_CHECKPOINT_DIR, else its "checkpoint_dir", else the owner's
 * checkpoint directory on this agent. 0, or -1 with err filled. */
static int take_checkpoint(sd_daemon *d, json_t *msg, int64_t id, char *err,
                           size_t errlen)
{
    json_t *rf = json_object_get(msg, "resume_from");
    if (!rf)
        return 0;
    if (!json_is_integer(rf) || json_integer_value(rf) < 1) {
        snprintf(err, errlen, "field \"resume_from\" must be a job id");
        return -1;
    }
    char dir[4096], from[4200], to[4200];
    const char *ck = json_string_value(json_object_get(msg,
                                                       "checkpoint_dir"));
    json_t *uid = json_object_get(msg, "uid");
    if (ck)
        snprintf(dir, sizeof dir, "%s", ck);
    else
        job_checkpoint_dir(d, json_is_integer(uid) &&
                                  json_integer_value(uid) >= 0
                              ? (uid_t)json_integer_value(uid) : geteuid(),
                           dir, sizeof dir);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(msg, "env"), i, e) {
        const char *kv = json_string_value(e);
        if (kv && !strncmp(kv, "SLAQ_CHECKPOINT_DIR=", 20))
            snprintf(dir, sizeof dir, "%s", kv + 20);
    }
    snprintf(from, sizeof from, "%s/job-%lld.ckpt", dir,
             (long long)json_integer_value(rf));
    snprintf(to, sizeof to, "%s/job-%lld.ckpt", dir, (long long)id);
    /* As its owner: the directory may be one the submitter named. */
    uid_t owner = json_is_integer(uid) && json_integer_value(uid) >= 0
                      ? (uid_t)json_integer_value(uid) : geteuid();
    char why[256];
    if (job_checkpoint_move(d, owner, json_string_value(json_object_get(
                                msg, "user")), from, to, why,
                            sizeof why) == 0)
        return 0; /* or taken at an earlier start of this job */
    snprintf(err, errlen, "job %lld left no checkpoint on node %s (%.300s: "
             "%.100s)",
             (long long)json_integer_value(rf), d->cfg.node_name, from,
             why);
    return -1;
}

/* Ends an earlier generation of a job at once (SIGKILL to its group: it
 * writes nothing more, not even a checkpoint on its way out) and waits up
 * to 2 s for it to be gone. 0, or -1 if it is still there. */
static int end_earlier(sd_daemon *d, sd_job *old, unsigned gen)
{
    char why[96];
    snprintf(why, sizeof why, "replaced by generation %u of the job", gen);
    sd_log(d, 0, "job %lld: generation %u runs here: %s", (long long)old->id,
           old->place.gen, why);
    int st = 0, have = 0;
    if (old->proc.pid > 0) {
        kill(-old->proc.pid, SIGKILL);
        kill(old->proc.pid, SIGKILL);
        double until = sd_mono() + 2;
        for (;;) {
            pid_t r = waitpid(old->proc.pid, &st, WNOHANG);
            if (r == old->proc.pid) {
                have = 1;
                break;
            }
            if (r < 0 && kill(old->proc.pid, 0) < 0) /* adopted, and gone */
                break;
            if (sd_mono() > until)
                return -1;
            usleep(10000);
        }
    }
    job_finish(d, old, have, st, SD_LOST, why);
    return 0;
}

static void on_start(sd_daemon *d, json_t *msg)
{
    char err[512];
    json_t *id = json_object_get(msg, "job");
    json_t *g = json_object_get(msg, "gen");
    const char *secret = json_string_value(json_object_get(msg, "secret"));
    unsigned gen = json_is_integer(g) && json_integer_value(g) > 0 &&
                   json_integer_value(g) <= UINT32_MAX
                       ? (unsigned)json_integer_value(g) : 1;
    if (!json_is_integer(id) || json_integer_value(id) < 1 || !secret ||
        strlen(secret) != SD_SECRET_LEN || (g && !json_is_integer(g))) {
        sd_log(d, 0, "a start without a job id, secret or generation: "
               "ignored");
        return;
    }
    sd_job *old = job_get(d, json_integer_value(id));
    if (old && SD_ACTIVE(old->state) && old->place.gen > gen) {
        sd_log(d, 0, "job %lld: a start of generation %u, older than the "
               "one running here (%u): ignored", (long long)old->id, gen,
               old->place.gen);
        return;
    }
    if (old && SD_ACTIVE(old->state) && old->place.gen == gen) {
        json_t *m = job_msg("started", old);
        json_object_set_new(m, "pid", json_integer(old->proc.pid));
        up_send(d, m);
        return;
    }
    /* This generation ran here and ended: the controller restarted before
     * it read the "started" (it then takes the start for one that went
     * nowhere, and sends it again at the register). Run again, the job
     * would do its work twice and its record here, reports and all, would
     * go; instead the controller gets what it missed of that run. */
    if (old && JOB_GEN(old) == gen) {
        sd_log(d, 0, "job %lld: a start of generation %u, which ran here "
               "and ended (%s): its reports and exit are sent again",
               (long long)old->id, gen, job_state_name(old->state));
        catch_up(d, old, -1);
        return;
    }
    if (old && SD_ACTIVE(old->state) && end_earlier(d, old, gen) < 0) {
        snprintf(err, sizeof err, "generation %u of job %lld does not exit "
                 "(SIGKILL sent)", old->place.gen, (long long)old->id);
        up_send(d, json_pack("{s:s, s:I, s:I, s:s}", "type", "start_failed",
                             "job", (json_int_t)old->id, "gen",
                             (json_int_t)gen, "message", err));
        return;
    }
    if (old) { /* an earlier run of a job started again here */
        d->jobs[old->id - 1] = NULL;
        store_delete_job(d->store, old->id);
        job_free_one(old);
    }
    /* The controller vouches for the submitter (the agent token is its
     * credential); without "uid" (an older controller), slaqd's own. */
    sd_user owner;
    json_t *uid = json_object_get(msg, "uid");
    const char *user = json_string_value(json_object_get(msg, "user"));
    if (json_is_integer(uid) && json_integer_value(uid) >= 0 &&
        json_integer_value(uid) <= 0x7fffffff)
        user_from_uid(d, (uid_t)json_integer_value(uid), 0, &owner);
    else
        user_self(d, &owner);
    sd_job *j = NULL;
    /* A uid that names someone else here would run the job as the wrong
     * person: the nodes must share their users (as Slurm's must). */
    if (user && strcmp(user, owner.name))
        snprintf(err, sizeof err, "uid %u is %s on this node but %s on the "
                 "controller: the nodes' users must match",
                 (unsigned)owner.uid, owner.name, user);
    else if (take_checkpoint(d, msg, json_integer_value(id), err,
                             sizeof err) == 0)
        j = job_submit_as(d, msg, json_integer_value(id), secret, &owner,
                          err, sizeof err);
    if (!j) {
        sd_log(d, 0, "job %lld: cannot start: %s",
               (long long)json_integer_value(id), err);
        up_send(d, json_pack("{s:s, s:I, s:I, s:s}", "type", "start_failed",
                             "job", json_integer_value(id), "gen",
                             (json_int_t)gen, "message", err));
        return;
    }
    j->place.gen = gen;
    store_put_job(d->store, j);
    json_t *m = job_msg("started", j);
    json_object_set_new(m, "pid", json_integer(j->proc.pid));
    up_send(d, m);
}

/* The controller sends the allocations that changed (and now and then
 * all of them): the jobs it does not name keep theirs, for one more
 * epoch of their history. */
static void on_allocs(sd_daemon *d, json_t *msg)
{
    json_t *jobs = json_object_get(msg, "jobs");
    double now = sd_now();
    uint64_t seq = ++d->allocs_msgs;
    size_t i;
    json_t *e;
    json_array_foreach(jobs, i, e) {
        json_t *id = json_array_get(e, 0), *cores = json_array_get(e, 1);
        sd_job *j = json_is_integer(id) ? job_get(d, json_integer_value(id))
                                        : NULL;
        if (j && SD_ACTIVE(j->state) && json_is_number(cores)) {
            job_apply_alloc(d, j, json_number_value(cores), now);
            j->place.alloc_msg = seq;
        }
    }
    for (size_t k = slaq_sched_count(d->sched); k-- > 0;) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, k));
        if (j->place.alloc_msg != seq && j->enf.nspark > 0)
            job_apply_alloc(d, j, j->enf.alloc, now);
    }
}

static void on_stop(sd_daemon *d, json_t *msg)
{
    json_t *id = json_object_get(msg, "job");
    const char *reason = json_string_value(json_object_get(msg, "reason"));
    sd_job *j = json_is_integer(id) ? job_get(d, json_integer_value(id))
                                    : NULL;
    if (!reason)
        reason = "stopped";
    if (!j && json_is_integer(id)) { /* a queued task: it never starts */
        size_t i;
        json_t *t;
        json_array_foreach(d->task_queue, i, t) {
            json_t *tid = json_object_get(t, "job");
            if (json_integer_value(tid) != json_integer_value(id))
                continue;
            up_send(d, json_pack("{s:s, s:O, s:O, s:s, s:s}", "type", "exit",
                                 "job", id, "gen", json_object_get(t, "gen"),
                                 "state", strcmp(reason, "cancelled")
                                 ? "stopped" : "cancelled", "reason",
                                 reason));
            json_array_remove(d->task_queue, i);
            return;
        }
    }
    if (!j || !SD_ACTIVE(j->state))
        return;
    int now = json_is_true(json_object_get(msg, "now"));
    double ms;
    char err[256];
    if (!strcmp(reason, "suspend") && !now &&
        job_suspend(d, j, 1, &ms, err, sizeof err) == 0)
        return; /* stopping; it leaves its checkpoint here */
    if (!strcmp(reason, "cancelled")) {
        job_cancel(d, j, now);
    } else {
        job_stop(d, j, reason);
        if (now) /* lost or unknown to the controller: ended at once */
            job_cancel(d, j, 1);
    }
}

/* The controller's "suspend" or "resume" of one of this node's jobs:
 * carried out here, on the process group this agent started, and
 * answered with an op_result (none for seq 0: the controller gave up
 * waiting and undoes a suspend it may not have seen done). Only signal
 * suspends come this way; a checkpoint suspend is a stop (on_stop). */
static void on_op(sd_daemon *d, json_t *msg, int kind)
{
    json_t *id = json_object_get(msg, "job");
    json_t *seq = json_object_get(msg, "seq");
    sd_job *j = json_is_integer(id) ? job_get(d, json_integer_value(id))
                                    : NULL;
    char err[512] = "";
    double ms = NAN;
    int ok = 0;
    if (!j)
        snprintf(err, sizeof err, "no job %lld on this node",
                 (long long)json_integer_value(id));
    else if (kind == SD_OP_SUSPEND)
        ok = job_suspend(d, j, 0, &ms, err, sizeof err) == 0;
    else if (j->proc.suspended != SD_SUSP_SIGNAL)
        snprintf(err, sizeof err, "job %lld is not suspended here",
                 (long long)j->id);
    else
        ok = job_resume(d, j, err, sizeof err) != NULL;
    if (!json_is_integer(seq) || json_integer_value(seq) == 0)
        return;
    json_t *m = json_pack("{s:s, s:O, s:O, s:s, s:b}", "type", "op_result",
                          "job", id, "seq", seq, "op", kind == SD_OP_SUSPEND
                          ? "suspend" : "resume", "ok", ok);
    if (m && j)
        json_object_set_new(m, "gen", json_integer(JOB_GEN(j)));
    if (m && ok && !isnan(ms))
        json_object_set_new(m, "latency_ms", json_real(ms));
    if (m && !ok)
        json_object_set_new(m, "message", json_string(err));
    up_send(d, m);
}

/* ----------------------------------------------------------- node queue */

/* Why task t of an enqueue cannot be queued, or NULL: the fields a start
 * needs (job, secret, gen), the task's array and index, and a command. */
static const char *task_bad(json_t *t)
{
    json_t *id = json_object_get(t, "job"), *g = json_object_get(t, "gen");
    json_t *a = json_object_get(t, "array"), *x = json_object_get(t, "index");
    json_t *cmd = json_object_get(t, "cmd");
    const char *secret = json_string_value(json_object_get(t, "secret"));
    if (!json_is_integer(id) || json_integer_value(id) < 1)
        return "\"job\" must be a job id";
    if (!secret || strlen(secret) != SD_SECRET_LEN)
        return "\"secret\" must be 64 hex digits";
    if (!json_is_integer(g) || json_integer_value(g) < 1 ||
        json_integer_value(g) > UINT32_MAX)
        return "\"gen\" must be a generation (1 to 2^32 - 1)";
    if (!json_is_integer(a) || json_integer_value(a) < 1)
        return "\"array\" must be an array's id";
    if (!json_is_integer(x) || json_integer_value(x) < 0 ||
        json_integer_value(x) > SD_MAX_INDEX)
        return "\"index\" must be a task index (0 to 10^9)";
    if (!json_is_array(cmd) || !json_array_size(cmd))
        return "\"cmd\" must be a non-empty array of strings";
    return NULL;
}

/* A number of a task's "order", or INFINITY (null or absent: unknown). */
static double order_num(json_t *order, const char *key)
{
    json_t *v = json_object_get(order, key);
    return json_is_number(v) ? json_number_value(v) : INFINITY;
}

/* Queued task t as an item of the queue order (slaq/queue.h): what the
 * controller said of its array when it placed it ("order": its arrival,
 * estimate, remaining work and tasks), and when it joined this queue
 * ("queued_at", this agent's clock). A task without an order (from an
 * older controller) is like every other: the queue keeps arrival order. */
static slaq_qitem task_item(json_t *t)
{
    json_t *o = json_object_get(t, "order");
    double at = order_num(t, "queued_at");
    double arrival = order_num(o, "arrival");
    return (slaq_qitem){.job_arrival = isfinite(arrival) ? arrival : 0,
                        .enqueued = isfinite(at) ? at : 0,
                        .dur_est = order_num(o, "estimate"),
                        .job_work = order_num(o, "work"),
                        .job_tasks = order_num(o, "tasks")};
}

/* Appends a valid task to the queue, stamped with the time it joined it.
 * Its array's remaining work and tasks are the controller's newest word:
 * the tasks of the same array queued before it take them too. */
static void queue_add(sd_daemon *d, json_t *t)
{
    json_object_set_new(t, "queued_at", json_real(sd_now()));
    json_t *o = json_object_get(t, "order");
    json_int_t a = json_integer_value(json_object_get(t, "array"));
    size_t i;
    json_t *q;
    if (json_is_object(o))
        json_array_foreach(d->task_queue, i, q)
            if (json_integer_value(json_object_get(q, "array")) == a)
                json_object_set(q, "order", o);
    json_array_append(d->task_queue, t);
}

/* The index in the queue of the task that starts next: Algorithm 3's
 * comparator (slaq_qorder_first) under the controller's order and
 * starvation thresholds (welcome_order); the oldest under fifo, or when
 * out of memory. */
static size_t queue_next(sd_daemon *d)
{
    size_t n = json_array_size(d->task_queue);
    if (d->cfg.sched.queue_order == SLAQ_QORDER_FIFO || n < 2)
        return 0;
    slaq_qitem *it = malloc(n * sizeof *it);
    if (!it)
        return 0;
    for (size_t i = 0; i < n; i++)
        it[i] = task_item(json_array_get(d->task_queue, i));
    long k = slaq_qorder_first(d->cfg.sched.queue_order, it, n, sd_now(),
                               &d->cfg.sched.starvation);
    free(it);
    return k > 0 ? (size_t)k : 0;
}

/* The controller's "enqueue": tasks for this node's queue, started here
 * as cores free (agent_start_queued), each answered with "started" or
 * "start_failed". A batch over SD_ENQUEUE_MAX, or one that would take the
 * queue past SD_AGENT_QUEUE_MAX, is refused whole. */
static void on_enqueue(sd_daemon *d, json_t *msg)
{
    json_t *tasks = json_object_get(msg, "tasks");
    size_t n = json_array_size(tasks);
    if (!json_is_array(tasks) || n > SD_ENQUEUE_MAX ||
        json_array_size(d->task_queue) + n > SD_AGENT_QUEUE_MAX) {
        sd_log(d, 0, "an enqueue of %zu tasks refused (at most %d at once, "
               "%d queued)", n, SD_ENQUEUE_MAX, SD_AGENT_QUEUE_MAX);
        for (size_t i = 0; i < n; i++) {
            json_t *t = json_array_get(tasks, i);
            if (!task_bad(t))
                up_send(d, json_pack("{s:s, s:O, s:O, s:s}", "type",
                                     "start_failed", "job",
                                     json_object_get(t, "job"), "gen",
                                     json_object_get(t, "gen"), "message",
                                     n > SD_ENQUEUE_MAX
                                     ? "an enqueue carries at most 256 tasks"
                                     : "the node's queue is full (4096)"));
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(tasks, i);
        const char *why = task_bad(t);
        if (why) {
            sd_log(d, 0, "a queued task refused: %s", why);
            if (json_is_integer(json_object_get(t, "job")))
                up_send(d, json_pack("{s:s, s:O, s:i, s:s}", "type",
                                     "start_failed", "job",
                                     json_object_get(t, "job"), "gen", 1,
                                     "message", why));
            continue;
        }
        queue_add(d, t);
    }
    agent_start_queued(d);
}

/* Starts queued task t; answers "started" or "start_failed". */
static void start_task(sd_daemon *d, json_t *t)
{
    char err[512];
    json_int_t id = json_integer_value(json_object_get(t, "job"));
    json_int_t gen = json_integer_value(json_object_get(t, "gen"));
    sd_job *j = NULL;
    sd_user owner;
    json_t *uid = json_object_get(t, "uid");
    const char *user = json_string_value(json_object_get(t, "user"));
    if (json_is_integer(uid) && json_integer_value(uid) >= 0 &&
        json_integer_value(uid) <= 0x7fffffff)
        user_from_uid(d, (uid_t)json_integer_value(uid), 0, &owner);
    else
        user_self(d, &owner);
    if (job_get(d, id))
        snprintf(err, sizeof err, "job %lld exists already on this node",
                 (long long)id);
    else if (user && strcmp(user, owner.name))
        snprintf(err, sizeof err, "uid %u is %s on this node but %s on the "
                 "controller: the nodes' users must match",
                 (unsigned)owner.uid, owner.name, user);
    else
        j = job_submit_task_as(d, t, id, json_string_value(
                                   json_object_get(t, "secret")), &owner,
                               json_integer_value(json_object_get(t,
                                                                  "array")),
                               (long)json_integer_value(json_object_get(
                                   t, "index")), err, sizeof err);
    if (!j || array_task_add(d, j) < 0) {
        if (j) {
            job_cancel(d, j, 1);
            snprintf(err, sizeof err, "out of memory");
        }
        up_send(d, json_pack("{s:s, s:I, s:I, s:s}", "type", "start_failed",
                             "job", id, "gen", gen, "message", err));
        return;
    }
    j->place.gen = (unsigned)gen;
    store_put_job(d->store, j);
    json_t *m = job_msg("started", j);
    json_object_set_new(m, "pid", json_integer(j->proc.pid));
    up_send(d, m);
}

void agent_start_queued(sd_daemon *d)
{
    while (json_array_size(d->task_queue) && d->up &&
           array_task_room(d) >= 1 - 1e-9) {
        size_t k = queue_next(d);
        json_t *t = json_incref(json_array_get(d->task_queue, k));
        json_array_remove(d->task_queue, k);
        start_task(d, t);
        json_decref(t);
    }
}

void agent_message(sd_daemon *d, sd_conn *c, json_t *msg)
{
    (void)c;
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (!strcmp(type, "allocs"))
        on_allocs(d, msg);
    else if (!strcmp(type, "start"))
        on_start(d, msg);
    else if (!strcmp(type, "enqueue"))
        on_enqueue(d, msg);
    else if (!strcmp(type, "stop"))
        on_stop(d, msg);
    else if (!strcmp(type, "suspend"))
        on_op(d, msg, SD_OP_SUSPEND);
    else if (!strcmp(type, "resume"))
        on_op(d, msg, SD_OP_RESUME);
    else if (!strcmp(type, "welcome"))
        on_welcome(d, msg);
    else if (!strcmp(type, "error")) {
        /* A refused register comes again every half second: limited. */
        uint64_t held;
        if (sd_ratelog_ok(&d->reject_log, &held))
            sd_log(d, 0, "controller: %s: %s (%llu such not logged)",
                   json_string_value(json_object_get(msg, "code")),
                   json_string_value(json_object_get(msg, "message")),
                   (unsigned long long)held);
    }
}

void agent_tick(sd_daemon *d)
{
    double mono = sd_mono();
    if (!d->up) {
        if (mono >= d->up_retry)
            try_connect(d);
        return;
    }
    double every = d->up_epoch_s > 0 ? d->up_epoch_s / 2 : 0.5;
    if (d->up_welcomed && mono - d->up_beat >= every) {
        d->up_beat = mono;
        static const char beat[] = "{\"type\":\"heartbeat\"}";
        conn_send_line(d, d->up, beat, sizeof beat - 1);
    }
}

void agent_end_jobs(sd_daemon *d)
{
    size_t n = slaq_sched_count(d->sched);
    if (!n)
        return;
    sd_log(d, 0, "ending %zu jobs (--end-jobs-at-exit)", n);
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->proc.managed && j->proc.pid > 0) {
            kill(-j->proc.pid, SIGTERM);
            kill(-j->proc.pid, SIGCONT);
        }
    }
    double grace = d->cfg.grace_s < 3 ? d->cfg.grace_s : 3;
    double until = sd_mono() + grace;
    for (;;) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++) {
            sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
            if (j->proc.managed && j->proc.pid > 0 && !j->proc.have_status) {
                int st = 0;
                pid_t r = waitpid(j->proc.pid, &st, WNOHANG);
                if (r == j->proc.pid || (r < 0 && kill(j->proc.pid, 0) < 0)) {
                    j->proc.have_status = 1;
                    j->proc.exit_status = st;
                } else {
                    left++;
                }
            }
        }
        if (!left)
            break;
        if (sd_mono() >= until) {
            for (size_t i = 0; i < n; i++) {
                sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
                if (j->proc.managed && j->proc.pid > 0 && !j->proc.have_status)
                    kill(-j->proc.pid, SIGKILL);
            }
            break;
        }
        usleep(50000);
    }
    /* Recorded as lost: the controller learns it when it hears from the
     * node again, or has marked the node down already. */
    for (size_t i = n; i-- > 0;) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        job_finish(d, j, 0, 0, SD_LOST, "its node's agent ended with its "
                   "allocation");
    }
}
