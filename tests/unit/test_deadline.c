/*
 * test_deadline.c — the priority policies and MLFS's pieces: EDF's and
 * Tiresias' orders, each term of MLF-H's Eq. 2-6 as slaq normalises it,
 * the Eq. 3/5 recursion, the priority division (preemptive and sticky),
 * the ideal virtual host and task, MLF-C's overload test and stop, a
 * job's goal through the scheduler, and MLFS's cluster in a scheduler
 * (slaq_sched_set_mlfs: its order, placement, stops and moves).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/deadline.h"
#include "slaq/slaq.h"
#include "testutil.h"

/* A job at time 1000 that arrived at 0, with nothing that moves a key:
 * no deadline, urgency 1, one iteration, no wait, a day left. */
static slaq_pjob pj(void)
{
    return (slaq_pjob){.weight = 1, .max_cores = 4, .now = 1000,
                       .deadline = INFINITY, .urgency = 1, .iter = 1,
                       .remaining_s = 86400};
}

static void keys(slaq_policy_kind k, const slaq_pjob *j, size_t n,
                 double *key)
{
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    assert_non_null(ws);
    assert_int_equal(slaq_policy_keys(k, j, n, ws, key), SLAQ_OK);
    slaq_alloc_ws_free(ws);
}

/* EDF: the nearer deadline first; a job without one after every job
 * with one, earlier arrivals first among those. */
static void test_edf_orders_by_deadline_then_arrival(void **state)
{
    (void)state;
    slaq_pjob j[4] = {pj(), pj(), pj(), pj()};
    j[0].deadline = 5000;
    j[1].deadline = 2000;
    j[2].arrival = 10;  /* no deadline, later */
    j[3].arrival = 5;   /* no deadline, earlier */
    double k[4];
    keys(SLAQ_POLICY_EDF, j, 4, k);
    assert_true(k[1] > k[0]);
    assert_true(k[0] > k[3]);
    assert_true(k[3] > k[2]);
}

/* Tiresias: attained service below 3,600 core-seconds is the first
 * queue, at or above it the second; arrival order inside a queue, so a
 * job that attained a little less does not pass an earlier one. */
static void test_tiresias_queues_at_3600_core_seconds(void **state)
{
    (void)state;
    slaq_pjob j[4] = {pj(), pj(), pj(), pj()};
    j[0] = (slaq_pjob){.attained = 3599, .arrival = 1};
    j[1] = (slaq_pjob){.attained = 3600, .arrival = 0};
    j[2] = (slaq_pjob){.attained = 10, .arrival = 2};
    j[3] = (slaq_pjob){.attained = 1e6, .arrival = 3};
    double k[4];
    keys(SLAQ_POLICY_TIRESIAS, j, 4, k);
    assert_true(k[0] > k[2]);   /* same queue: earlier first */
    assert_true(k[2] > k[1]);   /* first queue before the second */
    assert_true(k[1] > k[3]);   /* second queue: earlier first */
    slaq_prio_params p;
    slaq_prio_params_init(&p);
    assert_int_equal(p.las_queues, 2);
    assert_true(p.las_limit[0] == 3600);
}

/* Eq. 2's urgency factor, normalised by the largest urgency: urgency 10
 * against 5, all else equal and I = 1, differs by α × (1 − 5/10). */
static void test_mlfs_urgency_factor(void **state)
{
    (void)state;
    slaq_pjob j[2] = {pj(), pj()};
    j[0].urgency = 10;
    j[1].urgency = 5;
    double k[2];
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    assert_near(k[0] - k[1], 0.3 * 0.5, 1e-12);
    slaq_prio_params p;
    slaq_prio_params_init(&p);
    p.use_urgency = 0;
    slaq_mlfs_priority(j, 2, &p, k);
    assert_near(k[0] - k[1], 0, 1e-12);
}

/* Eq. 2's iteration importance 1/I, normalised by the largest: I = 1
 * against I = 4 is 1 against 1/4; and the recent loss reduction
 * δl_{I−1} / Σδl (1 before the second iteration). */
static void test_mlfs_iteration_and_recent_reduction(void **state)
{
    (void)state;
    slaq_pjob j[2] = {pj(), pj()};
    j[1].iter = 4;
    j[1].last_drop = 1;
    j[1].total_drop = 4;
    double k[2];
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    /* L = 1/1 for both; ML: 1·1·1 against 1·(1/4)·(1/4). */
    assert_near(k[0] - k[1], 0.3 * (1 - 0.25 * 0.25), 1e-12);
    /* A loss that rose counts no reduction: the ML part is 0. */
    j[1].last_drop = -1;
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    assert_near(k[0] - k[1], 0.3, 1e-12);
}

/* Eq. 4's deadline term, on the log scale over the current jobs: the
 * nearest reachable deadline 1, the farthest 0, one between in the
 * middle of the logarithms; a deadline the job can no longer meet and
 * no deadline count 0. */
static void test_mlfs_deadline_term(void **state)
{
    (void)state;
    slaq_pjob j[5] = {pj(), pj(), pj(), pj(), pj()};
    for (int i = 0; i < 5; i++)
        j[i].remaining_s = 600;
    j[0].deadline = 1000 + 3600;
    j[1].deadline = 1000 + 7200;
    j[2].deadline = 1000 + 14400;
    j[3].deadline = 1000 + 300; /* 300 s left, 600 s of work: lost */
    double k[5];
    keys(SLAQ_POLICY_MLFS_H, j, 5, k);
    double w = 0.7 * 0.3; /* (1 − α) γ_d */
    assert_near(k[0] - k[2], w, 1e-12);
    assert_near(k[1] - k[2], w / 2, 1e-12);
    assert_near(k[3] - k[4], 0, 1e-12);
    assert_near(k[2] - k[4], 0, 1e-12);
    slaq_prio_params p;
    slaq_prio_params_init(&p);
    p.use_deadline = 0;
    slaq_mlfs_priority(j, 5, &p, k);
    assert_near(k[0] - k[2], 0, 1e-12);
}

/* Eq. 4's remaining-time and waiting terms, on the same scale: less left
 * and a longer wait go first, with weights γ_r and γ_w. */
static void test_mlfs_remaining_and_waiting_terms(void **state)
{
    (void)state;
    slaq_pjob j[2] = {pj(), pj()};
    j[0].remaining_s = 600;
    j[1].remaining_s = 6000;
    double k[2];
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    assert_near(k[0] - k[1], 0.7 * 0.3, 1e-12);
    j[1].remaining_s = 600;
    j[0].waited = 0;
    j[1].waited = 3600;
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    assert_near(k[1] - k[0], 0.7 * 0.35, 1e-12);
    /* a range narrower than a factor of 2 counts as 2: waits of 0 and 1 s
     * (60 and 61 s with eps_s) are nearly equal, not 0 and 1 */
    j[1].waited = 1;
    keys(SLAQ_POLICY_MLFS_H, j, 2, k);
    assert_near(k[1] - k[0], 0.7 * 0.35 * log(61.0 / 60) / log(2), 1e-12);
}

/* Eq. 3/5: a chain a → b → c of base 1 with γ = 0.5 gives c 1, b 1.5,
 * a 1.75; a diamond counts the shared child once per path; a child index
 * not above its parent is refused. A data-parallel job's k workers (no
 * dependants, S = 1/k each) sum to the job's P with S = 1. */
static void test_mlfs_dag_recursion(void **state)
{
    (void)state;
    double base[4] = {1, 1, 1, 1}, out[4];
    size_t off[4] = {0, 1, 2, 2}, child[2] = {1, 2};
    assert_int_equal(slaq_mlfs_dag(base, off, child, 3, 0.5, out), SLAQ_OK);
    assert_near(out[2], 1, 1e-12);
    assert_near(out[1], 1.5, 1e-12);
    assert_near(out[0], 1.75, 1e-12);
    /* diamond 0 → {1, 2} → 3 */
    size_t off2[5] = {0, 2, 3, 4, 4}, child2[4] = {1, 2, 3, 3};
    assert_int_equal(slaq_mlfs_dag(base, off2, child2, 4, 0.5, out), SLAQ_OK);
    assert_near(out[3], 1, 1e-12);
    assert_near(out[0], 1 + 0.5 * (1.5 + 1.5), 1e-12);
    size_t bad[2] = {0, 2};
    assert_int_equal(slaq_mlfs_dag(base, off, bad, 3, 0.5, out), SLAQ_EINVAL);
    assert_int_equal(slaq_mlfs_dag(base, off, child, 3, 1.5, out),
                     SLAQ_EINVAL);
    /* 8 workers of S = 1/8, no children: the sum is the base with S = 1 */
    double w[8], o[8], sum = 0;
    size_t offw[9] = {0};
    for (int i = 0; i < 8; i++)
        w[i] = 0.6 / 8;
    assert_int_equal(slaq_mlfs_dag(w, offw, NULL, 8, 0.8, o), SLAQ_OK);
    for (int i = 0; i < 8; i++)
        sum += o[i];
    assert_near(sum, 0.6, 1e-12);
}

/* The priority division: EDF on a node of 8 cores gives the two nearest
 * deadlines their 4 cores and the third none; mlfs-h lets a running job
 * keep its cores against a higher key (sticky), and hands what is left
 * by key; both use the whole node. */
static void test_priority_division_preemptive_and_sticky(void **state)
{
    (void)state;
    slaq_pjob j[3] = {pj(), pj(), pj()};
    j[0].deadline = 9000;
    j[1].deadline = 2000;
    j[2].deadline = 3000;
    for (int i = 0; i < 3; i++)
        j[i].remaining_s = 600; /* every deadline reachable */
    j[0].prev_alloc = 4;
    double a[3];
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    assert_int_equal(slaq_allocate(SLAQ_POLICY_EDF, j, 3, 8, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 0, 0);
    assert_near(a[1], 4, 0);
    assert_near(a[2], 4, 0);
    /* mlfs-h: job 0 keeps its 4; of the rest, the higher key (nearer
     * deadline, job 1) gets the 4 left. */
    assert_int_equal(slaq_allocate(SLAQ_POLICY_MLFS_H, j, 3, 8, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 4, 0);
    assert_near(a[1], 4, 0);
    assert_near(a[2], 0, 0);
    /* work-conserving: 10 cores leave 2 for the third */
    assert_int_equal(slaq_allocate(SLAQ_POLICY_EDF, j, 3, 10, 1, ws, a),
                     SLAQ_OK);
    assert_near(a[0], 2, 0);
    assert_true(slaq_policy_moves(SLAQ_POLICY_MLFS_H));
    assert_false(slaq_policy_load_control(SLAQ_POLICY_MLFS_H));
    assert_true(slaq_policy_load_control(SLAQ_POLICY_MLFS));
    assert_false(slaq_policy_load_control(SLAQ_POLICY_MLFS_RL));
    assert_true(slaq_policy_moves(SLAQ_POLICY_MLFS));
    assert_false(slaq_policy_moves(SLAQ_POLICY_EDF));
    slaq_alloc_ws_free(ws);
}

/* The ideal virtual host: the node nearest (smallest core use, smallest
 * memory use) among those where the memory stays under h_r; an empty node
 * takes any job that fits; strict keeps cores under h_r too. */
static void test_ideal_virtual_host(void **state)
{
    (void)state;
    slaq_node_use n[4] = {
        {10, 100, 5, 10},  /* (0.5, 0.1) */
        {10, 100, 1, 50},  /* (0.1, 0.5) */
        {10, 100, 3, 30},  /* (0.3, 0.3): nearest (0.1, 0.1) */
        {10, 100, 0.5, 85},/* (0.05, 0.85): memory too full for 10 */
    };
    assert_int_equal(slaq_mlfs_host(n, 4, 1, 10, 0.9, -1, 0), 2);
    assert_int_equal(slaq_mlfs_host(n, 4, 1, 10, 0.9, 2, 0), 0);
    /* a job small enough for node 3 moves the ideal to (0.05, 0.1):
     * without node 2, node 1 (0.40 from it) beats node 0 (0.45) */
    assert_int_equal(slaq_mlfs_host(n, 4, 1, 1, 0.9, 2, 0), 1);
    /* strict: 7 more cores would overload nodes 0 and 2; not strict,
     * cores may be oversubscribed */
    assert_int_equal(slaq_mlfs_host(n, 4, 7, 10, 0.9, -1, 1), 1);
    assert_int_equal(slaq_mlfs_host(n, 4, 7, 10, 0.9, -1, 0), 2);
    slaq_node_use e[1] = {{10, 100, 0, 0}};
    assert_int_equal(slaq_mlfs_host(e, 1, 10, 100, 0.9, -1, 1), 0);
    assert_int_equal(slaq_mlfs_host(e, 1, 10, 101, 0.9, -1, 1), -1);
}

/* Moves: an overloaded node gives its lowest-priority p_s of jobs, the
 * one nearest the ideal virtual task, to an underloaded node, until it
 * is not overloaded; a job no node can take stays. */
static void test_moves_relieve_overloaded_node(void **state)
{
    (void)state;
    slaq_node_use n[2] = {{32, 192, 0, 0}, {32, 192, 0, 0}};
    slaq_move_job j[10];
    for (int i = 0; i < 10; i++) {
        j[i] = (slaq_move_job){0, 4, 10, 1.0 + i, 1};
        n[0].use_cores += 4;
        n[0].use_mem += 10;
    }
    size_t mj[10], mt[10], scratch[10];
    /* 40 of 32 cores: 1.25 > 0.9; each move takes 4 cores: 3 moves reach
     * 28/32 = 0.875. The lowest priority (job 0) goes first. */
    long k = slaq_mlfs_moves(n, 2, j, 10, 0.9, 0.1, mj, mt, 10, scratch);
    assert_int_equal(k, 3);
    assert_int_equal(mj[0], 0);
    assert_int_equal(mj[1], 1);
    assert_int_equal(mj[2], 2);
    assert_int_equal(mt[0], 1);
    assert_near(n[0].use_cores, 28, 1e-12);
    assert_near(n[1].use_cores, 12, 1e-12);
    /* a job that may not move is skipped */
    slaq_node_use m[2] = {{32, 192, 40, 100}, {32, 192, 0, 0}};
    for (int i = 0; i < 10; i++)
        j[i].movable = i != 0;
    k = slaq_mlfs_moves(m, 2, j, 10, 0.9, 0.1, mj, mt, 10, scratch);
    assert_int_equal(mj[0], 1);
    /* no room anywhere: nothing moves */
    slaq_node_use f[2] = {{32, 192, 40, 100}, {32, 192, 31, 100}};
    k = slaq_mlfs_moves(f, 2, j, 10, 0.9, 0.1, mj, mt, 10, scratch);
    assert_int_equal(k, 0);
    assert_int_equal(slaq_mlfs_moves(f, 2, j, 10, 0.9, 0, mj, mt, 10,
                                     scratch), SLAQ_EINVAL);
}

/* Jobs of equal priority are candidates in the order of their index:
 * the same node as above, every job of priority 1, moves jobs 0, 1, 2. */
static void test_moves_break_priority_ties_by_index(void **state)
{
    (void)state;
    slaq_node_use n[2] = {{32, 192, 40, 100}, {32, 192, 0, 0}};
    slaq_move_job j[10];
    for (int i = 0; i < 10; i++)
        j[i] = (slaq_move_job){0, 4, 10, 1, 1};
    size_t mj[10], mt[10], scratch[10];
    long k = slaq_mlfs_moves(n, 2, j, 10, 0.9, 0.1, mj, mt, 10, scratch);
    assert_int_equal(k, 3);
    assert_int_equal(mj[0], 0);
    assert_int_equal(mj[1], 1);
    assert_int_equal(mj[2], 2);
}

/* The ideal virtual task: on a node hot in memory only, the candidate
 * with the most memory and the fewest cores moves. */
static void test_moves_pick_the_ideal_virtual_task(void **state)
{
    (void)state;
    slaq_node_use n[2] = {{32, 100, 12, 95}, {32, 100, 0, 0}};
    slaq_move_job j[3] = {
        {0, 8, 30, 1, 1},  /* memory-heavy, core-heavy */
        {0, 2, 35, 1, 1},  /* memory-heavy, core-light: ideal */
        {0, 2, 30, 1, 1},
    };
    size_t mj[3], mt[3], scratch[3];
    /* p_s = 1: all three are candidates */
    long k = slaq_mlfs_moves(n, 2, j, 3, 0.9, 1, mj, mt, 3, scratch);
    assert_int_equal(k, 1);
    assert_int_equal(mj[0], 1);
    /* hot in cores only (34 of 32): the most cores, the least memory */
    slaq_node_use c[2] = {{32, 100, 34, 40}, {32, 100, 0, 0}};
    slaq_move_job q[3] = {
        {0, 8, 30, 1, 1},
        {0, 8, 5, 1, 1},   /* ideal */
        {0, 2, 5, 1, 1},
    };
    k = slaq_mlfs_moves(c, 2, q, 3, 0.9, 1, mj, mt, 3, scratch);
    assert_int_equal(k, 1);
    assert_int_equal(mj[0], 1);
}

/* MLF-C's overload: a waiting job, or the mean of ||U_s|| / √2 above h_s;
 * and its stop: met accuracy under overload, or a plateau with OptStop. */
/* A move's gain in slack: what the larger share saves on the remaining
 * work, less the move's measured cost; a move that gains less than it
 * costs has a negative gain. */
static void test_move_gain_weighs_the_cost_against_the_slack(void **st)
{
    (void)st;
    /* 100 s of work; 4 cores asked of 2 (half speed: 200 s) against an
     * empty node where it gets all (100 s): 100 s gained, less the cost */
    assert_near(slaq_mlfs_move_gain(100, 2, 4, 2, 1, 30), 70, 1e-9);
    assert_near(slaq_mlfs_move_gain(100, 2, 4, 2, 1, 100), 0, 1e-9);
    assert_true(slaq_mlfs_move_gain(100, 2, 4, 2, 1, 130) < 0);
    /* near its end the same move no longer pays for itself */
    assert_true(slaq_mlfs_move_gain(20, 2, 4, 2, 1, 30) < 0);
    /* the target's share counts too: 3 cores asked of 2 there (2/3) */
    assert_near(slaq_mlfs_move_gain(100, 2, 4, 2, 3, 10),
                        200 - 10 - 150, 1e-9);
    /* a node at 90-100% of its cores gives all it is asked: nothing to
     * gain, the cost is lost */
    assert_near(slaq_mlfs_move_gain(100, 2, 1.9, 2, 0.5, 7), -7,
                        1e-9);
    /* no move measured yet (NaN): the cost counts 0 */
    assert_near(slaq_mlfs_move_gain(100, 2, 4, 2, 1, NAN), 100,
                        1e-9);
    /* a job of unknown length: a larger share pays, an equal one not */
    assert_true(slaq_mlfs_move_gain(INFINITY, 2, 4, 2, 1, 30) == INFINITY);
    assert_near(slaq_mlfs_move_gain(INFINITY, 2, 2, 2, 1, 30), -30,
                        0);
    /* bad arguments */
    assert_true(isnan(slaq_mlfs_move_gain(100, 0, 4, 2, 1, 1)));
    assert_true(isnan(slaq_mlfs_move_gain(100, 2, 4, -1, 1, 1)));
    assert_true(isnan(slaq_mlfs_move_gain(-1, 2, 4, 2, 1, 1)));
    assert_true(isnan(slaq_mlfs_move_gain(NAN, 2, 4, 2, 1, 1)));
    assert_true(isnan(slaq_mlfs_move_gain(100, 2, -4, 2, 1, 1)));
    assert_true(isnan(slaq_mlfs_move_gain(100, 2, 4, 2, 1, -1)));
}

static void test_load_control(void **state)
{
    (void)state;
    slaq_node_use hot[1] = {{10, 10, 9.5, 9.5}};
    slaq_node_use half[1] = {{10, 10, 9.5, 5}};
    assert_true(slaq_mlfs_overloaded(hot, 1, 0, 0.9));
    assert_false(slaq_mlfs_overloaded(half, 1, 0, 0.9));
    assert_true(slaq_mlfs_overloaded(half, 1, 1, 0.9));
    slaq_goal g;
    slaq_goal_init(&g);
    g.maximize = 0;
    g.accuracy = 0.5; /* a loss of 0.5 or less */
    double flat[3] = {0.4, 0.4, 0.4}, falling[3] = {0.9, 0.7, 0.45};
    assert_true(slaq_mlfs_stop(&g, 0.45, 1, 0, 1, falling, 3, 0.01));
    assert_false(slaq_mlfs_stop(&g, 0.45, 0, 0, 1, falling, 3, 0.01));
    assert_false(slaq_mlfs_stop(&g, 0.55, 1, 0, 1, falling, 3, 0.01));
    assert_true(slaq_mlfs_stop(&g, 0.4, 0, 1, 1, flat, 3, 0.01));
    assert_false(slaq_mlfs_stop(&g, 0.45, 0, 1, 1, falling, 3, 0.01));
    /* no required accuracy: never stopped for it */
    slaq_goal none;
    slaq_goal_init(&none);
    assert_false(slaq_mlfs_stop(&none, 0.1, 1, 0, 1, falling, 3, 0.01));
}

/* MLF-C's verdict under each stop rule: iters never stops; accuracy
 * stops when overloaded and met; optstop also on a plateau at any load;
 * the verdict names the rule that stopped the job. */
static void test_mlfc_verdict_follows_the_jobs_rule(void **state)
{
    (void)state;
    slaq_goal g;
    slaq_goal_init(&g);
    g.maximize = 0;
    g.accuracy = 0.5;
    double flat[3] = {0.4, 0.4, 0.4}, falling[3] = {0.9, 0.7, 0.45};
    /* the rule: iters, whatever the load and the metric */
    assert_int_equal(slaq_mlfc_decide(&g, 0.45, 1, 1, flat, 3, 0.01),
                     SLAQ_VERDICT_RUN);
    g.stop = SLAQ_STOP_ACCURACY;
    assert_int_equal(slaq_mlfc_decide(&g, 0.45, 1, 1, falling, 3, 0.01),
                     SLAQ_VERDICT_ACCURACY);
    assert_int_equal(slaq_mlfc_decide(&g, 0.45, 0, 1, falling, 3, 0.01),
                     SLAQ_VERDICT_RUN);
    assert_int_equal(slaq_mlfc_decide(&g, 0.55, 1, 1, falling, 3, 0.01),
                     SLAQ_VERDICT_RUN);
    /* accuracy alone does not stop a plateau */
    assert_int_equal(slaq_mlfc_decide(&g, 0.6, 0, 1, flat, 3, 0.01),
                     SLAQ_VERDICT_RUN);
    g.stop = SLAQ_STOP_OPTSTOP;
    assert_int_equal(slaq_mlfc_decide(&g, 0.6, 0, 1, flat, 3, 0.01),
                     SLAQ_VERDICT_OPTSTOP);
    assert_int_equal(slaq_mlfc_decide(&g, 0.45, 1, 1, flat, 3, 0.01),
                     SLAQ_VERDICT_ACCURACY);
    assert_int_equal(slaq_mlfc_decide(&g, 0.6, 0, 1, falling, 3, 0.01),
                     SLAQ_VERDICT_RUN);
    /* the accuracy is judged on the metric, not on the last loss */
    assert_int_equal(slaq_mlfc_decide(&g, NAN, 1, 1, falling, 3, 0.01),
                     SLAQ_VERDICT_RUN);
}

/* The plan of moves, weighed: a move that gains less than its cost is
 * not made and its demand stays on its node; unweighed, every planned
 * move is made; before[] holds the nodes as given. */
static void test_plan_weighs_each_move_and_keeps_a_refused_one(void **st)
{
    (void)st;
    slaq_move_job j[10];
    double left[10];
    for (int i = 0; i < 10; i++) {
        j[i] = (slaq_move_job){0, 4, 10, 1.0 + i, 1};
        left[i] = 100;
    }
    left[1] = 1; /* nearly done: a 10 s move cannot pay for itself (the
                    others gain 100 / 0.8 - 10 - 100 = 15 s) */
    size_t scratch[30];
    slaq_move mv[10];
    slaq_node_use n[2] = {{32, 192, 40, 100}, {32, 192, 0, 0}}, before[2];
    long k = slaq_mlfs_plan(n, before, 2, j, left, 10, 0.9, 0.1, 10, 1, mv,
                            10, scratch);
    assert_int_equal(k, 3); /* the plan of slaq_mlfs_moves: jobs 0, 1, 2 */
    assert_int_equal(mv[0].job, 0);
    assert_int_equal(mv[1].job, 1);
    assert_int_equal(mv[2].job, 2);
    assert_int_equal(mv[0].to, 1);
    assert_true(mv[0].made && !mv[1].made && mv[2].made);
    assert_true(mv[1].gain < 0 && mv[0].gain > 0);
    assert_near(mv[0].gain, 15, 1e-9);
    /* job 1's 4 cores stay on node 0 */
    assert_near(n[0].use_cores, 32, 1e-12);
    assert_near(n[1].use_cores, 8, 1e-12);
    assert_near(before[0].use_cores, 40, 0);
    assert_near(before[1].use_cores, 0, 0);
    /* unweighed (MLFS as published): all three are made */
    slaq_node_use u[2] = {{32, 192, 40, 100}, {32, 192, 0, 0}};
    k = slaq_mlfs_plan(u, before, 2, j, left, 10, 0.9, 0.1, 10, 0, mv, 10,
                       scratch);
    assert_int_equal(k, 3);
    assert_true(mv[0].made && mv[1].made && mv[2].made);
    assert_near(u[0].use_cores, 28, 1e-12);
    /* a bad threshold is refused as slaq_mlfs_moves refuses it */
    assert_int_equal(slaq_mlfs_plan(u, before, 2, j, left, 10, 0.9, 0, 10,
                                    1, mv, 10, scratch), SLAQ_EINVAL);
}

/* The baselines' placement: the most free memory where the job fits,
 * ties to the lower node, cores not counted; none where it fits
 * nowhere. */
static void test_most_free_node_takes_the_job(void **state)
{
    (void)state;
    slaq_node_use n[3] = {{8, 64, 40, 40}, {8, 64, 2, 10}, {8, 64, 0, 10}};
    assert_int_equal(slaq_node_most_free(n, 3, 8), 1);
    assert_int_equal(slaq_node_most_free(n, 3, 54), 1);
    assert_int_equal(slaq_node_most_free(n, 3, 55), -1);
    assert_int_equal(slaq_node_most_free(n, 0, 1), -1);
}

/* The order by key: the largest first, ties to the lower index, a NaN
 * last; ranks from 1. */
static void test_key_order_puts_the_largest_first(void **state)
{
    (void)state;
    double key[6] = {0.5, NAN, 2, 0.5, -1, 2};
    size_t order[6], rank[6];
    slaq_key_order(key, 6, order, rank);
    size_t want[6] = {2, 5, 0, 3, 4, 1};
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[i], want[i]);
    assert_int_equal(rank[2], 1);
    assert_int_equal(rank[5], 2);
    assert_int_equal(rank[1], 6);
    slaq_key_order(key, 0, order, NULL); /* nothing to order */
}

/* A goal: the defaults (no deadline, no accuracy, urgency 1), both
 * directions of the metric, and the range of urgency. */
static void test_goal(void **state)
{
    (void)state;
    slaq_goal g;
    slaq_goal_init(&g);
    assert_true(isinf(g.deadline) && isnan(g.accuracy));
    assert_int_equal(g.urgency, SLAQ_URGENCY_MIN);
    assert_true(slaq_goal_met(&g, 0.1));
    g.accuracy = 0.9;
    assert_true(slaq_goal_met(&g, 0.9));
    assert_false(slaq_goal_met(&g, 0.89));
    g.maximize = 0;
    assert_true(slaq_goal_met(&g, 0.89));
    assert_false(slaq_goal_met(&g, NAN));
    assert_int_equal(slaq_goal_check(&g), SLAQ_OK);
    g.urgency = 11;
    assert_int_equal(slaq_goal_check(&g), SLAQ_EINVAL);
    g.urgency = 0;
    assert_int_equal(slaq_goal_check(&g), SLAQ_EINVAL);
}

/* MLF-C's stopping rules: their names parse back to themselves, an
 * unknown name is refused, the default is the fixed iterations, and the
 * accuracy rule needs a required accuracy to stop at. */
static void test_stop_rule_names_and_check(void **state)
{
    (void)state;
    slaq_goal g;
    slaq_goal_init(&g);
    assert_int_equal(g.stop, SLAQ_STOP_ITERS);
    assert_int_equal(slaq_goal_check(&g), SLAQ_OK);
    for (int k = 0; k < SLAQ_STOP_NRULES; k++) {
        slaq_stop_rule r = SLAQ_STOP_NRULES;
        assert_int_equal(slaq_stop_parse(slaq_stop_name((slaq_stop_rule)k),
                                         &r), SLAQ_OK);
        assert_int_equal(r, k);
    }
    assert_string_equal(slaq_stop_name(SLAQ_STOP_OPTSTOP), "optstop");
    slaq_stop_rule r = SLAQ_STOP_ITERS;
    assert_int_equal(slaq_stop_parse("plateau", &r), SLAQ_EINVAL);
    assert_int_equal(slaq_stop_parse(NULL, &r), SLAQ_EINVAL);
    assert_int_equal(r, SLAQ_STOP_ITERS);
    g.stop = SLAQ_STOP_ACCURACY;
    assert_int_equal(slaq_goal_check(&g), SLAQ_EINVAL);
    g.accuracy = 0.9;
    assert_int_equal(slaq_goal_check(&g), SLAQ_OK);
    g.stop = SLAQ_STOP_NRULES;
    assert_int_equal(slaq_goal_check(&g), SLAQ_EINVAL);
}

/* Through the scheduler: with policy edf, of two 4-core jobs on 4 cores
 * the one with the nearer deadline gets them; a bad goal is refused. */
static void test_sched_edf_serves_the_nearer_deadline(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 4;
    c.policy = SLAQ_POLICY_EDF;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.max_cores = 4;
    o.goal.deadline = 5000;
    slaq_job *late = slaq_sched_add(s, &o, 0);
    o.goal.deadline = 1000;
    slaq_job *soon = slaq_sched_add(s, &o, 0);
    assert_non_null(late);
    assert_non_null(soon);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_near(slaq_job_alloc(soon), 4, 1e-12);
    assert_near(slaq_job_alloc(late), 0, 1e-12);
    assert_true(slaq_job_goal(soon)->deadline == 1000);
    o.goal.urgency = 11;
    assert_null(slaq_sched_add(s, &o, 0));
    slaq_sched_free(s);
}

/* MLF-C in the scheduler's epoch: under mlfs, an overloaded cluster
 * (six cores asked of two) stops the job whose metric meets its accuracy
 * (accuracy_met), the optstop job on a plateau (optstop), and not the
 * iters job whatever its metric; under another policy, and without
 * overload, every job runs. */
static void test_sched_decides_mlfc_verdicts(void **state)
{
    (void)state;
    static slaq_rl_model zero; /* every score 0: the order is by index */
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 2;
    c.policy = SLAQ_POLICY_MLFS;
    c.rl = &zero;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.max_cores = 2;
    o.goal.accuracy = 0.5; /* an accuracy of 0.5 or more */
    o.goal.stop = SLAQ_STOP_ACCURACY;
    slaq_job *acc = slaq_sched_add(s, &o, 0);
    o.goal.stop = SLAQ_STOP_OPTSTOP;
    slaq_job *opt = slaq_sched_add(s, &o, 0);
    o.goal.stop = SLAQ_STOP_ITERS;
    slaq_job *its = slaq_sched_add(s, &o, 0);
    assert_true(acc && opt && its);
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_RUN); /* no epoch */
    for (int i = 0; i < 12; i++) {
        slaq_report r = {.iter = (uint64_t)i + 1, .loss = i ? 0.5 : 1,
                         .cpu_s = 1, .t = i};
        assert_int_equal(slaq_job_report(opt, &r), SLAQ_OK);
        r.loss = 1.0 - 0.04 * i; /* still falling */
        assert_int_equal(slaq_job_report(acc, &r), SLAQ_OK);
        assert_int_equal(slaq_job_report(its, &r), SLAQ_OK);
    }
    slaq_job_set_metric(acc, 0.6);
    slaq_job_set_metric(its, 0.9);
    assert_int_equal(slaq_sched_epoch(s, 12), SLAQ_OK);
    assert_true(slaq_sched_overloaded(s));
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_ACCURACY);
    assert_int_equal(slaq_job_verdict(opt), SLAQ_VERDICT_OPTSTOP);
    assert_int_equal(slaq_job_verdict(its), SLAQ_VERDICT_RUN);
    /* a metric short of the accuracy: it runs */
    slaq_job_set_metric(acc, 0.4);
    assert_int_equal(slaq_sched_epoch(s, 13), SLAQ_OK);
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_RUN);
    /* no load control under mlfs-h: every job runs */
    slaq_job_set_metric(acc, 0.6);
    slaq_sched_set_policy(s, SLAQ_POLICY_MLFS_H);
    assert_int_equal(slaq_sched_epoch(s, 14), SLAQ_OK);
    assert_false(slaq_sched_overloaded(s));
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_RUN);
    assert_int_equal(slaq_job_verdict(opt), SLAQ_VERDICT_RUN);
    /* mlfs again, the other two gone: 2 cores asked of 2 is above 0.9 */
    slaq_sched_set_policy(s, SLAQ_POLICY_MLFS);
    slaq_sched_remove(s, opt);
    slaq_sched_remove(s, its);
    assert_int_equal(slaq_sched_epoch(s, 15), SLAQ_OK);
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_ACCURACY);
    /* one core asked of two: not overloaded, the accurate job runs on */
    slaq_job_set_max_cores(acc, 1);
    assert_int_equal(slaq_sched_epoch(s, 16), SLAQ_OK);
    assert_false(slaq_sched_overloaded(s));
    assert_int_equal(slaq_job_verdict(acc), SLAQ_VERDICT_RUN);
    slaq_sched_free(s);
}

/* slaq_sched_keys gives the last epoch's key of each job in
 * slaq_sched_job order: under edf −deadline, the nearer one larger. */
static void test_sched_keys_are_the_epochs_keys(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 4;
    c.policy = SLAQ_POLICY_EDF;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.goal.deadline = 5000;
    assert_non_null(slaq_sched_add(s, &o, 0));
    o.goal.deadline = 1000;
    assert_non_null(slaq_sched_add(s, &o, 0));
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    double key[2];
    assert_int_equal(slaq_sched_keys(s, key), SLAQ_OK);
    for (size_t i = 0; i < 2; i++)
        assert_true(key[i] == -slaq_job_goal(slaq_sched_job(s, i))->deadline);
    assert_true(key[0] != key[1]);
    slaq_sched_free(s);
}

/* MLF-RL's forward pass against values worked by hand: two hidden units
 * in use, h0 = tanh(0.5·1 − 2·0.25 + 0.5) = tanh(0.5), h1 = tanh(0.5·1 −
 * 1) = tanh(−0.5); score = 0.25 + 2·h0 − 1·h1 = 0.25 + 3·tanh(0.5). The
 * other units have no weights and give tanh(0) = 0. */
static void test_rl_score_is_the_hand_computed_forward_pass(void **state)
{
    (void)state;
    slaq_rl_model m;
    memset(&m, 0, sizeof m);
    m.w1[0][0] = 1;
    m.w1[0][1] = -2;
    m.b1[0] = 0.5;
    m.w2[0] = 2;
    m.w1[1][7] = 1;
    m.b1[1] = -1;
    m.w2[1] = -1;
    m.w2[5] = 7; /* its unit has no input: tanh(0) = 0 */
    m.b2 = 0.25;
    double x[SLAQ_RL_NFEAT] = {0.5, 0.25, 0, 0, 0, 0, 1, 0.5};
    double h[SLAQ_RL_HIDDEN];
    assert_near(slaq_rl_score(&m, x, h), 1.6363514717800292, 1e-15);
    assert_near(h[0], 0.46211715726000974, 1e-15);
    assert_near(h[1], -0.46211715726000974, 1e-15);
    assert_near(h[5], 0, 0);
    assert_near(slaq_rl_score(&m, x, NULL), 1.6363514717800292, 1e-15);
}

/* The network's features are MLF-H's own normalised terms (they rebuild
 * its priority exactly), whether the job holds cores, and the share of
 * jobs without cores; mlfs-rl's and mlfs's keys are the network's scores
 * of them, and without a network the keys are refused. */
static void test_rl_features_and_keys(void **state)
{
    (void)state;
    slaq_pjob j[3] = {pj(), pj(), pj()};
    j[0].urgency = 5;
    j[0].prev_alloc = 2;
    j[0].iter = 4;
    j[0].waited = 600;
    j[1].urgency = 10;
    j[1].deadline = 1000 + 7200;
    j[1].remaining_s = 3600;
    j[2].iter = 2;
    j[2].last_drop = 0.1;
    j[2].total_drop = 0.4;
    j[2].prev_alloc = 1;
    slaq_prio_params pp;
    slaq_prio_params_init(&pp);
    double f[3 * SLAQ_RL_NFEAT], p[3];
    slaq_rl_features(j, 3, &pp, f);
    slaq_mlfs_priority(j, 3, &pp, p);
    assert_near(f[0], 0.5, 1e-15);                 /* urgency 5 of 10 */
    assert_near(f[SLAQ_RL_NFEAT], 1, 1e-15);
    assert_near(f[1], 0.25, 1e-15);                /* 1/4 of 1/1 */
    assert_near(f[2 * SLAQ_RL_NFEAT + 2], 0.25, 1e-15); /* 0.1 / 0.4 */
    assert_near(f[SLAQ_RL_NFEAT + 3], 1, 1e-15);   /* the one deadline */
    assert_near(f[3], 0, 0);
    for (int i = 0; i < 3; i++) {
        const double *x = f + i * SLAQ_RL_NFEAT;
        assert_near(x[6], i != 1, 0);
        assert_near(x[7], 1.0 / 3, 1e-15);
        assert_near(pp.alpha * x[0] * x[1] * x[2] +
                    (1 - pp.alpha) * (pp.g_d * x[3] + pp.g_r * x[4] +
                                      pp.g_w * x[5]), p[i], 1e-15);
    }
    slaq_rl_model m;
    memset(&m, 0, sizeof m);
    m.w1[0][6] = 1;  /* holds cores */
    m.w1[0][0] = -3; /* urgency */
    m.w2[0] = 1;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    double k[3];
    assert_int_equal(slaq_policy_keys(SLAQ_POLICY_MLFS_RL, j, 3, ws, k),
                     SLAQ_EINVAL);
    assert_int_equal(slaq_policy_keys(SLAQ_POLICY_MLFS, j, 3, ws, k),
                     SLAQ_EINVAL);
    pp.rl = &m;
    assert_int_equal(slaq_alloc_ws_set_prio(ws, &pp), SLAQ_OK);
    assert_int_equal(slaq_policy_keys(SLAQ_POLICY_MLFS_RL, j, 3, ws, k),
                     SLAQ_OK);
    for (int i = 0; i < 3; i++)
        assert_near(k[i], slaq_rl_score(&m, f + i * SLAQ_RL_NFEAT, NULL),
                    1e-15);
    assert_near(k[0], tanh(1 - 1.5), 1e-15);
    assert_near(k[1], tanh(-3), 1e-15);
    assert_near(k[2], tanh(1 - 0.3), 1e-15);
    /* mlfs, the paper's MLFS (MLF-RL + MLF-C), orders by the same
     * scores, not by MLF-H's priority */
    double km[3];
    assert_int_equal(slaq_policy_keys(SLAQ_POLICY_MLFS, j, 3, ws, km),
                     SLAQ_OK);
    for (int i = 0; i < 3; i++)
        assert_near(km[i], k[i], 0);
    /* The terms a front end shows: the features, MLF-H's halves of Eq. 6,
     * and the policy's own key, bit for bit */
    slaq_prio_terms t[3];
    assert_int_equal(slaq_mlfs_terms(SLAQ_POLICY_MLFS, j, 3, &pp, t),
                     SLAQ_OK);
    double kh[3];
    assert_int_equal(slaq_policy_keys(SLAQ_POLICY_MLFS_H, j, 3, ws, kh),
                     SLAQ_OK);
    for (int i = 0; i < 3; i++) {
        assert_memory_equal(t[i].feat, f + i * SLAQ_RL_NFEAT,
                            sizeof t[i].feat);
        assert_near(t[i].key, k[i], 0);
        assert_near(t[i].score, k[i], 0);
        assert_near(t[i].ml + t[i].comp, p[i], 0);
    }
    assert_int_equal(slaq_mlfs_terms(SLAQ_POLICY_MLFS_H, j, 3, &pp, t),
                     SLAQ_OK);
    for (int i = 0; i < 3; i++) {
        assert_near(t[i].key, kh[i], 0);
        assert_true(isnan(t[i].score));
    }
    assert_int_equal(slaq_mlfs_terms(SLAQ_POLICY_EDF, j, 3, &pp, t),
                     SLAQ_EINVAL);
    pp.rl = NULL;
    assert_int_equal(slaq_mlfs_terms(SLAQ_POLICY_MLFS_RL, j, 3, &pp, t),
                     SLAQ_EINVAL);
    assert_int_equal(slaq_mlfs_terms(SLAQ_POLICY_MLFS_H, j, 3, &pp, t),
                     SLAQ_OK);
    assert_true(isnan(t[0].score));
    assert_true(slaq_policy_has_terms(SLAQ_POLICY_MLFS_H));
    assert_false(slaq_policy_has_terms(SLAQ_POLICY_TIRESIAS));
    assert_false(slaq_policy_has_terms(SLAQ_POLICY_SLAQ));
    slaq_alloc_ws_free(ws);
}

/* MLFS's cluster (slaq_sched_set_mlfs): a scheduler of `nodes` nodes of
 * `cores` cores and 100 GB under `policy`, epochs of 60 s. */
static slaq_sched *mlfs_cluster(slaq_policy_kind policy, size_t nodes,
                                double cores, slaq_mlfs_config *mc)
{
    static slaq_rl_model zero; /* every score 0: the order is by index */
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.policy = policy;
    c.cores = cores;
    c.nodes = nodes;
    c.epoch_s = 60;
    c.rl = &zero;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    mc->node_mem = 100;
    mc->prio.rl = &zero;
    assert_int_equal(slaq_sched_set_mlfs(s, mc), SLAQ_OK);
    return s;
}

static const double truth[] = {1.0, 0.8, 0.6, 0.4, 0.2};

/* A job of MLFS's cluster: max_cores cores, mem GB, the curve above. */
static slaq_job *mlfs_job(slaq_sched *s, double max_cores, double mem,
                          double deadline, double t)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.max_cores = max_cores;
    o.mem = mem;
    o.truth = truth;
    o.truth_len = 5;
    o.goal.deadline = deadline;
    o.goal.maximize = 0;
    o.goal.accuracy = 0.5; /* a loss of 0.5 or less */
    o.goal.stop = SLAQ_STOP_ACCURACY;
    return slaq_sched_add(s, &o, t);
}

static void observe(slaq_job *j, double k)
{
    slaq_job_obs o = {.k = k, .iters_per_core = 0.5, .remaining_s = 3600};
    assert_int_equal(slaq_job_observe(j, &o), SLAQ_OK);
}

/* The hook of a trainer that reverses the policy's order. */
static void negate_keys(void *ctx, double now, const slaq_pjob *pj, size_t n,
                        double *key)
{
    (void)pj;
    (void)now;
    *(size_t *)ctx = n;
    for (size_t i = 0; i < n; i++)
        key[i] = -key[i];
}

/* A new job waits for the epoch, which places the waiting jobs in the
 * order of their keys (EDF: the nearer deadline first) on the node with
 * the most free memory while their memory fits, and divides the node's
 * cores among the placed ones; the keys hook may reorder them. */
static void test_mlfs_cluster_places_waiting_jobs_by_key(void **state)
{
    (void)state;
    for (int hook = 0; hook <= 1; hook++) {
        slaq_mlfs_config mc;
        slaq_mlfs_config_init(&mc);
        size_t seen = 0;
        if (hook) {
            mc.keys = negate_keys;
            mc.keys_ctx = &seen;
        }
        slaq_sched *s = mlfs_cluster(SLAQ_POLICY_EDF, 1, 4, &mc);
        slaq_job *late = mlfs_job(s, 2, 40, 300, 0);
        slaq_job *soon = mlfs_job(s, 2, 40, 100, 0);
        slaq_job *mid = mlfs_job(s, 2, 40, 200, 0);
        assert_true(late && soon && mid);
        assert_int_equal(slaq_job_node(soon), SLAQ_NODE_PENDING);
        observe(late, 0);
        observe(soon, 0);
        observe(mid, 0);
        assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
        /* 2 × 40 GB fit in 100, a third does not */
        slaq_job *out = hook ? soon : late;
        assert_int_equal(slaq_job_node(out), SLAQ_NODE_PENDING);
        assert_int_equal(slaq_job_node(mid), 0);
        assert_int_equal(slaq_job_node(hook ? late : soon), 0);
        assert_true(slaq_job_alloc(mid) == 2);
        assert_true(slaq_job_alloc(out) == 0);
        assert_int_equal(seen, hook ? 3 : 0);
        assert_int_equal(slaq_sched_pending(s), 1);
        /* removal keeps the order of arrival */
        slaq_sched_remove(s, late);
        assert_ptr_equal(slaq_sched_job(s, 0), soon);
        assert_ptr_equal(slaq_sched_job(s, 1), mid);
        slaq_sched_free(s);
    }
}

/* Under mlfs, a waiting job makes the cluster overloaded: a placed job
 * whose loss meets its accuracy is stopped before anything is placed,
 * leaves its node at once, gets no cores, and the waiting job takes its
 * place in the same epoch. */
static void test_mlfs_cluster_stops_before_it_places(void **state)
{
    (void)state;
    slaq_mlfs_config mc;
    slaq_mlfs_config_init(&mc);
    slaq_sched *s = mlfs_cluster(SLAQ_POLICY_MLFS, 1, 2, &mc);
    slaq_job *a = mlfs_job(s, 2, 10, INFINITY, 0);
    assert_non_null(a);
    observe(a, 0);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_job_node(a), 0);
    slaq_job *b = mlfs_job(s, 2, 10, INFINITY, 30);
    assert_non_null(b);
    observe(a, 2); /* loss 0.6: short of 0.5 */
    observe(b, 0);
    assert_int_equal(slaq_sched_epoch(s, 60), SLAQ_OK);
    assert_true(slaq_sched_overloaded(s));
    assert_int_equal(slaq_job_verdict(a), SLAQ_VERDICT_RUN);
    /* the node is full (2 cores asked of 2, strict placement): b waits */
    assert_int_equal(slaq_job_node(b), SLAQ_NODE_PENDING);
    observe(a, 3); /* loss 0.4: met */
    observe(b, 0);
    assert_int_equal(slaq_sched_epoch(s, 120), SLAQ_OK);
    assert_int_equal(slaq_job_verdict(a), SLAQ_VERDICT_ACCURACY);
    assert_true(slaq_job_alloc(a) == 0);
    assert_int_equal(slaq_job_node(b), 0);
    assert_true(slaq_job_alloc(b) == 2);
    slaq_sched_remove(s, a);
    /* the job alone, nothing waiting: not overloaded */
    observe(b, 4);
    assert_int_equal(slaq_sched_epoch(s, 180), SLAQ_OK);
    assert_false(slaq_sched_overloaded(s));
    assert_int_equal(slaq_job_verdict(b), SLAQ_VERDICT_RUN);
    slaq_sched_free(s);
}

/* A node that becomes overloaded (its cores cut) sheds its lower-key
 * job to the node with room; the move stops the job for 30 s plus its
 * memory at 1 GB/s, so it gets no cores in an epoch that move outlasts,
 * and it is counted. */
static void test_mlfs_cluster_moves_off_an_overloaded_node(void **state)
{
    (void)state;
    slaq_mlfs_config mc;
    slaq_mlfs_config_init(&mc);
    slaq_sched *s = mlfs_cluster(SLAQ_POLICY_MLFS_H, 1, 8, &mc);
    slaq_job *x = mlfs_job(s, 3, 40, 1000, 0);
    slaq_job *y = mlfs_job(s, 3, 40, 5000, 0);
    assert_true(x && y);
    observe(x, 0);
    observe(y, 0);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_job_node(x), 0);
    assert_int_equal(slaq_job_node(y), 0);
    assert_int_equal(slaq_sched_add_node(s, 8), 1);
    assert_int_equal(slaq_sched_set_node_cores(s, 0, 4), SLAQ_OK);
    observe(x, 1);
    observe(y, 1);
    assert_int_equal(slaq_sched_epoch(s, 60), SLAQ_OK);
    double key[2];
    assert_int_equal(slaq_sched_keys(s, key), SLAQ_OK);
    slaq_job *low = key[1] < key[0] ? y : x, *high = low == x ? y : x;
    assert_int_equal(slaq_job_node(low), 1);
    assert_int_equal(slaq_job_node(high), 0);
    assert_true(slaq_job_moved_at(low) == 60);
    assert_true(slaq_job_moving_until(low) == 60 + 30 + 40);
    assert_true(slaq_job_moved_at(high) == -INFINITY);
    assert_true(slaq_job_alloc(low) == 0);
    assert_true(slaq_job_alloc(high) == 3);
    slaq_mlfs_stats st = slaq_sched_mlfs_stats(s);
    assert_int_equal(st.moves, 1);
    assert_true(st.move_s == 70 && st.move_gb == 40);
    /* the next epoch the move is over: it runs on its new node */
    observe(x, 2);
    observe(y, 2);
    assert_int_equal(slaq_sched_epoch(s, 120), SLAQ_OK);
    assert_true(slaq_job_alloc(low) == 3);
    assert_int_equal(slaq_sched_mlfs_stats(s).moves, 1);
    slaq_sched_free(s);
}

/* What MLFS's cluster refuses: a scheduler with jobs already, a job
 * without its true curve, an observation outside it. */
static void test_mlfs_cluster_refuses(void **state)
{
    (void)state;
    slaq_mlfs_config mc;
    slaq_mlfs_config_init(&mc);
    slaq_sched *s = mlfs_cluster(SLAQ_POLICY_EDF, 1, 4, &mc);
    assert_int_equal(slaq_sched_set_mlfs(s, &mc), SLAQ_EINVAL);
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    assert_null(slaq_sched_add(s, &o, 0)); /* no curve */
    slaq_sched_free(s);
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 4;
    s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *j = slaq_sched_add(s, &o, 0);
    assert_non_null(j);
    slaq_job_obs ob = {0};
    assert_int_equal(slaq_job_observe(j, &ob), SLAQ_EINVAL);
    assert_int_equal(slaq_sched_set_mlfs(s, &mc), SLAQ_EINVAL); /* a job */
    assert_int_equal(slaq_sched_mlfs_stats(s).moves, 0);
    slaq_sched_free(s);
    s = slaq_sched_new(&c);
    mc.node_mem = 0;
    assert_int_equal(slaq_sched_set_mlfs(s, &mc), SLAQ_EINVAL);
    slaq_sched_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edf_orders_by_deadline_then_arrival),
        cmocka_unit_test(test_tiresias_queues_at_3600_core_seconds),
        cmocka_unit_test(test_mlfs_urgency_factor),
        cmocka_unit_test(test_mlfs_iteration_and_recent_reduction),
        cmocka_unit_test(test_mlfs_deadline_term),
        cmocka_unit_test(test_mlfs_remaining_and_waiting_terms),
        cmocka_unit_test(test_mlfs_dag_recursion),
        cmocka_unit_test(test_priority_division_preemptive_and_sticky),
        cmocka_unit_test(test_ideal_virtual_host),
        cmocka_unit_test(test_moves_relieve_overloaded_node),
        cmocka_unit_test(test_moves_break_priority_ties_by_index),
        cmocka_unit_test(test_moves_pick_the_ideal_virtual_task),
        cmocka_unit_test(test_move_gain_weighs_the_cost_against_the_slack),
        cmocka_unit_test(test_load_control),
        cmocka_unit_test(test_goal),
        cmocka_unit_test(test_stop_rule_names_and_check),
        cmocka_unit_test(test_mlfc_verdict_follows_the_jobs_rule),
        cmocka_unit_test(test_plan_weighs_each_move_and_keeps_a_refused_one),
        cmocka_unit_test(test_key_order_puts_the_largest_first),
        cmocka_unit_test(test_most_free_node_takes_the_job),
        cmocka_unit_test(test_sched_edf_serves_the_nearer_deadline),
        cmocka_unit_test(test_sched_decides_mlfc_verdicts),
        cmocka_unit_test(test_sched_keys_are_the_epochs_keys),
        cmocka_unit_test(test_rl_score_is_the_hand_computed_forward_pass),
        cmocka_unit_test(test_rl_features_and_keys),
        cmocka_unit_test(test_mlfs_cluster_places_waiting_jobs_by_key),
        cmocka_unit_test(test_mlfs_cluster_stops_before_it_places),
        cmocka_unit_test(test_mlfs_cluster_moves_off_an_overloaded_node),
        cmocka_unit_test(test_mlfs_cluster_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
