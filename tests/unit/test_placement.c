/*
 * test_placement.c — nodes: the allocation over several nodes, placement of
 * new jobs and the pending queue (src/core/placement.c, policy.c, sched.c).
 *
 * The single machine is the one-node case of the cluster code, so the
 * one-node answers are compared bit for bit with hashes recorded from the
 * single-machine allocator before nodes existed (alloc_golden.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "testutil.h"
#include "alloc_cases.h"
#include "alloc_golden.h"

/* ------------------------------------------------ one node == today */

static void test_one_node_allocate_matches_single_machine(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    size_t zero[CASES_MAXJOBS] = {0};
    for (int c = 0; c < CASES_N; c++) {
        alloc_case ac;
        cases_alloc(c, &ac);
        double a[CASES_MAXJOBS], b[CASES_MAXJOBS];
        int rc = slaq_allocate(ac.policy, ac.jobs, ac.n, ac.capacity, ac.unit,
                               ws, a);
        uint64_t h = rc ? 0 : cases_hash(0, a, ac.n);
        if (h != golden_alloc[c]) {
            print_error("case %d (%s, %zu jobs, %g cores): hash %016llx, "
                        "recorded %016llx\n", c, slaq_policy_name(ac.policy),
                        ac.n, ac.capacity, (unsigned long long)h,
                        (unsigned long long)golden_alloc[c]);
            fail();
        }
        /* the same jobs as node 0 of three nodes: empty nodes change
         * nothing */
        double caps[3] = {ac.capacity, 7, 0};
        assert_int_equal(slaq_allocate_nodes(ac.policy, ac.jobs, ac.n, zero,
                                             caps, 3, ac.unit, ws, b),
                         rc);
        if (!rc)
            assert_memory_equal(a, b, ac.n * sizeof *a);
    }
    slaq_alloc_ws_free(ws);
}

static void explicit_one_node(slaq_sched_config *c)
{
    c->nodes = 1;
    c->placement = SLAQ_PLACE_GAIN;
}

static void test_one_node_sched_matches_single_machine(void **state)
{
    (void)state;
    for (int c = 0; c < CASES_SCHED; c++) {
        assert_true(cases_sched(c, NULL) == golden_sched[c]);
        assert_true(cases_sched(c, explicit_one_node) == golden_sched[c]);
    }
}

/* ------------------------------------------- several nodes, allocator */

/* Within a node, the global greedy hands out units in the order the
 * node's own greedy would (a job's key depends only on the job), so the
 * allocation of several nodes is exactly each node's one-node allocation
 * of its own jobs. A shared heap that let one node's fullness leak into
 * another's choices would break this. */
static void test_nodes_allocate_like_separate_machines(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new(), *ws1 = slaq_alloc_ws_new();
    for (int c = 0; c < CASES_N; c++) {
        alloc_case ac;
        cases_alloc(c, &ac);
        cases_rng r = {(uint64_t)c + 991};
        size_t nn = 1 + cases_next(&r) % 5;
        double caps[5];
        size_t node[CASES_MAXJOBS];
        for (size_t v = 0; v < nn; v++)
            caps[v] = cases_next(&r) % 5 == 0 ? 0 : 16 * cases_unif(&r);
        for (size_t i = 0; i < ac.n; i++)
            node[i] = cases_next(&r) % nn;
        double all[CASES_MAXJOBS];
        assert_int_equal(slaq_allocate_nodes(ac.policy, ac.jobs, ac.n, node,
                                             caps, nn, ac.unit, ws, all),
                         SLAQ_OK);
        for (size_t v = 0; v < nn; v++) {
            slaq_pjob sub[CASES_MAXJOBS];
            size_t idx[CASES_MAXJOBS], m = 0;
            for (size_t i = 0; i < ac.n; i++)
                if (node[i] == v) {
                    idx[m] = i;
                    sub[m++] = ac.jobs[i];
                }
            double one[CASES_MAXJOBS], sum = 0;
            int capped = 1;
            assert_int_equal(slaq_allocate(ac.policy, sub, m, caps[v],
                                           ac.unit, ws1, one),
                             SLAQ_OK);
            for (size_t k = 0; k < m; k++) {
                if (one[k] != all[idx[k]]) {
                    print_error("case %d node %zu job %zu: %.17g on its "
                                "node alone, %.17g among %zu nodes\n",
                                c, v, idx[k], one[k], all[idx[k]], nn);
                    fail();
                }
                sum += all[idx[k]];
                if (all[idx[k]] < sub[k].max_cores - 1e-9)
                    capped = 0;
            }
            /* never above the node's cores; below only when every job
             * there is at its cap */
            assert_true(sum <= caps[v] * (1 + 1e-12) + 1e-12);
            if (!capped && m > 0)
                assert_near(sum, caps[v], caps[v] * 1e-9 + 1e-12);
        }
    }
    slaq_alloc_ws_free(ws);
    slaq_alloc_ws_free(ws1);
}

static void test_allocate_nodes_rejects_bad_nodes(void **state)
{
    (void)state;
    slaq_alloc_ws *ws = slaq_alloc_ws_new();
    alloc_case ac;
    cases_alloc(5, &ac);
    assert_true(ac.n > 0);
    size_t node[CASES_MAXJOBS] = {0};
    double caps[2] = {4, 4}, a[CASES_MAXJOBS];
    node[0] = 2;
    assert_int_equal(slaq_allocate_nodes(ac.policy, ac.jobs, ac.n, node, caps,
                                         2, 1, ws, a),
                     SLAQ_EINVAL);
    node[0] = 0;
    assert_int_equal(slaq_allocate_nodes(ac.policy, ac.jobs, ac.n, node, caps,
                                         0, 1, ws, a),
                     SLAQ_EINVAL);
    caps[1] = -1;
    assert_int_equal(slaq_allocate_nodes(ac.policy, ac.jobs, ac.n, node, caps,
                                         2, 1, ws, a),
                     SLAQ_EINVAL);
    slaq_alloc_ws_free(ws);
}

/* --------------------------------------------------- the scheduler */

static slaq_sched *cluster(size_t nodes, double cores, slaq_placement pl,
                           int queue)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.nodes = nodes;
    c.cores = cores;
    c.placement = pl;
    c.queue = queue;
    c.predictor = SLAQ_PRED_STRAWMAN;
    c.startup_reports = 0;
    c.damping = 0;
    c.hysteresis = 0;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    return s;
}

static slaq_job *add(slaq_sched *s, double weight, int node)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.weight = weight;
    o.node = node;
    slaq_job *j = slaq_sched_add(s, &o, 0);
    assert_non_null(j);
    return j;
}

static void report(slaq_job *j, uint64_t k, double loss, double t)
{
    slaq_report r = {k, loss, k ? 1 : 0, 1, t};
    assert_int_equal(slaq_job_report(j, &r), SLAQ_OK);
}

/* Every node's jobs hold at most its cores, pending jobs none. */
static void check_capacity(const slaq_sched *s)
{
    size_t nn = slaq_sched_node_count(s);
    double sum[16] = {0};
    assert_true(nn <= 16);
    for (size_t i = 0; i < slaq_sched_count(s); i++) {
        const slaq_job *j = slaq_sched_job(s, i);
        int v = slaq_job_node(j);
        if (v == SLAQ_NODE_PENDING) {
            assert_true(slaq_job_alloc(j) == 0);
            continue;
        }
        sum[v] += slaq_job_alloc(j);
    }
    for (size_t v = 0; v < nn; v++) {
        double cap = slaq_sched_node_cores(s, v);
        if (!(sum[v] <= cap + 1e-9)) {
            print_error("node %zu: %.17g cores given, %g there\n", v, sum[v],
                        cap);
            fail();
        }
        assert_near(slaq_sched_node_alloc(s, v), sum[v], 1e-9);
    }
}

/* Jobs come and go on five nodes of different sizes; after every epoch
 * no node gives more than its cores, under every policy. */
static void test_capacity_never_exceeded_per_node(void **state)
{
    (void)state;
    for (int pol = 0; pol < 3; pol++)
        for (int pl = 0; pl < 2; pl++) {
            slaq_sched *s = cluster(5, 6, (slaq_placement)pl, pol != 1);
            slaq_sched_set_policy(s, (slaq_policy_kind)pol);
            slaq_sched_set_node_cores(s, 1, 2.5);
            slaq_sched_set_node_cores(s, 3, 13);
            cases_rng r = {(uint64_t)(pol * 2 + pl + 1)};
            slaq_job *jobs[60] = {0};
            uint64_t k[60] = {0};
            for (int e = 0; e < 60; e++) {
                double t = e;
                for (int i = 0; i < 60; i++) {
                    if (!jobs[i] && cases_next(&r) % 4 == 0) {
                        jobs[i] = add(s, 1 + (double)(i % 3), SLAQ_NODE_ANY);
                        k[i] = 0;
                        report(jobs[i], 0, 10, t);
                    } else if (jobs[i]) {
                        k[i] += 1 + cases_next(&r) % 3;
                        report(jobs[i], k[i], 10 / (1 + 0.1 * (double)(k[i] *
                                               (1 + (uint64_t)i % 4))), t);
                        if (cases_next(&r) % 9 == 0) {
                            slaq_sched_remove(s, jobs[i]);
                            jobs[i] = NULL;
                        }
                    }
                }
                assert_int_equal(slaq_sched_epoch(s, t + 0.5), SLAQ_OK);
                check_capacity(s);
            }
            slaq_sched_free(s);
        }
}

static void test_least_loaded_places_where_share_is_largest(void **state)
{
    (void)state;
    slaq_sched *s = cluster(3, 4, SLAQ_PLACE_LEAST_LOADED, 0);
    slaq_sched_set_node_cores(s, 1, 8);
    /* shares: 4/1, 8/1, 4/1 -> node 1; then 4, 4, 4 -> node 0 (lowest
     * index); then 2, 4, 4 -> node 1; then 2, 8/3, 4 -> node 2 */
    int want[] = {1, 0, 1, 2, 1, 0};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(slaq_job_node(add(s, 1, SLAQ_NODE_ANY)), want[i]);
    /* a heavy job counts for its weight */
    slaq_sched *h = cluster(2, 4, SLAQ_PLACE_LEAST_LOADED, 0);
    assert_int_equal(slaq_job_node(add(h, 3, SLAQ_NODE_ANY)), 0);
    assert_int_equal(slaq_job_node(add(h, 1, SLAQ_NODE_ANY)), 1);
    assert_int_equal(slaq_job_node(add(h, 1, SLAQ_NODE_ANY)), 1);
    assert_int_equal(slaq_job_node(add(h, 1, SLAQ_NODE_ANY)), 1);
    assert_int_equal(slaq_job_node(add(h, 1, SLAQ_NODE_ANY)), 0);
    assert_int_equal(slaq_sched_node_jobs(h, 1), 3);
    slaq_sched_free(h);
    slaq_sched_free(s);
}

/* Two equally loaded nodes; node 0 runs a job whose loss still falls
 * fast, node 1 one that has converged. A new job displaces less on node
 * 1: gain placement puts it there, least-loaded on node 0 (the tie's
 * lower index). */
static void test_gain_places_where_least_gain_is_displaced(void **state)
{
    (void)state;
    for (int pl = 0; pl < 2; pl++) {
        slaq_sched *s = cluster(2, 4, (slaq_placement)pl, 0);
        slaq_job *steep = add(s, 1, SLAQ_NODE_ANY);
        slaq_job *flat = add(s, 1, SLAQ_NODE_ANY);
        assert_int_equal(slaq_job_node(steep), 0);
        assert_int_equal(slaq_job_node(flat), 1);
        for (uint64_t k = 0; k <= 10; k++) {
            report(steep, k, 100 - 5 * (double)k, (double)k);
            report(flat, k, 10 + 1 / (1 + (double)k * k * k), (double)k);
        }
        assert_int_equal(slaq_sched_epoch(s, 10.5), SLAQ_OK);
        assert_true(slaq_job_gain(steep) > 10 * slaq_job_gain(flat));
        slaq_job *fresh = add(s, 1, SLAQ_NODE_ANY);
        assert_int_equal(slaq_job_node(fresh), pl == SLAQ_PLACE_GAIN ? 1 : 0);
        slaq_sched_free(s);
    }
}

/* A job with history that must move (its node went down) under gain
 * placement goes where its own predicted gain minus the displaced gain is
 * largest: to an idle node of 4 cores over a busy one of 8 that would give
 * it as many. Least-loaded sees equal shares and takes the lower index. */
static void test_gain_replaces_job_with_history(void **state)
{
    (void)state;
    for (int pl = 0; pl < 2; pl++) {
        slaq_sched *s = cluster(3, 4, (slaq_placement)pl, 0);
        slaq_job *a = add(s, 1, SLAQ_NODE_ANY);
        assert_int_equal(slaq_job_node(a), 0);
        assert_int_equal(slaq_sched_set_node_cores(s, 1, 8), SLAQ_OK);
        slaq_job *b = add(s, 1, 1), *c = add(s, 1, 2);
        for (uint64_t k = 0; k <= 10; k++) {
            report(a, k, 100 - 5 * (double)k, (double)k);
            report(b, k, 100 - 5 * (double)k, (double)k);
            report(c, k, 100 - 5 * (double)k, (double)k);
        }
        assert_int_equal(slaq_sched_epoch(s, 10.5), SLAQ_OK);
        slaq_sched_remove(s, c); /* node 2 idles: nothing to displace */
        assert_int_equal(slaq_sched_set_node_cores(s, 0, 0), SLAQ_OK);
        assert_int_equal(slaq_sched_replace(s, a), SLAQ_OK);
        assert_int_equal(slaq_job_node(a), pl == SLAQ_PLACE_GAIN ? 2 : 1);
        assert_int_equal(slaq_sched_epoch(s, 11), SLAQ_OK);
        if (pl == SLAQ_PLACE_GAIN)
            assert_near(slaq_job_alloc(a), 4, 1e-9);
        assert_true(slaq_sched_node_alloc(s, 0) == 0);
        /* a node with no cores takes no new job */
        slaq_job *n = add(s, 1, SLAQ_NODE_ANY);
        assert_true(slaq_job_node(n) != 0);
        check_capacity(s);
        slaq_sched_free(s);
    }
}

static slaq_job *add_at(slaq_sched *s, double t)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    slaq_job *j = slaq_sched_add(s, &o, t);
    assert_non_null(j);
    return j;
}

/* A job of `iters` iterations of `cost` CPU-seconds each, arriving at t. */
static slaq_job *add_work(slaq_sched *s, double t, uint64_t iters, double cost)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.iters = iters;
    o.iter_cpu_s = cost;
    slaq_job *j = slaq_sched_add(s, &o, t);
    assert_non_null(j);
    return j;
}

/* The queue-order setting orders the pending queue (the same comparator
 * as the node queues, slaq/queue.h): behind a running job on the one
 * core, a long job (100 iterations of 1 s) and then a short one (5 of
 * 1 s) wait. fifo starts the long one first; srjf and stf the short one
 * (least remaining work); a job of unknown length goes after both. */
static int short_first(slaq_qorder order, int unknown)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 1;
    c.queue = 1;
    c.predictor = SLAQ_PRED_STRAWMAN;
    c.queue_order = order;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *run = add_work(s, 0, 10, 1);
    slaq_job *lng = unknown ? add_at(s, 1) : add_work(s, 1, 100, 1);
    slaq_job *shrt = add_work(s, 2, 5, 1);
    assert_int_equal(slaq_sched_epoch(s, 2.5), SLAQ_OK);
    assert_int_equal(slaq_job_node(run), 0);
    slaq_sched_remove(s, run);
    assert_int_equal(slaq_sched_epoch(s, 3.5), SLAQ_OK);
    slaq_job *first = slaq_job_node(lng) == 0 ? lng
                    : slaq_job_node(shrt) == 0 ? shrt : NULL;
    assert_non_null(first);
    int is_short = first == shrt;
    slaq_sched_free(s);
    return is_short;
}

static void test_queue_order_orders_the_pending_queue(void **st)
{
    (void)st;
    assert_false(short_first(SLAQ_QORDER_FIFO, 0));
    assert_false(short_first(SLAQ_QORDER_EJF, 0));
    assert_true(short_first(SLAQ_QORDER_SRJF, 0));
    assert_true(short_first(SLAQ_QORDER_STF, 0));
    assert_true(short_first(SLAQ_QORDER_SRJF, 1));
}

/* A driver's order for the tests: the latest arrival first (the opposite
 * of the scheduler's own), the order that starves the most. */
static int latest_first(const slaq_job *a, const slaq_job *b, double now,
                        void *arg)
{
    (void)now;
    int *calls = arg;
    (*calls)++;
    double x = slaq_job_arrival(a), y = slaq_job_arrival(b);
    return x > y ? -1 : x < y ? 1 : 0;
}

/* The driver's order decides which waiting job starts: with latest-first,
 * c, which arrived after b, takes the room a leaves, and b has been
 * passed from then on. */
static void test_pending_order_is_the_drivers(void **state)
{
    (void)state;
    slaq_sched *s = cluster(1, 1, SLAQ_PLACE_LEAST_LOADED, 1);
    int calls = 0;
    slaq_sched_set_pend_order(s, latest_first, &calls);
    slaq_job *a = add_at(s, 0), *b = add_at(s, 1), *c = add_at(s, 2);
    assert_int_equal(slaq_job_node(a), 0);
    assert_int_equal(slaq_sched_epoch(s, 2.5), SLAQ_OK);
    assert_true(calls > 0);
    assert_true(isnan(slaq_job_passed_since(b)));
    slaq_sched_remove(s, a);
    assert_int_equal(slaq_sched_epoch(s, 3), SLAQ_OK);
    assert_int_equal(slaq_job_node(c), 0);
    assert_int_equal(slaq_job_node(b), SLAQ_NODE_PENDING);
    assert_near(slaq_job_passed_since(b), 3, 0);
    slaq_sched_free(s);
}

/* Yaq's hard starvation threshold: under an order that always prefers
 * the latest arrival, b would wait for ever behind the jobs that keep
 * coming (it does with ST = 0); with ST = 5 it is passed from t = 2.5
 * and starts at the first epoch 5 s later, ahead of the newer jobs. */
static double starved_start(double st)
{
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 1;
    c.queue = 1;
    c.predictor = SLAQ_PRED_STRAWMAN;
    c.starvation.st = st > 0 ? st : INFINITY; /* 0: no threshold */
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    int calls = 0;
    slaq_sched_set_pend_order(s, latest_first, &calls);
    slaq_job *run = add_at(s, 0), *b = add_at(s, 1);
    double started = NAN;
    for (int t = 2; t < 60 && isnan(started); t++) {
        add_at(s, t);
        slaq_sched_remove(s, run);
        assert_int_equal(slaq_sched_epoch(s, t + 0.5), SLAQ_OK);
        run = NULL;
        for (size_t i = 0; i < slaq_sched_count(s); i++)
            if (slaq_job_node(slaq_sched_job(s, i)) == 0)
                run = slaq_sched_job(s, i);
        assert_non_null(run);
        if (run == b)
            started = t + 0.5;
        else
            assert_true(slaq_job_arrival(run) == t);
    }
    slaq_sched_free(s);
    return started;
}

static void test_starvation_bounds_how_long_later_jobs_pass(void **state)
{
    (void)state;
    assert_true(isnan(starved_start(0)));
    assert_near(starved_start(5), 7.5, 0);
    assert_near(starved_start(20), 22.5, 0);
}

/* One node of 2 cores, unit 1: two jobs fit, the rest wait in arrival
 * order and start in that order as room frees; a job arriving while
 * others wait queues behind them even when it would fit. */
static void test_pending_queue_is_fifo(void **state)
{
    (void)state;
    slaq_sched *s = cluster(1, 2, SLAQ_PLACE_LEAST_LOADED, 1);
    slaq_job *j[6];
    for (int i = 0; i < 4; i++)
        j[i] = add(s, 1, SLAQ_NODE_ANY);
    assert_int_equal(slaq_job_node(j[0]), 0);
    assert_int_equal(slaq_job_node(j[1]), 0);
    assert_int_equal(slaq_job_node(j[2]), SLAQ_NODE_PENDING);
    /* waiting is not a pin: the two words have different values */
    assert_int_not_equal(slaq_job_node(j[2]), SLAQ_NODE_ANY);
    assert_int_equal(slaq_sched_pending(s), 2);
    assert_ptr_equal(slaq_sched_pending_job(s, 0), j[2]);
    assert_ptr_equal(slaq_sched_pending_job(s, 1), j[3]);
    assert_null(slaq_sched_pending_job(s, 2));
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_near(slaq_job_alloc(j[0]), 1, 1e-12);
    assert_true(slaq_job_alloc(j[2]) == 0);
    assert_true(slaq_job_throttled(j[2]));

    slaq_sched_remove(s, j[0]);
    j[4] = add(s, 1, SLAQ_NODE_ANY); /* room now, but j2, j3 came first */
    assert_int_equal(slaq_job_node(j[4]), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_int_equal(slaq_job_node(j[2]), 0);
    assert_int_equal(slaq_job_node(j[3]), SLAQ_NODE_PENDING);
    assert_ptr_equal(slaq_sched_pending_job(s, 0), j[3]);
    assert_ptr_equal(slaq_sched_pending_job(s, 1), j[4]);
    assert_near(slaq_job_alloc(j[2]), 1, 1e-12);

    /* a waiting job that is removed leaves the queue */
    slaq_sched_remove(s, j[3]);
    assert_int_equal(slaq_sched_pending(s), 1);
    slaq_sched_remove(s, j[1]);
    slaq_sched_remove(s, j[2]);
    assert_int_equal(slaq_sched_epoch(s, 2), SLAQ_OK);
    assert_int_equal(slaq_job_node(j[4]), 0);
    assert_int_equal(slaq_sched_pending(s), 0);
    assert_near(slaq_job_alloc(j[4]), 2, 1e-12);
    slaq_sched_free(s);
}

/* A waiting job holds up only the jobs behind it that wait for the same
 * nodes: b, pinned to full node 0, does not keep c from node 1's room
 * (it did: the queue stopped at its head). A node added later starts
 * waiting jobs at the next epoch. */
static void test_pinned_job_waiting_does_not_block_others(void **state)
{
    (void)state;
    slaq_sched *s = cluster(2, 1, SLAQ_PLACE_LEAST_LOADED, 1);
    slaq_job *a = add(s, 1, 0), *b = add(s, 1, 0);
    slaq_job *c = add(s, 1, SLAQ_NODE_ANY);
    assert_int_equal(slaq_job_node(a), 0);
    assert_int_equal(slaq_job_node(b), SLAQ_NODE_PENDING);
    /* queued behind b on arrival; started on node 1 at the epoch */
    assert_int_equal(slaq_job_node(c), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_job_node(c), 1);
    assert_int_equal(slaq_job_node(b), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_sched_pending(s), 1);
    /* a pin out of range is refused */
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.node = 7;
    assert_null(slaq_sched_add(s, &o, 0));
    /* b keeps node 0 for itself: d, free to go anywhere, waits behind it
     * when a leaves, and takes the new node */
    slaq_job *d = add(s, 1, SLAQ_NODE_ANY);
    slaq_sched_remove(s, a);
    assert_int_equal(slaq_sched_add_node(s, 3), 2);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_int_equal(slaq_job_node(b), 0);
    assert_int_equal(slaq_job_node(d), 2);
    check_capacity(s);
    slaq_sched_free(s);
}

/* A job pinned to a node that is down (0 cores) at the head of the queue
 * holds up nobody: the jobs behind it start elsewhere, in order, and it
 * starts when its node comes back. */
static void test_job_pinned_to_down_node_holds_up_nobody(void **state)
{
    (void)state;
    slaq_sched *s = cluster(2, 1, SLAQ_PLACE_LEAST_LOADED, 1);
    assert_int_equal(slaq_sched_set_node_cores(s, 1, 0), SLAQ_OK);
    slaq_job *p = add(s, 1, 1);
    slaq_job *x = add(s, 1, SLAQ_NODE_ANY);
    slaq_job *y = add(s, 1, SLAQ_NODE_ANY);
    assert_int_equal(slaq_job_node(p), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_job_node(x), 0);
    /* y waits for room behind x's, in order, still behind p */
    assert_int_equal(slaq_job_node(y), SLAQ_NODE_PENDING);
    assert_ptr_equal(slaq_sched_pending_job(s, 0), p);
    assert_ptr_equal(slaq_sched_pending_job(s, 1), y);
    assert_true(slaq_job_alloc(p) == 0);
    slaq_sched_remove(s, x);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_int_equal(slaq_job_node(y), 0);
    assert_int_equal(slaq_sched_pending(s), 1);
    /* its node back: it starts there */
    assert_int_equal(slaq_sched_set_node_cores(s, 1, 1), SLAQ_OK);
    assert_int_equal(slaq_sched_epoch(s, 2), SLAQ_OK);
    assert_int_equal(slaq_job_node(p), 1);
    assert_int_equal(slaq_sched_pending(s), 0);
    check_capacity(s);
    slaq_sched_free(s);
}

/* A job pinned to a node too small ever to take its minimum share holds
 * that node for nobody; a job free to go anywhere that waits keeps every
 * node from smaller jobs behind it (first come, first served: a stream of
 * small jobs cannot starve it). */
static void test_unsatisfiable_pin_and_waiting_job_keep_their_order(
    void **state)
{
    (void)state;
    slaq_sched *s = cluster(2, 1, SLAQ_PLACE_LEAST_LOADED, 1);
    assert_int_equal(slaq_sched_set_node_cores(s, 1, 0.5), SLAQ_OK);
    add(s, 1, 0);                         /* node 0 full */
    slaq_job *big = add(s, 1, 1);         /* min share 1 > 0.5: never */
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.max_cores = 0.5;                    /* min share 0.5 */
    slaq_job *small = slaq_sched_add(s, &o, 0);
    assert_non_null(small);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_int_equal(slaq_job_node(big), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_job_node(small), 1); /* past big, on its node */
    check_capacity(s);
    slaq_sched_free(s);

    /* One node of 1 core holding a job of min share 0.5: w (min share 1)
     * waits for it; tiny (0.5) behind w would fit, but waits its turn */
    s = cluster(1, 1, SLAQ_PLACE_LEAST_LOADED, 1);
    slaq_job *half = slaq_sched_add(s, &o, 0);
    slaq_job *w = add(s, 1, SLAQ_NODE_ANY);
    slaq_job *tiny = slaq_sched_add(s, &o, 0);
    assert_non_null(half);
    assert_non_null(tiny);
    assert_int_equal(slaq_sched_epoch(s, 1), SLAQ_OK);
    assert_int_equal(slaq_job_node(half), 0);
    assert_int_equal(slaq_job_node(w), SLAQ_NODE_PENDING);
    assert_int_equal(slaq_job_node(tiny), SLAQ_NODE_PENDING);
    slaq_sched_remove(s, half);
    assert_int_equal(slaq_sched_epoch(s, 2), SLAQ_OK);
    assert_int_equal(slaq_job_node(w), 0);
    assert_int_equal(slaq_job_node(tiny), SLAQ_NODE_PENDING);
    check_capacity(s);
    slaq_sched_free(s);
}

/* Without a queue (a single machine's behaviour) nodes never fill. */
static void test_without_queue_every_job_runs(void **state)
{
    (void)state;
    slaq_sched *s = cluster(1, 2, SLAQ_PLACE_LEAST_LOADED, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(slaq_job_node(add(s, 1, SLAQ_NODE_ANY)), 0);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    for (size_t i = 0; i < 5; i++)
        assert_near(slaq_job_alloc(slaq_sched_job(s, i)), 0.4, 1e-12);
    slaq_sched_free(s);
}

/* What the epoch loop caches for speed at scale (a job's gain is
 * computed when read, its normaliser when its inputs change) must not
 * change answers: the gain read after new reports and a refit is still
 * the one of the last allocation, and a new declared length or a new
 * predictor takes effect at the next epoch. */
static void test_cached_gain_and_norm_follow_their_inputs(void **state)
{
    (void)state;
    slaq_sched *s = cluster(1, 4, SLAQ_PLACE_LEAST_LOADED, 0);
    slaq_job *a = add(s, 1, SLAQ_NODE_ANY), *b = add(s, 1, SLAQ_NODE_ANY);
    for (uint64_t k = 0; k <= 6; k++) {
        report(a, k, 10 / (1 + 0.3 * (double)k), (double)k);
        report(b, k, 10 * pow(0.8, (double)k), (double)k);
    }
    assert_int_equal(slaq_sched_epoch(s, 6.5), SLAQ_OK);
    double ga = slaq_job_gain(a), gb = slaq_job_gain(b);
    assert_true(ga > 0 && gb > 0);
    report(a, 7, 0.5, 7);
    report(b, 7, 9, 7); /* b's loss jumps: its forecast changes */
    slaq_sched_refit(s);
    assert_true(slaq_job_gain(a) == ga);
    assert_true(slaq_job_gain(b) == gb);
    assert_int_equal(slaq_sched_set_predictor(s, SLAQ_PRED_AUTO), SLAQ_OK);
    assert_true(slaq_job_gain(b) == gb);
    assert_int_equal(slaq_sched_allocate(s, 7.5), SLAQ_OK);
    assert_true(slaq_job_gain(b) != gb);

    /* the normaliser (span) follows a declared length: a job told it runs
     * 8 iterations is near its end, and its gain per epoch shrinks */
    assert_int_equal(slaq_sched_epoch(s, 8), SLAQ_OK);
    double before = slaq_job_gain(a);
    slaq_job_set_iters(a, 8);
    assert_int_equal(slaq_sched_epoch(s, 8), SLAQ_OK);
    assert_true(slaq_job_gain(a) != before);
    slaq_sched_free(s);
}

/* ------------------------------------------------ bounded refits */

/* The iteration of the last report job j's forecast was fitted on. */
static double fitted_at(const slaq_job *j)
{
    return slaq_predictor_forecast(slaq_job_predictor(j))->k0;
}

/* At most max_fits refits an epoch, the jobs that became due first; the
 * rest keep their place at the front, a removed job leaves the queue, and
 * slaq_job_refit fits one job at once. */
static void test_refits_are_bounded_oldest_first(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 8;
    c.max_fits = 2;
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_job *a[5];
    for (int i = 0; i < 5; i++)
        a[i] = add(s, 1, SLAQ_NODE_ANY);
    for (uint64_t k = 0; k <= 2; k++)
        for (int i = 0; i < 5; i++)
            report(a[i], k, 10 - (double)k - 0.1 * i, (double)k);
    assert_int_equal(slaq_sched_refit_backlog(s), 5);
    slaq_sched_refit(s);
    assert_int_equal(slaq_sched_refits(s), 2);
    assert_int_equal(slaq_sched_refit_backlog(s), 3);
    assert_true(fitted_at(a[0]) == 2 && fitted_at(a[1]) == 2);
    for (int i = 2; i < 5; i++)
        assert_true(fitted_at(a[i]) != 2);
    /* a[0] reports again: it queues behind the three still waiting */
    report(a[0], 3, 6.5, 3);
    assert_int_equal(slaq_sched_epoch(s, 3), SLAQ_OK);
    assert_int_equal(slaq_sched_refits(s), 2);
    assert_true(fitted_at(a[2]) == 2 && fitted_at(a[3]) == 2);
    assert_true(fitted_at(a[4]) != 2 && fitted_at(a[0]) == 2);
    assert_int_equal(slaq_sched_refit_backlog(s), 2);
    /* a waiting job that leaves is no longer due */
    slaq_sched_remove(s, a[4]);
    assert_int_equal(slaq_sched_refit_backlog(s), 1);
    slaq_sched_refit(s);
    assert_int_equal(slaq_sched_refits(s), 1);
    assert_true(fitted_at(a[0]) == 3);
    assert_int_equal(slaq_sched_refit_backlog(s), 0);
    /* one job at once, out of turn */
    report(a[2], 3, 6.6, 3);
    report(a[1], 3, 6.7, 3);
    slaq_job_refit(a[1]);
    assert_true(fitted_at(a[1]) == 3 && fitted_at(a[2]) == 2);
    assert_int_equal(slaq_sched_refit_backlog(s), 1);
    slaq_job_refit(a[1]); /* nothing due: nothing done */
    assert_int_equal(slaq_sched_refit_backlog(s), 1);
    slaq_sched_refit(s);
    assert_true(fitted_at(a[2]) == 3);
    slaq_sched_refit(s);
    assert_int_equal(slaq_sched_refits(s), 0);
    slaq_sched_free(s);
}

static void no_fit_bound(slaq_sched_config *c) { c->max_fits = 0; }
static void fit_bound_14(slaq_sched_config *c) { c->max_fits = 14; }
static void fit_bound_1(slaq_sched_config *c) { c->max_fits = 1; }

/* A bound no epoch reaches (the scenarios have at most 14 jobs) changes
 * nothing, bit for bit; a bound of one refit an epoch does change them
 * (so the scenarios do exercise it). */
static void test_refit_bound_above_demand_changes_nothing(void **state)
{
    (void)state;
    int differ = 0;
    for (int c = 0; c < CASES_SCHED; c++) {
        assert_true(cases_sched(c, no_fit_bound) == golden_sched[c]);
        assert_true(cases_sched(c, fit_bound_14) == golden_sched[c]);
        differ += cases_sched(c, fit_bound_1) != golden_sched[c];
    }
    assert_true(differ > 0);
}

/* A node's allocated cores leave with its jobs at once, not at the next
 * epoch: with no job left the scheduler runs no epoch (slaqd calls none),
 * and `slaq nodes` showed 1.00 cores allocated on an empty node. */
static void test_node_alloc_leaves_with_its_jobs(void **state)
{
    (void)state;
    slaq_sched *s = cluster(2, 4, SLAQ_PLACE_LEAST_LOADED, 0);
    slaq_job *a = add(s, 1, 0), *b = add(s, 1, 0);
    slaq_job *c = add(s, 1, SLAQ_NODE_ANY);
    assert_int_equal(slaq_job_node(c), 1);
    assert_int_equal(slaq_sched_epoch(s, 0), SLAQ_OK);
    assert_near(slaq_sched_node_alloc(s, 0), 4, 1e-9);
    assert_near(slaq_sched_node_alloc(s, 1), 4, 1e-9);
    double left = slaq_job_alloc(b);
    slaq_sched_remove(s, a);
    assert_near(slaq_sched_node_alloc(s, 0), left, 1e-9);
    slaq_sched_remove(s, b);
    assert_true(slaq_sched_node_alloc(s, 0) == 0);
    assert_int_equal(slaq_sched_node_jobs(s, 0), 0);
    /* moved to the other node: its cores leave node 1 with it */
    assert_int_equal(slaq_sched_set_node_cores(s, 1, 0), SLAQ_OK);
    assert_int_equal(slaq_sched_replace(s, c), SLAQ_OK);
    assert_int_equal(slaq_job_node(c), 0);
    assert_true(slaq_sched_node_alloc(s, 1) == 0);
    slaq_sched_remove(s, c);
    assert_true(slaq_sched_node_alloc(s, 0) == 0);
    slaq_sched_free(s);
}

/* A move puts a placed job on the node named, keeping its history: its
 * cores are divided there at the next epoch and leave the old node; a
 * pinned job is pinned to its new node; a waiting job or a node out of
 * range is refused. */
static void test_move_changes_node_keeps_history(void **state)
{
    (void)state;
    slaq_sched *s = cluster(2, 4, SLAQ_PLACE_LEAST_LOADED, 0);
    slaq_job *a = add(s, 1, 0), *b = add(s, 1, 0);
    for (uint64_t k = 0; k < 5; k++)
        report(a, k, 100 - 5 * (double)k, (double)k);
    assert_int_equal(slaq_sched_epoch(s, 5), SLAQ_OK);
    assert_near(slaq_sched_node_alloc(s, 0), 4, 1e-9);
    assert_int_equal(slaq_sched_move(s, a, 1), SLAQ_OK);
    assert_int_equal(slaq_job_node(a), 1);
    assert_int_equal(slaq_sched_node_jobs(s, 0), 1);
    assert_int_equal(slaq_sched_node_jobs(s, 1), 1);
    assert_int_equal(slaq_history_total(slaq_job_history(a)), 5);
    assert_int_equal(slaq_sched_epoch(s, 6), SLAQ_OK);
    assert_near(slaq_job_alloc(a), 4, 1e-9);
    assert_near(slaq_job_alloc(b), 4, 1e-9);
    /* pinned to node 0 before: to node 1 now, so a replace keeps it there */
    assert_int_equal(slaq_sched_move(s, b, 1), SLAQ_OK);
    assert_int_equal(slaq_sched_replace(s, b), SLAQ_OK);
    assert_int_equal(slaq_job_node(b), 1);
    assert_int_equal(slaq_sched_move(s, a, 2), SLAQ_EINVAL);
    check_capacity(s);
    slaq_sched_free(s);
}

static void test_placement_names(void **state)
{
    (void)state;
    slaq_placement p;
    assert_int_equal(slaq_placement_parse("gain", &p), SLAQ_OK);
    assert_int_equal(p, SLAQ_PLACE_GAIN);
    assert_string_equal(slaq_placement_name(p), "gain");
    assert_int_equal(slaq_placement_parse("least-loaded", &p), SLAQ_OK);
    assert_int_equal(p, SLAQ_PLACE_LEAST_LOADED);
    assert_int_equal(slaq_placement_parse("random", &p), SLAQ_EINVAL);
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.placement = (slaq_placement)9;
    assert_null(slaq_sched_new(&c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_node_allocate_matches_single_machine),
        cmocka_unit_test(test_one_node_sched_matches_single_machine),
        cmocka_unit_test(test_nodes_allocate_like_separate_machines),
        cmocka_unit_test(test_allocate_nodes_rejects_bad_nodes),
        cmocka_unit_test(test_capacity_never_exceeded_per_node),
        cmocka_unit_test(test_least_loaded_places_where_share_is_largest),
        cmocka_unit_test(test_gain_places_where_least_gain_is_displaced),
        cmocka_unit_test(test_gain_replaces_job_with_history),
        cmocka_unit_test(test_pending_queue_is_fifo),
        cmocka_unit_test(test_pending_order_is_the_drivers),
        cmocka_unit_test(test_starvation_bounds_how_long_later_jobs_pass),
        cmocka_unit_test(test_queue_order_orders_the_pending_queue),
        cmocka_unit_test(test_pinned_job_waiting_does_not_block_others),
        cmocka_unit_test(test_job_pinned_to_down_node_holds_up_nobody),
        cmocka_unit_test(
            test_unsatisfiable_pin_and_waiting_job_keep_their_order),
        cmocka_unit_test(test_without_queue_every_job_runs),
        cmocka_unit_test(test_cached_gain_and_norm_follow_their_inputs),
        cmocka_unit_test(test_refits_are_bounded_oldest_first),
        cmocka_unit_test(test_refit_bound_above_demand_changes_nothing),
        cmocka_unit_test(test_node_alloc_leaves_with_its_jobs),
        cmocka_unit_test(test_move_changes_node_keeps_history),
        cmocka_unit_test(test_placement_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
