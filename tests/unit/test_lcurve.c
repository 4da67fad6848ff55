/*
 * test_lcurve.c — the learning-curve model: probabilities that follow the
 * data, ordered in the target, and a known posterior on synthetic curves.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "slaq/sweep.h"

/* A saturating curve 0.85 - 0.5 x^-0.7 with a small deterministic wiggle. */
static void curve_pow(double *y, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = 0.85 - 0.5 * pow(i + 1, -0.7) + 0.003 * sin(7.0 * (i + 1));
}

static void test_saturating_curve_predicts_its_asymptote(void **st)
{
    (void)st;
    double y[120];
    curve_pow(y, 120);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    assert_non_null(lc);
    assert_int_equal(slaq_lcurve_fit(lc, y, 30), SLAQ_OK);
    double mu, sd;
    assert_int_equal(slaq_lcurve_predict(lc, 120, &mu, &sd), SLAQ_OK);
    double truth = 0.85 - 0.5 * pow(120, -0.7);
    assert_true(fabs(mu - truth) < 0.02);
    assert_true(sd > 0 && sd < 0.05);
    assert_true(slaq_lcurve_prob(lc, 120, truth - 0.05) > 0.9);
    assert_true(slaq_lcurve_prob(lc, 120, truth + 0.05) < 0.1);
    slaq_lcurve_free(lc);
}

static void test_flat_curve_gives_no_chance_of_a_high_target(void **st)
{
    (void)st;
    double y[20];
    for (int i = 0; i < 20; i++)
        y[i] = 0.10 + 0.002 * ((i * 7) % 5 - 2);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    assert_int_equal(slaq_lcurve_fit(lc, y, 20), SLAQ_OK);
    assert_true(slaq_lcurve_prob(lc, 120, 0.5) < 0.01);
    assert_true(slaq_lcurve_prob(lc, 120, 0.05) > 0.95);
    slaq_lcurve_free(lc);
}

static void test_probability_falls_as_the_target_rises(void **st)
{
    (void)st;
    double y[120];
    curve_pow(y, 120);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    assert_int_equal(slaq_lcurve_fit(lc, y, 12), SLAQ_OK);
    double prev = 1.0;
    for (double t = 0.5; t <= 1.0; t += 0.02) {
        double p = slaq_lcurve_prob(lc, 100, t);
        assert_true(p >= 0 && p <= 1);
        assert_true(p <= prev + 1e-12);
        prev = p;
    }
    slaq_lcurve_free(lc);
}

/* A rising curve: the further epoch has the larger chance of a target
 * above the current value. */
static void test_probability_grows_with_the_horizon_on_a_rising_curve(void **st)
{
    (void)st;
    double y[120];
    curve_pow(y, 120);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    assert_int_equal(slaq_lcurve_fit(lc, y, 15), SLAQ_OK);
    assert_true(slaq_lcurve_prob(lc, 100, 0.8) > slaq_lcurve_prob(lc, 20, 0.8));
    slaq_lcurve_free(lc);
}

/*
 * Known posterior: a constant curve with noise of standard deviation s
 * (a fixed symmetric pattern), fitted by pow3 alone. The predictive
 * distribution of a new observation is then close to N(mean, s^2), so
 * P(y >= mean + s) is near 1 - Phi(1) = 0.159 and P(y >= mean) near 0.5.
 */
static void test_constant_curve_has_the_noise_as_its_posterior(void **st)
{
    (void)st;
    enum { N = 60 };
    double y[N], s = 0.02, pat[4] = {1, -1, -1, 1}, mean = 0.6;
    for (int i = 0; i < N; i++)
        y[i] = mean + s * pat[i % 4];
    /* The family's own posterior: without the stopped hypothesis (which
     * would put weight on the last value, mean + s). */
    slaq_lcurve_opts o = {.families = 1u << 0, .inflate = 1, .no_stall = 1};
    slaq_lcurve *lc = slaq_lcurve_new(&o);
    assert_string_equal(slaq_lcurve_family_name(0), "pow3");
    assert_int_equal(slaq_lcurve_fit(lc, y, N), SLAQ_OK);
    double p1 = slaq_lcurve_prob(lc, N + 1, mean + s);
    double p0 = slaq_lcurve_prob(lc, N + 1, mean);
    assert_true(p1 > 0.10 && p1 < 0.22);
    assert_true(fabs(p0 - 0.5) < 0.1);
    assert_true(slaq_lcurve_weight(lc, 0) > 0.999);
    assert_true(slaq_lcurve_weight(lc, 1) == 0);
    slaq_lcurve_free(lc);
}

static void test_inflate_widens_extrapolation(void **st)
{
    (void)st;
    double y[120];
    curve_pow(y, 120);
    slaq_lcurve_opts narrow = {.inflate = 1}, wide = {.inflate = 16};
    slaq_lcurve *a = slaq_lcurve_new(&narrow), *b = slaq_lcurve_new(&wide);
    assert_int_equal(slaq_lcurve_fit(a, y, 10), SLAQ_OK);
    assert_int_equal(slaq_lcurve_fit(b, y, 10), SLAQ_OK);
    double sa, sb;
    slaq_lcurve_predict(a, 120, NULL, &sa);
    slaq_lcurve_predict(b, 120, NULL, &sb);
    assert_true(sb > sa);
    slaq_lcurve_free(a);
    slaq_lcurve_free(b);
}

static void test_weights_sum_to_one_and_short_curves_are_refused(void **st)
{
    (void)st;
    double y[40];
    curve_pow(y, 40);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    assert_int_equal(slaq_lcurve_fit(lc, y, 2), SLAQ_ENODATA);
    assert_true(isnan(slaq_lcurve_prob(lc, 10, 0.5)));
    assert_int_equal(slaq_lcurve_predict(lc, 10, NULL, NULL), SLAQ_ENODATA);
    double gaps[5] = {0.3, NAN, NAN, NAN, 0.4};
    assert_int_equal(slaq_lcurve_fit(lc, gaps, 5), SLAQ_ENODATA);
    assert_int_equal(slaq_lcurve_fit(lc, NULL, 5), SLAQ_EINVAL);
    assert_int_equal(slaq_lcurve_fit(lc, y, 40), SLAQ_OK);
    double sum = 0;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++)
        sum += slaq_lcurve_weight(lc, f);
    assert_true(fabs(sum - 1) < 1e-9);
    assert_string_equal(slaq_lcurve_family_name(SLAQ_LCURVE_FAMILIES), "?");
    slaq_lcurve_opts bad = {.inflate = -1};
    assert_null(slaq_lcurve_new(&bad));
    slaq_lcurve_free(lc);
}

/*
 * make demo-sweep's configuration 1 (logreg, lr 3.3): validation accuracy
 * over its first 10 epochs, still climbing at 0.79; it reaches 0.83 at
 * epoch 34 of 60. Under exp(-BIC/2) weights the saturating families that
 * fit these 10 points best (mmf, weibull, janoschek, exp4: all flat at
 * ~0.79) took all the weight, the between-family spread vanished and
 * P(y(60) >= 0.83) was 0.005, so POP killed it. The tempered weights keep
 * the families that still climb in the mixture.
 */
static const double demo_c1[10] = {0.6425, 0.605833, 0.665833, 0.63875,
                                   0.747083, 0.756667, 0.77625, 0.781667,
                                   0.787917, 0.789583};

static void best_so_far(const double *y, double *run, int n)
{
    for (int i = 0; i < n; i++)
        run[i] = i ? fmax(run[i - 1], y[i]) : y[i];
}

static void test_a_climbing_curve_keeps_a_fair_chance(void **st)
{
    (void)st;
    double run[10];
    best_so_far(demo_c1, run, 10);
    slaq_lcurve_opts o = {0};
    slaq_lcurve_bound_metric(&o, "val_accuracy", 1);
    assert_int_equal(o.has_upper, 1);
    slaq_lcurve *lc = slaq_lcurve_new(&o);
    assert_non_null(lc);
    assert_int_equal(slaq_lcurve_fit(lc, run, 10), SLAQ_OK);
    double p = slaq_lcurve_prob(lc, 60, 0.83);
    assert_true(p > 0.15 && p < 0.85);
    /* More than one family keeps a say. */
    int say = 0;
    for (int f = 0; f < SLAQ_LCURVE_FAMILIES; f++)
        say += slaq_lcurve_weight(lc, f) > 0.05;
    assert_true(say >= 4);
    slaq_lcurve_free(lc);

    /* Plain BIC (temper 1) is the collapse the default avoids. */
    slaq_lcurve_opts bic = {.bic_weights = 1};
    lc = slaq_lcurve_new(&bic);
    assert_int_equal(slaq_lcurve_fit(lc, run, 10), SLAQ_OK);
    assert_true(slaq_lcurve_prob(lc, 60, 0.83) < 0.05);
    slaq_lcurve_free(lc);
}

/* The bound: a family whose prediction passes 1 is left out, so a curve
 * that would need an accuracy above 1 to get there is not counted; and
 * the temperature's range is checked. */
static void test_the_bound_and_the_temperature(void **st)
{
    (void)st;
    /* A steep linear climb: unbounded families extrapolate it past 1. */
    double y[10];
    for (int i = 0; i < 10; i++)
        y[i] = 0.3 + 0.05 * i;
    slaq_lcurve_opts free_o = {.temper = INFINITY}, bound = free_o;
    slaq_lcurve_bound_metric(&bound, "accuracy", 1);
    slaq_lcurve *a = slaq_lcurve_new(&free_o), *b = slaq_lcurve_new(&bound);
    assert_int_equal(slaq_lcurve_fit(a, y, 10), SLAQ_OK);
    assert_int_equal(slaq_lcurve_fit(b, y, 10), SLAQ_OK);
    double pa = slaq_lcurve_prob(a, 100, 0.99), pb = slaq_lcurve_prob(b, 100, 0.99);
    assert_true(pb < pa);
    assert_true(pb >= 0 && pb <= 1);
    slaq_lcurve_free(a);
    slaq_lcurve_free(b);
    slaq_lcurve_opts loss = {0};
    slaq_lcurve_bound_metric(&loss, "loss", 0);
    assert_int_equal(loss.has_upper, 0);
    slaq_lcurve_bound_metric(&loss, "accuracy", 0);
    assert_int_equal(loss.has_upper, 0);
    slaq_lcurve_opts bad = {.temper = -1};
    assert_null(slaq_lcurve_new(&bad));
    slaq_lcurve_opts nanup = {.has_upper = 1, .upper = NAN};
    assert_null(slaq_lcurve_new(&nanup));
}

/*
 * Configuration 70 of the recorded mlpc sweep (data/sweeps/mlpc.jsonl, an
 * even id): validation accuracy over its first 60 epochs. L-BFGS has
 * converged: the best so far, 0.8417, was reached at epoch 43 and is never
 * passed in the 120 epochs. Every family extrapolates a slow rise from the
 * climb, and without the stopped hypothesis the model gave
 * P(best by epoch 120 >= 0.8426) = 0.93.
 */
static const double mlpc70[60] = {
    0.3861, 0.5402, 0.6053, 0.6497, 0.6774, 0.7165, 0.7288, 0.7406, 0.7689,
    0.7730, 0.7813, 0.7835, 0.7874, 0.7876, 0.7955, 0.7993, 0.8020, 0.8065,
    0.8120, 0.8129, 0.8162, 0.8177, 0.8218, 0.8228, 0.8259, 0.8294, 0.8303,
    0.8309, 0.8318, 0.8328, 0.8341, 0.8355, 0.8362, 0.8373, 0.8357, 0.8380,
    0.8387, 0.8384, 0.8381, 0.8377, 0.8408, 0.8415, 0.8417, 0.8359, 0.8380,
    0.8380, 0.8380, 0.8386, 0.8360, 0.8388, 0.8400, 0.8411, 0.8406, 0.8359,
    0.8383, 0.8378, 0.8380, 0.8374, 0.8353, 0.8367};

static void test_a_curve_that_stopped_is_not_expected_to_rise(void **st)
{
    (void)st;
    double run[60];
    best_so_far(mlpc70, run, 60);
    slaq_lcurve_opts o = {0}, old = {.no_stall = 1};
    slaq_lcurve_bound_metric(&o, "accuracy", 1);
    slaq_lcurve_bound_metric(&old, "accuracy", 1);
    slaq_lcurve *lc = slaq_lcurve_new(&o), *lo = slaq_lcurve_new(&old);
    assert_int_equal(slaq_lcurve_fit(lc, run, 60), SLAQ_OK);
    assert_int_equal(slaq_lcurve_fit(lo, run, 60), SLAQ_OK);
    /* 17 epochs without a rise: the curve has stopped. */
    assert_true(slaq_lcurve_prob(lc, 120, 0.8426) < 0.2);
    assert_true(slaq_lcurve_prob(lo, 120, 0.8426) > 0.5);
    /* What it has reached stays reached, and the predicted mean stays near
     * the plateau rather than at the families' extrapolation. */
    assert_true(slaq_lcurve_prob(lc, 120, 0.84) > 0.95);
    double mu, mo;
    assert_int_equal(slaq_lcurve_predict(lc, 120, &mu, NULL), SLAQ_OK);
    assert_int_equal(slaq_lcurve_predict(lo, 120, &mo, NULL), SLAQ_OK);
    assert_true(fabs(mu - 0.8417) < fabs(mo - 0.8417));
    assert_true(fabs(mu - 0.8417) < 0.003);
    /* Inside the observed epochs the families alone answer. */
    assert_true(fabs(slaq_lcurve_prob(lc, 50, 0.84) -
                     slaq_lcurve_prob(lo, 50, 0.84)) < 1e-12);

    /* The same curve 17 epochs earlier, still climbing (last rise at
     * epoch 43): the stall evidence is absent, the families decide. */
    assert_int_equal(slaq_lcurve_fit(lc, run, 43), SLAQ_OK);
    assert_int_equal(slaq_lcurve_fit(lo, run, 43), SLAQ_OK);
    double p = slaq_lcurve_prob(lc, 120, 0.8426);
    double q = slaq_lcurve_prob(lo, 120, 0.8426);
    assert_true(p > 0.8 * q);
    slaq_lcurve_free(lc);
    slaq_lcurve_free(lo);
}

/* A curve that keeps creeping up by less than the tolerance an epoch, as
 * a slow learner does: the families expect that slope themselves, so the
 * stall it shows is no evidence against them. */
static void test_a_slow_steady_curve_is_not_taken_for_stopped(void **st)
{
    (void)st;
    double y[80];
    for (int i = 0; i < 80; i++)
        y[i] = 0.5 + 0.05 * log(i + 1.0);
    slaq_lcurve *lc = slaq_lcurve_new(NULL);
    slaq_lcurve_opts old = {.no_stall = 1};
    slaq_lcurve *lo = slaq_lcurve_new(&old);
    assert_int_equal(slaq_lcurve_fit(lc, y, 80), SLAQ_OK);
    assert_int_equal(slaq_lcurve_fit(lo, y, 80), SLAQ_OK);
    double target = 0.5 + 0.05 * log(120.0) - 0.002;
    double p = slaq_lcurve_prob(lc, 120, target);
    double q = slaq_lcurve_prob(lo, 120, target);
    assert_true(q > 0.5);
    assert_true(p > 0.85 * q);
    slaq_lcurve_free(lc);
    slaq_lcurve_free(lo);
}

/* A short curve that climbs in jumps (slaqd's e2e sweep: logreg, 6
 * epochs, best so far 0.62 0.70 0.70 0.735 0.735 0.735, target 0.75 by
 * epoch 12): two flat epochs between jumps of 0.035 are no evidence that
 * it stopped. With the jump size taken as the median change (0 here: most
 * epochs of a best-so-far curve are flat) the stall looked overwhelming
 * and P was 1e-12, so POP killed every configuration. */
static void test_a_jumpy_short_curve_is_not_taken_for_stopped(void **st)
{
    (void)st;
    const double raw[6] = {0.62, 0.70, 0.68, 0.735, 0.6767, 0.7267};
    double run[6];
    best_so_far(raw, run, 6);
    slaq_lcurve_opts o = {0};
    slaq_lcurve_bound_metric(&o, "val_accuracy", 1);
    slaq_lcurve *lc = slaq_lcurve_new(&o);
    assert_int_equal(slaq_lcurve_fit(lc, run, 6), SLAQ_OK);
    assert_true(slaq_lcurve_prob(lc, 12, 0.75) > 0.1);
    slaq_lcurve_free(lc);
}

static void test_the_stop_options_are_checked(void **st)
{
    (void)st;
    slaq_lcurve_opts one = {.stop_prior = 1}, neg = {.stop_prior = -0.1};
    slaq_lcurve_opts tol = {.stall_tol = -1}, nan_tol = {.stall_tol = NAN};
    assert_null(slaq_lcurve_new(&one));
    assert_null(slaq_lcurve_new(&neg));
    assert_null(slaq_lcurve_new(&tol));
    assert_null(slaq_lcurve_new(&nan_tol));
    slaq_lcurve_opts ok = {.stop_prior = 0.5, .stall_tol = 0.01};
    slaq_lcurve *lc = slaq_lcurve_new(&ok);
    assert_non_null(lc);
    slaq_lcurve_free(lc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saturating_curve_predicts_its_asymptote),
        cmocka_unit_test(test_flat_curve_gives_no_chance_of_a_high_target),
        cmocka_unit_test(test_probability_falls_as_the_target_rises),
        cmocka_unit_test(test_probability_grows_with_the_horizon_on_a_rising_curve),
        cmocka_unit_test(test_constant_curve_has_the_noise_as_its_posterior),
        cmocka_unit_test(test_inflate_widens_extrapolation),
        cmocka_unit_test(test_weights_sum_to_one_and_short_curves_are_refused),
        cmocka_unit_test(test_a_climbing_curve_keeps_a_fair_chance),
        cmocka_unit_test(test_the_bound_and_the_temperature),
        cmocka_unit_test(test_a_curve_that_stopped_is_not_expected_to_rise),
        cmocka_unit_test(test_a_slow_steady_curve_is_not_taken_for_stopped),
        cmocka_unit_test(test_a_jumpy_short_curve_is_not_taken_for_stopped),
        cmocka_unit_test(test_the_stop_options_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
