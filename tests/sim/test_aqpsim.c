/*
 * test_aqpsim.c — the approximate-query simulator: a lone query runs at
 * the whole cluster's speed, the time-to-X definitions, workloads are
 * deterministic Poisson draws, a query arriving into a busy cluster is
 * served sooner under relaqs than under fair, and the trace reader's
 * errors name the line and field. Run from the source tree (it reads
 * tests/data/aqp-synth.jsonl, made by scripts/aqp-synth-traces.py).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/aqpsim.h"

#define SYNTH "tests/data/aqp-synth.jsonl"

#define assert_near(a, b, eps) near_check((a), (b), (eps), #a, __LINE__)

static void near_check(double a, double b, double eps, const char *what,
                       int line)
{
    if (!(fabs(a - b) <= eps))
        fail_msg("line %d: %s = %.17g, expected %.17g", line, what, a, b);
}

static void load(aqp_trace_set *ts)
{
    char err[256];
    if (aqp_traces_load(SYNTH, ts, err, sizeof err))
        fail_msg("%s", err);
    assert_true(ts->n >= 4);
}

/* The simulator's defaults with these cores, epoch (0: the default) and
 * cost scale. */
static aqpsim_config config(int cores, double epoch_s, double cpu_scale)
{
    aqpsim_config c;
    aqpsim_config_init(&c);
    c.sched.cores = cores;
    if (epoch_s > 0)
        c.sched.epoch_s = epoch_s;
    c.cpu_scale = cpu_scale;
    return c;
}

static void test_alone(void **state)
{
    (void)state;
    aqp_trace_set ts;
    load(&ts);
    aqpsim_query q = {.t = &ts.v[0], .arrival = 0};
    double work = 0;
    for (size_t i = 0; i < q.t->B; i++)
        work += q.t->cpu_s[i];
    for (int pol = 0; pol < 2; pol++) {
        aqpsim_config c = config(4, 0, 1000);
        c.sched.policy = pol ? SLAQ_POLICY_FAIR : SLAQ_POLICY_RELAQS;
        aqpsim_qres r;
        char err[256];
        assert_int_equal(aqpsim_run(&q, 1, &c, &r, err, sizeof err), 0);
        /* alone, it has every core from the start to the end */
        assert_near(r.completion, work * 1000 / 4, 1e-6);
        assert_near(aqpsim_time_to(&r, 1.0, 0), r.completion, 1e-9);
        /* the reduction is 1 - the core's true error (normalised by the
         * largest error of the run, so not necessarily 0 at first) */
        double e[512];
        assert_true(q.t->B <= 512);
        assert_int_equal(slaq_query_error_curve(q.t->est, q.t->truth,
                                                q.t->B, q.t->K, e), 0);
        assert_near(r.red[0], 1 - e[0], 1e-12);
        assert_true(r.red[0] >= 0 && r.red[0] < 1);
        assert_near(r.red[q.t->B - 1], 1, 0);
        aqpsim_results_free(&r, 1);
    }
    aqp_traces_free(&ts);
}

static void test_time_to(void **state)
{
    (void)state;
    double bt[4] = {11, 12, 13, 14}, red[4] = {0, 0.8, 0.6, 1};
    aqpsim_qres r = {.arrival = 10, .completion = 14, .B = 4, .batch_t = bt,
                     .red = red};
    assert_near(aqpsim_time_to(&r, 0.7, 0), 2, 0);  /* first reached */
    assert_near(aqpsim_time_to(&r, 0.7, 1), 4, 0);  /* held from batch 4 */
    assert_near(aqpsim_time_to(&r, 0.5, 1), 2, 0);
    assert_near(aqpsim_time_to(&r, 0, 1), 1, 0);
    assert_near(aqpsim_time_to(&r, 0.9, 0), 4, 0);
}

static void test_workload(void **state)
{
    (void)state;
    aqp_trace_set ts;
    load(&ts);
    aqpsim_query a[4], b[4], big[400];
    aqpsim_workload(&ts, 4, 100, 7, a);
    aqpsim_workload(&ts, 4, 100, 7, b);
    assert_memory_equal(a, b, sizeof a);
    assert_near(a[0].arrival, 0, 0);
    /* no trace twice while there are enough */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            assert_ptr_not_equal(a[i].t, a[j].t);
    aqpsim_workload(&ts, 400, 100, 7, big);
    double mean = big[399].arrival / 399;
    assert_true(mean > 85 && mean < 115);
    aqp_traces_free(&ts);
}

static void test_newcomer_served_sooner(void **state)
{
    (void)state;
    aqp_trace_set ts;
    load(&ts);
    /* three queries running, a fourth arrives: under relaqs its error
     * falls by half sooner than under fair */
    aqpsim_query q[4];
    for (int i = 0; i < 4; i++) {
        q[i].t = &ts.v[i];
        q[i].arrival = i < 3 ? 0 : 30;
    }
    double t50[2];
    for (int pol = 0; pol < 2; pol++) {
        aqpsim_config c = config(8, 2, 10000);
        c.sched.policy = pol ? SLAQ_POLICY_FAIR : SLAQ_POLICY_RELAQS;
        aqpsim_qres r[4];
        char err[256];
        assert_int_equal(aqpsim_run(q, 4, &c, r, err, sizeof err), 0);
        t50[pol] = aqpsim_time_to(&r[3], 0.5, 0);
        aqpsim_results_free(r, 4);
    }
    assert_true(t50[0] < t50[1]);
    aqp_traces_free(&ts);
}

/* A query's fair share lasts until its first mini-batch, not until the
 * next epoch: the newcomer's first mini-batch ends at 137 s, the next
 * epoch is at 180 s, and its second mini-batch runs on more than the
 * 1/n of its first all the same. */
static void test_fair_share_ends_at_first_batch(void **state)
{
    (void)state;
    aqp_trace_set ts;
    load(&ts);
    aqpsim_query q[2] = {{.t = &ts.v[0], .arrival = 0},
                         {.t = &ts.v[2], .arrival = 100}};
    aqpsim_config c = config(8, 60, 1000);
    aqpsim_qres r[2];
    char err[256];
    assert_int_equal(aqpsim_run(q, 2, &c, r, err, sizeof err), 0);
    const aqp_trace *t = q[1].t;
    /* its first mini-batch on 4 of the 8 cores */
    assert_near(r[1].batch_t[0], 100 + t->cpu_s[0] * 1000 / 4, 1e-6);
    /* its second on more than 4 */
    double took = r[1].batch_t[1] - r[1].batch_t[0];
    assert_true(took < t->cpu_s[1] * 1000 / 4 * 0.9);
    aqpsim_results_free(r, 2);
    aqp_traces_free(&ts);
}

static void bad_trace(const char *text, const char *want)
{
    char path[] = "/tmp/slaq-aqptrace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    aqp_trace_set ts;
    char err[512];
    assert_int_equal(aqp_traces_load(path, &ts, err, sizeof err), -1);
    remove(path);
    if (!strstr(err, want))
        fail_msg("error '%s' does not mention '%s'", err, want);
    assert_int_equal(ts.n, 0);
}

static void test_trace_errors(void **state)
{
    (void)state;
    bad_trace("{\"name\":\"a\",\"truth\":[1],\"estimates\":[[1],[1,2]],"
              "\"batch_cpu_s\":[1,1]}\n",
              ":1: field \"estimates\" row 1 has 2 values");
    bad_trace("\n{\"name\":\"a\",\"truth\":[1],\"estimates\":[[1],[2]],"
              "\"batch_cpu_s\":[1]}\n",
              ":2: field \"batch_cpu_s\"");
    bad_trace("{\"name\":\"a\",\"truth\":[1],\"estimates\":[[1],[\"x\"]],"
              "\"batch_cpu_s\":[1,1]}\n",
              "element 0 is not a number or null");
    bad_trace("{\"truth\":[1]}\n", "field \"name\"");
    bad_trace("{\"name\":\"a\",\n", ":1:12: malformed JSON");
    bad_trace("", "no query runs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alone),
        cmocka_unit_test(test_time_to),
        cmocka_unit_test(test_workload),
        cmocka_unit_test(test_newcomer_served_sooner),
        cmocka_unit_test(test_fair_share_ends_at_first_batch),
        cmocka_unit_test(test_trace_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
