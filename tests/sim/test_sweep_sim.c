/*
 * test_sweep_sim.c — the virtual-time replay of sweeps: exact times for
 * hand-computed cases, kills, suspend costs, orders.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/sweep_sim.h"

#define EP 120

static double ep_s[EP], m[8][EP];

/* A set of n traces of `len` epochs, start-up 1 s, 1 s an epoch. */
static sweep_set mkset(int n, int len)
{
    sweep_set s = {.name = "t", .metric_name = "accuracy", .maximize = 1,
                   .epochs = EP, .n = (size_t)n};
    s.v = calloc((size_t)n, sizeof *s.v);
    for (int e = 0; e < EP; e++)
        ep_s[e] = 1;
    for (int i = 0; i < n; i++)
        s.v[i] = (sweep_trace){.id = i, .start_s = 1, .epoch_s = ep_s,
                               .metric = m[i], .n = (size_t)len};
    return s;
}

static sweep_sim_config cfg(const char *pol, size_t slots, double target)
{
    sweep_sim_config c = {.policy = pol, .suspend_s = 0, .resume_s = 0,
                          .start_scale = 1};
    slaq_sweep_params_init(&c.prm, slots, EP);
    c.prm.y_target = target;
    c.prm.t_max = 1000;
    return c;
}

static void flat(int i, double v)
{
    for (int e = 0; e < EP; e++)
        m[i][e] = v;
}

static void test_default_time_is_start_plus_epochs(void **st)
{
    (void)st;
    sweep_set s = mkset(3, 4);
    flat(0, 0.1);
    double c1[4] = {0.2, 0.5, 0.9, 0.95};
    memcpy(m[1], c1, sizeof c1);
    flat(2, 0.3);
    sweep_sim_config c = cfg("default", 1, 0.9);
    sweep_sim_result r;
    char err[200];
    size_t ord[3] = {0, 1, 2};
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r, err, sizeof err), 0);
    /* c0: 1 + 4 = 5 s; c1 starts at 5, epoch 3 ends at 5 + 1 + 3 = 9. */
    assert_true(fabs(r.time_to_target - 9) < 1e-9);
    assert_int_equal(r.winner, 1);
    assert_int_equal(r.epochs, 7);
    size_t ord2[3] = {1, 0, 2};
    assert_int_equal(sweep_sim_run(&s, ord2, 3, &c, &r, err, sizeof err), 0);
    assert_true(fabs(r.time_to_target - 4) < 1e-9);
    /* Without start-up times: 3 epochs of c1 after 4 of c0. */
    c.start_scale = 0;
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r, err, sizeof err), 0);
    assert_true(fabs(r.time_to_target - 7) < 1e-9);
    c.start_scale = 1;
    /* Two slots: c0 and c1 side by side. */
    c.prm.slots = 2;
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r, err, sizeof err), 0);
    assert_true(fabs(r.time_to_target - 4) < 1e-9);
    free(s.v);
}

static void test_unreached_target_runs_everything(void **st)
{
    (void)st;
    sweep_set s = mkset(3, 5);
    flat(0, 0.1);
    flat(1, 0.2);
    flat(2, 0.3);
    sweep_sim_config c = cfg("default", 2, 0.99);
    sweep_sim_result r;
    char err[200];
    size_t ord[3] = {0, 1, 2};
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r, err, sizeof err), 0);
    assert_true(isinf(r.time_to_target));
    assert_int_equal(r.winner, -1);
    assert_int_equal(r.epochs, 15);
    assert_true(fabs(r.makespan - 12) < 1e-9); /* 6 + 6 on one slot */
    free(s.v);
}

/* Successive halving kills the worse of two at the first rung, and the
 * freed slot starts the next configuration at once. */
static void test_kills_free_the_slot(void **st)
{
    (void)st;
    sweep_set s = mkset(3, 4);
    flat(0, 0.6);
    flat(1, 0.2);
    double c2[4] = {0.7, 0.95, 0.95, 0.95};
    memcpy(m[2], c2, sizeof c2);
    sweep_sim_config c = cfg("sh", 1, 0.9);
    sweep_sim_result r;
    char err[200];
    size_t ord[3] = {0, 1, 2};
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r, err, sizeof err), 0);
    /* c0: 5 s; c1 killed after its first epoch at 7; c2: 7 + 1 + 2 = 10. */
    assert_int_equal(r.kills, 1);
    assert_true(fabs(r.time_to_target - 10) < 1e-9);
    free(s.v);
}

/* POP suspends an opportunistic configuration at epoch 10; the slot is
 * busy for suspend_s before the next one starts, which moves the time to
 * target by exactly that much. */
static void test_suspend_cost_is_paid(void **st)
{
    (void)st;
    sweep_set s = mkset(3, EP);
    for (int e = 0; e < EP; e++) {
        m[0][e] = 0.9 - 0.8 * pow(e + 1, -0.9);
        m[1][e] = 0.95 - 0.85 * pow(e + 1, -0.4);
        m[2][e] = e < 2 ? 0.1 : 0.95;
    }
    sweep_sim_config c = cfg("pop", 2, 0.85);
    sweep_sim_result r0, r5;
    char err[200];
    size_t ord[3] = {0, 1, 2};
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r0, err, sizeof err), 0);
    c.suspend_s = 5;
    assert_int_equal(sweep_sim_run(&s, ord, 3, &c, &r5, err, sizeof err), 0);
    assert_int_equal(r0.suspends, 1);
    assert_int_equal(r0.winner, 2);
    assert_true(fabs(r0.time_to_target - 15) < 1e-9); /* 1 + 10, 1 + 3 */
    assert_true(fabs(r5.time_to_target - r0.time_to_target - 5) < 1e-9);
    free(s.v);
}

static void test_orders_are_permutations_and_repeatable(void **st)
{
    (void)st;
    enum { N = 50 };
    size_t a[N], b[N], c[N];
    sweep_sim_order(a, N, 1, 0);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(a[i], i);
    sweep_sim_order(a, N, 1, 3);
    sweep_sim_order(b, N, 1, 3);
    sweep_sim_order(c, N, 1, 4);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    int seen[N] = {0};
    for (size_t i = 0; i < N; i++)
        seen[a[i]]++;
    for (size_t i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
}

static void test_bad_policy_is_an_error(void **st)
{
    (void)st;
    sweep_set s = mkset(1, 3);
    flat(0, 0.5);
    sweep_sim_config c = cfg("nope", 1, 0.9);
    sweep_sim_result r;
    char err[200] = "";
    size_t ord[1] = {0};
    assert_int_equal(sweep_sim_run(&s, ord, 1, &c, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "nope"));
    free(s.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_time_is_start_plus_epochs),
        cmocka_unit_test(test_unreached_target_runs_everything),
        cmocka_unit_test(test_kills_free_the_slot),
        cmocka_unit_test(test_suspend_cost_is_paid),
        cmocka_unit_test(test_orders_are_permutations_and_repeatable),
        cmocka_unit_test(test_bad_policy_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
