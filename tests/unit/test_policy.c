/*
 * test_policy.c — the allocator: Algorithm 1 equals a brute-force optimum
 * on small concave instances; capacity, caps, minimum shares and weights
 * hold on random instances; max-min serves the worst job; fair shares are
 * water-filled; slaq-trend serves a job still falling that its forecast
 * calls done; equal inputs give equal outputs; the table of policies
 * names, lists and bounds every kind.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/deadline.h"
#include "slaq/slaq.h"
#include "testutil.h"

static double urand(void) { return rand() / ((double)RAND_MAX + 1); }

/* A policy's view of one job; the optional fields zero. */
static slaq_pjob pjob(const slaq_forecast *fc, double k, double iters_per_core,
                      double weight, double max_cores)
{
    return (slaq_pjob){.fc = fc, .k = k, .iters_per_core = iters_per_core,
                       .weight = weight, .max_cores = max_cores};
}

/* A random convex decreasing forecast at k0 = 0 (so gains are concave in
 * the allocation). */
static void random_forecast(slaq_forecast *f)
{
    memset(f, 0, sizeof *f);
    f->yscale = 1;
    f->k0 = 0;
    f->scale = 0.1 + urand();
    f->max_step = INFINITY;
    f->floor_loss = -INFINITY;
    if (rand() % 2) {
        f->model = SLAQ_MODEL_EXP;
        f->par[0] = 0.5 + 0.49 * urand();
        f->par[1] = 0.5 + 5 * urand();
        f->par[2] = urand();
        f->final_loss = f->par[2];
    } else {
        f->model = SLAQ_MODEL_RATIONAL;
        f->par[0] = 0.01 * urand();
        f->par[1] = 0.05 + urand();
        f->par[2] = 0.5 + urand();
        f->par[3] = urand();
        f->final_loss = f->par[3];
    }
    f->first_loss = slaq_forecast_loss(f, 0) + urand();
    f->loss0 = slaq_forecast_loss(f, 0);
}

static double objective(const slaq_pjob *j, size_t n, const double *a)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double c = a[i] < j[i].max_cores ? a[i] : j[i].max_cores;
        s += j[i].weight *
             (slaq_forecast_loss(j[i].fc, j[i].k) -
              slaq_forecast_loss(j[i].fc, j[i].k + j[i].iters_per_core * c)) /
             j[i].fc->scale;
    }
    return s;
}

/* Best objective over every integer allocation with a[i] >= 1, sum = cap. */
static double brute(const slaq_pjob *j, size_t n, int cap, double *a, size_t i,
                    int left)
{
    if (i == n - 1) {
        if (left < 1)
            return -INFINITY;
        a[i] = left;
        return objective(j, n, a);
    }
    double best = -INFINITY;
    for (int x = 1; x <= left - (int)(n - 1 - i); x++) {
        a[i] = x;
        double v = brute(j, n, cap, a, i + 1, left - x);
        if (v > best)
            best = v;
    }
    return best;
}

static void test_slaq_equals_brute_force_optimum(void **state)
{
    (void)state;
    srand(11);
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 2 + (size_t)(rand() % 3);
        int cap = (int)n + rand() % 8;
        slaq_forecast fc[4];
        slaq_pjob j[4];
        for (size_t i = 0; i < n; i++) {
            random_forecast(&fc[i]);
            j[i] = pjob(&fc[i], 0, 0.2 + 2 * urand(),
                               1 + (double)(rand() % 3), INFINITY);
        }
        double a[4], b[4];
        assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, n, cap, 1, ws, a),
                         SLAQ_OK);
        double opt = brute(j, n, cap, b, 0, cap);
        assert_near(objective(j, n, a), opt, 1e-9 * fabs(opt) + 1e-12);
    }
    slaq_alloc_ws_free(ws);
}

static void test_invariants_on_random_instances(void **state)
{
    (void)state;
    srand(12);
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    enum { N = 60 };
    slaq_forecast fc[N];
    slaq_pjob j[N];
    double a[N];
    for (int trial = 0; trial < 300; trial++) {
        size_t n = 1 + (size_t)(rand() % N);
        double cap = 0.5 + 100 * urand();
        double unit = rand() % 3 ? 1.0 : 0.25 + urand();
        double capsum = 0;
        for (size_t i = 0; i < n; i++) {
            random_forecast(&fc[i]);
            double mc = rand() % 4 ? INFINITY : 0.1 + 5 * urand();
            j[i] = pjob(&fc[i], 3 * urand(), 0.1 + urand(),
                               0.5 + 3 * urand(), mc);
            capsum += mc;
        }
        for (int pol = SLAQ_POLICY_FAIR; pol <= SLAQ_POLICY_MAXMIN; pol++) {
            assert_int_equal(slaq_allocate((slaq_policy_kind)pol, j, n, cap,
                                           unit, ws, a),
                             SLAQ_OK);
            double sum = 0, minshare = fmin(unit, cap / (double)n);
            for (size_t i = 0; i < n; i++) {
                assert_true(a[i] >= 0);
                assert_true(a[i] <= j[i].max_cores + 1e-12);
                if (pol != SLAQ_POLICY_FAIR)
                    assert_true(a[i] >= fmin(minshare, j[i].max_cores) -
                                             1e-12);
                sum += a[i];
            }
            assert_true(sum <= cap + 1e-9);
            /* work-conserving: all of it is used unless every job is capped */
            assert_near(sum, fmin(cap, capsum), 1e-9 * cap);
        }
    }
    slaq_alloc_ws_free(ws);
}

static void test_fair_is_weighted_water_filling(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_pjob j[4] = {pjob(NULL, 0, 1, 1, INFINITY),
                      pjob(NULL, 0, 1, 2, INFINITY),
                      pjob(NULL, 0, 1, 1, 1.0),
                      pjob(NULL, 0, 1, 4, INFINITY)};
    double a[4];
    /* 16 cores: job 2 capped at 1; the other 15 split 1:2:4 over w=7 */
    assert_int_equal(slaq_allocate(SLAQ_POLICY_FAIR, j, 4, 16, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[2], 1.0, 1e-12);
    assert_near(a[0], 15.0 / 7, 1e-12);
    assert_near(a[1], 30.0 / 7, 1e-12);
    assert_near(a[3], 60.0 / 7, 1e-12);
    /* more jobs than cores: fractional equal shares */
    slaq_pjob e[10];
    for (int i = 0; i < 10; i++)
        e[i] = pjob(NULL, 0, 1, 1, INFINITY);
    double b[10];
    slaq_allocate(SLAQ_POLICY_FAIR, e, 10, 3, 1, ws, b);
    for (int i = 0; i < 10; i++)
        assert_near(b[i], 0.3, 1e-12);
    slaq_alloc_ws_free(ws);
}

static slaq_forecast flat_forecast(double loss)
{
    slaq_forecast f;
    memset(&f, 0, sizeof f);
    f.model = SLAQ_MODEL_LINEAR;
    f.par[0] = loss;
    f.par[1] = 0;
    f.scale = 1;
    f.first_loss = 10;
    f.final_loss = loss;
    f.loss0 = loss;
    return f;
}

static slaq_forecast line_forecast(double loss, double slope, double final)
{
    slaq_forecast f = flat_forecast(loss);
    f.par[1] = slope;
    f.final_loss = final;
    return f;
}

static void test_converged_job_gets_only_its_minimum_share(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast done = flat_forecast(1.0), fresh = line_forecast(10, 1, 0);
    slaq_pjob j[2] = {pjob(&done, 50, 1, 1, INFINITY),
                      pjob(&fresh, 1, 1, 1, INFINITY)};
    double a[2];
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 10, 1, ws, a);
    assert_near(a[0], 1, 0);
    assert_near(a[1], 9, 0);
    slaq_alloc_ws_free(ws);
}

/* slaq-trend: two jobs whose forecasts say they are done, one of them
 * still falling by its reports (slaq_pjob.trend). Algorithm 1 sees no
 * gain in either and gives the spare cores to the first by index; slaq-
 * trend gives them to the one still falling. A tenth of the trend is what
 * it counts: a job whose forecast falls 1 an iteration outbids a trend of
 * 5 an iteration, not one of 20. */
static void test_slaq_trend_serves_a_job_still_falling(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast done = flat_forecast(1.0), fresh = line_forecast(10, 1, 0);
    slaq_pjob j[3] = {pjob(&done, 50, 1, 1, INFINITY),
                      pjob(&done, 50, 1, 1, INFINITY),
                      pjob(&fresh, 1, 1, 1, INFINITY)};
    j[1].trend = 0.5;
    double a[3];
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 10, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 9, 1e-12);
    assert_near(a[1], 1, 1e-12);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_TREND, j, 2, 10, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 1, 1e-12);
    assert_near(a[1], 9, 1e-12);
    /* beside a job whose forecast is steep */
    j[1].trend = 5;
    slaq_allocate(SLAQ_POLICY_TREND, j, 3, 10, 1, ws, a);
    assert_near(a[0], 1, 1e-12);
    assert_near(a[1], 1, 1e-12);
    assert_near(a[2], 8, 1e-12);
    j[1].trend = 20;
    slaq_allocate(SLAQ_POLICY_TREND, j, 3, 10, 1, ws, a);
    assert_near(a[0], 1, 1e-12);
    assert_near(a[1], 8, 1e-12);
    assert_near(a[2], 1, 1e-12);
    /* without a trend it is Algorithm 1 */
    j[1].trend = 0;
    double b[3];
    slaq_allocate(SLAQ_POLICY_TREND, j, 3, 10, 1, ws, a);
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 3, 10, 1, ws, b);
    for (int i = 0; i < 3; i++)
        assert_near(a[i], b[i], 0);
    slaq_alloc_ws_free(ws);
}

/* The planner values a core by how fast it brings its job to the job's
 * next milestone: a job 5 iterations from its 50% mark gets the 5 cores
 * that reach it this epoch, and the rest go to a job whose next epoch
 * drops a little less but which is far from its mark. Algorithm 1, one
 * epoch ahead, gives the first job every core but the other's minimum
 * share. */
static void test_the_planner_stops_paying_past_a_milestone(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast near = line_forecast(5.5, 0.1, 0), far = line_forecast(9,
                                                                   0.09, 0);
    slaq_pjob j[2] = {pjob(&near, 0, 1, 1, INFINITY),
                      pjob(&far, 0, 1, 1, INFINITY)};
    double a[2];
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 10, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 9, 1e-12);
    assert_near(a[1], 1, 1e-12);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_PLAN, j, 2, 10, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 5, 1e-12);
    assert_near(a[1], 5, 1e-12);
    /* Past its last milestone (99%) a job is worth Algorithm 1's gain
     * alone, so one still short of a milestone comes first (Algorithm 1
     * still prefers the steeper, nearly finished one). */
    slaq_forecast past = line_forecast(0.05, 0.1, 0);
    j[0].fc = &past;
    double b[2];
    slaq_allocate(SLAQ_POLICY_PLAN, j, 2, 10, 1, ws, a);
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 10, 1, ws, b);
    assert_near(a[1], 9, 1e-12);
    assert_near(b[1], 1, 1e-12);
    slaq_alloc_ws_free(ws);
}

/* Three lines from a first loss of 10 toward 0: near (1 an iteration, 9
 * to 90%), far (0.1: 90 to 90%) and past (already at 0.5, beyond 90%). */
static void milestone_forecasts(slaq_forecast *near, slaq_forecast *far,
                                slaq_forecast *past)
{
    *near = line_forecast(10, 1, 0);
    *far = line_forecast(10, 0.1, 0);
    *past = line_forecast(0.5, 0.1, 0);
    near->first_loss = far->first_loss = past->first_loss = 10;
}

/* The index policy: a core each in order of the fewest core-epochs to
 * 90% of the drop, then the new jobs by arrival, then the ones past 90%
 * whose reports still fall, then the rest; a job that does not scale
 * gets one core, one that scales linearly all it can use; floors (a
 * lift) come first. */
static void test_the_index_admits_the_nearest_to_quality_first(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast near, far, past;
    milestone_forecasts(&near, &far, &past);
    slaq_scaling flat;
    slaq_scaling_init(&flat); /* the prior: a second core buys a third */
    slaq_pjob j[6] = {pjob(&far, 0, 1, 1, INFINITY),
                      pjob(&past, 0, 1, 1, INFINITY),
                      pjob(&near, 0, 1, 1, INFINITY),
                      pjob(&near, 0, 1, 1, INFINITY),
                      pjob(&near, 0, 1, 1, INFINITY),
                      pjob(&past, 0, 1, 1, INFINITY)};
    j[3].settling = 1;
    j[3].arrival = 5;
    j[4].unproven = 1;
    j[4].arrival = 3;
    j[5].falling = 1;
    for (int i = 0; i < 6; i++)
        j[i].scaling = &flat;
    double a[6];
    /* Two cores: near-to-quality first, then the farther job; three:
     * then the new jobs, the earlier arrival first; five: then the past
     * job whose reports still fall, before the other; nine: one each,
     * the past job too, and the three left over go down the same order,
     * since no job gains half a core from a second. */
    const struct { double cores, want[6]; } step[] = {
        {2, {1, 0, 1, 0, 0, 0}}, {3, {1, 0, 1, 0, 1, 0}},
        {5, {1, 0, 1, 1, 1, 1}}, {9, {1, 1, 4, 1, 1, 1}}};
    for (size_t c = 0; c < sizeof step / sizeof *step; c++) {
        assert_int_equal(slaq_allocate(SLAQ_POLICY_INDEX, j, 6, step[c].cores,
                                       1, ws, a),
                         SLAQ_OK);
        for (int i = 0; i < 6; i++)
            assert_near(a[i], step[c].want[i], 1e-12);
    }
    /* Linear scaling: the nearest job takes all it may use first. */
    for (int i = 0; i < 6; i++) {
        j[i].scaling = NULL;
        j[i].max_cores = 3;
    }
    slaq_allocate(SLAQ_POLICY_INDEX, j, 6, 4, 1, ws, a);
    assert_near(a[2], 3, 1e-12);
    assert_near(a[0], 1, 1e-12);
    assert_near(a[1] + a[3] + a[4] + a[5], 0, 1e-12);
    /* A floor (the bound on starvation's lift) is given first. */
    j[1].min_cores = 0.5;
    slaq_allocate(SLAQ_POLICY_INDEX, j, 6, 4, 1, ws, a);
    assert_near(a[1], 0.5, 1e-12);
    assert_near(a[2], 3, 1e-12);
    assert_near(a[0], 0.5, 1e-12);
    /* Holding cores divides a job's cost by 1 + stay: the far job (90
     * core-epochs to go), running, keeps its core against one at 45 only
     * if stay > 1. */
    slaq_forecast mid = line_forecast(10, 0.2, 0);
    mid.first_loss = 10;
    slaq_pjob h[2] = {pjob(&far, 0, 1, 1, 1), pjob(&mid, 0, 1, 1, 1)};
    h[0].prev_alloc = 1;
    h[0].stay = 0.5;
    slaq_allocate(SLAQ_POLICY_INDEX, h, 2, 1, 1, ws, a);
    assert_near(a[1], 1, 1e-12);
    h[0].stay = 2;
    slaq_allocate(SLAQ_POLICY_INDEX, h, 2, 1, 1, ws, a);
    assert_near(a[0], 1, 1e-12);
    slaq_alloc_ws_free(ws);
}

/* The queue: first come first served, each job up to its max_cores; a
 * later arrival never takes a running job's cores. Shortest-first: the
 * job not reported yet, then the fewest core-epochs to 90% of the drop,
 * the job past 90% last; preemptive. */
static void test_the_baselines_queue_and_shortest_first(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast near, far, past;
    milestone_forecasts(&near, &far, &past);
    slaq_pjob q[3] = {pjob(&far, 0, 1, 1, 2), pjob(&far, 0, 1, 1, 2),
                      pjob(&far, 0, 1, 1, 2)};
    q[0].arrival = 2;
    q[1].arrival = 1;
    q[2].arrival = 3;
    double a[4];
    assert_int_equal(slaq_allocate(SLAQ_POLICY_QUEUE, q, 3, 3, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[1], 2, 1e-12);
    assert_near(a[0], 1, 1e-12);
    assert_near(a[2], 0, 1e-12);
    /* The queue looks at no forecast: the nearest job waits its turn. */
    q[2].fc = &near;
    slaq_allocate(SLAQ_POLICY_QUEUE, q, 3, 3, 1, ws, a);
    assert_near(a[2], 0, 1e-12);
    slaq_pjob j[4] = {pjob(&past, 0, 1, 1, 1), pjob(&far, 0, 1, 1, 1),
                      pjob(&near, 0, 1, 1, 1), pjob(&far, 0, 1, 1, 1)};
    j[3].unproven = 1;
    const double want[4][4] = {{0, 0, 0, 1}, {0, 0, 1, 1}, {0, 1, 1, 1},
                               {1, 1, 1, 1}};
    for (int c = 1; c <= 4; c++) {
        assert_int_equal(slaq_allocate(SLAQ_POLICY_SHORTEST, j, 4, c, 1, ws,
                                       a),
                         SLAQ_OK);
        for (int i = 0; i < 4; i++)
            assert_near(a[i], want[c - 1][i], 1e-12);
    }
    /* Weight divides the cost: the far job at weight 20 (90 / 20 = 4.5
     * core-epochs) goes before the near one (9). */
    j[1].weight = 20;
    slaq_allocate(SLAQ_POLICY_SHORTEST, j, 4, 2, 1, ws, a);
    assert_near(a[1], 1, 1e-12);
    assert_near(a[2], 0, 1e-12);
    slaq_alloc_ws_free(ws);
}

/* A forecast whose values are NaN (a loss overflowed somewhere) gives the
 * job a NaN key; it must rank below every number, not take over the heap
 * by never being compared as smaller. */
static void test_nan_gain_ranks_last(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast bad = line_forecast(10, NAN, 0);
    slaq_forecast fresh = line_forecast(10, 1, 0);
    slaq_pjob j[3] = {
        {.fc = &bad, .iters_per_core = 1, .weight = 1, .max_cores = INFINITY},
        {.fc = &fresh, .iters_per_core = 1, .weight = 1,
         .max_cores = INFINITY},
        {.fc = &fresh, .iters_per_core = 1, .weight = 1,
         .max_cores = INFINITY}};
    double a[3];
    for (int pol = SLAQ_POLICY_SLAQ; pol <= SLAQ_POLICY_MAXMIN; pol++) {
        assert_int_equal(slaq_allocate((slaq_policy_kind)pol, j, 3, 16, 1, ws,
                                       a), SLAQ_OK);
        assert_near(a[0], 1, 0);
        assert_near(a[1] + a[2], 15, 1e-9);
    }
    slaq_alloc_ws_free(ws);
}

static void test_weight_multiplies_gain(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    /* Two identical diminishing-return jobs; weight 3 vs 1. */
    slaq_forecast f;
    memset(&f, 0, sizeof f);
    f.model = SLAQ_MODEL_EXP;
    f.par[0] = 0.8, f.par[1] = 1, f.par[2] = 0;
    f.yscale = 1, f.scale = 0.2, f.max_step = INFINITY;
    f.floor_loss = -INFINITY, f.first_loss = 1, f.final_loss = 0;
    slaq_pjob j[2] = {pjob(&f, 0, 0.5, 1, INFINITY),
                      pjob(&f, 0, 0.5, 3, INFINITY)};
    double a[2];
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 20, 1, ws, a);
    assert_true(a[1] > a[0]);
    j[0].weight = 3;
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 2, 20, 1, ws, a);
    assert_near(a[0], a[1], 0);
    slaq_alloc_ws_free(ws);
}

static void test_maxmin_serves_the_worst_job(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    /* Normalised losses 0.9, 0.2 and 0.5; each core takes 0.05 off. */
    slaq_forecast f[3] = {line_forecast(0.9, 0.05, 0),
                          line_forecast(0.2, 0.05, 0),
                          line_forecast(0.5, 0.05, 0)};
    for (int i = 0; i < 3; i++)
        f[i].first_loss = 1;
    slaq_pjob j[3];
    for (int i = 0; i < 3; i++)
        j[i] = pjob(&f[i], 0, 1, 1, INFINITY);
    double a[3];
    /* 3 minimum shares + 2 more: both go to the worst job */
    slaq_allocate(SLAQ_POLICY_MAXMIN, j, 3, 5, 1, ws, a);
    assert_near(a[0], 3, 0);
    assert_near(a[1], 1, 0);
    assert_near(a[2], 1, 0);
    /* With plenty, the losses after the epoch are levelled: every job that
     * got more than its minimum share was the worst when it got its last
     * unit, so it is at most one unit's worth below the worst now. */
    slaq_allocate(SLAQ_POLICY_MAXMIN, j, 3, 18, 1, ws, a);
    double after[3], worst = -INFINITY, sum = 0;
    for (int i = 0; i < 3; i++) {
        after[i] = f[i].par[0] - 0.05 * a[i];
        worst = fmax(worst, after[i]);
        sum += a[i];
    }
    assert_near(sum, 18, 1e-12);
    for (int i = 0; i < 3; i++)
        if (a[i] > 1)
            assert_true(after[i] + 0.05 >= worst - 1e-12);
    assert_true(a[0] > a[2] && a[2] > a[1]);
    slaq_alloc_ws_free(ws);
}

static void test_min_share_when_more_jobs_than_units(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast f = line_forecast(5, 1, 0);
    slaq_pjob j[8];
    for (int i = 0; i < 8; i++)
        j[i] = pjob(&f, 0, 1, 1, INFINITY);
    double a[8];
    slaq_allocate(SLAQ_POLICY_SLAQ, j, 8, 2, 1, ws, a);
    for (int i = 0; i < 8; i++)
        assert_near(a[i], 0.25, 1e-15);
    slaq_alloc_ws_free(ws);
}

static void test_same_input_same_output(void **state)
{
    (void)state;
    enum { N = 500 };
    static slaq_forecast fc[N];
    static slaq_pjob j[N];
    static double a[N], b[N];
    srand(13);
    for (int i = 0; i < N; i++) {
        random_forecast(&fc[i]);
        j[i] = pjob(&fc[i], 2, 1, 1, 64);
    }
    /* ties everywhere: identical jobs */
    for (int i = 0; i < 50; i++)
        j[i].fc = &fc[0];
    slaq_alloc_ws *ws = slaq_alloc_ws_new(), *ws2 = slaq_alloc_ws_new();
    for (int pol = 0; pol <= SLAQ_POLICY_MAXMIN; pol++) {
        slaq_allocate((slaq_policy_kind)pol, j, N, 2000, 1, ws, a);
        slaq_allocate((slaq_policy_kind)pol, j, N, 2000, 1, ws2, b);
        assert_memory_equal(a, b, sizeof a);
    }
    slaq_alloc_ws_free(ws);
    slaq_alloc_ws_free(ws2);
}

static void test_bad_arguments_are_refused(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast f = flat_forecast(1);
    slaq_pjob j = pjob(&f, 0, 1, 1, INFINITY);
    double a;
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, &j, 1, -1, 1, ws, &a),
                     SLAQ_EINVAL);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, &j, 1, 4, 0, ws, &a),
                     SLAQ_EINVAL);
    j.weight = 0;
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, &j, 1, 4, 1, ws, &a),
                     SLAQ_EINVAL);
    j.weight = 1, j.fc = NULL;
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, &j, 1, 4, 1, ws, &a),
                     SLAQ_EINVAL);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_FAIR, &j, 1, 4, 1, ws, &a),
                     SLAQ_OK);
    assert_near(a, 4, 0);
    slaq_alloc_ws_free(ws);
}

static void test_capacity_left_for_ml(void **state)
{
    (void)state;
    assert_near(slaq_capacity_for_ml(100, 10, 0, 5), 90, 0);
    assert_near(slaq_capacity_for_ml(100, 0, 1, 3), 75, 1e-12);
    assert_near(slaq_capacity_for_ml(100, 20, 2, 2), 40, 1e-12);
    assert_near(slaq_capacity_for_ml(10, 20, 0, 2), 0, 0);
}

/* The table of share policies: every kind below slaq_policy_count() has a
 * name that parses back to it and a summary; no other kind has either. */
static void test_policy_names_parse_back_to_their_kinds(void **state)
{
    (void)state;
    size_t n = slaq_policy_count();
    assert_int_equal(n, 14);
    for (size_t k = 0; k < n; k++) {
        const char *name = slaq_policy_name((slaq_policy_kind)k);
        slaq_policy_kind back = (slaq_policy_kind)99;
        assert_string_not_equal(name, "?");
        assert_int_equal(slaq_policy_parse(name, &back), SLAQ_OK);
        assert_int_equal(back, k);
        assert_non_null(slaq_policy_summary((slaq_policy_kind)k));
        assert_true(strlen(slaq_policy_summary((slaq_policy_kind)k)) > 0);
    }
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_FAIR), "fair");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_SLAQ), "slaq");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_MAXMIN), "slaq-maxmin");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_RELAQS), "relaqs");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_PLAN), "slaq-plan");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_INDEX), "slaq-index");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_QUEUE), "queue");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_SHORTEST),
                        "shortest-first");
    assert_string_equal(slaq_policy_name(SLAQ_POLICY_TREND), "slaq-trend");
    assert_string_equal(slaq_policy_name((slaq_policy_kind)n), "?");
    assert_string_equal(slaq_policy_name((slaq_policy_kind)-1), "?");
    assert_null(slaq_policy_summary((slaq_policy_kind)n));
    slaq_policy_kind k = SLAQ_POLICY_SLAQ;
    assert_int_equal(slaq_policy_parse("Fair", &k), SLAQ_EINVAL);
    assert_int_equal(slaq_policy_parse("", &k), SLAQ_EINVAL);
    assert_int_equal(slaq_policy_parse("?", &k), SLAQ_EINVAL);
    assert_int_equal(slaq_policy_parse(NULL, &k), SLAQ_EINVAL);
    assert_int_equal(k, SLAQ_POLICY_SLAQ);
    /* fair alone divides without forecasts */
    assert_false(slaq_policy_uses_forecasts(SLAQ_POLICY_FAIR));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_SLAQ));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_MAXMIN));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_RELAQS));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_PLAN));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_INDEX));
    assert_false(slaq_policy_uses_forecasts(SLAQ_POLICY_QUEUE));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_SHORTEST));
    assert_true(slaq_policy_uses_forecasts(SLAQ_POLICY_TREND));
    assert_false(slaq_policy_uses_forecasts((slaq_policy_kind)n));
}

/* The list for error messages: every name once, in kind order; a short
 * buffer gets a terminated prefix and the whole length, as snprintf. */
static void test_policy_list_names_every_policy(void **state)
{
    (void)state;
    const char *all = "fair, slaq, slaq-maxmin, relaqs, edf, tiresias, "
                      "mlfs-h, mlfs, mlfs-rl, slaq-plan, slaq-index, queue, "
                      "shortest-first, slaq-trend";
    char buf[160], small[8];
    assert_int_equal(slaq_policy_list(buf, sizeof buf, ", "),
                     (int)strlen(all));
    assert_string_equal(buf, all);
    assert_int_equal(slaq_policy_list(small, sizeof small, ", "),
                     (int)strlen(all));
    assert_string_equal(small, "fair, s");
    assert_int_equal(slaq_policy_list(NULL, 0, "|"),
                     (int)strlen("fair|slaq|slaq-maxmin|relaqs|edf|tiresias|"
                                 "mlfs-h|mlfs|mlfs-rl|slaq-plan|slaq-index|"
                                 "queue|shortest-first|slaq-trend"));
    assert_int_equal(slaq_policy_list(buf, sizeof buf, " or "),
                     (int)strlen("fair or slaq or slaq-maxmin or relaqs or "
                                 "edf or tiresias or mlfs-h or mlfs or "
                                 "mlfs-rl or slaq-plan or slaq-index or "
                                 "queue or shortest-first or slaq-trend"));
}

/* Every policy of the table divides the whole capacity of a random
 * instance among its jobs (mlfs-rl and mlfs once the workspace has a
 * network, and are refused without one); one past the table is refused by the
 * allocator, the scheduler's constructor and slaq_sched_set_policy, and
 * so are mlfs-rl and mlfs (MLF-RL + MLF-C) by a scheduler without a
 * network. */
static void test_every_policy_divides_and_no_other_kind(void **state)
{
    (void)state;
    enum { N = 40 };
    static slaq_forecast fc[N];
    static slaq_pjob j[N];
    double a[N], cap = 25;
    srand(21);
    for (int i = 0; i < N; i++) {
        random_forecast(&fc[i]);
        j[i] = pjob(&fc[i], 2, 1 + urand(), 0.5 + urand(), 4);
    }
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    size_t n = slaq_policy_count();
    assert_true(slaq_policy_needs_model(SLAQ_POLICY_MLFS_RL));
    assert_int_equal(slaq_allocate(SLAQ_POLICY_MLFS_RL, j, N, cap, 1, ws, a),
                     SLAQ_EINVAL);
    static slaq_rl_model net = {.w2 = {1}, .w1 = {{-1, 0, 0, 0, 0, 1}}};
    slaq_prio_params pp;
    slaq_prio_params_init(&pp);
    pp.rl = &net;
    assert_int_equal(slaq_alloc_ws_set_prio(ws, &pp), SLAQ_OK);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(slaq_policy_needs_model((slaq_policy_kind)k),
                         k == SLAQ_POLICY_MLFS_RL || k == SLAQ_POLICY_MLFS);
        assert_int_equal(slaq_allocate((slaq_policy_kind)k, j, N, cap, 1, ws,
                                       a), SLAQ_OK);
        double sum = 0;
        for (int i = 0; i < N; i++) {
            assert_true(a[i] >= 0 && a[i] <= 4 + 1e-12);
            sum += a[i];
        }
        assert_near(sum, cap, 1e-9);
    }
    assert_int_equal(slaq_allocate((slaq_policy_kind)n, j, N, cap, 1, ws, a),
                     SLAQ_EINVAL);
    slaq_alloc_ws_free(ws);

    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 8;
    c.policy = (slaq_policy_kind)n;
    assert_null(slaq_sched_new(&c));
    c.policy = SLAQ_POLICY_MLFS_RL;
    assert_null(slaq_sched_new(&c));
    c.policy = SLAQ_POLICY_MLFS;
    assert_null(slaq_sched_new(&c));
    c.policy = SLAQ_POLICY_RELAQS;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_sched_set_policy(s, (slaq_policy_kind)n);
    assert_int_equal(slaq_sched_get_config(s)->policy, SLAQ_POLICY_RELAQS);
    slaq_sched_set_policy(s, SLAQ_POLICY_MLFS_RL);
    assert_int_equal(slaq_sched_get_config(s)->policy, SLAQ_POLICY_RELAQS);
    slaq_sched_set_policy(s, SLAQ_POLICY_FAIR);
    assert_int_equal(slaq_sched_get_config(s)->policy, SLAQ_POLICY_FAIR);
    slaq_sched_free(s);

    /* Given a network (slaqd's --rl-model), the scheduler takes mlfs-rl
     * at creation and later, and its keys are the network's scores. */
    c.rl = &net;
    c.policy = SLAQ_POLICY_MLFS_RL;
    s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_sched_free(s);
    c.policy = SLAQ_POLICY_FAIR;
    s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_sched_set_policy(s, SLAQ_POLICY_MLFS_RL);
    assert_int_equal(slaq_sched_get_config(s)->policy, SLAQ_POLICY_MLFS_RL);
    slaq_sched_free(s);
}

/* slaq_sched_keys under mlfs-rl are slaq_rl_keys of the scheduler's
 * network: a network that scores urgency up orders two jobs one way, one
 * that scores it down the other way. */
static void test_sched_keys_are_the_given_networks(void **state)
{
    (void)state;
    static slaq_rl_model up = {.w2 = {1}, .w1 = {{1}}};
    static slaq_rl_model down = {.w2 = {1}, .w1 = {{-1}}};
    const slaq_rl_model *nets[] = {&up, &down};
    for (int k = 0; k < 2; k++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.cores = 1;
        c.policy = SLAQ_POLICY_MLFS_RL;
        c.rl = nets[k];
        slaq_sched *s = slaq_sched_new(&c);
        assert_non_null(s);
        slaq_job_opts o;
        slaq_job_opts_init(&o);
        o.goal.urgency = 2;
        slaq_job *a = slaq_sched_add(s, &o, 0);
        o.goal.urgency = 9;
        slaq_job *b = slaq_sched_add(s, &o, 0);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
        double key[2];
        assert_int_equal(slaq_sched_keys(s, key), SLAQ_OK);
        size_t ia = slaq_sched_job(s, 0) == a ? 0 : 1;
        double ka = key[ia], kb = key[1 - ia];
        if (k == 0)
            assert_true(kb > ka);
        else
            assert_true(ka > kb);
        slaq_sched_free(s);
    }
}

/* relaqs and slaq share the greedy and its key: the allocator gives them
 * the same cores, bit for bit (the scheduler, not the allocator, treats
 * queries and exact jobs). */
static void test_relaqs_allocates_as_slaq(void **state)
{
    (void)state;
    enum { N = 200 };
    static slaq_forecast fc[N];
    static slaq_pjob j[N];
    static double a[N], b[N];
    srand(5);
    for (int i = 0; i < N; i++) {
        random_forecast(&fc[i]);
        j[i] = pjob(&fc[i], 1, 0.5 + urand(), 0.5 + urand(), 8);
        j[i].prev_alloc = 2 * urand();
        j[i].stay = 0.5;
    }
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, N, 300, 1, ws, a),
                     SLAQ_OK);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_RELAQS, j, N, 300, 1, ws, b),
                     SLAQ_OK);
    assert_memory_equal(a, b, sizeof a);
    slaq_alloc_ws_free(ws);
}

/* The hold: with more jobs than cores, plateaued jobs give their minimum
 * shares to the jobs that gain; ceil(capacity) jobs keep running. */
static void test_hold_gives_plateaued_shares_to_jobs_that_gain(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    slaq_forecast done = flat_forecast(1.0), fresh = line_forecast(10, 1, 0);
    slaq_pjob j[5] = {pjob(&done, 50, 1, 1, 1), pjob(&fresh, 1, 1, 1, 1),
                      pjob(&done, 50, 1, 1, 1), pjob(&fresh, 1, 1, 1, 1),
                      pjob(&done, 50, 1, 1, 1)};
    double a[5];
    /* a new workspace does not hold: every job keeps min(unit, 2/5) */
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 0.1, 1e-12);
    assert_near(a[2], 0.1, 1e-12);
    assert_near(a[1] + a[3], 1.7, 1e-12);
    assert_int_equal(slaq_alloc_ws_set_hold(ws, 0.5), SLAQ_OK);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 0, 0);
    assert_near(a[2], 0, 0);
    assert_near(a[4], 0, 0);
    assert_near(a[1], 1, 1e-12);
    assert_near(a[3], 1, 1e-12);
    /* one fresh job: one plateaued job keeps a share, so two jobs run */
    j[3] = pjob(&done, 50, 1, 1, 1);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    int running = 0;
    for (int i = 0; i < 5; i++)
        running += a[i] > 0;
    assert_int_equal(running, 2);
    assert_near(a[1], 1, 1e-12);
    assert_near(a[0] + a[2] + a[3] + a[4], 1, 1e-12);
    /* fair and max-min do not hold */
    assert_int_equal(slaq_allocate(SLAQ_POLICY_FAIR, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    for (int i = 0; i < 5; i++)
        assert_near(a[i], 0.4, 1e-12);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_MAXMIN, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    for (int i = 0; i < 5; i++)
        assert_true(a[i] >= 0.1 - 1e-12);
    slaq_alloc_ws_free(ws);
}

/* A job in its start-up share or that has not reported is never held, nor
 * a job with at least `hold` of its loss drop left. */
static void test_hold_spares_starting_unproven_and_close_jobs(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    assert_int_equal(slaq_alloc_ws_set_hold(ws, 0.05), SLAQ_OK);
    slaq_forecast done = flat_forecast(1.0), fresh = line_forecast(10, 1, 0);
    /* at k = 9.2: 0.8 of 10 left, 8% of its drop */
    slaq_pjob j[5] = {pjob(&fresh, 1, 1, 1, 1), pjob(&fresh, 1, 1, 1, 1),
                      pjob(&done, 50, 1, 1, 1), pjob(&done, 50, 1, 1, 1),
                      pjob(&fresh, 9.2, 1, 1, 1)};
    j[2].min_cores = 0.3;  /* starting */
    j[3].unproven = 1;     /* no report yet */
    double a[5];
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    assert_true(a[2] >= 0.3 - 1e-12);
    assert_true(a[3] > 0);
    assert_true(a[4] > 0); /* 8% left, hold 5%: not plateaued */
    /* at hold 0.1 it is */
    assert_int_equal(slaq_alloc_ws_set_hold(ws, 0.1), SLAQ_OK);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    assert_near(a[4], 0, 0);
    /* out of range: refused, nothing changed */
    assert_int_equal(slaq_alloc_ws_set_hold(ws, -0.1), SLAQ_EINVAL);
    assert_int_equal(slaq_alloc_ws_set_hold(ws, 1.5), SLAQ_EINVAL);
    assert_int_equal(slaq_alloc_ws_set_hold(ws, NAN), SLAQ_EINVAL);
    assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, 5, 2, 0.1, ws, a),
                     SLAQ_OK);
    assert_near(a[4], 0, 0);
    slaq_alloc_ws_free(ws);
}

/* hold 0 is the allocation without a hold, bit for bit, and any hold
 * keeps the invariants: capacity used, caps kept, ceil(capacity) jobs
 * running, and a held job's share gone to jobs that gain at least as
 * much. */
static void test_hold_zero_is_no_hold_and_holds_keep_invariants(void **state)
{
    (void)state;
    enum { N = 12 };
    slaq_alloc_ws *plain = slaq_alloc_ws_new(), *ws = slaq_alloc_ws_new();
    slaq_forecast f[N];
    slaq_pjob j[N];
    double a[N], b[N];
    srand(7);
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(rand() % N);
        for (size_t i = 0; i < n; i++) {
            random_forecast(&f[i]);
            j[i] = pjob(&f[i], 20 * urand() * urand(), 0.1 + 3 * urand(),
                        0.5 + urand(), rand() % 3 ? 1 : INFINITY);
        }
        double cap = 1 + rand() % 6, unit = rand() % 2 ? 0.1 : 1;
        assert_int_equal(slaq_alloc_ws_set_hold(ws, 0), SLAQ_OK);
        assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, n, cap, unit,
                                       plain, a), SLAQ_OK);
        assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, n, cap, unit, ws,
                                       b), SLAQ_OK);
        assert_memory_equal(a, b, n * sizeof *a);
        assert_int_equal(slaq_alloc_ws_set_hold(ws, urand()), SLAQ_OK);
        assert_int_equal(slaq_allocate(SLAQ_POLICY_SLAQ, j, n, cap, unit, ws,
                                       b), SLAQ_OK);
        double sum = 0, room = 0;
        int running = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true(b[i] >= 0 && b[i] <= j[i].max_cores + 1e-9);
            sum += b[i];
            room += j[i].max_cores;
            running += b[i] > 0;
        }
        assert_near(sum, room < cap ? room : cap, 1e-9);
        int keep = (int)ceil(cap - 1e-9);
        assert_true(running >= ((int)n < keep ? (int)n : keep));
    }
    slaq_alloc_ws_free(plain);
    slaq_alloc_ws_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slaq_equals_brute_force_optimum),
        cmocka_unit_test(test_invariants_on_random_instances),
        cmocka_unit_test(test_fair_is_weighted_water_filling),
        cmocka_unit_test(test_converged_job_gets_only_its_minimum_share),
        cmocka_unit_test(test_nan_gain_ranks_last),
        cmocka_unit_test(test_the_planner_stops_paying_past_a_milestone),
        cmocka_unit_test(test_slaq_trend_serves_a_job_still_falling),
        cmocka_unit_test(test_the_index_admits_the_nearest_to_quality_first),
        cmocka_unit_test(test_the_baselines_queue_and_shortest_first),
        cmocka_unit_test(test_weight_multiplies_gain),
        cmocka_unit_test(test_maxmin_serves_the_worst_job),
        cmocka_unit_test(test_min_share_when_more_jobs_than_units),
        cmocka_unit_test(test_same_input_same_output),
        cmocka_unit_test(test_bad_arguments_are_refused),
        cmocka_unit_test(test_capacity_left_for_ml),
        cmocka_unit_test(test_policy_names_parse_back_to_their_kinds),
        cmocka_unit_test(test_policy_list_names_every_policy),
        cmocka_unit_test(test_every_policy_divides_and_no_other_kind),
        cmocka_unit_test(test_sched_keys_are_the_given_networks),
        cmocka_unit_test(test_relaqs_allocates_as_slaq),
        cmocka_unit_test(test_hold_gives_plateaued_shares_to_jobs_that_gain),
        cmocka_unit_test(test_hold_spares_starting_unproven_and_close_jobs),
        cmocka_unit_test(test_hold_zero_is_no_hold_and_holds_keep_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
