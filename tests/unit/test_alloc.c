/*
 * test_alloc.c — a warmed-up epoch allocates nothing.
 *
 * This program is linked with malloc, calloc and realloc wrapped
 * (tests/module.mk), so every allocation libslaq makes is counted. After
 * the jobs' history windows have filled, reports and epochs must not
 * allocate, whatever the policy and predictor.
 */
#include <stdlib.h>

#include "slaq/slaq.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static long allocations;

void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    allocations++;
    return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}

static void run(slaq_policy_kind pol, slaq_predictor_kind pred)
{
    enum { JOBS = 200, WARM = 80, MEASURED = 10 };
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 800;
    c.policy = pol;
    c.predictor = pred;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job *jobs[JOBS];
    for (int i = 0; i < JOBS; i++)
        jobs[i] = slaq_sched_add(s, NULL, 0);
    long before = 0;
    for (uint64_t k = 0; k < WARM + MEASURED; k++) {
        if (k == WARM)
            before = allocations;
        for (int i = 0; i < JOBS; i++) {
            double loss = 1.0 / (1 + 0.1 * (double)(k * (1 + i % 5))) +
                          0.01 * (i % 7);
            slaq_report r = {k, loss, 1.0, 100, (double)k};
            assert_int_equal(slaq_job_report(jobs[i], &r), SLAQ_OK);
        }
        assert_int_equal(slaq_sched_epoch(s, (double)k + 0.5), SLAQ_OK);
    }
    long during = allocations - before;
    if (during != 0) {
        print_error("%s/%s: %ld allocations in %d warmed-up epochs\n",
                    slaq_policy_name(pol), slaq_predictor_name(pred), during,
                    MEASURED);
        fail();
    }
    slaq_sched_free(s);
}

static void test_warm_epochs_do_not_allocate(void **state)
{
    (void)state;
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_AUTO);
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_STRAWMAN);
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_SLAQ_FIT);
    run(SLAQ_POLICY_FAIR, SLAQ_PRED_AUTO);
    run(SLAQ_POLICY_MAXMIN, SLAQ_PRED_AUTO);
}

static void test_the_counter_counts(void **state)
{
    (void)state;
    long before = allocations;
    slaq_history *h = slaq_history_new(8);
    assert_true(allocations - before >= 2);
    slaq_history_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_counter_counts),
        cmocka_unit_test(test_warm_epochs_do_not_allocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
