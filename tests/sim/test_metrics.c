/*
 * test_metrics.c — the metric definitions that slaq sim and slaq report
 * share (src/sim/metrics.h) and sim_summarize's means over the jobs that
 * have a number, on cases worked out by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/metrics.h"
#include "sim/sim.h"

#define assert_near(a, b) near_check((a), (b), #a, __LINE__)

static void near_check(double a, double b, const char *what, int line)
{
    if (!(fabs(a - b) <= 1e-12))
        fail_msg("line %d: %s = %.17g, expected %.17g", line, what, a, b);
}

static void test_norm_loss_is_the_fraction_of_the_drop_left(void **state)
{
    (void)state;
    assert_near(metric_norm_loss(3, 5, 1, 0), 0.5);
    assert_near(metric_norm_loss(5, 5, 1, 0), 1);
    assert_near(metric_norm_loss(1, 5, 1, 0), 0);
    /* not clamped: above the first loss, below the last */
    assert_near(metric_norm_loss(6, 5, 1, 0), 1.25);
    assert_near(metric_norm_loss(0, 5, 1, 0), -0.25);
}

static void test_norm_loss_of_the_last_iteration_is_zero(void **state)
{
    (void)state;
    assert_near(metric_norm_loss(3, 5, 1, 1), 0);
    /* a curve that never fell: unreduced until its last iteration */
    assert_near(metric_norm_loss(4, 2, 3, 0), 1);
    assert_near(metric_norm_loss(2, 2, 2, 0), 1);
    assert_near(metric_norm_loss(3, 2, 3, 1), 0);
}

static void test_reached_records_every_threshold_crossed(void **state)
{
    (void)state;
    double tx[SIM_NX];
    for (int i = 0; i < SIM_NX; i++)
        tx[i] = NAN;
    int xi = metric_reached(1, 0, 0, tx);
    assert_int_equal(xi, 0);
    /* 1 − 0.38 = 62%: 50, 55 and 60 at once */
    xi = metric_reached(0.38, 4, xi, tx);
    assert_int_equal(xi, 3);
    assert_near(tx[0], 4);
    assert_near(tx[2], 4);
    assert_true(isnan(tx[3]));
    /* a later ℓ above the last one takes nothing back */
    xi = metric_reached(0.9, 5, xi, tx);
    assert_int_equal(xi, 3);
    xi = metric_reached(0, 9, xi, tx);
    assert_int_equal(xi, SIM_NX);
    assert_near(tx[sim_x_index(90)], 9);
    assert_near(tx[sim_x_index(99)], 9);
    assert_int_equal(metric_reached(-1, 10, xi, tx), SIM_NX);
}

static void test_reached_counts_exactly_x_with_rounding(void **state)
{
    (void)state;
    double tx[SIM_NX] = {0};
    /* 10% of the drop left, 1 − ℓ just below 0.9 in doubles */
    double l = metric_norm_loss(2.1100000000000003, 11.2, 1.1, 0);
    assert_true(1 - l < 0.9);
    int xi = metric_reached(l, 7, sim_x_index(90), tx);
    assert_int_equal(xi, sim_x_index(95));
    assert_near(tx[sim_x_index(90)], 7);
    /* just short of 90% is not 90% */
    assert_int_equal(metric_reached(0.1 + 1e-9, 8, sim_x_index(90), tx),
                     sim_x_index(90));
}

static void test_sample_ranks_by_loss_ties_by_arrival(void **state)
{
    (void)state;
    /* five jobs: ranks 0, 1 high (4i < 5), 2 medium (4i < 10), 3, 4 low */
    metric_point p[5] = {
        {0.2, 1, 0}, {0.9, 2, 1}, {0.5, 4, 2}, {0.9, 8, 3}, {0.1, 16, 4}};
    sim_sample sm;
    metric_sample(&sm, 12, p, 5);
    assert_near(sm.t, 12);
    assert_int_equal(sm.active, 5);
    assert_near(sm.avg_norm_loss, (0.9 + 0.9 + 0.5 + 0.2 + 0.1) / 5);
    assert_near(sm.cores[SIM_HIGH], 2 + 8);
    assert_near(sm.cores[SIM_MEDIUM], 4);
    assert_near(sm.cores[SIM_LOW], 1 + 16);
    assert_int_equal(p[0].order, 1); /* the earlier of the two at 0.9 */
    assert_int_equal(p[1].order, 3);
    metric_sample(&sm, 0, p, 1);
    assert_near(sm.cores[SIM_HIGH], 2);
    assert_near(sm.avg_norm_loss, 0.9);
}

static void test_summary_leaves_out_jobs_without_a_number(void **state)
{
    (void)state;
    sim_jobres jobs[3];
    memset(jobs, 0, sizeof jobs);
    for (int j = 0; j < 3; j++)
        for (int x = 0; x < SIM_NX; x++)
            jobs[j].tx[x] = NAN;
    int x90 = sim_x_index(90);
    jobs[0].arrival = 10, jobs[0].completion = 40, jobs[0].tx[x90] = 20;
    jobs[1].arrival = 12, jobs[1].completion = 72, jobs[1].tx[x90] = 30;
    jobs[2].arrival = 15, jobs[2].completion = NAN; /* still running */
    sim_sample samples[2] = {{.avg_norm_loss = 1}, {.avg_norm_loss = 0.5}};
    sim_result r = {.jobs = jobs, .njobs = 3, .samples = samples,
                    .nsamples = 2};
    sim_summary s;
    sim_summarize(&r, &s);
    assert_int_equal(s.jobs, 3);
    assert_near(s.tx_mean[x90], 25);
    assert_true(isnan(s.tx_mean[sim_x_index(95)]));
    assert_near(s.jct_mean, (30 + 60) / 2.0);
    assert_true(isnan(s.makespan));
    assert_near(s.avg_norm_loss, 0.75);
    jobs[2].completion = 100;
    sim_summarize(&r, &s);
    assert_near(s.makespan, 100 - 10);
    assert_near(s.jct_mean, (30 + 60 + 85) / 3.0);
    r.njobs = 0; /* a run without jobs has no numbers */
    sim_summarize(&r, &s);
    assert_true(isnan(s.tx_mean[x90]) && isnan(s.jct_mean) &&
                isnan(s.makespan));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norm_loss_is_the_fraction_of_the_drop_left),
        cmocka_unit_test(test_norm_loss_of_the_last_iteration_is_zero),
        cmocka_unit_test(test_reached_records_every_threshold_crossed),
        cmocka_unit_test(test_reached_counts_exactly_x_with_rounding),
        cmocka_unit_test(test_sample_ranks_by_loss_ties_by_arrival),
        cmocka_unit_test(test_summary_leaves_out_jobs_without_a_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
