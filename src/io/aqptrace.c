/*
 * aqptrace.c — the reader of recorded approximate-query runs.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/aqptrace.h"
#include "io/jsonl.h"

static void trace_clear(aqp_trace *t)
{
    free(t->name);
    free(t->query);
    free(t->truth);
    free(t->est);
    free(t->cpu_s);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void aqp_traces_free(aqp_trace_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        trace_clear(&s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* Reads array `a` of n numbers or nulls into v; -1 with msg otherwise. */
static int read_row(json_t *a, size_t n, double *v, const char *field,
                    long row, char *msg, size_t len)
{
    char where[64] = "";
    if (row >= 0)
        snprintf(where, sizeof where, " row %ld", row);
    if (!json_is_array(a)) {
        snprintf(msg, len, "field \"%s\"%s: expected an array", field, where);
        return -1;
    }
    if (json_array_size(a) != n) {
        snprintf(msg, len, "field \"%s\"%s has %zu values, %zu expected",
                 field, where, json_array_size(a), n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        if (json_is_null(x))
            v[i] = NAN;
        else if (json_is_number(x) && isfinite(json_number_value(x)))
            v[i] = json_number_value(x);
        else {
            snprintf(msg, len, "field \"%s\"%s: element %zu is not a number "
                     "or null", field, where, i);
            return -1;
        }
    }
    return 0;
}

static int trace_parse(json_t *o, aqp_trace *t, char *msg, size_t len)
{
    json_t *name = json_object_get(o, "name");
    if (!json_is_string(name)) {
        snprintf(msg, len, "field \"name\": expected a string");
        return -1;
    }
    t->name = strdup(json_string_value(name));
    json_t *q = json_object_get(o, "query");
    t->query = strdup(json_is_string(q) ? json_string_value(q) : "");
    json_t *truth = json_object_get(o, "truth");
    json_t *est = json_object_get(o, "estimates");
    if (!json_is_array(truth) || json_array_size(truth) == 0) {
        snprintf(msg, len, "field \"truth\": expected a non-empty array");
        return -1;
    }
    if (!json_is_array(est) || json_array_size(est) < 2) {
        snprintf(msg, len, "field \"estimates\": expected an array of at "
                 "least 2 mini-batches");
        return -1;
    }
    t->K = json_array_size(truth);
    t->B = json_array_size(est);
    /* B rows of K estimates each cannot all be in the line when B x K is
     * over the line's cap: refused before the matrix is allocated. */
    if (t->K > JSONL_MAX_VALUES / t->B) {
        snprintf(msg, len, "field \"estimates\": %zu mini-batches of %zu "
                 "values (\"truth\") is more than the %d values a line may "
                 "hold", t->B, t->K, JSONL_MAX_VALUES);
        return -1;
    }
    t->truth = malloc(t->K * sizeof *t->truth);
    t->est = malloc(t->B * t->K * sizeof *t->est);
    t->cpu_s = malloc(t->B * sizeof *t->cpu_s);
    t->rows = malloc(t->B * sizeof *t->rows);
    if (!t->name || !t->query || !t->truth || !t->est || !t->cpu_s ||
        !t->rows) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    if (read_row(truth, t->K, t->truth, "truth", -1, msg, len))
        return -1;
    for (size_t i = 0; i < t->B; i++)
        if (read_row(json_array_get(est, i), t->K, t->est + i * t->K,
                     "estimates", (long)i, msg, len))
            return -1;
    if (read_row(json_object_get(o, "batch_cpu_s"), t->B, t->cpu_s,
                 "batch_cpu_s", -1, msg, len))
        return -1;
    for (size_t i = 0; i < t->B; i++)
        if (!(t->cpu_s[i] >= 0)) {
            snprintf(msg, len, "field \"batch_cpu_s\": element %zu is not a "
                     "number >= 0", i);
            return -1;
        }
    json_t *rows = json_object_get(o, "rows");
    if (rows) {
        if (read_row(rows, t->B, t->rows, "rows", -1, msg, len))
            return -1;
    } else {
        for (size_t i = 0; i < t->B; i++)
            t->rows[i] = 0;
    }
    json_t *b = json_object_get(o, "batches");
    if (b && (!json_is_integer(b) ||
              (size_t)json_integer_value(b) != t->B)) {
        snprintf(msg, len, "field \"batches\" must equal the %zu rows of "
                 "\"estimates\"", t->B);
        return -1;
    }
    return 0;
}

/* State of one aqp_traces_load: the set being filled and its capacity. */
typedef struct trace_load {
    aqp_trace_set *set;
    size_t cap;
} trace_load;

static int trace_line(json_t *o, int line, void *ctx, char *msg, size_t len)
{
    trace_load *st = ctx;
    aqp_trace *t = jsonl_push(&st->set->v, st->set->n, &st->cap, sizeof *t,
                              16);
    if (!t) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    t->line = line;
    if (trace_parse(o, t, msg, len)) {
        trace_clear(t);
        return -1;
    }
    st->set->n++;
    return 0;
}

int aqp_traces_load(const char *path, aqp_trace_set *out, char *err,
                    size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    trace_load st = {out, 0};
    int n = jsonl_each(path, trace_line, &st, err, errlen);
    if (n == 0)
        snprintf(err, errlen, "%s: no query runs", path);
    if (n <= 0) {
        aqp_traces_free(out);
        return -1;
    }
    return 0;
}
