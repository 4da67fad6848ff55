/*
 * counters.h — slaqd's counters and gauges (counters.c): one table from
 * which both the `status` reply (api.c) and GET /metrics (http.c) are
 * written, so that a number has one JSON key, one Prometheus name and one
 * meaning, and cannot be shown in one place and forgotten in the other.
 * docs/metrics.md lists the table; tests/e2e/test_counters.py checks that
 * list and both outputs against each other.
 */
#ifndef SLAQ_DAEMON_COUNTERS_H
#define SLAQ_DAEMON_COUNTERS_H

#include <stdio.h>

#include <jansson.h>

typedef struct sd_daemon sd_daemon;

/* How a row's value is held: a field of sd_daemon (at `off`) or an
 * accessor function (`get`). */
typedef enum {
    CTR_U64,    /* uint64_t field; an integer in status */
    CTR_SIZE,   /* size_t field; an integer in status */
    CTR_DOUBLE, /* double field; a number in status */
    CTR_INT,    /* get(); an integer in status */
    CTR_REAL,   /* get(); a number in status */
    CTR_BOOL    /* get(), 0 or 1; true or false in status, 0 or 1 in
                   /metrics */
} counter_form;

typedef struct sd_counter {
    const char *key;     /* in `status`; NULL: /metrics only */
    const char *prom;    /* in /metrics; NULL: `status` only */
    const char *type;    /* "counter" (only grows) or "gauge" */
    const char *help;    /* /metrics' HELP line, and docs/metrics.md */
    counter_form form;
    size_t off;          /* offsetof(sd_daemon, field) (CTR_U64 ...) */
    double (*get)(sd_daemon *d); /* the value (CTR_INT ...) */
    double prom_per;     /* /metrics shows the status value divided by
                            this (1e3: milliseconds in status, seconds in
                            Prometheus' convention); 0 means 1 */
} sd_counter;

extern const sd_counter counters[];
extern const size_t counters_n;

/* A row's value as a number (as in status; /metrics divides it by prom_per). */
double counter_value(sd_daemon *d, const sd_counter *c);

/* Adds every row with a status key to the `status` reply r. */
void counters_status(sd_daemon *d, json_t *r);

/* Writes every row with a Prometheus name to f: its HELP and TYPE lines
 * and its sample, in the text exposition format (0.0.4). */
void counters_prometheus(sd_daemon *d, FILE *f);

#endif
