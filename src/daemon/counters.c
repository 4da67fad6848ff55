/*
 * counters.c — the table of slaqd's counters and gauges, and the two
 * writers that show it: as keys of the `status` reply and as Prometheus
 * samples on GET /metrics (counters.h).
 *
 * A number slaqd keeps about itself is one row here: its status key, its
 * Prometheus name, its type, its help text and where its value lives (a
 * field of sd_daemon or a function). Adding a counter is adding a row;
 * docs/metrics.md lists the rows, and tests/e2e/test_counters.py fails if
 * the list, `status` and /metrics disagree. A row may name only one
 * output: the job counts, the connections and the epochs' timing
 * breakdowns are in `status` alone (slaq status and the dashboard read
 * them), the forecast error over all jobs only in /metrics. A counter
 * names both.
 *
 * Per-job samples (labelled with the job) and slaq_jobs{state} are not
 * daemon-wide numbers and are written by http.c.
 */
#include <math.h>
#include <stddef.h>

#include "daemon/clock.h"
#include "daemon/counters.h"
#include "daemon/daemon.h"
#include "daemon/store.h"
#include "daemon/trace.h"

/* How a row's value is held: a field of sd_daemon (at `off`) or an
 * accessor function (`get`). */
typedef enum {
    CTR_U64,    /* uint64_t field; an integer in status */
    CTR_SIZE,   /* size_t field; an integer in status */
    CTR_DOUBLE, /* double field; a number in status */
    CTR_INT,    /* get(); an integer in status */
    CTR_REAL,   /* get(); a number in status */
    CTR_BOOL    /* get(), 0 or 1; true or false in status, 0 or 1 in
                   /metrics */
} counter_form;

typedef struct counter_row {
    const char *key;     /* in `status`; NULL: /metrics only */
    const char *prom;    /* in /metrics; NULL: `status` only */
    const char *type;    /* "counter" (only grows) or "gauge" */
    const char *help;    /* /metrics' HELP line, and docs/metrics.md */
    counter_form form;
    size_t off;          /* offsetof(sd_daemon, field) (CTR_U64 ...) */
    double (*get)(sd_daemon *d); /* the value (CTR_INT ...) */
    double prom_per;     /* /metrics shows the status value divided by
                            this (1e3: milliseconds in status, seconds in
                            Prometheus' convention); 0 means 1 */
} counter_row;

/* ------------------------------------------------------------ accessors */

static double ctr_cores(sd_daemon *d)
{
    return slaq_sched_get_config(d->sched)->cores;
}

static double ctr_epoch_s(sd_daemon *d)
{
    return slaq_sched_get_config(d->sched)->epoch_s;
}

static double ctr_jobs_active(sd_daemon *d)
{
    return (double)slaq_sched_count(d->sched);
}

static double ctr_jobs_total(sd_daemon *d)
{
    size_t total = 0;
    for (size_t i = 0; i < d->njobs; i++)
        total += d->jobs[i] != NULL;
    return (double)total;
}

static double ctr_cores_allocated(sd_daemon *d)
{
    double used = 0;
    size_t n = slaq_sched_count(d->sched);
    for (size_t i = 0; i < n; i++)
        used += slaq_job_alloc(slaq_sched_job(d->sched, i));
    return used;
}

static double ctr_uptime(sd_daemon *d)
{
    return sd_now() - d->started;
}

static double ctr_store_ok(sd_daemon *d)
{
    return !store_failing(d->store);
}

static double ctr_store_failures(sd_daemon *d)
{
    return (double)store_failures(d->store);
}

static double ctr_store_pending(sd_daemon *d)
{
    return (double)store_pending(d->store);
}

static double ctr_store_lost(sd_daemon *d)
{
    return (double)store_lost(d->store);
}

static double ctr_buffered_limit(sd_daemon *d)
{
    (void)d;
    return SD_MAX_BUFFERED;
}

/* Means over the epochs that had jobs (the idle ones cost nothing). */
static double busy(const sd_daemon *d)
{
    return d->busy_epochs ? (double)d->busy_epochs : 1;
}

static double ctr_epoch_ms_mean(sd_daemon *d)
{
    return d->epoch_ms_sum / busy(d);
}

static double ctr_core_ms_mean(sd_daemon *d)
{
    return d->core_ms_sum / busy(d);
}

static double ctr_epoch_cpu_ms_mean(sd_daemon *d)
{
    return d->epoch_cpu_ms_sum / busy(d);
}

static double ctr_core_cpu_ms_mean(sd_daemon *d)
{
    return d->core_cpu_ms_sum / busy(d);
}

/* No job scored yet: 0, as a Prometheus gauge cannot be missing. */
static double ctr_predictor_error(sd_daemon *d)
{
    double e = trace_forecast_error_all(d);
    return isnan(e) ? 0.0 : e;
}

/* ---------------------------------------------------------------- table */

#define FIELD(form, name) form, offsetof(sd_daemon, name), NULL, 0
#define FN(form, fn) form, 0, fn, 0
#define MS_FIELD(name) CTR_DOUBLE, offsetof(sd_daemon, name), NULL, 1e3

static const counter_row counters[] = {
    {"cores", "slaq_cores", "gauge", "Cores slaqd divides.",
     FN(CTR_REAL, ctr_cores)},
    {"jobs_active", NULL, "gauge",
     "Jobs the core is scheduling (running, stopping or pending).",
     FN(CTR_INT, ctr_jobs_active)},
    {"jobs_total", NULL, "gauge", "Jobs in the job table, ended ones too.",
     FN(CTR_INT, ctr_jobs_total)},
    {"cores_allocated", NULL, "gauge",
     "Cores allocated to the active jobs by the last epoch.",
     FN(CTR_REAL, ctr_cores_allocated)},
    {"uptime_s", NULL, "gauge", "Seconds since slaqd started.",
     FN(CTR_REAL, ctr_uptime)},
    {"connections", NULL, "gauge",
     "Open connections to slaqd's sockets (jobs, clients, nodes).",
     FIELD(CTR_SIZE, nconns)},
    {"reports_total", "slaq_reports_total", "counter",
     "Iteration reports accepted since slaqd started.",
     FIELD(CTR_U64, reports_total)},
    {"errors_total", "slaq_report_errors_total", "counter",
     "Messages refused since slaqd started.",
     FIELD(CTR_U64, errors_total)},
    {"auth_failures_total", "slaq_auth_failures_total", "counter",
     "Wrong or missing tokens, job secrets and agent-link proofs since "
     "slaqd started.",
     FIELD(CTR_U64, auth_failures_total)},
    {"auth_limited_total", "slaq_auth_limited_total", "counter",
     "Credentials refused unchecked by the failed-authentication rate "
     "limits (per address, per port, overall).",
     FIELD(CTR_U64, auth_limited_total)},
    {"submits_limited_total", "slaq_submits_limited_total", "counter",
     "Submits refused because their user held --user-jobs jobs or "
     "--user-tasks array tasks.",
     FIELD(CTR_U64, submits_limited_total)},
    {"reports_limited_total", "slaq_reports_limited_total", "counter",
     "Reports refused because their user's jobs sent more than "
     "--user-reports a second.",
     FIELD(CTR_U64, reports_limited_total)},
    {"logs_cut_total", "slaq_logs_cut_total", "counter",
     "Times a job's log file was cut back: over --log-bytes, its user "
     "over --user-log-bytes, or the state file system under "
     "--disk-reserve.",
     FIELD(CTR_U64, logs_cut_total)},
    {"agent_link_refused_total", "slaq_agent_link_refused_total", "counter",
     "Agent-link lines that did not open (altered, replayed or out of "
     "order): each closed its connection.",
     FIELD(CTR_U64, link_refused_total)},
    {"agent_register_refused_total", "slaq_agent_register_refused_total",
     "counter",
     "Agent registrations refused: a node other than the one whose key "
     "opened the link, or a node another live connection holds.",
     FIELD(CTR_U64, register_refused_total)},
    {"store_ok", "slaq_store_ok", "gauge",
     "1 while the database takes writes, 0 while commits fail.",
     FN(CTR_BOOL, ctr_store_ok)},
    {"store_failures_total", "slaq_store_failures_total", "counter",
     "Failed database writes and commits since slaqd started.",
     FN(CTR_INT, ctr_store_failures)},
    {"state_free_bytes", "slaq_state_free_bytes", "gauge",
     "Bytes free to slaqd on the state directory's file system (statvfs), "
     "read with every check of the log limits (--disk-reserve).",
     FIELD(CTR_U64, state_free)},
    {"reports_pending", "slaq_reports_pending", "gauge",
     "Reports accepted but not yet committed (kept in memory).",
     FN(CTR_INT, ctr_store_pending)},
    {"reports_lost_total", "slaq_reports_lost_total", "counter",
     "Reports dropped: more than the memory holds while writes failed, "
     "or held in memory when slaqd died while writes failed (counted by "
     "the next slaqd); kept across restarts.",
     FN(CTR_INT, ctr_store_lost)},
    {"reports_duplicate_total", "slaq_reports_duplicate_total", "counter",
     "Resent reports slaqd already had, dropped (acknowledged sessions).",
     FIELD(CTR_U64, reports_duplicate)},
    {"moves_total", "slaq_moves_total", "counter",
     "Running jobs moved to another node (slaq move): stopped with their "
     "checkpoint and started again there.",
     FIELD(CTR_U64, moves_total)},
    {"move_seconds_total", "slaq_move_seconds_total", "counter",
     "Seconds the moved jobs stopped: each from its stop asked to its first "
     "report on the new node.",
     FIELD(CTR_DOUBLE, move_seconds_total)},
    {"move_checkpoint_bytes_total", "slaq_move_checkpoint_bytes_total",
     "counter", "Bytes of the checkpoints the moved jobs started again from.",
     FIELD(CTR_U64, move_checkpoint_bytes)},
    {"moves_skipped_total", "slaq_moves_skipped_total", "counter",
     "Moves the policy planned (mlfs-h, mlfs) and did not make: they would "
     "have cost the job, at the mean stop of the moves so far, more "
     "seconds than its end came sooner. Counted once each time a job's "
     "move is refused, not at every epoch it stays refused.",
     FIELD(CTR_U64, moves_skipped_total)},
    {"acks_sent_total", "slaq_acks_sent_total", "counter",
     "Acknowledgements of committed reports sent to jobs.",
     FIELD(CTR_U64, acks_sent)},
    {"http_header_timeouts_total", "slaq_http_header_timeouts_total",
     "counter",
     "HTTP connections closed: a request's headers not whole within 10 s.",
     FIELD(CTR_U64, http_header_timeouts)},
    {"buffered_bytes", "slaq_buffered_bytes", "gauge",
     "Bytes held in all connections' input and output buffers.",
     FIELD(CTR_SIZE, buffered)},
    {"buffered_bytes_max", NULL, "gauge",
     "The most bytes buffered at any time since slaqd started.",
     FIELD(CTR_SIZE, buffered_max)},
    {"buffered_bytes_limit", "slaq_buffered_bytes_limit", "gauge",
     "The cap on slaq_buffered_bytes.", FN(CTR_INT, ctr_buffered_limit)},
    {"overload_drops_total", "slaq_overload_drops_total", "counter",
     "Connections closed because the buffers would pass the cap.",
     FIELD(CTR_U64, overload_drops)},
    {"idle_closed_total", "slaq_idle_closed_total", "counter",
     "Connections closed for sending no message in time.",
     FIELD(CTR_U64, idle_closed)},
    {"accept_pauses_total", "slaq_accept_pauses_total", "counter",
     "Times slaqd stopped accepting, out of descriptors.",
     FIELD(CTR_U64, accept_pauses)},
    {"epoch", "slaq_epochs_total", "counter", "Scheduling epochs run.",
     FIELD(CTR_U64, epoch_no)},
    {"epoch_s", "slaq_epoch_interval_seconds", "gauge",
     "The scheduling epoch T.", FN(CTR_REAL, ctr_epoch_s)},
    {"epoch_ms_last", "slaq_epoch_duration_seconds", "gauge",
     "Time slaqd spent in the last epoch (core and applying).",
     MS_FIELD(epoch_ms_last)},
    {"epoch_ms_max", "slaq_epoch_duration_seconds_max", "gauge",
     "Longest epoch since slaqd started.", MS_FIELD(epoch_ms_max)},
    {"epoch_ms_mean", NULL, "gauge",
     "Mean time of the epochs that had jobs, in ms.",
     FN(CTR_REAL, ctr_epoch_ms_mean)},
    {"core_ms_last", "slaq_epoch_core_seconds", "gauge",
     "Time the core's slaq_sched_epoch took in the last epoch.",
     MS_FIELD(core_ms_last)},
    {"core_ms_max", NULL, "gauge",
     "Longest slaq_sched_epoch since slaqd started, in ms.",
     FIELD(CTR_DOUBLE, core_ms_max)},
    {"core_ms_mean", NULL, "gauge",
     "Mean time of slaq_sched_epoch over the epochs that had jobs, in ms.",
     FN(CTR_REAL, ctr_core_ms_mean)},
    {"apply_ms_max", NULL, "gauge",
     "Longest time slaqd spent applying an epoch's allocations, in ms.",
     FIELD(CTR_DOUBLE, apply_ms_max)},
    {"epoch_cpu_ms_last", NULL, "gauge",
     "CPU time slaqd's thread spent in the last epoch, in ms.",
     FIELD(CTR_DOUBLE, epoch_cpu_ms_last)},
    {"epoch_cpu_ms_mean", NULL, "gauge",
     "Mean CPU time of the epochs that had jobs, in ms.",
     FN(CTR_REAL, ctr_epoch_cpu_ms_mean)},
    {"core_cpu_ms_last", NULL, "gauge",
     "CPU time of slaq_sched_epoch in the last epoch, in ms.",
     FIELD(CTR_DOUBLE, core_cpu_ms_last)},
    {"core_cpu_ms_mean", NULL, "gauge",
     "Mean CPU time of slaq_sched_epoch over the epochs that had jobs, "
     "in ms.", FN(CTR_REAL, ctr_core_cpu_ms_mean)},
    {NULL, "slaq_predictor_error", "gauge",
     "Mean absolute error of forecasts one epoch ahead, over every report "
     "of the jobs slaqd holds, in units of each job's loss range "
     "L(0) - min L.", FN(CTR_REAL, ctr_predictor_error)},
    {NULL, "slaq_predictor_errors_total", "counter",
     "Reports the forecast error was measured on.", FIELD(CTR_U64, pe_n)},
};

#define NCOUNTERS (sizeof counters / sizeof *counters)

/* ---------------------------------------------------------------- writers */

static const void *field(const sd_daemon *d, const counter_row *c)
{
    return (const char *)d + c->off;
}

/* A row's value as a number, as status has it. */
static double counter_value(sd_daemon *d, const counter_row *c)
{
    switch (c->form) {
    case CTR_U64:
        return (double)*(const uint64_t *)field(d, c);
    case CTR_SIZE:
        return (double)*(const size_t *)field(d, c);
    case CTR_DOUBLE:
        return *(const double *)field(d, c);
    case CTR_INT:
    case CTR_REAL:
    case CTR_BOOL:
        break;
    }
    return c->get(d);
}

static json_t *counter_json(sd_daemon *d, const counter_row *c)
{
    switch (c->form) {
    case CTR_U64:
        return json_integer((json_int_t)*(const uint64_t *)field(d, c));
    case CTR_SIZE:
        return json_integer((json_int_t)*(const size_t *)field(d, c));
    case CTR_INT:
        return json_integer((json_int_t)c->get(d));
    case CTR_BOOL:
        return json_boolean(c->get(d) != 0);
    case CTR_DOUBLE:
    case CTR_REAL:
        break;
    }
    return json_real(counter_value(d, c));
}

void counter_status(sd_daemon *d, json_t *r)
{
    for (size_t i = 0; i < NCOUNTERS; i++)
        if (counters[i].key)
            json_object_set_new(r, counters[i].key,
                                counter_json(d, &counters[i]));
}

void counter_prometheus(sd_daemon *d, FILE *f)
{
    for (size_t i = 0; i < NCOUNTERS; i++) {
        const counter_row *c = &counters[i];
        if (!c->prom)
            continue;
        double v = counter_value(d, c);
        if (c->prom_per != 0)
            v /= c->prom_per;
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", c->prom,
                c->help, c->prom, c->type, c->prom, v);
    }
}
