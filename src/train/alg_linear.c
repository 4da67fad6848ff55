/*
 * alg_linear.c — the linear models of slaq-train: multinomial logistic
 * regression by gradient descent (logreg), linear SVM by sub-gradient
 * descent on the hinge loss (svm), the same SVM on a polynomial kernel's
 * features (svmpoly), and least-squares linear regression by L-BFGS
 * (linreg, on degree-2 polynomial features by default, see slaq_train.c).
 *
 * All three share one data-parallel pass: each worker computes the scores
 * Z = X_p W + b of its partition with one BLAS dgemm, turns them into the
 * per-row loss and its derivative dL/dZ in place, and accumulates the
 * gradient X_p^T dL/dZ with a second dgemm into its own buffer; the buffers
 * are summed afterwards. Parameters are one vector theta = [W (d x K), b (K)]
 * so L-BFGS can use it directly.
 *
 * Gradient descent needs the gradient at the current point, and a pass
 * computes loss and gradient together; so each iteration first moves with
 * the gradient of the previous pass and then runs one pass at the new
 * point, which yields the loss reported for the iteration and the gradient
 * for the next one. One pass per iteration, no extra evaluation.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

enum lin_mode { LIN_LOGREG, LIN_SVM, LIN_LINREG };

/* The SVM's heavy-ball momentum: the velocity keeps this much of itself. */
#define SVM_MOMENTUM 0.9

struct lin {
    enum lin_mode mode;
    size_t d;
    int k;              /* outputs: classes, 1 for binary SVM and regression */
    size_t np;          /* parameters: (d + 1) * k */
    double *theta, *grad;
    double *aux;        /* logreg: the previous point and the trial
                         * gradient (2 np); svm: the heavy-ball velocity */
    double last_loss;   /* the objective at theta */
    int rises;          /* svm: iterations in a row the objective rose */
    double **acc;       /* per worker gradient sums */
    double *wloss;      /* per worker loss sums */
    double **z;         /* per worker scores, max partition rows x k */
    const double *at;   /* parameters the current pass evaluates */
    double lr, l2;
};

/* Rows per block of a partition: the block's rows are read from memory by
 * the first dgemm and are still in cache for the second, which halves the
 * memory traffic of a pass (with two workers sharing the memory bus, that is
 * what limits the speed-up). 128 rows of Fashion-MNIST are 800 kB. */
#define LIN_BLOCK 128

static void lin_part(void *ctx, const struct train_part *p, int w)
{
    struct train_job *job = ctx;
    struct lin *m = job->state;
    const struct train_data *D = &job->train;
    size_t d = m->d;
    int k = m->k;
    const double *W = m->at, *b = m->at + d * (size_t)k;
    double *Z = m->z[w], *G = m->acc[w], *gb = G + d * (size_t)k, loss = 0;

    for (size_t r0 = p->begin; r0 < p->end; r0 += LIN_BLOCK) {
        size_t rows = p->end - r0 < LIN_BLOCK ? p->end - r0 : LIN_BLOCK;
        const double *X = D->x + r0 * d, *y = D->y + r0;
        for (size_t i = 0; i < rows; i++)
            memcpy(Z + i * (size_t)k, b, (size_t)k * sizeof *Z);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, k,
                    (int)d, 1.0, X, (int)d, W, k, 1.0, Z, k);
        for (size_t i = 0; i < rows; i++) {
            double *zi = Z + i * (size_t)k;
            int yi = (int)y[i];
            switch (m->mode) {
            case LIN_LOGREG: {
                /* -log p_y = log(sum exp z) - z_y, exact even when p_y
                 * underflows. */
                double zy = zi[yi];
                loss += train_softmax(zi, k) - zy;
                zi[yi] -= 1;
                break;
            }
            case LIN_SVM:
                for (int c = 0; c < k; c++) {
                    double s = (k == 1 ? yi == 1 : yi == c) ? 1.0 : -1.0;
                    double margin = s * zi[c];
                    if (margin < 1) {
                        loss += 1 - margin;
                        zi[c] = -s;
                    } else {
                        zi[c] = 0;
                    }
                }
                break;
            case LIN_LINREG: {
                double r = zi[0] - y[i];
                loss += 0.5 * r * r;
                zi[0] = r;
                break;
            }
            }
            for (int c = 0; c < k; c++)
                gb[c] += zi[c];
        }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)d, k,
                    (int)rows, 1.0, X, (int)d, Z, k, 1.0, G, k);
    }
    m->wloss[w] += loss;
}

/* One pass at `at`: returns the objective (mean loss + l2/2 |W|^2) and
 * writes its gradient to g. */
static double lin_pass(struct train_job *job, const double *at, double *g)
{
    struct lin *m = job->state;
    int nw = job->n_workers;
    m->at = at;
    for (int w = 0; w < nw; w++) {
        memset(m->acc[w], 0, m->np * sizeof(double));
        m->wloss[w] = 0;
    }
    train_pool_run(job, lin_part, job);
    double inv = 1.0 / job->rows_per_iter, loss = 0, reg = 0;
    memset(g, 0, m->np * sizeof *g);
    for (int w = 0; w < nw; w++) {
        cblas_daxpy((int)m->np, inv, m->acc[w], 1, g, 1);
        loss += m->wloss[w] * inv;
    }
    size_t nw_ = m->d * (size_t)m->k;
    reg = cblas_ddot((int)nw_, at, 1, at, 1);
    cblas_daxpy((int)nw_, m->l2, at, 1, g, 1);
    return loss + 0.5 * m->l2 * reg;
}

static int lin_init(struct train_job *job, enum lin_mode mode, double lr,
                    double *loss0)
{
    struct lin *m = train_xcalloc(1, sizeof *m);
    const struct train_data *D = &job->train;
    job->state = m;
    m->mode = mode;
    m->d = D->d;
    m->k = mode == LIN_LINREG ? 1 : mode == LIN_SVM && D->n_classes == 2 ? 1 : D->n_classes;
    m->np = (m->d + 1) * (size_t)m->k;
    m->theta = train_xcalloc(m->np, sizeof(double));
    m->grad = train_xcalloc(m->np, sizeof(double));
    m->aux = train_xcalloc(2 * m->np, sizeof(double));
    m->lr = job->prm.lr > 0 ? job->prm.lr : lr;
    m->l2 = job->prm.l2 >= 0 ? job->prm.l2 : 1e-4;
    m->acc = train_xcalloc((size_t)job->max_workers, sizeof *m->acc);
    m->z = train_xcalloc((size_t)job->max_workers, sizeof *m->z);
    m->wloss = train_xcalloc((size_t)job->max_workers, sizeof *m->wloss);
    size_t rows = train_job_max_part(job);
    for (int w = 0; w < job->max_workers; w++) {
        m->acc[w] = train_xcalloc(m->np, sizeof(double));
        m->z[w] = train_xcalloc(rows * (size_t)m->k, sizeof(double));
    }
    /* Zero weights: every class equally likely, every margin 0. */
    *loss0 = m->last_loss = lin_pass(job, m->theta, m->grad);
    if (mode == LIN_SVM) {
        /* The SVM's step is --lr times the data's own scale f/|g|^2 at
         * the start: the step that would take the objective to 0 were it
         * linear (Polyak's step with 0, the hinge loss's lower bound, for
         * the optimum). A quarter of it descends on every data set tried
         * (docs/train.md), whatever the number of features or classes. */
        double g2 = cblas_ddot((int)m->np, m->grad, 1, m->grad, 1);
        if (g2 > 0)
            m->lr *= *loss0 / g2;
    }
    return 0;
}

static int lin_step(struct train_job *job, double *loss, char *err, size_t len)
{
    struct lin *m = job->state;
    (void)err, (void)len;
    if (m->mode == LIN_LOGREG) {
        /* Logistic loss is smooth: a fixed step below 2/curvature descends.
         * Should --lr be above that (the curvature depends on the data), the
         * loss rises; the step is then taken back and the rate halved for
         * the rest of the run, so a job never oscillates. A retried step is
         * one more pass in the same iteration. */
        for (;;) {
            memcpy(m->aux, m->theta, m->np * sizeof(double));
            cblas_daxpy((int)m->np, -m->lr, m->grad, 1, m->theta, 1);
            double l = lin_pass(job, m->theta, m->aux + m->np);
            if (l <= m->last_loss || m->lr < 1e-12) {
                memcpy(m->grad, m->aux + m->np, m->np * sizeof(double));
                *loss = m->last_loss = l;
                return 0;
            }
            memcpy(m->theta, m->aux, m->np * sizeof(double));
            m->lr /= 2;
        }
    }
    /* The hinge loss is not smooth, and Fashion-MNIST's pixels are strongly
     * correlated: a step long enough to make progress along most directions
     * overshoots along the few dominant ones (plain sub-gradient descent
     * with lr/sqrt(t) from a large lr spent its first ten iterations above
     * the initial loss). Heavy-ball momentum (Polyak) with a short step
     * resolves both: the short step does not overshoot, and the velocity
     * builds up long moves along the flat directions while oscillations
     * along the steep ones cancel. Not a descent method: the objective,
     * reported as it is at each iterate, may rise now and then. A single
     * rise is the velocity turning; two in a row mean it carries the
     * iterate uphill (seen on two-class problems), so it is reset to zero
     * (an adaptive restart). */
    cblas_dscal((int)m->np, SVM_MOMENTUM, m->aux, 1);
    cblas_daxpy((int)m->np, -m->lr, m->grad, 1, m->aux, 1);
    cblas_daxpy((int)m->np, 1.0, m->aux, 1, m->theta, 1);
    double l = lin_pass(job, m->theta, m->grad);
    m->rises = l > m->last_loss ? m->rises + 1 : 0;
    if (m->rises >= 2) {
        memset(m->aux, 0, m->np * sizeof(double));
        m->rises = 0;
    }
    *loss = m->last_loss = l;
    return 0;
}

static double lin_objective(void *ctx, const double *x, double *g)
{
    return lin_pass(ctx, x, g);
}

static int lin_run(struct train_job *job, char *err, size_t len)
{
    struct lin *m = job->state;
    return train_lbfgs_run(job, m->theta, m->np, lin_objective, job, err, len);
}

static int lin_evaluate(struct train_job *job, char *err, size_t len)
{
    struct lin *m = job->state;
    const struct train_data *T = &job->test;
    (void)err, (void)len;
    if (T->n == 0)
        return 0;
    int k = m->k;
    double *Z = train_xcalloc(T->n * (size_t)k, sizeof *Z), score = 0;
    const double *theta = m->theta;
    const double *b = theta + m->d * (size_t)k;
    for (size_t i = 0; i < T->n; i++)
        memcpy(Z + i * (size_t)k, b, (size_t)k * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T->n, k,
                (int)m->d, 1.0, T->x, (int)m->d, theta, k, 1.0, Z, k);
    for (size_t i = 0; i < T->n; i++) {
        const double *zi = Z + i * (size_t)k;
        if (m->mode == LIN_LINREG) {
            double r = zi[0] - T->y[i];
            score += r * r;
        } else {
            int pred = k == 1 ? zi[0] > 0 : train_argmax(zi, k);
            score += pred == (int)T->y[i];
        }
    }
    free(Z);
    if (m->mode == LIN_LINREG) {
        snprintf(job->metric_name, sizeof job->metric_name, "test_rmse");
        job->metric = sqrt(score / (double)T->n);
    } else {
        snprintf(job->metric_name, sizeof job->metric_name, "accuracy");
        job->metric = score / (double)T->n;
    }
    return 0;
}

/* Checkpoint state: everything lin_step and L-BFGS start from. */
static void lin_state(struct train_job *job,
                      void (*fn)(void *arg, double *v, size_t n), void *arg)
{
    struct lin *m = job->state;
    double rises = m->rises;
    fn(arg, m->theta, m->np);
    fn(arg, m->grad, m->np);
    fn(arg, m->aux, 2 * m->np);
    fn(arg, &m->lr, 1);
    fn(arg, &m->last_loss, 1);
    fn(arg, &rises, 1);
    m->rises = (int)rises;
}

static void lin_destroy(struct train_job *job)
{
    struct lin *m = job->state;
    for (int w = 0; w < job->max_workers; w++) {
        free(m->acc[w]);
        free(m->z[w]);
    }
    free(m->acc);
    free(m->z);
    free(m->wloss);
    free(m->theta);
    free(m->grad);
    free(m->aux);
    free(m);
    job->state = NULL;
}

/* svmpoly: the polynomial kernel K(u, v) = (u.v / d + 1)^q (--degree q,
 * default 2) through its empirical kernel map. B basis rows b_1..b_B are
 * drawn at random from the training set (--basis, default 500); every row
 * x becomes phi(x) = (K(x, b_1), ..., K(x, b_B)), standardised per column,
 * and the linear SVM above is trained on phi. This is the kernel SVM
 * restricted to functions f(x) = sum_j a_j K(x, b_j) + c, with an L2
 * penalty on a (rather than the RKHS norm a^T K_BB a, whose ill-conditioning
 * stalls sub-gradient descent); an iteration costs O(n B) instead of the
 * O(n^2) of a full kernel matrix. phi is computed once, before the first
 * iteration, with one dgemm. */
#define SVMPOLY_BASIS 500

static void svmpoly_map(const struct train_data *D, const double *basis,
                        int nb, int q, double *out)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)D->n, nb,
                (int)D->d, 1.0 / (double)D->d, D->x, (int)D->d, basis,
                (int)D->d, 0.0, out, nb);
    for (size_t i = 0; i < D->n * (size_t)nb; i++)
        out[i] = pow(out[i] + 1.0, q);
}

static int svmpoly_features(struct train_job *job)
{
    struct train_data *D = &job->train, *T = &job->test;
    int q = job->prm.degree ? job->prm.degree : 2;
    int nb = job->prm.basis ? job->prm.basis : SVMPOLY_BASIS;
    if ((size_t)nb > D->n)
        nb = (int)D->n;
    uint64_t s = 0x737670ULL + job->seed;
    size_t *ix = train_xcalloc(D->n, sizeof *ix);
    double *basis = train_xcalloc((size_t)nb * D->d, sizeof *basis);
    for (size_t i = 0; i < D->n; i++)
        ix[i] = i;
    for (int j = 0; j < nb; j++) {
        size_t r = (size_t)j + (size_t)(train_rand_uniform(&s) * (double)(D->n - (size_t)j));
        if (r >= D->n)
            r = D->n - 1;
        size_t t = ix[j];
        ix[j] = ix[r];
        ix[r] = t;
        memcpy(basis + (size_t)j * D->d, D->x + ix[j] * D->d, D->d * sizeof *basis);
    }
    free(ix);
    for (int k = 0; k < 2; k++) {
        struct train_data *X = k ? T : D;
        if (X->n == 0)
            continue;
        double *phi = train_xcalloc(X->n * (size_t)nb, sizeof *phi);
        svmpoly_map(X, basis, nb, q, phi);
        free(X->x);
        X->x = phi;
        X->d = (size_t)nb;
    }
    free(basis);
    train_data_standardize(D, T->n ? T : NULL);
    return 0;
}

/* Default learning rates: logreg's for standardised features, the SVM's
 * as a fraction of the data-scaled step (lin_init). */
#define LOGREG_LR 0.1
#define SVM_LR 0.25

static double lin_lr(const struct train_job *job, double dflt)
{
    return job->prm.lr > 0 ? job->prm.lr : dflt;
}

static double lin_l2(const struct train_job *job)
{
    return job->prm.l2 >= 0 ? job->prm.l2 : 1e-4;
}

static void logreg_describe(const struct train_job *job, char *tag, size_t len,
                            json_t *params)
{
    snprintf(tag, len, "lr%g", lin_lr(job, LOGREG_LR));
    json_object_set_new(params, "lr", json_real(lin_lr(job, LOGREG_LR)));
    json_object_set_new(params, "l2", json_real(lin_l2(job)));
    json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static void svm_describe(const struct train_job *job, char *tag, size_t len,
                         json_t *params)
{
    snprintf(tag, len, "lr%g", lin_lr(job, SVM_LR));
    json_object_set_new(params, "lr", json_real(lin_lr(job, SVM_LR)));
    json_object_set_new(params, "l2", json_real(lin_l2(job)));
    json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static void linreg_describe(const struct train_job *job, char *tag, size_t len,
                            json_t *params)
{
    int q = job->prm.degree ? job->prm.degree : 2;
    snprintf(tag, len, "q%d-l2%g", q, lin_l2(job));
    json_object_set_new(params, "degree", json_integer(q));
    json_object_set_new(params, "l2", json_real(lin_l2(job)));
}

static int logreg_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    (void)err, (void)len;
    return lin_init(job, LIN_LOGREG, LOGREG_LR, loss0);
}

static int svm_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    (void)err, (void)len;
    return lin_init(job, LIN_SVM, SVM_LR, loss0);
}

static int svmpoly_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    (void)err, (void)len;
    svmpoly_features(job);
    return lin_init(job, LIN_SVM, SVM_LR, loss0);
}

static void svmpoly_describe(const struct train_job *job, char *tag, size_t len,
                             json_t *params)
{
    int q = job->prm.degree ? job->prm.degree : 2;
    int nb = job->prm.basis ? job->prm.basis : SVMPOLY_BASIS;
    snprintf(tag, len, "q%d-b%d-lr%g", q, nb, lin_lr(job, SVM_LR));
    json_object_set_new(params, "degree", json_integer(q));
    json_object_set_new(params, "basis", json_integer(nb));
    json_object_set_new(params, "lr", json_real(lin_lr(job, SVM_LR)));
    json_object_set_new(params, "l2", json_real(lin_l2(job)));
    json_object_set_new(params, "classes", json_integer(job->train.n_classes));
}

static int linreg_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    (void)err, (void)len;
    return lin_init(job, LIN_LINREG, 0, loss0);
}

const struct train_algo train_algo_logreg = {
    .name = "logreg",
    .summary = "multinomial logistic regression, gradient descent (Fashion-MNIST)",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 100,
    .default_subsample = 1,
    .init = logreg_init,
    .step = lin_step,
    .evaluate = lin_evaluate,
    .state = lin_state,
    .describe = logreg_describe,
    .destroy = lin_destroy,
};

const struct train_algo train_algo_svm = {
    .name = "svm",
    .summary = "linear SVM, hinge loss, sub-gradient descent (Fashion-MNIST)",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 100,
    .default_subsample = 1,
    .init = svm_init,
    .step = lin_step,
    .evaluate = lin_evaluate,
    .state = lin_state,
    .describe = svm_describe,
    .destroy = lin_destroy,
};

const struct train_algo train_algo_svmpoly = {
    .name = "svmpoly",
    .summary = "SVM with a polynomial kernel (empirical kernel map), sub-gradient descent",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 100,
    .default_subsample = 0.5,
    .init = svmpoly_init,
    .step = lin_step,
    .evaluate = lin_evaluate,
    .state = lin_state,
    .describe = svmpoly_describe,
    .destroy = lin_destroy,
};

const struct train_algo train_algo_linreg = {
    .name = "linreg",
    .summary = "least-squares linear regression, L-BFGS (Friedman #1)",
    .convergence = "superlinear",
    .kind = TRAIN_REGRESS,
    .default_iters = 100,
    .default_subsample = 1,
    .init = linreg_init,
    .run = lin_run,
    .evaluate = lin_evaluate,
    .state = lin_state,
    .describe = linreg_describe,
    .destroy = lin_destroy,
};
