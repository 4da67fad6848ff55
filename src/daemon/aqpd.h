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

/* Makes the job's scheduler entry a `kind` job (SLAQ_JOB_*); only before
 * its first report. -1 with a message otherwise. */
int aqpd_set_kind(sd_daemon *d, sd_job *j, int kind, char *err,
                  size_t errlen);
/* A report carrying "estimates": validated, handed to the core as a
 * query's mini-batch and remembered. Returns 1 when it was such a
 * mini-batch and was taken, 0 when msg has no estimates (an ordinary
 * report, for the caller to take), -1 with a message. */
int aqpd_report(sd_daemon *d, sd_job *j, json_t *msg, const slaq_report *r,
                char *err, size_t errlen);
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
/* Hands a stored mini-batch (`vec` from aqpd_vec_json) to the job's query
 * again after a restart: 0, or -1 (logged) if it cannot be used. */
int aqpd_replay(sd_daemon *d, sd_job *j, const slaq_report *r,
                const char *vec);
void aqpd_free(sd_job *j);

#endif
