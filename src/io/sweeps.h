/*
 * sweeps.h — reading recorded sweeps (data/sweeps/NAME.jsonl, written by
 * `make sweep-traces`; the format is in docs/sweeps.md): a header line, then
 * one configuration per line with its per-epoch wall times and metric.
 */
#ifndef SLAQ_IO_SWEEPS_H
#define SLAQ_IO_SWEEPS_H

#include <stddef.h>

typedef struct sweep_trace {
    int id;            /* the configuration's index in the generator order */
    double start_s;    /* process start to its first iteration */
    double *epoch_s;   /* wall time of each epoch */
    double *metric;    /* held-out metric after each epoch */
    size_t n;          /* epochs recorded (>= 1) */
    char *params;      /* the hyperparameters, as compact JSON */
    int line;
} sweep_trace;

typedef struct sweep_set {
    char *name;        /* header "sweep" */
    char *metric_name; /* header "metric" */
    int maximize;      /* header "direction": "max" (1) or "min" (0) */
    int epochs;        /* header "epochs": the most any configuration runs */
    sweep_trace *v;
    size_t n;
} sweep_set;

/*
 * Loads the sweep file at `path`. On error returns -1 with a message that
 * names the file, line and field ("s.jsonl:7: field \"metric\": element 3
 * is not a number") and leaves *out empty.
 */
int sweeps_load(const char *path, sweep_set *out, char *err, size_t errlen);
void sweeps_free(sweep_set *s);

#endif
