/*
 * slaq_train.c — slaq-train: real, data-parallel training jobs for slaq.
 *
 *   slaq-train ALGO [options]      train one model, one line per iteration
 *   slaq-train --list              the algorithms
 *
 * This file parses options, loads the data, splits it into partitions and
 * hands the job to the algorithm; docs/train.md is the manual.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "train/train.h"
#include "slaq/version.h"

enum {
    OPT_LIST = 1000, OPT_HELP, OPT_RECORD, OPT_NAME, OPT_DATA, OPT_FORMAT,
    OPT_TEST, OPT_LABEL_COL, OPT_CLASSES, OPT_SUBSAMPLE, OPT_SCALE, OPT_ROWS,
    OPT_PARTITIONS, OPT_SEED, OPT_K, OPT_LR, OPT_L2, OPT_DEGREE, OPT_BASIS,
    OPT_DEPTH, OPT_HIDDEN, OPT_VOCAB, OPT_DOCS, OPT_NO_STD, OPT_QUIET,
    OPT_THREADS, OPT_ITERS, OPT_TARGET, OPT_VERSION, OPT_VALIDATION,
    OPT_EVAL_EVERY, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME,
};

static const struct option main_opts[] = {
    {"list", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"target-reduction", required_argument, NULL, OPT_TARGET},
    {"record", required_argument, NULL, OPT_RECORD},
    {"name", required_argument, NULL, OPT_NAME},
    {"data", required_argument, NULL, OPT_DATA},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"test", required_argument, NULL, OPT_TEST},
    {"label-col", required_argument, NULL, OPT_LABEL_COL},
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"subsample", required_argument, NULL, OPT_SUBSAMPLE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"rows", required_argument, NULL, OPT_ROWS},
    {"partitions", required_argument, NULL, OPT_PARTITIONS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"k", required_argument, NULL, OPT_K},
    {"lr", required_argument, NULL, OPT_LR},
    {"l2", required_argument, NULL, OPT_L2},
    {"degree", required_argument, NULL, OPT_DEGREE},
    {"basis", required_argument, NULL, OPT_BASIS},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"vocab", required_argument, NULL, OPT_VOCAB},
    {"docs", required_argument, NULL, OPT_DOCS},
    {"no-standardize", no_argument, NULL, OPT_NO_STD},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"validation", required_argument, NULL, OPT_VALIDATION},
    {"eval-every", required_argument, NULL, OPT_EVAL_EVERY},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"resume", required_argument, NULL, OPT_RESUME},
    {NULL, 0, NULL, 0},
};

static void main_usage(FILE *f)
{
    fprintf(f,
            "usage: slaq-train ALGO [options]\n"
            "       slaq-train --list | --help | --version\n"
            "\n"
            "Trains one model on real data, printing one line per iteration\n"
            "(iter= loss= cpu_s= wall_s= samples= workers= samples_per_core_s=).\n"
            "\n"
            "job:   --threads N  --iters N  --target-reduction R  --record FILE\n"
            "       --name NAME  --seed N  --partitions P  --quiet\n"
            "metric: --validation F (hold out F of the training rows for the\n"
            "       per-iteration metric; default 0: measure it on the test set)\n"
            "       --eval-every N (measure the metric every N iterations,\n"
            "       default 1, 0: only at the end)\n"
            "state: --checkpoint FILE  --checkpoint-every N (default 1)\n"
            "       --resume FILE (continue a checkpointed run); with\n"
            "       $SLAQ_CHECKPOINT_DIR set, both default to\n"
            "       DIR/job-$SLAQ_JOB_ID.ckpt (else DIR/NAME.ckpt), saved when\n"
            "       the run stops and resumed when it exists\n"
            "data:  --data fmnist|friedman1|debdesc|FILE  --format libsvm|csv|control|lines\n"
            "       --test FILE  --label-col N  --classes A,B,..  --subsample F\n"
            "       --scale S  --rows N  --docs N  --no-standardize\n"
            "model: --k N  --lr X  --l2 X  --degree N  --basis N  --depth N\n"
            "       --hidden N[,N..]  --vocab N\n"
            "\n"
            "See docs/train.md for every option and algorithm.\n");
}

static void main_list(void)
{
    for (int i = 0; train_algos[i]; i++)
        printf("%-8s %s\n", train_algos[i]->name, train_algos[i]->summary);
}

/* Strict number parsing: the whole argument must be a number in range. */
static int arg_double(const char *opt, const char *s, double lo, double hi,
                      double *out)
{
    char *e;
    double v = strtod(s, &e);
    if (e == s || *e || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "slaq-train: --%s %s: expected a number in [%g, %g]\n",
                opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int arg_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || *e || v < lo || v > hi) {
        fprintf(stderr, "slaq-train: --%s %s: expected an integer in [%ld, %ld]\n",
                opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int arg_hidden(const char *s, struct train_params *p)
{
    p->n_hidden = 0;
    while (*s) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 1 || v > 100000 || (*e && *e != ',') || p->n_hidden == 8) {
            fprintf(stderr,
                    "slaq-train: --hidden: expected 1 to 8 layer sizes like 64 "
                    "or 128,64\n");
            return -1;
        }
        p->hidden[p->n_hidden++] = (int)v;
        s = *e ? e + 1 : e;
    }
    return p->n_hidden ? 0 : -1;
}

/* What the options say beyond the job itself. */
struct main_args {
    struct train_data_opts dopt;
    const char *record, *name, *resume;
    double threads, subsample, target, validation;
    long iters, partitions, docs;
    bool ckpt_every_set;
    char ckpt_buf[4096];    /* the checkpoint's path in $SLAQ_CHECKPOINT_DIR */
};

/* Applies option c (argument arg) to job or a. Returns 0, -1 once --list,
 * --help or --version is printed (exit 0), or 2 once the error is
 * printed. */
static int main_option(int c, const char *arg, struct train_job *job,
                       struct main_args *a)
{
    const char *o = main_opts[0].name;
    long v;
    for (int i = 0; main_opts[i].name; i++)
        if (main_opts[i].val == c)
            o = main_opts[i].name;
    switch (c) {
    case OPT_LIST: main_list(); return -1;
    case OPT_HELP: main_usage(stdout); return -1;
    case OPT_VERSION: printf("slaq-train %s\n", SLAQ_VERSION); return -1;
    case OPT_THREADS: if (arg_double(o, arg, 0.01, 4096, &a->threads)) return 2; break;
    case OPT_ITERS: if (arg_int(o, arg, 1, 10000000, &a->iters)) return 2; break;
    case OPT_TARGET: if (arg_double(o, arg, 0, 1, &a->target)) return 2; break;
    case OPT_RECORD: a->record = arg; break;
    case OPT_NAME: a->name = arg; break;
    case OPT_DATA: a->dopt.source = arg; break;
    case OPT_FORMAT: a->dopt.format = arg; break;
    case OPT_TEST: a->dopt.test = arg; break;
    case OPT_LABEL_COL:
        if (arg_int(o, arg, 1, 1000000, &v)) return 2;
        a->dopt.label_col = (int)v - 1;
        break;
    case OPT_CLASSES: a->dopt.classes = arg; break;
    case OPT_SUBSAMPLE: if (arg_double(o, arg, 1e-9, 1, &a->subsample)) return 2; break;
    case OPT_SCALE: if (arg_double(o, arg, 1e-6, 1e6, &job->scale)) return 2; break;
    case OPT_ROWS: if (arg_int(o, arg, 10, 1000000000, &v)) return 2; a->dopt.n_synth = (size_t)v; break;
    case OPT_PARTITIONS: if (arg_int(o, arg, 1, 4096, &a->partitions)) return 2; break;
    case OPT_SEED: if (arg_int(o, arg, 0, 2147483647, &v)) return 2; job->seed = (unsigned)v; break;
    case OPT_K: if (arg_int(o, arg, 1, 100000, &v)) return 2; job->prm.k = (int)v; break;
    case OPT_LR: if (arg_double(o, arg, 1e-12, 1e6, &job->prm.lr)) return 2; break;
    case OPT_L2: if (arg_double(o, arg, 0, 1e6, &job->prm.l2)) return 2; break;
    case OPT_DEGREE: if (arg_int(o, arg, 1, 10, &v)) return 2; job->prm.degree = (int)v; break;
    case OPT_BASIS: if (arg_int(o, arg, 1, 100000, &v)) return 2; job->prm.basis = (int)v; break;
    case OPT_DEPTH: if (arg_int(o, arg, 1, 30, &v)) return 2; job->prm.depth = (int)v; break;
    case OPT_HIDDEN: if (arg_hidden(arg, &job->prm)) return 2; break;
    case OPT_VOCAB: if (arg_int(o, arg, 10, 10000000, &v)) return 2; job->prm.vocab = (int)v; break;
    case OPT_DOCS: if (arg_int(o, arg, 10, 100000000, &a->docs)) return 2; break;
    case OPT_NO_STD: job->prm.standardize = false; break;
    case OPT_QUIET: job->quiet = true; break;
    case OPT_VALIDATION: if (arg_double(o, arg, 0, 0.9, &a->validation)) return 2; break;
    case OPT_EVAL_EVERY: if (arg_int(o, arg, 0, 1000000, &v)) return 2; job->eval_every = (int)v; break;
    case OPT_CHECKPOINT: job->ckpt_path = arg; break;
    case OPT_CHECKPOINT_EVERY: if (arg_int(o, arg, 1, 1000000, &v)) return 2; job->ckpt_every = (int)v; a->ckpt_every_set = true; break;
    case OPT_RESUME: a->resume = arg; break;
    default: main_usage(stderr); return 2;
    }
    return 0;
}

/* Reads the algorithm and the options into job and a, from their
 * defaults. Returns 0 to go on, -1 to exit 0 (--list, --help, --version),
 * or 2 once the error is printed. */
static int main_parse(int argc, char **argv, struct train_job *job,
                      struct main_args *a)
{
    *a = (struct main_args){.dopt = {.label_col = -1}, .threads = 1,
                            .validation = -1, .partitions = 16};
    job->prm = (struct train_params){.lr = -1, .l2 = -1, .standardize = true};
    job->scale = 1;
    job->eval_every = 1;
    job->ckpt_every = 1;
    job->resumed_from = -1;

    if (argc >= 2 && argv[1][0] != '-') {
        job->algo = train_algo_find(argv[1]);
        if (!job->algo) {
            fprintf(stderr, "slaq-train: unknown algorithm '%s'; try --list\n",
                    argv[1]);
            return 2;
        }
        argv++;
        argc--;
    }
    int c;
    while ((c = getopt_long(argc, argv, "", main_opts, NULL)) != -1) {
        int rc = main_option(c, optarg, job, a);
        if (rc)
            return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "slaq-train: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!job->algo) {
        main_usage(stderr);
        return 2;
    }
    return 0;
}

/* Loads the documents of a text algorithm (lda) into job, *rows of
 * them, and partitions them. Returns 0, or -1 with err set. */
static int main_load_text(struct train_job *job, struct main_args *a,
                          size_t *rows, char *err, size_t errlen)
{
    const struct train_data_opts *dopt = &a->dopt;
    const char *path = dopt->source && strcmp(dopt->source, "debdesc") ? dopt->source : NULL;
    size_t vocab = job->prm.vocab ? (size_t)job->prm.vocab : 2000;
    size_t maxdocs = a->docs ? (size_t)a->docs
                             : (size_t)llround(20000 * a->subsample);
    if (train_corpus_load(path, dopt->format, vocab, maxdocs, &job->corpus,
                          &job->heldout, err, errlen) < 0)
        return -1;
    snprintf(job->dataset, sizeof job->dataset, "%s", path ? "text" : "debdesc");
    *rows = job->corpus.n_docs;
    train_job_partition(job, *rows, (size_t)a->partitions);
    job->data_size = job->corpus.n_tokens * job->rows_per_iter / (double)*rows;
    return 0;
}

/* Loads the rows of a table algorithm into job, expands and standardises
 * their features as the algorithm needs, splits off the validation rows
 * and partitions the rest, *rows of them. Returns 0, or -1 with err set. */
static int main_load_table(struct train_job *job, struct main_args *a,
                           size_t *rows, char *err, size_t errlen)
{
    if (train_data_load(&a->dopt, job->algo->kind == TRAIN_REGRESS, &job->train,
                        &job->test, err, errlen) < 0)
        return -1;
    /* linreg fits polynomial features (--degree, default 2): a linear
     * model of the raw Friedman features is solved in a handful of
     * L-BFGS iterations and fits badly. */
    if (job->algo == &train_algo_linreg && job->prm.degree != 1) {
        if (job->prm.degree > 2) {
            snprintf(err, errlen, "--degree %d: linreg expands features "
                                  "to degree 1 or 2", job->prm.degree);
            return -1;
        }
        train_data_poly2(&job->train);
        if (job->test.n)
            train_data_poly2(&job->test);
    }
    if (job->prm.standardize && strcmp(job->algo->name, "kmeans") &&
        strcmp(job->algo->name, "gbt") && strcmp(job->algo->name, "gbtreg"))
        train_data_standardize(&job->train, job->test.n ? &job->test : NULL);
    /* The validation split the per-iteration metric is measured on:
     * rows the model does not train on, kept apart from the test set
     * that the final metric is measured on. */
    if (a->validation < 0)
        a->validation = 0;
    if (a->validation > 0 &&
        train_data_split(&job->train, a->validation, job->seed, &job->val, err,
                         errlen) < 0)
        return -1;
    snprintf(job->dataset, sizeof job->dataset, "%s", job->train.name);
    *rows = job->train.n;
    train_job_partition(job, *rows, (size_t)a->partitions);
    job->data_size = job->rows_per_iter * (double)job->train.d;
    return 0;
}

/* The job's name: --name, else the algorithm, data set, model and seed. */
static void main_name(struct train_job *job, const char *name)
{
    char tag[96];
    json_t *scratch = json_object();
    job->algo->describe(job, tag, sizeof tag, scratch);
    json_decref(scratch);
    if (name)
        snprintf(job->name, sizeof job->name, "%s", name);
    else
        snprintf(job->name, sizeof job->name, "%s-%s%s%s%s-s%u", job->algo->name,
                 job->dataset, tag[0] ? "-" : "", tag,
                 job->scale != 1 ? "-scaled" : "", job->seed);
}

/* Sets the job's checkpoint and the run to resume: the options, else
 * $SLAQ_CHECKPOINT_DIR, where a job that may be suspended and resumed
 * elsewhere keeps its state (a run finding its file there resumes).
 * Returns 0, or -1 with err set (an algorithm without checkpoints). */
static int main_checkpoints(struct train_job *job, struct main_args *a,
                            char *err, size_t errlen)
{
    const char *ckdir = getenv("SLAQ_CHECKPOINT_DIR");
    if (ckdir && *ckdir && (!job->ckpt_path || !a->resume)) {
        char *buf = a->ckpt_buf;
        const char *jid = getenv("SLAQ_JOB_ID");
        if (jid && *jid)
            snprintf(buf, sizeof a->ckpt_buf, "%s/job-%s.ckpt", ckdir, jid);
        else
            snprintf(buf, sizeof a->ckpt_buf, "%s/%s.ckpt", ckdir, job->name);
        for (char *p = buf + strlen(ckdir) + 1; *p; p++)
            if (*p == '/')
                *p = '_';
        if (!job->algo->state) {
            /* Not an error: the job simply cannot be resumed elsewhere. */
        } else if (!job->ckpt_path) {
            job->ckpt_path = buf;
            /* Saved when the run stops (slaq's stop to suspend it) unless
             * --checkpoint-every asks for more. */
            if (!a->ckpt_every_set)
                job->ckpt_every = 0;
        }
        if (job->algo->state && !a->resume && access(job->ckpt_path, R_OK) == 0)
            a->resume = job->ckpt_path;
    }
    if ((job->ckpt_path || a->resume) && !job->algo->state) {
        snprintf(err, errlen, "%s: checkpoints are not supported for "
                 "this algorithm (they are for logreg, svm, svmpoly, linreg, "
                 "mlpc and kmeans)", job->ckpt_path ? "--checkpoint" : "--resume");
        return -1;
    }
    job->resume_path = a->resume;
    return 0;
}

/* Prints the run's "done" line. */
static void main_print_done(const struct train_job *job, const char *resume)
{
    printf("done iters=%d stop=%s loss=%.10g cpu_s=%.3f wall_s=%.3f "
           "samples_per_core_s=%.0f",
           job->iters, job->stop_reason ? job->stop_reason : "-",
           job->loss[job->iters], job->cpu_total, job->wall_total,
           job->cpu_total > 0 ? job->samples_total / job->cpu_total : 0.0);
    if (job->metric_name[0])
        printf(" %s=%.4f", job->metric_name, job->metric);
    if (job->ckpt_count)
        printf(" checkpoints=%ld checkpoint_bytes=%ld checkpoint_ms_mean=%.2f",
               job->ckpt_count, job->ckpt_bytes,
               job->ckpt_ms_total / (double)job->ckpt_count);
    if (job->resumed_from >= 0 && resume)
        printf(" resumed_from=%d", job->resumed_from);
    printf("\n");
}

/* Frees what the job holds. */
static void main_free(struct train_job *job)
{
    if (job->algo && job->algo->destroy && job->state)
        job->algo->destroy(job);
    if (job->sched)
        train_sched_close(job->sched);
    train_data_free(&job->train);
    train_data_free(&job->test);
    train_data_free(&job->val);
    train_corpus_free(&job->corpus);
    train_corpus_free(&job->heldout);
    free(job->parts);
    free(job->loss);
    free(job->iter_cpu);
    free(job->epoch_metric);
}

int main(int argc, char **argv)
{
    struct train_job job = {0};
    struct main_args a;
    char err[TRAIN_ERRLEN] = "";
    int rc = main_parse(argc, argv, &job, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    rc = 2;

    /* The job's parallelism is slaq's N worker threads; BLAS inside each
     * worker must not add threads of its own. */
    openblas_set_num_threads(1);

    job.max_iters = a.iters ? (int)a.iters : job.algo->default_iters;
    job.target_reduction = a.target;
    if (!a.subsample)
        a.subsample = job.algo->default_subsample;
    /* A scale below one is a smaller sample; above one, virtual copies. */
    if (job.scale < 1) {
        a.subsample *= job.scale;
        job.scale = 1;
    }
    a.dopt.subsample = a.subsample;
    a.dopt.seed = job.seed;

    size_t rows;
    if ((job.algo->kind == TRAIN_TEXT
             ? main_load_text(&job, &a, &rows, err, sizeof err)
             : main_load_table(&job, &a, &rows, err, sizeof err)) < 0)
        goto err;
    main_name(&job, a.name);
    if (!job.quiet)
        printf("# slaq-train %s: %s, %zu %s%s, %zu partitions, %g threads\n",
               job.algo->name, job.dataset, rows,
               job.algo->kind == TRAIN_TEXT ? "documents" : "rows",
               job.scale != 1 ? " (scaled)" : "", job.n_parts, a.threads);
    if (main_checkpoints(&job, &a, err, sizeof err) < 0)
        goto err;

    job.sched = train_sched_open(job.name, a.threads);
    train_sched_set_iters(job.sched, job.max_iters);
    rc = train_job_run(&job, err, sizeof err);
    if (rc != 0)
        goto err;
    main_print_done(&job, a.resume);
    if (a.record && train_job_record(&job, a.record, err, sizeof err) < 0) {
        rc = 1;
        goto err;
    }
    rc = strcmp(job.stop_reason ? job.stop_reason : "", "diverged") ? 0 : 1;
    if (rc)
        fprintf(stderr, "slaq-train: %s: diverged: %s; try a smaller --lr, "
                "or scale the data\n", job.name, job.diverged);
    goto out;
err:
    fprintf(stderr, "slaq-train: %s\n", err);
out:
    main_free(&job);
    return rc;
}
