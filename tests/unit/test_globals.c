/*
 * test_globals.c — libslaq leaves process-wide state alone.
 *
 * GSL's error handler is one per process. This program is linked with
 * gsl_set_error_handler and gsl_set_error_handler_off wrapped
 * (tests/module.mk), so any call libslaq makes to them is counted: fits
 * with every predictor, on clean and on degenerate data, must make none.
 */
#include <gsl/gsl_errno.h>

#include "slaq/slaq.h"
#include "testutil.h"

gsl_error_handler_t *__real_gsl_set_error_handler(gsl_error_handler_t *h);
gsl_error_handler_t *__real_gsl_set_error_handler_off(void);
gsl_error_handler_t *__wrap_gsl_set_error_handler(gsl_error_handler_t *h);
gsl_error_handler_t *__wrap_gsl_set_error_handler_off(void);

static long handler_calls;

gsl_error_handler_t *__wrap_gsl_set_error_handler(gsl_error_handler_t *h)
{
    handler_calls++;
    return __real_gsl_set_error_handler(h);
}

gsl_error_handler_t *__wrap_gsl_set_error_handler_off(void)
{
    handler_calls++;
    return __real_gsl_set_error_handler_off();
}

static void test_the_counter_counts(void **state)
{
    (void)state;
    long before = handler_calls;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_set_error_handler(old);
    assert_int_equal(handler_calls - before, 2);
}

static void fit_all(const double *loss, int n)
{
    for (int kind = SLAQ_PRED_STRAWMAN; kind <= SLAQ_PRED_AUTO; kind++) {
        slaq_history *h = slaq_history_new(0);
        slaq_predictor *p = slaq_predictor_new((slaq_predictor_kind)kind,
                                               NULL);
        for (int k = 0; k < n; k++) {
            slaq_report r = {(uint64_t)k, loss[k], 1, 1, k};
            assert_int_equal(slaq_history_add(h, &r), SLAQ_OK);
            slaq_predictor_fit(p, h);
        }
        slaq_predictor_free(p);
        slaq_history_free(h);
    }
}

static void test_fits_never_touch_the_gsl_error_handler(void **state)
{
    (void)state;
    enum { N = 60 };
    double smooth[N], flat[N], noisy[N], rising[N];
    for (int k = 0; k < N; k++) {
        smooth[k] = 1.0 / (1 + 0.1 * k) + 0.2;
        flat[k] = 3;
        noisy[k] = 1.0 / (1 + 0.1 * k) + (k % 3 ? 0.3 : -0.3);
        rising[k] = 0.01 * k * k;
    }
    long before = handler_calls;
    fit_all(smooth, N);
    fit_all(flat, N);
    fit_all(noisy, N);
    fit_all(rising, N);
    assert_int_equal(handler_calls - before, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_counter_counts),
        cmocka_unit_test(test_fits_never_touch_the_gsl_error_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
