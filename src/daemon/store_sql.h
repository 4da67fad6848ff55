/*
 * store_sql.h — what the store's own files (store*.c) share beneath
 * store.h: the SQLite connection and the open transaction. No other file
 * includes it: state.db has one owner (store.h).
 */
#ifndef SLAQ_DAEMON_STORE_SQL_H
#define SLAQ_DAEMON_STORE_SQL_H

#include <sqlite3.h>

#include "daemon/store.h"

/* Statements store_sweep.c prepares (at first use) and store_close
 * finalizes. */
#define STORE_SWEEP_STMTS 12

/* The store's connection. */
sqlite3 *store_sqlite(sd_store *s);
/* Begins the store's transaction if none is open (store_flush commits). */
void store_begin(sd_store *s);
/* store_sweep.c's STORE_SWEEP_STMTS prepared statements, NULL until
 * prepared. */
sqlite3_stmt **store_sweep_stmts(sd_store *s);

#endif
