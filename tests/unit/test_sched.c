/*
 * test_sched.c — the scheduler: the epoch divides exactly the ML capacity,
 * re-divides when jobs come and go, refills tokens, favours a job with
 * more to gain, follows a policy change, and is deterministic.
 */
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "testutil.h"

static slaq_sched *new_sched(slaq_policy_kind pol, double cores)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.policy = pol;
    c.cores = cores;
    c.epoch_s = 2;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    return s;
}

static void report(slaq_job *j, uint64_t k, double loss, double t)
{
    slaq_report r = {k, loss, 0.5, 100, t};
    assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
}

static double total_alloc(const slaq_sched *s)
{
    double sum = 0;
    for (size_t i = 0; i < slaq_sched_count(s); i++)
        sum += slaq_job_alloc(slaq_sched_job(s, i));
    return sum;
}

static void test_fair_redivides_on_arrival_and_departure(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_FAIR, 12);
    slaq_job *a = slaq_sched_add(s, NULL, 0);
    slaq_sched_epoch(s, 0);
    assert_near(slaq_job_alloc(a), 12, 1e-12);
    slaq_job *b = slaq_sched_add(s, NULL, 1);
    slaq_job *c = slaq_sched_add(s, NULL, 1);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(a), 4, 1e-12);
    assert_near(slaq_job_alloc(c), 4, 1e-12);
    slaq_sched_remove(s, b);
    assert_int_equal(slaq_sched_count(s), 2);
    slaq_sched_epoch(s, 2);
    assert_near(slaq_job_alloc(a), 6, 1e-12);
    assert_near(slaq_job_alloc(c), 6, 1e-12);
    /* tokens: allocation x epoch (2 s) */
    assert_near(slaq_job_tokens(a)->balance, 12, 1e-12);
    slaq_sched_free(s);
}

static void test_reservation_is_taken_first(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 20;
    c.reserved = 4;
    c.nonml_jobs = 2;
    c.policy = SLAQ_POLICY_SLAQ;
    slaq_sched *s = slaq_sched_new(&c);
    for (int i = 0; i < 2; i++)
        slaq_sched_add(s, NULL, 0);
    slaq_sched_epoch(s, 0);
    /* 16 after the reservation; 2 ML jobs share it with 2 non-ML jobs */
    assert_near(total_alloc(s), 8, 1e-9);
    slaq_sched_free(s);
}

static void test_slaq_moves_cores_to_the_job_with_more_to_gain(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 16);
    slaq_job *old = slaq_sched_add(s, NULL, 0);
    /* 40 iterations of a curve that is nearly flat now */
    for (uint64_t k = 0; k <= 40; k++)
        report(old, k, 1.0 / (1 + (double)k * k) + 0.1, (double)k);
    slaq_job *fresh = slaq_sched_add(s, NULL, 40);
    report(fresh, 0, 5.0, 40);
    report(fresh, 1, 4.0, 40.5);
    slaq_sched_epoch(s, 41);
    assert_near(total_alloc(s), 16, 1e-9);
    assert_true(slaq_job_alloc(fresh) >= 14);
    assert_near(slaq_job_alloc(old), 1, 1e-12);
    assert_true(slaq_job_gain(fresh) > slaq_job_gain(old));
    /* switched to fair at run time: equal shares at the next epoch */
    slaq_sched_set_policy(s, SLAQ_POLICY_FAIR);
    slaq_sched_epoch(s, 42);
    assert_near(slaq_job_alloc(old), 8, 1e-12);
    slaq_sched_free(s);
}

static void test_reduction_against_predicted_final(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 4);
    /* The final loss comes from a fitted curve. */
    assert_int_equal(slaq_sched_set_predictor(s, SLAQ_PRED_AUTO), SLAQ_OK);
    slaq_job *j = slaq_sched_add(s, NULL, 0);
    assert_near(slaq_job_reduction(j), 0, 0);
    for (uint64_t k = 0; k <= 40; k++)
        report(j, k, 2.0 * pow(0.8, (double)k) + 1.0, (double)k);
    slaq_sched_epoch(s, 41);
    /* 2·0.8^40 ≈ 2.7e-4 of a total reduction of 2 remains */
    assert_near(slaq_job_reduction(j), 1.0, 1e-3);
    slaq_sched_free(s);
}

static void test_bad_reports_and_options_are_refused(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 4);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.weight = -1;
    assert_null(slaq_sched_add(s, &o, 0));
    slaq_job *j = slaq_sched_add(s, NULL, 0);
    report(j, 3, 1.0, 0);
    slaq_report back = {2, 0.5, 1, 1, 1};
    assert_int_equal(slaq_job_report(j, &back), SLAQ_EORDER);
    slaq_report nan = {4, NAN, 1, 1, 1};
    assert_int_equal(slaq_job_report(j, &nan), SLAQ_EINVAL);
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 0;
    assert_null(slaq_sched_new(&c));
    slaq_sched_free(s);
}

static void test_new_job_costs_what_the_others_cost(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_FAIR, 10); /* epoch 2 s */
    slaq_job *old = slaq_sched_add(s, NULL, 0);
    slaq_report r0 = {0, 5.0, 0, 0, 0}, r1 = {1, 4.0, 50.0, 10, 1};
    slaq_job_report(old, &r0);
    slaq_job_report(old, &r1);
    slaq_job *fresh = slaq_sched_add(s, NULL, 1);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.iter_cpu_s = 10;
    slaq_job *told = slaq_sched_add(s, &o, 1);
    slaq_sched_epoch(s, 1);
    /* Each has 10/3 cores for 2 s. The fresh job is assumed to cost what
     * the reporting job costs (50 CPU-s), not the 1 s default: 2/15 of an
     * iteration, each worth one normaliser (1) to a job with no history. */
    assert_near(slaq_job_gain(fresh), 2.0 * 10 / 3 / 50, 1e-9);
    /* The driver's known cost wins over the prior. */
    assert_near(slaq_job_gain(told), 2.0 * 10 / 3 / 10, 1e-9);
    slaq_sched_free(s);
}

/* Runs a fixed scenario and writes every allocation to out. */
static void scenario(slaq_predictor_kind pred, double *out, size_t n)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 64;
    c.predictor = pred;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job *jobs[8];
    size_t w = 0;
    for (int i = 0; i < 8; i++)
        jobs[i] = slaq_sched_add(s, NULL, 0);
    for (uint64_t k = 0; k < 30 && w < n; k++) {
        for (int i = 0; i < 8; i++)
            report(jobs[i], k, (1.0 + i) / (1.0 + (double)k * (1 + i % 3)),
                   (double)k);
        slaq_sched_epoch(s, (double)k + 0.5);
        for (int i = 0; i < 8 && w < n; i++)
            out[w++] = slaq_job_alloc(jobs[i]);
    }
    slaq_sched_free(s);
}

static void test_same_reports_same_allocations(void **state)
{
    (void)state;
    static double a[240], b[240];
    slaq_predictor_kind kinds[] = {SLAQ_PRED_AUTO, SLAQ_PRED_SLAQ_FIT,
                                   SLAQ_PRED_STRAWMAN};
    for (int i = 0; i < 3; i++) {
        scenario(kinds[i], a, 240);
        scenario(kinds[i], b, 240);
        assert_memory_equal(a, b, sizeof a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fair_redivides_on_arrival_and_departure),
        cmocka_unit_test(test_reservation_is_taken_first),
        cmocka_unit_test(test_slaq_moves_cores_to_the_job_with_more_to_gain),
        cmocka_unit_test(test_reduction_against_predicted_final),
        cmocka_unit_test(test_bad_reports_and_options_are_refused),
        cmocka_unit_test(test_new_job_costs_what_the_others_cost),
        cmocka_unit_test(test_same_reports_same_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
