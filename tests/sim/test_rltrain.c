/*
 * test_rltrain.c — MLF-RL's training (src/sim/rltrain.h): Eq. 7's reward
 * of a job, worked by hand; two trainings from one seed give the same
 * model bit for bit, another seed another model; the imitation makes the
 * network order jobs as MLF-H does.
 */
#include <string.h>

#include "sim/rltrain.h"
#include "testutil.h"

#define CURVES "data/curves/slaq-train.jsonl"

static void test_job_reward_is_eq7_normalised(void **state)
{
    (void)state;
    /* 2 h: g1 = 0.5; deadline met, accuracy not, 0.8 of the reduction. */
    assert_near(rl_job_reward(7200, 1, 0, 0.8),
                0.5 * 0.5 + 0.55 + 0.15 * 0.8, 1e-15);
    /* Within the hour g1 is 1: everything met is 0.5+0.55+0.15+0.15. */
    assert_near(rl_job_reward(600, 1, 1, 1), 1.35, 1e-15);
    assert_near(rl_job_reward(36000, 0, 0, 0), 0.05, 1e-15);
}

static void train(unsigned long seed, slaq_rl_model *m, double *reward)
{
    char err[256];
    curve_set cs;
    assert_int_equal(curves_load(CURVES, &cs, err, sizeof err), 0);
    dl_config c;
    dl_config_init(&c);
    c.cl = (dl_cluster){3, 32, 32 * 6.0};
    rl_train_opts o;
    rl_train_opts_init(&o);
    o.jobs = 150;
    o.seed = seed;
    o.workloads = 1;
    o.imitate_epochs = 3;
    o.iterations = 2;
    int rc = rl_train(&o, &cs, &c, m, reward, NULL, err, sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    curves_free(&cs);
}

static void test_training_is_deterministic_from_the_seed(void **state)
{
    (void)state;
    slaq_rl_model a, b, c;
    double ra, rb, rc;
    train(7, &a, &ra);
    train(7, &b, &rb);
    train(8, &c, &rc);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(ra == rb);
    assert_memory_not_equal(&a, &c, sizeof a);
    assert_true(ra > 0 && ra <= 1.35);
}

/* After imitation the network's scores order the jobs of a state as
 * MLF-H's priorities do, nearly always. */
static void test_imitation_orders_jobs_as_mlfs_h(void **state)
{
    (void)state;
    slaq_rl_model m;
    double r;
    train(3, &m, &r);
    enum { N = 40 };
    slaq_pjob j[N];
    srand(5);
    for (int i = 0; i < N; i++)
        j[i] = (slaq_pjob){
            .weight = 1, .max_cores = 4, .now = 1e5,
            .deadline = rand() % 3 ? 1e5 + rand() % 100000 : INFINITY,
            .urgency = 1 + rand() % 10, .iter = 1 + rand() % 500,
            .remaining_s = 60 + rand() % 80000, .waited = rand() % 20000,
            .last_drop = 0.01 * (rand() % 10), .total_drop = 1,
            .prev_alloc = rand() % 2 ? 4 : 0};
    slaq_prio_params pp;
    slaq_prio_params_init(&pp);
    double p[N], f[N * SLAQ_RL_NFEAT];
    slaq_mlfs_priority(j, N, &pp, p);
    slaq_rl_features(j, N, &pp, f);
    int agree = 0, pairs = 0;
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++) {
            if (fabs(p[a] - p[b]) < 0.02)
                continue;
            pairs++;
            agree += (slaq_rl_score(&m, f + a * SLAQ_RL_NFEAT, NULL) >
                      slaq_rl_score(&m, f + b * SLAQ_RL_NFEAT, NULL)) ==
                     (p[a] > p[b]);
        }
    assert_true(pairs > 500);
    assert_true(agree > 0.9 * pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_reward_is_eq7_normalised),
        cmocka_unit_test(test_training_is_deterministic_from_the_seed),
        cmocka_unit_test(test_imitation_orders_jobs_as_mlfs_h),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
