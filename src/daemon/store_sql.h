/*
 * store_sql.h — what the store's own files (store*.c) share beneath
 * store.h: the SQLite connection and the open transaction. No other file
 * includes it: state.db has one owner (store.h).
 */
#ifndef SLAQ_DAEMON_STORE_SQL_H
#define SLAQ_DAEMON_STORE_SQL_H

#include <math.h>
#include <sqlite3.h>

#include "daemon/store.h"

/* PRAGMA application_id of a slaq database: "slaq". */
#define STORE_APP_ID 0x736c6171

/* Statements store_sweep.c prepares (at first use) and store_close
 * finalizes. */
#define STORE_SWEEP_STMTS 12

/* Statements store_shares.c prepares (at first use) and store_close
 * finalizes. */
#define STORE_SHARE_STMTS 2

/* The store's connection. */
sqlite3 *store_sqlite(sd_store *s);
/* Begins the store's transaction if none is open (store_flush commits). */
void store_begin(sd_store *s);
/* store_sweep.c's STORE_SWEEP_STMTS prepared statements, NULL until
 * prepared. */
sqlite3_stmt **store_sweep_stmts(sd_store *s);
/* store_shares.c's STORE_SHARE_STMTS, the same way. */
sqlite3_stmt **store_share_stmts(sd_store *s);

/* Statement i of a file's table of statements (v its prepared ones,
 * sql their texts), prepared at its first use; NULL if it cannot be. */
static inline sqlite3_stmt *store_stmt(sd_store *s, sqlite3_stmt **v,
                                       const char *const *sql, int i)
{
    if (!v[i])
        sqlite3_prepare_v3(store_sqlite(s), sql[i], -1,
                           SQLITE_PREPARE_PERSISTENT, &v[i], NULL);
    return v[i];
}

/* Binds and reads that every store*.c file uses: NULL is SQL's NULL, and
 * so is a number that is not finite. */
static inline void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static inline void bind_str(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static inline double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? NAN : sqlite3_column_double(st, i);
}

static inline const char *col_str(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Runs a write statement once, inside the store's transaction: 0, or -1
 * when it failed. */
static inline int store_run_stmt(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Steps st to its end, calling each(st, fn, arg) on every row (fn is the
 * caller's callback, passed through) until one returns nonzero, which is
 * returned; -1 if a step failed. The caller then finalizes a one-off
 * statement or resets a prepared one. */
static inline int store_walk(sqlite3_stmt *st,
                             int (*each)(sqlite3_stmt *, const void *,
                                         void *),
                             const void *fn, void *arg)
{
    int rc = 0, step_rc = SQLITE_DONE;
    while (!rc && (step_rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = each(st, fn, arg);
    if (!rc && step_rc != SQLITE_DONE)
        rc = -1;
    return rc;
}

#endif
