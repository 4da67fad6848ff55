/*
 * store.h — slaqd's state.db, and the only code that speaks SQL to it.
 *
 * Every table, column and statement of state.db lives in the store's
 * files, and nowhere else (tests/cli/test_store_owner.sh checks it):
 *
 *   store.c        the schema (one table of tables and columns that makes
 *                  the CREATE and ALTER statements: docs/state-db.md), the
 *                  connection, its transaction, and jobs, reports,
 *                  allocations and events
 *   store_sweep.c  the sweeps' tables (sweepd.c's state)
 *   store_run.c    a read-only view of a recorded run (slaq replay), linked
 *                  into the slaq command as well
 *
 * Writes go into one open transaction that store_flush commits; see
 * store.c for what a failed write does.
 */
#ifndef SLAQ_DAEMON_STORE_H
#define SLAQ_DAEMON_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "slaq/slaq.h"

typedef struct sd_store sd_store;
typedef struct sd_job sd_job;
typedef struct sd_daemon sd_daemon;
typedef struct sd_array sd_array;

#define SD_STORE_PENDING (1 << 20)    /* reports kept while writes fail */

/* ---------------------------------------------------------- store.c */

/* Opens (creating if missing) slaqd's database at path, mode 0600. An
 * existing file that is empty or not a slaq database is refused unless
 * `init` (and then only an empty one, or an SQLite file without tables,
 * is set up): slaqd never writes into someone else's file. A database of
 * an older slaqd gains the tables and columns added since. */
sd_store *store_open(const char *path, int init, char *err, size_t errlen);
void store_close(sd_store *s);
/* Commits the open transaction; -1 when writing fails (see store.c). */
int store_flush(sd_store *s);
/* The next store_flush tries again at once, not after the usual second
 * (room was just made: limits.c cut the logs). */
void store_retry_now(sd_store *s);
/* Called while retrying after a failure, inside the new transaction: puts
 * every job again (memory holds the truth while the disk refused it). */
void store_set_rewrite(sd_store *s, void (*fn)(void *), void *arg);
int store_failing(const sd_store *s);  /* the last commit failed */
const char *store_error(const sd_store *s);
uint64_t store_failures(const sd_store *s);
uint64_t store_lost(const sd_store *s);  /* reports beyond the memory cap */
size_t store_pending(const sd_store *s); /* reports not yet committed */
void store_put_job(sd_store *s, const sd_job *j);
/* `metric` NaN: the report carries none (stored as NULL); `threads` and
 * `wall_s` as the report said them (0: not said; stored as NULL). */
void store_report(sd_store *s, int64_t job, const slaq_report *r,
                  double metric, double threads, double wall_s);
/* The same with a query's mini-batch: `vec` is the JSON object of its
 * "estimates", "lower" and "upper" (aqpd_vec_json), or NULL. */
void store_report_vec(sd_store *s, int64_t job, const slaq_report *r,
                      double metric, const char *vec, double threads,
                      double wall_s);
void store_alloc(sd_store *s, int64_t job, double t, double cores,
                 uint64_t epoch);
void store_event(sd_store *s, double t, int64_t job, const char *kind,
                 const char *detail);
/* Calls fn for each stored job, in id order: a record made by make(d,
 * id) (the job table's, which the store does not know) and filled from
 * its row. */
int store_each_job(sd_store *s, sd_job *(*make)(sd_daemon *, int64_t),
                   int (*fn)(sd_daemon *, sd_job *), sd_daemon *d);
/* Calls fn for each report of a job in iteration order. */
int store_each_report(sd_store *s, int64_t job,
                      int (*fn)(void *, const slaq_report *), void *arg);
/* The same with each report's stored estimates (NULL when it has none). */
int store_each_query_report(sd_store *s, int64_t job,
                            int (*fn)(void *, const slaq_report *,
                                      const char *), void *arg);
/* The same with its metric as well (NaN when it has none): everything a
 * job's report carried, as an agent resends it. */
int store_each_full_report(sd_store *s, int64_t job,
                           int (*fn)(void *, const slaq_report *,
                                     const char *, double), void *arg);
/* A job's value per iteration, in iteration order, from iteration `after`
 * on (exclusive) and iteration 0 always: its loss (`loss`), or else its
 * metric (iterations without one skipped, except 0, whose value is then
 * NaN). fn returns 0 to go on, anything else to stop (returned). */
int store_each_value(sd_store *s, int64_t job, int64_t after, int loss,
                     int (*fn)(void *, int64_t iter, double value, double t),
                     void *arg);
/* History for `slaq show`: reports and allocations (at most `max`, evenly
 * spread over iterations or epochs, first and last kept; O(max log n)),
 * events (thinned). New references. */
json_t *store_reports_json(sd_store *s, int64_t job, size_t max);
json_t *store_allocs_json(sd_store *s, int64_t job, size_t max);
json_t *store_events_json(sd_store *s, int64_t job, size_t max);
/* 1 if the job's events hold one of `kind` (e.g. "bye"), 0 if not, -1 if the
 * file cannot be read. */
int store_job_has_event(sd_store *s, int64_t job, const char *kind);
/* One page of a job's reports: rows [iter, loss, cpu_s, samples, t] with
 * iter > after, at most limit, in iteration order, costing O(limit) (an
 * index range); *next is the last iter when more follow, else -1. */
json_t *store_reports_page(sd_store *s, int64_t job, int64_t after,
                           size_t limit, int64_t *next);
const char *store_errmsg(sd_store *s);
/* Deletes a job and its reports, allocations and events. */
void store_delete_job(sd_store *s, int64_t job);
/* The highest job id ever given (kept when that job expires), 0 if none. */
int64_t store_last_id(sd_store *s);
void store_set_last_id(sd_store *s, int64_t id);
/* A task array's row (the arrays table), written again whole. */
void store_put_array(sd_store *s, const sd_array *a);
/* Calls fn for every stored array, oldest first; fn takes the array. */
int store_each_array(sd_store *s, int (*fn)(sd_daemon *, sd_array *),
                     sd_daemon *d);

/* ---------------------------------------------------- store_sweep.c */

/* Rows of the sweeps' tables. Strings are the caller's when writing, the
 * store's (valid during the callback) when read; NULL is SQL's NULL, and
 * so is a NaN number. */
typedef struct store_sweep_row {
    int64_t id;
    const char *name, *spec, *cwd, *state, *note;
    double created, ended, reached, best;
    int64_t reached_config, best_config;
    int64_t uid;          /* -1: NULL (a sweep of an older slaqd) */
    const char *user;
    const char *env;      /* the submitter's environment (JSON), or NULL */
} store_sweep_row;

typedef struct store_sweep_config {
    int64_t sweep, idx;
    const char *params, *cmd, *jobs; /* JSON */
    const char *state, *cls;         /* cls NULL: not classified */
    double p, best;
    int64_t epochs;
} store_sweep_config;

/* One call made to a sweep's policy (sweep_log). */
typedef struct store_sweep_call {
    int64_t seq;
    double t;
    const char *kind;     /* next, report, suspend, kill, ended */
    int64_t cfg, epoch;
    double metric, epoch_s;
} store_sweep_call;

/* One account or user of the shares between users (accounts.c), as the
 * shares table holds it (docs/state-db.md). */
typedef struct store_share_row {
    const char *name;
    int user;             /* 1: a user, 0: an account */
    const char *account;  /* the account it is under; NULL: the root */
    double weight;
    double max_cores;     /* INFINITY: no cap (NULL in the table) */
    int64_t max_jobs;     /* 0: no cap */
    double usage;         /* decayed core-seconds when written, at */
    double t;             /* this Unix time */
} store_share_row;

/* Writes (or rewrites) one row into the open transaction; -1 when it
 * fails (store_errmsg says why). */
int store_put_share(sd_store *s, const store_share_row *r);
/* Every row in name order (strings valid during the callback; a NULL
 * weight reads NAN); fn returns 0 to go on. */
int store_each_share(sd_store *s, int (*fn)(void *, const store_share_row *),
                     void *arg);

/* Writes go into the open transaction; -1 when one fails (store_errmsg
 * says why; the transaction goes on, as before the sweeps had a store). */
int store_put_sweep(sd_store *s, const store_sweep_row *w);
/* Whole configurations from `c`, n of them, with one statement. */
int store_put_sweep_configs(sd_store *s, const store_sweep_config *c,
                            size_t n);
int store_set_sweep_config_jobs(sd_store *s, int64_t sweep, int64_t idx,
                                const char *jobs);
int store_sweep_call_add(sd_store *s, int64_t sweep,
                         const store_sweep_call *c);
/* Deletes a sweep and its configurations. */
int store_delete_sweep(sd_store *s, int64_t sweep);
/* Configuration idx of a sweep as last written (params, cmd and jobs
 * NULL); 1 when found, 0 when not, -1 on error. The strings stay valid
 * until the next call. */
int store_get_sweep_config(sd_store *s, int64_t sweep, int64_t idx,
                           store_sweep_config *out);
/* Every sweep in id order; fn returns 0 to go on. */
int store_each_sweep(sd_store *s, int (*fn)(void *, const store_sweep_row *),
                     void *arg);
/* Each configuration's jobs (a JSON array) of a sweep. */
int store_each_sweep_jobs(sd_store *s, int64_t sweep,
                          int (*fn)(void *, int64_t idx, const char *jobs),
                          void *arg);
/* Every call to a sweep's policy, in order. */
int store_each_sweep_call(sd_store *s, int64_t sweep,
                          int (*fn)(void *, const store_sweep_call *),
                          void *arg);

/* ------------------------------------------------------ store_run.c */

/* A recorded run read back (slaq replay, slaq report): state.db opened
 * read-only. */
typedef struct store_run store_run;

/* A job's row; its strings live until the callback returns. */
typedef struct store_run_job {
    int64_t id;
    double weight, max_cores;  /* max_cores INFINITY: no cap */
    uint64_t max_iters;
    double started, ended;     /* 0: not yet */
    const char *convergence;   /* NULL: not declared */
    const char *name, *state;
    const char *user;          /* NULL: a job of a slaqd before owners */
    double submitted;
} store_run_job;

/* NULL with err filled ("PATH: why") when it cannot be opened. */
store_run *store_run_open(const char *path, char *err, size_t errlen);
void store_run_close(store_run *r);
/* The last error's text (SQLite's). */
const char *store_run_errmsg(store_run *r);
/* Whether the open file is slaqd's database with the tables and columns
 * a run is read from: 0, or -1 with err naming `path`, what it is (not
 * SQLite, an empty database, another program's, a table without a
 * column) and what was expected. */
int store_run_check(store_run *r, const char *path, char *err,
                    size_t errlen);
/* The callbacks return 0 to go on; anything else stops the walk and is
 * returned. -1 also when reading fails (store_run_errmsg). */
/* Jobs started at or after `since` (-INFINITY: all), in id order. */
int store_run_jobs(store_run *r, double since,
                   int (*fn)(void *, const store_run_job *), void *arg);
/* Every report, by job and iteration, with the threads and wall time it
 * said (0: not said, as in an older slaqd's database). */
int store_run_reports(store_run *r,
                      int (*fn)(void *, int64_t job, const slaq_report *,
                                double threads, double wall_s),
                      void *arg);
/* Events of a kind at or after `since`: slaqd's own (no job) when
 * `slaqd_only`, else all. */
int store_run_events(store_run *r, const char *kind, double since,
                     int slaqd_only,
                     int (*fn)(void *, double t, const char *detail),
                     void *arg);
/* Allocation changes at or after `since`, in epoch order. */
int store_run_allocs(store_run *r, double since,
                     int (*fn)(void *, int64_t job, uint64_t epoch,
                               double cores, double t),
                     void *arg);

#endif
