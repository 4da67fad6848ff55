/*
 * test_shares.c — shares between users (slaq/shares.h): the tree's
 * checks, the division by weight with what an idle user leaves going to
 * the others, an account's part divided among its users, the fair-share
 * factor of past usage and its half-life, caps on cores spread over
 * nodes; and the scheduler dividing each user's part among its jobs with
 * its policy, holding back the jobs past a cap, charging usage.
 */
#include <string.h>

#include "slaq/shares.h"
#include "slaq/slaq.h"
#include "testutil.h"

/* Divides one node of `cap` cores with demand d[] (count entries);
 * returns the parts in out[]. */
static void divide1(slaq_shares *t, double cap, const double *d, double *out)
{
    assert_int_equal(slaq_shares_divide(t, 1, &cap, d, out), SLAQ_OK);
}

static void test_the_tree_refuses_bad_entries(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    assert_non_null(t);
    assert_int_equal(slaq_shares_count(t), 1);
    assert_string_equal(slaq_shares_at(t, 0)->name, "root");
    int lab = slaq_shares_add(t, "lab", SLAQ_SHARES_ROOT, 2, 0);
    assert_int_equal(lab, 1);
    int ann = slaq_shares_add(t, "ann", lab, 1, 1);
    assert_int_equal(ann, 2);
    assert_int_equal(slaq_shares_find(t, "ann"), ann);
    assert_true(slaq_shares_find(t, "bob") < 0);
    assert_true(slaq_shares_add(t, "ann", lab, 1, 1) < 0);     /* taken */
    assert_true(slaq_shares_add(t, "bob", ann, 1, 1) < 0);     /* a user */
    assert_true(slaq_shares_add(t, "bob", 9, 1, 1) < 0);       /* no id */
    assert_true(slaq_shares_add(t, "b b", lab, 1, 1) < 0);     /* name */
    assert_true(slaq_shares_add(t, "", lab, 1, 1) < 0);
    assert_true(slaq_shares_add(t, "bob", lab, 0, 1) < 0);     /* weight */
    assert_true(slaq_shares_add(t, "bob", lab, NAN, 1) < 0);
    char longname[SLAQ_SHARES_NAME_MAX + 1];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_true(slaq_shares_add(t, longname, lab, 1, 1) < 0);
    assert_int_equal(slaq_shares_count(t), 3);
    assert_int_equal(slaq_shares_set_weight(t, 0, 2), SLAQ_EINVAL);
    assert_int_equal(slaq_shares_set_weight(t, ann, -1), SLAQ_EINVAL);
    assert_int_equal(slaq_shares_set_caps(t, ann, 0, 0), SLAQ_EINVAL);
    assert_int_equal(slaq_shares_set_usage(t, lab, 5), SLAQ_EINVAL);
    assert_int_equal(slaq_shares_set_half_life(t, -1), SLAQ_EINVAL);
    assert_true(slaq_shares_under(t, ann, lab));
    assert_true(slaq_shares_under(t, ann, SLAQ_SHARES_ROOT));
    assert_false(slaq_shares_under(t, lab, ann));
    slaq_shares_free(t);
}

static void test_place_finds_or_adds_a_user_in_its_account(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int ann = slaq_shares_place(t, "ann", "lab");
    assert_true(ann > 0);
    int lab = slaq_shares_find(t, "lab");
    assert_true(lab > 0);
    assert_false(slaq_shares_at(t, lab)->user);
    assert_int_equal(slaq_shares_at(t, ann)->parent, lab);
    assert_int_equal(slaq_shares_place(t, "ann", "lab"), ann);   /* found */
    int bob = slaq_shares_place(t, "bob", NULL);
    assert_int_equal(slaq_shares_at(t, bob)->parent, SLAQ_SHARES_ROOT);
    assert_int_equal(slaq_shares_place(t, "bob", ""), bob);
    assert_true(slaq_shares_place(t, "ann", NULL) < 0);     /* elsewhere */
    assert_true(slaq_shares_place(t, "ann", "other") < 0);
    assert_true(slaq_shares_place(t, "lab", NULL) < 0);     /* an account */
    assert_true(slaq_shares_place(t, "cy", "bob") < 0);     /* a user */
    assert_true(slaq_shares_place(t, "c y", NULL) < 0);     /* bad name */
    assert_true(slaq_shares_find(t, "c y") < 0);
    slaq_shares_free(t);
}

static void test_users_divide_by_weight_and_idle_cores_go_to_others(
    void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
    int light = slaq_shares_add(t, "light", 0, 1, 1);
    double d[3] = {0}, p[3];
    /* twenty jobs against two, each able to use 4 cores, on 16 cores:
     * half each */
    d[heavy] = 80;
    d[light] = 8;
    divide1(t, 16, d, p);
    assert_near(p[heavy], 8, 1e-12);
    assert_near(p[light], 8, 1e-12);
    assert_near(p[0], 16, 1e-12);
    /* the light user's jobs can use only 3: the heavy one takes the rest */
    d[light] = 3;
    divide1(t, 16, d, p);
    assert_near(p[light], 3, 1e-12);
    assert_near(p[heavy], 13, 1e-12);
    /* no light jobs: the heavy user gets everything */
    d[light] = 0;
    divide1(t, 16, d, p);
    assert_near(p[heavy], 16, 1e-12);
    assert_near(p[light], 0, 0);
    /* weights 3:1 */
    d[light] = 80;
    assert_int_equal(slaq_shares_set_weight(t, heavy, 3), SLAQ_OK);
    divide1(t, 16, d, p);
    assert_near(p[heavy], 12, 1e-12);
    assert_near(p[light], 4, 1e-12);
    assert_near(slaq_shares_at(t, heavy)->share, 0.75, 1e-12);
    /* less asked than the node has: every user its demand */
    d[heavy] = 2;
    d[light] = 5;
    divide1(t, 16, d, p);
    assert_near(p[heavy], 2, 1e-12);
    assert_near(p[light], 5, 1e-12);
    slaq_shares_free(t);
}

static void test_an_accounts_part_goes_to_its_users(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int a = slaq_shares_add(t, "vision", 0, 3, 0);
    int b = slaq_shares_add(t, "speech", 0, 1, 0);
    int a1 = slaq_shares_add(t, "ann", a, 1, 1);
    int a2 = slaq_shares_add(t, "amy", a, 1, 1);
    int b1 = slaq_shares_add(t, "bob", b, 1, 1);
    double d[6] = {0}, p[6];
    d[a1] = d[a2] = d[b1] = 100;
    divide1(t, 16, d, p);
    assert_near(p[a], 12, 1e-12);
    assert_near(p[a1], 6, 1e-12);
    assert_near(p[a2], 6, 1e-12);
    assert_near(p[b], 4, 1e-12);
    assert_near(p[b1], 4, 1e-12);
    assert_near(slaq_shares_at(t, a1)->share, 0.375, 1e-12);
    /* amy idle: ann takes the account's part, not bob */
    d[a2] = 0;
    divide1(t, 16, d, p);
    assert_near(p[a1], 12, 1e-12);
    assert_near(p[b1], 4, 1e-12);
    /* a cap on the account: what it cannot take goes to speech */
    assert_int_equal(slaq_shares_set_caps(t, a, 10, 0), SLAQ_OK);
    divide1(t, 16, d, p);
    assert_near(p[a1], 10, 1e-12);
    assert_near(p[b1], 6, 1e-12);
    slaq_shares_free(t);
}

static void test_past_usage_lowers_a_users_weight_and_decays(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
    int light = slaq_shares_add(t, "light", 0, 1, 1);
    double d[3] = {0}, p[3], use[3] = {0};
    d[heavy] = d[light] = 100;
    use[heavy] = 1000;
    assert_int_equal(slaq_shares_charge(t, 0, use), SLAQ_OK);
    assert_near(slaq_shares_at(t, 0)->usage, 1000, 1e-9);
    /* half-life 0: usage is kept but ignored */
    divide1(t, 10, d, p);
    assert_near(p[heavy], 5, 1e-12);
    /* with a half-life, heavy used everything on half the shares: its
     * factor 2^(-1/0.5) = 1/4, light's 1: the parts 1:4 */
    assert_int_equal(slaq_shares_set_half_life(t, 100), SLAQ_OK);
    divide1(t, 10, d, p);
    assert_near(slaq_shares_at(t, heavy)->factor, 0.25, 1e-12);
    assert_near(slaq_shares_at(t, light)->factor, 1, 1e-12);
    assert_near(p[heavy], 2, 1e-12);
    assert_near(p[light], 8, 1e-12);
    /* a half-life later, half of it is left */
    assert_int_equal(slaq_shares_charge(t, 100, NULL), SLAQ_OK);
    assert_near(slaq_shares_at(t, heavy)->usage, 500, 1e-9);
    /* equal usage: the weights again */
    use[heavy] = 0;
    use[light] = 500;
    assert_int_equal(slaq_shares_charge(t, 0, use), SLAQ_OK);
    divide1(t, 10, d, p);
    assert_near(p[heavy], 5, 1e-12);
    use[light] = -1;
    assert_int_equal(slaq_shares_charge(t, 1, use), SLAQ_EINVAL);
    assert_near(slaq_shares_at(t, light)->usage, 500, 1e-9);
    assert_int_equal(slaq_shares_set_usage(t, light, 0), SLAQ_OK);
    assert_near(slaq_shares_at(t, 0)->usage, 500, 1e-9);
    slaq_shares_free(t);
}

static void test_a_cap_on_cores_is_spread_over_the_nodes(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int ann = slaq_shares_add(t, "ann", 0, 1, 1);
    int bob = slaq_shares_add(t, "bob", 0, 1, 1);
    assert_int_equal(slaq_shares_set_caps(t, ann, 3, 0), SLAQ_OK);
    /* two nodes of 8; ann asks 4 on node 0 and 2 on node 1 (3 cores
     * over both: 2 and 1); bob asks 8 on each */
    double cap[2] = {8, 8};
    double d[6] = {0}, p[6];
    d[0 * 3 + ann] = 4;
    d[1 * 3 + ann] = 2;
    d[0 * 3 + bob] = 8;
    d[1 * 3 + bob] = 8;
    assert_int_equal(slaq_shares_divide(t, 2, cap, d, p), SLAQ_OK);
    assert_near(p[0 * 3 + ann], 2, 1e-12);
    assert_near(p[1 * 3 + ann], 1, 1e-12);
    assert_near(p[0 * 3 + bob], 6, 1e-12);
    assert_near(p[1 * 3 + bob], 7, 1e-12);
    assert_near(slaq_shares_at(t, ann)->part, 3, 1e-12);
    assert_near(slaq_shares_at(t, 0)->part, 16, 1e-12);
    d[ann] = -1;
    assert_int_equal(slaq_shares_divide(t, 2, cap, d, p), SLAQ_EINVAL);
    slaq_shares_free(t);
}

/* A scheduler of `cores` cores on one node under `policy`, the tree t. */
static slaq_sched *sched_with(slaq_shares *t, slaq_policy_kind policy,
                              double cores)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = cores;
    c.policy = policy;
    c.unit = 1;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    assert_int_equal(slaq_sched_set_shares(s, t), SLAQ_OK);
    return s;
}

static slaq_job *add_job(slaq_sched *s, int tenant, double max_cores,
                         double t)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.tenant = tenant;
    o.max_cores = max_cores;
    o.iter_cpu_s = 1;
    slaq_job *j = slaq_sched_add(s, &o, t);
    assert_non_null(j);
    return j;
}

/* The cores user `tenant`'s jobs hold after the last epoch. */
static double user_cores(slaq_sched *s, int tenant)
{
    double sum = 0;
    for (size_t i = 0; i < slaq_sched_count(s); i++)
        if (slaq_job_tenant(slaq_sched_job(s, i)) == tenant)
            sum += slaq_job_alloc(slaq_sched_job(s, i));
    return sum;
}

static void test_a_light_user_holds_half_at_its_first_epoch(void **state)
{
    (void)state;
    slaq_policy_kind policies[] = {SLAQ_POLICY_FAIR, SLAQ_POLICY_SLAQ,
                                   SLAQ_POLICY_INDEX, SLAQ_POLICY_QUEUE};
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        slaq_shares *t = slaq_shares_new();
        int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
        int light = slaq_shares_add(t, "light", 0, 1, 1);
        slaq_sched *s = sched_with(t, policies[p], 16);
        for (int i = 0; i < 20; i++)
            add_job(s, heavy, 4, 0);
        assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
        /* alone, the heavy user has everything */
        assert_near(user_cores(s, heavy), 16, 1e-9);
        assert_int_equal(slaq_shares_at(t, heavy)->jobs, 20);
        add_job(s, light, 4, 10);
        add_job(s, light, 4, 10);
        assert_int_equal(slaq_sched_epoch(s, 10), SLAQ_OK);
        assert_near(user_cores(s, light), 8, 1e-9);
        assert_near(user_cores(s, heavy), 8, 1e-9);
        assert_near(slaq_shares_at(t, light)->cores, 8, 1e-9);
        assert_near(slaq_shares_at(t, light)->part, 8, 1e-9);
        /* what it held from 0 to 10 s was charged to it */
        assert_near(slaq_shares_at(t, heavy)->usage, 160, 1e-6);
        slaq_sched_free(s);
        slaq_shares_free(t);
    }
}

/* Forty reports of a loss falling as 1/k: a job its forecast calls
 * nearly done. */
static void converge(slaq_job *j)
{
    for (uint64_t i = 1; i <= 40; i++) {
        slaq_report r = {i, 1.0 / (double)i + 1e-4, 0.5, 100,
                         (double)i * 0.1};
        assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
    }
}

/* A light user's one job converges while a heavy user's three jobs have
 * just begun. With share-lend-at, the converged job asks its fair share
 * of the node among the four jobs (4 of 16 cores) in the division, and
 * the heavy user gets the rest; with 0 (never), the light user keeps its
 * half; and when the heavy user's jobs are nearly done too, no one
 * borrows and the weights alone divide. */
static void test_a_converged_job_lends_its_users_part(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        slaq_shares *t = slaq_shares_new();
        int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
        int light = slaq_shares_add(t, "light", 0, 1, 1);
        slaq_sched_config c;
        slaq_sched_config_init(&c);
        c.cores = 16;
        c.unit = 1;
        c.policy = SLAQ_POLICY_SLAQ;
        c.share_half_life_s = 0;
        c.share_lend_at = k == 1 ? 0 : SLAQ_DEFAULT_SHARE_LEND_AT;
        slaq_sched *s = slaq_sched_new(&c);
        assert_int_equal(slaq_sched_set_shares(s, t), SLAQ_OK);
        slaq_job *done = add_job(s, light, 16, 0);
        converge(done);
        for (int i = 0; i < 3; i++) {
            slaq_job *h = add_job(s, heavy, 16, 4);
            if (k == 2)
                converge(h);
        }
        assert_int_equal(slaq_sched_epoch(s, 5), SLAQ_OK);
        assert_true(slaq_job_reduction(done) >= SLAQ_DEFAULT_SHARE_LEND_AT);
        double want = k == 0 ? 4 : 8;
        assert_near(slaq_shares_at(t, light)->part, want, 1e-9);
        assert_near(user_cores(s, heavy), 16 - want, 1e-9);
        slaq_sched_free(s);
        slaq_shares_free(t);
    }
}

/* Three reports of a loss falling fast: a job that has just begun. */
static void begin(slaq_job *j)
{
    for (uint64_t i = 1; i <= 3; i++) {
        slaq_report r = {i, 1.0 / (double)i, 0.5, 100, (double)i * 0.1};
        assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
    }
}

/* A light user's converged job and a heavy user's three new ones on 16
 * cores, under `policy`, with shares (guarantee g) or without (t NULL);
 * returns the scheduler after one epoch. Lending is off: the guarantee
 * alone moves the cores. */
static slaq_sched *guarantee_run(slaq_shares *t, slaq_policy_kind policy,
                                 double g, int light, int heavy)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 16;
    c.unit = 1;
    c.policy = policy;
    c.share_half_life_s = 0;
    c.share_lend_at = 0;
    c.share_guarantee = g;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    if (t)
        assert_int_equal(slaq_sched_set_shares(s, t), SLAQ_OK);
    converge(add_job(s, light, 16, 0));
    for (int i = 0; i < 3; i++)
        begin(add_job(s, heavy, 16, 4));
    assert_int_equal(slaq_sched_epoch(s, 5), SLAQ_OK);
    return s;
}

/* With a guarantee G below 1, each user's part is G x its share plus
 * (1 - G) x what the policy gives its jobs without shares: the light
 * user's converged job, which slaq alone would leave near its minimum
 * share, keeps G of the light user's half. G = 1 is strict shares, G = 0
 * no shares; fair (no forecasts) and a cap on jobs keep the shares
 * strict whatever G. */
static void test_a_guarantee_mixes_the_share_with_the_policys_choice(
    void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
    int light = slaq_shares_add(t, "light", 0, 1, 1);
    slaq_sched *free_run = guarantee_run(NULL, SLAQ_POLICY_SLAQ, 1, light,
                                         heavy);
    double ref = user_cores(free_run, light);
    assert_true(ref < 4); /* slaq alone gives the converged job little */
    slaq_sched_free(free_run);
    double gs[] = {1, 0.6, 0.3, 0};
    for (size_t k = 0; k < sizeof gs / sizeof *gs; k++) {
        slaq_sched *s = guarantee_run(t, SLAQ_POLICY_SLAQ, gs[k], light,
                                      heavy);
        double want = gs[k] * 8 + (1 - gs[k]) * ref;
        assert_near(slaq_shares_at(t, light)->part, want, 1e-9);
        assert_near(user_cores(s, light), want, 1e-9);
        assert_near(user_cores(s, heavy), 16 - want, 1e-9);
        slaq_sched_free(s);
    }
    slaq_sched *s = guarantee_run(t, SLAQ_POLICY_FAIR, 0.3, light, heavy);
    assert_near(user_cores(s, light), 8, 1e-9);
    slaq_sched_free(s);
    assert_int_equal(slaq_shares_set_caps(t, heavy, INFINITY, 10), SLAQ_OK);
    s = guarantee_run(t, SLAQ_POLICY_SLAQ, 0.3, light, heavy);
    assert_near(user_cores(s, light), 8, 1e-9);
    slaq_sched_free(s);
    slaq_shares_free(t);
}

static void test_jobs_past_a_users_cap_wait_at_no_cores(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int ann = slaq_shares_add(t, "ann", 0, 1, 1);
    int bob = slaq_shares_add(t, "bob", 0, 1, 1);
    assert_int_equal(slaq_shares_set_caps(t, ann, INFINITY, 2), SLAQ_OK);
    slaq_sched *s = sched_with(t, SLAQ_POLICY_FAIR, 12);
    slaq_job *a1 = add_job(s, ann, 2, 0);
    slaq_job *a2 = add_job(s, ann, 2, 1);
    slaq_job *a3 = add_job(s, ann, 2, 2);
    add_job(s, bob, 12, 0);
    assert_int_equal(slaq_sched_epoch(s, 3), SLAQ_OK);
    assert_near(slaq_job_alloc(a1), 2, 1e-9);
    assert_near(slaq_job_alloc(a2), 2, 1e-9);
    assert_near(slaq_job_alloc(a3), 0, 0);
    assert_near(user_cores(s, bob), 8, 1e-9);
    assert_int_equal(slaq_shares_at(t, ann)->running, 2);
    /* the oldest leaves: the third runs */
    slaq_sched_remove(s, a1);
    assert_int_equal(slaq_sched_epoch(s, 4), SLAQ_OK);
    assert_near(slaq_job_alloc(a3), 2, 1e-9);
    /* a job of no user of the tree is refused */
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    assert_null(slaq_sched_add(s, &o, 5));
    o.tenant = 0; /* the root is an account */
    assert_null(slaq_sched_add(s, &o, 5));
    assert_int_equal(slaq_job_set_tenant(a2, 0), SLAQ_EINVAL);
    assert_int_equal(slaq_job_tenant(a2), ann);
    slaq_sched_free(s);
    slaq_shares_free(t);
}

static void test_a_user_that_used_the_cluster_weighs_less(void **state)
{
    (void)state;
    slaq_shares *t = slaq_shares_new();
    int heavy = slaq_shares_add(t, "heavy", 0, 1, 1);
    int light = slaq_shares_add(t, "light", 0, 1, 1);
    assert_int_equal(slaq_shares_set_half_life(t, 3600), SLAQ_OK);
    slaq_sched *s = sched_with(t, SLAQ_POLICY_FAIR, 10);
    for (int i = 0; i < 10; i++)
        add_job(s, heavy, 10, 0);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_sched_epoch(s, 100), SLAQ_OK);
    add_job(s, light, 10, 100);
    assert_int_equal(slaq_sched_epoch(s, 100), SLAQ_OK);
    /* heavy's factor 1/4 against light's 1: 2 and 8 cores */
    assert_near(user_cores(s, light), 8, 1e-9);
    assert_near(user_cores(s, heavy), 2, 1e-9);
    slaq_sched_free(s);
    slaq_shares_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_tree_refuses_bad_entries),
        cmocka_unit_test(test_place_finds_or_adds_a_user_in_its_account),
        cmocka_unit_test(
            test_users_divide_by_weight_and_idle_cores_go_to_others),
        cmocka_unit_test(test_an_accounts_part_goes_to_its_users),
        cmocka_unit_test(test_past_usage_lowers_a_users_weight_and_decays),
        cmocka_unit_test(test_a_cap_on_cores_is_spread_over_the_nodes),
        cmocka_unit_test(test_a_light_user_holds_half_at_its_first_epoch),
        cmocka_unit_test(test_a_converged_job_lends_its_users_part),
        cmocka_unit_test(
            test_a_guarantee_mixes_the_share_with_the_policys_choice),
        cmocka_unit_test(test_jobs_past_a_users_cap_wait_at_no_cores),
        cmocka_unit_test(test_a_user_that_used_the_cluster_weighs_less),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
