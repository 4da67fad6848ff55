/*
 * epoch.c — what drives slaqd's jobs: the epoch (the core decides, then
 * each job's share is applied, the policy's moves made and the agents
 * sent their allocations), the tick, children reaped, and a job's end as
 * it reaches the modules that keep something of it.
 *
 * The jobs layer is in sub-layers (daemon.h): this file on top; then the
 * sweeps and the agents, each side of their link; suspensions; task
 * arrays; the job table (jobs.c); queries' estimates and the controller's
 * nodes. Each calls down only. The job table and suspend.c raise what
 * those above must hear through the functions registered here at
 * start-up (job_modules_init), as the connections' bottom half does with
 * the protocol's (conn_protocol_init): a job that ends, a controller's
 * job to launch on a node, a sweep's suspension answered.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/accounts.h"
#include "daemon/agent.h"
#include "daemon/agent_link.h"
#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/epoch.h"
#include "daemon/jobs.h"
#include "daemon/loop.h"
#include "daemon/suspend.h"
#include "daemon/sweepd.h"
#include "daemon/trace.h"
#include "slaq/deadline.h"

/* ------------------------------------------------------------ a job's end */

/* A job is ending, its end not yet recorded: a job stopped to be
 * suspended with its checkpoint has it measured (suspend.c). */
static void job_ending(sd_daemon *d, sd_job *j)
{
    if (j->reason && !strcmp(j->reason, "suspend"))
        job_suspend_done(d, j);
}

/* A job has ended: a node agent tells its controller (agent.c); a task
 * is counted by its array, its core free (array.c). */
static void job_ended(sd_daemon *d, sd_job *j)
{
    if (d->cfg.agent)
        agent_job_ended(d, j);
    if (j->array)
        array_task_ended(d, j);
}

/* Function pointers, because each of these crosses a sub-layer upward:
 * the job table and suspend.c may not name the modules that use them
 * (which would make a cycle again); every other call runs downward. */
void job_modules_init(sd_daemon *d)
{
    d->job_ending = job_ending;
    d->job_ended = job_ended;
    d->job_launch = ctl_launch;
    d->suspend_answered = sweep_suspend_result;
}

/* ------------------------------------------------------ children, tasks */

void job_reap_children(sd_daemon *d)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (array_reap(d, pid, status))
            continue;
        for (size_t i = 0; i < slaq_sched_count(d->sched); i++) {
            sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
            if (j->proc.managed && j->proc.pid == pid && !SD_REMOTE(j)) {
                conn_settle(d, j);
                job_finish(d, j, 1, status, SD_DONE, NULL);
                break;
            }
        }
    }
}

void job_dispatch(sd_daemon *d)
{
    if (d->cfg.agent)
        agent_start_queued(d);
    else
        array_dispatch(d);
}

/* --------------------------------------------------------------- epoch */

/*
 * Why each job is where it is (docs/deadlines.md): under a policy made
 * of MLF-H's features (mlfs-h, mlfs-rl, mlfs), the core's terms of every
 * job as this epoch saw them (slaq_sched_terms) and its place by key
 * (slaq_key_order), for job_json; under any other, no place.
 */
static void epoch_priority(sd_daemon *d)
{
    size_t n = slaq_sched_count(d->sched);
    slaq_policy_kind pol = slaq_sched_get_config(d->sched)->policy;
    slaq_prio_terms *t = NULL;
    if (slaq_policy_has_terms(pol) && n > 0) {
        if (n > d->prio_cap) {
            size_t cap = n < 64 ? 64 : n + n / 2;
            slaq_prio_terms *nt = realloc(d->prio_terms, cap * sizeof *nt);
            if (nt)
                d->prio_terms = nt;
            double *nk = realloc(d->prio_keys, cap * sizeof *nk);
            if (nk)
                d->prio_keys = nk;
            size_t *no = realloc(d->prio_order, cap * sizeof *no);
            if (no)
                d->prio_order = no;
            if (nt && nk && no)
                d->prio_cap = cap;
        }
        if (n <= d->prio_cap &&
            slaq_sched_terms(d->sched, d->prio_terms) == SLAQ_OK)
            t = d->prio_terms;
    }
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        j->goals.prio_rank = 0;
        if (t) {
            j->goals.prio = t[i];
            j->goals.prio_policy = pol;
            d->prio_keys[i] = t[i].key;
        }
    }
    if (t) {
        slaq_key_order(d->prio_keys, n, d->prio_order, NULL);
        for (size_t k = 0; k < n; k++) {
            sd_job *j = slaq_job_user(slaq_sched_job(d->sched,
                                                     d->prio_order[k]));
            j->goals.prio_rank = k + 1;
        }
    }
}

void job_epoch(sd_daemon *d)
{
    double t0 = sd_mono(), c0 = sd_thread_cpu(), now = sd_now();
    d->epoch_no++;
    size_t n = slaq_sched_count(d->sched);
    if (d->cfg.agent) {
        /* A node agent: the controller divides the cores (agent.c). */
        for (size_t i = n; i-- > 0;)
            enf_epoch(d, slaq_job_user(slaq_sched_job(d->sched, i)));
        return;
    }
    /* Thread CPU time at the end of each part: the forecast check, the
     * core, applying allocations, the nodes' messages, the timeline. */
    double cpu[5] = {c0, c0, c0, c0, c0};
    d->core_ms_last = d->core_cpu_ms_last = 0;
    if (n > 0) {
        trace_before_epoch(d);
        cpu[0] = sd_thread_cpu();
        /* The core's part: slaq_sched_epoch alone. */
        double tc = sd_mono();
        int rc = slaq_sched_epoch(d->sched, now);
        d->core_ms_last = (sd_mono() - tc) * 1e3;
        cpu[1] = sd_thread_cpu();
        d->core_cpu_ms_last = (cpu[1] - cpu[0]) * 1e3;
        if (d->core_ms_last > d->core_ms_max)
            d->core_ms_max = d->core_ms_last;
        if (rc) {
            sd_log(d, 0, "epoch %llu: %s", (unsigned long long)d->epoch_no,
                   slaq_strerror(rc));
            return;
        }
        epoch_priority(d);
        acct_epoch(d);
        ctl_policy_moves(d); /* the epoch's keys, before any change */
    }
    /* Stopping jobs may leave the scheduler below, so walk a snapshot. */
    for (size_t i = n; i-- > 0;) {
        slaq_job *sj = slaq_sched_job(d->sched, i);
        if (!sj)
            continue;
        sd_job *j = slaq_job_user(sj);
        job_apply_alloc(d, j, slaq_job_alloc(sj), now);
        if (!SD_REMOTE(j))
            enf_epoch(d, j);
        j->hist.reduction = slaq_job_reduction(sj);
        j->hist.end_loss = slaq_job_end_loss(sj);
        if (j->state != SD_RUNNING)
            continue;
        /* The core's verdict (its target, MLF-C), the job's time limit
         * between the two. */
        slaq_verdict v = slaq_job_verdict(sj);
        if (v == SLAQ_VERDICT_TARGET)
            job_stop(d, j, slaq_verdict_name(v));
        else if (j->goals.max_time > 0 &&
                 now - j->started >= j->goals.max_time)
            job_stop(d, j, "max_time");
        else if (v != SLAQ_VERDICT_RUN)
            job_stop(d, j, slaq_verdict_name(v));
    }
    cpu[2] = sd_thread_cpu();
    if (d->cfg.agents)
        ctl_epoch(d);
    cpu[3] = sd_thread_cpu();
    trace_after_epoch(d, now);
    cpu[4] = sd_thread_cpu();
    double ms = (sd_mono() - t0) * 1e3;
    d->epoch_cpu_ms_last = (cpu[4] - c0) * 1e3;
    struct sd_epoch_rec *r = &d->epoch_ring[d->epoch_no % SD_EPOCH_RING];
    *r = (struct sd_epoch_rec){
        .epoch = d->epoch_no, .reports_total = d->reports_total,
        .t = sd_now(), .ms = (float)ms,
        .cpu_ms = (float)d->epoch_cpu_ms_last,
        .core_ms = (float)d->core_ms_last,
        .core_cpu_ms = (float)d->core_cpu_ms_last, .jobs = (uint32_t)n};
    for (int k = 0; k < 5; k++)
        r->part_cpu_ms[k] = (float)((cpu[k] - (k ? cpu[k - 1] : c0)) * 1e3);
    sd_log(d, 2, "epoch %llu: %zu jobs, %.3f ms, CPU %.3f ms (forecast "
           "check %.3f, core %.3f, applying %.3f, nodes %.3f, timeline "
           "%.3f)", (unsigned long long)d->epoch_no, n, ms,
           d->epoch_cpu_ms_last, r->part_cpu_ms[0], r->part_cpu_ms[1],
           r->part_cpu_ms[2], r->part_cpu_ms[3], r->part_cpu_ms[4]);
    d->epoch_ms_last = ms;
    if (ms > d->epoch_ms_max)
        d->epoch_ms_max = ms;
    if (n > 0) {
        if (ms - d->core_ms_last > d->apply_ms_max)
            d->apply_ms_max = ms - d->core_ms_last;
        d->epoch_ms_sum += ms;
        d->core_ms_sum += d->core_ms_last;
        d->epoch_cpu_ms_sum += d->epoch_cpu_ms_last;
        d->core_cpu_ms_sum += d->core_cpu_ms_last;
        d->busy_epochs++;
    }
}

void job_tick(sd_daemon *d)
{
    double mono = sd_mono();
    double dt = d->tick_last > 0 ? mono - d->tick_last : SD_TICK_S;
    d->tick_last = mono;
    for (size_t i = slaq_sched_count(d->sched); i-- > 0;)
        job_watch(d, slaq_job_user(slaq_sched_job(d->sched, i)), mono);
    array_tick(d);
    job_dispatch(d);
    enf_tick(d, dt);
    job_expire(d);
}

