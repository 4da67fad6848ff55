/*
 * test_history.c — the job history: window, totals, normalisation, and
 * refusal of bad reports.
 */
#include "slaq/slaq.h"
#include "testutil.h"

static slaq_report rep(uint64_t k, double loss)
{
    slaq_report r = {k, loss, 1.0, 100.0, (double)k};
    return r;
}

static void test_window_keeps_newest_and_totals_keep_all(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(4);
    for (uint64_t k = 0; k < 10; k++) {
        slaq_report r = rep(k, 10.0 - (double)k);
        assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
    }
    assert_int_equal(slaq_history_len(h), 4);
    assert_int_equal(slaq_history_total(h), 10);
    assert_int_equal(slaq_history_at(h, 0)->iter, 6);
    assert_int_equal(slaq_history_last(h)->iter, 9);
    assert_near(slaq_history_first_loss(h), 10.0, 0);
    assert_near(slaq_history_min_loss(h), 1.0, 0);
    /* iteration 0 carries no CPU time: 9 iterations of 1 s each */
    assert_near(slaq_history_cpu_total(h), 9.0, 1e-12);
    assert_near(slaq_history_samples_total(h), 900.0, 1e-9);
    slaq_history_free(h);
}

static void test_max_delta_is_largest_drop_so_far(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(0);
    /* drops: 1, then 3 (the first is not the largest), then a rise */
    double loss[] = {10, 9, 6, 7, 6.5};
    for (uint64_t k = 0; k < 5; k++) {
        slaq_report r = rep(k, loss[k]);
        slaq_history_add(h, &r);
    }
    assert_near(slaq_history_max_delta(h), 3.0, 1e-12);
    assert_true(isnan(slaq_history_norm_delta(h, 0)));
    assert_near(slaq_history_norm_delta(h, 1), 1.0 / 3, 1e-12);
    assert_near(slaq_history_norm_delta(h, 2), 1.0, 1e-12);
    assert_near(slaq_history_norm_delta(h, 3), -1.0 / 3, 1e-12);
    assert_near(slaq_history_norm_delta(h, 4), 0.5 / 3, 1e-12);
    slaq_history_free(h);
}

static void test_rising_loss_never_sets_the_normaliser(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(0);
    double loss[] = {1, 2, 3};
    for (uint64_t k = 0; k < 3; k++) {
        slaq_report r = rep(k, loss[k]);
        slaq_history_add(h, &r);
    }
    assert_near(slaq_history_max_delta(h), 0.0, 0);
    assert_true(isnan(slaq_history_norm_delta(h, 2)));
    slaq_history_free(h);
}

static void test_gaps_are_per_iteration(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(0);
    slaq_report a = rep(0, 10), b = rep(5, 5);
    slaq_history_add(h, &a);
    slaq_history_add(h, &b);
    assert_near(slaq_history_max_delta(h), 1.0, 1e-12);
    slaq_history_free(h);
}

static void test_bad_reports_are_refused_and_change_nothing(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(0);
    slaq_report ok = rep(3, 1.0);
    assert_int_equal(slaq_history_add(h, &ok), SLAQ_OK);
    slaq_report same = rep(3, 0.5), older = rep(2, 0.5);
    assert_int_equal(slaq_history_add(h, &same), SLAQ_EORDER);
    assert_int_equal(slaq_history_add(h, &older), SLAQ_EORDER);
    slaq_report nan = rep(4, NAN), inf = rep(4, INFINITY);
    assert_int_equal(slaq_history_add(h, &nan), SLAQ_EINVAL);
    assert_int_equal(slaq_history_add(h, &inf), SLAQ_EINVAL);
    /* Losses whose differences could overflow are refused: the bound. */
    slaq_report huge = rep(4, 1e308), nhuge = rep(4, -1e308);
    slaq_report over = rep(4, SLAQ_LOSS_MAX * 1.0000001);
    assert_int_equal(slaq_history_add(h, &huge), SLAQ_EINVAL);
    assert_int_equal(slaq_history_add(h, &nhuge), SLAQ_EINVAL);
    assert_int_equal(slaq_history_add(h, &over), SLAQ_EINVAL);
    slaq_report negcpu = rep(4, 0.5);
    negcpu.cpu_s = -1;
    assert_int_equal(slaq_history_add(h, &negcpu), SLAQ_EINVAL);
    assert_int_equal(slaq_history_total(h), 1);
    assert_near(slaq_history_last(h)->loss, 1.0, 0);
    assert_null(slaq_history_new(1));
    slaq_history_free(h);
}

static void test_losses_up_to_the_bound_are_kept(void **state)
{
    (void)state;
    slaq_history *h = slaq_history_new(0);
    slaq_report a = rep(0, SLAQ_LOSS_MAX), b = rep(1, -SLAQ_LOSS_MAX);
    assert_int_equal(slaq_history_add(h, &a), SLAQ_OK);
    assert_int_equal(slaq_history_add(h, &b), SLAQ_OK);
    assert_true(isfinite(slaq_history_max_delta(h)));
    slaq_history_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_keeps_newest_and_totals_keep_all),
        cmocka_unit_test(test_max_delta_is_largest_drop_so_far),
        cmocka_unit_test(test_rising_loss_never_sets_the_normaliser),
        cmocka_unit_test(test_gaps_are_per_iteration),
        cmocka_unit_test(test_bad_reports_are_refused_and_change_nothing),
        cmocka_unit_test(test_losses_up_to_the_bound_are_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
