/*
 * sweepspec.h — the sweep specification of `slaq sweep SPEC.json`
 * (docs/sweep-cli.md): parsing with errors that name the field, and the
 * configurations it generates. Shared by the slaq command (which checks a
 * spec before sending it) and slaqd (which runs it), so both read a spec
 * the same way.
 */
#ifndef SLAQ_SWEEPSPEC_H
#define SLAQ_SWEEPSPEC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "slaq/sweep.h"

/* The most configurations a sweep may have: `configs`, and a grid's size
 * when `configs` is not given (docs/sweep-cli.md). */
#define SWEEP_MAX_CONFIGS 10000
/* The most configurations × epochs: the policy keeps every configuration's
 * curve, `epochs` values each (80 MB at the cap). */
#define SWEEP_MAX_CONFIG_EPOCHS 10000000

typedef enum { SP_UNIFORM, SP_LOG_UNIFORM, SP_INTEGER, SP_CHOICE } sp_kind;

typedef struct sweep_param {
    char *name;
    sp_kind kind;
    double lo, hi;      /* uniform, log-uniform, integer (inclusive) */
    json_t *values;     /* choice: the values (strings or numbers) */
} sweep_param;

typedef struct sweep_spec {
    char *name;
    json_t *command;    /* array of strings with {placeholders} */
    char *cwd;          /* NULL: the submitter's directory */
    sweep_param *params;
    size_t nparams;
    int grid;           /* generator: grid (else random) */
    int grid_points;    /* grid: values per numeric parameter */
    uint64_t seed;      /* random: the seed */
    size_t configs;     /* configurations to run */
    char *metric;       /* the metric jobs report (metric_name) */
    int checkpoint;     /* suspend by checkpoint and exit (else SIGSTOP) */
    int stop_at_target; /* end the sweep when a configuration reaches it */
    char *policy;
    slaq_sweep_params p;/* slots, max_epochs, y_target, maximize, t_max,
                           kill_threshold, b */
} sweep_spec;

/* Parses and checks a spec. On error returns -1 with err naming the field
 * and what was expected ("space.lr.low: expected a number > 0 for a
 * log-uniform parameter"). A grid whose size (computed without overflow)
 * exceeds SWEEP_MAX_CONFIGS is refused here when `configs` does not cut
 * it, before any configuration is made. The spec is not kept (out owns
 * copies). After an error out holds nothing (sweep_spec_free on it is
 * harmless). */
int sweep_spec_parse(json_t *spec, sweep_spec *out, char *err, size_t errlen);
void sweep_spec_free(sweep_spec *s);

/* The configurations, in the order the policy starts them: an array of
 * {"params": {NAME: value}, "cmd": [...]} with every placeholder filled
 * ({NAME}, {epochs}, {config} the configuration's index). NULL with err
 * when the space cannot give `configs` of them (a grid too small). */
json_t *sweep_spec_configs(const sweep_spec *s, char *err, size_t errlen);

#endif
