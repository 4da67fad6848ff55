/*
 * store_run.c — a recorded slaqd run read back from state.db, read-only,
 * for slaq replay (src/cli/replay.c): the jobs, their reports, the
 * allocation changes and slaqd's events. It is linked into the slaq
 * command as well as slaqd, and needs nothing of slaqd's but state.db.
 *
 * Also what slaq report (src/cli/cmd_report.c) reads to measure a run:
 * the jobs' names, owners, states and times, and store_run_check's
 * verdict on whether the file is slaqd's at all.
 *
 * A database of an older slaqd lacks some columns (a job's convergence
 * class, its user): they read as NULL.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/store.h"
#include "daemon/store_sql.h"

struct store_run {
    sqlite3 *db;
};

store_run *store_run_open(const char *path, char *err, size_t errlen)
{
    store_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL)
        != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, r->db ? sqlite3_errmsg(r->db)
                                                     : "cannot open");
        store_run_close(r);
        return NULL;
    }
    return r;
}

void store_run_close(store_run *r)
{
    if (!r)
        return;
    sqlite3_close(r->db);
    free(r);
}

const char *store_run_errmsg(store_run *r) { return sqlite3_errmsg(r->db); }

/* One integer from a one-row query (bound to text `a` and `b` when not
 * NULL): 0 with *v, or -1 when the query fails. */
static int query_int(sqlite3 *db, const char *sql, const char *a,
                     const char *b, sqlite3_int64 *v)
{
    sqlite3_stmt *st;
    *v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (a)
        sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    if (b)
        sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Whether table t has column c: 1, 0, or -1 when that cannot be read. */
static int has_column(sqlite3 *db, const char *t, const char *c)
{
    sqlite3_int64 n;
    if (query_int(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE "
                  "name = ?2", t, c, &n) < 0)
        return -1;
    return n > 0;
}

#define EXPECTED "expected slaqd's state.db (docs/state-db.md)"

int store_run_check(store_run *r, const char *path, char *err,
                    size_t errlen)
{
    /* What a report reads; any slaqd's database has them. */
    static const char *const need[][2] = {
        {"jobs", "id"}, {"jobs", "name"}, {"jobs", "state"},
        {"jobs", "submitted"}, {"jobs", "ended"}, {"jobs", "max_cores"},
        {"reports", "job"}, {"reports", "iter"}, {"reports", "loss"},
        {"reports", "cpu_s"}, {"reports", "t"}, {"allocs", "job"},
        {"allocs", "t"}, {"allocs", "cores"}, {"allocs", "epoch"},
    };
    sqlite3_int64 app, ours, tables;
    if (query_int(r->db, "PRAGMA application_id", NULL, NULL, &app) < 0) {
        int rc = sqlite3_errcode(r->db);
        snprintf(err, errlen, rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT
                 ? "%s is not an SQLite database (%s); " EXPECTED
                 : "%s: cannot read it (%s)", path, sqlite3_errmsg(r->db));
        return -1;
    }
    if (query_int(r->db, "SELECT count(*) FROM sqlite_master WHERE type = "
                  "'table' AND name IN ('jobs', 'reports')", NULL, NULL,
                  &ours) < 0 ||
        query_int(r->db, "SELECT count(*) FROM sqlite_master WHERE type = "
                  "'table'", NULL, NULL, &tables) < 0) {
        snprintf(err, errlen, "%s: cannot read its tables (%s)", path,
                 sqlite3_errmsg(r->db));
        return -1;
    }
    /* slaqd's mark, or (written before slaqd set it) its two tables */
    if (app != STORE_APP_ID && !(app == 0 && ours == 2)) {
        if (app == 0 && tables == 0)
            snprintf(err, errlen, "%s is an empty database (no tables); "
                     EXPECTED, path);
        else
            snprintf(err, errlen, "%s is a database of another program "
                     "(application_id %lld, %lld tables, not slaqd's jobs "
                     "and reports); " EXPECTED, path, (long long)app,
                     (long long)tables);
        return -1;
    }
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        int has = has_column(r->db, need[i][0], need[i][1]);
        if (has < 0) {
            snprintf(err, errlen, "%s: cannot read table %s (%s)", path,
                     need[i][0], sqlite3_errmsg(r->db));
            return -1;
        }
        if (!has) {
            snprintf(err, errlen, "%s: table %s has no column %s; "
                     EXPECTED, path, need[i][0], need[i][1]);
            return -1;
        }
    }
    return 0;
}

/* The caller's callback of a walk, one of the reader's kinds. */
typedef union any_fn {
    int (*job)(void *, const store_run_job *);
    int (*report)(void *, int64_t, const slaq_report *, double, double);
    int (*event)(void *, double, const char *);
    int (*alloc)(void *, int64_t, uint64_t, double, double);
} any_fn;

/* store_walk over st with fn, then finalizes st (a one-off
 * statement). */
static int walk(sqlite3_stmt *st,
                int (*each)(sqlite3_stmt *, const void *, void *),
                any_fn fn, void *arg)
{
    int rc = store_walk(st, each, &fn, arg);
    sqlite3_finalize(st);
    return rc;
}


static int each_job(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    store_run_job j = {
        .id = sqlite3_column_int64(st, 0),
        .weight = sqlite3_column_double(st, 1),
        .max_cores = sqlite3_column_type(st, 2) == SQLITE_NULL
                         ? INFINITY : sqlite3_column_double(st, 2),
        .max_iters = (uint64_t)sqlite3_column_int64(st, 3),
        .started = sqlite3_column_double(st, 4),
        .ended = sqlite3_column_double(st, 5),
        .convergence = (const char *)sqlite3_column_text(st, 6),
        .name = (const char *)sqlite3_column_text(st, 7),
        .user = (const char *)sqlite3_column_text(st, 8),
        .state = (const char *)sqlite3_column_text(st, 9),
        .submitted = sqlite3_column_double(st, 10),
    };
    return fn->job(arg, &j);
}

int store_run_jobs(store_run *r, double since,
                   int (*fn)(void *, const store_run_job *), void *arg)
{
    sqlite3_stmt *st;
    int has_conv = has_column(r->db, "jobs", "convergence");
    int has_user = has_column(r->db, "jobs", "user");
    if (has_conv < 0 || has_user < 0)
        return -1;
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT id, weight, max_cores, max_iters, "
             "started, ended, %s, name, %s, state, submitted FROM jobs "
             "WHERE started >= ? ORDER BY id",
             has_conv ? "convergence" : "NULL", has_user ? "user" : "NULL");
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_double(st, 1, since);
    return walk(st, each_job, (any_fn){.job = fn}, arg);
}

static int each_report(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    slaq_report rep = {
        .iter = (uint64_t)sqlite3_column_int64(st, 1),
        .loss = sqlite3_column_double(st, 2),
        .cpu_s = sqlite3_column_double(st, 3),
        .samples = sqlite3_column_double(st, 4),
        .t = sqlite3_column_double(st, 5),
    };
    return fn->report(arg, sqlite3_column_int64(st, 0), &rep,
                      sqlite3_column_double(st, 6),
                      sqlite3_column_double(st, 7));
}

int store_run_reports(store_run *r,
                      int (*fn)(void *, int64_t job, const slaq_report *,
                                double threads, double wall_s),
                      void *arg)
{
    sqlite3_stmt *st;
    /* The threads and wall time a report said: what slaqd's scaling
     * models learnt from (a state.db of an older slaqd has none). */
    int has_how = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM "
                           "pragma_table_info('reports') WHERE name = "
                           "'threads'", -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        has_how = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(r->db, has_how
            ? "SELECT job, iter, loss, cpu_s, samples, t, "
              "coalesce(threads, 0), coalesce(wall_s, 0) FROM reports "
              "ORDER BY job, iter"
            : "SELECT job, iter, loss, cpu_s, samples, t, 0, 0 FROM reports "
              "ORDER BY job, iter", -1, &st, NULL) != SQLITE_OK)
        return -1;
    return walk(st, each_report, (any_fn){.report = fn}, arg);
}

static int each_event(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    return fn->event(arg, sqlite3_column_double(st, 0),
                          (const char *)sqlite3_column_text(st, 1));
}

int store_run_events(store_run *r, const char *kind, double since,
                     int slaqd_only,
                     int (*fn)(void *, double t, const char *detail),
                     void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, slaqd_only
            ? "SELECT t, detail FROM events WHERE job IS NULL AND kind = ?1 "
              "AND t >= ?2"
            : "SELECT t, detail FROM events WHERE kind = ?1 AND t >= ?2",
            -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, since);
    return walk(st, each_event, (any_fn){.event = fn}, arg);
}

static int each_alloc(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    return fn->alloc(arg, sqlite3_column_int64(st, 0),
                          (uint64_t)sqlite3_column_int64(st, 1),
                          sqlite3_column_double(st, 2),
                          sqlite3_column_double(st, 3));
}

int store_run_allocs(store_run *r, double since,
                     int (*fn)(void *, int64_t job, uint64_t epoch,
                               double cores, double t),
                     void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT job, epoch, cores, t FROM allocs "
                           "WHERE t >= ? ORDER BY epoch", -1, &st, NULL)
        != SQLITE_OK)
        return -1;
    sqlite3_bind_double(st, 1, since);
    return walk(st, each_alloc, (any_fn){.alloc = fn}, arg);
}
