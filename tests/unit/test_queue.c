/*
 * test_queue.c — queue management (slaq/queue.h): the queue bounds of
 * Eq. 3.1 and 3.2 against the thesis's worked examples and a table
 * computed independently; Proposition 2 against the thesis's values and
 * a simulation of a node topped up at every heartbeat (within 1%);
 * Algorithm 2's wait, Algorithm 1's placement and Algorithm 3's order
 * with its starvation thresholds; the order table's names.
 */
#include <string.h>

#include "slaq/queue.h"
#include "slaq/slaq.h"
#include "testutil.h"

static void test_erlang_cdf_matches_closed_forms(void **state)
{
    (void)state;
    assert_near(slaq_erlang_cdf(0, 2, 1), 1, 0);
    assert_near(slaq_erlang_cdf(3, 0, 1), 0, 0);
    for (double x = 0.1; x < 20; x *= 1.7) {
        /* Exp(2): 1 - e^{-2x}; Erlang(2, 2): 1 - e^{-2x} (1 + 2x) */
        assert_near(slaq_erlang_cdf(1, 2, x), 1 - exp(-2 * x), 1e-12);
        assert_near(slaq_erlang_cdf(2, 2, x),
                    1 - exp(-2 * x) * (1 + 2 * x), 1e-12);
    }
    /* far past e^{-745}: a thousand tasks per interval, still a
     * probability, about one half at the mean */
    double p = slaq_erlang_cdf(1000, 1000, 1);
    assert_true(p > 0.45 && p < 0.55);
    assert_near(slaq_erlang_cdf(2000, 1000, 1), 0, 1e-12);
    assert_near(slaq_erlang_cdf(10, 1000, 1), 1, 1e-12);
}

static void test_exact_bound_gives_the_thesis_examples(void **state)
{
    (void)state;
    /* tau = 3 s, r = 10: 1/mu = 10 s -> b = 6; 1/mu = 30 s -> b = 3 */
    assert_int_equal(slaq_qbound_exact(3, 0.05), 6);
    assert_int_equal(slaq_qbound_exact(1, 0.05), 3);
    /* Hive-MS's queue of 4 (mean task 22.9 s) is the Chernoff bound's */
    assert_int_equal(slaq_qbound_chernoff(3, 0.05), 8);
    assert_int_equal(slaq_qbound_chernoff(1, 0.05), 4);
    assert_int_equal(slaq_qbound_chernoff(10 * 3 / 22.9, 0.05), 4);
    assert_int_equal(slaq_qbound_exact(10 * 3 / 22.9, 0.05), 3);
    /* exact / Chernoff for several loads and deltas (seed notes §2.8.5,
     * computed there with an independent Poisson tail) */
    static const double loads[] = {0.5, 1, 2, 3, 5, 6, 10, 20};
    static const double deltas[] = {0.10, 0.05, 0.01};
    static const int exact[3][8] = {{1, 2, 4, 5, 8, 9, 14, 26},
                                    {2, 3, 5, 6, 9, 10, 15, 28},
                                    {3, 4, 6, 8, 11, 12, 18, 31}};
    static const int chern[3][8] = {{2, 3, 5, 7, 10, 11, 17, 30},
                                    {3, 4, 6, 8, 11, 12, 18, 31},
                                    {3, 5, 7, 9, 13, 14, 21, 35}};
    for (int d = 0; d < 3; d++)
        for (int l = 0; l < 8; l++) {
            size_t e = slaq_qbound_exact(loads[l], deltas[d]);
            size_t c = slaq_qbound_chernoff(loads[l], deltas[d]);
            if ((int)e != exact[d][l] || (int)c != chern[d][l])
                fail_msg("load %g delta %g: %zu/%zu, expected %d/%d",
                         loads[l], deltas[d], e, c, exact[d][l],
                         chern[d][l]);
            /* the smallest: one less breaks the condition */
            assert_true(e == 0 ||
                        slaq_erlang_cdf(e, loads[l], 1) > deltas[d]);
            assert_true(slaq_erlang_cdf(e + 1, loads[l], 1) <= deltas[d]);
        }
    /* Chernoff is never tighter, for large loads too */
    for (double a = 0.1; a < 3000; a *= 1.9)
        assert_true(slaq_qbound_chernoff(a, 0.02) >=
                    slaq_qbound_exact(a, 0.02));
    /* degenerate: nothing to finish, or no promise asked */
    assert_int_equal(slaq_qbound_exact(0, 0.05), 0);
    assert_int_equal(slaq_qbound_exact(5, 1), 0);
    assert_int_equal(slaq_qbound_exact(5, 0), SLAQ_QBOUND_MAX);
}

/* xorshift64*: the test's own generator, one stream per call. */
static double uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return ((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* A node of r slots topped up to r running and b queued tasks every tau
 * seconds, exponential tasks of mean 1/mu: its simulated utilisation. */
static double simulate_node(unsigned r, double mu, double tau, size_t b,
                            long intervals, uint64_t seed)
{
    double busy = 0;
    for (long k = 0; k < intervals; k++) {
        double t = 0;
        unsigned running = r;
        size_t queued = b;
        while (running) {
            double dt = -log(1 - uniform(&seed)) / (running * mu);
            if (t + dt >= tau) {
                busy += running * (tau - t);
                break;
            }
            busy += running * dt;
            t += dt;
            if (queued)
                queued--;
            else
                running--;
        }
    }
    return busy / (r * tau * (double)intervals);
}

static void test_prop2_matches_the_thesis_and_a_simulation(void **state)
{
    (void)state;
    /* r = 10, tau = 3 s, 1/mu = 10 s, b = 0 .. 8 (seed notes §2.8.5) */
    static const double want[] = {0.8639, 0.9247, 0.9626, 0.9834, 0.9934,
                                  0.9976, 0.9992, 0.9998, 0.9999};
    for (size_t b = 0; b < 9; b++)
        assert_near(slaq_qbound_util(10, 0.1, 3, b), want[b], 6e-5);
    /* no queue: (1 - e^{-mu tau}) / (mu tau) */
    for (unsigned r = 1; r < 40; r += 7)
        assert_near(slaq_qbound_util(r, 0.5, 3, 0),
                    (1 - exp(-1.5)) / 1.5, 1e-12);
    /* one slot, one queued task, mu tau = 1: E[min(Erlang(2,1), 1)] */
    assert_near(slaq_qbound_util(1, 1, 1, 1), 1 - 2 / exp(1) + 1 - 1 / exp(1),
                1e-12);
    /* against simulation, within 1% */
    static const struct { unsigned r; double mu, tau; size_t b; } cases[] = {
        {10, 0.1, 3, 0}, {10, 0.1, 3, 2}, {10, 0.2, 3, 4}, {1, 0.5, 3, 1},
        {4, 1.0, 3, 6}, {32, 0.2, 3, 10}, {2, 0.05, 3, 1}, {16, 1, 3, 30},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double u = slaq_qbound_util(cases[i].r, cases[i].mu, cases[i].tau,
                                    cases[i].b);
        double sim = simulate_node(cases[i].r, cases[i].mu, cases[i].tau,
                                   cases[i].b, 40000,
                                   0x9e3779b97f4a7c15ULL + i);
        if (fabs(u - sim) > 0.01 * sim)
            fail_msg("r %u mu %g b %zu: Proposition 2 %.4f, simulated %.4f",
                     cases[i].r, cases[i].mu, cases[i].b, u, sim);
    }
    /* more queue, more utilisation */
    for (size_t b = 0; b < 20; b++)
        assert_true(slaq_qbound_util(8, 0.2, 3, b + 1) >=
                    slaq_qbound_util(8, 0.2, 3, b));
    assert_true(isnan(slaq_qbound_util(0, 1, 1, 1)));
    assert_true(isnan(slaq_qbound_util(4, 0, 1, 1)));
}

static void test_bound_settings_parse_and_resolve(void **state)
{
    (void)state;
    slaq_queue_bound b = {SLAQ_QBOUND_LENGTH, 3};
    char buf[32];
    assert_int_equal(slaq_queue_bound_parse("auto", &b), SLAQ_OK);
    assert_int_equal(b.kind, SLAQ_QBOUND_AUTO);
    /* 10 slots, 10 s tasks, 3 s heartbeats, 95%: the thesis's 6 */
    assert_int_equal(slaq_queue_bound_length(&b, 10, 10, 3, 0.95), 6);
    assert_int_equal(slaq_queue_bound_parse("6", &b), SLAQ_OK);
    assert_int_equal(slaq_queue_bound_length(&b, 10, 1, 3, 0.95), 6);
    assert_true(slaq_queue_admits(&b, 6, 5, 1e9));
    assert_false(slaq_queue_admits(&b, 6, 6, 0));
    assert_int_equal(slaq_queue_bound_parse("mwt:2.5", &b), SLAQ_OK);
    assert_int_equal(b.kind, SLAQ_QBOUND_MWT);
    assert_true(slaq_queue_admits(&b, 0, 100, 2.4));
    assert_false(slaq_queue_admits(&b, 1000, 0, 2.5));
    slaq_queue_bound_format(&b, buf, sizeof buf);
    assert_string_equal(buf, "mwt:2.5");
    static const char *const bad[] = {"", "x", "-1", "1.5", "mwt:", "mwt:0",
                                      "mwt:-2", "mwt:inf", "6 ", "1e7"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        slaq_queue_bound keep = b;
        assert_int_equal(slaq_queue_bound_parse(bad[i], &b), SLAQ_EINVAL);
        assert_int_equal(keep.kind, b.kind);
        assert_true(keep.value == b.value);
    }
    slaq_starvation s;
    assert_int_equal(slaq_starvation_parse("10", &s), SLAQ_OK);
    assert_true(s.st == 10 && isinf(s.st_r));
    assert_int_equal(slaq_starvation_parse("inf,2", &s), SLAQ_OK);
    assert_true(isinf(s.st) && s.st_r == 2);
    slaq_starvation_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "inf,2");
    assert_int_equal(slaq_starvation_parse("off", &s), SLAQ_OK);
    slaq_starvation_format(&s, buf, sizeof buf);
    assert_string_equal(buf, "off");
    static const char *const badst[] = {"", "0", "-1", "1,", ",1", "1,0",
                                        "nan", "1,2,3", "x"};
    for (size_t i = 0; i < sizeof badst / sizeof *badst; i++)
        assert_int_equal(slaq_starvation_parse(badst[i], &s), SLAQ_EINVAL);
}

static void test_wait_simulates_the_slots(void **state)
{
    (void)state;
    double scratch[8];
    size_t slots[8];
    /* slots free at 2 and 5: the 3-s task starts at 2 and ends at 5, the
     * 4-s one starts at 5; the next would start at 5 */
    double run[] = {5, 2}, q[] = {3, 4};
    assert_near(slaq_queue_wait(run, 2, q, 2, 0, 0, scratch, slots), 5, 0);
    assert_near(slaq_queue_wait(run, 2, q, 1, 0, 0, scratch, slots), 5, 0);
    assert_near(slaq_queue_wait(run, 2, NULL, 0, 0, 0, scratch, slots), 2, 0);
    double q3[] = {1, 1, 1, 1};
    assert_near(slaq_queue_wait(run, 2, q3, 4, 0, 0, scratch, slots), 5, 0);
    /* a free slot beyond free_min: no wait */
    assert_near(slaq_queue_wait(run, 2, q, 2, 1, 0, scratch, slots), 0, 0);
    assert_near(slaq_queue_wait(run, 2, q, 2, 1, 1, scratch, slots), 5, 0);
    /* the input is left as it was */
    assert_true(run[0] == 5 && run[1] == 2);
}

static void test_place_prefers_free_then_least_wait(void **state)
{
    (void)state;
    slaq_qnode n[3] = {
        {.free_slots = 0, .qlen = 2, .wait_s = 1000, .affinity = 1,
         .admits = 1},  /* two 500-s tasks queued */
        {.free_slots = 0, .qlen = 5, .wait_s = 10, .affinity = 1,
         .admits = 1},  /* five 2-s tasks queued */
        {.free_slots = 1, .qlen = 0, .wait_s = 0, .affinity = 0.5,
         .admits = 1},
    };
    /* above R_fmin: the free node */
    assert_int_equal(slaq_queue_place(n, 3, 1, 30, 0, SLAQ_QLOAD_WAIT), 2);
    /* below it: by wait, the node of short tasks; by length, the other */
    n[2].free_slots = 0;
    n[2].wait_s = 50;
    n[2].qlen = 3;
    assert_int_equal(slaq_queue_place(n, 3, 1, 30, 0.5, SLAQ_QLOAD_WAIT),
                     1);
    assert_int_equal(slaq_queue_place(n, 3, 0, 30, 0, SLAQ_QLOAD_LENGTH),
                     0);
    /* affinity weighs the load */
    n[2].affinity = 1;
    n[1].affinity = 0.1;
    assert_int_equal(slaq_queue_place(n, 3, 0, 30, 0, SLAQ_QLOAD_WAIT), 2);
    /* a node that is full by its bound is never chosen */
    n[2].admits = 0;
    assert_int_equal(slaq_queue_place(n, 3, 0, 30, 0, SLAQ_QLOAD_WAIT), 1);
    n[0].admits = n[1].admits = 0;
    assert_int_equal(slaq_queue_place(n, 3, 0, 30, 0, SLAQ_QLOAD_WAIT), -1);
    /* an empty queue with a zero wait wins outright */
    n[0].admits = 1;
    n[0].wait_s = 0;
    n[0].affinity = 0.01;
    n[1].admits = 1;
    assert_int_equal(slaq_queue_place(n, 3, 0, 30, 0, SLAQ_QLOAD_WAIT), 0);
}

static void test_order_table_names(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(slaq_qorder_count(), 5);
    slaq_qorder_list(buf, sizeof buf, ", ");
    assert_string_equal(buf, "fifo, srjf, lrtf, stf, ejf");
    for (size_t i = 0; i < slaq_qorder_count(); i++) {
        slaq_qorder o;
        assert_int_equal(slaq_qorder_parse(slaq_qorder_name((slaq_qorder)i),
                                           &o), SLAQ_OK);
        assert_int_equal(o, (int)i);
        assert_non_null(slaq_qorder_summary(o));
    }
    slaq_qorder o = SLAQ_QORDER_STF;
    assert_int_equal(slaq_qorder_parse("SRJF", &o), SLAQ_EINVAL);
    assert_int_equal(o, SLAQ_QORDER_STF);
    assert_string_equal(slaq_qorder_name((slaq_qorder)99), "?");
    assert_null(slaq_qorder_summary((slaq_qorder)99));
    slaq_qload l;
    assert_int_equal(slaq_qload_parse("length", &l), SLAQ_OK);
    assert_string_equal(slaq_qload_name(l), "length");
    assert_int_equal(slaq_qload_parse("random", &l), SLAQ_EINVAL);
}

/* Items: a big old job's short task, a small young job's long task. */
static const slaq_qitem big = {.job_arrival = 0, .enqueued = 5,
                               .dur_est = 2, .job_work = 1000,
                               .job_tasks = 100};
static const slaq_qitem small = {.job_arrival = 4, .enqueued = 6,
                                 .dur_est = 30, .job_work = 60,
                                 .job_tasks = 2};

static void test_orders_compare_by_their_key(void **state)
{
    (void)state;
    slaq_starvation off = {INFINITY, INFINITY};
    double now = 7;
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &small, &big, now, &off)
                > 0);
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_LRTF, &small, &big, now, &off)
                > 0);
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_STF, &big, &small, now, &off)
                > 0);
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_EJF, &big, &small, now, &off)
                > 0);
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_FIFO, &big, &small, now, &off)
                > 0);
    /* antisymmetric, and an item ties with itself */
    for (int o = 0; o < 5; o++) {
        assert_int_equal(slaq_qorder_cmp(o, &big, &small, now, &off),
                         -slaq_qorder_cmp(o, &small, &big, now, &off));
        assert_int_equal(slaq_qorder_cmp(o, &big, &big, now, &off), 0);
    }
    /* equal keys: the one that waited longer */
    slaq_qitem a = small, b = small;
    a.enqueued = 6.5;
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &b, &a, now, &off) > 0);
    slaq_qitem items[] = {big, small, a};
    assert_int_equal(slaq_qorder_first(SLAQ_QORDER_SRJF, items, 3, now,
                                       &off), 1);
    assert_int_equal(slaq_qorder_first(SLAQ_QORDER_FIFO, items, 3, now,
                                       &off), 0);
    assert_int_equal(slaq_qorder_first(SLAQ_QORDER_SRJF, items, 0, now,
                                       &off), -1);
}

static void test_starved_items_go_first_by_earliest_job(void **state)
{
    (void)state;
    slaq_starvation st = {10, INFINITY};
    /* at 14 the big job's task has waited 9 s: not starved; SRJF keeps
     * it behind; at 16 it has waited 11 s > ST and goes first */
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &big, &small, 14, &st)
                < 0);
    assert_true(slaq_qitem_starved(&big, 16, &st));
    assert_false(slaq_qitem_starved(&small, 16, &st));
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &big, &small, 16, &st)
                > 0);
    /* starved beats not starved, whatever the key and the job's arrival:
     * x, of a later job with more work left, has waited 25 s; y 5 s */
    slaq_qitem x = {.job_arrival = 10, .enqueued = 0, .dur_est = 2,
                    .job_work = 500, .job_tasks = 50};
    slaq_qitem y = {.job_arrival = 1, .enqueued = 20, .dur_est = 2,
                    .job_work = 10, .job_tasks = 1};
    for (int o = SLAQ_QORDER_SRJF; o <= SLAQ_QORDER_STF; o++) {
        assert_true(slaq_qorder_cmp(o, &x, &y, 25, &st) > 0);
        assert_true(slaq_qorder_cmp(o, &y, &x, 25, &st) < 0);
    }
    /* both starved: the earlier job, whatever the order's key */
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &big, &small, 100, &st)
                > 0);
    slaq_qitem late = big;
    late.job_arrival = 5;
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_STF, &small, &late, 100, &st)
                > 0);
    /* ST_R: the 2-s task starves after 3 x 2 s, the 30-s one not yet */
    slaq_starvation rel = {INFINITY, 3};
    assert_true(slaq_qitem_starved(&big, 11.5, &rel));
    assert_false(slaq_qitem_starved(&small, 11.5, &rel));
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_SRJF, &big, &small, 11.5, &rel)
                > 0);
    /* min(ST, ST_R x estimate): the 30-s task starves at ST */
    slaq_starvation both = {20, 3};
    assert_false(slaq_qitem_starved(&small, 25, &both));
    assert_true(slaq_qitem_starved(&small, 26.5, &both));
    /* fifo and ejf do not reorder, so nothing starves under them */
    assert_true(slaq_qorder_cmp(SLAQ_QORDER_FIFO, &small, &big, 100, &st)
                < 0);
    /* a zero estimate starves at ST alone */
    slaq_qitem zero = small;
    zero.dur_est = 0;
    assert_false(slaq_qitem_starved(&zero, 15, &st));
    assert_true(slaq_qitem_starved(&zero, 17, &st));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erlang_cdf_matches_closed_forms),
        cmocka_unit_test(test_exact_bound_gives_the_thesis_examples),
        cmocka_unit_test(test_prop2_matches_the_thesis_and_a_simulation),
        cmocka_unit_test(test_bound_settings_parse_and_resolve),
        cmocka_unit_test(test_wait_simulates_the_slots),
        cmocka_unit_test(test_place_prefers_free_then_least_wait),
        cmocka_unit_test(test_order_table_names),
        cmocka_unit_test(test_orders_compare_by_their_key),
        cmocka_unit_test(test_starved_items_go_first_by_earliest_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
