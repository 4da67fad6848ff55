/*
 * trace.c — what the dashboard and /metrics show that no single request
 * holds: every job's normalised loss and cores over time, how far off each
 * job's forecast turned out to be, its forecast ahead of it, and the
 * predicted time until it reaches 90 % of its loss reduction.
 *
 * Every number here comes from the core (slaq_norm_loss, slaq_job_end_loss,
 * slaq_predictor_loss, slaq_forecast_loss, slaq_runtime_iter_time); this
 * file only samples, keeps and evaluates them.
 *
 * The timeline is a fixed ring of SD_TRACE_FRAMES frames, one per recorded
 * epoch, each holding every active job's (id, last loss, cores). When
 * it fills, every other frame is dropped and only every second epoch is
 * recorded from then on, so the timeline always spans slaqd's whole life at
 * a resolution that halves as it grows, in bounded memory, and all jobs
 * share the same time points (the dashboard stacks cores by time).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/record.h"
#include "daemon/store.h"
#include "daemon/trace.h"

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

void trace_before_epoch(sd_daemon *d)
{
    for (size_t i = 0; i < slaq_sched_count(d->sched); i++) {
        slaq_job *sj = slaq_sched_job(d->sched, i);
        sd_job *j = slaq_job_user(sj);
        if (!j->hist.fc_ready)
            continue;
        /* The forecast in force was fitted at the last epoch; score it
         * against every report that arrived since. */
        const slaq_history *h = slaq_job_history(sj);
        const slaq_forecast *f =
            slaq_predictor_forecast(slaq_job_predictor(sj));
        j->hist.pe_span =
            slaq_history_first_loss(h) - slaq_history_min_loss(h);
        for (size_t k = slaq_history_len(h); k-- > 0;) {
            const slaq_report *r = slaq_history_at(h, k);
            if ((double)r->iter <= f->k0)
                break;
            double e = fabs(slaq_forecast_loss(f, (double)r->iter) - r->loss);
            if (!isfinite(e))
                continue;
            j->hist.pe_sum += e;
            j->hist.pe_n++;
            d->pe_n++;
        }
    }
}

double trace_forecast_error(const sd_job *j)
{
    if (!j->hist.pe_n || !(j->hist.pe_span > 0))
        return NAN;
    return j->hist.pe_sum / (double)j->hist.pe_n / j->hist.pe_span;
}

double trace_forecast_error_all(sd_daemon *d)
{
    double sum = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        const sd_job *j = d->jobs[i];
        if (j && j->hist.pe_n && j->hist.pe_span > 0) {
            sum += j->hist.pe_sum / j->hist.pe_span;
            n += j->hist.pe_n;
        }
    }
    return n ? sum / (double)n : NAN;
}

static void frame_free(sd_frame *f)
{
    free(f->s);
    f->s = NULL;
    f->n = 0;
}

/* Halves the ring: keeps frames 0, 2, 4, ... and records half as often. */
static void trace_thin(sd_daemon *d)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->ntrace; i++) {
        if (i % 2) {
            frame_free(&d->trace[i]);
            continue;
        }
        d->trace[kept++] = d->trace[i];
    }
    d->ntrace = kept;
    d->trace_stride *= 2;
}

void trace_after_epoch(sd_daemon *d, double now)
{
    size_t n = slaq_sched_count(d->sched);
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        j->hist.fc_ready = slaq_history_total(slaq_job_history(j->sj)) >= 2;
    }
    /* Idle stretches add nothing after the frame that ends the curves. */
    if (n == 0 && (d->ntrace == 0 || d->trace[d->ntrace - 1].n == 0))
        return;
    if (d->trace_stride == 0)
        d->trace_stride = 1;
    if (d->trace_skip++ % d->trace_stride)
        return;
    if (d->ntrace == SD_TRACE_FRAMES)
        trace_thin(d);
    sd_sample *s = n ? malloc(n * sizeof *s) : NULL;
    if (n && !s)
        return; /* out of memory: this epoch is missing from the timeline */
    for (size_t i = 0; i < n; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        s[i] = (sd_sample){.id = j->id,
                           .loss = j->hist.nreports ? j->hist.last_loss : NAN,
                           .cores = (float)j->enf.alloc};
    }
    d->trace[d->ntrace++] = (sd_frame){.t = now, .n = n, .s = s};
}

void trace_free(sd_daemon *d)
{
    for (size_t i = 0; i < d->ntrace; i++)
        frame_free(&d->trace[i]);
    d->ntrace = 0;
}

/*
 * A job's normalised loss series: every recorded loss scaled with the
 * job's first loss and its newest L_end (slaq_norm_loss), so the whole
 * line shares one normaliser and falls wherever the loss falls; a refit
 * that moves L_end rescales the line instead of making it jump. Null
 * where the job was absent, had not reported, or its end is not known.
 */
double trace_end_loss(const sd_job *j)
{
    return j->sj ? slaq_job_end_loss(j->sj) : j->hist.end_loss;
}

static void trace_norm_series(sd_daemon *d, int64_t id, json_t *o)
{
    const sd_job *j = job_get(d, id);
    double first = j && j->hist.nreports ? j->hist.first_loss : NAN;
    double end = j ? trace_end_loss(j) : NAN;
    json_object_set_new(o, "first_loss", num_or_null(first));
    json_object_set_new(o, "end_loss", num_or_null(end));
    json_t *loss = json_object_get(o, "loss"), *nl = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(loss, i, v) {
        json_array_append_new(nl, json_is_number(v) ? num_or_null(
            slaq_norm_loss(json_number_value(v), first, end)) : json_null());
    }
    json_object_set_new(o, "pred_norm_loss", nl);
    /* deprecated alias of pred_norm_loss, until the next release */
    json_object_set_new(o, "norm_loss", json_deep_copy(nl));
}

json_t *trace_timeline_json(sd_daemon *d, double since)
{
    json_t *t = json_array(), *jobs = json_object();
    char key[32];
    size_t first = 0;
    while (first < d->ntrace && d->trace[first].t <= since)
        first++;
    size_t nout = d->ntrace - first;
    for (size_t i = 0; i < nout; i++) {
        const sd_frame *f = &d->trace[first + i];
        json_array_append_new(t, json_real(f->t));
        for (size_t k = 0; k < f->n; k++) {
            snprintf(key, sizeof key, "%lld", (long long)f->s[k].id);
            json_t *o = json_object_get(jobs, key);
            if (!o) {
                const sd_job *j = job_get(d, f->s[k].id);
                o = json_pack("{s:I, s:s, s:[], s:[]}", "id",
                              (json_int_t)f->s[k].id, "name",
                              j && j->name ? j->name : "", "loss", "cores");
                json_object_set_new(jobs, key, o);
            }
            /* Series are aligned with "t": null where the job was absent. */
            json_t *l = json_object_get(o, "loss");
            json_t *c = json_object_get(o, "cores");
            while (json_array_size(l) < i) {
                json_array_append_new(l, json_null());
                json_array_append_new(c, json_null());
            }
            json_array_append_new(l, num_or_null(f->s[k].loss));
            json_array_append_new(c, json_real(f->s[k].cores));
        }
    }
    const char *key_it;
    json_t *o;
    json_object_foreach(jobs, key_it, o) {
        json_t *l = json_object_get(o, "loss");
        json_t *c = json_object_get(o, "cores");
        while (json_array_size(l) < nout) {
            json_array_append_new(l, json_null());
            json_array_append_new(c, json_null());
        }
        trace_norm_series(d, json_integer_value(json_object_get(o, "id")), o);
    }
    json_t *r = json_pack("{s:s, s:b}", "type", "result", "ok", 1);
    json_object_set_new(r, "t", t);
    json_object_set_new(r, "jobs", jobs);
    json_object_set_new(r, "stride_epochs", json_integer(d->trace_stride
                                                             ? d->trace_stride
                                                             : 1));
    return r;
}

double trace_eta90(const sd_job *j)
{
    if (!j->sj)
        return NAN;
    double iters = slaq_job_iters_to(j->sj, 0.9);
    if (!(iters > 0))
        return iters; /* 0 (reached), NAN (too early) */
    if (isinf(iters))
        return INFINITY;
    double per_iter = slaq_runtime_iter_time(slaq_job_runtime(j->sj),
                                             j->enf.alloc, 0);
    return iters * per_iter;
}

json_t *trace_forecast_json(sd_daemon *d, const sd_job *j)
{
    json_t *r = json_pack("{s:s, s:b, s:I, s:s}", "type", "result", "ok", 1,
                          "job", (json_int_t)j->id, "state",
                          job_state_name(j->state));
    json_t *hist = json_array();
    json_t *rows = store_reports_json(d->store, j->id, 500);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        json_array_append_new(hist, json_pack(
            "{s:O, s:O}", "iter", json_array_get(row, 0), "loss",
            json_array_get(row, 1)));
    }
    json_decref(rows);
    json_object_set_new(r, "history", hist);
    json_t *ahead = json_array();
    if (j->sj && slaq_history_total(slaq_job_history(j->sj)) >= 1) {
        const slaq_predictor *p = slaq_job_predictor(j->sj);
        const slaq_forecast *f = slaq_predictor_forecast(p);
        /* As far ahead as the job has come, at least 20 iterations, so
         * the forecast is visible next to the curve at any scale. */
        double span = f->k0 > 20 ? f->k0 : 20;
        for (int k = 0; k <= 60; k++) {
            double hh = span * k / 60;
            json_array_append_new(ahead, json_pack(
                "{s:f, s:o}", "iter", f->k0 + hh, "loss",
                num_or_null(slaq_predictor_loss(p, hh))));
        }
        json_object_set_new(r, "k0", json_real(f->k0));
        json_object_set_new(r, "final_loss",
                            num_or_null(slaq_job_end_loss(j->sj)));
    }
    json_object_set_new(r, "forecast", ahead);
    return r;
}
