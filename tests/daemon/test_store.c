/*
 * test_store.c — state.db's store (src/daemon/store*.c) on real SQLite
 * files in a temporary directory: a job's every column comes back after a
 * reopen, an update replaces its row, an older slaqd's database gains the
 * columns added since and keeps its rows, a full disk is an error that
 * leaves the last commit whole, a task array's and the sweeps' rows and a
 * recorded run read back, and docs/state-db.md describes the schema the
 * store creates.
 *
 * `test_store DOC` runs only that last test, against DOC instead of
 * docs/state-db.md: tests/cli/test_state_db_doc.sh shows with it that a
 * doc missing a column, with one too many or with a wrong type fails.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/store_sql.h"
#include "daemon/suspend.h"

static char dir[64], path[128];
static const char *state_db_doc = STATE_DB_DOC; /* or main's argument */

static int dir_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/slaq-test-store-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/state.db", dir);
    return 0;
}

static int dir_teardown(void **state)
{
    (void)state;
    static const char *const suffix[] = {"", "-wal", "-shm", "-lost",
                                         "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char f[160];
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        unlink(f);
    }
    return rmdir(dir);
}

static sd_store *open_ok(int init)
{
    char err[512] = "";
    sd_store *s = store_open(path, init, err, sizeof err);
    if (!s)
        fail_msg("store_open: %s", err);
    return s;
}

/* One integer from a query on a connection of the test's own. */
static long long sql_int(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void sql_exec(const char *sql)
{
    sqlite3 *db;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* ---------------------------------------------------- jobs read back */

/* A job with every field a column holds set to a value of its own. */
static sd_job *job_full(sd_daemon *d, int64_t id, sd_state state)
{
    sd_job *j = job_new(d, id);
    j->name = strdup("train-7");
    j->cmd = strdup("[\"python3\",\"t.py\"]");
    j->cwd = strdup("/srv/w");
    j->goals.weight = 2.5;
    j->goals.max_cores = 3.25;
    j->goals.target = 0.125;
    j->goals.max_iters = 1234567890123ULL;
    j->goals.max_time = 600.5;
    j->proc.managed = 1;
    j->state = state;
    j->proc.pid = 4321;
    j->proc.pstart = 9876543210ULL;
    j->proc.have_status = 1;
    j->proc.exit_status = 256;
    j->reason = strdup("target reached");
    j->submitted = 1700000000.25;
    j->started = 1700000001.5;
    j->ended = 1700000099.75;
    snprintf(j->secret, sizeof j->secret, "%s", "ab12cd34");
    j->goals.convergence = SLAQ_CONV_LINEAR;
    j->hist.metric_name = strdup("accuracy");
    j->proc.suspended = SD_SUSP_CHECKPOINT;
    j->continued_by = 11;
    j->resumed_from = 5;
    j->sweep = 3;
    j->place.node_at = strdup("n4");
    j->place.restartable = 1;
    j->place.pin = strdup("n4");
    j->place.launch = json_pack("{s:s, s:i}", "type", "start", "id", (int)id);
    j->kind = SLAQ_JOB_QUERY;
    j->uid = 4242;
    j->user = strdup("alice");
    j->place.gen = 7;
    j->array = 9;
    j->array_index = 0; /* a task's index 0 is not "no task" */
    j->goals.goal.deadline = 1700001000.5;
    j->goals.goal.accuracy = 0.9;
    j->goals.goal.maximize = 0;
    j->goals.goal.urgency = 4;
    j->goals.goal.stop = SLAQ_STOP_OPTSTOP;
    j->place.moves = 2;
    j->place.move_s = 1.25;
    j->env = strdup("[\"A=1\"]");
    return j;
}

static sd_job *loaded[8];
static size_t nloaded;

static int keep(sd_daemon *d, sd_job *j)
{
    (void)d;
    loaded[nloaded++] = j;
    return 0;
}

static void load_all(sd_store *s, sd_daemon *d)
{
    nloaded = 0;
    assert_int_equal(store_each_job(s, job_new, keep, d), 0);
}

static void test_every_column_of_a_job_comes_back_after_a_reopen(void **st)
{
    (void)st;
    sd_daemon *d = calloc(1, sizeof *d);
    sd_store *s = open_ok(0);
    sd_job *a = job_full(d, 1, SD_RUNNING), *b = job_full(d, 2, SD_DONE);
    b->goals.max_cores = INFINITY;
    b->proc.have_status = 0;
    b->array = 0; /* not a task, no goal, never moved: NULL columns */
    b->array_index = 0;
    slaq_goal_init(&b->goals.goal);
    b->place.move_s = NAN;
    b->secret[0] = '\0';
    store_put_job(s, a);
    store_put_job(s, b);
    slaq_report r = {.iter = 4, .loss = 0.5, .cpu_s = 1, .samples = 10,
                     .t = 1700000050};
    store_report(s, 2, &r, 0.875, 0, 0);
    slaq_report r1 = {.iter = 1, .loss = 0.75, .cpu_s = 2, .samples = 20,
                      .t = 1700000010};
    store_report_vec(s, 1, &r1, NAN, "{\"est\":[1]}", 4, 0.5);
    store_alloc(s, 1, 1700000011.5, 2.5, 7);
    store_event(s, 1700000012.5, 0, "policy", "fair");
    store_event(s, 1700000013.5, 1, "suspend", NULL);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    job_free_all(d);
    /* A report's columns; NULL for what it did not say. */
    assert_int_equal(sql_int("SELECT iter = 4 AND loss = 0.5 AND cpu_s = 1 "
                             "AND samples = 10 AND t = 1700000050 AND "
                             "metric = 0.875 AND estimates IS NULL AND "
                             "threads IS NULL AND wall_s IS NULL FROM "
                             "reports WHERE job = 2"), 1);
    assert_int_equal(sql_int("SELECT iter = 1 AND loss = 0.75 AND metric IS "
                             "NULL AND estimates = '{\"est\":[1]}' AND "
                             "threads = 4 AND wall_s = 0.5 FROM reports "
                             "WHERE job = 1"), 1);
    assert_int_equal(sql_int("SELECT t = 1700000011.5 AND cores = 2.5 AND "
                             "epoch = 7 FROM allocs WHERE job = 1"), 1);
    assert_int_equal(sql_int("SELECT count(*) FROM events WHERE (job IS "
                             "NULL AND t = 1700000012.5 AND kind = 'policy' "
                             "AND detail = 'fair') OR (job = 1 AND t = "
                             "1700000013.5 AND kind = 'suspend' AND detail "
                             "IS NULL)"), 2);
    /* What the columns hold: names, and NULL for none. */
    assert_int_equal(sql_int("SELECT state = 'running' AND direction = 'min' "
                             "AND array_id = 9 AND array_index = 0 AND "
                             "secret = 'ab12cd34' FROM jobs WHERE id = 1"), 1);
    assert_int_equal(sql_int("SELECT state = 'done' AND direction = 'max' AND "
                             "array_id IS NULL AND array_index IS NULL AND "
                             "deadline IS NULL AND accuracy IS NULL AND "
                             "move_s IS NULL AND secret IS NULL AND "
                             "max_cores IS NULL FROM jobs WHERE id = 2"), 1);

    s = open_ok(0);
    load_all(s, d);
    assert_int_equal(nloaded, 2);
    sd_job *j = loaded[0];
    assert_int_equal(j->id, 1);
    assert_string_equal(j->name, "train-7");
    assert_string_equal(j->cmd, "[\"python3\",\"t.py\"]");
    assert_string_equal(j->cwd, "/srv/w");
    assert_true(j->goals.weight == 2.5 && j->goals.max_cores == 3.25);
    assert_true(j->goals.target == 0.125 && j->goals.max_time == 600.5);
    assert_true(j->goals.max_iters == 1234567890123ULL);
    assert_int_equal(j->proc.managed, 1);
    assert_int_equal(j->state, SD_RUNNING);
    assert_int_equal(j->proc.pid, 4321);
    assert_true(j->proc.pstart == 9876543210ULL);
    assert_true(j->proc.have_status && j->proc.exit_status == 256);
    assert_string_equal(j->reason, "target reached");
    assert_true(j->submitted == 1700000000.25 && j->started == 1700000001.5
                && j->ended == 1700000099.75);
    assert_string_equal(j->secret, "ab12cd34");
    assert_int_equal(j->goals.convergence, SLAQ_CONV_LINEAR);
    assert_string_equal(j->hist.metric_name, "accuracy");
    assert_int_equal(j->proc.suspended, SD_SUSP_CHECKPOINT);
    assert_true(j->continued_by == 11 && j->resumed_from == 5 &&
                j->sweep == 3);
    assert_string_equal(j->place.node_at, "n4");
    assert_int_equal(j->place.restartable, 1);
    assert_string_equal(j->place.pin, "n4");
    assert_non_null(j->place.launch); /* kept while the job is active */
    assert_string_equal(json_string_value(json_object_get(j->place.launch,
                                                          "type")), "start");
    assert_int_equal(j->kind, SLAQ_JOB_QUERY);
    assert_int_equal(j->uid, 4242);
    assert_string_equal(j->user, "alice");
    assert_int_equal(j->place.gen, 7);
    assert_true(j->array == 9 && j->array_index == 0);
    assert_true(j->goals.goal.deadline == 1700001000.5 &&
                j->goals.goal.accuracy == 0.9);
    assert_int_equal(j->goals.goal.maximize, 0);
    assert_int_equal(j->goals.goal.urgency, 4);
    assert_int_equal(j->goals.goal.stop, SLAQ_STOP_OPTSTOP);
    assert_true(j->place.moves == 2 && j->place.move_s == 1.25);
    assert_string_equal(j->env, "[\"A=1\"]");
    /* The finished one: no cap, no status, no launch message; its last
     * report and metric summarised. */
    j = loaded[1];
    assert_true(isinf(j->goals.max_cores));
    assert_false(j->proc.have_status);
    assert_null(j->place.launch);
    assert_int_equal(j->state, SD_DONE);
    assert_true(j->array == 0 && j->array_index == 0);
    assert_true(isinf(j->goals.goal.deadline) &&
                isnan(j->goals.goal.accuracy));
    assert_true(j->goals.goal.maximize == 1 && j->goals.goal.urgency == 1);
    assert_true(isnan(j->place.move_s));
    assert_string_equal(j->secret, "");
    assert_int_equal(j->hist.nreports, 1);
    assert_int_equal(j->hist.last_iter, 4);
    assert_true(j->hist.last_loss == 0.5 && j->hist.last_metric == 0.875);
    assert_int_equal(j->hist.metric_iter, 4);
    store_close(s);
    job_free_all(d);
    free(d);
}

static void test_putting_a_job_again_replaces_its_row(void **st)
{
    (void)st;
    sd_daemon *d = calloc(1, sizeof *d);
    sd_store *s = open_ok(0);
    sd_job *j = job_full(d, 1, SD_RUNNING);
    store_put_job(s, j);
    assert_int_equal(store_flush(s), 0);
    j->state = SD_CANCELLED;
    free(j->reason);
    j->reason = strdup("cancelled");
    store_put_job(s, j);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    job_free_all(d);
    assert_int_equal(sql_int("SELECT count(*) FROM jobs"), 1);
    assert_int_equal(sql_int("SELECT state = 'cancelled' AND reason = "
                             "'cancelled' AND launch IS NULL FROM jobs"), 1);
    free(d);
}

/* ------------------------------------------------------ migration */

/* The schema of the first slaqd that wrote state.db (before secrets,
 * metrics, sweeps, clusters, queries and owners), with one finished job. */
static const char oldest_schema[] =
    "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT, cmd TEXT, "
    " cwd TEXT, weight REAL, max_cores REAL, target REAL, max_iters INTEGER,"
    " max_time REAL, managed INTEGER, state TEXT, pid INTEGER, "
    " pstart INTEGER, exit_status INTEGER, reason TEXT, submitted REAL, "
    " started REAL, ended REAL);"
    "CREATE TABLE reports(job INTEGER, iter INTEGER, loss REAL, cpu_s REAL,"
    " samples REAL, t REAL, PRIMARY KEY(job, iter)) WITHOUT ROWID;"
    "CREATE TABLE allocs(job INTEGER, t REAL, cores REAL, epoch INTEGER, "
    " PRIMARY KEY(job, epoch)) WITHOUT ROWID;"
    "CREATE TABLE events(t REAL, job INTEGER, kind TEXT, detail TEXT);"
    "INSERT INTO jobs VALUES (1, 'old', '[\"sleep\"]', '/tmp', 1, NULL, 0, "
    " 0, 0, 1, 'done', 0, 0, 0, NULL, 10, 11, 12);"
    "INSERT INTO reports VALUES (1, 0, 2.0, 0.1, 1, 11), "
    " (1, 1, 1.5, 0.1, 1, 11.5);"
    "CREATE TABLE sweeps(id INTEGER PRIMARY KEY, name TEXT, spec TEXT, "
    " cwd TEXT, state TEXT, note TEXT, created REAL, ended REAL, "
    " reached REAL, reached_config INTEGER, best REAL, best_config INTEGER);";

static void test_an_older_database_gains_the_columns_and_keeps_its_rows(
    void **st)
{
    (void)st;
    sql_exec(oldest_schema);
    sd_daemon *d = calloc(1, sizeof *d);
    sd_store *s = open_ok(0);
    /* Every column of the schema is there now. */
    assert_int_equal(sql_int("SELECT count(*) FROM pragma_table_info('jobs') "
                             "WHERE name IN ('secret', 'convergence', 'uid', "
                             "'user', 'gen', 'launch', 'kind')"), 7);
    assert_int_equal(sql_int("SELECT count(*) FROM pragma_table_info("
                             "'reports') WHERE name IN ('metric', "
                             "'estimates')"), 2);
    assert_int_equal(sql_int("SELECT count(*) FROM pragma_table_info("
                             "'sweeps') WHERE name IN ('uid', 'user')"), 2);
    assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE name "
                             "IN ('meta', 'sweep_configs', 'sweep_log', "
                             "'events_job')"), 4);
    /* The old job reads back as an older slaqd's: slaqd's own user, no
     * class, an ML job. */
    load_all(s, d);
    assert_int_equal(nloaded, 1);
    sd_job *j = loaded[0];
    assert_string_equal(j->name, "old");
    assert_int_equal(j->state, SD_DONE);
    assert_true(isinf(j->goals.max_cores));
    assert_int_equal(j->uid, geteuid());
    assert_non_null(j->user);
    assert_int_equal(j->goals.convergence, SLAQ_CONV_UNKNOWN);
    assert_int_equal(j->kind, SLAQ_JOB_ML);
    assert_int_equal(j->hist.nreports, 2);
    assert_true(j->hist.last_loss == 1.5);
    /* And it takes the new columns' values. */
    slaq_report r = {.iter = 2, .loss = 1.0, .t = 12};
    store_report(s, 1, &r, 0.5, 0, 0);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    job_free_all(d);
    free(d);
    assert_int_equal(sql_int("SELECT count(*) FROM reports WHERE metric = "
                             "0.5"), 1);
}

/* A database whose migration fails half-way (its sweep_log is a view,
 * which takes no column) is left as it was: the columns added to jobs
 * before the failure are not there either. */
static void test_a_migration_that_fails_changes_nothing(void **st)
{
    (void)st;
    sql_exec(oldest_schema);
    sql_exec("CREATE VIEW sweep_log AS SELECT 1 AS other");
    char err[512] = "";
    assert_null(store_open(path, 0, err, sizeof err));
    assert_non_null(strstr(err, "view"));
    assert_int_equal(sql_int("SELECT count(*) FROM pragma_table_info('jobs') "
                             "WHERE name = 'secret'"), 0);
    assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE name "
                             "IN ('meta', 'sweep_configs')"), 0);
}

/* slaq replay reads an older database as it is, without changing it: a
 * job without a convergence column has none. */
static int old_jobs;

static int on_old_job(void *arg, const store_run_job *j)
{
    (void)arg;
    old_jobs++;
    assert_int_equal(j->id, 1);
    assert_null(j->convergence);
    assert_true(isinf(j->max_cores) && j->started == 11);
    return 0;
}

static void test_a_run_of_an_older_database_reads_as_it_is(void **st)
{
    (void)st;
    sql_exec(oldest_schema);
    char err[256];
    store_run *run = store_run_open(path, err, sizeof err);
    assert_non_null(run);
    old_jobs = 0;
    assert_int_equal(store_run_jobs(run, 0, on_old_job, NULL), 0);
    assert_int_equal(old_jobs, 1);
    store_run_close(run);
    assert_int_equal(sql_int("SELECT count(*) FROM pragma_table_info('jobs') "
                             "WHERE name = 'convergence'"), 0);
}

/* --------------------------------------------------------- full disk */

static int rewrites;

static void rewrite_jobs(void *arg)
{
    rewrites++;
    sd_daemon *d = arg;
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i])
            store_put_job(d->store, d->jobs[i]);
}

static void test_a_full_disk_is_an_error_and_leaves_the_last_commit_whole(
    void **st)
{
    (void)st;
    /* The store's retry timer reads this clock: a second passes when the
     * test says so. */
    sd_clock clk = {.wall = 1.7e9, .mono = 1000, .cpu = 0};
    sd_clock_set(&clk);
    sd_daemon *d = calloc(1, sizeof *d);
    sd_store *s = d->store = open_ok(0);
    store_set_rewrite(s, rewrite_jobs, d);
    sd_job *j = job_full(d, 1, SD_RUNNING);
    store_put_job(s, j);
    assert_int_equal(store_flush(s), 0);
    /* The database may not grow by one more page. */
    char sql[96];
    long long pages = sql_int("PRAGMA page_count");
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", pages);
    assert_int_equal(sqlite3_exec(store_sqlite(s), sql, NULL, NULL, NULL),
                     SQLITE_OK);
    static char vec[2000];
    memset(vec, 'x', sizeof vec - 1);
    j->state = SD_STOPPING;
    store_put_job(s, j);
    for (uint64_t i = 1; i <= 200; i++) {
        slaq_report r = {.iter = i, .loss = 1.0 / (double)i, .t = (double)i};
        store_report_vec(s, 1, &r, NAN, vec, 0, 0);
    }
    assert_int_equal(store_flush(s), -1);
    assert_true(store_failing(s));
    assert_non_null(strstr(store_error(s), "full"));
    assert_true(store_failures(s) >= 1);
    assert_int_equal(store_pending(s), 200);
    /* Nothing of the failed transaction is in the file: the job as it
     * was committed, no report. */
    assert_int_equal(sql_int("SELECT count(*) FROM reports"), 0);
    assert_int_equal(sql_int("SELECT state = 'running' FROM jobs"), 1);
    /* Room again: no retry before a second has passed since the failure
     * (the calls in between keep failing, nothing is written) ... */
    assert_int_equal(sqlite3_exec(store_sqlite(s), "PRAGMA max_page_count = "
                                  "1073741823", NULL, NULL, NULL), SQLITE_OK);
    clk.mono += 0.99;
    assert_int_equal(store_flush(s), -1);
    assert_true(store_failing(s));
    assert_int_equal(rewrites, 0);
    assert_int_equal(sql_int("SELECT count(*) FROM reports"), 0);
    /* ... and the retry a second later writes what memory holds, the
     * job's latest row and every kept report. */
    clk.mono += 0.01;
    assert_int_equal(store_flush(s), 0);
    assert_false(store_failing(s));
    assert_int_equal(rewrites, 1);
    assert_int_equal(store_pending(s), 0);
    assert_int_equal(sql_int("SELECT count(*) FROM reports"), 200);
    assert_int_equal(sql_int("SELECT state = 'stopping' FROM jobs"), 1);
    store_close(s);
    job_free_all(d);
    free(d);
    sd_clock_set(NULL);
}

/* ------------------------------------------------------------ sweeps */

static int sweeps_seen;

static int check_sweep(void *arg, const store_sweep_row *w)
{
    (void)arg;
    sweeps_seen++;
    assert_int_equal(w->id, 2);
    assert_string_equal(w->name, "grid");
    assert_string_equal(w->spec, "{\"name\":\"grid\"}");
    assert_null(w->note);
    assert_true(w->created == 100 && w->reached == -1 && isnan(w->best));
    assert_int_equal(w->best_config, -1);
    assert_int_equal(w->uid, 1001);
    assert_string_equal(w->user, "bob");
    return 0;
}

static int calls_seen;

static int check_call(void *arg, const store_sweep_call *c)
{
    (void)arg;
    assert_int_equal(c->seq, calls_seen);
    calls_seen++;
    if (c->seq == 1) {
        assert_string_equal(c->kind, "report");
        assert_true(c->metric == 0.25 && c->epoch_s == 3);
    } else {
        assert_true(isnan(c->metric));
    }
    return 0;
}

static int check_jobs(void *arg, int64_t idx, const char *jobs)
{
    (void)arg;
    assert_string_equal(jobs, idx == 0 ? "[4,9]" : "[]");
    return 0;
}

static sd_array *arrays_read[4];
static size_t narrays_read;

static int keep_array(sd_daemon *d, sd_array *a)
{
    (void)d;
    arrays_read[narrays_read++] = a;
    return 0;
}

static void array_drop(sd_array *a)
{
    free(a->name);
    free(a->user);
    free(a->cmd);
    free(a->cwd);
    free(a->env);
    free(a);
}

/* Every column of a task array comes back, and a NULL env reads as none. */
static void test_an_arrays_columns_come_back_after_a_reopen(void **st)
{
    (void)st;
    sd_store *s = open_ok(0);
    sd_array a = {.id = 12, .uid = 4242, .user = "alice", .name = "grid",
                  .cmd = "[\"t\",\"{index}\"]", .cwd = "/srv/w",
                  .env = "[\"A=1\"]", .first = -3, .last = 3000000000L,
                  .max_running = 4, .estimate_s = 90.5,
                  .submitted = 1700000000.25, .cancelled = 1};
    sd_array b = {.id = 13, .user = "bob", .name = "b", .cmd = "[]",
                  .cwd = "/", .first = 0, .last = 0};
    store_put_array(s, &a);
    store_put_array(s, &b);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    assert_int_equal(sql_int("SELECT count(*) FROM arrays WHERE env IS "
                             "NULL AND id = 13"), 1);
    s = open_ok(0);
    narrays_read = 0;
    assert_int_equal(store_each_array(s, keep_array, NULL), 0);
    assert_int_equal(narrays_read, 2);
    sd_array *r = arrays_read[0];
    assert_int_equal(r->id, 12);
    assert_int_equal(r->uid, 4242);
    assert_string_equal(r->user, "alice");
    assert_string_equal(r->name, "grid");
    assert_string_equal(r->cmd, "[\"t\",\"{index}\"]");
    assert_string_equal(r->cwd, "/srv/w");
    assert_string_equal(r->env, "[\"A=1\"]");
    assert_true(r->first == -3 && r->last == 3000000000L);
    assert_int_equal(r->max_running, 4);
    assert_true(r->estimate_s == 90.5 && r->submitted == 1700000000.25);
    assert_int_equal(r->cancelled, 1);
    r = arrays_read[1];
    assert_int_equal(r->id, 13);
    assert_null(r->env);
    assert_int_equal(r->cancelled, 0);
    array_drop(arrays_read[0]);
    array_drop(arrays_read[1]);
    store_close(s);
}

static void test_a_sweeps_rows_come_back(void **st)
{
    (void)st;
    sd_store *s = open_ok(0);
    store_sweep_row w = {
        .id = 2, .name = "grid", .spec = "{\"name\":\"grid\"}",
        .cwd = "/w", .state = "running", .created = 100, .ended = 0,
        .reached = -1, .reached_config = -1, .best = NAN,
        .best_config = -1, .uid = 1001, .user = "bob",
    };
    assert_int_equal(store_put_sweep(s, &w), 0);
    store_sweep_config c[2] = {
        {.sweep = 2, .idx = 0, .params = "{\"lr\":1}", .cmd = "[\"t\"]",
         .jobs = "[4]", .state = "running", .cls = "promising", .p = 0.5,
         .epochs = 3, .best = 0.25},
        {.sweep = 2, .idx = 1, .params = "{\"lr\":2}", .cmd = "[\"t\"]",
         .jobs = "[]", .state = "new", .cls = NULL, .p = NAN, .epochs = 0,
         .best = NAN},
    };
    assert_int_equal(store_put_sweep_configs(s, c, 2), 0);
    assert_int_equal(store_set_sweep_config_jobs(s, 2, 0, "[4,9]"), 0);
    store_sweep_call calls[2] = {
        {0, 1.5, "next", 0, 0, NAN, NAN},
        {1, 4.5, "report", 0, 1, 0.25, 3},
    };
    for (int i = 0; i < 2; i++)
        assert_int_equal(store_sweep_call_add(s, 2, &calls[i]), 0);
    assert_int_equal(store_flush(s), 0);
    store_close(s);

    s = open_ok(0);
    sweeps_seen = calls_seen = 0;
    assert_int_equal(store_each_sweep(s, check_sweep, NULL), 0);
    assert_int_equal(sweeps_seen, 1);
    assert_int_equal(store_each_sweep_call(s, 2, check_call, NULL), 0);
    assert_int_equal(calls_seen, 2);
    assert_int_equal(store_each_sweep_jobs(s, 2, check_jobs, NULL), 0);
    store_sweep_config got;
    assert_int_equal(store_get_sweep_config(s, 2, 0, &got), 1);
    assert_string_equal(got.state, "running");
    assert_string_equal(got.cls, "promising");
    assert_true(got.p == 0.5 && got.epochs == 3 && got.best == 0.25);
    assert_int_equal(store_get_sweep_config(s, 2, 1, &got), 1);
    assert_null(got.cls);
    assert_true(isnan(got.p) && isnan(got.best));
    assert_int_equal(store_get_sweep_config(s, 2, 5, &got), 0);
    assert_int_equal(store_delete_sweep(s, 2), 0);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    assert_int_equal(sql_int("SELECT (SELECT count(*) FROM sweeps) + "
                             "(SELECT count(*) FROM sweep_configs)"), 0);
}

/* A job's values per iteration, as a sweep feeds its policy. */
struct values { int64_t iter[8]; double v[8]; int n; };

static int keep_value(void *arg, int64_t iter, double v, double t)
{
    (void)t;
    struct values *x = arg;
    x->iter[x->n] = iter;
    x->v[x->n++] = v;
    return x->n == 8;
}

static void test_values_start_after_the_last_seen_and_keep_iteration_0(
    void **st)
{
    (void)st;
    sd_store *s = open_ok(0);
    for (uint64_t i = 0; i <= 4; i++) {
        slaq_report r = {.iter = i, .loss = 10.0 - (double)i, .t = (double)i};
        /* a metric at iterations 2 and 4 only */
        store_report(s, 1, &r, i && i % 2 == 0 ? (double)i / 10 : NAN, 0,
                     0);
    }
    assert_int_equal(store_flush(s), 0);
    struct values x = {.n = 0};
    assert_int_equal(store_each_value(s, 1, 2, 1, keep_value, &x), 0);
    assert_int_equal(x.n, 3); /* iterations 0, 3, 4 of the loss */
    assert_true(x.iter[0] == 0 && x.iter[1] == 3 && x.iter[2] == 4);
    assert_true(x.v[1] == 7.0);
    x.n = 0;
    assert_int_equal(store_each_value(s, 1, 0, 0, keep_value, &x), 0);
    assert_int_equal(x.n, 3); /* 0 (no metric: NaN), 2, 4 */
    assert_true(isnan(x.v[0]) && x.iter[1] == 2 && x.v[2] == 0.4);
    store_close(s);
}

/* -------------------------------------------------- a recorded run */

static int run_jobs, run_reports, run_allocs;
static double run_t0;

static int on_start(void *arg, double t, const char *detail)
{
    (void)arg;
    (void)detail;
    run_t0 = fmax(run_t0, t);
    return 0;
}

static int on_job(void *arg, const store_run_job *j)
{
    (void)arg;
    run_jobs++;
    assert_int_equal(j->id, 2);
    assert_string_equal(j->convergence, "linear");
    assert_true(isinf(j->max_cores));
    return 0;
}

static int on_report(void *arg, int64_t job, const slaq_report *r,
                     double threads, double wall_s)
{
    (void)arg;
    (void)job;
    run_reports++;
    assert_true(r->loss > 0);
    /* As the report said them: what a job's scaling model learnt from. */
    assert_true(threads == 2 && wall_s == 0.25);
    return 0;
}

static int on_alloc(void *arg, int64_t job, uint64_t epoch, double cores,
                    double t)
{
    (void)arg;
    (void)t;
    run_allocs++;
    assert_true(job == 2 && epoch == 8 && cores == 1.5);
    return 0;
}

static void test_a_recorded_run_reads_back_from_its_last_start(void **st)
{
    (void)st;
    sd_daemon *d = calloc(1, sizeof *d);
    sd_store *s = open_ok(0);
    sd_job *a = job_full(d, 1, SD_DONE), *b = job_full(d, 2, SD_DONE);
    a->started = 50;
    b->started = 150;
    b->goals.max_cores = INFINITY;
    store_put_job(s, a);
    store_put_job(s, b);
    store_event(s, 40, 0, "start", NULL);
    store_event(s, 140, 0, "start", NULL);
    slaq_report r = {.iter = 1, .loss = 0.5, .t = 160};
    store_report(s, 2, &r, NAN, 2, 0.25);
    store_alloc(s, 1, 60, 2, 3);
    store_alloc(s, 2, 160, 1.5, 8);
    assert_int_equal(store_flush(s), 0);
    store_close(s);
    job_free_all(d);
    free(d);

    char err[256];
    store_run *run = store_run_open(path, err, sizeof err);
    assert_non_null(run);
    run_t0 = 0;
    assert_int_equal(store_run_events(run, "start", -INFINITY, 1, on_start,
                                      NULL), 0);
    assert_true(run_t0 == 140);
    run_jobs = run_reports = run_allocs = 0;
    assert_int_equal(store_run_jobs(run, run_t0, on_job, NULL), 0);
    assert_int_equal(store_run_reports(run, on_report, NULL), 0);
    assert_int_equal(store_run_allocs(run, run_t0, on_alloc, NULL), 0);
    assert_true(run_jobs == 1 && run_reports == 1 && run_allocs == 1);
    store_run_close(run);
    assert_null(store_run_open("/nonexistent/state.db", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/state.db"));
}

/* ------------------------------------------------ the documentation */

/* docs/state-db.md's tables: "## `NAME`" opens one; its rows are
 * "| `column` | TYPE | ... |". Returns "table.column TYPE" lines. */
static char *doc_columns(void)
{
    FILE *f = fopen(state_db_doc, "r");
    if (!f)
        fail_msg("%s: cannot be read", state_db_doc);
    size_t cap = 16384, n = 0;
    char *out = calloc(1, cap), line[1024], table[64] = "";
    while (fgets(line, sizeof line, f)) {
        char name[64], type[32];
        if (sscanf(line, "## `%63[^`]`", name) == 1) {
            snprintf(table, sizeof table, "%s", name);
        } else if (table[0] && sscanf(line, "| `%63[^`]` | %31[A-Z] |", name,
                                      type) == 2) {
            n += (size_t)snprintf(out + n, cap - n, "%s.%s %s\n", table, name,
                                  type);
            assert_true(n < cap);
        }
    }
    fclose(f);
    return out;
}

/* The same lines from the database's own tables, in the doc's order of
 * tables (that of `schema` in store.c) and columns. */
static char *db_columns(const char *doc)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    size_t cap = 16384, n = 0;
    char *out = calloc(1, cap);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    /* Every table the store made must be in the doc, and the other way
     * round: walk the tables in the doc's order, then any it lacks. */
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT m.name, p.name, p.type "
        "FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = "
        "'table' ORDER BY coalesce(nullif(instr(?1, char(10) || m.name || "
        "'.'), 0), 1e9), m.name, p.cid", -1, &st, NULL), SQLITE_OK);
    char *nl_doc = malloc(strlen(doc) + 2);
    sprintf(nl_doc, "\n%s", doc);
    sqlite3_bind_text(st, 1, nl_doc, -1, SQLITE_TRANSIENT);
    free(nl_doc);
    while (sqlite3_step(st) == SQLITE_ROW) {
        n += (size_t)snprintf(out + n, cap - n, "%s.%s %s\n",
                              sqlite3_column_text(st, 0),
                              sqlite3_column_text(st, 1),
                              sqlite3_column_text(st, 2));
        assert_true(n < cap);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The lines of a (each ending in a newline) that b lacks, into out. */
static void lines_missing(const char *a, const char *b, char *out, size_t cap)
{
    size_t n = strlen(out);
    for (const char *l = a; *l; l = strchr(l, '\n') + 1) {
        size_t len = (size_t)(strchr(l, '\n') - l) + 1;
        int found = 0;
        for (const char *m = b; *m && !found; m = strchr(m, '\n') + 1)
            found = !strncmp(m, l, len) && m[len - 1] == '\n';
        if (!found && n + len + 4 < cap)
            n += (size_t)snprintf(out + n, cap - n, "  %.*s", (int)len, l);
    }
}

static void test_docs_state_db_md_lists_every_table_and_column(void **st)
{
    (void)st;
    store_close(open_ok(0));
    char *doc = doc_columns(), *db = db_columns(doc);
    assert_true(strlen(doc) > 0);
    if (strcmp(doc, db)) {
        static char only_db[4096], only_doc[4096];
        only_db[0] = only_doc[0] = '\0';
        lines_missing(db, doc, only_db, sizeof only_db);
        lines_missing(doc, db, only_doc, sizeof only_doc);
        fail_msg("%s and the schema in store.c differ.\nColumns the doc "
                 "lacks:\n%sColumns only the doc has:\n%s%sThe doc:\n%s\n"
                 "The database:\n%s", state_db_doc, only_db, only_doc,
                 only_db[0] || only_doc[0] ? "" : "(none: the order "
                 "differs)\n", doc, db);
    }
    free(doc);
    free(db);
}

/* An in-memory database (the fuzzers' slaqd) leaves no ledger file named
 * ":memory:-lost" in the working directory. */
static void test_an_in_memory_store_leaves_no_file(void **st)
{
    (void)st;
    char cwd[4096], err[256];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    sd_store *s = store_open(":memory:", 1, err, sizeof err);
    assert_non_null(s);
    store_close(s);
    int left = access(":memory:-lost", F_OK) == 0;
    unlink(":memory:-lost");
    assert_int_equal(chdir(cwd), 0);
    assert_false(left);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        state_db_doc = argv[1];
        cmocka_set_test_filter("test_docs_*");
    }
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, dir_setup, dir_teardown)
        T(test_every_column_of_a_job_comes_back_after_a_reopen),
        T(test_putting_a_job_again_replaces_its_row),
        T(test_an_older_database_gains_the_columns_and_keeps_its_rows),
        T(test_a_migration_that_fails_changes_nothing),
        T(test_a_run_of_an_older_database_reads_as_it_is),
        T(test_a_full_disk_is_an_error_and_leaves_the_last_commit_whole),
        T(test_an_arrays_columns_come_back_after_a_reopen),
        T(test_a_sweeps_rows_come_back),
        T(test_values_start_after_the_last_seen_and_keep_iteration_0),
        T(test_a_recorded_run_reads_back_from_its_last_start),
        T(test_docs_state_db_md_lists_every_table_and_column),
        T(test_an_in_memory_store_leaves_no_file),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
