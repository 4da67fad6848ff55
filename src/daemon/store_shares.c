/*
 * store_shares.c — the shares table of state.db: the accounts and users
 * the cores are divided between (accounts.c), with each one's decayed
 * usage, so that a restart of slaqd forgets neither (the table itself is
 * in store.c's schema).
 */
#include <math.h>

#include "daemon/store.h"
#include "daemon/store_sql.h"

enum { SH_PUT, SH_EACH, SH_N };

_Static_assert(SH_N <= STORE_SHARE_STMTS, "store_sql.h: STORE_SHARE_STMTS");

static const char *const sh_sql[SH_N] = {
    "INSERT OR REPLACE INTO shares(name, user, account, weight, max_cores, "
    "max_jobs, usage, t) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "SELECT name, user, account, weight, max_cores, max_jobs, usage, t "
    "FROM shares ORDER BY name",
};

static sqlite3_stmt *sh(sd_store *s, int i)
{
    return store_stmt(s, store_share_stmts(s), sh_sql, i);
}

int store_put_share(sd_store *s, const store_share_row *r)
{
    sqlite3_stmt *st = sh(s, SH_PUT);
    if (!st)
        return -1;
    store_begin(s);
    bind_str(st, 1, r->name);
    sqlite3_bind_int(st, 2, r->user ? 1 : 0);
    bind_str(st, 3, r->account);
    bind_num(st, 4, r->weight);
    bind_num(st, 5, r->max_cores);
    sqlite3_bind_int64(st, 6, r->max_jobs);
    bind_num(st, 7, r->usage);
    bind_num(st, 8, r->t);
    return store_run_stmt(st);
}

int store_each_share(sd_store *s, int (*fn)(void *, const store_share_row *),
                     void *arg)
{
    sqlite3_stmt *st = sh(s, SH_EACH);
    if (!st)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        double mc = col_num(st, 4);
        store_share_row r = {
            .name = col_str(st, 0),
            .user = sqlite3_column_int(st, 1),
            .account = col_str(st, 2),
            .weight = col_num(st, 3),
            .max_cores = isnan(mc) ? INFINITY : mc,
            .max_jobs = sqlite3_column_int64(st, 5),
            .usage = col_num(st, 6),
            .t = col_num(st, 7),
        };
        rc = r.name ? fn(arg, &r) : 0;
    }
    if (!rc && step != SQLITE_DONE)
        rc = -1;
    sqlite3_reset(st);
    return rc;
}
