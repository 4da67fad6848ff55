/*
 * store.c — slaqd's persistent state in SQLite: jobs, every iteration
 * report, allocation changes and events.
 *
 * The database runs in WAL mode with synchronous=NORMAL: a committed
 * transaction survives a crash of slaqd (kill -9), though not necessarily
 * a power loss. Writes go into one open transaction that the loop commits
 * every tick (SD_TICK_S) and at once after a job changes state, so the
 * per-report cost is one prepared INSERT and at most SD_TICK_S of reports
 * can be lost with slaqd. A failed write is never fatal: the transaction
 * is rolled back, the store is "failing" (visible in status and /metrics,
 * logged once per burst), and what memory holds — every job and the
 * reports since the last good commit — is written again each second until
 * a commit succeeds (store_flush).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"

enum { ST_BEGIN, ST_COMMIT, ST_REPORT, ST_ALLOC, ST_EVENT, ST_JOB,
       ST_DEL_JOB, ST_DEL_REPORTS, ST_DEL_ALLOCS, ST_DEL_EVENTS, ST_SET_META,
       ST_N };

static const char *const sql_text[ST_N] = {
    "BEGIN",
    "COMMIT",
    "INSERT OR REPLACE INTO reports(job, iter, loss, cpu_s, samples, t, "
    "metric, estimates, threads, wall_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?)",
    "INSERT OR REPLACE INTO allocs(job, t, cores, epoch) VALUES (?, ?, ?, ?)",
    "INSERT INTO events(t, job, kind, detail) VALUES (?, ?, ?, ?)",
    "INSERT OR REPLACE INTO jobs(id, name, cmd, cwd, weight, max_cores, "
    "target, max_iters, max_time, managed, state, pid, pstart, exit_status, "
    "reason, submitted, started, ended, secret, convergence, metric_name, "
    "suspended, continued_by, resumed_from, sweep, node, restartable, pin, "
    "launch, kind, uid, user, gen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "DELETE FROM jobs WHERE id = ?",
    "DELETE FROM reports WHERE job = ?",
    "DELETE FROM allocs WHERE job = ?",
    "DELETE FROM events WHERE job = ?",
    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
};

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA application_id=1936482673;" /* STORE_APP_ID, "slaq" */
    "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY, name TEXT, "
    " cmd TEXT, cwd TEXT, weight REAL, max_cores REAL, target REAL, "
    " max_iters INTEGER, max_time REAL, managed INTEGER, state TEXT, "
    " pid INTEGER, pstart INTEGER, exit_status INTEGER, reason TEXT, "
    " submitted REAL, started REAL, ended REAL, secret TEXT, "
    " metric_name TEXT, suspended INTEGER, continued_by INTEGER, "
    " resumed_from INTEGER, sweep INTEGER, node TEXT, restartable INTEGER, "
    " pin TEXT, launch TEXT, kind TEXT, uid INTEGER, user TEXT, gen INTEGER);"
    "CREATE TABLE IF NOT EXISTS reports(job INTEGER, iter INTEGER, loss REAL,"
    " cpu_s REAL, samples REAL, t REAL, metric REAL, estimates TEXT,"
    " PRIMARY KEY(job, iter))"
    " WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS allocs(job INTEGER, t REAL, cores REAL, "
    " epoch INTEGER, PRIMARY KEY(job, epoch)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS events(t REAL, job INTEGER, kind TEXT, "
    " detail TEXT);"
    "CREATE INDEX IF NOT EXISTS events_job ON events(job, t);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER);";

struct sd_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    int in_txn;
    uint64_t failures;    /* failed statements and commits */
    int broken;           /* a write failed in the open transaction */
    int failing;          /* the last commit failed: writes are retried */
    double retry_at;      /* monotonic: next attempt while failing */
    char error[256];      /* the last failure */
    /* Reports written since the last good commit, kept to be written
     * again if it fails (bounded: beyond SD_STORE_PENDING the oldest are
     * lost and counted). */
    struct pending { int64_t job; slaq_report r; double metric;
                     char *vec; /* owned; NULL: not a query's */
                     double threads, wall_s; } *pend;
    size_t npend, cappend;
    uint64_t lost;
    /* The ledger (see ledger_write): per job, the reports held in memory
     * (agg, mirroring pend), and those a previous slaqd held when it
     * stopped (old), lost unless found in the database. */
    int ledger_fd;        /* -1: no ledger */
    struct lost_ent { int64_t job; uint64_t n; int64_t first, last;
                      int settled; } *agg, *old;
    size_t nagg, capagg, nold;
    int ledger_dirty;     /* the file differs from memory */
    int ledger_held;      /* the file lists held reports (agg) */
    uint64_t lost_base;   /* reports_lost of the meta table at open */
    uint64_t lost_settled;/* old reports found lost in this run */
    uint64_t lost_saved;  /* lost + lost_settled last committed */
    int retrying;         /* inside the rewrite after a failure */
    void (*rewrite)(void *);  /* puts every job again after a failure */
    void *rewrite_arg;
};

/* PRAGMA application_id of a slaq database: "slaq". */
#define STORE_APP_ID 0x736c6171

/* One integer from a one-row query, or -1 if it fails. */
static sqlite3_int64 query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/*
 * Decides whether the open file may be used: 0, or -1 with err filled.
 * Ours: application_id "slaq", or (written before it was set) tables jobs
 * and reports. An SQLite file without tables is set up only with init.
 */
static int check_owner(sqlite3 *db, const char *path, int init, char *err,
                       size_t errlen)
{
    sqlite3_int64 app = query_int(db, "PRAGMA application_id");
    if (app < 0) {
        snprintf(err, errlen, "%s is not an SQLite database (%s); slaqd does "
                 "not overwrite it: move it away or choose another "
                 "--state-dir", path, sqlite3_errmsg(db));
        return -1;
    }
    if (app == STORE_APP_ID)
        return 0;
    sqlite3_int64 ours = query_int(db, "SELECT count(*) FROM sqlite_master "
                                       "WHERE type = 'table' AND name IN "
                                       "('jobs', 'reports')");
    sqlite3_int64 tables = query_int(db, "SELECT count(*) FROM "
                                         "sqlite_master");
    if (app == 0 && ours == 2)
        return 0;
    if (app == 0 && tables == 0) {
        if (init)
            return 0;
        snprintf(err, errlen, "%s is an empty database: the jobs it held are "
                 "gone (or it is not slaqd's); start slaqd with --init to "
                 "begin anew with job ids from 1", path);
        return -1;
    }
    snprintf(err, errlen, "%s is a database of another program "
             "(application_id %lld, %lld tables); slaqd does not write into "
             "it: move it away or choose another --state-dir", path,
             (long long)app, (long long)tables);
    return -1;
}

static void ledger_open(sd_store *s, const char *path);
static void ledger_settle(sd_store *s, int64_t job);

sd_store *store_open(const char *path, int init, char *err, size_t errlen)
{
    sd_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->ledger_fd = -1;
    char *msg = NULL;
    struct stat st;
    int fresh = stat(path, &st) < 0 && errno == ENOENT;
    if (!fresh && st.st_size == 0 && !init) {
        snprintf(err, errlen, "%s is empty (0 bytes): the jobs it held are "
                 "gone (or it is not slaqd's); start slaqd with --init to "
                 "begin anew with job ids from 1", path);
        goto fail;
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
                        SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL)) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
        goto fail;
    }
    if (check_owner(s->db, path, init || fresh, err, errlen) < 0)
        goto fail;
    if (sqlite3_exec(s->db, schema, NULL, NULL, &msg)) {
        snprintf(err, errlen, "%s: %s", path,
                 msg ? msg : sqlite3_errmsg(s->db));
        goto fail;
    }
    /* A database from an older slaqd gains the columns added since:
     * jobs' secrets, then metrics (jobs.metric_name, reports.metric). */
    static const char *const added[][3] = {
        {"jobs", "secret", "TEXT"},
        {"jobs", "metric_name", "TEXT"},
        {"reports", "metric", "REAL"},
        {"jobs", "suspended", "INTEGER"},
        {"jobs", "continued_by", "INTEGER"},
        {"jobs", "resumed_from", "INTEGER"},
        {"jobs", "sweep", "INTEGER"},
        /* the declared convergence class (slaq submit --convergence) */
        {"jobs", "convergence", "TEXT"},
        /* the cluster's (docs/cluster.md) */
        {"jobs", "node", "TEXT"},
        {"jobs", "restartable", "INTEGER"},
        {"jobs", "pin", "TEXT"},
        {"jobs", "launch", "TEXT"},
        /* approximate queries (docs/relaqs.md): the job's declared kind
         * (NULL: an ML job) and each mini-batch's estimates and bounds */
        {"jobs", "kind", "TEXT"},
        {"reports", "estimates", "TEXT"},
        /* the job's owner, whose uid it runs as (NULL: a job of an older
         * slaqd, which ran as slaqd's own user: store_each_job) */
        {"jobs", "uid", "INTEGER"},
        {"jobs", "user", "TEXT"},
        /* a cluster job's generation: which start of it is current */
        {"jobs", "gen", "INTEGER"},
        /* how a report's iterations ran (NULL: not said): what the job's
         * scaling model learnt from, for `slaq replay` */
        {"reports", "threads", "REAL"},
        {"reports", "wall_s", "REAL"},
    };
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
        char q[256];
        snprintf(q, sizeof q, "SELECT count(*) FROM pragma_table_info('%s') "
                 "WHERE name = '%s'", added[i][0], added[i][1]);
        if (query_int(s->db, q) != 0)
            continue;
        snprintf(q, sizeof q, "ALTER TABLE %s ADD COLUMN %s %s", added[i][0],
                 added[i][1], added[i][2]);
        if (sqlite3_exec(s->db, q, NULL, NULL, &msg)) {
            snprintf(err, errlen, "%s: %s", path, msg ? msg : "?");
            goto fail;
        }
    }
    /* Files an older slaqd created with a looser mode. */
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char f[4200];
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        if (chmod(f, 0600) < 0 && errno != ENOENT) {
            snprintf(err, errlen, "%s: %s", f, strerror(errno));
            goto fail;
        }
    }
    sqlite3_busy_timeout(s->db, 2000);
    for (int i = 0; i < ST_N; i++)
        if (sqlite3_prepare_v3(s->db, sql_text[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL)) {
            snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
            goto fail;
        }
    sqlite3_int64 lost = query_int(s->db, "SELECT value FROM meta WHERE key "
                                          "= 'reports_lost'");
    s->lost_base = lost > 0 ? (uint64_t)lost : 0;
    ledger_open(s, path);
    /* Jobs of the ledger that have ended already are settled now. */
    for (size_t i = 0; i < s->nold; i++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT count(*) FROM jobs WHERE id = %lld AND "
                 "state IN ('running', 'stopping', 'pending')",
                 (long long)s->old[i].job);
        if (query_int(s->db, q) == 0)
            ledger_settle(s, s->old[i].job);
    }
    return s;
fail:
    sqlite3_free(msg);
    store_close(s);
    return NULL;
}

/* ------------------------------------------------------------- ledger */

/*
 * Reports held in memory while the database refuses writes (disk full)
 * are gone if slaqd is then killed, and with them any trace of how many
 * there were: the database is what cannot be written. So while writes
 * fail, slaqd keeps a ledger of them per job — job, count, first and last
 * iteration — in a small file next to the database, written in place
 * into blocks allocated when slaqd started (a full disk does not refuse
 * that). The next slaqd reads it: once a job listed there has ended, the
 * reports of its listed iterations missing from the database are counted
 * in reports_lost_total (kept in the meta table) and told in an event of
 * the job ("lost", shown by slaq show). A job that is still running may
 * send them again first (its client resends what was not acknowledged).
 */
#define LEDGER_SIZE 65536
#define LEDGER_MAGIC "SLAQLOST"
#define LEDGER_MAX ((LEDGER_SIZE - 16) / 32)

static struct lost_ent *ent_find(struct lost_ent *v, size_t n, int64_t job)
{
    for (size_t i = n; i-- > 0;) /* the latest job is likeliest */
        if (v[i].job == job)
            return &v[i];
    return NULL;
}

/* Counts one more report of `job` (iteration iter) in the aggregate. */
static void agg_add(sd_store *s, int64_t job, int64_t iter)
{
    struct lost_ent *e = ent_find(s->agg, s->nagg, job);
    if (!e) {
        if (s->nagg == s->capagg) {
            size_t cap = s->capagg ? s->capagg * 2 : 16;
            struct lost_ent *v = realloc(s->agg, cap * sizeof *v);
            if (!v)
                return; /* not counted: memory is out anyway */
            s->agg = v;
            s->capagg = cap;
        }
        e = &s->agg[s->nagg++];
        *e = (struct lost_ent){job, 0, iter, iter, 0};
    }
    e->n++;
    e->last = iter;
    s->ledger_dirty |= s->failing;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Writes the old entries not yet committed as settled, and the held
 * reports, over the ledger's preallocated blocks (the header and the
 * entries only: what lies beyond its count is not read). */
static void ledger_write(sd_store *s)
{
    static unsigned char buf[LEDGER_SIZE];
    if (s->ledger_fd < 0)
        return;
    memcpy(buf, LEDGER_MAGIC, 8);
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        struct lost_ent *v = pass ? s->agg : s->old;
        size_t nv = pass ? s->nagg : s->nold;
        for (size_t i = 0; i < nv && n < LEDGER_MAX; i++) {
            unsigned char *p = buf + 16 + 32 * n++;
            put_u64(p, (uint64_t)v[i].job);
            put_u64(p + 8, v[i].n);
            put_u64(p + 16, (uint64_t)v[i].first);
            put_u64(p + 24, (uint64_t)v[i].last);
        }
    }
    put_u64(buf + 8, n);
    size_t len = 16 + 32 * n;
    if (pwrite(s->ledger_fd, buf, len, 0) == (ssize_t)len) {
        s->ledger_dirty = 0;
        s->ledger_held = s->nagg > 0;
    }
}

/* Opens the ledger next to the database at `path`, reads what a previous
 * slaqd left in it, and makes sure its blocks are allocated. Without a
 * ledger (it cannot be created) slaqd runs as before. */
static void ledger_open(sd_store *s, const char *path)
{
    char lp[4200];
    static unsigned char buf[LEDGER_SIZE];
    snprintf(lp, sizeof lp, "%s-lost", path);
    s->ledger_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->ledger_fd < 0)
        return;
    ssize_t got = pread(s->ledger_fd, buf, sizeof buf, 0);
    if (got == (ssize_t)sizeof buf && !memcmp(buf, LEDGER_MAGIC, 8)) {
        uint64_t n = get_u64(buf + 8);
        n = n > LEDGER_MAX ? LEDGER_MAX : n;
        s->old = calloc(n ? n : 1, sizeof *s->old);
        for (uint64_t i = 0; s->old && i < n; i++) {
            const unsigned char *p = buf + 16 + 32 * i;
            s->old[s->nold++] = (struct lost_ent){
                (int64_t)get_u64(p), get_u64(p + 8),
                (int64_t)get_u64(p + 16), (int64_t)get_u64(p + 24), 0};
        }
        return; /* full size already: its blocks are there */
    }
    memset(buf, 0, sizeof buf);
    memcpy(buf, LEDGER_MAGIC, 8);
    if (pwrite(s->ledger_fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf ||
        fsync(s->ledger_fd) < 0) {
        close(s->ledger_fd);
        s->ledger_fd = -1;
    }
}

/* The event of a settled entry that lost reports. */
static void settled_event(sd_store *s, const struct lost_ent *e)
{
    if (e->n == 0)
        return;
    char detail[256];
    snprintf(detail, sizeof detail, "%llu reports accepted while the "
             "database could not be written (iterations %lld to %lld) were "
             "lost when slaqd stopped", (unsigned long long)e->n,
             (long long)e->first, (long long)e->last);
    store_event(s, sd_now(), e->job, "lost", detail);
}

/* The old entry of job `job`, if any, is settled: its iterations missing
 * from the database are lost, counted and told in an event. Committed
 * with the next commit; dropped from the ledger after it. */
static void ledger_settle(sd_store *s, int64_t job)
{
    struct lost_ent *e = ent_find(s->old, s->nold, job);
    if (!e || e->settled)
        return;
    sqlite3_stmt *st;
    sqlite3_int64 have = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM reports WHERE job = "
                           "? AND iter BETWEEN ? AND ?", -1, &st, NULL)
        != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, e->first);
    sqlite3_bind_int64(st, 3, e->last);
    if (sqlite3_step(st) == SQLITE_ROW)
        have = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    e->settled = 1;
    e->n = e->n > (uint64_t)have ? e->n - (uint64_t)have : 0;
    s->lost_settled += e->n;
    settled_event(s, e);
}

/* The events of settled entries, written again after a rollback. */
static void ledger_events(sd_store *s)
{
    for (size_t i = 0; i < s->nold; i++)
        if (s->old[i].settled)
            settled_event(s, &s->old[i]);
}

/* After a commit: settled entries are in the database now. */
static void ledger_committed(sd_store *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nold; i++)
        if (!s->old[i].settled)
            s->old[k++] = s->old[i];
    if (k != s->nold)
        s->ledger_dirty = 1;
    s->nold = k;
    if (s->ledger_dirty)
        ledger_write(s);
}

/* Forgets the oldest n kept reports (committed, or lost to the cap). */
static void drop_pending(sd_store *s, size_t n)
{
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        free(s->pend[i].vec);
        struct lost_ent *e = n < s->npend
            ? ent_find(s->agg, s->nagg, s->pend[i].job) : NULL;
        if (e && e->n > 0) { /* lost to the cap: counted in s->lost */
            e->n--;
            e->first = (int64_t)s->pend[i].r.iter + 1;
        }
    }
    memmove(s->pend, s->pend + n, (s->npend - n) * sizeof *s->pend);
    s->npend -= n;
    if (s->npend == 0) {
        s->ledger_dirty |= s->ledger_held;
        s->nagg = 0;
    }
}

void store_close(sd_store *s)
{
    if (!s)
        return;
    store_flush(s);
    for (int i = 0; i < ST_N; i++)
        sqlite3_finalize(s->st[i]);
    drop_pending(s, s->npend);
    free(s->pend);
    free(s->agg);
    free(s->old);
    if (s->ledger_fd >= 0)
        close(s->ledger_fd);
    sqlite3_close(s->db);
    free(s);
}

const char *store_errmsg(sd_store *s) { return sqlite3_errmsg(s->db); }

/* Steps a prepared statement once and resets it; 0 on success. A failure
 * marks the transaction broken (it is rolled back and written again). */
static int step(sd_store *s, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        s->failures++;
        s->broken = 1;
        snprintf(s->error, sizeof s->error, "%s", sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

static void begin(sd_store *s)
{
    if (!s->in_txn && step(s, s->st[ST_BEGIN]) == 0)
        s->in_txn = 1;
}

static void bind_real(sqlite3_stmt *st, int i, double v);
static void bind_text(sqlite3_stmt *st, int i, const char *v);

static void insert_report(sd_store *s, int64_t job, const slaq_report *r,
                          double metric, const char *vec, double threads,
                          double wall_s)
{
    sqlite3_stmt *st = s->st[ST_REPORT];
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)r->iter);
    sqlite3_bind_double(st, 3, r->loss);
    sqlite3_bind_double(st, 4, r->cpu_s);
    sqlite3_bind_double(st, 5, r->samples);
    sqlite3_bind_double(st, 6, r->t);
    bind_real(st, 7, metric);
    bind_text(st, 8, vec);
    bind_real(st, 9, threads > 0 ? threads : NAN);
    bind_real(st, 10, wall_s > 0 ? wall_s : NAN);
    step(s, st);
}

void store_set_rewrite(sd_store *s, void (*fn)(void *), void *arg)
{
    s->rewrite = fn;
    s->rewrite_arg = arg;
}

/*
 * Commits. When a write or the commit fails (disk full, I/O error) the
 * transaction is rolled back, the store is "failing" (store_failing), and
 * later calls, at most one a second, write again what memory holds: every
 * job (the rewrite hook) and the reports since the last good commit. One
 * log line when failing starts, one when it ends.
 */
int store_flush(sd_store *s)
{
    if (!s)
        return 0;
    if (s->failing) {
        double now = sd_mono();
        if (s->ledger_dirty)
            ledger_write(s);
        if (now < s->retry_at)
            return -1;
        s->retry_at = now + 1;
        if (s->in_txn && !sqlite3_get_autocommit(s->db))
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        s->in_txn = 0;
        s->broken = 0;
        begin(s);
        s->retrying = 1;
        if (s->rewrite)
            s->rewrite(s->rewrite_arg);
        ledger_events(s);
        s->retrying = 0;
        for (size_t i = 0; i < s->npend && !s->broken; i++)
            insert_report(s, s->pend[i].job, &s->pend[i].r,
                          s->pend[i].metric, s->pend[i].vec,
                          s->pend[i].threads, s->pend[i].wall_s);
    }
    uint64_t lost = s->lost + s->lost_settled;
    if (lost != s->lost_saved) {
        sqlite3_stmt *st = s->st[ST_SET_META];
        begin(s);
        sqlite3_bind_text(st, 1, "reports_lost", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)(s->lost_base + lost));
        step(s, st);
    }
    if (!s->in_txn)
        return 0;
    if (!s->broken && step(s, s->st[ST_COMMIT]) == 0) {
        s->in_txn = 0;
        s->lost_saved = lost;
        if (s->failing)
            sd_log(NULL, 0, "store: writing works again; %zu reports kept in "
                   "memory are now in the database (%llu failures, %llu "
                   "reports lost)", s->npend,
                   (unsigned long long)s->failures,
                   (unsigned long long)s->lost);
        s->failing = 0;
        drop_pending(s, s->npend);
        ledger_committed(s);
        return 0;
    }
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_txn = 0;
    s->broken = 0;
    if (!s->failing)
        sd_log(NULL, 0, "store: cannot write the database: %s; state changes "
               "are refused and reports kept in memory (at most %d) until "
               "it works again", s->error, SD_STORE_PENDING);
    if (!s->failing)
        s->retry_at = sd_mono() + 1;
    s->failing = 1;
    s->ledger_dirty = 1;
    ledger_write(s);
    return -1;
}

int store_failing(const sd_store *s) { return s && s->failing; }
const char *store_error(const sd_store *s) { return s->error; }
uint64_t store_failures(const sd_store *s) { return s->failures; }
uint64_t store_lost(const sd_store *s)
{
    return s->lost_base + s->lost + s->lost_settled;
}
size_t store_pending(const sd_store *s) { return s->npend; }

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

void store_report(sd_store *s, int64_t job, const slaq_report *r,
                  double metric, double threads, double wall_s)
{
    store_report_vec(s, job, r, metric, NULL, threads, wall_s);
}

void store_report_vec(sd_store *s, int64_t job, const slaq_report *r,
                      double metric, const char *vec, double threads,
                      double wall_s)
{
    if (s->npend == s->cappend) {
        size_t cap = s->cappend ? s->cappend * 2 : 1024;
        struct pending *np = cap <= SD_STORE_PENDING
                                 ? realloc(s->pend, cap * sizeof *np) : NULL;
        if (np) {
            s->pend = np;
            s->cappend = cap;
        } else if (s->npend > 0) { /* full: the oldest eighth is lost */
            size_t drop = s->npend / 8 ? s->npend / 8 : 1;
            drop_pending(s, drop);
            s->lost += drop;
        }
    }
    if (s->npend < s->cappend) {
        char *copy = vec ? strdup(vec) : NULL;
        s->pend[s->npend++] = (struct pending){job, *r, metric, copy,
                                               threads, wall_s};
        vec = copy ? copy : vec;
        agg_add(s, job, (int64_t)r->iter);
    }
    if (s->failing)
        return; /* written with the others at the next retry */
    begin(s);
    insert_report(s, job, r, metric, vec, threads, wall_s);
}

void store_alloc(sd_store *s, int64_t job, double t, double cores,
                 uint64_t epoch)
{
    if (s->failing && !s->retrying)
        return; /* memory holds it; rewritten on recovery */
    sqlite3_stmt *st = s->st[ST_ALLOC];
    begin(s);
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_double(st, 3, cores);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)epoch);
    step(s, st);
}

void store_event(sd_store *s, double t, int64_t job, const char *kind,
                 const char *detail)
{
    if (!s || (s->failing && !s->retrying))
        return; /* events while the disk refuses writes are not kept */
    sqlite3_stmt *st = s->st[ST_EVENT];
    begin(s);
    sqlite3_bind_double(st, 1, t);
    if (job > 0)
        sqlite3_bind_int64(st, 2, job);
    else
        sqlite3_bind_null(st, 2);
    bind_text(st, 3, kind);
    bind_text(st, 4, detail);
    step(s, st);
}

void store_put_job(sd_store *s, const sd_job *j)
{
    if (!SD_ACTIVE(j->state))
        ledger_settle(s, j->id);
    if (s->failing && !s->retrying)
        return; /* memory holds it; rewritten on recovery */
    sqlite3_stmt *st = s->st[ST_JOB];
    begin(s);
    sqlite3_bind_int64(st, 1, j->id);
    bind_text(st, 2, j->name);
    bind_text(st, 3, j->cmd);
    bind_text(st, 4, j->cwd);
    sqlite3_bind_double(st, 5, j->weight);
    bind_real(st, 6, j->max_cores);
    sqlite3_bind_double(st, 7, j->target);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)j->max_iters);
    sqlite3_bind_double(st, 9, j->max_time);
    sqlite3_bind_int(st, 10, j->managed);
    bind_text(st, 11, sd_state_name(j->state));
    sqlite3_bind_int64(st, 12, j->pid);
    sqlite3_bind_int64(st, 13, (sqlite3_int64)j->pstart);
    if (j->have_status)
        sqlite3_bind_int(st, 14, j->exit_status);
    else
        sqlite3_bind_null(st, 14);
    bind_text(st, 15, j->reason);
    sqlite3_bind_double(st, 16, j->submitted);
    sqlite3_bind_double(st, 17, j->started);
    sqlite3_bind_double(st, 18, j->ended);
    bind_text(st, 19, j->secret[0] ? j->secret : NULL);
    bind_text(st, 20, j->convergence != SLAQ_CONV_UNKNOWN
                          ? slaq_convergence_name(j->convergence) : NULL);
    bind_text(st, 21, j->metric_name);
    sqlite3_bind_int(st, 22, j->suspended);
    sqlite3_bind_int64(st, 23, j->continued_by);
    sqlite3_bind_int64(st, 24, j->resumed_from);
    sqlite3_bind_int64(st, 25, j->sweep);
    bind_text(st, 26, j->node_at);
    sqlite3_bind_int(st, 27, j->restartable);
    bind_text(st, 28, j->pin);
    /* An agent's job's start message, to start it (pending) or start it
     * again (restartable) after a restart of the controller. */
    char *launch = j->launch && SD_ACTIVE(j->state)
                       ? json_dumps(j->launch, JSON_COMPACT) : NULL;
    bind_text(st, 29, launch);
    bind_text(st, 30, j->kind != SLAQ_JOB_ML ? slaq_job_kind_name(j->kind)
                                             : NULL);
    sqlite3_bind_int64(st, 31, (sqlite3_int64)j->uid);
    bind_text(st, 32, j->user);
    sqlite3_bind_int64(st, 33, j->gen);
    step(s, st);
    free(launch);
}

static char *col_strdup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

int store_each_job(sd_store *s, int (*fn)(sd_daemon *, sd_job *), sd_daemon *d)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT id, name, cmd, cwd, weight, "
            "max_cores, target, max_iters, max_time, managed, state, pid, "
            "pstart, exit_status, reason, submitted, started, ended, "
            "(SELECT count(*) FROM reports r WHERE r.job = jobs.id), secret, "
            "convergence, "
            "metric_name, (SELECT r.metric FROM reports r WHERE r.job = "
            "jobs.id AND r.metric IS NOT NULL ORDER BY r.iter DESC LIMIT 1), "
            "(SELECT r.iter FROM reports r WHERE r.job = jobs.id AND "
            "r.metric IS NOT NULL ORDER BY r.iter DESC LIMIT 1), "
            "suspended, continued_by, resumed_from, sweep, "
            "node, restartable, pin, launch, kind, uid, user, gen "
            "FROM jobs ORDER BY id", -1, &st, NULL))
        return -1;
    int rc = 0, step_rc;
    sd_user self;
    user_self(d, &self);
    while ((step_rc = sqlite3_step(st)) == SQLITE_ROW) {
        sd_job *j = job_new(d, sqlite3_column_int64(st, 0));
        if (!j) {
            rc = -1;
            break;
        }
        j->name = col_strdup(st, 1);
        j->cmd = col_strdup(st, 2);
        j->cwd = col_strdup(st, 3);
        j->weight = sqlite3_column_double(st, 4);
        j->max_cores = sqlite3_column_type(st, 5) == SQLITE_NULL
                           ? INFINITY : sqlite3_column_double(st, 5);
        j->target = sqlite3_column_double(st, 6);
        j->max_iters = (uint64_t)sqlite3_column_int64(st, 7);
        j->max_time = sqlite3_column_double(st, 8);
        j->managed = sqlite3_column_int(st, 9);
        const char *state = (const char *)sqlite3_column_text(st, 10);
        if (!state || sd_state_parse(state, &j->state))
            j->state = SD_LOST;
        j->pid = (pid_t)sqlite3_column_int64(st, 11);
        j->pstart = (unsigned long long)sqlite3_column_int64(st, 12);
        j->have_status = sqlite3_column_type(st, 13) != SQLITE_NULL;
        j->exit_status = sqlite3_column_int(st, 13);
        if (sqlite3_column_type(st, 14) != SQLITE_NULL)
            j->reason = col_strdup(st, 14);
        j->submitted = sqlite3_column_double(st, 15);
        j->started = sqlite3_column_double(st, 16);
        j->ended = sqlite3_column_double(st, 17);
        const unsigned char *sec = sqlite3_column_text(st, 19);
        if (sec)
            snprintf(j->secret, sizeof j->secret, "%s", (const char *)sec);
        const char *cv = (const char *)sqlite3_column_text(st, 20);
        if (!cv || slaq_convergence_parse(cv, &j->convergence) != SLAQ_OK)
            j->convergence = SLAQ_CONV_UNKNOWN;
        if (sqlite3_column_type(st, 21) != SQLITE_NULL)
            j->metric_name = col_strdup(st, 21);
        if (sqlite3_column_type(st, 22) != SQLITE_NULL) {
            j->last_metric = sqlite3_column_double(st, 22);
            j->metric_iter = (uint64_t)sqlite3_column_int64(st, 23);
        }
        j->suspended = sqlite3_column_int(st, 24);
        j->continued_by = sqlite3_column_int64(st, 25);
        j->resumed_from = sqlite3_column_int64(st, 26);
        j->sweep = sqlite3_column_int64(st, 27);
        if (sqlite3_column_type(st, 28) != SQLITE_NULL)
            j->node_at = col_strdup(st, 28);
        j->restartable = sqlite3_column_int(st, 29);
        if (sqlite3_column_type(st, 30) != SQLITE_NULL)
            j->pin = col_strdup(st, 30);
        if (sqlite3_column_type(st, 31) != SQLITE_NULL)
            j->launch = json_loads((const char *)sqlite3_column_text(st, 31),
                                   0, NULL);
        const char *kind = (const char *)sqlite3_column_text(st, 32);
        if (!kind || slaq_job_kind_parse(kind, &j->kind) != SLAQ_OK)
            j->kind = SLAQ_JOB_ML;
        if (sqlite3_column_type(st, 33) != SQLITE_NULL) {
            sd_user u;
            j->uid = (uid_t)sqlite3_column_int64(st, 33);
            user_from_uid(d, j->uid, 0, &u);
            j->user = sqlite3_column_type(st, 34) != SQLITE_NULL
                          ? col_strdup(st, 34) : strdup(u.name);
        } else { /* an older slaqd's job: it ran as slaqd's user */
            j->uid = self.uid;
            j->user = strdup(self.name);
        }
        j->gen = (unsigned)sqlite3_column_int64(st, 35);
        if (!SD_ACTIVE(j->state)) {
            /* Summary of a finished job, without loading its history. */
            sqlite3_stmt *q;
            if (sqlite3_prepare_v2(s->db, "SELECT iter, loss FROM reports "
                    "WHERE job = ? ORDER BY iter DESC LIMIT 1", -1, &q,
                    NULL) == SQLITE_OK) {
                sqlite3_bind_int64(q, 1, j->id);
                if (sqlite3_step(q) == SQLITE_ROW) {
                    j->last_iter = (uint64_t)sqlite3_column_int64(q, 0);
                    j->last_loss = sqlite3_column_double(q, 1);
                }
                sqlite3_finalize(q);
            }
            j->nreports = (uint64_t)sqlite3_column_int64(st, 18);
        }
        if (!j->name || !j->cmd || !j->cwd || !j->user || fn(d, j) < 0) {
            rc = -1;
            break;
        }
    }
    if (step_rc != SQLITE_DONE && step_rc != SQLITE_ROW)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

int store_each_full_report(sd_store *s, int64_t job,
                           int (*fn)(void *, const slaq_report *,
                                     const char *, double), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT iter, loss, cpu_s, samples, t, "
                           "estimates, metric FROM reports WHERE job = ? "
                           "ORDER BY iter", -1, &st, NULL))
        return -1;
    sqlite3_bind_int64(st, 1, job);
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        slaq_report r = {
            .iter = (uint64_t)sqlite3_column_int64(st, 0),
            .loss = sqlite3_column_double(st, 1),
            .cpu_s = sqlite3_column_double(st, 2),
            .samples = sqlite3_column_double(st, 3),
            .t = sqlite3_column_double(st, 4),
        };
        double metric = sqlite3_column_type(st, 6) == SQLITE_NULL
                            ? NAN : sqlite3_column_double(st, 6);
        if ((rc = fn(arg, &r, (const char *)sqlite3_column_text(st, 5),
                     metric)) < 0)
            break;
    }
    sqlite3_finalize(st);
    return rc;
}

/* store_each_query_report's and store_each_report's callbacks, handed the
 * rows of store_each_full_report without what they do not take. */
struct report_fn {
    int (*fn)(void *, const slaq_report *);
    int (*query_fn)(void *, const slaq_report *, const char *);
    void *arg;
};

static int part_of_row(void *p, const slaq_report *r, const char *est,
                       double metric)
{
    (void)metric;
    const struct report_fn *f = p;
    return f->query_fn ? f->query_fn(f->arg, r, est) : f->fn(f->arg, r);
}

int store_each_query_report(sd_store *s, int64_t job,
                            int (*fn)(void *, const slaq_report *,
                                      const char *), void *arg)
{
    struct report_fn f = {NULL, fn, arg};
    return store_each_full_report(s, job, part_of_row, &f);
}

int store_each_report(sd_store *s, int64_t job,
                      int (*fn)(void *, const slaq_report *), void *arg)
{
    struct report_fn f = {fn, NULL, arg};
    return store_each_full_report(s, job, part_of_row, &f);
}

/* One row of a query as a JSON array of its first n columns. */
static json_t *row_json(sqlite3_stmt *st, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
            json_array_append_new(a, json_integer(sqlite3_column_int64(st, i)));
            break;
        case SQLITE_FLOAT:
            json_array_append_new(a, json_real(sqlite3_column_double(st, i)));
            break;
        case SQLITE_TEXT:
            json_array_append_new(a, json_string(
                (const char *)sqlite3_column_text(st, i)));
            break;
        default:
            json_array_append_new(a, json_null());
        }
    }
    return a;
}

/* Runs `sql` (one ?1 = job) and returns its rows as arrays, keeping every
 * k-th row so that at most `max` come back (the last row always). */
static json_t *rows_json(sd_store *s, const char *count_sql, const char *sql,
                         int64_t job, size_t max)
{
    json_t *out = json_array();
    sqlite3_stmt *st;
    sqlite3_int64 n = 0;
    if (sqlite3_prepare_v2(s->db, count_sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, job);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    size_t every = n > (sqlite3_int64)max ? ((size_t)n + max - 1) / max : 1;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return out;
    sqlite3_bind_int64(st, 1, job);
    for (sqlite3_int64 row = 0; sqlite3_step(st) == SQLITE_ROW; row++) {
        if (row % (sqlite3_int64)every && row != n - 1)
            continue;
        json_t *a = row_json(st, sqlite3_column_count(st));
        json_array_append_new(out, a);
    }
    sqlite3_finalize(st);
    return out;
}


/*
 * At most `max` rows of a job's `table` spread evenly over its integer key
 * (the second column of its primary key), the first and last always: with more
 * rows than that, one index seek per row returned, so the cost is
 * O(max log n) however long the history is (a job with 250,000 reports
 * must not stall the loop for every dashboard poll).
 */
static json_t *seek_rows(sd_store *s, const char *table, const char *key,
                         const char *cols, int ncols, int64_t job, size_t max)
{
    char sql[512];
    sqlite3_stmt *st = NULL;
    json_t *out = json_array();
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT 1 FROM %s WHERE "
             "job = ?1 LIMIT ?2)", table);
    sqlite3_int64 n = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)max + 1);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (n <= (sqlite3_int64)max) { /* all of them: O(max) */
        snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE job = ?1 ORDER BY "
                 "%s", cols, table, key);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, job);
            while (sqlite3_step(st) == SQLITE_ROW)
                json_array_append_new(out, row_json(st, ncols));
        }
        sqlite3_finalize(st);
        return out;
    }
    /* Two queries: SQLite answers a lone min() or max() from the index,
     * but scans for both at once. */
    double ends[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof sql, "SELECT %s(%s) FROM %s WHERE job = ?1",
                 i ? "max" : "min", key, table);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, job);
            if (sqlite3_step(st) == SQLITE_ROW)
                ends[i] = sqlite3_column_double(st, 0);
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    double lo = ends[0], hi = ends[1];
    snprintf(sql, sizeof sql, "SELECT %s, %s FROM %s WHERE job = ?1 AND %s >= "
             "?2 ORDER BY %s LIMIT 1", cols, key, table, key, key);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return out;
    }
    double prev = -INFINITY;
    for (size_t k = 0; k < max; k++) {
        double target = k + 1 == max ? hi : lo + (hi - lo) * (double)k /
                                                (double)(max - 1);
        if (target <= prev)
            continue;
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)ceil(target)); /* keys are
                                                      integers: an index seek */
        if (sqlite3_step(st) == SQLITE_ROW) {
            double at = sqlite3_column_double(st, ncols);
            if (at > prev) {
                json_array_append_new(out, row_json(st, ncols));
                prev = at;
            }
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return out;
}

json_t *store_reports_json(sd_store *s, int64_t job, size_t max)
{
    return seek_rows(s, "reports", "iter",
                     "iter, loss, cpu_s, samples, t, metric", 6, job, max);
}

json_t *store_allocs_json(sd_store *s, int64_t job, size_t max)
{
    return seek_rows(s, "allocs", "epoch", "t, cores, epoch", 3, job, max);
}

json_t *store_reports_page(sd_store *s, int64_t job, int64_t after,
                           size_t limit, int64_t *next)
{
    sqlite3_stmt *st;
    json_t *out = json_array();
    *next = -1;
    if (sqlite3_prepare_v2(s->db, "SELECT iter, loss, cpu_s, samples, t, "
                           "metric FROM reports WHERE job = ?1 AND iter > ?2 "
                           "ORDER BY "
                           "iter LIMIT ?3", -1, &st, NULL) != SQLITE_OK)
        return out;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)limit + 1);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n++ == limit) { /* one more exists: there is a next page */
            json_t *last = json_array_get(out, limit - 1);
            *next = json_integer_value(json_array_get(last, 0));
            break;
        }
        json_array_append_new(out, row_json(st, 6));
    }
    sqlite3_finalize(st);
    return out;
}

json_t *store_events_json(sd_store *s, int64_t job, size_t max)
{
    return rows_json(s, "SELECT count(*) FROM events WHERE job = ?1",
                     "SELECT t, kind, detail FROM events WHERE job = ?1 "
                     "ORDER BY t", job, max);
}

void store_delete_job(sd_store *s, int64_t job)
{
    if (s->failing && !s->retrying)
        return; /* memory holds it; rewritten on recovery */
    begin(s);
    for (int i = ST_DEL_JOB; i <= ST_DEL_EVENTS; i++) {
        sqlite3_bind_int64(s->st[i], 1, job);
        step(s, s->st[i]);
    }
}

int64_t store_last_id(sd_store *s)
{
    sqlite3_int64 v = query_int(s->db, "SELECT max(coalesce((SELECT value "
                                       "FROM meta WHERE key = 'last_id'), 0),"
                                       " coalesce((SELECT max(id) FROM jobs),"
                                       " 0))");
    return v > 0 ? v : 0;
}

void store_set_last_id(sd_store *s, int64_t id)
{
    sqlite3_stmt *st = s->st[ST_SET_META];
    begin(s);
    sqlite3_bind_text(st, 1, "last_id", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    step(s, st);
}

void *store_db(sd_store *s) { return s->db; }
void store_begin(sd_store *s) { begin(s); }
