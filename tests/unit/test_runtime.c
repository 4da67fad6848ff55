/*
 * test_runtime.c — the runtime predictor (c·S / min(N, max parallelism))
 * and the token bucket.
 */
#include "slaq/slaq.h"
#include "testutil.h"

static void test_default_before_any_report(void **state)
{
    (void)state;
    slaq_runtime rt;
    slaq_runtime_init(&rt, 0);
    assert_near(slaq_runtime_iter_cpu(&rt), SLAQ_DEFAULT_ITER_CPU_S,
                        0);
    slaq_runtime_init(&rt, 3.0);
    assert_near(slaq_runtime_iter_cpu(&rt), 3.0, 0);
    assert_near(slaq_runtime_iter_time(&rt, 4, 0), 0.75, 1e-12);
    assert_true(isinf(slaq_runtime_iter_time(&rt, 0, 0)));
}

static void test_learns_cost_per_sample(void **state)
{
    (void)state;
    slaq_runtime rt;
    slaq_runtime_init(&rt, 0);
    /* c = 0.01 s/sample, S = 200: 2 CPU-seconds per iteration */
    for (int i = 0; i < 20; i++)
        slaq_runtime_observe(&rt, 2.0, 200, 1);
    assert_near(slaq_runtime_iter_cpu(&rt), 2.0, 1e-9);
    assert_near(slaq_runtime_iter_time(&rt, 8, 0), 0.25, 1e-9);
    /* at most 2 cores usable: 8 cores do no better than 2 */
    assert_near(slaq_runtime_iter_time(&rt, 8, 2), 1.0, 1e-9);
    /* a report covering 4 iterations counts per iteration */
    slaq_runtime_init(&rt, 0);
    slaq_runtime_observe(&rt, 8.0, 800, 4);
    assert_near(slaq_runtime_iter_cpu(&rt), 2.0, 1e-9);
}

/* The prediction is the weighted mean of c·S, not the product of the
 * means of c and of S: a job that always takes 1 CPU-second per iteration
 * while its reported samples alternate 1 and 100 costs 1 CPU-second. */
static void test_cost_is_the_mean_of_the_product(void **state)
{
    (void)state;
    slaq_runtime rt;
    slaq_runtime_init(&rt, 0);
    for (int i = 0; i < 40; i++)
        slaq_runtime_observe(&rt, 1.0, i % 2 ? 100 : 1, 1);
    assert_near(slaq_runtime_iter_cpu(&rt), 1.0, 1e-9);
}

static void test_follows_a_cost_change(void **state)
{
    (void)state;
    slaq_runtime rt;
    slaq_runtime_init(&rt, 0);
    for (int i = 0; i < 10; i++)
        slaq_runtime_observe(&rt, 1.0, 100, 1);
    for (int i = 0; i < 30; i++)
        slaq_runtime_observe(&rt, 4.0, 100, 1);
    assert_near(slaq_runtime_iter_cpu(&rt), 4.0, 1e-3);
}

static void test_tokens_refill_consume_throttle(void **state)
{
    (void)state;
    slaq_tokens b = {0, 0};
    assert_true(slaq_tokens_throttled(&b));
    slaq_tokens_refill(&b, 4, 0.5); /* 4 cores for 0.5 s */
    assert_near(b.balance, 2.0, 1e-12);
    assert_near(b.granted, 2.0, 1e-12);
    slaq_tokens_consume(&b, 1.5);
    assert_false(slaq_tokens_throttled(&b));
    slaq_tokens_consume(&b, 0.5);
    assert_true(slaq_tokens_throttled(&b));
}

static void test_unused_tokens_expire_debt_carries(void **state)
{
    (void)state;
    slaq_tokens b = {0, 0};
    slaq_tokens_refill(&b, 2, 1);
    slaq_tokens_consume(&b, 0.5);       /* 1.5 unused */
    slaq_tokens_refill(&b, 2, 1);
    assert_near(b.balance, 2.0, 1e-12); /* not 3.5 */
    slaq_tokens_consume(&b, 3.0);       /* 1 over */
    slaq_tokens_refill(&b, 2, 1);
    assert_near(b.balance, 1.0, 1e-12); /* paid back */
    slaq_tokens_refill(&b, 0, 1);
    assert_true(slaq_tokens_throttled(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_before_any_report),
        cmocka_unit_test(test_learns_cost_per_sample),
        cmocka_unit_test(test_cost_is_the_mean_of_the_product),
        cmocka_unit_test(test_follows_a_cost_change),
        cmocka_unit_test(test_tokens_refill_consume_throttle),
        cmocka_unit_test(test_unused_tokens_expire_debt_carries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
