/*
 * sweepd.h — hyperparameter sweeps run by slaqd (sweepd.c; their tables
 * are the store's, store_sweep.c).
 */
#ifndef SLAQ_DAEMON_SWEEP_H
#define SLAQ_DAEMON_SWEEP_H

#include <jansson.h>
#include <stdint.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_user sd_user;

/* The sweep_* control requests (docs/sweep-cli.md), the runtime
 * (sweep_tick every tick), reading sweeps back at start, and the HTTP
 * views (/api/sweeps, /api/sweeps/ID: NULL for an unknown id). */
json_t *sweep_request(sd_daemon *d, const char *type, json_t *req,
                  const sd_user *who);
void sweep_tick(sd_daemon *d);
int sweep_restore(sd_daemon *d);
void sweep_free_all(sd_daemon *d);
json_t *sweep_http_list(sd_daemon *d);
json_t *sweep_http_one(sd_daemon *d, int64_t id);
/* A suspension of sweep job j that its agent answered: ok, or failed with
 * err (the configuration then ends: never more than the sweep's slots
 * run). */
void sweep_suspend_result(sd_daemon *d, sd_job *j, int ok, const char *err);

#endif
