/*
 * test_stats.c — the tools' shared order statistics (src/io/stats.c):
 * nearest-rank quantiles and medians as bench and sim report them.
 */
#include <stdlib.h>

#include "io/stats.h"
#include "testutil.h"

static void test_nearest_rank_quantile(void **state)
{
    (void)state;
    double v[10] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    assert_near(stats_quantile(v, 10, 0.99), 10, 0); /* ceil(9.9) = 10th */
    assert_near(stats_quantile(v, 10, 0.5), 5, 0);   /* 5th smallest */
    assert_near(stats_quantile(v, 10, 0.01), 1, 0);
    for (int i = 0; i < 10; i++) /* sorted in place */
        assert_near(v[i], i + 1, 0);
    double one = 3;
    assert_near(stats_quantile(&one, 1, 0.99), 3, 0);
    assert_true(isnan(stats_quantile(NULL, 0, 0.5)));
}

static void test_median(void **state)
{
    (void)state;
    double odd[3] = {1, 2, 7}, even[4] = {1, 2, 4, 7};
    assert_near(stats_median_sorted(odd, 3), 2, 0);
    assert_near(stats_median_sorted(even, 4), 3, 0);
    assert_true(stats_cmp_double(&odd[0], &odd[1]) < 0);
    assert_true(stats_cmp_double(&odd[1], &odd[1]) == 0);
    double t0 = stats_now_ms(), t1 = stats_now_ms();
    assert_true(t1 >= t0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nearest_rank_quantile),
        cmocka_unit_test(test_median),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
