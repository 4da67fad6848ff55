/*
 * test_train.c — unit tests of slaq-train: the dataset readers and their
 * error messages, the worker pool, the job driver's bookkeeping and
 * stopping rules, the curve record, and each algorithm's loss behaviour on
 * small data made here (the real-data runs are in tests/train/test_cli.sh).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "testutil.h"
#include <jansson.h>

#include "train/train.h"

static char tmpdir[] = "/tmp/slaq-train-test-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* Writes a gzip IDX images file of n 2x2 images and its labels file. */
static void write_idx(const char *img, const char *lab, uint32_t magic, int n,
                      int truncate)
{
    gzFile g = gzopen(img, "wb");
    unsigned char h[16];
    be32(h, magic);
    be32(h + 4, (uint32_t)n);
    be32(h + 8, 2);
    be32(h + 12, 2);
    gzwrite(g, h, 16);
    for (int i = 0; i < n * 4 - truncate; i++) {
        unsigned char px = (unsigned char)(i * 17);
        gzwrite(g, &px, 1);
    }
    gzclose(g);
    g = gzopen(lab, "wb");
    be32(h, 0x801);
    be32(h + 4, (uint32_t)n);
    gzwrite(g, h, 8);
    for (int i = 0; i < n; i++) {
        unsigned char y = (unsigned char)(i % 3);
        gzwrite(g, &y, 1);
    }
    gzclose(g);
}

static void idx_reads_pixels_and_labels(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_idx(tmp_path("img.gz"), tmp_path("lab.gz"), 0x803, 5, 0);
    assert_int_equal(train_data_read_idx(tmp_path("img.gz"), tmp_path("lab.gz"),
                                         &d, err, sizeof err), 0);
    assert_int_equal(d.n, 5);
    assert_int_equal(d.d, 4);
    assert_int_equal(d.n_classes, 3);
    assert_true(fabs(d.x[1] - 17 / 255.0) < 1e-12);
    assert_true(d.y[4] == 1);
    train_data_free(&d);
}

static void idx_wrong_magic_names_file_and_offset(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_idx(tmp_path("bad.gz"), tmp_path("badlab.gz"), 0x802, 3, 0);
    assert_int_equal(train_data_read_idx(tmp_path("bad.gz"), tmp_path("badlab.gz"),
                                         &d, err, sizeof err), -1);
    assert_non_null(strstr(err, tmp_path("bad.gz")));
    assert_non_null(strstr(err, "byte 0"));
    assert_non_null(strstr(err, "0x00000802"));
}

static void idx_truncated_file_is_an_error(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_idx(tmp_path("short.gz"), tmp_path("shortlab.gz"), 0x803, 3, 5);
    assert_int_equal(train_data_read_idx(tmp_path("short.gz"),
                                         tmp_path("shortlab.gz"), &d, err,
                                         sizeof err), -1);
    assert_non_null(strstr(err, "ends early"));
    assert_non_null(strstr(err, "byte 23"));
}

static void idx_missing_file_is_named(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    assert_int_equal(train_data_read_idx(tmp_path("nope.gz"), tmp_path("nope2.gz"),
                                         &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "nope.gz"));
}

static void csv_reads_header_and_label_column(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("a.csv"), "f1,f2,y\n1,2,0\n3,4.5,1\n\n5,6,1\n");
    assert_int_equal(train_data_read_csv(tmp_path("a.csv"), -1, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.d, 2);
    assert_true(d.x[3] == 4.5 && d.y[1] == 1);
    train_data_free(&d);
    assert_int_equal(train_data_read_csv(tmp_path("a.csv"), 0, &d, err, sizeof err), 0);
    assert_true(d.y[2] == 5 && d.x[4] == 6 && d.x[5] == 1);
    train_data_free(&d);
}

static void csv_ragged_row_names_line(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("r.csv"), "1,2,0\n3,4,1\n5,1\n");
    assert_int_equal(train_data_read_csv(tmp_path("r.csv"), -1, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "r.csv: line 3"));
    assert_non_null(strstr(err, "2 columns"));
}

static void csv_nan_names_line_and_column(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("n.csv"), "1,2,0\n3,nan,1\n");
    assert_int_equal(train_data_read_csv(tmp_path("n.csv"), -1, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "n.csv: line 2, column 2"));
    write_file(tmp_path("n2.csv"), "1,2,0\n3,4x,1\n");
    assert_int_equal(train_data_read_csv(tmp_path("n2.csv"), -1, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2, column 2"));
}

static void libsvm_reads_sparse_rows(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("a.svm"), "+1 1:0.5 3:2\n-1 2:1 # comment\n\n+1\n");
    assert_int_equal(train_data_read_libsvm(tmp_path("a.svm"), 0, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.d, 3);
    assert_true(d.x[0] == 0.5 && d.x[1] == 0 && d.x[2] == 2 && d.x[4] == 1);
    assert_true(d.y[1] == -1);
    struct train_data none = {0};
    assert_int_equal(train_data_relabel(&d, &none, 10, err, sizeof err), 0);
    assert_true(d.y[0] == 1 && d.y[1] == 0 && d.n_classes == 2);
    train_data_free(&d);
}

static void libsvm_errors_name_line_and_field(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("b.svm"), "1 1:1\n1 2:1 0:3\n");
    assert_int_equal(train_data_read_libsvm(tmp_path("b.svm"), 0, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "b.svm: line 2, field 3"));
    write_file(tmp_path("c.svm"), "1 1:1\n1 2:inf\n");
    assert_int_equal(train_data_read_libsvm(tmp_path("c.svm"), 0, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2, field 2"));
    write_file(tmp_path("d.svm"), "1 3:1 2:1\n");
    assert_int_equal(train_data_read_libsvm(tmp_path("d.svm"), 0, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "not above"));
}

static void friedman1_is_deterministic_and_in_range(void **state)
{
    (void)state;
    struct train_data a, b;
    char err[TRAIN_ERRLEN];
    assert_int_equal(train_data_friedman1(500, 3, &a, err, sizeof err), 0);
    assert_int_equal(train_data_friedman1(500, 3, &b, err, sizeof err), 0);
    assert_memory_equal(a.x, b.x, 500 * 10 * sizeof(double));
    double mu = 0;
    for (size_t i = 0; i < 500; i++) {
        mu += a.y[i] / 500;
        for (int j = 0; j < 10; j++)
            assert_true(a.x[i * 10 + j] >= 0 && a.x[i * 10 + j] < 1);
    }
    /* E[y] = 10 E[sin(pi x1 x2)] + 20/12 + 5 + 2.5 ~= 14.4 */
    assert_true(mu > 13 && mu < 16);
    train_data_free(&a);
    train_data_free(&b);
}

static void select_classes_renumbers(void **state)
{
    (void)state;
    struct train_data d;
    char err[TRAIN_ERRLEN];
    write_idx(tmp_path("s.gz"), tmp_path("slab.gz"), 0x803, 9, 0);
    assert_int_equal(train_data_read_idx(tmp_path("s.gz"), tmp_path("slab.gz"), &d,
                                         err, sizeof err), 0);
    assert_int_equal(train_data_select_classes(&d, "2,0", err, sizeof err), 0);
    assert_int_equal(d.n, 6);
    assert_int_equal(d.n_classes, 2);
    assert_true(d.y[0] == 1 && d.y[1] == 0);
    assert_int_equal(train_data_select_classes(&d, "1,1", err, sizeof err), -1);
    train_data_free(&d);
}

/* ---- pool and driver ------------------------------------------------------ */

struct count_ctx {
    int hits[64];
    size_t rows[8];
};

static void count_part(void *ctx, const struct train_part *p, int w)
{
    struct count_ctx *c = ctx;
    for (size_t i = p->begin; i < p->end; i++)
        __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
    c->rows[w] += p->end - p->begin;
}

static void pool_visits_every_row_once_per_copy(void **state)
{
    (void)state;
    struct train_job job = {.scale = 2.5};
    struct count_ctx c = {0};
    train_job_partition(&job, 40, 4);
    assert_int_equal(job.max_workers, 4);
    assert_true(job.rows_per_iter == 100);
    job.n_workers = 3;
    train_pool_run(&job, count_part, &c);
    for (int i = 0; i < 40; i++)
        assert_int_equal(c.hits[i], i < 20 ? 3 : 2);
    assert_int_equal(c.rows[0] + c.rows[1] + c.rows[2], 100);
    assert_int_equal(job.passes, 1);
    free(job.parts);
}

static void sched_without_slaq_gives_threads_and_never_stops(void **state)
{
    (void)state;
    unsetenv("SLAQ_SOCKET");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* --threads 1.8: two workers by the thread rule (if there are two
     * CPUs); 1.7 would be one. */
    struct train_sched *s = train_sched_open("t", 1.8);
    assert_int_equal(train_sched_threads(s), cpus >= 2 ? 2 : 1);
    train_sched_report(s, 0, 2.0, 0, 0, NAN);
    train_sched_report(s, 1, 1.0, 0.5, 100, 0.5);
    assert_false(train_sched_should_stop(s));
    train_sched_close(s);
}

/* Builds a job over `d` with P partitions, ready for train_job_run. */
static void job_setup(struct train_job *job, const struct train_algo *a,
                      struct train_data *d, int iters, double threads)
{
    memset(job, 0, sizeof *job);
    job->algo = a;
    job->prm = (struct train_params){.lr = -1, .l2 = -1, .standardize = true};
    job->train = *d;
    job->scale = 1;
    job->quiet = true;
    job->max_iters = iters;
    snprintf(job->name, sizeof job->name, "test-%s", a->name);
    snprintf(job->dataset, sizeof job->dataset, "test");
    train_job_partition(job, d->n, 8);
    job->data_size = job->rows_per_iter * (double)d->d;
    job->sched = train_sched_open(job->name, threads);
}

static void job_teardown(struct train_job *job)
{
    if (job->state)
        job->algo->destroy(job);
    train_sched_close(job->sched);
    free(job->parts);
    free(job->loss);
    free(job->iter_cpu);
    free(job->epoch_metric);
}

/* Gaussian blobs: k well-separated centres in d dimensions. */
static void make_blobs(struct train_data *d, size_t n, size_t dim, int k,
                       unsigned seed)
{
    uint64_t s = seed;
    memset(d, 0, sizeof *d);
    d->n = n;
    d->d = dim;
    d->x = train_xcalloc(n * dim, sizeof(double));
    d->y = train_xcalloc(n, sizeof(double));
    d->n_classes = k;
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i % (size_t)k);
        d->y[i] = c;
        for (size_t j = 0; j < dim; j++)
            d->x[i * dim + j] = (j % (size_t)k == (size_t)c ? 3.0 : 0.0) +
                                train_rand_normal(&s);
    }
}

static void assert_nonincreasing(const struct train_job *job, double tol)
{
    for (int i = 1; i <= job->iters; i++)
        if (job->loss[i] > job->loss[i - 1] + tol * fabs(job->loss[0])) {
            print_error("loss rose at iteration %d: %g -> %g\n", i,
                        job->loss[i - 1], job->loss[i]);
            fail();
        }
    assert_true(job->loss[job->iters] < job->loss[0]);
}

static void kmeans_objective_matches_direct_recomputation(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 2000, 12, 4, 7);
    job_setup(&job, &train_algo_kmeans, &d, 15, 2);
    job.prm.k = 4;
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    /* Monotone in exact arithmetic; once converged, summation order may
     * move the last digits. */
    assert_nonincreasing(&job, 1e-12);
    int k;
    const double *c = train_kmeans_centres(&job, &k);
    double sse = 0;
    for (size_t i = 0; i < d.n; i++) {
        double best = INFINITY;
        for (int j = 0; j < k; j++) {
            double s = 0;
            for (size_t t = 0; t < d.d; t++) {
                double e = d.x[i * d.d + t] - c[(size_t)j * d.d + t];
                s += e * e;
            }
            best = fmin(best, s);
        }
        sse += best;
    }
    assert_true(fabs(sse - job.loss[job.iters]) <= 1e-9 * sse);
    job_teardown(&job);
    train_data_free(&d);
}

static void logreg_loss_falls_monotonically(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 3000, 20, 3, 11);
    job_setup(&job, &train_algo_logreg, &d, 30, 2);
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_true(fabs(job.loss[0] - log(3.0)) < 1e-12);
    assert_nonincreasing(&job, 0);
    assert_true(job.loss[job.iters] < 0.2);
    assert_int_equal(job.iters, 30);
    assert_string_equal(job.stop_reason, "iters");
    job_teardown(&job);
    train_data_free(&d);
}

static void results_do_not_depend_on_thread_count(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job a, b;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 2000, 16, 4, 5);
    job_setup(&a, &train_algo_logreg, &d, 10, 1);
    job_setup(&b, &train_algo_logreg, &d, 10, 2);
    assert_int_equal(train_job_run(&a, err, sizeof err), 0);
    assert_int_equal(train_job_run(&b, err, sizeof err), 0);
    for (int i = 0; i <= 10; i++)
        assert_true(fabs(a.loss[i] - b.loss[i]) <= 1e-12 * a.loss[0]);
    job_teardown(&a);
    job_teardown(&b);
    train_data_free(&d);
}

/* The SVM's step is scaled to the data: its first iteration already
 * lowers the objective (a step too long for the data overshot and held
 * the best-so-far loss flat). With momentum it is not a descent method,
 * so later iterations may rise, but only a little. */
static void svm_loss_falls_from_the_first_iteration(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 2000, 10, 2, 3);
    job_setup(&job, &train_algo_svm, &d, 25, 1);
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_true(job.loss[0] == 1.0); /* one output, every margin zero */
    assert_true(job.loss[1] < job.loss[0]);
    assert_nonincreasing(&job, 0.05);
    assert_true(job.loss[job.iters] < 0.3);
    job_teardown(&job);
    train_data_free(&d);
}

static void svmpoly_loss_falls(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 1500, 10, 3, 9);
    job_setup(&job, &train_algo_svmpoly, &d, 25, 2);
    job.prm.basis = 100;
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_true(job.loss[1] < job.loss[0]);
    assert_nonincreasing(&job, 0.05);
    assert_true(job.loss[job.iters] < 0.5 * job.loss[0]);
    /* svmpoly replaced the rows by their kernel features; free those. */
    assert_int_equal(job.train.d, 100);
    job_teardown(&job);
    train_data_free(&job.train);
}

static void linreg_lbfgs_reaches_least_squares(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    uint64_t s = 1;
    memset(&d, 0, sizeof d);
    d.n = 4000;
    d.d = 5;
    d.x = train_xcalloc(d.n * d.d, sizeof(double));
    d.y = train_xcalloc(d.n, sizeof(double));
    for (size_t i = 0; i < d.n; i++) {
        double y = 2.0;
        for (size_t j = 0; j < d.d; j++) {
            d.x[i * d.d + j] = train_rand_normal(&s);
            y += (double)(j + 1) * d.x[i * d.d + j];
        }
        d.y[i] = y + 0.1 * train_rand_normal(&s);
    }
    job_setup(&job, &train_algo_linreg, &d, 50, 2);
    job.prm.l2 = 0;
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_nonincreasing(&job, 1e-12);
    /* Residual variance 0.01, so the optimum of 1/2 mean r^2 is ~0.005. */
    assert_true(job.loss[job.iters] < 0.006);
    job_teardown(&job);
    train_data_free(&d);
}

static void mlpc_loss_falls(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 1200, 8, 3, 13);
    job_setup(&job, &train_algo_mlpc, &d, 20, 2);
    job.prm.hidden[0] = 16;
    job.prm.hidden[1] = 8;
    job.prm.n_hidden = 2;
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_nonincreasing(&job, 1e-9);
    assert_true(job.loss[job.iters] < 0.3 * job.loss[0]);
    job_teardown(&job);
    train_data_free(&d);
}

static void gbtreg_loss_falls_and_follows_allocation(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    assert_int_equal(train_data_friedman1(3000, 1, &d, err, sizeof err), 0);
    job_setup(&job, &train_algo_gbtreg, &d, 20, 2);
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_nonincreasing(&job, 0);
    assert_true(job.loss[job.iters] < 0.2 * job.loss[0]);
    assert_int_equal(job.n_workers, 2);
    job_teardown(&job);
    train_data_free(&d);
}

static void lda_bound_falls_on_two_topic_text(void **state)
{
    (void)state;
    struct train_corpus c, h;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    FILE *f = fopen(tmp_path("docs.txt"), "w");
    assert_non_null(f);
    const char *a[] = {"kernel", "driver", "module", "device", "firmware", "interrupt"};
    const char *b[] = {"python", "library", "binding", "interpreter", "script", "parser"};
    uint64_t s = 2;
    for (int doc = 0; doc < 200; doc++) {
        const char **w = doc % 2 ? a : b;
        fprintf(f, "doc%c ", 'a' + doc % 26);
        for (int t = 0; t < 12; t++)
            fprintf(f, "%s ", w[(int)(train_rand_uniform(&s) * 6)]);
        fprintf(f, "\n");
    }
    fclose(f);
    assert_int_equal(train_corpus_load(tmp_path("docs.txt"), "lines", 100, 0, &c, &h,
                                       err, sizeof err), 0);
    assert_int_equal(c.n_docs + h.n_docs, 200);
    assert_int_equal(h.n_docs, 20);

    memset(&job, 0, sizeof job);
    job.algo = &train_algo_lda;
    job.prm.k = 2;
    job.corpus = c;
    job.heldout = h;
    job.scale = 1;
    job.quiet = true;
    job.max_iters = 15;
    train_job_partition(&job, c.n_docs, 4);
    job.sched = train_sched_open("lda", 2);
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_nonincreasing(&job, 1e-6);
    /* Two clean topics of six words each: per-word perplexity near 6 plus
     * the document-name noise. */
    assert_string_equal(job.metric_name, "heldout_perplexity");
    assert_true(job.metric < 12);
    job_teardown(&job);
    train_corpus_free(&job.corpus);
    train_corpus_free(&job.heldout);
}

static void corpus_reads_control_stanzas_and_drops_duplicates(void **state)
{
    (void)state;
    struct train_corpus c, h;
    char err[TRAIN_ERRLEN];
    write_file(tmp_path("avail"),
               "Package: a\nDescription: fast compression library for archives\n"
               " longer text about compression archives and formats\n"
               "Tag: role::shared-lib, works-with::archive\n\n"
               "Package: a\nDescription: fast compression library for archives\n"
               " longer text about compression archives and formats\n"
               "Tag: role::shared-lib, works-with::archive\n\n"
               "Package: b\nDescription: compression tool for archives formats compression\n"
               "Tag: works-with::archive\n\n");
    assert_int_equal(train_corpus_load(tmp_path("avail"), NULL, 50, 0, &c, &h, err,
                                       sizeof err), 0);
    assert_int_equal(c.n_docs, 2);
    /* "compression", "archives", "formats", "archive" are in both. */
    assert_int_equal(c.n_vocab, 4);
    train_corpus_free(&c);
    train_corpus_free(&h);
    write_file(tmp_path("tiny"), "one two\n");
    assert_int_equal(train_corpus_load(tmp_path("tiny"), "lines", 50, 0, &c, &h, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "tiny"));
}

static void target_reduction_stops_early(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 2000, 12, 4, 7);
    job_setup(&job, &train_algo_kmeans, &d, 100, 1);
    job.prm.k = 4;
    job.target_reduction = 0.9;
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    assert_string_equal(job.stop_reason, "target-reduction");
    assert_true(job.iters < 100);
    double last = job.loss[job.iters - 1] - job.loss[job.iters];
    assert_true(last <= 0.1 * job.best_drop);
    job_teardown(&job);
    train_data_free(&d);
}

static void record_is_one_curve_line(void **state)
{
    (void)state;
    struct train_data d;
    struct train_job job;
    char err[TRAIN_ERRLEN];
    make_blobs(&d, 500, 6, 2, 1);
    job_setup(&job, &train_algo_logreg, &d, 5, 1);
    assert_int_equal(train_job_run(&job, err, sizeof err), 0);
    unlink(tmp_path("rec.jsonl"));
    assert_int_equal(train_job_record(&job, tmp_path("rec.jsonl"), err, sizeof err), 0);
    assert_int_equal(train_job_record(&job, tmp_path("rec.jsonl"), err, sizeof err), 0);
    FILE *f = fopen(tmp_path("rec.jsonl"), "r");
    char line[8192];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "name")), "test-logreg");
        assert_string_equal(json_string_value(json_object_get(o, "algorithm")), "logreg");
        assert_string_equal(json_string_value(json_object_get(o, "convergence")), "sublinear");
        assert_int_equal(json_array_size(json_object_get(o, "loss")), 6);
        assert_int_equal(json_array_size(json_object_get(o, "iter_cpu_s")), 5);
        assert_int_equal(json_integer_value(json_object_get(o, "data_size")), 3000);
        assert_true(json_is_number(json_object_get(o, "accuracy")) ||
                    json_object_get(o, "accuracy") == NULL);
        json_decref(o);
        lines++;
    }
    fclose(f);
    assert_int_equal(lines, 2);
    assert_int_equal(train_job_record(&job, "/nonexistent/dir/x.jsonl", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/dir/x.jsonl"));
    job_teardown(&job);
    train_data_free(&d);
}

TEST_DIR_GROUP(tmpdir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idx_reads_pixels_and_labels),
        cmocka_unit_test(idx_wrong_magic_names_file_and_offset),
        cmocka_unit_test(idx_truncated_file_is_an_error),
        cmocka_unit_test(idx_missing_file_is_named),
        cmocka_unit_test(csv_reads_header_and_label_column),
        cmocka_unit_test(csv_ragged_row_names_line),
        cmocka_unit_test(csv_nan_names_line_and_column),
        cmocka_unit_test(libsvm_reads_sparse_rows),
        cmocka_unit_test(libsvm_errors_name_line_and_field),
        cmocka_unit_test(friedman1_is_deterministic_and_in_range),
        cmocka_unit_test(select_classes_renumbers),
        cmocka_unit_test(pool_visits_every_row_once_per_copy),
        cmocka_unit_test(sched_without_slaq_gives_threads_and_never_stops),
        cmocka_unit_test(kmeans_objective_matches_direct_recomputation),
        cmocka_unit_test(logreg_loss_falls_monotonically),
        cmocka_unit_test(results_do_not_depend_on_thread_count),
        cmocka_unit_test(svm_loss_falls_from_the_first_iteration),
        cmocka_unit_test(svmpoly_loss_falls),
        cmocka_unit_test(linreg_lbfgs_reaches_least_squares),
        cmocka_unit_test(mlpc_loss_falls),
        cmocka_unit_test(gbtreg_loss_falls_and_follows_allocation),
        cmocka_unit_test(lda_bound_falls_on_two_topic_text),
        cmocka_unit_test(corpus_reads_control_stanzas_and_drops_duplicates),
        cmocka_unit_test(target_reduction_stops_early),
        cmocka_unit_test(record_is_one_curve_line),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
