/*
 * alg_svmpoly.c — SVM with a polynomial kernel, trained in the primal by
 * sub-gradient descent over a fixed basis (svmpoly).
 *
 * Formulation: B basis points b_1..b_B are drawn at random from the training
 * rows (--basis, default 500). With the kernel K(u, v) = (u.v / d + 1)^q
 * (--degree q, default 2), class c's decision function is
 *     f_c(x) = sum_j alpha_jc K(b_j, x)
 * and the objective, one-vs-rest over the classes (a single output for two
 * classes), is
 *     L(alpha) = l2/2 sum_c alpha_c^T K_BB alpha_c
 *                + 1/n sum_i sum_c max(0, 1 - s_ic f_c(x_i)),
 * s_ic = +1 if row i is of class c, else -1. This is the kernel SVM's primal
 * restricted to the span of the basis (the representer theorem's form with
 * B terms instead of n), so one iteration costs two dgemm products with the
 * n x B kernel matrix instead of the n x n one a dual solver would need.
 * K(X, B) is computed once, before the first iteration.
 *
 * Step size: lr / sqrt(t); as for the linear SVM, the job keeps and
 * reports the best point found so far (the sub-gradient method is not a
 * descent method).
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

struct sp {
    int q, nb, k;
    size_t d;
    double *basis;      /* nb x d */
    double *knb;        /* n x nb */
    double *kbb;        /* nb x nb */
    double *alpha, *grad;       /* nb x k */
    double *best, best_loss;    /* the best point so far (see alg_linear.c) */
    double **acc, **f, *wloss;
    double lr, l2;
    int t;
};

#define SVMPOLY_LR 0.05
#define SVMPOLY_BASIS 500

/* K = (X B^T / d + 1)^q for `rows` rows of X into out (rows x nb). */
static void sp_kernel(const struct sp *m, const double *X, size_t rows,
                      double *out)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, m->nb,
                (int)m->d, 1.0 / (double)m->d, X, (int)m->d, m->basis,
                (int)m->d, 0.0, out, m->nb);
    for (size_t i = 0; i < rows * (size_t)m->nb; i++)
        out[i] = pow(out[i] + 1.0, m->q);
}

static void sp_part(void *ctx, const struct train_part *p, int w)
{
    struct train_job *job = ctx;
    struct sp *m = job->state;
    size_t rows = p->end - p->begin;
    int k = m->k, nb = m->nb;
    const double *K = m->knb + p->begin * (size_t)nb, *y = job->train.y + p->begin;
    double *F = m->f[w], loss = 0;

    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, k, nb, 1.0,
                K, nb, m->alpha, k, 0.0, F, k);
    for (size_t i = 0; i < rows; i++) {
        int yi = (int)y[i];
        for (int c = 0; c < k; c++) {
            double s = (k == 1 ? yi == 1 : yi == c) ? 1.0 : -1.0;
            double *fc = F + i * (size_t)k + c, margin = s * *fc;
            if (margin < 1) {
                loss += 1 - margin;
                *fc = -s;
            } else {
                *fc = 0;
            }
        }
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, k, (int)rows, 1.0, K,
                nb, F, k, 1.0, m->acc[w], k);
    m->wloss[w] += loss;
}

static double sp_pass(struct train_job *job)
{
    struct sp *m = job->state;
    size_t na = (size_t)m->nb * (size_t)m->k;
    for (int w = 0; w < job->n_workers; w++) {
        memset(m->acc[w], 0, na * sizeof(double));
        m->wloss[w] = 0;
    }
    train_pool_run(job, sp_part, job);
    double inv = 1.0 / job->rows_per_iter, loss = 0;
    /* Regulariser: l2/2 tr(alpha^T K_BB alpha); gradient l2 K_BB alpha. */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m->nb, m->k, m->nb,
                m->l2, m->kbb, m->nb, m->alpha, m->k, 0.0, m->grad, m->k);
    double reg = 0.5 * cblas_ddot((int)na, m->alpha, 1, m->grad, 1);
    for (int w = 0; w < job->n_workers; w++) {
        cblas_daxpy((int)na, inv, m->acc[w], 1, m->grad, 1);
        loss += m->wloss[w] * inv;
    }
    return loss + reg;
}

static int sp_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    const struct train_data *D = &job->train;
    int nb = job->prm.basis ? job->prm.basis : SVMPOLY_BASIS;
    if ((size_t)nb > D->n)
        nb = (int)D->n;
    (void)err, (void)len;
    struct sp *m = train_xcalloc(1, sizeof *m);
    job->state = m;
    m->q = job->prm.degree ? job->prm.degree : 2;
    m->nb = nb;
    m->d = D->d;
    m->k = D->n_classes == 2 ? 1 : D->n_classes;
    m->lr = job->prm.lr > 0 ? job->prm.lr : SVMPOLY_LR;
    m->l2 = job->prm.l2 >= 0 ? job->prm.l2 : 1e-4;

    /* Basis: nb distinct training rows. */
    uint64_t s = 0x737670ULL + job->seed;
    size_t *ix = train_xcalloc(D->n, sizeof *ix);
    for (size_t i = 0; i < D->n; i++)
        ix[i] = i;
    m->basis = train_xcalloc((size_t)nb * m->d, sizeof(double));
    for (int j = 0; j < nb; j++) {
        size_t r = (size_t)j + (size_t)(train_rand_uniform(&s) * (double)(D->n - (size_t)j));
        if (r >= D->n)
            r = D->n - 1;
        size_t t = ix[j];
        ix[j] = ix[r];
        ix[r] = t;
        memcpy(m->basis + (size_t)j * m->d, D->x + ix[j] * m->d, m->d * sizeof(double));
    }
    free(ix);
    m->knb = train_xcalloc(D->n * (size_t)nb, sizeof(double));
    sp_kernel(m, D->x, D->n, m->knb);
    m->kbb = train_xcalloc((size_t)nb * (size_t)nb, sizeof(double));
    sp_kernel(m, m->basis, (size_t)nb, m->kbb);

    size_t na = (size_t)nb * (size_t)m->k, rows = train_job_max_part(job);
    m->alpha = train_xcalloc(na, sizeof(double));
    m->grad = train_xcalloc(na, sizeof(double));
    m->best = train_xcalloc(na, sizeof(double));
    m->acc = train_xcalloc((size_t)job->max_workers, sizeof *m->acc);
    m->f = train_xcalloc((size_t)job->max_workers, sizeof *m->f);
    m->wloss = train_xcalloc((size_t)job->max_workers, sizeof *m->wloss);
    for (int w = 0; w < job->max_workers; w++) {
        m->acc[w] = train_xcalloc(na, sizeof(double));
        m->f[w] = train_xcalloc(rows * (size_t)m->k, sizeof(double));
    }
    *loss0 = m->best_loss = sp_pass(job);
    return 0;
}

static int sp_step(struct train_job *job, double *loss, char *err, size_t len)
{
    struct sp *m = job->state;
    (void)err, (void)len;
    m->t++;
    cblas_daxpy(m->nb * m->k, -m->lr / sqrt((double)m->t), m->grad, 1, m->alpha, 1);
    double l = sp_pass(job);
    if (l < m->best_loss) {
        m->best_loss = l;
        memcpy(m->best, m->alpha, (size_t)m->nb * (size_t)m->k * sizeof(double));
    }
    *loss = m->best_loss;
    return 0;
}

static int sp_evaluate(struct train_job *job, char *err, size_t len)
{
    struct sp *m = job->state;
    const struct train_data *T = &job->test;
    (void)err, (void)len;
    if (T->n == 0)
        return 0;
    /* In blocks, so the test kernel matrix never has to exist whole. */
    size_t blk = 1024, hits = 0;
    double *K = train_xcalloc(blk * (size_t)m->nb, sizeof *K);
    double *F = train_xcalloc(blk * (size_t)m->k, sizeof *F);
    for (size_t i0 = 0; i0 < T->n; i0 += blk) {
        size_t rows = T->n - i0 < blk ? T->n - i0 : blk;
        sp_kernel(m, T->x + i0 * m->d, rows, K);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, m->k,
                    m->nb, 1.0, K, m->nb, m->best, m->k, 0.0, F, m->k);
        for (size_t i = 0; i < rows; i++) {
            const double *fi = F + i * (size_t)m->k;
            int pred = m->k == 1 ? fi[0] > 0 : train_argmax(fi, m->k);
            hits += pred == (int)T->y[i0 + i];
        }
    }
    free(K);
    free(F);
    snprintf(job->metric_name, sizeof job->metric_name, "accuracy");
    job->metric = (double)hits / (double)T->n;
    return 0;
}

static void sp_describe(const struct train_job *job, char *tag, size_t len,
                        json_t *params)
{
    int q = job->prm.degree ? job->prm.degree : 2;
    int nb = job->prm.basis ? job->prm.basis : SVMPOLY_BASIS;
    double lr = job->prm.lr > 0 ? job->prm.lr : SVMPOLY_LR;
    snprintf(tag, len, "q%d-b%d-lr%g", q, nb, lr);
    json_object_set_new(params, "degree", json_integer(q));
    json_object_set_new(params, "basis", json_integer(nb));
    json_object_set_new(params, "lr", json_real(lr));
    json_object_set_new(params, "l2", json_real(job->prm.l2 >= 0 ? job->prm.l2 : 1e-4));
    json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static void sp_destroy(struct train_job *job)
{
    struct sp *m = job->state;
    for (int w = 0; w < job->max_workers; w++) {
        free(m->acc[w]);
        free(m->f[w]);
    }
    free(m->acc);
    free(m->f);
    free(m->wloss);
    free(m->basis);
    free(m->knb);
    free(m->kbb);
    free(m->alpha);
    free(m->grad);
    free(m->best);
    free(m);
    job->state = NULL;
}

const struct train_algo train_algo_svmpoly = {
    .name = "svmpoly",
    .summary = "SVM with a polynomial kernel over a random basis, sub-gradient descent",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 100,
    .default_subsample = 0.2,
    .init = sp_init,
    .step = sp_step,
    .evaluate = sp_evaluate,
    .describe = sp_describe,
    .destroy = sp_destroy,
};
