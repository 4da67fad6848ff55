/*
 * test_train_oom.c — slaq-train when memory runs out while an array grows:
 * the CSV, LIBSVM and corpus readers and the job driver's loss history
 * report an error that names what was being read or grown, keep what they
 * had (freed without a leak or a crash under ASan) and return the usual
 * error status instead of exiting or writing through a lost pointer.
 *
 * The program is linked with -Wl,--wrap=realloc (tests/train/module.mk), so
 * every realloc called from slaq-train's objects (grow_array's included)
 * comes here first; a resize larger than `realloc_limit` bytes fails.
 * Allocations inside shared libraries (libc's getline, jansson) are not
 * wrapped and never fail.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "train/train.h"

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* 0: no limit. */
static size_t realloc_limit;
static size_t realloc_failed;

void *__wrap_realloc(void *p, size_t n)
{
    if (realloc_limit && n > realloc_limit) {
        realloc_failed++;
        return NULL;
    }
    return __real_realloc(p, n);
}

static char tmpdir[] = "/tmp/slaq-train-oom-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

/* Sets the limit (0: none); a new limit starts a new count of failures. */
static void limit(size_t bytes)
{
    if (bytes)
        realloc_failed = 0;
    realloc_limit = bytes;
}

/* 1500 rows of two features and a label: the row arrays start at 1024 rows
 * (16 KiB of features) and must double at row 1025. */
static void csv_growth_failure_names_file_and_line(void **state)
{
    (void)state;
    const char *path = tmp_path("rows.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 1500; i++)
        fprintf(f, "%d.5,%d,%d\n", i, i % 7, i % 2);
    fclose(f);

    struct train_data d;
    char err[TRAIN_ERRLEN], want[TRAIN_ERRLEN];
    limit(20000);
    assert_int_equal(train_data_read_csv(path, -1, &d, err, sizeof err), -1);
    limit(0);
    assert_true(realloc_failed > 0);
    snprintf(want, sizeof want, "%s: out of memory at line 1025 (1024 rows read)",
             path);
    assert_string_equal(err, want);
    assert_null(d.x);
    assert_int_equal(d.n, 0);

    /* With memory, the same file reads whole. */
    assert_int_equal(train_data_read_csv(path, -1, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 1500);
    assert_int_equal(d.d, 2);
    assert_true(d.x[2 * 1499] == 1499.5 && d.y[1499] == 1);
    train_data_free(&d);
}

/* 3000 rows of two entries: the entry arrays (4096 entries, 32 KiB) must
 * double at the 4097th entry, on line 2049. */
static void libsvm_growth_failure_names_file_and_line(void **state)
{
    (void)state;
    const char *path = tmp_path("rows.svm");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d 1:%d 3:0.5\n", i % 2 ? 1 : -1, i);
    fclose(f);

    struct train_data d;
    char err[TRAIN_ERRLEN], want[TRAIN_ERRLEN];
    limit(40000);
    assert_int_equal(train_data_read_libsvm(path, 0, &d, err, sizeof err), -1);
    limit(0);
    assert_true(realloc_failed > 0);
    snprintf(want, sizeof want, "%s: out of memory at line 2049 (2048 rows read)",
             path);
    assert_string_equal(err, want);
    assert_null(d.x);

    assert_int_equal(train_data_read_libsvm(path, 0, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3000);
    assert_int_equal(d.d, 3);
    train_data_free(&d);
}

/* The dictionary's first arrays (16384 words, 128 KiB each) cannot be had:
 * the load fails on the first document, naming the file. */
static void corpus_growth_failure_names_source_and_document(void **state)
{
    (void)state;
    const char *path = tmp_path("docs.txt");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 50; i++)
        fprintf(f, "alpha beta gamma delta epsilon zeta number%c%c\n",
                'a' + i % 26, 'a' + i / 26);
    fclose(f);

    struct train_corpus c, h;
    char err[TRAIN_ERRLEN], want[TRAIN_ERRLEN];
    limit(100000);
    assert_int_equal(train_corpus_load(path, "lines", 100, 0, &c, &h, err,
                                       sizeof err), -1);
    limit(0);
    assert_true(realloc_failed > 0);
    snprintf(want, sizeof want, "%s: out of memory reading document 1 (0 "
             "words, 0 tokens so far)", path);
    assert_string_equal(err, want);
    assert_int_equal(c.n_docs, 0);

    assert_int_equal(train_corpus_load(path, "lines", 100, 0, &c, &h, err,
                                       sizeof err), 0);
    assert_true(c.n_docs >= 2);
    train_corpus_free(&c);
    train_corpus_free(&h);
}

/* The loss history holds 64 iterations (512 bytes an array) and cannot
 * double: the run stops after iteration 63 with every loss it measured,
 * and train_job_run fails with the runtime-failure status. */
static void loss_history_growth_failure_stops_the_run(void **state)
{
    (void)state;
    struct train_data d = {0};
    uint64_t s = 7;
    d.n = 400;
    d.d = 4;
    d.n_classes = 2;
    d.x = train_xcalloc(d.n * d.d, sizeof(double));
    d.y = train_xcalloc(d.n, sizeof(double));
    for (size_t i = 0; i < d.n; i++) {
        d.y[i] = (double)(i % 2);
        for (size_t j = 0; j < d.d; j++)
            d.x[i * d.d + j] = 2.0 * d.y[i] * (j == 0) + train_rand_normal(&s);
    }

    struct train_job job;
    memset(&job, 0, sizeof job);
    job.algo = &train_algo_logreg;
    job.prm = (struct train_params){.lr = -1, .l2 = -1, .standardize = true};
    job.train = d;
    job.scale = 1;
    job.quiet = true;
    job.max_iters = 100;
    snprintf(job.name, sizeof job.name, "oom-logreg");
    snprintf(job.dataset, sizeof job.dataset, "test");
    train_job_partition(&job, d.n, 2);
    job.sched = train_sched_open(job.name, 1);

    char err[TRAIN_ERRLEN];
    limit(600);
    int rc = train_job_run(&job, err, sizeof err);
    limit(0);
    assert_int_equal(rc, 1);
    assert_string_equal(err, "out of memory growing the loss history after "
                             "iteration 63 (64 iterations held)");
    assert_true(job.out_of_memory);
    assert_string_equal(job.stop_reason, "out-of-memory");
    assert_int_equal(job.iters, 63);
    assert_int_equal(job.cap, 64);
    for (int i = 0; i <= job.iters; i++)
        assert_true(isfinite(job.loss[i]));
    assert_true(job.loss[63] < job.loss[0]);

    if (job.state)
        job.algo->destroy(&job);
    train_sched_close(job.sched);
    free(job.parts);
    free(job.loss);
    free(job.iter_cpu);
    free(job.epoch_metric);
    train_data_free(&d);
}

/* train_job_reserve keeps the arrays and the capacity when it fails. */
static void reserve_failure_keeps_history(void **state)
{
    (void)state;
    struct train_job job;
    memset(&job, 0, sizeof job);
    assert_int_equal(train_job_reserve(&job, 10), 0);
    assert_int_equal(job.cap, 64);
    for (int i = 0; i < 64; i++)
        job.loss[i] = job.iter_cpu[i] = job.epoch_metric[i] = i;
    limit(600);
    assert_int_equal(train_job_reserve(&job, 65), -1);
    limit(0);
    assert_int_equal(job.cap, 64);
    for (int i = 0; i < 64; i++)
        assert_true(job.loss[i] == i && job.iter_cpu[i] == i &&
                    job.epoch_metric[i] == i);
    assert_int_equal(train_job_reserve(&job, 65), 0);
    assert_int_equal(job.cap, 128);
    assert_true(job.loss[63] == 63);
    free(job.loss);
    free(job.iter_cpu);
    free(job.epoch_metric);
}

TEST_DIR_GROUP(tmpdir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_growth_failure_names_file_and_line),
        cmocka_unit_test(libsvm_growth_failure_names_file_and_line),
        cmocka_unit_test(corpus_growth_failure_names_source_and_document),
        cmocka_unit_test(loss_history_growth_failure_stops_the_run),
        cmocka_unit_test(reserve_failure_keeps_history),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
