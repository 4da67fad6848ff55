/*
 * alg_mlpc.c — multi-layer perceptron classifier trained with L-BFGS
 * (mlpc).
 *
 * Network: d inputs, hidden layers of --hidden sizes (default one layer of
 * 64) with ReLU, a softmax output over the classes. Loss: mean
 * cross-entropy plus l2/2 times the squared norm of the weights (not the
 * biases). Each objective evaluation is one data-parallel pass: per
 * partition, the forward pass is one dgemm per layer, the backward pass two
 * (weight gradient, and the error propagated to the layer below); workers
 * accumulate gradients in their own buffers. L-BFGS (liblbfgs) drives the
 * iterations; see lbfgs.c for how they are reported.
 *
 * Weights start Glorot-uniform from --seed, biases at zero.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#define MLP_MAX_LAYERS 9
#define MLP_HIDDEN 64

struct mlp {
    int nl;                     /* weight layers */
    int size[MLP_MAX_LAYERS + 1];       /* size[0] = d ... size[nl] = classes */
    size_t woff[MLP_MAX_LAYERS], boff[MLP_MAX_LAYERS];
    size_t np;
    double *theta;
    double l2;
    double **acc, *wloss;
    double ***act;              /* per worker, per layer 1..nl: rows x size */
    double **dA, **dB;          /* per worker error buffers, rows x max size */
    const double *at;
};

static void mlp_forward(const struct mlp *m, const double *theta,
                        const double *X, size_t rows, double **act)
{
    const double *in = X;
    for (int l = 0; l < m->nl; l++) {
        int a = m->size[l], b = m->size[l + 1];
        double *out = act[l + 1];
        const double *bias = theta + m->boff[l];
        for (size_t i = 0; i < rows; i++)
            memcpy(out + i * (size_t)b, bias, (size_t)b * sizeof *out);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, b, a,
                    1.0, in, a, theta + m->woff[l], b, 1.0, out, b);
        if (l + 1 < m->nl)
            for (size_t i = 0; i < rows * (size_t)b; i++)
                out[i] = out[i] > 0 ? out[i] : 0;
        in = out;
    }
}

static void mlp_part(void *ctx, const struct train_part *p, int w)
{
    struct train_job *job = ctx;
    struct mlp *m = job->state;
    size_t rows = p->end - p->begin;
    const double *X = job->train.x + p->begin * (size_t)m->size[0];
    const double *y = job->train.y + p->begin;
    double **act = m->act[w], *G = m->acc[w], loss = 0;
    int k = m->size[m->nl];

    act[0] = (double *)X;
    mlp_forward(m, m->at, X, rows, act);
    /* Output error: softmax probabilities minus the one-hot labels. */
    double *D = m->dA[w], *Dn = m->dB[w];
    for (size_t i = 0; i < rows; i++) {
        double *z = act[m->nl] + i * (size_t)k, *di = D + i * (size_t)k;
        int yi = (int)y[i];
        double zy = z[yi];
        memcpy(di, z, (size_t)k * sizeof *di);
        loss += train_softmax(di, k) - zy;
        di[yi] -= 1;
    }
    for (int l = m->nl - 1; l >= 0; l--) {
        int a = m->size[l], b = m->size[l + 1];
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, a, b, (int)rows,
                    1.0, act[l], a, D, b, 1.0, G + m->woff[l], b);
        double *gb = G + m->boff[l];
        for (size_t i = 0; i < rows; i++)
            for (int j = 0; j < b; j++)
                gb[j] += D[i * (size_t)b + j];
        if (l == 0)
            break;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, a, b,
                    1.0, D, b, m->at + m->woff[l], b, 0.0, Dn, a);
        const double *h = act[l];
        for (size_t i = 0; i < rows * (size_t)a; i++)
            if (h[i] <= 0)
                Dn[i] = 0;
        double *t = D;
        D = Dn;
        Dn = t;
    }
    m->wloss[w] += loss;
}

static double mlp_objective(void *ctx, const double *x, double *g)
{
    struct train_job *job = ctx;
    struct mlp *m = job->state;
    m->at = x;
    for (int w = 0; w < job->n_workers; w++) {
        memset(m->acc[w], 0, m->np * sizeof(double));
        m->wloss[w] = 0;
    }
    train_pool_run(job, mlp_part, job);
    double inv = 1.0 / job->rows_per_iter, loss = 0;
    memset(g, 0, m->np * sizeof *g);
    for (int w = 0; w < job->n_workers; w++) {
        cblas_daxpy((int)m->np, inv, m->acc[w], 1, g, 1);
        loss += m->wloss[w] * inv;
    }
    for (int l = 0; l < m->nl; l++) {
        int nw = m->size[l] * m->size[l + 1];
        loss += 0.5 * m->l2 * cblas_ddot(nw, x + m->woff[l], 1, x + m->woff[l], 1);
        cblas_daxpy(nw, m->l2, x + m->woff[l], 1, g + m->woff[l], 1);
    }
    return loss;
}

static int mlp_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    const struct train_data *D = &job->train;
    (void)err, (void)len;
    struct mlp *m = train_xcalloc(1, sizeof *m);
    job->state = m;
    m->size[0] = (int)D->d;
    if (job->prm.n_hidden) {
        for (int i = 0; i < job->prm.n_hidden; i++)
            m->size[i + 1] = job->prm.hidden[i];
        m->nl = job->prm.n_hidden + 1;
    } else {
        m->size[1] = MLP_HIDDEN;
        m->nl = 2;
    }
    m->size[m->nl] = D->n_classes;
    m->l2 = job->prm.l2 >= 0 ? job->prm.l2 : 1e-4;
    int maxw = 0;
    for (int l = 0; l < m->nl; l++) {
        m->woff[l] = m->np;
        m->np += (size_t)m->size[l] * (size_t)m->size[l + 1];
        m->boff[l] = m->np;
        m->np += (size_t)m->size[l + 1];
        if (m->size[l + 1] > maxw)
            maxw = m->size[l + 1];
        if (l > 0 && m->size[l] > maxw)
            maxw = m->size[l];
    }
    m->theta = train_xcalloc(m->np, sizeof(double));
    uint64_t s = 0x6d6c70ULL + job->seed;
    for (int l = 0; l < m->nl; l++) {
        double r = sqrt(6.0 / (m->size[l] + m->size[l + 1]));
        size_t nw = (size_t)m->size[l] * (size_t)m->size[l + 1];
        for (size_t i = 0; i < nw; i++)
            m->theta[m->woff[l] + i] = (2 * train_rand_uniform(&s) - 1) * r;
    }
    size_t rows = train_job_max_part(job);
    int W = job->max_workers;
    m->acc = train_xcalloc((size_t)W, sizeof *m->acc);
    m->wloss = train_xcalloc((size_t)W, sizeof *m->wloss);
    m->act = train_xcalloc((size_t)W, sizeof *m->act);
    m->dA = train_xcalloc((size_t)W, sizeof *m->dA);
    m->dB = train_xcalloc((size_t)W, sizeof *m->dB);
    for (int w = 0; w < W; w++) {
        m->acc[w] = train_xcalloc(m->np, sizeof(double));
        m->act[w] = train_xcalloc((size_t)m->nl + 1, sizeof(double *));
        for (int l = 1; l <= m->nl; l++)
            m->act[w][l] = train_xcalloc(rows * (size_t)m->size[l], sizeof(double));
        m->dA[w] = train_xcalloc(rows * (size_t)maxw, sizeof(double));
        m->dB[w] = train_xcalloc(rows * (size_t)maxw, sizeof(double));
    }
    double *g = train_xcalloc(m->np, sizeof *g);
    *loss0 = mlp_objective(job, m->theta, g);
    free(g);
    return 0;
}

static int mlp_run(struct train_job *job, char *err, size_t len)
{
    struct mlp *m = job->state;
    return train_lbfgs_run(job, m->theta, m->np, mlp_objective, job, err, len);
}

/* Checkpoint state: the weights (L-BFGS starts again from them). */
static void mlp_state(struct train_job *job,
                      void (*fn)(void *arg, double *v, size_t n), void *arg)
{
    struct mlp *m = job->state;
    fn(arg, m->theta, m->np);
}

static int mlp_evaluate(struct train_job *job, char *err, size_t len)
{
    struct mlp *m = job->state;
    const struct train_data *T = &job->test;
    (void)err, (void)len;
    if (T->n == 0)
        return 0;
    size_t blk = 2048, hits = 0;
    int k = m->size[m->nl];
    double *act[MLP_MAX_LAYERS + 1];
    for (int l = 1; l <= m->nl; l++)
        act[l] = train_xcalloc(blk * (size_t)m->size[l], sizeof(double));
    for (size_t i0 = 0; i0 < T->n; i0 += blk) {
        size_t rows = T->n - i0 < blk ? T->n - i0 : blk;
        mlp_forward(m, m->theta, T->x + i0 * (size_t)m->size[0], rows, act);
        for (size_t i = 0; i < rows; i++)
            hits += train_argmax(act[m->nl] + i * (size_t)k, k) == (int)T->y[i0 + i];
    }
    for (int l = 1; l <= m->nl; l++)
        free(act[l]);
    snprintf(job->metric_name, sizeof job->metric_name, "accuracy");
    job->metric = (double)hits / (double)T->n;
    return 0;
}

static void mlp_describe(const struct train_job *job, char *tag, size_t len,
                         json_t *params)
{
    json_t *h = json_array();
    size_t used = 0;
    tag[0] = '\0';
    int n = job->prm.n_hidden ? job->prm.n_hidden : 1;
    for (int i = 0; i < n; i++) {
        int v = job->prm.n_hidden ? job->prm.hidden[i] : MLP_HIDDEN;
        json_array_append_new(h, json_integer(v));
        if (used < len)
            used += (size_t)snprintf(tag + used, len - used, "%s%d", i ? "x" : "h", v);
    }
    json_object_set_new(params, "hidden", h);
    json_object_set_new(params, "l2", json_real(job->prm.l2 >= 0 ? job->prm.l2 : 1e-4));
    json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static void mlp_destroy(struct train_job *job)
{
    struct mlp *m = job->state;
    for (int w = 0; w < job->max_workers; w++) {
        free(m->acc[w]);
        for (int l = 1; l <= m->nl; l++)
            free(m->act[w][l]);
        free(m->act[w]);
        free(m->dA[w]);
        free(m->dB[w]);
    }
    free(m->acc);
    free(m->wloss);
    free(m->act);
    free(m->dA);
    free(m->dB);
    free(m->theta);
    free(m);
    job->state = NULL;
}

const struct train_algo train_algo_mlpc = {
    .name = "mlpc",
    .summary = "multi-layer perceptron classifier (ReLU, softmax), L-BFGS",
    .convergence = "superlinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 100,
    .default_subsample = 0.5,
    .init = mlp_init,
    .step = NULL,
    .run = mlp_run,
    .evaluate = mlp_evaluate,
    .state = mlp_state,
    .describe = mlp_describe,
    .destroy = mlp_destroy,
};
