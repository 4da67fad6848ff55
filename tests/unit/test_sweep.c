/*
 * test_sweep.c — the sweep framework and each policy's decisions.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "slaq/sweep.h"

static slaq_sweep *mk(const char *pol, size_t slots, int epochs, double target,
                      size_t n)
{
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, slots, epochs);
    p.y_target = target;
    p.t_max = 1000;
    char err[200];
    slaq_sweep *s = slaq_sweep_new(pol, &p, n, err, sizeof err);
    assert_non_null(s);
    return s;
}

/* Reports epochs from+1..to of configuration i from y (y[e-1] at epoch e),
 * one second each; returns the last action. */
static int feed(slaq_sweep *s, size_t i, int from, int to, const double *y)
{
    int a = 0;
    for (int e = from + 1; e <= to; e++) {
        a = slaq_sweep_report(s, i, e, y[e - 1], 1.0, e);
        if (a != SLAQ_SWEEP_CONTINUE)
            break;
    }
    return a;
}

static void fill_flat(double *y, int n, double v)
{
    for (int i = 0; i < n; i++)
        y[i] = v + 0.002 * ((i * 5) % 3 - 1);
}

static void fill_rise(double *y, int n, double top, double rate)
{
    for (int i = 0; i < n; i++)
        y[i] = top - (top - 0.1) * pow(i + 1, -rate);
}

static void test_new_rejects_bad_parameters_with_a_reason(void **st)
{
    (void)st;
    slaq_sweep_params p;
    char err[200];
    slaq_sweep_params_init(&p, 2, 50);
    assert_null(slaq_sweep_new("pop", &p, 3, err, sizeof err));
    assert_non_null(strstr(err, "y_target"));
    p.y_target = 0.8;
    assert_null(slaq_sweep_new("pop", &p, 3, err, sizeof err));
    assert_non_null(strstr(err, "t_max"));
    assert_null(slaq_sweep_new("pop-keep", &p, 3, err, sizeof err));
    assert_non_null(strstr(err, "pop-keep needs t_max"));
    assert_null(slaq_sweep_new("nope", &p, 3, err, sizeof err));
    assert_non_null(strstr(err, "unknown sweep policy 'nope'"));
    assert_non_null(strstr(err, "pop-keep"));
    p.slots = 0;
    assert_null(slaq_sweep_new("default", &p, 3, err, sizeof err));
    assert_non_null(strstr(err, "slots"));
    for (int i = 0; slaq_sweep_policies[i]; i++) {
        slaq_sweep_params q;
        slaq_sweep_params_init(&q, 2, 50);
        q.y_target = 0.8;
        q.t_max = 100;
        slaq_sweep *s = slaq_sweep_new(slaq_sweep_policies[i], &q, 3, err, sizeof err);
        assert_non_null(s);
        assert_string_equal(slaq_sweep_policy_name(s), slaq_sweep_policies[i]);
        slaq_sweep_free(s);
    }
}

static void test_default_runs_everything_in_order(void **st)
{
    (void)st;
    slaq_sweep *s = mk("default", 2, 30, 0.9, 3);
    double y[30];
    fill_flat(y, 30, 0.1);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    assert_int_equal(feed(s, 0, 0, 30, y), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_ended(s, 0, 30), SLAQ_OK);
    assert_int_equal(slaq_sweep_next(s, 30), 2);
    assert_int_equal(slaq_sweep_next(s, 30), (size_t)-1);
    slaq_sweep_info in;
    assert_int_equal(slaq_sweep_get(s, 0, &in), SLAQ_OK);
    assert_int_equal(in.state, SLAQ_CFG_ENDED);
    assert_int_equal(in.epochs, 30);
    assert_true(fabs(in.train_epoch_s - 1.0) < 1e-12);
    slaq_sweep_free(s);
}

static void test_report_checks_its_arguments(void **st)
{
    (void)st;
    slaq_sweep *s = mk("default", 1, 10, 0.9, 2);
    assert_int_equal(slaq_sweep_report(s, 0, 1, 0.5, 1, 1), SLAQ_EINVAL); /* not running */
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_report(s, 0, 1, NAN, 1, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_sweep_report(s, 0, 11, 0.5, 1, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_sweep_report(s, 5, 1, 0.5, 1, 1), SLAQ_EINVAL);
    assert_int_equal(slaq_sweep_report(s, 0, 2, 0.5, 1, 1), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_report(s, 0, 2, 0.6, 1, 1), SLAQ_EINVAL); /* not after */
    slaq_sweep_free(s);
}

/* TuPAQ: kill at a boundary when best * 1.5 does not reach the global
 * best; between boundaries never. */
static void test_bandit_eliminates_below_the_widened_best(void **st)
{
    (void)st;
    slaq_sweep *s = mk("bandit", 3, 40, 0.95, 3);
    double good[40], mid[40], bad[40];
    fill_flat(good, 40, 0.8);
    fill_flat(mid, 40, 0.6);  /* 0.6 * 1.5 = 0.9 > 0.8: stays */
    fill_flat(bad, 40, 0.4);  /* 0.4 * 1.5 = 0.6 < 0.8: goes */
    for (int i = 0; i < 3; i++)
        slaq_sweep_next(s, 0);
    assert_int_equal(feed(s, 0, 0, 10, good), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 2, 0, 9, bad), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_report(s, 2, 10, bad[9], 1, 10), SLAQ_SWEEP_KILL);
    assert_int_equal(feed(s, 1, 0, 20, mid), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_info in;
    slaq_sweep_get(s, 2, &in);
    assert_int_equal(in.state, SLAQ_CFG_KILLED);
    slaq_sweep_free(s);
}

static void test_bandit_on_a_loss_keeps_losses_near_the_best(void **st)
{
    (void)st;
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 20);
    p.y_target = 0.01;
    p.maximize = 0;
    char err[100];
    slaq_sweep *s = slaq_sweep_new("bandit", &p, 2, err, sizeof err);
    double low[20], high[20];
    fill_flat(low, 20, 1.0);
    fill_flat(high, 20, 2.0); /* 2.0 is not below 1.0 * 1.5 */
    slaq_sweep_next(s, 0);
    slaq_sweep_next(s, 0);
    assert_int_equal(feed(s, 0, 0, 10, low), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 10, high), SLAQ_SWEEP_KILL);
    slaq_sweep_info in;
    slaq_sweep_get(s, 0, &in);
    assert_true(fabs(in.best - 0.998) < 1e-9); /* reported as a loss */
    slaq_sweep_free(s);
}

/* Domhan: at epoch 30, a flat curve far below the best is killed; a
 * curve still rising towards it is not. */
static void test_earlyterm_kills_what_cannot_beat_the_best(void **st)
{
    (void)st;
    slaq_sweep *s = mk("earlyterm", 3, 120, 0.99, 3);
    double best[120], flat[120], rise[120];
    fill_flat(best, 120, 0.8);
    fill_flat(flat, 120, 0.3);
    fill_rise(rise, 120, 0.95, 0.5);
    for (int i = 0; i < 3; i++)
        slaq_sweep_next(s, 0);
    /* The leader's own plateau, within its noise of the best: kept. */
    assert_int_equal(feed(s, 0, 0, 30, best), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 29, flat), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_report(s, 1, 30, flat[29], 1, 30), SLAQ_SWEEP_KILL);
    assert_int_equal(feed(s, 2, 0, 30, rise), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_info in;
    slaq_sweep_get(s, 2, &in);
    assert_true(in.p >= 0.05);
    slaq_sweep_free(s);
}

static void test_pop_kills_below_the_kill_threshold_and_hopeless_curves(void **st)
{
    (void)st;
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 120);
    p.y_target = 0.85;
    p.t_max = 1000;
    p.kill_threshold = 0.15;
    char err[100];
    slaq_sweep *s = slaq_sweep_new("pop", &p, 3, err, sizeof err);
    double dead[120], low[120];
    fill_flat(dead, 120, 0.10);
    fill_flat(low, 120, 0.40);
    slaq_sweep_next(s, 0);
    slaq_sweep_next(s, 0);
    assert_int_equal(feed(s, 0, 0, 10, dead), SLAQ_SWEEP_KILL);
    slaq_sweep_info in;
    slaq_sweep_get(s, 0, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_POOR);
    assert_true(isnan(in.p)); /* killed before any prediction */
    assert_int_equal(feed(s, 1, 0, 10, low), SLAQ_SWEEP_KILL);
    slaq_sweep_get(s, 1, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_POOR);
    assert_true(in.p < 0.05);
    slaq_sweep_free(s);
}

/*
 * make demo-sweep under POP: configuration 1 (logreg, lr 3.3) climbs to
 * 0.79 validation accuracy in 10 epochs and reaches the target 0.83 at
 * epoch 34 of 60 (Default's winner). POP evaluated it at epochs 5 and 10
 * (b = 5, T_max 300 s, ~0.5 s epochs after 13 s of loading) and killed it
 * at epoch 10 with p = 0.03: its curve model's BIC weights had collapsed
 * onto the families that saturate at 0.79. It must keep running.
 */
static void test_pop_keeps_the_demo_sweeps_climbing_configuration(void **st)
{
    (void)st;
    const double y[20] = {0.6425, 0.605833, 0.665833, 0.63875, 0.747083,
                          0.756667, 0.77625, 0.781667, 0.787917, 0.789583,
                          0.795417, 0.797083, 0.8, 0.803333, 0.807083,
                          0.808333, 0.810833, 0.811667, 0.812917, 0.815833};
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 60);
    p.y_target = 0.83;
    p.t_max = 300;
    p.kill_threshold = 0.5;
    p.b = 5;
    slaq_lcurve_bound_metric(&p.lcurve, "val_accuracy", 1);
    char err[100];
    slaq_sweep *s = slaq_sweep_new("pop", &p, 30, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    for (int e = 1; e <= 20; e++) {
        int a = slaq_sweep_report(s, 1, e, y[e - 1], 0.5, 13 + 0.5 * e);
        assert_int_not_equal(a, SLAQ_SWEEP_KILL);
        if (a == SLAQ_SWEEP_SUSPEND)
            assert_int_equal(slaq_sweep_next(s, 13 + 0.5 * e), 1);
    }
    slaq_sweep_info in;
    slaq_sweep_get(s, 1, &in);
    assert_true(in.p > 0.15);
    slaq_sweep_free(s);
}

/* POP with 2 slots and n configurations: 0 rises fast to 0.90 and keeps
 * its slot, 1 rises slowly to 0.85 and is suspended at its first
 * boundary (epoch 10); their curves are left in fast and slow. */
static slaq_sweep *pop_fast_and_slow(const char *pol, size_t n, double *fast,
                                     double *slow)
{
    slaq_sweep *s = mk(pol, 2, 120, 0.80, n);
    fill_rise(fast, 120, 0.90, 0.9);
    fill_rise(slow, 120, 0.85, 0.5);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    assert_int_equal(feed(s, 0, 0, 10, fast), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 10, slow), SLAQ_SWEEP_SUSPEND);
    return s;
}

/*
 * POP's classes: a configuration heading well past the target is
 * promising (keeps its slot; labelled with p), a slower one is
 * opportunistic (suspended while others wait), and the promising one
 * comes back before fresh configurations. The threshold obeys
 * S_promising = min(k N(p*), S p*).
 */
static void test_pop_classifies_and_orders_the_idle_queue(void **st)
{
    (void)st;
    double fast[120], slow[120];
    slaq_sweep *s = pop_fast_and_slow("pop", 5, fast, slow);
    slaq_sweep_info a, b;
    slaq_sweep_get(s, 0, &a);
    slaq_sweep_get(s, 1, &b);
    assert_int_equal(a.cls, SLAQ_CLASS_PROMISING);
    assert_int_equal(b.cls, SLAQ_CLASS_OPPORTUNISTIC);
    assert_int_equal(b.state, SLAQ_CFG_SUSPENDED);
    assert_true(a.p > b.p && b.p >= 0.05);
    assert_true(a.ert > 0 && a.ert <= 110);
    double sp, th = slaq_sweep_threshold(s, &sp);
    assert_true(th <= a.p && th > b.p);
    /* N(p*) = 1 (only the fast one), S = 2. */
    assert_true(fabs(sp - fmin(1.0, 2 * th)) < 1e-12);
    /* The slot freed by the suspension goes to a fresh configuration
     * (FIFO) while the promising one keeps its own. */
    assert_int_equal(slaq_sweep_next(s, 10), 2);
    assert_int_equal(feed(s, 0, 10, 20, fast), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_free(s);
}

/* A suspended configuration that the threshold later labels promising
 * takes the next free slot before a fresh configuration that has waited
 * longer in the queue. */
static void test_pop_resumes_promising_before_fresh_ones(void **st)
{
    (void)st;
    slaq_sweep *s = mk("pop", 3, 120, 0.80, 5);
    double fast[120], slow[120], slower[120];
    fill_rise(fast, 120, 0.90, 0.9);
    fill_rise(slow, 120, 0.85, 0.5);
    fill_rise(slower, 120, 0.84, 0.5);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(slaq_sweep_next(s, 0), i); /* 3 joins the queue */
    assert_int_equal(feed(s, 0, 0, 10, fast), SLAQ_SWEEP_CONTINUE);
    /* 1 is opportunistic beside the fast one: suspended, behind 3. */
    assert_int_equal(feed(s, 1, 0, 10, slow), SLAQ_SWEEP_SUSPEND);
    /* The fast one ends; 2's evaluation makes 1 the most likely. */
    assert_int_equal(slaq_sweep_ended(s, 0, 10), SLAQ_OK);
    slaq_sweep_info in1, in2;
    int a = feed(s, 2, 0, 10, slower);
    slaq_sweep_get(s, 1, &in1);
    slaq_sweep_get(s, 2, &in2);
    assert_true(in1.p > in2.p);
    assert_int_equal(in1.cls, SLAQ_CLASS_PROMISING);
    assert_int_equal(in1.state, SLAQ_CFG_SUSPENDED);
    assert_int_equal(a, SLAQ_SWEEP_SUSPEND);
    /* Fresh 3 has waited longer; 1 still goes first. */
    assert_int_equal(slaq_sweep_next(s, 20), 1);
    assert_int_equal(slaq_sweep_next(s, 20), 3);
    slaq_sweep_free(s);
}

/*
 * POP's opportunistic round robin: an opportunistic configuration
 * suspended at its boundary gets its next turn after the configurations
 * already waiting and the one fresh configuration in the queue, not after
 * every configuration the sweep has yet to start (with 100 configurations
 * and 4 slots that was a full pass over the sweep: on the logreg traces
 * without start-up the eventual winner, opportunistic at epoch 10 and
 * promising at epoch 20, waited for all 100 first turns).
 */
static void test_pop_round_robin_resumes_before_every_fresh_one_started(void **st)
{
    (void)st;
    double fast[120], slow[120];
    slaq_sweep *s = pop_fast_and_slow("pop", 8, fast, slow);
    /* Fresh 2 joined the queue before 1 was suspended: it goes first. */
    assert_int_equal(slaq_sweep_next(s, 10), 2);
    assert_int_equal(feed(s, 2, 0, 10, slow), SLAQ_SWEEP_SUSPEND);
    slaq_sweep_info in;
    slaq_sweep_get(s, 1, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
    /* Now 1's turn, ahead of fresh 3..7, then fresh 3 (which joined when
     * 2 started), then 2. */
    assert_int_equal(slaq_sweep_next(s, 20), 1);
    assert_int_not_equal(feed(s, 1, 10, 20, slow), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_next(s, 30), 3);
    assert_int_equal(feed(s, 3, 0, 10, slow), SLAQ_SWEEP_SUSPEND);
    assert_int_equal(slaq_sweep_next(s, 40), 2);
    slaq_sweep_free(s);
}

/*
 * pop and pop-keep, 2 slots, 4 configurations, target 0.80: configuration
 * 0 (curve a) is alone at its first boundary, so promising; then 1 rises
 * fast to 0.90 (p near 1) and sets p* above 0's p. Returns the action at
 * 0's boundary at epoch 20 and leaves 0's state in in.
 */
static int keep_scenario(const char *pol, const double *a, slaq_sweep **out,
                         slaq_sweep_info *in)
{
    double fast[120];
    fill_rise(fast, 120, 0.90, 0.9);
    /* S = 3: at p_a ~ 0.56 and p_fast ~ 0.8, S_promising = min(2, 3 p_a)
     * holds both in the promising pool (with S = 2 it holds one: 1.12). */
    slaq_sweep *s = mk(pol, 3, 120, 0.80, 4);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    assert_int_equal(feed(s, 0, 0, 10, a), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_get(s, 0, in);
    assert_int_equal(in->cls, SLAQ_CLASS_PROMISING);
    assert_int_equal(feed(s, 1, 0, 10, fast), SLAQ_SWEEP_CONTINUE);
    int act = feed(s, 0, 10, 20, a);
    slaq_sweep_get(s, 0, in);
    *out = s;
    return act;
}

/*
 * pop-keep: a configuration that was promising and is still rising on
 * course for the target (0.55 + 0.0025 per epoch: 0.80 at epoch 101 of
 * 120) keeps its slot when its p falls below p*, at epoch 20 and again at
 * 30, labelled promising; pop suspends it at epoch 20.
 */
static void test_pop_keep_keeps_a_rising_configuration_pop_suspends(void **st)
{
    (void)st;
    double a[120];
    for (int i = 0; i < 120; i++)
        a[i] = 0.55 + 0.0025 * i;
    slaq_sweep *s;
    slaq_sweep_info in;
    assert_int_equal(keep_scenario("pop", a, &s, &in), SLAQ_SWEEP_SUSPEND);
    assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
    slaq_sweep_free(s);

    assert_int_equal(keep_scenario("pop-keep", a, &s, &in), SLAQ_SWEEP_CONTINUE);
    double th = slaq_sweep_threshold(s, NULL);
    assert_true(in.p < th); /* below p*, kept by the rule alone */
    assert_int_equal(in.cls, SLAQ_CLASS_PROMISING);
    assert_int_equal(in.state, SLAQ_CFG_RUNNING);
    assert_int_equal(feed(s, 0, 20, 30, a), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_get(s, 0, &in);
    assert_true(in.p < slaq_sweep_threshold(s, NULL));
    assert_int_equal(in.cls, SLAQ_CLASS_PROMISING);
    /* Another configuration's boundary does not relabel it. */
    double fast[120];
    fill_rise(fast, 120, 0.90, 0.9);
    assert_int_equal(feed(s, 1, 10, 20, fast), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_get(s, 0, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_PROMISING);
    slaq_sweep_free(s);
}

/*
 * pop-keep gives the slot back once the curve stalls: the same start,
 * then a jump to 0.79 at epoch 20 (promising) and flat after it; at epoch
 * 30 its best has not risen for b epochs and its p is below p*, so it is
 * suspended as under pop.
 */
static void test_pop_keep_suspends_a_stalled_configuration(void **st)
{
    (void)st;
    double a[120];
    for (int i = 0; i < 120; i++)
        a[i] = i < 19 ? 0.55 + 0.0025 * i : 0.79;
    for (int k = 0; k < 2; k++) {
        slaq_sweep *s;
        slaq_sweep_info in;
        assert_int_equal(keep_scenario(k ? "pop-keep" : "pop", a, &s, &in),
                         SLAQ_SWEEP_CONTINUE);
        assert_int_equal(in.cls, SLAQ_CLASS_PROMISING);
        assert_int_equal(feed(s, 0, 20, 30, a), SLAQ_SWEEP_SUSPEND);
        slaq_sweep_get(s, 0, &in);
        assert_true(in.p >= 0.05 && in.p < slaq_sweep_threshold(s, NULL));
        assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
        slaq_sweep_free(s);
    }
}

/* pop-keep keeps only configurations that were promising: one that rises
 * but was opportunistic at its first boundary is suspended as under pop. */
static void test_pop_keep_suspends_one_never_promising(void **st)
{
    (void)st;
    double fast[120], slow[120];
    slaq_sweep *s = pop_fast_and_slow("pop-keep", 5, fast, slow);
    slaq_sweep_info in;
    slaq_sweep_get(s, 1, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
    assert_int_equal(in.state, SLAQ_CFG_SUSPENDED);
    slaq_sweep_free(s);
}

/* pop-early: at epoch floor(0.4 b) (4 for b = 10, 8 for b = 20) POP's kill
 * rules apply: below the kill threshold, or p < 0.05. pop-keep waits for
 * epoch b. */
static slaq_sweep *mk_killing(const char *pol, int b)
{
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 120);
    p.y_target = 0.85;
    p.t_max = 1000;
    p.kill_threshold = 0.15;
    p.b = b;
    char err[100];
    slaq_sweep *s = slaq_sweep_new(pol, &p, 3, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    return s;
}

static void test_pop_early_kills_poor_ones_at_its_first_check(void **st)
{
    (void)st;
    double dead[120], low[120];
    fill_flat(dead, 120, 0.10);
    fill_flat(low, 120, 0.40);
    slaq_sweep_info in;
    slaq_sweep *s = mk_killing("pop-early", 0);
    assert_int_equal(feed(s, 0, 0, 3, dead), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 0, 3, 4, dead), SLAQ_SWEEP_KILL);
    slaq_sweep_get(s, 0, &in);
    assert_int_equal(in.epochs, 4);
    assert_int_equal(in.cls, SLAQ_CLASS_POOR);
    assert_int_equal(feed(s, 1, 0, 3, low), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 3, 4, low), SLAQ_SWEEP_KILL);
    slaq_sweep_get(s, 1, &in);
    assert_true(in.p < 0.05);
    slaq_sweep_free(s);
    /* b = 20: the first check is at epoch 8. */
    s = mk_killing("pop-early", 20);
    assert_int_equal(feed(s, 0, 0, 7, dead), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 0, 7, 8, dead), SLAQ_SWEEP_KILL);
    slaq_sweep_free(s);
    /* pop-keep runs both to epoch 10. */
    s = mk_killing("pop-keep", 0);
    assert_int_equal(feed(s, 0, 0, 9, dead), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 9, low), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 0, 9, 10, dead), SLAQ_SWEEP_KILL);
    assert_int_equal(feed(s, 1, 9, 10, low), SLAQ_SWEEP_KILL);
    slaq_sweep_free(s);
}

/* pop-early's first check only kills: a slow starter that is not poor
 * keeps its slot through it, although others wait, and is suspended (as
 * opportunistic) at its boundary b = 10, as under pop-keep. */
static void test_pop_early_spares_a_slow_starter_until_its_boundary(void **st)
{
    (void)st;
    double fast[120], slow[120];
    slaq_sweep *s = mk("pop-early", 2, 120, 0.80, 5);
    fill_rise(fast, 120, 0.90, 0.9);
    fill_rise(slow, 120, 0.85, 0.5);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    assert_int_equal(feed(s, 0, 0, 4, fast), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 4, slow), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_info in;
    slaq_sweep_get(s, 1, &in);
    assert_int_equal(in.state, SLAQ_CFG_RUNNING);
    assert_true(in.p >= 0.05); /* judged at epoch 4, and spared */
    assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
    assert_int_equal(feed(s, 0, 4, 10, fast), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 4, 9, slow), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 9, 10, slow), SLAQ_SWEEP_SUSPEND);
    slaq_sweep_get(s, 1, &in);
    assert_int_equal(in.cls, SLAQ_CLASS_OPPORTUNISTIC);
    slaq_sweep_free(s);
}

/* Policies that never suspend still start configurations in order. */
/* p of one configuration of curve y after `epochs` epochs (now = epoch),
 * alone in a POP sweep with the given slots and target. */
static double pop_p_alone(const double *y, int epochs, double target)
{
    slaq_sweep *s = mk("pop", 3, 120, target, 1);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    feed(s, 0, 0, epochs, y);
    slaq_sweep_info in;
    slaq_sweep_get(s, 0, &in);
    slaq_sweep_free(s);
    return in.p;
}

/*
 * The promising pool holds S_promising slots (the thesis, §7.2): when more
 * configurations pass p* than S_promising slots hold, the most likely ones
 * are promising and the rest share the opportunistic pool. Three identical
 * curves on 3 slots at p in [0.5, 5/6): N(p) = 3, S_effective = 3p, a pool
 * of round(3p) = 2, so the third is opportunistic and gives its slot to
 * the configuration waiting; every configuration at p >= p* used to be
 * promising, and all three kept their slots.
 */
static void test_pop_promising_pool_holds_s_promising_slots(void **st)
{
    (void)st;
    double y[120];
    fill_rise(y, 120, 0.9, 0.5);
    /* A target where one such curve has p in [0.55, 0.8] at epoch 10. */
    double target = NAN;
    for (double t = 0.70; t < 0.95 && isnan(target); t += 0.005) {
        double p = pop_p_alone(y, 10, t);
        if (p >= 0.55 && p <= 0.8)
            target = t;
    }
    assert_false(isnan(target));
    slaq_sweep *s = mk("pop", 3, 120, target, 4);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(slaq_sweep_next(s, 0), i);
    assert_int_equal(feed(s, 0, 0, 10, y), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 10, y), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 2, 0, 10, y), SLAQ_SWEEP_SUSPEND);
    double sp, th = slaq_sweep_threshold(s, &sp);
    slaq_sweep_info in[3];
    size_t promising = 0;
    for (size_t i = 0; i < 3; i++) {
        slaq_sweep_get(s, i, &in[i]);
        assert_true(in[i].p >= th);
        promising += in[i].cls == SLAQ_CLASS_PROMISING;
    }
    assert_true(fabs(sp - 3 * th) < 1e-12);
    assert_int_equal(promising, 2);
    assert_int_equal(in[2].cls, SLAQ_CLASS_OPPORTUNISTIC);
    assert_int_equal(in[2].state, SLAQ_CFG_SUSPENDED);
    /* The waiting configuration takes the opportunistic slot. */
    assert_int_equal(slaq_sweep_next(s, 10), 3);
    slaq_sweep_free(s);
}

/* Reports configuration i's epochs from+1..to at now = t0 + epoch. */
static int feed_at(slaq_sweep *s, size_t i, int from, int to, const double *y,
                   double t0)
{
    int a = 0;
    for (int e = from + 1; e <= to; e++) {
        a = slaq_sweep_report(s, i, e, y[e - 1], 1.0, t0 + e);
        if (a != SLAQ_SWEEP_CONTINUE)
            break;
    }
    return a;
}

/* p of configuration 0 (fast, running past its boundary) after another
 * configuration's boundary, with POP's re-evaluation period reeval. */
static double p_after_other_boundary(double reeval, double *p_at_own)
{
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 120);
    p.y_target = 0.85;
    p.t_max = 1000;
    p.reeval = reeval;
    char err[200];
    slaq_sweep *s = slaq_sweep_new("pop", &p, 2, err, sizeof err);
    assert_non_null(s);
    double fast[120], slow[120];
    fill_rise(fast, 120, 0.90, 0.9);
    fill_rise(slow, 120, 0.88, 0.3);
    assert_int_equal(slaq_sweep_next(s, 0), 0);
    assert_int_equal(slaq_sweep_next(s, 0), 1);
    assert_int_equal(feed_at(s, 0, 0, 10, fast, 0), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_info in;
    slaq_sweep_get(s, 0, &in);
    *p_at_own = in.p;
    assert_int_equal(feed_at(s, 0, 10, 14, fast, 0), SLAQ_SWEEP_CONTINUE);
    feed_at(s, 1, 0, 10, slow, 20);
    slaq_sweep_get(s, 0, &in);
    slaq_sweep_free(s);
    return in.p;
}

/* The thesis evaluates p periodically for every active configuration:
 * another configuration's boundary, a period after the last evaluation,
 * estimates p again for a running one from the epochs it has reported
 * since its own boundary; with reeval < 0 p stays that of its boundary. */
static void test_pop_re_evaluates_every_active_configuration(void **st)
{
    (void)st;
    double own, never = p_after_other_boundary(-1, &own);
    assert_true(never == own);
    double own2, periodic = p_after_other_boundary(0, &own2);
    assert_true(own2 == own);
    assert_true(periodic != own);
    /* With a period longer than the time since, nothing is re-estimated. */
    double own3, later = p_after_other_boundary(1000, &own3);
    assert_true(later == own3);
    /* A NaN period is refused. */
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 120);
    p.y_target = 0.85;
    p.t_max = 1000;
    p.reeval = NAN;
    char err[200];
    assert_null(slaq_sweep_new("pop", &p, 2, err, sizeof err));
    assert_non_null(strstr(err, "reeval"));
}

/* The oracle of the next test: the true curves of its configurations,
 * 120 epochs each, reported as 1 - y when `loss`. */
struct truth {
    const double *y[2];
    int loss;
};

static double truth_at(void *ctx, size_t i, int m)
{
    const struct truth *t = ctx;
    if (i >= 2 || m < 1 || m > 120)
        return NAN;
    return t->loss ? 1 - t->y[i][m - 1] : t->y[i][m - 1];
}

/* A sweep of two configurations, 120 epochs, 2 slots, t_max 1000, under
 * policy pol, with the oracle t (NULL: the curve model); both started
 * when it is made. NULL with the reason in err. */
static slaq_sweep *mk_truth(const char *pol, double target, int maximize,
                            struct truth *t, char *err, size_t errlen)
{
    slaq_sweep_params p;
    slaq_sweep_params_init(&p, 2, 120);
    p.y_target = target;
    p.maximize = maximize;
    p.t_max = 1000;
    if (t) {
        p.oracle = truth_at;
        p.oracle_ctx = t;
    }
    slaq_sweep *s = slaq_sweep_new(pol, &p, 2, err, errlen);
    if (s) {
        assert_int_equal(slaq_sweep_next(s, 0), 0);
        assert_int_equal(slaq_sweep_next(s, 0), 1);
    }
    return s;
}

/*
 * With an oracle, POP decides from the true future instead of the curve
 * model: at epoch 10 a late bloomer, flat at 0.2 until it jumps to 0.85
 * at epoch 70, has p = 1 and ERT = 60 epochs, and a fast starter that
 * levels off at 0.78 below the 0.80 target is poor and killed, where the
 * model says the opposite. The same on the loss 1 - y (maximize = 0).
 */
static void test_oracle_replaces_the_curve_model(void **st)
{
    (void)st;
    double late[120], fast[120];
    for (int i = 0; i < 120; i++)
        late[i] = i + 1 < 70 ? 0.2 + 0.002 * (i % 2) : 0.85;
    fill_rise(fast, 120, 0.78, 0.9);
    for (int loss = 0; loss <= 1; loss++) {
        struct truth t = {{late, fast}, loss};
        double lt[120], ft[120];
        for (int i = 0; i < 120; i++) {
            lt[i] = loss ? 1 - late[i] : late[i];
            ft[i] = loss ? 1 - fast[i] : fast[i];
        }
        for (int oracle = 0; oracle <= 1; oracle++) {
            char err[200];
            slaq_sweep *s = mk_truth("pop", loss ? 0.2 : 0.8, !loss,
                                     oracle ? &t : NULL, err, sizeof err);
            assert_non_null(s);
            int a0 = feed(s, 0, 0, 10, lt), a1 = feed(s, 1, 0, 10, ft);
            slaq_sweep_info in0, in1;
            slaq_sweep_get(s, 0, &in0);
            slaq_sweep_get(s, 1, &in1);
            if (oracle) {
                assert_int_equal(a0, SLAQ_SWEEP_CONTINUE);
                assert_true(in0.p == 1);
                assert_true(fabs(in0.ert - 60) < 1e-9);
                assert_int_equal(in0.cls, SLAQ_CLASS_PROMISING);
                assert_int_equal(a1, SLAQ_SWEEP_KILL);
                assert_true(in1.p == 0);
            } else {
                assert_int_equal(a0, SLAQ_SWEEP_KILL);
                assert_int_equal(a1, SLAQ_SWEEP_CONTINUE);
                assert_true(in1.p > 0.05);
            }
            slaq_sweep_free(s);
        }
    }
    /* Only a policy with a curve model takes an oracle. */
    struct truth t = {{late, fast}, 0};
    char err[200] = "";
    assert_null(mk_truth("bandit", 0.8, 1, &t, err, sizeof err));
    assert_non_null(strstr(err, "bandit has no curve model"));
}

/* EarlyTerm with an oracle kills exactly what ends below the best so far
 * (Domhan's criterion with a perfect prediction of the last epoch, the
 * raw curve's, not its best). */
static void test_earlyterm_oracle_kills_what_ends_below_the_best(void **st)
{
    (void)st;
    double lead[120], lag[120], peak[120];
    fill_rise(lead, 120, 0.9, 0.9);
    for (int i = 0; i < 120; i++) {
        lag[i] = i < 30 ? 0.3 : 0.95; /* below the best at 30, above at 120 */
        peak[i] = i < 30 ? 0.3 : i < 60 ? 0.95 : 0.5; /* above, then below */
    }
    char err[200];
    for (int oracle = 0; oracle <= 1; oracle++) {
        struct truth t = {{lead, lag}, 0};
        slaq_sweep *s = mk_truth("earlyterm", 0.99, 1, oracle ? &t : NULL,
                                 err, sizeof err);
        assert_non_null(s);
        assert_int_equal(feed(s, 0, 0, 30, lead), SLAQ_SWEEP_CONTINUE);
        assert_int_equal(feed(s, 1, 0, 30, lag),
                         oracle ? SLAQ_SWEEP_CONTINUE : SLAQ_SWEEP_KILL);
        slaq_sweep_free(s);
    }
    struct truth t = {{lead, peak}, 0};
    slaq_sweep *s = mk_truth("earlyterm", 0.99, 1, &t, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(feed(s, 0, 0, 30, lead), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(feed(s, 1, 0, 30, peak), SLAQ_SWEEP_KILL);
    slaq_sweep_free(s);
}

static void test_default_starts_in_the_generator_order(void **st)
{
    (void)st;
    slaq_sweep *s = mk("default", 3, 10, 0.99, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(slaq_sweep_next(s, 0), i);
        double y[10];
        fill_flat(y, 10, 0.5);
        feed(s, i, 0, 10, y);
        slaq_sweep_ended(s, i, 10);
    }
    assert_int_equal(slaq_sweep_next(s, 10), (size_t)-1);
    slaq_sweep_free(s);
}

/* ASHA with eta 3: rungs at 1, 3, 9, 27...; at a rung a configuration goes
 * on only within the top max(1, floor(n/3)) of the values seen there. */
static void test_sh_promotes_the_top_third_of_each_rung(void **st)
{
    (void)st;
    slaq_sweep *s = mk("sh", 4, 30, 0.99, 4);
    double a[30], b[30], c[30], d[30];
    fill_flat(a, 30, 0.5);
    fill_flat(b, 30, 0.4);
    fill_flat(c, 30, 0.6);
    fill_flat(d, 30, 0.45);
    for (int i = 0; i < 4; i++)
        slaq_sweep_next(s, 0);
    assert_int_equal(slaq_sweep_report(s, 0, 1, a[0], 1, 1), SLAQ_SWEEP_CONTINUE); /* alone */
    assert_int_equal(slaq_sweep_report(s, 1, 1, b[0], 1, 1), SLAQ_SWEEP_KILL);     /* 2nd of 2 */
    assert_int_equal(slaq_sweep_report(s, 2, 1, c[0], 1, 1), SLAQ_SWEEP_CONTINUE); /* best */
    assert_int_equal(slaq_sweep_report(s, 3, 1, d[0], 1, 1), SLAQ_SWEEP_KILL);     /* 3rd of 4 */
    assert_int_equal(slaq_sweep_report(s, 0, 2, a[1], 1, 2), SLAQ_SWEEP_CONTINUE); /* no rung */
    assert_int_equal(slaq_sweep_report(s, 0, 3, a[2], 1, 3), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_report(s, 2, 2, c[1], 1, 2), SLAQ_SWEEP_CONTINUE);
    assert_int_equal(slaq_sweep_report(s, 2, 3, c[2], 1, 3), SLAQ_SWEEP_CONTINUE);
    slaq_sweep_free(s);
}

/* Hyperband: 5 brackets for 1..120 epochs at eta 3; configurations of
 * bracket s meet their first rung at 3^s epochs, so some are never judged
 * at epoch 1. */
static void test_hyperband_spreads_configurations_over_brackets(void **st)
{
    (void)st;
    enum { N = 60 };
    slaq_sweep *s = mk("hyperband", N, 120, 0.99, N);
    double y[120];
    fill_flat(y, 120, 0.5);
    int kept_at_1 = 0;
    for (int i = 0; i < N; i++)
        slaq_sweep_next(s, 0);
    /* Descending values: each newcomer at epoch 1 is the worst so far. */
    for (int i = 0; i < N; i++) {
        int a = slaq_sweep_report(s, (size_t)i, 1, 0.9 - 0.01 * i, 1, 1);
        kept_at_1 += a == SLAQ_SWEEP_CONTINUE;
    }
    /* Bracket 0 alone (the largest share) would keep only its first few;
     * the other brackets keep everyone at epoch 1. */
    assert_true(kept_at_1 > N / 4);
    assert_true(kept_at_1 < N);
    slaq_sweep_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_rejects_bad_parameters_with_a_reason),
        cmocka_unit_test(test_default_runs_everything_in_order),
        cmocka_unit_test(test_report_checks_its_arguments),
        cmocka_unit_test(test_bandit_eliminates_below_the_widened_best),
        cmocka_unit_test(test_bandit_on_a_loss_keeps_losses_near_the_best),
        cmocka_unit_test(test_earlyterm_kills_what_cannot_beat_the_best),
        cmocka_unit_test(test_pop_kills_below_the_kill_threshold_and_hopeless_curves),
        cmocka_unit_test(test_pop_keeps_the_demo_sweeps_climbing_configuration),
        cmocka_unit_test(test_pop_classifies_and_orders_the_idle_queue),
        cmocka_unit_test(test_pop_resumes_promising_before_fresh_ones),
        cmocka_unit_test(test_pop_round_robin_resumes_before_every_fresh_one_started),
        cmocka_unit_test(test_pop_keep_keeps_a_rising_configuration_pop_suspends),
        cmocka_unit_test(test_pop_keep_suspends_a_stalled_configuration),
        cmocka_unit_test(test_pop_keep_suspends_one_never_promising),
        cmocka_unit_test(test_pop_early_kills_poor_ones_at_its_first_check),
        cmocka_unit_test(test_pop_early_spares_a_slow_starter_until_its_boundary),
        cmocka_unit_test(test_pop_promising_pool_holds_s_promising_slots),
        cmocka_unit_test(test_pop_re_evaluates_every_active_configuration),
        cmocka_unit_test(test_oracle_replaces_the_curve_model),
        cmocka_unit_test(test_earlyterm_oracle_kills_what_ends_below_the_best),
        cmocka_unit_test(test_default_starts_in_the_generator_order),
        cmocka_unit_test(test_sh_promotes_the_top_third_of_each_rung),
        cmocka_unit_test(test_hyperband_spreads_configurations_over_brackets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
