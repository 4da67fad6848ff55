/*
 * aqpd.c — approximate queries in slaqd (ReLAQS, docs/relaqs.md).
 *
 * A job becomes a query by declaring "kind": "query" in its hello or by
 * sending "estimates" with its first report (slaq-aqp does the latter).
 * Its scheduler entry is then a SLAQ_JOB_QUERY: every report is a
 * mini-batch handed to slaq_job_report_estimates(), and the policy weighs
 * its predicted progress metric against the ML jobs' predicted normalised
 * loss reduction on one scale. The last estimates and their bounds of the
 * first few result cells are kept in memory, thinned to a bounded number
 * of points, for the dashboard's convergence charts. The database keeps
 * the job's kind and every mini-batch's vectors with its report
 * (reports.estimates), so a slaqd started again replays them
 * (job_replay_history) and a running query comes back a query.
 *
 * The job table (jobs.c) calls this file, never the other way round: it
 * reads a report's mini-batch here (aqpd_read), makes the job a query
 * if it is not one yet (job_set_kind, which enters the scheduler anew),
 * and hands the mini-batch over (aqpd_take).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/aqpd.h"
#include "daemon/daemon.h"
#include "daemon/record.h"
#include "daemon/store.h"

/* result cells shown per query, and points kept per query */
#define VEC_CELLS 4
#define VEC_POINTS 256
#define VEC_MAX 512 /* the most estimates a report may carry */

typedef struct vec_point {
    uint64_t iter;
    double t;
    double est[VEC_CELLS], lo[VEC_CELLS], hi[VEC_CELLS];
} vec_point;

struct sd_vec {
    size_t n;           /* cells per report (fixed by the first) */
    vec_point pts[VEC_POINTS];
    size_t len;
    unsigned stride;    /* keep every stride-th report once thinned */
    uint64_t seen;
    vec_point last;     /* the latest mini-batch, whatever the thinning */
    double progress;    /* the query's progress after it (NaN: unknown) */
};

void aqpd_free(sd_job *j)
{
    free(j->hist.vec);
    j->hist.vec = NULL;
}

/* Reads the optional array `name` of n numbers or nulls into v (NAN for
 * null); a missing array leaves NAN. */
static int read_vec(json_t *msg, const char *name, size_t n, double *v,
                    char *err, size_t errlen)
{
    json_t *a = json_object_get(msg, name);
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) != n) {
        snprintf(err, errlen, "field \"%s\" must be an array of %zu numbers "
                 "or nulls, like \"estimates\"", name, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        if (json_is_null(x))
            continue;
        if (!json_is_number(x) || !isfinite(json_number_value(x))) {
            snprintf(err, errlen, "field \"%s\": element %zu is not a number "
                     "or null", name, i);
            return -1;
        }
        v[i] = json_number_value(x);
    }
    return 0;
}

static void remember(sd_job *j, const slaq_report *r, size_t n,
                     const double *e, const double *lo, const double *hi)
{
    if (!j->hist.vec) {
        j->hist.vec = calloc(1, sizeof *j->hist.vec);
        if (!j->hist.vec)
            return;
        j->hist.vec->n = n;
        j->hist.vec->stride = 1;
    }
    struct sd_vec *v = j->hist.vec;
    v->last.iter = r->iter;
    v->last.t = r->t;
    for (size_t c = 0; c < VEC_CELLS; c++) {
        v->last.est[c] = c < n ? e[c] : NAN;
        v->last.lo[c] = c < n ? lo[c] : NAN;
        v->last.hi[c] = c < n ? hi[c] : NAN;
    }
    const slaq_query *q = j->sj ? slaq_job_query(j->sj) : NULL;
    v->progress = q ? slaq_query_last(q) : NAN;
    v->seen++;
    if ((v->seen - 1) % v->stride != 0)
        return;
    if (v->len == VEC_POINTS) { /* keep every other point, then half as
                                   many from now on */
        for (size_t i = 0; i < VEC_POINTS / 2; i++)
            v->pts[i] = v->pts[2 * i];
        v->len = VEC_POINTS / 2;
        v->stride *= 2;
    }
    vec_point *p = &v->pts[v->len++];
    p->iter = r->iter;
    p->t = r->t;
    for (size_t c = 0; c < VEC_CELLS; c++) {
        p->est[c] = c < n ? e[c] : NAN;
        p->lo[c] = c < n ? lo[c] : NAN;
        p->hi[c] = c < n ? hi[c] : NAN;
    }
}

int aqpd_read(const sd_job *j, json_t *msg, aqpd_batch *b, char *err,
              size_t errlen)
{
    b->n = 0;
    b->est = b->lo = b->hi = NULL;
    json_t *ea = json_object_get(msg, "estimates");
    if (!ea || json_is_null(ea)) {
        if (j->kind == SLAQ_JOB_QUERY) {
            snprintf(err, errlen, "job %lld is a query: its reports must "
                     "carry \"estimates\"", (long long)j->id);
            return -1;
        }
        return 0;
    }
    if (!json_is_array(ea) || json_array_size(ea) == 0 ||
        json_array_size(ea) > VEC_MAX) {
        snprintf(err, errlen, "field \"estimates\" must be an array of 1 to "
                 "%d numbers or nulls", VEC_MAX);
        return -1;
    }
    size_t n = json_array_size(ea);
    if (j->hist.vec && j->hist.vec->n != n) {
        snprintf(err, errlen, "field \"estimates\" has %zu values; the job's "
                 "first report had %zu", n, j->hist.vec->n);
        return -1;
    }
    double *buf = malloc(3 * n * sizeof *buf);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->n = n;
    b->est = buf;
    b->lo = buf + n;
    b->hi = buf + 2 * n;
    if (read_vec(msg, "estimates", n, b->est, err, errlen) ||
        read_vec(msg, "lower", n, b->lo, err, errlen) ||
        read_vec(msg, "upper", n, b->hi, err, errlen)) {
        aqpd_batch_free(b);
        return -1;
    }
    return 1;
}

void aqpd_batch_free(aqpd_batch *b)
{
    free(b->est);
    b->n = 0;
    b->est = b->lo = b->hi = NULL;
}

int aqpd_take(sd_daemon *d, sd_job *j, const slaq_report *r, aqpd_batch *b,
              char *err, size_t errlen)
{
    int rc = -1;
    /* On a node agent, a query started again from its checkpoint goes on
     * after the mini-batches it ran elsewhere: the controller has those
     * (and checks the order against them); this node takes it from
     * there. */
    if (d->cfg.agent && j->hist.nreports == 0 && r->iter > 1)
        slaq_job_query_resume(j->sj, r->iter - 1);
    int e2 = slaq_job_report_estimates(j->sj, r, b->est, b->n);
    if (e2 == SLAQ_EORDER) {
        snprintf(err, errlen, "iter %llu is not the next mini-batch (the "
                 "last was %llu; a query reports mini-batches 1, 2, ... in "
                 "order)", (unsigned long long)r->iter,
                 (unsigned long long)j->hist.last_iter);
        goto out;
    }
    if (e2) {
        snprintf(err, errlen, "%s (cpu_s and samples >= 0, estimates "
                 "finite or null, as many as in the first report)",
                 slaq_strerror(e2));
        goto out;
    }
    remember(j, r, b->n, b->est, b->lo, b->hi);
    rc = 1;
out:
    aqpd_batch_free(b);
    return rc;
}

char *aqpd_vec_json(json_t *msg)
{
    json_t *o = json_object();
    static const char *const names[] = {"estimates", "lower", "upper"};
    for (int i = 0; i < 3; i++) {
        json_t *a = json_object_get(msg, names[i]);
        if (a && !json_is_null(a))
            json_object_set(o, names[i], a);
    }
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* One stored mini-batch of a finished query into its in-memory points. */
static int load_one(void *arg, const slaq_report *r, const char *vec)
{
    sd_job *j = arg;
    json_t *msg = vec ? json_loads(vec, 0, NULL) : NULL;
    json_t *ea = json_object_get(msg, "estimates");
    size_t n = json_array_size(ea);
    char err[160];
    double *buf = n && n <= VEC_MAX && (!j->hist.vec || j->hist.vec->n == n)
                      ? malloc(3 * n * sizeof *buf) : NULL;
    if (buf && !read_vec(msg, "estimates", n, buf, err, sizeof err) &&
        !read_vec(msg, "lower", n, buf + n, err, sizeof err) &&
        !read_vec(msg, "upper", n, buf + 2 * n, err, sizeof err))
        remember(j, r, n, buf, buf + n, buf + 2 * n);
    free(buf);
    json_decref(msg);
    return 0;
}

void aqpd_load(sd_daemon *d, sd_job *j)
{
    if (j->kind != SLAQ_JOB_QUERY || j->hist.vec || j->sj || !d->store)
        return;
    store_each_query_report(d->store, j->id, load_one, j);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *aqpd_summary_json(const sd_job *j)
{
    const slaq_query *q = j->sj ? slaq_job_query(j->sj) : NULL;
    const vec_point *p =
        j->hist.vec && j->hist.vec->seen ? &j->hist.vec->last : NULL;
    double progress = q             ? slaq_query_last(q)
                      : j->hist.vec ? j->hist.vec->progress
                                    : NAN;
    size_t cells =
        j->hist.vec ? (j->hist.vec->n < VEC_CELLS ? j->hist.vec->n : VEC_CELLS)
                    : 0;
    json_t *e = json_array(), *lo = json_array(), *hi = json_array();
    for (size_t c = 0; p && c < cells; c++) {
        json_array_append_new(e, num(p->est[c]));
        json_array_append_new(lo, num(p->lo[c]));
        json_array_append_new(hi, num(p->hi[c]));
    }
    return json_pack("{s:o, s:o, s:I, s:o, s:o, s:o}", "progress",
                     num(progress), "batch",
                     p ? json_integer((json_int_t)p->iter) : json_null(),
                     "cells", (json_int_t)(j->hist.vec ? j->hist.vec->n : 0),
                     "estimates", e, "lower", lo, "upper", hi);
}

json_t *aqpd_estimates_json(const sd_job *j)
{
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_true());
    json_object_set_new(o, "job", json_integer((json_int_t)j->id));
    json_object_set_new(o, "kind", json_string(slaq_job_kind_name(j->kind)));
    const slaq_query *q = j->sj ? slaq_job_query(j->sj) : NULL;
    json_object_set_new(o, "progress", num(q ? slaq_query_last(q) : NAN));
    json_object_set_new(o, "cells", json_integer(j->hist.vec ? (json_int_t)
                                                 j->hist.vec->n : 0));
    json_t *pts = json_array();
    size_t cells =
        j->hist.vec ? (j->hist.vec->n < VEC_CELLS ? j->hist.vec->n : VEC_CELLS)
                    : 0;
    for (size_t i = 0; j->hist.vec && i < j->hist.vec->len; i++) {
        const vec_point *p = &j->hist.vec->pts[i];
        json_t *e = json_array(), *lo = json_array(), *hi = json_array();
        for (size_t c = 0; c < cells; c++) {
            json_array_append_new(e, num(p->est[c]));
            json_array_append_new(lo, num(p->lo[c]));
            json_array_append_new(hi, num(p->hi[c]));
        }
        json_array_append_new(pts, json_pack("{s:I, s:f, s:o, s:o, s:o}",
                                             "iter", (json_int_t)p->iter,
                                             "t", p->t, "est", e, "lower", lo,
                                             "upper", hi));
    }
    json_object_set_new(o, "points", pts);
    return o;
}
