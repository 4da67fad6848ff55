/*
 * alg_gbt.c — gradient-boosted trees through XGBoost's C API: gbt
 * (classification) and gbtreg (regression). One boosting round per
 * iteration.
 *
 * XGBoost parallelises tree construction itself (over features and
 * histogram bins), so here the data is not split into slaq's partitions;
 * instead slaq's allocation N becomes XGBoost's `nthread` before every
 * round. Loss: the training objective XGBoost evaluates on its cached
 * training predictions after the round (no extra pass): multi-class or
 * binary log-loss for gbt, mean squared error for gbtreg. The loss before
 * the first round is that of the constant base score, computed here: log C
 * for C classes (uniform probabilities), log 2 for two, and the variance of
 * the targets for regression (base score = their mean).
 *
 * --scale > 1 replicates the rows physically (XGBoost has no notion of
 * virtual copies), so memory grows with it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <xgboost/c_api.h>

#include "train/train.h"

struct gbt {
    DMatrixHandle dtrain, dtest;
    BoosterHandle booster;
    bool regress;
    int k;
    int round;
};

#define GBT_ETA 0.3
#define GBT_DEPTH 6

static int gbt_check(int rc, const char *what, char *err, size_t len)
{
    if (rc == 0)
        return 0;
    snprintf(err, len, "XGBoost: %s: %s", what, XGBGetLastError());
    return -1;
}

static int gbt_matrix(const struct train_data *D, size_t copies_rows,
                      DMatrixHandle *out, char *err, size_t len)
{
    size_t rows = copies_rows ? copies_rows : D->n;
    float *x = train_xcalloc(rows * D->d, sizeof *x);
    float *y = train_xcalloc(rows, sizeof *y);
    for (size_t i = 0; i < rows; i++) {
        size_t r = i % D->n;
        for (size_t j = 0; j < D->d; j++)
            x[i * D->d + j] = (float)D->x[r * D->d + j];
        y[i] = (float)D->y[r];
    }
    int rc = gbt_check(XGDMatrixCreateFromMat(x, rows, D->d, NAN, out),
                       "creating the data matrix", err, len);
    if (rc == 0)
        rc = gbt_check(XGDMatrixSetFloatInfo(*out, "label", y, rows),
                       "setting labels", err, len);
    free(x);
    free(y);
    return rc;
}

static double gbt_eta(const struct train_job *job)
{
    return job->prm.lr > 0 ? job->prm.lr : GBT_ETA;
}

static int gbt_depth(const struct train_job *job)
{
    return job->prm.depth ? job->prm.depth : GBT_DEPTH;
}

static int gbt_init_common(struct train_job *job, bool regress, double *loss0,
                           char *err, size_t len)
{
    const struct train_data *D = &job->train;
    struct gbt *m = train_xcalloc(1, sizeof *m);
    char buf[64];
    job->state = m;
    m->regress = regress;
    m->k = regress ? 0 : D->n_classes;
    size_t rows = (size_t)llround(job->rows_per_iter);
    if (gbt_matrix(D, rows, &m->dtrain, err, len) < 0)
        return -1;
    if (job->test.n && gbt_matrix(&job->test, 0, &m->dtest, err, len) < 0)
        return -1;
    if (gbt_check(XGBoosterCreate(&m->dtrain, 1, &m->booster), "creating the booster",
                  err, len) < 0)
        return -1;

    double base = 0.5;
    if (regress) {
        double mu = 0, var = 0;
        for (size_t i = 0; i < D->n; i++)
            mu += D->y[i];
        mu /= (double)D->n;
        for (size_t i = 0; i < D->n; i++)
            var += (D->y[i] - mu) * (D->y[i] - mu);
        base = mu;
        *loss0 = var / (double)D->n;
    } else {
        *loss0 = log((double)m->k);
    }
    const char *obj = regress ? "reg:squarederror"
                              : m->k == 2 ? "binary:logistic" : "multi:softprob";
    const char *metric = regress ? "rmse" : m->k == 2 ? "logloss" : "mlogloss";
    char eta[32], depth[32], basestr[32], seed[32];
    snprintf(eta, sizeof eta, "%g", gbt_eta(job));
    snprintf(depth, sizeof depth, "%d", gbt_depth(job));
    snprintf(basestr, sizeof basestr, "%.17g", base);
    snprintf(seed, sizeof seed, "%u", job->seed);
    const char *prm[][2] = {
        {"objective", obj}, {"eval_metric", metric}, {"eta", eta},
        {"max_depth", depth}, {"tree_method", "hist"}, {"base_score", basestr},
        {"seed", seed}, {"verbosity", "0"},
    };
    for (size_t i = 0; i < sizeof prm / sizeof prm[0]; i++)
        if (gbt_check(XGBoosterSetParam(m->booster, prm[i][0], prm[i][1]),
                      prm[i][0], err, len) < 0)
            return -1;
    if (!regress && m->k > 2) {
        snprintf(buf, sizeof buf, "%d", m->k);
        if (gbt_check(XGBoosterSetParam(m->booster, "num_class", buf), "num_class",
                      err, len) < 0)
            return -1;
    }
    return 0;
}

static int gbt_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    return gbt_init_common(job, false, loss0, err, len);
}

static int gbtreg_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    return gbt_init_common(job, true, loss0, err, len);
}

static int gbt_step(struct train_job *job, double *loss, char *err, size_t len)
{
    struct gbt *m = job->state;
    char buf[32];
    const char *names[] = {"train"}, *out = NULL;
    snprintf(buf, sizeof buf, "%d", job->n_workers);
    /* Some of XGBoost's loops (evaluation, prediction caches) size their
     * OpenMP teams from the calling thread's default rather than from
     * `nthread`; both must follow slaq's allocation. */
    omp_set_num_threads(job->n_workers);
    if (gbt_check(XGBoosterSetParam(m->booster, "nthread", buf), "nthread", err,
                  len) < 0 ||
        gbt_check(XGBoosterUpdateOneIter(m->booster, m->round, m->dtrain),
                  "boosting round", err, len) < 0 ||
        gbt_check(XGBoosterEvalOneIter(m->booster, m->round, &m->dtrain, names, 1,
                                       &out),
                  "evaluating the round", err, len) < 0)
        return -1;
    m->round++;
    /* out looks like "[3]\ttrain-mlogloss:0.812345". */
    const char *colon = strrchr(out, ':');
    char *end;
    double v = colon ? strtod(colon + 1, &end) : NAN;
    if (!colon || end == colon + 1) {
        snprintf(err, len, "XGBoost: cannot read the loss from \"%s\"", out);
        return -1;
    }
    *loss = m->regress ? v * v : v;
    return 0;
}

static int gbt_evaluate(struct train_job *job, char *err, size_t len)
{
    struct gbt *m = job->state;
    const struct train_data *T = &job->test;
    bst_ulong n;
    const float *pred;
    if (T->n == 0)
        return 0;
    if (gbt_check(XGBoosterPredict(m->booster, m->dtest, 0, 0, 0, &n, &pred),
                  "predicting", err, len) < 0)
        return -1;
    double score = 0;
    for (size_t i = 0; i < T->n; i++) {
        if (m->regress) {
            double r = pred[i] - T->y[i];
            score += r * r;
        } else if (m->k == 2) {
            score += (pred[i] > 0.5) == (T->y[i] == 1);
        } else {
            int b = 0;
            for (int c = 1; c < m->k; c++)
                if (pred[i * (size_t)m->k + c] > pred[i * (size_t)m->k + b])
                    b = c;
            score += b == (int)T->y[i];
        }
    }
    if (m->regress) {
        snprintf(job->metric_name, sizeof job->metric_name, "test_rmse");
        job->metric = sqrt(score / (double)T->n);
    } else {
        snprintf(job->metric_name, sizeof job->metric_name, "accuracy");
        job->metric = score / (double)T->n;
    }
    return 0;
}

static void gbt_describe(const struct train_job *job, char *tag, size_t len,
                         json_t *params)
{
    snprintf(tag, len, "eta%g-d%d", gbt_eta(job), gbt_depth(job));
    json_object_set_new(params, "eta", json_real(gbt_eta(job)));
    json_object_set_new(params, "max_depth", json_integer(gbt_depth(job)));
    if (job->algo == &train_algo_gbt)
        json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static void gbt_destroy(struct train_job *job)
{
    struct gbt *m = job->state;
    if (m->booster)
        XGBoosterFree(m->booster);
    if (m->dtrain)
        XGDMatrixFree(m->dtrain);
    if (m->dtest)
        XGDMatrixFree(m->dtest);
    free(m);
    job->state = NULL;
}

const struct train_algo train_algo_gbt = {
    .name = "gbt",
    .summary = "gradient-boosted trees (XGBoost), one round per iteration",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 50,
    .default_subsample = 0.1,
    .init = gbt_init,
    .step = gbt_step,
    .evaluate = gbt_evaluate,
    .describe = gbt_describe,
    .destroy = gbt_destroy,
};

const struct train_algo train_algo_gbtreg = {
    .name = "gbtreg",
    .summary = "gradient-boosted regression trees (XGBoost), one round per iteration",
    .convergence = "sublinear",
    .kind = TRAIN_REGRESS,
    .default_iters = 100,
    .default_subsample = 1,
    .init = gbtreg_init,
    .step = gbt_step,
    .evaluate = gbt_evaluate,
    .describe = gbt_describe,
    .destroy = gbt_destroy,
};
