/*
 * train.h — internal interfaces of slaq-train, the real training jobs that
 * slaq schedules.
 *
 * slaq-train is one program with nine algorithms. They share everything
 * except their model: the dataset readers (data.c, corpus.c), the
 * data-parallel worker pool (pool.c), the iteration driver that measures CPU
 * time, prints progress, talks to slaq and decides when to stop (job.c), and
 * the curve recorder (job.c, lbfgs.c). Each algorithm is a `struct
 * train_algo` in an alg_*.c file (the linear models share alg_linear.c),
 * found by name in the table in algos.c.
 *
 * Prefixes: train_data_ (datasets), train_corpus_ (LDA text), train_pool_
 * (workers), train_job_ (the driver), train_sched_ (slaq's allocation and
 * stop signal, client_link.c).
 */
#ifndef SLAQ_TRAIN_H
#define SLAQ_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define TRAIN_ERRLEN 512

/* ---------------------------------------------------------------------------
 * Datasets
 */

/* A dense labelled dataset: n rows of d features, row-major. For
 * classification `y` holds class indices 0..n_classes-1 (as doubles); for
 * regression it holds targets and n_classes is 0. */
struct train_data {
    size_t n, d;
    double *x;          /* n*d */
    double *y;          /* n */
    int n_classes;      /* 0 for regression */
    char name[64];      /* short name used in curve names: "fmnist", ... */
};

/* Options that choose and shape the dataset. */
struct train_data_opts {
    const char *source;   /* "fmnist", "friedman1", "debdesc" or a path */
    const char *format;   /* "libsvm", "csv", "control", "lines" or NULL */
    const char *test;     /* optional test-set path for user files */
    const char *classes;  /* optional "A,B,..." restriction (fmnist) */
    int label_col;        /* CSV label column, -1 = last */
    double subsample;     /* fraction of training rows kept, (0,1] */
    size_t n_synth;       /* rows of a synthetic dataset */
    unsigned seed;
};

/* Reads an IDX images file (magic 0x00000803) and its labels file (magic
 * 0x00000801), gzip-compressed or plain (zlib reads both), scaling pixels to
 * [0,1]. On error returns -1 and writes a message naming the file and byte
 * offset into err. */
int train_data_read_idx(const char *images, const char *labels,
                        struct train_data *out, char *err, size_t errlen);

/* Reads a LIBSVM-format file ("label idx:val idx:val ...", 1-based indices)
 * into a dense dataset with at least `min_d` columns. Labels are kept as
 * numbers; train_data_relabel() turns them into classes. Errors name the
 * file, line and field. */
int train_data_read_libsvm(const char *path, size_t min_d,
                           struct train_data *out, char *err, size_t errlen);

/* Reads a numeric CSV file; the column `label_col` (-1 = last) is the label.
 * A first line whose first field is not a number is a header. Ragged rows,
 * non-numbers, NaN and infinities are errors naming file, line and column. */
int train_data_read_csv(const char *path, int label_col,
                        struct train_data *out, char *err, size_t errlen);

/* Friedman #1 regression data: x ~ U[0,1]^10, y = 10 sin(pi x1 x2) +
 * 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + N(0,1); x6..x10 are noise. */
int train_data_friedman1(size_t n, unsigned seed, struct train_data *out,
                         char *err, size_t errlen);

/* Maps the distinct label values of `tr` (and `te`, if not NULL) to class
 * indices 0..C-1 in increasing order and sets n_classes. Fails if there are
 * more than `max_classes` distinct values. */
int train_data_relabel(struct train_data *tr, struct train_data *te,
                       int max_classes, char *err, size_t errlen);

/* Keeps only the rows whose class is listed in `classes` ("0,6"), renumbering
 * them 0..k-1 in list order. */
int train_data_select_classes(struct train_data *t, const char *classes,
                              char *err, size_t errlen);

/* Moves a random fraction of the rows of `tr` (deterministic for a seed)
 * into a new dataset `val`, the validation split; the rest stay in `tr` in
 * their order. Fails (err names --validation) unless both sides keep a
 * row. */
int train_data_split(struct train_data *tr, double fraction, unsigned seed,
                     struct train_data *val, char *err, size_t errlen);

/* Keeps a random fraction of the rows (deterministic for a seed). */
void train_data_subsample(struct train_data *t, double fraction,
                          unsigned seed);

/* Appends every product x_i x_j (i <= j) of the original features: the
 * degree-2 polynomial expansion, d + d(d+1)/2 features. */
void train_data_poly2(struct train_data *t);

/* Standardises every feature of `tr` to mean 0 and variance 1 and applies
 * the same transform to `te` (may be NULL). Constant features become 0. */
void train_data_standardize(struct train_data *tr, struct train_data *te);

/* Loads the training and test sets a classification or regression
 * algorithm asked for. `regression` picks the default source. te->n is 0
 * when there is no test set. */
int train_data_load(const struct train_data_opts *o, bool regression,
                    struct train_data *tr, struct train_data *te,
                    char *err, size_t errlen);

void train_data_free(struct train_data *t);

/* ---------------------------------------------------------------------------
 * Text corpus for LDA
 */

/* A bag-of-words corpus: document j has words[off[j] .. off[j+1]) with
 * counts cnt[] (distinct word ids per document). */
struct train_corpus {
    size_t n_docs, n_vocab;
    size_t *off;        /* n_docs + 1 */
    int *word;          /* off[n_docs] */
    int *cnt;           /* off[n_docs] */
    char **vocab;       /* n_vocab strings */
    double n_tokens;    /* total word count */
};

/* Builds a training and a held-out corpus from Debian package descriptions.
 * `path` NULL runs `apt-cache dumpavail`; otherwise it is a file in Debian
 * control format ("control": Description fields are the documents) or plain
 * text with one document per line ("lines"). Words are lower-cased runs of
 * letters of length >= 3, stop-words removed, the `vocab_cap` most
 * document-frequent words kept, documents with fewer than 5 kept words
 * dropped. Every tenth document goes to `heldout`. `max_docs` (0 = all)
 * limits the documents read. */
int train_corpus_load(const char *path, const char *format, size_t vocab_cap,
                      size_t max_docs, struct train_corpus *train,
                      struct train_corpus *heldout, char *err, size_t errlen);

void train_corpus_free(struct train_corpus *c);

/* ---------------------------------------------------------------------------
 * Partitions and the worker pool
 */

/* A partition is a contiguous range of rows (or documents). With --scale > 1
 * the partition list covers the data several times over ("virtual copies"),
 * so a job does proportionally more work per iteration with the same memory
 * and the same loss curve. */
struct train_part {
    size_t begin, end;
};

struct train_job;

/* Work on one partition by worker `w` (0 <= w < job->n_workers): a worker
 * accumulates into its own buffers, the caller reduces afterwards. */
typedef void (*train_part_fn)(void *ctx, const struct train_part *p, int w);

/* Runs fn over every partition with job->n_workers threads (the calling
 * thread is worker 0); partitions are handed out one at a time so a slow core
 * does not hold the others up. Returns when all partitions are done. Counts
 * the pass in job->passes (samples reported = rows x passes). */
void train_pool_run(struct train_job *job, train_part_fn fn, void *ctx);

/* ---------------------------------------------------------------------------
 * slaq's side: allocation and stop signal (client_link.c)
 */

struct train_sched;

/* Connects to slaqd through libslaq-client when SLAQ_SOCKET is set (a job
 * slaqd started also has SLAQ_JOB_ID; otherwise the process attaches itself
 * as a new job named `job_name`); otherwise, and until slaqd gives an
 * allocation, the job uses `threads` cores. Never fails: a job without slaq
 * still trains. */
struct train_sched *train_sched_open(const char *job_name, double threads);
/* Tells slaq how many iterations the run has (--iters): its end of curve. */
void train_sched_set_iters(struct train_sched *s, int iters);

/* Worker threads for the next iteration: slaq_client_threads(), slaq's
 * thread rule applied to the allocation (--threads until slaqd gives one,
 * and without slaqd). */
int train_sched_threads(struct train_sched *s);

/* Reports the state after iteration `iter` (0: the loss before training,
 * with no CPU time or samples): the loss, the CPU seconds used by all
 * threads and the samples processed since the previous report. */
void train_sched_report(struct train_sched *s, int iter, double loss,
                        double cpu_s, double samples, double metric);
/* Names the metric the reports carry (metric NaN: none at that report). */
void train_sched_set_metric_name(struct train_sched *s, const char *name);

/* True once slaq has asked the job to stop. */
bool train_sched_should_stop(struct train_sched *s);

void train_sched_close(struct train_sched *s);

/* ---------------------------------------------------------------------------
 * The job driver
 */

/* Parameters every algorithm may read; the options table in slaq_train.c fills
 * them. Negative or zero means "the algorithm's default" where noted. */
struct train_params {
    int k;              /* clusters (kmeans) or topics (lda) */
    double lr;          /* learning rate / eta, <= 0: default */
    double l2;          /* regularisation, < 0: default */
    int degree;         /* svmpoly kernel degree, linreg feature degree */
    int basis;          /* svmpoly basis points */
    int depth;          /* gbt tree depth */
    int hidden[8];      /* mlpc hidden layer sizes */
    int n_hidden;
    int vocab;          /* lda vocabulary cap */
    bool standardize;
};

struct train_job {
    const struct train_algo *algo;
    struct train_params prm;
    struct train_data train, test;
    struct train_data val;      /* --validation split (n 0: none) */
    struct train_corpus corpus, heldout;

    /* Partitioning. */
    struct train_part *parts;
    size_t n_parts;
    int max_workers;        /* partitions of one copy: the most workers used */
    int n_workers;          /* this iteration's workers */
    double rows_per_iter;   /* rows processed per pass over the partitions */
    long passes;            /* passes over the partitions so far */
    long passes_mark;       /* ... at the start of this iteration */
    double scale;           /* --scale: virtual copies of the data (>= 1) */
    double data_size;       /* curve-format data_size (rows * features) */

    /* Stopping. */
    int max_iters;
    double target_reduction;    /* 0 = off */

    /* Progress. */
    double *loss;           /* loss[0..iters] */
    double *iter_cpu;       /* iter_cpu[0..iters-1] */
    int iters;
    size_t cap;
    double best_drop;       /* largest single-iteration loss drop */
    double cpu_mark, wall_mark;
    double cpu_total, wall_total, samples_total;
    const char *stop_reason;
    bool out_of_memory;     /* the history could not grow: the run fails */
    /* Why the run diverged (stop_reason "diverged"): the loss or the
     * metric that stopped being finite, its value and iteration. */
    char diverged[96];
    bool metric_bad;        /* the last measured metric was NaN */
    bool quiet;

    /* The metric measured every eval_every iterations (0: never) on the
     * validation split (else the test set or held-out documents): its
     * name as reported ("val_accuracy", "test_rmse"...) and values. */
    int eval_every;
    char epoch_metric_name[40];
    double *epoch_metric;   /* epoch_metric[0..iters], NaN where not measured */
    double eval_s;          /* wall seconds spent measuring it */

    /* Checkpoints (ckpt.c): written to ckpt_path every ckpt_every
     * iterations and when the run stops; resumed from resume_path. */
    const char *ckpt_path;
    const char *resume_path;
    int ckpt_every;
    double ckpt_ms_last, ckpt_ms_total;
    long ckpt_bytes, ckpt_count;
    int resumed_from;       /* the iteration a resumed run continued from */

    /* Results printed at the end and recorded ("accuracy", "perplexity"...). */
    char metric_name[32];
    double metric;
    char name[256];
    char dataset[64];
    unsigned seed;

    struct train_sched *sched;
    void *state;            /* the algorithm's own */
};

/* One algorithm. */
struct train_algo {
    const char *name;
    const char *summary;
    const char *convergence;    /* curve format: "sublinear", "superlinear" */
    enum { TRAIN_CLASSIFY, TRAIN_REGRESS, TRAIN_TEXT } kind;
    int default_iters;          /* --iters when not given */
    double default_subsample;   /* --subsample when not given */
    /* Builds the model and returns the loss before the first iteration
     * through *loss0. */
    int (*init)(struct train_job *job, double *loss0, char *err, size_t len);
    /* One iteration; the new loss through *loss. NULL when `run` is set. */
    int (*step)(struct train_job *job, double *loss, char *err, size_t len);
    /* Drives its own loop (L-BFGS), calling train_job_iterate() after every
     * iteration until it returns true. NULL when `step` is set. */
    int (*run)(struct train_job *job, char *err, size_t len);
    /* Computes job->metric on the test data (or held-out documents). */
    int (*evaluate)(struct train_job *job, char *err, size_t len);
    /* Names the run's parameters: a short tag for the curve name ("lr0.5")
     * and the same values as fields of the record's "params" object. */
    void (*describe)(const struct train_job *job, char *tag, size_t len,
                     json_t *params);
    void (*destroy)(struct train_job *job);
    /* The algorithm's state for a checkpoint: every array that with the
     * driver's own progress lets a run continue where it stopped (NULL:
     * the algorithm has no checkpoints). `fn` is called once per array,
     * in a fixed order (a scalar is an array of one); on load the same
     * calls fill the arrays in place. */
    void (*state)(struct train_job *job, void (*fn)(void *arg, double *v,
                  size_t n), void *arg);
};

/* Records that one iteration finished with `loss`: measures its CPU time
 * (every thread of the process), prints the progress line, reports to slaq,
 * reads the next allocation into job->n_workers. Returns true when the job
 * must stop (slaq said so, --iters reached, --target-reduction met, the
 * loss or the measured metric is not finite: stop_reason "diverged" with
 * job->diverged saying which, or the loss history cannot grow:
 * job->out_of_memory, which train_job_run reports as a failure). */
bool train_job_iterate(struct train_job *job, double loss);

/* Grows loss, iter_cpu and epoch_metric (one capacity, job->cap) to hold
 * n entries each, doubling from 64. 0 on success; -1 when memory runs out,
 * with every array's contents and job->cap as they were. */
int train_job_reserve(struct train_job *job, size_t n);

/* Splits `rows` rows (or documents) into min(want, rows) partitions and
 * repeats them for job->scale (whole copies, then a prefix for the
 * fraction); sets parts, max_workers and rows_per_iter. */
void train_job_partition(struct train_job *job, size_t rows, size_t want);

/* Runs the job: the algorithm's init, its iterations until the driver
 * stops them, and its evaluation. Needs data, partitions, sched and
 * max_iters set. A loss or metric that is not finite — from the start, at
 * any iteration, or in the final evaluation — ends the run with
 * stop_reason "diverged" (never "converged"), still a return of 0: the
 * caller prints the done line and exits 1. Returns 0, 1 (runtime failure)
 * or 2 (the data cannot make this model), with err filled. The caller frees job->state through
 * algo->destroy. */
int train_job_run(struct train_job *job, char *err, size_t len);

/* Begins the clock for the first iteration; prints the iteration-0 line.
 * -1 (job->out_of_memory set) when the loss history cannot be allocated. */
int train_job_start(struct train_job *job, double loss0);
/* The same for a run restored from a checkpoint (job->iters done). */
void train_job_resume(struct train_job *job);

/* Appends the run as one curve-format JSON line to `path`. */
int train_job_record(const struct train_job *job, const char *path,
                     char *err, size_t errlen);

/* Rows in the largest partition (workers size their scratch buffers). */
size_t train_job_max_part(const struct train_job *job);

/* Minimises f with L-BFGS (liblbfgs) starting from x[0..n), calling
 * train_job_iterate() after every L-BFGS iteration; x holds the result.
 * f returns the objective at x and writes its gradient into g. Stops when
 * the driver says so or L-BFGS cannot make progress ("converged"). */
typedef double (*train_objective_fn)(void *ctx, const double *x, double *g);
int train_lbfgs_run(struct train_job *job, double *x, size_t n,
                    train_objective_fn f, void *ctx, char *err, size_t len);

/* CPU seconds used so far by every thread of the process. */
double train_cpu_seconds(void);
double train_wall_seconds(void);

/* Checkpoints (ckpt.c). Writes the run's state (the driver's progress and
 * the algorithm's arrays) to job->ckpt_path atomically (a temporary file
 * renamed over it); 0, or -1 with err. */
int train_ckpt_save(struct train_job *job, char *err, size_t errlen);
/* Restores a state saved by train_ckpt_save() into a job whose algorithm
 * has been initialised on the same data and options; refuses (err says
 * which field differs) a checkpoint of another algorithm, dataset shape
 * or model size. */
int train_ckpt_load(struct train_job *job, const char *path, char *err,
                    size_t errlen);

/* The algorithm table (algos.c). */
extern const struct train_algo *const train_algos[];
const struct train_algo *train_algo_find(const char *name);

/* Small helpers shared by the algorithms (util.c). */
void *train_xcalloc(size_t n, size_t size);
double train_rand_uniform(uint64_t *state);
double train_rand_normal(uint64_t *state);
/* In-place softmax of a row of k scores; returns log of the normaliser. */
double train_softmax(double *z, int k);
/* Index of the largest of k values. */
int train_argmax(const double *v, int k);

/* The centres (k x d) of a kmeans job that has run (for checking its
 * objective independently). */
const double *train_kmeans_centres(const struct train_job *job, int *k);

/* The algorithms. */
extern const struct train_algo train_algo_kmeans, train_algo_logreg,
    train_algo_svm, train_algo_svmpoly, train_algo_linreg, train_algo_mlpc,
    train_algo_gbt, train_algo_gbtreg, train_algo_lda;

#endif
