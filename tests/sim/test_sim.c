/*
 * test_sim.c — the simulator on scenarios whose outcome can be worked out
 * by hand, its determinism, and the workload reader's errors.
 *
 * The scenarios pin down the simulation model (a job with a cores runs
 * min(a, max_cores)/iter_cpu_s iterations per second, completions at exact
 * times) and the metric definitions of docs/metrics.md, independently of how
 * good any predictor is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/workload.h"
#include "sim/sim.h"

/* cmocka 1.1 has no floating-point assertion. */
#define assert_near(a, b, eps) near_check((a), (b), (eps), #a, __LINE__)

static void near_check(double a, double b, double eps, const char *what,
                       int line)
{
    if (!(fabs(a - b) <= eps))
        fail_msg("line %d: %s = %.17g, expected %.17g", line, what, a, b);
}

/* Reads a workload from a string; fails the test on an error. */
static void wl_from(const char *text, wl_workload *wl)
{
    char err[512];
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    int rc = wl_read(f, "test.jsonl", wl, err, sizeof err);
    fclose(f);
    if (rc)
        fail_msg("%s", err);
}

/* Reads text expecting an error that contains every given fragment. */
static void wl_bad(const char *text, ...)
{
    char err[512] = "";
    wl_workload wl;
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    int rc = wl_read(f, "bad.jsonl", &wl, err, sizeof err);
    fclose(f);
    assert_int_equal(rc, -1);
    assert_int_equal(wl.n, 0);
    assert_null(wl.jobs);
    va_list ap;
    va_start(ap, text);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err, frag))
            fail_msg("error '%s' does not mention '%s'", err, frag);
    va_end(ap);
}

static void run_prior(const wl_workload *wl, const char *policy,
                      double cores, int prior, sim_result *r)
{
    sim_config c;
    char err[512];
    sim_config_init(&c);
    assert_int_equal(sim_parse_run(policy, SLAQ_PRED_AUTO, &c), 0);
    c.sched.cores = cores;
    c.sched.prior = prior;
    if (sim_run(wl, &c, r, err, sizeof err))
        fail_msg("%s", err);
}

static void run(const wl_workload *wl, const char *policy, double cores,
                sim_result *r)
{
    run_prior(wl, policy, cores, 1, r);
}

/* One job alone finishes at exactly work / cores after the first epoch
 * boundary at or after its arrival (decisions are made only there). */
static void test_alone_work_over_cores(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":3,\"iter_cpu_s\":7,"
            "\"loss\":[1,0.5,0.3,0.2,0.15,0.1,0.08,0.06,0.05,0.04,0.03]}\n",
            &wl);
    const char *pol[] = {"fair", "slaq", "slaq:strawman", "slaq-maxmin",
                         "oracle"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        sim_result r;
        run(&wl, pol[p], 8, &r);
        /* Arrives at 3, waits for the boundary at 4 (T = 2), then
         * 10 iterations × 7 CPU-s on 8 cores. */
        assert_near(r.jobs[0].completion, 4 + 70.0 / 8, 1e-9);
        sim_result_free(&r);
    }
    wl_free(&wl);
}

/* The job's parallelism limit caps its speed. */
static void test_alone_max_cores(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":6,\"max_cores\":4,"
            "\"loss\":[4,3,2,1,0]}\n", &wl);
    sim_result r;
    run(&wl, "fair", 100, &r);
    assert_near(r.jobs[0].completion, 24.0 / 4, 1e-9);
    sim_result_free(&r);
    wl_free(&wl);
}

/* Time to X% is measured at completed iterations (docs/metrics.md). */
static void test_time_to_reduction(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":2,"
            "\"loss\":[10,9,8,7,6,5,4,3,2,1,0]}\n", &wl);
    sim_result r;
    run(&wl, "fair", 4, &r); /* an iteration every 0.5 s */
    assert_near(r.jobs[0].tx[sim_x_index(50)], 2.5, 1e-9);
    assert_near(r.jobs[0].tx[sim_x_index(90)], 4.5, 1e-9);
    assert_near(r.jobs[0].tx[sim_x_index(95)], 5.0, 1e-9);
    assert_near(r.jobs[0].tx[sim_x_index(99)], 5.0, 1e-9);
    /* Epoch boundaries at 0, 2 and 4 s see ℓ = 1, 0.6 and 0.2. */
    sim_summary s;
    sim_summarize(&r, &s);
    assert_int_equal(r.nsamples, 3);
    assert_near(s.avg_norm_loss, (1 + 0.6 + 0.2) / 3, 1e-12);
    assert_near(s.makespan, 5.0, 1e-9);
    sim_result_free(&r);
    wl_free(&wl);
}

/* Two identical jobs under fair share equally and finish together. */
static void test_fair_identical_together(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":1,\"iter_cpu_s\":5,"
            "\"loss\":[1,0.6,0.4,0.3,0.25]}\n"
            "{\"id\":\"b\",\"arrival_s\":1,\"iter_cpu_s\":5,"
            "\"loss\":[1,0.6,0.4,0.3,0.25]}\n", &wl);
    sim_result r;
    run(&wl, "fair", 10, &r);
    assert_true(r.jobs[0].completion == r.jobs[1].completion);
    assert_near(r.jobs[0].completion, 2 + 40.0 / 10, 1e-9);
    sim_result_free(&r);
    wl_free(&wl);
}

/* Like slaqd, the simulator decides at epoch boundaries only: a job that
 * arrives mid-epoch waits for the next one, and a departure's cores stay
 * idle until then. */
static void test_decisions_only_at_epoch_boundaries(void **state)
{
    (void)state;
    wl_workload wl;
    /* a: 1 iteration of 3 CPU-s from 0; b arrives at 0.5. 4 cores, T = 2:
     * at 0 a gets all 4 cores and ends at 0.75; b waits until 2, then has
     * all 4 cores: its 2 iterations of 4 CPU-s end at 4. */
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":3,"
            "\"loss\":[2,1]}\n"
            "{\"id\":\"b\",\"arrival_s\":0.5,\"iter_cpu_s\":4,"
            "\"loss\":[3,2,1]}\n", &wl);
    const char *pol[] = {"fair", "slaq", "oracle"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        sim_result r;
        run(&wl, pol[p], 4, &r);
        assert_near(r.jobs[0].completion, 0.75, 1e-9);
        assert_near(r.jobs[1].completion, 4, 1e-9);
        for (size_t i = 0; i < r.nepochs; i++)
            assert_near(fmod(r.epochs[i].t, 2.0), 0, 0);
        assert_int_equal(r.nepochs, 2); /* at 0 and 2 */
        sim_result_free(&r);
    }
    wl_free(&wl);
}

/* A job that leaves hands its cores to the others at once. */
static void test_departure_redivides(void **state)
{
    (void)state;
    wl_workload wl;
    /* a: 2 iterations of 4; b: 4 iterations of 4; 8 cores, fair. Both run
     * on 4 cores: a ends at 2 s, b has done 2 iterations and runs its last
     * 2 (8 CPU-s) on 8 cores: 1 s more. */
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":4,"
            "\"loss\":[3,2,1]}\n"
            "{\"id\":\"b\",\"arrival_s\":0,\"iter_cpu_s\":4,"
            "\"loss\":[5,4,3,2,1]}\n", &wl);
    sim_result r;
    run(&wl, "fair", 8, &r);
    assert_near(r.jobs[0].completion, 2.0, 1e-9);
    assert_near(r.jobs[1].completion, 3.0, 1e-9);
    sim_result_free(&r);
    wl_free(&wl);
}

/* A converged job (flat loss) gets only its minimum share under slaq,
 * once the other has left its start-up (its first 3 iterations, at its
 * fair share of 8 cores: 2 s each). */
static void test_converged_minimum_share(void **state)
{
    (void)state;
    char buf[8192];
    size_t len = 0;
    /* a: converged after one iteration, 200 flat iterations; b: arrives at
     * t = 10 with a loss that keeps falling. */
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":16,"
                            "\"loss\":[1");
    for (int k = 1; k <= 200; k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, ",0.1");
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "]}\n{\"id\":\"b\",\"arrival_s\":10,"
                            "\"iter_cpu_s\":16,\"loss\":[1");
    for (int k = 1; k <= 60; k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, ",%.6f",
                                1.0 / (1 + 0.2 * k));
    snprintf(buf + len, sizeof buf - len, "]}\n");
    wl_workload wl;
    wl_from(buf, &wl);
    const char *pol[] = {"slaq", "slaq:slaq-fit", "slaq:strawman", "oracle"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        sim_result r;
        run(&wl, pol[p], 16, &r);
        /* While both run, b ranks "high" and a "low" (ℓ_a = 0 < ℓ_b). */
        size_t both = 0;
        for (size_t i = 0; i < r.nsamples; i++) {
            const sim_sample *s = &r.samples[i];
            /* In b's last epoch its remaining iterations cannot use 15
             * cores; what it cannot use may go to a. */
            double b_end = r.jobs[1].completion;
            if (s->active != 2 || s->t < 10 + 3 * 2 + 2 || s->t >= b_end - 2)
                continue;
            both++;
            if (s->cores[SIM_LOW] != 1 || s->cores[SIM_HIGH] != 15)
                fail_msg("%s at t=%g: converged job has %g cores, the other "
                         "%g", pol[p], s->t, s->cores[SIM_LOW],
                         s->cores[SIM_HIGH]);
        }
        assert_true(both > 5);
        sim_result_free(&r);
    }
    wl_free(&wl);
}

/* Loss groups: ranked by ℓ, ties by arrival; top 25% high, next 25%
 * medium, bottom 50% low (docs/metrics.md). */
static void test_loss_groups(void **state)
{
    (void)state;
    wl_workload wl;
    /* Four jobs at t = 0 with ℓ = 1; 8 cores, fair: 2 cores each. At t = 2
     * job d (1 CPU-s iterations) has run 4 iterations, c 1, a and b none. */
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":50,"
            "\"loss\":[1,0.5,0]}\n"
            "{\"id\":\"b\",\"arrival_s\":0,\"iter_cpu_s\":50,"
            "\"loss\":[1,0.5,0]}\n"
            "{\"id\":\"c\",\"arrival_s\":0,\"iter_cpu_s\":4,"
            "\"loss\":[1,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0]}\n"
            "{\"id\":\"d\",\"arrival_s\":0,\"iter_cpu_s\":1,"
            "\"loss\":[1,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0]}\n", &wl);
    sim_result r;
    run(&wl, "fair", 8, &r);
    assert_true(r.nsamples >= 2);
    const sim_sample *s0 = &r.samples[0], *s1 = &r.samples[1];
    assert_int_equal(s0->active, 4);
    assert_near(s0->avg_norm_loss, 1, 1e-12);
    assert_near(s0->cores[SIM_HIGH], 2, 1e-12);
    assert_near(s0->cores[SIM_MEDIUM], 2, 1e-12);
    assert_near(s0->cores[SIM_LOW], 4, 1e-12);
    assert_near(s1->t, 2, 0);
    assert_near(s1->avg_norm_loss, (1 + 1 + 0.9 + 0.6) / 4, 1e-12);
    sim_summary sum;
    sim_summarize(&r, &sum);
    assert_near(sum.share[SIM_HIGH] + sum.share[SIM_MEDIUM] +
                sum.share[SIM_LOW], 1, 1e-12);
    sim_result_free(&r);
    wl_free(&wl);
}

/* A small mixed workload, built deterministically. */
static void mixed_workload(wl_workload *wl)
{
    char *buf = malloc(1 << 16);
    size_t len = 0;
    assert_non_null(buf);
    for (int j = 0; j < 12; j++) {
        len += (size_t)snprintf(buf + len, (1 << 16) - len,
                                "{\"id\":\"j%d\",\"arrival_s\":%d,"
                                "\"iter_cpu_s\":%d,\"max_cores\":%d,"
                                "\"loss\":[", j, 3 * j, 10 + 7 * (j % 5),
                                4 + j % 3 * 4);
        for (int k = 0; k <= 20 + j; k++)
            len += (size_t)snprintf(buf + len, (1 << 16) - len, "%s%.6f",
                                    k ? "," : "",
                                    j % 2 ? 1.0 / (1 + 0.1 * (j + 1) * k)
                                          : pow(0.8 + 0.01 * j, k));
        len += (size_t)snprintf(buf + len, (1 << 16) - len, "]}\n");
    }
    wl_from(buf, wl);
    free(buf);
}

/* Renders a run's outputs (without wall-clock numbers) into a string. */
static char *render(const wl_workload *wl, const char *policy)
{
    sim_result r;
    char *text = NULL;
    size_t len = 0;
    run(wl, policy, 24, &r);
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(sim_write_timeline(f, &r), 0);
    assert_int_equal(sim_write_jobs(f, wl, &r), 0);
    fclose(f);
    sim_result_free(&r);
    return text;
}

static void test_deterministic(void **state)
{
    (void)state;
    wl_workload wl;
    mixed_workload(&wl);
    const char *pol[] = {"fair", "slaq", "oracle"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        char *a = render(&wl, pol[p]), *b = render(&wl, pol[p]);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    wl_free(&wl);
}

/* Every job completes all its iterations; capacity is never exceeded. */
static void test_conservation(void **state)
{
    (void)state;
    wl_workload wl;
    mixed_workload(&wl);
    const char *pol[] = {"fair", "slaq", "slaq-maxmin", "oracle"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        sim_result r;
        run(&wl, pol[p], 24, &r);
        for (size_t i = 0; i < r.njobs; i++) {
            const wl_job *w = &wl.jobs[i];
            double work = w->iter_cpu_s * (double)(w->nlosses - 1);
            /* No job can finish faster than on all its usable cores. */
            double fastest = work / fmin(w->max_cores, 24);
            assert_true(r.jobs[i].completion - r.jobs[i].arrival >=
                        fastest - 1e-9);
            for (int x = 1; x < SIM_NX; x++)
                assert_true(r.jobs[i].tx[x] >= r.jobs[i].tx[x - 1]);
        }
        for (size_t i = 0; i < r.nsamples; i++) {
            const double *c = r.samples[i].cores;
            assert_true(c[0] + c[1] + c[2] <= 24 + 1e-9);
        }
        sim_result_free(&r);
    }
    wl_free(&wl);
}

static void test_arrival_scale(void **state)
{
    (void)state;
    wl_workload wl;
    mixed_workload(&wl);
    assert_near(sim_mean_interarrival(&wl), 3.0, 1e-12);
    sim_config c;
    char err[256];
    sim_result r;
    sim_config_init(&c);
    c.sched.policy = SLAQ_POLICY_FAIR;
    c.sched.cores = 24;
    c.arrival_scale = 10.0 / 3;
    assert_int_equal(sim_run(&wl, &c, &r, err, sizeof err), 0);
    assert_near(r.jobs[11].arrival, 110.0, 1e-9);
    sim_result_free(&r);
    wl_free(&wl);
}

static void test_parse_run(void **state)
{
    (void)state;
    sim_config c;
    sim_config_init(&c);
    assert_int_equal(sim_parse_run("oracle", SLAQ_PRED_AUTO, &c), 0);
    assert_int_equal(c.sched.policy, SLAQ_POLICY_SLAQ);
    assert_int_equal(c.sched.predictor, SLAQ_PRED_ORACLE);
    assert_int_equal(sim_parse_run("slaq:strawman", SLAQ_PRED_AUTO, &c), 0);
    assert_int_equal(c.sched.predictor, SLAQ_PRED_STRAWMAN);
    assert_int_equal(sim_parse_run("slaq-maxmin", SLAQ_PRED_SLAQ_FIT, &c), 0);
    assert_int_equal(c.sched.policy, SLAQ_POLICY_MAXMIN);
    assert_int_equal(c.sched.predictor, SLAQ_PRED_SLAQ_FIT);
    assert_int_equal(sim_parse_run("fifo", SLAQ_PRED_AUTO, &c), -1);
    assert_int_equal(sim_parse_run("slaq:oracle", SLAQ_PRED_AUTO, &c), -1);
    assert_int_equal(sim_parse_run("oracle:auto", SLAQ_PRED_AUTO, &c), -1);
}

static void test_reader_accepts_format(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("\n{\"id\": \"j17\", \"arrival_s\": 63.2, \"iter_cpu_s\": 41.5, "
            "\"max_cores\": 64, \"weight\": 2, \"algorithm\": \"svm\", "
            "\"extra\": {\"x\": 1}, \"loss\": [1.0, 0.77, 0.63]}\n\n"
            "{\"id\":\"j2\",\"arrival_s\":0,\"iter_cpu_s\":1,"
            "\"loss\":[2,1]}\n", &wl);
    assert_int_equal(wl.n, 2);
    assert_string_equal(wl.jobs[0].id, "j17");
    assert_string_equal(wl.jobs[0].algorithm, "svm");
    assert_int_equal(wl.jobs[0].line, 2);
    assert_int_equal(wl.jobs[0].nlosses, 3);
    assert_near(wl.jobs[0].weight, 2, 0);
    assert_true(isinf(wl.jobs[1].max_cores));
    assert_near(wl.jobs[1].weight, 1, 0);
    assert_string_equal(wl.jobs[1].algorithm, "");

    /* What the writer writes, the reader reads back exactly. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    for (size_t i = 0; i < wl.n; i++)
        assert_int_equal(wl_write_job(f, &wl.jobs[i]), 0);
    fclose(f);
    wl_workload back;
    wl_from(text, &back);
    assert_int_equal(back.n, 2);
    for (size_t k = 0; k < 3; k++)
        assert_true(back.jobs[0].loss[k] == wl.jobs[0].loss[k]);
    assert_true(isinf(back.jobs[1].max_cores));
    free(text);
    wl_free(&back);
    wl_free(&wl);
}

static void test_reader_errors(void **state)
{
    (void)state;
    const char *ok = "{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,"
                     "\"loss\":[1,0]}\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s{\"id\":\"c\",\"arrival_s\":0,"
             "\"loss\":[1,0]}\n", ok, "\n");
    wl_bad(buf, "bad.jsonl:3", "iter_cpu_s", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,"
           "\"convergence\":\"fast\",\"loss\":[1,0]}",
           "bad.jsonl:1", "convergence", "sublinear", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":-1,\"iter_cpu_s\":1,\"loss\":[1,0]}",
           "bad.jsonl:1", "arrival_s", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,\"loss\":[1]}",
           "bad.jsonl:1", "loss", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,"
           "\"loss\":[1,\"x\"]}", "bad.jsonl:1", "loss", "element 1", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":\"1\","
           "\"loss\":[1,0]}", "iter_cpu_s", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,\"max_cores\":0,"
           "\"loss\":[1,0]}", "max_cores", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,\"weight\":-2,"
           "\"loss\":[1,0]}", "weight", NULL);
    wl_bad("{\"id\":7,\"arrival_s\":0,\"iter_cpu_s\":1,\"loss\":[1,0]}",
           "bad.jsonl:1", "'id'", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,", "bad.jsonl:1:24: malformed JSON",
           NULL);
    wl_bad("[1,2]\n", "bad.jsonl:1:1: expected a JSON object", NULL);
    snprintf(buf, sizeof buf, "%s%s", ok, ok);
    wl_bad(buf, "bad.jsonl:2", "id", "line 1", NULL);
    wl_bad("\n\n", "no jobs", NULL);
    /* The format's caps, each with the value that was refused. */
    wl_bad("{\"id\":\"a\",\"arrival_s\":1e308,\"iter_cpu_s\":1,"
           "\"loss\":[1,0]}", "bad.jsonl:1", "arrival_s", "<= 1e+09",
           "got 1e+308", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1e308,"
           "\"loss\":[1,0]}", "bad.jsonl:1", "iter_cpu_s", "<= 1e+09", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,"
           "\"max_cores\":1e-300,\"loss\":[1,0]}", "max_cores",
           ">= 0.001", "got 1e-300", NULL);
    wl_bad("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":1,"
           "\"weight\":1e300,\"loss\":[1,0]}", "weight", "<= 1e+06", NULL);
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":1e9,\"iter_cpu_s\":1e9,"
            "\"max_cores\":0.001,\"weight\":1e-6,\"loss\":[1,0]}", &wl);
    assert_int_equal(wl.n, 1);
    wl_free(&wl);
}

/* Four geometric curves; with `declare`, most declare themselves
 * sublinear (so slaq-fit must fit them with the rational family). */
static void conv_workload(int declare, wl_workload *wl)
{
    static char text[16384];
    const double mu[4] = {0.7, 0.8, 0.75, 0.85};
    const char *cls[4] = {"sublinear", "sublinear", "superlinear",
                          "sublinear"};
    size_t len = 0;
    for (int i = 0; i < 4; i++) {
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "{\"id\":\"j%d\",\"arrival_s\":%d,"
                                "\"iter_cpu_s\":%d,", i, i, 2 + i);
        if (declare)
            len += (size_t)snprintf(text + len, sizeof text - len,
                                    "\"convergence\":\"%s\",", cls[i]);
        len += (size_t)snprintf(text + len, sizeof text - len, "\"loss\":[");
        for (int k = 0; k < 40; k++)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%.17g",
                                    k ? "," : "", 3 * pow(mu[i], k) + 0.5);
        len += (size_t)snprintf(text + len, sizeof text - len, "]}\n");
    }
    wl_from(text, wl);
}

/* The workload's declared class reaches the core: it changes what
 * slaq-fit does (and so the schedule), and nothing for the strawman,
 * whose forecasts ignore it, without the class priors; with them, a job
 * is valued by its class's prior until its loss moves, whatever the
 * predictor. */
static void test_declared_convergence_reaches_the_core(void **state)
{
    (void)state;
    wl_workload with, without;
    conv_workload(1, &with);
    conv_workload(0, &without);
    const char *runs[] = {"slaq:slaq-fit", "slaq:strawman", "slaq:strawman"};
    for (int ri = 0; ri < 3; ri++) {
        sim_result a, b;
        run_prior(&with, runs[ri], 8, ri != 1, &a);
        run_prior(&without, runs[ri], 8, ri != 1, &b);
        int same = 1;
        for (size_t i = 0; i < a.njobs; i++)
            same &= a.jobs[i].completion == b.jobs[i].completion &&
                    a.jobs[i].tx[sim_x_index(90)] ==
                        b.jobs[i].tx[sim_x_index(90)];
        if (ri == 0 && same)
            fail_msg("slaq-fit scheduled the same with and without the "
                     "declared classes");
        if (ri == 1 && !same)
            fail_msg("the strawman changed with the declared classes");
        if (ri == 2 && same)
            fail_msg("the class priors ignored the declared classes");
        sim_result_free(&a);
        sim_result_free(&b);
    }
    wl_free(&with);
    wl_free(&without);
}

/* --------------------------------------------------------------- replay */

enum { TR_MAX = 4096 };

typedef struct trace {
    size_t nrep, nal;
    size_t rep_job[TR_MAX];
    slaq_report rep[TR_MAX];
    double al_t[TR_MAX], al_a[TR_MAX];
    size_t al_job[TR_MAX];
} trace;

static void tr_report(void *arg, size_t job, const slaq_report *r)
{
    trace *t = arg;
    assert_true(t->nrep < TR_MAX);
    t->rep_job[t->nrep] = job;
    t->rep[t->nrep++] = *r;
}

static void tr_alloc(void *arg, double when, size_t job, double cores)
{
    trace *t = arg;
    assert_true(t->nal < TR_MAX);
    t->al_t[t->nal] = when;
    t->al_job[t->nal] = job;
    t->al_a[t->nal++] = cores;
}

/*
 * The simulator's decisions are slaqd's: its report stream, replayed the
 * way slaqd receives it (each report when it is made; a job added at its
 * first report, removed after its last) into a slaq_sched that is asked
 * for an allocation at the same epoch times, gives the same allocation to
 * every job at every epoch — and those times are all epoch boundaries.
 */
/* Expects sim_config_check to refuse c on wl with every given fragment in
 * its message, and sim_run to refuse it the same way. */
static void check_refused(const sim_config *c, const wl_workload *wl, ...)
{
    char err[512] = "", err2[512] = "";
    sim_result r;
    assert_int_equal(sim_config_check(c, wl, err, sizeof err), -1);
    assert_int_equal(sim_run(wl, c, &r, err2, sizeof err2), -1);
    assert_string_equal(err, err2);
    assert_null(r.jobs);
    va_list ap;
    va_start(ap, wl);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err, frag))
            fail_msg("error '%s' does not mention '%s'", err, frag);
    va_end(ap);
}

/* Options and workloads that would run without bound are refused before
 * the run, naming the option or the job and the cap; values just inside
 * the caps are accepted. */
static void test_config_check_caps(void **state)
{
    (void)state;
    wl_workload wl;
    char err[512];
    wl_from("{\"id\": \"a\", \"arrival_s\": 0, \"iter_cpu_s\": 2, "
            "\"loss\": [1, 0.5, 0.25]}\n"
            "{\"id\": \"b\", \"arrival_s\": 10, \"iter_cpu_s\": 1e9, "
            "\"max_cores\": 0.001, \"loss\": [1, 0.5]}\n", &wl);
    sim_config c;
    sim_config_init(&c);
    c.sched.cores = 4;
    /* Job b alone needs 1e12 s: 5e11 epochs of 2 s. */
    check_refused(&c, &wl, "job b (line 2)", "max_cores", "1000000 epochs",
                  NULL);
    wl.jobs[1].max_cores = INFINITY;
    wl.jobs[1].iter_cpu_s = 4e6; /* 1e6 s on 4 cores: 5e5 epochs */
    assert_int_equal(sim_config_check(&c, &wl, err, sizeof err), 0);
    c.sched.epoch_s = 0.5; /* 2e6 epochs */
    check_refused(&c, &wl, "job b (line 2)", "--cores", "--epoch 0.5", NULL);
    c.sched.epoch_s = 2;
    wl.jobs[1].iter_cpu_s = 1;
    c.sched.unit = 1e-12;
    check_refused(&c, &wl, "--unit 1e-12", "cap of 100000", NULL);
    c.sched.unit = 4.0 / SIM_MAX_UNITS;
    assert_int_equal(sim_config_check(&c, &wl, err, sizeof err), 0);
    c.sched.unit = 1;
    c.nodes = SIM_MAX_NODES + 1;
    c.sched.cores = (double)c.nodes;
    check_refused(&c, &wl, "--nodes 10001", "cap of 10000", NULL);
    c.nodes = 4;
    c.sched.cores = 1e-300;
    check_refused(&c, &wl, "a node's cores", NULL);
    c.nodes = 0;
    c.sched.cores = 4;
    c.sched.epoch_s = 1e-9; /* arrival 10 s is boundary 1e10: fine, but the
                         jobs' work is 1e9 epochs */
    check_refused(&c, &wl, "epochs of --epoch 1e-09", NULL);
    wl.jobs[1].arrival_s = 1e9;
    wl.jobs[0].iter_cpu_s = wl.jobs[1].iter_cpu_s = 1e-12;
    c.sched.epoch_s = 1e-7; /* boundary 1e16 */
    check_refused(&c, &wl, "job b (line 2)", "arrival_s 1e+09", NULL);
    c.sched.epoch_s = NAN;
    check_refused(&c, &wl, "--epoch", NULL);
    wl_free(&wl);
}

static void test_replay_gives_the_same_allocations(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\":\"a\",\"arrival_s\":0,\"iter_cpu_s\":3,"
            "\"convergence\":\"superlinear\","
            "\"loss\":[5,3,2,1.5,1.2,1.1,1.05,1.02,1.01,1.005]}\n"
            "{\"id\":\"b\",\"arrival_s\":0.7,\"iter_cpu_s\":5,\"weight\":2,"
            "\"loss\":[9,8,7.2,6.5,6,5.7,5.5,5.4,5.35]}\n"
            "{\"id\":\"c\",\"arrival_s\":3.1,\"iter_cpu_s\":2,"
            "\"convergence\":\"sublinear\","
            "\"max_cores\":3,\"loss\":[2,1,0.5,0.25,0.125,0.0625,0.03]}\n"
            "{\"id\":\"d\",\"arrival_s\":5.5,\"iter_cpu_s\":8,"
            "\"loss\":[1,0.9,0.82,0.76,0.72,0.7,0.69]}\n"
            "{\"id\":\"e\",\"arrival_s\":6,\"iter_cpu_s\":1,"
            "\"loss\":[3,2.5,2.2,2.1,2.05,2.02,2.01,2.005]}\n"
            "{\"id\":\"f\",\"arrival_s\":9.3,\"iter_cpu_s\":4,"
            "\"loss\":[7,5,4,3.5,3.2,3.1,3.05,3.02,3.01]}\n",
            &wl);
    const char *runs[] = {"fair", "slaq", "slaq:strawman", "slaq:slaq-fit",
                          "slaq-maxmin"};
    for (size_t ri = 0; ri < sizeof runs / sizeof *runs; ri++) {
        static trace tr;
        memset(&tr, 0, sizeof tr);
        sim_config c;
        char err[512];
        sim_config_init(&c);
        assert_int_equal(sim_parse_run(runs[ri], SLAQ_PRED_AUTO, &c), 0);
        c.sched.cores = 6;
        c.on_report = tr_report;
        c.on_alloc = tr_alloc;
        c.trace_arg = &tr;
        sim_result r;
        if (sim_run(&wl, &c, &r, err, sizeof err))
            fail_msg("%s", err);
        assert_true(tr.nal > 10);

        slaq_sched_config sc;
        slaq_sched_config_init(&sc);
        sc.policy = c.sched.policy;
        sc.predictor = c.sched.predictor;
        sc.cores = c.sched.cores;
        sc.epoch_s = c.sched.epoch_s;
        sc.unit = c.sched.unit;
        sc.normalise = c.sched.normalise;
        sc.startup_reports = c.sched.startup_reports;
        sc.hysteresis = c.sched.hysteresis;
        sc.horizon_s = c.sched.horizon_s;
        sc.damping = c.sched.damping;
        slaq_sched *s = slaq_sched_new(&sc);
        slaq_job *sj[16] = {0};
        size_t next = 0, checked = 0;
        for (size_t i = 0; i < tr.nal;) {
            double te = tr.al_t[i];
            assert_near(fmod(te, c.sched.epoch_s), 0, 0);
            for (; next < tr.nrep && tr.rep[next].t <= te; next++) {
                size_t jx = tr.rep_job[next];
                const wl_job *w = &wl.jobs[jx];
                if (tr.rep[next].iter == 0) {
                    slaq_job_opts o;
                    slaq_job_opts_init(&o);
                    o.weight = w->weight;
                    o.max_cores = w->max_cores;
                    assert_int_equal(slaq_convergence_parse(w->convergence,
                                                            &o.convergence),
                                     SLAQ_OK);
                    if (c.declare_iters)
                        o.iters = w->nlosses - 1;
                    sj[jx] = slaq_sched_add(s, &o, tr.rep[next].t);
                    assert_non_null(sj[jx]);
                }
                assert_int_equal(slaq_job_report(sj[jx], &tr.rep[next]),
                                 SLAQ_OK);
                if (tr.rep[next].iter + 1 == w->nlosses) {
                    slaq_sched_remove(s, sj[jx]);
                    sj[jx] = NULL;
                }
            }
            assert_int_equal(slaq_sched_epoch(s, te), SLAQ_OK);
            size_t active = 0;
            for (; i < tr.nal && tr.al_t[i] == te; i++, active++) {
                assert_non_null(sj[tr.al_job[i]]);
                if (slaq_job_alloc(sj[tr.al_job[i]]) != tr.al_a[i])
                    fail_msg("%s: t=%g job %s: replay %.17g, simulator "
                             "%.17g", runs[ri], te, wl.jobs[tr.al_job[i]].id,
                             slaq_job_alloc(sj[tr.al_job[i]]), tr.al_a[i]);
                checked++;
            }
            assert_int_equal(active, slaq_sched_count(s));
        }
        assert_int_equal(checked, tr.nal);
        slaq_sched_free(s);
        sim_result_free(&r);
    }
    wl_free(&wl);
}

/* A job's goal in the workload: deadline_s, accuracy, direction and
 * urgency are read, defaulted when absent (no deadline, no accuracy,
 * urgency 1), written back, and refused with the field named. */
static void test_workload_goal_fields(void **state)
{
    (void)state;
    wl_workload wl;
    wl_from("{\"id\": \"a\", \"arrival_s\": 10, \"iter_cpu_s\": 1, "
            "\"deadline_s\": 500, \"accuracy\": 0.25, \"direction\": "
            "\"min\", \"urgency\": 9, \"loss\": [1, 0.5]}\n"
            "{\"id\": \"b\", \"arrival_s\": 0, \"iter_cpu_s\": 1, "
            "\"loss\": [1, 0.5]}\n", &wl);
    slaq_goal g;
    wl_job_goal(&wl.jobs[0], &g);
    assert_true(g.deadline == 500 && g.accuracy == 0.25);
    assert_int_equal(g.maximize, 0);
    assert_int_equal(g.urgency, 9);
    wl_job_goal(&wl.jobs[1], &g);
    assert_true(isinf(g.deadline) && isnan(g.accuracy));
    assert_int_equal(g.maximize, 1);
    assert_int_equal(g.urgency, 1);
    char buf[512];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(wl_write_job(f, &wl.jobs[0]), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"deadline_s\": 500.000000, \"accuracy\": "
                            "0.25, \"direction\": \"min\", \"urgency\": 9"));
    wl_free(&wl);
    wl_bad("{\"id\": \"a\", \"arrival_s\": 10, \"iter_cpu_s\": 1, "
           "\"deadline_s\": 5, \"loss\": [1, 0.5]}\n", "bad.jsonl:1",
           "field 'deadline_s'", ">= 10", NULL);
    wl_bad("{\"id\": \"a\", \"arrival_s\": 0, \"iter_cpu_s\": 1, "
           "\"urgency\": 11, \"loss\": [1, 0.5]}\n", "field 'urgency'",
           NULL);
    wl_bad("{\"id\": \"a\", \"arrival_s\": 0, \"iter_cpu_s\": 1, "
           "\"urgency\": 2.5, \"loss\": [1, 0.5]}\n", "field 'urgency'",
           "whole number", NULL);
    wl_bad("{\"id\": \"a\", \"arrival_s\": 0, \"iter_cpu_s\": 1, "
           "\"accuracy\": \"high\", \"loss\": [1, 0.5]}\n",
           "field 'accuracy'", NULL);
    wl_bad("{\"id\": \"a\", \"arrival_s\": 0, \"iter_cpu_s\": 1, "
           "\"direction\": \"up\", \"loss\": [1, 0.5]}\n",
           "field 'direction'", "\"max\"", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_goal_fields),
        cmocka_unit_test(test_alone_work_over_cores),
        cmocka_unit_test(test_alone_max_cores),
        cmocka_unit_test(test_time_to_reduction),
        cmocka_unit_test(test_fair_identical_together),
        cmocka_unit_test(test_decisions_only_at_epoch_boundaries),
        cmocka_unit_test(test_departure_redivides),
        cmocka_unit_test(test_converged_minimum_share),
        cmocka_unit_test(test_loss_groups),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_conservation),
        cmocka_unit_test(test_arrival_scale),
        cmocka_unit_test(test_parse_run),
        cmocka_unit_test(test_reader_accepts_format),
        cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_replay_gives_the_same_allocations),
        cmocka_unit_test(test_config_check_caps),
        cmocka_unit_test(test_declared_convergence_reaches_the_core),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
