/*
 * store_sweep.c — the sweeps' tables of state.db (sweepd.c's state): the
 * sweeps (spec and outcome), their configurations (sweep_configs) and
 * every call made to their policies (sweep_log), from which sweepd.c
 * rebuilds a policy after a restart.
 *
 * Writes go into the store's open transaction. A failed one is logged by
 * the caller and leaves the transaction as it was: a sweep's rows are
 * written again at its next change (the tables themselves are in store.c's
 * schema).
 */
#include <math.h>
#include <stdio.h>

#include "daemon/store.h"
#include "daemon/store_sql.h"

enum { SW_PUT, SW_CFG_PUT, SW_CFG_JOBS, SW_CALL, SW_DEL_CFGS, SW_DEL,
       SW_CFG_GET, SW_EACH, SW_EACH_JOBS, SW_EACH_CALL, SW_N };

_Static_assert(SW_N <= STORE_SWEEP_STMTS, "store_sql.h: STORE_SWEEP_STMTS");

static const char *const sw_sql[SW_N] = {
    "INSERT OR REPLACE INTO sweeps(id, name, spec, cwd, state, note, "
    "created, ended, reached, reached_config, best, best_config, uid, user, "
    "env) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "INSERT OR REPLACE INTO sweep_configs(sweep, idx, params, cmd, jobs, "
    "state, class, p, epochs, best) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "UPDATE sweep_configs SET jobs = ? WHERE sweep = ? AND idx = ?",
    "INSERT INTO sweep_log(sweep, seq, t, kind, cfg, epoch, metric, "
    "epoch_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "DELETE FROM sweep_configs WHERE sweep = ?",
    "DELETE FROM sweeps WHERE id = ?",
    "SELECT state, class, p, epochs, best FROM sweep_configs WHERE sweep = ? "
    "AND idx = ?",
    "SELECT id, name, spec, cwd, state, note, created, ended, reached, "
    "reached_config, best, best_config, uid, user, env FROM sweeps ORDER BY "
    "id",
    "SELECT idx, jobs FROM sweep_configs WHERE sweep = ?",
    "SELECT seq, t, kind, cfg, epoch, metric, epoch_s FROM sweep_log WHERE "
    "sweep = ? ORDER BY seq",
};

static sqlite3_stmt *sw(sd_store *s, int i)
{
    return store_stmt(s, store_sweep_stmts(s), sw_sql, i);
}

/* Statement i for a write, the transaction begun; NULL if it cannot be
 * prepared. */
static sqlite3_stmt *writer(sd_store *s, int i)
{
    sqlite3_stmt *st = sw(s, i);
    if (st)
        store_begin(s);
    return st;
}

int store_put_sweep(sd_store *s, const store_sweep_row *w)
{
    sqlite3_stmt *st = writer(s, SW_PUT);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, w->id);
    bind_str(st, 2, w->name);
    bind_str(st, 3, w->spec);
    bind_str(st, 4, w->cwd);
    bind_str(st, 5, w->state);
    bind_str(st, 6, w->note);
    bind_num(st, 7, w->created);
    bind_num(st, 8, w->ended);
    bind_num(st, 9, w->reached);
    sqlite3_bind_int64(st, 10, w->reached_config);
    bind_num(st, 11, w->best);
    sqlite3_bind_int64(st, 12, w->best_config);
    if (w->uid >= 0)
        sqlite3_bind_int64(st, 13, w->uid);
    bind_str(st, 14, w->user);
    bind_str(st, 15, w->env);
    return store_run_stmt(st);
}

int store_put_sweep_configs(sd_store *s, const store_sweep_config *c,
                            size_t n)
{
    sqlite3_stmt *st = writer(s, SW_CFG_PUT);
    if (!st)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, c[i].sweep);
        sqlite3_bind_int64(st, 2, c[i].idx);
        bind_str(st, 3, c[i].params);
        bind_str(st, 4, c[i].cmd);
        bind_str(st, 5, c[i].jobs);
        bind_str(st, 6, c[i].state);
        bind_str(st, 7, c[i].cls);
        bind_num(st, 8, c[i].p);
        sqlite3_bind_int64(st, 9, c[i].epochs);
        bind_num(st, 10, c[i].best);
        rc |= store_run_stmt(st);
    }
    return rc;
}

int store_set_sweep_config_jobs(sd_store *s, int64_t sweep, int64_t idx,
                                const char *jobs)
{
    sqlite3_stmt *st = writer(s, SW_CFG_JOBS);
    if (!st)
        return -1;
    bind_str(st, 1, jobs);
    sqlite3_bind_int64(st, 2, sweep);
    sqlite3_bind_int64(st, 3, idx);
    return store_run_stmt(st);
}

int store_sweep_call_add(sd_store *s, int64_t sweep,
                         const store_sweep_call *c)
{
    sqlite3_stmt *st = writer(s, SW_CALL);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, sweep);
    sqlite3_bind_int64(st, 2, c->seq);
    bind_num(st, 3, c->t);
    bind_str(st, 4, c->kind);
    sqlite3_bind_int64(st, 5, c->cfg);
    sqlite3_bind_int64(st, 6, c->epoch);
    bind_num(st, 7, c->metric);
    bind_num(st, 8, c->epoch_s);
    return store_run_stmt(st);
}

int store_delete_sweep(sd_store *s, int64_t sweep)
{
    int rc = 0;
    for (int i = SW_DEL_CFGS; i <= SW_DEL; i++) {
        sqlite3_stmt *st = writer(s, i);
        if (!st)
            return -1;
        sqlite3_bind_int64(st, 1, sweep);
        rc |= store_run_stmt(st);
    }
    return rc;
}

int store_get_sweep_config(sd_store *s, int64_t sweep, int64_t idx,
                           store_sweep_config *out)
{
    static char state[32], cls[32];
    sqlite3_stmt *st = sw(s, SW_CFG_GET);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, sweep);
    sqlite3_bind_int64(st, 2, idx);
    int rc = sqlite3_step(st);
    *out = (store_sweep_config){.sweep = sweep, .idx = idx};
    if (rc == SQLITE_ROW) {
        const char *sn = col_str(st, 0), *cn = col_str(st, 1);
        snprintf(state, sizeof state, "%s", sn ? sn : "");
        snprintf(cls, sizeof cls, "%s", cn ? cn : "");
        out->state = sn ? state : NULL;
        out->cls = cn ? cls : NULL;
        out->p = col_num(st, 2);
        out->epochs = sqlite3_column_int64(st, 3);
        out->best = col_num(st, 4);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* The caller's callback of a walk, one of the store's kinds. */
typedef union any_fn {
    int (*sweep)(void *, const store_sweep_row *);
    int (*jobs)(void *, int64_t, const char *);
    int (*call)(void *, const store_sweep_call *);
} any_fn;

/* store_walk over st with fn, then resets st and its bindings
 * (a prepared statement, used again). */
static int walk(sqlite3_stmt *st,
                int (*each)(sqlite3_stmt *, const void *, void *),
                any_fn fn, void *arg)
{
    int rc = store_walk(st, each, &fn, arg);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}


static int each_sweep(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    store_sweep_row w = {
        .id = sqlite3_column_int64(st, 0),
        .name = col_str(st, 1), .spec = col_str(st, 2),
        .cwd = col_str(st, 3), .state = col_str(st, 4),
        .note = col_str(st, 5),
        .created = col_num(st, 6), .ended = col_num(st, 7),
        .reached = col_num(st, 8),
        .reached_config = sqlite3_column_int64(st, 9),
        .best = col_num(st, 10),
        .best_config = sqlite3_column_int64(st, 11),
        .uid = sqlite3_column_type(st, 12) == SQLITE_NULL
                   ? -1 : sqlite3_column_int64(st, 12),
        .user = col_str(st, 13),
        .env = col_str(st, 14),
    };
    return fn->sweep(arg, &w);
}

static int each_jobs(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    return fn->jobs(arg, sqlite3_column_int64(st, 0), col_str(st, 1));
}

static int each_call(sqlite3_stmt *st, const void *f, void *arg)
{
    const any_fn *fn = f;
    store_sweep_call c = {
        .seq = sqlite3_column_int64(st, 0), .t = col_num(st, 1),
        .kind = col_str(st, 2), .cfg = sqlite3_column_int64(st, 3),
        .epoch = sqlite3_column_int64(st, 4), .metric = col_num(st, 5),
        .epoch_s = col_num(st, 6),
    };
    return fn->call(arg, &c);
}

int store_each_sweep(sd_store *s, int (*fn)(void *, const store_sweep_row *),
                     void *arg)
{
    sqlite3_stmt *st = sw(s, SW_EACH);
    return st ? walk(st, each_sweep, (any_fn){.sweep = fn}, arg) : -1;
}

int store_each_sweep_jobs(sd_store *s, int64_t sweep,
                          int (*fn)(void *, int64_t idx, const char *jobs),
                          void *arg)
{
    sqlite3_stmt *st = sw(s, SW_EACH_JOBS);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, sweep);
    return walk(st, each_jobs, (any_fn){.jobs = fn}, arg);
}

int store_each_sweep_call(sd_store *s, int64_t sweep,
                          int (*fn)(void *, const store_sweep_call *),
                          void *arg)
{
    sqlite3_stmt *st = sw(s, SW_EACH_CALL);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, sweep);
    return walk(st, each_call, (any_fn){.call = fn}, arg);
}
