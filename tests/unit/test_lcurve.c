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
    slaq_lcurve_opts o = {.families = 1u << 0, .inflate = 1};
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
