/*
 * store.c — slaqd's persistent state in SQLite: the schema of state.db
 * (every table, in `schema` below, documented in docs/state-db.md), jobs,
 * every iteration report, allocation changes and events. The sweeps'
 * tables are written by store_sweep.c; slaq replay reads a run back with
 * store_run.c; no other file speaks SQL to state.db (store.h).
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
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/loop.h"
#include "daemon/record.h"
#include "daemon/store.h"
#include "daemon/store_sql.h"
#include "daemon/users.h"

/* ------------------------------------------------------------- schema */

/* A job's row read back: what its columns need besides themselves. */
typedef struct job_load {
    sd_daemon *d;
    sd_user self;         /* slaqd's user: the owner of an older job */
    int uid_null;         /* the row has no uid (read before user) */
} job_load;

/* A report's row of the reports table (report_cols), which the store
 * also keeps in memory until it is committed (store_flush). */
typedef struct report_row {
    int64_t job;
    slaq_report r;
    double metric;          /* NAN: none */
    char *vec;              /* estimates (owned while kept); NULL: not a
                               query's */
    double threads, wall_s; /* not above 0: not said */
} report_row;

/* An allocation's row of the allocs table (alloc_cols). */
typedef struct alloc_row {
    int64_t job;
    double t, cores;
    uint64_t epoch;
} alloc_row;

/* An event's row of the events table (event_cols): bound, never owned. */
typedef struct event_row {
    double t;
    int64_t job;          /* 0: slaqd's own */
    char *kind, *detail;
} event_row;

/* How a row's field is kept in its column: as the C type at `off` in the
 * row's struct says, or by the column's own put and get (CK_FN, a job's
 * columns only). NULL reads as 0 (or "", or as said) unless the kind says
 * otherwise. */
typedef enum {
    CK_NONE,     /* no struct's field: the table's rows are written and
                    read by hand */
    CK_REAL,     /* double */
    CK_REAL_INF, /* double; NULL is INFINITY (no cap, no deadline) */
    CK_REAL_NAN, /* double; NULL is NAN (none) */
    CK_REAL_POS, /* double; NULL is NAN, and so is written one not above 0
                    (not said) */
    CK_INT,      /* int */
    CK_UINT,     /* unsigned */
    CK_I64,      /* int64_t */
    CK_I64_0,    /* int64_t; NULL is 0 (none) */
    CK_LONG,     /* long */
    CK_U64,      /* uint64_t */
    CK_ULL,      /* unsigned long long */
    CK_TEXT,     /* char *, NULL is NULL */
    CK_TEXT_REQ, /* char *, NULL read back as "" */
    CK_CHARS,    /* char[size]; NULL is "" */
    CK_NAME,     /* an int (or enum) i kept as names[i]; NULL, a name not
                    in names or an i out of range: dflt */
    CK_FN,
} col_kind;

/* One column of a table. The columns of jobs (sd_job) and arrays
 * (sd_array) also say which field of their struct they hold: the table's
 * INSERT binds them and its SELECT reads them in this order (table_sql),
 * so a new column is one row here. */
typedef struct st_column {
    const char *name, *type;
    col_kind field;
    size_t off, size;     /* size: CK_CHARS's array */
    const char *const *names; /* CK_NAME's names, n of them, and what */
    int n, dflt;              /* a NULL or unknown one reads */
    void (*put)(sqlite3_stmt *st, int i, const sd_job *j);
    void (*get)(sqlite3_stmt *st, int i, sd_job *j, job_load *ld);
} st_column;

/* One table: its columns, what follows them in its CREATE TABLE (the
 * primary key), and an index on it. */
typedef struct st_table {
    const char *name;
    const st_column *cols;
    size_t ncols;
    const char *key;      /* "PRIMARY KEY(...)" */
    int without_rowid;
    const char *index;    /* "name ON table(cols)", or NULL */
} st_table;

static char *col_strdup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

static int col_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL;
}

static void put_status(sqlite3_stmt *st, int i, const sd_job *j)
{
    if (j->proc.have_status)
        sqlite3_bind_int(st, i, j->proc.exit_status);
    else
        sqlite3_bind_null(st, i);
}

static void get_status(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    j->proc.have_status = !col_null(st, i);
    j->proc.exit_status = sqlite3_column_int(st, i);
}

/* An agent's job's start message, to start it (pending) or start it
 * again (restartable) after a restart of the controller. */
static void put_launch(sqlite3_stmt *st, int i, const sd_job *j)
{
    char *launch = j->place.launch && SD_ACTIVE(j->state)
                       ? json_dumps(j->place.launch, JSON_COMPACT) : NULL;
    if (launch)
        sqlite3_bind_text(st, i, launch, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
    free(launch);
}

static void get_launch(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    if (!col_null(st, i))
        j->place.launch =
            json_loads((const char *)sqlite3_column_text(st, i), 0, NULL);
}

static void put_kind(sqlite3_stmt *st, int i, const sd_job *j)
{
    bind_str(st, i, j->kind != SLAQ_JOB_ML ? slaq_job_kind_name(j->kind)
                                            : NULL);
}

static void get_kind(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    const char *kind = (const char *)sqlite3_column_text(st, i);
    if (!kind || slaq_job_kind_parse(kind, &j->kind) != SLAQ_OK)
        j->kind = SLAQ_JOB_ML;
}

static void put_uid(sqlite3_stmt *st, int i, const sd_job *j)
{
    sqlite3_bind_int64(st, i, (sqlite3_int64)j->uid);
}

/* NULL: a job of an older slaqd, which ran as slaqd's own user. */
static void get_uid(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    ld->uid_null = col_null(st, i);
    j->uid = ld->uid_null ? ld->self.uid
                          : (uid_t)sqlite3_column_int64(st, i);
}

static void put_user(sqlite3_stmt *st, int i, const sd_job *j)
{
    bind_str(st, i, j->user);
}

static void get_user(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    if (ld->uid_null) {
        j->user = strdup(ld->self.name);
    } else if (col_null(st, i)) {
        sd_user u;
        user_from_uid(ld->d, j->uid, 0, &u);
        j->user = strdup(u.name);
    } else {
        j->user = col_strdup(st, i);
    }
}

/* A task of a task array (docs/arrays.md): its index in its array; NULL
 * for every other job (and in an older slaqd's rows), like array_id. */
static void put_array_index(sqlite3_stmt *st, int i, const sd_job *j)
{
    if (j->array)
        sqlite3_bind_int64(st, i, j->array_index);
    else
        sqlite3_bind_null(st, i);
}

static void get_array_index(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    j->array_index = col_null(st, i) ? 0 : (long)sqlite3_column_int64(st, i);
}

/* The job's goal (slaq submit --deadline, --accuracy, --direction,
 * --urgency; docs/deadlines.md); NULL: the default (no deadline, no
 * required accuracy, max, urgency 1), which an older slaqd's rows read
 * and which the new job holds already (slaq_goal_init). */
static void put_urgency(sqlite3_stmt *st, int i, const sd_job *j)
{
    sqlite3_bind_int(st, i, j->goals.goal.urgency);
}

static void get_urgency(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    int urg = sqlite3_column_int(st, i);
    if (urg >= SLAQ_URGENCY_MIN && urg <= SLAQ_URGENCY_MAX)
        j->goals.goal.urgency = urg;
}

/* MLF-C's rule (slaq submit --stop); NULL, an older slaqd's row: the
 * required accuracy if the job has one, else its fixed iterations (what
 * MLF-C did before the rule was the user's). After accuracy in job_cols. */
static void put_stop(sqlite3_stmt *st, int i, const sd_job *j)
{
    bind_str(st, i, slaq_stop_name(j->goals.goal.stop));
}

static void get_stop(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    const char *rule = (const char *)sqlite3_column_text(st, i);
    if (!rule || slaq_stop_parse(rule, &j->goals.goal.stop) != SLAQ_OK)
        j->goals.goal.stop = isnan(j->goals.goal.accuracy) ? SLAQ_STOP_ITERS
                                                : SLAQ_STOP_ACCURACY;
}

static void put_conv(sqlite3_stmt *st, int i, const sd_job *j)
{
    bind_str(st, i, j->goals.convergence != SLAQ_CONV_UNKNOWN
                         ? slaq_convergence_name(j->goals.convergence) : NULL);
}

static void get_conv(sqlite3_stmt *st, int i, sd_job *j, job_load *ld)
{
    (void)ld;
    const char *cv = (const char *)sqlite3_column_text(st, i);
    if (!cv || slaq_convergence_parse(cv, &j->goals.convergence) != SLAQ_OK)
        j->goals.convergence = SLAQ_CONV_UNKNOWN;
}

#define JFNAME(name, member, names, n, dflt) \
    {name, "TEXT", CK_NAME, offsetof(sd_job, member), \
     sizeof ((sd_job *)0)->member, names, n, dflt, NULL, NULL}
#define JFN(name, type, fn) \
    {name, type, CK_FN, 0, 0, NULL, 0, 0, put_##fn, get_##fn}
#define ROWF(row, name, type, field, member) \
    {name, type, field, offsetof(row, member), sizeof ((row *)0)->member, \
     NULL, 0, 0, NULL, NULL}
#define JF(name, type, field, member) \
    ROWF(sd_job, name, type, field, member)
#define COL(name, type) {name, type, CK_NONE, 0, 0, NULL, 0, 0, NULL, NULL}

/* goal.maximize's names: 0 "min", 1 "max". */
static const char *const direction_names[] = {"min", "max"};

/* The kinds' C types, as sd_job and sd_array declare their fields. */
_Static_assert(sizeof(pid_t) == sizeof(int), "pid is a CK_INT");
_Static_assert(sizeof(uid_t) == sizeof(unsigned), "uid is a CK_UINT");
_Static_assert(sizeof(sd_state) == sizeof(int), "state is a CK_NAME");

/* The jobs table (docs/state-db.md). uid comes before user: a row
 * without a uid is an older slaqd's, whose user is slaqd's own. */
static const st_column job_cols[] = {
    JF("id", "INTEGER", CK_I64, id),
    JF("name", "TEXT", CK_TEXT_REQ, name),
    JF("cmd", "TEXT", CK_TEXT_REQ, cmd),
    JF("cwd", "TEXT", CK_TEXT_REQ, cwd),
    JF("weight", "REAL", CK_REAL, goals.weight),
    JF("max_cores", "REAL", CK_REAL_INF, goals.max_cores),
    JF("target", "REAL", CK_REAL, goals.target),
    JF("max_iters", "INTEGER", CK_U64, goals.max_iters),
    JF("max_time", "REAL", CK_REAL, goals.max_time),
    JF("managed", "INTEGER", CK_INT, proc.managed),
    JFNAME("state", state, job_state_names, SD_NSTATES, SD_LOST),
    JF("pid", "INTEGER", CK_INT, proc.pid),
    JF("pstart", "INTEGER", CK_ULL, proc.pstart),
    JFN("exit_status", "INTEGER", status),
    JF("reason", "TEXT", CK_TEXT, reason),
    JF("submitted", "REAL", CK_REAL, submitted),
    JF("started", "REAL", CK_REAL, started),
    JF("ended", "REAL", CK_REAL, ended),
    JF("secret", "TEXT", CK_CHARS, secret),
    JF("metric_name", "TEXT", CK_TEXT, hist.metric_name),
    JF("suspended", "INTEGER", CK_INT, proc.suspended),
    JF("continued_by", "INTEGER", CK_I64, continued_by),
    JF("resumed_from", "INTEGER", CK_I64, resumed_from),
    JF("sweep", "INTEGER", CK_I64, sweep),
    JF("node", "TEXT", CK_TEXT, place.node_at),
    JF("restartable", "INTEGER", CK_INT, place.restartable),
    JF("pin", "TEXT", CK_TEXT, place.pin),
    JFN("launch", "TEXT", launch),
    JFN("kind", "TEXT", kind),
    JFN("uid", "INTEGER", uid),
    JFN("user", "TEXT", user),
    JF("gen", "INTEGER", CK_UINT, place.gen),
    JFN("convergence", "TEXT", conv),
    JF("array_id", "INTEGER", CK_I64_0, array),
    JFN("array_index", "INTEGER", array_index),
    JF("deadline", "REAL", CK_REAL_INF, goals.goal.deadline),
    JF("accuracy", "REAL", CK_REAL_NAN, goals.goal.accuracy),
    JFNAME("direction", goals.goal.maximize, direction_names, 2, 1),
    JFN("urgency", "INTEGER", urgency),
    JF("moves", "INTEGER", CK_INT, place.moves),
    JF("move_s", "REAL", CK_REAL_NAN, place.move_s),
    JFN("stop", "TEXT", stop),
    JF("env", "TEXT", CK_TEXT, env),
};
#define NJOB_COLS (sizeof job_cols / sizeof *job_cols)

/* The reports table: a report_row. */
static const st_column report_cols[] = {
    ROWF(report_row, "job", "INTEGER", CK_I64, job),
    ROWF(report_row, "iter", "INTEGER", CK_U64, r.iter),
    ROWF(report_row, "loss", "REAL", CK_REAL, r.loss),
    ROWF(report_row, "cpu_s", "REAL", CK_REAL, r.cpu_s),
    ROWF(report_row, "samples", "REAL", CK_REAL, r.samples),
    ROWF(report_row, "t", "REAL", CK_REAL, r.t),
    ROWF(report_row, "metric", "REAL", CK_REAL_NAN, metric),
    ROWF(report_row, "estimates", "TEXT", CK_TEXT, vec),
    /* how the report's iterations ran (NULL: not said): what the job's
     * scaling model learnt from, for `slaq replay` */
    ROWF(report_row, "threads", "REAL", CK_REAL_POS, threads),
    ROWF(report_row, "wall_s", "REAL", CK_REAL_POS, wall_s),
};
#define NREPORT_COLS (sizeof report_cols / sizeof *report_cols)
static const st_column alloc_cols[] = {
    ROWF(alloc_row, "job", "INTEGER", CK_I64, job),
    ROWF(alloc_row, "t", "REAL", CK_REAL, t),
    ROWF(alloc_row, "cores", "REAL", CK_REAL, cores),
    ROWF(alloc_row, "epoch", "INTEGER", CK_U64, epoch),
};
#define NALLOC_COLS (sizeof alloc_cols / sizeof *alloc_cols)
static const st_column event_cols[] = {
    ROWF(event_row, "t", "REAL", CK_REAL, t),
    ROWF(event_row, "job", "INTEGER", CK_I64_0, job),
    ROWF(event_row, "kind", "TEXT", CK_TEXT, kind),
    ROWF(event_row, "detail", "TEXT", CK_TEXT, detail),
};
#define NEVENT_COLS (sizeof event_cols / sizeof *event_cols)
static const st_column meta_cols[] = {
    COL("key", "TEXT"), COL("value", "INTEGER"),
};
/* The arrays table (docs/arrays.md), sd_array's fields. */
static const st_column array_cols[] = {
    ROWF(sd_array, "id", "INTEGER", CK_I64, id),
    ROWF(sd_array, "name", "TEXT", CK_TEXT_REQ, name),
    ROWF(sd_array, "uid", "INTEGER", CK_UINT, uid),
    ROWF(sd_array, "user", "TEXT", CK_TEXT_REQ, user),
    ROWF(sd_array, "cmd", "TEXT", CK_TEXT_REQ, cmd),
    ROWF(sd_array, "cwd", "TEXT", CK_TEXT_REQ, cwd),
    ROWF(sd_array, "env", "TEXT", CK_TEXT, env),
    ROWF(sd_array, "first", "INTEGER", CK_LONG, first),
    ROWF(sd_array, "last", "INTEGER", CK_LONG, last),
    ROWF(sd_array, "max_running", "INTEGER", CK_UINT, max_running),
    ROWF(sd_array, "estimate", "REAL", CK_REAL, estimate_s),
    ROWF(sd_array, "submitted", "REAL", CK_REAL, submitted),
    ROWF(sd_array, "cancelled", "INTEGER", CK_INT, cancelled),
};
#define NARRAY_COLS (sizeof array_cols / sizeof *array_cols)

static const st_column sweep_cols[] = {
    COL("id", "INTEGER"), COL("name", "TEXT"), COL("spec", "TEXT"),
    COL("cwd", "TEXT"), COL("state", "TEXT"), COL("note", "TEXT"),
    COL("created", "REAL"), COL("ended", "REAL"), COL("reached", "REAL"),
    COL("reached_config", "INTEGER"), COL("best", "REAL"),
    COL("best_config", "INTEGER"), COL("uid", "INTEGER"),
    COL("user", "TEXT"), COL("env", "TEXT"),
};
static const st_column sweep_config_cols[] = {
    COL("sweep", "INTEGER"), COL("idx", "INTEGER"), COL("params", "TEXT"),
    COL("cmd", "TEXT"), COL("jobs", "TEXT"), COL("state", "TEXT"),
    COL("class", "TEXT"), COL("p", "REAL"), COL("epochs", "INTEGER"),
    COL("best", "REAL"),
};
static const st_column sweep_log_cols[] = {
    COL("sweep", "INTEGER"), COL("seq", "INTEGER"), COL("t", "REAL"),
    COL("kind", "TEXT"), COL("cfg", "INTEGER"), COL("epoch", "INTEGER"),
    COL("metric", "REAL"), COL("epoch_s", "REAL"),
};

static const st_column share_cols[] = {
    COL("name", "TEXT"), COL("user", "INTEGER"), COL("account", "TEXT"),
    COL("weight", "REAL"), COL("max_cores", "REAL"),
    COL("max_jobs", "INTEGER"), COL("usage", "REAL"), COL("t", "REAL"),
};

#define TABLE(name, cols, key, norowid, index) \
    {name, cols, sizeof cols / sizeof *cols, key, norowid, index}

/*
 * state.db's tables, the one place they are written down: store_open
 * creates the missing ones and adds the columns an older slaqd's database
 * lacks (ALTER TABLE ADD COLUMN: a column added here must allow NULL,
 * which is what an older row reads). docs/state-db.md describes each;
 * test_store checks the two agree.
 */
static const st_table schema[] = {
    TABLE("jobs", job_cols, "PRIMARY KEY(id)", 0, NULL),
    TABLE("reports", report_cols, "PRIMARY KEY(job, iter)", 1, NULL),
    TABLE("allocs", alloc_cols, "PRIMARY KEY(job, epoch)", 1, NULL),
    TABLE("events", event_cols, NULL, 0, "events_job ON events(job, t)"),
    TABLE("meta", meta_cols, "PRIMARY KEY(key)", 0, NULL),
    TABLE("arrays", array_cols, "PRIMARY KEY(id)", 0, NULL),
    TABLE("sweeps", sweep_cols, "PRIMARY KEY(id)", 0, NULL),
    TABLE("sweep_configs", sweep_config_cols, "PRIMARY KEY(sweep, idx)", 1,
          NULL),
    TABLE("sweep_log", sweep_log_cols, "PRIMARY KEY(sweep, seq)", 1, NULL),
    TABLE("shares", share_cols, "PRIMARY KEY(name)", 0, NULL),
};

/* A growing SQL text; `over` is set when it did not fit. */
typedef struct sql_buf {
    char s[2048];
    size_t n;
    int over;
} sql_buf;

static void sql_add(sql_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sql_add(sql_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof b->s - b->n)
        b->over = 1;
    else
        b->n += (size_t)k;
}

/* Runs one statement of the schema; 0, or -1 with err filled. */
static int schema_exec(sqlite3 *db, const char *path, const sql_buf *b,
                       char *err, size_t errlen)
{
    char *msg = NULL;
    if (b->over) {
        snprintf(err, errlen, "%s: a statement of the schema is too long",
                 path);
        return -1;
    }
    if (sqlite3_exec(db, b->s, NULL, NULL, &msg)) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Whether table t of the open database has column c: 1 or 0, or -1
 * when its columns cannot be read (sqlite3_errmsg says why). */
static int has_column(sqlite3 *db, const char *t, const char *c)
{
    sqlite3_stmt *st;
    int have = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) "
                           "WHERE name = ?2", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        have = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return have;
}

/* Creates every table that is missing and adds the columns an older
 * slaqd's tables lack. */
static int schema_tables(sqlite3 *db, const char *path, char *err,
                         size_t errlen)
{
    for (size_t i = 0; i < sizeof schema / sizeof *schema; i++) {
        const st_table *t = &schema[i];
        sql_buf b = {.n = 0};
        sql_add(&b, "CREATE TABLE IF NOT EXISTS %s(", t->name);
        for (size_t k = 0; k < t->ncols; k++)
            sql_add(&b, "%s%s %s", k ? ", " : "", t->cols[k].name,
                    t->cols[k].type);
        sql_add(&b, "%s%s)%s", t->key ? ", " : "", t->key ? t->key : "",
                t->without_rowid ? " WITHOUT ROWID" : "");
        if (schema_exec(db, path, &b, err, errlen) < 0)
            return -1;
        for (size_t k = 0; k < t->ncols; k++) {
            int have = has_column(db, t->name, t->cols[k].name);
            if (have < 0) {
                snprintf(err, errlen, "%s: cannot read the columns of table "
                         "%s: %s", path, t->name, sqlite3_errmsg(db));
                return -1;
            }
            if (have)
                continue;
            b = (sql_buf){.n = 0};
            sql_add(&b, "ALTER TABLE %s ADD COLUMN %s %s", t->name,
                    t->cols[k].name, t->cols[k].type);
            if (schema_exec(db, path, &b, err, errlen) < 0)
                return -1;
        }
        if (t->index) {
            b = (sql_buf){.n = 0};
            sql_add(&b, "CREATE INDEX IF NOT EXISTS %s", t->index);
            if (schema_exec(db, path, &b, err, errlen) < 0)
                return -1;
        }
    }
    return 0;
}

/* schema_tables in one transaction: a database is changed wholly or not
 * at all. */
static int schema_apply(sqlite3 *db, const char *path, char *err,
                        size_t errlen)
{
    sql_buf b = {.n = 0};
    sql_add(&b, "BEGIN");
    if (schema_exec(db, path, &b, err, errlen) < 0)
        return -1;
    int rc = schema_tables(db, path, err, errlen);
    b = (sql_buf){.n = 0};
    sql_add(&b, rc < 0 ? "ROLLBACK" : "COMMIT");
    if (schema_exec(db, path, &b, rc < 0 ? NULL : err, rc < 0 ? 0 : errlen)
        < 0)
        rc = -1;
    return rc;
}

/* A table's INSERT (insert 1) or INSERT OR REPLACE (2) of a row, cols[k]
 * its parameter k + 1, or (insert 0) the start of its SELECT: its columns
 * in cols' order, to which the caller adds the rest. */
static void table_sql(sql_buf *b, const char *table, const st_column *cols,
                      size_t ncols, int insert)
{
    if (insert)
        sql_add(b, "INSERT %sINTO %s(", insert == 2 ? "OR REPLACE " : "",
                table);
    else
        sql_add(b, "SELECT ");
    for (size_t k = 0; k < ncols; k++)
        sql_add(b, "%s%s", k ? ", " : "", cols[k].name);
    if (insert) {
        sql_add(b, ") VALUES (");
        for (size_t k = 0; k < ncols; k++)
            sql_add(b, "%s?", k ? ", " : "");
        sql_add(b, ")");
    }
}

/* The jobs' SELECT: every column, then what the reports say of the job
 * (nreports, last_metric, metric_iter). */
static void job_select_sql(sql_buf *b)
{
    table_sql(b, "jobs", job_cols, NJOB_COLS, 0);
    sql_add(b, ", (SELECT count(*) FROM reports r WHERE r.job = jobs.id) "
            "AS nreports, (SELECT r.metric FROM reports r WHERE r.job = "
            "jobs.id AND r.metric IS NOT NULL ORDER BY r.iter DESC LIMIT 1) "
            "AS last_metric, (SELECT r.iter FROM reports r WHERE r.job = "
            "jobs.id AND r.metric IS NOT NULL ORDER BY r.iter DESC LIMIT 1) "
            "AS metric_iter FROM jobs ORDER BY id");
}

/* The field of row r that column c holds (ROW_VALUE: its value). */
#define ROW_FIELD(r, c, type) ((type *)(void *)((char *)(r) + (c)->off))
#define ROW_VALUE(r, c, type) \
    (*(const type *)(const void *)((const char *)(r) + (c)->off))

/* Binds parameter i of st to what column c holds of row j (an sd_job
 * for a CK_FN column). */
static void row_put_col(sqlite3_stmt *st, int i, const st_column *c,
                        const void *j)
{
    switch (c->field) {
    case CK_REAL: sqlite3_bind_double(st, i, ROW_VALUE(j, c, double)); break;
    case CK_REAL_INF: case CK_REAL_NAN:
        bind_num(st, i, ROW_VALUE(j, c, double));
        break;
    case CK_REAL_POS:
        bind_num(st, i, ROW_VALUE(j, c, double) > 0 ? ROW_VALUE(j, c, double)
                                                     : NAN);
        break;
    case CK_INT: sqlite3_bind_int(st, i, ROW_VALUE(j, c, int)); break;
    case CK_UINT: sqlite3_bind_int64(st, i, ROW_VALUE(j, c, unsigned)); break;
    case CK_I64: sqlite3_bind_int64(st, i, ROW_VALUE(j, c, int64_t)); break;
    case CK_I64_0:
        if (ROW_VALUE(j, c, int64_t))
            sqlite3_bind_int64(st, i, ROW_VALUE(j, c, int64_t));
        else
            sqlite3_bind_null(st, i);
        break;
    case CK_LONG: sqlite3_bind_int64(st, i, ROW_VALUE(j, c, long)); break;
    case CK_U64:
        sqlite3_bind_int64(st, i, (sqlite3_int64)ROW_VALUE(j, c, uint64_t));
        break;
    case CK_ULL:
        sqlite3_bind_int64(st, i,
                           (sqlite3_int64)ROW_VALUE(j, c, unsigned long long));
        break;
    case CK_TEXT: case CK_TEXT_REQ:
        bind_str(st, i, ROW_VALUE(j, c, char *));
        break;
    case CK_CHARS: {
        const char *v = &ROW_VALUE(j, c, char);
        bind_str(st, i, v[0] ? v : NULL);
        break;
    }
    case CK_NAME: {
        int v = ROW_VALUE(j, c, int);
        bind_str(st, i, v >= 0 && v < c->n ? c->names[v] : NULL);
        break;
    }
    case CK_FN: c->put(st, i, (const sd_job *)j); break;
    case CK_NONE: break;
    }
}

/* Sets what column c holds of row j from result column i of st (ld: a
 * job's, for a CK_FN column). */
static void row_get_col(sqlite3_stmt *st, int i, const st_column *c,
                        void *j, job_load *ld)
{
    switch (c->field) {
    case CK_REAL: *ROW_FIELD(j, c, double) = sqlite3_column_double(st, i);
        break;
    case CK_REAL_INF:
        *ROW_FIELD(j, c, double) = col_null(st, i)
            ? INFINITY : sqlite3_column_double(st, i);
        break;
    case CK_REAL_NAN: case CK_REAL_POS:
        *ROW_FIELD(j, c, double) = col_num(st, i);
        break;
    case CK_INT: *ROW_FIELD(j, c, int) = sqlite3_column_int(st, i); break;
    case CK_UINT:
        *ROW_FIELD(j, c, unsigned) = (unsigned)sqlite3_column_int64(st, i);
        break;
    case CK_I64: case CK_I64_0:
        *ROW_FIELD(j, c, int64_t) = sqlite3_column_int64(st, i);
        break;
    case CK_LONG: *ROW_FIELD(j, c, long) = (long)sqlite3_column_int64(st, i);
        break;
    case CK_U64:
        *ROW_FIELD(j, c, uint64_t) = (uint64_t)sqlite3_column_int64(st, i);
        break;
    case CK_ULL:
        *ROW_FIELD(j, c, unsigned long long) =
            (unsigned long long)sqlite3_column_int64(st, i);
        break;
    case CK_TEXT:
        if (!col_null(st, i))
            *ROW_FIELD(j, c, char *) = col_strdup(st, i);
        break;
    case CK_TEXT_REQ: *ROW_FIELD(j, c, char *) = col_strdup(st, i); break;
    case CK_CHARS: {
        const char *v = col_str(st, i);
        if (v)
            snprintf(ROW_FIELD(j, c, char), c->size, "%s", v);
        break;
    }
    case CK_NAME: {
        const char *v = col_str(st, i);
        int k = 0;
        while (v && k < c->n && strcmp(v, c->names[k]))
            k++;
        *ROW_FIELD(j, c, int) = v && k < c->n ? k : c->dflt;
        break;
    }
    case CK_FN: c->get(st, i, (sd_job *)j, ld); break;
    case CK_NONE: break;
    }
}

/* ------------------------------------------------------------ the store */

enum { ST_BEGIN, ST_COMMIT, ST_REPORT, ST_ALLOC, ST_EVENT, ST_JOB,
       ST_DEL_JOB, ST_DEL_REPORTS, ST_DEL_ALLOCS, ST_DEL_EVENTS, ST_SET_META,
       ST_VALUE_LOSS, ST_VALUE_METRIC, ST_ARRAY, ST_N };

/* NULL: the INSERT of a row, made from its table's columns (made_sql). */
static const char *const sql_text[ST_N] = {
    "BEGIN",
    "COMMIT",
    NULL,
    NULL,
    NULL,
    NULL,
    "DELETE FROM jobs WHERE id = ?",
    "DELETE FROM reports WHERE job = ?",
    "DELETE FROM allocs WHERE job = ?",
    "DELETE FROM events WHERE job = ?",
    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
    "SELECT iter, loss, t FROM reports WHERE job = ?1 AND (iter > ?2 OR "
    "iter = 0) ORDER BY iter",
    "SELECT iter, metric, t FROM reports WHERE job = ?1 AND (iter > ?2 OR "
    "iter = 0) AND (metric IS NOT NULL OR iter = 0) ORDER BY iter",
    NULL,
};

/* The statements made from a table's columns (table_sql). */
static const struct made_sql {
    int st;
    const char *table;
    const st_column *cols;
    size_t ncols;
    int replace;          /* INSERT OR REPLACE (a keyed row), or INSERT */
} made_sql[] = {
    {ST_REPORT, "reports", report_cols, NREPORT_COLS, 1},
    {ST_ALLOC, "allocs", alloc_cols, NALLOC_COLS, 1},
    {ST_EVENT, "events", event_cols, NEVENT_COLS, 0},
    {ST_JOB, "jobs", job_cols, NJOB_COLS, 1},
    {ST_ARRAY, "arrays", array_cols, NARRAY_COLS, 1},
};

static const char pragmas[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA application_id=1936482673;"; /* STORE_APP_ID, "slaq" */

struct sd_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    sqlite3_stmt *sw[STORE_SWEEP_STMTS]; /* store_sweep.c's */
    sqlite3_stmt *sh[STORE_SHARE_STMTS]; /* store_shares.c's */
    int in_txn;
    uint64_t failures;    /* failed statements and commits */
    int broken;           /* a write failed in the open transaction */
    int failing;          /* the last commit failed: writes are retried */
    double retry_at;      /* monotonic: next attempt while failing */
    char error[256];      /* the last failure */
    /* Reports written since the last good commit, kept to be written
     * again if it fails (bounded: beyond SD_STORE_PENDING the oldest are
     * lost and counted). */
    report_row *pend;
    size_t npend, cappend;
    uint64_t lost;
    /* Reports written into the open transaction that memory could not
     * keep (out of memory): lost if that transaction fails. */
    uint64_t unkept;
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

/* One integer from a one-row query: 0 with *v (-1 when there is no
 * row), or -1 when the query fails (sqlite3_errmsg says why). */
static int query_row(sqlite3 *db, const char *sql, sqlite3_int64 *v)
{
    sqlite3_stmt *st;
    *v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The same, -1 whether there is no row or the query fails. */
static sqlite3_int64 query_int(sqlite3 *db, const char *sql)
{
    sqlite3_int64 v;
    query_row(db, sql, &v);
    return v;
}

/*
 * Decides whether the open file may be used: 0, or -1 with err filled.
 * Ours: application_id "slaq", or (written before it was set) tables jobs
 * and reports. An SQLite file without tables is set up only with init.
 * A file that cannot be read now (out of memory, an I/O error) is not
 * judged: the error says so, not that the file is someone else's.
 */
static int check_owner(sqlite3 *db, const char *path, int init, char *err,
                       size_t errlen)
{
    sqlite3_int64 app, ours, tables;
    if (query_row(db, "PRAGMA application_id", &app) < 0) {
        int rc = sqlite3_errcode(db);
        if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
            snprintf(err, errlen, "%s is not an SQLite database (%s); slaqd "
                     "does not overwrite it: move it away or choose another "
                     "--state-dir", path, sqlite3_errmsg(db));
        else
            snprintf(err, errlen, "%s: cannot read it: %s", path,
                     sqlite3_errmsg(db));
        return -1;
    }
    if (app == STORE_APP_ID)
        return 0;
    if (query_row(db, "SELECT count(*) FROM sqlite_master WHERE type = "
                  "'table' AND name IN ('jobs', 'reports')", &ours) < 0 ||
        query_row(db, "SELECT count(*) FROM sqlite_master", &tables) < 0) {
        snprintf(err, errlen, "%s: cannot read its tables: %s", path,
                 sqlite3_errmsg(db));
        return -1;
    }
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
        goto err;
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
                        SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL)) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
        goto err;
    }
    if (check_owner(s->db, path, init || fresh, err, errlen) < 0)
        goto err;
    if (sqlite3_exec(s->db, pragmas, NULL, NULL, &msg)) {
        snprintf(err, errlen, "%s: %s", path,
                 msg ? msg : sqlite3_errmsg(s->db));
        goto err;
    }
    if (schema_apply(s->db, path, err, errlen) < 0)
        goto err;
    /* Files an older slaqd created with a looser mode. */
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char f[4200];
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        if (chmod(f, 0600) < 0 && errno != ENOENT) {
            snprintf(err, errlen, "%s: %s", f, strerror(errno));
            goto err;
        }
    }
    sqlite3_busy_timeout(s->db, 2000);
    for (int i = 0; i < ST_N; i++) {
        sql_buf made = {.n = 0};
        for (size_t k = 0; !sql_text[i] && k < sizeof made_sql /
                                                 sizeof *made_sql; k++)
            if (made_sql[k].st == i)
                table_sql(&made, made_sql[k].table, made_sql[k].cols,
                          made_sql[k].ncols, made_sql[k].replace ? 2 : 1);
        assert(sql_text[i] || made.n > 0);
        if (made.over ||
            sqlite3_prepare_v3(s->db, sql_text[i] ? sql_text[i] : made.s,
                               -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL)) {
            snprintf(err, errlen, "%s: %s", path, made.over
                     ? "a row's INSERT is too long" : sqlite3_errmsg(s->db));
            goto err;
        }
    }
    /* Not read is not 0: the next commit would write the count anew. */
    sqlite3_int64 lost;
    if (query_row(s->db, "SELECT value FROM meta WHERE key = "
                  "'reports_lost'", &lost) < 0) {
        snprintf(err, errlen, "%s: cannot read reports_lost: %s", path,
                 sqlite3_errmsg(s->db));
        goto err;
    }
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
err:
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
            size_t cap = grow_cap(s->capagg, s->nagg + 1, 16);
            if (!cap || GROW_ARRAY(s->agg, cap) < 0)
                return; /* not counted: memory is out anyway */
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
    if (!strcmp(path, ":memory:") || !strncmp(path, "file::memory:", 13)) {
        /* An in-memory database (the fuzzers') keeps nothing on disk, so
         * neither does its ledger: no file named ":memory:-lost" in the
         * working directory. */
        s->ledger_fd = -1;
        return;
    }
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
    for (int i = 0; i < STORE_SWEEP_STMTS; i++)
        sqlite3_finalize(s->sw[i]);
    for (int i = 0; i < STORE_SHARE_STMTS; i++)
        sqlite3_finalize(s->sh[i]);
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

static void insert_report(sd_store *s, const report_row *row)
{
    sqlite3_stmt *st = s->st[ST_REPORT];
    for (size_t k = 0; k < NREPORT_COLS; k++)
        row_put_col(st, (int)k + 1, &report_cols[k], row);
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
void store_retry_now(sd_store *s)
{
    if (s)
        s->retry_at = 0;
}

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
            insert_report(s, &s->pend[i]);
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
        s->unkept = 0;
        drop_pending(s, s->npend);
        ledger_committed(s);
        return 0;
    }
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_txn = 0;
    s->broken = 0;
    s->lost += s->unkept; /* rolled back, and not in memory */
    s->unkept = 0;
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
        report_row *np = cap <= SD_STORE_PENDING
                                 ? realloc(s->pend, cap * sizeof *np) : NULL;
        if (np) {
            s->pend = np;
            s->cappend = cap;
        } else if (s->npend > 0) { /* full: the oldest eighth is lost */
            size_t drop = s->npend / 8 ? s->npend / 8 : 1;
            drop_pending(s, drop);
            /* While writes work they are in the open transaction, and lost
             * only if it fails. */
            if (s->failing)
                s->lost += drop;
            else
                s->unkept += drop;
        }
    }
    int kept = 0;
    if (s->npend < s->cappend) {
        char *copy = vec ? strdup(vec) : NULL;
        if (!vec || copy) { /* kept whole, or not at all */
            s->pend[s->npend++] = (report_row){job, *r, metric, copy,
                                               threads, wall_s};
            agg_add(s, job, (int64_t)r->iter);
            kept = 1;
        }
    }
    if (s->failing) {
        if (!kept)
            s->lost++; /* neither written nor kept */
        return; /* written with the others at the next retry */
    }
    if (!kept)
        s->unkept++;
    begin(s);
    report_row row = {job, *r, metric, (char *)vec /* bound, not owned */,
                      threads, wall_s};
    insert_report(s, &row);
}

void store_alloc(sd_store *s, int64_t job, double t, double cores,
                 uint64_t epoch)
{
    if (s->failing && !s->retrying)
        return; /* memory holds it; rewritten on recovery */
    sqlite3_stmt *st = s->st[ST_ALLOC];
    alloc_row row = {job, t, cores, epoch};
    begin(s);
    for (size_t k = 0; k < NALLOC_COLS; k++)
        row_put_col(st, (int)k + 1, &alloc_cols[k], &row);
    step(s, st);
}

void store_event(sd_store *s, double t, int64_t job, const char *kind,
                 const char *detail)
{
    if (!s || (s->failing && !s->retrying))
        return; /* events while the disk refuses writes are not kept */
    sqlite3_stmt *st = s->st[ST_EVENT];
    event_row row = {t, job > 0 ? job : 0, (char *)kind, (char *)detail};
    begin(s);
    for (size_t k = 0; k < NEVENT_COLS; k++)
        row_put_col(st, (int)k + 1, &event_cols[k], &row);
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
    for (size_t k = 0; k < NJOB_COLS; k++)
        row_put_col(st, (int)k + 1, &job_cols[k], j);
    step(s, st);
}

/* The index of the result column called `name`, or -1. */
static int col_index(sqlite3_stmt *st, const char *name)
{
    for (int i = 0; i < sqlite3_column_count(st); i++)
        if (!strcmp(sqlite3_column_name(st, i), name))
            return i;
    return -1;
}

int store_each_job(sd_store *s, sd_job *(*make)(sd_daemon *, int64_t),
                   int (*fn)(sd_daemon *, sd_job *), sd_daemon *d)
{
    sqlite3_stmt *st;
    sql_buf sel = {.n = 0};
    job_select_sql(&sel);
    if (sel.over || sqlite3_prepare_v2(s->db, sel.s, -1, &st, NULL))
        return -1;
    int c_id = col_index(st, "id"), c_n = col_index(st, "nreports"),
        c_metric = col_index(st, "last_metric"),
        c_miter = col_index(st, "metric_iter");
    assert(c_id >= 0 && c_n >= 0 && c_metric >= 0 && c_miter >= 0);
    int rc = 0, step_rc;
    job_load ld = {.d = d};
    user_self(d, &ld.self);
    while ((step_rc = sqlite3_step(st)) == SQLITE_ROW) {
        sd_job *j = make(d, sqlite3_column_int64(st, c_id));
        if (!j) {
            rc = -1;
            break;
        }
        ld.uid_null = 0;
        for (size_t k = 0; k < NJOB_COLS; k++)
            row_get_col(st, (int)k, &job_cols[k], j, &ld);
        if (!col_null(st, c_metric)) {
            j->hist.last_metric = sqlite3_column_double(st, c_metric);
            j->hist.metric_iter = (uint64_t)sqlite3_column_int64(st, c_miter);
        }
        if (!SD_ACTIVE(j->state)) {
            /* Summary of a finished job, without loading its history. */
            sqlite3_stmt *q;
            if (sqlite3_prepare_v2(s->db, "SELECT iter, loss FROM reports "
                    "WHERE job = ? ORDER BY iter DESC LIMIT 1", -1, &q,
                    NULL) == SQLITE_OK) {
                sqlite3_bind_int64(q, 1, j->id);
                if (sqlite3_step(q) == SQLITE_ROW) {
                    j->hist.last_iter = (uint64_t)sqlite3_column_int64(q, 0);
                    j->hist.last_loss = sqlite3_column_double(q, 1);
                }
                sqlite3_finalize(q);
            }
            j->hist.nreports = (uint64_t)sqlite3_column_int64(st, c_n);
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

int store_job_has_event(sd_store *s, int64_t job, const char *kind)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM events WHERE job = ?1 AND "
                           "kind = ?2 LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
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
                                       " 0), coalesce((SELECT max(id) FROM "
                                       "arrays), 0))");
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

void store_put_array(sd_store *s, const sd_array *a)
{
    if (s->failing && !s->retrying)
        return; /* memory holds it; rewritten on recovery */
    sqlite3_stmt *st = s->st[ST_ARRAY];
    begin(s);
    for (size_t k = 0; k < NARRAY_COLS; k++)
        row_put_col(st, (int)k + 1, &array_cols[k], a);
    step(s, st);
}

int store_each_array(sd_store *s, int (*fn)(sd_daemon *, sd_array *),
                     sd_daemon *d)
{
    sqlite3_stmt *st;
    sql_buf sel = {.n = 0};
    table_sql(&sel, "arrays", array_cols, NARRAY_COLS, 0);
    sql_add(&sel, " FROM arrays ORDER BY id");
    if (sel.over || sqlite3_prepare_v2(s->db, sel.s, -1, &st, NULL))
        return -1;
    int rc = 0, step_rc;
    while ((step_rc = sqlite3_step(st)) == SQLITE_ROW) {
        sd_array *a = calloc(1, sizeof *a);
        if (!a) {
            rc = -1;
            break;
        }
        for (size_t k = 0; k < NARRAY_COLS; k++)
            row_get_col(st, (int)k, &array_cols[k], a, NULL);
        if (fn(d, a) < 0) {
            rc = -1;
            break;
        }
    }
    if (step_rc != SQLITE_DONE && step_rc != SQLITE_ROW)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

sqlite3 *store_sqlite(sd_store *s) { return s->db; }
void store_begin(sd_store *s) { begin(s); }
sqlite3_stmt **store_sweep_stmts(sd_store *s) { return s->sw; }
sqlite3_stmt **store_share_stmts(sd_store *s) { return s->sh; }

int store_each_value(sd_store *s, int64_t job, int64_t after, int loss,
                     int (*fn)(void *, int64_t iter, double value, double t),
                     void *arg)
{
    sqlite3_stmt *st = s->st[loss ? ST_VALUE_LOSS : ST_VALUE_METRIC];
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, after);
    int rc = 0, step_rc;
    while (!rc && (step_rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = fn(arg, sqlite3_column_int64(st, 0), col_null(st, 1)
                ? NAN : sqlite3_column_double(st, 1),
                sqlite3_column_double(st, 2));
    if (!rc && step_rc != SQLITE_DONE)
        rc = -1;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}
