/*
 * test_aqp.c — approximate queries (ReLAQS): the progress metric of Eq.
 * 4.1 on hand-computed vectors, the progress curve and cost line fits,
 * the query forecast the allocator reads, the true error, and the relaqs
 * policy in the scheduler (a new query's 1/n, exact jobs first, younger
 * queries favoured, the minimum allocation, weights, queries and ML jobs
 * on one scale).
 */
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "testutil.h"

/* ---------------------------------------------------------- metric */

static void test_progress_hand(void **state)
{
    (void)state;
    slaq_progress *p = slaq_progress_new();
    double x1[2] = {10, 100}, x2[2] = {12, 90}, x3[2] = {11, 95},
           x4[2] = {14, 95};
    assert_int_equal(slaq_progress_add(p, x1, 2), SLAQ_OK);
    assert_true(isnan(slaq_progress_value(p, 1)));
    assert_int_equal(slaq_progress_add(p, x2, 2), SLAQ_OK);
    /* first change of each column is its largest so far: P = 1 */
    assert_near(slaq_progress_value(p, 2), 1.0, 1e-12);
    assert_int_equal(slaq_progress_add(p, x3, 2), SLAQ_OK);
    /* |11-12|/2 = 0.5 (a fall counts like a rise), |95-90|/10 = 0.5 */
    assert_near(slaq_progress_value(p, 3), 0.5, 1e-12);
    assert_int_equal(slaq_progress_add(p, x4, 2), SLAQ_OK);
    /* column 0: change 3 is a new max -> 1; column 1: 0/10 = 0 */
    assert_near(slaq_progress_value(p, 4), 0.5, 1e-12);
    assert_int_equal(slaq_progress_batches(p), 4);
    assert_true(isnan(slaq_progress_value(p, 5)));
    /* a different width is refused and changes nothing */
    double x5[3] = {1, 2, 3};
    assert_int_equal(slaq_progress_add(p, x5, 3), SLAQ_EINVAL);
    double bad[2] = {INFINITY, 1};
    assert_int_equal(slaq_progress_add(p, bad, 2), SLAQ_EINVAL);
    assert_int_equal(slaq_progress_batches(p), 4);
    slaq_progress_free(p);
}

static void test_progress_missing(void **state)
{
    (void)state;
    slaq_progress *p = slaq_progress_new();
    double x1[2] = {5, NAN}, x2[2] = {6, NAN}, x3[2] = {6.5, 3},
           x4[2] = {6.5, 4}, x5[2] = {6.5, 4.5};
    slaq_progress_add(p, x1, 2);
    slaq_progress_add(p, x2, 2);
    assert_near(slaq_progress_value(p, 2), 1.0, 1e-12);
    slaq_progress_add(p, x3, 2);
    /* column 1 appears: nothing to compare yet; column 0: 0.5/1 */
    assert_near(slaq_progress_value(p, 3), 0.5, 1e-12);
    slaq_progress_add(p, x4, 2);
    /* column 0 unchanged (0), column 1's first change (1) */
    assert_near(slaq_progress_value(p, 4), 0.5, 1e-12);
    slaq_progress_add(p, x5, 2);
    assert_near(slaq_progress_value(p, 5), 0.25, 1e-12);
    slaq_progress_free(p);

    /* a column that never changes does not count */
    p = slaq_progress_new();
    double y1[2] = {1, 7}, y2[2] = {2, 7};
    slaq_progress_add(p, y1, 2);
    slaq_progress_add(p, y2, 2);
    assert_near(slaq_progress_value(p, 2), 1.0, 1e-12);
    slaq_progress_free(p);
}

/* ------------------------------------------------------- curve fit */

static void test_pcurve_fit_exact(void **state)
{
    (void)state;
    double iv[30], pv[30];
    for (int k = 0; k < 30; k++) {
        iv[k] = k + 2;
        pv[k] = 1.0 / (0.3 * iv[k] * iv[k] - 0.2);
    }
    slaq_pcurve c;
    assert_int_equal(slaq_pcurve_fit(iv, pv, 30, &c), SLAQ_OK);
    assert_near(c.a, 0.3, 1e-6);
    assert_near(c.b, -0.2, 1e-4);
    assert_near(slaq_pcurve_eval(&c, 40), 1.0 / (0.3 * 1600 - 0.2), 1e-9);
}

static void test_pcurve_fit_zeros_and_errors(void **state)
{
    (void)state;
    /* zeros (a batch that changed nothing) are points, not failures */
    double iv[6] = {2, 3, 4, 5, 6, 7};
    double pv[6] = {1, 0.44, 0, 0.16, 0.11, 0};
    slaq_pcurve c;
    assert_int_equal(slaq_pcurve_fit(iv, pv, 6, &c), SLAQ_OK);
    assert_true(c.a > 0);
    assert_true(slaq_pcurve_eval(&c, 8) < slaq_pcurve_eval(&c, 3));
    /* one positive point: no curve */
    double p1[3] = {0.5, 0, 0};
    c.a = 7;
    assert_int_equal(slaq_pcurve_fit(iv, p1, 3, &c), SLAQ_ENODATA);
    assert_near(c.a, 7, 0);
    double neg[2] = {0.5, -1};
    assert_int_equal(slaq_pcurve_fit(iv, neg, 2, &c), SLAQ_EINVAL);
    /* the prior: 1 at the first change, 4/i² */
    slaq_pcurve_prior(&c);
    assert_near(slaq_pcurve_eval(&c, 2), 1, 1e-12);
    assert_near(slaq_pcurve_eval(&c, 4), 0.25, 1e-12);
    assert_near(slaq_pcurve_eval(&c, 0.2), 4, 1e-12);
}

/* ------------------------------------------------------- cost line */

static void test_batchcost(void **state)
{
    (void)state;
    double iv[5] = {1, 2, 3, 4, 5}, cv[5], flat[5] = {2, 1.8, 2.2, 1.9, 1.7};
    for (int k = 0; k < 5; k++)
        cv[k] = 0.5 + 0.1 * iv[k];
    slaq_batchcost c;
    assert_int_equal(slaq_batchcost_fit(iv, cv, 5, &c), SLAQ_OK);
    assert_near(c.alpha, 0.5, 1e-12);
    assert_near(c.beta, 0.1, 1e-12);
    assert_near(slaq_batchcost_eval(&c, 10), 1.5, 1e-12);
    /* a query does not speed up: a falling line is held level */
    assert_int_equal(slaq_batchcost_fit(iv, flat, 5, &c), SLAQ_OK);
    assert_near(c.beta, 0, 0);
    assert_near(c.alpha, 1.92, 1e-12);
    assert_int_equal(slaq_batchcost_fit(iv, cv, 0, &c), SLAQ_EINVAL);
}

/* ------------------------------------------------------ query state */

/* A query whose single column is a running mean of batch means. */
static void feed_mean(slaq_query *q, int batches, unsigned seed, double cost0,
                      double slope)
{
    srand(seed);
    double sum = 0;
    for (int i = 1; i <= batches; i++) {
        double u = 0;
        for (int r = 0; r < 12; r++)
            u += rand() / (double)RAND_MAX;
        sum += 100 + 10 * (u - 6);
        double x = sum / i;
        assert_int_equal(slaq_query_add(q, (uint64_t)i, &x, 1,
                                        cost0 + slope * i),
                         SLAQ_OK);
    }
}

static void test_query_forecast(void **state)
{
    (void)state;
    slaq_query *q = slaq_query_new(NULL);
    double x = 1;
    assert_int_equal(slaq_query_add(q, 2, &x, 1, 1), SLAQ_EORDER);
    feed_mean(q, 10, 7, 1.0, 0.2);
    assert_int_equal(slaq_query_batches(q), 10);
    /* work: Σ (1 + 0.2 i), i = 1..10 = 10 + 11 */
    assert_near(slaq_query_work(q), 21, 1e-9);
    slaq_batchcost c = slaq_query_cost(q, 5);
    assert_near(c.alpha, 1.0, 1e-9);
    assert_near(c.beta, 0.2, 1e-9);

    slaq_forecast f;
    slaq_query_forecast(q, 5, &f);
    assert_int_equal(f.model, SLAQ_MODEL_AQP);
    /* two more batches cost (1 + 2.2) + (1 + 2.4) CPU-seconds: the
     * forecast there is the curve at mini-batch 12 */
    const slaq_pcurve *pc = slaq_query_curve(q);
    double at12 = slaq_pcurve_eval(pc, 12);
    assert_near(slaq_forecast_loss(&f, 21 + 3.2 + 3.4), at12, 1e-9);
    assert_near(slaq_forecast_loss(&f, 21), slaq_pcurve_eval(pc, 10), 1e-12);
    assert_near(slaq_query_predict(q, 2), at12, 1e-12);
    /* more work never raises the predicted P */
    assert_true(slaq_forecast_loss(&f, 30) <= slaq_forecast_loss(&f, 25));
    slaq_query_free(q);
}

static void test_true_error(void **state)
{
    (void)state;
    /* 3 batches × 2 columns; column 1 has no estimate at batch 1 */
    double est[6] = {12, NAN, 11, 30, 10, 25};
    double truth[2] = {10, 20};
    double e[3];
    assert_int_equal(slaq_query_error_curve(est, truth, 3, 2, e), SLAQ_OK);
    /* column 0: |err| 2, 1, 0 over its largest 2: 1, 0.5, 0;
     * column 1: missing (1), then 10, 5 over its largest 10: 1, 0.5 */
    assert_near(e[0], 1.0, 1e-12);
    assert_near(e[1], (0.5 + 1.0) / 2, 1e-12);
    assert_near(e[2], (0 + 0.5) / 2, 1e-12);
    /* a mean of per-column ratios: the scale of a column does not matter
     * (a ratio of means would be column 1's alone here) */
    double big[4] = {1e6 + 4, 11, 1e6 + 2, 10};
    double tb[2] = {1e6, 10};
    assert_int_equal(slaq_query_error_curve(big, tb, 2, 2, e), SLAQ_OK);
    assert_near(e[1], (0.5 + 0) / 2, 1e-12);
    /* normalised by the largest error, not the first: a lucky first
     * estimate does not push the error above 1 */
    double lucky[3] = {10.1, 13, 10};
    double t1 = 10;
    assert_int_equal(slaq_query_error_curve(lucky, &t1, 3, 1, e), SLAQ_OK);
    assert_near(e[0], 0.1 / 3, 1e-12);
    assert_near(e[1], 1, 1e-12);
    assert_near(e[2], 0, 1e-12);
    /* always exact: 0; a NULL truth is met by a NULL estimate only */
    double ex[2] = {5, 5}, t5 = 5;
    assert_int_equal(slaq_query_error_curve(ex, &t5, 2, 1, e), SLAQ_OK);
    assert_near(e[0], 0, 1e-12);
    double nul[2] = {3, NAN}, tn = NAN;
    assert_int_equal(slaq_query_error_curve(nul, &tn, 2, 1, e), SLAQ_OK);
    assert_near(e[0], 1, 1e-12);
    assert_near(e[1], 0, 1e-12);
    assert_int_equal(slaq_query_error_curve(est, truth, 0, 2, e),
                     SLAQ_EINVAL);
}

/* X_i = t + 1/i: E_i = 1/i (its largest is the first);
 * P_i = (1/(i(i−1))) / (1/2). The comparison is their mean distance. */
static void test_eval_metric_exact(void **state)
{
    (void)state;
    enum { B = 20 };
    double est[B], truth = 3, want = 0;
    for (int i = 1; i <= B; i++)
        est[i - 1] = truth + 1.0 / i;
    for (int i = 2; i <= B; i++)
        want += fabs(1.0 / i - 2.0 / (i * (i - 1.0)));
    slaq_query_eval acc;
    memset(&acc, 0, sizeof acc);
    int hz[1] = {1};
    assert_int_equal(slaq_eval_query(NULL, est, &truth, B, 1, hz, 1, &acc),
                     SLAQ_OK);
    assert_int_equal(acc.metric_n, B - 1);
    assert_near(acc.metric_err_sum, want, 1e-9);
    /* P here is exactly 2/(i(i−1)) = 1/(i²/2 − i/2): close to the fitted
     * family, so one step ahead is predicted within a few points */
    assert_true(acc.pred[0].err_sum / acc.pred[0].n < 0.03);
}

static void test_eval_query(void **state)
{
    (void)state;
    /* a running mean over 40 batches, 4 columns */
    enum { B = 40, K = 4 };
    double est[B * K], truth[K], sum[K] = {0};
    srand(3);
    for (int i = 1; i <= B; i++)
        for (int c = 0; c < K; c++) {
            sum[c] += 50 * (c + 1) + 20 * (rand() / (double)RAND_MAX - 0.5);
            est[(i - 1) * K + c] = sum[c] / i;
        }
    for (int c = 0; c < K; c++)
        truth[c] = est[(B - 1) * K + c];
    slaq_query_eval acc;
    memset(&acc, 0, sizeof acc);
    int hz[2] = {1, 5};
    assert_int_equal(slaq_eval_query(NULL, est, truth, B, K, hz, 2, &acc),
                     SLAQ_OK);
    assert_int_equal(acc.pred[0].n, B - 3);
    assert_int_equal(acc.pred[1].n, B - 2 - 5);
    assert_int_equal(acc.metric_n, B - 1);
    double e1 = acc.pred[0].err_sum / acc.pred[0].n;
    double e5 = acc.pred[1].err_sum / acc.pred[1].n;
    assert_true(e1 < 0.1);
    assert_true(e5 < 0.1);
    assert_true(acc.metric_err_sum / acc.metric_n < 1);
    /* bad arguments */
    int many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(slaq_eval_query(NULL, est, truth, B, K, many, 9, &acc),
                     SLAQ_EINVAL);
}

/* ------------------------------------------------------ scheduling */

static slaq_sched *relaqs(double cores, double qmin)
{
    slaq_sched_config cfg;
    slaq_sched_config_init(&cfg);
    cfg.policy = SLAQ_POLICY_RELAQS;
    cfg.cores = cores;
    cfg.epoch_s = 1;
    cfg.damping = 0;
    cfg.hysteresis = 0;
    cfg.query_min_cores = qmin;
    return slaq_sched_new(&cfg);
}

static slaq_job *add_query(slaq_sched *s, double t, double w)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.kind = SLAQ_JOB_QUERY;
    o.weight = w;
    return slaq_sched_add(s, &o, t);
}

/* Reports batches from..to of a noiseless query: one column whose
 * change at batch i is 1/i², each batch 1 CPU-second. */
static void report_batches(slaq_job *j, int from, int to, double t)
{
    for (int i = from; i <= to; i++) {
        double x = 0;
        for (int m = 2; m <= i; m++)
            x += 1.0 / ((double)m * m);
        slaq_report r = {.iter = (uint64_t)i, .cpu_s = 1, .samples = 100,
                         .t = t};
        assert_int_equal(slaq_job_report_estimates(j, &r, &x, 1), SLAQ_OK);
    }
}

static void test_relaqs_new_query_fair_share(void **state)
{
    (void)state;
    slaq_sched *s = relaqs(8, 0);
    slaq_job *old = add_query(s, 0, 1);
    report_batches(old, 1, 6, 0);
    slaq_job *a = add_query(s, 0, 1);
    slaq_job *b = add_query(s, 0, 1);
    slaq_job *c = add_query(s, 0, 1);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    /* no mini-batch yet: exactly 1/n of the cores */
    assert_near(slaq_job_alloc(a), 2, 1e-9);
    assert_near(slaq_job_alloc(b), 2, 1e-9);
    assert_near(slaq_job_alloc(c), 2, 1e-9);
    assert_near(slaq_job_alloc(old), 2, 1e-9);
    slaq_sched_free(s);
}

/* A query started again elsewhere from its checkpoint: its first
 * mini-batch here is after + 1, and positions count from there. */
static void test_query_resume(void **state)
{
    (void)state;
    slaq_query *q = slaq_query_new(NULL);
    assert_non_null(q);
    assert_int_equal(slaq_query_resume(q, 29), SLAQ_OK);
    assert_int_equal(slaq_query_batches(q), 29);
    double x = 10;
    assert_int_equal(slaq_query_add(q, 1, &x, 1, 1), SLAQ_EORDER);
    assert_int_equal(slaq_query_add(q, 30, &x, 1, 31), SLAQ_OK);
    assert_int_equal(slaq_query_resume(q, 3), SLAQ_EINVAL);
    x = 10.5;
    assert_int_equal(slaq_query_add(q, 32, &x, 1, 1), SLAQ_EORDER);
    assert_int_equal(slaq_query_add(q, 31, &x, 1, 32), SLAQ_OK);
    assert_int_equal(slaq_query_batches(q), 31);
    assert_int_equal(slaq_query_resume(q, 31), SLAQ_OK); /* no gap */
    /* its first change here is P = 1; the prior is read at batch 31 + h */
    assert_near(slaq_query_last(q), 1, 0);
    assert_near(slaq_query_predict(q, 1), 4.0 / (32.0 * 32.0), 1e-12);
    /* the cost line is on the batch numbers: 31 at 30, 32 at 31 */
    slaq_batchcost c = slaq_query_cost(q, 1);
    assert_near(c.beta, 1, 1e-12);
    assert_near(slaq_batchcost_eval(&c, 30), 31, 1e-12);
    slaq_forecast f;
    slaq_query_forecast(q, 1, &f);
    assert_near(f.par2[0], 31, 0);
    /* the reports of 32..34 were lost: 35 follows 31 */
    assert_int_equal(slaq_query_resume(q, 34), SLAQ_OK);
    x = 10.25;
    assert_int_equal(slaq_query_add(q, 32, &x, 1, 33), SLAQ_EORDER);
    assert_int_equal(slaq_query_add(q, 35, &x, 1, 36), SLAQ_OK);
    assert_int_equal(slaq_query_batches(q), 35);
    assert_near(slaq_query_last(q), 0.5, 1e-12); /* |10.25-10.5| / 0.5 */
    c = slaq_query_cost(q, 1); /* 31, 32 and 36 at 30, 31 and 35 */
    assert_near(c.beta, 1, 1e-12);
    assert_near(slaq_batchcost_eval(&c, 35), 36, 1e-9);
    slaq_query_free(q);

    /* through the scheduler: only a query resumes; it is unproven (its
     * fair share) until its first mini-batch here */
    slaq_sched *s = relaqs(8, 0);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    slaq_job *ml = slaq_sched_add(s, &o, 0);
    assert_int_equal(slaq_job_query_resume(ml, 3), SLAQ_EINVAL);
    slaq_job *old = add_query(s, 0, 1);
    report_batches(old, 1, 6, 0);
    slaq_job *j = add_query(s, 0, 1);
    assert_int_equal(slaq_job_query_resume(j, 40), SLAQ_OK);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_near(slaq_job_alloc(j), 8.0 / 3, 1e-9);
    slaq_sched_free(s);
}

/* The cores are due to be divided again when a job arrives or leaves
 * and when a query's first mini-batch ends its fair share; not after
 * its later mini-batches, and not after an allocation. */
static void test_relaqs_due_at_first_batch(void **state)
{
    (void)state;
    slaq_sched *s = relaqs(8, 0);
    assert_int_equal(slaq_sched_due(s), 0);
    slaq_job *old = add_query(s, 0, 1);
    assert_int_equal(slaq_sched_due(s), 1);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_sched_due(s), 0);
    report_batches(old, 1, 1, 0);
    assert_int_equal(slaq_sched_due(s), 1); /* its fair share ends */
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    report_batches(old, 2, 5, 1);
    assert_int_equal(slaq_sched_due(s), 0);
    slaq_job *young = add_query(s, 2, 1);
    assert_int_equal(slaq_sched_due(s), 1);
    assert_int_equal(slaq_sched_epoch(s, 2), SLAQ_OK);
    assert_near(slaq_job_alloc(young), 4, 1e-9); /* 1/n until then */
    report_batches(young, 1, 1, 3);
    assert_int_equal(slaq_sched_due(s), 1);
    assert_int_equal(slaq_sched_epoch(s, 3), SLAQ_OK);
    assert_true(slaq_job_alloc(young) > 4); /* now by its progress */
    slaq_sched_remove(s, old);
    assert_int_equal(slaq_sched_due(s), 1);
    slaq_sched_free(s);
}

static void test_relaqs_favours_young(void **state)
{
    (void)state;
    slaq_sched *s = relaqs(8, 1);
    slaq_job *old = add_query(s, 0, 1);
    slaq_job *young = add_query(s, 0, 1);
    report_batches(old, 1, 30, 0.5);
    report_batches(young, 1, 3, 0.5);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    /* the young query's P falls much faster per core */
    assert_true(slaq_job_alloc(young) > slaq_job_alloc(old));
    /* the tunable minimum holds */
    assert_true(slaq_job_alloc(old) >= 1 - 1e-9);
    assert_near(slaq_job_alloc(old) + slaq_job_alloc(young), 8, 1e-9);
    assert_true(slaq_job_gain(young) > slaq_job_gain(old));
    slaq_sched_free(s);

    /* a larger minimum allocation moves cores back to the old query */
    s = relaqs(8, 3);
    old = add_query(s, 0, 1);
    young = add_query(s, 0, 1);
    report_batches(old, 1, 30, 0.5);
    report_batches(young, 1, 3, 0.5);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(old), 3, 1e-9);
    slaq_sched_free(s);
}

static void test_relaqs_fair_policy_ignores_progress(void **state)
{
    (void)state;
    slaq_sched *s = relaqs(8, 1);
    slaq_sched_set_policy(s, SLAQ_POLICY_FAIR);
    slaq_job *old = add_query(s, 0, 1);
    slaq_job *young = add_query(s, 0, 1);
    report_batches(old, 1, 30, 0.5);
    report_batches(young, 1, 3, 0.5);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(old), 4, 1e-9);
    assert_near(slaq_job_alloc(young), 4, 1e-9);
    slaq_sched_free(s);
}

static void test_relaqs_exact_first(void **state)
{
    (void)state;
    slaq_sched *s = relaqs(9, 0);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.kind = SLAQ_JOB_EXACT;
    slaq_job *exact = slaq_sched_add(s, &o, 0);
    slaq_job *q1 = add_query(s, 0, 1);
    slaq_job *q2 = add_query(s, 0, 1);
    report_batches(q1, 1, 3, 0.5);
    report_batches(q2, 1, 20, 0.5);
    slaq_report r = {.iter = 1, .loss = 5, .cpu_s = 1, .samples = 1, .t = 0};
    slaq_job_report(exact, &r);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    /* the exact job has its fair share, 9/3, however little it gains */
    assert_near(slaq_job_alloc(exact), 3, 1e-9);
    assert_near(slaq_job_alloc(q1) + slaq_job_alloc(q2), 6, 1e-9);
    assert_true(slaq_job_alloc(q1) > slaq_job_alloc(q2));
    /* a query report on a non-query is refused */
    double x = 1;
    r.iter = 2;
    assert_int_equal(slaq_job_report_estimates(exact, &r, &x, 1),
                     SLAQ_EINVAL);
    slaq_sched_free(s);
}

static void test_relaqs_weights(void **state)
{
    (void)state;
    /* two identical queries: the one with priority 2 gets more */
    slaq_sched *s = relaqs(8, 1);
    slaq_job *lo = add_query(s, 0, 1);
    slaq_job *hi = add_query(s, 0, 2);
    report_batches(lo, 1, 5, 0.5);
    report_batches(hi, 1, 5, 0.5);
    slaq_sched_epoch(s, 1);
    assert_true(slaq_job_alloc(hi) > slaq_job_alloc(lo));
    slaq_sched_free(s);
}

static void test_relaqs_ml_and_query(void **state)
{
    (void)state;
    /* an ML job near its end and a young query: the query wins the
     * cores; a fresh ML job and an old query: the job does */
    for (int flip = 0; flip < 2; flip++) {
        slaq_sched *s = relaqs(8, 1);
        slaq_job_opts o;
        slaq_job_opts_init(&o);
        o.iter_cpu_s = 1;
        o.iters = 200;
        slaq_job *ml = slaq_sched_add(s, &o, 0);
        slaq_job *q = add_query(s, 0, 1);
        int mlk = flip ? 5 : 150;
        for (int k = 0; k <= mlk; k++) {
            slaq_report r = {.iter = (uint64_t)k,
                             .loss = 1.0 / (1 + 0.1 * k),
                             .cpu_s = k ? 1 : 0,
                             .samples = 10,
                             .t = 0.5};
            assert_int_equal(slaq_job_report(ml, &r), SLAQ_OK);
        }
        report_batches(q, 1, flip ? 40 : 3, 0.5);
        slaq_sched_epoch(s, 1);
        if (flip)
            assert_true(slaq_job_alloc(ml) > slaq_job_alloc(q));
        else
            assert_true(slaq_job_alloc(q) > slaq_job_alloc(ml));
        slaq_sched_free(s);
    }
}

static void test_policy_names(void **state)
{
    (void)state;
    slaq_policy_kind k;
    assert_int_equal(slaq_policy_parse("relaqs", &k), SLAQ_OK);
    assert_int_equal(k, SLAQ_POLICY_RELAQS);
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_RELAQS), "relaqs");
    int jk;
    assert_int_equal(slaq_job_kind_parse("query", &jk), SLAQ_OK);
    assert_int_equal(jk, SLAQ_JOB_QUERY);
    assert_int_equal(slaq_job_kind_parse("sql", &jk), SLAQ_EINVAL);
    assert_string_equal(slaq_job_kind_name(SLAQ_JOB_EXACT), "exact");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_hand),
        cmocka_unit_test(test_progress_missing),
        cmocka_unit_test(test_pcurve_fit_exact),
        cmocka_unit_test(test_pcurve_fit_zeros_and_errors),
        cmocka_unit_test(test_batchcost),
        cmocka_unit_test(test_query_forecast),
        cmocka_unit_test(test_true_error),
        cmocka_unit_test(test_eval_query),
        cmocka_unit_test(test_eval_metric_exact),
        cmocka_unit_test(test_relaqs_new_query_fair_share),
        cmocka_unit_test(test_query_resume),
        cmocka_unit_test(test_relaqs_due_at_first_batch),
        cmocka_unit_test(test_relaqs_favours_young),
        cmocka_unit_test(test_relaqs_fair_policy_ignores_progress),
        cmocka_unit_test(test_relaqs_exact_first),
        cmocka_unit_test(test_relaqs_weights),
        cmocka_unit_test(test_relaqs_ml_and_query),
        cmocka_unit_test(test_policy_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
