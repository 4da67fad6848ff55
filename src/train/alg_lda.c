/*
 * alg_lda.c — latent Dirichlet allocation by variational EM (lda), after
 * Blei, Ng and Jordan (2003).
 *
 * Model: K topics (--k, default 10), each a distribution beta_k over the
 * vocabulary; documents draw topic proportions from a symmetric Dirichlet
 * with alpha = 0.1 (fixed, not estimated). E-step, per document: the
 * variational Dirichlet gamma and the word-topic responsibilities phi,
 * iterated to a relative change below 1e-4 (at most 50 rounds), which also
 * gives the document's evidence lower bound (ELBO). M-step: beta_k
 * proportional to the expected word counts plus a pseudo-count of 0.01
 * (a flat Dirichlet prior on the topics that keeps every log beta finite).
 *
 * Loss: the negative ELBO per word, i.e. the log of the perplexity bound
 * exp(-ELBO / words). The E-step over all documents computes it for the
 * current topics, so an iteration is an M-step from the previous E-step's
 * counts followed by one data-parallel E-step (documents split into
 * partitions, expected counts summed per worker).
 *
 * At the end, the held-out documents (every tenth) are run through an E-step
 * with the final topics and their perplexity bound is printed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#define LDA_ALPHA 0.1
#define LDA_ETA 0.01
#define LDA_INNER 50
#define LDA_TOL 1e-4

struct lda {
    int k;
    size_t v;
    double *logb;       /* k x v, log beta */
    double **ss;        /* per worker k x v expected counts */
    double *welbo;
    double **phi;       /* per worker scratch: max distinct words x k */
    double **gam;       /* per worker: 3k (gamma, old gamma, exp digamma) */
    size_t max_words;
    const struct train_corpus *corp;
};

/* Digamma by recurrence up to x >= 6, then the asymptotic series. */
static double lda_digamma(double x)
{
    double r = 0;
    while (x < 6) {
        r -= 1 / x;
        x += 1;
    }
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

/* Variational inference for document j; adds its expected counts to ss
 * (when not NULL) and returns its ELBO. */
static double lda_doc(const struct lda *m, const struct train_corpus *c, size_t j,
                      double *phi, double *g3, double *ss)
{
    int k = m->k;
    size_t o = c->off[j], nw = c->off[j + 1] - o;
    double *gam = g3, *old = g3 + k, *ep = g3 + 2 * k, total = 0;
    for (size_t n = 0; n < nw; n++)
        total += c->cnt[o + n];
    for (int t = 0; t < k; t++)
        gam[t] = LDA_ALPHA + total / k;
    for (int it = 0; it < LDA_INNER; it++) {
        for (int t = 0; t < k; t++) {
            ep[t] = exp(lda_digamma(gam[t]));
            old[t] = gam[t];
            gam[t] = LDA_ALPHA;
        }
        for (size_t n = 0; n < nw; n++) {
            double *p = phi + n * (size_t)k, s = 0;
            int w = c->word[o + n];
            for (int t = 0; t < k; t++) {
                p[t] = exp(m->logb[(size_t)t * m->v + (size_t)w]) * ep[t];
                s += p[t];
            }
            for (int t = 0; t < k; t++) {
                p[t] /= s;
                gam[t] += c->cnt[o + n] * p[t];
            }
        }
        double change = 0;
        for (int t = 0; t < k; t++)
            change += fabs(gam[t] - old[t]);
        if (change / total < LDA_TOL)
            break;
    }
    /* ELBO = E[log p(theta|alpha)] + E[log p(z|theta)] + E[log p(w|z,beta)]
     *        - E[log q(theta)] - E[log q(z)]. */
    double gsum = 0, elbo;
    for (int t = 0; t < k; t++)
        gsum += gam[t];
    double dg = lda_digamma(gsum);
    elbo = lgamma(k * LDA_ALPHA) - k * lgamma(LDA_ALPHA) - lgamma(gsum);
    for (int t = 0; t < k; t++) {
        double e = lda_digamma(gam[t]) - dg;
        elbo += (LDA_ALPHA - gam[t]) * e + lgamma(gam[t]);
        ep[t] = e;
    }
    for (size_t n = 0; n < nw; n++) {
        const double *p = phi + n * (size_t)k;
        int w = c->word[o + n];
        double cn = c->cnt[o + n];
        for (int t = 0; t < k; t++) {
            if (p[t] <= 0)
                continue;
            elbo += cn * p[t] * (ep[t] + m->logb[(size_t)t * m->v + (size_t)w] - log(p[t]));
            if (ss)
                ss[(size_t)t * m->v + (size_t)w] += cn * p[t];
        }
    }
    return elbo;
}

static void lda_part(void *ctx, const struct train_part *p, int w)
{
    struct train_job *job = ctx;
    struct lda *m = job->state;
    double e = 0;
    for (size_t j = p->begin; j < p->end; j++)
        e += lda_doc(m, m->corp, j, m->phi[w], m->gam[w], m->ss[w]);
    m->welbo[w] += e;
}

static double lda_estep(struct train_job *job)
{
    struct lda *m = job->state;
    double elbo = 0;
    for (int w = 0; w < job->n_workers; w++) {
        memset(m->ss[w], 0, (size_t)m->k * m->v * sizeof(double));
        m->welbo[w] = 0;
    }
    train_pool_run(job, lda_part, job);
    for (int w = 0; w < job->n_workers; w++) {
        elbo += m->welbo[w];
        if (w)
            for (size_t i = 0; i < (size_t)m->k * m->v; i++)
                m->ss[0][i] += m->ss[w][i];
    }
    double words = job->corpus.n_tokens * job->rows_per_iter / (double)job->corpus.n_docs;
    return -elbo / words;
}

/* log beta from expected counts in ss (k x v). */
static void lda_mstep(struct lda *m, const double *ss)
{
    for (int t = 0; t < m->k; t++) {
        const double *s = ss + (size_t)t * m->v;
        double *lb = m->logb + (size_t)t * m->v, z = 0;
        for (size_t w = 0; w < m->v; w++)
            z += s[w] + LDA_ETA;
        double lz = log(z);
        for (size_t w = 0; w < m->v; w++)
            lb[w] = log(s[w] + LDA_ETA) - lz;
    }
}

static int lda_init(struct train_job *job, double *loss0, char *err, size_t len)
{
    const struct train_corpus *c = &job->corpus;
    (void)err, (void)len;
    struct lda *m = train_xcalloc(1, sizeof *m);
    job->state = m;
    m->k = job->prm.k ? job->prm.k : 10;
    m->v = c->n_vocab;
    m->corp = c;
    for (size_t j = 0; j < c->n_docs; j++)
        if (c->off[j + 1] - c->off[j] > m->max_words)
            m->max_words = c->off[j + 1] - c->off[j];
    const struct train_corpus *h = &job->heldout;
    for (size_t j = 0; j < h->n_docs; j++)
        if (h->off[j + 1] - h->off[j] > m->max_words)
            m->max_words = h->off[j + 1] - h->off[j];
    m->logb = train_xcalloc((size_t)m->k * m->v, sizeof(double));
    int W = job->max_workers;
    m->ss = train_xcalloc((size_t)W, sizeof *m->ss);
    m->phi = train_xcalloc((size_t)W, sizeof *m->phi);
    m->gam = train_xcalloc((size_t)W, sizeof *m->gam);
    m->welbo = train_xcalloc((size_t)W, sizeof *m->welbo);
    for (int w = 0; w < W; w++) {
        m->ss[w] = train_xcalloc((size_t)m->k * m->v, sizeof(double));
        m->phi[w] = train_xcalloc(m->max_words * (size_t)m->k, sizeof(double));
        m->gam[w] = train_xcalloc(3 * (size_t)m->k, sizeof(double));
    }
    /* Random topics: near-uniform counts with a seeded perturbation, so the
     * topics differ from the start. */
    uint64_t s = 0x6c6461ULL + job->seed;
    for (size_t i = 0; i < (size_t)m->k * m->v; i++)
        m->ss[0][i] = 1.0 + train_rand_uniform(&s);
    lda_mstep(m, m->ss[0]);
    *loss0 = lda_estep(job);
    return 0;
}

static int lda_step(struct train_job *job, double *loss, char *err, size_t len)
{
    struct lda *m = job->state;
    (void)err, (void)len;
    lda_mstep(m, m->ss[0]);
    *loss = lda_estep(job);
    return 0;
}

static int lda_evaluate(struct train_job *job, char *err, size_t len)
{
    struct lda *m = job->state;
    const struct train_corpus *h = &job->heldout;
    (void)err, (void)len;
    if (h->n_docs == 0)
        return 0;
    double elbo = 0;
    for (size_t j = 0; j < h->n_docs; j++)
        elbo += lda_doc(m, h, j, m->phi[0], m->gam[0], NULL);
    snprintf(job->metric_name, sizeof job->metric_name, "heldout_perplexity");
    job->metric = exp(-elbo / h->n_tokens);
    if (!job->quiet)
        printf("# training perplexity bound %.2f over %zu documents, %.0f words, "
               "%zu vocabulary words\n",
               exp(job->loss[job->iters]), job->corpus.n_docs, job->corpus.n_tokens,
               m->v);
    return 0;
}

static void lda_describe(const struct train_job *job, char *tag, size_t len,
                         json_t *params)
{
    int k = job->prm.k ? job->prm.k : 10;
    snprintf(tag, len, "t%d", k);
    json_object_set_new(params, "topics", json_integer(k));
    json_object_set_new(params, "alpha", json_real(LDA_ALPHA));
    json_object_set_new(params, "vocab", json_integer((json_int_t)job->corpus.n_vocab));
    json_object_set_new(params, "docs", json_integer((json_int_t)job->corpus.n_docs));
}

static void lda_destroy(struct train_job *job)
{
    struct lda *m = job->state;
    for (int w = 0; w < job->max_workers; w++) {
        free(m->ss[w]);
        free(m->phi[w]);
        free(m->gam[w]);
    }
    free(m->ss);
    free(m->phi);
    free(m->gam);
    free(m->welbo);
    free(m->logb);
    free(m);
    job->state = NULL;
}

const struct train_algo train_algo_lda = {
    .name = "lda",
    .summary = "latent Dirichlet allocation, variational EM (Debian package descriptions)",
    .convergence = "sublinear",
    .kind = TRAIN_TEXT,
    .default_iters = 50,
    .default_subsample = 1,
    .init = lda_init,
    .step = lda_step,
    .evaluate = lda_evaluate,
    .describe = lda_describe,
    .destroy = lda_destroy,
};
