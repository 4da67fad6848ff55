/*
 * aqpd.h — approximate queries in slaqd (aqpd.c, docs/relaqs.md).
 */
#ifndef SLAQ_DAEMON_AQPD_H
#define SLAQ_DAEMON_AQPD_H

#include <jansson.h>
#include <stddef.h>

#include "slaq/slaq.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

/* A report's mini-batch as aqpd_read reads it: n cells of estimates and
 * their bounds (NAN where null or absent), in one malloc'ed block. */
typedef struct aqpd_batch {
    size_t n;
    double *est, *lo, *hi;
} aqpd_batch;

/* Reads a report's "estimates", "lower" and "upper" into b. Returns 1
 * when msg carries estimates (b filled, for aqpd_take or
 * aqpd_batch_free), 0 when it has none (an ordinary report, for the
 * caller to take), -1 with a message (a query's report without them
 * too). */
int aqpd_read(const sd_job *j, json_t *msg, aqpd_batch *b, char *err,
              size_t errlen);
/* Hands mini-batch b of report r to the job's query (its scheduler entry
 * a SLAQ_JOB_QUERY already: job_set_kind) and remembers it: 1, or -1
 * with a message. Frees b either way. */
int aqpd_take(sd_daemon *d, sd_job *j, const slaq_report *r, aqpd_batch *b,
              char *err, size_t errlen);
void aqpd_batch_free(aqpd_batch *b);
/* {"job": ID, "kind": ..., "progress": P, "points": [{"iter", "t",
 * "est": [...], "lower": [...], "upper": [...]}...]} (first cells). */
json_t *aqpd_estimates_json(const sd_job *j);
/* A query's state for the job object: {"progress": P or null, "batch": the
 * last mini-batch's iteration or null, "cells": n, "estimates", "lower",
 * "upper": the last mini-batch's first cells (up to 4; null where not yet
 * known)}; what slaq ls and slaq show print for a query. */
json_t *aqpd_summary_json(const sd_job *j);
/* The report's "estimates", "lower" and "upper" as one compact JSON
 * object, as the database keeps them (malloc'ed; NULL if out of memory). */
char *aqpd_vec_json(json_t *msg);
/* A finished query's stored estimates into memory for
 * aqpd_estimates_json (after a restart, once; a running one replays). */
void aqpd_load(sd_daemon *d, sd_job *j);
void aqpd_free(sd_job *j);

#endif
