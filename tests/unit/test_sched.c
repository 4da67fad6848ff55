/*
 * test_sched.c — the scheduler: the epoch divides exactly the ML capacity,
 * re-divides when jobs come and go, refills tokens, favours a job with
 * more to gain, follows a policy change, and is deterministic.
 */
#include <math.h>
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

/* A job's target (slaq_job_opts.target, here 5% of its drop): the
 * epoch's verdict is
 * target_reduction once its loss reduction reaches it, after 3 reports,
 * under any policy; before, and for a job without one, it runs. */
static void test_the_epoch_ends_a_job_at_its_target(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_FAIR, 4);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.target = 0.05;
    o.iters = 10;
    slaq_job *t = slaq_sched_add(s, &o, 0);
    o.target = 0;
    slaq_job *none = slaq_sched_add(s, &o, 0);
    report(t, 1, 1.0, 1);
    report(none, 1, 1.0, 1);
    report(t, 2, 0.2, 2);
    report(none, 2, 0.2, 2);
    assert_int_equal(slaq_sched_epoch(s, 2), SLAQ_OK);
    /* 2 reports: too few to tell its drop */
    assert_int_equal(slaq_job_verdict(t), SLAQ_VERDICT_RUN);
    report(t, 3, 0.19, 3);
    report(none, 3, 0.19, 3);
    assert_int_equal(slaq_sched_epoch(s, 4), SLAQ_OK);
    assert_int_equal(slaq_job_verdict(t), SLAQ_VERDICT_TARGET);
    assert_int_equal(slaq_job_verdict(none), SLAQ_VERDICT_RUN);
    assert_string_equal(slaq_verdict_name(slaq_job_verdict(t)),
                        "target_reduction");
    assert_string_equal(slaq_verdict_name(SLAQ_VERDICT_ACCURACY),
                        "accuracy_met");
    assert_string_equal(slaq_verdict_name(SLAQ_VERDICT_OPTSTOP), "optstop");
    assert_string_equal(slaq_verdict_name(SLAQ_VERDICT_RUN), "run");
    assert_string_equal(slaq_verdict_name((slaq_verdict)9), "?");
    slaq_sched_free(s);
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
    report(fresh, 1, 4.0, 40.2);
    report(fresh, 2, 3.2, 40.4);
    report(fresh, 3, 2.6, 40.6);
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
    slaq_job *j = slaq_sched_add(s, NULL, 0);
    assert_near(slaq_job_reduction(j), 0, 0);
    for (uint64_t k = 0; k <= 40; k++)
        report(j, k, 2.0 * pow(0.8, (double)k) + 1.0, (double)k);
    slaq_sched_epoch(s, 41);
    /* 2·0.8^40 ≈ 2.7e-4 of a total reduction of 2 remains */
    assert_near(slaq_job_reduction(j), 1.0, 1e-3);
    slaq_sched_free(s);
}

/* slaq_norm_loss is metrics.md's ℓ for any loss of the curve, and with
 * the job's last loss and end it is 1 − slaq_job_reduction. */
static void test_norm_loss_of_any_point(void **state)
{
    (void)state;
    assert_near(slaq_norm_loss(3, 3, 1), 1, 0);
    assert_near(slaq_norm_loss(2, 3, 1), 0.5, 1e-15);
    assert_near(slaq_norm_loss(1, 3, 1), 0, 0);
    assert_near(slaq_norm_loss(4, 3, 1), 1, 0);     /* above L(0) */
    assert_near(slaq_norm_loss(0.5, 3, 1), 0, 0);   /* below the end */
    assert_near(slaq_norm_loss(2, 3, 3), 1, 0);     /* never fell */
    assert_true(isnan(slaq_norm_loss(2, 3, NAN)));  /* end unknown */
    assert_true(isnan(slaq_norm_loss(NAN, 3, 1)));
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 4);
    slaq_job *j = slaq_sched_add(s, NULL, 0);
    for (uint64_t k = 0; k <= 10; k++)
        report(j, k, 2.0 * pow(0.8, (double)k) + 1.0, (double)k);
    slaq_sched_epoch(s, 11);
    const slaq_history *h = slaq_job_history(j);
    double l = slaq_norm_loss(slaq_history_last(h)->loss,
                              slaq_history_first_loss(h), slaq_job_end_loss(j));
    assert_true(l > 0.05 && l < 0.95);
    assert_near(l, 1 - slaq_job_reduction(j), 1e-12);
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

/* Jobs submitted together that have not reported yet share the cores
 * equally: none sits at the minimum share while it loads its data (the
 * first of five identical new jobs used to take 1.6 of 2 cores). */
static void test_new_jobs_get_their_fair_share(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 2;
    c.unit = 0.1;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job *j[5];
    for (int i = 0; i < 5; i++)
        j[i] = slaq_sched_add(s, NULL, 0);
    slaq_sched_epoch(s, 0);
    for (int i = 0; i < 5; i++)
        assert_near(slaq_job_alloc(j[i]), 0.4, 1e-9);
    /* with iteration 0 and two iterations reported they are still
     * settling (3 needed) */
    for (int i = 0; i < 5; i++)
        for (uint64_t k = 0; k <= 2; k++)
            report(j[i], k, 1.0 / (1.0 + (double)(k * (uint64_t)(i + 1))),
                   (double)k);
    slaq_sched_epoch(s, 3);
    for (int i = 0; i < 5; i++)
        assert_true(slaq_job_alloc(j[i]) >= 0.4 - 1e-9);
    slaq_sched_free(s);
}

/* A settling job next to a predicted one gets at least its fair share,
 * even when the predicted job gains more per core. */
static void test_settling_job_keeps_its_fair_share(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 8);
    slaq_job *old = slaq_sched_add(s, NULL, 0);
    for (uint64_t k = 0; k <= 10; k++)
        report(old, k, 10.0 - (double)k * 0.5, (double)k * 0.1);
    slaq_job *fresh = slaq_sched_add(s, NULL, 1);
    slaq_sched_epoch(s, 1.1);
    assert_true(slaq_job_alloc(fresh) >= 4 - 1e-9);
    slaq_sched_free(s);
}

/* A scheduler of 2 cores in units of 0.1 under slaq-index, and the
 * options of a program (slaqd's job) for it. */
static slaq_sched *index_sched(slaq_sched_config *c, slaq_job_opts *o)
{
    slaq_sched_config_init(c);
    c->cores = 2;
    c->unit = 0.1;
    c->policy = SLAQ_POLICY_INDEX;
    slaq_job_opts_init(o);
    o->program = 1;
    slaq_sched *s = slaq_sched_new(c);
    assert_non_null(s);
    return s;
}

/* Under slaq-index a batch is admitted, not divided: five new programs
 * on two cores, the first two by arrival hold a core each and the rest
 * nothing (no start-up floor), settling or not; a program alone takes
 * both cores (what the admitted jobs cannot use goes down the order), and
 * a simulated job, linear, takes both before the next gets any. */
static void test_the_index_admits_a_new_batch_in_order(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_job_opts o;
    slaq_sched *s = index_sched(&c, &o);
    slaq_job *j[5];
    for (int i = 0; i < 5; i++)
        j[i] = slaq_sched_add(s, &o, 0.1 * i);
    slaq_sched_epoch(s, 1);
    const double want[5] = {1, 1, 0, 0, 0};
    for (int i = 0; i < 5; i++)
        assert_near(slaq_job_alloc(j[i]), want[i], 1e-9);
    /* Settling (two iterations reported) changes nothing. */
    for (int i = 0; i < 5; i++)
        for (uint64_t k = 0; k <= 2; k++)
            report(j[i], k, 1.0 / (1.0 + (double)k), (double)k * 0.1);
    slaq_sched_epoch(s, 2);
    for (int i = 0; i < 5; i++)
        assert_near(slaq_job_alloc(j[i]), want[i], 1e-9);
    slaq_sched_free(s);
    s = slaq_sched_new(&c);
    slaq_job *alone = slaq_sched_add(s, &o, 0);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(alone), 2, 1e-9);
    slaq_sched_free(s);
    /* A simulated job (not a program: slaq_job_opts_init's default, and
     * what a NULL opts means) is taken to scale linearly: it takes both
     * cores before the next one gets any. */
    s = slaq_sched_new(&c);
    slaq_job *sim = slaq_sched_add(s, NULL, 0);
    slaq_job *next = slaq_sched_add(s, NULL, 0.1);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(sim), 2, 1e-9);
    assert_near(slaq_job_alloc(next), 0, 1e-9);
    slaq_sched_free(s);
}

/* Under slaq-index a job with few reports (too few to tell whether it
 * has stopped) that the order leaves at no cores is still lifted by the
 * bound on starvation: c, four reports and forecast past 90% of its
 * drop, waits behind two settling jobs, but not longer than starve_s
 * plus an epoch. It waited without end when too few reports counted as
 * not improving. */
static void test_the_index_does_not_starve_a_job_of_few_reports(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_job_opts o;
    slaq_sched *s = index_sched(&c, &o);
    slaq_job *a = slaq_sched_add(s, &o, 0);
    slaq_job *b = slaq_sched_add(s, &o, 0);
    slaq_job *late = slaq_sched_add(s, &o, 0.1);
    for (uint64_t k = 0; k <= 1; k++) {
        report(a, k, 1.0 - 0.1 * (double)k, 0.1 * (double)k);
        report(b, k, 1.0 - 0.1 * (double)k, 0.1 * (double)k);
    }
    const double loss[4] = {1.0, 0.5, 0.45, 0.44};
    for (uint64_t k = 0; k < 4; k++)
        report(late, k, loss[k], 0.2 + 0.1 * (double)k);
    slaq_sched_epoch(s, 1);
    assert_near(slaq_job_alloc(late), 0, 1e-9);
    double first = -1;
    for (int t = 2; t <= 1 + (int)c.starve_s + 2 && first < 0; t++) {
        slaq_sched_epoch(s, t);
        if (slaq_job_alloc(late) > 0)
            first = t;
    }
    assert_true(first > 0);
    assert_true(first <= 1 + c.starve_s + c.epoch_s + 1e-9);
    slaq_sched_free(s);
}

/* Under slaq-index a job whose forecast calls it done but whose reports
 * still fall goes before the jobs that have stopped: a loss that stepped
 * down after a flat start (1.0 for six reports, then 0.885 twice: a fit
 * takes 0.885 for its end) holds a core ahead of two converged jobs that
 * came before it. It waited behind them when only the forecast counted. */
static void test_the_index_puts_a_falling_job_before_stopped_ones(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_job_opts o;
    slaq_sched *s = index_sched(&c, &o);
    slaq_job *done[2], *step;
    for (int i = 0; i < 2; i++) {
        done[i] = slaq_sched_add(s, &o, 0);
        const double head[3] = {1.0, 0.5, 0.3};
        for (uint64_t k = 0; k <= 14; k++)
            report(done[i], k, k < 3 ? head[k] : 0.3, (double)k);
    }
    step = slaq_sched_add(s, &o, 1);
    for (uint64_t k = 0; k <= 7; k++)
        report(step, k, k < 6 ? 1.0 : 0.885, 7 + (double)k);
    slaq_sched_epoch(s, 15);
    assert_near(slaq_job_alloc(step), 1, 1e-9);
    assert_near(slaq_job_alloc(done[0]) + slaq_job_alloc(done[1]), 1, 1e-9);
    slaq_sched_free(s);
}

/* Two jobs of 100 iterations, 10 reported, and an epoch: fast goes 1.7 ->
 * 1.0 in one step, then 1.0 -> 0.7 geometrically; steady 1.0 -> 0.0
 * geometrically. */
static void fast_and_steady(slaq_sched *s, slaq_job **fast, slaq_job **steady)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.iters = 100;
    *fast = slaq_sched_add(s, &o, 0);
    *steady = slaq_sched_add(s, &o, 0);
    report(*fast, 0, 1.7, 0);
    report(*steady, 0, 1.0, 0);
    for (uint64_t k = 1; k <= 10; k++) {
        report(*fast, k, 0.7 + 0.3 * pow(0.97, (double)(k - 1)), (double)k);
        report(*steady, k, pow(0.97, (double)k), (double)k);
    }
    slaq_sched_epoch(s, 10.5);
}

/* The fast learner: a job whose first step took most of its drop is not
 * taken for converged while it is far from its own end. Under the paper's
 * normalisation by the largest step its later steps look negligible next
 * to a steady job's; under the span they are valued against its own total
 * reduction, like the steady job's. */
static void test_fast_learner_is_not_starved(void **state)
{
    (void)state;
    double share[2];
    for (int norm = 0; norm < 2; norm++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.cores = 8;
        c.normalise = norm ? SLAQ_SCALE_MAX_DELTA : SLAQ_SCALE_SPAN;
        slaq_sched *s = slaq_sched_new(&c);
        slaq_job *fast, *steady;
        fast_and_steady(s, &fast, &steady);
        share[norm] = slaq_job_alloc(fast);
        slaq_sched_free(s);
    }
    /* the span gives the fast learner more than the largest step does */
    assert_true(share[0] >= share[1] + 1 - 1e-9);
}

/* Its progress is measured against its own end: at iteration 10 of 100
 * the fast learner has 78% of its reduction, not 100% (the fitted curve
 * used to spend itself on the first step and call the job converged),
 * and the steady job 28%, not the 57% that the forecast's floor implied. */
static void test_fast_learner_progress_is_true(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 8);
    slaq_job *fast, *steady;
    fast_and_steady(s, &fast, &steady);
    double end_f = 0.7 + 0.3 * pow(0.97, 99), end_s = pow(0.97, 100);
    double true_f = (1.7 - (0.7 + 0.3 * pow(0.97, 9))) / (1.7 - end_f);
    double true_s = (1 - pow(0.97, 10)) / (1 - end_s);
    assert_near(slaq_job_reduction(fast), true_f, 0.03);
    assert_near(slaq_job_reduction(steady), true_s, 0.03);
    slaq_sched_free(s);
}

/* Hysteresis: of two identical jobs, the one that held the cores keeps
 * more of them; without it they are divided equally. */
static void test_hysteresis_keeps_allocations(void **state)
{
    (void)state;
    double kept[2];
    for (int h = 0; h < 2; h++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.cores = 10;
        c.hysteresis = h ? 0.5 : 0;
        c.startup_reports = 0;
        slaq_sched *s = slaq_sched_new(&c);
        slaq_job *a = slaq_sched_add(s, NULL, 0);
        for (uint64_t k = 0; k <= 10; k++)
            report(a, k, 1.0 / (1 + 0.1 * (double)k), (double)k);
        slaq_sched_epoch(s, 10);
        assert_near(slaq_job_alloc(a), 10, 1e-9);
        slaq_job *b = slaq_sched_add(s, NULL, 10);
        for (uint64_t k = 0; k <= 10; k++)
            report(b, k, 1.0 / (1 + 0.1 * (double)k), 10 + (double)k * 0.01);
        slaq_sched_epoch(s, 10.1);
        kept[h] = slaq_job_alloc(a);
        slaq_sched_free(s);
    }
    assert_near(kept[0], 5, 1e-9);
    assert_true(kept[1] >= kept[0] + 1 - 1e-9);
}

/* A job that declares its length is measured against the loss forecast
 * at its last iteration: an exponential curve at iteration 20 of 20 has
 * reached all of its reduction, at 10 of 20 not yet. */
static void test_declared_length_sets_the_end(void **state)
{
    (void)state;
    slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 4);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.iters = 20;
    slaq_job *j = slaq_sched_add(s, &o, 0);
    assert_true(isnan(slaq_job_end_loss(j)));
    for (uint64_t k = 0; k <= 10; k++)
        report(j, k, 1.0 + pow(0.8, (double)k), (double)k);
    /* reported but not fitted yet: the end is unknown, nothing claimed */
    assert_true(isnan(slaq_job_end_loss(j)));
    assert_near(slaq_job_reduction(j), 0, 0);
    slaq_sched_epoch(s, 10);
    /* truth at 20: 1 + 0.8^20; reduction at 10: (1 - 0.8^10)/(1 - 0.8^20),
     * 0.904; 0.97 is reached between k = 14 and 15 */
    double want = (1 - pow(0.8, 10)) / (1 - pow(0.8, 20));
    assert_near(slaq_job_reduction(j), want, 0.01);
    assert_near(slaq_job_iters_to(j, 0.97), 4.5, 1);
    assert_near(slaq_job_iters_to(j, 0.5), 0, 0);
    for (uint64_t k = 11; k <= 20; k++)
        report(j, k, 1.0 + pow(0.8, (double)k), (double)k);
    slaq_sched_epoch(s, 20);
    assert_near(slaq_job_reduction(j), 1, 1e-12);
    slaq_sched_free(s);
}

/* Damping: with the same jobs, the new allocation is half the old one
 * and half the policy's; a new job makes it take effect at once. Two
 * schedulers, damped and not, are fed the same reports. */
static void test_damping_moves_half_way(void **state)
{
    (void)state;
    slaq_sched *s[2];
    slaq_job *a[2], *b[2];
    for (int d = 0; d < 2; d++) {
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.cores = 10;
        c.hysteresis = 0;
        c.startup_reports = 0;
        c.damping = d ? 0.5 : 0;
        s[d] = slaq_sched_new(&c);
        a[d] = slaq_sched_add(s[d], NULL, 0);
        b[d] = slaq_sched_add(s[d], NULL, 0);
        for (uint64_t k = 0; k <= 8; k++) {
            report(a[d], k, 2.0 * pow(0.7, (double)k), (double)k);
            report(b[d], k, 1.0 - 0.001 * (double)k, (double)k);
        }
        slaq_sched_epoch(s[d], 8);
    }
    /* the first epoch after the jobs arrived: no damping */
    assert_near(slaq_job_alloc(a[1]), slaq_job_alloc(a[0]), 1e-12);
    double old = slaq_job_alloc(a[1]);
    for (int d = 0; d < 2; d++) /* now b falls fast and a is flat */
        for (uint64_t k = 9; k <= 16; k++) {
            report(a[d], k, 2.0 * pow(0.7, 8), (double)k);
            report(b[d], k, 1.0 - 0.008 - 0.1 * (double)(k - 8), (double)k);
        }
    slaq_sched_epoch(s[0], 16);
    slaq_sched_epoch(s[1], 16);
    double target = slaq_job_alloc(a[0]);
    assert_true(fabs(target - old) > 2);
    assert_near(slaq_job_alloc(a[1]), 0.5 * old + 0.5 * target, 1e-9);
    assert_near(slaq_job_alloc(a[1]) + slaq_job_alloc(b[1]), 10, 1e-9);
    for (int d = 0; d < 2; d++)
        slaq_sched_free(s[d]);
}

/* The cautious end looks back a number of iterations, not of fits: a
 * job refitted every 4 reports shows the same progress as one refitted
 * after each (the window of 12 fits used to reach back 48 iterations, to
 * the first wild fits, and a --target-reduction stop never came). */
static void test_end_window_is_in_iterations(void **state)
{
    (void)state;
    double shown[2];
    for (int every = 1, r = 0; every <= 4; every += 3, r++) {
        slaq_sched *s = new_sched(SLAQ_POLICY_SLAQ, 4);
        slaq_job_opts o;
        slaq_job_opts_init(&o);
        o.iters = 60;
        slaq_job *j = slaq_sched_add(s, &o, 0);
        for (uint64_t k = 0; k <= 40; k++) {
            report(j, k, 1.0 + pow(0.9, (double)k), (double)k);
            if (k % (uint64_t)every == 0)
                slaq_sched_epoch(s, (double)k);
        }
        shown[r] = slaq_job_reduction(j);
        slaq_sched_free(s);
    }
    double truth = (1 - pow(0.9, 40)) / (1 - pow(0.9, 60));
    assert_near(shown[0], truth, 0.01);
    assert_near(shown[1], truth, 0.01);
}

/* A fixed pseudo-random number in [-1, 1] for report k. */
static double wobble(uint64_t k)
{
    uint64_t x = (k + 1) * 0x9e3779b97f4a7c15u;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    return (double)(x % 2001) / 1000.0 - 1;
}

/*
 * The bound on starvation: two jobs whose loss falls fast and one whose
 * loss falls slowly but steadily share 4 cores, each iteration costing
 * 0.5 CPU-s, for 80 s of 1 s epochs. Algorithm 1 keeps the slow job at
 * the minimum share (1 core, below its fair 1.33) the whole time; with
 * starve-bound 10 no spell at the minimum share lasts longer than the
 * bound and an epoch, and each lift gives the slow job its fair share
 * (the largest share it gets once the three have settled, from 15 s).
 * Under fair nothing is lifted.
 */
static double starve_run_noisy(slaq_policy_kind pol, double bound,
                               double noise, unsigned *lifts,
                               double *most_slow)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.policy = pol;
    c.cores = 4;
    c.starve_s = bound;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *j[3];
    double x[3] = {0, 0, 0};
    uint64_t done[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        j[i] = slaq_sched_add(s, NULL, 0);
        report(j[i], 0, i < 2 ? 10 : 5, 0);
    }
    *most_slow = 0;
    for (int t = 0; t <= 80; t++) {
        slaq_sched_epoch(s, t);
        if (t >= 15 && slaq_job_alloc(j[2]) > *most_slow)
            *most_slow = slaq_job_alloc(j[2]);
        for (int i = 0; i < 3; i++) {
            x[i] += slaq_job_alloc(j[i]) / 0.5;
            while ((double)done[i] + 1 <= x[i]) {
                double k = (double)++done[i];
                report(j[i], done[i],
                       i < 2 ? 10 * exp(-k / 200)
                             : 5 * exp(-k / 5000) + noise * wobble(done[i]),
                       t + 1.0);
            }
        }
    }
    double starved = slaq_job_starved_max(j[2], 81);
    *lifts = slaq_job_lifts(j[2]);
    slaq_sched_free(s);
    return starved;
}

static double starve_run(slaq_policy_kind pol, double bound, unsigned *lifts,
                         double *most_slow)
{
    return starve_run_noisy(pol, bound, 0, lifts, most_slow);
}

static void test_no_improving_job_starves_past_the_bound(void **state)
{
    (void)state;
    unsigned lifts;
    double most;
    double never = starve_run(SLAQ_POLICY_SLAQ, 0, &lifts, &most);
    assert_true(never >= 60);
    assert_int_equal(lifts, 0);
    assert_true(most < 1.2);
    double bounded = starve_run(SLAQ_POLICY_SLAQ, 10, &lifts, &most);
    assert_true(bounded <= 10 + 1 + 1e-9);
    assert_true(lifts >= 3);
    assert_near(most, 4.0 / 3, 1e-6);
    starve_run(SLAQ_POLICY_FAIR, 10, &lifts, &most);
    assert_int_equal(lifts, 0);
    /* a bad bound is refused */
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 4;
    c.starve_s = -1;
    assert_null(slaq_sched_new(&c));
}

/* The same run with the slow job's loss noisy from one report to the
 * next (±0.01 about a trend of 0.001 a report, as a loss reported every
 * mini-batch is): it is still improving, judged by the trend of its
 * recent reports, and lifted as often as the smooth one (3 times).
 * Judged by its last report against the sixth before it, the noise
 * reset its clock before the bound most times (one lift in 80 s). */
static void test_a_noisy_improving_job_is_lifted(void **state)
{
    (void)state;
    unsigned lifts;
    double most;
    double bounded = starve_run_noisy(SLAQ_POLICY_SLAQ, 10, 0.01, &lifts,
                                      &most);
    assert_true(bounded <= 10 + 1 + 1e-9);
    assert_true(lifts >= 3);
}

/*
 * Class priors: a job whose loss has not moved after its start-up (6
 * reports at 10) beside one falling fast, on 4 cores. Its own forecast is
 * flat: without the prior, slaq and slaq-plan give it the minimum share
 * (1 core). With it, it is valued by the unknown class's prior and holds
 * at least its fair share (2). Once its loss moves, or once it has made
 * as many reports as the class's curves take to 90% of their drop
 * (done_iters) without moving, its own forecast decides again.
 */
static double flat_share(slaq_policy_kind pol, int prior, uint64_t flat,
                         double moved_to)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.policy = pol;
    c.cores = 4;
    c.prior = prior;
    c.starve_s = 0;
    c.damping = 0;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *fast = slaq_sched_add(s, NULL, 0);
    slaq_job *still = slaq_sched_add(s, NULL, 0);
    for (uint64_t k = 0; k <= flat; k++) {
        report(fast, k, 5 * pow(0.8, (double)k) + 1, (double)k);
        report(still, k, k == flat && moved_to > 0 ? moved_to : 10,
               (double)k);
        slaq_sched_epoch(s, (double)k + 0.5);
    }
    double a = slaq_job_alloc(still);
    slaq_sched_free(s);
    return a;
}

static void test_a_flat_start_is_valued_by_its_class_prior(void **state)
{
    (void)state;
    const slaq_prior_class *pc =
        slaq_prior_of(slaq_prior_default(), SLAQ_CONV_UNKNOWN);
    assert_true(pc->curves > 0 && pc->done_iters > 6);
    slaq_policy_kind pols[] = {SLAQ_POLICY_SLAQ, SLAQ_POLICY_PLAN};
    for (int i = 0; i < 2; i++) {
        assert_near(flat_share(pols[i], 0, 6, 0), 1, 1e-9);
        assert_true(flat_share(pols[i], 1, 6, 0) >= 2 - 1e-9);
        /* moved: its own (now falling) forecast, not the prior */
        double own = flat_share(pols[i], 0, 6, 9);
        assert_near(flat_share(pols[i], 1, 6, 9), own, 1e-9);
        /* flat for done_iters reports: the prior has expired */
        uint64_t late = (uint64_t)ceil(pc->done_iters) + 1;
        assert_near(flat_share(pols[i], 1, late, 0),
                    flat_share(pols[i], 0, late, 0), 1e-9);
    }
    /* the prior's forecast: half its drop in half_iters iterations */
    slaq_forecast f;
    slaq_prior_forecast(pc, 6, 10, &f);
    double d = pc->rel_drop * 10;
    assert_near(slaq_forecast_loss(&f, 6), 10, 1e-9);
    assert_near(slaq_forecast_loss(&f, 6 + pc->half_iters), 10 - d / 2, 1e-9);
    assert_near(f.scale, d, 1e-12);
}

/* slaq_prior_learn: per class, medians of the curves that fall. */
static void test_priors_are_learned_per_class(void **state)
{
    (void)state;
    double a[] = {10, 5, 4, 3, 2, 1}; /* drop 9: half at 1, 90% at 5 */
    double b[] = {1, 0.9, 0.5, 0.5};  /* drop 0.5: half at 2, 90% at 2 */
    double c[] = {2, 2, 2};           /* no drop: skipped */
    const double *loss[] = {a, b, c};
    size_t len[] = {6, 4, 3};
    slaq_convergence cls[] = {SLAQ_CONV_SUBLINEAR, SLAQ_CONV_LINEAR,
                              SLAQ_CONV_LINEAR};
    slaq_prior p;
    assert_int_equal(slaq_prior_learn(loss, len, cls, 3, &p), SLAQ_OK);
    assert_int_equal(p.cls[SLAQ_CONV_UNKNOWN].curves, 2);
    assert_near(p.cls[SLAQ_CONV_UNKNOWN].half_iters, 1.5, 1e-12);
    assert_near(p.cls[SLAQ_CONV_SUBLINEAR].done_iters, 5, 1e-12);
    assert_near(p.cls[SLAQ_CONV_LINEAR].rel_drop, 0.5, 1e-12);
    assert_int_equal(p.cls[SLAQ_CONV_NONCONVEX].curves, 0);
    /* a class without curves falls back on every curve's row */
    assert_ptr_equal(slaq_prior_of(&p, SLAQ_CONV_NONCONVEX),
                     &p.cls[SLAQ_CONV_UNKNOWN]);
    assert_int_equal(slaq_prior_learn(loss + 2, len + 2, cls + 2, 1, &p),
                     SLAQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fair_redivides_on_arrival_and_departure),
        cmocka_unit_test(test_the_epoch_ends_a_job_at_its_target),
        cmocka_unit_test(test_reservation_is_taken_first),
        cmocka_unit_test(test_slaq_moves_cores_to_the_job_with_more_to_gain),
        cmocka_unit_test(test_reduction_against_predicted_final),
        cmocka_unit_test(test_norm_loss_of_any_point),
        cmocka_unit_test(test_bad_reports_and_options_are_refused),
        cmocka_unit_test(test_new_job_costs_what_the_others_cost),
        cmocka_unit_test(test_same_reports_same_allocations),
        cmocka_unit_test(test_new_jobs_get_their_fair_share),
        cmocka_unit_test(test_settling_job_keeps_its_fair_share),
        cmocka_unit_test(test_the_index_admits_a_new_batch_in_order),
        cmocka_unit_test(test_the_index_does_not_starve_a_job_of_few_reports),
        cmocka_unit_test(test_the_index_puts_a_falling_job_before_stopped_ones),
        cmocka_unit_test(test_fast_learner_is_not_starved),
        cmocka_unit_test(test_fast_learner_progress_is_true),
        cmocka_unit_test(test_hysteresis_keeps_allocations),
        cmocka_unit_test(test_declared_length_sets_the_end),
        cmocka_unit_test(test_damping_moves_half_way),
        cmocka_unit_test(test_end_window_is_in_iterations),
        cmocka_unit_test(test_no_improving_job_starves_past_the_bound),
        cmocka_unit_test(test_a_noisy_improving_job_is_lifted),
        cmocka_unit_test(test_a_flat_start_is_valued_by_its_class_prior),
        cmocka_unit_test(test_priors_are_learned_per_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
