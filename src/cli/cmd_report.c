/*
 * cmd_report.c — `slaq report STATE_DIR|state.db`: a slaqd run's metrics,
 * computed from its state.db, the way `slaq sim` computes a simulated
 * run's; `slaq report --logs LOG...`: a run's from its jobs' logs
 * (report_logs.c reads them into the same rpt_run, measured by the same
 * code below).
 *
 * slaqd keeps every job with its submission and end, every report with
 * the time it arrived, and every change of a job's allocation
 * (docs/state-db.md). From them this command gives each job's times to
 * 50/90/95% of its loss reduction, its JCT, CPU-seconds and reports, and
 * the run's means, makespan, CPU-seconds, average normalised loss and
 * cores by loss group (docs/metrics.md). The definitions are not written
 * again here: a report's normalised loss and time to X% are
 * metric_norm_loss and metric_reached, an epoch boundary's row is
 * metric_sample (src/sim/metrics.h), and the run's numbers are
 * sim_summarize's, the simulator's own functions.
 *
 * Where a run differs from a simulation:
 * - L_end is the last loss the job reported (in a simulation, its curve's
 *   last point). A job that has not ended has none yet: it gets no times
 *   to X% and no JCT, and in the timeline its newest loss stands for
 *   L_end (which makes that part of the average provisional). A job that
 *   completed no lower than it began reaches every X at its end, where a
 *   simulated one reaches it at its last iteration.
 * - The epoch boundaries are not all in state.db (only those that changed
 *   an allocation are), so the timeline is sampled every --epoch seconds
 *   from the first submission; a job is active from its submission to its
 *   end (or the last moment state.db records, if it has not ended).
 * The database is opened read-only (SQLITE_OPEN_READONLY, through
 * store_run.c): a running slaqd is neither disturbed nor changed.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "cli/report_run.h"
#include "core/util.h"
#include "daemon/store.h"
#include "io/text.h"
#include "sim/metrics.h"
#include "sim/sim.h"
#include "slaq/settings.h"

static void usage(FILE *f)
{
    fputs(
        "usage: slaq report [OPTIONS] STATE_DIR|state.db\n"
        "       slaq report --logs [OPTIONS] LOG...\n\n"
        "A slaqd run's metrics from its state.db (docs/metrics.md, the same\n"
        "definitions and code as slaq sim's), read-only: slaqd may be\n"
        "running. With --logs, a run's from its jobs' logs written by\n"
        "bench/real/stamp.py instead (runs without slaqd, docs/formats.md).\n"
        "One line per job:\n\n"
        "  ID, USER, NAME, STATE  the job's id, owner, name and state\n"
        "  T50_S, T90_S, T95_S    seconds from its submission to the first\n"
        "                         report with 50, 90, 95% of its loss drop\n"
        "                         (its first to its last reported loss)\n"
        "  JCT_S                  seconds from its submission to its end\n"
        "  CPU_S                  the CPU-seconds its reports carried\n"
        "                         (with --logs, its log's exit line's)\n"
        "  REPORTS                its reports\n\n"
        "A job that has not ended shows '-' for all four times. A job whose\n"
        "last loss is not below its first reaches every X at its end if it\n"
        "completed (done, stopped): its times are its JCT, and a note on\n"
        "stderr says so; if not (failed, cancelled), none. Then the run: the\n"
        "mean times over the jobs that have one, the makespan (first\n"
        "submission to last end, once every job has ended), the CPU-seconds,\n"
        "the average normalised loss over time and the cores by loss group.\n\n"
        "  --logs            read LOG..., one job each, named by the file's\n"
        "                    name less .log: an optional line 'TIME arrival',\n"
        "                    then 'TIME start' (the job arrives at the first),\n"
        "                    its output with reports 'TIME ... iter=N loss=L',\n"
        "                    and 'TIME exit=S cpu_s=C': its end (state done, or\n"
        "                    failed if S is not 0) and its CPU_S\n"
        "  --json            one object {\"jobs\": [...], \"summary\": {...}}\n"
        "  --epoch SECONDS   sample the average normalised loss every SECONDS\n"
        "                    from the first submission (default 1, slaqd's\n"
        "                    default epoch; give the run's --epoch)\n"
        "  --timeline FILE   also write those samples as CSV, the columns of\n"
        "                    slaq sim's timeline.csv (time_s from the first\n"
        "                    submission)\n"
        "  -h, --help        this help\n\n"
        "Exit status: 0, 1 if reading fails midway, 2 on bad usage, a file\n"
        "that is not slaqd's state.db (missing, not SQLite, empty, another\n"
        "program's) or a log that is not stamp.py's (the error names its\n"
        "file, line and field), or more than 1000000 samples (a larger\n"
        "--epoch).\n",
        f);
}

/* ------------------------------------------------------------ the run */

static void run_free(rpt_run *run)
{
    for (size_t i = 0; i < run->njobs; i++) {
        rpt_job *j = &run->jobs[i];
        free(j->name);
        free(j->user);
        free(j->state);
        free(j->reps);
        free(j->allocs);
    }
    free(run->jobs);
}

static char *dup_or(const char *s, const char *dflt)
{
    return strdup(s ? s : dflt);
}

rpt_job *rpt_push_job(rpt_run *run, int64_t id, const char *name,
                      const char *user, const char *state)
{
    if (run->njobs == run->capjobs) {
        size_t cap = grow_cap(run->capjobs, run->njobs + 1, 64);
        if (!cap || GROW_ARRAY(run->jobs, cap))
            return NULL;
        run->capjobs = cap;
    }
    rpt_job *j = &run->jobs[run->njobs];
    memset(j, 0, sizeof *j);
    j->id = id;
    j->name = dup_or(name, "");
    j->user = dup_or(user, "-");
    j->state = dup_or(state, "-");
    run->njobs++;
    return j->name && j->user && j->state ? j : NULL;
}

int rpt_push_report(rpt_job *j, double t, double loss, uint64_t iter,
                    double cpu_s)
{
    if (j->nreps == j->capreps) {
        size_t cap = grow_cap(j->capreps, j->nreps + 1, 16);
        if (!cap || GROW_ARRAY(j->reps, cap))
            return -2;
        j->capreps = cap;
    }
    j->reps[j->nreps++] = (rpt_report){t, loss};
    j->last_iter = iter;
    j->cpu_s += cpu_s;
    return 0;
}

static int add_job(void *arg, const store_run_job *sj)
{
    rpt_job *j = rpt_push_job(arg, sj->id, sj->name, sj->user, sj->state);
    if (!j)
        return -2;
    j->submitted = sj->submitted;
    j->ended = sj->ended;
    j->max_cores = sj->max_cores;
    return 0;
}

/* The job of id, or NULL: jobs are in id order, and reports and
 * allocations come in runs of one job's, so the last answer is tried
 * first. */
static rpt_job *find_job(rpt_run *run, int64_t id)
{
    if (run->last < run->njobs && run->jobs[run->last].id == id)
        return &run->jobs[run->last];
    size_t lo = 0, hi = run->njobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (run->jobs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == run->njobs || run->jobs[lo].id != id)
        return NULL;
    run->last = lo;
    return &run->jobs[lo];
}

static int add_report(void *arg, int64_t job, const slaq_report *r,
                      double threads, double wall_s)
{
    (void)threads;
    (void)wall_s;
    rpt_job *j = find_job(arg, job);
    if (!j) /* a report of a job whose row is gone: no job to credit */
        return 0;
    return rpt_push_report(j, r->t, r->loss, r->iter, r->cpu_s);
}

static int add_alloc(void *arg, int64_t job, uint64_t epoch, double cores,
                     double t)
{
    rpt_job *j = find_job(arg, job);
    if (!j)
        return 0;
    if (j->nallocs == j->capallocs) {
        size_t cap = grow_cap(j->capallocs, j->nallocs + 1, 16);
        if (!cap || GROW_ARRAY(j->allocs, cap))
            return -2;
        j->capallocs = cap;
    }
    j->allocs[j->nallocs++] = (rpt_alloc){t, cores, epoch};
    return 0;
}

/* Allocations by time: epochs are numbered anew at each start of slaqd,
 * so their order alone mixes the runs of one state directory. */
static int by_time(const void *a, const void *b)
{
    const rpt_alloc *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->epoch < y->epoch ? -1 : x->epoch > y->epoch;
}

static int by_submission(const void *a, const void *b)
{
    const rpt_job *x = *(rpt_job *const *)a, *y = *(rpt_job *const *)b;
    if (x->submitted != y->submitted)
        return x->submitted < y->submitted ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Reads the whole run. 0, or -1 after saying why (exit status 1). */
static int load(store_run *db, const char *path, rpt_run *run)
{
    int rc = store_run_jobs(db, -INFINITY, add_job, run);
    const char *what = "jobs";
    if (!rc) {
        what = "reports";
        rc = store_run_reports(db, add_report, run);
    }
    if (!rc) {
        what = "allocs";
        rc = store_run_allocs(db, -INFINITY, add_alloc, run);
    }
    if (rc) {
        cli_error("report", "%s: reading table %s: %s", path, what,
                  rc == -2 ? "out of memory" : store_run_errmsg(db));
        return -1;
    }
    for (size_t i = 0; i < run->njobs; i++)
        if (run->jobs[i].nallocs > 1) /* none: allocs is NULL */
            qsort(run->jobs[i].allocs, run->jobs[i].nallocs,
                  sizeof *run->jobs[i].allocs, by_time);
    return 0;
}

/* ------------------------------------------------------------ metrics */

/* ℓ of job j's report k: against its last reported loss. */
static double report_norm_loss(const rpt_job *j, size_t k)
{
    return metric_norm_loss(j->reps[k].loss, j->reps[0].loss,
                            j->reps[j->nreps - 1].loss, k + 1 == j->nreps);
}

/* Whether the job ran to its end: it finished (done) or slaqd stopped it
 * (stopped: its target reached, a plateau); not one that failed, was
 * cancelled or lost. */
static int completed(const rpt_job *j)
{
    return !strcmp(j->state, "done") || !strcmp(j->state, "stopped");
}

/*
 * A job's times to X%, from its submission; NAN for an X not reached,
 * and for every X while it has not ended (it has no L_end yet). A job
 * whose last loss is not below its first has no drop to normalise by:
 * its ℓ is 1 until it completes (docs/metrics.md), so if it completed it
 * reaches every X at its end, as a simulated curve that never fell does
 * at its last iteration (said on stderr, since its times are then its
 * JCT); if it failed or was cancelled, it reaches none.
 */
static void job_times(const rpt_job *j, double tx[SIM_NX])
{
    for (int x = 0; x < SIM_NX; x++)
        tx[x] = NAN;
    if (!(j->ended > 0) || !j->nreps)
        return;
    double first = j->reps[0].loss, last = j->reps[j->nreps - 1].loss;
    if (!(first - last > 0)) {
        if (!completed(j))
            return;
        char who[64];
        snprintf(who, sizeof who, "job %lld", (long long)j->id);
        cli_error("report", "note: %s: its loss ended at %g, no lower than "
                  "its first %g: its times to X%% are its JCT",
                  j->log ? j->log : who, last, first);
        for (int x = 0; x < SIM_NX; x++)
            tx[x] = j->ended - j->submitted;
        return;
    }
    int xi = 0;
    for (size_t k = 0; k < j->nreps && xi < SIM_NX; k++)
        xi = metric_reached(report_norm_loss(j, k),
                            j->reps[k].t - j->submitted, xi, tx);
}

/*
 * The timeline: at t = first + k·epoch, k = 0, 1, ..., up to `now`, a
 * sample of the jobs active then (submitted <= t < end), each with the ℓ
 * of its last report at or before t (1 before its first) and its last
 * allocation (0 before its first), into r->samples. Stretches with no job
 * active are skipped. 0, or after saying why -1 (out of memory) or -2
 * (more than SIM_MAX_EPOCHS samples: --epoch too small for the run).
 */
static int timeline(rpt_run *run, rpt_job **by_sub, double first,
                    double now, double epoch, sim_result *r)
{
    size_t n = run->njobs, cap = 0, next = 0, nact = 0;
    int rc = -1;
    rpt_job **act = malloc((n ? n : 1) * sizeof *act);
    metric_point *pts = malloc((n ? n : 1) * sizeof *pts);
    if (!act || !pts)
        goto oom;
    for (double k = 0;; k++) {
        double t = first + k * epoch;
        if (t > now)
            break;
        while (next < n && by_sub[next]->submitted <= t)
            act[nact++] = by_sub[next++];
        size_t keep = 0;
        for (size_t i = 0; i < nact; i++)
            if (!(act[i]->ended > 0) || t < act[i]->ended)
                act[keep++] = act[i];
        nact = keep;
        if (!nact) {
            if (next == n)
                break;
            /* on to the first boundary not before the next submission */
            double kk = ceil((by_sub[next]->submitted - first) / epoch) - 1;
            k = kk > k ? kk : k;
            continue;
        }
        if (r->nsamples == SIM_MAX_EPOCHS) {
            cli_error("report", "the run spans %g s: more than %d samples "
                      "of --epoch %g s with jobs active; give a larger "
                      "--epoch", now - first, SIM_MAX_EPOCHS, epoch);
            rc = -2;
            goto err;
        }
        for (size_t i = 0; i < nact; i++) {
            rpt_job *j = act[i];
            while (j->rcur < j->nreps && j->reps[j->rcur].t <= t)
                j->rcur++;
            while (j->acur < j->nallocs && j->allocs[j->acur].t <= t)
                j->acur++;
            double a = j->acur ? j->allocs[j->acur - 1].cores : 0;
            pts[i] = (metric_point){
                j->rcur ? report_norm_loss(j, j->rcur - 1) : 1,
                a < j->max_cores ? a : j->max_cores, j->order};
        }
        if (r->nsamples == cap) {
            size_t nc = grow_cap(cap, r->nsamples + 1, 256);
            if (!nc || GROW_ARRAY(r->samples, nc))
                goto oom;
            cap = nc;
        }
        metric_sample(&r->samples[r->nsamples++], t - first, pts, nact);
    }
    free(act);
    free(pts);
    return 0;
oom:
    cli_error("report", "out of memory");
err:
    free(act);
    free(pts);
    return rc;
}

/* ------------------------------------------------------------ output */

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A string of state.db as JSON: itself, or escaped if it is not UTF-8. */
static json_t *str_json(const char *s)
{
    json_t *v = json_string(s);
    if (!v) {
        char buf[4096];
        v = json_string(text_escape(buf, sizeof buf, s));
    }
    return v;
}

static int x_of(int pct)
{
    int x = sim_x_index(pct);
    assert(x >= 0);
    return x;
}

static void print_time(double v, int width, const char *fmt)
{
    char buf[32] = "-";
    if (isfinite(v))
        snprintf(buf, sizeof buf, fmt, v);
    printf(" %*s", width, buf);
}

static int print_json(const rpt_run *run, const sim_result *r,
                      const sim_summary *s, double first, double cpu,
                      size_t ended, double epoch)
{
    static const int pcts[] = {50, 90, 95};
    json_t *jobs = json_array(), *root = json_object();
    for (size_t i = 0; i < run->njobs; i++) {
        const rpt_job *j = &run->jobs[i];
        const sim_jobres *jr = &r->jobs[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer(j->id));
        json_object_set_new(o, "name", str_json(j->name));
        json_object_set_new(o, "user", str_json(j->user));
        json_object_set_new(o, "state", str_json(j->state));
        json_object_set_new(o, "submitted", json_real(j->submitted));
        json_object_set_new(o, "arrival_s", json_real(jr->arrival));
        json_object_set_new(o, "ended",
                            num_or_null(j->ended > 0 ? j->ended : NAN));
        for (int p = 0; p < 3; p++) {
            char key[16];
            snprintf(key, sizeof key, "t%d_s", pcts[p]);
            json_object_set_new(o, key, num_or_null(jr->tx[x_of(pcts[p])]));
        }
        json_object_set_new(o, "jct_s",
                            num_or_null(jr->completion - jr->arrival));
        json_object_set_new(o, "cpu_s", json_real(j->cpu_s));
        json_object_set_new(o, "reports", json_integer((json_int_t)j->nreps));
        json_object_set_new(o, "first_report_at", j->nreps
                            ? json_real(j->reps[0].t) : json_null());
        json_object_set_new(o, "last_report_at", j->nreps
                            ? json_real(j->reps[j->nreps - 1].t)
                            : json_null());
        json_object_set_new(o, "iters", j->nreps
                            ? json_integer((json_int_t)j->last_iter)
                            : json_null());
        json_object_set_new(o, "first_loss", j->nreps
                            ? num_or_null(j->reps[0].loss) : json_null());
        json_object_set_new(o, "last_loss", j->nreps
                            ? num_or_null(j->reps[j->nreps - 1].loss)
                            : json_null());
        json_array_append_new(jobs, o);
    }
    json_t *sum = json_object();
    json_object_set_new(sum, "jobs", json_integer((json_int_t)run->njobs));
    json_object_set_new(sum, "ended", json_integer((json_int_t)ended));
    json_object_set_new(sum, "first_submitted",
                        run->njobs ? json_real(first) : json_null());
    for (int p = 0; p < 3; p++) {
        char key[16];
        snprintf(key, sizeof key, "t%d_mean_s", pcts[p]);
        json_object_set_new(sum, key,
                            num_or_null(s->tx_mean[x_of(pcts[p])]));
    }
    json_object_set_new(sum, "jct_mean_s", num_or_null(s->jct_mean));
    json_object_set_new(sum, "makespan_s", num_or_null(s->makespan));
    json_object_set_new(sum, "cpu_s", json_real(cpu));
    json_object_set_new(sum, "avg_norm_loss", r->nsamples
                        ? num_or_null(s->avg_norm_loss) : json_null());
    json_object_set_new(sum, "epoch_s", json_real(epoch));
    json_object_set_new(sum, "samples", json_integer((json_int_t)r->nsamples));
    int used = 0;
    for (size_t i = 0; i < r->nsamples && !used; i++)
        used = r->samples[i].cores[0] + r->samples[i].cores[1] +
               r->samples[i].cores[2] > 0;
    json_object_set_new(sum, "share_by_loss_group", used
        ? json_pack("{s:f, s:f, s:f}", "high", s->share[SIM_HIGH],
                    "medium", s->share[SIM_MEDIUM], "low", s->share[SIM_LOW])
        : json_null());
    json_object_set_new(root, "jobs", jobs);
    json_object_set_new(root, "summary", sum);
    int rc = json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                        JSON_REAL_PRECISION(17));
    json_decref(root);
    if (rc == 0)
        putchar('\n');
    return rc;
}

static void print_table(const rpt_run *run, const sim_result *r,
                        const sim_summary *s, double cpu, size_t ended,
                        double epoch)
{
    printf("%-5s %-10s %-18s %-10s %8s %8s %8s %8s %10s %8s\n", "ID", "USER",
           "NAME", "STATE", "T50_S", "T90_S", "T95_S", "JCT_S", "CPU_S",
           "REPORTS");
    for (size_t i = 0; i < run->njobs; i++) {
        const rpt_job *j = &run->jobs[i];
        const sim_jobres *jr = &r->jobs[i];
        printf("%-5lld %-10.10s %-18.18s %-10.10s", (long long)j->id,
               rpc_safe(j->user), rpc_safe(j->name), rpc_safe(j->state));
        print_time(jr->tx[x_of(50)], 8, "%.1f");
        print_time(jr->tx[x_of(90)], 8, "%.1f");
        print_time(jr->tx[x_of(95)], 8, "%.1f");
        print_time(jr->completion - jr->arrival, 8, "%.1f");
        print_time(j->cpu_s, 10, "%.2f");
        printf(" %8zu\n", j->nreps);
    }
    char m[3][32], line[160];
    for (int p = 0; p < 3; p++) {
        double v = s->tx_mean[x_of(p == 0 ? 50 : p == 1 ? 90 : 95)];
        snprintf(m[p], sizeof m[p], isfinite(v) ? "%.1f" : "-", v);
    }
    printf("\njobs                       %zu (%zu ended)\n", run->njobs,
           ended);
    printf("mean t50 / t90 / t95 (s)   %s / %s / %s\n", m[0], m[1], m[2]);
    snprintf(line, sizeof line, isfinite(s->jct_mean) ? "%.1f" : "-",
             s->jct_mean);
    printf("mean JCT (s)               %s\n", line);
    if (isfinite(s->makespan))
        printf("makespan (s)               %.1f\n", s->makespan);
    else
        printf("makespan (s)               - (%zu not ended)\n",
               run->njobs - ended);
    printf("CPU-seconds                %.2f\n", cpu);
    if (r->nsamples)
        printf("average normalised loss    %.3f (%zu samples, every %g s)\n",
               s->avg_norm_loss, r->nsamples, epoch);
    else
        printf("average normalised loss    - (no job was active)\n");
    if (r->nsamples && s->share[0] + s->share[1] + s->share[2] > 0)
        printf("cores by loss group        high %.2f, medium %.2f, low "
               "%.2f\n", s->share[SIM_HIGH], s->share[SIM_MEDIUM],
               s->share[SIM_LOW]);
}

/* ------------------------------------------------------------ the command */

/* The database PATH names: PATH itself, or PATH/state.db for a directory.
 * 0 with db filled, or -1 after saying why. */
static int db_path(const char *path, char *db, size_t len)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        cli_error("report", "%s: %s; expected slaqd's state directory or "
                  "its state.db", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        if ((size_t)snprintf(db, len, "%s/state.db", path) >= len) {
            cli_error("report", "%s: path too long", path);
            return -1;
        }
        if (stat(db, &st) < 0) {
            cli_error("report", "%s: %s; expected slaqd's state directory "
                      "(holding state.db) or its state.db", db,
                      strerror(errno));
            return -1;
        }
    } else if ((size_t)snprintf(db, len, "%s", path) >= len) {
        cli_error("report", "%s: path too long", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        cli_error("report", "%s is not a regular file; expected slaqd's "
                  "state.db (docs/state-db.md)", db);
        return -1;
    }
    if (st.st_size == 0) {
        cli_error("report", "%s is empty (0 bytes); expected slaqd's "
                  "state.db (docs/state-db.md)", db);
        return -1;
    }
    return 0;
}

/* Reads slaqd's database at the path given (a state directory or its
 * state.db) into run. 0, or an exit status after saying why. */
static int read_db(const char *arg, rpt_run *run)
{
    char path[4096], err[1024];
    if (db_path(arg, path, sizeof path))
        return EXIT_USAGE;
    store_run *db = store_run_open(path, err, sizeof err);
    if (!db) {
        cli_error("report", "%s", err);
        return EXIT_USAGE;
    }
    int status = 0;
    if (store_run_check(db, path, err, sizeof err)) {
        cli_error("report", "%s", err);
        status = EXIT_USAGE;
    } else if (load(db, path, run))
        status = EXIT_RUNTIME;
    store_run_close(db);
    return status;
}

/* Measures run and prints it (and writes the timeline to tl_path, if
 * given). The exit status, after saying why when it is not 0. */
static int measure(rpt_run *run, double epoch, const char *tl_path,
                   int json)
{
    int status = EXIT_RUNTIME;
    sim_result r = {0};
    size_t n = run->njobs, ended = 0;
    rpt_job **by_sub = malloc((n ? n : 1) * sizeof *by_sub);
    r.njobs = n;
    r.jobs = calloc(n ? n : 1, sizeof *r.jobs);
    if (!r.jobs || !by_sub) {
        cli_error("report", "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        by_sub[i] = &run->jobs[i];
    qsort(by_sub, n, sizeof *by_sub, by_submission);
    double first = n ? by_sub[0]->submitted : 0, now = first, cpu = 0;
    for (size_t i = 0; i < n; i++) {
        rpt_job *j = by_sub[i];
        j->order = i;
        now = fmax(now, j->submitted);
        if (j->ended > 0)
            now = fmax(now, j->ended);
        else if (j->nreps)
            now = fmax(now, j->reps[j->nreps - 1].t);
        if (j->ended <= 0 && j->nallocs)
            now = fmax(now, j->allocs[j->nallocs - 1].t);
    }
    for (size_t i = 0; i < n; i++) {
        rpt_job *j = &run->jobs[i];
        sim_jobres *jr = &r.jobs[i];
        jr->arrival = j->submitted - first;
        jr->start = NAN;
        jr->completion = j->ended > 0 ? j->ended - first : NAN;
        job_times(j, jr->tx);
        cpu += j->cpu_s;
        ended += j->ended > 0;
    }
    int trc = timeline(run, by_sub, first, now, epoch, &r);
    if (trc) {
        status = trc == -2 ? EXIT_USAGE : EXIT_RUNTIME;
        goto out;
    }
    sim_summary s;
    sim_summarize(&r, &s);
    if (tl_path) {
        FILE *f = fopen(tl_path, "w");
        int bad = !f || sim_write_timeline(f, &r);
        if (f && fclose(f))
            bad = 1;
        if (bad) {
            cli_error("report", "--timeline %s: %s", tl_path,
                      strerror(errno));
            goto out;
        }
    }
    if (json) {
        if (print_json(run, &r, &s, first, cpu, ended, epoch))
            goto out;
    } else
        print_table(run, &r, &s, cpu, ended, epoch);
    status = fflush(stdout) ? EXIT_RUNTIME : 0;
out:
    free(by_sub);
    sim_result_free(&r);
    return status;
}

int cmd_report(int argc, char **argv)
{
    enum { O_JSON = 1, O_EPOCH, O_TIMELINE, O_LOGS };
    static const struct option opts[] = {
        {"json", no_argument, 0, O_JSON},
        {"epoch", required_argument, 0, O_EPOCH},
        {"timeline", required_argument, 0, O_TIMELINE},
        {"logs", no_argument, 0, O_LOGS},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    slaq_sched_config dflt;
    slaq_sched_config_init(&dflt);
    double epoch = dflt.epoch_s;
    const char *tl_path = NULL;
    int o, json = 0, logs = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == O_JSON)
            json = 1;
        else if (o == O_EPOCH) {
            if (cli_parse_positive("report", "--epoch", optarg, &epoch))
                return EXIT_USAGE;
        } else if (o == O_TIMELINE)
            tl_path = optarg;
        else if (o == O_LOGS)
            logs = 1;
        else {
            usage(o == 'h' ? stdout : stderr);
            return o == 'h' ? 0 : EXIT_USAGE;
        }
    }
    if (logs && optind == argc) {
        cli_error("report", "--logs: expected one or more job logs of "
                  "bench/real/stamp.py (see --help)");
        return EXIT_USAGE;
    }
    if (!logs && optind != argc - 1) {
        cli_error("report", "expected one STATE_DIR or state.db, or --logs "
                  "and job logs (see --help)");
        return EXIT_USAGE;
    }
    rpt_run run = {0};
    int status;
    if (logs) {
        int rc = rpt_read_logs(&run, argv + optind, (size_t)(argc - optind));
        status = rc == -1 ? EXIT_USAGE : rc ? EXIT_RUNTIME : 0;
    } else
        status = read_db(argv[optind], &run);
    if (!status)
        status = measure(&run, epoch, tl_path, json);
    run_free(&run);
    return status;
}
