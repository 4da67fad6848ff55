/*
 * sweeps.c — the reader of recorded sweeps (see sweeps.h).
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/curves.h"
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

int sweeps_load(const char *path, sweep_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL, msg[256];
    size_t cap = 0, vcap = 0;
    int lineno = 0;
    bool header = false;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        json_error_t je;
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
        if (!o || !json_is_object(o)) {
            if (o)
                snprintf(err, errlen, "%s:%d: expected a JSON object", path, lineno);
            else
                snprintf(err, errlen, "%s:%d: malformed JSON at column %d: %s",
                         path, lineno, je.column, je.text);
            json_decref(o);
            goto fail;
        }
        int rc;
        if (!header) {
            rc = header_parse(o, out, msg, sizeof msg);
            header = true;
        } else {
            if (out->n == vcap) {
                size_t nc = vcap ? vcap * 2 : 64;
                sweep_trace *v = realloc(out->v, nc * sizeof *v);
                if (!v) {
                    json_decref(o);
                    snprintf(err, errlen, "%s: out of memory", path);
                    goto fail;
                }
                out->v = v;
                vcap = nc;
            }
            sweep_trace *t = &out->v[out->n];
            memset(t, 0, sizeof *t);
            t->line = lineno;
            rc = trace_parse(o, out, t, msg, sizeof msg);
            if (rc)
                trace_clear(t);
            else
                out->n++;
        }
        json_decref(o);
        if (rc) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
            goto fail;
        }
    }
    free(line);
    fclose(f);
    if (out->n == 0) {
        snprintf(err, errlen, "%s: no configurations after the header line", path);
        sweeps_free(out);
        return -1;
    }
    return 0;
fail:
    free(line);
    fclose(f);
    sweeps_free(out);
    return -1;
}
