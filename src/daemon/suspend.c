/*
 * suspend.c — suspending and resuming jobs slaqd started.
 *
 * Two ways, as a sweep (docs/sweep-cli.md) or a user (`slaq suspend`)
 * needs:
 *
 *   signal      SIGSTOP to the job's process group; it keeps its memory
 *               and its place on this machine and resumes with SIGCONT.
 *               While suspended its allocation is held at ~0 cores (its
 *               cores go to the others) and enforcement leaves it stopped.
 *               The latency is the time until the kernel shows the group
 *               leader stopped (state T in /proc/PID/stat).
 *
 *   checkpoint  the job is asked to stop (reason "suspend"); slaq-train
 *               writes its checkpoint to $SLAQ_CHECKPOINT_DIR (slaqd sets
 *               STATE/checkpoints) and exits; the job ends `stopped`
 *               (reason suspend). Resuming starts its command again as a
 *               new job, with the checkpoint renamed to the new job's id,
 *               so the run continues where it was (on any machine sharing
 *               the directory). The latency is the time until the process
 *               has exited.
 *
 * On a controller a job runs under a node agent, on another machine and
 * in a process table this slaqd cannot see: the pid the agent reported is
 * a number in that table, and signalling it here would hit whatever
 * process has that number on this machine. So nothing here signals such
 * a job. A signal suspend or resume is a message to its agent ("suspend",
 * "resume"; docs/protocol.md, "Agents"), which acts on the process group
 * it started itself and answers with an "op_result"; the control request
 * waits for that answer (at most SD_OP_TIMEOUT_S) and the sweep that
 * asked learns it too. A checkpoint suspend is a stop (reason "suspend")
 * the agent carries out; the checkpoint stays on the agent's machine, so
 * its resume is started on the same node, whose agent renames the
 * checkpoint to the new job's before it starts it.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/api_reply.h"
#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/loop.h"
#include "daemon/nodes.h"
#include "daemon/spawn.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/users.h"

#define SUSPENDED_CORES 1e-6

/* The state letter of a process (/proc/PID/stat's third field), or 0. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    return p && p[1] == ' ' ? p[2] : 0;
}

void job_checkpoint_path(const sd_daemon *d, uid_t uid, int64_t id, char *out,
                        size_t len)
{
    char dir[4096];
    job_checkpoint_dir(d, uid, dir, sizeof dir);
    snprintf(out, len, "%s/job-%lld.ckpt", dir, (long long)id);
}

/* ------------------------------------------------- jobs on node agents */

/* An operation sent to a job's agent, waiting for its op_result. */
typedef struct sd_op {
    uint64_t seq;
    int64_t job;
    int kind;             /* SD_OP_SUSPEND or SD_OP_RESUME */
    double t0, deadline;  /* monotonic */
    sd_conn *conn;        /* the control request waiting (NULL: none) */
    json_t *id;           /* that request's "id", echoed in the answer */
    struct sd_op *next;
} sd_op;

static const char *op_name(int kind)
{
    return kind == SD_OP_SUSPEND ? "suspend" : "resume";
}

static void op_unlink(sd_daemon *d, sd_op *op)
{
    for (sd_op **p = (sd_op **)&d->ops; *p; p = &(*p)->next)
        if (*p == op) {
            *p = op->next;
            break;
        }
    json_decref(op->id);
    free(op);
}

/* The node's agent connection of remote job j, or NULL with err filled. */
static sd_conn *agent_of(sd_daemon *d, sd_job *j, const char *what,
                         char *err, size_t errlen)
{
    if (j->place.node < 0 || (size_t)j->place.node >= d->nnodes) {
        snprintf(err, errlen, "job %lld is waiting for a node; there is "
                 "nothing to %s yet", (long long)j->id, what);
        return NULL;
    }
    sd_node *n = &d->nodes[j->place.node];
    if (!n->conn) {
        snprintf(err, errlen, "job %lld runs on node %s, whose agent is not "
                 "connected (%s): it cannot be asked to %s the job now",
                 (long long)j->id, n->name, n->up ? "away" : "down", what);
        return NULL;
    }
    if (j->proc.pid <= 0) {
        if (j->place.pid_refused)
            snprintf(err, errlen, "job %lld: node %s's agent reported no "
                     "usable process for it (%s), so slaqd does not %s it",
                     (long long)j->id, n->name, j->place.pid_refused, what);
        else
            snprintf(err, errlen, "job %lld has not started on node %s yet "
                     "(its agent has not said so); try again in a moment",
                     (long long)j->id, n->name);
        return NULL;
    }
    if (j->place.op_wait) {
        snprintf(err, errlen,
                 "job %lld: node %s has not answered the last "
                 "%s yet",
                 (long long)j->id, n->name, op_name(j->place.op_wait));
        return NULL;
    }
    return n->conn;
}

/* Sends job j's agent a suspend or resume; 1, or -1 with err filled. */
static int op_send(sd_daemon *d, sd_job *j, int kind, char *err,
                   size_t errlen)
{
    sd_conn *c = agent_of(d, j, op_name(kind), err, errlen);
    if (!c)
        return -1;
    sd_op *op = calloc(1, sizeof *op);
    json_t *m = op ? json_pack("{s:s, s:I, s:I}", "type", op_name(kind),
                               "job", (json_int_t)j->id, "seq",
                               (json_int_t)(d->op_seq + 1)) : NULL;
    if (!m) {
        free(op);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    op->seq = ++d->op_seq;
    op->job = j->id;
    op->kind = kind;
    op->t0 = sd_mono();
    op->deadline = op->t0 + SD_OP_TIMEOUT_S;
    op->next = d->ops;
    d->ops = op;
    j->place.op_wait = kind;
    conn_send(d, c, m);
    json_decref(m);
    sd_log(d, 1, "job %lld: %s sent to node %s", (long long)j->id,
           op_name(kind), d->nodes[j->place.node].name);
    return 1;
}

static int remote_suspend(sd_daemon *d, sd_job *j, int checkpoint,
                          char *err, size_t errlen)
{
    if (!checkpoint)
        return op_send(d, j, SD_OP_SUSPEND, err, errlen);
    /* The agent stops the job (its "stop", reason "suspend") and the job
     * leaves its checkpoint there; the exit it relays ends it here. */
    if (!agent_of(d, j, "suspend", err, errlen))
        return -1;
    j->proc.suspended = SD_SUSP_CHECKPOINT;
    j->proc.suspend_t = sd_mono();
    store_event(d->store, sd_now(), j->id, "suspend", "checkpoint");
    job_stop(d, j, "suspend");
    return 0;
}

int op_park(sd_daemon *d, sd_job *j, json_t *req)
{
    if (!d->req_conn)
        return 0;
    for (sd_op *op = d->ops; op; op = op->next)
        if (op->job == j->id && !op->conn) {
            op->conn = d->req_conn;
            op->id = json_incref(json_object_get(req, "id"));
            op->conn->kind = CONN_CONTROL;
            return 1;
        }
    return 0;
}

/* Answers the control request parked on op, if any, with reply (taken). */
static void op_answer(sd_daemon *d, sd_op *op, json_t *reply)
{
    if (op->conn && reply) {
        if (op->id)
            json_object_set(reply, "id", op->id);
        if (json_is_false(json_object_get(reply, "ok")))
            sd_log(d, 1, "request %s: %s", op_name(op->kind),
                   json_string_value(json_object_get(reply, "message")));
        conn_send(d, op->conn, reply);
    }
    json_decref(reply);
}

/* What an answered (or failed) operation does to job j, the job's own
 * bookkeeping and its sweep's. */
static void op_done(sd_daemon *d, sd_job *j, int kind, int ok,
                    double latency_ms, const char *why)
{
    j->place.op_wait = SD_OP_NONE;
    if (kind == SD_OP_SUSPEND && ok) {
        j->proc.suspended = SD_SUSP_SIGNAL;
        j->proc.suspend_ms = latency_ms;
        if (j->sj)
            slaq_job_set_max_cores(j->sj, SUSPENDED_CORES);
        char detail[96];
        snprintf(detail, sizeof detail, "signal %.3f ms on node %s",
                 latency_ms, node_name(d, j));
        store_put_job(d->store, j);
        store_event(d->store, sd_now(), j->id, "suspend", detail);
        store_flush(d->store);
        sd_log(d, 0, "job %lld: suspended by node %s's agent (SIGSTOP, "
               "%.3f ms)", (long long)j->id, node_name(d, j),
               latency_ms);
    } else if (kind == SD_OP_RESUME && ok) {
        j->proc.suspended = SD_SUSP_NONE;
        if (j->sj)
            slaq_job_set_max_cores(j->sj, j->goals.max_cores);
        store_put_job(d->store, j);
        store_event(d->store, sd_now(), j->id, "resume", "signal");
        store_flush(d->store);
        sd_log(d, 0, "job %lld: resumed by node %s's agent (SIGCONT)",
               (long long)j->id, node_name(d, j));
    } else {
        sd_log(d, 0, "job %lld: %s failed: %s", (long long)j->id,
               op_name(kind), why);
        store_event(d->store, sd_now(), j->id, kind == SD_OP_SUSPEND
                    ? "suspend_failed" : "resume_failed", why);
    }
    if (kind == SD_OP_SUSPEND && j->sweep) { /* sweepd.c, which uses this
                                                file: job_modules_init */
        assert(d->suspend_answered);
        d->suspend_answered(d, j, ok, why);
    }
}

void job_op_result(sd_daemon *d, sd_job *j, json_t *msg)
{
    json_t *seq = json_object_get(msg, "seq");
    json_t *ok = json_object_get(msg, "ok");
    const char *why = json_string_value(json_object_get(msg, "message"));
    json_t *lat = json_object_get(msg, "latency_ms");
    sd_op *op = d->ops;
    while (op && !(json_is_integer(seq) &&
                   (uint64_t)json_integer_value(seq) == op->seq &&
                   op->job == j->id))
        op = op->next;
    if (!op) { /* unasked, or answered after its deadline */
        sd_log(d, 1, "job %lld: an op_result for no waiting operation "
               "(seq %lld): ignored", (long long)j->id,
               (long long)json_integer_value(seq));
        return;
    }
    double ms = json_is_number(lat) && json_number_value(lat) >= 0
                    ? json_number_value(lat) : (sd_mono() - op->t0) * 1e3;
    char buf[400];
    int good = json_is_true(ok);
    if (!json_is_boolean(ok))
        why = "its op_result has no \"ok\" (true or false)";
    snprintf(buf, sizeof buf, "node %s: %.300s", node_name(d, j),
             why ? why : "failed, without a reason");
    op_done(d, j, op->kind, good, ms, buf);
    json_t *reply;
    if (good) {
        reply = json_pack("{s:b, s:o}", "ok", 1, "job", job_json(d, j, 0));
        if (op->kind == SD_OP_SUSPEND)
            json_object_set_new(reply, "latency_ms", json_real(ms));
    } else {
        reply = api_error(op->kind == SD_OP_SUSPEND ? "not_suspendable"
                          : "not_resumable", "job %lld: %s",
                          (long long)j->id, buf);
    }
    op_answer(d, op, reply);
    op_unlink(d, op);
}

void op_tick(sd_daemon *d)
{
    double now = sd_mono();
    for (sd_op *op = d->ops, *next; op; op = next) {
        next = op->next;
        if (now < op->deadline)
            continue;
        sd_job *j = job_get(d, op->job);
        char why[256];
        snprintf(why, sizeof why, "node %s did not answer the %s within "
                 "%g s", j ? node_name(d, j) : "?", op_name(op->kind),
                 SD_OP_TIMEOUT_S);
        if (j) {
            op_done(d, j, op->kind, 0, NAN, why);
            /* It may yet act on it: a suspend is undone, so that the job
             * runs as this slaqd now counts it (seq 0: no answer). */
            if (op->kind == SD_OP_SUSPEND && SD_REMOTE(j) &&
                j->place.node >= 0 && d->nodes[j->place.node].conn) {
                json_t *m = json_pack("{s:s, s:I, s:i}", "type", "resume",
                                      "job", (json_int_t)j->id, "seq", 0);
                conn_send(d, d->nodes[j->place.node].conn, m);
                json_decref(m);
            }
        }
        op_answer(d, op, api_error(op->kind == SD_OP_SUSPEND
                                   ? "not_suspendable" : "not_resumable",
                                   "job %lld: %s", (long long)op->job, why));
        op_unlink(d, op);
    }
}

void op_conn_closed(sd_daemon *d, sd_conn *c)
{
    for (sd_op *op = d->ops; op; op = op->next)
        if (op->conn == c)
            op->conn = NULL;
}

void op_free_all(sd_daemon *d)
{
    while (d->ops)
        op_unlink(d, d->ops);
}

int job_suspend(sd_daemon *d, sd_job *j, int checkpoint, double *latency_ms,
                char *err, size_t errlen)
{
    *latency_ms = NAN;
    if (j->state != SD_RUNNING) {
        snprintf(err, errlen, "job %lld is %s; only a running job can be "
                 "suspended", (long long)j->id, job_state_name(j->state));
        return -1;
    }
    if (!j->proc.managed || (j->proc.pid <= 0 && !SD_REMOTE(j))) {
        snprintf(err, errlen, "job %lld was not started by slaqd (it "
                 "attached itself), so slaqd cannot suspend it",
                 (long long)j->id);
        return -1;
    }
    if (j->proc.suspended) {
        snprintf(err, errlen, "job %lld is already suspended",
                 (long long)j->id);
        return -1;
    }
    if (SD_REMOTE(j))
        return remote_suspend(d, j, checkpoint, err, errlen);
    double t0 = sd_mono();
    if (checkpoint) {
        j->proc.suspended = SD_SUSP_CHECKPOINT;
        j->proc.suspend_t = t0;
        store_event(d->store, sd_now(), j->id, "suspend", "checkpoint");
        job_stop(d, j, "suspend");
        return 0;
    }
    if (kill(-j->proc.pid, SIGSTOP) < 0 && kill(j->proc.pid, SIGSTOP) < 0) {
        snprintf(err, errlen, "cannot stop process group %d: %s",
                 (int)j->proc.pid, strerror(errno));
        return -1;
    }
    /* Stopped once the kernel says so (at most 2 s: a process in an
     * uninterruptible sleep stops when it leaves it). */
    while (proc_state(j->proc.pid) != 'T' && proc_state(j->proc.pid) != 't' &&
           sd_mono() - t0 < 2) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    *latency_ms = (sd_mono() - t0) * 1e3;
    j->proc.suspended = SD_SUSP_SIGNAL;
    j->proc.suspend_ms = *latency_ms;
    if (j->sj)
        slaq_job_set_max_cores(j->sj, SUSPENDED_CORES);
    char detail[64];
    snprintf(detail, sizeof detail, "signal %.3f ms", *latency_ms);
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "suspend", detail);
    store_flush(d->store);
    sd_log(d, 0, "job %lld: suspended (SIGSTOP, %.3f ms)", (long long)j->id,
           *latency_ms);
    return 0;
}

/* A checkpoint operation done as its job's owner (ckpt_as). */
typedef struct ckpt_op {
    const char *from, *to;
} ckpt_op;

/* The size of the regular file `from`, written to out. */
static int ckpt_size_fn(void *arg, char *out, size_t outlen)
{
    const ckpt_op *op = arg;
    struct stat st;
    if (stat(op->from, &st) < 0 || !S_ISREG(st.st_mode))
        return -1;
    snprintf(out, outlen, "%lld", (long long)st.st_size);
    return 0;
}

/* Renames `from` to `to` (job_checkpoint_move's result). */
static int ckpt_take_fn(void *arg, char *out, size_t outlen)
{
    const ckpt_op *op = arg;
    if (rename(op->from, op->to) == 0)
        return 0;
    int e = errno;
    if (e == ENOENT && access(op->to, R_OK) == 0)
        return 0;
    snprintf(out, outlen, "%s", strerror(e));
    return e == ENOENT || e == EACCES ? 1 : 2;
}

/*
 * Runs fn on job j's checkpoint as the job's owner (spawn_as): the
 * checkpoint is the user's file in the user's directory, and whatever
 * its path leads to is looked at with the user's rights, not root's.
 * fn's result, or -1000 (out says why) when it could not be run.
 */
static int ckpt_as(sd_daemon *d, uid_t uid, const char *user,
                   int (*fn)(void *, char *, size_t), const ckpt_op *op,
                   char *out, size_t outlen)
{
    sd_runas ra;
    if (user_runas_prepare(d, uid, user, &ra, out, outlen) < 0)
        return -1000;
    int rc = spawn_as(&ra, fn, (void *)op, out, outlen, SPAWN_TIMEOUT_MS);
    user_runas_free(&ra);
    if (rc == -1000)
        snprintf(out, outlen, "no answer from a process of user %s",
                 user ? user : "?");
    return rc;
}

int job_checkpoint_move(sd_daemon *d, uid_t uid, const char *user,
                        const char *from, const char *to, char *why,
                        size_t whylen)
{
    ckpt_op op = {from, to};
    return ckpt_as(d, uid, user, ckpt_take_fn, &op, why, whylen);
}

/* A checkpoint-suspended job's process exited: how long that took. */
void job_suspend_done(sd_daemon *d, sd_job *j)
{
    if (j->proc.suspended != SD_SUSP_CHECKPOINT)
        return;
    j->proc.suspend_ms = (sd_mono() - j->proc.suspend_t) * 1e3;
    char path[4200], detail[96], out[64];
    job_checkpoint_path(d, j->uid, j->id, path, sizeof path);
    ckpt_op op = {path, NULL};
    /* A remote job's is on its agent's machine: the size its exit said. */
    long long size = SD_REMOTE(j) ? j->proc.checkpoint_bytes
                     : ckpt_as(d, j->uid, j->user, ckpt_size_fn, &op, out,
                               sizeof out) == 0
                         ? strtoll(out, NULL, 10) : -1;
    j->proc.checkpoint_bytes = size;
    snprintf(detail, sizeof detail, "checkpoint %.3f ms, %lld bytes",
             j->proc.suspend_ms, size);
    store_event(d->store, sd_now(), j->id, "suspended", detail);
    sd_log(d, 0, "job %lld: suspended (%s)", (long long)j->id, detail);
}

sd_job *job_resume(sd_daemon *d, sd_job *j, char *err, size_t errlen)
{
    if (j->proc.suspended == SD_SUSP_SIGNAL && j->state == SD_RUNNING &&
        SD_REMOTE(j))
        return op_send(d, j, SD_OP_RESUME, err, errlen) < 0 ? NULL : j;
    if (j->proc.suspended == SD_SUSP_SIGNAL && j->state == SD_RUNNING) {
        if (kill(-j->proc.pid, SIGCONT) < 0)
            kill(j->proc.pid, SIGCONT);
        j->proc.suspended = SD_SUSP_NONE;
        j->enf.sig_stopped = 0; /* the duty cycle starts again from running */
        if (j->sj)
            slaq_job_set_max_cores(j->sj, j->goals.max_cores);
        store_put_job(d->store, j);
        store_event(d->store, sd_now(), j->id, "resume", "signal");
        store_flush(d->store);
        sd_log(d, 0, "job %lld: resumed (SIGCONT)", (long long)j->id);
        return j;
    }
    if (j->proc.suspended != SD_SUSP_CHECKPOINT || SD_ACTIVE(j->state)) {
        snprintf(err, errlen, "job %lld is not suspended%s", (long long)j->id,
                 j->proc.suspended == SD_SUSP_CHECKPOINT
                     ? " yet (its checkpoint is being written)" : "");
        return NULL;
    }
    char from[4200], to[4200];
    int64_t next = (int64_t)d->njobs + 1; /* job_submit's id */
    job_checkpoint_path(d, j->uid, j->id, from, sizeof from);
    job_checkpoint_path(d, j->uid, next, to, sizeof to);
    /* A job an agent ran left its checkpoint on that agent's machine:
     * the new job goes there, and the agent renames the checkpoint before
     * it starts it (or fails its start, saying why). */
    int remote = SD_REMOTE(j) && j->place.node_at;
    char why[256];
    int took = remote ? 0 : job_checkpoint_move(d, j->uid, j->user, from,
                                                to, why, sizeof why);
    if (took == 1 || took == -1000) {
        snprintf(err, errlen, "job %lld left no checkpoint (%s: %s); its "
                 "program may not write one (slaq-train does, for logreg, "
                 "svm, svmpoly, linreg, mlpc and kmeans)", (long long)j->id,
                 from, why);
        return NULL;
    }
    if (took) {
        snprintf(err, errlen, "cannot move the checkpoint %s to %s: %s",
                 from, to, why);
        return NULL;
    }
    json_t *req = json_object();
    json_object_set_new(req, "cmd", json_loads(j->cmd, 0, NULL));
    json_object_set_new(req, "cwd", json_string(j->cwd));
    json_object_set_new(req, "name", json_string(j->name));
    if (j->env) /* the environment it was submitted with */
        json_object_set_new(req, "env", json_loads(j->env, 0, NULL));
    json_object_set_new(req, "weight", json_real(j->goals.weight));
    if (isfinite(j->goals.max_cores))
        json_object_set_new(req, "max_cores", json_real(j->goals.max_cores));
    json_object_set_new(req, "target_reduction", json_real(j->goals.target));
    json_object_set_new(req, "max_iters",
                        json_integer((json_int_t)j->goals.max_iters));
    if (remote) {
        json_object_set_new(req, "node", json_string(j->place.node_at));
        json_object_set_new(req, "resume_from", json_integer(j->id));
    }
    sd_user owner; /* the continuation runs as the suspended job did */
    user_from_uid(d, j->uid, 0, &owner);
    sd_job *k = job_submit(d, req, &owner, err, errlen);
    json_decref(req);
    if (!k) {
        if (!remote)
            job_checkpoint_move(d, j->uid, j->user, to, from, why,
                                sizeof why);
        return NULL;
    }
    j->proc.suspended = SD_SUSP_NONE;
    j->continued_by = k->id;
    k->resumed_from = j->id;
    char detail[64];
    snprintf(detail, sizeof detail, "as job %lld", (long long)k->id);
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "resume", detail);
    snprintf(detail, sizeof detail, "job %lld's checkpoint",
             (long long)j->id);
    store_put_job(d->store, k);
    store_event(d->store, sd_now(), k->id, "resumed_from", detail);
    store_flush(d->store);
    sd_log(d, 0, "job %lld: resumed from its checkpoint as job %lld",
           (long long)j->id, (long long)k->id);
    return k;
}
