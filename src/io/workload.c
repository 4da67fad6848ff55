/*
 * workload.c — the workload file format (JSON Lines, one job per line).
 *
 * Each line is parsed with Jansson and checked field by field, so that a
 * user who wrote a workload by hand learns exactly which line and field is
 * wrong and what was expected. Nothing is kept from a file that has an
 * error: the simulator must never replay half a workload.
 */
#include "core/util.h"
#include "io/jsonl.h"
#include "io/workload.h"
#include "slaq/shares.h"
#include "slaq/slaq.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void job_free(wl_job *j)
{
    free(j->id);
    free(j->algorithm);
    free(j->curve);
    free(j->convergence);
    free(j->user);
    free(j->account);
    free(j->loss);
}

void wl_free(wl_workload *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        job_free(&wl->jobs[i]);
    free(wl->jobs);
    wl->jobs = NULL;
    wl->n = 0;
}

/*
 * Reads an optional number field into *out (left alone when absent).
 * Returns 0, or -1 with a message when the field is present but not a
 * finite number in [lo, hi] (lo excluded when `open_lo`).
 */
static int get_number(json_t *obj, const char *field, int required,
                      double lo, int open_lo, double hi, double *out,
                      char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, field);
    char want[96];
    snprintf(want, sizeof want, "a number %s %g and <= %g",
             open_lo ? ">" : ">=", lo, hi);
    if (!v) {
        if (!required)
            return 0;
        util_errf(err, errlen, "missing field '%s' (%s)", field, want);
        return -1;
    }
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(x) || (open_lo ? !(x > lo) : !(x >= lo)) || !(x <= hi)) {
        if (isfinite(x))
            util_errf(err, errlen, "field '%s': expected %s, got %g", field,
                      want, x);
        else
            util_errf(err, errlen, "field '%s': expected %s", field, want);
        return -1;
    }
    *out = x;
    return 0;
}

/* Copies an optional string field ("" when absent); -1 if not a string. */
static int get_string(json_t *obj, const char *field, int required,
                      char **out, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, field);
    if (!v && !required) {
        *out = strdup("");
    } else if (!json_is_string(v) || (required && !*json_string_value(v))) {
        util_errf(err, errlen, "field '%s': expected a %sstring", field,
                  required ? "non-empty " : "");
        return -1;
    } else {
        *out = strdup(json_string_value(v));
    }
    if (!*out) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int get_loss(json_t *obj, wl_job *j, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, "loss");
    if (!json_is_array(v) || json_array_size(v) < 2) {
        util_errf(err, errlen,
                  "field 'loss': expected an array of at least 2 numbers "
                  "(the loss before the first iteration and after each)");
        return -1;
    }
    if (json_array_size(v) - 1 > WL_MAX_ITERS) {
        util_errf(err, errlen, "field 'loss': %zu iterations, more than the "
                  "cap of %d", json_array_size(v) - 1, WL_MAX_ITERS);
        return -1;
    }
    j->nlosses = json_array_size(v);
    j->loss = malloc(j->nlosses * sizeof *j->loss);
    if (!j->loss) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < j->nlosses; i++) {
        json_t *e = json_array_get(v, i);
        double x = json_is_number(e) ? json_number_value(e) : NAN;
        if (!isfinite(x)) {
            util_errf(err, errlen, "field 'loss': element %zu is not a finite "
                      "number", i);
            return -1;
        }
        j->loss[i] = x;
    }
    return 0;
}

/* The optional goal fields: deadline_s, accuracy, direction, urgency. */
static int get_goal(json_t *obj, wl_job *j, char *err, size_t errlen)
{
    double u = 0;
    if (get_number(obj, "deadline_s", 0, j->arrival_s, 0, WL_MAX_SECONDS,
                   &j->deadline_s, err, errlen) ||
        get_number(obj, "urgency", 0, SLAQ_URGENCY_MIN, 0, SLAQ_URGENCY_MAX,
                   &u, err, errlen))
        return -1;
    if (u != floor(u)) {
        util_errf(err, errlen, "field 'urgency': expected a whole number "
                  "from %d to %d, got %g", SLAQ_URGENCY_MIN,
                  SLAQ_URGENCY_MAX, u);
        return -1;
    }
    j->urgency = (int)u;
    json_t *a = json_object_get(obj, "accuracy");
    if (a) {
        if (!json_is_number(a) || !isfinite(json_number_value(a))) {
            util_errf(err, errlen, "field 'accuracy': expected a number, the "
                      "required value of the job's metric");
            return -1;
        }
        j->has_accuracy = 1;
        j->accuracy = json_number_value(a);
    }
    json_t *d = json_object_get(obj, "direction");
    if (d) {
        const char *v = json_is_string(d) ? json_string_value(d) : "";
        if (strcmp(v, "max") && strcmp(v, "min")) {
            util_errf(err, errlen, "field 'direction': expected \"max\" "
                      "(higher is better) or \"min\" (lower is better)");
            return -1;
        }
        j->minimize = !strcmp(v, "min");
    }
    return 0;
}

void wl_job_goal(const wl_job *j, slaq_goal *g)
{
    slaq_goal_init(g);
    if (j->deadline_s > 0)
        g->deadline = j->deadline_s;
    if (j->has_accuracy)
        g->accuracy = j->accuracy;
    g->maximize = !j->minimize;
    if (j->urgency > 0)
        g->urgency = j->urgency;
}

/* Parses one line's object into j (zeroed by the caller); on error fills
 * err without the file:line prefix. */
static int parse_job(json_t *obj, wl_job *j, char *err, size_t errlen)
{
    j->max_cores = INFINITY;
    j->weight = 1;
    if (get_string(obj, "id", 1, &j->id, err, errlen) ||
        get_number(obj, "arrival_s", 1, 0, 0, WL_MAX_SECONDS, &j->arrival_s,
                   err, errlen) ||
        get_number(obj, "iter_cpu_s", 1, 0, 1, WL_MAX_SECONDS,
                   &j->iter_cpu_s, err, errlen) ||
        get_number(obj, "max_cores", 0, WL_MIN_CORES, 0, WL_MAX_CORES,
                   &j->max_cores, err, errlen) ||
        get_number(obj, "weight", 0, WL_MIN_WEIGHT, 0, WL_MAX_WEIGHT,
                   &j->weight, err, errlen) ||
        get_string(obj, "algorithm", 0, &j->algorithm, err, errlen) ||
        get_string(obj, "curve", 0, &j->curve, err, errlen) ||
        get_string(obj, "convergence", 0, &j->convergence, err, errlen) ||
        get_string(obj, "user", 0, &j->user, err, errlen) ||
        get_string(obj, "account", 0, &j->account, err, errlen) ||
        get_number(obj, "sigma", 0, 0, 0, WL_MAX_SCALING, &j->sigma, err,
                   errlen) ||
        get_number(obj, "kappa", 0, 0, 0, WL_MAX_SCALING, &j->kappa, err,
                   errlen) ||
        get_loss(obj, j, err, errlen))
        return -1;
    if (get_goal(obj, j, err, errlen))
        return -1;
    j->scaled = json_object_get(obj, "sigma") ||
                json_object_get(obj, "kappa");
    const char *who[2][2] = {{"user", j->user}, {"account", j->account}};
    for (int k = 0; k < 2; k++)
        if (*who[k][1] && !slaq_shares_name_ok(who[k][1])) {
            util_errf(err, errlen, "field '%s': expected 1 to %d letters, "
                      "digits or . _ @ -, got '%s'", who[k][0],
                      SLAQ_SHARES_NAME_MAX - 1, who[k][1]);
            return -1;
        }
    slaq_convergence cv;
    if (slaq_convergence_parse(j->convergence, &cv) != SLAQ_OK) {
        util_errf(err, errlen, "field 'convergence': expected sublinear, "
                  "linear, superlinear or nonconvex, got '%s'",
                  j->convergence);
        return -1;
    }
    return 0;
}

static int by_id(const void *a, const void *b)
{
    const wl_job *x = *(const wl_job *const *)a;
    const wl_job *y = *(const wl_job *const *)b;
    return strcmp(x->id, y->id);
}

/* Ids name jobs in the simulator's outputs, so they must be unique. */
static int check_unique_ids(const wl_workload *wl, const char *name,
                            char *err, size_t errlen)
{
    const wl_job **v = malloc(wl->n * sizeof *v);
    if (!v) {
        util_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    for (size_t i = 0; i < wl->n; i++)
        v[i] = &wl->jobs[i];
    qsort(v, wl->n, sizeof *v, by_id);
    int rc = 0;
    for (size_t i = 1; i < wl->n; i++) {
        if (!strcmp(v[i - 1]->id, v[i]->id)) {
            size_t a = v[i - 1]->line, b = v[i]->line;
            util_errf(err, errlen, "%s:%zu: field 'id': \"%s\" is already the "
                      "id of line %zu", name, a > b ? a : b, v[i]->id,
                      a > b ? b : a);
            rc = -1;
            break;
        }
    }
    free(v);
    return rc;
}

/* State of one wl_read: the workload being filled and its capacity. */
typedef struct wl_load {
    wl_workload *wl;
    size_t cap;
} wl_load;

static int job_line(json_t *obj, int line, void *ctx, char *msg, size_t len)
{
    wl_load *st = ctx;
    if (st->wl->n >= WL_MAX_JOBS) {
        util_errf(msg, len, "more than %d jobs, the cap of a workload",
                  WL_MAX_JOBS);
        return -1;
    }
    wl_job *j = jsonl_push(&st->wl->jobs, st->wl->n, &st->cap, sizeof *j, 64);
    if (!j) {
        util_errf(msg, len, "out of memory");
        return -1;
    }
    j->line = (size_t)line;
    if (parse_job(obj, j, msg, len)) {
        job_free(j);
        return -1;
    }
    st->wl->n++;
    return 0;
}

int wl_read(FILE *f, const char *name, wl_workload *wl, char *err,
            size_t errlen)
{
    wl->jobs = NULL;
    wl->n = 0;
    wl_load st = {wl, 0};
    int n = jsonl_each_file(f, name, job_line, &st, err, errlen);
    if (n == 0)
        util_errf(err, errlen,
                  "%s: no jobs (expected one JSON object per line)", name);
    if (n <= 0 || check_unique_ids(wl, name, err, errlen)) {
        wl_free(wl);
        return -1;
    }
    return 0;
}

int wl_read_path(const char *path, wl_workload *wl, char *err, size_t errlen)
{
    if (!strcmp(path, "-"))
        return wl_read(stdin, "<stdin>", wl, err, errlen);
    FILE *f = fopen(path, "r");
    if (!f) {
        wl->jobs = NULL;
        wl->n = 0;
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = wl_read(f, path, wl, err, errlen);
    fclose(f);
    return rc;
}

/* Writes s as a JSON string (Jansson does the escaping). */
static int put_string(FILE *f, const char *s)
{
    json_t *v = json_string(s);
    if (!v)
        return -1;
    int rc = json_dumpf(v, f, JSON_ENCODE_ANY) ? -1 : 0;
    json_decref(v);
    return rc;
}

int wl_write_job(FILE *f, const wl_job *j)
{
    int rc = 0;
    rc |= fputs("{\"id\": ", f) < 0;
    rc |= put_string(f, j->id);
    rc |= fprintf(f, ", \"arrival_s\": %.6f, \"iter_cpu_s\": %.6f",
                  j->arrival_s, j->iter_cpu_s) < 0;
    if (isfinite(j->max_cores))
        rc |= fprintf(f, ", \"max_cores\": %.17g", j->max_cores) < 0;
    rc |= fprintf(f, ", \"weight\": %.17g", j->weight) < 0;
    if (j->algorithm && *j->algorithm) {
        rc |= fputs(", \"algorithm\": ", f) < 0;
        rc |= put_string(f, j->algorithm);
    }
    if (j->curve && *j->curve) {
        rc |= fputs(", \"curve\": ", f) < 0;
        rc |= put_string(f, j->curve);
    }
    if (j->convergence && *j->convergence) {
        rc |= fputs(", \"convergence\": ", f) < 0;
        rc |= put_string(f, j->convergence);
    }
    if (j->user && *j->user) {
        rc |= fputs(", \"user\": ", f) < 0;
        rc |= put_string(f, j->user);
    }
    if (j->account && *j->account) {
        rc |= fputs(", \"account\": ", f) < 0;
        rc |= put_string(f, j->account);
    }
    if (j->deadline_s > 0)
        rc |= fprintf(f, ", \"deadline_s\": %.6f", j->deadline_s) < 0;
    if (j->has_accuracy)
        rc |= fprintf(f, ", \"accuracy\": %.17g", j->accuracy) < 0;
    if (j->minimize)
        rc |= fputs(", \"direction\": \"min\"", f) < 0;
    if (j->urgency > 0)
        rc |= fprintf(f, ", \"urgency\": %d", j->urgency) < 0;
    if (j->scaled)
        rc |= fprintf(f, ", \"sigma\": %.17g, \"kappa\": %.17g", j->sigma,
                      j->kappa) < 0;
    rc |= fputs(", \"loss\": [", f) < 0;
    for (size_t i = 0; i < j->nlosses; i++)
        rc |= fprintf(f, i ? ", %.17g" : "%.17g", j->loss[i]) < 0;
    rc |= fputs("]}\n", f) < 0;
    return rc ? -1 : 0;
}
