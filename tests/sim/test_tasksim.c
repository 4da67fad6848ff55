/*
 * test_tasksim.c — the task-level simulator (sim/tasksim.h) on workloads
 * small enough to follow by hand: a yarn-like node starts queued work only
 * at its next heartbeat, slaq's fifo and node queues start it when the
 * slot frees; a bound of 0 keeps yaq-c from queueing; the load window
 * skips the early stragglers; the synthetic workloads have the thesis's
 * shape; the trace reader refuses bad lines with line and field.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/tasksim.h"
#include "slaq/slaq.h"

#define assert_close(a, b, tol)                                           \
    do {                                                                  \
        double a_ = (a), b_ = (b);                                        \
        if (!(fabs(a_ - b_) <= (tol)))                                    \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);          \
    } while (0)

/* One job at 0 of two 5-s tasks, on one node of one slot, tau = 3 s
 * (the node's heartbeats at 0, 3, 6, ...). */
static double two_tasks(tsim_sched sched, const char *bound)
{
    tt_workload w = {0};
    double dur[] = {5, 5};
    assert_int_equal(tt_push(&w, 100, 5, dur, 2), 0);
    tsim_config c;
    tsim_config_init(&c);
    c.sched = sched;
    c.nodes = 1;
    c.slots = 1;
    c.order = SLAQ_QORDER_FIFO;
    assert_int_equal(slaq_queue_bound_parse(bound, &c.bound), SLAQ_OK);
    tsim_result r;
    char err[128];
    assert_int_equal(tsim_run(&w, &c, &r, err, sizeof err), 0);
    assert_int_equal(r.njobs, 1);
    assert_int_equal(r.ntasks, 2);
    double jct = r.jct[0];
    tsim_result_free(&r);
    tt_free(&w);
    return jct;
}

static void test_heartbeats_delay_yarn_not_queues(void **state)
{
    (void)state;
    /* yarn: the second task waits for the heartbeat at 6 */
    assert_close(two_tasks(TSIM_YARN, "auto"), 11, 1e-9);
    /* slaq's fifo: a freed slot takes the next task at once */
    assert_close(two_tasks(TSIM_FIFO, "auto"), 10, 1e-9);
    /* yaq-c with a queue of one: queued at 0, started at 5 */
    assert_close(two_tasks(TSIM_YAQC, "1"), 10, 1e-9);
    /* ... and with none, it is yarn */
    assert_close(two_tasks(TSIM_YAQC, "0"), 11, 1e-9);
    /* the distributed ones queue at the node */
    assert_close(two_tasks(TSIM_SPARROW, "auto"), 10, 1e-9);
    assert_close(two_tasks(TSIM_YAQD, "1"), 10, 1e-9);
}

static void test_window_skips_early_stragglers(void **state)
{
    (void)state;
    tt_workload w = {0};
    double d1[] = {1};
    /* one job at 0, then 199 from 1000 on, one a second */
    assert_int_equal(tt_push(&w, 0, 1, d1, 1), 0);
    for (int i = 0; i < 199; i++)
        assert_int_equal(tt_push(&w, 1000 + i, 1, d1, 1), 0);
    double a, b;
    tsim_window(&w, &a, &b);
    assert_close(a, 1000, 1e-9); /* the job at the 1st percentile */
    assert_close(b, 1198, 1e-9);
    /* 199 one-second jobs in the window's 198 s... */
    assert_close(tsim_offered(&w), 199.0 / 198, 1e-9);
    tsim_config c;
    tsim_config_init(&c);
    c.sched = TSIM_FIFO;
    c.nodes = 2;
    c.slots = 1;
    tsim_result r;
    assert_int_equal(tsim_run(&w, &c, &r, NULL, 0), 0);
    /* ... keep one of the two slots busy: about half */
    assert_close(r.util, 0.5, 0.01);
    assert_close(r.jct_p50, 1, 1e-9);
    tsim_result_free(&r);
    tt_free(&w);
}

static void test_bad_configs_are_refused(void **state)
{
    (void)state;
    tt_workload w = {0};
    double d1[] = {1};
    assert_int_equal(tt_push(&w, 0, 1, d1, 1), 0);
    tsim_config c;
    tsim_config_init(&c);
    tsim_result r;
    char err[128];
    c.nodes = 0;
    assert_int_equal(tsim_run(&w, &c, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "nodes: expected a whole number"));
    tsim_config_init(&c);
    c.heartbeat = 0;
    assert_int_equal(tsim_run(&w, &c, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "heartbeat"));
    tt_free(&w);
}

static void test_synthetic_workloads_have_their_shape(void **state)
{
    (void)state;
    tt_workload w;
    char err[256];
    assert_int_equal(tsim_workload("hive", 1, 800, 1800, 1, &w, err,
                                   sizeof err), 0);
    assert_int_equal(w.njobs, 185);
    double per_job = (double)w.ntasks / (double)w.njobs;
    assert_true(per_job > 45 && per_job < 75);     /* 57.9 + 1.5 */
    double s = 0, s2 = 0;
    for (size_t t = 0; t < w.ntasks; t++) {
        s += w.dur[t];
        s2 += w.dur[t] * w.dur[t];
    }
    double mean = s / (double)w.ntasks;
    assert_close(mean, 22.9, 2.5);
    assert_close(sqrt(s2 / (double)w.ntasks - mean * mean), 27.8, 6);
    tt_free(&w);
    /* mixed-5-50: 80% of the jobs of 5-s tasks */
    assert_int_equal(tsim_workload("mixed-5-50", 1, 800, 3600, 2, &w, err,
                                   sizeof err), 0);
    size_t five = 0;
    for (size_t j = 0; j < w.njobs; j++) {
        assert_true(w.est[j] == 5 || w.est[j] == 50);
        assert_int_equal(w.first[j + 1] - w.first[j], 100);
        five += w.est[j] == 5;
    }
    assert_close((double)five / (double)w.njobs, 0.8, 0.05);
    /* offered load as asked: 800 slots at 1.0 */
    assert_close(tsim_offered(&w) / 800, 1, 0.1);
    tt_free(&w);
    /* heavy: a fifth of the tasks 500 s longer than any other */
    assert_int_equal(tsim_workload("gridmix-heavy", 1, 800, 1800, 3, &w,
                                   err, sizeof err), 0);
    size_t heavy = 0;
    for (size_t t = 0; t < w.ntasks; t++)
        heavy += w.dur[t] > 500;
    assert_close((double)heavy / (double)w.ntasks, 0.2, 0.01);
    tt_free(&w);
    /* the same seed, the same workload */
    tt_workload a, b;
    assert_int_equal(tsim_workload("gridmix", 1, 100, 600, 9, &a, err,
                                   sizeof err), 0);
    assert_int_equal(tsim_workload("gridmix", 1, 100, 600, 9, &b, err,
                                   sizeof err), 0);
    assert_int_equal(a.ntasks, b.ntasks);
    assert_memory_equal(a.dur, b.dur, a.ntasks * sizeof *a.dur);
    tt_free(&a);
    tt_free(&b);
    assert_int_equal(tsim_workload("sec:0", 1, 100, 600, 1, &w, err,
                                   sizeof err), -1);
    assert_non_null(strstr(err, "sec:SECONDS"));
    assert_int_equal(tsim_workload("gridmax", 1, 100, 600, 1, &w, err,
                                   sizeof err), -1);
    assert_non_null(strstr(err, "no workload 'gridmax'"));
}

/* Reads text as a trace; returns the reader's status, err its message. */
static int read_text(const char *text, tt_workload *w, char *err,
                     size_t len)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    int rc = tt_read_stream(f, "t.tr", w, err, len);
    fclose(f);
    return rc;
}

static void test_trace_reader(void **state)
{
    (void)state;
    tt_workload w;
    char err[256];
    assert_int_equal(read_text("# a comment\n10 2 1.5 1 2\n\n12 1 3 3\n",
                               &w, err, sizeof err), 0);
    assert_int_equal(w.njobs, 2);
    assert_int_equal(w.ntasks, 3);
    assert_close(w.arrival[1], 12, 0);
    assert_close(w.est[0], 1.5, 0);
    assert_close(w.dur[2], 3, 0);
    assert_int_equal(w.first[2], 3);
    tt_free(&w);
    static const struct { const char *text, *msg; } bad[] = {
        {"1 1 1 1\nx 1 1 1\n", "t.tr line 2: field 1 (submission_time)"},
        {"1 1.5 1 1\n", "line 1: field 2 (number_of_tasks) must be a whole"},
        {"1 2000000 1 1\n", "field 2 (number_of_tasks)"},
        {"1 1 -1 1\n", "line 1: field 3 (mean_task_duration)"},
        {"1 2 1 1 nan\n", "field 5 (task 2's duration)"},
        {"1 2 1 1 1e11\n", "field 5 (task 2's duration) must be a number "
                           "from 0 to 1e+10, got '1e11'"},
        {"1 2 1 1 1 1\n", "the line has more durations (field 6: '1')"},
        {"1 2 1\n", "number_of_tasks is 2 but the line has 0 durations"},
        {"", "t.tr: no jobs in the trace"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(read_text(bad[i].text, &w, err, sizeof err), -1);
        if (!strstr(err, bad[i].msg))
            fail_msg("'%s' does not say '%s'", err, bad[i].msg);
        assert_null(w.dur);
        assert_int_equal(w.njobs, 0);
    }
}

/* A line past TT_MAX_LINE (here a job's fields, then spaces without
 * end) is refused as too long once the cap is reached, whatever follows:
 * the reader's buffer is bounded, not the size of the file's longest
 * line. */
static void test_trace_line_past_the_cap_is_refused(void **state)
{
    (void)state;
    size_t n = (size_t)TT_MAX_LINE + 4096;
    char *text = malloc(n + 1);
    assert_non_null(text);
    memset(text, ' ', n);
    memcpy(text, "1 1000000 1", 11);
    text[n - 1] = '\n';
    text[n] = 0;
    tt_workload w;
    char err[256] = "";
    assert_int_equal(read_text(text, &w, err, sizeof err), -1);
    if (!strstr(err, "t.tr line 1: longer than 67108864 bytes"))
        fail_msg("'%s' does not say the line is too long", err);
    assert_null(w.dur);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heartbeats_delay_yarn_not_queues),
        cmocka_unit_test(test_window_skips_early_stragglers),
        cmocka_unit_test(test_bad_configs_are_refused),
        cmocka_unit_test(test_synthetic_workloads_have_their_shape),
        cmocka_unit_test(test_trace_reader),
        cmocka_unit_test(test_trace_line_past_the_cap_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
