/*
 * alg_kmeans.c — K-Means by Lloyd's algorithm, data-parallel.
 *
 * Loss: the K-Means objective, the sum over points of the squared distance
 * to the nearest centre. Each pass assigns every point to its nearest
 * centre (distances by one dgemm per partition: |x|^2 - 2 x.c + |c|^2) and
 * accumulates per-cluster sums and counts. The objective of the centres the
 * pass used falls out of the same pass: the squared distance to the chosen
 * centre is recomputed exactly (d flops per point, against k*d for the
 * assignment) so the reported loss carries no cancellation error from the
 * expansion. An iteration therefore moves the centres to the means of the
 * previous pass and then runs one pass with the new centres, whose objective
 * is the iteration's loss.
 *
 * Initialisation: k distinct rows drawn at random (Forgy), from --seed.
 * An empty cluster keeps its centre.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

struct km {
    int k;
    size_t d;
    double *c;          /* k x d centres */
    double *cn;         /* |c|^2 */
    double **sum;       /* per worker k x d */
    double **cnt;       /* per worker k */
    double *wloss;
    double **dot;       /* per worker scratch KM_BLOCK x k */
};

/* Rows per block: the block is read from memory by the dgemm and is still
 * in cache for the exact distance and the cluster sums. */
#define KM_BLOCK 128

static void km_part(void *ctx, const struct train_part *p, int w)
{
    struct train_job *job = ctx;
    struct km *m = job->state;
    size_t d = m->d;
    int k = m->k;
    double *S = m->dot[w], loss = 0;

    for (size_t r0 = p->begin; r0 < p->end; r0 += KM_BLOCK) {
        size_t rows = p->end - r0 < KM_BLOCK ? p->end - r0 : KM_BLOCK;
        const double *X = job->train.x + r0 * d;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, k,
                    (int)d, 1.0, X, (int)d, m->c, (int)d, 0.0, S, k);
        for (size_t i = 0; i < rows; i++) {
            const double *x = X + i * d;
            /* |x|^2 is the same for every centre: compare |c|^2 - 2 x.c. */
            int best = 0;
            double bv = INFINITY;
            for (int j = 0; j < k; j++) {
                double v = m->cn[j] - 2 * S[i * (size_t)k + j];
                if (v < bv) {
                    bv = v;
                    best = j;
                }
            }
            const double *c = m->c + (size_t)best * d;
            double dist = 0;
            for (size_t t = 0; t < d; t++) {
                double e = x[t] - c[t];
                dist += e * e;
            }
            loss += dist;
            cblas_daxpy((int)d, 1.0, x, 1, m->sum[w] + (size_t)best * d, 1);
            m->cnt[w][best] += 1;
        }
    }
    m->wloss[w] += loss;
}

static double km_pass(struct train_job *job)
{
    struct km *m = job->state;
    double loss = 0;
    for (int j = 0; j < m->k; j++)
        m->cn[j] = cblas_ddot((int)m->d, m->c + (size_t)j * m->d, 1,
                              m->c + (size_t)j * m->d, 1);
    for (int w = 0; w < job->n_workers; w++) {
        memset(m->sum[w], 0, (size_t)m->k * m->d * sizeof(double));
        memset(m->cnt[w], 0, (size_t)m->k * sizeof(double));
        m->wloss[w] = 0;
    }
    train_pool_run(job, km_part, job);
    /* Reduce into worker 0's buffers, which the next step reads. */
    for (int w = 0; w < job->n_workers; w++) {
        loss += m->wloss[w];
        if (w == 0)
            continue;
        cblas_daxpy(m->k * (int)m->d, 1.0, m->sum[w], 1, m->sum[0], 1);
        cblas_daxpy(m->k, 1.0, m->cnt[w], 1, m->cnt[0], 1);
    }
    return loss;
}

static int km_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    const struct train_data *D = &job->train;
    int k = job->prm.k ? job->prm.k : 10;
    if ((size_t)k > D->n) {
        snprintf(err, len, "--k %d: only %zu rows to cluster", k, D->n);
        return -1;
    }
    struct km *m = train_xcalloc(1, sizeof *m);
    job->state = m;
    m->k = k;
    m->d = D->d;
    m->c = train_xcalloc((size_t)k * m->d, sizeof(double));
    m->cn = train_xcalloc((size_t)k, sizeof(double));
    m->sum = train_xcalloc((size_t)job->max_workers, sizeof *m->sum);
    m->cnt = train_xcalloc((size_t)job->max_workers, sizeof *m->cnt);
    m->dot = train_xcalloc((size_t)job->max_workers, sizeof *m->dot);
    m->wloss = train_xcalloc((size_t)job->max_workers, sizeof *m->wloss);
    for (int w = 0; w < job->max_workers; w++) {
        m->sum[w] = train_xcalloc((size_t)k * m->d, sizeof(double));
        m->cnt[w] = train_xcalloc((size_t)k, sizeof(double));
        m->dot[w] = train_xcalloc(KM_BLOCK * (size_t)k, sizeof(double));
    }
    /* Forgy: k distinct rows by a partial shuffle of row indices. */
    uint64_t s = 0x6b6d65616e73ULL + job->seed;
    size_t *ix = train_xcalloc(D->n, sizeof *ix);
    for (size_t i = 0; i < D->n; i++)
        ix[i] = i;
    for (int j = 0; j < k; j++) {
        size_t r = (size_t)j + (size_t)(train_rand_uniform(&s) * (double)(D->n - (size_t)j));
        if (r >= D->n)
            r = D->n - 1;
        size_t t = ix[j];
        ix[j] = ix[r];
        ix[r] = t;
        memcpy(m->c + (size_t)j * m->d, D->x + ix[j] * m->d, m->d * sizeof(double));
    }
    free(ix);
    *loss0 = km_pass(job);
    return 0;
}

static int km_step(struct train_job *job, double *loss, char *err, size_t len)
{
    struct km *m = job->state;
    (void)err, (void)len;
    for (int j = 0; j < m->k; j++) {
        double n = m->cnt[0][j];
        if (n > 0)
            for (size_t t = 0; t < m->d; t++)
                m->c[(size_t)j * m->d + t] = m->sum[0][(size_t)j * m->d + t] / n;
    }
    *loss = km_pass(job);
    return 0;
}

/* Checkpoint state: the centres and the sums of the last pass, from
 * which km_step computes the next centres. */
static void km_state(struct train_job *job,
                     void (*fn)(void *arg, double *v, size_t n), void *arg)
{
    struct km *m = job->state;
    fn(arg, m->c, (size_t)m->k * m->d);
    fn(arg, m->cn, (size_t)m->k);
    fn(arg, m->sum[0], (size_t)m->k * m->d);
    fn(arg, m->cnt[0], (size_t)m->k);
}

/* Reports the objective on the test set (nearest centre, squared distance,
 * averaged per point) so runs of different sizes compare. */
static int km_evaluate(struct train_job *job, char *err, size_t len)
{
    struct km *m = job->state;
    const struct train_data *T = &job->test;
    (void)err, (void)len;
    if (T->n == 0)
        return 0;
    double total = 0;
    for (size_t i = 0; i < T->n; i++) {
        double best = INFINITY;
        for (int j = 0; j < m->k; j++) {
            double dist = 0;
            for (size_t t = 0; t < m->d; t++) {
                double e = T->x[i * m->d + t] - m->c[(size_t)j * m->d + t];
                dist += e * e;
            }
            if (dist < best)
                best = dist;
        }
        total += best;
    }
    snprintf(job->metric_name, sizeof job->metric_name, "test_mean_sq_dist");
    job->metric = total / (double)T->n;
    return 0;
}

static void km_describe(const struct train_job *job, char *tag, size_t len,
                        json_t *params)
{
    int k = job->prm.k ? job->prm.k : 10;
    snprintf(tag, len, "k%d", k);
    json_object_set_new(params, "k", json_integer(k));
}

static void km_destroy(struct train_job *job)
{
    struct km *m = job->state;
    for (int w = 0; w < job->max_workers; w++) {
        free(m->sum[w]);
        free(m->cnt[w]);
        free(m->dot[w]);
    }
    free(m->sum);
    free(m->cnt);
    free(m->dot);
    free(m->wloss);
    free(m->c);
    free(m->cn);
    free(m);
    job->state = NULL;
}

const double *train_kmeans_centres(const struct train_job *job, int *k)
{
    const struct km *m = job->state;
    *k = m->k;
    return m->c;
}

const struct train_algo train_algo_kmeans = {
    .name = "kmeans",
    .summary = "K-Means, Lloyd's algorithm (Fashion-MNIST pixels)",
    .convergence = "sublinear",
    .kind = TRAIN_CLASSIFY,
    .default_iters = 50,
    .default_subsample = 1,
    .init = km_init,
    .step = km_step,
    .evaluate = km_evaluate,
    .state = km_state,
    .describe = km_describe,
    .destroy = km_destroy,
};
