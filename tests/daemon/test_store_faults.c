/*
 * test_store_faults.c — state.db's store (src/daemon/store.c) when memory
 * or the disk fails: the Nth allocation, or the Nth read, write or sync of
 * SQLite, fails, for N = 1, 2, 3, … through opening the store, putting a
 * job, reporting batches of iterations and committing them. At every N the
 * store succeeds or says what failed, never loses a report it accepted
 * without counting it (each is in the database, still pending, or counted
 * in reports_lost), and once the fault clears its retry writes what memory
 * holds and the store works on. Nothing sleeps: the retry timer reads a
 * clock the test moves (sd_clock_set).
 *
 * Two ways in, both counted by one countdown per kind of fault:
 *   - memory: slaq's own allocations through the linker's --wrap of
 *     malloc, calloc, realloc and strdup (tests/module.mk), SQLite's
 *     through sqlite3_config(SQLITE_CONFIG_MALLOC), set in main() before
 *     SQLite initialises;
 *   - the disk: a VFS registered as the default around the system's one,
 *     whose xRead, xWrite and xSync fail with SQLITE_IOERR_* or
 *     SQLITE_FULL.
 * A fault is transient (the Nth call alone fails) or sticky (every call
 * from the Nth on fails until the test clears it). The loops end at the
 * first N the scenario no longer reaches. SQLite's allocations are checked
 * to be all freed after every scenario (sqlite3_memory_used); slaq's under
 * valgrind (docs/state-db.md).
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

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/store_sql.h"

/* ------------------------------------------------------------ faults */

/* A countdown: call number `at` (from 1) fails, and with `sticky` every
 * call after it too; `at` 0 is off. */
typedef struct fault {
    long at, calls, hits;
    int sticky;
} fault;

static fault mem_fault, io_fault;

static int fault_fires(fault *f)
{
    if (f->at == 0)
        return 0;
    f->calls++;
    if (f->calls == f->at || (f->sticky && f->calls > f->at)) {
        f->hits++;
        return 1;
    }
    return 0;
}

static void fault_arm(fault *f, long at, int sticky)
{
    *f = (fault){.at = at, .sticky = sticky};
}

static void fault_clear(fault *f)
{
    f->at = 0;
}

/* slaq's allocations (-Wl,--wrap=..., tests/module.mk). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t n)
{
    return fault_fires(&mem_fault) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return fault_fires(&mem_fault) ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fault_fires(&mem_fault) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fault_fires(&mem_fault) ? NULL : __real_strdup(s);
}

/* SQLite's allocations: each block carries its size in front (xSize). */
#define SQ_HEAD 16

static void *sq_malloc(int n)
{
    if (fault_fires(&mem_fault))
        return NULL;
    char *p = __real_malloc((size_t)n + SQ_HEAD);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    return p + SQ_HEAD;
}

static void sq_free(void *p)
{
    if (p)
        free((char *)p - SQ_HEAD);
}

static void *sq_realloc(void *p, int n)
{
    if (fault_fires(&mem_fault))
        return NULL;
    char *q = __real_realloc((char *)p - SQ_HEAD, (size_t)n + SQ_HEAD);
    if (!q)
        return NULL;
    memcpy(q, &n, sizeof n);
    return q + SQ_HEAD;
}

static int sq_size(void *p)
{
    int n = 0;
    if (p)
        memcpy(&n, (char *)p - SQ_HEAD, sizeof n);
    return n;
}

static int sq_roundup(int n) { return (n + 7) & ~7; }
static int sq_init(void *arg) { (void)arg; return SQLITE_OK; }
static void sq_shutdown(void *arg) { (void)arg; }

static const sqlite3_mem_methods sq_mem = {
    sq_malloc, sq_free, sq_realloc, sq_size, sq_roundup, sq_init,
    sq_shutdown, NULL,
};

/* The faulty VFS: the system's, with xRead, xWrite and xSync counted by
 * io_fault and failing with io_write_rc (SQLITE_FULL or
 * SQLITE_IOERR_WRITE), SQLITE_IOERR_READ and SQLITE_IOERR_FSYNC. */
static sqlite3_vfs *sys_vfs, faulty_vfs;
static int io_write_rc = SQLITE_IOERR_WRITE;

typedef struct ff_file {
    sqlite3_file base;
    sqlite3_file *real;   /* the system's file, right after this struct */
} ff_file;

#define REAL(f) (((ff_file *)(void *)(f))->real)

static int ff_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}

static int ff_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    if (fault_fires(&io_fault))
        return SQLITE_IOERR_READ;
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int ff_write(sqlite3_file *f, const void *buf, int n,
                    sqlite3_int64 off)
{
    if (fault_fires(&io_fault))
        return io_write_rc;
    return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int ff_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int ff_sync(sqlite3_file *f, int flags)
{
    if (fault_fires(&io_fault))
        return SQLITE_IOERR_FSYNC;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int ff_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int ff_lock(sqlite3_file *f, int lock)
{
    return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int ff_unlock(sqlite3_file *f, int lock)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int ff_check_lock(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int ff_file_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int ff_sector_size(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int ff_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int ff_shm_map(sqlite3_file *f, int pg, int pgsz, int extend,
                      void volatile **pp)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void ff_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int ff_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}

static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods ff_io = {
    3, ff_close, ff_read, ff_write, ff_truncate, ff_sync, ff_file_size,
    ff_lock, ff_unlock, ff_check_lock, ff_file_control, ff_sector_size,
    ff_device, ff_shm_map, ff_shm_lock, ff_shm_barrier, ff_shm_unmap,
    ff_fetch, ff_unfetch,
};

static int ff_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f,
                   int flags, int *out)
{
    (void)vfs;
    ff_file *p = (ff_file *)(void *)f;
    p->real = (sqlite3_file *)(void *)(p + 1);
    int rc = sys_vfs->xOpen(sys_vfs, name, p->real, flags, out);
    /* SQLite closes a file whose methods are set, even after an error. */
    p->base.pMethods = p->real->pMethods ? &ff_io : NULL;
    return rc;
}

static int ff_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
    (void)vfs;
    return sys_vfs->xDelete(sys_vfs, name, sync);
}

static int ff_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    return sys_vfs->xAccess(sys_vfs, name, flags, out);
}

static int ff_full_path(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    return sys_vfs->xFullPathname(sys_vfs, name, n, out);
}

/* Registers the faulty VFS as the default one (store_open uses that). */
static void faulty_vfs_register(void)
{
    sys_vfs = sqlite3_vfs_find(NULL);
    assert_non_null(sys_vfs);
    assert_true(sys_vfs->iVersion >= 1);
    faulty_vfs = *sys_vfs;
    faulty_vfs.szOsFile = (int)sizeof(ff_file) + sys_vfs->szOsFile;
    faulty_vfs.zName = "slaq-faulty";
    faulty_vfs.pNext = NULL;
    faulty_vfs.xOpen = ff_open;
    faulty_vfs.xDelete = ff_delete;
    faulty_vfs.xAccess = ff_access;
    faulty_vfs.xFullPathname = ff_full_path;
    assert_int_equal(sqlite3_vfs_register(&faulty_vfs, 1), SQLITE_OK);
}

/* ---------------------------------------------------------- scenario */

static char dir[64], path[128];
static sd_clock clk = {.wall = 1.7e9, .mono = 1000, .cpu = 0};

static void remove_db(void)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-lost",
                                         "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char f[160];
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        unlink(f);
    }
}

static int dir_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/slaq-test-store-faults-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/state.db", dir);
    fault_clear(&mem_fault); /* a failed test may have left one armed */
    fault_clear(&io_fault);
    sd_clock_set(&clk);
    return 0;
}

static int dir_teardown(void **state)
{
    (void)state;
    sd_clock_set(NULL);
    remove_db();
    return rmdir(dir);
}

#define NREPORTS 60     /* three batches of 20 */
#define BATCH 20

/* Report i of the scenario: every field its own, a metric on every third
 * and a query's estimates on every fifth. */
static slaq_report report_of(uint64_t i)
{
    return (slaq_report){.iter = i, .loss = 1.0 / (double)(i + 1),
                         .cpu_s = 0.5 * (double)i, .samples = 100.0 + i,
                         .t = 1.7e9 + (double)i};
}

static double metric_of(uint64_t i)
{
    return i % 3 == 0 ? 0.25 + 0.001 * (double)i : NAN;
}

static const char *vec_of(uint64_t i, char *buf, size_t n)
{
    if (i % 5)
        return NULL;
    snprintf(buf, n, "{\"estimates\":[%llu],\"lower\":[0],\"upper\":[9]}",
             (unsigned long long)i);
    return buf;
}

static void rewrite_jobs(void *arg)
{
    sd_daemon *d = arg;
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i])
            store_put_job(d->store, d->jobs[i]);
}

/* What the database holds of the job, compared with what was reported. */
typedef struct readback {
    int seen[NREPORTS + 1];
    size_t rows;
} readback;

static int check_row(void *arg, const slaq_report *r, const char *est,
                     double metric)
{
    readback *rb = arg;
    char buf[128];
    assert_true(r->iter >= 1 && r->iter <= NREPORTS);
    assert_false(rb->seen[r->iter]);
    rb->seen[r->iter] = 1;
    rb->rows++;
    slaq_report want = report_of(r->iter);
    assert_true(r->loss == want.loss && r->cpu_s == want.cpu_s &&
                r->samples == want.samples && r->t == want.t);
    double m = metric_of(r->iter);
    assert_true(isnan(m) ? isnan(metric) : metric == m);
    const char *v = vec_of(r->iter, buf, sizeof buf);
    if (v) {
        if (!est)
            fail_msg("iteration %llu: its estimates were not kept",
                     (unsigned long long)r->iter);
        assert_string_equal(est, v);
    } else {
        assert_null(est);
    }
    return 0;
}

/* The job's state as stored, read through the store's connection. */
static void assert_job_state(sd_store *s, const char *state)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_sqlite(s), "SELECT state FROM "
                                        "jobs WHERE id = 1", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), state);
    sqlite3_finalize(st);
}

/* An error that says what failed: the fault's own words. */
static void assert_names_fault(const char *msg, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (strstr(msg, words[i]))
            return;
    fail_msg("the error does not say what failed: \"%s\"", msg);
}

/*
 * One run with fault f armed at call `at` (counted from before the open,
 * or with `after_open` from after it): open, put a job, report three
 * batches (the job's state changes before the last), committing after
 * each; then the fault clears, a second passes, and whatever failed is
 * written by the retry. Returns whether the fault fired at all.
 */
static int scenario(fault *f, long at, int sticky, int after_open,
                    const char *db, const char *const *words)
{
    char err[512] = "", buf[128];
    sd_daemon *d = calloc(1, sizeof *d);
    sd_job *j = job_new(d, 1);
    assert_non_null(j);
    j->name = strdup("train");
    j->state = SD_RUNNING;
    uint64_t lost0 = 0;
    size_t reported = 0, committed = 0;

    if (!after_open)
        fault_arm(f, at, sticky);
    sd_store *s = d->store = store_open(db, 0, err, sizeof err);
    if (!s) {
        fault_clear(f);
        if (f->hits == 0)
            fail_msg("store_open failed with no fault: %s", err);
        assert_names_fault(err, words);
        job_free_all(d);
        free(d);
        return 1;
    }
    store_set_rewrite(s, rewrite_jobs, d);
    lost0 = store_lost(s);
    if (after_open)
        fault_arm(f, at, sticky);
    store_put_job(s, j);
    for (uint64_t b = 0; b < NREPORTS / BATCH; b++) {
        if (b == NREPORTS / BATCH - 1) {
            j->state = SD_STOPPING;
            store_put_job(s, j);
        }
        for (uint64_t i = b * BATCH + 1; i <= (b + 1) * BATCH; i++) {
            slaq_report r = report_of(i);
            store_report_vec(s, 1, &r, metric_of(i), vec_of(i, buf, sizeof buf),
                             0, 0);
            reported++;
        }
        clk.mono += 1; /* a retry is due if the last commit failed */
        if (store_flush(s) == 0) {
            assert_false(store_failing(s));
            assert_int_equal(store_pending(s), 0);
            committed = reported;
        } else {
            assert_true(store_failing(s));
            assert_names_fault(store_error(s), words);
            /* Every report since the last commit is held, or counted. */
            assert_int_equal(store_pending(s) + (store_lost(s) - lost0),
                             reported - committed);
        }
    }
    int fired = f->hits > 0;
    fault_clear(f);

    clk.mono += 1;
    if (store_flush(s) != 0)
        fail_msg("the retry after the fault failed: %s", store_error(s));
    assert_false(store_failing(s));
    assert_int_equal(store_pending(s), 0);
    /* The store works on. */
    assert_job_state(s, "stopping");
    readback rb = {.rows = 0};
    assert_int_equal(store_each_full_report(s, 1, check_row, &rb), 0);
    uint64_t lost = store_lost(s) - lost0;
    if (rb.rows + lost != reported)
        fail_msg("fault at %ld%s: %zu reports stored, %llu counted lost, "
                 "%zu reported", at, sticky ? " on" : "", rb.rows,
                 (unsigned long long)lost, reported);
    store_close(s);
    job_free_all(d);
    free(d);
    return fired;
}

/* Runs the scenario for N = 1, 2, … until the fault no longer fires;
 * returns how many runs it took. */
static long every_n(fault *f, int sticky, int after_open, const char *db,
                    const char *const *words)
{
    long n = 1;
    sqlite3_int64 used = sqlite3_memory_used(); /* 0 but after a failure */
    while (scenario(f, n, sticky, after_open, db, words)) {
        assert_int_equal(sqlite3_memory_used(), used);
        if (strcmp(db, ":memory:"))
            remove_db();
        n++;
    }
    assert_int_equal(sqlite3_memory_used(), used);
    if (strcmp(db, ":memory:"))
        remove_db();
    return n;
}

static const char *const oom_words[] = {"out of memory", NULL};

static void test_out_of_memory_at_each_allocation_loses_no_report(void **st)
{
    (void)st;
    long runs = every_n(&mem_fault, 0, 0, ":memory:", oom_words);
    /* opening alone makes thousands of allocations (the schema's) */
    assert_true(runs > 1000);
    print_message("out of memory: %ld allocations failed one at a time\n",
                  runs - 1);
}

/* From the Nth allocation after the open on, until memory comes back
 * (failing the open itself, one allocation or all from there on, is the
 * same: the open fails; the test above covers it). */
static void test_memory_gone_from_each_allocation_on_loses_no_report(
    void **st)
{
    (void)st;
    long runs = every_n(&mem_fault, 1, 1, ":memory:", oom_words);
    assert_true(runs > 100);
    print_message("out of memory: %ld runs with every allocation from the "
                  "Nth after the open on failing\n", runs - 1);
}

static const char *const io_words[] = {"disk I/O error",
                                       "database or disk is full", NULL};

static void io_runs(int write_rc, int sticky)
{
    io_write_rc = write_rc;
    long runs = every_n(&io_fault, sticky, 0, path, io_words);
    assert_true(runs > 20);
    print_message("I/O (%s, %s): %ld runs\n",
                  write_rc == SQLITE_FULL ? "disk full" : "write error",
                  sticky ? "sticky" : "once", runs - 1);
}

static void test_io_error_at_each_read_write_sync_loses_no_report(void **st)
{
    (void)st;
    io_runs(SQLITE_IOERR_WRITE, 0);
    io_runs(SQLITE_IOERR_WRITE, 1);
}

static void test_full_disk_at_each_write_loses_no_report(void **st)
{
    (void)st;
    io_runs(SQLITE_FULL, 0);
    io_runs(SQLITE_FULL, 1);
}

/* reports_lost_total is kept in the meta table: a read that fails when
 * the store opens must not start it again from 0. */
static void test_lost_count_survives_a_failed_read_at_open(void **st)
{
    (void)st;
    char err[512] = "";
    sd_store *s = store_open(path, 0, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(sqlite3_exec(store_sqlite(s), "INSERT INTO meta(key, "
                                  "value) VALUES ('reports_lost', 7)", NULL,
                                  NULL, NULL), SQLITE_OK);
    store_close(s);
    long n = 1;
    for (;; n++) {
        fault_arm(&io_fault, n, 0);
        s = store_open(path, 0, err, sizeof err);
        long hits = io_fault.hits;
        fault_clear(&io_fault);
        if (!s) {
            assert_true(hits > 0);
            assert_names_fault(err, io_words);
            continue;
        }
        if (store_lost(s) != 7)
            fail_msg("read fault at %ld: store_lost is %llu, not 7", n,
                     (unsigned long long)store_lost(s));
        store_close(s);
        if (hits == 0)
            break;
    }
    assert_true(n > 3);
}

int main(void)
{
    /* Before anything initialises SQLite: its allocations through ours. */
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &sq_mem) != SQLITE_OK ||
        sqlite3_initialize() != SQLITE_OK) {
        fprintf(stderr, "test_store_faults: SQLite is initialised already\n");
        return 1;
    }
    faulty_vfs_register();
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, dir_setup, dir_teardown)
        T(test_out_of_memory_at_each_allocation_loses_no_report),
        T(test_memory_gone_from_each_allocation_on_loses_no_report),
        T(test_io_error_at_each_read_write_sync_loses_no_report),
        T(test_full_disk_at_each_write_loses_no_report),
        T(test_lost_count_survives_a_failed_read_at_open),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
