/*
 * job.c — the iteration driver shared by every slaq-train algorithm.
 *
 * After each iteration an algorithm calls train_job_iterate() with its new
 * loss; this file measures what the iteration cost (CPU seconds of every
 * thread in the process, so the N workers and any library threads all
 * count), prints the progress line, reports to slaq, reads the allocation
 * for the next iteration and decides whether to stop. Keeping this in one
 * place means the nine algorithms report identically and slaq sees the same
 * numbers a recorded curve holds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "train/train.h"

double train_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double train_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The allocation may be fractional (slaq shares cores); a job runs the
 * workers slaq's thread rule gives for it, never more than it has
 * partitions. */
static void job_read_allocation(struct train_job *job)
{
    int n = train_sched_threads(job->sched);
    if (n > job->max_workers)
        n = job->max_workers;
    job->n_workers = n;
}

int train_job_reserve(struct train_job *job, size_t n)
{
    size_t cap = grow_cap(job->cap, n, 64);
    if (cap == job->cap)
        return 0;
    /* Each array keeps its contents whether or not the others grow; the
     * capacity counts only once all three hold it. */
    if (!cap || GROW_ARRAY(job->loss, cap) < 0 ||
        GROW_ARRAY(job->iter_cpu, cap) < 0 ||
        GROW_ARRAY(job->epoch_metric, cap) < 0)
        return -1;
    job->cap = cap;
    return 0;
}

/* Stores loss[iters] and makes room for the next iteration's. -1 when that
 * room cannot be had; loss[iters] is stored whenever it fits (always after
 * the first: every earlier call left room for one more). */
static int job_push_loss(struct train_job *job, double loss)
{
    int rc = train_job_reserve(job, (size_t)job->iters + 2);
    if ((size_t)job->iters < job->cap) {
        job->loss[job->iters] = loss;
        job->epoch_metric[job->iters] = NAN;
    }
    return rc;
}

/* The per-iteration metric: the algorithm's evaluation on the validation
 * split (swapped in for the test set while it runs), or on its test set
 * or held-out documents without one. NaN when not due or not available.
 * The final evaluation (train_job_run) still measures the test set. */
static double job_eval(struct train_job *job)
{
    if (job->eval_every <= 0 || job->iters % job->eval_every != 0)
        return NAN;
    double t0 = train_wall_seconds();
    char err[TRAIN_ERRLEN], name[sizeof job->metric_name];
    int val = job->val.n > 0;
    struct train_data keep = job->test;
    if (val)
        job->test = job->val;
    job->metric_name[0] = 0;
    job->metric = NAN;
    int rc = job->algo->evaluate(job, err, sizeof err);
    if (val)
        job->test = keep;
    double m = rc == 0 && job->metric_name[0] ? job->metric : NAN;
    snprintf(name, sizeof name, "%s", job->metric_name);
    job->metric_name[0] = 0;
    job->eval_s += train_wall_seconds() - t0;
    job->metric_bad = rc == 0 && name[0] && isnan(m);
    if (job->metric_bad)
        snprintf(job->diverged, sizeof job->diverged, "the metric %s is nan "
                 "at iteration %d", name, job->iters);
    if (isnan(m))
        return NAN;
    if (!job->epoch_metric_name[0]) {
        /* "test_rmse" measured on the validation split is "val_rmse". */
        const char *base = !strncmp(name, "test_", 5) ? name + 5 : name;
        snprintf(job->epoch_metric_name, sizeof job->epoch_metric_name,
                 "%s%s", val ? "val_" : base == name ? "" : "test_", base);
        train_sched_set_metric_name(job->sched, job->epoch_metric_name);
    }
    job->epoch_metric[job->iters] = m;
    return m;
}

/* True when the loss, or the metric measured at this iteration (m; NaN
 * when none was), is not finite; job->diverged then says which. A metric
 * measured NaN is told apart from one not measured by job->metric_bad
 * (job_eval, which also fills job->diverged for it). */
static bool job_diverged(struct train_job *job, double loss, double m)
{
    if (!isfinite(loss))
        snprintf(job->diverged, sizeof job->diverged, "the loss is %g at "
                 "iteration %d", loss, job->iters);
    else if (!isnan(m) && !isfinite(m))
        snprintf(job->diverged, sizeof job->diverged, "the metric %s is %g "
                 "at iteration %d", job->epoch_metric_name, m, job->iters);
    else
        return job->metric_bad;
    return true;
}

int train_job_start(struct train_job *job, double loss0)
{
    job->iters = 0;
    if (job_push_loss(job, loss0) < 0) {
        job->out_of_memory = true;
        return -1;
    }
    double m = job_eval(job);
    if (!job->quiet) {
        printf("iter=0 loss=%.10g workers=%d", loss0, job->n_workers);
        if (!isnan(m))
            printf(" %s=%.6g", job->epoch_metric_name, m);
        printf("\n");
    }
    fflush(stdout);
    train_sched_report(job->sched, 0, loss0, 0, 0, m);
    job_read_allocation(job);
    job->passes_mark = job->passes;
    job->cpu_mark = train_cpu_seconds();
    job->wall_mark = train_wall_seconds();
    return 0;
}

void train_job_resume(struct train_job *job)
{
    /* The metric's name is declared as soon as a resumed run measures it;
     * what came before is in slaqd already (or in the checkpoint). */
    if (!job->quiet)
        printf("# resumed at iter=%d loss=%.10g\n", job->iters,
               job->loss[job->iters]);
    fflush(stdout);
    job_read_allocation(job);
    job->passes_mark = job->passes;
    job->cpu_mark = train_cpu_seconds();
    job->wall_mark = train_wall_seconds();
}

bool train_job_iterate(struct train_job *job, double loss)
{
    double cpu = train_cpu_seconds(), wall = train_wall_seconds();
    double dcpu = cpu - job->cpu_mark, dwall = wall - job->wall_mark;
    int workers = job->n_workers;

    job->iter_cpu[job->iters] = dcpu;
    job->iters++;
    if (job_push_loss(job, loss) < 0)
        job->out_of_memory = true;
    job->cpu_total += dcpu;
    job->wall_total += dwall;

    /* Line searches and backtracking make some iterations more than one
     * pass; XGBoost's rounds are not pool passes but touch every row once. */
    long passes = job->passes - job->passes_mark;
    double samples = job->rows_per_iter * (double)(passes > 0 ? passes : 1);
    job->samples_total += samples;
    /* Measured after the iteration's clock stopped: the metric's cost is
     * not the iteration's (eval_s holds it). */
    double m = isfinite(loss) ? job_eval(job) : NAN;
    if (!job->quiet) {
        printf("iter=%d loss=%.10g cpu_s=%.4f wall_s=%.4f samples=%.0f "
               "workers=%d samples_per_core_s=%.0f",
               job->iters, loss, dcpu, dwall, samples, workers,
               dcpu > 0 ? samples / dcpu : 0.0);
        if (!isnan(m))
            printf(" %s=%.6g", job->epoch_metric_name, m);
        printf("\n");
    }
    fflush(stdout);
    train_sched_report(job->sched, job->iters, loss, dcpu, samples, m);

    double drop = job->loss[job->iters - 1] - loss;
    if (drop > job->best_drop)
        job->best_drop = drop;

    if (job->out_of_memory)
        job->stop_reason = "out-of-memory";
    else if (job_diverged(job, loss, m))
        job->stop_reason = "diverged";
    else if (train_sched_should_stop(job->sched))
        job->stop_reason = "slaq";
    else if (job->iters >= job->max_iters)
        job->stop_reason = "iters";
    else if (job->target_reduction > 0 && job->best_drop > 0 &&
             drop >= 0 && drop <= (1 - job->target_reduction) * job->best_drop)
        job->stop_reason = "target-reduction";
    if (job->ckpt_path &&
        (job->stop_reason ||
         (job->ckpt_every > 0 && job->iters % job->ckpt_every == 0))) {
        char err[TRAIN_ERRLEN];
        if (train_ckpt_save(job, err, sizeof err) < 0)
            fprintf(stderr, "slaq-train: %s\n", err);
    }
    if (job->stop_reason)
        return true;

    job_read_allocation(job);
    /* Time spent printing and asking slaq belongs to no iteration. */
    job->passes_mark = job->passes;
    job->cpu_mark = train_cpu_seconds();
    job->wall_mark = train_wall_seconds();
    return false;
}

int train_job_record(const struct train_job *job, const char *path, char *err,
                     size_t errlen)
{
    json_t *o = json_object(), *loss = json_array(), *cpu = json_array();
    json_t *params = json_object();
    char tag[96];
    int rc = -1;
    FILE *f = NULL;
    char *line = NULL;

    for (int i = 0; i <= job->iters; i++)
        json_array_append_new(loss, json_real(job->loss[i]));
    for (int i = 0; i < job->iters; i++)
        json_array_append_new(cpu, json_real(job->iter_cpu[i]));
    job->algo->describe(job, tag, sizeof tag, params);
    json_object_set_new(params, "seed", json_integer(job->seed));

    json_object_set_new(o, "name", json_string(job->name));
    json_object_set_new(o, "algorithm", json_string(job->algo->name));
    json_object_set_new(o, "convergence", json_string(job->algo->convergence));
    json_object_set_new(o, "dataset", json_string(job->dataset));
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "data_size", json_integer((json_int_t)llround(job->data_size)));
    json_object_set_new(o, "samples_per_iter", json_integer((json_int_t)llround(job->rows_per_iter)));
    json_object_set_new(o, "loss", loss);
    json_object_set_new(o, "iter_cpu_s", cpu);
    if (job->metric_name[0])
        json_object_set_new(o, job->metric_name, json_real(job->metric));
    if (job->epoch_metric_name[0]) {
        json_t *em = json_array();
        for (int i = 0; i <= job->iters; i++)
            json_array_append_new(em, isnan(job->epoch_metric[i])
                                          ? json_null()
                                          : json_real(job->epoch_metric[i]));
        json_object_set_new(o, "metric_name",
                            json_string(job->epoch_metric_name));
        json_object_set_new(o, "metric", em);
    }
    json_object_set_new(o, "stop", json_string(job->stop_reason ? job->stop_reason : "error"));

    line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
    if (!line) {
        snprintf(err, errlen, "cannot encode the record as JSON");
        goto out;
    }
    f = fopen(path, "a");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open for appending: %s", path,
                 strerror(errno));
        goto out;
    }
    if (fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
        f = NULL;
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        goto out;
    }
    f = NULL;
    rc = 0;
out:
    if (f)
        fclose(f);
    free(line);
    json_decref(o);
    return rc;
}

size_t train_job_max_part(const struct train_job *job)
{
    size_t m = 0;
    for (size_t i = 0; i < job->n_parts; i++)
        if (job->parts[i].end - job->parts[i].begin > m)
            m = job->parts[i].end - job->parts[i].begin;
    return m;
}

/* Splits `rows` rows into partitions of one copy and repeats them for
 * --scale: whole copies first, then a prefix of the rows for the fraction. */
void train_job_partition(struct train_job *job, size_t rows, size_t want)
{
    size_t p0 = want < rows ? want : rows;
    double full = floor(job->scale), frac = job->scale - full;
    size_t prefix = (size_t)llround(frac * (double)rows);
    size_t pfrac = prefix ? (size_t)ceil((double)p0 * frac) : 0;
    size_t n = p0 * (size_t)full + pfrac;

    job->parts = train_xcalloc(n, sizeof *job->parts);
    job->n_parts = 0;
    for (size_t c = 0; c < (size_t)full; c++)
        for (size_t i = 0; i < p0; i++)
            job->parts[job->n_parts++] =
                (struct train_part){rows * i / p0, rows * (i + 1) / p0};
    for (size_t i = 0; i < pfrac; i++)
        job->parts[job->n_parts++] =
            (struct train_part){prefix * i / pfrac, prefix * (i + 1) / pfrac};
    job->max_workers = (int)p0;
    job->rows_per_iter = (double)(rows * (size_t)full + prefix);
}

int train_job_run(struct train_job *job, char *err, size_t len)
{
    double loss0;
    job->n_workers = 1;
    /* A model that cannot be built from this data is bad input. */
    if (job->algo->init(job, &loss0, err, len) < 0)
        return 2;
    if (job->resume_path) {
        if (train_ckpt_load(job, job->resume_path, err, len) < 0)
            return 2;
        train_job_resume(job);
    } else if (train_job_start(job, loss0) < 0) {
        snprintf(err, len, "out of memory for the loss history");
        return 1;
    }
    if (job_diverged(job, job->loss[job->iters],
                     job->epoch_metric[job->iters])) {
        /* Nothing to train from: the model is not finite already. */
        job->stop_reason = "diverged";
        return 0;
    }
    if (job->algo->run) {
        if (job->algo->run(job, err, len) < 0)
            return 1;
    } else {
        for (;;) {
            double loss;
            if (job->algo->step(job, &loss, err, len) < 0)
                return 1;
            if (train_job_iterate(job, loss))
                break;
        }
    }
    if (job->out_of_memory) {
        snprintf(err, len, "out of memory growing the loss history after "
                 "iteration %d (%zu iterations held)", job->iters, job->cap);
        return 1;
    }
    if (job->algo->evaluate(job, err, len) < 0)
        return 1;
    /* L-BFGS ends "converged" when it can make no more progress, which
     * is also what a loss that is not finite looks like to it. */
    if (!isfinite(job->loss[job->iters])) {
        job_diverged(job, job->loss[job->iters], NAN);
        job->stop_reason = "diverged";
    } else if (job->metric_name[0] && !isfinite(job->metric)) {
        snprintf(job->diverged, sizeof job->diverged, "the metric %s is %g "
                 "at the end", job->metric_name, job->metric);
        job->stop_reason = "diverged";
    }
    return 0;
}
