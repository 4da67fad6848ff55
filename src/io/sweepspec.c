/*
 * sweepspec.c — reading `slaq sweep` specifications and generating their
 * configurations (sweepspec.h, docs/sweep-cli.md).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/sweepspec.h"

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *const known_keys[] = {
    "name", "command", "cwd", "space", "generator", "configs", "metric",
    "direction", "y_target", "t_max", "kill_threshold", "epochs", "b",
    "slots", "policy", "suspend", "stop_at_target", NULL,
};

/* A number field: required (or default `def` when absent and !required),
 * within [lo, hi]. */
static int num_field(json_t *o, const char *key, int required, double def,
                     double lo, double hi, double *out, char *err,
                     size_t len)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required)
            return fail(err, len, "%s: missing; expected a number in "
                        "[%g, %g]", key, lo, hi);
        *out = def;
        return 0;
    }
    if (!json_is_number(v) || !(json_number_value(v) >= lo) ||
        !(json_number_value(v) <= hi))
        return fail(err, len, "%s: expected a number in [%g, %g]", key, lo,
                    hi);
    *out = json_number_value(v);
    return 0;
}

static int int_field(json_t *o, const char *key, int required, long def,
                     long lo, long hi, long *out, char *err, size_t len)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required)
            return fail(err, len, "%s: missing; expected an integer in "
                        "[%ld, %ld]", key, lo, hi);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo ||
        json_integer_value(v) > hi)
        return fail(err, len, "%s: expected an integer in [%ld, %ld]", key,
                    lo, hi);
    *out = (long)json_integer_value(v);
    return 0;
}

static int parse_param(const char *name, json_t *v, sweep_param *p, char *err,
                       size_t len)
{
    p->name = strdup(name);
    if (!json_is_object(v))
        return fail(err, len, "space.%s: expected an object like {\"type\": "
                    "\"log-uniform\", \"low\": 0.001, \"high\": 1}", name);
    const char *type = json_string_value(json_object_get(v, "type"));
    if (!type)
        return fail(err, len, "space.%s.type: missing; expected uniform, "
                    "log-uniform, integer or choice", name);
    if (!strcmp(type, "choice")) {
        json_t *vals = json_object_get(v, "values");
        size_t i;
        json_t *x;
        if (!json_is_array(vals) || json_array_size(vals) == 0)
            return fail(err, len, "space.%s.values: expected a non-empty "
                        "array of strings or numbers", name);
        json_array_foreach(vals, i, x)
            if (!json_is_string(x) && !json_is_number(x))
                return fail(err, len, "space.%s.values[%zu]: expected a "
                            "string or a number", name, i);
        p->kind = SP_CHOICE;
        p->values = json_incref(vals);
        return 0;
    }
    if (!strcmp(type, "uniform"))
        p->kind = SP_UNIFORM;
    else if (!strcmp(type, "log-uniform") || !strcmp(type, "loguniform"))
        p->kind = SP_LOG_UNIFORM;
    else if (!strcmp(type, "integer") || !strcmp(type, "int"))
        p->kind = SP_INTEGER;
    else
        return fail(err, len, "space.%s.type: \"%s\" is not a parameter "
                    "type; expected uniform, log-uniform, integer or choice",
                    name, type);
    json_t *lo = json_object_get(v, "low"), *hi = json_object_get(v, "high");
    if (!json_is_number(lo) || !json_is_number(hi))
        return fail(err, len, "space.%s: expected numbers \"low\" and "
                    "\"high\"", name);
    p->lo = json_number_value(lo);
    p->hi = json_number_value(hi);
    if (!(p->lo <= p->hi) || !isfinite(p->lo) || !isfinite(p->hi))
        return fail(err, len, "space.%s: expected low <= high, got %g and "
                    "%g", name, p->lo, p->hi);
    if (p->kind == SP_LOG_UNIFORM && !(p->lo > 0))
        return fail(err, len, "space.%s.low: expected a number > 0 for a "
                    "log-uniform parameter, got %g", name, p->lo);
    if (p->kind == SP_INTEGER && (p->lo != floor(p->lo) ||
                                  p->hi != floor(p->hi)))
        return fail(err, len, "space.%s: expected whole numbers low and "
                    "high for an integer parameter", name);
    return 0;
}

/* The names of the {placeholders} in s: each must be a parameter or
 * epochs/config. */
static int check_placeholders(const sweep_spec *s, const char *arg,
                              size_t idx, char *err, size_t len)
{
    for (const char *p = strchr(arg, '{'); p; p = strchr(p + 1, '{')) {
        const char *e = strchr(p, '}');
        if (!e)
            return fail(err, len, "command[%zu]: \"%s\" has a '{' without "
                        "'}'", idx, arg);
        size_t n = (size_t)(e - p - 1);
        int ok = (n == 6 && !strncmp(p + 1, "epochs", 6)) ||
                 (n == 6 && !strncmp(p + 1, "config", 6));
        for (size_t i = 0; !ok && i < s->nparams; i++)
            ok = strlen(s->params[i].name) == n &&
                 !strncmp(p + 1, s->params[i].name, n);
        if (!ok)
            return fail(err, len, "command[%zu]: placeholder {%.*s} is not "
                        "a parameter of \"space\" (nor {epochs} or "
                        "{config})", idx, (int)n, p + 1);
    }
    return 0;
}

/* The values a grid takes of parameter p: every choice; generator.points
 * of a numeric parameter, fewer for a short integer range. */
static int grid_count(const sweep_spec *s, const sweep_param *p)
{
    if (p->kind == SP_CHOICE)
        return (int)json_array_size(p->values);
    if (p->kind == SP_INTEGER && p->hi - p->lo + 1 < s->grid_points)
        return (int)(p->hi - p->lo + 1);
    return s->grid_points;
}

/* The grid's size, the product of grid_count over the parameters;
 * SIZE_MAX when it would overflow. */
static size_t grid_size(const sweep_spec *s)
{
    size_t total = 1;
    for (size_t i = 0; i < s->nparams; i++) {
        size_t k = (size_t)grid_count(s, &s->params[i]);
        if (k && total > SIZE_MAX / k)
            return SIZE_MAX;
        total *= k;
    }
    return total;
}

/* The spec is an object of known fields. Returns 0, or -1 with err set. */
static int spec_keys(json_t *spec, char *err, size_t len)
{
    const char *key;
    json_t *v;
    if (!json_is_object(spec))
        return fail(err, len, "the spec must be a JSON object");
    json_object_foreach(spec, key, v) {
        int known = 0;
        for (int i = 0; known_keys[i]; i++)
            known |= !strcmp(key, known_keys[i]);
        if (!known)
            return fail(err, len, "%s: unknown field (expected name, "
                        "command, cwd, space, generator, configs, metric, "
                        "direction, y_target, t_max, kill_threshold, "
                        "epochs, b, slots, policy, suspend, "
                        "stop_at_target)", key);
    }
    return 0;
}

/* "name" into s->name ("sweep" by default): 1 to 200 characters, none a
 * control character. Returns 0, or -1 with err set. */
static int spec_name(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    json_t *v = json_object_get(spec, "name");
    if (v && !json_is_string(v))
        return fail(err, len, "name: expected a string");
    s->name = strdup(v ? json_string_value(v) : "sweep");
    if (strlen(s->name) > 200 || !*s->name)
        return fail(err, len, "name: expected 1 to 200 characters");
    for (const char *c = s->name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return fail(err, len, "name: control characters are not "
                        "allowed");
    return 0;
}

/* "space" into s->params. Returns 0, or -1 with err set. */
static int spec_space(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    const char *key;
    json_t *v;
    json_t *space = json_object_get(spec, "space");
    if (!json_is_object(space) || json_object_size(space) == 0)
        return fail(err, len, "space: expected an object of parameters, "
                    "e.g. {\"lr\": {\"type\": \"log-uniform\", \"low\": "
                    "0.001, \"high\": 1}}");
    s->params = calloc(json_object_size(space), sizeof *s->params);
    json_object_foreach(space, key, v) {
        if (!*key || strspn(key, "abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
                         != strlen(key))
            return fail(err, len, "space: parameter name \"%s\" must be "
                        "letters, digits and _", key);
        if (parse_param(key, v, &s->params[s->nparams++], err, len) < 0)
            return -1;
    }
    return 0;
}

/* "command" (a string split on blanks, or an array of strings whose
 * placeholders name parameters of the space) into s->command, and "cwd".
 * Returns 0, or -1 with err set. */
static int spec_command(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    json_t *v;
    json_t *cmd = json_object_get(spec, "command");
    if (json_is_string(cmd)) { /* split on blanks */
        json_t *a = json_array();
        char *copy = strdup(json_string_value(cmd)), *save = NULL;
        for (char *t = strtok_r(copy, " \t\n", &save); t;
             t = strtok_r(NULL, " \t\n", &save))
            json_array_append_new(a, json_string(t));
        free(copy);
        s->command = a;
    } else if (json_is_array(cmd)) {
        s->command = json_incref(cmd);
    }
    if (!s->command || json_array_size(s->command) == 0)
        return fail(err, len, "command: expected a command line (a string "
                    "or an array of strings) like \"slaq-train mlpc --lr "
                    "{lr} --iters {epochs}\"");
    size_t i;
    json_array_foreach(s->command, i, v) {
        if (!json_is_string(v))
            return fail(err, len, "command[%zu]: expected a string", i);
        if (check_placeholders(s, json_string_value(v), i, err, len) < 0)
            return -1;
    }
    v = json_object_get(spec, "cwd");
    if (v && !json_is_string(v))
        return fail(err, len, "cwd: expected a directory name");
    if (v)
        s->cwd = strdup(json_string_value(v));
    return 0;
}

/* "generator" (random or grid, its seed and points) into s->grid,
 * s->seed and s->grid_points. Returns 0, or -1 with err set. */
static int spec_generator(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    long n;
    json_t *gen = json_object_get(spec, "generator");
    const char *gtype = "random";
    if (gen && json_is_string(gen))
        gtype = json_string_value(gen);
    else if (gen && json_is_object(gen))
        gtype = json_string_value(json_object_get(gen, "type"));
    else if (gen)
        return fail(err, len, "generator: expected \"random\", \"grid\" or "
                    "an object {\"type\": \"random\", \"seed\": 1}");
    if (!gtype || (strcmp(gtype, "random") && strcmp(gtype, "grid")))
        return fail(err, len, "generator.type: expected random or grid");
    s->grid = !strcmp(gtype, "grid");
    json_t *g = json_is_object(gen) ? gen : json_object();
    if (int_field(g, "seed", 0, 1, 0, 0x7fffffffL, &n, err, len) < 0 ||
        (s->seed = (uint64_t)n, 0) ||
        int_field(g, "points", 0, 3, 1, 1000, &n, err, len) < 0) {
        if (!json_is_object(gen))
            json_decref(g);
        char tmp[512];
        snprintf(tmp, sizeof tmp, "generator.%s", err);
        snprintf(err, len, "%s", tmp);
        return -1;
    }
    s->grid_points = (int)n;
    if (!json_is_object(gen))
        json_decref(g);
    return 0;
}

/* "configs" into s->configs: required for random, and for a grid without
 * it the grid's size, at most SWEEP_MAX_CONFIGS. Returns 0, or -1 with
 * err set. */
static int spec_configs(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    long n;
    if (int_field(spec, "configs", !s->grid, 0, 1, SWEEP_MAX_CONFIGS, &n,
                  err, len) < 0)
        return -1;
    s->configs = (size_t)n;
    if (s->grid && !s->configs) {
        size_t total = grid_size(s);
        if (total > SWEEP_MAX_CONFIGS) {
            char sizes[256] = "";
            size_t o = 0;
            for (size_t k = 0; k < s->nparams && o < sizeof sizes - 1; k++)
                o += (size_t)snprintf(sizes + o, sizeof sizes - o, "%s%d",
                                      k ? " x " : "",
                                      grid_count(s, &s->params[k]));
            if (total == SIZE_MAX)
                return fail(err, len, "generator: the grid of %s points is "
                            "more than the cap of %d configurations; lower "
                            "generator.points or give \"configs\"", sizes,
                            SWEEP_MAX_CONFIGS);
            return fail(err, len, "generator: the grid of %s = %zu points "
                        "is more than the cap of %d configurations; lower "
                        "generator.points or give \"configs\"", sizes,
                        total, SWEEP_MAX_CONFIGS);
        }
    }
    return 0;
}

/* The goal and the budget: "metric", "direction", "epochs", "slots",
 * "b", "y_target", "t_max" and "kill_threshold" into s->metric and s->p.
 * Returns 0, or -1 with err set. */
static int spec_goal(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    double x;
    json_t *v = json_object_get(spec, "metric");
    if (!json_is_string(v) || !*json_string_value(v))
        return fail(err, len, "metric: expected the name of the metric the "
                    "jobs report (e.g. \"val_accuracy\", or \"loss\")");
    s->metric = strdup(json_string_value(v));
    v = json_object_get(spec, "direction");
    const char *dir = v ? json_string_value(v) : NULL;
    if (v && (!dir || (strcmp(dir, "max") && strcmp(dir, "min"))))
        return fail(err, len, "direction: expected \"max\" (higher is "
                    "better, e.g. accuracy) or \"min\" (a loss)");
    long epochs, b, slots;
    if (int_field(spec, "epochs", 1, 0, 1, 1000000, &epochs, err, len) < 0 ||
        int_field(spec, "slots", 1, 0, 1, 1024, &slots, err, len) < 0 ||
        int_field(spec, "b", 0, 0, 0, 1000000, &b, err, len) < 0)
        return -1;
    size_t ncfg = s->configs ? s->configs : grid_size(s);
    if ((double)ncfg * (double)epochs > SWEEP_MAX_CONFIG_EPOCHS)
        return fail(err, len, "epochs: %zu configurations x %ld epochs is "
                    "more than the cap of %d configuration-epochs; lower "
                    "epochs or configs", ncfg, epochs,
                    SWEEP_MAX_CONFIG_EPOCHS);
    slaq_sweep_params_init(&s->p, (size_t)slots, (int)epochs);
    s->p.b = (int)b;
    s->p.maximize = dir ? !strcmp(dir, "max")
                        : strcmp(s->metric, "loss") != 0;
    if (num_field(spec, "y_target", 1, 0, -1e300, 1e300, &s->p.y_target,
                  err, len) < 0 ||
        num_field(spec, "t_max", 0, 3600, 1e-3, 1e9, &s->p.t_max, err,
                  len) < 0 ||
        num_field(spec, "kill_threshold", 0, NAN, -1e300, 1e300, &x, err,
                  len) < 0)
        return -1;
    s->p.kill_threshold = x;
    slaq_lcurve_bound_metric(&s->p.lcurve, s->metric, s->p.maximize);
    return 0;
}

/* "policy", "suspend" and "stop_at_target"; then the policy checks the
 * rest (its name, the target, T_max for POP). Returns 0, or -1 with err
 * set. */
static int spec_policy(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    json_t *v = json_object_get(spec, "policy");
    if (v && !json_is_string(v))
        return fail(err, len, "policy: expected a policy name");
    s->policy = strdup(v ? json_string_value(v) : "pop");
    v = json_object_get(spec, "suspend");
    const char *susp = v ? json_string_value(v) : "signal";
    if (!susp || (strcmp(susp, "signal") && strcmp(susp, "checkpoint")))
        return fail(err, len, "suspend: expected \"signal\" (SIGSTOP and "
                    "SIGCONT on this machine) or \"checkpoint\" (checkpoint, "
                    "exit, and start again from it)");
    s->checkpoint = !strcmp(susp, "checkpoint");
    v = json_object_get(spec, "stop_at_target");
    if (v && !json_is_boolean(v))
        return fail(err, len, "stop_at_target: expected true or false");
    s->stop_at_target = v ? json_is_true(v) : 1;

    size_t nc = s->configs ? s->configs : 1;
    char perr[256];
    slaq_sweep *pol = slaq_sweep_new(s->policy, &s->p, nc, perr,
                                     sizeof perr);
    if (!pol)
        return fail(err, len, "policy %s: %s", s->policy, perr);
    slaq_sweep_free(pol);
    return 0;
}

/* Reads spec into *s field by field, in the order of the errors' checks
 * (the space first: the command's placeholders refer to it). Returns 0,
 * or -1 with err set and s holding what was read. */
static int spec_parse(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    memset(s, 0, sizeof *s);
    if (spec_keys(spec, err, len) < 0 || spec_name(spec, s, err, len) < 0 ||
        spec_space(spec, s, err, len) < 0 ||
        spec_command(spec, s, err, len) < 0 ||
        spec_generator(spec, s, err, len) < 0 ||
        spec_configs(spec, s, err, len) < 0 ||
        spec_goal(spec, s, err, len) < 0 || spec_policy(spec, s, err, len) < 0)
        return -1;
    return 0;
}

int sweep_spec_parse(json_t *spec, sweep_spec *s, char *err, size_t len)
{
    if (spec_parse(spec, s, err, len) == 0)
        return 0;
    sweep_spec_free(s); /* what was read before the error */
    return -1;
}

void sweep_spec_free(sweep_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nparams; i++) {
        free(s->params[i].name);
        json_decref(s->params[i].values);
    }
    free(s->params);
    free(s->name);
    free(s->cwd);
    free(s->metric);
    free(s->policy);
    json_decref(s->command);
    memset(s, 0, sizeof *s);
}

/* splitmix64: the random generator's stream, fixed by the seed. */
static double rand01(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

/* Value k of `points` of a numeric parameter on a grid. */
static json_t *grid_value(const sweep_param *p, int k, int points)
{
    double f = points > 1 ? (double)k / (points - 1) : 0.5;
    switch (p->kind) {
    case SP_UNIFORM:
        return json_real(p->lo + f * (p->hi - p->lo));
    case SP_LOG_UNIFORM:
        return json_real(exp(log(p->lo) + f * (log(p->hi) - log(p->lo))));
    case SP_INTEGER:
        return json_integer((json_int_t)llround(p->lo + f * (p->hi - p->lo)));
    case SP_CHOICE:
        return json_incref(json_array_get(p->values, (size_t)k));
    }
    return json_null();
}

static json_t *random_value(const sweep_param *p, uint64_t *st)
{
    double u = rand01(st);
    switch (p->kind) {
    case SP_UNIFORM:
        return json_real(p->lo + u * (p->hi - p->lo));
    case SP_LOG_UNIFORM:
        return json_real(exp(log(p->lo) + u * (log(p->hi) - log(p->lo))));
    case SP_INTEGER: {
        double v = floor(p->lo + u * (p->hi - p->lo + 1));
        return json_integer((json_int_t)(v > p->hi ? p->hi : v));
    }
    case SP_CHOICE: {
        size_t n = json_array_size(p->values), k = (size_t)(u * (double)n);
        return json_incref(json_array_get(p->values, k < n ? k : n - 1));
    }
    }
    return json_null();
}

/* How a value is written into the command. */
static void format_value(json_t *v, char *out, size_t len)
{
    if (json_is_string(v))
        snprintf(out, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(out, len, "%lld", (long long)json_integer_value(v));
    else
        snprintf(out, len, "%.6g", json_number_value(v));
}

static json_t *fill_command(const sweep_spec *s, json_t *params, size_t idx)
{
    json_t *cmd = json_array();
    size_t i;
    json_t *a;
    json_array_foreach(s->command, i, a) {
        const char *src = json_string_value(a);
        size_t cap = strlen(src) + 1, n = 0;
        char *out = malloc(cap);
        for (const char *p = src; *p;) {
            const char *e = *p == '{' ? strchr(p, '}') : NULL;
            char val[256] = "";
            if (!e) {
                out[n++] = *p++;
                continue;
            }
            size_t kl = (size_t)(e - p - 1);
            if (kl == 6 && !strncmp(p + 1, "epochs", 6))
                snprintf(val, sizeof val, "%d", s->p.max_epochs);
            else if (kl == 6 && !strncmp(p + 1, "config", 6))
                snprintf(val, sizeof val, "%zu", idx);
            else {
                char k[128];
                snprintf(k, sizeof k, "%.*s", (int)kl, p + 1);
                format_value(json_object_get(params, k), val, sizeof val);
            }
            size_t vl = strlen(val);
            cap += vl;
            out = realloc(out, cap);
            memcpy(out + n, val, vl);
            n += vl;
            p = e + 1;
        }
        out[n] = 0;
        json_array_append_new(cmd, json_string(out));
        free(out);
    }
    return cmd;
}

json_t *sweep_spec_configs(const sweep_spec *s, char *err, size_t len)
{
    json_t *out = json_array();
    uint64_t st = s->seed * 0x2545f4914f6cdd1dULL + 1;
    size_t total = s->grid ? grid_size(s) : 0;
    int *counts = calloc(s->nparams, sizeof *counts);
    for (size_t i = 0; i < s->nparams; i++)
        counts[i] = grid_count(s, &s->params[i]);
    size_t n = s->grid ? (s->configs && s->configs < total ? s->configs
                                                           : total)
                       : s->configs;
    if (s->grid && s->configs > total) {
        free(counts);
        json_decref(out);
        fail(err, len, "configs: the grid has only %zu points (generator."
             "points %d), fewer than the %zu asked for", total,
             s->grid_points, s->configs);
        return NULL;
    }
    for (size_t c = 0; c < n; c++) {
        json_t *params = json_object();
        size_t rest = c;
        for (size_t i = 0; i < s->nparams; i++) {
            json_t *v;
            if (s->grid) {
                v = grid_value(&s->params[i], (int)(rest % (size_t)counts[i]),
                               counts[i]);
                rest /= (size_t)counts[i];
            } else {
                v = random_value(&s->params[i], &st);
            }
            json_object_set_new(params, s->params[i].name, v);
        }
        json_array_append_new(out, json_pack("{s:o, s:o}", "params", params,
                                             "cmd", fill_command(s, params,
                                                                 c)));
    }
    free(counts);
    return out;
}
