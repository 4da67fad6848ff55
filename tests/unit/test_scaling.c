/*
 * test_scaling.c — the scaling model (include/slaq/scaling.h): its fit
 * from a job's reports, its speed-ups for the allocator, and its thread
 * advice with exploration.
 */
#include "slaq/slaq.h"
#include "slaq/scaling.h"
#include "testutil.h"

#include <string.h>

/* Feeds k reports of a job whose iteration holds y(t) = a·(1 + σ(t−1) +
 * κt(t−1)) core-seconds, at t threads on a share of t cores. */
static void feed(slaq_scaling *m, double a, double sigma, double kappa,
                 int t, int k)
{
    double y = a * (1 + sigma * (t - 1) + kappa * t * (t - 1));
    for (int i = 0; i < k; i++)
        assert_int_equal(slaq_scaling_observe(m, t, t, y / t * 10, 0, 10),
                         SLAQ_OK);
}

static void test_empty_model_uses_the_prior_and_advises_one_thread(
    void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    assert_false(m.known);
    assert_true(isnan(slaq_scaling_speed(&m, 2, 2)));
    assert_int_equal(slaq_scaling_threads(&m, 8), 1);
    /* the prior σ = 0.5: two cores are 4/3 of one */
    assert_near(slaq_scaling_speedup(&m, 2), 2 / 1.5, 1e-12);
    assert_near(slaq_scaling_speedup(&m, 1), 1, 0);
    assert_near(slaq_scaling_speedup(&m, 0.5), 0.5, 0);
    assert_near(slaq_scaling_speedup(&m, 0), 0, 0);
}

static void test_two_thread_counts_fit_the_serial_fraction(void **state)
{
    (void)state;
    /* scikit-learn's MLP: 19.0 s with 1 thread, 14.3 s with 2 */
    slaq_scaling m;
    slaq_scaling_init(&m);
    feed(&m, 19.0, 0, 0, 1, 3);
    assert_false(m.known);
    assert_int_equal(slaq_scaling_threads(&m, 2), 2); /* try the second */
    assert_near(m.a, 19.0, 1e-9);
    slaq_scaling_observe(&m, 2, 2, 14.3, 0, 1);
    assert_true(m.known);
    assert_near(m.sigma, 2 * 14.3 / 19.0 - 1, 1e-9);
    assert_near(slaq_scaling_speed(&m, 2, 2), 1 / 14.3, 1e-9);
    assert_near(slaq_scaling_speedup(&m, 2), 19.0 / 14.3, 1e-9);
}

static void test_three_counts_fit_contention(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    feed(&m, 2.0, 0.1, 0.05, 1, 3);
    feed(&m, 2.0, 0.1, 0.05, 2, 3);
    feed(&m, 2.0, 0.1, 0.05, 4, 3);
    assert_true(m.known);
    assert_near(m.a, 2.0, 1e-9);
    assert_near(m.sigma, 0.1, 1e-9);
    assert_near(m.kappa, 0.05, 1e-9);
    assert_near(m.rel_sd, 0, 1e-9);
    /* the peak of t / (1 + 0.1(t−1) + 0.05t(t−1)) is at t = √18 ≈ 4.2:
     * 8 cores are worth what 4 threads do, not more */
    double s4 = 4 / (1 + 0.3 + 0.6);
    assert_near(slaq_scaling_speedup(&m, 8), s4, 1e-12);
    assert_true(slaq_scaling_speedup(&m, 3) < s4);
}

/* The PyTorch MLP: 3.7× slower with two threads than one, on two cores.
 * Two cores are worth one: the model says so, and advises 1 thread. */
static void test_a_job_slower_with_more_threads(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    feed(&m, 0.128, 0, 0, 1, 3);
    for (int i = 0; i < 3; i++) /* two threads: 3.7× the wall time */
        slaq_scaling_observe(&m, 2, 2, 3.7 * 0.128 * 10, 0, 10);
    assert_true(m.known);
    assert_near(m.sigma, 2 * 3.7 - 1, 1e-9);
    assert_near(slaq_scaling_speedup(&m, 2), 1, 1e-12);
    assert_near(slaq_scaling_speedup(&m, 1.5), 1, 1e-12);
    assert_int_equal(slaq_scaling_threads(&m, 2), 1);
    assert_int_equal(slaq_scaling_threads(&m, 16), 1);
}

static void test_linear_is_exactly_the_cores(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init_linear(&m);
    double n[] = {0.1, 0.5, 1, 1.5, 1.75, 2, 3.3, 7, 100, 1e4};
    for (size_t i = 0; i < sizeof n / sizeof *n; i++) {
        assert_true(slaq_scaling_speedup(&m, n[i]) == n[i]);
        assert_true(slaq_scaling_speedup(NULL, n[i]) == n[i]);
    }
    /* a job measured linear at 1, 2 and 3 threads: σ = κ = 0 */
    slaq_scaling_init(&m);
    feed(&m, 1.0, 0, 0, 1, 2);
    feed(&m, 1.0, 0, 0, 2, 2);
    feed(&m, 1.0, 0, 0, 3, 2);
    assert_near(m.sigma, 0, 1e-12);
    assert_near(m.kappa, 0, 1e-12);
}

/* Exploration: 1 thread first, then 2 where the share keeps 2 busy, then
 * the count the fit predicts fastest while it is untried and clearly
 * faster; the best measured one after. */
static void test_explores_where_the_fit_says_it_pays(void **state)
{
    (void)state;
    /* y(t) = 1 + 0.1(t − 1) + 0.05t(t − 1): speeds t / y(t) are 1, 1.67,
     * 2.0, 2.11, 2.08, 2.0 for 1 to 6 threads */
    const double s = 0.1, k = 0.05;
    const int E = SLAQ_SCALING_EXPLORE_REPORTS;
    slaq_scaling m;
    slaq_scaling_init(&m);
    for (int i = 0; i < E; i++) {
        assert_int_equal(slaq_scaling_threads(&m, 6), 1);
        feed(&m, 1.0, s, k, 1, 1);
    }
    assert_int_equal(slaq_scaling_threads(&m, 1), 1);   /* no room */
    assert_int_equal(slaq_scaling_threads(&m, 1.6), 1); /* 1.6 keep 1 */
    for (int i = 0; i < E; i++) {
        assert_int_equal(slaq_scaling_threads(&m, 6), 2);
        feed(&m, 1.0, s, k, 2, 1);
    }
    /* two points fit σ = 0.2 and no contention: 6 threads look best */
    assert_int_equal(slaq_scaling_threads(&m, 2), 2);
    for (int i = 0; i < E; i++) {
        assert_int_equal(slaq_scaling_threads(&m, 6), 6);
        feed(&m, 1.0, s, k, 6, 1);
    }
    /* three points fit the contention: the peak is at 4 */
    assert_near(m.kappa, k, 1e-9);
    for (int i = 0; i < E; i++) {
        assert_int_equal(slaq_scaling_threads(&m, 6), 4);
        feed(&m, 1.0, s, k, 4, 1);
    }
    /* measured best, and nothing left worth trying */
    assert_int_equal(slaq_scaling_threads(&m, 6), 4);
    assert_int_equal(slaq_scaling_threads(&m, 64), 4);
    /* a falling share: never more threads than it keeps busy */
    assert_int_equal(slaq_scaling_threads(&m, 4.2), 4);
    assert_int_equal(slaq_scaling_threads(&m, 2), 2);
    assert_int_equal(slaq_scaling_threads(&m, 1), 1);
    /* 3 threads would be 2.0 against 2 threads' 1.67: tried on 3 cores */
    assert_int_equal(slaq_scaling_threads(&m, 3), 3);
}

/* A share the kernel let grow (CPU weights lend idle cores): the
 * iteration held the CPU it used, up to its threads. */
static void test_held_cores_count_the_cpu_used(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    /* share 1, 2 threads, 2 CPU-seconds in 1 s: it held 2 cores */
    assert_int_equal(slaq_scaling_observe(&m, 1, 2, 1, 2, 1), SLAQ_OK);
    assert_near(m.mean[slaq_scaling_slot(&m, 2)], 2, 1e-12);
    /* share 1, 1 thread, idle half the time: it held its share */
    assert_int_equal(slaq_scaling_observe(&m, 1, 1, 1, 0.5, 1), SLAQ_OK);
    assert_near(m.mean[slaq_scaling_slot(&m, 1)], 1, 1e-12);
    /* 3 CPU-seconds on 2 threads in 1 s (a helper thread): 2 */
    assert_int_equal(slaq_scaling_observe(&m, 1, 2, 1, 3, 1), SLAQ_OK);
    assert_near(m.mean[slaq_scaling_slot(&m, 2)], 2, 1e-12);
}

static void test_bad_observations_are_refused(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    assert_int_equal(slaq_scaling_observe(&m, 0, 1, 1, 0, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_scaling_observe(&m, 1, 0, 1, 0, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_scaling_observe(&m, 1, 1, 0, 0, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_scaling_observe(&m, 1, 1, 1, 0, 0), SLAQ_EINVAL);
    assert_int_equal(slaq_scaling_observe(&m, 1, 1, NAN, 0, 1),
                     SLAQ_EINVAL);
    assert_int_equal(slaq_scaling_observe(&m, 1, 1, 1, -1, 1), SLAQ_EINVAL);
    for (int i = 0; i < SLAQ_SCALING_SLOTS; i++)
        assert_int_equal(m.count[i], 0);
    /* more threads than the model knows count as the most it knows */
    assert_int_equal(slaq_scaling_observe(&m, 1e5, 1e5, 1, 0, 1), SLAQ_OK);
    assert_int_equal(m.count[slaq_scaling_slot(&m,
                                               SLAQ_SCALING_MAX_THREADS)], 1);
    /* more thread counts than slots: the least measured makes room */
    for (unsigned t = 1; t <= SLAQ_SCALING_SLOTS; t++)
        for (unsigned r = 0; r < 2; r++)
            slaq_scaling_observe(&m, t, t, 1, 0, 1);
    assert_true(slaq_scaling_slot(&m, SLAQ_SCALING_MAX_THREADS) < 0);
    for (unsigned t = 1; t <= SLAQ_SCALING_SLOTS; t++)
        assert_int_equal(m.count[slaq_scaling_slot(&m, t)], 2);
}

/* Noisy measurements: the fit stays near the truth, and rel_sd reports
 * the noise. */
static void test_noise_shows_in_the_uncertainty(void **state)
{
    (void)state;
    slaq_scaling m;
    slaq_scaling_init(&m);
    for (int i = 0; i < 40; i++) {
        double f = i % 2 ? 1.1 : 0.9;
        slaq_scaling_observe(&m, 1, 1, f * 1.0, 0, 1);
        slaq_scaling_observe(&m, 2, 2, f * 0.75, 0, 1); /* σ = 0.5 */
    }
    assert_near(m.sigma, 0.5, 0.1);
    assert_true(m.rel_sd > 0.05 && m.rel_sd < 0.2);
}

/* ------------------------------------------------ Algorithm 1 with it */

static double urand(void) { return rand() / ((double)RAND_MAX + 1); }

/* A random decreasing exponential forecast from k = 0. */
static void random_forecast(slaq_forecast *f)
{
    memset(f, 0, sizeof *f);
    f->model = SLAQ_MODEL_EXP;
    f->yscale = 1;
    f->scale = 0.05 + urand();
    f->max_step = INFINITY;
    f->floor_loss = -INFINITY;
    f->par[0] = 0.3 + 0.69 * urand();
    f->par[1] = 0.2 + 4 * urand();
    f->par[2] = urand();
    f->final_loss = f->par[2];
    f->first_loss = slaq_forecast_loss(f, 0) + urand();
    f->loss0 = slaq_forecast_loss(f, 0);
}

/*
 * With linear scaling the generalised Algorithm 1 is the paper's, bit for
 * bit: on random instances (weights, caps, guaranteed shares,
 * hysteresis, fractional units and capacities), every job given a model
 * of linear scaling gets exactly the allocation it gets without one
 * (scale NULL, the c·S/N of the paper that tests/unit/alloc_golden.h
 * pins), under every greedy policy.
 */
static void test_linear_scaling_allocates_exactly_as_the_paper(void **state)
{
    (void)state;
    srand(24);
    enum { N = 40 };
    slaq_forecast fc[N];
    slaq_pjob j[N];
    double a[N], b[N];
    slaq_scaling lin;
    slaq_scaling_init_linear(&lin);
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    for (int trial = 0; trial < 1000; trial++) {
        size_t n = 1 + (size_t)(rand() % N);
        double cap = 0.3 + 60 * urand();
        double unit = rand() % 2 ? 1.0 : 0.1 + urand();
        for (size_t i = 0; i < n; i++) {
            random_forecast(&fc[i]);
            j[i] = (slaq_pjob){
                .fc = &fc[i], .k = 5 * urand(),
                .iters_per_core = 0.05 + 3 * urand(),
                .weight = 0.5 + 2 * urand(),
                .max_cores = rand() % 4 ? INFINITY : 0.2 + 4 * urand(),
                .min_cores = rand() % 5 ? 0 : 2 * urand(),
                .prev_alloc = rand() % 2 ? 3 * urand() : 0,
                .stay = rand() % 2 ? urand() : 0,
                .unproven = rand() % 10 == 0};
        }
        for (int pol = SLAQ_POLICY_SLAQ; pol <= SLAQ_POLICY_RELAQS; pol++) {
            for (size_t i = 0; i < n; i++)
                j[i].scaling = NULL;
            assert_int_equal(slaq_allocate((slaq_policy_kind)pol, j, n, cap,
                                           unit, ws, a), SLAQ_OK);
            for (size_t i = 0; i < n; i++)
                j[i].scaling = rand() % 2 ? &lin : NULL;
            assert_int_equal(slaq_allocate((slaq_policy_kind)pol, j, n, cap,
                                           unit, ws, b), SLAQ_OK);
            assert_memory_equal(a, b, n * sizeof *a);
        }
    }
    slaq_alloc_ws_free(ws);
}

/* A job that is no faster on two cores than on one (the PyTorch MLP)
 * keeps its guaranteed core; the cores it cannot use go to a job that
 * scales. Without the model the two identical curves split evenly. */
static void test_cores_go_where_they_speed_a_job_up(void **state)
{
    (void)state;
    slaq_forecast f;
    srand(7);
    random_forecast(&f);
    slaq_scaling torch, lin;
    slaq_scaling_init(&torch);
    feed(&torch, 0.128, 0, 0, 1, 3);
    for (int i = 0; i < 3; i++)
        slaq_scaling_observe(&torch, 2, 2, 3.7 * 0.128, 0, 1);
    slaq_scaling_init_linear(&lin);
    slaq_pjob j[2] = {
        {.fc = &f, .k = 1, .iters_per_core = 1, .weight = 1,
         .max_cores = INFINITY},
        {.fc = &f, .k = 1, .iters_per_core = 1, .weight = 1,
         .max_cores = INFINITY}};
    double a[2];
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 4, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 2, 0);
    assert_near(a[1], 2, 0);
    j[0].scaling = &torch;
    j[1].scaling = &lin;
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 4, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 1, 0);
    assert_near(a[1], 3, 0);
    slaq_alloc_ws_free(ws);
}

/* ------------------------------------------------ in the scheduler */

/* Two jobs with the same curve on 4 cores; job 0 runs an iteration 3.7
 * times slower on two threads than on one (the PyTorch MLP), job 1
 * twice as fast. Reports feed each job's model with its share; with the
 * model the cores go to job 1, without it (scaling off) the two are
 * alike (the same CPU time reported) and split them evenly. */
static void sched_two_jobs(int scaling, double *a0, double *a1)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 4;
    c.startup_reports = 0;
    c.hysteresis = 0;
    c.damping = 0;
    c.scaling = scaling;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *j[2] = {slaq_sched_add(s, NULL, 0), slaq_sched_add(s, NULL, 0)};
    for (int i = 0; i < 2; i++) {
        slaq_report r = {.iter = 0, .loss = 1, .t = 0};
        assert_int_equal(slaq_job_report_scaling(j[i], &r, 0, 0), SLAQ_OK);
    }
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    double t = 0;
    for (uint64_t k = 1; k <= 8; k++) {
        int threads = k <= 4 ? 1 : 2;
        t += 1;
        for (int i = 0; i < 2; i++) {
            /* one iteration per report; wall time at `threads` threads */
            double wall = threads == 1 ? 1.0 : i == 0 ? 3.7 : 0.5;
            slaq_report r = {.iter = k, .loss = 1.0 / (1.0 + (double)k),
                             .cpu_s = 1, .samples = 1, .t = t};
            assert_int_equal(slaq_job_report_scaling(j[i], &r, threads, wall),
                             SLAQ_OK);
        }
    }
    const slaq_scaling *m0 = slaq_job_scaling(j[0]);
    const slaq_scaling *m1 = slaq_job_scaling(j[1]);
    assert_true(m0->known && m1->known);
    assert_near(m0->sigma, 2 * 3.7 - 1, 1e-9);
    assert_near(m1->sigma, 0, 1e-9);
    assert_int_equal(slaq_job_threads(j[0], 2), 1);
    assert_int_equal(slaq_job_threads(j[1], 2), 2);
    assert_int_equal(slaq_sched_epoch(s, t), SLAQ_OK);
    *a0 = slaq_job_alloc(j[0]);
    *a1 = slaq_job_alloc(j[1]);
    slaq_sched_free(s);
}

static void test_the_scheduler_divides_by_measured_scaling(void **state)
{
    (void)state;
    double a0, a1;
    sched_two_jobs(1, &a0, &a1);
    assert_near(a0, 1, 1e-9);
    assert_near(a1, 3, 1e-9);
    sched_two_jobs(0, &a0, &a1);
    assert_near(a0, 2, 1e-9);
    assert_near(a1, 2, 1e-9);
}

/* A report without threads, and a job's first report, teach nothing;
 * nor does a report of a job that has no share yet. */
static void test_reports_without_threads_teach_nothing(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 2;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job *j = slaq_sched_add(s, NULL, 0);
    slaq_report r0 = {.iter = 0, .loss = 1, .t = 0};
    assert_int_equal(slaq_job_report_scaling(j, &r0, 2, 1), SLAQ_OK);
    slaq_report r1 = {.iter = 1, .loss = 0.5, .cpu_s = 1, .t = 1};
    assert_int_equal(slaq_job_report_scaling(j, &r1, 2, 1), SLAQ_OK);
    assert_true(isnan(slaq_job_scaling(j)->a)); /* no share yet */
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    slaq_report r2 = {.iter = 2, .loss = 0.4, .cpu_s = 1, .t = 2};
    assert_int_equal(slaq_job_report_scaling(j, &r2, 0, 0), SLAQ_OK);
    assert_true(isnan(slaq_job_scaling(j)->a)); /* no threads said */
    slaq_report r3 = {.iter = 3, .loss = 0.3, .cpu_s = 1, .t = 4};
    assert_int_equal(slaq_job_report_scaling(j, &r3, 1, 0), SLAQ_OK);
    /* wall time 0: the gap between the reports, 2 s, on 1 of 2 cores */
    assert_near(slaq_job_scaling(j)->mean[slaq_scaling_slot(
                    slaq_job_scaling(j), 1)], 2, 1e-12);
    /* a refused report changes nothing */
    slaq_report back = {.iter = 3, .loss = 0.3, .cpu_s = 1, .t = 5};
    assert_int_equal(slaq_job_report_scaling(j, &back, 1, 1), SLAQ_EORDER);
    assert_int_equal(slaq_job_scaling(j)->count[slaq_scaling_slot(
                         slaq_job_scaling(j), 1)], 1);
    slaq_sched_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_empty_model_uses_the_prior_and_advises_one_thread),
        cmocka_unit_test(test_two_thread_counts_fit_the_serial_fraction),
        cmocka_unit_test(test_three_counts_fit_contention),
        cmocka_unit_test(test_a_job_slower_with_more_threads),
        cmocka_unit_test(test_linear_is_exactly_the_cores),
        cmocka_unit_test(test_explores_where_the_fit_says_it_pays),
        cmocka_unit_test(test_held_cores_count_the_cpu_used),
        cmocka_unit_test(test_bad_observations_are_refused),
        cmocka_unit_test(test_noise_shows_in_the_uncertainty),
        cmocka_unit_test(test_linear_scaling_allocates_exactly_as_the_paper),
        cmocka_unit_test(test_cores_go_where_they_speed_a_job_up),
        cmocka_unit_test(test_the_scheduler_divides_by_measured_scaling),
        cmocka_unit_test(test_reports_without_threads_teach_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
