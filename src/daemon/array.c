/*
 * array.c — task arrays: many short tasks of one command, each a process
 * on one core (docs/arrays.md).
 *
 * `slaq submit --array A-B[%K]` records one array; its tasks start as the
 * machine has cores that no ML job may use, at most K of the array at
 * once, and each is a job record (sd_job with .array) from its start on:
 * its process, logs, exit status and cancel are a job's. An index without
 * a record is pending (or cancelled, once the array is). Tasks are not in
 * the scheduling core: ML jobs keep slaq's allocation, and tasks take what
 * the ML jobs cannot use (each job at most its --max-cores), so that a
 * task never holds an ML job's share for longer than the task runs: when
 * an ML job arrives no task starts while it could use the cores, and the
 * tasks that run end on their own (see "Cores" in docs/arrays.md).
 *
 * A task's end starts the next one at once, in the same turn of the loop
 * (array_reap, then array_dispatch): no epoch passes between them.
 *
 * On a controller the tasks go into its agents' queues instead: each node
 * takes as many as it has cores for tasks plus --queue-bound, the node
 * with the shortest estimated queue wait first, and its agent starts the
 * next of its queue the moment one of its cores frees, without asking
 * (agent.c, agent_start_queued); it tells the controller what started
 * and what ended. A task is "pending" while it sits in a node's queue.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/util.h"
#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/loop.h"
#include "daemon/nodes.h"
#include "daemon/spawn.h"
#include "daemon/store.h"
#include "daemon/users.h"

/* Tasks listed by `slaq show ARRAY` at most (the counts cover all). */
#define ARRAY_SHOW_TASKS 5000

static size_t array_len(const sd_array *a)
{
    return (size_t)(a->last - a->first + 1);
}

static void array_free(sd_array *a)
{
    if (!a)
        return;
    free(a->user);
    free(a->name);
    free(a->cmd);
    free(a->cwd);
    free(a->env);
    free(a->task);
    free(a);
}

void array_free_all(sd_daemon *d)
{
    for (size_t i = 0; i < d->narrays; i++)
        array_free(d->arrays[i]);
    free(d->arrays);
    free(d->tasks);
    d->arrays = NULL;
    d->tasks = NULL;
    d->narrays = d->caparrays = d->ntasks = d->captasks = 0;
}

/* Appends a (ids grow, so the list stays sorted); -1 out of memory. */
static int array_add(sd_daemon *d, sd_array *a)
{
    if (d->narrays == d->caparrays) {
        size_t cap = grow_cap(d->caparrays, d->narrays + 1, 8);
        if (!cap || GROW_ARRAY(d->arrays, cap) < 0)
            return -1;
        d->caparrays = cap;
    }
    d->arrays[d->narrays++] = a;
    return 0;
}

sd_array *array_get(sd_daemon *d, int64_t id)
{
    size_t lo = 0, hi = d->narrays;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->arrays[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->narrays && d->arrays[lo]->id == id ? d->arrays[lo] : NULL;
}

int array_task_add(sd_daemon *d, sd_job *j)
{
    if (d->ntasks == d->captasks) {
        size_t cap = grow_cap(d->captasks, d->ntasks + 1, 16);
        if (!cap || GROW_ARRAY(d->tasks, cap) < 0)
            return -1;
        d->captasks = cap;
    }
    d->tasks[d->ntasks++] = j;
    return 0;
}

static void task_remove(sd_daemon *d, const sd_job *j)
{
    for (size_t i = 0; i < d->ntasks; i++)
        if (d->tasks[i] == j) {
            d->tasks[i] = d->tasks[--d->ntasks];
            return;
        }
}

/* ------------------------------------------------------------ the range */

/*
 * Parses --array's value, "A-B[%K]" or "A[%K]": indices A..B (0 <= A <=
 * B <= SD_MAX_INDEX, at most SD_MAX_ARRAY of them), at most K running at
 * once (K >= 1; 0 when not given). 0, or -1 with err naming what is wrong.
 */
int array_parse_range(const char *s, long *first, long *last, unsigned *k,
                      char *err, size_t errlen)
{
    const char *p = s;
    char *end;
    long a, b;
    *k = 0;
    if (*p < '0' || *p > '9')
        goto err;
    a = strtol(p, &end, 10);
    b = a;
    p = end;
    if (*p == '-') {
        if (p[1] < '0' || p[1] > '9')
            goto err;
        b = strtol(p + 1, &end, 10);
        p = end;
    }
    if (*p == '%') {
        if (p[1] < '1' || p[1] > '9')
            goto err;
        long kv = strtol(p + 1, &end, 10);
        if (*end || kv > 1000000)
            goto err;
        *k = (unsigned)kv;
        p = end;
    }
    if (*p)
        goto err;
    if (a > SD_MAX_INDEX || b > SD_MAX_INDEX || b < a) {
        snprintf(err, errlen, "field \"array\": %.40s: the indices must be "
                 "from 0 to %ld, the first no larger than the last", s,
                 SD_MAX_INDEX);
        return -1;
    }
    if (b - a + 1 > SD_MAX_ARRAY) {
        snprintf(err, errlen, "field \"array\": %.40s is %ld tasks; an "
                 "array has at most %d", s, b - a + 1, SD_MAX_ARRAY);
        return -1;
    }
    *first = a;
    *last = b;
    return 0;
err:
    snprintf(err, errlen, "field \"array\" must be A-B or A-B%%K (indices "
             "A to B, at most K running at once; K >= 1), got \"%.40s\"", s);
    return -1;
}

/* -------------------------------------------------------------- submit */

static int64_t take_id(sd_daemon *d)
{
    int64_t id = (int64_t)d->njobs + 1;
    if (job_reserve_id(d, id) < 0)
        return -1;
    return id;
}

sd_array *array_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                       char *err, size_t errlen)
{
    json_t *cmd = json_object_get(req, "cmd");
    json_t *env = json_object_get(req, "env");
    const char *range = json_string_value(json_object_get(req, "array"));
    const char *cwd = json_string_value(json_object_get(req, "cwd"));
    const char *name = json_string_value(json_object_get(req, "name"));
    json_t *est = json_object_get(req, "task_estimate");
    long first, last;
    unsigned k;
    if (d->cfg.agent) {
        snprintf(err, errlen, "this slaqd is a node agent: submit task "
                 "arrays to its controller");
        return NULL;
    }
    if (!range) {
        snprintf(err, errlen, "field \"array\" must be a string A-B[%%K]");
        return NULL;
    }
    if (array_parse_range(range, &first, &last, &k, err, errlen) < 0 ||
        limit_submit(d, owner, last - first + 1, err, errlen) < 0)
        return NULL;
    if (job_check_cmd(cmd, env, err, errlen) < 0)
        return NULL;
    if (est && (!json_is_number(est) || !(json_number_value(est) > 0) ||
                json_number_value(est) > 1e9)) {
        snprintf(err, errlen, "field \"task_estimate\" must be a number of "
                 "seconds in (0, 1e9]");
        return NULL;
    }
    if (name && job_name_check(name, err, errlen) < 0)
        return NULL;
    static const char *const job_only[] = {"weight", "max_cores",
        "target_reduction", "max_iters", "max_time", "convergence", "node",
        "restartable", "resume_from"};
    for (size_t i = 0; i < sizeof job_only / sizeof *job_only; i++)
        if (json_object_get(req, job_only[i])) {
            snprintf(err, errlen, "field \"%s\" is an ML job's; a task of "
                     "an array runs on one core until it exits",
                     job_only[i]);
            return NULL;
        }
    sd_array *a = calloc(1, sizeof *a);
    if (!a)
        goto err;
    a->first = first;
    a->last = last;
    a->next = first;
    a->max_running = k;
    a->estimate_s = est ? json_number_value(est) : 0;
    a->uid = owner->uid;
    a->user = strdup(owner->name);
    const char *arg0 = json_string_value(json_array_get(cmd, 0));
    const char *base = strrchr(arg0, '/');
    a->name = strdup(name ? name : base ? base + 1 : arg0);
    a->cmd = json_dumps(cmd, JSON_COMPACT);
    a->env = env ? json_dumps(env, JSON_COMPACT) : NULL;
    /* Made absolute, not resolved: each task enters it as the user. */
    a->cwd = spawn_cwd(cwd, err, errlen);
    a->task = calloc(array_len(a), sizeof *a->task);
    a->submitted = sd_now();
    if (!a->cwd) {
        array_free(a);
        return NULL;
    }
    if (!a->user || !a->name || !a->cmd || (env && !a->env) || !a->task)
        goto err;
    if ((a->id = take_id(d)) < 0 || array_add(d, a) < 0)
        goto err;
    store_put_array(d->store, a);
    store_event(d->store, a->submitted, a->id, "array", range);
    if (store_flush(d->store) < 0) {
        snprintf(err, errlen, "slaqd cannot write its database (%s); the "
                 "array was not submitted", store_error(d->store));
        d->narrays--;
        array_free(a);
        return NULL;
    }
    sd_log(d, 0, "array %lld (%s): %zu tasks, %ld-%ld, at most %u at once, "
           "user %s", (long long)a->id, a->name, array_len(a), first, last,
           k, a->user);
    array_dispatch(d);
    return a;
err:
    snprintf(err, errlen, "out of memory");
    array_free(a);
    return NULL;
}

/* --------------------------------------------------------------- cores */

/*
 * The cores of this machine that tasks may take now: those no ML job may
 * use (each at most its --max-cores; a job suspended with SIGSTOP none),
 * less the tasks running. An ML job that could use every core leaves
 * tasks none: while it runs no task starts.
 */
double array_task_room(sd_daemon *d)
{
    double cores = d->cfg.sched.cores, ml = 0;
    for (size_t i = 0; i < slaq_sched_count(d->sched); i++) {
        const sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->proc.suspended == SD_SUSP_SIGNAL)
            continue;
        double m = slaq_job_max_cores(j->sj);
        ml += m < cores ? m : cores;
        if (ml >= cores)
            break;
    }
    if (ml > cores)
        ml = cores;
    return cores - ml - (double)d->ntasks;
}

/* The cores the core divides among ML jobs: the machine's less one per
 * running task, but never less than one unit, so that an ML job that
 * arrives while tasks fill the machine gets its unit at once and the
 * rest as they end. */
static void ml_capacity(sd_daemon *d)
{
    if (d->cfg.agents || d->cfg.agent)
        return; /* a node's cores are the controller's to divide */
    double unit = slaq_sched_get_config(d->sched)->unit;
    double c = d->cfg.sched.cores - (double)d->ntasks;
    slaq_sched_set_node_cores(d->sched, 0, c > unit ? c : unit);
}

/* The lowest pending index of a at or after a->next, or -1. */
static long next_pending(sd_array *a)
{
    if (a->cancelled)
        return -1;
    while (a->next <= a->last && a->task[a->next - a->first])
        a->next++;
    return a->next <= a->last ? a->next : -1;
}

/* A controller: the cores of node v that tasks may use (those its ML
 * jobs may not), and its tasks placed (queued or running), for every v. */
static void node_loads(sd_daemon *d, double *task_cores, size_t *placed)
{
    for (size_t v = 0; v < d->nnodes; v++) {
        task_cores[v] = d->nodes[v].cores;
        placed[v] = 0;
    }
    for (size_t i = 0; i < slaq_sched_count(d->sched); i++) {
        const sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->place.node < 0 || (size_t)j->place.node >= d->nnodes ||
            j->proc.suspended == SD_SUSP_SIGNAL)
            continue;
        double m = slaq_job_max_cores(j->sj);
        task_cores[j->place.node] -= m < d->nodes[j->place.node].cores
                                   ? m : d->nodes[j->place.node].cores;
    }
    for (size_t i = 0; i < d->ntasks; i++)
        if (d->tasks[i]->place.node >= 0 &&
            (size_t)d->tasks[i]->place.node < d->nnodes)
            placed[d->tasks[i]->place.node]++;
    for (size_t v = 0; v < d->nnodes; v++)
        task_cores[v] = task_cores[v] > 0 ? floor(task_cores[v] + 1e-9) : 0;
}

static double task_estimate(const sd_array *a);

/* The mean estimated duration of the pending tasks' arrays (NaN when no
 * array with a pending task has an estimate yet). */
static double pending_mean_estimate(sd_daemon *d)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < d->narrays; i++) {
        double e = task_estimate(d->arrays[i]);
        if (next_pending(d->arrays[i]) >= 0 && e > 0) {
            sum += e;
            n++;
        }
    }
    return n ? sum / (double)n : NAN;
}

/*
 * How many tasks may wait in the queue of a node with `cores` cores for
 * tasks (the setting queue-bound, slaq/queue.h): a fixed length; auto,
 * Yaq's Eq. 3.2 for the queue-util target with the pending tasks' mean
 * estimate and one epoch between placements (one queued task per core
 * while no estimate is known); or mwt:S, as many tasks as keep the
 * node's estimated wait (their estimates over its task cores) under S
 * seconds. At most SD_AGENT_QUEUE_MAX.
 */
static size_t queue_bound(sd_daemon *d, double cores)
{
    const slaq_sched_config *c = slaq_sched_get_config(d->sched);
    unsigned r = cores >= 1 ? (unsigned)cores : 1;
    double mean = pending_mean_estimate(d);
    size_t b;
    if (c->queue_bound.kind == SLAQ_QBOUND_MWT)
        b = mean > 0 ? (size_t)floor(c->queue_bound.value * r / mean) : r;
    else if (c->queue_bound.kind == SLAQ_QBOUND_AUTO && !(mean > 0))
        b = r;
    else
        b = slaq_queue_bound_length(&c->queue_bound, r, mean,
                                    d->cfg.sched.epoch_s, c->queue_util);
    return b > SD_AGENT_QUEUE_MAX ? SD_AGENT_QUEUE_MAX : b;
}

/*
 * An array as one item of the queue order (slaq/queue.h), its next
 * task's: its estimate per task, its remaining work (the indices from its
 * first pending one on, times the estimate; infinite while no estimate is
 * known) and remaining tasks, the array's submission as its arrival and
 * as the time it joined the queue. The controller orders its arrays by it
 * (arrays_in_order), and each task it queues at an agent carries it
 * (order_json), so that the agent orders its queue by the same key.
 */
static slaq_qitem array_item(const sd_array *a)
{
    double est = task_estimate(a);
    double left = a->last >= a->next ? (double)(a->last - a->next + 1) : 0;
    if (!(est > 0))
        est = INFINITY;
    return (slaq_qitem){.job_arrival = a->submitted,
                        .enqueued = a->submitted, .dur_est = est,
                        .job_work = left > 0 ? left * est : 0,
                        .job_tasks = left};
}

/* array_item() as a queued task's "order" (docs/protocol.md, enqueue):
 * what is not finite is null. */
static json_t *order_json(const sd_array *a)
{
    slaq_qitem it = array_item(a);
    return json_pack("{s:f, s:o, s:o, s:f}", "arrival", it.job_arrival,
                     "estimate", isfinite(it.dur_est) ? json_real(it.dur_est)
                                                      : json_null(),
                     "work", isfinite(it.job_work) ? json_real(it.job_work)
                                                   : json_null(),
                     "tasks", it.job_tasks);
}

/*
 * The order in which arrays hand out their pending tasks: the queue-order
 * setting's (slaq/queue.h, the comparator of slaqd's pending queue, of
 * the agents' queues and of the task simulator), each array one item
 * (array_item), with the starvation thresholds. fifo: the order they were
 * submitted. Fills order[0..narrays-1]; -1 when out of memory (then
 * submission order).
 */
static int arrays_in_order(sd_daemon *d, size_t *order)
{
    size_t n = d->narrays;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    const slaq_sched_config *c = slaq_sched_get_config(d->sched);
    if (c->queue_order == SLAQ_QORDER_FIFO || n < 2)
        return 0;
    slaq_qitem *it = calloc(n, sizeof *it);
    if (!it)
        return -1;
    for (size_t i = 0; i < n; i++)
        it[i] = array_item(d->arrays[i]);
    double now = sd_now();
    for (size_t k = 1; k < n; k++) { /* insertion sort: few arrays */
        size_t x = order[k], i = k;
        while (i > 0 && slaq_qorder_cmp(c->queue_order, &it[x],
                                        &it[order[i - 1]], now,
                                        &c->starvation) > 0) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = x;
    }
    free(it);
    return 0;
}

/* A controller: records task `index` of a as queued on `node` (state
 * pending, a job id and secret of its own) and appends its start to
 * batch; NULL when out of memory. */
static sd_job *place_task(sd_daemon *d, sd_array *a, long index, int node,
                          json_t *batch)
{
    json_t *req = job_task_req(a, index);
    sd_job *j = req ? job_new(d, (int64_t)d->njobs + 1) : NULL;
    if (!j) {
        json_decref(req);
        return NULL;
    }
    j->uid = a->uid;
    j->user = strdup(a->user);
    j->name = strdup(json_string_value(json_object_get(req, "name")));
    j->cmd = json_dumps(json_object_get(req, "cmd"), JSON_COMPACT);
    j->cwd = strdup(a->cwd);
    j->proc.managed = 1;
    j->goals.max_cores = 1;
    j->array = a->id;
    j->array_index = index;
    j->submitted = a->submitted;
    j->place.remote = 1;
    j->place.node = node;
    j->place.node_at = strdup(d->nodes[node].name);
    j->state = SD_PENDING; /* in the node's queue until "started" */
    j->place.gen = 1;
    j->place.launch = node_launch_msg(j, json_object_get(req, "env"));
    json_decref(req);
    if (!j->user || !j->name || !j->cmd || !j->cwd || !j->place.node_at ||
        !j->place.launch || job_new_secret(j) < 0) {
        d->jobs[j->id - 1] = NULL;
        job_free_one(j);
        return NULL;
    }
    json_object_set_new(j->place.launch, "gen", json_integer(1));
    json_object_set_new(j->place.launch, "array", json_integer(a->id));
    json_object_set_new(j->place.launch, "index", json_integer(index));
    json_object_set_new(j->place.launch, "secret", json_string(j->secret));
    json_array_append(batch, j->place.launch);
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "queued", d->nodes[node].name);
    return j;
}

/* Sends node's agent the tasks of batch for its queue ("enqueue"). */
static void send_tasks(sd_daemon *d, int node, json_t *batch)
{
    node_send(d, node, json_pack("{s:s, s:O}", "type", "enqueue", "tasks",
                                 batch));
}

/*
 * A controller's placement: each pending task, in array_dispatch's order,
 * goes to the node with room in its queue (its task cores plus the bound,
 * less its tasks placed) whose estimated wait, placed / task cores, is
 * the shortest (Yaq's placement by queue wait, every task the same
 * length); one "enqueue" message per node.
 */
static void place_on_nodes(sd_daemon *d)
{
    size_t nn = d->nnodes;
    if (!nn)
        return;
    double *tc = calloc(nn, sizeof *tc);
    size_t *placed = calloc(nn, sizeof *placed);
    size_t *bound = calloc(nn, sizeof *bound);
    size_t *order = calloc(d->narrays, sizeof *order);
    json_t **batch = calloc(nn, sizeof *batch);
    if (!tc || !placed || !bound || !order || !batch)
        goto out;
    node_loads(d, tc, placed);
    for (size_t v = 0; v < nn; v++)
        bound[v] = queue_bound(d, tc[v]);
    arrays_in_order(d, order);
    for (size_t i = 0; i < d->narrays; i++) {
        sd_array *a = d->arrays[order[i]];
        long idx;
        while ((!a->max_running || a->running < a->max_running) &&
               (idx = next_pending(a)) >= 0) {
            long best = -1;
            for (size_t v = 0; v < nn; v++) {
                if (!node_ready(d, (int)v) || tc[v] < 1 ||
                    placed[v] >= (size_t)tc[v] + bound[v])
                    continue;
                if (best < 0 || placed[v] / tc[v] < placed[best] / tc[best])
                    best = (long)v;
            }
            if (best < 0)
                goto send;
            if (!batch[best] && !(batch[best] = json_array()))
                goto send;
            sd_job *j = place_task(d, a, idx, (int)best, batch[best]);
            if (!j || array_task_add(d, j) < 0)
                goto send; /* out of memory: the next tick tries again */
            a->task[idx - a->first] = j->id;
            a->running++;
            placed[best]++;
            json_object_set_new(j->place.launch, "order", order_json(a));
            if (json_array_size(batch[best]) == SD_ENQUEUE_MAX) {
                send_tasks(d, (int)best, batch[best]);
                json_array_clear(batch[best]);
            }
        }
    }
send:
    for (size_t v = 0; v < nn; v++)
        if (batch[v] && json_array_size(batch[v]))
            send_tasks(d, (int)v, batch[v]);
    store_flush(d->store);
out:
    for (size_t v = 0; batch && v < nn; v++)
        json_decref(batch[v]);
    free(batch);
    free(tc);
    free(placed);
    free(bound);
    free(order);
}

void array_dispatch(sd_daemon *d)
{
    if (!d->narrays)
        return;
    if (d->cfg.agents) {
        place_on_nodes(d);
        return;
    }
    int started = 0;
    /* Arrays in the queue order (arrays_in_order; fifo: as submitted):
     * the first one's tasks first, up to its K, then the next's. */
    size_t *order = calloc(d->narrays, sizeof *order);
    if (!order)
        return; /* out of memory: the next tick tries again */
    size_t n = d->narrays;
    arrays_in_order(d, order);
    for (size_t i = 0; i < n && array_task_room(d) >= 1 - 1e-9; i++) {
        sd_array *a = d->arrays[order[i]];
        long idx;
        while ((!a->max_running || a->running < a->max_running) &&
               array_task_room(d) >= 1 - 1e-9 && (idx = next_pending(a)) >= 0) {
            char err[512];
            sd_job *j = job_start_task(d, a, idx, err, sizeof err);
            if (!j) {
                sd_log(d, 0, "array %lld: task %ld cannot start: %s",
                       (long long)a->id, idx, err);
                j = job_task_record(d, a, idx, SD_FAILED, err);
                if (!j) {
                    free(order);
                    return;
                }
                a->task[idx - a->first] = j->id;
                continue;
            }
            a->task[idx - a->first] = j->id;
            if (array_task_add(d, j) < 0) { /* not watched: stop it now */
                job_cancel(d, j, 1);
                free(order);
                return;
            }
            a->running++;
            started = 1;
            ml_capacity(d);
        }
    }
    free(order);
    if (started)
        store_flush(d->store);
}

/* ------------------------------------------------------------ task ends */

static const sd_state count_states[] = {SD_PENDING, SD_RUNNING, SD_DONE,
                                        SD_FAILED, SD_CANCELLED, SD_STOPPED,
                                        SD_LOST};
#define NCOUNT (sizeof count_states / sizeof *count_states)

/* Each task's state: pending, or its record's (stopping counts as
 * running). */
static sd_state task_state(sd_daemon *d, const sd_array *a, size_t i)
{
    if (!a->task[i])
        return a->cancelled ? SD_CANCELLED : SD_PENDING;
    const sd_job *j = job_get(d, a->task[i]);
    if (!j)
        return SD_LOST;
    return j->state == SD_STOPPING ? SD_RUNNING : j->state;
}

static void array_counts(sd_daemon *d, const sd_array *a, size_t *n)
{
    memset(n, 0, NCOUNT * sizeof *n);
    for (size_t i = 0; i < array_len(a); i++) {
        sd_state st = task_state(d, a, i);
        for (size_t c = 0; c < NCOUNT; c++)
            if (count_states[c] == st)
                n[c]++;
    }
}

int array_active(sd_daemon *d, const sd_array *a)
{
    size_t n[NCOUNT];
    array_counts(d, a, n);
    return n[0] + n[1] > 0;
}

void array_task_ended(sd_daemon *d, sd_job *j)
{
    sd_array *a = array_get(d, j->array);
    size_t before = d->ntasks;
    task_remove(d, j);
    if (!a || d->ntasks == before)
        return;
    if (a->running)
        a->running--;
    if (j->state == SD_DONE && j->started > 0 && j->ended >= j->started) {
        a->dur_sum += j->ended - j->started;
        a->dur_n++;
    }
    ml_capacity(d);
    if (!a->running && next_pending(a) < 0) {
        size_t n[NCOUNT];
        array_counts(d, a, n);
        char detail[160];
        snprintf(detail, sizeof detail, "%zu done, %zu failed, %zu cancelled",
                 n[2], n[3], n[4] + n[5] + n[6]);
        store_event(d->store, sd_now(), a->id, "array_end", detail);
        sd_log(d, 0, "array %lld (%s): ended: %s", (long long)a->id, a->name,
               detail);
    }
}

int array_reap(sd_daemon *d, pid_t pid, int status)
{
    for (size_t i = 0; i < d->ntasks; i++) {
        sd_job *j = d->tasks[i];
        if (j->proc.pid == pid && !j->proc.adopted && !SD_REMOTE(j)) {
            job_finish(d, j, 1, status, SD_DONE, NULL);
            return 1;
        }
    }
    return 0;
}

void array_tick(sd_daemon *d)
{
    double mono = sd_mono();
    for (size_t i = d->ntasks; i-- > 0;)
        if (i < d->ntasks)
            job_watch(d, d->tasks[i], mono);
}

/* A controller: queued task j goes back to its array (its node lost its
 * queue): its record is forgotten and its index is pending again. */
static void task_requeue(sd_daemon *d, sd_job *j)
{
    sd_array *a = array_get(d, j->array);
    task_remove(d, j);
    if (a && j->array_index >= a->first && j->array_index <= a->last) {
        a->task[j->array_index - a->first] = 0;
        if (j->array_index < a->next)
            a->next = j->array_index;
        if (a->running)
            a->running--;
    }
    store_delete_job(d->store, j->id);
    d->jobs[j->id - 1] = NULL;
    job_free_one(j);
}

void array_node_lost(sd_daemon *d, int idx, const char *why)
{
    for (size_t i = d->ntasks; i-- > 0;) {
        if (i >= d->ntasks || d->tasks[i]->place.node != idx)
            continue;
        sd_job *j = d->tasks[i];
        if (j->state == SD_PENDING)
            task_requeue(d, j);
        else
            job_finish(d, j, 0, 0, SD_LOST, why);
    }
}

void array_node_registered(sd_daemon *d, int idx, const int64_t *have,
                           size_t n)
{
    for (size_t i = d->ntasks; i-- > 0;) {
        if (i >= d->ntasks || d->tasks[i]->place.node != idx ||
            d->tasks[i]->state != SD_PENDING)
            continue;
        sd_job *j = d->tasks[i];
        size_t k = 0;
        while (k < n && have[k] != j->id)
            k++;
        if (k < n)
            array_task_running(d, j); /* it started while the link was down */
        else
            task_requeue(d, j);
    }
}

void array_task_running(sd_daemon *d, sd_job *j)
{
    j->state = SD_RUNNING;
    j->started = sd_now();
    store_event(d->store, j->started, j->id, "start",
                d->nodes[j->place.node].name);
}

/* -------------------------------------------------------------- cancel */

int array_cancel(sd_daemon *d, sd_array *a, long index, int now, char *err,
                 size_t errlen)
{
    if (index >= 0) {
        int64_t id = a->task[index - a->first];
        sd_job *j = id ? job_get(d, id) : NULL;
        if (j && !SD_ACTIVE(j->state)) {
            snprintf(err, errlen, "task %lld_%ld is already %s",
                     (long long)a->id, index, job_state_name(j->state));
            return -1;
        }
        if (j) {
            job_cancel(d, j, now);
            return 0;
        }
        if (a->cancelled) {
            snprintf(err, errlen, "task %lld_%ld is already cancelled",
                     (long long)a->id, index);
            return -1;
        }
        j = job_task_record(d, a, index, SD_CANCELLED, "cancelled");
        if (!j) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        a->task[index - a->first] = j->id;
        return 0;
    }
    if (!array_active(d, a)) {
        snprintf(err, errlen, "array %lld has no task left to cancel",
                 (long long)a->id);
        return -1;
    }
    a->cancelled = 1;
    store_put_array(d->store, a);
    store_event(d->store, sd_now(), a->id, "stop", "cancelled");
    for (size_t i = d->ntasks; i-- > 0;)
        if (i < d->ntasks && d->tasks[i]->array == a->id)
            job_cancel(d, d->tasks[i], now);
    sd_log(d, 0, "array %lld (%s): cancelled", (long long)a->id, a->name);
    return 0;
}

/* ---------------------------------------------------------------- refs */

sd_array *array_parse_ref(sd_daemon *d, json_t *v, long *index)
{
    *index = -1;
    if (json_is_integer(v))
        return array_get(d, json_integer_value(v));
    const char *s = json_string_value(v);
    if (!s || *s < '0' || *s > '9')
        return NULL;
    char *end;
    long long id = strtoll(s, &end, 10);
    if (*end == '_') {
        const char *p = end + 1;
        if (*p < '0' || *p > '9')
            return NULL;
        long idx = strtol(p, &end, 10);
        if (*end)
            return NULL;
        sd_array *a = array_get(d, id);
        if (!a || idx < a->first || idx > a->last)
            return NULL;
        *index = idx;
        return a;
    }
    return *end ? NULL : array_get(d, id);
}

/* ---------------------------------------------------------------- json */

json_t *array_pending_json(const sd_array *a, long index)
{
    char name[SD_MAX_NAME + 32];
    snprintf(name, sizeof name, "%s[%ld]", a->name, index);
    return json_pack("{s:I, s:I, s:s, s:s, s:s, s:I}", "array",
                     (json_int_t)a->id, "index", (json_int_t)index, "name",
                     name, "user", a->user, "state",
                     a->cancelled ? "cancelled" : "pending", "id",
                     (json_int_t)0);
}

json_t *array_json(sd_daemon *d, const sd_array *a, int detail)
{
    size_t n[NCOUNT];
    array_counts(d, a, n);
    json_t *counts = json_object();
    for (size_t c = 0; c < NCOUNT; c++)
        json_object_set_new(counts, job_state_name(count_states[c]),
                            json_integer((json_int_t)n[c]));
    const char *state = n[1] ? "running" : n[0] ? "pending"
                        : n[3] || n[6] ? "failed"
                        : n[4] || n[5] ? "cancelled" : "done";
    double est = a->dur_n ? a->dur_sum / a->dur_n : a->estimate_s;
    json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:o, s:s, s:f, "
                          "s:I}",
                          "id", (json_int_t)a->id, "kind", "array", "name",
                          a->name, "uid", (json_int_t)a->uid, "user", a->user,
                          "state", state, "counts", counts, "cwd", a->cwd,
                          "submitted", a->submitted, "tasks",
                          (json_int_t)array_len(a));
    /* its tasks run on this machine, or on the controller's nodes */
    json_object_set_new(o, "node", d->cfg.agents ? json_null()
                                                 : json_string("local"));
    char range[64];
    if (a->max_running)
        snprintf(range, sizeof range, "%ld-%ld%%%u", a->first, a->last,
                 a->max_running);
    else
        snprintf(range, sizeof range, "%ld-%ld", a->first, a->last);
    json_object_set_new(o, "array", json_string(range));
    json_object_set_new(o, "pid", json_integer(0)); /* none of its own */
    json_object_set_new(o, "first", json_integer(a->first));
    json_object_set_new(o, "last", json_integer(a->last));
    json_object_set_new(o, "max_running", json_integer(a->max_running));
    json_object_set_new(o, "cores", json_real((double)a->running));
    json_object_set_new(o, "iter", json_integer((json_int_t)n[2]));
    json_object_set_new(o, "task_estimate", est > 0 ? json_real(est)
                                                    : json_null());
    json_object_set_new(o, "task_estimate_given", a->estimate_s > 0
                        ? json_real(a->estimate_s) : json_null());
    json_object_set_new(o, "cmd", json_loads(a->cmd, 0, NULL));
    if (!detail)
        return o;
    json_t *tasks = json_array();
    size_t len = array_len(a), shown = 0;
    for (size_t i = 0; i < len && shown < ARRAY_SHOW_TASKS; i++, shown++) {
        long idx = a->first + (long)i;
        const sd_job *j = a->task[i] ? job_get(d, a->task[i]) : NULL;
        if (!j) {
            json_array_append_new(tasks, array_pending_json(a, idx));
            continue;
        }
        json_t *t = json_pack("{s:I, s:I, s:s, s:I}", "index",
                              (json_int_t)idx, "id", (json_int_t)j->id,
                              "state", job_state_name(j->state), "pid",
                              (json_int_t)j->proc.pid);
        json_object_set_new(t, "started", j->started > 0
                            ? json_real(j->started) : json_null());
        json_object_set_new(t, "ended", j->ended > 0 ? json_real(j->ended)
                                                     : json_null());
        if (j->proc.have_status && WIFEXITED(j->proc.exit_status))
            json_object_set_new(
                t, "exit_code",
                json_integer(WEXITSTATUS(j->proc.exit_status)));
        else if (j->proc.have_status)
            json_object_set_new(t, "signal",
                                json_integer(WTERMSIG(j->proc.exit_status)));
        if (j->reason)
            json_object_set_new(t, "reason", json_string(j->reason));
        json_array_append_new(tasks, t);
    }
    json_object_set_new(o, "task_list", tasks);
    json_object_set_new(o, "task_list_truncated", json_boolean(shown < len));
    return o;
}

/* ---------------------------------------------------------------- queue */

/* One task's time: the mean of the array's tasks that exited 0, else its
 * --task-estimate, else NAN (not known). */
static double task_estimate(const sd_array *a)
{
    return a->dur_n ? a->dur_sum / a->dur_n
                    : a->estimate_s > 0 ? a->estimate_s : NAN;
}

/*
 * The node's queue: the next queue_bound pending tasks, in the order they
 * will start (arrays as submitted, each in index order: array_dispatch's
 * order), each with its position, the wait before it starts (the
 * estimates of the tasks queued ahead of it over the node's task cores)
 * and why it has not started. The node's estimated wait is the sum of its
 * queued tasks' estimates over its task cores (Yaq's queue wait); unknown
 * (null) while a queued task has no estimate or the node has no core for
 * tasks. A single slaqd is its own one node, "local".
 */
/* A controller's view: each node's queue, the tasks its agent holds in
 * the order they were placed: the order they start in under fifo; under
 * an order that reorders, the agent picks among them (agent.c,
 * queue_next), and the waits shown are placement order's. */
static json_t *nodes_queue_json(sd_daemon *d)
{
    size_t nn = d->nnodes;
    json_t *nodes = json_array();
    double *tc = calloc(nn ? nn : 1, sizeof *tc);
    size_t *placed = calloc(nn ? nn : 1, sizeof *placed);
    if (!tc || !placed) {
        free(tc);
        free(placed);
        return nodes;
    }
    node_loads(d, tc, placed);
    for (size_t v = 0; v < nn; v++) {
        json_t *items = json_array();
        size_t running = 0, queued = 0;
        double ahead = 0;
        int known = 1;
        for (size_t i = 0; i < d->njobs; i++) { /* id order: placed order */
            sd_job *j = d->jobs[i];
            if (!j || !j->array || j->place.node != (int)v ||
                !SD_ACTIVE(j->state))
                continue;
            if (j->state != SD_PENDING) {
                running++;
                continue;
            }
            sd_array *a = array_get(d, j->array);
            double est = a ? task_estimate(a) : NAN;
            char why[160];
            if (!node_ready(d, (int)v))
                snprintf(why, sizeof why, "node %s is away: its queue goes "
                         "back to the arrays if it does not return",
                         d->nodes[v].name);
            else if (tc[v] < 1)
                snprintf(why, sizeof why, "no core for tasks: ML jobs may "
                         "use all %g cores of node %s", d->nodes[v].cores,
                         d->nodes[v].name);
            else
                snprintf(why, sizeof why, "%zu queued ahead of it on node "
                         "%s, %g task cores", queued, d->nodes[v].name,
                         tc[v]);
            json_t *it = json_pack("{s:I, s:I, s:I, s:s, s:s}", "position",
                                   (json_int_t)queued + 1, "array",
                                   (json_int_t)j->array, "index",
                                   (json_int_t)j->array_index, "name",
                                   j->name, "reason", why);
            json_object_set_new(it, "estimate", isnan(est) ? json_null()
                                                           : json_real(est));
            json_object_set_new(it, "wait", known && tc[v] >= 1
                                ? json_real(ahead / tc[v]) : json_null());
            json_array_append_new(items, it);
            if (isnan(est))
                known = 0;
            else
                ahead += est;
            queued++;
        }
        /* "cores": a deprecated alias of "capacity", removed in the next
         * release (docs/arrays.md). */
        json_t *node = json_pack("{s:s, s:f, s:f, s:f, s:I, s:I, s:I, s:o}",
                                 "name", d->nodes[v].name, "capacity",
                                 d->nodes[v].cores, "cores",
                                 d->nodes[v].cores, "task_cores", tc[v],
                                 "running", (json_int_t)running, "bound",
                                 (json_int_t)queue_bound(d, tc[v]),
                                 "beyond", (json_int_t)0,
                                 "queue", items);
        json_object_set_new(node, "wait", known && tc[v] >= 1
                            ? json_real(ahead / tc[v]) : json_null());
        json_array_append_new(nodes, node);
    }
    size_t pending = 0;
    for (size_t i = 0; i < d->narrays; i++)
        for (size_t k = 0; next_pending(d->arrays[i]) >= 0 &&
                           k < array_len(d->arrays[i]); k++)
            pending += !d->arrays[i]->task[k];
    json_t *ctl = json_pack("{s:s, s:f, s:f, s:f, s:I, s:I, s:I, s:o, s:n}",
                            "name", "(controller)", "capacity", 0.0,
                            "cores", 0.0,
                            "task_cores", 0.0, "running", (json_int_t)0,
                            "bound", (json_int_t)0, "beyond",
                            (json_int_t)pending, "queue", json_array(),
                            "wait");
    json_array_append_new(nodes, ctl);
    free(tc);
    free(placed);
    return nodes;
}

json_t *array_queue_json(sd_daemon *d)
{
    if (d->cfg.agents)
        return nodes_queue_json(d);
    double room = array_task_room(d);
    double slots = floor(room + (double)d->ntasks + 1e-9);
    size_t bound = queue_bound(d, slots);
    json_t *items = json_array();
    double ahead = 0;
    int known = 1;
    size_t queued = 0, beyond = 0;
    size_t *order = calloc(d->narrays ? d->narrays : 1, sizeof *order);
    if (!order)
        return items;
    arrays_in_order(d, order); /* the order they will start in */
    for (size_t i = 0; i < d->narrays; i++) {
        sd_array *a = d->arrays[order[i]];
        if (next_pending(a) < 0)
            continue;
        double est = task_estimate(a);
        for (long idx = a->next; idx <= a->last; idx++) {
            if (a->task[idx - a->first])
                continue;
            if (queued == bound) {
                beyond++;
                continue;
            }
            char why[200];
            if (slots < 1)
                snprintf(why, sizeof why, "no core for tasks: ML jobs may "
                         "use all %g cores", d->cfg.sched.cores);
            else if (a->max_running && a->running >= a->max_running)
                snprintf(why, sizeof why, "array %lld runs as many tasks "
                         "as its %%%u allows", (long long)a->id,
                         a->max_running);
            else
                snprintf(why, sizeof why, "%zu queued ahead of it, %zu "
                         "running, on %g task cores", queued, d->ntasks,
                         slots);
            json_t *it = json_pack("{s:I, s:I, s:I, s:s, s:s}", "position",
                                   (json_int_t)queued + 1, "array",
                                   (json_int_t)a->id, "index",
                                   (json_int_t)idx, "name", a->name,
                                   "reason", why);
            json_object_set_new(it, "estimate", isnan(est) ? json_null()
                                                           : json_real(est));
            json_object_set_new(it, "wait", known && slots >= 1
                                ? json_real(ahead / slots) : json_null());
            json_array_append_new(items, it);
            if (isnan(est))
                known = 0;
            else
                ahead += est;
            queued++;
        }
    }
    free(order);
    /* "cores": a deprecated alias of "capacity", as above. */
    json_t *node = json_pack("{s:s, s:f, s:f, s:f, s:I, s:I, s:I, s:o}",
                             "name", "local", "capacity", d->cfg.sched.cores,
                             "cores", d->cfg.sched.cores,
                             "task_cores", slots > 0 ? slots : 0,
                             "running", (json_int_t)d->ntasks, "bound",
                             (json_int_t)bound, "beyond",
                             (json_int_t)beyond, "queue", items);
    json_object_set_new(node, "wait", known && slots >= 1
                        ? json_real(ahead / slots) : json_null());
    json_t *nodes = json_array();
    json_array_append_new(nodes, node);
    return nodes;
}

/* ------------------------------------------------------------- restore */

static int restore_array(sd_daemon *d, sd_array *a)
{
    if (a->last < a->first || a->last - a->first >= SD_MAX_ARRAY ||
        !(a->task = calloc(array_len(a), sizeof *a->task)) ||
        array_add(d, a) < 0) {
        array_free(a);
        return -1;
    }
    a->next = a->first;
    return 0;
}

int array_restore(sd_daemon *d)
{
    if (store_each_array(d->store, restore_array, d) < 0) {
        sd_log(d, 0, "cannot restore task arrays: %s",
               store_errmsg(d->store));
        return -1;
    }
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        sd_array *a = j && j->array ? array_get(d, j->array) : NULL;
        if (j && j->array && !a && SD_ACTIVE(j->state) && d->cfg.agent) {
            if (array_task_add(d, j) < 0) /* an agent's: its array is */
                return -1;                /* the controller's */
            continue;
        }
        if (!a || j->array_index < a->first || j->array_index > a->last)
            continue;
        a->task[j->array_index - a->first] = j->id;
        if (SD_ACTIVE(j->state)) {
            if (array_task_add(d, j) < 0)
                return -1;
            a->running++;
        } else if (j->state == SD_DONE && j->ended >= j->started &&
                   j->started > 0) {
            a->dur_sum += j->ended - j->started;
            a->dur_n++;
        }
    }
    if (d->narrays)
        ml_capacity(d);
    return 0;
}
