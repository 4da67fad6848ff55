/*
 * sweeps.c — the reader of recorded sweeps (see sweeps.h).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/curves.h"
#include "io/jsonl.h"
#include "io/sweeps.h"

static void trace_clear(sweep_trace *t)
{
    free(t->epoch_s);
    free(t->metric);
    free(t->params);
    memset(t, 0, sizeof *t);
}

void sweeps_free(sweep_set *s)
{
    for (size_t i = 0; s->v && i < s->n; i++)
        trace_clear(&s->v[i]);
    free(s->v);
    free(s->name);
    free(s->metric_name);
    memset(s, 0, sizeof *s);
}

static int header_parse(json_t *o, sweep_set *s, char *err, size_t len)
{
    json_t *name = json_object_get(o, "sweep");
    json_t *metric = json_object_get(o, "metric");
    json_t *dir = json_object_get(o, "direction");
    json_t *ep = json_object_get(o, "epochs");
    if (!json_is_string(name)) {
        snprintf(err, len, "header: field \"sweep\" must be a string");
        return -1;
    }
    if (!json_is_integer(ep) || json_integer_value(ep) < 1 ||
        json_integer_value(ep) > 1000000) {
        snprintf(err, len, "header: field \"epochs\" must be an integer in 1..1000000");
        return -1;
    }
    if (dir && (!json_is_string(dir) || (strcmp(json_string_value(dir), "max") &&
                                         strcmp(json_string_value(dir), "min")))) {
        snprintf(err, len, "header: field \"direction\" must be \"max\" or \"min\"");
        return -1;
    }
    s->name = strdup(json_string_value(name));
    s->metric_name = strdup(json_is_string(metric) ? json_string_value(metric)
                                                   : "metric");
    s->maximize = !dir || !strcmp(json_string_value(dir), "max");
    s->epochs = (int)json_integer_value(ep);
    if (!s->name || !s->metric_name) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    return 0;
}

static int trace_parse(json_t *o, const sweep_set *s, sweep_trace *t,
                       char *err, size_t len)
{
    json_t *id = json_object_get(o, "id"), *st = json_object_get(o, "start_s");
    size_t ne = 0, nm = 0;
    if (!json_is_integer(id) || json_integer_value(id) < 0) {
        snprintf(err, len, "field \"id\" must be a non-negative integer");
        return -1;
    }
    t->id = (int)json_integer_value(id);
    if (st && (!json_is_number(st) || json_number_value(st) < 0)) {
        snprintf(err, len, "field \"start_s\" must be a non-negative number");
        return -1;
    }
    t->start_s = st ? json_number_value(st) : 0;
    if (json_number_array(o, "epoch_s", 1, &t->epoch_s, &ne, err, len) < 0 ||
        json_number_array(o, "metric", 1, &t->metric, &nm, err, len) < 0)
        return -1;
    if (ne != nm) {
        snprintf(err, len, "fields \"epoch_s\" (%zu values) and \"metric\" "
                           "(%zu) must have the same length", ne, nm);
        return -1;
    }
    if (ne > (size_t)s->epochs) {
        snprintf(err, len, "%zu epochs, more than the header's \"epochs\" (%d)",
                 ne, s->epochs);
        return -1;
    }
    for (size_t i = 0; i < ne; i++)
        if (t->epoch_s[i] < 0) {
            snprintf(err, len, "field \"epoch_s\": element %zu is negative", i);
            return -1;
        }
    t->n = ne;
    json_t *p = json_object_get(o, "params");
    t->params = p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
    if (!t->params) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    return 0;
}

/* State of one sweeps_load: the set being filled, its capacity, and
 * whether the header line has been read. */
typedef struct sweep_load {
    sweep_set *set;
    size_t cap;
    bool header;
} sweep_load;

static int sweep_line(json_t *o, int line, void *ctx, char *msg, size_t len)
{
    sweep_load *st = ctx;
    sweep_set *s = st->set;
    if (!st->header) {
        st->header = true;
        return header_parse(o, s, msg, len);
    }
    sweep_trace *t = jsonl_push(&s->v, s->n, &st->cap, sizeof *t, 64);
    if (!t) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    t->line = line;
    if (trace_parse(o, s, t, msg, len)) {
        trace_clear(t);
        return -1;
    }
    s->n++;
    return 0;
}

int sweeps_load(const char *path, sweep_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    sweep_load st = {out, 0, false};
    if (jsonl_each(path, sweep_line, &st, err, errlen) < 0) {
        sweeps_free(out);
        return -1;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "%s: no configurations after the header line",
                 path);
        sweeps_free(out);
        return -1;
    }
    return 0;
}
