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

/* Adds every row with a status key to the `status` reply r. */
void counter_status(sd_daemon *d, json_t *r);

/* Writes every row with a Prometheus name to f: its HELP and TYPE lines
 * and its sample, in the text exposition format (0.0.4). */
void counter_prometheus(sd_daemon *d, FILE *f);

#endif
