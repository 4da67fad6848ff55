/*
 * curves.c — the curve file reader.
 *
 * A curve file is JSON Lines: one recorded training run per line with at
 * least "loss" (an array of at least two finite numbers, loss[0] before the
 * first iteration); "name", "algorithm", "convergence", "iter_cpu_s" and
 * "data_size" are optional and anything else is ignored. Errors say which
 * file, line and field, and what was expected, so a hand-edited file can
 * be fixed from the message alone.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/curves.h"
#include "io/jsonl.h"

int json_number_array(const void *obj, const char *name, size_t min_len,
                      double **out, size_t *n, char *err, size_t errlen)
{
    json_t *a = json_object_get((const json_t *)obj, name);
    *out = NULL;
    *n = 0;
    if (!a) {
        snprintf(err, errlen, "field \"%s\" is missing", name);
        return -1;
    }
    if (!json_is_array(a)) {
        snprintf(err, errlen, "field \"%s\" must be an array of numbers",
                 name);
        return -1;
    }
    size_t len = json_array_size(a);
    if (len < min_len) {
        snprintf(err, errlen,
                 "field \"%s\" has %zu values; at least %zu are needed", name,
                 len, min_len);
        return -1;
    }
    double *v = malloc((len ? len : 1) * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        json_t *x = json_array_get(a, i);
        if (!json_is_number(x) || !isfinite(json_number_value(x))) {
            snprintf(err, errlen,
                     "field \"%s\": element %zu is not a finite number", name,
                     i);
            free(v);
            return -1;
        }
        v[i] = json_number_value(x);
    }
    *out = v;
    *n = len;
    return 0;
}

static char *dup_string_field(json_t *o, const char *name, const char *def,
                              int *bad)
{
    json_t *s = json_object_get(o, name);
    if (!s)
        return def ? strdup(def) : NULL;
    if (!json_is_string(s)) {
        *bad = 1;
        return NULL;
    }
    return strdup(json_string_value(s));
}

static void curve_clear(curve *c)
{
    free(c->name);
    free(c->algorithm);
    free(c->convergence);
    free(c->loss);
    free(c->iter_cpu_s);
    memset(c, 0, sizeof *c);
}

void curves_free(curve_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        curve_clear(&s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* Parses one line's object into c; on error fills msg (without the
 * file:line prefix). */
static int curve_parse(json_t *o, curve *c, char *msg, size_t len)
{
    int bad = 0;
    if (json_number_array(o, "loss", 2, &c->loss, &c->n, msg, len))
        return -1;
    c->name = dup_string_field(o, "name", "", &bad);
    if (bad) {
        snprintf(msg, len, "field \"name\" must be a string");
        return -1;
    }
    c->algorithm = dup_string_field(o, "algorithm", "unknown", &bad);
    if (bad) {
        snprintf(msg, len, "field \"algorithm\" must be a string");
        return -1;
    }
    c->convergence = dup_string_field(o, "convergence", NULL, &bad);
    if (bad) {
        snprintf(msg, len, "field \"convergence\" must be a string");
        return -1;
    }
    if (json_object_get(o, "iter_cpu_s")) {
        size_t n;
        if (json_number_array(o, "iter_cpu_s", 0, &c->iter_cpu_s, &n, msg,
                              len))
            return -1;
        if (n != c->n - 1) {
            snprintf(msg, len,
                     "field \"iter_cpu_s\" has %zu values; \"loss\" has %zu, "
                     "so %zu are needed",
                     n, c->n, c->n - 1);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            if (c->iter_cpu_s[i] < 0) {
                snprintf(msg, len,
                         "field \"iter_cpu_s\": element %zu is negative", i);
                return -1;
            }
    }
    json_t *ds = json_object_get(o, "data_size");
    if (ds) {
        if (!json_is_number(ds) || !(json_number_value(ds) >= 0)) {
            snprintf(msg, len,
                     "field \"data_size\" must be a non-negative number");
            return -1;
        }
        c->data_size = json_number_value(ds);
    }
    return 0;
}

/* State of one curves_load: the set being filled and its capacity. */
typedef struct curve_load {
    curve_set *set;
    size_t cap;
} curve_load;

static int curve_line(json_t *o, int line, void *ctx, char *msg, size_t len)
{
    curve_load *st = ctx;
    curve *c = jsonl_push(&st->set->v, st->set->n, &st->cap, sizeof *c, 16);
    if (!c) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    c->line = line;
    if (curve_parse(o, c, msg, len)) {
        curve_clear(c);
        return -1;
    }
    st->set->n++;
    return 0;
}

int curves_load(const char *path, curve_set *out, char *err, size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    curve_load st = {out, 0};
    int n = jsonl_each(path, curve_line, &st, err, errlen);
    if (n == 0)
        snprintf(err, errlen, "%s: no curves in the file", path);
    if (n <= 0) {
        curves_free(out);
        return -1;
    }
    return 0;
}
