/*
 * test_predictor.c — loss predictors: fits recover known curves, the simple
 * kinds behave as documented, forecasts stay bounded on bad data, and the
 * evaluation measures what docs/metrics.md defines.
 */
#include <stdlib.h>

#include "slaq/slaq.h"
#include "testutil.h"

static double rational(double k) { return 1.0 / (0.002 * k * k + 0.1 * k + 1) + 0.5; }
static double expo(double k) { return 2.0 * pow(0.85, k) + 0.3; }

/* Feeds f(0..n-1) and fits; returns the predictor. */
static slaq_predictor *fit_curve(slaq_predictor_kind kind, double (*f)(double),
                                 int n, slaq_history **hp)
{
    slaq_history *h = slaq_history_new(0);
    slaq_predictor *p = slaq_predictor_new(kind, NULL);
    assert_non_null(h);
    assert_non_null(p);
    for (int k = 0; k < n; k++) {
        slaq_report r = {(uint64_t)k, f(k), 1, 1, k};
        assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
        /* fit along the way too, as a scheduler would (warm starts) */
        if (k >= 5)
            assert_int_equal(slaq_predictor_fit(p, h), SLAQ_OK);
    }
    *hp = h;
    return p;
}

static void check_recovers(slaq_predictor_kind kind, double (*f)(double),
                           slaq_model model, double final)
{
    slaq_history *h;
    slaq_predictor *p = fit_curve(kind, f, 30, &h);
    const slaq_forecast *fc = slaq_predictor_forecast(p);
    double range = f(0) - final;
    assert_int_equal(fc->model, model);
    for (int hz = 1; hz <= 20; hz++)
        assert_near(slaq_predictor_loss(p, hz), f(29 + hz), 1e-4 * range);
    assert_near(fc->final_loss, final, 2e-2 * range);
    slaq_predictor_free(p);
    slaq_history_free(h);
}

static void test_slaq_fit_recovers_rational_curve(void **state)
{
    (void)state;
    check_recovers(SLAQ_PRED_SLAQ_FIT, rational, SLAQ_MODEL_RATIONAL, 0.5);
}

static void test_slaq_fit_recovers_exponential_curve(void **state)
{
    (void)state;
    check_recovers(SLAQ_PRED_SLAQ_FIT, expo, SLAQ_MODEL_EXP, 0.3);
}

static void test_auto_recovers_both_curves(void **state)
{
    (void)state;
    /* auto may blend, so check the predictions rather than the family */
    slaq_predictor_kind k = SLAQ_PRED_AUTO;
    double (*fs[2])(double) = {rational, expo};
    double finals[2] = {0.5, 0.3};
    for (int i = 0; i < 2; i++) {
        slaq_history *h;
        slaq_predictor *p = fit_curve(k, fs[i], 30, &h);
        double range = fs[i](0) - finals[i];
        for (int hz = 1; hz <= 20; hz++)
            assert_near(slaq_predictor_loss(p, hz), fs[i](29 + hz),
                        1e-3 * range);
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

static void test_strawman_repeats_last_change(void **state)
{
    (void)state;
    slaq_history *h;
    slaq_predictor *p = fit_curve(SLAQ_PRED_STRAWMAN, expo, 12, &h);
    double d = expo(10) - expo(11);
    for (int hz = 1; hz <= 10; hz++)
        assert_near(slaq_predictor_loss(p, hz), expo(11) - hz * d, 1e-12);
    slaq_predictor_free(p);
    slaq_history_free(h);
}

static void test_oracle_knows_the_truth(void **state)
{
    (void)state;
    double truth[40];
    for (int k = 0; k < 40; k++)
        truth[k] = rational(k);
    slaq_history *h = slaq_history_new(0);
    slaq_predictor *p = slaq_predictor_new(SLAQ_PRED_ORACLE, NULL);
    assert_int_equal(slaq_predictor_set_truth(p, truth, 40), SLAQ_OK);
    for (int k = 0; k < 10; k++) {
        slaq_report r = {(uint64_t)k, truth[k], 1, 1, k};
        slaq_history_add(h, &r);
    }
    slaq_predictor_fit(p, h);
    assert_near(slaq_predictor_loss(p, 5), truth[14], 0);
    assert_near(slaq_predictor_loss(p, 0.5),
                (truth[9] + truth[10]) / 2, 1e-15);
    assert_near(slaq_predictor_loss(p, 1000), truth[39], 0);
    slaq_predictor *q = slaq_predictor_new(SLAQ_PRED_AUTO, NULL);
    assert_int_equal(slaq_predictor_set_truth(q, truth, 40), SLAQ_EINVAL);
    slaq_predictor_free(q);
    slaq_predictor_free(p);
    slaq_history_free(h);
}

static void test_new_job_is_assumed_at_its_steepest(void **state)
{
    (void)state;
    slaq_predictor_kind kinds[] = {SLAQ_PRED_STRAWMAN, SLAQ_PRED_SLAQ_FIT,
                                   SLAQ_PRED_AUTO};
    for (size_t i = 0; i < 3; i++) {
        slaq_history *h = slaq_history_new(0);
        slaq_predictor *p = slaq_predictor_new(kinds[i], NULL);
        assert_int_equal(slaq_predictor_fit(p, h), SLAQ_ENODATA);
        slaq_report r = {0, 7.0, 0, 0, 0};
        slaq_history_add(h, &r);
        assert_int_equal(slaq_predictor_fit(p, h), SLAQ_OK);
        const slaq_forecast *f = slaq_predictor_forecast(p);
        /* one normaliser (1 before any drop) per iteration */
        assert_near(f->scale, 1.0, 0);
        assert_near(slaq_predictor_loss(p, 3), 4.0, 1e-12);
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

static void test_forecast_never_falls_faster_than_recent_steps(void **state)
{
    (void)state;
    /* An accelerating start: a few points a 4-parameter curve can bend
     * through to a steep dive. */
    double loss[] = {2.36, 2.28, 2.16, 1.81, 1.29, 0.91};
    slaq_predictor_kind kinds[] = {SLAQ_PRED_SLAQ_FIT, SLAQ_PRED_AUTO};
    for (size_t i = 0; i < 2; i++) {
        slaq_history *h = slaq_history_new(0);
        slaq_predictor *p = slaq_predictor_new(kinds[i], NULL);
        for (int k = 0; k < 6; k++) {
            slaq_report r = {(uint64_t)k, loss[k], 1, 1, k};
            slaq_history_add(h, &r);
        }
        slaq_predictor_fit(p, h);
        double steepest = 0.52; /* 1.81 - 1.29 */
        for (int hz = 1; hz <= 30; hz++) {
            double v = slaq_predictor_loss(p, hz);
            assert_true(isfinite(v));
            assert_true(v >= 0.91 - steepest * hz - 1e-12);
        }
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

static void test_noisy_and_rising_curves_stay_finite(void **state)
{
    (void)state;
    srand(7);
    slaq_predictor_kind kinds[] = {SLAQ_PRED_STRAWMAN, SLAQ_PRED_SLAQ_FIT,
                                   SLAQ_PRED_AUTO};
    for (size_t i = 0; i < 3; i++) {
        slaq_history *h = slaq_history_new(16);
        slaq_predictor *p = slaq_predictor_new(kinds[i], NULL);
        for (int k = 0; k < 200; k++) {
            double noise = (rand() / (double)RAND_MAX - 0.5) * 0.4;
            double base = k < 100 ? expo(k) : 0.3 + 0.002 * (k - 100);
            slaq_report r = {(uint64_t)k, base + noise, 1, 1, k};
            slaq_history_add(h, &r);
            slaq_predictor_fit(p, h);
            for (int hz = 0; hz <= 50; hz += 10)
                assert_true(isfinite(slaq_predictor_loss(p, hz)));
            assert_true(isfinite(slaq_predictor_forecast(p)->final_loss));
        }
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

static void test_eval_matches_definition(void **state)
{
    (void)state;
    /* A straight line: the strawman is exact; at k = 5..8 with h = 1 and
     * 10 points there are 4 predictions. */
    double line[10];
    for (int k = 0; k < 10; k++)
        line[k] = 10 - k;
    int hz[2] = {1, 3};
    slaq_eval_acc acc[2] = {{0}};
    assert_int_equal(slaq_eval_curve(SLAQ_PRED_STRAWMAN, NULL, line, 10, NULL,
                                     hz, 2, acc),
                     SLAQ_OK);
    assert_int_equal(acc[0].n, 4); /* k = 5, 6, 7, 8 */
    assert_int_equal(acc[1].n, 2); /* k = 5, 6 */
    assert_near(acc[0].err_sum, 0, 1e-12);
    /* The oracle is exact on anything. */
    double c[30];
    for (int k = 0; k < 30; k++)
        c[k] = rational(k);
    slaq_eval_acc o = {0};
    slaq_eval_curve(SLAQ_PRED_ORACLE, NULL, c, 30, NULL, hz, 1, &o);
    assert_near(o.err_sum, 0, 0);
    /* Known error: a constant prediction of a line is off by h·slope,
     * normalised by the range 9 and relative to the true value. */
    slaq_eval_acc s = {0};
    double flat[10] = {10, 9, 8, 7, 6, 5, 5, 5, 5, 5};
    int one = 1;
    slaq_eval_curve(SLAQ_PRED_STRAWMAN, NULL, flat, 10, NULL, &one, 1, &s);
    /* k=5: predicts 4 (slope 1), truth 5 -> error 1; k=6..8 exact */
    assert_int_equal(s.n, 4);
    assert_near(s.err_sum, 1.0 / 5, 1e-12);
    assert_near(s.rel_sum, 1.0 / 5, 1e-12);
}

/* A history cleared and refilled to the same number of reports is new
 * data: the predictor must refit, not keep the old forecast. */
static void test_refit_after_clear_and_refill(void **state)
{
    (void)state;
    for (int kind = SLAQ_PRED_STRAWMAN; kind <= SLAQ_PRED_AUTO; kind++) {
        slaq_history *h = slaq_history_new(0);
        slaq_predictor *p = slaq_predictor_new((slaq_predictor_kind)kind,
                                               NULL);
        for (uint64_t k = 0; k < 12; k++) {
            slaq_report r = {k, expo((double)k), 1, 1, (double)k};
            assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
        }
        slaq_predictor_fit(p, h);
        slaq_history_clear(h);
        for (uint64_t k = 0; k < 12; k++) {
            slaq_report r = {k, 10 * rational((double)k), 1, 1, (double)k};
            assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
        }
        slaq_predictor_fit(p, h);
        assert_near(slaq_predictor_forecast(p)->loss0, 10 * rational(11),
                    1e-12);
        assert_near(slaq_predictor_loss(p, 0), 10 * rational(11),
                    0.05 * 10 * rational(11));
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

/* An invalid Λ is an invalid argument, not a lack of memory. */
static void test_eval_refuses_bad_lambda(void **state)
{
    (void)state;
    double c[10];
    for (int k = 0; k < 10; k++)
        c[k] = expo(k);
    int one = 1;
    slaq_eval_acc acc = {0};
    slaq_predictor_opts o;
    slaq_predictor_opts_init(&o);
    o.lambda = 1.5;
    assert_int_equal(slaq_eval_curve(SLAQ_PRED_AUTO, &o, c, 10, NULL, &one, 1,
                                     &acc), SLAQ_EINVAL);
    o.lambda = 0;
    assert_int_equal(slaq_eval_curve(SLAQ_PRED_SLAQ_FIT, &o, c, 10, NULL,
                                     &one, 1, &acc), SLAQ_EINVAL);
    assert_int_equal(acc.n, 0);
}

/* A declared convergence class picks slaq-fit's family, as in the paper:
 * even on a curve of the other family, and through the scheduler. */
static void test_declared_class_picks_the_family(void **state)
{
    (void)state;
    struct { slaq_convergence c; double (*f)(double); slaq_model want; }
    cases[] = {{SLAQ_CONV_SUBLINEAR, expo, SLAQ_MODEL_RATIONAL},
               {SLAQ_CONV_LINEAR, rational, SLAQ_MODEL_EXP},
               {SLAQ_CONV_UNKNOWN, expo, SLAQ_MODEL_EXP},
               {SLAQ_CONV_UNKNOWN, rational, SLAQ_MODEL_RATIONAL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.predictor = SLAQ_PRED_SLAQ_FIT;
        slaq_sched *s = slaq_sched_new(&c);
        slaq_job_opts o;
        slaq_job_opts_init(&o);
        o.convergence = cases[i].c;
        slaq_job *j = slaq_sched_add(s, &o, 0);
        for (uint64_t k = 0; k < 30; k++) {
            slaq_report r = {k, cases[i].f((double)k), 1, 1, (double)k};
            assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
        }
        assert_int_equal(slaq_sched_epoch(s, 30), SLAQ_OK);
        assert_int_equal(slaq_predictor_forecast(slaq_job_predictor(j))->model,
                         cases[i].want);
        /* ... and survives a change of predictor kind. */
        assert_int_equal(slaq_sched_set_predictor(s, SLAQ_PRED_SLAQ_FIT),
                         SLAQ_OK);
        slaq_report r = {30, cases[i].f(30), 1, 1, 30};
        assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
        assert_int_equal(slaq_sched_epoch(s, 31), SLAQ_OK);
        assert_int_equal(slaq_predictor_forecast(slaq_job_predictor(j))->model,
                         cases[i].want);
        slaq_sched_free(s);
    }
    /* Declared after the job was added (slaqd's hello): the same. */
    for (size_t i = 0; i < 2; i++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.predictor = SLAQ_PRED_SLAQ_FIT;
        slaq_sched *s = slaq_sched_new(&c);
        slaq_job *j = slaq_sched_add(s, NULL, 0);
        assert_int_equal(slaq_job_convergence(j), SLAQ_CONV_UNKNOWN);
        for (uint64_t k = 0; k < 30; k++) {
            slaq_report r = {k, cases[i].f((double)k), 1, 1, (double)k};
            assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
        }
        assert_int_equal(slaq_job_set_convergence(j, cases[i].c), SLAQ_OK);
        assert_int_equal(slaq_job_convergence(j), cases[i].c);
        assert_int_equal(slaq_sched_epoch(s, 30), SLAQ_OK);
        assert_int_equal(slaq_predictor_forecast(slaq_job_predictor(j))->model,
                         cases[i].want);
        assert_int_equal(slaq_job_set_convergence(j, (slaq_convergence)7),
                         SLAQ_EINVAL);
        slaq_sched_free(s);
    }
    assert_string_equal(slaq_convergence_name(SLAQ_CONV_SUBLINEAR),
                        "sublinear");
    assert_string_equal(slaq_convergence_name(SLAQ_CONV_LINEAR), "linear");
    assert_string_equal(slaq_convergence_name(SLAQ_CONV_UNKNOWN), "unknown");
    slaq_convergence cv;
    assert_int_equal(slaq_convergence_parse("superlinear", &cv), SLAQ_OK);
    assert_int_equal(cv, SLAQ_CONV_LINEAR);
    assert_int_equal(slaq_convergence_parse("nonconvex", &cv), SLAQ_OK);
    assert_int_equal(cv, SLAQ_CONV_NONCONVEX);
    assert_string_equal(slaq_convergence_name(cv), "nonconvex");
    assert_int_equal(slaq_convergence_parse("", &cv), SLAQ_OK);
    assert_int_equal(cv, SLAQ_CONV_UNKNOWN);
    assert_int_equal(slaq_convergence_parse("fast", &cv), SLAQ_EINVAL);
}

/* A job declared non-convex keeps its class, and is predicted exactly as
 * an undeclared one: both families tried, the same forecast. */
static void test_nonconvex_is_predicted_as_undeclared(void **state)
{
    (void)state;
    for (int kind = SLAQ_PRED_SLAQ_FIT; kind <= SLAQ_PRED_AUTO; kind++) {
        slaq_predictor_opts o[2];
        slaq_predictor *p[2];
        slaq_history *h = slaq_history_new(0);
        for (int i = 0; i < 2; i++) {
            slaq_predictor_opts_init(&o[i]);
            o[i].convergence = i ? SLAQ_CONV_NONCONVEX : SLAQ_CONV_UNKNOWN;
            p[i] = slaq_predictor_new((slaq_predictor_kind)kind, &o[i]);
            assert_non_null(p[i]);
        }
        for (int k = 0; k < 40; k++) {
            /* a noisy, non-monotone curve, as SGD on a network gives */
            double noise = 0.03 * sin(1.7 * k);
            slaq_report r = {(uint64_t)k, expo(k) + noise, 1, 1, k};
            assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
            if (k >= 5)
                for (int i = 0; i < 2; i++)
                    assert_int_equal(slaq_predictor_fit(p[i], h), SLAQ_OK);
        }
        const slaq_forecast *a = slaq_predictor_forecast(p[0]);
        const slaq_forecast *b = slaq_predictor_forecast(p[1]);
        assert_int_equal(a->model, b->model);
        for (int k = 40; k <= 1000; k *= 5)
            assert_true(slaq_predictor_loss(p[0], k) ==
                        slaq_predictor_loss(p[1], k));
        for (int i = 0; i < 2; i++)
            slaq_predictor_free(p[i]);
        slaq_history_free(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slaq_fit_recovers_rational_curve),
        cmocka_unit_test(test_slaq_fit_recovers_exponential_curve),
        cmocka_unit_test(test_auto_recovers_both_curves),
        cmocka_unit_test(test_nonconvex_is_predicted_as_undeclared),
        cmocka_unit_test(test_strawman_repeats_last_change),
        cmocka_unit_test(test_oracle_knows_the_truth),
        cmocka_unit_test(test_new_job_is_assumed_at_its_steepest),
        cmocka_unit_test(test_forecast_never_falls_faster_than_recent_steps),
        cmocka_unit_test(test_noisy_and_rising_curves_stay_finite),
        cmocka_unit_test(test_eval_matches_definition),
        cmocka_unit_test(test_refit_after_clear_and_refill),
        cmocka_unit_test(test_eval_refuses_bad_lambda),
        cmocka_unit_test(test_declared_class_picks_the_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
